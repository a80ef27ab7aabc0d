#!/usr/bin/env bash
# cli_firehose_flink.sh - the Firehose and Flink scenarios through the command line:
# scenarios/firehose-buffering.yaml writes the objects its buffering hints predict
# (size-bound: ceil(bytes / 5 MiB), interval-bound: one a minute), and
# scenarios/flink-failure.yaml replays exactly the records processed since the last
# checkpoint, as duplicates; both keep the consumer conservation rule and are
# deterministic. Then a Flink replay that ends inside a fetched batch, a firehose reading
# across a split, the start positions of the firehose, efo and flink readers, the loaders'
# messages for bad firehose and flink keys, and Flink EFO consumers counting toward the 20
# registered consumers.
#
# usage: bash tests/cli_firehose_flink.sh KDSIM SOURCE_DIR
# shellcheck disable=SC2016 # jq expressions, not shell ones, in single quotes
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# check NAME JQ-EXPRESSION MESSAGE: the expression is true of $tmp/NAME.json.
check() {
    local out
    out=$(jq -e "$2" "$tmp/$1.json" 2>&1) || fail "$1: $3 (jq: $2 -> $out)"
}

# --- firehose-buffering -----------------------------------------------------------------
run fh scenarios/firehose-buffering.yaml
run fh2 scenarios/firehose-buffering.yaml
cmp -s "$tmp/fh.json" "$tmp/fh2.json" || fail "firehose-buffering: two runs printed different JSON"
check fh '[.consumers[].kind] == ["firehose", "firehose"]' "two firehose consumers"
# Conservation (kds_consumer.h): stored = skipped + delivered + unread + expired.
check fh '.stream.records_in as $in | all(.consumers[];
    .records_skipped_at_start + .records_delivered + .records_unread
    + .records_expired_unread == $in)' "a consumer does not account for every stored record"
check fh '.producers[0].records_written as $w | all(.consumers[]; .records_delivered == $w)' \
    "every record written reaches S3"
# s3-size: size-bound, objects = ceil(bytes / 5 MiB), all but the last exactly 5 MiB.
check fh '.consumers[0] | .figures.objects_written
    == ((.bytes_delivered + 5242879) / 5242880 | floor)' "s3-size: objects != ceil(bytes / 5 MiB)"
check fh '.consumers[0].figures | .objects_written == 292 and .objects_by_size == 291
    and .objects_by_interval == 1' "s3-size: expected 291 objects by size and 1 by interval"
check fh '.consumers[0].figures.object_bytes_max == 5242880' "s3-size: largest object is not 5 MiB"
check fh '.consumers[0].figures.object_bytes_min == 81920' "s3-size: the last object is not 80 KiB"
# s3-interval: interval-bound, one object a minute over 1,490 s of data.
check fh '.consumers[1].figures | .objects_written == 25 and .objects_by_interval == 25
    and .objects_by_size == 0' "s3-interval: expected 25 objects, all by the 60 s interval"
check fh '.consumers[1].figures | .delivery_delay_ms_mean > 59000
    and .delivery_delay_ms_mean < 62000' "s3-interval: delivery delay is not about 60 s"
check fh 'all(.consumers[]; .getrecords_calls == 3600)' \
    "one GetRecords per second per shard: 2 shards x 1,800 s"
check fh 'all(.consumers[].figures; .delivery_failures == 0 and .records_lost_after_retries == 0)' \
    "no failures were configured"
check fh '[.assumptions[].setting] | index("consumers[0].put_latency") != null' \
    "the S3 write time is not listed as an assumption"

# --- full backup doubles the calls --------------------------------------------------------
run fhb scenarios/firehose-buffering.yaml --set "consumers[0].full_backup=true"
# The backup call comes half a second after the delivery call: within the last half
# second of the run, one per shard may not be made yet.
check fhb '.consumers[0] | .getrecords_calls == 3600 + .figures.backup_calls
    and .figures.backup_calls >= 3598' \
    "full_backup: expected 3,600 delivery calls and as many backup calls (less one a shard)"
check fhb '.consumers[0].bytes_read_shared == 2 * .consumers[1].bytes_read_shared' \
    "full_backup: the backup does not read the records a second time"

# --- an S3 outage shorter than the retention: retried, nothing lost -------------------------
run fho scenarios/firehose-buffering.yaml --set "consumers[1].delivery.outage.at=5m" \
    --set "consumers[1].delivery.outage.for=3m"
check fho '.consumers[1].figures | .delivery_failures > 0 and .delivery_retries > 0
    and .records_lost_after_retries == 0' "outage: failures retried, nothing lost"
check fho '.producers[0].records_written as $w | .consumers[1].records_delivered == $w' \
    "outage: every record still reaches S3"
# The same outage as one --set of a YAML flow mapping: the same report.
run fhoflow scenarios/firehose-buffering.yaml \
    --set "consumers[1].delivery.outage={at: 5m, for: 3m}"
cmp -s "$tmp/fho.json" "$tmp/fhoflow.json" ||
    fail "outage: --set of {at: 5m, for: 3m} differs from setting at and for one by one"

# --- flink-failure ----------------------------------------------------------------------
run fl scenarios/flink-failure.yaml
run fl2 scenarios/flink-failure.yaml
cmp -s "$tmp/fl.json" "$tmp/fl2.json" || fail "flink-failure: two runs printed different JSON"
check fl '[.consumers[].kind] == ["flink", "flink"]' "two flink consumers"
check fl '.stream.records_in as $in | all(.consumers[];
    .records_skipped_at_start + .records_delivered + .records_unread
    + .records_expired_unread == $in)' "a consumer does not account for every stored record"
check fl 'all(.consumers[]; .duplicates_delivered > 3000
    and .duplicates_delivered == .figures.records_replayed
    and .figures.records_replayed == .figures.records_processed_since_checkpoint)' \
    "duplicates != records processed since the last checkpoint"
check fl 'all(.consumers[].figures; .restarts == 1 and .last_checkpoint_age_ms == 30000
    and .checkpoints == 20)' "one restart, 30 s after the checkpoint of 420 s, 20 checkpoints"
check fl '.consumers[0].getrecords_calls > 0 and .consumers[0].bytes_read_efo == 0' \
    "sessionizer polls"
check fl '.consumers[1].getrecords_calls == 0 and .consumers[1].bytes_read_efo > 0
    and .consumers[1].figures.subscriptions > 0' "sessionizer-efo reads through EFO"
check fl '.consumers[1].latency_ms.p50 < .consumers[0].latency_ms.p50' \
    "EFO is not faster than polling"
# Without the failure: no duplicates.
run fln scenarios/flink-failure.yaml --set "consumers[0].failures[0]=30m" \
    --set "consumers[1].failures[0]=30m"
check fln '(.consumers | length) == 2 and all(.consumers[]; .duplicates_delivered == 0
           and .figures.restarts == 0)' \
    "no failure, yet duplicates"
check fl '(.consumers | length) == 2 and all(.consumers[].figures; .downtime_ms == 20000)' \
    "a failure restarted after its 20 s restart_delay: downtime is not 20,000 ms"
# A failure whose restart lies past the end of the run: down from 1,190 s to the end at
# 1,200 s, and no restart.
run flend scenarios/flink-failure.yaml --set "consumers[0].failures[0]=1190s" \
    --set "consumers[1].failures[0]=1190s"
check flend '(.consumers | length) == 2
             and all(.consumers[].figures; .restarts == 0 and .downtime_ms == 10000)' \
    "a job still down at the end: downtime is not the 10,000 ms from its failure to the end"

# --- bad keys ---------------------------------------------------------------------------
cat >"$tmp/bad.yaml" <<'EOF'
duration: 10m
stream:
  shards: 2
producers:
  - name: web
    rate: 100 records/s
    record_size: 1 KiB
consumers:
  - name: s3
    kind: firehose
    buffering: {size: 200 MiB, interval: 901s}
    delivery: {retry_duration: 3h}
  - name: app
    kind: flink
    retrieval: efo
    poll_interval: 1s
    failures: [5m, 2m]
EOF
"$kdsim" validate "$tmp/bad.yaml" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 2 ] || fail "bad firehose/flink keys: exit status $rc, expected 2"
for msg in \
    "consumers\[0\].buffering.size: must be between 1 MiB and 128 MiB, got 200 MiB" \
    "consumers\[0\].buffering.interval: must be between 0s and 15m, got 901s" \
    "consumers\[0\].delivery.retry_duration: must be between 0s and 2h, got 3h" \
    "consumers\[1\].poll_interval: applies to retrieval: polling only" \
    "consumers\[1\].failures\[1\]: failure times must be in increasing order"; do
    grep -q "$msg" "$tmp/bad.err" || fail "bad keys: no message matching '$msg'"
done

# --- a replay that ends inside a fetched batch --------------------------------------------
# Bursts put the job behind, then let it catch up (a short call at the tip), then behind
# again when it fails: the calls after the restart, 47 records each from the checkpoint,
# no longer end where the calls before the failure did, so one of them holds both the
# last records processed before the failure (replayed) and the first new ones.
cat >"$tmp/straddle.yaml" <<'EOF'
duration: 12m
seed: 7
stream: {shards: 1}
producers:
  - {name: base, rate: 100 records/s, record_size: 1 KiB}
  - name: bursts
    record_size: 1 KiB
    rate: {profile: steps, steps: [{at: 400s, rate: 600/s}, {at: 405s, rate: 0},
                                   {at: 435s, rate: 600/s}, {at: 440s, rate: 0}]}
consumers:
  - {name: job, kind: flink, start_position: trim_horizon, max_records: 47,
     checkpoint_interval: 60s, failures: [450s], restart_delay: 20s}
EOF
run straddle "$tmp/straddle.yaml"
check straddle '.stream.records_in as $in | .consumers[0] | .records_delivered + .records_unread
    + .records_expired_unread + .records_skipped_at_start == $in' \
    "replay inside a batch: a record unaccounted for"
check straddle '.consumers[0] | .duplicates_delivered > 5000
    and .duplicates_delivered == .figures.records_replayed
    and .figures.records_replayed == .figures.records_processed_since_checkpoint' \
    "replay inside a batch: duplicates != records processed since the last checkpoint"

# --- firehose across a split: the parent read to its end, each child from its start -------
run fhsplit tests/scenarios/readers-across-split.yaml
fh='.consumers[] | select(.name == "fh")'
check fhsplit ".stream.records_in as \$in | $fh | .records_delivered + .records_unread
    + .records_expired_unread + .records_skipped_at_start == \$in
    and .records_expired_unread == 0" \
    "firehose across a split: a record unaccounted for, or expired"
# Delivered: all but the last object's worth (1 MiB) and the last second of reads.
check fhsplit ".stream.records_in as \$in | $fh | .records_delivered > \$in - 1500" \
    "firehose across a split: the parent or a child is not read to near its end"
check fhsplit "$fh | .latency_ms.max < 10000" \
    "firehose across a split: records wait more than 10 s at the split"

# --- start positions of the firehose, efo and flink readers -------------------------------
# A position is the n-th record of each shard: at 100 skips 100 a shard, after 100 skips
# 101; a timestamp skips what was written before it; a position not written yet when the
# reader starts reads from the shard's end, as LATEST does (README, kind: polling).
cat >"$tmp/start.yaml" <<'EOF'
duration: 2m
seed: 3
stream: {shards: 2}
producers:
  - {name: p, rate: 100 records/s, record_size: 1 KiB, keys: {kind: uniform, count: 1000}}
consumers:
  - {name: fh-at, kind: firehose, start: 1m,
     start_position: at_sequence_number, start_sequence: 100}
  - {name: fh-after, kind: firehose, start: 1m,
     start_position: after_sequence_number, start_sequence: 100}
  - {name: fh-ts, kind: firehose, start: 1m, start_position: at_timestamp, start_timestamp: 30s}
  - {name: efo-after, kind: efo, start: 1m,
     start_position: after_sequence_number, start_sequence: 100}
  - {name: efo-ts, kind: efo, start: 1m, start_position: at_timestamp, start_timestamp: 30s}
  - {name: efo-future, kind: efo, start_position: at_sequence_number, start_sequence: 100000}
  - {name: fl-after, kind: flink, retrieval: efo, start: 1m,
     start_position: after_sequence_number, start_sequence: 100}
  - {name: fl-ts, kind: flink, start: 1m, start_position: at_timestamp, start_timestamp: 30s}
EOF
run start "$tmp/start.yaml"
check start '.stream.records_in as $in | all(.consumers[];
    .records_skipped_at_start + .records_delivered + .records_unread
    + .records_expired_unread == $in)' \
    "start positions: a consumer does not account for every stored record"
check start '[.consumers[] | select(.name == "fh-at") | .records_skipped_at_start] == [200]' \
    "at_sequence_number 100 on 2 shards does not skip 200 records"
check start '[.consumers[] | select(.name | endswith("-after")) | .records_skipped_at_start]
    == [202, 202, 202]' "after_sequence_number 100 on 2 shards does not skip 202 records"
check start '[.consumers[] | select(.name | endswith("-ts")) | .records_skipped_at_start] as $s
    | ($s | length) == 3 and ($s | unique | length) == 1 and $s[0] >= 2900 and $s[0] <= 3000' \
    "at_timestamp 30s does not skip the 30 s of records written before it, alike for each kind"
check start '.stream.records_in as $in | .consumers[] | select(.name == "efo-future")
    | .records_skipped_at_start == 0 and .records_delivered == $in' \
    "a position not written yet at the start does not read from the shard's end"

# --- 21 Flink applications on EFO: one more than a stream registers -------------------------
{
    printf 'duration: 1m\nstream:\n  shards: 1\nproducers:\n  - {name: web, rate: 10 records/s, record_size: 1 KiB}\nconsumers:\n'
    for i in $(seq 1 21); do
        printf '  - {name: app%d, kind: flink, retrieval: efo}\n' "$i"
    done
    printf '  - {name: poller, kind: flink}\n'
} >"$tmp/efo21.yaml"
"$kdsim" validate "$tmp/efo21.yaml" >/dev/null 2>"$tmp/efo21.err"
rc=$?
[ $rc -eq 2 ] || fail "21 EFO flink consumers: exit status $rc, expected 2"
grep -q "20" "$tmp/efo21.err" || fail "21 EFO flink consumers: no message naming the limit of 20: $(cat "$tmp/efo21.err")"
sed -i '/name: app21,/d' "$tmp/efo21.yaml"
"$kdsim" validate "$tmp/efo21.yaml" >/dev/null 2>"$tmp/efo20.err" ||
    fail "20 EFO flink consumers and a polling one refused: $(cat "$tmp/efo20.err")"

cli_finish cli_firehose_flink
