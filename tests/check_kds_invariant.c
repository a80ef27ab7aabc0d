/* check_kds_invariant.c - the conservation invariants hold on real runs, and each one
 * is caught when it is broken on purpose (issue 9). */
#include <check.h>
#include <string.h>

#include "kds_invariant.h"
#include "kds_world.h"
#include "testutil.h"

static kds_world w;
static kds_world_cfg wc;
static kds_producer_cfg pc;
static kds_consumer_cfg cc[2];

/* A small world with throttling, retries, duplicates, a stall past nothing, and two
 * consumers, run for 5 minutes. */
static void setup(void)
{
    memset(&wc, 0, sizeof wc);
    wc.seed = 3;
    wc.duration = SIM_MIN(5);
    kds_stream_cfg_defaults(&wc.stream);
    wc.stream.shards = 2;
    wc.stream.internal_failure_rate = 0.01;
    kds_producer_cfg_defaults(&pc);
    pc.name = "p";
    pc.rate = kds_rate_constant(2500); /* above 2 x 1,000 records/s: throttling */
    pc.poisson = true;
    pc.timeout_rate = 0.05;
    wc.producers = &pc;
    wc.n_producers = 1;
    for (int i = 0; i < 2; i++) {
        cc[i].kind = KDS_CONSUMER_POLLING;
        kds_poller_cfg_defaults(&cc[i].polling);
        cc[i].polling.name = i ? "late" : "reader";
        cc[i].polling.begin = i ? SIM_MIN(2) : 0;
        cc[i].polling.start = i ? KDS_START_LATEST : KDS_START_TRIM_HORIZON;
    }
    wc.consumers = cc;
    wc.n_consumers = 2;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
}

static void teardown(void)
{
    kds_world_fini(&w);
}

static void expect_violation(const char *name)
{
    char msg[512];
    ck_assert_int_ne(kds_world_check(&w, msg, sizeof msg), 0);
    ck_assert_msg(strstr(msg, name) != NULL, "message '%s' does not name '%s'", msg, name);
}

START_TEST(test_holds_on_a_real_run)
{
    char msg[512] = "";
    ck_assert_msg(!w.violated, "%s", w.violation);
    ck_assert_int_eq(kds_world_check(&w, msg, sizeof msg), 0);
    /* The run exercised what the invariants count. */
    const kds_producer_stats *s = kds_producer_stats_get(w.producers[0]);
    ck_assert_uint_gt(s->write_throttled_records, 0);
    ck_assert_uint_gt(s->duplicates_written, 0);
    ck_assert_uint_gt(s->records_failed_internal, 0);
    ck_assert_uint_gt(w.consumers[1]->st.records_skipped_at_start, 0);
}
END_TEST

START_TEST(test_consumer_conservation_caught)
{
    w.consumers[0]->st.records_delivered += 1;
    expect_violation("consumer conservation");
}
END_TEST

START_TEST(test_consumer_lost_record_caught)
{
    w.consumers[1]->st.records_unread -= 1;
    expect_violation("consumer conservation");
}
END_TEST

START_TEST(test_producer_conservation_caught)
{
    kds_producer_stats *s = (kds_producer_stats *)kds_producer_stats_get(w.producers[0]);
    s->records_given_up += 1;
    expect_violation("producer conservation");
}
END_TEST

START_TEST(test_producer_sends_caught)
{
    kds_producer_stats *s = (kds_producer_stats *)kds_producer_stats_get(w.producers[0]);
    s->write_throttled_records += 1;
    expect_violation("producer sends");
}
END_TEST

START_TEST(test_stream_totals_caught)
{
    w.stream.shards[1]->st.records_in += 1;
    expect_violation("stream totals");
}
END_TEST

START_TEST(test_cover_gap_caught)
{
    w.stream.shards[0]->hi -= 1;
    expect_violation("key-space cover");
}
END_TEST

START_TEST(test_cover_overlap_caught)
{
    w.stream.shards[1]->lo -= 5;
    expect_violation("key-space cover");
}
END_TEST

START_TEST(test_cover_closed_in_open_list_caught)
{
    w.stream.shards[1]->state = KDS_SHARD_CLOSED;
    expect_violation("key-space cover");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kds_invariant");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_holds_on_a_real_run);
    tcase_add_test(tc, test_consumer_conservation_caught);
    tcase_add_test(tc, test_consumer_lost_record_caught);
    tcase_add_test(tc, test_producer_conservation_caught);
    tcase_add_test(tc, test_producer_sends_caught);
    tcase_add_test(tc, test_stream_totals_caught);
    tcase_add_test(tc, test_cover_gap_caught);
    tcase_add_test(tc, test_cover_overlap_caught);
    tcase_add_test(tc, test_cover_closed_in_open_list_caught);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
