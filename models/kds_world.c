/* kds_world.c - building, running and freeing a simulated world (kds_world.h). */
#include "kds_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kds_invariant.h"
#include "sim_err.h"
#include "sim_mem.h"

static void meter_hourly(sim *s, void *ctx);
static void memory_guard(sim *s, void *ctx);
static void mode_switched(void *ctx);

int kds_world_init(kds_world *w, const kds_world_cfg *cfg)
{
    memset(w, 0, sizeof *w);
    w->cfg = cfg;
    if (cfg->duration <= 0)
        return SIM_EINVAL;
    w->sim = sim_new(cfg->seed);
    if (!w->sim)
        return SIM_ENOMEM;
    kds_stream_cfg sc = cfg->stream;
    sc.horizon = cfg->duration;
    int rc = kds_stream_init(&w->stream, w->sim, &sc);
    if (rc) {
        sim_free(w->sim);
        w->sim = NULL;
        return rc;
    }
    w->stream.trace = cfg->trace;
    w->producers = calloc(cfg->n_producers ? cfg->n_producers : 1, sizeof *w->producers);
    w->consumers = calloc(cfg->n_consumers ? cfg->n_consumers : 1, sizeof *w->consumers);
    size_t *law_first = malloc((cfg->n_producers ? cfg->n_producers : 1) * sizeof *law_first);
    size_t n_laws = 0;
    if (!w->producers || !w->consumers || !law_first) {
        free(law_first);
        kds_world_fini(w);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < cfg->n_producers; i++) {
        /* Producers of one key law share its table, built and rebuilt at each reshard
         * once for them all (kds_keys_new): each law is compared with the first producer
         * of every law found so far. */
        kds_keys *keys = NULL;
        for (size_t j = 0; j < n_laws && !keys; j++)
            if (kds_keys_cfg_equal(&cfg->producers[law_first[j]].keys, &cfg->producers[i].keys))
                keys = kds_producer_keys(w->producers[law_first[j]]);
        if (!keys)
            law_first[n_laws++] = i;
        w->producers[i] = kds_producer_new(w->sim, &w->stream, &cfg->producers[i], (uint32_t)i,
                                          cfg->duration, keys);
        if (!w->producers[i]) {
            free(law_first);
            kds_world_fini(w);
            return SIM_ENOMEM;
        }
        w->n_producers++;
    }
    free(law_first);
    kds_capacity_cfg capcfg = cfg->capacity;
    if (capcfg.od.peak_factor == 0) {
        /* A zeroed config (tests, callers that do not care): AWS's defaults, keeping
         * whatever requests and rules were given. */
        kds_capacity_cfg d;
        kds_capacity_cfg_defaults(&d);
        d.events = capcfg.events;
        d.n_events = capcfg.n_events;
        d.rules = capcfg.rules;
        d.n_rules = capcfg.n_rules;
        capcfg = d;
    }
    w->capacity = kds_capacity_new(w->sim, &w->stream, &capcfg);
    if (!w->capacity) {
        kds_world_fini(w);
        return SIM_ENOMEM;
    }
    kds_capacity_on_mode_switch(w->capacity, mode_switched, w);
    if (cfg->max_memory > 0) {
        w->guard_read_at = -INFINITY; /* the first tick reads */
        sim_at(w->sim, SIM_S(10), memory_guard, w);
    }
    if (cfg->stream.retention > SIM_HOUR(24) && cfg->duration > SIM_HOUR(24))
        sim_at(w->sim, SIM_HOUR(24), meter_hourly, w);
    for (size_t i = 0; i < cfg->n_consumers; i++) {
        const kds_consumer_cfg *cc = &cfg->consumers[i];
        kds_consumer *c = NULL;
        switch (cc->kind) {
        case KDS_CONSUMER_POLLING: {
            kds_poller *p = kds_poller_new(w->sim, &w->stream, &cc->polling);
            c = p ? kds_poller_consumer(p) : NULL;
            break;
        }
        case KDS_CONSUMER_MODEL:
            c = cc->make(w->sim, &w->stream, cc->cfg);
            break;
        }
        if (!c) {
            kds_world_fini(w);
            return SIM_ENOMEM;
        }
        w->consumers[w->n_consumers++] = c;
    }
    /* Nothing has been added yet: the first events run with kds_world_run(). */
    if (cfg->peak_since > 0) {
        sim_series_keep_peak_since(&w->stream.st.in_records_s, cfg->peak_since);
        for (size_t i = 0; i < w->n_consumers; i++)
            sim_series_keep_peak_since(&w->consumers[i]->st.iterator_age_min, cfg->peak_since);
    }
    /* The guard's first tick is 10 simulated seconds away, which a world of millions of
     * readers takes minutes of wall time and gigabytes to reach: one that has outgrown
     * its budget in the building stops before its first event. */
    if (cfg->max_memory > 0) {
        w->rss_peak = sim_rss_bytes();
        w->out_of_memory = w->rss_peak > cfg->max_memory;
    }
    return 0;
}

/* Meter retention every simulated hour (only streams that keep data past 24 h have
 * anything to meter). */
static void meter_hourly(sim *s, void *ctx)
{
    kds_world *w = ctx;
    kds_stream_meter_retention(&w->stream);
    sim_after(s, SIM_HOUR(1), meter_hourly, w);
}

/* A real meter rounded to a whole unit (it may exceed 64 bits). */
static kds_u128 round_u128(double x)
{
    return x > 0 ? (kds_u128)(x + 0.5) : 0;
}

void kds_world_counters(const kds_world *w, kds_counters *out)
{
    const kds_stream *st = &w->stream;
    memset(out, 0, sizeof *out);
    out->at = sim_now(w->sim);
    out->mode = st->cfg.mode;
    for (size_t i = 0; i < st->n_shards; i++) {
        const kds_shard_stats *ss = &st->shards[i]->st;
        out->records_in += ss->records_in;
        out->bytes_in += ss->bytes_in;
        out->put_units += ss->put_units;
        out->bytes_in_kib_rounded += ss->bytes_in_kib_rounded;
        out->byte_hours_24h_7d += round_u128(ss->byte_hours_24h_7d);
        out->byte_hours_over_7d += round_u128(ss->byte_hours_over_7d);
    }
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_consumer_stats *cs = &w->consumers[i]->st;
        out->bytes_read_shared += cs->bytes_read_shared;
        out->bytes_read_efo += cs->bytes_read_efo;
        out->bytes_read_over_7d += cs->bytes_read_over_7d;
    }
}

/* The counters at a completed mode switch, for the bill as run. The retention is
 * metered up to the switch first (when the run meters it at all), so that each mode
 * gets the byte-hours of its own time. */
static void mode_switched(void *ctx)
{
    kds_world *w = ctx;
    if (w->cfg->stream.retention > SIM_HOUR(24) && w->cfg->duration > SIM_HOUR(24))
        kds_stream_meter_retention(&w->stream);
    if (w->n_switches == w->cap_switches) {
        w->cap_switches = w->cap_switches ? 2 * w->cap_switches : 4;
        w->switches = realloc(w->switches, w->cap_switches * sizeof *w->switches);
        SIM_ASSERT(w->switches != NULL); /* out of memory in a run: fatal, as elsewhere */
    }
    kds_world_counters(w, &w->switches[w->n_switches++]);
}

/* The --max-memory guard: stop cleanly rather than be killed by the kernel. Wall time
 * between two readings of the resident memory, s: */
#define GUARD_READ_EVERY_S 0.05

static void memory_guard(sim *s, void *ctx)
{
    kds_world *w = ctx;
    /* Reading the resident memory opens, parses and closes a /proc file: tens of
     * microseconds, which at every tick (10 simulated seconds) was a tenth of a fast
     * week-long run. Memory cannot grow faster than the run writes to it, so reading it
     * a few times per wall second stops a runaway run as surely. The tick itself stays,
     * so that the order of events never depends on the machine's speed. */
    double now = sim_wall_s();
    if (now - w->guard_read_at >= GUARD_READ_EVERY_S) {
        w->guard_read_at = now;
        uint64_t rss = sim_rss_bytes();
        if (rss > w->rss_peak)
            w->rss_peak = rss;
        if (rss > w->cfg->max_memory) {
            w->out_of_memory = 1;
            sim_stop(s);
            return;
        }
    }
    sim_after(s, SIM_S(10), memory_guard, w);
}

uint64_t kds_world_run_until(kds_world *w, sim_time t)
{
    if (t > w->cfg->duration)
        t = w->cfg->duration;
    if (w->out_of_memory)
        return 0; /* stopped by the guard: nothing more runs */
    return sim_run_until(w->sim, t);
}

void kds_world_finish(kds_world *w)
{
    if (w->finished)
        return;
    w->finished = 1;
    sim_time end = sim_now(w->sim);
    kds_stream_finish(&w->stream, end);
    for (size_t i = 0; i < w->n_producers; i++)
        kds_producer_finish(w->producers[i], end);
    for (size_t i = 0; i < w->n_consumers; i++)
        w->consumers[i]->ops->finish(w->consumers[i], end);
    w->violated = kds_world_check(w, w->violation, sizeof w->violation) != 0;
}

void kds_world_run(kds_world *w)
{
    kds_world_run_until(w, w->cfg->duration);
    if (w->out_of_memory)
        return; /* stopped: the figures are not those of a finished run */
    kds_world_finish(w);
}

void kds_world_fini(kds_world *w)
{
    if (!w)
        return;
    /* The simulation goes first: its pending events point into the models. */
    sim_free(w->sim);
    w->sim = NULL;
    for (size_t i = 0; i < w->n_consumers; i++)
        w->consumers[i]->ops->free(w->consumers[i]);
    for (size_t i = 0; i < w->n_producers; i++)
        kds_producer_free(w->producers[i]);
    free(w->consumers);
    free(w->producers);
    kds_capacity_free(w->capacity);
    free(w->switches);
    kds_stream_fini(&w->stream);
    memset(w, 0, sizeof *w);
}
