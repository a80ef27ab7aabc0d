#!/usr/bin/env bash
# cli_bad_scenarios.sh - every broken scenario in tests/scenarios/bad/ is refused with
# exactly the messages its .expected file holds, and nothing is written.
#
# usage: bash tests/cli_bad_scenarios.sh KDSIM SOURCE_DIR
#
# For each tests/scenarios/bad/NN-name.yaml, both `kdsim validate FILE` and
# `kdsim run FILE --out TMP/out` are run from SOURCE_DIR (so messages name
# tests/scenarios/bad/...) and must: exit with status 2, print nothing on stdout, print
# on stderr exactly the lines of NN-name.expected (the per-error lines and the final
# "kdsim: N errors in FILE; nothing was run"), and, for run, not create TMP/out.
#
# A case with an NN-name.pending file is a known loader bug or poor message: its
# .expected holds the wording the fix should produce, the .pending file says what is
# wrong and how to fix it. Its stderr mismatch is reported as PENDING, not as a failure
# (set KDSIM_SHOW_PENDING=1 to see the diffs); exit status, stdout and the --out check
# still apply. Once the fix lands and the stderr matches, delete the .pending file.
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

n=0
pending=0
got='' want='' got_validate='' got_run='' # set by slurp

# slurp FILE VAR: the whole of FILE into VAR, without a fork (the corpus is run twice per
# case, and on a loaded machine every process costs tens of milliseconds).
slurp() {
    IFS= read -r -d '' "$2" <"$1" || true
}

# run_case CMD YAML -> sets rc; writes $tmp/CMD.out and $tmp/CMD.err
run_case() {
    [ -e "$tmp/out" ] && rm -rf "$tmp/out"
    if [ "$1" = validate ]; then
        "$kdsim" validate "$2" >"$tmp/$1.out" 2>"$tmp/$1.err"
    else
        "$kdsim" run "$2" --out "$tmp/out" >"$tmp/$1.out" 2>"$tmp/$1.err"
    fi
    rc=$?
}

shopt -s nullglob
cases=(tests/scenarios/bad/*.yaml)
if [ ${#cases[@]} -eq 0 ]; then
    echo "FAIL no scenarios in tests/scenarios/bad/"
    exit 1
fi

for yaml in "${cases[@]}"; do
    base=${yaml%.yaml}
    name=${base##*/}
    expected=$base.expected
    n=$((n + 1))
    if [ ! -f "$expected" ]; then
        fail "$name: $expected is missing"
        continue
    fi
    is_pending=0
    [ -f "$base.pending" ] && is_pending=1
    slurp "$expected" want
    matched=0 # commands whose stderr matched
    for cmd in validate run; do
        what="kdsim $cmd $yaml"
        [ "$cmd" = run ] && what="$what --out DIR"
        run_case "$cmd" "$yaml"
        if [ "$rc" -ne 2 ]; then
            fail "$name: '$what' exited with status $rc, expected 2"
            sed 's/^/    stderr: /' "$tmp/$cmd.err" | head -20
        fi
        if [ -s "$tmp/$cmd.out" ]; then
            fail "$name: '$what' printed on stdout:"
            sed 's/^/    stdout: /' "$tmp/$cmd.out" | head -20
        fi
        if [ "$cmd" = run ] && [ -e "$tmp/out" ]; then
            fail "$name: '$what' created the --out directory for a bad scenario"
            find "$tmp/out" | sed "s|^$tmp/|    |"
        fi
        slurp "$tmp/$cmd.err" got
        if [ "$got" = "$want" ]; then
            matched=$((matched + 1))
            continue
        fi
        if [ $is_pending -eq 0 ]; then
            fail "$name: '$what' printed other messages than $expected:"
        elif [ "${KDSIM_SHOW_PENDING:-0}" != 1 ]; then
            continue
        fi
        diff -u --label "$expected (expected)" --label "$what (stderr)" "$expected" "$tmp/$cmd.err"
    done
    slurp "$tmp/validate.err" got_validate
    slurp "$tmp/run.err" got_run
    if [ "$got_validate" != "$got_run" ]; then
        fail "$name: validate and run print different messages:"
        diff -u --label validate --label run "$tmp/validate.err" "$tmp/run.err"
    fi
    if [ $is_pending -eq 1 ]; then
        if [ $matched -eq 2 ]; then
            echo "note: $name now prints its expected messages; delete $base.pending"
        else
            pending=$((pending + 1))
            echo "PENDING $name: known problem, see $base.pending"
        fi
    fi
done

echo "cli_bad_scenarios: $n scenarios, $pending pending (known problems)"
cli_finish cli_bad_scenarios
