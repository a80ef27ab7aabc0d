#!/usr/bin/env bash
# cli_reshard_scenarios.sh - the shipped resharding and capacity scenarios show what
# issue 5 says they show: the hot shard before and after its split, a hot key
# throttling in provisioned and on-demand mode alike, children idle while parents
# drain, and an on-demand burst throttled until the stream grows.
# usage: bash tests/cli_reshard_scenarios.sh KDSIM SRCDIR
set -u
kdsim=$1
cd "$2" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

run() { # name out-dir args...
    local name=$1 out=$2
    shift 2
    if ! "$kdsim" run "scenarios/$name.yaml" --out "$out" "$@" >/dev/null 2>"$tmp/err"; then
        echo "FAIL $name: kdsim run failed: $(cat "$tmp/err")"
        fail=1
    fi
}

run hot-shard "$tmp/hs"
run hot-key "$tmp/hk"
run hot-key "$tmp/hk-od" --set stream.mode=on_demand_standard
run reshard-idle-children "$tmp/rc"
run on-demand-burst "$tmp/od"

python3 - "$tmp" <<'PY' || fail=1
import csv, json, sys
tmp = sys.argv[1]
bad = []
def check(cond, msg):
    if not cond:
        bad.append(msg)

def per_minute(d):
    rows = list(csv.DictReader(open(f"{d}/shards_per_minute.csv")))
    return rows

# Hot shard: before the split (minutes 2..19) shard 2 stores ~1,000/s and throttles
# ~100/s; after it (minutes 22..39) the child holding s-90 carries ~850/s, no throttling.
rows = per_minute(f"{tmp}/hs")
def avg(shard, lo, hi, col):
    v = [float(r[col]) / 60 for r in rows if r["shard_id"] == shard and lo <= int(r["minute"]) <= hi]
    return sum(v) / len(v) if v else 0.0
r = json.load(open(f"{tmp}/hs/report.json"))
ops = r["stream"]["reshards"]
check(len(ops) == 1 and ops[0]["status"] == "OK" and ops[0]["children"] == ["shardId-000000000004", "shardId-000000000005"],
      f"hot-shard: one split into shards 4 and 5 expected, got {ops}")
offered = avg("shardId-000000000002", 2, 19, "records_in") + avg("shardId-000000000002", 2, 19, "write_throttled_records")
thr = avg("shardId-000000000002", 2, 19, "write_throttled_records")
check(1050 <= offered <= 1150, f"hot-shard: shard 2 offered {offered:.0f}/s before the split, expected ~1,100")
check(80 <= thr <= 120, f"hot-shard: shard 2 throttled {thr:.0f}/s before the split, expected ~100")
child = avg("shardId-000000000005", 22, 39, "records_in")
check(800 <= child <= 900, f"hot-shard: the child holding s-90 carries {child:.0f}/s, expected ~850")
check(avg("shardId-000000000005", 22, 39, "write_throttled_records") == 0, "hot-shard: the child throttles")
hk = r["stream"]["hot"]["hot_keys"]
check(hk and hk[0]["key"] == "s-90", f"hot-shard: hot key s-90 not named: {hk}")

# Hot key: throttled in both modes, at least the 200/s the key alone exceeds by.
for d, mode in (("hk", "provisioned"), ("hk-od", "on_demand_standard")):
    r = json.load(open(f"{tmp}/{d}/report.json"))
    p = [p for p in r["producers"] if p["name"] == "device-42"][0]
    per_s = p["write_throttled_records"] / r["duration_s"]
    check(r["stream"]["mode"] == mode, f"hot-key: mode {r['stream']['mode']}")
    check(per_s >= 150, f"hot-key ({mode}): device-42 throttled {per_s:.0f}/s, expected at least ~200")

# Idle children: the lagging job's children waited minutes, the live reader's seconds.
r = json.load(open(f"{tmp}/rc/report.json"))
c = {c["name"]: c for c in r["consumers"]}
check(c["nightly-job"]["children_started"] == 4 and c["live"]["children_started"] == 4,
      "reshard-idle-children: both readers should start the 4 children")
check(c["nightly-job"]["child_wait_ms_max"] > 300000, f"reshard-idle-children: the lagging job's children waited only {c['nightly-job']['child_wait_ms_max']} ms")
check(c["live"]["child_wait_ms_max"] <= 20000, f"reshard-idle-children: the live reader's children waited {c['live']['child_wait_ms_max']} ms")
for x in c.values():
    s = sum(sh["records_in"] for sh in r["stream"]["shards"])
    check(s == x["records_skipped_at_start"] + x["records_delivered"] + x["records_unread"] + x["records_expired_unread"],
          f"reshard-idle-children: conservation broken for {x['name']}")

# On-demand burst: no throttling in the first hour, throttling for about the scaling
# delay after the burst, none after; the stream grew.
r = json.load(open(f"{tmp}/od/report.json"))
per = list(csv.DictReader(open(f"{tmp}/od/stream_per_minute.csv")))
thr = [int(float(x["write_throttled_records"])) for x in per]
check(sum(thr[:60]) == 0, "on-demand-burst: throttled before the burst")
burst_minutes = [i for i, t in enumerate(thr) if t > 0]
check(burst_minutes and 10 <= len(burst_minutes) <= 20 and burst_minutes[0] >= 60,
      f"on-demand-burst: throttled minutes {burst_minutes[:3]}..., {len(burst_minutes)} in all; expected about 15 after minute 60")
check(sum(thr[80:]) == 0, "on-demand-burst: still throttled 20 minutes after the burst")
check(r["stream"]["open_shards"] >= 12, f"on-demand-burst: {r['stream']['open_shards']} open shards at the end")
caps = list(csv.DictReader(open(f"{tmp}/od/capacity_per_minute.csv")))
check(int(float(caps[30]["open_shards"])) == 4, "on-demand-burst: not 4 shards before the burst")
names = [a["setting"] for a in r["assumptions"]]
check("stream.on_demand.scale_delay" in names, "on-demand-burst: the scaling delay is not listed as an assumption")

for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
if [ $fail -eq 0 ]; then echo "cli_reshard_scenarios: all checks passed"; fi
exit $fail
