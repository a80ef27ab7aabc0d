/* check_kds_efo.c - tests of enhanced fan-out (kds_efo.h, model.md section 3) in small
 * whole worlds (kds_world): SubscribeToShard sessions last 5 minutes and are renewed,
 * each renewal and the first subscription taking the subscribe round trip; each
 * consumer has its own 2 MiB/s per shard, so that three consumers of a shard written
 * near 1 MiB/s all keep up while one reading a backlog from TRIM_HORIZON is held to
 * 2 MiB/s; and MillisBehindLatest, 0 for a consumer at the tip, about the backlog's
 * age for one behind it, falling as it catches up.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kds_efo.h"
#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

#define MAX_CONSUMERS 4

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_efo_consumer_cfg efo[MAX_CONSUMERS];
    kds_consumer_cfg cons[MAX_CONSUMERS];
    kds_capacity_event ev[4];
    kds_world w;
} fixture;

static const char *const NAMES[MAX_CONSUMERS] = {"e0", "e1", "e2", "e3"};

/* A stream of `shards` shards, one producer writing `rate` evenly spaced records/s of
 * `size` B each (PutRecords batches, the defaults), and `n` EFO consumers with the
 * defaults of kds_efo_cfg_defaults (LATEST, 2 MiB/s, sessions of 5 min). */
static void fx_defaults(fixture *f, uint32_t shards, sim_time duration, double rate,
                        double size, size_t n)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 2718, duration, shards, rate, size);
    ck_assert_uint_le(n, MAX_CONSUMERS);
    for (size_t i = 0; i < n; i++) {
        kds_efo_consumer_cfg_defaults(&f->efo[i]);
        f->efo[i].name = NAMES[i];
        f->cons[i].kind = KDS_CONSUMER_MODEL;
        f->cons[i].make = kds_efo_make;
        f->cons[i].cfg = &f->efo[i];
    }
    f->cfg.consumers = f->cons;
    f->cfg.n_consumers = n;
}

static void fx_init(fixture *f)
{
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
}

static const kds_consumer_stats *cst(fixture *f, size_t i)
{
    return &f->w.consumers[i]->st;
}

/* A figure the consumer reports (kds_consumer_ops.figures), by key. */
typedef struct figure_query {
    const char *key;
    double value;
    int found;
} figure_query;

static void figure_cb(void *arg, const char *key, double value)
{
    figure_query *q = arg;
    if (strcmp(key, q->key) == 0) {
        q->value = value;
        q->found = 1;
    }
}

static double figure(fixture *f, size_t i, const char *key)
{
    const kds_consumer *c = f->w.consumers[i];
    figure_query q = {key, 0, 0};
    ck_assert(c->ops->figures != NULL);
    c->ops->figures(c, figure_cb, &q);
    ck_assert_msg(q.found, "no figure %s", key);
    return q.value;
}

static uint64_t write_throttled(fixture *f)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        sum += f->w.stream.shards[i]->st.write_throttled_records;
    return sum;
}

/* ---- sessions --------------------------------------------------------------------------- */

/* Two shards, 31 minutes. With a constant 50 s SubscribeToShard round trip, the
 * sessions of each shard start at 50 s, then every 300 s + 50 s: 50, 400, 750, 1100,
 * 1450 and 1800 s (the next, 2150 s, is past 1860 s): 6 per shard, 12 in all. With the
 * default round trip (lognormal, median 100 ms) they start about every 300.1 s from
 * 0.1 s, the 7th near 1800.7 s: 7 per shard, 14 in all. */
START_TEST(test_sessions_renewed_every_five_minutes)
{
    fixture f;
    fx_defaults(&f, 2, SIM_MIN(31), 10, 1024, 2);
    f.efo[0].efo.subscribe_ms = sim_dist_const(50000);
    fx_init(&f);
    kds_world_run(&f.w);
    ck_assert_double_eq(figure(&f, 0, "subscriptions"), 12);
    ck_assert_double_eq(figure(&f, 1, "subscriptions"), 14);
    /* The round trip is time without pushes: the records written in the first 50 s
     * (LATEST from 0 s) wait for the first session, so the oldest is delivered 50 s
     * plus one push delay (median 65 ms) after it was written. At 10 records/s the
     * 50 s are 500 KiB, one push within the 2 MiB the budget holds. */
    double worst = sim_hist_quantile(&cst(&f, 0)->latency_ms, 1.0);
    ck_assert_msg(worst >= 50000 && worst < 51000, "worst latency %.0f ms", worst);
    /* With the default round trip, nothing waits that long. */
    ck_assert_double_lt(sim_hist_quantile(&cst(&f, 1)->latency_ms, 1.0), 2000);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- each consumer's own 2 MiB/s -------------------------------------------------------- */

/* One shard written at 240 records/s of 4 KiB = 960 KiB/s (under its 1 MiB/s, evenly
 * spaced: never throttled), read by three EFO consumers from LATEST: 2,880 KiB/s
 * together, more than one shared 2 MiB/s could give, yet each has its own 2 MiB/s
 * and keeps up: it delivers every record stored (the producer stops 10 s before the
 * end), each within a push delay and a resubscription of its write, and its
 * MillisBehindLatest never leaves 0 (every push reaches the tip). */
START_TEST(test_consumers_each_keep_up)
{
    fixture f;
    fx_defaults(&f, 1, SIM_MIN(12), 240, 4096, 3);
    f.prod.stop = SIM_MIN(12) - SIM_S(10);
    fx_init(&f);
    kds_world_run(&f.w);
    const kds_shard_stats *ss = &f.w.stream.shards[0]->st;
    ck_assert_uint_eq(write_throttled(&f), 0);
    ck_assert_uint_eq(ss->records_in, 240 * (12 * 60 - 10));
    for (size_t i = 0; i < 3; i++) {
        const kds_consumer_stats *cs = cst(&f, i);
        ck_assert_uint_eq(cs->records_delivered, ss->records_in);
        ck_assert_uint_eq(cs->bytes_read_efo, ss->bytes_in);
        ck_assert_uint_eq(cs->records_unread, 0);
        ck_assert_double_eq(cs->iterator_age_ms_max, 0.0);
        ck_assert_double_eq(figure(&f, i, "millis_behind_latest_max"), 0.0);
        double worst = sim_hist_quantile(&cs->latency_ms, 1.0);
        ck_assert_msg(worst < 2000, "consumer %zu: worst latency %.0f ms", i, worst);
    }
    kds_world_fini(&f.w);
}
END_TEST

/* The catch-up reader of the next two tests: one shard written at 960 KiB/s (as above)
 * for 12 minutes, one EFO consumer registering at 5 min and reading from TRIM_HORIZON,
 * 300 s of writes (281 MiB) behind. */
static void fx_backlog(fixture *f)
{
    fx_defaults(f, 1, SIM_MIN(12), 240, 4096, 1);
    f->efo[0].start = KDS_START_TRIM_HORIZON;
    f->efo[0].begin = SIM_MIN(5);
    fx_init(f);
}

/* Reading at 2 MiB/s = 2,097,152 B/s against writes of 983,040 B/s, the reader gains
 * 1,114,112 B/s: the backlog of 300 s x 983,040 B = 294,912,000 B is gone after about
 * 265 s, near 9.4 min. From 6 to 8 minutes it is behind throughout, and pushes what
 * its budget allows: 120 s x 2 MiB/s = 240 MiB, give or take what the bucket (2 MiB
 * deep) held at 6 min and has left at 8 min, and one record's overdraft (a record is
 * pushed whole past an exhausted budget). */
START_TEST(test_backlog_reader_held_to_2_mib)
{
    fixture f;
    fx_backlog(&f);
    kds_world_run_until(&f.w, SIM_MIN(6));
    uint64_t at6 = cst(&f, 0)->bytes_read_efo;
    ck_assert_uint_gt(at6, 0);
    kds_world_run_until(&f.w, SIM_MIN(8));
    uint64_t pushed = cst(&f, 0)->bytes_read_efo - at6;
    const uint64_t rate = 2 * KDS_MIB, depth = 2 * KDS_MIB, record = 4096;
    ck_assert_uint_le(pushed, 120 * rate + depth + record);
    ck_assert_uint_ge(pushed, 120 * rate - depth);
    /* Still behind at 8 min: the shard holds more than was pushed. */
    ck_assert_uint_lt(cst(&f, 0)->bytes_read_efo, f.w.stream.shards[0]->st.bytes_in);
    kds_world_run(&f.w);
    /* Caught up by the end: everything stored was delivered. */
    ck_assert_uint_eq(cst(&f, 0)->records_delivered, f.w.stream.shards[0]->st.records_in -
                                                         cst(&f, 0)->records_unread);
    ck_assert_uint_lt(cst(&f, 0)->records_unread, 240);
    kds_world_fini(&f.w);
}
END_TEST

/* MillisBehindLatest of the catch-up reader, the maximum per minute (iterator_age_min).
 * Its first push, at 300.1 s, takes the 2 MiB its full bucket holds (2.13 s of
 * writes), so the last record pushed is about 298 s old. Reading 2,097,152 / 983,040
 * = 2.133 s of writes per second, it gains 1.133 s a second: at minute m (6..9) the
 * age is about 298 - 1.133 x (60 m - 300) s: 230, 162, 94 and 26 s, each the
 * minute's maximum (its first push). Caught up near 563 s, it is 0 from minute 10 on,
 * as for any reader at the tip. */
START_TEST(test_millis_behind_latest_falls)
{
    fixture f;
    fx_backlog(&f);
    kds_world_run(&f.w);
    const kds_consumer_stats *cs = cst(&f, 0);
    const double gain = 2097152.0 / 983040.0 - 1.0;
    ck_assert_msg(fabs(cs->iterator_age_ms_max - 298000) < 2000, "max %.0f ms",
                  cs->iterator_age_ms_max);
    ck_assert_double_eq(figure(&f, 0, "millis_behind_latest_max"), cs->iterator_age_ms_max);
    for (size_t m = 5; m <= 9; m++) {
        double want = (298.0 - gain * (60.0 * (double)m - 300.0)) * 1000.0;
        double got = sim_series_get(&cs->iterator_age_min, m);
        ck_assert_msg(fabs(got - want) < 2000, "minute %zu: %.0f ms, expected %.0f", m, got,
                      want);
    }
    for (size_t m = 10; m < 12; m++)
        ck_assert_double_eq(sim_series_get(&cs->iterator_age_min, m), 0.0);
    kds_world_fini(&f.w);
}
END_TEST

/* ---- parents before children -------------------------------------------------------------- */

/* Request `n` resharding operations of f->ev (set by the caller) at their times. */
static void fx_reshard(fixture *f, size_t n)
{
    kds_capacity_cfg_defaults(&f->cfg.capacity);
    f->cfg.capacity.events = f->ev;
    f->cfg.capacity.n_events = n;
}

/* A split at 100 s (children 1 and 2 at 130 s) and a merge of the children at 200 s
 * (child 3 at 230 s) under a live consumer. SHARD_END reaches a caught-up subscription
 * with its parent's last push, but that push is still in flight for a push delay; the
 * consumer subscribes to the children when it has arrived. A wide push delay
 * (lognormal, sigma 1), a 1 ms SubscribeToShard and puts every 10 ms would let a child's
 * first push overtake the parent's last one otherwise. Eight seeds. */
START_TEST(test_live_reshard_children_after_parents)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(300), 500, 1024, 1);
    f.cfg.seed = 100 + (uint64_t)_i;
    f.prod.linger = SIM_MS(10);
    f.efo[0].start = KDS_START_TRIM_HORIZON;
    f.efo[0].efo.push_delay_ms = (sim_dist){SIM_DIST_LOGNORMAL, 65.0, 1.0, 1.0, 10000.0};
    f.efo[0].efo.subscribe_ms = sim_dist_const(1);
    f.ev[0] = (kds_capacity_event){.at = SIM_S(100), .kind = KDS_OP_SPLIT, .shard = 0};
    f.ev[1] = (kds_capacity_event){.at = SIM_S(200), .kind = KDS_OP_MERGE, .shard = 1, .other = 2};
    fx_reshard(&f, 2);
    char *text = tw_run_traced(&f.w, &f.cfg);
    ck_assert_uint_eq(f.w.stream.n_shards, 4);
    tw_span sp[4];
    tw_trace_spans(text, NAMES[0], sp, 4);
    free(text);
    tw_check_after(sp, 0, 1);
    tw_check_after(sp, 0, 2);
    tw_check_after(sp, 1, 3);
    tw_check_after(sp, 2, 3);
    ck_assert_uint_eq(cst(&f, 0)->children_started, 3);
    kds_world_fini(&f.w);
}
END_TEST

/* A consumer registered at 200 s, after shard 0 was split at 60 s (children at 90 s):
 * from TRIM_HORIZON it reads shard 0's 90 s of records to their end before either child,
 * and counts both as children that waited. From LATEST there is nothing left in shard
 * 0, and the children, which wait for it all the same, start at the records written
 * from 200 s: only what was written before is skipped. */
START_TEST(test_late_consumer_reads_parent_first)
{
    bool latest = _i;
    fixture f;
    fx_defaults(&f, 1, SIM_S(400), 500, 1024, 1);
    f.prod.stop = SIM_S(390);
    f.efo[0].begin = SIM_S(200);
    f.efo[0].start = latest ? KDS_START_LATEST : KDS_START_TRIM_HORIZON;
    f.ev[0] = (kds_capacity_event){.at = SIM_S(60), .kind = KDS_OP_SPLIT, .shard = 0};
    fx_reshard(&f, 1);
    char *text = tw_run_traced(&f.w, &f.cfg);
    tw_span sp[3];
    tw_trace_spans(text, NAMES[0], sp, 3);
    free(text);
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_eq(cs->children_started, 2);
    ck_assert_double_gt(cs->child_wait_ms_max, 0);
    if (latest) {
        ck_assert_double_lt(sp[0].first, 0); /* nothing of shard 0 after 200 s */
        ck_assert_uint_le(cs->records_skipped_at_start, 200 * 500 + 50);
        ck_assert_uint_ge(cs->records_skipped_at_start, 200 * 500 - 50);
    } else {
        tw_check_after(sp, 0, 1);
        tw_check_after(sp, 0, 2);
        ck_assert_uint_eq(cs->records_skipped_at_start, 0);
    }
    ck_assert_uint_eq(cs->records_unread, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* A consumer paused from 60 s to 360 s while shard 0 is split at 100 s (children 1 and 2
 * at 130 s) and child 1 split again at 160 s (grandchildren 3 and 4 at 190 s): nothing is
 * read during the pause, and after it shard 0 comes first, then 1 and 2, then 3 and 4
 * after 1, though 1 had not been started when its children appeared. */
START_TEST(test_paused_consumer_grandchildren_wait)
{
    fixture f;
    fx_defaults(&f, 1, SIM_S(600), 500, 1024, 1);
    f.efo[0].start = KDS_START_TRIM_HORIZON;
    f.efo[0].pause_at = SIM_S(60);
    f.efo[0].pause_for = SIM_S(300);
    f.ev[0] = (kds_capacity_event){.at = SIM_S(100), .kind = KDS_OP_SPLIT, .shard = 0};
    f.ev[1] = (kds_capacity_event){.at = SIM_S(160), .kind = KDS_OP_SPLIT, .shard = 1};
    fx_reshard(&f, 2);
    char *text = tw_run_traced(&f.w, &f.cfg);
    ck_assert_uint_eq(f.w.stream.n_shards, 5);
    tw_span sp[5];
    tw_trace_spans(text, NAMES[0], sp, 5);
    free(text);
    for (uint32_t i = 1; i < 5; i++)
        ck_assert_msg(sp[i].first >= 360, "shard %u read at %.3f s, in the pause", i,
                      sp[i].first);
    tw_check_after(sp, 0, 1);
    tw_check_after(sp, 0, 2);
    tw_check_after(sp, 1, 3);
    tw_check_after(sp, 1, 4);
    ck_assert_uint_eq(cst(&f, 0)->children_started, 4);
    ck_assert_uint_eq(cst(&f, 0)->records_unread, 0);
    kds_world_fini(&f.w);
}
END_TEST

/* The run ends while children still wait for their parents: shard 0 split at 10 s
 * (children at 40 s) and the consumer paused for the rest of the run. Their records
 * count as unread (none expired in 80 s) and the record conservation invariant holds:
 * it once stopped the run, as the children, with no subscription yet, were left out of
 * the count. Paused at 30 s from TRIM_HORIZON, shard 0's last 10 s are unread as well
 * and nothing is skipped. Registered (and paused at once) at 50 s from LATEST, the
 * children wait at the position of 50 s: all of shard 0 and their first 10 s are
 * skipped, the rest is unread. */
START_TEST(test_run_ends_with_children_waiting)
{
    bool latest = _i;
    fixture f;
    fx_defaults(&f, 1, SIM_S(80), 100, 1024, 1);
    f.efo[0].start = latest ? KDS_START_LATEST : KDS_START_TRIM_HORIZON;
    f.efo[0].begin = latest ? SIM_S(50) : 0;
    f.efo[0].pause_at = latest ? SIM_S(50) : SIM_S(30);
    f.efo[0].pause_for = SIM_HOUR(1);
    f.ev[0] = (kds_capacity_event){.at = SIM_S(10), .kind = KDS_OP_SPLIT, .shard = 0};
    fx_reshard(&f, 1);
    fx_init(&f);
    kds_world_run(&f.w);
    ck_assert_int_eq(f.w.violated, 0);
    ck_assert_uint_eq(f.w.stream.n_shards, 3);
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_eq(cs->children_started, 0);
    uint64_t parent = f.w.stream.shards[0]->log.end_pos, children = 0;
    for (uint32_t i = 1; i < 3; i++)
        children += f.w.stream.shards[i]->log.end_pos;
    ck_assert_uint_gt(children, 0);
    ck_assert_uint_eq(cs->records_expired_unread, 0);
    if (latest) {
        ck_assert_uint_eq(cs->records_delivered, 0);
        uint64_t before = cs->records_skipped_at_start - parent; /* about 10 s of 100/s */
        ck_assert_uint_ge(before, 900);
        ck_assert_uint_le(before, 1100);
        ck_assert_uint_eq(cs->records_unread, children - before);
    } else {
        ck_assert_uint_eq(cs->records_skipped_at_start, 0);
        uint64_t parent_unread = cs->records_unread - children; /* about 10 s of 100/s */
        ck_assert_uint_ge(parent_unread, 900);
        ck_assert_uint_le(parent_unread, 1100);
        ck_assert_uint_eq(cs->records_delivered + parent_unread, parent);
    }
    kds_world_fini(&f.w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kds_efo");
    TCase *sessions = tcase_create("sessions");
    tcase_add_test(sessions, test_sessions_renewed_every_five_minutes);
    suite_add_tcase(s, sessions);
    TCase *budget = tcase_create("throughput");
    tcase_set_timeout(budget, 120);
    tcase_add_test(budget, test_consumers_each_keep_up);
    tcase_add_test(budget, test_backlog_reader_held_to_2_mib);
    tcase_add_test(budget, test_millis_behind_latest_falls);
    suite_add_tcase(s, budget);
    TCase *order = tcase_create("parents before children");
    tcase_set_timeout(order, 120);
    tcase_add_loop_test(order, test_live_reshard_children_after_parents, 0, 8);
    tcase_add_loop_test(order, test_run_ends_with_children_waiting, 0, 2);
    tcase_add_loop_test(order, test_late_consumer_reads_parent_first, 0, 2);
    tcase_add_test(order, test_paused_consumer_grandchildren_wait);
    suite_add_tcase(s, order);
    return tu_run_suite(s);
}
