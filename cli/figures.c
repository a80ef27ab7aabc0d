/* figures.c - the headline figures of a run, with a warm-up excluded (figures.h). */
#include "figures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_stats.h"
#include "stats_ci.h"

/* How a figure treats a warm-up (figures.h). */
typedef enum {
    COUNT, /* subtract the warm-up's */
    END    /* the full run's */
} kind;

/* ---- the list ---------------------------------------------------------------------- */

int kdsim_figs_add(kdsim_figs *f, const char *name, double value, bool integer)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        kdsim_fig *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return SIM_ENOMEM;
        f->v = v;
        f->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return SIM_ENOMEM;
    f->v[f->n++] = (kdsim_fig){copy, value, integer};
    return 0;
}

void kdsim_figs_fini(kdsim_figs *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].name);
    free(f->v);
    memset(f, 0, sizeof *f);
}

long kdsim_figs_find(const kdsim_figs *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].name, name))
            return (long)i;
    return -1;
}

char *kdsim_fig_text(char *buf, size_t n, double v, bool integer)
{
    if (isnan(v))
        buf[0] = 0;
    else if (integer)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.12g", v);
    return buf;
}

json_t *kdsim_figs_json(const kdsim_figs *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (size_t i = 0; i < f->n; i++) {
        double v = f->v[i].value;
        json_t *j = isnan(v)          ? json_null()
                    : f->v[i].integer ? json_integer((json_int_t)v)
                                      : json_real(v);
        if (json_object_set_new(o, f->v[i].name, j)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

int kdsim_figs_from_json(const json_t *o, kdsim_figs *out)
{
    memset(out, 0, sizeof *out);
    if (!json_is_object(o))
        return SIM_EINVAL;
    const char *k;
    json_t *v;
    /* jansson keeps insertion order (2.8+), so the figures come back in theirs. */
    json_object_foreach((json_t *)o, k, v)
    {
        double x = json_is_number(v) ? json_number_value(v) : NAN;
        if (!json_is_number(v) && !json_is_null(v)) {
            kdsim_figs_fini(out);
            return SIM_EINVAL;
        }
        if (kdsim_figs_add(out, k, x, json_is_integer(v)))
            return SIM_ENOMEM;
    }
    return 0;
}

/* ---- reading the report ------------------------------------------------------------- */

/* The node at dotted path `p` under o, or NULL. */
static const json_t *node(const json_t *o, const char *p)
{
    char key[128];
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NULL;
        memcpy(key, p, n);
        key[n] = 0;
        o = json_object_get(o, key);
        p += n + (dot != NULL);
    }
    return o;
}

/* The number at dotted path `p` under o, or NaN. */
static double num(const json_t *o, const char *p)
{
    const json_t *x = node(o, p);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

static double round3(double x)
{
    return isfinite(x) ? round(x * 1000.0) / 1000.0 : x;
}

typedef struct ctx {
    const json_t *rep, *wrep; /* the full run's report and the warm-up's (or NULL) */
    kdsim_figs *out;
    int rc;
} ctx;

static void add(ctx *c, const char *name, double v, bool integer)
{
    if (!c->rc)
        c->rc = kdsim_figs_add(c->out, name, v, integer);
}

/* Figure `name` from `key` of report object o (and its twin wo in the warm-up's report). */
static double fig(ctx *c, const char *name, const json_t *o, const json_t *wo, const char *key,
                  kind k)
{
    double v = num(o, key);
    bool integer = json_is_integer(node(o, key));
    if (k == COUNT && c->wrep && wo)
        v -= num(wo, key);
    add(c, name, v, integer);
    return v;
}

/* The q-quantile of the latencies delivered after the warm-up: the difference of the
 * two histograms, bin by bin, interpolated linearly within a bin as sim_hist does. */
static double diff_quantile(const sim_hist *h, const sim_hist *w0, double q, double total)
{
    size_t nb = sim_hist_bins(h);
    double target = q * total, acc = 0;
    for (size_t i = 0; i < nb; i++) {
        double lo, hi, wa, wb;
        sim_hist_bin(h, i, &lo, &hi, &wb);
        sim_hist_bin(w0, i, &lo, &hi, &wa);
        double d = wb - wa;
        if (d <= 0)
            continue;
        if (acc + d >= target) {
            double x = lo + (hi - lo) * (target - acc) / d;
            return x < h->max ? x : h->max;
        }
        acc += d;
    }
    return h->max;
}

/* The latency figures of consumer object co: the report's own (w0 NULL), or, with a
 * warm-up (h: the full run's histogram, w0: the warm-up run's), recomputed from the
 * deliveries after it. A latency of no record is not defined: NaN (null), not 0, as
 * the report itself gives it for a consumer that delivered nothing. */
static void latency(ctx *c, const char *prefix, const json_t *co, const sim_hist *h,
                    const sim_hist *w0)
{
    static const char *const keys[] = {"mean", "p50", "p90", "p99", "max"};
    static const double qs[] = {0, 0.50, 0.90, 0.99, 1};
    char name[256];
    double total = w0 ? h->weight - w0->weight : 0;
    for (size_t k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "%s.latency_ms.%s", prefix, keys[k]);
        char key[64];
        snprintf(key, sizeof key, "latency_ms.%s", keys[k]);
        double v;
        if (!w0)
            v = num(co, key); /* null (NaN) when nothing was delivered */
        else if (!(total > 0))
            v = NAN; /* nothing delivered after the warm-up */
        else if (k == 0)
            v = round3((h->sum - w0->sum) / total);
        else if (k == 4)
            v = round3(h->max > w0->max ? h->max : diff_quantile(h, w0, 1, total));
        else
            v = round3(diff_quantile(h, w0, qs[k], total));
        add(c, name, v, false);
    }
}

/* Whether consumer object co, less its twin wc in the warm-up's report, read anything
 * after the warm-up: it delivered a record, or made an admitted GetRecords call, or an
 * enhanced fan-out subscription (figures.subscriptions, where the report counts them), or
 * saw an iterator age above 0. Without any of those, it never read then, and its iterator
 * age is not defined. (The report applies the same rule to the whole run, report.c
 * ever_read, and writes null.) */
static bool ever_read(const json_t *co, const json_t *wc, double age)
{
    static const char *const keys[] = {"records_delivered", "getrecords_calls",
                                       "read_throttled_calls", "figures.subscriptions"};
    double v[4];
    for (size_t k = 0; k < 4; k++) {
        double x = num(co, keys[k]);
        if (wc)
            x -= num(wc, keys[k]);
        v[k] = isnan(x) ? 0 : x;
    }
    return v[0] > 0 || v[1] - v[2] > 0 || v[3] > 0 || age > 0;
}

int kdsim_figures(const json_t *report, const kds_world *w, const json_t *wu_report,
                  const kds_world *wu, sim_time warmup, kdsim_figs *out)
{
    memset(out, 0, sizeof *out);
    ctx c = {report, wu_report, out, 0};
    const json_t *st = json_object_get(report, "stream");
    const json_t *wst = wu_report ? json_object_get(wu_report, "stream") : NULL;

    double in = fig(&c, "stream.records_in", st, wst, "records_in", COUNT);
    fig(&c, "stream.bytes_in", st, wst, "bytes_in", COUNT);
    double thr =
        fig(&c, "stream.write_throttled_records", st, wst, "write_throttled_records", COUNT);
    /* Of the record puts the shards judged (stored, or refused for throughput), the
     * share refused: CloudWatch's WriteProvisionedThroughputExceeded over the total. */
    add(&c, "stream.write_throttle_pct", in + thr > 0 ? round3(100.0 * thr / (in + thr)) : 0,
        false);
    fig(&c, "stream.read_throttled_calls", st, wst, "read_throttled_calls", COUNT);
    if (wu)
        add(&c, "stream.peak_records_per_s",
            sim_series_peak_since(&w->stream.st.in_records_s, warmup, NULL), false);
    else
        fig(&c, "stream.peak_records_per_s", st, NULL, "peak_records_per_s", END);
    /* Offered (stored plus throttled) in the busiest minute: the demand, which the
     * planner sizes its search by. Of the whole run. */
    add(&c, "stream.peak_offered_bytes_per_s", num(st, "capacity.peak_offered_bytes_per_s"), false);
    fig(&c, "stream.open_shards", st, NULL, "open_shards", END);
    add(&c, "stream.open_shards_max", num(st, "capacity.open_shards_max"), true);

    /* Records lost: never stored (a producer gave up) or trimmed before a consumer read
     * them (counted once per consumer that lost them). */
    const json_t *ps = json_object_get(report, "producers");
    const json_t *wps = wu_report ? json_object_get(wu_report, "producers") : NULL;
    const json_t *cs = json_object_get(report, "consumers");
    const json_t *wcs = wu_report ? json_object_get(wu_report, "consumers") : NULL;
    double lost = 0;
    for (size_t i = 0; i < json_array_size(ps); i++) {
        lost += num(json_array_get(ps, i), "records_given_up");
        if (wps)
            lost -= num(json_array_get(wps, i), "records_given_up");
    }
    for (size_t i = 0; i < json_array_size(cs); i++) {
        lost += num(json_array_get(cs, i), "records_expired_unread");
        if (wcs)
            lost -= num(json_array_get(wcs, i), "records_expired_unread");
    }
    add(&c, "records_lost", lost, true);

    char name[256];
    static const char *const pkeys[] = {
        "records_attempted", "records_written",    "write_throttled_records",
        "records_given_up",  "duplicates_written", "records_retried",
        "put_calls"};
    for (size_t i = 0; i < json_array_size(ps); i++) {
        const json_t *p = json_array_get(ps, i), *wp = wps ? json_array_get(wps, i) : NULL;
        const char *pn = json_string_value(json_object_get(p, "name"));
        for (size_t k = 0; k < sizeof pkeys / sizeof pkeys[0]; k++) {
            snprintf(name, sizeof name, "producers.%s.%s", pn ? pn : "?", pkeys[k]);
            fig(&c, name, p, wp, pkeys[k], COUNT);
        }
    }
    static const char *const ckeys[] = {"records_delivered", "duplicates_delivered",
                                        "records_expired_unread", "getrecords_calls",
                                        "read_throttled_calls"};
    for (size_t i = 0; i < json_array_size(cs); i++) {
        const json_t *co = json_array_get(cs, i), *wc = wcs ? json_array_get(wcs, i) : NULL;
        const char *cn = json_string_value(json_object_get(co, "name"));
        char prefix[192];
        snprintf(prefix, sizeof prefix, "consumers.%s", cn ? cn : "?");
        for (size_t k = 0; k < sizeof ckeys / sizeof ckeys[0]; k++) {
            snprintf(name, sizeof name, "%s.%s", prefix, ckeys[k]);
            fig(&c, name, co, wc, ckeys[k], COUNT);
        }
        snprintf(name, sizeof name, "%s.records_unread", prefix);
        fig(&c, name, co, NULL, "records_unread", END);
        bool twin = wu && i < w->n_consumers && i < wu->n_consumers;
        latency(&c, prefix, co, twin ? &w->consumers[i]->st.latency_ms : NULL,
                twin ? &wu->consumers[i]->st.latency_ms : NULL);
        snprintf(name, sizeof name, "%s.iterator_age_ms_max", prefix);
        double age = num(co, "iterator_age_ms_max"); /* NaN: never read */
        if (twin) {
            age = round3(sim_series_peak_since(&w->consumers[i]->st.iterator_age_min, warmup,
                                               NULL));
            if (!ever_read(co, wc, age))
                age = NAN;
        }
        add(&c, name, age, false);
    }

    const json_t *cost = json_object_get(report, "cost");
    add(&c, "cost.sizing_rule.shards", num(cost, "sizing_rule.shards"), true);
    const json_t *modes = json_object_get(cost, "modes");
    const char *mk;
    json_t *mv;
    json_object_foreach((json_t *)modes, mk, mv)
    {
        snprintf(name, sizeof name, "cost.%s.monthly_usd", mk);
        add(&c, name, num(mv, "monthly_usd"), false);
    }
    const char *sm = json_string_value(json_object_get(cost, "scenario_mode"));
    const json_t *as_run = json_object_get(cost, "as_run");
    if (as_run) {
        /* A run that switched modes: each stretch billed in its own mode. */
        add(&c, "cost.scenario.monthly_usd", num(as_run, "monthly_usd"), false);
    } else if (sm) {
        /* The mode the scenario's stream runs in: what the scenario, as configured,
         * costs (provisioned bills the shards it had). */
        add(&c, "cost.scenario.monthly_usd", num(json_object_get(modes, sm), "monthly_usd"), false);
    }
    if (c.rc)
        kdsim_figs_fini(out);
    return c.rc;
}

/* ---- summaries ---------------------------------------------------------------------- */

static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *kdsim_figs_summary(json_t *const *results, size_t n)
{
    json_t *sum = json_object();
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!sum || !x) {
        free(x);
        json_decref(sum);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) {
        const json_t *figs = results[k] ? json_object_get(results[k], "figures") : NULL;
        const char *name;
        json_t *v;
        json_object_foreach((json_t *)figs, name, v)
        {
            if (json_object_get(sum, name))
                continue; /* done with its first appearance */
            size_t m = 0;
            for (size_t j = k; j < n; j++) {
                const json_t *f = results[j] ? json_object_get(results[j], "figures") : NULL;
                const json_t *y = f ? json_object_get(f, name) : NULL;
                if (json_is_number(y))
                    x[m++] = json_number_value(y);
            }
            kdsim_ci c = kdsim_ci95(x, m);
            json_t *o = json_object();
            json_object_set_new(o, "n", json_integer((json_int_t)m));
            json_object_set_new(o, "mean", real_or_null(c.mean));
            json_object_set_new(o, "ci95", real_or_null(c.half));
            json_object_set_new(o, "sd", real_or_null(c.sd));
            json_object_set_new(o, "min", real_or_null(c.min));
            json_object_set_new(o, "max", real_or_null(c.max));
            json_object_set_new(sum, name, o);
        }
    }
    free(x);
    return sum;
}
