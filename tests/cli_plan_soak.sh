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
# A fixed range, small enough for every CI run (fuzz/soak/README.md says what to do with
# a seed that fails); a sanitizer build gets longer timeouts (soak_tool, testcli.sh).
soak_tool plan_soak.py 16..17

cli_finish cli_plan_soak
