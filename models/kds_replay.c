/* kds_replay.c - a recorded per-minute trace as a table rate profile (kds_replay.h). */
#include "kds_replay.h"

#include <math.h>

#include <gsl/gsl_randist.h>

#include "sim_err.h"

/* Seconds in a minute: the poisson spread's slots. */
#define SECONDS 60

size_t kds_replay_slots(size_t n_minutes, kds_replay_spread spread)
{
    return spread == KDS_REPLAY_POISSON ? n_minutes * SECONDS : n_minutes;
}

kds_rate kds_replay_build(const double *per_minute, size_t n_minutes, double scale,
                          kds_replay_spread spread, gsl_rng *rng, double *counts, double *cum)
{
    SIM_ASSERT(scale > 0);
    if (spread == KDS_REPLAY_EVEN) {
        for (size_t i = 0; i < n_minutes; i++) {
            SIM_ASSERT(per_minute[i] >= 0);
            counts[i] = per_minute[i] * scale;
        }
        return kds_rate_table(counts, cum, n_minutes, SIM_MIN(1));
    }
    SIM_ASSERT(rng != NULL);
    double p[SECONDS];
    for (int k = 0; k < SECONDS; k++)
        p[k] = 1.0;
    for (size_t i = 0; i < n_minutes; i++) {
        double n = nearbyint(per_minute[i] * scale);
        SIM_ASSERT(n >= 0 && n <= 4294967295.0);
        unsigned int got[SECONDS];
        /* One draw a minute: the 60 counts sum to n exactly, each Binomial(n, 1/60). */
        gsl_ran_multinomial(rng, SECONDS, (unsigned int)n, p, got);
        for (int k = 0; k < SECONDS; k++)
            counts[i * SECONDS + (size_t)k] = got[k];
    }
    return kds_rate_table(counts, cum, n_minutes * SECONDS, SIM_S(1));
}
