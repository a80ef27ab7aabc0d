/* sweep.h - the capacity-planning commands: `kdsim run --replications`, `kdsim sweep`,
 * `kdsim merge` and `kdsim plan` (plan.h), with what they share.
 *
 * A sweep file names a base scenario, parameters (any scenario key path) with lists
 * or ranges of values, and a number of replications; every combination of values is a
 * point, every point runs once per replication seed, and the results are gathered into
 * one table in a fixed order whatever ran them: all cores of one machine (a worker
 * process per run), or parts run anywhere (--part K/N) and merged. The sweep file's
 * keys and the table's columns: docs/capacity-planning.md; running parts on clusters:
 * docs/clusters.md.
 */
#ifndef SWEEP_H
#define SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* `kdsim run SCENARIO --replications N [--warmup T] ...`: argv as main() got it.
 * Returns the exit status (0, 1, or 2 for bad input). */
int kdsim_cmd_replicate(int argc, char **argv, FILE *out, FILE *err);

/* `kdsim sweep FILE [--jobs N] [--out DIR] [--part K/N]`. */
int kdsim_cmd_sweep(int argc, char **argv, FILE *out, FILE *err);

/* `kdsim merge PART... [--out DIR]`. */
int kdsim_cmd_merge(int argc, char **argv, FILE *out, FILE *err);

/* Whether `run` was given an option of the replications (then kdsim_cmd_replicate
 * handles the command). */
bool kdsim_wants_replications(int argc, char **argv);

/* Options that the scenario commands share, gathered as scenario overrides: --seed N
 * (kept apart as the master seed), --duration T, --set K=V, --prices FILE. */
typedef struct kdsim_scenario_opts {
    const char **sets; /* owned array; strings owned in `owned` or borrowed from argv */
    size_t n_sets;
    char **owned;
    size_t n_owned;
    bool has_seed;
    uint64_t seed; /* --seed */
} kdsim_scenario_opts;

/* If argv[*i] is one of those options, consume it (and its value) and return 1; return
 * 0 when it is not one; print a usage error and return -1 when its value is missing or
 * bad. */
int kdsim_scenario_opt(kdsim_scenario_opts *o, int argc, char **argv, int *i, FILE *err);

void kdsim_scenario_opts_fini(kdsim_scenario_opts *o);

/* Parse a --warmup (or any) duration; returns 0 or -1. */
int kdsim_parse_duration_opt(const char *s, sim_time *out);

#endif
