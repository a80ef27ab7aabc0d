/* stats_ci.h - summaries of independent replications: the mean of a figure with its
 * 95 % confidence interval (Student's t), for `kdsim run --replications`, sweeps and
 * the planner.
 *
 * With n replications x_1..x_n of one figure, the interval is
 *   mean +- t(0.975, n - 1) x s / sqrt(n),
 * s the sample standard deviation (divisor n - 1). It assumes the replications are
 * independent (distinct seeds; see sim_rng.h for the caveat) and their mean roughly
 * normal, which holds for sums and averages over a run, less well for maxima and high
 * percentiles with few replications.
 */
#ifndef STATS_CI_H
#define STATS_CI_H

#include <stddef.h>

typedef struct kdsim_ci {
    size_t n;    /* replications */
    double mean; /* sample mean */
    double sd;   /* sample standard deviation (n - 1); NaN when n < 2 */
    double half; /* half-width of the 95 % interval; NaN when n < 2 */
    double min, max;
} kdsim_ci;

/* Summarise x[0..n-1] (n >= 1). O(n). */
kdsim_ci kdsim_ci95(const double *x, size_t n);

/* The two-sided 95 % Student t quantile for n - 1 degrees of freedom (n >= 2):
 * 12.706 for n = 2, 4.303 for n = 3, 2.262 for n = 10; tends to 1.960. */
double kdsim_t975(size_t n);

#endif
