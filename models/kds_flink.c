/* kds_flink.c - the Managed Apache Flink consumer of kds_flink.h: one reader per shard
 * (a polling loop or an EFO subscription), checkpoints, failures and restarts, and
 * parent-before-child shard order. */
#include "kds_flink.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_slice.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"

typedef struct kds_flink kds_flink;

typedef enum {
    R_WAITING, /* not started: a parent is not read to its end yet */
    R_READING, /* reading (or, after a failure, ready to read again at the restart) */
    R_DONE     /* read to the end of a closed shard (SHARD_END) */
} rstate;

/* A slice fetched and being processed: it is processed at `done`. */
typedef struct pending {
    kds_slice sl;
    sim_time done;
} pending;

typedef struct reader {
    kds_flink *f;
    kds_shard *sh;
    rstate state;
    bool waited;          /* it had to wait for a parent before starting */
    bool ever_started;    /* started once (a start after a restart is not a new one) */
    uint64_t start_pos;   /* first position this application was to read */
    uint64_t high;        /* records in [start_pos, high) were processed at least once,
                             but for `expired` of them */
    uint64_t expired;     /* records below high it never processed: they expired before
                             it got to them (model.md section 8) */
    uint64_t trace_expired; /* trace only (0 without a trace): of `expired`, those no
                               GetRecords line has told yet */
    uint64_t processed;   /* position after the last record processed */

    /* Checkpoints. */
    kds_cursor ckpt;      /* attached: the position in the last completed checkpoint (so
                             that the log keeps the runs a replay will read exact) */
    rstate ckpt_state;    /* the reader's state in it */
    bool in_ckpt;         /* the reader existed at the last completed checkpoint */
    uint64_t snap_pos;    /* the checkpoint in progress: position... */
    rstate snap_state;    /* ...and state */
    bool snap_valid;      /* the reader is in the checkpoint in progress */

    /* Polling. */
    kds_cursor cur;       /* attached: the next record to fetch */
    sim_event_id ev;      /* the next poll, or 0 */
    uint32_t throttles;   /* consecutive throttled calls */

    /* Enhanced fan-out. */
    kds_efo_sub sub;      /* the subscription, once started */
    bool sub_started;
    sim_time busy_until;  /* the end of the processing of the last push, ns */

    /* Fetched, not yet processed, in order. */
    pending *q;           /* owned */
    size_t q_head, q_n, q_cap;
} reader;

struct kds_flink {
    kds_consumer base;    /* first: the run sees a kds_consumer */
    kds_waits waits;      /* shards held at their heads until the job starts */
    kds_flink_cfg cfg;
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;         /* sim-owned */
    sim_time begin;       /* when the job started, ns */
    bool started;         /* the begin event ran */
    uint64_t unlisted;    /* records of the shards EXPIRED when it began (never listed) */
    bool down;            /* failed, not restarted yet */
    sim_time down_at;     /* when it failed, ns */
    double down_open_ms;  /* down from down_at to the end of the run (finish), ms */
    reader **readers;     /* owned, creation order */
    size_t n_readers, cap_readers;
    reader **by_shard;    /* borrowed from readers: by shard index, NULL if none */
    size_t n_by_shard;
    sim_time last_ckpt;   /* barrier time of the last completed checkpoint (begin if none) */
    bool snap_running;    /* a checkpoint is in progress */
    sim_time snap_at;     /* its barrier time */
    sim_event_id snap_ev; /* its completion event, or 0 */
    kds_flink_stats fs;
    sim_time process_fixed; /* process_time() when it is the same for every batch (a
                               constant process_ms, nothing per record), else -1 */
};

void kds_flink_cfg_defaults(kds_flink_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "flink";
    cfg->retrieval = KDS_FLINK_POLLING;
    cfg->consumer_name = NULL;
    kds_efo_cfg_defaults(&cfg->efo);
    cfg->start = KDS_START_LATEST;
    cfg->poll_interval = SIM_MS(200);
    cfg->max_records = 10000;
    cfg->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 40.0, 0.4, 1.0, 10000.0};
    cfg->backoff_base = SIM_MS(300);
    cfg->backoff_max = SIM_S(1);
    cfg->process_ms = sim_dist_const(0);
    cfg->process_ms_per_record = 0;
    cfg->checkpoint_interval = SIM_S(60);
    cfg->checkpoint_duration = 0;
    cfg->restart_delay = SIM_S(10);
    cfg->discovery_interval = SIM_S(10);
}


/* ---- processing ------------------------------------------------------------------------ */

/* Room for one more slice at the end of a full queue: the settled slices before q_head
 * make it, else the queue grows. Out of line: rare (a settle that empties the queue
 * moves it back to 0). */
static __attribute__((noinline)) void q_make_room(reader *rd)
{
    if (rd->q_head > 0) {
        memmove(rd->q, rd->q + rd->q_head, (rd->q_n - rd->q_head) * sizeof *rd->q);
        rd->q_n -= rd->q_head;
        rd->q_head = 0;
        return;
    }
    rd->q_cap = rd->q_cap ? rd->q_cap * 2 : 16;
    rd->q = realloc(rd->q, rd->q_cap * sizeof *rd->q);
    SIM_ASSERT(rd->q != NULL);
}

static inline void q_push(reader *rd, const kds_slice *sl, sim_time done)
{
    if (rd->q_n == rd->q_cap)
        q_make_room(rd);
    rd->q[rd->q_n++] = (pending){*sl, done};
}

static uint64_t q_records(const reader *rd)
{
    uint64_t n = 0;
    for (size_t i = rd->q_head; i < rd->q_n; i++)
        n += rd->q[i].sl.count;
    return n;
}

/* Hand one processed slice to the statistics: the part below the high-water mark was
 * processed before a failure and is a replay (duplicates); the rest is new. Slices come
 * in position order from the last processed one, or from the head when the log trimmed
 * past it: a slice starting above the high-water mark leaves a gap of records that
 * expired before they were read. */
static void processed(reader *rd, const kds_slice *sl, sim_time done)
{
    kds_flink *f = rd->f;
    kds_consumer_stats *cs = &f->base.st;
    uint64_t end = sl->first + sl->count;
    if (sl->first > rd->high) {
        rd->expired += sl->first - rd->high;
        if (f->st->trace && f->cfg.retrieval == KDS_FLINK_POLLING)
            rd->trace_expired += sl->first - rd->high; /* told by the next GetRecords line */
        rd->high = sl->first;
    }
    if (end <= rd->high) {
        kds_consumer_stats_deliver(cs, sl, done, 1);
        f->fs.records_replayed += sl->count;
    } else if (sl->first >= rd->high) {
        kds_consumer_stats_deliver(cs, sl, done, 0);
        rd->high = end;
    } else {
        kds_slice old, fresh;
        kds_slice_split(sl, (uint32_t)(rd->high - sl->first), &old, &fresh);
        kds_consumer_stats_deliver(cs, &old, done, 1);
        f->fs.records_replayed += old.count;
        kds_consumer_stats_deliver(cs, &fresh, done, 0);
        rd->high = end;
    }
    rd->processed = end;
}

/* settle() when the queue's first slice is processed by t. */
static inline __attribute__((always_inline)) void settle_due_body(reader *rd, sim_time t)
{
    do {
        processed(rd, &rd->q[rd->q_head].sl, rd->q[rd->q_head].done);
        rd->q_head++;
    } while (rd->q_head < rd->q_n && rd->q[rd->q_head].done <= t);
    if (rd->q_head == rd->q_n)
        rd->q_head = rd->q_n = 0; /* an empty queue starts at 0 again */
}

/* The same out of line, for the callers other than efo_deliver. */
static __attribute__((noinline)) void settle_due(reader *rd, sim_time t)
{
    settle_due_body(rd, t);
}

/* Everything whose processing ended by t is processed. Inline, the test: every push
 * settles first, and often nothing is due (a queue with nothing due is left as it is:
 * when empty, it is at 0 already). */
static inline void settle(reader *rd, sim_time t)
{
    if (rd->q_head < rd->q_n && rd->q[rd->q_head].done <= t)
        settle_due(rd, t);
}

static sim_time process_time(kds_flink *f, uint64_t records)
{
    if (f->process_fixed >= 0)
        return f->process_fixed;
    return sim_ms_to_ns(sim_dist_sample(&f->cfg.process_ms, f->rng) +
                    f->cfg.process_ms_per_record * (double)records);
}

/* ---- polling ----------------------------------------------------------------------------- */

static void poll(sim *s, void *ctx);

static void collect(void *ctx, const kds_slice *sl)
{
    q_push(ctx, sl, SIM_TIME_MAX); /* the time is set once the batch is known */
}

static void poll(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_flink *f = rd->f;
    kds_consumer_stats *cs = &f->base.st;
    const kds_flink_cfg *c = &f->cfg;
    sim_time now = sim_now(s);
    rd->ev = 0;
    settle(rd, now);
    cs->getrecords_calls++;
    sim_time lat = sim_dist_sample_ns(&c->call_latency_ms, f->rng);
    if (!kds_stream_read_admit(f->st, rd->sh)) {
        /* ProvisionedThroughputExceeded: the connector backs off with full jitter,
         * base x 1.5^n up to the maximum. */
        cs->read_throttled_calls++;
        double cap = (double)c->backoff_base * pow(1.5, (double)rd->throttles);
        if (cap > (double)c->backoff_max)
            cap = (double)c->backoff_max;
        rd->throttles++;
        sim_time wait = lat + (sim_time)(gsl_rng_uniform(f->rng) * cap);
        if (KDS_TRACING(f->st->trace, "get", c->name, rd->sh->index)) {
            char why[160];
            kds_trace_emit(f->st->trace, now, "get", c->name, rd->sh->index,
                           "GetRecords: throttled (ReadProvisionedThroughputExceeded: %s), next "
                           "try in %.0f ms (a random backoff after %" PRIu32 " throttled "
                           "call%s in a row)",
                           kds_trace_read_limit(why, sizeof why, f->st, rd->sh), sim_to_ms(wait),
                           rd->throttles, kds_trace_s(rd->throttles));
        }
        rd->ev = sim_at(s, now + wait, poll, rd);
        return;
    }
    rd->throttles = 0;
    kds_stream_trim(f->st, rd->sh);
    size_t first = rd->q_n;
    kds_take tk;
    kds_log_take(&rd->sh->log, &rd->cur, c->max_records, f->st->cfg.max_bytes_per_call, collect,
                 rd, &tk);
    kds_stream_read_charge(f->st, rd->sh, tk.records, tk.bytes);
    cs->bytes_read_shared += tk.bytes;
    kds_stream_meter_over_7d(f->st, &rd->sh->log, rd->cur.pos, &tk, &cs->bytes_read_over_7d);
    if (tk.records == 0)
        cs->empty_calls++;
    sim_time done = now + lat + (tk.records ? process_time(f, tk.records) : 0);
    for (size_t i = first; i < rd->q_n; i++)
        rd->q[i].done = done;
    bool caught_up = rd->cur.pos >= rd->sh->log.end_pos;
    double age = caught_up || tk.records == 0 ? 0.0 : sim_to_ms(now - tk.t_last);
    kds_consumer_stats_age(cs, now, age);
    if (KDS_TRACING(f->st->trace, "get", c->name, rd->sh->index)) {
        /* The job counts a record lost when it processes the records after it (processed,
         * by its high-water mark): the next GetRecords line tells of them, as the records
         * before the ones it returns. */
        char ex[64], seq[KDS_SEQNOS_LEN]; /* the records returned end at the cursor */
        kds_trace_emit(f->st->trace, now, "get", c->name, rd->sh->index,
                       "GetRecords: %" PRIu64 " record%s, %" PRIu64 " B%s, iterator age %.0f ms, "
                       "processed by +%.0f ms%s",
                       tk.records, kds_trace_s(tk.records), tk.bytes,
                       kds_trace_expired(ex, sizeof ex, rd->trace_expired), age,
                       sim_to_ms(done - now),
                       kds_trace_seqnos(seq, sizeof seq, rd->sh->index, rd->cur.pos - tk.records,
                                        tk.records));
        rd->trace_expired = 0;
    }
    if (caught_up && rd->sh->state != KDS_SHARD_OPEN) {
        rd->state = R_DONE; /* SHARD_END: the children may start */
        return;
    }
    rd->ev = sim_at(s, done + c->poll_interval, poll, rd);
}

/* ---- enhanced fan-out -------------------------------------------------------------------- */

static void efo_deliver(void *owner, kds_efo_sub *sub, const kds_slice *sl, size_t n, sim_time at)
{
    (void)sub;
    reader *rd = owner;
    kds_flink *f = rd->f;
    /* settle(), with settle_due inline: every push settles, half of them something. */
    sim_time now = sim_now(f->sim);
    if (rd->q_head < rd->q_n && rd->q[rd->q_head].done <= now)
        settle_due_body(rd, now);
    uint64_t records = sl[0].count; /* a push has records: n >= 1, most often 1 */
    for (size_t i = 1; i < n; i++)
        records += sl[i].count;
    /* Pushes are processed one after the other, in order. */
    sim_time start = at > rd->busy_until ? at : rd->busy_until;
    sim_time done = start + process_time(f, records);
    rd->busy_until = done;
    q_push(rd, &sl[0], done);
    for (size_t i = 1; i < n; i++)
        q_push(rd, &sl[i], done);
}

/* ---- starting, stopping ------------------------------------------------------------------ */

/* Start (or, after a restart, resume) reading at rd->processed. */
static void start_reading(reader *rd)
{
    kds_flink *f = rd->f;
    sim_time now = sim_now(f->sim);
    rd->state = R_READING;
    rd->busy_until = now;
    if (f->cfg.retrieval == KDS_FLINK_POLLING) {
        kds_stream_trim(f->st, rd->sh);
        kds_log_seek_pos(&rd->sh->log, &rd->cur, rd->processed);
        sim_time phase = (sim_time)(gsl_rng_uniform(f->rng) * (double)f->cfg.poll_interval);
        rd->ev = sim_at(f->sim, now + phase, poll, rd);
    } else if (!rd->sub_started) {
        int rc = kds_efo_sub_start(&rd->sub, f->sim, f->st, rd->sh, &f->cfg.efo, f->rng,
                                   &f->base.st, KDS_START_AT_SEQUENCE_NUMBER, 0, rd->processed,
                                   f->base.name, rd, efo_deliver);
        SIM_ASSERT(rc == 0);
        rd->sub_started = true;
    } else {
        /* The restarted job's source subscribes again from its checkpoint. */
        kds_efo_sub_resubscribe(&rd->sub, rd->processed, "the job restarted");
    }
}

static reader *reader_of(const kds_flink *f, int32_t index)
{
    if (index < 0 || (size_t)index >= f->n_by_shard)
        return NULL;
    return f->by_shard[index];
}

/* A shard may be read once each parent this application reads is read to its end. A
 * parent it does not read (expired before the job started) does not hold it back. */
static bool parents_done(const kds_flink *f, const reader *rd)
{
    const reader *p = reader_of(f, rd->sh->parent);
    const reader *a = reader_of(f, rd->sh->adjacent_parent);
    return (!p || p->state == R_DONE) && (!a || a->state == R_DONE);
}

/* A discovery found rd ready: it starts reading. The first start of a child shard (one
 * with a parent this application reads) goes to the common statistics, its wait running
 * from the child's creation (or the job's start) to this discovery. Of those
 * children_started, child_starts_delayed counts the ones an earlier discovery found
 * still waiting for a parent; the others had their parents done by their first
 * discovery and waited for it only. A start again after a restart is neither. */
static void start_discovered(kds_flink *f, reader *rd)
{
    const kds_shard *sh = rd->sh;
    if (!rd->ever_started && (reader_of(f, sh->parent) || reader_of(f, sh->adjacent_parent))) {
        kds_consumer_child_started_since(&f->base, f->st, sh, f->begin, sim_now(f->sim));
        if (rd->waited)
            f->fs.child_starts_delayed++;
    }
    rd->ever_started = true;
    start_reading(rd);
}

/* Shard discovery: note the EFO readers that reached SHARD_END, and start the shards
 * whose parents are done. */
static void discover(kds_flink *f)
{
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        if (rd->state == R_READING && rd->sub_started && rd->sub.done)
            rd->state = R_DONE;
    }
    /* Creation order puts parents before children, so one pass starts a chain only one
     * generation at a time, as the next discovery would. */
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        if (rd->state != R_WAITING)
            continue;
        if (parents_done(f, rd)) {
            start_discovered(f, rd);
        } else {
            rd->waited = true;
        }
    }
}

static void discovery_tick(sim *s, void *ctx)
{
    kds_flink *f = ctx;
    sim_after(s, f->cfg.discovery_interval, discovery_tick, f);
    if (!f->down)
        discover(f);
}

static reader *add_reader(kds_flink *f, kds_shard *sh, uint64_t pos)
{
    reader *rd = calloc(1, sizeof *rd);
    SIM_ASSERT(rd != NULL);
    rd->f = f;
    rd->sh = sh;
    rd->state = R_WAITING;
    rd->start_pos = rd->high = rd->processed = pos;
    if (f->n_readers == f->cap_readers) {
        f->cap_readers = f->cap_readers ? f->cap_readers * 2 : 8;
        f->readers = realloc(f->readers, f->cap_readers * sizeof *f->readers);
        SIM_ASSERT(f->readers != NULL);
    }
    f->readers[f->n_readers++] = rd;
    f->by_shard = sim_grow_zeroed(f->by_shard, &f->n_by_shard, (size_t)sh->index + 1,
                                  sizeof *f->by_shard);
    f->by_shard[sh->index] = rd;
    kds_log_seek_pos(&sh->log, &rd->ckpt, pos);
    SIM_ASSERT(kds_log_attach(&sh->log, &rd->ckpt) == 0);
    if (f->cfg.retrieval == KDS_FLINK_POLLING) {
        kds_log_seek_pos(&sh->log, &rd->cur, pos);
        SIM_ASSERT(kds_log_attach(&sh->log, &rd->cur) == 0);
    }
    return rd;
}

static void begin(sim *s, void *ctx)
{
    (void)s;
    kds_flink *f = ctx;
    const kds_flink_cfg *c = &f->cfg;
    f->started = true;
    for (size_t i = 0; i < f->st->n_shards; i++) {
        kds_shard *sh = f->st->shards[i];
        if (sh->state == KDS_SHARD_EXPIRED) {
            f->unlisted += sh->log.end_pos; /* never listed: skipped at the start */
            continue;
        }
        kds_stream_trim(f->st, sh);
        kds_cursor cur = {0, 0};
        switch (c->start) {
        case KDS_START_TRIM_HORIZON:
            kds_log_seek_head(&sh->log, &cur);
            break;
        case KDS_START_LATEST:
            kds_log_seek_end(&sh->log, &cur);
            break;
        case KDS_START_AT_TIMESTAMP:
            kds_log_seek_time(&sh->log, &cur, c->start_time);
            break;
        case KDS_START_AT_SEQUENCE_NUMBER:
            kds_log_seek_pos(&sh->log, &cur, c->start_pos);
            break;
        case KDS_START_AFTER_SEQUENCE_NUMBER:
            kds_log_seek_pos(&sh->log, &cur, c->start_pos + 1);
            break;
        }
        reader *rd = add_reader(f, sh, cur.pos);
        rd->in_ckpt = true; /* the start positions stand for the first checkpoint */
        rd->ckpt_state = R_WAITING; /* started again as its parents allow */
    }
    kds_waits_fini(&f->waits, f->st); /* every shard now has its reader's checkpoint */
    discover(f);
    /* Parents that need waiting for were noted by discover(); a shard created closed and
     * empty is done at once, which its first poll or push finds. */
}

static void on_new_shard(void *ctx, kds_shard *sh)
{
    kds_flink *f = ctx;
    /* Shards that exist when the job starts are found by begin(). A child is read from
     * its start once its parents are done (the next shard discovery). */
    if (f->started) {
        kds_stream_trim(f->st, sh);
        add_reader(f, sh, sh->log.head_pos);
    } else if (f->cfg.start != KDS_START_LATEST && kds_waits_wanted(f->st, f->begin)) {
        kds_waits_hold(&f->waits, sh); /* begin() reads it from the start position */
    }
}

/* ---- checkpoints, failures, restarts ------------------------------------------------------ */

static void checkpoint_complete(sim *s, void *ctx)
{
    kds_flink *f = ctx;
    (void)s;
    f->snap_ev = 0;
    f->snap_running = false;
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        if (!rd->snap_valid)
            continue;
        /* The exact position, even below the head: the cursor is never read from,
         * only kept attached so that the log does not compact what a replay reads. */
        rd->ckpt.pos = rd->snap_pos;
        rd->ckpt_state = rd->snap_state;
        rd->in_ckpt = true;
        rd->snap_valid = false;
    }
    f->last_ckpt = f->snap_at;
    f->fs.checkpoints++;
    if (KDS_TRACING(f->st->trace, "checkpoint", f->cfg.name, -1))
        kds_trace_emit(f->st->trace, sim_now(f->sim), "checkpoint", f->cfg.name, -1,
                       "checkpoint %" PRIu64 " (barrier at %.3f s) completed",
                       f->fs.checkpoints, sim_to_s(f->snap_at));
}

static void checkpoint_tick(sim *s, void *ctx)
{
    kds_flink *f = ctx;
    sim_time now = sim_now(s);
    sim_after(s, f->cfg.checkpoint_interval, checkpoint_tick, f);
    if (f->down || f->snap_running)
        return; /* no checkpoint while the job is down; one at a time */
    /* The barrier: each shard's position after the records processed so far. */
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        settle(rd, now);
        rd->snap_pos = rd->processed;
        bool at_end = rd->sh->state != KDS_SHARD_OPEN && rd->processed >= rd->sh->log.end_pos;
        rd->snap_state = rd->state == R_WAITING ? R_WAITING : at_end ? R_DONE : R_READING;
        rd->snap_valid = true;
    }
    f->snap_running = true;
    f->snap_at = now;
    if (f->cfg.checkpoint_duration == 0)
        checkpoint_complete(s, f);
    else
        f->snap_ev = sim_at(s, now + f->cfg.checkpoint_duration, checkpoint_complete, f);
}

static void restart(sim *s, void *ctx);

static void fail(sim *s, void *ctx)
{
    kds_flink *f = ctx;
    sim_time now = sim_now(s);
    if (!f->started || f->down)
        return; /* not running: nothing to fail */
    if (f->snap_running) {
        if (f->snap_ev)
            sim_cancel(s, f->snap_ev);
        f->snap_ev = 0;
        f->snap_running = false;
        f->fs.checkpoints_aborted++;
        for (size_t i = 0; i < f->n_readers; i++)
            f->readers[i]->snap_valid = false;
    }
    uint64_t since = 0;
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        settle(rd, now);
        uint64_t from = rd->in_ckpt ? rd->ckpt.pos : rd->start_pos;
        since += rd->processed - from;
        /* Fetched but not processed: dropped, fetched again after the restart. */
        f->fs.records_dropped_in_flight += q_records(rd);
        rd->q_head = rd->q_n = 0;
        if (rd->ev) {
            sim_cancel(s, rd->ev);
            rd->ev = 0;
        }
        if (rd->sub_started)
            kds_efo_sub_pause(&rd->sub);
    }
    f->fs.records_processed_since_checkpoint += since;
    f->fs.last_checkpoint_age_ms = sim_to_ms(now - f->last_ckpt);
    if (KDS_TRACING(f->st->trace, "failure", f->cfg.name, -1)) {
        char dur[32];
        kds_trace_emit(f->st->trace, now, "failure", f->cfg.name, -1,
                       "job failed: %" PRIu64 " record%s processed since the checkpoint of "
                       "%.3f s will be replayed; restart in %s",
                       since, kds_trace_s(since), sim_to_s(f->last_ckpt),
                       kds_trace_dur(dur, sizeof dur, f->cfg.restart_delay));
    }
    f->down = true;
    f->down_at = now;
    sim_after(s, f->cfg.restart_delay, restart, f);
}

static void restart(sim *s, void *ctx)
{
    kds_flink *f = ctx;
    sim_time now = sim_now(s);
    f->down = false;
    f->fs.restarts++;
    f->fs.downtime_ms += sim_to_ms(now - f->down_at);
    if (KDS_TRACING(f->st->trace, "failure", f->cfg.name, -1))
        kds_trace_emit(f->st->trace, now, "failure", f->cfg.name, -1,
                       "job restarted from the checkpoint of %.3f s", sim_to_s(f->last_ckpt));
    /* Restore every position and state of the last completed checkpoint; shards found
     * after it start over, waiting for their parents again. */
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        rd->processed = rd->in_ckpt ? rd->ckpt.pos : rd->start_pos;
        rd->state = rd->in_ckpt ? rd->ckpt_state : R_WAITING;
        rd->throttles = 0;
        if (rd->state == R_READING)
            start_reading(rd);
    }
    discover(f);
}

/* ---- the consumer interface ------------------------------------------------------------ */

static void finish(kds_consumer *base, sim_time end)
{
    kds_flink *f = (kds_flink *)base;
    kds_consumer_stats *cs = &f->base.st;
    /* Recomputed from the high-water marks rather than accumulated: a replay passes
     * records already delivered, and a subscription counts what it skips as expired. */
    cs->records_unread = 0;
    cs->records_skipped_at_start = f->unlisted;
    cs->records_expired_unread = 0;
    cs->efo_consumer_shard_hours = 0;
    f->fs.shards_waiting_for_parent = 0;
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        if (!f->down)
            settle(rd, end);
        const kds_log *l = &rd->sh->log;
        cs->records_skipped_at_start += rd->start_pos;
        cs->records_expired_unread += rd->expired;
        if (rd->high < l->head_pos) {
            cs->records_expired_unread += l->head_pos - rd->high;
            cs->records_unread += l->end_pos - l->head_pos;
        } else {
            cs->records_unread += l->end_pos - rd->high;
        }
        if (rd->state == R_WAITING)
            f->fs.shards_waiting_for_parent++;
    }
    if (!f->started)
        kds_consumer_not_begun(cs, f->st); /* readers are made at the start */
    /* A job still down at the end was down until then: the restart that would add it
     * to downtime_ms lies past the run. */
    f->down_open_ms = f->down ? sim_to_ms(end - f->down_at) : 0.0;
    /* Registered from the job's start to the end of the run, failures included. */
    if (f->cfg.retrieval == KDS_FLINK_EFO)
        kds_consumer_efo_registered(cs, f->st, f->begin, end);
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
}

static void figures(const kds_consumer *base, kds_figure_fn fn, void *arg)
{
    const kds_flink *f = (const kds_flink *)base;
    const kds_flink_stats *fs = &f->fs;
    fn(arg, "checkpoints", (double)fs->checkpoints);
    fn(arg, "checkpoints_aborted", (double)fs->checkpoints_aborted);
    fn(arg, "restarts", (double)fs->restarts);
    fn(arg, "records_replayed", (double)fs->records_replayed);
    fn(arg, "records_processed_since_checkpoint", (double)fs->records_processed_since_checkpoint);
    fn(arg, "records_dropped_in_flight", (double)fs->records_dropped_in_flight);
    fn(arg, "last_checkpoint_age_ms", fs->last_checkpoint_age_ms);
    fn(arg, "downtime_ms", fs->downtime_ms + f->down_open_ms);
    fn(arg, "child_starts_delayed", (double)fs->child_starts_delayed);
    fn(arg, "shards_waiting_for_parent", (double)fs->shards_waiting_for_parent);
    if (f->cfg.retrieval == KDS_FLINK_EFO) {
        uint64_t sessions = 0;
        for (size_t i = 0; i < f->n_readers; i++)
            if (f->readers[i]->sub_started)
                sessions += f->readers[i]->sub.sessions;
        fn(arg, "subscriptions", (double)sessions);
        fn(arg, "millis_behind_latest_max", f->base.st.iterator_age_ms_max);
        fn(arg, "consumer_shard_hours", f->base.st.efo_consumer_shard_hours);
    }
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const kds_flink *f = (const kds_flink *)base;
    const kds_flink_cfg *c = &f->cfg;
    char v[128];
    if (c->retrieval == KDS_FLINK_POLLING) {
        fn(arg, "call_latency", kds_dist_text(v, sizeof v, &c->call_latency_ms, "ms"),
           "GetRecords round trip; AWS publishes no figure");
        sim_fmt_duration(v, sizeof v, c->poll_interval);
        fn(arg, "poll_interval", v,
           "the Flink Kinesis connector's SHARD_GETRECORDS_INTERVAL_MILLIS default, not an "
           "AWS figure");
        char a[32], b[32];
        sim_fmt_duration(a, sizeof a, c->backoff_base);
        sim_fmt_duration(b, sizeof b, c->backoff_max);
        snprintf(v, sizeof v, "full jitter, %s x 1.5^n, at most %s", a, b);
        fn(arg, "throttle_backoff", v, "the Flink Kinesis connector's GetRecords backoff "
                                       "defaults, not an AWS figure");
    } else {
        kds_efo_assumptions(&c->efo, fn, arg);
    }
    sim_fmt_duration(v, sizeof v, c->checkpoint_interval);
    fn(arg, "checkpoint_interval", v,
       "Managed Service for Apache Flink's default (Flink's own default is no "
       "checkpoints); the application's own setting decides");
    sim_fmt_duration(v, sizeof v, c->checkpoint_duration);
    fn(arg, "checkpoint_duration", v,
       "time from a checkpoint's barrier to its completion; depends on the state size, "
       "AWS publishes no figure");
    sim_fmt_duration(v, sizeof v, c->restart_delay);
    fn(arg, "restart_delay", v,
       "time from a failure to the restarted job reading again; AWS publishes no figure");
    sim_fmt_duration(v, sizeof v, c->discovery_interval);
    fn(arg, "shard_discovery_interval", v,
       "the Flink Kinesis connector's shard discovery default, not an AWS figure");
    fn(arg, "processing", "in order per shard, no back-pressure on EFO pushes",
       "a simplification: a slow application shows as latency, not as MillisBehindLatest");
}

static void free_flink(kds_consumer *base)
{
    kds_flink *f = (kds_flink *)base;
    if (!f)
        return;
    if (f->st)
        kds_waits_fini(&f->waits, f->st);
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        kds_log_detach(&rd->sh->log, &rd->ckpt);
        if (f->cfg.retrieval == KDS_FLINK_POLLING)
            kds_log_detach(&rd->sh->log, &rd->cur);
        if (rd->sub_started)
            kds_efo_sub_fini(&rd->sub);
        free(rd->q);
        free(rd);
    }
    free(f->readers);
    free(f->by_shard);
    kds_consumer_stats_fini(&f->base.st);
    free(f);
}

static const kds_consumer_ops FLINK_OPS = {
    .kind = "flink",
    .finish = finish,
    .figures = figures,
    .assumptions = assumptions,
    .free = free_flink,
};

kds_consumer *kds_flink_make(sim *s, kds_stream *st, const void *cfgp)
{
    const kds_flink_cfg *cfg = cfgp;
    SIM_ASSERT(cfg->poll_interval > 0 && cfg->checkpoint_interval > 0 &&
               cfg->discovery_interval > 0 && cfg->checkpoint_duration >= 0 &&
               cfg->checkpoint_duration < cfg->checkpoint_interval);
    kds_flink *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->cfg = *cfg;
    f->cfg.max_records = kds_stream_call_records(st, cfg->max_records);
    if (!f->cfg.consumer_name)
        f->cfg.consumer_name = cfg->name;
    f->sim = s;
    f->st = st;
    /* A constant draw consumes no randomness and 0 ms per record adds +0 (which rounds
     * as -0 would), so process_time() need not compute it for every push. */
    f->process_fixed = -1;
    if (cfg->process_ms.kind == SIM_DIST_CONST && cfg->process_ms_per_record == 0)
        f->process_fixed = sim_dist_sample_ns(&cfg->process_ms, NULL);
    if (kds_consumer_init(&f->base, &FLINK_OPS, cfg->name, s, st, on_new_shard, f, &f->rng) != 0) {
        free_flink(&f->base);
        return NULL;
    }
    f->begin = cfg->begin > sim_now(s) ? cfg->begin : sim_now(s);
    f->last_ckpt = f->begin;
    /* A job that starts later, before the end of the run, holds the shards it will read
     * from before its start at their heads until then. */
    kds_waits_hold_until(&f->waits, st, f->begin, cfg->start != KDS_START_LATEST);
    sim_at(s, f->begin, begin, f);
    sim_at(s, f->begin + cfg->checkpoint_interval, checkpoint_tick, f);
    sim_at(s, f->begin + cfg->discovery_interval, discovery_tick, f);
    for (size_t i = 0; i < cfg->n_failures; i++)
        if (cfg->failures[i] >= f->begin)
            sim_at(s, cfg->failures[i], fail, f);
    return &f->base;
}

const kds_flink_stats *kds_flink_stats_get(const kds_consumer *c)
{
    SIM_ASSERT(c->ops == &FLINK_OPS);
    return &((const kds_flink *)c)->fs;
}
