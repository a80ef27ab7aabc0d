/* kds_poller.h - a polling consumer: one application reading every shard with
 * GetRecords through the shared 5 calls/s and 2 MiB/s per shard.
 *
 * model.md sections 3 and 4. Per shard the consumer loops: call GetRecords (at most
 * max_records, at most 10 MiB), wait one round trip, process the batch, sleep the idle
 * time, call again. A throttled call returns nothing and the reader waits one idle
 * interval (the KCL's behaviour). An iterator unused for 5 minutes (a long pause) has
 * expired and is fetched again from the last position. Each shard's first call is at a
 * random phase within one idle interval, so that several consumers do not poll in
 * lockstep. Leases (which worker reads which shard) come with the KCL model; here one
 * reader reads every shard. A closed shard read to its end is left (SHARD_END).
 */
#ifndef KDS_POLLER_H
#define KDS_POLLER_H

#include <stdint.h>

#include "kds_consumer.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

typedef enum {
    KDS_START_TRIM_HORIZON,
    KDS_START_LATEST,
    KDS_START_AT_TIMESTAMP,
    KDS_START_AT_SEQUENCE_NUMBER,
    KDS_START_AFTER_SEQUENCE_NUMBER
} kds_start_kind;

typedef struct kds_poller_cfg {
    const char *name;           /* borrowed */
    sim_time idle;              /* idleTimeBetweenReads (1,500 ms, the KCL 2.x default) */
    uint32_t max_records;       /* per call, 1..10,000 (10,000); the stream's
                                   max_records_per_call caps it */
    kds_start_kind start;       /* iterator type of the first GetShardIterator */
    sim_time start_time;        /* AT_TIMESTAMP: the timestamp, ns */
    uint64_t start_pos;         /* AT/AFTER_SEQUENCE_NUMBER: the record position */
    sim_dist call_latency_ms;   /* GetRecords round trip, ms (lognormal, median 40 ms) */
    sim_dist process_ms;        /* processing time per batch, ms (0) */
    double process_ms_per_record; /* plus this per record, ms (0) */
    sim_time begin;             /* the consumer starts at (0) */
    sim_time pause_at;          /* a stall starts at... */
    sim_time pause_for;         /* ...and lasts (0 = none) */
} kds_poller_cfg;

typedef struct kds_poller kds_poller;

/* Zero *cfg and fill in the defaults given in the field comments (name "poller", a
 * static string; TRIM_HORIZON; 1,500 ms between reads). Never fails. */
void kds_poller_cfg_defaults(kds_poller_cfg *cfg);

/* Create the consumer reading every shard of `st` from cfg->begin, including shards
 * created later (from their start). Returns NULL when out of memory. The config is
 * copied; its pointers are borrowed. */
kds_poller *kds_poller_new(sim *s, kds_stream *st, const kds_poller_cfg *cfg);

/* The embedded consumer header (for the run and the reports). */
kds_consumer *kds_poller_consumer(kds_poller *p);

#endif
