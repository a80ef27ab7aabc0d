#!/usr/bin/env bash
# cli_messages.sh - the small things the command line says: counts of one in the singular
# (validate's "1 producer", the report's "1 open shard"); the general usage lists every
# option of run (the trace filters, --max-memory) and validate (--seed, --duration,
# --prices), as README's command-line block does; merge --help is merge's own, and sweep,
# merge and run --replications --help describe their options; a --vary value's error
# names --vary, not --set.
# usage: bash tests/cli_messages.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

has() { # NAME TEXT: stdout or stderr of NAME holds TEXT
    grep -qF -- "$2" "$tmp/$1.out" "$tmp/$1.err" ||
        fail "$1: output lacks '$2': $(head -c 300 "$tmp/$1.out" "$tmp/$1.err")"
}
lacks() { # NAME TEXT: neither holds TEXT
    grep -qF -- "$2" "$tmp/$1.out" "$tmp/$1.err" && fail "$1: output holds '$2'"
}

one="$tmp/one.yaml"
cat >"$one" <<'YAML'
duration: 10s
stream: {shards: 1}
producers: [{name: web, rate: 100 records/s, record_size: 1 KiB}]
consumers: [{name: reader, kind: polling}]
YAML
k validate 0 validate "$one" && has validate ": ok (1 producer, 1 consumer, 1 shard)"
k validate2 0 validate "$one" --set stream.shards=2 && has validate2 ": ok (1 producer, 1 consumer, 2 shards)"
k run 0 run "$one" && has run "provisioned, 1 open shard, retention"

# The usage and README list every option.
k usage 2
for opt in '--max-memory S' '--trace FILE' '--trace-kinds' '--trace-shard' '--trace-names'; do
    has usage "$opt"
done
grep -A1 'kdsim validate SCENARIO' "$tmp/usage.err" | tr '\n' ' ' | grep -q -- '--seed N.*--duration T.*--prices FILE' ||
    fail "the usage's validate line lacks --seed, --duration or --prices"
grep -q '^kdsim validate SCENARIO \[--seed N\] \[--duration T\] \[--set KEY.PATH=VALUE\]\.\.\. \[--prices FILE\]$' README.md ||
    fail "README's validate line lacks options validate takes"
k merge-help 0 merge --help && has merge-help "usage: kdsim merge PART..." &&
    has merge-help "--out DIR        write results.csv" && lacks merge-help "usage: kdsim sweep"
k sweep-help 0 sweep --help && has sweep-help "--part K/N       run only part K of N"
k reps-help 0 run "$one" --replications 2 --help && has reps-help "--warmup T       leave the first T"

# --vary's errors name --vary.
k vary 2 plan tests/scenarios/plan-small.yaml --slo lost=0 --vary 'producers[0].batch.records=10,9999' \
    --shards 1..2 --modes provisioned --jobs 1 &&
    has vary "kdsim: --vary: producers[0].batch.records: must be between 1 and 500, got 9999" &&
    lacks vary "--set:"

cli_finish cli_messages
