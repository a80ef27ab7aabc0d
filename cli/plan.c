/* plan.c - the capacity planner (plan.h): every configuration of the stream in the
 * search space, run once per replication seed on worker processes, checked against the
 * targets; the cheapest that meets every target in every replication is the answer.
 *
 * The search space is the capacity modes (provisioned at each shard count searched,
 * On-demand Standard, On-demand Advantage) crossed with the settings the user lists
 * (--vary KEY=V1,V2: batch sizes, linger, consumer settings). Every configuration runs
 * with the same replication seeds (common random numbers), so that configurations are
 * compared on the same traffic. A configuration's cost is the mean over its
 * replications of its mode's monthly cost (cost.modes.*.monthly_usd of the report).
 */
#include "plan.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "commands.h"
#include "figures.h"
#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sweep.h"

#define EXIT_NO_ANSWER 3
#define MAX_CONFIGS 4096

static const char USAGE[] =
    "usage: kdsim plan SCENARIO --slo NAME=VALUE... [--replications N] [--shards A..B|A,B,..]\n"
    "                  [--modes M,M,..] [--vary KEY.PATH=V1,V2,..]... [--warmup T]\n"
    "                  [--jobs N] [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
    "                  [--prices FILE] [--json] [--out DIR [--resume]]\n"
    "targets (--slo, repeatable):\n"
    "  p50_ms=X, p90_ms=X, p99_ms=X, mean_ms=X, max_ms=X   latency, write to processing,\n"
    "        of every consumer; p99_ms[NAME]=X for consumer NAME only\n"
    "  iterator_age_ms=X (or iterator_age_ms[NAME]=X)      the largest iterator age\n"
    "  lost=N           at most N records lost (given up, or expired unread); lost=0: none\n"
    "  throttle_pct=X   at most X % of record puts refused for throughput\n";

static const char *const MODES[] = {"provisioned", "on_demand_standard", "on_demand_advantage",
                                    NULL};

/* One target, expanded per consumer. */
typedef struct slo {
    char *label;  /* owned: "p99 latency of live-metrics (ms)" */
    char *figure; /* owned: the figure it reads */
    double max;   /* the figure must be <= max */
    char *spec;   /* owned: as given on the command line, for the JSON */
} slo;

typedef struct config {
    char *label;          /* owned: "provisioned, 3 shards", "on_demand_standard", + vary values */
    int mode;             /* index in MODES */
    unsigned shards;      /* provisioned: the shard count; else 0 */
    char **sets;          /* owned: base overrides (borrowed strings) + this config's (owned) */
    size_t n_sets, n_own; /* the last n_own strings of sets are owned */
    json_t *vary;         /* owned: {key: value} of the --vary settings */
    size_t combo;         /* which combination of the --vary settings */
    /* results */
    double cost; /* mean monthly USD of its mode */
    bool ran;    /* every replication ran */
    bool passes;
    double *worst; /* owned: per slo, the largest value over the replications (NaN: n/a) */
} config;

typedef struct vary {
    const char *key; /* borrowed from argv (the text before '=') */
    char *keybuf;    /* owned */
    char **values;   /* owned */
    size_t n;
} vary;

/* ---- targets -------------------------------------------------------------------------- */

typedef struct slo_kind {
    const char *name;   /* as on the command line */
    const char *stat;   /* figure under consumers.NAME. (NULL: a stream-wide figure) */
    const char *figure; /* stream-wide figure */
    const char *label;  /* label; %s is the consumer */
} slo_kind;

static const slo_kind KINDS[] = {
    {"p50_ms", "latency_ms.p50", NULL, "p50 latency of %s (ms)"},
    {"p90_ms", "latency_ms.p90", NULL, "p90 latency of %s (ms)"},
    {"p99_ms", "latency_ms.p99", NULL, "p99 latency of %s (ms)"},
    {"mean_ms", "latency_ms.mean", NULL, "mean latency of %s (ms)"},
    {"max_ms", "latency_ms.max", NULL, "largest latency of %s (ms)"},
    {"iterator_age_ms", "iterator_age_ms_max", NULL, "largest iterator age of %s (ms)"},
    {"lost", NULL, "records_lost", "records lost"},
    {"throttle_pct", NULL, "stream.write_throttle_pct", "write throttling (% of record puts)"},
};

static void add_slo(slo **v, size_t *n, char *label, char *figure, double max, const char *spec)
{
    *v = realloc(*v, (*n + 1) * sizeof **v);
    SIM_ASSERT(*v != NULL);
    (*v)[(*n)++] = (slo){label, figure, max, kdsim_strdupf("%s", spec)};
}

/* The name of consumers[i] in the scenario's document (NULL when missing). */
static const char *consumer_name(kdsim_scenario *sc, size_t i)
{
    ydiag g;
    ydiag_init(&g);
    ywalk w = {&sc->doc, &g};
    yaml_node_t *cs = yw_get(&w, ydoc_root(&sc->doc), "consumers");
    yaml_node_t *c = cs && cs->type == YAML_SEQUENCE_NODE ? yw_seq_item(&w, cs, i) : NULL;
    yaml_node_t *n = c && c->type == YAML_MAPPING_NODE ? yw_get(&w, c, "name") : NULL;
    ydiag_fini(&g);
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Parse one --slo against the scenario's consumers. Returns 0 or prints why and -1. */
static int parse_slo(const char *spec, kdsim_scenario *sc, slo **v, size_t *n, FILE *err)
{
    const char *eq = strchr(spec, '=');
    const char *br = strchr(spec, '[');
    size_t nl = (size_t)((br && (!eq || br < eq) ? br : eq ? eq : spec + strlen(spec)) - spec);
    const slo_kind *k = NULL;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (strlen(KINDS[i].name) == nl && !strncmp(spec, KINDS[i].name, nl))
            k = &KINDS[i];
    if (!k || !eq) {
        fprintf(err,
                "kdsim: --slo %s: expected NAME=VALUE with NAME one of p50_ms, p90_ms, "
                "p99_ms, mean_ms, max_ms, iterator_age_ms, lost, throttle_pct\n",
                spec);
        return -1;
    }
    char *end;
    errno = 0;
    double max = strtod(eq + 1, &end);
    if (end == eq + 1 || *end || errno || !isfinite(max) || max < 0) {
        fprintf(err, "kdsim: --slo %s: expected a number >= 0 after '=', got \"%s\"\n", spec,
                eq + 1);
        return -1;
    }
    char who[256] = "";
    if (br && br < eq) {
        const char *close = strchr(br, ']');
        if (!close || close + 1 != eq || close == br + 1 || (size_t)(close - br) >= sizeof who) {
            fprintf(err, "kdsim: --slo %s: expected %s[CONSUMER]=VALUE\n", spec, k->name);
            return -1;
        }
        if (!k->stat) {
            fprintf(err, "kdsim: --slo %s: %s is stream-wide; it takes no consumer name\n", spec,
                    k->name);
            return -1;
        }
        memcpy(who, br + 1, (size_t)(close - br - 1));
        who[close - br - 1] = 0;
    }
    if (!k->stat) {
        add_slo(v, n, kdsim_strdupf("%s", k->label), kdsim_strdupf("%s", k->figure), max, spec);
        return 0;
    }
    size_t found = 0;
    for (size_t i = 0; i < sc->world.n_consumers; i++) {
        const char *cn = consumer_name(sc, i);
        if (!cn || (who[0] && strcmp(who, cn)))
            continue;
        add_slo(v, n, kdsim_strdupf(k->label, cn), kdsim_strdupf("consumers.%s.%s", cn, k->stat),
                max, spec);
        found++;
    }
    if (!found) {
        if (who[0])
            fprintf(err, "kdsim: --slo %s: the scenario has no consumer named %s\n", spec, who);
        else
            fprintf(err, "kdsim: --slo %s: the scenario has no consumers\n", spec);
        return -1;
    }
    return 0;
}

/* ---- the search space -------------------------------------------------------------------- */

/* Parse --shards "A..B" or "A,B,C" into a sorted list without duplicates, of shard
 * counts from 1 to 10000. Returns 0, -1 (not such a list) or -2 (more than MAX_CONFIGS
 * counts). */
static int parse_shards(const char *s, unsigned **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const char *dots = strstr(s, "..");
    if (dots) {
        char *end;
        unsigned long a = strtoul(s, &end, 10), b;
        if (end != dots || *s < '0' || *s > '9')
            return -1;
        b = strtoul(dots + 2, &end, 10);
        if (*end || dots[2] < '0' || dots[2] > '9' || a < 1 || b < a || b > 10000)
            return -1;
        if (b - a >= MAX_CONFIGS)
            return -2;
        *out = malloc((b - a + 1) * sizeof **out);
        SIM_ASSERT(*out != NULL);
        for (unsigned long x = a; x <= b; x++)
            (*out)[(*n)++] = (unsigned)x;
        return 0;
    }
    for (const char *p = s; *p;) {
        char *end;
        unsigned long x = strtoul(p, &end, 10);
        if (end == p || *p < '0' || *p > '9' || x < 1 || x > 10000 || (*end && *end != ',')) {
            free(*out);
            *out = NULL;
            return -1;
        }
        size_t i = 0;
        while (i < *n && (*out)[i] < x)
            i++;
        if ((i == *n || (*out)[i] != x) && *n >= MAX_CONFIGS) {
            free(*out);
            *out = NULL;
            return -2;
        }
        if (i == *n || (*out)[i] != x) {
            *out = realloc(*out, (*n + 1) * sizeof **out);
            SIM_ASSERT(*out != NULL);
            memmove(*out + i + 1, *out + i, (*n - i) * sizeof **out);
            (*out)[i] = (unsigned)x;
            (*n)++;
        }
        p = *end ? end + 1 : end;
    }
    return *n ? 0 : -1;
}

static void config_fini(config *c)
{
    free(c->label);
    for (size_t i = c->n_sets - c->n_own; i < c->n_sets; i++)
        free(c->sets[i]);
    free(c->sets);
    json_decref(c->vary);
    free(c->worst);
}

/* The configuration of `mode` at `shards` (provisioned) with vary combination `combo`. */
static config make_config(int mode, unsigned shards, const kdsim_scenario_opts *o, const vary *vs,
                          size_t nv, size_t combo, unsigned od_shards)
{
    config c = {0};
    c.mode = mode;
    c.combo = combo;
    c.shards = shards;
    c.sets = calloc(o->n_sets + nv + 2, sizeof *c.sets);
    SIM_ASSERT(c.sets != NULL);
    for (size_t i = 0; i < o->n_sets; i++)
        c.sets[c.n_sets++] = (char *)o->sets[i];
    c.sets[c.n_sets++] = kdsim_strdupf("stream.mode=%s", MODES[mode]);
    c.n_own++;
    if (mode == 0) {
        c.sets[c.n_sets++] = kdsim_strdupf("stream.shards=%u", shards);
        c.n_own++;
        c.label = kdsim_strdupf("provisioned, %u shard%s", shards, shards == 1 ? "" : "s");
    } else if (od_shards) {
        c.sets[c.n_sets++] = kdsim_strdupf("stream.shards=%u", od_shards);
        c.n_own++;
        c.label = kdsim_strdupf("%s", MODES[mode]);
    } else {
        c.label = kdsim_strdupf("%s", MODES[mode]);
    }
    c.vary = json_object();
    size_t rem = combo;
    const char **vals = calloc(nv ? nv : 1, sizeof *vals);
    SIM_ASSERT(vals != NULL);
    for (size_t i = nv; i-- > 0;) {
        vals[i] = vs[i].values[rem % vs[i].n];
        rem /= vs[i].n;
    }
    for (size_t i = 0; i < nv; i++) {
        c.sets[c.n_sets++] = kdsim_strdupf("%s=%s", vs[i].key, vals[i]);
        c.n_own++;
        json_object_set_new(c.vary, vs[i].key, json_string(vals[i]));
        char *l = kdsim_strdupf("%s, %s=%s", c.label, vs[i].key, vals[i]);
        free(c.label);
        c.label = l;
    }
    free(vals);
    return c;
}

/* Search order: mode, then shard count, then the --vary combination. */
static bool config_before(const config *a, const config *b)
{
    if (a->mode != b->mode)
        return a->mode < b->mode;
    if (a->shards != b->shards)
        return a->shards < b->shards;
    return a->combo < b->combo;
}

/* ---- the command ------------------------------------------------------------------------- */

static double fig_of(const json_t *run, const char *name)
{
    const json_t *v = json_object_get(json_object_get(run, "figures"), name);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A monthly cost to the cent, half a cent up: the one rounding of the text and the
 * JSON (printf's own rounding of 208.825, a binary fraction below it, gave 208.82 where
 * the JSON had 208.83). */
static double cents(double usd)
{
    return round(usd * 100) / 100;
}

/* usd rounded by cents(), as "$208.83". */
static const char *money(char *buf, size_t n, double usd)
{
    snprintf(buf, n, "$%.2f", cents(usd));
    return buf;
}

/* What config c fails, as "label worst > max; ..." into buf. */
static void failures(const config *c, const slo *slos, size_t ns, char *buf, size_t n)
{
    buf[0] = 0;
    size_t used = 0;
    for (size_t i = 0; i < ns && used + 1 < n; i++) {
        double w = c->worst[i];
        if (!isnan(w) && w <= slos[i].max)
            continue;
        /* Not defined: a latency of no record delivered, an iterator age of a consumer
         * that never read (figures.h). A miss: "every replication meets the target" is
         * not shown by a figure that has no value. */
        const char *why = !c->ran ? " (a run failed)"
                          : strstr(slos[i].figure, ".latency_ms.")         ? " (nothing delivered)"
                          : strstr(slos[i].figure, ".iterator_age_ms_max") ? " (never read)"
                                                                          : "";
        int k = snprintf(buf + used, n - used, "%s%s n/a%s", used ? "; " : "", slos[i].label,
                         why);
        if (!isnan(w))
            k = snprintf(buf + used, n - used,
                         /* a count whole, other figures to 6 digits */
                         w == floor(w) && fabs(w) < 1e15 ? "%s%s %.0f > %g" : "%s%s %.6g > %g",
                         used ? "; " : "", slos[i].label, w, slos[i].max);
        if (k < 0)
            break;
        used += (size_t)k < n - used ? (size_t)k : n - used - 1;
    }
}

int kdsim_cmd_plan(int argc, char **argv, FILE *out, FILE *err)
{
    kdsim_scenario_opts o = {0};
    kdsim_batch_opts bo;
    kdsim_batch_opts_init(&bo, 3, 1000);
    const char *scenario = NULL, *shards_arg = NULL, *modes_arg = NULL;
    const char **slo_args = calloc((size_t)argc, sizeof *slo_args);
    vary *vs = calloc((size_t)argc, sizeof *vs);
    SIM_ASSERT(slo_args && vs);
    size_t n_slo_args = 0, nv = 0;
    int status = KDSIM_EXIT_USAGE;
    slo *slos = NULL;
    size_t ns = 0;
    config *cfgs = NULL;
    size_t nc = 0;
    unsigned *shards = NULL;
    size_t n_shards = 0;
    kdsim_scenario sc = {0};
    json_t **res = NULL;
    size_t n_runs = 0;
    kdsim_runspec *specs = NULL;
    size_t *ids = NULL;
    json_t *base_run = NULL;

    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (kdsim_is_help(s)) {
            fputs(USAGE, out);
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
        bool takes = !strcmp(s, "--slo") || !strcmp(s, "--shards") || !strcmp(s, "--modes") ||
                     !strcmp(s, "--vary");
        const char *val = takes ? kdsim_opt_value(argc, argv, &i, err) : NULL;
        if (takes && !val)
            goto usage;
        if (!strcmp(s, "--slo")) {
            slo_args[n_slo_args++] = val;
        } else if (!strcmp(s, "--shards")) {
            shards_arg = val;
        } else if (!strcmp(s, "--modes")) {
            modes_arg = val;
        } else if (!strcmp(s, "--vary")) {
            const char *eq = strchr(val, '=');
            if (!eq || eq == val || !eq[1]) {
                fprintf(err,
                        "kdsim: --vary: expected KEY.PATH=V1,V2,..., like "
                        "producers[0].batch.linger=50ms,100ms,200ms, got \"%s\"\n",
                        val);
                goto usage;
            }
            /* The planner sets the shard count and the mode of every configuration
             * itself: a --vary of them would run another configuration than its label
             * ("provisioned, 2 shards" with 3 shards). An empty value is a typo. */
            size_t kl = (size_t)(eq - val);
            const char *own = kl == 13 && !strncmp(val, "stream.shards", kl) ? "--shards"
                              : kl == 11 && !strncmp(val, "stream.mode", kl) ? "--modes"
                                                                             : NULL;
            if (own) {
                fprintf(err,
                        "kdsim: --vary %.*s: the planner searches this itself; give the "
                        "values with %s\n",
                        (int)kl, val, own);
                goto usage;
            }
            /* Every run's seed is its replication's: a --vary seed would be overridden,
             * its configurations the same runs under other labels. */
            if (kl == 4 && !strncmp(val, "seed", kl)) {
                fprintf(err,
                        "kdsim: --vary seed: every configuration runs the replications' "
                        "seeds; give more seeds with --replications N, and the master seed "
                        "with --seed N\n");
                goto usage;
            }
            if (eq[1] == ',' || val[strlen(val) - 1] == ',' || strstr(eq, ",,")) {
                fprintf(err, "kdsim: --vary: an empty value in \"%s\"; separate the values "
                             "with single commas\n",
                        val);
                goto usage;
            }
            vary *v = &vs[nv++];
            v->keybuf = kdsim_strdupf("%.*s", (int)(eq - val), val);
            v->key = v->keybuf;
            char *copy = kdsim_strdupf("%s", eq + 1);
            for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
                v->values = realloc(v->values, (v->n + 1) * sizeof *v->values);
                SIM_ASSERT(v->values != NULL);
                v->values[v->n++] = kdsim_strdupf("%s", tok);
            }
            free(copy);
        } else if (s[0] == '-' && s[1] == '-') {
            fprintf(err, "kdsim: plan does not take %s\n", s);
            goto usage;
        } else if (!scenario) {
            scenario = s;
        } else {
            fprintf(err, "kdsim: unexpected argument %s (one scenario at a time)\n", s);
            goto usage;
        }
    }
    if (!scenario) {
        fprintf(err, "kdsim: plan needs a scenario file\n");
        goto usage;
    }
    if (kdsim_batch_opts_check(&bo, err))
        goto usage;
    unsigned long reps = bo.replications;
    unsigned jobs = bo.jobs;
    sim_time warmup = bo.warmup;
    const char *out_dir = bo.out_dir;
    bool json = bo.json;
    if (n_slo_args == 0) {
        fprintf(err, "kdsim: plan needs at least one target (--slo)\n");
        goto usage;
    }
    int sh_rc = shards_arg ? parse_shards(shards_arg, &shards, &n_shards) : 0;
    if (sh_rc == -2) {
        fprintf(err,
                "kdsim: --shards: at most %d shard counts (the most configurations a plan "
                "searches), got \"%s\"\n",
                MAX_CONFIGS, shards_arg);
        goto usage;
    }
    if (sh_rc) {
        fprintf(err,
                "kdsim: --shards: expected a range like 1..16 or a list like 2,4,8 of shard "
                "counts from 1 to 10000 (at most %d of them), got \"%s\"\n",
                MAX_CONFIGS, shards_arg);
        goto usage;
    }
    bool use_mode[3] = {true, true, true};
    if (modes_arg) {
        use_mode[0] = use_mode[1] = use_mode[2] = false;
        char *copy = kdsim_strdupf("%s", modes_arg);
        bool ok = true;
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            int m = -1;
            for (int k = 0; MODES[k]; k++)
                if (!strcmp(tok, MODES[k]))
                    m = k;
            if (m < 0) {
                fprintf(err,
                        "kdsim: --modes: %s is not a capacity mode (provisioned, "
                        "on_demand_standard, on_demand_advantage)\n",
                        tok);
                ok = false;
            } else {
                use_mode[m] = true;
            }
        }
        free(copy);
        /* "--modes ''" or "--modes ,": a search of nothing, not a plan without answer. */
        if (ok && !use_mode[0] && !use_mode[1] && !use_mode[2]) {
            fprintf(err,
                    "kdsim: --modes: expected one or more capacity modes separated by commas "
                    "(provisioned, on_demand_standard, on_demand_advantage), got \"%s\"\n",
                    modes_arg);
            ok = false;
        }
        if (!ok)
            goto usage;
    }
    /* Shard counts are searched for provisioned configurations only: --shards without
     * them would be ignored (on demand starts where its scaling does). */
    if (shards_arg && !use_mode[0]) {
        fprintf(err, "kdsim: --shards: --modes %s leaves out provisioned, the one mode searched "
                     "at shard counts; add provisioned to --modes, or leave out --shards\n",
                modes_arg);
        goto usage;
    }

    /* Every --vary value loads, before anything runs: an unknown key or a bad value is a
     * usage error here, not a failed configuration later. */
    for (size_t i = 0; i < nv; i++)
        for (size_t k = 0; k < vs[i].n; k++) {
            const char **sets = malloc((o.n_sets + 1) * sizeof *sets);
            SIM_ASSERT(sets != NULL);
            for (size_t j = 0; j < o.n_sets; j++)
                sets[j] = o.sets[j];
            /* Marked as --vary's, so that an error about it names that option. */
            char *kv = kdsim_strdupf("--vary %s=%s", vs[i].key, vs[i].values[k]);
            sets[o.n_sets] = kv;
            kdsim_scenario probe = {0};
            ydiag g;
            ydiag_init(&g);
            int rc = kdsim_scenario_load(&probe, scenario, sets, o.n_sets + 1, &g);
            if (rc) {
                ydiag_print(&g, err, "kdsim");
                fprintf(err, "kdsim: --vary %s=%s: %zu error%s with this value; nothing was run\n",
                        vs[i].key, vs[i].values[k], g.n, g.n == 1 ? "" : "s");
            }
            kdsim_scenario_fini(&probe); /* safe after a failed load, as for sc below */
            ydiag_fini(&g);
            free(kv);
            free(sets);
            if (rc) {
                status = KDSIM_EXIT_USAGE;
                goto done;
            }
        }

    /* The scenario as given: its consumers (for the targets) and its master seed. */
    {
        ydiag g;
        ydiag_init(&g);
        int rc = kdsim_scenario_load(&sc, scenario, o.sets, o.n_sets, &g);
        if (rc) {
            ydiag_report(&g, err, scenario);
            ydiag_fini(&g);
            goto done;
        }
        ydiag_fini(&g);
    }
    for (size_t i = 0; i < n_slo_args; i++)
        if (parse_slo(slo_args[i], &sc, &slos, &ns, err))
            goto usage;
    uint64_t master = sc.world.seed;
    unsigned scen_shards = sc.world.stream.shards;
    /* Without --modes, "every mode" means every mode the scenario can run in: one whose
     * setting it refuses (record_distribution: auto is on-demand only; split rules act
     * on a provisioned stream) is left out with a note instead of failing the plan. When
     * none can run, the configurations' check below says why. */
    if (!modes_arg) {
        bool left[3] = {false, false, false};
        char *why[3] = {NULL, NULL, NULL};
        /* On demand from a provisioned scenario starts at 4 shards or more (below). */
        unsigned od_probe = sc.world.stream.mode == KDS_MODE_PROVISIONED
                                ? (scen_shards > 4 ? scen_shards : 4)
                                : 0;
        for (int m = 0; m < 3; m++) {
            config probe = make_config(m, scen_shards, &o, vs, nv, 0, od_probe);
            size_t len = 0;
            FILE *mem = open_memstream(&why[m], &len);
            SIM_ASSERT(mem != NULL);
            uint64_t dummy;
            left[m] = kdsim_scenario_check(scenario, (const char *const *)probe.sets,
                                           probe.n_sets, warmup, mem, &dummy) != 0;
            fclose(mem);
            config_fini(&probe);
        }
        if (!left[0] || !left[1] || !left[2])
            for (int m = 0; m < 3; m++) {
                if (!left[m])
                    continue;
                use_mode[m] = false;
                /* The loader's first message names the setting and the fix. */
                const char *msg = why[m];
                if (!strncmp(msg, "kdsim: ", 7))
                    msg += 7;
                fprintf(err, "kdsim: plan: %s left out, as this scenario cannot run in it: %.*s\n",
                        MODES[m], (int)strcspn(msg, "\n"), msg);
            }
        for (int m = 0; m < 3; m++)
            free(why[m]);
    }
    size_t combos = 1;
    for (size_t i = 0; i < nv; i++)
        combos *= vs[i].n;

    status = KDSIM_EXIT_FAIL;
    /* On-demand configurations start at AWS's 4 shards of a new on-demand stream, or,
     * when more, at the capacity a stream that has seen this traffic before keeps:
     * enough to absorb peak_factor (AWS: twice) its peak (model.md section 7), so that a
     * recurring burst is judged in the steady state, not as a new stream's first. Then
     * the model's on-demand scaling acts. A scenario written for on-demand keeps its own
     * start. */
    unsigned od_shards = 0;
    double demand = NAN;
    /* Without --shards: size the search by the demand the scenario shows as given (one
     * run): AWS's sizing rule and the busiest minute offered, whichever is larger, from
     * 1 (from half of it when it is 8 shards or more) to 1.5 times it (at least 4, at
     * least the scenario's shards), capped at 64 counts. The sizing run is kept as run 0
     * (DIR/runs/000000.json; --resume keeps it), the configurations' after it. */
    bool od_sized = sc.world.stream.mode == KDS_MODE_PROVISIONED && (use_mode[1] || use_mode[2]);
    if ((use_mode[0] && !shards) || od_sized) {
        kdsim_runspec b = {scenario, o.sets, o.n_sets, master, warmup, sim_phys_bytes() / 2, NULL};
        size_t id = 0;
        long bad = 0;
        json_t **got = kdsim_run_many(&b, &id, 1, 1, out_dir, bo.resume, err, "plan", &bad);
        base_run = got ? got[0] : NULL;
        free(got);
        if (!base_run)
            goto done; /* the scenario loaded above: a failure of the run (status 1) */
        double rule = fig_of(base_run, "cost.sizing_rule.shards");
        double offered = ceil(fig_of(base_run, "stream.peak_offered_bytes_per_s") /
                              (double)sc.world.stream.write_bytes_per_s);
        double e = fmax(isnan(rule) ? 1 : rule, isnan(offered) ? 1 : offered);
        demand = e;
    }
    if (use_mode[0] && !shards) {
        unsigned lo = demand >= 8 ? (unsigned)floor(demand / 2) : 1;
        unsigned hi = (unsigned)fmax(fmax(4, ceil(1.5 * demand)), (double)scen_shards);
        if (hi - lo + 1 > 64)
            hi = lo + 63;
        n_shards = hi - lo + 1;
        shards = malloc(n_shards * sizeof *shards);
        SIM_ASSERT(shards != NULL);
        for (unsigned x = lo; x <= hi; x++)
            shards[x - lo] = x;
    }
    if (od_sized)
        od_shards = (unsigned)fmax(4, ceil(sc.world.capacity.od.peak_factor * demand));
    for (int m = 0; m < 3; m++) {
        if (!use_mode[m])
            continue;
        size_t counts = m == 0 ? n_shards : 1;
        for (size_t k = 0; k < counts; k++)
            for (size_t v = 0; v < combos; v++) {
                if (nc >= MAX_CONFIGS) {
                    fprintf(err,
                            "kdsim: more than %d configurations; narrow --shards or "
                            "--vary\n",
                            MAX_CONFIGS);
                    status = KDSIM_EXIT_USAGE;
                    goto done;
                }
                cfgs = realloc(cfgs, (nc + 1) * sizeof *cfgs);
                SIM_ASSERT(cfgs != NULL);
                cfgs[nc++] = make_config(m, m == 0 ? shards[k] : 0, &o, vs, nv, v, od_shards);
            }
    }
    /* Run, evaluate, and (searching shard counts by default) widen the search when the
     * answer sits at its lower edge or nothing provisioned passes: at most 3 times. */
    static const char *const cost_fig[] = {"cost.provisioned.monthly_usd",
                                           "cost.on_demand_standard.monthly_usd",
                                           "cost.on_demand_advantage.monthly_usd"};
    size_t ran_c = 0;
    for (int round = 0;; round++) {
        /* Check every new configuration loads before running any. */
        for (size_t c = ran_c; c < nc; c++) {
            uint64_t dummy;
            if (kdsim_scenario_check(scenario, (const char *const *)cfgs[c].sets, cfgs[c].n_sets,
                                     warmup, err, &dummy)) {
                fprintf(err, "kdsim: (in configuration %s)\n", cfgs[c].label);
                status = KDSIM_EXIT_USAGE;
                goto done;
            }
        }
        size_t first = ran_c * reps, count = (nc - ran_c) * reps;
        free(specs);
        free(ids);
        specs = calloc(count, sizeof *specs);
        ids = calloc(count, sizeof *ids);
        res = realloc(res, nc * reps * sizeof *res);
        SIM_ASSERT(specs && ids && res);
        n_runs = first; /* what res holds so far, for the clean-up */
        unsigned use = jobs < count ? jobs : (unsigned)count;
        for (size_t c = ran_c; c < nc; c++)
            for (size_t r = 0; r < reps; r++) {
                size_t i = c * reps + r - first;
                specs[i] = (kdsim_runspec){scenario,
                                           (const char *const *)cfgs[c].sets,
                                           cfgs[c].n_sets,
                                           kdsim_replication_seed(master, (unsigned)r),
                                           warmup,
                                           sim_phys_bytes() / 2 / use,
                                           NULL};
                ids[i] = 1 + c * reps + r; /* after the sizing run, 0 */
            }
        long failed = 0;
        json_t **got = kdsim_run_many(specs, ids, count, use, out_dir, bo.resume, err, "plan",
                                      &failed);
        if (!got)
            goto done;
        memcpy(res + first, got, count * sizeof *got);
        free(got);
        n_runs = nc * reps;
        if (failed)
            fprintf(err, "kdsim: %ld of %zu runs failed; their configurations count as failing\n",
                    failed, count);
        /* Evaluate: the worst replication of each target; the mean cost of the mode. */
        for (size_t c = ran_c; c < nc; c++) {
            config *cf = &cfgs[c];
            cf->worst = malloc((ns ? ns : 1) * sizeof *cf->worst);
            SIM_ASSERT(cf->worst != NULL);
            cf->ran = true;
            double sum = 0;
            for (size_t r = 0; r < reps; r++) {
                const json_t *run = res[c * reps + r];
                cf->ran = cf->ran && run;
                if (run)
                    sum += fig_of(run, cost_fig[cf->mode]);
            }
            cf->cost = cf->ran ? sum / (double)reps : NAN;
            cf->passes = cf->ran;
            for (size_t i = 0; i < ns; i++) {
                double w = -INFINITY;
                for (size_t r = 0; r < reps && cf->ran; r++) {
                    double x = fig_of(res[c * reps + r], slos[i].figure);
                    w = isnan(x) || isnan(w) ? NAN : fmax(w, x);
                }
                cf->worst[i] = cf->ran ? w : NAN;
                cf->passes = cf->passes && !isnan(w) && w <= slos[i].max;
            }
        }
        ran_c = nc;
        if (shards_arg || !use_mode[0] || round >= 3)
            break;
        /* Where the provisioned search stands. */
        unsigned lo = UINT32_MAX, hi = 0;
        long pbest = -1;
        for (size_t c = 0; c < nc; c++) {
            if (cfgs[c].mode != 0)
                continue;
            lo = cfgs[c].shards < lo ? cfgs[c].shards : lo;
            hi = cfgs[c].shards > hi ? cfgs[c].shards : hi;
            if (cfgs[c].passes && (pbest < 0 || cfgs[c].cost < cfgs[pbest].cost))
                pbest = (long)c;
        }
        unsigned from = 0, to = 0;
        if (pbest >= 0 && cfgs[pbest].shards == lo && lo > 1) {
            from = lo / 2 > 0 ? lo / 2 : 1; /* the answer is at the lower edge: go lower */
            to = lo - 1;
        } else if (pbest < 0 && hi < 10000) {
            from = hi + 1; /* nothing passes: go higher */
            to = hi * 2 < hi + 64 ? hi * 2 : hi + 64;
            to = to > 10000 ? 10000 : to;
        }
        if (!from)
            break;
        for (unsigned x = from; x <= to; x++)
            for (size_t v = 0; v < combos; v++) {
                if (nc >= MAX_CONFIGS)
                    break;
                cfgs = realloc(cfgs, (nc + 1) * sizeof *cfgs);
                SIM_ASSERT(cfgs != NULL);
                cfgs[nc++] = make_config(0, x, &o, vs, nv, v, od_shards);
            }
    }
    /* Show the configurations in search order: modes, then shards, then settings. */
    {
        size_t *perm = malloc(nc * sizeof *perm);
        config *sorted = malloc(nc * sizeof *sorted);
        json_t **rs = malloc(nc * reps * sizeof *rs);
        SIM_ASSERT(perm && sorted && rs);
        for (size_t c = 0; c < nc; c++)
            perm[c] = c;
        for (size_t i = 1; i < nc; i++) { /* insertion sort: stable, nc is small */
            size_t x = perm[i], j = i;
            while (j > 0 && config_before(&cfgs[x], &cfgs[perm[j - 1]])) {
                perm[j] = perm[j - 1];
                j--;
            }
            perm[j] = x;
        }
        for (size_t c = 0; c < nc; c++) {
            sorted[c] = cfgs[perm[c]];
            for (size_t r = 0; r < reps; r++)
                rs[c * reps + r] = res[perm[c] * reps + r];
        }
        memcpy(cfgs, sorted, nc * sizeof *cfgs);
        memcpy(res, rs, nc * reps * sizeof *res);
        free(perm);
        free(sorted);
        free(rs);
    }
    /* The answer and the runner-up: the cheapest passing configurations (ties: the
     * earlier in search order, fewer shards first). */
    long best = -1, second = -1;
    for (size_t c = 0; c < nc; c++) {
        if (!cfgs[c].passes)
            continue;
        if (best < 0 || cfgs[c].cost < cfgs[best].cost) {
            second = best;
            best = (long)c;
        } else if (second < 0 || cfgs[c].cost < cfgs[second].cost) {
            second = (long)c;
        }
    }
    /* The binding constraint. For a provisioned answer: what the same configuration
     * with the next lower shard count searched misses. Otherwise (or at the lowest
     * count): what the dearest configuration cheaper than the answer misses. */
    long closest = -1;
    for (size_t c = 0; best >= 0 && cfgs[best].mode == 0 && c < nc; c++)
        if (cfgs[c].mode == 0 && cfgs[c].shards < cfgs[best].shards &&
            json_equal(cfgs[c].vary, cfgs[best].vary) &&
            (closest < 0 || cfgs[c].shards > cfgs[closest].shards))
            closest = (long)c;
    if (closest >= 0 && cfgs[closest].passes)
        closest = -1; /* cheaper and passing cannot be: the answer is the cheapest */
    for (size_t c = 0; best >= 0 && closest < 0 && c < nc; c++)
        if (!cfgs[c].passes && cfgs[c].ran && cfgs[c].cost < cfgs[best].cost &&
            (closest < 0 || cfgs[c].cost > cfgs[closest].cost))
            closest = (long)c;
    long tight = -1;
    double tight_slack = INFINITY;
    for (size_t i = 0; best >= 0 && i < ns; i++) {
        if (slos[i].max <= 0)
            continue; /* "none at all": met or not, no margin to speak of */
        double slack = (slos[i].max - cfgs[best].worst[i]) / slos[i].max;
        if (slack < tight_slack) {
            tight_slack = slack;
            tight = (long)i;
        }
    }
    /* AWS's sizing rule, from a run that admitted all the traffic: a refused write is
     * neither billed nor seen at the rate it was meant to go, so a throttled run prices
     * the rule's shards on the traffic it let in. The provisioned run with the most
     * shards that refused nothing; else the scenario as given, then an on-demand run,
     * if one refused nothing; else (every run throttled) the one with the most shards,
     * said so beside the rule. */
    const json_t *rule_run = NULL;
    unsigned max_sh = 0;
    for (size_t c = 0; c < nc; c++)
        if (cfgs[c].mode == 0 && cfgs[c].shards > max_sh && res[c * reps] &&
            fig_of(res[c * reps], "stream.write_throttled_records") == 0) {
            max_sh = cfgs[c].shards;
            rule_run = res[c * reps];
        }
    if (!rule_run && base_run && fig_of(base_run, "stream.write_throttled_records") == 0)
        rule_run = base_run;
    for (size_t c = 0; !rule_run && c < nc; c++)
        if (cfgs[c].mode != 0 && res[c * reps] &&
            fig_of(res[c * reps], "stream.write_throttled_records") == 0)
            rule_run = res[c * reps];
    bool rule_throttled = rule_run == NULL;
    for (size_t c = 0; !rule_run && c < nc; c++)
        if (cfgs[c].mode == 0 && cfgs[c].shards > max_sh && res[c * reps]) {
            max_sh = cfgs[c].shards;
            rule_run = res[c * reps];
        }
    if (!rule_run)
        rule_run = base_run;
    double rule_shards = rule_run ? fig_of(rule_run, "cost.sizing_rule.shards") : NAN;
    double rule_cost =
        rule_run ? fig_of(rule_run, "cost.provisioned_sizing_rule.monthly_usd") : NAN;
    long rule_cfg = -1; /* the rule's shard count, with the answer's --vary settings */
    for (size_t c = 0; c < nc; c++)
        if (cfgs[c].mode == 0 && (double)cfgs[c].shards == rule_shards &&
            (rule_cfg < 0 || (best >= 0 && json_equal(cfgs[c].vary, cfgs[best].vary))))
            rule_cfg = (long)c;

    /* ---- the answer, as JSON (also the text's source) ---- */
    json_t *doc = json_object();
    json_object_set_new(doc, "kdsim_version", json_string(KDSIM_VERSION));
    json_object_set_new(doc, "scenario", json_string(sc.name));
    json_object_set_new(doc, "replications", json_integer((json_int_t)reps));
    json_object_set_new(doc, "warmup_s", json_real(sim_to_s(warmup)));
    json_t *seeds = json_array();
    for (size_t r = 0; r < reps; r++)
        json_array_append_new(
            seeds, kdsim_seed_json(kdsim_replication_seed(master, (unsigned)r)));
    json_object_set_new(doc, "seeds", seeds);
    json_t *tj = json_array();
    for (size_t i = 0; i < ns; i++) {
        json_t *t = json_object();
        json_object_set_new(t, "slo", json_string(slos[i].spec));
        json_object_set_new(t, "target", json_string(slos[i].label));
        json_object_set_new(t, "figure", json_string(slos[i].figure));
        json_object_set_new(t, "max", json_real(slos[i].max));
        json_array_append_new(tj, t);
    }
    json_object_set_new(doc, "targets", tj);
    json_t *cj = json_array();
    for (size_t c = 0; c < nc; c++) {
        json_t *x = json_object();
        json_object_set_new(x, "configuration", json_string(cfgs[c].label));
        json_object_set_new(x, "mode", json_string(MODES[cfgs[c].mode]));
        json_object_set_new(x, "shards",
                            cfgs[c].mode == 0 ? json_integer(cfgs[c].shards) : json_null());
        json_object_set(x, "vary", cfgs[c].vary);
        json_object_set_new(x, "monthly_usd",
                            isnan(cfgs[c].cost) ? json_null()
                                                : json_real(cents(cfgs[c].cost)));
        json_object_set_new(x, "passes", json_boolean(cfgs[c].passes));
        json_t *wj = json_object();
        for (size_t i = 0; i < ns; i++)
            json_object_set_new(wj, slos[i].figure,
                                isnan(cfgs[c].worst[i]) ? json_null()
                                                        : json_real(cfgs[c].worst[i]));
        json_object_set_new(x, "worst", wj);
        json_array_append_new(cj, x);
    }
    json_object_set_new(doc, "configurations", cj);
    json_object_set_new(doc, "answer", best >= 0 ? json_string(cfgs[best].label) : json_null());
    json_object_set_new(doc, "answer_monthly_usd",
                        best >= 0 ? json_real(cents(cfgs[best].cost)) : json_null());
    json_object_set_new(doc, "runner_up",
                        second >= 0 ? json_string(cfgs[second].label) : json_null());
    json_object_set_new(doc, "runner_up_monthly_usd",
                        second >= 0 ? json_real(cents(cfgs[second].cost))
                                    : json_null());
    json_t *bind = json_array();
    for (size_t i = 0; closest >= 0 && i < ns; i++)
        if (isnan(cfgs[closest].worst[i]) || cfgs[closest].worst[i] > slos[i].max)
            json_array_append_new(bind, json_string(slos[i].figure));
    json_object_set_new(doc, "binding", bind);
    json_object_set_new(doc, "binding_evidence",
                        closest >= 0 ? json_string(cfgs[closest].label) : json_null());
    json_t *rj = json_object();
    json_object_set_new(rj, "shards",
                        isnan(rule_shards) ? json_null() : json_integer((json_int_t)rule_shards));
    json_object_set_new(rj, "monthly_usd",
                        isnan(rule_cost) ? json_null() : json_real(cents(rule_cost)));
    json_object_set_new(rj, "passes",
                        rule_cfg >= 0 ? json_boolean(cfgs[rule_cfg].passes) : json_null());
    json_object_set_new(rj, "from_throttled_run", json_boolean(rule_throttled));
    json_object_set_new(doc, "sizing_rule", rj);

    if (json) {
        char *text = kdsim_report_dump(doc);
        if (text)
            fputs(text, out);
        free(text);
    } else {
        char a[32], b[32], buf[2048];
        fprintf(out, "kdsim %s plan: scenario %s, %lu replication%s a configuration (seeds",
                KDSIM_VERSION, sc.name, reps, reps == 1 ? "" : "s");
        for (size_t r = 0; r < reps; r++)
            fprintf(out, " %" PRIu64, kdsim_replication_seed(master, (unsigned)r));
        fprintf(out, ")%s\n", warmup > 0 ? ", warm-up excluded" : "");
        fprintf(out, "targets, met by every replication:\n");
        for (size_t i = 0; i < ns; i++)
            fprintf(out, "  %s <= %g\n", slos[i].label, slos[i].max);
        int lw = 13;
        for (size_t c = 0; c < nc; c++)
            lw = (int)strlen(cfgs[c].label) > lw ? (int)strlen(cfgs[c].label) : lw;
        fprintf(out, "\n%-*s %12s  %-5s %s\n", lw, "configuration", "per month", "meets",
                "targets missed (worst replication)");
        for (size_t c = 0; c < nc; c++) {
            failures(&cfgs[c], slos, ns, buf, sizeof buf);
            fprintf(out, "%-*s %12s  %-5s %s\n", lw, cfgs[c].label,
                    isnan(cfgs[c].cost) ? "failed" : money(a, sizeof a, cfgs[c].cost),
                    cfgs[c].passes ? "yes" : "no", buf);
        }
        fprintf(out, "\n");
        if (best < 0) {
            fprintf(out, "answer: no configuration searched meets every target; widen --shards "
                         "or relax the targets\n");
        } else {
            const config *B = &cfgs[best];
            fprintf(out, "answer: %s, %s a month (%s)\n", B->label, money(a, sizeof a, B->cost),
                    reps == 1 ? "one replication" : "mean of the replications");
            if (closest >= 0) {
                failures(&cfgs[closest], slos, ns, buf, sizeof buf);
                fprintf(out, "  binding: %s, %s, %s a month, misses: %s\n",
                        cfgs[closest].mode == 0 && B->mode == 0 ? "one step fewer shards"
                                                                : "the next cheaper configuration",
                        cfgs[closest].label, money(a, sizeof a, cfgs[closest].cost), buf);
                /* Other --vary settings at the answer's capacity, and why they fail. */
                for (size_t c = 0; c < nc; c++) {
                    if ((long)c == best || cfgs[c].passes || cfgs[c].mode != B->mode ||
                        cfgs[c].shards != B->shards)
                        continue;
                    failures(&cfgs[c], slos, ns, buf, sizeof buf);
                    fprintf(out, "  with other settings: %s misses: %s\n", cfgs[c].label, buf);
                }
            } else {
                /* Fewer shards is the way to a cheaper answer only when it is provisioned. */
                fprintf(out,
                        "  binding: none; the cheapest configuration searched meets every "
                        "target%s\n",
                        B->mode == 0 ? " (search lower with --shards)" : "");
            }
            if (tight >= 0)
                fprintf(out,
                        "  tightest target at the answer: %s %.6g of %g (%.0f %% to "
                        "spare)\n",
                        slos[tight].label, B->worst[tight], slos[tight].max,
                        100 * (isfinite(tight_slack) ? tight_slack : 0));
            /* The difference of the two figures shown. */
            if (second >= 0)
                fprintf(out, "  runner-up: %s, %s a month (+%s)\n", cfgs[second].label,
                        money(a, sizeof a, cfgs[second].cost),
                        money(b, sizeof b, cents(cfgs[second].cost) - cents(B->cost)));
        }
        if (!isnan(rule_shards))
            fprintf(out,
                    "AWS's sizing rule (busiest minute: write MiB/s, read MiB/s / 2, "
                    "records/s / 1000): %.0f shard%s, %s a month as provisioned; %s\n",
                    rule_shards, rule_shards == 1 ? "" : "s", money(a, sizeof a, rule_cost),
                    rule_cfg < 0            ? "not in the shards searched"
                    : cfgs[rule_cfg].passes ? "it meets the targets"
                                            : "it misses the targets");
        if (!isnan(rule_shards) && rule_throttled)
            fprintf(out, "  (every run searched refused writes: the rule sees, and its cost "
                         "bills, only the traffic let in; search more shards to size it)\n");
    }
    status = best >= 0 ? KDSIM_EXIT_OK : EXIT_NO_ANSWER;
    if (out_dir) {
        char *text = kdsim_report_dump(doc);
        char *p = kdsim_strdupf("%s/plan.json", out_dir);
        if (!text || kdsim_write_atomic(p, text)) {
            fprintf(err, "kdsim: cannot write %s: %s\n", p, strerror(errno));
            status = KDSIM_EXIT_FAIL;
        }
        free(p);
        free(text);
    }
    json_decref(doc);
    goto done;
usage:
    fputs(USAGE, err);
    status = KDSIM_EXIT_USAGE;
done:
    kdsim_results_free(res, n_runs);
    json_decref(base_run);
    free(specs);
    free(ids);
    for (size_t c = 0; c < nc; c++)
        config_fini(&cfgs[c]);
    free(cfgs);
    for (size_t i = 0; i < ns; i++) {
        free(slos[i].label);
        free(slos[i].figure);
        free(slos[i].spec);
    }
    free(slos);
    for (size_t i = 0; i < nv; i++) {
        for (size_t k = 0; k < vs[i].n; k++)
            free(vs[i].values[k]);
        free(vs[i].values);
        free(vs[i].keybuf);
    }
    free(vs);
    free(slo_args);
    free(shards);
    kdsim_scenario_fini(&sc);
    kdsim_scenario_opts_fini(&o);
    return status;
}
