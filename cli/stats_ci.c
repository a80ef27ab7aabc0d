/* stats_ci.c - means and 95 % confidence intervals of replications (stats_ci.h). */
#include "stats_ci.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

double kdsim_t975(size_t n)
{
    return gsl_cdf_tdist_Pinv(0.975, (double)(n - 1));
}

kdsim_ci kdsim_ci95(const double *x, size_t n)
{
    kdsim_ci c = {n, NAN, NAN, NAN, NAN, NAN};
    if (n == 0)
        return c;
    c.mean = gsl_stats_mean(x, 1, n);
    c.min = c.max = x[0];
    for (size_t i = 1; i < n; i++) {
        c.min = x[i] < c.min ? x[i] : c.min;
        c.max = x[i] > c.max ? x[i] : c.max;
    }
    if (n >= 2) {
        c.sd = gsl_stats_sd_m(x, 1, n, c.mean);
        c.half = kdsim_t975(n) * c.sd / sqrt((double)n);
    }
    return c;
}
