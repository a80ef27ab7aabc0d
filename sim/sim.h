/* sim.h - the discrete-event kernel: integer clock, future-event list, run loop.
 *
 * Simulated time is an int64_t count of nanoseconds (about +-292 years). Events are
 * (time, sequence, callback, context) entries in a min-heap; the sequence number
 * is taken at scheduling time, so events due at the same instant run in the order they
 * were scheduled, and an event scheduled "now" from inside a callback runs after every
 * event already due. Cancelling marks a tombstone that the run loop skips, as ns-3's
 * and Redis's event loops do, and the heap is rebuilt without them once they are half
 * of it; nothing is allocated per event in steady state.
 *
 * The kernel knows nothing of Kinesis. It also owns the run's random streams (see
 * sim_rng.h), so that every entity's generator is derived from the one master seed.
 */
#ifndef SIM_H
#define SIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

typedef int64_t sim_time; /* nanoseconds since the start of the run */

#define SIM_NS(x) ((sim_time)(x))
#define SIM_US(x) ((sim_time)(x) * INT64_C(1000))
#define SIM_MS(x) ((sim_time)(x) * INT64_C(1000000))
#define SIM_S(x) ((sim_time)(x) * INT64_C(1000000000))
#define SIM_MIN(x) (SIM_S(x) * 60)
#define SIM_HOUR(x) (SIM_S(x) * 3600)
#define SIM_DAY(x) (SIM_S(x) * 86400)
#define SIM_TIME_MAX INT64_MAX

/* Seconds as a double, for statistics and reports only (never for ordering). */
static inline double sim_to_s(sim_time t)
{
    return (double)t / 1e9;
}
static inline double sim_to_ms(sim_time t)
{
    return (double)t / 1e6;
}

/* The longest duration a draw can stand for: 1000 days, longer than any run (at most
 * 400 days), so that a capped draw still ends after the run, and short enough that the
 * clock plus a few capped draws stays far from INT64_MAX (about 106,000 days). A
 * heavy-tailed latency (a Pareto of alpha 0.1 reaches 1e300 ms, or infinity) means
 * "not within this run", never a wrapped, negative time. */
#define SIM_DRAW_MAX SIM_DAY(1000)

/* A duration drawn in milliseconds as whole nanoseconds, rounded to the nearest (halves
 * up); 0 for ms <= 0 (and NaN), SIM_DRAW_MAX for anything longer, infinity included.
 * The same value as llround(ms * 1e6) in between, without the library call: below 2^52
 * the sum x + 0.5 is exact or rounds within the same integer, and above it (52 days)
 * llround does the work. Every model's latency draw goes through this. */
static inline sim_time sim_ms_to_ns(double ms)
{
    double x = ms * 1e6;
    if (!(x >= 0.5))
        return 0;
    if (x < 0x1p52)
        return (sim_time)(x + 0.5);
    if (x >= (double)SIM_DRAW_MAX)
        return SIM_DRAW_MAX;
    return (sim_time)llround(x);
}

typedef struct sim sim;

/* An event callback. It cannot fail: a model records failures (throttles, losses) as
 * outcomes. `ctx` is borrowed: the kernel never frees it. */
typedef void (*sim_fn)(sim *s, void *ctx);

/* Identifies a scheduled event for sim_cancel(). 0 is never a valid id. */
typedef uint64_t sim_event_id;

/* Create a simulation at time 0 whose random streams derive from `master_seed`.
 * Returns NULL when out of memory. Free with sim_free(). */
sim *sim_new(uint64_t master_seed);

/* Free the simulation, its pending events (their contexts are not touched) and every
 * generator made by sim_rng(). NULL-safe. */
void sim_free(sim *s);

/* The part of a simulation that is read on every event: its clock. Public only so that
 * sim_now can be inlined (models read the clock several times per event, from other
 * translation units); models must not touch it. */
struct sim_clock {
    sim_time now; /* current simulated time, ns */
};

/* The current simulated time in nanoseconds. */
static inline sim_time sim_now(const sim *s)
{
    /* A sim begins with its clock (sim.c asserts it at compile time). */
    return ((const struct sim_clock *)(const void *)s)->now;
}

/* Schedule fn(s, ctx) at absolute time `t`, which must not be earlier than now (a bug:
 * asserted). Returns the event's id. Aborts on out-of-memory (the heap only grows when
 * the pending count reaches a new maximum). O(log n). */
sim_event_id sim_at(sim *s, sim_time t, sim_fn fn, void *ctx);

/* Schedule fn(s, ctx) `dt` nanoseconds from now (dt >= 0; saturates at SIM_TIME_MAX). */
sim_event_id sim_after(sim *s, sim_time dt, sim_fn fn, void *ctx);

/* Cancel a pending event: it will not run. The id must name an event that is still
 * pending (scheduled, not run, not cancelled); cancelling anything else is a bug,
 * checked by an O(n) scan in debug builds. O(1) amortised. */
void sim_cancel(sim *s, sim_event_id id);

/* Run every event due at or before `end`, in (time, sequence) order, then set the
 * clock to `end` (unless sim_stop() was called, which leaves the clock at the stopping
 * event). Returns the number of callbacks run. */
uint64_t sim_run_until(sim *s, sim_time end);

/* Ask sim_run_until() to return after the current callback. */
void sim_stop(sim *s);

/* Pending events (scheduled, not cancelled, not yet run). */
size_t sim_pending(const sim *s);

/* Callbacks run since sim_new(). */
uint64_t sim_events_run(const sim *s);

/* The master seed given to sim_new(). */
uint64_t sim_master_seed(const sim *s);

/* The random stream of the entity called `name` ("producer/web", "shard/3"): a
 * gsl_rng_taus2 generator seeded from the master seed and the name (sim_rng.h), made
 * on first use and owned by the simulation (freed by sim_free; do not free it).
 * Asking twice for one name returns the same generator. Adding an entity never changes
 * another entity's draws. Aborts on out-of-memory. */
gsl_rng *sim_rng(sim *s, const char *name);

/* Visit every generator made so far, in creation order: its name and 32-bit seed
 * (for the run header and the report's assumptions). */
void sim_rng_each(const sim *s, void (*fn)(void *arg, const char *name, uint32_t seed),
                  void *arg);

#endif
