/* sim_err.h - error codes shared by every layer of kdsim.
 *
 * Environment failures (out of memory, I/O) and rejected arguments are returned as
 * negative codes from one X-macro table, in the style of libuv's UV_ERRNO_MAP. Bad
 * user input is reported by the scenario loader with file:line:col messages; bugs
 * are assertions (SIM_ASSERT), never codes.
 */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdio.h>
#include <stdlib.h>

#define SIM_ERR_MAP(XX)                                                                  \
    XX(NOMEM, -1, "out of memory")                                                       \
    XX(INVAL, -2, "invalid argument")                                                    \
    XX(RANGE, -3, "value out of range")                                                  \
    XX(IO, -4, "input/output error")                                                     \
    XX(SYNTAX, -5, "malformed value")                                                    \
    XX(UNIT, -6, "unknown or missing unit")                                              \
    XX(LIMIT, -7, "a documented limit was exceeded")                                     \
    XX(STATE, -8, "operation not allowed in the current state")

enum {
    SIM_OK = 0,
#define XX(name, code, msg) SIM_E##name = (code),
    SIM_ERR_MAP(XX)
#undef XX
};

/* Human-readable message for an error code (0 or negative). Never NULL; the string
 * is static. */
const char *sim_strerror(int code);

/* The symbolic name of an error code ("SIM_ENOMEM"). Never NULL; static string. */
const char *sim_err_name(int code);

/* Called by SIM_ASSERT on failure: prints the file, line and condition to stderr and
 * aborts. Never returns. */
_Noreturn void sim_assert_fail(const char *file, int line, const char *cond);

/* SIM_ASSERT stays on in release builds: a broken invariant is a bug to be fixed,
 * not handled. SIM_DEBUG_ASSERT compiles away under NDEBUG (hot-path checks). */
#define SIM_ASSERT(c) ((c) ? (void)0 : sim_assert_fail(__FILE__, __LINE__, #c))
#ifdef NDEBUG
#define SIM_DEBUG_ASSERT(c) ((void)0)
#else
#define SIM_DEBUG_ASSERT(c) SIM_ASSERT(c)
#endif

#endif
