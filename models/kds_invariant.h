/* kds_invariant.h - conservation invariants, checked at the end of every run (and the
 * key-space cover after every topology change), so that a number in a report can be
 * trusted: a violated invariant is a bug in a model, and the run stops naming it.
 *
 *   producer conservation:  attempted = written + given up + in flight
 *   producer sends:         record sends = stored copies + throttled + failed + pending
 *   consumer conservation:  stored = skipped at start + delivered + unread + expired
 *                           (for every consumer, over every shard it reads)
 *   key-space cover:        the open shards' ranges cover [0, 2^128 - 1] exactly
 *   stream totals:          stored = producers' written + duplicates
 *
 * Lease ownership (never two owners of one lease at one time) is checked by the KCL
 * model itself, where the leases live.
 */
#ifndef KDS_INVARIANT_H
#define KDS_INVARIANT_H

#include <stddef.h>

#include "kds_stream.h"
#include "kds_world.h"

/* Check that the open shards of `st` cover the key space exactly, in order, without
 * overlap. Returns 0, or SIM_ESTATE with the invariant's name and the details in msg. */
int kds_check_cover(const kds_stream *st, char *msg, size_t n);

/* Check every invariant of a finished world (kds_world_finish ran). Returns 0, or
 * SIM_ESTATE with the first violated invariant named in msg ("invariant 'consumer
 * conservation' violated: ..."). */
int kds_world_check(const kds_world *w, char *msg, size_t n);

#endif
