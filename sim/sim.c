/* sim.c - the event kernel of sim.h: a min-heap (binary, or 4-ary when large) of flat
 * entries ordered by (time, sequence), tombstone cancellation, the run loop, and the
 * registry of the run's random streams.
 */
#include "sim.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "sim_rng.h"

/* The order (time, sequence) as one unsigned 128-bit number, time in the high half:
 * times are never negative (nothing is scheduled before 0), so one comparison of keys
 * (two instructions) compares times and breaks ties by sequence, without branches. */
__extension__ typedef unsigned __int128 sim_key;

static inline sim_key make_key(sim_time t, uint64_t seq)
{
    return (sim_key)(uint64_t)t << 64 | seq;
}

static inline sim_time key_time(sim_key k)
{
    return (sim_time)(uint64_t)(k >> 64);
}

static inline uint64_t key_seq(sim_key k)
{
    return (uint64_t)k;
}

/* One pending event: 32 bytes, so two fit a cache line. */
typedef struct sim_entry {
    sim_key key; /* due time (ns) and scheduling order; the order is also the event id */
    sim_fn fn;   /* callback */
    void *ctx;   /* borrowed context */
} sim_entry;

/* A generator made by sim_rng(), kept in creation order for the report. */
typedef struct sim_rng_slot {
    char *name;   /* owned */
    uint32_t seed;
    gsl_rng *rng; /* owned */
} sim_rng_slot;

struct sim {
    struct sim_clock clock; /* first: sim_now (sim.h) reads it through the sim pointer */
    uint64_t next_seq;   /* next sequence number (ids start at 1) */
    uint64_t events_run; /* callbacks run */
    bool stopping;       /* set by sim_stop() */
    bool hole;           /* heap[0] was taken by the run loop and not yet refilled */
    bool wide;           /* the heap is 4-ary (it once outgrew FAR_MIN), else binary */

    sim_entry *heap; /* owned; min-heap (binary, or 4-ary when wide), root at 0 */
    size_t n;        /* entries in the heap, tombstoned ones included */
    size_t cap;      /* entries allocated */

    uint64_t *dead;  /* owned; open-addressing set of cancelled ids (0 = empty slot) */
    size_t dead_n;   /* ids in the set */
    uint64_t dead_lo, dead_hi; /* every id in the set lies in [dead_lo, dead_hi] (bounds
                                  kept loose on removal, reset when the set empties) */
    size_t dead_cap; /* slots (a power of two, or 0) */

    uint64_t master_seed;
    sim_rng_slot *rngs; /* owned, creation order */
    size_t rng_n, rng_cap;
};

/* sim_now casts a sim pointer to its first member, which C11 allows (6.7.2.1p15). */
_Static_assert(offsetof(struct sim, clock) == 0,
               "the clock must be the first member of struct sim");

/* ---- heap ------------------------------------------------------------------------- */

/* Two shapes of heap, by size. Up to FAR_MIN entries (2 MiB, the heap in cache) it is
 * binary: each level costs one comparison of the two children and one against the
 * entry sinking, and an event scheduled from a callback (the root's new entry, usually
 * due among the next few) stops after a level or two. A 4-ary heap takes three
 * comparisons a level for half the levels: the same for a sift to the bottom, half as
 * many again for these short ones (the flagship's run loop: 23.7 M instructions of
 * about 1,030 M fewer binary than 4-ary). A heap that outgrows FAR_MIN misses the
 * caches instead: it becomes 4-ary (`wide`), whose four children share one or two
 * cache lines, and sifting down asks for the next level's cache lines ahead of its
 * compares. */
#define FAR_MIN ((size_t)1 << 16)

/* Entry i's parent in a heap of `arity` (2 or 4). */
static inline size_t parent(size_t i, unsigned arity)
{
    return (i - 1) / arity;
}

/* Inlined with a constant arity: a division by a variable costs tens of cycles. */
static inline __attribute__((always_inline)) void sift_up_with(sim_entry *h, size_t i,
                                                               unsigned arity)
{
    sim_entry e = h[i];
    while (i > 0) {
        size_t p = parent(i, arity);
        if (!(e.key < h[p].key))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

/* Sift down without branches on the keys: the order of unrelated events is a coin toss
 * for the branch predictor, so the smaller child is picked by a mask added to its
 * address (binary) or by flags added to indices and conditional moves (4-ary).
 *
 * Binary, for a heap in cache: inlined into sim_at (nearly every event schedules one
 * from its callback, so that sift is the kernel's most frequent) and the run loop. It
 * walks by address: a child's address is twice the parent's offset plus one entry. */
static inline __attribute__((always_inline)) void sift_down_bin(sim_entry *h, size_t n,
                                                                size_t i)
{
    sim_entry e = h[i];
    sim_entry *hole = h + i;
    const sim_entry *last = h + n - 1;
    for (;;) {
        /* The first child, at twice the hole's byte offset plus one entry (in bytes:
         * no division of the offset by the entry's size to multiply back). */
        const sim_entry *c = (const sim_entry *)((const char *)h +
                                                 2 * ((const char *)hole - (const char *)h)) + 1;
        if (c < last) {
            /* One entry further when the second child is the smaller. */
            uintptr_t step = -(uintptr_t)(c[1].key < c[0].key) & sizeof *c;
            c = (const sim_entry *)((uintptr_t)c + step);
        } else if (c > last) {
            break;
        }
        if (!(c->key < e.key))
            break;
        *hole = *c;
        hole = (sim_entry *)c;
    }
    *hole = e;
}

/* 4-ary, for a heap out of cache. A branch-free sift waits for each level's loads,
 * which in a heap out of cache made it lose to branches (the processor speculates down
 * a path and loads early): 2.3 against 1.3 times a bare binary heap at 1,000,000
 * pending events. With the grandchildren prefetched, it is about 1.05 there
 * (bench_kernel). */
static __attribute__((noinline)) void sift_down_quad(sim_entry *h, size_t n, size_t i)
{
    sim_entry e = h[i];
    for (;;) {
        size_t c = i * 4 + 1;
        size_t best;
        size_t g = c * 4 + 1;
        if (g < n)
            /* Whichever child wins, the next level is among the sixteen grandchildren,
             * which lie together (512 bytes, eight cache lines): ask for all of them, so
             * that their misses overlap this level's compares instead of following. */
            for (size_t k = 0; k < 16; k += 2)
                __builtin_prefetch(&h[g + k]);
        if (c + 4 <= n) {
            /* Every node but the last has four children: a tournament of two pairs
             * then the winners, each pick a flag added to an index or a conditional
             * move, not a branch. */
            size_t a = c + (h[c + 1].key < h[c].key);
            size_t b = c + 2 + (h[c + 3].key < h[c + 2].key);
            best = h[b].key < h[a].key ? b : a;
        } else if (c < n) {
            best = c;
            for (size_t k = c + 1; k < n; k++)
                if (h[k].key < h[best].key)
                    best = k;
        } else {
            break;
        }
        if (!(h[best].key < e.key))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = e;
}

static __attribute__((noinline)) void sift_down_bin_call(sim_entry *h, size_t n, size_t i)
{
    sift_down_bin(h, n, i);
}

static inline void sift_down(const sim *s, size_t n, size_t i)
{
    if (s->wide)
        sift_down_quad(s->heap, n, i);
    else
        sift_down_bin_call(s->heap, n, i);
}

static inline void sift_up(const sim *s, size_t i)
{
    if (s->wide)
        sift_up_with(s->heap, i, 4);
    else
        sift_up_with(s->heap, i, 2);
}

/* Rebuild the heap property over heap[0..n) (Floyd: bottom-up, O(n)). */
static void heapify(sim *s, size_t n)
{
    if (n > 1)
        for (size_t i = parent(n - 1, s->wide ? 4 : 2) + 1; i-- > 0;)
            sift_down(s, n, i);
}

/* Node i's children are 128 bytes in a 4-ary heap (4i+1..4i+4), 64 in a binary one
 * (2i+1, 2i+2); starting the array 32 bytes past a 64-byte boundary puts each group on
 * exactly two cache lines, or one, where malloc's 16-byte alignment lets a group
 * straddle three, or two. */
static sim_entry *heap_alloc(size_t cap)
{
    /* C11 wants the size to be a multiple of the alignment. */
    size_t bytes = ((cap + 1) * sizeof(sim_entry) + 63) & ~(size_t)63;
    sim_entry *base = aligned_alloc(64, bytes);
    return base ? base + 1 : NULL;
}

static void heap_free(sim_entry *h)
{
    if (h)
        free(h - 1);
}

/* ---- cancelled-id set ------------------------------------------------------------- */

static size_t dead_slot(uint64_t id, size_t cap)
{
    return (size_t)(sim_mix64(id) & (cap - 1));
}

static void dead_grow(sim *s)
{
    size_t ncap = s->dead_cap ? s->dead_cap * 2 : 64;
    uint64_t *nd = calloc(ncap, sizeof *nd);
    SIM_ASSERT(nd != NULL);
    for (size_t i = 0; i < s->dead_cap; i++) {
        uint64_t id = s->dead[i];
        if (!id)
            continue;
        size_t j = dead_slot(id, ncap);
        while (nd[j])
            j = (j + 1) & (ncap - 1);
        nd[j] = id;
    }
    free(s->dead);
    s->dead = nd;
    s->dead_cap = ncap;
}

static void dead_add(sim *s, uint64_t id)
{
    if ((s->dead_n + 1) * 2 > s->dead_cap)
        dead_grow(s);
    size_t j = dead_slot(id, s->dead_cap);
    while (s->dead[j]) {
        SIM_ASSERT(s->dead[j] != id); /* cancelled twice: a bug */
        j = (j + 1) & (s->dead_cap - 1);
    }
    s->dead[j] = id;
    if (s->dead_n++ == 0 || id < s->dead_lo)
        s->dead_lo = id;
    if (id > s->dead_hi)
        s->dead_hi = id;
}

/* Remove id from the set if present; returns whether it was. Deletion shifts the
 * following cluster back (linear probing without tombstones). */
static bool dead_take(sim *s, uint64_t id)
{
    size_t mask = s->dead_cap - 1;
    size_t j = dead_slot(id, s->dead_cap);
    while (s->dead[j] != id) {
        if (!s->dead[j])
            return false;
        j = (j + 1) & mask;
    }
    s->dead[j] = 0;
    s->dead_n--;
    for (size_t k = (j + 1) & mask; s->dead[k]; k = (k + 1) & mask) {
        uint64_t v = s->dead[k];
        size_t home = dead_slot(v, s->dead_cap);
        /* Move v back into the hole if the hole lies on v's probe path. */
        bool move = (j <= k) ? (home <= j || home > k) : (home <= j && home > k);
        if (move) {
            s->dead[j] = v;
            s->dead[k] = 0;
            j = k;
        }
    }
    return true;
}

/* The run loop leaves the root vacant while a callback runs: if the callback schedules
 * (the common case), the new entry takes the root and sifts down once, instead of the
 * last entry sifting down and the new one sifting up. */
static inline void fill_hole(sim *s)
{
    if (!s->hole)
        return;
    s->hole = false;
    s->n--;
    if (s->n > 0) {
        s->heap[0] = s->heap[s->n];
        if (s->wide)
            sift_down_quad(s->heap, s->n, 0);
        else
            sift_down_bin(s->heap, s->n, 0);
    }
}

/* ---- public API ------------------------------------------------------------------- */

sim *sim_new(uint64_t master_seed)
{
    sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->next_seq = 1;
    s->master_seed = master_seed;
    s->cap = 1024;
    s->heap = heap_alloc(s->cap);
    if (!s->heap) {
        free(s);
        return NULL;
    }
    return s;
}

void sim_free(sim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->rng_n; i++) {
        gsl_rng_free(s->rngs[i].rng);
        free(s->rngs[i].name);
    }
    free(s->rngs);
    free(s->dead);
    heap_free(s->heap);
    free(s);
}

/* Double the heap's room. Out of line: rare, and sim_at stays lean without it. A heap
 * that outgrows FAR_MIN becomes 4-ary, rebuilt whole (once, O(n)) with the root
 * refilled first. */
static __attribute__((noinline)) void heap_grow(sim *s)
{
    size_t ncap = s->cap * 2;
    sim_entry *nh = heap_alloc(ncap);
    SIM_ASSERT(nh != NULL);
    memcpy(nh, s->heap, s->n * sizeof *nh);
    heap_free(s->heap);
    s->heap = nh;
    s->cap = ncap;
    if (!s->wide && ncap > FAR_MIN) {
        fill_hole(s);
        s->wide = true;
        heapify(s, s->n);
    }
}

sim_event_id sim_at(sim *s, sim_time t, sim_fn fn, void *ctx)
{
    SIM_ASSERT(t >= s->clock.now); /* scheduling in the past is a bug */
    SIM_DEBUG_ASSERT(fn != NULL);
    if (s->n == s->cap)
        heap_grow(s);
    uint64_t id = s->next_seq++;
    if (s->hole) {
        s->hole = false;
        s->heap[0] = (sim_entry){make_key(t, id), fn, ctx};
        /* Nearly every event schedules one from its callback, so this sift is the
         * kernel's most frequent: inline here, without a call. */
        if (!s->wide)
            sift_down_bin(s->heap, s->n, 0);
        else
            sift_down_quad(s->heap, s->n, 0);
        return id;
    }
    s->heap[s->n] = (sim_entry){make_key(t, id), fn, ctx};
    sift_up(s, s->n);
    s->n++;
    return id;
}

sim_event_id sim_after(sim *s, sim_time dt, sim_fn fn, void *ctx)
{
    SIM_ASSERT(dt >= 0);
    sim_time t = dt > SIM_TIME_MAX - s->clock.now ? SIM_TIME_MAX : s->clock.now + dt;
    return sim_at(s, t, fn, ctx);
}

/* Drop the cancelled entries from the heap and rebuild it: O(n). Tombstones make every
 * sift deeper until their time comes, and a model that re-arms a long timer often (a
 * Firehose buffer's interval, cancelled at each size flush) keeps far more of them
 * than live events. Keys are unique, so the order of what remains is untouched. */
static void purge(sim *s)
{
    fill_hole(s);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!dead_take(s, key_seq(s->heap[i].key)))
            s->heap[w++] = s->heap[i];
    s->n = w;
    SIM_ASSERT(s->dead_n == 0); /* every cancelled id was pending */
    s->dead_lo = s->dead_hi = 0;
    heapify(s, w);
}

void sim_cancel(sim *s, sim_event_id id)
{
    SIM_ASSERT(id != 0 && id < s->next_seq);
#ifndef NDEBUG
    fill_hole(s);
    bool found = false;
    for (size_t i = 0; i < s->n && !found; i++)
        found = key_seq(s->heap[i].key) == id;
    SIM_ASSERT(found); /* only pending events can be cancelled */
#endif
    dead_add(s, id);
    /* Once tombstones are half the heap; not below 16, where a rebuild saves nothing. */
    if (s->dead_n >= 16 && s->dead_n * 2 >= s->n)
        purge(s);
}

uint64_t sim_run_until(sim *s, sim_time end)
{
    uint64_t ran = 0;
    s->stopping = false;
    for (;;) {
        fill_hole(s);
        if (s->n == 0 || key_time(s->heap[0].key) > end)
            break;
        sim_entry e = s->heap[0];
        s->hole = true;
        /* Most events were scheduled after the newest cancelled one (or before the
         * oldest): the bounds spare them the probe of the set. */
        uint64_t seq = key_seq(e.key);
        if (s->dead_n > 0 && seq >= s->dead_lo && seq <= s->dead_hi && dead_take(s, seq)) {
            if (s->dead_n == 0)
                s->dead_lo = s->dead_hi = 0;
            continue;
        }
        s->clock.now = key_time(e.key);
        e.fn(s, e.ctx);
        ran++;
        if (s->stopping)
            break;
    }
    fill_hole(s);
    s->events_run += ran;
    if (!s->stopping && end > s->clock.now)
        s->clock.now = end;
    return ran;
}

void sim_stop(sim *s)
{
    s->stopping = true;
}

size_t sim_pending(const sim *s)
{
    return s->n - (size_t)s->hole - s->dead_n;
}

uint64_t sim_events_run(const sim *s)
{
    return s->events_run;
}

uint64_t sim_master_seed(const sim *s)
{
    return s->master_seed;
}

gsl_rng *sim_rng(sim *s, const char *name)
{
    /* Linear search: entities ask once, at build time, and keep the pointer. */
    for (size_t i = 0; i < s->rng_n; i++)
        if (strcmp(s->rngs[i].name, name) == 0)
            return s->rngs[i].rng;
    if (s->rng_n == s->rng_cap) {
        size_t ncap = s->rng_cap ? s->rng_cap * 2 : 16;
        sim_rng_slot *nr = realloc(s->rngs, ncap * sizeof *nr);
        SIM_ASSERT(nr != NULL);
        s->rngs = nr;
        s->rng_cap = ncap;
    }
    /* Two names may map to one 32-bit seed (birthday bound: ~1 in 10^4 runs with 1,000
     * entities); re-derive with a salt so every stream of the run is distinct. */
    uint32_t seed = 0;
    for (uint32_t salt = 0;; salt++) {
        seed = sim_seed_derive(s->master_seed, name, salt);
        bool clash = false;
        for (size_t i = 0; i < s->rng_n && !clash; i++)
            clash = s->rngs[i].seed == seed;
        if (!clash)
            break;
    }
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    char *copy = strdup(name);
    SIM_ASSERT(r != NULL && copy != NULL);
    gsl_rng_set(r, seed);
    s->rngs[s->rng_n++] = (sim_rng_slot){copy, seed, r};
    return r;
}

void sim_rng_each(const sim *s, void (*fn)(void *arg, const char *name, uint32_t seed),
                  void *arg)
{
    for (size_t i = 0; i < s->rng_n; i++)
        fn(arg, s->rngs[i].name, s->rngs[i].seed);
}
