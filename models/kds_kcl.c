/* kds_kcl.c - the KCL application of kds_kcl.h: workers (renewer, 2.x taker, cleanup,
 * the 2.x leader election, the shard-sync auditor, the old owner's side of a 3.x
 * handoff), record processors (polling or enhanced
 * fan-out), checkpoints, lease moves and the end-of-run summary. The 3.x leader, lease
 * assignment and discovery are in kds_kcl_lam.c. */
#include "kds_kcl.h"
#include "kds_kcl_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_trace.h"
#include "sim_err.h"

static void on_new_shard(void *ctx, kds_shard *sh);
static void hold_heads(kcl *a);

/* ---- configuration ---------------------------------------------------------------- */

void kds_kcl_cfg_defaults(kds_kcl_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "kcl";
    cfg->initial = KDS_START_LATEST;
    cfg->efo = true;
    kds_efo_cfg_defaults(&cfg->efo_cfg);
    cfg->idle = SIM_MS(1500);
    cfg->max_records = 10000;
    cfg->max_pending = 4;
    cfg->max_pending_records = 30000;
    cfg->max_pending_bytes = 8 * KDS_MIB;
    cfg->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 40.0, 0.4, 1.0, 10000.0};
    cfg->process_ms = sim_dist_const(0);
    cfg->ckpt_on_shutdown = true;
    cfg->failover = SIM_S(10);
    cfg->epsilon = SIM_MS(25);
    cfg->max_steal = 1;
    cfg->priority_leases = true;
    cfg->very_old_factor = 3;
    cfg->take_retries = 3;
    cfg->parent_poll = SIM_S(10);
    cfg->cleanup_interval = SIM_MIN(5);
    cfg->task_backoff = SIM_MS(500);
    cfg->sync_wait_ms = (sim_dist){SIM_DIST_UNIFORM, 1000.0, 30000.0, 0.0, INFINITY};
    cfg->sync_sleep = SIM_S(60);
    cfg->shard_sync_interval = SIM_MIN(2);
    cfg->shard_sync_confidence = 3;
    kds_lease_table_cfg_defaults(&cfg->table);
    cfg->assignment = KDS_KCL_TAKER;
    kds_kcl_lam_defaults(&cfg->lam);
}

sim_time kds_kcl_renew_period(const kds_kcl_cfg *cfg)
{
    if (cfg->renew_interval > 0)
        return cfg->renew_interval;
    /* The KCL's long arithmetic in milliseconds: the third is rounded down to a
     * millisecond before epsilon is taken off. */
    return cfg->failover / SIM_MS(1) / 3 * SIM_MS(1) - cfg->epsilon;
}

const char *kds_kcl_cause_name(kds_kcl_cause c)
{
    static const char *const names[] = {"take", "steal", "expiry", "shutdown", "balance"};
    return (unsigned)c < KDS_KCL_N_CAUSES ? names[c] : "?";
}

const char *kds_kcl_assignment_name(kds_kcl_assignment a)
{
    static const char *const names[] = {"taker", "worker_utilization", "lease_count"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "?";
}


/* ---- small helpers ---------------------------------------------------------------- */

static slot *slot_of(kcl *a, uint32_t shard)
{
    if (shard >= a->n_slots) {
        size_t n = a->n_slots ? a->n_slots : 8;
        while (n <= shard)
            n *= 2;
        slot **ns = realloc(a->slots, n * sizeof *ns);
        SIM_ASSERT(ns != NULL);
        memset(ns + a->n_slots, 0, (n - a->n_slots) * sizeof *ns);
        a->slots = ns;
        a->n_slots = n;
    }
    if (!a->slots[shard]) {
        slot *sl = calloc(1, sizeof *sl);
        SIM_ASSERT(sl != NULL);
        SIM_ASSERT(shard < a->st->n_shards);
        sl->sh = a->st->shards[shard];
        sl->last_move = SIZE_MAX;
        a->slots[shard] = sl;
    }
    return a->slots[shard];
}


static uint32_t *order_buf(kcl *a, size_t n)
{
    if (n > a->cap_order) {
        a->cap_order = n * 2;
        a->order = realloc(a->order, a->cap_order * sizeof *a->order);
        SIM_ASSERT(a->order != NULL);
    }
    return a->order;
}

/* Record the worker's held-lease count if it changed, and its idle time; the leases it
 * holds may have changed, which the convergence checks of every application on the
 * table look at. */
static void note_held(worker *w)
{
    sim_time now = sim_now(w->app->sim);
    w->app->table->version++;
    uint32_t n = w->state == W_RUNNING || w->state == W_SYNC ? (uint32_t)w->n_held : 0;
    if (w->n_log == 0 || w->log_n[w->n_log - 1] != n) {
        if (w->n_log > 0 && w->log_t[w->n_log - 1] == now) {
            w->log_n[w->n_log - 1] = n;
        } else {
            if (w->n_log == w->cap_log) {
                w->cap_log = w->cap_log ? w->cap_log * 2 : 16;
                w->log_t = realloc(w->log_t, w->cap_log * sizeof *w->log_t);
                w->log_n = realloc(w->log_n, w->cap_log * sizeof *w->log_n);
                SIM_ASSERT(w->log_t && w->log_n);
            }
            w->log_t[w->n_log] = now;
            w->log_n[w->n_log] = n;
            w->n_log++;
        }
    }
    bool idle = is_up(w) && w->n_held == 0;
    if (idle && w->idle_since < 0)
        w->idle_since = now;
    else if (!idle && w->idle_since >= 0) {
        w->sum.idle_s += sim_to_s(now - w->idle_since);
        w->idle_since = -1;
    }
}

/* The assignment the leases converge to, judged from what the workers hold, not from the
 * table's owner fields (a worker named owner may have given the lease up, or be
 * stalled): every live lease held, unexpired on its holder's clock, by its owner in the
 * table, a started worker that is not paused; and the lease counts of those workers
 * within one of each other. The workers of every application sharing the table count. */
static bool held_balanced(const kcl *a, sim_time now)
{
    const kds_lease_table *t = a->table;
    bool *ok = calloc(t->n ? t->n : 1, sizeof *ok);
    SIM_ASSERT(ok != NULL);
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t k = 0; k < a->st->n_listeners; k++) {
        const kcl *o = a->st->listeners[k].ctx;
        if (a->st->listeners[k].fn != on_new_shard || o->table != t)
            continue;
        for (size_t j = 0; j < o->n_workers; j++) {
            const worker *w = &o->workers[j];
            if (!is_up(w) || paused(w, now))
                continue;
            uint32_t n = 0;
            for (size_t i = 0; i < w->n_held; i++) {
                const held *h = &w->held[i];
                const kds_lease *l = &t->items[h->lease];
                if (l->deleted || l->owner != w->owner || now - h->renewed > o->cfg.failover)
                    continue;
                ok[h->lease] = true;
                n++;
            }
            if (n < lo)
                lo = n;
            if (n > hi)
                hi = n;
        }
    }
    bool all = true;
    for (size_t i = 0; i < t->n && all; i++)
        all = t->items[i].deleted || ok[i];
    free(ok);
    /* Every lease held means some worker counted: lo <= hi. */
    return all && hi - lo <= 1;
}

void kds_kcl_check_converged(kcl *a, bool force)
{
    if (a->first_open >= a->n_changes)
        return;
    if (!force && a->table->version == a->checked_version)
        return;
    a->checked_version = a->table->version;
    sim_time now = sim_now(a->sim);
    /* An empty table (before the first shard sync) is not an assignment yet. */
    if (a->table->n_live == 0 || !held_balanced(a, now))
        return;
    for (size_t i = a->first_open; i < a->n_changes; i++)
        a->changes[i].converged_after = now - a->changes[i].at;
    a->first_open = a->n_changes;
}

static void add_change(kcl *a, worker *w, const char *what)
{
    if (a->n_changes == a->cap_changes) {
        a->cap_changes = a->cap_changes ? a->cap_changes * 2 : 16;
        a->changes = realloc(a->changes, a->cap_changes * sizeof *a->changes);
        SIM_ASSERT(a->changes != NULL);
    }
    a->changes[a->n_changes++] =
        (kds_kcl_change){sim_now(a->sim), w->cfg->name, what, (sim_time)-1};
}

/* ---- processors: lifetime ----------------------------------------------------------- */

static void proc_unref(proc *p);

static void proc_at(proc *p, sim_time t, sim_fn fn)
{
    p->refs++;
    sim_at(p->app->sim, t, fn, p);
}

static void proc_free(proc *p)
{
    kcl *a = p->app;
    if (p->prev)
        p->prev->next = p->next;
    else
        a->procs = p->next;
    if (p->next)
        p->next->prev = p->prev;
    free(p);
}

/* End a processor: no more reading or processing. Freed now, or by the last of its
 * scheduled events. */
static void proc_end(proc *p)
{
    if (p->state == P_ENDED)
        return;
    p->state = P_ENDED;
    kds_log *l = &p->sl->sh->log;
    if (p->attached) {
        if (!p->app->cfg.efo)
            kds_log_detach(l, &p->fcur);
        kds_log_detach(l, &p->pcur);
        p->attached = false;
    }
    if (p->sl->proc == p) {
        p->sl->proc = NULL;
        if (p->sl->sub)
            kds_efo_sub_pause(p->sl->sub);
    }
    if (p->refs == 0)
        proc_free(p);
}

static void proc_unref(proc *p)
{
    SIM_ASSERT(p->refs > 0);
    if (--p->refs == 0 && p->state == P_ENDED)
        proc_free(p);
}

/* The lease is gone from the worker: a processor in the middle of a batch finishes it
 * (processRecords cannot be interrupted), any other ends now. */
static void proc_release(proc *p)
{
    if (!p)
        return;
    if (p->busy && p->state == P_PROCESSING)
        p->lost = true;
    else
        proc_end(p);
}

/* ---- accounting ------------------------------------------------------------------- */

static void collect(void *ctx, const kds_slice *sl)
{
    kcl *a = ctx;
    if (a->n_scratch == a->cap_scratch) {
        a->cap_scratch = a->cap_scratch ? a->cap_scratch * 2 : 64;
        a->scratch = realloc(a->scratch, a->cap_scratch * sizeof *a->scratch);
        SIM_ASSERT(a->scratch != NULL);
    }
    a->scratch[a->n_scratch++] = *sl;
}

/* Records [from, to) of slot `sl` were trimmed before this processor reached them:
 * the part this application never processed expired unread. */
static void account_expired(kcl *a, slot *sl, uint64_t from, uint64_t to)
{
    uint64_t f = from > sl->hw ? from : sl->hw;
    if (to > f) {
        a->base.st.records_expired_unread += to - f;
        sl->hw = to;
        if (a->st->trace && !a->cfg.efo)
            sl->trace_expired += to - f; /* told by the next GetRecords line */
    }
}

/* A processor starts at position `pos` of slot `sl`. */
static void account_start(kcl *a, slot *sl, uint64_t pos)
{
    if (!sl->started) {
        sl->started = true;
        sl->hw = pos;
        a->base.st.records_skipped_at_start += pos;
        return;
    }
    if (pos <= sl->hw)
        return;
    uint64_t head = sl->sh->log.head_pos;
    if (sl->hw < head)
        account_expired(a, sl, sl->hw, head);
    /* Gaps trimmed away can no longer be processed: drop them, so that the list stays
     * bounded by what the shard retains. */
    size_t kept = 0;
    for (size_t g = 0; g < sl->n_gaps; g++)
        if (sl->gaps[g].hi > head)
            sl->gaps[kept++] = sl->gaps[g];
    sl->n_gaps = kept;
    if (pos > sl->hw) {
        /* Records never processed here are behind the start: a restart at LATEST, or a
         * checkpoint another application sharing the table wrote. Kept as a gap: a
         * processor still holding some of them (an old owner finishing its batch) may
         * yet process them, for the first time (deliver_below). */
        a->base.st.records_skipped_at_start += pos - sl->hw;
        a->skipped_gaps += pos - sl->hw;
        if (sl->n_gaps == sl->cap_gaps) {
            sl->cap_gaps = sl->cap_gaps ? 2 * sl->cap_gaps : 2;
            sl->gaps = realloc(sl->gaps, sl->cap_gaps * sizeof *sl->gaps);
            SIM_ASSERT(sl->gaps != NULL);
        }
        sl->gaps[sl->n_gaps].lo = sl->hw;
        sl->gaps[sl->n_gaps].hi = pos;
        sl->n_gaps++;
        sl->hw = pos;
    }
}

/* Records [lo, hi) of gap i of slot sl are processed after all: no longer skipped. */
static void unskip(kcl *a, slot *sl, size_t i, uint64_t lo, uint64_t hi)
{
    a->base.st.records_skipped_at_start -= hi - lo;
    a->skipped_gaps -= hi - lo;
    uint64_t glo = sl->gaps[i].lo, ghi = sl->gaps[i].hi;
    if (lo == glo && hi == ghi) {
        memmove(&sl->gaps[i], &sl->gaps[i + 1], (sl->n_gaps - i - 1) * sizeof *sl->gaps);
        sl->n_gaps--;
    } else if (lo == glo) {
        sl->gaps[i].lo = hi;
    } else if (hi == ghi) {
        sl->gaps[i].hi = lo;
    } else {
        if (sl->n_gaps == sl->cap_gaps) {
            sl->cap_gaps *= 2;
            sl->gaps = realloc(sl->gaps, sl->cap_gaps * sizeof *sl->gaps);
            SIM_ASSERT(sl->gaps != NULL);
        }
        memmove(&sl->gaps[i + 2], &sl->gaps[i + 1], (sl->n_gaps - i - 1) * sizeof *sl->gaps);
        sl->gaps[i].hi = lo;
        sl->gaps[i + 1].lo = hi;
        sl->gaps[i + 1].hi = ghi;
        sl->n_gaps++;
    }
}

/* The part of slice `s` of `n` records from its start, as a slice of its own. */
static kds_slice slice_part(const kds_slice *s, uint32_t off, uint32_t n)
{
    kds_slice r = *s;
    r.first = s->first + off;
    r.count = n;
    r.bytes = kds_prorate(s->bytes, n, s->count);
    r.dups = (uint32_t)kds_prorate(s->dups, n, s->count);
    r.marks = off == 0 ? (s->marks < n ? s->marks : n) : 0;
    sim_time span = s->t_last - s->t_first;
    if (s->count > 1) {
        r.t_first = s->t_first + (sim_time)kds_prorate((uint64_t)span, off, s->count - 1);
        r.t_last = s->t_first + (sim_time)kds_prorate((uint64_t)span, off + n - 1, s->count - 1);
    }
    return r;
}

/* Deliver slice s, all of it below sl's high-water mark, at `now`: a replay, but for
 * records in a skipped gap, processed here for the first time. Returns the replayed
 * records. */
static uint64_t deliver_below(kcl *a, slot *sl, const kds_slice *s, sim_time now)
{
    kds_consumer_stats *cs = &a->base.st;
    uint64_t pos = s->first, end = s->first + s->count, replayed = 0;
    while (pos < end) {
        size_t i = 0;
        while (i < sl->n_gaps && sl->gaps[i].hi <= pos)
            i++;
        bool in_gap = i < sl->n_gaps && sl->gaps[i].lo <= pos;
        uint64_t stop = end;
        if (in_gap && sl->gaps[i].hi < end)
            stop = sl->gaps[i].hi;
        else if (!in_gap && i < sl->n_gaps && sl->gaps[i].lo < end)
            stop = sl->gaps[i].lo;
        kds_slice part = stop - pos == s->count
                             ? *s
                             : slice_part(s, (uint32_t)(pos - s->first), (uint32_t)(stop - pos));
        kds_consumer_stats_deliver(cs, &part, now, in_gap ? 0 : 1);
        if (in_gap)
            unskip(a, sl, i, pos, stop);
        else
            replayed += stop - pos;
        pos = stop;
    }
    return replayed;
}

/* Process records up to `upto` at `now`: deliver them (first deliveries and replays)
 * and count them. */
static void deliver(proc *p, uint64_t upto, sim_time now)
{
    kcl *a = p->app;
    slot *sl = p->sl;
    kds_log *l = &sl->sh->log;
    kds_consumer_stats *cs = &a->base.st;
    kds_stream_trim(a->st, sl->sh);
    if (p->pcur.pos < l->head_pos) {
        account_expired(a, sl, p->pcur.pos, l->head_pos);
        kds_log_seek_head(l, &p->pcur);
    }
    if (upto <= p->pcur.pos)
        return;
    a->n_scratch = 0;
    kds_take tk;
    kds_log_take(l, &p->pcur, upto - p->pcur.pos, UINT64_MAX, collect, a, &tk);
    uint64_t replayed = 0;
    for (size_t i = 0; i < a->n_scratch; i++) {
        const kds_slice *s = &a->scratch[i];
        uint64_t end = s->first + s->count;
        if (end <= sl->hw) {
            if (sl->n_gaps == 0) {
                kds_consumer_stats_deliver(cs, s, now, 1);
                replayed += s->count;
            } else {
                replayed += deliver_below(a, sl, s, now);
            }
        } else if (s->first >= sl->hw) {
            kds_consumer_stats_deliver(cs, s, now, 0);
            sl->hw = end;
        } else {
            uint32_t r = (uint32_t)(sl->hw - s->first);
            kds_slice a1 = slice_part(s, 0, r), a2 = slice_part(s, r, s->count - r);
            if (sl->n_gaps == 0) {
                kds_consumer_stats_deliver(cs, &a1, now, 1);
                replayed += r;
            } else {
                replayed += deliver_below(a, sl, &a1, now);
            }
            kds_consumer_stats_deliver(cs, &a2, now, 0);
            sl->hw = end;
        }
    }
    p->w->sum.records_processed += tk.records;
    p->renew_bytes += tk.bytes;
    p->w->sum.records_reprocessed += replayed;
    p->since_ckpt += tk.records;
    if (replayed > 0) {
        a->dup_failover += replayed;
        /* Replays are the doing of the lease's latest move: the new owner going back to
         * the checkpoint, or the old one finishing what it had while the new one
         * already read it. */
        if (sl->last_move != SIZE_MAX)
            a->moves[sl->last_move].duplicates += replayed;
    }
}

/* ---- holding and dropping leases -------------------------------------------------- */

/* A trace line of kind "lease" from worker w about its lease h: `what`, printf-formatted.
 * The lease's shard is looked up only when tracing is on (KDS_TRACE tests that first). */
#define TRACE_HELD(w, h, ...)                                                                \
    KDS_TRACE((w)->app->st->trace, sim_now((w)->app->sim), "lease", (w)->label,              \
              (w)->app->table->items[(h)->lease].shard, __VA_ARGS__)

/* Remove held lease `h` of worker `w` (lost, self-expired, handed over, deleted): `why`
 * says which, in the trace. */
static void drop_held(worker *w, held *h, const char *why)
{
    TRACE_HELD(w, h, "lease %s", why);
    proc *p = h->p;
    size_t i = (size_t)(h - w->held);
    w->held_slot[h->lease] = -1;
    w->held[i] = w->held[--w->n_held];
    if (i < w->n_held)
        w->held_slot[w->held[i].lease] = (int32_t)i; /* the last entry moved here */
    proc_release(p);
    note_held(w);
    kds_kcl_check_converged(w->app, false);
}

typedef enum { CK_OK, CK_RETRY, CK_GONE } ck_result;

/* Write a checkpoint for processor p's lease. CK_GONE: the lease is not this worker's
 * any more (the processor has been told). */
static ck_result checkpoint(proc *p, kds_ckpt_kind kind, uint64_t pos)
{
    kcl *a = p->app;
    worker *w = p->w;
    sim_time now = sim_now(a->sim);
    held *h = held_find(w, p->lease);
    /* A stopped worker's processors may still finish their shutdown checkpoint. */
    if (!h || h->p != p || !(is_up(w) || (w->state == W_STOPPED && p->shutdown)))
        return CK_GONE;
    /* getCurrentlyHeldLease hides a lease expired on the worker's own clock: the
     * checkpointer refuses without writing (ShutdownException). */
    if (now - h->renewed > a->cfg.failover)
        return CK_RETRY;
    w->sum.checkpoints++;
    switch (kds_lease_checkpoint(a->table, p->lease, h->counter, kind, pos)) {
    case KDS_DDB_OK:
        /* A checkpoint increments the counter like a renewal, and the renewer counts it as
         * one (DynamoDBLeaseRenewer.updateLease: "Updates increment the counter"). */
        h->counter++;
        h->renewed = now;
        p->since_ckpt = 0;
        p->last_ckpt = now;
        if (kind == KDS_CKPT_SEQUENCE) {
            p->sl->ckpt.pos = pos;
        } else if (kind == KDS_CKPT_SHARD_END && p->sl->ckpt_on) {
            /* No owner reads the shard again. */
            kds_log_detach_floor(&p->sl->sh->log, &p->sl->ckpt);
            p->sl->ckpt_on = false;
        }
        return CK_OK;
    case KDS_DDB_THROTTLED:
        w->sum.checkpoints_throttled++;
        if (kind == KDS_CKPT_SHARD_END) {
            char dur[32];
            TRACE_HELD(w, h, "SHARD_END checkpoint throttled by the lease table; tried again "
                             "in %s (the task backoff)",
                       kds_trace_dur(dur, sizeof dur, a->cfg.task_backoff));
        } else {
            TRACE_HELD(w, h, "checkpoint throttled by the lease table; the %" PRIu64
                             " record%s processed since the last checkpoint wait for the "
                             "next checkpoint",
                       (uint64_t)p->since_ckpt, kds_trace_s(p->since_ckpt));
        }
        return CK_RETRY;
    case KDS_DDB_CONDITION_FAILED:
    default:
        w->sum.leases_lost++;
        drop_held(w, h, "lost: a checkpoint found another worker's leaseCounter");
        return CK_GONE;
    }
}

/* ---- processors: reading and processing --------------------------------------------- */

static void fetch_event(sim *s, void *ctx);
static void done_event(sim *s, void *ctx);
static void task_event(sim *s, void *ctx);
static void check_end(proc *p);

/* Start the next batch if the processor is free. */
static void kick(proc *p)
{
    if (p->busy || p->qn == 0 || p->state != P_PROCESSING || p->lost || p->shutdown)
        return;
    kcl *a = p->app;
    worker *w = p->w;
    const batch *b = &p->q[p->qh];
    sim_time now = sim_now(a->sim);
    sim_time start = b->arrival > now ? b->arrival : now;
    double ms = sim_dist_sample(&a->cfg.process_ms, w->rng) +
                a->cfg.process_ms_per_record * (double)b->count;
    sim_time done = start + sim_ms_to_ns(ms);
    if (w->cfg->capacity > 0) {
        /* The worker's processing capacity is one server shared by its leases. */
        sim_time cs = start > w->proc_free ? start : w->proc_free;
        sim_time cd = cs + (sim_time)llround((double)b->count / w->cfg->capacity * 1e9);
        w->proc_free = cd;
        w->m_busy += cd - cs; /* the 3.x cpu metric: booked when the batch starts */
        if (cd > done)
            done = cd;
    }
    p->busy = true;
    proc_at(p, done, done_event);
}

static void enqueue(proc *p, uint64_t upto, uint64_t bytes, uint32_t count, sim_time arrival)
{
    SIM_ASSERT(p->qn < QCAP);
    p->q[(p->qh + p->qn) % QCAP] = (batch){upto, bytes, count, arrival};
    p->qn++;
    p->q_records += count;
    p->q_bytes += bytes;
}

/* The prefetch queue is full: its batch, record or byte limit is reached (the KCL's
 * PrefetchRecordsPublisher waits for the processor). */
static bool queue_full(const proc *p)
{
    const kds_kcl_cfg *c = &p->app->cfg;
    return p->qn >= c->max_pending || p->q_records >= c->max_pending_records ||
           p->q_bytes >= c->max_pending_bytes;
}

static void handoff_end(worker *w, held *h, bool forced);

/* Finish a graceful shutdown (a worker's stop, or a 3.x handoff): checkpoint what was
 * processed, end; a handoff then lets the lease go to its new owner. */
static void shutdown_proc(proc *p)
{
    worker *w = p->w;
    /* The checkpoint may find another worker's leaseCounter (the lease was taken while
     * this worker's renewals were throttled): it then drops the lease, which ends the
     * processor and would free it here, under us. */
    p->refs++;
    if (p->app->cfg.ckpt_on_shutdown && p->since_ckpt > 0 && p->state == P_PROCESSING)
        checkpoint(p, KDS_CKPT_SEQUENCE, p->pcur.pos);
    held *h = held_find(w, p->lease);
    if (h && h->p == p)
        h->p = NULL;
    p->refs--; /* ours; freed below when nothing else holds it */
    if (p->state != P_ENDED)
        proc_end(p);
    else if (p->refs == 0)
        proc_free(p); /* the checkpoint's drop ended it */
    if (h && h->handoff && is_up(w))
        handoff_end(w, h, false);
}

static void done_body(proc *p)
{
    kcl *a = p->app;
    worker *w = p->w;
    sim_time now = sim_now(a->sim);
    if (paused(w, now)) {
        proc_at(p, w->pause_until, done_event);
        return;
    }
    SIM_ASSERT(p->busy && p->qn > 0);
    batch b = p->q[p->qh];
    p->qh = (p->qh + 1) % QCAP;
    p->qn--;
    p->q_records -= b.count;
    p->q_bytes -= b.bytes;
    p->busy = false;
    deliver(p, b.upto, now);
    if (p->lost) {
        proc_end(p);
        return;
    }
    if (p->shutdown) {
        shutdown_proc(p);
        return;
    }
    if (p->state != P_PROCESSING)
        return;
    const kds_kcl_cfg *c = &a->cfg;
    bool due = c->ckpt_batch || (c->ckpt_records > 0 && p->since_ckpt >= c->ckpt_records) ||
               (c->ckpt_interval > 0 && now - p->last_ckpt >= c->ckpt_interval);
    if (due && p->since_ckpt > 0 && checkpoint(p, KDS_CKPT_SEQUENCE, p->pcur.pos) == CK_GONE)
        return;
    if (p->state != P_PROCESSING)
        return;
    if (p->fetch_wait && !queue_full(p)) {
        p->fetch_wait = false;
        proc_at(p, now, fetch_event);
    }
    if (p->efo_bp && !queue_full(p)) {
        p->efo_bp = false;
        kds_efo_sub_resume(p->sl->sub);
    }
    kick(p);
    check_end(p);
}

static void done_event(sim *s, void *ctx)
{
    (void)s;
    proc *p = ctx;
    if (p->state != P_ENDED)
        done_body(p);
    proc_unref(p);
}

/* One GetRecords call (polling). */
static void fetch_body(proc *p)
{
    kcl *a = p->app;
    const kds_kcl_cfg *c = &a->cfg;
    worker *w = p->w;
    kds_shard *sh = p->sl->sh;
    kds_consumer_stats *cs = &a->base.st;
    sim_time now = sim_now(a->sim);
    if (p->state != P_PROCESSING || p->lost || p->shutdown)
        return;
    if (paused(w, now)) {
        proc_at(p, w->pause_until, fetch_event);
        return;
    }
    if (queue_full(p)) {
        p->fetch_wait = true;
        return;
    }
    sim_time lat = sim_dist_sample_ns(&c->call_latency_ms, w->rng);
    bool refreshed = p->last_call >= 0 && now - p->last_call > a->st->cfg.iterator_ttl;
    if (refreshed) {
        cs->iterator_refreshes++; /* ExpiredIteratorException: a new iterator first */
        lat += sim_dist_sample_ns(&c->call_latency_ms, w->rng);
    }
    p->last_call = now;
    cs->getrecords_calls++;
    if (!kds_stream_read_admit(a->st, sh)) {
        /* The KCL waits one idle interval after a throttled call (no backoff). */
        cs->read_throttled_calls++;
        if (KDS_TRACING(a->st->trace, "get", w->label, sh->index)) {
            char why[160], it[160];
            kds_trace_emit(a->st->trace, now, "get", w->label, sh->index,
                           "GetRecords: throttled (ReadProvisionedThroughputExceeded: %s), next "
                           "try in %.0f ms%s", kds_trace_read_limit(why, sizeof why, a->st, sh),
                           sim_to_ms(lat + c->idle),
                           kds_trace_refresh(it, sizeof it, refreshed, a->st->cfg.iterator_ttl));
        }
        proc_at(p, now + lat + c->idle, fetch_event);
        return;
    }
    kds_stream_trim(a->st, sh);
    kds_take tk;
    kds_log_take(&sh->log, &p->fcur, c->max_records, a->st->cfg.max_bytes_per_call, NULL, NULL,
                 &tk);
    kds_stream_read_charge(a->st, sh, tk.records, tk.bytes);
    cs->bytes_read_shared += tk.bytes;
    kds_stream_meter_over_7d(a->st, &sh->log, p->fcur.pos, &tk, &cs->bytes_read_over_7d);
    if (tk.records == 0)
        cs->empty_calls++;
    bool caught_up = p->fcur.pos >= sh->log.end_pos;
    double age = caught_up || tk.records == 0 ? 0.0 : sim_to_ms(now - tk.t_last);
    kds_consumer_stats_age(cs, now, age);
    if (KDS_TRACING(a->st->trace, "get", w->label, sh->index)) {
        /* The application counts a record lost when its processor finds it gone
         * (account_expired, by the high-water mark of what it ever processed: at its
         * start, or when it reaches a batch after a gap); the next GetRecords line tells
         * of them, as the records before the ones it returns. */
        uint64_t lost = p->sl->trace_expired;
        p->sl->trace_expired = 0;
        char ex[64], it[160], seq[KDS_SEQNOS_LEN]; /* records returned: up to the cursor */
        kds_trace_refresh(it, sizeof it, refreshed, a->st->cfg.iterator_ttl);
        if (tk.records > 0)
            kds_trace_emit(a->st->trace, now, "get", w->label, sh->index,
                           "GetRecords: %" PRIu64 " record%s, %" PRIu64 " B%s, iterator age %.0f "
                           "ms, to the record processor at +%.0f ms%s%s",
                           tk.records, kds_trace_s(tk.records), tk.bytes,
                           kds_trace_expired(ex, sizeof ex, lost), age, sim_to_ms(lat), it,
                           kds_trace_seqnos(seq, sizeof seq, sh->index, p->fcur.pos - tk.records,
                                            tk.records));
        else if (caught_up && sh->state != KDS_SHARD_OPEN)
            kds_trace_emit(a->st->trace, now, "get", w->label, sh->index,
                           "GetRecords: 0 records%s, SHARD_END%s",
                           kds_trace_expired(ex, sizeof ex, lost), it);
        else
            kds_trace_emit(a->st->trace, now, "get", w->label, sh->index,
                           "GetRecords: 0 records%s; next call in %.0f ms%s",
                           kds_trace_expired(ex, sizeof ex, lost), sim_to_ms(lat + c->idle), it);
    }
    if (tk.records > 0) {
        enqueue(p, p->fcur.pos, tk.bytes, (uint32_t)tk.records, now + lat);
        kick(p);
    }
    if (caught_up && sh->state != KDS_SHARD_OPEN) {
        p->fetch_end = true; /* nextShardIterator null: SHARD_END */
        check_end(p);
        return;
    }
    /* Sleep idleTimeBetweenReads after the call returned. */
    proc_at(p, now + lat + c->idle, fetch_event);
}

static void fetch_event(sim *s, void *ctx)
{
    (void)s;
    proc *p = ctx;
    if (p->state != P_ENDED)
        fetch_body(p);
    proc_unref(p);
}

/* Enhanced fan-out pushes for slot `owner`. */
static void efo_deliver(void *owner, kds_efo_sub *sub, const kds_slice *sl, size_t n, sim_time at)
{
    slot *s = owner;
    proc *p = s->proc;
    if (!p || n == 0 || p->state != P_PROCESSING || p->lost || p->shutdown)
        return;
    const kds_kcl_cfg *c = &p->app->cfg;
    uint64_t upto = sl[n - 1].first + sl[n - 1].count;
    uint32_t count = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        count += sl[i].count;
        bytes += sl[i].bytes;
    }
    /* Pushes that arrive while the processor is busy join the waiting batch (one
     * processRecords call per batch, as the KCL hands over what it buffered). */
    uint32_t started = p->busy ? 1 : 0;
    batch *t = p->qn > started ? &p->q[(p->qh + p->qn - 1) % QCAP] : NULL;
    if (t && (t->count + (uint64_t)count <= c->max_records || p->qn >= QCAP)) {
        t->upto = upto;
        t->count += count;
        t->bytes += bytes;
        if (at > t->arrival)
            t->arrival = at;
        p->q_records += count;
        p->q_bytes += bytes;
    } else {
        enqueue(p, upto, bytes, count, at);
    }
    if (queue_full(p) && !p->efo_bp) {
        p->efo_bp = true;
        kds_efo_sub_pause(sub);
    }
    kick(p);
}

/* Create the child leases of p's shard (absent ones) and checkpoint SHARD_END. */
static void shard_end_body(proc *p)
{
    kcl *a = p->app;
    const kds_stream *st = a->st;
    uint32_t me = p->sl->sh->index;
    sim_time now = sim_now(a->sim);
    const kds_shard *mine = st->shards[me];
    for (size_t k = 0; k < 2 && mine->children[k] >= 0; k++) {
        const kds_shard *ch = st->shards[mine->children[k]];
        if (kds_lease_find(a->table, ch->index) >= 0)
            continue;
        if (kds_lease_create(a->table, ch->index, ch->parent, ch->adjacent_parent,
                             KDS_CKPT_TRIM_HORIZON, 0, NULL) == KDS_DDB_THROTTLED) {
            if (KDS_TRACING(a->st->trace, "lease", p->w->label, ch->index)) {
                char dur[32];
                kds_trace_emit(a->st->trace, now, "lease", p->w->label, ch->index,
                               "creating this child's lease at its parent's SHARD_END (shard "
                               "%" PRIu32 ") throttled by the lease table; tried again in %s "
                               "(the task backoff)",
                               me, kds_trace_dur(dur, sizeof dur, a->cfg.task_backoff));
            }
            proc_at(p, now + a->cfg.task_backoff, task_event);
            return;
        }
    }
    switch (checkpoint(p, KDS_CKPT_SHARD_END, p->sl->sh->log.end_pos)) {
    case CK_OK:
        p->state = P_DONE;
        if (p->attached) {
            if (!a->cfg.efo)
                kds_log_detach(&p->sl->sh->log, &p->fcur);
            kds_log_detach(&p->sl->sh->log, &p->pcur);
            p->attached = false;
        }
        if (p->sl->proc == p) {
            p->sl->proc = NULL;
            if (p->sl->sub)
                kds_efo_sub_pause(p->sl->sub);
        }
        break;
    case CK_RETRY:
        proc_at(p, now + a->cfg.task_backoff, task_event);
        break;
    case CK_GONE:
        break;
    }
}

/* At the end of a closed shard with nothing left to process: SHARD_END. */
static void check_end(proc *p)
{
    if (p->state != P_PROCESSING || p->busy || p->qn > 0 || p->lost || p->shutdown)
        return;
    const kds_shard *sh = p->sl->sh;
    if (sh->state == KDS_SHARD_OPEN || p->pcur.pos < sh->log.end_pos)
        return;
    if (!p->app->cfg.efo && !p->fetch_end)
        return;
    p->state = P_SHARD_END;
    shard_end_body(p);
}

/* Position the processor at its lease's checkpoint and start reading. */
static void init_body(proc *p)
{
    kcl *a = p->app;
    sim_time now = sim_now(a->sim);
    if (kds_lease_get(a->table, p->lease) == KDS_DDB_THROTTLED) {
        uint32_t shard = a->table->items[p->lease].shard;
        if (KDS_TRACING(a->st->trace, "lease", p->w->label, shard)) {
            char dur[32];
            kds_trace_emit(a->st->trace, now, "lease", p->w->label, shard,
                           "initializing: the read of the lease's checkpoint throttled by the "
                           "lease table; tried again in %s (the task backoff)",
                           kds_trace_dur(dur, sizeof dur, a->cfg.task_backoff));
        }
        proc_at(p, now + a->cfg.task_backoff, task_event);
        return;
    }
    const kds_lease *l = &a->table->items[p->lease];
    if (l->ckpt == KDS_CKPT_SHARD_END) {
        /* A finished parent: make sure its children exist, then hold it. */
        p->state = P_SHARD_END;
        shard_end_body(p);
        return;
    }
    slot *sl = p->sl;
    kds_log *lg = &sl->sh->log;
    kds_stream_trim(a->st, sl->sh);
    switch (l->ckpt) {
    case KDS_CKPT_TRIM_HORIZON:
        kds_log_seek_head(lg, &p->pcur);
        break;
    case KDS_CKPT_LATEST:
        kds_log_seek_end(lg, &p->pcur);
        break;
    case KDS_CKPT_AT_TIMESTAMP:
        kds_log_seek_time(lg, &p->pcur, l->ckpt_time);
        break;
    default:
        kds_log_seek_pos(lg, &p->pcur, l->ckpt_pos);
        break;
    }
    if (!sl->started && (l->parents[0] >= 0 || l->parents[1] >= 0))
        kds_consumer_child_started(&a->base, a->st, sl->sh, now - sl->sh->created);
    account_start(a, sl, p->pcur.pos);
    /* Where a failover's next owner would start again: compaction keeps the records
     * after it with their own write times, so that a replay sees them as written. */
    sl->ckpt = p->pcur;
    if (!sl->ckpt_on) {
        SIM_ASSERT(kds_log_attach_floor(lg, &sl->ckpt) == 0);
        sl->ckpt_on = true;
    }
    p->fcur = p->pcur;
    if (!a->cfg.efo)
        SIM_ASSERT(kds_log_attach(lg, &p->fcur) == 0);
    SIM_ASSERT(kds_log_attach(lg, &p->pcur) == 0);
    p->attached = true;
    p->state = P_PROCESSING;
    p->last_ckpt = now;
    p->since_ckpt = 0;
    if (a->cfg.efo) {
        if (sl->proc && sl->proc != p) {
            /* The previous processor of this application (another worker) stops
             * receiving pushes: one subscription per application and shard. */
            sl->proc = NULL;
        }
        sl->proc = p;
        if (!sl->sub) {
            sl->sub = calloc(1, sizeof *sl->sub);
            SIM_ASSERT(sl->sub != NULL);
            SIM_ASSERT(kds_efo_sub_start(sl->sub, a->sim, a->st, sl->sh, &a->cfg.efo_cfg, a->rng,
                                         &a->efo_cs, KDS_START_AT_SEQUENCE_NUMBER, 0, p->pcur.pos,
                                         a->base.name, sl, efo_deliver) == 0);
            sl->sub->bill = &a->base.st; /* the pushes' ages stay in efo_cs */
        } else {
            /* A new shard consumer (a lease's new owner, or its owner after a restart)
             * subscribes again from the lease's checkpoint. */
            kds_efo_sub_resubscribe(sl->sub, p->pcur.pos, "a lease's new owner");
        }
        check_end(p);
    } else {
        proc_at(p, now, fetch_event);
    }
}

/* Wait until every parent lease reached SHARD_END (or was deleted). */
static void parents_body(proc *p)
{
    kcl *a = p->app;
    const kds_lease *l = &a->table->items[p->lease];
    bool blocked = false;
    for (int i = 0; i < 2; i++) {
        if (l->parents[i] < 0)
            continue;
        int32_t pi = kds_lease_find(a->table, (uint32_t)l->parents[i]);
        if (pi < 0)
            continue;
        /* BlockOnParentShardTask reads it; a read that fails (throttled) counts as
         * blocked: the task sleeps parentShardPollIntervalMillis either way. */
        if (kds_lease_get(a->table, (size_t)pi) == KDS_DDB_THROTTLED) {
            uint32_t me = a->table->items[p->lease].shard;
            if (KDS_TRACING(a->st->trace, "lease", p->w->label, me)) {
                char dur[32];
                kds_trace_emit(a->st->trace, sim_now(a->sim), "lease", p->w->label, me,
                               "waiting for parents: the read of parent shard %" PRIu32
                               "'s lease throttled by the lease table; read again in %s",
                               a->table->items[pi].shard,
                               kds_trace_dur(dur, sizeof dur, a->cfg.parent_poll));
            }
            blocked = true;
        } else if (a->table->items[pi].ckpt != KDS_CKPT_SHARD_END) {
            blocked = true;
        }
    }
    if (blocked) {
        proc_at(p, sim_now(a->sim) + a->cfg.parent_poll, task_event);
        return;
    }
    p->state = P_INIT;
    init_body(p);
}

/* The processor's tasks (parent wait, initialisation, shard end), retried by events. */
static void task_event(sim *s, void *ctx)
{
    proc *p = ctx;
    if (p->state != P_ENDED && !p->lost && !p->shutdown) {
        worker *w = p->w;
        if (paused(w, sim_now(s))) {
            proc_at(p, w->pause_until, task_event);
        } else if (p->state == P_WAIT_PARENTS) {
            parents_body(p);
        } else if (p->state == P_INIT) {
            init_body(p);
        } else if (p->state == P_SHARD_END) {
            shard_end_body(p);
        }
    }
    proc_unref(p);
}

static proc *proc_new(worker *w, uint32_t lease)
{
    kcl *a = w->app;
    proc *p = calloc(1, sizeof *p);
    SIM_ASSERT(p != NULL);
    p->app = a;
    p->w = w;
    p->lease = lease;
    p->sl = slot_of(a, a->table->items[lease].shard);
    p->state = P_WAIT_PARENTS;
    p->last_call = -1;
    p->handoff_owner = -1;
    p->next = a->procs;
    if (a->procs)
        a->procs->prev = p;
    a->procs = p;
    return p;
}

/* ---- the worker's lease coordinator ------------------------------------------------- */

/* The lease ownership invariant (kds_invariant.h) for lease item i of a's table, over
 * the workers of every application sharing the table: a worker that holds the lease at
 * the table's current counter must be its owner, or its checkpoint owner handing it
 * over (KCL 3.x), and one worker at most may. A worker holding an older counter is one
 * whose next renewal will fail (a stalled worker whose lease was taken): the KCL lets
 * it finish what it fetched, and that is counted as duplicates, not as a violation.
 * The conditional writes guarantee the invariant; a violation is a bug in the model.
 * Returns 0, or SIM_ESTATE with the invariant named in msg (n bytes). */
static int check_lease(const kcl *a, uint32_t i, char *msg, size_t n)
{
    const kds_lease_table *t = a->table;
    const kds_lease *l = &t->items[i];
    if (l->deleted)
        return 0;
    const worker *holder = NULL;
    /* Every application on this table, found as at creation: through the stream's
     * shard listeners, which every KCL application registers. */
    for (size_t k = 0; k < a->st->n_listeners; k++) {
        const kcl *o = a->st->listeners[k].ctx;
        if (a->st->listeners[k].fn != on_new_shard || o->table != t)
            continue;
        for (size_t j = 0; j < o->n_workers; j++) {
            worker *w = &o->workers[j];
            const held *h = is_up(w) ? held_find(w, i) : NULL;
            if (!h || h->counter != l->counter)
                continue;
            char id[32];
            kds_shard_id(id, sizeof id, l->shard);
            if (w->owner != l->owner && w->owner != l->ckpt_owner) {
                snprintf(msg, n,
                         "invariant 'lease ownership' violated: lease %s of application %s "
                         "is held at its counter %" PRIu64 " by worker %s of %s, which is "
                         "neither its owner (%s) nor handing it over",
                         id, t->name, l->counter, w->cfg->name, o->base.name,
                         l->owner >= 0 ? t->owners[l->owner].worker : "none");
                return SIM_ESTATE;
            }
            if (holder) {
                snprintf(msg, n,
                         "invariant 'lease ownership' violated: lease %s of application %s "
                         "is held at its counter %" PRIu64 " by two workers, %s and %s",
                         id, t->name, l->counter, holder->cfg->name, w->cfg->name);
                return SIM_ESTATE;
            }
            holder = w;
        }
    }
    return 0;
}

/* The invariant at a lease worker w has just acquired: a violation stops the run, and
 * the end-of-run check (check()) reports it. */
static void lease_acquired_check(worker *w, uint32_t i)
{
    kcl *a = w->app;
    if (a->violation[0] == '\0' &&
        check_lease(a, i, a->violation, sizeof a->violation) != 0)
        sim_stop(a->sim);
}

/* The taker's lease line: how the lease came (the move's cause in words: the JSON keeps
 * kds_kcl_cause_name), from which previous owner (CONSUMER/WORKER, and "before its
 * restart" when that worker has started again since), and the replay to expect. */
static __attribute__((noinline)) void trace_acquired(const worker *w, uint32_t shard,
                                                     int32_t prev, kds_kcl_cause cause,
                                                     uint64_t replay, uint64_t from_pos,
                                                     uint64_t hw, sim_time now)
{
    kcl *a = w->app;
    const kds_lease_table *t = a->table;
    static const char *const how[] = {
        [KDS_KCL_TAKE] = "taken (it was free)",
        [KDS_KCL_STEAL] = "stolen (to balance the workers' lease counts)",
        [KDS_KCL_EXPIRY] = "taken (its owner stopped renewing it)",
        [KDS_KCL_SHUTDOWN] = "taken (its owner shut down and the lease expired)",
        [KDS_KCL_BALANCE] = "moved by the leader (to balance the workers' load)"};
    char from[256] = ""; /* the previous owner, named as the trace names workers */
    if (prev >= 0) {
        const kds_lease_owner *o = &t->owners[prev];
        bool restarted = false;
        for (size_t k = 0; k < a->n_workers && !strcmp(o->app, a->base.name); k++)
            if (!strcmp(a->workers[k].cfg->name, o->worker))
                restarted = a->workers[k].incarnations > o->incarnation;
        snprintf(from, sizeof from, " from %s/%s%s", o->app, o->worker,
                 restarted ? " (before its restart)" : "");
    }
    /* What of the replay is still retained: the records written after now - retention
     * (the shard trims those at or before it when next read). The rest has expired and
     * will not come again; replay_expected in the JSON counts it all, by definition. */
    uint64_t again = replay;
    if (replay > 0 && now > a->st->cfg.retention) {
        kds_cursor e = {0, 0};
        kds_log_seek_time(&a->st->shards[shard]->log, &e, now - a->st->cfg.retention + 1);
        uint64_t first = from_pos > e.pos ? from_pos : e.pos;
        again = hw > first ? hw - first : 0;
    }
    const char *came = (unsigned)cause < KDS_KCL_N_CAUSES ? how[cause] : "taken";
    if (again == replay)
        kds_trace_emit(a->st->trace, now, "lease", w->label, shard,
                       "lease %s%s; %" PRIu64 " record%s processed after its last checkpoint "
                       "will be delivered again",
                       came, from, replay, kds_trace_s(replay));
    else if (again == 0)
        kds_trace_emit(a->st->trace, now, "lease", w->label, shard,
                       "lease %s%s; of the %" PRIu64 " record%s processed after its last "
                       "checkpoint, none will be delivered again: %s expired",
                       came, from, replay, kds_trace_s(replay),
                       replay == 1 ? "it has" : "they have");
    else
        kds_trace_emit(a->st->trace, now, "lease", w->label, shard,
                       "lease %s%s; of the %" PRIu64 " records processed after its last "
                       "checkpoint, %" PRIu64 " will be delivered again (the other %" PRIu64
                       " have expired)",
                       came, from, replay, again, replay - again);
}

void kds_kcl_acquired(worker *w, uint32_t i, int32_t prev, bool prev_renewing,
                      kds_kcl_cause cause)
{
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    sim_time now = sim_now(a->sim);
    held *h = held_find(w, i);
    if (h) {
        /* Re-taken while still held (its renewals had been failing): same processor. */
        h->counter = t->items[i].counter;
        h->renewed = now;
        lease_acquired_check(w, i);
        return;
    }
    w->sum.leases_taken++;
    if (cause == KDS_KCL_STEAL)
        w->sum.leases_stolen++;
    const kds_lease *l = &t->items[i];
    slot *sl = slot_of(a, l->shard);
    uint64_t replay = 0;
    kds_cursor c = {0, 0};
    if (sl->started) {
        const kds_log *lg = &sl->sh->log;
        bool have = true;
        switch (l->ckpt) {
        case KDS_CKPT_SEQUENCE:
            c.pos = l->ckpt_pos;
            break;
        case KDS_CKPT_TRIM_HORIZON:
            c.pos = lg->head_pos;
            break;
        case KDS_CKPT_AT_TIMESTAMP:
            kds_log_seek_time(lg, &c, l->ckpt_time);
            break;
        default:
            have = false;
            break;
        }
        if (have && sl->hw > c.pos)
            replay = sl->hw - c.pos;
    }
    if (a->n_moves == a->cap_moves) {
        a->cap_moves = a->cap_moves ? a->cap_moves * 2 : 64;
        a->moves = realloc(a->moves, a->cap_moves * sizeof *a->moves);
        SIM_ASSERT(a->moves != NULL);
    }
    kds_kcl_move *m = &a->moves[a->n_moves];
    memset(m, 0, sizeof *m);
    m->at = now;
    m->shard = l->shard;
    m->cause = cause;
    m->from = prev >= 0 ? t->owners[prev].worker : NULL;
    m->from_app = prev >= 0 ? t->owners[prev].app : NULL;
    m->to = w->cfg->name;
    m->from_healthy = prev >= 0 && prev_renewing;
    m->replay_expected = replay;
    a->replay_expected += replay;
    size_t mi = a->n_moves++;
    sl->last_move = mi;
    if (KDS_TRACING(a->st->trace, "lease", w->label, l->shard))
        trace_acquired(w, l->shard, prev, cause, replay, c.pos, sl->hw, now);

    if (w->n_held == w->cap_held) {
        w->cap_held = w->cap_held ? w->cap_held * 2 : 8;
        w->held = realloc(w->held, w->cap_held * sizeof *w->held);
        SIM_ASSERT(w->held != NULL);
    }
    if (i >= w->n_held_slot) {
        size_t cap = w->n_held_slot ? w->n_held_slot : 16;
        while (cap <= i)
            cap *= 2;
        w->held_slot = realloc(w->held_slot, cap * sizeof *w->held_slot);
        SIM_ASSERT(w->held_slot != NULL);
        for (size_t k = w->n_held_slot; k < cap; k++)
            w->held_slot[k] = -1;
        w->n_held_slot = cap;
    }
    SIM_ASSERT(w->held_slot[i] < 0 && w->n_held < INT32_MAX);
    proc *p = proc_new(w, i);
    w->held_slot[i] = (int32_t)w->n_held;
    w->held[w->n_held++] = (held){i, l->counter, now, p, false, -1.0, now};
    note_held(w);
    lease_acquired_check(w, i);
    parents_body(p);
}

/* The taker's map covers items first_live to n - 1 of the table: it moves up when the
 * table's first live item has moved past half of it (the items below are deleted, and
 * nothing reads a deleted item's stamps), and grows to n. */
static void ensure_seen(worker *w, size_t first_live, size_t n)
{
    size_t shift = first_live - w->seen_base;
    if (shift > 0 && shift >= w->n_seen / 2) {
        size_t keep = shift < w->n_seen ? w->n_seen - shift : 0;
        if (keep > 0) {
            memmove(w->seen_counter, w->seen_counter + shift, keep * sizeof *w->seen_counter);
            memmove(w->seen_at, w->seen_at + shift, keep * sizeof *w->seen_at);
        }
        for (size_t i = keep; i < w->n_seen; i++) {
            w->seen_counter[i] = 0;
            w->seen_at[i] = UNSEEN;
        }
        w->seen_base = first_live;
    }
    n -= w->seen_base;
    if (n <= w->n_seen)
        return;
    size_t m = w->n_seen ? w->n_seen : 16;
    while (m < n)
        m *= 2;
    w->seen_counter = realloc(w->seen_counter, m * sizeof *w->seen_counter);
    w->seen_at = realloc(w->seen_at, m * sizeof *w->seen_at);
    SIM_ASSERT(w->seen_counter && w->seen_at);
    for (size_t i = w->n_seen; i < m; i++) {
        w->seen_counter[i] = 0;
        w->seen_at[i] = UNSEEN;
    }
    w->n_seen = m;
}

void kds_kcl_stamp_scan(worker *w, sim_time now)
{
    const kds_lease_table *t = w->app->table;
    ensure_seen(w, t->first_live, t->n);
    /* Not the deleted items before first_live: nothing reads a deleted item's stamps. */
    for (size_t i = t->first_live; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        sim_time *at = kds_kcl_seen_at(w, i);
        uint64_t *counter = kds_kcl_seen_counter(w, i);
        if (l->deleted) {
            *at = UNSEEN;
        } else if (*at == UNSEEN) {
            *counter = l->counter;
            *at = l->owner >= 0 ? now : NEVER;
        } else if (*counter != l->counter) {
            *counter = l->counter;
            *at = now;
        }
    }
}

bool kds_kcl_expired(const worker *w, size_t i, sim_time now)
{
    return now - *kds_kcl_seen_at(w, i) > w->app->cfg.failover;
}

static void take_event(sim *s, void *ctx);
static void renew_event(sim *s, void *ctx);

/* The lease line of a take (or steal) of lease `i` that the lease table throttled
 * `throttled` times of `max_tries`, and what came of it (`r`: the last try's answer). */
static __attribute__((noinline)) void trace_take_throttled(const worker *w, uint32_t i,
                                                           bool steal, uint32_t throttled,
                                                           uint32_t max_tries,
                                                           kds_ddb_status r)
{
    kcl *a = w->app;
    kds_trace_emit(a->st->trace, sim_now(a->sim), "lease", w->label, a->table->items[i].shard,
                   "lease %s throttled by the lease table %" PRIu32 " time%s (%" PRIu32
                   " tr%s allowed); %s",
                   steal ? "steal" : "take", throttled, kds_trace_s(throttled), max_tries,
                   max_tries == 1 ? "y" : "ies",
                   r == KDS_DDB_OK          ? "the next try took it"
                   : r == KDS_DDB_THROTTLED ? "not taken in this pass"
                                            : "the next try found another worker's leaseCounter");
}

/* One pass of DynamoDBLeaseTaker (kcl.md section 1.1). */
static void take_pass(worker *w)
{
    kcl *a = w->app;
    const kds_kcl_cfg *c = &a->cfg;
    kds_lease_table *t = a->table;
    sim_time now = sim_now(a->sim);
    w->sum.scans++;
    if (kds_lease_scan(t) != KDS_DDB_OK) {
        w->sum.scans_throttled++; /* SCAN_RETRIES = 1: the pass takes nothing */
        if (KDS_TRACING(a->st->trace, "lease", w->label, -1)) {
            char dur[32];
            kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                           "lease taker: its Scan of the lease table throttled; this pass "
                           "takes nothing (the next in %s)",
                           kds_trace_dur(dur, sizeof dur, a->take_period));
        }
        return;
    }
    kds_kcl_stamp_scan(w, now);

    /* Available leases, very old leases, and the lease count of every owner of an
     * unexpired lease. */
    uint32_t *count = calloc(t->n_owners ? t->n_owners : 1, sizeof *count);
    uint32_t *avail = malloc((t->n ? t->n : 1) * sizeof *avail);
    uint32_t *old = malloc((t->n ? t->n : 1) * sizeof *old);
    SIM_ASSERT(count && avail && old);
    size_t n_avail = 0, n_old = 0;
    sim_time very_old = now - (sim_time)c->very_old_factor * c->failover;
    for (size_t i = t->first_live; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (l->deleted)
            continue;
        if (l->owner < 0 || kds_kcl_expired(w, i, now))
            avail[n_avail++] = (uint32_t)i;
        else
            count[l->owner]++;
        if (c->priority_leases && *kds_kcl_seen_at(w, i) < very_old)
            old[n_old++] = (uint32_t)i;
    }
    size_t workers = 0;
    for (size_t o = 0; o < t->n_owners; o++)
        if (count[o] > 0 || (int32_t)o == w->owner)
            workers++;
    size_t leases = t->n_live;
    int64_t target = workers >= leases ? 1 : (int64_t)((leases + workers - 1) / workers);
    if (c->max_leases_per_worker > 0 && target > c->max_leases_per_worker)
        target = c->max_leases_per_worker;
    int64_t mine = count[w->owner];
    int64_t needed = target - mine;

    uint32_t *chosen = NULL;
    size_t n_chosen = 0;
    bool steal = false;
    if (n_old > 0) {
        /* New leases and leases unchanged for 3 x failover first, all of them,
         * ignoring the target. */
        shuffle(w->rng, old, n_old);
        size_t k = n_old;
        if (c->max_leases_per_worker > 0) {
            int64_t room = (int64_t)c->max_leases_per_worker - mine;
            k = room <= 0 ? 0 : (size_t)room < k ? (size_t)room : k;
        }
        chosen = old;
        n_chosen = k;
    } else if (needed > 0 && n_avail > 0) {
        shuffle(w->rng, avail, n_avail);
        chosen = avail;
        n_chosen = (size_t)needed < n_avail ? (size_t)needed : n_avail;
    } else if (needed > 0) {
        /* Nothing available: steal from the single most loaded worker. */
        uint32_t most = 0;
        size_t ties = 0;
        int32_t victim = -1;
        for (size_t o = 0; o < t->n_owners; o++) {
            if (count[o] > most) {
                most = count[o];
                ties = 1;
                victim = (int32_t)o;
            } else if (count[o] == most && most > 0) {
                /* Ties: one of them at random (the KCL's HashMap order is arbitrary). */
                ties++;
                if (gsl_rng_uniform_int(w->rng, ties) == 0)
                    victim = (int32_t)o;
            }
        }
        if (victim >= 0 && victim != w->owner && (int64_t)most >= target) {
            int64_t n = needed < (int64_t)most - target ? needed : (int64_t)most - target;
            if (needed > 1 && n == 0)
                n = 1;
            if (n > (int64_t)c->max_steal)
                n = c->max_steal;
            size_t nv = 0;
            for (size_t i = t->first_live; i < t->n; i++) {
                const kds_lease *l = &t->items[i];
                if (!l->deleted && l->owner == victim && !kds_kcl_expired(w, i, now))
                    old[nv++] = (uint32_t)i;
            }
            shuffle(w->rng, old, nv);
            chosen = old;
            n_chosen = n < 0 ? 0 : (size_t)n < nv ? (size_t)n : nv;
            steal = true;
        }
    }
    for (size_t k = 0; k < n_chosen && is_up(w); k++) {
        uint32_t i = chosen[k];
        int32_t prev = t->items[i].owner;
        kds_owner_state pst = prev >= 0 ? t->owners[prev].state : KDS_OWNER_RUNNING;
        bool renewing = kds_lease_renewing(t, i, prev);
        kds_ddb_status r = KDS_DDB_THROTTLED;
        uint32_t max_tries = c->take_retries ? c->take_retries : 1, tries = 0;
        while (tries < max_tries) {
            tries++;
            r = kds_lease_take(t, i, *kds_kcl_seen_counter(w, i), w->owner);
            if (r != KDS_DDB_THROTTLED)
                break;
        }
        if ((tries > 1 || r == KDS_DDB_THROTTLED) &&
            KDS_TRACING(a->st->trace, "lease", w->label, t->items[i].shard))
            trace_take_throttled(w, i, steal, r == KDS_DDB_THROTTLED ? tries : tries - 1,
                                 max_tries, r);
        if (r != KDS_DDB_OK)
            continue; /* throttled three times, or another worker was faster */
        kds_kcl_cause cause = steal         ? KDS_KCL_STEAL
                              : prev < 0    ? KDS_KCL_TAKE
                              : pst == KDS_OWNER_STOPPED ? KDS_KCL_SHUTDOWN
                                                         : KDS_KCL_EXPIRY;
        kds_kcl_acquired(w, i, prev, renewing, cause);
    }
    free(count);
    free(avail);
    free(old);
    kds_kcl_check_converged(a, false);
}

static void take_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_take, take_event, now))
        return;
    take_pass(w);
    /* scheduleWithFixedDelay: the next pass one period after this one ended (DynamoDB
     * calls take no simulated time). */
    if (w->state == W_RUNNING)
        w->ev_take = sim_at(s, now + w->app->take_period, take_event, w);
}

/* ---- KCL 3.x graceful handoff, the old owner's side (kcl.md 7.5) -------------------- */

/* The old owner lets lease h go: it clears checkpointOwner (counter + 1), which frees
 * the new owner's discovery, and drops it. A throttled write keeps it held for the
 * timeout to try again; a refused one means the lease is not ours any more anyway. */
static void handoff_end(worker *w, held *h, bool forced)
{
    switch (kds_lease_transfer(w->app->table, h->lease, h->counter, w->owner)) {
    case KDS_DDB_THROTTLED:
        TRACE_HELD(w, h, "lease release at the end of its handoff throttled by the lease "
                         "table; the worker keeps it until a later try");
        return;
    case KDS_DDB_OK:
        w->sum.handoffs_out++;
        if (forced)
            w->sum.handoffs_timed_out++;
        break;
    case KDS_DDB_CONDITION_FAILED:
        /* Another worker's write (the leader assigned the lease as expired while this
         * worker was paused) came first: lost, as a refused renewal or checkpoint. */
        w->sum.leases_lost++;
        drop_held(w, h, "dropped during its handoff: another worker's leaseCounter");
        return;
    }
    drop_held(w, h, forced ? "handed over (the graceful handoff timed out)" : "handed over");
}

/* The handoff handler's check (every handoff_poll): ask the processor to shut down; it
 * finishes its batch, checkpoints and lets the lease go (shutdown_proc). */
static void handoff_event(sim *s, void *ctx)
{
    proc *p = ctx;
    worker *w = p->w;
    if (p->state != P_ENDED && !p->lost && !p->shutdown && w->owner == p->handoff_owner) {
        if (paused(w, sim_now(s)))
            proc_at(p, w->pause_until, handoff_event);
        else if (p->state == P_PROCESSING && p->busy)
            p->shutdown = true;
        else
            shutdown_proc(p);
    }
    proc_unref(p);
}

/* The handoff timeout: the old owner hands the lease over even if its processor has
 * not finished (a batch still in progress is finished and delivered twice). */
static void handoff_timeout_event(sim *s, void *ctx)
{
    proc *p = ctx;
    worker *w = p->w;
    held *h = held_find(w, p->lease);
    if (is_up(w) && w->owner == p->handoff_owner && h && h->handoff) {
        sim_time now = sim_now(s);
        if (paused(w, now)) {
            proc_at(p, w->pause_until, handoff_timeout_event);
        } else {
            proc_release(h->p);
            h->p = NULL;
            handoff_end(w, h, true);
            if ((h = held_find(w, p->lease)) != NULL && h->handoff) /* throttled */
                proc_at(p, now + w->app->cfg.lam.handoff_poll, handoff_timeout_event);
        }
    }
    proc_unref(p);
}

/* A renewal refused because the leader started a handoff (kcl.md 7.5 step 2): the
 * renewer re-reads the lease, sees itself as its checkpointOwner, renews it as such and
 * has its processor shut down at the handler's next check. False if the lease was
 * simply lost. A re-read the lease table throttles fails the renewal without losing
 * the lease: the next renewal, refused again, reads it again (true). */
static bool handoff_noticed(worker *w, held *h, sim_time now)
{
    kcl *a = w->app;
    const kds_lease *l = &a->table->items[h->lease];
    if (h->handoff || l->deleted || l->ckpt_owner != w->owner || l->counter != h->counter)
        return false;
    if (kds_lease_get(a->table, h->lease) == KDS_DDB_THROTTLED) {
        TRACE_HELD(w, h, "lease renewal refused (a handoff began); the re-read of the lease "
                         "throttled by the lease table: the next renewal tries again");
        return true;
    }
    h->handoff = true;
    w->sum.renewals++;
    kds_ddb_status r = kds_lease_renew(a->table, h->lease, h->counter, w->owner);
    if (r == KDS_DDB_OK) {
        h->counter++;
        h->renewed = now;
    } else if (r == KDS_DDB_THROTTLED) {
        TRACE_HELD(w, h, "lease handoff noticed; its renewal as checkpointOwner throttled by "
                         "the lease table");
    }
    proc *p = h->p;
    if (!p) {
        handoff_end(w, h, false); /* no processor to wait for */
        return true;
    }
    const kds_kcl_lam_cfg *c = &a->cfg.lam;
    p->handoff_owner = w->owner;
    /* The handler runs on its own grid from the worker's start. */
    sim_time k = (now - w->started + c->handoff_poll - 1) / c->handoff_poll;
    proc_at(p, w->started + k * c->handoff_poll, handoff_event);
    proc_at(p, now + c->handoff_timeout, handoff_timeout_event);
    return true;
}

/* The lease's throughput, written with each 3.x renewal (LeaseStatsRecorder): the bytes
 * processed since the previous renewal over that interval, as an EMA. */
static void note_throughput(worker *w, held *h, sim_time now)
{
    if (now <= h->tp_at)
        return;
    double alpha = w->app->cfg.lam.metrics_alpha;
    uint64_t bytes = 0;
    if (h->p) {
        bytes = h->p->renew_bytes;
        h->p->renew_bytes = 0;
    }
    double rate = (double)bytes / sim_to_s(now - h->tp_at);
    h->tp = h->tp < 0 ? rate : alpha * rate + (1.0 - alpha) * h->tp;
    h->tp_at = now;
    w->app->table->items[h->lease].throughput = h->tp;
}

/* One pass of DynamoDBLeaseRenewer (kcl.md section 2). */
static void renew_pass(worker *w)
{
    kcl *a = w->app;
    sim_time now = sim_now(a->sim);
    size_t n = w->n_held;
    uint32_t *order = order_buf(a, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        order[i] = w->held[i].lease;
    /* The renewals run in parallel threads: no lease always goes first. */
    shuffle(w->rng, order, n);
    for (size_t k = 0; k < n; k++) {
        held *h = held_find(w, order[k]);
        if (!h)
            continue;
        if (now - h->renewed > a->cfg.failover) {
            /* Expired on my own clock: given up without trying. */
            w->sum.leases_self_expired++;
            drop_held(w, h, "given up: not renewed for failoverTimeMillis on this worker's "
                            "clock");
            continue;
        }
        w->sum.renewals++;
        switch (kds_lease_renew(a->table, h->lease, h->counter, h->handoff ? w->owner : -1)) {
        case KDS_DDB_OK:
            h->counter++;
            h->renewed = now;
            if (a->cfg.assignment != KDS_KCL_TAKER)
                note_throughput(w, h, now);
            break;
        case KDS_DDB_THROTTLED:
            w->sum.renewals_throttled++; /* not retried in this pass */
            TRACE_HELD(w, h, "lease renewal throttled by the lease table; not retried in "
                             "this pass");
            break;
        case KDS_DDB_CONDITION_FAILED:
            if (handoff_noticed(w, h, now))
                break;
            w->sum.leases_lost++;
            drop_held(w, h, "lost: a renewal found another worker's leaseCounter");
            break;
        }
    }
    kds_kcl_check_converged(a, false);
}

static void renew_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_renew, renew_event, now))
        return;
    renew_pass(w);
    /* scheduleAtFixedRate: on the original grid; runs missed during a stall are not
     * repeated. */
    sim_time period = w->app->renew_period;
    do
        w->renew_next += period;
    while (w->renew_next <= now);
    if (w->state == W_RUNNING)
        w->ev_renew = sim_at(s, w->renew_next, renew_event, w);
}

/* Lease cleanup: delete held SHARD_END leases whose parents are gone and whose
 * children have all checkpointed (kcl.md section 4.5). */
static void cleanup_event(sim *s, void *ctx)
{
    worker *w = ctx;
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_cleanup, cleanup_event, now))
        return;
    for (size_t k = 0; k < w->n_held;) {
        held *h = &w->held[k];
        const kds_lease *l = &t->items[h->lease];
        bool ok = l->ckpt == KDS_CKPT_SHARD_END && !l->deleted;
        for (int i = 0; i < 2 && ok; i++)
            if (l->parents[i] >= 0 && kds_lease_find(t, (uint32_t)l->parents[i]) >= 0)
                ok = false;
        const kds_shard *mine = a->st->shards[l->shard];
        for (size_t j = 0; j < 2 && mine->children[j] >= 0 && ok; j++) {
            const kds_shard *ch = a->st->shards[mine->children[j]];
            int32_t ci = kds_lease_find(t, ch->index);
            if (ci < 0 || t->items[ci].ckpt == KDS_CKPT_TRIM_HORIZON ||
                t->items[ci].ckpt == KDS_CKPT_AT_TIMESTAMP)
                ok = false;
        }
        kds_ddb_status r = ok ? kds_lease_delete(t, h->lease) : KDS_DDB_OK;
        if (ok && r == KDS_DDB_OK) {
            /* drop_held moves the last entry here: look at k again. */
            drop_held(w, h, "deleted: its shard is at SHARD_END and every child has "
                            "checkpointed");
            continue;
        }
        if (ok && r == KDS_DDB_THROTTLED) {
            char dur[32];
            TRACE_HELD(w, h, "lease delete (its shard at SHARD_END, every child checkpointed) "
                             "throttled by the lease table; tried again at the next cleanup, "
                             "in %s",
                       kds_trace_dur(dur, sizeof dur, a->cfg.cleanup_interval));
        }
        k++;
    }
    w->ev_cleanup = sim_at(s, now + a->cfg.cleanup_interval, cleanup_event, w);
}

/* The checkpoint a lease of a shard without a leased parent starts at: the application's
 * initial position. */
static kds_ckpt_kind initial_ckpt(const kcl *a)
{
    return a->cfg.initial == KDS_START_TRIM_HORIZON  ? KDS_CKPT_TRIM_HORIZON
           : a->cfg.initial == KDS_START_AT_TIMESTAMP ? KDS_CKPT_AT_TIMESTAMP
                                                      : KDS_CKPT_LATEST;
}

/* Create shard sh's lease at checkpoint `k`, naming the parents that still have leases;
 * TRIM_HORIZON instead when one does and `parents_first` (a parent's records come
 * first). Returns the table's status. */
static kds_ddb_status create_lease(kcl *a, const kds_shard *sh, kds_ckpt_kind k,
                                   bool parents_first)
{
    kds_lease_table *t = a->table;
    int32_t p0 = sh->parent >= 0 && kds_lease_find(t, (uint32_t)sh->parent) >= 0 ? sh->parent : -1;
    int32_t p1 = sh->adjacent_parent >= 0 && kds_lease_find(t, (uint32_t)sh->adjacent_parent) >= 0
                     ? sh->adjacent_parent
                     : -1;
    if (parents_first && (p0 >= 0 || p1 >= 0))
        k = KDS_CKPT_TRIM_HORIZON;
    return kds_lease_create(t, sh->index, p0, p1, k, a->cfg.initial_time, NULL);
}

/* ---- the leader decider (2.x) and the periodic shard-sync auditor (kcl.md 4.4, 7.1) -- */

/* PeriodicShardSyncManager's INITIAL_DELAY, DeterministicShuffleShardSyncLeaderDecider's
 * ELECTION_INITIAL_DELAY_MILLIS and ELECTION_SCHEDULING_INTERVAL_MILLIS, and the
 * scheduler's loop period: constants of the KCL, not settings. */
#define AUDIT_FIRST SIM_S(60)
#define ELECT_FIRST SIM_S(60)
#define ELECT_EVERY SIM_MIN(5)
#define LOOP_EVERY SIM_S(1) /* shardConsumerDispatchPollIntervalMillis */
#define SHUFFLE_SEED 1947 /* DETERMINISTIC_SHUFFLE_SEED */

#define JAVA_MULT UINT64_C(0x5DEECE66D)
#define JAVA_MASK ((UINT64_C(1) << 48) - 1)

void kds_java_random_init(kds_java_random *r, int64_t seed)
{
    r->seed = ((uint64_t)seed ^ JAVA_MULT) & JAVA_MASK;
}

int32_t kds_java_random_next(kds_java_random *r, int bits)
{
    SIM_ASSERT(bits >= 1 && bits <= 32);
    r->seed = (r->seed * JAVA_MULT + 0xB) & JAVA_MASK;
    /* Java's (int)(seed >>> (48 - bits)): the low 32 bits, as a two's complement int. */
    uint32_t v = (uint32_t)(r->seed >> (48 - bits));
    return v <= INT32_MAX ? (int32_t)v : (int32_t)(v - INT32_MAX - 1) + INT32_MIN;
}

int32_t kds_java_random_next_int(kds_java_random *r, int32_t bound)
{
    SIM_ASSERT(bound >= 1);
    if ((bound & -bound) == bound) /* a power of 2: the high bits */
        return (int32_t)(((int64_t)bound * kds_java_random_next(r, 31)) >> 31);
    int32_t bits, val;
    /* Rejects the top partial block so that every value is equally likely: Java's test
     * is that bits - val + (bound - 1) overflows an int. */
    do {
        bits = kds_java_random_next(r, 31);
        val = bits % bound;
    } while ((int64_t)bits - val + (bound - 1) > INT32_MAX);
    return val;
}

size_t kds_kcl_leader_index(size_t n)
{
    SIM_ASSERT(n >= 1 && n <= INT32_MAX);
    /* Collections.shuffle on a random-access list: for i from n down to 2, swap i - 1
     * with nextInt(i). Only the first element's origin matters. */
    size_t *perm = malloc(n * sizeof *perm);
    SIM_ASSERT(perm != NULL);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    kds_java_random r;
    kds_java_random_init(&r, SHUFFLE_SEED);
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)kds_java_random_next_int(&r, (int32_t)i);
        size_t x = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = x;
    }
    size_t first = perm[0];
    free(perm);
    return first;
}

/* A lease owner, for sorting by worker id. */
typedef struct owner_ref {
    const kds_lease_owner *o;
    int32_t id;
} owner_ref;

/* Worker ids in the KCL's sort order: kdsim's ids are the worker's name, then its
 * incarnation (a restart is a new id), then the application (a shared table). */
static int owner_ref_cmp(const void *a, const void *b)
{
    const kds_lease_owner *x = ((const owner_ref *)a)->o, *y = ((const owner_ref *)b)->o;
    int c = strcmp(x->worker, y->worker);
    if (c)
        return c;
    if (x->incarnation != y->incarnation)
        return x->incarnation < y->incarnation ? -1 : 1;
    return strcmp(x->app, y->app);
}

/* electLeaders: Scan the table, sort the distinct owners of leases, shuffle, take the
 * first. A throttled Scan leaves the last choice in place. */
static void elect(worker *w)
{
    kcl *a = w->app;
    kds_lease_table *t = a->table;
    a->elections++;
    if (kds_lease_scan(t) != KDS_DDB_OK) {
        KDS_TRACE(a->st->trace, sim_now(a->sim), "lease", w->label, -1,
                  "leader election: its Scan of the lease table throttled; the last choice "
                  "stands");
        return;
    }
    owner_ref *v = malloc((t->n_owners ? t->n_owners : 1) * sizeof *v);
    bool *seen = calloc(t->n_owners ? t->n_owners : 1, sizeof *seen);
    SIM_ASSERT(v && seen);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (!l->deleted && l->owner >= 0 && !seen[l->owner]) {
            seen[l->owner] = true;
            v[n++] = (owner_ref){&t->owners[l->owner], l->owner};
        }
    }
    qsort(v, n, sizeof *v, owner_ref_cmp);
    w->elected = n ? v[kds_kcl_leader_index(n)].id : -1;
    free(v);
    free(seen);
}

static void loop_event(sim *s, void *ctx);

static void elect_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_elect, elect_event, now))
        return;
    elect(w);
    w->ev_elect = sim_at(s, now + ELECT_EVERY, elect_event, w); /* fixed delay */
    if (w->elected < 0 && !w->ev_loop)
        w->ev_loop = sim_at(s, now + LOOP_EVERY, loop_event, w);
}

/* The 2.x scheduler's process loop asks isLeader every second. With no leader known
 * (at the start, or when the last election found no owner) isLeader elects at once, a
 * scan, and starts the periodic election (the KCL starts another one each time it finds
 * no owner; kdsim keeps one); otherwise it answers from memory, so the loop costs
 * nothing and kdsim runs it only while no leader is known. */
static void loop_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_loop, loop_event, now))
        return;
    elect(w);
    if (!w->ev_elect) /* the periodic election is not running yet */
        w->ev_elect = sim_at(s, now + ELECT_FIRST, elect_event, w);
    if (w->elected < 0)
        w->ev_loop = sim_at(s, now + LOOP_EVERY, loop_event, w);
}

/* LeaderDecider.isLeader for worker w: 2.x, the worker the last election chose, or every
 * worker while none is known; 3.x, the holder of the leader lock. */
static bool is_leader(const worker *w)
{
    if (w->app->cfg.assignment != KDS_KCL_TAKER)
        return w->leader;
    return w->elected < 0 || w->elected == w->owner;
}

typedef struct hrange {
    kds_hashkey lo, hi;
} hrange;

static int hrange_cmp(const void *a, const void *b)
{
    const hrange *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

/* hasHoleInLeases: the first hole in the hash ranges of the leases not at SHARD_END,
 * written to h[0..4) (two zero ranges for "none at all"); false if they cover the key
 * space. Overlapping ranges merge, as they do for the KCL. */
static bool find_hole(const kcl *a, kds_hashkey h[4])
{
    const kds_lease_table *t = a->table;
    hrange *v = malloc((t->n ? t->n : 1) * sizeof *v);
    SIM_ASSERT(v != NULL);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const kds_lease *l = &t->items[i];
        if (l->deleted || l->ckpt == KDS_CKPT_SHARD_END)
            continue;
        const kds_shard *sh = a->st->shards[l->shard];
        v[n++] = (hrange){sh->lo, sh->hi};
    }
    bool hole = false;
    memset(h, 0, 4 * sizeof *h);
    if (n == 0) {
        hole = true;
    } else {
        qsort(v, n, sizeof *v, hrange_cmp);
        if (v[0].lo != 0 || v[n - 1].hi != KDS_HASHKEY_MAX) {
            hole = true;
            h[0] = v[0].lo, h[1] = v[0].hi, h[2] = v[n - 1].lo, h[3] = v[n - 1].hi;
        }
        hrange left = v[0], report = v[0];
        for (size_t i = 1; i < n && !hole; i++) {
            if (v[i].lo <= left.hi) {
                if (v[i].hi > left.hi)
                    left.hi = v[i].hi; /* overlapping: merge */
            } else if (v[i].lo - left.hi != 1) {
                hole = true;
                h[0] = report.lo, h[1] = report.hi, h[2] = v[i].lo, h[3] = v[i].hi;
            } else {
                left = report = v[i];
            }
        }
    }
    free(v);
    return hole;
}

/* A shard sync's trace note of its `throttled` creates, which `who` makes later, into buf
 * (n bytes): " (N creates throttled by the lease table: WHO makes them)", or "" for none. */
static const char *creates_throttled(char *buf, size_t n, uint32_t throttled, const char *who)
{
    buf[0] = 0;
    if (throttled > 0)
        snprintf(buf, n, " (%" PRIu32 " create%s throttled by the lease table: %s makes them)",
                 throttled, kds_trace_s(throttled), who);
    return buf;
}

/* The shard sync that leader w's auditor starts (ShardSyncTask), `why`: a lease for every
 * open shard that has none, at TRIM_HORIZON when a parent still has its lease (the
 * parent's records come first), else at the application's initial position. A
 * throttled create is left to the next sync. */
static void sync_missing(worker *w, const char *why)
{
    kcl *a = w->app;
    uint32_t made = 0, throttled = 0;
    a->shard_syncs++;
    for (size_t i = 0; i < a->st->n_shards; i++) {
        const kds_shard *sh = a->st->shards[i];
        if (sh->state != KDS_SHARD_OPEN || kds_lease_find(a->table, sh->index) >= 0)
            continue;
        kds_ddb_status r = create_lease(a, sh, initial_ckpt(a), true);
        made += r == KDS_DDB_OK;
        throttled += r == KDS_DDB_THROTTLED;
    }
    a->leases_recreated += made;
    if (KDS_TRACING(a->st->trace, "lease", w->label, -1)) {
        char thr[128];
        kds_trace_emit(a->st->trace, sim_now(a->sim), "lease", w->label, -1,
                       "shard-sync audit: %s; its shard sync created %" PRIu32 " lease%s%s",
                       why, made, kds_trace_s(made),
                       creates_throttled(thr, sizeof thr, throttled, "a later sync"));
    }
}

/* PeriodicShardSyncManager.runShardSync: a leader Scans the table and checks that the
 * open leases cover the key space; an empty table, or the same hole seen
 * shard_sync_confidence runs in a row, starts a shard sync. */
static void audit_event(sim *s, void *ctx)
{
    worker *w = ctx;
    kcl *a = w->app;
    sim_time now = sim_now(s);
    if (!task_due(w, &w->ev_audit, audit_event, now))
        return;
    w->ev_audit = sim_at(s, now + a->cfg.shard_sync_interval, audit_event, w); /* fixed delay */
    if (!is_leader(w))
        return;
    a->audits++;
    w->sum.audits++;
    if (kds_lease_scan(a->table) != KDS_DDB_OK) {
        /* The run fails; the next one tries again. */
        if (KDS_TRACING(a->st->trace, "lease", w->label, -1)) {
            char dur[32];
            kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                           "shard-sync audit: its Scan of the lease table throttled; the "
                           "next audit in %s",
                           kds_trace_dur(dur, sizeof dur, a->cfg.shard_sync_interval));
        }
        return;
    }
    if (a->table->n_live == 0) {
        sync_missing(w, "the lease table is empty");
        return;
    }
    kds_hashkey h[4];
    if (!find_hole(a, h)) {
        w->hole_streak = 0;
        return;
    }
    a->holes_seen++;
    if (w->hole_streak > 0 && memcmp(h, w->hole, sizeof h) == 0) {
        w->hole_streak++;
    } else {
        memcpy(w->hole, h, sizeof h);
        w->hole_streak = 1;
    }
    if (w->hole_streak >= a->cfg.shard_sync_confidence) {
        char why[128];
        snprintf(why, sizeof why,
                 "the open leases left the same part of the key space uncovered %" PRIu32
                 " audits in a row",
                 w->hole_streak);
        sync_missing(w, why);
    }
}

/* ---- worker lifecycle --------------------------------------------------------------- */

/* Create the leases of an empty table (the first worker's shard sync); returns how many
 * creates the lease table throttled (left to the shard-sync audit). */
static uint32_t create_leases(kcl *a)
{
    uint32_t throttled = 0;
    kds_lease_table *t = a->table;
    kds_ckpt_kind k = initial_ckpt(a);
    for (size_t i = 0; i < a->st->n_shards; i++) {
        const kds_shard *sh = a->st->shards[i];
        if (sh->state == KDS_SHARD_EXPIRED) {
            slot_of(a, sh->index)->unlisted = true; /* gone before the application began */
            continue;
        }
        /* At LATEST only the open shards matter (the closed ones hold nothing newer). */
        if (k == KDS_CKPT_LATEST && sh->state != KDS_SHARD_OPEN)
            continue;
        if (sh->index < t->n_by_shard && t->by_shard[sh->index] >= 0)
            continue; /* exists, or existed and was cleaned up */
        throttled += create_lease(a, sh, k, false) == KDS_DDB_THROTTLED;
    }
    return throttled;
}

static void coordinator_start(worker *w)
{
    kcl *a = w->app;
    sim_time now = sim_now(a->sim);
    w->state = W_RUNNING;
    w->renew_next = now;
    w->ev_renew = sim_at(a->sim, now, renew_event, w);
    if (a->cfg.assignment == KDS_KCL_TAKER)
        w->ev_take = sim_at(a->sim, now, take_event, w);
    else
        kds_kcl_lam_start(w);
    w->ev_cleanup = sim_at(a->sim, now + a->cfg.cleanup_interval, cleanup_event, w);
    /* The leader decider and the auditor start with the scheduler, each worker's own. */
    w->elected = -1;
    w->hole_streak = 0;
    w->ev_audit = sim_at(a->sim, now + AUDIT_FIRST, audit_event, w);
    /* The scheduler's first loop, after the taker's first pass (scheduled before it, at
     * the same time), asks isLeader: the first 2.x election. */
    if (a->cfg.assignment == KDS_KCL_TAKER)
        w->ev_loop = sim_at(a->sim, now, loop_event, w);
    note_held(w);
}

/* The start-up wait of Scheduler.shouldInitiateLeaseSync (kcl.md 4.4): a worker draws a
 * random wait and, while it lasts, checks the table (isLeaseTableEmpty, a Scan of one
 * item) at once and again each TABLE_CHECK_EVERY; a check that finds a lease starts the
 * worker. The check interval's sleep that ends past the wait ends it, without another
 * check: the worker then runs the shard sync that creates the leases (none if another
 * worker did since its last check) and starts. A throttled check fails the scheduler's
 * initialization attempt, and a new one, with a new wait, follows INIT_BACKOFF later.
 * Constants of the KCL, not settings. */
#define TABLE_CHECK_EVERY SIM_S(3) /* LEASE_TABLE_CHECK_FREQUENCY_MILLIS */
#define INIT_BACKOFF SIM_S(1)      /* schedulerInitializationBackoffTimeMillis' default */

static void sync_event(sim *s, void *ctx);

/* A check of worker w's start-up wait at `now`. */
static void sync_check(worker *w, sim_time now)
{
    kcl *a = w->app;
    w->sum.startup_checks++;
    if (kds_lease_scan_one(a->table) != KDS_DDB_OK) {
        if (KDS_TRACING(a->st->trace, "lease", w->label, -1)) {
            char dur[32];
            kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                           "start-up: its check of the lease table (a Scan of one item) "
                           "throttled; a new initialization attempt, with a new wait, in %s",
                           kds_trace_dur(dur, sizeof dur, INIT_BACKOFF));
        }
        w->sync_until = -1; /* a new attempt */
        w->ev_sync = sim_at(a->sim, now + INIT_BACKOFF, sync_event, w);
    } else if (a->table->n_live > 0) {
        coordinator_start(w);
    } else {
        w->ev_sync = sim_at(a->sim, now + TABLE_CHECK_EVERY, sync_event, w);
    }
}

/* An initialization attempt of worker w at `now`. The wait matters only to a worker
 * that finds the table empty, and kdsim draws it only then: a worker joining a running
 * application leaves its generator to its taker. */
static void sync_begin(worker *w, sim_time now)
{
    kcl *a = w->app;
    w->sync_until = now;
    if (a->table->n_live == 0) {
        w->sync_until = now + sim_dist_sample_ns(&a->cfg.sync_wait_ms, w->rng);
        if (w->sync_until <= now) { /* no wait, no check: the shard sync at once */
            w->ev_sync = sim_at(a->sim, now, sync_event, w);
            return;
        }
    }
    sync_check(w, now);
}

static void sync_event(sim *s, void *ctx)
{
    worker *w = ctx;
    sim_time now = sim_now(s);
    w->ev_sync = 0;
    if (w->state != W_SYNC)
        return;
    if (paused(w, now)) {
        w->ev_sync = sim_at(s, w->pause_until, sync_event, w);
        return;
    }
    if (w->sync_sleeping) {
        w->sync_sleeping = false;
        coordinator_start(w);
        return;
    }
    if (w->sync_until < 0) {
        sync_begin(w, now);
        return;
    }
    if (now < w->sync_until) {
        sync_check(w, now);
        return;
    }
    /* The wait ended on an empty table: the worker runs a shard sync (the KCL's
     * syncShardsOnce, a ShardSyncTask called in the scheduler's initialisation). It
     * creates the leases unless another worker did since the last check, then sleeps
     * shardSyncIntervalMillis before the scheduler starts the lease coordinator, so that
     * workers which merely find the leases start taking them first (kcl.md 4.4). */
    kcl *a = w->app;
    size_t before = a->table->n_live;
    uint32_t throttled = before == 0 ? create_leases(a) : 0;
    if (KDS_TRACING(a->st->trace, "lease", w->label, -1)) {
        char dur[32], thr[128];
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                       "start-up shard sync: %zu lease%s created%s; the worker takes leases "
                       "after the sync's sleep of %s (shardSyncIntervalMillis)",
                       a->table->n_live - before, kds_trace_s(a->table->n_live - before),
                       creates_throttled(thr, sizeof thr, throttled, "the shard-sync audit"),
                       kds_trace_dur(dur, sizeof dur, a->cfg.sync_sleep));
    }
    if (a->cfg.sync_sleep > 0) {
        w->sync_sleeping = true;
        w->ev_sync = sim_at(s, now + a->cfg.sync_sleep, sync_event, w);
        return;
    }
    coordinator_start(w);
}

/* End every processor and forget every lease (a crash, or before a restart). */
static void kill_all(worker *w)
{
    for (size_t i = 0; i < w->n_held; i++) {
        if (w->held[i].p)
            proc_end(w->held[i].p);
        w->held_slot[w->held[i].lease] = -1;
    }
    w->n_held = 0;
}

/* The lease line of a worker's start (its first, or a restart after a stop or a crash,
 * under a new worker id). Out of line: tracing only. */
static __attribute__((noinline)) void trace_start(const worker *w, sim_time now)
{
    kcl *a = w->app;
    if (w->incarnations == 1)
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1, "worker started");
    else
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                       "worker restarted (start %" PRIu32 "): a new worker id in the lease "
                       "table; it holds no lease and takes leases as a new worker would",
                       w->incarnations);
}

/* The lease line of a worker's graceful stop or crash, holding `held` leases. */
static __attribute__((noinline)) void trace_down(const worker *w, bool graceful, size_t n,
                                                 sim_time now)
{
    kcl *a = w->app;
    char dur[32];
    kds_trace_dur(dur, sizeof dur, a->cfg.failover);
    if (graceful)
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                       "worker stopped gracefully: its record processors finish their batch "
                       "and checkpoint; its %zu lease%s %s not released and expire%s "
                       "%s after its last renewal (failoverTimeMillis)",
                       n, kds_trace_s(n), n == 1 ? "is" : "are", n == 1 ? "s" : "", dur);
    else
        kds_trace_emit(a->st->trace, now, "lease", w->label, -1,
                       "worker crashed: no checkpoint; its %zu lease%s expire%s %s after its "
                       "last renewal (failoverTimeMillis), and what it processed after the "
                       "last checkpoints will be delivered again",
                       n, kds_trace_s(n), n == 1 ? "s" : "", dur);
}

static void worker_start(worker *w)
{
    kcl *a = w->app;
    if (is_up(w))
        return;
    sim_time now = sim_now(a->sim);
    kill_all(w);
    w->incarnations++;
    if (KDS_TRACING(a->st->trace, "lease", w->label, -1))
        trace_start(w, now);
    w->owner = kds_lease_owner_add(a->table, a->base.name, w->cfg->name, w->incarnations);
    SIM_ASSERT(w->owner >= 0);
    w->pause_until = 0;
    w->proc_free = now;
    w->started = now;
    w->m_n = 0;
    w->m_busy = 0;
    w->m_last = now;
    w->leader = false;
    for (size_t i = 0; i < w->n_seen; i++)
        w->seen_at[i] = UNSEEN;
    if (a->efo_begin < 0) { /* the application's first start */
        a->efo_begin = now;
        hold_heads(a); /* already held from kds_kcl_new, when a start was configured */
    }
    add_change(a, w, "start");
    w->state = W_SYNC;
    w->sync_sleeping = false;
    sync_begin(w, now);
    note_held(w);
    kds_kcl_check_converged(a, true);
}

static void worker_down(worker *w, bool graceful)
{
    kcl *a = w->app;
    sim *s = a->sim;
    if (!is_up(w))
        return;
    add_change(a, w, graceful ? "stop" : "crash");
    if (KDS_TRACING(a->st->trace, "lease", w->label, -1))
        trace_down(w, graceful, w->n_held, sim_now(s));
    cancel(s, &w->ev_renew);
    cancel(s, &w->ev_take);
    cancel(s, &w->ev_cleanup);
    cancel(s, &w->ev_sync);
    cancel(s, &w->ev_audit);
    cancel(s, &w->ev_elect);
    cancel(s, &w->ev_loop);
    kds_kcl_lam_stop(w, graceful);
    if (graceful) {
        /* Scheduler.startGracefulShutdown (2.x): every processor is asked to shut down
         * and checkpoints; the leases are not released and expire in the table. */
        for (size_t i = 0; i < w->n_held; i++) {
            proc *p = w->held[i].p;
            if (!p)
                continue;
            if (p->state == P_PROCESSING && p->busy && !p->lost) {
                p->shutdown = true;
            } else if (p->state == P_PROCESSING && !p->lost) {
                shutdown_proc(p);
            } else {
                w->held[i].p = NULL;
                proc_end(p);
            }
        }
        w->state = W_STOPPED;
        kds_lease_owner_set(a->table, w->owner, KDS_OWNER_STOPPED);
    } else {
        kill_all(w);
        w->state = W_CRASHED;
        kds_lease_owner_set(a->table, w->owner, KDS_OWNER_DEAD);
    }
    note_held(w);
    kds_kcl_check_converged(a, true);
}

static void restart_event(sim *s, void *ctx)
{
    (void)s;
    wev *e = ctx;
    worker_start(e->w);
}

static void pause_end_event(sim *s, void *ctx)
{
    wev *e = ctx;
    worker *w = e->w;
    if (is_up(w) && sim_now(s) >= w->pause_until && w->owner >= 0) {
        add_change(w->app, w, "resume");
        if (KDS_TRACING(w->app->st->trace, "lease", w->label, -1)) {
            char dur[32];
            kds_trace_emit(w->app->st->trace, sim_now(s), "lease", w->label, -1,
                           "worker resumed after its pause of %s: its renewals and "
                           "processing go on from here",
                           kds_trace_dur(dur, sizeof dur, sim_now(s) - w->paused_at));
        }
        kds_lease_owner_set(w->app->table, w->owner, KDS_OWNER_RUNNING);
        kds_kcl_check_converged(w->app, true);
    }
}

static void worker_event(sim *s, void *ctx)
{
    wev *e = ctx;
    worker *w = e->w;
    sim_time now = sim_now(s);
    switch (e->ev.kind) {
    case KDS_KCL_EV_START:
        worker_start(w);
        break;
    case KDS_KCL_EV_STOP:
    case KDS_KCL_EV_CRASH:
        worker_down(w, e->ev.kind == KDS_KCL_EV_STOP);
        if (e->ev.restart_after >= 0)
            sim_at(s, now + e->ev.restart_after, restart_event, e);
        break;
    case KDS_KCL_EV_PAUSE:
        if (!is_up(w))
            break;
        if (!paused(w, now))
            w->paused_at = now; /* a new pause, not one lengthened */
        if (now + e->ev.len > w->pause_until)
            w->pause_until = now + e->ev.len;
        add_change(w->app, w, "pause");
        if (KDS_TRACING(w->app->st->trace, "lease", w->label, -1)) {
            char dur[32], fo[32];
            kds_trace_emit(w->app->st->trace, now, "lease", w->label, -1,
                           "worker paused for %s (a stall, such as a garbage-collection "
                           "pause): no renewal, no processing; the others may take its "
                           "leases once they are %s unrenewed (failoverTimeMillis)",
                           kds_trace_dur(dur, sizeof dur, e->ev.len),
                           kds_trace_dur(fo, sizeof fo, w->app->cfg.failover));
        }
        kds_lease_owner_set(w->app->table, w->owner, KDS_OWNER_PAUSED);
        sim_at(s, w->pause_until, pause_end_event, e);
        kds_kcl_check_converged(w->app, true);
        break;
    }
}

/* The application will read shard sh from its oldest record (an initial position of
 * TRIM_HORIZON or AT_TIMESTAMP, or a child shard, which a lease always starts at
 * TRIM_HORIZON): until its first processor starts there, the slot's floor holds the
 * log's merging back from the head, so that the first read (after the start-up shard
 * sync, or once the parents are done) sees each request's records as written. */
static void floor_at_head(kcl *a, kds_shard *sh)
{
    slot *sl = slot_of(a, sh->index);
    if (sl->ckpt_on)
        return;
    kds_log_seek_head(&sh->log, &sl->ckpt);
    SIM_ASSERT(kds_log_attach_floor(&sh->log, &sl->ckpt) == 0);
    sl->ckpt_on = true;
}

/* The shards the application will read from their oldest record (all that are left,
 * unless its initial position is LATEST) are held from their heads: from kds_kcl_new when
 * its first start is configured before the end of the run (a->holding), so that records
 * written before it starts are read as written. An application that starts after the
 * end holds nothing, and changes nothing for the others. */
static void hold_heads(kcl *a)
{
    if (a->cfg.initial == KDS_START_LATEST)
        return;
    for (size_t i = 0; i < a->st->n_shards; i++)
        if (a->st->shards[i]->state != KDS_SHARD_EXPIRED)
            floor_at_head(a, a->st->shards[i]);
}

/* A child shard appeared: it is held from its head, and processors idle at the end of
 * its parents may be done. */
static void on_new_shard(void *ctx, kds_shard *sh)
{
    kcl *a = ctx;
    if (a->efo_begin >= 0) /* started: a child's lease starts at TRIM_HORIZON */
        floor_at_head(a, sh);
    else if (a->holding && a->cfg.initial != KDS_START_LATEST)
        floor_at_head(a, sh); /* held until the first start, as the others are */
    int32_t par[2] = {sh->parent, sh->adjacent_parent};
    for (int i = 0; i < 2; i++)
        if (par[i] >= 0 && (size_t)par[i] < a->n_slots && a->slots[par[i]] &&
            a->slots[par[i]]->proc)
            check_end(a->slots[par[i]]->proc);
}

/* ---- end of the run ----------------------------------------------------------------- */

static const char *state_name(const worker *w, sim_time now)
{
    switch (w->state) {
    case W_NEW:
        return "not started";
    case W_SYNC:
    case W_RUNNING:
        return paused(w, now) ? "paused" : "running";
    case W_STOPPED:
        return "stopped";
    default:
        return "crashed";
    }
}

static void finish(kds_consumer *base, sim_time end)
{
    kcl *a = (kcl *)base;
    kds_consumer_stats *cs = &a->base.st;
    cs->records_unread = 0;
    for (size_t i = 0; i < a->st->n_shards; i++) {
        kds_shard *sh = a->st->shards[i];
        slot *sl = i < a->n_slots ? a->slots[i] : NULL;
        kds_stream_trim(a->st, sh);
        if (sl && sl->unlisted && !sl->started) {
            cs->records_skipped_at_start += sh->log.end_pos; /* never its to read */
            continue;
        }
        uint64_t h = sl && sl->started ? sl->hw : 0;
        if (h < sh->log.head_pos) {
            cs->records_expired_unread += sh->log.head_pos - h;
            h = sh->log.head_pos;
            if (sl && sl->started)
                sl->hw = h;
        }
        if (sh->log.end_pos > h)
            cs->records_unread += sh->log.end_pos - h;
        if (!(sl && sl->started) && h > 0) {
            /* Never started: the expired records count above; keep the slot's view. */
        }
    }
    if (a->cfg.efo) {
        if (a->efo_cs.iterator_age_ms_max > cs->iterator_age_ms_max)
            cs->iterator_age_ms_max = a->efo_cs.iterator_age_ms_max;
        /* The pushes' ages join the application's, minute by minute (kcl_new). */
        int frc = sim_series_flush(&a->efo_cs.iterator_age_min);
        SIM_ASSERT(frc == 0); /* out of memory for the application's minutes: fatal */
        /* Registered from the first worker's start to the end of the run. */
        if (a->efo_begin >= 0)
            kds_consumer_efo_registered(cs, a->st, a->efo_begin, end);
    }
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
    kds_lease_table_finish(a->table, end);

    /* The summary. */
    size_t minutes = (size_t)((end + SIM_MIN(1) - 1) / SIM_MIN(1));
    /* A value a minute, or, for a run longer than a series keeps whole, one every
     * `per` minutes: the width the lease table's series merged to (sim_series), which
     * the workers' lease counts follow so that the report's arrays line up. */
    size_t per = (size_t)(a->table->st.read_units_min.width / SIM_MIN(1));
    size_t values = (minutes + per - 1) / per;
    kds_kcl_summary *s = &a->sum;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < a->n_workers; i++) {
        worker *w = &a->workers[i];
        note_held(w);
        if (w->idle_since >= 0) {
            w->sum.idle_s += sim_to_s(end - w->idle_since);
            w->idle_since = end;
        }
        free(w->per_min);
        w->per_min = calloc(values ? values : 1, sizeof *w->per_min);
        SIM_ASSERT(w->per_min != NULL);
        size_t k = 0;
        uint32_t cur = 0;
        for (size_t m = 0; m < values; m++) {
            sim_time edge = (sim_time)((m + 1) * per) * SIM_MIN(1);
            while (k < w->n_log && w->log_t[k] < edge)
                cur = w->log_n[k++];
            w->per_min[m] = cur;
        }
        w->sum.name = w->cfg->name;
        w->sum.state = state_name(w, end);
        w->sum.leases_held_end =
            w->state == W_RUNNING || w->state == W_SYNC ? (uint32_t)w->n_held : 0;
        w->sum.incarnations = w->incarnations;
        w->sum.leases_per_minute = w->per_min;
        w->sum.n_minutes = values;
        w->sum.minutes_per_value = per;
        a->wsum[i] = w->sum;
        if (is_up(w)) {
            s->running_workers_end++;
            if (w->n_held == 0)
                s->idle_workers_end++;
        }
        s->checkpoints += w->sum.checkpoints;
        s->checkpoints_throttled += w->sum.checkpoints_throttled;
    }
    s->application_name = a->app_name;
    s->table_shared = a->shared;
    s->table = a->table;
    s->workers = a->wsum;
    s->n_workers = a->n_workers;
    for (size_t i = 0; i < a->n_moves; i++) {
        const kds_kcl_move *m = &a->moves[i];
        s->moves_by_cause[m->cause]++;
        s->moves++;
        if (m->cause == KDS_KCL_EXPIRY && m->from_healthy)
            s->moves_from_healthy++;
    }
    s->move_log = a->moves;
    s->n_move_log = a->n_moves;
    s->changes = a->changes;
    s->n_changes = a->n_changes;
    s->duplicates_from_failover = a->dup_failover;
    s->replay_expected = a->replay_expected;
    s->records_skipped_gaps = a->skipped_gaps;
    s->assignment = a->cfg.assignment;
    s->leaders = a->leaders;
    s->n_leaders = a->n_leaders;
    s->lam_runs = a->lam_runs;
    s->handoffs = a->handoffs;
    s->elections = a->elections;
    s->audits = a->audits;
    s->holes_seen = a->holes_seen;
    s->shard_syncs = a->shard_syncs;
    s->leases_recreated = a->leases_recreated;
}

static void figures(const kds_consumer *base, kds_figure_fn fn, void *arg)
{
    const kcl *a = (const kcl *)base;
    const kds_kcl_summary *s = &a->sum;
    const kds_lease_table *t = a->table;
    fn(arg, "workers", (double)a->n_workers);
    fn(arg, "workers_running_end", s->running_workers_end);
    fn(arg, "idle_workers_end", s->idle_workers_end);
    fn(arg, "leases_end", (double)t->n_live);
    fn(arg, "lease_moves", (double)s->moves);
    bool kcl3 = a->cfg.assignment != KDS_KCL_TAKER;
    for (int c = 0; c < (kcl3 ? KDS_KCL_N_CAUSES : KDS_KCL_N_CAUSES_2X); c++) {
        char k[64];
        snprintf(k, sizeof k, "lease_moves_%s", kds_kcl_cause_name((kds_kcl_cause)c));
        fn(arg, k, (double)s->moves_by_cause[c]);
    }
    fn(arg, "lease_moves_from_healthy_workers", (double)s->moves_from_healthy);
    fn(arg, "duplicates_from_failover", (double)s->duplicates_from_failover);
    fn(arg, "checkpoints", (double)s->checkpoints);
    fn(arg, "checkpoints_throttled", (double)s->checkpoints_throttled);
    fn(arg, "lease_table_read_units", kds_lease_read_units(t));
    fn(arg, "lease_table_write_units", kds_lease_write_units(t));
    fn(arg, "lease_table_throttled_reads", (double)t->st.throttled_reads);
    fn(arg, "lease_table_throttled_writes", (double)t->st.throttled_writes);
    double worst = 0;
    uint64_t open = 0;
    for (size_t i = 0; i < s->n_changes; i++) {
        if (s->changes[i].converged_after < 0)
            open++;
        else if (sim_to_s(s->changes[i].converged_after) > worst)
            worst = sim_to_s(s->changes[i].converged_after);
    }
    fn(arg, "time_to_converge_max_s", worst);
    fn(arg, "changes_not_converged", (double)open);
    if (a->cfg.efo)
        fn(arg, "consumer_shard_hours", a->base.st.efo_consumer_shard_hours);
    if (!kcl3)
        fn(arg, "leader_elections", (double)s->elections);
    fn(arg, "shard_sync_audits", (double)s->audits);
    fn(arg, "shard_sync_holes", (double)s->holes_seen);
    fn(arg, "shard_syncs", (double)s->shard_syncs);
    fn(arg, "leases_recreated", (double)s->leases_recreated);
    if (kcl3) {
        fn(arg, "leader_changes", (double)s->n_leaders);
        fn(arg, "lam_runs", (double)s->lam_runs);
        fn(arg, "handoffs", (double)s->handoffs);
    }
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const kcl *a = (const kcl *)base;
    char v[128];
    if (!a->cfg.efo) {
        fn(arg, "call_latency", kds_dist_text(v, sizeof v, &a->cfg.call_latency_ms, "ms"),
           "GetRecords round trip; AWS publishes no figure");
    } else {
        kds_efo_assumptions(&a->cfg.efo_cfg, fn, arg);
    }
    snprintf(v, sizeof v, "%u B", a->table->cfg.item_bytes);
    fn(arg, "lease_table.item_size", v,
       "size of one lease item, which sets the scan's read units; about 300 B for a "
       "shard lease with a sequence-number checkpoint");
    fn(arg, "lease_table.latency", "0 ms",
       "DynamoDB calls take no simulated time; the SDK's own retries are not modelled");
    fn(arg, "leases.sync_wait", kds_dist_text(v, sizeof v, &a->cfg.sync_wait_ms, "ms"),
       "wait of a worker that finds the table empty, checking it every 3 s, before it "
       "creates the leases (the KCL's random 1-30 s)");
    snprintf(v, sizeof v, "%.0f s", sim_to_s(a->cfg.sync_sleep));
    fn(arg, "leases.shard_sync_sleep", v,
       "the KCL's shardSyncIntervalMillis: a worker whose start-up wait ended on an empty "
       "table syncs shards and sleeps this long before it takes leases");
    fn(arg, "lease_table.scan", "consistent",
       "a scan reads every lease as last written (DynamoDB's scan is eventually "
       "consistent; its read units are charged as such)");
    fn(arg, "processor.start", "at once",
       "a record processor starts as soon as its lease is taken (the KCL's scheduler loop "
       "adds up to 1 s)");
    fn(arg, "workers.restart", "a new owner",
       "a worker restarted after a crash or stop comes back as a new worker id, as the "
       "KCL's default random id does");
    fn(arg, "shard_sync", "leases only",
       "the shard-sync auditor's sync creates a lease for each open shard without one; "
       "it lists no shards (ListShards is not a lease-table cost) and takes no time");
    if (a->cfg.assignment == KDS_KCL_TAKER) {
        fn(arg, "leader_decider.worker_ids", "name, incarnation",
           "2.x elects by sorting worker ids (by default random UUIDs); kdsim sorts by "
           "worker name, then incarnation");
        return;
    }
    if (a->cfg.assignment == KDS_KCL_WORKER_UTILIZATION)
        fn(arg, "kcl3.metric", a->cfg.lam.metric == KDS_KCL_METRIC_CPU ? "cpu" : "throughput",
           a->cfg.lam.metric == KDS_KCL_METRIC_CPU
               ? "the model has no host CPU: a worker's CPU is the busy fraction of its "
                 "processing capacity over each 30 s report"
               : "the model has no host CPU: the KCL's mode without a platform provider, "
                 "100 x the worker's assigned lease throughput / the fleet's average");
    snprintf(v, sizeof v, "%d B", KDS_LEASE_KEY_BYTES);
    fn(arg, "lease_table.index_entry_size", v,
       "size of an owner-index entry, which sets a discovery Query's read units");
    fn(arg, "kcl3.side_tables", "on-demand, not charged",
       "the worker-metrics and coordinator-state (leader lock) tables are on-demand: their "
       "requests are counted, their capacity is not modelled");
    fn(arg, "kcl3.metrics_reports", "one value per 30 s",
       "a worker reports one value per report instead of averaging 1-s samples, and the "
       "KCL's other metrics (memory, network) are not balanced on");
    fn(arg, "kcl3.owner_index", "no replication lag",
       "a discovery Query sees the leader's assignments at once");
    fn(arg, "kcl3.handoff_block", "leases in handoff skipped",
       "the leader skips a lease whose handoff is in progress instead of blocking it for "
       "the timeout plus the failover time (40 s); a handoff of a lease whose processor "
       "waits for parents or is at SHARD_END is released without a checkpoint");
    fn(arg, "kcl3.migration", "not modelled",
       "no ClientVersionConfig upgrade between 2.x and 3.x modes; applications sharing a "
       "table should use one lease_assignment; maxThroughputPerHostKBps is unlimited");
}

static void free_kcl(kds_consumer *base)
{
    kcl *a = (kcl *)base;
    if (!a)
        return;
    while (a->procs) {
        proc *p = a->procs;
        p->refs = 0; /* the simulation and its events are gone */
        if (p->state == P_ENDED)
            proc_free(p);
        else
            proc_end(p); /* detaches its cursors and frees it */
    }
    for (size_t i = 0; i < a->n_slots; i++) {
        slot *sl = a->slots[i];
        if (!sl)
            continue;
        if (sl->sub) {
            kds_efo_sub_fini(sl->sub);
            free(sl->sub);
        }
        if (sl->ckpt_on)
            kds_log_detach_floor(&sl->sh->log, &sl->ckpt);
        free(sl->gaps);
        free(sl);
    }
    free(a->slots);
    for (size_t i = 0; a->workers && i < a->n_workers; i++) {
        worker *w = &a->workers[i];
        free(w->held);
        free(w->held_slot);
        free(w->seen_counter);
        free(w->seen_at);
        free(w->log_t);
        free(w->log_n);
        free(w->per_min);
        free(w->label);
    }
    free(a->workers);
    free(a->wevs);
    free(a->moves);
    free(a->changes);
    free(a->scratch);
    free(a->order);
    free(a->wsum);
    free(a->leaders);
    kds_lease_table_unref(a->table);
    kds_consumer_stats_fini(&a->efo_cs);
    kds_consumer_stats_fini(&a->base.st);
    free(a);
}

/* kds_consumer_ops.check: the violation found during the run, else the lease
 * ownership invariant over every lease of the table as the run ends. */
static int check(const kds_consumer *base, char *msg, size_t n)
{
    const kcl *a = (const kcl *)base;
    if (a->violation[0] != '\0') {
        snprintf(msg, n, "%s", a->violation);
        return SIM_ESTATE;
    }
    for (uint32_t i = 0; i < a->table->n; i++) {
        int rc = check_lease(a, i, msg, n);
        if (rc)
            return rc;
    }
    return 0;
}

static const kds_consumer_ops KCL_OPS = {
    .kind = "kcl",
    .finish = finish,
    .figures = figures,
    .assumptions = assumptions,
    .check = check,
    .free = free_kcl,
};

const kds_kcl_summary *kds_kcl_summary_get(const kds_consumer *c)
{
    return c && c->ops == &KCL_OPS ? &((const kcl *)c)->sum : NULL;
}

const kds_lease_table *kds_kcl_table(const kds_consumer *c)
{
    return c && c->ops == &KCL_OPS ? ((const kcl *)c)->table : NULL;
}

static void schedule(kcl *a, worker *w, kds_kcl_event ev)
{
    wev *e = &a->wevs[a->n_wevs++];
    e->w = w;
    e->ev = ev;
    sim_at(a->sim, ev.at > sim_now(a->sim) ? ev.at : sim_now(a->sim), worker_event, e);
}

kds_consumer *kds_kcl_make(sim *s, kds_stream *st, const void *cfgp)
{
    const kds_kcl_cfg *cfg = cfgp;
    kcl *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->cfg = *cfg;
    if (a->cfg.max_pending < 1)
        a->cfg.max_pending = 1;
    if (a->cfg.max_pending > QCAP)
        a->cfg.max_pending = QCAP;
    if (a->cfg.lam.metrics_keep < 1)
        a->cfg.lam.metrics_keep = 1;
    if (a->cfg.lam.metrics_keep > KDS_KCL_METRICS_KEEP_MAX)
        a->cfg.lam.metrics_keep = KDS_KCL_METRICS_KEEP_MAX;
    if (!a->cfg.efo) /* the stream's GetRecords limit; with EFO it caps merged pushes */
        a->cfg.max_records = kds_stream_call_records(st, cfg->max_records);
    a->app_name = cfg->application_name ? cfg->application_name : cfg->name;
    a->sim = s;
    a->st = st;
    a->efo_begin = -1;
    a->checked_version = UINT64_MAX;
    a->renew_period = kds_kcl_renew_period(cfg);
    a->take_period =
        cfg->take_interval > 0 ? cfg->take_interval : 2 * (cfg->failover + cfg->epsilon);
    a->lam_period = cfg->lam.interval > 0 ? cfg->lam.interval : 2 * cfg->failover;
    a->discovery_period = cfg->lam.discovery_interval > 0 ? cfg->lam.discovery_interval
                                                          : a->lam_period / 2 - cfg->epsilon;
    if (a->discovery_period < SIM_MS(1))
        a->discovery_period = SIM_MS(1);
    if (a->renew_period < SIM_MS(1))
        a->renew_period = SIM_MS(1);
    if (kds_consumer_init(&a->base, &KCL_OPS, cfg->name, s, st, on_new_shard, a, &a->rng) != 0 ||
        kds_consumer_stats_init(&a->efo_cs) != 0) {
        free_kcl(&a->base);
        return NULL;
    }
    /* The pushes' iterator ages feed the application's, each minute once final: exact
     * minutes however far a long run merges the pushes' series (reading its merged
     * buckets would place each at the start of its 2, 4 ... minutes). */
    sim_series_feed(&a->efo_cs.iterator_age_min, &a->base.st.iterator_age_min);
    /* One lease table per application name in this world: another KCL application
     * with the same name (found through the stream's shard listeners, which every KCL
     * application registers, this one just now) already made it. */
    for (size_t i = 0; i < st->n_listeners; i++) {
        kcl *o = st->listeners[i].ctx;
        if (st->listeners[i].fn != on_new_shard || o == a)
            continue;
        if (strcmp(o->app_name, a->app_name) == 0) {
            a->table = o->table;
            kds_lease_table_ref(a->table);
            a->shared = o->shared = true;
            break;
        }
    }
    if (!a->table)
        a->table = kds_lease_table_new(s, a->app_name, &cfg->table);
    if (!a->table) {
        free_kcl(&a->base);
        return NULL;
    }
    a->n_workers = cfg->n_workers;
    size_t n_ev = 0;
    for (size_t i = 0; i < cfg->n_workers; i++)
        n_ev += 1 + cfg->workers[i].n_events;
    if (cfg->deploy.enabled)
        n_ev += cfg->n_workers;
    a->workers = calloc(cfg->n_workers ? cfg->n_workers : 1, sizeof *a->workers);
    a->wsum = calloc(cfg->n_workers ? cfg->n_workers : 1, sizeof *a->wsum);
    a->wevs = calloc(n_ev ? n_ev : 1, sizeof *a->wevs);
    if (!a->workers || !a->wsum || !a->wevs) {
        free_kcl(&a->base);
        return NULL;
    }
    for (size_t i = 0; i < cfg->n_workers; i++) {
        worker *w = &a->workers[i];
        w->app = a;
        w->index = i;
        w->cfg = &cfg->workers[i];
        w->owner = -1;
        w->idle_since = -1;
        char name[200];
        snprintf(name, sizeof name, "consumer/%s/worker/%s", cfg->name, w->cfg->name);
        w->rng = sim_rng(s, name);
        /* Two consumers may name their workers alike (w1, w2): the trace says whose. */
        size_t n = strlen(cfg->name) + 1 + strlen(w->cfg->name) + 1;
        w->label = malloc(n);
        if (!w->label) {
            free_kcl(&a->base); /* nothing is scheduled before every worker is made */
            return NULL;
        }
        snprintf(w->label, n, "%s/%s", cfg->name, w->cfg->name);
    }
    for (size_t i = 0; i < cfg->n_workers; i++) {
        worker *w = &a->workers[i];
        if (w->cfg->start >= 0)
            schedule(a, w, (kds_kcl_event){KDS_KCL_EV_START, w->cfg->start, 0, -1});
        for (size_t k = 0; k < w->cfg->n_events; k++)
            schedule(a, w, w->cfg->events[k]);
    }
    if (cfg->deploy.enabled)
        for (size_t i = 0; i < cfg->n_workers; i++)
            schedule(a, &a->workers[i],
                     (kds_kcl_event){cfg->deploy.graceful ? KDS_KCL_EV_STOP : KDS_KCL_EV_CRASH,
                                     cfg->deploy.at + (sim_time)i * cfg->deploy.interval, 0,
                                     cfg->deploy.downtime});
    /* An application whose first worker starts before the end of the run holds the
     * shards it will read from their oldest record from now (hold_heads). */
    sim_time first_start = INT64_MAX;
    for (size_t i = 0; i < cfg->n_workers; i++) {
        const kds_kcl_worker_cfg *wc = &cfg->workers[i];
        if (wc->start >= 0 && wc->start < first_start)
            first_start = wc->start;
        for (size_t k = 0; k < wc->n_events; k++)
            if (wc->events[k].kind == KDS_KCL_EV_START && wc->events[k].at < first_start)
                first_start = wc->events[k].at;
    }
    a->holding = first_start != INT64_MAX && kds_waits_wanted(st, first_start);
    if (a->holding)
        hold_heads(a);
    return &a->base;
}
