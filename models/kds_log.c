/* kds_log.c - the run-based shard log of kds_log.h: a ring buffer of runs with
 * absolute indices, prorated slicing and time-based trimming. */
#include "kds_log.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim_err.h"

static inline kds_run *at(const kds_log *l, size_t i)
{
    return &l->runs[(l->head + i) & (l->cap - 1)];
}

/* Write time of the i-th record of run r (records spread evenly over [t_first, t_last]). */
static inline sim_time run_time(const kds_run *r, uint64_t i)
{
    if (r->count <= 1 || r->t_last == r->t_first)
        return r->t_first;
    return r->t_first + (sim_time)kds_prorate((uint64_t)(r->t_last - r->t_first), i, r->count - 1);
}

/* Records of run r written at or before t (0..count): its records spread evenly over
 * [t_first, t_last]. */
static uint64_t run_count_before(const kds_run *r, sim_time t)
{
    if (r->t_first > t)
        return 0;
    if (r->t_last <= t)
        return r->count;
    uint64_t m = kds_prorate((uint64_t)(t - r->t_first), r->count - 1,
                             (uint64_t)(r->t_last - r->t_first)) + 1;
    /* The prorated index can fall one short when t is exactly a record's spread-out
     * write time: count that record too. */
    while (m < r->count && run_time(r, m) <= t)
        m++;
    return m;
}

/* Compaction runs when the log has grown past what the last compaction left by a third
 * of that, and by COMPACT_SLACK runs at least, so that its pass over the runs from the
 * settled one on (the new runs and those readers had yet to pass) is amortised over as
 * many appends; and when the ring has more room than that, not before the ring is full.
 * The ring (a power of two) then grows only past 4/3 of what compaction keeps: it holds
 * at most 8/3 of the retained runs, where waiting for twice the runs kept would let it
 * reach 4 times. */
#define COMPACT_SLACK 256

void kds_log_init(kds_log *l, sim_time compact_span)
{
    memset(l, 0, sizeof *l);
    l->compact_span = compact_span;
    l->compact_at = COMPACT_SLACK;
    l->head_t = INT64_MAX;
    l->floor_runs = KDS_LOG_FLOOR_RUNS;
}

void kds_log_fini(kds_log *l)
{
    if (!l)
        return;
    free(l->runs);
    free(l->readers);
    free(l->floors);
    memset(l, 0, sizeof *l);
}

static int cursors_add(kds_cursor ***v, size_t *n, size_t *cap, kds_cursor *c)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        kds_cursor **nv = realloc(*v, ncap * sizeof *nv);
        if (!nv)
            return SIM_ENOMEM;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = c;
    return 0;
}

static void cursors_remove(kds_cursor **v, size_t *n, const kds_cursor *c)
{
    for (size_t i = 0; i < *n; i++)
        if (v[i] == c) {
            v[i] = v[--*n];
            return;
        }
}

int kds_log_attach(kds_log *l, kds_cursor *c)
{
    return cursors_add(&l->readers, &l->n_readers, &l->cap_readers, c);
}

void kds_log_detach(kds_log *l, kds_cursor *c)
{
    cursors_remove(l->readers, &l->n_readers, c);
}

int kds_log_attach_floor(kds_log *l, kds_cursor *c)
{
    return cursors_add(&l->floors, &l->n_floors, &l->cap_floors, c);
}

void kds_log_detach_floor(kds_log *l, kds_cursor *c)
{
    cursors_remove(l->floors, &l->n_floors, c);
}

/* Offset (0..n) of the run holding pos, or n when pos == end_pos. */
static size_t find(const kds_log *l, uint64_t pos)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const kds_run *r = at(l, mid);
        if (pos < r->first)
            hi = mid;
        else if (pos >= r->first + r->count)
            lo = mid + 1;
        else
            return mid;
    }
    return lo;
}

/* The end of the cell of write time holding t (t >= 0). Compaction merges runs within a
 * cell, never across cells: the cells are (k span, (k + 1) span], closed on the right as
 * retention trimming is (a record written at the cutoff goes), so a trim to a cutoff on a
 * whole number of spans (a whole minute) takes whole merged runs and expires exactly the
 * records it would have without compaction. The first cell is [0, span]: a run starts
 * with no record at 0 (a put's records are stored a round trip after its send). */
static inline sim_time cell_end(sim_time t, sim_time span)
{
    sim_time q = t / span;
    return (q * span < t || q == 0 ? q + 1 : q) * span;
}

void kds_log_compact(kds_log *l)
{
    uint64_t min_pos = l->end_pos;
    for (size_t i = 0; i < l->n_readers; i++)
        if (l->readers[i]->pos < min_pos)
            min_pos = l->readers[i]->pos;
    if (l->n == 0 || l->compact_span <= 0)
        goto done;
    /* Runs end in position order, so the runs every reader has passed are those before
     * the one holding the slowest reader's position: merging stops there and the rest
     * only moves down. The runs before the settled one each refused their successor for
     * its span or its count, which can only grow, or for its marks, which stay: they
     * never merge again, so start at the settled run, not the head. (A partial trim
     * moves the head run's first write time and drops its marks: kds_log_trim then
     * unsettles every run.) */
    size_t w = l->settled > l->popped ? (size_t)(l->settled - l->popped) : 0;
    size_t passed = find(l, min_pos), r = w + 1;
    /* A floor close enough behind stops the merging at its run (which stays whole: it
     * may hold records before the floor). */
    for (size_t i = 0; i < l->n_floors; i++) {
        size_t f = find(l, l->floors[i]->pos);
        if (f < passed && passed - f <= l->floor_runs)
            passed = f;
    }
    /* The run merged into (dst) is kept in locals while runs merge into it, and the
     * ring is walked by pointer, a stretch without a wrap at a time: this loop sees
     * every run appended once. */
    kds_run *dst = at(l, w), *lim = l->runs + l->cap;
    uint64_t count = dst->count, bytes = dst->bytes;
    uint32_t dups = dst->dups;
    sim_time t_last = dst->t_last, span = l->compact_span, end_t = cell_end(dst->t_first, span);
    while (r < passed) {
        const kds_run *src = at(l, r);
        size_t k = passed - r, room = (size_t)(lim - src);
        if (k > room)
            k = room;
        const kds_run *end = src + k;
        r += k;
        for (; src < end; src++) {
            /* A run's marked records are its first ones (kds_log_take): a run holding
             * marks is never merged into the one before it, where they would move to
             * the merged run's start, so each keeps its position. Marks are rare: the
             * log keeps at most one more run per marked run. */
            if (src->marks == 0 && src->t_last <= end_t &&
                count + src->count <= UINT32_MAX) {
                count += src->count;
                bytes += src->bytes;
                dups += src->dups;
                t_last = src->t_last;
                continue;
            }
            dst->count = (uint32_t)count;
            dst->bytes = bytes;
            dst->dups = dups;
            dst->t_last = t_last;
            if (++dst == lim)
                dst = l->runs;
            w++;
            if (dst != src)
                *dst = *src;
            count = dst->count;
            bytes = dst->bytes;
            dups = dst->dups;
            end_t = cell_end(dst->t_first, span);
            t_last = dst->t_last;
        }
    }
    dst->count = (uint32_t)count;
    dst->bytes = bytes;
    dst->dups = dups;
    dst->t_last = t_last;
    /* The last merged run may still take later runs that readers have yet to pass. */
    l->settled = l->popped + w;
    for (; r < l->n; r++)
        if (++w != r)
            *at(l, w) = *at(l, r);
    l->n = w + 1;
done:
    l->compact_at = l->n + (l->n / 3 > COMPACT_SLACK ? l->n / 3 : COMPACT_SLACK);
    if (l->compact_at < l->cap)
        l->compact_at = l->cap;
}

static int grow(kds_log *l)
{
    size_t ncap = l->cap ? l->cap * 2 : 64;
    kds_run *nr = realloc(l->runs, ncap * sizeof *nr);
    if (!nr)
        return SIM_ENOMEM;
    /* The ring's wrapped part [0, head + n - cap) moves to just after the old end. */
    if (l->head + l->n > l->cap)
        memcpy(nr + l->cap, nr, (l->head + l->n - l->cap) * sizeof *nr);
    l->runs = nr;
    l->cap = ncap;
    return 0;
}

int kds__log_make_room(kds_log *l)
{
    if (l->n >= l->compact_at)
        kds_log_compact(l);
    return l->n == l->cap ? grow(l) : 0;
}

/* Give back ring space that retention has emptied: the ring moves to the smallest
 * power of two (64 at least) that holds its runs, or is freed when none is left, once
 * three quarters of it are free (so that a ring that refills soon does not go back and
 * forth). Memory then follows what the log retains, not what it once held: a shard
 * that expired holds none. Cursors keep absolute run indexes, which do not move. */
static void shrink(kds_log *l)
{
    if (l->n == 0) {
        free(l->runs);
        l->runs = NULL;
        l->cap = 0;
        l->head = 0;
        return;
    }
    size_t want = 64;
    while (want < l->n)
        want *= 2;
    if (want >= l->cap)
        return;
    kds_run *nr = malloc(want * sizeof *nr);
    if (!nr)
        return; /* keep the larger ring: it still works */
    for (size_t i = 0; i < l->n; i++)
        nr[i] = *at(l, i);
    free(l->runs);
    l->runs = nr;
    l->cap = want;
    l->head = 0;
}

uint64_t kds_log_trim(kds_log *l, sim_time cutoff)
{
    uint64_t removed = 0;
    while (l->n > 0) {
        kds_run *r = at(l, 0);
        if (r->t_first > cutoff)
            break;
        if (r->t_last <= cutoff) {
            removed += r->count;
            l->bytes -= r->bytes;
            l->bytes_trimmed += r->bytes;
            l->head = (l->head + 1) & (l->cap - 1);
            l->n--;
            l->popped++;
            continue;
        }
        /* A run spanning the cutoff: drop the records written at or before it. */
        uint64_t m = run_count_before(r, cutoff);
        SIM_ASSERT(m >= 1 && m < r->count);
        uint64_t b = kds_prorate(r->bytes, m, r->count);
        uint64_t d = kds_prorate(r->dups, m, r->count);
        sim_time nt0 = run_time(r, m);
        r->marks = r->marks > m ? r->marks - (uint32_t)m : 0;
        r->dups -= (uint32_t)d;
        r->bytes -= b;
        r->first += m;
        r->count -= (uint32_t)m;
        r->t_first = nt0;
        l->bytes -= b;
        l->bytes_trimmed += b;
        l->settled = l->popped; /* the head run may now merge with the next one */
        removed += m;
        break;
    }
    l->head_pos = l->n > 0 ? at(l, 0)->first : l->end_pos;
    l->head_t = l->n > 0 ? at(l, 0)->t_first : INT64_MAX;
    if (l->cap > 0 && l->n < l->cap / 4)
        shrink(l);
    return removed;
}

/* The ring offset of the run holding c->pos (head <= pos <= end), using the hint. */
static size_t locate(const kds_log *l, kds_cursor *c)
{
    if (c->hint >= l->popped && c->hint - l->popped <= l->n) {
        size_t off = (size_t)(c->hint - l->popped);
        if (off == l->n ? c->pos == l->end_pos
                        : (c->pos >= at(l, off)->first &&
                           c->pos < at(l, off)->first + at(l, off)->count))
            return off;
    }
    size_t off = find(l, c->pos);
    c->hint = l->popped + off;
    return off;
}

void kds_log_seek_head(const kds_log *l, kds_cursor *c)
{
    c->pos = l->head_pos;
    c->hint = l->popped;
}

void kds_log_seek_time(const kds_log *l, kds_cursor *c, sim_time t)
{
    /* Runs are in write-time order: find the first run with t_last >= t, then the first
     * record in it written at or after t. */
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (at(l, mid)->t_last < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == l->n) {
        kds_log_seek_end(l, c);
        return;
    }
    const kds_run *r = at(l, lo);
    uint64_t i = 0;
    if (t > r->t_first && r->count > 1) {
        /* Smallest i with run_time(r, i) >= t. */
        i = kds_prorate((uint64_t)(t - r->t_first), r->count - 1,
                        (uint64_t)(r->t_last - r->t_first));
        while (i < r->count && run_time(r, i) < t)
            i++;
    }
    c->pos = r->first + i;
    c->hint = l->popped + lo;
}

void kds_log_seek_pos(const kds_log *l, kds_cursor *c, uint64_t pos)
{
    if (pos < l->head_pos)
        pos = l->head_pos;
    if (pos > l->end_pos)
        pos = l->end_pos;
    c->pos = pos;
    c->hint = l->popped + find(l, pos);
}

/* The take of kds_log_take and kds_log_take_v: slices go to fn one by one, or, when fv
 * is given, to fv in arrays (whole runs in place, a cut run on its own). */
static void take(kds_log *l, kds_cursor *c, uint64_t max_records, uint64_t max_bytes,
                 kds_slice_fn fn, kds_slices_fn fv, void *ctx, kds_take *out)
{
    memset(out, 0, sizeof *out);
    out->t_last = -1;
    if (c->pos < l->head_pos) {
        out->expired = l->head_pos - c->pos;
        c->pos = l->head_pos;
        c->hint = l->popped;
    }
    if (c->pos >= l->end_pos || max_records == 0)
        return;
    size_t off = locate(l, c);
    while (off < l->n && out->records < max_records) {
        const kds_run *r = at(l, off);
        uint64_t o = c->pos - r->first;
        if (o == 0 && r->count <= max_records - out->records &&
            r->bytes <= max_bytes - out->bytes) {
            /* Whole runs within both limits (the common case): nothing to prorate or
             * fit, and a run is its own slice. Gather the ones that follow in the ring
             * without wrapping. out->bytes < max_bytes holds at the loop head, or the
             * loop would have ended. */
            size_t ring = (l->head + off) & (l->cap - 1);
            size_t room = l->cap - ring;
            if (room > l->n - off)
                room = l->n - off;
            uint64_t recs = out->records, bytes = out->bytes;
            size_t k = 0;
            do {
                recs += r[k].count;
                bytes += r[k].bytes;
                k++;
            } while (k < room && bytes < max_bytes && r[k].count <= max_records - recs &&
                     r[k].bytes <= max_bytes - bytes);
            if (fv) {
                fv(ctx, r, k);
            } else if (fn) {
                for (size_t i = 0; i < k; i++)
                    fn(ctx, &r[i]);
            }
            out->records = recs;
            out->bytes = bytes;
            out->t_last = r[k - 1].t_last;
            c->pos = r[k - 1].first + r[k - 1].count;
            off += k;
            if (out->bytes >= max_bytes)
                break;
            continue;
        }
        uint64_t k = r->count - o;
        if (k > max_records - out->records)
            k = max_records - out->records;
        uint64_t b_lo = o ? kds_prorate(r->bytes, o, r->count) : 0;
        uint64_t b =
            k == r->count - o ? r->bytes - b_lo : kds_prorate(r->bytes, o + k, r->count) - b_lo;
        if (out->bytes + b > max_bytes) {
            /* Take as many whole records as fit; at least one overall. */
            uint64_t room = max_bytes > out->bytes ? max_bytes - out->bytes : 0;
            uint64_t per = r->bytes / r->count + (r->bytes % r->count != 0);
            uint64_t fit = per ? room / per : k;
            if (fit == 0 && out->records == 0)
                fit = 1;
            if (fit < k) {
                k = fit;
                b = kds_prorate(r->bytes, o + k, r->count) - b_lo;
            }
            if (k == 0)
                break;
        }
        kds_slice sl;
        if (o == 0 && k == r->count) {
            sl = *r; /* a whole run that did not fit above (a first record over max_bytes) */
        } else {
            sl = (kds_slice){
                .first = c->pos,
                .count = (uint32_t)k,
                .dups = (uint32_t)(kds_prorate(r->dups, o + k, r->count) -
                                   kds_prorate(r->dups, o, r->count)),
                .marks = (uint32_t)(r->marks > o ? (r->marks - o < k ? r->marks - o : k) : 0),
                .src = r->src,
                .bytes = b,
                .t_first = run_time(r, o),
                .t_last = run_time(r, o + k - 1),
            };
        }
        if (fv)
            fv(ctx, &sl, 1);
        else if (fn)
            fn(ctx, &sl);
        out->records += k;
        out->bytes += b;
        out->t_last = sl.t_last;
        c->pos += k;
        if (o + k == r->count)
            off++;
        if (out->bytes >= max_bytes)
            break;
    }
    c->hint = l->popped + off;
}

void kds_log_take(kds_log *l, kds_cursor *c, uint64_t max_records, uint64_t max_bytes,
                  kds_slice_fn fn, void *ctx, kds_take *out)
{
    take(l, c, max_records, max_bytes, fn, NULL, ctx, out);
}

void kds_log_take_v(kds_log *l, kds_cursor *c, uint64_t max_records, uint64_t max_bytes,
                    kds_slices_fn fn, void *ctx, kds_take *out)
{
    take(l, c, max_records, max_bytes, NULL, fn, ctx, out);
}

uint64_t kds_log_unread(const kds_log *l, const kds_cursor *c)
{
    uint64_t from = c->pos < l->head_pos ? l->head_pos : c->pos;
    return from < l->end_pos ? l->end_pos - from : 0;
}

sim_time kds_log_time_at(const kds_log *l, uint64_t pos)
{
    if (pos < l->head_pos || pos >= l->end_pos)
        return -1;
    const kds_run *r = at(l, find(l, pos));
    return run_time(r, pos - r->first);
}

uint64_t kds_log_bytes_written_before(const kds_log *l, sim_time t, kds_log_mark *m)
{
    /* Bytes before the mark's position: what was ever there less what retention took,
     * all of it from before the mark while the head has not passed it. Merging keeps
     * each run's bytes whole, so the sum holds as long as no merged run crosses the
     * mark (it is then still where a run starts). */
    size_t i = 0;
    uint64_t sum = 0;
    if (m && m->valid && t >= m->t && m->pos >= l->head_pos) {
        i = m->pos < l->end_pos ? find(l, m->pos) : l->n;
        if (i < l->n && at(l, i)->first != m->pos)
            i = 0;
        else
            sum = m->bytes - l->bytes_trimmed;
    }
    /* The runs written by t (t_last <= t) before the first that is not. */
    for (; i < l->n && at(l, i)->t_last <= t; i++)
        sum += at(l, i)->bytes;
    if (m) {
        m->pos = i < l->n ? at(l, i)->first : l->end_pos;
        m->bytes = sum + l->bytes_trimmed;
        m->t = t;
        m->valid = 1;
    }
    /* A run written across t: the records up to t. */
    if (i < l->n && at(l, i)->t_first <= t) {
        const kds_run *r = at(l, i);
        sum += kds_prorate(r->bytes, run_count_before(r, t), r->count);
    }
    return sum;
}

uint64_t kds_log_bytes_range_before(const kds_log *l, uint64_t from, uint64_t to, sim_time t)
{
    SIM_ASSERT(from >= l->head_pos && from <= to && to <= l->end_pos);
    uint64_t sum = 0;
    for (size_t off = from < to ? find(l, from) : l->n; off < l->n; off++) {
        const kds_run *r = at(l, off);
        if (r->first >= to || r->t_first > t)
            break;
        /* Records [a, b) of the run, as a take cuts its bytes: the prorated share up
         * to each end. */
        uint64_t a = from > r->first ? from - r->first : 0;
        uint64_t b = to - r->first < r->count ? to - r->first : r->count;
        uint64_t m = run_count_before(r, t);
        if (b > m)
            b = m;
        if (b > a)
            sum += (b == r->count ? r->bytes : kds_prorate(r->bytes, b, r->count)) -
                   (a ? kds_prorate(r->bytes, a, r->count) : 0);
    }
    return sum;
}

size_t kds_log_runs(const kds_log *l)
{
    return l->n;
}
