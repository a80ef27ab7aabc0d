/* report_capacity.c - the stream's changing shape in the reports: every resharding
 * request (accepted or refused, with AWS's error name), on-demand scaling figures, the
 * hottest shards and keys, and the open-shard count per minute (issue 5). */
#include "report_int.h"

#include <math.h>
#include <string.h>

#include "kds_capacity.h"
#include "kds_hashkey.h"
#include "kds_reshard.h"

static const char *op_name(kds_op_kind k)
{
    switch (k) {
    case KDS_OP_SPLIT:
        return "SplitShard";
    case KDS_OP_MERGE:
        return "MergeShards";
    case KDS_OP_UPDATE_COUNT:
        return "UpdateShardCount";
    case KDS_OP_MODE_SWITCH:
        return "UpdateStreamMode";
    }
    return "?";
}

json_t *kdsim_reshards_json(const kds_world *w)
{
    const kds_stream *st = &w->stream;
    json_t *arr = json_array();
    char id[32], dec[KDS_HASHKEY_DEC_LEN];
    for (size_t i = 0; i < st->n_ops; i++) {
        const kds_reshard_op *op = st->ops[i];
        json_t *o = json_object();
        json_object_set_new(o, "operation", json_string(op_name(op->kind)));
        json_object_set_new(o, "cause", json_string(op->cause));
        json_object_set_new(o, "requested_s", kdsim_real3(sim_to_s(op->requested)));
        json_object_set_new(o, "completed_s",
                            op->completed >= 0 ? kdsim_real3(sim_to_s(op->completed))
                                               : json_null());
        json_object_set_new(o, "status", json_string(kds_api_status_name(op->status)));
        json_object_set_new(o, "message", json_string(op->message));
        switch (op->kind) {
        case KDS_OP_SPLIT:
            json_object_set_new(o, "shard_id", json_string(kds_shard_id(id, sizeof id, op->shard)));
            json_object_set_new(o, "new_starting_hash_key",
                                json_string(kds_hashkey_to_dec(dec, op->key)));
            break;
        case KDS_OP_MERGE:
            json_object_set_new(o, "shard_id", json_string(kds_shard_id(id, sizeof id, op->shard)));
            json_object_set_new(o, "adjacent_shard_id",
                                json_string(kds_shard_id(id, sizeof id, op->other)));
            break;
        case KDS_OP_UPDATE_COUNT:
            json_object_set_new(o, "target_shard_count", json_integer(op->target));
            break;
        case KDS_OP_MODE_SWITCH:
            json_object_set_new(o, "mode", json_string(kds_mode_name((kds_mode)op->target)));
            break;
        }
        json_t *ch = json_array();
        for (uint32_t k = 0; k < op->n_children; k++)
            json_array_append_new(ch,
                                  json_string(kds_shard_id(id, sizeof id, op->first_child + k)));
        json_object_set_new(o, "children", ch);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The peak one-minute write rate of a shard, records/s, and the minute it happened. */
static double shard_peak(const kds_shard *sh, size_t *minute)
{
    const sim_series *in = &sh->st.in_records_min, *thr = &sh->st.throttled_min;
    if (in->width != in->base || thr->width != thr->base) {
        /* A long run merged the minutes: the shard kept its offered peak apart. */
        sim_time lo;
        double best = sim_series_peak(&sh->st.offered_min, &lo);
        *minute = (size_t)(lo / SIM_MIN(1));
        return best / 60.0;
    }
    double best = 0;
    *minute = 0;
    for (size_t i = 0; i < in->n; i++) {
        double v = sim_series_get(in, i) + sim_series_get(thr, i);
        if (v > best) {
            best = v;
            *minute = i;
        }
    }
    return best / 60.0;
}

json_t *kdsim_hot_json(const kds_world *w)
{
    const kds_stream *st = &w->stream;
    json_t *o = json_object();
    /* The three shards with the highest one-minute offered write rate. */
    size_t top[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    double topv[3] = {-1, -1, -1};
    for (size_t i = 0; i < st->n_shards; i++) {
        size_t m;
        double v = shard_peak(st->shards[i], &m);
        for (int k = 0; k < 3; k++)
            if (v > topv[k]) {
                for (int j = 2; j > k; j--) {
                    topv[j] = topv[j - 1];
                    top[j] = top[j - 1];
                }
                topv[k] = v;
                top[k] = i;
                break;
            }
    }
    json_t *hs = json_array();
    char id[32];
    for (int k = 0; k < 3; k++) {
        if (top[k] == SIZE_MAX)
            continue;
        const kds_shard *sh = st->shards[top[k]];
        size_t m;
        double v = shard_peak(sh, &m);
        json_t *e = json_object();
        json_object_set_new(e, "shard_id", json_string(kds_shard_id(id, sizeof id, sh->index)));
        json_object_set_new(e, "peak_offered_records_per_s", kdsim_real3(v));
        json_object_set_new(e, "peak_minute", json_integer((json_int_t)m));
        json_object_set_new(e, "budget_records_per_s",
                            json_integer((json_int_t)st->cfg.write_records_per_s));
        json_object_set_new(e, "write_throttled_records",
                            json_integer((json_int_t)sh->st.write_throttled_records));
        json_array_append_new(hs, e);
    }
    json_object_set_new(o, "hottest_shards", hs);
    /* Keys the scenario names (a fixed partition key or hash key, the top of a Zipf
     * law): each lives in one shard, so its rate is capped by one shard's budget. */
    json_t *hk = json_array();
    for (size_t i = 0; i < w->n_producers; i++) {
        const kds_producer_cfg *c = kds_producer_cfg_get(w->producers[i]);
        const kds_producer_stats *ps = kds_producer_stats_get(w->producers[i]);
        kds_hashkey h;
        const char *name;
        char zipf[300];
        double share = 1.0;
        if (c->keys.kind == KDS_KEYS_FIXED) {
            name = c->keys.fixed;
            h = kds_hashkey_from_md5(name, strlen(name));
        } else if (c->keys.kind == KDS_KEYS_EXPLICIT) {
            name = "(ExplicitHashKey)";
            h = c->keys.explicit_key;
        } else if (c->keys.kind == KDS_KEYS_ZIPF) {
            kds_keys_name(&c->keys, 0, zipf, sizeof zipf);
            name = zipf;
            h = kds_hashkey_from_md5(name, strlen(name));
            /* The model's own sum (the top key's term is 1): a sum of its own here
             * once stopped at 10^6 keys and overstated the key's rate. */
            share = 1.0 / kds_producer_keys(w->producers[i])->zipf_total;
        } else {
            continue;
        }
        if (st->cfg.auto_distribution)
            continue; /* service-managed keys: no key has a shard of its own */
        json_t *e = json_object();
        json_object_set_new(e, "key", json_string(name));
        json_object_set_new(e, "producer", json_string(c->name));
        json_object_set_new(
            e, "shard_id",
            json_string(kds_shard_id(id, sizeof id, kds_stream_route(st, h)->index)));
        json_object_set_new(e, "offered_records_per_s",
                            kdsim_real3(share * kds_rate_peak(&c->rate, 0, w->cfg->duration) *
                                        (c->aggregate > 1 ? 1.0 / c->aggregate : 1.0)));
        json_object_set_new(e, "producer_write_throttled_records",
                            json_integer((json_int_t)ps->write_throttled_records));
        json_array_append_new(hk, e);
    }
    json_object_set_new(o, "hot_keys", hk);
    return o;
}

json_t *kdsim_capacity_json(const kds_world *w)
{
    const kds_capacity_stats *cs = kds_capacity_stats_get(w->capacity);
    json_t *o = json_object();
    json_object_set_new(o, "on_demand_scale_ups", json_integer((json_int_t)cs->scale_ups));
    json_object_set_new(o, "on_demand_scale_downs", json_integer((json_int_t)cs->scale_downs));
    json_object_set_new(o, "on_demand_hot_shard_splits", json_integer((json_int_t)cs->hot_splits));
    json_object_set_new(o, "rule_splits", json_integer((json_int_t)cs->rule_splits));
    json_object_set_new(o, "mode_switches", json_integer((json_int_t)cs->mode_switches));
    json_object_set_new(o, "peak_offered_bytes_per_s", kdsim_real3(cs->peak_write_bytes_s));
    json_object_set_new(o, "on_demand_capacity_bytes_per_s_end",
                        kdsim_real3(cs->capacity_bytes_s_end));
    json_object_set_new(o, "open_shards_max",
                        kdsim_real3(sim_series_max(&w->stream.open_shards_min)));
    return o;
}

int kdsim_write_capacity_csv(const kds_world *w, const char *dir)
{
    kdsim_afile a;
    int rc = kdsim_aopen(&a, dir, "capacity_per_minute.csv");
    if (rc)
        return rc;
    /* The stream's minutes never merge (KDS_STREAM_MINUTES_KEPT covers the longest run):
     * a row a minute, with the width column of the other per-minute files. */
    fprintf(a.f, "minute,minutes,open_shards\n");
    const sim_series *s = &w->stream.open_shards_min;
    SIM_ASSERT(s->width == s->base);
    for (size_t i = 0; i < s->n; i++)
        fprintf(a.f, "%zu,1,%.0f\n", i, sim_series_get(s, i));
    return kdsim_aclose(&a);
}
