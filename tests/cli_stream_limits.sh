#!/usr/bin/env bash
# cli_stream_limits.sh - every key of stream.limits reaches the model it names: each one
# set through the loader (--set) changes what the run does as that limit would, and not
# as another would (a budget of calls throttles calls, a cap per call does not), or, for
# the depths that are assumptions, shows in the report's assumptions with the value set.
#
# usage: bash tests/cli_stream_limits.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
command -v jq >/dev/null || {
    echo "jq is needed"
    exit 1
}
cli_tmpdir

# One shard written at 800 records/s of 1 KiB for 2 minutes, read by a poller every
# 200 ms and a Lambda mapping: within the default limits nothing is throttled for long.
cat >"$tmp/base.yaml" <<'EOF'
duration: 2m
seed: 11
stream: {shards: 1}
producers:
  - {name: p, rate: 800 records/s, record_size: 1 KiB, keys: {kind: uniform, count: 1000}}
consumers:
  - {name: r, kind: polling, poll_interval: 200ms}
  - {name: fn, kind: lambda}
EOF

# limit NAME SETTING JQ-EXPRESSION MESSAGE: run the base scenario with
# stream.limits.SETTING (none if empty) and check the expression on its JSON report.
limit() {
    local name=$1 setting=$2 expr=$3 msg=$4 set=()
    [ -n "$setting" ] && set=(--set "stream.limits.$setting")
    if ! "$kdsim" run "$tmp/base.yaml" --json "${set[@]}" >"$tmp/$name.json" 2>"$tmp/err"; then
        fail "$name: kdsim run failed: $(cat "$tmp/err")"
        return
    fi
    jq -e "$expr" "$tmp/$name.json" >/dev/null ||
        fail "$name ($setting): $msg: $(jq -c '{written: .producers[0].records_written,
            read_throttled: .consumers[0].read_throttled_calls,
            unread: .consumers[0].records_unread,
            refreshes: .consumers[1].iterator_refreshes}' "$tmp/$name.json")"
}

limit base "" '.producers[0].records_written > 95000 and .consumers[0].records_unread < 1000
    and .consumers[0].read_throttled_calls < 20 and .consumers[1].iterator_refreshes == 0' \
    "the base scenario is not unthrottled"
# Writes: the stored rate is the budget (plus the one-second bucket it starts with).
limit wrec "write_records=500 records/s" '.producers[0].records_written >= 59000
    and .producers[0].records_written <= 60500' "not 500 records/s stored"
limit wbytes "write_bytes=512 KiB/s" '.producers[0].records_written >= 60500
    and .producers[0].records_written <= 62000' "not 512 KiB/s stored"
# Reads: a budget throttles calls; a cap per call slows the reader without throttling.
limit rcalls "read_calls=2 calls/s" '.consumers[0].read_throttled_calls > 200
    and .consumers[0].records_unread < 5000' "2 calls/s do not throttle a poller at 5 a second"
limit rbytes "read_bytes=512 KiB/s" '.consumers[0].read_throttled_calls > 200
    and .consumers[0].records_unread > 30000' "512 KiB/s does not hold back 800 KiB/s"
limit rrecs "read_records=400 records/s" '.consumers[0].read_throttled_calls > 200
    and .consumers[0].records_unread > 30000' "400 records/s does not hold back 800 records/s"
limit maxrec "max_records_per_call=50" '.consumers[0].read_throttled_calls < 20
    and .consumers[0].records_unread > 30000' "50 records a call, 5 calls a second, keep up"
limit maxbytes "max_bytes_per_call=50 KiB" '.consumers[0].records_unread > 30000' \
    "50 KiB a call keeps up with 800 KiB/s"
limit ttl "iterator_ttl=1s" '.consumers[1].iterator_refreshes > 0' \
    "a 1 s iterator lifetime never expires the mapping's iterator"

# The penalties, by the trace's words for the calls they refuse.
"$kdsim" run "$tmp/base.yaml" --set "stream.limits.max_bytes_per_call=100 KiB" \
    --set "stream.limits.big_read_penalty=3s" --trace - --trace-kinds get \
    2>"$tmp/big.trace" >/dev/null || fail "big_read_penalty: kdsim run failed"
grep -q "within the 3 s penalty after a call returned 100 KiB" "$tmp/big.trace" ||
    fail "big_read_penalty=3s: no call refused within a 3 s penalty after a 100 KiB call"
"$kdsim" run "$tmp/base.yaml" --set "stream.limits.read_bytes=512 KiB/s" \
    --set "stream.limits.short_read_penalty=10s" --trace - --trace-kinds get \
    2>"$tmp/short.trace" >/dev/null || fail "short_read_penalty: kdsim run failed"
grep -q "overdrawn: its calls are refused for 10 s" "$tmp/short.trace" ||
    fail "short_read_penalty=10s: no call refused for 10 s after the budget was overdrawn"

# The depths AWS does not publish are assumptions: the report lists the values set.
sed 's/^  - {name: fn, kind: lambda}$/  - {name: fn, kind: lambda}\n  - {name: e, kind: efo}/' \
    "$tmp/base.yaml" >"$tmp/efo.yaml"
if "$kdsim" run "$tmp/efo.yaml" --json --set "stream.limits.write_burst=2s" \
    --set "stream.limits.large_record_tank=20 MiB" \
    --set "stream.limits.large_record_refill=2 MiB/s" --set "stream.limits.read_burst=3s" \
    --set "stream.limits.efo_burst=4s" >"$tmp/depths.json" 2>"$tmp/err"; then
    jq -e '[.assumptions[] | select(.setting | startswith("stream.limits.")) | [.setting, .value]]
        | contains([["stream.limits.write_burst", "2s"],
                    ["stream.limits.large_record_tank", "20 MiB"],
                    ["stream.limits.large_record_refill", "2 MiB/s"],
                    ["stream.limits.read_burst", "3s"], ["stream.limits.efo_burst", "4s"]])' \
        "$tmp/depths.json" >/dev/null ||
        fail "the depths set are not the assumptions listed: $(jq -c '[.assumptions[]
            | select(.setting | startswith("stream.limits.")) | [.setting, .value]]' \
            "$tmp/depths.json")"
else
    fail "depths: kdsim run failed: $(cat "$tmp/err")"
fi

# A token bucket holds at most about 9.2e9 units (kds_bucket.h): limits whose rate or
# rate x burst goes past it are refused with the keys and the fix (they once stopped the
# run on an assertion), at the burst. The largest rates accepted run.
refused() { # NAME MESSAGE SETTINGS...
    local name=$1 msg=$2
    shift 2
    local sets=()
    for s in "$@"; do sets+=(--set "$s"); done
    k "$name" 2 validate "$tmp/base.yaml" "${sets[@]}" || return
    grep -qF -- "$msg" "$tmp/$name.err" || fail "$name: no '$msg' in: $(cat "$tmp/$name.err")"
}
refused burst "stream.limits.read_burst: read_bytes x read_burst is 3.775e+10 B, above the \
9.223e+09 B a token bucket holds (a limit of kdsim's, not of AWS); set a shorter read_burst \
or a lower read_bytes" "stream.limits.read_bytes=10 MiB/s" "stream.limits.read_burst=1h"
refused records "stream.limits.write_burst: write_records x write_burst is 1e+10 records" \
    "stream.limits.write_records=10000000 records/s" "stream.limits.write_burst=1000s"
refused bytes "stream.limits.write_bytes: must be between 1 B/s and 8 GiB/s, got 9 GiB/s" \
    "stream.limits.write_bytes=9 GiB/s"
refused tank "stream.limits.large_record_tank: must be between 1 B and 8 GiB, got 9 GiB" \
    "stream.limits.large_record_tank=9 GiB"
run largest "$tmp/base.yaml" --duration 10s --set "stream.limits.write_bytes=8 GiB/s" \
    --set "stream.limits.read_bytes=8 GiB/s" --set "stream.limits.large_record_tank=8 GiB" \
    --set "stream.limits.large_record_refill=8 GiB/s" --set "stream.limits.read_burst=1s"

cli_finish cli_stream_limits
