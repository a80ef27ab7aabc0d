/* plots.c - the plot data files, the gnuplot scripts and the gnuplot run behind
 * `--out DIR` (plots.h). */
#include "plots.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "kds_kcl.h"
#include "outdir.h"
#include "report_int.h"
#include "sim_err.h"

#ifndef KDSIM_PLOTS_DIR
#define KDSIM_PLOTS_DIR "plots"
#endif

/* ---- the plan: one entry per plot -------------------------------------------------- */

static kdsim_plot *add_plot(kdsim_plots *p, const char *group, const char *script)
{
    kdsim_plot *v = realloc(p->v, (p->n + 1) * sizeof *v);
    if (!v)
        return NULL;
    p->v = v;
    kdsim_plot *pl = &v[p->n++];
    memset(pl, 0, sizeof *pl);
    pl->group = group;
    pl->script = script;
    return pl;
}

/* printf into a fixed buffer; the buffers are sized for the longest names kdsim
 * allows (128 characters), so truncation would be a bug. */
static void fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int k = vsnprintf(buf, n, f, ap);
    va_end(ap);
    SIM_ASSERT(k >= 0 && (size_t)k < n);
}

/* The run's time axis: minutes, or hours for runs longer than three hours. */
typedef struct axis {
    sim_time dur;     /* the run's length */
    double dur_s;     /* simulated seconds */
    size_t minutes;   /* minutes of data (the last one may be partial) */
    int xdiv;         /* minutes per x unit */
    const char *unit; /* "min" or "h" */
} axis;

static axis time_axis(const kds_world *w)
{
    axis a;
    a.dur = w->cfg->duration;
    a.dur_s = sim_to_s(a.dur);
    a.minutes = (size_t)ceil(a.dur_s / 60.0);
    if (a.minutes == 0)
        a.minutes = 1;
    a.xdiv = a.minutes > 180 ? 60 : 1;
    a.unit = a.minutes > 180 ? "h" : "min";
    return a;
}

/* The end of the run on the x axis (minutes or hours): the plots span the whole run,
 * its last minute included, with each minute's value drawn at the minute's middle. */
static double x_end(const axis *a)
{
    return a->dur_s / 60.0 / a->xdiv;
}

/* Seconds of minute m inside the run: 60, except for a last partial minute. */
static double minute_s(const axis *a, size_t m)
{
    double s = a->dur_s - 60.0 * (double)m;
    return s >= 60.0 ? 60.0 : s > 0 ? s : 60.0;
}

/* ---- data files ------------------------------------------------------------------- */

/* Each writer opens DIR/plots/<file> as an afile (complete or absent) and returns 0 or
 * SIM_EIO. */

static int write_latency(const kds_consumer *c, const char *pdir, const char *file)
{
    const sim_hist *h = &c->st.latency_ms;
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, file);
    if (rc)
        return rc;
    fprintf(a.f, "latency_ms,cumulative_fraction\n");
    double cum = 0;
    bool first = true;
    for (size_t i = 0; i < sim_hist_bins(h); i++) {
        double lo, hi, wt;
        sim_hist_bin(h, i, &lo, &hi, &wt);
        if (wt <= 0)
            continue;
        if (first && lo > 0) /* the step starts from zero at the first bin's lower edge */
            fprintf(a.f, "%.6g,0\n", lo);
        first = false;
        cum += wt;
        fprintf(a.f, "%.6g,%.6f\n", hi, cum / h->weight);
    }
    return kdsim_aclose(&a);
}

/* Seconds of [t, t + wd) inside the run; a full wd past the end (no division by 0). */
static double span_s(const axis *a, sim_time t, sim_time wd)
{
    sim_time hi = t + wd < a->dur ? t + wd : a->dur;
    return hi > t ? sim_to_s(hi - t) : sim_to_s(wd);
}

/* A consumer's bucket width, minutes: 1, or more when a long run merged its series. */
static size_t consumer_step(const kds_consumer *c)
{
    const sim_series *v[] = {&c->st.iterator_age_min, &c->st.delivered_min};
    return (size_t)(sim_series_widest(v, 2) / SIM_MIN(1));
}

static int write_consumer_series(const kds_consumer *c, const axis *ax, const char *pdir,
                                 const char *file)
{
    const kds_consumer_stats *s = &c->st;
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, file);
    if (rc)
        return rc;
    fprintf(a.f, "minute,iterator_age_ms_max,records_delivered_per_s\n");
    /* One row a bucket: a minute, or the merged minutes of a long run. */
    sim_time wd = (sim_time)consumer_step(c) * SIM_MIN(1);
    for (sim_time t = 0; t < (sim_time)ax->minutes * SIM_MIN(1); t += wd)
        fprintf(a.f, "%" PRId64 ",%.3f,%.3f\n", t / SIM_MIN(1),
                sim_series_range(&s->iterator_age_min, t, t + wd),
                sim_series_range(&s->delivered_min, t, t + wd) / span_s(ax, t, wd));
    return kdsim_aclose(&a);
}

/* Seconds of minute m, inside the run, that fall in [from, to) (to < 0: open-ended). A
 * shard created or closed inside a minute is measured against the seconds it existed, so
 * that a child created at 20:30 carrying 850 records/s shows 85 % in minute 20, not the
 * 43 % its 30 s of writes would make over a whole minute. */
static double overlap_s(const axis *ax, size_t m, sim_time from, sim_time to)
{
    sim_time start = SIM_S(60) * (sim_time)m, end = start + SIM_S(60);
    if (end > ax->dur && ax->dur > start)
        end = ax->dur;
    sim_time lo = from > start ? from : start;
    sim_time hi = to >= 0 && to < end ? to : end;
    return hi > lo ? sim_to_s(hi - lo) : 0.0;
}

/* The per-shard plots' time step, minutes: 1, or more where a long run with many shards
 * would otherwise write more rows than a picture can show (about 1,000 points across, and
 * at most KDSIM_PLOTS_SHARD_CELLS shard-steps in all). */
#define KDSIM_PLOTS_SHARD_CELLS 500000
static size_t shard_step(const kds_world *w, const axis *ax)
{
    size_t step = (ax->minutes + 999) / 1000;
    size_t cells = w->stream.n_shards * ax->minutes;
    size_t by_cells = (cells + KDSIM_PLOTS_SHARD_CELLS - 1) / KDSIM_PLOTS_SHARD_CELLS;
    step = step > by_cells ? step : by_cells;
    step = step ? step : 1;
    /* A whole number of the widest bucket of any shard's series (a power of two minutes:
     * 1 unless a long run merged them), so that each step reads them exactly. */
    sim_time wd = SIM_MIN(1);
    for (size_t i = 0; i < w->stream.n_shards; i++) {
        const kds_shard_stats *s = &w->stream.shards[i]->st;
        const sim_series *v[] = {&s->in_records_min, &s->in_bytes_min, &s->throttled_min,
                                 &s->read_throttled_min, &s->out_bytes_min};
        sim_time x = sim_series_widest(v, 5);
        wd = x > wd ? x : wd;
    }
    size_t b = (size_t)(wd / SIM_MIN(1));
    return (step + b - 1) / b * b;
}

/* A sum over the minutes of one step in which a shard existed. */
typedef struct acc {
    double secs, rec, bytes, thr; /* while the shard took writes */
    double rsecs, out, rthr;      /* while it existed (a closed shard is still read) */
} acc;

/* One row per shard and step (minute by minute unless shard_step() says more), shard by
 * shard; NaN where the shard did not exist. Sets *points to the steps per shard. */
static int write_shards(const kds_world *w, const axis *ax, const char *pdir, size_t step,
                        size_t *points)
{
    const kds_stream *st = &w->stream;
    const kds_stream_cfg *c = &st->cfg;
    *points = (ax->minutes + step - 1) / step;
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, "shards.csv");
    if (rc)
        return rc;
    fprintf(a.f, "minute,shard,shard_id,write_pct,read_pct,write_throttled_per_s,"
                 "read_throttled_calls_per_s\n");
    for (size_t i = 0; i < st->n_shards; i++) {
        const kds_shard *sh = st->shards[i];
        const kds_shard_stats *s = &sh->st;
        char id[32];
        kds_shard_id(id, sizeof id, sh->index);
        for (size_t m0 = 0; m0 < ax->minutes; m0 += step) {
            acc t = {0};
            for (size_t m = m0; m < m0 + step && m < ax->minutes; m++) {
                t.secs += overlap_s(ax, m, sh->created, sh->closed);
                t.rsecs += overlap_s(ax, m, sh->created, -1);
            }
            /* Read by step, not minute: the step is a whole number of buckets (a shard
             * writes only while open and is read only once created, so the sums over
             * the step are those of its minutes of life). */
            sim_time t0 = (sim_time)m0 * SIM_MIN(1), t1 = t0 + (sim_time)step * SIM_MIN(1);
            if (t.secs > 0) {
                t.rec = sim_series_range(&s->in_records_min, t0, t1);
                t.bytes = sim_series_range(&s->in_bytes_min, t0, t1);
                t.thr = sim_series_range(&s->throttled_min, t0, t1);
            }
            if (t.rsecs > 0) {
                t.out = sim_series_range(&s->out_bytes_min, t0, t1);
                t.rthr = sim_series_range(&s->read_throttled_min, t0, t1);
            }
            fprintf(a.f, "%zu,%" PRIu32 ",%s,", m0, sh->index, id);
            if (t.secs > 0) {
                double rec = t.rec / (t.secs * (double)c->write_records_per_s);
                double byt = t.bytes / (t.secs * (double)c->write_bytes_per_s);
                fprintf(a.f, "%.3f,", 100.0 * (rec > byt ? rec : byt));
            } else {
                fprintf(a.f, "NaN,");
            }
            if (t.rsecs > 0)
                fprintf(a.f, "%.3f,", 100.0 * t.out / (t.rsecs * (double)c->read_bytes_per_s));
            else
                fprintf(a.f, "NaN,");
            if (t.secs > 0)
                fprintf(a.f, "%.3f,", t.thr / t.secs);
            else
                fprintf(a.f, "NaN,");
            if (t.rsecs > 0)
                fprintf(a.f, "%.3f\n", t.rthr / t.rsecs);
            else
                fprintf(a.f, "NaN\n");
        }
    }
    return kdsim_aclose(&a);
}

/* A shard's write capacity in records/s for this run: its records budget, or its byte
 * budget at the run's mean stored record size (the report's stream totals) when that
 * binds first (records above 1 KiB under the default budgets). *byte_bound says which. */
static double shard_records_capacity(const kds_stream *st, const json_t *report,
                                     bool *byte_bound)
{
    double cap = (double)st->cfg.write_records_per_s;
    const json_t *so = json_object_get(report, "stream");
    double rec = (double)json_integer_value(json_object_get(so, "records_in"));
    double bytes = (double)json_integer_value(json_object_get(so, "bytes_in"));
    *byte_bound = false;
    if (rec > 0 && bytes > 0) {
        double by_bytes = (double)st->cfg.write_bytes_per_s / (bytes / rec);
        if (by_bytes < cap) {
            cap = by_bytes;
            *byte_bound = true;
        }
    }
    return cap;
}

/* Open shards, records written and throttled per second, minute by minute. Sets *ymax to
 * the top of the shard axis, so that the records/s axis (shards x `budget`, a shard's
 * capacity in records/s) holds every rate. */
static int write_capacity(const kds_world *w, const axis *ax, const char *pdir, double budget,
                          double *ymax)
{
    const kds_stream *st = &w->stream;
    double top = 1;
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, "capacity.csv");
    if (rc)
        return rc;
    fprintf(a.f, "minute,open_shards,records_in_per_s,write_throttled_per_s\n");
    for (size_t m = 0; m < ax->minutes; m++) {
        double secs = minute_s(ax, m);
        double open = sim_series_get(&st->open_shards_min, m);
        double in = sim_series_get(&st->st.in_records_min, m) / secs;
        double thr = sim_series_get(&st->st.throttled_min, m) / secs;
        fprintf(a.f, "%zu,%.0f,%.3f,%.3f\n", m, open, in, thr);
        top = fmax(top, fmax(open, fmax(in, thr) / budget));
    }
    *ymax = ceil(top * 1.15);
    return kdsim_aclose(&a);
}

/* The report's cost.modes as a table: a row per mode, a column per line item (the union
 * of the modes' items that cost something, in order of first appearance), monthly USD.
 * Sets *nitems. */
static int write_cost(const json_t *report, const char *pdir, size_t *nitems)
{
    const json_t *cost = json_object_get(report, "cost");
    const json_t *modes = json_object_get(cost, "modes");
    const char *items[64];
    size_t n = 0;
    const char *key;
    const json_t *m;
    json_object_foreach((json_t *)modes, key, m)
    {
        size_t i;
        const json_t *it;
        json_array_foreach(json_object_get(m, "items"), i, it)
        {
            const char *name = json_string_value(json_object_get(it, "item"));
            /* Items that cost nothing in this mode would only crowd the legend. */
            bool seen = !name || !(json_number_value(json_object_get(it, "monthly_usd")) > 0);
            for (size_t k = 0; k < n && !seen; k++)
                seen = strcmp(items[k], name) == 0;
            if (!seen && n < sizeof items / sizeof *items)
                items[n++] = name;
        }
    }
    *nitems = n;
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, "cost.csv");
    if (rc)
        return rc;
    fprintf(a.f, "mode,label,detail");
    for (size_t k = 0; k < n; k++)
        fprintf(a.f, ",%s", items[k]);
    fprintf(a.f, ",total_usd\n");
    json_object_foreach((json_t *)modes, key, m)
    {
        const json_t *sh = json_object_get(m, "shards");
        char label[64], detail[64];
        if (!strncmp(key, "provisioned", 11)) {
            fmt(label, sizeof label, "%s",
                strcmp(key, "provisioned") ? "sizing rule" : "provisioned");
            double avg;
            if (kdsim_cost_shards_billed(cost, m, &avg))
                fmt(detail, sizeof detail, "avg %.2f shards", avg);
            else
                fmt(detail, sizeof detail, "%" JSON_INTEGER_FORMAT " shard%s",
                    json_integer_value(sh), json_integer_value(sh) == 1 ? "" : "s");
        } else if (!strncmp(key, "on_demand_", 10)) {
            fmt(label, sizeof label, "On-demand");
            fmt(detail, sizeof detail, "%s",
                strcmp(key, "on_demand_standard") ? "Advantage" : "Standard");
        } else {
            fmt(label, sizeof label, "%.60s", key);
            fmt(detail, sizeof detail, "-");
        }
        fprintf(a.f, "%s,%s,%s", key, label, detail);
        for (size_t k = 0; k < n; k++) {
            double usd = 0;
            size_t i;
            const json_t *it;
            json_array_foreach(json_object_get(m, "items"), i, it)
            {
                const char *name = json_string_value(json_object_get(it, "item"));
                if (name && !strcmp(name, items[k]))
                    usd += json_number_value(json_object_get(it, "monthly_usd"));
            }
            fprintf(a.f, ",%.2f", usd);
        }
        fprintf(a.f, ",%.2f\n", json_number_value(json_object_get(m, "monthly_usd")));
    }
    return kdsim_aclose(&a);
}

/* ---- KCL leases, from kcl_workers_per_minute.csv ---------------------------------- */

typedef struct lease_row {
    size_t minute;
    char consumer[130];
    char worker[130];
    unsigned leases;
} lease_row;

/* Read DIR/kcl_workers_per_minute.csv (minute,minutes,consumer,worker,leases_held; the
 * caller knows the width of a row). Returns the rows (malloc'd, *n of them), or NULL with
 * *n = 0 when the file is absent or empty. */
static lease_row *read_leases(const char *dir, size_t *n)
{
    *n = 0;
    char path[4096];
    fmt(path, sizeof path, "%.4000s/kcl_workers_per_minute.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    lease_row *rows = NULL;
    size_t cap = 0;
    char line[512];
    bool header = true;
    while (fgets(line, sizeof line, f)) {
        if (header) {
            header = false;
            continue;
        }
        lease_row r;
        char *save = NULL, *tok[5];
        size_t k = 0;
        for (char *t = strtok_r(line, ",\r\n", &save); t && k < 5;
             t = strtok_r(NULL, ",\r\n", &save))
            tok[k++] = t;
        if (k < 5 || strlen(tok[2]) >= sizeof r.consumer || strlen(tok[3]) >= sizeof r.worker)
            continue;
        r.minute = (size_t)strtoul(tok[0], NULL, 10);
        strcpy(r.consumer, tok[2]);
        strcpy(r.worker, tok[3]);
        r.leases = (unsigned)strtoul(tok[4], NULL, 10);
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            lease_row *v = realloc(rows, cap * sizeof *v);
            if (!v)
                break;
            rows = v;
        }
        rows[(*n)++] = r;
    }
    fclose(f);
    if (*n == 0) {
        free(rows);
        return NULL;
    }
    return rows;
}

/* leases-<consumer>.csv: minute, then a column per worker of that application. Returns
 * the number of workers (0: nothing written) or a negative error. */
static int write_leases(const lease_row *rows, size_t n, const char *consumer, const char *pdir,
                        const char *file, size_t minutes, size_t step)
{
    /* A row every `step` minutes (a long run's values each cover several). */
    minutes = (minutes + step - 1) / step;
    const char *workers[256];
    size_t nw = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].consumer, consumer))
            continue;
        bool seen = false;
        for (size_t k = 0; k < nw && !seen; k++)
            seen = !strcmp(workers[k], rows[i].worker);
        if (!seen && nw < sizeof workers / sizeof *workers)
            workers[nw++] = rows[i].worker;
    }
    if (nw == 0)
        return 0;
    double *grid = calloc(minutes * nw, sizeof *grid);
    if (!grid)
        return SIM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].consumer, consumer) || rows[i].minute / step >= minutes)
            continue;
        for (size_t k = 0; k < nw; k++)
            if (!strcmp(workers[k], rows[i].worker))
                grid[rows[i].minute / step * nw + k] = rows[i].leases;
    }
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, file);
    if (rc) {
        free(grid);
        return rc;
    }
    fprintf(a.f, "minute");
    for (size_t k = 0; k < nw; k++)
        fprintf(a.f, ",%s", workers[k]);
    fputc('\n', a.f);
    for (size_t m = 0; m < minutes; m++) {
        fprintf(a.f, "%zu", m * step);
        for (size_t k = 0; k < nw; k++)
            fprintf(a.f, ",%.0f", grid[m * nw + k]);
        fputc('\n', a.f);
    }
    free(grid);
    rc = kdsim_aclose(&a);
    return rc ? rc : (int)nw;
}

/* ---- scripts ---------------------------------------------------------------------- */

static const char *scripts_dir(void)
{
    const char *d = getenv("KDSIM_PLOTS_DIR");
    return d && *d ? d : KDSIM_PLOTS_DIR;
}

/* Copy plots/<name> into pdir. Returns 0, or SIM_EIO with a message on stderr. */
static int copy_script(const char *name, const char *pdir)
{
    char src[4096];
    fmt(src, sizeof src, "%.4000s/%.80s", scripts_dir(), name);
    FILE *in = fopen(src, "r");
    if (!in) {
        fprintf(stderr, "kdsim: cannot read the plot script %s: %s (KDSIM_PLOTS_DIR names "
                        "the folder of kdsim's plots/)\n", src, strerror(errno));
        return SIM_EIO;
    }
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, name);
    if (!rc) {
        char buf[8192];
        size_t k;
        while ((k = fread(buf, 1, sizeof buf, in)) > 0)
            fwrite(buf, 1, k, a.f);
        if (ferror(in)) {
            fprintf(a.f, "\n# read error\n");
            fclose(a.f);
            remove(a.tmp);
            rc = SIM_EIO;
        } else {
            rc = kdsim_aclose(&a);
        }
    }
    fclose(in);
    return rc;
}

/* A shell double-quoted word for plots.sh. */
static void sh_quote(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (strchr("\"$`\\", *s))
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int write_plots_sh(const kdsim_plots *p, const char *pdir)
{
    kdsim_afile a;
    int rc = kdsim_aopen(&a, pdir, "plots.sh");
    if (rc)
        return rc;
    fprintf(a.f, "#!/bin/sh\n"
                 "# Draws the plots of this folder again from its data files and scripts\n"
                 "# (written by kdsim %s). Needs gnuplot: apt-get install gnuplot-nox\n"
                 "cd \"$(dirname \"$0\")\" || exit 1\n"
                 "exec gnuplot",
            KDSIM_VERSION);
    for (size_t i = 0; i < p->n; i++) {
        char e[1300];
        fmt(e, sizeof e, "%s; out='%s'", p->v[i].vars, p->v[i].name);
        fprintf(a.f, " \\\n  -e \"reset session\" -e ");
        sh_quote(a.f, e);
        fprintf(a.f, " %s", p->v[i].script);
    }
    fputc('\n', a.f);
    rc = kdsim_aclose(&a);
    if (!rc)
        chmod(a.final, 0755);
    return rc;
}

/* ---- running gnuplot -------------------------------------------------------------- */

const char *kdsim_gnuplot_path(char *buf, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (1) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        int k = len ? snprintf(buf, n, "%.*s/gnuplot", (int)len, path)
                    : snprintf(buf, n, "./gnuplot");
        struct stat sb;
        if (k > 0 && (size_t)k < n && stat(buf, &sb) == 0 && S_ISREG(sb.st_mode) &&
            access(buf, X_OK) == 0) {
            /* gnuplot runs in DIR/plots: a relative PATH entry must not stay relative. */
            char abs[PATH_MAX];
            if (buf[0] != '/' && realpath(buf, abs) && strlen(abs) < n)
                strcpy(buf, abs);
            return buf;
        }
        if (!end)
            return NULL;
        path = end + 1;
    }
}

/* Where a plot is drawn before it is renamed into place: a hidden temporary stem. */
static void tmp_stem(char *buf, size_t n, const kdsim_plot *pl)
{
    fmt(buf, n, ".%s.tmp", pl->name);
}

/* Run gnuplot in pdir on the plots idx[0..k-1], with its stderr going to errfile.
 * Returns gnuplot's exit status, or -1 when it could not be started. */
static int run_gnuplot(const char *gnuplot, const char *pdir, const kdsim_plots *p,
                       const size_t *idx, size_t k, const char *errfile)
{
    size_t argc = 1 + 5 * k + 1;
    char **argv = calloc(argc, sizeof *argv);
    char *vars = calloc(k ? k : 1, 1400);
    if (!argv || !vars) {
        free(argv);
        free(vars);
        return -1;
    }
    size_t a = 0;
    argv[a++] = "gnuplot";
    for (size_t i = 0; i < k; i++) {
        const kdsim_plot *pl = &p->v[idx[i]];
        char stem[200];
        tmp_stem(stem, sizeof stem, pl);
        char *v = vars + i * 1400;
        fmt(v, 1400, "%s; out='%s'", pl->vars, stem);
        argv[a++] = "-e";
        argv[a++] = "reset session"; /* each script starts from gnuplot's defaults */
        argv[a++] = "-e";
        argv[a++] = v;
        argv[a++] = (char *)pl->script;
    }
    argv[a] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child: only async-signal-safe calls until exec. */
        int null = open("/dev/null", O_RDWR);
        int err = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (null < 0 || err < 0 || chdir(pdir) != 0)
            _exit(126);
        dup2(null, 0);
        dup2(null, 1);
        dup2(err, 2);
        execv(gnuplot, argv);
        _exit(127);
    }
    int status = -1;
    if (pid > 0) {
        int ws = 0;
        pid_t r;
        while ((r = waitpid(pid, &ws, 0)) < 0 && errno == EINTR)
            ;
        if (r == pid)
            status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    }
    free(argv);
    free(vars);
    return status;
}

/* Rename the plot's temporary PNG and SVG into place if both were made; otherwise remove
 * whatever was made. Returns whether the plot is drawn. */
static bool settle(const char *pdir, kdsim_plot *pl)
{
    char stem[200], tmp[4400], fin[4400];
    tmp_stem(stem, sizeof stem, pl);
    static const char *const ext[] = {"png", "svg"};
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        struct stat sb;
        fmt(tmp, sizeof tmp, "%.4000s/%s.%s", pdir, stem, ext[i]);
        ok = ok && stat(tmp, &sb) == 0 && sb.st_size > 0;
    }
    for (int i = 0; i < 2; i++) {
        fmt(tmp, sizeof tmp, "%.4000s/%s.%s", pdir, stem, ext[i]);
        fmt(fin, sizeof fin, "%.4000s/%s.%s", pdir, pl->name, ext[i]);
        if (ok && rename(tmp, fin) != 0)
            ok = false;
        remove(tmp);
    }
    pl->drawn = ok;
    return ok;
}

/* Print the first lines of gnuplot's messages, indented. */
static void show_errors(const char *errfile)
{
    FILE *f = fopen(errfile, "r");
    if (!f)
        return;
    char line[400];
    for (int i = 0; i < 8 && fgets(line, sizeof line, f); i++)
        fprintf(stderr, "kdsim:   gnuplot: %s%s", line, strchr(line, '\n') ? "" : "\n");
    fclose(f);
}

static void draw(const char *gnuplot, const char *pdir, kdsim_plots *p)
{
    char errfile[4200];
    fmt(errfile, sizeof errfile, "%.4000s/.gnuplot-messages.tmp", pdir);
    size_t *idx = malloc((p->n ? p->n : 1) * sizeof *idx);
    if (!idx)
        return;
    for (size_t i = 0; i < p->n; i++) {
        idx[i] = i;
        char stem[200], path[4400];
        tmp_stem(stem, sizeof stem, &p->v[i]);
        static const char *const ext[] = {"png", "svg"};
        for (int e = 0; e < 2; e++) { /* no stale picture from an earlier run */
            fmt(path, sizeof path, "%.4000s/%s.%s", pdir, p->v[i].name, ext[e]);
            remove(path);
        }
    }
    /* One gnuplot for every plot: starting gnuplot costs more than most plots. It stops
     * at the first error, so the plots it did not finish are retried one by one, which
     * also tells which of them fails. */
    int rc = run_gnuplot(gnuplot, pdir, p, idx, p->n, errfile);
    for (size_t i = 0; i < p->n; i++)
        settle(pdir, &p->v[i]);
    if (rc != 0) {
        for (size_t i = 0; i < p->n; i++) {
            if (p->v[i].drawn)
                continue;
            int r1 = run_gnuplot(gnuplot, pdir, p, &i, 1, errfile);
            if (!settle(pdir, &p->v[i])) {
                char sb[4400];
                fprintf(stderr, "kdsim: warning: gnuplot could not draw %s/%s (%s, exit status "
                                "%d)\n", kdsim_outdir_shown(pdir, sb, sizeof sb), p->v[i].name,
                        p->v[i].script, r1);
                show_errors(errfile);
            }
        }
    }
    remove(errfile);
    free(idx);
}

/* ---- the plan --------------------------------------------------------------------- */

/* A gnuplot single-quoted string cannot hold a single quote but as two. */
static void gp_quote(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        if (*s == '\'')
            buf[k++] = '\'';
        buf[k++] = *s;
    }
    buf[k] = 0;
}

static int plan_consumers(const kds_world *w, const axis *ax, const char *pdir, kdsim_plots *p)
{
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_consumer *c = w->consumers[i];
        char name[300], file[200];
        gp_quote(name, sizeof name, c->name);
        int rc;
        if (c->st.latency_ms.weight > 0) {
            kdsim_plot *pl = add_plot(p, "Consumers", "latency_cdf.gp");
            if (!pl)
                return SIM_ENOMEM;
            fmt(pl->name, sizeof pl->name, "latency-%s", c->name);
            fmt(file, sizeof file, "%s.csv", pl->name);
            if ((rc = write_latency(c, pdir, file)))
                return rc;
            fmt(pl->title, sizeof pl->title, "%s: latency from write to processing (CDF)", c->name);
            fmt(pl->vars, sizeof pl->vars, "data='%s'; name='%s'; p50=%.6g; p99=%.6g", file, name,
                sim_hist_quantile(&c->st.latency_ms, 0.50),
                sim_hist_quantile(&c->st.latency_ms, 0.99));
        }
        kdsim_plot *pl = add_plot(p, "Consumers", "iterator_age.gp");
        if (!pl)
            return SIM_ENOMEM;
        fmt(pl->name, sizeof pl->name, "iterator-age-%s", c->name);
        fmt(file, sizeof file, "%s.csv", pl->name);
        if ((rc = write_consumer_series(c, ax, pdir, file)))
            return rc;
        double age = sim_series_max(&c->st.iterator_age_min);
        double ydiv = age < 10e3 ? 1 : age < 3 * 3600e3 ? 1e3 : 3600e3;
        fmt(pl->title, sizeof pl->title, "%s: iterator age and records delivered over time",
            c->name);
        fmt(pl->vars, sizeof pl->vars,
            "data='%s'; name='%s'; xdiv=%d; xunit='%s'; xmax=%.6g; ydiv=%g; yunit='%s'; "
            "npoints=%zu; agemax=%.6g; xstep=%zu", file, name, ax->xdiv, ax->unit, x_end(ax),
            ydiv, ydiv == 1 ? "ms" : ydiv == 1e3 ? "s" : "h",
            (ax->minutes + consumer_step(c) - 1) / consumer_step(c), age, consumer_step(c));
    }
    return 0;
}

static int plan_shards(const kds_world *w, const axis *ax, const char *pdir, kdsim_plots *p)
{
    static const struct {
        const char *name, *what, *unit;
        int col, budget;
    } m[] = {
        {"shard-writes", "Writes per shard against the write budget",
         "stored writes (% of the budget: 1,000 records/s or 1 MiB/s)", 4, 1},
        {"shard-reads", "Shared-throughput reads per shard against the read budget",
         "bytes read (% of the shared 2 MiB/s)", 5, 1},
        {"shard-write-throttles", "Write-throttled records per shard",
         "records refused (records/s)", 6, 0},
        {"shard-read-throttles", "Read-throttled GetRecords calls per shard",
         "calls refused (calls/s)", 7, 0},
    };
    size_t points, step = shard_step(w, ax);
    int rc = write_shards(w, ax, pdir, step, &points);
    if (rc)
        return rc;
    const kds_stream_cfg *c = &w->stream.cfg;
    size_t ns = w->stream.n_shards;
    bool heat = ns > KDSIM_PLOTS_HEAT_SHARDS;
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        kdsim_plot *pl = add_plot(p, "Shards", "shards.gp");
        if (!pl)
            return SIM_ENOMEM;
        char unit[200];
        /* The budgets in the labels are the stream's, which a scenario may change. */
        if (m[i].col == 4)
            fmt(unit, sizeof unit,
                "stored writes (%% of the budget: %" PRIu64 " records/s or %.4g MiB/s)",
                c->write_records_per_s, (double)c->write_bytes_per_s / 1048576.0);
        else if (m[i].col == 5)
            fmt(unit, sizeof unit, "bytes read (%% of the shared %.4g MiB/s)",
                (double)c->read_bytes_per_s / 1048576.0);
        else
            fmt(unit, sizeof unit, "%s", m[i].unit);
        char what[160];
        if (step == 1)
            fmt(what, sizeof what, "%s, per minute", m[i].what);
        else
            fmt(what, sizeof what, "%s, per %zu minutes", m[i].what, step);
        fmt(pl->name, sizeof pl->name, "%s", m[i].name);
        fmt(pl->title, sizeof pl->title, "%s%s", what, heat ? " (heat map)" : "");
        fmt(pl->vars, sizeof pl->vars,
            "data='shards.csv'; col=%d; what='%s'; unit='%s'; budget=%d; heat=%d; nshards=%zu; "
            "xdiv=%d; xunit='%s'; xmax=%.6g; xstep=%zu; npoints=%zu; cbmax=%d",
            m[i].col, what, unit, m[i].budget, heat, ns, ax->xdiv, ax->unit, x_end(ax), step,
            points, m[i].budget ? 100 : 0);
    }
    return 0;
}

static int plan_stream(const kds_world *w, const json_t *report, const axis *ax, const char *pdir,
                       kdsim_plots *p)
{
    double ymax;
    bool byte_bound;
    double budget = shard_records_capacity(&w->stream, report, &byte_bound);
    int rc = write_capacity(w, ax, pdir, budget, &ymax);
    if (rc)
        return rc;
    kdsim_plot *pl = add_plot(p, "Stream", "capacity.gp");
    if (!pl)
        return SIM_ENOMEM;
    fmt(pl->name, sizeof pl->name, "capacity");
    fmt(pl->title, sizeof pl->title, "Open shards against records written and throttled");
    fmt(pl->vars, sizeof pl->vars,
        "data='capacity.csv'; budget=%.6g; basis='%s'; ymax=%g; xdiv=%d; xunit='%s'; "
        "xmax=%.6g; npoints=%zu",
        budget, byte_bound ? ", by bytes at the mean record size" : "",
        ymax, ax->xdiv, ax->unit, x_end(ax), ax->minutes);

    if (!json_object_get(json_object_get(report, "cost"), "modes"))
        return 0;
    size_t nitems;
    if ((rc = write_cost(report, pdir, &nitems)))
        return rc;
    if (nitems == 0)
        return 0;
    pl = add_plot(p, "Cost", "cost.gp");
    if (!pl)
        return SIM_ENOMEM;
    fmt(pl->name, sizeof pl->name, "cost");
    fmt(pl->title, sizeof pl->title, "Monthly cost in each capacity mode, by line item");
    fmt(pl->vars, sizeof pl->vars, "data='cost.csv'; nitems=%zu", nitems);
    return 0;
}

/* The hook for KCL applications: plotted when the run wrote their per-minute leases. */
static int plan_leases(const kds_world *w, const axis *ax, const char *dir, const char *pdir,
                       kdsim_plots *p)
{
    size_t n;
    lease_row *rows = read_leases(dir, &n);
    if (!rows)
        return 0;
    int rc = 0;
    for (size_t i = 0; i < w->n_consumers && rc >= 0; i++) {
        /* Only this run's KCL applications: a folder used before may hold an old file. */
        if (strcmp(w->consumers[i]->ops->kind, "kcl") != 0)
            continue;
        const char *cn = w->consumers[i]->name;
        char file[200], name[300];
        fmt(file, sizeof file, "leases-%s.csv", cn);
        const kds_kcl_summary *ks = kds_kcl_summary_get(w->consumers[i]);
        size_t step = ks && ks->n_workers ? ks->workers[0].minutes_per_value : 1;
        rc = write_leases(rows, n, cn, pdir, file, ax->minutes, step);
        if (rc <= 0)
            continue;
        kdsim_plot *pl = add_plot(p, "KCL", "leases.gp");
        if (!pl) {
            rc = SIM_ENOMEM;
            break;
        }
        gp_quote(name, sizeof name, cn);
        fmt(pl->name, sizeof pl->name, "leases-%s", cn);
        fmt(pl->title, sizeof pl->title, "%s: leases held by each worker over time", cn);
        fmt(pl->vars, sizeof pl->vars,
            "data='%s'; name='%s'; nworkers=%d; xdiv=%d; xunit='%s'; xmax=%.6g; npoints=%zu; "
            "xstep=%zu",
            file, name, rc, ax->xdiv, ax->unit, x_end(ax), (ax->minutes + step - 1) / step,
            step);
    }
    free(rows);
    return rc < 0 ? rc : 0;
}

int kdsim_plots_write(const kds_world *w, const json_t *report, const char *dir,
                      kdsim_plots *out)
{
    memset(out, 0, sizeof *out);
    char pdir[4096];
    if (snprintf(pdir, sizeof pdir, "%s/plots", dir) >= (int)sizeof pdir)
        return SIM_EIO;
    if (mkdir(pdir, 0777) != 0 && errno != EEXIST) {
        char sb[4400];
        fprintf(stderr, "kdsim: cannot create %s: %s\n", kdsim_outdir_shown(pdir, sb, sizeof sb),
                strerror(errno));
        return SIM_EIO;
    }
    axis ax = time_axis(w);
    int rc;
    if ((rc = plan_consumers(w, &ax, pdir, out)) || (rc = plan_shards(w, &ax, pdir, out)) ||
        (rc = plan_stream(w, report, &ax, pdir, out)) || (rc = plan_leases(w, &ax, dir, pdir, out)))
        return rc;
    if ((rc = write_plots_sh(out, pdir)))
        return rc;

    /* The scripts: the shared ones and each plot's, once. */
    bool scripts_ok = copy_script("common.gp", pdir) == 0 && copy_script("draw.gp", pdir) == 0;
    for (size_t i = 0; i < out->n && scripts_ok; i++) {
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = out->v[k].script == out->v[i].script;
        if (!seen)
            scripts_ok = copy_script(out->v[i].script, pdir) == 0;
    }
    if (!scripts_ok) {
        char sb[4400];
        fprintf(stderr, "kdsim: warning: no plots drawn; the plot data is in %s\n",
                kdsim_outdir_shown(pdir, sb, sizeof sb));
        return 0;
    }

    char gp[4096];
    const char *gnuplot = kdsim_gnuplot_path(gp, sizeof gp);
    out->gnuplot_found = gnuplot != NULL;
    if (!gnuplot) {
        static bool told; /* once per process: a sweep would say it at every run */
        char sb[4400];
        const char *shown = kdsim_outdir_shown(pdir, sb, sizeof sb);
        if (!told)
            fprintf(stderr, "kdsim: gnuplot is not installed, so %s has the plot data and "
                            "scripts but no pictures. Install it (Debian: apt-get install "
                            "gnuplot-nox), then run sh %s/plots.sh or kdsim again.\n",
                    shown, shown);
        told = true;
        return 0;
    }
    draw(gnuplot, pdir, out);
    return 0;
}

void kdsim_plots_fini(kdsim_plots *p)
{
    if (!p)
        return;
    free(p->v);
    memset(p, 0, sizeof *p);
}
