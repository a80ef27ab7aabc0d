/* kds_rate.c - rate profiles and their integrals (kds_rate.h). */
#include "kds_rate.h"

#include <math.h>

kds_rate kds_rate_constant(double per_s)
{
    kds_rate r = {0};
    r.kind = KDS_RATE_CONSTANT;
    r.rate = per_s;
    return r;
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
    }
    return 0;
}

/* Integral of a linear ramp piece between a and b, both inside [ramp_start, ramp_end]. */
static double ramp_piece(const kds_rate *r, sim_time a, sim_time b)
{
    return 0.5 * (kds_rate_at(r, a) + kds_rate_at(r, b)) * sim_to_s(b - a);
}

double kds_rate_integral(const kds_rate *r, sim_time a, sim_time b)
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
    }
    return 0;
}
