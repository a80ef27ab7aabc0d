#!/usr/bin/env bash
# cli_determinism.sh - one scenario and one seed give byte-identical reports, also with
# the CPU's FMA and AVX masked (the baseline code another machine would run); another
# seed gives another run; `--out DIR` writes the same JSON report as --json, the text
# report, and the documented CSV files (docs/report-json.md), complete, with no
# temporary file left behind.
#
# usage: bash tests/cli_determinism.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
scenario=scenarios/acme-clickstream.yaml
cli_tmpdir

# run NAME ARGS...: kdsim run $scenario --duration 2m ARGS, stdout to $tmp/NAME.out;
# fails the test unless the exit status is 0 and stderr is empty.
run() {
    local name=$1
    shift
    "$kdsim" run "$scenario" --duration 2m "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "kdsim run $scenario --duration 2m $*: exit status $rc"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -20
    fi
}

# --- the same seed twice: byte-identical; another seed: another run ---------------------
run a --seed 7 --json
run b --seed 7 --json
run c --seed 8 --json
if ! cmp -s "$tmp/a.out" "$tmp/b.out"; then
    fail "two runs with --seed 7 printed different JSON:"
    diff -u --label "first run" --label "second run" "$tmp/a.out" "$tmp/b.out" | head -40
fi
[ -s "$tmp/a.out" ] || fail "--json printed nothing"
cmp -s "$tmp/a.out" "$tmp/c.out" && fail "--seed 7 and --seed 8 printed the same JSON"

# --- the same on a machine without FMA or AVX ------------------------------------------
# glibc picks exp() and the string functions by CPU at run time (exp has FMA, AVX and
# SSE2 builds). Masking the features makes this machine run the baseline x86-64 code
# another machine would: the JSON must not change. (Where the CPU lacks them, or the
# C library ignores the tunable, this compares a run with itself.)
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX2,-FMA,-AVX run f --seed 7 --json
if ! cmp -s "$tmp/a.out" "$tmp/f.out"; then
    fail "a run with the CPU's FMA and AVX masked printed different JSON:"
    diff -u --label "as is" --label "FMA and AVX masked" "$tmp/a.out" "$tmp/f.out" | head -40
fi

# --- --out DIR: the same report, the text report and the CSV files -----------------------
run d --seed 7 --json --out "$tmp/dir"
run t --seed 7 --out "$tmp/dir2" # text report on stdout
cmp -s "$tmp/a.out" "$tmp/d.out" || fail "--json with --out printed other JSON than --json alone"
if ! cmp -s "$tmp/d.out" "$tmp/dir/report.json"; then
    fail "DIR/report.json differs from the --json output:"
    diff -u --label "--json" --label "report.json" "$tmp/d.out" "$tmp/dir/report.json" | head -40
fi
if ! cmp -s "$tmp/t.out" "$tmp/dir/report.txt"; then
    fail "DIR/report.txt differs from the text report on stdout:"
    diff -u --label "stdout" --label "report.txt" "$tmp/t.out" "$tmp/dir/report.txt" | head -40
fi
for f in report.json report.txt stream_per_second.csv stream_per_minute.csv \
    shards_per_minute.csv consumers_per_minute.csv consumers_latency_cdf.csv; do
    cmp -s "$tmp/dir/$f" "$tmp/dir2/$f" || fail "--out DIR/$f differs between the two runs with --seed 7"
done

# Writing into a directory that already holds a report replaces it, and still leaves
# nothing behind.
run e --seed 8 --json --out "$tmp/dir2"
cmp -s "$tmp/c.out" "$tmp/dir2/report.json" || fail "a second --out into the same DIR did not replace report.json"

shopt -s nullglob
for dir in "$tmp/dir" "$tmp/dir2"; do
    for f in "$dir"/.*; do
        case ${f##*/} in
        . | ..) ;;
        *) fail "--out left a temporary file behind: ${f#"$tmp"/}" ;;
        esac
    done
done

# Headers (docs/report-json.md, "Files written by --out DIR"), row counts for a 2-minute
# run, and the CSV totals against the JSON report.
if ! python3 - "$tmp" <<'EOF'; then
import csv, json, sys
tmp = sys.argv[1]
ok = True
def bad(msg):
    global ok
    print("FAIL " + msg)
    ok = False

a = json.load(open(f"{tmp}/a.out"))
c = json.load(open(f"{tmp}/c.out"))
if a.get("seed") != 7 or c.get("seed") != 8:
    bad(f"seed in the reports: {a.get('seed')} and {c.get('seed')}, expected 7 and 8")
if a.get("duration_s") != 120:
    bad(f"duration_s is {a.get('duration_s')}, expected 120 (--duration 2m)")
# Another seed must change the simulation, not just the seed fields.
strip = lambda r: {k: v for k, v in r.items() if k not in ("seed", "random")}
if strip(a) == strip(c):
    bad("--seed 8 changed only the seed fields of the report, not the run")

headers = {
    "stream_per_second.csv": "second,seconds,records_in,bytes_in,write_throttled_records",
    "stream_per_minute.csv": "minute,minutes,records_in,bytes_in,write_throttled_records,read_throttled_calls,bytes_out",
    "shards_per_minute.csv": "minute,minutes,shard_id,records_in,bytes_in,write_throttled_records,read_throttled_calls,bytes_out",
    "consumers_per_minute.csv": "minute,minutes,consumer,records_delivered,iterator_age_ms_max",
    "consumers_latency_cdf.csv": "consumer,latency_ms_upper,cumulative_fraction",
}
rows = {}
for name, header in headers.items():
    try:
        text = open(f"{tmp}/dir/{name}", newline="").read()
    except OSError as e:
        bad(f"--out did not write {name}: {e}")
        continue
    if not text.endswith("\n"):
        bad(f"{name} does not end with a newline (incomplete?)")
    lines = text.split("\n")
    if lines[0] != header:
        bad(f"{name} header is {lines[0]!r}, expected {header!r}")
    ncol = header.count(",") + 1
    body = list(csv.reader(lines[1:-1]))
    broken = [(i, r) for i, r in enumerate(body, 2) if len(r) != ncol]
    if broken:
        i, r = broken[0]
        bad(f"{name}:{i}: {len(r)} columns, expected {ncol}: {r}")
        continue  # no totals from a malformed file
    rows[name] = body

s = a["stream"]
if "stream_per_second.csv" in rows:
    r = rows["stream_per_second.csv"]
    if len(r) != 120:
        bad(f"stream_per_second.csv has {len(r)} rows, expected 120 for 2 minutes")
    if any(x[1] != "1" for x in r):
        bad("stream_per_second.csv: a row of a 2-minute run covers more than one second")
    if sum(int(x[2]) for x in r) != s["records_in"]:
        bad("stream_per_second.csv records_in does not add up to stream.records_in")
    if sum(int(x[3]) for x in r) != s["bytes_in"]:
        bad("stream_per_second.csv bytes_in does not add up to stream.bytes_in")
if "stream_per_minute.csv" in rows:
    r = rows["stream_per_minute.csv"]
    if len(r) != 2:
        bad(f"stream_per_minute.csv has {len(r)} rows, expected 2 for 2 minutes")
    if any(x[1] != "1" for x in r):
        bad("stream_per_minute.csv: a row of a 2-minute run covers more than one minute")
    if sum(int(x[2]) for x in r) != s["records_in"]:
        bad("stream_per_minute.csv records_in does not add up to stream.records_in")
if "shards_per_minute.csv" in rows:
    for sh in s["shards"]:
        got = sum(int(x[3]) for x in rows["shards_per_minute.csv"] if x[2] == sh["shard_id"])
        if got != sh["records_in"]:
            bad(f"shards_per_minute.csv records_in of {sh['shard_id']} is {got}, "
                f"the report says {sh['records_in']}")
if "consumers_latency_cdf.csv" in rows:
    for cons in a["consumers"]:
        fr = [float(x[2]) for x in rows["consumers_latency_cdf.csv"] if x[0] == cons["name"]]
        if cons["records_delivered"] > 0 and (not fr or abs(fr[-1] - 1) > 1e-6):
            bad(f"consumers_latency_cdf.csv: {cons['name']}'s fractions do not end at 1")
        if any(y < x for x, y in zip(fr, fr[1:])):
            bad(f"consumers_latency_cdf.csv: {cons['name']}'s fractions decrease")
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

# --- adding an entity leaves the others' draws alone --------------------------------------
# Every entity draws from its own generator, seeded from the master seed and its name
# (design.md, "Build"). A producer added in front of the others (with InternalFailures on,
# which are drawn for every put) must leave the other producers' figures as they were;
# a consumer added in front leaves the other consumers' figures and every seed alone.
if ! python3 - "$tmp" "$scenario" <<'EOF'; then
import sys
tmp, src = sys.argv[1], sys.argv[2]
s = open(src).read()
producer = """  - name: added
    rate: 50 records/s
    record_size: 1 KiB
    keys: {kind: uniform, count: 500, prefix: "x-"}
"""
consumer = """  - name: added
    kind: polling
    poll_interval: 2s
"""
assert "\nproducers:\n" in s and "\nconsumers:\n" in s
open(f"{tmp}/plus-producer.yaml", "w").write(s.replace("\nproducers:\n", "\nproducers:\n" + producer, 1))
open(f"{tmp}/plus-consumer.yaml", "w").write(s.replace("\nconsumers:\n", "\nconsumers:\n" + consumer, 1))
EOF
    fail "could not write the scenarios with an added entity"
fi
for v in base plus-producer plus-consumer; do
    src=$scenario
    [ $v = base ] || src=$tmp/$v.yaml
    "$kdsim" run "$src" --duration 2m --seed 7 --set stream.internal_failure_rate=0.001 --json \
        >"$tmp/$v.json" 2>"$tmp/$v.err" || fail "kdsim run $v: exit status $?: $(head -3 "$tmp/$v.err")"
done
if ! python3 - "$tmp" <<'EOF'; then
import json, sys
tmp = sys.argv[1]
ok = True
base = json.load(open(f"{tmp}/base.json"))
def rows(r, kind):
    return {x["name"]: x for x in r[kind]}
def seeds(r):
    return {x["name"]: x["seed"] for x in r["random"]["streams"]}
if not any(p["records_failed_internal"] for p in base["producers"]):
    print("FAIL the base run has no InternalFailures to compare")
    ok = False
for variant, kind in (("plus-producer", "producers"), ("plus-consumer", "consumers")):
    r = json.load(open(f"{tmp}/{variant}.json"))
    got = rows(r, kind)
    for name, row in rows(base, kind).items():
        changed = sorted(k for k in row if row[k] != got.get(name, {}).get(k))
        if changed:
            print(f"FAIL adding one of the {kind} changed {name}'s {', '.join(changed)}")
            ok = False
    moved = sorted(k for k, v in seeds(base).items() if seeds(r).get(k) != v)
    if moved:
        print(f"FAIL adding one of the {kind} changed the seeds of {', '.join(moved)}")
        ok = False
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

# --- an --out path that cannot be a directory: status 2 before anything runs, a message
# naming it (cli_out_dir.sh checks the rest of --out) -------------------------------------
: >"$tmp/file"
"$kdsim" run "$scenario" --duration 2m --json --out "$tmp/file" >"$tmp/f.out" 2>"$tmp/f.err"
rc=$?
[ $rc -eq 2 ] || fail "--out onto a regular file: exit status $rc, expected 2"
[ -s "$tmp/f.out" ] && fail "--out onto a regular file: the scenario still ran"
grep -q "$tmp/file" "$tmp/f.err" || fail "--out onto a regular file: the message does not name it: $(cat "$tmp/f.err")"
# Regression: the message names the folder given, not a temporary file.
if grep -q '\.report\.json\.tmp' "$tmp/f.err"; then
    fail "--out onto a regular file: the message names the temporary file: $(cat "$tmp/f.err")"
fi

cli_finish cli_determinism
