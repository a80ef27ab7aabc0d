/* kds_world.h - one simulated world: a stream, its producers and consumers on one
 * simulation, built from plain configs and run for a duration.
 *
 * This is the models' entry point for the front end and for tests: fill a
 * kds_world_cfg (the scenario loader does it from YAML; tests do it in C), build,
 * run, read the statistics, free. Entities are built in config order, each drawing
 * from its own random stream named after it, so that adding an entity does not change
 * the draws of the others.
 */
#ifndef KDS_WORLD_H
#define KDS_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "kds_capacity.h"
#include "kds_consumer.h"
#include "kds_poller.h"
#include "kds_producer.h"
#include "kds_stream.h"
#include "sim.h"

typedef enum {
    KDS_CONSUMER_POLLING, /* the polling consumer of kds_poller.h, from `polling` */
    KDS_CONSUMER_MODEL    /* any other kind, built by `make` from `cfg` */
} kds_consumer_kind;

/* Builds a consumer of some kind from its config on stream `st`; NULL when out of
 * memory. Each consumer model exports one (kds_efo_make, kds_lambda_make, ...). */
typedef kds_consumer *(*kds_consumer_make_fn)(sim *s, kds_stream *st, const void *cfg);

typedef struct kds_consumer_cfg {
    kds_consumer_kind kind;
    kds_poller_cfg polling;    /* KDS_CONSUMER_POLLING */
    kds_consumer_make_fn make; /* KDS_CONSUMER_MODEL */
    const void *cfg;           /* KDS_CONSUMER_MODEL: the kind's config (borrowed) */
} kds_consumer_cfg;

typedef struct kds_world_cfg {
    uint64_t seed;               /* master seed */
    sim_time duration;           /* simulated time to run, ns (> 0) */
    kds_stream_cfg stream;
    kds_producer_cfg *producers; /* borrowed array */
    size_t n_producers;
    kds_consumer_cfg *consumers; /* borrowed array */
    size_t n_consumers;
    kds_capacity_cfg capacity;   /* resharding requests, rules, on-demand scaling; all
                                    zero means kds_capacity_cfg_defaults() */
    struct kds_trace *trace;     /* borrowed: the event trace, or NULL */
    uint64_t max_memory;         /* stop the run when its resident memory exceeds this
                                    many bytes (checked once built, then every simulated
                                    10 s); 0 = none */
    sim_time peak_since;         /* a warm-up's end (0: none): the stream's records per
                                    second and each consumer's iterator age keep their
                                    busiest base bucket from then on apart as well, which
                                    a long run's merged buckets no longer give
                                    (sim_series_keep_peak_since) */
} kds_world_cfg;

__extension__ typedef unsigned __int128 kds_u128;

/* The world's cumulative billing counters at one instant: the bill as run splits the
 * run at each capacity-mode switch by their differences (kds_billing_segments). Byte-
 * hours are each shard's real meter rounded to a whole byte-hour, then summed. */
typedef struct kds_counters {
    sim_time at;                   /* when they were taken, ns */
    kds_mode mode;                 /* the stream's capacity mode from then on */
    uint64_t records_in;           /* the shards' stored records... */
    uint64_t bytes_in;             /* ...bytes */
    uint64_t put_units;            /* ...PUT payload units */
    uint64_t bytes_in_kib_rounded; /* ...bytes with each record rounded up to 1 KiB */
    kds_u128 byte_hours_24h_7d;    /* ...retention meters (as of the last metering) */
    kds_u128 byte_hours_over_7d;
    uint64_t bytes_read_shared;    /* the consumers' reads... */
    uint64_t bytes_read_efo;
    uint64_t bytes_read_over_7d;
} kds_counters;

typedef struct kds_world {
    const kds_world_cfg *cfg; /* borrowed; must outlive the world */
    sim *sim;                 /* owned */
    kds_stream stream;
    kds_producer **producers; /* owned, config order */
    size_t n_producers;
    kds_consumer **consumers; /* owned, config order */
    size_t n_consumers;
    kds_capacity *capacity;   /* owned */
    kds_counters *switches;   /* owned: the counters at each completed capacity-mode
                                 switch, in time order (the retention metered first) */
    size_t n_switches, cap_switches;
    int finished;             /* kds_world_finish() ran */
    int violated;             /* a conservation invariant failed (kds_invariant.h) */
    char violation[512];      /* ...its name and details */
    int out_of_memory;        /* stopped by the max_memory guard */
    uint64_t rss_peak;        /* highest resident memory the guard saw, B */
    double guard_read_at;     /* wall clock of the guard's last reading, s (sim_wall_s) */
} kds_world;

/* Build everything at time 0. Returns 0, SIM_ENOMEM or SIM_EINVAL (a config the loader
 * should have refused); on failure nothing is left allocated. A world whose building
 * alone took more than cfg->max_memory comes back with out_of_memory set, and running
 * it runs nothing. */
int kds_world_init(kds_world *w, const kds_world_cfg *cfg);

/* Run until simulated time t (<= cfg->duration). Returns events run. Call repeatedly
 * with growing t to report progress. */
uint64_t kds_world_run_until(kds_world *w, sim_time t);

/* Run to cfg->duration and settle every end-of-run figure. */
void kds_world_run(kds_world *w);

/* Settle end-of-run figures at the current time (idempotent), then check the
 * conservation invariants (kds_invariant.h): a violation sets w->violated and
 * w->violation, which the front end reports before writing anything. */
void kds_world_finish(kds_world *w);

void kds_world_fini(kds_world *w); /* NULL-safe */

/* The cumulative billing counters of `w` now. Never fails. */
void kds_world_counters(const kds_world *w, kds_counters *out);

#endif
