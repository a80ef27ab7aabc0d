/* figures.h - the headline figures of one run: a flat, ordered list of named numbers
 * taken from the JSON report (docs/report-json.md), the unit of replications, sweep
 * tables and the planner.
 *
 * Names are report paths with entity names in place of list indices:
 *   stream.records_in, stream.write_throttle_pct, records_lost,
 *   producers.web.records_given_up, consumers.live-metrics.latency_ms.p99,
 *   cost.provisioned.monthly_usd, cost.sizing_rule.shards, ...
 * (the full list and each figure's meaning: docs/capacity-planning.md). The order is
 * fixed: stream, lost, producers and consumers in scenario order, cost.
 *
 * A warm-up is excluded by subtraction: the statistics of the same scenario and seed
 * stopped at the warm-up time (kdsim is deterministic, so that run is exactly the first
 * part of the full one) are taken away from the full run's. Counts subtract; latency
 * figures are recomputed from the difference of the two latency histograms; peaks and
 * the maximum iterator age are taken over the seconds (minutes) from the warm-up on;
 * states at the end of the run and the cost (a monthly projection of the whole run)
 * are the full run's.
 *
 * Figures that are not defined are NaN (null in JSON, empty in CSV), never 0: a
 * consumer's latencies when it delivered no record in the counted period, and its
 * largest iterator age when it never read in it (no record delivered, no GetRecords
 * call let through, no enhanced fan-out subscription, no age above 0). A reader that read
 * everything there was keeps its age of 0.
 */
#ifndef FIGURES_H
#define FIGURES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kds_world.h"

typedef struct kdsim_fig {
    char *name;   /* owned */
    double value; /* the figure (NaN: not defined for this run, written as null) */
    bool integer; /* a count: written without decimals */
} kdsim_fig;

typedef struct kdsim_figs {
    kdsim_fig *v; /* owned array, in the fixed order */
    size_t n, cap;
} kdsim_figs;

/* The figures of a finished run: its report and world. With `wu_report` and `wu` (the
 * same scenario and seed finished at `warmup` ns; both NULL for no warm-up), the
 * warm-up's share is excluded as described above. Returns 0 or SIM_ENOMEM; `out` is
 * filled from empty and must be released with kdsim_figs_fini(). */
int kdsim_figures(const json_t *report, const kds_world *w, const json_t *wu_report,
                  const kds_world *wu, sim_time warmup, kdsim_figs *out);

void kdsim_figs_fini(kdsim_figs *f); /* NULL-safe */

/* The figures as a JSON object in their order (integers as integers, NaN as null).
 * Returns a new reference or NULL when out of memory. */
json_t *kdsim_figs_json(const kdsim_figs *f);

/* Read back an object made by kdsim_figs_json(). Returns 0 or SIM_EINVAL. */
int kdsim_figs_from_json(const json_t *o, kdsim_figs *out);

/* Write value v as the tables write it: integers without decimals, others with 12
 * significant digits, NaN as an empty string (CSV) -- into buf; returns buf. */
char *kdsim_fig_text(char *buf, size_t n, double v, bool integer);

/* The summary of n run results (objects with a "figures" member, NULL entries skipped):
 * for every figure, in order of first appearance, {n, mean, ci95, sd, min, max} over the
 * runs where it is defined (stats_ci.h; ci95 is the half-width, null with one run).
 * Returns a new reference or NULL when out of memory. */
json_t *kdsim_figs_summary(json_t *const *results, size_t n);

/* Append a figure (name copied). Returns 0 or SIM_ENOMEM. */
int kdsim_figs_add(kdsim_figs *f, const char *name, double value, bool integer);

/* The index of figure `name`, or -1. O(n). */
long kdsim_figs_find(const kdsim_figs *f, const char *name);

#endif
