#!/usr/bin/env bash
# cli_metamorphic.sh - the metamorphic soak (fuzz/soak/metamorphic.py) over a fixed range
# of seeds: each seed soak.py's random scenario, run several ways that must agree exactly
# (a shorter --duration gives the same trace lines before its end; one more entity that
# starts after the end changes no other entity's trace lines or report figures; --set of
# a key to its own value changes nothing; the trace and its filters change no report, and
# a filtered trace is the full trace's lines that pass the filters). --strict: a failure
# that a known bug explains fails too, so the range holds no seed of a known bug
# (fuzz/soak/README.md, "Known failures"). The range takes under 20 s with a Release
# build, a few minutes under the sanitizer build. Skipped (77) without python3.
#
# usage: bash tests/cli_metamorphic.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is not installed (apt-get install python3)"
    exit 77
fi

# A fixed range, small enough for every CI run (fuzz/soak/README.md says what to do with
# a seed that fails). A sanitizer build (one that links AddressSanitizer) is about ten
# times slower: metamorphic.py --asan gives it longer timeouts.
seeds=31..47
asan=()
if nm "$kdsim" 2>/dev/null | grep -q __asan_init; then
    asan=(--asan)
fi
if ! python3 fuzz/soak/metamorphic.py "$kdsim" --seeds "$seeds" --quiet --strict "${asan[@]}"; then
    fail "metamorphic.py --seeds $seeds: a relation between two runs did not hold (above)"
fi

cli_finish cli_metamorphic
