/* opts.c - the command-line options that several commands share (opts.h). */
#include "opts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"
#include "scenario.h"
#include "sim_err.h"
#include "sim_units.h"

char *kdsim_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    SIM_ASSERT(n >= 0);
    char *s = malloc((size_t)n + 1);
    SIM_ASSERT(s != NULL);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int kdsim_parse_duration_opt(const char *s, sim_time *out)
{
    return sim_parse_duration(s, out) == 0 && *out >= 0 ? 0 : -1;
}

bool kdsim_is_help(const char *s)
{
    return !strcmp(s, "--help") || !strcmp(s, "-h");
}

const char *kdsim_opt_value(int argc, char **argv, int *i, FILE *err)
{
    if (*i + 1 >= argc) {
        fprintf(err, "kdsim: %s needs a value\n", argv[*i]);
        return NULL;
    }
    if (!argv[*i + 1][0]) {
        /* An empty value (--out "") names nothing: refused before any run. */
        fprintf(err, "kdsim: %s needs a value, got an empty one\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

/* A whole number in [lo, hi] (digits only: no sign, no blanks); returns 0 or -1. */
static int parse_count(const char *s, unsigned long long lo, unsigned long long hi,
                       unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* ---- scenario options ------------------------------------------------------------------ */

static void add_set(kdsim_scenario_opts *o, const char *s)
{
    o->sets = realloc(o->sets, (o->n_sets + 1) * sizeof *o->sets);
    SIM_ASSERT(o->sets != NULL);
    o->sets[o->n_sets++] = s;
}

static void add_owned(kdsim_scenario_opts *o, char *s)
{
    o->owned = realloc(o->owned, (o->n_owned + 1) * sizeof *o->owned);
    SIM_ASSERT(o->owned != NULL);
    o->owned[o->n_owned++] = s;
    add_set(o, s);
}

int kdsim_scenario_opt(kdsim_scenario_opts *o, int argc, char **argv, int *i, FILE *err)
{
    const char *s = argv[*i];
    bool ours = !strcmp(s, "--seed") || !strcmp(s, "--duration") || !strcmp(s, "--set") ||
                !strcmp(s, "--prices");
    if (!ours)
        return 0;
    const char *val = kdsim_opt_value(argc, argv, i, err);
    if (!val)
        return -1;
    if (!strcmp(s, "--seed")) {
        unsigned long long v;
        if (parse_count(val, 0, KDSIM_SEED_MAX, &v)) {
            /* Digits alone, but too many: the seed's limit (scenario.h). */
            bool big = *val && strspn(val, "0123456789") == strlen(val);
            if (big)
                fprintf(err,
                        "kdsim: --seed: at most %" PRIu64 " (2^63 - 1: seeds are written as "
                        "JSON integers), got %s\n",
                        KDSIM_SEED_MAX, val);
            else
                fprintf(err, "kdsim: --seed: expected a whole number, got \"%s\"\n", val);
            return -1;
        }
        /* In place among the --set options, so that the last of them wins. */
        add_owned(o, kdsim_strdupf("--seed seed=%llu", v));
    } else if (!strcmp(s, "--duration")) {
        /* Through the loader, which checks it like the scenario's own key. */
        add_owned(o, kdsim_strdupf("--duration duration=%s", val));
    } else if (!strcmp(s, "--set")) {
        add_set(o, val);
    } else {
        char cwd[4096];
        if (val[0] != '/' && getcwd(cwd, sizeof cwd))
            add_owned(o, kdsim_strdupf("--prices billing.prices=%s/%s", cwd, val));
        else
            add_owned(o, kdsim_strdupf("--prices billing.prices=%s", val));
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

/* ---- batch options --------------------------------------------------------------------- */

void kdsim_batch_opts_init(kdsim_batch_opts *b, unsigned long replications, unsigned long max)
{
    memset(b, 0, sizeof *b);
    b->replications = replications;
    b->max_replications = max;
    b->jobs = kdsim_cpus();
}

int kdsim_batch_opt(kdsim_batch_opts *b, int argc, char **argv, int *i, FILE *err)
{
    const char *s = argv[*i];
    if (!strcmp(s, "--json")) {
        b->json = true;
        return 1;
    }
    if (!strcmp(s, "--resume")) {
        b->resume = true;
        return 1;
    }
    bool ours = !strcmp(s, "--replications") || !strcmp(s, "--warmup") ||
                !strcmp(s, "--jobs") || !strcmp(s, "--out");
    if (!ours)
        return 0;
    const char *val = kdsim_opt_value(argc, argv, i, err);
    if (!val)
        return -1;
    if (!strcmp(s, "--replications")) {
        unsigned long long v;
        if (parse_count(val, 1, b->max_replications, &v)) {
            fprintf(err,
                    "kdsim: --replications: expected a whole number from 1 to %lu, got "
                    "\"%s\"\n",
                    b->max_replications, val);
            return -1;
        }
        b->replications = (unsigned long)v;
    } else if (!strcmp(s, "--warmup")) {
        if (kdsim_parse_duration_opt(val, &b->warmup)) {
            fprintf(err, "kdsim: --warmup: expected a duration like 5m or 30s, got \"%s\"\n",
                    val);
            return -1;
        }
    } else if (!strcmp(s, "--jobs")) {
        if (kdsim_parse_jobs(val, &b->jobs)) {
            fprintf(err, "kdsim: --jobs: expected a whole number from 1 to 1024, got \"%s\"\n",
                    val);
            return -1;
        }
    } else {
        b->out_dir = val;
    }
    return 1;
}

int kdsim_out_dir_check(const char *dir, FILE *err)
{
    if (!dir)
        return 0;
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return 0;
        fprintf(err, "kdsim: --out %s: this is a file, not a directory; give a directory "
                     "(a missing one is created); nothing was run\n", dir);
        return -1;
    }
    if (errno != ENOENT && errno != ENOTDIR) {
        fprintf(err, "kdsim: --out %s: %s; nothing was run\n", dir, strerror(errno));
        return -1;
    }
    /* Missing: it and its missing parents will be created in the nearest folder that
     * exists, which must be one kdsim may write in. Checked now, so that a long run does
     * not end unable to write. */
    char *p = kdsim_strdupf("%s", dir);
    int rc = 0;
    for (;;) {
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
            p[--n] = '\0';
        char *slash = strrchr(p, '/');
        if (!slash)
            strcpy(p, ".");
        else if (slash == p)
            p[1] = '\0'; /* the root */
        else
            *slash = '\0';
        if (stat(p, &sb) == 0)
            break;
        if (errno != ENOENT && errno != ENOTDIR) {
            fprintf(err, "kdsim: --out %s: %s: %s; nothing was run\n", dir, p, strerror(errno));
            rc = -1;
            break;
        }
    }
    if (rc == 0 && !S_ISDIR(sb.st_mode)) {
        fprintf(err, "kdsim: --out %s: %s is a file, so the folder cannot be made; nothing "
                     "was run\n", dir, p);
        rc = -1;
    } else if (rc == 0 && access(p, W_OK | X_OK) != 0) {
        fprintf(err, "kdsim: --out %s: cannot make it in %s (%s); nothing was run\n", dir, p,
                strerror(errno));
        rc = -1;
    }
    free(p);
    return rc;
}

int kdsim_make_dirs(const char *dir, FILE *err)
{
    SIM_ASSERT(dir[0] != '\0');
    char *p = kdsim_strdupf("%s", dir);
    /* Each parent in turn; one that exists already is no error, and one that cannot be
     * made shows in the last mkdir's errno. */
    for (char *q = p + 1; *q; q++) {
        if (*q != '/')
            continue;
        *q = 0;
        (void)mkdir(p, 0777);
        *q = '/';
    }
    struct stat st;
    int ok = mkdir(p, 0777) == 0 || errno == EEXIST;
    ok = ok && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    if (!ok)
        fprintf(err, "kdsim: cannot create the folder %s: %s\n", p, strerror(errno));
    free(p);
    return ok ? 0 : SIM_EIO;
}

int kdsim_batch_opts_check(const kdsim_batch_opts *b, FILE *err)
{
    if (b->resume && !b->out_dir) {
        fprintf(err, "kdsim: --resume needs --out DIR, the folder of the runs to resume\n");
        return -1;
    }
    return kdsim_out_dir_check(b->out_dir, err);
}
