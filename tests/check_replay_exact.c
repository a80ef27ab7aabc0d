/* check_replay_exact.c - compaction never changes what a replay from a checkpoint sees.
 *
 * A shard's log merges runs that every reader has passed into one-minute spans, whose
 * records a later reader sees with write times spread evenly over the span (kds_log.h).
 * A consumer that goes back to a checkpoint must not be such a later reader: a KCL
 * lease's next owner (after a crash, a pause, a steal or a rolling deployment) starts
 * from the lease's checkpoint, and a restarted Flink job from its own. Each keeps its
 * checkpoint as a floor of the log (or, for Flink, a reader), so that compaction stops
 * there. So must a KCL application's first reads from TRIM_HORIZON, after its start-up
 * shard sync, and of child shards, once their parents are done: until then the floor
 * stays at the shard's head. Every shipped KCL scenario and the Flink failure scenario
 * run here twice, with compaction and without (compact_span 0), as shipped and with a
 * producer busy enough (6,000 records/s, batches sent every 20 ms) that the shards hold
 * more than a compaction's worth of runs before the first read; so does a KCL reading
 * children (tests/scenarios/kcl-children-exact.yaml). The JSON reports must be byte for
 * byte the same, and the first run must have merged runs, or the test would prove
 * nothing.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_world.h"
#include "report.h"
#include "scenario.h"
#include "testutil.h"

/* The floors the shards' logs hold at the end of the last run_report(). */
static size_t floors_at_end;

/* Run `path` with compaction spans of `span` (0: none); returns its JSON report (to free)
 * and the runs its shards' logs hold at the end in *runs. */
static char *run_report(const char *path, const char *const *sets, size_t n_sets,
                        sim_time span, size_t *runs)
{
    kdsim_scenario sc;
    kds_world w;
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(&sc, path, sets, n_sets, &g);
    if (rc)
        ydiag_print(&g, stderr, "check_replay_exact");
    ck_assert_int_eq(rc, 0);
    ydiag_fini(&g);
    sc.world.stream.compact_span = span;
    ck_assert_int_eq(kds_world_init(&w, &sc.world), 0);
    kds_world_run(&w);
    ck_assert(!w.violated);
    *runs = 0;
    floors_at_end = 0;
    for (size_t i = 0; i < w.stream.n_shards; i++) {
        *runs += kds_log_runs(&w.stream.shards[i]->log);
        floors_at_end += w.stream.shards[i]->log.n_floors;
    }
    json_t *doc = kdsim_report_json(&sc, &w);
    ck_assert_ptr_nonnull(doc);
    char *text = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1));
    ck_assert_ptr_nonnull(text);
    json_decref(doc);
    kds_world_fini(&w);
    kdsim_scenario_fini(&sc);
    return text;
}

/* The first line where a and b differ, for the failure message. */
static int first_diff_line(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        line += *a == '\n';
    return line;
}

static void check_as(const char *path, const char *const *sets, size_t n_sets, const char *how)
{
    size_t merged_runs, whole_runs;
    char *merged = run_report(path, sets, n_sets, SIM_MIN(1), &merged_runs);
    char *whole = run_report(path, sets, n_sets, 0, &whole_runs);
    ck_assert_msg(merged_runs < whole_runs, "%s%s: compaction merged nothing (%zu runs)", path,
                  how, whole_runs);
    ck_assert_msg(strcmp(merged, whole) == 0,
                  "%s%s: the report with compaction differs from the one without, from line "
                  "%d of the JSON",
                  path, how, first_diff_line(merged, whole));
    free(merged);
    free(whole);
}

static void check_with(const char *path, const char *const *sets, size_t n_sets)
{
    check_as(path, sets, n_sets, n_sets ? " (busy producer)" : "");
}

static void check_scenario(const char *path)
{
    static const char *const busy[] = {"producers[0].rate=6000 records/s",
                                       "producers[0].batch.linger=20ms"};
    check_with(path, NULL, 0);
    check_with(path, busy, 2);
}

static void check_each(const char *path, void *ctx)
{
    (void)ctx;
    check_scenario(path);
}

START_TEST(test_checkpoint_replays_unchanged_by_compaction)
{
    ck_assert_uint_ge(tu_for_each_file("scenarios", "kcl", ".yaml", check_each, NULL), 8);
    check_scenario(tu_src("scenarios/flink-failure.yaml"));
    check_with(tu_src("tests/scenarios/kcl-children-exact.yaml"), NULL, 0);
}
END_TEST

/* Retention expires merged records exactly: runs merge within whole minutes of write time,
 * so the trims at each hour's retention meter and at the end of a run of whole minutes
 * take whole merged runs. Scenarios whose shards expire records that every reader has
 * passed (a Lambda mapping stuck behind a poison record while another reader goes on, a
 * retention of one day over two, closed shards read by enhanced fan-out) report the same
 * records and bytes expired and retained, and bill the same, with compaction and without.
 * (Spans of a minute from each merged run's first record differed by about 10 records
 * expired of 430,000 in lambda-poison-record.) */
START_TEST(test_retention_unchanged_by_compaction)
{
    check_with(tu_src("scenarios/lambda-poison-record.yaml"), NULL, 0);
    check_with(tu_src("scenarios/lambda-poison-record-bisect.yaml"), NULL, 0);
    check_with(tu_src("tests/scenarios/bill-retention-fill.yaml"), NULL, 0);
    check_with(tu_src("tests/scenarios/bill-efo-closed-shards.yaml"), NULL, 0);
}
END_TEST

/* Readers that start late, or wait for a child's parents, see the records as written:
 * every kind of consumer holds the shards it will read at their heads until it starts
 * reading them (kds_waits). A nightly polling job that starts 30 minutes late and catches
 * up over a reshard (reshard-idle-children), and a busy stream read late by every kind
 * across a reshard, give the same report with compaction and without. (Scenarios whose
 * readers all start late, such as expired-shard, now merge nothing at all.) */
START_TEST(test_late_readers_unchanged_by_compaction)
{
    check_with(tu_src("scenarios/reshard-idle-children.yaml"), NULL, 0);
    const char *path = tu_src("tests/scenarios/late-readers-exact.yaml");
    check_with(path, NULL, 0);
    /* Each late kind alone (the others moved after the end, where they hold nothing), so
     * that each one's holds are needed: consumers 1 to 8 (0 is the live reader, 8 the KCL
     * application, whose start is its worker's). */
    enum { LATE = 8 };
    static const char *const away[LATE] = {
        "consumers[1].start=100m", "consumers[2].start=100m", "consumers[3].start=100m",
        "consumers[4].start=100m", "consumers[5].start=100m", "consumers[6].start=100m",
        "consumers[7].start=100m", "consumers[8].workers[0].start=100m"};
    for (size_t k = 0; k < LATE; k++) {
        const char *sets[LATE - 1];
        size_t n = 0;
        for (size_t j = 0; j < LATE; j++)
            if (j != k)
                sets[n++] = away[j];
        char how[64];
        snprintf(how, sizeof how, " (consumers[%zu] alone late)", k + 1);
        check_as(path, sets, n, how);
        /* Every shard it held it has started reading by the end (children included):
         * nothing is held any more. (The KCL keeps a floor at each lease's checkpoint.) */
        if (k + 1 < LATE)
            ck_assert_msg(floors_at_end == 0, "consumers[%zu] alone late: %zu floors held at "
                          "the end", k + 1, floors_at_end);
    }
}
END_TEST

static Suite *replay_suite(void)
{
    Suite *s = suite_create("replay_exact");
    TCase *tc = tcase_create("compaction");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_checkpoint_replays_unchanged_by_compaction);
    tcase_add_test(tc, test_retention_unchanged_by_compaction);
    tcase_add_test(tc, test_late_readers_unchanged_by_compaction);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(replay_suite());
}
