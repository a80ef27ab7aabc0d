/* kds_replay.h - a producer rate that replays a recorded trace: records per minute (the
 * IncomingRecords sums that CloudWatch keeps per minute) turned into a table rate
 * profile (kds_rate.h) with a chosen spread inside each minute.
 *
 * The trace fixes how many records arrive in each minute; what it cannot say is how
 * they arrive within the minute. Two spreads are offered: `even`, the minute's count
 * at a constant rate over its 60 seconds (one slot a minute), and `poisson`, the
 * minute's count scattered over its 60 seconds as if each record's arrival time were
 * uniform in the minute (a Poisson process conditioned on its count): one multinomial
 * draw a minute gives 60 per-second slots whose sum is the minute's count exactly.
 * Either way the profile's integral over a whole minute is the trace's count, so a
 * producer with `arrivals: even` replays the trace's totals to the record.
 */
#ifndef KDS_REPLAY_H
#define KDS_REPLAY_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "kds_rate.h"

typedef enum {
    KDS_REPLAY_EVEN,   /* constant rate within each minute */
    KDS_REPLAY_POISSON /* per-second counts: one multinomial draw over 60 s a minute */
} kds_replay_spread;

/* Slots the table of `n_minutes` minutes needs: n_minutes (even) or 60 x n_minutes
 * (poisson). */
size_t kds_replay_slots(size_t n_minutes, kds_replay_spread spread);

/* Build the rate profile of a trace.
 *   per_minute  records in minute i (>= 0), i = 0 .. n_minutes - 1; minute i starts at
 *               i minutes of simulated time
 *   scale       factor on every minute's count (> 0; 1 replays the trace as it is);
 *               poisson rounds each scaled count to the nearest whole record
 *   rng         the draws of the poisson spread (borrowed; unused for even)
 *   counts      caller's memory, kds_replay_slots() doubles, borrowed by the profile
 *   cum         caller's memory, kds_replay_slots() + 1 doubles, borrowed by the profile
 * Returns the profile; it is 0 after the last minute. O(slots). A minute above 2^32 - 1
 * records (after scaling) is a bug in the caller (the loader refuses it): asserted. */
kds_rate kds_replay_build(const double *per_minute, size_t n_minutes, double scale,
                          kds_replay_spread spread, gsl_rng *rng, double *counts, double *cum);

#endif
