/* kds_rate.h - time-varying rates (records per second) for producers.
 *
 * A rate profile is a function r(t) >= 0 with a closed-form integral, so a producer can
 * ask "how many records arrive on average between a and b" in O(1) (O(steps) for a
 * step profile) instead of stepping through time: constant, steps, a linear ramp, and
 * a daily cycle r(t) = mean * (1 + amplitude * cos(2 pi (t - peak) / 1 day)).
 */
#ifndef KDS_RATE_H
#define KDS_RATE_H

#include <stddef.h>

#include "sim.h"

typedef enum { KDS_RATE_CONSTANT, KDS_RATE_STEPS, KDS_RATE_RAMP, KDS_RATE_DAILY } kds_rate_kind;

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
} kds_rate;

/* A constant profile. */
kds_rate kds_rate_constant(double per_s);

/* The rate at time t (per second). */
double kds_rate_at(const kds_rate *r, sim_time t);

/* The expected count in [a, b) (b >= a). */
double kds_rate_integral(const kds_rate *r, sim_time a, sim_time b);

/* The largest rate the profile reaches in [a, b) (for sizing). */
double kds_rate_peak(const kds_rate *r, sim_time a, sim_time b);

#endif
