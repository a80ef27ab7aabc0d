/* kds_stream.c - shards, routing, write admission, shared read budget and retention
 * for the stream model of kds_stream.h. */
#include "kds_stream.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "kds_stream_int.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_units.h"

void kds_stream_cfg_defaults(kds_stream_cfg *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->name = "stream";
    cfg->mode = KDS_MODE_PROVISIONED;
    cfg->shards = 1;
    cfg->retention = SIM_HOUR(24);
    cfg->max_record_size = KDS_MIB;
    cfg->write_bytes_per_s = KDS_MIB;
    cfg->write_records_per_s = 1000;
    cfg->write_burst_s = 1.0;
    cfg->large_record_tank = 10 * KDS_MIB;
    cfg->large_record_refill = KDS_MIB;
    cfg->internal_failure_rate = 0.0;
    cfg->read_calls_per_s = 5;
    cfg->read_bytes_per_s = 2 * KDS_MIB;
    cfg->read_burst_s = 1.0;
    cfg->efo_burst_s = 1.0;
    cfg->max_records_per_call = 10000;
    cfg->max_bytes_per_call = 10 * KDS_MIB;
    cfg->big_read_penalty = SIM_S(5);
    cfg->short_read_penalty = SIM_S(1);
    cfg->iterator_ttl = SIM_MIN(5);
    cfg->compact_span = SIM_MIN(1);
    cfg->reshard_duration = SIM_S(30);
    cfg->update_count_duration = SIM_MIN(5);
    cfg->max_update_calls = 10;
    cfg->max_shards = 10000;
    cfg->series_buckets = KDS_SHARD_SERIES_BUCKETS;
    cfg->seconds_kept = KDS_STREAM_SECONDS_KEPT;
}

static uint64_t depth_of(uint64_t rate, double burst_s)
{
    double d = floor((double)rate * burst_s + 0.5);
    return d < 1.0 ? 1 : (uint64_t)d;
}

/* Every shard's per-minute series keep at most this many buckets: cfg.series_buckets
 * shared among the `shards` shards created so far (closed ones too: their minutes are
 * history the report shows), rounded down to a power of two so that it changes only
 * when the count doubles, at most SIM_SERIES_LIMIT. By default a stream of up to 128
 * shards keeps 11.4 days of minutes at full resolution, one of 10,000 shards 128
 * minutes; then minutes merge (sim_series). */
static size_t shard_series_limit(const kds_stream *st, size_t shards)
{
    size_t l = st->cfg.series_buckets / (shards ? shards : 1);
    size_t p = 1;
    while (p * 2 <= l && p * 2 <= SIM_SERIES_LIMIT)
        p *= 2;
    return p;
}

/* Whether a shard whose series keep `limit` buckets needs its offered minutes apart: a
 * run too short for them to merge does without, saving an add on every put. */
static bool needs_offered(const kds_stream *st, size_t limit)
{
    return st->cfg.horizon <= 0 || st->cfg.horizon > (sim_time)limit * SIM_MIN(1);
}

static void shard_series_set_limit(kds_shard_stats *s, size_t limit)
{
    sim_series *all[] = {&s->in_records_min, &s->in_bytes_min, &s->throttled_min,
                         &s->read_throttled_min, &s->out_bytes_min};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sim_series_set_limit(all[i], limit);
}

/* Add the pending minute of shard `sh` to its series (see kds_shard_stats.min_end). The
 * sums are of whole numbers below 2^53, so one add of a minute's total leaves the very
 * value its puts' adds one by one did; a series took an add in a minute exactly when
 * one of its puts did: one that stored records, for in_records_min and in_bytes_min,
 * and any, for offered_min. */
static void minute_flush(kds_shard *sh)
{
    kds_shard_stats *ss = &sh->st;
    if (ss->min_end == 0)
        return;
    uint64_t records = ss->records_in - ss->min_records;
    if (records > 0) {
        sim_series_add_sum(&ss->in_records_min, ss->min_t, (double)records);
        sim_series_add_sum(&ss->in_bytes_min, ss->min_t, (double)(ss->bytes_in - ss->min_bytes));
    }
    if (ss->track_offered) /* a zero add is harmless: the peak is the largest minute */
        sim_series_add_sum(&ss->offered_min, ss->min_t,
                           (double)(records + ss->write_throttled_records - ss->min_throttled));
    ss->min_end = 0;
}

void kds__shard_new_minute(kds_shard *sh, sim_time now)
{
    kds_shard_stats *ss = &sh->st;
    minute_flush(sh);
    ss->min_t = now;
    ss->min_end = (now / SIM_MIN(1) + 1) * SIM_MIN(1);
    ss->min_records = ss->records_in;
    ss->min_bytes = ss->bytes_in;
    ss->min_throttled = ss->write_throttled_records;
}

/* The same for the stream's pending second. */
static void second_flush(kds_stream *st)
{
    if (st->sec_end == 0)
        return;
    if (st->sec_records > 0) {
        /* The seconds feed the stream's minutes (kds_stream_init). */
        sim_series_add_sum(&st->st.in_records_s, st->sec_t, (double)st->sec_records);
        sim_series_add_sum(&st->st.in_bytes_s, st->sec_t, (double)st->sec_bytes);
    }
    st->sec_end = 0;
}

void kds__stream_new_second(kds_stream *st, sim_time now)
{
    second_flush(st);
    st->sec_t = now;
    st->sec_end = (now / SIM_S(1) + 1) * SIM_S(1);
    st->sec_records = 0;
    st->sec_bytes = 0;
}

/* The shard series' limit for one more shard: when it drops, every shard's series
 * merge down to it (a long run's first minutes merge; nothing is lost of a run too
 * short to fill the new limit). A shard that did without its offered minutes and now
 * may merge gets them from its minutes, still whole: its series have not merged, as
 * the run's horizon was within its old limit. */
static void shard_series_grow(kds_stream *st)
{
    size_t want = shard_series_limit(st, st->n_shards + 1 > st->cfg.shards ? st->n_shards + 1
                                                                          : st->cfg.shards);
    if (want >= st->shard_series_limit)
        return;
    st->shard_series_limit = want;
    for (size_t i = 0; i < st->n_shards; i++) {
        kds_shard_stats *s = &st->shards[i]->st;
        minute_flush(st->shards[i]); /* the series as the puts so far left them */
        if (!s->track_offered && needs_offered(st, want)) {
            s->track_offered = true;
            SIM_ASSERT(s->in_records_min.width == s->in_records_min.base &&
                       s->throttled_min.width == s->throttled_min.base);
            for (size_t m = 0; m < s->in_records_min.n || m < s->throttled_min.n; m++) {
                double v = sim_series_get(&s->in_records_min, m) +
                           sim_series_get(&s->throttled_min, m);
                int rc = sim_series_add_sum(&s->offered_min, (sim_time)m * SIM_MIN(1), v);
                SIM_ASSERT(rc == 0); /* one bucket: nothing to allocate past the first */
            }
        }
        shard_series_set_limit(s, want);
    }
}

static void series_init(kds_stream *st, kds_shard_stats *s)
{
    size_t limit = st->shard_series_limit;
    sim_series *all[] = {&s->in_records_min, &s->in_bytes_min, &s->throttled_min,
                         &s->read_throttled_min, &s->out_bytes_min};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sim_series_init(all[i], SIM_MIN(1), SIM_SERIES_SUM);
    shard_series_set_limit(s, limit);
    /* The stream's shared reads per minute, for AWS's sizing rule: fed (whole bytes,
     * exact sums in any order; the stream's minutes never merge). */
    sim_series_feed(&s->out_bytes_min, &st->st.out_bytes_min);
    /* One bucket: only its peak is read (report_capacity's hottest minute), which a
     * merged in_records_min + throttled_min could no longer give. A run too short for
     * them to merge does without it, saving an add on every put. */
    sim_series_init(&s->offered_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_set_limit(&s->offered_min, 1);
    s->track_offered = needs_offered(st, limit);
}

static void shard_free(kds_shard *sh)
{
    if (!sh)
        return;
    kds_log_fini(&sh->log);
    free(sh->on_append);
    sim_series_fini(&sh->st.in_records_min);
    sim_series_fini(&sh->st.in_bytes_min);
    sim_series_fini(&sh->st.throttled_min);
    sim_series_fini(&sh->st.read_throttled_min);
    sim_series_fini(&sh->st.offered_min);
    sim_series_fini(&sh->st.out_bytes_min);
    free(sh);
}

/* Make shard number n_shards with range [lo, hi], open, at the current time.
 * Internal to the stream model (kds_stream_int.h): resharding makes children with it. */
kds_shard *kds__shard_new(kds_stream *st, kds_hashkey lo, kds_hashkey hi)
{
    shard_series_grow(st);
    if (st->n_shards == st->cap_shards) {
        size_t ncap = st->cap_shards ? st->cap_shards * 2 : 8;
        kds_shard **ns = realloc(st->shards, ncap * sizeof *ns);
        if (!ns)
            return NULL;
        st->shards = ns;
        st->cap_shards = ncap;
    }
    kds_shard *sh = calloc(1, sizeof *sh);
    if (!sh)
        return NULL;
    const kds_stream_cfg *c = &st->cfg;
    sim_time now = sim_now(st->sim);
    sh->index = (uint32_t)st->n_shards;
    sh->state = KDS_SHARD_OPEN;
    sh->lo = lo;
    sh->hi = hi;
    sh->parent = -1;
    sh->adjacent_parent = -1;
    sh->children[0] = sh->children[1] = -1;
    sh->created = now;
    sh->closed = -1;
    kds_bucket_init(&sh->wbytes, c->write_bytes_per_s,
                    depth_of(c->write_bytes_per_s, c->write_burst_s), now);
    kds_bucket_init(&sh->wrecords, c->write_records_per_s,
                    depth_of(c->write_records_per_s, c->write_burst_s), now);
    kds_bucket_init(&sh->tank, c->large_record_refill, c->large_record_tank, now);
    kds_bucket_init(&sh->rcalls, c->read_calls_per_s,
                    depth_of(c->read_calls_per_s, c->read_burst_s), now);
    kds_bucket_init(&sh->rbytes, c->read_bytes_per_s,
                    depth_of(c->read_bytes_per_s, c->read_burst_s), now);
    if (c->read_records_per_s > 0)
        kds_bucket_init(&sh->rrecords, c->read_records_per_s,
                        depth_of(c->read_records_per_s, c->read_burst_s), now);
    sh->read_blocked_until = 0;
    kds_log_init(&sh->log, c->compact_span);
    /* What floors keep unmerged is bounded for the whole stream, not only per shard: a
     * consumer holding a floor on every shard of a large stream would otherwise keep
     * KDS_LOG_FLOOR_RUNS runs (1.5 MiB) on each. */
    size_t open = st->n_open + 1 > c->shards ? st->n_open + 1 : c->shards;
    size_t share = KDS_LOG_FLOOR_BUDGET / open;
    sh->log.floor_runs = share < KDS_LOG_FLOOR_MIN    ? KDS_LOG_FLOOR_MIN
                         : share > KDS_LOG_FLOOR_RUNS ? KDS_LOG_FLOOR_RUNS
                                                      : share;
    series_init(st, &sh->st);
    st->shards[st->n_shards++] = sh;
    return sh;
}

int kds_stream_init(kds_stream *st, sim *s, const kds_stream_cfg *cfg)
{
    memset(st, 0, sizeof *st);
    if (cfg->shards < 1 || cfg->shards > 100000 || cfg->retention <= 0 ||
        cfg->write_bytes_per_s < 1 || cfg->write_records_per_s < 1 || cfg->read_calls_per_s < 1 ||
        cfg->read_bytes_per_s < 1 || cfg->series_buckets < 1 || cfg->seconds_kept < 1)
        return SIM_EINVAL;
    st->cfg = *cfg;
    st->sim = s;
    char name[128];
    snprintf(name, sizeof name, "stream/%s", cfg->name);
    st->rng = sim_rng(s, name);
    st->shard_series_limit = shard_series_limit(st, cfg->shards);
    sim_series_init(&st->st.in_records_s, SIM_S(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.in_bytes_s, SIM_S(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.throttled_s, SIM_S(1), SIM_SERIES_SUM);
    sim_series_set_limit(&st->st.in_records_s, cfg->seconds_kept);
    sim_series_set_limit(&st->st.in_bytes_s, cfg->seconds_kept);
    sim_series_set_limit(&st->st.throttled_s, cfg->seconds_kept);
    sim_series_init(&st->st.in_records_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.in_bytes_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.throttled_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.read_throttled_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&st->st.out_bytes_min, SIM_MIN(1), SIM_SERIES_SUM);
    sim_series_init(&st->open_shards_min, SIM_MIN(1), SIM_SERIES_MAX);
    /* The stream's minutes are few and their busiest is billed: kept whole. */
    sim_series *mins[] = {&st->st.in_records_min, &st->st.in_bytes_min, &st->st.throttled_min,
                          &st->st.read_throttled_min, &st->st.out_bytes_min,
                          &st->open_shards_min};
    for (size_t i = 0; i < sizeof mins / sizeof *mins; i++)
        sim_series_set_limit(mins[i], KDS_STREAM_MINUTES_KEPT);
    /* Each second, once final, is added to its minute: the minutes stay exact however
     * far the seconds merge, for one add a second rather than one a put. */
    sim_series_feed(&st->st.in_records_s, &st->st.in_records_min);
    sim_series_feed(&st->st.in_bytes_s, &st->st.in_bytes_min);
    sim_series_feed(&st->st.throttled_s, &st->st.throttled_min);
    /* Before the shards: their series feed these. */
    st->open = malloc(cfg->shards * sizeof *st->open);
    if (!st->open)
        return SIM_ENOMEM;
    for (uint32_t i = 0; i < cfg->shards; i++) {
        kds_shard *sh = kds__shard_new(st, kds_hashkey_even_start(i, cfg->shards),
                                  kds_hashkey_even_end(i, cfg->shards));
        if (!sh) {
            kds_stream_fini(st);
            return SIM_ENOMEM;
        }
        st->open[i] = sh->index;
    }
    st->n_open = cfg->shards;
    st->topology_version = 1;
    sim_series_add(&st->open_shards_min, 0, (double)st->n_open);
    return 0;
}

/* The closed shards whose retention period has passed expire: their last records are
 * trimmed, their state becomes EXPIRED; then the event waits for the next one. */
static void expire_due(sim *s, void *ctx)
{
    kds_stream *st = ctx;
    sim_time now = sim_now(s);
    while (st->expiring_head < st->n_expiring) {
        kds_shard *sh = st->shards[st->expiring[st->expiring_head]];
        if (sh->closed + st->cfg.retention > now) {
            sim_at(s, sh->closed + st->cfg.retention, expire_due, st);
            return;
        }
        st->expiring_head++;
        kds_stream_trim(st, sh);
        sh->state = KDS_SHARD_EXPIRED;
        if (KDS_TRACING(st->trace, "reshard", st->cfg.name, sh->index))
            kds_trace_emit(st->trace, now, "reshard", st->cfg.name, sh->index,
                           "expired: the retention period has passed since it closed; its "
                           "records are gone and it is no longer listed");
    }
}

void kds__shard_close(kds_stream *st, kds_shard *sh)
{
    sh->state = KDS_SHARD_CLOSED;
    sh->closed = sim_now(st->sim);
    if (st->n_expiring == st->cap_expiring) {
        st->cap_expiring = st->cap_expiring ? st->cap_expiring * 2 : 8;
        st->expiring = realloc(st->expiring, st->cap_expiring * sizeof *st->expiring);
        SIM_ASSERT(st->expiring != NULL);
    }
    st->expiring[st->n_expiring++] = sh->index;
    /* The first in the queue has an event waiting, unless this is the first. */
    if (st->n_expiring - st->expiring_head == 1)
        sim_at(st->sim, sh->closed + st->cfg.retention, expire_due, st);
}

void kds_stream_fini(kds_stream *st)
{
    if (!st)
        return;
    free(st->expiring);
    for (size_t i = 0; i < st->n_shards; i++)
        shard_free(st->shards[i]);
    free(st->shards);
    free(st->open);
    free(st->listeners);
    for (size_t i = 0; i < st->n_ops; i++)
        free(st->ops[i]);
    free(st->ops);
    sim_series_fini(&st->open_shards_min);
    sim_series_fini(&st->st.in_records_s);
    sim_series_fini(&st->st.in_bytes_s);
    sim_series_fini(&st->st.throttled_s);
    sim_series_fini(&st->st.in_records_min);
    sim_series_fini(&st->st.in_bytes_min);
    sim_series_fini(&st->st.throttled_min);
    sim_series_fini(&st->st.read_throttled_min);
    sim_series_fini(&st->st.out_bytes_min);
    memset(st, 0, sizeof *st);
}

int kds_stream_on_new_shard(kds_stream *st, kds_shard_fn fn, void *ctx)
{
    kds_listener *nl = realloc(st->listeners, (st->n_listeners + 1) * sizeof *nl);
    if (!nl)
        return SIM_ENOMEM;
    st->listeners = nl;
    st->listeners[st->n_listeners++] = (kds_listener){fn, ctx};
    return 0;
}

int kds_shard_on_append(kds_shard *sh, kds_append_fn fn, void *ctx)
{
    kds_append_listener *nl = realloc(sh->on_append, (sh->n_on_append + 1) * sizeof *nl);
    if (!nl)
        return SIM_ENOMEM;
    sh->on_append = nl;
    sh->on_append[sh->n_on_append++] = (kds_append_listener){fn, ctx};
    return 0;
}

void kds__shard_notify_append_from(kds_shard *sh, size_t from)
{
    for (size_t i = from; i < sh->n_on_append; i++)
        sh->on_append[i].fn(sh->on_append[i].ctx, sh);
}

void kds_shard_off_append(kds_shard *sh, kds_append_fn fn, void *ctx)
{
    for (size_t i = 0; i < sh->n_on_append; i++)
        if (sh->on_append[i].fn == fn && sh->on_append[i].ctx == ctx) {
            memmove(&sh->on_append[i], &sh->on_append[i + 1],
                    (sh->n_on_append - i - 1) * sizeof *sh->on_append);
            sh->n_on_append--;
            return;
        }
}

size_t kds_stream_open_entry(const kds_stream *st, kds_hashkey key)
{
    /* The last open shard starting at or below key: the open ranges tile the key space
     * in order, so it is the one holding key. */
    size_t lo = 0, hi = st->n_open;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->shards[st->open[mid]]->lo <= key)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

kds_shard *kds_stream_route(const kds_stream *st, kds_hashkey key)
{
    kds_shard *sh = st->shards[st->open[kds_stream_open_entry(st, key)]];
    SIM_DEBUG_ASSERT(sh->lo <= key && key <= sh->hi);
    return sh;
}

char *kds_shard_id(char *buf, size_t n, uint32_t index)
{
    snprintf(buf, n, "shardId-%012" PRIu32, index);
    return buf;
}

char *kds_seqno(char *buf, size_t n, uint32_t index, uint64_t pos)
{
    /* "49" + the shard's index in 12 digits + the position in 42 digits: 56 digits,
     * growing with the position inside a shard and distinct across shards. */
    snprintf(buf, n, "49%012" PRIu32 "%042" PRIu64, index, pos);
    return buf;
}

char *kds_trace_seqnos(char *buf, size_t n, uint32_t index, uint64_t first, uint64_t count)
{
    char a[64], b[64];
    if (count == 0)
        snprintf(buf, n, "%s", "");
    else if (count == 1)
        snprintf(buf, n, "; sequence number %s", kds_seqno(a, sizeof a, index, first));
    else
        snprintf(buf, n, "; sequence numbers %s to %s", kds_seqno(a, sizeof a, index, first),
                 kds_seqno(b, sizeof b, index, first + count - 1));
    return buf;
}

void kds_stream_put(kds_stream *st, kds_shard *sh, uint32_t count, uint64_t bytes,
                    uint32_t dups, uint32_t marks, uint32_t src, kds_put_result *out)
{
    kds_stream_put_metered(st, sh, count, bytes, dups, marks, src, 0, 0, NULL, out);
    if (out->stored > 0)
        kds_shard_notify_append(sh);
}

uint32_t kds__stream_failures(kds_stream *st, gsl_rng *rng, uint32_t count)
{
    return gsl_ran_binomial(rng ? rng : st->rng, st->cfg.internal_failure_rate, count);
}

uint64_t kds__stream_admit_large(kds_shard *sh, sim_time now, uint64_t per, uint64_t k,
                                 uint32_t count, uint64_t bytes, uint64_t *sb)
{
    /* A record deeper than the byte bucket can ever hold draws on the large-record
     * tank instead (model.md section 2). It bursts beyond the byte budget, not beside
     * it: AWS keeps the shard's 1 MiB/s for large records, which "reduce the capacity
     * available for baseline traffic". So it is admitted only while the byte budget is
     * not overdrawn, and overdraws it by its size: smaller records then wait until the
     * budget has refilled, and the shard's sustained rate stays 1 MiB/s. */
    uint64_t kb =
        kds_bucket_in_debt(&sh->wbytes, now) ? 0 : kds_bucket_avail_lots(&sh->tank, now, per);
    if (kb < k)
        k = kb;
    *sb = k == count ? bytes : kds_prorate(bytes, k, count);
    kds_bucket_spend(&sh->wrecords, k);
    kds_bucket_spend(&sh->tank, *sb);
    kds_bucket_spend(&sh->wbytes, *sb); /* refilled to now by kds_bucket_in_debt */
    return k;
}

void kds__stream_throttled(kds_stream *st, kds_shard *sh, sim_time now, uint32_t throttled,
                           uint64_t per)
{
    kds_shard_stats *ss = &sh->st;
    ss->write_throttled_records += throttled;
    ss->write_throttled_bytes += per * throttled;
    sim_series_add_sum(&ss->throttled_min, now, throttled);
    sim_series_add_sum(&st->st.throttled_s, now, throttled);
}

static void read_throttled(kds_stream *st, kds_shard *sh, sim_time now, kds_read_limit why)
{
    sh->read_throttle_why = (uint8_t)why;
    sh->st.read_throttled_calls++;
    sim_series_add_sum(&sh->st.read_throttled_min, now, 1);
    sim_series_add_sum(&st->st.read_throttled_min, now, 1);
}

bool kds_stream_read_admit(kds_stream *st, kds_shard *sh)
{
    sim_time now = sim_now(st->sim);
    if (now < sh->read_blocked_until) {
        read_throttled(st, sh, now, KDS_READ_IN_PENALTY);
        return false;
    }
    /* An overdrawn budget, of bytes or (when that limit is on) of records. */
    bool bytes = kds_bucket_in_debt(&sh->rbytes, now);
    if (bytes || (st->cfg.read_records_per_s > 0 && kds_bucket_in_debt(&sh->rrecords, now))) {
        sh->read_blocked_until = now + st->cfg.short_read_penalty;
        sh->read_block_why = (uint8_t)(bytes ? KDS_READ_BYTES : KDS_READ_RECORDS);
        read_throttled(st, sh, now, (kds_read_limit)sh->read_block_why);
        return false;
    }
    if (!kds_bucket_take(&sh->rcalls, now, 1)) {
        read_throttled(st, sh, now, KDS_READ_CALLS);
        return false;
    }
    sh->st.read_calls++;
    return true;
}

void kds_stream_read_charge(kds_stream *st, kds_shard *sh, uint64_t records, uint64_t bytes)
{
    sim_time now = sim_now(st->sim);
    kds_bucket_charge(&sh->rbytes, now, bytes);
    if (st->cfg.read_records_per_s > 0)
        kds_bucket_charge(&sh->rrecords, now, records);
    sh->st.bytes_out += bytes;
    sh->st.records_out += records;
    if (bytes > 0)
        sim_series_add_sum(&sh->st.out_bytes_min, now, (double)bytes);
    /* A call that returned the 10 MiB limit (to within one record: calls return whole
     * records) opens the throttled window. */
    uint64_t per = records ? bytes / records : 0;
    if (records > 0 && bytes + per >= st->cfg.max_bytes_per_call) {
        sh->read_blocked_until = now + st->cfg.big_read_penalty;
        sh->read_block_why = KDS_READ_BIG_CALL;
    }
}

char *kds_trace_read_limit(char *buf, size_t n, const kds_stream *st, const kds_shard *sh)
{
    const kds_stream_cfg *c = &st->cfg;
    char b[48], d[32]; /* b holds d's text and "/s" */
    bool window = sh->read_throttle_why == KDS_READ_IN_PENALTY;
    switch (window ? sh->read_block_why : sh->read_throttle_why) {
    case KDS_READ_CALLS:
        snprintf(buf, n, "the shard's %" PRIu64 " GetRecords calls/s are spent",
                 c->read_calls_per_s);
        break;
    case KDS_READ_BYTES:
    case KDS_READ_RECORDS:
        if (sh->read_block_why == KDS_READ_BYTES)
            snprintf(b, sizeof b, "%s/s", sim_fmt_bytes(d, sizeof d, c->read_bytes_per_s));
        else
            snprintf(b, sizeof b, "%" PRIu64 " records/s", c->read_records_per_s);
        kds_trace_dur(d, sizeof d, c->short_read_penalty);
        if (window)
            snprintf(buf, n, "within the %s penalty after the shard's read budget of %s was "
                     "overdrawn", d, b);
        else
            snprintf(buf, n, "the shard's read budget of %s is overdrawn: its calls are "
                     "refused for %s", b, d);
        break;
    default:
        snprintf(buf, n, "within the %s penalty after a call returned %s",
                 kds_trace_dur(d, sizeof d, c->big_read_penalty),
                 sim_fmt_bytes(b, sizeof b, c->max_bytes_per_call));
        break;
    }
    return buf;
}

void kds__stream_trim(kds_stream *st, kds_shard *sh)
{
    sim_time now = sim_now(st->sim);
    if (now < st->cfg.retention)
        return;
    sh->st.records_expired += kds_log_trim(&sh->log, now - st->cfg.retention);
}

uint64_t kds__stream_bytes_over_7d(const kds_stream *st, const kds_log *l, uint64_t end,
                                   const kds_take *tk)
{
    sim_time now = sim_now(st->sim);
    if (now <= KDS_LONG_TERM_AGE)
        return 0;
    sim_time cutoff = now - KDS_LONG_TERM_AGE;
    if (tk->t_last <= cutoff)
        return tk->bytes; /* the newest record taken is old: all of them are */
    return kds_log_bytes_range_before(l, end - tk->records, end, cutoff);
}

void kds_stream_meter_retention(kds_stream *st)
{
    sim_time now = sim_now(st->sim);
    double hours = sim_to_s(now - st->last_meter) / 3600.0;
    st->last_meter = now;
    if (hours <= 0 || now <= SIM_HOUR(24))
        return; /* nothing is older than 24 h yet: every band holds 0 */
    /* The run calls this every simulated hour, AWS's own billing granularity. A band
     * fills (and, after a pause in the writes, empties) over time, so the bytes it
     * holds are the average of the interval's two ends, not the amount at its end:
     * exact while the write rate that fed the band was constant. */
    for (size_t i = 0; i < st->n_shards; i++) {
        kds_shard *sh = st->shards[i];
        kds_stream_trim(st, sh);
        uint64_t over_24h =
            kds_log_bytes_written_before(&sh->log, now - SIM_HOUR(24), &sh->meter_24h);
        uint64_t over_7d = now > SIM_DAY(7) ? kds_log_bytes_written_before(
                                                  &sh->log, now - SIM_DAY(7), &sh->meter_7d)
                                            : 0;
        kds_shard_stats *ss = &sh->st;
        ss->byte_hours_24h_7d +=
            ((double)ss->held_24h_7d + (double)(over_24h - over_7d)) / 2 * hours;
        ss->byte_hours_over_7d += ((double)ss->held_over_7d + (double)over_7d) / 2 * hours;
        ss->held_24h_7d = over_24h - over_7d;
        ss->held_over_7d = over_7d;
    }
}

double kds_shard_hours(const kds_stream *st, const kds_shard *sh, sim_time end)
{
    return sim_to_s(kds_shard_billed_ns(st, sh, sh->created, end)) / 3600.0;
}

double kds_stream_consumer_shard_hours(const kds_stream *st, sim_time from, sim_time end)
{
    double hours = 0;
    for (size_t i = 0; i < st->n_shards; i++) {
        sim_time ns = kds_shard_billed_ns(st, st->shards[i], from, end);
        if (ns > 0)
            hours += sim_to_s(ns) / 3600.0;
    }
    return hours;
}

void kds_stream_finish(kds_stream *st, sim_time end)
{
    kds_stream_meter_retention(st);
    second_flush(st);
    for (size_t i = 0; i < st->n_shards; i++) {
        kds_shard *sh = st->shards[i];
        minute_flush(sh);
        kds_stream_trim(st, sh);
        sim_series_extend(&sh->st.in_records_min, end);
        sim_series_extend(&sh->st.in_bytes_min, end);
        sim_series_extend(&sh->st.throttled_min, end);
        sim_series_extend(&sh->st.read_throttled_min, end);
        sim_series_extend(&sh->st.out_bytes_min, end);
        int frc = sim_series_flush(&sh->st.out_bytes_min);
        SIM_ASSERT(frc == 0); /* out of memory for the stream's minutes: fatal */
    }
    sim_series_extend(&st->st.in_records_s, end);
    sim_series_extend(&st->st.in_bytes_s, end);
    sim_series_extend(&st->st.throttled_s, end);
    int rc = sim_series_flush(&st->st.in_records_s);
    rc |= sim_series_flush(&st->st.in_bytes_s);
    rc |= sim_series_flush(&st->st.throttled_s);
    SIM_ASSERT(rc == 0); /* out of memory for the minutes: fatal, as a series add is */
    sim_series_extend(&st->st.in_records_min, end);
    sim_series_extend(&st->st.in_bytes_min, end);
    sim_series_extend(&st->st.throttled_min, end);
    sim_series_extend(&st->st.read_throttled_min, end);
    sim_series_extend(&st->st.out_bytes_min, end);
    sim_series_add(&st->open_shards_min, end > 0 ? end - 1 : 0, (double)st->n_open);
    sim_series_extend(&st->open_shards_min, end);
    (void)sim_series_flush(&st->open_shards_min); /* every bucket in v, for the loop
                                                    * below; feeds nothing */
    /* Minutes without a change hold the count of the minute before (a stream always
     * has an open shard, so 0 means "no sample"). */
    for (size_t i = 1; i < st->open_shards_min.n; i++)
        if (st->open_shards_min.v[i] == 0)
            st->open_shards_min.v[i] = st->open_shards_min.v[i - 1];
}
