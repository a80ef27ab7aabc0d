/* check_kds_flink.c - tests of the Managed Apache Flink consumer in small whole worlds
 * (kds_world): after a failure, the duplicates equal exactly the records processed
 * since the last completed checkpoint (checked against the same world run without the
 * failure up to the failure and up to the checkpoint), for polling and EFO, with a
 * checkpoint in progress, before any checkpoint, and with two failures; no duplicates
 * without failures; polling against EFO latency; checkpoint counts; parents read to
 * their end before their children (split and merge, and a split read live) and the
 * children's waits in the common statistics; the conservation rule of
 * kds_consumer.h in every world; determinism under a fixed seed; a fixed processing
 * time worked out once agrees with the general computation.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_capacity.h"
#include "kds_flink.h"
#include "kds_trace.h"
#include "kds_world.h"
#include "testutil.h"

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_consumer_cfg cons;
    kds_flink_cfg fl;
    sim_time failures[4];
    kds_capacity_event ev[2];
    kds_world w;
} fixture;

/* Two shards, a producer of 1 KiB records at 200 records/s from 0 to the end, and one
 * Flink application from TRIM_HORIZON checkpointing every 60 s. */
static void fx_defaults(fixture *f, kds_flink_retrieval r, sim_time duration)
{
    memset(f, 0, sizeof *f);
    f->cfg.seed = 31337;
    f->cfg.duration = duration;
    kds_stream_cfg_defaults(&f->cfg.stream);
    f->cfg.stream.shards = 2;
    kds_producer_cfg_defaults(&f->prod);
    f->prod.name = "prod";
    f->prod.rate = kds_rate_constant(200);
    f->prod.poisson = true;
    f->prod.size = sim_dist_const(1024);
    f->cfg.producers = &f->prod;
    f->cfg.n_producers = 1;
    kds_flink_cfg_defaults(&f->fl);
    f->fl.name = "app";
    f->fl.retrieval = r;
    f->fl.start = KDS_START_TRIM_HORIZON;
    f->fl.process_ms = sim_dist_const(5);
    f->fl.process_ms_per_record = 0.01;
    f->fl.failures = f->failures;
    f->cons.kind = KDS_CONSUMER_MODEL;
    f->cons.make = kds_flink_make;
    f->cons.cfg = &f->fl;
    f->cfg.consumers = &f->cons;
    f->cfg.n_consumers = 1;
}

static void fx_fail_at(fixture *f, sim_time t)
{
    ck_assert_uint_lt(f->fl.n_failures, 4);
    f->failures[f->fl.n_failures++] = t;
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

static const kds_flink_stats *fst(fixture *f)
{
    return kds_flink_stats_get(f->w.consumers[0]);
}

static uint64_t stored_records(const kds_world *w)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < w->stream.n_shards; i++)
        sum += w->stream.shards[i]->st.records_in;
    return sum;
}

/* kds_consumer.h: stored = skipped at the start + delivered (first deliveries) + unread
 * + expired unread, however many times records were replayed. */
static void check_conservation(fixture *f)
{
    const kds_consumer_stats *cs = cst(f);
    uint64_t acc = cs->records_skipped_at_start + cs->records_delivered + cs->records_unread +
                   cs->records_expired_unread;
    ck_assert_msg(acc == stored_records(&f->w),
                  "skipped %llu + delivered %llu + unread %llu + expired %llu = %llu, "
                  "stored %llu",
                  (unsigned long long)cs->records_skipped_at_start,
                  (unsigned long long)cs->records_delivered,
                  (unsigned long long)cs->records_unread,
                  (unsigned long long)cs->records_expired_unread, (unsigned long long)acc,
                  (unsigned long long)stored_records(&f->w));
}

/* The records the application had processed by time t, in the same world without
 * failures: run it to t and settle. */
static uint64_t processed_by(kds_flink_retrieval r, sim_time t, void (*tweak)(fixture *))
{
    fixture *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    fx_defaults(g, r, SIM_S(600));
    if (tweak)
        tweak(g);
    ck_assert_int_eq(kds_world_init(&g->w, &g->cfg), 0);
    kds_world_run_until(&g->w, t);
    kds_world_finish(&g->w);
    uint64_t n = cst(g)->records_delivered;
    kds_world_fini(&g->w);
    free(g);
    return n;
}

static const kds_flink_retrieval RETRIEVALS[] = {KDS_FLINK_POLLING, KDS_FLINK_EFO};

/* ---- failures and checkpoints ------------------------------------------------------------ */

/* A failure at 200 s; the last checkpoint completed at 180 s. After the restart the
 * records processed in (180 s, 200 s] are processed again: the duplicates equal them
 * exactly, as the same world without the failure counts them. */
START_TEST(test_duplicates_equal_processed_since_checkpoint)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(600));
    fx_fail_at(f, SIM_S(200));
    fx_run(f);
    uint64_t expect = processed_by(r, SIM_S(200), NULL) - processed_by(r, SIM_S(180), NULL);
    ck_assert_uint_gt(expect, 3000); /* 20 s at 200 records/s, less what was in flight */
    ck_assert_uint_eq(cst(f)->duplicates_delivered, expect);
    ck_assert_uint_eq(fst(f)->records_replayed, expect);
    ck_assert_uint_eq(fst(f)->records_processed_since_checkpoint, expect);
    ck_assert_uint_eq(fst(f)->restarts, 1);
    ck_assert_double_eq(fst(f)->last_checkpoint_age_ms, 20000.0);
    ck_assert_double_eq(fst(f)->downtime_ms, 10000.0);
    ck_assert_uint_eq(fst(f)->checkpoints, 10);
    /* Every record was processed at least once by the end. */
    ck_assert_uint_ge(cst(f)->records_delivered + cst(f)->records_unread, stored_records(&f->w));
    ck_assert_uint_lt(cst(f)->records_unread, 400);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

static void slow_checkpoints(fixture *f)
{
    f->fl.checkpoint_duration = SIM_S(5);
}

/* A failure 2 s after a checkpoint's barrier, before it completes (it takes 5 s): the
 * job restarts from the checkpoint before, 60 s earlier. */
START_TEST(test_checkpoint_in_progress_is_not_used)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(600));
    slow_checkpoints(f);
    fx_fail_at(f, SIM_S(182));
    fx_run(f);
    uint64_t expect = processed_by(r, SIM_S(182), slow_checkpoints) -
                      processed_by(r, SIM_S(120), slow_checkpoints);
    ck_assert_uint_eq(cst(f)->duplicates_delivered, expect);
    ck_assert_uint_eq(fst(f)->records_processed_since_checkpoint, expect);
    ck_assert_uint_eq(fst(f)->checkpoints_aborted, 1);
    ck_assert_double_eq(fst(f)->last_checkpoint_age_ms, 62000.0);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* A failure before the first checkpoint: the job starts over from its start positions;
 * everything processed so far is processed again. */
START_TEST(test_failure_before_first_checkpoint)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(600));
    fx_fail_at(f, SIM_S(45));
    fx_run(f);
    uint64_t expect = processed_by(r, SIM_S(45), NULL);
    ck_assert_uint_gt(expect, 8000);
    ck_assert_uint_eq(cst(f)->duplicates_delivered, expect);
    ck_assert_uint_eq(fst(f)->records_processed_since_checkpoint, expect);
    ck_assert_double_eq(fst(f)->last_checkpoint_age_ms, 45000.0);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* Two failures, the second while the first's replay may still run: the duplicates
 * still equal the sum over both failures of what was processed since the checkpoint. */
START_TEST(test_two_failures)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(900));
    f->fl.process_ms_per_record = 1.0; /* a replay of 8,000 records takes about 8 s */
    f->fl.restart_delay = SIM_S(3);
    fx_fail_at(f, SIM_S(230));
    fx_fail_at(f, SIM_S(237));
    fx_fail_at(f, SIM_S(500));
    fx_run(f);
    const kds_flink_stats *fs = fst(f);
    ck_assert_uint_eq(fs->restarts, 3);
    ck_assert_uint_gt(fs->records_replayed, 10000);
    ck_assert_uint_eq(fs->records_replayed, fs->records_processed_since_checkpoint);
    ck_assert_uint_eq(cst(f)->duplicates_delivered, fs->records_replayed);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* No failure, no duplicates: one checkpoint a minute, nothing replayed. */
START_TEST(test_no_duplicates_without_failures)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(610));
    fx_run(f);
    ck_assert_uint_eq(cst(f)->duplicates_delivered, 0);
    ck_assert_uint_eq(fst(f)->records_replayed, 0);
    ck_assert_uint_eq(fst(f)->restarts, 0);
    ck_assert_uint_eq(fst(f)->checkpoints, 10);
    ck_assert_uint_lt(cst(f)->records_unread, 400);
    ck_assert_uint_gt(cst(f)->records_delivered, 600 * 200 - 400);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* Reading from LATEST through EFO and by polling (every 200 ms): EFO's push is about
 * 70 ms; polling waits half an interval plus a round trip. */
START_TEST(test_polling_vs_efo_latency)
{
    fixture *p = malloc(sizeof *p), *e = malloc(sizeof *e);
    fx_defaults(p, KDS_FLINK_POLLING, SIM_S(300));
    fx_defaults(e, KDS_FLINK_EFO, SIM_S(300));
    p->fl.start = e->fl.start = KDS_START_LATEST;
    p->fl.process_ms = e->fl.process_ms = sim_dist_const(0);
    p->fl.process_ms_per_record = e->fl.process_ms_per_record = 0;
    fx_run(p);
    fx_run(e);
    double lp = sim_hist_mean(&cst(p)->latency_ms), le = sim_hist_mean(&cst(e)->latency_ms);
    ck_assert_double_ge(lp, 110);
    ck_assert_double_le(lp, 200);
    ck_assert_double_ge(le, 55);
    ck_assert_double_le(le, 90);
    ck_assert_double_lt(le, lp);
    ck_assert_uint_gt(cst(p)->getrecords_calls, 2 * 1000);
    ck_assert_uint_eq(cst(e)->getrecords_calls, 0);
    ck_assert_uint_gt(cst(e)->bytes_read_efo, 0);
    ck_assert_uint_eq(cst(p)->bytes_read_efo, 0);
    check_conservation(p);
    check_conservation(e);
    kds_world_fini(&p->w);
    kds_world_fini(&e->w);
    free(p);
    free(e);
}
END_TEST

/* ---- shard order ------------------------------------------------------------------------- */

/* Shard 0 is split (or shards 0 and 1 merged) at 100 s, done at 130 s; the application
 * starts at 200 s from TRIM_HORIZON. The children hold 70 s of records already, but
 * are not read until their parents are read to their end and a shard discovery (every
 * 10 s, next at 210 s) finds them. */
START_TEST(test_parents_before_children)
{
    bool merge = _i / 2;
    kds_flink_retrieval r = RETRIEVALS[_i % 2];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(400));
    f->prod.rate = kds_rate_constant(100);
    f->ev[0].at = SIM_S(100);
    f->ev[0].kind = merge ? KDS_OP_MERGE : KDS_OP_SPLIT;
    f->ev[0].shard = 0;
    f->ev[0].other = 1;
    kds_capacity_cfg_defaults(&f->cfg.capacity);
    f->cfg.capacity.events = f->ev;
    f->cfg.capacity.n_events = 1;
    f->fl.begin = SIM_S(200);
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    kds_stream *st = &f->w.stream;

    kds_world_run_until(&f->w, SIM_S(209));
    ck_assert_uint_eq(st->n_shards, merge ? 3 : 4);
    uint64_t parent_bytes = 0;
    for (size_t i = 0; i < st->n_shards; i++) {
        kds_shard *sh = st->shards[i];
        if (sh->state == KDS_SHARD_CLOSED)
            parent_bytes += sh->st.bytes_in;
        else if (sh->parent >= 0)
            ck_assert_uint_gt(sh->st.bytes_in, 0); /* the children hold records */
    }
    ck_assert_uint_gt(parent_bytes, 0);
    /* Only parents (and, after a split, the untouched shard 1) were read so far. */
    uint64_t readable = parent_bytes + (merge ? 0 : st->shards[1]->st.bytes_in);
    const kds_consumer_stats *cs = cst(f);
    uint64_t read = cs->bytes_read_shared + cs->bytes_read_efo;
    ck_assert_uint_le(read, readable);
    ck_assert_uint_ge(read, parent_bytes);

    kds_world_run_until(&f->w, SIM_S(400));
    kds_world_finish(&f->w);
    const kds_flink_stats *fs = fst(f);
    ck_assert_uint_eq(fs->child_starts_delayed, merge ? 1 : 2);
    /* Every child waited at the job's first discovery (200 s): the common counters
     * count the same starts, each after at least one more discovery interval. */
    ck_assert_uint_eq(cs->children_started, fs->child_starts_delayed);
    ck_assert_double_ge(cs->child_wait_ms_sum,
                        (double)cs->children_started * sim_to_ms(f->fl.discovery_interval));
    ck_assert_uint_eq(fs->shards_waiting_for_parent, 0);
    ck_assert_uint_lt(cs->records_unread, 200);
    ck_assert_uint_eq(cs->duplicates_delivered, 0);
    check_conservation(f);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* When, per shard, records first and last reached the application, read from a trace
 * of GetRecords calls ("processed by +X ms") or pushes ("arrives at +X ms"): the line's
 * time plus X, for the lines that carried records (a subscription's own lines, its
 * SubscribeToShard calls and session ends, are skipped). */
typedef struct span {
    double first, last; /* s; first < 0 when no record came */
} span;

static void trace_spans(FILE *fp, span *sp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sp[i] = (span){-1, -1};
    rewind(fp);
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        double t, after;
        unsigned shard;
        unsigned long long records;
        /* The shard by its id, not by column: the entity may be blank. */
        const char *id = strstr(line, "shardId-");
        if (!id || sscanf(line, "%lf", &t) != 1 || sscanf(id, "shardId-%u", &shard) != 1 ||
            shard >= n || strstr(id, "SubscribeToShard: ") || strstr(id, "subscription session"))
            continue;
        const char *colon = strchr(id, ':'), *plus = strchr(id, '+');
        ck_assert_ptr_nonnull(colon);
        ck_assert_ptr_nonnull(plus);
        ck_assert_int_eq(sscanf(colon + 1, "%llu records", &records), 1);
        ck_assert_int_eq(sscanf(plus + 1, "%lf ms", &after), 1);
        if (records == 0)
            continue;
        double at = t + after / 1e3;
        if (sp[shard].first < 0)
            sp[shard].first = at;
        sp[shard].last = at;
    }
}

/* A split while the application reads live: shard 0 is split at 103 s (the children
 * appear at 133 s, when the split is done, between two discoveries). The parent, caught
 * up, is read to its end within a poll interval plus a round trip (polling) or by its
 * next push (EFO); the children start at the next shard discovery after that, so each
 * waits at most discovery_interval plus that second, and every record of theirs reaches
 * the application after the parent's last. */
START_TEST(test_live_split_children_after_parent)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *f = malloc(sizeof *f);
    fx_defaults(f, r, SIM_S(300));
    f->fl.call_latency_ms = sim_dist_const(40);
    f->ev[0] = (kds_capacity_event){.at = SIM_S(103), .kind = KDS_OP_SPLIT, .shard = 0};
    kds_capacity_cfg_defaults(&f->cfg.capacity);
    f->cfg.capacity.events = f->ev;
    f->cfg.capacity.n_events = 1;
    const char *const kinds[] = {r == KDS_FLINK_POLLING ? "get" : "push", NULL};
    kds_trace tr = {.out = tmpfile(), .kinds = kinds, .shard = -1};
    ck_assert_ptr_nonnull(tr.out);
    f->cfg.trace = &tr;
    fx_run(f);

    const kds_stream *st = &f->w.stream;
    ck_assert_uint_eq(st->n_shards, 4);
    span sp[4];
    trace_spans(tr.out, sp, 4);
    const kds_consumer_stats *cs = cst(f);
    double lo = INFINITY;
    for (uint32_t i = 2; i < 4; i++) {
        ck_assert_int_eq(st->shards[i]->parent, 0);
        ck_assert_double_eq(sim_to_s(st->shards[i]->created), 133);
        ck_assert_double_ge(sp[i].first, sp[0].last);
        if (sp[i].first < lo)
            lo = sp[i].first;
    }
    ck_assert_uint_eq(cs->children_started, 2);
    /* The parent was done by the children's first discovery (140 s): they waited for
     * it, but no discovery found them waiting. */
    ck_assert_uint_eq(fst(f)->child_starts_delayed, 0);
    ck_assert_double_gt(cs->child_wait_ms_max, 0);
    ck_assert_double_le(cs->child_wait_ms_max, sim_to_ms(f->fl.discovery_interval + SIM_S(1)));
    /* Both children start at the same discovery, before their first records come. */
    ck_assert_double_eq_tol(cs->child_wait_ms_sum, 2 * cs->child_wait_ms_max, 1e-6);
    ck_assert_double_le(133 + cs->child_wait_ms_max / 1e3, lo);
    ck_assert_uint_eq(fst(f)->shards_waiting_for_parent, 0);
    ck_assert_uint_eq(cs->duplicates_delivered, 0);
    check_conservation(f);
    fclose(tr.out);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* Same seed, same world, same figures (EFO, with a failure and a replay). */
START_TEST(test_deterministic)
{
    fixture *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    fx_defaults(a, KDS_FLINK_EFO, SIM_S(300));
    fx_defaults(b, KDS_FLINK_EFO, SIM_S(300));
    fx_fail_at(a, SIM_S(100));
    fx_fail_at(b, SIM_S(100));
    fx_run(a);
    fx_run(b);
    ck_assert_int_eq(memcmp(fst(a), fst(b), sizeof(kds_flink_stats)), 0);
    ck_assert_uint_eq(cst(a)->records_delivered, cst(b)->records_delivered);
    ck_assert_double_eq(sim_hist_mean(&cst(a)->latency_ms), sim_hist_mean(&cst(b)->latency_ms));
    kds_world_fini(&a->w);
    kds_world_fini(&b->w);
    free(a);
    free(b);
}
END_TEST

/* A processing time that does not vary (constant, nothing per record) is worked out once
 * at the start: the same figures as the general computation, here forced by a per-record
 * time far too small to move a batch's time by a nanosecond. */
START_TEST(test_fixed_process_time)
{
    kds_flink_retrieval r = RETRIEVALS[_i];
    fixture *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    fx_defaults(a, r, SIM_S(300));
    fx_defaults(b, r, SIM_S(300));
    a->fl.process_ms_per_record = 0;
    b->fl.process_ms_per_record = 1e-12;
    fx_fail_at(a, SIM_S(100));
    fx_fail_at(b, SIM_S(100));
    fx_run(a);
    fx_run(b);
    ck_assert_int_eq(memcmp(fst(a), fst(b), sizeof(kds_flink_stats)), 0);
    ck_assert_uint_gt(cst(a)->records_delivered, 0);
    ck_assert_uint_eq(cst(a)->records_delivered, cst(b)->records_delivered);
    ck_assert_double_eq(sim_hist_mean(&cst(a)->latency_ms), sim_hist_mean(&cst(b)->latency_ms));
    ck_assert_double_eq(cst(a)->latency_ms.max, cst(b)->latency_ms.max);
    kds_world_fini(&a->w);
    kds_world_fini(&b->w);
    free(a);
    free(b);
}
END_TEST

static Suite *flink_suite(void)
{
    Suite *s = suite_create("kds_flink");
    TCase *core = tcase_create("core");
    tcase_add_loop_test(core, test_duplicates_equal_processed_since_checkpoint, 0, 2);
    tcase_add_loop_test(core, test_checkpoint_in_progress_is_not_used, 0, 2);
    tcase_add_loop_test(core, test_failure_before_first_checkpoint, 0, 2);
    tcase_add_loop_test(core, test_two_failures, 0, 2);
    tcase_add_loop_test(core, test_no_duplicates_without_failures, 0, 2);
    tcase_add_test(core, test_polling_vs_efo_latency);
    tcase_add_test(core, test_deterministic);
    tcase_add_loop_test(core, test_fixed_process_time, 0, 2);
    suite_add_tcase(s, core);
    TCase *order = tcase_create("shard_order");
    tcase_add_loop_test(order, test_parents_before_children, 0, 4);
    tcase_add_loop_test(order, test_live_split_children_after_parent, 0, 2);
    suite_add_tcase(s, order);
    return s;
}

int main(void)
{
    return tu_run_suite(flink_suite());
}
