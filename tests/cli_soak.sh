#!/usr/bin/env bash
# cli_soak.sh - the soak test (fuzz/soak/soak.py) over a fixed range of seeds: each seed
# a random but valid scenario, validated, run twice (byte-identical JSON, exit status 0,
# nothing on stderr, so no sanitizer report and no violated invariant) and its report
# checked against the identities docs/report-json.md and docs/consumers-*.md state.
# The range takes well under a minute with a Release build and a few minutes under the
# sanitizer build; fuzz/soak/README.md says how to run a long soak. Skipped (77) without
# python3.
#
# usage: bash tests/cli_soak.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is not installed (apt-get install python3)"
    exit 77
fi

# A fixed range, small enough for every CI run (fuzz/soak/README.md says what to do with
# a seed that fails). A sanitizer build (one that links AddressSanitizer) is about ten
# times slower: soak.py --asan gives it longer timeouts.
seeds=1..120
asan=()
if nm "$kdsim" 2>/dev/null | grep -q __asan_init; then
    asan=(--asan)
fi
if ! python3 fuzz/soak/soak.py "$kdsim" --seeds "$seeds" --quiet "${asan[@]}"; then
    fail "soak.py --seeds $seeds: a scenario failed its checks (above)"
fi

cli_finish cli_soak
