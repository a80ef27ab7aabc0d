#!/usr/bin/env bash
# cli_sweep_messages.sh - what `kdsim sweep`, `kdsim merge`, `kdsim run --replications`
# and `kdsim plan` say about their options: the capacity-planning commands that take the
# scenario options (--seed, --duration, --set, --prices) take them, and sweep and merge,
# which do not (a sweep gives them in its file), say where they go instead
# (docs/capacity-planning.md).
# usage: bash tests/cli_sweep_messages.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

has() { # NAME TEXT: stdout or stderr of NAME holds TEXT
    grep -qF -- "$2" "$tmp/$1.err" "$tmp/$1.out" ||
        fail "$1: output lacks '$2': $(head -c 300 "$tmp/$1.err")"
}
sc=tests/scenarios/plan-small.yaml
prices=scenarios/prices/us-east-1-2026-09.yaml
scenario_opts=(--seed 3 --duration 10s --set stream.shards=2 --prices "$prices")

# The options docs/capacity-planning.md says run --replications and plan take.
k reps 0 run "$sc" --replications 2 --jobs 1 "${scenario_opts[@]}"
k plan 0 plan "$sc" --slo lost=0 --shards 1..2 --modes provisioned --jobs 1 "${scenario_opts[@]}"
# ...and where a sweep takes them instead.
k sweep-seed 2 sweep tests/sweeps/shards.yaml --seed 3 &&
    has sweep-seed "kdsim: sweep does not take --seed (give seed: N in the sweep file)"
k sweep-duration 2 sweep tests/sweeps/shards.yaml --duration 1m &&
    has sweep-duration "(give duration: T under set: in the sweep file)"
k sweep-set 2 sweep tests/sweeps/shards.yaml --set stream.shards=2 &&
    has sweep-set "(give the overrides under set: in the sweep file)"
k sweep-prices 2 sweep tests/sweeps/shards.yaml --prices "$prices" &&
    has sweep-prices "(give billing.prices: FILE under set: in the sweep file)"
k merge-seed 2 merge "$tmp/part-1-of-2.json" --seed 3 &&
    has merge-seed "kdsim: merge does not take --seed (it combines runs already made"

# The seed is not a parameter: every run's seed is its replication's, so a seed
# parameter (or --vary seed) ran the same runs under other labels. Refused, pointing to
# replications and the master seed.
cat >"$tmp/seedsweep.yaml" <<EOF
scenario: $PWD/$sc
parameters:
  seed: [1, 2, 3]
EOF
k sweep-param-seed 2 sweep "$tmp/seedsweep.yaml" --out "$tmp/seedsweep" &&
    has sweep-param-seed "seedsweep.yaml:3:3: parameters.seed: the seed is not a parameter" &&
    has sweep-param-seed "give more seeds with replications: N, and the master seed with seed: N"
[ -e "$tmp/seedsweep" ] && fail "a sweep of seeds ran"
k plan-vary-seed 2 plan "$sc" --slo lost=0 --shards 2 --vary seed=1,2 &&
    has plan-vary-seed "kdsim: --vary seed: every configuration runs the replications' seeds; " &&
    has plan-vary-seed "give more seeds with --replications N, and the master seed with --seed N"

# Seeds are JSON integers, at most 2^63 - 1: a larger one printed negative (and the
# printed seed was then refused as --seed). Refused where it is read, by every command;
# the largest prints as itself and reads back.
big=9223372036854775808 max=9223372036854775807
for cmd in "run $sc --duration 10s" "run $sc --replications 2" "plan $sc --slo lost=0" \
    "cost $sc" "validate $sc"; do
    # shellcheck disable=SC2086 # the command's words
    k bigseed 2 $cmd --seed $big &&
        has bigseed "kdsim: --seed: at most $max (2^63 - 1: seeds are written as" &&
        has bigseed "JSON integers), got $big"
done
k bigset 2 run "$sc" --duration 10s --set seed=$big &&
    has bigset "seed: must be between 0 and 9223372036854775807, got $big"
printf 'scenario: %s\nseed: %s\n' "$PWD/$sc" "$big" >"$tmp/bigseed.yaml"
k bigsweep 2 sweep "$tmp/bigseed.yaml" --out "$tmp/bigsweep" &&
    has bigsweep "bigseed.yaml:2:7: seed: must be between 0 and 9223372036854775807, got $big"
k maxreps 0 run "$sc" --duration 10s --seed $max --replications 2 --json --jobs 1
k maxtext 0 run "$sc" --duration 10s --seed $max --replications 2 --jobs 1
k maxplan 3 plan "$sc" --duration 10s --seed $max --slo 'p99_ms=0' --shards 2 --modes provisioned \
    --replications 1 --json
seed0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seeds"][0])' \
    "$tmp/maxreps.out")
[ "$seed0" = $max ] || fail "the largest seed printed as $seed0"
grep -q "^seeds: $max [0-9]*$" "$tmp/maxtext.out" ||
    fail "the text's seeds: $(grep seeds "$tmp/maxtext.out")"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["seeds"] == [int(sys.argv[2])]' \
    "$tmp/maxplan.out" $max || fail "the plan's seeds: $(head -c 300 "$tmp/maxplan.out")"
k maxback 0 run "$sc" --duration 10s --seed "$seed0" --json
python3 - "$tmp" <<'EOF' || fail "the printed seed does not read back as --seed"
import json, sys
reps = json.load(open(sys.argv[1] + "/maxreps.out"))
one = json.load(open(sys.argv[1] + "/maxback.out"))
assert one["seed"] == reps["runs"][0]["seed"] == 2**63 - 1, one["seed"]
assert one["stream"]["records_in"] == reps["runs"][0]["figures"]["stream.records_in"]
EOF

# An empty --out names nothing: refused before any run by every command (a sweep's and a
# merge's once read past the end of the copied name; run's ran, then failed to write).
for cmd in "sweep tests/sweeps/shards.yaml" "merge $tmp/part-1-of-2.json" \
    "run $sc --duration 10s" "run $sc --replications 2" "plan $sc --slo lost=0"; do
    # shellcheck disable=SC2086 # the command's words
    k emptyout 2 $cmd --out "" && has emptyout "kdsim: --out needs a value, got an empty one"
done

# A sweep's name is the folder of its results, out/NAME: one that would leave out/ (or
# is empty) is refused before any run.
for name in '"../escape"' '""' '".."' '"a/b"'; do
    printf 'name: %s\nscenario: %s\nparameters:\n  stream.shards: [1]\n' "$name" "$PWD/$sc" \
        >"$tmp/named.yaml"
    k named 2 sweep "$tmp/named.yaml" --out "$tmp/named" &&
        has named "named.yaml:1:7: name: a sweep's name is the folder of its results (out/NAME)"
    [ -e "$tmp/named" ] && fail "the sweep named $name ran"
done

# An --out that is a file is refused before any run, with exit status 2, by every
# command that writes a folder (sweep and merge said "File exists", replications and plan
# "Not a directory", each with status 1).
: >"$tmp/afile"
for cmd in "sweep tests/sweeps/shards.yaml" "merge $tmp/part-1-of-2.json" \
    "run $sc --duration 10s" "run $sc --replications 2" "plan $sc --slo lost=0"; do
    # shellcheck disable=SC2086 # the command's words
    k afile 2 $cmd --out "$tmp/afile" &&
        has afile "kdsim: --out $tmp/afile: this is a file, not a directory; give a directory"
done

cli_finish cli_sweep_messages
