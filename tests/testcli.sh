# testcli.sh - the start, the checks' bookkeeping and the end every command-line test
# (tests/cli_*.sh) shares: sourced, not run (its name keeps it out of the cli_*.sh glob
# that makes the tests). Sourcing it defines the functions below and sets failed=0.
#
# cli_start "$@": checks that the script got its two arguments, KDSIM (the kdsim
# program) and SOURCE_DIR (the project's source folder), sets $kdsim to the program's
# absolute path and makes SOURCE_DIR the working folder; a usage error exits 2, a
# folder that cannot be entered exits 1.
#
# cli_tmpdir [CLEANUP]: makes a temporary folder, sets $tmp to it, and sets an EXIT trap
# that runs CLEANUP (a shell command, such as stopping what the test started), if given,
# and then removes the folder; a folder that cannot be made exits 1. A script that sets
# its own EXIT trap afterwards replaces this one, and removes $tmp itself.
#
# fail MESSAGE: one failed check: prints "FAIL MESSAGE" on stdout and adds 1 to $failed.
# A check that reports its own failures (a Python script printing FAIL lines) counts
# itself with `failed=$((failed + 1))`.
#
# k NAME EXPECTED_STATUS ARGS...: runs kdsim ARGS (for at most 120 s) with stdout in
# $tmp/NAME.out and stderr in $tmp/NAME.err; when the exit status is not
# EXPECTED_STATUS, fails a check with the command and both statuses, shows the first 20
# lines of stderr and returns 1; else returns 0. A timeout is status 124. Needs $kdsim
# (cli_start) and $tmp (cli_tmpdir).
#
# cli_finish NAME [MESSAGE]: the test's last line (or followed by `exit` where a test
# ends early). With no failed check prints "NAME: MESSAGE" (by default "NAME: all checks
# passed") and returns 0; else prints "NAME: N check(s) failed" and returns 1, so that
# the script exits with that status.

failed=0

cli_start() {
    # The checks' python3 heredocs assert: PYTHONOPTIMIZE would make every assert a no-op.
    unset PYTHONOPTIMIZE
    if [ $# -ne 2 ]; then
        echo "usage: $0 KDSIM SOURCE_DIR" >&2
        exit 2
    fi
    kdsim=$1
    case $kdsim in
    /*) ;;
    *) kdsim=$PWD/$kdsim ;;
    esac
    cd "$2" || exit 1
}

# shellcheck disable=SC2120 # CLEANUP is optional
cli_tmpdir() {
    tmp=$(mktemp -d) || exit 1
    cli_cleanup=${1:-}
    trap 'eval "$cli_cleanup"; rm -rf "$tmp"' EXIT
}

fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
}

k() {
    local name=$1 want=$2
    shift 2
    timeout 120 "$kdsim" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne "$want" ]; then
        fail "kdsim $*: exit status $rc, expected $want"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -20
        return 1
    fi
    return 0
}

# run NAME ARGS...: kdsim run ARGS --json into $tmp/NAME.json; fails a check and
# returns 1 unless the exit status is 0 and stderr is empty. (A script whose runs differ
# defines its own run after sourcing this file.)
run() {
    local name=$1
    shift
    "$kdsim" run "$@" --json >"$tmp/$name.json" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "kdsim run $*: exit status $rc"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -20
        return 1
    fi
}

# soak_tool SCRIPT SEEDS: run one of the soak tools of fuzz/soak (soak.py, metamorphic.py,
# plan_soak.py) over the seeds A..B with --quiet, and --asan (longer timeouts) when kdsim
# links AddressSanitizer; a failed seed fails a check. Exits 77 (skipped) without python3.
soak_tool() {
    if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIP: python3 is not installed (apt-get install python3)"
        exit 77
    fi
    local asan=()
    if nm "$kdsim" 2>/dev/null | grep -q __asan_init; then
        asan=(--asan)
    fi
    if ! python3 "fuzz/soak/$1" "$kdsim" --seeds "$2" --quiet "${asan[@]}"; then
        fail "$1 --seeds $2: a seed failed its checks (above)"
    fi
}

cli_finish() {
    if [ "$failed" -ne 0 ]; then
        echo "$1: $failed check(s) failed"
        return 1
    fi
    echo "$1: ${2:-all checks passed}"
    return 0
}
