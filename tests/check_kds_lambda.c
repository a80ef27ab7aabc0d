/* check_kds_lambda.c - tests of the Lambda event source mapping (kds_lambda.h) in small
 * whole worlds: a poison record holding its shard only, until it expires; bisection
 * isolating exactly the poison record; MaximumRetryAttempts and MaximumRecordAgeInSeconds
 * bounding the hold; an error rate giving retries and duplicates; the parallelization
 * factor against a slow function; the concurrency limit; the batching window and the
 * payload limit; LATEST missing the records written while the mapping is created; EFO
 * retrieval against polling; child shards after a split read after their parent, and
 * their waits; the consumer conservation rule and determinism.
 * Fixed seeds throughout; no wall-clock assertion.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_capacity.h"
#include "kds_lambda.h"
#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

#define MAX_MAPPINGS 2

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    sim_time marks[4];
    kds_lambda_cfg lam[MAX_MAPPINGS];
    kds_consumer_cfg cons[MAX_MAPPINGS];
    kds_capacity_event ev[1];
    kds_world w;
} fixture;

static const char *const NAMES[MAX_MAPPINGS] = {"fn0", "fn1"};

/* A stream of `shards` shards with `retention`, one producer of 1 KiB records at `rate`
 * records/s (evenly spaced) that stops `quiet` before the end, and `n` mappings with
 * the defaults, from TRIM_HORIZON. */
static void fx_defaults(fixture *f, uint32_t shards, sim_time retention, sim_time duration,
                        double rate, sim_time quiet, size_t n)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 2024, duration, shards, rate, 1024);
    f->cfg.stream.retention = retention;
    f->prod.stop = duration - quiet;
    ck_assert_uint_le(n, MAX_MAPPINGS);
    for (size_t i = 0; i < n; i++) {
        kds_lambda_cfg_defaults(&f->lam[i]);
        f->lam[i].name = NAMES[i];
        f->cons[i].kind = KDS_CONSUMER_MODEL;
        f->cons[i].make = kds_lambda_make;
        f->cons[i].cfg = &f->lam[i];
    }
    f->cfg.consumers = f->cons;
    f->cfg.n_consumers = n;
}

/* The producer marks its next record at `t` (a poison record). */
static void fx_poison(fixture *f, sim_time t)
{
    f->marks[0] = t;
    f->prod.marks = f->marks;
    f->prod.n_marks = 1;
}

static void fx_run(fixture *f)
{
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    kds_world_run(&f->w);
}

static const kds_consumer_stats *cst(fixture *f, size_t i)
{
    return &f->w.consumers[i]->st;
}

static const kds_lambda_stats *lst(fixture *f, size_t i)
{
    return kds_lambda_stats_get(f->w.consumers[i]);
}

static kds_lambda_shard_stats shard_st(fixture *f, size_t c, size_t i)
{
    kds_lambda_shard_stats s;
    ck_assert_int_eq(kds_lambda_shard_stats_get(f->w.consumers[c], i, &s), 0);
    return s;
}

static uint64_t stored_total(fixture *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        sum += f->w.stream.shards[i]->st.records_in;
    return sum;
}

/* kds_consumer.h: stored = skipped at start + delivered + unread + expired unread. */
static void check_conservation(fixture *f)
{
    uint64_t in = stored_total(f);
    for (size_t i = 0; i < f->w.n_consumers; i++) {
        const kds_consumer_stats *cs = cst(f, i);
        uint64_t acc = cs->records_skipped_at_start + cs->records_delivered + cs->records_unread +
                       cs->records_expired_unread;
        ck_assert_msg(acc == in,
                      "mapping %zu: skipped %llu + delivered %llu + unread %llu + expired %llu"
                      " = %llu, stored %llu",
                      i, (unsigned long long)cs->records_skipped_at_start,
                      (unsigned long long)cs->records_delivered,
                      (unsigned long long)cs->records_unread,
                      (unsigned long long)cs->records_expired_unread, (unsigned long long)acc,
                      (unsigned long long)in);
    }
}

/* Every delivered record was processed, given up, or is in a batch still running. */
static void check_settled(fixture *f, size_t i)
{
    const kds_lambda_stats *ls = lst(f, i);
    ck_assert_uint_eq(cst(f, i)->records_delivered,
                      ls->records_processed + ls->records_to_failure_destination +
                          ls->records_discarded);
    ck_assert_uint_eq(cst(f, i)->records_unread, 0);
}

/* The index of the one shard whose batches failed (asserting there is exactly one). */
static size_t the_failing_shard(fixture *f)
{
    size_t n = kds_lambda_shard_count(f->w.consumers[0]), bad = n;
    for (size_t i = 0; i < n; i++) {
        if (shard_st(f, 0, i).function_errors > 0) {
            ck_assert_msg(bad == n, "shards %zu and %zu both failed", bad, i);
            bad = i;
        }
    }
    ck_assert_msg(bad < n, "no shard failed");
    return bad;
}

/* ---- the poison record with default settings ------------------------------------------ */

/* Defaults (retry until the records expire): the shard holding the poison record stops
 * for the retention period (30 min here) while the other shards flow with an
 * IteratorAge of about a second; then the batch is discarded and the shard catches up. */
START_TEST(test_poison_blocks_one_shard_until_expiry)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(30), SIM_MIN(50), 20, SIM_MIN(5), 1);
    fx_poison(&f, SIM_MIN(2));
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    size_t bad = the_failing_shard(&f);
    kds_lambda_shard_stats b = shard_st(&f, 0, bad);
    /* Held from about 2 min until the poison record is past the 30-minute retention
     * (checked at the next retry, at most 30 s later). */
    ck_assert_double_ge(b.longest_block_s, 30 * 60 - 5);
    ck_assert_double_le(b.longest_block_s, 30 * 60 + 40);
    ck_assert_double_ge(b.iterator_age_ms_max, 29.5 * 60 * 1000);
    for (size_t i = 0; i < 4; i++) {
        if (i == bad)
            continue;
        kds_lambda_shard_stats o = shard_st(&f, 0, i);
        ck_assert_double_eq(o.longest_block_s, 0);
        ck_assert_double_lt(o.iterator_age_ms_max, 2500);
        ck_assert_uint_gt(o.records_processed, 20 * 40 * 60 / 4 / 2);
    }
    ck_assert_uint_eq(ls->shards_blocked, 1);
    /* No limit on retries: one every 30 s of backoff (1, 2, 4, 8, 16, then 30 s). */
    ck_assert_uint_ge(ls->retries, 50);
    ck_assert_uint_le(ls->retries, 70);
    ck_assert_uint_eq(ls->function_errors, ls->retries + 1);
    /* Given up whole, good records with the bad one, and no destination. */
    ck_assert_uint_ge(ls->records_discarded, 1);
    ck_assert_uint_eq(ls->records_discarded, b.records_given_up);
    ck_assert_uint_eq(ls->records_to_failure_destination, 0);
    /* Handing the batch again on every retry counts its records as duplicates. */
    ck_assert_uint_eq(cst(&f, 0)->duplicates_delivered, ls->retries * ls->records_discarded);
    /* The held shard lost the records that expired while it waited and caught up. */
    ck_assert_uint_gt(cst(&f, 0)->records_expired_unread, 0);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* The poisoned shard's progress stops: by the end of a short run it has its records
 * since the poison record unread, the others none. */
START_TEST(test_poison_shard_stops_others_flow)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(20), 20, SIM_MIN(1), 1);
    fx_poison(&f, SIM_MIN(2));
    fx_run(&f);
    size_t bad = the_failing_shard(&f);
    /* About 17 minutes of half the rate are waiting behind the poison record. */
    ck_assert_uint_ge(cst(&f, 0)->records_unread, 17 * 60 * 10 * 8 / 10);
    ck_assert_uint_le(cst(&f, 0)->records_unread, 17 * 60 * 10 * 12 / 10);
    kds_lambda_shard_stats b = shard_st(&f, 0, bad), o = shard_st(&f, 0, 1 - bad);
    ck_assert_uint_ge(o.records_processed, 19 * 60 * 10 * 8 / 10);
    ck_assert_uint_le(b.records_processed, 3 * 60 * 10 * 12 / 10);
    ck_assert_double_ge(b.longest_block_s, 17 * 60);
    check_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- bounded failures ------------------------------------------------------------------ */

/* Bisect, 3 retries and a queue, with and without ReportBatchItemFailures: batches of
 * about 100 records are split until the poison record is alone; only it reaches the
 * destination, and every other record is processed. */
START_TEST(test_bisect_isolates_poison)
{
    for (int rbif = 0; rbif <= 1; rbif++) {
        fixture f;
        fx_defaults(&f, 1, SIM_HOUR(24), SIM_MIN(10), 150, SIM_MIN(4), 1);
        fx_poison(&f, SIM_MIN(1) + SIM_MS(500));
        kds_lambda_cfg *c = &f.lam[0];
        c->bisect_on_error = true;
        c->max_retry_attempts = 3;
        c->max_record_age = SIM_HOUR(1);
        c->report_item_failures = rbif;
        c->on_failure = KDS_LAMBDA_DEST_SQS;
        fx_run(&f);
        const kds_lambda_stats *ls = lst(&f, 0);
        ck_assert_msg(ls->largest_batch >= 100, "batches of %llu records",
                      (unsigned long long)ls->largest_batch);
        ck_assert_uint_eq(ls->records_to_failure_destination, 1);
        ck_assert_uint_eq(ls->failure_destination_messages, 1);
        ck_assert_uint_eq(ls->records_discarded, 0);
        ck_assert_uint_eq(ls->retries, 3);
        /* From about 100 records down to one: at least 5 halvings without a partial
         * response; a partial response starts at the poison record. */
        ck_assert_uint_ge(ls->batches_bisected, rbif ? 1 : 5);
        ck_assert_uint_le(ls->batches_bisected, 8);
        /* The good records handed again while splitting are duplicates. */
        ck_assert_uint_gt(cst(&f, 0)->duplicates_delivered, 0);
        ck_assert_uint_eq(ls->records_processed, stored_total(&f) - 1);
        ck_assert_double_lt(ls->longest_block_s, 5 * 60);
        check_conservation(&f);
        check_settled(&f, 0);
        kds_world_fini(&f.w);
    }
}
END_TEST

/* MaximumRetryAttempts 2: the poison batch is tried three times and discarded after a
 * few seconds of backoff; the shard moves on and ends with nothing unread. */
START_TEST(test_max_retry_attempts_bound_block)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(10), 20, SIM_MIN(2), 1);
    fx_poison(&f, SIM_MIN(2));
    f.lam[0].max_retry_attempts = 2;
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    size_t bad = the_failing_shard(&f);
    kds_lambda_shard_stats b = shard_st(&f, 0, bad);
    ck_assert_uint_eq(ls->retries, 2);
    ck_assert_uint_eq(ls->function_errors, 3);
    ck_assert_uint_eq(b.function_errors, 3);
    ck_assert_uint_ge(ls->records_discarded, 1);
    /* Backoff 1 s then 2 s, plus three invocations. */
    ck_assert_double_ge(b.longest_block_s, 3);
    ck_assert_double_lt(b.longest_block_s, 10);
    ck_assert_double_lt(b.iterator_age_ms_max, 15000);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* MaximumRecordAgeInSeconds 60 with unlimited retries: the batch is given up at the
 * first retry after its oldest record is a minute old, and the records that waited
 * behind it for more than a minute are given up unread by the function. */
START_TEST(test_max_record_age_bounds_block)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(10), 20, SIM_MIN(2), 1);
    fx_poison(&f, SIM_MIN(2));
    f.lam[0].max_record_age = SIM_S(60);
    f.lam[0].on_failure = KDS_LAMBDA_DEST_SNS;
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    kds_lambda_shard_stats b = shard_st(&f, 0, the_failing_shard(&f));
    ck_assert_double_ge(b.longest_block_s, 55);
    ck_assert_double_lt(b.longest_block_s, 60 + 31);
    ck_assert_double_lt(b.iterator_age_ms_max, 95000);
    /* The poison batch, then the records that waited more than a minute behind it
     * (the hold beyond 60 s, at 10 records/s), all to the destination. */
    ck_assert_uint_ge(ls->records_to_failure_destination, 1);
    ck_assert_uint_le(ls->records_to_failure_destination,
                      (uint64_t)((b.longest_block_s - 60 + 5) * 10) + 100);
    ck_assert_uint_ge(ls->failure_destination_messages, 1);
    ck_assert_uint_eq(ls->records_discarded, 0);
    ck_assert_uint_ge(ls->retries, 5);
    ck_assert_uint_le(ls->retries, 8);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* An error rate of 20 % per invocation: about a fifth of the invocations fail, each
 * failure is retried (its records handed again as duplicates), and in the end every
 * record is processed. */
START_TEST(test_error_rate_retries_and_duplicates)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(20), 50, SIM_MIN(3), 1);
    f.lam[0].error_rate = 0.2;
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    double share = (double)ls->function_errors / (double)ls->invocations;
    ck_assert_double_ge(share, 0.15);
    ck_assert_double_le(share, 0.25);
    ck_assert_uint_eq(ls->retries, ls->function_errors);
    ck_assert_uint_gt(cst(&f, 0)->duplicates_delivered, 0);
    ck_assert_uint_eq(ls->records_processed, stored_total(&f));
    ck_assert_uint_eq(ls->records_discarded, 0);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- throughput ------------------------------------------------------------------------ */

/* A function taking 1 s per batch of 100 on a shard receiving 400 records/s: one batch
 * at a time keeps up with 100 records/s; a parallelization factor of 5 keeps up. */
START_TEST(test_parallelization_raises_throughput)
{
    fixture f[2];
    uint64_t processed[2];
    for (int i = 0; i < 2; i++) {
        fx_defaults(&f[i], 1, SIM_HOUR(24), SIM_MIN(5), 400, 0, 1);
        f[i].lam[0].duration_ms = sim_dist_const(1000);
        f[i].lam[0].timeout = SIM_S(10);
        f[i].lam[0].parallelization = i == 0 ? 1 : 5;
        fx_run(&f[i]);
        processed[i] = lst(&f[i], 0)->records_processed;
        check_conservation(&f[i]);
    }
    uint64_t in = stored_total(&f[0]);
    ck_assert_uint_le(processed[0], 300 * 100 + 200);
    ck_assert_uint_ge(processed[0], 300 * 100 * 9 / 10);
    ck_assert_uint_ge(processed[1], in * 95 / 100);
    ck_assert_double_gt(cst(&f[0], 0)->iterator_age_ms_max, 100000);
    ck_assert_double_lt(cst(&f[1], 0)->iterator_age_ms_max, 5000);
    kds_world_fini(&f[0].w);
    kds_world_fini(&f[1].w);
}
END_TEST

/* Eight shards and a 500 ms function limited to 2 concurrent invocations: invocations
 * are throttled and wait; the same mapping with the default concurrency is not. */
START_TEST(test_concurrency_limit_throttles)
{
    fixture f[2];
    for (int i = 0; i < 2; i++) {
        fx_defaults(&f[i], 8, SIM_HOUR(24), SIM_MIN(5), 400, 0, 1);
        f[i].lam[0].duration_ms = sim_dist_const(500);
        if (i == 0)
            f[i].lam[0].concurrency = 2;
        fx_run(&f[i]);
        check_conservation(&f[i]);
    }
    const kds_lambda_stats *lim = lst(&f[0], 0), *free_ = lst(&f[1], 0);
    ck_assert_uint_gt(lim->throttled_invocations, 100);
    ck_assert_uint_eq(free_->throttled_invocations, 0);
    /* Two slots of 500 ms: at most 4 invocations a second. */
    ck_assert_uint_le(lim->invocations, 4 * 300 + 2);
    ck_assert_uint_gt(free_->invocations, lim->invocations);
    ck_assert_double_gt(sim_hist_mean(&cst(&f[0], 0)->latency_ms),
                        2 * sim_hist_mean(&cst(&f[1], 0)->latency_ms));
    kds_world_fini(&f[0].w);
    kds_world_fini(&f[1].w);
}
END_TEST

/* At the payload limit exactly: records of 3,000 B weigh (4 x 3,000 + 2) / 3 + 500 =
 * 4,500 B of payload each, so 6,291,456 B hold 1,398 of them. A BatchSize just under
 * that is reached by count, one just over it is cut by the payload. */
START_TEST(test_payload_limit_boundary)
{
    const uint32_t sizes[2] = {1397, 10000};
    const uint64_t largest[2] = {1397, 1398};
    for (size_t i = 0; i < 2; i++) {
        fixture f;
        fx_defaults(&f, 1, SIM_HOUR(24), SIM_MIN(3), 300, SIM_S(30), 1);
        f.prod.size = sim_dist_const(3000);
        f.lam[0].batch_size = sizes[i];
        f.lam[0].batching_window = SIM_S(20);
        fx_run(&f);
        ck_assert_uint_eq(lst(&f, 0)->largest_batch, largest[i]);
        check_conservation(&f);
        check_settled(&f, 0);
        kds_world_fini(&f.w);
    }
}
END_TEST

/* A 5 s batching window at 20 records/s: batches of about 100 records, one every 5 s.
 * Records of 1 MiB (the stream's maximum) with a 20 s window: the 6 MB payload holds
 * 4 of them (base64 makes each about 1.33 MiB). */
START_TEST(test_batching_window_and_payload_limit)
{
    fixture f;
    fx_defaults(&f, 1, SIM_HOUR(24), SIM_MIN(5), 20, SIM_S(30), 1);
    f.lam[0].batching_window = SIM_S(5);
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    ck_assert_uint_ge(ls->invocations, 270 / 5 - 2);
    ck_assert_uint_le(ls->invocations, 270 / 5 + 10);
    ck_assert_uint_ge(ls->largest_batch, 100);
    check_settled(&f, 0);
    kds_world_fini(&f.w);

    fx_defaults(&f, 1, SIM_HOUR(24), SIM_MIN(5), 0.8, SIM_S(60), 1);
    f.prod.size = sim_dist_const((double)KDS_MIB);
    f.lam[0].batching_window = SIM_S(20);
    fx_run(&f);
    ls = lst(&f, 0);
    ck_assert_uint_eq(ls->largest_batch, 4);
    ck_assert_uint_gt(ls->invocations, stored_total(&f) / 4 - 1);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- start positions ------------------------------------------------------------------- */

/* CreateEventSourceMapping at 60 s taking 30 s: a LATEST mapping misses the records
 * written in those 30 s (and skips the 60 s before, as intended); a TRIM_HORIZON
 * mapping misses nothing. */
START_TEST(test_latest_misses_creation_window)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(5), 100, SIM_S(30), 2);
    for (int i = 0; i < 2; i++) {
        f.lam[i].begin = SIM_S(60);
        f.lam[i].creation_delay = SIM_S(30);
    }
    f.lam[0].start = KDS_START_LATEST;
    f.lam[1].start = KDS_START_TRIM_HORIZON;
    fx_run(&f);
    const kds_lambda_stats *latest = lst(&f, 0), *trim = lst(&f, 1);
    ck_assert_uint_ge(latest->records_missed_at_creation, 2900);
    ck_assert_uint_le(latest->records_missed_at_creation, 3100);
    ck_assert_uint_ge(cst(&f, 0)->records_skipped_at_start, 8900);
    ck_assert_uint_le(cst(&f, 0)->records_skipped_at_start, 9100);
    ck_assert_uint_eq(trim->records_missed_at_creation, 0);
    ck_assert_uint_eq(cst(&f, 1)->records_skipped_at_start, 0);
    ck_assert_uint_eq(cst(&f, 1)->records_delivered, stored_total(&f));
    check_conservation(&f);
    check_settled(&f, 0);
    check_settled(&f, 1);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- retrieval ------------------------------------------------------------------------- */

/* Through enhanced fan-out the function sees records about 70 ms after they are
 * written, against about half a second of poll interval plus a round trip. */
START_TEST(test_efo_lower_latency_than_polling)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(10), 200, SIM_S(30), 2);
    f.lam[1].retrieval = KDS_LAMBDA_EFO;
    fx_run(&f);
    double poll = sim_hist_mean(&cst(&f, 0)->latency_ms);
    double efo = sim_hist_mean(&cst(&f, 1)->latency_ms);
    ck_assert_double_ge(poll, 450);
    ck_assert_double_le(poll, 800);
    ck_assert_double_ge(efo, 80);
    ck_assert_double_le(efo, 250);
    ck_assert_uint_gt(cst(&f, 0)->bytes_read_shared, 0);
    ck_assert_uint_eq(cst(&f, 0)->bytes_read_efo, 0);
    ck_assert_uint_eq(cst(&f, 1)->bytes_read_shared, 0);
    ck_assert_uint_gt(cst(&f, 1)->bytes_read_efo, 0);
    ck_assert_uint_eq(cst(&f, 1)->getrecords_calls, 0);
    ck_assert_double_gt(cst(&f, 1)->efo_consumer_shard_hours, 0.3);
    check_conservation(&f);
    check_settled(&f, 0);
    check_settled(&f, 1);
    kds_world_fini(&f.w);
}
END_TEST

/* The poison record through EFO: the subscription is paused while the shard is held,
 * and the bounded policy settles it the same way. */
START_TEST(test_efo_poison_bisect)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(10), 100, SIM_MIN(4), 1);
    fx_poison(&f, SIM_MIN(1));
    kds_lambda_cfg *c = &f.lam[0];
    c->retrieval = KDS_LAMBDA_EFO;
    c->bisect_on_error = true;
    c->max_retry_attempts = 3;
    c->report_item_failures = true;
    c->on_failure = KDS_LAMBDA_DEST_SQS;
    c->batching_window = SIM_S(1);
    fx_run(&f);
    const kds_lambda_stats *ls = lst(&f, 0);
    ck_assert_uint_eq(ls->records_to_failure_destination, 1);
    ck_assert_uint_eq(ls->retries, 3);
    ck_assert_uint_eq(ls->records_processed, stored_total(&f) - 1);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- parents before children ------------------------------------------------------------ */

/* The records of shard `index` that mapping 0 has finished with (processed or given up),
 * 0 before it met the shard. */
static uint64_t settled_of(fixture *f, uint32_t index)
{
    size_t n = kds_lambda_shard_count(f->w.consumers[0]);
    for (size_t i = 0; i < n; i++) {
        kds_lambda_shard_stats s = shard_st(f, 0, i);
        if (s.shard == index)
            return s.records_processed + s.records_given_up;
    }
    return 0;
}

/* A split (or, _i >= 2, a merge of shards 0 and 1) under a live mapping, requested at
 * 103 s: the children appear at 133 s. With a constant call latency L, push delay and
 * function duration D, a parent, caught up, finds its end at its next poll (within the
 * poll interval P), whose reply brings its last records at +L, or at its next push
 * (within the push interval, arriving a push delay later); they are processed in one
 * batch by +D, and then the children start. So each child waits at most P + L + D
 * (polling) or push interval + push delay + D (EFO), and, checked every 10 ms, no
 * record of a child is processed before every parent's last. For the merge, every
 * record goes to shard 1 (the key s-90) and a poison record written at 130 s (3
 * retries, 1 + 2 + 4 s of backoff) holds it well past the end of shard 0, its
 * adjacent parent's partner: the child waits for the held one too. */
START_TEST(test_split_children_after_parent)
{
    kds_lambda_retrieval r = _i % 2 ? KDS_LAMBDA_EFO : KDS_LAMBDA_POLLING;
    bool merge = _i >= 2;
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(24), SIM_S(200), 100, SIM_S(10), 1);
    kds_lambda_cfg *c = &f.lam[0];
    c->retrieval = r;
    c->call_latency_ms = sim_dist_const(40);
    c->efo.push_delay_ms = sim_dist_const(65);
    c->duration_ms = sim_dist_const(50);
    f.ev[0] = merge ? (kds_capacity_event){.at = SIM_S(103), .kind = KDS_OP_MERGE, .shard = 0,
                                           .other = 1}
                    : (kds_capacity_event){.at = SIM_S(103), .kind = KDS_OP_SPLIT, .shard = 0};
    if (merge) {
        f.prod.keys.kind = KDS_KEYS_FIXED;
        f.prod.keys.fixed = "s-90"; /* MD5 b772d1fa...: the upper half, shard 1 of 2 */
        f.prod.rate = kds_rate_constant(50);
        fx_poison(&f, SIM_S(130));
        c->max_retry_attempts = 3;
    }
    kds_capacity_cfg_defaults(&f.cfg.capacity);
    f.cfg.capacity.events = f.ev;
    f.cfg.capacity.n_events = 1;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    const kds_stream *st = &f.w.stream;
    uint32_t n_parents = merge ? 2 : 1, n_children = merge ? 1 : 2;
    for (sim_time t = SIM_S(100); t <= f.cfg.duration; t += SIM_MS(10)) {
        kds_world_run_until(&f.w, t);
        if (settled_of(&f, 2) + settled_of(&f, 3) > 0) {
            for (uint32_t p = 0; p < n_parents; p++) {
                ck_assert_int_ne(st->shards[p]->state, KDS_SHARD_OPEN);
                ck_assert_uint_eq(settled_of(&f, p), st->shards[p]->st.records_in);
            }
        }
    }
    kds_world_finish(&f.w);

    ck_assert_uint_eq(st->n_shards, 2 + n_children);
    for (uint32_t i = 2; i < 2 + n_children; i++) {
        ck_assert_int_eq(st->shards[i]->parent, 0);
        ck_assert_int_eq(st->shards[i]->adjacent_parent, merge ? 1 : -1);
        ck_assert_double_eq(sim_to_s(st->shards[i]->created), 133);
        ck_assert_uint_gt(settled_of(&f, i), 0);
    }
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_eq(cs->children_started, n_children);
    sim_time reach = r == KDS_LAMBDA_POLLING ? c->poll_interval + SIM_MS(40)
                                             : c->efo.push_interval + SIM_MS(65);
    if (merge) {
        ck_assert_uint_eq(lst(&f, 0)->retries, 3);
        ck_assert_uint_eq(the_failing_shard(&f), 1);
        ck_assert_uint_eq(st->shards[0]->st.records_in, 0);
        ck_assert_double_ge(cs->child_wait_ms_max, 3000);
    } else {
        ck_assert_double_gt(cs->child_wait_ms_max, 0);
        ck_assert_double_le(cs->child_wait_ms_max, sim_to_ms(reach + SIM_MS(50)));
    }
    /* All start when the parents are done, at the same time. */
    ck_assert_double_eq_tol(cs->child_wait_ms_sum, n_children * cs->child_wait_ms_max, 1e-6);
    check_conservation(&f);
    check_settled(&f, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- determinism ----------------------------------------------------------------------- */

START_TEST(test_same_seed_identical)
{
    kds_lambda_stats a[2];
    double lat[2];
    for (int i = 0; i < 2; i++) {
        fixture f;
        fx_defaults(&f, 2, SIM_HOUR(24), SIM_MIN(5), 100, 0, 1);
        fx_poison(&f, SIM_MIN(1));
        f.lam[0].error_rate = 0.05;
        f.lam[0].bisect_on_error = true;
        f.lam[0].max_retry_attempts = 1;
        fx_run(&f);
        a[i] = *lst(&f, 0);
        lat[i] = sim_hist_mean(&cst(&f, 0)->latency_ms);
        kds_world_fini(&f.w);
    }
    ck_assert_int_eq(memcmp(&a[0], &a[1], sizeof a[0]), 0);
    ck_assert_double_eq(lat[0], lat[1]);
}
END_TEST

static Suite *lambda_suite(void)
{
    Suite *s = suite_create("kds_lambda");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_poison_blocks_one_shard_until_expiry);
    tcase_add_test(tc, test_poison_shard_stops_others_flow);
    tcase_add_test(tc, test_bisect_isolates_poison);
    tcase_add_test(tc, test_max_retry_attempts_bound_block);
    tcase_add_test(tc, test_max_record_age_bounds_block);
    tcase_add_test(tc, test_error_rate_retries_and_duplicates);
    tcase_add_test(tc, test_efo_poison_bisect);
    tcase_add_test(tc, test_same_seed_identical);
    tcase_add_loop_test(tc, test_split_children_after_parent, 0, 4);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_set_timeout(tl, 60);
    tcase_add_test(tl, test_parallelization_raises_throughput);
    tcase_add_test(tl, test_concurrency_limit_throttles);
    tcase_add_test(tl, test_batching_window_and_payload_limit);
    tcase_add_test(tl, test_payload_limit_boundary);
    tcase_add_test(tl, test_latest_misses_creation_window);
    tcase_add_test(tl, test_efo_lower_latency_than_polling);
    suite_add_tcase(s, tl);
    return s;
}

int main(void)
{
    return tu_run_suite(lambda_suite());
}
