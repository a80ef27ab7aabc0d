/* fuzz_targets.c - fuzz entry points (fuzz_targets.h): the scenario loader, the price
 * file loader and the unit parsers. */
#include "fuzz_targets.h"

#include <stdlib.h>
#include <string.h>

#include "kds_world.h"
#include "prices.h"
#include "scenario.h"
#include "sim_units.h"

/* The most "#set " lines a fuzzed scenario may open with. */
#define FUZZ_MAX_SETS 4

int kdsim_fuzz_scenario(const uint8_t *data, size_t size)
{
    kdsim_scenario sc;
    ydiag g;
    ydiag_init(&g);
    /* Lines "#set KEY=VALUE" at the start (YAML comments, so the file reads the same)
     * are overrides, as --set gives them: the fuzzer reaches the override paths, flow
     * values among them. Then a short run: the duration is capped last, so that a fuzzed
     * "duration: 400d" does not turn one input into an hour of simulation. */
    char *own[FUZZ_MAX_SETS];
    const char *sets[FUZZ_MAX_SETS + 1];
    size_t n_sets = 0, at = 0;
    while (n_sets < FUZZ_MAX_SETS && size - at > 5 && memcmp(data + at, "#set ", 5) == 0) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size;
        size_t len = end - at - 5;
        if (!(own[n_sets] = malloc(len + 1)))
            break;
        memcpy(own[n_sets], data + at + 5, len);
        own[n_sets][len] = '\0'; /* a NUL inside cuts the override short, as argv would */
        sets[n_sets] = own[n_sets];
        n_sets++;
        at = nl ? end + 1 : size;
    }
    sets[n_sets] = "duration=1s";
    int rc =
        kdsim_scenario_load_text(&sc, "fuzz.yaml", (const char *)data, size, sets, n_sets + 1, &g);
    for (size_t i = 0; i < n_sets; i++)
        free(own[i]);
    if (rc == 0 && sc.world.stream.shards <= 64 && sc.world.n_producers <= 16) {
        kds_world w;
        if (kds_world_init(&w, &sc.world) == 0) {
            kds_world_run(&w);
            if (w.violated)
                abort(); /* a conservation invariant broke: a bug */
            kds_world_fini(&w);
        }
    }
    kdsim_scenario_fini(&sc);
    ydiag_fini(&g);
    return 0;
}

int kdsim_fuzz_prices(const uint8_t *data, size_t size)
{
    kds_prices p;
    char *region = NULL, *as_of = NULL;
    ydiag g;
    ydiag_init(&g);
    kdsim_prices_load_text("fuzz-prices.yaml", (const char *)data, size, &p, &region, &as_of, &g);
    free(region);
    free(as_of);
    ydiag_fini(&g);
    return 0;
}

int kdsim_fuzz_units(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char buf[257];
    memcpy(buf, data, size);
    buf[size] = 0;
    sim_time t;
    uint64_t b;
    double r;
    char out[64];
    if (sim_parse_duration(buf, &t) == 0) {
        sim_fmt_duration(out, sizeof out, t);
        sim_time back;
        /* What kdsim prints it must read back (up to printing's rounding). */
        if (sim_parse_duration(out, &back) != 0)
            abort();
    }
    if (sim_parse_bytes(buf, &b) == 0)
        sim_fmt_bytes(out, sizeof out, b);
    sim_parse_byte_rate(buf, &r);
    sim_parse_count_rate(buf, "records", &r);
    sim_parse_count_rate(buf, NULL, &r);
    return 0;
}
