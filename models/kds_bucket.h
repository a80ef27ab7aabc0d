/* kds_bucket.h - integer token buckets for the shards' write and read budgets.
 *
 * model.md section 2 models each per-shard limit as a token bucket refilled
 * continuously and about one second deep. Levels are kept in nano-units (units x 1e9)
 * so that refilling at `rate` units per second for `dt` nanoseconds adds exactly
 * rate * dt nano-units: integer arithmetic, no drift, identical on every machine.
 * A bucket may be charged into debt (negative level) where AWS lets one call overdraw
 * the budget, as GetRecords does; the debt then delays later calls.
 */
#ifndef KDS_BUCKET_H
#define KDS_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

#include "sim.h"

#define KDS_NANO INT64_C(1000000000)

/* The most units a bucket holds, and the highest rate it refills at, in units (per
 * second): its nano-units must fit in int64 (9,223,372,036). The loader refuses limits
 * above it with a message; the model asserts it. */
#define KDS_BUCKET_MAX ((uint64_t)(INT64_MAX / KDS_NANO))

typedef struct kds_bucket {
    int64_t level; /* nano-units available; negative = debt */
    int64_t depth; /* nano-units at most (the burst) */
    int64_t rate;  /* units per second */
    sim_time last; /* time of the last refill, ns */
} kds_bucket;

/* A full bucket refilled at `rate` units/s, `depth` units deep (depth >= 1), at time
 * `now`. rate and depth at most KDS_BUCKET_MAX (asserted). */
void kds_bucket_init(kds_bucket *b, uint64_t rate, uint64_t depth, sim_time now);

/* Bring the level up to date at `now` (>= last). Inline, with the budgets' checks: they
 * run for every shard a request touches. */
static inline void kds_bucket_refill(kds_bucket *b, sim_time now)
{
    sim_time dt = now - b->last;
    b->last = now;
    if (dt <= 0 || b->level >= b->depth)
        return; /* (a rate of 0 needs no test: it adds 0 below) */
    int64_t room = b->depth - b->level;
    /* rate * dt may overflow for a long idle gap: then, as whenever it reaches the
     * room left, the bucket is full. (A checked multiply rather than dividing room by
     * the rate: a 64-bit division per refill is the slowest instruction on this path.) */
    int64_t add;
    if (__builtin_mul_overflow(b->rate, dt, &add) || add >= room)
        b->level = b->depth;
    else
        b->level += add;
}

/* Whole units available at `now` (0 when in debt). */
static inline uint64_t kds_bucket_avail(kds_bucket *b, sim_time now)
{
    kds_bucket_refill(b, now);
    return b->level > 0 ? (uint64_t)(b->level / KDS_NANO) : 0;
}

/* Whole lots of `lot` units each (lot >= 1, lot * 1e9 must fit in int64) available at
 * `now`: kds_bucket_avail(b, now) / lot in one division instead of two. */
static inline uint64_t kds_bucket_avail_lots(kds_bucket *b, sim_time now, uint64_t lot)
{
    kds_bucket_refill(b, now);
    /* floor(floor(level / 1e9) / lot) == floor(level / (1e9 * lot)) for level >= 0. */
    return b->level > 0 ? (uint64_t)(b->level / ((int64_t)lot * KDS_NANO)) : 0;
}

/* Take `units` if that many are available at `now`; returns whether it did. */
static inline bool kds_bucket_take(kds_bucket *b, sim_time now, uint64_t units)
{
    kds_bucket_refill(b, now);
    if (units > (uint64_t)(INT64_MAX / KDS_NANO))
        return false;
    int64_t need = (int64_t)units * KDS_NANO;
    if (b->level < need)
        return false;
    b->level -= need;
    return true;
}

/* Spend `units` at the instant of the last refill, without refilling again: for a caller
 * that asked kds_bucket_avail() at the current time and spends at that same instant.
 * Within what it found, the level stays >= 0; beyond, the level goes negative as with
 * kds_bucket_charge() (units * 1e9 must fit in int64 then too). */
static inline void kds_bucket_spend(kds_bucket *b, uint64_t units)
{
    b->level -= (int64_t)units * KDS_NANO;
}

/* Charge `units` unconditionally (the level may go negative; units * 1e9 must fit in
 * int64, which every caller's per-call amounts do by far). */
static inline void kds_bucket_charge(kds_bucket *b, sim_time now, uint64_t units)
{
    kds_bucket_refill(b, now);
    b->level -= (int64_t)units * KDS_NANO;
}

/* True if the level is below zero at `now` (the budget is overdrawn). */
static inline bool kds_bucket_in_debt(kds_bucket *b, sim_time now)
{
    kds_bucket_refill(b, now);
    return b->level < 0;
}

/* Change the rate and depth at `now` (on-demand scaling), keeping the level but
 * capping it at the new depth. */
void kds_bucket_resize(kds_bucket *b, sim_time now, uint64_t rate, uint64_t depth);

#endif
