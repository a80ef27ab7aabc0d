#!/usr/bin/env bash
# cli_plan_soak.sh - the soak of `kdsim plan` (fuzz/soak/plan_soak.py) over a fixed range
# of seeds: each seed soak.py's random scenario planned against targets drawn from the
# seed; each plan's passes, answer and runner-up checked against its own table, and its
# provisioned configurations run on their own with --replications (the same worst
# figures). Two quick seeds: plans take seconds each, so fuzz/soak/README.md says how to
# run many. Skipped (77) without python3.
#
# usage: bash tests/cli_plan_soak.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is not installed (apt-get install python3)"
    exit 77
fi

seeds=16..17
asan=()
if nm "$kdsim" 2>/dev/null | grep -q __asan_init; then
    asan=(--asan)
fi
if ! python3 fuzz/soak/plan_soak.py "$kdsim" --seeds "$seeds" --quiet "${asan[@]}"; then
    fail "plan_soak.py --seeds $seeds: a plan failed its checks (above)"
fi

cli_finish cli_plan_soak
