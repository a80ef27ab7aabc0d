/* report.c - JSON, text and CSV reports of a finished world (report.h). */
#include "report.h"
#include "report_int.h"
#include "report_kcl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "html.h"
#include "kds_hashkey.h"
#include "kds_log.h"
#include "outdir.h"
#include "sim_err.h"
#include "sim_units.h"

/* Reals are rounded to 3 decimals before printing: enough for milliseconds, and it
 * keeps the JSON short and free of binary-fraction noise. */
json_t *kdsim_real3(double x)
{
    if (!isfinite(x))
        return json_null();
    return json_real(round(x * 1000.0) / 1000.0);
}

static json_t *real3(double x)
{
    return kdsim_real3(x);
}

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

/* A consumer's latency figures; null, each, for a consumer that delivered no record: a
 * latency of nothing is not defined, and 0 would read as an instant delivery. */
static json_t *latency_json(const sim_hist *h)
{
    json_t *o = json_object();
    bool any = h->weight > 0;
    json_object_set_new(o, "mean", any ? real3(sim_hist_mean(h)) : json_null());
    json_object_set_new(o, "p50", any ? real3(sim_hist_quantile(h, 0.50)) : json_null());
    json_object_set_new(o, "p90", any ? real3(sim_hist_quantile(h, 0.90)) : json_null());
    json_object_set_new(o, "p99", any ? real3(sim_hist_quantile(h, 0.99)) : json_null());
    json_object_set_new(o, "max", any ? real3(h->max) : json_null());
    return o;
}

static json_t *shard_json(const kds_stream *st, const kds_shard *sh)
{
    char id[32], dec[KDS_HASHKEY_DEC_LEN];
    json_t *o = json_object();
    json_object_set_new(o, "shard_id", json_string(kds_shard_id(id, sizeof id, sh->index)));
    json_object_set_new(o, "parent_shard_id",
                        sh->parent >= 0
                            ? json_string(kds_shard_id(id, sizeof id, (uint32_t)sh->parent))
                            : json_null());
    json_object_set_new(
        o, "adjacent_parent_shard_id",
        sh->adjacent_parent >= 0
            ? json_string(kds_shard_id(id, sizeof id, (uint32_t)sh->adjacent_parent))
            : json_null());
    json_object_set_new(o, "starting_hash_key", json_string(kds_hashkey_to_dec(dec, sh->lo)));
    json_object_set_new(o, "ending_hash_key", json_string(kds_hashkey_to_dec(dec, sh->hi)));
    json_object_set_new(o, "state", json_string(kds_shard_state_name(sh->state)));
    const kds_shard_stats *s = &sh->st;
    json_object_set_new(o, "records_in", u64(s->records_in));
    json_object_set_new(o, "bytes_in", u64(s->bytes_in));
    json_object_set_new(o, "write_throttled_records", u64(s->write_throttled_records));
    json_object_set_new(o, "records_failed_internal", u64(s->records_failed_internal));
    json_object_set_new(o, "read_calls", u64(s->read_calls));
    json_object_set_new(o, "read_throttled_calls", u64(s->read_throttled_calls));
    json_object_set_new(o, "records_out", u64(s->records_out));
    json_object_set_new(o, "bytes_out", u64(s->bytes_out));
    json_object_set_new(o, "records_expired", u64(s->records_expired));
    json_object_set_new(o, "records_retained", u64(sh->log.end_pos - sh->log.head_pos));
    json_object_set_new(o, "bytes_retained", u64(sh->log.bytes));
    json_object_set_new(o, "put_payload_units", u64(s->put_units));
    json_object_set_new(o, "bytes_in_kib_rounded", u64(s->bytes_in_kib_rounded));
    json_object_set_new(o, "shard_hours", real3(kds_shard_hours(st, sh, sim_now(st->sim))));
    json_object_set_new(o, "retained_gib_hours_24h_7d",
                        real3(s->byte_hours_24h_7d / (double)(1ULL << 30)));
    json_object_set_new(o, "retained_gib_hours_over_7d",
                        real3(s->byte_hours_over_7d / (double)(1ULL << 30)));
    return o;
}

static json_t *stream_json(const kds_world *w)
{
    const kds_stream *st = &w->stream;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(st->cfg.name));
    json_object_set_new(o, "mode", json_string(kds_mode_name(st->cfg.mode)));
    json_object_set_new(o, "retention_h", real3(sim_to_s(st->cfg.retention) / 3600.0));
    json_object_set_new(o, "max_record_size_bytes", u64(st->cfg.max_record_size));
    json_object_set_new(o, "open_shards", u64(st->n_open));
    uint64_t rin = 0, bin = 0, thr = 0, rthr = 0, rcalls = 0;
    json_t *arr = json_array();
    for (size_t i = 0; i < st->n_shards; i++) {
        const kds_shard *sh = st->shards[i];
        rin += sh->st.records_in;
        bin += sh->st.bytes_in;
        thr += sh->st.write_throttled_records;
        rthr += sh->st.read_throttled_calls;
        rcalls += sh->st.read_calls;
        json_array_append_new(arr, shard_json(st, sh));
    }
    json_object_set_new(o, "records_in", u64(rin));
    json_object_set_new(o, "bytes_in", u64(bin));
    json_object_set_new(o, "write_throttled_records", u64(thr));
    json_object_set_new(o, "read_calls", u64(rcalls));
    json_object_set_new(o, "read_throttled_calls", u64(rthr));
    json_object_set_new(o, "peak_records_per_s", real3(sim_series_max(&st->st.in_records_s)));
    json_object_set_new(o, "peak_bytes_per_s", real3(sim_series_max(&st->st.in_bytes_s)));
    json_object_set_new(o, "shards", arr);
    json_object_set_new(o, "reshards", kdsim_reshards_json(w));
    json_object_set_new(o, "capacity", kdsim_capacity_json(w));
    json_object_set_new(o, "hot", kdsim_hot_json(w));
    return o;
}

static json_t *producer_json(const kds_producer *p)
{
    const kds_producer_cfg *c = kds_producer_cfg_get(p);
    const kds_producer_stats *s = kds_producer_stats_get(p);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "api",
                        json_string(c->api == KDS_API_PUT_RECORDS ? "PutRecords" : "PutRecord"));
    json_object_set_new(o, "aggregate", json_integer(c->aggregate > 1 ? c->aggregate : 1));
    if (c->ordered) /* only then: the reports of other scenarios stay as they were */
        json_object_set_new(o, "sequence_number_for_ordering", json_true());
    json_object_set_new(o, "records_attempted", u64(s->records_attempted));
    json_object_set_new(o, "records_written", u64(s->records_written));
    json_object_set_new(o, "write_throttled_records", u64(s->write_throttled_records));
    json_object_set_new(o, "records_failed_internal", u64(s->records_failed_internal));
    json_object_set_new(o, "records_given_up", u64(s->records_given_up));
    json_object_set_new(o, "records_too_large", u64(s->records_too_large));
    json_object_set_new(o, "duplicates_written", u64(s->duplicates_written));
    json_object_set_new(o, "records_retried", u64(s->records_retried));
    json_object_set_new(o, "put_calls", u64(s->put_calls));
    json_object_set_new(o, "calls_timed_out", u64(s->calls_timed_out));
    json_object_set_new(o, "records_in_flight", u64(s->records_in_flight));
    json_object_set_new(o, "records_buffered", u64(s->records_buffered));
    return o;
}

static void add_figure(void *arg, const char *key, double value)
{
    json_object_set_new((json_t *)arg, key, real3(value));
}

/* Whether consumer c ever read: it delivered a record, made a GetRecords call that was let
 * through, had an enhanced fan-out subscription (its figures' "subscriptions") or saw an
 * iterator age above 0. The rule of a plan's figure (figures.c ever_read), on the run's own
 * counts. Without any of those its iterator age is not defined: 0 would say "caught up". */
static bool ever_read(const kds_consumer_stats *s, const json_t *figs)
{
    json_int_t subs = json_integer_value(json_object_get(figs, "subscriptions"));
    return s->records_delivered > 0 || s->getrecords_calls > s->read_throttled_calls ||
           subs > 0 || s->iterator_age_ms_max > 0;
}

static json_t *consumer_json(const kds_consumer *c)
{
    const kds_consumer_stats *s = &c->st;
    json_t *figs = NULL;
    if (c->ops->figures) {
        figs = json_object();
        c->ops->figures(c, add_figure, figs);
    }
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->name));
    json_object_set_new(o, "kind", json_string(c->ops->kind));
    json_object_set_new(o, "records_delivered", u64(s->records_delivered));
    json_object_set_new(o, "bytes_delivered", u64(s->bytes_delivered));
    json_object_set_new(o, "duplicates_delivered", u64(s->duplicates_delivered));
    json_object_set_new(o, "records_expired_unread", u64(s->records_expired_unread));
    json_object_set_new(o, "records_unread", u64(s->records_unread));
    json_object_set_new(o, "records_skipped_at_start", u64(s->records_skipped_at_start));
    json_object_set_new(o, "latency_ms", latency_json(&s->latency_ms));
    bool read = ever_read(s, figs);
    json_object_set_new(o, "iterator_age_ms_max",
                        read ? real3(s->iterator_age_ms_max) : json_null());
    if (!read) {
        /* The kinds' own ages (Lambda's IteratorAge, MillisBehindLatest) are no more
         * defined than the consumer's. */
        static const char *const ages[] = {"iterator_age_ms_max", "millis_behind_latest_max"};
        for (size_t k = 0; k < sizeof ages / sizeof ages[0]; k++)
            if (json_object_get(figs, ages[k]))
                json_object_set_new(figs, ages[k], json_null());
    }
    json_object_set_new(o, "getrecords_calls", u64(s->getrecords_calls));
    json_object_set_new(o, "read_throttled_calls", u64(s->read_throttled_calls));
    json_object_set_new(o, "empty_calls", u64(s->empty_calls));
    json_object_set_new(o, "iterator_refreshes", u64(s->iterator_refreshes));
    json_object_set_new(o, "bytes_read_shared", u64(s->bytes_read_shared));
    json_object_set_new(o, "bytes_read_efo", u64(s->bytes_read_efo));
    json_object_set_new(o, "children_started", u64(s->children_started));
    json_object_set_new(o, "child_wait_ms_max", real3(s->child_wait_ms_max));
    json_object_set_new(
        o, "child_wait_ms_mean",
        real3(s->children_started ? s->child_wait_ms_sum / (double)s->children_started : 0));
    if (figs)
        json_object_set_new(o, "figures", figs);
    kdsim_kcl_json(c, o); /* KCL consumers: workers, lease moves, lease table (report_kcl.c) */
    return o;
}

static void assume(json_t *arr, const char *setting, const char *value, const char *why)
{
    json_t *o = json_object();
    json_object_set_new(o, "setting", json_string(setting));
    json_object_set_new(o, "value", json_string(value));
    json_object_set_new(o, "why", json_string(why));
    json_array_append_new(arr, o);
}


struct consumer_assume {
    json_t *arr;
    size_t index;
};

static void consumer_assume(void *arg, const char *key, const char *value, const char *why)
{
    struct consumer_assume *ca = arg;
    char k[200];
    snprintf(k, sizeof k, "consumers[%zu].%s", ca->index, key);
    assume(ca->arr, k, value, why);
}

/* Every number the run used that AWS does not publish, and every simplification. */
static json_t *assumptions_json(const kds_world *w)
{
    json_t *a = json_array();
    const kds_stream_cfg *s = &w->stream.cfg;
    char v[160];
    sim_fmt_duration(v, sizeof v, (sim_time)llround(s->write_burst_s * 1e9));
    assume(a, "stream.limits.write_burst", v,
           "depth of the per-shard write token buckets; AWS documents a bucket about one "
           "second deep, not its exact depth");
    sim_fmt_bytes(v, sizeof v, s->large_record_tank);
    assume(a, "stream.limits.large_record_tank", v,
           "depth of the per-shard burst tank that lets records larger than the byte bucket "
           "in; AWS says large records borrow from a tank (its quota page's PutRecord row "
           "says 10 MiB), not how deep it is");
    sim_fmt_bytes(v, sizeof v, s->large_record_refill);
    strcat(v, "/s");
    assume(a, "stream.limits.large_record_refill", v,
           "refill rate of the large-record burst tank; AWS says only that it refills at a "
           "steady rate; a record larger than the byte bucket is taken only while the "
           "shard's byte budget is not overdrawn, and overdraws it by its size");
    sim_fmt_duration(v, sizeof v, (sim_time)llround(s->read_burst_s * 1e9));
    assume(a, "stream.limits.read_burst", v, "depth of the per-shard read token buckets");
    bool efo = false;
    for (size_t i = 0; i < w->n_consumers; i++)
        efo = efo || w->consumers[i]->st.efo_registered >= 0;
    if (efo) {
        sim_fmt_duration(v, sizeof v, (sim_time)llround(s->efo_burst_s * 1e9));
        assume(a, "stream.limits.efo_burst", v,
               "depth of each enhanced fan-out consumer's own 2 MiB/s token bucket on a "
               "shard; AWS gives the rate, not the depth");
    }
    for (size_t i = 0; i < w->n_producers; i++) {
        const kds_producer_cfg *c = kds_producer_cfg_get(w->producers[i]);
        char key[200];
        snprintf(key, sizeof key, "producers[%zu].latency", i);
        assume(a, key, kds_dist_text(v, sizeof v, &c->latency_ms, "ms"),
               "PutRecords round trip; AWS says tens of milliseconds");
    }
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_consumer *c = w->consumers[i];
        if (!c->ops->assumptions)
            continue;
        struct consumer_assume ca = {a, i};
        c->ops->assumptions(c, consumer_assume, &ca);
    }
    assume(a, "model", "record sizes within one request are equal",
           "a PutRecords sub-batch for one shard is admitted as records of its average size");
    assume(a, "model", "the service stores records when the reply is sent",
           "a request's records are written one round trip after the send");
    char spans[768];
    snprintf(spans, sizeof spans,
             "exact counts and bytes are kept, and as no span crosses a whole minute, "
             "retention expires them exactly at each whole minute (the hourly retention "
             "meters and the end of a run of whole minutes); a reader that goes back over "
             "them sees their write times spread evenly over the span, but the readers "
             "that may do so hold the shard from where they will read, for the first %zu "
             "requests a shard (%zu at most, %zu in all over the open shards): a consumer "
             "yet to start or to reach a child shard from its start, a KCL lease's next "
             "owner at its checkpoint and a restarted Flink job at its own",
             w->stream.n_shards ? w->stream.shards[0]->log.floor_runs : (size_t)0,
             (size_t)KDS_LOG_FLOOR_RUNS, KDS_LOG_FLOOR_BUDGET);
    assume(a, "model", "records every reader has passed merge into one-minute spans", spans);
    if (w->n_producers > 0 && (s->shards > 1 || w->stream.n_ops > 0))
        assume(a, "model", "large spreads over the shards are drawn from a normal law",
               "a request's records are split over the shards by binomial draws, those of "
               "large variance from the normal law of the same mean and variance");
    uint64_t rerouted = 0;
    for (size_t i = 0; i < w->n_producers; i++)
        rerouted += kds_producer_stats_get(w->producers[i])->records_rerouted;
    if (rerouted > 0) {
        snprintf(v, sizeof v, "%" PRIu64 " record resend%s to one child", rerouted,
                 rerouted == 1 ? "" : "s");
        assume(a, "model", v,
               "a retried part of a request whose shard a reshard closed in the meantime goes "
               "whole to the open shard holding the middle of the closed shard's range, where "
               "AWS would route each record on its own");
    }
    const kds_capacity_stats *cst = kds_capacity_stats_get(w->capacity);
    if (s->mode != KDS_MODE_PROVISIONED || cst->mode_switches > 0) {
        const kds_ondemand_cfg *o = &kds_capacity_cfg_get(w->capacity)->od;
        snprintf(v, sizeof v, "%g", o->peak_factor);
        assume(a, "stream.on_demand.peak_factor", v,
               "on-demand capacity kept for this many times the peak write rate of the "
               "look-back window (AWS: twice the previous 30 days' peak)");
        sim_fmt_duration(v, sizeof v, o->scale_delay);
        assume(a, "stream.on_demand.scale_delay", v,
               "time for an on-demand stream to grow to new capacity (AWS: about 15 minutes)");
        sim_fmt_bytes(v, sizeof v, o->hot_shard_bytes);
        strcat(v, "/s");
        assume(a, "stream.on_demand.hot_shard_above", v,
               "a shard written faster than this is split (AWS: 500 KiB/s)");
        sim_fmt_duration(v, sizeof v, o->hot_shard_delay);
        assume(a, "stream.on_demand.hot_shard_delay", v,
               "time until such a split is done (AWS: about 15 minutes)");
        sim_fmt_duration(v, sizeof v, o->scale_down_delay);
        assume(a, "stream.on_demand.scale_down_delay", v,
               "capacity in excess this long before the stream shrinks (AWS publishes no "
               "figure)");
        assume(a, "model", "on-demand capacity is checked once a minute",
               "on the write rate offered in the minute before (stored plus throttled)");
    }
    if (w->stream.n_ops > 0) {
        sim_fmt_duration(v, sizeof v, s->reshard_duration);
        assume(a, "stream.resharding.duration", v,
               "the stream is UPDATING this long after SplitShard or MergeShards (AWS: "
               "seconds to minutes)");
        sim_fmt_duration(v, sizeof v, s->update_count_duration);
        assume(a, "stream.resharding.update_shard_count_duration", v,
               "UPDATING time of UpdateShardCount (AWS: minutes)");
        bool scaled = false;
        for (size_t i = 0; i < w->stream.n_ops; i++)
            scaled |= w->stream.ops[i]->kind == KDS_OP_UPDATE_COUNT &&
                      w->stream.ops[i]->completed >= 0;
        if (scaled)
            assume(a, "model", "UpdateShardCount and on-demand growth happen at once",
                   "at the end of their UPDATING time, through splits and merges that leave "
                   "zero-length intermediate shards");
    }
    return a;
}

static void seed_entry(void *arg, const char *name, uint32_t seed)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "seed", json_integer(seed));
    json_array_append_new((json_t *)arg, o);
}

json_t *kdsim_report_json(const kdsim_scenario *sc, const kds_world *w)
{
    json_t *r = json_object();
    if (!r)
        return NULL;
    json_object_set_new(r, "kdsim_version", json_string(KDSIM_VERSION));
    json_object_set_new(r, "scenario", json_string(sc->name));
    json_object_set_new(r, "description", json_string(sc->description));
    json_object_set_new(r, "seed", json_integer((json_int_t)w->cfg->seed));
    json_object_set_new(r, "duration_s", real3(sim_to_s(w->cfg->duration)));
    if (sc->n_inputs > 0) {
        json_t *in = json_array();
        for (size_t i = 0; i < sc->n_inputs; i++) {
            json_t *o = json_object();
            json_object_set_new(o, "key", json_string(sc->inputs[i].key));
            json_object_set_new(o, "file", json_string(sc->inputs[i].file));
            json_array_append_new(in, o);
        }
        json_object_set_new(r, "inputs", in);
    }
    json_object_set_new(r, "events", u64(sim_events_run(w->sim)));
    json_object_set_new(r, "stream", stream_json(w));
    json_t *ps = json_array();
    for (size_t i = 0; i < w->n_producers; i++)
        json_array_append_new(ps, producer_json(w->producers[i]));
    json_object_set_new(r, "producers", ps);
    json_t *cs = json_array();
    for (size_t i = 0; i < w->n_consumers; i++)
        json_array_append_new(cs, consumer_json(w->consumers[i]));
    json_object_set_new(r, "consumers", cs);
    json_t *cost = kdsim_cost_json(sc, w);
    if (!cost) {
        json_decref(r);
        return NULL;
    }
    json_object_set_new(r, "cost", cost);
    json_object_set_new(r, "assumptions", assumptions_json(w));
    json_t *seeds = json_array();
    sim_rng_each(w->sim, seed_entry, seeds);
    for (size_t i = 0; i < sc->n_rngs; i++) /* the loader's, drawn before the run */
        seed_entry(seeds, sc->rngs[i].name, sc->rngs[i].seed);
    json_t *rng = json_object();
    json_object_set_new(rng, "generator", json_string("taus2"));
    json_object_set_new(rng, "streams", seeds);
    json_object_set_new(r, "random", rng);
    return r;
}

char *kdsim_report_dump(const json_t *report)
{
    char *s = json_dumps(report, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = 0;
    return t;
}

/* ---- text report ------------------------------------------------------------------ */

/* Print text wrapped at `width` columns on word boundaries; newlines in the text are
 * kept as paragraph breaks. */
static void wrap_indent(FILE *out, const char *text, int width, int indent);

static void wrap(FILE *out, const char *text, int width)
{
    wrap_indent(out, text, width, 0);
}

/* The same, with continuation lines indented by `indent` spaces. */
static void wrap_indent(FILE *out, const char *text, int width, int indent)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        if (*p == '\n') {
            fputc('\n', out);
            col = 0;
            p++;
            continue;
        }
        if (*p == ' ') {
            p++;
            continue;
        }
        int len = 0;
        while (p[len] && p[len] != ' ' && p[len] != '\n')
            len++;
        if (col > 0 && col + 1 + len > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        }
        if (col > 0) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, (size_t)len, out);
        col += len;
        p += len;
    }
    if (col > 0)
        fputc('\n', out);
}

void kdsim_report_text(const json_t *r, FILE *out)
{
    char dur[32], b[32];
    sim_fmt_duration(dur, sizeof dur, (sim_time)llround(jr(r, "duration_s") * 1e9));
    fprintf(out, "kdsim %s: scenario %s, seed %" PRIu64 ", %s simulated\n", js(r, "kdsim_version"),
            js(r, "scenario"), ju(r, "seed"), dur);
    /* The generator and the seeds derived from the master seed and each entity's name
     * (style-anchors R8): the first few here, every one in the JSON report. */
    const json_t *rnd = json_object_get(r, "random");
    const json_t *streams = json_object_get(rnd, "streams");
    size_t n_streams = json_array_size(streams);
    if (n_streams > 0) {
        enum { SHOWN = 6 };
        char line[1024];
        int len = snprintf(line, sizeof line, "random streams (%s, seeded from %" PRIu64
                                              " and each name):", js(rnd, "generator"),
                           ju(r, "seed"));
        for (size_t k = 0; k < n_streams && k < SHOWN && len > 0 && (size_t)len < sizeof line;
             k++) {
            const json_t *e = json_array_get(streams, k);
            len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %" PRIu64,
                            k ? "," : "", js(e, "name"), ju(e, "seed"));
        }
        if (n_streams > SHOWN && len > 0 && (size_t)len < sizeof line)
            snprintf(line + len, sizeof line - (size_t)len,
                     ", and %zu more (the JSON report's random.streams)", n_streams - SHOWN);
        wrap(out, line, 88);
    }
    size_t i;
    const json_t *in;
    json_array_foreach(json_object_get(r, "inputs"), i, in)
        fprintf(out, "  input %s: %s\n", js(in, "key"), js(in, "file"));
    const char *desc = js(r, "description");
    if (*desc) {
        fputc('\n', out);
        wrap(out, desc, 88);
    }

    const json_t *st = json_object_get(r, "stream");
    char ret[32];
    sim_fmt_duration(ret, sizeof ret, (sim_time)llround(jr(st, "retention_h") * 3600e9));
    fprintf(out, "\nStream %s: %s, %" PRIu64 " open shard%s, retention %s\n", js(st, "name"),
            js(st, "mode"), ju(st, "open_shards"), ju(st, "open_shards") == 1 ? "" : "s", ret);
    double secs = jr(r, "duration_s");
    fprintf(out, "  written %" PRIu64 " records (%s), %.1f records/s on average, peak %.0f/s\n",
            ju(st, "records_in"), sim_fmt_bytes(b, sizeof b, ju(st, "bytes_in")),
            secs > 0 ? (double)ju(st, "records_in") / secs : 0, jr(st, "peak_records_per_s"));
    fprintf(out, "  %-22s %12s %12s %12s %10s %10s %10s\n", "shard", "records in", "bytes in",
            "write thr.", "reads", "read thr.", "expired");
    const json_t *sh;
    json_array_foreach(json_object_get(st, "shards"), i, sh)
    {
        fprintf(out, "  %-22s %12" PRIu64 " %12s %12" PRIu64 " %10" PRIu64 " %10" PRIu64
                     " %10" PRIu64 "%s\n",
                js(sh, "shard_id"), ju(sh, "records_in"),
                sim_fmt_bytes(b, sizeof b, ju(sh, "bytes_in")), ju(sh, "write_throttled_records"),
                ju(sh, "read_calls"), ju(sh, "read_throttled_calls"), ju(sh, "records_expired"),
                !strcmp(js(sh, "state"), "OPEN")      ? ""
                : !strcmp(js(sh, "state"), "EXPIRED") ? " (expired)"
                                                      : " (closed)");
    }

    const json_t *ops = json_object_get(st, "reshards");
    if (json_array_size(ops) > 0) {
        fprintf(out, "\nResharding\n");
        const json_t *op;
        json_array_foreach(ops, i, op)
        {
            char at[32];
            sim_fmt_duration(at, sizeof at, (sim_time)llround(jr(op, "requested_s") * 1e9));
            fprintf(out, "  at %-8s %-17s (%s): %s", at, js(op, "operation"), js(op, "cause"),
                    js(op, "status"));
            if (*js(op, "message"))
                fprintf(out, ": %s", js(op, "message"));
            const json_t *ch = json_object_get(op, "children");
            if (json_array_size(ch) > 0) {
                char done[32];
                sim_fmt_duration(done, sizeof done,
                                 (sim_time)llround(jr(op, "completed_s") * 1e9));
                fprintf(out, ", done at %s, %zu new shard%s", done, json_array_size(ch),
                        json_array_size(ch) == 1 ? "" : "s");
            }
            fputc('\n', out);
        }
    }
    const json_t *hot = json_object_get(st, "hot");
    const json_t *hk;
    json_array_foreach(json_object_get(hot, "hot_keys"), i, hk)
        fprintf(out, "  hot key %s (%s): %.0f records/s into %s\n", js(hk, "key"),
                js(hk, "producer"), jr(hk, "offered_records_per_s"), js(hk, "shard_id"));
    const json_t *h0 = json_array_get(json_object_get(hot, "hottest_shards"), 0);
    if (h0)
        fprintf(out, "  hottest shard %s: %.0f records/s offered at its peak minute "
                     "(budget %" PRIu64 ")\n",
                js(h0, "shard_id"), jr(h0, "peak_offered_records_per_s"),
                ju(h0, "budget_records_per_s"));

    fprintf(out, "\nProducers\n  %-18s %12s %12s %11s %9s %9s %10s\n", "name", "attempted",
            "written", "throttled", "failed", "given up", "duplicates");
    const json_t *p;
    json_array_foreach(json_object_get(r, "producers"), i, p)
    {
        fprintf(out, "  %-18s %12" PRIu64 " %12" PRIu64 " %11" PRIu64 " %9" PRIu64 " %9" PRIu64
                     " %10" PRIu64 "\n",
                js(p, "name"), ju(p, "records_attempted"), ju(p, "records_written"),
                ju(p, "write_throttled_records"), ju(p, "records_failed_internal"),
                ju(p, "records_given_up"), ju(p, "duplicates_written"));
    }
    json_array_foreach(json_object_get(r, "producers"), i, p)
    {
        if (ju(p, "records_buffered") == 0)
            continue;
        fprintf(out, "  %s: %" PRIu64 " records still in its clients' buffers at the end%s\n",
                js(p, "name"), ju(p, "records_buffered"),
                json_is_true(json_object_get(p, "sequence_number_for_ordering"))
                    ? " (sequence_number_for_ordering: one PutRecord in flight per client, so "
                      "each client sends at most one record per round trip)"
                    : "");
    }

    const json_t *cs = json_object_get(r, "consumers");
    if (json_array_size(cs) > 0) {
        fprintf(out, "\nConsumers (latency: write time to processing time, ms)\n");
        fprintf(out, "  %-18s %-8s %12s %8s %9s %8s %8s %8s %9s %10s %9s\n", "name", "kind",
                "delivered", "dups", "expired", "mean", "p50", "p99", "max", "iter. age",
                "read thr.");
        const json_t *c;
        json_array_foreach(cs, i, c)
        {
            const json_t *l = json_object_get(c, "latency_ms");
            /* "-": nothing delivered, or never read */
            char mean[32], p50[32], p99[32], max[32], age[32];
            fprintf(out, "  %-18s %-8s %12" PRIu64 " %8" PRIu64 " %9" PRIu64
                         " %8s %8s %8s %9s %10s %9" PRIu64 "\n",
                    js(c, "name"), js(c, "kind"), ju(c, "records_delivered"),
                    ju(c, "duplicates_delivered"), ju(c, "records_expired_unread"),
                    real1_or_dash(mean, sizeof mean, json_object_get(l, "mean")),
                    real1_or_dash(p50, sizeof p50, json_object_get(l, "p50")),
                    real1_or_dash(p99, sizeof p99, json_object_get(l, "p99")),
                    real1_or_dash(max, sizeof max, json_object_get(l, "max")),
                    real_or_dash(age, sizeof age, json_object_get(c, "iterator_age_ms_max"), 0),
                    ju(c, "read_throttled_calls"));
        }
        /* Each kind's own figures (Lambda invocations, Firehose objects, EFO
         * subscriptions, Flink checkpoints, ...), wrapped under the table. */
        json_array_foreach(cs, i, c)
        {
            const json_t *fig = json_object_get(c, "figures");
            if (!fig || json_object_size(fig) == 0)
                continue;
            char line[8192];
            size_t o =
                (size_t)snprintf(line, sizeof line, "%s (%s):", js(c, "name"), js(c, "kind"));
            const char *key;
            const json_t *v;
            json_object_foreach((json_t *)fig, key, v)
            {
                if (o >= sizeof line - 64)
                    break;
                double x = json_number_value(v);
                if (json_is_null(v)) /* not defined */
                    o += (size_t)snprintf(line + o, sizeof line - o, " %s -,", key);
                else
                    o += (size_t)snprintf(line + o, sizeof line - o,
                                          x == floor(x) && fabs(x) < 1e15 ? " %s %.0f,"
                                                                          : " %s %.3g,",
                                          key, x);
            }
            if (o > 0 && line[o - 1] == ',')
                line[o - 1] = 0;
            fputs("  ", out);
            wrap_indent(out, line, 86, 4);
        }
    }

    kdsim_kcl_text(r, out); /* KCL applications (report_kcl.c) */

    const json_t *cost = json_object_get(r, "cost");
    if (cost)
        kdsim_cost_text(cost, out);

    fprintf(out, "\nAssumptions (numbers AWS does not publish, and simplifications)\n");
    const json_t *a;
    json_array_foreach(json_object_get(r, "assumptions"), i, a)
        fprintf(out, "  - %s = %s: %s\n", js(a, "setting"), js(a, "value"), js(a, "why"));
}

/* ---- files ------------------------------------------------------------------------ */

/* A file being written under a temporary name, renamed into place when complete. */
typedef kdsim_afile afile;

int kdsim_aopen(kdsim_afile *a, const char *dir, const char *name)
{
    snprintf(a->final, sizeof a->final, "%s/%s", dir, name);
    snprintf(a->tmp, sizeof a->tmp, "%s/.%s.tmp", dir, name);
    a->f = fopen(a->tmp, "w");
    if (!a->f) {
        char sb[sizeof a->tmp + 256];
        fprintf(stderr, "kdsim: cannot write %s: %s\n",
                kdsim_outdir_shown(a->tmp, sb, sizeof sb), strerror(errno));
        return SIM_EIO;
    }
    return 0;
}

int kdsim_aclose(kdsim_afile *a)
{
    int bad = ferror(a->f);
    char sb[sizeof a->tmp + 256];
    if (fclose(a->f) != 0 || bad) {
        fprintf(stderr, "kdsim: error writing %s\n", kdsim_outdir_shown(a->tmp, sb, sizeof sb));
        remove(a->tmp);
        return SIM_EIO;
    }
    if (rename(a->tmp, a->final) != 0) {
        fprintf(stderr, "kdsim: cannot rename %s: %s\n", kdsim_outdir_shown(a->tmp, sb, sizeof sb),
                strerror(errno));
        remove(a->tmp);
        return SIM_EIO;
    }
    return 0;
}

/* The furthest end among n series, ns. */
static sim_time series_end(const sim_series *const *v, size_t n)
{
    sim_time end = 0;
    for (size_t i = 0; i < n; i++)
        end = sim_series_end(v[i]) > end ? sim_series_end(v[i]) : end;
    return end;
}

/* Rows of n per-minute series joined bucket by bucket: "minute,minutes[,label],v0,v1,..",
 * value i with dec[i] decimals (dec NULL: none). A long run's series have merged
 * (sim_series): each row then covers `minutes` minutes from `minute`, summed (a maximum
 * for a maximum), and the column says so, or a reader would take a sum over 4 minutes
 * for one minute's. */
static void write_minutes(FILE *f, const char *label, const sim_series *const *v, size_t n,
                          const int *dec)
{
    sim_time wd = sim_series_widest(v, n), end = series_end(v, n);
    for (sim_time t = 0; t < end; t += wd) {
        fprintf(f, "%" PRId64 ",%" PRId64, t / SIM_MIN(1), wd / SIM_MIN(1));
        if (label)
            fprintf(f, ",%s", label);
        for (size_t i = 0; i < n; i++)
            fprintf(f, ",%.*f", dec ? dec[i] : 0, sim_series_range(v[i], t, t + wd));
        fputc('\n', f);
    }
}

static int write_csvs(const kds_world *w, const char *dir)
{
    const kds_stream *st = &w->stream;
    afile a;
    int rc;
    if ((rc = kdsim_aopen(&a, dir, "stream_per_second.csv")))
        return rc;
    fprintf(a.f, "second,seconds,records_in,bytes_in,write_throttled_records\n");
    {
        const sim_series *v[] = {&st->st.in_records_s, &st->st.in_bytes_s, &st->st.throttled_s};
        sim_time wd = sim_series_widest(v, 3), end = series_end(v, 3);
        for (sim_time t = 0; t < end; t += wd)
            fprintf(a.f, "%" PRId64 ",%" PRId64 ",%.0f,%.0f,%.0f\n", t / SIM_S(1), wd / SIM_S(1),
                    sim_series_range(v[0], t, t + wd), sim_series_range(v[1], t, t + wd),
                    sim_series_range(v[2], t, t + wd));
    }
    if ((rc = kdsim_aclose(&a)))
        return rc;

    if ((rc = kdsim_aopen(&a, dir, "stream_per_minute.csv")))
        return rc;
    fprintf(a.f,
            "minute,minutes,records_in,bytes_in,write_throttled_records,read_throttled_calls,"
            "bytes_out\n");
    {
        const sim_series *v[] = {&st->st.in_records_min, &st->st.in_bytes_min,
                                 &st->st.throttled_min, &st->st.read_throttled_min,
                                 &st->st.out_bytes_min};
        write_minutes(a.f, NULL, v, 5, NULL);
    }
    if ((rc = kdsim_aclose(&a)))
        return rc;

    if ((rc = kdsim_aopen(&a, dir, "shards_per_minute.csv")))
        return rc;
    fprintf(a.f, "minute,minutes,shard_id,records_in,bytes_in,write_throttled_records,"
                 "read_throttled_calls,bytes_out\n");
    for (size_t s = 0; s < st->n_shards; s++) {
        const kds_shard *sh = st->shards[s];
        char id[32];
        kds_shard_id(id, sizeof id, sh->index);
        const sim_series *v[] = {&sh->st.in_records_min, &sh->st.in_bytes_min,
                                 &sh->st.throttled_min, &sh->st.read_throttled_min,
                                 &sh->st.out_bytes_min};
        write_minutes(a.f, id, v, 5, NULL);
    }
    if ((rc = kdsim_aclose(&a)))
        return rc;

    if ((rc = kdsim_aopen(&a, dir, "consumers_per_minute.csv")))
        return rc;
    fprintf(a.f, "minute,minutes,consumer,records_delivered,iterator_age_ms_max\n");
    for (size_t c = 0; c < w->n_consumers; c++) {
        const kds_consumer_stats *cs = &w->consumers[c]->st;
        const sim_series *v[] = {&cs->delivered_min, &cs->iterator_age_min};
        static const int dec[] = {0, 3};
        write_minutes(a.f, w->consumers[c]->name, v, 2, dec);
    }
    if ((rc = kdsim_aclose(&a)))
        return rc;

    if ((rc = kdsim_aopen(&a, dir, "consumers_latency_cdf.csv")))
        return rc;
    fprintf(a.f, "consumer,latency_ms_upper,cumulative_fraction\n");
    for (size_t c = 0; c < w->n_consumers; c++) {
        const sim_hist *h = &w->consumers[c]->st.latency_ms;
        double cum = 0;
        for (size_t i = 0; i < sim_hist_bins(h); i++) {
            double lo, hi, wt;
            sim_hist_bin(h, i, &lo, &hi, &wt);
            if (wt <= 0)
                continue;
            cum += wt;
            fprintf(a.f, "%s,%.6g,%.6f\n", w->consumers[c]->name, hi, cum / h->weight);
        }
    }
    return kdsim_aclose(&a);
}

int kdsim_report_write_dir(const kdsim_scenario *sc, const kds_world *w, const json_t *report,
                           const char *dir)
{
    (void)sc;
    struct stat sb;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "kdsim: cannot create %s: %s\n", dir, strerror(errno));
        return SIM_EIO;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "kdsim: --out %s: not a directory\n", dir);
        return SIM_EIO;
    }
    afile a;
    int rc;
    char *js_text = kdsim_report_dump(report);
    if (!js_text)
        return SIM_ENOMEM;
    if ((rc = kdsim_aopen(&a, dir, "report.json"))) {
        free(js_text);
        return rc;
    }
    fputs(js_text, a.f);
    free(js_text);
    if ((rc = kdsim_aclose(&a)))
        return rc;
    if ((rc = kdsim_aopen(&a, dir, "report.txt")))
        return rc;
    kdsim_report_text(report, a.f);
    if ((rc = kdsim_aclose(&a)))
        return rc;
    if ((rc = write_csvs(w, dir)))
        return rc;
    if ((rc = kdsim_write_kcl_csv(w, dir))) /* KCL applications (report_kcl.c) */
        return rc;
    if ((rc = kdsim_write_capacity_csv(w, dir)))
        return rc;
    return kdsim_html_write_dir(w, report, dir); /* plots and report.html (plots.c, html.c) */
}
