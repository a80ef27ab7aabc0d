#!/usr/bin/env bash
# scripts/setup.sh - set kdsim up on a Debian 12 machine and run it.
#
#   bash scripts/setup.sh demo   install what is missing, build, run the flagship scenario
#   bash scripts/setup.sh test   install what is missing, build, run every test (also under
#                                AddressSanitizer + UndefinedBehaviorSanitizer)
#
# Installing needs root (or sudo). Builds go to build/ (Release, warnings as errors) and
# build-asan/ (sanitizers); both are reused when they exist.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-demo}
case "$mode" in demo|test) ;; *) echo "usage: bash scripts/setup.sh demo|test" >&2; exit 2 ;; esac

# gnuplot draws the plots of `kdsim run --out DIR` (without it the data is still written).
packages=(gcc make cmake pkg-config libgsl-dev libyaml-dev check libsubunit-dev
          libjansson-dev nettle-dev gnuplot-nox)
# The command-line tests check their output with python3, and report.html in headless
# Chromium (Debian's chromium package).
[ "$mode" = test ] && packages+=(python3 chromium)
# check_sim_units builds a comma-decimal locale (de_DE.UTF-8) from glibc's locale
# sources, Debian's locales package.
[ "$mode" = test ] && packages+=(locales)
# The tests also fuzz with clang's libFuzzer.
[ "$mode" = test ] && packages+=(clang libclang-rt-14-dev valgrind)
# tests/cli_out_dir.sh makes a rename fail on purpose with strace's fault injection.
[ "$mode" = test ] && packages+=(strace)
# The cluster recipes run for real in the tests: a one-node Slurm (its daemons started by
# tests/cli_cluster_slurm.sh itself, no systemd needed) and GNU parallel.
[ "$mode" = test ] && packages+=(parallel slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKDSIM_WERROR=ON >/dev/null
cmake --build build -j"$jobs"

if [ "$mode" = demo ]; then
  exec ./build/kdsim run scenarios/acme-clickstream.yaml
fi

ctest --test-dir build --output-on-failure -j"$jobs"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKDSIM_SANITIZE=ON -DKDSIM_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

# Every Check suite under valgrind's memcheck (the plain build: valgrind and ASan do not
# mix).
bash scripts/valgrind.sh build

# A short fuzz run of every target, seeded with the shipped scenarios, the broken ones,
# the soak's scenarios, the price file and the unit corpus (fuzz/README.md says how to
# run a longer one).
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKDSIM_FUZZ=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_scenario fuzz_prices fuzz_units
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/scenario" "$corpus/prices" "$corpus/units"
cp scenarios/*.yaml tests/scenarios/bad/*.yaml fuzz/corpus/scenario/* "$corpus/scenario/"
cp scenarios/prices/*.yaml "$corpus/prices/"
cp fuzz/corpus/units/* "$corpus/units/"
# ...and 40 random valid scenarios of the soak's generator, which reach corners of the
# scenario language the shipped ones do not (KCL worker events, replayed rates,
# resharding): the fuzzer starts from 2,861 covered edges instead of 2,175. The soak's own
# verdict is tests/cli_soak.sh's; here it only writes the scenarios.
python3 fuzz/soak/soak.py build/kdsim --seeds 1..40 --keep "$corpus/soak" --quiet >/dev/null || true
cp "$corpus"/soak/seed-*.yaml "$corpus/scenario/" 2>/dev/null || true
for t in scenario prices units; do
  cp tests/fuzz-regressions/$t/* "$corpus/$t/" 2>/dev/null || true
  echo "setup: fuzzing $t for ${KDSIM_FUZZ_SECONDS:-30} s" >&2
  ./build-fuzz/fuzz/fuzz_$t "$corpus/$t" -max_total_time="${KDSIM_FUZZ_SECONDS:-30}" \
    -rss_limit_mb=4096 -timeout=30 -artifact_prefix="build-fuzz/crash-$t-" -print_final_stats=1 \
    2>build-fuzz/fuzz-$t.log || { tail -n 40 build-fuzz/fuzz-$t.log; exit 1; }
  grep -E "stat::number_of_executed_units" build-fuzz/fuzz-$t.log >&2 || true
done
echo "fuzz: 3 targets ran without a crash"
