#!/usr/bin/env bash
# cli_replications.sh - `kdsim run --replications N [--warmup T]`: replication 0 is the
# plain run (same figures as its report), each replication is the plain run of its
# seed, the summary is the mean of the runs, one or two workers give the same output,
# and a warm-up is excluded exactly: its counts are those of the full run minus those
# of the run stopped at the warm-up time.
#
# usage: bash tests/cli_replications.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
scenario=scenarios/acme-clickstream.yaml
cli_tmpdir

k reps 0 run "$scenario" --duration 2m --replications 3 --json --jobs 2
k reps1 0 run "$scenario" --duration 2m --replications 3 --json --jobs 1
cmp -s "$tmp/reps.out" "$tmp/reps1.out" || fail "--jobs 2 and --jobs 1 differ"
k text 0 run "$scenario" --duration 2m --replications 3
grep -q "95% CI" "$tmp/text.out" || fail "the text table has no 95% CI column"
k plain 0 run "$scenario" --duration 2m --json
k warm 0 run "$scenario" --duration 3m --warmup 1m --json
k d3 0 run "$scenario" --duration 3m --json
k d1 0 run "$scenario" --duration 1m --json
seed2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seeds"][2])' "$tmp/reps.out")
k seed2 0 run "$scenario" --duration 2m --seed "$seed2" --json

if ! python3 - "$tmp" <<'EOF'; then
import json, sys
tmp = sys.argv[1]
load = lambda n: json.load(open("%s/%s.out" % (tmp, n)))
reps, plain, seed2 = load("reps"), load("plain"), load("seed2")

def figs_of(report):
    """The figures a report gives, as kdsim's figures name them (a few)."""
    c = {x["name"]: x for x in report["consumers"]}
    return {
        "stream.records_in": report["stream"]["records_in"],
        "stream.write_throttled_records": report["stream"]["write_throttled_records"],
        "producers.web.records_written": report["producers"][0]["records_written"],
        "consumers.live-metrics.latency_ms.p99": c["live-metrics"]["latency_ms"]["p99"],
        "consumers.s3-delivery.latency_ms.mean": c["s3-delivery"]["latency_ms"]["mean"],
        "cost.provisioned.monthly_usd": report["cost"]["modes"]["provisioned"]["monthly_usd"],
        "cost.on_demand_standard.monthly_usd":
            report["cost"]["modes"]["on_demand_standard"]["monthly_usd"],
    }

assert reps["seeds"][0] == plain["seed"] == 42, reps["seeds"]
assert len(set(reps["seeds"])) == 3
for rep, report in ((0, plain), (2, seed2)):
    got = reps["runs"][rep]["figures"]
    for k, v in figs_of(report).items():
        assert got[k] == v, (rep, k, got[k], v)
    assert reps["runs"][rep]["seed"] == report["seed"]
# The summary: means over the three runs, an interval, the extremes.
for k in ("consumers.live-metrics.latency_ms.p99", "stream.records_in"):
    vals = [r["figures"][k] for r in reps["runs"]]
    s = reps["summary"][k]
    assert s["n"] == 3 and abs(s["mean"] - sum(vals) / 3) < 1e-6 * max(1, abs(s["mean"])), (k, s)
    assert s["min"] == min(vals) and s["max"] == max(vals)
assert reps["summary"]["consumers.live-metrics.latency_ms.p99"]["ci95"] > 0
assert reps["summary"]["stream.records_in"]["ci95"] == 0  # evenly spaced arrivals: no spread
# The warm-up: counts are the 3-minute run's minus the 1-minute run's, exactly.
warm, d3, d1 = load("warm")["runs"][0]["figures"], figs_of(load("d3")), figs_of(load("d1"))
for k in ("stream.records_in", "producers.web.records_written"):
    assert warm[k] == d3[k] - d1[k], (k, warm[k], d3[k], d1[k])
r3, r1 = load("d3"), load("d1")
c3 = {x["name"]: x for x in r3["consumers"]}
c1 = {x["name"]: x for x in r1["consumers"]}
n3 = c3["live-metrics"]["records_delivered"]
n1 = c1["live-metrics"]["records_delivered"]
assert warm["consumers.live-metrics.records_delivered"] == n3 - n1
# The mean latency after the warm-up: the weighted difference of the two means (rounded
# to 3 decimals in the reports, hence the tolerance).
m = (c3["live-metrics"]["latency_ms"]["mean"] * n3 - c1["live-metrics"]["latency_ms"]["mean"] * n1) / (n3 - n1)
assert abs(warm["consumers.live-metrics.latency_ms.mean"] - m) < 0.01, (warm["consumers.live-metrics.latency_ms.mean"], m)
assert load("warm")["warmup_s"] == 60
EOF
    fail "replication figures (see the Python traceback above)"
fi

# A latency of no record delivered, and the iterator age of a reader that never read,
# are not defined: null, not 0 (a reader started after the end; and after a warm-up, one
# whose first read comes after the end). A reader that polled an idle stream read
# everything there was: its age of 0 stands; its latencies have no record.
small=tests/scenarios/plan-small.yaml
k never 0 run "$small" --duration 1m --set 'consumers[0].start=10m' --replications 2 --json
k neverw 0 run "$small" --duration 2m --set 'consumers[0].start=10m' --warmup 1m \
    --replications 1 --json
k idle 0 run "$small" --duration 1m --set 'producers[0].start=10m' --replications 1 --json
k nevert 0 run "$small" --duration 1m --set 'consumers[0].start=10m' --replications 2
python3 - "$tmp" <<'EOF2' || fail "undefined latencies and iterator ages are not null"
import json, sys
load = lambda n: json.load(open("%s/%s.out" % (sys.argv[1], n)))
lat = ["consumers.reader.latency_ms." + k for k in ("mean", "p50", "p90", "p99", "max")]
age = "consumers.reader.iterator_age_ms_max"
for name in ("never", "neverw"):
    d = load(name)
    for r in d["runs"]:
        for k in lat + [age]:
            assert r["figures"][k] is None, (name, k, r["figures"][k])
    for k in lat + [age]:
        s = d["summary"][k]
        assert s["n"] == 0 and s["mean"] is None and s["ci95"] is None, (name, k, s)
idle = load("idle")["runs"][0]["figures"]
assert idle["consumers.reader.getrecords_calls"] > 0
assert idle[age] == 0, idle[age]
assert all(idle[k] is None for k in lat), idle
EOF2
grep -q '^consumers.reader.latency_ms.p99  *-  *n/a  *-  *- \*$' "$tmp/nevert.out" ||
    fail "the text table shows an undefined latency: $(grep p99 "$tmp/nevert.out")"
# A single run's report says the same: a null iterator age ("-" in the text) for the reader
# that never read, 0 for the one that polled an idle stream.
k never1 0 run "$small" --duration 1m --set 'consumers[0].start=10m' --json
k idle1 0 run "$small" --duration 1m --set 'producers[0].start=10m' --json
k never1t 0 run "$small" --duration 1m --set 'consumers[0].start=10m'
python3 - "$tmp" <<'EOF3' || fail "a single run's iterator age of a reader that never read"
import json, sys
load = lambda n: json.load(open("%s/%s.out" % (sys.argv[1], n)))
never, idle = load("never1")["consumers"][0], load("idle1")["consumers"][0]
assert never["getrecords_calls"] == 0 and never["iterator_age_ms_max"] is None, never
assert idle["getrecords_calls"] > 0 and idle["iterator_age_ms_max"] == 0, idle
EOF3
# The kinds' own ages (Lambda's IteratorAge, Flink's MillisBehindLatest) too.
k never3 0 run scenarios/acme-clickstream.yaml --duration 1m --set 'consumers[0].start=10m' \
    --set 'consumers[1].start=10m' --set 'consumers[2].start=10m' --json
python3 - "$tmp/never3.out" <<'EOF3' || fail "a never-read reader's own iterator age is not null"
import json, sys
cs = {c["name"]: c for c in json.load(open(sys.argv[1]))["consumers"]}
assert all(c["iterator_age_ms_max"] is None for c in cs.values()), cs
lam, fl = cs["live-metrics"]["figures"], cs["sessionizer"]["figures"]
assert lam["iterator_age_ms_max"] is None and fl["millis_behind_latest_max"] is None, (lam, fl)
EOF3
grep -Eq '^  reader +[a-z]+ +0 +0 +0 +- +- +- +- +- +0$' "$tmp/never1t.out" ||
    fail "the text report's age of a reader that never read: $(grep reader "$tmp/never1t.out")"

k zero 2 run "$scenario" --replications 0
k long 2 run "$scenario" --duration 2m --warmup 5m
grep -q "warm-up (5m) must be shorter than the run (2m)" "$tmp/long.err" ||
    fail "a warm-up longer than the run: $(cat "$tmp/long.err")"
k badset 2 run "$scenario" --replications 2 --set stream.shards=0
grep -c "stream.shards" "$tmp/badset.err" | grep -qx 1 || fail "a bad scenario is reported more than once"

# On a terminal the count is redrawn in place, each time erased to the end of the line,
# and the last count ends its line. `script` gives stderr a terminal (skipped without it).
if command -v script >/dev/null; then
    timeout 120 script -qec "'$kdsim' run $scenario --duration 5s --replications 3 --jobs 2 >/dev/null" \
        /dev/null >"$tmp/tty.out" 2>&1
    python3 - "$tmp/tty.out" <<'EOF4' || fail "the progress line on a terminal: $(cat -v "$tmp/tty.out")"
import sys
t = open(sys.argv[1], "rb").read().replace(b"\r\n", b"\n")
want = b"".join(b"\r\033[Kkdsim: replications: %d of 3 runs done" % i for i in (1, 2, 3))
assert t == want + b"\n", t
EOF4
fi

cli_finish cli_replications
