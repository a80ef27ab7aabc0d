/* kds_firehose.h - an Amazon Data Firehose stream reading the Kinesis stream and
 * delivering S3 objects (the `firehose` consumer kind).
 *
 * model.md section 4. Firehose starts at LATEST and calls GetRecords once per second
 * per shard through the shared 5 calls/s and 2 MiB/s (twice per second with full
 * source-record backup: the backup call reads the same records again and is charged
 * too). It de-aggregates KPL-aggregated records: every count of the common statistics
 * is of Kinesis records, and user_records_delivered counts each record as its
 * producer's aggregation factor (aggregate_by_src, else `aggregation`). It buffers what
 * it read, per Firehose stream, until the buffer holds SizeInMBs (1-128 MiB, default 5)
 * or IntervalInSeconds (0-900 s, default 300) have passed, whichever comes first; then
 * it writes one S3 object. The interval counts from the previous object while records
 * keep arriving (a steady stream gets one object per interval), or from the first
 * record after a quiet spell of a whole interval. An object that reaches the size hint
 * is cut at the record that fills it, so that objects of a steady stream are SizeInMBs
 * each (to within one record).
 *
 * A delivery attempt fails with a probability (failure_rate), when it completes, or
 * while the destination is out (outage): an attempt made during the outage is refused
 * at once, without the time of an upload (an assumption: AWS does not say how long a
 * refused PutObject takes), and one in flight when the outage begins fails when it
 * completes. A failed object is retried every retry_interval. AWS: "If the
 * destination is Amazon S3 and delivery fails, Firehose keeps retrying until the
 * retention period ends" - with a Kinesis source, the stream's. So the records of a
 * failed object that expire from the stream before a retry succeeds are lost
 * (records_lost_after_retries); an optional retry_duration (RetryOptions, 0-7200 s)
 * gives up the whole object earlier. Reading is not held back by failing deliveries.
 * Retries that the outage can only refuse (before its end, with nothing of the object
 * expiring and its retry_duration not spent) cost no event each: a failed object skips
 * ahead to the first retry that may differ, and they are counted as if made. A day's
 * outage with objects every few seconds would otherwise cost objects x retries events.
 *
 * Every shard is read at once, a child shard from its start as soon as it exists:
 * Firehose promises no order across shards (a simplification: AWS does not say how it
 * follows a reshard).
 *
 * Latency (the common histogram) is from a record's write time to the time its S3
 * object was written. For the conservation rule of kds_consumer.h, records read but
 * not yet in a written object at the end (in the buffer, in an object being written
 * or retried) count as unread, and records lost after retries as expired unread.
 */
#ifndef KDS_FIREHOSE_H
#define KDS_FIREHOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "kds_consumer.h"
#include "kds_poller.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

#define KDS_FIREHOSE_SIZE_MIN KDS_MIB           /* SizeInMBs 1 */
#define KDS_FIREHOSE_SIZE_MAX (128 * KDS_MIB)   /* SizeInMBs 128 */
#define KDS_FIREHOSE_INTERVAL_MAX SIM_S(900)    /* IntervalInSeconds 900 */
#define KDS_FIREHOSE_RETRY_DURATION_MAX SIM_S(7200) /* RetryOptions.DurationInSeconds */

typedef struct kds_firehose_cfg {
    const char *name;             /* borrowed */
    kds_start_kind start;         /* LATEST (Firehose's own choice); settable */
    sim_time start_time;          /* AT_TIMESTAMP, ns */
    uint64_t start_pos;           /* AT/AFTER_SEQUENCE_NUMBER: record position */
    sim_time poll_period;         /* one GetRecords per shard per period: 1 s */
    bool full_backup;             /* source-record backup: a second call per period */
    uint32_t max_records;         /* per call, 1..10,000 (10,000); the stream's
                                     max_records_per_call caps it */
    sim_dist call_latency_ms;     /* GetRecords round trip, ms (lognormal, median 40 ms;
                                     assumption, as the polling consumer's) */
    double aggregation;           /* user records per Kinesis record (KPL aggregation),
                                     >= 1; 1 = producers do not aggregate */
    const uint32_t *aggregate_by_src; /* borrowed, may be NULL: user records per Kinesis
                                         record of producer i (a run's src), overriding
                                         `aggregation` for the n_src producers listed */
    size_t n_src;
    uint64_t buffer_size;         /* B: SizeInMBs, 1..128 MiB (5 MiB) */
    sim_time buffer_interval;     /* IntervalInSeconds, 0..900 s (300 s) */
    sim_dist put_ms;              /* S3 PutObject time for one object, ms (lognormal,
                                     median 200 ms, sigma 0.5; assumption) */
    double failure_rate;          /* probability one delivery attempt fails (0) */
    sim_time outage_at;           /* the destination refuses every attempt from... */
    sim_time outage_for;          /* ...for this long (0 = no outage): an attempt made
                                     then is refused at once, one in flight when it
                                     begins fails when it completes */
    sim_time retry_interval;      /* between attempts of a failed object (5 s;
                                     assumption) */
    sim_time retry_duration;      /* give an object up this long after its first failed
                                     attempt; -1 = keep retrying while the stream holds
                                     its records (AWS's S3 behaviour) */
    sim_time begin;               /* the Firehose stream starts reading at (0) */
    bool event_per_refusal;       /* one event for each retry the outage refuses (tests
                                     only: the same figures, at a cost that grows with
                                     objects x outage); false: a failed object skips
                                     ahead over retries that can only be refused */
} kds_firehose_cfg;

/* AWS's defaults, and the assumptions above for what AWS does not publish. */
void kds_firehose_cfg_defaults(kds_firehose_cfg *cfg);

/* Figures of the Firehose stream, also reported through ops->figures. */
typedef struct kds_firehose_stats {
    uint64_t objects_written;       /* S3 objects written */
    uint64_t object_bytes_total;    /* their bytes */
    uint64_t object_bytes_max;      /* the largest, B */
    uint64_t object_bytes_min;      /* the smallest, B (0 when none) */
    uint64_t objects_by_size;       /* objects closed because the buffer reached the size
                                       hint */
    uint64_t objects_by_interval;   /* objects closed by the buffer interval */
    double delivery_delay_ms_sum;   /* sum over objects of (written - oldest record's
                                       write time), ms */
    double delivery_delay_ms_max;   /* the largest, ms */
    uint64_t delivery_failures;     /* failed attempts (first attempts and retries) */
    uint64_t delivery_retries;      /* retry attempts made */
    uint64_t objects_given_up;      /* objects abandoned with records still in them */
    uint64_t records_lost_after_retries; /* records of failed objects that expired from the
                                            stream (or outlived retry_duration) unwritten */
    uint64_t backup_calls;          /* GetRecords calls of the backup reader (throttled
                                       included; also in getrecords_calls) */
    uint64_t backup_bytes;          /* bytes read by the backup calls */
    uint64_t records_buffered;      /* at the end: read, in no object yet */
    uint64_t records_in_objects;    /* at the end: in objects being written or retried */
    double user_records_delivered;  /* de-aggregated user records in written objects */
} kds_firehose_stats;

/* kds_consumer_make_fn for `firehose` consumers: cfg is a kds_firehose_cfg (copied;
 * its pointers borrowed). NULL when out of memory. */
kds_consumer *kds_firehose_make(sim *s, kds_stream *st, const void *cfg);

/* The Firehose figures of a consumer made by kds_firehose_make (for tests). */
const kds_firehose_stats *kds_firehose_stats_get(const kds_consumer *c);

#endif
