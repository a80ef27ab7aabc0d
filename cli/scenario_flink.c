/* scenario_flink.c - the `flink` consumer kind of a scenario: a Managed Service for
 * Apache Flink application with its checkpoints and failures (models/kds_flink.h).
 * Keys are documented in docs/consumers-firehose-flink.md. */
#include "kds_flink.h"
#include "scenario_int.h"
#include "sim_units.h"

static const char *const RETRIEVALS[] = {"polling", "efo", NULL};

void kdsim_load_flink(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                      kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {
        "name",           "kind",           "retrieval",          "consumer_name",
        "start_position", "start_timestamp", "start_sequence",    "poll_interval",
        "max_records",    "call_latency",   "push_delay",         "subscribe_latency",
        "push_interval",  "processing",     "checkpoint_interval", "checkpoint_duration",
        "failures",       "restart_delay",  "shard_discovery_interval", "start", NULL};
    static const char *const polling_only[] = {"poll_interval", "max_records", "call_latency",
                                               NULL};
    static const char *const efo_only[] = {"consumer_name", "push_delay", "subscribe_latency",
                                           "push_interval", NULL};
    kds_flink_cfg *c = kdsim_keep(sc, 1, sizeof *c);
    kds_flink_cfg_defaults(c);
    cc->kind = KDS_CONSUMER_MODEL;
    cc->make = kds_flink_make;
    cc->cfg = c;
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    int r = 0;
    if (yw_enum(w, cm, path, "retrieval", false, RETRIEVALS, &r))
        c->retrieval = (kds_flink_retrieval)r;
    /* A registered EFO consumer counts toward the stream's 20 (50) consumers. */
    *uses_efo = c->retrieval == KDS_FLINK_EFO;
    if (c->retrieval == KDS_FLINK_EFO) {
        kdsim_refuse_keys(w, cm, path, polling_only, "polling");
        if (yw_str(w, cm, path, "consumer_name", false, &c->consumer_name))
            kdsim_check_name(w, cm, path, "consumer_name", c->consumer_name);
        kdsim_load_efo(w, cm, path, &c->efo);
    } else {
        kdsim_refuse_keys(w, cm, path, efo_only, "efo");
        yw_duration(w, cm, path, "poll_interval", false, SIM_MS(1), SIM_HOUR(1),
                    &c->poll_interval);
        uint64_t u;
        if (yw_u64(w, cm, path, "max_records", false, 1, 10000, &u))
            c->max_records = (uint32_t)u;
        yw_dist(w, cm, path, "call_latency", false, 'd', &c->call_latency_ms);
    }
    kdsim_load_start(w, cm, path, &c->start, &c->start_time, &c->start_pos);

    kdsim_load_processing(w, cm, path, &c->process_ms, &c->process_ms_per_record);
    char kp[PATH];
    yw_duration(w, cm, path, "checkpoint_interval", false, SIM_S(1), SIM_DAY(1),
                &c->checkpoint_interval);
    if (yw_duration(w, cm, path, "checkpoint_duration", false, 0, SIM_DAY(1),
                    &c->checkpoint_duration) &&
        c->checkpoint_duration >= c->checkpoint_interval) {
        char a[32], b[32];
        yw_error(w, yw_get(w, cm, "checkpoint_duration"),
                 yw_path(kp, sizeof kp, path, "checkpoint_duration"),
                 "a checkpoint of %s does not complete before the next is due (every %s); "
                 "make it shorter than checkpoint_interval",
                 sim_fmt_duration(a, sizeof a, c->checkpoint_duration),
                 sim_fmt_duration(b, sizeof b, c->checkpoint_interval));
    }
    yw_duration(w, cm, path, "restart_delay", false, 0, SIM_DAY(1), &c->restart_delay);
    yw_duration(w, cm, path, "shard_discovery_interval", false, SIM_MS(100), SIM_HOUR(1),
                &c->discovery_interval);
    yw_duration(w, cm, path, "start", false, 0, MAX_DURATION, &c->begin);

    yaml_node_t *fa = yw_get(w, cm, "failures");
    if (fa && yw_is_seq(w, fa, yw_path(kp, sizeof kp, path, "failures"))) {
        size_t k = yw_seq_len(w, fa);
        sim_time *t = kdsim_keep(sc, k, sizeof *t);
        c->failures = t;
        c->n_failures = k;
        for (size_t i = 0; i < k; i++) {
            char ip[PATH];
            yaml_node_t *it = yw_seq_item(w, fa, i);
            yw_index(ip, sizeof ip, kp, i);
            const char *text = yw_scalar(w, it, ip);
            if (!text)
                continue;
            int rc = sim_parse_duration(text, &t[i]);
            if (rc)
                yw_error(w, it, ip, "expected %s, got \"%s\"", sim_units_hint('d'), text);
            else if (t[i] > MAX_DURATION)
                yw_error(w, it, ip, "a failure time is at most 400d");
            else if (i > 0 && t[i] <= t[i - 1])
                yw_error(w, it, ip, "failure times must be in increasing order");
            else if (t[i] < c->begin) {
                /* The job cannot fail before it runs. A time past the run's end is not
                 * refused: --duration may shorten a run, which then has no such
                 * failure (documented). */
                char a[32], b[32];
                yw_error(w, it, ip,
                         "a failure at %s comes before the job starts (start: %s), and a job "
                         "that is not running cannot fail; give times at or after start",
                         sim_fmt_duration(a, sizeof a, t[i]),
                         sim_fmt_duration(b, sizeof b, c->begin));
            }
        }
    }
}
