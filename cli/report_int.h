/* report_int.h - what the report writers' files share: number formatting, files that
 * appear complete or not at all, and the sections kept in files of their own. */
#ifndef REPORT_INT_H
#define REPORT_INT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "kds_world.h"

/* Readers of the JSON report for the text, cost and HTML writers: member k of object o
 * as a count (0 when absent, not an integer or negative), as a real (0 when absent or
 * not a number), or as a string ("" when absent or not a string; borrowed from o). o may
 * be NULL. The writers read every figure through these, so that a figure missing from
 * an older report prints as 0 instead of failing. */
static inline uint64_t ju(const json_t *o, const char *k)
{
    json_int_t v = json_integer_value(json_object_get(o, k));
    return v > 0 ? (uint64_t)v : 0;
}

static inline double jr(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* A JSON number with `dec` decimals into buf, or "-" for null (a figure not defined). */
static inline const char *real_or_dash(char *buf, size_t n, const json_t *v, int dec)
{
    if (json_is_number(v))
        snprintf(buf, n, "%.*f", dec, json_number_value(v));
    else
        snprintf(buf, n, "-");
    return buf;
}

/* The same with one decimal. */
static inline const char *real1_or_dash(char *buf, size_t n, const json_t *v)
{
    return real_or_dash(buf, n, v, 1);
}

/* A JSON number, or NaN for null or absent (a figure not defined). */
static inline double jr_nan(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static inline const char *js(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

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
