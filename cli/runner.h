/* runner.h - one run of a scenario reduced to its headline figures, the unit of work of
 * replications, sweeps and the planner; and a pool of worker processes that runs many
 * of them at once.
 *
 * A run is fully described by its scenario file, its overrides and its seed: the
 * result (figures.h) is the same whichever process or machine computes it, alone or
 * among others, which is what makes sweeps split into parts and merged give the table
 * a single machine gives.
 */
#ifndef RUNNER_H
#define RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "provenance.h"
#include "sim.h"

typedef struct kdsim_runspec {
    const char *scenario;    /* borrowed: the scenario file */
    const char *const *sets; /* borrowed: overrides "key.path=value", as for
                                kdsim_scenario_load(), without the seed */
    size_t n_sets;
    uint64_t seed;       /* the run's master seed */
    sim_time warmup;     /* statistics start here, ns (0: none) */
    uint64_t max_memory; /* the memory guard of the run, B (0: none) */
    const json_t *extra; /* borrowed, or NULL: fields put first in the result (a
                            sweep's index, point, replication and parameters) */
} kdsim_runspec;

/* The seed of replication r (0-based) under master seed `master`: the master seed
 * itself for r = 0, so that one replication is the plain run; otherwise a splitmix64
 * mix of both, kept to 48 bits (exact in every JSON reader) and never 0. */
uint64_t kdsim_replication_seed(uint64_t master, unsigned r);

/* A seed as JSON: an integer. Seeds are at most KDSIM_SEED_MAX (2^63 - 1, scenario.h),
 * which every command checks where it reads one, so that the integer is the seed, never
 * negative, and reads back as --seed. Returns a new reference (NULL: out of memory). */
json_t *kdsim_seed_json(uint64_t seed);

/* Run rs and return its result, a new JSON object
 *   {...rs->extra, seed, kdsim_version, scenario_sha256, warmup_s, figures: {...}}
 * (the digest covers the file's bytes, rs->sets and the files the scenario reads: see
 * kdsim_run_digest). On failure returns NULL, prints
 * why on err and sets *status to 2 (bad input: every error of the scenario is
 * printed) or 1. */
json_t *kdsim_run_once(const kdsim_runspec *rs, FILE *err, int *status);

/* The scenario_sha256 of rs's runs (provenance.h): the SHA-256 of the scenario file's
 * bytes, rs's overrides, then the bytes of every file the scenario so overridden reads
 * (its replayed traces in scenario order, then its price file), so that a changed
 * trace or price file is a different run. Loads the scenario (quietly). Returns 0, or
 * an error code when it does not load or a file cannot be read (out is then ""). */
int kdsim_run_digest(const kdsim_runspec *rs, char out[KDSIM_SHA256_HEX]);

/* Run specs[0..n-1], `jobs` at a time in worker processes (kdsim_pool_run). The result
 * of specs[k] is written to dir/runs/ID.json, ID = ids[k] as 6 digits or more, in the
 * report's JSON style; with dir NULL, into a temporary folder removed afterwards.
 * With `resume` (dir not NULL), a file already there that holds exactly specs[k]'s run
 * (same scenario bytes and overrides, seed, warm-up, kdsim version and extra fields)
 * is kept and that run skipped: an interrupted batch picks up where it stopped; a line
 * on err says how many runs were kept. Any other file of these ids is removed first.
 * Returns a malloc'd array of n results read back from those files (so that every
 * caller sees exactly the bytes written), NULL where a run failed; *failed counts
 * those. Returns NULL when out of memory or the folder cannot be made (printed). */
json_t **kdsim_run_many(const kdsim_runspec *specs, const size_t *ids, size_t n, unsigned jobs,
                        const char *dir, bool resume, FILE *err, const char *what,
                        long *failed);

/* Free an array returned by kdsim_run_many(). NULL-safe. */
void kdsim_results_free(json_t **results, size_t n);

/* Check scenario `file` under overrides `sets` before anything runs: it loads, and a
 * warm-up of `warmup` ns is shorter than its duration. Returns 0 and its master seed in
 * *seed (its `seed` key, 1 when absent); otherwise prints every error and returns 2. */
int kdsim_scenario_check(const char *file, const char *const *sets, size_t n_sets, sim_time warmup,
                         FILE *err, uint64_t *seed);

/* A job of the pool: runs in a child process; returns 0 on success (the child's exit
 * status). */
typedef int (*kdsim_job_fn)(size_t job, void *arg);

/* Run job(idx[k], arg) for k = 0 .. n-1, at most `jobs` (>= 1) at a time, each in a
 * forked child process; jobs start in the order given. A progress line goes to err
 * when err is a terminal, labelled `what`. Returns the number of jobs that failed
 * (non-zero status or killed), or a negative SIM_E* code if no process could be
 * started. */
long kdsim_pool_run(const size_t *idx, size_t n, unsigned jobs, kdsim_job_fn job, void *arg,
                    FILE *err, const char *what);

/* The number of processors online (at least 1): the default of --jobs. */
unsigned kdsim_cpus(void);

/* Parse a --jobs value (1 to 1024). Returns 0 or -1. */
int kdsim_parse_jobs(const char *s, unsigned *out);

/* Write `text` to `path` under a temporary name and rename it into place, so that
 * readers never see half a file. Returns 0 or SIM_EIO with errno set. */
int kdsim_write_atomic(const char *path, const char *text);

/* The whole of file `path` as a malloc'd NUL-terminated string, or NULL (errno set). */
char *kdsim_read_all(const char *path);

#endif
