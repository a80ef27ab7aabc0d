/* kds_slice.h - cutting a slice of a run (kds_log.h) in two, for consumers that hand
 * part of a slice to one place and the rest to another: Firehose cuts a slice where
 * an S3 object reaches its size hint, Flink where a replay after a restart catches up
 * with records it had never processed.
 *
 * A slice's records are taken as of equal size (bytes / count) and written evenly
 * over [t_first, t_last], as kds_log.h does for runs; duplicates are prorated and
 * marked records come first, as kds_log_take() hands them out.
 */
#ifndef KDS_SLICE_H
#define KDS_SLICE_H

#include <stdint.h>

#include "kds_log.h"

/* Write time of record i (0 <= i < count) of slice sl. */
static inline sim_time kds_slice_time(const kds_slice *sl, uint64_t i)
{
    if (sl->count <= 1)
        return sl->t_first;
    return sl->t_first + (sim_time)kds_prorate((uint64_t)(sl->t_last - sl->t_first), i,
                                               (uint64_t)sl->count - 1);
}

/* Split *sl after its first k records (0 < k < count): *head gets them, *tail the
 * rest (either may be sl itself). Counts, bytes, duplicates and marks add up exactly to
 * the original's. Two common cases skip divisions whose result they know: a slice
 * without duplicates (its pieces have none), and one PutRecords' records (t_first ==
 * t_last: every record has that write time). */
static inline void kds_slice_split(const kds_slice *sl, uint32_t k, kds_slice *head,
                                   kds_slice *tail)
{
    kds_slice s = *sl;
    uint64_t hb = kds_prorate(s.bytes, k, s.count);
    uint32_t hd = s.dups == 0 ? 0 : (uint32_t)kds_prorate(s.dups, k, s.count);
    uint32_t hm = s.marks < k ? s.marks : k;
    sim_time t_head_last = s.t_first, t_tail_first = s.t_first;
    if (s.t_last != s.t_first) {
        t_head_last = kds_slice_time(&s, k - 1);
        t_tail_first = kds_slice_time(&s, k);
    }
    *head = s;
    head->count = k;
    head->bytes = hb;
    head->dups = hd;
    head->marks = hm;
    head->t_last = t_head_last;
    *tail = s;
    tail->first = s.first + k;
    tail->count = s.count - k;
    tail->bytes = s.bytes - hb;
    tail->dups = s.dups - hd;
    tail->marks = s.marks - hm;
    tail->t_first = t_tail_first;
}

#endif
