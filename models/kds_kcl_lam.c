/* kds_kcl_lam.c - KCL 3.x lease assignment for kds_kcl.h (kcl.md section 7): the leader
 * lock, the leader's LeaseAssignmentManager (expired and unassigned leases, variance or
 * lease-count balancing, the start of graceful handoffs), the workers' lease discovery
 * and their metrics reports. The old owner's side of a handoff lives in kds_kcl.c,
 * beside the renewer and the processors it drives. */
#include "kds_kcl_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kds_trace.h"
#include "sim_err.h"

/* The operating range of a worker metric: percent (kcl.md 7.3). */
#define RANGE_MAX 100.0

/* Metrics compared after floating-point extrapolation: a receiver brought exactly to
 * the fleet average is not above it. */
#define SLACK (1.0 + 1e-9)

void kds_kcl_lam_defaults(kds_kcl_lam_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->balance_every = 3;
    c->rebalance_threshold = 10.0;
    c->dampening = 60.0;
    c->allow_overshoot = true;
    c->failed_runs_to_resign = 3;
    c->graceful_handoff = true;
    c->handoff_timeout = SIM_S(30);
    c->handoff_poll = SIM_S(2);
    c->lock_lease = SIM_S(120);
    c->lock_heartbeat = SIM_S(30);
    c->metric = KDS_KCL_METRIC_THROUGHPUT;
    c->metrics_first = SIM_S(2);
    c->metrics_interval = SIM_S(30);
    c->metrics_keep = KDS_KCL_METRICS_KEEP_MAX;
    c->metrics_alpha = 0.5;
    c->metrics_expiry_factor = 2;
}

/* ---- leader lock (kcl.md 7.1) ---------------------------------------------------- */

static void became_leader(worker *w, sim_time now)
{
    kcl *a = w->app;
    /* A new leader has no history: every lease is "first seen" at its first run. */
    for (size_t i = 0; i < w->n_seen; i++)
        w->seen_at[i] = UNSEEN;
    w->lam_runs_led = 0;
    w->lam_failures = 0;
    if (a->n_leaders == a->cap_leaders) {
        a->cap_leaders = a->cap_leaders ? a->cap_leaders * 2 : 8;
        a->leaders = realloc(a->leaders, a->cap_leaders * sizeof *a->leaders);
        SIM_ASSERT(a->leaders != NULL);
    }
    a->leaders[a->n_leaders++] = (kds_kcl_leader){now, w->cfg->name};
    if (KDS_TRACING(a->st->trace, "lease", w->label, -1))
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                       "became the leader (it took the lease table's leader lock): it now "
                       "assigns free and expired leases and balances them "
                       "(LeaseAssignmentManager)");
}

/* Read the lock: take it if free or expired, heartbeat it if held. */
static void read_lock(worker *w, sim_time now)
{
    bool was = w->leader;
    w->leader = kds_lease_lock(w->app->table, w->owner, w->app->cfg.lam.lock_lease);
    if (w->leader && !was)
        became_leader(w, now);
}

/* Take or heartbeat the lock; a worker without it re-checks at the same period. */
static void lock_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_lock, lock_event, now))
        return;
    read_lock(w, now);
    w->ev_lock = sim_at(s, now + w->app->cfg.lam.lock_heartbeat, lock_event, w);
}

/* ---- worker metrics (kcl.md 7.3) --------------------------------------------------- */

/* One report: the 30-s value, kept with the previous ones, and their EMA written. A
 * paused worker reports nothing: its entry ages. */
static void metrics_event(sim *s, void *ctx)
{
    worker *w = ctx;
    kcl *a = w->app;
    const kds_kcl_lam_cfg *c = &a->cfg.lam;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_metrics, metrics_event, now))
        return;
    double v = 0;
    if (c->metric == KDS_KCL_METRIC_CPU) {
        /* Processing is booked when a batch starts: a report may see more than its span. */
        sim_time span = now - w->m_last;
        v = span > 0 ? 100.0 * (double)w->m_busy / (double)span : 0.0;
        if (v > RANGE_MAX)
            v = RANGE_MAX;
    } else {
        for (size_t i = 0; i < w->n_held; i++)
            if (w->held[i].tp > 0)
                v += w->held[i].tp;
    }
    w->m_busy = 0;
    w->m_last = now;
    size_t keep = c->metrics_keep; /* 1 to KDS_KCL_METRICS_KEEP_MAX (kds_kcl_make) */
    if (w->m_n >= keep) {
        memmove(w->m_hist, w->m_hist + 1, (keep - 1) * sizeof *w->m_hist);
        w->m_n = keep - 1;
    }
    w->m_hist[w->m_n++] = v;
    double ema = w->m_hist[0];
    for (size_t i = 1; i < w->m_n; i++)
        ema = c->metrics_alpha * w->m_hist[i] + (1.0 - c->metrics_alpha) * ema;
    kds_lease_metrics_write(a->table, w->owner, ema);
    w->ev_metrics = sim_at(s, now + c->metrics_interval, metrics_event, w);
}

/* ---- lease discovery (kcl.md 7.2 step 7) ------------------------------------------- */

/* Query the owner index for my leases; start each new one that no handoff holds back. */
static void discover_event(sim *s, void *ctx)
{
    worker *w = ctx;
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_discover, discover_event, now))
        return;
    w->sum.discoveries++;
    kds_ddb_status q = kds_lease_query(t, w->owner);
    if (q == KDS_DDB_THROTTLED)
        KDS_TRACE(a->st->trace, now, "lease", w->label, -1,
                  "lease discovery: its Query of the lease table (the owner index) throttled; "
                  "new leases wait for the next discovery");
    if (q == KDS_DDB_OK) {
        /* A processor's start may create leases (a finished parent's children): the
         * table may grow under the loop, so each item is looked up afresh. */
        for (size_t i = t->first_live; i < t->n && is_up(w); i++) {
            if (t->items[i].deleted || t->items[i].owner != w->owner || held_find(w, (uint32_t)i))
                continue;
            /* GetItem of the new key; a lease still being handed over waits for the old
             * owner's checkpoint and release. */
            kds_ddb_status g = kds_lease_get(t, i);
            if (g == KDS_DDB_THROTTLED)
                KDS_TRACE(a->st->trace, now, "lease", w->label, t->items[i].shard,
                          "lease discovery: the read of this new lease throttled by the lease "
                          "table; it waits for the next discovery");
            if (g != KDS_DDB_OK || t->items[i].ckpt_owner >= 0)
                continue;
            kds_kcl_acquired(w, (uint32_t)i, t->items[i].moved_from, t->items[i].moved_renewing,
                             (kds_kcl_cause)t->items[i].move_cause);
        }
        kds_kcl_check_converged(a, false);
    }
    /* Fixed rate, as the renewer. */
    do
        w->discover_next += a->discovery_period;
    while (w->discover_next <= now);
    if (w->state == W_RUNNING)
        w->ev_discover = sim_at(s, w->discover_next, discover_event, w);
}

/* ---- the LeaseAssignmentManager (kcl.md 7.2-7.3) ----------------------------------- */

/* The leader's view of the active workers in one run, by owner id. */
typedef struct fleet {
    kds_kcl_assignment strategy;
    size_t n;             /* owners in the table */
    bool *active;         /* reported metrics within the expiry */
    double *m;            /* metric: utilization, or lease count */
    double *thr;          /* assigned throughput, B/s */
    uint32_t *cnt;        /* leases held (unexpired) */
    size_t n_active;
    double avg_m;         /* fleet average of m */
    double avg_thr;       /* assigned throughput per active worker, B/s */
    double avg_lease_thr; /* of the leases that have a throughput, B/s */
    uint32_t target;      /* lease count: ceil(leases / workers); else
                             targetLeasesPerWorker = max(floor(leases / workers), 1) */
    uint32_t max_leases;  /* maxLeasesForWorker (0 = unlimited) */
} fleet;

static double lease_tp(const fleet *f, const kds_lease *l)
{
    return l->throughput >= 0 ? l->throughput : f->avg_lease_thr;
}

/* What receiving a lease of throughput `tp` adds to a worker's metric (kcl.md 7.2
 * step 4): throughput scaled to the metric, or the average metric per lease. */
static double extrapolate(const fleet *f, double tp)
{
    if (f->strategy == KDS_KCL_LEASE_COUNT)
        return 1.0;
    if (f->avg_thr > 0)
        return tp * f->avg_m / f->avg_thr;
    return f->avg_m / f->target;
}

static void fleet_build(worker *w, sim_time now, fleet *f)
{
    kcl *a = w->app;
    const kds_lease_table *t = a->table;
    const kds_kcl_lam_cfg *c = &a->cfg.lam;
    memset(f, 0, sizeof *f);
    f->strategy = a->cfg.assignment;
    f->n = t->n_owners;
    size_t n = f->n ? f->n : 1;
    f->active = calloc(n, sizeof *f->active);
    f->m = calloc(n, sizeof *f->m);
    f->thr = calloc(n, sizeof *f->thr);
    f->cnt = calloc(n, sizeof *f->cnt);
    SIM_ASSERT(f->active && f->m && f->thr && f->cnt);
    f->max_leases = a->cfg.max_leases_per_worker;
    /* Active: a metrics entry younger than the expiry (a crashed or stopped worker's
     * entry stays until then: issue #1452). */
    sim_time expiry = (sim_time)c->metrics_expiry_factor * c->metrics_interval;
    for (size_t o = 0; o < f->n; o++) {
        const kds_lease_owner *ow = &t->owners[o];
        f->active[o] = ow->metrics_at >= 0 && now - ow->metrics_at < expiry;
        f->n_active += f->active[o];
    }
    if (f->n_active == 0)
        return;
    size_t known = 0;
    for (size_t i = t->first_live; i < t->n; i++)
        if (!t->items[i].deleted && t->items[i].throughput >= 0) {
            f->avg_lease_thr += t->items[i].throughput;
            known++;
        }
    if (known)
        f->avg_lease_thr /= (double)known;
    double total_thr = 0;
    for (size_t i = t->first_live; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (l->deleted || l->owner < 0 || !f->active[l->owner] || kds_kcl_expired(w, i, now))
            continue;
        f->cnt[l->owner]++;
        f->thr[l->owner] += lease_tp(f, l);
        total_thr += lease_tp(f, l);
    }
    f->avg_thr = total_thr / (double)f->n_active;
    size_t leases = t->n_live;
    if (f->strategy == KDS_KCL_LEASE_COUNT) {
        f->target = (uint32_t)((leases + f->n_active - 1) / f->n_active);
        if (f->max_leases > 0 && f->target > f->max_leases)
            f->target = f->max_leases;
    } else {
        f->target = leases / f->n_active > 1 ? (uint32_t)(leases / f->n_active) : 1;
    }
    /* The metric of each active worker. In throughput mode the reports are B/s, made
     * relative to the fleet: 100 = the average worker. */
    double avg_raw = 0;
    for (size_t o = 0; o < f->n; o++)
        if (f->active[o])
            avg_raw += t->owners[o].metric / (double)f->n_active;
    for (size_t o = 0; o < f->n; o++) {
        if (!f->active[o])
            continue;
        if (f->strategy == KDS_KCL_LEASE_COUNT)
            f->m[o] = f->cnt[o];
        else if (c->metric == KDS_KCL_METRIC_THROUGHPUT)
            f->m[o] = avg_raw > 0 ? RANGE_MAX * t->owners[o].metric / avg_raw : 0.0;
        else
            f->m[o] = t->owners[o].metric;
        f->avg_m += f->m[o] / (double)f->n_active;
    }
}

static void fleet_free(fleet *f)
{
    free(f->active);
    free(f->m);
    free(f->thr);
    free(f->cnt);
}

/* The active worker with the most headroom, other than `not`: the lowest metric (0
 * counts as the most headroom), then the fewest leases, then the first registered; -1
 * if every one is full (maxLeasesForWorker, or the lease-count target). */
static int32_t receiver(const fleet *f, int32_t not)
{
    int32_t best = -1;
    for (size_t o = 0; o < f->n; o++) {
        if (!f->active[o] || (int32_t)o == not)
            continue;
        if (f->max_leases > 0 && f->cnt[o] >= f->max_leases)
            continue;
        if (f->strategy == KDS_KCL_LEASE_COUNT && f->cnt[o] >= f->target)
            continue;
        if (best < 0 || f->m[o] < f->m[best] ||
            (f->m[o] == f->m[best] && f->cnt[o] < f->cnt[best]))
            best = (int32_t)o;
    }
    return best;
}

/* Write the move of lease i to `to` (a handoff when `handoff`), and account for it in
 * the fleet. False if the write failed (throttled, or the lease changed). */
static bool move_lease(worker *w, fleet *f, size_t i, int32_t to, kds_kcl_cause cause,
                       bool handoff)
{
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    int32_t from = t->items[i].owner;
    kds_ddb_status r = handoff ? kds_lease_handoff(t, i, from, to, (int)cause)
                               : kds_lease_assign(t, i, from, to, (int)cause);
    if (r == KDS_DDB_THROTTLED)
        KDS_TRACE(a->st->trace, sim_now(a->sim), "lease", w->label, t->items[i].shard,
                  "the leader's %s of this lease to %s/%s throttled by the lease table; "
                  "left to a later run", handoff ? "handoff" : "assignment",
                  t->owners[to].app, t->owners[to].worker);
    if (r != KDS_DDB_OK)
        return false;
    a->handoffs += handoff;
    double tp = lease_tp(f, &t->items[i]);
    double e = extrapolate(f, tp);
    f->cnt[to]++;
    f->thr[to] += tp;
    f->m[to] += e;
    if (from >= 0 && (size_t)from < f->n && f->active[from]) {
        f->cnt[from]--;
        f->thr[from] -= tp;
        f->m[from] -= e;
    }
    return true;
}

typedef struct aged {
    sim_time key; /* unassigned: "never"; else when its counter last moved */
    uint32_t i;
} aged;

static int aged_cmp(const void *x, const void *y)
{
    const aged *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Expired and unassigned leases, unassigned then oldest first, each to the worker with
 * the most headroom (kcl.md 7.2 step 4). A direct assignment: nobody processes them. */
static void assign_expired(worker *w, fleet *f, sim_time now)
{
    kds_lease_table *t = w->app->table;
    aged *v = malloc((t->n ? t->n : 1) * sizeof *v);
    SIM_ASSERT(v != NULL);
    size_t n = 0;
    for (size_t i = t->first_live; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (l->deleted || (l->owner >= 0 && !kds_kcl_expired(w, i, now)))
            continue;
        v[n++] = (aged){l->owner < 0 ? INT64_MIN : *kds_kcl_seen_at(w, i), (uint32_t)i};
    }
    qsort(v, n, sizeof *v, aged_cmp);
    for (size_t k = 0; k < n; k++) {
        int32_t to = receiver(f, -1);
        if (to < 0)
            break;
        /* The worker that held it: mid-handoff, the old owner (checkpointOwner). */
        const kds_lease *l = &t->items[v[k].i];
        int32_t prev = l->ckpt_owner >= 0 ? l->ckpt_owner : l->owner;
        kds_kcl_cause cause = prev < 0 ? KDS_KCL_TAKE
                              : t->owners[prev].state == KDS_OWNER_STOPPED ? KDS_KCL_SHUTDOWN
                                                                           : KDS_KCL_EXPIRY;
        move_lease(w, f, v[k].i, to, cause, false);
    }
    free(v);
}

/* The leases of `donor` the leader may move (unexpired, no handoff in progress), in
 * random order from the leader's generator, into v; returns how many. */
static size_t movable(worker *w, int32_t donor, sim_time now, uint32_t *v)
{
    const kds_lease_table *t = w->app->table;
    size_t n = 0;
    for (size_t i = t->first_live; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (!l->deleted && l->owner == donor && l->ckpt_owner < 0 && !kds_kcl_expired(w, i, now))
            v[n++] = (uint32_t)i;
    }
    shuffle(w->rng, v, n);
    return n;
}

typedef struct donor {
    double take; /* throughput to move away, B/s */
    int32_t o;
} donor;

static int donor_cmp(const void *x, const void *y)
{
    const donor *a = x, *b = y;
    if (a->take != b->take)
        return a->take > b->take ? -1 : 1;
    return a->o < b->o ? -1 : a->o > b->o;
}

/* Variance-based balancing (kcl.md 7.3), on the one metric the model has. */
static void balance_utilization(worker *w, fleet *f, sim_time now, uint32_t *buf)
{
    const kds_kcl_cfg *c = &w->app->cfg;
    const kds_lease_table *t = w->app->table;
    double upper = f->avg_m * (1.0 + c->lam.rebalance_threshold / 100.0);
    double lower = f->avg_m * (1.0 - c->lam.rebalance_threshold / 100.0);
    bool trigger = false;
    for (size_t o = 0; o < f->n; o++)
        if (f->active[o] && (f->m[o] > upper || f->m[o] < lower || f->m[o] > RANGE_MAX))
            trigger = true;
    if (!trigger || f->n_active < 2)
        return;
    donor *d = malloc(f->n * sizeof *d);
    SIM_ASSERT(d != NULL);
    size_t nd = 0;
    int32_t most = -1;
    for (size_t o = 0; o < f->n; o++) {
        if (!f->active[o])
            continue;
        if (f->m[o] >= upper || f->m[o] > RANGE_MAX)
            d[nd++].o = (int32_t)o;
        if (most < 0 || f->m[o] > f->m[most])
            most = (int32_t)o;
    }
    if (nd == 0)
        d[nd++].o = most; /* only light outliers: the single most loaded gives */
    for (size_t k = 0; k < nd; k++) {
        double m = f->m[d[k].o];
        d[k].take = m > f->avg_m ? (m - f->avg_m) / m * c->lam.dampening / 100.0 * f->thr[d[k].o]
                                 : 0.0;
    }
    qsort(d, nd, sizeof *d, donor_cmp);
    for (size_t k = 0; k < nd; k++) {
        int32_t from = d[k].o;
        size_t n = movable(w, from, now, buf);
        /* Pick what fits under the amount to move; if nothing fits, overshoot with the
         * smallest lease; a donor with no throughput gives one lease. */
        size_t picked = 0;
        double left = d[k].take;
        for (size_t j = 0; j < n; j++) {
            double tp = lease_tp(f, &t->items[buf[j]]);
            if (f->thr[from] <= 0 ? picked == 0 : tp <= left) {
                buf[picked++] = buf[j];
                left -= tp;
            }
        }
        if (picked == 0 && n > 0 && c->lam.allow_overshoot) {
            size_t s = 0;
            for (size_t j = 1; j < n; j++)
                if (lease_tp(f, &t->items[buf[j]]) < lease_tp(f, &t->items[buf[s]]))
                    s = j;
            buf[picked++] = buf[s];
        }
        for (size_t j = 0; j < picked; j++) {
            int32_t to = receiver(f, from);
            if (to < 0)
                break;
            double after = f->m[to] + extrapolate(f, lease_tp(f, &t->items[buf[j]]));
            if (after > f->avg_m * SLACK || after > RANGE_MAX * SLACK)
                break; /* the receiver would become a donor itself */
            move_lease(w, f, buf[j], to, KDS_KCL_BALANCE, c->lam.graceful_handoff);
        }
    }
    free(d);
}

/* Lease-count balancing (kcl.md 7.3, LEASE_COUNT_BASED): one lease at a time from the
 * most loaded worker to the least loaded until every one is within the target. */
static void balance_count(worker *w, fleet *f, sim_time now, uint32_t *buf)
{
    bool handoff = w->app->cfg.lam.graceful_handoff;
    for (;;) {
        int32_t from = -1;
        for (size_t o = 0; o < f->n; o++)
            if (f->active[o] && (from < 0 || f->cnt[o] > f->cnt[from]))
                from = (int32_t)o;
        if (from < 0 || f->cnt[from] <= f->target)
            return;
        int32_t to = receiver(f, from);
        if (to < 0 || movable(w, from, now, buf) == 0)
            return;
        if (!move_lease(w, f, buf[0], to, KDS_KCL_BALANCE, handoff))
            return;
    }
}

/* One LAM run of the leader. */
static void lam_run(worker *w, sim_time now)
{
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    const kds_kcl_lam_cfg *c = &a->cfg.lam;
    a->lam_runs++;
    w->sum.scans++;
    if (kds_lease_scan(t) != KDS_DDB_OK) {
        w->sum.scans_throttled++;
        /* A leader that keeps failing gives the lock up for another to try. */
        if (++w->lam_failures >= c->failed_runs_to_resign) {
            kds_lease_unlock(t, w->owner);
            w->leader = false;
            w->lock_recheck = true;
            if (KDS_TRACING(a->st->trace, "lease", w->label, -1))
                kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                               "gave the leader lock up: %" PRIu32 " lease assignment runs in "
                               "a row failed (their lease table scans throttled)",
                               w->lam_failures);
        } else {
            KDS_TRACE(a->st->trace, now, "lease", w->label, -1,
                      "lease assignment: its Scan of the lease table throttled; this run "
                      "assigns nothing (%" PRIu32 " failed in a row; the leader gives its "
                      "lock up at %" PRIu32 ")",
                      w->lam_failures, c->failed_runs_to_resign);
        }
        return;
    }
    kds_lease_metrics_read(t);
    w->lam_failures = 0;
    w->lam_runs_led++;
    kds_kcl_stamp_scan(w, now);
    fleet f;
    fleet_build(w, now, &f);
    if (f.n_active > 0) {
        assign_expired(w, &f, now);
        /* The KCL's shouldRunVarianceBalancing(): a counter reset when the worker takes
         * the lead and advanced by every run, balancing when it is 0: the first run of
         * a new leader balances, then every balance_every-th. */
        if (c->balance_every > 0 && (w->lam_runs_led - 1) % c->balance_every == 0) {
            uint32_t *buf = malloc((t->n ? t->n : 1) * sizeof *buf);
            SIM_ASSERT(buf != NULL);
            if (a->cfg.assignment == KDS_KCL_LEASE_COUNT)
                balance_count(w, &f, now, buf);
            else
                balance_utilization(w, &f, now, buf);
            free(buf);
        }
    }
    fleet_free(&f);
    kds_kcl_check_converged(a, false);
}

/* Every worker runs the LAM on a fixed delay; only the leader does anything. */
static void lam_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_lam, lam_event, now))
        return;
    if (w->lock_recheck) {
        /* The KCL's leader decider caches only a "not leader" answer, for a heartbeat
         * period; its last answer here was "leader", so this run's check reads the lock
         * (DynamoDBLockBasedLeaderDecider.isLeader) and takes it if still free. */
        w->lock_recheck = false;
        if (!w->leader)
            read_lock(w, now);
    }
    if (w->leader)
        lam_run(w, now);
    if (w->state == W_RUNNING)
        w->ev_lam = sim_at(s, now + w->app->lam_period, lam_event, w);
}

/* ---- worker lifecycle -------------------------------------------------------------- */

void kds_kcl_lam_start(worker *w)
{
    kcl *a = w->app;
    sim *s = a->sim;
    sim_time now = sim_now(s);
    /* The lock first: a worker alone at the start leads its own first LAM run. */
    w->ev_lock = sim_at(s, now, lock_event, w);
    w->ev_lam = sim_at(s, now, lam_event, w);
    w->discover_next = now;
    w->ev_discover = sim_at(s, now, discover_event, w);
    w->ev_metrics = sim_at(s, now + a->cfg.lam.metrics_first, metrics_event, w);
}

void kds_kcl_lam_stop(worker *w, bool graceful)
{
    sim *s = w->app->sim;
    cancel(s, &w->ev_lock);
    cancel(s, &w->ev_lam);
    cancel(s, &w->ev_discover);
    cancel(s, &w->ev_metrics);
    /* A graceful shutdown releases the lock; a crashed leader's lock expires. */
    if (graceful)
        kds_lease_unlock(w->app->table, w->owner);
    w->leader = false;
    w->lock_recheck = false;
}
