/* replicate.c - `kdsim run SCENARIO --replications N [--warmup T]`: independent
 * replications of one scenario, every headline figure as a mean with its 95 %
 * confidence interval; and the options the capacity commands share (sweep.h). */
#include "sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "figures.h"
#include "report.h"
#include "runner.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"

/* ---- shared options ------------------------------------------------------------------ */

static void add_owned(kdsim_scenario_opts *o, const char *key, const char *value)
{
    size_t n = strlen(key) + strlen(value) + 2;
    char *s = malloc(n);
    SIM_ASSERT(s != NULL);
    snprintf(s, n, "%s=%s", key, value);
    o->owned = realloc(o->owned, (o->n_owned + 1) * sizeof *o->owned);
    o->sets = realloc(o->sets, (o->n_sets + 1) * sizeof *o->sets);
    SIM_ASSERT(o->owned != NULL && o->sets != NULL);
    o->owned[o->n_owned++] = s;
    o->sets[o->n_sets++] = s;
}

int kdsim_parse_duration_opt(const char *s, sim_time *out)
{
    return sim_parse_duration(s, out) == 0 && *out >= 0 ? 0 : -1;
}

int kdsim_scenario_opt(kdsim_scenario_opts *o, int argc, char **argv, int *i, FILE *err)
{
    const char *s = argv[*i];
    bool ours = !strcmp(s, "--seed") || !strcmp(s, "--duration") || !strcmp(s, "--set") ||
                !strcmp(s, "--prices");
    if (!ours)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(err, "kdsim: %s needs a value\n", s);
        return -1;
    }
    const char *val = argv[++*i];
    if (!strcmp(s, "--seed")) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(val, &end, 10);
        if (*val < '0' || *val > '9' || *end || errno) {
            fprintf(err, "kdsim: --seed: expected a whole number, got \"%s\"\n", val);
            return -1;
        }
        o->has_seed = true;
        o->seed = v;
    } else if (!strcmp(s, "--duration")) {
        /* Through the loader, which checks it like the scenario's own key. */
        add_owned(o, "--duration duration", val);
    } else if (!strcmp(s, "--set")) {
        o->sets = realloc(o->sets, (o->n_sets + 1) * sizeof *o->sets);
        SIM_ASSERT(o->sets != NULL);
        o->sets[o->n_sets++] = val;
    } else {
        /* A price file named on the command line is relative to the current folder;
         * billing.prices is relative to the scenario's: make it absolute. */
        char cwd[4096];
        if (val[0] != '/' && getcwd(cwd, sizeof cwd)) {
            size_t n = strlen(cwd) + strlen(val) + 2;
            char *abs = malloc(n);
            SIM_ASSERT(abs != NULL);
            snprintf(abs, n, "%s/%s", cwd, val);
            add_owned(o, "--prices billing.prices", abs);
            free(abs);
        } else {
            add_owned(o, "--prices billing.prices", val);
        }
    }
    return 1;
}

void kdsim_scenario_opts_fini(kdsim_scenario_opts *o)
{
    for (size_t i = 0; i < o->n_owned; i++)
        free(o->owned[i]);
    free(o->owned);
    free(o->sets);
    memset(o, 0, sizeof *o);
}

bool kdsim_wants_replications(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "run"))
        return false;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--replications") || !strcmp(argv[i], "--warmup"))
            return true;
    return false;
}

/* ---- the command --------------------------------------------------------------------- */

static const char USAGE[] =
    "usage: kdsim run SCENARIO --replications N [--warmup T] [--jobs N] [--seed N]\n"
    "                 [--duration T] [--set KEY.PATH=VALUE]... [--prices FILE] [--json]\n"
    "                 [--out DIR]\n";

/* A number for the text table: counts whole, others to 4 significant digits or more. */
static const char *show(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (fabs(v) >= 1e4 || v == floor(v))
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

static void text_table(const json_t *doc, FILE *out)
{
    const json_t *seeds = json_object_get(doc, "seeds");
    fprintf(out, "kdsim %s: scenario %s (sha256 %.12s), %zu replication%s, warm-up %gs\n",
            json_string_value(json_object_get(doc, "kdsim_version")),
            json_string_value(json_object_get(doc, "scenario")),
            json_string_value(json_object_get(doc, "scenario_sha256")), json_array_size(seeds),
            json_array_size(seeds) == 1 ? "" : "s",
            json_number_value(json_object_get(doc, "warmup_s")));
    fprintf(out, "seeds:");
    for (size_t i = 0; i < json_array_size(seeds); i++)
        fprintf(out, " %" JSON_INTEGER_FORMAT, json_integer_value(json_array_get(seeds, i)));
    fprintf(out, "\n\n%-52s %14s %12s %14s %14s\n", "figure", "mean", "95% CI +-", "min", "max");
    const char *name;
    json_t *s;
    json_object_foreach(json_object_get(doc, "summary"), name, s)
    {
        char a[32], b[32], c[32], d[32];
        double half = json_number_value(json_object_get(s, "ci95"));
        fprintf(out, "%-52s %14s %12s %14s %14s\n", name,
                show(a, sizeof a, json_number_value(json_object_get(s, "mean"))),
                json_is_null(json_object_get(s, "ci95")) ? "n/a" : show(b, sizeof b, half),
                show(c, sizeof c, json_number_value(json_object_get(s, "min"))),
                show(d, sizeof d, json_number_value(json_object_get(s, "max"))));
    }
    fprintf(out, "\nThe interval is the mean +- t(0.975, n-1) x sd / sqrt(n) over the "
                 "replications;\nrerun one alone with kdsim run SCENARIO --seed SEED.\n");
}

int kdsim_cmd_replicate(int argc, char **argv, FILE *out, FILE *err)
{
    kdsim_scenario_opts o = {0};
    const char *scenario = NULL, *out_dir = NULL;
    unsigned long reps = 0;
    unsigned jobs = kdsim_cpus();
    sim_time warmup = 0;
    bool json = false;
    int status = KDSIM_EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        int r = kdsim_scenario_opt(&o, argc, argv, &i, err);
        if (r < 0)
            goto usage;
        if (r > 0)
            continue;
        bool takes = !strcmp(s, "--replications") || !strcmp(s, "--warmup") ||
                     !strcmp(s, "--jobs") || !strcmp(s, "--out");
        const char *val = NULL;
        if (takes) {
            if (i + 1 >= argc) {
                fprintf(err, "kdsim: %s needs a value\n", s);
                goto usage;
            }
            val = argv[++i];
        }
        if (!strcmp(s, "--replications")) {
            char *end;
            reps = strtoul(val, &end, 10);
            if (*val < '0' || *val > '9' || *end || reps < 1 || reps > 10000) {
                fprintf(err,
                        "kdsim: --replications: expected a whole number from 1 to "
                        "10000, got \"%s\"\n",
                        val);
                goto usage;
            }
        } else if (!strcmp(s, "--warmup")) {
            if (kdsim_parse_duration_opt(val, &warmup)) {
                fprintf(err,
                        "kdsim: --warmup: expected a duration like 5m or 30s, got "
                        "\"%s\"\n",
                        val);
                goto usage;
            }
        } else if (!strcmp(s, "--jobs")) {
            if (kdsim_parse_jobs(val, &jobs)) {
                fprintf(err,
                        "kdsim: --jobs: expected a whole number from 1 to 1024, got "
                        "\"%s\"\n",
                        val);
                goto usage;
            }
        } else if (!strcmp(s, "--out")) {
            out_dir = val;
        } else if (!strcmp(s, "--json")) {
            json = true;
        } else if (s[0] == '-' && s[1] == '-') {
            fprintf(err, "kdsim: run --replications does not take %s\n", s);
            goto usage;
        } else if (!scenario) {
            scenario = s;
        } else {
            fprintf(err, "kdsim: unexpected argument %s (one scenario at a time)\n", s);
            goto usage;
        }
    }
    if (!scenario) {
        fprintf(err, "kdsim: run needs a scenario file\n");
        goto usage;
    }
    if (reps == 0)
        reps = 1; /* --warmup alone: one run with the warm-up excluded */
    /* Bad input shows once, before any worker starts. */
    uint64_t master;
    int rc = kdsim_scenario_check(scenario, o.sets, o.n_sets, warmup, err, &master);
    if (rc) {
        status = rc;
        goto done;
    }
    if (o.has_seed)
        master = o.seed;
    if (jobs > reps)
        jobs = (unsigned)reps;
    kdsim_runspec *specs = calloc(reps, sizeof *specs);
    size_t *ids = calloc(reps, sizeof *ids);
    SIM_ASSERT(specs != NULL && ids != NULL);
    uint64_t mem = sim_phys_bytes() / 2 / jobs;
    for (unsigned long r = 0; r < reps; r++) {
        specs[r] =
            (kdsim_runspec){scenario, o.sets, o.n_sets, kdsim_replication_seed(master, (unsigned)r),
                            warmup,   mem,    NULL};
        ids[r] = r;
    }
    long failed = 0;
    json_t **res = kdsim_run_many(specs, ids, reps, jobs, out_dir, err, "replications", &failed);
    status = KDSIM_EXIT_FAIL;
    if (res && failed == 0) {
        json_t *doc = json_object();
        json_object_set_new(doc, "kdsim_version", json_string(KDSIM_VERSION));
        json_object_set_new(doc, "scenario", json_string(scenario));
        json_object_set(doc, "scenario_sha256", json_object_get(res[0], "scenario_sha256"));
        json_object_set_new(doc, "warmup_s", json_real(sim_to_s(warmup)));
        json_t *seeds = json_array();
        json_t *runs = json_array();
        for (unsigned long r = 0; r < reps; r++) {
            json_array_append(seeds, json_object_get(res[r], "seed"));
            json_array_append(runs, res[r]);
        }
        json_object_set_new(doc, "seeds", seeds);
        json_object_set_new(doc, "summary", kdsim_figs_summary(res, reps));
        json_object_set_new(doc, "runs", runs);
        char *text = kdsim_report_dump(doc);
        status = text ? KDSIM_EXIT_OK : KDSIM_EXIT_FAIL;
        if (text && out_dir) {
            size_t n = strlen(out_dir) + 32;
            char *p = malloc(n);
            SIM_ASSERT(p != NULL);
            snprintf(p, n, "%s/replications.json", out_dir);
            if (kdsim_write_atomic(p, text)) {
                fprintf(err, "kdsim: cannot write %s: %s\n", p, strerror(errno));
                status = KDSIM_EXIT_FAIL;
            }
            free(p);
        }
        if (status == KDSIM_EXIT_OK) {
            if (json)
                fputs(text, out);
            else
                text_table(doc, out);
        }
        free(text);
        json_decref(doc);
    } else if (res) {
        fprintf(err, "kdsim: %ld of %lu replications failed; no summary\n", failed, reps);
    }
    kdsim_results_free(res, reps);
    free(specs);
    free(ids);
    goto done;
usage:
    fputs(USAGE, err);
    status = KDSIM_EXIT_USAGE;
done:
    kdsim_scenario_opts_fini(&o);
    return status;
}
