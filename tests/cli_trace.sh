#!/usr/bin/env bash
# cli_trace.sh - `kdsim run --trace`: the trace of a short scenario has a header, a
# PutRecords line with its outcome (stored, throttled, failed) and a GetRecords line
# with what it returned; a throttled PutRecords shows its throttled count; the filters
# by kind, shard and name keep only what they name; the trace changes nothing in the
# report; `--trace -` writes to stderr.
#
# usage: bash tests/cli_trace.sh KDSIM SOURCE_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 KDSIM SOURCE_DIR" >&2
    exit 2
fi
kdsim=$1
case $kdsim in /*) ;; *) kdsim=$PWD/$kdsim ;; esac
cd "$2" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
}

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
put='^ *[0-9]+\.[0-9]{6}  put +[a-z-]+ +shardId-[0-9]{12} PutRecords: [0-9]+ records -> [0-9]+ stored, [0-9]+ throttled, [0-9]+ failed \(attempt [0-9]+\)$'
get='^ *[0-9]+\.[0-9]{6}  get +live-metrics +shardId-[0-9]{12} GetRecords: [0-9]+ records, [0-9]+ B, iterator age [0-9]+ ms'
grep -Eq "$put" "$t" || fail "no PutRecords line with its outcome: $(grep -m1 ' put ' "$t")"
grep -Eq "$get" "$t" || fail "no GetRecords line with what it returned: $(grep -m1 ' get ' "$t")"
grep -E "$put" "$t" | grep -Eq 'shardId-000000000002 PutRecords: [0-9]+ records -> [0-9]+ stored, [1-9][0-9]* throttled' ||
    fail "no throttled PutRecords on the hot shard shardId-000000000002"
# Stored plus throttled plus failed is the request's count, line by line.
bad=$(grep -E "$put" "$t" | sed -E 's/.*PutRecords: ([0-9]+) records -> ([0-9]+) stored, ([0-9]+) throttled, ([0-9]+) failed.*/\1 \2 \3 \4/' |
    awk '$1 != $2 + $3 + $4' | head -1)
[ -z "$bad" ] || fail "a PutRecords line whose outcome does not add up: $bad"
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

if [ "$failed" -ne 0 ]; then
    echo "$failed check(s) failed"
    exit 1
fi
echo "cli_trace: all checks passed"
