/* testutil.h - helpers shared by the Check suites: running a suite with the standard
 * runner, and locating and listing files of the source tree. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* Run one suite with CK_NORMAL output; returns EXIT_SUCCESS when nothing failed. */
int tu_run_suite(Suite *s);

/* The absolute path of `rel` under the source tree, in a static buffer. */
const char *tu_src(const char *rel);

/* Call fn(path, ctx) for each file of the source folder `rel` whose name starts with
 * `prefix` and ends with `suffix` (NULL: any), dot files skipped, in the folder's order;
 * `path` is valid during the call. Returns how many; the test fails if the folder cannot
 * be opened. */
size_t tu_for_each_file(const char *rel, const char *prefix, const char *suffix,
                        void (*fn)(const char *path, void *ctx), void *ctx);

#endif
