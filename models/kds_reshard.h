/* kds_reshard.h - resharding: SplitShard, MergeShards and UpdateShardCount, validated as
 * AWS validates them, with the stream UPDATING while a change is in progress.
 *
 * model.md sections 1 and 6. A request is checked at once and either refused with
 * AWS's error name (InvalidArgumentException, ResourceInUseException,
 * LimitExceededException, ResourceNotFoundException) or accepted: the stream is
 * UPDATING for a configured time, during which writes still go to the parents; then
 * the parents close (readable, no writes), the children open with the next shard
 * indices and name their parents, and the stream's shard listeners are told.
 * UpdateShardCount (UNIFORM_SCALING) is carried out as AWS does it, by splits and then
 * merges, which leaves short-lived intermediate shards in the shard graph.
 */
#ifndef KDS_RESHARD_H
#define KDS_RESHARD_H

#include <stdint.h>

#include "kds_hashkey.h"
#include "kds_stream.h"
#include "sim.h"

typedef enum {
    KDS_API_OK = 0,
    KDS_API_INVALID_ARGUMENT, /* InvalidArgumentException */
    KDS_API_RESOURCE_IN_USE,  /* ResourceInUseException: the stream is not ACTIVE */
    KDS_API_LIMIT_EXCEEDED,   /* LimitExceededException */
    KDS_API_NOT_FOUND         /* ResourceNotFoundException */
} kds_api_status;

/* AWS's name of a status ("InvalidArgumentException"; "OK" for success). */
const char *kds_api_status_name(kds_api_status s);

typedef enum {
    KDS_OP_SPLIT,        /* SplitShard */
    KDS_OP_MERGE,        /* MergeShards */
    KDS_OP_UPDATE_COUNT, /* UpdateShardCount, UNIFORM_SCALING */
    KDS_OP_MODE_SWITCH   /* UpdateStreamMode (see kds_capacity.h) */
} kds_op_kind;

/* One request, kept for the report. */
/* The cause of the resharding the on-demand service does itself (kds_capacity.c):
 * not the owner's UpdateShardCount calls, so not counted against their limit. */
#define KDS_CAUSE_ON_DEMAND "on-demand scaling"

typedef struct kds_reshard_op {
    kds_op_kind kind;
    const char *cause;       /* static text: "scenario", "rule", "on-demand scaling" */
    sim_time requested;      /* ns */
    sim_time completed;      /* ns, or -1 (refused, or still in progress at the end) */
    kds_api_status status;
    char message[200];       /* why it was refused ("" when accepted) */
    uint32_t shard;          /* SPLIT: the parent; MERGE: the first shard */
    uint32_t other;          /* MERGE: the adjacent shard */
    kds_hashkey key;         /* SPLIT: NewStartingHashKey */
    uint32_t target;         /* UPDATE_COUNT: target open shards; MODE_SWITCH: kds_mode */
    uint32_t first_child;    /* shards created at completion: [first_child, +n_children) */
    uint32_t n_children;
} kds_reshard_op;

/* SplitShard: split open shard `shard` at `key` (start + 1 < key <= end). */
kds_api_status kds_reshard_split(kds_stream *st, uint32_t shard, kds_hashkey key,
                                 const char *cause);

/* MergeShards: merge open shards `a` and `b`, whose ranges must be adjacent. */
kds_api_status kds_reshard_merge(kds_stream *st, uint32_t a, uint32_t b, const char *cause);

/* UpdateShardCount with UNIFORM_SCALING to `target` open shards: at most
 * max_update_calls per rolling 24 h, target within [half, double] of the open count and
 * at most max_shards; provisioned streams only. */
kds_api_status kds_reshard_update_count(kds_stream *st, uint32_t target, const char *cause);

/* Write op's trace line (kind "reshard"): the request, who made it (its cause) and its
 * outcome, accepted (for how long the stream is UPDATING) or refused (the error and
 * why). op (non-NULL, one of st's logged operations) and st are borrowed; nothing is
 * written when tracing is off or the line is filtered out. A split's or merge's line is
 * about its first shard, the stream's others about no shard. The three requests above
 * call it; a mode switch's caller does. */
void kds_reshard_trace(kds_stream *st, const kds_reshard_op *op);

/* The last request (for its message). NULL when none. */
const kds_reshard_op *kds_reshard_last(const kds_stream *st);

/* Split every open shard holding a target boundary and merge the pieces so that the
 * open shards become `target` even ranges, at once (no UPDATING period): the
 * mechanics behind UpdateShardCount and on-demand scaling. Returns 0 or SIM_ENOMEM.
 * Records the children in `op` when it is not NULL. */
int kds__reshard_uniform(kds_stream *st, uint32_t target, kds_reshard_op *op);

/* Record a request made by the service itself (on-demand scaling) or a mode switch,
 * for the report. The op is owned by the stream. */
kds_reshard_op *kds__reshard_log(kds_stream *st, kds_op_kind kind, const char *cause);

/* Merge the open shards at open positions pos and pos + 1 now (no checks). Returns 0 or
 * SIM_ENOMEM. */
int kds__reshard_merge_now(kds_stream *st, size_t pos, kds_reshard_op *op);

/* Merge open shards `a` and `b`, adjacent, now (no other checks): the child names a as
 * its parent and b as its adjacent parent, as MergeShards's ShardToMerge and
 * AdjacentShardToMerge. Returns 0 or SIM_ENOMEM. For the request's completion. */
int kds__reshard_merge_pair(kds_stream *st, uint32_t a, uint32_t b, kds_reshard_op *op);

/* Split open shard `sh` at `key` now (no checks, no UPDATING). Returns 0 or
 * SIM_ENOMEM. For on-demand scaling and the request completion. */
int kds__reshard_split_now(kds_stream *st, kds_shard *sh, kds_hashkey key, kds_reshard_op *op);

#endif
