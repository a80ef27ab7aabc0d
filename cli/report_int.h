/* report_int.h - what the report writers' files share: number formatting, files that
 * appear complete or not at all, and the sections kept in files of their own. */
#ifndef REPORT_INT_H
#define REPORT_INT_H

#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"

/* A real rounded to 3 decimals (null when not finite). New reference. */
json_t *kdsim_real3(double x);

/* A file written under a temporary name in `dir` and renamed into place by
 * kdsim_aclose(), so that no half-written file is ever left. */
typedef struct kdsim_afile {
    FILE *f;
    char tmp[4096];
    char final[4096];
} kdsim_afile;

/* Open DIR/.NAME.tmp for writing. Returns 0 or SIM_EIO (message on stderr). */
int kdsim_aopen(kdsim_afile *a, const char *dir, const char *name);

/* Close and rename into place; on any error remove it. Returns 0 or SIM_EIO. */
int kdsim_aclose(kdsim_afile *a);

/* stream.reshards[]: every resharding request, accepted or refused. */
json_t *kdsim_reshards_json(const kds_world *w);

/* stream.hot: the hottest shards and the keys the scenario names. */
json_t *kdsim_hot_json(const kds_world *w);

/* stream.capacity: on-demand scaling and rule figures. */
json_t *kdsim_capacity_json(const kds_world *w);

/* capacity_per_minute.csv in dir. Returns 0 or SIM_EIO. */
int kdsim_write_capacity_csv(const kds_world *w, const char *dir);

#endif
