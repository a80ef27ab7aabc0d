/* sweep_plots.h - the summary plots of a sweep: chosen figures against the first
 * parameter, the mean of the replications with its 95 % confidence interval, a line per
 * value of the second parameter; drawn by gnuplot (plots/sweep.gp) into DIR/plots.
 *
 * Plotted, when present: the write throttling (stream.write_throttle_pct), the records
 * lost, each consumer's p99 latency and the monthly cost in the scenario's mode. Sweeps of
 * one or two parameters are plotted; others are said to be too many to draw. For every
 * plot kdsim writes its data (DIR/plots/<name>.csv) and copies the scripts beside it, so
 * that DIR/plots/plots.sh draws them again; without gnuplot the data and scripts are
 * still written and a note goes to stderr. The x axis is the first parameter's values:
 * as numbers when they are numbers of one unit or quantities of one kind in any units
 * (sim_units.h: bytes, seconds, per second), else as categories in their order
 * (docs/capacity-planning.md). The plots are not part of the tables'
 * byte-identity: the tables are the results, the plots are views of them.
 */
#ifndef SWEEP_PLOTS_H
#define SWEEP_PLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Plot the sweep described by `meta` (parameters, points, replications: as in
 * results.json) from its runs (all, in index order) into dir/plots. Sets *wrote to
 * whether dir/plots was written (not for one point, no parameter or more than two), so
 * that the caller names it only then. Returns 0 (also when gnuplot is missing or fails:
 * notes on err) or SIM_EIO when a file cannot be written. */
int kdsim_sweep_plots(const json_t *meta, json_t *const *runs, size_t n, const char *dir,
                      FILE *err, bool *wrote);

#endif
