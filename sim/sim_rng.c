/* sim_rng.c - seed derivation for the per-entity random streams of sim_rng.h.
 *
 * The constants are the published ones (splitmix64 by Steele, Lea and Flood; FNV-1a by
 * Fowler, Noll and Vo), so the seeds a run prints can be recomputed by anyone.
 */
#include "sim_rng.h"

/* 2^64 / golden ratio: spreads successive salts over the whole 64-bit space, so that
 * a retried derivation does not land on a neighbouring name's hash. */
#define GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

/* Returned instead of a zero seed, which would select GSL's default seed; any other
 * value is as good, and the kernel re-derives if it clashes with another entity. */
#define NONZERO_SEED UINT32_C(0x9e3779b9)

uint64_t sim_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

uint64_t sim_hash_name(const char *name)
{
    uint64_t h = FNV_OFFSET;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= FNV_PRIME;
    }
    return h;
}

uint32_t sim_seed_derive(uint64_t master_seed, const char *name, uint32_t salt)
{
    /* FNV-1a alone avalanches poorly (names differing in the last byte differ in few
     * bits), hence the finaliser before the master seed is mixed in, and again after. */
    uint64_t name_key = sim_mix64(sim_hash_name(name) + (uint64_t)salt * GOLDEN_GAMMA);
    uint64_t x = sim_mix64(master_seed ^ name_key);
    uint32_t seed = (uint32_t)(x ^ (x >> 32));
    return seed ? seed : NONZERO_SEED;
}
