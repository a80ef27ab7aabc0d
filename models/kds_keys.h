/* kds_keys.h - partition-key distributions and how they spread records over shards.
 *
 * A producer's records carry partition keys drawn from a distribution: uniform over N
 * keys ("k-0" .. "k-<N-1>", the prefix a setting), Zipf over N keys, one fixed key (a
 * scraper bot's session), an ExplicitHashKey, or a fresh random key per record. What
 * the write path needs is each open shard's share of the records, so the shares are
 * computed once per topology (hashing the real key names with MD5 for up to
 * `exact_keys` keys, and by hash-range fraction beyond, since MD5 spreads keys evenly;
 * the hash keys kept for the rebuilds after a reshard, and one table shared by the
 * producers of one law) and each request's records are spread with one multinomial
 * draw over the shards, or,
 * when the request is smaller than the shard count, with per-record draws from an alias
 * table (design.md: "one multinomial draw over the shards' shares").
 *
 * The multinomial is drawn as conditional binomials. A binomial whose variance
 * n p (1 - p) is at least KDS_KEYS_NORMAL_VAR is drawn from its normal approximation
 * (rounded, clamped to [0, n]): the same mean and variance for one Gaussian draw,
 * where GSL's BTPE rejection sampler costs about 20 times as much; smaller ones use
 * gsl_ran_binomial. The approximation's skewness error is at most 0.32 per request,
 * and what throttles a shard is the sum of many requests per second, which the
 * central limit theorem makes normal either way.
 */
#ifndef KDS_KEYS_H
#define KDS_KEYS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kds_hashkey.h"
#include "kds_stream.h"

#define KDS_KEYS_NORMAL_VAR 10.0

typedef enum {
    KDS_KEYS_RANDOM,   /* a new random key per record: shares = hash-range fractions */
    KDS_KEYS_UNIFORM,  /* `count` keys prefix0..prefix<count-1>, equally likely */
    KDS_KEYS_ZIPF,     /* `count` keys, key i has weight 1 / (i + 1)^s */
    KDS_KEYS_FIXED,    /* the one partition key `fixed` */
    KDS_KEYS_EXPLICIT  /* the one ExplicitHashKey `explicit_key` */
} kds_keys_kind;

typedef struct kds_keys_cfg {
    kds_keys_kind kind;
    uint64_t count;          /* UNIFORM, ZIPF: number of distinct keys (>= 1) */
    double zipf_s;           /* ZIPF: exponent s > 0 */
    const char *prefix;      /* UNIFORM, ZIPF: key name prefix (borrowed), "k-" default */
    const char *fixed;       /* FIXED: the partition key (borrowed) */
    kds_hashkey explicit_key;/* EXPLICIT */
    uint64_t exact_keys;     /* keys hashed by name before falling back to range
                                fractions; default 100,000 */
} kds_keys_cfg;

typedef struct kds_keys {
    const kds_keys_cfg *cfg; /* borrowed */
    uint64_t version;        /* stream topology version the shares were built for */
    size_t n;                /* entries: the open shards when built, or 1 for a fixed
                                key or ExplicitHashKey (its one shard) */
    double *share;           /* owned; share of records per open shard (sums to 1) */
    double *cond;            /* owned; entry i's share of the records the entries before
                                it leave: the multinomial draw's binomial probabilities */
    uint32_t *shard;         /* owned; shard index per entry */
    unsigned int *tally;     /* owned; scratch counts per entry */
    size_t *touched;         /* owned; scratch list of entries with a non-zero tally */
    gsl_ran_discrete_t *alias; /* owned; alias table over share */
    double key_bytes;        /* mean partition-key length in bytes (UTF-8) */
    double zipf_total;       /* ZIPF: the law's normalising sum, kds_keys_zipf_total, for
                                zipf_count keys of exponent zipf_s (kept for rebuilds of
                                the same law); else 0 */
    uint64_t zipf_count;
    double zipf_s;
    /* UNIFORM, ZIPF: what a rebuild for a new topology reuses. The first build hashes the
     * exact keys' names with MD5; a rebuild keeps their hash keys (made at the first
     * rebuild, so a stream that never reshards does not hold them) when there are at
     * most KDS_KEYS_CACHE_MAX, and the sums over them that do not depend on the shards. */
    kds_hashkey *hashes;     /* owned; the keys' hash keys in ascending order; or NULL */
    uint32_t *order;         /* owned; the key number of each of them */
    uint32_t *entry;         /* owned; scratch: each key's open entry, by key number */
    uint64_t n_hashes;
    bool built;              /* built once for `law`: the exact sums below are set */
    kds_keys_cfg law;        /* the law they were made for, its prefix the copy below */
    char *law_prefix;        /* owned */
    double exact_covered;    /* share of the records the exact keys carry */
    double exact_keylen;     /* their contribution to key_bytes */
    unsigned int refs;       /* kds_keys_new's tables: holders (kds_keys_release) */
} kds_keys;

/* The most exact keys whose hash keys a table keeps for rebuilds: 24 MiB at 24 bytes
 * each (a table per distinct key law, kds_keys_new shared by the producers of one). */
#define KDS_KEYS_CACHE_MAX 1000000

/* Zero *cfg and fill in the defaults: a fresh random key per record (prefix "k-", a
 * static string). Never fails. */
void kds_keys_cfg_defaults(kds_keys_cfg *cfg);

/* Compute the shares over `st`'s open shards. Called at set-up and again whenever
 * st->topology_version changes (kds_keys_spread does so itself). Returns 0 or
 * SIM_ENOMEM. */
int kds_keys_build(kds_keys *k, const kds_keys_cfg *cfg, const kds_stream *st);
void kds_keys_fini(kds_keys *k); /* NULL-safe */

/* A table on the heap, built as kds_keys_build does, held once: NULL when out of memory.
 * It borrows cfg, which must outlive it. Producers with the same key law
 * (kds_keys_cfg_equal) on one stream share one table, built and rebuilt once for all of
 * them: the shares depend on the law and the open shards alone, and a spread only uses
 * the table's scratch within the call. */
kds_keys *kds_keys_new(const kds_keys_cfg *cfg, const kds_stream *st);

/* One more holder of a kds_keys_new table; returns k. */
kds_keys *kds_keys_retain(kds_keys *k);

/* A holder lets go of a kds_keys_new table; the last frees it. NULL-safe. */
void kds_keys_release(kds_keys *k);

/* Whether two key laws give the same keys with the same weights, so the same shares on
 * any topology (every field a kind reads; prefixes and keys compared by content). */
bool kds_keys_cfg_equal(const kds_keys_cfg *a, const kds_keys_cfg *b);

/* Spread `n` records over the open shards: calls emit(ctx, shard, count) for every
 * shard that gets at least one, in hash-key order. Cost O(min(n log n, shards)). */
static inline void kds_keys_spread(kds_keys *k, const kds_stream *st, gsl_rng *r, uint32_t n,
                                   void (*emit)(void *ctx, kds_shard *sh, uint32_t count),
                                   void *ctx);

/* The parts of kds_keys_spread out of line: the tables rebuilt for a new topology, and
 * the spread of few records over many shards, one alias draw per record. */
void kds__keys_rebuild(kds_keys *k, const kds_stream *st);
void kds__keys_spread_alias(kds_keys *k, const kds_stream *st, gsl_rng *r, uint32_t n,
                            void (*emit)(void *ctx, kds_shard *sh, uint32_t count), void *ctx);

/* A binomial draw: exact (GSL) when the variance is small, else its normal
 * approximation (above). */
static inline unsigned int kds__keys_binomial(gsl_rng *r, double p, unsigned int n)
{
    if (p >= 1.0)
        return n;
    if (p <= 0.0)
        return 0;
    double var = (double)n * p * (1.0 - p);
    if (var < KDS_KEYS_NORMAL_VAR)
        return gsl_ran_binomial(r, p, n);
    /* Rounded to the nearest and clamped to [0, n] without floor(), which takes a dozen
     * instructions on baseline x86-64: floor(y) <= 0 when y < 1, floor(y) >= n when
     * y >= n (n is whole), and in between the conversion truncates, which is the floor. */
    double y = (double)n * p + sqrt(var) * gsl_ran_gaussian_ziggurat(r, 1.0) + 0.5;
    return y < 1.0 ? 0 : y >= (double)n ? n : (unsigned int)y;
}

/* Inline: a producer spreads every request, and its emit, inlined here, puts each part
 * (kds_producer.c). One entry (a fixed key) takes the loop's last step: all the records,
 * without a draw. */
static inline void kds_keys_spread(kds_keys *k, const kds_stream *st, gsl_rng *r, uint32_t n,
                                   void (*emit)(void *ctx, kds_shard *sh, uint32_t count),
                                   void *ctx)
{
    if (k->version != st->topology_version)
        kds__keys_rebuild(k, st);
    if (n == 0)
        return;
    if ((size_t)n * 4 < k->n) {
        kds__keys_spread_alias(k, st, r, n, emit, ctx);
        return;
    }
    /* One multinomial draw as conditional binomials: O(shards). */
    unsigned int left = n;
    for (size_t i = 0; i < k->n && left > 0; i++) {
        unsigned int x = i + 1 == k->n ? left : kds__keys_binomial(r, k->cond[i], left);
        left -= x;
        if (x)
            emit(ctx, st->shards[k->shard[i]], x);
    }
}

/* The share of records shard `shard` (an index) gets; 0 for shards not in the table. */
double kds_keys_share_of(const kds_keys *k, uint32_t shard);

/* The normalising sum of a Zipf law of `count` keys (>= 1) and exponent s > 0: the sum
 * of (i + 1)^-s over the keys, key i's share being its term over the sum. Exact for the
 * first 10^7 terms, the rest integrated. Costs up to 10^7 calls of pow. */
double kds_keys_zipf_total(uint64_t count, double s);

/* The same with the first `exact` terms summed (kds_keys_zipf_total: 10^7), for tests of
 * the integrated tail. */
double kds__keys_zipf_total(uint64_t count, double s, uint64_t exact);

/* The hash key of every record when the keys are one key (kind fixed or explicit) and
 * the stream routes by key (not AUTO): true with it in *out; false otherwise. */
bool kds_keys_single_hash(const kds_keys *k, const kds_stream *st, kds_hashkey *out);

/* The name of key i of a UNIFORM or ZIPF distribution into buf. Returns buf. */
char *kds_keys_name(const kds_keys_cfg *cfg, uint64_t i, char *buf, size_t n);

#endif
