/* kds_invariant.c - the conservation checks of kds_invariant.h. */
#include "kds_invariant.h"

#include <inttypes.h>
#include <stdio.h>

#include "kds_hashkey.h"
#include "sim_err.h"

int kds_check_cover(const kds_stream *st, char *msg, size_t n)
{
    char a[KDS_HASHKEY_DEC_LEN], b[KDS_HASHKEY_DEC_LEN], id[32];
    if (st->n_open == 0) {
        snprintf(msg, n, "invariant 'key-space cover' violated: no open shard");
        return SIM_ESTATE;
    }
    const kds_shard *first = st->shards[st->open[0]];
    if (first->lo != 0) {
        snprintf(msg, n, "invariant 'key-space cover' violated: the first open shard %s starts at "
                         "%s, not 0",
                 kds_shard_id(id, sizeof id, first->index), kds_hashkey_to_dec(a, first->lo));
        return SIM_ESTATE;
    }
    for (size_t i = 0; i < st->n_open; i++) {
        const kds_shard *sh = st->shards[st->open[i]];
        if (sh->state != KDS_SHARD_OPEN || sh->hi < sh->lo) {
            snprintf(msg, n, "invariant 'key-space cover' violated: %s is in the open list but %s",
                     kds_shard_id(id, sizeof id, sh->index),
                     sh->hi < sh->lo ? "has an empty range" : kds_shard_state_name(sh->state));
            return SIM_ESTATE;
        }
        if (i + 1 < st->n_open) {
            const kds_shard *nx = st->shards[st->open[i + 1]];
            if (sh->hi == KDS_HASHKEY_MAX || sh->hi + 1 != nx->lo) {
                snprintf(msg, n, "invariant 'key-space cover' violated: %s ends at %s but the next "
                                 "open shard starts at %s (a gap or an overlap)",
                         kds_shard_id(id, sizeof id, sh->index), kds_hashkey_to_dec(a, sh->hi),
                         kds_hashkey_to_dec(b, nx->lo));
                return SIM_ESTATE;
            }
        } else if (sh->hi != KDS_HASHKEY_MAX) {
            snprintf(msg, n, "invariant 'key-space cover' violated: the last open shard %s ends at "
                             "%s, not 2^128 - 1",
                     kds_shard_id(id, sizeof id, sh->index), kds_hashkey_to_dec(a, sh->hi));
            return SIM_ESTATE;
        }
    }
    return 0;
}

int kds_world_check(const kds_world *w, char *msg, size_t n)
{
    int rc = kds_check_cover(&w->stream, msg, n);
    if (rc)
        return rc;
    uint64_t stored = 0;
    for (size_t i = 0; i < w->stream.n_shards; i++)
        stored += w->stream.shards[i]->st.records_in;
    uint64_t written = 0;
    for (size_t i = 0; i < w->n_producers; i++) {
        const kds_producer_stats *s = kds_producer_stats_get(w->producers[i]);
        const char *name = kds_producer_cfg_get(w->producers[i])->name;
        if (s->records_attempted !=
            s->records_written + s->records_given_up + s->records_in_flight) {
            snprintf(msg, n, "invariant 'producer conservation' violated for producer %s: "
                             "attempted %" PRIu64 " != written %" PRIu64 " + given up %" PRIu64
                             " + in flight %" PRIu64,
                     name, s->records_attempted, s->records_written, s->records_given_up,
                     s->records_in_flight);
            return SIM_ESTATE;
        }
        uint64_t served = s->records_written + s->duplicates_written + s->write_throttled_records +
                          s->records_failed_internal;
        if (s->record_sends != served + s->record_sends_pending) {
            snprintf(msg, n, "invariant 'producer sends' violated for producer %s: %" PRIu64
                             " records sent != %" PRIu64 " stored + throttled + failed + %" PRIu64
                             " pending",
                     name, s->record_sends, served, s->record_sends_pending);
            return SIM_ESTATE;
        }
        written += s->records_written + s->duplicates_written;
    }
    if (written != stored) {
        snprintf(msg, n, "invariant 'stream totals' violated: shards stored %" PRIu64
                         " records, producers wrote %" PRIu64 " (with duplicates)",
                 stored, written);
        return SIM_ESTATE;
    }
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_consumer_stats *c = &w->consumers[i]->st;
        uint64_t acc = c->records_skipped_at_start + c->records_delivered + c->records_unread +
                       c->records_expired_unread;
        if (acc != stored) {
            snprintf(msg, n, "invariant 'consumer conservation' violated for consumer %s: stored %"
                             PRIu64 " != skipped at start %" PRIu64 " + delivered %" PRIu64
                             " + unread %" PRIu64 " + expired %" PRIu64,
                     w->consumers[i]->name, stored, c->records_skipped_at_start,
                     c->records_delivered, c->records_unread, c->records_expired_unread);
            return SIM_ESTATE;
        }
    }
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_consumer *c = w->consumers[i];
        if (c->ops->check && (rc = c->ops->check(c, msg, n)) != 0)
            return rc;
    }
    return 0;
}
