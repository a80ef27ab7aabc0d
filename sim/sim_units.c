/* sim_units.c - parsing and printing of durations, sizes and rates (sim_units.h).
 *
 * Every parser reads: optional spaces, a non-negative decimal number, optional spaces,
 * a unit, optional spaces. The number's syntax is checked here rather than left to
 * strtod, which would also take hex, "inf", "nan" and locale-specific decimal points.
 * Numbers without an exponent are converted exactly (integer arithmetic); only rates,
 * which are doubles anyway, and numbers with an exponent go through strtod.
 */
#include "sim_units.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

/* ---- tables ----------------------------------------------------------------------- */

typedef struct unit {
    const char *name;
    uint64_t scale; /* nanoseconds or bytes per unit */
} unit;

/* "m" is minutes, as in the shell's sleep and in Go: no scenario measures metres. */
static const unit time_units[] = {
    {"ns", 1},
    {"us", UINT64_C(1000)},
    {"ms", UINT64_C(1000000)},
    {"s", UINT64_C(1000000000)},
    {"m", UINT64_C(60000000000)},
    {"min", UINT64_C(60000000000)},
    {"h", UINT64_C(3600000000000)},
    {"d", UINT64_C(86400000000000)},
};

static const unit size_units[] = {
    {"B", 1},
    {"KiB", UINT64_C(1) << 10},
    {"MiB", UINT64_C(1) << 20},
    {"GiB", UINT64_C(1) << 30},
    {"TiB", UINT64_C(1) << 40},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- lexing ----------------------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Products of a decimal fraction and a unit scale need up to 111 bits; gcc and clang
 * provide them, and __extension__ keeps -Wpedantic quiet (as in models/kds_hashkey.h). */
__extension__ typedef unsigned __int128 u128;

/* A parsed number. Written without an exponent and with at most 19 fraction digits,
 * it is also kept exactly as whole + frac / 10^frac_digits, so that "1.000000001s" is
 * exactly 1000000001 ns and printed durations read back to the nanosecond. */
typedef struct number {
    double v;             /* the value, possibly rounded */
    bool exact;           /* whether whole, frac and frac_digits hold it exactly */
    uint64_t whole;       /* integer part */
    uint64_t frac;        /* fraction digits as an integer */
    unsigned frac_digits; /* how many (0 to 19) */
} number;

/* Longest number accepted; longer spellings are surely a mistake. */
#define NUM_MAX 96
#define FRAC_MAX 19 /* 10^19 < 2^64 */

static uint64_t pow10_u64(unsigned k)
{
    uint64_t p = 1;
    while (k--)
        p *= 10;
    return p;
}

/* Read a number at *pp and advance past it. Returns SIM_ESYNTAX when there is no
 * number, SIM_ERANGE when it is negative or too large for a double. */
static int lex_number(const char **pp, number *out)
{
    const char *p = *pp;
    if (*p == '-' && (is_digit(p[1]) || (p[1] == '.' && is_digit(p[2]))))
        return SIM_ERANGE;
    const char *start = p;
    size_t int_digits = 0, frac_digits = 0;
    while (is_digit(*p)) {
        p++;
        int_digits++;
    }
    const char *dot = NULL;
    if (*p == '.') {
        dot = p++;
        while (is_digit(*p)) {
            p++;
            frac_digits++;
        }
    }
    if (int_digits + frac_digits == 0)
        return SIM_ESYNTAX;
    bool exponent = false;
    if (*p == 'e' || *p == 'E') {
        /* Only an exponent with digits is one: "5e" is 5 with the unknown unit "e". */
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (is_digit(*q)) {
            exponent = true;
            while (is_digit(*q))
                q++;
            p = q;
        }
    }
    size_t len = (size_t)(p - start);
    if (len >= NUM_MAX)
        return SIM_ESYNTAX;

    /* The exact form: strtoull is locale-independent for plain digits. */
    char buf[NUM_MAX + 8];
    out->exact = false;
    if (!exponent && frac_digits <= FRAC_MAX) {
        memcpy(buf, start, int_digits);
        buf[int_digits] = '\0';
        errno = 0;
        unsigned long long w = int_digits ? strtoull(buf, NULL, 10) : 0;
        if (errno == 0) {
            uint64_t f = 0;
            for (size_t i = 0; i < frac_digits; i++)
                f = f * 10 + (uint64_t)(dot[1 + i] - '0');
            out->exact = true;
            out->whole = (uint64_t)w;
            out->frac = f;
            out->frac_digits = (unsigned)frac_digits;
        }
    }

    memcpy(buf, start, len);
    buf[len] = '\0';
    if (dot) {
        /* strtod honours LC_NUMERIC; give it the decimal point it expects. */
        const char *dp = localeconv()->decimal_point;
        size_t dpl = dp ? strlen(dp) : 0;
        if (dpl > 0 && dpl < 8 && strcmp(dp, ".") != 0) {
            char *d = buf + (dot - start);
            memmove(d + dpl, d + 1, strlen(d + 1) + 1);
            memcpy(d, dp, dpl);
        }
    }
    errno = 0;
    double v = strtod(buf, NULL);
    /* ERANGE also flags underflow ("1e-400"), which is simply 0 here. */
    if ((errno == ERANGE && v > 1.0) || !isfinite(v))
        return SIM_ERANGE;
    out->v = v;
    *pp = p;
    return SIM_OK;
}

/* Whether the number is a whole one ("100", "100.0", "1e2"). */
static bool is_whole(const number *n)
{
    return n->exact ? n->frac == 0 : n->v == floor(n->v);
}

static const char *skip_spaces(const char *p)
{
    while (is_space(*p))
        p++;
    return p;
}

/* The end of s with trailing spaces dropped. */
static const char *trim_end(const char *s)
{
    const char *e = s + strlen(s);
    while (e > s && is_space(e[-1]))
        e--;
    return e;
}

static bool token_is(const char *s, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(e - s) == n && memcmp(s, lit, n) == 0;
}

static const unit *find_unit(const unit *tab, size_t n, const char *s, const char *e)
{
    for (size_t i = 0; i < n; i++)
        if (token_is(s, e, tab[i].name))
            return &tab[i];
    return NULL;
}

/* A unit token must start with a letter (or '/' for "60/min"); anything else after a
 * number ("1.2.3s", "5,5s") is malformed rather than an unknown unit. */
static int junk_code(char c)
{
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return letter || c == '/' ? SIM_EUNIT : SIM_ESYNTAX;
}

/* n * scale rounded to the nearest integer (halves up), or SIM_ERANGE when it exceeds
 * `limit`. Exact for numbers written without an exponent. */
static int scale_to(const number *n, uint64_t scale, uint64_t limit, uint64_t *out)
{
    if (n->exact) {
        if (n->whole > limit / scale)
            return SIM_ERANGE;
        uint64_t r = n->whole * scale;
        if (n->frac_digits > 0) {
            uint64_t den = pow10_u64(n->frac_digits);
            u128 prod = (u128)n->frac * scale;
            uint64_t q = (uint64_t)(prod / den); /* < scale, as frac < den */
            uint64_t rem = (uint64_t)(prod % den);
            if (rem >= den - rem)
                q++;
            if (q > limit - r)
                return SIM_ERANGE;
            r += q;
        }
        *out = r;
        return SIM_OK;
    }
    double x = round(n->v * (double)scale);
    /* (double)limit is limit rounded up to 2^63 or 2^64; anything below it fits. */
    if (!(x < (double)limit))
        return SIM_ERANGE;
    *out = (uint64_t)x;
    return SIM_OK;
}

/* ---- parsers ---------------------------------------------------------------------- */

/* What every parser starts with: the number, then [*p, *end) is the unit text with the
 * blanks around it cut off. The blanks after the number may be the trailing ones that
 * trim_end already removed ("1 \t"), so *p never passes *end (a read past the end the
 * fuzzer found). */
static int lex_head(const char *text, const char **p, const char **end, number *n)
{
    *p = skip_spaces(text);
    *end = trim_end(*p);
    int rc = lex_number(p, n);
    if (rc)
        return rc;
    *p = skip_spaces(*p);
    if (*p > *end)
        *p = *end;
    return SIM_OK;
}

int sim_parse_duration(const char *text, sim_time *out)
{
    const char *p, *end;
    number n;
    int rc = lex_head(text, &p, &end, &n);
    if (rc)
        return rc;
    if (p == end) {
        /* A bare zero needs no unit; any other bare number is ambiguous. */
        if (n.v != 0)
            return SIM_EUNIT;
        *out = 0;
        return SIM_OK;
    }
    const unit *u = find_unit(time_units, COUNT(time_units), p, end);
    if (!u)
        return junk_code(*p);
    uint64_t ns;
    rc = scale_to(&n, u->scale, (uint64_t)INT64_MAX, &ns);
    if (rc)
        return rc;
    *out = (sim_time)ns;
    return SIM_OK;
}

int sim_parse_bytes(const char *text, uint64_t *out)
{
    const char *p, *end;
    number n;
    int rc = lex_head(text, &p, &end, &n);
    if (rc)
        return rc;
    const unit *u;
    if (p == end) {
        /* A bare integer is a byte count; "1.5" alone names no unit to round in. */
        if (!is_whole(&n))
            return SIM_EUNIT;
        u = &size_units[0];
    } else {
        u = find_unit(size_units, COUNT(size_units), p, end);
        if (!u)
            return junk_code(*p);
    }
    return scale_to(&n, u->scale, UINT64_MAX, out);
}

/* Split "<left>/<right>" at the slash of [p, end) and look up the time unit on the
 * right. [p, *le) is the (possibly empty) text before the slash, spaces dropped. */
static int split_per(const char *p, const char *end, const char **le, uint64_t *per_ns)
{
    const char *slash = memchr(p, '/', (size_t)(end - p));
    if (!slash)
        return p == end ? SIM_EUNIT : junk_code(*p);
    const char *e = slash;
    while (e > p && is_space(e[-1]))
        e--;
    *le = e;
    const char *r = skip_spaces(slash + 1);
    const unit *u = find_unit(time_units, COUNT(time_units), r, end);
    if (!u)
        return SIM_EUNIT;
    *per_ns = u->scale;
    return SIM_OK;
}

int sim_parse_byte_rate(const char *text, double *bytes_per_s)
{
    const char *p, *end;
    number n;
    int rc = lex_head(text, &p, &end, &n);
    if (rc)
        return rc;
    if (p == end && n.v == 0) {
        *bytes_per_s = 0;
        return SIM_OK;
    }
    const char *le;
    uint64_t per_ns;
    rc = split_per(p, end, &le, &per_ns);
    if (rc)
        return rc;
    uint64_t scale = 1; /* a bare number is bytes */
    if (le > p) {
        const unit *u = find_unit(size_units, COUNT(size_units), p, le);
        if (!u)
            return junk_code(*p);
        scale = u->scale;
    }
    double v = n.v * (double)scale * (1e9 / (double)per_ns);
    if (!isfinite(v))
        return SIM_ERANGE;
    *bytes_per_s = v;
    return SIM_OK;
}

int sim_parse_count_rate(const char *text, const char *word, double *per_s)
{
    const char *p, *end;
    number n;
    int rc = lex_head(text, &p, &end, &n);
    if (rc)
        return rc;
    if (p == end && n.v == 0) {
        *per_s = 0;
        return SIM_OK;
    }
    const char *le;
    uint64_t per_ns;
    rc = split_per(p, end, &le, &per_ns);
    if (rc)
        return rc;
    if (le > p) {
        /* The word, or its singular ("1 record/s" reads better than "1 records/s"). */
        bool ok = false;
        if (word) {
            size_t wl = strlen(word);
            size_t tl = (size_t)(le - p);
            ok = token_is(p, le, word) ||
                 (wl > 1 && word[wl - 1] == 's' && tl == wl - 1 && memcmp(p, word, tl) == 0);
        }
        if (!ok)
            return junk_code(*p);
    }
    double v = n.v * (1e9 / (double)per_ns);
    if (!isfinite(v))
        return SIM_ERANGE;
    *per_s = v;
    return SIM_OK;
}

/* ---- printing --------------------------------------------------------------------- */

/* Drop trailing zeros of a decimal fraction, and the point if nothing is left. */
static void trim_fraction(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot)
        return;
    char *e = s + strlen(s);
    while (e > dot + 1 && e[-1] == '0')
        e--;
    if (e == dot + 1)
        e = dot;
    *e = '\0';
}

char *sim_fmt_duration(char *buf, size_t n, sim_time t)
{
    if (n == 0)
        return buf;
    /* Through uint64_t so that INT64_MIN has a magnitude. */
    uint64_t mag = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    const char *sign = t < 0 ? "-" : "";
    if (mag == 0) {
        snprintf(buf, n, "0s");
        return buf;
    }
    /* Largest unit that the value reaches and that shows it exactly in 3 decimals;
     * "min" is skipped in favour of the shorter "m", which parses the same. */
    for (size_t i = COUNT(time_units); i-- > 0;) {
        const unit *u = &time_units[i];
        if (strcmp(u->name, "min") == 0)
            continue;
        if (u->scale == 1) {
            snprintf(buf, n, "%s%" PRIu64 "ns", sign, mag);
            return buf;
        }
        uint64_t milli = u->scale / 1000; /* every unit above ns is a multiple of 1000 */
        if (mag < u->scale || mag % milli != 0)
            continue;
        char num[48];
        snprintf(num, sizeof num, "%" PRIu64 ".%03" PRIu64, mag / u->scale,
                 (mag % u->scale) / milli);
        trim_fraction(num);
        snprintf(buf, n, "%s%s%s", sign, num, u->name);
        return buf;
    }
    buf[0] = '\0'; /* not reached: ns always matches */
    return buf;
}

char *sim_fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    if (n == 0)
        return buf;
    size_t i = COUNT(size_units) - 1;
    while (i > 0 && bytes < size_units[i].scale)
        i--;
    uint64_t scale = size_units[i].scale;
    uint64_t whole = bytes / scale;
    /* Hundredths, rounded half up; r < scale <= 2^40, so r * 100 cannot overflow. */
    uint64_t hund = ((bytes % scale) * 100 + scale / 2) / scale;
    if (hund == 100) {
        whole++;
        hund = 0;
    }
    /* 1023.999 KiB rounds to 1024 KiB, which reads better as 1 MiB. */
    if (whole == 1024 && i + 1 < COUNT(size_units)) {
        whole = 1;
        i++;
    }
    char num[48];
    snprintf(num, sizeof num, "%" PRIu64 ".%02" PRIu64, whole, hund);
    trim_fraction(num);
    snprintf(buf, n, "%s %s", num, size_units[i].name);
    return buf;
}

const char *sim_units_hint(char kind)
{
    switch (kind) {
    case 'd':
        return "a duration like 500ms, 30s, 10m, 6h or 7d (units ns, us, ms, s, m or min, "
               "h, d)";
    case 'b':
        return "a size like 512 B, 25 KiB or 1 MiB (binary units B, KiB, MiB, GiB, TiB; "
               "KB, MB and GB are ambiguous, since AWS's GB means GiB)";
    case 'r':
        return "a byte rate like 1 MiB/s, 500 KiB/s or 2 MiB/min";
    case 'c':
        return "a count rate like 1000 records/s, 5/s or 60/min";
    }
    return "a non-negative number followed by a unit";
}
