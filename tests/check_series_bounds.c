/* check_series_bounds.c - bounded time series lose no reported number (issue 9).
 *
 * A long run merges its series' buckets (sim_series) so that their memory stops growing
 * with simulated time. Every shipped scenario runs here twice for an hour: once with
 * the default bounds, under which nothing merges in an hour, and once with bounds so
 * small that every series merges many times over (a few buckets a shard, 64 seconds, 4
 * minutes a consumer and a KCL lease table). The two JSON reports must be the same: the
 * peaks (records per second, the busiest minute that billing sizes by, the hottest
 * shard's minute) survive the merges, and so do the totals of every series, which the
 * test also checks bucket by bucket against the unmerged run. The one difference
 * allowed is the KCL's per-minute arrays, which the merged run gives per merged
 * bucket, saying how many minutes one covers: their sums must match. The merged run
 * must also keep within its bounds, or the test would prove nothing. The peaks after a
 * warm-up (what `--warmup` figures read) must survive the merges too. The CSV files of
 * `--out` must say how many seconds or minutes each row covers, and the merged run's
 * rows must hold the unmerged run's values over those.
 */
#define _XOPEN_SOURCE 700 /* nftw() and its flags */
#include <check.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_kcl.h"
#include "kds_world.h"
#include "report.h"
#include "scenario.h"
#include "testutil.h"

#define TINY_SHARD_BUCKETS 8 /* shared by the shards: 1 to 8 buckets each */
#define TINY_SECONDS 64
#define TINY_CONSUMER 4
/* A warm-up's end, from which the figures read peaks (kds_world_cfg.peak_since). */
#define WARMUP SIM_MIN(20)

typedef struct run {
    kdsim_scenario sc;
    kds_world w;
    json_t *doc;
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
    r->sc.world.peak_since = WARMUP;
    if (tiny) {
        r->sc.world.stream.series_buckets = TINY_SHARD_BUCKETS;
        r->sc.world.stream.seconds_kept = TINY_SECONDS;
        for (size_t i = 0; i < r->sc.world.n_consumers; i++) {
            kds_consumer_cfg *cc = &r->sc.world.consumers[i];
            if (cc->kind == KDS_CONSUMER_MODEL && cc->make == kds_kcl_make)
                ((kds_kcl_cfg *)cc->cfg)->table.series_limit = TINY_CONSUMER;
        }
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
    r->doc = doc;
}

/* Sum of a JSON array of numbers. */
static double array_sum(const json_t *a)
{
    double s = 0;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v) s += json_number_value(v);
    return s;
}

/* A KCL application's per-minute arrays: the merged run's cover `per` minutes a value
 * and sum to the same (the lease table's units and throttles; a worker's leases are a
 * count at the end of each value, so only their last value is compared). They are then
 * replaced by the unmerged run's, so that the rest of the reports can be compared. */
static void kcl_arrays(json_t *cu, json_t *cm)
{
    json_t *tu = json_object_get(cu, "lease_table"), *tm = json_object_get(cm, "lease_table");
    if (!tu)
        return;
    json_int_t per = json_integer_value(json_object_get(tm, "minutes_per_value"));
    ck_assert_int_gt(per, 1);
    ck_assert_int_eq(json_integer_value(json_object_get(tu, "minutes_per_value")), 1);
    static const char *const keys[] = {"read_units_per_minute", "write_units_per_minute",
                                       "throttled_per_minute"};
    for (size_t k = 0; k < 3; k++) {
        json_t *au = json_object_get(tu, keys[k]), *am = json_object_get(tm, keys[k]);
        ck_assert_uint_eq(json_array_size(am),
                          (json_array_size(au) + (size_t)per - 1) / (size_t)per);
        /* Three decimals each: the sums agree to the rounding of their values. */
        ck_assert_msg(fabs(array_sum(au) - array_sum(am)) <= 1e-3 * (double)json_array_size(au),
                      "%s: %.3f against %.3f", keys[k], array_sum(am), array_sum(au));
        json_object_set(tm, keys[k], au);
    }
    json_object_set(tm, "minutes_per_value", json_object_get(tu, "minutes_per_value"));
    json_t *wu = json_object_get(cu, "workers"), *wm = json_object_get(cm, "workers");
    for (size_t i = 0; i < json_array_size(wu); i++) {
        json_t *a = json_object_get(json_array_get(wu, i), "leases_per_minute");
        json_t *b = json_object_get(json_array_get(wm, i), "leases_per_minute");
        ck_assert_uint_eq(json_array_size(b), (json_array_size(a) + (size_t)per - 1) / (size_t)per);
        ck_assert_int_eq(json_integer_value(json_array_get(a, json_array_size(a) - 1)),
                         json_integer_value(json_array_get(b, json_array_size(b) - 1)));
        json_object_set(json_array_get(wm, i), "leases_per_minute", a);
        json_object_set(json_array_get(wm, i), "minutes_per_value",
                        json_object_get(json_array_get(wu, i), "minutes_per_value"));
    }
}

static void run_fini(run *r)
{
    json_decref(r->doc);
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
    ck_assert_msg(!peak || sim_series_max(m) == sim_series_max(u), "%s: peak %.17g, expected %.17g",
                  what, sim_series_max(m), sim_series_max(u));
    return m->width != m->base;
}

/* The same series' busiest base bucket after the warm-up, and where it was: what the
 * figures of a run with --warmup read (the merged run kept it apart). */
static void same_peak_since(const sim_series *u, const sim_series *m, const char *what)
{
    sim_time lu, lm;
    double pu = sim_series_peak_since(u, WARMUP, &lu), pm = sim_series_peak_since(m, WARMUP, &lm);
    ck_assert_msg(pm == pu && lm == lu,
                  "%s: after the warm-up %.17g at %lld ns, expected %.17g at %lld", what, pm,
                  (long long)lm, pu, (long long)lu);
}

/* ---- the CSV files of --out ---------------------------------------------------------- */

typedef struct csv {
    char **cell; /* rows x cols strings, owned (one buffer: cell[0]) */
    size_t rows; /* data rows, the header not counted */
    size_t cols;
    char *head[16]; /* the header's names, pointing into hbuf */
    char hbuf[512];
} csv;

/* Read DIR/NAME whole; returns false when the file does not exist. Every row must have
 * the header's number of columns. */
static bool csv_read(csv *c, const char *dir, const char *name)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    memset(c, 0, sizeof *c);
    ck_assert_ptr_nonnull(fgets(c->hbuf, sizeof c->hbuf, f));
    c->hbuf[strcspn(c->hbuf, "\n")] = 0;
    for (char *save = NULL, *t = strtok_r(c->hbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ck_assert_uint_lt(c->cols, 16);
        c->head[c->cols++] = t;
    }
    size_t cap = 0;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (c->rows == cap) {
            cap = cap ? 2 * cap : 1024;
            c->cell = realloc(c->cell, cap * c->cols * sizeof *c->cell);
            ck_assert_ptr_nonnull(c->cell);
        }
        size_t k = 0;
        for (char *save = NULL, *t = strtok_r(line, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            ck_assert_msg(k < c->cols, "%s: a row of more than %zu columns", name, c->cols);
            c->cell[c->rows * c->cols + k++] = strdup(t);
        }
        ck_assert_msg(k == c->cols, "%s: a row of %zu columns, not %zu", name, k, c->cols);
        c->rows++;
    }
    fclose(f);
    return true;
}

static void csv_free(csv *c)
{
    for (size_t i = 0; i < c->rows * c->cols; i++)
        free(c->cell[i]);
    free(c->cell);
}

static const char *cell(const csv *c, size_t r, size_t k)
{
    return c->cell[r * c->cols + k];
}

/* Whether column k names the row's entity (a shard, a consumer, a worker). */
static bool entity_col(const csv *c, size_t k)
{
    return !strcmp(c->head[k], "shard_id") || !strcmp(c->head[k], "consumer") ||
           !strcmp(c->head[k], "worker");
}

static bool same_entity(const csv *a, size_t ra, const csv *b, size_t rb)
{
    for (size_t k = 2; k < a->cols; k++)
        if (entity_col(a, k) && strcmp(cell(a, ra, k), cell(b, rb, k)))
            return false;
    return true;
}

/* The merged run's file m against the unmerged run's u: the second column (`seconds` or
 * `minutes`) is 1 in u and in m the span of its row, which runs up to the next row of
 * the same entity; each value of m is u's over that span (summed, the maximum for
 * iterator_age_ms_max, the last for leases_held, a count at the end of each minute).
 * Each entity's rows start at 0, and together m's rows cover every row of u once.
 * Returns the widest row of m. */
static long same_csv(const char *path, const char *name, const char *du, const char *dm)
{
    csv u, m;
    bool hu = csv_read(&u, du, name), hm = csv_read(&m, dm, name);
    ck_assert_msg(hu == hm, "%s: %s written by one run only", path, name);
    if (!hu)
        return 0;
    ck_assert_uint_eq(u.cols, m.cols);
    const char *unit = !strcmp(u.head[0], "second") ? "seconds" : "minutes";
    ck_assert_msg(!strcmp(u.head[1], unit), "%s: column 2 is %s, not %s", name, u.head[1], unit);
    for (size_t r = 0; r < u.rows; r++)
        ck_assert_msg(!strcmp(cell(&u, r, 1), "1"), "%s: an unmerged row of %s %s", name,
                      cell(&u, r, 1), unit);
    long widest = 0;
    size_t from = 0;    /* u's rows are grouped by entity in the same order as m's */
    size_t matched = 0; /* u's rows within m's rows' spans */
    for (size_t r = 0; r < m.rows; r++) {
        long t = atol(cell(&m, r, 0)), wd = atol(cell(&m, r, 1));
        ck_assert_msg(wd >= 1, "%s:%zu: width %ld", name, r + 2, wd);
        widest = wd > widest ? wd : widest;
        if (r + 1 < m.rows && same_entity(&m, r, &m, r + 1))
            ck_assert_msg(atol(cell(&m, r + 1, 0)) == t + wd,
                          "%s:%zu: a row of %ld from %ld, the next from %s", name, r + 2, wd, t,
                          cell(&m, r + 1, 0));
        if (r == 0 || !same_entity(&m, r - 1, &m, r))
            ck_assert_msg(t == 0, "%s:%zu: an entity's first row from %ld", name, r + 2, t);
        while (from < u.rows && !same_entity(&u, from, &m, r))
            from++;
        bool counted = false;
        for (size_t k = 2; k < m.cols; k++) {
            if (entity_col(&m, k))
                continue;
            bool max = !strcmp(m.head[k], "iterator_age_ms_max");
            bool last = !strcmp(m.head[k], "leases_held");
            double want = 0;
            size_t n = 0;
            for (size_t i = from; i < u.rows && same_entity(&u, i, &m, r); i++) {
                long ti = atol(cell(&u, i, 0));
                if (ti < t || ti >= t + wd)
                    continue;
                double x = atof(cell(&u, i, k));
                want = max ? (n == 0 || x > want ? x : want) : last ? x : want + x;
                n++;
            }
            ck_assert_msg(n > 0, "%s:%zu: no unmerged row from %ld", name, r + 2, t);
            if (!counted)
                matched += n;
            counted = true;
            /* Sums of values printed to 3 decimals agree to their rounding. */
            double got = atof(cell(&m, r, k)), tol = max || last ? 0 : 1e-3 * (double)n;
            ck_assert_msg(fabs(got - want) <= tol, "%s: %s:%zu %s: %s, expected %.3f over %ld %s",
                          path, name, r + 2, m.head[k], cell(&m, r, k), want, wd, unit);
        }
    }
    ck_assert_msg(matched == u.rows, "%s: %s: %zu of the %zu unmerged rows covered", path, name,
                  matched, u.rows);
    csv_free(&u);
    csv_free(&m);
    return widest;
}

/* Remove directory `dir` and the files and directories in it. */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Write both runs' files and compare them: every per-second and per-minute file says how
 * many seconds or minutes each of its rows covers, and the rows of the merged run hold
 * the unmerged run's over those. gnuplot is kept off the PATH: the plots are not what is
 * tested here, and drawing 50 runs' would take minutes under valgrind. */
static void same_csvs(const char *path, run *u, run *m)
{
    char du[] = "/tmp/kdsim-bounds-u-XXXXXX", dm[] = "/tmp/kdsim-bounds-m-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(du));
    ck_assert_ptr_nonnull(mkdtemp(dm));
    char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", dm, 1); /* a directory without gnuplot */
    ck_assert_int_eq(kdsim_report_write_dir(&u->sc, &u->w, u->doc, du), 0);
    ck_assert_int_eq(kdsim_report_write_dir(&m->sc, &m->w, m->doc, dm), 0);
    if (saved)
        setenv("PATH", saved, 1);
    else
        unsetenv("PATH");
    free(saved);
    static const char *const files[] = {
        "stream_per_second.csv",         "stream_per_minute.csv",   "shards_per_minute.csv",
        "consumers_per_minute.csv",      "capacity_per_minute.csv", "kcl_workers_per_minute.csv",
        "kcl_lease_table_per_minute.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        long widest = same_csv(path, files[i], du, dm);
        /* The bounds merge all but the stream's minutes, which are kept whole. */
        bool whole = !strcmp(files[i], "stream_per_minute.csv") ||
                     !strcmp(files[i], "capacity_per_minute.csv");
        if (widest)
            ck_assert_msg(whole ? widest == 1 : widest > 1, "%s: %s rows up to %ld wide", path,
                          files[i], widest);
    }
    ck_assert_int_eq(nftw(du, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
    ck_assert_int_eq(nftw(dm, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void check_scenario(const char *path)
{
    run u, m;
    run_scenario(&u, path, false);
    run_scenario(&m, path, true);
    json_t *cu = json_object_get(u.doc, "consumers"), *cm = json_object_get(m.doc, "consumers");
    for (size_t i = 0; i < json_array_size(cu); i++)
        kcl_arrays(json_array_get(cu, i), json_array_get(cm, i));
    char *ju = json_dumps(u.doc, JSON_SORT_KEYS | JSON_INDENT(1));
    char *jm = json_dumps(m.doc, JSON_SORT_KEYS | JSON_INDENT(1));
    ck_assert_ptr_nonnull(ju);
    ck_assert_ptr_nonnull(jm);
    ck_assert_msg(strcmp(ju, jm) == 0, "%s: the report changed when its series merged", path);
    free(ju);
    free(jm);
    same_csvs(path, &u, &m);

    const kds_stream *su = &u.w.stream, *sm = &m.w.stream;
    ck_assert_uint_eq(su->n_shards, sm->n_shards);
    size_t merged = 0, tables = 0, kcl = 0;
    merged += same_series(&su->st.in_records_s, &sm->st.in_records_s, "stream records/s", true);
    merged += same_series(&su->st.in_bytes_s, &sm->st.in_bytes_s, "stream bytes/s", true);
    merged += same_series(&su->st.throttled_s, &sm->st.throttled_s, "stream throttled/s", true);
    same_peak_since(&su->st.in_records_s, &sm->st.in_records_s, "stream records/s");
    for (size_t i = 0; i < su->n_shards; i++) {
        const kds_shard_stats *a = &su->shards[i]->st, *b = &sm->shards[i]->st;
        merged += same_series(&a->in_records_min, &b->in_records_min, "shard records", true);
        merged += same_series(&a->in_bytes_min, &b->in_bytes_min, "shard bytes", true);
        merged += same_series(&a->throttled_min, &b->throttled_min, "shard throttled", true);
        merged +=
            same_series(&a->read_throttled_min, &b->read_throttled_min, "shard read thr.", true);
        merged += same_series(&a->out_bytes_min, &b->out_bytes_min, "shard bytes out", true);
    }
    for (size_t i = 0; i < u.w.n_consumers; i++) {
        const kds_consumer_stats *a = &u.w.consumers[i]->st, *b = &m.w.consumers[i]->st;
        merged += same_series(&a->delivered_min, &b->delivered_min, "consumer delivered", false);
        /* Iterator ages are maxima: exact in any order. */
        merged += same_series(&a->iterator_age_min, &b->iterator_age_min, "consumer age", true);
        same_peak_since(&a->iterator_age_min, &b->iterator_age_min, "consumer age");
        const kds_kcl_summary *ka = kds_kcl_summary_get(u.w.consumers[i]);
        const kds_kcl_summary *kb = kds_kcl_summary_get(m.w.consumers[i]);
        if (ka) {
            const kds_lease_table_stats *x = &ka->table->st, *y = &kb->table->st;
            tables += same_series(&x->read_units_min, &y->read_units_min, "table reads", true);
            tables += same_series(&x->write_units_min, &y->write_units_min, "table writes", true);
            tables += same_series(&x->throttled_min, &y->throttled_min, "table throttled", true);
            kcl++;
        }
    }
    ck_assert_uint_eq(tables, 3 * kcl);
    /* The shards' budget is shared among every shard created, closed ones too: a
     * resharding run lowers every shard's limit, and each keeps within it. */
    for (const kds_stream *st = su; st; st = st == su ? sm : NULL) {
        size_t want = st->cfg.series_buckets / st->n_shards;
        ck_assert_uint_le(st->shard_series_limit, want > 1 ? want : 1);
        for (size_t i = 0; i < st->n_shards; i++) {
            const kds_shard_stats *x = &st->shards[i]->st;
            const sim_series *v[] = {&x->in_records_min, &x->in_bytes_min, &x->throttled_min,
                                     &x->read_throttled_min, &x->out_bytes_min};
            for (size_t k = 0; k < 5; k++)
                ck_assert_uint_le(v[k]->cap, st->shard_series_limit);
        }
    }
    /* Every shard's five, the three per-second ones, and each consumer's two. */
    ck_assert_msg(merged == 3 + 5 * su->n_shards + 2 * u.w.n_consumers,
                  "%s: only %zu series merged", path, merged);
    run_fini(&u);
    run_fini(&m);
}

static void check_each(const char *path, void *ctx)
{
    (void)ctx;
    check_scenario(path);
}

START_TEST(test_shipped_scenarios_merge_losslessly)
{
    ck_assert_uint_ge(tu_for_each_file("scenarios", NULL, ".yaml", check_each, NULL), 20);
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
