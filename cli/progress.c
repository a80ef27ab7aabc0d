/* progress.c - the progress line of long runs (progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <unistd.h>

#include "sim_mem.h"

/* "1.2M" and the like: three significant digits and an SI suffix. */
static const char *si(char *buf, size_t n, double x)
{
    static const char *const suffix[] = {"", "k", "M", "G", "T"};
    int k = 0;
    while (x >= 999.5 && k < 4) {
        x /= 1000;
        k++;
    }
    snprintf(buf, n, "%.3g%s", x, suffix[k]);
    return buf;
}

/* A duration rounded for reading at a glance: "42.5s", "3m05s", "2h10m", "3d04h". */
static const char *rough(char *buf, size_t n, double s)
{
    long long k = (long long)s;
    if (s < 60)
        snprintf(buf, n, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, n, "%lldm%02llds", k / 60, k % 60);
    else if (s < 86400)
        snprintf(buf, n, "%lldh%02lldm", k / 3600, k % 3600 / 60);
    else
        snprintf(buf, n, "%lldd%02lldh", k / 86400, k % 86400 / 3600);
    return buf;
}

static void draw(FILE *err, const kds_world *w, sim_time now, double elapsed)
{
    sim_time end = w->cfg->duration;
    double done = end > 0 ? (double)now / (double)end : 1;
    double ev_s = elapsed > 0 ? (double)sim_events_run(w->sim) / elapsed : 0;
    double speed = elapsed > 0 ? sim_to_s(now) / elapsed : 0; /* simulated s per wall s */
    char at[32], total[32], ev[16], sp[16], left[32];
    rough(at, sizeof at, sim_to_s(now));
    rough(total, sizeof total, sim_to_s(end));
    if (speed > 0)
        rough(left, sizeof left, sim_to_s(end - now) / speed);
    else
        snprintf(left, sizeof left, "?");
    /* \r and "erase to the end of the line": the line is redrawn in place. */
    fprintf(err, "\rkdsim: %s of %s simulated (%.1f%%), %s events/s, %s simulated s per wall "
                 "s, about %s left\033[K",
            at, total, 100.0 * done, si(ev, sizeof ev, ev_s), si(sp, sizeof sp, speed), left);
    fflush(err);
}

void kdsim_progress_run(kds_world *w, FILE *err, bool show)
{
    if (!show || !isatty(fileno(err))) {
        kds_world_run(w);
        return;
    }
    sim_time end = w->cfg->duration;
    /* Slices start at a thousandth of the run and adapt to take about 0.1 s each, so the
     * clock is read a few times a second whatever the scenario's event rate. */
    sim_time slice = end / 1000 > SIM_MS(1) ? end / 1000 : SIM_MS(1);
    double t0 = sim_wall_s(), last = t0, after = KDSIM_PROGRESS_AFTER_S;
    const char *env = getenv("KDSIM_PROGRESS_AFTER");
    if (env && *env) {
        char *rest;
        double v = strtod(env, &rest);
        if (!*rest && v >= 0)
            after = v;
    }
    bool drawn = false, stopped = false;
    while (sim_now(w->sim) < end) {
        sim_time next = end - sim_now(w->sim) > slice ? sim_now(w->sim) + slice : end;
        double a = sim_wall_s();
        kds_world_run_until(w, next);
        double b = sim_wall_s();
        if (sim_now(w->sim) < next) { /* a model stopped the run (sim_stop) */
            stopped = true;
            break;
        }
        if (b - a < 0.05 && slice < INT64_MAX / 2)
            slice *= 2;
        else if (b - a > 0.2 && slice > SIM_MS(2))
            slice /= 2;
        if (b - t0 >= after && (!drawn || b - last > 0.25)) {
            draw(err, w, sim_now(w->sim), b - t0);
            last = b;
            drawn = true;
        }
    }
    if (drawn) {
        fputs("\r\033[K", err);
        fflush(err);
    }
    /* The rest of kds_world_run(): nothing is left to run, so it only settles the
     * end-of-run figures, unless a model stopped the run (the memory guard), which
     * leaves them unsettled as kds_world_run() does. */
    if (!stopped)
        kds_world_run(w);
    else if (!w->out_of_memory)
        kds_world_finish(w);
}
