/* kds_rate.c - rate profiles and their integrals (kds_rate.h). */
#include "kds_rate.h"

#include <math.h>

#include "sim_err.h"

kds_rate kds_rate_constant(double per_s)
{
    kds_rate r = {0};
    r.kind = KDS_RATE_CONSTANT;
    r.rate = per_s;
    return r;
}

kds_rate kds_rate_table(const double *counts, double *cum, size_t n, sim_time slot)
{
    SIM_ASSERT(slot > 0);
    kds_rate r = {0};
    r.kind = KDS_RATE_TABLE;
    r.counts = counts;
    r.cum = cum;
    r.n_slots = n;
    r.slot = slot;
    cum[0] = 0;
    for (size_t i = 0; i < n; i++)
        cum[i + 1] = cum[i] + counts[i];
    return r;
}

/* Records of a table profile in [0, t): whole slots from the running sums, the slot in
 * progress pro rata, so that F at a slot boundary is that running sum exactly. */
static double table_before(const kds_rate *r, sim_time t)
{
    if (t <= 0 || r->n_slots == 0)
        return 0;
    sim_time i = t / r->slot;
    if ((size_t)i >= r->n_slots)
        return r->cum[r->n_slots];
    sim_time into = t - i * r->slot;
    return r->cum[i] + r->counts[i] * ((double)into / (double)r->slot);
}

static const double DAY_S = 86400.0;

double kds_rate_at(const kds_rate *r, sim_time t)
{
    switch (r->kind) {
    case KDS_RATE_CONSTANT:
        return r->rate;
    case KDS_RATE_STEPS: {
        double v = r->rate;
        for (size_t i = 0; i < r->n_steps && r->steps[i].at <= t; i++)
            v = r->steps[i].rate;
        return v;
    }
    case KDS_RATE_RAMP:
        if (t <= r->ramp_start)
            return r->from;
        if (t >= r->ramp_end)
            return r->to;
        return r->from + (r->to - r->from) * (double)(t - r->ramp_start) /
                             (double)(r->ramp_end - r->ramp_start);
    case KDS_RATE_DAILY: {
        double x = 2.0 * M_PI * sim_to_s(t - r->peak) / DAY_S;
        return r->rate * (1.0 + r->amplitude * cos(x));
    }
    case KDS_RATE_TABLE: {
        if (t < 0 || t / r->slot >= (sim_time)r->n_slots)
            return 0;
        return r->counts[t / r->slot] / sim_to_s(r->slot);
    }
    }
    return 0;
}

/* Integral of a linear ramp piece between a and b, both inside [ramp_start, ramp_end]. */
static double ramp_piece(const kds_rate *r, sim_time a, sim_time b)
{
    return 0.5 * (kds_rate_at(r, a) + kds_rate_at(r, b)) * sim_to_s(b - a);
}

double kds__rate_integral(const kds_rate *r, sim_time a, sim_time b)
{
    if (b <= a)
        return 0;
    switch (r->kind) {
    case KDS_RATE_CONSTANT:
        return r->rate * sim_to_s(b - a);
    case KDS_RATE_STEPS: {
        double sum = 0, v = r->rate;
        sim_time t = a;
        for (size_t i = 0; i < r->n_steps; i++) {
            sim_time at = r->steps[i].at;
            if (at <= t) {
                v = r->steps[i].rate;
                continue;
            }
            if (at >= b)
                break;
            sum += v * sim_to_s(at - t);
            t = at;
            v = r->steps[i].rate;
        }
        return sum + v * sim_to_s(b - t);
    }
    case KDS_RATE_RAMP: {
        double sum = 0;
        sim_time s0 = r->ramp_start, s1 = r->ramp_end;
        if (a < s0)
            sum += r->from * sim_to_s((b < s0 ? b : s0) - a);
        sim_time lo = a > s0 ? a : s0, hi = b < s1 ? b : s1;
        if (hi > lo)
            sum += ramp_piece(r, lo, hi);
        if (b > s1)
            sum += r->to * sim_to_s(b - (a > s1 ? a : s1));
        return sum;
    }
    case KDS_RATE_DAILY: {
        double w = 2.0 * M_PI / DAY_S;
        double xa = sim_to_s(a - r->peak), xb = sim_to_s(b - r->peak);
        return r->rate * ((xb - xa) + r->amplitude * (sin(w * xb) - sin(w * xa)) / w);
    }
    case KDS_RATE_TABLE:
        return table_before(r, b) - table_before(r, a);
    }
    return 0;
}

double kds_rate_peak(const kds_rate *r, sim_time a, sim_time b)
{
    switch (r->kind) {
    case KDS_RATE_CONSTANT:
        return r->rate;
    case KDS_RATE_STEPS: {
        double m = kds_rate_at(r, a);
        for (size_t i = 0; i < r->n_steps; i++)
            if (r->steps[i].at > a && r->steps[i].at < b && r->steps[i].rate > m)
                m = r->steps[i].rate;
        return m;
    }
    case KDS_RATE_RAMP: {
        double x = kds_rate_at(r, a), y = kds_rate_at(r, b);
        return x > y ? x : y;
    }
    case KDS_RATE_DAILY:
        /* Within a day the cycle reaches its peak; shorter windows are rare enough in
         * sizing that the bound is fine. */
        return r->rate * (1.0 + r->amplitude);
    case KDS_RATE_TABLE: {
        double m = 0;
        sim_time lo = a < 0 ? 0 : a / r->slot, hi = b <= 0 ? 0 : (b - 1) / r->slot + 1;
        for (sim_time i = lo; i < hi && (size_t)i < r->n_slots; i++)
            if (r->counts[i] > m)
                m = r->counts[i];
        return m / sim_to_s(r->slot);
    }
    }
    return 0;
}
