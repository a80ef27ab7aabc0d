/* sweep.c - `kdsim sweep` and `kdsim merge` (sweep.h): a grid of scenario variants and
 * seeds run on worker processes or in parts, gathered into one table.
 *
 * Determinism is by construction: a run's result depends only on the scenario file,
 * its overrides and its seed (runner.h); every result goes through the same file
 * (runs/ID.json) and is read back before the tables are made; the tables list runs by
 * index and figures in their order of first appearance. So a serial sweep, a parallel
 * one and merged parts write byte-identical tables.
 */
#include "sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "commands.h"
#include "figures.h"
#include "opts.h"
#include "provenance.h"
#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "scenario_int.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"
#include "sweep_plots.h"
#include "ydoc.h"

#define MAX_VALUES 100000 /* values of one parameter */
#define MAX_RUNS 10000000 /* points x replications */

typedef struct param {
    const char *key;    /* borrowed from the document: a scenario key path */
    char **values;      /* owned: the values as scenario text */
    yaml_mark_t *marks; /* owned: where each value is written (a range's: the range) */
    size_t n;
    bool bad; /* the sweep file's error about it was reported: its points are not checked */
} param;

typedef struct sweep {
    ydoc doc;
    const char *file;         /* the sweep file as given */
    const char *name;         /* `name`, or the file's stem */
    char *stem;               /* owned */
    const char *scenario_rel; /* `scenario` as written (relative to the sweep file) */
    char *scenario;           /* owned: the path to open */
    unsigned long reps;
    bool has_seed;
    uint64_t seed;
    sim_time warmup;
    yaml_mark_t warmup_mark; /* where `warmup` is written (the file's start without it) */
    char **fixed;            /* owned "key=value" from `set` */
    yaml_mark_t *fixed_marks; /* owned: where each value of `set` is written */
    size_t n_fixed;
    param *params; /* owned */
    size_t n_params;
    size_t n_points;
} sweep;

static void sweep_fini(sweep *s)
{
    ydoc_fini(&s->doc);
    free(s->stem);
    free(s->scenario);
    for (size_t i = 0; i < s->n_fixed; i++)
        free(s->fixed[i]);
    free(s->fixed);
    free(s->fixed_marks);
    for (size_t i = 0; i < s->n_params; i++) {
        for (size_t k = 0; k < s->params[i].n; k++)
            free(s->params[i].values[k]);
        free(s->params[i].values);
        free(s->params[i].marks);
    }
    free(s->params);
    memset(s, 0, sizeof *s);
}

/* `rel` relative to the folder of `base`; malloc'd. */
static char *beside(const char *base, const char *rel)
{
    const char *slash = strrchr(base, '/');
    if (rel[0] == '/' || !slash)
        return kdsim_strdupf("%s", rel);
    return kdsim_strdupf("%.*s%s", (int)(slash - base + 1), base, rel);
}

static void add_value(param *p, char *v, const yaml_node_t *at)
{
    p->values = realloc(p->values, (p->n + 1) * sizeof *p->values);
    p->marks = realloc(p->marks, (p->n + 1) * sizeof *p->marks);
    SIM_ASSERT(p->values != NULL && p->marks != NULL);
    p->marks[p->n] = at->start_mark;
    p->values[p->n++] = v;
}

/* One parameter: a list of scalars, or a range {from, to, step, unit}. */
static void load_param(ywalk *w, yaml_node_t *k, yaml_node_t *v, param *p)
{
    char kp[256];
    p->key = (const char *)k->data.scalar.value;
    snprintf(kp, sizeof kp, "parameters.%s", p->key);
    if (!strcmp(p->key, "seed"))
        /* Every run's seed is the replication's (runner.h): a seed parameter would be
         * overridden in every run, the points the same runs under other labels. */
        yw_error(w, k, kp,
                 "the seed is not a parameter: every point runs the replications' seeds; "
                 "give more seeds with replications: N, and the master seed with seed: N "
                 "at the top of the sweep file");
    else if (!strchr(p->key, '.') && strcmp(p->key, "duration") && strcmp(p->key, "name"))
        yw_error(w, k, kp,
                 "expected a scenario key path like stream.shards or "
                 "producers[0].rate");
    if (v->type == YAML_SEQUENCE_NODE) {
        size_t n = yw_seq_len(w, v);
        if (n == 0)
            yw_error(w, v, kp, "the list of values is empty");
        for (size_t i = 0; i < n && i < MAX_VALUES; i++) {
            char ip[300];
            yw_index(ip, sizeof ip, kp, i);
            const char *t = yw_scalar(w, yw_seq_item(w, v, i), ip);
            if (t)
                add_value(p, kdsim_strdupf("%s", t), yw_seq_item(w, v, i));
        }
        return;
    }
    if (v->type != YAML_MAPPING_NODE) {
        yw_error(w, v, kp,
                 "expected a list of values like [2, 4, 8] or a range like "
                 "{from: 2, to: 8, step: 2}");
        return;
    }
    static const char *const keys[] = {"from", "to", "step", "unit", NULL};
    yw_check_keys(w, v, kp, keys);
    double from = 0, to = 0, step = 0;
    const char *unit = NULL;
    bool ok = yw_double(w, v, kp, "from", true, -1e15, 1e15, &from);
    ok = yw_double(w, v, kp, "to", true, -1e15, 1e15, &to) && ok;
    ok = yw_double(w, v, kp, "step", true, 1e-12, 1e15, &step) && ok;
    yw_str(w, v, kp, "unit", false, &unit);
    if (!ok)
        return;
    if (to < from) {
        yw_error(w, v, kp, "to (%g) must not be below from (%g)", to, from);
        return;
    }
    double count = floor((to - from) / step + 1e-9) + 1;
    if (count > MAX_VALUES) {
        yw_error(w, v, kp, "the range has %.0f values; at most %d", count, MAX_VALUES);
        return;
    }
    for (size_t i = 0; i < (size_t)count; i++) {
        /* from + i x step, not a running sum, so that 0.1 steps do not drift. */
        double x = from + (double)i * step;
        char num[64];
        snprintf(num, sizeof num, "%.10g", x);
        add_value(p, unit ? kdsim_strdupf("%s %s", num, unit) : kdsim_strdupf("%s", num), v);
    }
}

/* Load and check the sweep file; errors go to g. Returns 0 or SIM_EINVAL/SIM_EIO. */
static int sweep_load(sweep *s, const char *file, ydiag *g)
{
    memset(s, 0, sizeof *s);
    s->file = file;
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    const char *dot = strrchr(base, '.');
    s->stem =
        kdsim_strdupf("%.*s", (int)(dot && dot != base ? dot - base : (long)strlen(base)), base);
    s->name = s->stem;
    s->reps = 1;
    size_t before = g->n;
    int rc = ydoc_load_file(&s->doc, file, g);
    if (rc)
        return rc;
    ywalk w = {&s->doc, g};
    yaml_node_t *root = ydoc_root(&s->doc);
    if (!root || !yw_is_map(&w, root, "")) {
        if (!root)
            ydiag_add(g, file, NULL, "",
                      "the sweep file is empty; it needs at least scenario "
                      "(see docs/capacity-planning.md)");
        return SIM_EINVAL;
    }
    static const char *const keys[] = {"name",   "scenario", "replications", "seed",
                                       "warmup", "set",      "parameters",   NULL};
    yw_check_keys(&w, root, "", keys);
    if (yw_str(&w, root, "", "name", false, &s->name) &&
        (!kdsim_name_ok(s->name) || !strcmp(s->name, ".") || !strcmp(s->name, "..")))
        /* It names the default output folder, out/NAME: no way out of out/. */
        yw_error(&w, yw_get(&w, root, "name"), "name",
                 "a sweep's name is the folder of its results (out/NAME): 1 to 128 letters, "
                 "digits, '_', '.' or '-', not . or .., got \"%s\"", s->name);
    if (yw_str(&w, root, "", "scenario", true, &s->scenario_rel))
        s->scenario = beside(file, s->scenario_rel);
    uint64_t u;
    if (yw_u64(&w, root, "", "replications", false, 1, 10000, &u))
        s->reps = (unsigned long)u;
    s->has_seed = yw_u64(&w, root, "", "seed", false, 0, KDSIM_SEED_MAX, &s->seed);
    yw_duration(&w, root, "", "warmup", false, 0, SIM_DAY(400), &s->warmup);
    yaml_node_t *wn = yw_get(&w, root, "warmup");
    s->warmup_mark = (wn ? wn : root)->start_mark;
    yaml_node_t *set = yw_get(&w, root, "set");
    if (set && yw_is_map(&w, set, "set")) {
        for (yaml_node_pair_t *pr = set->data.mapping.pairs.start; pr < set->data.mapping.pairs.top;
             pr++) {
            yaml_node_t *k = yaml_document_get_node(&s->doc.doc, pr->key);
            yaml_node_t *v = yaml_document_get_node(&s->doc.doc, pr->value);
            const char *kt = yw_scalar(&w, k, "set");
            char kp[256];
            snprintf(kp, sizeof kp, "set.%s", kt ? kt : "?");
            const char *vt = kt ? yw_scalar(&w, v, kp) : NULL;
            if (!vt)
                continue;
            s->fixed = realloc(s->fixed, (s->n_fixed + 1) * sizeof *s->fixed);
            s->fixed_marks = realloc(s->fixed_marks, (s->n_fixed + 1) * sizeof *s->fixed_marks);
            SIM_ASSERT(s->fixed != NULL && s->fixed_marks != NULL);
            s->fixed_marks[s->n_fixed] = v->start_mark;
            s->fixed[s->n_fixed++] = kdsim_strdupf("%s=%s", kt, vt);
        }
    }
    yaml_node_t *ps = yw_get(&w, root, "parameters");
    s->n_points = 1;
    if (ps && yw_is_map(&w, ps, "parameters")) {
        size_t n = (size_t)(ps->data.mapping.pairs.top - ps->data.mapping.pairs.start);
        s->params = calloc(n ? n : 1, sizeof *s->params);
        SIM_ASSERT(s->params != NULL);
        for (yaml_node_pair_t *pr = ps->data.mapping.pairs.start; pr < ps->data.mapping.pairs.top;
             pr++) {
            yaml_node_t *k = yaml_document_get_node(&s->doc.doc, pr->key);
            yaml_node_t *v = yaml_document_get_node(&s->doc.doc, pr->value);
            if (!yw_scalar(&w, k, "parameters"))
                continue;
            bool twice = false;
            for (size_t i = 0; i < s->n_params; i++)
                if (!strcmp(s->params[i].key, (const char *)k->data.scalar.value)) {
                    yw_error(&w, k, "parameters", "parameter %s is given twice", s->params[i].key);
                    twice = true;
                }
            param *p = &s->params[s->n_params++];
            size_t errs = g->n;
            load_param(&w, k, v, p);
            p->bad = twice || g->n > errs || p->n == 0;
            if (p->n > 0 && s->n_points <= MAX_RUNS)
                s->n_points *= p->n;
        }
    }
    if (g->n == before && (double)s->n_points * (double)s->reps > MAX_RUNS)
        ydiag_add(g, file, NULL, "parameters",
                  "the sweep has %zu points x %lu replications; at most %d runs", s->n_points,
                  s->reps, MAX_RUNS);
    return g->n > before ? SIM_EINVAL : 0;
}

/* The overrides of point p: the fixed ones, then one per parameter (the last
 * parameter varies fastest). `vals` receives each parameter's value. Returns the number
 * of strings in sets (owned: free each with free()). */
static size_t point_sets(const sweep *s, size_t p, char **sets, const char **vals)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_fixed; i++)
        sets[n++] = kdsim_strdupf("%s", s->fixed[i]);
    size_t rem = p;
    for (size_t i = s->n_params; i-- > 0;) {
        const param *q = &s->params[i];
        vals[i] = q->values[rem % q->n];
        rem /= q->n;
    }
    for (size_t i = 0; i < s->n_params; i++)
        sets[n++] = kdsim_strdupf("%s=%s", s->params[i].key, vals[i]);
    return n;
}

/* Check point p before anything runs, its errors into g: the scenario loads under the
 * point's overrides, each marked with where the sweep file writes it (scenario.h), so
 * that an error about a value is reported at that value, and the warm-up is shorter
 * than the run. Returns 0 and the scenario's seed in *seed, or SIM_EINVAL. */
static int check_point(const sweep *s, size_t p, ydiag *g, uint64_t *seed)
{
    size_t n = s->n_fixed, k = 0;
    for (size_t i = 0; i < s->n_params; i++)
        n += !s->params[i].bad;
    char **sets = calloc(n ? n : 1, sizeof *sets);
    SIM_ASSERT(sets != NULL);
    for (size_t i = 0; i < s->n_fixed; i++)
        sets[k++] = kdsim_strdupf("\x1f%s\x1f%zu:%zu\x1f%s", s->file, s->fixed_marks[i].line + 1,
                                  s->fixed_marks[i].column + 1, s->fixed[i]);
    /* A parameter the sweep file got wrong (only when checking a bad file's points for
     * the rest of its errors) is left out: its points are those of the others. */
    size_t rem = p;
    k = n;
    for (size_t i = s->n_params; i-- > 0;) {
        const param *q = &s->params[i];
        if (q->bad)
            continue;
        size_t v = rem % q->n;
        rem /= q->n;
        sets[--k] = kdsim_strdupf("\x1f%s\x1f%zu:%zu\x1f%s=%s", s->file, q->marks[v].line + 1,
                                  q->marks[v].column + 1, q->key, q->values[v]);
    }
    kdsim_scenario sc = {0};
    int rc = kdsim_scenario_load(&sc, s->scenario, (const char *const *)sets, n, g);
    if (!rc && s->warmup >= sc.world.duration) {
        char a[32], b[32];
        ydiag_add(g, s->file, &s->warmup_mark, "warmup",
                  "the warm-up (%s) must be shorter than the run (%s)",
                  sim_fmt_duration(a, sizeof a, s->warmup),
                  sim_fmt_duration(b, sizeof b, sc.world.duration));
        rc = SIM_EINVAL;
    } else if (!rc) {
        *seed = sc.world.seed;
    }
    kdsim_scenario_fini(&sc);
    for (size_t i = 0; i < n; i++)
        free(sets[i]);
    free(sets);
    return rc;
}

/* ---- tables ---------------------------------------------------------------------------- */

/* A CSV field, quoted when it needs to be. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, const json_t *v)
{
    char buf[64];
    if (json_is_integer(v))
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        fputs(kdsim_fig_text(buf, sizeof buf, json_real_value(v), false), f);
}

/* Write `text` made by fn into dir/name atomically. */
/* The separator to print between dir and a file name in it: none after a final '/'
 * (`--out /` or `--out runs/`), so that messages do not show "//". */
static const char *dir_sep(const char *dir)
{
    size_t n = strlen(dir);
    return n && dir[n - 1] == '/' ? "" : "/";
}

static int write_file(const char *dir, const char *name, const char *text, FILE *err)
{
    char *p = kdsim_strdupf("%s/%s", dir, name);
    int rc = kdsim_write_atomic(p, text);
    if (rc)
        fprintf(err, "kdsim: cannot write %s: %s\n", p, strerror(errno));
    free(p);
    return rc;
}

/* Text of a memstream, or NULL. */
typedef struct mbuf {
    char *text;
    size_t len;
    FILE *f;
} mbuf;

static FILE *mopen(mbuf *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    SIM_ASSERT(m->f != NULL);
    return m->f;
}

static char *mclose(mbuf *m)
{
    fclose(m->f);
    return m->text;
}

/* The figure names of every run, in order of first appearance (a new array of strings). */
static json_t *figure_names(json_t *const *runs, size_t n)
{
    json_t *seen = json_object(), *names = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(runs[i], "figures"), k, v)
        {
            if (!json_object_get(seen, k)) {
                json_object_set_new(seen, k, json_true());
                json_array_append_new(names, json_string(k));
            }
        }
    }
    json_decref(seen);
    return names;
}

/* Write results.csv, results.json and summary.csv of the sweep described by `meta` from
 * its runs (all of them, in index order) into dir. Returns 0 or SIM_EIO. */
static int write_tables(const json_t *meta, json_t *const *runs, size_t n, const char *dir,
                        FILE *err)
{
    const json_t *pkeys = json_object_get(meta, "parameters");
    const json_t *points = json_object_get(meta, "points");
    size_t reps = (size_t)json_integer_value(json_object_get(meta, "replications"));
    json_t *names = figure_names(runs, n);

    /* results.csv: one row per run. */
    mbuf m;
    FILE *f = mopen(&m);
    fputs("index,point,replication,seed", f);
    for (size_t i = 0; i < json_array_size(pkeys); i++) {
        fputc(',', f);
        csv_field(f, json_string_value(json_array_get(pkeys, i)));
    }
    fputs(",kdsim_version,scenario_sha256", f);
    for (size_t i = 0; i < json_array_size(names); i++) {
        fputc(',', f);
        csv_field(f, json_string_value(json_array_get(names, i)));
    }
    fputc('\n', f);
    for (size_t r = 0; r < n; r++) {
        const json_t *run = runs[r];
        fprintf(f,
                "%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT
                ",%" PRIu64,
                json_integer_value(json_object_get(run, "index")),
                json_integer_value(json_object_get(run, "point")),
                json_integer_value(json_object_get(run, "replication")),
                (uint64_t)json_integer_value(json_object_get(run, "seed")));
        const json_t *pv = json_object_get(run, "parameters");
        for (size_t i = 0; i < json_array_size(pkeys); i++) {
            fputc(',', f);
            const char *v =
                json_string_value(json_object_get(pv, json_string_value(json_array_get(pkeys, i))));
            csv_field(f, v ? v : "");
        }
        fputc(',', f);
        csv_field(f, json_string_value(json_object_get(run, "kdsim_version")));
        fprintf(f, ",%s", json_string_value(json_object_get(run, "scenario_sha256")));
        const json_t *fg = json_object_get(run, "figures");
        for (size_t i = 0; i < json_array_size(names); i++) {
            fputc(',', f);
            csv_num(f, json_object_get(fg, json_string_value(json_array_get(names, i))));
        }
        fputc('\n', f);
    }
    char *csv = mclose(&m);

    /* The per-point summaries: runs p x reps .. (p + 1) x reps - 1 are point p's. */
    json_t *doc = json_object();
    static const char *const mkeys[] = {"kdsim_version", "sweep",    "sweep_sha256", "scenario",
                                        "replications",  "warmup_s", "seeds",        "parameters"};
    for (size_t i = 0; i < sizeof mkeys / sizeof mkeys[0]; i++)
        json_object_set(doc, mkeys[i], json_object_get(meta, mkeys[i]));
    json_t *pts = json_array();
    f = mopen(&m);
    fputs("point", f);
    for (size_t i = 0; i < json_array_size(pkeys); i++) {
        fputc(',', f);
        csv_field(f, json_string_value(json_array_get(pkeys, i)));
    }
    fputs(",figure,n,mean,ci95,sd,min,max\n", f);
    for (size_t p = 0; p < json_array_size(points); p++) {
        const json_t *pt = json_array_get(points, p);
        json_t *sum = kdsim_figs_summary(runs + p * reps, reps);
        json_t *o = json_object();
        json_object_set(o, "point", json_object_get(pt, "point"));
        json_object_set(o, "parameters", json_object_get(pt, "parameters"));
        json_object_set(o, "scenario_sha256", json_object_get(runs[p * reps], "scenario_sha256"));
        json_object_set(o, "summary", sum);
        json_array_append_new(pts, o);
        const char *fname;
        json_t *s;
        json_object_foreach(sum, fname, s)
        {
            fprintf(f, "%zu", p);
            const json_t *pv = json_object_get(pt, "parameters");
            for (size_t i = 0; i < json_array_size(pkeys); i++) {
                fputc(',', f);
                const char *v = json_string_value(
                    json_object_get(pv, json_string_value(json_array_get(pkeys, i))));
                csv_field(f, v ? v : "");
            }
            fputc(',', f);
            csv_field(f, fname);
            static const char *const cols[] = {"n", "mean", "ci95", "sd", "min", "max"};
            for (size_t c = 0; c < 6; c++) {
                fputc(',', f);
                csv_num(f, json_object_get(s, cols[c]));
            }
            fputc('\n', f);
        }
        json_decref(sum);
    }
    char *summary = mclose(&m);
    json_object_set_new(doc, "points", pts);
    json_t *rj = json_array();
    for (size_t r = 0; r < n; r++)
        json_array_append(rj, runs[r]);
    json_object_set_new(doc, "runs", rj);
    char *js = kdsim_report_dump(doc);
    int rc = SIM_EIO;
    if (csv && summary && js)
        rc = write_file(dir, "results.csv", csv, err) ||
                     write_file(dir, "summary.csv", summary, err) ||
                     write_file(dir, "results.json", js, err)
                 ? SIM_EIO
                 : 0;
    free(csv);
    free(summary);
    free(js);
    json_decref(doc);
    json_decref(names);
    return rc;
}

/* ---- kdsim sweep ------------------------------------------------------------------------ */

static const char SWEEP_USAGE[] =
    "usage: kdsim sweep FILE [--jobs N] [--out DIR] [--part K/N] [--no-plots] [--resume]\n"
    "       kdsim merge PART... [--out DIR] [--no-plots]\n";

/* What `kdsim sweep --help` and `kdsim merge --help` print. */
static const char SWEEP_HELP[] =
    "usage: kdsim sweep FILE [--jobs N] [--out DIR] [--part K/N] [--no-plots] [--resume]\n"
    "\n"
    "  sweep FILE         run the scenario the sweep file names at every combination of\n"
    "                     its parameters, each with its replications; seed, warm-up and\n"
    "                     overrides come from the file (docs/capacity-planning.md)\n"
    "    --jobs N         worker processes (default: every core)\n"
    "    --out DIR        write runs/, results.csv, results.json, summary.csv and plots/\n"
    "                     there (default out/NAME)\n"
    "    --part K/N       run only part K of N (every N-th run); combine with kdsim merge\n"
    "    --no-plots       leave out the summary plots\n"
    "    --resume         keep the runs DIR/runs/ already holds, run the rest\n";
static const char MERGE_HELP[] =
    "usage: kdsim merge PART... [--out DIR] [--no-plots]\n"
    "\n"
    "  merge PART...      combine the part files (part-K-of-N.json) of one sweep, made by\n"
    "                     kdsim sweep FILE --part K/N, into the tables one sweep writes\n"
    "    --out DIR        write results.csv, results.json, summary.csv and plots/ there\n"
    "                     (default: the first part's folder)\n"
    "    --no-plots       leave out the summary plots\n";

/* Where a sweep takes what `run` takes as --seed, --duration, --set or --prices: from
 * its file, so that the file alone says what was run and every part runs the same. */
static const char *in_file_instead(const char *opt)
{
    if (!strcmp(opt, "--seed"))
        return " (give seed: N in the sweep file)";
    if (!strcmp(opt, "--duration"))
        return " (give duration: T under set: in the sweep file)";
    if (!strcmp(opt, "--set"))
        return " (give the overrides under set: in the sweep file)";
    if (!strcmp(opt, "--prices"))
        return " (give billing.prices: FILE under set: in the sweep file)";
    return "";
}

int kdsim_cmd_sweep(int argc, char **argv, FILE *out, FILE *err)
{
    const char *file = NULL, *out_dir = NULL;
    unsigned jobs = kdsim_cpus();
    unsigned long part = 0, parts = 0;
    bool plots = true, resume = false;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (kdsim_is_help(s)) {
            fputs(SWEEP_HELP, out);
            return KDSIM_EXIT_OK;
        }
        bool takes = !strcmp(s, "--jobs") || !strcmp(s, "--out") || !strcmp(s, "--part");
        if (takes && (i + 1 >= argc || !argv[i + 1][0])) {
            fprintf(err, "kdsim: %s needs a value%s\n%s", s,
                    i + 1 < argc ? ", got an empty one" : "", SWEEP_USAGE);
            return KDSIM_EXIT_USAGE;
        }
        if (!strcmp(s, "--jobs")) {
            if (kdsim_parse_jobs(argv[++i], &jobs)) {
                fprintf(err,
                        "kdsim: --jobs: expected a whole number from 1 to 1024, got "
                        "\"%s\"\n",
                        argv[i]);
                return KDSIM_EXIT_USAGE;
            }
        } else if (!strcmp(s, "--out")) {
            out_dir = argv[++i];
        } else if (!strcmp(s, "--no-plots")) {
            plots = false;
        } else if (!strcmp(s, "--resume")) {
            resume = true;
        } else if (!strcmp(s, "--part")) {
            const char *v = argv[++i];
            char *end;
            part = strtoul(v, &end, 10);
            if (*v >= '0' && *v <= '9' && *end == '/' && end[1] >= '0' && end[1] <= '9')
                parts = strtoul(end + 1, &end, 10);
            if (*end || parts < 1 || parts > 100000 || part < 1 || part > parts) {
                fprintf(err,
                        "kdsim: --part: expected K/N with 1 <= K <= N, like 3/8, got "
                        "\"%s\"\n",
                        v);
                return KDSIM_EXIT_USAGE;
            }
        } else if (s[0] == '-' && s[1] == '-') {
            fprintf(err, "kdsim: sweep does not take %s%s\n%s", s, in_file_instead(s),
                    SWEEP_USAGE);
            return KDSIM_EXIT_USAGE;
        } else if (!file) {
            file = s;
        } else {
            fprintf(err, "kdsim: unexpected argument %s (one sweep file)\n%s", s, SWEEP_USAGE);
            return KDSIM_EXIT_USAGE;
        }
    }
    if (!file) {
        fprintf(err, "kdsim: sweep needs a sweep file\n%s", SWEEP_USAGE);
        return KDSIM_EXIT_USAGE;
    }
    if (kdsim_out_dir_check(out_dir, err))
        return KDSIM_EXIT_USAGE;
    sweep sw;
    ydiag g;
    ydiag_init(&g);
    int rc = sweep_load(&sw, file, &g);
    if (rc == SIM_EINVAL && sw.scenario) {
        /* Every error of every point in one go, also when the sweep file has its own: its
         * points over the parameters it gives well are checked too (each error once). */
        size_t np = 1;
        for (size_t i = 0; i < sw.n_params && np <= MAX_RUNS; i++)
            np *= sw.params[i].bad ? 1 : sw.params[i].n;
        for (size_t p = 0; p < np && np <= MAX_RUNS; p++) {
            uint64_t seed;
            check_point(&sw, p, &g, &seed);
        }
        ydiag_dedupe(&g);
    }
    if (rc) {
        ydiag_report(&g, err, file);
        ydiag_fini(&g);
        sweep_fini(&sw);
        return KDSIM_EXIT_USAGE;
    }
    ydiag_fini(&g);
    char *default_out = NULL;
    if (!out_dir)
        out_dir = default_out = kdsim_strdupf("out/%s", sw.name);

    int status = KDSIM_EXIT_USAGE;
    size_t np = sw.n_points, R = sw.reps, total = np * R;
    char ***psets = calloc(np, sizeof *psets);
    size_t *pn = calloc(np, sizeof *pn);
    const char **vals = calloc(sw.n_params ? sw.n_params : 1, sizeof *vals);
    json_t *meta = json_object(), *pts = json_array(), *seeds = json_array();
    SIM_ASSERT(psets && pn && vals && meta && pts && seeds);

    /* Check every point before running any, so a bad value stops the sweep whole; every
     * bad value is reported at its place in the sweep file, and an error that many
     * points share (one of the scenario's own) once. */
    uint64_t master = sw.seed;
    bool bad = false;
    ydiag_init(&g);
    for (size_t p = 0; p < np; p++) {
        psets[p] = calloc(sw.n_fixed + sw.n_params + 1, sizeof **psets);
        SIM_ASSERT(psets[p] != NULL);
        pn[p] = point_sets(&sw, p, psets[p], vals);
        json_t *pv = json_object();
        for (size_t i = 0; i < sw.n_params; i++)
            json_object_set_new(pv, sw.params[i].key, json_string(vals[i]));
        json_t *po = json_object();
        json_object_set_new(po, "point", json_integer((json_int_t)p));
        json_object_set_new(po, "parameters", pv);
        json_array_append_new(pts, po);
        uint64_t seed = 0;
        if (check_point(&sw, p, &g, &seed) != 0)
            bad = true;
        else if (p == 0 && !sw.has_seed)
            master = seed;
    }
    if (bad) {
        ydiag_dedupe(&g);
        ydiag_report(&g, err, file);
    }
    ydiag_fini(&g);
    /* The sweep file, then point 0's run digest: the base scenario's bytes, its
     * overrides and the files it reads (a trace or price file changed on one host is
     * another sweep to kdsim merge). */
    char sha[KDSIM_SHA256_HEX], d0[KDSIM_SHA256_HEX];
    kdsim_runspec rs0 = {sw.scenario, (const char *const *)psets[0], pn[0], 0, 0, 0, NULL};
    const char *d0p = d0;
    if (!bad && (kdsim_run_digest(&rs0, d0) || kdsim_sha256_run(file, &d0p, 1, NULL, 0, sha))) {
        fprintf(err, "kdsim: cannot read %s, %s or a file it names\n", file, sw.scenario);
        bad = true;
    }
    if (bad)
        goto done;
    for (size_t r = 0; r < R; r++)
        json_array_append_new(
            seeds, kdsim_seed_json(kdsim_replication_seed(master, (unsigned)r)));
    json_t *pk = json_array();
    for (size_t i = 0; i < sw.n_params; i++)
        json_array_append_new(pk, json_string(sw.params[i].key));
    json_object_set_new(meta, "kdsim_version", json_string(KDSIM_VERSION));
    json_object_set_new(meta, "sweep", json_string(sw.name));
    json_object_set_new(meta, "sweep_sha256", json_string(sha));
    json_object_set_new(meta, "scenario", json_string(sw.scenario_rel));
    json_object_set_new(meta, "replications", json_integer((json_int_t)R));
    json_object_set_new(meta, "warmup_s", json_real(sim_to_s(sw.warmup)));
    json_object_set(meta, "seeds", seeds);
    json_object_set_new(meta, "parameters", pk);
    json_object_set(meta, "points", pts);
    json_object_set_new(meta, "runs_total", json_integer((json_int_t)total));

    /* This process's runs: all, or every parts-th from part - 1 (round robin, so that a
     * grid ordered by cost spreads its dear points over the parts). */
    size_t mine = 0;
    for (size_t i = 0; i < total; i++)
        mine += parts == 0 || i % parts == part - 1;
    kdsim_runspec *specs = calloc(mine ? mine : 1, sizeof *specs);
    size_t *ids = calloc(mine ? mine : 1, sizeof *ids);
    json_t **extras = calloc(mine ? mine : 1, sizeof *extras);
    SIM_ASSERT(specs && ids && extras);
    unsigned use = jobs < mine ? jobs : (unsigned)(mine ? mine : 1);
    uint64_t mem = sim_phys_bytes() / 2 / use;
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        if (parts && i % parts != part - 1)
            continue;
        size_t p = i / R, r = i % R;
        json_t *x = json_object();
        json_object_set_new(x, "index", json_integer((json_int_t)i));
        json_object_set_new(x, "point", json_integer((json_int_t)p));
        json_object_set_new(x, "replication", json_integer((json_int_t)r));
        json_object_set(x, "parameters", json_object_get(json_array_get(pts, p), "parameters"));
        extras[k] = x;
        specs[k] = (kdsim_runspec){sw.scenario,
                                   (const char *const *)psets[p],
                                   pn[p],
                                   (uint64_t)json_integer_value(json_array_get(seeds, r)),
                                   sw.warmup,
                                   mem,
                                   x};
        ids[k] = i;
        k++;
    }
    if (kdsim_make_dirs(out_dir, err)) {
        status = KDSIM_EXIT_FAIL;
    } else {
        long failed = 0;
        bool drew = false; /* plots/ was written: named in the message only then */
        json_t **res = kdsim_run_many(specs, ids, mine, use, out_dir, resume, err, "sweep",
                                      &failed);
        status = KDSIM_EXIT_FAIL;
        if (res && failed == 0) {
            if (parts) {
                json_t *doc = json_deep_copy(meta);
                json_object_set_new(doc, "part", json_integer((json_int_t)part));
                json_object_set_new(doc, "parts", json_integer((json_int_t)parts));
                json_t *rj = json_array();
                for (size_t j = 0; j < mine; j++)
                    json_array_append(rj, res[j]);
                json_object_set_new(doc, "runs", rj);
                char *text = kdsim_report_dump(doc);
                char *name = kdsim_strdupf("part-%lu-of-%lu.json", part, parts);
                if (text && write_file(out_dir, name, text, err) == 0) {
                    status = KDSIM_EXIT_OK;
                    fprintf(out,
                            "kdsim: sweep %s, part %lu of %lu: %zu of %zu runs; wrote "
                            "%s/%s (combine the parts with kdsim merge)\n",
                            sw.name, part, parts, mine, total, out_dir, name);
                }
                free(name);
                free(text);
                json_decref(doc);
            } else if (write_tables(meta, res, total, out_dir, err) == 0 &&
                       (!plots ||
                        kdsim_sweep_plots(meta, res, total, out_dir, err, &drew) == 0)) {
                status = KDSIM_EXIT_OK;
                fprintf(out,
                        "kdsim: sweep %s: %zu point%s x %zu replication%s = %zu runs on "
                        "%u worker%s; wrote %s%sresults.csv, results.json, summary.csv%s\n",
                        sw.name, np, np == 1 ? "" : "s", R, R == 1 ? "" : "s", total, use,
                        use == 1 ? "" : "s", out_dir, dir_sep(out_dir), drew ? ", plots/" : "");
            }
        } else if (res) {
            fprintf(err, "kdsim: %ld of %zu runs failed; no table was written\n", failed, mine);
        }
        kdsim_results_free(res, mine);
    }
    for (size_t j = 0; j < mine; j++)
        json_decref(extras[j]);
    free(extras);
    free(specs);
    free(ids);
done:
    for (size_t p = 0; p < np; p++) {
        for (size_t i = 0; psets[p] && i < pn[p]; i++)
            free(psets[p][i]);
        free(psets[p]);
    }
    free(psets);
    free(pn);
    free(vals);
    json_decref(meta);
    json_decref(pts);
    json_decref(seeds);
    free(default_out);
    sweep_fini(&sw);
    return status;
}

/* ---- kdsim merge ------------------------------------------------------------------------ */

static int by_index(const void *a, const void *b)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "index"));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "index"));
    return x < y ? -1 : x > y;
}

int kdsim_cmd_merge(int argc, char **argv, FILE *out, FILE *err)
{
    const char *out_dir = NULL;
    const char **files = calloc((size_t)argc, sizeof *files);
    SIM_ASSERT(files != NULL);
    size_t nf = 0;
    bool plots = true;
    for (int i = 2; i < argc; i++) {
        if (kdsim_is_help(argv[i])) {
            fputs(MERGE_HELP, out);
            free(files);
            return KDSIM_EXIT_OK;
        }
        if (!strcmp(argv[i], "--no-plots")) {
            plots = false;
        } else if (!strcmp(argv[i], "--out")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(err, "kdsim: --out needs a value%s\n%s",
                        i + 1 < argc ? ", got an empty one" : "", SWEEP_USAGE);
                free(files);
                return KDSIM_EXIT_USAGE;
            }
            out_dir = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            bool scenario_opt = *in_file_instead(argv[i]) != '\0';
            fprintf(err, "kdsim: merge does not take %s%s\n%s", argv[i],
                    scenario_opt ? " (it combines runs already made, with the settings of "
                                   "their sweep file)"
                                 : "",
                    SWEEP_USAGE);
            free(files);
            return KDSIM_EXIT_USAGE;
        } else {
            files[nf++] = argv[i];
        }
    }
    if (nf == 0) {
        fprintf(err, "kdsim: merge needs the part files (part-K-of-N.json)\n%s", SWEEP_USAGE);
        free(files);
        return KDSIM_EXIT_USAGE;
    }
    if (kdsim_out_dir_check(out_dir, err)) {
        free(files);
        return KDSIM_EXIT_USAGE;
    }
    int status = KDSIM_EXIT_USAGE;
    json_t **docs = calloc(nf, sizeof *docs);
    json_t **runs = NULL;
    SIM_ASSERT(docs != NULL);
    size_t total = 0, parts = 0;
    bool *seen_part = NULL;
    for (size_t i = 0; i < nf; i++) {
        json_error_t je;
        docs[i] = json_load_file(files[i], 0, &je);
        if (!docs[i]) {
            /* jansson gives line -1 when the file could not be read at all. */
            if (je.line < 1)
                fprintf(err, "kdsim: %s: cannot read the part file: %s\n", files[i], je.text);
            else
                fprintf(err, "kdsim: %s:%d:%d: not a part file: %s\n", files[i], je.line, je.column,
                        je.text);
            goto done;
        }
        const json_t *d = docs[i];
        if (!json_is_integer(json_object_get(d, "part")) ||
            !json_is_array(json_object_get(d, "runs"))) {
            fprintf(err,
                    "kdsim: %s: not a part file (no part or runs): make parts with kdsim "
                    "sweep FILE --part K/N\n",
                    files[i]);
            goto done;
        }
        if (i == 0) {
            total = (size_t)json_integer_value(json_object_get(d, "runs_total"));
            parts = (size_t)json_integer_value(json_object_get(d, "parts"));
            seen_part = calloc(parts + 1, sizeof *seen_part);
            SIM_ASSERT(seen_part != NULL);
            continue;
        }
        static const char *const same[] = {"sweep_sha256", "kdsim_version", "parts", "runs_total"};
        for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
            if (json_equal(json_object_get(d, same[k]), json_object_get(docs[0], same[k])))
                continue;
            if (!strcmp(same[k], "parts")) {
                /* One sweep split two ways: part-1-of-3 and part-2-of-12. */
                fprintf(err,
                        "kdsim: %s is a part of %" JSON_INTEGER_FORMAT " and %s a part of %"
                        JSON_INTEGER_FORMAT ": the sweep was split two ways (--part K/N "
                        "with different N); merge the N parts of one --part K/N split\n",
                        files[0], json_integer_value(json_object_get(docs[0], "parts")),
                        files[i], json_integer_value(json_object_get(d, "parts")));
                goto done;
            }
            fprintf(err,
                    "kdsim: %s and %s come from different sweeps (their %s differ); "
                    "merge the parts of one sweep file, run by one kdsim version\n",
                    files[0], files[i], same[k]);
            goto done;
        }
    }
    for (size_t i = 0; i < nf; i++) {
        size_t k = (size_t)json_integer_value(json_object_get(docs[i], "part"));
        if (k < 1 || k > parts || seen_part[k]) {
            fprintf(err, "kdsim: %s: part %zu of %zu is %s\n", files[i], k, parts,
                    k < 1 || k > parts ? "out of range" : "given twice");
            goto done;
        }
        seen_part[k] = true;
    }
    for (size_t k = 1; k <= parts; k++) {
        if (!seen_part[k]) {
            fprintf(err,
                    "kdsim: part %zu of %zu is missing; run kdsim sweep FILE --part %zu/%zu "
                    "and merge again\n",
                    k, parts, k, parts);
            goto done;
        }
    }
    runs = calloc(total ? total : 1, sizeof *runs);
    SIM_ASSERT(runs != NULL);
    size_t got = 0;
    for (size_t i = 0; i < nf; i++) {
        const json_t *rj = json_object_get(docs[i], "runs");
        for (size_t j = 0; j < json_array_size(rj); j++) {
            json_t *r = json_array_get(rj, j);
            json_int_t idx = json_integer_value(json_object_get(r, "index"));
            if (idx < 0 || (size_t)idx >= total || runs[idx]) {
                fprintf(err, "kdsim: %s: run %" JSON_INTEGER_FORMAT " is %s\n", files[i], idx,
                        idx < 0 || (size_t)idx >= total ? "out of range" : "in two parts");
                goto done;
            }
            runs[idx] = r;
            got++;
        }
    }
    if (got != total) {
        fprintf(err, "kdsim: the parts hold %zu of the sweep's %zu runs\n", got, total);
        goto done;
    }
    qsort(runs, total, sizeof *runs, by_index); /* already in place; kept for clarity */
    char *dir = NULL;
    if (!out_dir) {
        const char *slash = strrchr(files[0], '/');
        dir = !slash           ? kdsim_strdupf(".")
              : slash == files[0] ? kdsim_strdupf("/") /* a part at the root */
                                  : kdsim_strdupf("%.*s", (int)(slash - files[0]), files[0]);
    }
    status = KDSIM_EXIT_FAIL;
    bool drew = false; /* plots/ was written: named in the message only then */
    if (kdsim_make_dirs(out_dir ? out_dir : dir, err) == 0 &&
        write_tables(docs[0], runs, total, out_dir ? out_dir : dir, err) == 0 &&
        (!plots ||
         kdsim_sweep_plots(docs[0], runs, total, out_dir ? out_dir : dir, err, &drew) == 0)) {
        status = KDSIM_EXIT_OK;
        fprintf(out,
                "kdsim: merged %zu parts, %zu runs; wrote %s%sresults.csv, results.json, "
                "summary.csv%s\n",
                parts, total, out_dir ? out_dir : dir, dir_sep(out_dir ? out_dir : dir),
                drew ? ", plots/" : "");
    }
    free(dir);
done:
    free(runs);
    for (size_t i = 0; i < nf; i++)
        json_decref(docs[i]);
    free(docs);
    free(seen_part);
    free(files);
    return status;
}
