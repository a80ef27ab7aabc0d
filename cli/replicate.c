/* replicate.c - `kdsim run SCENARIO --replications N [--warmup T]`: independent
 * replications of one scenario, every headline figure as a mean with its 95 %
 * confidence interval. */
#include "sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "figures.h"
#include "report.h"
#include "runner.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"

bool kdsim_wants_replications(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "run"))
        return false;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--replications") || !strcmp(argv[i], "--warmup") ||
            !strcmp(argv[i], "--resume"))
            return true;
    return false;
}

/* ---- the command --------------------------------------------------------------------- */

static const char USAGE[] =
    "usage: kdsim run SCENARIO --replications N [--warmup T] [--jobs N] [--seed N]\n"
    "                 [--duration T] [--set KEY.PATH=VALUE]... [--prices FILE] [--json]\n"
    "                 [--out DIR [--resume]]\n";

/* What --help prints after the usage. */
static const char HELP[] =
    "\n"
    "  run SCENARIO --replications N   run the scenario N times with independent seeds and\n"
    "                     print each headline figure's mean and 95 % confidence interval\n"
    "    --replications N 1 to 10000 runs; replication 0 uses the master seed itself\n"
    "    --warmup T       leave the first T of simulated time out of the statistics\n"
    "    --jobs N         worker processes (default: every core)\n"
    "    --seed N         master seed the replications' seeds derive from\n"
    "    --duration, --set, --prices   as for kdsim run\n"
    "    --json           print {summary, runs, seeds, ...} instead of the table\n"
    "    --out DIR        keep each run's result in DIR/runs/, and write\n"
    "                     DIR/replications.json\n"
    "    --resume         with --out: keep the runs DIR/runs/ already holds, run the rest\n"
    "  docs/capacity-planning.md tells more.\n";

/* A number for the text table: counts whole, others to 4 significant digits or more;
 * "-" when not defined (null in the summary: no replication defines the figure). */
static const char *show(char *buf, size_t n, const json_t *j)
{
    double v = json_is_number(j) ? json_number_value(j) : NAN;
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
        fprintf(out, " %" PRIu64, (uint64_t)json_integer_value(json_array_get(seeds, i)));
    fprintf(out, "\n\n%-52s %14s %12s %14s %14s\n", "figure", "mean", "95% CI +-", "min", "max");
    const char *name;
    json_t *s;
    size_t partial = 0; /* figures some replications leave undefined */
    json_object_foreach(json_object_get(doc, "summary"), name, s)
    {
        char a[32], b[32], c[32], d[32];
        const json_t *ci = json_object_get(s, "ci95");
        json_int_t n = json_integer_value(json_object_get(s, "n"));
        bool some = (size_t)n < json_array_size(seeds);
        partial += some;
        fprintf(out, "%-52s %14s %12s %14s %14s%s\n", name,
                show(a, sizeof a, json_object_get(s, "mean")),
                json_is_number(ci) ? show(b, sizeof b, ci) : "n/a",
                show(c, sizeof c, json_object_get(s, "min")),
                show(d, sizeof d, json_object_get(s, "max")), some ? " *" : "");
    }
    fprintf(out, "\nThe interval is the mean +- t(0.975, n-1) x sd / sqrt(n) over the "
                 "replications;\nrerun one alone with kdsim run SCENARIO --seed SEED.\n");
    if (partial)
        fprintf(out, "* not defined in every replication (a latency needs a record "
                     "delivered, an iterator age\n  a read): over those that define it (n in "
                     "--json); - where none does.\n");
}

int kdsim_cmd_replicate(int argc, char **argv, FILE *out, FILE *err)
{
    kdsim_scenario_opts o = {0};
    kdsim_batch_opts bo;
    kdsim_batch_opts_init(&bo, 0, 10000);
    const char *scenario = NULL;
    int status = KDSIM_EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (kdsim_is_help(s)) {
            fputs(USAGE, out);
            fputs(HELP, out);
            status = KDSIM_EXIT_OK;
            goto done;
        }
        int r = kdsim_scenario_opt(&o, argc, argv, &i, err);
        if (r == 0)
            r = kdsim_batch_opt(&bo, argc, argv, &i, err);
        if (r < 0)
            goto usage;
        if (r > 0)
            continue;
        if (s[0] == '-' && s[1] == '-') {
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
    if (kdsim_batch_opts_check(&bo, err))
        goto usage;
    /* --warmup alone: one run with the warm-up excluded. */
    unsigned long reps = bo.replications ? bo.replications : 1;
    unsigned jobs = bo.jobs < reps ? bo.jobs : (unsigned)reps;
    sim_time warmup = bo.warmup;
    const char *out_dir = bo.out_dir;
    /* Bad input shows once, before any worker starts. */
    uint64_t master;
    int rc = kdsim_scenario_check(scenario, o.sets, o.n_sets, warmup, err, &master);
    if (rc) {
        status = rc;
        goto done;
    }
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
    json_t **res = kdsim_run_many(specs, ids, reps, jobs, out_dir, bo.resume, err, "replications",
                                  &failed);
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
            if (bo.json)
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
