/* testutil.c - see testutil.h. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

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
