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
    has plan-vary-seed "kdsim: --vary seed: every configuration runs the replications' seeds; give more seeds with --replications N, and the master seed with --seed N"

cli_finish cli_sweep_messages
