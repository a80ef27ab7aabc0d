/* sim_stats.h - statistics recorded during a run: latency histograms with percentiles
 * and fixed-width time series (per second, per minute).
 *
 * Histograms are GSL histograms over logarithmic bins, filled with weights so a run of
 * n records that share one latency is one call; percentiles invert the cumulative
 * distribution with GSL's histogram pdf (linear within a bin), clamped to the exact
 * minimum and maximum. Time series keep one double per bucket, summed or maximised.
 */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <gsl/gsl_histogram.h>

#include "sim.h"
#include "sim_err.h"

typedef struct sim_hist {
    gsl_histogram *h; /* owned; bins [0, lo) then log-spaced up to hi */
    double lo;        /* lower edge of the first log bin (value unit) */
    double hi;        /* upper edge; larger values land in the last bin */
    double per_decade;/* log bins per decade (the fallback bin estimate, without table) */
    /* A value's bin without a search: positive doubles order like their bit patterns,
     * so the top bits (exponent and a few mantissa bits) name a cell narrower than any
     * log bin; cell_bin[c] is the bin of cell c's smallest value, and sim_hist_add
     * steps at most one bin on from it against GSL's exact ranges (the cells are made
     * narrow enough for that). The cells run from lo's up to,
     * not including, hi's; anything else (below lo's cell, negative, from hi's cell on,
     * NaN) goes through sim__hist_bin_slow(). */
    uint32_t *cell_bin;  /* owned; NULL (and cells 0) for layouts too fine for a table */
    size_t cells;        /* cells in cell_bin */
    uint64_t cell_base;  /* the cell of lo: (bits of lo) >> cell_shift */
    unsigned cell_shift; /* 52 minus the mantissa bits a cell keeps */
    double weight;    /* total weight added */
    double sum;       /* sum of value * weight */
    double min;       /* smallest value added (+inf when empty) */
    double max;       /* largest value added (-inf when empty) */
} sim_hist;

/* Initialise a histogram for values in [0, hi] with `per_decade` log bins per decade
 * from `lo` (> 0) to `hi`, plus one bin [0, lo). Returns 0 or SIM_ENOMEM/SIM_EINVAL. */
int sim_hist_init(sim_hist *h, double lo, double hi, unsigned per_decade);

/* The default latency histogram: milliseconds from 0.01 ms to 400 days, 100 bins per
 * decade (relative bin width 2.3 %). */
int sim_hist_init_latency_ms(sim_hist *h);

/* Free the bins. NULL-safe; idempotent. */
void sim_hist_fini(sim_hist *h);

/* The bin of a value outside the cell table (below), which may clamp *x. */
size_t sim__hist_bin_slow(const sim_hist *h, double *x);

/* sim_hist_add() with the totals kept at the given addresses: h's own, or a run of
 * adds' locals (sim_hist_adds). */
static inline void sim__hist_add_to(const sim_hist *h, double x, double w, double *weight,
                                    double *sum, double *min, double *max)
{
    /* 0 < w <= DBL_MAX is w > 0 && isfinite(w) in two comparisons. */
    SIM_ASSERT(w > 0 && w <= DBL_MAX);
    const gsl_histogram *g = h->h;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* Unsigned: values below lo's cell (and negative ones, whose sign bit is set) wrap
     * to large indices, so one comparison checks both ends. */
    uint64_t c = (bits >> h->cell_shift) - h->cell_base;
    size_t i;
    if (c < h->cells) {
        i = h->cell_bin[c];
        /* The table's cells are narrow enough that x is in its cell's first bin or the
         * next (sim_hist_init checks every cell); that step is taken without a branch
         * (it goes either way at random, which a predictor cannot learn). x is below
         * hi's cell, so the last bin takes no step: range[n] is hi. */
        i += x >= g->range[i + 1];
    } else {
        double y = x; /* in memory on this path only: x can stay in a register */
        i = sim__hist_bin_slow(h, &y);
        x = y;
    }
    g->bin[i] += w;
    *weight += w;
    *sum += x * w;
    if (x < *min)
        *min = x;
    if (x > *max)
        *max = x;
}

/* Add value x (clamped at 0; not NaN) with weight w > 0, finite (for instance a run's
 * record count); bad arguments are bugs (asserted). GSL drops values outside its
 * range; ours land in the last bin instead, where the exact maximum still bounds the
 * quantiles. Otherwise the bin is the one gsl_histogram_find picks.
 * Inline: this is the hottest statistics call of a run, and a value inside the cell
 * table (nearly all of them) costs one lookup and a comparison or two; the rest goes
 * through sim__hist_bin_slow(). */
static inline void sim_hist_add(sim_hist *h, double x, double w)
{
    sim__hist_add_to(h, x, w, &h->weight, &h->sum, &h->min, &h->max);
}

/* Adds in a row to one histogram, for a caller with many at once (the slices of a
 * batch): sim_hist_adds_begin() copies the totals to locals, where they stay between
 * the adds instead of being loaded and stored by each (a store to a bin might be one
 * to them, for all the compiler knows), and sim_hist_adds_end() writes them back. Each
 * sim_hist_adds_add() is a sim_hist_add(), the same arithmetic in the same order; the
 * histogram is not to be used otherwise in between. */
typedef struct sim_hist_adds {
    sim_hist *h;
    double weight, sum, min, max; /* h's, as of the adds so far */
} sim_hist_adds;

static inline sim_hist_adds sim_hist_adds_begin(sim_hist *h)
{
    return (sim_hist_adds){h, h->weight, h->sum, h->min, h->max};
}

static inline void sim_hist_adds_add(sim_hist_adds *a, double x, double w)
{
    sim__hist_add_to(a->h, x, w, &a->weight, &a->sum, &a->min, &a->max);
}

static inline void sim_hist_adds_end(const sim_hist_adds *a)
{
    a->h->weight = a->weight;
    a->h->sum = a->sum;
    a->h->min = a->min;
    a->h->max = a->max;
}

/* Merge src into dst (same bin layout required: asserted). */
void sim_hist_merge(sim_hist *dst, const sim_hist *src);

/* Mean, or 0 when empty. */
double sim_hist_mean(const sim_hist *h);

/* The q-quantile, q in [0, 1]; 0 when empty. Exact at q = 0 and q = 1 (min, max);
 * otherwise within one bin width. */
double sim_hist_quantile(const sim_hist *h, double q);

/* Number of bins and the range and weight of bin i (for CDF plots). */
size_t sim_hist_bins(const sim_hist *h);
void sim_hist_bin(const sim_hist *h, size_t i, double *lower, double *upper, double *weight);

typedef enum {
    SIM_SERIES_SUM, /* bucket value = sum of the values added in it */
    SIM_SERIES_MAX  /* bucket value = maximum of the values added in it */
} sim_series_kind;

/* A series keeps at most `limit` buckets, so its memory is bounded by a constant, not by
 * the simulated time that has passed. An add or an extension that would need bucket
 * `limit` first merges neighbouring pairs and doubles the width (repeatedly if need be):
 * a long run's series is as fine as its limit allows, one width over its whole length,
 * every bucket aligned at 0. The largest base-width bucket survives the merges: while the
 * series is at its base width it is read from the buckets; once merged, the base bucket
 * being filled is held apart (`fine`) and folded into its coarse bucket when an add
 * lands in another base bucket, its value joining `peak` then. That peak is exact for a
 * MAX series, and for a SUM series whose adds come in time order (every series whose
 * peak kdsim reports); an add to a base bucket already folded lands in its coarse
 * bucket, and only the peak may then miss part of it.
 *
 * A series may feed another (`next`, of a wider base: seconds feeding minutes): each base
 * bucket is added to next at its start once final, that is when it is folded, at the
 * first merge (all of them), or at sim_series_flush(). Next then has the exact sums of
 * base buckets however far this series merges, for the price of one add per base bucket
 * instead of one per add. */
typedef struct sim_series {
    sim_time width;       /* bucket width in ns: base x 2^k after k merges */
    sim_time base;        /* the width given at initialisation (SIM_S(1), SIM_MIN(1)) */
    sim_series_kind kind; /* how values in one bucket combine */
    double *v;            /* owned; v[i] covers [i*width, (i+1)*width) */
    size_t n;             /* buckets in use (last touched + 1, or set by extend) */
    size_t cap;           /* buckets allocated (at most limit) */
    size_t limit;         /* most buckets kept (>= 1; SIM_SERIES_LIMIT unless set) */
    sim_time cur_lo;      /* the base bucket last added to covers [cur_lo, cur_lo + base): */
    double *cur;          /* ...its value (a cache: most adds land in the same bucket):
                           * in v while width == base, else `fine`; cur_lo is INT64_MIN
                           * when nothing is cached */
    double fine;          /* merged series: the value of the cached base bucket, not yet
                           * folded into v */
    double peak;          /* merged series: the largest base bucket folded, */
    sim_time peak_lo;     /* ...and where it starts (-1: none yet) */
    sim_time since;       /* merged series also keep the largest base bucket starting
                           * at or after this (a warm-up's end; 0: the peak above) */
    double since_peak;    /* ...its value */
    sim_time since_lo;    /* ...and where it starts (-1: none yet) */
    struct sim_series *next; /* fed with final base buckets (NULL: none); not owned */
    bool next_failed;        /* an add to next ran out of memory */
} sim_series;

/* The default bucket limit: 16,384 (11.4 days a minute, 4.5 hours a second). */
#define SIM_SERIES_LIMIT ((size_t)1 << 14)

/* Initialise an empty series with bucket width `width` ns (> 0). Never fails. */
void sim_series_init(sim_series *s, sim_time width, sim_series_kind kind);

/* Free the buckets. NULL-safe; idempotent. */
void sim_series_fini(sim_series *s);

/* Add x at time t (>= 0) into its bucket. Returns 0 or SIM_ENOMEM. Amortised O(1).
 * Inline: the common case (the bucket of the previous add) is a few instructions on the
 * hottest path of a run; any other bucket goes through sim__series_add_slow().
 * sim_series_add_sum() and sim_series_add_max() are the same for a caller that knows
 * the series' kind (asserted in debug builds), without testing it on every add. */
int sim__series_add_slow(sim_series *s, sim_time t, double x);

/* Whether t (>= 0) falls in the cached bucket. Unsigned: a time before cur_lo wraps to
 * a huge difference, so one comparison checks both ends; no time t >= 0 is within a
 * width of INT64_MIN, the nothing-cached mark. */
static inline bool sim__series_cached(const sim_series *s, sim_time t)
{
    SIM_DEBUG_ASSERT(t >= 0);
    return (uint64_t)t - (uint64_t)s->cur_lo < (uint64_t)s->base;
}

/* Whether t (>= 0) falls in the bucket the last add went to, which an add at t then
 * finds without a search (for a caller that can skip an add there that changes
 * nothing). */
static inline bool sim_series_in_bucket(const sim_series *s, sim_time t)
{
    return sim__series_cached(s, t);
}

/* sim_series_add() on a SIM_SERIES_SUM series: x is added to its bucket. */
static inline int sim_series_add_sum(sim_series *s, sim_time t, double x)
{
    SIM_DEBUG_ASSERT(s->kind == SIM_SERIES_SUM);
    if (sim__series_cached(s, t)) {
        *s->cur += x;
        return 0;
    }
    return sim__series_add_slow(s, t, x);
}

/* sim_series_add() on a SIM_SERIES_MAX series: its bucket keeps the largest x. */
static inline int sim_series_add_max(sim_series *s, sim_time t, double x)
{
    SIM_DEBUG_ASSERT(s->kind == SIM_SERIES_MAX);
    if (sim__series_cached(s, t)) {
        if (x > *s->cur)
            *s->cur = x;
        return 0;
    }
    return sim__series_add_slow(s, t, x);
}

/* Add x at t by the series' kind (the contract is above sim__series_add_slow). */
static inline int sim_series_add(sim_series *s, sim_time t, double x)
{
    return s->kind == SIM_SERIES_SUM ? sim_series_add_sum(s, t, x) : sim_series_add_max(s, t, x);
}

/* Set the bucket limit (>= 1). A series of many (one per shard) takes a smaller one than
 * the default so that their sum stays bounded; lowered on a series in use, the series
 * merges down to it (its peak kept) and gives back the memory past it. */
void sim_series_set_limit(sim_series *s, size_t limit);

/* Make the series cover [0, end): empty buckets read as 0, merging as the limit asks.
 * Returns 0 or SIM_ENOMEM. */
int sim_series_extend(sim_series *s, sim_time end);

/* Feed `next` (same kind, a base that is a multiple of s's) with s's final base buckets
 * (above sim_series). Set before the first add. */
void sim_series_feed(sim_series *s, sim_series *next);

/* Make every value final: fold a merged series' open base bucket into v (its value joins
 * the peak; a later add in that base bucket opens it afresh), and hand the base buckets
 * next has not had to it. After a flush of a series that never merged, next is no
 * longer fed. Returns 0 or SIM_ENOMEM (from next). */
int sim_series_flush(sim_series *s);

/* The value of bucket i (width s->width; 0 beyond the end). */
double sim_series_get(const sim_series *s, size_t i);

/* The buckets of [t0, t1) combined by kind (summed, or the maximum): exact when t0 and
 * t1 are multiples of s->width, as they are for any width the series has had or will
 * have (base x 2^k); otherwise every bucket that starts in [t0, t1) counts. */
double sim_series_range(const sim_series *s, sim_time t0, sim_time t1);

/* The widest bucket among n series of one base: the width at which sim_series_range()
 * reads each of them exactly, for a reader that joins them bucket by bucket. */
sim_time sim_series_widest(const sim_series *const *s, size_t n);

/* The end of the buckets in use, ns (n x width). */
sim_time sim_series_end(const sim_series *s);

/* The largest base-width bucket (0 when empty): exact while the series has not merged,
 * and after under the conditions above sim_series. */
double sim_series_max(const sim_series *s);

/* The same with where it starts, ns: the first such bucket (0 when empty). */
double sim_series_peak(const sim_series *s, sim_time *lo);

/* Keep, besides the peak, the largest base bucket that starts at or after `since`
 * (> 0), for a reader that leaves out a warm-up: once merged, no bucket of the series
 * says what the busiest base bucket after it was. Set before the first add. */
void sim_series_keep_peak_since(sim_series *s, sim_time since);

/* The largest base-width bucket that starts at or after `since`, with where it starts
 * (NULL lo: not wanted; `since` when there is none): read from the buckets while the
 * series has not merged; after, exact (under the conditions above sim_series) when
 * `since` is 0 or the time given to sim_series_keep_peak_since(), which a merged series
 * asks for (asserted). */
double sim_series_peak_since(const sim_series *s, sim_time since, sim_time *lo);

/* A merged series' base bucket still being filled: true with its start and value; false
 * when the series has not merged (every base bucket is in v) or none is open. */
bool sim_series_open_bucket(const sim_series *s, sim_time *lo, double *v);

#endif
