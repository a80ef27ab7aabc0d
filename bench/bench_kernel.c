/* bench_kernel.c - the hold model, the classic benchmark of a future-event list: with
 * N events pending, repeatedly take the earliest and schedule a successor at now plus
 * an exponential increment, so the queue size stays N.
 *
 * Two variants run side by side on identical increments: (a) the kdsim kernel through
 * its real path (sim_at, sim_run_until, a callback that reschedules itself) and (b) a
 * bare binary heap of (time, seq) pairs with no callbacks, the floor any queue of this
 * kind can reach. Both must pop the same sequence of events, which the bench checks by
 * comparing the time of the last event. Usage: bench_kernel [holds] (default 2000000).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim.h"
#include "sim_mem.h"

#define REPEATS 5
#define MEAN_INCREMENT_NS 1e6 /* 1 ms: ties are rare, as between independent sources */

/* ---- (a) the kernel --------------------------------------------------------------- */

typedef struct hold_state {
    const sim_time *inc; /* borrowed: increments for the holds */
    size_t next;         /* next increment to use */
    size_t left;         /* holds still to do */
} hold_state;

static void hold_cb(sim *s, void *ctx)
{
    hold_state *st = ctx;
    sim_at(s, sim_now(s) + st->inc[st->next++], hold_cb, st);
    if (--st->left == 0)
        sim_stop(s);
}

/* Returns the seconds taken by m holds; *last is the time of the last event run. */
static double run_kernel(const sim_time *inc, size_t n, size_t m, sim_time *last)
{
    sim *s = sim_new(1);
    if (!s) {
        fprintf(stderr, "bench_kernel: out of memory\n");
        exit(1);
    }
    hold_state st = {inc + n, 0, m};
    for (size_t i = 0; i < n; i++)
        sim_at(s, inc[i], hold_cb, &st);
    double t0 = sim_wall_s();
    uint64_t ran = sim_run_until(s, SIM_TIME_MAX);
    double t1 = sim_wall_s();
    if (ran != m || sim_pending(s) != n) {
        fprintf(stderr, "bench_kernel: kernel ran %" PRIu64 " events, expected %zu\n", ran, m);
        exit(1);
    }
    *last = sim_now(s);
    sim_free(s);
    return t1 - t0;
}

/* ---- (b) a bare binary heap ------------------------------------------------------- */

typedef struct bare_entry {
    sim_time t;
    uint64_t seq;
} bare_entry;

static inline int bare_before(const bare_entry *a, const bare_entry *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void bare_push(bare_entry *h, size_t *n, bare_entry e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bare_before(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static bare_entry bare_pop(bare_entry *h, size_t *n)
{
    bare_entry top = h[0];
    bare_entry e = h[--(*n)];
    size_t i = 0, len = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && bare_before(&h[c + 1], &h[c]))
            c++;
        if (!bare_before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    if (len > 0)
        h[i] = e;
    return top;
}

static double run_bare(const sim_time *inc, size_t n, size_t m, sim_time *last)
{
    bare_entry *h = malloc((n + 1) * sizeof *h);
    if (!h) {
        fprintf(stderr, "bench_kernel: out of memory\n");
        exit(1);
    }
    size_t len = 0;
    uint64_t seq = 0;
    for (size_t i = 0; i < n; i++)
        bare_push(h, &len, (bare_entry){inc[i], seq++});
    const sim_time *hold_inc = inc + n;
    sim_time now = 0;
    double t0 = sim_wall_s();
    for (size_t k = 0; k < m; k++) {
        now = bare_pop(h, &len).t;
        bare_push(h, &len, (bare_entry){now + hold_inc[k], seq++});
    }
    double t1 = sim_wall_s();
    *last = now;
    free(h);
    return t1 - t0;
}

/* ---- driver ----------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    size_t m = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 2000000;
    static const size_t sizes[] = {100, 10000, 1000000};
    if (m == 0) {
        fprintf(stderr, "usage: bench_kernel [holds > 0]\n");
        return 2;
    }

    printf("hold model: %zu holds per measurement, exponential increments (mean %.0f ns),\n"
           "median of %d interleaved runs; ratio = kernel time / bare-heap time\n\n",
           m, MEAN_INCREMENT_NS, REPEATS);
    printf("%10s  %14s  %14s  %12s  %12s  %6s\n", "N pending", "kernel Mev/s", "bare Mev/s",
           "kernel ns/op", "bare ns/op", "ratio");

    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 12345);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        /* Both variants consume the same pre-drawn increments: the first n fill the
         * queue, the next m feed the holds. */
        sim_time *inc = malloc((n + m) * sizeof *inc);
        if (!inc) {
            fprintf(stderr, "bench_kernel: out of memory\n");
            return 1;
        }
        for (size_t i = 0; i < n + m; i++)
            inc[i] = (sim_time)llround(gsl_ran_exponential(r, MEAN_INCREMENT_NS));

        double tk[REPEATS], tb[REPEATS];
        for (int rep = 0; rep < REPEATS; rep++) {
            sim_time last_k, last_b;
            tk[rep] = run_kernel(inc, n, m, &last_k);
            tb[rep] = run_bare(inc, n, m, &last_b);
            if (last_k != last_b) {
                fprintf(stderr,
                        "bench_kernel: N=%zu: the variants disagree (last event at %" PRId64
                        " vs %" PRId64 " ns)\n",
                        n, last_k, last_b);
                return 1;
            }
        }
        double k = median(tk, REPEATS), b = median(tb, REPEATS);
        printf("%10zu  %14.2f  %14.2f  %12.1f  %12.1f  %6.2f\n", n, (double)m / k / 1e6,
               (double)m / b / 1e6, k / (double)m * 1e9, b / (double)m * 1e9, k / b);
        fflush(stdout);
        free(inc);
    }
    gsl_rng_free(r);
    return 0;
}
