/* sim_stats.c - latency histograms and time series of sim_stats.h.
 *
 * The histogram's bins come from GSL (gsl_histogram with explicit log-spaced ranges);
 * this file adds the exact total, sum, minimum and maximum that GSL does not keep, the
 * table that finds a value's bin without a search, and the quantile inversion. Time
 * series are plain growable arrays of doubles.
 */
#include "sim_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

/* ---- histograms ------------------------------------------------------------------- */

/* Above ~100 decades x 10^4 bins something is wrong with the arguments, not the data. */
#define MAX_BINS 1000000

/* A cell table holds two or three cells per bin; beyond this (1 MiB, layouts of ~100k
 * bins, far finer than any report needs) the log10 estimate is cheaper in memory and
 * still exact. */
#define MAX_CELLS (1u << 18)

static uint64_t double_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Build h->cell_bin for the ranges of h->h, or leave it NULL (no cells) when the table
 * would be too big. Returns 0 or SIM_ENOMEM. */
static int build_cells(sim_hist *h, unsigned per_decade)
{
    const gsl_histogram *g = h->h;
    /* Keep enough mantissa bits that a cell (relative width at most 2^-m) is narrower
     * than a log bin (relative width 10^(1/per_decade) - 1): then a value is at most
     * one step from its cell's first bin. Narrower cells would only cost memory. */
    double bin_rel = pow(10.0, 1.0 / per_decade) - 1.0;
    unsigned m = 0;
    while (m < 52 && ldexp(1.0, -(int)m) >= bin_rel)
        m++;
    unsigned shift = 52 - m;
    uint64_t base = double_bits(h->lo) >> shift;
    uint64_t end = double_bits(h->hi) >> shift; /* hi's cell: not in the table */
    if (end - base > MAX_CELLS || end == base) /* too fine, or no cell below hi's */
        return SIM_OK;
    size_t cells = (size_t)(end - base);
    uint32_t *cb = malloc(cells * sizeof *cb);
    if (!cb)
        return SIM_ENOMEM;
    /* Cells and bins both ascend, so one merge-like walk fills the table. lo's cell
     * starts at or below lo: its first bin is then [0, lo), and the step in
     * sim_hist_add moves values at or above lo on. */
    size_t b = 0;
    for (size_t c = 0; c < cells; c++) {
        uint64_t start_bits = (base + c) << shift;
        double v;
        memcpy(&v, &start_bits, sizeof v);
        while (b < g->n - 1 && v >= g->range[b + 1])
            b++;
        cb[c] = (uint32_t)b;
    }
    h->cell_bin = cb;
    h->cells = cells;
    h->cell_base = base;
    h->cell_shift = shift;
    return SIM_OK;
}

int sim_hist_init(sim_hist *h, double lo, double hi, unsigned per_decade)
{
    h->h = NULL;
    h->cell_bin = NULL;
    h->cells = 0; /* every add takes the slow path until the table exists */
    h->cell_base = 0;
    h->cell_shift = 52;
    if (!(lo > 0) || !isfinite(lo) || !(hi > lo) || !isfinite(hi) || per_decade == 0)
        return SIM_EINVAL;
    /* The epsilon keeps an exact number of decades (0.01 .. 1e3) from gaining a
     * sliver of a bin through rounding in log10. */
    double nlog_d = ceil(log10(hi / lo) * per_decade - 1e-9);
    if (nlog_d < 1)
        nlog_d = 1;
    if (nlog_d >= MAX_BINS)
        return SIM_EINVAL;
    size_t nlog = (size_t)nlog_d;
    size_t nbins = nlog + 1; /* plus [0, lo) */

    double *range = malloc((nbins + 1) * sizeof *range);
    if (!range)
        return SIM_ENOMEM;
    range[0] = 0.0;
    range[1] = lo;
    for (size_t k = 1; k < nlog; k++)
        range[k + 1] = lo * pow(10.0, (double)k / per_decade);
    /* The last log bin ends at hi exactly, however the decades divide. */
    range[nbins] = hi;
    /* GSL does not check that the edges increase; rounding in pow could only break
     * that for absurd arguments, which are then refused. */
    for (size_t k = 0; k < nbins; k++) {
        if (!(range[k] < range[k + 1])) {
            free(range);
            return SIM_EINVAL;
        }
    }

    /* gsl_histogram_alloc reports failure through GSL's error handler, which aborts by
     * default; with a non-aborting handler it returns NULL, which we pass on. */
    gsl_histogram *g = gsl_histogram_alloc(nbins);
    if (!g) {
        free(range);
        return SIM_ENOMEM;
    }
    gsl_histogram_set_ranges(g, range, nbins + 1);
    free(range);

    h->h = g;
    h->lo = lo;
    h->hi = hi;
    h->per_decade = per_decade;
    h->weight = 0.0;
    h->sum = 0.0;
    h->min = INFINITY;
    h->max = -INFINITY;
    int rc = build_cells(h, per_decade);
    if (rc) {
        sim_hist_fini(h);
        return rc;
    }
    return SIM_OK;
}

int sim_hist_init_latency_ms(sim_hist *h)
{
    /* 10 us resolves in-region calls; 400 days is beyond the longest retention
     * (365 days), so no record's age overflows the last bin. */
    return sim_hist_init(h, 0.01, 400.0 * 86400.0 * 1000.0, 100);
}

void sim_hist_fini(sim_hist *h)
{
    if (!h)
        return;
    gsl_histogram_free(h->h); /* NULL-safe since GSL 1.x */
    h->h = NULL;
    free(h->cell_bin);
    h->cell_bin = NULL;
    h->cells = 0;
}

/* The bin of *x for sim_hist_add when the cell table does not cover it (see
 * sim_stats.h); clamps a negative *x to 0 and asserts it is not NaN. */
size_t sim__hist_bin_slow(const sim_hist *h, double *x)
{
    SIM_ASSERT(!isnan(*x));
    if (*x < 0)
        *x = 0;
    const gsl_histogram *g = h->h;
    if (*x < h->lo)
        return 0;
    if (*x >= h->hi)
        return g->n - 1;
    /* Values in hi's cell, or any value of a layout without a table: the bin is
     * estimated from the logarithm, then corrected against the exact GSL ranges, so
     * the result is still the bin GSL picks. */
    double k = floor(log10(*x / h->lo) * h->per_decade);
    size_t i = k < 0 ? 1 : (size_t)k + 1;
    if (i > g->n - 1)
        i = g->n - 1;
    while (i > 1 && *x < g->range[i])
        i--;
    while (i < g->n - 1 && *x >= g->range[i + 1])
        i++;
    return i;
}

void sim_hist_merge(sim_hist *dst, const sim_hist *src)
{
    SIM_ASSERT(gsl_histogram_equal_bins_p(dst->h, src->h));
    gsl_histogram_add(dst->h, src->h);
    dst->weight += src->weight;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

double sim_hist_mean(const sim_hist *h)
{
    return h->weight > 0 ? h->sum / h->weight : 0.0;
}

double sim_hist_quantile(const sim_hist *h, double q)
{
    if (!(h->weight > 0))
        return 0.0;
    if (q <= 0)
        return h->min;
    if (q >= 1)
        return h->max;
    /* The pdf is the normalised cumulative sum over the bins; sampling it at q is the
     * inverse CDF, linear within the bin. O(bins): fine for reports, not for the hot
     * path. */
    gsl_histogram_pdf *p = gsl_histogram_pdf_alloc(h->h->n);
    SIM_ASSERT(p != NULL);
    int rc = gsl_histogram_pdf_init(p, h->h);
    SIM_ASSERT(rc == 0); /* weights are positive by sim_hist_add's contract */
    double x = gsl_histogram_pdf_sample(p, q);
    gsl_histogram_pdf_free(p);
    if (x < h->min)
        x = h->min;
    if (x > h->max)
        x = h->max;
    return x;
}

size_t sim_hist_bins(const sim_hist *h)
{
    return gsl_histogram_bins(h->h);
}

void sim_hist_bin(const sim_hist *h, size_t i, double *lower, double *upper, double *weight)
{
    SIM_ASSERT(i < h->h->n);
    gsl_histogram_get_range(h->h, i, lower, upper);
    *weight = gsl_histogram_get(h->h, i);
}

/* ---- time series ------------------------------------------------------------------ */

void sim_series_init(sim_series *s, sim_time width, sim_series_kind kind)
{
    SIM_ASSERT(width > 0);
    s->width = width;
    s->kind = kind;
    s->v = NULL;
    s->n = 0;
    s->cap = 0;
    s->cur = NULL;
    s->cur_lo = INT64_MIN; /* no bucket cached yet */
}

void sim_series_fini(sim_series *s)
{
    if (!s)
        return;
    free(s->v);
    s->v = NULL;
    s->n = 0;
    s->cap = 0;
    s->cur_lo = INT64_MIN; /* the cached bucket is gone */
}

/* Make room for `need` buckets, zero-filled. Doubling keeps appends amortised O(1). */
static int reserve(sim_series *s, size_t need)
{
    if (need <= s->cap)
        return SIM_OK;
    size_t ncap = s->cap ? s->cap : 64;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > SIZE_MAX / sizeof(double))
        return SIM_ENOMEM;
    /* The cached bucket moves with the rest: its index, taken while s->v is valid. */
    size_t cur = s->cur_lo != INT64_MIN ? (size_t)(s->cur - s->v) : 0;
    double *nv = realloc(s->v, ncap * sizeof *nv);
    if (!nv)
        return SIM_ENOMEM;
    memset(nv + s->cap, 0, (ncap - s->cap) * sizeof *nv);
    if (s->cur_lo != INT64_MIN)
        s->cur = nv + cur;
    s->v = nv;
    s->cap = ncap;
    return SIM_OK;
}

int sim__series_add_slow(sim_series *s, sim_time t, double x)
{
    SIM_ASSERT(t >= 0);
    /* sim_series_add handled the cached bucket: this is another one. */
    uint64_t i64 = (uint64_t)(t / s->width);
    if (i64 >= SIZE_MAX)
        return SIM_ENOMEM;
    size_t i = (size_t)i64;
    int rc = reserve(s, i + 1);
    if (rc)
        return rc;
    s->cur = &s->v[i];
    s->cur_lo = (sim_time)i * s->width;
    /* Buckets start at 0, so a MAX bucket holds max(0, values): the quantities
     * recorded (rates, backlogs, ages) are never negative. */
    if (s->kind == SIM_SERIES_SUM)
        s->v[i] += x;
    else if (x > s->v[i])
        s->v[i] = x;
    if (i >= s->n)
        s->n = i + 1;
    return SIM_OK;
}

int sim_series_extend(sim_series *s, sim_time end)
{
    SIM_ASSERT(end >= 0);
    /* Ceiling without overflow: a partial last bucket still counts. */
    uint64_t need64 = (uint64_t)(end / s->width) + (end % s->width != 0);
    if (need64 >= SIZE_MAX)
        return SIM_ENOMEM;
    size_t need = (size_t)need64;
    int rc = reserve(s, need);
    if (rc)
        return rc;
    if (need > s->n)
        s->n = need;
    return SIM_OK;
}

double sim_series_get(const sim_series *s, size_t i)
{
    return i < s->n ? s->v[i] : 0.0;
}

double sim_series_max(const sim_series *s)
{
    if (s->n == 0)
        return 0.0;
    double m = s->v[0];
    for (size_t i = 1; i < s->n; i++)
        if (s->v[i] > m)
            m = s->v[i];
    return m;
}
