#!/usr/bin/env bash
# cli_write_path.sh - the write path's rules as a scenario sets them: a producer with
# sequence_number_for_ordering sends one PutRecord at a time per client, so its records
# pile up in its buffer, which the JSON report (records_buffered, and the key
# sequence_number_for_ordering, present only then) and the text report (a line under
# Producers) show; a producer without it leaves nothing buffered.
#
# usage: bash tests/cli_write_path.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# 1,200 records/s of one key for 2 minutes, one client: about 44 records/s get through
# (one per round trip, 20 ms median), the rest wait.
cat >"$tmp/so.yaml" <<'YAML'
name: so
duration: 2m
stream: {name: s, shards: 1}
producers:
  - name: p
    rate: 1200 records/s
    record_size: 1 KiB
    api: put_record
    keys: {kind: fixed, key: order-1}
    sequence_number_for_ordering: true
YAML
sed 's/    sequence_number_for_ordering: true//' "$tmp/so.yaml" >"$tmp/free.yaml"
if k so 0 run "$tmp/so.yaml" --json && k so-text 0 run "$tmp/so.yaml" &&
    k free 0 run "$tmp/free.yaml" --json; then
    python3 - "$tmp/so.out" "$tmp/free.out" <<'PY' || failed=$((failed + 1))
import json, sys
bad = []
p = json.load(open(sys.argv[1]))["producers"][0]
if p.get("sequence_number_for_ordering") is not True:
    bad.append("ordered: no sequence_number_for_ordering: true in the report")
if not 3000 <= p["records_attempted"] <= 7000:
    bad.append(f"ordered: {p['records_attempted']} records sent in 2 minutes, expected about "
               "44 a second")
if p["put_calls"] != p["records_attempted"]:
    bad.append(f"ordered: {p['put_calls']} calls for {p['records_attempted']} records")
if p["records_attempted"] + p["records_buffered"] < 143000:
    bad.append(f"ordered: {p['records_buffered']} buffered, not what was not sent")
if p["write_throttled_records"] != 0:
    bad.append(f"ordered: {p['write_throttled_records']} throttled, one at a time cannot be")
q = json.load(open(sys.argv[2]))["producers"][0]
if "sequence_number_for_ordering" in q or q["records_buffered"] != 0:
    bad.append(f"unordered: {q}")
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
    grep -Eq '^  p: [0-9]+ records still in its clients. buffers at the end \(sequence_number_for_ordering: one PutRecord in flight per client' "$tmp/so-text.out" ||
        fail "ordered: the text report does not say what is left in the buffer"
fi

cli_finish cli_write_path
