#!/usr/bin/env bash
# cli_cluster_parallel.sh - the GNU parallel recipe of docs/clusters.md: the parts of
# tests/sweeps/shards.yaml spread by GNU parallel over "hosts" (here the local machine
# given as two ssh logins, ':', so that no ssh is needed), each part in a folder of its
# own as on hosts without a shared disk, gathered and merged; the table must be
# byte-identical to the sweep run on one machine. Bounded in time; leaves nothing.
#
# Without GNU parallel (Debian: apt-get install parallel) the test exits 77 (skipped).
#
# usage: bash tests/cli_cluster_parallel.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
if ! parallel --version 2>/dev/null | grep -q "GNU parallel"; then
    echo "SKIP: GNU parallel is not installed (Debian: apt-get install parallel)"
    exit 77
fi
sweep=$PWD/tests/sweeps/shards.yaml
cli_tmpdir

# One part per job slot, two slots on the "host" ':' (the local machine); --will-cite:
# GNU parallel asks to be cited in papers that use it, docs/clusters.md does.
export PARALLEL_HOME=$tmp/parallel-home
timeout 120 parallel --will-cite --sshlogin 2/: --jobs 2 --halt now,fail=1 \
    "'$kdsim'" sweep "'$sweep'" --part {}/4 --jobs 1 --out "'$tmp'/host{}" ::: 1 2 3 4 \
    >"$tmp/parallel.out" 2>&1 || fail "GNU parallel: $(tail -5 "$tmp/parallel.out")"
mkdir -p "$tmp/gathered"
for k in 1 2 3 4; do
    cp "$tmp/host$k/part-$k-of-4.json" "$tmp/gathered/" 2>/dev/null || fail "part $k is missing"
done
timeout 60 "$kdsim" merge "$tmp"/gathered/part-*-of-4.json --out "$tmp/merged" >/dev/null ||
    fail "merge failed"
timeout 120 "$kdsim" sweep "$sweep" --out "$tmp/local" >/dev/null || fail "the local sweep failed"
for f in results.csv results.json summary.csv; do
    cmp -s "$tmp/local/$f" "$tmp/merged/$f" || fail "$f: the parts run by GNU parallel differ from one machine's"
done

cli_finish cli_cluster_parallel "4 parts run by GNU parallel, merged, gave the one-machine table"
