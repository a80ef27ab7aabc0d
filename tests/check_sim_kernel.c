/* check_sim_kernel.c - Check suite for the event kernel (sim.h) and the run's random
 * streams (sim_rng.h): ordering, cancellation, the clock, stopping, seeds, a
 * randomised schedule/cancel stress test checked against a naive reference queue, and
 * the order through a heap too big for the kernel's branch-free sift-down; and the
 * growth of the models' shard-indexed tables (sim_mem.h).
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "sim.h"
#include "sim_dist.h"
#include "sim_err.h"
#include "sim_mem.h"
#include "sim_rng.h"
#include "testutil.h"

/* A passing ck_assert costs a write(2) (Check records the last location reached), so
 * loops that check thousands of values use this, which only acts on failure. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

/* ---- a callback that logs which event ran, and when ------------------------------ */

#define LOG_MAX 64

typedef struct trace {
    int ids[LOG_MAX];
    sim_time at[LOG_MAX];
    int n;
} trace;

/* An event's context: its label, the trace it writes to, and optional actions. */
typedef struct ev {
    int label;
    trace *log;
    sim_time expect_t;      /* the time it was scheduled for */
    struct ev *spawn;       /* schedule this one at now, if set */
    sim_event_id cancel[2]; /* cancel these, if non-zero */
    bool stop;              /* call sim_stop */
} ev;

static void log_cb(sim *s, void *ctx)
{
    ev *e = ctx;
    ck_assert_int_eq(sim_now(s), e->expect_t); /* the clock is the event's time */
    ck_assert_int_lt(e->log->n, LOG_MAX);
    e->log->ids[e->log->n] = e->label;
    e->log->at[e->log->n] = sim_now(s);
    e->log->n++;
    if (e->spawn) {
        e->spawn->expect_t = sim_now(s);
        sim_after(s, 0, log_cb, e->spawn);
    }
    for (int i = 0; i < 2; i++)
        if (e->cancel[i])
            sim_cancel(s, e->cancel[i]);
    if (e->stop)
        sim_stop(s);
}

static sim_event_id at(sim *s, sim_time t, ev *e, int label, trace *log)
{
    e->label = label;
    e->log = log;
    e->expect_t = t;
    return sim_at(s, t, log_cb, e);
}

static void assert_trace(const trace *log, const int *want, int n)
{
    ck_assert_int_eq(log->n, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(log->ids[i] == want[i], "position %d: ran %d, expected %d", i, log->ids[i],
                      want[i]);
}

/* ---- ordering --------------------------------------------------------------------- */

START_TEST(test_order_time_then_fifo)
{
    sim *s = sim_new(1);
    ck_assert_ptr_nonnull(s);
    trace log = {0};
    ev e[8] = {0};
    static const sim_time times[8] = {30, 10, 20, 10, 30, 0, 10, 20};
    for (int i = 0; i < 8; i++)
        at(s, times[i], &e[i], i, &log);
    ck_assert_uint_eq(sim_pending(s), 8);
    ck_assert_uint_eq(sim_run_until(s, 100), 8);
    /* By time, then by scheduling order among equal times. */
    static const int want[8] = {5, 1, 3, 6, 2, 7, 0, 4};
    assert_trace(&log, want, 8);
    ck_assert_uint_eq(sim_pending(s), 0);
    ck_assert_uint_eq(sim_events_run(s), 8);
    sim_free(s);
}
END_TEST

/* Enough equal-time events to fill several heap levels: FIFO must hold across sifts. */
START_TEST(test_fifo_many_ties)
{
    sim *s = sim_new(1);
    static ev e[LOG_MAX];
    trace log = {0};
    for (int i = 0; i < LOG_MAX; i++)
        at(s, i % 2 ? 7 : 5, &e[i], i, &log);
    sim_run_until(s, 10);
    ck_assert_int_eq(log.n, LOG_MAX);
    for (int i = 0; i < LOG_MAX / 2; i++) {
        ck_assert_int_eq(log.ids[i], 2 * i);
        ck_assert_int_eq(log.ids[LOG_MAX / 2 + i], 2 * i + 1);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_now_from_callback)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev a = {0}, b = {0}, c = {0}, d = {0}, later = {0};
    a.spawn = &d;
    d.label = 3;
    d.log = &log;
    at(s, 10, &a, 0, &log);
    at(s, 10, &b, 1, &log);
    at(s, 10, &c, 2, &log);
    at(s, 11, &later, 4, &log);
    sim_run_until(s, 20);
    /* d was scheduled "now" by a, so it runs after b and c, which were already due,
     * and before anything later. */
    static const int want[5] = {0, 1, 2, 3, 4};
    assert_trace(&log, want, 5);
    ck_assert_int_eq(log.at[3], 10);
    sim_free(s);
}
END_TEST

/* ---- cancellation ----------------------------------------------------------------- */

START_TEST(test_cancel_head)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev a = {0}, b = {0}, c = {0};
    sim_event_id ia = at(s, 10, &a, 0, &log);
    at(s, 20, &b, 1, &log);
    at(s, 10, &c, 2, &log);
    sim_cancel(s, ia);
    ck_assert_uint_eq(sim_pending(s), 2);
    ck_assert_uint_eq(sim_run_until(s, 100), 2);
    static const int want[2] = {2, 1};
    assert_trace(&log, want, 2);
    ck_assert_uint_eq(sim_pending(s), 0);
    sim_free(s);
}
END_TEST

START_TEST(test_cancel_in_callback)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev a = {0}, b = {0}, c = {0}, d = {0};
    at(s, 10, &a, 0, &log);
    sim_event_id ib = at(s, 10, &b, 1, &log); /* due at the same instant, after a */
    sim_event_id ic = at(s, 50, &c, 2, &log);
    at(s, 20, &d, 3, &log);
    a.cancel[0] = ib;
    a.cancel[1] = ic;
    ck_assert_uint_eq(sim_run_until(s, 100), 2);
    static const int want[2] = {0, 3};
    assert_trace(&log, want, 2);
    ck_assert_uint_eq(sim_pending(s), 0);
    sim_free(s);
}
END_TEST

/* A cancelled id stays cancelled only for its own event: later events reuse no ids. */
START_TEST(test_ids_unique)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev e[16] = {0};
    sim_event_id ids[16];
    for (int i = 0; i < 16; i++) {
        ids[i] = at(s, i, &e[i], i, &log);
        ck_assert_uint_ne(ids[i], 0);
        for (int j = 0; j < i; j++)
            ck_assert_uint_ne(ids[i], ids[j]);
    }
    for (int i = 0; i < 16; i += 2)
        sim_cancel(s, ids[i]);
    ck_assert_uint_eq(sim_pending(s), 8);
    ck_assert_uint_eq(sim_run_until(s, 100), 8);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(log.ids[i], 2 * i + 1);
    sim_free(s);
}
END_TEST

/* ---- the clock and the run loop --------------------------------------------------- */

START_TEST(test_run_until_clock)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev e[3] = {0};
    ck_assert_int_eq(sim_now(s), 0);
    at(s, 10, &e[0], 0, &log);
    at(s, 20, &e[1], 1, &log);
    at(s, 100, &e[2], 2, &log);
    ck_assert_uint_eq(sim_run_until(s, 50), 2);
    ck_assert_int_eq(sim_now(s), 50);
    ck_assert_uint_eq(sim_pending(s), 1);
    ck_assert_uint_eq(sim_run_until(s, 99), 0);
    ck_assert_int_eq(sim_now(s), 99);
    ck_assert_uint_eq(sim_run_until(s, 100), 1); /* due at exactly `end`: runs */
    ck_assert_int_eq(sim_now(s), 100);
    ck_assert_uint_eq(sim_run_until(s, SIM_S(5)), 0);
    ck_assert_int_eq(sim_now(s), SIM_S(5));
    ck_assert_uint_eq(sim_events_run(s), 3);
    sim_free(s);
}
END_TEST

START_TEST(test_after_saturates)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev e = {0};
    sim_run_until(s, SIM_S(1));
    e.label = 9;
    e.log = &log;
    e.expect_t = SIM_TIME_MAX;
    sim_after(s, SIM_TIME_MAX, log_cb, &e);
    ck_assert_uint_eq(sim_run_until(s, SIM_TIME_MAX - 1), 0);
    ck_assert_uint_eq(sim_run_until(s, SIM_TIME_MAX), 1);
    ck_assert_int_eq(sim_now(s), SIM_TIME_MAX);
    sim_free(s);
}
END_TEST

START_TEST(test_stop)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev a = {0}, b = {0}, c = {0};
    at(s, 10, &a, 0, &log);
    at(s, 10, &b, 1, &log);
    at(s, 20, &c, 2, &log);
    a.stop = true;
    ck_assert_uint_eq(sim_run_until(s, 100), 1);
    ck_assert_int_eq(sim_now(s), 10); /* left at the stopping event */
    ck_assert_uint_eq(sim_pending(s), 2);
    /* The stop request is spent: the next run goes on. */
    ck_assert_uint_eq(sim_run_until(s, 100), 2);
    ck_assert_int_eq(sim_now(s), 100);
    static const int want[3] = {0, 1, 2};
    assert_trace(&log, want, 3);
    sim_free(s);
}
END_TEST

START_TEST(test_pending_counts)
{
    sim *s = sim_new(42);
    ck_assert_uint_eq(sim_master_seed(s), 42);
    ck_assert_uint_eq(sim_pending(s), 0);
    trace log = {0};
    ev e[5] = {0};
    sim_event_id id[5];
    for (int i = 0; i < 5; i++)
        id[i] = at(s, 10 * (i + 1), &e[i], i, &log);
    ck_assert_uint_eq(sim_pending(s), 5);
    sim_cancel(s, id[1]);
    sim_cancel(s, id[4]);
    ck_assert_uint_eq(sim_pending(s), 3);
    ck_assert_uint_eq(sim_run_until(s, 25), 1);
    ck_assert_uint_eq(sim_pending(s), 2);
    ck_assert_uint_eq(sim_run_until(s, 100), 2);
    ck_assert_uint_eq(sim_pending(s), 0);
    ck_assert_uint_eq(sim_events_run(s), 3);
    sim_free(s);
}
END_TEST

/* Freeing with events still pending frees the queue but not the contexts (the
 * sanitizer build checks for leaks and double frees). */
START_TEST(test_free_pending)
{
    sim *s = sim_new(1);
    trace log = {0};
    ev e[3] = {0};
    for (int i = 0; i < 3; i++)
        at(s, i, &e[i], i, &log);
    sim_cancel(s, 2);
    sim_free(s);
    sim_free(NULL);
}
END_TEST

START_TEST(test_schedule_in_past)
{
    sim *s = sim_new(1);
    sim_run_until(s, 100);
    trace log = {0};
    ev e = {0};
    at(s, 99, &e, 0, &log); /* a bug: asserted, in release builds too */
}
END_TEST

/* ---- random streams --------------------------------------------------------------- */

START_TEST(test_mix_and_hash_vectors)
{
    /* splitmix64's first output for state 0 is the finaliser of the golden gamma. */
    ck_assert_uint_eq(sim_mix64(UINT64_C(0x9e3779b97f4a7c15)), UINT64_C(0xe220a8397b1dcdaf));
    ck_assert_uint_eq(sim_mix64(0), 0);
    /* FNV-1a 64 reference values (Fowler, Noll, Vo). */
    ck_assert_uint_eq(sim_hash_name(""), UINT64_C(0xcbf29ce484222325));
    ck_assert_uint_eq(sim_hash_name("a"), UINT64_C(0xaf63dc4c8601ec8c));
    ck_assert_uint_eq(sim_hash_name("foobar"), UINT64_C(0x85944171f73967e8));
}
END_TEST

START_TEST(test_seed_derive)
{
    char name[32];
    for (uint64_t master = 0; master < 50; master++) {
        for (int i = 0; i < 200; i++) {
            snprintf(name, sizeof name, "producer/%d", i);
            uint32_t seed = sim_seed_derive(master, name, 0);
            CHECK(seed != 0, "%s: zero seed", name);
            CHECK(seed == sim_seed_derive(master, name, 0), "%s: not a function", name);
            CHECK(seed != sim_seed_derive(master, name, 1), "%s: salt ignored", name);
            CHECK(seed != sim_seed_derive(master + 1, name, 0), "%s: master ignored", name);
        }
    }
    ck_assert_uint_ne(sim_seed_derive(1, "shard/1", 0), sim_seed_derive(1, "shard/2", 0));
}
END_TEST

START_TEST(test_rng_same_name)
{
    sim *s = sim_new(7);
    gsl_rng *a = sim_rng(s, "producer/web");
    gsl_rng *b = sim_rng(s, "consumer/etl");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_eq(sim_rng(s, "producer/web"), a);
    ck_assert_str_eq(gsl_rng_name(a), "taus2");

    /* The generator is taus2 seeded with the derived seed, reproducible outside. */
    gsl_rng *ref = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(ref, sim_seed_derive(7, "producer/web", 0));
    for (int i = 0; i < 100; i++)
        CHECK(gsl_rng_get(a) == gsl_rng_get(ref), "draw %d differs", i);
    gsl_rng_free(ref);
    sim_free(s);
}
END_TEST

typedef struct seen {
    char names[1000][24];
    uint32_t seeds[1000];
    int n;
} seen;

static void collect(void *arg, const char *name, uint32_t seed)
{
    seen *v = arg;
    CHECK(v->n < 1000, "too many generators");
    snprintf(v->names[v->n], sizeof v->names[0], "%s", name);
    v->seeds[v->n++] = seed;
}

START_TEST(test_rng_distinct_seeds)
{
    sim *s = sim_new(2024);
    char name[24];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "producer/%d", i);
        sim_rng(s, name);
    }
    static seen v;
    v.n = 0;
    sim_rng_each(s, collect, &v);
    ck_assert_int_eq(v.n, 1000);
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "producer/%d", i);
        CHECK(strcmp(v.names[i], name) == 0, "%s listed as %d", name, i); /* creation order */
        CHECK(v.seeds[i] != 0, "%s: zero seed", name);
        for (int j = 0; j < i; j++)
            CHECK(v.seeds[i] != v.seeds[j], "%s and %s share a seed", name, v.names[j]);
    }
    sim_free(s);
}
END_TEST

START_TEST(test_rng_independent_of_others)
{
    /* The same entity, alone in one run and among others (made before and after it) in
     * another, draws the same numbers. */
    sim *alone = sim_new(99);
    sim *crowd = sim_new(99);
    sim_rng(crowd, "producer/a");
    sim_rng(crowd, "shard/0");
    gsl_rng *r1 = sim_rng(alone, "consumer/x");
    gsl_rng *r2 = sim_rng(crowd, "consumer/x");
    gsl_rng *other = sim_rng(crowd, "shard/1");
    for (int i = 0; i < 1000; i++) {
        gsl_rng_get(other); /* drawing from another stream changes nothing */
        CHECK(gsl_rng_get(r1) == gsl_rng_get(r2), "draw %d differs", i);
    }
    sim_free(alone);
    sim_free(crowd);

    /* A different master seed gives the entity a different stream. */
    sim *s1 = sim_new(1), *s2 = sim_new(2);
    ck_assert_uint_ne(gsl_rng_get(sim_rng(s1, "consumer/x")),
                      gsl_rng_get(sim_rng(s2, "consumer/x")));
    sim_free(s1);
    sim_free(s2);
}
END_TEST

/* ---- stress: random schedules and cancels against a reference ---------------------- */

/* One scheduled event as the reference sees it. */
typedef struct ref_ev {
    sim_time t;
    uint64_t order; /* scheduling order: the FIFO tie-break */
    sim_event_id id;
    size_t live_pos; /* index in st.live while pending */
    bool pending;
} ref_ev;

#define STRESS_OPS 100000
#define POOL (STRESS_OPS * 2)

static struct {
    sim *s;
    gsl_rng *r;
    ref_ev *pool; /* every event ever scheduled */
    size_t used;
    size_t *live; /* indices of pending events, unordered */
    size_t nlive;
    uint64_t order;
    uint64_t ran, cancelled, ops;
} st;

static void stress_cb(sim *s, void *ctx);

static void ref_schedule(sim_time dt)
{
    CHECK(st.used < POOL, "pool exhausted");
    ref_ev *e = &st.pool[st.used];
    e->t = sim_now(st.s) + dt;
    e->order = st.order++;
    e->id = sim_at(st.s, e->t, stress_cb, e);
    e->pending = true;
    e->live_pos = st.nlive;
    st.live[st.nlive++] = st.used++;
    st.ops++;
}

static void ref_remove(ref_ev *e)
{
    CHECK(e->pending, "removing an event that is not pending");
    e->pending = false;
    size_t last = st.live[--st.nlive];
    st.live[e->live_pos] = last;
    st.pool[last].live_pos = e->live_pos;
}

static void ref_cancel_random(void)
{
    if (st.nlive == 0)
        return;
    ref_ev *e = &st.pool[st.live[gsl_rng_uniform_int(st.r, st.nlive)]];
    sim_cancel(st.s, e->id);
    ref_remove(e);
    st.cancelled++;
    st.ops++;
}

/* A random delay: often 0 (same-instant ties), often small (more ties), some long. */
static sim_time random_dt(void)
{
    double u = gsl_rng_uniform(st.r);
    if (u < 0.15)
        return 0;
    if (u < 0.6)
        return (sim_time)gsl_rng_uniform_int(st.r, 20);
    return (sim_time)gsl_rng_uniform_int(st.r, 5000);
}

static void stress_cb(sim *s, void *ctx)
{
    ref_ev *e = ctx;
    CHECK(e->pending, "a cancelled or finished event ran");
    CHECK(sim_now(s) == e->t, "clock %" PRId64 " at an event due %" PRId64, sim_now(s), e->t);
    /* It must be the reference's earliest pending event, by (time, order). */
    for (size_t i = 0; i < st.nlive; i++) {
        const ref_ev *o = &st.pool[st.live[i]];
        CHECK(o == e || o->t > e->t || (o->t == e->t && o->order > e->order),
              "ran (%" PRId64 ", %" PRIu64 ") before (%" PRId64 ", %" PRIu64 ")", e->t, e->order,
              o->t, o->order);
    }
    ref_remove(e);
    st.ran++;
    /* Callbacks schedule and cancel too, as models do. */
    double u = gsl_rng_uniform(st.r);
    if (u < 0.35)
        ref_schedule(random_dt());
    else if (u < 0.45)
        ref_cancel_random();
}

START_TEST(test_stress_against_reference)
{
    memset(&st, 0, sizeof st);
    st.s = sim_new(5);
    st.r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(st.r, 123456789);
    st.pool = calloc(POOL, sizeof *st.pool);
    st.live = calloc(POOL, sizeof *st.live);
    ck_assert(st.pool && st.live);

    while (st.ops < STRESS_OPS) {
        double u = gsl_rng_uniform(st.r);
        if (u < 0.5) {
            ref_schedule(random_dt());
        } else if (u < 0.65) {
            ref_cancel_random();
        } else {
            sim_time end = sim_now(st.s) + (sim_time)gsl_rng_uniform_int(st.r, 300);
            sim_run_until(st.s, end);
            st.ops++;
            CHECK(sim_now(st.s) == end, "clock not at end");
            for (size_t i = 0; i < st.nlive; i++) /* nothing due was left */
                CHECK(st.pool[st.live[i]].t > end, "an event due by %" PRId64 " is left", end);
        }
        CHECK(sim_pending(st.s) == st.nlive, "pending %zu, reference %zu", sim_pending(st.s),
              st.nlive);
    }
    sim_run_until(st.s, SIM_TIME_MAX);
    ck_assert_uint_eq(st.nlive, 0);
    ck_assert_uint_eq(sim_pending(st.s), 0);
    ck_assert_uint_eq(st.ran + st.cancelled, st.used);
    ck_assert_uint_eq(sim_events_run(st.s), st.ran);
    ck_assert_uint_gt(st.cancelled, 10000); /* the mix really exercised cancellation */

    sim_free(st.s);
    gsl_rng_free(st.r);
    free(st.pool);
    free(st.live);
}
END_TEST

/* ---- rounding of drawn durations ------------------------------------------------- */

/* sim_ms_to_ns is llround(ms * 1e6) (0 below 0, SIM_DRAW_MAX above it): at halves, the
 * doubles either side of them, of powers of two, around 2^52 ns, and random values over
 * 15 decades. */
START_TEST(test_ms_to_ns_is_llround)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 7);
    double edge[] = {0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 1e6, 3.5e6, 0x1p51, 0x1p52, 0x1p53, 1e17};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        double x = edge[i];
        double near[] = {x, nextafter(x, 0), nextafter(x, INFINITY), x + 0.5,
                         nextafter(x + 0.5, 0), nextafter(x + 0.5, INFINITY)};
        for (size_t k = 0; k < 6; k++) {
            double ms = near[k] / 1e6;
            sim_time want = ms * 1e6 <= 0 ? 0 : (sim_time)llround(ms * 1e6);
            ck_assert_int_eq(sim_ms_to_ns(ms), want < SIM_DRAW_MAX ? want : SIM_DRAW_MAX);
        }
    }
    for (int i = 0; i < 200000; i++) {
        double ms = pow(10.0, gsl_rng_uniform(r) * 15 - 7);
        ck_assert_int_eq(sim_ms_to_ns(ms), (sim_time)llround(ms * 1e6));
    }
    ck_assert_int_eq(sim_ms_to_ns(-3.0), 0);
    ck_assert_int_eq(sim_ms_to_ns(NAN), 0);
    gsl_rng_free(r);
}
END_TEST

static void noop_event(sim *s, void *ctx)
{
    (void)s;
    (void)ctx;
}

/* A heavy-tailed draw (a Pareto of alpha 0.05 reaches 1e300 ms, and infinity) saturates
 * at SIM_DRAW_MAX instead of wrapping to a negative time (llround of it is undefined),
 * and SIM_DRAW_MAX leaves room for the clock and a few draws added together. */
START_TEST(test_ms_to_ns_saturates)
{
    double cap_ms = (double)SIM_DRAW_MAX / 1e6;
    ck_assert_int_eq(sim_ms_to_ns(cap_ms), SIM_DRAW_MAX);
    ck_assert_int_eq(sim_ms_to_ns(nextafter(cap_ms, 0)),
                     (sim_time)llround(nextafter(cap_ms, 0) * 1e6));
    ck_assert_int_eq(sim_ms_to_ns(cap_ms * 2), SIM_DRAW_MAX);
    ck_assert_int_eq(sim_ms_to_ns(90000.0 * 86400e3), SIM_DRAW_MAX); /* 90,000 days */
    ck_assert_int_eq(sim_ms_to_ns(1e300), SIM_DRAW_MAX);
    ck_assert_int_eq(sim_ms_to_ns(DBL_MAX), SIM_DRAW_MAX);
    ck_assert_int_eq(sim_ms_to_ns(INFINITY), SIM_DRAW_MAX);
    ck_assert(SIM_DRAW_MAX > SIM_DAY(400));
    ck_assert(SIM_DAY(400) + 8 * SIM_DRAW_MAX < SIM_TIME_MAX / 2);

    /* Drawn and scheduled: every event runs, none in the past. */
    sim *s = sim_new(1);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 3);
    sim_dist d = {SIM_DIST_PARETO, 1.0, 0.05, 1.0, INFINITY};
    for (int i = 0; i < 100000; i++) {
        sim_time t = sim_now(s) + sim_dist_sample_ns(&d, r) + sim_dist_sample_ns(&d, r);
        ck_assert(t >= sim_now(s));
        sim_at(s, t, noop_event, NULL);
    }
    sim_run_until(s, SIM_TIME_MAX);
    ck_assert_int_eq(sim_pending(s), 0);
    gsl_rng_free(r);
    sim_free(s);
}
END_TEST

/* ---- many cancellations: the kernel rebuilds its heap without them ---------------- */

/* One event of the order tests: its due time and its place in scheduling order. */
typedef struct ord_ev {
    sim_time t;
    uint64_t order;
} ord_ev;

/* What an order test has seen run. */
typedef struct ord_seen {
    size_t ran;
    sim_time last_t;
    uint64_t last_order;
} ord_seen;

/* Events must run at their time, in strictly increasing (time, scheduling order): with
 * every event run once, that is the kernel's whole ordering contract. */
static void check_order(sim *s, const ord_ev *e, ord_seen *so_far)
{
    CHECK(sim_now(s) == e->t, "clock %" PRId64 " at an event due %" PRId64, sim_now(s), e->t);
    CHECK(so_far->ran == 0 || e->t > so_far->last_t ||
              (e->t == so_far->last_t && e->order > so_far->last_order),
          "(%" PRId64 ", %" PRIu64 ") ran after (%" PRId64 ", %" PRIu64 ")", e->t, e->order,
          so_far->last_t, so_far->last_order);
    so_far->last_t = e->t;
    so_far->last_order = e->order;
    so_far->ran++;
}

static struct {
    ord_ev ev[2000];
    bool cancelled[2000];
    ord_seen seen;
} pg;

static void purge_cb(sim *s, void *ctx)
{
    const ord_ev *e = ctx;
    size_t i = (size_t)(e - pg.ev);
    CHECK(!pg.cancelled[i], "cancelled event %zu ran", i);
    check_order(s, e, &pg.seen);
}

/* Cancel most of 2,000 events (far more tombstones than live entries, so the heap is
 * rebuilt several times, also between runs): exactly the others run, in order. */
START_TEST(test_cancel_most)
{
    memset(&pg, 0, sizeof pg);
    sim *s = sim_new(3);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 42);
    sim_event_id id[2000];
    for (size_t i = 0; i < 2000; i++) {
        pg.ev[i].t = (sim_time)gsl_rng_uniform_int(r, 500); /* many ties */
        pg.ev[i].order = i;
        id[i] = sim_at(s, pg.ev[i].t, purge_cb, &pg.ev[i]);
    }
    size_t live = 2000;
    for (size_t i = 0; i < 2000; i++) {
        bool may = i <= 1000 || pg.ev[i].t > 100; /* not run by the run in between */
        if (may && gsl_rng_uniform(r) < 0.85) {
            sim_cancel(s, id[i]);
            pg.cancelled[i] = true;
            live--;
            ck_assert_uint_eq(sim_pending(s), live);
        }
        if (i == 1000) { /* a run in between: the rebuilt heap keeps its order */
            sim_run_until(s, 100);
            live -= pg.seen.ran;
            ck_assert_uint_eq(sim_pending(s), live);
        }
    }
    sim_run_until(s, SIM_TIME_MAX);
    ck_assert_uint_eq(sim_pending(s), 0);
    size_t expect = 0;
    for (size_t i = 0; i < 2000; i++)
        expect += !pg.cancelled[i];
    ck_assert_uint_eq(pg.seen.ran, expect);
    gsl_rng_free(r);
    sim_free(s);
}
END_TEST

/* ---- big heaps: the order holds on both sides of the kernel's switch to 4-ary ------ */

#define BIG_EVENTS 150000 /* more than the 65,536 entries beyond which the heap is 4-ary */

static struct {
    ord_ev *pool;
    size_t used;
    ord_seen seen;
    size_t holds;
    gsl_rng *r;
} big;

static void big_cb(sim *s, void *ctx);

static void big_schedule(sim *s, sim_time t)
{
    CHECK(big.used < 2 * BIG_EVENTS, "pool exhausted");
    ord_ev *e = &big.pool[big.used];
    e->t = t;
    e->order = big.used++;
    sim_at(s, t, big_cb, e);
}

static void big_cb(sim *s, void *ctx)
{
    check_order(s, ctx, &big.seen);
    /* A hold model for a while (the new event takes the vacated root and sifts down
     * through a full-size heap), then a drain (the last entry does). Few distinct
     * times: many ties. */
    if (big.holds < BIG_EVENTS / 2) {
        big.holds++;
        big_schedule(s, sim_now(s) + (sim_time)gsl_rng_uniform_int(big.r, 1000));
    }
}

START_TEST(test_big_heap_order)
{
    memset(&big, 0, sizeof big);
    big.pool = calloc(2 * BIG_EVENTS, sizeof *big.pool);
    big.r = gsl_rng_alloc(gsl_rng_taus2);
    ck_assert(big.pool && big.r);
    gsl_rng_set(big.r, 99);
    sim *s = sim_new(3);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < BIG_EVENTS; i++)
        big_schedule(s, (sim_time)gsl_rng_uniform_int(big.r, 20000));
    ck_assert_uint_eq(sim_pending(s), BIG_EVENTS);
    sim_run_until(s, SIM_TIME_MAX);
    ck_assert_uint_eq(big.seen.ran, big.used);
    ck_assert_uint_eq(sim_pending(s), 0);
    sim_free(s);
    gsl_rng_free(big.r);
    free(big.pool);
}
END_TEST

/* The heap becomes 4-ary when it outgrows 65,536 entries; here that happens while a
 * callback holds the root vacant (each event schedules two until BIG_EVENTS are), and
 * the widened heap is later rebuilt without its tombstones (three quarters of the
 * last 2,000 pending are cancelled): order and cancellations hold throughout. */
static struct {
    ord_ev *pool;
    sim_event_id *id;
    bool *done; /* ran or cancelled */
    size_t used, cancelled;
    ord_seen seen;
    gsl_rng *r;
} wide;

static void wide_cb(sim *s, void *ctx)
{
    ord_ev *e = ctx;
    size_t i = (size_t)(e - wide.pool);
    CHECK(!wide.done[i], "event %zu ran twice or after its cancellation", i);
    wide.done[i] = true;
    check_order(s, e, &wide.seen);
    for (int k = 0; k < 2 && wide.used < BIG_EVENTS; k++) {
        ord_ev *n = &wide.pool[wide.used];
        n->t = sim_now(s) + (sim_time)gsl_rng_uniform_int(wide.r, 1000);
        n->order = wide.used;
        wide.id[wide.used++] = sim_at(s, n->t, wide_cb, n);
    }
    if (wide.used == BIG_EVENTS && wide.cancelled == 0 && sim_pending(s) == 2000) {
        for (size_t j = 0; j < wide.used; j++)
            if (!wide.done[j] && gsl_rng_uniform(wide.r) < 0.75) {
                sim_cancel(s, wide.id[j]);
                wide.done[j] = true;
                wide.cancelled++;
            }
        ck_assert_uint_eq(sim_pending(s), 2000 - wide.cancelled);
    }
}

START_TEST(test_heap_widens_in_callback)
{
    memset(&wide, 0, sizeof wide);
    wide.pool = calloc(BIG_EVENTS, sizeof *wide.pool);
    wide.id = calloc(BIG_EVENTS, sizeof *wide.id);
    wide.done = calloc(BIG_EVENTS, sizeof *wide.done);
    wide.r = gsl_rng_alloc(gsl_rng_taus2);
    ck_assert(wide.pool && wide.id && wide.done && wide.r);
    gsl_rng_set(wide.r, 7);
    sim *s = sim_new(3);
    ck_assert_ptr_nonnull(s);
    wide.id[0] = sim_at(s, 0, wide_cb, &wide.pool[0]);
    wide.used = 1;
    sim_run_until(s, SIM_TIME_MAX);
    ck_assert_uint_eq(wide.used, BIG_EVENTS);
    ck_assert_uint_gt(wide.cancelled, 1000);
    ck_assert_uint_eq(wide.seen.ran + wide.cancelled, BIG_EVENTS);
    ck_assert_uint_eq(sim_pending(s), 0);
    sim_free(s);
    gsl_rng_free(wide.r);
    free(wide.pool);
    free(wide.id);
    free(wide.done);
}
END_TEST

/* A table grows to what is needed, or to double when that is more, keeps what it held
 * and zeroes the rest; a need it meets changes nothing. */
START_TEST(test_grow_zeroed)
{
    size_t n = 0;
    int *a = sim_grow_zeroed(NULL, &n, 3, sizeof *a);
    ck_assert_uint_eq(n, 3);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(a[i], 0);
    a[0] = 7;
    a[2] = 9;
    int *same = sim_grow_zeroed(a, &n, 3, sizeof *a);
    ck_assert_ptr_eq(same, a);
    ck_assert_uint_eq(n, 3);
    a = sim_grow_zeroed(a, &n, 4, sizeof *a); /* doubles: 6 */
    ck_assert_uint_eq(n, 6);
    ck_assert_int_eq(a[0], 7);
    ck_assert_int_eq(a[2], 9);
    for (size_t i = 3; i < n; i++)
        ck_assert_int_eq(a[i], 0);
    a = sim_grow_zeroed(a, &n, 100, sizeof *a); /* more than double: exactly what is needed */
    ck_assert_uint_eq(n, 100);
    ck_assert_int_eq(a[2], 9);
    for (size_t i = 6; i < n; i++)
        ck_assert_int_eq(a[i], 0);
    free(a);
}
END_TEST

static Suite *kernel_suite(void)
{
    Suite *s = suite_create("sim_kernel");

    TCase *core = tcase_create("core");
    tcase_add_test(core, test_order_time_then_fifo);
    tcase_add_test(core, test_fifo_many_ties);
    tcase_add_test(core, test_now_from_callback);
    tcase_add_test(core, test_cancel_head);
    tcase_add_test(core, test_cancel_in_callback);
    tcase_add_test(core, test_cancel_most);
    tcase_add_test(core, test_ms_to_ns_is_llround);
    tcase_add_test(core, test_ids_unique);
    tcase_add_test(core, test_run_until_clock);
    tcase_add_test(core, test_stop);
    tcase_add_test(core, test_pending_counts);
    tcase_add_test(core, test_mix_and_hash_vectors);
    tcase_add_test(core, test_seed_derive);
    tcase_add_test(core, test_rng_same_name);
    tcase_add_test(core, test_rng_distinct_seeds);
    tcase_add_test(core, test_rng_independent_of_others);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_after_saturates);
    tcase_add_test(limits, test_ms_to_ns_saturates);
    tcase_add_test(limits, test_free_pending);
    tcase_add_test(limits, test_stress_against_reference);
    tcase_add_test(limits, test_big_heap_order);
    tcase_add_test(limits, test_heap_widens_in_callback);
    tcase_add_test(limits, test_grow_zeroed);
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    tcase_add_test_raise_signal(errors, test_schedule_in_past, SIGABRT);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(kernel_suite());
}
