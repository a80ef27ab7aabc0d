/* kds_billing.c - meters of a finished world, the sizing rule, and exact line items for
 * every capacity mode (kds_billing.h). */
#include "kds_billing.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

#define MIB (UINT64_C(1) << 20)
/* 1e-9 MiB/s x ns -> bytes: x 2^20 B/MiB, / 1e9 (nano) / 1e9 (ns per s). */
#define NANO_SQUARED UINT64_C(1000000000000000000)

/* ---- the price list --------------------------------------------------------------- */

#define P(sec, key, unit, field)                                                                   \
    {                                                                                              \
        sec, key, unit, offsetof(kds_prices, field)                                                \
    }

/* The order here is the price file's order (scenarios/prices/us-east-1-2026-09.yaml). */
const kds_price_desc kds_price_list[] = {
    P("provisioned", "shard_hour", "USD per shard-hour", prov_shard_hour),
    P("provisioned", "put_payload_units", "USD per million PUT payload units",
      prov_put_payload_units),
    P("provisioned", "extended_retention", "USD per shard-hour, retention above 24 h",
      prov_extended_retention),
    P("provisioned", "long_term_retention", "USD per GB-month held beyond 7 days",
      prov_long_term_retention),
    P("provisioned", "long_term_retrieval", "USD per GB read of data older than 7 days",
      prov_long_term_retrieval),
    P("provisioned", "efo_consumer_shard_hour", "USD per EFO consumer-shard-hour",
      prov_efo_consumer_shard_hour),
    P("provisioned", "efo_data_retrieval", "USD per GB pushed by enhanced fan-out",
      prov_efo_data_retrieval),
    P("provisioned", "shared_read", "USD per GB read through shared throughput", prov_shared_read),
    P("on_demand_standard", "stream_hour", "USD per stream-hour", std_stream_hour),
    P("on_demand_standard", "data_written", "USD per GB written, records rounded up to 1 KiB",
      std_data_written),
    P("on_demand_standard", "data_read_shared", "USD per GB read through shared throughput",
      std_data_read_shared),
    P("on_demand_standard", "data_read_efo", "USD per GB pushed by enhanced fan-out",
      std_data_read_efo),
    P("on_demand_standard", "extended_retention", "USD per GB-month held from 24 h to 7 days",
      std_extended_retention),
    P("on_demand_standard", "long_term_retention", "USD per GB-month held beyond 7 days",
      std_long_term_retention),
    P("on_demand_advantage", "stream_hour", "USD per stream-hour", adv_stream_hour),
    P("on_demand_advantage", "data_written", "USD per GB written, records rounded up to 1 KiB",
      adv_data_written),
    P("on_demand_advantage", "data_read", "USD per GB read, shared or enhanced fan-out",
      adv_data_read),
    P("on_demand_advantage", "retention", "USD per GB-month held beyond 24 h", adv_retention),
    P("on_demand_advantage", "commitment_written", "MiB/s of writes committed",
      adv_commitment_written),
    P("on_demand_advantage", "commitment_read", "MiB/s of reads committed", adv_commitment_read),
    P("s3_delivery", "on_demand_standard", "USD per GB delivered to S3", s3_delivery_standard),
    P("s3_delivery", "on_demand_advantage", "USD per GB delivered to S3", s3_delivery_advantage),
};
const size_t kds_price_list_len = sizeof kds_price_list / sizeof kds_price_list[0];

kds_nano *kds_price_ref(kds_prices *p, const kds_price_desc *d)
{
    return (kds_nano *)((char *)p + d->offset);
}

/* ---- exact arithmetic ------------------------------------------------------------- */

kds_u128 kds_billing_muldiv(kds_u128 a, uint64_t mul, uint64_t div)
{
    SIM_ASSERT(div > 0 && mul < (UINT64_C(1) << 63) && div < (UINT64_C(1) << 63));
    /* a = q div + r: q x mul is exact by the caller's bound on the result, and
     * r x mul < div x mul < 2^126 cannot overflow. */
    kds_u128 q = a / div, r = a % div;
    kds_u128 t = r * mul;
    kds_u128 res = q * mul + t / div;
    if ((t % div) * 2 >= div)
        res++;
    return res;
}

double kds_billing_qty_value(kds_billing_qty q)
{
    return q.div ? (double)q.base / (double)q.div : 0.0;
}

int64_t kds_billing_cents(kds_nano v)
{
    SIM_ASSERT(v >= 0);
    return (v + KDS_NANO_PER_CENT / 2) / KDS_NANO_PER_CENT;
}

/* ---- meters ----------------------------------------------------------------------- */

/* The minute of `s` (bucket sums) with the highest rate; the run's last minute may be
 * shorter than the others, so rates are compared, not sums. */
static kds_billing_peak series_peak(const sim_series *s, sim_time end)
{
    kds_billing_peak best = {0, 0};
    for (size_t i = 0; i < s->n; i++) {
        sim_time start = (sim_time)i * s->width;
        sim_time span = end - start < s->width ? end - start : s->width;
        double v = sim_series_get(s, i);
        if (span <= 0 || v <= 0)
            continue;
        uint64_t amount = (uint64_t)llround(v);
        /* amount / span > best.amount / best.span, cross-multiplied. */
        if (best.amount == 0 ||
            (kds_u128)amount * (uint64_t)best.span > (kds_u128)best.amount * (uint64_t)span)
            best = (kds_billing_peak){amount, span};
    }
    return best;
}

/* Shard-time billed within [s0, s1): every shard for the time it exists (a closed one
 * until its records expire; kds_shard_billed_ns). */
static kds_u128 shard_time(const kds_stream *st, sim_time s0, sim_time s1)
{
    kds_u128 ns = 0;
    for (size_t i = 0; i < st->n_shards; i++)
        ns += (uint64_t)kds_shard_billed_ns(st, st->shards[i], s0, s1);
    return ns;
}

/* EFO consumer-shard time within [s0, s1): for each registered consumer, every shard's
 * billed time while it was registered (kds_stream_consumer_shard_hours, in integer
 * nanoseconds). */
static kds_u128 efo_time(const kds_world *w, sim_time s0, sim_time s1)
{
    kds_u128 ns = 0;
    for (size_t i = 0; i < w->n_consumers; i++) {
        sim_time reg = w->consumers[i]->st.efo_registered;
        if (reg >= 0)
            ns += shard_time(&w->stream, reg > s0 ? reg : s0, s1);
    }
    return ns;
}

/* The traffic and retention meters of `c`, less those of `base` (NULL: none). */
static void counted(kds_meters *m, const kds_counters *c, const kds_counters *base)
{
    static const kds_counters zero;
    if (!base)
        base = &zero;
    m->records_in = c->records_in - base->records_in;
    m->bytes_in = c->bytes_in - base->bytes_in;
    m->put_units = c->put_units - base->put_units;
    m->bytes_in_kib_rounded = c->bytes_in_kib_rounded - base->bytes_in_kib_rounded;
    m->byte_hours_24h_7d = c->byte_hours_24h_7d - base->byte_hours_24h_7d;
    m->byte_hours_over_7d = c->byte_hours_over_7d - base->byte_hours_over_7d;
    m->bytes_read_shared = c->bytes_read_shared - base->bytes_read_shared;
    m->bytes_read_efo = c->bytes_read_efo - base->bytes_read_efo;
    m->bytes_read_over_7d = c->bytes_read_over_7d - base->bytes_read_over_7d;
}

void kds_billing_meters(const kds_world *w, kds_meters *m)
{
    const kds_stream *st = &w->stream;
    sim_time end = sim_now(w->sim);
    memset(m, 0, sizeof *m);
    m->mode = st->cfg.mode;
    m->duration = end;
    m->retention = st->cfg.retention;
    m->shards = st->cfg.shards;
    m->shard_ns = shard_time(st, 0, end);
    m->efo_consumer_shard_ns = efo_time(w, 0, end);
    kds_counters c;
    kds_world_counters(w, &c);
    counted(m, &c, NULL);
    m->shard_write_bytes_per_s = st->cfg.write_bytes_per_s;
    m->shard_write_records_per_s = st->cfg.write_records_per_s;
    m->shard_read_bytes_per_s = st->cfg.read_bytes_per_s;
    m->peak_write_bytes = series_peak(&st->st.in_bytes_min, end);
    m->peak_write_records = series_peak(&st->st.in_records_min, end);
    m->peak_read_bytes = series_peak(&st->st.out_bytes_min, end);
}

size_t kds_billing_segments(const kds_world *w, kds_meters *out, size_t max)
{
    const kds_stream *st = &w->stream;
    sim_time end = sim_now(w->sim);
    kds_counters last;
    kds_world_counters(w, &last);
    size_t n = 0;
    for (size_t i = 0; i <= w->n_switches && n < max; i++) {
        const kds_counters *from = i ? &w->switches[i - 1] : NULL;
        const kds_counters *to = i < w->n_switches ? &w->switches[i] : &last;
        sim_time begin = from ? from->at : 0, stop = i < w->n_switches ? to->at : end;
        if (stop <= begin)
            continue; /* a switch at the very start or end: no time in that mode */
        kds_meters *m = &out[n++];
        memset(m, 0, sizeof *m);
        m->mode = from ? from->mode : w->cfg->stream.mode;
        m->start = begin;
        m->duration = stop - begin;
        m->retention = st->cfg.retention;
        m->shards = st->cfg.shards;
        m->shard_ns = shard_time(st, m->start, stop);
        m->efo_consumer_shard_ns = efo_time(w, m->start, stop);
        counted(m, to, from);
        m->shard_write_bytes_per_s = st->cfg.write_bytes_per_s;
        m->shard_write_records_per_s = st->cfg.write_records_per_s;
        m->shard_read_bytes_per_s = st->cfg.read_bytes_per_s;
    }
    return n;
}

/* ---- the sizing rule -------------------------------------------------------------- */

/* Shards needed for `pk` at `limit` per shard per second with the headroom:
 * ceil(amount / (span / 1e9) / limit x (1e9 + headroom) / 1e9). */
static uint32_t shards_for(kds_billing_peak pk, uint64_t limit, kds_nano headroom)
{
    if (pk.amount == 0 || pk.span <= 0 || limit == 0)
        return 0;
    kds_u128 num = (kds_u128)pk.amount * (uint64_t)(KDS_NANO_PER_UNIT + headroom);
    kds_u128 den = (kds_u128)(uint64_t)pk.span * limit;
    kds_u128 n = (num + den - 1) / den;
    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

static double per_s(kds_billing_peak pk)
{
    return pk.span > 0 ? (double)pk.amount / sim_to_s(pk.span) : 0.0;
}

void kds_billing_size(const kds_meters *m, kds_nano headroom, kds_billing_sizing *out)
{
    memset(out, 0, sizeof *out);
    out->write_mib_per_s = per_s(m->peak_write_bytes) / (double)MIB;
    out->read_mib_per_s = per_s(m->peak_read_bytes) / (double)MIB;
    out->records_per_s = per_s(m->peak_write_records);
    out->by_write = shards_for(m->peak_write_bytes, m->shard_write_bytes_per_s, headroom);
    out->by_read = shards_for(m->peak_read_bytes, m->shard_read_bytes_per_s, headroom);
    out->by_records = shards_for(m->peak_write_records, m->shard_write_records_per_s, headroom);
    uint32_t n = out->by_write;
    if (out->by_read > n)
        n = out->by_read;
    if (out->by_records > n)
        n = out->by_records;
    out->shards = n ? n : 1;
}

/* ---- line items ------------------------------------------------------------------- */

void kds_billing_settings_defaults(kds_billing_settings *s)
{
    s->month_hours = 720; /* model.md: a month is 30 days unless the scenario says */
    s->headroom = 0;
}

/* What one computation needs at hand. */
typedef struct ctx {
    const kds_meters *m;
    const kds_prices *p;
    uint64_t month_ns;     /* the projected month, ns */
    uint64_t gb_month;     /* byte-hours per GB-month: 2^30 x month_hours */
    kds_u128 held_24h_7d;  /* steady state: bytes held at an age in (24 h, 7 d] */
    kds_u128 held_over_7d; /* steady state: bytes held at an age above 7 d */
} ctx;

/* A period meter scaled to the month: base x month / period. */
static kds_u128 scale(const ctx *c, kds_u128 base)
{
    return c->m->duration > 0 ? kds_billing_muldiv(base, c->month_ns, (uint64_t)c->m->duration) : 0;
}

/* q x price, capped at KDS_BILLING_MAX_NANO with *overflow set. */
static kds_nano amount(kds_billing_qty q, kds_nano price, bool *overflow)
{
    SIM_ASSERT(price >= 0);
    kds_u128 v = kds_billing_muldiv(q.base, (uint64_t)price, q.div);
    if (v > (kds_u128)KDS_BILLING_MAX_NANO) {
        *overflow = true;
        return KDS_BILLING_MAX_NANO;
    }
    return (kds_nano)v;
}

static void add(kds_billing_mode *md, const char *item, const char *price_key, const char *unit,
                kds_nano price, kds_billing_qty period, kds_billing_qty monthly)
{
    SIM_ASSERT(md->n_items < KDS_BILLING_MAX_ITEMS);
    kds_billing_item *it = &md->items[md->n_items++];
    it->item = item;
    it->price_key = price_key;
    it->unit = unit;
    it->unit_price = price;
    it->period = period;
    it->monthly = monthly;
    it->period_exact = amount(period, price, &md->overflow);
    it->monthly_exact = amount(monthly, price, &md->overflow);
    it->period_cents = kds_billing_cents(it->period_exact);
    it->monthly_cents = kds_billing_cents(it->monthly_exact);
    md->period_cents += it->period_cents;
    md->monthly_cents += it->monthly_cents;
}

static kds_billing_qty q(kds_u128 base, uint64_t div)
{
    return (kds_billing_qty){base, div};
}

/* A metered quantity over the period, and the same scaled to the month. */
#define METERED(base, div) q((base), (div)), q(scale(c, (base)), (div))

/* `shard_ns` shard-time, with `efo_ns` EFO consumer-shard-time. */
static void provisioned(const ctx *c, kds_billing_mode *md, kds_u128 shard_ns, kds_u128 efo_ns)
{
    const kds_meters *m = c->m;
    const kds_prices *p = c->p;
    /* The extended-retention add-on is billed on every shard-hour once the retention
     * is above 24 h (model.md section 9: "a flat add-on per shard-hour"). */
    kds_u128 ext_ns = m->retention > SIM_HOUR(24) ? shard_ns : 0;
    add(md, "shard_hours", "provisioned.shard_hour", "shard-hour", p->prov_shard_hour,
        METERED(shard_ns, KDS_NS_PER_HOUR));
    add(md, "put_payload_units", "provisioned.put_payload_units", "million units",
        p->prov_put_payload_units, METERED(m->put_units, KDS_UNITS_PER_MILLION));
    add(md, "extended_retention", "provisioned.extended_retention", "shard-hour",
        p->prov_extended_retention, METERED(ext_ns, KDS_NS_PER_HOUR));
    add(md, "long_term_retention", "provisioned.long_term_retention", "GB-month",
        p->prov_long_term_retention, q(m->byte_hours_over_7d, c->gb_month),
        q(c->held_over_7d, KDS_BYTES_PER_GB));
    add(md, "long_term_retrieval", "provisioned.long_term_retrieval", "GB",
        p->prov_long_term_retrieval, METERED(m->bytes_read_over_7d, KDS_BYTES_PER_GB));
    add(md, "efo_consumer_shard_hours", "provisioned.efo_consumer_shard_hour",
        "consumer-shard-hour", p->prov_efo_consumer_shard_hour, METERED(efo_ns, KDS_NS_PER_HOUR));
    add(md, "efo_data_retrieval", "provisioned.efo_data_retrieval", "GB",
        p->prov_efo_data_retrieval, METERED(m->bytes_read_efo, KDS_BYTES_PER_GB));
    add(md, "shared_reads", "provisioned.shared_read", "GB", p->prov_shared_read,
        METERED(m->bytes_read_shared, KDS_BYTES_PER_GB));
}

static void on_demand_standard(const ctx *c, kds_billing_mode *md)
{
    const kds_meters *m = c->m;
    const kds_prices *p = c->p;
    add(md, "stream_hours", "on_demand_standard.stream_hour", "stream-hour", p->std_stream_hour,
        q((uint64_t)m->duration, KDS_NS_PER_HOUR), q(c->month_ns, KDS_NS_PER_HOUR));
    add(md, "data_written", "on_demand_standard.data_written", "GB", p->std_data_written,
        METERED(m->bytes_in_kib_rounded, KDS_BYTES_PER_GB));
    add(md, "data_read_shared", "on_demand_standard.data_read_shared", "GB",
        p->std_data_read_shared, METERED(m->bytes_read_shared, KDS_BYTES_PER_GB));
    add(md, "data_read_efo", "on_demand_standard.data_read_efo", "GB", p->std_data_read_efo,
        METERED(m->bytes_read_efo, KDS_BYTES_PER_GB));
    add(md, "extended_retention", "on_demand_standard.extended_retention", "GB-month",
        p->std_extended_retention, q(m->byte_hours_24h_7d, c->gb_month),
        q(c->held_24h_7d, KDS_BYTES_PER_GB));
    add(md, "long_term_retention", "on_demand_standard.long_term_retention", "GB-month",
        p->std_long_term_retention, q(m->byte_hours_over_7d, c->gb_month),
        q(c->held_over_7d, KDS_BYTES_PER_GB));
}

/* Committed bytes over `ns` at `rate` (1e-9 MiB/s), to the nearest byte. */
static kds_u128 committed(kds_nano rate, uint64_t ns)
{
    return kds_billing_muldiv((kds_u128)(uint64_t)rate * MIB, ns, NANO_SQUARED);
}

static kds_u128 shortfall(kds_u128 committed_bytes, kds_u128 used)
{
    return committed_bytes > used ? committed_bytes - used : 0;
}

static void on_demand_advantage(const ctx *c, kds_billing_mode *md)
{
    const kds_meters *m = c->m;
    const kds_prices *p = c->p;
    kds_u128 reads = (kds_u128)m->bytes_read_shared + m->bytes_read_efo;
    add(md, "stream_hours", "on_demand_advantage.stream_hour", "stream-hour", p->adv_stream_hour,
        q((uint64_t)m->duration, KDS_NS_PER_HOUR), q(c->month_ns, KDS_NS_PER_HOUR));
    add(md, "data_written", "on_demand_advantage.data_written", "GB", p->adv_data_written,
        METERED(m->bytes_in_kib_rounded, KDS_BYTES_PER_GB));
    add(md, "data_read", "on_demand_advantage.data_read", "GB", p->adv_data_read,
        METERED(reads, KDS_BYTES_PER_GB));
    add(md, "retention", "on_demand_advantage.retention", "GB-month", p->adv_retention,
        q(m->byte_hours_24h_7d + m->byte_hours_over_7d, c->gb_month),
        q(c->held_24h_7d + c->held_over_7d, KDS_BYTES_PER_GB));
    /* The commitment (25 MiB/s written + 25 MiB/s read) against the average rates of
     * the period, and of the projected month; the shortfall is billed at the
     * Advantage rates (model.md section 7). Writes count as billed: rounded to 1 KiB. */
    uint64_t d = (uint64_t)m->duration;
    add(md, "commitment_shortfall_written", "on_demand_advantage.data_written", "GB",
        p->adv_data_written,
        q(shortfall(committed(p->adv_commitment_written, d), m->bytes_in_kib_rounded),
          KDS_BYTES_PER_GB),
        q(shortfall(committed(p->adv_commitment_written, c->month_ns),
                    scale(c, m->bytes_in_kib_rounded)),
          KDS_BYTES_PER_GB));
    add(md, "commitment_shortfall_read", "on_demand_advantage.data_read", "GB", p->adv_data_read,
        q(shortfall(committed(p->adv_commitment_read, d), reads), KDS_BYTES_PER_GB),
        q(shortfall(committed(p->adv_commitment_read, c->month_ns), scale(c, reads)),
          KDS_BYTES_PER_GB));
}

/* The context of the bill of the whole run `m`. */
static void ctx_init(ctx *c, const kds_meters *m, const kds_prices *p,
                     const kds_billing_settings *s)
{
    SIM_ASSERT(s->month_hours >= 1 && s->month_hours <= 100000);
    *c = (ctx){m, p, s->month_hours * KDS_NS_PER_HOUR, KDS_BYTES_PER_GB * s->month_hours, 0, 0};
    /* Steady state: a band (lo, hi] of ages holds what was written during hi - lo,
     * at the period's average write rate; the retention caps the upper end. */
    sim_time r = m->retention, lo = SIM_HOUR(24), mid = SIM_DAY(7);
    uint64_t w1 = r > lo ? (uint64_t)((r < mid ? r : mid) - lo) : 0;
    uint64_t w2 = r > mid ? (uint64_t)(r - mid) : 0;
    if (m->duration > 0) {
        c->held_24h_7d = kds_billing_muldiv(m->bytes_in, w1, (uint64_t)m->duration);
        c->held_over_7d = kds_billing_muldiv(m->bytes_in, w2, (uint64_t)m->duration);
    }
}

void kds_billing_compute(const kds_meters *m, const kds_prices *p, const kds_billing_settings *s,
                         kds_bill *out)
{
    memset(out, 0, sizeof *out);
    out->settings = *s;
    ctx c;
    ctx_init(&c, m, p, s);

    kds_billing_size(m, s->headroom, &out->sizing);
    static const char *const names[KDS_BILL_MODES] = {"provisioned", "provisioned_sizing_rule",
                                                      "on_demand_standard", "on_demand_advantage"};
    for (int i = 0; i < KDS_BILL_MODES; i++)
        out->modes[i].name = names[i];
    out->modes[KDS_BILL_PROVISIONED].shards = m->shards;
    provisioned(&c, &out->modes[KDS_BILL_PROVISIONED], m->shard_ns, m->efo_consumer_shard_ns);
    /* The rule's stream: its shards for the whole period, and the EFO consumers
     * registered on each of them as they were on the run's (consumer-shard time scaled
     * by the ratio of shard-times: both count every shard for the time it is billed; a
     * ratio of meters, so long double is exact enough). */
    kds_u128 sizing_ns =
        (kds_u128)out->sizing.shards * (uint64_t)(m->duration > 0 ? m->duration : 0);
    kds_u128 sizing_efo = 0;
    if (m->shard_ns > 0)
        sizing_efo = (kds_u128)((long double)m->efo_consumer_shard_ns * (long double)sizing_ns /
                                    (long double)m->shard_ns +
                                0.5L);
    out->modes[KDS_BILL_PROVISIONED_SIZING].shards = out->sizing.shards;
    provisioned(&c, &out->modes[KDS_BILL_PROVISIONED_SIZING], sizing_ns, sizing_efo);
    on_demand_standard(&c, &out->modes[KDS_BILL_ON_DEMAND_STANDARD]);
    on_demand_advantage(&c, &out->modes[KDS_BILL_ON_DEMAND_ADVANTAGE]);

    for (int i = 0; i < KDS_BILL_MODES; i++)
        out->overflow = out->overflow || out->modes[i].overflow;
    out->cheapest = KDS_BILL_PROVISIONED;
    for (int i = 1; i < KDS_BILL_MODES; i++)
        if (out->modes[i].monthly_cents < out->modes[out->cheapest].monthly_cents)
            out->cheapest = (kds_bill_mode)i;
}

int kds_billing_as_run(const kds_meters *total, const kds_meters *segs, size_t n,
                       const kds_prices *p, const kds_billing_settings *s, kds_bill_as_run *out)
{
    memset(out, 0, sizeof *out);
    SIM_ASSERT(total->duration > 0);
    out->segs = calloc(n ? n : 1, sizeof *out->segs);
    if (!out->segs)
        return SIM_ENOMEM;
    ctx whole;
    ctx_init(&whole, total, p, s);
    for (size_t i = 0; i < n; i++) {
        const kds_meters *m = &segs[i];
        kds_billing_segment *sg = &out->segs[out->n++];
        sg->mode = m->mode;
        sg->start = m->start;
        sg->end = m->start + m->duration;
        /* The month repeats the whole run, so the segment takes its share of it: its
         * traffic scaled by month / run (scale() divides by the segment's length), its
         * stream-hours month x segment / run, and the full bands of the run's steady
         * state for that share of the month. */
        uint64_t d = (uint64_t)total->duration, sd = (uint64_t)m->duration;
        ctx c = {m,
                 p,
                 (uint64_t)kds_billing_muldiv(whole.month_ns, sd, d),
                 whole.gb_month,
                 kds_billing_muldiv(whole.held_24h_7d, sd, d),
                 kds_billing_muldiv(whole.held_over_7d, sd, d)};
        kds_billing_mode *md = &sg->bill;
        md->name = kds_mode_name(m->mode);
        switch (m->mode) {
        case KDS_MODE_PROVISIONED:
            md->shards = m->shards;
            provisioned(&c, md, m->shard_ns, m->efo_consumer_shard_ns);
            break;
        case KDS_MODE_ON_DEMAND_STANDARD:
            on_demand_standard(&c, md);
            break;
        case KDS_MODE_ON_DEMAND_ADVANTAGE:
            on_demand_advantage(&c, md);
            break;
        }
        out->period_cents += md->period_cents;
        out->monthly_cents += md->monthly_cents;
        out->overflow = out->overflow || md->overflow;
    }
    return 0;
}

void kds_bill_as_run_fini(kds_bill_as_run *b)
{
    if (!b)
        return;
    free(b->segs);
    memset(b, 0, sizeof *b);
}
