/* check_kds_rate.c - tests of the rate profiles: values and closed-form integrals of
 * constant, step, ramp and daily profiles against hand-computed figures, additivity,
 * agreement with a fine numerical integration of kds_rate_at, and peaks.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "kds_rate.h"
#include "testutil.h"

#define EPS 1e-9

static kds_rate_step steps[] = {{SIM_S(10), 20}, {SIM_S(20), 5}};

static kds_rate steps_profile(void)
{
    return (kds_rate){.kind = KDS_RATE_STEPS, .rate = 10, .steps = steps, .n_steps = 2};
}

static kds_rate ramp_profile(void)
{
    return (kds_rate){.kind = KDS_RATE_RAMP,
                      .from = 0,
                      .to = 100,
                      .ramp_start = SIM_S(10),
                      .ramp_end = SIM_S(20)};
}

static kds_rate daily_profile(void)
{
    return (kds_rate){.kind = KDS_RATE_DAILY, .rate = 100, .amplitude = 0.5, .peak = SIM_HOUR(12)};
}

START_TEST(test_constant)
{
    kds_rate r = kds_rate_constant(1500);
    ck_assert_double_eq(kds_rate_at(&r, SIM_HOUR(5)), 1500);
    ck_assert_double_eq_tol(kds_rate_integral(&r, 0, SIM_S(60)), 90000, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_MS(250), SIM_MS(500)), 375, EPS);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_S(5), SIM_S(5)), 0);
    ck_assert_double_eq(kds_rate_integral(&r, SIM_S(6), SIM_S(5)), 0);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_DAY(1)), 1500);
}
END_TEST

START_TEST(test_steps)
{
    kds_rate r = steps_profile();
    ck_assert_double_eq(kds_rate_at(&r, 0), 10);
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(10) - 1), 10);
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(10)), 20);
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(25)), 5);
    ck_assert_double_eq_tol(kds_rate_integral(&r, 0, SIM_S(30)), 350, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(15), SIM_S(25)), 125, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(12), SIM_S(18)), 120, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(10), SIM_S(20)), 200, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(5), SIM_S(10)), 50, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(20), SIM_S(40)), 100, EPS);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_S(30)), 20);
    ck_assert_double_eq(kds_rate_peak(&r, SIM_S(21), SIM_S(30)), 5);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_S(10)), 10);
    ck_assert_double_eq(kds_rate_peak(&r, SIM_S(15), SIM_S(30)), 20);
}
END_TEST

START_TEST(test_ramp)
{
    kds_rate r = ramp_profile();
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(5)), 0);
    ck_assert_double_eq_tol(kds_rate_at(&r, SIM_S(15)), 50, EPS);
    ck_assert_double_eq(kds_rate_at(&r, SIM_S(25)), 100);
    ck_assert_double_eq_tol(kds_rate_integral(&r, 0, SIM_S(30)), 1500, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(12), SIM_S(14)), 60, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(15), SIM_S(25)), 875, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_S(21), SIM_S(22)), 100, EPS);
    ck_assert_double_eq_tol(kds_rate_integral(&r, 0, SIM_S(5)), 0, EPS);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_S(15)), 50);
    ck_assert_double_eq(kds_rate_peak(&r, 0, SIM_S(30)), 100);
    /* A falling ramp. */
    kds_rate d = r;
    d.from = 100;
    d.to = 20;
    ck_assert_double_eq_tol(kds_rate_integral(&d, 0, SIM_S(30)), 1000 + 600 + 200, EPS);
    ck_assert_double_eq(kds_rate_peak(&d, SIM_S(12), SIM_S(30)), kds_rate_at(&d, SIM_S(12)));
}
END_TEST

START_TEST(test_daily)
{
    kds_rate r = daily_profile();
    ck_assert_double_eq_tol(kds_rate_at(&r, SIM_HOUR(12)), 150, EPS);
    ck_assert_double_eq_tol(kds_rate_at(&r, 0), 50, EPS);
    ck_assert_double_eq_tol(kds_rate_at(&r, SIM_HOUR(6)), 100, 1e-6);
    ck_assert_double_eq_tol(kds_rate_at(&r, SIM_HOUR(36)), 150, 1e-6); /* next day */
    /* A whole day averages to the mean, wherever it starts. */
    ck_assert_double_eq_tol(kds_rate_integral(&r, 0, SIM_DAY(1)), 100.0 * 86400, 1e-3);
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_HOUR(7), SIM_HOUR(31)), 100.0 * 86400, 1e-3);
    /* The busy half-day around the peak: 100 x (43,200 + 0.5 x 2 / w), w = 2 pi / 86,400. */
    double want = 100.0 * (43200 + 86400 / (2 * M_PI));
    ck_assert_double_eq_tol(kds_rate_integral(&r, SIM_HOUR(6), SIM_HOUR(18)), want, 1e-3);
    ck_assert_double_eq_tol(kds_rate_peak(&r, 0, SIM_DAY(1)), 150, EPS);
}
END_TEST

/* For every kind: integral(a, b) + integral(b, c) = integral(a, c), and the integral
 * agrees with a midpoint sum of kds_rate_at over 1 ms steps. */
START_TEST(test_integral_matches_rate)
{
    kds_rate profiles[4] = {kds_rate_constant(42), steps_profile(), ramp_profile(),
                            daily_profile()};
    kds_rate *r = &profiles[_i];
    sim_time a = SIM_MS(3217), b = SIM_MS(15003), c = SIM_MS(27777);
    double ab = kds_rate_integral(r, a, b), bc = kds_rate_integral(r, b, c);
    double ac = kds_rate_integral(r, a, c);
    ck_assert_double_eq_tol(ab + bc, ac, 1e-6 * ac);
    double sum = 0;
    for (sim_time t = a; t < c; t += SIM_MS(1)) {
        sim_time e = t + SIM_MS(1) < c ? t + SIM_MS(1) : c;
        sum += kds_rate_at(r, t + (e - t) / 2) * sim_to_s(e - t);
    }
    ck_assert_msg(fabs(sum - ac) <= 1e-3 * ac + 0.05, "kind %d: sum %.4f, integral %.4f", _i, sum,
                  ac);
}
END_TEST

static Suite *rate_suite(void)
{
    Suite *s = suite_create("kds_rate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_constant);
    tcase_add_test(tc, test_steps);
    tcase_add_test(tc, test_ramp);
    tcase_add_test(tc, test_daily);
    tcase_add_loop_test(tc, test_integral_matches_rate, 0, 4);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(rate_suite());
}
