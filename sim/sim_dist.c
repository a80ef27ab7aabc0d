/* sim_dist.c - checking, sampling and summarising the distributions of sim_dist.h.
 *
 * Sampling is a thin layer over gsl_ran_*: the work here is in translating the
 * scenario's parameters (mean, median, shape) into GSL's, and in refusing bad ones
 * before GSL sees them, since GSL's own error handler is not meant for user input.
 */
#include "sim_dist.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim_err.h"

/* Scenario spellings, indexed by sim_dist_kind; the cli's YAML loader uses the same. */
static const char *const kind_names[] = {
    [SIM_DIST_CONST] = "const",         [SIM_DIST_UNIFORM] = "uniform", [SIM_DIST_EXP] = "exp",
    [SIM_DIST_LOGNORMAL] = "lognormal", [SIM_DIST_NORMAL] = "normal",   [SIM_DIST_GAMMA] = "gamma",
    [SIM_DIST_PARETO] = "pareto",
};
#define KIND_COUNT (sizeof kind_names / sizeof kind_names[0])

sim_dist sim_dist_const(double v)
{
    /* The default floor of 0 suits durations and sizes, but would silently turn a
     * negative constant into 0; lower the floor so the constant is what was asked. */
    return (sim_dist){SIM_DIST_CONST, v, 0.0, v < 0 ? v : 0.0, INFINITY};
}

int sim_dist_check(const sim_dist *d, const char **why)
{
    const char *msg = NULL;
    if (isnan(d->min) || isnan(d->max) || d->min == INFINITY || d->max == -INFINITY)
        msg = "min and max must be numbers (max may be unbounded)";
    else if (d->min > d->max)
        msg = "min is greater than max";
    else {
        switch (d->kind) {
        case SIM_DIST_CONST:
            if (!isfinite(d->a))
                msg = "the value must be a finite number";
            break;
        case SIM_DIST_UNIFORM:
            if (!isfinite(d->a) || !isfinite(d->b))
                msg = "the bounds must be finite numbers";
            else if (d->a > d->b)
                msg = "the lower bound is greater than the upper bound";
            break;
        case SIM_DIST_EXP:
            if (!isfinite(d->a) || d->a <= 0)
                msg = "the mean must be a positive finite number";
            break;
        case SIM_DIST_LOGNORMAL:
            if (!isfinite(d->a) || d->a <= 0)
                msg = "the median must be a positive finite number";
            else if (!isfinite(d->b) || d->b < 0)
                msg = "sigma must be a non-negative finite number";
            break;
        case SIM_DIST_NORMAL:
            if (!isfinite(d->a))
                msg = "the mean must be a finite number";
            else if (!isfinite(d->b) || d->b < 0)
                msg = "the standard deviation must be a non-negative finite number";
            break;
        case SIM_DIST_GAMMA:
            if (!isfinite(d->a) || d->a <= 0)
                msg = "the mean must be a positive finite number";
            else if (!isfinite(d->b) || d->b <= 0)
                msg = "the shape must be a positive finite number";
            break;
        case SIM_DIST_PARETO:
            if (!isfinite(d->a) || d->a <= 0)
                msg = "the minimum must be a positive finite number";
            else if (!isfinite(d->b) || d->b <= 0)
                msg = "alpha must be a positive finite number";
            break;
        default:
            msg = "unknown distribution kind";
            break;
        }
    }
    if (why)
        *why = msg;
    return msg ? SIM_EINVAL : SIM_OK;
}

/* sim_dist_sample for every kind (it draws constants and lognormals itself); constants
 * need no generator (r may be NULL then). */
double sim__dist_sample_random(const sim_dist *d, gsl_rng *r)
{
    double x;
    switch (d->kind) {
    case SIM_DIST_CONST:
        x = d->a;
        break;
    case SIM_DIST_UNIFORM:
        x = gsl_ran_flat(r, d->a, d->b);
        break;
    case SIM_DIST_EXP:
        x = gsl_ran_exponential(r, d->a);
        break;
    case SIM_DIST_LOGNORMAL:
        x = sim__dist_lognormal(d, r);
        break;
    case SIM_DIST_NORMAL:
        x = d->a + gsl_ran_gaussian_ziggurat(r, d->b);
        break;
    case SIM_DIST_GAMMA:
        /* GSL takes shape k and scale theta; the mean is k * theta. */
        x = gsl_ran_gamma(r, d->b, d->a / d->b);
        break;
    case SIM_DIST_PARETO:
        x = gsl_ran_pareto(r, d->b, d->a);
        break;
    default:
        SIM_ASSERT(!"sim_dist_sample: unchecked distribution kind");
        return 0.0;
    }
    if (x < d->min)
        x = d->min;
    if (x > d->max)
        x = d->max;
    return x;
}

double sim_dist_mean(const sim_dist *d)
{
    switch (d->kind) {
    case SIM_DIST_CONST:
    case SIM_DIST_EXP:
    case SIM_DIST_NORMAL:
    case SIM_DIST_GAMMA:
        return d->a;
    case SIM_DIST_UNIFORM:
        return 0.5 * (d->a + d->b);
    case SIM_DIST_LOGNORMAL:
        return d->a * exp(0.5 * d->b * d->b);
    case SIM_DIST_PARETO:
        /* The mean diverges for alpha <= 1: heavy tails are the point of a Pareto. */
        return d->b > 1 ? d->b * d->a / (d->b - 1) : INFINITY;
    }
    SIM_ASSERT(!"sim_dist_mean: unchecked distribution kind");
    return 0.0;
}

const char *sim_dist_kind_name(sim_dist_kind k)
{
    if ((unsigned)k < KIND_COUNT && kind_names[k])
        return kind_names[k];
    return "unknown";
}

int sim_dist_kind_parse(const char *name, sim_dist_kind *out)
{
    for (size_t i = 0; i < KIND_COUNT; i++) {
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (sim_dist_kind)i;
            return SIM_OK;
        }
    }
    /* Long spellings people type from textbooks. */
    if (strcmp(name, "constant") == 0) {
        *out = SIM_DIST_CONST;
        return SIM_OK;
    }
    if (strcmp(name, "exponential") == 0) {
        *out = SIM_DIST_EXP;
        return SIM_OK;
    }
    return SIM_EINVAL;
}
