/* check_kds_invariant.c - the conservation invariants and the KCL's lease ownership
 * hold on real runs, and each one is caught when it is broken on purpose (issue 9); a
 * lease held twice during a run stops it there. The conservation checks hold, and catch
 * a break, for every consumer kind and every producer mode. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_efo.h"
#include "kds_firehose.h"
#include "kds_flink.h"
#include "kds_invariant.h"
#include "kds_kcl.h"
#include "kds_lambda.h"
#include "kds_replay.h"
#include "kds_world.h"
#include "testutil.h"

static kds_world w;
static kds_world_cfg wc;
static kds_producer_cfg pc;
static kds_consumer_cfg cc[2];

/* A small world with throttling, retries, duplicates, a stall past nothing, and two
 * consumers, run for 5 minutes. */
static void setup(void)
{
    memset(&wc, 0, sizeof wc);
    wc.seed = 3;
    wc.duration = SIM_MIN(5);
    kds_stream_cfg_defaults(&wc.stream);
    wc.stream.shards = 2;
    wc.stream.internal_failure_rate = 0.01;
    kds_producer_cfg_defaults(&pc);
    pc.name = "p";
    pc.rate = kds_rate_constant(2500); /* above 2 x 1,000 records/s: throttling */
    pc.poisson = true;
    pc.timeout_rate = 0.05;
    wc.producers = &pc;
    wc.n_producers = 1;
    for (int i = 0; i < 2; i++) {
        cc[i].kind = KDS_CONSUMER_POLLING;
        kds_poller_cfg_defaults(&cc[i].polling);
        cc[i].polling.name = i ? "late" : "reader";
        cc[i].polling.begin = i ? SIM_MIN(2) : 0;
        cc[i].polling.start = i ? KDS_START_LATEST : KDS_START_TRIM_HORIZON;
    }
    wc.consumers = cc;
    wc.n_consumers = 2;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
}

static void teardown(void)
{
    kds_world_fini(&w);
}

static void expect_violation(const char *name)
{
    char msg[512];
    ck_assert_int_ne(kds_world_check(&w, msg, sizeof msg), 0);
    ck_assert_msg(strstr(msg, name) != NULL, "message '%s' does not name '%s'", msg, name);
}

START_TEST(test_holds_on_a_real_run)
{
    char msg[512] = "";
    ck_assert_msg(!w.violated, "%s", w.violation);
    ck_assert_int_eq(kds_world_check(&w, msg, sizeof msg), 0);
    /* The run exercised what the invariants count. */
    const kds_producer_stats *s = kds_producer_stats_get(w.producers[0]);
    ck_assert_uint_gt(s->write_throttled_records, 0);
    ck_assert_uint_gt(s->duplicates_written, 0);
    ck_assert_uint_gt(s->records_failed_internal, 0);
    ck_assert_uint_gt(w.consumers[1]->st.records_skipped_at_start, 0);
}
END_TEST

START_TEST(test_consumer_conservation_caught)
{
    w.consumers[0]->st.records_delivered += 1;
    expect_violation("consumer conservation");
}
END_TEST

START_TEST(test_consumer_lost_record_caught)
{
    w.consumers[1]->st.records_unread -= 1;
    expect_violation("consumer conservation");
}
END_TEST

START_TEST(test_producer_conservation_caught)
{
    kds_producer_stats *s = (kds_producer_stats *)kds_producer_stats_get(w.producers[0]);
    s->records_given_up += 1;
    expect_violation("producer conservation");
}
END_TEST

START_TEST(test_producer_sends_caught)
{
    kds_producer_stats *s = (kds_producer_stats *)kds_producer_stats_get(w.producers[0]);
    s->write_throttled_records += 1;
    expect_violation("producer sends");
}
END_TEST

START_TEST(test_stream_totals_caught)
{
    w.stream.shards[1]->st.records_in += 1;
    expect_violation("stream totals");
}
END_TEST

START_TEST(test_cover_gap_caught)
{
    w.stream.shards[0]->hi -= 1;
    expect_violation("key-space cover");
}
END_TEST

START_TEST(test_cover_overlap_caught)
{
    w.stream.shards[1]->lo -= 5;
    expect_violation("key-space cover");
}
END_TEST

START_TEST(test_cover_closed_in_open_list_caught)
{
    w.stream.shards[1]->state = KDS_SHARD_CLOSED;
    expect_violation("key-space cover");
}
END_TEST

/* A gap in the key space found at a reshard stops the run there, and the end-of-run
 * check names it: a shard's range is cut short at 60 s, and the split of the other
 * shard at 2 minutes (done 30 s later) finds the gap. */
START_TEST(test_cover_gap_stops_the_run)
{
    kds_world gw;
    kds_world_cfg gc = wc;
    gc.consumers = NULL;
    gc.n_consumers = 0;
    kds_capacity_event split = {.at = SIM_MIN(2), .kind = KDS_OP_SPLIT, .shard = 1};
    gc.capacity.events = &split;
    gc.capacity.n_events = 1;
    ck_assert_int_eq(kds_world_init(&gw, &gc), 0);
    kds_world_run_until(&gw, SIM_S(60));
    gw.stream.shards[0]->hi -= 1;
    kds_world_run(&gw);
    ck_assert_int_lt(sim_now(gw.sim), gc.duration);
    ck_assert_int_ge(sim_now(gw.sim), SIM_MIN(2));
    ck_assert(gw.violated);
    ck_assert_msg(strstr(gw.violation, "key-space cover") != NULL, "%s", gw.violation);
    kds_world_fini(&gw);
}
END_TEST

/* ---- lease ownership ------------------------------------------------------------------ */

/* A KCL application on one shard: worker "a" from the start, "b" from 40 s. "a" takes
 * the lease at once; "b"'s target (one lease of one, for two workers) leaves it idle.
 * With `pause_a`, "a" stalls from 60 s to 120 s (no renewal). */
typedef struct kcl_fx {
    kds_world_cfg wc;
    kds_kcl_cfg kc;
    kds_kcl_worker_cfg wk[2];
    kds_kcl_event pause;
    kds_consumer_cfg cc;
    kds_world w;
} kcl_fx;

static void kcl_world(kcl_fx *f, bool pause_a)
{
    memset(f, 0, sizeof *f);
    f->wc.seed = 11;
    f->wc.duration = SIM_MIN(3);
    kds_stream_cfg_defaults(&f->wc.stream);
    f->wc.stream.shards = 1;
    kds_kcl_cfg_defaults(&f->kc);
    f->kc.name = "app";
    f->kc.sync_sleep = 0; /* a takes the lease as it creates it, before b starts */
    f->wk[0] = (kds_kcl_worker_cfg){.name = "a", .start = 0};
    f->wk[1] = (kds_kcl_worker_cfg){.name = "b", .start = SIM_S(40)};
    if (pause_a) {
        f->pause = (kds_kcl_event){KDS_KCL_EV_PAUSE, SIM_S(60), SIM_S(60), -1};
        f->wk[0].events = &f->pause;
        f->wk[0].n_events = 1;
    }
    f->kc.workers = f->wk;
    f->kc.n_workers = 2;
    f->cc = (kds_consumer_cfg){.kind = KDS_CONSUMER_MODEL, .make = kds_kcl_make, .cfg = &f->kc};
    f->wc.consumers = &f->cc;
    f->wc.n_consumers = 1;
    ck_assert_int_eq(kds_world_init(&f->w, &f->wc), 0);
}

/* The lease table, writable: the tests below break it on purpose. */
static kds_lease_table *kcl_table(kcl_fx *f)
{
    return (kds_lease_table *)kds_kcl_table(f->w.consumers[0]);
}

static int32_t owner_id(const kds_lease_table *t, const char *worker)
{
    for (size_t i = 0; i < t->n_owners; i++)
        if (strcmp(t->owners[i].worker, worker) == 0)
            return (int32_t)i;
    ck_abort_msg("no owner %s", worker);
    return -1;
}

static void expect_lease_violation(kcl_fx *f, const char *what)
{
    ck_assert(f->w.violated);
    ck_assert_msg(strstr(f->w.violation, "invariant 'lease ownership' violated") != NULL &&
                      strstr(f->w.violation, what) != NULL,
                  "message '%s' does not name the invariant and '%s'", f->w.violation, what);
}

START_TEST(test_lease_ownership_holds_through_a_stall)
{
    /* "a" stalls past the failover time; "b" takes the lease by expiry while "a" still
     * holds its older counter (its next renewal fails): one owner at a time. */
    kcl_fx f;
    kcl_world(&f, true);
    kds_world_run(&f.w);
    ck_assert_msg(!f.w.violated, "%s", f.w.violation);
    const kds_lease_table *t = kcl_table(&f);
    ck_assert_int_eq(t->items[0].owner, owner_id(t, "b"));
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_lease_non_owner_caught)
{
    kcl_fx f;
    kcl_world(&f, false);
    kds_world_run(&f.w);
    ck_assert_msg(!f.w.violated, "%s", f.w.violation);
    kds_lease_table *t = kcl_table(&f);
    ck_assert_int_eq(t->items[0].owner, owner_id(t, "a"));
    /* The table names "b" while "a" holds the lease at its counter. */
    t->items[0].owner = owner_id(t, "b");
    char msg[512];
    ck_assert_int_ne(kds_world_check(&f.w, msg, sizeof msg), 0);
    ck_assert_msg(strstr(msg, "invariant 'lease ownership' violated") &&
                      strstr(msg, "neither its owner (b)"),
                  "%s", msg);
    kds_world_fini(&f.w);
}
END_TEST

/* Run to 61 s ("a" stalled, holding the lease), make the lease look free at the counter
 * before the one "a" holds (and, with `ckpt_a`, "a" its checkpoint owner, as in a
 * handoff), and run on: "b"'s next taker pass (80.1 s) takes it back to the counter "a"
 * holds, and the run stops there. */
static void break_mid_run(kcl_fx *f, bool ckpt_a)
{
    kcl_world(f, true);
    kds_world_run_until(&f->w, SIM_S(61));
    kds_lease_table *t = kcl_table(f);
    kds_lease *l = &t->items[0];
    ck_assert_int_eq(l->owner, owner_id(t, "a"));
    l->owner = -1;
    l->counter--;
    if (ckpt_a)
        l->ckpt_owner = owner_id(t, "a");
    kds_world_run(&f->w);
    ck_assert_int_lt(sim_now(f->w.sim), SIM_S(81));
    ck_assert_int_ge(sim_now(f->w.sim), SIM_S(80));
}

START_TEST(test_lease_second_holder_stops_the_run)
{
    kcl_fx f;
    break_mid_run(&f, false);
    expect_lease_violation(&f, "held at its counter");
    expect_lease_violation(&f, "by worker a of app, which is neither its owner (b)");
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_lease_two_holders_stop_the_run)
{
    kcl_fx f;
    break_mid_run(&f, true);
    expect_lease_violation(&f, "by two workers, a and b");
    kds_world_fini(&f.w);
}
END_TEST

/* ---- every consumer kind, every producer mode ----------------------------------------- */

/* The producer modes: PutRecords with lost replies (duplicates) and retried internal
 * failures, PutRecord, KPL aggregation, no retries (records given up), and a replayed
 * trace. */
enum { PM_RECORDS, PM_RECORD, PM_KPL, PM_ONCE, PM_TRACE, N_PM };
static const char *const PM_NAMES[N_PM] = {"records", "record", "kpl", "once", "trace"};

/* The consumer kinds. */
enum { CK_POLLING, CK_EFO, CK_LAMBDA, CK_FIREHOSE, CK_FLINK, CK_KCL, N_CK };
static const char *const CK_NAMES[N_CK] = {"polling", "efo", "lambda", "firehose", "flink", "kcl"};

typedef struct kinds_fx {
    kds_world_cfg wc;
    kds_producer_cfg pc[N_PM];
    double trace_min[3], trace_counts[3], trace_cum[4];
    kds_consumer_cfg cc;
    kds_efo_consumer_cfg efo;
    kds_lambda_cfg lambda;
    kds_firehose_cfg firehose;
    kds_flink_cfg flink;
    sim_time flink_failure;
    kds_kcl_cfg kcl;
    kds_kcl_worker_cfg workers[2];
    kds_kcl_event kcl_pause;
    kds_world w;
} kinds_fx;

/* A 3-minute world on 2 shards (1% internal failures) written by the five producer
 * modes and read by one consumer of kind `kind`, from the oldest record, with what
 * makes it replay or retry: Lambda errors with bisection, a Flink failure, a KCL worker
 * stalled past the failover time. Built, not run. */
static void kinds_world(kinds_fx *f, int kind)
{
    memset(f, 0, sizeof *f);
    f->wc.seed = 23;
    f->wc.duration = SIM_MIN(3);
    kds_stream_cfg_defaults(&f->wc.stream);
    f->wc.stream.shards = 2;
    f->wc.stream.internal_failure_rate = 0.01;
    for (int i = 0; i < N_PM; i++) {
        kds_producer_cfg *p = &f->pc[i];
        kds_producer_cfg_defaults(p);
        p->name = PM_NAMES[i];
        p->rate = kds_rate_constant(200);
        p->size = sim_dist_const(500);
        p->poisson = true;
    }
    f->pc[PM_RECORDS].timeout_rate = 0.05;
    f->pc[PM_RECORD].api = KDS_API_PUT_RECORD;
    f->pc[PM_KPL].aggregate = 10;
    f->pc[PM_KPL].size = sim_dist_const(50);
    f->pc[PM_ONCE].max_attempts = 1;
    /* 6,000, 30,000 and 12,000 records in the first three minutes, evenly. */
    f->trace_min[0] = 6000;
    f->trace_min[1] = 30000;
    f->trace_min[2] = 12000;
    f->pc[PM_TRACE].rate = kds_replay_build(f->trace_min, 3, 1.0, KDS_REPLAY_EVEN, NULL,
                                            f->trace_counts, f->trace_cum);
    f->wc.producers = f->pc;
    f->wc.n_producers = N_PM;

    f->cc.kind = KDS_CONSUMER_MODEL;
    switch (kind) {
    case CK_POLLING:
        f->cc.kind = KDS_CONSUMER_POLLING;
        kds_poller_cfg_defaults(&f->cc.polling);
        f->cc.polling.name = CK_NAMES[kind];
        f->cc.polling.start = KDS_START_TRIM_HORIZON;
        break;
    case CK_EFO:
        kds_efo_consumer_cfg_defaults(&f->efo);
        f->efo.name = CK_NAMES[kind];
        f->efo.start = KDS_START_TRIM_HORIZON;
        f->cc.make = kds_efo_make;
        f->cc.cfg = &f->efo;
        break;
    case CK_LAMBDA:
        kds_lambda_cfg_defaults(&f->lambda);
        f->lambda.name = CK_NAMES[kind];
        f->lambda.error_rate = 0.05;
        f->lambda.parallelization = 2;
        f->lambda.bisect_on_error = true;
        f->lambda.max_retry_attempts = 2;
        f->cc.make = kds_lambda_make;
        f->cc.cfg = &f->lambda;
        break;
    case CK_FIREHOSE:
        kds_firehose_cfg_defaults(&f->firehose);
        f->firehose.name = CK_NAMES[kind];
        f->firehose.start = KDS_START_TRIM_HORIZON;
        f->firehose.buffer_size = KDS_MIB;
        f->cc.make = kds_firehose_make;
        f->cc.cfg = &f->firehose;
        break;
    case CK_FLINK:
        kds_flink_cfg_defaults(&f->flink);
        f->flink.name = CK_NAMES[kind];
        f->flink.start = KDS_START_TRIM_HORIZON;
        f->flink.checkpoint_interval = SIM_S(30);
        f->flink_failure = SIM_S(100);
        f->flink.failures = &f->flink_failure;
        f->flink.n_failures = 1;
        f->cc.make = kds_flink_make;
        f->cc.cfg = &f->flink;
        break;
    case CK_KCL:
        kds_kcl_cfg_defaults(&f->kcl);
        f->kcl.name = CK_NAMES[kind];
        f->kcl.initial = KDS_START_TRIM_HORIZON;
        f->kcl.efo = false;
        f->workers[0] = (kds_kcl_worker_cfg){.name = "a", .start = 0};
        f->workers[1] = (kds_kcl_worker_cfg){.name = "b", .start = SIM_S(20)};
        f->kcl_pause = (kds_kcl_event){KDS_KCL_EV_PAUSE, SIM_S(40), SIM_S(40), -1};
        f->workers[0].events = &f->kcl_pause;
        f->workers[0].n_events = 1;
        f->kcl.workers = f->workers;
        f->kcl.n_workers = 2;
        f->cc.make = kds_kcl_make;
        f->cc.cfg = &f->kcl;
        break;
    }
    f->wc.consumers = &f->cc;
    f->wc.n_consumers = 1;
    ck_assert_int_eq(kds_world_init(&f->w, &f->wc), 0);
}

/* Every kind holds the invariants on a run that exercised them: each producer wrote,
 * the retrying ones retried or gave up, and the consumer delivered most of it. */
START_TEST(test_kinds_hold)
{
    kinds_fx *f = calloc(1, sizeof *f);
    kinds_world(f, _i);
    kds_world_run(&f->w);
    ck_assert_msg(!f->w.violated, "%s: %s", CK_NAMES[_i], f->w.violation);
    uint64_t written = 0;
    for (int i = 0; i < N_PM; i++) {
        const kds_producer_stats *s = kds_producer_stats_get(f->w.producers[i]);
        ck_assert_msg(s->records_written > 0, "producer %s wrote nothing", PM_NAMES[i]);
        written += s->records_written + s->duplicates_written;
    }
    ck_assert_uint_gt(kds_producer_stats_get(f->w.producers[PM_RECORDS])->duplicates_written, 0);
    ck_assert_uint_gt(kds_producer_stats_get(f->w.producers[PM_RECORDS])->records_retried, 0);
    ck_assert_uint_gt(kds_producer_stats_get(f->w.producers[PM_ONCE])->records_given_up, 0);
    const kds_consumer_stats *cs = &f->w.consumers[0]->st;
    ck_assert_msg(cs->records_delivered > written / 2, "%s delivered %llu of %llu", CK_NAMES[_i],
                  (unsigned long long)cs->records_delivered, (unsigned long long)written);
    if (_i == CK_FLINK || _i == CK_KCL)
        ck_assert_msg(cs->duplicates_delivered > 0, "%s replayed nothing", CK_NAMES[_i]);
    if (_i == CK_LAMBDA)
        ck_assert_uint_gt(kds_lambda_stats_get(f->w.consumers[0])->batches_bisected, 0);
    if (_i == CK_FIREHOSE)
        ck_assert_uint_gt(kds_firehose_stats_get(f->w.consumers[0])->objects_written, 0);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* A record in a shard's log that no producer wrote (and the stream never counted) is
 * one that every kind of consumer reports unread, or delivers: the stored records no
 * longer add up, and the run stops naming the consumer. The consumer's own counts are
 * left alone: what is checked is that each kind counts from the log. */
START_TEST(test_kinds_phantom_record_caught)
{
    kinds_fx *f = calloc(1, sizeof *f);
    kinds_world(f, _i);
    kds_world_run_until(&f->w, SIM_S(170));
    kds_shard *sh = f->w.stream.shards[0];
    ck_assert_int_eq(kds_log_append(&sh->log, sim_now(f->w.sim), 1, 500, 0, 0, 0), 0);
    kds_world_run(&f->w);
    ck_assert(f->w.violated);
    ck_assert_msg(strstr(f->w.violation, "invariant 'consumer conservation' violated") &&
                      strstr(f->w.violation, CK_NAMES[_i]),
                  "%s: %s", CK_NAMES[_i], f->w.violation);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

/* Each producer mode is checked: a record counted written that was never attempted, and
 * a send that was neither stored, refused nor pending, are caught naming the producer. */
START_TEST(test_modes_checked)
{
    kinds_fx *f = calloc(1, sizeof *f);
    kinds_world(f, CK_POLLING);
    kds_world_run(&f->w);
    ck_assert_msg(!f->w.violated, "%s", f->w.violation);
    kds_producer_stats *s = (kds_producer_stats *)kds_producer_stats_get(f->w.producers[_i]);
    char msg[512], want[64];
    s->records_written++;
    s->duplicates_written--; /* the stream's total unchanged */
    snprintf(want, sizeof want, "'producer conservation' violated for producer %s", PM_NAMES[_i]);
    ck_assert_int_ne(kds_world_check(&f->w, msg, sizeof msg), 0);
    ck_assert_msg(strstr(msg, want), "%s", msg);
    s->records_written--;
    s->duplicates_written++;
    s->record_sends++;
    snprintf(want, sizeof want, "'producer sends' violated for producer %s", PM_NAMES[_i]);
    ck_assert_int_ne(kds_world_check(&f->w, msg, sizeof msg), 0);
    ck_assert_msg(strstr(msg, want), "%s", msg);
    kds_world_fini(&f->w);
    free(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kds_invariant");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_holds_on_a_real_run);
    tcase_add_test(tc, test_consumer_conservation_caught);
    tcase_add_test(tc, test_consumer_lost_record_caught);
    tcase_add_test(tc, test_producer_conservation_caught);
    tcase_add_test(tc, test_producer_sends_caught);
    tcase_add_test(tc, test_stream_totals_caught);
    tcase_add_test(tc, test_cover_gap_caught);
    tcase_add_test(tc, test_cover_overlap_caught);
    tcase_add_test(tc, test_cover_closed_in_open_list_caught);
    tcase_add_test(tc, test_cover_gap_stops_the_run);
    suite_add_tcase(s, tc);
    TCase *lease = tcase_create("lease ownership");
    tcase_add_test(lease, test_lease_ownership_holds_through_a_stall);
    tcase_add_test(lease, test_lease_non_owner_caught);
    tcase_add_test(lease, test_lease_second_holder_stops_the_run);
    tcase_add_test(lease, test_lease_two_holders_stop_the_run);
    suite_add_tcase(s, lease);
    TCase *kinds = tcase_create("every kind");
    tcase_set_timeout(kinds, 60);
    tcase_add_loop_test(kinds, test_kinds_hold, 0, N_CK);
    tcase_add_loop_test(kinds, test_kinds_phantom_record_caught, 0, N_CK);
    tcase_add_loop_test(kinds, test_modes_checked, 0, N_PM);
    suite_add_tcase(s, kinds);
    return tu_run_suite(s);
}
