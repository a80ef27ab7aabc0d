/* check_kds_kcl.c - tests of the KCL application (kds_kcl.h) in small whole worlds,
 * one per behaviour issue 6 asks to show, with fixed seeds:
 *   - a second worker joining six shards: three leases each after a few taker passes,
 *     by steals, without any coordinator;
 *   - a crash: the dead worker's leases taken 20-40 s after its last renewal; the
 *     records processed since each lease's last checkpoint delivered twice, as many as
 *     the checkpoint policy allows (every N records, every T seconds, every batch);
 *   - twelve workers on six shards: six hold no lease;
 *   - an under-provisioned lease table: leases move between healthy workers and the
 *     iterator age rises while the stream is healthy; on-demand, the same fleet is
 *     stable;
 *   - a long pause, a graceful stop, a rolling deployment, a restart;
 *   - two deployments sharing an application name share the leases; another name
 *     starts from the initial position;
 *   - resharding: children start after their parent's SHARD_END, the parent lease is
 *     held until cleanup;
 *   - enhanced fan-out retrieval, the consumer conservation rule and determinism.
 * No wall-clock assertion: every time checked is simulated.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_kcl.h"
#include "kds_kcl_int.h"
#include "kds_world.h"
#include "testutil.h"
#include "testworld.h"

#define MAX_APPS 2
#define MAX_WORKERS 12
#define MAX_EVENTS 4

typedef struct fixture {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_kcl_cfg kcl[MAX_APPS];
    kds_kcl_worker_cfg wk[MAX_APPS][MAX_WORKERS];
    kds_kcl_event ev[MAX_APPS][MAX_WORKERS][MAX_EVENTS];
    char names[MAX_APPS][MAX_WORKERS][16];
    kds_consumer_cfg cons[MAX_APPS];
    kds_capacity_event cap_ev[2];
    kds_world w;
    bool built;
} fixture;

static const char *const APPS[MAX_APPS] = {"app0", "app1"};

/* A stream of `shards` shards, a producer of 1 KiB records at `rate` records/s spread
 * over the shards by random keys, stopping `quiet` before the end, and `n_apps` KCL
 * applications polling from TRIM_HORIZON with `workers` workers each, all started at
 * 0, checkpointing every 1,000 records, no start-up wait. */
static void fx_defaults(fixture *f, uint32_t shards, sim_time duration, double rate,
                        sim_time quiet, size_t n_apps, size_t workers)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 606, duration, shards, rate, 1024);
    f->prod.stop = duration - quiet;
    ck_assert_uint_le(n_apps, MAX_APPS);
    ck_assert_uint_le(workers, MAX_WORKERS);
    for (size_t a = 0; a < n_apps; a++) {
        kds_kcl_cfg *c = &f->kcl[a];
        kds_kcl_cfg_defaults(c);
        c->name = APPS[a];
        c->efo = false;
        c->initial = KDS_START_TRIM_HORIZON;
        c->ckpt_records = 1000;
        /* Workers take the leases as they start, except in the start-up tests. */
        c->sync_wait_ms = sim_dist_const(0);
        c->sync_sleep = 0;
        for (size_t i = 0; i < workers; i++) {
            snprintf(f->names[a][i], sizeof f->names[a][i], "w%zu", i + 1);
            f->wk[a][i].name = f->names[a][i];
            f->wk[a][i].start = 0;
            f->wk[a][i].events = f->ev[a][i];
        }
        c->workers = f->wk[a];
        c->n_workers = workers;
        f->cons[a].kind = KDS_CONSUMER_MODEL;
        f->cons[a].make = kds_kcl_make;
        f->cons[a].cfg = c;
    }
    f->cfg.consumers = f->cons;
    f->cfg.n_consumers = n_apps;
}

static void add_event(fixture *f, size_t app, size_t wi, kds_kcl_event_kind kind,
                      sim_time at, sim_time len, sim_time restart_after)
{
    kds_kcl_worker_cfg *wc = &f->wk[app][wi];
    ck_assert_uint_lt(wc->n_events, MAX_EVENTS);
    f->ev[app][wi][wc->n_events++] = (kds_kcl_event){kind, at, len, restart_after};
}

static void fx_run(fixture *f)
{
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    f->built = true;
    kds_world_run(&f->w);
    /* Every run here also checks the invariants, the lease ownership one included. */
    ck_assert_msg(!f->w.violated, "%s", f->w.violation);
}

static void fx_fini(fixture *f)
{
    if (f->built)
        kds_world_fini(&f->w);
    f->built = false;
}

static const kds_kcl_summary *sum(fixture *f, size_t app)
{
    const kds_kcl_summary *s = kds_kcl_summary_get(f->w.consumers[app]);
    ck_assert_ptr_nonnull(s);
    return s;
}

static const kds_consumer_stats *cst(fixture *f, size_t app)
{
    return &f->w.consumers[app]->st;
}

static uint64_t stored_total(fixture *f)
{
    uint64_t n = 0;
    for (size_t i = 0; i < f->w.stream.n_shards; i++)
        n += f->w.stream.shards[i]->st.records_in;
    return n;
}

/* kds_consumer.h: stored = skipped + delivered + unread + expired, per consumer. */
static void check_conservation(fixture *f)
{
    uint64_t in = stored_total(f);
    for (size_t i = 0; i < f->w.n_consumers; i++) {
        const kds_consumer_stats *s = cst(f, i);
        ck_assert_msg(s->records_skipped_at_start + s->records_delivered + s->records_unread +
                              s->records_expired_unread ==
                          in,
                      "consumer %zu: skipped %lu + delivered %lu + unread %lu + expired %lu != "
                      "stored %lu",
                      i, (unsigned long)s->records_skipped_at_start,
                      (unsigned long)s->records_delivered, (unsigned long)s->records_unread,
                      (unsigned long)s->records_expired_unread, (unsigned long)in);
    }
}

static const kds_kcl_worker_summary *wsum(fixture *f, size_t app, const char *name)
{
    const kds_kcl_summary *s = sum(f, app);
    for (size_t i = 0; i < s->n_workers; i++)
        if (strcmp(s->workers[i].name, name) == 0)
            return &s->workers[i];
    ck_abort_msg("no worker %s", name);
    return NULL;
}

/* ---- a second worker joins -------------------------------------------------------- */

/* An application holds its shards' logs (floors, kds_log_attach_floor) from its first
 * start on, so that its reads from TRIM_HORIZON see the records as written; one whose
 * workers start after the end holds nothing, and so changes nothing for the others. */
START_TEST(floors_from_first_start)
{
    for (int late = 0; late < 2; late++) {
        fixture f;
        fx_defaults(&f, 4, SIM_MIN(2), 400, 0, 1, 1);
        f.wk[0][0].start = late ? SIM_MIN(3) : 0;
        fx_run(&f);
        for (size_t i = 0; i < f.w.stream.n_shards; i++)
            ck_assert_uint_eq(f.w.stream.shards[i]->log.n_floors, late ? 0 : 1);
        fx_fini(&f);
    }
}
END_TEST

START_TEST(second_worker_joins)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(5), 600, SIM_S(30), 1, 2);
    f.wk[0][1].start = SIM_MIN(2);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_held_end, 3);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_held_end, 3);
    /* w1 took all six new leases; w2 stole three, one per taker pass. */
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_TAKE], 6);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 3);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 0);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_stolen, 3);
    for (size_t i = 0; i < s->n_move_log; i++)
        if (s->move_log[i].cause == KDS_KCL_STEAL) {
            ck_assert_str_eq(s->move_log[i].from, "w1");
            ck_assert_str_eq(s->move_log[i].to, "w2");
        }
    /* Three passes of 20.05 s: converged within the third pass after the join. */
    ck_assert_uint_eq(s->n_changes, 2);
    ck_assert_str_eq(s->changes[1].what, "start");
    ck_assert_int_ge(s->changes[1].converged_after, SIM_MS(40100) - SIM_MS(1));
    ck_assert_int_le(s->changes[1].converged_after, SIM_MS(40100) + SIM_MS(1));
    /* Leases per minute: w1 six until the join, w2 three at the end. */
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_per_minute[0], 6);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_per_minute[0], 0);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_per_minute[4], 3);
    ck_assert_uint_eq(s->idle_workers_end, 0);
    check_conservation(&f);
    ck_assert_uint_eq(cst(&f, 0)->records_unread, 0);
    fx_fini(&f);
}
END_TEST

/* ---- the renewer's period ------------------------------------------------------------ */

/* kcl.md section 0: the renewer runs every failover / 3 - epsilon computed in whole
 * milliseconds, 10,000 / 3 - 25 = 3,308 ms (not 3,308.33 ms), from the worker's start.
 * One worker holding one lease from time 0 renews it at 3,308 ms, 6,616 ms, ...: over
 * 1,000 periods and a millisecond, 1,000 times (999 on a 3,308.33 ms grid). */
START_TEST(renewer_period)
{
    kds_kcl_cfg c;
    kds_kcl_cfg_defaults(&c);
    ck_assert_int_eq(kds_kcl_renew_period(&c), SIM_MS(3308));
    c.failover = SIM_MS(1000);
    ck_assert_int_eq(kds_kcl_renew_period(&c), SIM_MS(333 - 25));
    c.renew_interval = SIM_MS(700);
    ck_assert_int_eq(kds_kcl_renew_period(&c), SIM_MS(700));

    fixture f;
    const sim_time duration = 1000 * SIM_MS(3308) + SIM_MS(1);
    fx_defaults(&f, 1, duration, 10, SIM_S(10), 1, 1);
    fx_run(&f);
    const kds_kcl_worker_summary *w = wsum(&f, 0, "w1");
    ck_assert_uint_eq(w->leases_taken, 1);
    ck_assert_uint_eq(w->renewals, 1000);
    fx_fini(&f);
}
END_TEST

/* ---- a crash ------------------------------------------------------------------------ */

/* The renewer of a worker started at 0 runs on the grid k x 3,308 ms: its last
 * renewal before `t`. */
static sim_time last_renewal_before(sim_time t)
{
    const sim_time period = SIM_MS(3308);
    return t / period * period;
}

/* Checkpoint policies: every 5,000 records, every 20 s, after every batch. */
static void crash_with_policy(int policy)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(6), 1200, SIM_S(40), 1, 3);
    kds_kcl_cfg *c = &f.kcl[0];
    c->ckpt_records = 0;
    if (policy == 0)
        c->ckpt_records = 5000;
    else if (policy == 1)
        c->ckpt_interval = SIM_S(20);
    else
        c->ckpt_batch = true;
    const sim_time crash = SIM_MIN(3);
    add_event(&f, 0, 2, KDS_KCL_EV_CRASH, crash, 0, -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    sim_time last = last_renewal_before(crash);
    uint64_t n_expiry = 0, dup_expiry = 0;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->at < crash)
            continue;
        /* Every move after the crash takes one of w3's leases, by expiry. */
        ck_assert_int_eq(m->cause, KDS_KCL_EXPIRY);
        ck_assert_str_eq(m->from, "w3");
        ck_assert(!m->from_healthy);
        /* kcl.md 1.2: taken 20-40 s after the last renewal (two scans 20.05 s apart,
         * the second seeing the counter unchanged for more than 10 s). */
        ck_assert_int_ge(m->at - last, SIM_S(20));
        ck_assert_int_le(m->at - last, SIM_MS(40100));
        /* The new owner delivers again exactly what w3 processed after its last
         * checkpoint (w3 is dead: nothing else is processed twice). */
        ck_assert_uint_eq(m->duplicates, m->replay_expected);
        if (policy == 0)
            ck_assert_uint_lt(m->replay_expected, 5000);
        else if (policy == 1)
            ck_assert_uint_lt(m->replay_expected, 200 * 23 * 2); /* 20 s + a batch, x2 slack */
        else
            ck_assert_uint_eq(m->replay_expected, 0);
        n_expiry++;
        dup_expiry += m->duplicates;
    }
    ck_assert_uint_eq(n_expiry, 2); /* w3 held two of the six */
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 2);
    if (policy != 2)
        ck_assert_uint_gt(dup_expiry, 0);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_held_end + wsum(&f, 0, "w2")->leases_held_end, 6);
    ck_assert_str_eq(wsum(&f, 0, "w3")->state, "crashed");
    ck_assert_uint_eq(wsum(&f, 0, "w3")->leases_held_end, 0);
    /* The producer wrote no duplicate: every duplicate comes from lease moves. */
    ck_assert_uint_eq(cst(&f, 0)->duplicates_delivered, s->duplicates_from_failover);
    /* The crash converged once both leases were taken and the loads are 3 and 3. */
    ck_assert_int_ge(s->changes[s->n_changes - 1].converged_after, SIM_S(20));
    check_conservation(&f);
    ck_assert_uint_eq(cst(&f, 0)->records_unread, 0);
    fx_fini(&f);
}

START_TEST(crash_failover)
{
    crash_with_policy(_i);
}
END_TEST

/* ---- twelve workers on six shards --------------------------------------------------- */

START_TEST(twelve_workers)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(4), 600, SIM_S(30), 1, 12);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    uint32_t with_one = 0, with_none = 0;
    for (size_t i = 0; i < s->n_workers; i++) {
        ck_assert_uint_le(s->workers[i].leases_held_end, 1);
        if (s->workers[i].leases_held_end == 1) {
            with_one++;
        } else {
            with_none++;
            /* Idle at the end, idle throughout: a worker that held a lease was at the
             * target of 1, and nobody steals from a worker at the target. */
            ck_assert_uint_eq(s->workers[i].leases_taken, 0);
        }
    }
    ck_assert_uint_eq(with_one, 6);
    ck_assert_uint_eq(with_none, 6);
    ck_assert_uint_eq(s->idle_workers_end, 6);
    ck_assert_uint_eq(s->running_workers_end, 12);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* ---- an under-provisioned lease table --------------------------------------------------- */

START_TEST(small_lease_table_churns)
{
    fixture f;
    fx_defaults(&f, 12, SIM_MIN(15), 2400, SIM_S(30), 2, 3);
    /* The same fleet twice, under two application names (two tables): every batch
     * checkpointed; one table provisioned with 5 WCU / 5 RCU, one on-demand. */
    for (int a = 0; a < 2; a++) {
        f.kcl[a].ckpt_records = 0;
        f.kcl[a].ckpt_batch = true;
    }
    f.kcl[0].table.billing = KDS_LEASE_PROVISIONED;
    f.kcl[0].table.rcu = 5;
    f.kcl[0].table.wcu = 5;
    fx_run(&f);
    const kds_kcl_summary *small = sum(&f, 0), *od = sum(&f, 1);
    ck_assert_ptr_ne(small->table, od->table);
    /* Throttled renewals: workers drop leases they could not renew, others take them:
     * leases move between healthy workers. */
    ck_assert_uint_gt(small->table->st.throttled_writes, 100);
    ck_assert_uint_gt(small->table->st.throttled[KDS_DDB_RENEW], 0);
    ck_assert_uint_ge(small->moves_from_healthy, 20);
    uint64_t self_expired = 0;
    for (size_t i = 0; i < small->n_workers; i++)
        self_expired += small->workers[i].leases_self_expired;
    ck_assert_uint_gt(self_expired, 0);
    /* The on-demand table: the initial takes and balancing steals only. */
    ck_assert_uint_eq(od->table->st.throttled_writes, 0);
    ck_assert_uint_eq(od->moves_by_cause[KDS_KCL_EXPIRY], 0);
    ck_assert_uint_eq(od->moves_from_healthy, 0);
    ck_assert_uint_le(od->moves, 12 + 8);
    /* The iterator age rises with the churn; the stream itself is healthy. */
    ck_assert_double_gt(cst(&f, 0)->iterator_age_ms_max, 10000.0);
    ck_assert_double_lt(cst(&f, 1)->iterator_age_ms_max, 5000.0);
    ck_assert_uint_gt(small->duplicates_from_failover, 10 * od->duplicates_from_failover);
    uint64_t wthr = 0;
    for (size_t i = 0; i < f.w.stream.n_shards; i++)
        wthr += f.w.stream.shards[i]->st.write_throttled_records;
    ck_assert_uint_eq(wthr, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* ---- a checkpoint renews the lease on its holder's clock ---------------------------- */

/* DynamoDBLeaseRenewer.updateLease: a successful checkpoint increments the counter and
 * stamps the holder's renewal time, as a renewal does. To see the checkpoints alone keep
 * a lease, the renewer runs every 25 s, longer than the 10 s failover (the loader forbids
 * it): a worker checkpointing every batch (1.5 s) never finds its lease expired on its
 * own clock; one that does not checkpoint gives it up at each renewal pass. */
START_TEST(checkpoint_renews_the_lease)
{
    for (int ckpt = 1; ckpt >= 0; ckpt--) {
        fixture f;
        fx_defaults(&f, 1, SIM_MIN(2), 100, 0, 1, 1);
        f.kcl[0].renew_interval = SIM_S(25);
        f.kcl[0].ckpt_records = 0;
        f.kcl[0].ckpt_batch = ckpt;
        fx_run(&f);
        const kds_kcl_worker_summary *w = wsum(&f, 0, "w1");
        if (ckpt) {
            ck_assert_uint_eq(w->leases_self_expired, 0);
            ck_assert_uint_eq(w->leases_taken, 1);
            ck_assert_uint_gt(w->checkpoints, 60);
        } else {
            ck_assert_uint_gt(w->leases_self_expired, 0);
        }
        fx_fini(&f);
    }
}
END_TEST

/* A refused checkpoint (another worker's leaseCounter) drops the lease at once, as
 * updateLease does ("lost lease ... discovered during update"): with a checkpoint after
 * every batch, the first worker learns of most of the three steals from a checkpoint,
 * and then never tries to renew the stolen lease. Every steal is found out exactly once. */
START_TEST(refused_checkpoint_drops_the_lease)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(4), 600, 0, 1, 2);
    f.wk[0][1].start = SIM_MIN(2);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_batch = true;
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    const kds_lease_table_stats *st = &s->table->st;
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 3);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_lost, 3);
    ck_assert_uint_gt(st->cond_failed[KDS_DDB_CHECKPOINT], 0);
    ck_assert_uint_eq(st->cond_failed[KDS_DDB_CHECKPOINT] + st->cond_failed[KDS_DDB_RENEW], 3);
    fx_fini(&f);
}
END_TEST

/* ---- a long pause, a graceful stop, a restart, a rolling deployment -------------- */

START_TEST(long_pause)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(6), 1200, SIM_S(30), 1, 3);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_interval = SIM_S(10);
    const sim_time at = SIM_MIN(3);
    add_event(&f, 0, 2, KDS_KCL_EV_PAUSE, at, SIM_S(45), -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    const kds_kcl_worker_summary *w3 = wsum(&f, 0, "w3");
    /* Both of w3's leases expired during the 45 s stall and were taken... */
    uint64_t taken = 0;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->cause == KDS_KCL_EXPIRY) {
            ck_assert_str_eq(m->from, "w3");
            ck_assert(!m->from_healthy);
            ck_assert_int_gt(m->at, at);
            ck_assert_int_lt(m->at, at + SIM_S(45));
            taken++;
        }
    }
    ck_assert_uint_eq(taken, 2);
    /* ...w3 woke up, found them expired on its own clock (or lost) and let go, after
     * finishing what it had fetched: processed twice. */
    ck_assert_uint_eq(w3->leases_self_expired + w3->leases_lost, 2);
    ck_assert_uint_gt(w3->records_reprocessed, 0);
    ck_assert_uint_gt(s->duplicates_from_failover, s->replay_expected);
    /* Then it stole its share back: 2, 2, 2. */
    ck_assert_uint_eq(w3->leases_held_end, 2);
    ck_assert_str_eq(w3->state, "running");
    /* The stall converged once the others held everything; the return converged
     * once w3 had stolen its share back. */
    ck_assert_str_eq(s->changes[s->n_changes - 2].what, "pause");
    ck_assert_int_ge(s->changes[s->n_changes - 2].converged_after, SIM_S(20));
    ck_assert_int_lt(s->changes[s->n_changes - 2].converged_after, SIM_S(45));
    ck_assert_str_eq(s->changes[s->n_changes - 1].what, "resume");
    ck_assert_int_eq(s->changes[s->n_changes - 1].at, at + SIM_S(45));
    ck_assert_int_gt(s->changes[s->n_changes - 1].converged_after, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* A pause shorter than the time the others need to see the leases expired (15 s): no
 * lease moves during it, but when w1 wakes its renewer finds them expired on its own
 * clock and gives them up, and nobody reads those shards until w2's taker sees them
 * expired and takes them. The table still names w1 owner all along: convergence is
 * judged from what the workers hold, so neither the pause nor the resume converges
 * before those takes (the pause, once w1 also has its share back). And the expiry
 * moves are the pause's doing, not churn: w1 has not renewed them since it stalled. */
START_TEST(short_pause_converges_when_held)
{
    fixture f;
    fx_defaults(&f, 3, SIM_MIN(4), 300, 0, 1, 2);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_interval = SIM_S(10);
    f.wk[0][1].start = SIM_S(5);
    const sim_time at = SIM_S(100);
    add_event(&f, 0, 0, KDS_KCL_EV_PAUSE, at, SIM_S(15), -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    sim_time last_expiry = -1;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->cause == KDS_KCL_EXPIRY) {
            ck_assert_str_eq(m->from, "w1");
            ck_assert(!m->from_healthy);
            ck_assert_int_gt(m->at, at + SIM_S(15));
            last_expiry = m->at;
        }
    }
    ck_assert_int_gt(last_expiry, 0);
    ck_assert_uint_eq(s->moves_from_healthy, 0);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_self_expired, 2);
    const kds_kcl_change *pause = &s->changes[s->n_changes - 2];
    const kds_kcl_change *resume = &s->changes[s->n_changes - 1];
    ck_assert_str_eq(pause->what, "pause");
    ck_assert_str_eq(resume->what, "resume");
    ck_assert_int_ge(pause->at + pause->converged_after, last_expiry);
    ck_assert_int_ge(resume->at + resume->converged_after, last_expiry);
    ck_assert_int_eq(pause->at + pause->converged_after, resume->at + resume->converged_after);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* A graceful stop (KCL 2.x): the processors checkpoint, the leases stay owned until
 * they expire, then move with cause "shutdown" and nothing is delivered twice. */
START_TEST(graceful_stop)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(5), 1200, SIM_S(30), 1, 3);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_interval = SIM_S(30);
    /* 0: processors busy at the stop (1.4 s per batch): they checkpoint after their
     * batch; 1: idle processors checkpoint at once; 2: no shutdown checkpoint. */
    f.kcl[0].ckpt_on_shutdown = _i != 2;
    if (_i == 0)
        f.kcl[0].process_ms = sim_dist_const(1400);
    const sim_time at = SIM_MIN(3);
    add_event(&f, 0, 2, KDS_KCL_EV_STOP, at, 0, -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    sim_time last = last_renewal_before(at);
    uint64_t moved = 0, dups = 0;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->at < at)
            continue;
        ck_assert_int_eq(m->cause, KDS_KCL_SHUTDOWN);
        /* 20-40 s after the lease's last write: its last renewal, or the shutdown
         * checkpoint of a processor that finished its batch first (at most 1.4 s after
         * the stop). */
        ck_assert_int_ge(m->at - last, SIM_S(20));
        if (_i == 0)
            ck_assert_int_le(m->at - at, SIM_MS(40100) + SIM_MS(1400));
        else
            ck_assert_int_le(m->at - last, SIM_MS(40100));
        moved++;
        dups += m->duplicates;
    }
    ck_assert_uint_eq(moved, 2);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_SHUTDOWN], 2);
    if (_i != 2)
        ck_assert_uint_eq(dups, 0);
    else
        ck_assert_uint_gt(dups, 0); /* no shutdown checkpoint: up to 30 s replayed */
    ck_assert_str_eq(wsum(&f, 0, "w3")->state, "stopped");
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

START_TEST(crash_and_restart)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(6), 600, SIM_S(30), 1, 3);
    add_event(&f, 0, 2, KDS_KCL_EV_CRASH, SIM_MIN(2), 0, SIM_S(30));
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    const kds_kcl_worker_summary *w3 = wsum(&f, 0, "w3");
    ck_assert_uint_eq(w3->incarnations, 2);
    ck_assert_str_eq(w3->state, "running");
    ck_assert_uint_eq(w3->leases_held_end, 2);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 2);
    ck_assert_uint_ge(s->moves_by_cause[KDS_KCL_STEAL], 2); /* the restarted w3 steals back */
    /* Three changes after the start: crash, start (restart). */
    ck_assert_str_eq(s->changes[s->n_changes - 2].what, "crash");
    ck_assert_str_eq(s->changes[s->n_changes - 1].what, "start");
    ck_assert_int_ge(s->changes[s->n_changes - 1].converged_after, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

START_TEST(rolling_deployment)
{
    fixture f;
    fx_defaults(&f, 8, SIM_MIN(14), 800, SIM_S(30), 1, 4);
    f.kcl[0].deploy = (kds_kcl_deploy_cfg){true, SIM_MIN(3), SIM_S(90), SIM_S(30), true};
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    for (size_t i = 0; i < s->n_workers; i++) {
        ck_assert_uint_eq(s->workers[i].incarnations, 2);
        ck_assert_uint_eq(s->workers[i].leases_held_end, 2);
    }
    /* Each worker's two leases expired after its graceful stop. */
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_SHUTDOWN], 8);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 0);
    /* 4 starts, then stop and start per worker; every change converged. */
    ck_assert_uint_eq(s->n_changes, 12);
    for (size_t i = 0; i < s->n_changes; i++)
        ck_assert_int_ge(s->changes[i].converged_after, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* ---- one application name, two deployments; renaming -------------------------------- */

START_TEST(shared_application_name)
{
    fixture f;
    fx_defaults(&f, 8, SIM_MIN(8), 1600, SIM_S(30), 2, 4);
    f.kcl[0].application_name = "orders";
    f.kcl[1].application_name = "orders";
    f.kcl[1].n_workers = 2; /* staging: two workers, from minute 3 */
    f.wk[1][0].start = SIM_MIN(3);
    f.wk[1][1].start = SIM_MIN(3);
    fx_run(&f);
    const kds_kcl_summary *prod = sum(&f, 0), *stg = sum(&f, 1);
    ck_assert_ptr_eq(prod->table, stg->table);
    ck_assert(prod->table_shared && stg->table_shared);
    /* Staging took leases production owned, and production never saw their records
     * again: each processes leases the other thinks are its own. */
    uint32_t stg_held = 0, prod_held = 0;
    for (size_t i = 0; i < stg->n_workers; i++)
        stg_held += stg->workers[i].leases_held_end;
    for (size_t i = 0; i < prod->n_workers; i++)
        prod_held += prod->workers[i].leases_held_end;
    ck_assert_uint_ge(stg_held, 2);
    ck_assert_uint_eq(stg_held + prod_held, 8);
    uint64_t from_prod = 0;
    for (size_t i = 0; i < stg->n_move_log; i++)
        if (stg->move_log[i].from_app && strcmp(stg->move_log[i].from_app, "app0") == 0)
            from_prod++;
    ck_assert_uint_ge(from_prod, 2);
    uint64_t in = stored_total(&f);
    ck_assert_uint_lt(cst(&f, 0)->records_delivered, in * 95 / 100);
    ck_assert_uint_gt(cst(&f, 1)->records_delivered, 0);
    /* Staging started at production's checkpoints, not at its own initial position. */
    ck_assert_uint_gt(cst(&f, 1)->records_skipped_at_start, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* Another application name is another table: the renamed application starts from its
 * initial position (TRIM_HORIZON: everything again; LATEST: a gap). */
START_TEST(renamed_application)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(6), 800, SIM_S(30), 2, 2);
    f.kcl[1].application_name = "orders-v2";
    f.kcl[1].initial = _i == 0 ? KDS_START_TRIM_HORIZON : KDS_START_LATEST;
    f.wk[1][0].start = SIM_MIN(3);
    f.wk[1][1].start = SIM_MIN(3);
    fx_run(&f);
    ck_assert_ptr_ne(sum(&f, 0)->table, sum(&f, 1)->table);
    ck_assert(!sum(&f, 0)->table_shared);
    uint64_t in = stored_total(&f);
    ck_assert_uint_eq(cst(&f, 0)->records_delivered, in);
    if (_i == 0) {
        ck_assert_uint_eq(cst(&f, 1)->records_delivered, in);
        ck_assert_uint_eq(cst(&f, 1)->records_skipped_at_start, 0);
    } else {
        /* About three minutes of records are behind LATEST. */
        ck_assert_uint_gt(cst(&f, 1)->records_skipped_at_start, 800 * 170);
        ck_assert_uint_lt(cst(&f, 1)->records_skipped_at_start, 800 * 190);
    }
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* ---- resharding ---------------------------------------------------------------------- */

/* A worker's taker map follows the live leases: after two UpdateShardCount calls and
 * the clean-up of the finished parents' leases, it starts at a lease made later than
 * the first ones (whose slots stay in the table, deleted), so that a long run that
 * reshards again and again does not give each worker an entry per lease ever made. */
START_TEST(resharding_taker_map_follows_live_leases)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(60), 400, SIM_S(30), 1, 2);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_interval = SIM_S(10);
    f.cap_ev[0] = (kds_capacity_event){.at = SIM_MIN(2), .kind = KDS_OP_UPDATE_COUNT, .target = 8};
    f.cap_ev[1] = (kds_capacity_event){.at = SIM_MIN(20), .kind = KDS_OP_UPDATE_COUNT, .target = 4};
    f.cfg.capacity.events = f.cap_ev;
    f.cfg.capacity.n_events = 2;
    fx_run(&f);
    const kds_lease_table *t = kds_kcl_table(f.w.consumers[0]);
    const kcl *a = (const kcl *)f.w.consumers[0];
    ck_assert_uint_gt(t->first_live, 4); /* the first leases were cleaned up */
    for (size_t k = 0; k < a->n_workers; k++) {
        const worker *w = &a->workers[k];
        ck_assert_uint_gt(w->seen_base, 0);
        ck_assert_uint_le(w->seen_base, t->first_live);
        ck_assert_uint_ge(w->seen_base + w->n_seen, t->n);
    }
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

START_TEST(resharding_children_after_parents)
{
    fixture f;
    fx_defaults(&f, 2, SIM_MIN(14), 400, SIM_S(30), 1, 2);
    f.kcl[0].ckpt_records = 0;
    f.kcl[0].ckpt_interval = SIM_S(10);
    /* Merge shards 0 and 1 into 2 at 3 min, split 2 into 3 and 4 at 8 min (each
     * completes 30 s later). */
    f.cap_ev[0] =
        (kds_capacity_event){.at = SIM_MIN(3), .kind = KDS_OP_MERGE, .shard = 0, .other = 1};
    f.cap_ev[1] = (kds_capacity_event){.at = SIM_MIN(8), .kind = KDS_OP_SPLIT, .shard = 2};
    f.cfg.capacity.events = f.cap_ev;
    f.cfg.capacity.n_events = 2;
    /* Two leases, two workers: one parent of the merge each. Worker 2 stalls for 40 s
     * from 209 s: its parent cannot reach SHARD_END until worker 1 takes it, while
     * worker 1's parent ends when the merge completes at 210 s. */
    add_event(&f, 0, 1, KDS_KCL_EV_PAUSE, SIM_S(209), SIM_S(40), -1);
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    f.built = true;
    const kds_lease_table *t = kds_kcl_table(f.w.consumers[0]);
    ck_assert_ptr_nonnull(t);
    bool saw_child = false, saw_held_parent = false, saw_blocked = false;
    uint64_t last_counter[16] = {0};
    for (sim_time now = SIM_S(5); now <= f.cfg.duration; now += SIM_S(5)) {
        kds_world_run_until(&f.w, now);
        if (now == SIM_S(205)) {
            /* The premise: the parents of the merge have different owners. */
            int32_t i0 = kds_lease_find(t, 0), i1 = kds_lease_find(t, 1);
            ck_assert(i0 >= 0 && i1 >= 0);
            ck_assert(t->items[i0].owner >= 0 && t->items[i1].owner >= 0);
            ck_assert_int_ne(t->items[i0].owner, t->items[i1].owner);
        }
        for (size_t i = 0; i < t->n; i++) {
            const kds_lease *l = &t->items[i];
            if (l->deleted)
                continue;
            bool parents_done = true;
            for (int k = 0; k < 2; k++) {
                if (l->parents[k] < 0)
                    continue;
                int32_t pi = kds_lease_find(t, (uint32_t)l->parents[k]);
                if (pi >= 0 && t->items[pi].ckpt != KDS_CKPT_SHARD_END)
                    parents_done = false;
            }
            if (l->parents[0] >= 0) {
                saw_child = true;
                /* Created at TRIM_HORIZON, and not processed (no checkpoint) while a
                 * parent has not reached SHARD_END. */
                if (!parents_done) {
                    saw_blocked = true;
                    ck_assert_int_eq(l->ckpt, KDS_CKPT_TRIM_HORIZON);
                }
            }
            if (l->ckpt == KDS_CKPT_SHARD_END) {
                /* A finished parent stays held and renewed until cleanup. */
                ck_assert_int_ge(l->owner, 0);
                if (last_counter[l->shard] && t->owners[l->owner].state == KDS_OWNER_RUNNING)
                    saw_held_parent |= l->counter > last_counter[l->shard];
                last_counter[l->shard] = l->counter;
            }
        }
    }
    kds_world_finish(&f.w);
    ck_assert(saw_child);
    ck_assert(saw_blocked);
    ck_assert(saw_held_parent);
    /* Cleanup deleted the three parents once their children had checkpointed: the
     * merge's (at the 5-minute check), then the split's (at the 10-minute check,
     * once its own parents were gone). */
    ck_assert_uint_eq(t->n, 5);
    ck_assert_uint_eq(t->n_live, 2);
    for (size_t i = 0; i < t->n; i++)
        ck_assert(t->items[i].deleted == (t->items[i].shard <= 2));
    ck_assert_uint_eq(t->st.requests[KDS_DDB_DELETE] - t->st.throttled[KDS_DDB_DELETE], 3);
    ck_assert_uint_eq(cst(&f, 0)->children_started, 3);
    check_conservation(&f);
    ck_assert_uint_lt(cst(&f, 0)->records_unread, 400 * 2);
    fx_fini(&f);
}
END_TEST

/* ---- retrieval, capacity, limits ----------------------------------------------------- */

START_TEST(efo_retrieval)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(4), 800, SIM_S(30), 1, 2);
    f.kcl[0].efo = true;
    add_event(&f, 0, 1, KDS_KCL_EV_CRASH, SIM_MIN(2), 0, -1);
    fx_run(&f);
    const kds_consumer_stats *cs = cst(&f, 0);
    ck_assert_uint_gt(cs->bytes_read_efo, 0);
    ck_assert_uint_eq(cs->bytes_read_shared, 0);
    ck_assert_uint_eq(cs->getrecords_calls, 0);
    ck_assert_uint_eq(cs->records_unread, 0);
    ck_assert_uint_eq(cs->records_delivered, stored_total(&f));
    ck_assert_double_lt(sim_hist_quantile(&cs->latency_ms, 0.5), 200.0);
    ck_assert_double_gt(cs->efo_consumer_shard_hours, 0.2);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_EXPIRY], 2);
    ck_assert_uint_eq(cs->duplicates_delivered, s->duplicates_from_failover);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* A worker's processing capacity is shared by its leases: one slow worker holding
 * everything falls behind. */
START_TEST(worker_capacity)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(4), 800, SIM_S(10), 1, 1);
    f.wk[0][0].capacity = 400;
    fx_run(&f);
    const kds_kcl_worker_summary *w1 = wsum(&f, 0, "w1");
    ck_assert_uint_le(w1->records_processed, 400 * 240 + 10000);
    ck_assert_uint_gt(cst(&f, 0)->records_unread, 800 * 100);
    /* Records wait in the prefetch queues (up to 30,000 records a shard). */
    ck_assert_double_gt(sim_hist_quantile(&cst(&f, 0)->latency_ms, 0.99), 60000.0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* maxLeasesForWorker caps what each worker takes: leases beyond it stay unowned. */
START_TEST(max_leases_per_worker)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(3), 600, SIM_S(30), 1, 2);
    f.kcl[0].max_leases_per_worker = 2;
    fx_run(&f);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_held_end, 2);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_held_end, 2);
    const kds_lease_table *t = kds_kcl_table(f.w.consumers[0]);
    uint32_t unowned = 0;
    for (size_t i = 0; i < t->n; i++)
        unowned += t->items[i].owner < 0;
    ck_assert_uint_eq(unowned, 2);
    ck_assert_uint_gt(cst(&f, 0)->records_unread, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* Every taker pass scans the whole table: 200 leases (15 blocks of 4 KB, 7.5 read
 * units a scan) scanned by six workers every 20 s outrun a 1 RCU table. A throttled
 * scan takes nothing (SCAN_RETRIES = 1), so fewer passes balance the leases. */
START_TEST(scans_cost_read_capacity)
{
    fixture f;
    fx_defaults(&f, 200, SIM_MIN(5), 2000, SIM_S(30), 2, 6);
    f.kcl[0].table.billing = KDS_LEASE_PROVISIONED;
    f.kcl[0].table.rcu = 1;
    f.kcl[0].table.wcu = 1000;
    f.kcl[0].table.burst_s = 0; /* no five minutes of saved capacity */
    f.kcl[0].ckpt_records = 0;
    f.kcl[1].ckpt_records = 0; /* the second application: on-demand, the reference */
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0), *od = sum(&f, 1);
    uint64_t scans = 0, throttled = 0;
    for (size_t i = 0; i < s->n_workers; i++) {
        scans += s->workers[i].scans;
        throttled += s->workers[i].scans_throttled;
    }
    /* The table's scans: the takers', the leader elections' and the leader's audits. */
    ck_assert_uint_le(throttled, s->table->st.throttled[KDS_DDB_SCAN]);
    ck_assert_uint_eq(scans + s->elections + s->audits, s->table->st.requests[KDS_DDB_SCAN]);
    ck_assert_uint_gt(throttled, scans / 3);
    ck_assert_uint_eq(s->table->st.throttled_writes, 0);
    /* The on-demand reference consumed 7.5 units a scan. */
    ck_assert_double_eq(kds_lease_read_units(od->table) -
                            (double)od->table->st.requests[KDS_DDB_GET],
                        7.5 * (double)od->table->st.requests[KDS_DDB_SCAN]);
    ck_assert_uint_eq(od->table->st.throttled_reads, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST


/* ---- KCL 3.x lease assignment (kds_kcl_lam.c, kcl.md section 7) ------------------------ */

/* The leader's LAM runs every 20 s from its start at 0; every third one balances. */
#define LAM_PERIOD SIM_S(20)
#define BALANCE_PERIOD SIM_S(60)
#define DISCOVERY SIM_MS(9975)
/* After a leader's write, the old owner notices the handoff at its next renewal
 * (3,308 ms), its handler asks the processor to shut down (2 s grid), and the new owner
 * finds the lease at its next discovery. */
#define HANDOFF_DONE (SIM_MS(3308) + SIM_S(2) + DISCOVERY)

/* Run `mode`: a second worker joining six shards at minute 2, or the 2.x taker. */
static void second_worker(fixture *f, kds_kcl_assignment mode)
{
    fx_defaults(f, 6, SIM_MIN(7), 600, SIM_S(30), 1, 2);
    f->kcl[0].assignment = mode;
    f->wk[0][1].start = SIM_MIN(2);
    fx_run(f);
}

/* Leader election (kcl.md 7.1): the first worker takes the lock at its start. When it
 * crashes its lock expires 120 s after its last heartbeat (every 30 s) and another
 * worker takes it at its next check (every 30 s); a graceful stop releases the lock,
 * taken at the next check. The new leader's LAM then reassigns the old leader's leases,
 * which nobody reassigned meanwhile: from its second run (the first stamps the
 * counters), by its third plus a discovery; a stopped worker stays active until its
 * metrics entry is 60 s old (issue #1452) and may be given a lease back, which expires
 * again two runs later. */
START_TEST(kcl3_leader_failover)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(8), 600, SIM_S(30), 1, 3);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    const sim_time at = SIM_S(190);
    add_event(&f, 0, 0, _i == 0 ? KDS_KCL_EV_CRASH : KDS_KCL_EV_STOP, at, 0, -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(s->n_leaders, 2);
    ck_assert_str_eq(s->leaders[0].worker, "w1");
    ck_assert_int_eq(s->leaders[0].at, 0);
    ck_assert_str_ne(s->leaders[1].worker, "w1");
    const sim_time heartbeat = SIM_S(30), beat = at / heartbeat * heartbeat;
    if (_i == 0) {
        ck_assert_int_gt(s->leaders[1].at, beat + SIM_S(120));
        ck_assert_int_le(s->leaders[1].at, beat + SIM_S(120) + heartbeat);
    } else {
        ck_assert_int_le(s->leaders[1].at, at + heartbeat);
    }
    uint64_t moved = 0;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->at < at || !m->from || strcmp(m->from, "w1") != 0)
            continue;
        ck_assert_int_eq(m->cause, _i == 0 ? KDS_KCL_EXPIRY : KDS_KCL_SHUTDOWN);
        ck_assert_int_ge(m->at, s->leaders[1].at + LAM_PERIOD);
        ck_assert_int_le(m->at, s->leaders[1].at + (_i == 0 ? 2 : 4) * LAM_PERIOD + DISCOVERY);
        moved++;
    }
    ck_assert_uint_eq(moved, 2);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->leases_held_end + wsum(&f, 0, "w3")->leases_held_end, 6);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* The leader gives its lock up after failed_runs_to_resign (3) failed LAM runs in a row
 * (kcl.md 7.1): 200 leases (7.5 read units a scan) on a 1 RCU table with no saved
 * capacity throttle most scans, so leaders resign, and a worker takes the lock again at
 * its next check. A leader holds the lock for its 3 runs at least (40 s), and giving it
 * up after 1 failed run instead makes more leaders in the same 5 minutes. */
static const kds_kcl_summary *starved_leaders(fixture *f, uint32_t resign_after,
                                              sim_time heartbeat)
{
    fx_defaults(f, 200, SIM_MIN(5), 2000, SIM_S(30), 1, 3);
    f->kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    f->kcl[0].lam.failed_runs_to_resign = resign_after;
    f->kcl[0].lam.lock_heartbeat = heartbeat;
    f->kcl[0].table.billing = KDS_LEASE_PROVISIONED;
    f->kcl[0].table.rcu = 1;
    f->kcl[0].table.wcu = 1000;
    f->kcl[0].table.burst_s = 0;
    fx_run(f);
    check_conservation(f);
    return sum(f, 0);
}

START_TEST(kcl3_leader_resigns)
{
    fixture f;
    const kds_kcl_summary *s = starved_leaders(&f, 3, SIM_S(30));
    ck_assert_uint_gt(s->table->st.throttled[KDS_DDB_SCAN], 0);
    ck_assert_uint_ge(s->n_leaders, 3);
    for (size_t i = 1; i < s->n_leaders; i++)
        ck_assert_int_gt(s->leaders[i].at - s->leaders[i - 1].at, 2 * LAM_PERIOD);
    size_t leaders3 = s->n_leaders;
    fx_fini(&f);
    s = starved_leaders(&f, 1, SIM_S(30));
    ck_assert_uint_gt(s->n_leaders, leaders3);
    fx_fini(&f);
}
END_TEST

/* A leader that gave the lock up checks it again at its next LAM run, not at its next
 * heartbeat: the KCL's leader decider (DynamoDBLockBasedLeaderDecider.isLeader) caches
 * only a "not leader" answer, and the last answer was "leader". With the heartbeat at
 * 100 s, the lock is free 20 s after the resignation: the same worker takes it back
 * then, and gives it up again three failed runs later, so its leaderships follow each
 * other by exactly three LAM periods (at its heartbeat they would be 100 s apart). */
START_TEST(kcl3_resigned_leader_rechecks)
{
    fixture f;
    const kds_kcl_summary *s = starved_leaders(&f, 3, SIM_S(100));
    ck_assert_uint_ge(s->n_leaders, 3);
    size_t retakes = 0;
    for (size_t i = 2; i < s->n_leaders; i++) {
        ck_assert_str_eq(s->leaders[i].worker, s->leaders[i - 1].worker);
        ck_assert_int_eq(s->leaders[i].at - s->leaders[i - 1].at, 3 * LAM_PERIOD);
        retakes++;
    }
    ck_assert_uint_ge(retakes, 1);
    fx_fini(&f);
}
END_TEST

/* A non-leader crashes (kcl.md 7.2): the leader finds a lease expired at its second
 * run after the lease's last renewal L (the first stamps the last counter change), so
 * at L + 20 s to L + 40 s, assigns it at once, and the new owner starts it at its
 * next discovery: L + 20 s to L + 49.975 s. But the dead worker stays active until its
 * metrics entry is 60 s old, and the leader may give a lease back to it; that lease
 * expires again two runs later (the leader's own write changed the counter): every
 * lease is back in service by L + 89.975 s. The records processed after each lease's
 * last checkpoint are delivered twice, as in 2.x: nothing was handed over. */
START_TEST(kcl3_crash_failover)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(7), 600, SIM_S(30), 1, 3);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    const sim_time crash = SIM_MIN(3);
    add_event(&f, 0, 2, KDS_KCL_EV_CRASH, crash, 0, -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    sim_time last = last_renewal_before(crash);
    sim_time first = -1;
    uint64_t moved = 0;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->at < crash || !m->from || strcmp(m->from, "w3") != 0)
            continue;
        ck_assert_int_eq(m->cause, KDS_KCL_EXPIRY);
        ck_assert_int_gt(m->at - last, SIM_S(20));
        ck_assert_int_le(m->at - last, 2 * LAM_PERIOD + DISCOVERY + 2 * LAM_PERIOD);
        ck_assert_uint_eq(m->duplicates, m->replay_expected);
        if (first < 0)
            first = m->at;
        moved++;
    }
    ck_assert_uint_eq(moved, 2);
    ck_assert_int_le(first - last, 2 * LAM_PERIOD + DISCOVERY);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 0);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->leases_held_end + wsum(&f, 0, "w2")->leases_held_end, 6);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* After second_worker(): w2 got three of w1's six leases by the leader's balancing,
 * `per_run` in each balancing run from the first one after w2's first metrics report
 * (the leader's runs at 0, 20, 40 s, ...: its first balances, then every third, at
 * 60 s, 120 s, 180 s; w2 reports first at 122 s: from 180 s), each by a graceful
 * handoff: nothing stolen, nothing delivered twice. */
static void check_balanced_join(fixture *f, uint64_t per_run)
{
    const kds_kcl_summary *s = sum(f, 0);
    ck_assert_uint_eq(wsum(f, 0, "w1")->leases_held_end, 3);
    ck_assert_uint_eq(wsum(f, 0, "w2")->leases_held_end, 3);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_TAKE], 6);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 0);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_BALANCE], 3);
    ck_assert_uint_eq(s->handoffs, 3);
    ck_assert_uint_eq(wsum(f, 0, "w1")->handoffs_out, 3);
    ck_assert_uint_eq(wsum(f, 0, "w1")->handoffs_timed_out, 0);
    const sim_time first_run = SIM_S(180);
    uint64_t k = 0;
    sim_time last = -1;
    for (size_t i = 0; i < s->n_move_log; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        if (m->cause != KDS_KCL_BALANCE)
            continue;
        sim_time run = first_run + (sim_time)(k / per_run) * BALANCE_PERIOD;
        ck_assert_int_gt(m->at, run);
        ck_assert_int_le(m->at, run + HANDOFF_DONE);
        ck_assert_str_eq(m->from, "w1");
        ck_assert_str_eq(m->to, "w2");
        ck_assert_uint_eq(m->replay_expected, 0);
        ck_assert_uint_eq(m->duplicates, 0);
        last = m->at;
        k++;
    }
    /* The join converges when w2 starts the last lease handed over to it, not at the
     * leader's write that names it owner. */
    ck_assert_str_eq(s->changes[1].worker, "w2");
    ck_assert_int_eq(s->changes[1].at + s->changes[1].converged_after, last);
    ck_assert_uint_eq(s->duplicates_from_failover, 0);
    ck_assert_uint_eq(cst(f, 0)->duplicates_delivered, 0);
    check_conservation(f);
    ck_assert_uint_eq(cst(f, 0)->records_unread, 0);
}

/* A worker joins (kcl.md 7.3): nobody steals; the leader's variance balancing (every
 * third run, 60 s) moves one lease per balancing run here: with six equal leases on
 * one worker its metric is 200 against an average of 100, so it gives
 * (200 - 100) / 200 x 60 % of its throughput = 1.8 leases' worth: one lease fits; then
 * 1.2 leases' worth: one; then 0.6: none fits, the overshoot gives the smallest. Three
 * balancing runs. */
START_TEST(kcl3_second_worker_balances)
{
    fixture f;
    second_worker(&f, KDS_KCL_WORKER_UTILIZATION);
    check_balanced_join(&f, 1);
    fx_fini(&f);
}
END_TEST

/* The cpu metric (the busy fraction of each worker's capacity): a worker processing
 * the whole stream at 60 % of its capacity, joined by an idle one, gives it leases by
 * balancing (average 30 %, donor above 33 %), by handoff. */
START_TEST(kcl3_cpu_metric)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(7), 600, SIM_S(30), 1, 2);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    f.kcl[0].lam.metric = KDS_KCL_METRIC_CPU;
    f.wk[0][0].capacity = 1000;
    f.wk[0][1].capacity = 1000;
    f.wk[0][1].start = SIM_MIN(2);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_ge(s->moves_by_cause[KDS_KCL_BALANCE], 2);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 0);
    ck_assert_uint_ge(wsum(&f, 0, "w2")->leases_held_end, 2);
    ck_assert_uint_eq(s->duplicates_from_failover, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* The point of 3.x: the same join under the 2.x taker replays records at every steal
 * (the victim keeps processing until its renewal fails, the thief restarts at the last
 * checkpoint); with the graceful handoff the old owner checkpoints before the new one
 * starts. With the handoff off, the leader's moves replay like steals. */
START_TEST(kcl3_handoff_no_duplicates)
{
    fixture f;
    second_worker(&f, KDS_KCL_TAKER);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 3);
    ck_assert_uint_gt(s->duplicates_from_failover, 0);
    fx_fini(&f);

    second_worker(&f, KDS_KCL_WORKER_UTILIZATION);
    s = sum(&f, 0);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_BALANCE], 3);
    ck_assert_uint_eq(s->duplicates_from_failover, 0);
    fx_fini(&f);

    fx_defaults(&f, 6, SIM_MIN(7), 600, SIM_S(30), 1, 2);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    f.kcl[0].lam.graceful_handoff = false;
    f.wk[0][1].start = SIM_MIN(2);
    fx_run(&f);
    s = sum(&f, 0);
    ck_assert_uint_eq(s->handoffs, 0);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_BALANCE], 3);
    ck_assert_uint_gt(s->duplicates_from_failover, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* A processor busy with a 2-minute batch cannot finish within the handoff timeout
 * (30 s): the old owner hands the lease over anyway, its batch finishes later and the
 * new owner, started at the last checkpoint, delivers that batch again (a 9-minute run,
 * so that the new owner's own 2-minute batches end before it does). */
START_TEST(kcl3_handoff_timeout)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(9), 600, SIM_S(30), 1, 2);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    f.kcl[0].process_ms = sim_dist_const(120000);
    f.wk[0][1].start = SIM_MIN(2);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    const kds_kcl_worker_summary *w1 = wsum(&f, 0, "w1");
    ck_assert_uint_gt(w1->handoffs_out, 0);
    ck_assert_uint_gt(w1->handoffs_timed_out, 0);
    ck_assert_uint_gt(s->duplicates_from_failover, 0);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* LEASE_COUNT_BASED (kcl.md 7.3): the leader moves leases one at a time from the most
 * loaded worker to the least loaded until every worker is within ceil(6 / 2) = 3: all
 * three in the first balancing run after the join. */
START_TEST(kcl3_lease_count)
{
    fixture f;
    second_worker(&f, KDS_KCL_LEASE_COUNT);
    check_balanced_join(&f, 3);
    fx_fini(&f);
}
END_TEST

/* The 3.x table traffic (kcl.md section 6): only the leader scans, once a run; every
 * worker queries the owner index every 9,975 ms and reports metrics every 30 s. */
START_TEST(kcl3_table_traffic)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(5), 600, SIM_S(30), 1, 3);
    f.kcl[0].assignment = KDS_KCL_WORKER_UTILIZATION;
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    const kds_lease_table_stats *st = &s->table->st;
    /* The leader's LAM runs at 0 s to 300 s, and its shard-sync audits at 60, 180 and
     * 300 s; no 2.x election. */
    ck_assert_uint_eq(st->requests[KDS_DDB_SCAN], s->lam_runs + s->audits);
    ck_assert_uint_eq(s->lam_runs, SIM_MIN(5) / LAM_PERIOD + 1);
    ck_assert_uint_eq(s->audits, 3);
    ck_assert_uint_eq(s->elections, 0);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->scans, 0);
    ck_assert_uint_eq(st->requests[KDS_DDB_QUERY], 3 * (SIM_MIN(5) / DISCOVERY + 1));
    ck_assert_uint_eq(st->requests[KDS_DDB_TAKE], 0);
    ck_assert_uint_eq(st->requests[KDS_DDB_METRICS], 3 * 10 + s->lam_runs);
    check_conservation(&f);
    fx_fini(&f);
}
END_TEST

/* ---- determinism ----------------------------------------------------------------------- */

typedef struct outcome {
    uint64_t moves, dups, delivered, processed[3];
    sim_time first_expiry;
} outcome;

static outcome run_once(uint64_t seed)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(5), 1200, SIM_S(30), 1, 3);
    f.cfg.seed = seed;
    f.kcl[0].sync_wait_ms = (sim_dist){SIM_DIST_UNIFORM, 1000.0, 30000.0, 0.0, INFINITY};
    add_event(&f, 0, 0, KDS_KCL_EV_CRASH, SIM_MIN(3), 0, -1);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    outcome o = {s->moves, s->duplicates_from_failover, cst(&f, 0)->records_delivered, {0}, -1};
    for (size_t i = 0; i < 3; i++)
        o.processed[i] = s->workers[i].records_processed;
    for (size_t i = 0; i < s->n_move_log && o.first_expiry < 0; i++)
        if (s->move_log[i].cause == KDS_KCL_EXPIRY)
            o.first_expiry = s->move_log[i].at;
    fx_fini(&f);
    return o;
}

START_TEST(deterministic)
{
    outcome a = run_once(77), b = run_once(77), c = run_once(78);
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert(memcmp(&a, &c, sizeof a) != 0);
}
END_TEST

/* java.util.Random as Java computes it: new Random(0).nextInt() and new Random(42)
 * .nextInt() are the values Java's users see (-1155484576, -1170105035); nextInt(10)
 * exercises the rejection loop, nextInt(8) the power-of-two path. */
START_TEST(java_random)
{
    kds_java_random r;
    kds_java_random_init(&r, 0);
    ck_assert_int_eq(kds_java_random_next(&r, 32), -1155484576);
    kds_java_random_init(&r, 42);
    ck_assert_int_eq(kds_java_random_next(&r, 32), -1170105035);
    kds_java_random_init(&r, 42);
    static const int32_t ten[] = {0, 3, 8, 4, 0, 5, 5, 8, 9, 3};
    for (size_t i = 0; i < 10; i++)
        ck_assert_int_eq(kds_java_random_next_int(&r, 10), ten[i]);
    kds_java_random_init(&r, 42);
    for (int i = 0; i < 1000; i++) {
        int32_t v = kds_java_random_next_int(&r, 8);
        ck_assert(v >= 0 && v < 8);
    }
    /* The 2.x leader among n sorted owners: Collections.shuffle(list, new Random(1947)). */
    static const size_t lead[] = {0, 0, 2, 3, 4, 2, 2, 2, 3, 8, 6, 9};
    for (size_t n = 1; n <= 12; n++)
        ck_assert_uint_eq(kds_kcl_leader_index(n), lead[n - 1]);
}
END_TEST

/* The 2.x leader decider and the shard-sync auditor (kcl.md 4.4, 6, 7.1): each worker
 * elects when its scheduler starts (0 s, after its first taker pass), 60 s later and
 * every 5 min after (360 s); its auditor runs at 60 s and every 2 min. At 0 s w1 takes
 * every new lease and elects itself; w2 then steals one and, of {w1, w2}, elects w1; w3
 * steals one and, of {w1, w2, w3}, elects w3 (the shuffle with seed 1947 puts the third
 * first). So at 60 s w1 and w3 both audit (each worker keeps its own answer), and after
 * the 60 s elections w3 alone, at 180, 300, 420 and 540 s. Every election and every
 * audit is a Scan of the table; the open leases cover the key space, so no sync. */
START_TEST(leader_decider_and_auditor)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(10), 600, SIM_S(30), 1, 3);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(s->elections, 9);
    ck_assert_uint_eq(wsum(&f, 0, "w1")->audits, 1);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->audits, 0);
    ck_assert_uint_eq(wsum(&f, 0, "w3")->audits, 5);
    ck_assert_uint_eq(s->audits, 6);
    ck_assert_uint_eq(s->holes_seen, 0);
    ck_assert_uint_eq(s->shard_syncs, 0);
    uint64_t scans = 0;
    for (size_t i = 0; i < s->n_workers; i++)
        scans += s->workers[i].scans;
    ck_assert_uint_eq(s->table->st.requests[KDS_DDB_SCAN], scans + 9 + 6);
    check_conservation(&f);
    fx_fini(&f);

    /* The auditor's period is its own setting: every minute. */
    fx_defaults(&f, 6, SIM_MIN(10), 600, SIM_S(30), 1, 3);
    f.kcl[0].shard_sync_interval = SIM_MIN(1);
    fx_run(&f);
    /* 60 s to 600 s, every minute: w3 ten times, and w1 at 60 s. */
    ck_assert_uint_eq(sum(&f, 0)->audits, 11);
    ck_assert_uint_eq(wsum(&f, 0, "w3")->audits, 10);
    fx_fini(&f);
}
END_TEST

/* A lease deleted from the table by hand (an operator's mistake) leaves a hole in the
 * open leases' hash ranges: the holder loses the lease at its next renewal, the leader's
 * auditor sees the same hole at three runs in a row (shard_sync_confidence), and its
 * shard sync creates the lease again, at the application's initial position
 * (TRIM_HORIZON here), which a taker then takes: the shard is read again. */
START_TEST(auditor_recreates_a_deleted_lease)
{
    fixture f;
    fx_defaults(&f, 4, SIM_MIN(15), 400, SIM_S(30), 1, 2);
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    f.built = true;
    kds_world_run_until(&f.w, SIM_S(100));
    kds_lease_table *t = (kds_lease_table *)kds_kcl_table(f.w.consumers[0]);
    int32_t i = kds_lease_find(t, 2);
    ck_assert_int_ge(i, 0);
    ck_assert_int_eq(kds_lease_delete(t, (size_t)i), KDS_DDB_OK);
    /* The audits at 180 and 300 s see the hole; 420 s is the third: the sync. */
    kds_world_run_until(&f.w, SIM_S(419));
    const kds_lease_table *ct = kds_kcl_table(f.w.consumers[0]);
    ck_assert_int_lt(kds_lease_find(ct, 2), 0);
    kds_world_run(&f.w);
    ck_assert_msg(!f.w.violated, "%s", f.w.violation);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_uint_eq(s->holes_seen, 3);
    ck_assert_uint_eq(s->shard_syncs, 1);
    ck_assert_uint_eq(s->leases_recreated, 1);
    int32_t j = kds_lease_find(ct, 2);
    ck_assert_int_ge(j, 0);
    ck_assert_int_ge(ct->items[j].owner, 0);
    fx_fini(&f);

    /* With a confidence of 4 the sync waits for a fourth run (540 s). */
    fx_defaults(&f, 4, SIM_MIN(15), 400, SIM_S(30), 1, 2);
    f.kcl[0].shard_sync_confidence = 4;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    f.built = true;
    kds_world_run_until(&f.w, SIM_S(100));
    t = (kds_lease_table *)kds_kcl_table(f.w.consumers[0]);
    ck_assert_int_eq(kds_lease_delete(t, (size_t)kds_lease_find(t, 2)), KDS_DDB_OK);
    kds_world_run_until(&f.w, SIM_S(539));
    ck_assert_int_lt(kds_lease_find(kds_kcl_table(f.w.consumers[0]), 2), 0);
    kds_world_run(&f.w);
    ck_assert_uint_eq(sum(&f, 0)->holes_seen, 4);
    ck_assert_uint_eq(sum(&f, 0)->shard_syncs, 1);
    fx_fini(&f);
}
END_TEST

/* ---- start-up on an empty lease table (kcl.md 4.4) -------------------------------------- */

/* The first move to worker `to` (its first lease), or -1. */
static sim_time first_move_to(fixture *f, size_t app, const char *to)
{
    const kds_kcl_summary *s = sum(f, app);
    for (size_t i = 0; i < s->n_move_log; i++)
        if (strcmp(s->move_log[i].to, to) == 0)
            return s->move_log[i].at;
    return -1;
}

/* Scheduler.shouldInitiateLeaseSync with a 10 s wait: w1, started at 0 on an empty
 * table, checks it (a Scan of one item) at 0, 3, 6 and 9 s and wakes at 12 s, past its
 * wait: it runs the shard sync, which creates the leases and then sleeps
 * shardSyncIntervalMillis (60 s) before w1 takes any. w2, started at 10 s, checks at
 * 10 s (still empty) and at 13 s finds the leases: it starts there, 7 s before its own
 * wait ends, creates nothing and, alone, takes all six. w1 starts taking at 72 s, from
 * w2 (3 steals, one a pass). */
START_TEST(startup_rechecks_empty_table)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(2), 600, SIM_S(10), 1, 2);
    f.kcl[0].sync_wait_ms = sim_dist_const(10000);
    f.kcl[0].sync_sleep = SIM_S(60); /* the KCL's default */
    f.wk[0][1].start = SIM_S(10);
    fx_run(&f);
    const kds_kcl_summary *s = sum(&f, 0);
    ck_assert_int_eq(first_move_to(&f, 0, "w2"), SIM_S(13));
    ck_assert_int_eq(first_move_to(&f, 0, "w1"), SIM_S(72));
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_TAKE], 6);
    ck_assert_uint_eq(s->moves_by_cause[KDS_KCL_STEAL], 3);
    ck_assert_uint_eq(s->table->st.requests[KDS_DDB_CREATE], 6);
    /* The scans: the takers', the elections', and the checks (w1 four, w2 two). */
    ck_assert_uint_eq(wsum(&f, 0, "w1")->startup_checks, 4);
    ck_assert_uint_eq(wsum(&f, 0, "w2")->startup_checks, 2);
    uint64_t scans = 0;
    for (size_t i = 0; i < s->n_workers; i++)
        scans += s->workers[i].scans;
    ck_assert_uint_eq(s->table->st.requests[KDS_DDB_SCAN], scans + s->elections + s->audits + 6);
    fx_fini(&f);
}
END_TEST

/* A throttled check fails the scheduler's initialization attempt: a new one, with a new
 * wait, 1 s later. A 1 RCU table without burst holds one unit, two checks: of three
 * workers started at 0, w3's check is throttled; its new attempt checks at 1 s, then
 * every 3 s (4, 7, 10 s), beside w1's and w2's checks at 3, 6 and 9 s. Nothing else
 * reads the table before the leases exist. */
START_TEST(startup_check_throttled)
{
    fixture f;
    fx_defaults(&f, 6, SIM_MIN(1), 600, SIM_S(10), 1, 3);
    f.kcl[0].sync_wait_ms = sim_dist_const(10000);
    f.kcl[0].table.billing = KDS_LEASE_PROVISIONED;
    f.kcl[0].table.rcu = 1;
    f.kcl[0].table.burst_s = 0;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    f.built = true;
    const kds_lease_table_stats *st = &kds_kcl_table(f.w.consumers[0])->st;
    static const struct {
        sim_time at;
        uint64_t scans;
    } expect[] = {{SIM_MS(500), 3},  {SIM_MS(1500), 4}, {SIM_MS(2500), 4}, {SIM_MS(3500), 6},
                  {SIM_MS(4500), 7}, {SIM_MS(9500), 12}, {SIM_MS(10500), 13}};
    for (size_t k = 0; k < sizeof expect / sizeof expect[0]; k++) {
        kds_world_run_until(&f.w, expect[k].at);
        ck_assert_msg(st->requests[KDS_DDB_SCAN] == expect[k].scans, "at %.1f s: %lu scans",
                      sim_to_s(expect[k].at), (unsigned long)st->requests[KDS_DDB_SCAN]);
        ck_assert_uint_eq(st->throttled[KDS_DDB_SCAN], 1);
        ck_assert_uint_eq(st->requests[KDS_DDB_CREATE], 0);
    }
    kds_world_run(&f.w);
    ck_assert_msg(!f.w.violated, "%s", f.w.violation);
    ck_assert_int_eq(first_move_to(&f, 0, "w1"), SIM_S(12));
    fx_fini(&f);
}
END_TEST

Suite *kcl_suite(void)
{
    Suite *s = suite_create("kds_kcl");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, renewer_period);
    tcase_add_test(tc, second_worker_joins);
    tcase_add_test(tc, floors_from_first_start);
    tcase_add_loop_test(tc, crash_failover, 0, 3);
    tcase_add_test(tc, twelve_workers);
    tcase_add_test(tc, small_lease_table_churns);
    tcase_add_test(tc, checkpoint_renews_the_lease);
    tcase_add_test(tc, refused_checkpoint_drops_the_lease);
    tcase_add_test(tc, long_pause);
    tcase_add_test(tc, short_pause_converges_when_held);
    tcase_add_loop_test(tc, graceful_stop, 0, 3);
    tcase_add_test(tc, crash_and_restart);
    tcase_add_test(tc, rolling_deployment);
    tcase_add_test(tc, shared_application_name);
    tcase_add_loop_test(tc, renamed_application, 0, 2);
    tcase_add_test(tc, resharding_children_after_parents);
    tcase_add_test(tc, resharding_taker_map_follows_live_leases);
    tcase_add_test(tc, efo_retrieval);
    tcase_add_test(tc, worker_capacity);
    tcase_add_test(tc, max_leases_per_worker);
    tcase_add_test(tc, scans_cost_read_capacity);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, java_random);
    tcase_add_test(tc, leader_decider_and_auditor);
    tcase_add_test(tc, auditor_recreates_a_deleted_lease);
    tcase_add_test(tc, startup_rechecks_empty_table);
    tcase_add_test(tc, startup_check_throttled);
    suite_add_tcase(s, tc);
    TCase *t3 = tcase_create("kcl3");
    tcase_add_loop_test(t3, kcl3_leader_failover, 0, 2);
    tcase_add_test(t3, kcl3_leader_resigns);
    tcase_add_test(t3, kcl3_resigned_leader_rechecks);
    tcase_add_test(t3, kcl3_crash_failover);
    tcase_add_test(t3, kcl3_second_worker_balances);
    tcase_add_test(t3, kcl3_handoff_no_duplicates);
    tcase_add_test(t3, kcl3_handoff_timeout);
    tcase_add_test(t3, kcl3_lease_count);
    tcase_add_test(t3, kcl3_cpu_metric);
    tcase_add_test(t3, kcl3_table_traffic);
    suite_add_tcase(s, t3);
    return s;
}

int main(void)
{
    return tu_run_suite(kcl_suite());
}
