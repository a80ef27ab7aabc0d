#!/usr/bin/env bash
# cli_sweep.sh - a sweep of shard counts x seeds (tests/sweeps/shards.yaml: 3 shard
# counts x 3 replications of the flagship, 2 simulated minutes a run) gives
# byte-identical tables run serially (--jobs 1), on two worker processes (--jobs 2), and
# as three parts in three folders merged; --resume keeps the runs an interrupted sweep
# finished and runs the rest; a row is what `kdsim run` gives for its point
# and seed alone; every row carries its provenance; merge refuses incomplete or mixed
# parts; a bad sweep file stops before any run with file:line:col.
#
# usage: bash tests/cli_sweep.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
sweep=tests/sweeps/shards.yaml
cli_tmpdir

# The same sweep three ways.
k serial 0 sweep "$sweep" --jobs 1 --out "$tmp/serial"
k parallel 0 sweep "$sweep" --jobs 2 --out "$tmp/parallel"
for part in 1 2 3; do
    # Each part in a folder of its own, as on three hosts without a shared disk.
    k "part$part" 0 sweep "$sweep" --part "$part/3" --jobs 1 --out "$tmp/host$part"
done
k merge 0 merge "$tmp/host3/part-3-of-3.json" "$tmp/host1/part-1-of-3.json" \
    "$tmp/host2/part-2-of-3.json" --out "$tmp/merged/"
grep -qF "wrote $tmp/merged/results.csv," "$tmp/merge.out" ||
    fail "merge --out DIR/ names its files as: $(cat "$tmp/merge.out")"
for f in results.csv results.json summary.csv; do
    [ -s "$tmp/serial/$f" ] || fail "the serial sweep wrote no $f"
    cmp -s "$tmp/serial/$f" "$tmp/parallel/$f" || fail "$f: --jobs 2 differs from --jobs 1"
    cmp -s "$tmp/serial/$f" "$tmp/merged/$f" || fail "$f: the merged parts differ from one run"
done
grep -q "9 runs on 2 workers" "$tmp/parallel.out" || fail "--jobs 2 did not use 2 workers"
# --resume: of an interrupted sweep's runs, those whose files are exactly theirs are
# kept, the others run again. Run 4's file is gone, run 7's names another seed (run
# again, as a stale file must be), and run 1's figures were altered with its identity
# kept: the altered value survives, which shows that the file was kept, not rerun.
cp -r "$tmp/serial" "$tmp/resume"
rm "$tmp/resume/runs/000004.json"
python3 - "$tmp/resume/runs" <<'EOF' || fail "could not prepare the interrupted sweep"
import json, sys
d = sys.argv[1]
r7 = json.load(open(d + "/000007.json")); r7["seed"] += 1
json.dump(r7, open(d + "/000007.json", "w"))
r1 = json.load(open(d + "/000001.json")); r1["figures"]["records_lost"] = 12345
json.dump(r1, open(d + "/000001.json", "w"))
EOF
if k resumed 0 sweep "$sweep" --jobs 1 --out "$tmp/resume" --resume; then
    grep -q "7 of 9 runs done, 2 to run" "$tmp/resumed.err" ||
        fail "--resume: expected 7 runs kept and 2 run, stderr: $(cat "$tmp/resumed.err")"
    python3 - "$tmp" <<'EOF' || fail "--resume: the table is not the serial one with run 1's altered value"
import json, sys
tmp = sys.argv[1]
a = json.load(open(tmp + "/serial/results.json"))["runs"]
b = json.load(open(tmp + "/resume/results.json"))["runs"]
assert b[1]["figures"]["records_lost"] == 12345
b[1]["figures"]["records_lost"] = a[1]["figures"]["records_lost"]
assert a == b
EOF
fi
k resume_no_out 2 run scenarios/acme-clickstream.yaml --replications 2 --resume
grep -q -- "--resume needs --out DIR" "$tmp/resume_no_out.err" ||
    fail "run --replications --resume without --out: $(cat "$tmp/resume_no_out.err")"

# The summary plots: data for each, drawn when gnuplot is there.
for d in serial merged; do
    for p in stream-write_throttle_pct records_lost consumers-live-metrics-latency_ms-p99; do
        [ -s "$tmp/$d/plots/$p.csv" ] || fail "$d: no plot data $p.csv"
        if command -v gnuplot >/dev/null 2>&1; then
            [ -s "$tmp/$d/plots/$p.png" ] && [ -s "$tmp/$d/plots/$p.svg" ] || fail "$d: plot $p not drawn"
        fi
    done
    [ -x "$tmp/$d/plots/plots.sh" ] || fail "$d: no plots.sh"
    [ -e "$tmp/$d/plots/gnuplot.log" ] && [ ! -s "$tmp/$d/plots/gnuplot.log" ] &&
        fail "$d: an empty gnuplot.log was left behind"
done
cmp -s "$tmp/serial/plots/records_lost.csv" "$tmp/merged/plots/records_lost.csv" ||
    fail "the plot data of the merged parts differ"

# The x axis of a parameter written in different units is the quantity, not the
# number before the unit (512 B, 1 KiB, 2 KiB was drawn at 512, 1, 2); values of one
# unit keep their numbers; values that are no quantities of one kind are categories.
small=$PWD/tests/scenarios/plan-small.yaml
xcol() { # SWEEP_LINE: the x column of records_lost.csv of a sweep of that parameter
    printf 'scenario: %s\nset: {duration: 10s, stream.shards: 4}\nparameters:\n  %s\n' \
        "$small" "$1" >"$tmp/units.yaml"
    rm -rf "$tmp/units"
    k units 0 sweep "$tmp/units.yaml" --jobs 2 --out "$tmp/units" &&
        sed -n '2,$p' "$tmp/units/plots/records_lost.csv" | cut -d, -f1 | paste -sd' '
}
[ "$(xcol 'producers[0].record_size: [512 B, 1 KiB, 2 KiB]')" = "512 1024 2048" ] ||
    fail "sizes in different units: x = $(xcol 'producers[0].record_size: [512 B, 1 KiB, 2 KiB]')"
[ "$(xcol 'producers[0].batch.linger: [50ms, 1s]')" = "0.05 1" ] ||
    fail "durations in different units: x = $(xcol 'producers[0].batch.linger: [50ms, 1s]')"
[ "$(xcol 'producers[0].batch.linger: [50ms, 200ms]')" = "50 200" ] ||
    fail "durations in one unit: x = $(xcol 'producers[0].batch.linger: [50ms, 200ms]')"
[ "$(xcol 'producers[0].rate: [500 records/s, 1 record/ms, 90000/min]')" = "500 1000 1500" ] ||
    fail "count rates: x = $(xcol 'producers[0].rate: [500 records/s, 1 record/ms, 90000/min]')"
[ "$(xcol 'stream.mode: [provisioned, on_demand_standard]')" = "0 1" ] ||
    fail "categories: x = $(xcol 'stream.mode: [provisioned, on_demand_standard]')"
grep -q "xnumeric=0" "$tmp/units/plots/plots.sh" || fail "categories drawn as numbers"

# The message names plots/ only when it was written: not with --no-plots (here after a
# merge into a fresh folder, and a sweep into one).
grep -q "summary.csv, plots/$" "$tmp/serial.out" || fail "the sweep's message does not name plots/"
k merge_np 0 merge "$tmp/host1/part-1-of-3.json" "$tmp/host2/part-2-of-3.json" \
    "$tmp/host3/part-3-of-3.json" --out "$tmp/merged_np" --no-plots
k sweep_np 0 sweep "$sweep" --out "$tmp/sweep_np" --no-plots
for n in merge_np sweep_np; do
    [ -e "$tmp/${n}/plots" ] && fail "$n: --no-plots wrote plots/"
    grep -q "plots/" "$tmp/$n.out" && fail "$n: the message names a plots/ it did not write: $(cat "$tmp/$n.out")"
done

# The table: 9 rows in index order, the provenance on each, the parameters, and a row
# equal to the point run alone.
if ! python3 - "$tmp" <<'EOF'; then
import csv, json, re, sys
tmp = sys.argv[1]
rows = list(csv.DictReader(open(tmp + "/serial/results.csv")))
doc = json.load(open(tmp + "/serial/results.json"))
assert len(rows) == 9, len(rows)
assert [int(r["index"]) for r in rows] == list(range(9))
assert [int(r["point"]) for r in rows] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
assert [r["stream.shards"] for r in rows] == ["2"] * 3 + ["3"] * 3 + ["4"] * 3
assert doc["seeds"][0] == 42 and len(set(doc["seeds"])) == 3, doc["seeds"]
for r, run in zip(rows, doc["runs"]):
    assert r["kdsim_version"] == run["kdsim_version"] != ""
    assert re.fullmatch("[0-9a-f]{64}", r["scenario_sha256"]), r["scenario_sha256"]
    assert int(r["seed"]) == doc["seeds"][int(r["replication"])]
    assert run["parameters"] == {"stream.shards": r["stream.shards"]}
    assert float(r["stream.open_shards"]) == float(r["stream.shards"])
    for k in ("cost.provisioned.monthly_usd", "cost.on_demand_standard.monthly_usd",
              "consumers.live-metrics.latency_ms.p99", "records_lost"):
        assert r[k] != "", k
# One digest per point; different points, different digests.
shas = [r["scenario_sha256"] for r in rows]
assert shas[0] == shas[1] == shas[2] and len(set(shas)) == 3
# Replications of a point differ (distinct seeds).
assert rows[0]["consumers.live-metrics.latency_ms.p99"] != rows[1]["consumers.live-metrics.latency_ms.p99"]
# The summary of point 1 is the mean of its rows.
s = doc["points"][1]["summary"]["consumers.live-metrics.latency_ms.p99"]
vals = [float(r["consumers.live-metrics.latency_ms.p99"]) for r in rows[3:6]]
assert abs(s["mean"] - sum(vals) / 3) < 1e-6 and s["n"] == 3  # 12 digits
open(tmp + "/alone.args", "w").write("%d\n%s\n" % (doc["seeds"][1], shas[4]))
json.dump(doc["runs"][4]["figures"], open(tmp + "/row4.json", "w"))
EOF
    fail "the sweep's table (see the Python traceback above)"
fi

# Point 1 (3 shards), replication 1, alone: the same figures and digest.
if [ -s "$tmp/alone.args" ]; then
    seed=$(sed -n 1p "$tmp/alone.args")
    sha=$(sed -n 2p "$tmp/alone.args")
    k alone 0 run scenarios/acme-clickstream.yaml --set duration=2m --set stream.shards=3 \
        --seed "$seed" --replications 1 --json
    if ! python3 - "$tmp" "$sha" <<'EOF'; then
import json, sys
tmp, sha = sys.argv[1], sys.argv[2]
alone = json.load(open(tmp + "/alone.out"))["runs"][0]
row = json.load(open(tmp + "/row4.json"))
assert alone["figures"] == row, [k for k in row if alone["figures"].get(k) != row[k]]
assert alone["scenario_sha256"] == sha, (alone["scenario_sha256"], sha)
EOF
        fail "the sweep's row differs from the point run alone"
    fi
fi

# Merge refuses what does not make one sweep.
k missing 2 merge "$tmp/host1/part-1-of-3.json" "$tmp/host3/part-3-of-3.json" --out "$tmp/m2"
grep -q "part 2 of 3 is missing" "$tmp/missing.err" || fail "merge: no message for a missing part"
[ -e "$tmp/m2/results.csv" ] && fail "merge wrote a table from incomplete parts"
k twice 2 merge "$tmp/host1/part-1-of-3.json" "$tmp/host1/part-1-of-3.json" \
    "$tmp/host2/part-2-of-3.json"
grep -q "given twice" "$tmp/twice.err" || fail "merge: no message for a part given twice"
k nofile 2 merge "$tmp/no-such-part.json"
grep -qF "kdsim: $tmp/no-such-part.json: cannot read the part file" "$tmp/nofile.err" ||
    fail "merge: a missing part file: $(cat "$tmp/nofile.err")"
sed 's/replications: 3/replications: 2/' "$sweep" >"$tmp/other.yaml"
sed -i 's#\.\./\.\./scenarios#'"$PWD"'/scenarios#' "$tmp/other.yaml"
k other 0 sweep "$tmp/other.yaml" --part 2/3 --out "$tmp/other"
k mixed 2 merge "$tmp/host1/part-1-of-3.json" "$tmp/other/part-2-of-3.json" \
    "$tmp/host3/part-3-of-3.json"
grep -q "different sweeps" "$tmp/mixed.err" || fail "merge: no message for parts of two sweeps"
# Parts of one sweep split two ways: said so (their N differs), not "different sweeps".
k split2 0 sweep "$sweep" --part 2/2 --jobs 2 --out "$tmp/split2"
k splits 2 merge "$tmp/host1/part-1-of-3.json" "$tmp/split2/part-2-of-2.json"
want="kdsim: $tmp/host1/part-1-of-3.json is a part of 3 and $tmp/split2/part-2-of-2.json a "
want+="part of 2: the sweep was split two ways (--part K/N with different N); merge the N "
want+="parts of one --part K/N split"
grep -qF "$want" "$tmp/splits.err" || fail "merge of two splits: $(cat "$tmp/splits.err")"

# A bad sweep file: every error with its position, nothing run.
cat >"$tmp/bad.yaml" <<EOF
scenario: $PWD/scenarios/acme-clickstream.yaml
replication: 2
parameters:
  stream.shards: {from: 4, to: 2, step: 1}
EOF
k bad 2 sweep "$tmp/bad.yaml" --out "$tmp/badout"
grep -q "bad.yaml:2:1: unknown key .replication.; did you mean .replications." "$tmp/bad.err" ||
    fail "a misspelt key: $(head -1 "$tmp/bad.err")"
grep -q "bad.yaml:4:18: parameters.stream.shards: to (2) must not be below from (4)" "$tmp/bad.err" ||
    fail "a reversed range: $(cat "$tmp/bad.err")"
[ -e "$tmp/badout" ] && fail "a bad sweep file created its output folder"
cat >"$tmp/badvalue.yaml" <<EOF
scenario: $PWD/scenarios/acme-clickstream.yaml
parameters:
  stream.shards: [2, 0]
EOF
k badvalue 2 sweep "$tmp/badvalue.yaml" --out "$tmp/badvalue"
grep -q "badvalue.yaml:3:22: stream.shards: must be between 1 and 10000, got 0" "$tmp/badvalue.err" ||
    fail "a bad value is not reported at its place: $(cat "$tmp/badvalue.err")"
[ -e "$tmp/badvalue" ] && fail "a sweep with a bad point ran"
# Every error in one run: the points' (a bad value) with the sweep file's own (a reversed
# range, a misspelt key); the points are those of the parameters given well.
cat >"$tmp/badboth.yaml" <<EOF
scenario: $PWD/tests/scenarios/plan-small.yaml
replication: 2
parameters:
  stream.shards: [1, 0, 2]
  producers[0].rate: {from: 4000, to: 2000, step: 1000, unit: records/s}
  consumers[0].poll_interval: [1s, 0s]
EOF
k badboth 2 sweep "$tmp/badboth.yaml" --out "$tmp/badboth"
for e in "badboth.yaml:2:1: unknown key .replication." \
    "badboth.yaml:4:22: stream.shards: must be between 1 and 10000, got 0" \
    "badboth.yaml:5:22: parameters.producers\[0\].rate: to (2000) must not be below from (4000)" \
    "badboth.yaml:6:36: consumers\[0\].poll_interval: must be between 1ms and 1h, got 0s"; do
    [ "$(grep -c "$e" "$tmp/badboth.err")" = 1 ] || fail "not once: $e: $(cat "$tmp/badboth.err")"
done
grep -q "4 errors in" "$tmp/badboth.err" ||
    fail "more errors than the file has: $(cat "$tmp/badboth.err")"
k badpart 2 sweep "$sweep" --part 4/3
k nofile 2 sweep

# A parameter value holding a comma: the sweep plots' CSV files keep one field per
# column (the label once spilled into the next field, and gnuplot lost the point).
cat >"$tmp/comma.yaml" <<EOF
scenario: $PWD/scenarios/latency-one-poller.yaml
set: {duration: 2s}
parameters:
  producers[0].keys.prefix: ["a,b", "c"]
EOF
k comma 0 sweep "$tmp/comma.yaml" --jobs 1 --out "$tmp/comma"
for f in "$tmp"/comma/plots/*.csv; do
    [ -e "$f" ] || { fail "the comma sweep wrote no plot data"; break; }
    awk -F, 'NF && !/^x,/ && NF != 6 { bad = 1 } END { exit bad }' "$f" ||
        fail "$(basename "$f"): a row without 6 fields: $(grep -v '^x,' "$f" | head -2)"
done

cli_finish cli_sweep
