/* check_kds_poller.c - tests of the polling consumer in small whole worlds (kds_world):
 * six consumers sharing one shard's 5 calls/s (throttled) against one polling once a
 * second (never throttled), a consumer stalled past the retention period (records
 * expire unread, its iterator is refreshed), the consumer conservation rule of
 * kds_consumer.h for every consumer and start position, a catch-up reader held to the
 * shard's 2 MiB/s, and determinism of whole worlds under a fixed seed.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

#define MAX_CONSUMERS 8

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_consumer_cfg cons[MAX_CONSUMERS];
    kds_capacity_event ev[4];
    kds_world w;
} fixture;

static const char *const NAMES[MAX_CONSUMERS] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"};

/* A stream of `shards` shards, one producer of 1 KiB records at `rate` records/s that
 * stops 10 s before the end (so that readers can catch up), and `n` polling consumers
 * from TRIM_HORIZON polling every `idle`. */
static void fx_defaults(fixture *f, uint32_t shards, sim_time duration, double rate, size_t n,
                        sim_time idle)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 4242, duration, shards, rate, 1024);
    f->prod.stop = duration - SIM_S(10);
    ck_assert_uint_le(n, MAX_CONSUMERS);
    for (size_t i = 0; i < n; i++) {
        f->cons[i].kind = KDS_CONSUMER_POLLING;
        kds_poller_cfg_defaults(&f->cons[i].polling);
        f->cons[i].polling.name = NAMES[i];
        f->cons[i].polling.idle = idle;
    }
    f->cfg.consumers = f->cons;
    f->cfg.n_consumers = n;
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

static uint64_t stored_total(fixture *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        sum += f->w.stream.shards[i]->st.records_in;
    return sum;
}

/* kds_consumer.h: for each consumer, what the shards stored equals what it skipped at
 * its start, delivered, left unread and lost to expiry. */
static void check_consumer_conservation(fixture *f)
{
    uint64_t in = stored_total(f);
    for (size_t i = 0; i < f->w.n_consumers; i++) {
        const kds_consumer_stats *cs = cst(f, i);
        uint64_t acc = cs->records_skipped_at_start + cs->records_delivered + cs->records_unread +
                       cs->records_expired_unread;
        ck_assert_msg(acc == in,
                      "consumer %zu: skipped %llu + delivered %llu + unread %llu + expired %llu"
                      " = %llu, stored %llu",
                      i, (unsigned long long)cs->records_skipped_at_start,
                      (unsigned long long)cs->records_delivered,
                      (unsigned long long)cs->records_unread,
                      (unsigned long long)cs->records_expired_unread, (unsigned long long)acc,
                      (unsigned long long)in);
    }
}

/* The shard's call counters agree with the consumers'. */
static void check_call_books(fixture *f)
{
    uint64_t calls = 0, throttled = 0, sh_calls = 0, sh_throttled = 0;
    for (size_t i = 0; i < f->w.n_consumers; i++) {
        calls += cst(f, i)->getrecords_calls;
        throttled += cst(f, i)->read_throttled_calls;
    }
    for (size_t i = 0; i < f->w.stream.n_shards; i++) {
        sh_calls += f->w.stream.shards[i]->st.read_calls;
        sh_throttled += f->w.stream.shards[i]->st.read_throttled_calls;
    }
    ck_assert_uint_eq(throttled, sh_throttled);
    ck_assert_uint_eq(calls, sh_calls + sh_throttled);
}

/* ---- shared throughput ---------------------------------------------------------------- */

/* Six consumers polling every 200 ms share one shard's 5 calls/s: the shard and every
 * consumer see throttled calls, and admitted calls stay within the budget. */
START_TEST(test_six_consumers_throttled)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(60), 100, 6, SIM_MS(200));
    fx_run(&f);
    kds_shard_stats *ss = &f.w.stream.shards[0]->st;
    ck_assert_uint_gt(ss->read_throttled_calls, 0);
    for (size_t i = 0; i < 6; i++) {
        const kds_consumer_stats *cs = cst(&f, i);
        ck_assert_msg(cs->read_throttled_calls > 0, "consumer %zu never throttled", i);
        /* Throttled or not, a call is followed by one round trip and one idle
         * interval: at most one call per 200 ms, and not far below that. */
        ck_assert_uint_le(cs->getrecords_calls, 60 * 5 + 1);
        ck_assert_uint_ge(cs->getrecords_calls, 60 * 5 * 2 / 3);
    }
    /* 5 calls/s over 60 s plus the 5-call burst. */
    ck_assert_uint_le(ss->read_calls, 5 * 60 + 5);
    ck_assert_uint_ge(ss->read_calls, 5 * 60 - 30);
    check_call_books(&f);
    check_consumer_conservation(&f);
    /* Throttled or not, each consumer got everything by the end. */
    for (size_t i = 0; i < 6; i++)
        ck_assert_uint_eq(cst(&f, i)->records_delivered, ss->records_in);
    kds_world_fini(&f.w);
}
END_TEST

/* One consumer polling once a second stays far below 5 calls/s: never throttled. */
START_TEST(test_single_slow_consumer_not_throttled)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(60), 100, 1, SIM_S(1));
    fx_run(&f);
    kds_shard_stats *ss = &f.w.stream.shards[0]->st;
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_eq(ss->read_throttled_calls, 0);
    ck_assert_uint_eq(cs->read_throttled_calls, 0);
    ck_assert_uint_gt(cs->getrecords_calls, 50);
    ck_assert_uint_eq(cs->records_delivered, ss->records_in);
    ck_assert_uint_eq(cs->bytes_delivered, ss->bytes_in);
    ck_assert_uint_eq(cs->bytes_read_shared, ss->bytes_out);
    ck_assert_uint_eq(cs->records_unread, 0);
    ck_assert_uint_eq(cs->records_expired_unread, 0);
    ck_assert_uint_gt(cs->empty_calls, 0); /* the quiet tail */
    check_call_books(&f);
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* Sharing the shard's calls delays delivery: six consumers at 200 ms see a larger mean
 * write-to-process latency than one alone at 200 ms. */
START_TEST(test_sharing_raises_latency)
{
    fixture one, six;
    fx_defaults(&one, 1, SIM_S(60), 100, 1, SIM_MS(200));
    fx_defaults(&six, 1, SIM_S(60), 100, 6, SIM_MS(200));
    fx_run(&one);
    fx_run(&six);
    double l1 = sim_hist_mean(&cst(&one, 0)->latency_ms);
    ck_assert_uint_eq(cst(&one, 0)->read_throttled_calls, 0);
    ck_assert(l1 > 25 && l1 < 400);
    for (size_t i = 0; i < 6; i++) {
        double l6 = sim_hist_mean(&cst(&six, i)->latency_ms);
        ck_assert_msg(l6 > 1.5 * l1, "consumer %zu: %.0f ms vs %.0f ms alone", i, l6, l1);
    }
    kds_world_fini(&one.w);
    kds_world_fini(&six.w);
}
END_TEST

/* A reader starting late on a shard holding ~56 MiB of 64 KiB records: its first call
 * returns 10 MiB and opens the 5 s window; catching up it is held to about 2 MiB/s. */
START_TEST(test_catch_up_held_to_read_budget)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(100), 15, 1, SIM_MS(200));
    f.prod.size = sim_dist_const(64 * 1024);
    f.prod.stop = SIM_S(60);
    f.cons[0].polling.begin = SIM_S(60);
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    kds_shard_stats *ss = &f.w.stream.shards[0]->st;
    const kds_consumer_stats *cs = cst(&f, 0);

    /* By 70 s: the calls at ~60 s and ~65 s returned 160 records (10 MiB) each; every
     * call in between was throttled. Unthrottled, 200 ms polls would have read all 900
     * records within 1.2 s. */
    kds_world_run_until(&f.w, SIM_S(70));
    ck_assert_uint_eq(ss->records_in, 900);
    ck_assert_uint_ge(cs->records_delivered, 160);
    ck_assert_uint_le(cs->records_delivered, 320);
    ck_assert_uint_gt(cs->read_throttled_calls, 20);
    ck_assert_uint_eq(ss->records_out, cs->records_delivered);

    kds_world_run(&f.w);
    ck_assert_uint_eq(cs->records_delivered, 900);
    /* About 2 MiB/s: the 56.25 MiB needed 6 calls, 5 s apart. */
    ck_assert_uint_ge(ss->read_calls, 6);
    /* Its first call at 60 s returned records up to one written at about 10.7 s: an
     * iterator age of about 49 s. */
    ck_assert(cs->iterator_age_ms_max > 45000 && cs->iterator_age_ms_max < 60000);
    /* Delivered per minute: nothing in the first minute, everything in the second. */
    ck_assert(sim_series_get(&cs->delivered_min, 0) == 0);
    ck_assert(sim_series_get(&cs->delivered_min, 1) == 900);
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- retention ------------------------------------------------------------------------ */

/* Two shards written at 1 record/s for 27 h (24 h retention); one consumer reads all
 * along, another stalls from 1 h for 25 h, a third from 1 h to the end. The one that
 * resumes at 26 h has lost the hour of records written between 1 h and 2 h. */
START_TEST(test_stall_past_retention)
{
    fixture f;
    fx_defaults(&f, 2, SIM_HOUR(27), 1.0, 3, SIM_S(10));
    f.prod.linger = SIM_S(10);
    f.cons[1].polling.pause_at = SIM_HOUR(1);
    f.cons[1].polling.pause_for = SIM_HOUR(25);
    /* A third one stalls from 1 h to beyond the end of the run. */
    f.cons[2].polling.pause_at = SIM_HOUR(1);
    f.cons[2].polling.pause_for = SIM_HOUR(30);
    fx_run(&f);
    const kds_consumer_stats *steady = cst(&f, 0), *stalled = cst(&f, 1);
    const kds_consumer_stats *gone = cst(&f, 2);
    uint64_t in = stored_total(&f);
    ck_assert_uint_ge(in, 27 * 3600 - 20);

    ck_assert_uint_eq(steady->records_expired_unread, 0);
    ck_assert_uint_eq(steady->iterator_refreshes, 0);
    ck_assert_uint_gt(stalled->records_expired_unread, 0);
    ck_assert_uint_ge(stalled->records_expired_unread, 3500);
    ck_assert_uint_le(stalled->records_expired_unread, 3800);
    ck_assert_uint_gt(stalled->iterator_refreshes, 0); /* 25 h > 5 min iterator life */
    /* The stall shows in the iterator age: resuming at 26 h, the first call returned
     * 10,000 records of one shard (0.5 records/s from 2 h), the last written near
     * 7.6 h: 18.4 h behind. The steady reader never fell more than a poll behind. */
    ck_assert(stalled->iterator_age_ms_max > 17.0 * 3600 * 1000);
    ck_assert(stalled->iterator_age_ms_max < 24.0 * 3600 * 1000);
    ck_assert(steady->iterator_age_ms_max < 60.0 * 1000);
    /* The shards trimmed everything older than 3 h by the end. */
    uint64_t expired = 0;
    for (size_t i = 0; i < 2; i++)
        expired += f.w.stream.shards[i]->st.records_expired;
    ck_assert_uint_ge(expired, 3 * 3600 - 20);
    ck_assert_uint_le(expired, 3 * 3600 + 20);
    /* The one still stalled at the end never called again: what expired under its
     * cursor (written from 1 h to 3 h) is counted when the run settles, and the
     * last 24 h are unread. */
    ck_assert_uint_ge(gone->records_expired_unread, 2 * 3600 - 20);
    ck_assert_uint_le(gone->records_expired_unread, 2 * 3600 + 20);
    ck_assert_uint_ge(gone->records_unread, 24 * 3600 - 30);
    ck_assert_uint_eq(gone->iterator_refreshes, 0);
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- start positions ------------------------------------------------------------------ */

/* Consumers beginning at 20 s from LATEST, AT_TIMESTAMP 10 s, AT_SEQUENCE_NUMBER and
 * AFTER_SEQUENCE_NUMBER 100, and TRIM_HORIZON: each skips what lies before its start
 * and the books balance for every one. */
START_TEST(test_start_positions)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(40), 50, 5, SIM_MS(500));
    kds_start_kind kinds[5] = {KDS_START_LATEST, KDS_START_AT_TIMESTAMP,
                               KDS_START_AT_SEQUENCE_NUMBER, KDS_START_AFTER_SEQUENCE_NUMBER,
                               KDS_START_TRIM_HORIZON};
    for (size_t i = 0; i < 5; i++) {
        f.cons[i].polling.start = kinds[i];
        f.cons[i].polling.begin = SIM_S(20);
        f.cons[i].polling.start_time = SIM_S(10);
        f.cons[i].polling.start_pos = 100;
    }
    fx_run(&f);
    uint64_t in = stored_total(&f);
    ck_assert_uint_eq(in, 50 * 30);
    /* LATEST at 20 s: about 1,000 records were written before. */
    ck_assert_uint_ge(cst(&f, 0)->records_skipped_at_start, 950);
    ck_assert_uint_le(cst(&f, 0)->records_skipped_at_start, 1000);
    /* AT_TIMESTAMP 10 s: the records of the first 10 s. */
    ck_assert_uint_ge(cst(&f, 1)->records_skipped_at_start, 450);
    ck_assert_uint_le(cst(&f, 1)->records_skipped_at_start, 500);
    ck_assert_uint_eq(cst(&f, 2)->records_skipped_at_start, 100);
    ck_assert_uint_eq(cst(&f, 3)->records_skipped_at_start, 101);
    ck_assert_uint_eq(cst(&f, 4)->records_skipped_at_start, 0);
    for (size_t i = 0; i < 5; i++) {
        ck_assert_uint_eq(cst(&f, i)->records_unread, 0);
        ck_assert_uint_eq(cst(&f, i)->records_delivered + cst(&f, i)->records_skipped_at_start, in);
    }
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* A reader that has not caught up at the end counts the rest as unread. */
START_TEST(test_unread_at_end)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(30), 1000, 1, SIM_S(1));
    f.prod.stop = -1; /* writing to the end */
    f.cons[0].polling.max_records = 100;
    fx_run(&f);
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_gt(cs->records_unread, 10000);
    ck_assert_uint_le(cs->records_delivered, 100 * 31);
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- parents before children ---------------------------------------------------------- */

/* A split at 100 s (children 1 and 2 at 130 s) and a merge of the children at 200 s
 * (child 3 at 230 s) under a live reader polling every second with a slow and uneven
 * GetRecords (lognormal, median 1 s, sigma 1); and (_i odd) a reader stalled from 60 s
 * to 360 s while shard 0 is split at 100 s and child 1 again at 160 s (grandchildren 3
 * and 4 at 190 s). A child is read once its parents were read to their end and their
 * last reply processed: a child's records never reach the reader before its parents'
 * last ones, though a child's call may return faster than its parent's last did. Five
 * seeds each. */
START_TEST(test_children_after_parents)
{
    bool stalled = _i % 2;
    fixture f;
    fx_defaults(&f, 1, SIM_S(stalled ? 600 : 300), 200, 1, SIM_S(1));
    f.cfg.seed = 300 + (uint64_t)_i;
    kds_poller_cfg *c = &f.cons[0].polling;
    c->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 1000.0, 1.0, 1.0, 20000.0};
    f.ev[0] = (kds_capacity_event){.at = SIM_S(100), .kind = KDS_OP_SPLIT, .shard = 0};
    if (stalled) {
        c->pause_at = SIM_S(60);
        c->pause_for = SIM_S(300);
        f.ev[1] = (kds_capacity_event){.at = SIM_S(160), .kind = KDS_OP_SPLIT, .shard = 1};
    } else {
        f.ev[1] = (kds_capacity_event){.at = SIM_S(200), .kind = KDS_OP_MERGE, .shard = 1,
                                       .other = 2};
    }
    kds_capacity_cfg_defaults(&f.cfg.capacity);
    f.cfg.capacity.events = f.ev;
    f.cfg.capacity.n_events = 2;
    char *text = tw_run_traced(&f.w, &f.cfg);
    size_t n = f.w.stream.n_shards;
    ck_assert_uint_eq(n, stalled ? 5 : 4);
    tw_span sp[5];
    tw_trace_spans(text, NAMES[0], sp, n);
    free(text);
    tw_check_after(sp, 0, 1);
    tw_check_after(sp, 0, 2);
    if (stalled) {
        for (uint32_t i = 1; i < 5; i++)
            ck_assert_double_ge(sp[i].first, 360);
        tw_check_after(sp, 1, 3);
        tw_check_after(sp, 1, 4);
    } else {
        tw_check_after(sp, 1, 3);
        tw_check_after(sp, 2, 3);
    }
    ck_assert_uint_eq(cst(&f, 0)->children_started, n - 1);
    check_consumer_conservation(&f);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- determinism ---------------------------------------------------------------------- */

static void busy_world(fixture *f, uint64_t seed)
{
    fx_defaults(f, 4, SIM_S(40), 2000, 3, SIM_MS(250));
    f->cfg.seed = seed;
    f->prod.poisson = true;
    f->prod.size = (sim_dist){SIM_DIST_LOGNORMAL, 900, 0.6, 1, 100000};
    f->prod.timeout_rate = 0.02;
    f->cons[1].polling.process_ms = (sim_dist){SIM_DIST_EXP, 20, 0, 0, INFINITY};
    f->cons[2].polling.idle = SIM_MS(100);
}

static void compare_worlds(fixture *a, fixture *b, int *same, int *total)
{
    const kds_producer_stats *pa = kds_producer_stats_get(a->w.producers[0]);
    const kds_producer_stats *pb = kds_producer_stats_get(b->w.producers[0]);
    *same = *total = 0;
#define CMP(x, y)                                                                                  \
    do {                                                                                           \
        (*total)++;                                                                                \
        *same += (x) == (y);                                                                       \
    } while (0)
    CMP(pa->records_attempted, pb->records_attempted);
    CMP(pa->duplicates_written, pb->duplicates_written);
    CMP(pa->put_calls, pb->put_calls);
    for (size_t i = 0; i < 4; i++) {
        const kds_shard_stats *x = &a->w.stream.shards[i]->st, *y = &b->w.stream.shards[i]->st;
        CMP(x->records_in, y->records_in);
        CMP(x->bytes_in, y->bytes_in);
        CMP(x->read_calls, y->read_calls);
        CMP(x->read_throttled_calls, y->read_throttled_calls);
    }
    for (size_t i = 0; i < 3; i++) {
        const kds_consumer_stats *x = cst(a, i), *y = cst(b, i);
        CMP(x->records_delivered, y->records_delivered);
        CMP(x->getrecords_calls, y->getrecords_calls);
        CMP(x->read_throttled_calls, y->read_throttled_calls);
        CMP(sim_hist_mean(&x->latency_ms), sim_hist_mean(&y->latency_ms));
    }
    CMP(sim_events_run(a->w.sim), sim_events_run(b->w.sim));
#undef CMP
}

START_TEST(test_same_seed_identical)
{
    fixture a, b;
    busy_world(&a, 99);
    busy_world(&b, 99);
    fx_run(&a);
    fx_run(&b);
    int same, total;
    compare_worlds(&a, &b, &same, &total);
    ck_assert_int_eq(same, total);
    check_consumer_conservation(&a);
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

START_TEST(test_different_seed_differs)
{
    fixture a, b;
    busy_world(&a, 99);
    busy_world(&b, 100);
    fx_run(&a);
    fx_run(&b);
    int same, total;
    compare_worlds(&a, &b, &same, &total);
    ck_assert_msg(same < total / 4, "%d of %d counters equal across seeds", same, total);
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

/* Each entity draws from its own random stream: adding a consumer changes neither the
 * producer's figures nor (while the shard's read budget is not short) another
 * consumer's. */
START_TEST(test_adding_consumer_keeps_others_draws)
{
    fixture a, b;
    fx_defaults(&a, 2, SIM_S(60), 300, 1, SIM_S(1));
    fx_defaults(&b, 2, SIM_S(60), 300, 2, SIM_S(1));
    a.prod.poisson = b.prod.poisson = true;
    fx_run(&a);
    fx_run(&b);
    ck_assert(memcmp(kds_producer_stats_get(a.w.producers[0]),
                     kds_producer_stats_get(b.w.producers[0]), sizeof(kds_producer_stats)) == 0);
    ck_assert_uint_eq(cst(&b, 1)->read_throttled_calls, 0);
    const kds_consumer_stats *x = cst(&a, 0), *y = cst(&b, 0);
    ck_assert_uint_eq(x->getrecords_calls, y->getrecords_calls);
    ck_assert_uint_eq(x->records_delivered, y->records_delivered);
    ck_assert(sim_hist_mean(&x->latency_ms) == sim_hist_mean(&y->latency_ms));
    kds_world_fini(&a.w);
    kds_world_fini(&b.w);
}
END_TEST

static Suite *poller_suite(void)
{
    Suite *s = suite_create("kds_poller");

    TCase *shared = tcase_create("shared");
    tcase_add_test(shared, test_six_consumers_throttled);
    tcase_add_test(shared, test_single_slow_consumer_not_throttled);
    tcase_add_test(shared, test_sharing_raises_latency);
    tcase_add_test(shared, test_catch_up_held_to_read_budget);
    suite_add_tcase(s, shared);

    TCase *books = tcase_create("books");
    tcase_add_test(books, test_stall_past_retention);
    tcase_add_test(books, test_start_positions);
    tcase_add_test(books, test_unread_at_end);
    suite_add_tcase(s, books);

    TCase *order = tcase_create("parents before children");
    tcase_set_timeout(order, 60);
    tcase_add_loop_test(order, test_children_after_parents, 0, 10);
    suite_add_tcase(s, order);

    TCase *det = tcase_create("determinism");
    tcase_add_test(det, test_same_seed_identical);
    tcase_add_test(det, test_different_seed_differs);
    tcase_add_test(det, test_adding_consumer_keeps_others_draws);
    suite_add_tcase(s, det);
    return s;
}

int main(void)
{
    return tu_run_suite(poller_suite());
}
