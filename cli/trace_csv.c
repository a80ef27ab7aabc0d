/* trace_csv.c - reading a per-minute CloudWatch trace of IncomingRecords and
 * IncomingBytes (trace_csv.h). */
#include "trace_csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

/* The longest trace: the longest run (400 days) in minutes. */
#define MAX_MINUTES (400 * 1440)
/* Cells in one row that we look at. */
#define MAX_CELLS 64

typedef struct row {
    int64_t t;      /* Unix seconds */
    double records; /* the minute's IncomingRecords */
    double bytes;   /* the minute's IncomingBytes (0 without the column) */
    size_t line;    /* 1-based, for messages */
    size_t col;     /* 1-based column of the time cell, for the timing messages */
    size_t rec_col; /* 1-based column of the IncomingRecords cell */
} row;

typedef struct cell {
    const char *s; /* start, inside the line (quotes stripped) */
    size_t len;
    size_t col; /* 1-based column of the cell's first character */
} cell;

/* ---- times -------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
 * days_from_civil), so that no time zone or locale gets involved. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Read exactly `n` digits at *p into *out. */
static bool digits(const char **p, int n, int64_t *out)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

bool kdsim_parse_utc(const char *s, int64_t *unix_s)
{
    const char *p = s;
    bool all_digits = *p != 0;
    for (const char *q = p; *q; q++)
        all_digits = all_digits && isdigit((unsigned char)*q);
    if (all_digits && strlen(p) <= 12) {
        *unix_s = strtoll(p, NULL, 10);
        return true;
    }
    int64_t y, mo, d, h, mi, sec = 0;
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
        !digits(&p, 2, &d) || (*p != 'T' && *p != ' ') || !(p++, digits(&p, 2, &h)) ||
        *p++ != ':' || !digits(&p, 2, &mi))
        return false;
    if (*p == ':') {
        p++;
        if (!digits(&p, 2, &sec))
            return false;
        if (*p == '.') /* fractions of a second: CloudWatch's are .000, and only those */
            for (p++; isdigit((unsigned char)*p); p++)
                if (*p != '0')
                    return false; /* a time off the whole second: rows are whole minutes */
    }
    if (*p == 'Z')
        p++;
    else if (!strcmp(p, "+00:00") || !strcmp(p, "+0000"))
        p += strlen(p);
    if (*p)
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || h > 23 || mi > 59 ||
        sec > 60)
        return false;
    *unix_s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    return true;
}

/* ---- cells -------------------------------------------------------------------------- */

/* Split one line (without its newline) into cells at commas outside double quotes. */
static size_t split(const char *line, size_t len, cell *cells)
{
    size_t n = 0, i = 0;
    while (n < MAX_CELLS) {
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        cell c = {line + i, 0, i + 1};
        if (i < len && line[i] == '"') {
            size_t j = i + 1;
            while (j < len && line[j] != '"')
                j++;
            c.s = line + i + 1;
            c.len = j - i - 1;
            i = j < len ? j + 1 : j;
            while (i < len && line[i] != ',')
                i++;
        } else {
            size_t j = i;
            while (j < len && line[j] != ',')
                j++;
            size_t e = j;
            while (e > i && (line[e - 1] == ' ' || line[e - 1] == '\t'))
                e--;
            c.len = e - i;
            i = j;
        }
        cells[n++] = c;
        if (i >= len)
            break;
        i++; /* the comma */
    }
    return n;
}

/* The cell as a lower-case NUL-terminated name without spaces. */
static void cell_name(const cell *c, char *buf, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < c->len && k + 1 < n; i++)
        if (!isspace((unsigned char)c->s[i]))
            buf[k++] = (char)tolower((unsigned char)c->s[i]);
    buf[k] = 0;
}

static void cell_text(const cell *c, char *buf, size_t n)
{
    size_t k = c->len < n - 1 ? c->len : n - 1;
    memcpy(buf, c->s, k);
    buf[k] = 0;
}

/* One error at line:col (1-based; line 0: no position) of the trace. */
static void err_at(ydiag *g, const char *name, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void err_at(ydiag *g, const char *name, size_t line, size_t col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    yaml_mark_t m = {0, line ? line - 1 : 0, col ? col - 1 : 0};
    ydiag_add(g, name, line ? &m : NULL, "", "%s", msg);
}

/* By time, then by line: rows of one minute stay in the file's order. */
static int by_time(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* A count cell: empty is 0 (a period without data), else a finite number >= 0. */
static bool read_count(const cell *c, double *out)
{
    char buf[64];
    if (c->len == 0) {
        *out = 0;
        return true;
    }
    if (c->len >= sizeof buf)
        return false;
    cell_text(c, buf, sizeof buf);
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end || errno || !isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

int kdsim_trace_parse(const char *name, const char *text, size_t len, kdsim_trace *t, ydiag *g)
{
    memset(t, 0, sizeof *t);
    size_t before = g->n;
    int tcol = -1, rcol = -1, bcol = -1;
    bool header = false;
    row *rows = NULL;
    size_t n_rows = 0, cap = 0;
    size_t line_no = 0;
    /* The first row's time (in the file's order): every row falls on a whole minute
     * from it. */
    bool have_first = false;
    int64_t first_t = 0;
    size_t first_line = 0;
    /* Running sums in the file's order, to refuse one that is no longer finite. */
    double sum_records = 0, sum_bytes = 0;
    /* A UTF-8 byte order mark (as some spreadsheets write) is not part of the header. */
    size_t start = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    for (size_t pos = start; pos < len;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl != NULL);
        line_no++;
        if (ll > 0 && line[ll - 1] == '\r')
            ll--;
        size_t lead = 0;
        while (lead < ll && (line[lead] == ' ' || line[lead] == '\t'))
            lead++;
        if (lead == ll || line[lead] == '#')
            continue;
        cell cells[MAX_CELLS];
        size_t nc = split(line, ll, cells);
        if (!header) {
            header = true;
            for (size_t i = 0; i < nc; i++) {
                char nm[128];
                cell_name(&cells[i], nm, sizeof nm);
                int *slot = NULL;
                if (strstr(nm, "incomingrecords"))
                    slot = &rcol;
                else if (strstr(nm, "incomingbytes"))
                    slot = &bcol;
                else if (!strncmp(nm, "timestamp", 9) || !strcmp(nm, "time") || !strcmp(nm, "date"))
                    slot = &tcol;
                if (slot && *slot >= 0)
                    err_at(g, name, line_no, cells[i].col, "column %s appears twice in the header",
                           nm);
                else if (slot)
                    *slot = (int)i;
            }
            if (tcol < 0 || rcol < 0) {
                err_at(g, name, line_no, 1,
                       "the header must name a time column (timestamp) and an IncomingRecords "
                       "column%s%s, as in: timestamp,IncomingRecords,IncomingBytes",
                       tcol < 0 ? "; no time column found" : "",
                       rcol < 0 ? "; no IncomingRecords column found" : "");
                break;
            }
            continue;
        }
        int need = tcol > rcol ? tcol : rcol;
        if (bcol > need)
            need = bcol;
        if ((int)nc <= need) {
            err_at(g, name, line_no, 1, "expected at least %d cells as in the header, got %zu",
                   need + 1, nc);
            continue;
        }
        const cell *tc = &cells[tcol];
        row r = {0, 0, 0, line_no, tc->col, cells[rcol].col};
        char buf[64];
        if (tc->len >= sizeof buf) {
            err_at(g, name, line_no, tc->col, "expected a UTC time like 2026-09-14T08:05:00Z");
            continue;
        }
        cell_text(tc, buf, sizeof buf);
        bool time_ok = kdsim_parse_utc(buf, &r.t);
        if (!time_ok)
            err_at(g, name, line_no, tc->col,
                   "expected a UTC time on a whole second, like 2026-09-14T08:05:00Z (or "
                   ".000Z) or Unix seconds, got \"%s\"",
                   buf);
        if (!read_count(&cells[rcol], &r.records)) {
            cell_text(&cells[rcol], buf, sizeof buf);
            err_at(g, name, line_no, cells[rcol].col,
                   "IncomingRecords: expected a count >= 0 (or an empty cell), got \"%s\"", buf);
        } else if (isfinite(sum_records) && !isfinite(sum_records += r.records)) {
            err_at(g, name, line_no, cells[rcol].col,
                   "IncomingRecords: the column's sum is beyond what a double holds by this "
                   "row (%g records)",
                   r.records);
        }
        if (bcol >= 0 && !read_count(&cells[bcol], &r.bytes)) {
            cell_text(&cells[bcol], buf, sizeof buf);
            err_at(g, name, line_no, cells[bcol].col,
                   "IncomingBytes: expected a count >= 0 (or an empty cell), got \"%s\"", buf);
        } else if (bcol >= 0 && isfinite(sum_bytes) && !isfinite(sum_bytes += r.bytes)) {
            err_at(g, name, line_no, cells[bcol].col,
                   "IncomingBytes: the column's sum is beyond what a double holds by this row "
                   "(%g bytes)",
                   r.bytes);
        }
        /* A row whose time reads takes part in the timing checks below even when a count
         * is bad: every error of the file is reported at once. */
        if (!time_ok)
            continue;
        if (!have_first) {
            have_first = true;
            first_t = r.t;
            first_line = line_no;
        }
        if (n_rows == cap) {
            cap = cap ? cap * 2 : 1024;
            rows = realloc(rows, cap * sizeof *rows);
            SIM_ASSERT(rows != NULL);
        }
        rows[n_rows++] = r;
    }
    if (!header)
        err_at(g, name, 0, 0,
               "the trace is empty: it needs a header line "
               "(timestamp,IncomingRecords,IncomingBytes) and one row a minute");
    else if (g->n == before && n_rows == 0)
        err_at(g, name, 0, 0, "the trace has a header but no rows");
    if (n_rows == 0) {
        free(rows);
        return g->n > before ? SIM_EINVAL : 0;
    }
    /* Every row is checked against the file's first row, whichever way the file runs:
     * in a newest-first file a misaligned oldest row is the one reported. */
    qsort(rows, n_rows, sizeof *rows, by_time);
    int64_t t0 = rows[0].t;
    size_t group = 0; /* the first row (in the file) of the current minute */
    for (size_t i = 0; i < n_rows; i++) {
        int64_t off = rows[i].t - first_t;
        if (rows[i].t != rows[group].t)
            group = i;
        if (off % 60 != 0)
            err_at(g, name, rows[i].line, rows[i].col,
                   "rows must be whole minutes apart: this one is %lld s %s the first row's "
                   "minute (line %zu; the trace must have a 1-minute period)",
                   (long long)(off < 0 ? -off : off), off < 0 ? "before" : "after", first_line);
        else if (group != i)
            err_at(g, name, rows[i].line, rows[i].col, "this minute already has a row (line %zu)",
                   rows[group].line);
    }
    if ((rows[n_rows - 1].t - t0) / 60 >= MAX_MINUTES)
        err_at(g, name, rows[n_rows - 1].line, rows[n_rows - 1].col,
               "the trace spans more than 400 days (the longest run)");
    if (g->n > before) {
        free(rows);
        return SIM_EINVAL;
    }
    size_t n = (size_t)((rows[n_rows - 1].t - t0) / 60) + 1;
    t->records = calloc(n, sizeof *t->records);
    t->bytes = calloc(n, sizeof *t->bytes);
    SIM_ASSERT(t->records != NULL && t->bytes != NULL);
    t->n = n;
    t->start_unix = t0;
    t->has_bytes = bcol >= 0;
    for (size_t i = 0; i < n_rows; i++) {
        size_t k = (size_t)((rows[i].t - t0) / 60);
        if (i == 0 || rows[i].records > t->busiest_records ||
            (rows[i].records == t->busiest_records && rows[i].line < t->busiest_line)) {
            t->busiest_records = rows[i].records;
            t->busiest_line = rows[i].line;
            t->busiest_col = rows[i].rec_col;
        }
        t->records[k] = rows[i].records;
        t->bytes[k] = rows[i].bytes;
        t->total_records += rows[i].records;
        t->total_bytes += rows[i].bytes;
    }
    free(rows);
    return 0;
}

int kdsim_trace_read(const char *file, kdsim_trace *t, ydiag *g)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(file, "rb");
    if (!f) {
        ydiag_add(g, file, NULL, "", "cannot open the trace: %s", strerror(errno));
        return SIM_EIO;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 > cap) {
            cap = cap ? cap * 2 : 262144;
            text = realloc(text, cap);
            SIM_ASSERT(text != NULL);
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (bad) {
        free(text);
        /* A directory opens on Linux and fails to read (EISDIR). */
        ydiag_add(g, file, NULL, "", "cannot read the trace: %s", strerror(bad));
        return SIM_EIO;
    }
    int rc = kdsim_trace_parse(file, text, len, t, g);
    free(text);
    return rc;
}

void kdsim_trace_fini(kdsim_trace *t)
{
    if (!t)
        return;
    free(t->records);
    free(t->bytes);
    memset(t, 0, sizeof *t);
}
