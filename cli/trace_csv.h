/* trace_csv.h - reading a per-minute traffic trace: the CSV that CloudWatch gives for
 * a stream's IncomingRecords and IncomingBytes metrics (statistic Sum, period 1 minute).
 *
 * The format (docs/replay.md):
 *   - lines starting with '#' and blank lines are ignored;
 *   - the first other line is a header naming the columns, in any order and case, quotes
 *     allowed: a time column (`timestamp`, `time` or `date`), a records column (a name
 *     containing `IncomingRecords`) and optionally a bytes column (a name containing
 *     `IncomingBytes`); other columns are ignored;
 *   - each row is one minute: an ISO 8601 UTC time (`2026-09-14T08:05:00Z`,
 *     `2026-09-14 08:05`, a `+00:00` offset) or Unix seconds, and the minute's sums;
 *     rows may come in either time order (CloudWatch's GetMetricData returns newest
 *     first); times must fall on whole minutes from the first row's (in the file);
 *   - a minute without a row, or an empty cell, counts as 0: CloudWatch omits periods
 *     without data.
 */
#ifndef TRACE_CSV_H
#define TRACE_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ydoc.h"

typedef struct kdsim_trace {
    double *records;    /* owned; records in minute i (0 where the trace has no row) */
    double *bytes;      /* owned; bytes in minute i (0 without a bytes column) */
    size_t n;           /* minutes from the first row's to the last row's, inclusive */
    int64_t start_unix; /* time of minute 0, Unix seconds (UTC) */
    bool has_bytes;     /* the file has an IncomingBytes column */
    double total_records, total_bytes; /* sums over the trace (finite) */
    double busiest_records;            /* the largest minute's IncomingRecords */
    size_t busiest_line;               /* its row's line in the file (the first such row) */
    size_t busiest_col;                /* and its IncomingRecords cell's column (1-based) */
} kdsim_trace;

/* Read the trace in `file`. Every problem goes to `g` as file:line:col: message (the
 * column is the bad cell's), all of them; nothing is kept on failure. A leading UTF-8
 * byte order mark is skipped; counts must be finite and >= 0 and so must each column's
 * sum. Returns 0, SIM_EIO
 * (unreadable) or SIM_EINVAL. On any return, kdsim_trace_fini() is safe. At most
 * 400 days of minutes (the longest run). */
int kdsim_trace_read(const char *file, kdsim_trace *t, ydiag *g);

/* The same from memory; `name` is used in messages. */
int kdsim_trace_parse(const char *name, const char *text, size_t len, kdsim_trace *t, ydiag *g);

void kdsim_trace_fini(kdsim_trace *t); /* NULL-safe */

/* Parse a UTC time: ISO 8601 `YYYY-MM-DD[T ]HH:MM[:SS[.000]][Z|+00:00]` or Unix seconds.
 * Returns true and *unix_s, or false. Only the UTC offset is accepted, and a fraction of
 * a second only if it is zero (a replayed trace's rows fall on whole minutes). */
bool kdsim_parse_utc(const char *s, int64_t *unix_s);

#endif
