#!/usr/bin/env bash
# cli_replay.sh - a producer replaying scenarios/data/sample-day.csv generates, over the
# first two hours, exactly the records the file's first 120 minutes hold, with either
# spread within a minute; `record_size: trace` gives every record the file's bytes per
# record; the poisson spread depends on the seed; a missing file, a bad row and
# `record_size: trace` without a trace are reported with their positions; a trace past
# 10 million records/s a producer (scaled or not), sums past a double and a directory
# for a file are refused with their places; report.html names the trace; a changed trace
# or price file changes the runs' scenario_sha256, so --resume runs them again.
#
# usage: bash tests/cli_replay.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
scenario=scenarios/replay-day.yaml
cli_tmpdir

k poisson 0 run "$scenario" --duration 2h --json
k even 0 run "$scenario" --duration 2h --set 'producers[0].rate.within_minute=even' --json
k seed 0 run "$scenario" --duration 2h --seed 8 --json
k scaled 0 run "$scenario" --duration 30m --set 'producers[0].rate.scale=2' \
    --set 'producers[0].rate.within_minute=even' --json

if ! python3 - "$tmp" <<'EOF'; then
import csv, json, sys
tmp = sys.argv[1]
rows = [r for r in csv.reader(open("scenarios/data/sample-day.csv")) if r and not r[0].startswith("#")][1:]
minute = lambda ts: int(ts[11:13]) * 60 + int(ts[14:16])
recs = {minute(r[0]): int(r[1]) for r in rows}
total_rec = sum(int(r[1]) for r in rows)
total_bytes = sum(int(r[2]) for r in rows)
first = lambda m: sum(v for k, v in recs.items() if k < m)
size = round(total_bytes / total_rec)
load = lambda n: json.load(open("%s/%s.out" % (tmp, n)))
for name in ("poisson", "even", "seed"):
    r = load(name)
    p = r["producers"][0]
    generated = p["records_attempted"] + p["records_buffered"]
    assert generated == first(120), (name, generated, first(120))
    # record_size: trace: IncomingBytes / IncomingRecords of the whole file.
    assert r["stream"]["bytes_in"] == r["stream"]["records_in"] * size, (name, size)
    # The trace is recorded in the report, as the scenario names it.
    assert r["inputs"] == [{"key": "producers[0].rate.file", "file": "data/sample-day.csv"}], r.get("inputs")
s = load("scaled")["producers"][0]
assert s["records_attempted"] + s["records_buffered"] == 2 * first(30)
# The seed moves the poisson seconds, not the minutes.
a, b = load("poisson"), load("seed")
assert a["stream"]["peak_records_per_s"] != b["stream"]["peak_records_per_s"] or \
    a["consumers"][0]["latency_ms"] != b["consumers"][0]["latency_ms"]
# Poisson seconds are burstier than even ones.
assert load("poisson")["stream"]["peak_records_per_s"] > load("even")["stream"]["peak_records_per_s"]
EOF
    fail "the replayed records (see the Python traceback above)"
fi

# report.html, the whole report, names the trace as report.txt does.
if k html 0 run "$scenario" --duration 2m --out "$tmp/html"; then
    grep -q "^  input producers\[0\].rate.file: data/sample-day.csv$" "$tmp/html/report.txt" ||
        fail "report.txt does not name the trace"
    want='input <code>producers\[0\].rate.file</code>: <code>data/sample-day.csv</code>'
    grep -q "$want" "$tmp/html/report.html" || fail "report.html does not name the trace"
fi

# Errors.
cat >"$tmp/bad.csv" <<'EOF'
timestamp,IncomingRecords,IncomingBytes
2026-09-14T00:00:00Z,100,102400
2026-09-14T00:01:00Z,lots,102400
EOF
sed -e "s#file: data/sample-day.csv#file: $tmp/bad.csv#" "$scenario" >"$tmp/badrow.yaml"
k badrow 2 run "$tmp/badrow.yaml"
grep -q "bad.csv:3:22: IncomingRecords: expected a count >= 0 (or an empty cell), got \"lots\"" \
    "$tmp/badrow.err" || fail "a bad row: $(cat "$tmp/badrow.err")"
grep -q "badrow.yaml:24:35: producers\[0\].rate.file: cannot use the trace" "$tmp/badrow.err" ||
    fail "a bad trace does not point at the scenario key: $(cat "$tmp/badrow.err")"
k missing 2 run "$scenario" --set 'producers[0].rate.file=nowhere.csv'
grep -q "producers\[0\].rate.file: cannot open the trace scenarios/nowhere.csv: No such file or directory" \
    "$tmp/missing.err" || fail "a missing trace: $(cat "$tmp/missing.err")"
[ "$(wc -l <"$tmp/missing.err")" = 2 ] || fail "a missing trace is one error: $(cat "$tmp/missing.err")"
grep -q "relative to the scenario's folder" "$tmp/missing.err" ||
    fail "a missing trace: no hint about the folder"
k nosize 2 run scenarios/acme-clickstream.yaml --set 'producers[0].record_size=trace'
grep -q "producers\[0\].record_size: record_size: trace takes the size from a replayed trace" \
    "$tmp/nosize.err" || fail "record_size: trace without a trace: $(cat "$tmp/nosize.err")"
k spread 2 run "$scenario" --set 'producers[0].rate.within_minute=uniform'
grep -q "within_minute" "$tmp/spread.err" || fail "a bad spread: $(cat "$tmp/spread.err")"

# A producer sends at most 10 million records/s: a replayed trace too. The busiest
# minute (the sample day's line 1139) scaled past it is refused at the scale, a row of
# 1e15 records at the file, each with the row's place (a run would hang or overflow).
k overscale 2 validate "$scenario" --set 'producers[0].rate.scale=1000000' \
    --set 'producers[0].rate.within_minute=even'
want="producers\[0\].rate.scale: the trace's busiest minute"
want="$want (scenarios/data/sample-day.csv:1139:22) has 260052 records, 2.60052e+11 with"
want="$want producers\[0\].rate.scale: 1e+06, 4.3342e+09 records/s;"
want="$want a producer sends at most 10000000 records/s"
grep -q "$want" "$tmp/overscale.err" ||
    fail "a scale past 10 million records/s: $(cat "$tmp/overscale.err")"
printf 'timestamp,IncomingRecords\n2026-09-14T00:00:00Z,5\n2026-09-14T00:01:00Z,1e15\n' \
    >"$tmp/e15.csv"
for spread in even poisson; do
    k "e15$spread" 2 validate "$scenario" --set "producers[0].rate.file=$tmp/e15.csv" \
        --set 'producers[0].record_size=1KiB' --set "producers[0].rate.within_minute=$spread"
    want="producers\[0\].rate.file: the trace's busiest minute ($tmp/e15.csv:3:22)"
    want="$want has 1e+15 records, 1.66667e+13 records/s; a producer sends"
    grep -q "$want" "$tmp/e15$spread.err" ||
        fail "a minute of 1e15 records ($spread): $(cat "$tmp/e15$spread.err")"
    ! grep -q "rate.scale" "$tmp/e15$spread.err" ||
        fail "an unset scale is blamed: $(cat "$tmp/e15$spread.err")"
done
# Bytes past a double's range, or a mean past any record: refused, not a 0 B record.
printf 'timestamp,IncomingRecords,IncomingBytes\n%s\n%s\n' \
    2026-09-14T00:00:00Z,1,1e308 2026-09-14T00:01:00Z,1,1e308 >"$tmp/infbytes.csv"
k infbytes 2 validate "$scenario" --set "producers[0].rate.file=$tmp/infbytes.csv"
grep -q "infbytes.csv:3:24: IncomingBytes: the column's sum is beyond what a double holds" \
    "$tmp/infbytes.err" || fail "bytes past a double: $(cat "$tmp/infbytes.err")"
printf 'timestamp,IncomingRecords,IncomingBytes\n2026-09-14T00:00:00Z,1,1e300\n' \
    >"$tmp/bigbytes.csv"
k bigbytes 2 validate "$scenario" --set "producers[0].rate.file=$tmp/bigbytes.csv"
grep -q "record_size: trace: the trace's IncomingBytes / IncomingRecords is 1e+300 B a record" \
    "$tmp/bigbytes.err" || fail "1e300 bytes a record: $(cat "$tmp/bigbytes.err")"
k dir 2 validate "$scenario" --set "producers[0].rate.file=$tmp"
grep -q "cannot read the trace: Is a directory" "$tmp/dir.err" ||
    fail "a directory for a trace: $(cat "$tmp/dir.err")"

# Provenance: the trace and the price file are inputs of a run as much as the scenario.
# A copy of the scenario, its trace and its price file; two replications kept in a
# folder; --resume keeps both while nothing changed, runs both again once the trace or
# the price file changed (their digest changes), and the new results follow the files.
mkdir -p "$tmp/prov/data"
cp "$scenario" "$tmp/prov/day.yaml"
cp scenarios/data/sample-day.csv "$tmp/prov/data/"
cp scenarios/prices/us-east-1-2026-09.yaml "$tmp/prov/prices.yaml"
pv=("$tmp/prov/day.yaml" --replications 2 --jobs 1 --duration 10m --prices "$tmp/prov/prices.yaml"
    --out "$tmp/prov/out" --json)
figure() { # figure FILE NAME: the summary mean of a figure
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"][sys.argv[2]]["mean"])' "$@"
}
sha() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenario_sha256"])' "$1"; }
if k prov0 0 run "${pv[@]}" && k prov1 0 run "${pv[@]}" --resume; then
    grep -q "2 of 2 runs done, 0 to run" "$tmp/prov1.err" ||
        fail "--resume with nothing changed: $(cat "$tmp/prov1.err")"
    in0=$(figure "$tmp/prov0.out" stream.records_in)
    sha0=$(sha "$tmp/prov0.out")
    # Minute 5 of the trace holds 100,000 more records.
    python3 - "$tmp/prov/data/sample-day.csv" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = [k for k, l in enumerate(lines) if l[:1].isdigit()][5]
t, n, b = lines[i].split(",")
lines[i] = f"{t},{int(n) + 100000},{int(b) + 100000 * 1000}"
open(p, "w").write("\n".join(lines))
PY
    if k prov2 0 run "${pv[@]}" --resume; then
        grep -q "0 of 2 runs done, 2 to run" "$tmp/prov2.err" ||
            fail "--resume kept runs of another trace: $(cat "$tmp/prov2.err")"
        in2=$(figure "$tmp/prov2.out" stream.records_in)
        [ "$(sha "$tmp/prov2.out")" != "$sha0" ] || fail "the trace changed, scenario_sha256 did not"
        python3 -c "import sys; sys.exit(0 if float('$in2') > float('$in0') + 50000 else 1)" ||
            fail "records_in $in0 then $in2: the changed trace was not replayed"
    fi
    sed -i 's/0\.015/0.030/' "$tmp/prov/prices.yaml" # every 1.5-cent price doubled
    if k prov3 0 run "${pv[@]}" --resume; then
        grep -q "0 of 2 runs done, 2 to run" "$tmp/prov3.err" ||
            fail "--resume kept runs of another price file: $(cat "$tmp/prov3.err")"
    fi
fi

cli_finish cli_replay
