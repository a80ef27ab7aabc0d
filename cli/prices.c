/* prices.c - price files and the scenario's `billing` settings (prices.h). */
#include "prices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

#define PATH 256
/* The sections of a price file, at most this many items each. */
#define MAX_ITEMS 16

#ifndef KDSIM_DEFAULT_PRICES
#define KDSIM_DEFAULT_PRICES "scenarios/prices/us-east-1-2026-09.yaml"
#endif

/* A headroom above 1000 % is surely a typo. */
#define HEADROOM_MAX (10 * KDS_NANO_PER_UNIT)
/* A month is at most a leap year's worth of hours (month_hours is for 730-hour months
 * and the like, not for years, but nothing breaks up to here). */
#define MONTH_HOURS_MAX 8784

const char *kdsim_default_prices(void)
{
    return KDSIM_DEFAULT_PRICES;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    SIM_ASSERT(d != NULL);
    return memcpy(d, s, n);
}

void kdsim_billing_init(kdsim_billing *b)
{
    memset(b, 0, sizeof *b);
    kds_billing_settings_defaults(&b->settings);
}

void kdsim_billing_fini(kdsim_billing *b)
{
    if (!b)
        return;
    free(b->file);
    free(b->path);
    free(b->region);
    free(b->as_of);
    free(b->overridden);
    memset(b, 0, sizeof *b);
}

int kdsim_parse_decimal(const char *text, kds_nano max, kds_nano *out)
{
    const char *p = text;
    uint64_t whole = 0, frac = 0;
    int wdigits = 0, fdigits = 0;
    for (; *p >= '0' && *p <= '9'; p++, wdigits++) {
        if (whole > (uint64_t)max / KDS_NANO_PER_UNIT)
            return SIM_ERANGE; /* keep going would overflow; it is too big anyway */
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
            if (fdigits < 9)
                frac = frac * 10 + (uint64_t)(*p - '0');
            else if (*p != '0')
                return SIM_ELIMIT; /* trailing zeros beyond 9 places are harmless */
        }
    }
    if (*p != '\0' || wdigits + fdigits == 0)
        return SIM_ESYNTAX;
    for (int i = fdigits; i < 9; i++)
        frac *= 10;
    if (whole > (uint64_t)max / KDS_NANO_PER_UNIT)
        return SIM_ERANGE;
    uint64_t v = whole * (uint64_t)KDS_NANO_PER_UNIT + frac;
    if (v > (uint64_t)max)
        return SIM_ERANGE;
    *out = (kds_nano)v;
    return 0;
}

/* ---- the price list by section ---------------------------------------------------- */

typedef struct section {
    const char *name;
    const char *keys[MAX_ITEMS + 1]; /* NULL-terminated */
    const kds_price_desc *items[MAX_ITEMS];
    size_t n;
} section;

/* The sections of kds_price_list in order, with their keys. */
static size_t sections_of(section *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < kds_price_list_len; i++) {
        const kds_price_desc *d = &kds_price_list[i];
        size_t s = 0;
        while (s < n && strcmp(out[s].name, d->section) != 0)
            s++;
        if (s == n) {
            SIM_ASSERT(n < cap);
            memset(&out[n], 0, sizeof out[n]);
            out[n++].name = d->section;
        }
        SIM_ASSERT(out[s].n < MAX_ITEMS);
        out[s].items[out[s].n] = d;
        out[s].keys[out[s].n++] = d->key;
    }
    return n;
}

/* "USD per shard-hour" -> the wording of a message about a bad value. */
static const char *value_kind(const kds_price_desc *d)
{
    return strncmp(d->unit, "USD", 3) == 0 ? "a price in US dollars" : "a rate in MiB/s";
}

/* Read one value at map[key] (a scalar) into *out. Returns whether it was valid;
 * reports a bad one. */
static bool read_value(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                       const char *what, kds_nano max, kds_nano *out)
{
    char kp[PATH];
    yw_path(kp, sizeof kp, path, key);
    yaml_node_t *n = yw_get(w, map, key);
    const char *text = n ? yw_scalar(w, n, kp) : NULL;
    if (!text)
        return false;
    kds_nano v = 0;
    int rc = kdsim_parse_decimal(text, max, &v);
    if (rc == SIM_ERANGE)
        yw_error(w, n, kp, "expected %s from 0 to %lld, got \"%s\"", what,
                 (long long)(max / KDS_NANO_PER_UNIT), text);
    else if (rc == SIM_ELIMIT)
        yw_error(w, n, kp, "expected %s with at most 9 decimal places, got \"%s\"", what, text);
    else if (rc)
        yw_error(w, n, kp, "expected %s as a plain decimal like 0.014, got \"%s\"", what, text);
    else
        *out = v;
    return rc == 0;
}

/* Read the items of section `s` from mapping `m`: all of them (`required`, a price
 * file) or those present (overrides). Every key is checked. Returns the number of
 * items read. `seen` (may be NULL) collects the entries read. */
static size_t read_section(ywalk *w, yaml_node_t *m, const char *path, const section *s,
                           bool required, kds_prices *out, const kds_price_desc **seen)
{
    size_t got = 0;
    if (!yw_is_map(w, m, path))
        return 0;
    yw_check_keys(w, m, path, s->keys);
    for (size_t i = 0; i < s->n; i++) {
        const kds_price_desc *d = s->items[i];
        if (!yw_get(w, m, d->key)) {
            if (required)
                yw_error(w, m, path, "missing required key '%s' (%s)", d->key, d->unit);
            continue;
        }
        if (read_value(w, m, path, d->key, value_kind(d), KDSIM_PRICE_MAX, kds_price_ref(out, d))) {
            if (seen)
                seen[got] = d;
            got++;
        }
    }
    return got;
}

/* ---- price files ------------------------------------------------------------------ */

static int prices_load_any(const char *path, const char *text, size_t len, kds_prices *out,
                           char **region, char **as_of, ydiag *g);

int kdsim_prices_load(const char *path, kds_prices *out, char **region, char **as_of, ydiag *g)
{
    return prices_load_any(path, NULL, 0, out, region, as_of, g);
}

int kdsim_prices_load_text(const char *name, const char *text, size_t len, kds_prices *out,
                           char **region, char **as_of, ydiag *g)
{
    return prices_load_any(name, text, len, out, region, as_of, g);
}

static int prices_load_any(const char *path, const char *text, size_t len, kds_prices *out,
                           char **region, char **as_of, ydiag *g)
{
    size_t before = g->n;
    memset(out, 0, sizeof *out);
    ydoc d;
    int rc = text ? ydoc_load_string(&d, path, text, len, g) : ydoc_load_file(&d, path, g);
    if (rc)
        return rc;
    ywalk w = {&d, g};
    yaml_node_t *root = ydoc_root(&d);
    if (!root || !yw_is_map(&w, root, "")) {
        ydoc_fini(&d);
        return SIM_EINVAL;
    }
    section secs[8];
    size_t ns = sections_of(secs, 8);
    const char *top[8 + 3] = {"region", "as_of"};
    for (size_t i = 0; i < ns; i++)
        top[2 + i] = secs[i].name;
    top[2 + ns] = NULL;
    yw_check_keys(&w, root, "", top);
    const char *s = NULL;
    if (yw_str(&w, root, "", "region", true, &s) && region)
        *region = dup_str(s);
    if (yw_str(&w, root, "", "as_of", true, &s) && as_of)
        *as_of = dup_str(s);
    for (size_t i = 0; i < ns; i++) {
        yaml_node_t *m = yw_get(&w, root, secs[i].name);
        if (!m)
            yw_error(&w, root, "", "missing required key '%s' (a mapping of its prices)",
                     secs[i].name);
        else
            read_section(&w, m, secs[i].name, &secs[i], true, out, NULL);
    }
    ydoc_fini(&d);
    return g->n > before ? SIM_EINVAL : 0;
}

/* ---- the scenario's billing settings ---------------------------------------------- */

/* `rel` resolved against the folder of `base` (a file), unless absolute. Owned. */
static char *resolve(const char *base, const char *rel)
{
    const char *slash = strrchr(base, '/');
    if (rel[0] == '/' || !slash)
        return dup_str(rel);
    size_t dn = (size_t)(slash - base) + 1, rn = strlen(rel);
    char *p = malloc(dn + rn + 1);
    SIM_ASSERT(p != NULL);
    memcpy(p, base, dn);
    memcpy(p + dn, rel, rn + 1);
    return p;
}

static bool readable(const char *path, int *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return false;
    }
    fclose(f);
    return true;
}

/* Apply billing.overrides: the price file's layout, every part optional. */
static void load_overrides(ywalk *w, yaml_node_t *m, kdsim_billing *b)
{
    const char *path = "billing.overrides";
    if (!yw_is_map(w, m, path))
        return;
    section secs[8];
    size_t ns = sections_of(secs, 8);
    const char *keys[8 + 1];
    for (size_t i = 0; i < ns; i++)
        keys[i] = secs[i].name;
    keys[ns] = NULL;
    yw_check_keys(w, m, path, keys);
    kds_prices ov = b->prices;
    bool *hit = calloc(kds_price_list_len, sizeof *hit);
    SIM_ASSERT(hit != NULL);
    const kds_price_desc *seen[MAX_ITEMS];
    for (size_t i = 0; i < ns; i++) {
        yaml_node_t *sm = yw_get(w, m, secs[i].name);
        if (!sm)
            continue;
        char sp[PATH];
        size_t got = read_section(w, sm, yw_path(sp, sizeof sp, path, secs[i].name), &secs[i],
                                  false, &ov, seen);
        for (size_t k = 0; k < got; k++)
            hit[seen[k] - kds_price_list] = true;
    }
    b->prices = ov;
    /* Listed in price-list order, whatever the order in the scenario. */
    b->overridden = calloc(kds_price_list_len, sizeof *b->overridden);
    SIM_ASSERT(b->overridden != NULL);
    for (size_t i = 0; i < kds_price_list_len; i++)
        if (hit[i])
            b->overridden[b->n_overridden++] = &kds_price_list[i];
    free(hit);
}

bool kdsim_billing_load(ywalk *w, yaml_node_t *node, const char *scenario_path, kdsim_billing *b)
{
    static const char *const keys[] = {"prices", "month_hours", "sizing_headroom", "overrides",
                                       NULL};
    size_t before = w->g->n;
    kdsim_billing_init(b);
    const char *path = "billing";
    const char *given = NULL;
    yaml_node_t *given_node = NULL;
    if (node && yw_is_map(w, node, path)) {
        yw_check_keys(w, node, path, keys);
        yw_u64(w, node, path, "month_hours", false, 1, MONTH_HOURS_MAX, &b->settings.month_hours);
        if (yw_get(w, node, "sizing_headroom"))
            read_value(w, node, path, "sizing_headroom", "a fraction (0.2 for 20 %)", HEADROOM_MAX,
                       &b->settings.headroom);
        if (yw_str(w, node, path, "prices", false, &given))
            given_node = yw_get(w, node, "prices");
    } else {
        node = NULL;
    }

    char *file;
    int err = 0;
    if (given) {
        file = resolve(scenario_path, given);
        if (!readable(file, &err)) {
            yw_error(w, given_node, "billing.prices", "cannot read the price file %s: %s%s", file,
                     strerror(err),
                     given[0] == '/' ? "" : " (the path is relative to the scenario's folder)");
            free(file);
            file = NULL;
        }
    } else {
        file = dup_str(kdsim_default_prices());
        if (!readable(file, &err)) {
            ydiag_add(w->g, file, NULL, "",
                      "cannot read the default price file: %s; name one with billing.prices "
                      "in the scenario or --prices FILE",
                      strerror(err));
            free(file);
            file = NULL;
        }
    }
    if (file) {
        kdsim_prices_load(file, &b->prices, &b->region, &b->as_of, w->g);
        const char *slash = strrchr(file, '/');
        b->file = dup_str(slash ? slash + 1 : file);
        b->path = file;
    }
    yaml_node_t *ov = node ? yw_get(w, node, "overrides") : NULL;
    if (ov)
        load_overrides(w, ov, b);
    return w->g->n == before;
}
