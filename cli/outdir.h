/* outdir.h - a run's --out DIR written as a whole or not at all.
 *
 * The outputs of `kdsim run --out DIR` (report.json, report.txt, report.html, the CSV
 * files and plots/) are written into a hidden folder beside them (a new DIR's parent,
 * or an existing DIR itself) and moved into place once every one of them is complete:
 * a run that fails, or stops, leaves DIR as it was; a run that succeeds leaves exactly
 * its own outputs there. In an existing DIR, the outputs of a previous run (the names
 * of kdsim_outdir_names, plots/ as a whole) are replaced, those this run does not
 * write removed, and every other file is left alone. DIR is checked before the run, so
 * that a bad --out costs no simulation.
 */
#ifndef OUTDIR_H
#define OUTDIR_H

#include <stdbool.h>
#include <stdio.h>

typedef struct kdsim_outdir {
    char *dir;     /* owned: DIR as given */
    char *staging; /* owned: the hidden folder being written, or NULL when done */
    bool existed;  /* DIR existed before the run */
} kdsim_outdir;

/* The names a run may write in DIR, NULL-terminated (plots is a folder). A writer of a
 * new file in DIR adds its name here, or a rerun would leave an older one beside it. */
extern const char *const kdsim_outdir_names[];

/* Check DIR and make the hidden folder to write into (o->staging). DIR must be missing
 * (its parent existing) or a directory where every name of kdsim_outdir_names that
 * exists has its kind (plots a directory, the others regular files). Returns 0, or
 * prints why on err ("...; nothing was run") and returns 2 (KDSIM_EXIT_USAGE). */
int kdsim_outdir_begin(kdsim_outdir *o, const char *dir, FILE *err);

/* Move what o->staging holds into DIR (see above) and remove the hidden folders.
 * Returns 0, or prints why on err and returns SIM_EIO. Always leaves o finished. */
int kdsim_outdir_commit(kdsim_outdir *o, FILE *err);

/* Remove o->staging and everything in it: DIR stays as it was. NULL-safe, and safe
 * after kdsim_outdir_commit. Frees what o holds. */
void kdsim_outdir_abort(kdsim_outdir *o);

/* `path` as messages should name it: a path inside the hidden folder of the outdir
 * being written is shown at its place in DIR (where it will be once the run is done).
 * Returns path itself or buf. */
const char *kdsim_outdir_shown(const char *path, char *buf, size_t n);

#endif
