/* sim_dist.h - probability distributions described as data and sampled with GSL.
 *
 * A scenario gives latencies, processing times and record sizes as distributions:
 * a constant, or one of GSL's continuous laws, optionally clamped to [min, max]. The
 * description is plain data (filled by the scenario loader); sampling uses the
 * caller's gsl_rng, so each entity draws from its own stream.
 */
#ifndef SIM_DIST_H
#define SIM_DIST_H

#include <math.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim.h"

typedef enum {
    SIM_DIST_CONST,     /* always `a` */
    SIM_DIST_UNIFORM,   /* uniform on [a, b) */
    SIM_DIST_EXP,       /* exponential with mean a */
    SIM_DIST_LOGNORMAL, /* median a, shape sigma b (the log's standard deviation) */
    SIM_DIST_NORMAL,    /* mean a, standard deviation b */
    SIM_DIST_GAMMA,     /* mean a, shape k b */
    SIM_DIST_PARETO     /* minimum a, shape alpha b */
} sim_dist_kind;

typedef struct sim_dist {
    sim_dist_kind kind;
    double a;   /* first parameter (see sim_dist_kind), in the caller's unit */
    double b;   /* second parameter, if any */
    double min; /* samples below are raised to min (default 0) */
    double max; /* samples above are lowered to max (default +inf) */
} sim_dist;

/* A constant distribution at `v` (min 0, max +inf unless v is negative). */
sim_dist sim_dist_const(double v);

/* Check parameters before any sampling: returns 0, or SIM_EINVAL with a static
 * explanation in *why (for the loader's message). GSL never sees bad parameters. */
int sim_dist_check(const sim_dist *d, const char **why);

/* sim_dist_sample() of the kinds it does not draw inline (it serves every kind). */
double sim__dist_sample_random(const sim_dist *d, gsl_rng *r);

/* A lognormal of median a and shape b, unclamped. The median of a lognormal is
 * exp(zeta): users think in medians ("p50 is 20 ms"), GSL in the mean of the underlying
 * normal. The same law as gsl_ran_lognormal, drawn from GSL's ziggurat Gaussian: it
 * needs no logarithm per draw (Box-Muller does). */
static inline double sim__dist_lognormal(const sim_dist *d, gsl_rng *r)
{
    return d->a * exp(d->b * gsl_ran_gaussian_ziggurat(r, 1.0));
}

/* Draw one sample, clamped to [min, max]. Constant draws consume no randomness.
 * Inline: constants (processing times, record sizes) are a large share of the draws
 * of a run and need no call, and lognormals (latencies and durations, most of the
 * other draws) need neither the call nor the switch on the kind; the other kinds go
 * through sim__dist_sample_random(). */
static inline double sim_dist_sample(const sim_dist *d, gsl_rng *r)
{
    double x;
    if (d->kind == SIM_DIST_LOGNORMAL)
        x = sim__dist_lognormal(d, r);
    else if (d->kind == SIM_DIST_CONST)
        x = d->a;
    else
        return sim__dist_sample_random(d, r);
    if (x < d->min)
        x = d->min;
    if (x > d->max)
        x = d->max;
    return x;
}

/* A draw in milliseconds as whole nanoseconds (sim_ms_to_ns: rounded, 0 when <= 0,
 * SIM_DRAW_MAX when longer): how every model turns a latency draw into simulated time. */
static inline sim_time sim_dist_sample_ns(const sim_dist *d, gsl_rng *r)
{
    return sim_ms_to_ns(sim_dist_sample(d, r));
}

/* The distribution's mean before clamping (for sizing and reports); +inf if infinite. */
double sim_dist_mean(const sim_dist *d);

/* Its kind's name as written in scenarios ("const", "lognormal", ...). */
const char *sim_dist_kind_name(sim_dist_kind k);

/* Parse a kind name; returns 0 and sets *out, or SIM_EINVAL. */
int sim_dist_kind_parse(const char *name, sim_dist_kind *out);

#endif
