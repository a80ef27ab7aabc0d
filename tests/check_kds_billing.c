/* check_kds_billing.c - tests of the billing model: exact arithmetic and cent rounding,
 * every line item of the three capacity modes for the period and the monthly
 * projection, the boundaries AWS's rules turn on (a 25 KiB record and one byte more,
 * a 1 KiB record and 1,025 B, retention of exactly 24 h and of 7 days, the Advantage
 * commitment above and below), AWS's sizing rule, and the meters gathered from small
 * simulated worlds.
 *
 * The prices are the us-east-1 list of September 2026 (model.md section 9), written
 * here as test data in nano-dollars; the front end reads the same list from
 * scenarios/prices/us-east-1-2026-09.yaml.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kds_billing.h"
#include "kds_efo.h"
#include "testutil.h"
#include "testworld.h"

#define NANO(usd_millis) ((kds_nano)(usd_millis)*1000000) /* from thousandths of a dollar */
#define GIB (UINT64_C(1) << 30)
#define KIB UINT64_C(1024)
#define MIB (UINT64_C(1) << 20)

static void prices_2026_09(kds_prices *p)
{
    memset(p, 0, sizeof *p);
    p->prov_shard_hour = NANO(15);
    p->prov_put_payload_units = NANO(14);
    p->prov_extended_retention = NANO(20);
    p->prov_long_term_retention = NANO(23);
    p->prov_long_term_retrieval = NANO(21);
    p->prov_efo_consumer_shard_hour = NANO(15);
    p->prov_efo_data_retrieval = NANO(13);
    p->prov_shared_read = 0;
    p->std_stream_hour = NANO(40);
    p->std_data_written = NANO(80);
    p->std_data_read_shared = NANO(40);
    p->std_data_read_efo = NANO(50);
    p->std_extended_retention = NANO(100);
    p->std_long_term_retention = NANO(23);
    p->adv_stream_hour = 0;
    p->adv_data_written = NANO(32);
    p->adv_data_read = NANO(16);
    p->adv_retention = NANO(23);
    p->adv_commitment_written = 25 * KDS_NANO_PER_UNIT;
    p->adv_commitment_read = 25 * KDS_NANO_PER_UNIT;
    p->s3_delivery_standard = (kds_nano)27500000;
    p->s3_delivery_advantage = NANO(11);
}

/* Meters of a quiet provisioned stream: `shards` shards for `hours` hours, 24 h
 * retention, nothing written. */
static void quiet(kds_meters *m, uint32_t shards, uint64_t hours)
{
    memset(m, 0, sizeof *m);
    m->mode = KDS_MODE_PROVISIONED;
    m->duration = SIM_HOUR(hours);
    m->retention = SIM_HOUR(24);
    m->shards = shards;
    m->shard_ns = (kds_u128)shards * (uint64_t)SIM_HOUR(hours);
    m->shard_write_bytes_per_s = MIB;
    m->shard_write_records_per_s = 1000;
    m->shard_read_bytes_per_s = 2 * MIB;
}

static kds_bill bill_of(const kds_meters *m)
{
    kds_prices p;
    prices_2026_09(&p);
    kds_billing_settings s;
    kds_billing_settings_defaults(&s);
    kds_bill b;
    kds_billing_compute(m, &p, &s, &b);
    return b;
}

static const kds_billing_item *item(const kds_bill *b, kds_bill_mode mode, const char *name)
{
    const kds_billing_mode *md = &b->modes[mode];
    for (size_t i = 0; i < md->n_items; i++)
        if (strcmp(md->items[i].item, name) == 0)
            return &md->items[i];
    ck_abort_msg("no item %s in %s", name, md->name);
    return NULL;
}

#define ck_assert_u128_eq(a, b) ck_assert((kds_u128)(a) == (kds_u128)(b))
#define ck_assert_qty(q, expect) ck_assert_double_eq_tol(kds_billing_qty_value(q), (expect), 1e-9)

/* ---- arithmetic ---------------------------------------------------------------------- */

START_TEST(test_muldiv_rounds_half_up)
{
    ck_assert_u128_eq(kds_billing_muldiv(1, 1, 2), 1); /* 0.5 -> 1 */
    ck_assert_u128_eq(kds_billing_muldiv(1, 1, 3), 0); /* 0.33 -> 0 */
    ck_assert_u128_eq(kds_billing_muldiv(2, 1, 3), 1); /* 0.67 -> 1 */
    ck_assert_u128_eq(kds_billing_muldiv(5, 3, 2), 8); /* 7.5 -> 8 */
    ck_assert_u128_eq(kds_billing_muldiv(0, 12345, 7), 0);
    /* Far beyond 64 bits: 2^100 x 3 / 2^40 = 3 x 2^60, exact. */
    kds_u128 big = (kds_u128)1 << 100;
    ck_assert_u128_eq(kds_billing_muldiv(big, 3, UINT64_C(1) << 40), (kds_u128)3 << 60);
    /* (2^100 + 1) x 1e9 / 3: the remainder path keeps every digit. */
    kds_u128 a = big + 1, want = (a * 1000000000) / 3;
    if ((a * 1000000000) % 3 * 2 >= 3)
        want++;
    ck_assert_u128_eq(kds_billing_muldiv(a, 1000000000, 3), want);
}
END_TEST

START_TEST(test_cents_round_half_up)
{
    ck_assert_int_eq(kds_billing_cents(0), 0);
    ck_assert_int_eq(kds_billing_cents(4999999), 0); /* $0.004999999 */
    ck_assert_int_eq(kds_billing_cents(5000000), 1); /* $0.005 */
    ck_assert_int_eq(kds_billing_cents(14999999), 1);
    ck_assert_int_eq(kds_billing_cents(15000000), 2);
    ck_assert_int_eq(kds_billing_cents(KDS_NANO_PER_UNIT * 1234), 123400);
}
END_TEST

START_TEST(test_price_list_covers_the_struct)
{
    /* Every field of kds_prices is one entry of the list, each offset once. */
    ck_assert_uint_eq(kds_price_list_len * sizeof(kds_nano), sizeof(kds_prices));
    for (size_t i = 0; i < kds_price_list_len; i++)
        for (size_t j = 0; j < i; j++)
            ck_assert_uint_ne(kds_price_list[i].offset, kds_price_list[j].offset);
    kds_prices p;
    prices_2026_09(&p);
    ck_assert_int_eq(*kds_price_ref(&p, &kds_price_list[0]), NANO(15));
}
END_TEST

/* ---- provisioned --------------------------------------------------------------------- */

START_TEST(test_shard_hours)
{
    kds_meters m;
    quiet(&m, 4, 1);
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "shard_hours");
    ck_assert_str_eq(it->unit, "shard-hour");
    ck_assert_str_eq(it->price_key, "provisioned.shard_hour");
    ck_assert_qty(it->period, 4.0);
    ck_assert_int_eq(it->period_exact, NANO(60)); /* 4 x $0.015 */
    ck_assert_int_eq(it->period_cents, 6);
    ck_assert_qty(it->monthly, 2880.0);        /* 4 x 720 h */
    ck_assert_int_eq(it->monthly_cents, 4320); /* $43.20 */
    ck_assert_uint_eq(b.modes[KDS_BILL_PROVISIONED].shards, 4);
}
END_TEST

START_TEST(test_shard_hours_prorated)
{
    /* 90 minutes of 3 shards is 4.5 shard-hours, billed prorated. */
    kds_meters m;
    quiet(&m, 3, 1);
    m.duration = SIM_MIN(90);
    m.shard_ns = 3 * (uint64_t)SIM_MIN(90);
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "shard_hours");
    ck_assert_qty(it->period, 4.5);
    ck_assert_int_eq(it->period_exact, 67500000); /* $0.0675 */
    ck_assert_int_eq(it->period_cents, 7);
    ck_assert_qty(it->monthly, 3.0 * 720);
}
END_TEST

START_TEST(test_put_payload_units)
{
    kds_meters m;
    quiet(&m, 4, 1);
    m.put_units = 7200000;
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "put_payload_units");
    ck_assert_str_eq(it->unit, "million units");
    ck_assert_qty(it->period, 7.2);
    ck_assert_int_eq(it->period_exact, 100800000); /* 7.2 x $0.014 = $0.1008 */
    ck_assert_int_eq(it->period_cents, 10);
    ck_assert_qty(it->monthly, 5184.0); /* x 720 */
    ck_assert_int_eq(it->monthly_exact, NANO(72576));
    ck_assert_int_eq(it->monthly_cents, 7258); /* $72.576 -> $72.58 */
}
END_TEST

START_TEST(test_extended_retention_24h_is_free)
{
    kds_meters m;
    quiet(&m, 4, 1);
    m.retention = SIM_HOUR(24);
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "extended_retention");
    ck_assert_qty(it->period, 0.0);
    ck_assert_qty(it->monthly, 0.0);
    ck_assert_int_eq(it->monthly_cents, 0);
    /* No GB-month charge either, in any mode. */
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly_exact, 0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->monthly_exact, 0);
}
END_TEST

START_TEST(test_extended_retention_above_24h)
{
    kds_meters m;
    quiet(&m, 4, 1);
    m.retention = SIM_HOUR(24) + 1; /* one nanosecond more */
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "extended_retention");
    ck_assert_str_eq(it->unit, "shard-hour");
    ck_assert_qty(it->period, 4.0);
    ck_assert_int_eq(it->period_cents, 8); /* 4 x $0.020 */
    ck_assert_qty(it->monthly, 2880.0);
    ck_assert_int_eq(it->monthly_cents, 5760); /* $57.60 */
}
END_TEST

/* A stream writing 1 GiB per hour (exactly), for the steady-state retention bands. */
static void gib_per_hour(kds_meters *m, sim_time retention)
{
    quiet(m, 1, 1);
    m->retention = retention;
    m->bytes_in = GIB;
    m->bytes_in_kib_rounded = GIB;
}

START_TEST(test_retention_7d_has_no_long_term)
{
    kds_meters m;
    gib_per_hour(&m, SIM_DAY(7));
    kds_bill b = bill_of(&m);
    /* Band (24 h, 7 d] holds 6 days x 24 GiB/day = 144 GiB; nothing is older. */
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly, 144.0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly_cents,
                     1440); /* 144 GB-month x $0.10 */
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "long_term_retention")->monthly, 0.0);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED, "long_term_retention")->monthly, 0.0);
    ck_assert_int_eq(item(&b, KDS_BILL_PROVISIONED, "long_term_retention")->monthly_cents, 0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->monthly, 144.0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->monthly_cents,
                     331); /* 144 x $0.023 = $3.312 */
    /* Provisioned pays the flat add-on instead: 1 shard x 720 h x $0.02. */
    ck_assert_int_eq(item(&b, KDS_BILL_PROVISIONED, "extended_retention")->monthly_cents, 1440);
}
END_TEST

START_TEST(test_retention_above_7d_is_long_term)
{
    kds_meters m;
    gib_per_hour(&m, SIM_DAY(8));
    kds_bill b = bill_of(&m);
    /* One day beyond 7 days: 24 GiB held in the long-term band. */
    const kds_billing_item *lt = item(&b, KDS_BILL_PROVISIONED, "long_term_retention");
    ck_assert_str_eq(lt->unit, "GB-month");
    ck_assert_qty(lt->monthly, 24.0);
    ck_assert_int_eq(lt->monthly_cents, 55); /* 24 x $0.023 = $0.552 */
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly, 144.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "long_term_retention")->monthly, 24.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->monthly, 168.0);
    /* The 24 h - 7 d band stays capped at 6 days. */
    gib_per_hour(&m, SIM_DAY(365));
    b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly, 144.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "long_term_retention")->monthly,
                  358.0 * 24);
}
END_TEST

START_TEST(test_retention_period_from_byte_hours)
{
    /* The period bills the metered byte-hours: 720 GiB-hours are one GB-month. */
    kds_meters m;
    quiet(&m, 1, 48);
    m.retention = SIM_DAY(30);
    m.byte_hours_24h_7d = (kds_u128)720 * GIB;
    m.byte_hours_over_7d = (kds_u128)360 * GIB;
    kds_bill b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->period, 1.0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->period_cents, 10);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "long_term_retention")->period, 0.5);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED, "long_term_retention")->period, 0.5);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->period, 1.5);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "retention")->period_exact,
                     NANO(345) / 10); /* 1.5 x $0.023 */
}
END_TEST

START_TEST(test_efo_and_reads_provisioned)
{
    kds_meters m;
    quiet(&m, 2, 1);
    m.efo_consumer_shard_ns = 2 * (uint64_t)SIM_HOUR(1); /* one consumer on two shards */
    m.bytes_read_efo = 10 * GIB;
    m.bytes_read_shared = 20 * GIB;
    m.bytes_read_over_7d = 5 * GIB;
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_PROVISIONED, "efo_consumer_shard_hours");
    ck_assert_qty(it->period, 2.0);
    ck_assert_int_eq(it->period_cents, 3); /* 2 x $0.015 */
    ck_assert_qty(it->monthly, 1440.0);
    it = item(&b, KDS_BILL_PROVISIONED, "efo_data_retrieval");
    ck_assert_qty(it->period, 10.0);
    ck_assert_int_eq(it->period_cents, 13); /* 10 GB x $0.013 */
    it = item(&b, KDS_BILL_PROVISIONED, "shared_reads");
    ck_assert_qty(it->period, 20.0);
    ck_assert_int_eq(it->period_exact, 0); /* free under 7 days */
    it = item(&b, KDS_BILL_PROVISIONED, "long_term_retrieval");
    ck_assert_qty(it->period, 5.0);
    ck_assert_int_eq(it->period_exact, NANO(105)); /* 5 GB x $0.021 */
    ck_assert_int_eq(it->monthly_cents, 7560);     /* x 720 */
    /* Totals add the rounded line items. */
    const kds_billing_mode *md = &b.modes[KDS_BILL_PROVISIONED];
    int64_t sum = 0;
    for (size_t i = 0; i < md->n_items; i++)
        sum += md->items[i].period_cents;
    ck_assert_int_eq(md->period_cents, sum);
    ck_assert_int_eq(md->period_cents, 3 + 3 + 13 + 11);
}
END_TEST

/* ---- on demand ----------------------------------------------------------------------- */

START_TEST(test_on_demand_standard_items)
{
    kds_meters m;
    quiet(&m, 4, 2);
    m.mode = KDS_MODE_ON_DEMAND_STANDARD;
    m.bytes_in = 9 * GIB;
    m.bytes_in_kib_rounded = 10 * GIB;
    m.bytes_read_shared = 20 * GIB;
    m.bytes_read_efo = 10 * GIB;
    kds_bill b = bill_of(&m);
    const kds_billing_item *it = item(&b, KDS_BILL_ON_DEMAND_STANDARD, "stream_hours");
    ck_assert_str_eq(it->unit, "stream-hour");
    ck_assert_qty(it->period, 2.0);
    ck_assert_int_eq(it->period_cents, 8); /* 2 x $0.04 */
    ck_assert_qty(it->monthly, 720.0);
    ck_assert_int_eq(it->monthly_cents, 2880);
    it = item(&b, KDS_BILL_ON_DEMAND_STANDARD, "data_written");
    ck_assert_qty(it->period, 10.0); /* the 1 KiB-rounded bytes */
    ck_assert_int_eq(it->period_cents, 80);
    ck_assert_qty(it->monthly, 3600.0); /* x 360 periods */
    ck_assert_int_eq(it->monthly_cents, 28800);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "data_read_shared")->period_cents, 80);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "data_read_efo")->period_cents, 50);
    ck_assert_int_eq(b.modes[KDS_BILL_ON_DEMAND_STANDARD].period_cents, 8 + 80 + 80 + 50);
}
END_TEST

START_TEST(test_on_demand_advantage_below_commitment)
{
    /* One hour at 10 GiB written and 20 GiB read: below 25 MiB/s each way. The
     * commitment is 25 MiB/s x 3600 s = 87.890625 GB each way. */
    kds_meters m;
    quiet(&m, 4, 1);
    m.bytes_in = m.bytes_in_kib_rounded = 10 * GIB;
    m.bytes_read_shared = 15 * GIB;
    m.bytes_read_efo = 5 * GIB;
    kds_bill b = bill_of(&m);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "stream_hours")->period_exact, 0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_written")->period_cents, 32);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_read")->period, 20.0);
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_read")->period_cents, 32);
    const kds_billing_item *w =
        item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_written");
    ck_assert_qty(w->period, 77.890625);
    ck_assert_int_eq(w->period_exact, 2492500000); /* x $0.032 = $2.4925 */
    ck_assert_int_eq(w->period_cents, 249);
    const kds_billing_item *r = item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_read");
    ck_assert_qty(r->period, 67.890625);
    ck_assert_int_eq(r->period_exact, 1086250000); /* x $0.016 = $1.08625 */
    ck_assert_int_eq(r->period_cents, 109);
    /* Written + shortfall is exactly the commitment: 87.890625 GB x $0.032. */
    ck_assert_int_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_written")->period_exact +
                         w->period_exact,
                     2812500000);
    /* The month: 720 h x 25 MiB/s = 63,281.25 GB committed, 7,200 GB written. */
    ck_assert_qty(w->monthly, 63281.25 - 7200.0);
    ck_assert_int_eq(b.modes[KDS_BILL_ON_DEMAND_ADVANTAGE].period_cents,
                     0 + 32 + 32 + 0 + 249 + 109);
}
END_TEST

START_TEST(test_on_demand_advantage_above_commitment)
{
    kds_meters m;
    quiet(&m, 4, 1);
    /* 30 MiB/s for an hour each way: above the floor, no shortfall. */
    m.bytes_in = m.bytes_in_kib_rounded = 30 * MIB * 3600;
    m.bytes_read_shared = 30 * MIB * 3600;
    kds_bill b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_written")->period,
                  0.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_read")->period, 0.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_written")->monthly,
                  0.0);
    ck_assert_int_eq(b.modes[KDS_BILL_ON_DEMAND_ADVANTAGE].monthly_cents,
                     item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_written")->monthly_cents +
                         item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_read")->monthly_cents);
    /* Exactly at the floor: no shortfall either. */
    m.bytes_in_kib_rounded = 25 * MIB * 3600;
    m.bytes_read_shared = 25 * MIB * 3600;
    b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_written")->period,
                  0.0);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_read")->period, 0.0);
    /* One byte below: a one-byte shortfall. */
    m.bytes_read_shared -= 1;
    b = bill_of(&m);
    ck_assert_u128_eq(
        item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "commitment_shortfall_read")->period.base, 1);
}
END_TEST

START_TEST(test_month_hours_setting)
{
    kds_meters m;
    quiet(&m, 1, 1);
    kds_prices p;
    prices_2026_09(&p);
    kds_billing_settings s;
    kds_billing_settings_defaults(&s);
    ck_assert_uint_eq(s.month_hours, 720);
    s.month_hours = 730;
    kds_bill b;
    kds_billing_compute(&m, &p, &s, &b);
    ck_assert_qty(b.modes[KDS_BILL_PROVISIONED].items[0].monthly, 730.0);
    ck_assert_int_eq(b.modes[KDS_BILL_PROVISIONED].items[0].monthly_cents, 1095); /* $10.95 */
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "stream_hours")->monthly, 730.0);
}
END_TEST

START_TEST(test_cheapest_mode)
{
    /* A quiet stream: Advantage pays the whole commitment, Standard its stream-hours,
     * provisioned one shard-hour per hour: provisioned is cheapest. */
    kds_meters m;
    quiet(&m, 1, 1);
    kds_bill b = bill_of(&m);
    ck_assert_int_eq(b.cheapest, KDS_BILL_PROVISIONED);
    /* 40 shards idle: the sizing rule's one shard is cheaper still, and Standard's
     * $0.04 per hour beats 40 x $0.015. */
    quiet(&m, 40, 1);
    b = bill_of(&m);
    ck_assert_uint_eq(b.modes[KDS_BILL_PROVISIONED_SIZING].shards, 1);
    ck_assert_int_eq(b.cheapest, KDS_BILL_PROVISIONED_SIZING);
    ck_assert_int_lt(b.modes[KDS_BILL_ON_DEMAND_STANDARD].monthly_cents,
                     b.modes[KDS_BILL_PROVISIONED].monthly_cents);
}
END_TEST

/* ---- the sizing rule ----------------------------------------------------------------- */

START_TEST(test_sizing_rule)
{
    kds_meters m;
    quiet(&m, 1, 1);
    /* Busiest minute: 1.5 MiB/s, 2,500 records/s, shared reads 5 MiB/s. */
    m.peak_write_bytes = (kds_billing_peak){90 * MIB, SIM_MIN(1)};
    m.peak_write_records = (kds_billing_peak){150000, SIM_MIN(1)};
    m.peak_read_bytes = (kds_billing_peak){300 * MIB, SIM_MIN(1)};
    kds_billing_sizing sz;
    kds_billing_size(&m, 0, &sz);
    ck_assert_double_eq_tol(sz.write_mib_per_s, 1.5, 1e-12);
    ck_assert_double_eq_tol(sz.records_per_s, 2500, 1e-9);
    ck_assert_double_eq_tol(sz.read_mib_per_s, 5.0, 1e-12);
    ck_assert_uint_eq(sz.by_write, 2);
    ck_assert_uint_eq(sz.by_records, 3);
    ck_assert_uint_eq(sz.by_read, 3);
    ck_assert_uint_eq(sz.shards, 3);
    /* 20 % headroom: 2,500 x 1.2 = 3,000 records/s is exactly 3 shards, not 4. */
    kds_billing_size(&m, KDS_NANO_PER_UNIT / 5, &sz);
    ck_assert_uint_eq(sz.by_records, 3);
    ck_assert_uint_eq(sz.by_write, 2); /* 1.8 MiB/s */
    ck_assert_uint_eq(sz.by_read, 3);  /* 6 MiB/s / 2 */
    /* 1,000 records/s is one shard; 1,001 is two. */
    m.peak_write_records = (kds_billing_peak){60000, SIM_MIN(1)};
    m.peak_write_bytes = m.peak_read_bytes = (kds_billing_peak){0, 0};
    kds_billing_size(&m, 0, &sz);
    ck_assert_uint_eq(sz.shards, 1);
    m.peak_write_records = (kds_billing_peak){60060, SIM_MIN(1)};
    kds_billing_size(&m, 0, &sz);
    ck_assert_uint_eq(sz.shards, 2);
    /* A short last minute is a rate over its own length: 1,000 records in 0.5 s. */
    m.peak_write_records = (kds_billing_peak){1000, SIM_MS(500)};
    kds_billing_size(&m, 0, &sz);
    ck_assert_uint_eq(sz.shards, 2);
    /* No traffic at all: still one shard. */
    m.peak_write_records = (kds_billing_peak){0, 0};
    kds_billing_size(&m, 0, &sz);
    ck_assert_uint_eq(sz.shards, 1);
}
END_TEST

START_TEST(test_sizing_variant_bills_its_shards)
{
    kds_meters m;
    quiet(&m, 8, 1);
    m.retention = SIM_DAY(2);
    m.peak_write_records = (kds_billing_peak){150000, SIM_MIN(1)};
    kds_bill b = bill_of(&m);
    const kds_billing_mode *md = &b.modes[KDS_BILL_PROVISIONED_SIZING];
    ck_assert_str_eq(md->name, "provisioned_sizing_rule");
    ck_assert_uint_eq(md->shards, 3);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED_SIZING, "shard_hours")->period, 3.0);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED_SIZING, "extended_retention")->monthly, 2160.0);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED, "shard_hours")->period, 8.0);
    /* Two EFO consumers on every shard: 16 consumer-shard-hours on the scenario's 8
     * shards, 6 on the rule's 3. */
    m.efo_consumer_shard_ns = 16 * (uint64_t)SIM_HOUR(1);
    b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED, "efo_consumer_shard_hours")->period, 16.0);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED_SIZING, "efo_consumer_shard_hours")->period, 6.0);
    ck_assert_int_eq(
        item(&b, KDS_BILL_PROVISIONED_SIZING, "efo_consumer_shard_hours")->period_cents,
        9); /* 6 x $0.015 */
    /* After a reshard the bill holds closed shards too (10 shard-hours here), and so do
     * the consumers' registrations (20): the rule's 3 shards still get both consumers
     * for the hour, 6 consumer-shard-hours. */
    m.shard_ns = 10 * (uint64_t)SIM_HOUR(1);
    m.efo_consumer_shard_ns = 20 * (uint64_t)SIM_HOUR(1);
    b = bill_of(&m);
    ck_assert_qty(item(&b, KDS_BILL_PROVISIONED_SIZING, "efo_consumer_shard_hours")->period, 6.0);
}
END_TEST

/* ---- the bill as run ------------------------------------------------------------------ */

static const kds_billing_item *seg_item(const kds_bill_as_run *b, size_t i, const char *name)
{
    const kds_billing_mode *md = &b->segs[i].bill;
    for (size_t k = 0; k < md->n_items; k++)
        if (strcmp(md->items[k].item, name) == 0)
            return &md->items[k];
    ck_abort_msg("no item %s in segment %zu", name, i);
    return NULL;
}

/* A 4 h run: provisioned on 2 shards for 1 h (1 million PUT units), On-demand Standard
 * for 2 h (1 GB written), On-demand Advantage for 1 h (nothing). Each stretch is billed
 * in its own mode; the month (720 h) repeats the run 180 times. */
START_TEST(test_as_run_bills_each_mode)
{
    kds_meters total, seg[3];
    quiet(&total, 2, 4);
    total.mode = KDS_MODE_ON_DEMAND_ADVANTAGE;
    total.put_units = 1000000;
    total.bytes_in_kib_rounded = GIB;
    quiet(&seg[0], 2, 1);
    seg[0].put_units = 1000000;
    quiet(&seg[1], 2, 2);
    seg[1].mode = KDS_MODE_ON_DEMAND_STANDARD;
    seg[1].start = SIM_HOUR(1);
    seg[1].bytes_in_kib_rounded = GIB;
    quiet(&seg[2], 2, 1);
    seg[2].mode = KDS_MODE_ON_DEMAND_ADVANTAGE;
    seg[2].start = SIM_HOUR(3);
    kds_prices p;
    prices_2026_09(&p);
    kds_billing_settings s;
    kds_billing_settings_defaults(&s);
    kds_bill_as_run b;
    ck_assert_int_eq(kds_billing_as_run(&total, seg, 3, &p, &s, &b), 0);
    ck_assert_uint_eq(b.n, 3);
    ck_assert_str_eq(b.segs[0].bill.name, "provisioned");
    ck_assert_int_eq(b.segs[1].start, SIM_HOUR(1));
    ck_assert_int_eq(b.segs[1].end, SIM_HOUR(3));
    /* Provisioned: 2 shard-hours, $0.03 (a month: 360, $5.40); 1 M units, $0.014 ->
     * $0.01 (180 M, $2.52). */
    ck_assert_int_eq(seg_item(&b, 0, "shard_hours")->period_cents, 3);
    ck_assert_int_eq(seg_item(&b, 0, "shard_hours")->monthly_cents, 540);
    ck_assert_int_eq(seg_item(&b, 0, "put_payload_units")->period_cents, 1);
    ck_assert_int_eq(seg_item(&b, 0, "put_payload_units")->monthly_cents, 252);
    ck_assert_int_eq(b.segs[0].bill.period_cents, 4);
    ck_assert_int_eq(b.segs[0].bill.monthly_cents, 792);
    /* Standard: 2 stream-hours, $0.08 (half the month, 360 h: $14.40); 1 GB written,
     * $0.08 (180 GB, $14.40). */
    ck_assert_int_eq(seg_item(&b, 1, "stream_hours")->period_cents, 8);
    ck_assert_int_eq(seg_item(&b, 1, "stream_hours")->monthly_cents, 1440);
    ck_assert_int_eq(seg_item(&b, 1, "data_written")->monthly_cents, 1440);
    ck_assert_int_eq(b.segs[1].bill.period_cents, 16);
    ck_assert_int_eq(b.segs[1].bill.monthly_cents, 2880);
    /* Advantage for 1 h writes and reads nothing: the commitment of 25 MiB/s for 1 h,
     * 87.890625 GB, falls short entirely: $2.8125 -> $2.81 written, $1.40625 -> $1.41
     * read; for its quarter of the month (180 h) $506.25 and $253.125 -> $253.13. */
    ck_assert_int_eq(seg_item(&b, 2, "commitment_shortfall_written")->period_cents, 281);
    ck_assert_int_eq(seg_item(&b, 2, "commitment_shortfall_read")->period_cents, 141);
    ck_assert_int_eq(seg_item(&b, 2, "commitment_shortfall_written")->monthly_cents, 50625);
    ck_assert_int_eq(seg_item(&b, 2, "commitment_shortfall_read")->monthly_cents, 25313);
    ck_assert_int_eq(b.period_cents, 4 + 16 + 281 + 141);
    ck_assert_int_eq(b.monthly_cents, 792 + 2880 + 50625 + 25313);
    kds_bill_as_run_fini(&b);
    kds_bill_as_run_fini(NULL);
}
END_TEST

/* The month's retention: the run's steady-state bands, held by each stretch for its
 * share of the month. 48 h retention, 10 GiB written in 10 h: the (24 h, 7 d] band holds
 * 24 GiB; 3 h provisioned then 7 h Standard: the Standard stretch holds it for 7/10 of
 * the month, 16.8 GB-months at $0.10, $1.68 of the $2.40 a month of Standard bills. */
START_TEST(test_as_run_retention_share)
{
    kds_meters total, seg[2];
    quiet(&total, 1, 10);
    total.retention = SIM_HOUR(48);
    total.bytes_in = 10 * GIB;
    quiet(&seg[0], 1, 3);
    seg[0].retention = SIM_HOUR(48);
    seg[0].bytes_in = 3 * GIB;
    quiet(&seg[1], 1, 7);
    seg[1].mode = KDS_MODE_ON_DEMAND_STANDARD;
    seg[1].start = SIM_HOUR(3);
    seg[1].retention = SIM_HOUR(48);
    seg[1].bytes_in = 7 * GIB;
    kds_prices p;
    prices_2026_09(&p);
    kds_billing_settings s;
    kds_billing_settings_defaults(&s);
    kds_bill_as_run b;
    ck_assert_int_eq(kds_billing_as_run(&total, seg, 2, &p, &s, &b), 0);
    ck_assert_qty(seg_item(&b, 1, "extended_retention")->monthly, 16.8);
    ck_assert_int_eq(seg_item(&b, 1, "extended_retention")->monthly_cents, 168);
    /* The provisioned stretch pays the flat add-on on its shard-hours instead: 216 of
     * the month's 720, $4.32. */
    ck_assert_int_eq(seg_item(&b, 0, "extended_retention")->monthly_cents, 432);
    kds_bill_as_run_fini(&b);
}
END_TEST

/* ---- meters from simulated worlds ------------------------------------------------------ */

typedef struct world_fx {
    kds_world_cfg cfg;
    kds_producer_cfg prod;
    kds_world w;
    kds_meters m;
} world_fx;

/* One producer of `size`-byte records at `rate` records/s on a 1-shard provisioned
 * stream, run for `duration`. */
static void run_world_agg(world_fx *f, uint64_t size, double rate, sim_time duration,
                          sim_time retention, uint32_t aggregate)
{
    memset(f, 0, sizeof *f);
    tw_one_producer(&f->cfg, &f->prod, 7, duration, 1, rate, (double)size);
    f->cfg.stream.retention = retention;
    f->prod.name = "p";
    f->prod.linger = SIM_S(1);
    f->prod.aggregate = aggregate;
    ck_assert_int_eq(kds_world_init(&f->w, &f->cfg), 0);
    kds_world_run(&f->w);
    kds_billing_meters(&f->w, &f->m);
    ck_assert_uint_gt(f->m.records_in, 0);
}

static void run_world(world_fx *f, uint64_t size, double rate, sim_time duration,
                      sim_time retention)
{
    run_world_agg(f, size, rate, duration, retention, 1);
}

START_TEST(test_world_put_units_at_25kib)
{
    world_fx f;
    run_world(&f, 25 * KIB, 10, SIM_S(30), SIM_HOUR(24));
    ck_assert_uint_eq(f.m.put_units, f.m.records_in); /* exactly 25 KiB: one unit each */
    kds_bill b = bill_of(&f.m);
    ck_assert_u128_eq(item(&b, KDS_BILL_PROVISIONED, "put_payload_units")->period.base,
                      f.m.records_in);
    kds_world_fini(&f.w);

    run_world(&f, 25 * KIB + 1, 10, SIM_S(30), SIM_HOUR(24));
    ck_assert_uint_eq(f.m.put_units, 2 * f.m.records_in); /* one byte more: two units */
    b = bill_of(&f.m);
    ck_assert_u128_eq(item(&b, KDS_BILL_PROVISIONED, "put_payload_units")->period.base,
                      2 * f.m.records_in);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_world_kib_rounding)
{
    world_fx f;
    run_world(&f, 1024, 100, SIM_S(30), SIM_HOUR(24));
    ck_assert_uint_eq(f.m.bytes_in, 1024 * f.m.records_in);
    ck_assert_uint_eq(f.m.bytes_in_kib_rounded, 1024 * f.m.records_in); /* 1 KiB billed */
    kds_bill b = bill_of(&f.m);
    ck_assert_u128_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "data_written")->period.base,
                      1024 * f.m.records_in);
    kds_world_fini(&f.w);

    run_world(&f, 1025, 100, SIM_S(30), SIM_HOUR(24));
    ck_assert_uint_eq(f.m.bytes_in, 1025 * f.m.records_in);
    ck_assert_uint_eq(f.m.bytes_in_kib_rounded, 2048 * f.m.records_in); /* 2 KiB billed */
    b = bill_of(&f.m);
    ck_assert_u128_eq(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "data_written")->period.base,
                      2048 * f.m.records_in);
    ck_assert_u128_eq(item(&b, KDS_BILL_ON_DEMAND_ADVANTAGE, "data_written")->period.base,
                      2048 * f.m.records_in);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_world_kpl_aggregation)
{
    /* 600 user records/s of 1 KiB for a minute on one shard. Alone: one PUT unit each. */
    world_fx f;
    run_world_agg(&f, 1024, 600, SIM_MIN(1), SIM_HOUR(24), 1);
    uint64_t plain_units = f.m.put_units;
    ck_assert_uint_eq(plain_units, f.m.records_in);
    ck_assert_uint_ge(f.m.records_in, 600 * 59);
    kds_world_fini(&f.w);
    /* 24 to a Kinesis record: 24 KiB + the 20-byte header = 24,596 B, one unit per 24
     * user records: 24 times fewer units. */
    run_world_agg(&f, 1024, 600, SIM_MIN(1), SIM_HOUR(24), 24);
    ck_assert_uint_eq(f.m.bytes_in, (24 * 1024 + 20) * f.m.records_in);
    ck_assert_uint_eq(f.m.put_units, f.m.records_in);
    ck_assert_uint_ge(f.m.records_in, 25 * 59);
    ck_assert_uint_le(f.m.records_in, 25 * 60);
    ck_assert_uint_le(f.m.put_units * 23, plain_units);
    kds_world_fini(&f.w);
    /* 25 to a record: 25,620 B, just above 25 KiB: two units each. */
    run_world_agg(&f, 1024, 600, SIM_MIN(1), SIM_HOUR(24), 25);
    ck_assert_uint_eq(f.m.bytes_in, (25 * 1024 + 20) * f.m.records_in);
    ck_assert_uint_eq(f.m.put_units, 2 * f.m.records_in);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_world_meters)
{
    world_fx f;
    run_world(&f, 1000, 200, SIM_MIN(3), SIM_HOUR(48));
    kds_meters *m = &f.m;
    ck_assert_int_eq(m->duration, SIM_MIN(3));
    ck_assert_int_eq(m->retention, SIM_HOUR(48));
    ck_assert_uint_eq(m->shards, 1);
    ck_assert_u128_eq(m->shard_ns, SIM_MIN(3)); /* one shard, the whole run */
    ck_assert_uint_eq(m->bytes_in, 1000 * m->records_in);
    ck_assert_uint_eq(m->put_units, m->records_in);
    ck_assert_uint_eq(m->shard_write_records_per_s, 1000);
    /* The busiest minute holds about 200 records/s x 60 s. */
    ck_assert_int_eq(m->peak_write_records.span, SIM_MIN(1));
    ck_assert_uint_ge(m->peak_write_records.amount, 11800);
    ck_assert_uint_le(m->peak_write_records.amount, 12200);
    ck_assert_uint_eq(m->peak_write_bytes.amount, 1000 * m->peak_write_records.amount);
    ck_assert_uint_eq(m->bytes_read_shared, 0);
    ck_assert_uint_eq(m->peak_read_bytes.amount, 0);
    /* Nothing was 24 h old: no retention byte-hours in the period. */
    ck_assert_u128_eq(m->byte_hours_24h_7d, 0);
    kds_bill b = bill_of(m);
    ck_assert_uint_eq(b.sizing.shards, 1);
    ck_assert_uint_eq(b.modes[KDS_BILL_PROVISIONED].shards, 1);
    /* Monthly steady state at 48 h: one day of writes in the (24 h, 7 d] band. */
    double day_gb = (double)m->bytes_in / (3.0 * 60) * 86400 / (double)GIB;
    ck_assert_double_eq_tol(
        kds_billing_qty_value(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->monthly),
        day_gb, 1e-6);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_world_retention_meter)
{
    /* 26 h at 10 records/s with 48 h retention: the first two hours' records pass 24 h
     * before the end, so the band (24 h, 7 d] holds byte-hours. */
    world_fx f;
    run_world(&f, 1024, 10, SIM_HOUR(26), SIM_HOUR(48));
    kds_meters *m = &f.m;
    double want = 0;
    for (size_t i = 0; i < f.w.stream.n_shards; i++)
        want += f.w.stream.shards[i]->st.byte_hours_24h_7d;
    ck_assert(want > 0);
    ck_assert_u128_eq(m->byte_hours_24h_7d, (kds_u128)(want + 0.5));
    /* The band fills at a constant rate from 24 h: it holds h1 (what was written by
     * 1 h) at 25 h and h2 at 26 h, and the average of each hour's two ends stands for
     * the hour: h1 / 2 + (h1 + h2) / 2 byte-hours, about 2 x 36,000 x 1 KiB, the exact
     * integral for a constant rate. Nothing has expired, so the log still holds both. */
    const kds_log *l = &f.w.stream.shards[0]->log;
    uint64_t h1 = kds_log_bytes_written_before(l, SIM_HOUR(1), NULL);
    uint64_t h2 = kds_log_bytes_written_before(l, SIM_HOUR(2), NULL);
    ck_assert_uint_eq(h2 % 2, 0);
    ck_assert_u128_eq(m->byte_hours_24h_7d, h1 + h2 / 2);
    ck_assert_double_eq_tol((double)m->byte_hours_24h_7d, 2.0 * 36000 * 1024,
                            0.001 * 2 * 36000 * 1024);
    kds_bill b = bill_of(m);
    ck_assert_qty(item(&b, KDS_BILL_ON_DEMAND_STANDARD, "extended_retention")->period,
                  (double)m->byte_hours_24h_7d / (double)GIB / 720);
    kds_world_fini(&f.w);
}
END_TEST

START_TEST(test_world_read_peak_measured)
{
    /* 500 records/s of 1 KiB on one shard for 10 minutes, and a polling reader that
     * starts at minute 5 at the trim horizon: it catches up at the shard's 2 MiB/s, so
     * its busiest minute reads about four times what any minute writes. An estimate
     * from the writes and the run's read fan-out would say about one. */
    world_fx f;
    memset(&f, 0, sizeof f);
    tw_one_producer(&f.cfg, &f.prod, 7, SIM_MIN(10), 1, 500, 1024);
    f.prod.name = "p";
    f.prod.linger = SIM_MS(100);
    kds_consumer_cfg c = {.kind = KDS_CONSUMER_POLLING};
    kds_poller_cfg_defaults(&c.polling);
    c.polling.name = "late";
    c.polling.start = KDS_START_TRIM_HORIZON;
    c.polling.begin = SIM_MIN(5);
    f.cfg.consumers = &c;
    f.cfg.n_consumers = 1;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    kds_world_run(&f.w);
    kds_billing_meters(&f.w, &f.m);
    kds_meters *m = &f.m;

    /* The peak is the busiest minute of the shard's shared reads. */
    const sim_series *out = &f.w.stream.shards[0]->st.out_bytes_min;
    double most = 0;
    for (size_t i = 0; i < out->n; i++)
        if (sim_series_get(out, i) > most)
            most = sim_series_get(out, i);
    ck_assert_int_eq(m->peak_read_bytes.span, SIM_MIN(1));
    ck_assert_uint_eq(m->peak_read_bytes.amount, (uint64_t)most);
    ck_assert_uint_ge(m->peak_read_bytes.amount, 3 * m->peak_write_bytes.amount);
    /* Catching up at 2 MiB/s: a minute reads at most 120 MiB plus one call's overdraft. */
    ck_assert_uint_le(m->peak_read_bytes.amount, 130 * MIB);
    /* The fan-out estimate would have stayed near the writes. */
    ck_assert_uint_le(m->bytes_read_shared, m->bytes_in);

    kds_bill b = bill_of(m);
    ck_assert_uint_eq(b.sizing.by_write, 1);
    ck_assert_uint_ge(b.sizing.by_read, 2);
    ck_assert_uint_eq(b.sizing.shards, b.sizing.by_read);
    kds_world_fini(&f.w);
}
END_TEST

/* A provisioned stream of 2 shards with 48 h retention and an EFO consumer switches to
 * On-demand Standard at 25 h 30 m of a 26 h run: two segments, which add up to the
 * run's meters; the first holds its 25.5 h of both shards and of the registration, and
 * retention byte-hours metered up to the switch. */
START_TEST(test_world_segments_add_up)
{
    world_fx f;
    memset(&f, 0, sizeof f);
    tw_one_producer(&f.cfg, &f.prod, 3, SIM_HOUR(26), 2, 10, 1024);
    f.cfg.stream.retention = SIM_HOUR(48);
    kds_capacity_event ev = {.at = SIM_HOUR(25) + SIM_MIN(30),
                             .kind = KDS_OP_MODE_SWITCH,
                             .target = KDS_MODE_ON_DEMAND_STANDARD};
    f.cfg.capacity.events = &ev;
    f.cfg.capacity.n_events = 1;
    kds_efo_consumer_cfg efo;
    kds_efo_consumer_cfg_defaults(&efo);
    kds_consumer_cfg c = {.kind = KDS_CONSUMER_MODEL, .make = kds_efo_make, .cfg = &efo};
    f.cfg.consumers = &c;
    f.cfg.n_consumers = 1;
    ck_assert_int_eq(kds_world_init(&f.w, &f.cfg), 0);
    kds_world_run(&f.w);
    kds_billing_meters(&f.w, &f.m);
    ck_assert_uint_eq(f.w.n_switches, 1);
    kds_meters seg[2];
    ck_assert_uint_eq(kds_billing_segments(&f.w, seg, 2), 2);
    sim_time at = SIM_HOUR(25) + SIM_MIN(30);
    ck_assert_int_eq(seg[0].mode, KDS_MODE_PROVISIONED);
    ck_assert_int_eq(seg[0].start, 0);
    ck_assert_int_eq(seg[0].duration, at);
    ck_assert_int_eq(seg[1].mode, KDS_MODE_ON_DEMAND_STANDARD);
    ck_assert_int_eq(seg[1].start, at);
    ck_assert_int_eq(seg[1].duration, SIM_HOUR(26) - at);
    ck_assert_u128_eq(seg[0].shard_ns, 2 * (uint64_t)at);
    ck_assert_u128_eq(seg[0].efo_consumer_shard_ns, 2 * (uint64_t)at);
    ck_assert(seg[0].byte_hours_24h_7d > 0 && seg[1].byte_hours_24h_7d > 0);
    ck_assert(seg[0].bytes_in > 0 && seg[1].bytes_in > 0 && seg[1].bytes_read_efo > 0);
    const kds_meters *m = &f.m;
    ck_assert_u128_eq(seg[0].shard_ns + seg[1].shard_ns, m->shard_ns);
    ck_assert_u128_eq(seg[0].efo_consumer_shard_ns + seg[1].efo_consumer_shard_ns,
                      m->efo_consumer_shard_ns);
    ck_assert_uint_eq(seg[0].records_in + seg[1].records_in, m->records_in);
    ck_assert_uint_eq(seg[0].bytes_in + seg[1].bytes_in, m->bytes_in);
    ck_assert_uint_eq(seg[0].put_units + seg[1].put_units, m->put_units);
    ck_assert_uint_eq(seg[0].bytes_in_kib_rounded + seg[1].bytes_in_kib_rounded,
                      m->bytes_in_kib_rounded);
    ck_assert_u128_eq(seg[0].byte_hours_24h_7d + seg[1].byte_hours_24h_7d, m->byte_hours_24h_7d);
    ck_assert_uint_eq(seg[0].bytes_read_efo + seg[1].bytes_read_efo, m->bytes_read_efo);
    kds_world_fini(&f.w);
}
END_TEST

static Suite *billing_suite(void)
{
    Suite *s = suite_create("kds_billing");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_muldiv_rounds_half_up);
    tcase_add_test(core, test_cents_round_half_up);
    tcase_add_test(core, test_price_list_covers_the_struct);
    tcase_add_test(core, test_shard_hours);
    tcase_add_test(core, test_shard_hours_prorated);
    tcase_add_test(core, test_put_payload_units);
    tcase_add_test(core, test_efo_and_reads_provisioned);
    tcase_add_test(core, test_on_demand_standard_items);
    tcase_add_test(core, test_month_hours_setting);
    tcase_add_test(core, test_cheapest_mode);
    tcase_add_test(core, test_as_run_bills_each_mode);
    tcase_add_test(core, test_as_run_retention_share);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, test_extended_retention_24h_is_free);
    tcase_add_test(limits, test_extended_retention_above_24h);
    tcase_add_test(limits, test_retention_7d_has_no_long_term);
    tcase_add_test(limits, test_retention_above_7d_is_long_term);
    tcase_add_test(limits, test_retention_period_from_byte_hours);
    tcase_add_test(limits, test_on_demand_advantage_below_commitment);
    tcase_add_test(limits, test_on_demand_advantage_above_commitment);
    tcase_add_test(limits, test_sizing_rule);
    tcase_add_test(limits, test_sizing_variant_bills_its_shards);
    suite_add_tcase(s, limits);

    TCase *world = tcase_create("world");
    tcase_add_test(world, test_world_put_units_at_25kib);
    tcase_add_test(world, test_world_kib_rounding);
    tcase_add_test(world, test_world_kpl_aggregation);
    tcase_add_test(world, test_world_meters);
    tcase_add_test(world, test_world_retention_meter);
    tcase_add_test(world, test_world_read_peak_measured);
    tcase_add_test(world, test_world_segments_add_up);
    suite_add_tcase(s, world);
    return s;
}

int main(void)
{
    return tu_run_suite(billing_suite());
}
