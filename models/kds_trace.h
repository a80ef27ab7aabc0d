/* kds_trace.h - the event trace: one readable line per thing that happened (a
 * PutRecords and how many records succeeded and were throttled, a GetRecords call and
 * what it returned, a push, a lease taken or stolen, a split completed), for teaching
 * step by step.
 *
 * Models hold a borrowed kds_trace pointer through their stream (st->trace); NULL
 * means tracing is off, and every call site checks it first, so a run without --trace
 * pays one branch per API call. Lines are
 *   <time s>  <kind>  <entity>  <shard id or ->  <what happened>
 * in columns (the entity's as wide as the run's longest name), and filters keep only the
 * kinds, shards or entities asked for.
 */
#ifndef KDS_TRACE_H
#define KDS_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

typedef struct kds_trace {
    FILE *out;                /* borrowed */
    const char *const *kinds; /* NULL-terminated list of kinds to keep, or NULL for all */
    const char *const *names; /* entities (producer, consumer, worker names) to keep; a
                               * KCL worker's entity is CONSUMER/WORKER, and either part
                               * selects it */
    int64_t shard;            /* shard index to keep, or -1 for all */
    uint64_t lines;           /* lines written */
    int entity_width;         /* width of the entity column: the longest entity name of
                               * the run, set once when the trace is opened (0 or less:
                               * KDS_TRACE_ENTITY_WIDTH), so that columns never shift */
} kds_trace;

/* The entity column's least width (and its width when entity_width is not set). */
#define KDS_TRACE_ENTITY_WIDTH 20

/* Write the trace's header line, its columns as wide as the lines'. */
void kds_trace_header(kds_trace *t);

/* Every kind a line can have, NULL-terminated, in the order README's trace section
 * gives them: what --trace-kinds is checked against. A model that writes a new kind
 * adds it here (tests/cli_trace_filters.sh checks the models' sources against it). */
extern const char *const kds_trace_kinds[];

/* Whether a line of this kind, entity and shard (-1: none) passes the filters: its kind
 * among `kinds`, its entity among `names` (for "A/B", A or B will do), its shard the
 * one kept. A NULL list keeps everything. */
bool kds_trace_wants(const kds_trace *t, const char *kind, const char *entity, int64_t shard);

/* Write one line if it passes the filters: `what` is printf-formatted. */
void kds_trace_emit(kds_trace *t, sim_time now, const char *kind, const char *entity,
                    int64_t shard, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* What a GetRecords line says of the records that expired before the reader reached
 * them (the iterator had fallen behind the trim horizon): " (N expired unread before
 * them)" in buf (64 bytes hold any count), or "" when none did. Returns buf. */
char *kds_trace_expired(char *buf, size_t n, uint64_t expired);

/* What a GetRecords line says when its call first fetched a new shard iterator, the last
 * one having expired (unused for longer than `ttl`, 5 minutes: ExpiredIteratorException):
 * "; its shard iterator had expired (unused for over 5 min): a new one first, one more
 * round trip" in buf (160 bytes hold it), or "" when `refreshed` is false. Returns buf. */
char *kds_trace_refresh(char *buf, size_t n, bool refreshed, sim_time ttl);

/* A duration as the trace's lines write a setting or a wait: from 2 hours a whole number
 * of hours ("25 h"), from 2 minutes a whole number of minutes ("5 min", "90 min"),
 * otherwise seconds with at most 3 decimals and no trailing zeros ("60 s", "1.5 s",
 * "150 s"). Latencies measured in milliseconds keep "ms". buf >= 32 B. Returns buf. */
char *kds_trace_dur(char *buf, size_t n, sim_time d);

/* A capacity mode in words, as the console names it: "Provisioned", "On-demand
 * Standard", "On-demand Advantage" (the JSON keeps kds_mode_name's). */
const char *kds_trace_mode_words(int mode);

/* The ending of a counted noun in a line: "" for a count of one, "s" otherwise, as in
 * "%" PRIu64 " record%s", n, kds_trace_s(n). */
static inline const char *kds_trace_s(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* The usual guard at a call site: tracing on and this line wanted. */
#define KDS_TRACING(t, kind, entity, shard) ((t) && kds_trace_wants((t), (kind), (entity), (shard)))

/* The guard and the line together: kds_trace_emit(t, now, kind, entity, shard, fmt, ...)
 * when KDS_TRACING holds, the arguments after the guard's evaluated only then. With the
 * trace off (t NULL) it costs one test. */
#define KDS_TRACE(t, now, kind, entity, shard, ...)                                          \
    do {                                                                                     \
        if (KDS_TRACING((t), (kind), (entity), (shard)))                                     \
            kds_trace_emit((t), (now), (kind), (entity), (shard), __VA_ARGS__);              \
    } while (0)

#endif
