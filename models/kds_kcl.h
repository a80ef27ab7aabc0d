/* kds_kcl.h - a Kinesis Client Library application: workers sharing shards through a
 * DynamoDB lease table (kds_lease.h), record processors, checkpoints and failover.
 *
 * model.md section 5; kcl.md is the specification for every timing and rule (KCL 2.x
 * lease taker, the default algorithm of 2.x and the compatible mode of 3.x).
 *
 * Workers. Each worker runs a lease renewer every failover/3 - epsilon (3,308 ms, fixed
 * rate) and a lease taker every 2 x (failover + epsilon) (20,050 ms, fixed delay), both
 * first at its start. The renewer renews every held lease with a conditional write; a
 * lease whose write fails its condition is lost, a throttled renewal is not retried in
 * that pass, and a lease not renewed for the failover time on the worker's own clock is
 * dropped by the worker itself. The taker scans the whole table, stamps each lease with
 * the scan time when its counter changed since its previous scan (never-seen unowned
 * leases get "never"), and treats as available the unowned leases and those unchanged
 * for more than the failover time. Its target is ceil(leases / workers) (1 when workers
 * >= leases), workers being the distinct owners of unexpired leases plus itself. Leases
 * unchanged for 3 x failover (and new ones) are taken first, all of them, ignoring the
 * target; otherwise it takes up to (target - held) available leases at random; when
 * none is available it steals at most one lease per pass from the single most loaded
 * worker. Random choices use the worker's own generator.
 *
 * Record processors. Each held lease gets a processor (ShardConsumer): it waits until
 * every parent lease reached SHARD_END (checked every parentShardPollInterval), starts
 * at the lease's checkpoint (TRIM_HORIZON, LATEST, AT_TIMESTAMP or a position), reads
 * through polling (GetRecords of at most max_records every idleTimeBetweenReads through
 * the shard's shared 5 calls/s, with up to max_pending fetched batches waiting) or
 * through enhanced fan-out (kds_efo.h), and processes batches one at a time: a per-batch
 * time plus a per-record time, bounded by the worker's processing capacity shared by its
 * leases. It checkpoints by policy (every N records, every T seconds, after every
 * batch), always at SHARD_END, and on a graceful shutdown. A checkpoint is a
 * conditional write: a throttled one is retried after the next batch; a failed one means
 * the lease was lost. A new owner resumes at the last checkpoint, so what the old owner
 * processed after it is delivered again: counted as duplicates, per lease move.
 *
 * Resharding. At the end of a closed shard the processor creates the child leases (no
 * owner, TRIM_HORIZON, parents set) and checkpoints SHARD_END; the parent lease stays
 * held and renewed, counting toward its owner's load, until lease cleanup (every
 * cleanup_interval) deletes it once all its children have checkpointed. The leader's
 * shard-sync auditor (every 2 min, kcl.md 4.4) scans the table and, after the same hole
 * in the open leases' hash ranges three runs in a row, creates the missing leases; in
 * 2.x the leader comes from an election on every worker at its start, 60 s later and
 * every 5 min after (a scan each, kcl.md 7.1).
 *
 * Events: start, graceful stop (processors checkpoint; the leases stay owned until
 * they expire, as KCL 2.x does), crash, restart after a delay, a pause (every thread of
 * the worker stalls: no renewal, no taking, no processing), and a rolling deployment of
 * the fleet. Applications with one application name in one world share one lease
 * table (and see each other's workers); another name is another table, started from
 * the initial position. Simulation events are per renewal pass, taker pass, GetRecords
 * call (or EFO push batch) and processed batch, never per record.
 *
 * KCL 3.x lease assignment (kcl.md section 7; kds_kcl_lam.c) replaces the taker when
 * `assignment` is not KDS_KCL_TAKER: the workers elect a leader through a lock (lease
 * 120 s, heartbeat 30 s); the leader's LeaseAssignmentManager scans the table every
 * 20 s (fixed delay), assigns unowned and expired leases to the active workers (those
 * whose metrics report, every 30 s, is under 60 s old) with the most headroom, and at
 * its first run and every third after it moves leases from loaded workers to light ones
 * (variance balancing, or lease counts), by a graceful handoff: the old owner
 * checkpoints and releases, then the new owner, which finds its leases by querying the
 * owner index every 9,975 ms, starts at that checkpoint. Events: per run, per report,
 * per discovery, never per record.
 */
#ifndef KDS_KCL_H
#define KDS_KCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kds_consumer.h"
#include "kds_efo.h"
#include "kds_lease.h"
#include "kds_poller.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

/* ---- configuration ---------------------------------------------------------------- */

typedef enum {
    KDS_KCL_EV_START, /* start (or restart) the worker */
    KDS_KCL_EV_STOP,  /* graceful shutdown */
    KDS_KCL_EV_CRASH, /* the process dies */
    KDS_KCL_EV_PAUSE  /* every thread stalls for `len` (a garbage-collection pause) */
} kds_kcl_event_kind;

typedef struct kds_kcl_event {
    kds_kcl_event_kind kind;
    sim_time at;            /* ns from the start of the run */
    sim_time len;           /* PAUSE: its length, ns */
    sim_time restart_after; /* STOP, CRASH: start again this long after (-1 = never) */
} kds_kcl_event;

typedef struct kds_kcl_worker_cfg {
    const char *name;            /* borrowed; unique within the application */
    sim_time start;              /* first start, ns (-1 = only by an event) */
    double capacity;             /* records/s the worker can process over all its
                                    leases (0 = unlimited) */
    const kds_kcl_event *events; /* borrowed array */
    size_t n_events;
} kds_kcl_worker_cfg;

/* A rolling deployment: worker i (in configuration order) shuts down at
 * at + i x interval and starts again `downtime` later. */
typedef struct kds_kcl_deploy_cfg {
    bool enabled;
    sim_time at;       /* ns */
    sim_time interval; /* between two workers, ns */
    sim_time downtime; /* each worker is down this long, ns */
    bool graceful;     /* shut down gracefully (true) or kill (false) */
} kds_kcl_deploy_cfg;

/* How leases are assigned (kcl.md sections 1 and 7). */
typedef enum {
    KDS_KCL_TAKER,              /* KCL 2.x (and 3.x in 2.x-compatible mode): every worker
                                   takes and steals leases itself */
    KDS_KCL_WORKER_UTILIZATION, /* KCL 3.x default (WORKER_UTILIZATION_AWARE): a leader
                                   assigns, balancing the workers' metric */
    KDS_KCL_LEASE_COUNT         /* KCL 3.x LEASE_COUNT_BASED: a leader assigns, balancing
                                   lease counts */
} kds_kcl_assignment;

/* The worker metric of KDS_KCL_WORKER_UTILIZATION (the model has no host CPU). */
typedef enum {
    KDS_KCL_METRIC_THROUGHPUT, /* the KCL's mode without a platform provider: 100 x the
                                  worker's assigned throughput / the fleet's average */
    KDS_KCL_METRIC_CPU         /* busy fraction of the worker's `capacity`, percent (0
                                  when the capacity is unlimited) */
} kds_kcl_metric;

/* KCL 3.x settings (kcl.md sections 0 and 7); used unless assignment is KDS_KCL_TAKER. */
typedef struct kds_kcl_lam_cfg {
    sim_time interval;           /* leaseAssignmentIntervalMillis (0 = 2 x failover) */
    sim_time discovery_interval; /* non-leaders' Query (0 = interval / 2 - epsilon) */
    uint32_t balance_every;      /* varianceBalancingFrequency: every Nth run (3) */
    double rebalance_threshold;  /* reBalanceThresholdPercentage (10) */
    double dampening;            /* dampeningPercentage (60) */
    bool allow_overshoot;        /* allowThroughputOvershoot (true) */
    uint32_t failed_runs_to_resign; /* the leader releases the lock after this many
                                       consecutive failed runs (3) */
    bool graceful_handoff;       /* isGracefulLeaseHandoffEnabled (true) */
    sim_time handoff_timeout;    /* gracefulLeaseHandoffTimeoutMillis (30 s) */
    sim_time handoff_poll;       /* the old owner's handler checks this often (2 s) */
    sim_time lock_lease;         /* leader lock lease duration (120 s) */
    sim_time lock_heartbeat;     /* leader lock heartbeat, and the non-leaders' re-check
                                    period (30 s) */
    kds_kcl_metric metric;       /* worker metric (throughput) */
    sim_time metrics_first;      /* first metrics report after a start (2 s) */
    sim_time metrics_interval;   /* metrics report period (30 s) */
    uint32_t metrics_keep;       /* reports kept for the average (10, at most 10) */
    double metrics_alpha;        /* workerMetricsEMAAlpha, also of lease throughput (0.5) */
    uint32_t metrics_expiry_factor; /* a worker is active while its last report is less
                                       than this x metrics_interval old (2) */
} kds_kcl_lam_cfg;

/* Most worker-metrics reports a worker keeps (the KCL's 10). */
#define KDS_KCL_METRICS_KEEP_MAX 10

typedef struct kds_kcl_cfg {
    const char *name;             /* borrowed: the consumer's name */
    const char *application_name; /* borrowed: the lease table's name (NULL = name) */

    /* Where new leases start (StreamTracker's initial position; LATEST by default).
     * Child leases always start at TRIM_HORIZON. */
    kds_start_kind initial;       /* TRIM_HORIZON, LATEST or AT_TIMESTAMP */
    sim_time initial_time;        /* AT_TIMESTAMP, ns */

    /* Retrieval. */
    bool efo;                     /* enhanced fan-out (true) or polling */
    kds_efo_cfg efo_cfg;          /* EFO push mechanics */
    sim_time idle;                /* idleTimeBetweenReadsInMillis (1,500 ms) */
    uint32_t max_records;         /* maxRecords per GetRecords (10,000); with polling,
                                     the stream's max_records_per_call caps it */
    uint32_t max_pending;         /* fetched batches waiting to be processed (4,
                                     maxPendingProcessRecordsInput) */
    uint32_t max_pending_records; /* ...holding at most this many records (30,000) */
    uint64_t max_pending_bytes;   /* ...and this many bytes (8 MiB) */
    sim_dist call_latency_ms;     /* GetRecords round trip, ms (lognormal, median 40) */

    /* The record processor. */
    sim_dist process_ms;          /* processing time per batch, ms (0) */
    double process_ms_per_record; /* plus this per record, ms (0) */
    uint64_t ckpt_records;        /* checkpoint every N records processed (0 = off) */
    sim_time ckpt_interval;       /* checkpoint when this long since the last (0 = off) */
    bool ckpt_batch;              /* checkpoint after every batch */
    bool ckpt_on_shutdown;        /* checkpoint in shutdownRequested (true) */

    /* Lease management (kcl.md section 0 and 1). */
    sim_time failover;            /* failoverTimeMillis (10 s) */
    sim_time epsilon;             /* epsilonMillis (25 ms) */
    sim_time renew_interval;      /* 0 = failover / 3 - epsilon (kds_kcl_renew_period) */
    sim_time take_interval;       /* 0 = 2 x (failover + epsilon) */
    uint32_t max_leases_per_worker; /* maxLeasesForWorker (0 = unlimited) */
    uint32_t max_steal;           /* maxLeasesToStealAtOneTime (1) */
    bool priority_leases;         /* enablePriorityLeaseAssignment (true) */
    uint32_t very_old_factor;     /* very old = unchanged for this x failover (3) */
    uint32_t take_retries;        /* TAKE_RETRIES on throttling (3) */
    sim_time parent_poll;         /* parentShardPollIntervalMillis (10 s) */
    sim_time cleanup_interval;    /* completed-lease cleanup check (5 min) */
    sim_time task_backoff;        /* taskBackoffTimeMillis (500 ms) */
    sim_dist sync_wait_ms;        /* wait of a worker that finds the table empty, which
                                     it checks every 3 s, before it creates the leases,
                                     ms (uniform 1-30 s) */
    sim_time sync_sleep;          /* shardSyncIntervalMillis: the ShardSyncTask's sleep
                                     after a sync it ran, so the start-up delay of a worker
                                     that created the leases (60 s; kcl.md 4.4) */
    sim_time shard_sync_interval; /* leasesRecoveryAuditorExecutionFrequencyMillis: the
                                     periodic shard-sync auditor's delay between runs
                                     (2 min; first run 60 s after the start) */
    uint32_t shard_sync_confidence; /* leasesRecoveryAuditorInconsistencyConfidenceThreshold:
                                       the same hole seen this many runs in a row starts a
                                       shard sync (3) */
    kds_lease_table_cfg table;    /* the lease table's capacity */
    kds_kcl_assignment assignment;/* the 2.x taker (default) or a 3.x leader */
    kds_kcl_lam_cfg lam;          /* 3.x settings */

    const kds_kcl_worker_cfg *workers; /* borrowed array, >= 1 */
    size_t n_workers;
    kds_kcl_deploy_cfg deploy;
} kds_kcl_cfg;

/* KCL 2.x defaults (kcl.md), enhanced fan-out, initial position LATEST, no workers;
 * the 3.x settings at their KCL defaults, unused until `assignment` selects 3.x. */
void kds_kcl_cfg_defaults(kds_kcl_cfg *cfg);

/* The renewer's period: renew_interval when set, otherwise the KCL's failover / 3 -
 * epsilon as CommonCalculations.getRenewerTakerIntervalMillis computes it, in whole
 * milliseconds (10,000 / 3 - 25 = 3,308 ms, not 3,308.33). Zero or negative for a
 * configuration the loader refuses. */
sim_time kds_kcl_renew_period(const kds_kcl_cfg *cfg);

/* kds_consumer_make_fn for `kcl` consumers: cfg is a kds_kcl_cfg. NULL when out of
 * memory. Applications of one world with the same application_name share one lease
 * table (the first one's capacity settings apply). */
kds_consumer *kds_kcl_make(sim *s, kds_stream *st, const void *cfg);

/* ---- results (plain data for the report writers) ---------------------------------- */

typedef enum {
    KDS_KCL_TAKE,     /* an unowned lease taken (new, or a finished shard's child) */
    KDS_KCL_STEAL,    /* taken from a live owner to balance the load */
    KDS_KCL_EXPIRY,   /* taken after its owner stopped renewing (crash, pause,
                         throttled renewals) */
    KDS_KCL_SHUTDOWN, /* taken after its owner shut down gracefully */
    KDS_KCL_BALANCE,  /* 3.x: moved by the leader's balancing from a live owner */
    KDS_KCL_N_CAUSES
} kds_kcl_cause;

/* The causes a KCL 2.x application has: the first ones of kds_kcl_cause. */
#define KDS_KCL_N_CAUSES_2X KDS_KCL_BALANCE

/* "take", "steal", "expiry", "shutdown", "balance" (static): the report's names of
 * the causes; "?" for a value out of range. */
const char *kds_kcl_cause_name(kds_kcl_cause c);

/* "taker", "worker_utilization", "lease_count" (static). */
const char *kds_kcl_assignment_name(kds_kcl_assignment a);

typedef struct kds_kcl_move {
    sim_time at;              /* ns */
    uint32_t shard;           /* the lease's shard index */
    kds_kcl_cause cause;
    const char *from;         /* previous owner's worker name, NULL when unowned */
    const char *from_app;     /* its KCL consumer (another one when the table is shared) */
    const char *to;           /* the taking worker */
    bool from_healthy;        /* the previous owner was still renewing the lease: running,
                                 not paused since its counter last moved
                                 (kds_lease_renewing) */
    uint64_t replay_expected; /* records processed after the lease's last checkpoint when
                                 it was taken */
    uint64_t duplicates;      /* records the new owner delivered a second time */
} kds_kcl_move;

typedef struct kds_kcl_change {
    sim_time at;              /* ns */
    const char *worker;       /* borrowed */
    const char *what;         /* "start", "stop", "crash", "pause", "resume" (the end
                                 of a pause) (static) */
    sim_time converged_after; /* until every lease was held (kds_kcl.c, held_balanced) by
                                 its owner, a running worker, and the loads differed by
                                 at most one, ns; -1 = never */
} kds_kcl_change;

typedef struct kds_kcl_leader {
    sim_time at;              /* ns */
    const char *worker;       /* borrowed: the worker that took the leader lock */
} kds_kcl_leader;

typedef struct kds_kcl_worker_summary {
    const char *name;            /* borrowed */
    const char *state;           /* at the end: "running", "paused", "stopped",
                                    "crashed", "not started" */
    uint32_t leases_held_end;    /* leases it held at the end (0 unless running or
                                    paused) */
    uint64_t records_processed;  /* records its processors finished (replays included) */
    uint64_t records_reprocessed;/* of which delivered before (by any worker) */
    uint32_t incarnations;       /* starts */
    double idle_s;               /* time running while holding no lease, s */
    uint64_t renewals, renewals_throttled;
    uint64_t leases_taken, leases_stolen; /* all takes (steals included), steals */
    uint64_t leases_lost;        /* renewal, checkpoint or handoff found another owner */
    uint64_t leases_self_expired;/* dropped by itself after failing to renew */
    uint64_t scans, scans_throttled;  /* taker passes (2.x) or LAM runs as leader (3.x) */
    uint64_t audits;             /* shard-sync auditor runs as the leader (a Scan each) */
    uint64_t startup_checks;     /* its checks of the table at start (isLeaseTableEmpty: a
                                    Scan of one item each), throttled ones included */
    uint64_t checkpoints, checkpoints_throttled;
    uint64_t discoveries;        /* 3.x: owner-index queries */
    uint64_t handoffs_out;       /* 3.x: leases it handed over gracefully (checkpointed) */
    uint64_t handoffs_timed_out; /* 3.x: ...of which forced after the handoff timeout */
    const uint32_t *leases_per_minute; /* leases held at the end of each minute, or of each
                                          minutes_per_value minutes (owned by the
                                          application) */
    size_t n_minutes;            /* values in leases_per_minute */
    size_t minutes_per_value;    /* 1, or the power of two a long run's lease table
                                    series merged to (kds_lease_table_cfg.series_limit) */
} kds_kcl_worker_summary;

typedef struct kds_kcl_summary {
    const char *application_name;
    bool table_shared;           /* another application uses the same table */
    const kds_lease_table *table;/* the lease table (shared: the same for both) */
    const kds_kcl_worker_summary *workers;
    size_t n_workers;
    uint64_t moves_by_cause[KDS_KCL_N_CAUSES];
    uint64_t moves;              /* sum of the above */
    uint64_t moves_from_healthy; /* EXPIRY moves whose previous owner was still renewing
                                    (from_healthy): churn */
    const kds_kcl_move *move_log;/* every move, in time order */
    size_t n_move_log;
    const kds_kcl_change *changes; /* worker events, in time order */
    size_t n_changes;
    uint64_t duplicates_from_failover; /* records delivered again after lease moves */
    uint64_t replay_expected;    /* sum of the moves' replay_expected */
    uint64_t records_skipped_gaps; /* records skipped after the first start of a lease:
                                      a restart at LATEST, or a checkpoint written by
                                      another application sharing the table */
    uint32_t idle_workers_end;   /* running workers holding no lease at the end */
    uint32_t running_workers_end; /* workers running or paused at the end */
    uint64_t checkpoints, checkpoints_throttled;
    kds_kcl_assignment assignment;
    const kds_kcl_leader *leaders; /* 3.x: every taking of the leader lock, in time order */
    size_t n_leaders;
    uint64_t lam_runs;           /* 3.x: LAM runs by a leader */
    uint64_t handoffs;           /* 3.x: graceful handoffs started by the leader */
    uint64_t elections;          /* 2.x: leader elections (a Scan each), all workers */
    uint64_t audits;             /* shard-sync auditor runs by a leader (a Scan each) */
    uint64_t holes_seen;         /* ...that found a hole in the open leases' hash ranges */
    uint64_t shard_syncs;        /* shard syncs the auditor started */
    uint64_t leases_recreated;   /* leases those syncs created */
} kds_kcl_summary;

/* The index, in the sorted list of `n` (>= 1) distinct lease owners, of the one the
 * KCL 2.x leader decider elects: DeterministicShuffleShardSyncLeaderDecider shuffles the
 * sorted owners with java.util.Random(1947) (Collections.shuffle) and takes the first
 * (kcl.md 7.1). Depends on n only. */
size_t kds_kcl_leader_index(size_t n);

/* java.util.Random's generator (a 48-bit linear congruential generator), as far as the
 * leader decider needs it: seeded as `new Random(seed)`, next(bits) for 1 <= bits <= 32,
 * nextInt(bound) for bound >= 1. Exposed for tests against Java's published values. */
typedef struct kds_java_random {
    uint64_t seed;
} kds_java_random;
void kds_java_random_init(kds_java_random *r, int64_t seed);
int32_t kds_java_random_next(kds_java_random *r, int bits);
int32_t kds_java_random_next_int(kds_java_random *r, int32_t bound);

/* The results of a KCL consumer after kds_world_finish(), or NULL if `c` is not a KCL
 * consumer. Borrowed from the consumer. */
const kds_kcl_summary *kds_kcl_summary_get(const kds_consumer *c);

/* The lease table of a KCL consumer at any time of the run (for tests and probes), or
 * NULL if `c` is not a KCL consumer. Borrowed. */
const kds_lease_table *kds_kcl_table(const kds_consumer *c);

#endif
