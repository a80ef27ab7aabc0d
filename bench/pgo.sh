#!/usr/bin/env bash
# pgo.sh - build kdsim with profile-guided optimisation (and LTO) in BUILD_DIR: an
# instrumented build, a training run of the flagship and the polling flagship (their
# hot paths are the put path, enhanced fan-out pushes, Lambda, Firehose and polling),
# then the optimised build over the same folder. Reports are byte-identical to a plain
# build's; the README's "Performance" section says what it gains.
#
# usage: bash bench/pgo.sh [BUILD_DIR]   (default build-pgo; run from the source folder)
set -eu

build=${1:-build-pgo}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build"
profile=$(cd "$build" && pwd)/pgo-profile
jobs=$(nproc 2>/dev/null || echo 2)

rm -rf "$profile"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKDSIM_LTO=ON \
    -DKDSIM_PGO=GENERATE -DKDSIM_PGO_DIR="$profile" >/dev/null
cmake --build "$build" -j "$jobs" --target kdsim bench_scenario bench_scale >/dev/null
"$build/kdsim" run "$src/scenarios/acme-clickstream.yaml" --duration 6h >/dev/null
"$build/kdsim" run "$src/bench/flagship-polling.yaml" --duration 6h >/dev/null
cmake -S "$src" -B "$build" -DKDSIM_PGO=USE >/dev/null
cmake --build "$build" -j "$jobs" --target kdsim bench_scenario bench_scale >/dev/null
echo "pgo.sh: $build/kdsim and $build/bench/ built with the profile in $profile"
