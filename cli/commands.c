/* commands.c - parsing the command line and running the kdsim commands (commands.h). */
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "kds_efo.h"
#include "kds_firehose.h"
#include "kds_flink.h"
#include "kds_hashkey.h"
#include "kds_kcl.h"
#include "kds_lambda.h"
#include "kds_trace.h"
#include "kds_stream.h"
#include "kds_world.h"
#include "opts.h"
#include "outdir.h"
#include "plan.h"
#include "prices.h"
#include "progress.h"
#include "report.h"
#include "scenario.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_units.h"
#include "sweep.h"

static const char USAGE[] =
    "usage: kdsim run SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
    "                          [--prices FILE] [--json] [--out DIR] [--timing]\n"
    "                          [--max-memory S] [--trace FILE [--trace-kinds K,...]\n"
    "                          [--trace-shard ID] [--trace-names N,...]]\n"
    "       kdsim cost SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
    "                           [--prices FILE] [--json] [--max-memory S]\n"
    "       kdsim validate SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
    "                               [--prices FILE]\n"
    "       kdsim route [--shards N] KEY...\n"
    "       kdsim run SCENARIO --replications N [--warmup T] [--jobs N] [options of run]\n"
    "       kdsim sweep FILE [--jobs N] [--out DIR] [--part K/N] [--resume]\n"
    "       kdsim merge PART... [--out DIR]\n"
    "       kdsim plan SCENARIO --slo NAME=VALUE... [--replications N] [--shards A..B]\n"
    "       kdsim --help | --version; kdsim COMMAND --help\n";

/* The usage line of one of the commands parsed here, for its --help. */
static const char *usage_of(const char *cmd)
{
    if (!strcmp(cmd, "run"))
        return "usage: kdsim run SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
               "                 [--json] [--out DIR] [--prices FILE] [--timing]\n"
               "                 [--max-memory SIZE] [--trace FILE [--trace-kinds K,...]\n"
               "                 [--trace-shard ID] [--trace-names N,...]]\n";
    if (!strcmp(cmd, "cost"))
        return "usage: kdsim cost SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
               "                  [--prices FILE] [--json] [--max-memory SIZE]\n";
    if (!strcmp(cmd, "route"))
        return "usage: kdsim route [--shards N] KEY...\n";
    return "usage: kdsim validate SCENARIO [--seed N] [--duration T] [--set KEY.PATH=VALUE]...\n"
           "                      [--prices FILE]\n";
}

/* The help of each command, printed alone by `kdsim CMD --help` and together by
 * `kdsim --help`. */
#define HELP_RUN                                                                           \
    "  run SCENARIO       simulate the scenario and print its report\n"                     \
    "    --seed N         master seed (overrides the scenario's seed)\n"                    \
    "    --duration T     simulated time, like 30s, 10m, 6h or 7d\n"                        \
    "    --set K=V        override any scenario key, like --set stream.shards=8 or\n"       \
    "                     --set producers[0].rate=\"1500 records/s\" (repeatable)\n"       \
    "    --json           print the JSON report instead of the text report\n"              \
    "    --out DIR        also write report.json, report.txt, CSV time series, plots\n"    \
    "                     (DIR/plots, with gnuplot) and report.html in DIR, all of them\n" \
    "                     or none; they replace an earlier run's outputs there\n"         \
    "    --timing         print wall-clock time and events/s on stderr\n"                  \
    "    --max-memory S   stop cleanly if the run needs more memory than S (default: half\n" \
    "                     of the machine's memory)\n"                                      \
    "    --trace FILE     write a readable event trace (- for stderr): PutRecords with\n"  \
    "                     their outcomes, GetRecords calls, pushes, resharding, ...\n"     \
    "    --trace-kinds K  keep only these kinds (comma-separated: put, get, push,\n"       \
    "                     reshard, and those of the consumer kinds)\n"                     \
    "    --trace-shard ID keep only lines about this shard (shardId-000000000002 or 2)\n"  \
    "    --trace-names N  keep only these producers, consumers or workers (a KCL\n"        \
    "                     worker is CONSUMER/WORKER; either part selects it); the\n"      \
    "                     filters need --trace, and are checked against the scenario\n"   \
    "    --prices FILE    bill with this price file instead of the scenario's\n"           \
    "                     billing.prices (default scenarios/prices/us-east-1-2026-09.yaml)\n" \
    "    with --replications N or --warmup T: independent replications with confidence\n"  \
    "                     intervals (kdsim run SCENARIO --replications N --help)\n"
#define HELP_COST                                                                          \
    "  cost SCENARIO      simulate the scenario and print what its traffic costs as\n"     \
    "                     provisioned, On-demand Standard and On-demand Advantage, for\n"  \
    "                     the simulated period and a month, line item by line item\n"      \
    "    --seed, --duration, --set, --prices, --max-memory   as for run\n"                 \
    "    --json           print the report's cost object instead of the tables\n"
#define HELP_VALIDATE                                                                      \
    "  validate SCENARIO  check the scenario and report every error, run nothing\n"        \
    "    --seed, --duration, --set, --prices   as for run\n"
#define HELP_ROUTE                                                                         \
    "  route KEY...       print each partition key's hash key and shard on a new stream\n" \
    "    --shards N       number of shards of that stream (default 4)\n"
#define HELP_MORE                                                                          \
    "  run --replications, sweep, merge, plan: capacity planning (docs/capacity-planning.md);\n" \
    "                     kdsim COMMAND --help prints each one's options\n"
#define HELP_EXIT                                                                          \
    "\n"                                                                                    \
    "Exit status: 0 success, 2 bad input or usage, 1 other failure (kdsim plan: 3 when\n"  \
    "no configuration meets the targets).\n"                                                \
    "The scenario keys are documented in README.md.\n"

static const char HELP[] = "kdsim - a discrete-event simulator of Amazon Kinesis Data Streams\n"
                           "\n"
                           "Commands:\n" HELP_RUN HELP_COST HELP_VALIDATE HELP_ROUTE HELP_MORE
                               HELP_EXIT;

typedef struct args {
    const char *cmd;
    const char *scenario;
    kdsim_scenario_opts so;    /* --seed, --duration, --set, --prices */
    char **owned;              /* the lists of --trace-kinds and --trace-names */
    size_t n_owned;
    int json;
    int timing;
    const char *out_dir;
    const char *trace_path;    /* --trace FILE ("-" for stderr) */
    const char **trace_kinds;  /* owned NULL-terminated list, or NULL */
    const char **trace_names;  /* owned NULL-terminated list, or NULL */
    int64_t trace_shard;       /* -1: every shard */
    uint64_t max_memory;       /* --max-memory, B (0: half the machine's memory) */
    uint64_t shards;
    bool help;         /* --help: print the command's help, run nothing */
    const char **keys; /* route: the keys (borrowed from argv) */
    size_t n_keys;
} args;

static void args_fini(args *a)
{
    for (size_t i = 0; i < a->n_owned; i++)
        free(a->owned[i]);
    free(a->owned);
    kdsim_scenario_opts_fini(&a->so);
    free(a->keys);
}

/* Whether command `cmd` takes option `opt` (unknown options are reported elsewhere). */
static bool takes_option(const char *cmd, const char *opt)
{
    static const char *const run[] = {"--seed", "--duration", "--set", "--json", "--out",
                                      "--timing", "--prices", "--trace", "--trace-kinds",
                                      "--trace-shard", "--trace-names", "--max-memory", NULL};
    static const char *const cost[] = {"--seed", "--duration", "--set", "--json", "--prices",
                                       "--max-memory", NULL};
    static const char *const validate[] = {"--seed", "--duration", "--set", "--prices", NULL};
    static const char *const route[] = {"--shards", NULL};
    static const char *const all[] = {"--seed", "--duration", "--set", "--json", "--out",
                                      "--timing", "--shards", "--prices", "--trace",
                                      "--trace-kinds", "--trace-shard", "--trace-names",
                                      "--max-memory", NULL};
    bool known = false;
    for (size_t i = 0; all[i]; i++)
        known = known || !strcmp(all[i], opt);
    if (!known)
        return true; /* not ours to judge here */
    const char *const *list = !strcmp(cmd, "run")        ? run
                              : !strcmp(cmd, "cost")     ? cost
                              : !strcmp(cmd, "validate") ? validate
                                                         : route;
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(list[i], opt))
            return true;
    return false;
}

/* Split "a,b,c" into a NULL-terminated list of strings owned by `a`. */
static const char **split_list(args *a, const char *val)
{
    size_t n = 1;
    for (const char *p = val; *p; p++)
        n += *p == ',';
    const char **list = calloc(n + 1, sizeof *list);
    char *copy = strdup(val);
    SIM_ASSERT(list != NULL && copy != NULL);
    a->owned = realloc(a->owned, (a->n_owned + 2) * sizeof *a->owned);
    SIM_ASSERT(a->owned != NULL);
    a->owned[a->n_owned++] = copy;
    a->owned[a->n_owned++] = (char *)list; /* freed with the strings */
    /* Not strtok, which would skip empty items: "put,,get" is a typing slip to report. */
    size_t k = 0;
    for (char *tok = copy;; tok++) {
        list[k++] = tok;
        tok = strchr(tok, ',');
        if (!tok)
            break;
        *tok = '\0';
    }
    return list;
}

/* Whether a split list has an empty item. */
static bool has_empty(const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (!list[i][0])
            return true;
    return false;
}

/* "a, b and c" of a NULL-terminated list, into buf. */
static const char *join_and(char *buf, size_t n, const char *const *list)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; list[i] && o < n; i++) {
        int k = snprintf(buf + o, n - o, "%s%s", i == 0 ? "" : list[i + 1] ? ", " : " and ",
                         list[i]);
        if (k < 0)
            break;
        o += (size_t)k;
    }
    return buf;
}

/* Every kind of --trace-kinds is one the trace writes (kds_trace_kinds): a misspelt kind
 * would keep nothing. Prints why and returns -1, or returns 0. */
static int check_kinds(const char *const *kinds, const char *val, FILE *err)
{
    char all[256];
    join_and(all, sizeof all, kds_trace_kinds);
    if (has_empty(kinds)) {
        fprintf(err, "kdsim: --trace-kinds: expected kinds separated by commas, like put,get, "
                     "got \"%s\"; the kinds are %s\n", val, all);
        return -1;
    }
    for (size_t i = 0; kinds[i]; i++) {
        bool known = false;
        for (size_t k = 0; kds_trace_kinds[k] && !known; k++)
            known = !strcmp(kinds[i], kds_trace_kinds[k]);
        if (!known) {
            fprintf(err, "kdsim: --trace-kinds: no trace line has the kind \"%s\"; the kinds "
                         "are %s (README.md, The trace)\n", kinds[i], all);
            return -1;
        }
    }
    return 0;
}

/* Parse options after the command. Returns 0 or prints a usage error and returns 2. */
static int parse(int argc, char **argv, args *a, FILE *err)
{
    a->shards = 4;
    a->trace_shard = -1;
    for (int i = 2; i < argc; i++) {
        const char *s = argv[i];
        if (kdsim_is_help(s)) {
            a->help = true;
            return 0;
        }
        if (!takes_option(a->cmd, s)) {
            fprintf(err, "kdsim: %s does not take %s%s\n%s", a->cmd, s,
                    !strcmp(s, "--shards") ? " (did you mean --set stream.shards=N?)" : "", USAGE);
            return KDSIM_EXIT_USAGE;
        }
        int r = kdsim_scenario_opt(&a->so, argc, argv, &i, err);
        if (r < 0) {
            fputs(USAGE, err);
            return KDSIM_EXIT_USAGE;
        }
        if (r > 0)
            continue;
        bool takes = !strcmp(s, "--out") || !strcmp(s, "--shards") || !strcmp(s, "--trace") ||
                     !strcmp(s, "--trace-kinds") || !strcmp(s, "--trace-shard") ||
                     !strcmp(s, "--trace-names") || !strcmp(s, "--max-memory");
        const char *val = takes ? kdsim_opt_value(argc, argv, &i, err) : NULL;
        if (takes && !val) {
            fputs(USAGE, err);
            return KDSIM_EXIT_USAGE;
        }
        if (!strcmp(s, "--out")) {
            a->out_dir = val;
        } else if (!strcmp(s, "--max-memory")) {
            if (sim_parse_bytes(val, &a->max_memory) != 0 || a->max_memory == 0) {
                fprintf(err, "kdsim: --max-memory: expected a size like 2 GiB or 512 MiB, got "
                             "\"%s\"\n", val);
                return KDSIM_EXIT_USAGE;
            }
        } else if (!strcmp(s, "--trace")) {
            a->trace_path = val;
        } else if (!strcmp(s, "--trace-kinds")) {
            a->trace_kinds = split_list(a, val);
            if (check_kinds(a->trace_kinds, val, err))
                return KDSIM_EXIT_USAGE;
        } else if (!strcmp(s, "--trace-names")) {
            a->trace_names = split_list(a, val);
            if (has_empty(a->trace_names)) {
                fprintf(err, "kdsim: --trace-names: expected names separated by commas, like "
                             "web,live-metrics, got \"%s\"\n", val);
                return KDSIM_EXIT_USAGE;
            }
        } else if (!strcmp(s, "--trace-shard")) {
            /* AWS's form has exactly 12 digits; an index alone may have any number. */
            bool aws = strncmp(val, "shardId-", 8) == 0;
            const char *d = aws ? val + 8 : val;
            char *end;
            unsigned long long v = strtoull(d, &end, 10);
            if (*d < '0' || *d > '9' || *end || v > 1000000 || (aws && strlen(d) != 12)) {
                fprintf(err, "kdsim: --trace-shard: expected a shard id like "
                             "shardId-000000000002 or its index, got \"%s\"\n", val);
                return KDSIM_EXIT_USAGE;
            }
            a->trace_shard = (int64_t)v;
        } else if (!strcmp(s, "--shards")) {
            char *end;
            unsigned long long v = strtoull(val, &end, 10);
            if (*val < '0' || *val > '9' || *end || v < 1 || v > 10000) {
                fprintf(err, "kdsim: --shards: expected a whole number from 1 to 10000, got "
                             "\"%s\"\n", val);
                return KDSIM_EXIT_USAGE;
            }
            a->shards = v;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--timing")) {
            a->timing = 1;
        } else if (s[0] == '-' && s[1] == '-' && s[2]) {
            fprintf(err, "kdsim: unknown option %s\n%s", s, USAGE);
            return KDSIM_EXIT_USAGE;
        } else if (!strcmp(a->cmd, "route")) {
            a->keys = realloc(a->keys, (a->n_keys + 1) * sizeof *a->keys);
            SIM_ASSERT(a->keys != NULL);
            a->keys[a->n_keys++] = s;
        } else if (!a->scenario) {
            a->scenario = s;
        } else {
            fprintf(err, "kdsim: unexpected argument %s (one scenario at a time)\n%s", s, USAGE);
            return KDSIM_EXIT_USAGE;
        }
    }
    /* A filter without a trace would be dropped without a word. */
    const char *filter = a->trace_kinds    ? "--trace-kinds"
                         : a->trace_names  ? "--trace-names"
                         : a->trace_shard >= 0 ? "--trace-shard"
                                               : NULL;
    if (filter && !a->trace_path && !a->help) {
        fprintf(err, "kdsim: %s chooses the lines of the event trace: give --trace FILE (or "
                     "--trace - for stderr) too\n", filter);
        return KDSIM_EXIT_USAGE;
    }
    return 0;
}

static int cmd_route(args *a, FILE *out, FILE *err)
{
    if (a->n_keys == 0) {
        fprintf(err, "kdsim: route needs at least one partition key\n%s", USAGE);
        return KDSIM_EXIT_USAGE;
    }
    uint32_t n = (uint32_t)a->shards;
    /* Check every key before printing anything, so a bad key leaves no half table. */
    for (size_t i = 0; i < a->n_keys; i++) {
        size_t chars = 0;
        for (const char *p = a->keys[i]; *p; p++)
            chars += ((unsigned char)*p & 0xC0) != 0x80; /* UTF-8 lead bytes */
        if (chars < 1 || chars > 256) {
            fprintf(err, "kdsim: route: a partition key has 1 to 256 characters, got %zu\n",
                    chars);
            return KDSIM_EXIT_USAGE;
        }
    }
    fprintf(out, "%-24s %-34s %-40s %s\n", "partition key", "hash key (hex)", "hash key (decimal)",
            "shard");
    for (size_t i = 0; i < a->n_keys; i++) {
        const char *k = a->keys[i];
        size_t len = strlen(k);
        kds_hashkey h = kds_hashkey_from_md5(k, len);
        uint32_t shard = 0;
        while (shard + 1 < n && kds_hashkey_even_start(shard + 1, n) <= h)
            shard++;
        char hex[KDS_HASHKEY_HEX_LEN], dec[KDS_HASHKEY_DEC_LEN], id[32];
        fprintf(out, "%-24s %-34s %-40s %s\n", k, kds_hashkey_to_hex(hex, h),
                kds_hashkey_to_dec(dec, h), kds_shard_id(id, sizeof id, shard));
    }
    return KDSIM_EXIT_OK;
}

/* Load the scenario; on bad input print every error and return 2. */
static int load(args *a, kdsim_scenario *sc, FILE *err)
{
    if (!a->scenario) {
        fprintf(err, "kdsim: %s needs a scenario file\n%s", a->cmd, USAGE);
        return KDSIM_EXIT_USAGE;
    }
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(sc, a->scenario, a->so.sets, a->so.n_sets, &g);
    if (rc)
        ydiag_report(&g, err, a->scenario);
    ydiag_fini(&g);
    return rc ? KDSIM_EXIT_USAGE : 0;
}

/* A growable list of borrowed names. */
typedef struct name_list {
    const char **v;
    size_t n, cap;
} name_list;

static void names_add(name_list *l, const char *name)
{
    if (!name)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        SIM_ASSERT(l->v != NULL);
    }
    l->v[l->n++] = name;
}

/* The entities a trace line can name in this scenario: the stream, the producers, the
 * consumers, and each KCL worker both alone and as CONSUMER/WORKER (kds_trace.h).
 * Strings made here go to `owned`. */
static void trace_entities(kdsim_scenario *sc, name_list *l, name_list *owned)
{
    const kds_world_cfg *wc = &sc->world;
    names_add(l, wc->stream.name);
    for (size_t i = 0; i < wc->n_producers; i++)
        names_add(l, wc->producers[i].name);
    ywalk w = {&sc->doc, NULL};
    yaml_node_t *cs = yw_get(&w, ydoc_root(&sc->doc), "consumers");
    for (size_t i = 0; i < yw_seq_len(&w, cs) && i < wc->n_consumers; i++) {
        yaml_node_t *nn = yw_get(&w, yw_seq_item(&w, cs, i), "name");
        const char *cname = nn && nn->type == YAML_SCALAR_NODE ? (const char *)nn->data.scalar.value
                                                               : NULL;
        names_add(l, cname);
        const kds_consumer_cfg *cc = &wc->consumers[i];
        if (!cname || cc->kind != KDS_CONSUMER_MODEL || cc->make != kds_kcl_make)
            continue;
        const kds_kcl_cfg *kc = cc->cfg;
        for (size_t k = 0; k < kc->n_workers; k++) {
            names_add(l, kc->workers[k].name);
            char *both = kdsim_strdupf("%s/%s", cname, kc->workers[k].name);
            names_add(owned, both);
            names_add(l, both);
        }
    }
}

/* Why nothing in scenario `wc` can write a line of trace kind `kind`, or NULL when
 * something can: the kinds' sources (README.md, The trace) by what the scenario has. */
static const char *kind_absent(const kds_world_cfg *wc, bool reshards, const char *kind)
{
    bool get = false, push = false, lambda = false, firehose = false, flink = false,
         failures = false, kcl = false;
    for (size_t i = 0; i < wc->n_consumers; i++) {
        const kds_consumer_cfg *cc = &wc->consumers[i];
        if (cc->kind == KDS_CONSUMER_POLLING) {
            get = true;
        } else if (cc->make == kds_efo_make) {
            push = true;
        } else if (cc->make == kds_lambda_make) {
            lambda = true;
            bool efo = ((const kds_lambda_cfg *)cc->cfg)->retrieval == KDS_LAMBDA_EFO;
            push = push || efo;
            get = get || !efo;
        } else if (cc->make == kds_firehose_make) {
            firehose = get = true;
        } else if (cc->make == kds_flink_make) {
            const kds_flink_cfg *fc = cc->cfg;
            flink = true;
            failures = failures || fc->n_failures > 0;
            push = push || fc->retrieval == KDS_FLINK_EFO;
            get = get || fc->retrieval != KDS_FLINK_EFO;
        } else if (cc->make == kds_kcl_make) {
            bool efo = ((const kds_kcl_cfg *)cc->cfg)->efo;
            kcl = true;
            push = push || efo;
            get = get || !efo;
        } else {
            return NULL; /* a kind this check does not know: say nothing */
        }
    }
    static const struct {
        const char *kind;
        const char *why;
    } why[] = {{"put", "it has no producer"},
               {"get", "no consumer of it reads by polling (GetRecords)"},
               {"push", "no consumer of it reads through enhanced fan-out (SubscribeToShard)"},
               {"reshard", "its stream is provisioned and nothing in it reshards"},
               {"invoke", "it has no Lambda consumer"},
               {"s3", "it has no Firehose consumer"},
               {"checkpoint", "it has no Flink consumer"},
               {"failure", "no Flink consumer of it has failures"},
               {"lease", "it has no KCL consumer"}};
    bool can[] = {wc->n_producers > 0, get, push, reshards, lambda, firehose, flink,
                  failures, kcl};
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
        if (!strcmp(kind, why[i].kind))
            return can[i] ? NULL : why[i].why;
    return NULL;
}

/* The trace's entity column: as wide as the longest name a line of this scenario can
 * have (trace_entities), so that a long name does not shift the columns after it. */
static int trace_entity_width(kdsim_scenario *sc)
{
    name_list l = {0}, owned = {0};
    trace_entities(sc, &l, &owned);
    size_t w = 0;
    for (size_t k = 0; k < l.n; k++)
        if (l.v[k] && strlen(l.v[k]) > w)
            w = strlen(l.v[k]);
    for (size_t k = 0; k < owned.n; k++)
        free((char *)owned.v[k]);
    free(owned.v);
    free(l.v);
    return w > 200 ? 200 : (int)w;
}

/* Whether --trace-names and --trace-shard can match a line of this scenario: a name no
 * entity has, or a shard that can never exist, would give an empty trace without a
 * word. Prints why and returns 2, or returns 0. A shard that resharding may create is
 * let through (the run says afterwards if it never existed). A kind of --trace-kinds
 * that nothing in the scenario can write gets a note on stderr, and the run goes on. */
static int check_trace_filters(const args *a, kdsim_scenario *sc, FILE *err)
{
    const kds_world_cfg *wc = &sc->world;
    bool reshards = wc->stream.mode != KDS_MODE_PROVISIONED || wc->capacity.n_events > 0 ||
                    wc->capacity.n_rules > 0;
    for (size_t i = 0; a->trace_kinds && a->trace_kinds[i]; i++) {
        const char *why = kind_absent(wc, reshards, a->trace_kinds[i]);
        if (why)
            fprintf(err, "kdsim: note: --trace-kinds %s: no line of this kind can come from "
                         "%s: %s; the trace will hold none\n",
                    a->trace_kinds[i], a->scenario, why);
    }
    if (a->trace_shard >= 0) {
        if (!reshards && a->trace_shard >= (int64_t)wc->stream.shards) {
            fprintf(err, "kdsim: --trace-shard %" PRId64 ": the stream has %u shard%s, "
                         "numbered from 0 to %u, and nothing in %s reshards it, so no line "
                         "would match; nothing was run\n",
                    a->trace_shard, wc->stream.shards, wc->stream.shards == 1 ? "" : "s",
                    wc->stream.shards - 1, a->scenario);
            return KDSIM_EXIT_USAGE;
        }
    }
    if (!a->trace_names)
        return 0;
    name_list l = {0}, owned = {0};
    trace_entities(sc, &l, &owned);
    int status = 0;
    for (size_t i = 0; a->trace_names[i] && !status; i++) {
        bool found = false;
        for (size_t k = 0; k < l.n && !found; k++)
            found = !strcmp(l.v[k], a->trace_names[i]);
        if (found)
            continue;
        fprintf(err, "kdsim: --trace-names: nothing in %s is named \"%s\"; the stream, "
                     "producers, consumers and KCL workers (also as CONSUMER/WORKER) are ",
                a->scenario, a->trace_names[i]);
        size_t shown = l.n < 20 ? l.n : 20;
        for (size_t k = 0; k < shown; k++)
            fprintf(err, "%s%s", k == 0 ? "" : k + 1 == l.n ? " and " : ", ", l.v[k]);
        if (shown < l.n)
            fprintf(err, " and %zu more", l.n - shown);
        fprintf(err, "; nothing was run\n");
        status = KDSIM_EXIT_USAGE;
    }
    for (size_t k = 0; k < owned.n; k++)
        free((char *)owned.v[k]);
    free(owned.v);
    free(l.v);
    return status;
}

/* The memory guard's budget: --max-memory, by default half of the machine, so that a run
 * too large for it stops with a message instead of being killed. */
static uint64_t memory_budget(const args *a)
{
    return a->max_memory ? a->max_memory : sim_phys_bytes() / 2;
}

/* What a stopped run wrote: nothing, or only its event trace (`trace`: the --trace file,
 * NULL for none or standard error), which is kept for what it shows of the stop. */
static const char *written(const char *trace, char *buf, size_t n)
{
    if (!trace)
        return "nothing was written";
    snprintf(buf, n, "no report was written; the trace %s holds the events up to the stop",
             trace);
    return buf;
}

/* Why a run the memory guard stopped wrote nothing (but its trace, if any). */
static void print_out_of_memory(const kds_world *w, const char *trace, FILE *err)
{
    char lim[32], at[32], wr[PATH_MAX + 80];
    sim_fmt_bytes(lim, sizeof lim, w->cfg->max_memory);
    if (sim_events_run(w->sim) == 0) /* kds_world_init found it: nothing ran */
        fprintf(err, "kdsim: building the scenario took more than %s of memory "
                     "(--max-memory); use fewer shards, consumers, KCL workers or producer "
                     "clients, or raise --max-memory; nothing was run, %s\n",
                lim, written(trace, wr, sizeof wr));
    else
        fprintf(err, "kdsim: the run stopped at %s simulated: it needed more than %s of memory "
                     "(--max-memory); shorten --duration, use fewer shards or a shorter "
                     "retention, or raise --max-memory; %s\n",
                sim_fmt_duration(at, sizeof at, sim_now(w->sim)), lim,
                written(trace, wr, sizeof wr));
}

static int cmd_run(args *a, FILE *out, FILE *err)
{
    kdsim_scenario sc = {0};
    kdsim_outdir od = {0};
    int status = load(a, &sc, err);
    if (!status)
        status = check_trace_filters(a, &sc, err);
    /* --out is checked, and its hidden folder made, before anything runs (outdir.h). */
    if (!status && a->out_dir)
        status = kdsim_outdir_begin(&od, a->out_dir, err);
    if (status) {
        kdsim_scenario_fini(&sc);
        return status;
    }
    kds_trace trace = {0};
    FILE *tf = NULL;
    if (a->trace_path) {
        tf = strcmp(a->trace_path, "-") == 0 ? err : fopen(a->trace_path, "w");
        if (!tf) {
            fprintf(err, "kdsim: --trace %s: %s\n", a->trace_path, strerror(errno));
            kdsim_scenario_fini(&sc);
            kdsim_outdir_abort(&od);
            return KDSIM_EXIT_FAIL;
        }
        trace = (kds_trace){tf, a->trace_kinds, a->trace_names, a->trace_shard, 0,
                            trace_entity_width(&sc)};
        kds_trace_header(&trace);
        sc.world.trace = &trace;
    }
    sc.world.max_memory = memory_budget(a);
    kds_world w;
    double t0 = sim_wall_s();
    int rc = kds_world_init(&w, &sc.world);
    if (rc) {
        fprintf(err, "kdsim: cannot build the scenario: %s\n", sim_strerror(rc));
        if (tf && tf != err)
            fclose(tf);
        kdsim_scenario_fini(&sc);
        kdsim_outdir_abort(&od);
        return KDSIM_EXIT_FAIL;
    }
    kdsim_progress_run(&w, err, tf != err); /* a progress line on a terminal (progress.c) */
    double t1 = sim_wall_s();
    const char *trace_file = tf && tf != err ? a->trace_path : NULL;
    char wr[PATH_MAX + 80];
    if (w.out_of_memory) {
        print_out_of_memory(&w, trace_file, err);
        if (tf && tf != err)
            fclose(tf);
        kds_world_fini(&w);
        kdsim_scenario_fini(&sc);
        kdsim_outdir_abort(&od);
        return KDSIM_EXIT_FAIL;
    }
    bool trace_bad = tf && tf != err && fclose(tf) != 0;
    if (trace_bad)
        fprintf(err, "kdsim: error writing the trace %s\n", a->trace_path);
    if (a->trace_shard >= 0 && (size_t)a->trace_shard >= w.stream.n_shards)
        fprintf(err, "kdsim: note: --trace-shard %" PRId64 ": the run's shards were 0 to %zu, "
                     "so the trace holds no shard's line\n",
                a->trace_shard, w.stream.n_shards - 1);
    if (w.violated) {
        fprintf(err, "kdsim: %s\nkdsim: the run stopped: this is a bug in kdsim; %s\n",
                w.violation, written(trace_file, wr, sizeof wr));
        kds_world_fini(&w);
        kdsim_scenario_fini(&sc);
        kdsim_outdir_abort(&od);
        return KDSIM_EXIT_FAIL;
    }
    json_t *report = kdsim_report_json(&sc, &w);
    status = KDSIM_EXIT_FAIL;
    if (!report && kdsim_cost_error) {
        fprintf(err, "kdsim: %s; nothing was written\n", kdsim_cost_error);
        status = KDSIM_EXIT_USAGE;
    }
    if (report) {
        status = trace_bad ? KDSIM_EXIT_FAIL : KDSIM_EXIT_OK;
        /* Every output into the hidden folder, then all of them into DIR at once. */
        if (a->out_dir && (status != KDSIM_EXIT_OK ||
                           kdsim_report_write_dir(&sc, &w, report, od.staging) != 0 ||
                           kdsim_outdir_commit(&od, err) != 0))
            status = KDSIM_EXIT_FAIL;
        if (status == KDSIM_EXIT_OK) {
            if (a->json) {
                char *s = kdsim_report_dump(report);
                if (s)
                    fputs(s, out);
                else
                    status = KDSIM_EXIT_FAIL;
                free(s);
            } else {
                kdsim_report_text(report, out);
            }
        }
        json_decref(report);
    }
    if (a->timing) {
        double sim_s = sim_to_s(w.cfg->duration), wall = t1 - t0;
        uint64_t ev = sim_events_run(w.sim);
        fprintf(err, "kdsim: %.3f s wall, %" PRIu64 " events, %.3g events/s, %.3g simulated s "
                     "per wall s\n",
                wall, ev, wall > 0 ? (double)ev / wall : 0, wall > 0 ? sim_s / wall : 0);
    }
    kds_world_fini(&w);
    kdsim_scenario_fini(&sc);
    kdsim_outdir_abort(&od); /* nothing left after a commit; all of it after a failure */
    return status;
}

/* kdsim cost: run the scenario and print the cost comparison (or its JSON). */
static int cmd_cost(args *a, FILE *out, FILE *err)
{
    kdsim_scenario sc = {0};
    int status = load(a, &sc, err);
    if (status) {
        kdsim_scenario_fini(&sc);
        return status;
    }
    sc.world.max_memory = memory_budget(a);
    kds_world w;
    int rc = kds_world_init(&w, &sc.world);
    if (rc) {
        fprintf(err, "kdsim: cannot build the scenario: %s\n", sim_strerror(rc));
        kdsim_scenario_fini(&sc);
        return KDSIM_EXIT_FAIL;
    }
    kdsim_progress_run(&w, err, true); /* a progress line on a terminal (progress.c) */
    if (w.out_of_memory) {
        print_out_of_memory(&w, NULL, err);
        kds_world_fini(&w);
        kdsim_scenario_fini(&sc);
        return KDSIM_EXIT_FAIL;
    }
    if (w.violated) {
        fprintf(err, "kdsim: %s\nkdsim: the run stopped: this is a bug in kdsim; nothing was "
                     "written\n", w.violation);
        kds_world_fini(&w);
        kdsim_scenario_fini(&sc);
        return KDSIM_EXIT_FAIL;
    }
    /* The whole report, so that the figures are the ones `run` reports. */
    json_t *report = kdsim_report_json(&sc, &w);
    const json_t *cost = report ? json_object_get(report, "cost") : NULL;
    status = KDSIM_EXIT_FAIL;
    if (!report && kdsim_cost_error) {
        fprintf(err, "kdsim: %s\n", kdsim_cost_error);
        status = KDSIM_EXIT_USAGE;
    }
    if (cost) {
        status = KDSIM_EXIT_OK;
        if (a->json) {
            char *s = kdsim_report_dump(cost);
            if (s)
                fputs(s, out);
            else
                status = KDSIM_EXIT_FAIL;
            free(s);
        } else {
            fprintf(out, "kdsim %s: scenario %s, seed %" PRIu64 "\n\n", KDSIM_VERSION, sc.name,
                    sc.world.seed);
            kdsim_cost_text_detail(cost, out);
        }
    }
    json_decref(report);
    kds_world_fini(&w);
    kdsim_scenario_fini(&sc);
    return status;
}

static int cmd_validate(args *a, FILE *out, FILE *err)
{
    kdsim_scenario sc = {0};
    int status = load(a, &sc, err);
    if (!status)
        fprintf(out, "%s: ok (%zu producer%s, %zu consumer%s, %u shard%s)\n", a->scenario,
                sc.world.n_producers, sc.world.n_producers == 1 ? "" : "s", sc.world.n_consumers,
                sc.world.n_consumers == 1 ? "" : "s", sc.world.stream.shards,
                sc.world.stream.shards == 1 ? "" : "s");
    kdsim_scenario_fini(&sc);
    return status;
}

int kdsim_main(int argc, char **argv, FILE *out, FILE *err)
{
    if (argc < 2) {
        fputs(USAGE, err);
        return KDSIM_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(HELP, out);
        fputs("\n", out);
        fputs(USAGE, out);
        return KDSIM_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        fprintf(out, "kdsim %s\n", KDSIM_VERSION);
        return KDSIM_EXIT_OK;
    }
    /* The capacity-planning commands parse their own options (sweep.h, plan.h). */
    if (kdsim_wants_replications(argc, argv))
        return kdsim_cmd_replicate(argc, argv, out, err);
    if (!strcmp(cmd, "sweep"))
        return kdsim_cmd_sweep(argc, argv, out, err);
    if (!strcmp(cmd, "merge"))
        return kdsim_cmd_merge(argc, argv, out, err);
    if (!strcmp(cmd, "plan"))
        return kdsim_cmd_plan(argc, argv, out, err);
    if (strcmp(cmd, "run") && strcmp(cmd, "validate") && strcmp(cmd, "route") &&
        strcmp(cmd, "cost")) {
        fprintf(err, "kdsim: unknown command '%s'\n%s", cmd, USAGE);
        return KDSIM_EXIT_USAGE;
    }
    args a = {0};
    a.cmd = cmd;
    int status = parse(argc, argv, &a, err);
    if (!status && a.help) {
        const char *help = !strcmp(cmd, "run")    ? HELP_RUN
                           : !strcmp(cmd, "cost") ? HELP_COST
                           : !strcmp(cmd, "route") ? HELP_ROUTE
                                                   : HELP_VALIDATE;
        fprintf(out, "%s\n%s%s", usage_of(cmd), help, HELP_EXIT);
    } else if (!status) {
        if (!strcmp(cmd, "route"))
            status = cmd_route(&a, out, err);
        else if (!strcmp(cmd, "run"))
            status = cmd_run(&a, out, err);
        else if (!strcmp(cmd, "cost"))
            status = cmd_cost(&a, out, err);
        else
            status = cmd_validate(&a, out, err);
    }
    args_fini(&a);
    return status;
}
