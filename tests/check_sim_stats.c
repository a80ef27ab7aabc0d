/* check_sim_stats.c - Check suite for sim_stats: histogram layout, percentiles against
 * exact order statistics, weighted adds, merging, and time series.
 */
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>

#include "sim_err.h"
#include "sim_stats.h"
#include "testutil.h"

/* A passing ck_assert costs a write(2) (Check records the last location reached), so
 * loops that check thousands of values use this, which only acts on failure. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

static uint64_t double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* The width of the bin holding x, the accuracy sim_hist_quantile promises. */
static double bin_width_at(const sim_hist *h, double x)
{
    size_t i;
    ck_assert_int_eq(gsl_histogram_find(h->h, x, &i), 0);
    double lo, hi, w;
    sim_hist_bin(h, i, &lo, &hi, &w);
    return hi - lo;
}

/* Two histograms hold the same data: bins, totals and extremes. */
static void assert_same(const sim_hist *a, const sim_hist *b)
{
    ck_assert_uint_eq(sim_hist_bins(a), sim_hist_bins(b));
    for (size_t i = 0; i < sim_hist_bins(a); i++) {
        double lo, hi, wa, wb;
        sim_hist_bin(a, i, &lo, &hi, &wa);
        sim_hist_bin(b, i, &lo, &hi, &wb);
        CHECK(fabs(wa - wb) <= 1e-9, "bin %zu: %g != %g", i, wa, wb);
    }
    ck_assert_double_eq_tol(a->weight, b->weight, 1e-9);
    ck_assert_double_eq_tol(a->sum, b->sum, 1e-9 * fabs(a->sum));
    ck_assert_double_eq(a->min, b->min);
    ck_assert_double_eq(a->max, b->max);
}

/* ---- layout ----------------------------------------------------------------------- */

START_TEST(test_layout)
{
    sim_hist h;
    ck_assert_int_eq(sim_hist_init(&h, 0.01, 1000, 10), SIM_OK);
    ck_assert_uint_eq(sim_hist_bins(&h), 1 + 5 * 10);
    double lo, hi, w;
    sim_hist_bin(&h, 0, &lo, &hi, &w);
    ck_assert_double_eq(lo, 0);
    ck_assert_double_eq(hi, 0.01);
    ck_assert_double_eq(w, 0);
    for (size_t i = 1; i < sim_hist_bins(&h); i++) {
        sim_hist_bin(&h, i, &lo, &hi, &w);
        CHECK(fabs(hi / lo - pow(10, 0.1)) < 1e-9, "bin %zu not log-spaced", i);
    }
    ck_assert_double_eq(hi, 1000);
    sim_hist_fini(&h);

    /* Decades that do not divide evenly: the last bin is cut at hi. */
    ck_assert_int_eq(sim_hist_init(&h, 1, 50, 10), SIM_OK);
    ck_assert_uint_eq(sim_hist_bins(&h), 1 + 17);
    sim_hist_bin(&h, 17, &lo, &hi, &w);
    ck_assert_double_eq(hi, 50);
    ck_assert(lo < hi);
    sim_hist_fini(&h);

    ck_assert_int_eq(sim_hist_init_latency_ms(&h), SIM_OK);
    ck_assert_double_eq(h.lo, 0.01);
    ck_assert_double_eq(h.hi, 400.0 * 86400e3);
    ck_assert_uint_eq(sim_hist_bins(&h), 1 + 1254);
    ck_assert_double_eq_tol(bin_width_at(&h, 100) / 100, 0.023, 0.001);
    sim_hist_fini(&h);
    sim_hist_fini(&h); /* idempotent */
    sim_hist_fini(NULL);
}
END_TEST

/* ---- quantiles -------------------------------------------------------------------- */

START_TEST(test_quantiles_known)
{
    sim_hist h;
    ck_assert_int_eq(sim_hist_init_latency_ms(&h), SIM_OK);
    const int n = 10000;
    for (int v = n; v >= 1; v--) /* order must not matter */
        sim_hist_add(&h, v, 1);
    ck_assert_double_eq(h.weight, n);
    ck_assert_double_eq(sim_hist_mean(&h), (n + 1) / 2.0);
    ck_assert_double_eq(sim_hist_quantile(&h, 0), 1);
    ck_assert_double_eq(sim_hist_quantile(&h, 1), n);
    ck_assert_double_eq(sim_hist_quantile(&h, -0.5), 1);
    ck_assert_double_eq(sim_hist_quantile(&h, 1.5), n);

    static const double qs[] = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999};
    double prev = 0;
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double exact = ceil(qs[i] * n); /* the smallest v with F(v) >= q */
        double est = sim_hist_quantile(&h, qs[i]);
        /* One bin width, plus the spacing of the data when q falls on a bin edge. */
        double tol = bin_width_at(&h, exact) + 1;
        ck_assert_msg(fabs(est - exact) <= tol, "q=%g: got %g, exact %g, tolerance %g", qs[i], est,
                      exact, tol);
        ck_assert(est >= prev); /* monotone */
        prev = est;
    }
    sim_hist_fini(&h);
}
END_TEST

/* A heavy-tailed sample against its exact order statistics: the error stays within
 * the bin holding the exact value, across five decades. */
START_TEST(test_quantiles_lognormal)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 77);
    const size_t n = 100003; /* prime: q * n never lands on a bin's cumulative count */
    double *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    sim_hist h;
    ck_assert_int_eq(sim_hist_init_latency_ms(&h), SIM_OK);
    for (size_t i = 0; i < n; i++) {
        x[i] = gsl_ran_lognormal(r, log(20.0), 1.5);
        sim_hist_add(&h, x[i], 1);
    }
    gsl_sort(x, 1, n);
    static const double qs[] = {0.0001, 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        double exact = x[(size_t)ceil(qs[i] * (double)n) - 1];
        double est = sim_hist_quantile(&h, qs[i]);
        double tol = bin_width_at(&h, exact);
        ck_assert_msg(fabs(est - exact) <= tol, "q=%g: got %g, exact %g, tolerance %g", qs[i], est,
                      exact, tol);
    }
    ck_assert_double_eq(sim_hist_quantile(&h, 0), x[0]);
    ck_assert_double_eq(sim_hist_quantile(&h, 1), x[n - 1]);
    sim_hist_fini(&h);
    free(x);
    gsl_rng_free(r);
}
END_TEST

START_TEST(test_weighted)
{
    sim_hist a, b;
    ck_assert_int_eq(sim_hist_init_latency_ms(&a), SIM_OK);
    ck_assert_int_eq(sim_hist_init_latency_ms(&b), SIM_OK);
    /* A run of 500 records with one latency is one call, worth 500 single adds. */
    static const struct {
        double x;
        int w;
    } runs[] = {{3.5, 500}, {12, 3}, {250, 40}, {0.5, 1}, {40, 77}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        sim_hist_add(&a, runs[i].x, runs[i].w);
        for (int k = 0; k < runs[i].w; k++)
            sim_hist_add(&b, runs[i].x, 1);
    }
    assert_same(&a, &b);
    ck_assert_double_eq_tol(sim_hist_mean(&a), sim_hist_mean(&b), 1e-9);
    for (double q = 0.05; q < 1; q += 0.05)
        ck_assert_double_eq_tol(sim_hist_quantile(&a, q), sim_hist_quantile(&b, q), 1e-9);
    /* The weights move the median: 500 of 621 records took 3.5 ms. */
    ck_assert_double_eq_tol(sim_hist_quantile(&a, 0.5), 3.5, bin_width_at(&a, 3.5));
    sim_hist_fini(&a);
    sim_hist_fini(&b);
}
END_TEST

START_TEST(test_merge)
{
    sim_hist all, even, odd;
    ck_assert_int_eq(sim_hist_init_latency_ms(&all), SIM_OK);
    ck_assert_int_eq(sim_hist_init_latency_ms(&even), SIM_OK);
    ck_assert_int_eq(sim_hist_init_latency_ms(&odd), SIM_OK);
    for (int i = 1; i <= 2000; i++) {
        double x = 0.1 * i * i;
        sim_hist_add(&all, x, i % 7 + 1);
        sim_hist_add(i % 2 ? &odd : &even, x, i % 7 + 1);
    }
    sim_hist_merge(&even, &odd);
    assert_same(&even, &all);
    ck_assert_double_eq_tol(sim_hist_quantile(&even, 0.9), sim_hist_quantile(&all, 0.9), 1e-9);

    /* Merging an empty histogram changes nothing, and into an empty one copies. */
    sim_hist empty;
    ck_assert_int_eq(sim_hist_init_latency_ms(&empty), SIM_OK);
    sim_hist_merge(&all, &empty);
    assert_same(&even, &all);
    sim_hist_merge(&empty, &all);
    assert_same(&empty, &all);
    sim_hist_fini(&empty);
    sim_hist_fini(&all);
    sim_hist_fini(&even);
    sim_hist_fini(&odd);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------- */

START_TEST(test_empty)
{
    sim_hist h;
    ck_assert_int_eq(sim_hist_init_latency_ms(&h), SIM_OK);
    ck_assert_double_eq(h.weight, 0);
    ck_assert_double_eq(sim_hist_mean(&h), 0);
    ck_assert_double_eq(sim_hist_quantile(&h, 0), 0);
    ck_assert_double_eq(sim_hist_quantile(&h, 0.5), 0);
    ck_assert_double_eq(sim_hist_quantile(&h, 1), 0);
    sim_hist_fini(&h);
}
END_TEST

START_TEST(test_out_of_range)
{
    sim_hist h;
    ck_assert_int_eq(sim_hist_init(&h, 1, 100, 10), SIM_OK);
    size_t last = sim_hist_bins(&h) - 1;
    double lo, hi, w;

    /* Above hi: counted in the last bin, and still the exact maximum. */
    sim_hist_add(&h, 1e6, 2);
    sim_hist_bin(&h, last, &lo, &hi, &w);
    ck_assert_double_eq(w, 2);
    ck_assert_double_eq(sim_hist_quantile(&h, 0.5), 1e6); /* clamped to [min, max] */
    ck_assert_double_eq(sim_hist_quantile(&h, 1), 1e6);
    sim_hist_add(&h, 100, 1); /* hi itself is past the half-open last bin */
    sim_hist_bin(&h, last, &lo, &hi, &w);
    ck_assert_double_eq(w, 3);

    /* Below lo: bin 0; negative values count as 0. */
    sim_hist_add(&h, 0.5, 1);
    sim_hist_add(&h, -3, 1);
    sim_hist_bin(&h, 0, &lo, &hi, &w);
    ck_assert_double_eq(w, 2);
    ck_assert_double_eq(h.min, 0);
    ck_assert_double_eq(sim_hist_quantile(&h, 0), 0);
    ck_assert_double_eq(h.weight, 5);
    ck_assert_double_eq(h.sum, 2e6 + 100 + 0.5);
    sim_hist_fini(&h);
}
END_TEST

START_TEST(test_merge_mismatch)
{
    sim_hist a, b;
    ck_assert_int_eq(sim_hist_init(&a, 1, 100, 10), SIM_OK);
    ck_assert_int_eq(sim_hist_init(&b, 1, 100, 20), SIM_OK);
    sim_hist_merge(&a, &b); /* a bug: asserted */
}
END_TEST

/* ---- bin choice ------------------------------------------------------------------- */

/* Layouts for the bin-choice test: the latency layout, coarse and fine ones, one whose
 * decades do not divide, one with subnormal edges, one whose lo and hi share a table
 * cell (no table), and one too fine for a table (the log10 fallback). */
static const struct {
    double lo, hi;
    unsigned per_decade;
    int table; /* 1: expect a cell table; 0: expect none */
} bin_layouts[] = {
    {0.01, 400.0 * 86400e3, 100, 1}, {1, 50, 10, 1},       {0.01, 1000, 10, 1},
    {1e-3, 1e3, 1000, 1},            {3, 7e5, 1, 1},       {1e-310, 1e-300, 10, 1},
    {1, 1.01, 100, 0},               {1e-100, 1e100, 1000, 0},
};

/* The bin GSL picks for x under sim_hist_add's rules: negative counts as 0, values at
 * or above hi go to the last bin. */
static size_t gsl_bin(const sim_hist *h, double x)
{
    if (x < 0)
        x = 0;
    if (x >= h->hi)
        return h->h->n - 1;
    size_t i;
    CHECK(gsl_histogram_find(h->h, x, &i) == 0, "gsl_histogram_find refused %.17g", x);
    return i;
}

/* Adds x with weight 1 and checks that exactly the expected bin gained it: bins hold
 * small integers, exact in doubles, and the total grows by 1, so no other bin moved. */
static void check_bin(sim_hist *h, double x)
{
    size_t want = gsl_bin(h, x);
    double before = h->h->bin[want], total = h->weight;
    sim_hist_add(h, x, 1);
    CHECK(h->h->bin[want] == before + 1, "x = %.17g (bits %016llx) missed bin %zu", x,
          (unsigned long long)double_bits(x), want);
    CHECK(h->weight == total + 1, "weight");
}

static double from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

START_TEST(test_bin_choice)
{
    sim_hist h;
    ck_assert_int_eq(sim_hist_init(&h, bin_layouts[_i].lo, bin_layouts[_i].hi,
                                   bin_layouts[_i].per_decade),
                     SIM_OK);
    ck_assert_int_eq(h.cell_bin != NULL, bin_layouts[_i].table);
    const gsl_histogram *g = h.h;

    /* The table itself: each cell's entry is the bin of the cell's first value, not
     * one below (which would only cost a step) nor one above (a wrong bin). */
    for (size_t c = 0; c < h.cells; c++) {
        double start = from_bits((h.cell_base + c) << h.cell_shift);
        size_t want = start < h.lo ? 0 : gsl_bin(&h, start);
        CHECK(h.cell_bin[c] == want, "cell %zu (from %.17g): bin %u, want %zu", c, start,
              (unsigned)h.cell_bin[c], want);
    }

    /* Every edge, and the doubles either side of it. */
    for (size_t k = 0; k <= g->n; k++) {
        check_bin(&h, g->range[k]);
        check_bin(&h, nextafter(g->range[k], -INFINITY));
        check_bin(&h, nextafter(g->range[k], INFINITY));
    }
    /* Every cell boundary (the first double of each cell, and the last of the one
     * before), up to hi's cell and just past it. */
    for (size_t c = 0; c <= h.cells + 1 && h.cells > 0; c++) {
        uint64_t b = (h.cell_base + c) << h.cell_shift;
        check_bin(&h, from_bits(b));
        if (b > 0) /* bits 0 are +0.0; one below would be a NaN */
            check_bin(&h, from_bits(b - 1));
        check_bin(&h, from_bits(b + 1));
    }
    /* Random values spread evenly over the logarithm, from five decades below lo to
     * five above hi. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 2024);
    double l0 = log(h.lo) - 5 * log(10), l1 = log(h.hi) + 5 * log(10);
    for (int n = 0; n < 200000; n++)
        check_bin(&h, exp(gsl_ran_flat(r, l0, l1)));
    gsl_rng_free(r);
    /* The ends. */
    static const double ends[] = {0.0, -0.0, -1.0, -INFINITY, DBL_MIN, 1e-320, INFINITY,
                                  DBL_MAX};
    for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++)
        check_bin(&h, ends[k]);
    check_bin(&h, h.lo);
    check_bin(&h, h.hi);
    check_bin(&h, h.hi * 10);
    sim_hist_fini(&h);
    ck_assert_ptr_null(h.cell_bin);
    sim_hist_fini(&h); /* idempotent */
}
END_TEST

/* ---- errors ----------------------------------------------------------------------- */

static const struct {
    double lo, hi;
    unsigned per_decade;
} bad_layouts[] = {
    {0, 100, 10}, {-1, 100, 10},     {10, 10, 10},
    {10, 1, 10},  {1, 100, 0},       {NAN, 100, 10},
    {1, NAN, 10}, {1, INFINITY, 10}, {1e-300, 1e300, 10000},
};

START_TEST(test_init_errors)
{
    sim_hist h;
    h.h = (gsl_histogram *)&h; /* garbage that must not survive */
    int rc = sim_hist_init(&h, bad_layouts[_i].lo, bad_layouts[_i].hi, bad_layouts[_i].per_decade);
    ck_assert_int_eq(rc, SIM_EINVAL);
    ck_assert_ptr_null(h.h);
    sim_hist_fini(&h);
}
END_TEST

/* ---- time series ------------------------------------------------------------------ */

START_TEST(test_series_sum_max)
{
    sim_series sum, max;
    sim_series_init(&sum, SIM_S(1), SIM_SERIES_SUM);
    sim_series_init(&max, SIM_S(1), SIM_SERIES_MAX);
    static const struct {
        sim_time t;
        double x;
    } pts[] = {{SIM_MS(500), 2},  {SIM_MS(700), 3}, {SIM_MS(999), 1},
               {SIM_S(2) + 1, 4}, {SIM_S(1), 0.5},  {SIM_S(1) - 1, 0.25}};
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        ck_assert_int_eq(sim_series_add(&sum, pts[i].t, pts[i].x), SIM_OK);
        ck_assert_int_eq(sim_series_add(&max, pts[i].t, pts[i].x), SIM_OK);
    }
    ck_assert_uint_eq(sum.n, 3);
    ck_assert_double_eq(sim_series_get(&sum, 0), 6.25);
    ck_assert_double_eq(sim_series_get(&sum, 1), 0.5); /* bucket edges: [1 s, 2 s) */
    ck_assert_double_eq(sim_series_get(&sum, 2), 4);
    ck_assert_double_eq(sim_series_get(&sum, 3), 0);
    ck_assert_double_eq(sim_series_get(&sum, 1000000), 0);
    ck_assert_double_eq(sim_series_max(&sum), 6.25);

    ck_assert_uint_eq(max.n, 3);
    ck_assert_double_eq(sim_series_get(&max, 0), 3);
    ck_assert_double_eq(sim_series_get(&max, 1), 0.5);
    ck_assert_double_eq(sim_series_get(&max, 2), 4);
    ck_assert_double_eq(sim_series_max(&max), 4);
    sim_series_fini(&sum);
    sim_series_fini(&max);
}
END_TEST

START_TEST(test_series_extend)
{
    sim_series s;
    sim_series_init(&s, SIM_MIN(1), SIM_SERIES_SUM);
    ck_assert_double_eq(sim_series_max(&s), 0);
    ck_assert_int_eq(sim_series_extend(&s, 0), SIM_OK);
    ck_assert_uint_eq(s.n, 0);
    ck_assert_int_eq(sim_series_extend(&s, SIM_MIN(10)), SIM_OK);
    ck_assert_uint_eq(s.n, 10);
    ck_assert_int_eq(sim_series_extend(&s, SIM_MIN(10) + 1), SIM_OK);
    ck_assert_uint_eq(s.n, 11); /* a partial last bucket counts */
    ck_assert_int_eq(sim_series_extend(&s, SIM_MIN(2)), SIM_OK);
    ck_assert_uint_eq(s.n, 11); /* never shrinks */
    for (size_t i = 0; i < s.n; i++)
        CHECK(sim_series_get(&s, i) == 0, "bucket %zu not empty", i);
    ck_assert_int_eq(sim_series_add(&s, SIM_MIN(3), 7), SIM_OK);
    ck_assert_uint_eq(s.n, 11);
    ck_assert_double_eq(sim_series_get(&s, 3), 7);
    sim_series_fini(&s);
    sim_series_fini(&s);
    sim_series_fini(NULL);
}
END_TEST

/* A day of per-second buckets filled in time order and then out of order: growth
 * keeps old values and zero-fills new buckets. */
START_TEST(test_series_growth)
{
    sim_series s;
    sim_series_init(&s, SIM_S(1), SIM_SERIES_SUM);
    const size_t n = 86400;
    sim_series_set_limit(&s, n); /* a day fits: nothing merges */
    size_t reallocs = 0;
    double *last = NULL;
    for (size_t i = 0; i < n; i += 3) {
        CHECK(sim_series_add(&s, SIM_S((int64_t)i) + SIM_MS(10), (double)i) == 0, "add failed");
        if (s.v != last) {
            reallocs++;
            last = s.v;
        }
    }
    ck_assert_uint_ge(s.cap, s.n);
    ck_assert_uint_le(reallocs, 20); /* geometric, not one per bucket */
    for (size_t i = 0; i < n; i++)
        CHECK(sim_series_get(&s, i) == (i % 3 ? 0 : (double)i), "bucket %zu", i);
    for (size_t i = n; i-- > 0;)
        CHECK(sim_series_add(&s, SIM_S((int64_t)i), 1) == SIM_OK, "add failed");
    for (size_t i = 0; i < n; i++)
        CHECK(sim_series_get(&s, i) == (i % 3 ? 0 : (double)i) + 1, "bucket %zu", i);
    sim_series_fini(&s);
}
END_TEST

/* The cached bucket at its edges: the last nanosecond of a bucket and the first of the
 * next, a step back into an earlier bucket, growth that moves the buckets, and a series
 * finished and started again. */
START_TEST(test_series_cache_edges)
{
    sim_series s;
    sim_series_init(&s, SIM_S(1), SIM_SERIES_SUM);
    sim_series_set_limit(&s, 100000);
    ck_assert_int_eq(sim_series_add(&s, 0, 1), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1) - 1, 2), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1), 4), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1) - 1, 8), SIM_OK); /* back a bucket */
    ck_assert_int_eq(sim_series_add(&s, SIM_S(2) - 1, 16), SIM_OK);
    ck_assert_double_eq(sim_series_get(&s, 0), 11);
    ck_assert_double_eq(sim_series_get(&s, 1), 20);
    /* Growth reallocates the buckets; the cached one (bucket 1) keeps its value. */
    ck_assert_int_eq(sim_series_extend(&s, SIM_S(100000)), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1) + 5, 32), SIM_OK);
    ck_assert_double_eq(sim_series_get(&s, 1), 52);
    ck_assert_uint_eq(s.n, 100000);
    sim_series_fini(&s);
    sim_series_init(&s, SIM_S(1), SIM_SERIES_MAX);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1) + 5, 3), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_S(1) + 6, 1), SIM_OK);
    ck_assert_uint_eq(s.n, 2);
    ck_assert_double_eq(sim_series_get(&s, 0), 0);
    ck_assert_double_eq(sim_series_get(&s, 1), 3);
    sim_series_fini(&s);
}
END_TEST

START_TEST(test_series_too_long)
{
    sim_series s;
    sim_series_init(&s, 1, SIM_SERIES_MAX);
    sim_series_set_limit(&s, SIZE_MAX); /* never merge */
    ck_assert_int_eq(sim_series_add(&s, 999, 1), SIM_OK);
    /* 2^63 one-nanosecond buckets cannot be allocated: refused, series untouched. */
    ck_assert_int_eq(sim_series_add(&s, SIM_TIME_MAX, 1), SIM_ENOMEM);
    ck_assert_int_eq(sim_series_extend(&s, SIM_TIME_MAX), SIM_ENOMEM);
    ck_assert_uint_eq(s.n, 1000);
    ck_assert_double_eq(sim_series_get(&s, 999), 1);
    sim_series_fini(&s);
    /* With a limit the same add merges instead: bounded, and the values kept. */
    sim_series_init(&s, 1, SIM_SERIES_MAX);
    sim_series_set_limit(&s, 1024);
    ck_assert_int_eq(sim_series_add(&s, 999, 1), SIM_OK);
    ck_assert_int_eq(sim_series_add(&s, SIM_TIME_MAX, 2), SIM_OK);
    ck_assert_int_eq(sim_series_extend(&s, SIM_TIME_MAX), SIM_OK);
    ck_assert_uint_le(s.n, 1024);
    ck_assert_uint_le(s.cap, 2048);
    ck_assert_double_eq(sim_series_range(&s, 0, s.width), 1);
    ck_assert_double_eq(sim_series_max(&s), 2);
    sim_series_fini(&s);
    /* A limit that is not a power of two (a shard's: 2^21 buckets shared by 100 shards)
     * bounds the allocation too, not only the buckets in use: 20 days of minutes leave
     * at most 20,971 doubles allocated, not the 32,768 that doubling reaches. */
    sim_series_init(&s, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_set_limit(&s, 20971);
    for (int64_t m = 0; m < 20 * 1440; m++)
        ck_assert_int_eq(sim_series_add(&s, SIM_MIN(m), 1), SIM_OK);
    ck_assert_uint_le(s.n, 20971);
    ck_assert_uint_le(s.cap, 20971);
    ck_assert_double_eq(sim_series_range(&s, 0, SIM_DAY(20)), 20 * 1440);
    sim_series_fini(&s);
}
END_TEST

/* Seconds of a made-up trace: a pattern with one spike, added in time order, several
 * adds a second. */
static double trace_value(size_t i)
{
    return i == 37 ? 500 : (double)((i * 7) % 13 + 1);
}

/* Past its limit a SUM series merges pairs: 100 s under a limit of 8 end as buckets of
 * 16 s, each the sum of its seconds, the total kept, and the 500 of second 37 still
 * its peak, with where it was, though no bucket holds it alone any more. */
START_TEST(test_series_merge_sum)
{
    sim_series s;
    sim_series_init(&s, SIM_S(1), SIM_SERIES_SUM);
    sim_series_set_limit(&s, 8);
    double total = 0;
    for (size_t i = 0; i < 100; i++)
        for (int k = 0; k < 4; k++) {
            ck_assert_int_eq(sim_series_add(&s, SIM_S((int64_t)i) + SIM_MS(250 * k),
                                            trace_value(i) / 4),
                             SIM_OK);
            total += trace_value(i) / 4;
            ck_assert_uint_le(s.n, 8);
        }
    ck_assert_int_eq(sim_series_extend(&s, SIM_S(100)), SIM_OK);
    ck_assert_int_eq(s.width, SIM_S(16)); /* 99 / 8 >= 8, 99 / 16 < 8 */
    ck_assert_uint_eq(s.n, 7);
    for (size_t b = 0; b < 7; b++) {
        double want = 0;
        for (size_t i = 16 * b; i < 16 * b + 16 && i < 100; i++)
            want += trace_value(i);
        ck_assert_double_eq(sim_series_get(&s, b), want);
    }
    ck_assert_double_eq(sim_series_range(&s, 0, SIM_S(112)), total);
    ck_assert_double_eq(sim_series_range(&s, SIM_S(16), SIM_S(32)),
                        sim_series_get(&s, 1));
    sim_time at;
    ck_assert_double_eq(sim_series_peak(&s, &at), 500);
    ck_assert_int_eq(at, SIM_S(37));
    ck_assert_double_eq(sim_series_max(&s), 500);
    /* The second being filled is apart until an add leaves it; reads include it. */
    sim_time lo;
    double v;
    ck_assert(sim_series_open_bucket(&s, &lo, &v));
    ck_assert_int_eq(lo, SIM_S(99));
    ck_assert_double_eq(v, trace_value(99));
    ck_assert_int_eq(sim_series_add(&s, SIM_S(99) + 1, 600), SIM_OK);
    ck_assert_double_eq(sim_series_max(&s), 600 + trace_value(99));
    ck_assert_int_eq(sim_series_flush(&s), SIM_OK);
    ck_assert(!sim_series_open_bucket(&s, &lo, &v));
    ck_assert_double_eq(sim_series_peak(&s, &at), 600 + trace_value(99));
    ck_assert_int_eq(at, SIM_S(99));
    sim_series_fini(&s);
}
END_TEST

/* A warm-up left out: 100 s of the trace, whose 500 at second 37 is before `since`
 * (50 s), and a 40 at second 70 after it. Merged under a limit of 8 (buckets of 16 s),
 * no bucket says what the busiest second from 50 s on was; the series kept it apart,
 * and answers as the same series unmerged does: 40 at 70 s, not the whole run's 500,
 * nor a merged bucket's mean. While the last second is open it counts as well. */
START_TEST(test_series_peak_since)
{
    for (int merge = 0; merge < 2; merge++) {
        sim_series s;
        sim_series_init(&s, SIM_S(1), SIM_SERIES_SUM);
        sim_series_set_limit(&s, merge ? 8 : 1000);
        sim_series_keep_peak_since(&s, SIM_S(50));
        for (size_t i = 0; i < 100; i++)
            for (int k = 0; k < 2; k++)
                ck_assert_int_eq(sim_series_add(&s, SIM_S((int64_t)i) + SIM_MS(500 * k),
                                                (i == 70 ? 40 : trace_value(i)) / 2),
                                 SIM_OK);
        ck_assert_int_eq(s.width != s.base, merge);
        sim_time at;
        ck_assert_double_eq(sim_series_peak_since(&s, SIM_S(50), &at), 40);
        ck_assert_int_eq(at, SIM_S(70));
        ck_assert_double_eq(sim_series_peak_since(&s, 0, &at), 500);
        ck_assert_int_eq(at, SIM_S(37));
        /* The open second (99) becomes the busiest; a flush keeps it so. */
        ck_assert_int_eq(sim_series_add(&s, SIM_S(99) + 1, 100), SIM_OK);
        ck_assert_double_eq(sim_series_peak_since(&s, SIM_S(50), &at), 100 + trace_value(99));
        ck_assert_int_eq(at, SIM_S(99));
        ck_assert_int_eq(sim_series_flush(&s), SIM_OK);
        ck_assert_double_eq(sim_series_peak_since(&s, SIM_S(50), &at), 100 + trace_value(99));
        ck_assert_int_eq(at, SIM_S(99));
        sim_series_fini(&s);
    }
    /* Nothing from `since` on: 0, at `since`. */
    sim_series s;
    sim_series_init(&s, SIM_S(1), SIM_SERIES_MAX);
    sim_series_set_limit(&s, 2);
    sim_series_keep_peak_since(&s, SIM_S(10));
    ck_assert_int_eq(sim_series_add(&s, SIM_S(3), 7), SIM_OK);
    ck_assert_int_eq(sim_series_extend(&s, SIM_S(8)), SIM_OK);
    sim_time at;
    ck_assert_double_eq(sim_series_peak_since(&s, SIM_S(10), &at), 0);
    ck_assert_int_eq(at, SIM_S(10));
    sim_series_fini(&s);
}
END_TEST

/* A limit lowered on a series in use: it merges down to it at once, gives back the
 * memory past it, and keeps its sums and its peak; adds go on from there. */
START_TEST(test_series_lower_limit)
{
    sim_series s;
    sim_series_init(&s, SIM_S(1), SIM_SERIES_SUM);
    double total = 0;
    for (size_t i = 0; i < 100; i++) {
        ck_assert_int_eq(sim_series_add(&s, SIM_S((int64_t)i), trace_value(i)), SIM_OK);
        total += trace_value(i);
    }
    ck_assert_int_eq(s.width, SIM_S(1));
    ck_assert_uint_ge(s.cap, 100);
    sim_series_set_limit(&s, 16);
    ck_assert_int_eq(s.width, SIM_S(8)); /* 100 buckets -> 50 -> 25 -> 13 */
    ck_assert_uint_le(s.n, 16);
    ck_assert_uint_le(s.cap, 16);
    ck_assert_double_eq(sim_series_range(&s, 0, SIM_S(104)), total);
    sim_time at;
    ck_assert_double_eq(sim_series_peak(&s, &at), 500);
    ck_assert_int_eq(at, SIM_S(37));
    ck_assert_int_eq(sim_series_add(&s, SIM_S(100), 7), SIM_OK);
    ck_assert_double_eq(sim_series_range(&s, 0, SIM_S(104)), total + 7);
    ck_assert_uint_le(s.n, 16);
    sim_series_fini(&s);
}
END_TEST

/* A MAX series merges to maxima, and its peak is exact whatever the order of adds. */
START_TEST(test_series_merge_max)
{
    sim_series s;
    sim_series_init(&s, SIM_MIN(1), SIM_SERIES_MAX);
    sim_series_set_limit(&s, 4);
    static const size_t order[] = {3, 1, 9, 0, 12, 5, 2, 11, 7};
    for (size_t k = 0; k < sizeof order / sizeof *order; k++)
        ck_assert_int_eq(sim_series_add(&s, SIM_MIN((int64_t)order[k]), (double)(order[k] * 10)),
                         SIM_OK);
    ck_assert_int_eq(s.width, SIM_MIN(4)); /* minute 12 / 4 = 3 < 4 */
    ck_assert_double_eq(sim_series_get(&s, 0), 30);
    ck_assert_double_eq(sim_series_get(&s, 1), 70);
    ck_assert_double_eq(sim_series_get(&s, 2), 110);
    ck_assert_double_eq(sim_series_get(&s, 3), 120);
    ck_assert_double_eq(sim_series_max(&s), 120);
    ck_assert_double_eq(sim_series_range(&s, SIM_MIN(4), SIM_MIN(12)), 110);
    sim_series_fini(&s);
}
END_TEST

/* Seconds feeding minutes: the minutes are the exact sums of their seconds whether the
 * seconds merge (limit 16: buckets of 64 s and more, which no minute lines up with) or
 * not, once the seconds are flushed; and a flushed series that never merged feeds no
 * second time. */
START_TEST(test_series_feed)
{
    for (int merge = 0; merge < 2; merge++) {
        sim_series sec, min;
        sim_series_init(&sec, SIM_S(1), SIM_SERIES_SUM);
        sim_series_init(&min, SIM_MIN(1), SIM_SERIES_SUM);
        sim_series_set_limit(&sec, merge ? 16 : 1000);
        sim_series_feed(&sec, &min);
        for (size_t i = 0; i < 600; i++)
            ck_assert_int_eq(sim_series_add(&sec, SIM_S((int64_t)i), trace_value(i)), SIM_OK);
        ck_assert_int_eq(sim_series_flush(&sec), SIM_OK);
        ck_assert_int_eq(sec.width != sec.base, merge);
        ck_assert_uint_eq(min.n, 10);
        for (size_t m = 0; m < 10; m++) {
            double want = 0;
            for (size_t i = 60 * m; i < 60 * m + 60; i++)
                want += trace_value(i);
            ck_assert_double_eq(sim_series_get(&min, m), want);
        }
        ck_assert_int_eq(sim_series_flush(&sec), SIM_OK);
        ck_assert_double_eq(sim_series_range(&min, 0, SIM_MIN(10)),
                            sim_series_range(&sec, 0, SIM_MIN(11)));
        ck_assert_double_eq(sim_series_max(&sec), 500);
        sim_series_fini(&sec);
        sim_series_fini(&min);
    }
}
END_TEST

static Suite *stats_suite(void)
{
    Suite *s = suite_create("sim_stats");

    TCase *core = tcase_create("core");
    tcase_add_test(core, test_layout);
    tcase_add_test(core, test_quantiles_known);
    tcase_add_test(core, test_quantiles_lognormal);
    tcase_add_test(core, test_weighted);
    tcase_add_test(core, test_merge);
    tcase_add_test(core, test_series_sum_max);
    tcase_add_test(core, test_series_extend);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_empty);
    tcase_add_test(limits, test_out_of_range);
    tcase_add_test(limits, test_series_growth);
    tcase_add_test(limits, test_series_too_long);
    tcase_add_test(limits, test_series_cache_edges);
    tcase_add_test(limits, test_series_merge_sum);
    tcase_add_test(limits, test_series_merge_max);
    tcase_add_test(limits, test_series_lower_limit);
    tcase_add_test(limits, test_series_peak_since);
    tcase_add_test(limits, test_series_feed);
    suite_add_tcase(s, limits);

    TCase *bins = tcase_create("bins");
    tcase_add_loop_test(bins, test_bin_choice, 0,
                        (int)(sizeof bin_layouts / sizeof bin_layouts[0]));
    tcase_set_timeout(bins, 60);
    suite_add_tcase(s, bins);

    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_init_errors, 0,
                        (int)(sizeof bad_layouts / sizeof bad_layouts[0]));
    tcase_add_test_raise_signal(errors, test_merge_mismatch, SIGABRT);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(stats_suite());
}
