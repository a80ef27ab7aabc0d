/* kds_efo.c - enhanced fan-out subscriptions and the `efo` consumer (kds_efo.h). */
#include "kds_efo.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kds_trace.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"

void kds_efo_cfg_defaults(kds_efo_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->push_delay_ms = (sim_dist){SIM_DIST_LOGNORMAL, 65.0, 0.3, 1.0, 10000.0};
    cfg->subscribe_ms = (sim_dist){SIM_DIST_LOGNORMAL, 100.0, 0.5, 1.0, 60000.0};
    cfg->session = SIM_MIN(5);
    cfg->bytes_per_s = 2 * KDS_MIB;
    cfg->push_interval = SIM_MS(200);
}

void kds_efo_assumptions(const kds_efo_cfg *cfg, kds_assume_fn fn, void *arg)
{
    char v[128];
    fn(arg, "push_delay", kds_dist_text(v, sizeof v, &cfg->push_delay_ms, "ms"),
       "write-to-push delay; AWS says about 70 ms");
    fn(arg, "subscribe_latency", kds_dist_text(v, sizeof v, &cfg->subscribe_ms, "ms"),
       "SubscribeToShard round trip at each 5-minute renewal; AWS publishes no figure");
    sim_fmt_duration(v, sizeof v, cfg->push_interval);
    fn(arg, "push_interval", v,
       "time between the pushes of a subscription behind the tip of its shard, each as "
       "much as its 2 MiB/s allows; AWS publishes no figure");
}

static void collect(void *ctx, const kds_slice *sl)
{
    kds_efo_sub *sub = ctx;
    if (sub->n_scratch == sub->cap_scratch) {
        sub->cap_scratch = sub->cap_scratch ? sub->cap_scratch * 2 : 16;
        sub->scratch = realloc(sub->scratch, sub->cap_scratch * sizeof *sub->scratch);
        SIM_ASSERT(sub->scratch != NULL);
    }
    sub->scratch[sub->n_scratch++] = *sl;
}

static void push_event(sim *s, void *ctx);

static void schedule_push(kds_efo_sub *sub, sim_time at)
{
    if (sub->push_pending || sub->done)
        return;
    sub->push_pending = true;
    sim_at(sub->sim, at, push_event, sub);
}

/* A push of a subscription behind the tip: a take of what the budget allows (up to
 * `avail`, at least one record) into the scratch, with its long-term retrieval meter and
 * the records that expired before it got to them (neither happens at the tip, written
 * now: only a push from here meets them).
 * Out of line, so that push_now stays small enough to be inlined into on_append. */
static __attribute__((noinline)) void take_behind(kds_efo_sub *sub, uint64_t avail,
                                                   kds_take *tk)
{
    kds_log *l = &sub->sh->log;
    sub->n_scratch = 0;
    kds_log_take(l, &sub->cur, UINT64_MAX, avail ? avail : 1, collect, sub, tk);
    kds_stream_meter_over_7d(sub->st, l, sub->cur.pos, tk, &sub->bill->bytes_read_over_7d);
    sub->cs->records_expired_unread += tk->expired; /* none at the tip */
}

/* Push what the budget allows now from a shard trimmed as of now; returns true when the
 * subscription is caught up. Inline, into its one caller on_append: every run appended
 * to a shard that a live subscription reads is pushed from there. */
static inline bool push_now(kds_efo_sub *sub)
{
    sim_time now = sim_now(sub->sim);
    kds_log *l = &sub->sh->log;
    uint64_t avail = kds_bucket_avail(&sub->budget, now);
    if (avail == 0 && sub->cur.pos < l->end_pos)
        return false;
    kds_take tk;
    const kds_slice *sl;
    size_t n_sl;
    const kds_run *last = kds_log_last(l);
    if (last && last->first == sub->cur.pos && last->bytes <= avail) {
        /* A live subscription at the tip: the run just appended is all there is to
         * push, and it fits the budget whole. This is what kds_log_take would return,
         * without its search and slicing (the push on every append is the hottest
         * consumer path of a run); the run itself is the slice, valid during the
         * delivery as the deliver function requires. */
        kds_log_seek_end(l, &sub->cur);
        tk = (kds_take){last->count, last->bytes, 0, last->t_last};
        sl = last;
        n_sl = 1;
    } else {
        take_behind(sub, avail, &tk);
        sl = sub->scratch;
        n_sl = sub->n_scratch;
    }
    bool caught_up = sub->cur.pos >= l->end_pos;
    if (tk.records > 0) {
        /* The budget was refilled to now above; a push may overdraw it (a record is
         * pushed whole even past an exhausted budget). */
        kds_bucket_spend(&sub->budget, tk.bytes);
        sub->bill->bytes_read_efo += tk.bytes;
        sim_time at = now + sim_dist_sample_ns(&sub->cfg->push_delay_ms, sub->rng);
        if (at < sub->last_at)
            at = sub->last_at; /* pushes arrive in order */
        sub->last_at = at;
        /* SubscribeToShardEvent.MillisBehindLatest: how far the last record pushed is
         * behind the tip of the shard; 0 once caught up. */
        if (caught_up)
            kds_consumer_stats_age_zero(sub->cs, now);
        else
            kds_consumer_stats_age(sub->cs, now, sim_to_ms(now - tk.t_last));
        if (KDS_TRACING(sub->st->trace, "push", sub->name, sub->sh->index)) {
            char seq[KDS_SEQNOS_LEN]; /* the records pushed end at the cursor */
            kds_trace_emit(sub->st->trace, now, "push", sub->name,
                           sub->sh->index,
                           "SubscribeToShardEvent: %" PRIu64 " record%s, %" PRIu64
                           " B, arrives at +%.0f ms, MillisBehindLatest %.0f%s",
                           tk.records, kds_trace_s(tk.records), tk.bytes, sim_to_ms(at - now),
                           caught_up ? 0.0 : sim_to_ms(now - tk.t_last),
                           kds_trace_seqnos(seq, sizeof seq, sub->sh->index,
                                            sub->cur.pos - tk.records, tk.records));
        }
        sub->deliver(sub->owner, sub, sl, n_sl, at);
    }
    if (caught_up && sub->sh->state != KDS_SHARD_OPEN) {
        sub->done = true; /* SHARD_END */
        sub->live = false;
    }
    return caught_up;
}

static void on_append(void *ctx, kds_shard *sh)
{
    (void)sh;
    kds_efo_sub *sub = ctx;
    /* Live implies subscribed and not paused: pause and session_end clear `live`, and
     * only push_event sets it, inside a session and unpaused. */
    if (!sub->live)
        return;
    if (!push_now(sub)) {
        /* The consumer's 2 MiB/s on this shard is spent: fall behind and catch up. */
        sub->live = false;
        schedule_push(sub, sim_now(sub->sim) + sub->cfg->push_interval);
    }
}

static void push_event(sim *s, void *ctx)
{
    (void)s;
    kds_efo_sub *sub = ctx;
    sub->push_pending = false;
    if (!sub->subscribed || sub->paused || sub->done)
        return;
    /* A subscription behind (never live while a push is pending) tries to catch up as a
     * live one pushes on an append: caught up, it stays live (push_now ends it at a
     * closed shard's end); short of budget, it waits for the next push. The trim is
     * what a put did before telling on_append. */
    kds_stream_trim(sub->st, sub->sh);
    sub->live = true;
    on_append(sub, sub->sh);
}

static void session_end(sim *s, void *ctx);

/* The StartingPosition type of a first SubscribeToShard, as the API names it. */
static const char *start_name(kds_start_kind k)
{
    switch (k) {
    case KDS_START_TRIM_HORIZON:
        return "TRIM_HORIZON";
    case KDS_START_LATEST:
        return "LATEST";
    case KDS_START_AT_TIMESTAMP:
        return "AT_TIMESTAMP";
    case KDS_START_AT_SEQUENCE_NUMBER:
        return "AT_SEQUENCE_NUMBER";
    case KDS_START_AFTER_SEQUENCE_NUMBER:
        return "AFTER_SEQUENCE_NUMBER";
    }
    return "?";
}

/* The push line of a SubscribeToShard that succeeded (session `sub->sessions`): where it
 * starts and for how long a session lasts. Out of line: tracing only. */
static __attribute__((noinline)) void trace_subscribed(kds_efo_sub *sub, sim_time now)
{
    char seq[64], from[96], dur[32];
    kds_seqno(seq, sizeof seq, sub->sh->index, sub->cur.pos);
    if (sub->new_owner)
        snprintf(from, sizeof from,
                 "StartingPosition AFTER_SEQUENCE_NUMBER of the new reader's checkpoint");
    else if (sub->sessions == 1)
        snprintf(from, sizeof from, "StartingPosition %s", start_name(sub->start));
    else
        snprintf(from, sizeof from,
                 "StartingPosition AFTER_SEQUENCE_NUMBER, the continuation of session %" PRIu64,
                 sub->sessions - 1);
    kds_trace_emit(sub->st->trace, now, "push", sub->name, sub->sh->index,
                   "SubscribeToShard: session %" PRIu64 " subscribed, %s; pushes from sequence "
                   "number %s for up to %s",
                   sub->sessions, from, seq, kds_trace_dur(dur, sizeof dur, sub->cfg->session));
}

static void subscribed(sim *s, void *ctx)
{
    kds_efo_sub *sub = ctx;
    sub->ev_session = 0; /* this one, run */
    if (sub->done)
        return;
    if (!sub->started) {
        /* Position at the first SubscribeToShard, then keep the position across
         * sessions (the next session starts AFTER_SEQUENCE_NUMBER of the last). */
        sub->started = true;
    }
    sub->subscribed = true;
    sub->sessions++;
    if (KDS_TRACING(sub->st->trace, "push", sub->name, sub->sh->index))
        trace_subscribed(sub, sim_now(s));
    sub->new_owner = false;
    sub->ev_session = sim_after(s, sub->cfg->session, session_end, sub);
    schedule_push(sub, sim_now(s));
}

static void session_end(sim *s, void *ctx)
{
    kds_efo_sub *sub = ctx;
    sub->ev_session = 0; /* this one, run */
    if (sub->done)
        return;
    sub->subscribed = false;
    sub->live = false;
    sim_time again = sim_dist_sample_ns(&sub->cfg->subscribe_ms, sub->rng);
    if (KDS_TRACING(sub->st->trace, "push", sub->name, sub->sh->index)) {
        char dur[32];
        kds_trace_emit(sub->st->trace, sim_now(s), "push", sub->name, sub->sh->index,
                       "subscription session %" PRIu64 " ended after %s; SubscribeToShard "
                       "again, subscribed %.0f ms later",
                       sub->sessions, kds_trace_dur(dur, sizeof dur, sub->cfg->session),
                       sim_to_ms(again));
    }
    sub->ev_session = sim_after(s, again, subscribed, sub);
}

int kds_efo_sub_start(kds_efo_sub *sub, sim *s, kds_stream *st, kds_shard *sh,
                      const kds_efo_cfg *cfg, gsl_rng *rng, kds_consumer_stats *cs,
                      kds_start_kind start, sim_time start_time, uint64_t start_pos,
                      const char *name, void *owner, kds_efo_deliver_fn deliver)
{
    memset(sub, 0, sizeof *sub);
    sub->owner = owner;
    sub->name = name;
    sub->deliver = deliver;
    sub->cfg = cfg;
    sub->st = st;
    sub->sh = sh;
    sub->sim = s;
    sub->rng = rng;
    sub->cs = cs;
    sub->bill = cs;
    sim_time now = sim_now(s);
    /* The budget's depth: stream.limits.efo_burst seconds of it (at least 1 B). */
    double depth = floor((double)cfg->bytes_per_s * st->cfg.efo_burst_s + 0.5);
    kds_bucket_init(&sub->budget, cfg->bytes_per_s, depth < 1.0 ? 1 : (uint64_t)depth, now);
    kds_stream_trim(st, sh);
    const kds_log *l = &sh->log;
    switch (start) {
    case KDS_START_TRIM_HORIZON:
        kds_log_seek_head(l, &sub->cur);
        break;
    case KDS_START_LATEST:
        kds_log_seek_end(l, &sub->cur);
        break;
    case KDS_START_AT_TIMESTAMP:
        kds_log_seek_time(l, &sub->cur, start_time);
        break;
    case KDS_START_AT_SEQUENCE_NUMBER:
        kds_log_seek_pos(l, &sub->cur, start_pos);
        break;
    case KDS_START_AFTER_SEQUENCE_NUMBER:
        kds_log_seek_pos(l, &sub->cur, start_pos + 1);
        break;
    }
    sub->start_pos = sub->cur.pos;
    sub->start = start;
    if (kds_log_attach(&sh->log, &sub->cur) != 0)
        return SIM_ENOMEM;
    if (kds_shard_on_append(sh, on_append, sub) != 0) {
        kds_log_detach(&sh->log, &sub->cur);
        return SIM_ENOMEM;
    }
    sub->ev_session = sim_after(s, sim_dist_sample_ns(&cfg->subscribe_ms, rng), subscribed, sub);
    return 0;
}

void kds_efo_sub_pause(kds_efo_sub *sub)
{
    sub->paused = true;
    sub->live = false;
}

void kds_efo_sub_resume(kds_efo_sub *sub)
{
    sub->paused = false;
    schedule_push(sub, sim_now(sub->sim));
}

void kds_efo_sub_resubscribe(kds_efo_sub *sub, uint64_t pos, const char *why)
{
    if (sub->ev_session)
        sim_cancel(sub->sim, sub->ev_session);
    sub->subscribed = false;
    sub->live = false;
    sub->paused = false;
    sub->done = false;
    sub->new_owner = true;
    kds_stream_trim(sub->st, sub->sh);
    kds_log_seek_pos(&sub->sh->log, &sub->cur, pos);
    sim_time rtt = sim_dist_sample_ns(&sub->cfg->subscribe_ms, sub->rng);
    if (KDS_TRACING(sub->st->trace, "push", sub->name, sub->sh->index))
        kds_trace_emit(sub->st->trace, sim_now(sub->sim), "push", sub->name, sub->sh->index,
                       "SubscribeToShard again for a new reader of the shard (%s); session "
                       "%" PRIu64 " ends, the new one subscribed %.0f ms later",
                       why, sub->sessions, sim_to_ms(rtt));
    sub->ev_session = sim_after(sub->sim, rtt, subscribed, sub);
}

void kds_efo_sub_fini(kds_efo_sub *sub)
{
    if (!sub || !sub->sh)
        return;
    kds_shard_off_append(sub->sh, on_append, sub);
    kds_log_detach(&sub->sh->log, &sub->cur);
    free(sub->scratch);
    sub->scratch = NULL;
}

/* ---- the `efo` consumer ----------------------------------------------------------- */

typedef struct efo_consumer efo_consumer;

/* A shard waiting for its parents to be read to their end: a child created while the
 * consumer reads, or a child of a shard the consumer found when it began. */
typedef struct child_wait {
    efo_consumer *c;
    kds_shard *sh;
    sim_time created;        /* when the wait began: the child's creation, or `begin` */
    kds_start_kind start;    /* where it will be read from... */
    uint64_t start_pos;      /* ...(AT_SEQUENCE_NUMBER: this position) */
    bool started;            /* subscribed */
} child_wait;

struct efo_consumer {
    kds_consumer base;       /* first */
    kds_efo_consumer_cfg cfg;
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;            /* sim-owned */
    kds_efo_sub **subs;      /* owned, one per shard */
    size_t n_subs, cap_subs;
    kds_efo_sub **by_shard;  /* borrowed from subs: the subscription of shard i, or NULL */
    size_t n_by_shard;
    child_wait **waits;      /* owned: children waiting or started */
    size_t n_waits;
    kds_waits held;          /* shards held at their heads until subscribed */
    sim_time begin;          /* registration time */
    bool paused;             /* inside the configured pause */
    bool begun;              /* the begin event ran (not when `begin` is after the end) */
    uint64_t unlisted;       /* records of the shards EXPIRED at `begin`, never listed:
                                stored before the start, skipped at the start */
};

void kds_efo_consumer_cfg_defaults(kds_efo_consumer_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "efo";
    kds_efo_cfg_defaults(&cfg->efo);
    cfg->start = KDS_START_LATEST;
    cfg->process_ms = sim_dist_const(0);
}

static void deliver(void *owner, kds_efo_sub *sub, const kds_slice *sl, size_t n, sim_time at)
{
    (void)sub;
    efo_consumer *c = owner;
    sim_time done = at + sim_dist_sample_ns(&c->cfg.process_ms, c->rng);
    kds_consumer_stats_deliver_all(&c->base.st, sl, n, done);
}

static void add_sub(efo_consumer *c, kds_shard *sh, kds_start_kind start, uint64_t start_pos)
{
    kds_waits_release(&c->held, sh); /* the subscription's cursor holds from here on */
    if (c->n_subs == c->cap_subs) {
        c->cap_subs = c->cap_subs ? c->cap_subs * 2 : 8;
        c->subs = realloc(c->subs, c->cap_subs * sizeof *c->subs);
        SIM_ASSERT(c->subs != NULL);
    }
    kds_efo_sub *sub = calloc(1, sizeof *sub);
    SIM_ASSERT(sub != NULL);
    c->subs[c->n_subs++] = sub;
    c->by_shard = sim_grow_zeroed(c->by_shard, &c->n_by_shard, (size_t)sh->index + 1,
                                  sizeof *c->by_shard);
    c->by_shard[sh->index] = sub;
    int rc = kds_efo_sub_start(sub, c->sim, c->st, sh, &c->cfg.efo, c->rng, &c->base.st, start,
                               c->cfg.start_time, start_pos, c->base.name, c, deliver);
    SIM_ASSERT(rc == 0);
    /* A shard started during the pause is paused with the others. */
    if (c->paused)
        kds_efo_sub_pause(sub);
}

/* Whether parent shard `shard` (-1: none) no longer holds its children back: read to
 * its end, with its last push arrived (*at is raised to that arrival, when later).
 * A parent still waiting for its own parents holds them; one the consumer does not
 * read (expired before it began) does not. */
static bool parent_ready(const efo_consumer *c, int32_t shard, sim_time *at)
{
    if (shard < 0)
        return true;
    const kds_efo_sub *sub = (size_t)shard < c->n_by_shard ? c->by_shard[shard] : NULL;
    if (sub) {
        if (!sub->done)
            return false;
        if (sub->last_at > *at)
            *at = sub->last_at;
        return true;
    }
    for (size_t i = 0; i < c->n_waits; i++)
        if (c->waits[i]->sh->index == (uint32_t)shard && !c->waits[i]->started)
            return false;
    return true;
}

/* A child starts once every parent was read to its end, as the KCL does it: it checks
 * again every 10 s until then. SHARD_END comes with the parent's last push, still in
 * flight for a push delay: the child subscribes when that push has arrived, so that
 * its records never overtake the parent's. */
static void child_gate(sim *s, void *ctx)
{
    child_wait *cw = ctx;
    efo_consumer *c = cw->c;
    sim_time now = sim_now(s), at = now;
    if (!parent_ready(c, cw->sh->parent, &at) || !parent_ready(c, cw->sh->adjacent_parent, &at)) {
        sim_after(s, KDS_PARENT_POLL, child_gate, cw);
        return;
    }
    if (at > now) {
        sim_at(s, at, child_gate, cw);
        return;
    }
    cw->started = true;
    kds_consumer_child_started(&c->base, c->st, cw->sh, now - cw->created);
    add_sub(c, cw->sh, cw->start, cw->start_pos);
}

/* Make shard sh wait for its parents, from now, to be read from `start`. */
static void wait_for_parents(efo_consumer *c, kds_shard *sh, kds_start_kind start,
                             uint64_t start_pos)
{
    kds_waits_hold(&c->held, sh);
    child_wait *cw = malloc(sizeof *cw);
    SIM_ASSERT(cw != NULL);
    *cw = (child_wait){c, sh, sim_now(c->sim), start, start_pos, false};
    c->waits = realloc(c->waits, (c->n_waits + 1) * sizeof *c->waits);
    SIM_ASSERT(c->waits != NULL);
    c->waits[c->n_waits++] = cw;
    child_gate(c->sim, cw);
}

static void on_new_shard(void *ctx, kds_shard *sh)
{
    efo_consumer *c = ctx;
    if (sim_now(c->sim) < c->begin) {
        /* begin() finds it; held until then when it may be read from before it. */
        if (c->cfg.start != KDS_START_LATEST && kds_waits_wanted(c->st, c->begin))
            kds_waits_hold(&c->held, sh);
        return;
    }
    wait_for_parents(c, sh, KDS_START_TRIM_HORIZON, 0); /* children: from their start */
}

/* A parent shard (-1: none) this consumer reads or waits to read. */
static bool parent_read(const efo_consumer *c, int32_t shard)
{
    sim_time ignored = 0;
    if (shard < 0)
        return false;
    if ((size_t)shard < c->n_by_shard && c->by_shard[shard])
        return true;
    return !parent_ready(c, shard, &ignored);
}

static void begin(sim *s, void *ctx)
{
    (void)s;
    efo_consumer *c = ctx;
    c->begun = true;
    /* Shards in index order: parents come before their children. A shard whose parent
     * is read waits for it, as a child made later would; one at LATEST is positioned
     * now, so that it misses nothing written while it waits. */
    for (size_t i = 0; i < c->st->n_shards; i++) {
        kds_shard *sh = c->st->shards[i];
        if (sh->state == KDS_SHARD_EXPIRED) {
            c->unlisted += sh->log.end_pos; /* no write moves it any more */
            kds_waits_release(&c->held, sh);
            continue;
        }
        if (!parent_read(c, sh->parent) && !parent_read(c, sh->adjacent_parent)) {
            add_sub(c, sh, c->cfg.start, c->cfg.start_pos);
        } else if (c->cfg.start == KDS_START_LATEST) {
            wait_for_parents(c, sh, KDS_START_AT_SEQUENCE_NUMBER, sh->log.end_pos);
        } else {
            wait_for_parents(c, sh, c->cfg.start, c->cfg.start_pos);
        }
    }
}

static void pause_start(sim *s, void *ctx)
{
    (void)s;
    efo_consumer *c = ctx;
    c->paused = true;
    for (size_t i = 0; i < c->n_subs; i++)
        kds_efo_sub_pause(c->subs[i]);
}

static void pause_end(sim *s, void *ctx)
{
    (void)s;
    efo_consumer *c = ctx;
    c->paused = false;
    for (size_t i = 0; i < c->n_subs; i++)
        kds_efo_sub_resume(c->subs[i]);
}

static void finish(kds_consumer *base, sim_time end)
{
    efo_consumer *c = (efo_consumer *)base;
    kds_consumer_stats *cs = &c->base.st;
    cs->records_unread = 0;
    cs->records_skipped_at_start = c->unlisted;
    for (size_t i = 0; i < c->n_subs; i++) {
        kds_efo_sub *sub = c->subs[i];
        kds_consumer_settle(cs, &sub->sh->log, &sub->cur, sub->start_pos);
    }
    /* A child still waiting for its parents has no subscription yet: its records are
     * unread (or expired while it waited), but for those before the position it is to
     * start at, which its start skips. */
    for (size_t i = 0; i < c->n_waits; i++) {
        const child_wait *cw = c->waits[i];
        if (cw->started)
            continue;
        const kds_log *l = &cw->sh->log;
        kds_cursor cur = {0, 0};
        switch (cw->start) {
        case KDS_START_TRIM_HORIZON:
        case KDS_START_LATEST: /* a wait from LATEST is AT_SEQUENCE_NUMBER (begin) */
            break;
        case KDS_START_AT_TIMESTAMP:
            kds_log_seek_time(l, &cur, c->cfg.start_time);
            break;
        case KDS_START_AT_SEQUENCE_NUMBER:
            cur.pos = cw->start_pos < l->end_pos ? cw->start_pos : l->end_pos;
            break;
        case KDS_START_AFTER_SEQUENCE_NUMBER:
            cur.pos = cw->start_pos < l->end_pos ? cw->start_pos + 1 : l->end_pos;
            break;
        }
        kds_consumer_settle(cs, l, &cur, cur.pos);
    }
    if (!c->begun)
        kds_consumer_not_begun(cs, c->st); /* subscriptions are made at the start */
    kds_consumer_efo_registered(cs, c->st, c->begin, end); /* from its start */
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
}

static void figures(const kds_consumer *base, kds_figure_fn fn, void *arg)
{
    const efo_consumer *c = (const efo_consumer *)base;
    uint64_t sessions = 0;
    for (size_t i = 0; i < c->n_subs; i++)
        sessions += c->subs[i]->sessions;
    fn(arg, "subscriptions", (double)sessions);
    fn(arg, "millis_behind_latest_max", c->base.st.iterator_age_ms_max);
    fn(arg, "consumer_shard_hours", c->base.st.efo_consumer_shard_hours);
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const efo_consumer *c = (const efo_consumer *)base;
    kds_efo_assumptions(&c->cfg.efo, fn, arg);
}

static void free_consumer(kds_consumer *base)
{
    efo_consumer *c = (efo_consumer *)base;
    if (!c)
        return;
    if (c->st)
        kds_waits_fini(&c->held, c->st);
    for (size_t i = 0; i < c->n_subs; i++) {
        kds_efo_sub_fini(c->subs[i]);
        free(c->subs[i]);
    }
    free(c->subs);
    free(c->by_shard);
    for (size_t i = 0; i < c->n_waits; i++)
        free(c->waits[i]);
    free(c->waits);
    kds_consumer_stats_fini(&c->base.st);
    free(c);
}

static const kds_consumer_ops EFO_OPS = {
    .kind = "efo",
    .finish = finish,
    .figures = figures,
    .assumptions = assumptions,
    .free = free_consumer,
};

kds_consumer *kds_efo_make(sim *s, kds_stream *st, const void *cfgp)
{
    const kds_efo_consumer_cfg *cfg = cfgp;
    efo_consumer *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->cfg = *cfg;
    c->sim = s;
    c->st = st;
    c->begin = cfg->begin > sim_now(s) ? cfg->begin : sim_now(s);
    if (kds_consumer_init(&c->base, &EFO_OPS, cfg->name, s, st, on_new_shard, c, &c->rng) != 0) {
        free_consumer(&c->base);
        return NULL;
    }
    /* A consumer that registers later, before the end of the run, holds the shards it
     * will read from before its start at their heads until it subscribes. */
    kds_waits_hold_until(&c->held, st, c->begin, cfg->start != KDS_START_LATEST);
    sim_at(s, c->begin, begin, c);
    if (cfg->pause_for > 0) {
        sim_at(s, cfg->pause_at > c->begin ? cfg->pause_at : c->begin, pause_start, c);
        sim_at(s, (cfg->pause_at > c->begin ? cfg->pause_at : c->begin) + cfg->pause_for,
               pause_end, c);
    }
    return &c->base;
}
