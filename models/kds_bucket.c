/* kds_bucket.c - the integer token buckets of kds_bucket.h (the per-call operations are
 * inline in the header). */
#include "kds_bucket.h"

#include "sim_err.h"

void kds_bucket_init(kds_bucket *b, uint64_t rate, uint64_t depth, sim_time now)
{
    SIM_ASSERT(depth >= 1 && depth <= KDS_BUCKET_MAX);
    SIM_ASSERT(rate <= KDS_BUCKET_MAX);
    b->rate = (int64_t)rate;
    b->depth = (int64_t)depth * KDS_NANO;
    b->level = b->depth;
    b->last = now;
}

void kds_bucket_resize(kds_bucket *b, sim_time now, uint64_t rate, uint64_t depth)
{
    kds_bucket_refill(b, now);
    SIM_ASSERT(depth >= 1 && depth <= KDS_BUCKET_MAX);
    SIM_ASSERT(rate <= KDS_BUCKET_MAX);
    b->rate = (int64_t)rate;
    b->depth = (int64_t)depth * KDS_NANO;
    if (b->level > b->depth)
        b->level = b->depth;
}
