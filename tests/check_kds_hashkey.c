/* check_kds_hashkey.c - tests of the 128-bit hash-key module: MD5 against RFC 1321 and
 * model.md's examples, decimal/hex round trips at the boundaries, parse errors, and
 * CreateStream's even split covering the key space exactly.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "kds_hashkey.h"
#include "sim_err.h"
#include "testutil.h"

/* 2^64 and 2^128 - 1 spelled out, so the tables below do not trust the code under
 * test to produce them. */
#define TWO_64 ((kds_hashkey)1 << 64)

/* The shard of n (even split) whose range holds k. */
static uint32_t shard_of(kds_hashkey k, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (k >= kds_hashkey_even_start(i, n) && k <= kds_hashkey_even_end(i, n))
            return i;
    }
    ck_abort_msg("key in no shard");
    return n;
}

/* ---- core ------------------------------------------------------------------------- */

START_TEST(test_md5_rfc1321)
{
    char hex[KDS_HASHKEY_HEX_LEN];
    /* RFC 1321, appendix A.5 test suite. */
    ck_assert_str_eq(kds_hashkey_to_hex(hex, kds_hashkey_from_md5("", 0)),
                     "d41d8cd98f00b204e9800998ecf8427e");
    ck_assert_str_eq(kds_hashkey_to_hex(hex, kds_hashkey_from_md5("abc", 3)),
                     "900150983cd24fb0d6963f7d28e17f72");
    ck_assert_str_eq(kds_hashkey_to_hex(hex, kds_hashkey_from_md5("message digest", 14)),
                     "f96b697d7cb7938d525a2f31aaf161d0");
}
END_TEST

START_TEST(test_md5_model_examples)
{
    char hex[KDS_HASHKEY_HEX_LEN];
    kds_hashkey k41 = kds_hashkey_from_md5("s-41", 4);
    kds_hashkey k90 = kds_hashkey_from_md5("s-90", 4);

    ck_assert(strncmp(kds_hashkey_to_hex(hex, k41), "6e19676a", 8) == 0);
    ck_assert_uint_eq(shard_of(k41, 4), 1);
    ck_assert(strncmp(kds_hashkey_to_hex(hex, k90), "b772d1fa", 8) == 0);
    ck_assert_uint_eq(shard_of(k90, 4), 2);
}
END_TEST

START_TEST(test_shard_1_of_4)
{
    char dec[KDS_HASHKEY_DEC_LEN];
    ck_assert_str_eq(kds_hashkey_to_dec(dec, kds_hashkey_even_start(1, 4)),
                     "85070591730234615865843651857942052864");
    ck_assert_str_eq(kds_hashkey_to_dec(dec, kds_hashkey_even_end(1, 4)),
                     "170141183460469231731687303715884105727");
}
END_TEST

/* Round trips through decimal and hex at the boundaries where a 64-bit half carries. */
static const struct {
    kds_hashkey k;
    const char *dec;
    const char *hex;
} round_trips[] = {
    {0, "0", "00000000000000000000000000000000"},
    {1, "1", "00000000000000000000000000000001"},
    {TWO_64 - 1, "18446744073709551615", "0000000000000000ffffffffffffffff"},
    {TWO_64, "18446744073709551616", "00000000000000010000000000000000"},
    {KDS_HASHKEY_MAX, "340282366920938463463374607431768211455",
     "ffffffffffffffffffffffffffffffff"},
    /* 10^19 is where kds_hashkey_to_dec switches chunks: its zero padding matters. */
    {(kds_hashkey)UINT64_C(10000000000000000000), "10000000000000000000",
     "00000000000000008ac7230489e80000"},
};

START_TEST(test_round_trip)
{
    char dec[KDS_HASHKEY_DEC_LEN], hex[KDS_HASHKEY_HEX_LEN];
    kds_hashkey back = 12345;

    ck_assert_str_eq(kds_hashkey_to_dec(dec, round_trips[_i].k), round_trips[_i].dec);
    ck_assert_str_eq(kds_hashkey_to_hex(hex, round_trips[_i].k), round_trips[_i].hex);
    ck_assert_int_eq(kds_hashkey_parse_dec(round_trips[_i].dec, &back), 0);
    ck_assert(back == round_trips[_i].k);
}
END_TEST

/* ---- limits ----------------------------------------------------------------------- */

static const uint32_t split_sizes[] = {1, 2, 3, 4, 7, 10, 500, UINT32_MAX};

/* Consecutive shards touch, none overlaps, the first starts at 0 and the last ends at
 * 2^128 - 1; the starts follow i * floor(2^128 / n); the shares add up to 1. */
START_TEST(test_even_split_covers)
{
    uint32_t n = split_sizes[_i];
    /* UINT32_MAX shards is only for the step arithmetic: check the ends, not them all. */
    uint32_t checked = n > 1000 ? 3 : n;
    double total = 0;

    ck_assert(kds_hashkey_even_start(0, n) == 0);
    ck_assert(kds_hashkey_even_end(n - 1, n) == KDS_HASHKEY_MAX);
    for (uint32_t i = 0; i < checked; i++) {
        kds_hashkey lo = kds_hashkey_even_start(i, n), hi = kds_hashkey_even_end(i, n);
        ck_assert(lo <= hi);
        if (i + 1 < n)
            ck_assert(hi + 1 == kds_hashkey_even_start(i + 1, n));
        total += kds_hashkey_share(lo, hi);
    }
    if (checked == n)
        ck_assert_double_eq_tol(total, 1.0, 1e-12);
}
END_TEST

START_TEST(test_even_split_step)
{
    /* floor(2^128 / 3) = 0x5555...5 (2^128 = 3 * 0x55..55 + 1). */
    char hex[KDS_HASHKEY_HEX_LEN];
    ck_assert_str_eq(kds_hashkey_to_hex(hex, kds_hashkey_even_start(1, 3)),
                     "55555555555555555555555555555555");
    ck_assert_str_eq(kds_hashkey_to_hex(hex, kds_hashkey_even_start(2, 3)),
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    /* 7 does not divide 2^128: the last shard takes the remainder, 2^128 mod 7 = 4. */
    kds_hashkey step7 = kds_hashkey_even_start(1, 7);
    ck_assert(kds_hashkey_even_start(6, 7) == 6 * step7);
    ck_assert(KDS_HASHKEY_MAX - kds_hashkey_even_start(6, 7) + 1 == step7 + 4);
}
END_TEST

START_TEST(test_share)
{
    ck_assert_double_eq(kds_hashkey_share(0, KDS_HASHKEY_MAX), 1.0);
    ck_assert_double_eq(kds_hashkey_share(kds_hashkey_even_start(1, 4), kds_hashkey_even_end(1, 4)),
                        0.25);
    ck_assert_double_eq(kds_hashkey_share(0, 0), 0x1p-128);
}
END_TEST

/* ---- errors ----------------------------------------------------------------------- */

static const struct {
    const char *text;
    int rc;
} bad_keys[] = {
    {"", SIM_ESYNTAX},
    {"-1", SIM_ESYNTAX},
    {"+1", SIM_ESYNTAX},
    {"12a", SIM_ESYNTAX},
    {" 1", SIM_ESYNTAX},
    {"0x10", SIM_ESYNTAX},
    {"340282366920938463463374607431768211456", SIM_ERANGE}, /* 2^128 */
    {"999999999999999999999999999999999999999999", SIM_ERANGE},
    {"340282366920938463463374607431768211456x", SIM_ESYNTAX},
};

START_TEST(test_parse_errors)
{
    kds_hashkey k = 42;
    ck_assert_int_eq(kds_hashkey_parse_dec(bad_keys[_i].text, &k), bad_keys[_i].rc);
    ck_assert(k == 42); /* untouched on error */
}
END_TEST

START_TEST(test_parse_leading_zeros)
{
    kds_hashkey k = 0;
    ck_assert_int_eq(kds_hashkey_parse_dec("000340282366920938463463374607431768211455", &k), 0);
    ck_assert(k == KDS_HASHKEY_MAX);
}
END_TEST

static Suite *hashkey_suite(void)
{
    Suite *s = suite_create("kds_hashkey");

    TCase *core = tcase_create("core");
    tcase_add_test(core, test_md5_rfc1321);
    tcase_add_test(core, test_md5_model_examples);
    tcase_add_test(core, test_shard_1_of_4);
    tcase_add_loop_test(core, test_round_trip, 0,
                        (int)(sizeof round_trips / sizeof round_trips[0]));
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_loop_test(limits, test_even_split_covers, 0,
                        (int)(sizeof split_sizes / sizeof split_sizes[0]));
    tcase_add_test(limits, test_even_split_step);
    tcase_add_test(limits, test_share);
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    tcase_add_loop_test(errors, test_parse_errors, 0, (int)(sizeof bad_keys / sizeof bad_keys[0]));
    tcase_add_test(errors, test_parse_leading_zeros);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(hashkey_suite());
}
