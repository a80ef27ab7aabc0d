/* kds_lease.h - the KCL's DynamoDB lease table: one item per shard, conditional
 * writes, and read and write capacity that throttles.
 *
 * model.md section 5 and kcl.md sections 1-3 and 6. The table holds one lease per
 * shard (leaseKey = the shard), with its owner, its leaseCounter (the heartbeat), its
 * checkpoint, ownerSwitchesSinceCheckpoint and its parents. Every renewal, take and
 * checkpoint is a conditional UpdateItem on leaseCounter: it fails when another worker
 * changed the lease since the caller last saw it. Every taker pass scans the whole
 * table.
 *
 * Capacity: on-demand tables never throttle (their own limits are far above a lease
 * table's traffic); provisioned tables have read and write capacity units as token
 * buckets that keep up to `burst` seconds of unused capacity (DynamoDB keeps five
 * minutes). A request is admitted while its bucket holds capacity and is then charged
 * in full (a large scan may overdraw it); a refused request is throttled
 * (ProvisionedThroughputExceededException) and consumes nothing. A write whose
 * condition fails still consumes its write units, as DynamoDB charges it.
 *
 * Costs (DynamoDB): a write of an item up to 1 KB is 1 write unit; a strongly
 * consistent read of up to 4 KB is 1 read unit; the scan is eventually consistent: half
 * a unit per 4 KB of items scanned. Items are taken to weigh `item_bytes` each.
 *
 * The table also keeps the registry of owners (worker incarnations) and their health,
 * so that several KCL applications sharing one application name share one table and
 * see each other's workers. DynamoDB calls take no simulated time.
 *
 * KCL 3.x (kcl.md section 7) adds to each lease its throughput and a checkpointOwner
 * (set during a graceful handoff), a Query of the owner index (GSI), the leader's
 * assignments and handoffs, and two side tables that stand here as fields of the owner
 * registry and of the table: the worker-metrics entries and the leader lock
 * (coordinator state). The side tables are on-demand (the KCL creates them so): their
 * requests are counted but charge no capacity of the lease table.
 */
#ifndef KDS_LEASE_H
#define KDS_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kds_bucket.h"
#include "sim.h"
#include "sim_stats.h"

typedef enum { KDS_LEASE_ON_DEMAND, KDS_LEASE_PROVISIONED } kds_lease_billing;

/* Bytes of one entry of the keys-only owner index (leaseOwner and leaseKey): an
 * assumption that sets the cost of a 3.x discovery Query. */
#define KDS_LEASE_KEY_BYTES 100

typedef struct kds_lease_table_cfg {
    kds_lease_billing billing; /* PAY_PER_REQUEST since KCL 2.3.7 (the default) */
    uint32_t rcu;              /* provisioned read capacity units (10, the KCL's initial) */
    uint32_t wcu;              /* provisioned write capacity units (10) */
    double burst_s;            /* unused capacity kept, s (300: DynamoDB's five minutes;
                                  at least one second's worth is always there) */
    uint32_t item_bytes;       /* size of one lease item, B (300; an assumption) */
    size_t series_limit;       /* buckets each per-minute series keeps before its minutes
                                  merge (SIM_SERIES_LIMIT; tests lower it) */
} kds_lease_table_cfg;

/* Zero *cfg and fill in the defaults given in the field comments (on-demand billing,
 * the KCL's 10 read and 10 write units if provisioned). Never fails. */
void kds_lease_table_cfg_defaults(kds_lease_table_cfg *cfg);

/* The largest provisioned table kds_lease_table_new takes: DynamoDB's default quota of
 * 40,000 read and write units, and its 300 s of burst. */
#define KDS_LEASE_MAX_UNITS 40000
#define KDS_LEASE_MAX_BURST_S 300

/* What a lease's checkpoint holds: a sentinel or a position. */
typedef enum {
    KDS_CKPT_TRIM_HORIZON,
    KDS_CKPT_LATEST,
    KDS_CKPT_AT_TIMESTAMP,
    KDS_CKPT_SEQUENCE,  /* ckpt_pos: the next record to process (the checkpointed
                           sequence number's position + 1) */
    KDS_CKPT_SHARD_END
} kds_ckpt_kind;

/* "TRIM_HORIZON", "LATEST", "AT_TIMESTAMP", "SEQUENCE", "SHARD_END" (static); "?" for
 * a value out of range. */
const char *kds_ckpt_kind_name(kds_ckpt_kind k);

typedef struct kds_lease {
    uint32_t shard;          /* leaseKey: the shard's index */
    int32_t owner;           /* leaseOwner: an owner id (below), or -1 for none */
    uint64_t counter;        /* leaseCounter */
    kds_ckpt_kind ckpt;      /* checkpoint */
    uint64_t ckpt_pos;       /* KDS_CKPT_SEQUENCE: next position to process */
    sim_time ckpt_time;      /* KDS_CKPT_AT_TIMESTAMP: the timestamp, ns */
    uint32_t owner_switches; /* ownerSwitchesSinceCheckpoint */
    int32_t ckpt_owner;      /* checkpointOwner (3.x): the owner handing the lease over
                                during a graceful handoff, or -1 */
    double throughput;       /* throughputKBps (3.x), here B/s; < 0 = never written */
    int32_t moved_from;      /* not persisted: the worker that held the lease before the
                                leader's latest assignment or handoff (-1 none; during a
                                handoff, its checkpointOwner), for the move log */
    int move_cause;          /* not persisted: the assigning KCL's cause code (opaque) */
    bool moved_renewing;     /* not persisted: whether moved_from was still renewing the
                                lease when the leader moved it (kds_lease_renewing) */
    sim_time counter_at;     /* not persisted: when leaseCounter last changed (or the
                                lease was created), ns */
    int32_t parents[2];      /* parentShardId: shard indices, or -1 */
    bool deleted;            /* removed by lease cleanup (the slot stays, unused) */
    sim_time created;        /* ns */
} kds_lease;

typedef enum {
    KDS_DDB_OK,
    KDS_DDB_THROTTLED,        /* ProvisionedThroughputExceededException */
    KDS_DDB_CONDITION_FAILED  /* ConditionalCheckFailedException */
} kds_ddb_status;

typedef enum {
    KDS_DDB_SCAN,       /* taker pass: Scan of the whole table */
    KDS_DDB_GET,        /* GetItem: initialisation, parent checks */
    KDS_DDB_RENEW,      /* UpdateItem leaseCounter + 1 */
    KDS_DDB_TAKE,       /* UpdateItem leaseOwner = me (take or steal) */
    KDS_DDB_CHECKPOINT, /* UpdateItem checkpoint */
    KDS_DDB_CREATE,     /* PutItem of a new lease */
    KDS_DDB_DELETE,     /* DeleteItem (cleanup of a finished parent) */
    /* KCL 3.x only (reports list these only for 3.x applications): */
    KDS_DDB_QUERY,      /* Query of the owner index: a worker's lease discovery */
    KDS_DDB_ASSIGN,     /* UpdateItem by the leader: an assignment or a handoff's start,
                           and the old owner's transfer at a handoff's end */
    KDS_DDB_METRICS,    /* worker-metrics table: a report, or the leader's read */
    KDS_DDB_LOCK,       /* coordinator-state table: the leader lock */
    KDS_DDB_N_OPS
} kds_ddb_op;

/* The operation's name in the report's by-operation objects ("scan", "renew", ...;
 * static); "?" for a value out of range. */
const char *kds_ddb_op_name(kds_ddb_op op);

/* The operations a KCL 2.x application makes: the first ones of kds_ddb_op. */
#define KDS_DDB_N_OPS_2X KDS_DDB_QUERY

/* Health of an owner, as the simulator knows it (the KCL does not: it only sees
 * counters). Used to tell a lease taken from a dead, stopped or stalled worker from one
 * taken from a healthy worker (churn: kds_lease_renewing). */
typedef enum {
    KDS_OWNER_RUNNING,
    KDS_OWNER_PAUSED,  /* a stall (garbage collection): alive but silent */
    KDS_OWNER_STOPPED, /* shut down gracefully */
    KDS_OWNER_DEAD     /* crashed */
} kds_owner_state;

typedef struct kds_lease_owner {
    const char *worker;   /* borrowed: the worker's name */
    const char *app;      /* borrowed: the KCL consumer it belongs to */
    uint32_t incarnation; /* 1 for the first start, 2 after a restart, ... */
    kds_owner_state state;
    sim_time resumed_at;  /* the end of its latest pause, ns (-1: never paused) */
    sim_time metrics_at;  /* 3.x: its worker-metrics entry's last update, ns (-1 none) */
    double metric;        /* ...and the value written then */
} kds_lease_owner;

typedef struct kds_lease_table_stats {
    uint64_t requests[KDS_DDB_N_OPS];   /* requests made, throttled ones included */
    uint64_t throttled[KDS_DDB_N_OPS];  /* refused for capacity */
    uint64_t cond_failed[KDS_DDB_N_OPS];/* admitted, condition false */
    uint64_t read_milli;                /* read capacity consumed, thousandths of a unit */
    uint64_t write_milli;               /* write capacity consumed, thousandths of a unit */
    uint64_t throttled_reads;           /* read requests throttled */
    uint64_t throttled_writes;          /* write requests throttled */
    sim_series read_units_min;          /* read units consumed per minute */
    sim_series write_units_min;         /* write units consumed per minute */
    sim_series throttled_min;           /* requests throttled per minute (reads + writes) */
} kds_lease_table_stats;

typedef struct kds_lease_table {
    kds_lease_table_cfg cfg;  /* copied */
    const char *name;         /* borrowed: the application name */
    sim *sim;                 /* borrowed */
    kds_lease *items;         /* owned; by creation order; indices never change */
    size_t n, cap;
    size_t n_live;            /* items not deleted */
    size_t first_live;        /* the first item not deleted, or n: deleted items stay
                                 deleted, and the oldest (finished parents) go first, so
                                 loops over the live items start here, not at 0 */
    int32_t *by_shard;        /* owned; item index of shard i, or -1 */
    size_t n_by_shard;
    kds_bucket rbucket;       /* provisioned: read milli-units */
    kds_bucket wbucket;       /* provisioned: write milli-units */
    kds_lease_owner *owners;  /* owned; by id */
    size_t n_owners, cap_owners;
    uint64_t version;         /* bumped by every change of an owner or a lease's owner, and
                                 by the KCL applications (kds_kcl.c) when a worker's held
                                 leases change: what their convergence depends on */
    int32_t leader;           /* 3.x: the leader lock's holder, or -1 */
    sim_time leader_beat;     /* ...its last heartbeat (or acquisition), ns */
    int refs;                 /* applications sharing the table (kds_lease_table_ref) */
    kds_lease_table_stats st;
} kds_lease_table;

/* A new empty table for application `name` (borrowed), with one reference. The
 * capacities must be 1 to KDS_LEASE_MAX_UNITS and the burst at most
 * KDS_LEASE_MAX_BURST_S (asserted; the loader checks them). Returns NULL when out of
 * memory. */
kds_lease_table *kds_lease_table_new(sim *s, const char *name, const kds_lease_table_cfg *cfg);

/* Take one more reference (a second application with the same name). */
void kds_lease_table_ref(kds_lease_table *t);

/* Drop a reference; frees the table with the last one. NULL-safe. */
void kds_lease_table_unref(kds_lease_table *t);

/* The item index of shard `shard`'s lease, or -1 if it has none (or it was deleted). */
int32_t kds_lease_find(const kds_lease_table *t, uint32_t shard);

/* PutItem of a new unowned lease for `shard` with checkpoint `ckpt` (and `ckpt_time`
 * for AT_TIMESTAMP) and parents p0, p1 (-1 for none), conditional on the lease not
 * existing. On KDS_DDB_OK *index (may be NULL) receives the new item's index. */
kds_ddb_status kds_lease_create(kds_lease_table *t, uint32_t shard, int32_t p0, int32_t p1,
                                kds_ckpt_kind ckpt, sim_time ckpt_time, int32_t *index);

/* Scan the whole table (what one taker pass reads). On KDS_DDB_OK the caller reads
 * t->items directly. O(1): only the cost is computed here. */
kds_ddb_status kds_lease_scan(kds_lease_table *t);

/* isLeaseTableEmpty: a Scan with Limit 1, which reads one item at most (eventually
 * consistent: half a read unit however large the table). Counted as a scan. On
 * KDS_DDB_OK the caller reads t->n_live. */
kds_ddb_status kds_lease_scan_one(kds_lease_table *t);

/* GetItem of lease `i` (strongly consistent). */
kds_ddb_status kds_lease_get(kds_lease_table *t, size_t i);

/* Renew lease `i`: leaseCounter + 1 if it still equals `expected` and checkpointOwner
 * is still `ckpt_owner` (-1: none; the owner itself while it hands the lease over). */
kds_ddb_status kds_lease_renew(kds_lease_table *t, size_t i, uint64_t expected,
                               int32_t ckpt_owner);

/* Take lease `i` for `owner` if leaseCounter still equals `expected`: owner = owner,
 * counter + 1, ownerSwitchesSinceCheckpoint + 1 when it had another owner (not when it
 * had none). */
kds_ddb_status kds_lease_take(kds_lease_table *t, size_t i, uint64_t expected, int32_t owner);

/* Checkpoint lease `i` if leaseCounter still equals `expected`: the checkpoint becomes
 * (kind, pos), counter + 1, ownerSwitchesSinceCheckpoint = 0. */
kds_ddb_status kds_lease_checkpoint(kds_lease_table *t, size_t i, uint64_t expected,
                                    kds_ckpt_kind kind, uint64_t pos);

/* Delete lease `i` (lease cleanup after its shard ended and its children started). */
kds_ddb_status kds_lease_delete(kds_lease_table *t, size_t i);

/* ---- KCL 3.x (kcl.md section 7) ---- */

/* Query the owner index for `owner`'s leases (a keys-only GSI, eventually consistent:
 * half a read unit per 4 KB of keys, KDS_LEASE_KEY_BYTES each). On KDS_DDB_OK the
 * caller reads t->items for the leases whose owner is `owner`. O(leases). */
kds_ddb_status kds_lease_query(kds_lease_table *t, int32_t owner);

/* The leader's assignLease of lease `i` to `owner`, if its owner is still `expected`
 * (-1: none): counter + 1, checkpointOwner removed, ownerSwitchesSinceCheckpoint + 1
 * when it had another owner (or goes back to its checkpointOwner). The previous holder
 * (the checkpointOwner when this ends a handoff, else the owner), whether it was still
 * renewing the lease (kds_lease_renewing) and `cause` are kept for the new owner's move
 * log (moved_from, moved_renewing, move_cause). */
kds_ddb_status kds_lease_assign(kds_lease_table *t, size_t i, int32_t expected, int32_t owner,
                                int cause);

/* The leader starts a graceful handoff of lease `i` from `from` to `to`, if `from` still
 * owns it and no handoff is in progress: owner = to, checkpointOwner = from; neither the
 * counter nor ownerSwitchesSinceCheckpoint is incremented, so `from` keeps renewing with
 * ckpt_owner = from. `from` and `cause` are kept as by kds_lease_assign. */
kds_ddb_status kds_lease_handoff(kds_lease_table *t, size_t i, int32_t from, int32_t to,
                                 int cause);

/* The old owner ends a handoff of lease `i` (it checkpointed, or the timeout passed):
 * if the counter is still `expected` and `me` is still its checkpointOwner,
 * checkpointOwner is removed and the counter + 1, which frees the new owner. */
kds_ddb_status kds_lease_transfer(kds_lease_table *t, size_t i, uint64_t expected, int32_t me);

/* Worker-metrics table: owner `id` writes its metric `value` now. Never throttled. */
void kds_lease_metrics_write(kds_lease_table *t, int32_t id, double value);

/* Worker-metrics table: the leader reads every entry (one request). */
void kds_lease_metrics_read(kds_lease_table *t);

/* Coordinator-state table: owner `id` tries to take, or heartbeats, the leader lock,
 * which is free when released or not heartbeaten for `lease` ns. Returns true if `id`
 * holds the lock afterwards. */
bool kds_lease_lock(kds_lease_table *t, int32_t id, sim_time lease);

/* Release the leader lock if `id` holds it (a graceful shutdown, or a leader giving up
 * after failed runs). */
void kds_lease_unlock(kds_lease_table *t, int32_t id);

/* Register an owner (a worker incarnation); returns its id, or -1 when out of memory.
 * The strings are borrowed. */
int32_t kds_lease_owner_add(kds_lease_table *t, const char *app, const char *worker,
                            uint32_t incarnation);

/* Set an owner's health (bumps the table's version); from PAUSED to RUNNING, a pause
 * ended now (resumed_at). */
void kds_lease_owner_set(kds_lease_table *t, int32_t id, kds_owner_state state);

/* True if owner `owner` (-1: none) is running and has not been paused since lease i's
 * counter last changed: its renewer has kept trying to renew the lease, successfully or
 * throttled, so that a move of the lease from it now is not the doing of a stall, a
 * crash or a stop. What the report calls a move from a healthy worker. */
bool kds_lease_renewing(const kds_lease_table *t, size_t i, int32_t owner);

/* Close the per-minute series at `end`. */
void kds_lease_table_finish(kds_lease_table *t, sim_time end);

/* Units consumed, as doubles (for reports). */
static inline double kds_lease_read_units(const kds_lease_table *t)
{
    return (double)t->st.read_milli / 1000.0;
}
static inline double kds_lease_write_units(const kds_lease_table *t)
{
    return (double)t->st.write_milli / 1000.0;
}

#endif
