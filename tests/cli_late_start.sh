#!/usr/bin/env bash
# cli_late_start.sh - every reader kind that starts late from TRIM_HORIZON on a stream of
# the shortest retention (24 h) counts the records that expire before it reads them as
# records_expired_unread (model.md section 8: "A reader that has not read a record by
# the time it expires has lost it"), runs to its end without the consumer conservation
# invariant stopping it, and gets the count right.
#
# Producer a writes records 1 to 1,000 at exactly k x 100 ms (k = 1..1000: PutRecord,
# evenly spaced, no latency), producer b 1,000 more from 1 h on. Two sets of runs:
#
# - Held: the reader starts at 23h50m, when all of a's records are retained (so none is
#   skipped at start), and is kept from reading them until they have all expired (by
#   24h01m40s): a pause, a job failure at the start with a 20-minute restart, a Firehose
#   destination outage, processing of 20 minutes a batch (the KCL), a function running
#   899 s a record (Lambda, which hands the first record before the others expire). Then
#   it reads b's records, which are retained. Expected: a's records expired unread.
# - Raced: the reader starts at 24h exactly, and records expire while its first call is
#   on its way (a random phase within a poll interval). Expected: the records written at
#   or before that call's time minus 24 h, floor(10 x (t - 86400)), t the call's time in
#   the trace.
#
# usage: bash tests/cli_late_start.sh KDSIM SOURCE_DIR
# shellcheck disable=SC2016 # jq expressions, not shell ones, in single quotes
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
command -v jq >/dev/null || {
    echo "jq is needed"
    exit 1
}
cli_tmpdir

# scenario NAME STOP_B DURATION CONSUMER: a scenario file $tmp/NAME.yaml.
scenario() {
    cat >"$tmp/$1.yaml" <<EOF
name: late-$1
seed: 1
duration: $3
stream: {name: s, shards: 1, retention: 24h}
producers:
  - {name: a, rate: 10 records/s, record_size: 1 KiB, api: put_record, latency: 0ms, stop: 100s}
  - {name: b, rate: 10 records/s, record_size: 1 KiB, api: put_record, latency: 0ms,
     start: 1h, stop: $2}
consumers:
  - {name: c, start_position: trim_horizon, $4}
EOF
}

# run NAME ARGS...: kdsim run $tmp/NAME.yaml --json ARGS into $tmp/NAME.json; fails
# unless the exit status is 0 and stderr is empty (an invariant stops the run with 1).
run() {
    local name=$1
    shift
    "$kdsim" run "$tmp/$name.yaml" --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "$name: kdsim run $*: exit status $rc"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -5
        return 1
    fi
}

# check NAME WHAT JQ-EXPRESSION: the expression is true of $tmp/NAME.json.
check() {
    if ! jq -e "$3" "$tmp/$1.json" >/dev/null 2>&1; then
        fail "$1: $2 ($3)"
        jq -c '.consumers[0] | {records_skipped_at_start, records_delivered, records_unread,
            records_expired_unread}' "$tmp/$1.json" 2>/dev/null | sed 's/^/    consumer: /'
    fi
}

conservation='.stream.records_in == (.consumers[0] | .records_skipped_at_start
    + .records_delivered + .records_unread + .records_expired_unread)'

# --- held until a's records expired -------------------------------------------------------
# held NAME EXPECTED CONSUMER: the consumer starts at 23h50m (its `start`, or the KCL's
# worker's).
held() {
    scenario "$1" 3700s 1460m "$3"
    run "$1" || return
    check "$1" "a's records written" '.producers[0].records_written == 1000'
    check "$1" "none skipped at start" '.consumers[0].records_skipped_at_start == 0'
    check "$1" "$2 of a's records expired unread" ".consumers[0].records_expired_unread == $2"
    check "$1" "b's records read after the gap" \
        ".consumers[0].records_delivered >= 1000 - $2 + 1"
    check "$1" "conservation" "$conservation"
}

held polling 1000 'kind: polling, start: 1430m, pause: {at: 1430m, for: 20m}'
held efo 1000 'kind: efo, start: 1430m, pause: {at: 1430m, for: 20m}'
held lambda 999 \
    'kind: lambda, start: 1430m, batch_size: 1, function: {duration: 899s, timeout: 900s}'
held lambda-efo 999 'kind: lambda, retrieval: efo, start: 1430m, batch_size: 1,
     function: {duration: 899s, timeout: 900s}'
held firehose 1000 'kind: firehose, start: 1430m, delivery: {outage: {at: 1430m, for: 20m}}'
held flink 1000 'kind: flink, start: 1430m, failures: [1430m], restart_delay: 20m'
held flink-efo 1000 \
    'kind: flink, retrieval: efo, start: 1430m, failures: [1430m], restart_delay: 20m'
held kcl 1000 \
    'kind: kcl, retrieval: polling, processing: {per_batch: 20m}, workers: [{name: w, start: 1430m}]'
held kcl-efo 1000 'kind: kcl, processing: {per_batch: 20m}, workers: [{name: w, start: 1430m}]'
check lambda "Lambda: b's records handed after the gap" '.consumers[0].records_delivered >= 2'

# --- records expiring while the first call is on its way ---------------------------------
# raced NAME SEED CONSUMER: the expected count from the first GetRecords call's time.
raced() {
    scenario "$1-$2" 3700s 1441m "start: 1440m, $3"
    run "$1-$2" --seed "$2" --trace "$tmp/$1-$2.trace" --trace-kinds get || return
    local t want
    t=$(awk '$2 == "get" && $5 == "GetRecords:" { print $1; exit }' "$tmp/$1-$2.trace")
    want=$(awk -v t="$t" 'BEGIN { printf "%d", (t - 86400) * 10 }')
    if [ -z "$t" ] || [ "$want" -lt 1 ]; then
        fail "$1-$2: no records expired before the first call at ${t:-none} (pick another seed)"
        return
    fi
    check "$1-$2" "the $want records written by the first call at $t s, less 24 h, expired" \
        ".consumers[0].records_expired_unread == $want
         and .consumers[0].records_skipped_at_start == 0"
    check "$1-$2" "conservation" "$conservation"
}

for seed in 1 2 4; do
    raced flink $seed 'kind: flink, poll_interval: 1s'
    raced polling $seed 'kind: polling'
    raced firehose $seed 'kind: firehose'
done

cli_finish cli_late_start
