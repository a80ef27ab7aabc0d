/* testworld.h - the world the model suites start from: a stream and one producer.
 * Header-only (static inline), because testutil.c is also linked into the kernel's
 * suites, which do not link the models. */
#ifndef TESTWORLD_H
#define TESTWORLD_H

#include <stdio.h>
#include <stdlib.h>
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

/* When a consumer finished with each shard's records, read from an event trace (the
 * text kds_trace_emit writes): for shard i, span[i].first and .last are the earliest
 * and latest times (s) at which records of shard i reached `entity` - a push's arrival
 * ("arrives at +N ms") or a GetRecords reply's processing ("processed by +N ms"), for
 * pushes and replies that held records. Shards never reached keep first = -1. The times
 * are printed to the millisecond, so comparisons of them hold to about 1 ms. */
typedef struct tw_span {
    double first, last;
} tw_span;

static inline void tw_trace_spans(const char *text, const char *entity, tw_span *span, size_t n)
{
    for (size_t i = 0; i < n; i++)
        span[i] = (tw_span){-1, -1};
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        double t;
        char kind[16], who[64];
        unsigned shard;
        unsigned long long records;
        const char *by = NULL, *what = NULL;
        if (sscanf(line, "%lf %15s %63s shardId-%u", &t, kind, who, &shard) == 4 &&
            strcmp(who, entity) == 0 && shard < n) {
            if (strcmp(kind, "push") == 0) {
                what = strstr(line, "SubscribeToShardEvent: ");
                by = strstr(line, "arrives at +");
            } else if (strcmp(kind, "get") == 0) {
                what = strstr(line, "GetRecords: ");
                by = strstr(line, "processed by +");
            }
            if (what && by && (!eol || by < eol) &&
                sscanf(strchr(what, ' ') + 1, "%llu records", &records) == 1 && records > 0) {
                double at = t + strtod(strchr(by, '+') + 1, NULL) / 1000.0;
                if (span[shard].first < 0 || at < span[shard].first)
                    span[shard].first = at;
                if (at > span[shard].last)
                    span[shard].last = at;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
}

#endif
