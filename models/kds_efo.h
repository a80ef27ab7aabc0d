/* kds_efo.h - enhanced fan-out: SubscribeToShard subscriptions and the `efo` consumer.
 *
 * model.md section 3. A registered consumer subscribes to each shard; the service
 * pushes records over HTTP/2 as they arrive, each consumer with its own 2 MiB/s per
 * shard whatever the others do, for sessions of up to 5 minutes, after which the
 * consumer subscribes again from the last sequence number it received.
 *
 * A subscription that is caught up takes each new run as it is appended (a shard
 * append listener) and hands it to its owner with a delivery time of now plus a push
 * delay drawn from a distribution (about 70 ms typical); no event is scheduled for it.
 * A subscription that falls behind (its 2 MiB/s budget short, between sessions, or
 * paused by its owner) catches up with push events every `push_interval` until it is
 * live again. The budget is a token bucket `efo_burst_s` seconds deep (the stream's
 * setting: AWS gives the rate, not the depth). Delivery times never go backwards
 * within a subscription.
 */
#ifndef KDS_EFO_H
#define KDS_EFO_H

#include <stdbool.h>
#include <stdint.h>

#include "kds_bucket.h"
#include "kds_consumer.h"
#include "kds_log.h"
#include "kds_poller.h"
#include "kds_stream.h"
#include "sim.h"
#include "sim_dist.h"

/* Settings of the push mechanics, shared by every consumer that reads through EFO. */
typedef struct kds_efo_cfg {
    sim_dist push_delay_ms;  /* write to push, ms (lognormal, median 65 ms, sigma 0.3:
                                an assumption fitted to AWS's "about 70 ms") */
    sim_dist subscribe_ms;   /* SubscribeToShard round trip when (re)subscribing, ms
                                (lognormal, median 100 ms, sigma 0.5; assumption) */
    sim_time session;        /* a subscription lasts 5 min */
    uint64_t bytes_per_s;    /* per consumer per shard: 2 MiB/s */
    sim_time push_interval;  /* catch-up push cadence when behind (200 ms; assumption:
                                AWS says only that a consumer behind catches up) */
} kds_efo_cfg;

/* Zero *cfg and fill in the defaults given in the field comments. Never fails. */
void kds_efo_cfg_defaults(kds_efo_cfg *cfg);

/* The assumptions of *cfg, for the assumptions function of a consumer reading through
 * EFO: push_delay, subscribe_latency and push_interval, each reported through fn(arg,
 * key, value, why) under the consumer's own keys. */
void kds_efo_assumptions(const kds_efo_cfg *cfg, kds_assume_fn fn, void *arg);

typedef struct kds_efo_sub kds_efo_sub;

/* Receives the slices of one push, delivered at time `at` (>= now). Called from inside
 * the simulation (an append or a push event); `owner` is the subscription's owner. The
 * slices are the log's own runs or the subscription's scratch: valid during the call
 * only, and before the receiver changes the log. */
typedef void (*kds_efo_deliver_fn)(void *owner, kds_efo_sub *sub, const kds_slice *sl,
                                   size_t n, sim_time at);

struct kds_efo_sub {
    void *owner;              /* borrowed */
    const char *name;         /* borrowed: the consumer's name, for the event trace */
    kds_efo_deliver_fn deliver;
    const kds_efo_cfg *cfg;   /* borrowed */
    kds_stream *st;           /* borrowed */
    kds_shard *sh;            /* borrowed */
    sim *sim;                 /* borrowed */
    gsl_rng *rng;             /* borrowed (the owner's stream) */
    kds_consumer_stats *cs;   /* borrowed: where MillisBehindLatest and expired records
                                 go */
    kds_consumer_stats *bill; /* borrowed: where the billing meters go (bytes pushed,
                                 long-term retrieval): cs unless the owner sets its own
                                 statistics after kds_efo_sub_start, so that they are
                                 current at any time (a bill split at a mode switch) */
    kds_cursor cur;           /* next record to push */
    uint64_t start_pos;       /* first position this subscription was to read */
    kds_bucket budget;        /* the consumer's own 2 MiB/s on this shard, the stream's
                                 limits.efo_burst deep (efo_burst_s) */
    bool started;             /* positioned and registered */
    bool subscribed;          /* inside a session */
    bool live;                /* caught up: new runs are pushed on append (only when
                                 subscribed and not paused) */
    bool paused;              /* the owner asked for no pushes */
    bool push_pending;        /* a catch-up push event is scheduled */
    bool done;                /* SHARD_END reached on a closed shard */
    sim_time last_at;         /* delivery time of the last push */
    uint64_t sessions;        /* SubscribeToShard calls made */
    sim_event_id ev_session;  /* the pending end of the session, or of the round trip of
                                 the next SubscribeToShard (0: none) */
    bool new_owner;           /* the next session is a new owner's (resubscribe) */
    kds_start_kind start;     /* StartingPosition of the first SubscribeToShard (the
                                 event trace names it) */
    kds_slice *scratch;       /* owned: slices of the current push */
    size_t n_scratch, cap_scratch;
};

/* Start subscription `sub` (memory owned by the caller, zeroed) to shard `sh` at the
 * current time, positioned by `start` (and start_time / start_pos), pushing to
 * deliver(owner, ...); `name` (borrowed) is the registered consumer's, as the event
 * trace shows it. The first SubscribeToShard takes one subscribe round trip.
 * Returns 0 or SIM_ENOMEM. */
int kds_efo_sub_start(kds_efo_sub *sub, sim *s, kds_stream *st, kds_shard *sh,
                      const kds_efo_cfg *cfg, gsl_rng *rng, kds_consumer_stats *cs,
                      kds_start_kind start, sim_time start_time, uint64_t start_pos,
                      const char *name, void *owner, kds_efo_deliver_fn deliver);

/* Stop pushing until kds_efo_sub_resume() (owner backpressure, a crashed reader). */
void kds_efo_sub_pause(kds_efo_sub *sub);
void kds_efo_sub_resume(kds_efo_sub *sub);

/* A new reader of the shard subscribes again from `pos` (clamped to the retained
 * records), AFTER_SEQUENCE_NUMBER of its checkpoint: a KCL lease's new owner (or its owner
 * again, after a restart), a Flink job's source restarted from its checkpoint. `why`
 * (static) says which, in the event trace. The current session, or the SubscribeToShard
 * under way, ends now: nothing is pushed until the new call's round trip
 * (subscribe_latency) is over, and the new session lasts the full 5 minutes. Unpauses
 * the subscription. */
void kds_efo_sub_resubscribe(kds_efo_sub *sub, uint64_t pos, const char *why);

/* Unregister from the shard and free the scratch space. The memory stays the
 * caller's. Events already scheduled for it must not run afterwards. */
void kds_efo_sub_fini(kds_efo_sub *sub);

/* ---- the `efo` consumer: an application reading every shard through EFO --------- */

typedef struct kds_efo_consumer_cfg {
    const char *name;         /* borrowed */
    kds_efo_cfg efo;          /* push mechanics */
    kds_start_kind start;     /* initial position (LATEST by default, as the KCL's) */
    sim_time start_time;      /* AT_TIMESTAMP */
    uint64_t start_pos;       /* AT/AFTER_SEQUENCE_NUMBER */
    sim_dist process_ms;      /* processing time per push, ms (0) */
    sim_time begin;           /* registers and subscribes at (0) */
    sim_time pause_at;        /* a stall starts at... */
    sim_time pause_for;       /* ...and lasts (0 = none) */
} kds_efo_consumer_cfg;

/* Zero *cfg and fill in the defaults given in the field comments (name "efo", a static
 * string; LATEST; kds_efo_cfg_defaults for the subscription). Never fails. */
void kds_efo_consumer_cfg_defaults(kds_efo_consumer_cfg *cfg);

/* kds_consumer_make_fn for `efo` consumers: cfg is a kds_efo_consumer_cfg. */
kds_consumer *kds_efo_make(sim *s, kds_stream *st, const void *cfg);

#endif
