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
# A fixed range, small enough for every CI run (fuzz/soak/README.md says what to do with
# a seed that fails); a sanitizer build gets longer timeouts (soak_tool, testcli.sh).
soak_tool soak.py 1..120

cli_finish cli_soak
