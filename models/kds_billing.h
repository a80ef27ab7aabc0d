/* kds_billing.h - what a run's traffic costs in each capacity mode: provisioned (at the
 * scenario's shard count and at AWS's sizing rule), On-demand Standard and On-demand
 * Advantage, for the simulated period and as a monthly projection.
 *
 * model.md sections 7-9. The bill is plain arithmetic on three kinds of plain data:
 *   - a price table (kds_prices): every unit price of the price list, read by the front
 *     end from a price file (scenarios/prices/); nothing here knows a price;
 *   - meters (kds_meters): what AWS counts, gathered from a finished world
 *     (shard-time, PUT payload units, bytes written with each record rounded up to
 *     1 KiB, bytes read through shared throughput and enhanced fan-out, retained
 *     byte-hours in the 24 h-7 d and over-7 d bands, EFO consumer-shard-time, peak
 *     per-minute rates for the sizing rule);
 *   - settings (kds_billing_settings): hours in a month and the sizing headroom.
 *
 * Money is exact: prices are integers in nano-dollars (1e-9 USD) per price unit, every
 * quantity is an integer in a base unit (bytes, nanoseconds, byte-hours, PUT units)
 * with a fixed divisor to the price unit (2^30 B per GB, 3.6e12 ns per hour, 10^6
 * units per million), and each line item is round(base x price / divisor) in
 * nano-dollars with 128-bit intermediates, rounded half up. A line item is then rounded
 * half up to the cent, and a mode's total is the sum of its rounded line items, as an
 * invoice adds up. "GB" is 2^30 B (model.md section 9).
 *
 * The monthly projection assumes the simulated traffic pattern repeats for
 * month_hours (720 h by default): every traffic meter is scaled by month / period, and
 * retention is at steady state, the bands full: bytes held in a band = average write
 * rate x the band's width, the bands being (24 h, min(retention, 7 d)] and
 * (7 d, retention]. The Advantage commitment is compared with the period's (or the
 * month's) average rates, and the stream is taken to be the account's only on-demand
 * stream.
 */
#ifndef KDS_BILLING_H
#define KDS_BILLING_H

#include <stddef.h>
#include <stdint.h>

#include "kds_stream.h"
#include "kds_world.h"
#include "sim.h"

/* Money and fixed-point values: integers in units of 1e-9 (nano-dollars for prices and
 * amounts; 1e-9 MiB/s for the commitment rates; 1e-9 for the headroom fraction). */
typedef int64_t kds_nano;
#define KDS_NANO_PER_UNIT INT64_C(1000000000)
#define KDS_NANO_PER_CENT INT64_C(10000000)

/* Divisors from base units to price units. */
#define KDS_BYTES_PER_GB (UINT64_C(1) << 30) /* AWS's "GB" is 2^30 B */
#define KDS_NS_PER_HOUR UINT64_C(3600000000000)
#define KDS_UNITS_PER_MILLION UINT64_C(1000000)

/* ---- the price table ------------------------------------------------------------- */

/* Every unit price of model.md section 9, in nano-dollars per the unit named in the
 * comment, plus the Advantage commitment (in 1e-9 MiB/s). All non-negative. */
typedef struct kds_prices {
    /* Provisioned. */
    kds_nano prov_shard_hour;              /* per shard-hour */
    kds_nano prov_put_payload_units;       /* per million PUT payload units */
    kds_nano prov_extended_retention;      /* per shard-hour, when retention > 24 h */
    kds_nano prov_long_term_retention;     /* per GB-month of data older than 7 days */
    kds_nano prov_long_term_retrieval;     /* per GB read of data older than 7 days */
    kds_nano prov_efo_consumer_shard_hour; /* per EFO consumer-shard-hour */
    kds_nano prov_efo_data_retrieval;      /* per GB pushed by enhanced fan-out */
    kds_nano prov_shared_read;             /* per GB read through shared throughput (0) */
    /* On-demand Standard. */
    kds_nano std_stream_hour;         /* per stream-hour */
    kds_nano std_data_written;        /* per GB written, each record rounded to 1 KiB */
    kds_nano std_data_read_shared;    /* per GB read through shared throughput */
    kds_nano std_data_read_efo;       /* per GB pushed by enhanced fan-out */
    kds_nano std_extended_retention;  /* per GB-month held between 24 h and 7 days */
    kds_nano std_long_term_retention; /* per GB-month held beyond 7 days */
    /* On-demand Advantage. */
    kds_nano adv_stream_hour;        /* per stream-hour (0) */
    kds_nano adv_data_written;       /* per GB written, each record rounded to 1 KiB */
    kds_nano adv_data_read;          /* per GB read, shared or enhanced fan-out */
    kds_nano adv_retention;          /* per GB-month held beyond 24 h */
    kds_nano adv_commitment_written; /* committed writes, 1e-9 MiB/s (25 MiB/s) */
    kds_nano adv_commitment_read;    /* committed reads, 1e-9 MiB/s (25 MiB/s) */
    /* Kinesis S3 delivery (listed for completeness: kdsim does not model it). */
    kds_nano s3_delivery_standard;  /* per GB delivered, On-demand Standard */
    kds_nano s3_delivery_advantage; /* per GB delivered, On-demand Advantage */
} kds_prices;

/* One entry of the price list: where it lives in a price file and in kds_prices. */
typedef struct kds_price_desc {
    const char *section; /* "provisioned", "on_demand_standard", ... */
    const char *key;     /* "shard_hour", ... */
    const char *unit;    /* what one unit of the price buys: "USD per shard-hour" */
    size_t offset;       /* offsetof(kds_prices, field) */
} kds_price_desc;

/* The price list's entries in price-file order, and their number. */
extern const kds_price_desc kds_price_list[];
extern const size_t kds_price_list_len;

/* The value of entry `d` in `p` (a pointer into p). */
kds_nano *kds_price_ref(kds_prices *p, const kds_price_desc *d);

/* ---- meters ---------------------------------------------------------------------- */

/* The peak of a per-minute series: `amount` (bytes or records) in the minute with the
 * highest rate, and that minute's length (60 s, shorter for a run's last minute). */
typedef struct kds_billing_peak {
    uint64_t amount;
    sim_time span; /* ns, > 0 unless amount is 0 */
} kds_billing_peak;

typedef struct kds_meters {
    kds_mode mode;                  /* the capacity mode (at the end; a segment's own) */
    sim_time start;                 /* 0; a segment's start (kds_billing_segments), ns */
    sim_time duration;              /* simulated period (or segment), ns (> 0) */
    sim_time retention;             /* retention period, ns */
    uint32_t shards;                /* open shards at creation (the scenario's count) */
    kds_u128 shard_ns;              /* shard x ns billed: every shard from creation to the
                                       end, a closed one until its records expire */
    uint64_t records_in;            /* records stored */
    uint64_t bytes_in;              /* bytes stored (data + partition keys) */
    uint64_t put_units;             /* PUT payload units: ceil(size / 25 KiB) per record */
    uint64_t bytes_in_kib_rounded;  /* bytes stored, each record rounded up to 1 KiB */
    kds_u128 byte_hours_24h_7d;     /* B x h held at an age in (24 h, 7 d] */
    kds_u128 byte_hours_over_7d;    /* B x h held at an age above 7 d */
    uint64_t bytes_read_shared;     /* bytes read through shared throughput, all consumers */
    uint64_t bytes_read_efo;        /* bytes pushed by enhanced fan-out, all consumers */
    uint64_t bytes_read_over_7d;    /* bytes read of data older than 7 days */
    kds_u128 efo_consumer_shard_ns; /* consumer x shard x ns of EFO registrations: every
                                       shard for the time it is billed (as shard_ns) while
                                       the consumer is registered */
    /* For the sizing rule: per-shard limits and the busiest minutes. */
    uint64_t shard_write_bytes_per_s;    /* 1 MiB/s */
    uint64_t shard_write_records_per_s;  /* 1,000 records/s */
    uint64_t shard_read_bytes_per_s;     /* 2 MiB/s (shared throughput) */
    kds_billing_peak peak_write_bytes;   /* busiest minute of bytes stored */
    kds_billing_peak peak_write_records; /* busiest minute of records stored */
    kds_billing_peak peak_read_bytes;    /* busiest minute of bytes returned to
                                            shared-throughput readers */
} kds_meters;

/* Gather the meters of a finished world (kds_world_finish() has run) at its current
 * time. Retention byte-hours come from the models as reals and are rounded to whole
 * byte-hours, shard by shard. */
void kds_billing_meters(const kds_world *w, kds_meters *m);

/* The meters of each stretch of a finished world's run in one capacity mode, split at
 * its completed mode switches (w->switches): up to `max` of them, in time order, each
 * with its mode, start and duration, the shard-time and EFO consumer-shard-time within
 * it, and the differences of the traffic and retention counters (kds_counters) across
 * it; no sizing peaks. They add up to kds_billing_meters' meters. Returns how many were
 * written: one when the mode never switched. */
size_t kds_billing_segments(const kds_world *w, kds_meters *out, size_t max);

/* ---- the bill -------------------------------------------------------------------- */

typedef struct kds_billing_settings {
    uint64_t month_hours; /* hours in a month for the projection (720), >= 1 */
    kds_nano headroom;    /* sizing headroom, 1e-9 fraction: 0.2 = 20 % more capacity */
} kds_billing_settings;

/* Fill *s with the defaults in the field comments (a 720-hour month, no headroom).
 * Never fails. */
void kds_billing_settings_defaults(kds_billing_settings *s);

/* A quantity in a base unit with its divisor to the price unit: quantity = base / div. */
typedef struct kds_billing_qty {
    kds_u128 base;
    uint64_t div;
} kds_billing_qty;

typedef struct kds_billing_item {
    const char *item;        /* snake_case line-item id, "shard_hours" */
    const char *price_key;   /* the price-file entry, "provisioned.shard_hour" */
    const char *unit;        /* "shard-hour", "million units", "GB", "GB-month" */
    kds_nano unit_price;     /* nano-dollars per unit */
    kds_billing_qty period;  /* quantity over the simulated period */
    kds_billing_qty monthly; /* quantity over the projected month */
    kds_nano period_exact;   /* nano-dollars, before rounding to the cent */
    kds_nano monthly_exact;
    int64_t period_cents; /* the same rounded half up to the cent, in cents */
    int64_t monthly_cents;
} kds_billing_item;

#define KDS_BILLING_MAX_ITEMS 8

typedef enum {
    KDS_BILL_PROVISIONED,        /* at the scenario's shard count */
    KDS_BILL_PROVISIONED_SIZING, /* at the count AWS's sizing rule gives */
    KDS_BILL_ON_DEMAND_STANDARD,
    KDS_BILL_ON_DEMAND_ADVANTAGE,
    KDS_BILL_MODES
} kds_bill_mode;

typedef struct kds_billing_mode {
    const char *name; /* "provisioned", "provisioned_sizing_rule", ... */
    uint32_t shards;  /* provisioned variants: the shard count billed; else 0 */
    kds_billing_item items[KDS_BILLING_MAX_ITEMS];
    size_t n_items;
    int64_t period_cents;  /* sum of the items' period_cents */
    int64_t monthly_cents; /* sum of the items' monthly_cents */
    bool overflow;         /* an amount passed KDS_BILLING_MAX_NANO: the figures are capped
                              there and must not be reported */
} kds_billing_mode;

/* The largest amount a line item holds, in nano-dollars: $1 billion, well inside
 * kds_nano's int64 ($9.2 billion), so that rounding to the cent and the sums of items
 * cannot overflow. A bill past it (absurd prices, or a month of thousands of hours of an
 * immense stream) is flagged, not wrapped. */
#define KDS_BILLING_MAX_NANO INT64_C(1000000000000000000)

/* AWS's sizing rule (model.md section 7) applied to the busiest minutes. */
typedef struct kds_billing_sizing {
    double write_mib_per_s; /* peak per-minute write rate */
    double read_mib_per_s;  /* peak per-minute shared read rate (measured) */
    double records_per_s;   /* peak per-minute record rate */
    uint32_t by_write;      /* shards each rate needs, headroom included */
    uint32_t by_read;
    uint32_t by_records;
    uint32_t shards; /* max of the three, at least 1 */
} kds_billing_sizing;

typedef struct kds_bill {
    kds_billing_settings settings;
    kds_billing_sizing sizing;
    kds_billing_mode modes[KDS_BILL_MODES];
    kds_bill_mode cheapest; /* lowest monthly total (the first on a tie) */
    bool overflow;          /* a mode's overflow (kds_billing_mode) */
} kds_bill;

/* The bill as run: each stretch of the run in one mode billed at that mode's prices
 * (provisioned at the shards it had, not the sizing rule). */
typedef struct kds_billing_segment {
    kds_mode mode;
    sim_time start, end; /* ns */
    kds_billing_mode bill; /* named after the mode; provisioned: shards at creation */
} kds_billing_segment;

typedef struct kds_bill_as_run {
    kds_billing_segment *segs; /* owned, n of them */
    size_t n;
    int64_t period_cents;  /* sum of the segments' period_cents */
    int64_t monthly_cents; /* sum of the segments' monthly_cents */
    bool overflow;         /* a segment's overflow (kds_billing_mode) */
} kds_bill_as_run;

/* Bill segments segs[0..n) (kds_billing_segments) of the run whose meters are `total`
 * (kds_billing_meters), each in its own mode, into *out (free it with
 * kds_bill_as_run_fini). The monthly projection repeats the whole run: a segment's
 * traffic is scaled by month / run, its time (shard-hours, stream-hours, the
 * commitment) is its share of the month, and it holds the run's steady-state retention
 * bands for that share. Returns 0 or SIM_ENOMEM. */
int kds_billing_as_run(const kds_meters *total, const kds_meters *segs, size_t n,
                       const kds_prices *p, const kds_billing_settings *s, kds_bill_as_run *out);
void kds_bill_as_run_fini(kds_bill_as_run *b); /* NULL-safe */

/* Compute the bill of `m` at prices `p`. Never fails: an amount past
 * KDS_BILLING_MAX_NANO is capped there and flags out->overflow (and the mode's), and
 * such a bill must not be reported. */
void kds_billing_compute(const kds_meters *m, const kds_prices *p, const kds_billing_settings *s,
                         kds_bill *out);

/* The shard count of AWS's sizing rule for meters `m` with headroom `headroom`
 * (1e-9 fraction): ceil(max(write / write limit, shared read / read limit,
 * records / record limit) x (1 + headroom)) over the busiest minutes, at least 1. */
void kds_billing_size(const kds_meters *m, kds_nano headroom, kds_billing_sizing *out);

/* round(a x mul / div), half up, with a 128-bit intermediate: exact while
 * mul, div < 2^63 and the result fits in 127 bits. */
kds_u128 kds_billing_muldiv(kds_u128 a, uint64_t mul, uint64_t div);

/* A quantity as a real, for reports (quantity = base / div). */
double kds_billing_qty_value(kds_billing_qty q);

/* Nano-dollars (>= 0) rounded half up to whole cents. */
int64_t kds_billing_cents(kds_nano v);

#endif
