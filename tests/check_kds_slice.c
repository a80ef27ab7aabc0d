/* check_kds_slice.c - tests of kds_slice_split (kds_slice.h): the pieces' counts,
 * bytes, duplicates and marks add up to the original's, and their write times and
 * prorated duplicates are the ones the general formulas give, on the paths that skip
 * them (no duplicates; one write time) as on the others, also when a piece is written
 * over the original.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "kds_slice.h"
#include "testutil.h"

/* The split by its definition (kds_slice.h's header): bytes and duplicates prorated,
 * marks first, write times spread evenly over [t_first, t_last]. */
static void split_by_formula(const kds_slice *s, uint32_t k, kds_slice *head, kds_slice *tail)
{
    uint64_t span = (uint64_t)(s->t_last - s->t_first), den = (uint64_t)s->count - 1;
    *head = *tail = *s;
    head->count = k;
    head->bytes = kds_prorate(s->bytes, k, s->count);
    head->dups = (uint32_t)kds_prorate(s->dups, k, s->count);
    head->marks = s->marks < k ? s->marks : k;
    head->t_last = s->t_first + (sim_time)kds_prorate(span, k - 1, den);
    tail->first = s->first + k;
    tail->count = s->count - k;
    tail->bytes = s->bytes - head->bytes;
    tail->dups = s->dups - head->dups;
    tail->marks = s->marks - head->marks;
    tail->t_first = s->t_first + (sim_time)kds_prorate(span, k, den);
}

static void same_slice(const kds_slice *a, const kds_slice *b)
{
    ck_assert_uint_eq(a->first, b->first);
    ck_assert_uint_eq(a->count, b->count);
    ck_assert_uint_eq(a->dups, b->dups);
    ck_assert_uint_eq(a->marks, b->marks);
    ck_assert_uint_eq(a->src, b->src);
    ck_assert_uint_eq(a->bytes, b->bytes);
    ck_assert_int_eq(a->t_first, b->t_first);
    ck_assert_int_eq(a->t_last, b->t_last);
}

/* Every split point of slices with and without duplicates, with one write time and
 * with a spread of them, against the formulas; the tail written over the original (as
 * Lambda's batch cut does) comes out the same. */
START_TEST(test_split_as_formula)
{
    static const uint32_t dups[] = {0, 1, 5, 7};
    static const sim_time spread[] = {0, 1, SIM_MS(100), SIM_S(3) + 7};
    for (size_t d = 0; d < sizeof dups / sizeof dups[0]; d++)
        for (size_t t = 0; t < sizeof spread / sizeof spread[0]; t++)
            for (uint32_t k = 1; k < 7; k++) {
                kds_slice s = {1000, 7, dups[d], 2, 3, 7 * 1000 + 5, SIM_S(60),
                               SIM_S(60) + spread[t]};
                kds_slice h, tl, want_h, want_t;
                kds_slice_split(&s, k, &h, &tl);
                split_by_formula(&s, k, &want_h, &want_t);
                same_slice(&h, &want_h);
                same_slice(&tl, &want_t);
                ck_assert_uint_eq(h.count + tl.count, s.count);
                ck_assert_uint_eq(h.bytes + tl.bytes, s.bytes);
                ck_assert_uint_eq(h.dups + tl.dups, s.dups);
                ck_assert_uint_eq(h.marks + tl.marks, s.marks);
                ck_assert_int_le(h.t_last, tl.t_first);
                if (spread[t] == 0)
                    ck_assert(h.t_last == s.t_first && tl.t_first == s.t_first);
                kds_slice in_place = s;
                kds_slice_split(&in_place, k, &h, &in_place);
                same_slice(&h, &want_h);
                same_slice(&in_place, &want_t);
            }
}
END_TEST

/* Duplicates are prorated with the floor: 5 of 7 records split after 3 leave the head
 * 2 (15/7) and the tail 3; with none, neither piece has any. */
START_TEST(test_split_dups)
{
    kds_slice s = {0, 7, 5, 0, 0, 700, SIM_S(1), SIM_S(2)};
    kds_slice h, t;
    kds_slice_split(&s, 3, &h, &t);
    ck_assert_uint_eq(h.dups, 2);
    ck_assert_uint_eq(t.dups, 3);
    s.dups = 0;
    kds_slice_split(&s, 3, &h, &t);
    ck_assert_uint_eq(h.dups, 0);
    ck_assert_uint_eq(t.dups, 0);
    /* Times: records 2 and 3 of 7 over 1 s are written at +333 ms and +500 ms. */
    ck_assert_int_eq(h.t_last, SIM_S(1) + SIM_S(1) / 3);
    ck_assert_int_eq(t.t_first, SIM_S(1) + SIM_S(1) / 2);
}
END_TEST

static Suite *slice_suite(void)
{
    Suite *s = suite_create("kds_slice");
    TCase *split = tcase_create("split");
    tcase_add_test(split, test_split_as_formula);
    tcase_add_test(split, test_split_dups);
    suite_add_tcase(s, split);
    return s;
}

int main(void)
{
    return tu_run_suite(slice_suite());
}
