#!/usr/bin/env bash
# cli_trace.sh - `kdsim run --trace`: the trace of a short scenario has a header, a
# PutRecords line with its outcome (stored, throttled, failed) and a GetRecords line
# with what it returned; a throttled PutRecords shows its throttled count; the filters
# by kind, shard and name keep only what they name; the trace changes nothing in the
# report; `--trace -` writes to stderr. The other kinds (README's trace section,
# models/kds_trace.h) appear where the shipped scenarios make them, with their fields:
# `push` (enhanced fan-out, after the put that fed it), `lease` (the KCL, both sides),
# `reshard` (requests, closings, new shards, children started, on-demand scaling),
# `invoke` (Lambda), `s3` (Firehose), `checkpoint` and `failure` (Flink). Where a report
# counts what the lines tell (GetRecords calls, invocations, retries, records given up
# or expired, duplicates stored, lease losses, child starts, scaling actions,
# SubscribeToShard calls, worker events, lease moves, leader changes, the lease table's
# throttled writes, throttled invocations, iterator refreshes, read throttles), the lines
# add up to the report's figures from the same run, and that run's report is the one
# without --trace. The entity column is as wide as the run's longest name.
#
# usage: bash tests/cli_trace.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# hot-shard: the scraper bot's key overloads shardId-000000000002, whose one-second
# bucket runs dry after about 10 s, so 20 s show stored and throttled records.
sc=scenarios/hot-shard.yaml
run() { # run NAME ARGS...: trace into $tmp/NAME.trace, JSON into $tmp/NAME.json
    local name=$1
    shift
    if ! "$kdsim" run "$sc" --duration 20s --json --trace "$tmp/$name.trace" "$@" \
        >"$tmp/$name.json" 2>"$tmp/$name.err"; then
        fail "$name: kdsim run failed: $(head -3 "$tmp/$name.err")"
    fi
}

run all
run kinds --trace-kinds get
run shard --trace-shard 2
run shard-id --trace-shard shardId-000000000002
run names --trace-names scraper-bot,live-metrics
run both --trace-kinds put --trace-names web

t=$tmp/all.trace
head -1 "$t" | grep -q 'time (s) *kind *entity *shard *what happened' ||
    fail "the trace has no header: $(head -1 "$t")"
# The sequence numbers of the records a line stored or returned (model.md section 1: 56
# digits, monotonic per shard, unique per stream): kdsim's are 49, the shard's index in
# 12 digits and the record's position in 42.
seq='(; sequence number 49[0-9]{54}|; sequence numbers 49[0-9]{54} to 49[0-9]{54})?'
put='^ *[0-9]+\.[0-9]{6}  put +[a-z-]+ +shardId-[0-9]{12} PutRecords: [0-9]+ records? -> [0-9]+ stored( \([1-9][0-9]* duplicates? of records already stored\))?, [0-9]+ throttled, [0-9]+ failed \(attempt [0-9]+\)'"$seq"'$'
get='^ *[0-9]+\.[0-9]{6}  get +live-metrics +shardId-[0-9]{12} GetRecords: [0-9]+ records?, [0-9]+ B, iterator age [0-9]+ ms'
grep -Eq "$put" "$t" || fail "no PutRecords line with its outcome: $(grep -m1 ' put ' "$t")"
grep -Eq "$get" "$t" || fail "no GetRecords line with what it returned: $(grep -m1 ' get ' "$t")"
grep -E "$put" "$t" | grep -Eq 'shardId-000000000002 PutRecords: [0-9]+ records? -> [0-9]+ stored, [1-9][0-9]* throttled' ||
    fail "no throttled PutRecords on the hot shard shardId-000000000002"
# Stored plus throttled plus failed is the request's count, line by line.
bad=$(grep -E "$put" "$t" | sed -E 's/.*PutRecords: ([0-9]+) records? -> ([0-9]+) stored[^,]*, ([0-9]+) throttled, ([0-9]+) failed.*/\1 \2 \3 \4/' |
    awk '$1 != $2 + $3 + $4' | head -1)
[ -z "$bad" ] || fail "a PutRecords line whose outcome does not add up: $bad"
# Sequence numbers: a put line names those of the records it stored, and a GetRecords
# line of the poller those it returned; per shard the puts' follow each other from 0
# without a gap, as do one reader's gets, which never name a record before it was stored.
python3 - "$t" <<'PY' || failed=$((failed + 1))
import re, sys
bad, put_next, get_next = [], {}, {}
for ln in open(sys.argv[1]).readlines()[1:]:
    f = ln.split(None, 4)
    what = f[4]
    if f[3] == "-":
        continue  # a resend or a give-up: no records stored by it
    m = re.search(r"; sequence numbers? (49\d{54})(?: to (49\d{54}))?$", what)
    n = (int(re.search(r"-> (\d+) stored", what).group(1)) if f[1] == "put"
         else int(re.search(r"GetRecords: (\d+) record", what).group(1)) if " GetRecords: " in " " + what
         else None)
    if n is None:
        continue
    if (n > 0) != bool(m):
        bad.append(f"{n} records and {'a' if m else 'no'} sequence number: {ln.strip()}")
        continue
    if not m:
        continue
    a = m.group(1)
    z = m.group(2) or a
    shard = int(f[3][8:])
    if int(a[2:14]) != shard or int(z[2:14]) != shard:
        bad.append(f"a sequence number of another shard: {ln.strip()}")
    lo, hi = int(a[14:]), int(z[14:])
    if hi - lo + 1 != n or (n == 1) != (m.group(2) is None):
        bad.append(f"{n} records, sequence numbers for {hi - lo + 1}: {ln.strip()}")
    if f[1] == "put":
        if lo != put_next.get(shard, 0):
            bad.append(f"shard {shard}: a put from {lo}, expected {put_next.get(shard, 0)}")
        put_next[shard] = hi + 1
    else:
        key = (f[2], shard)
        if key in get_next and lo != get_next[key]:
            bad.append(f"{key}: a get from {lo}, expected {get_next[key]}")
        if hi >= put_next.get(shard, 0):
            bad.append(f"{key}: a get of {hi}, not stored yet")
        get_next[key] = hi + 1
if not put_next or not get_next:
    bad.append("no sequence numbers in the puts or the gets")
for b in bad[:5]:
    print("FAIL sequence numbers:", b)
sys.exit(1 if bad else 0)
PY
# Time never goes backwards.
awk 'NR > 1 && $1 < prev { print "line " NR ": " $1 " < " prev; exit } NR > 1 { prev = $1 }' "$t" >"$tmp/order"
[ -s "$tmp/order" ] && fail "trace times go backwards: $(cat "$tmp/order")"

# Filters: every line (the header aside) is what the filter names, and there are some.
check_filter() { # NAME AWK-CONDITION WHAT
    local n bad
    n=$(tail -n +2 "$tmp/$1.trace" | wc -l)
    bad=$(tail -n +2 "$tmp/$1.trace" | awk "!($2)" | head -1)
    [ "$n" -gt 0 ] || fail "$1: the filtered trace is empty ($3)"
    [ -z "$bad" ] || fail "$1: a line that is not $3: $bad"
}
check_filter kinds '$2 == "get"' "a GetRecords line"
check_filter shard '$4 == "shardId-000000000002"' "about shardId-000000000002"
check_filter shard-id '$4 == "shardId-000000000002"' "about shardId-000000000002"
check_filter names '$3 == "scraper-bot" || $3 == "live-metrics"' "from scraper-bot or live-metrics"
check_filter both '$2 == "put" && $3 == "web"' "a put from web"
cmp -s "$tmp/shard.trace" "$tmp/shard-id.trace" || fail "--trace-shard 2 and shardId-000000000002 differ"
# The filters drop lines, they do not change them: the filtered trace is a subset.
n_all=$(grep -c ' shardId-000000000002 ' "$t")
n_shard=$(($(wc -l <"$tmp/shard.trace") - 1))
[ "$n_all" = "$n_shard" ] || fail "--trace-shard 2 kept $n_shard lines, the full trace has $n_all"
grep -q ' scraper-bot ' "$tmp/names.trace" && grep -q ' live-metrics ' "$tmp/names.trace" ||
    fail "--trace-names scraper-bot,live-metrics lost one of the two"

# Tracing is a window, not a change: the reports are byte-identical with and without it.
"$kdsim" run "$sc" --duration 20s --json >"$tmp/plain.json" 2>/dev/null
for n in all kinds shard names; do
    cmp -s "$tmp/plain.json" "$tmp/$n.json" || fail "the JSON report changes with --trace ($n)"
done

# --trace - writes the trace to stderr, the report still to stdout.
"$kdsim" run "$sc" --duration 2s --trace - --trace-kinds put >"$tmp/out" 2>"$tmp/err"
grep -Eq "$put" "$tmp/err" || fail "--trace - wrote no PutRecords line to stderr"
grep -q 'PutRecords:' "$tmp/out" && fail "--trace - wrote trace lines to stdout"
grep -q '^kdsim .*scenario hot-shard' "$tmp/out" || fail "--trace - lost the report on stdout"

# Bad filters are usage errors (status 2).
"$kdsim" run "$sc" --duration 2s --trace-shard x7 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "--trace-shard x7: expected exit status 2"
grep -q 'trace-shard' "$tmp/err" || fail "--trace-shard x7: no message naming the option"
# bad_filter OPTION VALUE: a usage error naming the option, not a filter that keeps less.
bad_filter() {
    "$kdsim" run "$sc" --duration 2s --trace - "$1" "$2" >/dev/null 2>"$tmp/err"
    [ $? -eq 2 ] || fail "$1 $2: expected exit status 2"
    grep -q -- "^kdsim: $1: expected" "$tmp/err" || fail "$1 $2: no message naming the option"
}
bad_filter --trace-shard shardId-2      # AWS's ids have 12 digits
bad_filter --trace-kinds put,,get       # an empty kind
bad_filter --trace-kinds put,
bad_filter --trace-names ,web

# ---- the other kinds, from the scenarios that make them ---------------------------------
# kind_trace NAME SCENARIO DURATION KINDS: the trace of those kinds into $tmp/NAME.trace.
kind_trace() {
    if ! "$kdsim" run "scenarios/$2.yaml" --duration "$3" --trace "$tmp/$1.trace" \
        --trace-kinds "$4" >/dev/null 2>"$tmp/$1.err"; then
        fail "$1: kdsim run $2 failed: $(head -3 "$tmp/$1.err")"
    fi
}
# all_match NAME REGEX WHAT: the trace has lines (the header aside) and all match.
all_match() {
    local n bad
    n=$(tail -n +2 "$tmp/$1.trace" | wc -l)
    bad=$(tail -n +2 "$tmp/$1.trace" | grep -Ev "$2" | head -1)
    [ "$n" -gt 0 ] || fail "$1: no $3 line"
    [ -z "$bad" ] || fail "$1: a line that is not $3: $bad"
}
line='^ *[0-9]+\.[0-9]{6}  '
# jf FILE EXPR: a figure of a JSON report as an integer; c is its first consumer, and
# json and sys are there for other picks.
jf() {
    python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['consumers'][0]; print(int($2))" "$1"
}

# push: five EFO consumers at the tip of a 2-shard stream; every push reaches the tip,
# so MillisBehindLatest is 0 (pushes of a caught-up subscription). Each SubscribeToShard
# has its line (session 1 at the consumer's StartingPosition, then after each 5-minute
# session's end the resubscription from its continuation), as many as the report's
# subscriptions.
efo_sub='SubscribeToShard: session ([0-9]+) subscribed, StartingPosition ([A-Z_]+|AFTER_SEQUENCE_NUMBER, the continuation of session [0-9]+); pushes from sequence number 49[0-9]{54} for up to 5 min'
efo_end='subscription session [0-9]+ ended after 5 min; SubscribeToShard again, subscribed [0-9]+ ms later'
if ! "$kdsim" run scenarios/latency-efo.yaml --duration 11m --json --trace "$tmp/push.trace" \
    --trace-kinds push >"$tmp/push.json" 2>"$tmp/push.err"; then
    fail "push: kdsim run failed: $(head -3 "$tmp/push.err")"
fi
all_match push "${line}push +(billing|fraud|search|audit|metrics) +shardId-[0-9]{12} (SubscribeToShardEvent: [1-9][0-9]* records?, [1-9][0-9]* B, arrives at \+[0-9]+ ms, MillisBehindLatest [0-9]+; sequence numbers? 49[0-9]{54}( to 49[0-9]{54})?|$efo_sub|$efo_end)$" \
    "an enhanced fan-out push or subscription"
for c in billing fraud search audit metrics; do
    grep -Eq " push +$c .*MillisBehindLatest 0;" "$tmp/push.trace" ||
        fail "push: no push to $c at the tip (MillisBehindLatest 0)"
done
# subscriptions_match NAME: per consumer, the SubscribeToShard lines are the report's
# subscriptions; per consumer and shard the sessions count 1, 2, 3, ..., the first at
# the consumer's start position, each later one after the end of the one before, whose
# pushes it continues (its first sequence number is where the previous pushes stopped).
subscriptions_match() {
    python3 - "$tmp/$1.json" "$tmp/$1.trace" "$1" <<'PY' || failed=$((failed + 1))
import json, re, sys
name = sys.argv[3]
want = {c["name"]: int(c["figures"]["subscriptions"]) for c in json.load(open(sys.argv[1]))["consumers"]
        if "subscriptions" in c.get("figures", {})}
got, last, ended, nxt, bad = {}, {}, {}, {}, []
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split(None, 4)
    if f[1] != "push":
        continue
    key, what = (f[2], f[3]), f[4]
    m = re.match(r"SubscribeToShard: session (\d+) subscribed, StartingPosition (\S+?)[,;].*"
                 r"pushes from sequence number (\d+)", what)
    if m:
        k = int(m.group(1))
        got[f[2]] = got.get(f[2], 0) + 1
        if k != last.get(key, 0) + 1 or (k > 1) != (m.group(2) == "AFTER_SEQUENCE_NUMBER"):
            bad.append(f"session {k} after {last.get(key, 0)}: {ln.strip()}")
        if k > 1 and ended.get(key) != k - 1:
            bad.append(f"session {k} without the end of session {k - 1}: {ln.strip()}")
        if k > 1 and key in nxt and int(m.group(3)) != nxt[key]:
            bad.append(f"session {k} does not continue where the pushes stopped: {ln.strip()}")
        last[key] = k
        continue
    m = re.match(r"subscription session (\d+) ended", what)
    if m:
        ended[key] = int(m.group(1))
        if ended[key] != last.get(key):
            bad.append(f"the end of a session not subscribed: {ln.strip()}")
        continue
    m = re.search(r"sequence numbers? \d+(?: to (\d+))?$", what) if what.startswith("SubscribeToShardEvent") else None
    if m:
        nxt[key] = int((m.group(1) or what.split()[-1])) + 1
for c, n in want.items():
    if got.get(c, 0) != n:
        bad.append(f"{c}: {got.get(c, 0)} SubscribeToShard lines, the report's subscriptions is {n}")
if not want or not any(k > 1 for k in last.values()):
    bad.append("no subscriptions, or no session after the first")
for b in bad[:6]:
    print(f"FAIL {name}:", b)
sys.exit(1 if bad else 0)
PY
}
subscriptions_match push
# A Flink job's subscriptions are pushed to through its per-shard readers: their lines
# name the job (the flagship's sessionizer), as the `efo` consumers' name themselves.
if ! "$kdsim" run scenarios/acme-clickstream.yaml --duration 11m --json \
    --trace "$tmp/flinkpush.trace" --trace-kinds push --trace-names sessionizer \
    >"$tmp/flinkpush.json" 2>"$tmp/flinkpush.err"; then
    fail "flinkpush: kdsim run failed: $(head -3 "$tmp/flinkpush.err")"
fi
all_match flinkpush "${line}push +sessionizer +shardId-[0-9]{12} (SubscribeToShardEvent: |$efo_sub|$efo_end)" \
    "a push to the sessionizer"
subscriptions_match flinkpush

# lease: the worker whose start-up wait ends first creates the six leases and sleeps
# 60 s (one line, about no shard); the first to find them takes all six, the others
# steal theirs until each holds two; worker-c crashes at 4 min and its leases are taken
# by expiry from it afterwards, never before. A worker's lines name it
# APPLICATION/WORKER; the holder of a stolen lease finds it lost at its next renewal (a
# crashed one never does).
kind_trace lease kcl-worker-crash 8m lease
all_match lease "${line}lease +orders-processor/worker-[abc] +(shardId-[0-9]{12} lease ((taken \((it was free|its owner stopped renewing it)\)|stolen \(to balance the workers' lease counts\))( from orders-processor/worker-[abc])?; [0-9]+ records? processed after its last checkpoint will be delivered again|lost: a (renewal|checkpoint) found another worker's leaseCounter)|- +start-up shard sync: 6 leases created; the worker takes leases after the sync's sleep of 60 s \(shardSyncIntervalMillis\)|- +worker started|- +worker crashed: .*)$" \
    "a lease taken, stolen or lost, the start-up shard sync or a worker's start or crash"
[ "$(grep -c 'start-up shard sync' "$tmp/lease.trace")" = 1 ] ||
    fail "lease: expected one start-up shard sync"
[ "$(grep -c 'lease lost: ' "$tmp/lease.trace")" = "$(grep -c 'lease stolen (' "$tmp/lease.trace")" ] ||
    fail "lease: each stolen lease should be lost once by its holder"
# Each loss follows its theft: same shard, the worker it was stolen from.
bad=$(awk '/lease stolen \([^)]*\) from/ { match($0, /from [^;]*/); stolen[$4] = substr($0, RSTART + 5, RLENGTH - 5) }
    /lease lost: / { if (stolen[$4] != $3) { print $1, $3, $4; exit } delete stolen[$4] }' "$tmp/lease.trace")
[ -z "$bad" ] || fail "lease: a loss that follows no theft of that lease from that worker: $bad"
[ "$(grep -c 'lease taken (it was free);' "$tmp/lease.trace")" = 6 ] ||
    fail "lease: expected the 6 leases taken when free: $(grep -m1 'lease taken' "$tmp/lease.trace")"
grep -q "lease stolen (to balance the workers' lease counts) from orders-processor/worker-" "$tmp/lease.trace" ||
    fail "lease: no lease stolen"
[ "$(grep -c 'lease taken (its owner stopped renewing it) from orders-processor/worker-c;' "$tmp/lease.trace")" = 2 ] ||
    fail "lease: expected worker-c's 2 leases taken by expiry"
early=$(awk '/its owner stopped renewing/ && $1 < 240' "$tmp/lease.trace" | head -1)
[ -z "$early" ] || fail "lease: a lease expired before the crash at 240 s: $early"

# reshard: UpdateShardCount from 2 to 4 shards at 31 min is accepted at once and
# completes after its 5-minute UPDATING period, at 2,160 s: each parent closes, then
# its two children appear, in order.
kind_trace reshard reshard-idle-children 37m reshard
awk 'NR == 1 || $3 == "events"' "$tmp/reshard.trace" >"$tmp/reshard-stream.trace"
all_match reshard-stream "${line}reshard +events +(shardId-00000000000[2-5] new shard \[[0-9]+, [0-9]+\], parent shardId-00000000000[01]|shardId-00000000000[01] closed: no more writes; its records stay readable until they expire|- +UpdateShardCount to 4 \(scenario\): accepted; the stream is UPDATING for 5 min, writes still go to the old shards)$" \
    "a new shard, a closed one or the request"
[ "$(awk 'NR > 1 { print $1, $4, $5 }' "$tmp/reshard-stream.trace" | tr '\n' '|')" = "1860.000000 - UpdateShardCount|2160.000000 shardId-000000000000 closed:|2160.000000 shardId-000000000002 new|2160.000000 shardId-000000000003 new|2160.000000 shardId-000000000001 closed:|2160.000000 shardId-000000000004 new|2160.000000 shardId-000000000005 new|" ] ||
    fail "reshard: not the request at 1860 s, then each parent closed before its children: $(awk 'NR > 1 { print $1, $4, $5 }' "$tmp/reshard-stream.trace" | tr '\n' '|')"
# The even quarters of [0, 2^128 - 1], the first two from shard 0's half, the others
# from shard 1's.
want="2160.000000 shardId-000000000002 [0, 85070591730234615865843651857942052863], parent shardId-000000000000
2160.000000 shardId-000000000003 [85070591730234615865843651857942052864, 170141183460469231731687303715884105727], parent shardId-000000000000
2160.000000 shardId-000000000004 [170141183460469231731687303715884105728, 255211775190703847597530955573826158591], parent shardId-000000000001
2160.000000 shardId-000000000005 [255211775190703847597530955573826158592, 340282366920938463463374607431768211455], parent shardId-000000000001"
got=$(grep ' new shard ' "$tmp/reshard.trace" | awk '{ print $1, $4, $7, $8, $9, $10 }')
[ "$got" = "$want" ] || fail "reshard: expected the 4 children at 2160 s, got: $got"
# Readers start the children once the parents are read to their end: the live reader
# within a parent poll (10 s), the nightly job, 30 minutes behind, only after about
# 15 minutes; one line per child and reader, as many as the report's children_started.
if ! "$kdsim" run scenarios/reshard-idle-children.yaml --duration 52m --json \
    --trace "$tmp/children.trace" --trace-kinds reshard >"$tmp/children.json" 2>"$tmp/children.err"; then
    fail "children: kdsim run failed: $(head -3 "$tmp/children.err")"
fi
starts=$(grep -E ' reshard +(live|nightly-job) ' "$tmp/children.trace")
bad=$(echo "$starts" | grep -Ev "${line}reshard +(live|nightly-job) +shardId-00000000000[2-5] starts reading this child shard, its parents read to their end, after waiting [0-9]+\.[0-9]{3} s$" | head -1)
[ -z "$bad" ] || fail "children: a malformed child start: $bad"
[ "$(echo "$starts" | awk '$3 == "live" && $(NF - 1) + 0 < 11' | wc -l)" = 4 ] ||
    fail "children: the live reader did not start the 4 children within 11 s"
[ "$(echo "$starts" | awk '$3 == "nightly-job" && $(NF - 1) + 0 > 800' | wc -l)" = 4 ] ||
    fail "children: the nightly job did not wait over 800 s for each of the 4 children"
[ "$(echo "$starts" | wc -l)" = "$(python3 -c "import json,sys; print(sum(c['children_started'] for c in json.load(open(sys.argv[1]))['consumers']))" "$tmp/children.json")" ] ||
    fail "children: the child starts traced are not the report's children_started"

# On-demand scaling (on-demand-burst): the service's decisions and actions are traced,
# as many as the report's stream.capacity counts (scale-ups, hot-shard splits,
# scale-downs), and each hot-shard split or growth comes its scale delay (900 s) after
# the line that decided it.
if ! "$kdsim" run scenarios/on-demand-burst.yaml --json --trace "$tmp/od.trace" \
    --trace-kinds reshard >"$tmp/od.json" 2>"$tmp/od.err"; then
    fail "od: kdsim run failed: $(head -3 "$tmp/od.err")"
fi
python3 - "$tmp/od.json" "$tmp/od.trace" <<'PY' || failed=$((failed + 1))
import json, re, sys
cap = json.load(open(sys.argv[1]))["stream"]["capacity"]
lines = [ln.split(None, 4) for ln in open(sys.argv[2]).readlines()[1:]]
od = [(float(f[0]), f[3], f[4].strip()) for f in lines if f[4].startswith("on-demand scaling: ")]
def count(prefix):
    return sum(1 for t, sh, w in od if w.startswith("on-demand scaling: " + prefix))
bad = []
for prefix, fig in (("grows from", "on_demand_scale_ups"), ("splits this hot shard", "on_demand_hot_shard_splits"),
                    ("capacity in excess", "on_demand_scale_downs")):
    if count(prefix) != cap[fig]:
        bad.append(f"{count(prefix)} lines '{prefix}', the report's {fig} is {cap[fig]}")
if cap["on_demand_scale_ups"] == 0 or cap["on_demand_hot_shard_splits"] == 0:
    bad.append("no growth or no hot-shard split in on-demand-burst")
decided = {}
for t, sh, w in od:
    if "a split is due in 15 min" in w or "growth is due in 15 min" in w:
        decided.setdefault(sh, []).append(t)
    elif w.startswith("on-demand scaling: splits this hot shard") or w.startswith("on-demand scaling: grows from"):
        if not decided.get(sh) or abs(t - decided[sh].pop(0) - 900) > 1e-6:
            bad.append(f"an action at {t} s on {sh} not 900 s after its decision")
for b in bad:
    print("FAIL od:", b)
sys.exit(1 if bad else 0)
PY

# A refused request says why, as the report's stream.reshards does.
"$kdsim" run scenarios/reshard-idle-children.yaml --duration 32m --trace "$tmp/refused.trace" \
    --trace-kinds reshard --set 'stream.resharding.events[0].update_shard_count=9' >/dev/null 2>&1
[ "$(tail -n +2 "$tmp/refused.trace" | sed -E 's/^ *([0-9.]+) +reshard +events +- +/\1 /')" = "1860.000000 UpdateShardCount to 9 (scenario): refused, InvalidArgumentException: target 9 is not allowed from 2 open shards: UpdateShardCount goes at most to double and at least to half, and must change the count" ] ||
    fail "reshard: the refused UpdateShardCount to 9 is not traced with its error: $(tail -n +2 "$tmp/refused.trace")"

# invoke: Lambda invokes batches from every shard; the poison record written at 10 min
# makes its shard's batch fail, and the batch is invoked again (retry) on that shard
# only, from 600 s on.
# The Lambda's lines: its GetRecords calls (kind get) and its invocations, their
# outcomes and what becomes of a failed batch (kind invoke).
refresh='(; its shard iterator had expired \(unused for over 5 min\): a new one first, one more round trip)?'
lambda_get='GetRecords: ([0-9]+ records?, [0-9]+ B( \([1-9][0-9]* expired unread before them\))?, in the buffer at \+[0-9]+ ms'"$refresh$seq"'|throttled \(ReadProvisionedThroughputExceeded: [^)]+\), next try in [0-9]+ ms'"$refresh)"
lambda_invoke='Invoke: batch of [1-9][0-9]* records?(( \((retry [1-9][0-9]*|again)\))?, IteratorAge [0-9]+ ms| (succeeded|failed \(function error\)|timed out) after [0-9]+ ms)|bisected into [1-9][0-9]* and [1-9][0-9]* records?, queued again \(no retry used\)|bisected at the failed record: [1-9][0-9]* records? queued again \(no retry used\)|batch item failures: the first [1-9][0-9]* records? processed, [1-9][0-9]* from the first failed one left|[1-9][0-9]* records? queued for retry [1-9][0-9]* (of [0-9]+|\(retries until the records expire\))|given up \([^)]*\): [1-9][0-9]* records? (sent to the on-failure destination \((SQS|SNS|S3)\)|discarded \(no on-failure destination\))|[1-9][0-9]* buffered records? expired from the stream before (it was|they were) invoked: lost|Invoke: throttled \(TooManyRequestsException: the function already runs [1-9][0-9]* invocations?, its concurrency limit\); the (retry of the )?batch of [1-9][0-9]* records? tries again in [0-9.]+ m?s'
kind_trace invoke lambda-poison-record 11m invoke
all_match invoke "${line}invoke +order-processor +shardId-[0-9]{12} ($lambda_invoke)$" \
    "a Lambda invocation or what became of one"
[ "$(grep -E 'Invoke: .*records, IteratorAge' "$tmp/invoke.trace" | awk '{ print $4 }' | sort -u | wc -l)" = 4 ] ||
    fail "invoke: expected invocations on all 4 shards"
retry=$(grep -E '\(retry [1-9][0-9]*\), IteratorAge' "$tmp/invoke.trace")
[ -n "$retry" ] || fail "invoke: no retry after the poison record"
[ "$(echo "$retry" | awk '{ print $4 }' | sort -u | wc -l)" = 1 ] ||
    fail "invoke: retries on more than the poison record's shard"
early=$(echo "$retry" | awk '$1 < 600' | head -1)
[ -z "$early" ] || fail "invoke: a retry before the poison record: $early"

# s3: s3-size (5 MiB or 300 s) writes objects of exactly 5,120 records of 1 KiB,
# closed by size; s3-interval (128 MiB or 60 s) one object a minute, closed by the
# interval: 9 by 600 s (the first at about 60.5 s).
kind_trace s3 firehose-buffering 10m s3
all_match s3 "${line}s3 +s3-(size|interval) +- +PutObject: [1-9][0-9]* records?, [1-9][0-9]* B \(closed by (size|interval)\) written, oldest record [0-9]+ ms old$" \
    "a Firehose object written"
bad=$(grep ' s3-size ' "$tmp/s3.trace" | grep -v 'PutObject: 5120 records, 5242880 B (closed by size)' | head -1)
[ -z "$bad" ] || fail "s3: an s3-size object that is not 5 MiB closed by size: $bad"
grep -q ' s3-size ' "$tmp/s3.trace" || fail "s3: no s3-size object"
[ "$(grep ' s3-interval ' "$tmp/s3.trace" | grep -c '(closed by interval)')" = 9 ] ||
    fail "s3: expected 9 s3-interval objects closed by the interval in 10 min"

# An outage from 120 s for 150 s: each object of s3-interval closed in it is refused at
# once and skips the retries the outage will refuse, saying how many; its next retry
# comes in the first 5 s after the outage, and it is written then.
if ! "$kdsim" run scenarios/firehose-buffering.yaml --duration 6m --trace "$tmp/s3out.trace" \
    --set 'consumers[1].delivery.outage.at=2m' --set 'consumers[1].delivery.outage.for=150s' \
    --trace-kinds s3 >/dev/null 2>"$tmp/s3out.err"; then
    fail "s3 outage: kdsim run failed: $(head -3 "$tmp/s3out.err")"
fi
refused=$(grep ' s3-interval ' "$tmp/s3out.trace" | grep -v ' written, ')
[ "$(echo "$refused" | grep -c .)" = 3 ] || fail "s3 outage: expected 3 refusals: $refused"
bad=$(echo "$refused" | awk '{
    n = split($0, w, " "); t = $1
    if ($0 !~ /failed; the outage refuses the next [0-9]+ retries, one every 5 s; retry in [0-9]+ s$/) {
        print; next }
    skip = w[n - 9]; after = w[n - 1]
    if (t < 120 || t >= 270 || after != 5 * (skip + 1) || t + after < 270 || t + after >= 275)
        print }')
[ -z "$bad" ] || fail "s3 outage: a refusal that does not skip to just after the outage: $bad"
[ "$(awk '$3 == "s3-interval" && / written, / && $1 >= 270 && $1 < 280' "$tmp/s3out.trace" |
    grep -c .)" = 3 ] || fail "s3 outage: the 3 refused objects are not written just after it"

# Firehose's GetRecords lines, as every reader's, give the records' sequence numbers and
# the iterator age, and say when they reach the buffer (or, with full_backup, the backup
# bucket, from a reader of its own); per reader and shard the sequence numbers follow
# each other from 0, and the lines are the report's GetRecords calls.
if ! "$kdsim" run scenarios/firehose-buffering.yaml --duration 3m --json --trace "$tmp/fhget.trace" \
    --trace-kinds get --set 'consumers[0].full_backup=true' >"$tmp/fhget.json" 2>"$tmp/fhget.err"; then
    fail "fhget: kdsim run failed: $(head -3 "$tmp/fhget.err")"
fi
all_match fhget "${line}get +s3-(size|interval) +shardId-[0-9]{12} GetRecords( \(backup\))?: ([0-9]+ records?, [0-9]+ B( \([1-9][0-9]* expired unread before them\))?, iterator age [0-9]+ ms, (into the buffer|to the backup bucket) at \+[0-9]+ ms$seq|throttled \(ReadProvisionedThroughputExceeded: [^)]+\), next try in [0-9]+ ms)$" \
    "a Firehose GetRecords call"
python3 - "$tmp/fhget.json" "$tmp/fhget.trace" <<'PY' || failed=$((failed + 1))
import json, re, sys
calls = {c["name"]: c["getrecords_calls"] for c in json.load(open(sys.argv[1]))["consumers"]}
got, nxt, bad, backup = {}, {}, [], 0
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.rstrip("\n").split(None, 4)
    got[f[2]] = got.get(f[2], 0) + 1
    m = re.match(r"GetRecords( \(backup\))?: (\d+) records?.*?(?:; sequence numbers? (\d+)(?: to (\d+))?)?$", f[4])
    if not m or not m.group(3):
        continue
    backup += bool(m.group(1))
    key = (f[2], f[3], bool(m.group(1)))
    lo, hi = int(m.group(3)[14:]), int((m.group(4) or m.group(3))[14:])
    if hi - lo + 1 != int(m.group(2)) or lo != nxt.get(key, 0):
        bad.append(f"{key}: records {lo} to {hi}, expected from {nxt.get(key, 0)}: {ln.strip()}")
    nxt[key] = hi + 1
for name, n in calls.items():
    if got.get(name, 0) != n:
        bad.append(f"{name}: {got.get(name, 0)} get lines, the report's getrecords_calls is {n}")
if not backup:
    bad.append("no GetRecords line of the backup reader")
for b in bad[:6]:
    print("FAIL fhget:", b)
sys.exit(1 if bad else 0)
PY

# checkpoint and failure: both Flink jobs checkpoint every 60 s; sessionizer fails at
# 450 s, 30 s after the checkpoint of 420 s, and restarts from it after its 20 s
# restart_delay (the same failure and delay apply to sessionizer-efo).
kind_trace flink flink-failure 8m checkpoint,failure
all_match flink "${line}(checkpoint +sessionizer(-efo)? +- +checkpoint [0-9]+ \(barrier at [0-9]+\.000 s\) completed|failure +sessionizer(-efo)? +- +(job failed: [0-9]+ records? processed since the checkpoint of [0-9.]+ s will be replayed; restart in [0-9]+ s|job restarted from the checkpoint of [0-9.]+ s))$" \
    "a Flink checkpoint or failure"
bad=$(awk '$2 == "checkpoint"' "$tmp/flink.trace" |
    sed -E 's/^ *([0-9.]+) .* checkpoint ([0-9]+) \(barrier at ([0-9.]+) s\).*/\1 \2 \3/' |
    awk '$1 != $2 * 60 || $3 != $2 * 60' | head -1)
[ -z "$bad" ] || fail "flink: a checkpoint off the 60 s cadence (time, number, barrier): $bad"
[ "$(awk '$2 == "checkpoint"' "$tmp/flink.trace" | wc -l)" = 16 ] ||
    fail "flink: expected checkpoints 1 to 8 of both jobs in 8 min"
grep -Eq '^ +450\.000000  failure +sessionizer +- +job failed: [1-9][0-9]* records? processed since the checkpoint of 420\.000 s will be replayed; restart in 20 s$' "$tmp/flink.trace" ||
    fail "flink: no failure of sessionizer at 450 s back to the checkpoint of 420 s"
grep -Eq '^ +470\.000000  failure +sessionizer +- +job restarted from the checkpoint of 420\.000 s$' "$tmp/flink.trace" ||
    fail "flink: sessionizer did not restart at 470 s from the checkpoint of 420 s"

# put before push: a PutRecords line comes before the enhanced fan-out pushes its
# append causes (same time, same shard); a push never precedes the put that fed it.
kind_trace order acme-clickstream 5s put,push
order=$(awk 'NR > 1 { k = $1 " " $4 } NR > 1 && $2 == "put" && !(k in put) { put[k] = NR }
    NR > 1 && $2 == "push" { push[k] = push[k] ? push[k] : NR }
    END { n = 0; for (k in push) if (k in put) { n++; if (push[k] < put[k]) { print "bad " k; exit } }
          print "pairs " n }' "$tmp/order.trace")
case $order in
"pairs "[1-9]*) ;;
*) fail "order: a push before the PutRecords that fed it, or no put and push at one time and shard: $order" ;;
esac

# A producer's retries and give-ups: a line for the request, shard -, each time failed
# records are resent or given up; per producer, the records of those lines sum to the
# report's records_retried and records_given_up (hot-key: the fleet retries up to 3
# attempts, device-42 never retries).
if ! "$kdsim" run scenarios/hot-key.yaml --duration 60s --json --trace "$tmp/retry.trace" \
    --trace-kinds put >"$tmp/retry.json" 2>"$tmp/retry.err"; then
    fail "retry: kdsim run failed: $(head -3 "$tmp/retry.err")"
fi
bad=$(grep -E "$line"'put +[a-z0-9-]+ +- ' "$tmp/retry.trace" |
    grep -Ev "${line}put +(fleet|device-42) +- +PutRecords: ([1-9][0-9]* records? resent in [0-9]+ ms \(attempt [2-9] of 3\)|[1-9][0-9]* records? given up after attempt (1 of 1|3 of 3))$" | head -1)
[ -z "$bad" ] || fail "retry: a malformed retry or give-up line: $bad"
python3 - "$tmp/retry.json" "$tmp/retry.trace" <<'PY' || failed=$((failed + 1))
import json, sys
rep = {p["name"]: p for p in json.load(open(sys.argv[1]))["producers"]}
got = {}
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split()
    if f[1] == "put" and f[3] == "-":
        key = (f[2], {"resent": "records_retried", "given": "records_given_up"}[f[7]])
        got[key] = got.get(key, 0) + int(f[5])
bad = []
for name, p in rep.items():
    for fig in ("records_retried", "records_given_up"):
        if got.get((name, fig), 0) != p[fig]:
            bad.append(f"{name} {fig}: trace {got.get((name, fig), 0)}, report {p[fig]}")
if not got.get(("fleet", "records_retried")) or not got.get(("device-42", "records_given_up")):
    bad.append("no retries of the fleet or no give-ups of device-42 in 60 s")
for b in bad:
    print("FAIL retry:", b)
sys.exit(1 if bad else 0)
PY

# Lost replies and records too large: a resend after a lost reply stores duplicates,
# and its put line says how many of the records stored were (fleet, with 5 % of its
# replies lost: their sum is duplicates_written); a record larger than the stream's
# record size limit is given up before it is sent, with a line of its own, so that the
# give-up lines add up to records_given_up, too-large ones included (records_too_large).
if ! "$kdsim" run scenarios/hot-key.yaml --duration 60s --json --trace "$tmp/dups.trace" \
    --trace-kinds put --set 'producers[1].timeouts.rate=0.05' >"$tmp/dups.json" 2>"$tmp/dups.err"; then
    fail "dups: kdsim run failed: $(head -3 "$tmp/dups.err")"
fi
cat >"$tmp/big.yaml" <<'YAML'
duration: 20s
seed: 3
stream: {name: s, shards: 2}
producers:
  - {name: app, rate: 20 records/s, record_size: {dist: exp, mean: 600 KiB}, keys: {kind: random}}
consumers: [{name: c, kind: polling}]
YAML
if ! "$kdsim" run "$tmp/big.yaml" --json --trace "$tmp/big.trace" --trace-kinds put \
    >"$tmp/big.json" 2>"$tmp/big.err"; then
    fail "big: kdsim run failed: $(head -3 "$tmp/big.err")"
fi
python3 - "$tmp" <<'PY' || failed=$((failed + 1))
import json, re, sys
tmp, bad = sys.argv[1], []
def producers(name):
    return {p["name"]: p for p in json.load(open(f"{tmp}/{name}.json"))["producers"]}
def lines(name):
    return [ln.rstrip("\n").split(None, 4) for ln in open(f"{tmp}/{name}.trace").readlines()[1:]]
dups = {}
for f in lines("dups"):
    m = re.search(r"-> (\d+) stored \((\d+) duplicates? of records already stored\)", f[4])
    if m:
        if int(m.group(2)) > int(m.group(1)):
            bad.append("more duplicates than records stored: " + " ".join(f))
        dups[f[2]] = dups.get(f[2], 0) + int(m.group(2))
for name, p in producers("dups").items():
    if dups.get(name, 0) != p["duplicates_written"]:
        bad.append(f"dups: {name}: {dups.get(name, 0)} duplicates in the put lines, "
                   f"the report's duplicates_written is {p['duplicates_written']}")
if not dups.get("fleet"):
    bad.append("dups: no duplicate stored with 5 % of the fleet's replies lost")
given, too = 0, 0
pat = re.compile(r"PutRecords: (\d+) records? given up (before sending: larger than the stream's "
                 r"record size limit of 1 MiB \(ValidationException, no retry\)|after attempt)")
for f in lines("big"):
    m = pat.match(f[4])
    if f[3] == "-" and " given up " in f[4] and not m:
        bad.append("big: a malformed give-up line: " + f[4])
    if m:
        given += int(m.group(1))
        too += int(m.group(1)) if m.group(2).startswith("before") else 0
p = producers("big")["app"]
if given != p["records_given_up"] or too != p["records_too_large"] or too == 0:
    bad.append(f"big: {given} records given up ({too} too large) in the trace, the report's "
               f"records_given_up {p['records_given_up']} (records_too_large {p['records_too_large']})")
for b in bad[:6]:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY

# A reader back after more than the retention period: its GetRecords lines say how many
# records expired before it reached them, and they add up to the report's
# records_expired_unread (stalled-reader-retention: about 360,000 for `stalled`).
if ! "$kdsim" run scenarios/stalled-reader-retention.yaml --json --trace "$tmp/stalled.trace" \
    --trace-kinds get >"$tmp/stalled.json" 2>"$tmp/stalled.err"; then
    fail "stalled: kdsim run failed: $(head -3 "$tmp/stalled.err")"
fi
for c in stalled healthy; do
    lost=$(grep -E " get +$c " "$tmp/stalled.trace" | grep -E 'expired unread' |
        sed -E 's/.* \(([0-9]+) expired unread before them\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
    [ "$lost" = "$(jf "$tmp/stalled.json" "[x for x in json.load(open(sys.argv[1]))['consumers'] if x['name'] == '$c'][0]['records_expired_unread']")" ] ||
        fail "stalled: $c's GetRecords lines tell of $lost records expired unread, not the report's"
done
[ "$(grep -c 'expired unread before them' "$tmp/stalled.trace")" -gt 0 ] ||
    fail "stalled: no GetRecords line tells of records expired unread"

# A KCL application and a Flink job that come back after the retention period: their
# GetRecords lines say how many records expired before the application processed them
# (counted by the high-water mark of what it ever processed, not records it had
# processed before its last checkpoint), and add up to records_expired_unread. The KCL
# worker crashes at 10 min and restarts 25 h later; the Flink job, slower than the
# stream at first, fails at 30 min, 600 records behind on each shard, and restarts 1 day
# later (restart_delay), when those 600 records have expired.
cat >"$tmp/kclexp.yaml" <<'YAML'
seed: 5
duration: 1530m
stream: {name: orders, shards: 2}
producers:
  - {name: app, rate: 4 records/s, record_size: 1 KiB, keys: {kind: uniform, count: 1000}, batch: {linger: 1s}}
consumers:
  - name: proc
    kind: kcl
    retrieval: polling
    start_position: trim_horizon
    checkpoint: {every_records: 100}
    workers:
      - {name: w, events: [{at: 10m, action: crash, restart_after: 25h}]}
YAML
cat >"$tmp/flinkexp.yaml" <<'YAML'
seed: 5
duration: 1500m
stream: {name: orders, shards: 2}
producers:
  - name: app
    rate: {profile: steps, initial: 4 records/s, steps: [{at: 30m, rate: 0.02 records/s}]}
    record_size: 1 KiB
    keys: {kind: uniform, count: 1000}
consumers:
  - name: job
    kind: flink
    retrieval: polling
    start_position: trim_horizon
    max_records: 100
    processing: {per_batch: 2ms, per_record: 600ms}
    checkpoint_interval: 60s
    failures: [30m]
    restart_delay: 1d
YAML
for n in kclexp flinkexp; do
    if ! "$kdsim" run "$tmp/$n.yaml" --json --trace "$tmp/$n.trace" --trace-kinds get,lease \
        >"$tmp/$n.json" 2>"$tmp/$n.err"; then
        fail "$n: kdsim run failed: $(head -3 "$tmp/$n.err")"
        continue
    fi
    lost=$(grep -E "${line}get +(proc/w|job) +shardId-[0-9]{12} GetRecords: [0-9]+ records?(, [0-9]+ B)? \([1-9][0-9]* expired unread before them\)" "$tmp/$n.trace" |
        sed -E 's/.* \(([0-9]+) expired unread before them\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
    want=$(jf "$tmp/$n.json" "c['records_expired_unread']")
    [ "$lost" -gt 0 ] && [ "$lost" = "$want" ] ||
        fail "$n: the GetRecords lines tell of $lost records expired unread, the report's records_expired_unread is $want"
done
# The KCL worker back after 25 h takes its two leases: what it processed after its last
# checkpoints has expired meanwhile, so the take lines promise no replay (and none
# comes: the moves' duplicates are 0), though replay_expected counts it by definition.
n_none=$(grep -Ec "${line}lease +proc/w +shardId-[0-9]{12} lease .* from proc/w \(before its restart\); of the [1-9][0-9]* records? processed after its last checkpoint, none will be delivered again: (it has|they have) expired$" "$tmp/kclexp.trace")
[ "$n_none" = 2 ] || fail "kclexp: expected 2 take lines with the replay expired, got $n_none"
python3 - "$tmp/kclexp.json" <<'PY' || fail "kclexp: the moves after the restart should replay nothing"
import json, sys
c = json.load(open(sys.argv[1]))["consumers"][0]
late = [m for m in c["lease_move_log"] if m["t_s"] > 90000]
assert len(late) == 2 and all(m["replay_expected"] > 0 and m["duplicates"] == 0 for m in late), late
PY

# Lambda, read by polling: every GetRecords call has a get line, every invocation a
# start line and, once it ends, an outcome line; what happens to a failed batch
# (bisected, queued for a retry, given up) has a line each. Their counts are the
# report's figures, from the same run.
if ! "$kdsim" run scenarios/lambda-poison-record-bisect.yaml --duration 12m --json \
    --trace "$tmp/lam.trace" --trace-kinds invoke,get >"$tmp/lam.json" 2>"$tmp/lam.err"; then
    fail "lam: kdsim run failed: $(head -3 "$tmp/lam.err")"
fi
all_match lam "${line}(get|invoke) +order-processor +shardId-[0-9]{12} ($lambda_get|$lambda_invoke)$" \
    "a Lambda GetRecords call or invocation"
count() { grep -Ec "$1" "$tmp/lam.trace"; }
[ "$(count ' get .* GetRecords: ')" = "$(jf "$tmp/lam.json" "c['getrecords_calls']")" ] ||
    fail "lam: $(count ' get ') get lines, $(jf "$tmp/lam.json" "c['getrecords_calls']") GetRecords calls in the report"
[ "$(count 'GetRecords: throttled')" = "$(jf "$tmp/lam.json" "c['read_throttled_calls']")" ] ||
    fail "lam: throttled get lines differ from read_throttled_calls"
[ "$(count 'Invoke: .*IteratorAge')" = "$(jf "$tmp/lam.json" "c['figures']['invocations']")" ] ||
    fail "lam: $(count 'Invoke: .*IteratorAge') invocation lines, $(jf "$tmp/lam.json" "c['figures']['invocations']") invocations in the report"
[ "$(count 'Invoke: .*(failed \(function error\)|timed out) after')" = "$(jf "$tmp/lam.json" "c['figures']['function_errors']")" ] ||
    fail "lam: failed invocation lines differ from function_errors"
[ "$(count 'bisected')" = "$(jf "$tmp/lam.json" "c['figures']['batches_bisected']")" ] ||
    fail "lam: bisect lines differ from batches_bisected"
[ "$(count '\(retry [1-9][0-9]*\), IteratorAge')" = "$(jf "$tmp/lam.json" "c['figures']['retries']")" ] ||
    fail "lam: invocations marked as retries differ from the report's retries"
grep -q '(again), IteratorAge' "$tmp/lam.trace" || fail "lam: no bisected half invoked again"
n_ends=$(count 'Invoke: .* after [0-9]+ ms$')
n_starts=$(count 'Invoke: .*IteratorAge')
[ "$n_ends" -le "$n_starts" ] && [ "$n_ends" -ge $((n_starts - 4)) ] ||
    fail "lam: $n_ends invocations ended of $n_starts started (one at most per shard in flight)"
given=$(grep -E 'given up \(' "$tmp/lam.trace" | sed -E 's/.*: ([0-9]+) records? .*/\1/' | awk '{ s += $1 } END { print s + 0 }')
[ "$given" = "$(jf "$tmp/lam.json" "c['figures']['records_to_failure_destination'] + c['figures']['records_discarded']")" ] ||
    fail "lam: $given records given up in the trace, not the report's"
[ "$given" -ge 1 ] || fail "lam: the poison record was not given up"
# The poison record's story, in order: the batch fails, is bisected down to the record,
# which is retried 3 times and then sent to SQS.
story=$(grep -E 'failed \(function error\)|bisected|queued for retry|given up' "$tmp/lam.trace" |
    sed -E 's/^ *[0-9.]+ +invoke +order-processor +shardId-[0-9]+ //; s/Invoke: batch of [0-9]+ records? failed.*/failed/; s/bisected into.*/bisected/' |
    tr '\n' '|')
want='failed|bisected|failed|bisected|failed|1 record queued for retry 1 of 3|failed|1 record queued for retry 2 of 3|failed|1 record queued for retry 3 of 3|failed|given up (MaximumRetryAttempts spent): 1 record sent to the on-failure destination (SQS)|'
[ "$story" = "$want" ] || fail "lam: the poison record's story is: $story"

# Reading through enhanced fan-out, each new reader of a shard subscribes again from its
# checkpoint: a KCL lease's new owner (a steal, a crashed worker's lease taken), a Flink
# job's sources after its restart. Nothing is pushed on the shard between the new
# SubscribeToShard and its subscription, which comes the stated round trip later and
# starts from the new reader's checkpoint.
"$kdsim" run scenarios/kcl-worker-crash.yaml --set consumers[0].retrieval=efo --duration 5m \
    --json --trace "$tmp/kefo.trace" --trace-kinds push >/dev/null 2>"$tmp/kefo.err" ||
    fail "kefo: kdsim run failed: $(head -3 "$tmp/kefo.err")"
"$kdsim" run scenarios/flink-failure.yaml --json --trace "$tmp/fefo.trace" \
    --trace-names sessionizer-efo --trace-kinds push >"$tmp/fefo.json" 2>"$tmp/fefo.err" ||
    fail "fefo: kdsim run failed: $(head -3 "$tmp/fefo.err")"
python3 - "$tmp/kefo.trace" "a lease's new owner" 3 "$tmp/fefo.trace" "the job restarted" 2 \
    <<'PY' || failed=$((failed + 1))
import re, sys
bad = []
for path, why, least in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    waiting = {}  # shard -> (time of the new SubscribeToShard, its round trip in ms)
    n = 0
    for ln in open(path).readlines()[1:]:
        f = ln.split(None, 4)
        t, shard, what = float(f[0]), f[3], f[4]
        m = re.match(r"SubscribeToShard again for a new reader of the shard \((.*)\); session "
                     r"\d+ ends, the new one subscribed (\d+) ms later$", what)
        if m:
            if m.group(1) != why:
                bad.append(f"{path}: {what.strip()}")
            waiting[shard] = (t, int(m.group(2)))
            n += 1
        elif shard in waiting and what.startswith("SubscribeToShardEvent"):
            bad.append(f"{path}: {shard} pushed at {t} before its new subscription")
        elif shard in waiting and what.startswith("SubscribeToShard: session"):
            t0, rtt = waiting.pop(shard)
            if "AFTER_SEQUENCE_NUMBER of the new reader's checkpoint" not in what:
                bad.append(f"{path}: {shard} at {t}: {what.strip()}")
            if abs((t - t0) * 1000 - rtt) > 1:
                bad.append(f"{path}: {shard} subscribed {(t - t0) * 1000:.0f} ms after, not {rtt}")
    if n < int(least):
        bad.append(f"{path}: {n} new subscriptions for a new reader ({why}), fewer than {least}")
for b in bad[:8]:
    print("FAIL efo resubscribe:", b)
sys.exit(1 if bad else 0)
PY
python3 - "$tmp/fefo.json" <<'PY' || fail "fefo: the EFO job's subscriptions are not its sessions' and its 2 shards' new ones"
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["consumers"] if c["name"] == "sessionizer-efo"][0]
# 2 shards: sessions at 0 and 300 s, then at the restart and every 5 minutes after it
assert c["figures"]["subscriptions"] == 10, c["figures"]
PY

# A KCL application's workers trace their GetRecords calls: one line a call, naming
# the worker, as many as the report counts.
if ! "$kdsim" run scenarios/kcl-worker-crash.yaml --duration 5m --json \
    --trace "$tmp/kclget.trace" --trace-kinds get >"$tmp/kclget.json" 2>"$tmp/kclget.err"; then
    fail "kclget: kdsim run failed: $(head -3 "$tmp/kclget.err")"
fi
all_match kclget "${line}get +orders-processor/worker-[abc] +shardId-[0-9]{12} GetRecords: ([1-9][0-9]* records?, [0-9]+ B( \([1-9][0-9]* expired unread before them\))?, iterator age [0-9]+ ms, to the record processor at \+[0-9]+ ms$refresh; sequence numbers? 49[0-9]{54}( to 49[0-9]{54})?|0 records; next call in [0-9]+ ms$refresh|0 records, SHARD_END$refresh|throttled \(ReadProvisionedThroughputExceeded: [^)]+\), next try in [0-9]+ ms$refresh)$" \
    "a KCL worker's GetRecords call"
[ "$(($(wc -l <"$tmp/kclget.trace") - 1))" = "$(jf "$tmp/kclget.json" "c['getrecords_calls']")" ] ||
    fail "kclget: the get lines are not the report's GetRecords calls"


# Two applications with workers of the same names (kcl-small-lease-table: w1 to w3 in
# both): the holder's side of the lease table's churn, per APPLICATION/WORKER, is the
# report's figures of that application's worker: renewals throttled, leases given up
# on the worker's own clock, leases lost. --trace-names picks an application or a worker.
if ! "$kdsim" run scenarios/kcl-small-lease-table.yaml --duration 10m --json \
    --trace "$tmp/churn.trace" --trace-kinds lease >"$tmp/churn.json" 2>"$tmp/churn.err"; then
    fail "churn: kdsim run failed: $(head -3 "$tmp/churn.err")"
fi
python3 - "$tmp/churn.json" "$tmp/churn.trace" <<'PY' || failed=$((failed + 1))
import json, sys
want, got = {}, {}
for c in json.load(open(sys.argv[1]))["consumers"]:
    for w in c["workers"]:
        for fig in ("renewals_throttled", "leases_self_expired", "leases_lost"):
            want[(c["name"] + "/" + w["name"], fig)] = w[fig]
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split(None, 4)
    what = f[4]
    fig = ("renewals_throttled" if what.startswith("lease renewal throttled by the lease table")
           else "leases_self_expired" if what.startswith("lease given up: not renewed for failoverTimeMillis")
           else "leases_lost" if what.startswith("lease lost: ") else None)
    if fig:
        got[(f[2], fig)] = got.get((f[2], fig), 0) + 1
bad = [f"{k[0]} {k[1]}: trace {got.get(k, 0)}, report {v}" for k, v in sorted(want.items())
       if got.get(k, 0) != v]
bad += [f"{k[0]}: lines for a worker the report does not have" for k in got if k not in want]
if not any(v for k, v in want.items() if k[1] == "renewals_throttled"):
    bad.append("no renewal throttled in 10 min of a small lease table")
for b in bad:
    print("FAIL churn:", b)
sys.exit(1 if bad else 0)
PY
# Every throttled lease-table request has its line. The writes: a checkpoint (per worker
# its checkpoints_throttled), a take or steal with how many of its tries were throttled,
# and a KCL 3.x leader's assignment or a handoff's release (kcl-small-lease-table). The
# reads and creates (a starved table, read by a 2.x taker and a 3.x leader, the stream
# doubled at 10 minutes): a Scan (a take pass, an election, an audit, an assignment run, a
# start-up check), a GetItem (a lease's initialization, a discovered lease, a child's
# read of its parent's), a Query (a discovery) and a PutItem (the start-up sync's and the
# audits' creates, which count them, and a child's at its parent's SHARD_END); and a 3.x
# renewer's re-read of a lease whose renewal a handoff refused (kcl3-second-worker with
# its 3.x application's table starved). Per application the lines add up to the
# report's lease_table.throttled.
if ! "$kdsim" run tests/scenarios/trace-kcl-starved-table.yaml --json --trace "$tmp/starved.trace" \
    --trace-kinds lease >"$tmp/starved.json" 2>"$tmp/starved.err"; then
    fail "starved: kdsim run failed: $(head -3 "$tmp/starved.err")"
fi
if ! "$kdsim" run scenarios/kcl3-second-worker.yaml --json --trace "$tmp/kcl3.trace" \
    --trace-kinds lease --set 'consumers[1].lease_table.billing=provisioned' \
    --set 'consumers[1].lease_table.read_capacity=1' --set 'consumers[1].lease_table.burst=0s' \
    --set 'consumers[1].lease_table.item_size=4 KiB' >"$tmp/kcl3.json" 2>"$tmp/kcl3.err"; then
    fail "kcl3: kdsim run failed: $(head -3 "$tmp/kcl3.err")"
fi
python3 - "$tmp" <<'PY' || failed=$((failed + 1))
import json, re, sys
tmp = sys.argv[1]
# (op, pattern, how many a line counts: 1, or the number the pattern captures)
kinds = [
    ("take", r"lease (?:take|steal) throttled by the lease table (\d+) times? \(\d+ tr(?:y|ies) "
             r"allowed\); (?:the next try took it|not taken in this pass|the next try found "
             r"another worker's leaseCounter)$"),
    ("checkpoint", r"(?:SHARD_END )?checkpoint throttled by the lease table; "),
    ("renew", r"lease (?:renewal|handoff noticed; its renewal as checkpointOwner) throttled "),
    ("scan", r"(?:lease taker|leader election|shard-sync audit|lease assignment): its Scan of the "
             r"lease table throttled; |start-up: its check of the lease table \(a Scan of one "
             r"item\) throttled; "),
    ("get", r"(?:initializing: the read of the lease's checkpoint|lease discovery: the read of "
            r"this new lease|waiting for parents: the read of parent shard \d+'s lease) "
            r"throttled by the lease table; |lease renewal refused \(a handoff began\); the "
            r"re-read of the lease throttled by the lease table: "),
    ("query", r"lease discovery: its Query of the lease table \(the owner index\) throttled; "),
    ("create", r"creating this child's lease at its parent's SHARD_END"),
    ("create", r".*\((\d+) creates? throttled by the lease table: "),
]
def tally(name):
    got = {}
    for ln in open(f"{tmp}/{name}.trace").readlines()[1:]:
        f = ln.split(None, 4)
        for op, rx in kinds:
            m = re.match(rx, f[4])
            if m:
                n = int(m.group(1)) if m.groups() else 1
                for key in ((f[2].split("/")[0], op), (f[2], op)):
                    got[key] = got.get(key, 0) + n
                break
    return got
bad = []
for name, ops in (("churn", ("renew", "take", "checkpoint")),
                  ("starved", ("scan", "get", "create", "query")),
                  ("kcl3", ("scan", "get", "create", "query", "renew", "checkpoint"))):
    got = tally(name)
    for c in json.load(open(f"{tmp}/{name}.json"))["consumers"]:
        thr = c["lease_table"]["throttled"]
        for op in ops:
            if got.get((c["name"], op), 0) != thr.get(op, 0):
                bad.append(f"{name} {c['name']}: {got.get((c['name'], op), 0)} throttled {op} "
                           f"lines, lease_table.throttled.{op} {thr.get(op, 0)}")
        for w in c["workers"]:
            k = (c["name"] + "/" + w["name"], "checkpoint")
            if got.get(k, 0) != w["checkpoints_throttled"]:
                bad.append(f"{name} {k[0]}: {got.get(k, 0)} throttled checkpoints, the "
                           f"report's {w['checkpoints_throttled']}")
    want = {"churn": [("orders-small-table", "take"), ("orders-small-table", "checkpoint")],
            "starved": [(a, op) for a in ("taker", "assigned") for op in ("scan", "get", "create")]
                       + [("assigned", "query")],
            "kcl3": [("orders-3x", "get")]}[name]
    bad += [f"{name}: no throttled {op} line for {a}" for a, op in want if not got.get((a, op))]
if not any("waiting for parents: " in ln for ln in open(f"{tmp}/starved.trace")):
    bad.append("starved: no child's read of its parent's lease throttled")
if not any("the re-read of the lease throttled" in ln for ln in open(f"{tmp}/kcl3.trace")):
    bad.append("kcl3: no renewer's re-read of a handed-over lease throttled")
for b in bad[:8]:
    print("FAIL lease table:", b)
sys.exit(1 if bad else 0)
PY
"$kdsim" run scenarios/kcl-small-lease-table.yaml --duration 2m --json --trace "$tmp/app.trace" \
    --trace-names orders-small-table >/dev/null 2>&1
[ "$(awk 'NR > 1 { print $3 }' "$tmp/app.trace" | sort -u | tr '\n' ' ')" = "orders-small-table/w1 orders-small-table/w2 orders-small-table/w3 " ] ||
    fail "--trace-names orders-small-table: not exactly that application's three workers"
"$kdsim" run scenarios/kcl-small-lease-table.yaml --duration 2m --json --trace "$tmp/w1.trace" \
    --trace-names w1 >/dev/null 2>&1
[ "$(awk 'NR > 1 { print $3 }' "$tmp/w1.trace" | sort -u | tr '\n' ' ')" = "orders-on-demand/w1 orders-small-table/w1 " ] ||
    fail "--trace-names w1: not the w1 of both applications"

# Lambda with its defaults (lambda-poison-record: retries until the records expire, no
# destination): the poison batch is given up when its oldest record expires, and the
# records the mapping buffered behind it expire too; the give-ups add up to
# records_discarded, the buffered and the read-past expiries to records_expired_unread.
if ! "$kdsim" run scenarios/lambda-poison-record.yaml --json --trace "$tmp/expiry.trace" \
    --trace-kinds invoke,get >"$tmp/expiry.json" 2>"$tmp/expiry.err"; then
    fail "expiry: kdsim run failed: $(head -3 "$tmp/expiry.err")"
fi
sum_of() { # sum_of REGEX SED: the sum of the numbers SED extracts from the lines matching REGEX
    grep -E "$1" "$tmp/expiry.trace" | sed -E "$2" | awk '{ s += $1 } END { print s + 0 }'
}
given=$(sum_of 'given up \(its oldest record expired from the stream\): [0-9]+ records? discarded' 's/.*: ([0-9]+) records? discarded.*/\1/')
buffered=$(sum_of ' buffered records? expired from the stream before (it was|they were) invoked' 's/.* ([0-9]+) buffered records? expired.*/\1/')
read_past=$(sum_of 'expired unread before them' 's/.*\(([0-9]+) expired unread before them\).*/\1/')
[ "$given" -gt 0 ] && [ "$given" = "$(jf "$tmp/expiry.json" "c['figures']['records_discarded']")" ] ||
    fail "expiry: $given records given up as expired in the trace, not the report's records_discarded"
[ "$buffered" -gt 0 ] && [ $((buffered + read_past)) = "$(jf "$tmp/expiry.json" "c['records_expired_unread']")" ] ||
    fail "expiry: $buffered buffered and $read_past read-past expiries in the trace, not the report's records_expired_unread"

# A function at its concurrency limit (lambda-poison-record with a concurrency of 2 for 4
# shards): each throttled invocation has its line, as many as throttled_invocations.
if ! "$kdsim" run scenarios/lambda-poison-record.yaml --duration 11m --json \
    --set 'consumers[0].function.concurrency=2' --trace "$tmp/lthr.trace" --trace-kinds invoke \
    >"$tmp/lthr.json" 2>"$tmp/lthr.err"; then
    fail "lthr: kdsim run failed: $(head -3 "$tmp/lthr.err")"
fi
all_match lthr "${line}invoke +order-processor +shardId-[0-9]{12} ($lambda_invoke)$" \
    "a Lambda invocation or what became of one"
n=$(grep -Ec 'Invoke: throttled \(TooManyRequestsException: the function already runs 2 invocations, its concurrency limit\)' "$tmp/lthr.trace")
[ "$n" -gt 0 ] && [ "$n" = "$(jf "$tmp/lthr.json" "c['figures']['throttled_invocations']")" ] ||
    fail "lthr: $n throttled invocation lines, the report's throttled_invocations is $(jf "$tmp/lthr.json" "c['figures']['throttled_invocations']")"

# KCL 3.x (kcl3-second-worker): the leader moves leases to the second worker by graceful
# handoff; the giving worker's "handed over" lines are the report's handoffs_out, per
# worker, and a taker's line names the lease's previous owner as CONSUMER/WORKER.
if ! "$kdsim" run scenarios/kcl3-second-worker.yaml --json --trace "$tmp/handoff.trace" \
    --trace-kinds lease >"$tmp/handoff.json" 2>"$tmp/handoff.err"; then
    fail "handoff: kdsim run failed: $(head -3 "$tmp/handoff.err")"
fi
python3 - "$tmp/handoff.json" "$tmp/handoff.trace" <<'PY' || failed=$((failed + 1))
import json, sys
want = {}
for c in json.load(open(sys.argv[1]))["consumers"]:
    for w in c["workers"]:
        if "handoffs_out" in w:
            want[c["name"] + "/" + w["name"]] = (w["handoffs_out"], w["handoffs_timed_out"])
got, forced, bad = {}, {}, []
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split(None, 4)
    if f[4].startswith("lease handed over"):
        got[f[2]] = got.get(f[2], 0) + 1
        forced[f[2]] = forced.get(f[2], 0) + ("timed out" in f[4])
    if " from " in f[4] and not f[4].split(" from ")[1].startswith(f[2].split("/")[0] + "/"):
        bad.append("a previous owner not named CONSUMER/WORKER: " + ln.strip())
for name, (n, t) in want.items():
    if (got.get(name, 0), forced.get(name, 0)) != (n, t):
        bad.append(f"{name}: {got.get(name, 0)} handed over ({forced.get(name, 0)} forced) in the trace, report {n} ({t})")
if not any(n for n, t in want.values()):
    bad.append("no handoff in kcl3-second-worker")
for b in bad:
    print("FAIL handoff:", b)
sys.exit(1 if bad else 0)
PY

# A KCL worker's life: its start, restart, graceful stop, crash, pause and resume have a
# lease line each (shard -), at the time and of the worker of the report's worker_events
# (kcl-worker-crash: a crash; kcl-gc-pause: a pause and its resume; kcl-rolling-deployment:
# graceful stops and restarts); a KCL 3.x worker that becomes the leader says so, as many
# times as the report's leader_changes (kcl3-second-worker, the handoff run above).
life_runs="crash:kcl-worker-crash:8m gc:kcl-gc-pause:8m roll:kcl-rolling-deployment:12m"
for r in $life_runs; do
    IFS=: read -r name sc dur <<<"$r"
    if ! "$kdsim" run "scenarios/$sc.yaml" --duration "$dur" --json --trace "$tmp/life-$name.trace" \
        --trace-kinds lease >"$tmp/life-$name.json" 2>"$tmp/life-$name.err"; then
        fail "life-$name: kdsim run failed: $(head -3 "$tmp/life-$name.err")"
    fi
done
python3 - "$tmp" $life_runs <<'PY' || failed=$((failed + 1))
import json, re, sys
tmp, bad = sys.argv[1], []
pats = (("start", r"worker started$"), ("start", r"worker restarted \(start [2-9][0-9]*\): "),
        ("stop", r"worker stopped gracefully: .* its \d+ leases? (is|are) not released and expires? "
                 r"10 s after its last renewal \(failoverTimeMillis\)$"),
        ("crash", r"worker crashed: no checkpoint; its \d+ leases? expires? 10 s after "),
        ("pause", r"worker paused for \d+ s \(a stall"),
        ("resume", r"worker resumed after its pause of \d+ s: "))
kinds = set()
for arg in sys.argv[2:]:
    name = "life-" + arg.split(":")[0]
    rep = json.load(open(f"{tmp}/{name}.json"))
    want = sorted((round(e["t_s"], 3), c["name"] + "/" + e["worker"], e["event"])
                  for c in rep["consumers"] if c["kind"] == "kcl" for e in c["worker_events"])
    got = []
    for ln in open(f"{tmp}/{name}.trace").readlines()[1:]:
        f = ln.rstrip("\n").split(None, 4)
        if not f[4].startswith("worker "):
            continue
        ev = [k for k, p in pats if re.match(p, f[4])]
        if len(ev) != 1 or f[3] != "-":
            bad.append(f"{name}: a malformed worker line: {ln.strip()}")
            continue
        got.append((round(float(f[0]), 3), f[2], ev[0]))
        if ev[0] == "start" and "restarted" in f[4]:
            kinds.add("restart")
    got.sort()
    kinds |= {e for _, _, e in got}
    if got != want:
        extra = [g for g in got if g not in want][:2]
        missing = [w for w in want if w not in got][:2]
        bad.append(f"{name}: worker lines are not the report's worker_events: "
                   f"in the trace only {extra}, in the report only {missing}")
for k in ("start", "restart", "stop", "crash", "pause", "resume"):
    if k not in kinds:
        bad.append(f"no worker line of a {k}")
rep = json.load(open(f"{tmp}/handoff.json"))
for c in rep["consumers"]:
    if "leader_changes" not in c.get("figures", {}):
        continue
    n = sum(1 for ln in open(f"{tmp}/handoff.trace")
            if re.search(r" lease +" + re.escape(c["name"]) + r"/\S+ +- +became the leader \(", ln))
    if n != int(c["figures"]["leader_changes"]) or n == 0:
        bad.append(f"handoff: {c['name']}: {n} lines of a new leader, the report's "
                   f"leader_changes is {c['figures']['leader_changes']}")
for b in bad[:8]:
    print("FAIL life:", b)
sys.exit(1 if bad else 0)
PY
# Columns never shift: a KCL worker's entity, CONSUMER/WORKER, is longer than the
# usual 20 characters, and the entity column is as wide as the run's longest name, so
# the shard column (and the header's) starts at the same place on every line, and the
# same for a scenario with only short names (hot-shard, the first run above).
for n in life-crash all; do
    bad=$(awk 'NR == 1 { col = index($0, "shard") } NR > 1 { if (substr($0, col, 8) != "shardId-" && substr($0, col, 2) != "- ") { print NR ": " $0; exit } }' "$tmp/$n.trace")
    [ -z "$bad" ] || fail "$n: a line whose shard column is not under the header's: $bad"
done
[ "$(head -1 "$tmp/all.trace")" = "      time (s)  kind       entity               shard                what happened" ] ||
    fail "the header of a trace with short names changed: $(head -1 "$tmp/all.trace")"

# A taker's lease line says in words how the lease came: free, stolen to balance, after
# its owner stopped renewing it or shut down, or moved by a KCL 3.x leader; with its
# previous owner, marked "before its restart" when that worker has started again since
# (the KCL worker back after 25 h in kclexp takes its own old leases). The lines are the
# report's lease_move_log: time, shard, cause (the JSON's names), previous owner.
python3 - "$tmp" life-crash life-gc life-roll handoff churn kclexp <<'PY' || failed=$((failed + 1))
import json, re, sys
tmp, bad, seen = sys.argv[1], [], set()
causes = {"taken (it was free)": "take", "stolen (to balance the workers' lease counts)": "steal",
          "taken (its owner stopped renewing it)": "expiry",
          "taken (its owner shut down and the lease expired)": "shutdown",
          "moved by the leader (to balance the workers' load)": "balance"}
pat = re.compile(r"lease (" + "|".join(re.escape(k) for k in causes) +
                 r")(?: from (\S+?)/(\S+?)( \(before its restart\))?)?; (?:of the )?\d+ records? processed")
for name in sys.argv[2:]:
    rep = {c["name"]: c for c in json.load(open(f"{tmp}/{name}.json"))["consumers"] if c["kind"] == "kcl"}
    got = {c: [] for c in rep}
    for ln in open(f"{tmp}/{name}.trace").readlines()[1:]:
        f = ln.rstrip("\n").split(None, 4)
        if f[1] != "lease" or not re.match(r"lease (taken|stolen|moved) ", f[4]):
            continue
        m = pat.match(f[4])
        if not m:
            bad.append(f"{name}: a taker's line not in words: {ln.strip()}")
            continue
        seen.add(causes[m.group(1)])
        if m.group(4):
            seen.add("restart")
        got[f[2].split("/")[0]].append((round(float(f[0]), 3), f[3], causes[m.group(1)], m.group(3)))
    for c, r in rep.items():
        if r["lease_move_log_truncated"]:
            continue
        want = [(round(e["t_s"], 3), e["shard_id"], e["cause"], e["from"]) for e in r["lease_move_log"]]
        if sorted(got[c], key=str) != sorted(want, key=str):
            bad.append(f"{name}: {c}: the taker's lines are not the lease_move_log: "
                       f"{[g for g in got[c] if g not in want][:2]} / {[w for w in want if w not in got[c]][:2]}")
for k in ("take", "steal", "expiry", "shutdown", "balance", "restart"):
    if k not in seen:
        bad.append(f"no taker's line of {k}")
for b in bad[:6]:
    print("FAIL moves:", b)
sys.exit(1 if bad else 0)
PY

# A polling consumer's pause (stalled-reader-retention: `stalled` pauses at 1 h for 25 h):
# each of its shards' readers says so once, when its next call falls in the pause.
n_pause=$(grep -Ec "${line}get +stalled +shardId-[0-9]{12} paused: the consumer's pause of 25 h from 3600\.000 s; the next GetRecords on this shard at 93600\.000 s$" "$tmp/stalled.trace")
n_shards=$(grep -E "${line}get +stalled " "$tmp/stalled.trace" | awk '{ print $4 }' | sort -u | wc -l)
[ "$n_pause" = "$n_shards" ] && [ "$n_pause" -gt 0 ] ||
    fail "stalled: not one pause line per shard of the stalled reader"

# A throttled GetRecords line says which limit refused it: the shard's 5 calls/s, its
# read budget of 2 MiB/s overdrawn (which refuses every call for 1 s), or the 5 s after a
# call that returned 10 MiB. Three readers of one shard, one of them back from a pause
# with 10 MiB calls to make: each line's reason agrees with the calls before it (a
# penalty line lies within its window after the line that opened it, the other two
# outside any window), and the lines are the report's read_throttled_calls.
cat >"$tmp/limits.yaml" <<'YAML'
seed: 3
duration: 60s
stream: {name: s, shards: 1}
producers:
  - {name: app, rate: 450 records/s, record_size: 2 KiB}
consumers:
  - {name: a, kind: polling, poll_interval: 200ms}
  - {name: b, kind: polling, poll_interval: 200ms}
  - {name: late, kind: polling, poll_interval: 200ms, pause: {at: 5s, for: 20s}}
YAML
if ! "$kdsim" run "$tmp/limits.yaml" --json --trace "$tmp/limits.trace" --trace-kinds get \
    >"$tmp/limits.json" 2>"$tmp/limits.err"; then
    fail "limits: kdsim run failed: $(head -3 "$tmp/limits.err")"
fi
python3 - "$tmp/limits.json" "$tmp/limits.trace" <<'PY' || failed=$((failed + 1))
import json, re, sys
rep = json.load(open(sys.argv[1]))
want = sum(c["read_throttled_calls"] for c in rep["consumers"])
calls = "the shard's 5 GetRecords calls/s are spent"
over = "the shard's read budget of 2 MiB/s is overdrawn: its calls are refused for 1 s"
in_over = "within the 1 s penalty after the shard's read budget of 2 MiB/s was overdrawn"
in_big = "within the 5 s penalty after a call returned 10 MiB"
seen = {k: 0 for k in (calls, over, in_over, in_big)}
bad, window = [], None  # (kind, opened at, ends at)
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.rstrip("\n").split(None, 4)
    t = float(f[0])
    inside = window is not None and t < window[2] - 1e-7
    m = re.match(r"GetRecords: throttled \(ReadProvisionedThroughputExceeded: (.*)\), next try in \d+ ms$", f[4])
    if m:
        why = m.group(1)
        if why not in seen:
            bad.append("an unknown reason: " + ln.strip())
            continue
        seen[why] += 1
        if why in (calls, over) and inside:
            bad.append(f"{why!r} inside the window opened at {window[1]} s: {ln.strip()}")
        if why == over:
            window = ("over", t, t + 1)
        if why == in_over and not (inside and window[0] == "over"):
            bad.append("an overdrawn-penalty line outside its window: " + ln.strip())
        if why == in_big and not (inside and window[0] == "big"):
            bad.append("a 10 MiB-penalty line outside its window: " + ln.strip())
        continue
    m = re.match(r"GetRecords: (\d+) records?, (\d+) B", f[4])
    if m and int(m.group(1)) > 0:
        n, b = int(m.group(1)), int(m.group(2))
        if b + b // n >= 10 * 1024 * 1024:
            window = ("big", t, t + 5)
if sum(seen.values()) != want:
    bad.append(f"{sum(seen.values())} throttled lines, the report's read_throttled_calls sum to {want}")
bad += [f"no line of the reason {k!r}" for k, v in seen.items() if v == 0]
for b in bad[:6]:
    print("FAIL limits:", b)
sys.exit(1 if bad else 0)
PY

# A reader whose shard iterator expired (unused for over 5 minutes) fetches a new one
# before its call: the GetRecords line that paid the extra round trip says so, as many
# per consumer as the report's iterator_refreshes (the stalled polling reader back after
# its pause; the Lambda mapping whose shard was held by a failing batch; a KCL worker
# paused for 6 minutes; the KCL and Lambda runs above with none or some).
if ! "$kdsim" run scenarios/kcl-gc-pause.yaml --duration 12m --json --trace "$tmp/kclit.trace" \
    --trace-kinds get --set 'consumers[0].workers[2].events[0].for=6m' \
    >"$tmp/kclit.json" 2>"$tmp/kclit.err"; then
    fail "kclit: kdsim run failed: $(head -3 "$tmp/kclit.err")"
fi
python3 - "$tmp" stalled expiry kclit kclget lam <<'PY' || failed=$((failed + 1))
import json, re, sys
tmp, bad, total = sys.argv[1], [], 0
note = "; its shard iterator had expired (unused for over 5 min): a new one first, one more round trip"
for name in sys.argv[2:]:
    got = {}
    for ln in open(f"{tmp}/{name}.trace").readlines()[1:]:
        f = ln.rstrip("\n").split(None, 4)
        if f[1] == "get" and "iterator had expired" in f[4]:
            if note not in f[4] or not re.match(r"GetRecords: ", f[4]):
                bad.append(f"{name}: a malformed note: {ln.strip()}")
            got[f[2].split("/")[0]] = got.get(f[2].split("/")[0], 0) + 1
    for c in json.load(open(f"{tmp}/{name}.json"))["consumers"]:
        total += got.get(c["name"], 0)
        if got.get(c["name"], 0) != c["iterator_refreshes"]:
            bad.append(f"{name}: {c['name']}: {got.get(c['name'], 0)} GetRecords lines after a new "
                       f"iterator, the report's iterator_refreshes is {c['iterator_refreshes']}")
if total < 4:
    bad.append(f"only {total} iterator refreshes in the runs")
for b in bad[:6]:
    print("FAIL iterator:", b)
sys.exit(1 if bad else 0)
PY

# The traced runs above changed nothing: each report is the one of the same run without
# --trace (every kind of line, from producers, Lambda, the KCL, resharding, on-demand
# scaling and expiry, is a window only).
plain() { # plain NAME ARGS...: `kdsim run ARGS --json` against $tmp/NAME.json
    local name=$1
    shift
    "$kdsim" run "$@" --json >"$tmp/$name.plain.json" 2>/dev/null
    cmp -s "$tmp/$name.json" "$tmp/$name.plain.json" || fail "$name: the report changes with --trace"
}
plain lam scenarios/lambda-poison-record-bisect.yaml --duration 12m
plain push scenarios/latency-efo.yaml --duration 11m
plain flinkpush scenarios/acme-clickstream.yaml --duration 11m
plain kclget scenarios/kcl-worker-crash.yaml --duration 5m
plain limits "$tmp/limits.yaml"
plain fhget scenarios/firehose-buffering.yaml --duration 3m --set 'consumers[0].full_backup=true'
plain kclit scenarios/kcl-gc-pause.yaml --duration 12m --set 'consumers[0].workers[2].events[0].for=6m'
plain retry scenarios/hot-key.yaml --duration 60s
plain dups scenarios/hot-key.yaml --duration 60s --set 'producers[1].timeouts.rate=0.05'
plain big "$tmp/big.yaml"
plain stalled scenarios/stalled-reader-retention.yaml
plain kclexp "$tmp/kclexp.yaml"
plain flinkexp "$tmp/flinkexp.yaml"
plain children scenarios/reshard-idle-children.yaml --duration 52m
plain od scenarios/on-demand-burst.yaml
plain churn scenarios/kcl-small-lease-table.yaml --duration 10m
plain handoff scenarios/kcl3-second-worker.yaml
plain life-crash scenarios/kcl-worker-crash.yaml --duration 8m
plain life-gc scenarios/kcl-gc-pause.yaml --duration 8m
plain life-roll scenarios/kcl-rolling-deployment.yaml --duration 12m
plain expiry scenarios/lambda-poison-record.yaml
plain lthr scenarios/lambda-poison-record.yaml --duration 11m --set 'consumers[0].function.concurrency=2'

# A count of one takes the singular ("1 record"), in every line of every trace above (the
# Lambda's story, lam, has several).
bad=$(grep -h -E '(^|[^0-9.])1 records' "$tmp"/*.trace | head -1)
[ -z "$bad" ] || fail "a count of one in the plural: $bad"

cli_finish cli_trace
