/* check_kds_log.c - tests of the run-based shard log: slicing runs under record and
 * byte limits with prorated bytes that sum exactly, trimming whole runs and part of a
 * compacted run, seeking by time and position, cursors that fall below the head,
 * compaction behind attached cursors, stale cursor hints, and the ring buffer growing
 * while wrapped and shrinking as it empties.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_log.h"
#include "testutil.h"

/* Slices seen by one take, collected by collect(). */
typedef struct slices {
    kds_slice s[64];
    size_t n;
} slices;

static void collect(void *ctx, const kds_slice *sl)
{
    slices *v = ctx;
    ck_assert_uint_lt(v->n, 64);
    v->s[v->n++] = *sl;
}

/* Up to 4096 slices, for the random test. */
typedef struct slices1 {
    kds_slice s[4096];
    size_t n;
} slices1;

static void collect1(void *ctx, const kds_slice *sl)
{
    slices1 *v = ctx;
    ck_assert_uint_lt(v->n, 4096);
    v->s[v->n++] = *sl;
}

/* Three runs: A = positions 0-2 at t=10 (300 B), B = 3-4 at t=20 (250 B),
 * C = 5-9 at t=30 (1000 B, 200 B each). */
static void three_runs(kds_log *l)
{
    kds_log_init(l, 0);
    ck_assert_int_eq(kds_log_append(l, SIM_S(10), 3, 300, 0, 0, 0), 0);
    ck_assert_int_eq(kds_log_append(l, SIM_S(20), 2, 250, 1, 0, 1), 0);
    ck_assert_int_eq(kds_log_append(l, SIM_S(30), 5, 1000, 0, 0, 2), 0);
}

/* A log of `n` runs of `count` records and `bytes` B, one per second from t = 0,
 * each with one duplicate. */
static void runs_per_second(kds_log *l, sim_time span, int n, uint32_t count, uint64_t bytes)
{
    kds_log_init(l, span);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(kds_log_append(l, SIM_S(i), count, bytes, 1, 0, 0), 0);
}

/* An empty log compacting into cells of `span`, read by `rd` from its head. */
static void log_with_reader(kds_log *l, sim_time span, kds_cursor *rd)
{
    kds_log_init(l, span);
    kds_log_seek_head(l, rd);
    ck_assert_int_eq(kds_log_attach(l, rd), 0);
}

/* A small deterministic generator for the tests' random logs. */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Compact a log nothing holds back any more: it must become one run of `count` records
 * and `bytes` bytes. Frees the log. */
static void compact_to_one(kds_log *l, uint32_t count, uint64_t bytes)
{
    kds_log_compact(l);
    ck_assert_uint_eq(kds_log_runs(l), 1);
    ck_assert_uint_eq(l->runs[l->head].count, count);
    ck_assert_uint_eq(l->bytes, bytes);
    kds_log_fini(l);
}

/* ---- append and take ------------------------------------------------------------------ */

START_TEST(test_append_counts)
{
    kds_log l;
    three_runs(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 3);
    ck_assert_uint_eq(l.head_pos, 0);
    ck_assert_uint_eq(l.end_pos, 10);
    ck_assert_uint_eq(l.bytes, 1550);
    ck_assert_int_eq(kds_log_time_at(&l, 0), SIM_S(10));
    ck_assert_int_eq(kds_log_time_at(&l, 4), SIM_S(20));
    ck_assert_int_eq(kds_log_time_at(&l, 9), SIM_S(30));
    ck_assert_int_eq(kds_log_time_at(&l, 10), -1);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    ck_assert_uint_eq(kds_log_unread(&l, &c), 10);
    kds_log_fini(&l);
}
END_TEST

START_TEST(test_take_max_records_across_runs)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    slices v = {.n = 0};
    kds_take tk;
    kds_log_take(&l, &c, 4, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(tk.records, 4);
    ck_assert_uint_eq(tk.bytes, 425);
    ck_assert_uint_eq(tk.expired, 0);
    ck_assert_int_eq(tk.t_last, SIM_S(20));
    ck_assert_uint_eq(c.pos, 4);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_uint_eq(v.s[0].first, 0);
    ck_assert_uint_eq(v.s[0].count, 3);
    ck_assert_uint_eq(v.s[0].bytes, 300);
    ck_assert_uint_eq(v.s[0].src, 0);
    ck_assert_int_eq(v.s[0].t_first, SIM_S(10));
    ck_assert_uint_eq(v.s[1].first, 3);
    ck_assert_uint_eq(v.s[1].count, 1);
    ck_assert_uint_eq(v.s[1].bytes, 125);
    ck_assert_uint_eq(v.s[1].src, 1);
    ck_assert_uint_eq(kds_log_unread(&l, &c), 6);

    /* The rest of B, then C up to 400 B in all: one 200 B record of C fits. */
    v.n = 0;
    kds_log_take(&l, &c, 100, 400, collect, &v, &tk);
    ck_assert_uint_eq(tk.records, 2);
    ck_assert_uint_eq(tk.bytes, 325);
    ck_assert_uint_eq(v.n, 2);
    ck_assert_uint_eq(v.s[0].first, 4);
    ck_assert_uint_eq(v.s[0].bytes, 125);
    ck_assert_uint_eq(v.s[1].first, 5);
    ck_assert_uint_eq(v.s[1].count, 1);
    ck_assert_uint_eq(v.s[1].bytes, 200);
    ck_assert_uint_eq(c.pos, 6);

    /* Everything else. */
    kds_log_take(&l, &c, 100, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 4);
    ck_assert_uint_eq(tk.bytes, 800);
    ck_assert_int_eq(tk.t_last, SIM_S(30));
    ck_assert_uint_eq(c.pos, 10);

    /* At the end: nothing, t_last = -1. */
    kds_log_take(&l, &c, 100, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 0);
    ck_assert_uint_eq(tk.bytes, 0);
    ck_assert_int_eq(tk.t_last, -1);
    ck_assert_uint_eq(kds_log_unread(&l, &c), 0);
    kds_log_fini(&l);
}
END_TEST

/* A record larger than the byte limit is still returned, alone. */
START_TEST(test_take_one_record_over_max_bytes)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    kds_log_seek_pos(&l, &c, 5);
    kds_take tk;
    kds_log_take(&l, &c, 100, 10, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 1);
    ck_assert_uint_eq(tk.bytes, 200);
    ck_assert_uint_eq(c.pos, 6);
    /* max_records 0 takes nothing. */
    kds_log_take(&l, &c, 0, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 0);
    ck_assert_uint_eq(c.pos, 6);
    kds_log_fini(&l);
}
END_TEST

/* The byte limit stops the take at a run boundary when the limit is exactly met. */
START_TEST(test_take_max_bytes_exact)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    kds_take tk;
    kds_log_take(&l, &c, 100, 550, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 5);
    ck_assert_uint_eq(tk.bytes, 550);
    ck_assert_uint_eq(c.pos, 5);
    kds_log_fini(&l);
}
END_TEST

/* Taking a run one record at a time: the prorated bytes and duplicates add up to the
 * run's totals exactly (floor differences, no rounding loss). */
START_TEST(test_prorate_sums_exactly)
{
    kds_log l;
    kds_log_init(&l, 0);
    ck_assert_int_eq(kds_log_append(&l, SIM_S(1), 7, 1000, 3, 0, 0), 0);
    ck_assert_int_eq(kds_log_append(&l, SIM_S(2), 3, 100, 0, 0, 0), 0);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    uint64_t bytes = 0, dups = 0, recs = 0;
    uint64_t per[10];
    for (int i = 0; i < 10; i++) {
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, 1, UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(tk.records, 1);
        ck_assert_uint_eq(v.n, 1);
        per[i] = v.s[0].bytes;
        bytes += v.s[0].bytes;
        dups += v.s[0].dups;
        recs += tk.records;
    }
    ck_assert_uint_eq(recs, 10);
    ck_assert_uint_eq(bytes, 1100);
    ck_assert_uint_eq(dups, 3);
    /* 1000 B over 7 records: 142 or 143 each; 100 over 3: 33, 33, 34. */
    for (int i = 0; i < 7; i++)
        ck_assert(per[i] == 142 || per[i] == 143);
    ck_assert_uint_eq(per[7], 33);
    ck_assert_uint_eq(per[8], 33);
    ck_assert_uint_eq(per[9], 34);

    /* Uneven pieces (2 + 4 + 1) of the same run sum exactly too. */
    kds_log_seek_head(&l, &c);
    uint64_t b = 0;
    uint32_t sizes[3] = {2, 4, 1};
    for (int i = 0; i < 3; i++) {
        kds_take tk;
        kds_log_take(&l, &c, sizes[i], UINT64_MAX, NULL, NULL, &tk);
        ck_assert_uint_eq(tk.records, sizes[i]);
        b += tk.bytes;
    }
    ck_assert_uint_eq(b, 1000);
    kds_log_fini(&l);
}
END_TEST

/* Marked records come first in a run: a slice of the head of the run gets them. */
START_TEST(test_marks_first)
{
    kds_log l;
    kds_log_init(&l, 0);
    ck_assert_int_eq(kds_log_append(&l, SIM_S(1), 10, 1000, 0, 3, 0), 0);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    uint32_t got[4] = {0};
    uint32_t want[4] = {2, 1, 0, 0};
    uint64_t sizes[4] = {2, 2, 2, 4};
    for (int i = 0; i < 4; i++) {
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, sizes[i], UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(v.n, 1);
        got[i] = v.s[0].marks;
        ck_assert_uint_eq(got[i], want[i]);
    }
    kds_log_fini(&l);
}
END_TEST

/* kds_prorate: floor(v num / den) exactly, on both sides of its 64-bit fast path. */
START_TEST(test_prorate)
{
    ck_assert_uint_eq(kds_prorate(1000, 1, 7), 142);
    ck_assert_uint_eq(kds_prorate(1000, 7, 7), 1000);
    ck_assert_uint_eq(kds_prorate(0, 5, 3), 0);
    ck_assert_uint_eq(kds_prorate(UINT32_MAX, UINT32_MAX, 1), UINT64_C(18446744065119617025));
    /* Beyond 32 bits the product needs 128 bits. */
    ck_assert_uint_eq(kds_prorate(UINT64_MAX, UINT64_MAX, UINT64_MAX), UINT64_MAX);
    ck_assert_uint_eq(kds_prorate(UINT64_C(1) << 40, 3, 7), ((UINT64_C(1) << 40) * 3) / 7);
    ck_assert_uint_eq(kds_prorate(UINT64_C(10) << 40, UINT64_C(3) << 33, UINT64_C(1) << 50),
                      UINT64_C(30) << 23);
    ck_assert_uint_eq(kds_prorate(UINT64_MAX, 2, 3), UINT64_C(12297829382473034410));
}
END_TEST

/* ---- trim ----------------------------------------------------------------------------- */

START_TEST(test_trim_whole_runs)
{
    kds_log l;
    three_runs(&l);
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(9)), 0);
    ck_assert_uint_eq(l.head_pos, 0);
    /* Cutoff inclusive: runs written at or before 20 s go. */
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(20)), 5);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    ck_assert_uint_eq(l.head_pos, 5);
    ck_assert_uint_eq(l.end_pos, 10);
    ck_assert_uint_eq(l.bytes, 1000);
    ck_assert_int_eq(kds_log_time_at(&l, 4), -1);
    ck_assert_int_eq(kds_log_time_at(&l, 5), SIM_S(30));
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(20)), 0); /* idempotent */
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(30)), 5);
    ck_assert_uint_eq(kds_log_runs(&l), 0);
    ck_assert_uint_eq(l.head_pos, 10);
    ck_assert_uint_eq(l.bytes, 0);
    /* An emptied log keeps counting positions from where it was. */
    ck_assert_int_eq(kds_log_append(&l, SIM_S(40), 2, 20, 0, 0, 0), 0);
    ck_assert_uint_eq(l.head_pos, 10);
    ck_assert_uint_eq(l.end_pos, 12);
    kds_log_fini(&l);
}
END_TEST

/* Ten runs of 10 records (1000 B) at 0..9 s compacted into one run spanning 0..9 s:
 * trimming at 4.5 s drops the 50 records spread over [0, 4.5 s] and their bytes. */
START_TEST(test_trim_partial_compacted_run)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 10, 10, 1000);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    ck_assert_uint_eq(l.runs[l.head].count, 100);
    ck_assert_int_eq(l.runs[l.head].t_last, SIM_S(9));

    ck_assert_uint_eq(kds_log_bytes_written_before(&l, SIM_MS(4500), NULL), 5000);
    ck_assert_uint_eq(kds_log_trim(&l, SIM_MS(4500)), 50);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    ck_assert_uint_eq(l.head_pos, 50);
    ck_assert_uint_eq(l.end_pos, 100);
    ck_assert_uint_eq(l.bytes, 5000);
    const kds_run *r = &l.runs[l.head];
    ck_assert_uint_eq(r->first, 50);
    ck_assert_uint_eq(r->count, 50);
    ck_assert_uint_eq(r->bytes, 5000);
    ck_assert_uint_eq(r->dups, 5); /* 10 dups, half of them trimmed */
    ck_assert_int_gt(r->t_first, SIM_MS(4500));
    ck_assert_int_eq(r->t_last, SIM_S(9));
    /* Every retained record is newer than the cutoff. */
    ck_assert_int_gt(kds_log_time_at(&l, 50), SIM_MS(4500));

    /* Reading what is left returns exactly the retained counts. */
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    slices v = {.n = 0};
    kds_take tk;
    kds_log_take(&l, &c, UINT64_MAX, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(tk.records, 50);
    ck_assert_uint_eq(tk.bytes, 5000);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.s[0].dups, 5);
    ck_assert_int_eq(tk.t_last, SIM_S(9));

    /* A cutoff just before the last record leaves exactly one. */
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(9) - 1), 49);
    ck_assert_uint_eq(l.head_pos, 99);
    ck_assert_uint_eq(l.bytes, 100);
    kds_log_fini(&l);
}
END_TEST

/* Regression (a bug found by this test and fixed):
 * kds_log_trim must remove every record written at or before the cutoff, but in a
 * compacted run it counts the expired records as floor((cutoff - t0) (count - 1) /
 * (t1 - t0)) + 1, which misses a record whose spread write time (run_time, as
 * kds_log_time_at reports it) is exactly the cutoff whenever (t1 - t0) i / (count - 1)
 * is not an integer. Here record 1 of a 100-record run over 0..9 s is written at
 * floor(9e9 / 99) = 90,909,090 ns; trimming at that instant leaves it in the log.
 * kds_log_bytes_written_before has the same off-by-one. */
START_TEST(test_trim_at_a_record_time_removes_it)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 10, 10, 1000);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    sim_time t1 = kds_log_time_at(&l, 1);
    ck_assert_int_eq(t1, SIM_S(9) / 99);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, t1, NULL), 200);
    ck_assert_uint_eq(kds_log_trim(&l, t1), 2);
    ck_assert_int_gt(kds_log_time_at(&l, l.head_pos), t1);
    /* The property at many cutoffs: everything retained is newer than the cutoff. */
    kds_log_fini(&l);
    for (uint64_t i = 1; i < 99; i += 7) {
        runs_per_second(&l, SIM_MIN(1), 10, 10, 1000);
        kds_log_compact(&l);
        sim_time t = kds_log_time_at(&l, i);
        kds_log_trim(&l, t);
        ck_assert_uint_eq(l.head_pos, i + 1);
        kds_log_fini(&l);
    }
}
END_TEST

/* ---- seek ----------------------------------------------------------------------------- */

START_TEST(test_seek_time)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    struct {
        sim_time t;
        uint64_t pos;
    } cases[] = {{0, 0},         {SIM_S(10), 0},      {SIM_S(10) + 1, 3},
                 {SIM_S(15), 3}, {SIM_S(20), 3},      {SIM_S(25), 5},
                 {SIM_S(30), 5}, {SIM_S(30) + 1, 10}, {SIM_S(999), 10}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kds_log_seek_time(&l, &c, cases[i].t);
        ck_assert_msg(c.pos == cases[i].pos, "t=%lld: pos %llu, want %llu", (long long)cases[i].t,
                      (unsigned long long)c.pos, (unsigned long long)cases[i].pos);
    }
    kds_log_fini(&l);
}
END_TEST

/* Within a compacted run: the first record written at or after t, for many t. */
START_TEST(test_seek_time_in_compacted_run)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 10, 10, 1000);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    kds_cursor c;
    for (sim_time t = 1; t < SIM_S(9); t += SIM_MS(37) + 11) {
        kds_log_seek_time(&l, &c, t);
        ck_assert_uint_gt(c.pos, 0);
        ck_assert_uint_lt(c.pos, 100);
        ck_assert_int_ge(kds_log_time_at(&l, c.pos), t);
        ck_assert_int_lt(kds_log_time_at(&l, c.pos - 1), t);
        /* The hint is usable: a take starts at pos. */
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, 1, UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(v.s[0].first, c.pos - 1);
    }
    kds_log_fini(&l);
}
END_TEST

START_TEST(test_seek_pos_clamped)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    kds_log_seek_pos(&l, &c, 4);
    ck_assert_uint_eq(c.pos, 4);
    kds_log_seek_pos(&l, &c, 1000);
    ck_assert_uint_eq(c.pos, 10);
    kds_log_trim(&l, SIM_S(10));
    kds_log_seek_pos(&l, &c, 0);
    ck_assert_uint_eq(c.pos, 3);
    kds_log_seek_head(&l, &c);
    ck_assert_uint_eq(c.pos, 3);
    kds_log_seek_end(&l, &c);
    ck_assert_uint_eq(c.pos, 10);
    /* A take right after a seek uses the hint it set. */
    kds_log_seek_pos(&l, &c, 6);
    kds_take tk;
    slices v = {.n = 0};
    kds_log_take(&l, &c, 2, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(v.s[0].first, 6);
    ck_assert_uint_eq(tk.bytes, 400);
    kds_log_fini(&l);
}
END_TEST

/* ---- expiry under a cursor ------------------------------------------------------------ */

START_TEST(test_cursor_below_head_counts_expired)
{
    kds_log l;
    three_runs(&l);
    kds_cursor c;
    kds_log_seek_pos(&l, &c, 1); /* read one record of A */
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(20)), 5);
    ck_assert_uint_eq(kds_log_unread(&l, &c), 5); /* only retained ones */
    slices v = {.n = 0};
    kds_take tk;
    kds_log_take(&l, &c, 2, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(tk.expired, 4);
    ck_assert_uint_eq(tk.records, 2);
    ck_assert_uint_eq(v.s[0].first, 5);
    ck_assert_uint_eq(c.pos, 7);
    /* Expiry is reported once. */
    kds_log_take(&l, &c, 100, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.expired, 0);
    ck_assert_uint_eq(tk.records, 3);

    /* Everything gone: a cursor at 0 is told 10 expired, gets nothing. */
    kds_log_trim(&l, SIM_S(30));
    kds_log_seek_pos(&l, &c, 0);
    ck_assert_uint_eq(c.pos, 10); /* seek clamps */
    c.pos = 0;
    c.hint = 0;
    kds_log_take(&l, &c, 100, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.expired, 10);
    ck_assert_uint_eq(tk.records, 0);
    ck_assert_uint_eq(c.pos, 10);
    kds_log_fini(&l);
}
END_TEST

/* ---- compaction ----------------------------------------------------------------------- */

/* Twenty runs (5 records, 500 B, 1 duplicate each) at 0..19 s; a reader at position 50
 * (the start of run 10). Compaction merges runs 0-9, which the reader has passed, into
 * one, keeps counts, bytes and duplicates, and leaves runs 10-19 as they were. */
START_TEST(test_compact_behind_cursor)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 20, 5, 500);
    kds_cursor rd;
    kds_log_seek_pos(&l, &rd, 50);
    ck_assert_int_eq(kds_log_attach(&l, &rd), 0);
    kds_run before[20];
    for (size_t i = 0; i < 20; i++)
        before[i] = l.runs[(l.head + i) & (l.cap - 1)];
    uint64_t bytes = l.bytes, head = l.head_pos, end = l.end_pos;

    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 11);
    ck_assert_uint_eq(l.bytes, bytes);
    ck_assert_uint_eq(l.head_pos, head);
    ck_assert_uint_eq(l.end_pos, end);
    const kds_run *m = &l.runs[l.head];
    ck_assert_uint_eq(m->first, 0);
    ck_assert_uint_eq(m->count, 50);
    ck_assert_uint_eq(m->bytes, 5000);
    ck_assert_uint_eq(m->dups, 10);
    ck_assert_int_eq(m->t_first, 0);
    ck_assert_int_eq(m->t_last, SIM_S(9));
    for (size_t i = 1; i < 11; i++) {
        const kds_run *r = &l.runs[(l.head + i) & (l.cap - 1)];
        ck_assert(memcmp(r, &before[9 + i], sizeof *r) == 0);
    }

    /* A new reader from the head sees every record, byte and duplicate. */
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    kds_take tk;
    uint64_t dups = 0;
    slices v = {.n = 0};
    kds_log_take(&l, &c, UINT64_MAX, UINT64_MAX, collect, &v, &tk);
    for (size_t i = 0; i < v.n; i++)
        dups += v.s[i].dups;
    ck_assert_uint_eq(tk.records, 100);
    ck_assert_uint_eq(tk.bytes, 10000);
    ck_assert_uint_eq(dups, 20);
    ck_assert_uint_eq(v.n, 11);

    /* Once the reader has passed everything and detached, all of it can merge. */
    kds_log_detach(&l, &rd);
    compact_to_one(&l, 100, 10000);
}
END_TEST

/* In steady state the ring holds at most 8/3 of the runs compaction keeps: a run a
 * second, merged into 10-second spans once a reader that takes everything has passed
 * them, 4 hours retained (about 1,310 spans), for 8 hours. Compacting only when the log
 * has doubled since the last compaction would let the power-of-two ring reach 4096, over
 * 3 times what it keeps. */
START_TEST(test_ring_bounded_by_runs_kept)
{
    kds_log l;
    kds_cursor rd;
    log_with_reader(&l, SIM_S(10), &rd);
    size_t cap_max = 0;
    for (int i = 0; i < 8 * 3600; i++) {
        ck_assert_int_eq(kds_log_append(&l, SIM_S(i), 2, 200, 0, 0, 0), 0);
        kds_take tk;
        kds_log_take(&l, &rd, UINT64_MAX, UINT64_MAX, NULL, NULL, &tk);
        kds_log_trim(&l, SIM_S(i) - SIM_S(4 * 3600));
        if (i >= 5 * 3600 && l.cap > cap_max)
            cap_max = l.cap;
    }
    kds_log_compact(&l);
    size_t kept = kds_log_runs(&l);
    ck_assert_uint_ge(kept, 1200);
    ck_assert_msg(3 * cap_max <= 8 * kept, "a ring of %zu runs for %zu kept", cap_max, kept);
    kds_log_fini(&l);
}
END_TEST

/* A floor (a checkpoint a KCL lease's next owner reads from) stops compaction at its
 * run: twenty runs of 5 records a second, every reader past them, a floor at record 52
 * (in run 10). Runs 0-9 merge into one; runs 10-19 stay as written, so a replay from
 * the floor sees each request's own write time. A moved floor lets the next compaction
 * go on from the merged run; a detached one lets everything merge. */
START_TEST(test_compact_stops_at_floor)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 20, 5, 500);
    kds_cursor ckpt = {.pos = 52, .hint = 0};
    ck_assert_int_eq(kds_log_attach_floor(&l, &ckpt), 0);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 11);
    ck_assert_uint_eq(l.runs[l.head].count, 50);
    for (size_t i = 1; i < 11; i++) {
        const kds_run *r = &l.runs[(l.head + i) & (l.cap - 1)];
        ck_assert_uint_eq(r->count, 5);
        ck_assert_int_eq(r->t_first, SIM_S(9 + i));
    }
    ck_assert_int_eq(kds_log_time_at(&l, 52), SIM_S(10));
    ck_assert_int_eq(kds_log_time_at(&l, 99), SIM_S(19));

    ckpt.pos = 75; /* a checkpoint later: runs 10-14 merge into the first */
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 6);
    ck_assert_uint_eq(l.runs[l.head].count, 75);

    kds_log_detach_floor(&l, &ckpt);
    compact_to_one(&l, 100, 10000);
}
END_TEST

/* A floor more than KDS_LOG_FLOOR_RUNS runs behind where compaction would stop (a
 * checkpoint no worker moves on) is passed over: what it could keep is bounded. One
 * exactly that far behind still holds. */
START_TEST(test_floor_far_behind_passed_over)
{
    const int n = KDS_LOG_FLOOR_RUNS + 8; /* one record a second, a run each */
    kds_log far, held;
    kds_cursor c1 = {.pos = 7, .hint = 0}, c2 = {.pos = 8, .hint = 0};
    kds_log_init(&far, SIM_MIN(1));
    kds_log_init(&held, SIM_MIN(1));
    ck_assert_int_eq(kds_log_attach_floor(&far, &c1), 0);
    ck_assert_int_eq(kds_log_attach_floor(&held, &c2), 0);
    for (int i = 0; i < n; i++) { /* compaction runs on append too, with the floors */
        ck_assert_int_eq(kds_log_append(&far, SIM_S(i), 1, 100, 0, 0, 0), 0);
        ck_assert_int_eq(kds_log_append(&held, SIM_S(i), 1, 100, 0, 0, 0), 0);
    }
    kds_log_compact(&far);
    kds_log_compact(&held);
    /* Run 7 is KDS_LOG_FLOOR_RUNS + 1 runs behind the end: minute spans, about n / 60. */
    ck_assert_uint_le(kds_log_runs(&far), 2 + (size_t)n / 60);
    /* Run 8 is exactly KDS_LOG_FLOOR_RUNS behind: runs 0-7 merge, the rest stay. */
    ck_assert_uint_eq(kds_log_runs(&held), 1 + (size_t)KDS_LOG_FLOOR_RUNS);
    ck_assert_uint_eq(far.end_pos, (uint64_t)n);
    ck_assert_uint_eq(held.bytes, 100 * (uint64_t)n);
    kds_log_fini(&far);
    kds_log_fini(&held);
}
END_TEST

/* Runs merge within cells of compact_span of write time, closed on the right (the first
 * also on the left): 3 s gives 0-3, 4-6, 7-9 (a span of 3 s from the run at 4 s would
 * take 7 s, in the next cell). */
START_TEST(test_compact_span_limit)
{
    kds_log l;
    runs_per_second(&l, SIM_S(3), 10, 10, 100);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 3);
    uint32_t counts[3] = {40, 30, 30};
    sim_time t0[3] = {0, SIM_S(4), SIM_S(7)}, t1[3] = {SIM_S(3), SIM_S(6), SIM_S(9)};
    for (size_t i = 0; i < 3; i++) {
        const kds_run *r = &l.runs[(l.head + i) & (l.cap - 1)];
        ck_assert_uint_eq(r->count, counts[i]);
        ck_assert_int_eq(r->t_first, t0[i]);
        ck_assert_int_eq(r->t_last, t1[i]);
    }
    /* compact_span 0 never merges. */
    kds_log z;
    runs_per_second(&z, 0, 10, 10, 100);
    kds_log_compact(&z);
    ck_assert_uint_eq(kds_log_runs(&z), 10);
    kds_log_fini(&z);
    kds_log_fini(&l);
}
END_TEST

/* Trimming to a cutoff on a whole number of spans expires exactly the records it would
 * without compaction, whenever the runs were merged: runs of 1 to 7 records at uneven
 * times (about 2.7 runs a second, none on a minute), merged into one-minute cells by a
 * reader that passed them, then trimmed at each whole minute; a log without compaction
 * trimmed alike must expire the same records and bytes, minute by minute. (Spans of a
 * minute from each merged run's first write time, not cells, would put the records of
 * one minute and the next in one run, and trim them by their spread-out times.) */
START_TEST(test_trim_on_whole_minutes_exact)
{
    kds_log merged, whole;
    kds_cursor rd;
    log_with_reader(&merged, SIM_MIN(1), &rd);
    kds_log_init(&whole, 0);
    uint64_t x = 7;
    sim_time t = 0;
    size_t minute = 0;
    uint64_t expired = 0;
    for (int i = 0; i < 20000; i++) {
        t += SIM_MS(1) * (sim_time)(1 + xorshift(&x) % 739);
        uint32_t count = (uint32_t)(1 + xorshift(&x) % 7);
        ck_assert_int_eq(kds_log_append(&merged, t, count, 100 * count + i % 3, 0, 0, 0), 0);
        ck_assert_int_eq(kds_log_append(&whole, t, count, 100 * count + i % 3, 0, 0, 0), 0);
        kds_log_seek_end(&merged, &rd); /* the reader has passed everything */
        if ((size_t)(t / SIM_MIN(1)) > minute) {
            /* The first record of a new minute: trim as the minute before it began,
             * 10 minutes of retention. */
            minute = (size_t)(t / SIM_MIN(1));
            sim_time cutoff = SIM_MIN((sim_time)minute) - SIM_MIN(10);
            if (cutoff > 0) {
                uint64_t a = kds_log_trim(&merged, cutoff), b = kds_log_trim(&whole, cutoff);
                ck_assert_uint_eq(a, b);
                ck_assert_uint_eq(merged.bytes, whole.bytes);
                ck_assert_uint_eq(merged.head_pos, whole.head_pos);
                ck_assert_uint_eq(kds_log_bytes_written_before(&merged, cutoff + SIM_MIN(3), NULL),
                                  kds_log_bytes_written_before(&whole, cutoff + SIM_MIN(3), NULL));
                expired += a;
            }
        }
    }
    ck_assert_uint_gt(expired, 20000);
    ck_assert_uint_lt(kds_log_runs(&merged), kds_log_runs(&whole) / 4);
    kds_log_fini(&merged);
    kds_log_fini(&whole);
}
END_TEST

/* The retention meter's marks: with a mark, kds_log_bytes_written_before gives what a
 * scan from the head gives, while a reader falls behind and catches up (runs merge
 * behind it, the rest stay whole), retention trims at whole minutes and between them
 * (cutting merged runs), and the times asked fall on whole minutes (where no merged run
 * crosses) or between them (inside merged runs, where a mark cannot stand), now and then
 * earlier than the last. Every record before a mark was written by the time asked. */
START_TEST(test_bytes_before_mark_same_as_scan)
{
    kds_log l;
    kds_cursor rd;
    log_with_reader(&l, SIM_MIN(1), &rd);
    kds_log_mark on_minutes = {0}, anywhere = {0};
    uint64_t x = 11, calls = 0, nonzero = 0;
    size_t merged_runs = 0;
    sim_time t = 0;
    for (int i = 0; i < 60000; i++) {
        t += SIM_MS(1) * (sim_time)(xorshift(&x) % 400); /* 0: two runs at one time */
        uint32_t count = (uint32_t)(1 + xorshift(&x) % 9);
        ck_assert_int_eq(kds_log_append(&l, t, count, 90 * count + (uint64_t)(i % 5), 0, 0, 0),
                         0);
        if ((i / 5000) % 2 == 0 && xorshift(&x) % 60 == 0) { /* stalls every other 5,000 */
            kds_take tk;
            kds_log_take(&l, &rd, xorshift(&x) % 4000, UINT64_MAX, NULL, NULL, &tk);
        }
        if (i == 54999)
            merged_runs = kds_log_runs(&l);
        if (i % 700 == 699) {
            sim_time cutoff = t - SIM_MIN(30);
            if (xorshift(&x) % 2)
                cutoff -= cutoff % SIM_MIN(1);
            if (cutoff > 0)
                kds_log_trim(&l, cutoff);
        }
        if (i % 97 == 96) {
            kds_log_mark *m = xorshift(&x) % 2 ? &on_minutes : &anywhere;
            sim_time q = t - SIM_MIN(10) - SIM_MS(1) * (sim_time)(xorshift(&x) % 60000);
            if (xorshift(&x) % 10 == 0)
                q -= SIM_MIN(5); /* earlier than the last time asked */
            if (m == &on_minutes)
                q -= q % SIM_MIN(1);
            if (q < 0)
                continue;
            uint64_t want = kds_log_bytes_written_before(&l, q, NULL);
            ck_assert_uint_eq(kds_log_bytes_written_before(&l, q, m), want);
            ck_assert_uint_ge(m->pos, l.head_pos);
            if (m->pos > l.head_pos)
                ck_assert_int_le(kds_log_time_at(&l, m->pos - 1), q);
            calls++;
            nonzero += want > 0;
        }
    }
    ck_assert_uint_gt(calls, 500);
    ck_assert_uint_gt(nonzero, 400);
    /* About 9,000 runs are written in the 30 minutes retained: merged to under half
     * after a phase where the reader kept up, most kept whole after it stalled. */
    ck_assert_uint_lt(merged_runs, 4500);
    ck_assert_uint_gt(kds_log_runs(&l), 4500);
    /* Retention empties the log past both marks: nothing is left before any time. */
    kds_log_trim(&l, t);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, t, &on_minutes), 0);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, t, &anywhere), 0);
    kds_log_fini(&l);
}
END_TEST

/* Marked records keep their positions through compaction: ten runs of 5 records at
 * 0..9 s with one marked record, the first of run 7 (position 35). A run holding marks
 * starts a merged run of its own (0-34, then 35-49), so a reader from the head meets
 * the mark at 35, not at 0 where merging it into run 0 would put it. */
START_TEST(test_compact_keeps_marks_in_place)
{
    kds_log l;
    kds_log_init(&l, SIM_MIN(1));
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(kds_log_append(&l, SIM_S(i), 5, 500, 0, i == 7, 0), 0);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 2);
    ck_assert_uint_eq(l.runs[l.head].count, 35);
    ck_assert_uint_eq(l.runs[l.head].marks, 0);
    ck_assert_uint_eq(l.runs[(l.head + 1) & (l.cap - 1)].count, 15);
    ck_assert_uint_eq(l.runs[(l.head + 1) & (l.cap - 1)].marks, 1);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    uint64_t marked_at = UINT64_MAX, marks = 0;
    for (int i = 0; i < 50; i++) {
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, 1, UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(tk.records, 1);
        if (v.s[0].marks) {
            marked_at = v.s[0].first;
            marks += v.s[0].marks;
        }
    }
    ck_assert_uint_eq(marks, 1);
    ck_assert_uint_eq(marked_at, 35);
    kds_log_fini(&l);
}
END_TEST

/* Memory stays bounded with marks: a week-like log of 10,000 runs a second apart with a
 * marked run every 1,000 compacts into the minute-long runs it would have without marks
 * plus at most one more per marked run. */
START_TEST(test_compact_marks_bounded)
{
    kds_log l, ref;
    kds_log_init(&l, SIM_MIN(1));
    kds_log_init(&ref, SIM_MIN(1));
    for (int i = 0; i < 10000; i++) {
        ck_assert_int_eq(kds_log_append(&l, SIM_S(i), 3, 300, 0, i % 1000 == 500, 0), 0);
        ck_assert_int_eq(kds_log_append(&ref, SIM_S(i), 3, 300, 0, 0, 0), 0);
    }
    kds_log_compact(&l);
    kds_log_compact(&ref);
    ck_assert_uint_le(kds_log_runs(&l), kds_log_runs(&ref) + 10);
    ck_assert_uint_le(kds_log_runs(&ref), 10000 / 60 + 1);
    kds_log_fini(&l);
    kds_log_fini(&ref);
}
END_TEST

/* A reader in the middle of a run keeps that run (and the ones after) from merging. */
START_TEST(test_compact_cursor_inside_run)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 6, 5, 500);
    kds_cursor rd;
    kds_log_seek_pos(&l, &rd, 12); /* inside run 2 (10-14) */
    ck_assert_int_eq(kds_log_attach(&l, &rd), 0);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 5); /* 0+1 merged; 2, 3, 4, 5 kept */
    ck_assert_uint_eq(l.runs[l.head].count, 10);
    kds_log_detach(&l, &rd);
    kds_log_fini(&l);
}
END_TEST

/* Cursor hints that compaction made stale are recovered by search: a reader at the
 * start of run 10 and one at run 19, both with hints to their old run indices. */
START_TEST(test_hint_recovery_after_compaction)
{
    kds_log l;
    runs_per_second(&l, SIM_MIN(1), 20, 5, 500);
    kds_cursor a, b;
    kds_log_seek_pos(&l, &a, 50);
    kds_log_seek_pos(&l, &b, 97); /* record 2 of run 19 */
    ck_assert_uint_eq(a.hint, 10);
    ck_assert_uint_eq(b.hint, 19);
    ck_assert_int_eq(kds_log_attach(&l, &a), 0);
    ck_assert_int_eq(kds_log_attach(&l, &b), 0);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 11);

    slices v = {.n = 0};
    kds_take tk;
    kds_log_take(&l, &a, 5, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.s[0].first, 50);
    ck_assert_uint_eq(v.s[0].count, 5);
    ck_assert_uint_eq(v.s[0].bytes, 500);
    ck_assert_int_eq(v.s[0].t_first, SIM_S(10));
    ck_assert_uint_eq(a.pos, 55);

    v.n = 0;
    kds_log_take(&l, &b, 100, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.s[0].first, 97);
    ck_assert_uint_eq(v.s[0].count, 3);
    ck_assert_uint_eq(v.s[0].bytes, 300);
    ck_assert_int_eq(v.s[0].t_first, SIM_S(19));

    /* Hints are absolute run indices: trimming runs off the head keeps them valid. */
    kds_log_trim(&l, SIM_S(10));
    v.n = 0;
    kds_log_take(&l, &a, 5, UINT64_MAX, collect, &v, &tk);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.s[0].first, 55);
    ck_assert_int_eq(v.s[0].t_first, SIM_S(11));
    kds_log_fini(&l);
}
END_TEST

/* Compaction also runs from append once the log has grown: with a reader parked at
 * the start, nothing merges; detached, memory stays bounded by the span. */
START_TEST(test_compact_on_append)
{
    kds_log l;
    kds_cursor rd;
    log_with_reader(&l, SIM_MIN(1), &rd);
    for (int i = 0; i < 3000; i++)
        ck_assert_int_eq(kds_log_append(&l, SIM_MS(100) * i, 2, 20, 0, 0, 0), 0);
    ck_assert_uint_eq(kds_log_runs(&l), 3000);
    kds_log_detach(&l, &rd);
    for (int i = 3000; i < 6000; i++)
        ck_assert_int_eq(kds_log_append(&l, SIM_MS(100) * i, 2, 20, 0, 0, 0), 0);
    ck_assert_uint_lt(kds_log_runs(&l), 3000);
    ck_assert_uint_eq(l.end_pos, 12000);
    ck_assert_uint_eq(l.bytes, 120000);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    kds_take tk;
    kds_log_take(&l, &c, UINT64_MAX, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.records, 12000);
    ck_assert_uint_eq(tk.bytes, 120000);
    kds_log_fini(&l);
}
END_TEST

/* ---- ring buffer ---------------------------------------------------------------------- */

/* Trim from the head, append until the ring wraps, then grow it while wrapped: every
 * run is still read back in order with its own position, time and bytes. */
START_TEST(test_ring_wrap_and_grow)
{
    kds_log l;
    kds_log_init(&l, 0);
    int next = 0;
    for (; next < 50; next++)
        ck_assert_int_eq(kds_log_append(&l, SIM_S(next), 1, (uint64_t)next + 1, 0, 0, 0), 0);
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(39)), 40);
    for (; next < 150; next++)
        ck_assert_int_eq(kds_log_append(&l, SIM_S(next), 1, (uint64_t)next + 1, 0, 0, 0), 0);
    ck_assert_uint_eq(kds_log_runs(&l), 110);
    ck_assert_uint_eq(l.head_pos, 40);
    kds_cursor c;
    kds_log_seek_head(&l, &c);
    for (int i = 40; i < 150; i++) {
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, 1, UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(v.s[0].first, (uint64_t)i);
        ck_assert_uint_eq(v.s[0].bytes, (uint64_t)i + 1);
        ck_assert_int_eq(v.s[0].t_first, SIM_S(i));
        ck_assert_int_eq(kds_log_time_at(&l, (uint64_t)i), SIM_S(i));
    }
    kds_log_fini(&l);
}
END_TEST

/* Trimming gives ring space back: a ring three quarters empty moves to the smallest
 * power of two (64 at least) that holds its runs, unwrapped, with a cursor's reads the
 * same after; an emptied ring is freed, and the log takes appends again. */
START_TEST(test_trim_shrinks_ring)
{
    kds_log l;
    kds_log_init(&l, 0);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(kds_log_append(&l, SIM_S(i), 1, (uint64_t)i + 1, 0, 0, 0), 0);
    ck_assert_uint_eq(l.cap, 1024);
    kds_cursor c;
    kds_log_seek_pos(&l, &c, 990);
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(899)), 900); /* 100 runs left of 1,024 */
    ck_assert_uint_eq(l.cap, 128);
    ck_assert_uint_eq(kds_log_runs(&l), 100);
    for (int i = 990; i < 1000; i++) {
        slices v = {.n = 0};
        kds_take tk;
        kds_log_take(&l, &c, 1, UINT64_MAX, collect, &v, &tk);
        ck_assert_uint_eq(v.s[0].first, (uint64_t)i);
        ck_assert_int_eq(v.s[0].t_first, SIM_S(i));
    }
    ck_assert_int_eq(kds_log_time_at(&l, 900), SIM_S(900));
    ck_assert_uint_eq(kds_log_trim(&l, SIM_S(999)), 100);
    ck_assert_uint_eq(l.cap, 0);
    ck_assert_ptr_null(l.runs);
    ck_assert_int_eq(kds_log_append(&l, SIM_S(1000), 2, 20, 0, 0, 0), 0);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    ck_assert_uint_eq(l.head_pos, 1000);
    ck_assert_int_eq(kds_log_time_at(&l, 1001), SIM_S(1000));
    kds_log_fini(&l);
}
END_TEST

/* Slices handed over in arrays by kds_log_take_v, and how many arrays. */
typedef struct slice_arrays {
    kds_slice s[4096];
    size_t n;
    size_t calls;
    size_t longest;
} slice_arrays;

static void collect_v(void *ctx, const kds_slice *v, size_t n)
{
    slice_arrays *a = ctx;
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_le(a->n + n, 4096);
    memcpy(a->s + a->n, v, n * sizeof *v);
    a->n += n;
    a->calls++;
    if (n > a->longest)
        a->longest = n;
}

/* kds_log_take_v hands out exactly what kds_log_take does, call by call, on a log whose
 * ring has wrapped and whose runs include compacted ones, under random limits that cut
 * runs by records and by bytes. */
START_TEST(test_take_v_same_as_take)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    kds_log l;
    kds_log_init(&l, SIM_S(3));
    kds_cursor a, b;
    kds_log_seek_head(&l, &a);
    kds_log_seek_head(&l, &b);
    ck_assert_int_eq(kds_log_attach(&l, &a), 0);
    ck_assert_int_eq(kds_log_attach(&l, &b), 0);
    sim_time t = 0;
    size_t multi = 0;
    for (int round = 0; round < 400; round++) {
        int appends = (int)(xorshift(&seed) % 12);
        for (int i = 0; i < appends; i++) {
            t += (sim_time)(xorshift(&seed) % SIM_MS(700));
            uint32_t count = 1 + (uint32_t)(xorshift(&seed) % 40);
            uint64_t bytes = count * (1 + xorshift(&seed) % 3000);
            ck_assert_int_eq(kds_log_append(&l, t, count, bytes, count / 7, count / 9, 1), 0);
        }
        if (round % 50 == 49)
            kds_log_trim(&l, t - SIM_S(40));
        uint64_t max_records = 1 + xorshift(&seed) % 600;
        uint64_t max_bytes = xorshift(&seed) % 4 == 0 ? 1 + xorshift(&seed) % 5000
                                                      : 1 + xorshift(&seed) % 2000000;
        slice_arrays *vb = calloc(1, sizeof *vb);
        slices1 *one = calloc(1, sizeof *one);
        ck_assert_ptr_nonnull(vb);
        ck_assert_ptr_nonnull(one);
        kds_take ta, tb;
        kds_log_take(&l, &a, max_records, max_bytes, collect1, one, &ta);
        kds_log_take_v(&l, &b, max_records, max_bytes, collect_v, vb, &tb);
        ck_assert_uint_eq(ta.records, tb.records);
        ck_assert_uint_eq(ta.bytes, tb.bytes);
        ck_assert_uint_eq(ta.expired, tb.expired);
        ck_assert_int_eq(ta.t_last, tb.t_last);
        ck_assert_uint_eq(a.pos, b.pos);
        ck_assert_uint_eq(a.hint, b.hint);
        ck_assert_uint_eq(one->n, vb->n);
        ck_assert_mem_eq(one->s, vb->s, one->n * sizeof *one->s);
        if (vb->longest > 1)
            multi++;
        free(one);
        free(vb);
    }
    ck_assert_uint_gt(multi, 10);   /* whole runs did go out in arrays */
    ck_assert_uint_gt(l.popped, 0); /* the ring wrapped past trimmed runs */
    kds_log_fini(&l);
}
END_TEST

/* The same runs, in ring order. */
static void assert_same_runs(const kds_log *x, const kds_log *y)
{
    ck_assert_uint_eq(x->n, y->n);
    for (size_t i = 0; i < x->n; i++)
        ck_assert_mem_eq(&x->runs[(x->head + i) & (x->cap - 1)],
                         &y->runs[(y->head + i) & (y->cap - 1)], sizeof(kds_run));
}

/* Compaction resumes at the settled run rather than the head: it merges exactly what a
 * compaction from the head does (the log as it was before settled runs existed), under
 * random appends, readers moving on, a reader going back to the head, whole and
 * partial trims, and compactions by hand and from append. */
START_TEST(test_compact_settled_same_as_from_head)
{
    uint64_t seed = 0x2545f4914f6cdd1du;
    kds_log l, ref;
    kds_log_init(&l, SIM_S(3));
    kds_log_init(&ref, SIM_S(3));
    kds_cursor a, b, ra, rb;
    kds_log_seek_head(&l, &a);
    kds_log_seek_head(&l, &b);
    kds_log_seek_head(&ref, &ra);
    kds_log_seek_head(&ref, &rb);
    ck_assert_int_eq(kds_log_attach(&l, &a), 0);
    ck_assert_int_eq(kds_log_attach(&l, &b), 0);
    ck_assert_int_eq(kds_log_attach(&ref, &ra), 0);
    ck_assert_int_eq(kds_log_attach(&ref, &rb), 0);
    sim_time t = 0;
    size_t skipped = 0;
    for (int round = 0; round < 3000; round++) {
        int appends = (int)(xorshift(&seed) % 8);
        for (int i = 0; i < appends; i++) {
            /* Now and then a pause, which leaves short runs between long ones. */
            t += (sim_time)(xorshift(&seed) % (xorshift(&seed) % 8 ? SIM_MS(400) : SIM_S(3)));
            uint32_t count = 1 + (uint32_t)(xorshift(&seed) % 40);
            uint64_t bytes = count * (1 + xorshift(&seed) % 3000);
            ref.settled = ref.popped; /* the reference compacts from the head */
            ck_assert_int_eq(kds_log_append(&l, t, count, bytes, count / 7, count / 9, 1), 0);
            ck_assert_int_eq(kds_log_append(&ref, t, count, bytes, count / 7, count / 9, 1), 0);
        }
        uint64_t max_records = 1 + xorshift(&seed) % 200;
        kds_take tk;
        kds_log_take(&l, &a, max_records, UINT64_MAX, NULL, NULL, &tk);
        kds_log_take(&ref, &ra, max_records, UINT64_MAX, NULL, NULL, &tk);
        if (xorshift(&seed) % 3 == 0) {
            kds_log_take(&l, &b, 2 * max_records, UINT64_MAX, NULL, NULL, &tk);
            kds_log_take(&ref, &rb, 2 * max_records, UINT64_MAX, NULL, NULL, &tk);
        }
        if (round % 400 == 399) {
            kds_log_seek_head(&l, &b);
            kds_log_seek_head(&ref, &rb);
        }
        if (round % 37 == 36) {
            /* Cutoffs fall inside compacted runs as well as between runs. */
            sim_time cutoff = t - SIM_S(60) - (sim_time)(xorshift(&seed) % SIM_S(2));
            ck_assert_uint_eq(kds_log_trim(&l, cutoff), kds_log_trim(&ref, cutoff));
        }
        if (round % 10 == 9) {
            if (l.settled > l.popped)
                skipped++;
            ref.settled = ref.popped;
            kds_log_compact(&l);
            kds_log_compact(&ref);
        }
        assert_same_runs(&l, &ref);
        /* The oldest write time, kept for retention trimming, through appends, whole
         * and partial trims and compactions. */
        ck_assert_int_eq(l.head_t, l.n ? l.runs[l.head].t_first : INT64_MAX);
    }
    ck_assert_uint_gt(skipped, 100); /* compactions did start past the head */
    ck_assert_uint_gt(l.popped, 0);
    kds_log_fini(&l);
    kds_log_fini(&ref);
}
END_TEST

START_TEST(test_bytes_written_before)
{
    kds_log l;
    three_runs(&l);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, SIM_S(9), NULL), 0);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, SIM_S(10), NULL), 300);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, SIM_S(29), NULL), 550);
    ck_assert_uint_eq(kds_log_bytes_written_before(&l, SIM_S(30), NULL), 1550);
    kds_log_fini(&l);
    kds_log_fini(NULL);
}
END_TEST

/* The bytes of a position range written by a time, cut as a take cuts them: the
 * long-term retrieval meter of what a reader took. */
START_TEST(test_bytes_range_before)
{
    kds_log l;
    three_runs(&l);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 0, 10, SIM_S(9)), 0);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 0, 10, SIM_S(10)), 300);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 0, 10, SIM_S(29)), 550);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 0, 10, SIM_S(30)), 1550);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 3, 3, SIM_S(30)), 0);
    /* Records 1-2 of A (200 B) and 3 of B (125 B). */
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 1, 4, SIM_S(20)), 325);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 1, 4, SIM_S(19)), 200);
    /* Record 4 of B (the rest of its 250 B) and 5-6 of C (400 B). */
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 4, 7, SIM_S(30)), 525);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 4, 7, SIM_S(25)), 125);
    /* A take of the same records returns the same bytes. */
    kds_cursor c;
    kds_log_seek_pos(&l, &c, 1);
    kds_take tk;
    kds_log_take(&l, &c, 3, UINT64_MAX, NULL, NULL, &tk);
    ck_assert_uint_eq(tk.bytes, kds_log_bytes_range_before(&l, 1, 4, SIM_S(30)));
    kds_log_fini(&l);

    /* 100 records over 0..9 s in one compacted run: 0-49 are written by 4.5 s. */
    runs_per_second(&l, SIM_MIN(1), 10, 10, 1000);
    kds_log_compact(&l);
    ck_assert_uint_eq(kds_log_runs(&l), 1);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 20, 80, SIM_MS(4500)), 3000);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 60, 80, SIM_MS(4500)), 0);
    ck_assert_uint_eq(kds_log_bytes_range_before(&l, 20, 40, SIM_MS(4500)), 2000);
    kds_log_fini(&l);
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("kds_log");

    TCase *take = tcase_create("take");
    tcase_add_test(take, test_append_counts);
    tcase_add_test(take, test_take_max_records_across_runs);
    tcase_add_test(take, test_take_one_record_over_max_bytes);
    tcase_add_test(take, test_take_max_bytes_exact);
    tcase_add_test(take, test_prorate_sums_exactly);
    tcase_add_test(take, test_marks_first);
    tcase_add_test(take, test_prorate);
    tcase_add_test(take, test_take_v_same_as_take);
    suite_add_tcase(s, take);

    TCase *trim = tcase_create("trim");
    tcase_add_test(trim, test_trim_whole_runs);
    tcase_add_test(trim, test_trim_shrinks_ring);
    tcase_add_test(trim, test_trim_partial_compacted_run);
    tcase_add_test(trim, test_cursor_below_head_counts_expired);
    tcase_add_test(trim, test_bytes_written_before);
    tcase_add_test(trim, test_bytes_range_before);
    tcase_add_test(trim, test_trim_at_a_record_time_removes_it);
    suite_add_tcase(s, trim);

    TCase *seek = tcase_create("seek");
    tcase_add_test(seek, test_seek_time);
    tcase_add_test(seek, test_seek_time_in_compacted_run);
    tcase_add_test(seek, test_seek_pos_clamped);
    suite_add_tcase(s, seek);

    TCase *compact = tcase_create("compact");
    tcase_add_test(compact, test_compact_behind_cursor);
    tcase_add_test(compact, test_compact_span_limit);
    tcase_add_test(compact, test_trim_on_whole_minutes_exact);
    tcase_add_test(compact, test_compact_stops_at_floor);
    tcase_add_test(compact, test_ring_bounded_by_runs_kept);
    tcase_add_test(compact, test_floor_far_behind_passed_over);
    tcase_add_test(compact, test_compact_cursor_inside_run);
    tcase_add_test(compact, test_compact_keeps_marks_in_place);
    tcase_add_test(compact, test_compact_marks_bounded);
    tcase_add_test(compact, test_hint_recovery_after_compaction);
    tcase_add_test(compact, test_compact_on_append);
    tcase_add_test(compact, test_compact_settled_same_as_from_head);
    tcase_add_test(compact, test_ring_wrap_and_grow);
    tcase_add_test(compact, test_bytes_before_mark_same_as_scan);
    suite_add_tcase(s, compact);
    return s;
}

int main(void)
{
    return tu_run_suite(log_suite());
}
