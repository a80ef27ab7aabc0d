/* check_kds_reshard.c - resharding as AWS does it (issue 5): SplitShard, MergeShards
 * and UpdateShardCount validation with AWS's error names, the shard graph after a
 * sequence of changes (ids, parents, ranges), the UPDATING period during which writes
 * still go to the parents, and on-demand scaling after a burst; and the capacity
 * manager of kds_capacity.h (model.md sections 6 and 7): a split rule splitting only
 * a shard above its threshold for its whole `for`, the on-demand hot-shard split after
 * its delay, the on-demand scale-down after a day in excess, the Region ceiling
 * capping growth, and On-demand Advantage warm throughput. */
#include <check.h>
#include <string.h>

#include "kds_capacity.h"
#include "kds_reshard.h"
#include "kds_stream.h"
#include "kds_world.h"
#include "testutil.h"

typedef struct fx {
    sim *s;
    kds_stream st;
} fx;

static void fx_init(fx *f, uint32_t shards)
{
    f->s = sim_new(1);
    kds_stream_cfg c;
    kds_stream_cfg_defaults(&c);
    c.shards = shards;
    ck_assert_int_eq(kds_stream_init(&f->st, f->s, &c), 0);
}

static void fx_fini(fx *f)
{
    sim_free(f->s);
    kds_stream_fini(&f->st);
}

/* Run the simulation past the UPDATING period. */
static void settle(fx *f)
{
    sim_run_until(f->s, sim_now(f->s) + SIM_MIN(10));
}

/* The open shards cover [0, 2^128 - 1] exactly, in order, without overlap. */
static void check_cover(const kds_stream *st)
{
    ck_assert_uint_gt(st->n_open, 0);
    ck_assert(st->shards[st->open[0]]->lo == 0);
    for (size_t i = 0; i + 1 < st->n_open; i++)
        ck_assert(st->shards[st->open[i]]->hi + 1 == st->shards[st->open[i + 1]]->lo);
    ck_assert(st->shards[st->open[st->n_open - 1]]->hi == KDS_HASHKEY_MAX);
    for (size_t i = 0; i < st->n_open; i++)
        ck_assert_int_eq(st->shards[st->open[i]]->state, KDS_SHARD_OPEN);
}

START_TEST(test_split_children_and_parents)
{
    fx f;
    fx_init(&f, 4);
    kds_shard *p = f.st.shards[2];
    kds_hashkey key;
    ck_assert_int_eq(kds_hashkey_parse_dec("212676479325586539664609129644855132160", &key), 0);
    ck_assert_int_eq(kds_reshard_split(&f.st, 2, key, "test"), KDS_API_OK);
    /* UPDATING: nothing changes yet, and writes still go to the parent. */
    ck_assert(f.st.updating);
    ck_assert_uint_eq(f.st.n_open, 4);
    ck_assert_int_eq(p->state, KDS_SHARD_OPEN);
    settle(&f);
    ck_assert(!f.st.updating);
    ck_assert_int_eq(p->state, KDS_SHARD_CLOSED);
    ck_assert_uint_eq(f.st.n_shards, 6);
    kds_shard *a = f.st.shards[4], *b = f.st.shards[5];
    ck_assert_int_eq(a->parent, 2);
    ck_assert_int_eq(b->parent, 2);
    ck_assert_int_eq(a->adjacent_parent, -1);
    ck_assert(a->lo == p->lo && a->hi == key - 1 && b->lo == key && b->hi == p->hi);
    /* s-90 (MD5 b772d1fa...) lands in the upper child. */
    ck_assert_uint_eq(kds_stream_route(&f.st, kds_hashkey_from_md5("s-90", 4))->index, 5);
    check_cover(&f.st);
    fx_fini(&f);
}
END_TEST

START_TEST(test_merge_child_names_both_parents)
{
    fx f;
    fx_init(&f, 4);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 1, 2, "test"), KDS_API_OK);
    settle(&f);
    kds_shard *c = f.st.shards[4];
    ck_assert_int_eq(c->parent, 1);
    ck_assert_int_eq(c->adjacent_parent, 2);
    ck_assert(c->lo == f.st.shards[1]->lo && c->hi == f.st.shards[2]->hi);
    ck_assert_uint_eq(f.st.n_open, 3);
    check_cover(&f.st);
    fx_fini(&f);
}
END_TEST

/* MergeShards of the last and the first shard: their ranges do not touch (the last ends
 * at 2^128 - 1, and one past it is not the first's start 0), in either order, so the
 * request is refused; nothing changes. A merge named higher range first completes on
 * exactly that pair, and the child names the first shard given as its parent. */
START_TEST(test_merge_last_and_first_refused)
{
    fx f;
    fx_init(&f, 4);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 3, 0, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert(strstr(kds_reshard_last(&f.st)->message, "not adjacent") != NULL);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 0, 3, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 1, 1, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert(strstr(kds_reshard_last(&f.st)->message, "named twice") != NULL);
    ck_assert(!f.st.updating);
    settle(&f);
    ck_assert_uint_eq(f.st.n_shards, 4);
    ck_assert_uint_eq(f.st.n_open, 4);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 3, 2, "t"), KDS_API_OK);
    settle(&f);
    ck_assert_uint_eq(f.st.n_shards, 5);
    kds_shard *c = f.st.shards[4];
    ck_assert_int_eq(c->parent, 3);
    ck_assert_int_eq(c->adjacent_parent, 2);
    ck_assert(c->lo == f.st.shards[2]->lo && c->hi == KDS_HASHKEY_MAX);
    ck_assert_int_eq(f.st.shards[2]->state, KDS_SHARD_CLOSED);
    ck_assert_int_eq(f.st.shards[3]->state, KDS_SHARD_CLOSED);
    ck_assert_int_eq(f.st.shards[0]->state, KDS_SHARD_OPEN);
    ck_assert_int_eq(f.st.shards[1]->state, KDS_SHARD_OPEN);
    check_cover(&f.st);
    fx_fini(&f);
}
END_TEST

/* A closed shard is EXPIRED once the retention period has passed since it closed
 * (model.md section 1), not before; its records are all trimmed then. Split at 0, the
 * parent closes after the 30 s UPDATING period, and expires at 30 s + 24 h. */
START_TEST(test_closed_shard_expires_after_retention)
{
    fx f;
    fx_init(&f, 1);
    kds_put_result res;
    kds_stream_put(&f.st, f.st.shards[0], 10, 10 * 1024, 0, 0, 0, &res);
    ck_assert_uint_eq(res.stored, 10);
    kds_shard *p = f.st.shards[0];
    ck_assert_int_eq(kds_reshard_split(&f.st, 0, p->lo + (p->hi - p->lo) / 2 + 1, "t"),
                     KDS_API_OK);
    sim_time expiry = f.st.cfg.reshard_duration + f.st.cfg.retention;
    sim_run_until(f.s, expiry - 1);
    ck_assert_int_eq(p->state, KDS_SHARD_CLOSED);
    ck_assert_int_eq(p->closed, f.st.cfg.reshard_duration);
    sim_run_until(f.s, expiry);
    ck_assert_int_eq(p->state, KDS_SHARD_EXPIRED);
    ck_assert_uint_eq(p->log.n, 0);
    ck_assert_uint_eq(p->st.records_expired, 10);
    ck_assert_int_eq(f.st.shards[1]->state, KDS_SHARD_OPEN);
    ck_assert_int_eq(f.st.shards[2]->state, KDS_SHARD_OPEN);
    fx_fini(&f);
}
END_TEST

START_TEST(test_validation_errors)
{
    fx f;
    fx_init(&f, 4);
    kds_shard *s1 = f.st.shards[1];
    /* A key at the range edge: start + 1 is not strictly inside. */
    ck_assert_int_eq(kds_reshard_split(&f.st, 1, s1->lo + 1, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_split(&f.st, 1, s1->hi + 1, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_split(&f.st, 1, s1->lo, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_split(&f.st, 99, 5, "t"), KDS_API_NOT_FOUND);
    /* Non-adjacent pair. */
    ck_assert_int_eq(kds_reshard_merge(&f.st, 0, 2, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert(strstr(kds_reshard_last(&f.st)->message, "not adjacent") != NULL);
    /* UpdateShardCount bounds: above double, below half, unchanged, above 10,000. */
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 9, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 1, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 4, "t"), KDS_API_INVALID_ARGUMENT);
    /* While UPDATING, every change is refused. */
    ck_assert_int_eq(kds_reshard_split(&f.st, 1, s1->lo + 100, "t"), KDS_API_OK);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 2, 3, "t"), KDS_API_RESOURCE_IN_USE);
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 6, "t"), KDS_API_RESOURCE_IN_USE);
    settle(&f);
    /* A closed shard cannot be split or merged. */
    ck_assert_int_eq(kds_reshard_split(&f.st, 1, s1->lo + 1000, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert(strstr(kds_reshard_last(&f.st)->message, "CLOSED") != NULL);
    ck_assert_int_eq(kds_reshard_merge(&f.st, 1, 2, "t"), KDS_API_INVALID_ARGUMENT);
    ck_assert_str_eq(kds_api_status_name(KDS_API_LIMIT_EXCEEDED), "LimitExceededException");
    ck_assert_str_eq(kds_api_status_name(KDS_API_RESOURCE_IN_USE), "ResourceInUseException");
    fx_fini(&f);
}
END_TEST

START_TEST(test_update_count_limit_per_24h)
{
    fx f;
    fx_init(&f, 4);
    uint32_t targets[] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    for (size_t i = 0; i < 10; i++) {
        ck_assert_int_eq(kds_reshard_update_count(&f.st, targets[i], "t"), KDS_API_OK);
        settle(&f);
        ck_assert_uint_eq(f.st.n_open, targets[i]);
        check_cover(&f.st);
    }
    /* The 11th call within 24 h. */
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 15, "t"), KDS_API_LIMIT_EXCEEDED);
    /* A day after the first call, one is allowed again. */
    sim_run_until(f.s, SIM_HOUR(25));
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 15, "t"), KDS_API_OK);
    fx_fini(&f);
}
END_TEST

START_TEST(test_max_shards)
{
    fx f;
    sim *s = sim_new(1);
    kds_stream_cfg c;
    kds_stream_cfg_defaults(&c);
    c.shards = 6000;
    ck_assert_int_eq(kds_stream_init(&f.st, s, &c), 0);
    f.s = s;
    ck_assert_int_eq(kds_reshard_update_count(&f.st, 12000, "t"), KDS_API_LIMIT_EXCEEDED);
    fx_fini(&f);
}
END_TEST

/* UpdateShardCount to a uniform split, through splits and merges: every open shard is
 * an even range, and every closed one names real parents. */
START_TEST(test_update_count_uniform_graph)
{
    uint32_t from[] = {4, 4, 3, 6, 5};
    uint32_t to[] = {8, 2, 5, 4, 7};
    for (size_t t = 0; t < 5; t++) {
        fx f;
        fx_init(&f, from[t]);
        ck_assert_int_eq(kds_reshard_update_count(&f.st, to[t], "t"), KDS_API_OK);
        settle(&f);
        ck_assert_uint_eq(f.st.n_open, to[t]);
        for (uint32_t j = 0; j < to[t]; j++) {
            const kds_shard *sh = f.st.shards[f.st.open[j]];
            ck_assert(sh->lo == kds_hashkey_even_start(j, to[t]));
            ck_assert(sh->hi == kds_hashkey_even_end(j, to[t]));
        }
        for (size_t i = from[t]; i < f.st.n_shards; i++) {
            const kds_shard *sh = f.st.shards[i];
            ck_assert_int_ge(sh->parent, 0);
            ck_assert_int_lt(sh->parent, (int)i);
            const kds_shard *p = f.st.shards[sh->parent];
            ck_assert_int_eq(p->state, KDS_SHARD_CLOSED);
            /* A child's range lies within its parents' union. */
            kds_hashkey lo = p->lo, hi = p->hi;
            if (sh->adjacent_parent >= 0) {
                const kds_shard *q = f.st.shards[sh->adjacent_parent];
                lo = q->lo < lo ? q->lo : lo;
                hi = q->hi > hi ? q->hi : hi;
            }
            ck_assert(sh->lo >= lo && sh->hi <= hi);
        }
        /* Each shard lists as its children exactly the shards naming it as a parent, in
         * increasing order (what the KCL's SHARD_END walks instead of every shard). */
        for (size_t i = 0; i < f.st.n_shards; i++) {
            int32_t want[2] = {-1, -1};
            size_t n = 0;
            for (size_t j = 0; j < f.st.n_shards; j++) {
                const kds_shard *c = f.st.shards[j];
                if (c->parent == (int32_t)i || c->adjacent_parent == (int32_t)i) {
                    ck_assert_uint_lt(n, 2);
                    want[n++] = (int32_t)j;
                }
            }
            ck_assert_int_eq(f.st.shards[i]->children[0], want[0]);
            ck_assert_int_eq(f.st.shards[i]->children[1], want[1]);
        }
        check_cover(&f.st);
        fx_fini(&f);
    }
}
END_TEST

/* The config of a world with one producer of `rate` 1 KiB records/s of random keys,
 * sending each record once, and the default capacity settings. */
static void world_cfg(kds_world_cfg *wc, kds_producer_cfg *pc, kds_mode mode, uint32_t shards,
                      kds_rate rate, sim_time dur)
{
    memset(wc, 0, sizeof *wc);
    wc->seed = 9;
    wc->duration = dur;
    kds_stream_cfg_defaults(&wc->stream);
    wc->stream.mode = mode;
    wc->stream.shards = shards;
    kds_producer_cfg_defaults(pc);
    pc->name = "p";
    pc->rate = rate;
    pc->max_attempts = 1;
    wc->producers = pc;
    wc->n_producers = 1;
    kds_capacity_cfg_defaults(&wc->capacity);
}

/* That world, built. */
static void world(kds_world *w, kds_world_cfg *wc, kds_producer_cfg *pc, kds_mode mode,
                  uint32_t shards, kds_rate rate, sim_time dur)
{
    world_cfg(wc, pc, mode, shards, rate, dur);
    ck_assert_int_eq(kds_world_init(w, wc), 0);
}

static uint64_t throttled(const kds_world *w)
{
    uint64_t t = 0;
    for (size_t i = 0; i < w->stream.n_shards; i++)
        t += w->stream.shards[i]->st.write_throttled_records;
    return t;
}

START_TEST(test_on_demand_burst_then_grown)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    kds_rate_step step = {SIM_HOUR(1), 6144};
    kds_rate r = kds_rate_constant(1536);
    r.kind = KDS_RATE_STEPS;
    r.steps = &step;
    r.n_steps = 1;
    world(&w, &wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, r, SIM_HOUR(2));
    kds_world_run_until(&w, SIM_HOUR(1));
    ck_assert_uint_eq(throttled(&w), 0); /* 1.5 MiB/s fits the initial 4 MiB/s */
    ck_assert_uint_eq(w.stream.n_open, 4);
    kds_world_run_until(&w, SIM_HOUR(1) + SIM_MIN(10));
    uint64_t during = throttled(&w);
    ck_assert_uint_gt(during, 500000); /* 6 MiB/s on 4 MiB/s: ~2,000 records/s refused */
    kds_world_run_until(&w, SIM_HOUR(1) + SIM_MIN(20));
    uint64_t after_scale = throttled(&w);
    ck_assert_uint_ge(w.stream.n_open, 12); /* twice the new peak */
    kds_world_run(&w);
    /* Throttling stopped once the stream grew (about the configured 15 minutes). */
    ck_assert_uint_eq(throttled(&w), after_scale);
    ck_assert_uint_gt(after_scale, during);
    kds_world_fini(&w);
}
END_TEST

/* An on-demand stream ramping from 1 to 30 MiB/s over 6 h grows every 15 minutes for
 * demand (hot-shard splits off), more than ten times; switched to provisioned at
 * 6 h 10 min, its owner may still call UpdateShardCount: the service's own growth does
 * not count against the owner's 10 calls per rolling 24 h. */
START_TEST(test_on_demand_growth_not_counted_as_update_calls)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    kds_rate r = kds_rate_constant(10);
    r.kind = KDS_RATE_RAMP;
    r.from = 10;
    r.to = 300;
    r.ramp_start = 0;
    r.ramp_end = SIM_HOUR(6);
    world_cfg(&wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, r, SIM_HOUR(7));
    pc.size = sim_dist_const(100 * 1024);
    wc.capacity.od.hot_shard_bytes = 64 * KDS_MIB; /* growth for demand only */
    kds_capacity_event ev = {.at = SIM_HOUR(6) + SIM_MIN(10), .kind = KDS_OP_MODE_SWITCH,
                             .target = KDS_MODE_PROVISIONED};
    wc.capacity.events = &ev;
    wc.capacity.n_events = 1;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run_until(&w, SIM_HOUR(6) + SIM_MIN(30));
    ck_assert_int_eq(w.stream.cfg.mode, KDS_MODE_PROVISIONED);
    ck_assert_uint_gt(kds_capacity_stats_get(w.capacity)->scale_ups, 10);
    uint32_t target = (uint32_t)w.stream.n_open + 2;
    ck_assert_int_eq(kds_reshard_update_count(&w.stream, target, "t"), KDS_API_OK);
    kds_world_run(&w);
    ck_assert_uint_eq(w.stream.n_open, target);
    kds_world_fini(&w);
}
END_TEST

START_TEST(test_on_demand_steady_never_throttled)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world(&w, &wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, kds_rate_constant(2500), SIM_HOUR(3));
    kds_world_run(&w);
    ck_assert_uint_eq(throttled(&w), 0);
    kds_world_fini(&w);
}
END_TEST

/* A hot key above 1,000 records/s throttles whatever the mode and shard count. */
START_TEST(test_hot_key_throttles_in_every_mode)
{
    kds_mode modes[] = {KDS_MODE_PROVISIONED, KDS_MODE_ON_DEMAND_STANDARD};
    uint32_t shards[] = {16, 4};
    for (int i = 0; i < 2; i++) {
        kds_world w;
        kds_world_cfg wc;
        kds_producer_cfg pc;
        memset(&wc, 0, sizeof wc);
        world(&w, &wc, &pc, modes[i], shards[i], kds_rate_constant(1200), SIM_HOUR(1));
        kds_world_fini(&w);
        pc.keys.kind = KDS_KEYS_FIXED;
        pc.keys.fixed = "device-42";
        ck_assert_int_eq(kds_world_init(&w, &wc), 0);
        kds_world_run(&w);
        double per_s = (double)throttled(&w) / 3600.0;
        ck_assert_msg(per_s > 180 && per_s < 220, "mode %d: %.1f throttled/s", i, per_s);
        kds_world_fini(&w);
    }
}
END_TEST

START_TEST(test_auto_distribution_spreads_a_hot_key)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world(&w, &wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, kds_rate_constant(1200), SIM_MIN(30));
    kds_world_fini(&w);
    pc.keys.kind = KDS_KEYS_FIXED;
    pc.keys.fixed = "device-42";
    wc.stream.auto_distribution = true;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
    ck_assert_uint_eq(throttled(&w), 0);
    for (size_t i = 0; i < 4; i++)
        ck_assert_uint_gt(w.stream.shards[i]->st.records_in, 400000);
    kds_world_fini(&w);
}
END_TEST

/* UpdateStreamMode: at most twice per rolling 24 h; the stream keeps its shards. */
START_TEST(test_mode_switch_limit)
{
    kds_capacity_event ev[4] = {
        {.at = SIM_HOUR(1), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_STANDARD},
        {.at = SIM_HOUR(2), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_PROVISIONED},
        {.at = SIM_HOUR(3), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_STANDARD},
        {.at = SIM_HOUR(26), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_STANDARD},
    };
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world(&w, &wc, &pc, KDS_MODE_PROVISIONED, 6, kds_rate_constant(100), SIM_HOUR(27));
    kds_world_fini(&w);
    wc.capacity.events = ev;
    wc.capacity.n_events = 4;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run_until(&w, SIM_HOUR(1) + SIM_S(1));
    ck_assert_int_eq(w.stream.cfg.mode, KDS_MODE_ON_DEMAND_STANDARD);
    ck_assert_uint_eq(w.stream.n_open, 6); /* shards kept */
    kds_world_run(&w);
    ck_assert_uint_eq(w.stream.n_ops >= 4, 1);
    int seen = 0;
    for (size_t i = 0; i < w.stream.n_ops; i++) {
        const kds_reshard_op *op = w.stream.ops[i];
        if (op->kind != KDS_OP_MODE_SWITCH)
            continue;
        kds_api_status want = seen == 2 ? KDS_API_LIMIT_EXCEEDED : KDS_API_OK;
        ck_assert_int_eq(op->status, want);
        seen++;
    }
    ck_assert_int_eq(seen, 4);
    ck_assert_int_eq(w.stream.cfg.mode, KDS_MODE_ON_DEMAND_STANDARD);
    kds_world_fini(&w);
}
END_TEST

/* ---- split rules and on-demand scaling -------------------------------------------------- */

/* Keys whose MD5 routes them to one shard each (checked by fixed_key_world):
 *   3 even shards: dev-1 (MD5 1a6fd60a...) -> 0, dev-4 (74378bb9...) -> 1, dev-3
 *   (e10e5e15...) -> 2; 4 even shards: dev-1 -> 0, dev-0 (4ae8c42f...) -> 1. */
typedef struct keyed {
    const char *key;
    uint32_t shard; /* where the key lands at the start */
    kds_rate rate;  /* 1 KiB records/s */
} keyed;

#define MAX_KEYED 3

/* world_cfg's world with one producer per keys[i], each writing its one key at its
 * rate, built; pc holds MAX_KEYED producers. */
static void fixed_key_world(kds_world *w, kds_world_cfg *wc, kds_producer_cfg *pc, kds_mode mode,
                            uint32_t shards, const keyed *keys, size_t n, sim_time dur,
                            const kds_capacity_cfg *cap)
{
    ck_assert_uint_le(n, MAX_KEYED);
    world_cfg(wc, pc, mode, shards, keys[0].rate, dur);
    for (size_t i = 0; i < n; i++) {
        pc[i] = pc[0];
        pc[i].name = keys[i].key;
        pc[i].rate = keys[i].rate;
        pc[i].keys.kind = KDS_KEYS_FIXED;
        pc[i].keys.fixed = keys[i].key;
    }
    wc->n_producers = n;
    wc->capacity = *cap;
    ck_assert_int_eq(kds_world_init(w, wc), 0);
    for (size_t i = 0; i < n; i++) {
        const char *k = keys[i].key;
        ck_assert_uint_eq(kds_stream_route(&w->stream, kds_hashkey_from_md5(k, strlen(k)))->index,
                          keys[i].shard);
    }
}

/* The one reshard request of `cause`, asserting that there is exactly one. */
static const kds_reshard_op *only_op(const kds_stream *st, const char *cause)
{
    const kds_reshard_op *found = NULL;
    size_t n = 0;
    for (size_t i = 0; i < st->n_ops; i++)
        if (strcmp(st->ops[i]->cause, cause) == 0) {
            found = st->ops[i];
            n++;
        }
    ck_assert_msg(n == 1, "%zu requests of cause \"%s\", expected 1", n, cause);
    return found;
}

/* UpdateStreamMode refusals, none of which counts as one of the two switches a day:
 * to the mode the stream is in (InvalidArgumentException); away from On-demand
 * Advantage within 24 h of turning it on (LimitExceededException); to provisioned with
 * service-managed partition keys, which are on-demand only (InvalidArgumentException).
 * A provisioned stream: 1 h provisioned, refused; 2 h on-demand and 3 h provisioned,
 * both accepted (the refusal at 1 h did not count); 4 h Advantage, refused (two in 24 h);
 * 27 h Advantage, accepted; 28 h Standard, refused (Advantage on since 27 h). */
START_TEST(test_mode_switch_refusals)
{
    kds_capacity_event ev[6] = {
        {.at = SIM_HOUR(1), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_PROVISIONED},
        {.at = SIM_HOUR(2), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_STANDARD},
        {.at = SIM_HOUR(3), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_PROVISIONED},
        {.at = SIM_HOUR(4), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_ADVANTAGE},
        {.at = SIM_HOUR(27), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_ADVANTAGE},
        {.at = SIM_HOUR(28), .kind = KDS_OP_MODE_SWITCH, .target = KDS_MODE_ON_DEMAND_STANDARD},
    };
    kds_api_status want[6] = {KDS_API_INVALID_ARGUMENT, KDS_API_OK, KDS_API_OK,
                              KDS_API_LIMIT_EXCEEDED, KDS_API_OK, KDS_API_LIMIT_EXCEEDED};
    const char *why[6] = {"already provisioned", "", "", "switched 2 times", "",
                          "cannot be turned off for 24 hours"};
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world_cfg(&wc, &pc, KDS_MODE_PROVISIONED, 4, kds_rate_constant(10), SIM_HOUR(29));
    wc.capacity.events = ev;
    wc.capacity.n_events = 6;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
    size_t seen = 0;
    for (size_t i = 0; i < w.stream.n_ops; i++) {
        const kds_reshard_op *op = w.stream.ops[i];
        if (op->kind != KDS_OP_MODE_SWITCH)
            continue;
        ck_assert_uint_lt(seen, 6);
        ck_assert_msg(op->status == want[seen], "switch %zu: %s, expected %s", seen,
                      kds_api_status_name(op->status), kds_api_status_name(want[seen]));
        ck_assert_msg(strstr(op->message, why[seen]) != NULL, "switch %zu: \"%s\"", seen,
                      op->message);
        seen++;
    }
    ck_assert_uint_eq(seen, 6);
    ck_assert_uint_eq(kds_capacity_stats_get(w.capacity)->mode_switches, 3);
    ck_assert_int_eq(w.stream.cfg.mode, KDS_MODE_ON_DEMAND_ADVANTAGE);
    kds_world_fini(&w);

    /* Service-managed keys keep the stream on demand. */
    kds_capacity_event to_prov = {.at = SIM_MIN(10), .kind = KDS_OP_MODE_SWITCH,
                                  .target = KDS_MODE_PROVISIONED};
    world_cfg(&wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, kds_rate_constant(10), SIM_MIN(20));
    wc.stream.auto_distribution = true;
    wc.capacity.events = &to_prov;
    wc.capacity.n_events = 1;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
    const kds_reshard_op *op = only_op(&w.stream, "scenario");
    ck_assert_int_eq(op->status, KDS_API_INVALID_ARGUMENT);
    ck_assert(strstr(op->message, "AUTO") != NULL);
    ck_assert_int_eq(w.stream.cfg.mode, KDS_MODE_ON_DEMAND_STANDARD);
    ck_assert_uint_eq(kds_capacity_stats_get(w.capacity)->mode_switches, 0);
    kds_world_fini(&w);
}
END_TEST

/* The middle of a shard's range, where rules and hot-shard splits cut it
 * (kds_capacity.c): lo + (hi - lo) / 2 + 1. */
static kds_hashkey middle_of(const kds_shard *sh)
{
    return sh->lo + (sh->hi - sh->lo) / 2 + 1;
}

/* The split's two children cover the parent's range, cut at `key`. */
static void check_halves(const kds_stream *st, const kds_reshard_op *op)
{
    const kds_shard *p = st->shards[op->shard];
    ck_assert_uint_eq(op->n_children, 2);
    const kds_shard *a = st->shards[op->first_child], *b = st->shards[op->first_child + 1];
    ck_assert(op->key == middle_of(p));
    ck_assert(a->lo == p->lo && a->hi == op->key - 1 && b->lo == op->key && b->hi == p->hi);
    ck_assert_int_eq(p->state, KDS_SHARD_CLOSED);
}

/* Rule {split_above: 0.8, for: 5m} on 3 provisioned shards, checked every minute on
 * the minute before (kds_capacity.h), a shard's use being the larger of its bytes and
 * records against 1 MiB/s and 1,000 records/s:
 *   shard 0, 900 records/s of 1 KiB: 0.9 from the first minute; above since 0 s (the
 *     1-minute check counts the minute before it), so the 5-minute check asks for the
 *     split: requested at 5 min, done after the 30 s UPDATING period, in the middle;
 *   shard 1, 900 records/s for 4 minutes, then 100: above for 4 minutes only, never
 *     split;
 *   shard 2, 700 records/s: 0.7, below, never split.
 * The child taking shard 0's key is above from its first full minute (7 min) and
 * would split at 12 min, after the 9-minute run: one rule split in all. */
START_TEST(test_rule_splits_only_a_sustained_hot_shard)
{
    kds_rate_step drop = {SIM_MIN(4), 100};
    kds_rate brief = kds_rate_constant(900);
    brief.kind = KDS_RATE_STEPS;
    brief.steps = &drop;
    brief.n_steps = 1;
    keyed keys[] = {{"dev-1", 0, kds_rate_constant(900)},
                    {"dev-4", 1, brief},
                    {"dev-3", 2, kds_rate_constant(700)}};
    kds_split_rule rule = {0.8, SIM_MIN(5)};
    kds_capacity_cfg cap;
    kds_capacity_cfg_defaults(&cap);
    cap.rules = &rule;
    cap.n_rules = 1;
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc[MAX_KEYED];
    fixed_key_world(&w, &wc, pc, KDS_MODE_PROVISIONED, 3, keys, 3, SIM_MIN(9), &cap);
    kds_world_run_until(&w, SIM_MIN(5) - SIM_S(1));
    ck_assert_uint_eq(w.stream.n_ops, 0);
    kds_world_run(&w);
    ck_assert_uint_eq(throttled(&w), 0);
    ck_assert_uint_eq(kds_capacity_stats_get(w.capacity)->rule_splits, 1);
    const kds_reshard_op *op = only_op(&w.stream, "rule");
    ck_assert_int_eq(op->kind, KDS_OP_SPLIT);
    ck_assert_int_eq(op->status, KDS_API_OK);
    ck_assert_uint_eq(op->shard, 0);
    ck_assert_int_eq(op->requested, SIM_MIN(5));
    ck_assert_int_eq(op->completed, SIM_MIN(5) + w.stream.cfg.reshard_duration);
    check_halves(&w.stream, op);
    ck_assert_uint_eq(w.stream.n_ops, 1);
    ck_assert_int_eq(w.stream.shards[1]->state, KDS_SHARD_OPEN);
    ck_assert_int_eq(w.stream.shards[2]->state, KDS_SHARD_OPEN);
    ck_assert_uint_eq(w.stream.n_open, 4);
    check_cover(&w.stream);
    kds_world_fini(&w);
}
END_TEST

/* Two rules, {split_above: 0.5, for: 5m} and {split_above: 0.9, for: 1m}, in either
 * order, and shard 0 written at 700 records/s of 1 KiB (0.7 of its budget): the strict
 * rule is never met, and must not restart the loose rule's timer, which asks for the
 * split at 5 min (each rule keeps its own timer per shard). */
START_TEST(test_rules_keep_their_own_timers)
{
    kds_split_rule both[2][2] = {{{0.5, SIM_MIN(5)}, {0.9, SIM_MIN(1)}},
                                 {{0.9, SIM_MIN(1)}, {0.5, SIM_MIN(5)}}};
    for (int order = 0; order < 2; order++) {
        keyed keys[] = {{"dev-1", 0, kds_rate_constant(700)}};
        kds_capacity_cfg cap;
        kds_capacity_cfg_defaults(&cap);
        cap.rules = both[order];
        cap.n_rules = 2;
        kds_world w;
        kds_world_cfg wc;
        kds_producer_cfg pc[MAX_KEYED];
        fixed_key_world(&w, &wc, pc, KDS_MODE_PROVISIONED, 3, keys, 1, SIM_MIN(9), &cap);
        kds_world_run(&w);
        ck_assert_uint_eq(kds_capacity_stats_get(w.capacity)->rule_splits, 1);
        const kds_reshard_op *op = only_op(&w.stream, "rule");
        ck_assert_int_eq(op->status, KDS_API_OK);
        ck_assert_uint_eq(op->shard, 0);
        ck_assert_int_eq(op->requested, SIM_MIN(5));
        check_cover(&w.stream);
        kds_world_fini(&w);
    }
}
END_TEST

/* On-demand Standard, 4 shards (its 4 MiB/s floor), defaults: shard 0 written at 600
 * KiB/s, above hot_shard_above's 500 KiB/s, shard 1 at 400 KiB/s. Together 1,000
 * KiB/s, twice that is below the floor, so the stream never grows for demand. The
 * 1-minute check finds shard 0 hot and schedules its split hot_shard_delay (15 min)
 * later: at 16 min, in the middle of its range, counted as a hot-shard split with
 * cause "on-demand hot shard". The child taking the key is hot again from the
 * 17-minute check, split at 32 min, after the 20-minute run. */
START_TEST(test_on_demand_hot_shard_split)
{
    keyed keys[] = {{"dev-1", 0, kds_rate_constant(600)}, {"dev-0", 1, kds_rate_constant(400)}};
    kds_capacity_cfg cap;
    kds_capacity_cfg_defaults(&cap);
    ck_assert_uint_eq(cap.od.hot_shard_bytes, 500 * 1024);
    ck_assert_int_eq(cap.od.hot_shard_delay, SIM_MIN(15));
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc[MAX_KEYED];
    fixed_key_world(&w, &wc, pc, KDS_MODE_ON_DEMAND_STANDARD, 4, keys, 2, SIM_MIN(20), &cap);
    kds_world_run_until(&w, SIM_MIN(16) - SIM_S(1));
    ck_assert_uint_eq(w.stream.n_open, 4);
    kds_world_run(&w);
    const kds_capacity_stats *cs = kds_capacity_stats_get(w.capacity);
    ck_assert_uint_eq(cs->hot_splits, 1);
    ck_assert_uint_eq(cs->scale_ups, 0);
    ck_assert_uint_eq(cs->rule_splits, 0);
    const kds_reshard_op *op = only_op(&w.stream, "on-demand hot shard");
    ck_assert_int_eq(op->kind, KDS_OP_SPLIT);
    ck_assert_uint_eq(op->shard, 0);
    ck_assert_int_eq(op->requested, SIM_MIN(16));
    ck_assert_int_eq(op->completed, SIM_MIN(16));
    check_halves(&w.stream, op);
    ck_assert_uint_eq(w.stream.n_ops, 1);
    ck_assert_uint_eq(w.stream.n_open, 5);
    check_cover(&w.stream);
    kds_world_fini(&w);
}
END_TEST

/* On-demand Standard with 8 shards and 10 KiB/s of writes: the capacity it needs is the
 * 4 MiB/s floor, 4 shards, so it is in excess from the 1-minute check. After
 * scale_down_delay (24 h) in excess, the check at 24 h 1 min merges the adjacent pair
 * with the least traffic (far below half of 500 KiB/s): 7 shards, one scale-down; the
 * next merge waits another 24 h. */
START_TEST(test_on_demand_scale_down_after_a_day)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world(&w, &wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 8, kds_rate_constant(10),
          SIM_HOUR(24) + SIM_MIN(3));
    ck_assert_int_eq(kds_capacity_cfg_get(w.capacity)->od.scale_down_delay, SIM_HOUR(24));
    kds_world_run_until(&w, SIM_HOUR(24) + SIM_MIN(1) - SIM_S(1));
    ck_assert_uint_eq(w.stream.n_open, 8);
    ck_assert_uint_eq(w.stream.n_ops, 0);
    kds_world_run(&w);
    const kds_capacity_stats *cs = kds_capacity_stats_get(w.capacity);
    ck_assert_uint_eq(cs->scale_downs, 1);
    ck_assert_uint_eq(cs->scale_ups, 0);
    const kds_reshard_op *op = only_op(&w.stream, "on-demand scaling");
    ck_assert_int_eq(op->kind, KDS_OP_MERGE);
    ck_assert_int_eq(op->completed, SIM_HOUR(24) + SIM_MIN(1));
    ck_assert_uint_eq(op->n_children, 1);
    ck_assert_uint_eq(w.stream.n_open, 7);
    check_cover(&w.stream);
    kds_world_fini(&w);
}
END_TEST

/* On-demand Standard, 4 shards, 1,536 records/s of 4 KiB = 6 MiB/s: twice that, 12
 * MiB/s, would take 12 shards, but a Region ceiling of 8 MiB/s caps the capacity at
 * 8 MiB/s: the stream grows once, scale_delay (15 min) after the 1-minute check, to 8
 * shards and no further. (Hot-shard splits are switched off here: every shard is
 * above 500 KiB/s, and they would split it whatever the ceiling.) */
START_TEST(test_on_demand_region_ceiling_caps_growth)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world_cfg(&wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, kds_rate_constant(1536), SIM_MIN(40));
    pc.size = sim_dist_const(4096);
    wc.capacity.od.ceiling_bytes = 8 * KDS_MIB;
    wc.capacity.od.hot_shard_bytes = UINT64_C(1) << 40;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run_until(&w, SIM_MIN(16) - SIM_S(1));
    ck_assert_uint_eq(w.stream.n_open, 4);
    kds_world_run(&w);
    const kds_capacity_stats *cs = kds_capacity_stats_get(w.capacity);
    ck_assert_uint_eq(cs->scale_ups, 1);
    ck_assert_double_eq(cs->capacity_bytes_s_end, 8.0 * KDS_MIB);
    ck_assert_uint_eq(w.stream.n_open, 8);
    const kds_reshard_op *op = only_op(&w.stream, "on-demand scaling");
    ck_assert_int_eq(op->completed, SIM_MIN(16));
    ck_assert_uint_eq(op->target, 8);
    check_cover(&w.stream);
    kds_world_fini(&w);
}
END_TEST

/* The same stream with hot-shard splits on (500 KiB/s): every shard is written at 1.5
 * MiB/s, so the 1-minute check schedules a hot split of all four for 16 min, which
 * brings the stream to the ceiling's 8 shards (the growth due then has nothing left
 * to do). Each of the 8 is still above 500 KiB/s (768 KiB/s) and hot again at the
 * 17-minute check, but splitting them at 32 min would take the stream to 16 MiB/s,
 * twice the Region's ceiling: they are not split, and the stream stays at 8 shards. */
START_TEST(test_on_demand_region_ceiling_caps_hot_splits)
{
    kds_world w;
    kds_world_cfg wc;
    kds_producer_cfg pc;
    world_cfg(&wc, &pc, KDS_MODE_ON_DEMAND_STANDARD, 4, kds_rate_constant(1536), SIM_MIN(40));
    pc.size = sim_dist_const(4096);
    wc.capacity.od.ceiling_bytes = 8 * KDS_MIB;
    ck_assert_int_eq(kds_world_init(&w, &wc), 0);
    kds_world_run(&w);
    const kds_capacity_stats *cs = kds_capacity_stats_get(w.capacity);
    ck_assert_uint_eq(cs->hot_splits, 4);
    ck_assert_uint_eq(cs->scale_ups, 0);
    ck_assert_uint_eq(w.stream.n_open, 8);
    check_cover(&w.stream);
    kds_world_fini(&w);
}
END_TEST

/* Warm throughput of 20 MiB/s from 10 min under On-demand Advantage, with 100 KiB/s
 * of writes: the 10-minute check, the first with it in force, wants 20 MiB/s of
 * capacity, 20 shards, and the stream grows to them at 25 min (scale_delay later),
 * widest shards first (4, 8, 16, then 4 of the 16 split again). Under On-demand
 * Standard the same setting does nothing: 4 shards throughout. */
START_TEST(test_advantage_warm_throughput)
{
    kds_warm_change warm = {SIM_MIN(10), 20 * KDS_MIB};
    kds_mode modes[] = {KDS_MODE_ON_DEMAND_ADVANTAGE, KDS_MODE_ON_DEMAND_STANDARD};
    uint32_t want[] = {20, 4};
    for (int i = 0; i < 2; i++) {
        kds_world w;
        kds_world_cfg wc;
        kds_producer_cfg pc;
        world_cfg(&wc, &pc, modes[i], 4, kds_rate_constant(100), SIM_MIN(40));
        wc.capacity.od.warm = &warm;
        wc.capacity.od.n_warm = 1;
        ck_assert_int_eq(kds_world_init(&w, &wc), 0);
        kds_world_run_until(&w, SIM_MIN(25) - SIM_S(1));
        ck_assert_uint_eq(w.stream.n_open, 4);
        kds_world_run(&w);
        ck_assert_uint_eq(w.stream.n_open, want[i]);
        if (modes[i] == KDS_MODE_ON_DEMAND_ADVANTAGE) {
            ck_assert_uint_eq(kds_capacity_stats_get(w.capacity)->scale_ups, 1);
            ck_assert_int_eq(only_op(&w.stream, "on-demand scaling")->completed, SIM_MIN(25));
        } else {
            ck_assert_uint_eq(w.stream.n_ops, 0);
        }
        check_cover(&w.stream);
        kds_world_fini(&w);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kds_reshard");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_split_children_and_parents);
    tcase_add_test(core, test_merge_child_names_both_parents);
    tcase_add_test(core, test_closed_shard_expires_after_retention);
    tcase_add_test(core, test_update_count_uniform_graph);
    suite_add_tcase(s, core);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, test_validation_errors);
    tcase_add_test(errors, test_merge_last_and_first_refused);
    tcase_add_test(errors, test_update_count_limit_per_24h);
    tcase_add_test(errors, test_max_shards);
    suite_add_tcase(s, errors);
    TCase *cap = tcase_create("capacity");
    tcase_set_timeout(cap, 120);
    tcase_add_test(cap, test_on_demand_burst_then_grown);
    tcase_add_test(cap, test_on_demand_steady_never_throttled);
    tcase_add_test(cap, test_on_demand_growth_not_counted_as_update_calls);
    tcase_add_test(cap, test_hot_key_throttles_in_every_mode);
    tcase_add_test(cap, test_auto_distribution_spreads_a_hot_key);
    tcase_add_test(cap, test_mode_switch_limit);
    tcase_add_test(cap, test_mode_switch_refusals);
    suite_add_tcase(s, cap);
    TCase *scaling = tcase_create("scaling");
    tcase_set_timeout(scaling, 120);
    tcase_add_test(scaling, test_rule_splits_only_a_sustained_hot_shard);
    tcase_add_test(scaling, test_rules_keep_their_own_timers);
    tcase_add_test(scaling, test_on_demand_hot_shard_split);
    tcase_add_test(scaling, test_on_demand_scale_down_after_a_day);
    tcase_add_test(scaling, test_on_demand_region_ceiling_caps_growth);
    tcase_add_test(scaling, test_on_demand_region_ceiling_caps_hot_splits);
    tcase_add_test(scaling, test_advantage_warm_throughput);
    suite_add_tcase(s, scaling);
    return tu_run_suite(s);
}
