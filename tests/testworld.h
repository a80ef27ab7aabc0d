/* testworld.h - the world the model suites start from: a stream and one producer; and
 * a run with its event trace in memory, read back for the order in which a consumer
 * got each shard's records (parents before children). Header-only (static inline),
 * because testutil.c is also linked into the kernel's suites, which do not link the
 * models; the includer includes check.h first. */
#ifndef TESTWORLD_H
#define TESTWORLD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_trace.h"
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

/* Build the world of *cfg in *w and run it to its end with the event trace in memory;
 * return the trace text (malloc'd: the caller frees it). The world is left finished,
 * for its statistics; the caller finalises it. Asserts (ck_assert) on failures, so it
 * is for Check tests only: the caller includes check.h first. */
static inline char *tw_run_traced(kds_world *w, kds_world_cfg *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(mem);
    kds_trace tr = {.out = mem, .shard = -1};
    cfg->trace = &tr;
    ck_assert_int_eq(kds_world_init(w, cfg), 0);
    kds_world_run(w);
    w->stream.trace = NULL; /* tr goes out of scope */
    cfg->trace = NULL;
    ck_assert_int_eq(fclose(mem), 0);
    return text;
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
    char line[512];
    for (const char *at = text; at && *at;) {
        /* One line at a time, in a copy: sscanf measures the whole string it reads. */
        const char *eol = strchr(at, '\n');
        size_t len = eol ? (size_t)(eol - at) : strlen(at);
        if (len >= sizeof line)
            len = sizeof line - 1; /* the figures read are near the start */
        memcpy(line, at, len);
        line[len] = '\0';
        at = eol ? eol + 1 : NULL;
        double t;
        char kind[16], who[64];
        unsigned shard;
        unsigned long long records;
        const char *by = NULL, *what = NULL;
        if (sscanf(line, "%lf %15s %63s shardId-%u", &t, kind, who, &shard) != 4 ||
            strcmp(who, entity) != 0 || shard >= n)
            continue;
        if (strcmp(kind, "push") == 0) {
            what = strstr(line, "SubscribeToShardEvent: ");
            by = strstr(line, "arrives at +");
        } else if (strcmp(kind, "get") == 0) {
            what = strstr(line, "GetRecords: ");
            by = strstr(line, "processed by +");
        }
        if (!what || !by || sscanf(strchr(what, ' ') + 1, "%llu records", &records) != 1 ||
            records == 0)
            continue;
        double when = t + strtod(strchr(by, '+') + 1, NULL) / 1000.0;
        if (span[shard].first < 0 || when < span[shard].first)
            span[shard].first = when;
        if (when > span[shard].last)
            span[shard].last = when;
    }
}

/* Records of shard `child` reached the consumer only after the last of shard `parent`,
 * in spans from tw_trace_spans (to their millisecond). Check assertions. */
static inline void tw_check_after(const tw_span *sp, uint32_t parent, uint32_t child)
{
    ck_assert_msg(sp[parent].last >= 0 && sp[child].first >= 0, "shard %u or %u never read",
                  parent, child);
    ck_assert_msg(sp[child].first >= sp[parent].last - 0.0015,
                  "shard %u's first records arrived at %.3f s, before its parent %u's last at "
                  "%.3f s",
                  child, sp[child].first, parent, sp[parent].last);
}

#endif
