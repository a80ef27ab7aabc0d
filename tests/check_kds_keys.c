/* check_kds_keys.c - tests of partition-key distributions: shares over the open shards
 * for a fixed key (model.md's s-41 and s-90), an ExplicitHashKey, uniform keys hashed
 * by name, Zipf and random keys; mean key length; the per-request spread (multinomial
 * and alias paths) summing to the request, in hash-key order, and following the shares.
 */
#include <check.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kds_keys.h"
#include "kds_reshard.h"
#include "testutil.h"

typedef struct fixture {
    sim *s;
    kds_stream st;
    kds_keys k;
    kds_keys_cfg kc;
} fixture;

static void fx_init(fixture *f, uint32_t shards)
{
    memset(f, 0, sizeof *f);
    f->s = sim_new(5);
    kds_stream_cfg cfg;
    kds_stream_cfg_defaults(&cfg);
    cfg.shards = shards;
    ck_assert_int_eq(kds_stream_init(&f->st, f->s, &cfg), 0);
    kds_keys_cfg_defaults(&f->kc);
}

static void fx_build(fixture *f)
{
    ck_assert_int_eq(kds_keys_build(&f->k, &f->kc, &f->st), 0);
    /* One key lives in one shard: its table has that one entry. */
    bool single = f->kc.kind == KDS_KEYS_FIXED || f->kc.kind == KDS_KEYS_EXPLICIT;
    ck_assert_uint_eq(f->k.n, single ? 1 : f->st.n_open);
    double sum = 0;
    for (size_t i = 0; i < f->k.n; i++) {
        ck_assert(f->k.share[i] >= 0);
        sum += f->k.share[i];
    }
    ck_assert_double_eq_tol(sum, 1.0, 1e-9);
}

static void fx_fini(fixture *f)
{
    kds_keys_fini(&f->k);
    kds_stream_fini(&f->st);
    sim_free(f->s);
}

/* What a spread emitted. */
typedef struct tally {
    uint64_t count[256];
    uint32_t order[256]; /* shard indices in emission order */
    size_t n_emits;
    uint64_t total;
} tally;

static void on_emit(void *ctx, kds_shard *sh, uint32_t count)
{
    tally *t = ctx;
    ck_assert_uint_lt(sh->index, 256);
    ck_assert_uint_gt(count, 0);
    t->count[sh->index] += count;
    t->order[t->n_emits++ % 256] = sh->index;
    t->total += count;
}

/* One spread of n: sums to n, each shard at most once, in hash-key order (for an even
 * split, increasing index). */
static void spread_once(fixture *f, gsl_rng *r, uint32_t n, tally *t)
{
    tally one;
    memset(&one, 0, sizeof one);
    kds_keys_spread(&f->k, &f->st, r, n, on_emit, &one);
    ck_assert_uint_eq(one.total, n);
    for (size_t i = 1; i < one.n_emits; i++)
        ck_assert_uint_lt(one.order[i - 1], one.order[i]);
    for (size_t i = 0; i < 256; i++)
        t->count[i] += one.count[i];
    t->total += one.total;
    t->n_emits += one.n_emits;
}

START_TEST(test_fixed_key)
{
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_FIXED;
    f.kc.fixed = "s-41";
    fx_build(&f);
    ck_assert_double_eq(kds_keys_share_of(&f.k, 1), 1.0);
    ck_assert_double_eq_tol(f.k.key_bytes, 4, 1e-12);
    gsl_rng *r = sim_rng(f.s, "test");
    tally t;
    memset(&t, 0, sizeof t);
    for (uint32_t n = 1; n <= 600; n += 37)
        spread_once(&f, r, n, &t);
    ck_assert_uint_eq(t.count[1], t.total);

    f.kc.fixed = "s-90";
    fx_build(&f);
    ck_assert_double_eq(kds_keys_share_of(&f.k, 2), 1.0);
    memset(&t, 0, sizeof t);
    spread_once(&f, r, 500, &t);
    ck_assert_uint_eq(t.count[2], 500);
    fx_fini(&f);
}
END_TEST

START_TEST(test_explicit_key)
{
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_EXPLICIT;
    f.kc.explicit_key = kds_hashkey_even_start(3, 4);
    fx_build(&f);
    ck_assert_double_eq(kds_keys_share_of(&f.k, 3), 1.0);
    f.kc.explicit_key = kds_hashkey_even_start(3, 4) - 1; /* last key of shard 2 */
    fx_build(&f);
    ck_assert_double_eq(kds_keys_share_of(&f.k, 2), 1.0);
    fx_fini(&f);
}
END_TEST

/* Few uniform keys: the shares are exactly the keys' MD5 placement. */
START_TEST(test_uniform_few_keys_hashed)
{
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_UNIFORM;
    f.kc.count = 10;
    f.kc.prefix = "s-";
    fx_build(&f);
    double want[4] = {0};
    char name[32];
    for (uint64_t i = 0; i < 10; i++) {
        kds_keys_name(&f.kc, i, name, sizeof name);
        kds_shard *sh = kds_stream_route(&f.st, kds_hashkey_from_md5(name, strlen(name)));
        want[sh->index] += 0.1;
    }
    for (size_t i = 0; i < 4; i++)
        ck_assert_double_eq_tol(f.k.share[i], want[i], 1e-12);
    ck_assert_double_eq_tol(f.k.key_bytes, 3, 1e-12); /* s-0 .. s-9 */
    fx_fini(&f);
}
END_TEST

START_TEST(test_key_names_and_length)
{
    kds_keys_cfg c;
    kds_keys_cfg_defaults(&c);
    char buf[32];
    ck_assert_str_eq(kds_keys_name(&c, 7, buf, sizeof buf), "k-7");
    c.prefix = "s-";
    ck_assert_str_eq(kds_keys_name(&c, 41, buf, sizeof buf), "s-41");

    fixture f;
    fx_init(&f, 2);
    f.kc.kind = KDS_KEYS_UNIFORM;
    f.kc.count = 100; /* k-0..k-9 (3 B) and k-10..k-99 (4 B) */
    fx_build(&f);
    ck_assert_double_eq_tol(f.k.key_bytes, 3.9, 1e-9);
    /* Beyond exact_keys the rest is spread by range fraction; the length is still
     * about right. */
    f.kc.exact_keys = 10;
    fx_build(&f);
    ck_assert_double_eq_tol(f.k.key_bytes, 3 * 0.1 + 4 * 0.9, 1e-9);
    f.kc.kind = KDS_KEYS_RANDOM;
    fx_build(&f);
    ck_assert_double_eq_tol(f.k.key_bytes, 36, 1e-12);
    fx_fini(&f);
}
END_TEST

/* Many uniform keys and random keys: about equal shares over an even split. */
START_TEST(test_many_keys_even)
{
    fixture f;
    fx_init(&f, 8);
    f.kc.kind = KDS_KEYS_UNIFORM;
    f.kc.count = 20000;
    fx_build(&f);
    for (size_t i = 0; i < 8; i++)
        ck_assert_double_eq_tol(f.k.share[i], 0.125, 0.125 * 0.05);
    f.kc.kind = KDS_KEYS_RANDOM;
    fx_build(&f);
    for (size_t i = 0; i < 8; i++)
        ck_assert_double_eq_tol(f.k.share[i], 0.125, 1e-12);
    fx_fini(&f);
}
END_TEST

/* Zipf: the shard holding the hottest key gets at least that key's weight. */
START_TEST(test_zipf_hot_shard)
{
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_ZIPF;
    f.kc.count = 10;
    f.kc.zipf_s = 1.0;
    fx_build(&f);
    double h = 0;
    for (int i = 1; i <= 10; i++)
        h += 1.0 / i;
    kds_shard *hot = kds_stream_route(&f.st, kds_hashkey_from_md5("k-0", 3));
    ck_assert(f.k.share[hot->index] >= 1.0 / h - 1e-12);
    /* A steeper exponent concentrates more on it. */
    double before = f.k.share[hot->index];
    f.kc.zipf_s = 3.0;
    fx_build(&f);
    ck_assert(f.k.share[hot->index] > before);
    fx_fini(&f);
}
END_TEST

/* The Zipf sum against the generalised harmonic numbers: exact up to the limit, the tail
 * integrated beyond it. With 100 exact terms the integrated tail of 10^5 keys matches the
 * sum of all 10^5 terms to 1e-5, for s = 1 and 1.2 (the integral's error, about
 * s / (24 m^(s+1)), is 4e-6 after m = 100 terms, 4e-16 after the 10^7 kdsim sums).
 * A build works the sum out for
 * its law, and again for another law. (The report's hot keys once summed 10^6 terms
 * only, whatever the count: H(10^9, 1), 21.3, came out as 14.4, and the top key's rate
 * half as high again as the law's.) */
START_TEST(test_zipf_total)
{
    ck_assert_double_eq_tol(kds_keys_zipf_total(1, 2.0), 1.0, 1e-15);
    ck_assert_double_eq_tol(kds_keys_zipf_total(4, 1.0), 1 + 0.5 + 1.0 / 3 + 0.25, 1e-15);
    const double s[] = {1.0, 1.2};
    for (int k = 0; k < 2; k++) {
        double h = 0;
        for (uint64_t i = 100000; i >= 1; i--)
            h += pow((double)i, -s[k]);
        ck_assert_double_eq_tol(kds__keys_zipf_total(100000, s[k], 100), h, 1e-5);
        ck_assert_double_eq_tol(kds_keys_zipf_total(100000, s[k]), h, 1e-12);
    }
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_ZIPF;
    f.kc.count = 20;
    f.kc.zipf_s = 1.2;
    fx_build(&f);
    ck_assert_double_eq_tol(f.k.zipf_total, kds_keys_zipf_total(20, 1.2), 1e-15);
    f.kc.count = 4;
    f.kc.zipf_s = 1.0;
    fx_build(&f);
    ck_assert_double_eq_tol(f.k.zipf_total, 1 + 0.5 + 1.0 / 3 + 0.25, 1e-15);
    fx_fini(&f);
}
END_TEST

/* Large requests (multinomial path) follow the shares: 4 shards, random keys. */
START_TEST(test_spread_multinomial_follows_shares)
{
    fixture f;
    fx_init(&f, 4);
    fx_build(&f);
    gsl_rng *r = sim_rng(f.s, "test");
    tally t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 200; i++)
        spread_once(&f, r, 500, &t); /* includes normal-approximated binomials */
    ck_assert_uint_eq(t.total, 100000);
    for (size_t i = 0; i < 4; i++)
        ck_assert_uint_le((uint64_t)llabs((long long)t.count[i] - 25000), 600); /* ~4.4 sd */
    /* Small requests too (exact binomials). */
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 10000; i++)
        spread_once(&f, r, 4, &t);
    for (size_t i = 0; i < 4; i++)
        ck_assert_uint_le((uint64_t)llabs((long long)t.count[i] - 10000), 450);
    fx_fini(&f);
}
END_TEST

/* Requests smaller than a quarter of the shard count use the alias table: still summing
 * to the request, in hash-key order, and even over many requests. */
START_TEST(test_spread_alias_path)
{
    fixture f;
    fx_init(&f, 64);
    fx_build(&f);
    gsl_rng *r = sim_rng(f.s, "test");
    tally t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < 20000; i++)
        spread_once(&f, r, 3, &t);
    ck_assert_uint_eq(t.total, 60000);
    for (size_t i = 0; i < 64; i++)
        ck_assert_uint_le((uint64_t)llabs((long long)t.count[i] - 60000 / 64), 150);
    /* A request of 0 emits nothing. */
    tally z;
    memset(&z, 0, sizeof z);
    kds_keys_spread(&f.k, &f.st, r, 0, on_emit, &z);
    ck_assert_uint_eq(z.n_emits, 0);
    fx_fini(&f);
}
END_TEST

/* The same generator state gives the same spread. */
START_TEST(test_spread_deterministic)
{
    fixture a, b;
    fx_init(&a, 16);
    fx_init(&b, 16);
    fx_build(&a);
    fx_build(&b);
    gsl_rng *ra = sim_rng(a.s, "p"), *rb = sim_rng(b.s, "p");
    for (int i = 0; i < 50; i++) {
        tally ta, tb;
        memset(&ta, 0, sizeof ta);
        memset(&tb, 0, sizeof tb);
        uint32_t n = (uint32_t)(i * 13 % 40 + 1);
        spread_once(&a, ra, n, &ta);
        spread_once(&b, rb, n, &tb);
        ck_assert(memcmp(ta.count, tb.count, sizeof ta.count) == 0);
    }
    fx_fini(&a);
    fx_fini(&b);
}
END_TEST

/* A topology change (version bump) makes spread rebuild the shares. */
START_TEST(test_rebuild_on_topology_change)
{
    fixture f;
    fx_init(&f, 4);
    f.kc.kind = KDS_KEYS_FIXED;
    f.kc.fixed = "s-41";
    fx_build(&f);
    uint64_t v = f.k.version;
    f.st.topology_version++;
    gsl_rng *r = sim_rng(f.s, "test");
    tally t;
    memset(&t, 0, sizeof t);
    spread_once(&f, r, 10, &t);
    ck_assert_uint_eq(f.k.version, v + 1);
    ck_assert_uint_eq(t.count[1], 10);
    fx_fini(&f);
}
END_TEST

/* A fresh table over st, for comparison with a rebuilt one. */
static void expect_fresh_shares(const kds_keys *k, const kds_keys_cfg *kc, const kds_stream *st)
{
    kds_keys fresh;
    memset(&fresh, 0, sizeof fresh);
    ck_assert_int_eq(kds_keys_build(&fresh, kc, st), 0);
    ck_assert_uint_eq(fresh.n, k->n);
    ck_assert(fresh.n_hashes == 0); /* a first build keeps no hash keys */
    /* Exactly the same shares, shards and key length, bit for bit: a run's draws depend
     * on them. */
    ck_assert(memcmp(fresh.share, k->share, k->n * sizeof *k->share) == 0);
    ck_assert(memcmp(fresh.cond, k->cond, k->n * sizeof *k->cond) == 0);
    ck_assert(memcmp(fresh.shard, k->shard, k->n * sizeof *k->shard) == 0);
    ck_assert(fresh.key_bytes == k->key_bytes);
    kds_keys_fini(&fresh);
}

/* A rebuild after a reshard keeps the keys' hash keys (made at the first rebuild, none
 * before) and gives exactly the shares a table built afresh for the new shards gives:
 * after splits, a merge and UpdateShardCount, for uniform keys and for Zipf keys with a
 * tail past exact_keys. */
START_TEST(test_rebuild_reuses_hashes_same_shares)
{
    for (int law = 0; law < 2; law++) {
        fixture f;
        fx_init(&f, 8);
        f.kc.kind = law ? KDS_KEYS_ZIPF : KDS_KEYS_UNIFORM;
        f.kc.count = 5000;
        f.kc.zipf_s = 1.1;
        f.kc.exact_keys = law ? 3000 : 100000;
        f.kc.prefix = "s-";
        fx_build(&f);
        ck_assert(f.k.hashes == NULL);
        uint64_t exact = law ? 3000 : 5000;
        for (int step = 0; step < 4; step++) {
            kds_hashkey mid;
            if (step == 0 || step == 1) { /* split shard 1's range at its middle, twice */
                const kds_shard *sh = f.st.shards[f.st.open[1]];
                mid = sh->lo + (sh->hi - sh->lo) / 2 + 1;
                ck_assert_int_eq(kds_reshard_split(&f.st, sh->index, mid, "t"), KDS_API_OK);
            } else if (step == 2) {
                ck_assert_int_eq(kds_reshard_merge(&f.st, f.st.open[3], f.st.open[4], "t"),
                                 KDS_API_OK);
            } else {
                ck_assert_int_eq(kds_reshard_update_count(&f.st, 12, "t"), KDS_API_OK);
            }
            sim_run_until(f.s, sim_now(f.s) + SIM_MIN(10));
            ck_assert_int_eq(kds_keys_build(&f.k, &f.kc, &f.st), 0);
            ck_assert_uint_eq(f.k.n_hashes, exact);
            expect_fresh_shares(&f.k, &f.kc, &f.st);
        }
        ck_assert_uint_eq(f.st.n_open, 12);
        /* Another law on the same table forgets the kept hash keys. */
        f.kc.prefix = "t-";
        fx_build(&f);
        ck_assert(f.k.hashes == NULL && f.k.n_hashes == 0);
        expect_fresh_shares(&f.k, &f.kc, &f.st);
        fx_fini(&f);
    }
}
END_TEST

/* Key laws are equal when every field their kind reads is, strings by content. */
START_TEST(test_cfg_equal)
{
    kds_keys_cfg a, b;
    kds_keys_cfg_defaults(&a);
    kds_keys_cfg_defaults(&b);
    ck_assert(kds_keys_cfg_equal(&a, &b));
    a.kind = b.kind = KDS_KEYS_UNIFORM;
    a.count = b.count = 50;
    char p1[] = "s-", p2[] = "s-";
    a.prefix = p1;
    b.prefix = p2;
    b.zipf_s = 2.0; /* not read by a uniform law */
    ck_assert(kds_keys_cfg_equal(&a, &b));
    b.count = 51;
    ck_assert(!kds_keys_cfg_equal(&a, &b));
    b.count = 50;
    b.exact_keys = 10;
    ck_assert(!kds_keys_cfg_equal(&a, &b));
    b.exact_keys = a.exact_keys;
    b.prefix = "t-";
    ck_assert(!kds_keys_cfg_equal(&a, &b));
    b.prefix = p2;
    a.kind = b.kind = KDS_KEYS_ZIPF;
    ck_assert(!kds_keys_cfg_equal(&a, &b)); /* now the exponent counts */
    b.zipf_s = a.zipf_s;
    ck_assert(kds_keys_cfg_equal(&a, &b));
    b.kind = KDS_KEYS_UNIFORM;
    ck_assert(!kds_keys_cfg_equal(&a, &b));
    a.kind = b.kind = KDS_KEYS_FIXED;
    a.fixed = "bot";
    b.fixed = "bot";
    ck_assert(kds_keys_cfg_equal(&a, &b));
    b.fixed = "bat";
    ck_assert(!kds_keys_cfg_equal(&a, &b));
    a.kind = b.kind = KDS_KEYS_EXPLICIT;
    a.explicit_key = 7;
    b.explicit_key = 8;
    ck_assert(!kds_keys_cfg_equal(&a, &b));
}
END_TEST

static Suite *keys_suite(void)
{
    Suite *s = suite_create("kds_keys");
    TCase *shares = tcase_create("shares");
    tcase_add_test(shares, test_fixed_key);
    tcase_add_test(shares, test_explicit_key);
    tcase_add_test(shares, test_uniform_few_keys_hashed);
    tcase_add_test(shares, test_key_names_and_length);
    tcase_add_test(shares, test_many_keys_even);
    tcase_add_test(shares, test_zipf_hot_shard);
    tcase_add_test(shares, test_zipf_total);
    tcase_add_test(shares, test_rebuild_reuses_hashes_same_shares);
    tcase_add_test(shares, test_cfg_equal);
    suite_add_tcase(s, shares);

    TCase *spread = tcase_create("spread");
    tcase_add_test(spread, test_spread_multinomial_follows_shares);
    tcase_add_test(spread, test_spread_alias_path);
    tcase_add_test(spread, test_spread_deterministic);
    tcase_add_test(spread, test_rebuild_on_topology_change);
    suite_add_tcase(s, spread);
    return s;
}

int main(void)
{
    return tu_run_suite(keys_suite());
}
