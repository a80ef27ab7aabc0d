#!/usr/bin/env bash
# cli_plots.sh - the plots of `kdsim run --out DIR` (cli/plots.c, plots/*.gp).
#
# The plot data files hold what the scenario does (hot-shard: shard 2 at its budget and
# throttled until its split at 20 min, the children from 20:30, the others at half their
# budget; the cost table adds up to the JSON's); the PNG and SVG files exist and are real
# pictures with their titles; more than 8 shards give heat maps; without gnuplot the run
# succeeds, writes the data and the scripts, and says once how to install gnuplot; a
# gnuplot that fails is a warning; plots.sh draws the pictures again by hand; the data
# files do not depend on gnuplot.
#
# The picture checks need gnuplot (scripts/setup.sh installs gnuplot-nox); without it they
# are skipped, said so, and the test exits 77 (skipped) once the other checks passed.
#
# usage: bash tests/cli_plots.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir
have_gnuplot=0
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1
mkdir -p "$tmp/empty" "$tmp/fake"
printf '#!/bin/sh\necho "fake gnuplot: cannot draw" >&2\nexit 1\n' >"$tmp/fake/gnuplot"
chmod +x "$tmp/fake/gnuplot"

# --- the data files (the gnuplot-free run first: it is fast) -------------------------
PATH=$tmp/empty "$kdsim" run scenarios/hot-shard.yaml --out "$tmp/nogp" >/dev/null 2>"$tmp/nogp.err"
rc=$?
[ $rc -eq 0 ] || fail "without gnuplot the run failed (status $rc): $(head -3 "$tmp/nogp.err")"
n=$(grep -c 'apt-get install gnuplot-nox' "$tmp/nogp.err")
[ "$n" = 1 ] || fail "without gnuplot, expected one message naming apt-get install gnuplot-nox, got $n: $(cat "$tmp/nogp.err")"
for f in report.json report.txt report.html shards_per_minute.csv plots/shards.csv plots/capacity.csv \
    plots/cost.csv plots/latency-live-metrics.csv plots/iterator-age-live-metrics.csv plots/plots.sh \
    plots/common.gp plots/draw.gp plots/shards.gp plots/capacity.gp plots/cost.gp \
    plots/latency_cdf.gp plots/iterator_age.gp; do
    [ -s "$tmp/nogp/$f" ] || fail "without gnuplot, $f is missing or empty"
done
ls "$tmp/nogp/plots/"*.png "$tmp/nogp/plots/"*.svg >/dev/null 2>&1 &&
    fail "without gnuplot, pictures were written"
ls -a "$tmp/nogp/plots" | grep -q '\.tmp' && fail "temporary files left in plots/"
grep -q 'gnuplot was not installed' "$tmp/nogp/report.html" ||
    fail "without gnuplot, report.html does not say why it has no plots"

python3 - "$tmp/nogp" <<'PY' || failed=$((failed + 1))
import csv, json, math, sys
d = sys.argv[1]
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)
r = json.load(open(f"{d}/report.json"))

# shards.csv: every shard ever created x every minute, NaN where the shard did not exist.
rows = list(csv.DictReader(open(f"{d}/plots/shards.csv")))
check(list(rows[0].keys()) == ["minute", "shard", "shard_id", "write_pct", "read_pct",
      "write_throttled_per_s", "read_throttled_calls_per_s"], f"shards.csv header {list(rows[0].keys())}")
check(len(rows) == 6 * 40, f"shards.csv: {len(rows)} rows, expected 6 shards x 40 minutes")
def col(shard, m, c):
    for x in rows:
        if int(x["shard"]) == shard and int(x["minute"]) == m:
            return float(x[c])
    return None
def avg(shard, lo, hi, c):
    v = [col(shard, m, c) for m in range(lo, hi + 1)]
    return sum(v) / len(v)
# Before the split: shard 2 at its budget and refusing ~100 records/s, the others at half.
check(97 <= avg(2, 2, 18, "write_pct") <= 102, f"shard 2 writes {avg(2, 2, 18, 'write_pct'):.1f} % of budget, expected ~100")
check(85 <= avg(2, 2, 18, "write_throttled_per_s") <= 120, f"shard 2 throttled {avg(2, 2, 18, 'write_throttled_per_s'):.1f}/s, expected ~100")
for s in (0, 1, 3):
    check(45 <= avg(s, 2, 38, "write_pct") <= 55, f"shard {s} writes {avg(s, 2, 38, 'write_pct'):.1f} %, expected ~50")
    check(avg(s, 2, 38, "write_throttled_per_s") == 0, f"shard {s} throttled")
# Reads: one reader, so each shard's bytes out about equal its bytes in: half of the
# write percentage (2 MiB/s against 1 MiB/s).
check(20 <= avg(0, 2, 38, "read_pct") <= 30, f"shard 0 reads {avg(0, 2, 38, 'read_pct'):.1f} % of the read budget, expected ~25")
# The split: parent closed after minute 20, children from minute 20 (created at 20:30).
check(all(math.isnan(col(2, m, "write_pct")) for m in range(21, 40)), "shard 2 still takes writes after its split")
check(all(math.isnan(col(s, m, "write_pct")) for s in (4, 5) for m in range(0, 20)), "a child has writes before it exists")
check(80 <= avg(5, 22, 38, "write_pct") <= 90, f"child 5 writes {avg(5, 22, 38, 'write_pct'):.1f} %, expected ~85")
check(avg(5, 22, 38, "write_throttled_per_s") == 0, "child 5 throttles")
# Minute 20 holds the split at 20:30: each shard is measured over the seconds it took
# writes, so the closing parent is still at its budget and the new child already at its
# rate, not half of each over the whole minute.
check(97 <= col(2, 20, "write_pct") <= 102, f"shard 2 in minute 20 writes {col(2, 20, 'write_pct')} %, expected ~100 over its 30 s")
check(85 <= col(2, 20, "write_throttled_per_s") <= 120, f"shard 2 in minute 20 throttled {col(2, 20, 'write_throttled_per_s')}/s, expected ~100")
check(80 <= col(5, 20, "write_pct") <= 90, f"child 5 in minute 20 writes {col(5, 20, 'write_pct')} %, expected ~85 over its 30 s")
# The percentages come from the CSV the report already writes: records/min over 60 s.
spm = {(int(x["minute"]), x["shard_id"]): x for x in csv.DictReader(open(f"{d}/shards_per_minute.csv"))}
x = spm[(5, "shardId-000000000000")]
want = 100 * max(float(x["records_in"]) / 60 / 1000, float(x["bytes_in"]) / 60 / 1048576)
check(abs(col(0, 5, "write_pct") - want) < 0.01, f"shard 0 minute 5: {col(0, 5, 'write_pct')} % against {want:.3f}")

# capacity.csv: 4 open shards, then 5 after the split; written about 2,500/s.
cap = list(csv.DictReader(open(f"{d}/plots/capacity.csv")))
check(len(cap) == 40, f"capacity.csv: {len(cap)} rows")
check(all(int(x["open_shards"]) == 4 for x in cap[:20]) and all(int(x["open_shards"]) == 5 for x in cap[21:]),
      f"open shards {[x['open_shards'] for x in cap]}")
w = sum(float(x["records_in_per_s"]) for x in cap[2:19]) / 17
check(2400 <= w <= 2600, f"capacity.csv: {w:.0f} records/s written, expected ~2,500")
check(abs(sum(float(x["records_in_per_s"]) * 60 for x in cap) - r["stream"]["records_in"]) < 2,
      "capacity.csv's records/s x 60 s do not add up to the stream's records_in")

# The latency CDF: non-decreasing from 0 to 1, its median where the report puts p50.
lat = list(csv.DictReader(open(f"{d}/plots/latency-live-metrics.csv")))
fr = [float(x["cumulative_fraction"]) for x in lat]
ms = [float(x["latency_ms"]) for x in lat]
check(fr[0] == 0 and abs(fr[-1] - 1) < 1e-6, f"latency CDF from {fr[0]} to {fr[-1]}")
check(all(b >= a for a, b in zip(fr, fr[1:])) and all(b > a for a, b in zip(ms, ms[1:])), "latency CDF not monotonic")
p50 = r["consumers"][0]["latency_ms"]["p50"]
med = next(m for m, f in zip(ms, fr) if f >= 0.5)
check(0.9 * p50 <= med <= 1.1 * p50, f"CDF median {med} ms against the report's p50 {p50} ms")

# Iterator age and delivery per minute: the reader keeps up, delivering what is written.
it = list(csv.DictReader(open(f"{d}/plots/iterator-age-live-metrics.csv")))
check(len(it) == 40, f"iterator-age: {len(it)} rows")
dl = sum(float(x["records_delivered_per_s"]) for x in it[2:19]) / 17
check(abs(dl - w) < 0.02 * w, f"delivered {dl:.0f}/s against written {w:.0f}/s")
check(max(float(x["iterator_age_ms_max"]) for x in it) == r["consumers"][0]["iterator_age_ms_max"],
      "iterator-age maximum differs from the report's")

# cost.csv: a row per mode, in the JSON's order; item columns add up to the total, which
# is the JSON's monthly_usd; no column is zero in every mode.
cost = list(csv.DictReader(open(f"{d}/plots/cost.csv")))
modes = r["cost"]["modes"]
check([x["mode"] for x in cost] == list(modes.keys()), f"cost.csv modes {[x['mode'] for x in cost]}")
items = [k for k in cost[0].keys() if k not in ("mode", "label", "detail", "total_usd")]
for x in cost:
    m = modes[x["mode"]]
    check(abs(float(x["total_usd"]) - m["monthly_usd"]) < 0.005, f"{x['mode']}: total {x['total_usd']} against {m['monthly_usd']}")
    check(abs(sum(float(x[i]) for i in items) - m["monthly_usd"]) < 0.005, f"{x['mode']}: items do not add up")
    for it_ in m["items"]:
        if it_["monthly_usd"] > 0:
            check(abs(float(x[it_["item"]]) - it_["monthly_usd"]) < 0.005, f"{x['mode']}.{it_['item']}")
for i in items:
    check(any(float(x[i]) > 0 for x in cost), f"cost.csv column {i} is zero in every mode")
# hot-shard splits shard 2: the provisioned bill holds the shard-hours of the 4 shards,
# then 5, which the detail gives as their average, not the 4 at creation.
avg = modes["provisioned"]["items"][0]["quantity"] / r["cost"]["period_h"]
check(modes["provisioned"]["shards"] == 4 and 4 < avg < 5, f"provisioned shards {avg}")
check(cost[0]["detail"] == f"avg {avg:.2f} shards", f"provisioned detail {cost[0]['detail']}")

if bad:
    print("FAIL plot data:\n  " + "\n  ".join(bad))
    sys.exit(1)
PY

# A run longer than 1,000 minutes: the shard plots' data goes in 2-minute steps, each the
# two minutes of shards_per_minute.csv together.
PATH=$tmp/empty "$kdsim" run scenarios/lambda-poison-record.yaml --out "$tmp/long" >/dev/null 2>&1 ||
    fail "lambda-poison-record --out failed"
python3 - "$tmp/long" <<'PY' || failed=$((failed + 1))
import csv, sys
d = sys.argv[1]
rows = [x for x in csv.DictReader(open(f"{d}/plots/shards.csv")) if x["shard"] == "1"]
spm = {int(x["minute"]): x for x in csv.DictReader(open(f"{d}/shards_per_minute.csv"))
       if x["shard_id"] == "shardId-000000000001"}
bad = []
if [int(x["minute"]) for x in rows] != list(range(0, 1470, 2)):
    bad.append(f"steps {[x['minute'] for x in rows[:4]]}..., {len(rows)} rows: expected 0, 2, 4, ... 1468")
for x in rows[5:10]:
    m = int(x["minute"])
    rec = (float(spm[m]["records_in"]) + float(spm[m + 1]["records_in"])) / 120 / 1000
    byt = (float(spm[m]["bytes_in"]) + float(spm[m + 1]["bytes_in"])) / 120 / 1048576
    if abs(float(x["write_pct"]) - 100 * max(rec, byt)) > 0.001:
        bad.append(f"minute {m}: write_pct {x['write_pct']} against {100 * max(rec, byt):.3f}")
if "per 2 minutes" not in open(f"{d}/plots/plots.sh").read():
    bad.append("plots.sh: the shard plots' titles do not say 'per 2 minutes'")
if bad:
    print("FAIL 2-minute steps:\n  " + "\n  ".join(bad))
    sys.exit(1)
PY

# The time plots span the whole run (40 minutes, its last minute included), each minute's
# value drawn at the middle of its minute.
for p in capacity iterator-age-live-metrics shard-writes; do
    grep "out='$p'" "$tmp/nogp/plots/plots.sh" | grep -q "xmax=40;" || fail "plots.sh: $p does not span the 40-minute run (xmax=40)"
done
grep -q 'xrange \[0:xmax\]' "$tmp/nogp/plots/common.gp" && grep -q 'xmid(\$1)' "$tmp/nogp/plots/shards.gp" ||
    fail "the time plots do not draw minutes at their middle over the whole run"

# A gnuplot that fails: the run still succeeds, and says which plots are missing.
PATH=$tmp/fake:$PATH "$kdsim" run scenarios/hot-shard.yaml --duration 2m --out "$tmp/fail" \
    >/dev/null 2>"$tmp/fail.err"
rc=$?
[ $rc -eq 0 ] || fail "a failing gnuplot failed the run (status $rc)"
grep -q 'gnuplot could not draw .*shard-writes' "$tmp/fail.err" ||
    fail "a failing gnuplot: no warning naming the plot: $(head -3 "$tmp/fail.err")"
grep -q 'fake gnuplot: cannot draw' "$tmp/fail.err" || fail "a failing gnuplot: its message was not shown"
ls "$tmp/fail/plots/"*.png >/dev/null 2>&1 && fail "a failing gnuplot: pictures were written"
ls -a "$tmp/fail/plots" | grep -q '\.tmp' && fail "a failing gnuplot: temporary files left"

if [ $have_gnuplot -eq 0 ]; then
    echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox): the PNG and SVG checks did not run"
    [ "$failed" -eq 0 ] && exit 77
    cli_finish cli_plots
    exit
fi

# --- the pictures -------------------------------------------------------------------
"$kdsim" run scenarios/hot-shard.yaml --out "$tmp/a" >/dev/null 2>"$tmp/a.err" ||
    fail "hot-shard --out failed: $(head -3 "$tmp/a.err")"
[ -s "$tmp/a.err" ] && fail "hot-shard --out wrote to stderr: $(head -3 "$tmp/a.err")"
for f in "$tmp/nogp/plots/"*.csv; do
    cmp -s "$f" "$tmp/a/plots/${f##*/}" || fail "${f##*/} differs with and without gnuplot"
done
expected="latency-live-metrics iterator-age-live-metrics shard-writes shard-reads shard-write-throttles shard-read-throttles capacity cost"
for p in $expected; do
    png=$tmp/a/plots/$p.png svg=$tmp/a/plots/$p.svg
    if [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
        fail "$p.png is not a PNG"
    elif [ "$(stat -c %s "$png")" -lt 8000 ]; then
        fail "$p.png is only $(stat -c %s "$png") bytes"
    fi
    grep -q '<svg' "$svg" && grep -q '</svg>' "$svg" || fail "$p.svg is not a whole SVG"
    [ "$(grep -c '<path' "$svg")" -ge 20 ] || fail "$p.svg draws almost nothing"
done
n=$(ls "$tmp/a/plots/"*.png | wc -l)
[ "$n" = 8 ] || fail "hot-shard: $n PNG files, expected 8: $(ls "$tmp/a/plots/")"
# Titles and axis labels with units reach the pictures.
grep -q 'live-metrics: latency from write to processing' "$tmp/a/plots/latency-live-metrics.svg" || fail "latency plot title"
grep -q 'ms, log scale' "$tmp/a/plots/latency-live-metrics.svg" || fail "latency plot x label"
grep -q 'time since the start (min)' "$tmp/a/plots/shard-writes.svg" || fail "shard plot x label"
grep -q 'records refused (records/s)' "$tmp/a/plots/shard-write-throttles.svg" || fail "throttle plot y label"
grep -q 'USD per month' "$tmp/a/plots/cost.svg" || fail "cost plot y label"
grep -q 'shard 5' "$tmp/a/plots/shard-writes.svg" || fail "the shard plot has no line for shard 5"
grep -q '<image' "$tmp/a/plots/shard-writes.svg" && fail "6 shards drew a heat map"

# The cost plot gives each line item a colour of its own, for as many items as the
# billing has kinds (16): a 16-item table draws 15 more colours than a 1-item one.
mkdir -p "$tmp/cost16" "$tmp/cost1"
cp plots/common.gp plots/draw.gp plots/cost.gp "$tmp/cost16/"
cp plots/common.gp plots/draw.gp plots/cost.gp "$tmp/cost1/"
python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
items = [f"item{i}" for i in range(16)]
with open(f"{t}/cost16/cost.csv", "w") as f:
    f.write("mode,label,detail," + ",".join(items) + ",total_usd\n")
    f.write("a,a,x," + ",".join(str(i + 1) for i in range(16)) + ",136\n")
with open(f"{t}/cost1/cost.csv", "w") as f:
    f.write("mode,label,detail,item0,total_usd\na,a,x,1,1\n")
PY
(cd "$tmp/cost16" && gnuplot -e "data='cost.csv'; nitems=16; out='cost'" cost.gp 2>/dev/null) &&
    (cd "$tmp/cost1" && gnuplot -e "data='cost.csv'; nitems=1; out='cost'" cost.gp 2>/dev/null) ||
    fail "cost.gp could not draw a 16-item table"
c16=$(grep -o 'rgb([0-9, ]*)' "$tmp/cost16/cost.svg" | sort -u | wc -l)
c1=$(grep -o 'rgb([0-9, ]*)' "$tmp/cost1/cost.svg" | sort -u | wc -l)
[ $((c16 - c1)) -ge 15 ] || fail "cost.gp: 16 line items drew $((c16 - c1 + 1)) colours, expected 16"

# More than 8 shards: heat maps.
"$kdsim" run scenarios/hot-shard.yaml --duration 3m --set stream.shards=12 --out "$tmp/heat" \
    >/dev/null 2>"$tmp/heat.err" || fail "12 shards: run failed"
grep -q '<image' "$tmp/heat/plots/shard-writes.svg" || fail "12 shards: shard-writes is not a heat map"
grep -q 'shard (index)' "$tmp/heat/plots/shard-writes.svg" || fail "12 shards: heat map y label"
grep -q "shard-writes'\" shards.gp" "$tmp/heat/plots/plots.sh" &&
    grep "shard-writes'\" shards.gp" "$tmp/heat/plots/plots.sh" | grep -q 'heat=1' ||
    fail "12 shards: plots.sh does not ask for a heat map"

# plots.sh draws the pictures of the gnuplot-free run by hand.
sh "$tmp/nogp/plots/plots.sh" >/dev/null 2>"$tmp/sh.err" || fail "plots.sh failed: $(head -3 "$tmp/sh.err")"
for p in $expected; do
    [ -s "$tmp/nogp/plots/$p.png" ] && [ -s "$tmp/nogp/plots/$p.svg" ] || fail "plots.sh did not draw $p"
done

# KCL applications: the lease plot, from kcl_workers_per_minute.csv.
kcl=$(ls scenarios/kcl-*.yaml 2>/dev/null | head -1)
if [ -n "$kcl" ]; then
    "$kdsim" run "$kcl" --duration 5m --out "$tmp/kcl" >/dev/null 2>"$tmp/kcl.err" || fail "$kcl failed"
    l=$(ls "$tmp/kcl/plots/"leases-*.csv 2>/dev/null | head -1)
    if [ -z "$l" ]; then
        fail "$kcl: no leases-*.csv"
    else
        python3 - "$tmp/kcl" "$l" <<'PY' || failed=$((failed + 1))
import csv, sys
d, f = sys.argv[1], sys.argv[2]
app = f.rsplit("/", 1)[1][len("leases-"):-4]
src = [x for x in csv.DictReader(open(f"{d}/kcl_workers_per_minute.csv")) if x["consumer"] == app]
rows = list(csv.DictReader(open(f)))
bad = [x for x in src if rows[int(x["minute"])][x["worker"]] != x["leases_held"]]
if bad or not src:
    print(f"FAIL {f}: does not match kcl_workers_per_minute.csv: {bad[:2]}")
    sys.exit(1)
PY
        [ -s "${l%.csv}.png" ] && [ -s "${l%.csv}.svg" ] || fail "$kcl: no lease plot"
    fi
else
    echo "note: no scenarios/kcl-*.yaml: the lease plot was not tried"
fi

# The capacity plot's right axis is a shard's capacity in records/s: the records budget
# (hot-shard's 1 KiB records: 1,000/s), or the byte budget at the run's mean record size
# when that binds first (4 KiB records: 1 MiB/s / 4 KiB = 256/s), as its title says.
grep -qF "budget=1000; basis=''" "$tmp/nogp/plots/plots.sh" ||
    fail "capacity plot of 1 KiB records: $(grep -o 'budget=[^;]*; basis=[^;]*' "$tmp/nogp/plots/plots.sh")"
PATH=$tmp/empty "$kdsim" run scenarios/latency-one-poller.yaml --duration 2m \
    --set 'producers[0].record_size=4 KiB' --out "$tmp/big" >/dev/null 2>&1 ||
    fail "a run of 4 KiB records failed"
grep -qF "budget=256; basis=', by bytes at the mean record size'" "$tmp/big/plots/plots.sh" ||
    fail "capacity plot of 4 KiB records: $(grep -o 'budget=[^;]*; basis=[^;]*' "$tmp/big/plots/plots.sh")"

cli_finish cli_plots
