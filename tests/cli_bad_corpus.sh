#!/usr/bin/env bash
# cli_bad_corpus.sh - the corpus of broken scenarios (tests/scenarios/bad/) is complete
# and consistent, so that cli_bad_scenarios.sh checks what it seems to check.
#
# usage: bash tests/cli_bad_corpus.sh KDSIM SOURCE_DIR   (KDSIM is not used)
#
# Rules: files are named NN-short-name.{yaml,expected,pending} (two digits, lower-case
# words joined by '-'), each number used once; every .yaml has a .expected; every
# .expected and .pending has its .yaml; a .pending file says why (is not empty); every
# .expected line starts with "kdsim: " and names its own file (or --set), and its last
# line is the summary "kdsim: N error(s) in FILE; nothing was run" with N the number of
# lines above it. README.md is the only other file allowed.
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
dir=tests/scenarios/bad

shopt -s nullglob
yamls=("$dir"/*.yaml)
[ ${#yamls[@]} -gt 0 ] || fail "no scenarios in $dir"

declare -A numbers=()
for f in "$dir"/* "$dir"/.[!.]*; do
    file=${f##*/}
    [ "$file" = README.md ] && continue
    stem=${file%.*}
    ext=${file##*.}
    if ! [[ $file =~ ^[0-9][0-9]-[a-z0-9]+(-[a-z0-9]+)*\.(yaml|expected|pending)$ ]]; then
        fail "$f: name is not NN-short-name.yaml, .expected or .pending"
        continue
    fi
    case $ext in
    yaml)
        num=${file%%-*}
        if [ -n "${numbers[$num]:-}" ]; then
            fail "$f: number $num is also used by ${numbers[$num]}"
        fi
        numbers[$num]=$file
        [ -f "$dir/$stem.expected" ] || fail "$f has no $stem.expected"
        ;;
    expected | pending)
        [ -f "$dir/$stem.yaml" ] || fail "$f has no $stem.yaml"
        ;;
    esac
    if [ "$ext" = pending ] && [ ! -s "$f" ]; then
        fail "$f is empty; say what is wrong and how to fix it"
    fi
    if [ "$ext" = expected ]; then
        # Builtins only: a fork per file would cost seconds on a loaded machine.
        IFS= read -r -d '' text <"$f" || true
        mapfile -t lines <"$f"
        n=${#lines[@]}
        if [ "$n" -lt 2 ]; then
            fail "$f: expected at least one message and the summary line"
            continue
        fi
        [ "${text: -1}" = $'\n' ] || fail "$f: the last line has no newline"
        yaml=$dir/$stem.yaml
        errors=$((n - 1))
        plural=s
        [ $errors -eq 1 ] && plural=
        summary="kdsim: $errors error$plural in $yaml; nothing was run"
        last=${lines[n - 1]}
        [ "$last" = "$summary" ] || fail "$f: last line is '$last', expected '$summary'"
        for ((i = 0; i < n - 1; i++)); do
            case ${lines[i]} in
            "kdsim: $yaml:"* | "kdsim: --set: "*) ;;
            *) fail "$f:$((i + 1)): does not start with 'kdsim: $yaml:': ${lines[i]}" ;;
            esac
        done
    fi
done

cli_finish cli_bad_corpus "${#yamls[@]} scenarios, all checks passed"
