/* bench_scenario.c - the scenario benchmark: how many simulated seconds kdsim plays per
 * wall-clock second on a real scenario (the flagship by default).
 *
 * usage: bench_scenario [SCENARIO] [DURATION] [REPEATS]
 * Builds and runs the scenario REPEATS times (default 5) for DURATION (default 1d),
 * timing only the run (not the YAML loading), and prints the median wall time, events
 * per second, simulated seconds per wall second and the peak resident memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kds_world.h"
#include "scenario.h"
#include "sim_mem.h"
#include "sim_units.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "scenarios/acme-clickstream.yaml";
    const char *dur = argc > 2 ? argv[2] : "1d";
    int repeats = argc > 3 ? atoi(argv[3]) : 5;
    if (repeats < 1 || repeats > 100)
        repeats = 5;
    char set[64];
    snprintf(set, sizeof set, "duration=%s", dur);
    const char *sets[] = {set};

    double times[100];
    unsigned long long events = 0;
    double sim_s = 0;
    for (int i = 0; i < repeats; i++) {
        kdsim_scenario sc;
        ydiag g;
        ydiag_init(&g);
        if (kdsim_scenario_load(&sc, path, sets, 1, &g) != 0) {
            ydiag_print(&g, stderr, "bench_scenario");
            return 2;
        }
        ydiag_fini(&g);
        kds_world w;
        if (kds_world_init(&w, &sc.world) != 0) {
            fprintf(stderr, "bench_scenario: cannot build %s\n", path);
            return 1;
        }
        double t0 = sim_wall_s();
        kds_world_run(&w);
        times[i] = sim_wall_s() - t0;
        events = (unsigned long long)sim_events_run(w.sim);
        sim_s = sim_to_s(w.cfg->duration);
        kds_world_fini(&w);
        kdsim_scenario_fini(&sc);
    }
    qsort(times, (size_t)repeats, sizeof times[0], cmp_double);
    double med = times[repeats / 2];
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("scenario %s, %s simulated, %d runs\n", path, dur, repeats);
    printf("  median wall time      %.3f s (min %.3f, max %.3f)\n", med, times[0],
           times[repeats - 1]);
    printf("  events                %llu (%.3g events/s)\n", events, (double)events / med);
    printf("  simulated s / wall s  %.0f\n", sim_s / med);
    printf("  peak resident memory  %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    return 0;
}
