/* runner.c - one run reduced to its figures, and the pool of worker processes
 * (runner.h). */
#include "runner.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "figures.h"
#include "kds_world.h"
#include "provenance.h"
#include "opts.h"
#include "report.h"
#include "scenario.h"
#include "sim_err.h"
#include "sim_rng.h"
#include "sim_units.h"

uint64_t kdsim_replication_seed(uint64_t master, unsigned r)
{
    if (r == 0)
        return master;
    uint64_t s = sim_mix64(sim_mix64(master) ^ (0x9E3779B97F4A7C15ULL * (uint64_t)r)) &
                 ((UINT64_C(1) << 48) - 1);
    return s ? s : 1;
}

json_t *kdsim_seed_json(uint64_t seed)
{
    SIM_ASSERT(seed <= KDSIM_SEED_MAX);
    return json_integer((json_int_t)seed);
}

/* Load the scenario with rs's overrides and "seed=N". Prints errors; returns 0 or the
 * exit status. */
static int load(const kdsim_runspec *rs, kdsim_scenario *sc, FILE *err)
{
    size_t n = rs->n_sets + 1;
    const char **sets = malloc(n * sizeof *sets);
    SIM_ASSERT(sets != NULL);
    for (size_t i = 0; i < rs->n_sets; i++)
        sets[i] = rs->sets[i];
    char seed[48];
    snprintf(seed, sizeof seed, "seed=%" PRIu64, rs->seed);
    sets[rs->n_sets] = seed;
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(sc, rs->scenario, sets, n, &g);
    if (rc)
        ydiag_report(&g, err, rs->scenario);
    ydiag_fini(&g);
    free(sets);
    return rc ? 2 : 0;
}

/* The digest of rs's runs (provenance.h) for sc, the scenario loaded from rs: its
 * bytes and overrides, then every file it read (replayed traces, the price file).
 * Returns 0 or SIM_EIO. */
static int digest(const kdsim_runspec *rs, const kdsim_scenario *sc, char out[KDSIM_SHA256_HEX])
{
    const char **files = malloc((sc->n_inputs + 1) * sizeof *files);
    SIM_ASSERT(files != NULL);
    size_t n = 0;
    for (size_t i = 0; i < sc->n_inputs; i++)
        files[n++] = sc->inputs[i].path;
    if (sc->billing.path)
        files[n++] = sc->billing.path;
    int rc = kdsim_sha256_run(rs->scenario, rs->sets, rs->n_sets, files, n, out);
    free(files);
    return rc;
}

int kdsim_run_digest(const kdsim_runspec *rs, char out[KDSIM_SHA256_HEX])
{
    out[0] = 0;
    kdsim_scenario sc = {0};
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(&sc, rs->scenario, rs->sets, rs->n_sets, &g);
    if (!rc)
        rc = digest(rs, &sc, out);
    ydiag_fini(&g);
    kdsim_scenario_fini(&sc);
    return rc;
}

/* Build and run world w on cfg; returns 0 or prints why and returns 1. */
static int run_world(kds_world *w, const kds_world_cfg *cfg, FILE *err)
{
    int rc = kds_world_init(w, cfg);
    if (rc) {
        fprintf(err, "kdsim: cannot build the scenario: %s\n", sim_strerror(rc));
        return 1;
    }
    kds_world_run(w);
    if (w->out_of_memory) {
        fprintf(err, "kdsim: a run stopped: it needed more than its share of memory "
                     "(--max-memory, divided among --jobs)\n");
        return 1;
    }
    if (w->violated) {
        fprintf(err, "kdsim: %s\nkdsim: the run stopped: this is a bug in kdsim\n", w->violation);
        return 1;
    }
    return 0;
}

json_t *kdsim_run_once(const kdsim_runspec *rs, FILE *err, int *status)
{
    char sha[KDSIM_SHA256_HEX];
    kdsim_scenario sc = {0};
    kdsim_cost_error = NULL; /* not an earlier run's, in this process */
    *status = load(rs, &sc, err);
    if (*status) {
        kdsim_scenario_fini(&sc);
        return NULL;
    }
    if (digest(rs, &sc, sha)) {
        fprintf(err, "kdsim: cannot read %s or a file it names: %s\n", rs->scenario,
                strerror(errno));
        kdsim_scenario_fini(&sc);
        *status = 2;
        return NULL;
    }
    if (rs->warmup >= sc.world.duration) {
        char a[32], b[32];
        fprintf(err, "kdsim: the warm-up (%s) must be shorter than the run (%s)\n",
                sim_fmt_duration(a, sizeof a, rs->warmup),
                sim_fmt_duration(b, sizeof b, sc.world.duration));
        kdsim_scenario_fini(&sc);
        *status = 2;
        return NULL;
    }
    sc.world.max_memory = rs->max_memory;
    json_t *result = NULL, *report = NULL, *wu_report = NULL;
    kds_world w, wu;
    int have_w = 0, have_wu = 0;
    kdsim_figs figs = {0};
    *status = 1;
    /* The warm-up: the same scenario and seed stopped at the warm-up time, whose
     * statistics are then subtracted (figures.h). */
    kds_world_cfg wu_cfg = sc.world;
    wu_cfg.duration = rs->warmup;
    if (rs->warmup > 0) {
        have_wu = 1;
        if (run_world(&wu, &wu_cfg, err))
            goto done;
        wu_report = kdsim_report_json(&sc, &wu);
        if (!wu_report)
            goto done;
    }
    have_w = 1;
    sc.world.peak_since = rs->warmup; /* the figures' peaks leave the warm-up out */
    if (run_world(&w, &sc.world, err))
        goto done;
    report = kdsim_report_json(&sc, &w);
    if (!report || kdsim_figures(report, &w, wu_report, have_wu ? &wu : NULL, rs->warmup, &figs))
        goto done;
    result = json_object();
    json_t *fj = kdsim_figs_json(&figs);
    if (!result || !fj) {
        json_decref(fj);
        json_decref(result);
        result = NULL;
        goto done;
    }
    if (rs->extra)
        json_object_update(result, (json_t *)rs->extra);
    json_object_set_new(result, "seed", kdsim_seed_json(rs->seed));
    json_object_set_new(result, "kdsim_version", json_string(KDSIM_VERSION));
    json_object_set_new(result, "scenario_sha256", json_string(sha));
    json_object_set_new(result, "warmup_s", json_real(sim_to_s(rs->warmup)));
    json_object_set_new(result, "figures", fj);
    *status = 0;
done:
    if (*status == 1 && !result)
        fprintf(err, "kdsim: a run of %s (seed %" PRIu64 ") failed%s%s\n", rs->scenario, rs->seed,
                kdsim_cost_error ? ": " : "", kdsim_cost_error ? kdsim_cost_error : "");
    kdsim_figs_fini(&figs);
    json_decref(report);
    json_decref(wu_report);
    if (have_w)
        kds_world_fini(&w);
    if (have_wu)
        kds_world_fini(&wu);
    kdsim_scenario_fini(&sc);
    return result;
}

/* ---- many runs ---------------------------------------------------------------------- */

typedef struct many {
    const kdsim_runspec *specs;
    const size_t *ids;
    const char *dir;
    FILE *err;
} many;

static char *run_file(const char *dir, size_t id)
{
    size_t n = strlen(dir) + 40;
    char *p = malloc(n);
    if (!p)
        abort(); /* out of memory for a file name: nothing sensible is left to do */
    snprintf(p, n, "%s/runs/%06zu.json", dir, id);
    return p;
}

/* In the worker: run specs[k], write its file. */
static int many_job(size_t k, void *arg)
{
    many *m = arg;
    int status;
    json_t *r = kdsim_run_once(&m->specs[k], m->err, &status);
    if (!r)
        return 1;
    char *text = kdsim_report_dump(r);
    json_decref(r);
    char *path = run_file(m->dir, m->ids[k]);
    int rc = text ? kdsim_write_atomic(path, text) : SIM_ENOMEM;
    if (rc)
        fprintf(m->err, "kdsim: cannot write %s: %s\n", path, strerror(errno));
    free(path);
    free(text);
    return rc ? 1 : 0;
}

/* Whether `path` holds the result kdsim_run_once(rs) would give: every field that
 * identifies the run (the scenario's digest over its bytes, overrides and the files it
 * reads, the seed, the
 * warm-up, the version of kdsim, the caller's extra fields) is the same, and it has
 * figures. A run is a function of those, so its figures would be the same too. */
static bool reusable(const kdsim_runspec *rs, const char *path)
{
    json_error_t je;
    json_t *r = json_load_file(path, 0, &je);
    if (!r)
        return false;
    char sha[KDSIM_SHA256_HEX];
    const json_t *seed = json_object_get(r, "seed");
    const char *version = json_string_value(json_object_get(r, "kdsim_version"));
    const char *digest = json_string_value(json_object_get(r, "scenario_sha256"));
    const json_t *warmup = json_object_get(r, "warmup_s");
    bool ok = json_is_object(json_object_get(r, "figures")) && json_is_integer(seed) &&
              (uint64_t)json_integer_value(seed) == rs->seed && version &&
              !strcmp(version, KDSIM_VERSION) && json_is_number(warmup) &&
              json_number_value(warmup) == sim_to_s(rs->warmup) && digest &&
              kdsim_run_digest(rs, sha) == 0 &&
              !strcmp(digest, sha);
    const char *key;
    json_t *want;
    if (ok && rs->extra)
        json_object_foreach((json_t *)rs->extra, key, want)
            ok = ok && json_equal(want, json_object_get(r, key));
    json_decref(r);
    return ok;
}

static int make_dir(const char *path, FILE *err)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(err, "kdsim: cannot create the folder %s: %s\n", path, strerror(errno));
        return SIM_EIO;
    }
    return 0;
}

json_t **kdsim_run_many(const kdsim_runspec *specs, const size_t *ids, size_t n, unsigned jobs,
                        const char *dir, bool resume, FILE *err, const char *what,
                        long *failed)
{
    SIM_ASSERT(!resume || dir != NULL);
    char tmp[] = "/tmp/kdsim-runs-XXXXXX";
    const char *tdir = getenv("TMPDIR");
    char tbuf[4096];
    bool temporary = dir == NULL;
    if (temporary) {
        if (tdir && *tdir) {
            snprintf(tbuf, sizeof tbuf, "%s/kdsim-runs-XXXXXX", tdir);
            dir = mkdtemp(tbuf);
        } else {
            dir = mkdtemp(tmp);
        }
        if (!dir) {
            fprintf(err, "kdsim: cannot create a temporary folder: %s\n", strerror(errno));
            return NULL;
        }
    }
    size_t dn = strlen(dir) + 8;
    char *runs = malloc(dn);
    SIM_ASSERT(runs != NULL);
    snprintf(runs, dn, "%s/runs", dir);
    if (kdsim_make_dirs(dir, err) || make_dir(runs, err)) {
        free(runs);
        return NULL;
    }
    size_t *order = calloc(n ? n : 1, sizeof *order);
    json_t **res = calloc(n ? n : 1, sizeof *res);
    SIM_ASSERT(order != NULL && res != NULL);
    /* A file left by an earlier run into this folder must not pass for this one's:
     * removed, unless resuming and it is exactly this run's. */
    size_t todo = 0;
    for (size_t k = 0; k < n; k++) {
        char *path = run_file(dir, ids[k]);
        if (resume && reusable(&specs[k], path)) {
            free(path);
            continue;
        }
        remove(path);
        free(path);
        order[todo++] = k;
    }
    if (resume)
        fprintf(err, "kdsim: resuming in %s: %zu of %zu runs done, %zu to run\n", runs,
                n - todo, n, todo);
    many m = {specs, ids, dir, err};
    long bad = todo ? kdsim_pool_run(order, todo, jobs, many_job, &m, err, what) : 0;
    *failed = 0;
    for (size_t k = 0; k < n; k++) {
        char *path = run_file(dir, ids[k]);
        json_error_t je;
        res[k] = json_load_file(path, 0, &je);
        if (!res[k])
            (*failed)++;
        if (temporary)
            remove(path);
        free(path);
    }
    (void)bad; /* a failed run has no file: counted above */
    if (temporary) {
        rmdir(runs);
        rmdir(dir);
    }
    free(runs);
    free(order);
    return res;
}

void kdsim_results_free(json_t **results, size_t n)
{
    if (!results)
        return;
    for (size_t k = 0; k < n; k++)
        json_decref(results[k]);
    free(results);
}

int kdsim_scenario_check(const char *file, const char *const *sets, size_t n_sets, sim_time warmup,
                         FILE *err, uint64_t *seed)
{
    kdsim_scenario sc = {0};
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(&sc, file, sets, n_sets, &g);
    if (rc) {
        ydiag_report(&g, err, file);
    } else if (warmup >= sc.world.duration) {
        char a[32], b[32];
        fprintf(err, "kdsim: the warm-up (%s) must be shorter than the run (%s)\n",
                sim_fmt_duration(a, sizeof a, warmup),
                sim_fmt_duration(b, sizeof b, sc.world.duration));
        rc = SIM_EINVAL;
    } else {
        *seed = sc.world.seed;
    }
    ydiag_fini(&g);
    kdsim_scenario_fini(&sc);
    return rc ? 2 : 0;
}

/* ---- the pool ----------------------------------------------------------------------- */

unsigned kdsim_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (unsigned)n : 1;
}

int kdsim_parse_jobs(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > 1024)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Erase an unfinished progress line before a message of its own line. */
static void progress_erase(FILE *err, bool *shown)
{
    if (*shown)
        fputs("\r\033[K", err);
    *shown = false;
}

long kdsim_pool_run(const size_t *idx, size_t n, unsigned jobs, kdsim_job_fn job, void *arg,
                    FILE *err, const char *what)
{
    SIM_ASSERT(jobs >= 1);
    bool tty = isatty(fileno(err));
    bool shown = false; /* a progress line is on the terminal, unfinished */
    pid_t *pids = calloc(jobs, sizeof *pids);
    SIM_ASSERT(pids != NULL);
    size_t next = 0, done = 0, running = 0;
    long failed = 0;
    int fork_err = 0;
    while (done < n) {
        while (running < jobs && next < n && !fork_err) {
            /* Nothing buffered may be written twice, by the parent and the child. */
            fflush(stdout);
            fflush(err);
            pid_t pid = fork();
            if (pid < 0) {
                fork_err = errno;
                break;
            }
            if (pid == 0) {
                int rc = job(idx[next], arg);
                fflush(stdout);
                fflush(stderr);
                _exit(rc == 0 ? 0 : 1);
            }
            size_t slot = 0;
            while (pids[slot])
                slot++;
            pids[slot] = pid;
            running++;
            next++;
        }
        if (running == 0) {
            /* fork failed with nothing in flight: the rest cannot run. */
            progress_erase(err, &shown);
            fprintf(err, "kdsim: cannot start a worker process: %s\n", strerror(fork_err));
            failed += (long)(n - done);
            break;
        }
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        size_t slot = 0;
        while (slot < jobs && pids[slot] != pid)
            slot++;
        if (slot == jobs)
            continue; /* not one of ours */
        pids[slot] = 0;
        running--;
        done++;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
            if (WIFSIGNALED(st)) {
                progress_erase(err, &shown);
                fprintf(err, "kdsim: a worker process was killed by signal %d\n", WTERMSIG(st));
            }
        }
        if (tty) {
            /* Redrawn from the start of its line and erased to the end: nothing of an
             * earlier line is left behind. A worker's message, which ends its own line,
             * follows the count it was written after and stays. */
            fprintf(err, "\r\033[Kkdsim: %s: %zu of %zu runs done", what, done, n);
            shown = true;
        }
        if (fork_err && running == 0 && next < n) {
            progress_erase(err, &shown);
            fprintf(err, "kdsim: cannot start a worker process: %s\n", strerror(fork_err));
            failed += (long)(n - next);
            break;
        }
    }
    if (shown)
        fputc('\n', err); /* the last count stays, as a record of the batch */
    free(pids);
    return failed;
}

int kdsim_write_atomic(const char *path, const char *text)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    SIM_ASSERT(tmp != NULL);
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL;
    if (f) {
        ok = fputs(text, f) >= 0;
        ok = (fclose(f) == 0) && ok;
    }
    int e = errno;
    if (ok && rename(tmp, path) != 0) {
        e = errno;
        ok = 0;
    }
    if (!ok)
        remove(tmp);
    free(tmp);
    errno = e;
    return ok ? 0 : SIM_EIO;
}

char *kdsim_read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t len = 0, cap = 65536;
    char *s = malloc(cap);
    SIM_ASSERT(s != NULL);
    size_t got;
    while ((got = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            s = realloc(s, cap);
            SIM_ASSERT(s != NULL);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(s);
        errno = EIO;
        return NULL;
    }
    s[len] = 0;
    return s;
}
