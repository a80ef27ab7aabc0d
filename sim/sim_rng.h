/* sim_rng.h - seeds for per-entity random streams.
 *
 * Every stochastic entity gets its own GSL generator, seeded by mixing the master seed
 * with a hash of the entity's name (FNV-1a, then the splitmix64 finaliser), folded to a
 * non-zero 32-bit value (GSL seeds are 32-bit and 0 selects GSL's default seed).
 * Distinct seeds make overlapping streams unlikely but do not guarantee independence;
 * the same caveat as ns-3's manual gives for seeds versus substreams.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

/* The splitmix64 finaliser: a bijection on 64-bit words with good avalanche. */
uint64_t sim_mix64(uint64_t x);

/* FNV-1a 64-bit hash of a NUL-terminated string. */
uint64_t sim_hash_name(const char *name);

/* The 32-bit, never-zero seed of entity `name` under `master_seed`. `salt` is 0 for
 * the first derivation; the kernel retries with salt 1, 2, ... in the rare case that
 * two names collide, so that every generator of a run has a distinct seed. */
uint32_t sim_seed_derive(uint64_t master_seed, const char *name, uint32_t salt);

#endif
