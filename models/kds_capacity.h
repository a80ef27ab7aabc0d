/* kds_capacity.h - what changes the stream's shape during a run: resharding requests
 * scheduled by the scenario, rules that split hot shards, capacity mode switches, and
 * the on-demand service's own scaling.
 *
 * model.md sections 6 and 7. On-demand Standard keeps capacity for twice the peak
 * write rate of the previous 30 days (at least 4 MiB/s, 4,000 records/s): when demand
 * outgrows it, the stream grows after a scaling delay (about 15 minutes), splitting its
 * widest shards evenly, and meanwhile the shards throttle; a shard receiving more than
 * 500 KiB/s is split in the middle after about 15 minutes; hot keys are not isolated.
 * On-demand Advantage adds warm throughput, capacity kept ready whatever the traffic.
 * AWS publishes no exact timings: every delay and threshold is a setting with
 * model.md's default, and the report lists them as assumptions. The service checks its
 * capacity once a minute here, on the write rate offered in the minute before (stored
 * plus throttled).
 */
#ifndef KDS_CAPACITY_H
#define KDS_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kds_hashkey.h"
#include "kds_reshard.h"
#include "kds_stream.h"
#include "sim.h"

/* A request the scenario makes at a given time. */
typedef struct kds_capacity_event {
    sim_time at;
    kds_op_kind kind;      /* SPLIT, MERGE, UPDATE_COUNT or MODE_SWITCH */
    uint32_t shard;        /* SPLIT: shard index; MERGE: first shard */
    uint32_t other;        /* MERGE: adjacent shard */
    bool has_key;          /* SPLIT: key given (else the middle of the shard's range) */
    kds_hashkey key;       /* SPLIT: NewStartingHashKey */
    uint32_t target;       /* UPDATE_COUNT: shards; MODE_SWITCH: a kds_mode */
} kds_capacity_event;

/* "Split any open shard whose write rate stays above `threshold` of its budget for
 * `sustain`": checked every minute, split in the middle of the shard's range. */
typedef struct kds_split_rule {
    double threshold;      /* fraction of the 1 MiB/s or 1,000 records/s budget, (0, 10] */
    sim_time sustain;      /* consecutive time above it (>= 1 min) */
} kds_split_rule;

/* A change of On-demand Advantage warm throughput at a time. */
typedef struct kds_warm_change {
    sim_time at;
    uint64_t bytes_per_s;  /* warm throughput from then on, B/s (0 = none) */
} kds_warm_change;

typedef struct kds_ondemand_cfg {
    double peak_factor;        /* capacity for this times the 30-day peak (2.0) */
    sim_time peak_window;      /* the peak's look-back window, 1 h to 30 d (30 d: the
                                  model keeps 30 days of hourly peaks) */
    sim_time scale_delay;      /* time for the stream to grow to new capacity (15 min) */
    uint64_t hot_shard_bytes;  /* a shard above this write rate is split (500 KiB/s) */
    sim_time hot_shard_delay;  /* time until that split is done (15 min) */
    uint64_t min_bytes;        /* capacity floor (4 MiB/s) */
    uint64_t min_records;      /* capacity floor (4,000 records/s) */
    uint64_t ceiling_bytes;    /* Region ceiling on writes (10 GiB/s in us-east-1,
                                  us-west-2, eu-west-1; 200 MiB/s elsewhere): neither
                                  growth nor a hot-shard split takes the stream's
                                  shards' write budgets past it */
    sim_time scale_down_delay; /* time capacity must be in excess before the stream
                                  shrinks (24 h; assumption) */
    kds_warm_change *warm;     /* borrowed, sorted: Advantage warm throughput */
    size_t n_warm;
} kds_ondemand_cfg;

typedef struct kds_capacity_cfg {
    kds_capacity_event *events; /* borrowed, sorted by time */
    size_t n_events;
    kds_split_rule *rules;      /* borrowed */
    size_t n_rules;
    uint32_t max_mode_switches; /* UpdateStreamMode calls per rolling 24 h (2) */
    kds_ondemand_cfg od;
} kds_capacity_cfg;

/* Zero *cfg and fill in the defaults given in the field comments (AWS's numbers from
 * model.md, or the documented assumptions). Never fails. */
void kds_capacity_cfg_defaults(kds_capacity_cfg *cfg);

typedef struct kds_capacity kds_capacity;

/* Start managing `st` (schedules the scenario's requests and, when there are rules or
 * the stream is or may become on-demand, a check every minute). Returns NULL when out
 * of memory. The config is copied; its arrays are borrowed. */
kds_capacity *kds_capacity_new(sim *s, kds_stream *st, const kds_capacity_cfg *cfg);
void kds_capacity_free(kds_capacity *c); /* NULL-safe */

/* Call fn(ctx) at each completed capacity-mode switch, the stream already in its new
 * mode (one hook; fn NULL removes it). */
void kds_capacity_on_mode_switch(kds_capacity *c, void (*fn)(void *ctx), void *ctx);

/* Figures for the report. */
typedef struct kds_capacity_stats {
    uint64_t scale_ups;          /* on-demand growths completed */
    uint64_t scale_downs;        /* on-demand shrinks completed */
    uint64_t hot_splits;         /* on-demand hot-shard splits completed */
    uint64_t rule_splits;        /* splits requested by rules */
    uint64_t mode_switches;      /* UpdateStreamMode calls accepted */
    double peak_write_bytes_s;   /* highest one-minute offered write rate seen, B/s */
    double capacity_bytes_s_end; /* on-demand target capacity at the end, B/s */
} kds_capacity_stats;

/* The scaling figures so far (borrowed: valid until kds_capacity_free). */
const kds_capacity_stats *kds_capacity_stats_get(const kds_capacity *c);

/* The settings in force (defaults filled in). */
const kds_capacity_cfg *kds_capacity_cfg_get(const kds_capacity *c);

#endif
