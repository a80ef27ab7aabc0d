/* kds_consumer.h - what every consumer model shares: a common header for reports and
 * the common statistics (latency, iterator age, duplicates, losses).
 *
 * Every consumer kind (polling, enhanced fan-out, Lambda, Firehose, Flink, KCL) embeds
 * a kds_consumer as its first member, so that the run and the report writers can treat
 * them alike through its function pointers. Records are counted per stored copy: a
 * record the producer wrote twice is two stored records; delivering the second copy
 * counts as a duplicate. For each consumer, once the run ends:
 *   stored since its start position = delivered + unread + expired unread,
 * which issue 9's invariant check verifies.
 */
#ifndef KDS_CONSUMER_H
#define KDS_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "kds_log.h"
#include "sim.h"
#include "sim_dist.h"
#include "sim_stats.h"

typedef struct kds_consumer_stats {
    uint64_t records_delivered;      /* stored records handed to the application (first
                                        delivery of each) */
    uint64_t bytes_delivered;        /* their bytes */
    uint64_t duplicates_delivered;   /* deliveries of producer duplicates, plus repeat
                                        deliveries of one stored record (replays) */
    uint64_t records_expired_unread; /* trimmed at the retention period before delivery */
    uint64_t records_unread;         /* at the end: retained, not yet delivered */
    uint64_t records_skipped_at_start; /* stored before the start position (LATEST,
                                          AT_TIMESTAMP): not this consumer's to read */
    uint64_t getrecords_calls;       /* GetRecords calls made (throttled included) */
    uint64_t read_throttled_calls;   /* GetRecords calls refused */
    uint64_t empty_calls;            /* admitted calls that returned no record */
    uint64_t iterator_refreshes;     /* GetShardIterator calls after an iterator expired */
    uint64_t bytes_read_shared;      /* bytes read through shared throughput */
    uint64_t bytes_read_efo;         /* bytes pushed through enhanced fan-out */
    uint64_t bytes_read_over_7d;     /* bytes read of data older than 7 days (billed as
                                        long-term retention retrieval) */
    double efo_consumer_shard_hours; /* billing meter: hours x shards while registered
                                        as an enhanced fan-out consumer */
    sim_time efo_registered;         /* registered as an enhanced fan-out consumer from
                                        then to the end of the run, ns; -1 when not an
                                        EFO consumer (set by finish) */
    uint64_t children_started;       /* child shards started after their parents ended */
    double child_wait_ms_max;        /* longest a child shard waited for its parents */
    double child_wait_ms_sum;        /* sum of those waits (mean = sum / started) */
    double iterator_age_ms_max;      /* GetRecords.IteratorAgeMilliseconds, maximum */
    sim_hist latency_ms;             /* write time to processing time, per record */
    sim_series iterator_age_min;     /* ms, maximum per minute */
    sim_series delivered_min;        /* records delivered per minute (first deliveries) */
} kds_consumer_stats;

/* Initialise the histogram and series. Returns 0 or SIM_ENOMEM. */
int kds_consumer_stats_init(kds_consumer_stats *cs);
void kds_consumer_stats_fini(kds_consumer_stats *cs); /* NULL-safe */

/* The latency of a slice processed at `done`, ms: its records were written evenly over
 * [t_first, t_last], so their mean latency is done minus the midpoint. */
static inline double kds_consumer_latency_ms(const kds_slice *sl, sim_time done)
{
    return sim_to_ms(done - (sl->t_first + (sl->t_last - sl->t_first) / 2));
}

/* Only the latencies of slices v[0..n) processed at `done`: one histogram entry per
 * slice, of its mean latency weighted by its count (exact for one PutRecords,
 * t_first == t_last). Inline: it runs for every slice every consumer finishes, and a
 * batch's slices go into the histogram in one run of adds. */
static inline void kds_consumer_stats_latencies(kds_consumer_stats *cs, const kds_slice *v,
                                                size_t n, sim_time done)
{
    sim_hist_adds a = sim_hist_adds_begin(&cs->latency_ms);
    for (size_t i = 0; i < n; i++)
        sim_hist_adds_add(&a, kds_consumer_latency_ms(&v[i], done), (double)v[i].count);
    sim_hist_adds_end(&a);
}

/* Record the delivery of a slice at time `done` (the application finished it):
 * latency per record, delivered and duplicate counts, and a first delivery's records
 * in delivered_min. `replay` counts the whole slice as duplicates (records delivered
 * before), in neither records_delivered nor delivered_min.
 * Inline: the Flink and KCL models call it for every slice they process, most often
 * with a constant `replay`. */
static inline void kds_consumer_stats_deliver(kds_consumer_stats *cs, const kds_slice *sl,
                                              sim_time done, int replay)
{
    sim_hist_add(&cs->latency_ms, kds_consumer_latency_ms(sl, done), (double)sl->count);
    if (replay) {
        cs->duplicates_delivered += sl->count;
    } else {
        cs->records_delivered += sl->count;
        cs->bytes_delivered += sl->bytes;
        cs->duplicates_delivered += sl->dups;
        /* First deliveries only, as records_delivered and every other reader's series
         * (Lambda's, deliver_all): the minutes add up to records_delivered. */
        sim_series_add_sum(&cs->delivered_min, done, (double)sl->count);
    }
}

/* The same for `n` first deliveries (not replays) that finished together at `done`,
 * slices v[0..n) in order: what n calls of kds_consumer_stats_deliver(.., 0) record,
 * with the counts summed once (an S3 object, a GetRecords batch). */
void kds_consumer_stats_deliver_all(kds_consumer_stats *cs, const kds_slice *v, size_t n,
                                    sim_time done);

/* Whether every parent of `child` has been read to its end by this consumer:
 * parent_done(arg, index) answers for one parent shard. A parent this consumer never
 * read (expired, or older than the consumer) counts as done. */
struct kds_stream;
struct kds_shard;
bool kds_parents_done(const struct kds_stream *st, const struct kds_shard *child,
                      bool (*parent_done)(void *arg, uint32_t shard), void *arg);

/* End-of-run accounting of one reader of one shard: records below the log's head that
 * the cursor never reached expired unread (and the cursor moves to the head); what lies
 * between the cursor and the end is unread; what lay before `start_pos` was skipped at
 * the start. */
void kds_consumer_settle(kds_consumer_stats *cs, const kds_log *l, kds_cursor *cur,
                         uint64_t start_pos);

/* The records of a consumer that never began (its start lies after the end of the run):
 * for each shard of `st` (borrowed), what retention trimmed counts as expired unread and
 * the rest as unread, as for a reader whose cursor stayed at the start of every shard
 * (what the polling, Lambda and KCL readers, which exist from the run's start, report).
 * Adds to cs's unread and expired counts; for finish functions. */
void kds_consumer_not_begun(kds_consumer_stats *cs, const struct kds_stream *st);

/* Record that the consumer was registered for enhanced fan-out from `from` to `end`
 * (the end of the run): cs->efo_registered and its consumer-shard-hours on every shard
 * of `st` (kds_stream_consumer_shard_hours). For finish functions. */
void kds_consumer_efo_registered(kds_consumer_stats *cs, const struct kds_stream *st,
                                 sim_time from, sim_time end);

/* The KCL's parentShardPollIntervalMillis: how often a blocked child checks (10 s). */
#define KDS_PARENT_POLL SIM_S(10)

/* Record an iterator age observation (ms) at time t. Inline: every poll and every
 * enhanced fan-out push makes one. */
static inline void kds_consumer_stats_age(kds_consumer_stats *cs, sim_time t, double age_ms)
{
    if (age_ms > cs->iterator_age_ms_max)
        cs->iterator_age_ms_max = age_ms;
    sim_series_add_max(&cs->iterator_age_min, t, age_ms);
}

/* The same for an age of 0, a reader caught up: nothing to do once the minute's bucket
 * exists (it holds an age already, and no age is below 0), which is the case for all
 * but its first observation. Inline: every enhanced fan-out push at the tip makes one. */
static inline void kds_consumer_stats_age_zero(kds_consumer_stats *cs, sim_time t)
{
    if (!sim_series_in_bucket(&cs->iterator_age_min, t))
        kds_consumer_stats_age(cs, t, 0.0);
}

typedef struct kds_consumer kds_consumer;

/* Reports a kind-specific figure: key (snake_case) and value. */
typedef void (*kds_figure_fn)(void *arg, const char *key, double value);

/* Reports a setting the run assumed (a number AWS does not publish): the key under
 * the consumer ("call_latency"), its value as text, and why it is an assumption. */
typedef void (*kds_assume_fn)(void *arg, const char *key, const char *value, const char *why);

typedef struct kds_consumer_ops {
    const char *kind;                                 /* "polling", "efo", "lambda", ... */
    void (*finish)(kds_consumer *c, sim_time end);    /* settle end-of-run figures */
    void (*figures)(const kds_consumer *c, kds_figure_fn fn, void *arg); /* may be NULL */
    void (*assumptions)(const kds_consumer *c, kds_assume_fn fn, void *arg); /* may be NULL */
    /* The model's own invariants (kds_invariant.h), checked by kds_world_check(): 0, or
     * SIM_ESTATE with the invariant named in msg (n bytes). May be NULL. */
    int (*check)(const kds_consumer *c, char *msg, size_t n);
    void (*free)(kds_consumer *c);                    /* NULL-safe on the model side */
} kds_consumer_ops;

/* "lognormal, median 25 ms, sigma 0.4" and the like, for assumption values, in buf (n
 * bytes, always NUL-terminated; returns buf), with the clamps that bound the draws:
 * ", within [1 ms, 10 s]", ", at least 1 ms" or ", at most 900 s" (in `unit`, and
 * milliseconds from a second up as seconds). A clamp at the edge of the law's own range
 * (0 under a lognormal, a uniform's ends) bounds nothing and is not shown. */
const char *kds_dist_text(char *buf, size_t n, const sim_dist *d, const char *unit);

struct kds_consumer {
    const kds_consumer_ops *ops;
    const char *name;        /* borrowed from the config */
    kds_consumer_stats st;
};

/* Consumer c starts reading shard `child` of stream `st` (both borrowed) after waiting
 * `wait` ns for its parents to be read to their end: counted in c's statistics
 * (children_started, the child waits) and traced (kind "reshard", on the child). */
void kds_consumer_child_started(kds_consumer *c, const struct kds_stream *st,
                                const struct kds_shard *child, sim_time wait);

/* The same for `child` starting at `now`, for a consumer that reads from `begin` on: the
 * wait runs from the child's creation, or from `begin` when the child is older than the
 * consumer (it was not kept waiting before anything read). */
void kds_consumer_child_started_since(kds_consumer *c, const struct kds_stream *st,
                                      const struct kds_shard *child, sim_time begin,
                                      sim_time now);

/* The shards a consumer has yet to start reading, each held at its head by a floor of
 * its log (kds_log_attach_floor), so that compaction merges none of their records before
 * the consumer reads them: what it then reads is as written, not spread over merged
 * one-minute spans, whether it starts late (`start:`, a Lambda mapping's creation) or
 * waits for a child shard's parents. Zeroed is empty. The floor is passed over once it is
 * further behind than the log's floor_runs, which bounds the memory it keeps. */
typedef struct kds_waits {
    kds_cursor **at; /* owned: the floor of shard i (by index), or NULL when none is held */
    size_t n;
} kds_waits;

/* Whether a consumer that begins at `begin` (ns) may read before the end of the run on
 * stream `st` (borrowed): one that begins after it holds nothing, so that it changes no
 * other report. True when the run's length is not known. */
bool kds_waits_wanted(const struct kds_stream *st, sim_time begin);

/* Hold shard `sh` (borrowed) at its head until kds_waits_release; nothing when already
 * held or expired. Aborts on allocation failure, as a failed attach does elsewhere. */
void kds_waits_hold(kds_waits *w, struct kds_shard *sh);

/* Hold every shard of `st` (borrowed) for a consumer that begins at `begin` (ns), when it
 * begins later, before the end of the run, and `reads_back` (its start position is not
 * LATEST, which reads nothing written before it); nothing otherwise. */
void kds_waits_hold_until(kds_waits *w, struct kds_stream *st, sim_time begin, bool reads_back);

/* Stop holding `sh`: the consumer now reads it (its own cursor holds what it needs), or
 * never will. Nothing when it is not held. */
void kds_waits_release(kds_waits *w, struct kds_shard *sh);

/* Release every shard of `st` held and free the table (for a consumer's free function,
 * which runs before the stream's; NULL-safe on w's contents). */
void kds_waits_fini(kds_waits *w, struct kds_stream *st);

/* What every consumer model's constructor does first, on its zeroed (calloc'd) model:
 * set the header (`ops`, `name`, borrowed), store in *rng the consumer's random stream
 * "consumer/NAME" (by name, so that adding or reordering consumers leaves the others'
 * draws alone), initialise the statistics and register on_new_shard(ctx, shard) with
 * the stream for the shards resharding creates. Returns 0 or SIM_ENOMEM; either way the
 * model's free function may then run on it. */
int kds_consumer_init(kds_consumer *c, const kds_consumer_ops *ops, const char *name, sim *s,
                      struct kds_stream *st, void (*on_new_shard)(void *ctx, struct kds_shard *sh),
                      void *ctx, gsl_rng **rng);

#endif
