/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

const char *tu_src(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", KDSIM_SOURCE_DIR, rel);
    return buf;
}

size_t tu_for_each_file(const char *rel, const char *prefix, const char *suffix,
                        void (*fn)(const char *path, void *ctx), void *ctx)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_src(rel));
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    size_t n = 0, pl = prefix ? strlen(prefix) : 0, sl = suffix ? strlen(suffix) : 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < pl + sl || strncmp(e->d_name, prefix ? prefix : "", pl) ||
            strcmp(e->d_name + len - sl, suffix ? suffix : "") != 0)
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fn(path, ctx);
        n++;
    }
    closedir(d);
    return n;
}
