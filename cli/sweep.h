/* sweep.h - the capacity-planning commands: `kdsim run --replications`, `kdsim sweep`,
 * `kdsim merge` and `kdsim plan` (plan.h). The options they share are in opts.h.
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

#include "opts.h"
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

#endif
