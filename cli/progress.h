/* progress.h - a progress line on stderr while a long run goes: simulated time, percent
 * done, events per wall second, simulated seconds per wall second and the time left.
 *
 * The line is drawn only when stderr is a terminal, and only once a run has taken more
 * than KDSIM_PROGRESS_AFTER_S of wall time, so short runs, pipes, files and tests see
 * nothing. It is redrawn in place (carriage return) a few times a second and erased at
 * the end. Nothing of it reaches the reports: they hold no wall-clock figure.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#include "kds_world.h"

/* Wall time before the first progress line, s. The environment variable
 * KDSIM_PROGRESS_AFTER (seconds, 0 for at once) replaces it: the tests use it, since a
 * fast machine finishes their runs in less. */
#define KDSIM_PROGRESS_AFTER_S 0.5

/* Run world `w` to its end, as kds_world_run() does, drawing the progress line on `err`
 * when `show` is true and `err` is a terminal. The world then runs in slices of
 * simulated time (kds_world_run_until), which changes nothing in the run: the same
 * events run in the same order. */
void kdsim_progress_run(kds_world *w, FILE *err, bool show);

#endif
