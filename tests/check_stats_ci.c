/* check_stats_ci.c - tests of the replication summaries (stats_ci.h, and the figure
 * summaries of figures.h): Student t quantiles against a printed t table, means and
 * 95 % intervals of known data worked by hand, one replication (no interval), and the
 * per-figure summary of run results as sweeps and `run --replications` write it.
 */
#include <check.h>
#include <math.h>

#include <jansson.h>

#include "figures.h"
#include "stats_ci.h"
#include "testutil.h"

/* Two-sided 95 % t quantiles t(0.975, df) from a printed table (6 decimals). */
static const struct {
    size_t n; /* replications: df = n - 1 */
    double t;
} T_TABLE[] = {{2, 12.706205}, {3, 4.302653},  {4, 3.182446},  {5, 2.776445},
               {8, 2.364624},  {10, 2.262157}, {30, 2.045230}, {121, 1.979930}};

START_TEST(test_t_table)
{
    ck_assert_double_eq_tol(kdsim_t975(T_TABLE[_i].n), T_TABLE[_i].t, 5e-7);
}
END_TEST

/* 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squares about the mean 32, sd sqrt(32 / 7) =
 * 2.138090, half-width 2.364624 x 2.138090 / sqrt(8) = 1.787488. */
START_TEST(test_known_data)
{
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    kdsim_ci c = kdsim_ci95(x, 8);
    ck_assert_uint_eq(c.n, 8);
    ck_assert_double_eq_tol(c.mean, 5, 1e-12);
    ck_assert_double_eq_tol(c.sd, 2.138090, 1e-6);
    ck_assert_double_eq_tol(c.half, 1.787488, 1e-6);
    ck_assert_double_eq(c.min, 2);
    ck_assert_double_eq(c.max, 9);
    /* Two replications: 10 and 12: sd sqrt(2), half 12.706205 x sqrt(2) / sqrt(2). */
    const double y[] = {10, 12};
    c = kdsim_ci95(y, 2);
    ck_assert_double_eq_tol(c.mean, 11, 1e-12);
    ck_assert_double_eq_tol(c.half, 12.706205, 1e-6);
}
END_TEST

START_TEST(test_degenerate)
{
    const double one[] = {42.5};
    kdsim_ci c = kdsim_ci95(one, 1);
    ck_assert_double_eq(c.mean, 42.5);
    ck_assert(isnan(c.sd));
    ck_assert(isnan(c.half)); /* no interval from one replication */
    const double same[] = {7199800, 7199800, 7199800};
    c = kdsim_ci95(same, 3);
    ck_assert_double_eq(c.mean, 7199800); /* exact: identical counts stay identical */
    ck_assert_double_eq(c.half, 0);
    c = kdsim_ci95(NULL, 0);
    ck_assert_uint_eq(c.n, 0);
    ck_assert(isnan(c.mean));
}
END_TEST

static json_t *run(const char *figs)
{
    json_error_t e;
    json_t *r = json_pack("{s:o}", "figures", json_loads(figs, 0, &e));
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Summaries of run results: figures in order of first appearance, over the runs that
 * define them; nulls and failed runs skipped. */
START_TEST(test_summary)
{
    json_t *runs[4] = {run("{\"a\": 10, \"b\": 1.5}"), NULL, run("{\"a\": 12, \"b\": null}"),
                       run("{\"a\": 14, \"c\": 3}")};
    json_t *s = kdsim_figs_summary(runs, 4);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(json_object_size(s), 3);
    const char *order[] = {"a", "b", "c"};
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(s, k, v) ck_assert_str_eq(k, order[i++]);
    json_t *a = json_object_get(s, "a");
    ck_assert_int_eq(json_integer_value(json_object_get(a, "n")), 3);
    ck_assert_double_eq_tol(json_real_value(json_object_get(a, "mean")), 12, 1e-12);
    ck_assert_double_eq_tol(json_real_value(json_object_get(a, "sd")), 2, 1e-12);
    /* 4.302653 x 2 / sqrt(3) */
    ck_assert_double_eq_tol(json_real_value(json_object_get(a, "ci95")), 4.968275, 1e-6);
    json_t *b = json_object_get(s, "b");
    ck_assert_int_eq(json_integer_value(json_object_get(b, "n")), 1);
    ck_assert(json_is_null(json_object_get(b, "ci95")));
    ck_assert_double_eq(json_real_value(json_object_get(b, "mean")), 1.5);
    json_decref(s);
    for (size_t r = 0; r < 4; r++)
        json_decref(runs[r]);
}
END_TEST

/* Figures go to JSON and back unchanged, integers as integers, NaN as null. */
START_TEST(test_figs_json)
{
    kdsim_figs f = {0};
    ck_assert_int_eq(kdsim_figs_add(&f, "stream.records_in", 7199800, true), 0);
    ck_assert_int_eq(kdsim_figs_add(&f, "x.p99", 1087.482, false), 0);
    ck_assert_int_eq(kdsim_figs_add(&f, "y", NAN, false), 0);
    json_t *j = kdsim_figs_json(&f);
    char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    ck_assert_str_eq(s, "{\"stream.records_in\": 7199800, \"x.p99\": 1087.482, \"y\": null}");
    kdsim_figs g;
    ck_assert_int_eq(kdsim_figs_from_json(j, &g), 0);
    ck_assert_uint_eq(g.n, 3);
    ck_assert(g.v[0].integer);
    ck_assert_double_eq(g.v[1].value, 1087.482);
    ck_assert(isnan(g.v[2].value));
    ck_assert_int_eq(kdsim_figs_find(&g, "x.p99"), 1);
    ck_assert_int_eq(kdsim_figs_find(&g, "nope"), -1);
    char buf[64];
    ck_assert_str_eq(kdsim_fig_text(buf, sizeof buf, 7199800, true), "7199800");
    ck_assert_str_eq(kdsim_fig_text(buf, sizeof buf, 0.1 + 0.2, false), "0.3");
    ck_assert_str_eq(kdsim_fig_text(buf, sizeof buf, NAN, false), "");
    free(s);
    json_decref(j);
    kdsim_figs_fini(&f);
    kdsim_figs_fini(&g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stats_ci");
    TCase *core = tcase_create("core");
    tcase_add_loop_test(core, test_t_table, 0, sizeof T_TABLE / sizeof T_TABLE[0]);
    tcase_add_test(core, test_known_data);
    tcase_add_test(core, test_summary);
    tcase_add_test(core, test_figs_json);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_degenerate);
    suite_add_tcase(s, limits);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
