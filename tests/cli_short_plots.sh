#!/usr/bin/env bash
# cli_short_plots.sh - a run shorter than a minute, or one whose minutes merged past its
# end, draws every plot of --out without a gnuplot warning: a minute that the run's end
# cuts short is drawn at the middle of its part in the run (plots/common.gp), where its
# middle would have left the plot empty ("all points y value undefined"), and a one-column
# heat map as boxes. Needs gnuplot (skipped without it).
# usage: bash tests/cli_short_plots.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

if ! command -v gnuplot >/dev/null; then
    echo "SKIP: gnuplot is not installed: nothing checked"
    exit 77 # ctest's SKIP_RETURN_CODE: skipped, not passed
fi
lacks() { # NAME TEXT: stderr of NAME does not hold TEXT
    grep -qF -- "$2" "$tmp/$1.err" && fail "$1: stderr holds '$2': $(head -c 600 "$tmp/$1.err")"
}
one="$tmp/one.yaml"
cat >"$one" <<'YAML'
duration: 10s
stream: {shards: 1}
producers: [{name: web, rate: 100 records/s, record_size: 1 KiB}]
consumers: [{name: reader, kind: polling}]
YAML
drew_all() { # NAME: every plot of plots.sh has its PNG
    local want got
    want=$(grep -c '^  -e "reset session"' "$tmp/$1/plots/plots.sh")
    got=$(ls "$tmp/$1"/plots/*.png | wc -l)
    [ "$want" -gt 0 ] && [ "$got" = "$want" ] || fail "$1 drew $got of its $want plots"
}
for d in 10s 29s 90s; do
    k "short-$d" 0 run "$one" --duration "$d" --out "$tmp/short-$d" && lacks "short-$d" warning &&
        drew_all "short-$d"
done
# Many shards: the heat maps of a 10 s run.
k heat 0 run "$one" --set stream.shards=40 --set 'producers[0].rate=20000 records/s' \
    --out "$tmp/heat" && lacks heat warning && drew_all heat
# Heavy tails deliver records 1000 days on: the consumers' minutes merge into steps longer
# than the whole run.
k heavy 0 run tests/scenarios/heavy-tails.yaml --out "$tmp/heavy" && lacks heavy warning &&
    drew_all heavy

cli_finish cli_short_plots
