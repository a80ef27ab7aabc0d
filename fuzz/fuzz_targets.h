/* fuzz_targets.h - the entry points fuzzed with libFuzzer (fuzz/fuzz_*.c) and replayed
 * on every saved input by the regression test (tests/check_fuzz_regressions.c). Each
 * takes arbitrary bytes and must neither crash, hang, leak nor read out of bounds; bad
 * input only yields diagnostics. */
#ifndef FUZZ_TARGETS_H
#define FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* Load the bytes as a scenario, with the overrides of up to 4 lines "#set KEY=VALUE" it
 * opens with (as --set gives them); when valid, build the world and run it for at most
 * one simulated second (a valid scenario must also run). */
int kdsim_fuzz_scenario(const uint8_t *data, size_t size);

/* Load the bytes as a price file. */
int kdsim_fuzz_prices(const uint8_t *data, size_t size);

/* Parse the bytes with every unit parser, and print what parses. */
int kdsim_fuzz_units(const uint8_t *data, size_t size);

#endif
