/* scenario_capacity.c - the stream's resharding and capacity keys of a scenario:
 * stream.record_distribution, stream.resharding (events and rules) and
 * stream.on_demand (the service's scaling settings). */
#include <stdlib.h>
#include <string.h>

#include "kds_capacity.h"
#include "kds_hashkey.h"
#include "scenario_int.h"
#include "sim_err.h"
#include "sim_units.h"

/* A shard reference: "shardId-000000000002" or the index 2. */
static bool shard_ref(ywalk *w, yaml_node_t *n, const char *path, uint32_t *out)
{
    const char *t = yw_scalar(w, n, path);
    if (!t)
        return false;
    const char *digits = strncmp(t, "shardId-", 8) == 0 ? t + 8 : t;
    char *end;
    unsigned long long v = strtoull(digits, &end, 10);
    if (*digits < '0' || *digits > '9' || *end || v > 1000000) {
        yw_error(w, n, path, "expected a shard id like shardId-000000000002 (or its index), "
                             "got \"%s\"", t);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static const char *const MODES[] = {"provisioned", "on_demand_standard", "on_demand_advantage",
                                    NULL};

static void load_event(ywalk *w, yaml_node_t *e, const char *path, kds_capacity_event *ev)
{
    static const char *const keys[] = {"at", "split", "merge", "update_shard_count",
                                       "switch_mode", NULL};
    if (!yw_is_map(w, e, path))
        return;
    yw_check_keys(w, e, path, keys);
    yw_duration(w, e, path, "at", true, 0, MAX_DURATION, &ev->at);
    const char *actions[] = {"split", "merge", "update_shard_count", "switch_mode"};
    int found = 0;
    for (int i = 0; i < 4; i++)
        found += yw_get(w, e, actions[i]) != NULL;
    if (found != 1) {
        yw_error(w, e, path, "give exactly one action: split, merge, update_shard_count or "
                             "switch_mode");
        return;
    }
    char kp[PATH];
    yaml_node_t *n;
    if ((n = yw_get(w, e, "split"))) {
        ev->kind = KDS_OP_SPLIT;
        yw_path(kp, sizeof kp, path, "split");
        if (n->type == YAML_SCALAR_NODE) {
            shard_ref(w, n, kp, &ev->shard); /* split in the middle */
            return;
        }
        if (!yw_is_map(w, n, kp))
            return;
        static const char *const skeys[] = {"shard", "hash_key", NULL};
        yw_check_keys(w, n, kp, skeys);
        yaml_node_t *sn = yw_get(w, n, "shard");
        char sp[PATH];
        if (!sn)
            yw_error(w, n, kp, "missing required key 'shard'");
        else
            shard_ref(w, sn, yw_path(sp, sizeof sp, kp, "shard"), &ev->shard);
        const char *hk = NULL;
        if (yw_str(w, n, kp, "hash_key", false, &hk)) {
            if (kds_hashkey_parse_dec(hk, &ev->key) != 0)
                yw_error(w, yw_get(w, n, "hash_key"), yw_path(sp, sizeof sp, kp, "hash_key"),
                         "expected a decimal hash key from 0 to 2^128 - 1, got \"%s\"", hk);
            else
                ev->has_key = true;
        }
    } else if ((n = yw_get(w, e, "merge"))) {
        ev->kind = KDS_OP_MERGE;
        yw_path(kp, sizeof kp, path, "merge");
        if (!yw_is_seq(w, n, kp))
            return;
        if (yw_seq_len(w, n) != 2) {
            yw_error(w, n, kp, "MergeShards takes exactly two shards, got %zu",
                     yw_seq_len(w, n));
            return;
        }
        char ip[PATH];
        shard_ref(w, yw_seq_item(w, n, 0), yw_index(ip, sizeof ip, kp, 0), &ev->shard);
        shard_ref(w, yw_seq_item(w, n, 1), yw_index(ip, sizeof ip, kp, 1), &ev->other);
    } else if (yw_get(w, e, "update_shard_count")) {
        ev->kind = KDS_OP_UPDATE_COUNT;
        uint64_t u;
        if (yw_u64(w, e, path, "update_shard_count", true, 1, 100000, &u))
            ev->target = (uint32_t)u;
    } else {
        ev->kind = KDS_OP_MODE_SWITCH;
        int m = 0;
        if (yw_enum(w, e, path, "switch_mode", true, MODES, &m))
            ev->target = (uint32_t)m;
    }
}

void kdsim_load_capacity(kdsim_scenario *sc, ywalk *w, yaml_node_t *stream)
{
    kds_world_cfg *wc = &sc->world;
    kds_capacity_cfg *cc = &wc->capacity;
    kds_capacity_cfg_defaults(cc);
    kds_stream_cfg *s = &wc->stream;
    char kp[PATH];

    static const char *const DIST[] = {"user_partition_key", "auto", NULL};
    int d = 0;
    if (yw_enum(w, stream, "stream", "record_distribution", false, DIST, &d)) {
        s->auto_distribution = d == 1;
        if (s->auto_distribution && s->mode == KDS_MODE_PROVISIONED)
            yw_error(w, yw_get(w, stream, "record_distribution"), "stream.record_distribution",
                     "auto (service-managed partition keys) needs an on-demand stream; set "
                     "stream.mode to on_demand_standard or on_demand_advantage");
    }

    yaml_node_t *r = yw_get(w, stream, "resharding");
    if (r && yw_is_map(w, r, "stream.resharding")) {
        const char *path = "stream.resharding";
        static const char *const keys[] = {"duration", "update_shard_count_duration", "events",
                                           "rules", NULL};
        yw_check_keys(w, r, path, keys);
        yw_duration(w, r, path, "duration", false, 0, SIM_DAY(1), &s->reshard_duration);
        yw_duration(w, r, path, "update_shard_count_duration", false, 0, SIM_DAY(1),
                    &s->update_count_duration);
        yaml_node_t *ev = yw_get(w, r, "events");
        if (ev && yw_is_seq(w, ev, yw_path(kp, sizeof kp, path, "events"))) {
            size_t n = yw_seq_len(w, ev);
            cc->events = kdsim_keep(sc, n, sizeof *cc->events);
            cc->n_events = n;
            for (size_t i = 0; i < n; i++) {
                char ip[PATH];
                yaml_node_t *it = yw_seq_item(w, ev, i);
                load_event(w, it, yw_index(ip, sizeof ip, kp, i), &cc->events[i]);
                if (s->auto_distribution && cc->events[i].kind == KDS_OP_MODE_SWITCH &&
                    cc->events[i].target == KDS_MODE_PROVISIONED && yw_get(w, it, "switch_mode")) {
                    char sp[PATH];
                    yw_error(w, yw_get(w, it, "switch_mode"),
                             yw_path(sp, sizeof sp, ip, "switch_mode"),
                             "InvalidArgumentException: service-managed partition keys "
                             "(stream.record_distribution: auto) are on-demand only, so the "
                             "stream cannot switch to provisioned; remove the event or set "
                             "stream.record_distribution: user_partition_key");
                }
                if (i > 0 && cc->events[i].at < cc->events[i - 1].at)
                    yw_error(w, yw_seq_item(w, ev, i), ip, "events must be in time order");
            }
        }
        yaml_node_t *ru = yw_get(w, r, "rules");
        if (ru && yw_is_seq(w, ru, yw_path(kp, sizeof kp, path, "rules"))) {
            size_t n = yw_seq_len(w, ru);
            cc->rules = kdsim_keep(sc, n, sizeof *cc->rules);
            cc->n_rules = n;
            for (size_t i = 0; i < n; i++) {
                char ip[PATH];
                yaml_node_t *it = yw_seq_item(w, ru, i);
                yw_index(ip, sizeof ip, kp, i);
                if (!yw_is_map(w, it, ip))
                    continue;
                static const char *const rkeys[] = {"split_above", "for", NULL};
                yw_check_keys(w, it, ip, rkeys);
                cc->rules[i].threshold = 0.9;
                cc->rules[i].sustain = SIM_MIN(5);
                yw_double(w, it, ip, "split_above", true, 0.01, 10, &cc->rules[i].threshold);
                yw_duration(w, it, ip, "for", false, SIM_MIN(1), SIM_DAY(30),
                            &cc->rules[i].sustain);
            }
            /* Rules act while the stream is provisioned: on an on-demand stream that never
             * switches to provisioned they would never act. */
            bool provisioned = s->mode == KDS_MODE_PROVISIONED;
            for (size_t i = 0; i < cc->n_events && !provisioned; i++)
                provisioned = cc->events[i].kind == KDS_OP_MODE_SWITCH && cc->events[i].target == 0;
            if (!provisioned)
                yw_error(w, ru, kp, "split rules act on a provisioned stream, and this one is "
                                    "on-demand throughout (it splits hot shards itself: "
                                    "on_demand.hot_shard_above); set stream.mode: provisioned, "
                                    "add a switch_mode: provisioned event, or remove the rules");
        }
    }

    yaml_node_t *od = yw_get(w, stream, "on_demand");
    if (od && yw_is_map(w, od, "stream.on_demand")) {
        const char *path = "stream.on_demand";
        kds_ondemand_cfg *o = &cc->od;
        static const char *const keys[] = {"peak_factor", "peak_window", "scale_delay",
                                           "hot_shard_above", "hot_shard_delay", "min_write",
                                           "min_write_records", "region_ceiling",
                                           "scale_down_delay", "warm_throughput", NULL};
        yw_check_keys(w, od, path, keys);
        yw_double(w, od, path, "peak_factor", false, 1, 10, &o->peak_factor);
        /* The model keeps the hourly peaks of 30 days (model.md: "the previous 30 days"). */
        yw_duration(w, od, path, "peak_window", false, SIM_HOUR(1), SIM_DAY(30), &o->peak_window);
        yw_duration(w, od, path, "scale_delay", false, 0, SIM_DAY(1), &o->scale_delay);
        double v;
        if (yw_byte_rate(w, od, path, "hot_shard_above", false, 1, 1e12, &v))
            o->hot_shard_bytes = (uint64_t)v;
        yw_duration(w, od, path, "hot_shard_delay", false, 0, SIM_DAY(1), &o->hot_shard_delay);
        if (yw_byte_rate(w, od, path, "min_write", false, 1, 1e13, &v))
            o->min_bytes = (uint64_t)v;
        if (yw_count_rate(w, od, path, "min_write_records", false, "records", 1, 1e10, &v))
            o->min_records = (uint64_t)v;
        if (yw_byte_rate(w, od, path, "region_ceiling", false, 1, 1e13, &v))
            o->ceiling_bytes = (uint64_t)v;
        yw_duration(w, od, path, "scale_down_delay", false, 0, SIM_DAY(365), &o->scale_down_delay);
        yaml_node_t *wm = yw_get(w, od, "warm_throughput");
        if (wm && yw_is_seq(w, wm, yw_path(kp, sizeof kp, path, "warm_throughput"))) {
            size_t n = yw_seq_len(w, wm);
            o->warm = kdsim_keep(sc, n, sizeof *o->warm);
            o->n_warm = n;
            for (size_t i = 0; i < n; i++) {
                char ip[PATH];
                yaml_node_t *it = yw_seq_item(w, wm, i);
                yw_index(ip, sizeof ip, kp, i);
                if (!yw_is_map(w, it, ip))
                    continue;
                static const char *const wkeys[] = {"at", "write", NULL};
                yw_check_keys(w, it, ip, wkeys);
                yw_duration(w, it, ip, "at", true, 0, MAX_DURATION, &o->warm[i].at);
                if (yw_byte_rate(w, it, ip, "write", true, 0, 10.0 * (1ULL << 30), &v))
                    o->warm[i].bytes_per_s = (uint64_t)v;
            }
            if (s->mode != KDS_MODE_ON_DEMAND_ADVANTAGE)
                yw_error(w, wm, kp, "warm throughput is an On-demand Advantage feature; set "
                                    "stream.mode to on_demand_advantage");
        }
    }
}
