/* kds_lambda.h - an AWS Lambda event source mapping reading a stream: batches of
 * records handed to a function, its failures, retries, bisection and failure
 * destination (the `lambda` consumer kind).
 *
 * model.md section 4. The mapping reads every shard, through the shared throughput
 * (GetRecords about once per second per shard, up to 10,000 records a call, through
 * the shard's shared 5 calls/s and 2 MiB/s) or through enhanced fan-out (a registered
 * consumer that counts toward the stream's 20). Records read are buffered per shard and
 * handed to the function in batches of at most BatchSize records and 6 MiB of event
 * payload; a batch is invoked when it is full, when the payload limit is reached, or
 * when the oldest buffered record has waited MaximumBatchingWindowInSeconds (at once
 * when the window is 0). Each shard runs up to ParallelizationFactor batches at a time.
 * Invocations across the mapping are held to a concurrency limit: a refused invocation
 * (throttled) waits and tries again.
 *
 * A batch fails when the function errors (a rate per invocation), when it runs past its
 * timeout, or always when it holds a poison record (a record its producer marked,
 * kds_log.h `marks`). A failed batch holds its shard: no new batch starts there until
 * the failure is settled. By default the batch is retried until its records expire at
 * the retention period, so the shard's IteratorAge grows for up to the retention
 * period. MaximumRetryAttempts and MaximumRecordAgeInSeconds bound that;
 * BisectBatchOnFunctionError splits a failing batch in two (without consuming a retry)
 * until the bad record is alone; ReportBatchItemFailures makes the function report its
 * first failed record, so that the records before it count as processed and only the
 * rest is retried. A batch given up goes to the on-failure destination (counted) or is
 * discarded, and the shard moves on. Retries wait a backoff that doubles per
 * consecutive failure (an assumption: AWS publishes no figure).
 *
 * Counting (kds_consumer.h): a record is delivered when the mapping hands it to the
 * function for the first time, or when it gives it up without invoking (older than the
 * maximum record age when read); handing it again (a retry, a bisected half) counts as
 * a duplicate. So records sent to the failure destination or discarded after retries
 * count as delivered, and the conservation rule
 *   stored = skipped at start + delivered + unread + expired unread
 * holds, with records read from the shard but not yet handed to the function counted
 * as unread. Latency (write time to processing time) is recorded when the function
 * finishes a record successfully. The consumer's iterator age is Lambda's IteratorAge
 * metric: at each invocation, its time minus the write time of the batch's last record.
 *
 * Simulated per API call and per invocation, never per record: one event per
 * GetRecords call and its reply (or per EFO push), one per invocation, one per retry or
 * throttle timer.
 */
#ifndef KDS_LAMBDA_H
#define KDS_LAMBDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kds_consumer.h"
#include "kds_efo.h"
#include "kds_poller.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

/* The Lambda invocation payload limit for synchronous invocation: "6 MB", which the
 * service enforces as 6,291,456 B. */
#define KDS_LAMBDA_PAYLOAD_LIMIT (6 * KDS_MIB)
#define KDS_LAMBDA_MAX_BATCH 10000          /* BatchSize maximum */
#define KDS_LAMBDA_MAX_WINDOW SIM_S(300)    /* MaximumBatchingWindowInSeconds maximum */
#define KDS_LAMBDA_MAX_PARALLEL 10          /* ParallelizationFactor maximum */
#define KDS_LAMBDA_MAX_RETRIES 10000        /* MaximumRetryAttempts maximum */
#define KDS_LAMBDA_MIN_RECORD_AGE SIM_S(60) /* MaximumRecordAgeInSeconds bounds */
#define KDS_LAMBDA_MAX_RECORD_AGE SIM_S(604800)

typedef enum { KDS_LAMBDA_POLLING, KDS_LAMBDA_EFO } kds_lambda_retrieval;

/* Where given-up batches go (DestinationConfig.OnFailure). Only counted. */
typedef enum {
    KDS_LAMBDA_DEST_NONE,
    KDS_LAMBDA_DEST_SQS,
    KDS_LAMBDA_DEST_SNS,
    KDS_LAMBDA_DEST_S3
} kds_lambda_dest;

typedef struct kds_lambda_cfg {
    const char *name;              /* borrowed */
    kds_lambda_retrieval retrieval;/* shared-throughput polling (default) or EFO */
    kds_efo_cfg efo;               /* push mechanics with EFO retrieval */
    sim_time poll_interval;        /* GetRecords per shard about once a second (1 s) */
    sim_dist call_latency_ms;      /* GetRecords round trip, ms (lognormal, median 40 ms,
                                      sigma 0.4: an assumption, as the poller's) */
    uint32_t batch_size;           /* BatchSize, 1..10,000 (100) */
    sim_time batching_window;      /* MaximumBatchingWindowInSeconds, 0..300 s (0) */
    uint32_t record_overhead;      /* B of event JSON per record besides its base64 data
                                      (500: an assumption), for the payload limit */
    uint32_t parallelization;      /* ParallelizationFactor, 1..10 (1) */
    kds_start_kind start;          /* TRIM_HORIZON (default), LATEST or AT_TIMESTAMP */
    sim_time start_time;           /* AT_TIMESTAMP: the timestamp, ns */
    sim_time begin;                /* CreateEventSourceMapping is called at (0) */
    sim_time creation_delay;       /* until the mapping is enabled and reads (0: a mapping
                                      that exists when the run starts; AWS publishes no
                                      figure); a LATEST mapping misses the records
                                      written meanwhile */
    sim_dist duration_ms;          /* function duration per invocation, ms (lognormal,
                                      median 50 ms, sigma 0.5: an assumption) */
    double duration_ms_per_record; /* plus this per record, ms (0) */
    sim_time timeout;              /* function timeout (3 s, Lambda's default); a longer
                                      run fails the invocation */
    double error_rate;             /* probability an invocation errors (0) */
    uint32_t concurrency;          /* concurrent invocations across the mapping (1,000,
                                      Lambda's default account quota) */
    sim_time throttle_retry;       /* a throttled invocation tries again after (1 s: an
                                      assumption) */
    int32_t max_retry_attempts;    /* MaximumRetryAttempts: -1 = until the records
                                      expire (default), or 0..10,000 */
    sim_time max_record_age;       /* MaximumRecordAgeInSeconds: -1 = none (default), or
                                      60 s..604,800 s */
    bool bisect_on_error;          /* BisectBatchOnFunctionError (false) */
    bool report_item_failures;     /* FunctionResponseTypes ReportBatchItemFailures
                                      (false): the function reports its first failed
                                      record (the poison record) */
    kds_lambda_dest on_failure;    /* on-failure destination (none) */
    sim_time retry_delay;          /* first retry after a failure (1 s: an assumption) */
    sim_time retry_delay_max;      /* doubling per consecutive failure up to (30 s) */
} kds_lambda_cfg;

/* Defaults for every field (AWS's where AWS documents one). */
void kds_lambda_cfg_defaults(kds_lambda_cfg *cfg);

/* The mapping's kind-specific figures (reported through ops->figures). */
typedef struct kds_lambda_stats {
    uint64_t invocations;           /* function invocations, retries and halves included */
    uint64_t function_errors;       /* invocations that failed (error, poison, timeout) */
    uint64_t timeouts;              /* of which ran into the function timeout */
    uint64_t retries;               /* invocations that consumed a retry attempt */
    uint64_t batches_bisected;      /* failing batches split in two */
    uint64_t records_to_failure_destination; /* records in batches given up to it */
    uint64_t failure_destination_messages;   /* batches given up to it (one message each) */
    uint64_t records_discarded;     /* records given up with no destination */
    uint64_t throttled_invocations; /* invocations refused by the concurrency limit */
    uint64_t records_processed;     /* records the function finished successfully */
    uint64_t largest_batch;         /* most records in one invocation */
    uint64_t records_missed_at_creation; /* LATEST: written while the mapping was created */
    uint64_t shards_blocked;        /* shards where a failed batch held the shard */
    double longest_block_s;         /* longest time one shard was held by failed batches */
    double iterator_age_ms_max;     /* Lambda's IteratorAge, maximum, ms */
} kds_lambda_stats;

/* The same per shard, for tests and plots. */
typedef struct kds_lambda_shard_stats {
    uint32_t shard;                 /* shard index */
    uint64_t invocations;
    uint64_t function_errors;
    uint64_t records_processed;
    uint64_t records_given_up;      /* to the destination or discarded */
    double longest_block_s;
    double iterator_age_ms_max;
} kds_lambda_shard_stats;

/* kds_consumer_make_fn for `lambda` consumers: cfg is a kds_lambda_cfg (copied; its
 * pointers borrowed). The mapping is created at cfg->begin and reads from
 * cfg->begin + cfg->creation_delay. Returns NULL when out of memory. */
kds_consumer *kds_lambda_make(sim *s, kds_stream *st, const void *cfg);

/* The figures of a consumer made by kds_lambda_make (asserted), as of the last
 * finish. */
const kds_lambda_stats *kds_lambda_stats_get(const kds_consumer *c);

/* Number of shards the mapping reads, and the figures of the i-th (in the order the
 * mapping met them: the stream's shards at creation, then new ones). Returns 0, or
 * SIM_EINVAL when i is out of range. */
size_t kds_lambda_shard_count(const kds_consumer *c);
int kds_lambda_shard_stats_get(const kds_consumer *c, size_t i, kds_lambda_shard_stats *out);

#endif
