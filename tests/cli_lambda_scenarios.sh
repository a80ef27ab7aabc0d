#!/usr/bin/env bash
# cli_lambda_scenarios.sh - the two shipped Lambda scenarios tell their story in the
# JSON report: with default settings a poison record holds its shard (and only it) until
# it expires a day later; with bisection, bounded retries and a failure queue only the
# bad record reaches the queue and the shard keeps flowing. Then a mapping of each
# retrieval across a split, reading each child once its parent is drained, a maximum
# record age cutting a merged span, and records each above the 6 MB payload alone. Every run also keeps the consumer conservation rule of
# docs/report-json.md.
#
# usage: bash tests/cli_lambda_scenarios.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
command -v jq >/dev/null || {
    echo "jq is needed"
    exit 1
}
cli_tmpdir

# run NAME SCENARIO ARGS...: kdsim run SCENARIO --json ARGS into $tmp/NAME.json; fails
# the test unless the exit status is 0 and stderr is empty.
run() {
    local name=$1 scenario=$2
    shift 2
    "$kdsim" run "$scenario" --json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "kdsim run $scenario --json $*: exit status $rc"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -20
    fi
}

# check NAME WHAT JQ-EXPRESSION: the expression, applied to $tmp/NAME.json, is true.
check() {
    local name=$1 what=$2 expr=$3
    if ! jq -e "$expr" "$tmp/$name.json" >/dev/null 2>&1; then
        fail "$name: $what ($expr)"
        jq -c '.consumers[0] | del(.latency_ms)' "$tmp/$name.json" 2>/dev/null | head -c 1500 |
            sed 's/^/    consumer: /'
        echo
    fi
}

# Conservation: stored = skipped at start + delivered + unread + expired unread.
conservation='.stream.records_in == (.consumers[0] | .records_skipped_at_start
    + .records_delivered + .records_unread + .records_expired_unread)'

# --- lambda-poison-record, the whole day ---------------------------------------------------
s=scenarios/lambda-poison-record.yaml
run poison "$s"
check poison "a lambda consumer with a description" \
    '.consumers[0].kind == "lambda" and (.description | length) > 100'
check poison "one shard held, for the 24 h retention period" \
    '.consumers[0].figures.shards_blocked == 1
     and .consumers[0].figures.longest_block_s >= 86400 - 60
     and .consumers[0].figures.longest_block_s <= 86400 + 60'
check poison "IteratorAge grows to about 24 h" \
    '.consumers[0].iterator_age_ms_max >= 86000000 and .consumers[0].iterator_age_ms_max <= 86500000
     and .consumers[0].figures.iterator_age_ms_max == .consumers[0].iterator_age_ms_max'
check poison "retried until the record expired, then the batch discarded" \
    '.consumers[0].figures.retries >= 2800 and .consumers[0].figures.retries <= 2900
     and .consumers[0].figures.records_discarded >= 1
     and .consumers[0].figures.records_to_failure_destination == 0
     and .consumers[0].figures.function_errors == .consumers[0].figures.retries + 1'
check poison "retries re-deliver the batch: duplicates" \
    '.consumers[0].duplicates_delivered == .consumers[0].figures.retries * .consumers[0].figures.records_discarded'
check poison "records lost to expiry while the shard waited and caught up" \
    '.consumers[0].records_expired_unread > 0 and .consumers[0].records_expired_unread < 1000'
check poison "caught up by the end" '.consumers[0].records_unread < 200'
check poison "conservation" "$conservation"

# --- the same, two hours in: one shard of four stopped, the others flowed -------------------
run poison2h "$s" --duration 2h
check poison2h "the held shard's records since the poison record unread (a quarter of 1h50m)" \
    '.consumers[0].records_unread >= 0.2 * .stream.records_in
     and .consumers[0].records_unread <= 0.3 * .stream.records_in'
check poison2h "IteratorAge about 1 h 50 min" \
    '.consumers[0].iterator_age_ms_max >= 6500000 and .consumers[0].iterator_age_ms_max <= 6700000'
check poison2h "nothing given up yet" \
    '.consumers[0].figures.records_discarded == 0 and .consumers[0].figures.shards_blocked == 1'
check poison2h "conservation" "$conservation"

# --- lambda-poison-record-bisect ---------------------------------------------------------------
b=scenarios/lambda-poison-record-bisect.yaml
run bisect "$b" --duration 2h
check bisect "a lambda consumer with a description" \
    '.consumers[0].kind == "lambda" and (.description | length) > 100'
check bisect "only the poison record goes to the queue" \
    '.consumers[0].figures.records_to_failure_destination == 1
     and .consumers[0].figures.failure_destination_messages == 1
     and .consumers[0].figures.records_discarded == 0'
check bisect "bisected without using retries, then 3 retries of the lone record" \
    '.consumers[0].figures.batches_bisected >= 1 and .consumers[0].figures.retries == 3'
check bisect "the shard held for minutes at most, and flowing at the end" \
    '.consumers[0].figures.longest_block_s < 300 and .consumers[0].iterator_age_ms_max < 300000
     and .consumers[0].records_unread < 200'
check bisect "every other record handed to the function processed (but those still running)" \
    '.consumers[0] | .records_delivered - .figures.records_processed
     - .figures.records_to_failure_destination < 100'
check bisect "conservation" "$conservation"

# --- a poison record read late --------------------------------------------------------------
late=tests/scenarios/lambda-rbif-late.yaml
run late "$late"
run early "$late" --set consumers[0].start=0s
check early "from the start: the poison record and the one after it discarded" \
    '.consumers[0].figures.records_discarded == 2'
check late "from TRIM_HORIZON 5 min in: the same 2 records discarded" \
    '.consumers[0].figures.records_discarded == 2
     and .consumers[0].figures.records_to_failure_destination == 0'
check late "conservation" "$conservation"

# --- a split under both retrievals: each child read once its parent is drained -------------
run split tests/scenarios/readers-across-split.yaml
check split "a split: a record unaccounted for" '.stream.records_in as $in | all(.consumers[];
     .records_skipped_at_start + .records_delivered + .records_unread
     + .records_expired_unread == $in)'
check split "a split: both children started by each mapping, after a wait for the polled parent
     (a second of polling at most)" \
    '[.consumers[] | select(.kind == "lambda")] as $m | ($m | length) == 2
     and all($m[]; .children_started == 2)
     and ($m[] | select(.name == "fn") | .child_wait_ms_max > 0 and .child_wait_ms_max < 2000)'
check split "a split: everything delivered but the last second, none later than 3 s" \
    'all(.consumers[] | select(.kind == "lambda"); .records_unread < 500
     and .records_expired_unread == 0 and .latency_ms.max < 3000)'

# --- MaximumRecordAge cutting a merged span ------------------------------------------------
# A mapping created at 10 minutes at TRIM_HORIZON holds the shard from its head until
# then, but only for 32,768 requests (kds_log.h): the producer sends a record a request,
# 100 a second, so by about 7 minutes the first minutes are merged into one-minute spans
# (the live reader passed them). The mapping gives up what is older than its 5-minute
# maximum age, the older part of the span the cut falls in too: no record it hands to the
# function is 5 minutes old (a second of function time on top at most).
cat >"$tmp/aged.yaml" <<'EOF'
duration: 12m
seed: 4
stream: {shards: 1}
producers:
  - {name: p, rate: 100 records/s, record_size: 1 KiB, api: put_record}
consumers:
  - {name: live, kind: polling}
  - {name: fn, kind: lambda, start: 10m, start_position: trim_horizon,
     maximum_record_age: 5m, maximum_retry_attempts: 0}
EOF
run aged "$tmp/aged.yaml"
check aged "maximum age: 5 minutes of records or a little more given up, the rest processed
     (but for a batch of 100 at most still running at the end)" \
    '.consumers[1] | .figures.records_discarded >= 30000 and .figures.records_discarded <= 33000
     and .figures.records_discarded + .figures.records_processed <= .records_delivered
     and .figures.records_discarded + .figures.records_processed >= .records_delivered - 100'
check aged "maximum age: a record older than 5 minutes handed to the function" \
    '.consumers[1].latency_ms.max < 301000'
check aged "conservation" '.stream.records_in == (.consumers[1] | .records_skipped_at_start
    + .records_delivered + .records_unread + .records_expired_unread)'

# --- records above the payload limit alone ---------------------------------------------------
# 6 MiB records (the stream raised to 10 MiB) are 8 MiB of base64 each, above the 6 MB
# payload: each goes in a batch of its own, none is held back.
cat >"$tmp/big.yaml" <<'EOF'
duration: 2m
seed: 2
stream: {shards: 1, max_record_size: 10 MiB}
producers:
  - {name: p, rate: 6/min, record_size: 6 MiB, api: put_record}
consumers:
  - {name: fn, kind: lambda, start_position: trim_horizon}
EOF
run big "$tmp/big.yaml"
check big "records above the payload limit: not one a batch, or held back" \
    '.producers[0].records_written as $w | .consumers[0] | $w >= 10
     and .records_delivered == $w and .figures.invocations == $w
     and .figures.largest_batch == 1'
check big "records above the payload limit: the assumption not listed" \
    '[.assumptions[] | select(.setting == "consumers[0].payload_limit")] | length == 1'
run big1 "$tmp/big.yaml" --set stream.max_record_size=4MiB --set "producers[0].record_size=4MiB"
check big1 "records within the payload limit: the assumption listed" \
    '[.assumptions[] | select(.setting == "consumers[0].payload_limit")] | length == 0'

# An EFO mapping's stream consumer is registered before the mapping is created, so it is
# billed from the mapping's start, through its creation delay: 2 shards x (2 h - 10 min)
# = 3.667 consumer-shard-hours (it was billed from the end of the delay: 1.667).
cat >"$tmp/efo-created.yaml" <<'EOF'
duration: 2h
stream: {shards: 2}
producers:
  - {name: p, rate: 10 records/s, record_size: 1 KiB}
consumers:
  - {name: l, kind: lambda, retrieval: efo, start: 10m, creation_delay: 1h}
EOF
if "$kdsim" run "$tmp/efo-created.yaml" --json >"$tmp/efo-created.json" 2>"$tmp/err"; then
    python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["consumers"][0]["figures"]["consumer_shard_hours"]
assert abs(h - 2 * (2 - 1 / 6)) < 1e-3, h' "$tmp/efo-created.json" ||
        fail "an EFO mapping created at 10 min: consumer-shard-hours not 3.667"
else
    fail "EFO creation billing: kdsim run failed: $(cat "$tmp/err")"
fi

# Retries without a delay, without end: each costs the same however long the streak.
sc=tests/scenarios/lambda-zero-retry-delay.yaml
if timeout 120 "$kdsim" run "$sc" --json >"$tmp/zero.json" 2>"$tmp/err"; then
    python3 - "$tmp/zero.json" <<'PY' || fail "lambda-zero-retry-delay: the figures (above)"
import json, sys
f = json.load(open(sys.argv[1]))["consumers"][0]["figures"]
assert f["retries"] > 500000, f["retries"]
PY
else
    fail "lambda-zero-retry-delay: no report within 120 s (a cost per retry growing with the streak?): $(head -3 "$tmp/err")"
fi

cli_finish cli_lambda_scenarios
