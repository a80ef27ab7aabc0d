/* kds_log.h - a shard's record log, kept as runs of records rather than records.
 *
 * One PutRecords request puts n records into a shard at one instant; the log keeps
 * them as one run (first position, count, bytes, write time). Readers hold cursors
 * (a record position plus a hint of the run holding it) and take slices of runs, so a
 * GetRecords call costs O(runs touched), never O(records), and a run's latency is
 * recorded once, weighted by its count (design.md, "Where the cost goes").
 *
 * Positions count records from 0 in the order they were written to the shard; they
 * are the simulator's sequence numbers (kds_stream formats them as AWS-looking
 * strings). Trimming at the retention period removes whole runs, or the expired part
 * of a run whose records span several write times (a compacted run).
 *
 * Within a run, record sizes are taken as uniform (bytes / count) when a slice takes
 * part of it; write times as spread evenly between t_first and t_last.
 *
 * Memory stays bounded by what the stream retains, not by the number of requests:
 * readers attach their cursors, and runs that every attached reader has passed are
 * merged, within cells of `compact_span` of write time (whole minutes by default), into
 * one run a cell. Exact counts and bytes are kept, and as no merged run crosses a whole
 * minute, retention trims to a whole minute (the hourly meters, the end of a run of
 * whole minutes) expire exactly what they would without merging. A reader that later
 * goes back over compacted records sees their write times spread evenly over each merged
 * span, so a position a reader may come back to (a checkpoint), or where a reader yet to
 * start will begin, is attached as a floor, after which runs stay as written
 * (kds_log_attach_floor; kds_waits in kds_consumer.h), up to `floor_runs` of them. A run
 * holding marked records is never merged into the one before it, so that its marks, a
 * run's first records, keep their positions (marks are rare: at most one more run each).
 */
#ifndef KDS_LOG_H
#define KDS_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"
#include "sim_err.h"

/* floor(v * num / den) without overflow (v, num < 2^64; den > 0): shares of a run's
 * bytes, duplicates and times when part of it is taken. */
static inline uint64_t kds_prorate(uint64_t v, uint64_t num, uint64_t den)
{
    __extension__ typedef unsigned __int128 u128;
    if ((v | num) >> 32 == 0) /* the common case: a 64-bit product, no 128-bit division */
        return v * num / den;
    return (uint64_t)(((u128)v * num) / den);
}

/* Records of the log: a run as stored, or a piece of one returned by a take. One type
 * for both, so that whole runs can be handed to readers in place (kds_log_take_v). */
typedef struct kds_slice {
    uint64_t first;   /* position of its first record */
    uint32_t count;   /* records, >= 1 */
    uint32_t dups;    /* of which duplicates of earlier-written records (producer
                         retries; prorated from the run when a piece, rounded) */
    uint32_t marks;   /* of which marked by the producer (poison records for consumers;
                         see kds_log_take) */
    uint32_t src;     /* index of the producer that wrote it */
    uint64_t bytes;   /* total size of its records (data + partition key), B (prorated
                         when a piece) */
    sim_time t_first; /* write time of its first record, ns */
    sim_time t_last;  /* write time of its last record (t_first for one request), ns */
} kds_slice;

/* A run of the log: one PutRecords sub-batch, or runs merged by compaction. */
typedef kds_slice kds_run;

struct kds_cursor;

typedef struct kds_log {
    kds_run *runs;     /* owned ring buffer of cap runs */
    size_t cap;        /* a power of two, or 0 */
    size_t head;       /* ring index of the oldest run */
    size_t n;          /* runs retained */
    uint64_t popped;   /* runs removed from the head since init (absolute index base) */
    uint64_t head_pos; /* position of the oldest retained record */
    uint64_t end_pos;  /* position the next record will take */
    uint64_t bytes;    /* bytes retained */
    uint64_t bytes_trimmed; /* bytes retention has removed, ever */
    sim_time head_t;   /* write time of the oldest retained record, or INT64_MAX when
                          none: what retention trimming compares with, in one load */
    sim_time compact_span;     /* width of the write-time cells runs merge in (0 = never) */
    size_t compact_at;         /* compact when n reaches this */
    uint64_t settled;          /* absolute index of the first run a compaction may still
                                  change: the runs before it are final (see
                                  kds_log_compact) */
    struct kds_cursor **readers; /* owned array of borrowed cursors */
    size_t n_readers, cap_readers;
    struct kds_cursor **floors;  /* owned array of borrowed cursors: replay points */
    size_t n_floors, cap_floors;
    size_t floor_runs;           /* a floor further behind is passed over (runs) */
} kds_log;

/* A reader's place in one log. `pos` may fall below the log's head after trimming: the
 * records in between expired unread. `hint` is the absolute index of the run that holds
 * pos; it is checked before use and recomputed by binary search when stale. */
typedef struct kds_cursor {
    uint64_t pos;  /* next record to read */
    uint64_t hint; /* absolute run index (popped + ring offset) */
} kds_cursor;



/* What one take did. */
typedef struct kds_take {
    uint64_t records;  /* records returned */
    uint64_t bytes;    /* bytes returned */
    uint64_t expired;  /* records skipped because they had been trimmed */
    sim_time t_last;   /* write time of the last record returned (-1 if none) */
} kds_take;

/* Called once per slice, in log order. `ctx` is the caller's. */
typedef void (*kds_slice_fn)(void *ctx, const kds_slice *sl);

/* An empty log whose first record will have position 0, merging passed runs within cells
 * of `compact_span` ns of write time (0 disables compaction). Never fails (allocates on
 * first append). */
void kds_log_init(kds_log *l, sim_time compact_span);

/* Attach a reader's cursor: runs it has not passed are never compacted. The cursor is
 * borrowed until kds_log_detach() or kds_log_fini(). Returns 0 or SIM_ENOMEM. */
int kds_log_attach(kds_log *l, struct kds_cursor *c);
void kds_log_detach(kds_log *l, struct kds_cursor *c);

/* Runs after a floor that compaction keeps as they are written, at most (the default of
 * kds_log.floor_runs; a stream of many shards sets less, KDS_LOG_FLOOR_BUDGET in all). */
#define KDS_LOG_FLOOR_RUNS 32768
#define KDS_LOG_FLOOR_MIN 256
#define KDS_LOG_FLOOR_BUDGET ((size_t)1 << 22)

/* Attach a floor: a position a reader may come back to (a KCL lease's checkpoint, which
 * the lease's next owner reads from). Compaction merges nothing after a floor that is at
 * most l->floor_runs runs behind where it would otherwise stop, so that a replay
 * from it sees each request's records with their own write times; a floor further
 * behind (a checkpoint no worker moves on) is passed over, which bounds what it keeps.
 * Only c->pos is read; the cursor is borrowed until kds_log_detach_floor() or
 * kds_log_fini(). Returns 0 or SIM_ENOMEM. */
int kds_log_attach_floor(kds_log *l, struct kds_cursor *c);
void kds_log_detach_floor(kds_log *l, struct kds_cursor *c);

/* Merge runs that every attached reader has passed (called by append when the log has
 * grown enough since the last compaction; public for tests). O(runs from the settled
 * one on): about the runs appended since the last compaction. */
void kds_log_compact(kds_log *l);
void kds_log_fini(kds_log *l); /* NULL-safe */

/* Compact or grow the log before an append that finds it full or due for compaction.
 * Returns 0 or SIM_ENOMEM. Internal to kds_log_append. */
int kds__log_make_room(kds_log *l);

/* Append a run of `count` (>= 1) records written at `t` (>= the last run's t_last), of
 * which `dups` (<= count) duplicates and `marks` (<= count) marked. Returns 0 or
 * SIM_ENOMEM. Amortised O(1). Inline: every put appends, and nearly always there is
 * room; kds__log_make_room() does the rest. */
static inline int kds_log_append(kds_log *l, sim_time t, uint32_t count, uint64_t bytes,
                                 uint32_t dups, uint32_t marks, uint32_t src)
{
    SIM_ASSERT(count >= 1 && dups <= count && marks <= count);
    SIM_DEBUG_ASSERT(l->n == 0 || t >= l->runs[(l->head + l->n - 1) & (l->cap - 1)].t_last);
    if (l->n >= l->compact_at || l->n == l->cap) {
        int rc = kds__log_make_room(l);
        if (rc)
            return rc;
    }
    l->runs[(l->head + l->n) & (l->cap - 1)] = (kds_run){.first = l->end_pos,
                                                        .t_first = t,
                                                        .t_last = t,
                                                        .bytes = bytes,
                                                        .count = count,
                                                        .dups = dups,
                                                        .marks = marks,
                                                        .src = src};
    if (l->n == 0) {
        l->head_pos = l->end_pos;
        l->head_t = t;
    }
    l->n++;
    l->end_pos += count;
    l->bytes += bytes;
    return 0;
}

/* Remove every record written at or before `cutoff` (now - retention). Returns the
 * number of records removed. The ring gives back space it no longer needs (all of it
 * when no run is left), so that a log's memory follows what it retains. */
uint64_t kds_log_trim(kds_log *l, sim_time cutoff);

/* Position cursors: at the oldest retained record (TRIM_HORIZON), after the newest
 * (LATEST), at the first record written at or after t (AT_TIMESTAMP), or at position
 * `pos` clamped into [head, end] (AT_SEQUENCE_NUMBER; AFTER is pos + 1). */
void kds_log_seek_head(const kds_log *l, kds_cursor *c);
void kds_log_seek_time(const kds_log *l, kds_cursor *c, sim_time t);
void kds_log_seek_pos(const kds_log *l, kds_cursor *c, uint64_t pos);

/* Inline: an enhanced fan-out subscription at the tip seeks to the end on every append. */
static inline void kds_log_seek_end(const kds_log *l, kds_cursor *c)
{
    c->pos = l->end_pos;
    c->hint = l->popped + l->n;
}

/* Take up to max_records records and max_bytes bytes from the cursor on, calling
 * `fn` per slice (fn may be NULL), and advance the cursor. A cursor below the head
 * first moves to the head, counting the skipped records in out->expired. At least one
 * record is returned when any is available, even if it alone exceeds max_bytes (as
 * GetRecords returns a record larger than what is left of its limit). When a slice
 * takes part of a run, its marked records are assumed to come first in the run (a
 * poison record is handed out at the earliest position the run allows). */
void kds_log_take(kds_log *l, kds_cursor *c, uint64_t max_records, uint64_t max_bytes,
                  kds_slice_fn fn, void *ctx, kds_take *out);

/* Called with n >= 1 consecutive slices in log order; the array is the log's own (whole
 * runs) or the take's, valid only during the call. */
typedef void (*kds_slices_fn)(void *ctx, const kds_slice *v, size_t n);

/* kds_log_take, handing the slices over in arrays: whole runs in place, without a copy
 * or a call each (readers that keep what they take copy it in one go). Same limits,
 * cursor movement and result. */
void kds_log_take_v(kds_log *l, kds_cursor *c, uint64_t max_records, uint64_t max_bytes,
                    kds_slices_fn fn, void *ctx, kds_take *out);

/* Records between the cursor and the end (unread), counting only retained ones. */
uint64_t kds_log_unread(const kds_log *l, const kds_cursor *c);

/* Write time of the record at `pos` (head <= pos < end), or -1 outside. */
sim_time kds_log_time_at(const kds_log *l, uint64_t pos);

/* Where kds_log_bytes_written_before() stopped last, so that the next call with a later
 * `t` starts there: the hourly retention meter asks every hour for the bytes older than
 * 24 h and 7 d, and a reader that stops (a Lambda mapping held by a poison record) keeps
 * days of runs unmerged, which a scan from the head every hour made quadratic. */
typedef struct kds_log_mark {
    uint64_t pos;   /* a run boundary: every record before it was written by `t` */
    uint64_t bytes; /* bytes of the records before pos, trimmed ones included */
    sim_time t;     /* the latest `t` asked for */
    int valid;      /* 0 until the first call */
} kds_log_mark;

/* Bytes retained that were written at or before `t` (prorated within a run): for the
 * retention billing bands. With a mark (zeroed before its first use, then kept for this
 * log only), a call whose `t` is not before the mark's resumes from it, and the calls
 * cost O(log runs + runs written in between); the answer is the same as without a mark.
 * NULL: a scan from the head. */
uint64_t kds_log_bytes_written_before(const kds_log *l, sim_time t, kds_log_mark *m);

/* Bytes of the records at positions [from, to) (retained: head <= from <= to <= end)
 * written at or before `t`, each run's bytes cut as a take cuts them: for what a take
 * returned, at most its bytes, and all of them when every record was written by t. For
 * the long-term retrieval meter. O(log runs + runs in the range). */
uint64_t kds_log_bytes_range_before(const kds_log *l, uint64_t from, uint64_t to, sim_time t);

/* Number of runs retained (memory accounting). */
size_t kds_log_runs(const kds_log *l);

/* The newest run, or NULL when the log retains none. The pointer is valid until the
 * next append, trim or compaction. For readers that follow the tip of the log (an
 * enhanced fan-out push on append) and want the run just written without a take. */
static inline const kds_run *kds_log_last(const kds_log *l)
{
    return l->n ? &l->runs[(l->head + l->n - 1) & (l->cap - 1)] : NULL;
}

#endif
