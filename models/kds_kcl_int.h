/* kds_kcl_int.h - the KCL application's internal state, shared by kds_kcl.c (workers,
 * processors, the 2.x taker, the summary) and kds_kcl_lam.c (KCL 3.x: leader, lease
 * assignment, discovery, worker metrics). Not for use outside models/kds_kcl*.c. */
#ifndef KDS_KCL_INT_H
#define KDS_KCL_INT_H

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kds_kcl.h"

/* Local-map timestamps: not in the map, and "never renewed" (a new unowned lease,
 * which the KCL stamps with 0 nanoseconds: older than anything). */
#define UNSEEN INT64_MIN
#define NEVER (INT64_MIN / 2)

#define QCAP 16 /* most batches a processor can hold (max_pending is at most this) */

typedef struct kcl kcl;
typedef struct worker worker;
typedef struct proc proc;

/* One shard as this application sees it. */
typedef struct slot {
    kds_shard *sh;     /* borrowed */
    uint64_t hw;       /* next position this application never processed */
    bool started;      /* a processor started on it (hw is meaningful) */
    bool unlisted;     /* EXPIRED when the lease table was made: no lease, never read,
                          its records skipped at the start */
    proc *proc;        /* the processor EFO pushes go to, or NULL */
    size_t last_move;  /* the lease's latest move (index in the move log), or SIZE_MAX */
    kds_efo_sub *sub;  /* owned; EFO only, made at the first start */
    kds_cursor ckpt;   /* where this application would start on the shard: its head
                          until a first start from TRIM_HORIZON or on a child shard
                          (floor_at_head), then that start and each checkpoint this
                          application writes; a floor of the shard's log
                          (kds_log_attach_floor) */
    bool ckpt_on;      /* ckpt is attached */
    uint64_t trace_expired; /* trace only (0 without a trace): records counted expired
                               unread that no GetRecords line has told yet */
    struct {
        uint64_t lo, hi;
    } *gaps;           /* owned: [lo, hi) below hw skipped by a start past them
                          (account_start), in order, and not processed since */
    size_t n_gaps, cap_gaps;
} slot;

typedef struct batch {
    uint64_t upto;     /* the batch ends before this position */
    uint64_t bytes;    /* its bytes */
    uint32_t count;    /* records in it */
    sim_time arrival;  /* when it is available to the processor, ns */
} batch;

typedef enum { P_WAIT_PARENTS, P_INIT, P_PROCESSING, P_SHARD_END, P_DONE, P_ENDED } pstate;

/* A record processor (ShardConsumer) on one held lease of one worker. */
struct proc {
    kcl *app;
    worker *w;
    slot *sl;
    uint32_t lease;     /* item index in the lease table */
    pstate state;
    bool lost;          /* the lease was lost: finish the batch in progress, then end */
    bool shutdown;      /* graceful shutdown: finish the batch, checkpoint, end */
    bool attached;      /* cursors attached to the shard's log */
    bool fetch_wait;    /* polling: the fetcher waits for room in the queue */
    bool fetch_end;     /* polling: the fetcher reached the end of a closed shard */
    bool efo_bp;        /* EFO: subscription paused for backpressure */
    bool busy;          /* a batch is being processed */
    kds_cursor fcur;    /* polling: next record to fetch */
    kds_cursor pcur;    /* next record to process */
    batch q[QCAP];      /* fetched batches, q[qh] first (in progress when busy) */
    uint32_t qh, qn;
    uint64_t q_records; /* records in the queue */
    uint64_t q_bytes;   /* bytes in the queue */
    sim_time last_call; /* last GetRecords, ns (-1 = none) */
    uint64_t since_ckpt;/* records processed since the last checkpoint */
    uint64_t renew_bytes;/* bytes processed since the lease's last renewal (3.x lease
                           throughput) */
    int32_t handoff_owner; /* 3.x: the owner id that was handing this lease over when
                              the handoff events were scheduled, or -1 */
    sim_time last_ckpt; /* time of the last checkpoint (or the start), ns */
    int refs;           /* events scheduled for it */
    proc *prev, *next;  /* the application's list of processors */
};

typedef struct held {
    uint32_t lease;     /* item index */
    uint64_t counter;   /* my copy of leaseCounter */
    sim_time renewed;   /* when I last renewed it, my clock, ns */
    proc *p;            /* its processor, or NULL */
    bool handoff;       /* 3.x: I am its checkpointOwner, handing it over */
    double tp;          /* 3.x: its throughput EMA, B/s (< 0 = none yet) */
    sim_time tp_at;     /* ...last computed at (or the acquisition), ns */
} held;

typedef enum { W_NEW, W_SYNC, W_RUNNING, W_STOPPED, W_CRASHED } wstate;

struct worker {
    kcl *app;
    size_t index;
    const kds_kcl_worker_cfg *cfg; /* borrowed */
    char *label;                   /* owned: "CONSUMER/WORKER", its name in the trace */
    gsl_rng *rng;                  /* sim-owned */
    wstate state;
    sim_time pause_until;          /* stalled until, ns */
    sim_time paused_at;            /* when the current (or last) stall began, ns: the
                                      trace's resume line tells its length */
    int32_t owner;                 /* current incarnation's owner id, or -1 */
    uint32_t incarnations;
    held *held;                    /* owned */
    size_t n_held, cap_held;
    int32_t *held_slot;            /* owned; by lease item index: its entry in held, or
                                      -1 (held_find in O(1): a worker may hold
                                      thousands of leases, each looked up per renewal) */
    size_t n_held_slot;
    uint64_t *seen_counter;        /* owned; the taker's map, by item index less seen_base
                                      (kds_kcl_seen_at, kds_kcl_seen_counter): it covers
                                      items seen_base to seen_base + n_seen - 1, moved up
                                      as the table's first live item does, so that it
                                      follows the live leases, not every lease ever made */
    sim_time *seen_at;
    size_t n_seen, seen_base;
    sim_event_id ev_renew, ev_take, ev_cleanup, ev_sync;
    sim_time sync_until;           /* W_SYNC: the end of the start-up wait for leases */
    bool sync_sleeping;            /* W_SYNC: the wait is over and the worker's shard sync
                                      sleeps (sync_sleep) before its coordinator starts */
    /* The periodic shard-sync auditor and, in 2.x, the leader decider (kcl.md 4.4, 7.1) */
    sim_event_id ev_audit, ev_elect, ev_loop;
    int32_t elected;               /* 2.x: the owner id the last election chose, or -1:
                                      no election yet, or no owner seen (every worker
                                      then takes itself for the leader) */
    kds_hashkey hole[4];           /* the hole the auditor's last run found, between these
                                      ranges (lo, hi, lo, hi; all 0 for "no open lease at
                                      all")... */
    uint32_t hole_streak;          /* ...in this many runs in a row (0: none found) */
    /* KCL 3.x (kds_kcl_lam.c) */
    sim_event_id ev_lam, ev_discover, ev_metrics, ev_lock;
    sim_time discover_next;        /* the discoverer's next run (fixed rate) */
    bool leader;                   /* holds the leader lock, as far as it knows */
    uint32_t lam_runs_led;         /* successful LAM runs since it became leader */
    uint32_t lam_failures;         /* consecutive failed LAM runs */
    bool lock_recheck;             /* gave the lock up: checks it again at its next LAM run */
    double m_hist[KDS_KCL_METRICS_KEEP_MAX]; /* its metrics reports, oldest first */
    size_t m_n;
    sim_time m_busy;               /* processing time booked since the last report, ns */
    sim_time m_last;               /* the last report (or the start), ns */
    sim_time started;              /* the current incarnation's start, ns */
    sim_time renew_next;           /* the renewer's next scheduled run (fixed rate) */
    sim_time proc_free;            /* processing capacity busy until, ns */
    /* leases held over time: change points */
    sim_time *log_t;               /* owned */
    uint32_t *log_n;               /* owned */
    size_t n_log, cap_log;
    sim_time idle_since;           /* running without a lease since, or -1 */
    uint32_t *per_min;             /* owned: summary's leases_per_minute */
    kds_kcl_worker_summary sum;
};

/* A scheduled worker event (configuration or rolling deployment). */
typedef struct wev {
    worker *w;
    kds_kcl_event ev;
} wev;

struct kcl {
    kds_consumer base;            /* first: the run sees a kds_consumer */
    kds_kcl_cfg cfg;              /* copied; arrays borrowed */
    const char *app_name;         /* borrowed */
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;                 /* sim-owned */
    kds_lease_table *table;       /* shared, referenced */
    bool shared;
    sim_time renew_period, take_period;
    sim_time lam_period, discovery_period; /* 3.x */
    worker *workers;              /* owned */
    size_t n_workers;
    wev *wevs;                    /* owned */
    size_t n_wevs;
    slot **slots;                 /* owned; by shard index, lazily made */
    size_t n_slots;
    proc *procs;                  /* list of live processor structures */
    kds_kcl_move *moves;          /* owned */
    size_t n_moves, cap_moves;
    kds_kcl_change *changes;      /* owned */
    size_t n_changes, cap_changes, first_open;
    uint64_t checked_version;
    kds_consumer_stats efo_cs;    /* what the EFO subscriptions report (merged at the end) */
    sim_time efo_begin;           /* the first start of a worker (when the EFO consumer
                                     registers), or -1 */
    bool holding;                 /* a worker starts before the end of the run: the slots
                                     hold the shards from the start of the run
                                     (hold_heads), not only from efo_begin */
    kds_slice *scratch;           /* owned */
    size_t n_scratch, cap_scratch;
    uint32_t *order;              /* owned scratch of lease indices */
    size_t cap_order;
    uint64_t dup_failover, replay_expected, skipped_gaps;
    kds_kcl_leader *leaders;      /* owned: 3.x leader log */
    size_t n_leaders, cap_leaders;
    uint64_t lam_runs, handoffs;  /* 3.x */
    uint64_t elections, audits, holes_seen, shard_syncs, leases_recreated; /* auditor */
    kds_kcl_worker_summary *wsum; /* owned */
    kds_kcl_summary sum;
    char violation[320];          /* the lease ownership invariant's first violation
                                     found during the run, or "" */
};


/* ---- small helpers of both files ---- */

/* True while the worker is started (syncing or running). */
static inline bool is_up(const worker *w)
{
    return w->state == W_SYNC || w->state == W_RUNNING;
}

/* True while the worker is stalled by a pause at `now`. */
static inline bool paused(const worker *w, sim_time now)
{
    return now < w->pause_until;
}

/* Worker w's entry for lease item `lease`, or NULL if it does not hold it. */
static inline held *held_find(worker *w, uint32_t lease)
{
    if (lease >= w->n_held_slot || w->held_slot[lease] < 0)
        return NULL;
    return &w->held[w->held_slot[lease]];
}

/* gsl_ran_shuffle draws nothing sensible for fewer than two items (and fails on 0). */
static inline void shuffle(gsl_rng *r, uint32_t *v, size_t n)
{
    if (n > 1)
        gsl_ran_shuffle(r, v, n, sizeof *v);
}

/* Cancel a scheduled event, if any, and forget its id. */
static inline void cancel(sim *s, sim_event_id *id)
{
    if (*id) {
        sim_cancel(s, *id);
        *id = 0;
    }
}

/* The start of a run of one of worker w's periodic tasks at `now`, the task's event
 * `*id` having just fired: false if the worker is not running (the task ends), or is
 * paused (the task is put off to the pause's end, `fn` again). */
static inline bool task_due(worker *w, sim_event_id *id, sim_fn fn, sim_time now)
{
    *id = 0;
    if (w->state != W_RUNNING)
        return false;
    if (paused(w, now)) {
        *id = sim_at(w->app->sim, w->pause_until, fn, w);
        return false;
    }
    return true;
}

/* ---- kds_kcl.c, for kds_kcl_lam.c ---- */


/* Stamp worker w's map of lease counters with a scan made at `now` (kcl.md 1.1 step 3,
 * also the LAM's expiry tracking): the caller scanned the table successfully. */
void kds_kcl_stamp_scan(worker *w, sim_time now);

/* The taker's map entries of lease item i (its counter when last seen to change, and
 * when): i must be at least the table's first live item as of the last stamp scan
 * (every reader runs after one, over items from first_live). */
static inline sim_time *kds_kcl_seen_at(const worker *w, size_t i)
{
    SIM_DEBUG_ASSERT(i >= w->seen_base && i - w->seen_base < w->n_seen);
    return &w->seen_at[i - w->seen_base];
}

static inline uint64_t *kds_kcl_seen_counter(const worker *w, size_t i)
{
    SIM_DEBUG_ASSERT(i >= w->seen_base && i - w->seen_base < w->n_seen);
    return &w->seen_counter[i - w->seen_base];
}

/* True if lease item i, seen by worker w's map at `now`, is expired (its counter
 * unchanged for more than the failover time). */
bool kds_kcl_expired(const worker *w, size_t i, sim_time now);

/* Worker w now holds lease item i (counter as in the table), taken from owner `prev`
 * (-1 none), which was still renewing it or not (kds_lease_renewing, as the take or the
 * leader's assignment found it), for `cause`: starts its processor, logs the move. */
void kds_kcl_acquired(worker *w, uint32_t i, int32_t prev, bool prev_renewing,
                      kds_kcl_cause cause);

/* Mark convergence of the open worker changes if the leases are balanced, judged from
 * what the workers hold (`force`: even if the table's version did not change since the
 * last check). */
void kds_kcl_check_converged(kcl *a, bool force);

/* ---- kds_kcl_lam.c ---- */

/* Fill the 3.x defaults of kcl.md into `c`. */
void kds_kcl_lam_defaults(kds_kcl_lam_cfg *c);

/* Start worker w's 3.x tasks (leader lock, LAM, discovery, metrics reports) at now. */
void kds_kcl_lam_start(worker *w);

/* Stop worker w's 3.x tasks; a graceful stop also releases the leader lock. */
void kds_kcl_lam_stop(worker *w, bool graceful);

#endif
