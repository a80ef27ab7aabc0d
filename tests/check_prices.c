/* check_prices.c - tests of the price-file loader and the scenario's `billing`
 * settings (cli/prices.h): the shipped price file, plain-decimal parsing, a missing,
 * unknown or bad item with its file:line:col message, and overrides, month_hours and
 * sizing_headroom from a scenario.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prices.h"
#include "sim_err.h"
#include "testutil.h"

#define PRICES "scenarios/prices/us-east-1-2026-09.yaml"
#define M(x) ((kds_nano)(x)*1000000) /* thousandths of a dollar, in nano-dollars */

/* A temporary file holding `text`; its name goes into buf. */
static const char *temp_file(char *buf, size_t n, const char *text)
{
    snprintf(buf, n, "/tmp/check_prices_XXXXXX");
    int fd = mkstemp(buf);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(text);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return buf;
}

/* The shipped file with the line `from` replaced by `to` (`to` may hold several lines,
 * or be "" to delete it). */
static char *edited(const char *from, const char *to)
{
    FILE *f = fopen(tu_src(PRICES), "rb");
    ck_assert_ptr_nonnull(f);
    static char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "no line '%s' in the price file", from);
    static char out[16384];
    snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

/* The line number (1-based) of the first line of `text` starting with `line`. */
static long line_of(const char *text, const char *line)
{
    long n = 1;
    for (const char *p = text; *p; p++) {
        if ((p == text || p[-1] == '\n') && strncmp(p, line, strlen(line)) == 0)
            return n;
        if (*p == '\n')
            n++;
    }
    return -1;
}

static void expect_item(const ydiag *g, size_t i, long line, long col, const char *path,
                        const char *msg)
{
    ck_assert_uint_gt(g->n, i);
    const ydiag_item *it = &g->items[i];
    ck_assert_int_eq(it->line, line);
    ck_assert_int_eq(it->col, col);
    ck_assert_str_eq(it->path, path);
    ck_assert_str_eq(it->msg, msg);
}

/* ---- plain decimals ------------------------------------------------------------------ */

typedef struct dec_case {
    const char *text;
    int rc;
    kds_nano value;
} dec_case;

static const dec_case DEC[] = {
    {"0.014", 0, 14000000},
    {"0.0275", 0, 27500000},
    {"25", 0, 25000000000},
    {"0", 0, 0},
    {"0.10", 0, 100000000},
    {".5", 0, 500000000},
    {"5.", 0, 5000000000},
    {"0.000000001", 0, 1},
    {"0.1234567890", 0, 123456789}, /* a tenth decimal place that is 0 is harmless */
    {"1000", 0, 1000000000000},
    {"0.0000000001", SIM_ELIMIT, 0},
    {"1000.000000001", SIM_ERANGE, 0},
    {"1001", SIM_ERANGE, 0},
    {"99999999999999999999999999", SIM_ERANGE, 0},
    {"", SIM_ESYNTAX, 0},
    {".", SIM_ESYNTAX, 0},
    {"-0.01", SIM_ESYNTAX, 0},
    {"+1", SIM_ESYNTAX, 0},
    {"1.4e-2", SIM_ESYNTAX, 0},
    {"1,000", SIM_ESYNTAX, 0},
    {" 1", SIM_ESYNTAX, 0},
    {"$0.01", SIM_ESYNTAX, 0},
    {"0.01.2", SIM_ESYNTAX, 0},
};

START_TEST(test_parse_decimal)
{
    const dec_case *c = &DEC[_i];
    kds_nano v = -1;
    int rc = kdsim_parse_decimal(c->text, KDSIM_PRICE_MAX, &v);
    ck_assert_msg(rc == c->rc, "\"%s\": rc %d, want %d", c->text, rc, c->rc);
    if (c->rc == 0)
        ck_assert_msg(v == c->value, "\"%s\": %lld, want %lld", c->text, (long long)v,
                      (long long)c->value);
    else
        ck_assert_int_eq(v, -1); /* untouched */
}
END_TEST

/* ---- the shipped price file ------------------------------------------------------------ */

START_TEST(test_shipped_file)
{
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    char *region = NULL, *as_of = NULL;
    ck_assert_int_eq(kdsim_prices_load(tu_src(PRICES), &p, &region, &as_of, &g), 0);
    ck_assert_uint_eq(g.n, 0);
    ck_assert_str_eq(region, "us-east-1");
    ck_assert_str_eq(as_of, "2026-09");
    /* model.md section 9, item by item. */
    ck_assert_int_eq(p.prov_shard_hour, M(15));
    ck_assert_int_eq(p.prov_put_payload_units, M(14));
    ck_assert_int_eq(p.prov_extended_retention, M(20));
    ck_assert_int_eq(p.prov_long_term_retention, M(23));
    ck_assert_int_eq(p.prov_long_term_retrieval, M(21));
    ck_assert_int_eq(p.prov_efo_consumer_shard_hour, M(15));
    ck_assert_int_eq(p.prov_efo_data_retrieval, M(13));
    ck_assert_int_eq(p.prov_shared_read, 0);
    ck_assert_int_eq(p.std_stream_hour, M(40));
    ck_assert_int_eq(p.std_data_written, M(80));
    ck_assert_int_eq(p.std_data_read_shared, M(40));
    ck_assert_int_eq(p.std_data_read_efo, M(50));
    ck_assert_int_eq(p.std_extended_retention, M(100));
    ck_assert_int_eq(p.std_long_term_retention, M(23));
    ck_assert_int_eq(p.adv_stream_hour, 0);
    ck_assert_int_eq(p.adv_data_written, M(32));
    ck_assert_int_eq(p.adv_data_read, M(16));
    ck_assert_int_eq(p.adv_retention, M(23));
    ck_assert_int_eq(p.adv_commitment_written, 25 * KDS_NANO_PER_UNIT);
    ck_assert_int_eq(p.adv_commitment_read, 25 * KDS_NANO_PER_UNIT);
    ck_assert_int_eq(p.s3_delivery_standard, 27500000);
    ck_assert_int_eq(p.s3_delivery_advantage, M(11));
    free(region);
    free(as_of);
    ydiag_fini(&g);
}
END_TEST

START_TEST(test_default_is_the_shipped_file)
{
    const char *d = kdsim_default_prices();
    size_t n = strlen(d), m = strlen(PRICES);
    ck_assert_uint_ge(n, m);
    ck_assert_str_eq(d + n - m, PRICES);
    ck_assert_int_eq(access(d, R_OK), 0);
}
END_TEST

/* ---- bad price files -------------------------------------------------------------------- */

START_TEST(test_missing_item)
{
    char *text = edited("  shard_hour: 0.015\n", "");
    char name[64];
    temp_file(name, sizeof name, text);
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    ck_assert_uint_eq(g.n, 1);
    /* Reported at the section's mapping: its first key. */
    ck_assert_str_eq(g.items[0].file, name);
    expect_item(&g, 0, line_of(text, "  put_payload_units:"), 3, "provisioned",
                "missing required key 'shard_hour' (USD per shard-hour)");
    ydiag_fini(&g);
    unlink(name);
}
END_TEST

START_TEST(test_missing_section_and_metadata)
{
    char name[64];
    temp_file(name, sizeof name, "region: us-east-1\nprovisioned: {}\n");
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    /* as_of, the 8 provisioned items, and three sections. */
    ck_assert_uint_eq(g.n, 1 + 8 + 3);
    expect_item(&g, 0, 1, 1, "", "missing required key 'as_of'");
    expect_item(&g, 1, 2, 14, "provisioned",
                "missing required key 'shard_hour' (USD per shard-hour)");
    expect_item(&g, 9, 1, 1, "",
                "missing required key 'on_demand_standard' (a mapping of "
                "its prices)");
    ydiag_fini(&g);
    unlink(name);
}
END_TEST

START_TEST(test_unknown_item)
{
    char *text = edited("  shard_hour: 0.015\n", "  shard_hour: 0.015\n  shard_hours: 0.015\n");
    char name[64];
    temp_file(name, sizeof name, text);
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    ck_assert_uint_eq(g.n, 1);
    expect_item(&g, 0, line_of(text, "  shard_hours:"), 3, "provisioned",
                "unknown key 'shard_hours'; did you mean 'shard_hour'?");
    ydiag_fini(&g);
    unlink(name);

    /* An unknown section, too. */
    text = edited("region: us-east-1\n", "region: us-east-1\nprovisoned: {}\n");
    temp_file(name, sizeof name, text);
    ydiag_init(&g);
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    ck_assert_uint_eq(g.n, 1);
    expect_item(&g, 0, line_of(text, "provisoned:"), 1, "",
                "unknown key 'provisoned'; did you mean 'provisioned'?");
    ydiag_fini(&g);
    unlink(name);
}
END_TEST

typedef struct bad_case {
    const char *value;
    const char *msg;
} bad_case;

static const bad_case BAD[] = {
    {"-0.015", "expected a price in US dollars as a plain decimal like 0.014, got \"-0.015\""},
    {"1.5e-2", "expected a price in US dollars as a plain decimal like 0.014, got \"1.5e-2\""},
    {"$0.015", "expected a price in US dollars as a plain decimal like 0.014, got \"$0.015\""},
    {"0.0000000015", "expected a price in US dollars with at most 9 decimal places, got "
                     "\"0.0000000015\""},
    {"1500", "expected a price in US dollars from 0 to 1000, got \"1500\""},
    {"{a: 1}", "expected a single value, not a mapping"},
};

START_TEST(test_bad_value)
{
    const bad_case *c = &BAD[_i];
    char to[64];
    snprintf(to, sizeof to, "  shard_hour: %s\n", c->value);
    char *text = edited("  shard_hour: 0.015\n", to);
    char name[64];
    temp_file(name, sizeof name, text);
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    ck_assert_uint_ge(g.n, 1);
    ck_assert_int_eq(g.items[0].line, line_of(text, "  shard_hour:"));
    ck_assert_int_eq(g.items[0].col, 15);
    ck_assert_str_eq(g.items[0].path, "provisioned.shard_hour");
    if (c->value[0] != '{')
        ck_assert_str_eq(g.items[0].msg, c->msg);
    ydiag_fini(&g);
    unlink(name);
}
END_TEST

START_TEST(test_commitment_words)
{
    char *text = edited("  commitment_written: 25\n", "  commitment_written: lots\n");
    char name[64];
    temp_file(name, sizeof name, text);
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load(name, &p, NULL, NULL, &g), SIM_EINVAL);
    ck_assert_uint_eq(g.n, 1);
    expect_item(&g, 0, line_of(text, "  commitment_written:"), 23,
                "on_demand_advantage.commitment_written",
                "expected a rate in MiB/s as a plain decimal like 0.014, got \"lots\"");
    ydiag_fini(&g);
    unlink(name);
}
END_TEST

START_TEST(test_unreadable_file)
{
    ydiag g;
    ydiag_init(&g);
    kds_prices p;
    ck_assert_int_eq(kdsim_prices_load("/nonexistent/prices.yaml", &p, NULL, NULL, &g), SIM_EIO);
    ck_assert_uint_eq(g.n, 1);
    ck_assert_int_eq(g.items[0].line, 0);
    ydiag_fini(&g);
}
END_TEST

/* ---- billing settings in a scenario ------------------------------------------------------ */

/* Load the `billing` of scenario text `yaml` as if the scenario were
 * scenarios/test.yaml in the source tree. Returns kdsim_billing_load's answer. */
static bool billing_of(const char *yaml, kdsim_billing *b, ydiag *g)
{
    ydoc d;
    ck_assert_int_eq(ydoc_load_string(&d, "test.yaml", yaml, strlen(yaml), g), 0);
    ywalk w = {&d, g};
    yaml_node_t *root = ydoc_root(&d);
    bool ok = kdsim_billing_load(&w, yw_get(&w, root, "billing"), tu_src("scenarios/test.yaml"), b);
    ydoc_fini(&d);
    return ok;
}

START_TEST(test_billing_defaults)
{
    ydiag g;
    ydiag_init(&g);
    kdsim_billing b;
    ck_assert(billing_of("duration: 1h\n", &b, &g));
    ck_assert_uint_eq(g.n, 0);
    ck_assert_str_eq(b.file, "us-east-1-2026-09.yaml");
    ck_assert_str_eq(b.region, "us-east-1");
    ck_assert_uint_eq(b.settings.month_hours, 720);
    ck_assert_int_eq(b.settings.headroom, 0);
    ck_assert_int_eq(b.prices.prov_shard_hour, M(15));
    ck_assert_uint_eq(b.n_overridden, 0);
    kdsim_billing_fini(&b);
    kdsim_billing_fini(NULL);
    ydiag_fini(&g);
}
END_TEST

START_TEST(test_billing_settings_and_file)
{
    ydiag g;
    ydiag_init(&g);
    kdsim_billing b;
    ck_assert(billing_of("billing:\n"
                         "  prices: prices/us-east-1-2026-09.yaml\n"
                         "  month_hours: 730\n"
                         "  sizing_headroom: 0.2\n",
                         &b, &g));
    ck_assert_uint_eq(b.settings.month_hours, 730);
    ck_assert_int_eq(b.settings.headroom, 200000000);
    ck_assert_str_eq(b.file, "us-east-1-2026-09.yaml");
    kdsim_billing_fini(&b);
    ydiag_fini(&g);
}
END_TEST

START_TEST(test_billing_overrides)
{
    ydiag g;
    ydiag_init(&g);
    kdsim_billing b;
    ck_assert(billing_of("billing:\n"
                         "  overrides:\n"
                         "    on_demand_advantage: {commitment_read: 0}\n"
                         "    provisioned:\n"
                         "      shard_hour: 0.016\n",
                         &b, &g));
    ck_assert_uint_eq(g.n, 0);
    ck_assert_int_eq(b.prices.prov_shard_hour, M(16));
    ck_assert_int_eq(b.prices.adv_commitment_read, 0);
    /* Everything else comes from the file. */
    ck_assert_int_eq(b.prices.prov_put_payload_units, M(14));
    ck_assert_int_eq(b.prices.adv_commitment_written, 25 * KDS_NANO_PER_UNIT);
    /* Listed in price-list order. */
    ck_assert_uint_eq(b.n_overridden, 2);
    ck_assert_str_eq(b.overridden[0]->section, "provisioned");
    ck_assert_str_eq(b.overridden[0]->key, "shard_hour");
    ck_assert_str_eq(b.overridden[1]->key, "commitment_read");
    kdsim_billing_fini(&b);
    ydiag_fini(&g);
}
END_TEST

START_TEST(test_billing_errors)
{
    ydiag g;
    ydiag_init(&g);
    kdsim_billing b;
    ck_assert(!billing_of("billing:\n"
                          "  price: x.yaml\n"
                          "  month_hours: 0\n"
                          "  sizing_headroom: -1\n"
                          "  overrides:\n"
                          "    provisioned: {shard_hours: 0.016, put_payload_units: cheap}\n"
                          "    on_demand: {}\n",
                          &b, &g));
    ck_assert_uint_eq(g.n, 6);
    expect_item(&g, 0, 2, 3, "billing", "unknown key 'price'; did you mean 'prices'?");
    ck_assert_int_eq(g.items[1].line, 3);
    ck_assert_str_eq(g.items[1].path, "billing.month_hours");
    expect_item(&g, 2, 4, 20, "billing.sizing_headroom",
                "expected a fraction (0.2 for 20 %) as a plain decimal like 0.014, got \"-1\"");
    expect_item(&g, 3, 7, 5, "billing.overrides",
                "unknown key 'on_demand'; did you mean 'on_demand_standard'?");
    expect_item(&g, 4, 6, 19, "billing.overrides.provisioned",
                "unknown key 'shard_hours'; did you mean 'shard_hour'?");
    expect_item(&g, 5, 6, 58, "billing.overrides.provisioned.put_payload_units",
                "expected a price in US dollars as a plain decimal like 0.014, got \"cheap\"");
    kdsim_billing_fini(&b);
    ydiag_fini(&g);
}
END_TEST

START_TEST(test_billing_missing_file)
{
    ydiag g;
    ydiag_init(&g);
    kdsim_billing b;
    ck_assert(!billing_of("billing:\n  prices: prices/nowhere.yaml\n", &b, &g));
    ck_assert_uint_eq(g.n, 1);
    ck_assert_int_eq(g.items[0].line, 2);
    ck_assert_int_eq(g.items[0].col, 11);
    ck_assert_str_eq(g.items[0].path, "billing.prices");
    ck_assert_ptr_nonnull(strstr(g.items[0].msg, "cannot read the price file "));
    ck_assert_ptr_nonnull(strstr(g.items[0].msg, "scenarios/prices/nowhere.yaml: No such file"));
    ck_assert_ptr_null(b.file);
    kdsim_billing_fini(&b);
    ydiag_fini(&g);
}
END_TEST

static Suite *prices_suite(void)
{
    Suite *s = suite_create("prices");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_shipped_file);
    tcase_add_test(core, test_default_is_the_shipped_file);
    tcase_add_test(core, test_billing_defaults);
    tcase_add_test(core, test_billing_settings_and_file);
    tcase_add_test(core, test_billing_overrides);
    suite_add_tcase(s, core);

    TCase *limits = tcase_create("limits");
    tcase_add_loop_test(limits, test_parse_decimal, 0, (int)(sizeof DEC / sizeof DEC[0]));
    suite_add_tcase(s, limits);

    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_missing_item);
    tcase_add_test(errors, test_missing_section_and_metadata);
    tcase_add_test(errors, test_unknown_item);
    tcase_add_loop_test(errors, test_bad_value, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(errors, test_commitment_words);
    tcase_add_test(errors, test_unreadable_file);
    tcase_add_test(errors, test_billing_errors);
    tcase_add_test(errors, test_billing_missing_file);
    suite_add_tcase(s, errors);
    return s;
}

int main(void)
{
    return tu_run_suite(prices_suite());
}
