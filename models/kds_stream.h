/* kds_stream.h - a Kinesis data stream: shards, hash-key ranges, write and read budgets,
 * record logs and retention.
 *
 * model.md sections 1-3 and 8. A stream owns its shards (open, closed, expired), each
 * with a contiguous hash-key range, a run-based record log (kds_log.h), token buckets
 * for the 1 MiB/s + 1,000 records/s write budget and the shared 5 calls/s + 2 MiB/s
 * read budget, and its own counters. Producers put sub-batches of records into shards
 * with kds_stream_put(); polling readers ask kds_stream_read_admit() before each
 * GetRecords call and charge what they read with kds_stream_read_charge().
 *
 * Numbers AWS does not publish are settings with documented defaults
 * (kds_stream_cfg_defaults): the burst depth, the large-record tank's refill rate.
 */
#ifndef KDS_STREAM_H
#define KDS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kds_bucket.h"
#include "kds_hashkey.h"
#include "kds_log.h"
#include "sim.h"
#include "sim_stats.h"

#define KDS_MIB (UINT64_C(1) << 20)
#define KDS_KIB (UINT64_C(1) << 10)

/* Bounds on the time series, so that their memory does not grow with simulated time
 * (sim_series merges neighbouring buckets past its limit): the stream's per-second
 * series keep 131,072 buckets (36.4 h a second), its per-minute ones every minute, and
 * each per-minute series of the shards 2^21 / shards created buckets (a power of two, at
 * most 16,384), 16 MiB per series summed over the shards. The stream's cfg can lower
 * both (tests do). */
#define KDS_STREAM_SECONDS_KEPT ((size_t)1 << 17)
/* The stream's per-minute series never merge: they keep the longest run's minutes (400
 * days, the loader's bound), 4.4 MiB each at that length. */
#define KDS_STREAM_MINUTES_KEPT ((size_t)400 * 1440)
#define KDS_SHARD_SERIES_BUCKETS ((size_t)1 << 21)

typedef enum {
    KDS_MODE_PROVISIONED,
    KDS_MODE_ON_DEMAND_STANDARD,
    KDS_MODE_ON_DEMAND_ADVANTAGE
} kds_mode;

/* OPEN takes writes; CLOSED (after a split or merge) keeps its records readable; EXPIRED
 * once the retention period has passed since it closed: every record is gone, and a
 * reader starting from then on does not list it (model.md section 1). */
typedef enum { KDS_SHARD_OPEN, KDS_SHARD_CLOSED, KDS_SHARD_EXPIRED } kds_shard_state;

typedef struct kds_stream_cfg {
    const char *name;           /* borrowed; the stream's name */
    kds_mode mode;              /* capacity mode */
    uint32_t shards;            /* open shards at creation (1..10,000) */
    sim_time retention;         /* 24 h .. 8,760 h; default 24 h */
    uint64_t max_record_size;   /* B, 1 MiB default, up to 10 MiB (UpdateMaxRecordSize) */
    bool auto_distribution;     /* RecordDistributionStrategy AUTO (on-demand only): the
                                   service spreads records evenly over the open shards and
                                   ignores partition keys; USER_PARTITION_KEY otherwise */

    /* Write budget per shard (model.md section 2). */
    uint64_t write_bytes_per_s;   /* 1 MiB/s */
    uint64_t write_records_per_s; /* 1,000 records/s */
    double write_burst_s;         /* bucket depth in seconds of budget; assumption, 1 s */
    uint64_t large_record_tank;   /* B, burst tank for records above the byte bucket's
                                     depth; 10 MiB (the PutRecord quota row). Such a
                                     record also overdraws the byte bucket: the shard's
                                     sustained 1 MiB/s is unchanged */
    uint64_t large_record_refill; /* B/s refill of that tank; assumption, 1 MiB/s */
    double internal_failure_rate; /* probability a record gets InternalFailure; 0 */

    /* Shared-throughput read budget per shard (model.md section 3). */
    uint64_t read_calls_per_s;    /* 5 GetRecords calls/s */
    uint64_t read_bytes_per_s;    /* 2 MiB/s */
    uint64_t read_records_per_s;  /* the quota page's 2,000 records/s, which conflicts
                                     with the 10,000-record call: 0 = off (default) */
    double read_burst_s;          /* depth in seconds of budget; assumption, 1 s */
    double efo_burst_s;           /* depth of each enhanced fan-out consumer's own budget
                                     on a shard (2 MiB/s, kds_efo.h), in seconds of it;
                                     assumption, 1 s */
    uint32_t max_records_per_call;/* 10,000 */
    uint64_t max_bytes_per_call;  /* 10 MiB */
    sim_time big_read_penalty;    /* throttled window after a 10 MiB call: 5 s */
    sim_time short_read_penalty;  /* throttled window when the budget is short: 1 s */
    sim_time iterator_ttl;        /* shard iterators expire after 5 min */
    sim_time compact_span;        /* merge passed runs into spans this long (1 min);
                                     a memory setting, not a Kinesis behaviour */

    /* Resharding (model.md section 6); AWS publishes no exact durations. */
    sim_time reshard_duration;    /* UPDATING after SplitShard / MergeShards (30 s) */
    sim_time update_count_duration; /* UPDATING after UpdateShardCount (5 min) */
    uint32_t max_update_calls;    /* UpdateShardCount calls per rolling 24 h (10) */
    uint32_t max_shards;          /* open shards a stream may reach (10,000) */
    sim_time horizon;             /* the run's length, when known (0: not known): a
                                     shard whose series cannot merge in it skips the
                                     offered_min adds */
    size_t series_buckets;        /* per-minute buckets the shards' series share
                                     (KDS_SHARD_SERIES_BUCKETS) */
    size_t seconds_kept;          /* buckets of the per-second series
                                     (KDS_STREAM_SECONDS_KEPT) */
} kds_stream_cfg;

typedef struct kds_shard_stats {
    uint64_t records_in;              /* records stored (duplicates included) */
    uint64_t bytes_in;                /* bytes stored */
    uint64_t write_throttled_records; /* records refused with ProvisionedThroughputExceeded */
    uint64_t write_throttled_bytes;   /* their bytes */
    uint64_t records_failed_internal; /* records refused with InternalFailure */
    uint64_t read_calls;              /* GetRecords calls admitted */
    uint64_t read_throttled_calls;    /* GetRecords calls refused */
    uint64_t bytes_out;               /* bytes returned to shared-throughput readers */
    uint64_t records_out;             /* records returned to shared-throughput readers */
    uint64_t records_expired;         /* records trimmed at the retention period */
    /* Billing meters (model.md section 9), of stored records only. */
    uint64_t put_units;               /* PUT payload units: ceil(size / 25 KiB) each */
    uint64_t bytes_in_kib_rounded;    /* bytes with each record rounded up to 1 KiB */
    double byte_hours_24h_7d;         /* B x h retained at an age in (24 h, 7 d] */
    double byte_hours_over_7d;        /* B x h retained at an age above 7 d */
    uint64_t held_24h_7d;             /* B retained in each band at the last metering */
    uint64_t held_over_7d;
    sim_series in_records_min;        /* records stored per minute */
    sim_series in_bytes_min;          /* bytes stored per minute */
    sim_series throttled_min;         /* write-throttled records per minute */
    sim_series read_throttled_min;    /* read-throttled calls per minute */
    sim_series out_bytes_min;         /* bytes returned to shared-throughput readers per
                                         minute (against the 2 MiB/s read budget) */
    sim_series offered_min;           /* records stored + write-throttled per minute:
                                         one bucket, read for its peak, and kept only
                                         when the series above can merge in the run */
    bool track_offered;
    /* The puts of the current minute, not yet added to in_records_min, in_bytes_min and
     * offered_min: they go in at once when a put falls in a later minute, when the
     * series change their limit, or when the run finishes (kds_stream.c, minute_flush),
     * one add per series a minute instead of one a put. The minute ends at min_end (0:
     * nothing pending), its first put was at min_t, and the counters stood at
     * min_records, min_bytes and min_throttled when it began. */
    sim_time min_end, min_t;
    uint64_t min_records, min_bytes, min_throttled;
} kds_shard_stats;

typedef struct kds_shard kds_shard;

/* Called after records were appended to a shard's log (enhanced fan-out pushes), at
 * the instant of the put, whose log is trimmed to the retention period as of then. */
typedef void (*kds_append_fn)(void *ctx, kds_shard *sh);

typedef struct kds_append_listener {
    kds_append_fn fn;
    void *ctx;
} kds_append_listener;

struct kds_shard {
    uint32_t index;            /* shardId-%012u */
    kds_shard_state state;
    kds_hashkey lo, hi;        /* inclusive hash-key range */
    int32_t parent;            /* index of the parent shard, or -1 */
    int32_t adjacent_parent;   /* index of a merge's other parent, or -1 */
    int32_t children[2];       /* indexes of the shards made from this one, in increasing
                                  order: two for a split, one (then -1) for a merge; -1
                                  while it has none */
    sim_time created;          /* ns */
    sim_time closed;           /* ns, or -1 while open */

    kds_bucket wbytes, wrecords, tank; /* write budget */
    kds_bucket rcalls, rbytes;         /* shared read budget */
    kds_bucket rrecords;               /* ...and its records, when read_records_per_s > 0 */
    sim_time read_blocked_until;       /* calls before this are throttled, ns */
    uint8_t read_block_why;            /* what opened that window (kds_read_limit) */
    uint8_t read_throttle_why;         /* why the last call was refused (kds_read_limit;
                                          the trace tells it: kds_trace_read_limit) */

    kds_log log;               /* retained records */
    kds_append_listener *on_append; /* owned array: told of every append */
    size_t n_on_append;
    kds_shard_stats st;
    kds_log_mark meter_24h, meter_7d; /* where the hourly retention meter's last count of
                                         each band's bytes stopped */
};

/* Called when a shard is created (at stream creation and by resharding). */
typedef void (*kds_shard_fn)(void *ctx, kds_shard *sh);


typedef struct kds_stream_stats {
    sim_series in_records_s;   /* records stored per second */
    sim_series in_bytes_s;     /* bytes stored per second */
    sim_series throttled_s;    /* write-throttled records per second */
    sim_series in_records_min; /* per minute, as CloudWatch shows them */
    sim_series in_bytes_min;
    sim_series throttled_min;
    sim_series read_throttled_min;
    sim_series out_bytes_min;  /* bytes returned to shared-throughput readers per
                                  minute */
} kds_stream_stats;

typedef struct kds_listener {
    kds_shard_fn fn;
    void *ctx;
} kds_listener;

struct kds_reshard_op; /* kds_reshard.h */
struct kds_trace;      /* kds_trace.h */

typedef struct kds_stream {
    kds_stream_cfg cfg;   /* copied at init; cfg.name borrowed */
    sim *sim;             /* borrowed */
    gsl_rng *rng;         /* for kds_stream_put's InternalFailures; sim-owned */
    kds_shard **shards;   /* owned; every shard ever created, by index */
    size_t n_shards;
    size_t cap_shards;
    uint32_t *open;       /* owned; indices of open shards in hash-key order */
    size_t n_open;
    kds_listener *listeners; /* owned */
    size_t n_listeners;
    uint64_t topology_version; /* bumped whenever the set of open shards changes */
    sim_time last_meter;       /* time of the last retention metering, ns */
    bool updating;             /* StreamStatus UPDATING: a reshard is in progress */
    struct kds_reshard_op *pending_op; /* the change in progress (borrowed from ops) */
    struct kds_reshard_op **ops; /* owned: every reshard request, in request order */
    size_t n_ops, cap_ops;
    sim_series open_shards_min;  /* open shards, maximum per minute */
    size_t shard_series_limit;   /* the buckets each shard series keeps now: lowered as
                                    shards are created (kds_stream.c) */
    struct kds_trace *trace;     /* borrowed: the event trace, or NULL (off) */
    uint32_t *expiring;          /* owned: closed shards not yet EXPIRED, in closing order
                                    (their expiry order: one retention period for all),
                                    from expiring_head; one event waits for the first */
    size_t n_expiring, cap_expiring, expiring_head;
    kds_stream_stats st;
    /* The same for the stream's per-second series in_records_s and in_bytes_s: the
     * second ends at sec_end (0: nothing pending), its first storing put was at sec_t,
     * and it has stored sec_records records of sec_bytes bytes. */
    sim_time sec_end, sec_t;
    uint64_t sec_records, sec_bytes;
} kds_stream;

/* AWS's defaults for every field (provisioned, 1 shard, 24 h retention). */
void kds_stream_cfg_defaults(kds_stream_cfg *cfg);

/* Create the stream's shards as CreateStream does (even split) at the simulation's
 * current time. Returns 0 or SIM_ENOMEM / SIM_EINVAL (bad cfg; the loader validates
 * first, so this is a programming error guard). */
int kds_stream_init(kds_stream *st, sim *s, const kds_stream_cfg *cfg);
void kds_stream_fini(kds_stream *st); /* NULL-safe */

/* Register a callback for shards created from now on (not called for existing ones). */
int kds_stream_on_new_shard(kds_stream *st, kds_shard_fn fn, void *ctx);

/* Register fn(ctx, sh) to be called after every append to shard `sh` (in
 * registration order). Returns 0 or SIM_ENOMEM. */
int kds_shard_on_append(kds_shard *sh, kds_append_fn fn, void *ctx);

/* Remove a registration made with kds_shard_on_append (no-op if absent). */
void kds_shard_off_append(kds_shard *sh, kds_append_fn fn, void *ctx);

/* The entry of st->open (open shards in hash-key order) whose range holds key: an index
 * below st->n_open (there is always one). O(log open). */
size_t kds_stream_open_entry(const kds_stream *st, kds_hashkey key);

/* The open shard whose range holds key (there is always one). O(log open). */
kds_shard *kds_stream_route(const kds_stream *st, kds_hashkey key);

/* "shardId-000000000001" into buf (21 bytes at least). Returns buf. */
char *kds_shard_id(char *buf, size_t n, uint32_t index);

/* The sequence number of the record at `pos` of shard `index`, as a 56-digit decimal
 * string like AWS's: monotonic within a shard, unique within the stream. buf >= 57 B. */
char *kds_seqno(char *buf, size_t n, uint32_t index, uint64_t pos);

/* The end of a trace line naming the sequence numbers of `count` consecutive records from
 * position `first` of shard `index`: "; sequence numbers A to B", "; sequence number A"
 * for one, "" for none. buf >= KDS_SEQNOS_LEN B. Returns buf. Only traces call it, after
 * their KDS_TRACING test: a run without a trace never formats one. */
#define KDS_SEQNOS_LEN 160
char *kds_trace_seqnos(char *buf, size_t n, uint32_t index, uint64_t first, uint64_t count);

/* The outcome of putting one sub-batch into one shard. */
typedef struct kds_put_result {
    uint32_t stored;     /* records stored, in request order (a prefix) */
    uint32_t throttled;  /* refused with ProvisionedThroughputExceededException */
    uint32_t failed;     /* refused with InternalFailure */
    uint32_t stored_dups;/* stored records that duplicate earlier ones */
    uint64_t stored_bytes;
} kds_put_result;

/* Billing meters of a batch of records: how AWS counts them. */
#define KDS_PUT_UNIT (25 * KDS_KIB)

/* PUT payload units and 1 KiB-rounded bytes of `count` records of `size` bytes each. */
static inline uint64_t kds_put_units(uint64_t size)
{
    return size == 0 ? 1 : (size + KDS_PUT_UNIT - 1) / KDS_PUT_UNIT;
}
static inline uint64_t kds_kib_rounded(uint64_t size)
{
    return size == 0 ? KDS_KIB : (size + KDS_KIB - 1) / KDS_KIB * KDS_KIB;
}

/* Put `count` records of `bytes` in total (sizes taken as equal) into open shard `sh`
 * at the current time, `dups` of them duplicates of records stored before (they come
 * first), `marks` of them marked. Records pass the write budget in order; the first
 * that does not fit and every later one is throttled, as AWS processes a request's
 * records in order. InternalFailure strikes each record with the configured
 * probability. Stored records are appended to the log as one run, and the shard's
 * readers are told (kds_shard_notify_append). `src` identifies the producer. The caller
 * validated sizes against max_record_size. */
void kds_stream_put(kds_stream *st, kds_shard *sh, uint32_t count, uint64_t bytes,
                    uint32_t dups, uint32_t marks, uint32_t src, kds_put_result *out);

/* The same, with the batch's exact billing meters when its records' sizes differ:
 * `units` PUT payload units and `kib_bytes` 1 KiB-rounded bytes for all `count`
 * records (prorated to the stored ones). Zero for both means "derive them from the
 * average size", which is exact for records of equal size. `rng` (borrowed) draws the
 * InternalFailures: the sender's own stream, so that one producer's failures do not
 * depend on how many puts others made before it (design.md, "Build"); NULL draws from
 * the stream's. Unlike kds_stream_put it does not tell the shard's readers: when
 * out->stored > 0 the caller must call kds_shard_notify_append(sh) next, with nothing
 * in between that changes the stream, after it has said what the put did (its trace
 * line then comes before the pushes the append causes). */
static inline void kds_stream_put_metered(kds_stream *st, kds_shard *sh, uint32_t count,
                                          uint64_t bytes, uint32_t dups, uint32_t marks,
                                          uint32_t src, uint64_t units, uint64_t kib_bytes,
                                          gsl_rng *rng, kds_put_result *out);

/* kds_shard_notify_append() from listener `from` on (out of line: a shard seldom has
 * more than one). */
void kds__shard_notify_append_from(kds_shard *sh, size_t from);

/* Tell every reader registered with kds_shard_on_append that records were just
 * appended to `sh` (an enhanced fan-out subscription pushes them from here), in the
 * order they registered; one registered during a call is told too. Inline, with the
 * first listener called here: it runs after every stored put, and a loop around the
 * call would keep its counter and the caller's values across it. */
static inline void kds_shard_notify_append(kds_shard *sh)
{
    if (sh->n_on_append > 0) {
        sh->on_append[0].fn(sh->on_append[0].ctx, sh);
        if (sh->n_on_append > 1)
            kds__shard_notify_append_from(sh, 1);
    }
}

/* Add the retention meters for the hour that ends now: bytes retained at ages in
 * (24 h, 7 d] and above 7 d, the average of their amounts at the last call and now,
 * times the hours since the last call. The run calls it every simulated hour and at the
 * end (kds_stream_finish). */
void kds_stream_meter_retention(kds_stream *st);

/* The time shard `sh` is billed for within [from, end), ns: it exists from its
 * creation until the end, or until its closing plus the retention period for a closed
 * shard (a closed shard keeps accruing while its records are retained). The one rule of
 * shard-hours and of EFO consumer-shard-hours (model.md section 9: both accrue for every
 * hour a shard exists). */
static inline sim_time kds_shard_billed_ns(const kds_stream *st, const kds_shard *sh,
                                           sim_time from, sim_time end)
{
    sim_time start = sh->created > from ? sh->created : from;
    sim_time stop = end;
    if (sh->closed >= 0 && sh->closed + st->cfg.retention < stop)
        stop = sh->closed + st->cfg.retention;
    return stop > start ? stop - start : 0;
}

/* Shard-hours billed for shard `sh` up to `end` (kds_shard_billed_ns from its
 * creation). */
double kds_shard_hours(const kds_stream *st, const kds_shard *sh, sim_time end);

/* EFO consumer-shard-hours of one registration from `from` to `end`: AWS counts
 * consumers registered times shards in the stream, so every shard of the stream for
 * the time it is billed (kds_shard_billed_ns) while the consumer is registered, whether
 * or not the consumer subscribed to it. */
double kds_stream_consumer_shard_hours(const kds_stream *st, sim_time from, sim_time end);

/* The limits a GetRecords call can be throttled by (kds_stream_read_admit). */
typedef enum {
    KDS_READ_CALLS,        /* the shard's 5 calls/s are spent */
    KDS_READ_BYTES,        /* its byte budget (2 MiB/s) is overdrawn: a short penalty opens */
    KDS_READ_RECORDS,      /* its record budget (read_records_per_s) is overdrawn: the same */
    KDS_READ_BIG_CALL,     /* a call returned max_bytes_per_call: the big penalty opened */
    KDS_READ_IN_PENALTY    /* inside a penalty window that an earlier call opened */
} kds_read_limit;

/* Ask for one GetRecords call on shard `sh` at the current time through the shared
 * budget. Returns true and spends one call when admitted; false when throttled
 * (counted), because of the 5 calls/s, an overdrawn byte budget (which also throttles
 * the next short_read_penalty), or the window after a 10 MiB call; the reason is left
 * in sh->read_throttle_why (and, inside a window, what opened it in sh->read_block_why),
 * for the trace to tell (kds_trace_read_limit). */
bool kds_stream_read_admit(kds_stream *st, kds_shard *sh);

/* What a throttled GetRecords line says of the limit that refused the last call of
 * shard `sh` (after kds_stream_read_admit returned false), e.g. "the shard's 5 GetRecords
 * calls/s are spent" or "within the 5 s penalty after a call returned 10 MiB", in buf
 * (160 bytes hold it). Only traces call it. Returns buf. */
char *kds_trace_read_limit(char *buf, size_t n, const kds_stream *st, const kds_shard *sh);

/* Charge `records` and `bytes` returned by an admitted call to the shard's byte budget
 * (it may go into debt); a call that returned max_bytes_per_call opens the
 * big_read_penalty window. */
void kds_stream_read_charge(kds_stream *st, kds_shard *sh, uint64_t records, uint64_t bytes);

/* Data older than 7 days is billed when read (model.md section 9, long-term retention
 * retrieval). */
#define KDS_LONG_TERM_AGE SIM_DAY(7)

uint64_t kds__stream_bytes_over_7d(const kds_stream *st, const kds_log *l, uint64_t end,
                                   const kds_take *tk);

/* Add to *meter (a reader's bytes_read_over_7d) the bytes of what a take just returned
 * from log `l` (tk, its cursor now at `end`) written 7 days or more before now (as the
 * retention bands count them). Inline: every read calls it, and for a stream retaining
 * 7 days or less (most) it is one comparison; the rest is
 * kds__stream_bytes_over_7d(). */
static inline void kds_stream_meter_over_7d(const kds_stream *st, const kds_log *l, uint64_t end,
                                            const kds_take *tk, uint64_t *meter)
{
    if (st->cfg.retention > KDS_LONG_TERM_AGE && tk->records > 0)
        *meter += kds__stream_bytes_over_7d(st, l, end, tk);
}

/* Records one GetRecords call returns at most for a reader asking for `want`: the
 * smaller of that and the stream's limit (max_records_per_call). Readers keep it in
 * their configuration when they are made, so that their calls need not look. */
static inline uint32_t kds_stream_call_records(const kds_stream *st, uint32_t want)
{
    return want < st->cfg.max_records_per_call ? want : st->cfg.max_records_per_call;
}

/* Drop records older than the retention period from `sh` as of now. Readers learn
 * about it when they next take. Inline: every put and every read calls it, and nearly
 * always the oldest run retained is younger than the retention period, which one
 * comparison shows; the rest is kds__stream_trim(). */
void kds__stream_trim(kds_stream *st, kds_shard *sh);

static inline void kds_stream_trim(kds_stream *st, kds_shard *sh)
{
    if (sh->log.head_t > sim_now(st->sim) - st->cfg.retention)
        return; /* nothing retained (INT64_MAX), or nothing old enough */
    kds__stream_trim(st, sh);
}

/* The parts of kds_stream_put_metered off its common path: the InternalFailures of
 * `count` records drawn from `rng` (NULL: the stream's); the admission of records
 * deeper than the byte bucket (the large-record tank), `k` of them at most, which
 * spends the buckets, sets *sb to the bytes admitted and returns the records admitted;
 * the counters and series of `throttled` records of `per` bytes. */
uint32_t kds__stream_failures(kds_stream *st, gsl_rng *rng, uint32_t count);
uint64_t kds__stream_admit_large(kds_shard *sh, sim_time now, uint64_t per, uint64_t k,
                                 uint32_t count, uint64_t bytes, uint64_t *sb);
void kds__stream_throttled(kds_stream *st, kds_shard *sh, sim_time now, uint32_t throttled,
                           uint64_t per);
/* Add the puts pending for the minute of shard `sh` or the second of the stream to their
 * series, and begin the new one a put at `now` falls in. */
void kds__shard_new_minute(kds_shard *sh, sim_time now);
void kds__stream_new_second(kds_stream *st, sim_time now);

/* kds_stream_put_metered (contract above). Inline, always: every put of every producer
 * runs it, and inlined where the producer spreads a request, its eleven arguments and
 * its result stay in registers; the rare paths are out of line. */
static inline __attribute__((always_inline)) void
kds_stream_put_metered(kds_stream *st, kds_shard *sh, uint32_t count, uint64_t bytes,
                       uint32_t dups, uint32_t marks, uint32_t src, uint64_t units,
                       uint64_t kib_bytes, gsl_rng *rng, kds_put_result *out)
{
    SIM_ASSERT(sh->state == KDS_SHARD_OPEN && count >= 1);
    sim_time now = sim_now(st->sim);
    kds_stream_trim(st, sh);
    kds_shard_stats *ss = &sh->st;
    if (now >= ss->min_end)
        kds__shard_new_minute(sh, now);

    uint32_t failed = 0;
    if (st->cfg.internal_failure_rate > 0)
        failed = kds__stream_failures(st, rng, count);
    uint32_t m = count - failed;
    /* Every record of a sub-batch is taken to weigh the average (rounded up, so a
     * batch never sneaks past the byte budget). */
    uint64_t per = bytes / count + (bytes % count != 0);
    uint64_t k = kds_bucket_avail(&sh->wrecords, now);
    if (k > m)
        k = m;
    uint64_t sb;
    if ((int64_t)per * KDS_NANO <= sh->wbytes.depth) {
        uint64_t kb = per ? kds_bucket_avail_lots(&sh->wbytes, now, per) : k;
        if (kb < k)
            k = kb;
        sb = k == count ? bytes : kds_prorate(bytes, k, count); /* all stored: no division */
        /* Both buckets were refilled to now just above, and both have this much. */
        kds_bucket_spend(&sh->wrecords, k);
        kds_bucket_spend(&sh->wbytes, sb);
    } else {
        k = kds__stream_admit_large(sh, now, per, k, count, bytes, &sb);
    }
    /* In 32 bits from here (k <= m <= count), where the compiler can see that the
     * append's checks of its arguments hold. */
    uint32_t stored = (uint32_t)k;
    uint32_t stored_dups = dups < stored ? dups : stored;
    uint32_t throttled = m - stored;
    *out = (kds_put_result){.stored = stored,
                            .throttled = throttled,
                            .failed = failed,
                            .stored_dups = stored_dups,
                            .stored_bytes = sb};

    if (k > 0) {
        int rc = kds_log_append(&sh->log, now, stored, sb, stored_dups,
                                marks < stored ? marks : stored, src);
        SIM_ASSERT(rc == 0);
        ss->records_in += k;
        ss->bytes_in += sb;
        if (units == 0 && kib_bytes == 0) {
            ss->put_units += k * kds_put_units(per);
            ss->bytes_in_kib_rounded += k * kds_kib_rounded(per);
        } else {
            ss->put_units += kds_prorate(units, k, count);
            ss->bytes_in_kib_rounded += kds_prorate(kib_bytes, k, count);
        }
        /* The shard's minute takes its records and bytes from the counters above. */
        if (now >= st->sec_end)
            kds__stream_new_second(st, now);
        st->sec_records += k;
        st->sec_bytes += sb;
    }
    if (throttled > 0)
        kds__stream_throttled(st, sh, now, throttled, per);
    ss->records_failed_internal += failed;
}

/* Trim every shard and close the per-second and per-minute series at `end`. */
void kds_stream_finish(kds_stream *st, sim_time end);

/* The capacity mode as the report names it (static string). */
static inline const char *kds_mode_name(kds_mode m)
{
    return m == KDS_MODE_PROVISIONED          ? "provisioned"
           : m == KDS_MODE_ON_DEMAND_STANDARD ? "on_demand_standard"
                                              : "on_demand_advantage";
}

/* "OPEN", "CLOSED" or "EXPIRED", as the report names a shard's state (static string). */
static inline const char *kds_shard_state_name(kds_shard_state s)
{
    return s == KDS_SHARD_OPEN ? "OPEN" : s == KDS_SHARD_CLOSED ? "CLOSED" : "EXPIRED";
}

#endif
