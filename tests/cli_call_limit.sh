#!/usr/bin/env bash
# cli_call_limit.sh - the stream's GetRecords limit, limits.max_records_per_call, caps the
# calls of every polling reader (polling, firehose, flink, lambda, kcl), not only the ones
# that have no max_records of their own: in tests/scenarios/max-records-per-call.yaml
# each reader's largest GetRecords reply in the trace is exactly the limit of 100.
#
# usage: bash tests/cli_call_limit.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

s=tests/scenarios/max-records-per-call.yaml
if k run 0 run "$s" --trace "$tmp/t" --trace-kinds get; then
    # entity largest-reply calls, for every reply that holds records
    awk '$2 == "get" && $5 == "GetRecords:" && $6 ~ /^[0-9]+$/ {
             n[$3]++; if ($6 + 0 > m[$3]) m[$3] = $6 + 0 }
         END { for (e in m) print e, m[e], n[e] }' "$tmp/t" | sort >"$tmp/largest"
    for e in f fl k/w1 l q; do
        line=$(grep "^$e " "$tmp/largest")
        [ -n "$line" ] || fail "$e: no GetRecords reply in the trace"
        [ -z "$line" ] || [ "$(echo "$line" | cut -d' ' -f2)" = 100 ] ||
            fail "$e: largest GetRecords reply $(echo "$line" | cut -d' ' -f2) records, not 100"
    done
fi

cli_finish cli_call_limit
