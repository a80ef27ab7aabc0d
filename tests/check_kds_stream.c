/* check_kds_stream.c - tests of the stream model driven directly on a simulation:
 * CreateStream's even split and routing (model.md's s-41 and s-90 examples), shard ids
 * and 56-digit sequence numbers, the write budget (records, bytes, the large-record
 * tank, InternalFailure), the shared read budget (5 calls/s, the 5 s window after a
 * 10 MiB call, the 1 s penalty for an overdrawn byte budget) and retention.
 */
#include <check.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_stream.h"
#include "kds_stream_int.h"
#include "testutil.h"

/* A stream of `shards` shards with AWS's defaults on a fresh simulation. */
typedef struct fixture {
    sim *s;
    kds_stream st;
} fixture;

static void fx_init(fixture *f, uint32_t shards, void (*tweak)(kds_stream_cfg *))
{
    f->s = sim_new(42);
    ck_assert_ptr_nonnull(f->s);
    kds_stream_cfg cfg;
    kds_stream_cfg_defaults(&cfg);
    cfg.shards = shards;
    if (tweak)
        tweak(&cfg);
    ck_assert_int_eq(kds_stream_init(&f->st, f->s, &cfg), 0);
}

static void fx_fini(fixture *f)
{
    kds_stream_fini(&f->st);
    sim_free(f->s);
}

/* Move the clock to t (no events are scheduled: this only sets the time). */
static void at(fixture *f, sim_time t)
{
    sim_run_until(f->s, t);
    ck_assert_int_eq(sim_now(f->s), t);
}

/* ---- shards and routing --------------------------------------------------------------- */

START_TEST(test_even_split_ranges)
{
    fixture f;
    fx_init(&f, 4, NULL);
    ck_assert_uint_eq(f.st.n_shards, 4);
    ck_assert_uint_eq(f.st.n_open, 4);
    char dec[KDS_HASHKEY_DEC_LEN];
    kds_shard *s1 = f.st.shards[1];
    ck_assert_str_eq(kds_hashkey_to_dec(dec, s1->lo), "85070591730234615865843651857942052864");
    ck_assert_str_eq(kds_hashkey_to_dec(dec, s1->hi), "170141183460469231731687303715884105727");
    ck_assert(f.st.shards[0]->lo == 0);
    ck_assert(f.st.shards[3]->hi == KDS_HASHKEY_MAX);
    for (uint32_t i = 0; i < 4; i++) {
        kds_shard *sh = f.st.shards[i];
        ck_assert_uint_eq(sh->index, i);
        ck_assert_int_eq(sh->state, KDS_SHARD_OPEN);
        ck_assert_int_eq(sh->parent, -1);
        ck_assert_int_eq(sh->closed, -1);
        if (i > 0)
            ck_assert(sh->lo == f.st.shards[i - 1]->hi + 1); /* no gap, no overlap */
        /* Both ends of the range route to the shard. */
        ck_assert_ptr_eq(kds_stream_route(&f.st, sh->lo), sh);
        ck_assert_ptr_eq(kds_stream_route(&f.st, sh->hi), sh);
    }
    fx_fini(&f);
}
END_TEST

/* What the logs' floors may keep unmerged is shared by the stream: 32,768 runs a shard
 * up to 128 shards, then 2^22 runs over the open shards (419 each of 10,000), and at
 * least 256 a shard. */
START_TEST(test_floor_budget_shared)
{
    static const uint32_t counts[] = {4, 128, 1000, 10000};
    static const size_t each[] = {32768, 32768, 4194, 419};
    for (size_t k = 0; k < 4; k++) {
        fixture f;
        fx_init(&f, counts[k], NULL);
        size_t sum = 0;
        for (size_t i = 0; i < f.st.n_shards; i++) {
            ck_assert_uint_eq(f.st.shards[i]->log.floor_runs, each[k]);
            sum += f.st.shards[i]->log.floor_runs;
        }
        ck_assert_uint_le(sum, KDS_LOG_FLOOR_BUDGET);
        fx_fini(&f);
    }
}
END_TEST

START_TEST(test_route_model_examples)
{
    fixture f;
    fx_init(&f, 4, NULL);
    kds_shard *a = kds_stream_route(&f.st, kds_hashkey_from_md5("s-41", 4));
    kds_shard *b = kds_stream_route(&f.st, kds_hashkey_from_md5("s-90", 4));
    ck_assert_uint_eq(a->index, 1);
    ck_assert_uint_eq(b->index, 2);
    fx_fini(&f);

    /* One shard takes every key. */
    fx_init(&f, 1, NULL);
    ck_assert_uint_eq(kds_stream_route(&f.st, kds_hashkey_from_md5("s-90", 4))->index, 0);
    ck_assert_uint_eq(kds_stream_route(&f.st, KDS_HASHKEY_MAX)->index, 0);
    fx_fini(&f);

    /* Three shards (not a power of two): the last one ends at 2^128 - 1. */
    fx_init(&f, 3, NULL);
    ck_assert_uint_eq(kds_stream_route(&f.st, KDS_HASHKEY_MAX)->index, 2);
    ck_assert_uint_eq(kds_stream_route(&f.st, 0)->index, 0);
    fx_fini(&f);
}
END_TEST

START_TEST(test_shard_id)
{
    char buf[21];
    ck_assert_str_eq(kds_shard_id(buf, sizeof buf, 0), "shardId-000000000000");
    ck_assert_str_eq(kds_shard_id(buf, sizeof buf, 1), "shardId-000000000001");
    ck_assert_str_eq(kds_shard_id(buf, sizeof buf, 123456), "shardId-000000123456");
    ck_assert_str_eq(kds_shard_id(buf, sizeof buf, UINT32_MAX), "shardId-004294967295");
}
END_TEST

static int all_digits(const char *s)
{
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

START_TEST(test_seqno_format)
{
    char a[57], b[57];
    uint64_t pos[] = {0, 1, 9, 10, 999, 1000000, UINT64_C(12345678901234567890), UINT64_MAX};
    uint32_t idx[] = {0, 1, 7, UINT32_MAX};
    for (size_t j = 0; j < sizeof idx / sizeof idx[0]; j++)
        for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
            kds_seqno(a, sizeof a, idx[j], pos[i]);
            ck_assert_uint_eq(strlen(a), 56);
            ck_assert(all_digits(a));
            ck_assert(a[0] != '0');
            if (i > 0) {
                /* Monotonic within a shard: equal lengths, so string order is numeric. */
                kds_seqno(b, sizeof b, idx[j], pos[i - 1]);
                ck_assert_int_lt(strcmp(b, a), 0);
            }
            if (j > 0) {
                /* Distinct across shards at the same position. */
                kds_seqno(b, sizeof b, idx[j - 1], pos[i]);
                ck_assert_str_ne(a, b);
            }
        }
    ck_assert_str_eq(kds_seqno(a, sizeof a, 0, 0),
                     "49000000000000000000000000000000000000000000000000000000");
    ck_assert_str_eq(kds_seqno(a, sizeof a, 2, 7),
                     "49000000000002000000000000000000000000000000000000000007");
}
END_TEST

/* ---- write budget --------------------------------------------------------------------- */

/* 1,500 records of 1 KiB at once: the 1,000 records/s bucket (1 s deep) lets 1,000 in,
 * in request order, and throttles the rest; they are stored as one run. */
START_TEST(test_put_records_limit)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    kds_put_result r;
    kds_stream_put(&f.st, sh, 1500, 1500 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1000);
    ck_assert_uint_eq(r.throttled, 500);
    ck_assert_uint_eq(r.failed, 0);
    ck_assert_uint_eq(r.stored_bytes, 1000 * KDS_KIB);
    ck_assert_uint_eq(sh->st.records_in, 1000);
    ck_assert_uint_eq(sh->st.bytes_in, 1000 * KDS_KIB);
    ck_assert_uint_eq(sh->st.write_throttled_records, 500);
    ck_assert_uint_eq(sh->st.write_throttled_bytes, 500 * KDS_KIB);
    ck_assert_uint_eq(kds_log_runs(&sh->log), 1);
    ck_assert_uint_eq(sh->log.end_pos, 1000);

    /* Nothing left this instant; 1 ms later, one record's worth. */
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 0);
    ck_assert_uint_eq(r.throttled, 1);
    at(&f, SIM_MS(1));
    kds_stream_put(&f.st, sh, 3, 3 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1);
    ck_assert_uint_eq(r.throttled, 2);
    /* One second refills the whole budget. */
    at(&f, SIM_S(2));
    kds_stream_put(&f.st, sh, 1000, 1000 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1000);
    ck_assert_uint_eq(sh->st.records_in, 2001);
    ck_assert_uint_eq(sh->st.write_throttled_records, 503);
    fx_fini(&f);
}
END_TEST

/* 12 records of 100 KiB: the 1 MiB byte bucket holds 10 of them; the records bucket is
 * hardly touched. */
START_TEST(test_put_bytes_limit)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    kds_put_result r;
    kds_stream_put(&f.st, sh, 12, 12 * 100 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 10);
    ck_assert_uint_eq(r.throttled, 2);
    ck_assert_uint_eq(sh->st.write_throttled_bytes, 2 * 100 * KDS_KIB);
    ck_assert_uint_eq(kds_bucket_avail(&sh->wrecords, 0), 990);
    ck_assert_uint_eq(kds_bucket_avail(&sh->wbytes, 0), 24 * KDS_KIB);
    /* 24 KiB were left over; the missing 76 KiB take 74.2 ms at 1 MiB/s. */
    at(&f, SIM_MS(74));
    kds_stream_put(&f.st, sh, 1, 100 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 0);
    at(&f, SIM_MS(75));
    kds_stream_put(&f.st, sh, 1, 100 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1);
    fx_fini(&f);
}
END_TEST

static void big_records(kds_stream_cfg *c)
{
    c->max_record_size = 10 * KDS_MIB;
}

/* Records larger than the byte bucket's depth draw on the 10 MiB large-record tank, and
 * burst beyond the byte budget rather than beside it: AWS keeps the shard's 1 MiB/s
 * ("individual shard throughput limit of 1 MB/s for writes ... remain unchanged"; large
 * records "reduce the capacity available for baseline traffic"), so they overdraw the
 * byte bucket and smaller records wait until it has refilled. */
START_TEST(test_put_large_record_tank)
{
    fixture f;
    fx_init(&f, 1, big_records);
    kds_shard *sh = f.st.shards[0];
    kds_put_result r;
    kds_stream_put(&f.st, sh, 6, 12 * KDS_MIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 5);
    ck_assert_uint_eq(r.throttled, 1);
    ck_assert_uint_eq(r.stored_bytes, 10 * KDS_MIB);
    /* The byte budget paid for them too: 1 MiB deep, now 9 MiB overdrawn. */
    ck_assert(kds_bucket_in_debt(&sh->wbytes, 0));
    ck_assert_int_eq(sh->wbytes.level, -9 * (int64_t)KDS_MIB * KDS_NANO);
    /* A 1 KiB record waits for the debt to be repaid at 1 MiB/s: 9 s and 1 KiB. */
    at(&f, SIM_MS(8999));
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 0);
    /* So does a large record, though the tank has refilled 8.999 MiB by then. */
    kds_stream_put(&f.st, sh, 1, 2 * KDS_MIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 0);
    at(&f, SIM_MS(9001));
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1);
    /* With the budget no longer overdrawn, the tank takes a large record again. */
    kds_stream_put(&f.st, sh, 1, 2 * KDS_MIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1);
    ck_assert(kds_bucket_in_debt(&sh->wbytes, SIM_MS(9001)));
    /* Both buckets full again after 10 s: the tank's 10 MiB takes an 8 MiB record. */
    at(&f, SIM_S(20));
    kds_stream_put(&f.st, sh, 1, 8 * KDS_MIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 1);
    fx_fini(&f);
}
END_TEST

/* Large records do not add to a shard's sustained write rate: for 60 s, 1,000 records/s
 * of 1 KiB (just under 1 MiB/s) and a 4 MiB record every 5 s store at most the byte
 * budget's 60 MiB, its 1 MiB burst and one record's overdraft, where a tank beside the
 * budget would have let through about 105 MiB. */
START_TEST(test_put_large_records_share_the_budget)
{
    fixture f;
    fx_init(&f, 1, big_records);
    kds_shard *sh = f.st.shards[0];
    uint64_t large = 0;
    for (int i = 0; i < 600; i++) {
        at(&f, SIM_MS(100) * i);
        kds_put_result r;
        kds_stream_put(&f.st, sh, 100, 100 * KDS_KIB, 0, 0, 0, &r);
        if (i % 50 == 0) {
            kds_stream_put(&f.st, sh, 1, 4 * KDS_MIB, 0, 0, 0, &r);
            large += r.stored;
        }
    }
    ck_assert_uint_gt(large, 0);
    ck_assert_uint_gt(sh->st.write_throttled_records, 0);
    ck_assert_uint_le(sh->st.bytes_in, 65 * KDS_MIB);
    ck_assert_uint_ge(sh->st.bytes_in, 58 * KDS_MIB);
    fx_fini(&f);
}
END_TEST

/* Duplicates come first in a sub-batch; only those that were stored are counted. */
START_TEST(test_put_duplicates_and_marks)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    kds_put_result r;
    kds_stream_put(&f.st, sh, 10, 10 * KDS_KIB, 3, 2, 5, &r);
    ck_assert_uint_eq(r.stored, 10);
    ck_assert_uint_eq(r.stored_dups, 3);
    const kds_run *run = &sh->log.runs[sh->log.head];
    ck_assert_uint_eq(run->dups, 3);
    ck_assert_uint_eq(run->marks, 2);
    ck_assert_uint_eq(run->src, 5);
    /* With room for 2 only, both stored records are duplicates. */
    kds_stream_put(&f.st, sh, 988, 988 * KDS_KIB, 0, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 988);
    kds_stream_put(&f.st, sh, 10, 10 * KDS_KIB, 4, 0, 0, &r);
    ck_assert_uint_eq(r.stored, 2);
    ck_assert_uint_eq(r.stored_dups, 2);
    ck_assert_uint_eq(r.throttled, 8);
    fx_fini(&f);
}
END_TEST

/* Append listeners that note the order they are told in: `later`, when set, is
 * registered by the first call of the listener that has it (once). */
typedef struct append_log {
    char order[16];
    size_t n;
} append_log;

typedef struct listener {
    char name;
    append_log *log;
    struct listener *later;
} listener;

static void note_append(void *ctx, kds_shard *sh)
{
    listener *l = ctx;
    if (l->log->n < sizeof l->log->order - 1)
        l->log->order[l->log->n++] = l->name;
    if (l->later) {
        ck_assert_int_eq(kds_shard_on_append(sh, note_append, l->later), 0);
        l->later = NULL;
    }
}

/* Every listener is told of an append, in the order they registered, the first inline
 * and the rest out of line; one registered during a call is told of that append too,
 * and one removed is told no more. */
START_TEST(test_append_listeners)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    append_log log = {{0}, 0};
    listener c = {'c', &log, NULL}, b = {'b', &log, NULL}, a = {'a', &log, &c};
    kds_put_result r;
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r); /* nobody listens */
    ck_assert_int_eq(kds_shard_on_append(sh, note_append, &a), 0);
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r); /* a, which registers c: c */
    ck_assert_str_eq(log.order, "ac");
    ck_assert_int_eq(kds_shard_on_append(sh, note_append, &b), 0);
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r);
    ck_assert_str_eq(log.order, "acacb");
    kds_shard_off_append(sh, note_append, &a);
    kds_stream_put(&f.st, sh, 1, KDS_KIB, 0, 0, 0, &r);
    ck_assert_str_eq(log.order, "acacbcb");
    ck_assert_uint_eq(sh->log.end_pos, 4);
    fx_fini(&f);
}
END_TEST

static void failing(kds_stream_cfg *c)
{
    c->internal_failure_rate = 0.25;
    c->write_records_per_s = 100000;
    c->write_bytes_per_s = 1000 * KDS_MIB;
}

/* InternalFailure strikes about the configured share of records; every record is
 * stored, throttled or failed. */
START_TEST(test_put_internal_failures)
{
    fixture f;
    fx_init(&f, 1, failing);
    kds_shard *sh = f.st.shards[0];
    uint64_t stored = 0, failed = 0, throttled = 0;
    for (int i = 0; i < 100; i++) {
        kds_put_result r;
        kds_stream_put(&f.st, sh, 400, 400 * KDS_KIB, 0, 0, 0, &r);
        ck_assert_uint_eq(r.stored + r.throttled + r.failed, 400);
        stored += r.stored;
        failed += r.failed;
        throttled += r.throttled;
        at(&f, SIM_S(i + 1));
    }
    ck_assert_uint_eq(throttled, 0);
    ck_assert_uint_eq(stored + failed, 40000);
    ck_assert_uint_eq(sh->st.records_failed_internal, failed);
    ck_assert_uint_eq(sh->st.records_in, stored);
    /* 10,000 expected; the binomial's standard deviation is about 87. */
    ck_assert_uint_gt(failed, 9500);
    ck_assert_uint_lt(failed, 10500);
    fx_fini(&f);
}
END_TEST

/* A shard's sustained write rate is its refill rate: puts every 10 ms of twice the
 * allowance for 10 s store 1,000 records/s plus the initial burst. */
START_TEST(test_put_sustained_rate)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    for (int i = 0; i < 1000; i++) {
        at(&f, SIM_MS(10) * i);
        kds_put_result r;
        kds_stream_put(&f.st, sh, 20, 20 * 100, 0, 0, 0, &r);
    }
    /* Burst 1,000 + 999 * 10 ms * 1,000/s = 10,990 (at most 20 per put). */
    ck_assert_uint_eq(sh->st.records_in, 10990);
    ck_assert_uint_eq(sh->st.write_throttled_records, 20000 - 10990);
    fx_fini(&f);
}
END_TEST

/* Series as the puts would leave them with one add each, kept beside the stream's. */
static void same_buckets(const sim_series *a, const sim_series *b, const char *what)
{
    ck_assert_msg(a->n == b->n && a->width == b->width, "%s: %zu buckets of %lld ns, not %zu "
                  "of %lld", what, a->n, (long long)a->width, b->n, (long long)b->width);
    for (size_t i = 0; i < a->n; i++)
        ck_assert_msg(sim_series_get(a, i) == sim_series_get(b, i), "%s: bucket %zu", what, i);
    ck_assert_msg(sim_series_max(a) == sim_series_max(b), "%s: peak", what);
}

/* Small series limits, so that both kinds merge: 8 minutes a shard series (16 over 2
 * shards), 64 seconds; a horizon of 6 minutes, within the 8: offered_min not kept. */
static void small_series(kds_stream_cfg *cfg)
{
    cfg->series_buckets = 16;
    cfg->seconds_kept = 64;
    cfg->horizon = SIM_MIN(6);
}

/* The per-minute series of a shard and the stream's per-second ones take a minute's (a
 * second's) puts in one add (kds_shard_stats.min_end): the same buckets, peaks and
 * merges as one add per put, with puts that store, puts throttled whole, gaps of
 * minutes, and a new shard within a minute that lowers the shards' bucket limit to 4
 * minutes, below the horizon, so that offered_min is kept from then on (rebuilt from
 * the minutes so far). */
START_TEST(test_put_series_per_minute)
{
    fixture f;
    fx_init(&f, 2, small_series);
    kds_shard *sh = f.st.shards[0];
    ck_assert(!sh->st.track_offered);
    sim_series rec, bytes, off, srec, sbytes;
    sim_series_init(&rec, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&bytes, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&off, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&srec, SIM_S(1), SIM_SERIES_SUM);
    sim_series_init(&sbytes, SIM_S(1), SIM_SERIES_SUM);
    sim_series_set_limit(&rec, 8);
    sim_series_set_limit(&bytes, 8);
    sim_series_set_limit(&off, 1);
    sim_series_set_limit(&srec, 64);
    sim_series_set_limit(&sbytes, 64);
    uint64_t seed = 0x9e3779b97f4a7c15u;
    sim_time t = 0;
    bool grown = false;
    for (int i = 0; i < 3000; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        /* Mostly tens of ms apart, now and then minutes. */
        t += seed % 50 == 0 ? (sim_time)(seed % SIM_MIN(3)) : (sim_time)(seed % SIM_MS(90));
        at(&f, t);
        if (!grown && t >= SIM_MIN(3) + SIM_S(20)) {
            /* A third shard: 16 buckets over 3 shards, each series merges down to 4. */
            ck_assert_ptr_nonnull(kds__shard_new(&f.st, 0, 1));
            ck_assert(sh->st.track_offered);
            sim_series_set_limit(&rec, 4);
            sim_series_set_limit(&bytes, 4);
            grown = true;
        }
        uint32_t n = 1 + (uint32_t)(seed % 150);
        kds_put_result r;
        kds_stream_put(&f.st, sh, n, n * (100 + seed % 900), 0, 0, 0, &r);
        if (r.stored > 0) {
            sim_series_add_sum(&rec, t, r.stored);
            sim_series_add_sum(&bytes, t, (double)r.stored_bytes);
            sim_series_add_sum(&srec, t, r.stored);
            sim_series_add_sum(&sbytes, t, (double)r.stored_bytes);
        }
        sim_series_add_sum(&off, t, r.stored + r.throttled);
    }
    ck_assert(grown);
    ck_assert_uint_gt(sh->st.write_throttled_records, 0);
    ck_assert_int_gt(rec.width, rec.base); /* the minutes did merge */
    ck_assert_int_gt(srec.width, srec.base);
    sim_time end = t + 1;
    kds_stream_finish(&f.st, end);
    sim_series *mine[] = {&rec, &bytes, &srec, &sbytes};
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++) {
        ck_assert_int_eq(sim_series_extend(mine[i], end), 0);
        ck_assert_int_eq(sim_series_flush(mine[i]), 0);
    }
    same_buckets(&sh->st.in_records_min, &rec, "records per minute");
    same_buckets(&sh->st.in_bytes_min, &bytes, "bytes per minute");
    same_buckets(&f.st.st.in_records_s, &srec, "records per second");
    same_buckets(&f.st.st.in_bytes_s, &sbytes, "bytes per second");
    ck_assert(sim_series_max(&sh->st.offered_min) == sim_series_max(&off));
    sim_series *all[] = {&rec, &bytes, &off, &srec, &sbytes};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sim_series_fini(all[i]);
    fx_fini(&f);
}
END_TEST

/* ---- read budget ---------------------------------------------------------------------- */

/* Five calls at once use the 1 s deep, 5 calls/s budget; the sixth is throttled; one
 * call's worth comes back every 200 ms. */
START_TEST(test_read_calls_per_second)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    for (int i = 0; i < 5; i++)
        ck_assert(kds_stream_read_admit(&f.st, sh));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    ck_assert_uint_eq(sh->st.read_calls, 5);
    ck_assert_uint_eq(sh->st.read_throttled_calls, 1);
    at(&f, SIM_MS(199));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    at(&f, SIM_MS(200));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    ck_assert_uint_eq(sh->st.read_throttled_calls, 3);
    fx_fini(&f);
}
END_TEST

/* Calls every 10 ms for 10 s: about 5 calls/s get through (plus the initial 5). */
START_TEST(test_read_calls_sustained)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    uint64_t ok = 0;
    for (int i = 0; i < 1000; i++) {
        at(&f, SIM_MS(10) * i);
        ok += kds_stream_read_admit(&f.st, sh);
    }
    /* 5 at first, then one per 200 ms over 9.99 s: 5 + 49 = 54. */
    ck_assert_uint_eq(ok, 54);
    ck_assert_uint_eq(sh->st.read_calls, 54);
    ck_assert_uint_eq(sh->st.read_throttled_calls, 1000 - 54);
    fx_fini(&f);
}
END_TEST

/* After a call that returned 10 MiB, calls in the next 5 s are throttled (with the
 * defaults the byte debt alone would clear at 4 s). */
START_TEST(test_read_big_call_window)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 10000, 10 * KDS_MIB);
    ck_assert_uint_eq(sh->st.bytes_out, 10 * KDS_MIB);
    ck_assert_uint_eq(sh->st.records_out, 10000);
    sim_time probes[] = {SIM_MS(100), SIM_S(1), SIM_MS(4500), SIM_S(5) - 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        at(&f, probes[i]);
        ck_assert_msg(!kds_stream_read_admit(&f.st, sh), "admitted at %lld ns",
                      (long long)probes[i]);
    }
    ck_assert_uint_eq(sh->st.read_throttled_calls, 4);
    at(&f, SIM_S(5));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    ck_assert_uint_eq(sh->st.read_calls, 2);
    fx_fini(&f);
}
END_TEST

static void big_read_budget(kds_stream_cfg *c)
{
    c->read_bytes_per_s = 100 * KDS_MIB; /* no debt from one 10 MiB call */
}

/* The 5 s window alone, without byte debt: opened by a call that returned the 10 MiB
 * limit to within one record (calls return whole records), not by a call that
 * stopped well short of it. */
START_TEST(test_read_big_call_window_alone)
{
    fixture f;
    fx_init(&f, 1, big_read_budget);
    kds_shard *sh = f.st.shards[0];
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 8, 8 * KDS_MIB); /* a 9th MiB record would still fit */
    at(&f, SIM_S(1));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 100, 10 * KDS_MIB - 1); /* the next record would not */
    at(&f, SIM_S(2));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    at(&f, SIM_S(6) - 1);
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    at(&f, SIM_S(6));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    fx_fini(&f);
}
END_TEST

/* An overdrawn byte budget throttles the call that finds it and the next 1 s, even
 * after the debt is paid back. */
START_TEST(test_read_short_budget_penalty)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 3000, 3 * KDS_MIB); /* 1 MiB in debt, 0.5 s */
    at(&f, SIM_MS(250));
    ck_assert(!kds_stream_read_admit(&f.st, sh)); /* in debt: blocked until 1.25 s */
    ck_assert_int_eq(sh->read_blocked_until, SIM_MS(1250));
    at(&f, SIM_MS(600)); /* debt paid back at 500 ms, still in the penalty */
    ck_assert(!kds_bucket_in_debt(&sh->rbytes, SIM_MS(600)));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    at(&f, SIM_MS(1250) - 1);
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    ck_assert_uint_eq(sh->st.read_throttled_calls, 3);
    at(&f, SIM_MS(1250));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    ck_assert_uint_eq(sh->st.read_calls, 2);
    fx_fini(&f);
}
END_TEST

static void read_records_limit(kds_stream_cfg *c)
{
    c->read_records_per_s = 2000;
}

/* AWS's quota page also gives 2,000 records/s per shard for GetRecords (model.md section
 * 3: off by default, since it conflicts with the 10,000-record call). Off, a call of
 * 10,000 small records leaves the next call free; on, it overdraws the records budget
 * by 8,000 (4 s at 2,000/s) and the next calls are throttled like an overdrawn byte
 * budget. */
START_TEST(test_read_records_limit)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 10000, 10000 * 100);
    at(&f, SIM_MS(250));
    ck_assert(kds_stream_read_admit(&f.st, sh)); /* off by default */
    fx_fini(&f);

    fx_init(&f, 1, read_records_limit);
    sh = f.st.shards[0];
    ck_assert(kds_stream_read_admit(&f.st, sh));
    kds_stream_read_charge(&f.st, sh, 10000, 10000 * 100);
    at(&f, SIM_MS(250));
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    ck_assert_int_eq(sh->read_blocked_until, SIM_MS(1250));
    at(&f, SIM_MS(3999)); /* the debt is paid back at 4 s */
    ck_assert(!kds_stream_read_admit(&f.st, sh));
    at(&f, SIM_S(4) + SIM_S(1));
    ck_assert(kds_stream_read_admit(&f.st, sh));
    fx_fini(&f);
}
END_TEST

/* ---- retention ------------------------------------------------------------------------ */

START_TEST(test_trim_at_retention)
{
    fixture f;
    fx_init(&f, 1, NULL);
    kds_shard *sh = f.st.shards[0];
    kds_put_result r;
    kds_stream_put(&f.st, sh, 10, 10 * KDS_KIB, 0, 0, 0, &r);
    at(&f, SIM_HOUR(1));
    kds_stream_put(&f.st, sh, 5, 5 * KDS_KIB, 0, 0, 0, &r);
    at(&f, SIM_HOUR(24) - 1);
    kds_stream_trim(&f.st, sh);
    ck_assert_uint_eq(sh->st.records_expired, 0);
    at(&f, SIM_HOUR(24));
    kds_stream_trim(&f.st, sh); /* written at 0, exactly 24 h old: gone */
    ck_assert_uint_eq(sh->st.records_expired, 10);
    ck_assert_uint_eq(sh->log.head_pos, 10);
    at(&f, SIM_HOUR(26));
    kds_stream_finish(&f.st, SIM_HOUR(26));
    ck_assert_uint_eq(sh->st.records_expired, 15);
    ck_assert_uint_eq(sh->log.bytes, 0);
    ck_assert_uint_eq(sh->st.records_in, 15);
    fx_fini(&f);
}
END_TEST

START_TEST(test_init_rejects_bad_cfg)
{
    sim *s = sim_new(1);
    kds_stream st;
    kds_stream_cfg cfg;
    kds_stream_cfg_defaults(&cfg);
    cfg.shards = 0;
    ck_assert_int_ne(kds_stream_init(&st, s, &cfg), 0);
    kds_stream_cfg_defaults(&cfg);
    cfg.retention = 0;
    ck_assert_int_ne(kds_stream_init(&st, s, &cfg), 0);
    kds_stream_fini(NULL);
    sim_free(s);
}
END_TEST

static Suite *stream_suite(void)
{
    Suite *s = suite_create("kds_stream");

    TCase *shards = tcase_create("shards");
    tcase_add_test(shards, test_even_split_ranges);
    tcase_add_test(shards, test_floor_budget_shared);
    tcase_add_test(shards, test_route_model_examples);
    tcase_add_test(shards, test_shard_id);
    tcase_add_test(shards, test_seqno_format);
    tcase_add_test(shards, test_init_rejects_bad_cfg);
    suite_add_tcase(s, shards);

    TCase *write = tcase_create("write");
    tcase_add_test(write, test_put_records_limit);
    tcase_add_test(write, test_put_bytes_limit);
    tcase_add_test(write, test_put_large_record_tank);
    tcase_add_test(write, test_put_large_records_share_the_budget);
    tcase_add_test(write, test_put_duplicates_and_marks);
    tcase_add_test(write, test_append_listeners);
    tcase_add_test(write, test_put_internal_failures);
    tcase_add_test(write, test_put_sustained_rate);
    tcase_add_test(write, test_put_series_per_minute);
    suite_add_tcase(s, write);

    TCase *read = tcase_create("read");
    tcase_add_test(read, test_read_calls_per_second);
    tcase_add_test(read, test_read_calls_sustained);
    tcase_add_test(read, test_read_big_call_window);
    tcase_add_test(read, test_read_big_call_window_alone);
    tcase_add_test(read, test_read_records_limit);
    tcase_add_test(read, test_read_short_budget_penalty);
    suite_add_tcase(s, read);

    TCase *retention = tcase_create("retention");
    tcase_add_test(retention, test_trim_at_retention);
    suite_add_tcase(s, retention);
    return s;
}

int main(void)
{
    return tu_run_suite(stream_suite());
}
