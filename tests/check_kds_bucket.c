/* check_kds_bucket.c - tests of the integer token buckets: exact refill (rate * dt
 * nano-units, no rounding drift), the depth cap, taking when short (refused, level
 * untouched), charging into debt and climbing out of it, and resizing.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "kds_bucket.h"
#include "testutil.h"

/* ---- init and refill ---------------------------------------------------------------- */

START_TEST(test_init_full)
{
    kds_bucket b;
    kds_bucket_init(&b, 1000, 1000, SIM_S(3));
    ck_assert_int_eq(b.level, 1000 * KDS_NANO);
    ck_assert_int_eq(b.depth, 1000 * KDS_NANO);
    ck_assert_int_eq(b.rate, 1000);
    ck_assert_int_eq(b.last, SIM_S(3));
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_S(3)), 1000);
    ck_assert(!kds_bucket_in_debt(&b, SIM_S(3)));
}
END_TEST

/* Refilling adds exactly rate * dt nano-units: 3 units/s over 333,333,333 ns is
 * 999,999,999 nano-units, one short of a whole unit; one more ns crosses it. */
START_TEST(test_refill_exact)
{
    kds_bucket b;
    kds_bucket_init(&b, 3, 10, 0);
    ck_assert(kds_bucket_take(&b, 0, 10));
    ck_assert_int_eq(b.level, 0);

    kds_bucket_refill(&b, SIM_NS(333333333));
    ck_assert_int_eq(b.level, INT64_C(999999999));
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_NS(333333333)), 0);
    ck_assert(!kds_bucket_take(&b, SIM_NS(333333333), 1));

    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_NS(333333334)), 1);
    ck_assert_int_eq(b.level, INT64_C(1000000002));
    ck_assert_int_eq(b.last, SIM_NS(333333334));
}
END_TEST

/* Many small refills add up to exactly the same as one big one (no drift). */
START_TEST(test_refill_no_drift)
{
    kds_bucket a, b;
    kds_bucket_init(&a, 7, 100, 0);
    kds_bucket_init(&b, 7, 100, 0);
    ck_assert(kds_bucket_take(&a, 0, 100));
    ck_assert(kds_bucket_take(&b, 0, 100));
    sim_time t = 0;
    for (int i = 0; i < 1000; i++) {
        t += SIM_NS(1234567);
        kds_bucket_refill(&a, t);
    }
    kds_bucket_refill(&b, t);
    ck_assert_int_eq(a.level, b.level);
    ck_assert_int_eq(a.level, 7 * (int64_t)t);
    ck_assert_uint_eq(kds_bucket_avail(&a, t), 8); /* 7 * 1.234567 s = 8.64 */
}
END_TEST

START_TEST(test_depth_cap)
{
    kds_bucket b;
    kds_bucket_init(&b, 1000, 1000, 0);
    ck_assert(kds_bucket_take(&b, 0, 400));
    /* 0.3 s refills 300: not yet full. */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_MS(300)), 900);
    /* 0.2 s more would add 200 but only 100 fit. */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_MS(500)), 1000);
    ck_assert_int_eq(b.level, b.depth);
    /* A very long idle time does not overflow, the level stays at the depth. */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_DAY(36500)), 1000);
    ck_assert_int_eq(b.level, b.depth);
}
END_TEST

START_TEST(test_zero_rate_never_refills)
{
    kds_bucket b;
    kds_bucket_init(&b, 0, 5, 0);
    ck_assert(kds_bucket_take(&b, 0, 5));
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_HOUR(1)), 0);
}
END_TEST

/* ---- take ----------------------------------------------------------------------------- */

START_TEST(test_take_fails_when_short)
{
    kds_bucket b;
    kds_bucket_init(&b, 10, 10, 0);
    ck_assert(kds_bucket_take(&b, 0, 6));
    int64_t before = b.level;
    ck_assert(!kds_bucket_take(&b, 0, 5)); /* 4 left */
    ck_assert_int_eq(b.level, before);     /* a refused take costs nothing */
    ck_assert(kds_bucket_take(&b, 0, 4));
    ck_assert_uint_eq(kds_bucket_avail(&b, 0), 0);
    ck_assert(!kds_bucket_take(&b, 0, 1));
    ck_assert(kds_bucket_take(&b, 0, 0)); /* nothing is always available */
    /* 0.1 s at 10/s refills exactly one unit. */
    ck_assert(!kds_bucket_take(&b, SIM_MS(99), 1));
    ck_assert(kds_bucket_take(&b, SIM_MS(100), 1));
    ck_assert_int_eq(b.level, 0);
}
END_TEST

START_TEST(test_take_more_than_depth)
{
    kds_bucket b;
    kds_bucket_init(&b, 10, 10, 0);
    ck_assert(!kds_bucket_take(&b, SIM_HOUR(1), 11));
    ck_assert(!kds_bucket_take(&b, SIM_HOUR(1), UINT64_MAX)); /* no overflow */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_HOUR(1)), 10);
}
END_TEST

/* ---- debt ----------------------------------------------------------------------------- */

START_TEST(test_charge_into_debt)
{
    kds_bucket b;
    kds_bucket_init(&b, 1000, 1000, 0);
    kds_bucket_charge(&b, 0, 3000);
    ck_assert_int_eq(b.level, -2000 * KDS_NANO);
    ck_assert(kds_bucket_in_debt(&b, 0));
    ck_assert_uint_eq(kds_bucket_avail(&b, 0), 0);
    ck_assert(!kds_bucket_take(&b, 0, 1));

    /* The debt is paid back at the refill rate: 2 s for 2000 units. */
    ck_assert(kds_bucket_in_debt(&b, SIM_MS(1999)));
    ck_assert(!kds_bucket_in_debt(&b, SIM_S(2)));
    ck_assert_int_eq(b.level, 0);
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_S(2)), 0);
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_MS(2001)), 1);
    /* Coming out of debt, the refill still stops at the depth. */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_S(60)), 1000);
}
END_TEST

START_TEST(test_charge_within_level)
{
    kds_bucket b;
    kds_bucket_init(&b, 100, 100, 0);
    kds_bucket_charge(&b, 0, 40);
    ck_assert(!kds_bucket_in_debt(&b, 0));
    ck_assert_uint_eq(kds_bucket_avail(&b, 0), 60);
    kds_bucket_charge(&b, 0, 60);
    ck_assert(!kds_bucket_in_debt(&b, 0)); /* exactly empty is not debt */
    kds_bucket_charge(&b, 0, 1);
    ck_assert(kds_bucket_in_debt(&b, 0));
}
END_TEST

/* ---- lots ----------------------------------------------------------------------------- */

/* kds_bucket_avail_lots is the whole-units count divided by the lot, at every level:
 * full, part-refilled (levels that are not whole units), empty and in debt. */
START_TEST(test_avail_lots_matches_avail)
{
    static const uint64_t lots[] = {1, 2, 3, 7, 1000, 1024, 999999, 10 * 1048576};
    for (size_t i = 0; i < sizeof lots / sizeof lots[0]; i++) {
        kds_bucket b;
        kds_bucket_init(&b, 3 * 1048576 + 17, 5 * 1048576, 0);
        kds_bucket_charge(&b, 0, 7 * 1048576); /* 2 MiB in debt */
        for (sim_time t = 0; t <= SIM_S(3); t += SIM_NS(123456789)) {
            kds_bucket c = b;
            uint64_t lots_now = kds_bucket_avail_lots(&c, t, lots[i]);
            ck_assert_uint_eq(lots_now, kds_bucket_avail(&b, t) / lots[i]);
        }
    }
}
END_TEST

/* ---- resize --------------------------------------------------------------------------- */

START_TEST(test_resize)
{
    kds_bucket b;
    kds_bucket_init(&b, 1000, 1000, 0);
    ck_assert(kds_bucket_take(&b, 0, 100)); /* 900 left */
    kds_bucket_resize(&b, 0, 200, 500);     /* capped at the new depth */
    ck_assert_int_eq(b.level, 500 * KDS_NANO);
    ck_assert(kds_bucket_take(&b, 0, 500));
    /* The new rate applies from the resize on: 1 s adds 200. */
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_S(1)), 200);
    /* Growing keeps the level (it is not topped up). */
    kds_bucket_resize(&b, SIM_S(1), 4000, 4000);
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_S(1)), 200);
    ck_assert_uint_eq(kds_bucket_avail(&b, SIM_MS(1500)), 2200);
}
END_TEST

static Suite *bucket_suite(void)
{
    Suite *s = suite_create("kds_bucket");

    TCase *refill = tcase_create("refill");
    tcase_add_test(refill, test_init_full);
    tcase_add_test(refill, test_refill_exact);
    tcase_add_test(refill, test_refill_no_drift);
    tcase_add_test(refill, test_depth_cap);
    tcase_add_test(refill, test_zero_rate_never_refills);
    suite_add_tcase(s, refill);

    TCase *take = tcase_create("take");
    tcase_add_test(take, test_take_fails_when_short);
    tcase_add_test(take, test_take_more_than_depth);
    suite_add_tcase(s, take);

    TCase *debt = tcase_create("debt");
    tcase_add_test(debt, test_charge_into_debt);
    tcase_add_test(debt, test_charge_within_level);
    tcase_add_test(debt, test_resize);
    suite_add_tcase(s, debt);

    TCase *lot = tcase_create("lots");
    tcase_add_test(lot, test_avail_lots_matches_avail);
    suite_add_tcase(s, lot);
    return s;
}

int main(void)
{
    return tu_run_suite(bucket_suite());
}
