/* check_kds_producer.c - tests of the producer model in small whole worlds (kds_world):
 * a shard offered more records/s or more bytes/s than its write budget, retries riding
 * out a transient burst (and their absence losing records), duplicates from lost
 * replies, the producer's conservation of records, validation of oversized records,
 * PutRecord, several clients, and determinism under a fixed seed.
 *
 * Every world has a fixed seed; limits are checked against what the token buckets
 * allow over the run, within a few per cent.
 */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

/* One stream and up to four producers; no consumers. */
typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod[4];
    kds_world w;
} fixture;

static void fx_defaults(fixture *f, uint32_t shards, sim_time duration)
{
    memset(f, 0, sizeof *f);
    f->cfg.seed = 20261130;
    f->cfg.duration = duration;
    kds_stream_cfg_defaults(&f->cfg.stream);
    f->cfg.stream.shards = shards;
    for (int i = 0; i < 4; i++) {
        kds_producer_cfg_defaults(&f->prod[i]);
        f->prod[i].name = i == 0 ? "p0" : i == 1 ? "p1" : i == 2 ? "p2" : "p3";
    }
    f->cfg.producers = f->prod;
    f->cfg.n_producers = 1;
}

static void fx_run(fixture *f)
{
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    kds_world_run(&f->w);
}

static const kds_producer_stats *pst(fixture *f, size_t i)
{
    return kds_producer_stats_get(f->w.producers[i]);
}

static kds_shard_stats *sst(fixture *f, size_t i)
{
    return &f->w.stream.shards[i]->st;
}

/* Sum of a uint64_t shard counter (its offset in kds_shard_stats) over the shards. */
static uint64_t shard_sum(fixture *f, size_t off)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&f->w.stream.shards[i]->st + off, sizeof v);
        sum += v;
    }
    return sum;
}
#define SHARD_SUM(f, field) shard_sum((f), offsetof(kds_shard_stats, field))

/* The producer's books balance: every distinct record attempted is written, given up
 * or still in flight, and nothing is counted twice. */
static void check_conservation(const kds_producer_stats *ps)
{
    ck_assert_uint_le(ps->records_written + ps->records_given_up, ps->records_attempted);
    ck_assert_uint_eq(ps->records_attempted,
                      ps->records_written + ps->records_given_up + ps->records_in_flight);
    ck_assert_uint_le(ps->records_too_large, ps->records_given_up);
}

static void assert_near(double got, double want, double rel, const char *what)
{
    ck_assert_msg(fabs(got - want) <= rel * want, "%s: %.1f, expected %.1f +- %.0f%%", what, got,
                  want, rel * 100);
}

/* ---- write limits --------------------------------------------------------------------- */

/* One shard offered 1,500 records/s of 1 KiB for 60 s: it stores about 1,000/s (plus
 * its one-second burst) and throttles about 500/s; without retries the throttled
 * records are given up. */
START_TEST(test_records_per_second_limit)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(60));
    f.prod[0].rate = kds_rate_constant(1500);
    f.prod[0].size = sim_dist_const(1024);
    f.prod[0].max_attempts = 1;
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    kds_shard_stats *ss = sst(&f, 0);

    assert_near((double)ss->records_in, 1000.0 * 60 + 1000, 0.02, "records stored");
    assert_near((double)ss->write_throttled_records, 500.0 * 60 - 1000, 0.04, "throttled");
    assert_near((double)ps->records_attempted, 1500.0 * 60, 0.01, "attempted");
    /* Every throttled record was a first send, and lost. */
    ck_assert_uint_eq(ps->write_throttled_records, ss->write_throttled_records);
    ck_assert_uint_eq(ps->records_given_up, ss->write_throttled_records);
    ck_assert_uint_eq(ps->records_retried, 0);
    ck_assert_uint_eq(ps->records_written, ss->records_in);
    ck_assert_uint_eq(ss->bytes_in, ss->records_in * 1024);
    ck_assert_uint_eq(ss->write_throttled_bytes, ss->write_throttled_records * 1024);
    check_conservation(ps);
    /* The per-minute series adds up to the counter. */
    double sum = 0;
    for (size_t i = 0; i < ss->in_records_min.n; i++)
        sum += sim_series_get(&ss->in_records_min, i);
    ck_assert_uint_eq((uint64_t)sum, ss->records_in);
    kds_world_fini(&f.w);
}
END_TEST

/* The same load on four shards (random keys): well within 4,000 records/s, nothing is
 * throttled and every record is written. */
START_TEST(test_records_spread_over_shards)
{
    fixture f;
    fx_defaults(&f, 4, SIM_S(30));
    f.prod[0].rate = kds_rate_constant(1500);
    f.prod[0].stop = SIM_S(25);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_eq(SHARD_SUM(&f, write_throttled_records), 0);
    ck_assert_uint_eq(ps->records_given_up, 0);
    ck_assert_uint_eq(ps->records_in_flight, 0);
    ck_assert_uint_eq(ps->records_written, ps->records_attempted);
    ck_assert_uint_eq(SHARD_SUM(&f, records_in), ps->records_written);
    assert_near((double)ps->records_attempted, 1500.0 * 25, 0.01, "attempted");
    for (size_t i = 0; i < 4; i++)
        assert_near((double)sst(&f, i)->records_in, ps->records_written / 4.0, 0.05,
                    "shard's share");
    kds_world_fini(&f.w);
}
END_TEST

/* One shard offered 1,200 KiB/s as 12 records/s of 100 KiB: throttled on bytes, about
 * 176 KiB/s (1,200 - 1,024), while the records/s budget is nearly untouched. */
START_TEST(test_bytes_per_second_limit)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(60));
    f.prod[0].rate = kds_rate_constant(12);
    f.prod[0].size = sim_dist_const(100 * 1024);
    f.prod[0].max_attempts = 1;
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    kds_shard_stats *ss = sst(&f, 0);
    kds_shard *sh = f.w.stream.shards[0];

    /* Offered 60 x 1,200 KiB; capacity 60 x 1,024 KiB plus 1,024 KiB of burst. */
    double want_kib = 60.0 * (1200 - 1024) - 1024;
    assert_near((double)ss->write_throttled_bytes / 1024, want_kib, 0.05, "throttled KiB");
    assert_near((double)ss->write_throttled_records, want_kib / 100, 0.05, "throttled records");
    assert_near((double)ss->bytes_in / 1024, 60.0 * 1024 + 1024, 0.02, "stored KiB");
    ck_assert_uint_eq(ps->records_given_up, ss->write_throttled_records);
    /* The records budget is far from its limit: ~12 records/s of 1,000. */
    ck_assert_uint_lt(ss->records_in, 60 * 12);
    ck_assert_uint_ge(kds_bucket_avail(&sh->wrecords, sim_now(f.w.sim)), 950);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- retries -------------------------------------------------------------------------- */

/* 500 records/s with a 1 s burst of 4,000 records/s at 10 s (average well below the
 * limit), stopping at 30 s, then a quiet tail to 60 s. */
static kds_rate_step burst_steps[] = {{SIM_S(10), 4000}, {SIM_S(11), 500}};

static void burst_world(fixture *f, uint32_t max_attempts)
{
    fx_defaults(f, 1, SIM_S(60));
    f->prod[0].rate = (kds_rate){.kind = KDS_RATE_STEPS,
                                 .rate = 500,
                                 .steps = burst_steps,
                                 .n_steps = sizeof burst_steps / sizeof burst_steps[0]};
    f->prod[0].size = sim_dist_const(512);
    f->prod[0].stop = SIM_S(30);
    f->prod[0].max_attempts = max_attempts;
    f->prod[0].backoff_base = SIM_MS(100);
    f->prod[0].backoff_max = SIM_S(2);
}

/* With enough attempts, the throttled records of a transient burst all get in. */
START_TEST(test_retries_absorb_burst)
{
    fixture f;
    burst_world(&f, 30);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    kds_shard_stats *ss = sst(&f, 0);
    assert_near((double)ps->records_attempted, 500.0 * 29 + 4000, 0.01, "attempted");
    ck_assert_uint_gt(ps->write_throttled_records, 1000); /* the burst did throttle */
    ck_assert_uint_gt(ps->records_retried, 1000);
    ck_assert_uint_eq(ps->records_given_up, 0);
    ck_assert_uint_eq(ps->records_in_flight, 0);
    ck_assert_uint_eq(ps->records_written, ps->records_attempted);
    ck_assert_uint_eq(ss->records_in, ps->records_written);
    ck_assert_uint_eq(ps->duplicates_written, 0);
    /* Every refused send of a record is either resent or given up. */
    ck_assert_uint_eq(ps->records_retried, ps->write_throttled_records);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* Without retries the same burst loses what was throttled: about 4,000 - 2,000. */
START_TEST(test_no_retries_lose_burst)
{
    fixture f;
    burst_world(&f, 1);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    kds_shard_stats *ss = sst(&f, 0);
    ck_assert_uint_gt(ps->records_given_up, 0);
    assert_near((double)ps->records_given_up, 2000, 0.15, "given up");
    ck_assert_uint_eq(ps->records_given_up, ss->write_throttled_records);
    ck_assert_uint_eq(ps->records_written + ps->records_given_up, ps->records_attempted);
    ck_assert_uint_eq(ps->records_in_flight, 0);
    ck_assert_uint_eq(ps->records_retried, 0);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* A load above the limit for the whole run defeats any retry budget: records are
 * given up, and the books still balance while requests are in flight at the end. */
START_TEST(test_sustained_overload_gives_up)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(20));
    f.prod[0].rate = kds_rate_constant(2000);
    f.prod[0].max_attempts = 3;
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_gt(ps->records_given_up, 0);
    ck_assert_uint_gt(ps->records_retried, 0);
    ck_assert_uint_le(sst(&f, 0)->records_in, 1000 * 20 + 1000);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- duplicates ----------------------------------------------------------------------- */

/* Lost replies with retries store records twice: the stream holds every first copy
 * plus every duplicate, and nothing is lost. */
START_TEST(test_duplicates_from_timeouts)
{
    fixture f;
    fx_defaults(&f, 2, SIM_S(120));
    f.prod[0].rate = kds_rate_constant(300);
    f.prod[0].stop = SIM_S(60);
    f.prod[0].timeout_rate = 0.1;
    f.prod[0].timeout = SIM_S(2);
    f.prod[0].max_attempts = 6;
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_gt(ps->calls_timed_out, 0);
    ck_assert_uint_gt(ps->duplicates_written, 0);
    ck_assert_uint_eq(SHARD_SUM(&f, records_in), ps->records_written + ps->duplicates_written);
    ck_assert_uint_eq(ps->records_given_up, 0);
    ck_assert_uint_eq(ps->records_in_flight, 0);
    ck_assert_uint_eq(ps->records_written, ps->records_attempted);
    /* The duplicates are marked in the logs too. */
    uint64_t dups = 0;
    for (size_t i = 0; i < f.w.stream.n_shards; i++) {
        const kds_log *l = &f.w.stream.shards[i]->log;
        for (size_t j = 0; j < l->n; j++)
            dups += l->runs[(l->head + j) & (l->cap - 1)].dups;
    }
    ck_assert_uint_eq(dups, ps->duplicates_written);
    /* About 10% of calls lost their reply, each duplicating a whole sub-batch. */
    assert_near((double)ps->calls_timed_out / (double)ps->put_calls, 0.1, 0.3, "timeout share");
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* A lost reply's resend leaves the client its timeout after the send (then the backoff,
 * 0 here): with every reply lost and a constant 20 ms round trip, a request served at t
 * was sent at t - 20 ms, so its resend is served at t - 20 ms + 2 s + 20 ms = t + 2 s,
 * attempt after attempt (not t + 2.02 s, as when the timeout ran from the service's
 * answer). */
START_TEST(test_timeout_runs_from_the_send)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(20));
    f.prod[0].rate = kds_rate_constant(100);
    f.prod[0].stop = SIM_MS(50); /* five records, one request */
    f.prod[0].timeout_rate = 1.0;
    f.prod[0].timeout = SIM_S(2);
    f.prod[0].max_attempts = 4;
    f.prod[0].backoff_base = 0;
    f.prod[0].latency_ms = sim_dist_const(20);
    char *text = tw_run_traced(&f.w, &f.cfg);
    double t[8];
    unsigned att[8];
    size_t n = 0;
    for (const char *l = text; l && *l && n < 8; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        double ts;
        unsigned a;
        const char *at = strstr(l, "(attempt ");
        const char *nl = strchr(l, '\n');
        const char *outcome = strstr(l, " -> "); /* a shard's put, not a resend's line */
        if (at && (!nl || at < nl) && outcome && (!nl || outcome < nl) && strstr(l, " put ") &&
            sscanf(l, "%lf", &ts) == 1 &&
            sscanf(at, "(attempt %u)", &a) == 1) {
            t[n] = ts;
            att[n++] = a;
        }
    }
    ck_assert_uint_eq(n, 4);
    for (size_t i = 1; i < n; i++) {
        ck_assert_uint_eq(att[i], att[i - 1] + 1);
        ck_assert_msg(t[i] - t[i - 1] > 1.9995 && t[i] - t[i - 1] < 2.0005,
                      "attempt %u served %.4f s after the one before, not 2 s", att[i],
                      t[i] - t[i - 1]);
    }
    free(text);
    kds_world_fini(&f.w);
}
END_TEST

/* Without retries a lost reply duplicates nothing (the client does not resend). */
START_TEST(test_timeouts_without_retries)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(30));
    f.prod[0].rate = kds_rate_constant(300);
    f.prod[0].stop = SIM_S(20);
    f.prod[0].timeout_rate = 0.2;
    f.prod[0].max_attempts = 1;
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_gt(ps->calls_timed_out, 0);
    ck_assert_uint_eq(ps->duplicates_written, 0);
    ck_assert_uint_eq(ps->records_given_up, 0); /* they were stored */
    ck_assert_uint_eq(ps->records_written, ps->records_attempted);
    ck_assert_uint_eq(sst(&f, 0)->records_in, ps->records_written);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- sizes, APIs, clients ------------------------------------------------------------- */

/* Records above max_record_size are refused before sending and given up. */
START_TEST(test_too_large_records)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(10));
    f.prod[0].rate = kds_rate_constant(10);
    f.prod[0].size = sim_dist_const(2.0 * 1024 * 1024);
    f.prod[0].stop = SIM_S(5);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_eq(ps->records_attempted, 50);
    ck_assert_uint_eq(ps->records_too_large, 50);
    ck_assert_uint_eq(ps->records_given_up, 50);
    ck_assert_uint_eq(ps->records_written, 0);
    ck_assert_uint_eq(ps->put_calls, 0);
    ck_assert_uint_eq(sst(&f, 0)->records_in, 0);
    check_conservation(ps);
    kds_world_fini(&f.w);
}
END_TEST

/* Sizes drawn from a distribution: bytes stored are the sum of the records' sizes
 * (prorated per shard), and about rate x mean. */
START_TEST(test_size_distribution)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(30));
    f.prod[0].rate = kds_rate_constant(200);
    f.prod[0].size = (sim_dist){SIM_DIST_UNIFORM, 100, 900, 0, INFINITY};
    f.prod[0].stop = SIM_S(20);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_eq(ps->records_written, ps->records_attempted);
    assert_near((double)sst(&f, 0)->bytes_in, 200.0 * 20 * 500, 0.03, "bytes stored");
    kds_world_fini(&f.w);
}
END_TEST

/* Bytes of the largest stored run: with one shard and no throttling, one request. */
typedef struct run_watch {
    uint64_t last_bytes_in;
    uint64_t max_run;
    uint64_t runs;
} run_watch;

static void watch_append(void *ctx, kds_shard *sh)
{
    run_watch *rw = ctx;
    uint64_t run = sh->st.bytes_in - rw->last_bytes_in;
    rw->last_bytes_in = sh->st.bytes_in;
    if (run > rw->max_run)
        rw->max_run = run;
    rw->runs++;
}

/* PutRecords requests of records of different sizes stop at batch.bytes (the KPL's
 * CollectionMaxSize; AWS refuses a request above 10 MiB): a record that would take a
 * request past it waits for the next one. Records of 1 to 100 KiB with batch.bytes at
 * 10 MiB: about 200 a request, and none above 10 MiB. */
START_TEST(test_put_records_byte_limit_varied_sizes)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(20));
    /* A shard that throttles nothing, so that every request is one run of the log. */
    f.cfg.stream.write_bytes_per_s = 1024 * KDS_MIB;
    f.cfg.stream.write_records_per_s = 1000000;
    f.prod[0].rate = kds_rate_constant(2000);
    f.prod[0].size = (sim_dist){SIM_DIST_UNIFORM, 1024, 100 * 1024, 0, INFINITY};
    f.prod[0].batch_bytes = 10 * KDS_MIB;
    f.prod[0].linger = SIM_S(1);
    f.prod[0].stop = SIM_S(15);
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    run_watch rw = {0, 0, 0};
    ck_assert_int_eq(kds_shard_on_append(f.w.stream.shards[0], watch_append, &rw), 0);
    kds_world_run(&f.w);
    const kds_producer_stats *ps = pst(&f, 0);
    check_conservation(ps);
    ck_assert_uint_eq(ps->records_attempted, 30000);
    ck_assert_uint_eq(ps->records_written, 30000);
    ck_assert_uint_eq(rw.runs, ps->put_calls);
    ck_assert_uint_le(rw.max_run, 10 * KDS_MIB);
    /* Requests are filled: one reaches 10 MiB less at most one record. A flush every
     * 250 ms (500 records arrive in that time) holds about 24.7 MiB: three requests. */
    ck_assert_uint_ge(rw.max_run, 10 * KDS_MIB - 100 * 1024);
    ck_assert_uint_le(ps->put_calls, 15 * 4 * 3);
    kds_world_fini(&f.w);
}
END_TEST

/* The billing meters of records of different sizes spread over many shards add up to
 * what the records weigh. Sizes of 100 B or 60 KiB (a uniform law far wider than its
 * clamps: a size in between has a chance of 3e-8), so that the totals follow from the
 * stored records and bytes: each small record is 1 PUT payload unit and 1 KiB billed,
 * each large one 3 units and 60 KiB. Requests of up to 500 records over 32 shards
 * give parts of one or a few records, whose own shares rounded down lose most of a
 * unit each. */
START_TEST(test_varied_sizes_meters_exact_over_shards)
{
    fixture f;
    fx_defaults(&f, 32, SIM_S(20));
    f.cfg.stream.write_bytes_per_s = 1024 * KDS_MIB; /* nothing throttled */
    f.cfg.stream.write_records_per_s = 1000000;
    f.prod[0].rate = kds_rate_constant(300);
    f.prod[0].size = (sim_dist){SIM_DIST_UNIFORM, -1e12, 1e12, 100, 61440};
    f.prod[0].linger = SIM_MS(100);
    f.prod[0].stop = SIM_S(15);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_eq(ps->records_written, 4500);
    uint64_t n = SHARD_SUM(&f, records_in), bytes = SHARD_SUM(&f, bytes_in);
    ck_assert_uint_eq(n, 4500);
    ck_assert_uint_eq((bytes - 100 * n) % (61440 - 100), 0);
    uint64_t big = (bytes - 100 * n) / (61440 - 100);
    ck_assert_uint_gt(big, 2000);
    ck_assert_uint_lt(big, 2500);
    ck_assert_uint_eq(SHARD_SUM(&f, put_units), n + 2 * big);
    ck_assert_uint_eq(SHARD_SUM(&f, bytes_in_kib_rounded), 1024 * (n - big) + 61440 * big);
    kds_world_fini(&f.w);
}
END_TEST

/* KPL aggregation of user records of 80 to 120 KiB, up to 10 an aggregate: ten would
 * often pass the stream's 1 MiB, so an aggregate closes before the user record that
 * would take it past (AggregationMaxSize) and that record opens the next. None is
 * refused as too large, no stored record is above 1 MiB (PutRecord: each put is one
 * record), and every user record is stored: about 3,000 of 100 KiB, in more than 300
 * aggregates. Records of a constant 200 KiB go five to an aggregate (5 x 200 KiB +
 * 20 B fits, six do not): 1,000 of them make 200 aggregates. */
START_TEST(test_aggregates_close_before_max_record_size)
{
    for (int constant = 0; constant < 2; constant++) {
        fixture f;
        fx_defaults(&f, 1, SIM_S(20));
        f.cfg.stream.write_bytes_per_s = 1024 * KDS_MIB;
        f.cfg.stream.write_records_per_s = 1000000;
        f.prod[0].api = KDS_API_PUT_RECORD;
        f.prod[0].aggregate = 10;
        f.prod[0].stop = SIM_S(15);
        if (constant) {
            f.prod[0].rate = kds_rate_constant(1000.0 / 15);
            f.prod[0].size = sim_dist_const(200 * 1024);
        } else {
            f.prod[0].rate = kds_rate_constant(200);
            f.prod[0].size = (sim_dist){SIM_DIST_UNIFORM, 80 * 1024, 120 * 1024, 0, INFINITY};
        }
        ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
        run_watch rw = {0, 0, 0};
        ck_assert_int_eq(kds_shard_on_append(f.w.stream.shards[0], watch_append, &rw), 0);
        kds_world_run(&f.w);
        const kds_producer_stats *ps = pst(&f, 0);
        check_conservation(ps);
        ck_assert_uint_eq(ps->records_too_large, 0);
        ck_assert_uint_eq(ps->records_written, ps->records_attempted);
        ck_assert_uint_le(rw.max_run, KDS_MIB);
        if (constant) {
            ck_assert_uint_eq(ps->records_attempted, 200);
            ck_assert_uint_eq(rw.max_run, 5 * 200 * 1024 + 20);
        } else {
            ck_assert_uint_gt(ps->records_attempted, 300);
            assert_near((double)sst(&f, 0)->bytes_in, 3000.0 * 100 * 1024, 0.03,
                        "user bytes stored");
        }
        kds_world_fini(&f.w);
    }
}
END_TEST

/* SequenceNumberForOrdering: a client sends its next PutRecord only once the previous
 * one is answered. 1,200 records/s offered over 10 s with a round trip of exactly
 * 20 ms: one client sends one record per round trip, about 500, and the rest wait in
 * its buffer; four clients send four times as many. Nothing is throttled (at most 200
 * records/s reach the shard), and every record is sent, stored, in flight or buffered. */
START_TEST(test_ordering_one_put_in_flight_per_client)
{
    for (uint32_t clients = 1; clients <= 4; clients += 3) {
        fixture f;
        fx_defaults(&f, 1, SIM_S(10));
        f.prod[0].rate = kds_rate_constant(1200);
        f.prod[0].api = KDS_API_PUT_RECORD;
        f.prod[0].ordered = true;
        f.prod[0].clients = clients;
        f.prod[0].latency_ms = sim_dist_const(20);
        fx_run(&f);
        const kds_producer_stats *ps = pst(&f, 0);
        check_conservation(ps);
        ck_assert_uint_ge(ps->records_attempted, 495 * clients);
        ck_assert_uint_le(ps->records_attempted, 501 * clients);
        ck_assert_uint_eq(ps->put_calls, ps->records_attempted);
        ck_assert_uint_le(ps->records_in_flight, clients);
        ck_assert_uint_eq(ps->write_throttled_records, 0);
        ck_assert_uint_ge(ps->records_attempted + ps->records_buffered, 11990);
        ck_assert_uint_le(ps->records_attempted + ps->records_buffered, 12000);
        kds_world_fini(&f.w);
    }
}
END_TEST

/* PutRecord sends one record per call. */
START_TEST(test_put_record_api)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(15));
    f.prod[0].rate = kds_rate_constant(50);
    f.prod[0].api = KDS_API_PUT_RECORD;
    f.prod[0].stop = SIM_S(10);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    ck_assert_uint_eq(ps->records_attempted, 500);
    ck_assert_uint_eq(ps->put_calls, 500);
    ck_assert_uint_eq(ps->records_written, 500);
    kds_world_fini(&f.w);
}
END_TEST

/* PutRecords batches: 500 records per request at most. */
START_TEST(test_put_records_batches)
{
    fixture f;
    fx_defaults(&f, 4, SIM_S(15));
    f.prod[0].rate = kds_rate_constant(3000);
    f.prod[0].linger = SIM_S(1);
    f.prod[0].stop = SIM_S(10);
    fx_run(&f);
    const kds_producer_stats *ps = pst(&f, 0);
    /* 30,000 evenly spaced records; the floating-point carry may drop the last one
     * (see test_even_arrivals_exact). */
    ck_assert_uint_ge(ps->records_attempted, 30000);
    ck_assert_uint_le(ps->records_attempted, 30000);
    ck_assert_uint_ge(ps->put_calls, 30000 / 500);
    ck_assert_uint_le(ps->put_calls, 30000 / 500 + 15); /* a part batch now and then */
    kds_world_fini(&f.w);
}
END_TEST

/* Several clients share the rate; several producers add up. */
START_TEST(test_clients_and_producers)
{
    fixture f;
    fx_defaults(&f, 2, SIM_S(20));
    f.cfg.n_producers = 3;
    f.prod[0].rate = kds_rate_constant(100);
    f.prod[0].clients = 4;
    f.prod[1].rate = kds_rate_constant(200);
    f.prod[1].poisson = true;
    f.prod[2].rate = kds_rate_constant(50);
    f.prod[2].keys.kind = KDS_KEYS_FIXED;
    f.prod[2].keys.fixed = "s-90"; /* shard 1 of 2 */
    for (int i = 0; i < 3; i++)
        f.prod[i].stop = SIM_S(10);
    f.cfg.stream.compact_span = 0; /* the runs are counted by producer below, unmerged */
    fx_run(&f);
    assert_near((double)pst(&f, 0)->records_attempted, 1000, 0.01, "4 clients");
    assert_near((double)pst(&f, 1)->records_attempted, 2000, 0.08, "poisson");
    ck_assert_uint_eq(pst(&f, 2)->records_attempted, 500);
    uint64_t written = 0;
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(pst(&f, i)->records_written, pst(&f, i)->records_attempted);
        written += pst(&f, i)->records_written;
    }
    ck_assert_uint_eq(SHARD_SUM(&f, records_in), written);
    /* The fixed key's records all landed in shard 1: count runs written by producer 2. */
    uint64_t in0 = 0, in1 = 0;
    for (size_t s = 0; s < 2; s++) {
        const kds_log *l = &f.w.stream.shards[s]->log;
        for (size_t j = 0; j < l->n; j++) {
            const kds_run *r = &l->runs[(l->head + j) & (l->cap - 1)];
            if (r->src == 2)
                *(s == 0 ? &in0 : &in1) += r->count;
        }
    }
    ck_assert_uint_eq(in0, 0);
    ck_assert_uint_eq(in1, 500);
    kds_world_fini(&f.w);
}
END_TEST

/* Nothing before start, nothing after stop. */
START_TEST(test_start_stop)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(30));
    f.prod[0].rate = kds_rate_constant(100);
    f.prod[0].start = SIM_S(10);
    f.prod[0].stop = SIM_S(15);
    fx_run(&f);
    ck_assert_uint_eq(pst(&f, 0)->records_attempted, 500);
    const kds_log *l = &f.w.stream.shards[0]->log;
    ck_assert_int_ge(l->runs[l->head].t_first, SIM_S(10));
    ck_assert_int_le(l->runs[(l->head + l->n - 1) & (l->cap - 1)].t_last, SIM_S(16));
    kds_world_fini(&f.w);
}
END_TEST

/* Regression (a bug found by this test and fixed):
 * evenly spaced arrivals should give exactly rate x time records, but client_flush
 * adds each flush's floating-point integral to `carry` and takes floor(carry): the
 * sum of the pieces falls a hair short of the whole (29,999.9999... for 3,000/s over
 * 10 s) and the last record never arrives. Fix: floor(c->carry + 1e-9). */
START_TEST(test_even_arrivals_exact)
{
    double rates[] = {3000, 700, 1500, 333};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        fixture f;
        fx_defaults(&f, 4, SIM_S(15));
        f.prod[0].rate = kds_rate_constant(rates[i]);
        f.prod[0].linger = SIM_S(1);
        f.prod[0].stop = SIM_S(10);
        fx_run(&f);
        ck_assert_msg(pst(&f, 0)->records_attempted == (uint64_t)(rates[i] * 10),
                      "%.0f/s for 10 s: %llu records", rates[i],
                      (unsigned long long)pst(&f, 0)->records_attempted);
        kds_world_fini(&f.w);
    }
}
END_TEST

/* Evenly spaced arrivals are the producer's, shared by its clients: rate x time records
 * in all, however many clients share them. Each client's first record once came only
 * after clients / rate, so 100 clients at 7 records/s wrote nothing in 10 s, and 50 at
 * 0.25/s nothing in 2 minutes. */
START_TEST(test_even_arrivals_many_clients)
{
    static const struct {
        double rate;
        uint32_t clients;
        sim_time stop;
        uint64_t want;
    } cases[] = {
        {7, 100, SIM_S(10), 70}, {0.25, 50, SIM_S(118), 29}, {1000, 3, SIM_S(10), 10000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        fx_defaults(&f, 2, cases[i].stop + SIM_S(5));
        f.prod[0].rate = kds_rate_constant(cases[i].rate);
        f.prod[0].clients = cases[i].clients;
        f.prod[0].stop = cases[i].stop;
        fx_run(&f);
        ck_assert_msg(pst(&f, 0)->records_attempted == cases[i].want,
                      "%g/s over %u clients: %llu records, not %llu", cases[i].rate,
                      cases[i].clients, (unsigned long long)pst(&f, 0)->records_attempted,
                      (unsigned long long)cases[i].want);
        kds_world_fini(&f.w);
    }
}
END_TEST

/* ---- determinism ---------------------------------------------------------------------- */

static void random_world(fixture *f, uint64_t seed)
{
    fx_defaults(f, 4, SIM_S(30));
    f->cfg.seed = seed;
    f->prod[0].rate = kds_rate_constant(5000);
    f->prod[0].poisson = true;
    f->prod[0].size = (sim_dist){SIM_DIST_LOGNORMAL, 800, 0.5, 1, 100000};
    f->prod[0].timeout_rate = 0.05;
    f->cfg.stream.internal_failure_rate = 0.01;
}

/* Producers of one key law share one key table (built, and rebuilt at each reshard,
 * once for them all); another law has its own. */
START_TEST(test_same_law_shares_keys)
{
    fixture f;
    fx_defaults(&f, 4, SIM_S(1));
    char s1[] = "s-", s2[] = "s-";
    const char *prefix[3] = {s1, s2, "t-"};
    for (int i = 0; i < 3; i++) {
        f.prod[i].keys.kind = KDS_KEYS_UNIFORM;
        f.prod[i].keys.count = 1000;
        f.prod[i].keys.prefix = prefix[i];
    }
    f.cfg.n_producers = 3;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    const kds_keys *k0 = kds_producer_keys(f.w.producers[0]);
    ck_assert_ptr_eq(k0, kds_producer_keys(f.w.producers[1]));
    ck_assert_ptr_ne(k0, kds_producer_keys(f.w.producers[2]));
    ck_assert_uint_eq(k0->refs, 2);
    ck_assert_uint_eq(kds_producer_keys(f.w.producers[2])->refs, 1);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_same_seed_same_counters)
{
    fixture a, b;
    random_world(&a, 7);
    random_world(&b, 7);
    fx_run(&a);
    fx_run(&b);
    ck_assert(memcmp(pst(&a, 0), pst(&b, 0), sizeof(kds_producer_stats)) == 0);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(sst(&a, i)->records_in, sst(&b, i)->records_in);
        ck_assert_uint_eq(sst(&a, i)->bytes_in, sst(&b, i)->bytes_in);
        ck_assert_uint_eq(sst(&a, i)->write_throttled_records, sst(&b, i)->write_throttled_records);
    }
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

START_TEST(test_different_seed_different_counters)
{
    fixture a, b;
    random_world(&a, 7);
    random_world(&b, 8);
    fx_run(&a);
    fx_run(&b);
    ck_assert_uint_ne(pst(&a, 0)->records_attempted, pst(&b, 0)->records_attempted);
    int differ = 0;
    for (size_t i = 0; i < 4; i++)
        differ += sst(&a, i)->bytes_in != sst(&b, i)->bytes_in;
    ck_assert_int_eq(differ, 4);
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

static Suite *producer_suite(void)
{
    Suite *s = suite_create("kds_producer");

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_records_per_second_limit);
    tcase_add_test(limits, test_records_spread_over_shards);
    tcase_add_test(limits, test_bytes_per_second_limit);
    suite_add_tcase(s, limits);

    TCase *retries = tcase_create("retries");
    tcase_add_test(retries, test_retries_absorb_burst);
    tcase_add_test(retries, test_no_retries_lose_burst);
    tcase_add_test(retries, test_sustained_overload_gives_up);
    tcase_add_test(retries, test_duplicates_from_timeouts);
    tcase_add_test(retries, test_timeouts_without_retries);
    tcase_add_test(retries, test_timeout_runs_from_the_send);
    suite_add_tcase(s, retries);

    TCase *shape = tcase_create("shape");
    tcase_add_test(shape, test_too_large_records);
    tcase_add_test(shape, test_put_records_byte_limit_varied_sizes);
    tcase_add_test(shape, test_varied_sizes_meters_exact_over_shards);
    tcase_add_test(shape, test_size_distribution);
    tcase_add_test(shape, test_aggregates_close_before_max_record_size);
    tcase_add_test(shape, test_put_record_api);
    tcase_add_test(shape, test_ordering_one_put_in_flight_per_client);
    tcase_add_test(shape, test_put_records_batches);
    tcase_add_test(shape, test_clients_and_producers);
    tcase_add_test(shape, test_start_stop);
    tcase_add_test(shape, test_even_arrivals_exact);
    tcase_add_test(shape, test_even_arrivals_many_clients);
    suite_add_tcase(s, shape);

    TCase *det = tcase_create("determinism");
    tcase_add_test(det, test_same_seed_same_counters);
    tcase_add_test(det, test_same_law_shares_keys);
    tcase_add_test(det, test_different_seed_different_counters);
    suite_add_tcase(s, det);
    return s;
}

int main(void)
{
    return tu_run_suite(producer_suite());
}
