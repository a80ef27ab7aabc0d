/* kds_producer.c - the producer model of kds_producer.h: flush timers per client,
 * requests served one round trip later, retries of failed records and duplicates from
 * lost replies. */
#include "kds_producer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "kds_trace.h"
#include "sim_err.h"

/* Records of one request bound for one shard (retries keep their shard). */
typedef struct part {
    uint32_t shard;         /* shard index */
    uint32_t count;         /* records */
    uint64_t bytes;         /* their bytes */
    uint32_t stored_before; /* records of this part already stored by an earlier send */
    uint32_t marks;         /* marked records among them */
    uint64_t units;         /* their PUT payload units (billing) */
    uint64_t kib;           /* their bytes rounded up to 1 KiB each (billing) */
} part;

typedef struct request request;
struct request {
    kds_producer *p;   /* owner */
    request *next;     /* free-list link */
    uint32_t attempt;  /* 1 for the first send */
    uint32_t n;        /* records */
    uint64_t bytes;    /* bytes */
    uint32_t marks;    /* marked records (fresh requests) */
    uint64_t units;    /* PUT payload units of its records (0: derive from sizes) */
    uint64_t kib;      /* bytes rounded up to 1 KiB per record (0: derive) */
    /* While a fresh request is spread over shards (spread_emit): its records, bytes
     * and meters handed to the parts so far. */
    uint32_t spread_n;
    uint64_t spread_bytes, spread_units, spread_kib;
    part *parts;       /* owned; NULL for a fresh request (spread at service time) */
    uint32_t n_parts;
    uint32_t cap_parts;
    /* Failures of the current send, collected while serving it. */
    part *fail;        /* owned */
    uint32_t n_fail, cap_fail;
    bool timed_out;    /* the reply of this send is lost */
    sim_time sent_at;  /* when this send left the client, ns */
    struct client *chain; /* serve then flushes this client (see client_flush) */
    struct client *owner; /* ordered: the client this request holds up until it is
                             answered, else NULL */
    bool in_use;          /* sent and not finished (for the end-of-run accounting) */
};

typedef struct client {
    kds_producer *p;
    uint32_t id;
    sim_time last;    /* end of the last arrival window */
    sim_time next_at; /* time of the next flush, ns */
    double carry;     /* fraction of a record owed (evenly spaced arrivals) */
    uint64_t backlog; /* records generated, not yet sent */
    uint64_t held;    /* size of the backlog's first record when already drawn (it did
                         not fit in the last request), else 0 */
    /* KPL aggregation of records of varying sizes (draw_one): */
    uint64_t agg_owed; /* user records that arrived for aggregates closed early, before
                          they would pass the maximum record size: they go into later
                          aggregates (each `agg` of them make one more Kinesis record) */
    uint64_t agg_held; /* size of the owed user record that closed the last aggregate,
                          already drawn, or 0 */
    bool busy;         /* ordered: its one request is in flight */
    uint32_t marks;    /* ordered: marks due for records still in its buffer */
} client;

struct kds_producer {
    kds_producer_cfg cfg;
    uint32_t index;
    sim *sim;
    kds_stream *st;
    gsl_rng *rng;          /* sim-owned */
    kds_keys *keys;        /* held (kds_keys_release), maybe shared */
    client *clients;       /* owned */
    request *free_list;    /* recycled requests */
    request **all;         /* owned: every request allocated, for freeing */
    size_t n_all, cap_all;
    size_t next_mark;      /* index into cfg.marks */
    bool const_size;       /* size distribution is a constant */
    uint64_t size_const;   /* a Kinesis record's size then (aggregates included), B */
    uint32_t agg;          /* user records per Kinesis record, >= 1 */
    uint32_t batch;        /* records per request at most (batch_limit) */
    sim_time flush_every;  /* the time between a client's flushes when the rate is
                              constant (next_flush_in), else 0 */
    sim_time horizon;      /* the run ends here: a flush beyond it counts nothing */
    kds_producer_stats stats;
};

void kds_producer_cfg_defaults(kds_producer_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "producer";
    cfg->rate = kds_rate_constant(0);
    cfg->size = sim_dist_const(1024);
    kds_keys_cfg_defaults(&cfg->keys);
    cfg->api = KDS_API_PUT_RECORDS;
    cfg->batch_records = 500;
    cfg->batch_bytes = 5 * KDS_MIB;
    cfg->linger = SIM_MS(100);
    cfg->clients = 1;
    cfg->latency_ms = (sim_dist){SIM_DIST_LOGNORMAL, 20.0, 0.5, 1.0, 10000.0};
    cfg->max_attempts = 3;
    cfg->backoff_base = SIM_MS(100);
    cfg->backoff_max = SIM_S(5);
    cfg->timeout_rate = 0;
    cfg->timeout = SIM_S(5);
    cfg->start = 0;
    cfg->stop = -1;
    cfg->aggregate = 1;
    cfg->aggregate_overhead = 20;
}

static request *req_get(kds_producer *p)
{
    request *r = p->free_list;
    if (r) {
        p->free_list = r->next;
    } else {
        r = calloc(1, sizeof *r);
        SIM_ASSERT(r != NULL);
        if (p->n_all == p->cap_all) {
            p->cap_all = p->cap_all ? p->cap_all * 2 : 16;
            p->all = realloc(p->all, p->cap_all * sizeof *p->all);
            SIM_ASSERT(p->all != NULL);
        }
        p->all[p->n_all++] = r;
    }
    r->p = p;
    r->next = NULL;
    r->attempt = 1;
    r->n = 0;
    r->bytes = 0;
    r->marks = 0;
    r->units = 0;
    r->kib = 0;
    r->spread_n = 0; /* a request is spread once, at its first send */
    r->spread_bytes = r->spread_units = r->spread_kib = 0;
    r->n_parts = 0;
    r->n_fail = 0;
    r->timed_out = false;
    r->chain = NULL;
    r->owner = NULL;
    r->in_use = true;
    return r;
}

static void req_put(kds_producer *p, request *r)
{
    r->in_use = false;
    r->next = p->free_list;
    p->free_list = r;
}

static void push_part(part **arr, uint32_t *n, uint32_t *cap, part v)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *arr = realloc(*arr, *cap * sizeof **arr);
        SIM_ASSERT(*arr != NULL);
    }
    (*arr)[(*n)++] = v;
}

static sim_time round_trip(kds_producer *p)
{
    return sim_dist_sample_ns(&p->cfg.latency_ms, p->rng);
}

static void serve(sim *s, void *ctx);
static void serve_request(request *r);
static void request_done(kds_producer *p, request *r);

/* The API the producer calls, as the trace names it. */
static const char *api_name(const kds_producer *p)
{
    return p->cfg.api == KDS_API_PUT_RECORD ? "PutRecord" : "PutRecords";
}

/* The trace line of a put of `count` records on `sh` that did `res`. Out of line: the
 * line's buffer and arguments would keep serve_part from being inlined. */
static __attribute__((noinline)) void trace_put(const request *r, const kds_shard *sh,
                                                uint32_t count, const kds_put_result *res)
{
    kds_producer *p = r->p;
    /* The stored records are the run just appended, at the end of the log. */
    char seq[KDS_SEQNOS_LEN], dups[80] = "";
    if (res->stored_dups > 0) /* a resend after a lost reply stored them a second time */
        snprintf(dups, sizeof dups, " (%u duplicate%s of records already stored)",
                 res->stored_dups, kds_trace_s(res->stored_dups));
    kds_trace_emit(p->st->trace, sim_now(p->sim), "put", p->cfg.name, sh->index,
                   "%s: %u record%s -> %u stored%s, %u throttled, %u failed%s (attempt %u)%s",
                   api_name(p), count, kds_trace_s(count), res->stored, dups, res->throttled,
                   res->failed, r->timed_out ? ", reply lost" : "", r->attempt,
                   kds_trace_seqnos(seq, sizeof seq, sh->index, sh->log.end_pos - res->stored,
                                    res->stored));
}

/* Serve one part: put it into its shard and remember what failed. Inline, always
 * (GCC would not, for its size): it runs for every part of every request, and with the
 * put inline in it (kds_stream_put_metered) the put's arguments and result stay in
 * registers. A fresh request's parts come through spread_emit, inlined in turn into the
 * spread's loop (kds_keys_spread). */
static inline __attribute__((always_inline)) void
serve_part(request *r, kds_shard *sh, uint32_t count, uint64_t bytes, uint32_t stored_before,
           uint32_t marks, uint64_t units, uint64_t kib)
{
    kds_producer *p = r->p;
    kds_put_result res;
    kds_stream_put_metered(p->st, sh, count, bytes, stored_before, marks, p->index, units, kib,
                           p->rng, &res);
    if (KDS_TRACING(p->st->trace, "put", p->cfg.name, sh->index))
        trace_put(r, sh, count, &res);
    if (res.stored > 0)
        kds_shard_notify_append(sh); /* after the put's trace line, before its pushes' */
    uint32_t fresh = res.stored - res.stored_dups; /* first copies */
    p->stats.records_written += fresh;
    p->stats.duplicates_written += res.stored_dups;
    p->stats.write_throttled_records += res.throttled;
    p->stats.records_failed_internal += res.failed;
    uint32_t nfail = count - res.stored;
    if (r->timed_out) {
        /* The client never learns what was stored: it resends the whole part, and
         * everything stored so far is now "stored before". */
        uint32_t sb = stored_before + fresh;
        push_part(&r->fail, &r->n_fail, &r->cap_fail,
                  (part){sh->index, count, bytes, sb > count ? count : sb, marks, units, kib});
    } else if (nfail > 0) {
        /* Stored records form a prefix; the duplicates come first in it. */
        uint32_t sb_left = stored_before - res.stored_dups;
        uint64_t fb = bytes - res.stored_bytes;
        uint32_t mk = marks > res.stored ? marks - res.stored : 0;
        push_part(&r->fail, &r->n_fail, &r->cap_fail,
                  (part){sh->index, nfail, fb, sb_left, mk,
                         units - kds_prorate(units, res.stored, count),
                         kib - kds_prorate(kib, res.stored, count)});
    }
}

/* The spread's emit for a fresh request: its part of `count` records on `sh`. Inline,
 * always: kds_keys_spread, inline itself, calls it for every part. */
static inline __attribute__((always_inline)) void spread_emit(void *ctx, kds_shard *sh,
                                                              uint32_t count)
{
    request *r = ctx;
    uint32_t mk = r->marks > count ? count : r->marks;
    r->marks -= mk;
    /* Equal-sized records: bytes by count, and no meters (0: derived from the size),
     * with no division. One call of serve_part for both cases: one copy of it here. */
    uint64_t b = count * r->p->size_const, units = 0, kib = 0;
    if (!r->p->const_size) {
        /* A part's bytes and meters are the share of the records spread so far less
         * what the parts before it took: the parts add up to the request's totals
         * exactly, where a share of each part's own rounded down would lose up to one
         * unit a part (most of a PUT payload unit when the part is one record of 1.75
         * units). */
        uint32_t done = r->spread_n += count;
        b = kds_prorate(r->bytes, done, r->n) - r->spread_bytes;
        units = kds_prorate(r->units, done, r->n) - r->spread_units;
        kib = kds_prorate(r->kib, done, r->n) - r->spread_kib;
        r->spread_bytes += b;
        r->spread_units += units;
        r->spread_kib += kib;
    }
    serve_part(r, sh, count, b, 0, mk, units, kib);
}

/* Full-jitter exponential backoff before attempt `attempt` (>= 2). */
static sim_time backoff(kds_producer *p, uint32_t attempt)
{
    double cap = (double)p->cfg.backoff_base * pow(2.0, (double)(attempt - 2));
    if (cap > (double)p->cfg.backoff_max)
        cap = (double)p->cfg.backoff_max;
    return (sim_time)(gsl_rng_uniform(p->rng) * cap);
}

/* Send request r `delay` ns from now; returns the time it will be served. */
static sim_time send(kds_producer *p, request *r, sim_time delay)
{
    p->stats.put_calls++;
    p->stats.record_sends += r->n;
    r->timed_out = p->cfg.timeout_rate > 0 && gsl_rng_uniform(p->rng) < p->cfg.timeout_rate;
    r->sent_at = sim_now(p->sim) + delay;
    sim_time at = r->sent_at + round_trip(p);
    sim_at(p->sim, at, serve, r);
    return at;
}

static void client_flush(client *c, sim_time t);

static void serve(sim *s, void *ctx)
{
    (void)s;
    request *r = ctx;
    client *chain = r->chain;
    r->chain = NULL;
    serve_request(r);
    if (chain)
        client_flush(chain, chain->next_at);
}

static void serve_request(request *r)
{
    kds_producer *p = r->p;
    r->n_fail = 0;
    if (!r->parts || r->n_parts == 0) {
        uint64_t bytes = r->bytes;
        uint32_t n = r->n;
        kds_keys_spread(p->keys, p->st, p->rng, n, spread_emit, r);
        r->bytes = bytes;
    } else {
        for (uint32_t i = 0; i < r->n_parts; i++) {
            part *pt = &r->parts[i];
            kds_shard *sh = p->st->shards[pt->shard];
            /* A shard closed by resharding since the first send: its keys now live in
             * children. One key goes where its hash now routes; the records of many
             * keys (not kept) go to the open shard holding the middle of the closed
             * shard's range (children split it at or near the middle), a
             * simplification the report lists. */
            if (sh->state != KDS_SHARD_OPEN) {
                kds_hashkey h;
                if (kds_keys_single_hash(p->keys, p->st, &h)) {
                    sh = kds_stream_route(p->st, h);
                } else {
                    sh = kds_stream_route(p->st, sh->lo + (sh->hi - sh->lo) / 2);
                    p->stats.records_rerouted += pt->count;
                }
            }
            serve_part(r, sh, pt->count, pt->bytes, pt->stored_before, pt->marks, pt->units,
                       pt->kib);
        }
    }
    if (r->timed_out)
        p->stats.calls_timed_out++;
    if (r->n_fail == 0) {
        request_done(p, r);
        return;
    }
    /* Turn the failures into the next send of this request. */
    part *tmp = r->parts;
    uint32_t tcap = r->cap_parts;
    r->parts = r->fail;
    r->n_parts = r->n_fail;
    r->cap_parts = r->cap_fail;
    r->fail = tmp;
    r->cap_fail = tcap;
    r->n_fail = 0;
    uint32_t n = 0;
    uint64_t bytes = 0;
    uint32_t never_stored = 0;
    for (uint32_t i = 0; i < r->n_parts; i++) {
        n += r->parts[i].count;
        bytes += r->parts[i].bytes;
        never_stored += r->parts[i].count - r->parts[i].stored_before;
    }
    const char *api = api_name(p);
    if (r->attempt >= p->cfg.max_attempts) {
        p->stats.records_given_up += never_stored;
        if (KDS_TRACING(p->st->trace, "put", p->cfg.name, -1))
            kds_trace_emit(p->st->trace, sim_now(p->sim), "put", p->cfg.name, -1,
                           "%s: %" PRIu32 " record%s given up after attempt %" PRIu32
                           " of %" PRIu32,
                           api, never_stored, kds_trace_s(never_stored), r->attempt,
                           p->cfg.max_attempts);
        request_done(p, r);
        return;
    }
    r->n = n;
    r->bytes = bytes;
    r->attempt++;
    p->stats.records_retried += n;
    sim_time wait = backoff(p, r->attempt);
    if (r->timed_out) {
        /* The client first waits out its timeout, which ran from the send, not from now
         * (the service stored the records a round trip after it). */
        sim_time left = r->sent_at + p->cfg.timeout - sim_now(p->sim);
        if (left > 0)
            wait += left;
    }
    if (KDS_TRACING(p->st->trace, "put", p->cfg.name, -1))
        kds_trace_emit(p->st->trace, sim_now(p->sim), "put", p->cfg.name, -1,
                       "%s: %" PRIu32 " record%s resent in %.0f ms (attempt %" PRIu32
                       " of %" PRIu32 ")",
                       api, n, kds_trace_s(n), sim_to_ms(wait), r->attempt, p->cfg.max_attempts);
    send(p, r, wait);
}

/* The largest record size a draw stands for: 1 TiB, far above any record the stream
 * accepts (at most 10 MiB), so that a heavy-tailed draw (a Pareto reaches 1e300 B, or
 * infinity, whose llround is undefined) is refused as too large like any other, and an
 * aggregate of up to 100,000 of them still sums without overflow. */
#define SIZE_DRAW_MAX (UINT64_C(1) << 40)

/* A drawn size in whole bytes: at least 1 (a record holds its key), at most
 * SIZE_DRAW_MAX. */
static uint64_t size_bytes(double v)
{
    if (!(v >= 1.0))
        return 1;
    if (v >= (double)SIZE_DRAW_MAX)
        return SIZE_DRAW_MAX;
    return (uint64_t)llround(v);
}

static uint64_t draw_user(kds_producer *p)
{
    return size_bytes(sim_dist_sample(&p->cfg.size, p->rng));
}

/* The size of one fresh Kinesis record of client c, of a varying size: one draw, or an
 * aggregate of up to `agg` user records and its overhead. As the KPL's
 * AggregationMaxSize, an aggregate closes before the user record that would take it past
 * the stream's maximum record size: that record and the others the aggregate was to
 * hold are owed to the next ones, and every `agg` owed make one more Kinesis record in
 * the client's backlog. An aggregate of one user record is that record alone, without
 * the aggregation format (the KPL sends a lone record as it is); one above the maximum
 * is refused by the caller. */
static uint64_t draw_one(kds_producer *p, client *c)
{
    if (p->agg <= 1)
        return draw_user(p);
    uint64_t max = p->st->cfg.max_record_size, over = p->cfg.aggregate_overhead, sum = 0;
    uint32_t k = 0;
    for (; k < p->agg; k++) {
        uint64_t v = c->agg_held ? c->agg_held : draw_user(p);
        c->agg_held = 0;
        if (k > 0 && over + sum + v > max) {
            c->agg_held = v;
            break;
        }
        sum += v;
    }
    c->agg_owed += p->agg - k;
    if (c->agg_owed >= p->agg) {
        c->agg_owed -= p->agg;
        c->backlog++;
    }
    return k == 1 ? sum : sum + over;
}

/* Bytes of the next request of client `c`, of at most `n` fresh records from its
 * backlog; *used is how many records it took from the backlog (stored in the request
 * or refused), *too_large how many of those were refused: records above the stream's
 * maximum are refused by the service (ValidationException) and never sent. Equal sizes
 * fit by count (batch_limit). Records of different sizes fill a PutRecords request up
 * to batch.bytes, as the KPL's CollectionMaxSize does (and AWS refuses a request above
 * 10 MiB): the record that would take it past is drawn and held for the next request
 * (a request holds at least one record). */
static uint64_t draw_sizes(kds_producer *p, client *c, uint32_t n, uint32_t *used,
                           uint32_t *too_large, uint64_t *units, uint64_t *kib)
{
    uint64_t max = p->st->cfg.max_record_size;
    *used = n;
    *too_large = 0;
    *units = 0;
    *kib = 0;
    if (p->const_size) {
        if (p->size_const > max) {
            *too_large = n;
            return 0;
        }
        return p->size_const * n; /* meters derived exactly from the equal sizes */
    }
    /* Records of different sizes: their billing meters are summed record by record,
     * since ceil() of the average is not the average of ceil(). */
    uint64_t sum = 0;
    uint32_t taken = 0, i;
    for (i = 0; i < n; i++) {
        uint64_t b = c->held ? c->held : draw_one(p, c);
        c->held = 0;
        if (b > max) {
            (*too_large)++;
            continue;
        }
        if (taken > 0 && sum + b > p->cfg.batch_bytes) {
            c->held = b; /* still in the backlog */
            break;
        }
        sum += b;
        taken++;
        *units += kds_put_units(b);
        *kib += kds_kib_rounded(b);
    }
    *used = i;
    return sum;
}

/* Records per request: the batch's record limit, or fewer when records of their
 * constant size would exceed its byte limit first (records of varying sizes are cut by
 * bytes as they are drawn: draw_sizes). */
static uint32_t batch_limit(const kds_producer *p)
{
    uint32_t batch = p->cfg.api == KDS_API_PUT_RECORD ? 1 : p->cfg.batch_records;
    if (p->cfg.api == KDS_API_PUT_RECORDS && p->const_size && p->size_const > 0) {
        uint64_t by_bytes = p->cfg.batch_bytes / p->size_const;
        if (by_bytes < 1)
            by_bytes = 1;
        if (by_bytes < batch)
            batch = (uint32_t)by_bytes;
    }
    return batch;
}

static void flush_event(sim *s, void *ctx);

/* The trace line of `n` records given up before they were sent: each larger than the
 * stream's record size limit, which the service refuses whatever the attempt. */
static __attribute__((noinline)) void trace_too_large(kds_producer *p, uint32_t n)
{
    kds_trace_emit(p->st->trace, sim_now(p->sim), "put", p->cfg.name, -1,
                   "%s: %" PRIu32 " record%s given up before sending: larger than the "
                   "stream's record size limit of %g MiB (ValidationException, no retry)",
                   api_name(p), n, kds_trace_s(n),
                   (double)p->st->cfg.max_record_size / (double)KDS_MIB);
}

/* Take client c's next request from its backlog and send it at t (>= now), with up to
 * *marks of the marks due (taken off *marks). Returns it, with *served the time it
 * will be served, or NULL when every record taken was refused as too large. */
static request *send_next(client *c, sim_time t, uint32_t *marks, sim_time *served)
{
    kds_producer *p = c->p;
    uint32_t n = c->backlog < p->batch ? (uint32_t)c->backlog : p->batch;
    uint32_t used, too_large;
    uint64_t units, kib;
    uint64_t bytes = draw_sizes(p, c, n, &used, &too_large, &units, &kib);
    c->backlog -= used;
    p->stats.records_attempted += used;
    n = used - too_large;
    if (too_large) {
        p->stats.records_too_large += too_large;
        p->stats.records_given_up += too_large;
        if (KDS_TRACING(p->st->trace, "put", p->cfg.name, -1))
            trace_too_large(p, too_large);
        if (n == 0)
            return NULL;
    }
    request *r = req_get(p);
    r->n = n;
    r->bytes = bytes;
    r->units = units;
    r->kib = kib;
    r->marks = *marks < n ? *marks : n;
    p->stats.marks_written += r->marks;
    *marks -= r->marks;
    *served = send(p, r, t - sim_now(p->sim));
    return r;
}

/* An ordered client (SequenceNumberForOrdering) that has no request in flight sends the
 * next record of its backlog at t: returns that request (*served its service time), or
 * NULL when it sent none (busy, or nothing buffered that is not too large). */
static request *send_ordered(client *c, sim_time t, sim_time *served)
{
    while (!c->busy && c->backlog > 0) {
        request *r = send_next(c, t, &c->marks, served);
        if (r) {
            r->owner = c;
            c->busy = true;
            return r;
        }
    }
    return NULL;
}

/* Request r is answered for good (stored, or given up): it goes back to the free list,
 * and the ordered client it held up sends its next record now. */
static void request_done(kds_producer *p, request *r)
{
    client *c = r->owner;
    req_put(p, r);
    if (c) {
        sim_time served;
        c->busy = false;
        send_ordered(c, sim_now(p->sim), &served);
    }
}

/* Time from `now` to a client's next flush: the linger, or less when the client's share
 * of the rate fills a batch sooner. */
static sim_time next_flush_in(kds_producer *p, sim_time now)
{
    if (p->flush_every > 0)
        return p->flush_every;
    double per_client = kds_rate_at(&p->cfg.rate, now) / p->cfg.clients / p->agg;
    uint32_t batch = p->cfg.api == KDS_API_PUT_RECORD ? 1 : p->cfg.batch_records;
    sim_time dt = p->cfg.linger > 0 ? p->cfg.linger : SIM_S(1);
    if (per_client > 0) {
        double fill = (double)batch / per_client * 1e9;
        if (fill < (double)dt || p->cfg.linger == 0)
            dt = fill < (double)SIM_DRAW_MAX ? (sim_time)fill : SIM_DRAW_MAX; /* a trickle */
    }
    return dt < 1000 ? 1000 : dt; /* at least 1 us between flushes */
}

static void flush_event(sim *s, void *ctx)
{
    client_flush(ctx, sim_now(s));
}

/* Flush client c at time t (>= now): count the records that arrived since its last
 * flush and send them. Sending does not depend on the stream's state, so the next
 * flush can be prepared early: when the first request of this flush is served before
 * the next flush is due, its serve event performs that flush (for its own, later time)
 * instead of a separate timer event. That halves the producer's events without
 * changing what happens when.
 *
 * The early flush draws from the producer's random stream when its serve event runs,
 * so it is made whether or not t is past the end of the run: a run's first T must not
 * depend on how long it goes on (a shorter run is the start of a longer one, which
 * --warmup relies on). A flush past the end counts nothing: its records arrive after
 * the end, and its requests, never served, are left out at kds_producer_finish. */
static void client_flush(client *c, sim_time t);

/* Count the records that arrived at client c by t and send them; returns the first
 * request sent (*first_served its serve time), or NULL. Inline into its two callers. */
static inline request *flush_send(client *c, sim_time t, sim_time *first_served)
{
    kds_producer *p = c->p;
    sim_time now = t;
    sim_time a = c->last, b = now;
    if (p->cfg.stop >= 0 && b > p->cfg.stop)
        b = p->cfg.stop;
    double mean = b > a ? kds_rate_integral(&p->cfg.rate, a, b) / p->cfg.clients / p->agg : 0;
    uint64_t arrived;
    if (p->cfg.poisson) {
        arrived = mean > 0 ? gsl_ran_poisson(p->rng, mean) : 0;
    } else {
        c->carry += mean;
        /* The epsilon keeps a carry of 0.9999999999 (rounding of many small
         * additions) from losing a whole record. The conversion truncates, which is
         * the floor here without floor()'s dozen instructions: what is left of the
         * carry is at least -1e-9 (to within a rounding), so the value converted is
         * >= 0 or a rounding below it, which truncates to 0 (where floor gave -1). */
        arrived = (uint64_t)(c->carry + 1e-9);
        c->carry -= (double)arrived;
    }
    c->last = now;
    c->backlog += arrived;
    uint32_t marks = 0;
    while (p->next_mark < p->cfg.n_marks && p->cfg.marks[p->next_mark] <= now && c->backlog > 0) {
        marks++;
        p->next_mark++;
    }

    request *first = NULL;
    *first_served = 0;
    if (p->cfg.ordered) {
        /* One request in flight: the rest of the backlog waits for its answer
         * (request_done sends the next), and so do the marks due. */
        c->marks += marks;
        first = send_ordered(c, now, first_served);
    } else {
        while (c->backlog > 0) {
            sim_time served;
            request *r = send_next(c, now, &marks, &served);
            if (r && !first)
                first = r, *first_served = served;
        }
    }
    return first;
}

/* A flush past the end of the run (see client_flush): the same draws, nothing counted.
 * Out of line: one a client at most, at the end. */
static __attribute__((noinline)) void flush_past_end(client *c, sim_time t)
{
    kds_producer_stats kept = c->p->stats;
    uint64_t backlog = c->backlog;
    sim_time served;
    (void)flush_send(c, t, &served);
    c->p->stats = kept;
    c->backlog = backlog;
}

static void client_flush(client *c, sim_time t)
{
    kds_producer *p = c->p;
    if (t > p->horizon) {
        flush_past_end(c, t);
        return; /* and the flushes after it are later still */
    }
    sim_time first_served;
    request *first = flush_send(c, t, &first_served);
    if (p->cfg.stop >= 0 && t >= p->cfg.stop)
        return;
    c->next_at = t + next_flush_in(p, t);
    if (first && first_served <= c->next_at)
        first->chain = c; /* even when c->next_at is past the end: see above */
    else if (c->next_at <= p->horizon)
        sim_at(p->sim, c->next_at, flush_event, c);
}

kds_producer *kds_producer_new(sim *s, kds_stream *st, const kds_producer_cfg *cfg,
                               uint32_t index, sim_time horizon, kds_keys *keys)
{
    kds_producer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    if (p->cfg.clients < 1)
        p->cfg.clients = 1;
    p->index = index;
    p->horizon = horizon;
    p->sim = s;
    p->st = st;
    char name[160];
    snprintf(name, sizeof name, "producer/%s", cfg->name);
    p->rng = sim_rng(s, name);
    p->agg = cfg->aggregate > 1 ? cfg->aggregate : 1;
    p->const_size = cfg->size.kind == SIM_DIST_CONST;
    if (p->const_size) {
        p->size_const = size_bytes(sim_dist_sample(&p->cfg.size, p->rng));
        /* Aggregates of equal records are cut by count alone: as many as fit in the
         * maximum record size with the overhead, at most `aggregate` (draw_one). */
        uint64_t max = st->cfg.max_record_size, over = p->cfg.aggregate_overhead;
        if (p->agg > 1 && p->size_const * p->agg + over > max)
            p->agg = max > over && (max - over) / p->size_const >= 2
                         ? (uint32_t)((max - over) / p->size_const)
                         : 1;
        if (p->agg > 1)
            p->size_const = p->size_const * p->agg + over;
    }
    p->batch = batch_limit(p);
    /* A constant rate flushes at one interval, which then need not be worked out (two
     * divisions and a call) at every flush. */
    if (p->cfg.rate.kind == KDS_RATE_CONSTANT)
        p->flush_every = next_flush_in(p, cfg->start);
    p->keys = keys ? kds_keys_retain(keys) : kds_keys_new(&p->cfg.keys, st);
    if (!p->keys) {
        free(p);
        return NULL;
    }
    p->clients = calloc(p->cfg.clients, sizeof *p->clients);
    if (!p->clients) {
        kds_keys_release(p->keys);
        free(p);
        return NULL;
    }
    for (uint32_t i = 0; i < p->cfg.clients; i++) {
        client *c = &p->clients[i];
        c->p = p;
        c->id = i;
        c->last = cfg->start;
        /* Evenly spaced arrivals are the producer's: record k arrives at k / rate, and
         * client i holds records i + 1, i + 1 + clients, ..., so its first is owed when
         * its carry, which grows by rate / clients a second, reaches 1 at (i + 1) / rate.
         * (Started at 0, every client's first record came after clients / rate, and a
         * slow producer of many clients wrote nothing for that long.) */
        c->carry = 1.0 - (double)(i + 1) / p->cfg.clients;
        /* Clients start spread over one flush interval, so that several clients do
         * not all send at the same instant. */
        sim_time first = cfg->start + next_flush_in(p, cfg->start) * (i + 1) / p->cfg.clients;
        if (first < sim_now(s))
            first = sim_now(s);
        sim_at(s, first, flush_event, c);
    }
    return p;
}

void kds_producer_free(kds_producer *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_all; i++) {
        free(p->all[i]->parts);
        free(p->all[i]->fail);
        free(p->all[i]);
    }
    free(p->all);
    free(p->clients);
    kds_keys_release(p->keys);
    free(p);
}

void kds_producer_finish(kds_producer *p, sim_time end)
{
    (void)end;
    kds_producer_stats *ps = &p->stats;
    uint64_t buffered = 0;
    for (uint32_t i = 0; i < p->cfg.clients; i++)
        buffered += p->clients[i].backlog;
    ps->records_buffered = buffered;
    /* Count what is still in flight from the requests themselves, not by difference, so
     * that the conservation invariant (kds_invariant.h) checks something. */
    uint64_t never_stored = 0, pending = 0;
    for (size_t i = 0; i < p->n_all; i++) {
        const request *r = p->all[i];
        /* A first send after the end is a flush made early past it (client_flush),
         * which counted nothing. */
        if (!r->in_use || (r->attempt == 1 && r->sent_at > p->horizon))
            continue;
        pending += r->n;
        if (r->parts && r->n_parts > 0) {
            for (uint32_t k = 0; k < r->n_parts; k++)
                never_stored += r->parts[k].count - r->parts[k].stored_before;
        } else {
            never_stored += r->n;
        }
    }
    ps->records_in_flight = never_stored;
    ps->record_sends_pending = pending;
}

const kds_producer_stats *kds_producer_stats_get(const kds_producer *p)
{
    return &p->stats;
}

kds_keys *kds_producer_keys(const kds_producer *p)
{
    return p->keys;
}

const kds_producer_cfg *kds_producer_cfg_get(const kds_producer *p)
{
    return &p->cfg;
}
