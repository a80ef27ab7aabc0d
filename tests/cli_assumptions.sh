#!/usr/bin/env bash
# cli_assumptions.sh - the report lists the assumptions it ran with (the charter: a
# number AWS does not publish is a setting with a documented default, and the report
# lists it): one scenario with a reader of every kind is run, and its `assumptions`
# array is checked for the settings each reader used, with their values. A distribution
# shows the clamps that bound it.
#
# usage: bash tests/cli_assumptions.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# A reader of every kind: EFO through each kind that can, polling through the others.
cat >"$tmp/all.yaml" <<'EOF'
name: all-readers
duration: 2m
stream: {name: s, shards: 2}
producers:
  - {name: p, rate: 200 records/s, record_size: 1 KiB}
consumers:
  - {name: e, kind: efo}
  - {name: le, kind: lambda, retrieval: efo}
  - {name: lp, kind: lambda}
  - {name: ke, kind: kcl, retrieval: efo, workers: [{name: w, start: 0s}]}
  - {name: fe, kind: flink, retrieval: efo}
  - {name: fp, kind: flink}
  - {name: fh, kind: firehose}
  - {name: po, kind: polling}
EOF

# assume NAME PYTHON...: the python checks, with `a` the report's assumptions of
# $tmp/NAME.json as {setting: value} and bad(MSG) failing one check.
assume() {
    local name=$1
    shift
    if ! python3 - "$tmp/$name.json" "$@" <<'EOF'; then
import json, sys
r = json.load(open(sys.argv[1]))
a = {x["setting"]: x["value"] for x in r["assumptions"]}
ok = True
def bad(msg):
    global ok
    print("FAIL " + msg)
    ok = False
def want(setting, value):
    if setting not in a:
        bad(f"{setting} is not listed in the assumptions")
    elif value is not None and a[setting] != value:
        bad(f"{setting} is {a[setting]!r}, expected {value!r}")
def unlisted(setting):
    if setting in a:
        bad(f"{setting} is listed ({a[setting]!r}) where it does not apply")
for code in sys.argv[2:]:
    exec(code)
sys.exit(0 if ok else 1)
EOF
        failed=$((failed + 1))
    fi
}

run all "$tmp/all.yaml" || {
    cli_finish cli_assumptions
    exit
}

# --- every EFO reader lists its push mechanics, a polling one its GetRecords ----------
# consumers[0] efo, [1] lambda efo, [3] kcl efo, [4] flink efo; [2], [5], [7] poll.
assume all '
for i in (0, 1, 3, 4):
    for k in ("push_delay", "subscribe_latency"):
        want(f"consumers[{i}].{k}", None)
    want(f"consumers[{i}].push_interval", "200ms")
    unlisted(f"consumers[{i}].call_latency")
for i in (2, 5, 7):
    want(f"consumers[{i}].call_latency", None)
    for k in ("push_delay", "subscribe_latency", "push_interval"):
        unlisted(f"consumers[{i}].{k}")'

# push_interval, the catch-up push cadence, is a setting of every EFO reader, and only
# of those.
run pi "$tmp/all.yaml" --set 'consumers[0].push_interval=50ms' \
    --set 'consumers[1].push_interval=1s' --set 'consumers[3].push_interval=300ms' \
    --set 'consumers[4].push_interval=1m' && assume pi '
for i, v in ((0, "50ms"), (1, "1s"), (3, "300ms"), (4, "1m")):
    want(f"consumers[{i}].push_interval", v)'
for i in 2 5; do
    if k pipoll$i 2 run "$tmp/all.yaml" --set "consumers[$i].push_interval=1s"; then
        grep -q "consumers\[$i\].push_interval: applies to retrieval: efo only" \
            "$tmp/pipoll$i.err" || fail "consumers[$i].push_interval with polling: $(
                head -1 "$tmp/pipoll$i.err")"
    fi
done
for v in 0s 2m; do
    if k pirange 2 run "$tmp/all.yaml" --set "consumers[0].push_interval=$v"; then
        grep -q "consumers\[0\].push_interval" "$tmp/pirange.err" ||
            fail "push_interval $v: $(head -1 "$tmp/pirange.err")"
    fi
done
# A subscription 60 s behind catches up within the run at 2 MiB/s (pushes every 200 ms
# take what the budget refilled), not with pushes every 2 s (each at most the 1 s burst
# of 2 MiB: about 1 MiB/s against the 0.88 MiB/s written).
cat >"$tmp/behind.yaml" <<'EOF'
name: behind
duration: 3m
stream: {name: s, shards: 1}
producers:
  - {name: p, rate: 900 records/s, record_size: 1 KiB}
consumers:
  - {name: e, kind: efo, start: 60s, start_position: trim_horizon}
EOF
# unread NAME MIN MAX: consumers[0] of $tmp/NAME.json leaves MIN to MAX records unread.
unread() {
    local n
    n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["consumers"][0]
        ["records_unread"])' "$tmp/$1.json") || n=-1
    [ "$n" -ge "$2" ] && [ "$n" -le "$3" ] ||
        fail "$1: $n records unread at the end, expected $2 to $3"
}
run behind "$tmp/behind.yaml" && unread behind 0 0
run behind2s "$tmp/behind.yaml" --set 'consumers[0].push_interval=2s' &&
    unread behind2s 10000 100000

# --- Lambda's run time per record; Firehose's backup read, with full backup only -------
assume all '
for i in (1, 2):
    want(f"consumers[{i}].function.per_record", "0 ms")
unlisted("consumers[6].full_backup.phase")'
run lfh "$tmp/all.yaml" --set 'consumers[2].function.per_record=2ms' \
    --set 'consumers[6].full_backup=true' && assume lfh '
want("consumers[2].function.per_record", "2 ms")
want("consumers[6].full_backup.phase", "500ms after the delivery read")'

# --- Firehose's refusals, with an outage only ------------------------------------------
assume all 'unlisted("consumers[6].delivery.outage.refusal")'
run fho "$tmp/all.yaml" --set 'consumers[6].delivery.outage.at=30s' \
    --set 'consumers[6].delivery.outage.for=1m' && assume fho '
want("consumers[6].delivery.outage.refusal", "at once, taking no time")'

# --- the stream's limits that AWS does not publish ----------------------------------------
assume all '
for k, v in (("write_burst", "1s"), ("large_record_tank", "10 MiB"),
             ("large_record_refill", "1 MiB/s"), ("read_burst", "1s")):
    want("stream.limits." + k, v)'
run tank "$tmp/all.yaml" --set 'stream.limits.large_record_tank=4 MiB' &&
    assume tank 'want("stream.limits.large_record_tank", "4 MiB")'

# --- the EFO burst: each subscription's budget is stream.limits.efo_burst deep ----------
# Listed with an EFO reader only; 100 ms deep, pushes every 200 ms take 1 MiB/s at most.
assume all 'want("stream.limits.efo_burst", "1s")'
run poll "$tmp/behind.yaml" --set 'consumers[0].kind=polling' &&
    assume poll 'unlisted("stream.limits.efo_burst")'
run burst "$tmp/behind.yaml" --set 'stream.limits.efo_burst=100ms' &&
    unread burst 10000 100000 && assume burst 'want("stream.limits.efo_burst", "100ms")'
run burst2s "$tmp/behind.yaml" --set 'stream.limits.efo_burst=2s' && unread burst2s 0 0
for v in 0s 2h; do
    if k burstrange 2 run "$tmp/behind.yaml" --set "stream.limits.efo_burst=$v"; then
        grep -q "stream.limits.efo_burst: must be between 1ms and 1h" "$tmp/burstrange.err" ||
            fail "efo_burst $v: $(head -1 "$tmp/burstrange.err")"
    fi
done

# --- distributions show the clamps that bound them ------------------------------------
assume all '
want("producers[0].latency", "lognormal, median 20 ms, sigma 0.5, within [1 ms, 10 s]")
want("consumers[0].push_delay", "lognormal, median 65 ms, sigma 0.3, within [1 ms, 10 s]")
want("consumers[0].subscribe_latency",
     "lognormal, median 100 ms, sigma 0.5, within [1 ms, 60 s]")
want("consumers[1].function.duration",
     "lognormal, median 50 ms, sigma 0.5, within [1 ms, 900 s]")
want("consumers[2].call_latency", "lognormal, median 40 ms, sigma 0.4, within [1 ms, 10 s]")
want("consumers[6].put_latency", "lognormal, median 200 ms, sigma 0.5, within [10 ms, 60 s]")
# The KCL waits uniformly 1 to 30 s: that range is the law own, not a clamp.
want("consumers[3].leases.sync_wait", "uniform, 1000 to 30000 ms")'

# Distributions given without clamps have none; one clamp shows alone.
sed -e 's/{name: p, rate: 200 records\/s,/&\
     latency: {dist: lognormal, median: 30ms, sigma: 1},/' \
    -e 's/{name: e, kind: efo}/{name: e, kind: efo,\
     push_delay: {dist: lognormal, median: 70ms, sigma: 0.2, max: 2s}}/' \
    -e 's/{name: lp, kind: lambda}/{name: lp, kind: lambda,\
     call_latency: {dist: normal, mean: 40ms, stddev: 10ms}}/' \
    -e 's/{name: le, kind: lambda, retrieval: efo}/{name: le, kind: lambda, retrieval: efo,\
     function: {duration: {dist: exp, mean: 50ms, min: 5ms}}}/' \
    "$tmp/all.yaml" >"$tmp/given.yaml"
run given "$tmp/given.yaml" && assume given '
want("producers[0].latency", "lognormal, median 30 ms, sigma 1")
want("consumers[0].push_delay", "lognormal, median 70 ms, sigma 0.2, at most 2 s")
want("consumers[2].call_latency", "normal(40, 10) ms, at least 0 ms")
want("consumers[1].function.duration", "exponential, mean 50 ms, at least 5 ms")'

# --- the documented defaults are the ones the run assumed -------------------------------
# Each reader's key table (README for producers, polling and efo; the kind's guide for
# the others) gives the default the report lists, distributions with their clamps.
python3 - "$tmp/all.json" <<'EOF' || failed=$((failed + 1))
import json, re, sys
r = json.load(open(sys.argv[1]))
readme = open("README.md").read()
def part(text, start, end):
    return text[text.index(start):text.index(end, text.index(start))]
lam = open("docs/consumers-lambda.md").read()
fhf = open("docs/consumers-firehose-flink.md").read()
docs = {
    "producers[0]": part(readme, "### `producers[]`", "### `consumers[]`"),
    "consumers[0]": part(readme, "`kind: efo`", "`kind: lambda`"),
    "consumers[1]": lam, "consumers[2]": lam,
    "consumers[3]": open("docs/consumers-kcl.md").read(),
    "consumers[4]": part(fhf, "## `kind: flink`", "### What the report says"),
    "consumers[5]": part(fhf, "## `kind: flink`", "### What the report says"),
    "consumers[6]": part(fhf, "## `kind: firehose`", "### What the report says"),
    "consumers[7]": part(readme, "`kind: polling`", "`kind: efo`"),
}
keys = ("latency", "call_latency", "push_delay", "subscribe_latency", "push_interval",
        "put_latency", "function.duration")
ok, n = True, 0
for a in r["assumptions"]:
    owner, _, key = a["setting"].partition("].")
    owner += "]"
    if key not in keys or owner not in docs:
        continue
    rows = re.findall(r"^\| `" + re.escape(key) + r"` \| ([^|]*) \|", docs[owner], re.M)
    # The report writes "65 ms", the docs "65ms", as scenarios do.
    value = re.sub(r"(\d) (ms|s)\b", r"\1\2", a["value"])
    if not rows or any(x.replace("`", "").strip() != value for x in rows):
        print(f"FAIL {a['setting']}: the report assumes {value!r}, its docs say {rows}")
        ok = False
    n += 1
if n < 20:
    print(f"FAIL only {n} documented defaults were compared")
    ok = False
sys.exit(0 if ok else 1)
EOF

# A steps profile without `initial` writes nothing before its first step, as README says.
grep -q '`{profile: steps, initial (0), steps: ' README.md ||
    fail "README does not give the default of a steps profile's initial rate"
cat >"$tmp/steps.yaml" <<'EOF'
name: steps
duration: 2m
stream: {name: s, shards: 1}
producers:
  - {name: p, record_size: 1 KiB, rate: {profile: steps, steps: [{at: 60s, rate: 10 records/s}]}}
EOF
run steps "$tmp/steps.yaml" && python3 - "$tmp/steps.json" <<'EOF' || failed=$((failed + 1))
import json, sys
p = json.load(open(sys.argv[1]))["producers"][0]
if not 590 <= p["records_written"] <= 600:
    sys.exit(f"FAIL steps without initial: {p['records_written']} records written, "
             "expected 60 s x 10 records/s")
EOF

cli_finish cli_assumptions
