/* check_sim_dist.c - Check suite for sim_dist: each law's sample mean against
 * sim_dist_mean, chi-square goodness of fit against GSL's inverse CDFs, clamping, and
 * parameter checking. Every test uses a fixed seed, so a failure is reproducible and
 * never flaky.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_histogram.h>
#include <gsl/gsl_rng.h>

#include "sim_dist.h"
#include "sim_err.h"
#include "testutil.h"

/* A passing ck_assert costs a write(2) (Check records the last location reached), so
 * loops that check thousands of values use this, which only acts on failure. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

#define SEED 20240611UL

static gsl_rng *rng;

static void setup(void)
{
    rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, SEED);
}

static void teardown(void)
{
    gsl_rng_free(rng);
    rng = NULL;
}

/* ---- means ------------------------------------------------------------------------ */

/* Each law with its mean and variance worked out by hand, so that sim_dist_mean and
 * the parameter translation (median -> zeta, mean -> scale) are both checked. */
static const struct {
    sim_dist d;
    double mean;
    double var;
} laws[] = {
    {{SIM_DIST_CONST, 7.5, 0, 0, INFINITY}, 7.5, 0},
    {{SIM_DIST_UNIFORM, 2, 10, 0, INFINITY}, 6, 64.0 / 12},
    {{SIM_DIST_EXP, 3, 0, 0, INFINITY}, 3, 9},
    /* median 20, sigma 0.5: mean e^(zeta + s^2/2), variance (e^(s^2) - 1) mean^2 */
    {{SIM_DIST_LOGNORMAL, 20, 0.5, 0, INFINITY}, 22.662969061336526, 145.87834},
    {{SIM_DIST_NORMAL, -4, 2, -INFINITY, INFINITY}, -4, 4},
    /* mean 10, shape 4: variance mean^2 / k */
    {{SIM_DIST_GAMMA, 10, 4, 0, INFINITY}, 10, 25},
    /* minimum 1, alpha 3: mean a m / (a - 1), variance a m^2 / ((a - 1)^2 (a - 2)) */
    {{SIM_DIST_PARETO, 1, 3, 0, INFINITY}, 1.5, 0.75},
};

START_TEST(test_sample_mean)
{
    const sim_dist *d = &laws[_i].d;
    ck_assert_int_eq(sim_dist_check(d, NULL), SIM_OK);
    ck_assert_double_eq_tol(sim_dist_mean(d), laws[_i].mean, 1e-9 * fabs(laws[_i].mean));

    const int n = 200000;
    double sum = 0;
    for (int k = 0; k < n; k++)
        sum += sim_dist_sample(d, rng);
    double m = sum / n;
    /* Five standard errors: with a fixed seed this is a deterministic check that the
     * right law is drawn, loose enough not to depend on the generator's luck. */
    double tol = 5 * sqrt(laws[_i].var / n) + 1e-12;
    ck_assert_msg(fabs(m - laws[_i].mean) < tol, "%s: sample mean %g, expected %g +- %g",
                  sim_dist_kind_name(d->kind), m, laws[_i].mean, tol);
}
END_TEST

START_TEST(test_pareto_mean_infinite)
{
    sim_dist d = {SIM_DIST_PARETO, 1, 1, 0, INFINITY};
    ck_assert(isinf(sim_dist_mean(&d)));
    d.b = 0.5;
    ck_assert(isinf(sim_dist_mean(&d)));
}
END_TEST

/* ---- goodness of fit -------------------------------------------------------------- */

/* Chi-square statistic of n samples of d over `bins` equiprobable bins, whose edges
 * come from the law's inverse CDF, `edge(p)`. */
static double chi_square(const sim_dist *d, double (*edge)(double p), size_t bins, int n)
{
    double range[64];
    ck_assert_uint_le(bins + 1, 64);
    range[0] = edge(0.0);
    for (size_t i = 1; i < bins; i++)
        range[i] = edge((double)i / (double)bins);
    range[bins] = DBL_MAX; /* the tail bin */
    gsl_histogram *h = gsl_histogram_alloc(bins);
    gsl_histogram_set_ranges(h, range, bins + 1);
    for (int k = 0; k < n; k++)
        CHECK(gsl_histogram_increment(h, sim_dist_sample(d, rng)) == 0, "sample out of range");
    double expected = (double)n / (double)bins, chi2 = 0;
    for (size_t i = 0; i < bins; i++) {
        double o = gsl_histogram_get(h, i);
        chi2 += (o - expected) * (o - expected) / expected;
    }
    gsl_histogram_free(h);
    return chi2;
}

static double exp_mean2(double p)
{
    return gsl_cdf_exponential_Pinv(p, 2.0);
}
static double lognormal_median20(double p)
{
    return p == 0 ? 0 : gsl_cdf_lognormal_Pinv(p, log(20.0), 0.5);
}
static double gamma_mean10_shape4(double p)
{
    return gsl_cdf_gamma_Pinv(p, 4.0, 2.5);
}
static double pareto_min1_alpha3(double p)
{
    return gsl_cdf_pareto_Pinv(p, 3.0, 1.0);
}

#define BINS 40
#define SAMPLES 100000

START_TEST(test_chi_square_exponential)
{
    sim_dist d = {SIM_DIST_EXP, 2.0, 0, 0, INFINITY};
    double limit = gsl_cdf_chisq_Pinv(0.99, BINS - 1);
    double chi2 = chi_square(&d, exp_mean2, BINS, SAMPLES);
    ck_assert_msg(chi2 < limit, "chi2 %g >= %g", chi2, limit);

    /* The test has power: a mean 5 % off is rejected by the same bins. */
    sim_dist off = {SIM_DIST_EXP, 2.1, 0, 0, INFINITY};
    double chi2_off = chi_square(&off, exp_mean2, BINS, SAMPLES);
    ck_assert_msg(chi2_off > limit, "a wrong mean passed: chi2 %g < %g", chi2_off, limit);
}
END_TEST

START_TEST(test_chi_square_others)
{
    static const struct {
        sim_dist d;
        double (*edge)(double);
    } fits[] = {
        {{SIM_DIST_LOGNORMAL, 20, 0.5, 0, INFINITY}, lognormal_median20},
        {{SIM_DIST_GAMMA, 10, 4, 0, INFINITY}, gamma_mean10_shape4},
        {{SIM_DIST_PARETO, 1, 3, 0, INFINITY}, pareto_min1_alpha3},
    };
    double limit = gsl_cdf_chisq_Pinv(0.99, BINS - 1);
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        double chi2 = chi_square(&fits[i].d, fits[i].edge, BINS, SAMPLES);
        ck_assert_msg(chi2 < limit, "%s: chi2 %g >= %g", sim_dist_kind_name(fits[i].d.kind), chi2,
                      limit);
    }
}
END_TEST

/* ---- clamps and constants --------------------------------------------------------- */

START_TEST(test_clamp)
{
    sim_dist d = {SIM_DIST_NORMAL, 0, 1, -0.5, 0.5};
    int at_min = 0, at_max = 0;
    for (int k = 0; k < 10000; k++) {
        double x = sim_dist_sample(&d, rng);
        CHECK(x >= -0.5 && x <= 0.5, "%g escaped the clamp", x);
        at_min += x == -0.5;
        at_max += x == 0.5;
    }
    /* About 31 % of a standard normal lies beyond each bound. */
    ck_assert_int_gt(at_min, 2500);
    ck_assert_int_gt(at_max, 2500);

    sim_dist c = {SIM_DIST_CONST, 5, 0, 0, 3};
    ck_assert_double_eq(sim_dist_sample(&c, rng), 3);
    c.a = -1;
    ck_assert_double_eq(sim_dist_sample(&c, rng), 0);

    /* The default floor of 0 keeps a normal latency from going negative. */
    sim_dist lat = {SIM_DIST_NORMAL, 1, 5, 0, INFINITY};
    for (int k = 0; k < 1000; k++)
        CHECK(sim_dist_sample(&lat, rng) >= 0, "negative sample under a floor of 0");
}
END_TEST

START_TEST(test_const)
{
    sim_dist d = sim_dist_const(4.25);
    ck_assert_int_eq(d.kind, SIM_DIST_CONST);
    ck_assert_double_eq(d.min, 0);
    ck_assert(isinf(d.max) && d.max > 0);
    ck_assert_int_eq(sim_dist_check(&d, NULL), SIM_OK);
    ck_assert_double_eq(sim_dist_mean(&d), 4.25);

    /* Constant draws leave the stream untouched, so switching a law to a constant
     * does not shift an entity's other draws. */
    gsl_rng *twin = gsl_rng_clone(rng);
    for (int k = 0; k < 100; k++)
        CHECK(sim_dist_sample(&d, rng) == 4.25, "a constant varied");
    ck_assert_uint_eq(gsl_rng_get(rng), gsl_rng_get(twin));
    gsl_rng_free(twin);

    sim_dist neg = sim_dist_const(-2);
    ck_assert_int_eq(sim_dist_check(&neg, NULL), SIM_OK);
    ck_assert_double_eq(sim_dist_sample(&neg, rng), -2);
}
END_TEST

START_TEST(test_degenerate)
{
    sim_dist u = {SIM_DIST_UNIFORM, 3, 3, 0, INFINITY};
    sim_dist ln = {SIM_DIST_LOGNORMAL, 8, 0, 0, INFINITY};
    sim_dist nm = {SIM_DIST_NORMAL, 2, 0, 0, INFINITY};
    ck_assert_int_eq(sim_dist_check(&u, NULL), SIM_OK);
    ck_assert_int_eq(sim_dist_check(&ln, NULL), SIM_OK);
    ck_assert_int_eq(sim_dist_check(&nm, NULL), SIM_OK);
    for (int k = 0; k < 100; k++) {
        CHECK(sim_dist_sample(&u, rng) == 3, "uniform on [3, 3] varied");
        CHECK(fabs(sim_dist_sample(&ln, rng) - 8) < 1e-12, "lognormal with sigma 0 varied");
        CHECK(sim_dist_sample(&nm, rng) == 2, "normal with sd 0 varied");
    }
}
END_TEST

/* ---- names and errors ------------------------------------------------------------- */

START_TEST(test_kind_names)
{
    static const char *const names[] = {"const",  "uniform", "exp",   "lognormal",
                                        "normal", "gamma",   "pareto"};
    for (int k = SIM_DIST_CONST; k <= SIM_DIST_PARETO; k++) {
        ck_assert_str_eq(sim_dist_kind_name((sim_dist_kind)k), names[k]);
        sim_dist_kind out = SIM_DIST_PARETO;
        ck_assert_int_eq(sim_dist_kind_parse(names[k], &out), SIM_OK);
        ck_assert_int_eq(out, k);
    }
    sim_dist_kind out;
    ck_assert_int_eq(sim_dist_kind_parse("exponential", &out), SIM_OK);
    ck_assert_int_eq(out, SIM_DIST_EXP);
    ck_assert_int_eq(sim_dist_kind_parse("weibull", &out), SIM_EINVAL);
    ck_assert_int_eq(sim_dist_kind_parse("", &out), SIM_EINVAL);
    ck_assert_int_eq(sim_dist_kind_parse("Exp", &out), SIM_EINVAL);
    ck_assert_str_eq(sim_dist_kind_name((sim_dist_kind)42), "unknown");
}
END_TEST

static const sim_dist bad[] = {
    {SIM_DIST_CONST, NAN, 0, 0, INFINITY},
    {SIM_DIST_CONST, INFINITY, 0, 0, INFINITY},
    {SIM_DIST_CONST, 1, 0, 5, 2},   /* min > max */
    {SIM_DIST_CONST, 1, 0, NAN, 2}, /* NaN bound */
    {SIM_DIST_CONST, 1, 0, 0, NAN}, /* NaN bound */
    {SIM_DIST_CONST, 1, 0, INFINITY, INFINITY},
    {SIM_DIST_UNIFORM, 5, 1, 0, INFINITY}, /* reversed bounds */
    {SIM_DIST_UNIFORM, 0, INFINITY, 0, INFINITY},
    {SIM_DIST_EXP, 0, 0, 0, INFINITY},
    {SIM_DIST_EXP, -1, 0, 0, INFINITY},
    {SIM_DIST_EXP, NAN, 0, 0, INFINITY},
    {SIM_DIST_LOGNORMAL, 0, 1, 0, INFINITY},
    {SIM_DIST_LOGNORMAL, 10, -0.1, 0, INFINITY},
    {SIM_DIST_LOGNORMAL, 10, INFINITY, 0, INFINITY},
    {SIM_DIST_NORMAL, 1, -1, 0, INFINITY},
    {SIM_DIST_NORMAL, INFINITY, 1, 0, INFINITY},
    {SIM_DIST_GAMMA, 10, 0, 0, INFINITY},
    {SIM_DIST_GAMMA, -10, 2, 0, INFINITY},
    {SIM_DIST_PARETO, 0, 2, 0, INFINITY},
    {SIM_DIST_PARETO, 1, 0, 0, INFINITY},
    {SIM_DIST_PARETO, 1, NAN, 0, INFINITY},
    {(sim_dist_kind)42, 1, 1, 0, INFINITY},
};

START_TEST(test_check_errors)
{
    const char *why = NULL;
    ck_assert_int_eq(sim_dist_check(&bad[_i], &why), SIM_EINVAL);
    ck_assert_ptr_nonnull(why);
    /* The loader embeds the reason in its own sentence. */
    ck_assert_msg(islower((unsigned char)why[0]), "reason \"%s\" is not lower-case", why);
    ck_assert_int_eq(sim_dist_check(&bad[_i], NULL), SIM_EINVAL); /* why is optional */
}
END_TEST

START_TEST(test_check_ok_clears_why)
{
    const char *why = "stale";
    for (size_t i = 0; i < sizeof laws / sizeof laws[0]; i++) {
        ck_assert_int_eq(sim_dist_check(&laws[i].d, &why), SIM_OK);
        ck_assert_ptr_null(why);
    }
}
END_TEST

static Suite *dist_suite(void)
{
    Suite *s = suite_create("sim_dist");

    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_loop_test(core, test_sample_mean, 0, (int)(sizeof laws / sizeof laws[0]));
    tcase_add_test(core, test_chi_square_exponential);
    tcase_add_test(core, test_chi_square_others);
    tcase_add_test(core, test_const);
    tcase_add_test(core, test_kind_names);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_checked_fixture(limits, setup, teardown);
    tcase_add_test(limits, test_clamp);
    tcase_add_test(limits, test_degenerate);
    tcase_add_test(limits, test_pareto_mean_infinite);
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_check_errors, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(errors, test_check_ok_clears_why);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(dist_suite());
}
