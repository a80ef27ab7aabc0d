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
 *   lease ownership:        a KCL lease is held at the table's current counter by one
 *                           worker at most, and only by its owner (or, during a KCL 3.x
 *                           graceful handoff, by the owner handing it over)
 *
 * Lease ownership is the KCL model's own check (kds_consumer_ops.check), where the
 * leases live: at every lease a worker acquires, where a violation stops the run at
 * once, and over every lease at the end.
 */
#ifndef KDS_INVARIANT_H
#define KDS_INVARIANT_H

#include <stddef.h>

#include "kds_stream.h"
#include "kds_world.h"

/* Check that the open shards of `st` cover the key space exactly, in order, without
 * overlap. Returns 0, or SIM_ESTATE with the invariant's name and the details in msg. */
int kds_check_cover(const kds_stream *st, char *msg, size_t n);

/* Check every invariant of a finished world (kds_world_finish ran; or one a model
 * stopped on finding a violation, which this then reports). Returns 0, or
 * SIM_ESTATE with the first violated invariant named in msg ("invariant 'consumer
 * conservation' violated: ..."). */
int kds_world_check(const kds_world *w, char *msg, size_t n);

#endif
