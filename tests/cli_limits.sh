#!/usr/bin/env bash
# cli_limits.sh - absurd input gets a clear error or a documented limit, never a crash,
# a hang or an out-of-memory kill (issue 9), among them the limits of 10,000 producers
# (1,000,000 clients in all) and of 20 enhanced fan-out consumers per stream (50 under
# On-demand Advantage); the --max-memory guard stops a run cleanly and writes nothing,
# whether building the world or running it outgrew the budget.
# usage: bash tests/cli_limits.sh KDSIM SRCDIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir
f=scenarios/acme-clickstream.yaml

expect() { # want-status description command...
    local want=$1 what=$2
    shift 2
    timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != "$want" ]; then
        fail "$what: exit status $rc, expected $want; stderr: $(head -c 400 "$tmp/err")"
        return 1
    fi
    return 0
}
expect_msg() { # text description
    grep -qF -- "$1" "$tmp/err" || fail "$2: stderr lacks '$1': $(head -c 400 "$tmp/err")"
}

expect 2 "100 years" "$kdsim" validate "$f" --duration 36500d
expect_msg "must be between 1ms and 400d" "100 years"
expect 2 "a billion clients" "$kdsim" validate "$f" --set 'producers[0].clients=1000000000'
expect_msg "clients" "a billion clients"
# 10,000 producers is the limit (scenario.c's MAX_PRODUCERS); one more is refused with
# a message pointing at clients: N, and the limit itself is accepted.
producers() { # N: a scenario with N one-record-a-second producers
    printf 'name: many-producers\nduration: 1m\nstream: {name: s, mode: provisioned, shards: 1}\nproducers:\n'
    awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "  - {name: p%d, rate: 1 records/s, record_size: 1 KiB}\n", i }'
}
producers 10001 >"$tmp/10001.yaml"
producers 10000 >"$tmp/10000.yaml"
expect 2 "10,001 producers" "$kdsim" validate "$tmp/10001.yaml"
expect_msg "at most 10000 producers, got 10001 (use clients: N" "10,001 producers"
expect 0 "10,000 producers" "$kdsim" validate "$tmp/10000.yaml"
grep -qF "ok (10000 producers" "$tmp/out" || fail "10,000 producers: $(head -c 400 "$tmp/out")"
# ...and their clients together at most 1,000,000: 10,000 producers of 100,000 clients
# each (10^9 senders) would take some 100 GB before the memory guard's first look.
producers 10000 | sed '/^  - {name: p/s/}$/, clients: 100000}/' >"$tmp/clients.yaml"
expect 2 "10^9 clients" "$kdsim" validate "$tmp/clients.yaml"
expect_msg "producers: 1000000000 clients in all producers together; at most 1000000" "10^9 clients"
producers 10 | sed '/^  - {name: p/s/}$/, clients: 100000}/' >"$tmp/clients-ok.yaml"
expect 0 "10^6 clients" "$kdsim" validate "$tmp/clients-ok.yaml"
# RegisterStreamConsumer: at most 20 enhanced fan-out consumers per stream, 50 under
# On-demand Advantage (scenario.c).
efo_consumers() { # MODE N: a stream in MODE read by N EFO consumers
    printf 'name: many-efo\nduration: 1m\nstream: {name: s, mode: %s, shards: 4}\n' "$1"
    printf 'producers:\n  - {name: p, rate: 1 records/s, record_size: 1 KiB}\nconsumers:\n'
    awk -v n="$2" 'BEGIN { for (i = 1; i <= n; i++) printf "  - {name: c%d, kind: efo}\n", i }'
}
efo_consumers provisioned 20 >"$tmp/efo-20.yaml"
efo_consumers on_demand_standard 21 >"$tmp/efo-21.yaml"
efo_consumers on_demand_advantage 50 >"$tmp/efo-50-advantage.yaml"
efo_consumers on_demand_advantage 51 >"$tmp/efo-51-advantage.yaml"
expect 0 "20 EFO consumers" "$kdsim" validate "$tmp/efo-20.yaml"
expect 2 "21 EFO consumers" "$kdsim" validate "$tmp/efo-21.yaml"
expect_msg "21 consumers use enhanced fan-out; a stream registers at most 20 (LimitExceededException); On-demand Advantage allows 50" "21 EFO consumers"
expect 0 "50 EFO consumers under Advantage" "$kdsim" validate "$tmp/efo-50-advantage.yaml"
expect 2 "51 EFO consumers under Advantage" "$kdsim" validate "$tmp/efo-51-advantage.yaml"
expect_msg "51 consumers use enhanced fan-out; a stream registers at most 50 (LimitExceededException)" "51 EFO consumers under Advantage"
expect 2 "a record of 0 bytes" "$kdsim" validate "$f" --set 'producers[0].record_size=0 B'
expect_msg "at least 1 B" "a record of 0 bytes"
expect 2 "a negative rate" "$kdsim" validate "$f" --set 'producers[0].rate=-5 records/s'
expect 2 "an absurd rate" "$kdsim" validate "$f" --set 'producers[0].rate=1000000000000 records/s'
expect 2 "retention above 8,760 h" "$kdsim" validate "$f" --set stream.retention=9000h
expect_msg "stream.retention" "retention above 8,760 h"
expect 2 "100,000 shards" "$kdsim" validate "$f" --set stream.shards=100000
expect 2 "a bad --max-memory" "$kdsim" run "$f" --max-memory lots
expect_msg "--max-memory" "a bad --max-memory"

# The memory guard: a budget below what building the world takes stops it before its
# first event, with a message, exit status 1 and no output folder; `cost` too.
expect 1 "--max-memory too small" "$kdsim" run "$f" --duration 1h --max-memory 1MiB --out "$tmp/o"
expect_msg "building the scenario took more than 1 MiB of memory (--max-memory)" "--max-memory too small"
[ -e "$tmp/o" ] && fail "--max-memory too small: wrote $tmp/o"
expect 1 "cost --max-memory too small" "$kdsim" cost "$f" --max-memory 1MiB
expect_msg "(--max-memory)" "cost --max-memory too small"
# A run that grows past its budget stops during the run: a reader stalled for the whole
# hour keeps every one of 3,000 PutRecord runs a second from compaction (some 90 MiB
# by 10 minutes).
cat >"$tmp/grow.yaml" <<'EOF2'
name: grow
duration: 1h
stream: {name: s, shards: 4}
producers:
  - {name: p, rate: 3000 records/s, record_size: 100 B, api: put_record}
consumers:
  - {name: stuck, kind: polling, pause: {at: 0s, for: 1h}}
EOF2
expect 1 "--max-memory outgrown during the run" "$kdsim" run "$tmp/grow.yaml" --max-memory 64MiB --out "$tmp/o"
expect_msg "simulated: it needed more than 64 MiB of memory (--max-memory)" "--max-memory outgrown during the run"
grep -qF "stopped at 0s" "$tmp/err" && fail "--max-memory outgrown during the run: stopped before running"
[ -e "$tmp/o" ] && fail "--max-memory outgrown during the run: wrote $tmp/o"
# With --trace the trace is kept, and the message says so.
expect 1 "--max-memory outgrown with a trace" "$kdsim" run "$tmp/grow.yaml" --max-memory 64MiB \
    --trace "$tmp/grow.trace" --trace-kinds get
expect_msg "no report was written; the trace $tmp/grow.trace holds the events up to the stop" \
    "--max-memory outgrown with a trace"
[ -s "$tmp/grow.trace" ] || fail "--max-memory outgrown with a trace: no trace"
# ...and a sensible budget lets it finish.
expect 0 "--max-memory 2 GiB" "$kdsim" run "$f" --duration 2m --max-memory 2GiB

cli_finish cli_limits
