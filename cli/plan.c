/* plan.c - the capacity planner (plan.h). */
#include "plan.h"

int kdsim_cmd_plan(int argc, char **argv, FILE *out, FILE *err)
{
    (void)argc; (void)argv; (void)out;
    fputs("kdsim: plan: not yet\n", err);
    return 1;
}
