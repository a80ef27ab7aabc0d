/* scenario_firehose.c - the `firehose` consumer kind of a scenario: an Amazon Data
 * Firehose stream reading the Kinesis stream into S3 objects (models/kds_firehose.h).
 * Keys are documented in docs/consumers-firehose-flink.md. */
#include "kds_firehose.h"
#include "scenario_int.h"
#include "sim_units.h"

void kdsim_load_firehose(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {"name",        "kind",         "start_position",
                                       "start_timestamp", "start_sequence", "full_backup",
                                       "aggregation", "buffering",    "call_latency",
                                       "put_latency", "delivery",     "start",
                                       NULL};
    (void)uses_efo; /* Firehose reads through the shared throughput */
    kds_firehose_cfg *c = kdsim_keep(sc, 1, sizeof *c);
    kds_firehose_cfg_defaults(c);
    cc->kind = KDS_CONSUMER_MODEL;
    cc->make = kds_firehose_make;
    cc->cfg = c;
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    kdsim_load_start(w, cm, path, &c->start, &c->start_time, &c->start_pos);
    yw_bool(w, cm, path, "full_backup", false, &c->full_backup);
    yw_double(w, cm, path, "aggregation", false, 1, 1e6, &c->aggregation);
    yw_dist(w, cm, path, "call_latency", false, 'd', &c->call_latency_ms);
    yw_dist(w, cm, path, "put_latency", false, 'd', &c->put_ms);
    yw_duration(w, cm, path, "start", false, 0, MAX_DURATION, &c->begin);

    char kp[PATH];
    yaml_node_t *bu = yw_get(w, cm, "buffering");
    if (bu && yw_is_map(w, bu, yw_path(kp, sizeof kp, path, "buffering"))) {
        static const char *const bkeys[] = {"size", "interval", NULL};
        yw_check_keys(w, bu, kp, bkeys);
        /* SizeInMBs 1-128 and IntervalInSeconds 0-900 (the S3 destination's hints),
         * whole numbers both. */
        uint64_t b;
        if (yw_bytes(w, bu, kp, "size", false, KDS_FIREHOSE_SIZE_MIN, KDS_FIREHOSE_SIZE_MAX,
                     &b) &&
            kdsim_check_whole(w, bu, kp, "size", b, KDS_MIB, "MiB", " MiB", "SizeInMBs"))
            c->buffer_size = b;
        sim_time t;
        if (yw_duration(w, bu, kp, "interval", false, 0, KDS_FIREHOSE_INTERVAL_MAX, &t) &&
            kdsim_check_whole(w, bu, kp, "interval", (uint64_t)t, SIM_S(1), "seconds", "s",
                              "IntervalInSeconds"))
            c->buffer_interval = t;
    }
    yaml_node_t *de = yw_get(w, cm, "delivery");
    if (de && yw_is_map(w, de, yw_path(kp, sizeof kp, path, "delivery"))) {
        static const char *const dkeys[] = {"failure_rate", "outage", "retry_interval",
                                            "retry_duration", NULL};
        yw_check_keys(w, de, kp, dkeys);
        yw_double(w, de, kp, "failure_rate", false, 0, 1, &c->failure_rate);
        yw_duration(w, de, kp, "retry_interval", false, SIM_MS(1), SIM_HOUR(1),
                    &c->retry_interval);
        sim_time t;
        if (yw_duration(w, de, kp, "retry_duration", false, 0, KDS_FIREHOSE_RETRY_DURATION_MAX,
                        &t) &&
            kdsim_check_whole(w, de, kp, "retry_duration", (uint64_t)t, SIM_S(1), "seconds",
                              "s", "RetryOptions.DurationInSeconds"))
            c->retry_duration = t;
        char op[PATH];
        yaml_node_t *ou = yw_get(w, de, "outage");
        if (ou && yw_is_map(w, ou, yw_path(op, sizeof op, kp, "outage"))) {
            static const char *const okeys[] = {"at", "for", NULL};
            yw_check_keys(w, ou, op, okeys);
            yw_duration(w, ou, op, "at", true, 0, MAX_DURATION, &c->outage_at);
            yw_duration(w, ou, op, "for", true, SIM_MS(1), MAX_DURATION, &c->outage_for);
        }
    }
}
