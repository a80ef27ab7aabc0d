/* check_trace_csv.c - tests of the CloudWatch trace reader (trace_csv.h): times in
 * ISO 8601 and Unix seconds, headers in any order and case, newest-first rows, missing
 * minutes and empty cells as 0, every bad row reported at its line and cell (rows aligned
 * to the file's first row, timing errors at the time cell), a byte order mark, impossible
 * dates and sums past a double, and the shipped sample day read to the record.
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

/* The i-th diagnostic as `line:col: msg`. */
static const char *error_at(size_t i)
{
    static char buf[512];
    ck_assert_uint_gt(g.n, i);
    snprintf(buf, sizeof buf, "%ld:%ld: %s", g.items[i].line, g.items[i].col, g.items[i].msg);
    return buf;
}

static const char *first_error(void)
{
    return error_at(0);
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
    /* A fraction of a second other than zero: its row would not fall on a whole minute
     * (a row at 00:01:00.999 was taken as 00:01:00). */
    ck_assert(!kdsim_parse_utc("2026-09-14T08:05:00.999Z", &u));
    ck_assert(!kdsim_parse_utc("2026-09-14T08:04:59.5Z", &u));
    ck_assert(kdsim_parse_utc("2026-09-14T08:05:00.000000Z", &u));
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
                                    "after the first row's minute (line 2; the trace must have "
                                    "a 1-minute period)");
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

/* Rows are aligned to the file's first row, not to the earliest: newest first, only the
 * oldest row (the last line) is off, and it alone is reported. */
START_TEST(test_aligned_to_first_row)
{
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:03:00Z,1\n"
                           "2026-09-14T00:02:00Z,1\n"
                           "2026-09-14T00:01:00Z,1\n"
                           "2026-09-14T00:00:30Z,1\n"),
                     SIM_EINVAL);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_str_eq(error_at(0), "5:1: rows must be whole minutes apart: this one is 150 s "
                                  "before the first row's minute (line 2; the trace must have "
                                  "a 1-minute period)");
}
END_TEST

/* Timing errors point at the time cell, wherever its column is; a minute given three
 * times names its first row twice. */
START_TEST(test_timing_columns)
{
    ck_assert_int_eq(parse("IncomingBytes,IncomingRecords,Timestamp\n"
                           "102400,100,2026-09-14T00:01:00Z\n"
                           "102400,100,2026-09-14T00:01:00Z\n"
                           "102400,100,2026-09-14T00:00:30Z\n"
                           "102400,100,2026-09-14T00:01:00Z\n"),
                     SIM_EINVAL);
    ck_assert_uint_eq(g.n, 3);
    ck_assert_str_eq(error_at(0), "4:12: rows must be whole minutes apart: this one is 30 s "
                                  "before the first row's minute (line 2; the trace must have "
                                  "a 1-minute period)");
    ck_assert_str_eq(error_at(1), "3:12: this minute already has a row (line 2)");
    ck_assert_str_eq(error_at(2), "5:12: this minute already has a row (line 2)");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("IncomingRecords, time\n"
                           "1, 2026-09-14T00:00:00Z\n"
                           "1, 2027-10-20T00:00:00Z\n"),
                     SIM_EINVAL);
    ck_assert_str_eq(first_error(), "3:4: the trace spans more than 400 days (the longest run)");
}
END_TEST

/* A byte order mark before the header, an impossible date, sums past a double, a
 * directory for a file, the busiest minute's row. */
START_TEST(test_edges)
{
    ck_assert_int_eq(parse("\xEF\xBB\xBFtimestamp,IncomingRecords\n2026-09-14T00:00:00Z,5\n"), 0);
    ck_assert_double_eq(t.records[0], 5);
    int64_t u;
    ck_assert(!kdsim_parse_utc("2026-02-29T00:00:00Z", &u));
    ck_assert(!kdsim_parse_utc("2100-02-29T00:00:00Z", &u));
    ck_assert(kdsim_parse_utc("2000-02-29T00:00:00Z", &u));
    ck_assert(!kdsim_parse_utc("2026-04-31T00:00:00Z", &u));
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-02-28T23:59:00Z,60\n"
                           "2026-02-29T00:00:00Z,60\n"),
                     SIM_EINVAL);
    ck_assert_str_eq(first_error(), "3:1: expected a UTC time on a whole second, like "
                                    "2026-09-14T08:05:00Z (or .000Z) or Unix seconds, got "
                                    "\"2026-02-29T00:00:00Z\"");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("timestamp,IncomingRecords,IncomingBytes\n"
                           "2026-09-14T00:00:00Z,1e308,1e308\n"
                           "2026-09-14T00:01:00Z,1e308,1e308\n"
                           "2026-09-14T00:02:00Z,1e308,1e308\n"),
                     SIM_EINVAL);
    ck_assert_uint_eq(g.n, 2); /* once a column, where its sum stops being finite */
    ck_assert_str_eq(error_at(0), "3:22: IncomingRecords: the column's sum is beyond what a "
                                  "double holds by this row (1e+308 records)");
    ck_assert_str_eq(error_at(1), "3:28: IncomingBytes: the column's sum is beyond what a "
                                  "double holds by this row (1e+308 bytes)");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(kdsim_trace_read(tu_src("scenarios/data"), &t, &g), SIM_EIO);
    ck_assert_str_eq(g.items[0].msg, "cannot read the trace: Is a directory");
    ydiag_fini(&g);
    ydiag_init(&g);
    ck_assert_int_eq(parse("timestamp,IncomingRecords\n"
                           "2026-09-14T00:02:00Z,7\n"
                           "2026-09-14T00:01:00Z,  9\n"
                           "2026-09-14T00:00:00Z,9\n"),
                     0);
    ck_assert_double_eq(t.busiest_records, 9);
    ck_assert_uint_eq(t.busiest_line, 3);
    ck_assert_uint_eq(t.busiest_col, 24);
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
    tcase_add_test(errors, test_aligned_to_first_row);
    tcase_add_test(errors, test_timing_columns);
    tcase_add_test(errors, test_edges);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(suite());
}
