/* scenario_consumers.c - the `consumers` section of a scenario: the common keys, and
 * one loader per consumer kind, dispatched through a table. */
#include <inttypes.h>
#include <string.h>

#include "kds_efo.h"
#include "kds_poller.h"
#include "scenario_int.h"
#include "sim_err.h"

static const char *const STARTS[] = {"trim_horizon", "latest", "at_timestamp",
                                     "at_sequence_number", "after_sequence_number", NULL};

void kdsim_load_start(ywalk *w, yaml_node_t *cm, const char *path, kds_start_kind *start,
                      sim_time *start_time, uint64_t *start_pos)
{
    int sp = 0;
    bool sp_ok = yw_enum(w, cm, path, "start_position", false, STARTS, &sp);
    if (sp_ok)
        *start = (kds_start_kind)sp;
    bool has_ts = yw_get(w, cm, "start_timestamp") != NULL;
    bool has_seq = yw_get(w, cm, "start_sequence") != NULL;
    yw_duration(w, cm, path, "start_timestamp", false, 0, MAX_DURATION, start_time);
    yw_u64(w, cm, path, "start_sequence", false, 0, UINT64_MAX, start_pos);
    /* A start key of another position would be ignored without a word (with a bad
     * start_position, the user's intent is unknown: that error is enough). */
    bool known = sp_ok || !yw_get(w, cm, "start_position");
    char kp[PATH];
    if (known && has_ts && *start != KDS_START_AT_TIMESTAMP)
        yw_error(w, yw_get(w, cm, "start_timestamp"),
                 yw_path(kp, sizeof kp, path, "start_timestamp"),
                 "applies to start_position: at_timestamp only, and the start position here "
                 "is %s; set start_position: at_timestamp, or remove start_timestamp",
                 STARTS[*start]);
    if (known && has_seq && *start != KDS_START_AT_SEQUENCE_NUMBER &&
        *start != KDS_START_AFTER_SEQUENCE_NUMBER)
        yw_error(w, yw_get(w, cm, "start_sequence"),
                 yw_path(kp, sizeof kp, path, "start_sequence"),
                 "applies to start_position: at_sequence_number or after_sequence_number "
                 "only, and the start position here is %s; set one of them, or remove "
                 "start_sequence",
                 STARTS[*start]);
    if (*start == KDS_START_AT_TIMESTAMP && !has_ts)
        yw_error(w, cm, path, "start_position at_timestamp needs start_timestamp (a time "
                              "from the start of the run, like 10m)");
    if ((*start == KDS_START_AT_SEQUENCE_NUMBER || *start == KDS_START_AFTER_SEQUENCE_NUMBER) &&
        !has_seq)
        yw_error(w, cm, path, "start_position %s needs start_sequence (a record position)",
                 STARTS[*start]);
}

void kdsim_load_efo(ywalk *w, yaml_node_t *cm, const char *path, kds_efo_cfg *c)
{
    yw_dist(w, cm, path, "push_delay", false, 'd', &c->push_delay_ms);
    yw_dist(w, cm, path, "subscribe_latency", false, 'd', &c->subscribe_ms);
    yw_duration(w, cm, path, "push_interval", false, SIM_MS(1), SIM_MIN(1), &c->push_interval);
}

void kdsim_load_pause(ywalk *w, yaml_node_t *cm, const char *path, sim_time *at, sim_time *len)
{
    char kp[PATH];
    yaml_node_t *pa = yw_get(w, cm, "pause");
    if (pa && yw_is_map(w, pa, yw_path(kp, sizeof kp, path, "pause"))) {
        static const char *const akeys[] = {"at", "for", NULL};
        yw_check_keys(w, pa, kp, akeys);
        yw_duration(w, pa, kp, "at", true, 0, MAX_DURATION, at);
        yw_duration(w, pa, kp, "for", true, SIM_MS(1), MAX_DURATION, len);
    }
}

void kdsim_load_processing(ywalk *w, yaml_node_t *cm, const char *path, sim_dist *per_batch_ms,
                           double *per_record_ms)
{
    char kp[PATH];
    yaml_node_t *pr = yw_get(w, cm, "processing");
    if (pr && yw_is_map(w, pr, yw_path(kp, sizeof kp, path, "processing"))) {
        static const char *const pkeys[] = {"per_batch", "per_record", NULL};
        yw_check_keys(w, pr, kp, pkeys);
        yw_dist(w, pr, kp, "per_batch", false, 'd', per_batch_ms);
        sim_time t;
        if (yw_duration(w, pr, kp, "per_record", false, 0, SIM_S(60), &t))
            *per_record_ms = sim_to_ms(t);
    }
}

bool kdsim_check_whole(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                       uint64_t v, uint64_t unit, const char *unit_name, const char *suffix,
                       const char *aws)
{
    if (v % unit == 0)
        return true;
    char kp[PATH];
    yw_path(kp, sizeof kp, path, key);
    yaml_node_t *n = yw_get(w, map, key);
    const char *text = n ? yw_scalar(w, n, kp) : NULL;
    yw_error(w, n ? n : map, kp,
             "AWS's %s takes whole %s, got \"%s\"; use %" PRIu64 "%s or %" PRIu64 "%s", aws,
             unit_name, text ? text : "?", v / unit, suffix, v / unit + 1, suffix);
    return false;
}

void kdsim_refuse_keys(ywalk *w, yaml_node_t *cm, const char *path, const char *const *keys,
                       const char *retrieval)
{
    char kp[PATH];
    for (size_t i = 0; keys[i]; i++) {
        yaml_node_t *n = yw_get(w, cm, keys[i]);
        if (n)
            yw_error(w, n, yw_path(kp, sizeof kp, path, keys[i]),
                     "applies to retrieval: %s only; remove it or set retrieval: %s",
                     retrieval, retrieval);
    }
}

/* ---- polling ---------------------------------------------------------------------- */

static void load_polling(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {"name", "kind", "poll_interval", "max_records",
                                       "start_position", "start_timestamp", "start_sequence",
                                       "call_latency", "processing", "start", "pause", NULL};
    (void)sc;
    (void)uses_efo;
    cc->kind = KDS_CONSUMER_POLLING;
    kds_poller_cfg *c = &cc->polling;
    kds_poller_cfg_defaults(c);
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    yw_duration(w, cm, path, "poll_interval", false, SIM_MS(1), SIM_HOUR(1), &c->idle);
    uint64_t u;
    if (yw_u64(w, cm, path, "max_records", false, 1, 10000, &u))
        c->max_records = (uint32_t)u;
    kdsim_load_start(w, cm, path, &c->start, &c->start_time, &c->start_pos);
    yw_dist(w, cm, path, "call_latency", false, 'd', &c->call_latency_ms);
    kdsim_load_processing(w, cm, path, &c->process_ms, &c->process_ms_per_record);
    yw_duration(w, cm, path, "start", false, 0, MAX_DURATION, &c->begin);
    kdsim_load_pause(w, cm, path, &c->pause_at, &c->pause_for);
}

/* ---- enhanced fan-out --------------------------------------------------------------- */

static void load_efo(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                     kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {"name", "kind", "start_position", "start_timestamp",
                                       "start_sequence", "push_delay", "subscribe_latency",
                                       "push_interval", "processing", "start", "pause",
                                       NULL};
    kds_efo_consumer_cfg *c = kdsim_keep(sc, 1, sizeof *c);
    kds_efo_consumer_cfg_defaults(c);
    cc->kind = KDS_CONSUMER_MODEL;
    cc->make = kds_efo_make;
    cc->cfg = c;
    *uses_efo = true;
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    kdsim_load_start(w, cm, path, &c->start, &c->start_time, &c->start_pos);
    kdsim_load_efo(w, cm, path, &c->efo);
    /* One distribution per push: the mapping of the other kinds is refused by name. */
    yaml_node_t *pr = yw_get(w, cm, "processing");
    if (pr && pr->type == YAML_MAPPING_NODE &&
        (yw_get(w, pr, "per_batch") || yw_get(w, pr, "per_record"))) {
        char kp[PATH];
        yw_error(w, pr, yw_path(kp, sizeof kp, path, "processing"),
                 "an efo consumer's processing is one distribution, the time of each push "
                 "(like 5ms or {dist: exp, mean: 5ms}), not {per_batch, per_record}");
    } else {
        yw_dist(w, cm, path, "processing", false, 'd', &c->process_ms);
    }
    yw_duration(w, cm, path, "start", false, 0, MAX_DURATION, &c->begin);
    kdsim_load_pause(w, cm, path, &c->pause_at, &c->pause_for);
}

/* ---- dispatch --------------------------------------------------------------------- */

typedef void (*kind_loader)(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                            kds_consumer_cfg *cc, bool *uses_efo);

static const struct {
    const char *name;
    kind_loader load;
} KINDS[] = {
    {"polling", load_polling},
    {"efo", load_efo},
    {"lambda", kdsim_load_lambda},
    {"firehose", kdsim_load_firehose},
    {"flink", kdsim_load_flink},
    {"kcl", kdsim_load_kcl},
};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])

void kdsim_load_consumer(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_consumer_cfg *cc, const char **name, bool *uses_efo)
{
    memset(cc, 0, sizeof *cc);
    *name = NULL;
    *uses_efo = false;
    if (!yw_is_map(w, cm, path))
        return;
    if (yw_str(w, cm, path, "name", true, name))
        kdsim_check_name(w, cm, path, "name", *name);
    const char *names[N_KINDS + 1];
    for (size_t i = 0; i < N_KINDS; i++)
        names[i] = KINDS[i].name;
    names[N_KINDS] = NULL;
    int kind = 0;
    if (!yw_enum(w, cm, path, "kind", true, names, &kind))
        return;
    KINDS[kind].load(sc, w, cm, path, cc, uses_efo);
}
