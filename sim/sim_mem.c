/* sim_mem.c - resident memory, machine memory, the wall clock and table growth
 * (sim_mem.h). */
#define _DEFAULT_SOURCE
#include "sim_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim_err.h"

uint64_t sim_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long long size = 0, resident = 0;
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

uint64_t sim_phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

double sim_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void *sim_grow_zeroed(void *a, size_t *n, size_t need, size_t size)
{
    if (need <= *n)
        return a;
    size_t m = need > 2 * *n ? need : 2 * *n;
    char *b = realloc(a, m * size);
    SIM_ASSERT(b != NULL);
    memset(b + *n * size, 0, (m - *n) * size);
    *n = m;
    return b;
}
