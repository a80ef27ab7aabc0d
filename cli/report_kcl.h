/* report_kcl.h - the KCL applications in the reports (issue 6): workers and their
 * leases over time, lease moves and their causes, convergence after worker events,
 * the lease table's consumed and throttled capacity, duplicates from failover. Read
 * from the models' plain data (kds_kcl_summary_get); report.c calls these once each.
 */
#ifndef REPORT_KCL_H
#define REPORT_KCL_H

#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"

/* Add the KCL keys to consumer object `o` when `c` is a KCL consumer (else nothing). */
void kdsim_kcl_json(const kds_consumer *c, json_t *o);

/* Print a section per KCL consumer of report `r` (the JSON tree); nothing if none. */
void kdsim_kcl_text(const json_t *r, FILE *out);

/* Write kcl_workers_per_minute.csv and kcl_lease_table_per_minute.csv into `dir` when
 * the world has a KCL consumer. Returns 0 or SIM_EIO. */
int kdsim_write_kcl_csv(const kds_world *w, const char *dir);

#endif
