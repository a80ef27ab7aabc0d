/* sim_stats.c - latency histograms and time series of sim_stats.h.
 *
 * The histogram's bins come from GSL (gsl_histogram with explicit log-spaced ranges);
 * this file adds the exact total, sum, minimum and maximum that GSL does not keep, the
 * table that finds a value's bin without a search, and the quantile inversion. Time
 * series are growable arrays of doubles with a bucket limit, past which neighbouring
 * buckets merge (the width doubles) and the finest peak is kept apart.
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

static double bits_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Fill cb, the table of `cells` cells of `shift` from lo's cell `base`, for the ranges
 * of g; false if some cell's values span more than its first bin and the next (two
 * edges inside it), which sim_hist_add's single step would not cover. */
static bool fill_cells(const gsl_histogram *g, uint64_t base, size_t cells, unsigned shift,
                       uint32_t *cb)
{
    /* Cells and bins both ascend, so one merge-like walk fills the table. lo's cell
     * starts at or below lo: its first bin is then [0, lo), and the step in
     * sim_hist_add moves values at or above lo on. */
    size_t b = 0;
    for (size_t c = 0; c < cells; c++) {
        double v = bits_double((base + c) << shift);
        while (b < g->n - 1 && v >= g->range[b + 1])
            b++;
        cb[c] = (uint32_t)b;
        /* The edge two bins on must not lie below the next cell's start (the last bin
         * has no such edge). */
        if (b + 2 <= g->n && g->range[b + 2] < bits_double((base + c + 1) << shift))
            return false;
    }
    return true;
}

/* Build h->cell_bin for the ranges of h->h, or leave it NULL (no cells) when the table
 * would be too big. Returns 0 or SIM_ENOMEM. */
static int build_cells(sim_hist *h, unsigned per_decade)
{
    const gsl_histogram *g = h->h;
    /* Keep enough mantissa bits that a cell (relative width at most 2^-m) is narrower
     * than a log bin (relative width 10^(1/per_decade) - 1): then a value is at most
     * one step from its cell's first bin. Narrower cells would only cost memory, but
     * are needed where that width is not relative (subnormal values, whose bits count
     * in fixed steps) or rounding puts two edges in a cell: the cells halve until no
     * cell holds two, so that sim_hist_add's step needs no loop. */
    double bin_rel = pow(10.0, 1.0 / per_decade) - 1.0;
    unsigned m = 0;
    while (m < 52 && ldexp(1.0, -(int)m) >= bin_rel)
        m++;
    for (; m <= 52; m++) {
        unsigned shift = 52 - m;
        uint64_t base = double_bits(h->lo) >> shift;
        uint64_t end = double_bits(h->hi) >> shift; /* hi's cell: not in the table */
        if (end - base > MAX_CELLS || end == base) /* too fine, or no cell below hi's */
            return SIM_OK;
        size_t cells = (size_t)(end - base);
        uint32_t *cb = malloc(cells * sizeof *cb);
        if (!cb)
            return SIM_ENOMEM;
        if (fill_cells(g, base, cells, shift, cb)) {
            h->cell_bin = cb;
            h->cells = cells;
            h->cell_base = base;
            h->cell_shift = shift;
            return SIM_OK;
        }
        free(cb);
    }
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
    s->base = width;
    s->kind = kind;
    s->v = NULL;
    s->n = 0;
    s->cap = 0;
    s->limit = SIM_SERIES_LIMIT;
    s->cur = NULL;
    s->cur_lo = INT64_MIN; /* no bucket cached yet */
    s->fine = 0;
    s->peak = 0;
    s->peak_lo = -1;
    s->since = 0;
    s->since_peak = 0;
    s->since_lo = -1;
    s->next = NULL;
    s->next_failed = false;
}

void sim_series_feed(sim_series *s, sim_series *next)
{
    SIM_ASSERT(s->n == 0 && next->kind == s->kind && next->base % s->base == 0);
    s->next = next;
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

static bool merged(const sim_series *s)
{
    return s->width != s->base;
}

/* Combine x into *dst by the series' kind. Buckets start at 0, so a MAX bucket holds
 * max(0, values): the quantities recorded (rates, backlogs, ages) are never negative. */
static void combine(const sim_series *s, double *dst, double x)
{
    if (s->kind == SIM_SERIES_SUM)
        *dst += x;
    else if (x > *dst)
        *dst = x;
}

/* Reallocate the buckets to `ncap` (>= n), zero-filling any growth. On failure the
 * series is unchanged. */
static int resize(sim_series *s, size_t ncap)
{
    if (ncap > SIZE_MAX / sizeof(double))
        return SIM_ENOMEM;
    /* A cached bucket in v moves with the rest: its index, taken while s->v is valid. */
    bool in_v = s->cur_lo != INT64_MIN && !merged(s);
    size_t cur = in_v ? (size_t)(s->cur - s->v) : 0;
    double *nv = realloc(s->v, ncap * sizeof *nv);
    if (!nv)
        return SIM_ENOMEM;
    if (ncap > s->cap)
        memset(nv + s->cap, 0, (ncap - s->cap) * sizeof *nv);
    if (in_v)
        s->cur = nv + cur;
    s->v = nv;
    s->cap = ncap;
    return SIM_OK;
}

/* Make room for `need` buckets, zero-filled. Doubling keeps appends amortised O(1). */
static int reserve(sim_series *s, size_t need)
{
    if (need <= s->cap)
        return SIM_OK;
    size_t ncap = s->cap ? s->cap : 64;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    /* Never past the limit (no index reaches it): a limit that is not a power of two
     * would otherwise leave up to half the allocation unused, and zeroed. */
    if (ncap > s->limit && need <= s->limit)
        ncap = s->limit;
    return resize(s, ncap);
}

void sim_series_keep_peak_since(sim_series *s, sim_time since)
{
    SIM_ASSERT(since > 0 && s->n == 0);
    s->since = since;
}

/* Note a base bucket's final value in the peaks: the first of equal values stays. */
static void note_peak(sim_series *s, double v, sim_time lo)
{
    if (s->peak_lo < 0 || v > s->peak) {
        s->peak = v;
        s->peak_lo = lo;
    }
    if (s->since > 0 && lo >= s->since && (s->since_lo < 0 || v > s->since_peak)) {
        s->since_peak = v;
        s->since_lo = lo;
    }
}

/* A base bucket is final: hand it to next. An allocation failure there is kept for
 * sim_series_flush() to report (the add that caused it went through). */
static void feed(sim_series *s, double v, sim_time lo)
{
    if (s->next && v != 0 && sim_series_add(s->next, lo, v) != SIM_OK)
        s->next_failed = true;
}

/* Fold a merged series' open base bucket into its coarse bucket; drop the cache. */
static void fold(sim_series *s)
{
    if (s->cur_lo != INT64_MIN && merged(s)) {
        combine(s, &s->v[(size_t)(s->cur_lo / s->width)], s->fine);
        note_peak(s, s->fine, s->cur_lo);
        feed(s, s->fine, s->cur_lo);
    }
    s->cur_lo = INT64_MIN;
}

/* Merge neighbouring pairs: the width doubles, the buckets halve. The first merge takes
 * the peak from the base buckets, which are about to go. */
static void merge_pairs(sim_series *s)
{
    fold(s);
    if (!merged(s))
        for (size_t i = 0; i < s->n; i++) {
            note_peak(s, s->v[i], (sim_time)i * s->base);
            feed(s, s->v[i], (sim_time)i * s->base);
        }
    size_t m = (s->n + 1) / 2;
    for (size_t j = 0; j < m; j++) {
        double x = s->v[2 * j];
        if (2 * j + 1 < s->n)
            combine(s, &x, s->v[2 * j + 1]);
        s->v[j] = x;
    }
    if (s->n > m)
        memset(s->v + m, 0, (s->n - m) * sizeof *s->v);
    s->n = m;
    s->width *= 2;
}

/* The bucket index of t, merging until it is below the limit; SIZE_MAX if it cannot be
 * represented (a width past INT64_MAX / 2 covers any sim_time, so merging ends). */
static size_t index_within_limit(sim_series *s, sim_time t)
{
    while ((uint64_t)(t / s->width) >= s->limit && s->width <= INT64_MAX / 2)
        merge_pairs(s);
    uint64_t i = (uint64_t)(t / s->width);
    return i >= SIZE_MAX ? SIZE_MAX : (size_t)i;
}

void sim_series_set_limit(sim_series *s, size_t limit)
{
    SIM_ASSERT(limit >= 1);
    s->limit = limit;
    /* A lower limit on a series in use: merge down to it, and give back what is past. */
    while (s->n > limit)
        merge_pairs(s);
    if (s->cap > limit)
        (void)resize(s, limit); /* a failed shrink keeps the larger block, still valid */
}

int sim__series_add_slow(sim_series *s, sim_time t, double x)
{
    SIM_ASSERT(t >= 0);
    /* sim_series_add handled the cached base bucket: this is another one. */
    fold(s);
    size_t i = index_within_limit(s, t);
    if (i == SIZE_MAX)
        return SIM_ENOMEM;
    int rc = reserve(s, i + 1);
    if (rc)
        return rc;
    if (i >= s->n)
        s->n = i + 1;
    if (!merged(s)) {
        s->cur = &s->v[i];
        s->cur_lo = (sim_time)i * s->width;
        combine(s, s->cur, x);
        return SIM_OK;
    }
    /* Merged: the base bucket of t is held apart until an add leaves it. */
    s->cur_lo = t - t % s->base;
    s->cur = &s->fine;
    s->fine = 0;
    combine(s, &s->fine, x);
    return SIM_OK;
}

int sim_series_extend(sim_series *s, sim_time end)
{
    SIM_ASSERT(end >= 0);
    if (end == 0)
        return SIM_OK;
    size_t last = index_within_limit(s, end - 1); /* a partial last bucket still counts */
    if (last == SIZE_MAX)
        return SIM_ENOMEM;
    int rc = reserve(s, last + 1);
    if (rc)
        return rc;
    if (last + 1 > s->n)
        s->n = last + 1;
    return SIM_OK;
}

int sim_series_flush(sim_series *s)
{
    fold(s);
    if (!merged(s)) {
        for (size_t i = 0; i < s->n; i++)
            feed(s, s->v[i], (sim_time)i * s->base);
        s->next = NULL; /* every base bucket has gone: feeding again would repeat them */
    }
    bool failed = s->next_failed;
    s->next_failed = false;
    return failed ? SIM_ENOMEM : SIM_OK;
}

double sim_series_get(const sim_series *s, size_t i)
{
    double v = i < s->n ? s->v[i] : 0.0;
    if (merged(s) && s->cur_lo != INT64_MIN && (size_t)(s->cur_lo / s->width) == i)
        combine(s, &v, s->fine);
    return v;
}

double sim_series_range(const sim_series *s, sim_time t0, sim_time t1)
{
    SIM_ASSERT(t0 >= 0);
    double v = 0;
    for (size_t i = (size_t)((t0 + s->width - 1) / s->width);
         i < s->n && (sim_time)i * s->width < t1; i++)
        combine(s, &v, sim_series_get(s, i));
    return v;
}

sim_time sim_series_widest(const sim_series *const *s, size_t n)
{
    sim_time w = 0;
    for (size_t i = 0; i < n; i++) {
        SIM_ASSERT(i == 0 || s[i]->base == s[0]->base);
        w = s[i]->width > w ? s[i]->width : w;
    }
    return w;
}

sim_time sim_series_end(const sim_series *s)
{
    return (sim_time)s->n * s->width;
}

/* The largest base bucket starting at or after `from`, and where it starts (`from` when
 * there is none; the first of equal values): read from the buckets while the series has
 * not merged; once merged, the kept value (kept_lo < 0: none yet) or the open bucket. */
static double best_since(const sim_series *s, sim_time from, double kept, sim_time kept_lo,
                         sim_time *lo)
{
    double m = 0;
    sim_time at = -1;
    if (!merged(s)) {
        for (size_t i = (size_t)((from + s->base - 1) / s->base); i < s->n; i++)
            if (at < 0 || s->v[i] > m) {
                m = s->v[i];
                at = (sim_time)i * s->base;
            }
    } else {
        if (kept_lo >= 0) {
            m = kept;
            at = kept_lo;
        }
        if (s->cur_lo != INT64_MIN && s->cur_lo >= from && (at < 0 || s->fine > m)) {
            m = s->fine;
            at = s->cur_lo;
        }
    }
    if (lo)
        *lo = at < 0 ? from : at;
    return m;
}

double sim_series_peak(const sim_series *s, sim_time *lo)
{
    return best_since(s, 0, s->peak, s->peak_lo, lo);
}

double sim_series_peak_since(const sim_series *s, sim_time since, sim_time *lo)
{
    SIM_ASSERT(since >= 0);
    if (since == 0)
        return sim_series_peak(s, lo);
    /* Only the time kept apart can be answered once the buckets have merged. */
    SIM_ASSERT(!merged(s) || since == s->since);
    return best_since(s, since, s->since_peak, s->since_lo, lo);
}

double sim_series_max(const sim_series *s)
{
    return sim_series_peak(s, NULL);
}

bool sim_series_open_bucket(const sim_series *s, sim_time *lo, double *v)
{
    if (!merged(s) || s->cur_lo == INT64_MIN)
        return false;
    *lo = s->cur_lo;
    *v = s->fine;
    return true;
}
