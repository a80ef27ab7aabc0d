#!/usr/bin/env bash
# sweep_speedup.sh - the speed-up of `kdsim sweep` on all cores over one worker: the
# sweep bench/sweep-speedup.yaml (12 independent runs of the flagship's hour) run with
# --jobs 1 and with --jobs N (default: every core), alternately, RUNS times each (default
# 5); prints both medians of wall time and their ratio, and checks that both wrote the
# same table. The plots (a serial 0.2 s or so at the end) are left out: the figure is the
# speed-up of the runs. The load average printed is taken after the measurement (it
# includes the benchmark's own load). Run from the source folder on an idle machine:
#
#   bash bench/sweep_speedup.sh ./build-rel/kdsim [RUNS] [N]
set -euo pipefail
kdsim=${1:?usage: bash bench/sweep_speedup.sh KDSIM [RUNS] [N]}
runs=${2:-5}
n=${3:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wall ARGS...: the wall time of `kdsim sweep bench/sweep-speedup.yaml ARGS`, seconds.
wall() {
    local t0 t1
    t0=$(date +%s.%N)
    "$kdsim" sweep bench/sweep-speedup.yaml --no-plots "$@" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

"$kdsim" sweep bench/sweep-speedup.yaml --jobs 1 --out "$tmp/warm" >/dev/null # caches warm
for i in $(seq 1 "$runs"); do
    wall --jobs 1 --out "$tmp/one" >>"$tmp/one.txt"
    wall --jobs "$n" --out "$tmp/all" >>"$tmp/all.txt"
done
cmp -s "$tmp/one/results.csv" "$tmp/all/results.csv" || { echo "the tables differ" >&2; exit 1; }
m1=$(median <"$tmp/one.txt")
mn=$(median <"$tmp/all.txt")
printf 'sweep of 12 runs: --jobs 1 %.2f s, --jobs %d %.2f s (medians of %d), speed-up %.2fx on %d cores (load average after: %s)\n' \
    "$m1" "$n" "$mn" "$runs" "$(awk -v a="$m1" -v b="$mn" 'BEGIN {print a / b}')" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
