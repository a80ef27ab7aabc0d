/* scenario.c - the scenario schema: YAML keys to model configs, with validation.
 *
 * Each section has a walker that checks its keys, reads each value with a typed getter
 * (which reports bad values with their position) and fills the config, starting from
 * the models' defaults. Cross-field rules (a record larger than the stream allows, a
 * batch above the PutRecords limits) are checked after the fields. Nothing is built
 * until the whole file is clean.
 */
#include "scenario.h"
#include "scenario_int.h"
#include "scenario_replay.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "kds_bucket.h"
#include "kds_hashkey.h"
#include "sim_err.h"
#include "sim_rng.h"
#include "sim_units.h"

void *kdsim_keep(kdsim_scenario *sc, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    SIM_ASSERT(p != NULL);
    if (sc->n_blocks == sc->cap_blocks) {
        sc->cap_blocks = sc->cap_blocks ? sc->cap_blocks * 2 : 16;
        sc->blocks = realloc(sc->blocks, sc->cap_blocks * sizeof *sc->blocks);
        SIM_ASSERT(sc->blocks != NULL);
    }
    sc->blocks[sc->n_blocks++] = p;
    return p;
}

void kdsim_add_input(kdsim_scenario *sc, const char *key, const char *file, const char *path)
{
    if (sc->n_inputs == sc->cap_inputs) {
        sc->cap_inputs = sc->cap_inputs ? sc->cap_inputs * 2 : 4;
        sc->inputs = realloc(sc->inputs, sc->cap_inputs * sizeof *sc->inputs);
        SIM_ASSERT(sc->inputs != NULL);
    }
    char *k = kdsim_keep(sc, strlen(key) + 1, 1);
    memcpy(k, key, strlen(key) + 1);
    char *p = kdsim_keep(sc, strlen(path) + 1, 1);
    memcpy(p, path, strlen(path) + 1);
    sc->inputs[sc->n_inputs++] = (kdsim_input){k, file, p};
}

gsl_rng *kdsim_load_rng_new(kdsim_scenario *sc, const char *name)
{
    if (sc->n_rngs == sc->cap_rngs) {
        sc->cap_rngs = sc->cap_rngs ? sc->cap_rngs * 2 : 4;
        sc->rngs = realloc(sc->rngs, sc->cap_rngs * sizeof *sc->rngs);
        SIM_ASSERT(sc->rngs != NULL);
    }
    char *copy = kdsim_keep(sc, strlen(name) + 1, 1);
    memcpy(copy, name, strlen(name) + 1);
    uint32_t seed = sim_seed_derive(sc->world.seed, name, 0);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    SIM_ASSERT(r != NULL);
    gsl_rng_set(r, seed);
    sc->rngs[sc->n_rngs++] = (kdsim_load_rng){copy, seed};
    return r;
}

/* ---- stream ------------------------------------------------------------------------ */

static const char *const MODES[] = {"provisioned", "on_demand_standard", "on_demand_advantage",
                                    NULL};

/* A shard's token bucket holds at most KDS_BUCKET_MAX units: refuse a rate times its
 * burst above that, at the burst (with the default burst of 1 s, every rate allowed
 * fits). */
static void check_depth(ywalk *w, yaml_node_t *m, const char *path, const char *rate_key,
                        uint64_t rate, const char *burst_key, double burst_s, const char *unit)
{
    double depth = (double)rate * burst_s;
    if (depth + 0.5 < (double)KDS_BUCKET_MAX)
        return;
    yaml_node_t *at = yw_get(w, m, burst_key);
    char kp[PATH];
    yw_error(w, at ? at : m, yw_path(kp, sizeof kp, path, burst_key),
             "%s x %s is %.4g %s, above the %.4g %s a token bucket holds (a limit of "
             "kdsim's, not of AWS); set a shorter %s or a lower %s",
             rate_key, burst_key, depth, unit, (double)KDS_BUCKET_MAX, unit, burst_key, rate_key);
}

static void load_limits(ywalk *w, yaml_node_t *m, const char *path, kds_stream_cfg *c)
{
    static const char *const keys[] = {
        "write_bytes", "write_records", "write_burst", "large_record_tank",
        "large_record_refill", "read_calls", "read_bytes", "read_records", "read_burst",
        "efo_burst",
        "max_records_per_call", "max_bytes_per_call", "big_read_penalty",
        "short_read_penalty", "iterator_ttl", NULL};
    if (!yw_is_map(w, m, path))
        return;
    yw_check_keys(w, m, path, keys);
    double v;
    /* Byte rates and the tank up to 8 GiB(/s), under KDS_BUCKET_MAX: far above any
     * shard's, and a bucket's levels stay exact integers. */
    const double max_rate = (double)(UINT64_C(8) << 30);
    if (yw_byte_rate(w, m, path, "write_bytes", false, 1, max_rate, &v))
        c->write_bytes_per_s = (uint64_t)llround(v);
    if (yw_count_rate(w, m, path, "write_records", false, "records", 1, 1e9, &v))
        c->write_records_per_s = (uint64_t)llround(v);
    sim_time t;
    if (yw_duration(w, m, path, "write_burst", false, SIM_MS(1), SIM_S(3600), &t))
        c->write_burst_s = sim_to_s(t);
    uint64_t b;
    if (yw_bytes(w, m, path, "large_record_tank", false, 1, UINT64_C(8) << 30, &b))
        c->large_record_tank = b;
    if (yw_byte_rate(w, m, path, "large_record_refill", false, 1, max_rate, &v))
        c->large_record_refill = (uint64_t)llround(v);
    if (yw_count_rate(w, m, path, "read_calls", false, "calls", 1, 1e6, &v))
        c->read_calls_per_s = (uint64_t)llround(v);
    if (yw_byte_rate(w, m, path, "read_bytes", false, 1, max_rate, &v))
        c->read_bytes_per_s = (uint64_t)llround(v);
    if (yw_count_rate(w, m, path, "read_records", false, "records", 1, 1e9, &v))
        c->read_records_per_s = (uint64_t)llround(v);
    if (yw_duration(w, m, path, "read_burst", false, SIM_MS(1), SIM_S(3600), &t))
        c->read_burst_s = sim_to_s(t);
    if (yw_duration(w, m, path, "efo_burst", false, SIM_MS(1), SIM_S(3600), &t))
        c->efo_burst_s = sim_to_s(t);
    uint64_t u;
    if (yw_u64(w, m, path, "max_records_per_call", false, 1, 10000, &u))
        c->max_records_per_call = (uint32_t)u;
    if (yw_bytes(w, m, path, "max_bytes_per_call", false, 1, 10 * KDS_MIB, &b))
        c->max_bytes_per_call = b;
    if (yw_duration(w, m, path, "big_read_penalty", false, 0, SIM_HOUR(1), &t))
        c->big_read_penalty = t;
    if (yw_duration(w, m, path, "short_read_penalty", false, 0, SIM_HOUR(1), &t))
        c->short_read_penalty = t;
    if (yw_duration(w, m, path, "iterator_ttl", false, SIM_S(1), SIM_DAY(1), &t))
        c->iterator_ttl = t;
    check_depth(w, m, path, "write_bytes", c->write_bytes_per_s, "write_burst", c->write_burst_s,
                "B");
    check_depth(w, m, path, "write_records", c->write_records_per_s, "write_burst",
                c->write_burst_s, "records");
    check_depth(w, m, path, "read_calls", c->read_calls_per_s, "read_burst", c->read_burst_s,
                "calls");
    check_depth(w, m, path, "read_bytes", c->read_bytes_per_s, "read_burst", c->read_burst_s,
                "B");
    check_depth(w, m, path, "read_records", c->read_records_per_s, "read_burst",
                c->read_burst_s, "records");
}

static void load_stream(kdsim_scenario *sc, ywalk *w, yaml_node_t *m)
{
    static const char *const keys[] = {"name", "mode", "shards", "retention",
                                       "max_record_size", "internal_failure_rate", "limits",
                                       "record_distribution", "resharding", "on_demand", NULL};
    kds_stream_cfg *c = &sc->world.stream;
    const char *path = "stream";
    if (!yw_is_map(w, m, path))
        return;
    yw_check_keys(w, m, path, keys);
    if (yw_str(w, m, path, "name", false, &c->name))
        kdsim_check_name(w, m, path, "name", c->name);
    int mode = 0;
    bool mode_ok = yw_enum(w, m, path, "mode", false, MODES, &mode);
    if (mode_ok)
        c->mode = (kds_mode)mode;
    /* On-demand streams start at 4 shards (model.md section 7); a provisioned stream
     * must say how many. With a bad mode, the user's intent is unknown: do not pile a
     * "missing shards" error on top of the bad mode. */
    c->shards = c->mode == KDS_MODE_PROVISIONED ? 1 : 4;
    bool need_shards = !yw_get(w, m, "mode") || (mode_ok && c->mode == KDS_MODE_PROVISIONED);
    uint64_t u;
    if (yw_u64(w, m, path, "shards", need_shards, 1, MAX_SHARDS, &u)) {
        c->shards = (uint32_t)u;
        /* A new on-demand stream has 4 shards (4 MiB/s, 4,000 records/s) and never
         * keeps fewer (model.md section 7); more stand for one that has scaled. */
        if (mode_ok && c->mode != KDS_MODE_PROVISIONED && u < 4) {
            char kp[PATH];
            yw_error(w, yw_get(w, m, "shards"), yw_path(kp, sizeof kp, path, "shards"),
                     "an on-demand stream starts with 4 shards (4 MiB/s, 4,000 records/s) and "
                     "keeps at least those, got %" PRIu64 "; give 4 or more (a stream that "
                     "has scaled) or leave shards out",
                     u);
        }
    }
    sim_time t;
    if (yw_duration(w, m, path, "retention", false, SIM_HOUR(24), SIM_HOUR(8760), &t))
        c->retention = t;
    uint64_t b;
    if (yw_bytes(w, m, path, "max_record_size", false, KDS_MIB, 10 * KDS_MIB, &b)) {
        c->max_record_size = b;
        if (b % KDS_KIB != 0) {
            char kp[PATH];
            yw_error(w, yw_get(w, m, "max_record_size"),
                     yw_path(kp, sizeof kp, path, "max_record_size"),
                     "UpdateMaxRecordSize takes whole KiB (1024 to 10240 KiB), got %" PRIu64
                     " B, which is not a multiple of 1024 B",
                     b);
        }
    }
    double d;
    if (yw_double(w, m, path, "internal_failure_rate", false, 0, 1, &d))
        c->internal_failure_rate = d;
    yaml_node_t *lim = yw_get(w, m, "limits");
    if (lim) {
        char kp[PATH];
        load_limits(w, lim, yw_path(kp, sizeof kp, path, "limits"), c);
    }
    kdsim_load_capacity(sc, w, m);
}

/* ---- producers --------------------------------------------------------------------- */

static const char *const RATE_KINDS[] = {"constant", "steps", "ramp", "daily", "replay", NULL};

static void load_rate(kdsim_scenario *sc, ywalk *w, yaml_node_t *pm, const char *path,
                      kds_rate *r)
{
    char kp[PATH];
    yw_path(kp, sizeof kp, path, "rate");
    yaml_node_t *n = yw_get(w, pm, "rate");
    if (!n) {
        yw_error(w, pm, path, "missing required key 'rate' (for example rate: 1000 records/s)");
        return;
    }
    double v;
    if (n->type == YAML_SCALAR_NODE) {
        if (yw_count_rate(w, pm, path, "rate", true, "records", 0, MAX_RATE, &v))
            *r = kds_rate_constant(v);
        return;
    }
    if (!yw_is_map(w, n, kp))
        return;
    int kind = 0;
    if (!yw_enum(w, n, kp, "profile", true, RATE_KINDS, &kind))
        return;
    r->kind = (kds_rate_kind)kind;
    switch (r->kind) {
    case KDS_RATE_CONSTANT: {
        static const char *const keys[] = {"profile", "value", NULL};
        yw_check_keys(w, n, kp, keys);
        if (yw_count_rate(w, n, kp, "value", true, "records", 0, MAX_RATE, &v))
            r->rate = v;
        break;
    }
    case KDS_RATE_STEPS: {
        static const char *const keys[] = {"profile", "initial", "steps", NULL};
        static const char *const skeys[] = {"at", "rate", NULL};
        yw_check_keys(w, n, kp, keys);
        r->rate = 0;
        if (yw_count_rate(w, n, kp, "initial", false, "records", 0, MAX_RATE, &v))
            r->rate = v;
        char sp[PATH];
        yaml_node_t *seq = yw_get(w, n, "steps");
        yw_path(sp, sizeof sp, kp, "steps");
        if (!seq) {
            yw_error(w, n, kp, "missing required key 'steps' (a list of {at, rate})");
            break;
        }
        if (!yw_is_seq(w, seq, sp))
            break;
        size_t k = yw_seq_len(w, seq);
        r->steps = kdsim_keep(sc, k, sizeof *r->steps);
        r->n_steps = k;
        sim_time prev = -1;
        for (size_t i = 0; i < k; i++) {
            char ip[PATH];
            yaml_node_t *it = yw_seq_item(w, seq, i);
            yw_index(ip, sizeof ip, sp, i);
            if (!yw_is_map(w, it, ip))
                continue;
            yw_check_keys(w, it, ip, skeys);
            bool at_ok = yw_duration(w, it, ip, "at", true, 0, MAX_DURATION, &r->steps[i].at);
            yw_count_rate(w, it, ip, "rate", true, "records", 0, MAX_RATE, &r->steps[i].rate);
            if (!at_ok)
                continue;
            if (r->steps[i].at <= prev)
                yw_error(w, it, ip, "steps must be in increasing time order");
            prev = r->steps[i].at;
        }
        break;
    }
    case KDS_RATE_RAMP: {
        static const char *const keys[] = {"profile", "from", "to", "start", "end", NULL};
        yw_check_keys(w, n, kp, keys);
        yw_count_rate(w, n, kp, "from", true, "records", 0, MAX_RATE, &r->from);
        yw_count_rate(w, n, kp, "to", true, "records", 0, MAX_RATE, &r->to);
        bool s_ok = yw_duration(w, n, kp, "start", true, 0, MAX_DURATION, &r->ramp_start);
        bool e_ok = yw_duration(w, n, kp, "end", true, 0, MAX_DURATION, &r->ramp_end);
        if (s_ok && e_ok && r->ramp_end <= r->ramp_start)
            yw_error(w, n, kp, "end must be after start");
        break;
    }
    case KDS_RATE_DAILY: {
        static const char *const keys[] = {"profile", "mean", "amplitude", "peak", NULL};
        yw_check_keys(w, n, kp, keys);
        yw_count_rate(w, n, kp, "mean", true, "records", 0, MAX_RATE, &r->rate);
        r->amplitude = 0.5;
        yw_double(w, n, kp, "amplitude", false, 0, 1, &r->amplitude);
        r->peak = SIM_HOUR(14);
        sim_time pk = r->peak;
        if (yw_duration(w, n, kp, "peak", false, 0, SIM_TIME_MAX, &pk) && pk >= SIM_DAY(1)) {
            char pp[PATH];
            yw_error(w, yw_get(w, n, "peak"), yw_path(pp, sizeof pp, kp, "peak"),
                     "must be a time of day, from 0s up to but not including 24h, got "
                     "%s; for midnight write 0s",
                     (const char *)yw_get(w, n, "peak")->data.scalar.value);
        } else {
            r->peak = pk;
        }
        break;
    }
    case KDS_RATE_TABLE: /* `replay`: a CloudWatch trace (scenario_replay.c) */
        kdsim_load_replay(sc, w, pm, n, kp, r);
        break;
    }
}

static const char *const KEY_KINDS[] = {"random", "uniform", "zipf", "fixed", "explicit", NULL};

/* The keys each kind of `keys` reads, by KEY_KINDS index. */
static const char *const KEYS_OF_KIND[][6] = {
    {"kind", NULL},
    {"kind", "count", "prefix", "exact_keys", NULL},
    {"kind", "count", "s", "prefix", "exact_keys", NULL},
    {"kind", "key", NULL},
    {"kind", "hash_key", NULL},
};

static bool in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return true;
    return false;
}

/* A key of another kind (`count` beside kind: fixed) would be ignored without a word:
 * refuse it, naming the kinds it belongs to. Unknown keys are yw_check_keys's. */
static void check_key_kind(ywalk *w, yaml_node_t *n, const char *path, int kind)
{
    const char *const *mine = KEYS_OF_KIND[kind];
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *kn = yaml_document_get_node(&w->d->doc, pr->key);
        if (!kn || kn->type != YAML_SCALAR_NODE)
            continue;
        const char *name = (const char *)kn->data.scalar.value;
        if (in_list(mine, name))
            continue;
        const char *of[sizeof KEYS_OF_KIND / sizeof KEYS_OF_KIND[0]];
        size_t n_of = 0;
        for (size_t i = 0; KEY_KINDS[i]; i++)
            if (in_list(KEYS_OF_KIND[i], name))
                of[n_of++] = KEY_KINDS[i];
        if (n_of == 0)
            continue; /* not a key of any kind: reported as unknown */
        char owners[64] = "", allowed[96] = "";
        for (size_t i = 0; i < n_of; i++)
            snprintf(owners + strlen(owners), sizeof owners - strlen(owners), "%s%s",
                     i == 0 ? "" : i + 1 < n_of ? ", " : " or ", of[i]);
        if (!mine[1]) {
            snprintf(allowed, sizeof allowed, "kind %s takes no other key", KEY_KINDS[kind]);
        } else {
            snprintf(allowed, sizeof allowed, "the keys of kind %s are kind", KEY_KINDS[kind]);
            for (size_t i = 1; mine[i]; i++)
                snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                         mine[i + 1] ? ", " : " and ", mine[i]);
        }
        yw_error(w, kn, path, "'%s' does not apply to kind: %s (it is for kind %s); %s", name,
                 KEY_KINDS[kind], owners, allowed);
    }
}

static void load_keys(ywalk *w, yaml_node_t *pm, const char *path, kds_keys_cfg *k)
{
    char kp[PATH];
    yw_path(kp, sizeof kp, path, "keys");
    yaml_node_t *n = yw_get(w, pm, "keys");
    if (!n)
        return; /* random keys */
    if (!yw_is_map(w, n, kp))
        return;
    static const char *const keys[] = {"kind", "count", "prefix", "s", "key", "hash_key",
                                       "exact_keys", NULL};
    yw_check_keys(w, n, kp, keys);
    int kind = 0;
    if (!yw_enum(w, n, kp, "kind", true, KEY_KINDS, &kind))
        return;
    k->kind = (kds_keys_kind)kind;
    check_key_kind(w, n, kp, kind);
    uint64_t u;
    switch (k->kind) {
    case KDS_KEYS_RANDOM:
        break;
    case KDS_KEYS_ZIPF:
        yw_double(w, n, kp, "s", false, 0.01, 10, &k->zipf_s);
        /* fall through */
    case KDS_KEYS_UNIFORM: {
        bool count_ok = yw_u64(w, n, kp, "count", true, 1, UINT64_C(1000000000000), &u);
        if (count_ok)
            k->count = u;
        bool prefix_ok = yw_str(w, n, kp, "prefix", false, &k->prefix);
        if (yw_u64(w, n, kp, "exact_keys", false, 0, 10000000, &u))
            k->exact_keys = u;
        /* The keys are prefix0 .. prefix<count - 1>; the longest must still be a
         * partition key AWS accepts (1 to 256 characters). */
        if (count_ok && prefix_ok) {
            char last[32], pp[PATH];
            size_t len = kdsim_utf8_chars(k->prefix) +
                         (size_t)snprintf(last, sizeof last, "%" PRIu64, k->count - 1);
            if (len > 256)
                yw_error(w, yw_get(w, n, "prefix"), yw_path(pp, sizeof pp, kp, "prefix"),
                         "a partition key has 1 to 256 characters, and the last key here "
                         "(the prefix and %s) has %zu; shorten the prefix",
                         last, len);
        }
        break;
    }
    case KDS_KEYS_FIXED:
        if (yw_str(w, n, kp, "key", true, &k->fixed)) {
            size_t len = kdsim_utf8_chars(k->fixed);
            char fp[PATH];
            if (len < 1 || len > 256)
                yw_error(w, yw_get(w, n, "key"), yw_path(fp, sizeof fp, kp, "key"),
                         "a partition key has 1 to 256 characters, got %zu", len);
        }
        break;
    case KDS_KEYS_EXPLICIT: {
        const char *text = NULL;
        if (yw_str(w, n, kp, "hash_key", true, &text) &&
            kds_hashkey_parse_dec(text, &k->explicit_key) != 0) {
            char hp[PATH];
            yw_error(w, yw_get(w, n, "hash_key"), yw_path(hp, sizeof hp, kp, "hash_key"),
                     "expected a decimal hash key from 0 to 2^128 - 1, got \"%s\"", text);
        }
        break;
    }
    }
}

static const char *const APIS[] = {"put_records", "put_record", NULL};
static const char *const ARRIVALS[] = {"even", "poisson", NULL};

static void load_producer(kdsim_scenario *sc, ywalk *w, yaml_node_t *pm, const char *path,
                          kds_producer_cfg *c)
{
    static const char *const keys[] = {"name", "rate", "arrivals", "record_size", "keys",
                                       "api", "batch", "clients", "latency", "retry",
                                       "timeouts", "start", "stop", "poison_at", "aggregation",
                                       "sequence_number_for_ordering", NULL};
    kds_producer_cfg_defaults(c);
    if (!yw_is_map(w, pm, path))
        return;
    yw_check_keys(w, pm, path, keys);
    if (yw_str(w, pm, path, "name", true, &c->name))
        kdsim_check_name(w, pm, path, "name", c->name);
    load_rate(sc, w, pm, path, &c->rate);
    int e = 0;
    if (yw_enum(w, pm, path, "arrivals", false, ARRIVALS, &e))
        c->poisson = e == 1;
    if (!kdsim_replay_record_size(w, pm, path, &c->rate, &c->size))
        yw_dist(w, pm, path, "record_size", true, 'b', &c->size);
    load_keys(w, pm, path, &c->keys);
    if (yw_enum(w, pm, path, "api", false, APIS, &e))
        c->api = (kds_api)e;
    yw_bool(w, pm, path, "sequence_number_for_ordering", false, &c->ordered);
    char kp[PATH];
    yaml_node_t *b = yw_get(w, pm, "batch");
    if (b && yw_is_map(w, b, yw_path(kp, sizeof kp, path, "batch"))) {
        static const char *const bkeys[] = {"records", "bytes", "linger", NULL};
        yw_check_keys(w, b, kp, bkeys);
        uint64_t u;
        if (yw_u64(w, b, kp, "records", false, 1, 500, &u))
            c->batch_records = (uint32_t)u;
        yw_bytes(w, b, kp, "bytes", false, 1, 10 * KDS_MIB, &c->batch_bytes);
        yw_duration(w, b, kp, "linger", false, 0, SIM_S(60), &c->linger);
        if (c->api == KDS_API_PUT_RECORD)
            yw_error(w, b, kp, "applies to api: put_records (PutRecord sends one record a "
                               "call, unbatched); remove batch or set api: put_records");
    }
    uint64_t u;
    if (yw_u64(w, pm, path, "clients", false, 1, MAX_CLIENTS, &u))
        c->clients = (uint32_t)u;
    yw_dist(w, pm, path, "latency", false, 'd', &c->latency_ms);
    yaml_node_t *r = yw_get(w, pm, "retry");
    if (r && yw_is_map(w, r, yw_path(kp, sizeof kp, path, "retry"))) {
        static const char *const rkeys[] = {"max_attempts", "backoff_base", "backoff_max", NULL};
        yw_check_keys(w, r, kp, rkeys);
        if (yw_u64(w, r, kp, "max_attempts", false, 1, 1000, &u))
            c->max_attempts = (uint32_t)u;
        yw_duration(w, r, kp, "backoff_base", false, 0, SIM_HOUR(1), &c->backoff_base);
        yw_duration(w, r, kp, "backoff_max", false, 0, SIM_HOUR(1), &c->backoff_max);
    }
    yaml_node_t *t = yw_get(w, pm, "timeouts");
    if (t && yw_is_map(w, t, yw_path(kp, sizeof kp, path, "timeouts"))) {
        static const char *const tkeys[] = {"rate", "after", NULL};
        yw_check_keys(w, t, kp, tkeys);
        yw_double(w, t, kp, "rate", false, 0, 1, &c->timeout_rate);
        yw_duration(w, t, kp, "after", false, SIM_MS(1), SIM_HOUR(1), &c->timeout);
    }
    yaml_node_t *ag = yw_get(w, pm, "aggregation");
    if (ag && yw_is_map(w, ag, yw_path(kp, sizeof kp, path, "aggregation"))) {
        static const char *const akeys[] = {"records", "overhead", NULL};
        yw_check_keys(w, ag, kp, akeys);
        if (yw_u64(w, ag, kp, "records", true, 1, 100000, &u))
            c->aggregate = (uint32_t)u;
        yw_bytes(w, ag, kp, "overhead", false, 0, KDS_MIB, &c->aggregate_overhead);
    }
    yw_duration(w, pm, path, "start", false, 0, MAX_DURATION, &c->start);
    yw_duration(w, pm, path, "stop", false, 0, MAX_DURATION, &c->stop);
    yaml_node_t *pz = yw_get(w, pm, "poison_at");
    if (pz && yw_is_seq(w, pz, yw_path(kp, sizeof kp, path, "poison_at"))) {
        size_t k = yw_seq_len(w, pz);
        c->marks = kdsim_keep(sc, k, sizeof *c->marks);
        c->n_marks = k;
        for (size_t i = 0; i < k; i++) {
            char ip[PATH];
            yaml_node_t *it = yw_seq_item(w, pz, i);
            yw_index(ip, sizeof ip, kp, i);
            const char *text = yw_scalar(w, it, ip);
            if (!text)
                continue;
            int rc = sim_parse_duration(text, &c->marks[i]);
            if (rc)
                yw_error(w, it, ip, "expected %s, got \"%s\"", sim_units_hint('d'), text);
            else if (i > 0 && c->marks[i] < c->marks[i - 1])
                yw_error(w, it, ip, "times must be in increasing order");
        }
    }
}

/* Cross-field rules of one producer against the stream. */
static void check_producer(ywalk *w, yaml_node_t *pm, const char *path,
                           const kds_producer_cfg *c, const kds_stream_cfg *s)
{
    if (c->size.kind == SIM_DIST_CONST && c->size.a < 1) {
        char kp[PATH];
        yw_error(w, yw_get(w, pm, "record_size"), yw_path(kp, sizeof kp, path, "record_size"),
                 "a record holds at least its partition key: record_size must be at least 1 B");
    }
    if (c->size.kind == SIM_DIST_CONST && c->size.a > (double)s->max_record_size) {
        char kp[PATH], a[32], b[32];
        sim_fmt_bytes(a, sizeof a, (uint64_t)c->size.a);
        sim_fmt_bytes(b, sizeof b, s->max_record_size);
        if (strcmp(a, b) == 0) { /* "1 MiB is above 1 MiB": the exact bytes say why */
            snprintf(a, sizeof a, "%" PRIu64 " B", (uint64_t)c->size.a);
            snprintf(b, sizeof b, "%" PRIu64 " B", s->max_record_size);
        }
        yw_error(w, yw_get(w, pm, "record_size"), yw_path(kp, sizeof kp, path, "record_size"),
                 "%s is above stream.max_record_size (%s); raise stream.max_record_size "
                 "(up to 10 MiB) or send smaller records",
                 a, b);
    }
    /* AWS counts a record's size with its partition key's UTF-8 bytes: a record cannot be
     * smaller than its key. */
    if (c->size.kind == SIM_DIST_CONST && c->keys.kind == KDS_KEYS_FIXED && c->keys.fixed &&
        c->size.a < (double)strlen(c->keys.fixed)) {
        char kp[PATH], a[32];
        yw_error(w, yw_get(w, pm, "record_size"), yw_path(kp, sizeof kp, path, "record_size"),
                 "%s is below the %zu B of the partition key (keys.key), which the record's "
                 "size includes as AWS counts it; give record_size as data plus key, at "
                 "least %zu B",
                 sim_fmt_bytes(a, sizeof a, (uint64_t)c->size.a), strlen(c->keys.fixed),
                 strlen(c->keys.fixed));
    }
    if (s->auto_distribution && yw_get(w, pm, "aggregation")) {
        char kp[PATH];
        yw_error(w, yw_get(w, pm, "aggregation"), yw_path(kp, sizeof kp, path, "aggregation"),
                 "KPL aggregation does not work with service-managed partition keys "
                 "(stream.record_distribution: auto); remove aggregation or set "
                 "stream.record_distribution: user_partition_key");
    }
    /* A KPL aggregate of constant-size records has a known size too. */
    uint64_t agg_size = c->aggregate > 1 && c->size.kind == SIM_DIST_CONST
                            ? (uint64_t)c->size.a * c->aggregate + c->aggregate_overhead
                            : 0;
    if (agg_size > s->max_record_size && c->size.a <= (double)s->max_record_size) {
        char kp[PATH], a[32], b[32];
        yw_error(w, yw_get(w, pm, "aggregation"), yw_path(kp, sizeof kp, path, "aggregation"),
                 "an aggregated record of %u records is %s, above stream.max_record_size "
                 "(%s); aggregate fewer records",
                 c->aggregate, sim_fmt_bytes(a, sizeof a, agg_size),
                 sim_fmt_bytes(b, sizeof b, s->max_record_size));
    }
    if (c->stop >= 0 && c->stop <= c->start && yw_get(w, pm, "stop")) {
        char kp[PATH], a[32], b[32];
        yw_error(w, yw_get(w, pm, "stop"), yw_path(kp, sizeof kp, path, "stop"),
                 "must be after start (%s), got %s; set a later stop, or an earlier start",
                 sim_fmt_duration(a, sizeof a, c->start), sim_fmt_duration(b, sizeof b, c->stop));
    }
    if (c->ordered) {
        char kp[PATH];
        yw_path(kp, sizeof kp, path, "sequence_number_for_ordering");
        if (c->api != KDS_API_PUT_RECORD)
            yw_error(w, yw_get(w, pm, "sequence_number_for_ordering"), kp,
                     "SequenceNumberForOrdering is a PutRecord parameter; set api: put_record");
        if (s->auto_distribution)
            yw_error(w, yw_get(w, pm, "sequence_number_for_ordering"), kp,
                     "InvalidArgumentException: SequenceNumberForOrdering is not accepted with "
                     "service-managed partition keys (stream.record_distribution: auto), which "
                     "keep no per-key order");
    }
    if (c->backoff_max < c->backoff_base)
        yw_error(w, yw_get(w, pm, "retry"), path, "retry.backoff_max is below retry.backoff_base");
}

/* ---- top level --------------------------------------------------------------------- */

static char *file_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        n = (size_t)(dot - base);
    char *s = malloc(n + 1);
    SIM_ASSERT(s != NULL);
    memcpy(s, base, n);
    s[n] = 0;
    return s;
}

size_t kdsim_utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80; /* count lead bytes, not continuations */
    return n;
}

bool kdsim_name_ok(const char *name)
{
    size_t n = strlen(name);
    bool ok = n >= 1 && n <= 128;
    for (size_t i = 0; i < n && ok; i++) {
        char ch = name[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '.' || ch == '-';
    }
    return ok;
}

bool kdsim_check_name(ywalk *w, yaml_node_t *map, const char *path, const char *key,
                      const char *name)
{
    bool ok = kdsim_name_ok(name);
    if (!ok) {
        char kp[PATH];
        yw_error(w, yw_get(w, map, key), yw_path(kp, sizeof kp, path, key),
                 "names have 1 to 128 letters, digits, '_', '.' or '-' (as AWS's stream and "
                 "consumer names), got \"%s\"", name);
    }
    return ok;
}

/* Names must be unique within their list: they name random streams and report rows. */
static void check_unique(ywalk *w, yaml_node_t *seq, const char *list, const char **names,
                         size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (names[i] && names[j] && strcmp(names[i], names[j]) == 0) {
                char ip[PATH];
                yw_index(ip, sizeof ip, list, i);
                yw_error(w, yw_seq_item(w, seq, i), ip, "name '%s' is already used by %s[%zu]",
                         names[i], list, j);
            }
}

static int load_any(kdsim_scenario *sc, const char *path, const char *text, size_t len,
                    const char *const *sets, size_t n_sets, ydiag *g);

int kdsim_scenario_load(kdsim_scenario *sc, const char *path, const char *const *sets,
                        size_t n_sets, ydiag *g)
{
    return load_any(sc, path, NULL, 0, sets, n_sets, g);
}

int kdsim_scenario_load_text(kdsim_scenario *sc, const char *name, const char *text, size_t len,
                             const char *const *sets, size_t n_sets, ydiag *g)
{
    return load_any(sc, name, text, len, sets, n_sets, g);
}

static int load_any(kdsim_scenario *sc, const char *path, const char *text, size_t len,
                    const char *const *sets, size_t n_sets, ydiag *g)
{
    memset(sc, 0, sizeof *sc);
    sc->path = path;
    sc->stem = file_stem(path);
    sc->name = sc->stem;
    sc->description = "";
    kds_world_cfg *wc = &sc->world;
    wc->seed = 1;
    wc->duration = SIM_HOUR(1);
    kds_stream_cfg_defaults(&wc->stream);

    size_t before = g->n;
    int rc =
        text ? ydoc_load_string(&sc->doc, path, text, len, g) : ydoc_load_file(&sc->doc, path, g);
    if (rc)
        return rc;
    /* An empty file is one error, not one per missing key (checked before --set, which
     * could otherwise fill the document in). */
    yaml_node_t *root = ydoc_root(&sc->doc);
    if (!root || (root->type == YAML_MAPPING_NODE &&
                  root->data.mapping.pairs.start == root->data.mapping.pairs.top)) {
        ydiag_add(g, path, NULL, "", "the scenario is empty; it needs at least duration, "
                                     "stream and producers (see README.md, Scenario reference)");
        return SIM_EINVAL;
    }
    /* An override that fails leaves the document as it was: the file's own errors are
     * still worth reporting with it. */
    for (size_t i = 0; i < n_sets; i++)
        ydoc_set_any(&sc->doc, sets[i], g); /* the forms of scenario.h */

    ywalk w = {&sc->doc, g};
    root = ydoc_root(&sc->doc); /* --set may have moved the nodes */
    if (!yw_is_map(&w, root, ""))
        return SIM_EINVAL;
    static const char *const keys[] = {"name", "description", "seed", "duration", "stream",
                                       "producers", "consumers", "billing", NULL};
    yw_check_keys(&w, root, "", keys);
    yw_str(&w, root, "", "name", false, &sc->name);
    if (yw_str(&w, root, "", "description", false, &sc->description)) {
        /* A folded or literal block ends with a newline; reports add their own. */
        size_t n = strlen(sc->description);
        while (n > 0 && (sc->description[n - 1] == '\n' || sc->description[n - 1] == ' '))
            n--;
        char *d = kdsim_keep(sc, n + 1, 1);
        memcpy(d, sc->description, n);
        sc->description = d;
    }
    yw_u64(&w, root, "", "seed", false, 0, KDSIM_SEED_MAX, &wc->seed);
    yw_duration(&w, root, "", "duration", true, SIM_MS(1), MAX_DURATION, &wc->duration);

    yaml_node_t *sm = yw_get(&w, root, "stream");
    if (!sm)
        yw_error(&w, root, "", "missing required key 'stream'");
    else
        load_stream(sc, &w, sm);

    yaml_node_t *ps = yw_get(&w, root, "producers");
    if (ps && yw_is_seq(&w, ps, "producers")) {
        size_t n = yw_seq_len(&w, ps);
        if (n > MAX_PRODUCERS) {
            yw_error(&w, ps, "producers", "at most %d producers, got %zu (use clients: N for "
                                          "many identical senders)", MAX_PRODUCERS, n);
            n = 0;
        }
        wc->producers = kdsim_keep(sc, n, sizeof *wc->producers);
        wc->n_producers = n;
        const char **names = kdsim_keep(sc, n, sizeof *names);
        for (size_t i = 0; i < n; i++) {
            char ip[PATH];
            yw_index(ip, sizeof ip, "producers", i);
            yaml_node_t *pm = yw_seq_item(&w, ps, i);
            load_producer(sc, &w, pm, ip, &wc->producers[i]);
            if (pm->type == YAML_MAPPING_NODE) {
                check_producer(&w, pm, ip, &wc->producers[i], &wc->stream);
                names[i] = yw_get(&w, pm, "name") ? wc->producers[i].name : NULL;
            }
        }
        check_unique(&w, ps, "producers", names, n);
        uint64_t clients = 0;
        for (size_t i = 0; i < n; i++)
            clients += wc->producers[i].clients;
        if (clients > MAX_CLIENTS_TOTAL)
            yw_error(&w, ps, "producers",
                     "%" PRIu64 " clients in all producers together; at most %d (each is "
                     "simulated on its own: give fewer clients the same rate)",
                     clients, MAX_CLIENTS_TOTAL);
    } else if (!ps) {
        yw_error(&w, root, "", "missing required key 'producers' (a list of producers)");
    }

    yaml_node_t *cs = yw_get(&w, root, "consumers");
    if (cs && yw_is_seq(&w, cs, "consumers")) {
        size_t n = yw_seq_len(&w, cs);
        if (n > MAX_CONSUMERS) {
            yw_error(&w, cs, "consumers", "at most %d consumers, got %zu", MAX_CONSUMERS, n);
            n = 0;
        }
        wc->consumers = kdsim_keep(sc, n, sizeof *wc->consumers);
        wc->n_consumers = n;
        const char **names = kdsim_keep(sc, n, sizeof *names);
        size_t efo = 0;
        for (size_t i = 0; i < n; i++) {
            char ip[PATH];
            yw_index(ip, sizeof ip, "consumers", i);
            yaml_node_t *cm = yw_seq_item(&w, cs, i);
            bool uses_efo = false;
            kdsim_load_consumer(sc, &w, cm, ip, &wc->consumers[i], &names[i], &uses_efo);
            efo += uses_efo;
        }
        check_unique(&w, cs, "consumers", names, n);
        /* RegisterStreamConsumer: at most 20 per stream, 50 under On-demand Advantage. */
        size_t max_efo = wc->stream.mode == KDS_MODE_ON_DEMAND_ADVANTAGE ? 50 : 20;
        if (efo > max_efo)
            yw_error(&w, cs, "consumers",
                     "%zu consumers use enhanced fan-out; a stream registers at most %zu "
                     "(LimitExceededException)%s",
                     efo, max_efo,
                     max_efo == 20 ? "; On-demand Advantage allows 50, or read some by polling"
                                   : "; read some by polling");
    }
    if (sm && !yw_get(&w, sm, "name")) {
        /* The stream is named after the scenario (or its file), which must then be a
         * name AWS takes too. */
        wc->stream.name = sc->name;
        yaml_node_t *nn = yw_get(&w, root, "name");
        if (!kdsim_name_ok(sc->name))
            yw_error(&w, nn ? nn : root, nn ? "name" : "",
                     "the stream takes its name from the %s when stream.name is not given, "
                     "and a stream name has 1 to 128 letters, digits, '_', '.' or '-', got "
                     "\"%s\"; set stream.name, or %s",
                     nn ? "scenario's name" : "file's name (the scenario has no name key)",
                     sc->name, nn ? "fix the name" : "give the scenario a name");
    }
    kdsim_billing_load(&w, yw_get(&w, root, "billing"), path, &sc->billing);
    return g->n > before ? SIM_EINVAL : 0;
}

void kdsim_scenario_fini(kdsim_scenario *sc)
{
    if (!sc)
        return;
    ydoc_fini(&sc->doc);
    for (size_t i = 0; i < sc->n_blocks; i++)
        free(sc->blocks[i]);
    free(sc->blocks);
    free(sc->stem);
    free(sc->inputs);
    free(sc->rngs);
    kdsim_billing_fini(&sc->billing);
    memset(sc, 0, sizeof *sc);
}
