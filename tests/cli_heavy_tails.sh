#!/usr/bin/env bash
# cli_heavy_tails.sh - heavy-tailed distributions on every distribution-valued key
# (producer latency and record_size, call_latency, processing, push_delay,
# subscribe_latency, put_latency, a KCL lease table's sync_wait, a Lambda function's
# duration) never schedule an event in the past or overflow the clock: a draw longer
# than 1000 days counts as 1000 days (sim_ms_to_ns), a size above 1 TiB as 1 TiB, and
# the run completes. Before, `run` aborted (exit 134) on sim.c's "t >= now" assertion.
# usage: bash tests/cli_heavy_tails.sh KDSIM SRCDIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir
f=tests/scenarios/heavy-tails.yaml

k validate 0 validate "$f"
k run 0 run "$f" --json && grep -q '"consumers"' "$tmp/run.out" || fail "run: no JSON report"
grep -q "internal error" "$tmp/run.err" && fail "run: $(head -c 300 "$tmp/run.err")"
# A latency is at most a few capped draws (a push, then its processing): never negative,
# never past 4000 days (3.456e11 ms); and some reach the cap.
python3 - "$tmp/run.out" <<'PY' || failed=$((failed + 1))
import json, sys
r = json.load(open(sys.argv[1]))
bad = []
capped = False
for c in r["consumers"]:
    lat = c["latency_ms"]
    if c["records_delivered"] == 0:  # no latency to bound: null, each
        if any(v is not None for v in lat.values()):
            bad.append("%s delivered nothing but has latency_ms %r" % (c["name"], lat))
        continue
    for k, v in lat.items():
        if not (0 <= v <= 3.456e11):
            bad.append("%s latency_ms.%s = %r" % (c["name"], k, v))
    capped = capped or lat["max"] >= 8.64e10
if not capped:
    bad.append("no latency reached a capped draw (1000 days): the test lost its heavy tails")
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY

# The audit's cases, one key at a time, on a tiny stream.
base='duration: 2m
stream: {shards: 2}
producers:
  - {name: a, rate: 100 records/s, record_size: 1 KiB'
printf '%s, latency: {dist: pareto, min: 1ms, alpha: 0.1}}\n' "$base" >"$tmp/pareto.yaml"
printf '%s, latency: {dist: exp, mean: 90000d}}\n' "$base" >"$tmp/exp.yaml"
printf '%s}\nconsumers:\n  - {name: f, kind: firehose, put_latency: {dist: pareto, min: 1ms, alpha: 0.05}}\n' \
    "$base" >"$tmp/firehose.yaml"
for c in pareto exp firehose; do
    k "$c" 0 run "$tmp/$c.yaml"
done

cli_finish cli_heavy_tails
