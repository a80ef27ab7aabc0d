/* check_kds_firehose.c - tests of the Amazon Data Firehose consumer in small whole worlds
 * (kds_world): object counts from the buffering hints (size-bound: ceil(bytes / size);
 * interval-bound: one object per interval; interval 0: one object per GetRecords
 * reply), full backup doubling the GetRecords calls, de-aggregation, a failed delivery
 * retried until it succeeds, records lost when the retries outlast the stream's
 * retention or the retry duration, the retries an outage refuses skipped over with the
 * same figures as an event for each, the consumer conservation rule of kds_consumer.h in
 * every world, and determinism under a fixed seed.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_firehose.h"
#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_consumer_cfg cons;
    kds_firehose_cfg fh;
    kds_world w;
} fixture;

/* A stream of `shards` shards, one producer of 1 KiB records at `rate` records/s from
 * time 0 until `stop` (-1 = the end), and one Firehose stream with AWS's defaults. */
static void fx_defaults(fixture *f, uint32_t shards, sim_time duration, double rate,
                        sim_time stop)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 2718, duration, shards, rate, 1024);
    f->prod.stop = stop;
    kds_firehose_cfg_defaults(&f->fh);
    f->fh.name = "s3";
    f->cons.kind = KDS_CONSUMER_MODEL;
    f->cons.make = kds_firehose_make;
    f->cons.cfg = &f->fh;
    f->cfg.consumers = &f->cons;
    f->cfg.n_consumers = 1;
}

static void fx_run(fixture *f)
{
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    kds_world_run(&f->w);
}

static const kds_consumer_stats *cst(fixture *f)
{
    return &f->w.consumers[0]->st;
}

static const kds_firehose_stats *fst(fixture *f)
{
    return kds_firehose_stats_get(f->w.consumers[0]);
}

static uint64_t stored_records(fixture *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        sum += f->w.stream.shards[i]->st.records_in;
    return sum;
}

static uint64_t stored_bytes(fixture *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        sum += f->w.stream.shards[i]->st.bytes_in;
    return sum;
}

/* kds_consumer.h: what the shards stored = skipped at the start + delivered + unread
 * (including read and still buffered) + expired unread (including lost after retries). */
static void check_conservation(fixture *f)
{
    const kds_consumer_stats *cs = cst(f);
    uint64_t acc = cs->records_skipped_at_start + cs->records_delivered + cs->records_unread +
                   cs->records_expired_unread;
    ck_assert_msg(acc == stored_records(f),
                  "skipped %llu + delivered %llu + unread %llu + expired %llu = %llu, "
                  "stored %llu",
                  (unsigned long long)cs->records_skipped_at_start,
                  (unsigned long long)cs->records_delivered,
                  (unsigned long long)cs->records_unread,
                  (unsigned long long)cs->records_expired_unread, (unsigned long long)acc,
                  (unsigned long long)stored_records(f));
    ck_assert_uint_le(fst(f)->records_lost_after_retries, cs->records_expired_unread);
}

/* The shards' call counters agree with the consumer's. */
static void check_call_books(fixture *f)
{
    uint64_t calls = 0, throttled = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++) {
        calls += f->w.stream.shards[i]->st.read_calls;
        throttled += f->w.stream.shards[i]->st.read_throttled_calls;
    }
    ck_assert_uint_eq(cst(f)->read_throttled_calls, throttled);
    ck_assert_uint_eq(cst(f)->getrecords_calls, calls + throttled);
}

/* ---- buffering ----------------------------------------------------------------------- */

/* Size-bound: 500 KiB/s into 1 MiB objects, 900 s interval. Every object but the last is
 * exactly 1 MiB (1,024 records of 1 KiB), and with the tail flushed by the interval the
 * count is ceil(bytes / size). */
START_TEST(test_size_bound_objects)
{
    fixture f;
    fx_defaults(&f, 2, SIM_S(100 + 900 + 30), 500, SIM_S(100));
    f.fh.start = KDS_START_TRIM_HORIZON;
    f.fh.buffer_size = KDS_MIB;
    f.fh.buffer_interval = SIM_S(900);
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    uint64_t bytes = stored_bytes(&f);
    ck_assert_uint_gt(bytes, 40 * KDS_MIB);
    ck_assert_uint_eq(cst(&f)->records_delivered, stored_records(&f));
    ck_assert_uint_eq(fs->object_bytes_total, bytes);
    ck_assert_uint_eq(fs->objects_written, (bytes + KDS_MIB - 1) / KDS_MIB);
    ck_assert_uint_eq(fs->objects_by_size, bytes / KDS_MIB);
    ck_assert_uint_eq(fs->objects_by_interval, bytes % KDS_MIB ? 1 : 0);
    ck_assert_uint_eq(fs->object_bytes_max, KDS_MIB);
    ck_assert_uint_eq(fs->object_bytes_min, bytes % KDS_MIB ? bytes % KDS_MIB : KDS_MIB);
    ck_assert_uint_eq(fs->records_buffered + fs->records_in_objects, 0);
    check_conservation(&f);
    check_call_books(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* Interval-bound: 100 KiB/s never fills 128 MiB; a steady stream gets one object per
 * 60 s interval: 10 objects in 10 intervals (plus a few seconds for the first read). */
START_TEST(test_interval_bound_objects)
{
    fixture f;
    fx_defaults(&f, 2, SIM_S(10 * 60 + 5), 100, -1);
    f.fh.buffer_size = 128 * KDS_MIB;
    f.fh.buffer_interval = SIM_S(60);
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    ck_assert_uint_eq(fs->objects_written, 10);
    ck_assert_uint_eq(fs->objects_by_interval, 10);
    ck_assert_uint_eq(fs->objects_by_size, 0);
    /* Each full interval holds about 60 s x 100 KiB/s; the first holds a little more
     * (what was written before the first read). */
    ck_assert_uint_ge(fs->object_bytes_min, 58 * 100 * 1024);
    ck_assert_uint_le(fs->object_bytes_max, 63 * 100 * 1024);
    /* The oldest record of an object waited about one interval. */
    double mean_delay = fs->delivery_delay_ms_sum / (double)fs->objects_written;
    ck_assert_double_ge(mean_delay, 59000);
    ck_assert_double_le(mean_delay, 63000);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* IntervalInSeconds 0: no buffering, one object per GetRecords reply with records. */
START_TEST(test_interval_zero_one_object_per_reply)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(120), 200, SIM_S(100));
    f.fh.buffer_interval = 0;
    fx_run(&f);
    const kds_consumer_stats *cs = cst(&f);
    uint64_t replies = cs->getrecords_calls - cs->read_throttled_calls - cs->empty_calls;
    ck_assert_uint_gt(replies, 90);
    ck_assert_uint_eq(fst(&f)->objects_written, replies);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* With full backup, every period has a second GetRecords call per shard, charged to
 * the shared budget: twice the calls (to within one per shard) and twice the bytes. */
START_TEST(test_full_backup_doubles_calls)
{
    fixture a, b;
    fx_defaults(&a, 2, SIM_S(300), 200, SIM_S(280));
    fx_defaults(&b, 2, SIM_S(300), 200, SIM_S(280));
    b.fh.full_backup = true;
    fx_run(&a);
    fx_run(&b);
    uint64_t ca = cst(&a)->getrecords_calls, cb = cst(&b)->getrecords_calls;
    ck_assert_uint_ge(ca, 2 * 299);
    ck_assert_uint_ge(cb, 2 * ca - 2);
    ck_assert_uint_le(cb, 2 * ca + 2);
    ck_assert_uint_eq(fst(&b)->backup_calls, cb - ca);
    ck_assert_uint_eq(fst(&a)->backup_calls, 0);
    /* The backup reads the same records again. */
    ck_assert_uint_eq(fst(&b)->backup_bytes, stored_bytes(&b));
    ck_assert_uint_eq(cst(&b)->bytes_read_shared, 2 * stored_bytes(&b));
    ck_assert_uint_eq(cst(&b)->read_throttled_calls, 0);
    check_call_books(&a);
    check_call_books(&b);
    check_conservation(&a);
    check_conservation(&b);
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

/* De-aggregation: user records = Kinesis records x the aggregation factor, taken per
 * producer when the table names it. */
START_TEST(test_deaggregation)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(60), 100, SIM_S(30));
    f.fh.buffer_interval = SIM_S(10);
    f.fh.aggregation = 3;
    uint32_t per_src[1] = {7};
    f.fh.aggregate_by_src = per_src;
    f.fh.n_src = 1;
    fx_run(&f);
    ck_assert_uint_gt(cst(&f)->records_delivered, 0);
    ck_assert_double_eq(fst(&f)->user_records_delivered, 7.0 * (double)cst(&f)->records_delivered);
    kds_world_fini(&f.w);
    fx_defaults(&f, 1, SIM_S(60), 100, SIM_S(30));
    f.fh.buffer_interval = SIM_S(10);
    f.fh.aggregation = 3;
    fx_run(&f);
    ck_assert_double_eq(fst(&f)->user_records_delivered, 3.0 * (double)cst(&f)->records_delivered);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- delivery failures ---------------------------------------------------------------- */

/* The destination is out for two minutes: objects closed meanwhile fail, are retried
 * every 5 s, and are written once it is back. Nothing is lost. */
START_TEST(test_failed_delivery_retried_succeeds)
{
    fixture f;
    fx_defaults(&f, 2, SIM_S(600), 400, SIM_S(500));
    f.fh.buffer_size = KDS_MIB;
    f.fh.buffer_interval = SIM_S(30);
    f.fh.outage_at = SIM_S(60);
    f.fh.outage_for = SIM_S(120);
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    ck_assert_uint_gt(fs->delivery_failures, 10);
    ck_assert_uint_gt(fs->delivery_retries, 10);
    ck_assert_uint_le(fs->delivery_retries, fs->delivery_failures);
    ck_assert_uint_eq(fs->records_lost_after_retries, 0);
    ck_assert_uint_eq(fs->objects_given_up, 0);
    ck_assert_uint_eq(cst(&f)->records_delivered, stored_records(&f));
    ck_assert_uint_eq(cst(&f)->records_expired_unread, 0);
    /* An object closed when the outage began waited for its end. */
    ck_assert_double_ge(fs->delivery_delay_ms_max, 120000);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* A failure rate: every failed attempt is retried; all records arrive. */
START_TEST(test_failure_rate_retries)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(900), 300, SIM_S(800));
    f.fh.buffer_size = KDS_MIB;
    f.fh.buffer_interval = SIM_S(60);
    f.fh.failure_rate = 0.3;
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    ck_assert_uint_gt(fs->delivery_failures, 20);
    ck_assert_uint_eq(fs->delivery_retries, fs->delivery_failures);
    ck_assert_uint_eq(cst(&f)->records_delivered, stored_records(&f));
    /* Attempts = objects + retries; about 30 % of them fail. */
    double attempts = (double)(fs->objects_written + fs->delivery_retries);
    ck_assert_double_ge((double)fs->delivery_failures / attempts, 0.2);
    ck_assert_double_le((double)fs->delivery_failures / attempts, 0.4);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* The destination is out for longer than the stream keeps records (24 h): Firehose
 * retries while the stream holds them, then they are lost. Records written in the first
 * minute expire during the outage; those written in the second minute are still held
 * when the destination comes back, a minute after the first ones expired. */
START_TEST(test_lost_when_retries_outlast_retention)
{
    fixture f;
    fx_defaults(&f, 1, SIM_HOUR(24) + SIM_S(300), 100, SIM_S(120));
    f.fh.start = KDS_START_TRIM_HORIZON;
    f.fh.buffer_interval = SIM_S(10);
    f.fh.outage_at = 0;
    f.fh.outage_for = SIM_HOUR(24) + SIM_S(90);
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    const kds_consumer_stats *cs = cst(&f);
    uint64_t stored = stored_records(&f);
    ck_assert_uint_gt(fs->records_lost_after_retries, 0);
    ck_assert_uint_gt(cs->records_delivered, 0);
    ck_assert_uint_eq(fs->records_lost_after_retries + cs->records_delivered, stored);
    /* Written before the first retry after the outage minus 24 h is lost: that retry
     * comes within one retry interval (5 s) and one write after the end of the outage,
     * so 90 to 96 s of records at 100 records/s, of 12,000. */
    ck_assert_uint_ge(fs->records_lost_after_retries, 9000);
    ck_assert_uint_le(fs->records_lost_after_retries, 9600);
    ck_assert_uint_gt(fs->objects_given_up, 0);
    ck_assert_uint_eq(cs->records_expired_unread, fs->records_lost_after_retries);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* RetryOptions.DurationInSeconds: objects still failing after it are given up. */
START_TEST(test_retry_duration_gives_up)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(900), 100, SIM_S(300));
    f.fh.start = KDS_START_TRIM_HORIZON;
    f.fh.buffer_interval = SIM_S(60);
    f.fh.outage_at = 0;
    f.fh.outage_for = SIM_S(600);
    f.fh.retry_duration = SIM_S(30);
    fx_run(&f);
    const kds_firehose_stats *fs = fst(&f);
    ck_assert_uint_eq(cst(&f)->records_delivered, 0);
    ck_assert_uint_eq(fs->records_lost_after_retries, stored_records(&f));
    ck_assert_uint_eq(fs->objects_given_up, fs->objects_by_interval + fs->objects_by_size);
    /* Each object: a first attempt and retries every 5 s for 30 s. */
    ck_assert_uint_ge(fs->delivery_retries, 5 * fs->objects_given_up);
    ck_assert_uint_le(fs->delivery_retries, 7 * fs->objects_given_up);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* Retries the outage can only refuse are skipped over, not made one event each; every
 * figure is the same as with an event per refused retry, while far fewer events run.
 * The cases end the skips in each of their ways: the outage's end, a record expiring
 * (24 h retention, an outage of a day), the retry duration, and the end of the run in
 * the middle of an outage (the skipped retries due by then still count). Retry
 * intervals that do not divide the outage put retries on either side of each limit. */
typedef struct refusal_case {
    sim_time duration, stop, outage_at, outage_for, interval, retry_duration;
    double rate, failure_rate;
    int ends; /* how skips end besides the outage: 1 expiry, 2 retry duration, 3 the run */
} refusal_case;

START_TEST(test_refusals_skipped_exactly)
{
    static const refusal_case cases[] = {
        /* short outage, random failures before and after it */
        {SIM_S(900), SIM_S(800), SIM_S(100), SIM_S(300), SIM_S(5), -1, 300, 0.2, 0},
        /* longer than the retention: the first minute's records expire during it */
        {SIM_HOUR(24) + SIM_S(400), SIM_S(120), 0, SIM_HOUR(24) + SIM_S(90), SIM_S(7), -1,
         100, 0, 1},
        /* a retry duration ends the skips, on a retry (a multiple of the interval) */
        {SIM_S(1200), SIM_S(600), SIM_S(30), SIM_S(900), SIM_S(3), SIM_S(99), 200, 0.1, 2},
        /* the run ends during the outage */
        {SIM_S(1000), -1, SIM_S(200), SIM_S(5000), SIM_MS(6500), -1, 200, 0, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const refusal_case *k = &cases[i];
        fixture f[2];
        uint64_t events[2];
        for (int per = 0; per < 2; per++) {
            fx_defaults(&f[per], 2, k->duration, k->rate, k->stop);
            f[per].fh.start = KDS_START_TRIM_HORIZON;
            f[per].fh.buffer_interval = SIM_S(10);
            f[per].fh.buffer_size = KDS_MIB;
            f[per].fh.outage_at = k->outage_at;
            f[per].fh.outage_for = k->outage_for;
            f[per].fh.retry_interval = k->interval;
            f[per].fh.retry_duration = k->retry_duration;
            f[per].fh.failure_rate = k->failure_rate;
            f[per].fh.event_per_refusal = per == 1;
            fx_run(&f[per]);
            events[per] = sim_events_run(f[per].w.sim);
            check_conservation(&f[per]);
        }
        const kds_firehose_stats *a = fst(&f[0]), *b = fst(&f[1]);
        ck_assert_msg(a->delivery_failures == b->delivery_failures &&
                          a->delivery_retries == b->delivery_retries,
                      "case %zu: failures %llu / %llu, retries %llu / %llu", i,
                      (unsigned long long)a->delivery_failures,
                      (unsigned long long)b->delivery_failures,
                      (unsigned long long)a->delivery_retries,
                      (unsigned long long)b->delivery_retries);
        ck_assert_msg(memcmp(a, b, sizeof *a) == 0, "case %zu: the figures differ", i);
        const kds_consumer_stats *ca = cst(&f[0]), *cb = cst(&f[1]);
        ck_assert_uint_eq(ca->records_delivered, cb->records_delivered);
        ck_assert_uint_eq(ca->records_unread, cb->records_unread);
        ck_assert_uint_eq(ca->records_expired_unread, cb->records_expired_unread);
        ck_assert_double_eq(ca->latency_ms.max, cb->latency_ms.max);
        ck_assert_double_eq(sim_hist_mean(&ca->latency_ms), sim_hist_mean(&cb->latency_ms));
        /* Each case reached the limit it is for. */
        if (k->ends == 1)
            ck_assert_uint_gt(a->records_lost_after_retries, 0);
        if (k->ends == 2)
            ck_assert_uint_gt(a->objects_given_up, 0);
        if (k->ends == 3)
            ck_assert_uint_gt(a->records_in_objects, 0);
        /* Something was refused and skipped: fewer events by at least the retries made. */
        ck_assert_uint_gt(a->delivery_retries, 100);
        ck_assert_msg(events[0] + a->delivery_retries / 2 < events[1],
                      "case %zu: %llu events skipping, %llu with one per refusal", i,
                      (unsigned long long)events[0], (unsigned long long)events[1]);
        kds_world_fini(&f[0].w);
        kds_world_fini(&f[1].w);
    }
}
END_TEST

/* ---- reading ------------------------------------------------------------------------------ */

/* LATEST: what was written before Firehose started is not its to read; once per second
 * per shard; write-to-S3 latency is bounded by the interval plus a read and a write. */
START_TEST(test_latest_and_cadence)
{
    fixture f;
    fx_defaults(&f, 4, SIM_S(400), 100, SIM_S(350));
    f.fh.begin = SIM_S(50);
    f.fh.buffer_interval = SIM_S(20); /* 100 KiB/s: 2,000 KiB an interval, under 5 MiB */
    fx_run(&f);
    const kds_consumer_stats *cs = cst(&f);
    ck_assert_uint_ge(cs->records_skipped_at_start, 49 * 100);
    ck_assert_uint_le(cs->records_skipped_at_start, 51 * 100);
    ck_assert_uint_eq(cs->records_skipped_at_start + cs->records_delivered, stored_records(&f));
    /* 4 shards x 350 s at one call a second. */
    ck_assert_uint_ge(cs->getrecords_calls, 4 * 349);
    ck_assert_uint_le(cs->getrecords_calls, 4 * 351);
    ck_assert_double_le(cs->latency_ms.max, 20000 + 1100 + 2000);
    ck_assert_double_ge(sim_hist_mean(&cs->latency_ms), 9000);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* Same seed, same world, same figures. */
START_TEST(test_deterministic)
{
    fixture a, b;
    fx_defaults(&a, 2, SIM_S(200), 300, -1);
    fx_defaults(&b, 2, SIM_S(200), 300, -1);
    a.fh.failure_rate = b.fh.failure_rate = 0.2;
    a.fh.buffer_interval = b.fh.buffer_interval = SIM_S(15);
    fx_run(&a);
    fx_run(&b);
    ck_assert_int_eq(memcmp(fst(&a), fst(&b), sizeof(kds_firehose_stats)), 0);
    ck_assert_uint_eq(cst(&a)->records_delivered, cst(&b)->records_delivered);
    ck_assert_double_eq(sim_hist_mean(&cst(&a)->latency_ms), sim_hist_mean(&cst(&b)->latency_ms));
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

static Suite *firehose_suite(void)
{
    Suite *s = suite_create("kds_firehose");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_size_bound_objects);
    tcase_add_test(core, test_interval_bound_objects);
    tcase_add_test(core, test_interval_zero_one_object_per_reply);
    tcase_add_test(core, test_full_backup_doubles_calls);
    tcase_add_test(core, test_deaggregation);
    tcase_add_test(core, test_latest_and_cadence);
    tcase_add_test(core, test_deterministic);
    suite_add_tcase(s, core);
    TCase *fail = tcase_create("failures");
    tcase_add_test(fail, test_failed_delivery_retried_succeeds);
    tcase_add_test(fail, test_failure_rate_retries);
    tcase_add_test(fail, test_lost_when_retries_outlast_retention);
    tcase_add_test(fail, test_retry_duration_gives_up);
    tcase_add_test(fail, test_refusals_skipped_exactly);
    suite_add_tcase(s, fail);
    return s;
}

int main(void)
{
    return tu_run_suite(firehose_suite());
}
