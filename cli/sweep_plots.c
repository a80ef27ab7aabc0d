/* sweep_plots.c - the summary plots of a sweep (sweep_plots.h). */
#define _GNU_SOURCE /* asprintf */
#include "sweep_plots.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "figures.h"
#include "plots.h"
#include "runner.h"
#include "sim_err.h"
#include "sim_units.h"

#ifndef KDSIM_PLOTS_DIR
#define KDSIM_PLOTS_DIR "plots"
#endif

#define MAX_PLOTS 64

typedef struct plot {
    char name[160]; /* file stem */
    char fig[200];  /* the figure */
    char ylabel[128];
} plot;

static const char *scripts_dir(void)
{
    const char *d = getenv("KDSIM_PLOTS_DIR");
    return d && *d ? d : KDSIM_PLOTS_DIR;
}

/* Text for a gnuplot string in -e and a field of the plots' CSV files: quotes,
 * backslashes and line breaks become blanks, commas (the field separator) semicolons. */
static void clean(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; *src && k + 1 < n; src++) {
        char ch = *src;
        dst[k++] = ch == ',' ? ';' : strchr("'\"\\\n\r", ch) ? ' ' : ch;
    }
    dst[k] = 0;
}

static int copy_file(const char *from, const char *to)
{
    char *text = kdsim_read_all(from);
    if (!text)
        return SIM_EIO;
    int rc = kdsim_write_atomic(to, text);
    free(text);
    return rc;
}

/* The position of string v in array a (appending it when absent). */
static size_t index_of(json_t *a, const char *v)
{
    for (size_t i = 0; i < json_array_size(a); i++)
        if (!strcmp(json_string_value(json_array_get(a, i)), v))
            return i;
    json_array_append_new(a, json_string(v));
    return json_array_size(a) - 1;
}

/* The number a value starts with, in decimal ("50" of "50ms", "1.5e3"; not "inf",
 * "nan" or hex), its end in *end; else NaN with *end = t. */
static double lead_number(const char *t, const char **end)
{
    *end = t;
    char *e;
    errno = 0;
    double v = strtod(t, &e);
    if (e == t || errno || !isfinite(v) || strspn(t, "+-.0123456789eE") < (size_t)(e - t))
        return NAN;
    *end = e;
    return v;
}

/* The word of a count rate as written ("records" of "1000 records/s"; "" of "2000/s")
 * into w, and in *stem its length without a plural's final s, so that "1 record/s" and
 * "2 records/s" share it. Returns false when t is no number, word, '/'. */
static bool rate_word(const char *t, char *w, size_t n, size_t *stem)
{
    const char *e, *slash = strchr(t, '/');
    if (!slash || isnan(lead_number(t, &e)) || e > slash)
        return false;
    while (*e == ' ')
        e++;
    const char *z = slash;
    while (z > e && z[-1] == ' ')
        z--;
    size_t len = (size_t)(z - e);
    if (len >= n)
        return false;
    snprintf(w, n, "%.*s", (int)len, e);
    *stem = len > 1 && w[len - 1] == 's' ? len - 1 : len;
    return true;
}

/* Where each of the nx values of the first parameter (strings in xs) goes on the x axis,
 * into xv. Numeric (returns true) when every value is a number followed by the same
 * unit or none ("2", "1000 records/s", "50ms": the number as written), or else when
 * every value is a quantity of one kind in any units (sim_units.h: "512 B", "1 KiB":
 * bytes; "500ms", "2s": seconds; byte rates and count rates sharing their word: per
 * second). Otherwise the values are categories, in the order given (returns false). */
static bool x_values(const json_t *xs, size_t nx, double *xv)
{
    const char *end0 = NULL;
    bool same = true;
    for (size_t i = 0; i < nx && same; i++) {
        const char *t = json_string_value(json_array_get(xs, i)), *e;
        xv[i] = lead_number(t, &e);
        while (*e == ' ')
            e++;
        same = !isnan(xv[i]) && (!end0 || !strcmp(e, end0));
        end0 = i ? end0 : e;
    }
    if (same)
        return true;
    for (int kind = 0; kind < 4; kind++) {
        bool all = true;
        char w0[64] = "", w[64];
        for (size_t i = 0; i < nx && all; i++) {
            const char *t = json_string_value(json_array_get(xs, i));
            sim_time d = 0;
            uint64_t b = 0;
            switch (kind) {
            case 0:
                all = sim_parse_duration(t, &d) == SIM_OK;
                xv[i] = sim_to_s(d);
                break;
            case 1:
                all = sim_parse_bytes(t, &b) == SIM_OK;
                xv[i] = (double)b;
                break;
            case 2:
                all = sim_parse_byte_rate(t, &xv[i]) == SIM_OK;
                break;
            default: {
                /* A count rate of its own word, or none ("90000/min"): the words given
                 * must agree, plural or not. */
                size_t stem = 0;
                all = rate_word(t, w, sizeof w, &stem) &&
                      sim_parse_count_rate(t, stem ? w : NULL, &xv[i]) == SIM_OK;
                if (all && stem && !w0[0])
                    snprintf(w0, sizeof w0, "%.*s", (int)stem, w);
                all = all && (!stem || (stem == strlen(w0) && !strncmp(w, w0, stem)));
                break;
            }
            }
        }
        if (all)
            return true;
    }
    for (size_t i = 0; i < nx; i++)
        xv[i] = (double)i;
    return false;
}

int kdsim_sweep_plots(const json_t *meta, json_t *const *runs, size_t n, const char *dir, FILE *err,
                      bool *wrote)
{
    *wrote = false;
    const json_t *pkeys = json_object_get(meta, "parameters");
    const json_t *points = json_object_get(meta, "points");
    size_t np = json_array_size(pkeys), npts = json_array_size(points);
    size_t reps = (size_t)json_integer_value(json_object_get(meta, "replications"));
    if (np == 0 || npts < 2 || reps == 0 || n < npts * reps)
        return 0;
    if (np > 2) {
        fprintf(err,
                "kdsim: no plots: a sweep of %zu parameters is too many to draw "
                "(summary.csv has every point)\n",
                np);
        return 0;
    }
    const char *k0 = json_string_value(json_array_get(pkeys, 0));
    const char *k1 = np > 1 ? json_string_value(json_array_get(pkeys, 1)) : NULL;
    json_t *xs = json_array(), *ss = json_array();
    size_t *px = calloc(npts, sizeof *px), *ps = calloc(npts, sizeof *ps);
    json_t **sum = calloc(npts, sizeof *sum);
    SIM_ASSERT(xs && ss && px && ps && sum);
    for (size_t p = 0; p < npts; p++) {
        const json_t *pv = json_object_get(json_array_get(points, p), "parameters");
        px[p] = index_of(xs, json_string_value(json_object_get(pv, k0)));
        ps[p] = k1 ? index_of(ss, json_string_value(json_object_get(pv, k1))) : 0;
        sum[p] = kdsim_figs_summary(runs + p * reps, reps);
    }
    size_t nx = json_array_size(xs), ns = k1 ? json_array_size(ss) : 1;
    double *xv = calloc(nx, sizeof *xv);
    SIM_ASSERT(xv != NULL);
    bool numeric = x_values(xs, nx, xv);

    plot plots[MAX_PLOTS];
    size_t nplots = 0;
    const char *fn;
    json_t *fv;
    json_object_foreach(sum[0], fn, fv)
    {
        const char *ylabel = NULL;
        size_t fl = strlen(fn);
        if (!strcmp(fn, "stream.write_throttle_pct"))
            ylabel = "write throttling (% of record puts)";
        else if (!strcmp(fn, "records_lost"))
            ylabel = "records lost";
        else if (!strncmp(fn, "consumers.", 10) && fl > 15 &&
                 !strcmp(fn + fl - 15, ".latency_ms.p99"))
            ylabel = "p99 latency (ms)";
        else if (!strcmp(fn, "cost.scenario.monthly_usd"))
            ylabel = "monthly cost in the mode of the scenario (USD)";
        if (!ylabel || nplots == MAX_PLOTS)
            continue;
        plot *pl = &plots[nplots++];
        snprintf(pl->fig, sizeof pl->fig, "%s", fn);
        snprintf(pl->ylabel, sizeof pl->ylabel, "%s", ylabel);
        size_t k = 0;
        for (const char *c = fn; *c && k + 1 < sizeof pl->name; c++)
            pl->name[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                                    (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'
                                ? *c
                                : '-';
        pl->name[k] = 0;
    }

    int rc = 0;
    char *pdir = NULL;
    if (asprintf(&pdir, "%s/plots", dir) < 0)
        pdir = NULL;
    SIM_ASSERT(pdir != NULL);
    if (mkdir(pdir, 0777) != 0 && errno != EEXIST) {
        fprintf(err, "kdsim: cannot create the folder %s: %s\n", pdir, strerror(errno));
        rc = SIM_EIO;
    }
    for (size_t i = 0; !rc && i < nplots; i++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        SIM_ASSERT(f != NULL);
        for (size_t s = 0; s < ns; s++) {
            char sname[256];
            if (k1)
                snprintf(sname, sizeof sname, "%s=%s", k1,
                         json_string_value(json_array_get(ss, s)));
            else
                snprintf(sname, sizeof sname, "mean and 95%% interval");
            clean(sname, sizeof sname, sname);
            fprintf(f, "%sx,label,%s,mean,lo,hi\n", s ? "\n\n" : "", sname);
            for (size_t x = 0; x < nx; x++)
                for (size_t p = 0; p < npts; p++) {
                    if (px[p] != x || ps[p] != s)
                        continue;
                    const json_t *o = json_object_get(sum[p], plots[i].fig);
                    const json_t *m = json_object_get(o, "mean");
                    if (!json_is_number(m))
                        continue;
                    double mean = json_number_value(m);
                    const json_t *c = json_object_get(o, "ci95");
                    double half = json_is_number(c) ? json_number_value(c) : 0;
                    char label[128];
                    clean(label, sizeof label, json_string_value(json_array_get(xs, x)));
                    fprintf(f, "%.12g,%s,,%.12g,%.12g,%.12g\n", xv[x], label,
                            mean, mean - half, mean + half);
                }
        }
        fclose(f);
        char *path = NULL;
        if (asprintf(&path, "%s/%s.csv", pdir, plots[i].name) < 0)
            path = NULL;
        SIM_ASSERT(path != NULL);
        if (kdsim_write_atomic(path, text)) {
            fprintf(err, "kdsim: cannot write %s: %s\n", path, strerror(errno));
            rc = SIM_EIO;
        }
        free(path);
        free(text);
    }
    static const char *const scripts[] = {"sweep.gp", "common.gp", "draw.gp"};
    for (size_t i = 0; !rc && nplots && i < 3; i++) {
        char *from = NULL, *to = NULL;
        if (asprintf(&from, "%s/%s", scripts_dir(), scripts[i]) < 0 ||
            asprintf(&to, "%s/%s", pdir, scripts[i]) < 0)
            SIM_ASSERT(0);
        if (copy_file(from, to)) {
            fprintf(err,
                    "kdsim: cannot copy the plot script %s to %s: %s (KDSIM_PLOTS_DIR "
                    "names the folder of kdsim's plots/)\n",
                    from, pdir, strerror(errno));
            rc = SIM_EIO;
        }
        free(from);
        free(to);
    }
    /* The gnuplot command line: -e settings then the script, per plot. */
    char **argv = calloc(4 * nplots + 2, sizeof *argv);
    SIM_ASSERT(argv != NULL);
    size_t ac = 0;
    char gp[4096];
    const char *gnuplot = kdsim_gnuplot_path(gp, sizeof gp);
    argv[ac++] = "gnuplot";
    char xl[300];
    clean(xl, sizeof xl, k0);
    for (size_t i = 0; i < nplots; i++) {
        char *e = NULL;
        if (asprintf(&e,
                     "data='%s.csv'; out='%s'; title='%s against %s'; ylabel='%s'; "
                     "xlabel='%s'; nseries=%zu; xnumeric=%d",
                     plots[i].name, plots[i].name, plots[i].fig, xl, plots[i].ylabel, xl, ns,
                     numeric ? 1 : 0) < 0)
            SIM_ASSERT(0);
        argv[ac++] = "-e";
        argv[ac++] = e;
        argv[ac++] = "sweep.gp";
    }
    if (!rc && nplots) {
        /* plots.sh: the same command, to draw again by hand. */
        char *sh = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&sh, &len);
        SIM_ASSERT(f != NULL);
        fprintf(f, "#!/bin/sh\n# Draws this sweep's plots again (needs gnuplot: apt-get "
                   "install gnuplot-nox).\ncd \"$(dirname \"$0\")\" || exit 1\nexec gnuplot");
        for (size_t i = 1; i < ac; i++)
            fprintf(f, i % 3 == 1 ? " \\\n  %s" : " \"%s\"", argv[i]);
        fprintf(f, "\n");
        fclose(f);
        char *path = NULL;
        if (asprintf(&path, "%s/plots.sh", pdir) < 0)
            SIM_ASSERT(0);
        if (kdsim_write_atomic(path, sh) == 0)
            chmod(path, 0755);
        free(path);
        free(sh);
    }
    *wrote = !rc && nplots;
    if (!rc && nplots && !gnuplot) {
        fprintf(err,
                "kdsim: gnuplot is not installed: the sweep's plot data and scripts are "
                "in %s (apt-get install gnuplot-nox, then run %s/plots.sh)\n",
                pdir, pdir);
    } else if (!rc && nplots) {
        fflush(err);
        pid_t pid = fork();
        if (pid == 0) {
            if (chdir(pdir) != 0)
                _exit(127);
            FILE *log = freopen("gnuplot.log", "w", stderr);
            (void)log;
            execv(gnuplot, argv);
            _exit(127);
        }
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(err, "kdsim: gnuplot failed to draw the sweep's plots (see %s/gnuplot.log)\n",
                    pdir);
        } else {
            /* Kept only when gnuplot had something to say. */
            char *log = NULL;
            struct stat lb;
            if (asprintf(&log, "%s/gnuplot.log", pdir) < 0)
                SIM_ASSERT(0);
            if (stat(log, &lb) == 0 && lb.st_size == 0)
                unlink(log);
            free(log);
        }
    }
    for (size_t i = 0; i < nplots; i++)
        free(argv[2 + 3 * i]);
    free(argv);
    free(pdir);
    for (size_t p = 0; p < npts; p++)
        json_decref(sum[p]);
    free(sum);
    free(px);
    free(ps);
    free(xv);
    json_decref(xs);
    json_decref(ss);
    return rc;
}
