/* kds_keys.c - shares of open shards under a key distribution, and the per-request
 * spread of records (kds_keys.h). */
#include "kds_keys.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

void kds_keys_cfg_defaults(kds_keys_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = KDS_KEYS_RANDOM;
    cfg->count = 1;
    cfg->zipf_s = 1.0;
    cfg->prefix = "k-";
    cfg->exact_keys = 100000;
}

char *kds_keys_name(const kds_keys_cfg *cfg, uint64_t i, char *buf, size_t n)
{
    snprintf(buf, n, "%s%" PRIu64, cfg->prefix ? cfg->prefix : "", i);
    return buf;
}

/* Key i's share of the records under a uniform or Zipf law whose weights sum to total:
 * one expression for the first build and the rebuilds, which must add the same values. */
static double key_weight(const kds_keys_cfg *cfg, uint64_t i, double total)
{
    return cfg->kind == KDS_KEYS_UNIFORM ? 1.0 / total : pow((double)(i + 1), -cfg->zipf_s) / total;
}

/* Forget what rebuilds reuse (kds_keys.h): the hash keys and the law's copy. */
static void drop_reused(kds_keys *k)
{
    free(k->hashes);
    free(k->order);
    free(k->entry);
    free(k->law_prefix);
    k->hashes = NULL;
    k->order = NULL;
    k->entry = NULL;
    k->n_hashes = 0;
    k->law_prefix = NULL;
    k->built = false;
}

typedef struct {
    kds_hashkey h;
    uint32_t i;
} hashed_key;

static int cmp_hashed(const void *a, const void *b)
{
    kds_hashkey x = ((const hashed_key *)a)->h, y = ((const hashed_key *)b)->h;
    return (x > y) - (x < y);
}

/* Hash the `exact` first keys of cfg's law once more and keep them for the rebuilds after
 * this one (resharding, once begun, tends to go on: on-demand scaling, a schedule), in
 * hash order with their key numbers. Returns 0 or SIM_ENOMEM (nothing kept). */
static int keep_hashes(kds_keys *k, const kds_keys_cfg *cfg, uint64_t exact)
{
    hashed_key *t = malloc(exact * sizeof *t);
    k->hashes = malloc(exact * sizeof *k->hashes);
    k->order = malloc(exact * sizeof *k->order);
    k->entry = malloc(exact * sizeof *k->entry);
    if (!t || !k->hashes || !k->order || !k->entry) {
        free(t);
        drop_reused(k);
        return SIM_ENOMEM;
    }
    char name[320];
    for (uint64_t i = 0; i < exact; i++) {
        kds_keys_name(cfg, i, name, sizeof name);
        t[i] = (hashed_key){kds_hashkey_from_md5(name, strlen(name)), (uint32_t)i};
    }
    /* Keys of one hash (none, with MD5) fall in one shard whatever their order. */
    qsort(t, exact, sizeof *t, cmp_hashed);
    for (uint64_t j = 0; j < exact; j++) {
        k->hashes[j] = t[j].h;
        k->order[j] = t[j].i;
    }
    free(t);
    k->n_hashes = exact;
    return 0;
}

static void free_tables(kds_keys *k)
{
    free(k->share);
    free(k->cond);
    free(k->shard);
    free(k->tally);
    free(k->touched);
    if (k->alias)
        gsl_ran_discrete_free(k->alias);
    k->share = NULL;
    k->cond = NULL;
    k->shard = NULL;
    k->tally = NULL;
    k->touched = NULL;
    k->alias = NULL;
}

/* The tables spread draws from, once the shares are known: the binomial probabilities
 * of the multinomial draw, and the alias table of the per-record draws. Returns 0, or
 * SIM_ENOMEM (the tables freed). */
static int draw_tables(kds_keys *k)
{
    /* Entry i takes share[i] / mass of what the entries before it left, mass being 1
     * less their shares, subtracted in order: the same operations, so the same values,
     * as when every request computed them. (1.0 once rounding has used the mass up:
     * the entry takes all that is left.) */
    double mass = 1.0;
    for (size_t i = 0; i < k->n; i++) {
        k->cond[i] = mass > 0 ? k->share[i] / mass : 1.0;
        mass -= k->share[i];
    }
    k->alias = gsl_ran_discrete_preproc(k->n, k->share);
    if (!k->alias) {
        free_tables(k);
        return SIM_ENOMEM;
    }
    return 0;
}

double kds_keys_zipf_total(uint64_t count, double s)
{
    return kds__keys_zipf_total(count, s, 10000000);
}

double kds__keys_zipf_total(uint64_t count, double s, uint64_t exact)
{
    /* The generalised harmonic number H(count, s), summed smallest first for accuracy;
     * beyond `exact` terms the tail is integrated from m + 1/2 (each term is nearly the
     * integral over its unit interval around it: an error of about s / (24 m^(s+1)) in
     * all, 4e-16 after 10^7 terms). */
    uint64_t m = count < exact ? count : exact;
    double total = 0;
    for (uint64_t i = m; i >= 1; i--)
        total += pow((double)i, -s);
    if (count > m) {
        double a = (double)m + 0.5, b = (double)count + 0.5;
        total += s == 1.0 ? log(b / a) : (pow(b, 1 - s) - pow(a, 1 - s)) / (1 - s);
    }
    return total;
}

int kds_keys_build(kds_keys *k, const kds_keys_cfg *cfg, const kds_stream *st)
{
    free_tables(k);
    /* What a rebuild reuses belongs to the law it was made for (a copy, as a caller may
     * change its cfg in place): another law drops it. */
    if (k->built && !kds_keys_cfg_equal(&k->law, cfg))
        drop_reused(k);
    /* The Zipf sum depends on the law alone: a rebuild for a new topology keeps it. */
    if (cfg->kind != KDS_KEYS_ZIPF) {
        k->zipf_total = 0;
    } else if (!(k->zipf_total > 0) || k->zipf_count != cfg->count ||
               k->zipf_s != cfg->zipf_s) {
        k->zipf_total = kds_keys_zipf_total(cfg->count, cfg->zipf_s);
        k->zipf_count = cfg->count;
        k->zipf_s = cfg->zipf_s;
    }
    k->cfg = cfg;
    k->n = st->n_open;
    k->version = st->topology_version;
    /* One key, one shard: a table over every open shard would cost O(shards) memory per
     * producer (10,000 producers on 10,000 shards: gigabytes) for a single entry. */
    kds_hashkey one;
    bool single = kds_keys_single_hash(k, st, &one);
    if (single)
        k->n = 1;
    k->share = calloc(k->n, sizeof *k->share);
    k->cond = malloc(k->n * sizeof *k->cond);
    k->shard = malloc(k->n * sizeof *k->shard);
    k->tally = calloc(k->n, sizeof *k->tally);
    k->touched = malloc(k->n * sizeof *k->touched);
    if (!k->share || !k->cond || !k->shard || !k->tally || !k->touched) {
        free_tables(k);
        return SIM_ENOMEM;
    }
    if (single) {
        k->shard[0] = kds_stream_route(st, one)->index;
        k->share[0] = 1.0;
        k->cond[0] = 1.0;
        /* An explicit hash key still needs a partition key; its content is ignored. */
        k->key_bytes = cfg->kind == KDS_KEYS_FIXED ? (double)strlen(cfg->fixed) : 1;
        return 0; /* spread never needs the alias table with one entry */
    }
    for (size_t i = 0; i < k->n; i++) {
        const kds_shard *sh = st->shards[st->open[i]];
        k->shard[i] = sh->index;
    }
    char name[320];
    double keylen = 0;
    if (st->cfg.auto_distribution) {
        /* Service-managed keys: an even spread over the open shards, whatever the
         * keys; no hot key, no per-key order. */
        for (size_t i = 0; i < k->n; i++)
            k->share[i] = 1.0 / (double)k->n;
        k->key_bytes = cfg->kind == KDS_KEYS_FIXED ? (double)strlen(cfg->fixed) : 36;
        return draw_tables(k);
    }
    /* Mass left for the range-fraction approximation (keys past exact_keys, or
     * random keys). */
    double rest = 0;
    switch (cfg->kind) {
    case KDS_KEYS_RANDOM:
        rest = 1.0;
        keylen = 36; /* a UUID string, the usual random partition key */
        break;
    case KDS_KEYS_FIXED:
    case KDS_KEYS_EXPLICIT:
        SIM_ASSERT(!"one key has the single-entry table above");
        break;
    case KDS_KEYS_UNIFORM:
    case KDS_KEYS_ZIPF: {
        uint64_t exact = cfg->count < cfg->exact_keys ? cfg->count : cfg->exact_keys;
        double total = 0;
        if (cfg->kind == KDS_KEYS_UNIFORM)
            total = (double)cfg->count;
        else
            total = k->zipf_total;
        if (k->built && !k->hashes && exact <= KDS_KEYS_CACHE_MAX &&
            keep_hashes(k, cfg, exact) != 0) {
            free_tables(k);
            return SIM_ENOMEM;
        }
        if (k->built && k->n_hashes == exact) {
            /* Each key's entry by one sweep of the keys in hash order beside the open
             * shards (kds_stream_open_entry's answer, the last open shard starting at or
             * below the key, without its search), then the same additions in the same
             * order as the first build made, so the same shares. */
            size_t e = 0;
            for (uint64_t j = 0; j < exact; j++) {
                while (e + 1 < st->n_open && st->shards[st->open[e + 1]]->lo <= k->hashes[j])
                    e++;
                k->entry[k->order[j]] = (uint32_t)e;
            }
            for (uint64_t i = 0; i < exact; i++) {
                double w = key_weight(cfg, i, total);
                k->share[k->entry[i]] += w;
            }
        } else {
            double covered = 0;
            for (uint64_t i = 0; i < exact; i++) {
                kds_keys_name(cfg, i, name, sizeof name);
                double w = key_weight(cfg, i, total);
                kds_hashkey h = kds_hashkey_from_md5(name, strlen(name));
                k->share[kds_stream_open_entry(st, h)] += w;
                covered += w;
                keylen += w * (double)strlen(name);
            }
            if (!k->built) {
                k->exact_covered = covered;
                k->exact_keylen = keylen;
                k->law = *cfg;
                k->law.prefix = k->law_prefix = strdup(cfg->prefix ? cfg->prefix : "");
                if (!k->law_prefix) {
                    free_tables(k);
                    return SIM_ENOMEM;
                }
                k->built = true;
            }
        }
        keylen = k->exact_keylen;
        rest = k->exact_covered < 1.0 ? 1.0 - k->exact_covered : 0.0;
        if (rest > 0) {
            kds_keys_name(cfg, cfg->count - 1, name, sizeof name);
            keylen += rest * (double)strlen(name);
        }
        break;
    }
    }
    if (rest > 0)
        for (size_t i = 0; i < k->n; i++) {
            const kds_shard *sh = st->shards[st->open[i]];
            k->share[i] += rest * kds_hashkey_share(sh->lo, sh->hi);
        }
    k->key_bytes = keylen;
    return draw_tables(k);
}

double kds_keys_share_of(const kds_keys *k, uint32_t shard)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->shard[i] == shard)
            return k->share[i];
    return 0.0;
}

bool kds_keys_single_hash(const kds_keys *k, const kds_stream *st, kds_hashkey *out)
{
    const kds_keys_cfg *cfg = k->cfg;
    if (st->cfg.auto_distribution)
        return false;
    if (cfg->kind == KDS_KEYS_FIXED)
        *out = kds_hashkey_from_md5(cfg->fixed, strlen(cfg->fixed));
    else if (cfg->kind == KDS_KEYS_EXPLICIT)
        *out = cfg->explicit_key;
    else
        return false;
    return true;
}

void kds_keys_fini(kds_keys *k)
{
    if (!k)
        return;
    free_tables(k);
    drop_reused(k);
}

kds_keys *kds_keys_new(const kds_keys_cfg *cfg, const kds_stream *st)
{
    kds_keys *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    if (kds_keys_build(k, cfg, st) != 0) {
        kds_keys_fini(k);
        free(k);
        return NULL;
    }
    k->refs = 1;
    return k;
}

kds_keys *kds_keys_retain(kds_keys *k)
{
    k->refs++;
    return k;
}

void kds_keys_release(kds_keys *k)
{
    if (!k || --k->refs > 0)
        return;
    kds_keys_fini(k);
    free(k);
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool kds_keys_cfg_equal(const kds_keys_cfg *a, const kds_keys_cfg *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case KDS_KEYS_RANDOM:
        return true;
    case KDS_KEYS_FIXED:
        return same_str(a->fixed, b->fixed);
    case KDS_KEYS_EXPLICIT:
        return a->explicit_key == b->explicit_key;
    case KDS_KEYS_ZIPF:
    case KDS_KEYS_UNIFORM:
        return (a->kind != KDS_KEYS_ZIPF || a->zipf_s == b->zipf_s) && a->count == b->count &&
               a->exact_keys == b->exact_keys &&
               same_str(a->prefix ? a->prefix : "", b->prefix ? b->prefix : "");
    }
    return false;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

void kds__keys_rebuild(kds_keys *k, const kds_stream *st)
{
    int rc = kds_keys_build(k, k->cfg, st);
    SIM_ASSERT(rc == 0);
}

void kds__keys_spread_alias(kds_keys *k, const kds_stream *st, gsl_rng *r, uint32_t n,
                            void (*emit)(void *ctx, kds_shard *sh, uint32_t count), void *ctx)
{
    /* One alias draw per record, then the touched entries in hash-key order, so that the
     * outcome does not depend on draw order. */
    size_t nt = 0;
    for (uint32_t j = 0; j < n; j++) {
        size_t e = gsl_ran_discrete(r, k->alias);
        if (k->tally[e]++ == 0)
            k->touched[nt++] = e;
    }
    qsort(k->touched, nt, sizeof *k->touched, cmp_size);
    for (size_t a = 0; a < nt; a++) {
        size_t e = k->touched[a];
        emit(ctx, st->shards[k->shard[e]], k->tally[e]);
        k->tally[e] = 0;
    }
}
