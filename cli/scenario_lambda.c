/* scenario_lambda.c - the `lambda` consumer kind of a scenario: an AWS Lambda event
 * source mapping (models/kds_lambda.h), its keys checked against AWS's ranges. The
 * key reference is docs/consumers-lambda.md.
 */
#include <string.h>

#include "kds_lambda.h"
#include "scenario_int.h"
#include "sim_units.h"

static const char *const RETRIEVALS[] = {"polling", "efo", NULL};
/* Lambda takes these three starting positions (no sequence-number positions). */
static const char *const LAMBDA_STARTS[] = {"trim_horizon", "latest", "at_timestamp", NULL};
static const char *const DESTS[] = {"none", "sqs", "sns", "s3", NULL};
static const char *const POLLING_ONLY[] = {"poll_interval", "call_latency", NULL};
static const char *const EFO_ONLY[] = {"push_delay", "subscribe_latency", "push_interval",
                                       NULL};

/* maximum_record_age: -1 (no limit, the default) or a duration of 60 s to 7 days, as
 * MaximumRecordAgeInSeconds. */
static void load_record_age(ywalk *w, yaml_node_t *cm, const char *path, sim_time *out)
{
    if (!yw_get(w, cm, "maximum_record_age"))
        return;
    char kp[PATH];
    yw_path(kp, sizeof kp, path, "maximum_record_age");
    yaml_node_t *v = yw_get(w, cm, "maximum_record_age");
    const char *text = yw_scalar(w, v, kp);
    if (!text)
        return;
    if (strcmp(text, "-1") == 0) {
        *out = -1;
        return;
    }
    sim_time t;
    if (sim_parse_duration(text, &t) == 0 && t >= KDS_LAMBDA_MIN_RECORD_AGE &&
        t <= KDS_LAMBDA_MAX_RECORD_AGE) {
        if (kdsim_check_whole(w, cm, path, "maximum_record_age", (uint64_t)t, SIM_S(1),
                              "seconds", "s", "MaximumRecordAgeInSeconds"))
            *out = t;
        return;
    }
    yw_error(w, v, kp, "expected -1 (no limit) or a duration from 60s to 7d, got \"%s\"", text);
}

static void load_function(ywalk *w, yaml_node_t *cm, const char *path, kds_lambda_cfg *c)
{
    char kp[PATH];
    yaml_node_t *f = yw_get(w, cm, "function");
    if (!f || !yw_is_map(w, f, yw_path(kp, sizeof kp, path, "function")))
        return;
    static const char *const fkeys[] = {"duration", "per_record", "timeout", "error_rate",
                                        "concurrency", NULL};
    yw_check_keys(w, f, kp, fkeys);
    yw_dist(w, f, kp, "duration", false, 'd', &c->duration_ms);
    sim_time t;
    if (yw_duration(w, f, kp, "per_record", false, 0, SIM_S(60), &t))
        c->duration_ms_per_record = sim_to_ms(t);
    /* Lambda's timeout: 1 s to 900 s, in whole seconds. */
    if (yw_duration(w, f, kp, "timeout", false, SIM_S(1), SIM_S(900), &t) &&
        kdsim_check_whole(w, f, kp, "timeout", (uint64_t)t, SIM_S(1), "seconds", "s", "Timeout"))
        c->timeout = t;
    yw_double(w, f, kp, "error_rate", false, 0, 1, &c->error_rate);
    uint64_t u;
    if (yw_u64(w, f, kp, "concurrency", false, 1, 1000000, &u))
        c->concurrency = (uint32_t)u;
}

void kdsim_load_lambda(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                       kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {
        "name", "kind", "retrieval", "batch_size", "batching_window", "parallelization_factor",
        "start_position", "start_timestamp", "start", "creation_delay", "function",
        "maximum_retry_attempts", "maximum_record_age", "bisect_batch_on_function_error",
        "report_batch_item_failures", "on_failure_destination", "poll_interval",
        "call_latency", "push_delay", "subscribe_latency", "push_interval", "retry_delay",
        "retry_delay_max", "throttle_retry", "record_overhead", NULL};
    kds_lambda_cfg *c = kdsim_keep(sc, 1, sizeof *c);
    kds_lambda_cfg_defaults(c);
    cc->kind = KDS_CONSUMER_MODEL;
    cc->make = kds_lambda_make;
    cc->cfg = c;
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    int e = 0;
    if (yw_enum(w, cm, path, "retrieval", false, RETRIEVALS, &e))
        c->retrieval = (kds_lambda_retrieval)e;
    /* A mapping reading through EFO registers a stream consumer (the 20 per stream). */
    *uses_efo = c->retrieval == KDS_LAMBDA_EFO;
    uint64_t u;
    if (yw_u64(w, cm, path, "batch_size", false, 1, KDS_LAMBDA_MAX_BATCH, &u))
        c->batch_size = (uint32_t)u;
    sim_time t;
    if (yw_duration(w, cm, path, "batching_window", false, 0, KDS_LAMBDA_MAX_WINDOW, &t) &&
        kdsim_check_whole(w, cm, path, "batching_window", (uint64_t)t, SIM_S(1), "seconds", "s",
                          "MaximumBatchingWindowInSeconds"))
        c->batching_window = t;
    if (yw_u64(w, cm, path, "parallelization_factor", false, 1, KDS_LAMBDA_MAX_PARALLEL, &u))
        c->parallelization = (uint32_t)u;
    bool start_ok = yw_enum(w, cm, path, "start_position", false, LAMBDA_STARTS, &e);
    if (start_ok)
        c->start = e == 0 ? KDS_START_TRIM_HORIZON : e == 1 ? KDS_START_LATEST
                                                            : KDS_START_AT_TIMESTAMP;
    yw_duration(w, cm, path, "start_timestamp", false, 0, MAX_DURATION, &c->start_time);
    if (c->start == KDS_START_AT_TIMESTAMP && !yw_get(w, cm, "start_timestamp"))
        yw_error(w, cm, path, "start_position at_timestamp needs start_timestamp (a time "
                              "from the start of the run, like 10m)");
    char kp[PATH];
    if (c->start != KDS_START_AT_TIMESTAMP && yw_get(w, cm, "start_timestamp") &&
        (start_ok || !yw_get(w, cm, "start_position")))
        yw_error(w, yw_get(w, cm, "start_timestamp"),
                 yw_path(kp, sizeof kp, path, "start_timestamp"),
                 "applies to start_position: at_timestamp only, and the start position here "
                 "is %s; set start_position: at_timestamp, or remove start_timestamp",
                 c->start == KDS_START_LATEST ? "latest" : "trim_horizon");
    yw_duration(w, cm, path, "start", false, 0, MAX_DURATION, &c->begin);
    yw_duration(w, cm, path, "creation_delay", false, 0, SIM_HOUR(1), &c->creation_delay);
    load_function(w, cm, path, c);
    int64_t i;
    if (yw_i64(w, cm, path, "maximum_retry_attempts", false, -1, KDS_LAMBDA_MAX_RETRIES, &i))
        c->max_retry_attempts = (int32_t)i;
    load_record_age(w, cm, path, &c->max_record_age);
    yw_bool(w, cm, path, "bisect_batch_on_function_error", false, &c->bisect_on_error);
    yw_bool(w, cm, path, "report_batch_item_failures", false, &c->report_item_failures);
    if (yw_enum(w, cm, path, "on_failure_destination", false, DESTS, &e))
        c->on_failure = (kds_lambda_dest)e;
    /* Keys of the other retrieval are refused, as Flink's and the KCL's are. */
    if (c->retrieval == KDS_LAMBDA_EFO) {
        kdsim_refuse_keys(w, cm, path, POLLING_ONLY, "polling");
        kdsim_load_efo(w, cm, path, &c->efo);
    } else {
        kdsim_refuse_keys(w, cm, path, EFO_ONLY, "efo");
        yw_duration(w, cm, path, "poll_interval", false, SIM_MS(100), SIM_MIN(10),
                    &c->poll_interval);
        yw_dist(w, cm, path, "call_latency", false, 'd', &c->call_latency_ms);
    }
    yw_duration(w, cm, path, "retry_delay", false, 0, SIM_HOUR(1), &c->retry_delay);
    yw_duration(w, cm, path, "retry_delay_max", false, 0, SIM_HOUR(1), &c->retry_delay_max);
    if (c->retry_delay_max < c->retry_delay) {
        /* The wait starts at retry_delay and doubles up to retry_delay_max: below it, the
         * maximum would silently win. */
        const char *at = yw_get(w, cm, "retry_delay_max") ? "retry_delay_max" : "retry_delay";
        char a[32], b[32];
        yw_error(w, yw_get(w, cm, at), yw_path(kp, sizeof kp, path, at),
                 "retry_delay_max, %s, is below retry_delay, %s: the wait before a retry "
                 "starts at retry_delay and doubles up to retry_delay_max; raise "
                 "retry_delay_max or lower retry_delay",
                 sim_fmt_duration(a, sizeof a, c->retry_delay_max),
                 sim_fmt_duration(b, sizeof b, c->retry_delay));
    }
    yw_duration(w, cm, path, "throttle_retry", false, SIM_MS(1), SIM_HOUR(1), &c->throttle_retry);
    if (yw_bytes(w, cm, path, "record_overhead", false, 0, 64 * KDS_KIB, &u))
        c->record_overhead = (uint32_t)u;
}
