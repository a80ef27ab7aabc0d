/* kds_producer.h - producers: applications that put records into the stream.
 *
 * model.md section 2. A producer generates records at a rate profile (evenly spaced or
 * Poisson), with a size distribution and a partition-key distribution, and sends them
 * with PutRecords (batches of up to 500 records and 10 MiB, flushed when full or when
 * the linger time has passed) or PutRecord (one record a call). It is simulated per
 * API call, never per record: a flush counts the records that arrived since the last
 * one, a request's records are spread over the shards with one draw (kds_keys.h), and
 * the service's answer lands one round trip after the send.
 *
 * Failed records (ProvisionedThroughputExceeded, InternalFailure) are resent alone with
 * exponential backoff and full jitter up to max_attempts; a producer with
 * max_attempts 1 loses them. A request whose reply is lost (timeout_rate) after the
 * service stored its records is resent whole: the stored records are written twice,
 * as duplicates under new sequence numbers.
 *
 * KPL-style aggregation (model.md section 2) packs up to `aggregate` user records into
 * one Kinesis record of their summed size plus `aggregate_overhead`: the rate stays the
 * user records' rate, and the producer puts rate / aggregate Kinesis records a second.
 * As the KPL's AggregationMaxSize, an aggregate closes before the user record that would
 * take it past the stream's max_record_size, which starts the next one: records of
 * varying sizes then make more aggregates. Every count of this model and of the stream
 * is of Kinesis records (aggregates).
 */
#ifndef KDS_PRODUCER_H
#define KDS_PRODUCER_H

#include <stdbool.h>
#include <stdint.h>

#include "kds_keys.h"
#include "kds_rate.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

typedef enum { KDS_API_PUT_RECORDS, KDS_API_PUT_RECORD } kds_api;

typedef struct kds_producer_cfg {
    const char *name;        /* borrowed */
    kds_rate rate;           /* records per second, all clients together */
    bool poisson;            /* Poisson arrivals; else evenly spaced */
    sim_dist size;           /* record size in B, data + partition key, as AWS counts */
    kds_keys_cfg keys;       /* partition keys */
    kds_api api;             /* PutRecords (default) or PutRecord */
    bool ordered;            /* PutRecord with SequenceNumberForOrdering, each naming the
                                previous record's sequence number: a client sends its next
                                record only once the previous one is answered (stored or
                                given up), one request in flight per client; the others
                                wait in its buffer (records_buffered) */
    uint32_t batch_records;  /* PutRecords: records per request, 1..500 (500) */
    uint64_t batch_bytes;    /* PutRecords: bytes per request, up to 10 MiB (5 MiB) */
    sim_time linger;         /* longest a record waits for its batch (100 ms, as the
                                KPL's RecordMaxBufferedTime) */
    uint32_t clients;        /* independent senders sharing the rate (1) */
    sim_dist latency_ms;     /* request round trip in ms (lognormal, median 20 ms) */
    uint32_t max_attempts;   /* sends per record, first included (3); 1 = no retries */
    sim_time backoff_base;   /* first retry delay cap (100 ms), doubling per attempt */
    sim_time backoff_max;    /* retry delay cap (5 s) */
    double timeout_rate;     /* probability a request's reply is lost after the service
                                stored its records (0) */
    sim_time timeout;        /* how long the client waits for a lost reply (5 s) */
    sim_time start;          /* first record at (0) */
    sim_time stop;           /* no records from (-1 = never) */
    sim_time *marks;         /* borrowed: times at which the next record is marked
                                (a poison record for consumers), sorted */
    size_t n_marks;
    uint32_t aggregate;      /* user records per Kinesis record (KPL aggregation); 1 (or
                                0) = none */
    uint64_t aggregate_overhead; /* B added to each aggregated record: the KPL format's
                                    4-byte magic and 16-byte MD5 digest (20) */
} kds_producer_cfg;

typedef struct kds_producer_stats {
    uint64_t records_attempted;       /* distinct records sent at least once */
    uint64_t records_written;         /* distinct records stored at least once */
    uint64_t write_throttled_records; /* record sends refused for throughput */
    uint64_t records_failed_internal; /* record sends refused with InternalFailure */
    uint64_t records_given_up;        /* distinct records never stored, abandoned */
    uint64_t records_too_large;       /* records above max_record_size (ValidationException;
                                         included in records_given_up) */
    uint64_t duplicates_written;      /* extra stored copies from retried timeouts */
    uint64_t records_retried;         /* record resends */
    uint64_t put_calls;               /* API calls made */
    uint64_t calls_timed_out;         /* calls whose reply was lost */
    uint64_t records_in_flight;       /* at the end: sent, not yet stored nor given up */
    uint64_t record_sends;            /* records in all sends, retries included */
    uint64_t record_sends_pending;    /* at the end: records in sends not yet answered */
    uint64_t records_buffered;        /* at the end: generated, not yet sent (with `ordered`,
                                         the buffer a client's round trip let grow) */
    uint64_t marks_written;           /* marked records sent */
    uint64_t records_rerouted;        /* record resends whose shard a reshard had closed,
                                         sent whole to one child (not a report key: it
                                         makes the report list that simplification) */
} kds_producer_stats;

typedef struct kds_producer kds_producer;

/* Create a producer writing into `st`, starting its clients at cfg->start. `index`
 * is the producer's number, stored in its runs. `horizon` is the end of the run
 * (SIM_TIME_MAX for none): a flush beyond it, made early by a serve event within the
 * run, draws as it would in a longer run but counts nothing. Returns NULL when out
 * of memory. The config is copied; pointers in it are borrowed and must outlive the
 * producer. `keys`, when not NULL, is the key table of an earlier producer on the same
 * stream with the same key law (kds_keys_cfg_equal), which this one then holds too
 * (kds_producer_keys); NULL builds its own. */
kds_producer *kds_producer_new(sim *s, kds_stream *st, const kds_producer_cfg *cfg,
                               uint32_t index, sim_time horizon, kds_keys *keys);

/* Free the producer and its pending requests. Events that refer to it must not run
 * afterwards (free the simulation first, or stop running it). NULL-safe. */
void kds_producer_free(kds_producer *p);

/* Settle the end-of-run figures (records in flight and buffered). */
void kds_producer_finish(kds_producer *p, sim_time end);

/* The producer's figures so far, and its settings (clients at least 1); both borrowed,
 * valid until kds_producer_free. */
const kds_producer_stats *kds_producer_stats_get(const kds_producer *p);
const kds_producer_cfg *kds_producer_cfg_get(const kds_producer *p);

/* The producer's key distribution as built over the stream (borrowed, valid until
 * kds_producer_free; shared with the producers of the same law): its Zipf sum, for the
 * report's hot keys, and the table a later producer of the same law shares. */
kds_keys *kds_producer_keys(const kds_producer *p);

/* Defaults for every field but name, rate and size. */
void kds_producer_cfg_defaults(kds_producer_cfg *cfg);

#endif
