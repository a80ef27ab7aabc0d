#!/usr/bin/env bash
# cli_kcl_scenarios.sh - the shipped KCL scenarios show what issue 6 says they show,
# read from their JSON reports: a second worker converging to three leases each by
# steals; a crashed worker's leases taken 20-40 s after its last renewal with the
# records since each checkpoint delivered twice; a long pause; twelve workers leaving
# six idle; an under-provisioned lease table churning while an on-demand one is
# stable; staging and production sharing an application name; a rolling deployment;
# and KCL 3.x beside 2.x: a join balanced by the leader with graceful handoffs.
# Also: the KCL keys of the JSON consumer object, the consumer conservation rule, the
# KCL CSV files of --out, consumers_per_minute.csv adding up to records_delivered,
# report.html's replay_expected total, determinism, the loader's messages for bad KCL
# keys, an application starting at a timestamp, one whose enhanced fan-out a slow
# processor holds back, and a graceful stop whose shutdown checkpoint finds its lease
# taken.
# usage: bash tests/cli_kcl_scenarios.sh KDSIM SRCDIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

run() { # name out-dir args...
    local name=$1 out=$2
    shift 2
    if ! "$kdsim" run "scenarios/$name.yaml" --json --out "$out" "$@" >"$out.json" 2>"$tmp/err"; then
        fail "$name: kdsim run failed: $(cat "$tmp/err")"
    fi
}

# Short runs where the story is told early; the others are quick at full length.
run kcl-second-worker "$tmp/sw" --duration 5m
run kcl-worker-crash "$tmp/wc" --duration 6m
run kcl-gc-pause "$tmp/gc"
run kcl-twelve-workers "$tmp/tw" --duration 2m
run kcl-small-lease-table "$tmp/sl" --duration 15m
run kcl-shared-application-name "$tmp/sh" --duration 8m
run kcl-rolling-deployment "$tmp/rd"
run kcl-worker-crash "$tmp/wc2" --duration 6m
run kcl3-second-worker "$tmp/k3"

python3 - "$tmp" <<'PY' || failed=$((failed + 1))
import csv, json, sys
tmp = sys.argv[1]
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)

def load(d):
    return json.load(open(f"{tmp}/{d}.json"))

def kcl(r, name=None):
    for c in r["consumers"]:
        if c["kind"] == "kcl" and (name is None or c["name"] == name):
            return c
    raise SystemExit(f"FAIL no kcl consumer {name}")

def worker(c, name):
    return next(w for w in c["workers"] if w["name"] == name)

reports = {d: load(d) for d in ("sw", "wc", "gc", "tw", "sl", "sh", "rd", "k3")}

# Every KCL consumer object: the issue's keys beside the common ones, and conservation.
for d, r in reports.items():
    stored = r["stream"]["records_in"]
    for c in r["consumers"]:
        for k in ("records_delivered", "duplicates_delivered", "latency_ms", "workers",
                  "lease_moves", "lease_table_throttled_writes", "lease_moves_by_cause",
                  "worker_events", "lease_table", "duplicates_from_failover", "idle_workers_end"):
            check(k in c, f"{d}: consumer {c['name']} lacks key {k}")
        for w in c.get("workers", []):
            for k in ("name", "leases_held_end", "records_processed", "leases_per_minute"):
                check(k in w, f"{d}: worker {w.get('name')} lacks key {k}")
        total = c["records_skipped_at_start"] + c["records_delivered"] + c["records_unread"] + c["records_expired_unread"]
        check(total == stored, f"{d}: {c['name']}: skipped + delivered + unread + expired = {total}, stored {stored}")
        check(c["duplicates_delivered"] == c["duplicates_from_failover"],
              f"{d}: {c['name']}: duplicates {c['duplicates_delivered']} are not all from lease moves ({c['duplicates_from_failover']})")

# A second worker joins six shards: 3 and 3, by three steals, within three taker passes.
c = kcl(reports["sw"])
check([w["leases_held_end"] for w in c["workers"]] == [3, 3], f"second-worker: leases at the end {[w['leases_held_end'] for w in c['workers']]}")
check(c["lease_moves_by_cause"] == {"take": 6, "steal": 3, "expiry": 0, "shutdown": 0},
      f"second-worker: moves {c['lease_moves_by_cause']}")
# One steal per taker pass: at the join and 20.05 s and 40.1 s later.
ev = c["worker_events"]
check(len(ev) == 2 and ev[1]["worker"] == "worker-b" and ev[1]["converged_after_s"] == 40.1,
      f"second-worker: the join did not converge at the third taker pass (40.1 s): {ev}")
steals = [round(m["t_s"] - 180, 3) for m in c["lease_move_log"] if m["cause"] == "steal"]
check(steals == [0.0, 20.05, 40.1], f"second-worker: steals at {steals} s after the join")
# worker-a creates the leases at 24 s and sleeps 60 s after that shard sync (the KCL's
# shardSyncIntervalMillis): it holds none in minute 0, all six from 84 s.
first = [m["t_s"] for m in c["lease_move_log"] if m["to"] == "worker-a"]
check(first == [84.0] * 6, f"second-worker: worker-a takes at {first}, not 60 s after its shard sync")
check(worker(c, "worker-a")["leases_per_minute"][:3] == [0, 6, 6] and worker(c, "worker-b")["leases_per_minute"][-1] == 3,
      "second-worker: leases per minute")

# A crash at 4 min: worker-c's two leases taken 20-40 s after its last renewal (at most
# one renewal period, 3.308 s, before the crash); each replays what it processed after
# its last checkpoint, fewer than the 1,000-record policy.
c = kcl(reports["wc"])
crash = 240.0
exp = [m for m in c["lease_move_log"] if m["cause"] == "expiry"]
check(len(exp) == 2 and all(m["from"] == "worker-c" and not m["from_healthy"] for m in exp),
      f"worker-crash: expected two expiry moves from worker-c: {exp}")
for m in exp:
    check(20 - 3.308 <= m["t_s"] - crash <= 40.1, f"worker-crash: taken {m['t_s'] - crash:.1f} s after the crash")
    check(m["duplicates"] == m["replay_expected"] < 1000, f"worker-crash: move {m}")
check(worker(c, "worker-c")["state_end"] == "crashed" and worker(c, "worker-c")["leases_held_end"] == 0, "worker-crash: worker-c")
check(sum(w["leases_held_end"] for w in c["workers"]) == 6, "worker-crash: six leases held at the end")
check(json.dumps(reports["wc"]) == json.dumps(load("wc2")), "worker-crash: two runs with one seed differ")

# A 45 s pause at 3 min: taken during it, given up by worker-c after it, stolen back.
c = kcl(reports["gc"])
exp = [m for m in c["lease_move_log"] if m["cause"] == "expiry"]
check(len(exp) == 2 and all(m["from"] == "worker-c" and 180 < m["t_s"] < 225 for m in exp),
      f"gc-pause: expected two expiry moves during the pause: {exp}")
wc = worker(c, "worker-c")
check(wc["leases_self_expired"] == 2 and wc["leases_held_end"] == 2,
      f"gc-pause: worker-c gave up {wc['leases_self_expired']}, ends with {wc['leases_held_end']}")
check(c["duplicates_from_failover"] > c["replay_expected"], "gc-pause: no zombie processing after the pause")
check([e["event"] for e in c["worker_events"]][-2:] == ["pause", "resume"], f"gc-pause: events {c['worker_events']}")

# Twelve workers, six shards: six hold one lease, six hold none.
c = kcl(reports["tw"])
held = sorted(w["leases_held_end"] for w in c["workers"])
check(held == [0] * 6 + [1] * 6, f"twelve-workers: leases held {held}")
check(c["idle_workers_end"] == 6, f"twelve-workers: idle_workers_end {c['idle_workers_end']}")

# The under-provisioned table churns between healthy workers, the on-demand one not;
# the churning application's iterator age rises (a lease that moved restarts at its
# checkpoint, behind the tip: above 10 s at its worst, in the minutes of churn) where
# the on-demand one's stays under 5 s; the stream throttles no write.
r = reports["sl"]
small, od = kcl(r, "orders-small-table"), kcl(r, "orders-on-demand")
check(small["lease_table"]["billing"] == "provisioned" and small["lease_table"]["write_capacity"] == 5, "small-table: table settings")
check(small["lease_table_throttled_writes"] > 100, f"small-table: throttled writes {small['lease_table_throttled_writes']}")
check(small["lease_moves_from_healthy_workers"] >= 20, f"small-table: moves from healthy workers {small['lease_moves_from_healthy_workers']}")
check(small["iterator_age_ms_max"] > 10000, f"small-table: iterator age {small['iterator_age_ms_max']}")
check(od["lease_table_throttled_writes"] == 0 and od["lease_moves_by_cause"]["expiry"] == 0
      and od["lease_moves_from_healthy_workers"] == 0, f"small-table: the on-demand table churns: {od['lease_moves_by_cause']}")
check(od["iterator_age_ms_max"] < 5000, f"small-table: on-demand iterator age {od['iterator_age_ms_max']}")
check(r["stream"]["write_throttled_records"] == 0, "small-table: the stream throttles writes")
check(small["latency_ms"]["p99"] > 5 * od["latency_ms"]["p99"], "small-table: latency p99 not worse with churn")

# Staging shares production's application name: one table, shards split between them.
r = reports["sh"]
prod, stg = kcl(r, "production"), kcl(r, "staging")
check(prod["lease_table_shared"] and stg["lease_table_shared"], "shared: lease_table_shared")
check(prod["application_name"] == stg["application_name"] == "orders-processor", "shared: application names")
check(sum(w["leases_held_end"] for w in stg["workers"]) >= 2, "shared: staging holds no lease")
check(sum(w["leases_held_end"] for w in prod["workers"]) + sum(w["leases_held_end"] for w in stg["workers"]) == 8,
      "shared: eight leases in all")
check(any(m["from_consumer"] == "production" for m in stg["lease_move_log"]), "shared: staging took nothing from production")
check(prod["records_delivered"] < 0.95 * r["stream"]["records_in"], "shared: production still sees every record")

# Rolling deployment: every worker stopped and came back; each of its leases moved
# after expiry ("shutdown"); every event converged.
c = kcl(reports["rd"])
check(c["lease_moves_by_cause"]["shutdown"] == 8, f"rolling: shutdown moves {c['lease_moves_by_cause']}")
check(all(w["starts"] == 2 and w["leases_held_end"] == 2 for w in c["workers"]), "rolling: workers")
check(all(e["converged_after_s"] is not None for e in c["worker_events"]), "rolling: an event never converged")

# KCL 3.x beside 2.x, a second worker joining at 3 min: 2.x steals three leases in three
# taker passes (40.1 s) and replays; 3.x moves three by the leader's balancing, one per
# balancing run (60 s apart), by graceful handoff, with nothing delivered twice.
r = reports["k3"]
old, new = kcl(r, "orders-2x"), kcl(r, "orders-3x")
check("lease_assignment" not in old and "balance" not in old["lease_moves_by_cause"]
      and "query" not in old["lease_table"]["requests"], "kcl3: the 2.x application has 3.x keys")
check(new["lease_assignment"] == "worker_utilization", f"kcl3: lease_assignment {new.get('lease_assignment')}")
check(old["lease_moves_by_cause"] == {"take": 6, "steal": 3, "expiry": 0, "shutdown": 0},
      f"kcl3: 2.x moves {old['lease_moves_by_cause']}")
check(new["lease_moves_by_cause"] == {"take": 6, "steal": 0, "expiry": 0, "shutdown": 0, "balance": 3},
      f"kcl3: 3.x moves {new['lease_moves_by_cause']}")
check(old["duplicates_from_failover"] > 1000, f"kcl3: 2.x duplicates {old['duplicates_from_failover']}")
check(new["duplicates_from_failover"] == 0 and new["handoffs"] == 3,
      f"kcl3: 3.x duplicates {new['duplicates_from_failover']}, handoffs {new['handoffs']}")
check(worker(new, "worker-a")["handoffs_out"] == 3 and worker(new, "worker-a")["handoffs_timed_out"] == 0,
      "kcl3: worker-a's handoffs")
check(len(new["leaders"]) == 1 and new["leaders"][0]["worker"] == "worker-a", f"kcl3: leaders {new['leaders']}")
check(old["worker_events"][1]["converged_after_s"] == 40.1, f"kcl3: 2.x join {old['worker_events'][1]}")
conv = new["worker_events"][1]["converged_after_s"]
check(conv is not None and 120 < conv <= 180, f"kcl3: the 3.x join converged after {conv} s, not in three balancing runs")
bal = [m["t_s"] for m in new["lease_move_log"] if m["cause"] == "balance"]
# One move per balancing run (every third LAM run, 60 s apart); the new owner takes the
# lease when its discoverer (every 10 s) next runs after the handoff.
check(len(bal) == 3 and all(45 < b - a < 75 for a, b in zip(bal, bal[1:])), f"kcl3: balance moves at {bal}")
check([w["leases_held_end"] for w in new["workers"]] == [3, 3], "kcl3: 3.x leases at the end")
# Besides the leader's scans, each worker checks the table at its start (a scan of one
# item): worker-b, joining a running application, once.
checks = sum(w["startup_checks"] for w in new["workers"])
check(new["lease_table"]["requests"]["scan"] == new["lam_runs"] + new["shard_sync_audits"] + checks
      and worker(new, "worker-b")["scans"] == 0 and worker(new, "worker-b")["shard_sync_audits"] == 0
      and worker(new, "worker-b")["startup_checks"] == 1,
      "kcl3: someone but the leader scanned")

# --out: the KCL files, headers and one row per minute and worker.
rows = list(csv.reader(open(f"{tmp}/tw/kcl_workers_per_minute.csv")))
check(rows[0] == ["minute", "minutes", "consumer", "worker", "leases_held"], f"kcl_workers_per_minute.csv header {rows[0]}")
check(len(rows) == 1 + 2 * 12, f"kcl_workers_per_minute.csv: {len(rows) - 1} rows, expected 24")
rows = list(csv.reader(open(f"{tmp}/sl/kcl_lease_table_per_minute.csv")))
check(rows[0] == ["minute", "minutes", "consumer", "read_units", "write_units", "throttled_requests"], f"kcl_lease_table_per_minute.csv header {rows[0]}")
thr = sum(float(x[5]) for x in rows[1:] if x[2] == "orders-small-table")
check(thr == small["lease_table"]["throttled_reads"] + small["lease_table"]["throttled_writes"],
      "kcl_lease_table_per_minute.csv: throttled requests do not add up")
# report.html, the whole report, has the application's totals as report.txt gives them,
# the records processed after the last checkpoint (replay_expected) among them.
import html
page = html.unescape(open(f"{tmp}/wc/report.html").read())
c = kcl(reports["wc"])
want = (f"Duplicates from failover {c['duplicates_from_failover']:,} (records processed after "
        f"the last checkpoint: {c['replay_expected']:,}).")
check(c["replay_expected"] > 0 and want in page, f"worker-crash: report.html lacks {want!r}")
# consumers_per_minute.csv counts first deliveries, as records_delivered: the crash's
# replays (duplicates) are in neither, so each consumer's minutes add up to it.
check(reports["wc"]["consumers"][0]["duplicates_delivered"] > 0, "worker-crash: no replays")
for d, r in reports.items():
    per = {}
    for x in csv.DictReader(open(f"{tmp}/{d}/consumers_per_minute.csv")):
        per[x["consumer"]] = per.get(x["consumer"], 0) + int(x["records_delivered"] or 0)
    for c in r["consumers"]:
        check(per.get(c["name"], 0) == c["records_delivered"],
              f"{d}: {c['name']}: consumers_per_minute.csv adds up to {per.get(c['name'])}, "
              f"records_delivered {c['records_delivered']}")

for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY

# The text report has a KCL section.
if ! "$kdsim" run scenarios/kcl-twelve-workers.yaml --duration 1m >"$tmp/tw-text.out" 2>&1; then
    fail "kcl-twelve-workers: the text report's run failed: $(head -3 "$tmp/tw-text.out")"
elif ! grep -q "^KCL application orders-processor" "$tmp/tw-text.out"; then
    fail "the text report has no KCL section"
fi
# Its lease-move line names every cause the application has, so that they add up: 3.x
# moves by balancing too (the 2.x line has no such cause).
moves=$(grep "^  lease moves " "$tmp/k3/report.txt")
if ! printf '%s\n' "$moves" | sed -n 2p | grep -q "^  lease moves 9: take 6, steal 0, expiry 0 (0 from healthy workers), shutdown 0, balance 3$" ||
    printf '%s\n' "$moves" | sed -n 1p | grep -q "balance"; then
    fail "kcl3-second-worker's text report: lease-move lines $moves"
fi

# expect_messages NAME N PATTERN...: `kdsim validate $tmp/NAME.yaml` exits 2 with N
# messages, one matching each PATTERN (grep).
expect_messages() {
    local name=$1 n=$2 want got
    shift 2
    "$kdsim" validate "$tmp/$name.yaml" 2>"$tmp/$name.err" >/dev/null
    got=$?
    [ $got -eq 2 ] || fail "validate $name.yaml: exit status $got, expected 2"
    got=$(grep -c "$name.yaml:" "$tmp/$name.err")
    [ "$got" -eq "$n" ] || { fail "validate $name.yaml: $got messages, expected $n"; sed 's/^/    got: /' "$tmp/$name.err"; }
    for want in "$@"; do
        if ! grep -q "$want" "$tmp/$name.err"; then
            fail "validate $name.yaml: no message like: $want"
            sed 's/^/    got: /' "$tmp/$name.err"
        fi
    done
}

# Bad KCL keys: one message each, with file:line:col and the key path.
cat >"$tmp/bad.yaml" <<'EOF'
duration: 5m
stream: {shards: 2}
consumers:
  - name: app
    kind: kcl
    retrieval: polling
    start_position: at_sequence_number
    start_sequence: 5
    push_delay: 70ms
    checkpoint: {every_record: 10}
    leases: {failover: 1s, renew_interval: 2s}
    lease_table: {billing: dynamo}
    workers:
      - name: w1
        events:
          - {at: 1m, action: pause}
          - {at: 2m, action: start, restart_after: 1m}
      - {name: w1}
producers:
  - {name: p, rate: 10 records/s, record_size: 1 KiB}
EOF
expect_messages bad 9 \
    "bad.yaml:7:21: consumers\[0\].start_position: a KCL application starts new leases at trim_horizon, latest or at_timestamp" \
    "bad.yaml:8:5: consumers\[0\]: unknown key 'start_sequence'" \
    "bad.yaml:9:17: consumers\[0\].push_delay: applies to retrieval: efo only" \
    "bad.yaml:10:18: consumers\[0\].checkpoint: unknown key 'every_record'" \
    "bad.yaml:11:13: consumers\[0\].leases: the renewer runs every 2.000 s, not more often than the failover time (1.000 s)" \
    "bad.yaml:12:28: consumers\[0\].lease_table.billing" \
    "bad.yaml:16:13: consumers\[0\].workers\[0\].events\[0\]: missing required key 'for'" \
    "bad.yaml:17:52: consumers\[0\].workers\[0\].events\[1\].restart_after: applies to action: stop or crash only" \
    "bad.yaml:18:16: consumers\[0\].workers\[1\].name: worker name 'w1' is already used by workers\[0\]"

# Bad KCL 3.x keys.
cat >"$tmp/bad3.yaml" <<'EOF'
duration: 5m
stream: {shards: 2}
consumers:
  - {name: a, kind: kcl, workers: 1, kcl3: {dampening: 50}}
  - {name: b, kind: kcl, workers: 1, lease_assignment: lease_count, kcl3: {metric: cpu}}
  - {name: c, kind: kcl, workers: 1, lease_assignment: leader}
  - name: d
    kind: kcl
    workers: 1
    lease_assignment: worker_utilization
    kcl3: {leader_lock_heartbeat: 2m, dampening: 120}
producers:
  - {name: p, rate: 10 records/s, record_size: 1 KiB}
EOF
expect_messages bad3 5 \
    "bad3.yaml:4:44: consumers\[0\].kcl3: applies to KCL 3.x lease assignment only; set lease_assignment: worker_utilization" \
    "bad3.yaml:5:84: consumers\[1\].kcl3.metric: applies to lease_assignment: worker_utilization only" \
    "bad3.yaml:6:56: consumers\[2\].lease_assignment: expected one of taker, worker_utilization, lease_count" \
    "bad3.yaml:11:11: consumers\[3\].kcl3: the leader lock is heartbeaten every 120.000 s but lasts 120.000 s" \
    "consumers\[3\].kcl3.dampening"

# --- an application that starts at a timestamp ------------------------------------------------
# Its one worker starts at 3 minutes with start_position at_timestamp 1 minute: each new
# lease starts at the first record written at 1 minute or later (kcl.md's
# initialPositionInStream AT_TIMESTAMP), so the first minute is skipped and the rest read.
cat >"$tmp/at-ts.yaml" <<'EOF'
duration: 6m
seed: 4
stream: {shards: 2}
producers:
  - {name: p, rate: 100 records/s, record_size: 1 KiB}
consumers:
  - {name: app, kind: kcl, start_position: at_timestamp, start_timestamp: 1m,
     workers: [{name: w1, start: 3m}]}
EOF
if "$kdsim" run "$tmp/at-ts.yaml" --json >"$tmp/at-ts.json" 2>"$tmp/err"; then
    jq -e '.stream.records_in as $in | .consumers[0] | .records_skipped_at_start >= 5900
        and .records_skipped_at_start <= 6100 and .records_expired_unread == 0
        and .records_skipped_at_start + .records_delivered + .records_unread == $in' \
        "$tmp/at-ts.json" >/dev/null ||
        fail "at_timestamp 1m: not the first minute skipped and the rest read: $(jq -c \
            '.consumers[0] | [.records_skipped_at_start, .records_delivered, .records_unread]' \
            "$tmp/at-ts.json")"
else
    fail "at_timestamp: kdsim run failed: $(cat "$tmp/err")"
fi

# --- enhanced fan-out held back by a slow processor ---------------------------------------
# 500 records/s against a processor that takes 3 ms a record: the prefetch queue fills to
# its 8 MiB (8,192 records of 1 KiB, before its 30,000-record limit), the subscription
# pauses, and resumes as the processor drains it, again and again. Without the resume
# the application would stop after the first full queue; with it, it processes what its
# speed allows, about 300 records/s from its start at 81 s.
cat >"$tmp/bp.yaml" <<'EOF'
duration: 5m
seed: 4
stream: {shards: 1}
producers:
  - {name: p, rate: 500 records/s, record_size: 1 KiB}
consumers:
  - {name: app, kind: kcl, retrieval: efo, start_position: trim_horizon,
     processing: {per_batch: 100ms, per_record: 3ms}, workers: [{name: w1}]}
EOF
if "$kdsim" run "$tmp/bp.yaml" --json >"$tmp/bp.json" 2>"$tmp/err"; then
    jq -e '.stream.records_in as $in | .consumers[0] | .records_delivered > 50000
        and .records_delivered < 75000 and .records_skipped_at_start + .records_delivered
        + .records_unread + .records_expired_unread == $in' "$tmp/bp.json" >/dev/null ||
        fail "EFO back-pressure: the application does not keep processing at its own speed: \
$(jq -c '.consumers[0] | [.records_delivered, .records_unread]' "$tmp/bp.json")"
else
    fail "EFO back-pressure: kdsim run failed: $(cat "$tmp/err")"
fi

# DynamoDB's largest provisioned table (40,000 read and write units, 300 s of burst)
# runs: its buckets once overflowed their integer range and stopped the run on an
# assertion. Nothing throttles on such a table.
run kcl-small-lease-table "$tmp/big" --duration 2m \
    --set consumers[0].lease_table.read_capacity=40000 \
    --set consumers[0].lease_table.write_capacity=40000 \
    --set consumers[0].lease_table.burst=5m
jq -e '[.consumers[0].lease_table | .throttled_reads, .throttled_writes] == [0, 0]' \
    "$tmp/big.json" >/dev/null ||
    fail "the largest lease table throttled: $(jq -c '.consumers[0].lease_table
        | [.throttled_reads, .throttled_writes]' "$tmp/big.json" 2>&1)"

# Records a paused processor processes after its leases were taken again past them
# (tests/scenarios/kcl-gap-first-delivery.yaml) are first deliveries, not repeats, and no
# longer skipped.
if "$kdsim" run tests/scenarios/kcl-gap-first-delivery.yaml --json >"$tmp/gap.json" \
    2>"$tmp/err"; then
    python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["consumers"][0]
w = c["workers"][0]
assert c["records_delivered"] > 0 and c["duplicates_delivered"] == 0, c
assert w["records_processed"] - w["records_reprocessed"] == c["records_delivered"], (w, c)
assert c["records_skipped_gaps"] <= c["records_skipped_at_start"], c' "$tmp/gap.json" ||
        fail "a paused processor's first deliveries after a gap: $(jq -c '.consumers[0]
            | [.records_delivered, .duplicates_delivered, .records_skipped_gaps]' "$tmp/gap.json")"
else
    fail "kcl-gap-first-delivery: kdsim run failed: $(cat "$tmp/err")"
fi

# A graceful stop whose shutdown checkpoint finds the lease taken by another worker
# (tests/scenarios/kcl-shutdown-checkpoint-lost.yaml): the run ends cleanly (the
# shutdown once used the processor the lost lease had freed) and the trace shows it.
if "$kdsim" run tests/scenarios/kcl-shutdown-checkpoint-lost.yaml --json \
    --trace "$tmp/lost.trace" >"$tmp/lost.json" 2>"$tmp/err"; then
    grep -q '^ *141\.000000  lease      app1/w1 .*lease lost: a checkpoint found another worker' \
        "$tmp/lost.trace" ||
        fail "kcl-shutdown-checkpoint-lost: no lost shutdown checkpoint at 141 s in the trace"
else
    fail "kcl-shutdown-checkpoint-lost: kdsim run failed: $(tail -5 "$tmp/err")"
fi

cli_finish cli_kcl_scenarios
