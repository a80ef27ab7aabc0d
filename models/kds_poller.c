/* kds_poller.c - the polling consumer of kds_poller.h: one read loop per shard. */
#include "kds_poller.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kds_trace.h"
#include "sim_err.h"
#include "sim_mem.h"

typedef struct reader {
    kds_poller *p;
    kds_shard *sh;
    kds_cursor cur;
    sim_time issued;   /* when the current shard iterator was issued, ns */
    uint64_t start_pos;/* where this reader started (records before are skipped) */
    int done;          /* reached SHARD_END of a closed shard, or never listed */
    int unlisted;      /* EXPIRED when the consumer began: never listed nor read */
    int blocked;       /* a child shard waiting for its parents to end */
    sim_time created;  /* when the reader was made (a child's wait starts here) */
    sim_time last_done;/* when the records of the latest call were processed */
    bool attached;     /* cur is attached to the shard's log: from the reader's start */
} reader;

struct kds_poller {
    kds_consumer base; /* first: the run sees a kds_consumer */
    kds_poller_cfg cfg;
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;      /* sim-owned */
    reader **readers;  /* owned, one per shard in creation order */
    size_t n_readers, cap_readers;
    reader **by_shard; /* borrowed from readers: reader of shard i, or NULL */
    size_t n_by_shard;
    kds_slice *scratch;/* slices of the current call */
    size_t n_scratch, cap_scratch;
    kds_waits waits;   /* the shards held at their heads until the consumer begins */
};

void kds_poller_cfg_defaults(kds_poller_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "poller";
    cfg->idle = SIM_MS(1500);
    cfg->max_records = 10000;
    cfg->start = KDS_START_TRIM_HORIZON;
    cfg->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 40.0, 0.4, 1.0, 10000.0};
    cfg->process_ms = sim_dist_const(0);
    cfg->begin = 0;
}


static void collect(void *ctx, const kds_slice *sl)
{
    kds_poller *p = ctx;
    if (p->n_scratch == p->cap_scratch) {
        p->cap_scratch = p->cap_scratch ? p->cap_scratch * 2 : 64;
        p->scratch = realloc(p->scratch, p->cap_scratch * sizeof *p->scratch);
        SIM_ASSERT(p->scratch != NULL);
    }
    p->scratch[p->n_scratch++] = *sl;
}

static bool parent_done(void *arg, uint32_t shard)
{
    kds_poller *p = arg;
    return shard >= p->n_by_shard || !p->by_shard[shard] || p->by_shard[shard]->done;
}

/* Whether this consumer reads (or read) parent shard `shard` (-1: none). */
static bool parent_read(const kds_poller *p, int32_t shard)
{
    return shard >= 0 && (size_t)shard < p->n_by_shard && p->by_shard[shard] &&
           !p->by_shard[shard]->unlisted;
}

/* When the last records of parent shard `shard` (-1: none) were processed, or 0. */
static sim_time parent_last_done(const kds_poller *p, int32_t shard)
{
    if (shard < 0 || (size_t)shard >= p->n_by_shard || !p->by_shard[shard])
        return 0;
    return p->by_shard[shard]->last_done;
}

static void poll(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_poller *p = rd->p;
    kds_consumer_stats *cs = &p->base.st;
    sim_time now = sim_now(s);
    const kds_poller_cfg *c = &p->cfg;

    if (rd->done)
        return; /* a shard that had expired when the consumer began (position) */
    if (rd->blocked) {
        /* Parent-before-child, as the KCL does it: a child is read only after every
         * parent was read to its end and its last records processed (the KCL
         * checkpoints SHARD_END after them); blocked children check every 10 s. */
        if (!kds_parents_done(p->st, rd->sh, parent_done, p)) {
            sim_after(s, KDS_PARENT_POLL, poll, rd);
            return;
        }
        sim_time a = parent_last_done(p, rd->sh->parent);
        sim_time b = parent_last_done(p, rd->sh->adjacent_parent);
        if (a > now || b > now) {
            sim_at(s, a > b ? a : b, poll, rd);
            return;
        }
        rd->blocked = 0;
        /* A child none of whose parents this consumer reads (they had expired when it
         * began) starts as a shard without parents would, not as a child that waited. */
        if (parent_read(p, rd->sh->parent) || parent_read(p, rd->sh->adjacent_parent))
            kds_consumer_child_started(&p->base, p->st, rd->sh, now - rd->created);
        kds_log_seek_head(&rd->sh->log, &rd->cur);
        rd->start_pos = rd->cur.pos;
    }

    if (c->pause_for > 0 && now >= c->pause_at && now < c->pause_at + c->pause_for) {
        if (KDS_TRACING(p->st->trace, "get", c->name, rd->sh->index)) {
            char dur[32];
            kds_trace_emit(p->st->trace, now, "get", c->name, rd->sh->index,
                           "paused: the consumer's pause of %s from %.3f s; the next "
                           "GetRecords on this shard at %.3f s",
                           kds_trace_dur(dur, sizeof dur, c->pause_for), sim_to_s(c->pause_at),
                           sim_to_s(c->pause_at + c->pause_for));
        }
        sim_at(s, c->pause_at + c->pause_for, poll, rd);
        return;
    }
    sim_time lat = sim_dist_sample_ns(&c->call_latency_ms, p->rng);
    bool refreshed = now - rd->issued > p->st->cfg.iterator_ttl;
    if (refreshed) {
        /* ExpiredIteratorException: fetch a new iterator after the last record read
         * (one more round trip), then read. */
        cs->iterator_refreshes++;
        lat += sim_dist_sample_ns(&c->call_latency_ms, p->rng);
    }
    rd->issued = now;
    cs->getrecords_calls++;
    if (!kds_stream_read_admit(p->st, rd->sh)) {
        cs->read_throttled_calls++;
        if (KDS_TRACING(p->st->trace, "get", c->name, rd->sh->index)) {
            char why[160], it[160];
            kds_trace_emit(p->st->trace, now, "get", c->name, rd->sh->index,
                           "GetRecords: throttled (ReadProvisionedThroughputExceeded: %s), next "
                           "try in %.0f ms%s", kds_trace_read_limit(why, sizeof why, p->st, rd->sh),
                           sim_to_ms(lat + c->idle),
                           kds_trace_refresh(it, sizeof it, refreshed, p->st->cfg.iterator_ttl));
        }
        sim_after(s, lat + c->idle, poll, rd);
        return;
    }
    kds_stream_trim(p->st, rd->sh);
    p->n_scratch = 0;
    kds_take tk;
    kds_log_take(&rd->sh->log, &rd->cur, c->max_records, p->st->cfg.max_bytes_per_call, collect,
                 p, &tk);
    cs->records_expired_unread += tk.expired;
    kds_stream_read_charge(p->st, rd->sh, tk.records, tk.bytes);
    cs->bytes_read_shared += tk.bytes;
    kds_stream_meter_over_7d(p->st, &rd->sh->log, rd->cur.pos, &tk, &cs->bytes_read_over_7d);
    if (tk.records == 0)
        cs->empty_calls++;
    double proc = sim_dist_sample(&c->process_ms, p->rng) +
                  c->process_ms_per_record * (double)tk.records;
    sim_time done = now + lat + sim_ms_to_ns(proc);
    rd->last_done = done;
    kds_consumer_stats_deliver_all(cs, p->scratch, p->n_scratch, done);
    /* GetRecords.IteratorAgeMilliseconds: how far the last record returned is behind
     * the time of the call; 0 once the reader has caught up. */
    bool caught_up = rd->cur.pos >= rd->sh->log.end_pos;
    double age = caught_up || tk.records == 0 ? 0.0 : sim_to_ms(now - tk.t_last);
    kds_consumer_stats_age(cs, now, age);
    if (KDS_TRACING(p->st->trace, "get", c->name, rd->sh->index)) {
        /* The records returned are the ones just before the cursor. */
        char ex[64], it[160], seq[KDS_SEQNOS_LEN];
        kds_trace_emit(p->st->trace, now, "get", c->name, rd->sh->index,
                       "GetRecords: %" PRIu64 " record%s, %" PRIu64 " B%s, iterator age %.0f ms, "
                       "processed by +%.0f ms%s%s",
                       tk.records, kds_trace_s(tk.records), tk.bytes,
                       kds_trace_expired(ex, sizeof ex, tk.expired), age, sim_to_ms(done - now),
                       kds_trace_refresh(it, sizeof it, refreshed, p->st->cfg.iterator_ttl),
                       kds_trace_seqnos(seq, sizeof seq, rd->sh->index,
                                        rd->cur.pos - tk.records, tk.records));
    }
    if (caught_up && rd->sh->state != KDS_SHARD_OPEN) {
        rd->done = 1; /* SHARD_END */
        return;
    }
    sim_at(s, done + c->idle, poll, rd);
}

static void position(sim *s, void *ctx);

/* Add a reader of shard `sh`. Readers of the shards that exist when the consumer is
 * made position their iterator when it begins (an event scheduled before the first
 * call, so it runs first even at the same instant); later shards' readers are
 * positioned by the caller at once. */
static void add_reader(kds_poller *p, kds_shard *sh, bool at_creation)
{
    reader *rd = calloc(1, sizeof *rd);
    SIM_ASSERT(rd != NULL);
    rd->p = p;
    rd->sh = sh;
    if (p->n_readers == p->cap_readers) {
        p->cap_readers = p->cap_readers ? p->cap_readers * 2 : 8;
        p->readers = realloc(p->readers, p->cap_readers * sizeof *p->readers);
        SIM_ASSERT(p->readers != NULL);
    }
    p->readers[p->n_readers++] = rd;
    p->by_shard = sim_grow_zeroed(p->by_shard, &p->n_by_shard, (size_t)sh->index + 1,
                                  sizeof *p->by_shard);
    p->by_shard[sh->index] = rd;
    rd->created = sim_now(p->sim);
    /* The cursor is attached when the reader starts (attach), not now. Until then a
     * consumer that begins later, before the end of the run, holds the shard at its head
     * (one starting at LATEST on a shard that exists has nothing before its start to
     * read), so that it reads the records as written; one that begins after the end
     * holds nothing, and changes no other report. */
    if (p->cfg.begin > sim_now(p->sim) && kds_waits_wanted(p->st, p->cfg.begin) &&
        (!at_creation || p->cfg.start != KDS_START_LATEST))
        kds_waits_hold(&p->waits, sh);
    /* The first call is at a random phase within one idle interval. */
    sim_time first = p->cfg.begin > sim_now(p->sim) ? p->cfg.begin : sim_now(p->sim);
    first += (sim_time)(gsl_rng_uniform(p->rng) * (double)p->cfg.idle);
    rd->issued = first;
    if (at_creation) {
        sim_time begin = p->cfg.begin > sim_now(p->sim) ? p->cfg.begin : sim_now(p->sim);
        sim_at(p->sim, begin, position, rd);
    }
    sim_at(p->sim, first, poll, rd);
}

/* Attach rd's cursor to its shard's log, once, when the reader starts. */
static void attach(reader *rd)
{
    if (rd->attached)
        return;
    SIM_ASSERT(kds_log_attach(&rd->sh->log, &rd->cur) == 0);
    rd->attached = true;
    kds_waits_release(&rd->p->waits, rd->sh);
}

static void attach_event(sim *s, void *ctx)
{
    (void)s;
    attach(ctx);
}

/* The iterator is positioned when the reader starts: at begin for existing shards. */
static void position(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_poller *p = rd->p;
    const kds_log *l = &rd->sh->log;
    (void)s;
    if (rd->sh->state == KDS_SHARD_EXPIRED) {
        /* Gone before the consumer began: not listed, never read (its records were
         * stored before the start, skipped at it), and its children do not wait. */
        kds_log_seek_end(l, &rd->cur);
        rd->start_pos = rd->cur.pos;
        rd->done = rd->unlisted = 1;
        kds_waits_release(&p->waits, rd->sh);
        return; /* never read: not attached */
    }
    kds_stream_trim(p->st, rd->sh);
    switch (p->cfg.start) {
    case KDS_START_TRIM_HORIZON:
        kds_log_seek_head(l, &rd->cur);
        break;
    case KDS_START_LATEST:
        kds_log_seek_end(l, &rd->cur);
        break;
    case KDS_START_AT_TIMESTAMP:
        kds_log_seek_time(l, &rd->cur, p->cfg.start_time);
        break;
    case KDS_START_AT_SEQUENCE_NUMBER:
        kds_log_seek_pos(l, &rd->cur, p->cfg.start_pos);
        break;
    case KDS_START_AFTER_SEQUENCE_NUMBER:
        kds_log_seek_pos(l, &rd->cur, p->cfg.start_pos + 1);
        break;
    }
    rd->start_pos = rd->cur.pos;
    attach(rd);
}

static void on_new_shard(void *ctx, kds_shard *sh)
{
    kds_poller *p = ctx;
    add_reader(p, sh, false);
    /* A child shard is read from its beginning whatever the start position (as the
     * KCL starts child leases at TRIM_HORIZON), once its parents have ended. */
    reader *rd = p->readers[p->n_readers - 1];
    kds_log_seek_head(&sh->log, &rd->cur);
    rd->start_pos = rd->cur.pos;
    rd->blocked = 1;
    if (p->cfg.begin > sim_now(p->sim))
        sim_at(p->sim, p->cfg.begin, attach_event, rd); /* the consumer starts then */
    else
        attach(rd);
}

static void finish(kds_consumer *base, sim_time end)
{
    kds_poller *p = (kds_poller *)base;
    kds_consumer_stats *cs = &p->base.st;
    (void)end;
    cs->records_unread = 0;
    cs->records_skipped_at_start = 0;
    for (size_t i = 0; i < p->n_readers; i++) {
        reader *rd = p->readers[i];
        kds_consumer_settle(cs, &rd->sh->log, &rd->cur, rd->start_pos);
    }
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
}

static void free_poller(kds_consumer *base)
{
    kds_poller *p = (kds_poller *)base;
    if (!p)
        return;
    if (p->st)
        kds_waits_fini(&p->waits, p->st);
    for (size_t i = 0; i < p->n_readers; i++) {
        if (p->readers[i]->attached)
            kds_log_detach(&p->readers[i]->sh->log, &p->readers[i]->cur);
        free(p->readers[i]);
    }
    free(p->readers);
    free(p->by_shard);
    free(p->scratch);
    kds_consumer_stats_fini(&p->base.st);
    free(p);
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const kds_poller *p = (const kds_poller *)base;
    char v[128];
    fn(arg, "call_latency", kds_dist_text(v, sizeof v, &p->cfg.call_latency_ms, "ms"),
       "GetRecords round trip; AWS publishes no figure");
}

static const kds_consumer_ops POLLER_OPS = {
    .kind = "polling",
    .finish = finish,
    .figures = NULL,
    .assumptions = assumptions,
    .free = free_poller,
};

kds_poller *kds_poller_new(sim *s, kds_stream *st, const kds_poller_cfg *cfg)
{
    kds_poller *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    p->cfg.max_records = kds_stream_call_records(st, cfg->max_records);
    p->sim = s;
    p->st = st;
    if (kds_consumer_init(&p->base, &POLLER_OPS, cfg->name, s, st, on_new_shard, p, &p->rng) != 0) {
        free_poller(&p->base);
        return NULL;
    }
    for (size_t i = 0; i < st->n_shards; i++) {
        kds_shard *sh = st->shards[i];
        if (sh->state != KDS_SHARD_EXPIRED)
            add_reader(p, sh, true);
    }
    return p;
}

kds_consumer *kds_poller_consumer(kds_poller *p)
{
    return &p->base;
}
