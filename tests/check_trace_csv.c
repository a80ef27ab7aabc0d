/* check_trace_csv.c - tests of the CloudWatch trace reader (trace_csv.h): times in
 * ISO 8601 and Unix seconds, headers in any order and case, newest-first rows, missing
 * minutes and empty cells as 0, every bad row reported at its line and cell, and the
 * shipped sample day read to the record.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"
#include "testutil.h"
#include "trace_csv.h"

static kdsim_trace t;
static ydiag g;

static void setup(void)
{
    ydiag_init(&g);
}

static void teardown(void)
{
    kdsim_trace_fini(&t);
    ydiag_fini(&g);
}

static int parse(const char *text)
{
    kdsim_trace_fini(&t);
    return kdsim_trace_parse("t.csv", text, strlen(text), &t, &g);
}

/* The first diagnostic as `line:col: msg`. */
static const char *first_error(void)
{
    static char buf[512];
    ck_assert_uint_gt(g.n, 0);
    snprintf(buf, sizeof buf, "%ld:%ld: %s", g.items[0].line, g.items[0].col, g.items[0].msg);
    return buf;
}

START_TEST(test_times)
{
    int64_t u;
    ck_assert(kdsim_parse_utc("1970-01-01T00:00:00Z", &u));
    ck_assert_int_eq(u, 0);
    ck_assert(kdsim_parse_utc("2026-09-14T08:05:00Z", &u));
    ck_assert_int_eq(u, 1789373100);
    ck_assert(kdsim_parse_utc("2026-09-14 08:05", &u));
    ck_assert_int_eq(u, 1789373100);
    ck_assert(kdsim_parse_utc("2026-09-14T08:05:00.000+00:00", &u));
    ck_assert_int_eq(u, 1789373100);
    ck_assert(kdsim_parse_utc("2024-02-29T23:59:00Z", &u)); /* a leap day */
    ck_assert_int_eq(u, 1709251140);
    ck_assert(kdsim_parse_utc("1789373100", &u));
    ck_assert_int_eq(u, 1789373100);
    ck_assert(!kdsim_parse_utc("2026-09-14T08:05:00+02:00", &u)); /* UTC only */
    ck_assert(!kdsim_parse_utc("2026-13-01T00:00Z", &u));
    ck_assert(!kdsim_parse_utc("14/09/2026 08:05", &u));
    ck_assert(!kdsim_parse_utc("", &u));
}
END_TEST

START_TEST(test_basic)
{
    ck_assert_int_eq(parse("# comment\n"
                           "timestamp,IncomingRecords,IncomingBytes\n"
                           "2026-09-14T00:00:00Z,600,614400\n"
                           "2026-09-14T00:01:00Z,1200,1228800\n"),
                     0);
    ck_assert_uint_eq(t.n, 2);
    ck_assert(t.has_bytes);
    ck_assert_double_eq(t.records[0], 600);
    ck_assert_double_eq(t.records[1], 1200);
    ck_assert_double_eq(t.bytes[1], 1228800);
    ck_assert_double_eq(t.total_records, 1800);
    ck_assert_int_eq(t.start_unix, 1789344000);
}
END_TEST

/* CloudWatch's shapes: quoted names with the statistic, other columns, CRLF, newest
 * first, a missing minute, an empty cell, no bytes column. */
START_TEST(test_shapes)
{
    ck_assert_int_eq(
        parse("\"Label\",\"IncomingBytes (Sum)\",\"Timestamp\",\"IncomingRecords (Sum)\"\r\n"
              "x,300,2026-09-14T00:03:00Z,3\r\n"
              "x,,2026-09-14T00:02:00Z,\r\n"
              "x,100,2026-09-14T00:00:00Z,1\r\n"),
        0);
    ck_assert_uint_eq(t.n, 4);
    ck_assert_double_eq(t.records[0], 1);
    ck_assert_double_eq(t.records[1], 0); /* no row: no data that minute */
    ck_assert_double_eq(t.records[2], 0); /* empty cells */
    ck_assert_double_eq(t.records[3], 3);
    ck_assert_double_eq(t.bytes[3], 300);
    ck_assert_double_eq(t.total_bytes, 400);
    ck_assert_int_eq(parse("time,incomingrecords\n1789344000,5\n1789344060,6\n"), 0);
    ck_assert(!t.has_bytes);
    ck_assert_double_eq(t.total_bytes, 0);
    ck_assert_uint_eq(t.n, 2);
}
END_TEST

START_TEST(test_errors)
{
    ck_assert_int_eq(parse("when,records\n1,2\n"), SIM_EINVAL);
    ck_assert_str_eq(first_error(),
                     "1:1: the header must name a time column (timestamp) and an IncomingRecords "
                     "column; no time column found; no IncomingRecords column found, as in: "
                     "timestamp,IncomingRecords,IncomingBytes");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:00:00Z,1\n"
                           "2026-09-14T00:01:00Z,-4\n"
                           "yesterday,5\n"
                           "2026-09-14T00:02:00Z\n"),
                     SIM_EINVAL);
    ck_assert_uint_eq(g.n, 3); /* every bad row, not just the first */
    ck_assert_str_eq(first_error(), "3:22: IncomingRecords: expected a count >= 0 (or an empty "
                                    "cell), got \"-4\"");
    ck_assert_int_eq(g.items[1].line, 4);
    ck_assert_int_eq(g.items[2].line, 5);
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:00:00Z,1\n"
                           "2026-09-14T00:01:30Z,2\n"),
                     SIM_EINVAL);
    ck_assert_str_eq(first_error(), "3:1: rows must be whole minutes apart: this one is 90 s "
                                    "after the first row's minute (the trace must have a "
                                    "1-minute period)");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:01:00Z,1\n"
                           "2026-09-14T00:01:00Z,2\n"),
                     SIM_EINVAL);
    ck_assert_str_eq(first_error(), "3:1: this minute already has a row (line 2)");
    ydiag_fini(&g);
    ydiag_init(&g);
    /* A bad cell does not hide the rows' timing errors, its own row's included. */
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:00:00Z,x\n"
                           "2026-09-14T00:01:00Z,2\n"
                           "2026-09-14T00:01:00Z,3\n"
                           "2026-09-14T00:02:30Z,4\n"),
                     SIM_EINVAL);
    ck_assert_uint_eq(g.n, 3);
    ck_assert_str_eq(first_error(), "2:22: IncomingRecords: expected a count >= 0 (or an empty "
                                    "cell), got \"x\"");
    ck_assert_int_eq(g.items[1].line, 4);
    ck_assert_str_eq(g.items[1].msg, "this minute already has a row (line 3)");
    ck_assert_int_eq(g.items[2].line, 5);
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("# only a comment\n"), SIM_EINVAL);
    ck_assert_int_eq(g.items[0].line, 0);
    ck_assert_int_eq(kdsim_trace_read("/nonexistent/trace.csv", &t, &g), SIM_EIO);
}
END_TEST

/* The shipped day: 1,440 minutes with a 5-minute gap, totals as an independent sum of
 * the file's cells gives them. */
START_TEST(test_sample_day)
{
    const char *file = tu_src("scenarios/data/sample-day.csv");
    ck_assert_int_eq(kdsim_trace_read(file, &t, &g), 0);
    ck_assert_uint_eq(t.n, 1440);
    FILE *f = fopen(file, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    double rec = 0, bytes = 0;
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        long long a, b;
        int hh, mm;
        if (sscanf(line, "2026-09-14T%d:%d:00Z,%lld,%lld", &hh, &mm, &a, &b) == 4) {
            ck_assert_double_eq(t.records[hh * 60 + mm], (double)a);
            rec += (double)a;
            bytes += (double)b;
            rows++;
        }
    }
    fclose(f);
    ck_assert_uint_eq(rows, 1435);
    ck_assert_double_eq(t.total_records, rec);
    ck_assert_double_eq(t.total_bytes, bytes);
    for (size_t m = 3 * 60 + 12; m < 3 * 60 + 17; m++)
        ck_assert_double_eq(t.records[m], 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trace_csv");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_times);
    tcase_add_test(core, test_basic);
    tcase_add_test(core, test_shapes);
    tcase_add_test(core, test_sample_day);
    suite_add_tcase(s, core);
    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_test(errors, test_errors);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
