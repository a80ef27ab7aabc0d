/* check_kds_replay.c - tests of the replayed-trace rate profile (kds_replay.h and the
 * table profile of kds_rate.h): the integral over every minute is the trace's count
 * exactly, with either spread; partial slots are pro rata; the rate is 0 outside the
 * trace; the poisson spread keeps each minute's total, gives whole records a second, is
 * uniform over the seconds (chi-square at 0.99, fixed seed) and depends only on its seed.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "kds_replay.h"
#include "testutil.h"

/* A small trace with a quiet minute, an odd count and a big one. */
static const double TRACE[] = {600, 0, 7, 123457, 59, 1, 3000};
#define N_TRACE (sizeof TRACE / sizeof TRACE[0])

static double counts[N_TRACE * 60], cum[N_TRACE * 60 + 1];
static gsl_rng *rng;

static void setup(void)
{
    rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 12345);
}

static void teardown(void)
{
    gsl_rng_free(rng);
}

static kds_rate build(kds_replay_spread spread, double scale)
{
    return kds_replay_build(TRACE, N_TRACE, scale, spread, rng, counts, cum);
}

/* Loop over both spreads: the minute integrals are the trace's counts, exactly. */
START_TEST(test_minutes_exact)
{
    kds_rate r = build((kds_replay_spread)_i, 1);
    ck_assert_int_eq(r.kind, KDS_RATE_TABLE);
    ck_assert_uint_eq(r.n_slots, kds_replay_slots(N_TRACE, (kds_replay_spread)_i));
    double total = 0;
    for (size_t m = 0; m < N_TRACE; m++) {
        ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(m), SIM_MIN(m + 1)), TRACE[m]);
        total += TRACE[m];
    }
    ck_assert_double_eq(kds_rate_integral(&r, 0, SIM_MIN(N_TRACE)), total);
    /* Before and after the trace: nothing. */
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(N_TRACE), SIM_HOUR(5)), 0);
    ck_assert_double_eq(kds_rate_integral(&r, 0, SIM_DAY(3)), total);
    ck_assert_double_eq(kds_rate_at(&r, SIM_MIN(N_TRACE)), 0);
    ck_assert_double_eq(kds_rate_at(&r, SIM_DAY(1)), 0);
    ck_assert_double_eq(kds_rate_integral(&r, -SIM_S(5), 0), 0);
    /* Additivity over arbitrary cuts, the way a producer's flushes integrate. */
    double sum = 0;
    for (sim_time t = 0; t < SIM_MIN(N_TRACE + 1); t += SIM_MS(137))
        sum += kds_rate_integral(&r, t, t + SIM_MS(137));
    ck_assert_double_eq_tol(sum, total, 1e-6);
}
END_TEST

START_TEST(test_even_pro_rata)
{
    kds_rate r = build(KDS_REPLAY_EVEN, 1);
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(30)), 10);     /* 600 a minute */
    ck_assert_double_eq(kds_rate_at(&r, SIM_MIN(1) + 1), 0); /* the quiet minute */
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(15), SIM_S(45)), 300, 1e-9);
    /* Across a boundary: the last 30 s of minute 2 (7/min) and the first 30 s of
     * minute 3 (123457/min). */
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_MIN(2) + SIM_S(30), SIM_MIN(3) + SIM_S(30)),
                            3.5 + 123457 / 2.0, 1e-6);
    ck_assert_double_eq_tol(kds_rate_peak(&r, 0, SIM_MIN(N_TRACE)), 123457 / 60.0, 1e-9);
    ck_assert_double_eq_tol(kds_rate_peak(&r, 0, SIM_MIN(3)), 10, 1e-9);
    ck_assert_double_eq_tol(kds_rate_peak(&r, SIM_MIN(3) - 1, SIM_MIN(3) + 1), 123457 / 60.0, 1e-9);
}
END_TEST

START_TEST(test_scale)
{
    kds_rate r = build(KDS_REPLAY_EVEN, 2.5);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(2), SIM_MIN(3)), 17.5);
    r = build(KDS_REPLAY_POISSON, 2.5);
    /* The poisson spread rounds a scaled minute to whole records (17.5 -> 18). */
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(2), SIM_MIN(3)), 18);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(3), SIM_MIN(4)), nearbyint(123457 * 2.5));
}
END_TEST

START_TEST(test_poisson_seconds)
{
    kds_rate r = build(KDS_REPLAY_POISSON, 1);
    ck_assert_int_eq(r.slot, SIM_S(1));
    for (size_t i = 0; i < r.n_slots; i++) {
        ck_assert_double_eq(counts[i], floor(counts[i])); /* whole records a second */
        ck_assert_double_eq(kds_rate_at(&r, SIM_S(i) + SIM_MS(500)), counts[i]);
    }
    /* The quiet minute stays quiet; the big one is spread, not constant. */
    for (size_t k = 60; k < 120; k++)
        ck_assert_double_eq(counts[k], 0);
    double lo = INFINITY, hi = 0, chi2 = 0, e = 123457 / 60.0;
    for (size_t k = 180; k < 240; k++) {
        lo = fmin(lo, counts[k]);
        hi = fmax(hi, counts[k]);
        chi2 += (counts[k] - e) * (counts[k] - e) / e;
    }
    ck_assert(hi > lo);
    /* Uniform over the 60 seconds: chi-square with 59 degrees of freedom at 0.99. */
    ck_assert_double_lt(chi2, gsl_cdf_chisq_Pinv(0.99, 59));
}
END_TEST

START_TEST(test_poisson_seeded)
{
    build(KDS_REPLAY_POISSON, 1);
    static double first[N_TRACE * 60];
    for (size_t i = 0; i < N_TRACE * 60; i++)
        first[i] = counts[i];
    gsl_rng_set(rng, 12345);
    build(KDS_REPLAY_POISSON, 1);
    int same = 1;
    for (size_t i = 0; i < N_TRACE * 60; i++)
        same = same && first[i] == counts[i];
    ck_assert(same);
    gsl_rng_set(rng, 999);
    build(KDS_REPLAY_POISSON, 1);
    same = 1;
    for (size_t i = 180; i < 240; i++)
        same = same && first[i] == counts[i];
    ck_assert(!same);
}
END_TEST

/* limits: an empty trace, and a day of large minutes whose running sums stay exact. */
START_TEST(test_limits)
{
    double c0[1], k0[1];
    kds_rate r = kds_replay_build(TRACE, 0, 1, KDS_REPLAY_EVEN, NULL, c0, k0);
    ck_assert_double_eq(kds_rate_integral(&r, 0, SIM_DAY(1)), 0);
    ck_assert_double_eq(kds_rate_at(&r, 0), 0);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_DAY(1)), 0);
    enum { DAY = 1440 };
    static double mins[DAY], c[DAY], k[DAY + 1];
    double total = 0;
    for (size_t m = 0; m < DAY; m++) {
        mins[m] = 60e6 + (double)(m * 7919 % 1000); /* 1 M records/s, not round */
        total += mins[m];
    }
    r = kds_replay_build(mins, DAY, 1, KDS_REPLAY_EVEN, NULL, c, k);
    ck_assert_double_eq(kds_rate_integral(&r, 0, SIM_DAY(1)), total);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(1000), SIM_MIN(1001)), mins[1000]);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_MIN(DAY - 1), SIM_MIN(DAY)), mins[DAY - 1]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kds_replay");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_loop_test(core, test_minutes_exact, KDS_REPLAY_EVEN, KDS_REPLAY_POISSON + 1);
    tcase_add_test(core, test_even_pro_rata);
    tcase_add_test(core, test_scale);
    tcase_add_test(core, test_poisson_seconds);
    tcase_add_test(core, test_poisson_seeded);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_limits);
    suite_add_tcase(s, limits);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
