/* plan.h - `kdsim plan SCENARIO --slo ...`: the cheapest configuration of a scenario's
 * stream (capacity mode, shard count, and settings the user lists) that meets every
 * service-level target in every replication, with the reasons (docs/capacity-planning.md).
 */
#ifndef PLAN_H
#define PLAN_H

#include <stdio.h>

/* argv as main() got it; returns the exit status (0; 1 failure; 2 bad input; 3 when no
 * configuration searched meets the targets). */
int kdsim_cmd_plan(int argc, char **argv, FILE *out, FILE *err);

#endif
