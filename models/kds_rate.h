/* kds_rate.h - time-varying rates (records per second) for producers.
 *
 * A rate profile is a function r(t) >= 0 with a closed-form integral, so a producer can
 * ask "how many records arrive on average between a and b" in O(1) (O(steps) for a
 * step profile) instead of stepping through time: constant, steps, a linear ramp,
 * a daily cycle r(t) = mean * (1 + amplitude * cos(2 pi (t - peak) / 1 day)), and a
 * table of counts per fixed-width slot (a replayed trace: records per minute, or per
 * second), constant within a slot, whose integral over whole slots is the table's
 * counts exactly.
 */
#ifndef KDS_RATE_H
#define KDS_RATE_H

#include <stddef.h>

#include "sim.h"

typedef enum {
    KDS_RATE_CONSTANT,
    KDS_RATE_STEPS,
    KDS_RATE_RAMP,
    KDS_RATE_DAILY,
    KDS_RATE_TABLE
} kds_rate_kind;

typedef struct kds_rate_step {
    sim_time at; /* from this time on (ns)... */
    double rate; /* ...the rate is this (per second) */
} kds_rate_step;

typedef struct kds_rate {
    kds_rate_kind kind;
    double rate;           /* CONSTANT: the rate; STEPS: the rate before the first step;
                              DAILY: the mean rate (per second) */
    kds_rate_step *steps;  /* STEPS: borrowed, sorted by time */
    size_t n_steps;
    double from, to;       /* RAMP: rates at ramp_start and ramp_end (constant outside) */
    sim_time ramp_start, ramp_end;
    double amplitude;      /* DAILY: relative swing in [0, 1] */
    sim_time peak;         /* DAILY: time of day of the peak, ns in [0, 1 day) */
    const double *counts;  /* TABLE: borrowed; records in slot i, [i * slot, (i+1) * slot) */
    const double *cum;     /* TABLE: borrowed; cum[i] = records before slot i, n_slots + 1
                              entries (kds_rate_table() fills it) */
    size_t n_slots;        /* TABLE: slots; the rate is 0 from n_slots * slot on */
    sim_time slot;         /* TABLE: slot width, ns (> 0) */
} kds_rate;

/* A constant profile. */
kds_rate kds_rate_constant(double per_s);

/* A table profile over `n` slots of `slot` ns from time 0, slot i holding counts[i]
 * records (>= 0). `cum` (caller's memory, n + 1 doubles) receives the running sums, so
 * that integrals are O(1); both arrays are borrowed and must outlive the profile.
 * Running sums of whole counts are exact up to 2^53 records. */
kds_rate kds_rate_table(const double *counts, double *cum, size_t n, sim_time slot);

/* The rate at time t (per second). */
double kds_rate_at(const kds_rate *r, sim_time t);

/* The expected count in [a, b) (b >= a). Inline for a constant rate, which every flush
 * of a producer at a constant rate asks; the other profiles are kds__rate_integral(). */
double kds__rate_integral(const kds_rate *r, sim_time a, sim_time b);

static inline double kds_rate_integral(const kds_rate *r, sim_time a, sim_time b)
{
    if (r->kind == KDS_RATE_CONSTANT)
        return b <= a ? 0 : r->rate * sim_to_s(b - a);
    return kds__rate_integral(r, a, b);
}

/* The largest rate the profile reaches in [a, b) (for sizing). O(slots in [a, b)) for a
 * table. */
double kds_rate_peak(const kds_rate *r, sim_time a, sim_time b);

#endif
