/* cost.c - the `cost` section of the reports (cost.h). */
#include "cost.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kds_billing.h"
#include "prices.h"
#include "report_int.h"
#include "sim_units.h"

/* Why kdsim_cost_json failed when a bill passed what kdsim counts. */
#define OVERFLOW_MSG                                                                       \
    "a cost passes $1 billion a line, more than kdsim counts (nano-dollars in 64 bits): the " \
    "prices in billing.overrides or the price file, or billing.month_hours, are far too " \
    "high for this traffic"

/* ---- JSON -------------------------------------------------------------------------- */

static json_t *usd_of_cents(int64_t cents)
{
    return json_real((double)cents / 100.0);
}

static json_t *usd_of_nano(kds_nano v)
{
    return json_real((double)v / (double)KDS_NANO_PER_UNIT);
}

static json_t *item_json(const kds_billing_item *it)
{
    json_t *o = json_object();
    json_object_set_new(o, "item", json_string(it->item));
    json_object_set_new(o, "price", json_string(it->price_key));
    json_object_set_new(o, "unit", json_string(it->unit));
    json_object_set_new(o, "unit_price_usd", usd_of_nano(it->unit_price));
    json_object_set_new(o, "quantity", json_real(kds_billing_qty_value(it->period)));
    json_object_set_new(o, "usd", usd_of_cents(it->period_cents));
    json_object_set_new(o, "monthly_quantity", json_real(kds_billing_qty_value(it->monthly)));
    json_object_set_new(o, "monthly_usd", usd_of_cents(it->monthly_cents));
    return o;
}

static json_t *mode_json(const kds_billing_mode *md, bool provisioned)
{
    json_t *o = json_object();
    if (provisioned)
        json_object_set_new(o, "shards", json_integer(md->shards));
    json_object_set_new(o, "period_usd", usd_of_cents(md->period_cents));
    json_object_set_new(o, "monthly_usd", usd_of_cents(md->monthly_cents));
    json_t *items = json_array();
    for (size_t i = 0; i < md->n_items; i++)
        json_array_append_new(items, item_json(&md->items[i]));
    json_object_set_new(o, "items", items);
    return o;
}

static json_t *prices_json(const kdsim_billing *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(b->file ? b->file : ""));
    json_object_set_new(o, "region", json_string(b->region ? b->region : ""));
    json_object_set_new(o, "as_of", json_string(b->as_of ? b->as_of : ""));
    json_t *ov = json_array();
    for (size_t i = 0; i < b->n_overridden; i++) {
        const kds_price_desc *d = b->overridden[i];
        char key[128];
        snprintf(key, sizeof key, "%s.%s", d->section, d->key);
        json_t *e = json_object();
        json_object_set_new(e, "price", json_string(key));
        json_object_set_new(e, "value", usd_of_nano(*kds_price_ref((kds_prices *)&b->prices, d)));
        json_object_set_new(e, "unit", json_string(d->unit));
        json_array_append_new(ov, e);
    }
    json_object_set_new(o, "overrides", ov);
    return o;
}

static json_t *sizing_json(const kds_billing_sizing *s, kds_nano headroom)
{
    json_t *o = json_object();
    json_object_set_new(o, "basis", json_string("busiest minute"));
    json_object_set_new(o, "write_mib_per_s", json_real(round(s->write_mib_per_s * 1e6) / 1e6));
    json_object_set_new(o, "read_mib_per_s", json_real(round(s->read_mib_per_s * 1e6) / 1e6));
    json_object_set_new(o, "records_per_s", json_real(round(s->records_per_s * 1e3) / 1e3));
    json_object_set_new(o, "headroom", usd_of_nano(headroom));
    json_object_set_new(o, "shards_for_writes", json_integer(s->by_write));
    json_object_set_new(o, "shards_for_reads", json_integer(s->by_read));
    json_object_set_new(o, "shards_for_records", json_integer(s->by_records));
    json_object_set_new(o, "shards", json_integer(s->shards));
    return o;
}

static void say(json_t *arr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(json_t *arr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_array_append_new(arr, json_string(buf));
}

/* The bill as run of a run that switched capacity mode: its segments, each billed in
 * its own mode, and their sum. */
static json_t *as_run_json(const kds_bill_as_run *ar, size_t switches)
{
    json_t *o = json_object();
    json_object_set_new(o, "mode_switches", json_integer((json_int_t)switches));
    json_object_set_new(o, "period_usd", usd_of_cents(ar->period_cents));
    json_object_set_new(o, "monthly_usd", usd_of_cents(ar->monthly_cents));
    json_t *segs = json_array();
    for (size_t i = 0; i < ar->n; i++) {
        const kds_billing_segment *sg = &ar->segs[i];
        json_t *so = json_object();
        json_object_set_new(so, "mode", json_string(kds_mode_name(sg->mode)));
        json_object_set_new(so, "from_h", json_real(sim_to_s(sg->start) / 3600.0));
        json_object_set_new(so, "to_h", json_real(sim_to_s(sg->end) / 3600.0));
        json_t *bill = mode_json(&sg->bill, sg->mode == KDS_MODE_PROVISIONED);
        json_object_update(so, bill);
        json_decref(bill);
        json_array_append_new(segs, so);
    }
    json_object_set_new(o, "segments", segs);
    return o;
}

static json_t *assumptions_json(const kds_meters *m, const kds_bill *b, const kds_prices *p,
                                size_t switches)
{
    json_t *a = json_array();
    char period[32], ret[32];
    sim_fmt_duration(period, sizeof period, m->duration);
    sim_fmt_duration(ret, sizeof ret, m->retention);
    say(a, "scope: the stream's own bill; Lambda, Firehose and Flink charge for their own work "
           "and are not included, nor are Kinesis S3 delivery and data transfer");
    say(a,
        "monthly projection: the simulated %s of traffic repeats for %" PRIu64 " hours, and "
        "the retention bands are full (steady state): the data held in a band is the "
        "average write rate times the band's width, (24 h, 7 d] and beyond 7 d, capped by "
        "the retention of %s",
        period, b->settings.month_hours, ret);
    if (m->retention > SIM_HOUR(24) && m->duration <= SIM_HOUR(24))
        say(a, "the period bills no retention storage: no record was older than 24 h before "
               "the run ended; the monthly projection does");
    say(a,
        "provisioned: the scenario's shards billed for the time each existed (a closed "
        "shard until its records expire); provisioned_sizing_rule: AWS's rule, shards = "
        "ceil(max(write MiB/s / %g, shared read MiB/s / %g, records/s / %" PRIu64
        ") x (1 + headroom)) over the run's busiest minute of each (writes and shared "
        "reads as measured; a catch-up read after an outage counts), and its EFO "
        "consumer-shard-hours the run's scaled to its shards",
        (double)m->shard_write_bytes_per_s / (double)(1 << 20),
        (double)m->shard_read_bytes_per_s / (double)(1 << 20), m->shard_write_records_per_s);
    say(a,
        "on_demand_advantage: the commitment (%g MiB/s written, %g MiB/s read) is compared "
        "with the average rates of the period and of the month, as if this stream were the "
        "account's only on-demand stream; the shortfall is billed at the Advantage rates",
        (double)p->adv_commitment_written / 1e9, (double)p->adv_commitment_read / 1e9);
    if (switches > 0)
        say(a,
            "as run: the stream switched capacity mode %zu time%s; each stretch in one mode is "
            "billed at that mode's prices (as_run): shard-hours, stream-hours and EFO "
            "consumer-shard-hours by the time in it, traffic and retention by what was "
            "metered in it, and the month repeats the whole run; each line of `modes` bills "
            "the whole run in one mode, for comparison",
            switches, switches == 1 ? "" : "s");
    say(a, "long-term retention retrieval: the price is unconfirmed by AWS");
    say(a, "money: each line item is rounded half up to the cent; totals add the rounded "
           "items");
    return a;
}

const char *kdsim_cost_error;

json_t *kdsim_cost_json(const kdsim_scenario *sc, const kds_world *w)
{
    kds_meters m;
    kds_billing_meters(w, &m);
    kds_bill b;
    kds_billing_compute(&m, &sc->billing.prices, &sc->billing.settings, &b);
    kdsim_cost_error = NULL;
    if (b.overflow) {
        kdsim_cost_error = OVERFLOW_MSG;
        return NULL;
    }
    json_t *as_run = NULL;
    if (w->n_switches > 0) {
        kds_meters *segs = calloc(w->n_switches + 1, sizeof *segs);
        if (!segs)
            return NULL;
        size_t n = kds_billing_segments(w, segs, w->n_switches + 1);
        kds_bill_as_run ar;
        int rc = kds_billing_as_run(&m, segs, n, &sc->billing.prices, &sc->billing.settings, &ar);
        free(segs);
        if (rc)
            return NULL;
        if (ar.overflow) {
            kds_bill_as_run_fini(&ar);
            kdsim_cost_error = OVERFLOW_MSG;
            return NULL;
        }
        as_run = as_run_json(&ar, w->n_switches);
        kds_bill_as_run_fini(&ar);
    }
    json_t *c = json_object();
    if (!c) {
        json_decref(as_run);
        return NULL;
    }
    json_object_set_new(c, "prices", prices_json(&sc->billing));
    json_object_set_new(c, "period_h", json_real(sim_to_s(m.duration) / 3600.0));
    json_object_set_new(c, "month_h", json_integer((json_int_t)b.settings.month_hours));
    json_object_set_new(c, "scenario_mode", json_string(kds_mode_name(m.mode)));
    json_object_set_new(c, "sizing_rule", sizing_json(&b.sizing, b.settings.headroom));
    json_t *modes = json_object();
    for (int i = 0; i < KDS_BILL_MODES; i++)
        json_object_set_new(
            modes, b.modes[i].name,
            mode_json(&b.modes[i], i == KDS_BILL_PROVISIONED || i == KDS_BILL_PROVISIONED_SIZING));
    json_object_set_new(c, "modes", modes);
    json_object_set_new(c, "cheapest_mode", json_string(b.modes[b.cheapest].name));
    if (as_run)
        json_object_set_new(c, "as_run", as_run);
    json_object_set_new(c, "assumptions",
                        assumptions_json(&m, &b, &sc->billing.prices, w->n_switches));
    return c;
}

/* ---- text -------------------------------------------------------------------------- */

/* Dollars (a JSON number rounded to the cent) as "$1,234.56". */
static char *money(char *buf, size_t n, double usd)
{
    long long cents = llround(usd * 100.0);
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", cents / 100);
    size_t len = strlen(digits), o = 0;
    char tmp[48];
    tmp[o++] = '$';
    for (size_t i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            tmp[o++] = ',';
        tmp[o++] = digits[i];
    }
    snprintf(tmp + o, sizeof tmp - o, ".%02lld", cents % 100);
    snprintf(buf, n, "%s", tmp);
    return buf;
}

/* A quantity with about six significant digits and no trailing zeros. */
static char *qty(char *buf, size_t n, double q)
{
    if (q == 0) {
        snprintf(buf, n, "0");
        return buf;
    }
    int mag = (int)floor(log10(fabs(q))) + 1;
    int dec = 6 - mag;
    if (dec < 0)
        dec = 0;
    if (dec > 9)
        dec = 9;
    snprintf(buf, n, "%.*f", dec, q);
    if (strchr(buf, '.')) {
        char *e = buf + strlen(buf) - 1;
        while (*e == '0')
            *e-- = 0;
        if (*e == '.')
            *e = 0;
    }
    return buf;
}

/* A unit price in dollars: every decimal it has, and at least cents ("$0.10"). */
static char *unit_price(char *buf, size_t n, double usd)
{
    char tmp[48];
    snprintf(tmp, sizeof tmp, "%.9f", usd);
    char *dot = strchr(tmp, '.'), *e = tmp + strlen(tmp) - 1;
    while (e > dot + 2 && *e == '0')
        *e-- = 0;
    snprintf(buf, n, "$%s", tmp);
    return buf;
}

/* Print `text` as a bullet wrapped at `width` columns, continuation lines indented. */
static void bullet(FILE *out, const char *text, int width)
{
    int col = fprintf(out, "  -");
    const char *p = text;
    for (;;) {
        while (*p == ' ')
            p++;
        int len = 0;
        while (p[len] && p[len] != ' ')
            len++;
        if (len == 0)
            break;
        if (col > 4 && col + 1 + len > width)
            col = fprintf(out, "\n   ");
        col += fprintf(out, " %.*s", len, p);
        p += len;
    }
    fputc('\n', out);
}

bool kdsim_cost_shards_billed(const json_t *cost, const json_t *md, double *shards)
{
    const json_t *sh = json_object_get(md, "shards");
    double count = (double)json_integer_value(sh);
    *shards = count;
    double period_h = jr(cost, "period_h");
    if (!sh || period_h <= 0)
        return false;
    const json_t *first = json_array_get(json_object_get(md, "items"), 0);
    double avg = jr(first, "quantity") / period_h;
    if (fabs(avg - count) <= 1e-6 * count)
        return false;
    *shards = avg;
    return true;
}

/* The mode's name in the tables. `provisioned` bills the shard-hours the run's shards
 * had: after resharding or on-demand scaling that is not its `shards` (the count at
 * creation) for the period, so the label then gives the average the bill holds. */
static void mode_label(char *buf, size_t n, const char *name, const json_t *md,
                       const json_t *cost)
{
    const json_t *sh = json_object_get(md, "shards");
    /* A run that switched modes ran in none of them throughout: its own line is the
     * bill as run (as_run_line). */
    bool here = !json_object_get(cost, "as_run") && strcmp(name, js(cost, "scenario_mode")) == 0;
    double avg;
    if (!strcmp(name, "provisioned") && kdsim_cost_shards_billed(cost, md, &avg))
        snprintf(buf, n, "provisioned, the run's shards (avg %.2f)", avg);
    else if (!strcmp(name, "provisioned"))
        snprintf(buf, n, "provisioned, %lld shard%s%s", (long long)json_integer_value(sh),
                 json_integer_value(sh) == 1 ? "" : "s",
                 here ? " (the scenario's)" : " (the scenario's count)");
    else if (!strcmp(name, "provisioned_sizing_rule"))
        snprintf(buf, n, "provisioned, %lld shard%s (sizing rule)",
                 (long long)json_integer_value(sh), json_integer_value(sh) == 1 ? "" : "s");
    else
        snprintf(buf, n, "%s%s", name, here ? " (the scenario's)" : "");
}

/* The label of the bill as run: "as run, N mode switch(es) (the scenario's)". */
static void as_run_label(char *buf, size_t n, const json_t *ar)
{
    long long k = (long long)json_integer_value(json_object_get(ar, "mode_switches"));
    snprintf(buf, n, "as run, %lld mode switch%s (the scenario's)", k, k == 1 ? "" : "es");
}

static void summary(const json_t *cost, FILE *out)
{
    char period[32], a[32], b[32], label[96];
    sim_fmt_duration(period, sizeof period, (sim_time)llround(jr(cost, "period_h") * 3600e9));
    fprintf(out, "  %-44s %14s %14s\n", "mode", "period", "month");
    const char *key;
    const json_t *md;
    json_object_foreach((json_t *)json_object_get(cost, "modes"), key, md)
    {
        mode_label(label, sizeof label, key, md, cost);
        fprintf(out, "  %-44s %14s %14s\n", label, money(a, sizeof a, jr(md, "period_usd")),
                money(b, sizeof b, jr(md, "monthly_usd")));
    }
    const json_t *ar = json_object_get(cost, "as_run");
    if (ar) {
        as_run_label(label, sizeof label, ar);
        fprintf(out, "  %-44s %14s %14s\n", label, money(a, sizeof a, jr(ar, "period_usd")),
                money(b, sizeof b, jr(ar, "monthly_usd")));
    }
    fprintf(out, "  cheapest per month: %s\n", js(cost, "cheapest_mode"));
}

static void prices_line(const json_t *cost, FILE *out)
{
    const json_t *p = json_object_get(cost, "prices");
    const json_t *ov = json_object_get(p, "overrides");
    fprintf(out, "prices %s as of %s, %s", js(p, "region"), js(p, "as_of"), js(p, "file"));
    size_t i;
    const json_t *e;
    json_array_foreach(ov, i, e)
    {
        char up[48];
        /* A price in dollars, or a setting in its own unit (an Advantage commitment). */
        const char *unit = js(e, "unit");
        if (!strncmp(unit, "USD", 3))
            fprintf(out, "%s%s = %s", i ? ", " : "; overridden: ", js(e, "price"),
                    unit_price(up, sizeof up, jr(e, "value")));
        else
            fprintf(out, "%s%s = %.6g %s", i ? ", " : "; overridden: ", js(e, "price"),
                    jr(e, "value"), unit);
    }
}

void kdsim_cost_text(const json_t *cost, FILE *out)
{
    char period[32];
    sim_fmt_duration(period, sizeof period, (sim_time)llround(jr(cost, "period_h") * 3600e9));
    fprintf(out, "\nCost (the stream's own bill; ");
    prices_line(cost, out);
    fprintf(out, ")\n");
    summary(cost, out);
    fprintf(out,
            "  the month: the %s simulated, repeated for %.0f h, retention bands full; line "
            "items\n  and assumptions: kdsim cost SCENARIO\n",
            period, jr(cost, "month_h"));
}

/* The line items of `md` (a mode or a segment of the bill as run) and its total. */
static void items_table(const json_t *md, FILE *out)
{
    char a[32], b[32];
    fprintf(out, "  %-28s %-19s %10s | %14s %11s | %14s %12s\n", "item", "unit", "unit price",
            "period qty", "USD", "month qty", "USD");
    size_t i;
    const json_t *it;
    json_array_foreach(json_object_get(md, "items"), i, it)
    {
        char up[32], q1[32], q2[32];
        unit_price(up, sizeof up, jr(it, "unit_price_usd"));
        fprintf(out, "  %-28s %-19s %10s | %14s %11s | %14s %12s\n", js(it, "item"),
                js(it, "unit"), up, qty(q1, sizeof q1, jr(it, "quantity")),
                money(a, sizeof a, jr(it, "usd")), qty(q2, sizeof q2, jr(it, "monthly_quantity")),
                money(b, sizeof b, jr(it, "monthly_usd")));
    }
    fprintf(out, "  %-28s %-19s %10s | %14s %11s | %14s %12s\n", "total", "", "", "",
            money(a, sizeof a, jr(md, "period_usd")), "",
            money(b, sizeof b, jr(md, "monthly_usd")));
}

void kdsim_cost_text_detail(const json_t *cost, FILE *out)
{
    char period[32], a[32], b[32], label[96];
    sim_fmt_duration(period, sizeof period, (sim_time)llround(jr(cost, "period_h") * 3600e9));
    fprintf(out, "Cost of the stream: the %s simulated, and a month of %.0f h\n", period,
            jr(cost, "month_h"));
    fprintf(out, "  ");
    prices_line(cost, out);
    fprintf(out, "\n\n");
    summary(cost, out);

    const json_t *sz = json_object_get(cost, "sizing_rule");
    fprintf(out,
            "\nSizing rule over the busiest minutes: %.3f MiB/s written (%lld shards), %.3f MiB/s "
            "read by polling (%lld), %.0f records/s (%lld), headroom %g %%: %lld shards\n",
            jr(sz, "write_mib_per_s"), (long long)jr(sz, "shards_for_writes"),
            jr(sz, "read_mib_per_s"), (long long)jr(sz, "shards_for_reads"),
            jr(sz, "records_per_s"), (long long)jr(sz, "shards_for_records"),
            jr(sz, "headroom") * 100, (long long)jr(sz, "shards"));

    const char *key;
    const json_t *md;
    json_object_foreach((json_t *)json_object_get(cost, "modes"), key, md)
    {
        mode_label(label, sizeof label, key, md, cost);
        fprintf(out, "\n%s\n", label);
        items_table(md, out);
    }
    const json_t *ar = json_object_get(cost, "as_run");
    if (ar) {
        as_run_label(label, sizeof label, ar);
        fprintf(out, "\n%s: %s for the period, %s a month\n", label,
                money(a, sizeof a, jr(ar, "period_usd")),
                money(b, sizeof b, jr(ar, "monthly_usd")));
        size_t i;
        const json_t *sg;
        json_array_foreach(json_object_get(ar, "segments"), i, sg)
        {
            char from[32], to[32];
            sim_fmt_duration(from, sizeof from, (sim_time)llround(jr(sg, "from_h") * 3600e9));
            sim_fmt_duration(to, sizeof to, (sim_time)llround(jr(sg, "to_h") * 3600e9));
            fprintf(out, "\n%s, from %s to %s\n", js(sg, "mode"), from, to);
            items_table(sg, out);
        }
    }
    fprintf(out, "\ncheapest per month: %s\n\nAssumptions\n", js(cost, "cheapest_mode"));
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(cost, "assumptions"), i, s)
        bullet(out, json_string_value(s), 88);
}
