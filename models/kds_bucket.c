/* kds_bucket.c - the integer token buckets of kds_bucket.h. */
#include "kds_bucket.h"

#include "sim_err.h"

void kds_bucket_init(kds_bucket *b, uint64_t rate, uint64_t depth, sim_time now)
{
    SIM_ASSERT(depth >= 1 && depth <= (uint64_t)(INT64_MAX / KDS_NANO));
    SIM_ASSERT(rate <= (uint64_t)(INT64_MAX / KDS_NANO));
    b->rate = (int64_t)rate;
    b->depth = (int64_t)depth * KDS_NANO;
    b->level = b->depth;
    b->last = now;
}

void kds_bucket_refill(kds_bucket *b, sim_time now)
{
    SIM_DEBUG_ASSERT(now >= b->last);
    sim_time dt = now - b->last;
    b->last = now;
    if (dt <= 0 || b->level >= b->depth)
        return;
    int64_t room = b->depth - b->level;
    /* Compare dt with the time to fill before multiplying, so rate * dt cannot
     * overflow: it is then below room, itself below 2 * depth. */
    if (b->rate == 0)
        return;
    if (dt >= room / b->rate + 1) {
        b->level = b->depth;
        return;
    }
    b->level += b->rate * dt;
    if (b->level > b->depth)
        b->level = b->depth;
}

uint64_t kds_bucket_avail(kds_bucket *b, sim_time now)
{
    kds_bucket_refill(b, now);
    return b->level > 0 ? (uint64_t)(b->level / KDS_NANO) : 0;
}

bool kds_bucket_take(kds_bucket *b, sim_time now, uint64_t units)
{
    kds_bucket_refill(b, now);
    if (units > (uint64_t)(INT64_MAX / KDS_NANO))
        return false;
    int64_t need = (int64_t)units * KDS_NANO;
    if (b->level < need)
        return false;
    b->level -= need;
    return true;
}

void kds_bucket_charge(kds_bucket *b, sim_time now, uint64_t units)
{
    kds_bucket_refill(b, now);
    SIM_ASSERT(units <= (uint64_t)(INT64_MAX / KDS_NANO));
    b->level -= (int64_t)units * KDS_NANO;
}

bool kds_bucket_in_debt(kds_bucket *b, sim_time now)
{
    kds_bucket_refill(b, now);
    return b->level < 0;
}

void kds_bucket_resize(kds_bucket *b, sim_time now, uint64_t rate, uint64_t depth)
{
    kds_bucket_refill(b, now);
    SIM_ASSERT(depth >= 1 && depth <= (uint64_t)(INT64_MAX / KDS_NANO));
    SIM_ASSERT(rate <= (uint64_t)(INT64_MAX / KDS_NANO));
    b->rate = (int64_t)rate;
    b->depth = (int64_t)depth * KDS_NANO;
    if (b->level > b->depth)
        b->level = b->depth;
}
