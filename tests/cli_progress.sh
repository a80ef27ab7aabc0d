#!/usr/bin/env bash
# cli_progress.sh - the progress line of long runs (cli/progress.c): on a terminal, stderr
# shows simulated time, percent done, events/s, simulated seconds per wall second and the
# time left, redrawn in place and erased at the end; the reports are byte-identical to a
# run without it (the world runs in slices, which changes nothing); a stderr that is not
# a terminal gets no progress line, and neither do the reports.
#
# The terminal is a pseudo-terminal from script(1) (util-linux); without it the test is
# skipped (exit 77). KDSIM_PROGRESS_AFTER=0 shows the line from the first slice, where a
# user sees it only once a run has taken half a second.
#
# usage: bash tests/cli_progress.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir
if ! command -v script >/dev/null 2>&1; then
    echo "SKIP: script(1) is not installed (util-linux): no terminal to test the progress line on"
    exit 77
fi
sc=scenarios/acme-clickstream.yaml
args="run $sc --duration 1h --json"

# On a terminal: stderr is the pseudo-terminal, stdout a file.
KDSIM_PROGRESS_AFTER=0 script -qfec "'$kdsim' $args >'$tmp/tty.json'" "$tmp/typescript" >/dev/null 2>&1 </dev/null
tr '\r' '\n' <"$tmp/typescript" >"$tmp/lines"
line='kdsim: [0-9hms.]+ of 1h00m simulated \([0-9]+\.[0-9]%\), [0-9.]+[kMG]? events/s, [0-9.]+[kMG]? simulated s per wall s, about [0-9hms.?]+ left'
grep -Eq "$line" "$tmp/lines" || fail "no progress line on the terminal: $(head -c 300 "$tmp/typescript" | cat -v)"
# Erased at the end: the last thing written is a carriage return and erase-line.
last=$(grep -v '^Script ' "$tmp/typescript" | tr -d '\n' | tail -c 8 | od -An -c | tr -s ' ')
case $last in
*'\r 033 [ K'*) ;;
*) fail "the progress line is not erased at the end: ends with '$last'" ;;
esac
# Percentages never go down.
grep -Eo '\([0-9]+\.[0-9]%\)' "$tmp/lines" | tr -d '()%' | awk 'NR > 1 && $1 < p { bad = 1 } { p = $1 } END { exit bad }' ||
    fail "the percentage went down"

# The same run without a terminal: no progress, the same report, byte for byte.
KDSIM_PROGRESS_AFTER=0 "$kdsim" $args >"$tmp/plain.json" 2>"$tmp/plain.err"
[ -s "$tmp/plain.err" ] && fail "stderr that is a file got: $(head -c 200 "$tmp/plain.err" | cat -v)"
cmp -s "$tmp/tty.json" "$tmp/plain.json" || fail "the JSON report differs when the run goes in slices"
grep -q 'events/s' "$tmp/tty.json" && fail "the progress line reached the report"

cli_finish cli_progress
