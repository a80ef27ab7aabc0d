/* testworld.h - the world the model suites start from: a stream and one producer.
 * Header-only (static inline), because testutil.c is also linked into the kernel's
 * suites, which do not link the models. */
#ifndef TESTWORLD_H
#define TESTWORLD_H

#include <string.h>

#include "kds_world.h"

/* Fill *cfg (zeroed first) with the stream defaults and `shards` shards, master seed
 * `seed`, `duration` ns, and one producer *prod (zeroed first, then its defaults) named
 * "prod", writing `rate` records/s of exactly `size` B. cfg points at prod: both must
 * outlive the world. No consumer: the caller adds them and changes anything else. */
static inline void tw_one_producer(kds_world_cfg *cfg, kds_producer_cfg *prod, uint64_t seed,
                                   sim_time duration, uint32_t shards, double rate,
                                   double size)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->seed = seed;
    cfg->duration = duration;
    kds_stream_cfg_defaults(&cfg->stream);
    cfg->stream.shards = shards;
    kds_producer_cfg_defaults(prod);
    prod->name = "prod";
    prod->rate = kds_rate_constant(rate);
    prod->size = sim_dist_const(size);
    cfg->producers = prod;
    cfg->n_producers = 1;
}

#endif
