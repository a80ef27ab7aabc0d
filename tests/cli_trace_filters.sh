#!/usr/bin/env bash
# cli_trace_filters.sh - the trace's filters are checked before anything runs, so that
# none gives an empty trace without a word (exit 2 with a message): a kind no trace line
# has (--trace-kinds puts,foo), a name no entity of the scenario has, a shard a stream
# that never reshards cannot have, a filter without --trace. A shard that resharding
# may create is let through, with a note after the run when it never existed, and so
# is a kind that nothing in the scenario can write (no Lambda for invoke, no polling
# reader for get), with a note saying why before the run. The list
# of kinds the option takes is the one the models write (their sources are read here).
# usage: bash tests/cli_trace_filters.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

two="$tmp/two.yaml"
cat >"$two" <<'YAML'
duration: 10s
stream: {name: s, shards: 2}
producers: [{name: web, rate: 10 records/s, record_size: 1 KiB}]
consumers: [{name: reader, kind: polling}]
YAML
traced() { # NAME STATUS ARGS...: kdsim run TWO --trace $tmp/NAME.trace ARGS
    local name=$1 want=$2
    shift 2
    k "$name" "$want" run "$two" --trace "$tmp/$name.trace" "$@"
}
has() { # NAME TEXT: stderr of NAME holds TEXT
    grep -qF -- "$2" "$tmp/$1.err" || fail "$1: stderr lacks '$2': $(head -c 300 "$tmp/$1.err")"
}

traced kinds-bad 2 --trace-kinds puts,foo &&
    has kinds-bad 'kdsim: --trace-kinds: no trace line has the kind "puts"; the kinds are put, get'
traced kinds-empty 2 --trace-kinds , && has kinds-empty 'expected kinds separated by commas'
traced kinds-ok 0 --trace-kinds put,get
traced names-bad 2 --trace-names nobody &&
    has names-bad 'nothing in '"$two"' is named "nobody"; the stream, producers, consumers and KCL workers (also as CONSUMER/WORKER) are s, web and reader; nothing was run'
traced names-ok 0 --trace-names web,reader,s
traced shard-bad 2 --trace-shard 99 &&
    has shard-bad '--trace-shard 99: the stream has 2 shards, numbered from 0 to 1, and nothing in'
traced shard-id-bad 2 --trace-shard shardId-000000000002
traced shard-ok 0 --trace-shard 1
[ -s "$tmp/shard-ok.trace" ] || fail "--trace-shard 1: no trace written"
for f in kinds names shard; do
    v=put
    [ $f = names ] && v=web
    [ $f = shard ] && v=1
    k "alone-$f" 2 run "$two" "--trace-$f" "$v" &&
        has "alone-$f" "--trace-$f chooses the lines of the event trace: give --trace FILE"
done
[ -e "$tmp/kinds-bad.trace" ] && fail "a refused filter still created the trace file"

# A KCL worker is named alone or as CONSUMER/WORKER.
k kcl 0 run scenarios/kcl-worker-crash.yaml --duration 5s --trace "$tmp/kcl.trace" \
    --trace-names orders-processor/worker-a,worker-b
# A stream that reshards (here a split at 20 minutes) may reach shard 9: let through,
# with a note when the run never created it.
k reshards 0 run scenarios/hot-shard.yaml --duration 5s --trace "$tmp/rs.trace" \
    --trace-shard 9 && has reshards 'kdsim: note: --trace-shard 9: the run'"'"'s shards were 0 to 3'

# A kind nothing in the scenario can write (hot-shard has no Lambda; latency-efo's
# consumers all read through enhanced fan-out) is let through with a note saying why;
# kinds the scenario writes get none.
k nolambda 0 run scenarios/hot-shard.yaml --duration 2s --trace "$tmp/nolambda.trace" \
    --trace-kinds put,invoke &&
    has nolambda 'kdsim: note: --trace-kinds invoke: no line of this kind can come from scenarios/hot-shard.yaml: it has no Lambda consumer; the trace will hold none'
grep -q 'note: --trace-kinds put' "$tmp/nolambda.err" && fail "nolambda: a note about put"
k noget 0 run scenarios/latency-efo.yaml --duration 2s --trace "$tmp/noget.trace" --trace-kinds get &&
    has noget 'kdsim: note: --trace-kinds get: no line of this kind can come from scenarios/latency-efo.yaml: no consumer of it reads by polling (GetRecords); the trace will hold none'
[ "$(wc -l <"$tmp/noget.trace")" = 1 ] || fail "noget: the trace of latency-efo has get lines"
k allkinds 0 run scenarios/acme-clickstream.yaml --duration 2s --trace "$tmp/allkinds.trace" \
    --trace-kinds put,get,push,invoke,s3,checkpoint
grep -q 'note: --trace-kinds' "$tmp/allkinds.err" &&
    fail "allkinds: a note for a kind the flagship writes: $(grep -m1 note "$tmp/allkinds.err")"
traced nonote 0 --trace-kinds put,get
grep -q 'note:' "$tmp/nonote.err" && fail "nonote: a note for put,get: $(cat "$tmp/nonote.err")"

# The kinds the option takes are exactly those the models write.
src=$(grep -ohE '(KDS_TRACING|KDS_TRACE|kds_trace_emit|kds_trace_wants)\([^"]*"[a-z0-9_]+"' \
    models/*.c | grep -oE '"[a-z0-9_]+"$' | tr -d '"' | sort -u | tr '\n' ' ')
listed=$(sed -n 's/.*; the kinds are \(.*\) (README.md.*/\1/p' "$tmp/kinds-bad.err" |
    sed 's/ and /, /; s/, /\n/g' | sort -u | tr '\n' ' ')
[ -n "$src" ] && [ "$src" = "$listed" ] ||
    fail "kinds in the models' sources ($src) differ from --trace-kinds's ($listed)"
for kind in $src; do
    traced "kind-$kind" 0 --trace-kinds "$kind"
done

cli_finish cli_trace_filters
