/* kds_reshard.c - SplitShard, MergeShards and UpdateShardCount (kds_reshard.h). */
#include "kds_reshard.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kds_invariant.h"
#include "kds_stream_int.h"
#include "kds_trace.h"
#include "sim_err.h"
#include "sim_units.h"

const char *kds_api_status_name(kds_api_status s)
{
    switch (s) {
    case KDS_API_OK:
        return "OK";
    case KDS_API_INVALID_ARGUMENT:
        return "InvalidArgumentException";
    case KDS_API_RESOURCE_IN_USE:
        return "ResourceInUseException";
    case KDS_API_LIMIT_EXCEEDED:
        return "LimitExceededException";
    case KDS_API_NOT_FOUND:
        return "ResourceNotFoundException";
    }
    return "?";
}

/* ---- topology changes, applied at once --------------------------------------------- */

static int open_pos(const kds_stream *st, uint32_t index)
{
    for (size_t i = 0; i < st->n_open; i++)
        if (st->open[i] == index)
            return (int)i;
    return -1;
}

/* Replace `drop` open entries from position `pos` with the `n` indices in `add`. */
static int replace_open(kds_stream *st, size_t pos, size_t drop, const uint32_t *add, size_t n)
{
    size_t nn = st->n_open - drop + n;
    uint32_t *no = malloc((nn ? nn : 1) * sizeof *no);
    if (!no)
        return SIM_ENOMEM;
    memcpy(no, st->open, pos * sizeof *no);
    memcpy(no + pos, add, n * sizeof *no);
    memcpy(no + pos + n, st->open + pos + drop, (st->n_open - pos - drop) * sizeof *no);
    free(st->open);
    st->open = no;
    st->n_open = nn;
    st->topology_version++;
    /* The cover invariant after every change: a violation is a bug, not an outcome.
     * The run stops here, and the end-of-run check (kds_world_check, which checks the
     * cover first) names it; nothing routes a key in between. */
    char msg[400];
    if (kds_check_cover(st, msg, sizeof msg) != 0)
        sim_stop(st->sim);
    sim_series_add(&st->open_shards_min, sim_now(st->sim), (double)nn);
    return 0;
}

static void close_shard(kds_stream *st, kds_shard *sh)
{
    kds__shard_close(st, sh);
    if (KDS_TRACING(st->trace, "reshard", st->cfg.name, sh->index))
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, sh->index,
                       "closed: no more writes; its records stay readable until they expire");
    /* Subscribers learn of SHARD_END at once, as SubscribeToShard's last event tells an
     * enhanced fan-out consumer (its continuation ends and it names the children):
     * the append listeners run once more and find the shard closed. */
    kds_shard_notify_append(sh);
}

static void notify(kds_stream *st, kds_shard *sh)
{
    if (KDS_TRACING(st->trace, "reshard", st->cfg.name, sh->index)) {
        char lo[KDS_HASHKEY_DEC_LEN], hi[KDS_HASHKEY_DEC_LEN], p[32], q[32];
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, sh->index,
                       "new shard [%s, %s], parent %s%s%s",
                       kds_hashkey_to_dec(lo, sh->lo), kds_hashkey_to_dec(hi, sh->hi),
                       kds_shard_id(p, sizeof p, (uint32_t)sh->parent),
                       sh->adjacent_parent >= 0 ? ", adjacent parent " : "",
                       sh->adjacent_parent >= 0
                           ? kds_shard_id(q, sizeof q, (uint32_t)sh->adjacent_parent)
                           : "");
    }
    for (size_t i = 0; i < st->n_listeners; i++)
        st->listeners[i].fn(st->listeners[i].ctx, sh);
}

static void note_children(kds_reshard_op *op, const kds_shard *c)
{
    if (!op)
        return;
    if (op->n_children == 0)
        op->first_child = c->index;
    op->n_children = c->index - op->first_child + 1;
}

int kds__reshard_split_now(kds_stream *st, kds_shard *sh, kds_hashkey key, kds_reshard_op *op)
{
    int pos = open_pos(st, sh->index);
    SIM_ASSERT(pos >= 0 && key > sh->lo + 1 && key <= sh->hi);
    uint32_t parent = sh->index;
    kds_hashkey lo = sh->lo, hi = sh->hi;
    kds_shard *a = kds__shard_new(st, lo, key - 1);
    kds_shard *b = a ? kds__shard_new(st, key, hi) : NULL;
    if (!a || !b)
        return SIM_ENOMEM;
    sh = st->shards[parent]; /* the shard array may have moved */
    a->parent = b->parent = (int32_t)parent;
    sh->children[0] = (int32_t)a->index;
    sh->children[1] = (int32_t)b->index;
    close_shard(st, sh);
    uint32_t add[2] = {a->index, b->index};
    int rc = replace_open(st, (size_t)pos, 1, add, 2);
    if (rc)
        return rc;
    note_children(op, a);
    note_children(op, b);
    notify(st, a);
    notify(st, b);
    return 0;
}

/* Merge open shards at open positions pos and pos + 1 now; the child's parent is the
 * left one (lower range), its adjacent parent the right one, or the other way round when
 * `right_is_parent`. */
static int merge_at(kds_stream *st, size_t pos, bool right_is_parent, kds_reshard_op *op)
{
    kds_shard *l = st->shards[st->open[pos]], *r = st->shards[st->open[pos + 1]];
    uint32_t li = l->index, ri = r->index;
    kds_shard *c = kds__shard_new(st, l->lo, r->hi);
    if (!c)
        return SIM_ENOMEM;
    c->parent = (int32_t)(right_is_parent ? ri : li);
    c->adjacent_parent = (int32_t)(right_is_parent ? li : ri);
    st->shards[li]->children[0] = st->shards[ri]->children[0] = (int32_t)c->index;
    close_shard(st, st->shards[li]);
    close_shard(st, st->shards[ri]);
    uint32_t add[1] = {c->index};
    int rc = replace_open(st, pos, 2, add, 1);
    if (rc)
        return rc;
    note_children(op, c);
    notify(st, c);
    return 0;
}

int kds__reshard_merge_now(kds_stream *st, size_t pos, kds_reshard_op *op)
{
    return merge_at(st, pos, false, op);
}

int kds__reshard_merge_pair(kds_stream *st, uint32_t a, uint32_t b, kds_reshard_op *op)
{
    /* Nothing else reshards while the stream is UPDATING, so the pair accepted is still
     * open and adjacent, hence next to each other in the open list (hash-key order). */
    int pa = open_pos(st, a), pb = open_pos(st, b);
    SIM_ASSERT(pa >= 0 && pb >= 0 && (pa + 1 == pb || pb + 1 == pa));
    /* AWS names the ShardToMerge (a) the child's parent and the AdjacentShardToMerge (b)
     * its adjacent parent, whichever range comes first. */
    return merge_at(st, (size_t)(pa < pb ? pa : pb), pb < pa, op);
}

int kds__reshard_uniform(kds_stream *st, uint32_t target, kds_reshard_op *op)
{
    /* Splits first: every open shard is cut at each target boundary inside it, one
     * boundary at a time (each cut closes the shard and opens two children). */
    for (uint32_t j = 1; j < target; j++) {
        kds_hashkey b = kds_hashkey_even_start(j, target);
        kds_shard *sh = kds_stream_route(st, b);
        if (sh->lo == b)
            continue; /* already a boundary */
        if (b <= sh->lo + 1)
            continue; /* too close to the edge to split; the merge phase absorbs it */
        int rc = kds__reshard_split_now(st, sh, b, op);
        if (rc)
            return rc;
    }
    /* Then merges: the pieces of each target range are merged left to right. */
    for (uint32_t j = 0; j < target; j++) {
        kds_hashkey lo = kds_hashkey_even_start(j, target), hi = kds_hashkey_even_end(j, target);
        for (;;) {
            kds_shard *first = kds_stream_route(st, lo);
            if (first->hi >= hi)
                break;
            int pos = open_pos(st, first->index);
            SIM_ASSERT(pos >= 0 && (size_t)pos + 1 < st->n_open);
            int rc = kds__reshard_merge_now(st, (size_t)pos, op);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- requests ------------------------------------------------------------------------- */

kds_reshard_op *kds__reshard_log(kds_stream *st, kds_op_kind kind, const char *cause)
{
    if (st->n_ops == st->cap_ops) {
        st->cap_ops = st->cap_ops ? st->cap_ops * 2 : 8;
        st->ops = realloc(st->ops, st->cap_ops * sizeof *st->ops);
        SIM_ASSERT(st->ops != NULL);
    }
    kds_reshard_op *op = calloc(1, sizeof *op);
    SIM_ASSERT(op != NULL);
    op->kind = kind;
    op->cause = cause;
    op->requested = sim_now(st->sim);
    op->completed = -1;
    st->ops[st->n_ops++] = op;
    return op;
}

static kds_api_status refuse(kds_reshard_op *op, kds_api_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static kds_api_status refuse(kds_reshard_op *op, kds_api_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->message, sizeof op->message, fmt, ap);
    va_end(ap);
    op->status = s;
    return s;
}

static void completion(sim *s, void *ctx)
{
    kds_stream *st = ctx;
    kds_reshard_op *op = st->pending_op; /* one change at a time: the stream is UPDATING */
    st->pending_op = NULL;
    int rc = 0;
    switch (op->kind) {
    case KDS_OP_SPLIT:
        rc = kds__reshard_split_now(st, st->shards[op->shard], op->key, op);
        break;
    case KDS_OP_MERGE:
        rc = kds__reshard_merge_pair(st, op->shard, op->other, op);
        break;
    case KDS_OP_UPDATE_COUNT:
        rc = kds__reshard_uniform(st, op->target, op);
        break;
    case KDS_OP_MODE_SWITCH:
        break;
    }
    SIM_ASSERT(rc == 0);
    st->updating = false;
    op->completed = sim_now(s);
}

static void schedule(kds_stream *st, kds_reshard_op *op, sim_time after)
{
    SIM_ASSERT(!st->updating && st->pending_op == NULL);
    st->updating = true;
    st->pending_op = op;
    sim_after(st->sim, after, completion, st);
}

/* Checks every request shares: the stream is ACTIVE and resharded by its owner. */
static kds_api_status common_checks(kds_stream *st, kds_reshard_op *op, const char *api)
{
    if (st->cfg.mode != KDS_MODE_PROVISIONED)
        return refuse(op, KDS_API_INVALID_ARGUMENT,
                      "%s is not available for on-demand streams: the service reshards them",
                      api);
    if (st->updating)
        return refuse(op, KDS_API_RESOURCE_IN_USE,
                      "stream %s is UPDATING; %s needs an ACTIVE stream", st->cfg.name, api);
    return KDS_API_OK;
}

static kds_api_status find_open(kds_stream *st, kds_reshard_op *op, uint32_t index, const char *api)
{
    char id[32];
    if (index >= st->n_shards)
        return refuse(op, KDS_API_NOT_FOUND, "could not find %s in stream %s",
                      kds_shard_id(id, sizeof id, index), st->cfg.name);
    if (st->shards[index]->state != KDS_SHARD_OPEN)
        return refuse(op, KDS_API_INVALID_ARGUMENT, "%s is %s; %s takes open shards only",
                      kds_shard_id(id, sizeof id, index),
                      kds_shard_state_name(st->shards[index]->state), api);
    return KDS_API_OK;
}

static kds_api_status split_request(kds_stream *st, uint32_t shard, kds_hashkey key,
                                    const char *cause)
{
    kds_reshard_op *op = kds__reshard_log(st, KDS_OP_SPLIT, cause);
    op->shard = shard;
    op->key = key;
    kds_api_status s;
    if ((s = common_checks(st, op, "SplitShard")) || (s = find_open(st, op, shard, "SplitShard")))
        return s;
    const kds_shard *sh = st->shards[shard];
    if (!(key > sh->lo + 1 && key <= sh->hi)) {
        char k[KDS_HASHKEY_DEC_LEN], lo[KDS_HASHKEY_DEC_LEN], hi[KDS_HASHKEY_DEC_LEN];
        return refuse(op, KDS_API_INVALID_ARGUMENT,
                      "NewStartingHashKey %s is not inside the shard's range: it must be above "
                      "%s + 1 and at most %s",
                      kds_hashkey_to_dec(k, key), kds_hashkey_to_dec(lo, sh->lo),
                      kds_hashkey_to_dec(hi, sh->hi));
    }
    if (st->n_open + 1 > st->cfg.max_shards)
        return refuse(op, KDS_API_LIMIT_EXCEEDED, "the stream would have %zu open shards; the "
                                                  "limit is %u",
                      st->n_open + 1, st->cfg.max_shards);
    schedule(st, op, st->cfg.reshard_duration);
    return KDS_API_OK;
}

/* Whether two shards' hash-key ranges touch: one ends just below where the other starts.
 * The range ending at 2^128 - 1 touches nothing above it (hi + 1 would wrap to 0, the
 * first shard's start, and pass the last and first shards as neighbours). */
static bool adjacent(const kds_shard *x, const kds_shard *y)
{
    return (x->hi != KDS_HASHKEY_MAX && x->hi + 1 == y->lo) ||
           (y->hi != KDS_HASHKEY_MAX && y->hi + 1 == x->lo);
}

static kds_api_status merge_request(kds_stream *st, uint32_t a, uint32_t b, const char *cause)
{
    kds_reshard_op *op = kds__reshard_log(st, KDS_OP_MERGE, cause);
    op->shard = a;
    op->other = b;
    kds_api_status s;
    if ((s = common_checks(st, op, "MergeShards")) || (s = find_open(st, op, a, "MergeShards")) ||
        (s = find_open(st, op, b, "MergeShards")))
        return s;
    if (a == b) {
        char ia[32];
        return refuse(op, KDS_API_INVALID_ARGUMENT,
                      "%s is named twice: MergeShards needs two different open shards",
                      kds_shard_id(ia, sizeof ia, a));
    }
    if (!adjacent(st->shards[a], st->shards[b])) {
        char ia[32], ib[32];
        return refuse(op, KDS_API_INVALID_ARGUMENT,
                      "%s and %s are not adjacent: MergeShards needs two open shards whose "
                      "hash-key ranges touch",
                      kds_shard_id(ia, sizeof ia, a), kds_shard_id(ib, sizeof ib, b));
    }
    schedule(st, op, st->cfg.reshard_duration);
    return KDS_API_OK;
}

static kds_api_status update_count_request(kds_stream *st, uint32_t target, const char *cause)
{
    kds_reshard_op *op = kds__reshard_log(st, KDS_OP_UPDATE_COUNT, cause);
    op->target = target;
    kds_api_status s;
    if ((s = common_checks(st, op, "UpdateShardCount")))
        return s;
    sim_time now = sim_now(st->sim);
    uint32_t recent = 0;
    for (size_t i = 0; i + 1 < st->n_ops; i++) {
        /* The owner's calls only: an on-demand stream's own growth (logged as an
         * UpdateShardCount) does not use them up after a switch to provisioned. */
        const kds_reshard_op *o = st->ops[i];
        if (o->kind == KDS_OP_UPDATE_COUNT && o->status == KDS_API_OK &&
            now - o->requested < SIM_HOUR(24) && strcmp(o->cause, KDS_CAUSE_ON_DEMAND) != 0)
            recent++;
    }
    if (recent >= st->cfg.max_update_calls)
        return refuse(op, KDS_API_LIMIT_EXCEEDED,
                      "UpdateShardCount was already called %u times in the last 24 hours "
                      "(the limit is %u per rolling 24 hours)",
                      recent, st->cfg.max_update_calls);
    size_t n = st->n_open;
    if (target > st->cfg.max_shards)
        return refuse(op, KDS_API_LIMIT_EXCEEDED, "target %u is above the %u-shard limit", target,
                      st->cfg.max_shards);
    if ((size_t)target > 2 * n || (size_t)target * 2 < n || target == n)
        return refuse(op, KDS_API_INVALID_ARGUMENT,
                      "target %u is not allowed from %zu open shards: UpdateShardCount goes at "
                      "most to double and at least to half, and must change the count",
                      target, n);
    schedule(st, op, st->cfg.update_count_duration);
    return KDS_API_OK;
}

const kds_reshard_op *kds_reshard_last(const kds_stream *st)
{
    return st->n_ops ? st->ops[st->n_ops - 1] : NULL;
}

void kds_reshard_trace(kds_stream *st, const kds_reshard_op *op)
{
    int64_t shard = op->kind == KDS_OP_SPLIT || op->kind == KDS_OP_MERGE ? (int64_t)op->shard : -1;
    if (!KDS_TRACING(st->trace, "reshard", st->cfg.name, shard))
        return;
    char what[160], a[32], b[32], k[KDS_HASHKEY_DEC_LEN];
    sim_time updating = st->cfg.reshard_duration;
    char dur[32];
    switch (op->kind) {
    case KDS_OP_SPLIT:
        snprintf(what, sizeof what, "SplitShard of %s at NewStartingHashKey %s",
                 kds_shard_id(a, sizeof a, op->shard), kds_hashkey_to_dec(k, op->key));
        break;
    case KDS_OP_MERGE:
        snprintf(what, sizeof what, "MergeShards of %s and %s",
                 kds_shard_id(a, sizeof a, op->shard), kds_shard_id(b, sizeof b, op->other));
        break;
    case KDS_OP_UPDATE_COUNT:
        snprintf(what, sizeof what, "UpdateShardCount to %" PRIu32, op->target);
        updating = st->cfg.update_count_duration;
        break;
    case KDS_OP_MODE_SWITCH:
    default:
        snprintf(what, sizeof what, "switch to the %s capacity mode",
                 kds_trace_mode_words((int)op->target));
        break;
    }
    if (op->status != KDS_API_OK)
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, shard,
                       "%s (%s): refused, %s: %s", what, op->cause,
                       kds_api_status_name(op->status), op->message);
    else if (op->kind == KDS_OP_MODE_SWITCH)
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, shard,
                       "%s (%s): done; the stream keeps its shards", what, op->cause);
    else if (updating > 0)
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, shard,
                       "%s (%s): accepted; the stream is UPDATING for %s, writes still go "
                       "to the old shards", what, op->cause,
                       kds_trace_dur(dur, sizeof dur, updating));
    else
        kds_trace_emit(st->trace, sim_now(st->sim), "reshard", st->cfg.name, shard,
                       "%s (%s): accepted and applied at once", what, op->cause);
}

/* The requests a stream's owner makes (the scenario's or a rule's), each traced with its
 * outcome. */
kds_api_status kds_reshard_split(kds_stream *st, uint32_t shard, kds_hashkey key,
                                 const char *cause)
{
    kds_api_status s = split_request(st, shard, key, cause);
    kds_reshard_trace(st, kds_reshard_last(st));
    return s;
}

kds_api_status kds_reshard_merge(kds_stream *st, uint32_t a, uint32_t b, const char *cause)
{
    kds_api_status s = merge_request(st, a, b, cause);
    kds_reshard_trace(st, kds_reshard_last(st));
    return s;
}

kds_api_status kds_reshard_update_count(kds_stream *st, uint32_t target, const char *cause)
{
    kds_api_status s = update_count_request(st, target, cause);
    kds_reshard_trace(st, kds_reshard_last(st));
    return s;
}
