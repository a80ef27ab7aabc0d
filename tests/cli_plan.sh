#!/usr/bin/env bash
# cli_plan.sh - `kdsim plan` on a small scenario (tests/scenarios/plan-small.yaml: 1,500
# records/s, one shard takes 1,000): the answer is the cheapest configuration that meets
# every target in every replication (2 shards), each configuration's verdict agrees
# with its worst values, the binding target is the one 1 shard misses, --vary picks the
# setting that passes, --modes restricts the search, no passing configuration exits 3,
# and bad targets are usage errors.
#
# usage: bash tests/cli_plan.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
scenario=tests/scenarios/plan-small.yaml
cli_tmpdir

k plan 0 plan "$scenario" --slo throttle_pct=0.5 --slo lost=0 --shards 1..4 --replications 2 --json
k text 0 plan "$scenario" --slo throttle_pct=0.5 --slo lost=0 --shards 1..4 --replications 2
k vary 0 plan "$scenario" --slo throttle_pct=0.5 --slo lost=0 --slo 'p99_ms[reader]=800' \
    --vary 'consumers[0].poll_interval=2s,200ms' --shards 1..3 --replications 2 --json
k od 0 plan "$scenario" --slo throttle_pct=0.5 --modes on_demand_standard --replications 1 --json
k default 0 plan "$scenario" --slo throttle_pct=0.5 --modes provisioned --replications 1 --json

if ! python3 - "$tmp" <<'EOF'; then
import json, sys
tmp = sys.argv[1]
load = lambda n: json.load(open("%s/%s.out" % (tmp, n)))
p = load("plan")
cfgs = {c["configuration"]: c for c in p["configurations"]}
assert list(cfgs) == ["provisioned, %d shard%s" % (n, "" if n == 1 else "s") for n in (1, 2, 3, 4)] + \
    ["on_demand_standard", "on_demand_advantage"], list(cfgs)
# Each verdict agrees with the worst replication's values and the targets.
for c in p["configurations"]:
    ok = all(c["worst"][t["figure"]] is not None and c["worst"][t["figure"]] <= t["max"]
             for t in p["targets"])
    assert ok == c["passes"], c
# The answer is the cheapest passing configuration.
passing = [c for c in p["configurations"] if c["passes"]]
cheapest = min(passing, key=lambda c: c["monthly_usd"])
assert p["answer"] == cheapest["configuration"] == "provisioned, 2 shards", p["answer"]
assert p["answer_monthly_usd"] == cheapest["monthly_usd"]
assert all(c["monthly_usd"] >= p["answer_monthly_usd"] for c in passing)
assert not cfgs["provisioned, 1 shard"]["passes"]
assert cfgs["provisioned, 1 shard"]["worst"]["stream.write_throttle_pct"] > 20
assert p["runner_up"] == "provisioned, 3 shards", p["runner_up"]
assert p["binding_evidence"] == "provisioned, 1 shard"
assert "stream.write_throttle_pct" in p["binding"] and "records_lost" in p["binding"]
assert p["sizing_rule"]["shards"] == 2 and p["sizing_rule"]["passes"] is True
assert cfgs["provisioned, 3 shards"]["monthly_usd"] > cfgs["provisioned, 2 shards"]["monthly_usd"]
# --vary: the poll interval that meets the latency target, at the fewest shards.
v = load("vary")
assert v["answer"] == "provisioned, 2 shards, consumers[0].poll_interval=200ms", v["answer"]
slow = [c for c in v["configurations"] if c["vary"] == {"consumers[0].poll_interval": "2s"}]
assert slow and not any(c["passes"] for c in slow)
# --modes: on-demand only.
od = load("od")
assert [c["configuration"] for c in od["configurations"]] == ["on_demand_standard"]
assert od["answer"] == "on_demand_standard"
# Without --shards the search starts at 1 and reaches beyond the sizing rule's 2.
d = load("default")
shards = [c["shards"] for c in d["configurations"]]
assert shards[0] == 1 and max(shards) >= 4 and d["answer"] == "provisioned, 2 shards", shards
EOF
    fail "the plan (see the Python traceback above)"
fi
grep -q "^answer: provisioned, 2 shards, " "$tmp/text.out" || fail "no answer line in the text"
grep -q "binding: one step fewer shards, provisioned, 1 shard" "$tmp/text.out" ||
    fail "the text does not name the binding target"
grep -q "runner-up: provisioned, 3 shards" "$tmp/text.out" || fail "no runner-up in the text"
grep -q "AWS's sizing rule .*: 2 shards" "$tmp/text.out" || fail "no sizing rule in the text"

# Nothing passes in the first range (sized by bytes, but 6,000 records/s need 6 shards
# for the records): the search goes higher by itself.
k up 0 plan "$scenario" --set 'producers[0].rate=6000 records/s' --slo throttle_pct=0.5 \
    --slo lost=0 --modes provisioned --replications 1 --json
python3 - "$tmp/up.out" <<'EOF' || fail "the search did not widen upwards"
import json, sys
p = json.load(open(sys.argv[1]))
shards = [c["shards"] for c in p["configurations"]]
assert shards == sorted(shards) and shards[0] == 1 and max(shards) >= 7, shards
assert p["answer"] == "provisioned, 7 shards", p["answer"]
EOF
k none 3 plan "$scenario" --slo 'p99_ms=1' --shards 2 --modes provisioned --replications 1
grep -q "no configuration searched meets every target" "$tmp/none.out" ||
    fail "no message when nothing passes"
# AWS's sizing rule comes from a run that refused no write: with 1 shard searched the
# on-demand run admits everything, and the rule's cost is the full search's (a throttled
# 1-shard run bills a quarter less traffic); with only throttled runs it says so.
k rule_all 0 plan "$scenario" --slo lost=0 --shards 1..4 --replications 1 --json
k rule_one 0 plan "$scenario" --slo lost=0 --shards 1 --replications 1 --json
k rule_thr 3 plan "$scenario" --slo lost=0 --shards 1 --modes provisioned --replications 1
k rule_thrj 3 plan "$scenario" --slo lost=0 --shards 1 --modes provisioned --replications 1 --json
python3 - "$tmp" <<'EOF' || fail "the sizing rule was taken from a throttled run"
import json, sys
load = lambda n: json.load(open("%s/%s.out" % (sys.argv[1], n)))["sizing_rule"]
a, o, t = load("rule_all"), load("rule_one"), load("rule_thrj")
assert a["monthly_usd"] == o["monthly_usd"] and not o["from_throttled_run"], (a, o)
assert t["from_throttled_run"] is True, t
EOF
grep -q "every run searched refused writes" "$tmp/rule_thr.out" ||
    fail "a sizing rule from a throttled run is not flagged"
# On demand starts where a stream that has seen the traffic stands: capacity for twice
# its peak (model.md section 7), so the spiky scenario's daily burst is absorbed, as its
# description says, at $52.35 a month; started at the peak itself (the scenario's
# shards, 10 here) it lost records.
k spiky 0 plan scenarios/provisioned-vs-on-demand-spiky.yaml --slo lost=0 \
    --set stream.shards=10 --modes on_demand_standard --replications 1
grep -q '^answer: on_demand_standard, \$52.35 a month' "$tmp/spiky.out" ||
    fail "spiky on demand: $(grep -E 'on_demand|answer' "$tmp/spiky.out")"
grep -q "search lower with --shards" "$tmp/spiky.out" &&
    fail "an on-demand answer advises searching fewer shards"
# A reader that delivered nothing (it starts after the end; with a warm-up, nothing
# after it) has no latency and no iterator age: the targets are missed ("n/a"), not met
# with 0 to spare.
for w in "" "--warmup 1m"; do
    # shellcheck disable=SC2086 # $w is empty or two words
    k late 3 plan "$scenario" --set 'consumers[0].start=10m' --slo 'p99_ms[reader]=1' \
        --slo iterator_age_ms=1 --shards 2 --modes provisioned --replications 1 $w
    want="p99 latency of reader (ms) n/a (nothing delivered); "
    want+="largest iterator age of reader (ms) n/a (never read)"
    grep -qF "$want" "$tmp/late.out" || fail "a reader that delivered nothing ($w): $(cat "$tmp/late.out")"
done
# --shards with no provisioned mode searched was ignored: refused.
k odshards 2 plan "$scenario" --slo lost=0 --shards 2..3 --modes on_demand_standard
grep -qF -- "--shards: --modes on_demand_standard leaves out provisioned" "$tmp/odshards.err" ||
    fail "--shards without provisioned: $(head -1 "$tmp/odshards.err")"
# Every run is kept in DIR/runs/, the sizing run too (run 0), and --resume keeps them all.
k keep 0 plan "$scenario" --slo lost=0 --modes provisioned,on_demand_standard --replications 2 \
    --out "$tmp/keep" --json
k keep2 0 plan "$scenario" --slo lost=0 --modes provisioned,on_demand_standard --replications 2 \
    --out "$tmp/keep" --json --resume
python3 - "$tmp" <<'EOF' || fail "the plan's runs are not all kept"
import json, os, sys
tmp = sys.argv[1]
p = json.load(open(tmp + "/keep.out"))
runs = sorted(os.listdir(tmp + "/keep/runs"))
assert len(runs) == 1 + 2 * len(p["configurations"]), (len(runs), len(p["configurations"]))
assert runs == ["%06d.json" % i for i in range(len(runs))], runs
sizing = json.load(open(tmp + "/keep/runs/000000.json"))
assert sizing["figures"]["stream.open_shards"] == 1  # the scenario as given: 1 shard
assert json.load(open(tmp + "/keep2.out")) == p
EOF
grep -q "1 of 1 runs done, 0 to run" "$tmp/keep2.err" ||
    fail "--resume ran the sizing run again: $(cat "$tmp/keep2.err")"
k noslo 2 plan "$scenario"
k badslo 2 plan "$scenario" --slo p98_ms=10
k badname 2 plan "$scenario" --slo 'p99_ms[writer]=10'
grep -q "no consumer named writer" "$tmp/badname.err" || fail "an unknown consumer: $(cat "$tmp/badname.err")"
k badshards 2 plan "$scenario" --slo lost=0 --shards 4..2
# The limit the message states is the one applied: 10000 shards, 4096 counts.
k manyshards 2 plan "$scenario" --slo lost=0 --shards 1..4097
grep -qF -- '--shards: at most 4096 shard counts (the most configurations a plan searches), got' \
    "$tmp/manyshards.err" || fail "--shards 1..4097: $(head -1 "$tmp/manyshards.err")"
k bigshards 2 plan "$scenario" --slo lost=0 --shards 10001
grep -qF -- "of shard counts from 1 to 10000 (at most 4096 of them)" "$tmp/bigshards.err" ||
    fail "--shards 10001: $(head -1 "$tmp/bigshards.err")"
k badmode 2 plan "$scenario" --slo lost=0 --modes provisional
# No mode at all searched nothing and exited 3 (no answer): a usage error.
k nomode 2 plan "$scenario" --slo lost=0 --modes "," &&
    { grep -qF -- "--modes: expected one or more capacity modes separated by commas" \
        "$tmp/nomode.err" || fail "--modes ',': $(head -1 "$tmp/nomode.err")"; }
# An empty value, as for every option: refused as no value.
k emptymode 2 plan "$scenario" --slo lost=0 --modes "" &&
    { grep -qF -- "kdsim: --modes needs a value, got an empty one" "$tmp/emptymode.err" ||
        fail "--modes '': $(head -1 "$tmp/emptymode.err")"; }
# One rounding for the text and the JSON: the mean of two on-demand costs is a half
# cent (1163.645), which printf's %.2f put a cent below the JSON's figure; the runner-up's
# "+$" is the difference of the two figures shown.
planargs=(scenarios/acme-clickstream.yaml --duration 2m --slo lost=0 --seed 4 --replications 2
    --modes on_demand_standard,on_demand_advantage)
k cents 0 plan "${planargs[@]}"
k centsj 0 plan "${planargs[@]}" --json
python3 - "$tmp" <<'EOF' || fail "the text's costs differ from the JSON's"
import json, re, sys
d = json.load(open(sys.argv[1] + "/centsj.out"))
t = open(sys.argv[1] + "/cents.out").read()
for c in d["configurations"]:
    m = re.search(re.escape(c["configuration"]) + r" +\$([0-9.]+)", t)
    assert m and m.group(1) == "%.2f" % c["monthly_usd"], \
        (c["configuration"], c["monthly_usd"], m and m.group(1))
ans = re.search(r"^answer: .*, \$([0-9.]+) a month", t, re.M).group(1)
assert ans == "%.2f" % d["answer_monthly_usd"], (ans, d["answer_monthly_usd"])
ru = re.search(r"runner-up: .*, \$([0-9.]+) a month \(\+\$([0-9.]+)\)", t)
assert ru.group(1) == "%.2f" % d["runner_up_monthly_usd"], ru.group(1)
assert ru.group(2) == "%.2f" % (float(ru.group(1)) - float(ans)), (ru.group(2), ru.group(1), ans)
EOF
# --vary of what the planner sets itself ran another configuration than its label said
# ("provisioned, 2 shards, stream.shards=3" had 3 shards); an empty value was dropped.
k varyshards 2 plan "$scenario" --slo lost=0 --shards 2 --vary stream.shards=1,3
grep -q "give the values with --shards" "$tmp/varyshards.err" ||
    fail "--vary stream.shards: $(head -1 "$tmp/varyshards.err")"
k varymode 2 plan "$scenario" --slo lost=0 --vary stream.mode=provisioned
grep -q "give the values with --modes" "$tmp/varymode.err" ||
    fail "--vary stream.mode: $(head -1 "$tmp/varymode.err")"
k varyempty 2 plan "$scenario" --slo lost=0 --vary 'producers[0].batch.records=100,,200'
grep -q "an empty value" "$tmp/varyempty.err" || fail "--vary with an empty value: $(head -1 "$tmp/varyempty.err")"
# An unknown key or a bad value is a usage error before anything runs, naming --vary.
k varykey 2 plan "$scenario" --slo lost=0 --vary nosuch=1,2
grep -qF -- "--vary nosuch=1: 1 error with this value; nothing was run" "$tmp/varykey.err" ||
    fail "--vary of an unknown key: $(cat "$tmp/varykey.err")"
k varyval 2 plan "$scenario" --slo lost=0 --vary 'producers[0].batch.records=100,9999'
grep -qF "must be between 1 and 500, got 9999" "$tmp/varyval.err" &&
    grep -qF -- "--vary producers[0].batch.records=9999" "$tmp/varyval.err" ||
    fail "--vary of a bad value: $(cat "$tmp/varyval.err")"

# Without --modes, a mode the scenario cannot run in is left out with a note (service-
# managed keys are on-demand only); asked for by --modes, it is a usage error.
auto=(--set stream.mode=on_demand_standard --set stream.shards=4
      --set stream.record_distribution=auto)
k automodes 0 plan "$scenario" "${auto[@]}" --slo lost=0 --replications 1 --json
grep -qF "kdsim: plan: provisioned left out, as this scenario cannot run in it:" \
    "$tmp/automodes.err" && grep -qF "record_distribution" "$tmp/automodes.err" ||
    fail "a mode the scenario cannot run in: $(head -2 "$tmp/automodes.err")"
python3 - "$tmp/automodes.out" <<'PY' || fail "the modes the scenario can run in were not planned"
import json, sys
modes = [c["mode"] for c in json.load(open(sys.argv[1]))["configurations"]]
assert modes == ["on_demand_standard", "on_demand_advantage"], modes
PY
k automode1 2 plan "$scenario" "${auto[@]}" --slo lost=0 --replications 1 --modes provisioned
grep -qF "(in configuration provisioned" "$tmp/automode1.err" ||
    fail "--modes provisioned for an on-demand-only scenario: $(head -2 "$tmp/automode1.err")"

cli_finish cli_plan
