/* commands.h - the kdsim command line: run, validate, route, help and version.
 *
 * Exit statuses: 0 success, 2 bad input or usage (nothing is written), 1 any other
 * failure (out of memory, an unwritable output folder).
 */
#ifndef COMMANDS_H
#define COMMANDS_H

#include <stdio.h>

enum { KDSIM_EXIT_OK = 0, KDSIM_EXIT_FAIL = 1, KDSIM_EXIT_USAGE = 2 };

/* Run the command line `argv` (argv[0] is the program name), printing results to
 * `out` and messages to `err`. Returns the exit status. */
int kdsim_main(int argc, char **argv, FILE *out, FILE *err);

#endif
