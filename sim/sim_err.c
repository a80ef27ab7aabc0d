/* sim_err.c - messages and names for the shared error codes of sim_err.h. */
#include "sim_err.h"

const char *sim_strerror(int code)
{
    switch (code) {
    case SIM_OK:
        return "success";
#define XX(name, c, msg)                                                                 \
    case SIM_E##name:                                                                    \
        return msg;
        SIM_ERR_MAP(XX)
#undef XX
    }
    return "unknown error";
}

const char *sim_err_name(int code)
{
    switch (code) {
    case SIM_OK:
        return "SIM_OK";
#define XX(name, c, msg)                                                                 \
    case SIM_E##name:                                                                    \
        return "SIM_E" #name;
        SIM_ERR_MAP(XX)
#undef XX
    }
    return "SIM_E?";
}

_Noreturn void sim_assert_fail(const char *file, int line, const char *cond)
{
    fprintf(stderr, "kdsim: internal error (a bug): %s:%d: assertion failed: %s\n", file, line,
            cond);
    abort();
}
