/* kds_lambda.c - the AWS Lambda event source mapping of kds_lambda.h: per shard, a
 * reader (GetRecords polls or an EFO subscription) filling a buffer, batches formed
 * from it and invoked, and the failure handling that holds the shard. */
#include "kds_lambda.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_slice.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_mem.h"

typedef struct kds_lambda kds_lambda;
typedef struct reader reader;

/* When the slices of one GetRecords reply or EFO push reach the mapping: those numbered
 * below `end` (slices are numbered in the order they enter the buffer, from 0) and
 * after the previous push's. One per push rather than a time per slice, so that a
 * reply goes into the buffer in one copy and the walk over it tests no time. */
typedef struct push_mark {
    uint64_t end;
    sim_time avail;
} push_mark;

/* A batch of consecutive records of one shard. Batches are recycled through the
 * mapping's pool; every batch ever allocated is also in `all` for freeing. */
typedef struct batch {
    struct batch *next;  /* in the shard's retry queue, or in the pool */
    reader *rd;          /* the shard it came from */
    kds_slice *sl;       /* owned, in position order */
    size_t n, cap;
    uint64_t count;      /* records */
    uint64_t bytes;      /* their bytes */
    uint64_t dups;       /* of which duplicates */
    uint64_t marks;      /* of which marked (poison) records */
    uint64_t first_marked; /* position of the first marked record (when marks > 0) */
    uint32_t attempts;   /* retry attempts consumed (MaximumRetryAttempts) */
    bool handed;         /* handed to the function before: handing again is a duplicate */
    bool retry_attempt;  /* its next invocation consumes a retry (counted then) */
    bool is_retry;       /* the running invocation holds the shard's retry slot */
    bool fails;          /* the running invocation will fail */
    bool timed_out;      /* ... because it ran into the function timeout */
    uint64_t fail_pos;   /* first failed record (ReportBatchItemFailures) */
    sim_time invoked;    /* when the running invocation started (for the trace) */
} batch;

struct reader {
    kds_lambda *m;
    kds_shard *sh;           /* borrowed */
    bool started;            /* positioned and reading */
    bool read_done;          /* SHARD_END read on a closed shard */
    bool done;               /* read_done and everything settled: children may start */
    kds_cursor cur;          /* polling: next record to read */
    bool attached;           /* cur is attached to the shard's log */
    kds_efo_sub *sub;        /* owned: EFO retrieval */
    sim_time issued;         /* polling: when the shard iterator was issued */
    sim_time reply_at;       /* polling: when the current call's reply arrives */
    uint64_t start_pos;      /* first position to read (records before: skipped) */
    uint64_t begin_pos;      /* log end when CreateEventSourceMapping was called */
    /* Records read and not yet in a batch: slices buf[b_head, b_head + b_n) of an array
     * of b_cap, the first numbered b_first; when they reach the mapping: a ring of
     * m_cap (a power of two) marks, one per push with slices in the buffer, in push
     * order. */
    kds_slice *buf;
    size_t b_head, b_n, b_cap;
    uint64_t buf_count;
    uint64_t b_first;
    uint64_t b_ready;        /* slices numbered below it have reached the mapping */
    push_mark *marks;
    size_t m_head, m_n, m_cap;
    /* Timers. */
    bool poll_pending;       /* a poll or its reply is scheduled */
    sim_time last_poll;
    bool window_pending;     /* a batching-window timer is scheduled */
    bool throttle_pending;   /* a throttled fresh invocation will try again */
    /* Batches. */
    uint32_t inflight;       /* fresh batches being run (up to the parallelization) */
    batch *failq;            /* failed batches waiting for a retry, in position order */
    bool retry_inflight;     /* a retry is running */
    bool retry_pending;      /* a retry timer is scheduled */
    uint32_t streak;         /* consecutive failures (the retry backoff) */
    sim_time blocked_since;  /* when failed batches began to hold the shard, or -1 */
    bool ever_blocked;
    uint64_t expired;        /* records found expired before being handed */
    kds_lambda_shard_stats st;
};

struct kds_lambda {
    kds_consumer base;       /* first: the run sees a kds_consumer */
    kds_lambda_cfg cfg;
    sim *sim;                /* borrowed */
    kds_stream *st;          /* borrowed */
    gsl_rng *rng;            /* sim-owned */
    reader **readers;        /* owned, in the order shards were met */
    size_t n_readers, cap_readers;
    reader **by_shard;       /* owned array, readers borrowed: the reader of shard i, or
                                NULL (a shard that had expired when the mapping was made) */
    size_t n_by_shard;
    kds_waits waits;         /* shards held at their heads until their readers start */
    bool enabled;            /* the mapping has been created and reads */
    sim_time enabled_at;
    uint32_t inflight;       /* invocations running across the mapping */
    batch *pool;             /* free batches */
    batch **all;             /* owned: every batch allocated */
    size_t n_all, cap_all;
    kds_consumer_stats efo_st; /* EFO retrieval: what the subscriptions record (MillisBehindLatest,
                                  EFO bytes, records expired before a push) */
    kds_lambda_stats ls;
};

void kds_lambda_cfg_defaults(kds_lambda_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "lambda";
    cfg->retrieval = KDS_LAMBDA_POLLING;
    kds_efo_cfg_defaults(&cfg->efo);
    cfg->poll_interval = SIM_S(1);
    cfg->call_latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 40.0, 0.4, 1.0, 10000.0};
    cfg->batch_size = 100;
    cfg->batching_window = 0;
    cfg->record_overhead = 500;
    cfg->parallelization = 1;
    cfg->start = KDS_START_TRIM_HORIZON;
    cfg->begin = 0;
    cfg->creation_delay = 0;
    cfg->duration_ms = (sim_dist){SIM_DIST_LOGNORMAL, 50.0, 0.5, 1.0, 900000.0};
    cfg->duration_ms_per_record = 0;
    cfg->timeout = SIM_S(3);
    cfg->error_rate = 0;
    cfg->concurrency = 1000;
    cfg->throttle_retry = SIM_S(1);
    cfg->max_retry_attempts = -1;
    cfg->max_record_age = -1;
    cfg->on_failure = KDS_LAMBDA_DEST_NONE;
    cfg->retry_delay = SIM_S(1);
    cfg->retry_delay_max = SIM_S(30);
}


static bool failing(const reader *rd)
{
    return rd->failq != NULL || rd->retry_inflight;
}

/* ---- slices and the payload limit ------------------------------------------------ */

/* Event payload of one record of `bytes`: its data in base64 plus the event's JSON
 * around it (record_overhead). */
static uint64_t payload_of(const kds_lambda *m, uint64_t bytes)
{
    return (bytes * 4 + 2) / 3 + m->cfg.record_overhead;
}

/* The same for one record of slice s (of its average size, rounded up). */
static uint64_t record_payload(const kds_lambda *m, const kds_slice *s)
{
    return payload_of(m, s->count ? (s->bytes + s->count - 1) / s->count : 0);
}

/* ---- batches ---------------------------------------------------------------------- */

/* A batch for the pool when it is empty (out of line: a run makes a few). */
static __attribute__((noinline)) batch *batch_new(kds_lambda *m)
{
    batch *b = calloc(1, sizeof *b);
    SIM_ASSERT(b != NULL);
    if (m->n_all == m->cap_all) {
        m->cap_all = m->cap_all ? m->cap_all * 2 : 16;
        m->all = realloc(m->all, m->cap_all * sizeof *m->all);
        SIM_ASSERT(m->all != NULL);
    }
    m->all[m->n_all++] = b;
    return b;
}

static inline batch *batch_get(kds_lambda *m, reader *rd)
{
    batch *b = m->pool;
    if (b)
        m->pool = b->next;
    else
        b = batch_new(m);
    /* Empty and never handed; the rest is set by whatever fills or invokes it. */
    b->rd = rd;
    b->n = 0;
    b->count = b->bytes = b->dups = b->marks = 0;
    b->attempts = 0;
    b->handed = b->retry_attempt = false;
    return b;
}

static void batch_put(kds_lambda *m, batch *b)
{
    b->next = m->pool;
    m->pool = b;
}

/* Room for `more` slices beyond b's. */
static void batch_reserve(batch *b, size_t more)
{
    if (b->cap - b->n >= more)
        return;
    size_t cap = b->cap ? b->cap : 4;
    while (cap - b->n < more)
        cap *= 2;
    b->sl = realloc(b->sl, cap * sizeof *b->sl);
    SIM_ASSERT(b->sl != NULL);
    b->cap = cap;
}

static void batch_add(batch *b, const kds_slice *s)
{
    if (b->n == b->cap)
        batch_reserve(b, 1);
    b->sl[b->n++] = *s;
    b->count += s->count;
    b->bytes += s->bytes;
    b->dups += s->dups;
    if (s->marks && b->marks == 0)
        b->first_marked = s->first;
    b->marks += s->marks;
}

/* Keep the first k records (0 < k < count) in b; return a new batch with the rest,
 * which inherits b's history (handed, attempts). */
static batch *batch_split(kds_lambda *m, batch *b, uint64_t k)
{
    SIM_ASSERT(k > 0 && k < b->count);
    batch *t = batch_get(m, b->rd);
    t->handed = b->handed;
    t->attempts = b->attempts;
    t->retry_attempt = b->retry_attempt;
    size_t n = b->n;
    b->n = 0;
    b->count = 0;
    b->bytes = 0;
    b->dups = 0;
    b->marks = 0;
    for (size_t i = 0; i < n; i++) {
        kds_slice s = b->sl[i];
        if (b->count >= k) {
            batch_add(t, &s);
        } else if (b->count + s.count <= k) {
            batch_add(b, &s);
        } else {
            kds_slice x, y;
            kds_slice_split(&s, (uint32_t)(k - b->count), &x, &y);
            batch_add(b, &x);
            batch_add(t, &y);
        }
    }
    return t;
}

/* Insert b into rd's retry queue, kept in position order. */
static void failq_insert(reader *rd, batch *b)
{
    batch **pp = &rd->failq;
    while (*pp && (*pp)->sl[0].first < b->sl[0].first)
        pp = &(*pp)->next;
    b->next = *pp;
    *pp = b;
}

/* ---- the buffer of records read ---------------------------------------------------- */

static kds_slice *buf_at(const reader *rd, size_t i)
{
    return &rd->buf[rd->b_head + i];
}

/* Room for n more slices at the end of the buffer: its slices moved to the front of
 * the array, which grows when that is not enough. Out of line: the buffer is empty at
 * most pushes (its slices start at the front then). */
static __attribute__((noinline)) void buf_room(reader *rd, size_t n)
{
    if (rd->b_n > 0) /* (the array is NULL before the first push) */
        memmove(rd->buf, rd->buf + rd->b_head, rd->b_n * sizeof *rd->buf);
    rd->b_head = 0;
    if (rd->b_cap - rd->b_n >= n)
        return;
    size_t cap = rd->b_cap ? rd->b_cap * 2 : 16;
    while (cap - rd->b_n < n)
        cap *= 2;
    rd->buf = realloc(rd->buf, cap * sizeof *rd->buf);
    SIM_ASSERT(rd->buf != NULL);
    rd->b_cap = cap;
}

static __attribute__((noinline)) void marks_grow(reader *rd)
{
    size_t cap = rd->m_cap ? rd->m_cap * 2 : 8;
    push_mark *nm = malloc(cap * sizeof *nm);
    SIM_ASSERT(nm != NULL);
    for (size_t i = 0; i < rd->m_n; i++)
        nm[i] = rd->marks[(rd->m_head + i) & (rd->m_cap - 1)];
    free(rd->marks);
    rd->marks = nm;
    rd->m_cap = cap;
    rd->m_head = 0;
}

/* Append slices v[0..n) (n >= 1) holding `records` records, which reach the mapping at
 * `avail`: the slices of one GetRecords reply or EFO push, in one copy. */
static void buf_push(reader *rd, const kds_slice *v, size_t n, uint64_t records,
                     sim_time avail)
{
    if (rd->b_cap - rd->b_head - rd->b_n < n)
        buf_room(rd, n);
    memcpy(rd->buf + rd->b_head + rd->b_n, v, n * sizeof *v);
    rd->b_n += n;
    rd->buf_count += records;
    uint64_t end = rd->b_first + rd->b_n;
    /* A reply handed over in several arrays: one push, one mark. */
    if (rd->m_n > 0) {
        push_mark *last = &rd->marks[(rd->m_head + rd->m_n - 1) & (rd->m_cap - 1)];
        if (last->avail == avail) {
            last->end = end;
            return;
        }
    }
    if (rd->m_n == rd->m_cap)
        marks_grow(rd);
    rd->marks[(rd->m_head + rd->m_n++) & (rd->m_cap - 1)] = (push_mark){end, avail};
}

/* Drop the marks of pushes whose slices have all left the buffer. */
static void marks_trim(reader *rd)
{
    while (rd->m_n > 0 && rd->marks[rd->m_head].end <= rd->b_first) {
        rd->m_head = (rd->m_head + 1) & (rd->m_cap - 1);
        rd->m_n--;
    }
}

/* When the slice at the front of the buffer (b_n > 0) reaches the mapping. */
static sim_time buf_front_avail(reader *rd)
{
    marks_trim(rd);
    return rd->marks[rd->m_head].avail;
}

/* b_ready as of `now`: the end of the last push, in push order, that has reached the
 * mapping with every push before it. */
static __attribute__((noinline)) void buf_ready_look(reader *rd, sim_time now)
{
    marks_trim(rd);
    for (size_t i = 0; i < rd->m_n; i++) {
        const push_mark *k = &rd->marks[(rd->m_head + i) & (rd->m_cap - 1)];
        if (k->avail > now)
            break;
        rd->b_ready = k->end;
    }
}

/* How many slices at the front of the buffer have reached the mapping at `now`: up to
 * the first push that has not. Once a whole buffer has, no mark is looked at again
 * until the next push. */
static inline size_t buf_ready(reader *rd, sim_time now)
{
    if (rd->b_ready < rd->b_first + rd->b_n)
        buf_ready_look(rd, now);
    return rd->b_ready > rd->b_first ? (size_t)(rd->b_ready - rd->b_first) : 0;
}

/* The first k slices leave the buffer; an empty one starts again at the front of its
 * array, so that the next push needs no move. */
static void buf_drop(reader *rd, size_t k)
{
    rd->b_n -= k;
    rd->b_head = rd->b_n ? rd->b_head + k : 0;
    rd->b_first += k;
}

static void buf_pop(reader *rd)
{
    rd->buf_count -= buf_at(rd, 0)->count;
    buf_drop(rd, 1);
}

/* Take from the buffer what the walk into b found (walk below): its whole slices,
 * already copied to b, then `part` records of the next (none when 0). */
static void batch_take(batch *b, reader *rd, uint64_t part)
{
    buf_drop(rd, b->n);
    rd->buf_count -= b->count;
    if (part > 0) {
        /* Its first `part` records go to b, into the room the walk left for them. */
        SIM_ASSERT(b->n < b->cap);
        kds_slice *f = buf_at(rd, 0), *x = &b->sl[b->n++];
        kds_slice_split(f, (uint32_t)part, x, f);
        b->count += x->count;
        b->bytes += x->bytes;
        b->dups += x->dups;
        if (x->marks && b->marks == 0)
            b->first_marked = x->first;
        b->marks += x->marks;
        rd->buf_count -= part;
    }
}

/* A trace line of kind "invoke" about rd's shard, printf-formatted (KDS_TRACE: one test
 * when the trace is off, on paths every invocation takes). */
#define TRACE_INVOKE(m, rd, ...)                                                             \
    KDS_TRACE((m)->st->trace, sim_now((m)->sim), "invoke", (m)->base.name, (rd)->sh->index,  \
              __VA_ARGS__)

/* The invoke line of an invocation refused because the function already runs as many
 * invocations as its concurrency allows: the batch of `count` records (a retry when
 * `retry`) tries again after throttle_retry. Out of line: tracing only. */
static __attribute__((noinline)) void trace_throttled(kds_lambda *m, const reader *rd,
                                                      uint64_t count, bool retry)
{
    char dur[32];
    kds_trace_emit(m->st->trace, sim_now(m->sim), "invoke", m->base.name, rd->sh->index,
                   "Invoke: throttled (TooManyRequestsException: the function already runs "
                   "%" PRIu32 " invocation%s, its concurrency limit); the %sbatch of %" PRIu64
                   " record%s tries again in %s",
                   m->inflight, kds_trace_s(m->inflight), retry ? "retry of the " : "", count,
                   kds_trace_s(count), kds_trace_dur(dur, sizeof dur, m->cfg.throttle_retry));
}

/* Records left in the buffer past the retention period are lost (the mapping held
 * them while the shard waited; the stream no longer has them). */
static void buf_drop_expired(reader *rd, sim_time now)
{
    sim_time cutoff = now - rd->m->st->cfg.retention;
    uint64_t lost = 0;
    while (rd->b_n > 0 && buf_at(rd, 0)->t_last <= cutoff) {
        lost += buf_at(rd, 0)->count;
        buf_pop(rd);
    }
    rd->expired += lost;
    if (lost > 0)
        TRACE_INVOKE(rd->m, rd, "%" PRIu64 " buffered record%s expired from the stream before "
                     "%s invoked: lost",
                     lost, kds_trace_s(lost), lost == 1 ? "it was" : "they were");
}

/* MaximumRecordAgeInSeconds: the buffered records older than the maximum age are
 * given up (to the destination or discarded) without being handed to the function. */
static void give_up(kds_lambda *m, reader *rd, batch *b, const char *why);

static void buf_drop_aged(reader *rd, sim_time now)
{
    kds_lambda *m = rd->m;
    if (m->cfg.max_record_age < 0)
        return;
    sim_time cutoff = now - m->cfg.max_record_age; /* older: written before cutoff */
    batch *b = NULL;
    for (size_t ready = buf_ready(rd, now); ready > 0 && buf_at(rd, 0)->t_first < cutoff;
         ready--) {
        kds_slice *f = buf_at(rd, 0);
        if (!b)
            b = batch_get(m, rd);
        if (f->t_last < cutoff) {
            batch_add(b, f);
            buf_pop(rd);
            continue;
        }
        /* Records of the slice older than the cutoff: the first k (binary search). */
        uint64_t lo = 1, hi = f->count - 1; /* record lo-1 is older; record hi is not */
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (kds_slice_time(f, mid) < cutoff)
                lo = mid + 1;
            else
                hi = mid;
        }
        kds_slice x, y;
        kds_slice_split(f, (uint32_t)lo, &x, &y);
        batch_add(b, &x);
        *f = y;
        rd->buf_count -= lo;
        break;
    }
    if (b)
        give_up(m, rd, b, "older than MaximumRecordAgeInSeconds, never invoked");
}

/* ---- counting ------------------------------------------------------------------------ */

/* The mapping hands b to the function (or gives it up without invoking) now. */
static void hand(kds_lambda *m, batch *b, sim_time now)
{
    kds_consumer_stats *cs = &m->base.st;
    if (b->handed) {
        cs->duplicates_delivered += b->count;
        return;
    }
    cs->records_delivered += b->count;
    cs->bytes_delivered += b->bytes;
    cs->duplicates_delivered += b->dups;
    sim_series_add_sum(&cs->delivered_min, now, (double)b->count);
    b->handed = true;
}

/* The function finished every record of b successfully at `done`. */
static void processed(kds_lambda *m, reader *rd, const batch *b, sim_time done)
{
    kds_consumer_stats_latencies(&m->base.st, b->sl, b->n, done);
    m->ls.records_processed += b->count;
    rd->st.records_processed += b->count;
}

/* The on-failure destination's name in the trace. */
static const char *dest_name(kds_lambda_dest d)
{
    switch (d) {
    case KDS_LAMBDA_DEST_SQS: return "SQS";
    case KDS_LAMBDA_DEST_SNS: return "SNS";
    case KDS_LAMBDA_DEST_S3: return "S3";
    default: return "none";
    }
}

/* The mapping is done with b without processing it: `why` (for the trace). */
static void give_up(kds_lambda *m, reader *rd, batch *b, const char *why)
{
    if (m->cfg.on_failure != KDS_LAMBDA_DEST_NONE)
        TRACE_INVOKE(m, rd, "given up (%s): %" PRIu64 " record%s sent to the on-failure "
                     "destination (%s)",
                     why, b->count, kds_trace_s(b->count), dest_name(m->cfg.on_failure));
    else
        TRACE_INVOKE(m, rd, "given up (%s): %" PRIu64 " record%s discarded (no on-failure "
                     "destination)", why, b->count, kds_trace_s(b->count));
    /* Counted as delivered: the mapping is done with these records. */
    if (!b->handed)
        hand(m, b, sim_now(m->sim));
    if (m->cfg.on_failure != KDS_LAMBDA_DEST_NONE) {
        m->ls.records_to_failure_destination += b->count;
        m->ls.failure_destination_messages++;
    } else {
        m->ls.records_discarded += b->count;
    }
    rd->st.records_given_up += b->count;
    batch_put(m, b);
}

/* Too old to be retried or handed: past MaximumRecordAgeInSeconds, or (with -1) its
 * oldest record has expired from the stream. */
static bool too_old(const kds_lambda *m, const batch *b)
{
    sim_time now = sim_now(m->sim);
    sim_time oldest = b->sl[0].t_first;
    if (m->cfg.max_record_age >= 0)
        return now - oldest > m->cfg.max_record_age;
    return oldest <= now - m->st->cfg.retention;
}

/* Why too_old(m, b) holds, for the trace. */
static const char *too_old_why(const kds_lambda *m)
{
    return m->cfg.max_record_age >= 0 ? "older than MaximumRecordAgeInSeconds"
                                      : "its oldest record expired from the stream";
}

/* ---- invocations ----------------------------------------------------------------- */

static void complete(sim *s, void *ctx);

/* Start b's invocation now. Inline in its two callers (dispatch's batch loop, and
 * try_retry for the retry queue): a call per batch, saving and restoring registers of
 * its own, costs more than the second copy. */
static inline __attribute__((always_inline)) void invoke(kds_lambda *m, reader *rd, batch *b,
                                                          bool is_retry)
{
    sim_time now = sim_now(m->sim);
    m->inflight++;
    if (is_retry)
        rd->retry_inflight = true;
    else
        rd->inflight++;
    b->is_retry = is_retry;
    m->ls.invocations++;
    rd->st.invocations++;
    bool uses_retry = b->retry_attempt;
    if (uses_retry) {
        m->ls.retries++;
        b->retry_attempt = false;
    }
    hand(m, b, now);
    if (b->count > m->ls.largest_batch)
        m->ls.largest_batch = b->count;
    /* Lambda's IteratorAge: the age of the batch's last record when it is invoked. */
    double age = sim_to_ms(now - b->sl[b->n - 1].t_last);
    kds_consumer_stats_age(&m->base.st, now, age);
    if (age > rd->st.iterator_age_ms_max)
        rd->st.iterator_age_ms_max = age;

    if (KDS_TRACING(m->st->trace, "invoke", m->base.name, rd->sh->index)) {
        /* From the shard's retry queue: a retry that counts against
         * MaximumRetryAttempts, or a part of a bisected batch, which does not. */
        char from_queue[32] = "";
        if (uses_retry)
            snprintf(from_queue, sizeof from_queue, " (retry %" PRIu32 ")", b->attempts);
        else if (is_retry)
            snprintf(from_queue, sizeof from_queue, " (again)");
        kds_trace_emit(m->st->trace, now, "invoke", m->base.name, rd->sh->index,
                       "Invoke: batch of %" PRIu64 " record%s%s, IteratorAge %.0f ms", b->count,
                       kds_trace_s(b->count), from_queue, age);
    }
    double ms = sim_dist_sample(&m->cfg.duration_ms, m->rng) +
                m->cfg.duration_ms_per_record * (double)b->count;
    double limit = sim_to_ms(m->cfg.timeout);
    b->timed_out = ms > limit;
    if (b->timed_out)
        ms = limit;
    b->fails = false;
    b->invoked = now;
    b->fail_pos = b->sl[0].first;
    if (b->marks > 0) {
        /* A poison record fails every batch that holds it; a function that reports
         * batch item failures names it. */
        b->fails = true;
        b->fail_pos = b->first_marked;
    } else if (m->cfg.error_rate > 0 && gsl_rng_uniform(m->rng) < m->cfg.error_rate) {
        b->fails = true;
    } else if (b->timed_out) {
        b->fails = true;
    }
    sim_after(m->sim, sim_ms_to_ns(ms), complete, b);
}

static void dispatch(reader *rd);
static void settle_now(reader *rd);

/* settle_now() for a reader that has read its shard to its end and is not done yet:
 * inline, as most calls find it still reading. */
static inline void settle(reader *rd)
{
    if (rd->read_done && !rd->done)
        settle_now(rd);
}
static void try_retry(reader *rd);

static void retry_event(sim *s, void *ctx)
{
    (void)s;
    reader *rd = ctx;
    rd->retry_pending = false;
    try_retry(rd);
}

static void schedule_retry(reader *rd, sim_time delay)
{
    if (rd->retry_pending || rd->retry_inflight)
        return;
    rd->retry_pending = true;
    sim_after(rd->m->sim, delay, retry_event, rd);
}

/* Backoff before the next retry after `streak` consecutive failures. */
static sim_time backoff(const kds_lambda *m, uint32_t streak)
{
    sim_time d = m->cfg.retry_delay;
    /* Doubling 0 stays 0: stop there, or a record failing without end (streak in the
     * hundreds of thousands) made every failure walk its whole streak. */
    for (uint32_t i = 1; i < streak && d > 0 && d < m->cfg.retry_delay_max; i++)
        d *= 2;
    return d < m->cfg.retry_delay_max ? d : m->cfg.retry_delay_max;
}

/* Failed batches no longer hold the shard. */
static void unblock(reader *rd)
{
    if (rd->blocked_since < 0)
        return;
    double held = sim_to_s(sim_now(rd->m->sim) - rd->blocked_since);
    if (held > rd->st.longest_block_s)
        rd->st.longest_block_s = held;
    rd->blocked_since = -1;
}

/* Run the next retry of rd's queue, giving up the batches that are too old. */
static void try_retry(reader *rd)
{
    kds_lambda *m = rd->m;
    while (rd->failq && !rd->retry_inflight) {
        batch *b = rd->failq;
        if (too_old(m, b)) {
            rd->failq = b->next;
            give_up(m, rd, b, too_old_why(m));
            continue;
        }
        if (m->inflight >= m->cfg.concurrency) {
            m->ls.throttled_invocations++;
            if (KDS_TRACING(m->st->trace, "invoke", m->base.name, rd->sh->index))
                trace_throttled(m, rd, b->count, true);
            schedule_retry(rd, m->cfg.throttle_retry);
            return;
        }
        rd->failq = b->next;
        invoke(m, rd, b, true);
        return;
    }
    if (!failing(rd)) {
        unblock(rd);
        dispatch(rd);
        settle(rd);
    }
}

/* Retry b later, or give it up when its retry attempts are spent. */
static void retry_or_give_up(kds_lambda *m, reader *rd, batch *b)
{
    if (m->cfg.max_retry_attempts >= 0 && b->attempts >= (uint32_t)m->cfg.max_retry_attempts) {
        give_up(m, rd, b, "MaximumRetryAttempts spent");
        return;
    }
    b->attempts++;
    b->retry_attempt = true;
    if (m->cfg.max_retry_attempts >= 0)
        TRACE_INVOKE(m, rd, "%" PRIu64 " record%s queued for retry %" PRIu32 " of %" PRId32,
                     b->count, kds_trace_s(b->count), b->attempts, m->cfg.max_retry_attempts);
    else
        TRACE_INVOKE(m, rd, "%" PRIu64 " record%s queued for retry %" PRIu32
                     " (retries until the records expire)", b->count, kds_trace_s(b->count),
                     b->attempts);
    failq_insert(rd, b);
}

/* The invocation of b failed: settle what was processed, then bisect, retry or give
 * up. */
static void failed(kds_lambda *m, reader *rd, batch *b)
{
    sim_time now = sim_now(m->sim);
    if (m->cfg.report_item_failures && b->fail_pos > b->sl[0].first) {
        /* The function processed the records before the first failed one. */
        batch *rest = batch_split(m, b, b->fail_pos - b->sl[0].first);
        TRACE_INVOKE(m, rd, "batch item failures: the first %" PRIu64 " record%s processed, "
                     "%" PRIu64 " from the first failed one left", b->count, kds_trace_s(b->count),
                     rest->count);
        processed(m, rd, b, now);
        batch_put(m, b);
        b = rest;
        if (too_old(m, b)) {
            give_up(m, rd, b, too_old_why(m));
        } else if (m->cfg.bisect_on_error) {
            /* "The batch is bisected at the returned sequence number": no retry used. */
            m->ls.batches_bisected++;
            TRACE_INVOKE(m, rd, "bisected at the failed record: %" PRIu64 " record%s queued "
                         "again (no retry used)", b->count, kds_trace_s(b->count));
            failq_insert(rd, b);
        } else {
            retry_or_give_up(m, rd, b);
        }
        return;
    }
    if (too_old(m, b)) {
        give_up(m, rd, b, too_old_why(m));
    } else if (m->cfg.bisect_on_error && b->count > 1) {
        batch *half = batch_split(m, b, b->count / 2);
        m->ls.batches_bisected++;
        TRACE_INVOKE(m, rd, "bisected into %" PRIu64 " and %" PRIu64 " records, queued again "
                     "(no retry used)", b->count, half->count);
        failq_insert(rd, b);
        failq_insert(rd, half);
    } else {
        retry_or_give_up(m, rd, b);
    }
}

static void complete(sim *s, void *ctx)
{
    batch *b = ctx;
    reader *rd = b->rd;
    kds_lambda *m = rd->m;
    sim_time now = sim_now(s);
    SIM_ASSERT(m->inflight > 0);
    m->inflight--;
    if (b->is_retry)
        rd->retry_inflight = false;
    else
        rd->inflight--;
    bool ok = !b->fails, was_retry = b->is_retry;
    TRACE_INVOKE(m, rd, "Invoke: batch of %" PRIu64 " record%s %s after %.0f ms", b->count,
                 kds_trace_s(b->count),
                 ok ? "succeeded" : b->timed_out ? "timed out" : "failed (function error)",
                 sim_to_ms(now - b->invoked));
    if (ok) {
        processed(m, rd, b, now);
        batch_put(m, b);
        if (was_retry || !failing(rd))
            rd->streak = 0;
    } else {
        m->ls.function_errors++;
        rd->st.function_errors++;
        if (b->timed_out)
            m->ls.timeouts++;
        rd->streak++;
        if (rd->blocked_since < 0) {
            rd->blocked_since = now;
            rd->ever_blocked = true;
        }
        failed(m, rd, b);
    }
    if (failing(rd)) {
        if (!ok)
            schedule_retry(rd, backoff(m, rd->streak));
        else if (was_retry)
            try_retry(rd); /* the retry went through: the next queued batch at once */
        return;
    }
    unblock(rd);
    dispatch(rd);
    settle(rd);
}

/* ---- reading and dispatching --------------------------------------------------------- */

static void poll_event(sim *s, void *ctx);
static void window_event(sim *s, void *ctx);
static void throttle_event(sim *s, void *ctx);

/* Keep reading while the shard is not held and the buffer has room for less than one
 * batch per lane; otherwise stop (no GetRecords; the EFO subscription paused). */
static __attribute__((noinline)) void maybe_read_now(reader *rd)
{
    kds_lambda *m = rd->m;
    if (!rd->started || rd->read_done)
        return;
    bool room = !failing(rd) &&
                rd->buf_count < (uint64_t)m->cfg.batch_size * m->cfg.parallelization;
    if (rd->sub) {
        if (!room && !rd->sub->paused)
            kds_efo_sub_pause(rd->sub);
        else if (room && rd->sub->paused)
            kds_efo_sub_resume(rd->sub);
        return;
    }
    if (room && !rd->poll_pending) {
        sim_time now = sim_now(m->sim);
        sim_time t = rd->last_poll + m->cfg.poll_interval;
        rd->poll_pending = true;
        sim_at(m->sim, t > now ? t : now, poll_event, rd);
    }
}

/* The same, with the common case inline: while a GetRecords call or its reply is
 * pending (polling only) there is nothing to do. */
static inline void maybe_read(reader *rd)
{
    if (!rd->poll_pending)
        maybe_read_now(rd);
}

/* What the next batch takes from the front of the buffer: the whole slices the walk
 * copied to the batch, then `part` records of the next (0 < part < its count) or
 * none. */
typedef struct walk {
    uint64_t part;
    uint64_t part_bytes; /* the bytes of that next slice (all of them), or 0 */
    bool full;           /* by count or payload */
} walk;

/* The walk by count alone, over the `ready` slices at the front of the buffer (those
 * that have reached the mapping), up to BatchSize records: nearly every batch. The
 * whole slices are found and tallied, then copied to b in one go (b's slices and
 * tallies are replaced): copying them in the loop keeps too much in flight and is
 * slower. The buffer is left as it is; batch_take takes them. */
static inline void batch_walk(batch *b, const reader *rd, size_t ready, walk *w)
{
    const uint64_t size = rd->m->cfg.batch_size;
    const kds_slice *v = rd->buf + rd->b_head;
    uint64_t n = 0, bytes = 0, dups = 0, marks = 0; /* n < size at the loop's head */
    size_t whole = 0;
    *w = (walk){0};
    while (whole < ready) {
        const kds_slice *s = &v[whole];
        if (s->count > size - n) {
            w->part = size - n;
            w->part_bytes = s->bytes;
            w->full = true;
            break;
        }
        n += s->count;
        bytes += s->bytes;
        dups += s->dups;
        marks += s->marks;
        whole++;
        if (n == size) {
            w->full = true;
            break;
        }
    }
    b->n = 0;
    batch_reserve(b, whole + 1); /* and the part of the next, if any */
    memcpy(b->sl, v, whole * sizeof *v);
    if (marks > 0) {
        size_t i = 0;
        while (v[i].marks == 0)
            i++;
        b->first_marked = v[i].first;
    }
    b->n = whole;
    b->count = n;
    b->bytes = bytes;
    b->dups = dups;
    b->marks = marks;
}

/* The same walk with the payload limit as well (batch_walk's batch may be over it). */
static void batch_walk_payload(batch *b, const reader *rd, size_t ready, walk *w)
{
    const kds_lambda *m = rd->m;
    const uint64_t limit = KDS_LAMBDA_PAYLOAD_LIMIT, size = m->cfg.batch_size;
    uint64_t n = 0, pay = 0, bytes = 0, dups = 0, marks = 0;
    size_t whole = 0;
    b->n = 0;
    /* Each slice holds a record at least, so the batch has at most this many. */
    batch_reserve(b, ready < size ? ready : size);
    *w = (walk){0};
    for (size_t i = 0; i < ready; i++) {
        const kds_slice *s = buf_at(rd, i);
        uint64_t k = s->count;
        if (k > size - n)
            k = size - n;
        uint64_t pp = record_payload(m, s);
        if (n > 0 && pay + pp > limit) {
            w->full = true;
            break;
        }
        uint64_t fit = pay < limit ? (limit - pay) / pp : 0;
        if (n == 0 && fit == 0)
            fit = 1; /* one record above the limit still goes alone */
        if (k > fit)
            k = fit;
        pay += k * pp;
        if (k < s->count) {
            w->part = k;
            w->part_bytes = s->bytes;
            w->full = true;
            break;
        }
        b->sl[whole++] = *s;
        n += k;
        bytes += s->bytes;
        dups += s->dups;
        if (s->marks && marks == 0)
            b->first_marked = s->first;
        marks += s->marks;
        if (n >= size) {
            w->full = true;
            break;
        }
    }
    b->n = whole;
    b->count = n;
    b->bytes = bytes;
    b->dups = dups;
    b->marks = marks;
}

/* Start as many batches as the shard's lanes, the buffer and the concurrency allow. */
static void dispatch(reader *rd)
{
    kds_lambda *m = rd->m;
    const kds_lambda_cfg *c = &m->cfg;
    sim_time now = sim_now(m->sim);
    if (rd->sub && rd->sub->done)
        rd->read_done = true;
    if (!rd->started || failing(rd) || rd->throttle_pending) {
        maybe_read(rd);
        return;
    }
    buf_drop_expired(rd, now);
    buf_drop_aged(rd, now);
    while (rd->inflight < c->parallelization) {
        /* Is a batch ready: full by count or payload, or its window over? */
        size_t ready = buf_ready(rd, now);
        if (ready == 0)
            break;
        batch *b = batch_get(m, rd);
        walk w;
        batch_walk(b, rd, ready, &w);
        /* Each record's payload is below 4/3 of its share of its slice's bytes plus
         * 2 + record_overhead, so when that bound on the whole walk is within the limit
         * the limit cuts nothing and the walk by count alone is the exact one. */
        if (4 * (b->bytes + w.part_bytes) +
                3 * (b->count + w.part) * (2 + (uint64_t)c->record_overhead) >
            3 * (uint64_t)KDS_LAMBDA_PAYLOAD_LIMIT)
            batch_walk_payload(b, rd, ready, &w);
        sim_time oldest;
        if (!w.full && c->batching_window > 0 &&
            now < (oldest = buf_front_avail(rd)) + c->batching_window && !rd->read_done) {
            batch_put(m, b);
            if (!rd->window_pending) {
                rd->window_pending = true;
                sim_at(m->sim, oldest + c->batching_window, window_event, rd);
            }
            break;
        }
        if (m->inflight >= c->concurrency) {
            if (KDS_TRACING(m->st->trace, "invoke", m->base.name, rd->sh->index))
                trace_throttled(m, rd, b->count, false);
            batch_put(m, b);
            m->ls.throttled_invocations++;
            rd->throttle_pending = true;
            sim_after(m->sim, c->throttle_retry, throttle_event, rd);
            break;
        }
        batch_take(b, rd, w.part);
        invoke(m, rd, b, false);
    }
    maybe_read(rd);
}

static void window_event(sim *s, void *ctx)
{
    (void)s;
    reader *rd = ctx;
    rd->window_pending = false;
    dispatch(rd);
    settle(rd);
}

static void throttle_event(sim *s, void *ctx)
{
    (void)s;
    reader *rd = ctx;
    rd->throttle_pending = false;
    dispatch(rd);
    settle(rd);
}

static void collect(void *ctx, const kds_slice *v, size_t n)
{
    reader *rd = ctx;
    buf_push(rd, v, n, 0, rd->reply_at); /* the records are counted once the take is done */
}

static void poll_reply(sim *s, void *ctx)
{
    (void)s;
    reader *rd = ctx;
    rd->poll_pending = false;
    dispatch(rd);
    settle(rd);
}

/* One GetRecords call through the shard's shared budget: up to 10,000 records and
 * 10 MiB, in the buffer when the reply arrives one round trip later. */
static void poll_event(sim *s, void *ctx)
{
    reader *rd = ctx;
    kds_lambda *m = rd->m;
    kds_consumer_stats *cs = &m->base.st;
    kds_stream *st = m->st;
    sim_time now = sim_now(s);
    rd->last_poll = now;
    sim_time lat = sim_dist_sample_ns(&m->cfg.call_latency_ms, m->rng);
    bool refreshed = now - rd->issued > st->cfg.iterator_ttl;
    if (refreshed) {
        /* ExpiredIteratorException (the shard was held for more than 5 minutes):
         * one more round trip for a new iterator. */
        cs->iterator_refreshes++;
        lat += sim_dist_sample_ns(&m->cfg.call_latency_ms, m->rng);
    }
    cs->getrecords_calls++;
    if (!kds_stream_read_admit(st, rd->sh)) {
        cs->read_throttled_calls++;
        rd->issued = now;
        if (KDS_TRACING(st->trace, "get", m->base.name, rd->sh->index)) {
            char why[160], it[160];
            kds_trace_emit(st->trace, now, "get", m->base.name, rd->sh->index,
                           "GetRecords: throttled (ReadProvisionedThroughputExceeded: %s), next "
                           "try in %.0f ms%s", kds_trace_read_limit(why, sizeof why, st, rd->sh),
                           sim_to_ms(lat + m->cfg.poll_interval),
                           kds_trace_refresh(it, sizeof it, refreshed, st->cfg.iterator_ttl));
        }
        sim_at(s, now + lat + m->cfg.poll_interval, poll_event, rd);
        return;
    }
    kds_stream_trim(st, rd->sh);
    kds_take tk;
    rd->issued = now;
    rd->reply_at = now + lat;
    kds_log_take_v(&rd->sh->log, &rd->cur, st->cfg.max_records_per_call,
                   st->cfg.max_bytes_per_call, collect, rd, &tk);
    rd->expired += tk.expired;
    rd->buf_count += tk.records;
    kds_stream_read_charge(st, rd->sh, tk.records, tk.bytes);
    cs->bytes_read_shared += tk.bytes;
    kds_stream_meter_over_7d(st, &rd->sh->log, rd->cur.pos, &tk, &cs->bytes_read_over_7d);
    if (tk.records == 0)
        cs->empty_calls++;
    if (KDS_TRACING(st->trace, "get", m->base.name, rd->sh->index)) {
        char ex[64], it[160], seq[KDS_SEQNOS_LEN]; /* the records returned end at the cursor */
        kds_trace_emit(st->trace, now, "get", m->base.name, rd->sh->index,
                       "GetRecords: %" PRIu64 " record%s, %" PRIu64 " B%s, in the buffer at "
                       "+%.0f ms%s%s",
                       tk.records, kds_trace_s(tk.records), tk.bytes,
                       kds_trace_expired(ex, sizeof ex, tk.expired), sim_to_ms(lat),
                       kds_trace_refresh(it, sizeof it, refreshed, st->cfg.iterator_ttl),
                       kds_trace_seqnos(seq, sizeof seq, rd->sh->index, rd->cur.pos - tk.records,
                                        tk.records));
    }
    if (rd->cur.pos >= rd->sh->log.end_pos && rd->sh->state != KDS_SHARD_OPEN)
        rd->read_done = true; /* SHARD_END */
    sim_at(s, now + lat, poll_reply, rd);
}

static void efo_arrive(sim *s, void *ctx)
{
    (void)s;
    reader *rd = ctx;
    dispatch(rd);
    settle(rd);
}

/* An EFO push: the records reach the mapping at `at`. */
static void efo_deliver(void *owner, kds_efo_sub *sub, const kds_slice *sl, size_t n, sim_time at)
{
    reader *rd = owner;
    (void)sub;
    uint64_t records = 0;
    for (size_t i = 0; i < n; i++)
        records += sl[i].count;
    buf_push(rd, sl, n, records, at);
    sim_at(rd->m->sim, at, efo_arrive, rd);
    maybe_read(rd); /* pause the subscription when the buffer is full enough */
}

/* ---- shards, parents and children ---------------------------------------------------- */

static reader *reader_of(kds_lambda *m, int32_t shard)
{
    if (shard < 0 || (size_t)shard >= m->n_by_shard)
        return NULL;
    return m->by_shard[shard];
}

/* Lambda reads a parent shard to its end before its children. */
static bool parents_done(kds_lambda *m, const reader *rd)
{
    const reader *p = reader_of(m, rd->sh->parent);
    const reader *q = reader_of(m, rd->sh->adjacent_parent);
    return (!p || p->done) && (!q || q->done);
}

/* Reader rd's shard had EXPIRED before the mapping would read it: the shard is not
 * listed, nothing of it is read (its records were stored before the start, skipped at
 * it), and its children do not wait for it. */
static void skip_expired(reader *rd)
{
    kds_waits_release(&rd->m->waits, rd->sh);
    rd->started = rd->read_done = rd->done = true;
    kds_log_seek_end(&rd->sh->log, &rd->cur);
    rd->start_pos = rd->cur.pos;
}

static void reader_start(reader *rd, kds_start_kind kind)
{
    kds_lambda *m = rd->m;
    kds_stream *st = m->st;
    sim_time now = sim_now(m->sim);
    kds_waits_release(&m->waits, rd->sh); /* its own cursor holds from here on */
    if (rd->sh->state == KDS_SHARD_EXPIRED) {
        /* A child whose parents were read so slowly that it expired first: gone too. */
        skip_expired(rd);
        settle(rd);
        return;
    }
    rd->started = true;
    kds_stream_trim(st, rd->sh);
    if (m->cfg.retrieval == KDS_LAMBDA_EFO) {
        rd->sub = calloc(1, sizeof *rd->sub);
        SIM_ASSERT(rd->sub != NULL);
        int rc = kds_efo_sub_start(rd->sub, m->sim, st, rd->sh, &m->cfg.efo, m->rng, &m->efo_st,
                                   kind, m->cfg.start_time, 0, m->base.name, rd, efo_deliver);
        SIM_ASSERT(rc == 0);
        rd->sub->bill = &m->base.st; /* MillisBehindLatest stays in efo_st */
        rd->start_pos = rd->sub->start_pos;
    } else {
        const kds_log *l = &rd->sh->log;
        if (kind == KDS_START_LATEST)
            kds_log_seek_end(l, &rd->cur);
        else if (kind == KDS_START_AT_TIMESTAMP)
            kds_log_seek_time(l, &rd->cur, m->cfg.start_time);
        else
            kds_log_seek_head(l, &rd->cur);
        SIM_ASSERT(kds_log_attach(&rd->sh->log, &rd->cur) == 0);
        rd->attached = true;
        rd->start_pos = rd->cur.pos;
        /* The first call at a random phase within one poll interval. */
        sim_time phase = (sim_time)(gsl_rng_uniform(m->rng) * (double)m->cfg.poll_interval);
        rd->last_poll = now + phase - m->cfg.poll_interval;
        rd->issued = now + phase;
        maybe_read(rd);
    }
    if (kind == KDS_START_LATEST && rd->start_pos > rd->begin_pos)
        m->ls.records_missed_at_creation += rd->start_pos - rd->begin_pos;
}

/* A reader whose shard is read to its end and whose batches are all settled is done;
 * its children may start. */
static void settle_now(reader *rd)
{
    kds_lambda *m = rd->m;
    if (rd->b_n > 0 || rd->inflight > 0 || failing(rd))
        return;
    rd->done = true;
    /* Only this shard's children (the stream records them, in index order) can have
     * become ready: a shard whose parents were done started then (enabled_event,
     * on_new_shard). Not a walk of every reader, which a stream of thousands of shards,
     * each settling, made quadratic. */
    for (size_t i = 0; i < 2; i++) {
        reader *c = reader_of(m, rd->sh->children[i]);
        if (!c || c->started || !m->enabled || !parents_done(m, c))
            continue;
        /* A shard none of whose parents the mapping reads starts as soon as it can (in
         * enabled_event or on_new_shard), so one that starts only now is a child that
         * waited for this parent, from its creation or the mapping's start. */
        kds_consumer_child_started_since(&m->base, m->st, c->sh, m->enabled_at, sim_now(m->sim));
        reader_start(c, KDS_START_TRIM_HORIZON);
    }
}

static reader *add_reader(kds_lambda *m, kds_shard *sh)
{
    reader *rd = calloc(1, sizeof *rd);
    SIM_ASSERT(rd != NULL);
    rd->m = m;
    rd->sh = sh;
    rd->blocked_since = -1;
    rd->st.shard = sh->index;
    if (m->n_readers == m->cap_readers) {
        m->cap_readers = m->cap_readers ? m->cap_readers * 2 : 8;
        m->readers = realloc(m->readers, m->cap_readers * sizeof *m->readers);
        SIM_ASSERT(m->readers != NULL);
    }
    m->readers[m->n_readers++] = rd;
    m->by_shard = sim_grow_zeroed(m->by_shard, &m->n_by_shard, (size_t)sh->index + 1,
                                  sizeof *m->by_shard);
    m->by_shard[sh->index] = rd;
    return rd;
}

static void on_new_shard(void *ctx, kds_shard *sh)
{
    kds_lambda *m = ctx;
    reader *rd = add_reader(m, sh);
    rd->begin_pos = sh->log.end_pos;
    /* An EFO subscription that is caught up learns that its parent closed only at its
     * next push: ask for one, then look. */
    reader *ps[2] = {reader_of(m, sh->parent), reader_of(m, sh->adjacent_parent)};
    for (size_t i = 0; i < 2; i++) {
        if (ps[i] && ps[i]->sub && !ps[i]->sub->paused) {
            kds_efo_sub_resume(ps[i]->sub);
            sim_at(m->sim, sim_now(m->sim), efo_arrive, ps[i]);
        }
    }
    /* A child waits for its parents, or for the mapping's creation: held at its head
     * until then, as it will be read from its start. */
    if (kds_waits_wanted(m->st, m->enabled_at))
        kds_waits_hold(&m->waits, sh);
    if (m->enabled && parents_done(m, rd))
        reader_start(rd, KDS_START_TRIM_HORIZON); /* children are read from their start */
}

static void created_event(sim *s, void *ctx)
{
    (void)s;
    kds_lambda *m = ctx;
    for (size_t i = 0; i < m->n_readers; i++)
        m->readers[i]->begin_pos = m->readers[i]->sh->log.end_pos;
}

static void enabled_event(sim *s, void *ctx)
{
    kds_lambda *m = ctx;
    m->enabled = true;
    m->enabled_at = sim_now(s);
    /* First the shards gone before the mapping began, so that none holds a child back:
     * those start as shards without a parent read, not as children that waited. */
    for (size_t i = 0; i < m->n_readers; i++)
        if (!m->readers[i]->started && m->readers[i]->sh->state == KDS_SHARD_EXPIRED)
            skip_expired(m->readers[i]);
    for (size_t i = 0; i < m->n_readers; i++) {
        reader *rd = m->readers[i];
        if (!rd->started && parents_done(m, rd))
            reader_start(rd, m->cfg.start);
    }
}

/* ---- the consumer's operations ------------------------------------------------------- */

static void finish(kds_consumer *base, sim_time end)
{
    kds_lambda *m = (kds_lambda *)base;
    kds_consumer_stats *cs = &m->base.st;
    uint64_t unread = 0, expired = 0, skipped = 0;
    m->ls.shards_blocked = 0;
    m->ls.longest_block_s = 0;
    for (size_t i = 0; i < m->n_readers; i++) {
        reader *rd = m->readers[i];
        const kds_log *l = &rd->sh->log;
        if (!rd->started) {
            /* Never read: what is retained is unread, what was trimmed is lost. */
            unread += l->end_pos - l->head_pos;
            expired += l->head_pos;
            continue;
        }
        uint64_t pos = rd->sub ? rd->sub->cur.pos : rd->cur.pos;
        if (pos < l->head_pos) {
            expired += l->head_pos - pos;
            pos = l->head_pos;
        }
        unread += l->end_pos - pos + rd->buf_count;
        expired += rd->expired;
        skipped += rd->start_pos;
        if (rd->ever_blocked)
            m->ls.shards_blocked++;
        double held = rd->st.longest_block_s;
        if (rd->blocked_since >= 0 && sim_to_s(end - rd->blocked_since) > held)
            held = sim_to_s(end - rd->blocked_since);
        rd->st.longest_block_s = held;
        if (held > m->ls.longest_block_s)
            m->ls.longest_block_s = held;
    }
    if (m->cfg.retrieval == KDS_LAMBDA_EFO) {
        expired += m->efo_st.records_expired_unread;
        /* Registered from the mapping's creation to the end of the run: the stream
         * consumer is registered before CreateEventSourceMapping names it, so it is
         * billed through the creation delay too (model.md section 9: every hour a
         * registration exists). */
        kds_consumer_efo_registered(cs, m->st, m->enabled_at - m->cfg.creation_delay, end);
    }
    cs->records_unread = unread;
    cs->records_expired_unread = expired;
    cs->records_skipped_at_start = skipped;
    m->ls.iterator_age_ms_max = cs->iterator_age_ms_max;
    sim_series_extend(&cs->iterator_age_min, end);
    sim_series_extend(&cs->delivered_min, end);
}

static void figures(const kds_consumer *base, kds_figure_fn fn, void *arg)
{
    const kds_lambda *m = (const kds_lambda *)base;
    const kds_lambda_stats *ls = &m->ls;
    fn(arg, "invocations", (double)ls->invocations);
    fn(arg, "function_errors", (double)ls->function_errors);
    fn(arg, "timeouts", (double)ls->timeouts);
    fn(arg, "retries", (double)ls->retries);
    fn(arg, "batches_bisected", (double)ls->batches_bisected);
    fn(arg, "records_processed", (double)ls->records_processed);
    fn(arg, "largest_batch", (double)ls->largest_batch);
    fn(arg, "records_to_failure_destination", (double)ls->records_to_failure_destination);
    fn(arg, "failure_destination_messages", (double)ls->failure_destination_messages);
    fn(arg, "records_discarded", (double)ls->records_discarded);
    fn(arg, "throttled_invocations", (double)ls->throttled_invocations);
    fn(arg, "records_missed_at_creation", (double)ls->records_missed_at_creation);
    fn(arg, "shards_blocked", (double)ls->shards_blocked);
    fn(arg, "longest_block_s", ls->longest_block_s);
    fn(arg, "iterator_age_ms_max", ls->iterator_age_ms_max);
    if (m->cfg.retrieval == KDS_LAMBDA_EFO) {
        uint64_t sessions = 0;
        for (size_t i = 0; i < m->n_readers; i++)
            if (m->readers[i]->sub)
                sessions += m->readers[i]->sub->sessions;
        fn(arg, "subscriptions", (double)sessions);
        fn(arg, "millis_behind_latest_max", m->efo_st.iterator_age_ms_max);
        fn(arg, "consumer_shard_hours", m->base.st.efo_consumer_shard_hours);
    }
}

static void assumptions(const kds_consumer *base, kds_assume_fn fn, void *arg)
{
    const kds_lambda *m = (const kds_lambda *)base;
    const kds_lambda_cfg *c = &m->cfg;
    char v[160];
    fn(arg, "function.duration", kds_dist_text(v, sizeof v, &c->duration_ms, "ms"),
       "the function's run time per invocation: a property of your code; set it from the "
       "function's Duration metric");
    snprintf(v, sizeof v, "%g ms", c->duration_ms_per_record);
    fn(arg, "function.per_record", v,
       "the function's run time added per record of the batch: a property of your code; set "
       "it from the Duration metric of batches of different sizes");
    if (c->retrieval == KDS_LAMBDA_POLLING) {
        fn(arg, "call_latency", kds_dist_text(v, sizeof v, &c->call_latency_ms, "ms"),
           "GetRecords round trip; AWS publishes no figure");
    } else {
        kds_efo_assumptions(&c->efo, fn, arg);
    }
    snprintf(v, sizeof v, "%g s", sim_to_s(c->creation_delay));
    fn(arg, "creation_delay", v,
       "time from CreateEventSourceMapping until the mapping reads; AWS publishes no figure");
    snprintf(v, sizeof v, "%g s, doubling per consecutive failure up to %g s",
             sim_to_s(c->retry_delay), sim_to_s(c->retry_delay_max));
    fn(arg, "retry_delay", v, "wait before retrying a failed batch; AWS publishes no figure");
    snprintf(v, sizeof v, "%g s", sim_to_s(c->throttle_retry));
    fn(arg, "throttle_retry", v,
       "wait before a throttled invocation tries again; AWS publishes no figure");
    snprintf(v, sizeof v, "%u B", c->record_overhead);
    fn(arg, "record_overhead", v,
       "event JSON around each record's base64 data, counted toward the 6 MB payload");
    if (c->parallelization > 1)
        fn(arg, "parallelization_factor", "batches of one shard run concurrently",
           "kdsim does not track partition keys inside a shard, so per-key order is assumed "
           "kept (AWS runs each key in one lane), not checked; a failed batch holds the whole "
           "shard, not only its lane");
    /* A record of the stream's largest size, in base64 with its JSON, above the payload
     * limit on its own (a stream raised above 4.5 MiB). */
    if (payload_of(m, m->st->cfg.max_record_size) > KDS_LAMBDA_PAYLOAD_LIMIT)
        fn(arg, "payload_limit", "a record above it goes alone",
           "a record whose event payload alone is above 6 MB is invoked in a batch of its "
           "own; AWS does not say what a mapping does with one");
    if (c->report_item_failures)
        fn(arg, "report_batch_item_failures", "the first poison record",
           "the function reports its first poison record as the first failure; an error "
           "or a timeout fails the whole batch");
}

static void free_lambda(kds_consumer *base)
{
    kds_lambda *m = (kds_lambda *)base;
    if (!m)
        return;
    if (m->st)
        kds_waits_fini(&m->waits, m->st);
    for (size_t i = 0; i < m->n_readers; i++) {
        reader *rd = m->readers[i];
        if (rd->attached)
            kds_log_detach(&rd->sh->log, &rd->cur);
        if (rd->sub) {
            kds_efo_sub_fini(rd->sub);
            free(rd->sub);
        }
        free(rd->buf);
        free(rd->marks);
        free(rd);
    }
    free(m->readers);
    free(m->by_shard);
    for (size_t i = 0; i < m->n_all; i++) {
        free(m->all[i]->sl);
        free(m->all[i]);
    }
    free(m->all);
    kds_consumer_stats_fini(&m->efo_st);
    kds_consumer_stats_fini(&m->base.st);
    free(m);
}

static const kds_consumer_ops LAMBDA_OPS = {
    .kind = "lambda",
    .finish = finish,
    .figures = figures,
    .assumptions = assumptions,
    .free = free_lambda,
};

kds_consumer *kds_lambda_make(sim *s, kds_stream *st, const void *cfgp)
{
    const kds_lambda_cfg *cfg = cfgp;
    SIM_ASSERT(cfg->batch_size >= 1 && cfg->batch_size <= KDS_LAMBDA_MAX_BATCH);
    SIM_ASSERT(cfg->parallelization >= 1 && cfg->parallelization <= KDS_LAMBDA_MAX_PARALLEL);
    SIM_ASSERT(cfg->concurrency >= 1 && cfg->poll_interval > 0);
    kds_lambda *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->cfg = *cfg;
    m->sim = s;
    m->st = st;
    if (kds_consumer_init(&m->base, &LAMBDA_OPS, cfg->name, s, st, on_new_shard, m, &m->rng) != 0 ||
        kds_consumer_stats_init(&m->efo_st) != 0) {
        free_lambda(&m->base);
        return NULL;
    }
    for (size_t i = 0; i < st->n_shards; i++)
        if (st->shards[i]->state != KDS_SHARD_EXPIRED)
            add_reader(m, st->shards[i]);
    sim_time begin = cfg->begin > sim_now(s) ? cfg->begin : sim_now(s);
    m->enabled_at = begin + cfg->creation_delay;
    /* The shards the mapping will read from before its start, held at their heads until
     * their readers start (at LATEST it reads nothing written before). */
    kds_waits_hold_until(&m->waits, st, m->enabled_at, cfg->start != KDS_START_LATEST);
    sim_at(s, begin, created_event, m);
    sim_at(s, m->enabled_at, enabled_event, m);
    return &m->base;
}

const kds_lambda_stats *kds_lambda_stats_get(const kds_consumer *c)
{
    SIM_ASSERT(c->ops == &LAMBDA_OPS);
    return &((const kds_lambda *)c)->ls;
}

size_t kds_lambda_shard_count(const kds_consumer *c)
{
    SIM_ASSERT(c->ops == &LAMBDA_OPS);
    return ((const kds_lambda *)c)->n_readers;
}

int kds_lambda_shard_stats_get(const kds_consumer *c, size_t i, kds_lambda_shard_stats *out)
{
    SIM_ASSERT(c->ops == &LAMBDA_OPS);
    const kds_lambda *m = (const kds_lambda *)c;
    if (i >= m->n_readers)
        return SIM_EINVAL;
    *out = m->readers[i]->st;
    return 0;
}
