/* kds_flink.h - an Amazon Managed Service for Apache Flink application reading the
 * stream (the `flink` consumer kind): its Kinesis source, its checkpoints, its
 * failures and restarts.
 *
 * model.md section 4. The source reads every shard by polling (GetRecords through the
 * shared 5 calls/s and 2 MiB/s: the default) or through enhanced fan-out (a registered
 * consumer with its own 2 MiB/s per shard, kds_efo.h). Each shard's records are
 * processed in order (a time per batch plus a time per record); a record is processed
 * when its processing ends, and that is when it counts as delivered.
 *
 * Positions are kept in Flink's own checkpoints, not in DynamoDB: every
 * checkpoint_interval a checkpoint records, per shard, the position after the last
 * record processed (records fetched but still being processed are not in it); it is
 * complete checkpoint_duration later. A failure (`failures`, a list of times) stops
 * the job: records being processed are dropped, reading stops; after restart_delay the
 * job restarts from the last completed checkpoint, restoring state and positions
 * together, so that every record processed since that checkpoint is processed again.
 * Those repeat deliveries are counted as duplicates (records_replayed), and their
 * number equals the records processed between the checkpoint and the failure. With no
 * checkpoint completed yet, the job restarts from the positions it started at.
 *
 * Shards are read parent before child: a shard whose parent (or a merge's adjacent
 * parent) is still being read waits until that parent has been read to its end, as
 * the shard discovery (every shard_discovery_interval) finds it. A child shard is read
 * from its start.
 */
#ifndef KDS_FLINK_H
#define KDS_FLINK_H

#include <stddef.h>
#include <stdint.h>

#include "kds_consumer.h"
#include "kds_efo.h"
#include "kds_poller.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

typedef enum { KDS_FLINK_POLLING, KDS_FLINK_EFO } kds_flink_retrieval;

typedef struct kds_flink_cfg {
    const char *name;              /* borrowed: the application's name */
    kds_flink_retrieval retrieval; /* polling (default) or EFO */
    const char *consumer_name;     /* borrowed: the registered EFO consumer's name
                                      (defaults to the application's name) */
    kds_efo_cfg efo;               /* EFO push mechanics (kds_efo.h defaults) */
    kds_start_kind start;          /* initial position (LATEST, the connector's default) */
    sim_time start_time;           /* AT_TIMESTAMP, ns */
    uint64_t start_pos;            /* AT/AFTER_SEQUENCE_NUMBER: record position */
    sim_time poll_interval;        /* between GetRecords calls on one shard (200 ms, the
                                      connector's SHARD_GETRECORDS_INTERVAL_MILLIS) */
    uint32_t max_records;          /* per call, 1..10,000 (10,000); the stream's
                                      max_records_per_call caps it */
    sim_dist call_latency_ms;      /* GetRecords round trip, ms (lognormal, median 40 ms;
                                      assumption) */
    sim_time backoff_base;         /* after a throttled call: full-jitter backoff from this
                                      (300 ms, the connector's default)... */
    sim_time backoff_max;          /* ...growing x1.5 per throttle up to this (1 s) */
    sim_dist process_ms;           /* processing time per batch or push, ms (0) */
    double process_ms_per_record;  /* plus this per record, ms (0) */
    sim_time checkpoint_interval;  /* 60 s (Managed Flink's default; Flink's own is off) */
    sim_time checkpoint_duration;  /* barrier to completed checkpoint (0; assumption) */
    const sim_time *failures;      /* borrowed: times of job failures, increasing */
    size_t n_failures;
    sim_time restart_delay;        /* failure to restarted job (10 s; assumption) */
    sim_time discovery_interval;   /* shard discovery (10 s, the connector's default) */
    sim_time begin;                /* the job starts at (0) */
} kds_flink_cfg;

/* Zero *cfg and fill in the defaults given in the field comments (the connector's,
 * or the documented assumptions; name "flink", a static string). Never fails. */
void kds_flink_cfg_defaults(kds_flink_cfg *cfg);

/* Figures of the application, also reported through ops->figures. */
typedef struct kds_flink_stats {
    uint64_t checkpoints;            /* checkpoints completed */
    uint64_t checkpoints_aborted;    /* checkpoints a failure interrupted */
    uint64_t restarts;               /* job restarts after failures */
    uint64_t records_replayed;       /* records processed again after restarts */
    uint64_t records_processed_since_checkpoint; /* sum over failures of the records
                                                    processed after the last completed
                                                    checkpoint (= records_replayed once the
                                                    replays are done) */
    uint64_t records_dropped_in_flight; /* fetched, not processed when a failure struck */
    double last_checkpoint_age_ms;   /* at the last failure: its time minus the last
                                        completed checkpoint's (or the start's), ms */
    double downtime_ms;              /* failure to restart, summed, ms (the report adds a
                                        failure not restarted from before the end) */
    uint64_t shards_waiting_for_parent; /* at the end: shards not started because a parent
                                           is not read to its end */
    uint64_t child_starts_delayed;   /* shards that waited for a parent before starting:
                                        those of the consumer's children_started that a
                                        discovery found waiting (each shard once) */
} kds_flink_stats;

/* kds_consumer_make_fn for `flink` consumers: cfg is a kds_flink_cfg (copied; its
 * pointers borrowed and they must outlive the consumer). NULL when out of memory. */
kds_consumer *kds_flink_make(sim *s, kds_stream *st, const void *cfg);

/* The figures of a consumer made by kds_flink_make (for tests). */
const kds_flink_stats *kds_flink_stats_get(const kds_consumer *c);

#endif
