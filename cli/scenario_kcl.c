/* scenario_kcl.c - the `kcl` consumer kind of a scenario: a Kinesis Client Library
 * application, its workers and their events, its lease table and lease timings
 * (models/kds_kcl.h). Every default is the KCL's (kcl.md). The key reference is
 * docs/consumers-kcl.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kds_kcl.h"
#include "kds_lease.h"
#include "scenario_int.h"

static const char *const RETRIEVALS[] = {"polling", "efo", NULL};
static const char *const BILLINGS[] = {"on_demand", "provisioned", NULL};
static const char *const ACTIONS[] = {"start", "stop", "crash", "pause", NULL};
/* kds_kcl_assignment and kds_kcl_metric, in order. */
static const char *const ASSIGNMENTS[] = {"taker", "worker_utilization", "lease_count", NULL};
static const char *const METRICS[] = {"throughput", "cpu", NULL};
#define MAX_WORKERS 10000
#define MAX_WORKER_EVENTS 1000
/* The KCL's maxPendingProcessRecordsInput is at most 5 (kcl.md, section 5.1). */
#define MAX_PENDING_BATCHES 5

static void load_checkpoint(ywalk *w, yaml_node_t *cm, const char *path, kds_kcl_cfg *c)
{
    char kp[PATH];
    yaml_node_t *n = yw_get(w, cm, "checkpoint");
    if (!n || !yw_is_map(w, n, yw_path(kp, sizeof kp, path, "checkpoint")))
        return;
    static const char *const keys[] = {"every_records", "every", "every_batch", "on_shutdown",
                                       NULL};
    yw_check_keys(w, n, kp, keys);
    yw_u64(w, n, kp, "every_records", false, 1, UINT64_C(1000000000), &c->ckpt_records);
    yw_duration(w, n, kp, "every", false, SIM_MS(1), SIM_DAY(7), &c->ckpt_interval);
    yw_bool(w, n, kp, "every_batch", false, &c->ckpt_batch);
    yw_bool(w, n, kp, "on_shutdown", false, &c->ckpt_on_shutdown);
}

static void load_leases(ywalk *w, yaml_node_t *cm, const char *path, kds_kcl_cfg *c)
{
    char kp[PATH];
    yaml_node_t *n = yw_get(w, cm, "leases");
    if (!n || !yw_is_map(w, n, yw_path(kp, sizeof kp, path, "leases")))
        return;
    static const char *const keys[] = {
        "failover",         "epsilon",         "renew_interval",     "take_interval",
        "max_leases_per_worker", "max_leases_to_steal", "priority_leases", "very_old_factor",
        "take_retries",     "parent_poll",     "cleanup_interval",   "task_backoff",
        "sync_wait",        "shard_sync_sleep", "shard_sync_interval", "shard_sync_confidence",
        NULL};
    yw_check_keys(w, n, kp, keys);
    yw_duration(w, n, kp, "failover", false, SIM_MS(100), SIM_HOUR(1), &c->failover);
    yw_duration(w, n, kp, "epsilon", false, 0, SIM_S(10), &c->epsilon);
    yw_duration(w, n, kp, "renew_interval", false, SIM_MS(10), SIM_HOUR(1), &c->renew_interval);
    yw_duration(w, n, kp, "take_interval", false, SIM_MS(10), SIM_HOUR(1), &c->take_interval);
    uint64_t u;
    if (yw_u64(w, n, kp, "max_leases_per_worker", false, 1, 1000000, &u))
        c->max_leases_per_worker = (uint32_t)u;
    if (yw_u64(w, n, kp, "max_leases_to_steal", false, 1, 1000000, &u))
        c->max_steal = (uint32_t)u;
    yw_bool(w, n, kp, "priority_leases", false, &c->priority_leases);
    if (yw_u64(w, n, kp, "very_old_factor", false, 1, 1000, &u))
        c->very_old_factor = (uint32_t)u;
    if (yw_u64(w, n, kp, "take_retries", false, 1, 100, &u))
        c->take_retries = (uint32_t)u;
    yw_duration(w, n, kp, "parent_poll", false, SIM_MS(10), SIM_HOUR(1), &c->parent_poll);
    yw_duration(w, n, kp, "cleanup_interval", false, SIM_S(1), SIM_DAY(1), &c->cleanup_interval);
    yw_duration(w, n, kp, "task_backoff", false, SIM_MS(1), SIM_MIN(10), &c->task_backoff);
    yw_dist(w, n, kp, "sync_wait", false, 'd', &c->sync_wait_ms);
    yw_duration(w, n, kp, "shard_sync_sleep", false, 0, SIM_HOUR(1), &c->sync_sleep);
    yw_duration(w, n, kp, "shard_sync_interval", false, SIM_S(1), SIM_DAY(1),
                &c->shard_sync_interval);
    if (yw_u64(w, n, kp, "shard_sync_confidence", false, 1, 1000, &u))
        c->shard_sync_confidence = (uint32_t)u;
    /* The renewer must run several times per failover period for leases to live. */
    sim_time renew = kds_kcl_renew_period(c);
    if (renew >= c->failover)
        yw_error(w, n, kp, "the renewer runs every %.3f s, not more often than the failover "
                           "time (%.3f s): leases would expire between renewals; shorten "
                           "renew_interval or lengthen failover",
                 sim_to_s(renew), sim_to_s(c->failover));
    else if (renew <= 0)
        yw_error(w, n, kp, "failover / 3 - epsilon is not positive; set renew_interval, "
                           "lengthen failover or shorten epsilon");
}

/* The `kcl3` map: KCL 3.x settings, for lease_assignment other than taker. */
static void load_kcl3(ywalk *w, yaml_node_t *cm, const char *path, kds_kcl_cfg *c)
{
    char kp[PATH];
    yaml_node_t *n = yw_get(w, cm, "kcl3");
    if (!n || !yw_is_map(w, n, yw_path(kp, sizeof kp, path, "kcl3")))
        return;
    if (c->assignment == KDS_KCL_TAKER) {
        yw_error(w, n, kp, "applies to KCL 3.x lease assignment only; set lease_assignment: "
                           "worker_utilization (the 3.x default) or lease_count, or remove it");
        return;
    }
    static const char *const keys[] = {
        "lam_interval",       "discovery_interval", "balance_every",       "rebalance_threshold",
        "dampening",          "allow_overshoot",    "failed_runs_to_resign", "graceful_handoff",
        "handoff_timeout",    "handoff_poll",       "leader_lock_lease",   "leader_lock_heartbeat",
        "metric",             "metrics_first",      "metrics_interval",    "metrics_keep",
        "metrics_alpha",      "metrics_expiry_factor", NULL};
    yw_check_keys(w, n, kp, keys);
    kds_kcl_lam_cfg *l = &c->lam;
    uint64_t u;
    int e = 0;
    yw_duration(w, n, kp, "lam_interval", false, SIM_MS(100), SIM_HOUR(1), &l->interval);
    yw_duration(w, n, kp, "discovery_interval", false, SIM_MS(10), SIM_HOUR(1),
                &l->discovery_interval);
    if (yw_u64(w, n, kp, "balance_every", false, 1, 1000, &u))
        l->balance_every = (uint32_t)u;
    yw_double(w, n, kp, "rebalance_threshold", false, 0, 100, &l->rebalance_threshold);
    yw_double(w, n, kp, "dampening", false, 0, 100, &l->dampening);
    yw_bool(w, n, kp, "allow_overshoot", false, &l->allow_overshoot);
    if (yw_u64(w, n, kp, "failed_runs_to_resign", false, 1, 1000, &u))
        l->failed_runs_to_resign = (uint32_t)u;
    yw_bool(w, n, kp, "graceful_handoff", false, &l->graceful_handoff);
    yw_duration(w, n, kp, "handoff_timeout", false, SIM_MS(1), SIM_HOUR(1), &l->handoff_timeout);
    yw_duration(w, n, kp, "handoff_poll", false, SIM_MS(1), SIM_MIN(10), &l->handoff_poll);
    yw_duration(w, n, kp, "leader_lock_lease", false, SIM_S(1), SIM_HOUR(1), &l->lock_lease);
    yw_duration(w, n, kp, "leader_lock_heartbeat", false, SIM_MS(100), SIM_HOUR(1),
                &l->lock_heartbeat);
    yaml_node_t *mn = yw_get(w, n, "metric");
    if (mn && c->assignment != KDS_KCL_WORKER_UTILIZATION) {
        char mp[PATH];
        yw_error(w, mn, yw_path(mp, sizeof mp, kp, "metric"),
                 "applies to lease_assignment: worker_utilization only (lease_count balances "
                 "lease counts); remove it");
    } else if (yw_enum(w, n, kp, "metric", false, METRICS, &e)) {
        l->metric = (kds_kcl_metric)e;
    }
    yw_duration(w, n, kp, "metrics_first", false, 0, SIM_HOUR(1), &l->metrics_first);
    yw_duration(w, n, kp, "metrics_interval", false, SIM_S(1), SIM_HOUR(1), &l->metrics_interval);
    if (yw_u64(w, n, kp, "metrics_keep", false, 1, KDS_KCL_METRICS_KEEP_MAX, &u))
        l->metrics_keep = (uint32_t)u;
    yw_double(w, n, kp, "metrics_alpha", false, 0.01, 1, &l->metrics_alpha);
    if (yw_u64(w, n, kp, "metrics_expiry_factor", false, 1, 100, &u))
        l->metrics_expiry_factor = (uint32_t)u;
    /* A lock heartbeaten no more often than it lasts would change hands by itself. */
    if (l->lock_heartbeat >= l->lock_lease)
        yw_error(w, n, kp, "the leader lock is heartbeaten every %.3f s but lasts %.3f s: "
                           "leadership would lapse between heartbeats; shorten "
                           "leader_lock_heartbeat or lengthen leader_lock_lease",
                 sim_to_s(l->lock_heartbeat), sim_to_s(l->lock_lease));
    sim_time lam = l->interval > 0 ? l->interval : 2 * c->failover;
    if (l->discovery_interval == 0 && lam / 2 - c->epsilon <= 0)
        yw_error(w, n, kp, "lam_interval / 2 - epsilon is not positive; set "
                           "discovery_interval or lengthen lam_interval");
}

static void load_table(ywalk *w, yaml_node_t *cm, const char *path, kds_lease_table_cfg *t)
{
    char kp[PATH];
    yaml_node_t *n = yw_get(w, cm, "lease_table");
    if (!n || !yw_is_map(w, n, yw_path(kp, sizeof kp, path, "lease_table")))
        return;
    static const char *const keys[] = {"billing", "read_capacity", "write_capacity", "burst",
                                       "item_size", NULL};
    yw_check_keys(w, n, kp, keys);
    int e = 0;
    if (yw_enum(w, n, kp, "billing", false, BILLINGS, &e))
        t->billing = (kds_lease_billing)e;
    uint64_t u;
    /* DynamoDB's default table quota: 40,000 read and write units. */
    if (yw_u64(w, n, kp, "read_capacity", false, 1, KDS_LEASE_MAX_UNITS, &u))
        t->rcu = (uint32_t)u;
    if (yw_u64(w, n, kp, "write_capacity", false, 1, KDS_LEASE_MAX_UNITS, &u))
        t->wcu = (uint32_t)u;
    sim_time b;
    if (yw_duration(w, n, kp, "burst", false, 0, SIM_S(KDS_LEASE_MAX_BURST_S), &b))
        t->burst_s = sim_to_s(b);
    if (yw_bytes(w, n, kp, "item_size", false, 1, 400 * 1024, &u)) /* DynamoDB: 400 KB */
        t->item_bytes = (uint32_t)u;
    /* The capacities are kept but unused under on_demand, as DynamoDB ignores
     * ProvisionedThroughput for a PAY_PER_REQUEST table: one --set switches a
     * scenario between the two modes. */
}

/* One worker's `events` list. */
static void load_events(kdsim_scenario *sc, ywalk *w, yaml_node_t *wm, const char *path,
                        kds_kcl_worker_cfg *wc)
{
    char kp[PATH], ip[PATH];
    yaml_node_t *n = yw_get(w, wm, "events");
    if (!n || !yw_is_seq(w, n, yw_path(kp, sizeof kp, path, "events")))
        return;
    size_t k = yw_seq_len(w, n);
    if (k > MAX_WORKER_EVENTS) {
        yw_error(w, n, kp, "%zu events; at most %d per worker", k, MAX_WORKER_EVENTS);
        return;
    }
    kds_kcl_event *ev = kdsim_keep(sc, k ? k : 1, sizeof *ev);
    wc->events = ev;
    wc->n_events = k;
    bool timed[MAX_WORKER_EVENTS];  /* its `at` is valid */
    sim_time first = wc->start;     /* the worker's first start; -1: none yet */
    yaml_node_t *first_at = yw_get(w, wm, "start"); /* where `first` was written */
    for (size_t i = 0; i < k; i++) {
        yaml_node_t *e = yw_seq_item(w, n, i);
        yw_index(ip, sizeof ip, kp, i);
        ev[i].restart_after = -1;
        timed[i] = false; /* until its `at` and `action` are both read */
        if (!yw_is_map(w, e, ip))
            continue;
        static const char *const keys[] = {"at", "action", "for", "restart_after", NULL};
        yw_check_keys(w, e, ip, keys);
        bool at_ok = yw_duration(w, e, ip, "at", true, 0, MAX_DURATION, &ev[i].at);
        int a = 0;
        if (!yw_enum(w, e, ip, "action", true, ACTIONS, &a))
            continue;
        ev[i].kind = (kds_kcl_event_kind)a;
        yaml_node_t *f = yw_get(w, e, "for");
        yaml_node_t *r = yw_get(w, e, "restart_after");
        char vp[PATH];
        if (ev[i].kind == KDS_KCL_EV_PAUSE)
            yw_duration(w, e, ip, "for", true, SIM_MS(1), MAX_DURATION, &ev[i].len);
        else if (f)
            yw_error(w, f, yw_path(vp, sizeof vp, ip, "for"),
                     "applies to action: pause only (the length of the stall)");
        if (ev[i].kind == KDS_KCL_EV_STOP || ev[i].kind == KDS_KCL_EV_CRASH)
            yw_duration(w, e, ip, "restart_after", false, 0, MAX_DURATION, &ev[i].restart_after);
        else if (r)
            yw_error(w, r, yw_path(vp, sizeof vp, ip, "restart_after"),
                     "applies to action: stop or crash only");
        timed[i] = at_ok;
        if (at_ok && ev[i].kind == KDS_KCL_EV_START && (first < 0 || ev[i].at < first)) {
            first = ev[i].at;
            first_at = yw_get(w, e, "at");
        }
    }
    /* Before the worker's first start there is nothing to stop, crash or pause: such an
     * event would be skipped without a word, so it is refused. (Later events that find
     * the worker down are skipped at run time: whether they do depends on the run.) */
    for (size_t i = 0; i < k; i++) {
        if (!timed[i] || ev[i].kind == KDS_KCL_EV_START || (first >= 0 && ev[i].at >= first))
            continue;
        char ip2[PATH], vp[PATH];
        yw_index(ip2, sizeof ip2, kp, i);
        yaml_node_t *at = yw_get(w, yw_seq_item(w, n, i), "at");
        if (first < 0)
            yw_error(w, at, yw_path(vp, sizeof vp, ip2, "at"),
                     "a %s of a worker that never starts would do nothing: give the worker a "
                     "start, or a start event before it", ACTIONS[ev[i].kind]);
        else
            yw_error(w, at, yw_path(vp, sizeof vp, ip2, "at"),
                     "a %s at %s comes before the worker's first start, at %s, and would do "
                     "nothing: move it after the start, or start the worker earlier",
                     ACTIONS[ev[i].kind], yw_scalar(w, at, vp), yw_scalar(w, first_at, vp));
    }
}

static void load_workers(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                         kds_kcl_cfg *c)
{
    char kp[PATH], ip[PATH];
    yaml_node_t *n = yw_get(w, cm, "workers");
    yw_path(kp, sizeof kp, path, "workers");
    if (!n) {
        yw_error(w, cm, path, "missing required key 'workers' (a number of workers, or a "
                              "list of {name, start, capacity, events})");
        return;
    }
    if (n->type == YAML_SCALAR_NODE) {
        /* `workers: 12`: w1 .. w12, all started at 0, unlimited capacity. */
        uint64_t k = 0;
        if (!yw_u64(w, cm, path, "workers", true, 1, MAX_WORKERS, &k))
            return;
        kds_kcl_worker_cfg *wc = kdsim_keep(sc, k, sizeof *wc);
        char *names = kdsim_keep(sc, k, 24);
        for (uint64_t i = 0; i < k; i++) {
            snprintf(names + 24 * i, 24, "w%llu", (unsigned long long)(i + 1));
            wc[i].name = names + 24 * i;
        }
        c->workers = wc;
        c->n_workers = k;
        return;
    }
    if (!yw_is_seq(w, n, kp))
        return;
    size_t k = yw_seq_len(w, n);
    if (k == 0 || k > MAX_WORKERS) {
        yw_error(w, n, kp, "%zu workers; give 1 to %d", k, MAX_WORKERS);
        return;
    }
    kds_kcl_worker_cfg *wc = kdsim_keep(sc, k, sizeof *wc);
    c->workers = wc;
    c->n_workers = k;
    for (size_t i = 0; i < k; i++) {
        yaml_node_t *wm = yw_seq_item(w, n, i);
        yw_index(ip, sizeof ip, kp, i);
        if (!yw_is_map(w, wm, ip))
            continue;
        static const char *const keys[] = {"name", "start", "capacity", "events", NULL};
        yw_check_keys(w, wm, ip, keys);
        if (yw_str(w, wm, ip, "name", true, &wc[i].name)) {
            kdsim_check_name(w, wm, ip, "name", wc[i].name);
            for (size_t j = 0; j < i; j++)
                if (wc[j].name && strcmp(wc[j].name, wc[i].name) == 0) {
                    char np[PATH];
                    yw_error(w, yw_get(w, wm, "name"), yw_path(np, sizeof np, ip, "name"),
                             "worker name '%s' is already used by workers[%zu]", wc[i].name, j);
                    break;
                }
        }
        yaml_node_t *st = yw_get(w, wm, "start");
        if (st && st->type == YAML_SCALAR_NODE &&
            strcmp((const char *)st->data.scalar.value, "never") == 0)
            wc[i].start = -1; /* only started by an event */
        else
            yw_duration(w, wm, ip, "start", false, 0, MAX_DURATION, &wc[i].start);
        yw_count_rate(w, wm, ip, "capacity", false, "records", 1, MAX_RATE, &wc[i].capacity);
        load_events(sc, w, wm, ip, &wc[i]);
    }
}

static void load_deployment(ywalk *w, yaml_node_t *cm, const char *path, kds_kcl_deploy_cfg *d)
{
    char kp[PATH];
    yaml_node_t *n = yw_get(w, cm, "deployment");
    if (!n || !yw_is_map(w, n, yw_path(kp, sizeof kp, path, "deployment")))
        return;
    static const char *const keys[] = {"at", "interval", "downtime", "graceful", NULL};
    yw_check_keys(w, n, kp, keys);
    d->enabled = true;
    d->interval = SIM_MIN(1);
    d->downtime = SIM_S(30);
    d->graceful = true;
    yw_duration(w, n, kp, "at", true, 0, MAX_DURATION, &d->at);
    yw_duration(w, n, kp, "interval", false, 0, SIM_DAY(1), &d->interval);
    yw_duration(w, n, kp, "downtime", false, 0, SIM_DAY(1), &d->downtime);
    yw_bool(w, n, kp, "graceful", false, &d->graceful);
}

void kdsim_load_kcl(kdsim_scenario *sc, ywalk *w, yaml_node_t *cm, const char *path,
                    kds_consumer_cfg *cc, bool *uses_efo)
{
    static const char *const keys[] = {
        "name",          "kind",          "application_name", "retrieval",
        "start_position", "start_timestamp", "poll_interval", "max_records",
        "max_pending_batches", "call_latency", "push_delay", "subscribe_latency",
        "push_interval", "processing",    "checkpoint",       "leases",
        "lease_table",   "workers",       "deployment",       "lease_assignment",
        "kcl3",
        NULL};
    static const char *const polling_only[] = {"poll_interval", "max_records", "call_latency",
                                               NULL};
    static const char *const efo_only[] = {"push_delay", "subscribe_latency", "push_interval",
                                           NULL};
    kds_kcl_cfg *c = kdsim_keep(sc, 1, sizeof *c);
    kds_kcl_cfg_defaults(c);
    cc->kind = KDS_CONSUMER_MODEL;
    cc->make = kds_kcl_make;
    cc->cfg = c;
    yw_check_keys(w, cm, path, keys);
    yw_str(w, cm, path, "name", false, &c->name);
    if (yw_str(w, cm, path, "application_name", false, &c->application_name))
        kdsim_check_name(w, cm, path, "application_name", c->application_name);
    int e = 0;
    if (yw_enum(w, cm, path, "retrieval", false, RETRIEVALS, &e))
        c->efo = e == 1;
    *uses_efo = c->efo;
    if (c->efo)
        kdsim_refuse_keys(w, cm, path, polling_only, "polling");
    else
        kdsim_refuse_keys(w, cm, path, efo_only, "efo");

    /* The initial position of new leases: the KCL takes TRIM_HORIZON, LATEST or
     * AT_TIMESTAMP (its default is LATEST), so start_sequence is not a key here. */
    uint64_t ignored = 0;
    kdsim_load_start(w, cm, path, &c->initial, &c->initial_time, &ignored);
    if (c->initial == KDS_START_AT_SEQUENCE_NUMBER ||
        c->initial == KDS_START_AFTER_SEQUENCE_NUMBER) {
        char kp[PATH];
        yw_error(w, yw_get(w, cm, "start_position"), yw_path(kp, sizeof kp, path, "start_position"),
                 "a KCL application starts new leases at trim_horizon, latest or at_timestamp");
    }
    yw_duration(w, cm, path, "poll_interval", false, SIM_MS(200), SIM_HOUR(1), &c->idle);
    uint64_t u;
    if (yw_u64(w, cm, path, "max_records", false, 1, 10000, &u))
        c->max_records = (uint32_t)u;
    if (yw_u64(w, cm, path, "max_pending_batches", false, 1, UINT64_MAX, &u)) {
        if (u <= MAX_PENDING_BATCHES) {
            c->max_pending = (uint32_t)u;
        } else {
            char kp[PATH];
            yw_error(w, yw_get(w, cm, "max_pending_batches"),
                     yw_path(kp, sizeof kp, path, "max_pending_batches"),
                     "must be between 1 and %d, the KCL's maximum of "
                     "maxPendingProcessRecordsInput, got %" PRIu64,
                     MAX_PENDING_BATCHES, u);
        }
    }
    yw_dist(w, cm, path, "call_latency", false, 'd', &c->call_latency_ms);
    kdsim_load_efo(w, cm, path, &c->efo_cfg);
    kdsim_load_processing(w, cm, path, &c->process_ms, &c->process_ms_per_record);
    load_checkpoint(w, cm, path, c);
    load_leases(w, cm, path, c);
    if (yw_enum(w, cm, path, "lease_assignment", false, ASSIGNMENTS, &e))
        c->assignment = (kds_kcl_assignment)e;
    load_kcl3(w, cm, path, c);
    load_table(w, cm, path, &c->table);
    load_workers(sc, w, cm, path, c);
    load_deployment(w, cm, path, &c->deploy);
}
