/* kds_stream_int.h - what the stream model's own files share and nothing else may use:
 * making a shard (for resharding). */
#ifndef KDS_STREAM_INT_H
#define KDS_STREAM_INT_H

#include "kds_stream.h"

/* Append a new OPEN shard with range [lo, hi], created now, with the next shard index,
 * its budgets full and its log empty. It is not added to the open list and listeners
 * are not told: the caller does both. Returns NULL when out of memory. */
kds_shard *kds__shard_new(kds_stream *st, kds_hashkey lo, kds_hashkey hi);

/* Close open shard `sh` now (resharding took it out of the open list): CLOSED, and
 * EXPIRED one retention period later, when its last records have expired (an event
 * then trims it, marks it and traces it). */
void kds__shard_close(kds_stream *st, kds_shard *sh);

#endif
