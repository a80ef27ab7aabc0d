/* report_kcl.c - KCL applications in the JSON, text and CSV reports (report_kcl.h). */
#include "report_kcl.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kds_kcl.h"
#include "report_int.h"
#include "sim_err.h"

/* The move log is capped in the JSON (the counts cover every move). */
#define MAX_MOVE_LOG 1000

static json_t *u64(uint64_t v)
{
    return json_integer((json_int_t)v);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* n values of s, each over `per` minutes (1, or a long run's merged minutes). */
static json_t *series_json(const sim_series *s, size_t n, size_t per)
{
    json_t *a = json_array();
    sim_time wd = (sim_time)per * SIM_MIN(1);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, kdsim_real3(sim_series_range(s, (sim_time)i * wd,
                                                               (sim_time)(i + 1) * wd)));
    return a;
}

static json_t *worker_json(const kds_kcl_worker_summary *w, bool kcl3)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(w->name));
    json_object_set_new(o, "state_end", json_string(w->state));
    json_object_set_new(o, "leases_held_end", u64(w->leases_held_end));
    json_object_set_new(o, "records_processed", u64(w->records_processed));
    json_object_set_new(o, "records_reprocessed", u64(w->records_reprocessed));
    json_object_set_new(o, "starts", u64(w->incarnations));
    json_object_set_new(o, "idle_s", kdsim_real3(w->idle_s));
    json_object_set_new(o, "renewals", u64(w->renewals));
    json_object_set_new(o, "renewals_throttled", u64(w->renewals_throttled));
    json_object_set_new(o, "leases_taken", u64(w->leases_taken));
    json_object_set_new(o, "leases_stolen", u64(w->leases_stolen));
    json_object_set_new(o, "leases_lost", u64(w->leases_lost));
    json_object_set_new(o, "leases_self_expired", u64(w->leases_self_expired));
    json_object_set_new(o, "scans", u64(w->scans));
    json_object_set_new(o, "scans_throttled", u64(w->scans_throttled));
    json_object_set_new(o, "shard_sync_audits", u64(w->audits));
    json_object_set_new(o, "startup_checks", u64(w->startup_checks));
    json_object_set_new(o, "checkpoints", u64(w->checkpoints));
    json_object_set_new(o, "checkpoints_throttled", u64(w->checkpoints_throttled));
    if (kcl3) {
        json_object_set_new(o, "discoveries", u64(w->discoveries));
        json_object_set_new(o, "handoffs_out", u64(w->handoffs_out));
        json_object_set_new(o, "handoffs_timed_out", u64(w->handoffs_timed_out));
    }
    json_t *m = json_array();
    for (size_t i = 0; i < w->n_minutes; i++)
        json_array_append_new(m, u64(w->leases_per_minute[i]));
    json_object_set_new(o, "leases_per_minute", m);
    json_object_set_new(o, "minutes_per_value", u64(w->minutes_per_value));
    return o;
}

/* The lease table; `n_ops` operations by kind (a 2.x application makes fewer). */
static json_t *table_json(const kds_lease_table *t, size_t minutes, size_t per, int n_ops)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    bool prov = t->cfg.billing == KDS_LEASE_PROVISIONED;
    json_object_set_new(o, "billing", json_string(prov ? "provisioned" : "on_demand"));
    json_object_set_new(o, "read_capacity", prov ? u64(t->cfg.rcu) : json_null());
    json_object_set_new(o, "write_capacity", prov ? u64(t->cfg.wcu) : json_null());
    json_object_set_new(o, "leases_end", u64(t->n_live));
    json_object_set_new(o, "read_units_consumed", kdsim_real3(kds_lease_read_units(t)));
    json_object_set_new(o, "write_units_consumed", kdsim_real3(kds_lease_write_units(t)));
    json_object_set_new(o, "throttled_reads", u64(t->st.throttled_reads));
    json_object_set_new(o, "throttled_writes", u64(t->st.throttled_writes));
    json_t *req = json_object(), *thr = json_object(), *cf = json_object();
    for (int k = 0; k < n_ops; k++) {
        const char *n = kds_ddb_op_name((kds_ddb_op)k);
        json_object_set_new(req, n, u64(t->st.requests[k]));
        json_object_set_new(thr, n, u64(t->st.throttled[k]));
        json_object_set_new(cf, n, u64(t->st.cond_failed[k]));
    }
    json_object_set_new(o, "requests", req);
    json_object_set_new(o, "throttled", thr);
    json_object_set_new(o, "condition_failed", cf);
    json_object_set_new(o, "read_units_per_minute",
                        series_json(&t->st.read_units_min, minutes, per));
    json_object_set_new(o, "write_units_per_minute",
                        series_json(&t->st.write_units_min, minutes, per));
    json_object_set_new(o, "throttled_per_minute",
                        series_json(&t->st.throttled_min, minutes, per));
    json_object_set_new(o, "minutes_per_value", u64(per));
    return o;
}

void kdsim_kcl_json(const kds_consumer *c, json_t *o)
{
    const kds_kcl_summary *s = kds_kcl_summary_get(c);
    if (!s)
        return;
    size_t minutes = s->n_workers ? s->workers[0].n_minutes : 0;
    size_t per = s->n_workers ? s->workers[0].minutes_per_value : 1;
    /* A 2.x application's report has no 3.x key, cause or operation: shipped reports stay
     * as they were. */
    bool kcl3 = s->assignment != KDS_KCL_TAKER;
    json_object_set_new(o, "application_name", json_string(s->application_name));
    json_object_set_new(o, "lease_table_shared", json_boolean(s->table_shared));
    if (kcl3) {
        json_object_set_new(o, "lease_assignment",
                            json_string(kds_kcl_assignment_name(s->assignment)));
        json_t *ld = json_array();
        for (size_t i = 0; i < s->n_leaders; i++) {
            json_t *e = json_object();
            json_object_set_new(e, "t_s", kdsim_real3(sim_to_s(s->leaders[i].at)));
            json_object_set_new(e, "worker", json_string(s->leaders[i].worker));
            json_array_append_new(ld, e);
        }
        json_object_set_new(o, "leaders", ld);
        json_object_set_new(o, "lam_runs", u64(s->lam_runs));
        json_object_set_new(o, "handoffs", u64(s->handoffs));
    }
    if (!kcl3)
        json_object_set_new(o, "leader_elections", u64(s->elections));
    json_object_set_new(o, "shard_sync_audits", u64(s->audits));
    json_object_set_new(o, "shard_sync_holes", u64(s->holes_seen));
    json_object_set_new(o, "shard_syncs", u64(s->shard_syncs));
    json_object_set_new(o, "leases_recreated", u64(s->leases_recreated));
    json_t *ws = json_array();
    for (size_t i = 0; i < s->n_workers; i++)
        json_array_append_new(ws, worker_json(&s->workers[i], kcl3));
    json_object_set_new(o, "workers", ws);
    json_object_set_new(o, "workers_running_end", u64(s->running_workers_end));
    json_object_set_new(o, "idle_workers_end", u64(s->idle_workers_end));
    json_object_set_new(o, "lease_moves", u64(s->moves));
    json_t *bc = json_object();
    for (int k = 0; k < (kcl3 ? KDS_KCL_N_CAUSES : KDS_KCL_N_CAUSES_2X); k++)
        json_object_set_new(bc, kds_kcl_cause_name((kds_kcl_cause)k), u64(s->moves_by_cause[k]));
    json_object_set_new(o, "lease_moves_by_cause", bc);
    json_object_set_new(o, "lease_moves_from_healthy_workers", u64(s->moves_from_healthy));
    json_object_set_new(o, "duplicates_from_failover", u64(s->duplicates_from_failover));
    json_object_set_new(o, "replay_expected", u64(s->replay_expected));
    json_object_set_new(o, "records_skipped_gaps", u64(s->records_skipped_gaps));
    json_object_set_new(o, "checkpoints", u64(s->checkpoints));
    json_object_set_new(o, "checkpoints_throttled", u64(s->checkpoints_throttled));
    json_object_set_new(o, "lease_table_throttled_writes", u64(s->table->st.throttled_writes));
    json_object_set_new(o, "lease_table_throttled_reads", u64(s->table->st.throttled_reads));
    json_object_set_new(
        o, "lease_table",
        table_json(s->table, minutes, per, kcl3 ? KDS_DDB_N_OPS : KDS_DDB_N_OPS_2X));

    json_t *ch = json_array();
    double worst = 0;
    for (size_t i = 0; i < s->n_changes; i++) {
        const kds_kcl_change *k = &s->changes[i];
        json_t *e = json_object();
        json_object_set_new(e, "t_s", kdsim_real3(sim_to_s(k->at)));
        json_object_set_new(e, "worker", json_string(k->worker));
        json_object_set_new(e, "event", json_string(k->what));
        json_object_set_new(e, "converged_after_s", k->converged_after >= 0
                                                        ? kdsim_real3(sim_to_s(k->converged_after))
                                                        : json_null());
        if (k->converged_after >= 0 && sim_to_s(k->converged_after) > worst)
            worst = sim_to_s(k->converged_after);
        json_array_append_new(ch, e);
    }
    json_object_set_new(o, "worker_events", ch);
    json_object_set_new(o, "time_to_converge_max_s", kdsim_real3(worst));

    json_t *ml = json_array();
    char id[32];
    for (size_t i = 0; i < s->n_move_log && i < MAX_MOVE_LOG; i++) {
        const kds_kcl_move *m = &s->move_log[i];
        json_t *e = json_object();
        json_object_set_new(e, "t_s", kdsim_real3(sim_to_s(m->at)));
        json_object_set_new(e, "shard_id", json_string(kds_shard_id(id, sizeof id, m->shard)));
        json_object_set_new(e, "cause", json_string(kds_kcl_cause_name(m->cause)));
        json_object_set_new(e, "from", str_or_null(m->from));
        json_object_set_new(e, "from_consumer", str_or_null(m->from_app));
        json_object_set_new(e, "to", json_string(m->to));
        json_object_set_new(e, "from_healthy", json_boolean(m->from_healthy));
        json_object_set_new(e, "replay_expected", u64(m->replay_expected));
        json_object_set_new(e, "duplicates", u64(m->duplicates));
        json_array_append_new(ml, e);
    }
    json_object_set_new(o, "lease_move_log", ml);
    json_object_set_new(o, "lease_move_log_truncated", json_boolean(s->n_move_log > MAX_MOVE_LOG));
}

/* ---- text --------------------------------------------------------------------------- */

void kdsim_kcl_text(const json_t *r, FILE *out)
{
    const json_t *c;
    size_t i;
    json_array_foreach(json_object_get(r, "consumers"), i, c)
    {
        if (strcmp(js(c, "kind"), "kcl") != 0)
            continue;
        const json_t *t = json_object_get(c, "lease_table");
        fprintf(out, "\nKCL application %s (lease table %s%s, %s", js(c, "name"),
                js(c, "application_name"),
                json_is_true(json_object_get(c, "lease_table_shared")) ? ", shared" : "",
                js(t, "billing"));
        if (strcmp(js(t, "billing"), "provisioned") == 0)
            fprintf(out, " %" PRIu64 " RCU / %" PRIu64 " WCU", ju(t, "read_capacity"),
                    ju(t, "write_capacity"));
        fprintf(out, ")\n");
        fprintf(out, "  %-14s %-11s %7s %12s %10s %7s %7s %6s %8s %9s %8s\n", "worker", "state",
                "leases", "processed", "again", "taken", "stolen", "lost", "expired", "renew thr.",
                "idle s");
        const json_t *w;
        size_t k;
        json_array_foreach(json_object_get(c, "workers"), k, w)
        {
            fprintf(out,
                    "  %-14s %-11s %7" PRIu64 " %12" PRIu64 " %10" PRIu64 " %7" PRIu64 " %7" PRIu64
                    " %6" PRIu64 " %8" PRIu64 " %9" PRIu64 " %8.0f\n",
                    js(w, "name"), js(w, "state_end"), ju(w, "leases_held_end"),
                    ju(w, "records_processed"), ju(w, "records_reprocessed"), ju(w, "leases_taken"),
                    ju(w, "leases_stolen"), ju(w, "leases_lost"), ju(w, "leases_self_expired"),
                    ju(w, "renewals_throttled"), jr(w, "idle_s"));
        }
        const json_t *bc = json_object_get(c, "lease_moves_by_cause");
        const json_t *la = json_object_get(c, "lease_assignment");
        if (la) {
            const json_t *ld = json_object_get(c, "leaders");
            fprintf(out,
                    "  KCL 3.x assignment %s: %" PRIu64 " LAM runs, %zu leader election(s), "
                    "%" PRIu64 " balancing moves, %" PRIu64 " graceful handoffs\n",
                    json_string_value(la), ju(c, "lam_runs"), json_array_size(ld),
                    ju(bc, "balance"), ju(c, "handoffs"));
        }
        fprintf(out,
                "  lease moves %" PRIu64 ": take %" PRIu64 ", steal %" PRIu64 ", expiry %" PRIu64
                " (%" PRIu64 " from healthy workers), shutdown %" PRIu64,
                ju(c, "lease_moves"), ju(bc, "take"), ju(bc, "steal"), ju(bc, "expiry"),
                ju(c, "lease_moves_from_healthy_workers"), ju(bc, "shutdown"));
        if (la) /* the causes add up to the moves: 3.x has one more */
            fprintf(out, ", balance %" PRIu64, ju(bc, "balance"));
        fputc('\n', out);
        fprintf(out,
                "  duplicates from failover %" PRIu64 " (records processed after the last "
                "checkpoint: %" PRIu64 "); idle workers at the end %" PRIu64 " of %" PRIu64 "\n",
                ju(c, "duplicates_from_failover"), ju(c, "replay_expected"),
                ju(c, "idle_workers_end"), ju(c, "workers_running_end"));
        fprintf(out,
                "  lease table: %.1f read units, %.1f write units consumed; throttled %" PRIu64
                " reads, %" PRIu64 " writes; checkpoints %" PRIu64 " (%" PRIu64 " throttled)\n",
                jr(t, "read_units_consumed"), jr(t, "write_units_consumed"),
                ju(t, "throttled_reads"), ju(t, "throttled_writes"), ju(c, "checkpoints"),
                ju(c, "checkpoints_throttled"));
        if (ju(c, "shard_sync_holes") > 0)
            fprintf(out,
                    "  shard-sync auditor: a hole in the open leases' hash ranges at %" PRIu64
                    " of %" PRIu64 " runs; %" PRIu64 " shard sync(s) recreated %" PRIu64
                    " lease(s)\n",
                    ju(c, "shard_sync_holes"), ju(c, "shard_sync_audits"), ju(c, "shard_syncs"),
                    ju(c, "leases_recreated"));
        const json_t *e;
        json_array_foreach(json_object_get(c, "worker_events"), k, e)
        {
            const json_t *cv = json_object_get(e, "converged_after_s");
            fprintf(out, "  t=%.1fs %s %s: ", jr(e, "t_s"), js(e, "worker"), js(e, "event"));
            if (json_is_null(cv))
                fprintf(out, "leases not balanced again by the end\n");
            else
                fprintf(out, "leases balanced again after %.1f s\n", json_number_value(cv));
        }
    }
}

/* ---- CSV ---------------------------------------------------------------------------- */

int kdsim_write_kcl_csv(const kds_world *w, const char *dir)
{
    bool any = false;
    for (size_t i = 0; i < w->n_consumers; i++)
        any |= kds_kcl_summary_get(w->consumers[i]) != NULL;
    if (!any)
        return 0;
    kdsim_afile a;
    int rc;
    if ((rc = kdsim_aopen(&a, dir, "kcl_workers_per_minute.csv")))
        return rc;
    fprintf(a.f, "minute,minutes,consumer,worker,leases_held\n");
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_kcl_summary *s = kds_kcl_summary_get(w->consumers[i]);
        if (!s)
            continue;
        for (size_t k = 0; k < s->n_workers; k++) {
            const kds_kcl_worker_summary *ws = &s->workers[k];
            for (size_t m = 0; m < ws->n_minutes; m++) /* a row a value (a minute or more) */
                fprintf(a.f, "%zu,%zu,%s,%s,%" PRIu32 "\n", m * ws->minutes_per_value,
                        ws->minutes_per_value, w->consumers[i]->name, ws->name,
                        ws->leases_per_minute[m]);
        }
    }
    if ((rc = kdsim_aclose(&a)))
        return rc;
    if ((rc = kdsim_aopen(&a, dir, "kcl_lease_table_per_minute.csv")))
        return rc;
    fprintf(a.f, "minute,minutes,consumer,read_units,write_units,throttled_requests\n");
    for (size_t i = 0; i < w->n_consumers; i++) {
        const kds_kcl_summary *s = kds_kcl_summary_get(w->consumers[i]);
        if (!s)
            continue;
        size_t minutes = s->n_workers ? s->workers[0].n_minutes : 0;
        size_t per = s->n_workers ? s->workers[0].minutes_per_value : 1;
        sim_time wd = (sim_time)per * SIM_MIN(1);
        const kds_lease_table_stats *t = &s->table->st;
        for (size_t m = 0; m < minutes; m++) {
            sim_time t0 = (sim_time)m * wd;
            fprintf(a.f, "%zu,%zu,%s,%.3f,%.3f,%.0f\n", m * per, per, w->consumers[i]->name,
                    sim_series_range(&t->read_units_min, t0, t0 + wd),
                    sim_series_range(&t->write_units_min, t0, t0 + wd),
                    sim_series_range(&t->throttled_min, t0, t0 + wd));
        }
    }
    return kdsim_aclose(&a);
}
