/* plots.h - the plots of `kdsim run --out DIR`, drawn by gnuplot into DIR/plots.
 *
 * For every plot kdsim writes a small CSV of exactly what is drawn
 * (DIR/plots/<name>.csv), copies the gnuplot scripts of the source tree's plots/ folder
 * beside them, and runs gnuplot once for all of them, each script's inputs (data file,
 * output name, names and units) set with -e; each script makes <name>.png (pngcairo, or
 * png without cairo) and <name>.svg. DIR/plots/plots.sh holds the same command, to draw
 * them again by hand. The plots:
 *   - per consumer, its latency distribution (a CDF, log scale) and its iterator age and
 *     delivery rate over time;
 *   - per shard, writes and reads as a percentage of its budget, write-throttled records
 *     and read-throttled calls over time: a line per shard, or a heat map above
 *     KDSIM_PLOTS_HEAT_SHARDS shards;
 *   - open shards over time, against the write rate and the throttles;
 *   - the monthly cost in each capacity mode, stacked by line item;
 *   - per KCL application, leases held by each worker over time, when the run wrote
 *     DIR/kcl_workers_per_minute.csv (minute,minutes,consumer,worker,leases_held).
 *
 * gnuplot is looked up on PATH. Without it the run still succeeds: the data files,
 * scripts and plots.sh are written and kdsim says once, on stderr, how to install it.
 * A plot gnuplot fails to draw is a warning on stderr, not a failed run.
 */
#ifndef PLOTS_H
#define PLOTS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kds_world.h"

/* Above this many shards (every shard the run created), the per-shard plots are heat
 * maps: eight lines is about what a reader can tell apart. */
#define KDSIM_PLOTS_HEAT_SHARDS 8

typedef struct kdsim_plot {
    char name[160];     /* file stem in DIR/plots: "latency-billing" */
    char title[256];    /* what it shows, one line, for the HTML report */
    const char *group;  /* "Consumers", "Shards", "Stream", "Cost" or "KCL" (static) */
    const char *script; /* the gnuplot script that draws it, in plots/ (static) */
    char vars[1024];    /* the script's inputs as gnuplot assignments, `out` excepted */
    bool drawn;         /* <name>.png and <name>.svg were made by this run */
} kdsim_plot;

typedef struct kdsim_plots {
    kdsim_plot *v;      /* owned, in drawing order */
    size_t n;
    bool gnuplot_found; /* gnuplot was on PATH */
} kdsim_plots;

/* Write the plot data files, the scripts and plots.sh into DIR/plots (created if
 * missing) for finished world `w` and its JSON report (the cost section), then draw
 * them. `dir` must exist. Fills `out` (release it with kdsim_plots_fini, also on
 * error). Returns 0 (also when gnuplot is missing or a plot failed: warnings go to
 * stderr), SIM_EIO when a data file cannot be written, or SIM_ENOMEM. */
int kdsim_plots_write(const kds_world *w, const json_t *report, const char *dir,
                      kdsim_plots *out);

void kdsim_plots_fini(kdsim_plots *p); /* NULL-safe */

/* The gnuplot program found on PATH, written into buf (n bytes), or NULL if there is
 * none. */
const char *kdsim_gnuplot_path(char *buf, size_t n);

#endif
