/* kds_consumer.c - the statistics shared by every consumer model (kds_consumer.h). */
#include "kds_consumer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_stream.h"
#include "kds_trace.h"
#include "sim_mem.h"

int kds_consumer_stats_init(kds_consumer_stats *cs)
{
    memset(cs, 0, sizeof *cs);
    cs->efo_registered = -1;
    int rc = sim_hist_init_latency_ms(&cs->latency_ms);
    if (rc)
        return rc;
    sim_series_init(&cs->iterator_age_min, SIM_MIN(1), SIM_SERIES_MAX);
    sim_series_init(&cs->delivered_min, SIM_MIN(1), SIM_SERIES_SUM);
    return 0;
}

void kds_consumer_stats_fini(kds_consumer_stats *cs)
{
    if (!cs)
        return;
    sim_hist_fini(&cs->latency_ms);
    sim_series_fini(&cs->iterator_age_min);
    sim_series_fini(&cs->delivered_min);
}

int kds_consumer_init(kds_consumer *c, const kds_consumer_ops *ops, const char *name, sim *s,
                      kds_stream *st, kds_shard_fn on_new_shard, void *ctx, gsl_rng **rng)
{
    c->ops = ops;
    c->name = name;
    char stream[160];
    snprintf(stream, sizeof stream, "consumer/%s", name);
    *rng = sim_rng(s, stream);
    int rc = kds_consumer_stats_init(&c->st);
    if (rc == 0)
        rc = kds_stream_on_new_shard(st, on_new_shard, ctx);
    return rc;
}

void kds_consumer_stats_deliver_all(kds_consumer_stats *cs, const kds_slice *v, size_t n,
                                    sim_time done)
{
    uint64_t records = 0, bytes = 0, dups = 0;
    sim_hist_adds a = sim_hist_adds_begin(&cs->latency_ms);
    for (size_t i = 0; i < n; i++) {
        sim_hist_adds_add(&a, kds_consumer_latency_ms(&v[i], done), (double)v[i].count);
        records += v[i].count;
        bytes += v[i].bytes;
        dups += v[i].dups;
    }
    sim_hist_adds_end(&a);
    cs->records_delivered += records;
    cs->bytes_delivered += bytes;
    cs->duplicates_delivered += dups;
    /* One add of the sum: whole numbers below 2^53, so the bucket holds the same value
     * as n adds would leave. */
    if (records > 0)
        sim_series_add(&cs->delivered_min, done, (double)records);
}

/* A clamp of a distribution in `unit`: milliseconds from a second up as seconds
 * ("10 s"), else "%g unit". */
static void clamp_text(char *buf, size_t n, double v, const char *unit)
{
    if (strcmp(unit, "ms") == 0 && v >= 1000.0)
        snprintf(buf, n, "%g s", v / 1000.0);
    else
        snprintf(buf, n, "%g %s", v, unit);
}

const char *kds_dist_text(char *buf, size_t n, const sim_dist *d, const char *unit)
{
    /* The law's own range, before the clamps: a clamp inside it bounds the draws. */
    double lo = 0.0, hi = INFINITY;
    switch (d->kind) {
    case SIM_DIST_CONST:
        snprintf(buf, n, "constant %g %s", d->a, unit);
        lo = hi = d->a;
        break;
    case SIM_DIST_LOGNORMAL:
        snprintf(buf, n, "lognormal, median %g %s, sigma %g", d->a, unit, d->b);
        break;
    case SIM_DIST_EXP:
        snprintf(buf, n, "exponential, mean %g %s", d->a, unit);
        break;
    case SIM_DIST_UNIFORM:
        snprintf(buf, n, "uniform, %g to %g %s", d->a, d->b, unit);
        lo = d->a;
        hi = d->b;
        break;
    default:
        snprintf(buf, n, "%s(%g, %g) %s", sim_dist_kind_name(d->kind), d->a, d->b, unit);
        lo = d->kind == SIM_DIST_NORMAL ? -INFINITY : d->kind == SIM_DIST_PARETO ? d->a : 0.0;
        break;
    }
    bool bounds_lo = d->min > lo, bounds_hi = d->max < hi;
    size_t len = strlen(buf);
    if ((!bounds_lo && !bounds_hi) || len + 1 >= n)
        return buf;
    char a[32], b[32];
    clamp_text(a, sizeof a, d->min, unit);
    clamp_text(b, sizeof b, d->max, unit);
    if (bounds_lo && bounds_hi)
        snprintf(buf + len, n - len, ", within [%s, %s]", a, b);
    else if (bounds_lo)
        snprintf(buf + len, n - len, ", at least %s", a);
    else
        snprintf(buf + len, n - len, ", at most %s", b);
    return buf;
}

bool kds_parents_done(const kds_stream *st, const kds_shard *child,
                      bool (*parent_done)(void *arg, uint32_t shard), void *arg)
{
    (void)st;
    if (child->parent >= 0 && !parent_done(arg, (uint32_t)child->parent))
        return false;
    if (child->adjacent_parent >= 0 && !parent_done(arg, (uint32_t)child->adjacent_parent))
        return false;
    return true;
}

void kds_consumer_child_started(kds_consumer *c, const kds_stream *st, const kds_shard *child,
                                sim_time wait)
{
    kds_consumer_stats *cs = &c->st;
    double ms = sim_to_ms(wait);
    cs->children_started++;
    cs->child_wait_ms_sum += ms;
    if (ms > cs->child_wait_ms_max)
        cs->child_wait_ms_max = ms;
    if (KDS_TRACING(st->trace, "reshard", c->name, child->index))
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", c->name, child->index,
                       "starts reading this child shard, its parents read to their end, "
                       "after waiting %.3f s", ms / 1000.0);
}

void kds_consumer_child_started_since(kds_consumer *c, const kds_stream *st,
                                      const kds_shard *child, sim_time begin, sim_time now)
{
    kds_consumer_child_started(c, st, child,
                               now - (child->created > begin ? child->created : begin));
}

void kds_consumer_settle(kds_consumer_stats *cs, const kds_log *l, kds_cursor *cur,
                         uint64_t start_pos)
{
    if (cur->pos < l->head_pos) {
        cs->records_expired_unread += l->head_pos - cur->pos;
        cur->pos = l->head_pos;
    }
    cs->records_unread += kds_log_unread(l, cur);
    cs->records_skipped_at_start += start_pos;
}

bool kds_waits_wanted(const kds_stream *st, sim_time begin)
{
    return st->cfg.horizon <= 0 || begin <= st->cfg.horizon;
}

void kds_waits_hold(kds_waits *w, kds_shard *sh)
{
    if (sh->state == KDS_SHARD_EXPIRED)
        return;
    size_t i = (size_t)sh->index;
    w->at = sim_grow_zeroed(w->at, &w->n, i + 1, sizeof *w->at);
    if (w->at[i])
        return;
    kds_cursor *c = malloc(sizeof *c);
    SIM_ASSERT(c != NULL);
    /* A floor below the head stops compaction at the head run, wherever retention has
     * moved it: the position need never move. */
    kds_log_seek_head(&sh->log, c);
    SIM_ASSERT(kds_log_attach_floor(&sh->log, c) == 0);
    w->at[i] = c;
}

void kds_waits_hold_until(kds_waits *w, kds_stream *st, sim_time begin, bool reads_back)
{
    if (begin <= sim_now(st->sim) || !reads_back || !kds_waits_wanted(st, begin))
        return;
    for (size_t i = 0; i < st->n_shards; i++)
        kds_waits_hold(w, st->shards[i]);
}

void kds_waits_release(kds_waits *w, kds_shard *sh)
{
    size_t i = (size_t)sh->index;
    if (i >= w->n || !w->at[i])
        return;
    kds_log_detach_floor(&sh->log, w->at[i]);
    free(w->at[i]);
    w->at[i] = NULL;
}

void kds_waits_fini(kds_waits *w, kds_stream *st)
{
    for (size_t i = 0; i < w->n && i < st->n_shards; i++)
        kds_waits_release(w, st->shards[i]);
    free(w->at);
    w->at = NULL;
    w->n = 0;
}

void kds_consumer_not_begun(kds_consumer_stats *cs, const kds_stream *st)
{
    for (size_t i = 0; i < st->n_shards; i++) {
        const kds_log *l = &st->shards[i]->log;
        cs->records_expired_unread += l->head_pos;
        cs->records_unread += l->end_pos - l->head_pos;
    }
}

void kds_consumer_efo_registered(kds_consumer_stats *cs, const kds_stream *st, sim_time from,
                                 sim_time end)
{
    cs->efo_registered = from;
    cs->efo_consumer_shard_hours = kds_stream_consumer_shard_hours(st, from, end);
}
