/* opts.h - the command-line options that several commands share, parsed in one place so
 * that `run`, `cost`, `validate`, `run --replications`, `plan` and `sweep` accept them
 * with the same syntax and answer bad values with the same message.
 *
 * Two groups: the scenario options (--seed, --duration, --set, --prices), which become
 * overrides of the scenario's keys, and the batch options of the commands that run a
 * scenario many times (--replications, --warmup, --jobs, --out, --json, --resume).
 *
 * Each parser looks at argv[*i]; when the option is one of its group it consumes the
 * option and its value (advancing *i) and returns 1; it returns 0 for any other
 * argument, and prints "kdsim: OPTION: expected ..., got ..." to `err` and returns -1
 * for a missing or bad value. Strings from argv are borrowed, never copied, so argv
 * must outlive the structures.
 */
#ifndef KDSIM_OPTS_H
#define KDSIM_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* Scenario overrides gathered from --seed N, --duration T, --set K=V and --prices FILE.
 * Zero-initialise; release with kdsim_scenario_opts_fini. */
typedef struct kdsim_scenario_opts {
    const char **sets; /* owned array; strings owned in `owned` or borrowed from argv */
    size_t n_sets;
    char **owned;
    size_t n_owned;
} kdsim_scenario_opts;

/* Parse one scenario option (see the header comment for the protocol). --seed, --duration
 * and --prices become overrides in their place among the --set options ("--duration
 * duration=1h", so that the loader's messages name the option, and the last given of
 * --seed and --set seed= wins); a relative --prices path is made absolute, since billing.prices
 * is read relative to the scenario's folder but the user typed it relative to the
 * current one. */
int kdsim_scenario_opt(kdsim_scenario_opts *o, int argc, char **argv, int *i, FILE *err);

/* Free what kdsim_scenario_opt allocated and zero *o. */
void kdsim_scenario_opts_fini(kdsim_scenario_opts *o);

/* Options of the commands that run a scenario many times. Initialise with
 * kdsim_batch_opts_init, which sets the defaults. */
typedef struct kdsim_batch_opts {
    unsigned long replications;     /* --replications N; the caller's default until given */
    unsigned long max_replications; /* the largest N accepted (set by the caller) */
    sim_time warmup;                /* --warmup T, ns (default 0) */
    unsigned jobs;                  /* --jobs N (default: one per online CPU) */
    const char *out_dir;            /* --out DIR, borrowed (default NULL) */
    bool json;                      /* --json */
    bool resume;                    /* --resume: keep the runs DIR/runs already holds */
} kdsim_batch_opts;

/* Defaults: `replications` replications (0 allowed: "not given"), at most `max`. */
void kdsim_batch_opts_init(kdsim_batch_opts *b, unsigned long replications, unsigned long max);

/* Parse one batch option (see the header comment for the protocol). */
int kdsim_batch_opt(kdsim_batch_opts *b, int argc, char **argv, int *i, FILE *err);

/* After the batch options are parsed: --resume needs --out DIR (the folder of the run
 * to resume), and DIR must pass kdsim_out_dir_check. Returns 0, or prints why
 * and returns -1. */
int kdsim_batch_opts_check(const kdsim_batch_opts *b, FILE *err);

/* Check an --out DIR (NULL: none) before any run: one that exists must be a directory;
 * a missing one (with any missing parents, all created when the outputs are written,
 * kdsim_make_dirs) needs the nearest folder that exists to be a directory kdsim may
 * write in. Prints why, naming DIR, and returns -1; else 0. */
int kdsim_out_dir_check(const char *dir, FILE *err);

/* Make folder `dir` (not empty) and its missing parents, like mkdir -p, with the mode
 * 0777 less the umask. Returns 0 (also when it exists as a directory), or prints why
 * and returns SIM_EIO. */
int kdsim_make_dirs(const char *dir, FILE *err);

/* The value of option argv[*i], consumed (*i advanced); NULL, with "kdsim: OPTION needs
 * a value" printed to `err`, when the command line ends first. */
const char *kdsim_opt_value(int argc, char **argv, int *i, FILE *err);

/* Whether argument `s` asks for a command's help: "--help" or "-h". Every command checks
 * it where it reads an option, so that the value of another option is never taken for it;
 * the command then prints its usage on stdout and exits 0. */
bool kdsim_is_help(const char *s);

/* A duration option's value (like "5m"), non-negative; returns 0, or -1 when bad. */
int kdsim_parse_duration_opt(const char *s, sim_time *out);

/* printf into a new string (malloc'd, the caller frees it); aborts when out of memory,
 * like the other small allocations of the command line. */
char *kdsim_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
