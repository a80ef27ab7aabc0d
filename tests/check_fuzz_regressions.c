/* check_fuzz_regressions.c - every saved fuzz input (tests/fuzz-regressions/<target>/,
 * crashes the fuzzers found, turned into regression inputs) and every seed (the shipped
 * scenarios, the price file, fuzz/corpus/scenario and fuzz/corpus/units) goes through
 * the fuzz entry points in an ordinary build, so that a fixed crash stays fixed even
 * where libFuzzer is absent.
 */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "testutil.h"

typedef int (*entry)(const uint8_t *, size_t);

/* Feed every regular file of directory `rel` (under the source tree) to `fn`; returns
 * how many there were. */
static size_t replay_dir(const char *rel, const char *suffix, entry fn, bool must_exist)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_src(rel));
    DIR *d = opendir(dir);
    if (!d && !must_exist)
        return 0; /* no saved input for this target yet (git keeps no empty folder) */
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (suffix && (len < sl || strcmp(e->d_name + len - sl, suffix) != 0))
            continue;
        char path[4600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static uint8_t buf[1 << 20];
        size_t got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        fn(buf, got);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_saved_inputs)
{
    replay_dir("tests/fuzz-regressions/scenario", NULL, kdsim_fuzz_scenario, false);
    replay_dir("tests/fuzz-regressions/prices", NULL, kdsim_fuzz_prices, false);
    ck_assert_uint_ge(replay_dir("tests/fuzz-regressions/units", NULL, kdsim_fuzz_units, true), 1);
}
END_TEST

START_TEST(test_seed_corpus)
{
    ck_assert_uint_gt(replay_dir("scenarios", ".yaml", kdsim_fuzz_scenario, true), 5);
    ck_assert_uint_gt(replay_dir("tests/scenarios/bad", ".yaml", kdsim_fuzz_scenario, true), 20);
    ck_assert_uint_ge(replay_dir("fuzz/corpus/scenario", NULL, kdsim_fuzz_scenario, true), 1);
    ck_assert_uint_ge(replay_dir("scenarios/prices", ".yaml", kdsim_fuzz_prices, true), 1);
    ck_assert_uint_gt(replay_dir("fuzz/corpus/units", NULL, kdsim_fuzz_units, true), 10);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzz_regressions");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_saved_inputs);
    tcase_add_test(tc, test_seed_corpus);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
