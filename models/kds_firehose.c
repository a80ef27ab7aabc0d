/* kds_firehose.c - the Amazon Data Firehose consumer of kds_firehose.h: one read loop
 * per shard (two with full backup), one buffer, S3 objects with retries. */
#include "kds_firehose.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kds_slice.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_units.h"

typedef struct kds_firehose kds_firehose;

/* A growable array of slices (a batch, the buffer, an object). */
typedef struct slices {
    kds_slice *v;   /* owned */
    size_t n, cap;
    uint64_t records, bytes;
    sim_time oldest; /* the earliest t_first when n > 0, kept by slices_push() and
                        slices_append() (the buffer's and an object's) */
} slices;

/* Room for at least `need` slices (doubling, from 16). */
static void slices_reserve(slices *a, size_t need)
{
    if (need <= a->cap)
        return;
    size_t cap = a->cap ? a->cap : 16;
    while (cap < need)
        cap *= 2;
    a->v = realloc(a->v, cap * sizeof *a->v);
    SIM_ASSERT(a->v != NULL);
    a->cap = cap;
}

static void slices_push(slices *a, const kds_slice *sl)
{
    slices_reserve(a, a->n + 1);
    if (a->n == 0 || sl->t_first < a->oldest)
        a->oldest = sl->t_first;
    a->v[a->n++] = *sl;
    a->records += sl->count;
    a->bytes += sl->bytes;
}

/* Append n >= 1 slices holding `records` records and `bytes` bytes in all: one copy
 * where slices_push() would go slice by slice. The slices are consecutive ones of a
 * shard, whose records are in the order they were written (kds_log_append), so the
 * first holds the oldest record. */
static void slices_append(slices *a, const kds_slice *v, size_t n, uint64_t records,
                          uint64_t bytes)
{
    slices_reserve(a, a->n + n);
    if (a->n == 0 || v[0].t_first < a->oldest)
        a->oldest = v[0].t_first;
    memcpy(a->v + a->n, v, n * sizeof *v);
    a->n += n;
    a->records += records;
    a->bytes += bytes;
}

/* One GetRecords loop on one shard: the delivery reader, or the backup reader. */
typedef struct reader {
    kds_firehose *f;
    kds_shard *sh;
    kds_cursor cur;     /* attached to the shard's log */
    uint64_t start_pos; /* records before it were not this consumer's to read */
    bool backup;        /* the full-backup reader: reads, charges, delivers nothing */
    bool at_end;        /* the call in flight reached SHARD_END of a closed shard */
    bool done;          /* SHARD_END: no more calls */
    sim_time call_at;   /* when the call in flight was made, ns */
    slices batch;       /* the records of the call in flight */
} reader;

/* An S3 object being written or waiting for a retry. */
typedef struct object {
    kds_firehose *f;
    slices recs;             /* its records */
    bool by_size;            /* closed by the size hint (else by the interval) */
    sim_time first_failure;  /* time of its first failed attempt, or -1 */
    sim_time refused_from;   /* the failure its pending retry follows, ns */
    uint64_t refused;        /* retries between that failure and the pending retry,
                                every retry_interval, that the outage refuses without
                                any other effect: counted when the pending retry runs,
                                or by the end for those made by then */
    struct object *prev, *next; /* the consumer's list of live objects */
} object;

struct kds_firehose {
    kds_consumer base;       /* first: the run sees a kds_consumer */
    kds_waits waits;         /* shards held at their heads until the stream begins */
    kds_firehose_cfg cfg;
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;            /* sim-owned */
    bool started;            /* the begin event ran */
    uint64_t unlisted;       /* records of the shards EXPIRED when it began (never listed) */
    reader **readers;        /* owned: delivery and backup readers, creation order */
    size_t n_readers, cap_readers;
    slices buf;              /* the Firehose stream's buffer */
    sim_time buf_first;      /* when the buffer's interval started counting, ns */
    sim_time last_flush;     /* when the buffer was last emptied into an object, or -1 */
    sim_event_id buf_timer;  /* the interval flush, or 0 */
    object *live;            /* objects being written or retried (list head) */
    object *spare_obj;       /* owned: a freed object for the next flush, or NULL */
    slices spare;            /* owned: a freed object's slice storage (n = 0) for the
                                next buffer */
    kds_firehose_stats fs;
};

void kds_firehose_cfg_defaults(kds_firehose_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "firehose";
    cfg->start = KDS_START_LATEST;
    cfg->poll_period = SIM_S(1);
    cfg->max_records = 10000;
    cfg->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 40.0, 0.4, 1.0, 10000.0};
    cfg->aggregation = 1.0;
    cfg->buffer_size = 5 * KDS_MIB;
    cfg->buffer_interval = SIM_S(300);
    cfg->put_ms = (sim_dist){SIM_DIST_LOGNORMAL, 200.0, 0.5, 10.0, 60000.0};
    cfg->failure_rate = 0.0;
    cfg->retry_interval = SIM_S(5);
    cfg->retry_duration = -1;
}


/* ---- objects -------------------------------------------------------------------- */

static void put_done(sim *s, void *ctx);
static void retry(sim *s, void *ctx);

static void object_free(object *o)
{
    kds_firehose *f = o->f;
    if (o->prev)
        o->prev->next = o->next;
    else
        f->live = o->next;
    if (o->next)
        o->next->prev = o->prev;
    /* The next flush reuses the object and its storage: a steady stream allocates
     * nothing per object (the buffer would otherwise grow again from 16 slices). */
    if (o->recs.cap > f->spare.cap) {
        free(f->spare.v);
        f->spare = (slices){.v = o->recs.v, .cap = o->recs.cap};
    } else {
        free(o->recs.v);
    }
    if (f->spare_obj)
        free(o);
    else
        f->spare_obj = o;
}

static bool in_outage(const kds_firehose_cfg *c, sim_time t)
{
    return c->outage_for > 0 && t >= c->outage_at && t < c->outage_at + c->outage_for;
}

static void failed(kds_firehose *f, object *o, sim_time now);

/* One PutObject attempt: refused at once during an outage; otherwise its outcome is
 * known when it completes. */
static void attempt(kds_firehose *f, object *o)
{
    sim_time now = sim_now(f->sim);
    if (in_outage(&f->cfg, now)) {
        failed(f, o, now);
        return;
    }
    sim_after(f->sim, sim_dist_sample_ns(&f->cfg.put_ms, f->rng), put_done, o);
}

/* Records of `o` lost: counted, and (for the conservation rule) expired unread. */
static void lose(kds_firehose *f, uint64_t records)
{
    f->fs.records_lost_after_retries += records;
    f->base.st.records_expired_unread += records;
}

/* De-aggregation: a KPL record holds its producer's number of user records (the
 * consumer's own figure for producers it was not told about). Summed slice by slice;
 * but with one whole number for every producer, each term and partial sum is a whole
 * number, exact below 2^53 whatever the order, so one product gives the same sum. */
static void deaggregate(kds_firehose *f, const slices *r)
{
    const kds_firehose_cfg *c = &f->cfg;
    const uint32_t *by = c->aggregate_by_src;
    double acc = f->fs.user_records_delivered;
    if (!by && c->aggregation == floor(c->aggregation)) {
        /* acc is a whole number too: every object before added whole numbers. The sum
         * below 2^53 makes the product so (rounding cannot carry it below 2^53). */
        double sum = acc + (double)r->records * c->aggregation;
        if (sum < 0x1p53) {
            f->fs.user_records_delivered = sum;
            return;
        }
    }
    for (size_t i = 0; i < r->n; i++) {
        const kds_slice *sl = &r->v[i];
        double per = by && sl->src < c->n_src ? (double)by[sl->src] : c->aggregation;
        acc += (double)sl->count * per;
    }
    f->fs.user_records_delivered = acc;
}

static void written(kds_firehose *f, object *o, sim_time now)
{
    kds_firehose_stats *fs = &f->fs;
    kds_consumer_stats *cs = &f->base.st;
    kds_consumer_stats_deliver_all(cs, o->recs.v, o->recs.n, now);
    deaggregate(f, &o->recs);
    fs->objects_written++;
    fs->object_bytes_total += o->recs.bytes;
    if (o->recs.bytes > fs->object_bytes_max)
        fs->object_bytes_max = o->recs.bytes;
    if (fs->objects_written == 1 || o->recs.bytes < fs->object_bytes_min)
        fs->object_bytes_min = o->recs.bytes;
    double delay = sim_to_ms(now - o->recs.oldest);
    fs->delivery_delay_ms_sum += delay;
    if (delay > fs->delivery_delay_ms_max)
        fs->delivery_delay_ms_max = delay;
    if (KDS_TRACING(f->st->trace, "s3", f->cfg.name, -1))
        kds_trace_emit(f->st->trace, now, "s3", f->cfg.name, -1,
                       "PutObject: %" PRIu64 " record%s, %" PRIu64 " B (closed by %s) written, "
                       "oldest record %.0f ms old",
                       o->recs.records, kds_trace_s(o->recs.records), o->recs.bytes,
                       o->by_size ? "size" : "interval", delay);
}

static bool destination_fails(kds_firehose *f, sim_time now)
{
    const kds_firehose_cfg *c = &f->cfg;
    if (in_outage(c, now))
        return true;
    /* Draw only when failures are on, so that other settings keep their draws. */
    return c->failure_rate > 0 && gsl_rng_uniform(f->rng) < c->failure_rate;
}

static void put_done(sim *s, void *ctx)
{
    object *o = ctx;
    kds_firehose *f = o->f;
    sim_time now = sim_now(s);
    if (!destination_fails(f, now)) {
        written(f, o, now);
        object_free(o);
        return;
    }
    failed(f, o, now);
}

/* How many of the retries after a failure of `o` at `now` (at now + j x retry_interval,
 * j = 1, 2, ...) the outage refuses with no other effect, one after another from the
 * first: each is made before the outage ends, while the object's oldest record is still
 * in the stream (retry() drops nothing) and before its retry_duration is spent (none
 * gives it up). Each such retry only counts a retry and a failure, so they need no event
 * of their own. Draws nothing: refused attempts take no time. */
static uint64_t refused_ahead(const kds_firehose *f, const object *o, sim_time now)
{
    const kds_firehose_cfg *c = &f->cfg;
    if (c->event_per_refusal || !in_outage(c, now))
        return 0;
    sim_time lim = c->outage_at + c->outage_for;
    sim_time kept_until = o->recs.oldest + f->st->cfg.retention; /* it expires at this */
    if (kept_until < lim)
        lim = kept_until;
    if (c->retry_duration >= 0 && o->first_failure + c->retry_duration < lim)
        lim = o->first_failure + c->retry_duration; /* a retry at it gives up */
    if (lim <= now)
        return 0;
    /* The j >= 1 with now + j x interval < lim. */
    return (uint64_t)((lim - now - 1) / c->retry_interval);
}

/* An attempt of `o` failed at `now`: count it, give the object up if its retry duration
 * is spent, or schedule its next retry that may have an effect. */
static void failed(kds_firehose *f, object *o, sim_time now)
{
    f->fs.delivery_failures++;
    if (o->first_failure < 0)
        o->first_failure = now;
    if (f->cfg.retry_duration >= 0 && now - o->first_failure >= f->cfg.retry_duration) {
        /* RetryOptions.DurationInSeconds spent: the object is given up. */
        if (KDS_TRACING(f->st->trace, "s3", f->cfg.name, -1))
            kds_trace_emit(f->st->trace, now, "s3", f->cfg.name, -1,
                           "PutObject failed; retry duration spent: %" PRIu64 " record%s lost",
                           o->recs.records, kds_trace_s(o->recs.records));
        f->fs.objects_given_up++;
        lose(f, o->recs.records);
        object_free(o);
        return;
    }
    uint64_t skip = refused_ahead(f, o, now);
    sim_time next = f->cfg.retry_interval * (sim_time)(skip + 1);
    if (KDS_TRACING(f->st->trace, "s3", f->cfg.name, -1)) {
        char dur[32], after[32];
        kds_trace_dur(dur, sizeof dur, f->cfg.retry_interval);
        if (skip == 0)
            kds_trace_emit(f->st->trace, now, "s3", f->cfg.name, -1,
                           "PutObject: %" PRIu64 " record%s failed, retry in %s",
                           o->recs.records, kds_trace_s(o->recs.records), dur);
        else
            kds_trace_emit(f->st->trace, now, "s3", f->cfg.name, -1,
                           "PutObject: %" PRIu64 " record%s failed; the outage refuses the "
                           "next %" PRIu64 " retr%s, one every %s; retry in %s",
                           o->recs.records, kds_trace_s(o->recs.records), skip,
                           skip == 1 ? "y" : "ies", dur,
                           kds_trace_dur(after, sizeof after, next));
    }
    o->refused_from = now;
    o->refused = skip;
    sim_after(f->sim, next, retry, o);
}

/* Drop the records of `o` that the stream no longer holds (written at or before
 * now - retention): Firehose cannot deliver them any more. */
static void drop_expired(kds_firehose *f, object *o, sim_time now)
{
    if (now < f->st->cfg.retention)
        return;
    sim_time cutoff = now - f->st->cfg.retention;
    size_t k = 0;
    uint64_t lost = 0;
    slices kept = {0};
    for (size_t i = 0; i < o->recs.n; i++) {
        kds_slice sl = o->recs.v[i];
        if (sl.t_last <= cutoff) {
            lost += sl.count;
            continue;
        }
        if (sl.t_first <= cutoff) {
            /* Records are spread evenly over [t_first, t_last]: those at or before the
             * cutoff are gone. */
            uint64_t j = kds_prorate((uint64_t)(cutoff - sl.t_first), (uint64_t)sl.count - 1,
                                     (uint64_t)(sl.t_last - sl.t_first)) + 1;
            while (j > 0 && kds_slice_time(&sl, j - 1) > cutoff)
                j--;
            while (j < sl.count && kds_slice_time(&sl, j) <= cutoff)
                j++;
            if (j > 0) {
                kds_slice head, tail;
                kds_slice_split(&sl, (uint32_t)j, &head, &tail);
                lost += j;
                sl = tail;
            }
        }
        o->recs.v[k++] = sl;
        kept.records += sl.count;
        kept.bytes += sl.bytes;
        if (k == 1 || sl.t_first < kept.oldest)
            kept.oldest = sl.t_first;
    }
    o->recs.n = k;
    o->recs.records = kept.records;
    o->recs.bytes = kept.bytes;
    o->recs.oldest = kept.oldest;
    if (lost) {
        lose(f, lost);
        if (KDS_TRACING(f->st->trace, "s3", f->cfg.name, -1))
            kds_trace_emit(f->st->trace, now, "s3", f->cfg.name, -1,
                           "%" PRIu64 " record%s of a failed object expired from the stream: "
                           "lost",
                           lost, kds_trace_s(lost));
    }
}

static void retry(sim *s, void *ctx)
{
    object *o = ctx;
    kds_firehose *f = o->f;
    f->fs.delivery_retries += o->refused; /* the refused ones skipped over */
    f->fs.delivery_failures += o->refused;
    o->refused = 0;
    drop_expired(f, o, sim_now(s));
    if (o->recs.n == 0) {
        f->fs.objects_given_up++;
        object_free(o);
        return;
    }
    f->fs.delivery_retries++;
    attempt(f, o);
}

/* ---- the buffer --------------------------------------------------------------------- */

static void interval_due(sim *s, void *ctx);

/* Close the buffer into an S3 object and start writing it. */
static void flush(kds_firehose *f, bool by_size)
{
    if (f->buf.n == 0)
        return;
    if (f->buf_timer) {
        sim_cancel(f->sim, f->buf_timer);
        f->buf_timer = 0;
    }
    object *o = f->spare_obj ? f->spare_obj : malloc(sizeof *o);
    SIM_ASSERT(o != NULL);
    f->spare_obj = NULL;
    memset(o, 0, sizeof *o);
    o->f = f;
    o->recs = f->buf;
    o->by_size = by_size;
    o->first_failure = -1;
    o->next = f->live;
    if (f->live)
        f->live->prev = o;
    f->live = o;
    f->buf = f->spare;
    memset(&f->spare, 0, sizeof f->spare);
    f->last_flush = sim_now(f->sim);
    if (by_size)
        f->fs.objects_by_size++;
    else
        f->fs.objects_by_interval++;
    attempt(f, o);
}

static void interval_due(sim *s, void *ctx)
{
    (void)s;
    kds_firehose *f = ctx;
    f->buf_timer = 0;
    flush(f, false);
}

/* The first records enter an empty buffer now: its interval starts counting. */
static void buffer_open(kds_firehose *f, sim_time now)
{
    /* The interval counts from when the buffer was last emptied while records keep
     * flowing (so that a steady stream gets one object per interval), or from the first
     * record after a quiet spell of a whole interval. */
    sim_time from = now;
    if (f->last_flush >= 0 && now - f->last_flush < f->cfg.buffer_interval)
        from = f->last_flush;
    f->buf_first = from;
    f->buf_timer = sim_at(f->sim, from + f->cfg.buffer_interval, interval_due, f);
}

/* Add a slice that arrived now, closing objects at the size hint. */
static void buffer_add(kds_firehose *f, kds_slice sl, sim_time now)
{
    const uint64_t size = f->cfg.buffer_size;
    while (sl.count > 0) {
        if (f->buf.n == 0)
            buffer_open(f, now);
        uint64_t room = size - f->buf.bytes; /* > 0: a full buffer is flushed at once */
        if (sl.bytes < room) {
            slices_push(&f->buf, &sl);
            return;
        }
        /* The fewest records that fill the buffer. */
        __extension__ typedef unsigned __int128 u128;
        uint64_t k = sl.bytes ? (uint64_t)(((u128)room * sl.count + sl.bytes - 1) / sl.bytes) : 1;
        if (k < 1)
            k = 1;
        if (k > sl.count)
            k = sl.count;
        while (k > 1 && kds_prorate(sl.bytes, k - 1, sl.count) >= room)
            k--;
        while (k < sl.count && kds_prorate(sl.bytes, k, sl.count) < room)
            k++;
        if (k == sl.count) {
            slices_push(&f->buf, &sl);
            flush(f, true);
            return;
        }
        kds_slice head, tail;
        kds_slice_split(&sl, (uint32_t)k, &head, &tail);
        slices_push(&f->buf, &head);
        flush(f, true);
        sl = tail;
    }
}

/* Add the slices of a reply that arrived now, in order, exactly as buffer_add() slice
 * by slice would; but the slices that stay below the size hint (most of a reply, or
 * all of it) join the buffer in one copy. Slices are never empty (kds_log_take()). */
static void buffer_add_all(kds_firehose *f, const slices *b, sim_time now)
{
    const uint64_t size = f->cfg.buffer_size;
    uint64_t records = b->records, bytes = b->bytes; /* of b->v[i..n) */
    size_t i = 0;
    while (i < b->n) {
        uint64_t room = size - f->buf.bytes;
        size_t j = b->n;
        uint64_t pr = records, pb = bytes; /* of the prefix b->v[i..j) that fits */
        if (bytes >= room) {
            /* Some slice reaches the hint: the prefix ends before it. */
            j = i;
            pr = pb = 0;
            while (pb + b->v[j].bytes < room) {
                pr += b->v[j].count;
                pb += b->v[j].bytes;
                j++;
            }
        }
        if (j > i) {
            if (f->buf.n == 0)
                buffer_open(f, now);
            slices_append(&f->buf, b->v + i, j - i, pr, pb);
            records -= pr;
            bytes -= pb;
        }
        if (j == b->n)
            return;
        records -= b->v[j].count;
        bytes -= b->v[j].bytes;
        buffer_add(f, b->v[j], now);
        i = j + 1;
    }
}

/* ---- reading ------------------------------------------------------------------------ */

/* The slices of every call in one copy (the batch's totals are the take's). */
static void collect(void *ctx, const kds_slice *v, size_t n)
{
    slices *b = &((reader *)ctx)->batch;
    slices_reserve(b, b->n + n);
    memcpy(b->v + b->n, v, n * sizeof *v);
    b->n += n;
}

static void arrive(sim *s, void *ctx);

static void poll(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_firehose *f = rd->f;
    kds_consumer_stats *cs = &f->base.st;
    sim_time now = sim_now(s);
    const kds_firehose_cfg *c = &f->cfg;

    rd->call_at = now;
    cs->getrecords_calls++;
    if (rd->backup)
        f->fs.backup_calls++;
    sim_time lat = sim_dist_sample_ns(&c->call_latency_ms, f->rng);
    if (!kds_stream_read_admit(f->st, rd->sh)) {
        cs->read_throttled_calls++;
        if (KDS_TRACING(f->st->trace, "get", c->name, rd->sh->index)) {
            char why[160];
            kds_trace_emit(f->st->trace, now, "get", c->name, rd->sh->index,
                           "GetRecords%s: throttled (ReadProvisionedThroughputExceeded: %s), "
                           "next try in %.0f ms",
                           rd->backup ? " (backup)" : "",
                           kds_trace_read_limit(why, sizeof why, f->st, rd->sh),
                           sim_to_ms(lat > c->poll_period ? lat : c->poll_period));
        }
        sim_at(s, now + (lat > c->poll_period ? lat : c->poll_period), poll, rd);
        return;
    }
    kds_stream_trim(f->st, rd->sh);
    rd->batch.n = 0;
    rd->batch.records = rd->batch.bytes = 0;
    kds_take tk;
    kds_log_take_v(&rd->sh->log, &rd->cur, c->max_records, f->st->cfg.max_bytes_per_call,
                   rd->backup ? NULL : collect, rd, &tk);
    if (!rd->backup) {
        rd->batch.records = tk.records;
        rd->batch.bytes = tk.bytes;
    }
    kds_stream_read_charge(f->st, rd->sh, tk.records, tk.bytes);
    cs->bytes_read_shared += tk.bytes;
    kds_stream_meter_over_7d(f->st, &rd->sh->log, rd->cur.pos, &tk, &cs->bytes_read_over_7d);
    if (tk.records == 0)
        cs->empty_calls++;
    bool caught_up = rd->cur.pos >= rd->sh->log.end_pos;
    rd->at_end = caught_up && rd->sh->state != KDS_SHARD_OPEN;
    if (KDS_TRACING(f->st->trace, "get", c->name, rd->sh->index)) {
        /* As every reader's: the records' sequence numbers (they end at the cursor), the
         * iterator age and, for the delivery reader, the records expired before them. */
        char ex[64], seq[KDS_SEQNOS_LEN];
        kds_trace_emit(f->st->trace, now, "get", c->name, rd->sh->index,
                       "GetRecords%s: %" PRIu64 " record%s, %" PRIu64 " B%s, iterator age %.0f "
                       "ms, %s at +%.0f ms%s",
                       rd->backup ? " (backup)" : "", tk.records, kds_trace_s(tk.records), tk.bytes,
                       kds_trace_expired(ex, sizeof ex, rd->backup ? 0 : tk.expired),
                       caught_up || tk.records == 0 ? 0.0 : sim_to_ms(now - tk.t_last),
                       rd->backup ? "to the backup bucket" : "into the buffer", sim_to_ms(lat),
                       kds_trace_seqnos(seq, sizeof seq, rd->sh->index, rd->cur.pos - tk.records,
                                        tk.records));
    }
    if (rd->backup) {
        /* The backup copy goes to the backup bucket; only its reads matter here. */
        f->fs.backup_bytes += tk.bytes;
        if (rd->at_end)
            rd->done = true;
        else
            sim_at(s, now + (lat > c->poll_period ? lat : c->poll_period), poll, rd);
        return;
    }
    cs->records_expired_unread += tk.expired;
    double age = caught_up || tk.records == 0 ? 0.0 : sim_to_ms(now - tk.t_last);
    kds_consumer_stats_age(cs, now, age);
    sim_at(s, now + lat, arrive, rd);
}

/* The reply of a delivery reader's call arrived: its records join the buffer. */
static void arrive(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_firehose *f = rd->f;
    sim_time now = sim_now(s);
    buffer_add_all(f, &rd->batch, now);
    rd->batch.n = 0;
    rd->batch.records = rd->batch.bytes = 0;
    if (rd->at_end) {
        rd->done = true; /* SHARD_END */
        return;
    }
    sim_time next = rd->call_at + f->cfg.poll_period;
    sim_at(s, next > now ? next : now, poll, rd);
}

static reader *add_reader(kds_firehose *f, kds_shard *sh, bool backup, sim_time first)
{
    reader *rd = calloc(1, sizeof *rd);
    SIM_ASSERT(rd != NULL);
    rd->f = f;
    rd->sh = sh;
    rd->backup = backup;
    if (f->n_readers == f->cap_readers) {
        f->cap_readers = f->cap_readers ? f->cap_readers * 2 : 8;
        f->readers = realloc(f->readers, f->cap_readers * sizeof *f->readers);
        SIM_ASSERT(f->readers != NULL);
    }
    f->readers[f->n_readers++] = rd;
    SIM_ASSERT(kds_log_attach(&sh->log, &rd->cur) == 0);
    sim_at(f->sim, first, poll, rd);
    return rd;
}

/* Position a shard's readers (delivery, and backup with full backup) and start their
 * loops: the delivery call at a random phase within one period, the backup call half
 * a period later. */
static void start_shard(kds_firehose *f, kds_shard *sh, kds_start_kind start)
{
    const kds_firehose_cfg *c = &f->cfg;
    sim_time now = sim_now(f->sim);
    sim_time first = now + (sim_time)(gsl_rng_uniform(f->rng) * (double)c->poll_period);
    int n = c->full_backup ? 2 : 1;
    kds_stream_trim(f->st, sh);
    for (int b = 0; b < n; b++) {
        reader *rd = add_reader(f, sh, b == 1, first + (b == 1 ? c->poll_period / 2 : 0));
        const kds_log *l = &sh->log;
        switch (start) {
        case KDS_START_TRIM_HORIZON:
            kds_log_seek_head(l, &rd->cur);
            break;
        case KDS_START_LATEST:
            kds_log_seek_end(l, &rd->cur);
            break;
        case KDS_START_AT_TIMESTAMP:
            kds_log_seek_time(l, &rd->cur, c->start_time);
            break;
        case KDS_START_AT_SEQUENCE_NUMBER:
            kds_log_seek_pos(l, &rd->cur, c->start_pos);
            break;
        case KDS_START_AFTER_SEQUENCE_NUMBER:
            kds_log_seek_pos(l, &rd->cur, c->start_pos + 1);
            break;
        }
        rd->start_pos = rd->cur.pos;
    }
}

static void begin(sim *s, void *ctx)
{
    (void)s;
    kds_firehose *f = ctx;
    f->started = true;
    for (size_t i = 0; i < f->st->n_shards; i++) {
        kds_shard *sh = f->st->shards[i];
        if (sh->state != KDS_SHARD_EXPIRED)
            start_shard(f, sh, f->cfg.start);
        else /* never listed: stored before the start, skipped at it */
            f->unlisted += sh->log.end_pos;
    }
    kds_waits_fini(&f->waits, f->st); /* every shard now has its readers */
}

static void on_new_shard(void *ctx, kds_shard *sh)
{
    kds_firehose *f = ctx;
    /* Shards that exist when the stream starts are found by begin(); a child created
     * later is read from its start whatever the start position. */
    if (f->started)
        start_shard(f, sh, KDS_START_TRIM_HORIZON);
    else if (f->cfg.start != KDS_START_LATEST && kds_waits_wanted(f->st, f->cfg.begin))
        kds_waits_hold(&f->waits, sh); /* begin() reads it from the start position */
}

/* ---- the consumer interface ------------------------------------------------------------ */

static void finish(kds_consumer *base, sim_time end)
{
    kds_firehose *f = (kds_firehose *)base;
    kds_consumer_stats *cs = &f->base.st;
    cs->records_unread = 0;
    cs->records_skipped_at_start = f->unlisted;
    f->fs.records_buffered = 0;
    f->fs.records_in_objects = 0;
    for (size_t i = 0; i < f->n_readers; i++) {
        reader *rd = f->readers[i];
        if (rd->backup)
            continue;
        const kds_log *l = &rd->sh->log;
        if (rd->cur.pos < l->head_pos) {
            cs->records_expired_unread += l->head_pos - rd->cur.pos;
            rd->cur.pos = l->head_pos;
        }
        /* Read but not yet in the buffer: the reply of the call in flight. */
        cs->records_unread += kds_log_unread(l, &rd->cur) + rd->batch.records;
        cs->records_skipped_at_start += rd->start_pos;
        f->fs.records_buffered += rd->batch.records;
    }
    if (!f->started)
        kds_consumer_not_begun(cs, f->st); /* readers are made at the start */
    f->fs.records_buffered += f->buf.records;
    cs->records_unread += f->buf.records;
    for (object *o = f->live; o; o = o->next) {
        f->fs.records_in_objects += o->recs.records;
        cs->records_unread += o->recs.records;
        /* Refused retries skipped over that were due by the end were made. */
        if (o->refused > 0 && end >= o->refused_from) {
            sim_time iv = f->cfg.retry_interval;
            uint64_t made = (uint64_t)((end - o->refused_from) / iv);
            if (made > o->refused)
                made = o->refused;
            f->fs.delivery_retries += made;
            f->fs.delivery_failures += made;
            o->refused -= made;
            o->refused_from += (sim_time)made * iv;
        }
    }
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
}

static void figures(const kds_consumer *base, kds_figure_fn fn, void *arg)
{
    const kds_firehose *f = (const kds_firehose *)base;
    const kds_firehose_stats *fs = &f->fs;
    double n = (double)fs->objects_written;
    fn(arg, "objects_written", n);
    fn(arg, "objects_by_size", (double)fs->objects_by_size);
    fn(arg, "objects_by_interval", (double)fs->objects_by_interval);
    fn(arg, "object_bytes_mean", n > 0 ? (double)fs->object_bytes_total / n : 0.0);
    fn(arg, "object_bytes_min", (double)fs->object_bytes_min);
    fn(arg, "object_bytes_max", (double)fs->object_bytes_max);
    fn(arg, "delivery_delay_ms_mean", n > 0 ? fs->delivery_delay_ms_sum / n : 0.0);
    fn(arg, "delivery_delay_ms_max", fs->delivery_delay_ms_max);
    fn(arg, "delivery_failures", (double)fs->delivery_failures);
    fn(arg, "delivery_retries", (double)fs->delivery_retries);
    fn(arg, "objects_given_up", (double)fs->objects_given_up);
    fn(arg, "records_lost_after_retries", (double)fs->records_lost_after_retries);
    fn(arg, "user_records_delivered", fs->user_records_delivered);
    fn(arg, "backup_calls", (double)fs->backup_calls);
    fn(arg, "backup_bytes_read", (double)fs->backup_bytes);
    fn(arg, "records_buffered", (double)fs->records_buffered);
    fn(arg, "records_in_objects", (double)fs->records_in_objects);
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const kds_firehose *f = (const kds_firehose *)base;
    char v[128];
    fn(arg, "call_latency", kds_dist_text(v, sizeof v, &f->cfg.call_latency_ms, "ms"),
       "GetRecords round trip of Firehose's reads; AWS publishes no figure");
    fn(arg, "put_latency", kds_dist_text(v, sizeof v, &f->cfg.put_ms, "ms"),
       "time to write one S3 object; AWS publishes no figure");
    sim_fmt_duration(v, sizeof v, f->cfg.retry_interval);
    fn(arg, "delivery.retry_interval", v,
       "time between attempts to write a failed S3 object; AWS publishes no figure");
    if (f->cfg.outage_for > 0)
        fn(arg, "delivery.outage.refusal", "at once, taking no time",
           "how long the destination takes to refuse a PutObject made during the outage "
           "(one in flight when it begins fails when it completes); AWS publishes no "
           "figure");
    fn(arg, "buffering.interval_clock",
       "from the last object while records flow, else from the first record",
       "AWS does not say when the buffer interval starts counting");
    fn(arg, "poll_phase", "uniform within one second per shard",
       "when in the second Firehose calls GetRecords on each shard; AWS publishes no "
       "figure");
    if (f->cfg.full_backup) {
        char p[32];
        sim_fmt_duration(p, sizeof p, f->cfg.poll_period / 2);
        snprintf(v, sizeof v, "%s after the delivery read", p);
        fn(arg, "full_backup.phase", v,
           "when the source-record backup's GetRecords call on each shard comes, half a "
           "poll period after the delivery's; AWS publishes no figure");
    }
}

static void free_firehose(kds_consumer *base)
{
    kds_firehose *f = (kds_firehose *)base;
    if (!f)
        return;
    if (f->st)
        kds_waits_fini(&f->waits, f->st);
    for (size_t i = 0; i < f->n_readers; i++) {
        kds_log_detach(&f->readers[i]->sh->log, &f->readers[i]->cur);
        free(f->readers[i]->batch.v);
        free(f->readers[i]);
    }
    free(f->readers);
    while (f->live)
        object_free(f->live);
    free(f->buf.v);
    free(f->spare.v);
    free(f->spare_obj);
    kds_consumer_stats_fini(&f->base.st);
    free(f);
}

static const kds_consumer_ops FIREHOSE_OPS = {
    .kind = "firehose",
    .finish = finish,
    .figures = figures,
    .assumptions = assumptions,
    .free = free_firehose,
};

kds_consumer *kds_firehose_make(sim *s, kds_stream *st, const void *cfgp)
{
    const kds_firehose_cfg *cfg = cfgp;
    SIM_ASSERT(cfg->buffer_size > 0 && cfg->poll_period > 0 && cfg->aggregation >= 1.0);
    kds_firehose *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->cfg = *cfg;
    f->cfg.max_records = kds_stream_call_records(st, cfg->max_records);
    f->sim = s;
    f->st = st;
    f->last_flush = -1;
    if (kds_consumer_init(&f->base, &FIREHOSE_OPS, cfg->name, s, st, on_new_shard, f, &f->rng) !=
        0) {
        free_firehose(&f->base);
        return NULL;
    }
    /* A stream read from before its start (not LATEST) is held at its heads until then,
     * when the delivery stream begins before the end of the run. */
    kds_waits_hold_until(&f->waits, st, cfg->begin, cfg->start != KDS_START_LATEST);
    sim_at(s, cfg->begin > sim_now(s) ? cfg->begin : sim_now(s), begin, f);
    return &f->base;
}

const kds_firehose_stats *kds_firehose_stats_get(const kds_consumer *c)
{
    SIM_ASSERT(c->ops == &FIREHOSE_OPS);
    return &((const kds_firehose *)c)->fs;
}
