/* check_sim_units.c - Check suite for sim_units: the durations, sizes and rates that
 * scenarios are written in, their error codes, and print/parse round trips.
 */
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "sim_err.h"
#include "sim_units.h"
#include "testutil.h"

/* A passing ck_assert costs a write(2) (Check records the last location reached), so
 * loops that check thousands of values use this, which only acts on failure. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

#define KIB UINT64_C(1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)
#define TIB (GIB * 1024)

/* ---- durations -------------------------------------------------------------------- */

static const struct {
    const char *text;
    sim_time ns;
} dur_ok[] = {
    {"500ms", SIM_MS(500)},
    {"30s", SIM_S(30)},
    {"10m", SIM_MIN(10)},
    {"10min", SIM_MIN(10)},
    {"6h", SIM_HOUR(6)},
    {"7d", SIM_DAY(7)},
    {"1.5s", SIM_MS(1500)},
    {"0", 0},
    {"0s", 0},
    {"0.0", 0},
    {"250 us", SIM_US(250)},
    {"1ns", 1},
    {" 2 s ", SIM_S(2)},
    {".5s", SIM_MS(500)},
    {"0.1s", SIM_MS(100)},
    {"1.000000001s", SIM_S(1) + 1},
    {"1.4ns", 1},
    {"1.5ns", 2}, /* halves round up */
    {"0.0000000004s", 0},
    {"1e3ms", SIM_S(1)},
    {"2.5e-1s", SIM_MS(250)},
    {"9223372036854775807ns", INT64_MAX},
    {"106751d", SIM_DAY(106751)},
};

START_TEST(test_duration_ok)
{
    sim_time t = -1;
    int rc = sim_parse_duration(dur_ok[_i].text, &t);
    ck_assert_msg(rc == SIM_OK, "\"%s\": %s", dur_ok[_i].text, sim_err_name(rc));
    ck_assert_msg(t == dur_ok[_i].ns, "\"%s\": got %" PRId64 ", want %" PRId64, dur_ok[_i].text, t,
                  dur_ok[_i].ns);
}
END_TEST

static const struct {
    const char *text;
    int rc;
} dur_bad[] = {
    {"", SIM_ESYNTAX},       {"   ", SIM_ESYNTAX},
    {"s", SIM_ESYNTAX},      {".s", SIM_ESYNTAX},
    {"5", SIM_EUNIT},        {"5 parsecs", SIM_EUNIT},
    {"5S", SIM_EUNIT},       {"5sec", SIM_EUNIT},
    {"5s junk", SIM_EUNIT},  {"5ss", SIM_EUNIT},
    {"5e", SIM_EUNIT},       {"0x10s", SIM_EUNIT},
    {"1.2.3s", SIM_ESYNTAX}, {"5,5s", SIM_ESYNTAX},
    {"1 \t", SIM_EUNIT}, /* trailing blanks, then the end: no unit (not a syntax error) */
    {"inf", SIM_ESYNTAX},    {"nan s", SIM_ESYNTAX},
    {"+1s", SIM_ESYNTAX},    {"-1s", SIM_ERANGE},
    {"-0.5s", SIM_ERANGE},   {"1e400s", SIM_ERANGE},
    {"1e300s", SIM_ERANGE},  {"9223372036854775808ns", SIM_ERANGE},
    {"106752d", SIM_ERANGE}, {"99999999999999999999999s", SIM_ERANGE},
};

START_TEST(test_duration_bad)
{
    sim_time t = 12345;
    int rc = sim_parse_duration(dur_bad[_i].text, &t);
    ck_assert_msg(rc == dur_bad[_i].rc, "\"%s\": got %s, want %s", dur_bad[_i].text,
                  sim_err_name(rc), sim_err_name(dur_bad[_i].rc));
    ck_assert_int_eq(t, 12345); /* nothing half-written */
}
END_TEST

/* ---- sizes ------------------------------------------------------------------------ */

static const struct {
    const char *text;
    uint64_t bytes;
} bytes_ok[] = {
    {"25 KiB", 25 * KIB},
    {"1 MiB", MIB},
    {"1MiB", MIB},
    {"512 B", 512},
    {"1.5 KiB", 1536},
    {"100", 100},
    {"0", 0},
    {"2 GiB", 2 * GIB},
    {"1 TiB", TIB},
    {"0.5 B", 1},
    {"18446744073709551615", UINT64_MAX},
    {"16777215 TiB", 16777215 * TIB},
    /* Trailing blanks after a number without a unit: the lexer must stop at the end
     * (fuzz-regressions/units/sim-units-skip-past-end read past it). */
    {"1 \t", 1},
    {"0 ", 0},
};

START_TEST(test_bytes_ok)
{
    uint64_t b = 7;
    int rc = sim_parse_bytes(bytes_ok[_i].text, &b);
    ck_assert_msg(rc == SIM_OK, "\"%s\": %s", bytes_ok[_i].text, sim_err_name(rc));
    ck_assert_msg(b == bytes_ok[_i].bytes, "\"%s\": got %" PRIu64, bytes_ok[_i].text, b);
}
END_TEST

static const struct {
    const char *text;
    int rc;
} bytes_bad[] = {
    {"", SIM_ESYNTAX},
    {"KiB", SIM_ESYNTAX},
    {"1 KB", SIM_EUNIT},
    {"1 MB", SIM_EUNIT},
    {"1 GB", SIM_EUNIT},
    {"1 TB", SIM_EUNIT},
    {"1 kB", SIM_EUNIT},
    {"1 kib", SIM_EUNIT},
    {"1.5", SIM_EUNIT},
    {"5 KiB!", SIM_EUNIT},
    {"-5 B", SIM_ERANGE},
    {"16777216 TiB", SIM_ERANGE},
    {"18446744073709551616", SIM_ERANGE},
    {"1e30 B", SIM_ERANGE},
};

START_TEST(test_bytes_bad)
{
    uint64_t b = 7;
    int rc = sim_parse_bytes(bytes_bad[_i].text, &b);
    ck_assert_msg(rc == bytes_bad[_i].rc, "\"%s\": got %s, want %s", bytes_bad[_i].text,
                  sim_err_name(rc), sim_err_name(bytes_bad[_i].rc));
    ck_assert_uint_eq(b, 7);
}
END_TEST

/* ---- rates ------------------------------------------------------------------------ */

static const struct {
    const char *text;
    double bps;
} brate_ok[] = {
    {"1 MiB/s", 1048576.0},
    {"500 KiB/s", 512000.0},
    {"2 MiB/min", 2.0 * 1048576.0 / 60.0},
    {"1 MiB / s", 1048576.0},
    {"1024/s", 1024.0},
    {"1.5 KiB/ms", 1536000.0},
    {"0", 0.0},
};

START_TEST(test_byte_rate_ok)
{
    double v = -1;
    int rc = sim_parse_byte_rate(brate_ok[_i].text, &v);
    ck_assert_msg(rc == SIM_OK, "\"%s\": %s", brate_ok[_i].text, sim_err_name(rc));
    ck_assert_double_eq_tol(v, brate_ok[_i].bps, 1e-9 * (1 + brate_ok[_i].bps));
}
END_TEST

static const struct {
    const char *text;
    int rc;
} brate_bad[] = {
    {"", SIM_ESYNTAX},
    {"/s", SIM_ESYNTAX},
    {"1 MiB", SIM_EUNIT},
    {"1 MB/s", SIM_EUNIT},
    {"1 MiB/fortnight", SIM_EUNIT},
    {"1 MiB/", SIM_EUNIT},
    {"1 MiB/s/s", SIM_EUNIT},
    {"-1 MiB/s", SIM_ERANGE},
    {"1e400 B/s", SIM_ERANGE},
    {"1e300 TiB/ns", SIM_ERANGE},
};

START_TEST(test_byte_rate_bad)
{
    double v = 3.0;
    int rc = sim_parse_byte_rate(brate_bad[_i].text, &v);
    ck_assert_msg(rc == brate_bad[_i].rc, "\"%s\": got %s, want %s", brate_bad[_i].text,
                  sim_err_name(rc), sim_err_name(brate_bad[_i].rc));
    ck_assert_double_eq(v, 3.0);
}
END_TEST

static const struct {
    const char *text;
    const char *word;
    int rc;
    double per_s;
} crate[] = {
    {"1000 records/s", "records", SIM_OK, 1000.0},
    {"1 record/s", "records", SIM_OK, 1.0},
    {"5 calls/s", "calls", SIM_OK, 5.0},
    {"60/min", NULL, SIM_OK, 1.0},
    {"120/min", "records", SIM_OK, 2.0},
    {"3/h", NULL, SIM_OK, 3.0 / 3600.0},
    {"2000/s", NULL, SIM_OK, 2000.0},
    {"2.5 calls / s", "calls", SIM_OK, 2.5},
    {"0", "records", SIM_OK, 0.0},
    {"1000 records/s", NULL, SIM_EUNIT, 0},
    {"5 calls/s", "records", SIM_EUNIT, 0},
    {"5 recordss/s", "records", SIM_EUNIT, 0},
    {"5", "records", SIM_EUNIT, 0},
    {"5 records", "records", SIM_EUNIT, 0},
    {"5/parsec", NULL, SIM_EUNIT, 0},
    {"5 records/s extra", "records", SIM_EUNIT, 0},
    {"-5/s", NULL, SIM_ERANGE, 0},
    {"", NULL, SIM_ESYNTAX, 0},
    {"many/s", NULL, SIM_ESYNTAX, 0},
};

START_TEST(test_count_rate)
{
    double v = -1;
    int rc = sim_parse_count_rate(crate[_i].text, crate[_i].word, &v);
    ck_assert_msg(rc == crate[_i].rc, "\"%s\" (%s): got %s, want %s", crate[_i].text,
                  crate[_i].word ? crate[_i].word : "no word", sim_err_name(rc),
                  sim_err_name(crate[_i].rc));
    if (rc == SIM_OK)
        ck_assert_double_eq_tol(v, crate[_i].per_s, 1e-12 * (1 + crate[_i].per_s));
    else
        ck_assert_double_eq(v, -1);
}
END_TEST

/* ---- printing --------------------------------------------------------------------- */

static const struct {
    sim_time t;
    const char *text;
} dur_fmt[] = {
    {SIM_MS(500), "500ms"},
    {SIM_MS(1500), "1.5s"},
    {SIM_S(30), "30s"},
    {SIM_S(90), "1.5m"},
    {SIM_MIN(10), "10m"},
    {SIM_HOUR(6), "6h"},
    {SIM_DAY(7), "7d"},
    {SIM_HOUR(36), "1.5d"},
    {0, "0s"},
    {1, "1ns"},
    {999, "999ns"},
    {1500, "1.5us"},
    {SIM_MS(1) + 1, "1000.001us"},
    {SIM_S(1) + SIM_MS(1), "1.001s"},
    {SIM_S(-2), "-2s"},
    {INT64_MAX, "9223372036854775.807us"},
};

START_TEST(test_fmt_duration)
{
    char buf[64];
    ck_assert_str_eq(sim_fmt_duration(buf, sizeof buf, dur_fmt[_i].t), dur_fmt[_i].text);
    if (dur_fmt[_i].t >= 0) {
        sim_time back = -1;
        ck_assert_int_eq(sim_parse_duration(buf, &back), SIM_OK);
        ck_assert_int_eq(back, dur_fmt[_i].t);
    }
}
END_TEST

static const struct {
    uint64_t b;
    const char *text;
} bytes_fmt[] = {
    {0, "0 B"},
    {100, "100 B"},
    {1023, "1023 B"},
    {KIB, "1 KiB"},
    {1536, "1.5 KiB"},
    {25 * KIB, "25 KiB"},
    {1500, "1.46 KiB"},
    {MIB, "1 MiB"},
    {MIB - 1, "1 MiB"}, /* 1023.999 KiB: rounded, then carried into the next unit */
    {3 * GIB + GIB / 4, "3.25 GiB"},
    {5 * TIB, "5 TiB"},
    {UINT64_MAX, "16777216 TiB"},
};

START_TEST(test_fmt_bytes)
{
    char buf[64];
    ck_assert_str_eq(sim_fmt_bytes(buf, sizeof buf, bytes_fmt[_i].b), bytes_fmt[_i].text);
}
END_TEST

/* Every duration prints exactly (3 decimals of the chosen unit), so any value must
 * read back to the nanosecond: random values over the whole range and near units. */
START_TEST(test_duration_round_trip)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 20240611);
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        /* Spread over magnitudes: a random count of random bits. */
        unsigned bits = (unsigned)gsl_rng_uniform_int(r, 63);
        uint64_t x = ((uint64_t)gsl_rng_get(r) << 32) ^ gsl_rng_get(r);
        sim_time t = (sim_time)(x >> (63 - bits));
        if (i % 3 == 0) /* round values hit the larger units */
            t -= t % SIM_MS(1);
        sim_fmt_duration(buf, sizeof buf, t);
        sim_time back = -1;
        CHECK(sim_parse_duration(buf, &back) == SIM_OK, "\"%s\" does not parse", buf);
        CHECK(back == t, "%" PRId64 " printed as \"%s\" read back as %" PRId64, t, buf, back);
    }
    gsl_rng_free(r);
}
END_TEST

/* Sizes print rounded to 2 decimals, so only sizes that are whole hundredths of their
 * unit round-trip; those must, in every unit. */
START_TEST(test_bytes_round_trip)
{
    static const uint64_t units[] = {1, KIB, MIB, GIB, TIB};
    char buf[64];
    for (size_t u = 1; u < 5; u++) {
        for (uint64_t q = 100; q < 102400; q += 7) {
            if ((units[u] * q) % 100 != 0)
                continue;
            uint64_t b = units[u] * q / 100;
            sim_fmt_bytes(buf, sizeof buf, b);
            uint64_t back = 0;
            CHECK(sim_parse_bytes(buf, &back) == SIM_OK, "\"%s\" does not parse", buf);
            CHECK(back == b, "%" PRIu64 " printed as \"%s\"", b, buf);
        }
    }
    for (uint64_t b = 0; b < 1024; b++) {
        uint64_t back = 0;
        CHECK(sim_parse_bytes(sim_fmt_bytes(buf, sizeof buf, b), &back) == SIM_OK && back == b,
              "%" PRIu64 " printed as \"%s\"", b, buf);
    }
}
END_TEST

START_TEST(test_fmt_truncates)
{
    char buf[4];
    memset(buf, 'x', sizeof buf);
    sim_fmt_duration(buf, sizeof buf, SIM_MS(1500));
    ck_assert_str_eq(buf, "1.5");
    sim_fmt_bytes(buf, sizeof buf, 25 * KIB);
    ck_assert_str_eq(buf, "25 ");
}
END_TEST

/* Under a locale whose decimal point is a comma, scenarios still use '.'. The build
 * makes one and names it in KDSIM_TEST_LOCALE (tests/CMakeLists.txt), which must then
 * load; without it (no locale sources on the machine) the test looks for an installed
 * one and passes without checking only if there is none. */
START_TEST(test_locale_independent)
{
    const char *want = getenv("KDSIM_TEST_LOCALE");
    static const char *const names[] = {"de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "fr_FR"};
    const char *got = want ? setlocale(LC_NUMERIC, want) : NULL;
    if (want)
        ck_assert_msg(got != NULL, "the build's locale %s did not load (LOCPATH %s)", want,
                      getenv("LOCPATH") ? getenv("LOCPATH") : "unset");
    for (size_t i = 0; i < 4 && !got; i++)
        got = setlocale(LC_NUMERIC, names[i]);
    if (!got)
        return;
    ck_assert_int_eq(localeconv()->decimal_point[0], ',');
    double v = 0;
    int rc = sim_parse_byte_rate("1.5 KiB/s", &v);
    sim_time t = 0;
    int rc2 = sim_parse_duration("2.5e-1s", &t);
    setlocale(LC_NUMERIC, "C");
    ck_assert_int_eq(rc, SIM_OK);
    ck_assert_double_eq(v, 1536.0);
    ck_assert_int_eq(rc2, SIM_OK);
    ck_assert_int_eq(t, SIM_MS(250));
}
END_TEST

START_TEST(test_hints)
{
    ck_assert_ptr_nonnull(strstr(sim_units_hint('d'), "500ms"));
    ck_assert_ptr_nonnull(strstr(sim_units_hint('b'), "KiB"));
    ck_assert_ptr_nonnull(strstr(sim_units_hint('r'), "MiB/s"));
    ck_assert_ptr_nonnull(strstr(sim_units_hint('c'), "/s"));
    ck_assert_ptr_nonnull(sim_units_hint('?'));
}
END_TEST

#define LOOP(tc, fn, table) tcase_add_loop_test(tc, fn, 0, (int)(sizeof table / sizeof table[0]))

static Suite *units_suite(void)
{
    Suite *s = suite_create("sim_units");

    TCase *core = tcase_create("core");
    LOOP(core, test_duration_ok, dur_ok);
    LOOP(core, test_bytes_ok, bytes_ok);
    LOOP(core, test_byte_rate_ok, brate_ok);
    LOOP(core, test_count_rate, crate);
    LOOP(core, test_fmt_duration, dur_fmt);
    LOOP(core, test_fmt_bytes, bytes_fmt);
    tcase_add_test(core, test_hints);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_duration_round_trip);
    tcase_add_test(limits, test_bytes_round_trip);
    tcase_add_test(limits, test_fmt_truncates);
    tcase_add_test(limits, test_locale_independent);
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    LOOP(errors, test_duration_bad, dur_bad);
    LOOP(errors, test_bytes_bad, bytes_bad);
    LOOP(errors, test_byte_rate_bad, brate_bad);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(units_suite());
}
