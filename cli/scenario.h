/* scenario.h - loading a YAML scenario into the models' configs.
 *
 * The loader reads the file (ydoc.h), applies --set overrides, then walks every key,
 * validating everything before anything runs: unknown keys (with a did-you-mean),
 * wrong types, bad units and out-of-range values are collected as
 * `file:line:col: key.path: message`, all of them, and the caller exits with status 2.
 * The scenario keys are documented in README.md ("Scenario reference"); every default
 * is AWS's documented value or, where AWS publishes none, a named assumption that the
 * report lists.
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "kds_world.h"
#include "prices.h"
#include "ydoc.h"

/* The largest master seed: 2^63 - 1. Seeds are written as JSON integers (the report's
 * `seed`, the runs and tables of replications, sweeps and plans), which jansson holds as
 * signed 64-bit numbers, and every seed printed must read back as --seed: the scenario's
 * `seed` key, --seed and a sweep file's `seed` refuse larger ones. */
#define KDSIM_SEED_MAX ((uint64_t)INT64_MAX)

/* A file the scenario names (a replayed trace), as its report records it. */
typedef struct kdsim_input {
    const char *key;  /* the key path naming it ("producers[0].rate.file"); owned by the
                         scenario */
    const char *file; /* as written in the scenario (relative to its folder), borrowed
                         from the document */
    const char *path; /* as opened (resolved against the scenario's folder), for the
                         run's digest (provenance.h); owned by the scenario */
} kdsim_input;

/* A random stream the loader itself drew from (a replay's poisson spread of a minute
 * over its seconds), listed in the report beside the kernel's streams. */
typedef struct kdsim_load_rng {
    const char *name; /* what the seed was derived from; owned by the scenario */
    uint32_t seed;    /* sim_seed_derive(world.seed, name, 0) */
} kdsim_load_rng;

typedef struct kdsim_scenario {
    ydoc doc;                /* the document; configs borrow its strings */
    const char *path;        /* borrowed: the file name given */
    const char *name;        /* scenario name (the `name` key, or the file's stem) */
    const char *description; /* the `description` key, or "" */
    kds_world_cfg world;     /* filled by the loader */
    void **blocks;           /* owned allocations (config arrays), freed at fini */
    size_t n_blocks, cap_blocks;
    char *stem;              /* owned: file stem used as the default name */
    kdsim_billing billing;   /* the `billing` key: prices and settings (prices.h) */
    kdsim_input *inputs;     /* owned: the files the scenario names besides the price
                                file (that one is billing's), in scenario order */
    size_t n_inputs, cap_inputs;
    kdsim_load_rng *rngs; /* owned: the loader's random streams, in the order drawn */
    size_t n_rngs, cap_rngs;
} kdsim_scenario;

/* Load and validate `path` with overrides `sets` ("key.path=value", applied in order;
 * "--seed seed=7" marks an override made by the option --seed, --duration, --prices or
 * --vary, so that errors about it name that option, and "\x1fFILE\x1fLINE:COL\x1fkey=value"
 * one written at FILE:LINE:COL, a sweep's value: ydoc_set_any).
 * Returns 0 when the scenario is valid; otherwise SIM_EINVAL (or SIM_EIO) with every
 * problem in `g`, those of the file as well as those of the overrides. On any return,
 * kdsim_scenario_fini() must be called. */
int kdsim_scenario_load(kdsim_scenario *sc, const char *path, const char *const *sets,
                        size_t n_sets, ydiag *g);

/* The same from memory: `text` (len bytes) is the YAML, `name` stands for the file in
 * messages and for resolving relative paths. For tests and the fuzz targets. */
int kdsim_scenario_load_text(kdsim_scenario *sc, const char *name, const char *text, size_t len,
                             const char *const *sets, size_t n_sets, ydiag *g);

void kdsim_scenario_fini(kdsim_scenario *sc); /* NULL-safe */

#endif
