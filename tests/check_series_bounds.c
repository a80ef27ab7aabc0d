/* check_series_bounds.c - bounded time series lose no reported number (issue 9).
 *
 * A long run merges its series' buckets (sim_series) so that their memory stops growing
 * with simulated time. Every shipped scenario runs here twice for an hour: once with
 * the default bounds, under which nothing merges in an hour, and once with bounds so
 * small that every series merges many times over (a few buckets a shard, 64 seconds, 4
 * minutes a consumer). The two JSON reports must be byte for byte the same: the peaks
 * (records per second, the busiest minute that billing sizes by, the hottest shard's
 * minute) survive the merges, and so do the totals of every series, which the test
 * also checks bucket by bucket against the unmerged run. The merged run must also keep
 * within its bounds, or the test would prove nothing.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_world.h"
#include "report.h"
#include "scenario.h"
#include "testutil.h"

#define TINY_SHARD_BUCKETS 8 /* shared by the shards: 1 to 8 buckets each */
#define TINY_SECONDS 64
#define TINY_CONSUMER 4

typedef struct run {
    kdsim_scenario sc;
    kds_world w;
    char *json;
} run;

static void run_scenario(run *r, const char *path, bool tiny)
{
    const char *sets[] = {"duration=1h"};
    ydiag g;
    ydiag_init(&g);
    int rc = kdsim_scenario_load(&r->sc, path, sets, 1, &g);
    if (rc)
        ydiag_print(&g, stderr, "check_series_bounds");
    ck_assert_int_eq(rc, 0);
    ydiag_fini(&g);
    if (tiny) {
        r->sc.world.stream.series_buckets = TINY_SHARD_BUCKETS;
        r->sc.world.stream.seconds_kept = TINY_SECONDS;
    }
    ck_assert_int_eq(kds_world_init(&r->w, &r->sc.world), 0);
    if (tiny)
        for (size_t i = 0; i < r->w.n_consumers; i++) {
            kds_consumer_stats *cs = &r->w.consumers[i]->st;
            sim_series_set_limit(&cs->iterator_age_min, TINY_CONSUMER);
            sim_series_set_limit(&cs->delivered_min, TINY_CONSUMER);
        }
    kds_world_run(&r->w);
    ck_assert(!r->w.violated);
    json_t *doc = kdsim_report_json(&r->sc, &r->w);
    ck_assert_ptr_nonnull(doc);
    r->json = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1));
    ck_assert_ptr_nonnull(r->json);
    json_decref(doc);
}

static void run_fini(run *r)
{
    free(r->json);
    kds_world_fini(&r->w);
    kdsim_scenario_fini(&r->sc);
}

/* The merged series m holds the unmerged u's values, summed (or maximised) over its
 * wider buckets, and the same peak when `peak` (a sum's peak survives adds in time
 * order, which a consumer's deliveries, added when processed, are not); returns whether
 * m merged at all. */
static bool same_series(const sim_series *u, const sim_series *m, const char *what, bool peak)
{
    ck_assert_msg(m->n <= m->limit, "%s: %zu buckets, limit %zu", what, m->n, m->limit);
    ck_assert_msg(u->width == u->base, "%s merged under the default bounds", what);
    for (size_t i = 0; i < m->n; i++) {
        sim_time t0 = (sim_time)i * m->width;
        double want = sim_series_range(u, t0, t0 + m->width);
        ck_assert_msg(sim_series_get(m, i) == want, "%s: bucket %zu holds %.17g, expected %.17g",
                      what, i, sim_series_get(m, i), want);
    }
    ck_assert_msg(!peak || sim_series_max(m) == sim_series_max(u), "%s: peak %.17g, expected %.17g", what,
                  sim_series_max(m), sim_series_max(u));
    return m->width != m->base;
}

static void check_scenario(const char *path)
{
    run u, m;
    run_scenario(&u, path, false);
    run_scenario(&m, path, true);
    ck_assert_msg(strcmp(u.json, m.json) == 0, "%s: the report changed when its series merged",
                  path);

    const kds_stream *su = &u.w.stream, *sm = &m.w.stream;
    ck_assert_uint_eq(su->n_shards, sm->n_shards);
    size_t merged = 0;
    merged += same_series(&su->st.in_records_s, &sm->st.in_records_s, "stream records/s", true);
    merged += same_series(&su->st.in_bytes_s, &sm->st.in_bytes_s, "stream bytes/s", true);
    merged += same_series(&su->st.throttled_s, &sm->st.throttled_s, "stream throttled/s", true);
    for (size_t i = 0; i < su->n_shards; i++) {
        const kds_shard_stats *a = &su->shards[i]->st, *b = &sm->shards[i]->st;
        merged += same_series(&a->in_records_min, &b->in_records_min, "shard records", true);
        merged += same_series(&a->in_bytes_min, &b->in_bytes_min, "shard bytes", true);
        merged += same_series(&a->throttled_min, &b->throttled_min, "shard throttled", true);
        merged += same_series(&a->read_throttled_min, &b->read_throttled_min, "shard read thr.", true);
        merged += same_series(&a->out_bytes_min, &b->out_bytes_min, "shard bytes out", true);
    }
    for (size_t i = 0; i < u.w.n_consumers; i++) {
        const kds_consumer_stats *a = &u.w.consumers[i]->st, *b = &m.w.consumers[i]->st;
        merged += same_series(&a->delivered_min, &b->delivered_min, "consumer delivered", false);
        /* Iterator ages are maxima: exact in any order. */
        merged += same_series(&a->iterator_age_min, &b->iterator_age_min, "consumer age", true);
    }
    /* Every shard's five, the three per-second ones, and each consumer's two. */
    ck_assert_msg(merged == 3 + 5 * su->n_shards + 2 * u.w.n_consumers,
                  "%s: only %zu series merged", path, merged);
    run_fini(&u);
    run_fini(&m);
}

START_TEST(test_shipped_scenarios_merge_losslessly)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_src("scenarios"));
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        check_scenario(path);
        n++;
    }
    closedir(d);
    ck_assert_uint_ge(n, 20);
}
END_TEST

static Suite *bounds_suite(void)
{
    Suite *s = suite_create("series_bounds");
    TCase *tc = tcase_create("merge");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shipped_scenarios_merge_losslessly);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite(bounds_suite());
}
