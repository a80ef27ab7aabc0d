/* kds_capacity.c - scheduled resharding, split rules, mode switches and on-demand
 * scaling (kds_capacity.h). */
#include "kds_capacity.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_stream_int.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_units.h"

/* A trace line of kind "reshard" from the service's on-demand scaling of stream st, about
 * `shard` (-1: the stream), printf-formatted. */
#define TRACE_SCALING(st, shard, ...)                                                        \
    KDS_TRACE((st)->trace, sim_now((st)->sim), "reshard", (st)->cfg.name, (shard), __VA_ARGS__)

#define HOURS_30D 720

typedef struct shard_track {
    uint64_t bytes;        /* offered bytes (stored + throttled) at the last check */
    uint64_t records;      /* offered records at the last check */
    bool hot_pending;      /* on-demand: a hot-shard split is scheduled */
} shard_track;

struct kds_capacity {
    kds_capacity_cfg cfg;
    sim *sim;
    kds_stream *st;
    shard_track *track;    /* owned, by shard index */
    size_t n_track;
    sim_time *above_since; /* owned, n_track x n_rules: since when shard i has been above
                              rule k's threshold, at [i * n_rules + k] (-1 = not). One
                              timer per rule: a rule below its threshold must not restart
                              another's */
    double hour_peak_b[HOURS_30D]; /* ring of hourly peaks of the offered rate, B/s */
    double hour_peak_r[HOURS_30D]; /* ... records/s */
    int64_t hour_of_slot[HOURS_30D]; /* which hour each slot holds (-1 = none) */
    bool grow_pending;
    sim_time excess_since; /* on-demand: capacity in excess since (-1 = not) */
    sim_time *switches;    /* accepted mode switch times */
    size_t n_switches;
    sim_time advantage_on; /* when a switch turned On-demand Advantage on (-1: none in the
                              run; a stream that starts in it has had it longer) */
    uint32_t *hot_queue;   /* shards whose hot split is scheduled, in due order (all
                              have the same delay, so events fire in queue order) */
    size_t hot_head, hot_n, hot_cap;
    struct fire_ctx *fires; /* owned: one per scenario event */
    void (*on_switch)(void *ctx); /* told of each completed mode switch, or NULL */
    void *on_switch_ctx;
    kds_capacity_stats stats;
};

void kds_capacity_cfg_defaults(kds_capacity_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_mode_switches = 2;
    kds_ondemand_cfg *o = &cfg->od;
    o->peak_factor = 2.0;
    o->peak_window = SIM_DAY(30);
    o->scale_delay = SIM_MIN(15);
    o->hot_shard_bytes = 500 * KDS_KIB;
    o->hot_shard_delay = SIM_MIN(15);
    o->min_bytes = 4 * KDS_MIB;
    o->min_records = 4000;
    o->ceiling_bytes = UINT64_C(10) << 30;
    o->scale_down_delay = SIM_HOUR(24);
}

static shard_track *track(kds_capacity *c, uint32_t index)
{
    if (index >= c->n_track) {
        size_t n = c->st->n_shards > index + 1 ? c->st->n_shards : index + 1;
        shard_track *t = realloc(c->track, n * sizeof *t);
        SIM_ASSERT(t != NULL);
        for (size_t i = c->n_track; i < n; i++)
            t[i] = (shard_track){0, 0, false};
        size_t nr = c->cfg.n_rules;
        if (nr > 0) {
            sim_time *a = realloc(c->above_since, n * nr * sizeof *a);
            SIM_ASSERT(a != NULL);
            for (size_t i = c->n_track * nr; i < n * nr; i++)
                a[i] = -1;
            c->above_since = a;
        }
        c->track = t;
        c->n_track = n;
    }
    return &c->track[index];
}

static kds_hashkey middle(const kds_shard *sh)
{
    return sh->lo + (sh->hi - sh->lo) / 2 + 1;
}

/* ---- on-demand scaling ---------------------------------------------------------------- */

static bool on_demand(const kds_stream *st)
{
    return st->cfg.mode != KDS_MODE_PROVISIONED;
}

/* Warm throughput in force now (Advantage only). */
static uint64_t warm_now(const kds_capacity *c)
{
    if (c->st->cfg.mode != KDS_MODE_ON_DEMAND_ADVANTAGE)
        return 0;
    uint64_t w = 0;
    sim_time now = sim_now(c->sim);
    for (size_t i = 0; i < c->cfg.od.n_warm && c->cfg.od.warm[i].at <= now; i++)
        w = c->cfg.od.warm[i].bytes_per_s;
    return w;
}

/* Shards the on-demand stream should have now. */
static size_t shards_needed(kds_capacity *c)
{
    const kds_ondemand_cfg *o = &c->cfg.od;
    const kds_stream_cfg *s = &c->st->cfg;
    int64_t hour = sim_now(c->sim) / SIM_HOUR(1);
    int64_t window_h = o->peak_window / SIM_HOUR(1);
    double pb = 0, pr = 0;
    for (size_t i = 0; i < HOURS_30D; i++)
        if (c->hour_of_slot[i] >= 0 && hour - c->hour_of_slot[i] < window_h) {
            pb = c->hour_peak_b[i] > pb ? c->hour_peak_b[i] : pb;
            pr = c->hour_peak_r[i] > pr ? c->hour_peak_r[i] : pr;
        }
    double want_b = o->peak_factor * pb, want_r = o->peak_factor * pr;
    if (want_b < (double)o->min_bytes)
        want_b = (double)o->min_bytes;
    if (want_r < (double)o->min_records)
        want_r = (double)o->min_records;
    double warm = (double)warm_now(c);
    if (want_b < warm)
        want_b = warm;
    if (want_b > (double)o->ceiling_bytes)
        want_b = (double)o->ceiling_bytes;
    c->stats.capacity_bytes_s_end = want_b;
    double n = fmax(ceil(want_b / (double)s->write_bytes_per_s),
                    ceil(want_r / (double)s->write_records_per_s));
    if (n > (double)s->max_shards)
        n = s->max_shards;
    return (size_t)n;
}

/* Grow: split the widest open shards in the middle until there are `target`. */
static void grow(sim *s, void *ctx)
{
    kds_capacity *c = ctx;
    (void)s;
    c->grow_pending = false;
    if (!on_demand(c->st)) {
        TRACE_SCALING(c->st, -1, "on-demand scaling: no growth: the stream is provisioned now");
        return;
    }
    size_t target = shards_needed(c);
    if (target <= c->st->n_open) {
        TRACE_SCALING(c->st, -1, "on-demand scaling: no growth: %zu open shards are enough now",
                      c->st->n_open);
        return;
    }
    TRACE_SCALING(c->st, -1, "on-demand scaling: grows from %zu to %zu open shards",
                  c->st->n_open, target);
    kds_reshard_op *op = kds__reshard_log(c->st, KDS_OP_UPDATE_COUNT, KDS_CAUSE_ON_DEMAND);
    op->target = (uint32_t)target;
    while (c->st->n_open < target) {
        kds_shard *wide = NULL;
        for (size_t i = 0; i < c->st->n_open; i++) {
            kds_shard *sh = c->st->shards[c->st->open[i]];
            if (!wide || sh->hi - sh->lo > wide->hi - wide->lo)
                wide = sh;
        }
        if (wide->hi - wide->lo < 4)
            break;
        SIM_ASSERT(kds__reshard_split_now(c->st, wide, middle(wide), op) == 0);
    }
    op->completed = sim_now(c->sim);
    c->stats.scale_ups++;
}

static void split_hot(sim *s, void *ctx)
{
    kds_capacity *c = ctx;
    SIM_ASSERT(c->hot_n > 0);
    uint32_t idx = c->hot_queue[c->hot_head++];
    c->hot_n--;
    (void)s;
    track(c, idx)->hot_pending = false;
    kds_shard *sh = c->st->shards[idx];
    const char *why = !on_demand(c->st)              ? "the stream is provisioned now"
                      : sh->state != KDS_SHARD_OPEN ? "the shard has closed since"
                      : sh->hi - sh->lo < 4         ? "its hash-key range is too narrow"
                                                    : NULL;
    /* A split adds a shard's write budget: not past the Region's ceiling, which caps
     * a hot-shard split as it caps growth for demand (shards_needed). */
    if (!why && (double)(c->st->n_open + 1) * (double)c->st->cfg.write_bytes_per_s >
                    (double)c->cfg.od.ceiling_bytes)
        why = "the Region's write ceiling is reached";
    if (why) {
        TRACE_SCALING(c->st, (int64_t)idx, "on-demand scaling: no hot-shard split: %s", why);
        return;
    }
    TRACE_SCALING(c->st, (int64_t)idx, "on-demand scaling: splits this hot shard in the middle");
    kds_reshard_op *op = kds__reshard_log(c->st, KDS_OP_SPLIT, "on-demand hot shard");
    op->shard = idx;
    op->key = middle(sh);
    SIM_ASSERT(kds__reshard_split_now(c->st, sh, op->key, op) == 0);
    op->completed = sim_now(c->sim);
    c->stats.hot_splits++;
}

/* Shrink by one merge of the adjacent pair with the least traffic, if that pair would
 * not be hot itself. */
static void shrink(kds_capacity *c, const double *rate_b_by_shard)
{
    kds_stream *st = c->st;
    size_t best = SIZE_MAX;
    double best_rate = 0;
    for (size_t i = 0; i + 1 < st->n_open; i++) {
        double r = rate_b_by_shard[st->open[i]] + rate_b_by_shard[st->open[i + 1]];
        if (best == SIZE_MAX || r < best_rate) {
            best = i;
            best_rate = r;
        }
    }
    if (best == SIZE_MAX || best_rate > (double)c->cfg.od.hot_shard_bytes / 2)
        return;
    TRACE_SCALING(st, -1, "on-demand scaling: capacity in excess for the scale-down delay; "
                          "merges the two adjacent shards with the least traffic, from %zu to "
                          "%zu open shards",
                  st->n_open, st->n_open - 1);
    kds_reshard_op *op = kds__reshard_log(st, KDS_OP_MERGE, KDS_CAUSE_ON_DEMAND);
    op->shard = st->open[best];
    op->other = st->open[best + 1];
    SIM_ASSERT(kds__reshard_merge_now(st, best, op) == 0);
    op->completed = sim_now(c->sim);
    c->stats.scale_downs++;
}

/* ---- the minute check --------------------------------------------------------------- */

static void check(sim *s, void *ctx)
{
    kds_capacity *c = ctx;
    kds_stream *st = c->st;
    sim_time now = sim_now(s);
    double total_b = 0, total_r = 0;
    double *rate_b = calloc(st->n_shards, sizeof *rate_b);
    SIM_ASSERT(rate_b != NULL);
    for (size_t i = 0; i < st->n_open; i++) {
        kds_shard *sh = st->shards[st->open[i]];
        shard_track *t = track(c, sh->index);
        uint64_t b = sh->st.bytes_in + sh->st.write_throttled_bytes;
        uint64_t r = sh->st.records_in + sh->st.write_throttled_records;
        double rb = (double)(b - t->bytes) / 60.0, rr = (double)(r - t->records) / 60.0;
        t->bytes = b;
        t->records = r;
        rate_b[sh->index] = rb;
        total_b += rb;
        total_r += rr;

        sim_time *above =
            c->cfg.n_rules ? c->above_since + (size_t)sh->index * c->cfg.n_rules : NULL;
        for (size_t k = 0; k < c->cfg.n_rules; k++) {
            const kds_split_rule *rule = &c->cfg.rules[k];
            double util = fmax(rb / (double)st->cfg.write_bytes_per_s,
                               rr / (double)st->cfg.write_records_per_s);
            if (util <= rule->threshold) {
                above[k] = -1;
                continue;
            }
            if (above[k] < 0)
                above[k] = now - SIM_MIN(1);
            if (now - above[k] >= rule->sustain && !st->updating &&
                st->cfg.mode == KDS_MODE_PROVISIONED && sh->hi - sh->lo >= 4) {
                if (kds_reshard_split(st, sh->index, middle(sh), "rule") == KDS_API_OK)
                    c->stats.rule_splits++;
                /* One request per sustained spell: every rule of this shard starts over
                 * (the shard closes once the split is done). */
                for (size_t j = 0; j < c->cfg.n_rules; j++)
                    above[j] = -1;
                break;
            }
        }
        if (on_demand(st) && rb > (double)c->cfg.od.hot_shard_bytes && !t->hot_pending) {
            if (c->hot_head + c->hot_n == c->hot_cap) {
                /* Compact the queue, then grow it. */
                if (c->hot_n > 0)
                    memmove(c->hot_queue, c->hot_queue + c->hot_head,
                            c->hot_n * sizeof *c->hot_queue);
                c->hot_head = 0;
                c->hot_cap = c->hot_cap ? c->hot_cap * 2 : 16;
                c->hot_queue = realloc(c->hot_queue, c->hot_cap * sizeof *c->hot_queue);
                SIM_ASSERT(c->hot_queue != NULL);
            }
            c->hot_queue[c->hot_head + c->hot_n++] = sh->index;
            t->hot_pending = true;
            char dur[32];
            TRACE_SCALING(st, (int64_t)sh->index,
                          "on-demand scaling: this shard was offered %.0f KiB/s of writes in "
                          "the last minute, above %.0f KiB/s: a split is due in %s",
                          rb / 1024.0, (double)c->cfg.od.hot_shard_bytes / 1024.0,
                          kds_trace_dur(dur, sizeof dur, c->cfg.od.hot_shard_delay));
            sim_after(s, c->cfg.od.hot_shard_delay, split_hot, c);
        }
    }
    if (total_b > c->stats.peak_write_bytes_s)
        c->stats.peak_write_bytes_s = total_b;
    int64_t hour = (now - 1) / SIM_HOUR(1);
    size_t slot = (size_t)(hour % HOURS_30D);
    if (c->hour_of_slot[slot] != hour) {
        c->hour_of_slot[slot] = hour;
        c->hour_peak_b[slot] = 0;
        c->hour_peak_r[slot] = 0;
    }
    c->hour_peak_b[slot] = fmax(c->hour_peak_b[slot], total_b);
    c->hour_peak_r[slot] = fmax(c->hour_peak_r[slot], total_r);

    if (on_demand(st)) {
        size_t need = shards_needed(c);
        if (need > st->n_open) {
            c->excess_since = -1;
            if (!c->grow_pending) {
                c->grow_pending = true;
                char dur[32];
                /* The need is the largest of several terms (shards_needed): the line
                 * names them all rather than guess which one set it. */
                TRACE_SCALING(st, -1,
                              "on-demand scaling: the capacity it keeps (%g times the peak "
                              "offered in its window, at least its minimum and warm throughput, "
                              "at most the Region's ceiling) needs %zu shards, the stream has "
                              "%zu: growth is due in %s",
                              c->cfg.od.peak_factor, need, st->n_open,
                              kds_trace_dur(dur, sizeof dur, c->cfg.od.scale_delay));
                sim_after(s, c->cfg.od.scale_delay, grow, c);
            }
        } else if (need < st->n_open) {
            if (c->excess_since < 0) {
                c->excess_since = now;
            } else if (now - c->excess_since >= c->cfg.od.scale_down_delay) {
                shrink(c, rate_b);
                c->excess_since = now;
            }
        } else {
            c->excess_since = -1;
        }
    }
    free(rate_b);
    sim_after(s, SIM_MIN(1), check, c);
}

/* ---- scheduled requests ---------------------------------------------------------------- */

typedef struct fire_ctx {
    kds_capacity *c;
    size_t i;
} fire_ctx;

static void fire(sim *s, void *ctx)
{
    fire_ctx *f = ctx;
    kds_capacity *c = f->c;
    const kds_capacity_event *e = &c->cfg.events[f->i];
    kds_stream *st = c->st;
    switch (e->kind) {
    case KDS_OP_SPLIT: {
        kds_hashkey key = 0;
        if (e->has_key)
            key = e->key;
        else if (e->shard < st->n_shards)
            key = middle(st->shards[e->shard]);
        kds_reshard_split(st, e->shard, key, "scenario");
        break;
    }
    case KDS_OP_MERGE:
        kds_reshard_merge(st, e->shard, e->other, "scenario");
        break;
    case KDS_OP_UPDATE_COUNT:
        kds_reshard_update_count(st, e->target, "scenario");
        break;
    case KDS_OP_MODE_SWITCH: {
        kds_reshard_op *op = kds__reshard_log(st, KDS_OP_MODE_SWITCH, "scenario");
        op->target = e->target;
        sim_time now = sim_now(s);
        kds_mode to = (kds_mode)e->target;
        if (to == st->cfg.mode) {
            /* Nothing to change: refused, and not one of the switches allowed a day. */
            op->status = KDS_API_INVALID_ARGUMENT;
            snprintf(op->message, sizeof op->message,
                     "stream %s is already %s; UpdateStreamMode must change the mode",
                     st->cfg.name, kds_mode_name(to));
            break;
        }
        if (to == KDS_MODE_PROVISIONED && st->cfg.auto_distribution) {
            op->status = KDS_API_INVALID_ARGUMENT;
            snprintf(op->message, sizeof op->message,
                     "stream %s uses service-managed partition keys (RecordDistributionStrategy "
                     "AUTO), which are on-demand only; it cannot become provisioned",
                     st->cfg.name);
            break;
        }
        if (st->cfg.mode == KDS_MODE_ON_DEMAND_ADVANTAGE && c->advantage_on >= 0 &&
            now - c->advantage_on < SIM_HOUR(24)) {
            char on[32];
            op->status = KDS_API_LIMIT_EXCEEDED;
            snprintf(op->message, sizeof op->message,
                     "On-demand Advantage cannot be turned off for 24 hours after it is turned "
                     "on (at %s)",
                     sim_fmt_duration(on, sizeof on, c->advantage_on));
            break;
        }
        size_t recent = 0;
        for (size_t i = 0; i < c->n_switches; i++)
            recent += now - c->switches[i] < SIM_HOUR(24);
        if (recent >= c->cfg.max_mode_switches) {
            op->status = KDS_API_LIMIT_EXCEEDED;
            snprintf(op->message, sizeof op->message,
                     "the capacity mode was already switched %zu times in the last 24 hours "
                     "(the limit is %u per rolling 24 hours)",
                     recent, c->cfg.max_mode_switches);
            break;
        }
        if (st->updating) {
            op->status = KDS_API_RESOURCE_IN_USE;
            snprintf(op->message, sizeof op->message, "stream %s is UPDATING", st->cfg.name);
            break;
        }
        /* The stream keeps its shards; only who manages capacity changes. */
        st->cfg.mode = to;
        if (to == KDS_MODE_ON_DEMAND_ADVANTAGE)
            c->advantage_on = now;
        c->switches = realloc(c->switches, (c->n_switches + 1) * sizeof *c->switches);
        SIM_ASSERT(c->switches != NULL);
        c->switches[c->n_switches++] = now;
        op->completed = now;
        c->stats.mode_switches++;
        if (c->on_switch)
            c->on_switch(c->on_switch_ctx);
        break;
    }
    }
    if (e->kind == KDS_OP_MODE_SWITCH) /* the other requests trace themselves */
        kds_reshard_trace(st, kds_reshard_last(st));
}

kds_capacity *kds_capacity_new(sim *s, kds_stream *st, const kds_capacity_cfg *cfg)
{
    kds_capacity *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    c->sim = s;
    c->st = st;
    c->excess_since = -1;
    c->advantage_on = -1;
    for (size_t i = 0; i < HOURS_30D; i++)
        c->hour_of_slot[i] = -1;
    bool switches = false;
    c->fires = calloc(cfg->n_events ? cfg->n_events : 1, sizeof *c->fires);
    if (!c->fires) {
        kds_capacity_free(c);
        return NULL;
    }
    for (size_t i = 0; i < cfg->n_events; i++) {
        fire_ctx *f = &c->fires[i];
        f->c = c;
        f->i = i;
        sim_at(s, cfg->events[i].at, fire, f);
        switches = switches || cfg->events[i].kind == KDS_OP_MODE_SWITCH;
    }
    /* The minute check also measures the offered write rate for the report, so it
     * runs for every stream (one event a simulated minute). */
    (void)switches;
    sim_at(s, SIM_MIN(1), check, c);
    return c;
}

void kds_capacity_free(kds_capacity *c)
{
    if (!c)
        return;
    free(c->track);
    free(c->above_since);
    free(c->switches);
    free(c->hot_queue);
    free(c->fires);
    free(c);
}

void kds_capacity_on_mode_switch(kds_capacity *c, void (*fn)(void *ctx), void *ctx)
{
    c->on_switch = fn;
    c->on_switch_ctx = ctx;
}

const kds_capacity_stats *kds_capacity_stats_get(const kds_capacity *c)
{
    return &c->stats;
}

const kds_capacity_cfg *kds_capacity_cfg_get(const kds_capacity *c)
{
    return &c->cfg;
}
