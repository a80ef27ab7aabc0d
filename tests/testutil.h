/* testutil.h - helpers shared by the Check suites: running a suite with the standard
 * runner and locating files of the source tree. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <check.h>

/* Run one suite with CK_NORMAL output; returns EXIT_SUCCESS when nothing failed. */
int tu_run_suite(Suite *s);

/* The absolute path of `rel` under the source tree, in a static buffer. */
const char *tu_src(const char *rel);

#endif
