#!/usr/bin/env bash
# cli_cluster_slurm.sh - the Slurm recipe of docs/clusters.md on a real single-node
# Slurm: a private munged, slurmctld and slurmd (Debian's slurm-wlm and munge) started
# from a temporary folder, with their own key, ports and state, no systemd; the sweep
# tests/sweeps/shards.yaml run as a 3-task job array (scripts/slurm-sweep.sbatch), the
# merge as a job that depends on it; the merged table must be byte-identical to the
# sweep run on one machine, and one part resubmitted alone must come back the same. Everything started here is stopped by its process id, and
# the folder removed, whatever happens; every wait is bounded.
#
# Without the Slurm and munge programs, or when the daemons do not come up (they need to
# run as the user who submits, and to listen on localhost), the test says why and exits
# 77 (skipped).
#
# usage: bash tests/cli_cluster_slurm.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
src=$PWD
sweep=$src/tests/sweeps/shards.yaml

for prog in munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
    if ! command -v "$prog" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$prog" ]; then
        echo "SKIP: $prog is not installed (Debian: apt-get install slurm-wlm munge)"
        exit 77
    fi
done
PATH=$PATH:/usr/sbin

tmp=$(mktemp -d /tmp/kdsim-slurm-XXXXXX) || exit 1
chmod 755 "$tmp"
pids=()
cleanup() {
    # scontrol shutdown stops slurmctld and slurmd cleanly; then whatever we started and
    # is still there, by its process id.
    [ -f "$tmp/slurm.conf" ] && SLURM_CONF=$tmp/slurm.conf timeout 10 scontrol shutdown >/dev/null 2>&1
    for f in slurmctld slurmd munged; do
        [ -f "$tmp/$f.pid" ] && pids+=("$(cat "$tmp/$f.pid")")
    done
    sleep 1
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null
    done
    sleep 1
    for p in "${pids[@]}"; do
        kill -9 "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

skip() {
    echo "SKIP: $1"
    for log in munged slurmctld slurmd; do
        [ -s "$tmp/$log.log" ] && tail -5 "$tmp/$log.log" | sed "s/^/    $log: /"
    done
    exit 77
}

# Two free ports on localhost, from the process id so that parallel tests differ.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + ($$ % 20000) * 2))
while ! port_free "$base" || ! port_free $((base + 1)); do
    base=$((base + 2))
    [ $base -gt 60000 ] && base=20000
done
user=$(id -un)
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/out" "$tmp/munge"
chmod 700 "$tmp/munge"

# munge: a key of our own, a socket of our own. munged refuses to run as root unless
# told to (--force); it then runs as the user who starts it.
mungekey -c -k "$tmp/munge/munge.key" >/dev/null 2>&1 ||
    skip "mungekey could not create a key"
munged --force --socket="$tmp/munge/socket" --key-file="$tmp/munge/munge.key" \
    --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" \
    >/dev/null 2>&1 || skip "munged did not start"

cat >"$tmp/slurm.conf" <<EOF
# A one-node cluster for this test only (tests/cli_cluster_slurm.sh).
ClusterName=kdsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=kdsimtest NodeHostname=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=kdsimtest Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld >/dev/null 2>&1 || skip "slurmctld did not start"
slurmd -N kdsimtest >/dev/null 2>&1 || skip "slurmd did not start"
up=0
for _ in $(seq 1 60); do
    if timeout 5 sinfo -h -o %t 2>/dev/null | grep -qx idle; then
        up=1
        break
    fi
    sleep 0.5
done
[ $up -eq 1 ] || skip "the node did not become idle within 30 s"

# The recipe: the sweep as a job array of 3 parts, the merge as a job after it.
job=$(cd "$tmp/out" && KDSIM=$kdsim timeout 30 sbatch --parsable --array=1-3 --cpus-per-task=1 --time=5 \
    --output="$tmp/out/task-%a.log" "$src/scripts/slurm-sweep.sbatch" "$sweep" "$tmp/out")
if [ -z "$job" ]; then
    fail "sbatch did not accept the array"
else
    (cd "$tmp/out" && timeout 90 sbatch --wait --parsable --dependency="afterok:$job" \
        --time=5 --output="$tmp/out/merge.log" \
        --wrap "'$kdsim' merge '$tmp'/out/part-*-of-3.json --out '$tmp/merged'" >/dev/null) ||
        fail "the merge job did not succeed (or the array failed)"
fi
for a in 1 2 3; do
    [ -s "$tmp/out/part-$a-of-3.json" ] || fail "task $a wrote no part"
    grep -q "part $a of 3" "$tmp/out/task-$a.log" 2>/dev/null || fail "task $a: $(cat "$tmp/out/task-$a.log" 2>/dev/null)"
done

# Running one part again, as after a lost task: the same part, byte for byte.
if [ -s "$tmp/out/part-2-of-3.json" ]; then
    mv "$tmp/out/part-2-of-3.json" "$tmp/part-2-before.json"
    (cd "$tmp/out" && KDSIM=$kdsim timeout 90 sbatch --wait --array=2 --time=5 \
        --output="$tmp/out/again.log" "$src/scripts/slurm-sweep.sbatch" "$sweep" "$tmp/out" 3 \
        >/dev/null) || fail "resubmitting part 2: $(cat "$tmp/out/again.log" 2>/dev/null)"
    cmp -s "$tmp/part-2-before.json" "$tmp/out/part-2-of-3.json" ||
        fail "part 2 run again differs from the first time"
fi

# The same sweep on this machine alone.
timeout 120 "$kdsim" sweep "$sweep" --jobs 2 --out "$tmp/local" >/dev/null || fail "the local sweep failed"
for f in results.csv results.json summary.csv; do
    cmp -s "$tmp/local/$f" "$tmp/merged/$f" || fail "$f: the Slurm array's merged table differs from one machine's"
done

if [ $failed -ne 0 ]; then
    for log in slurmctld slurmd; do
        tail -5 "$tmp/$log.log" 2>/dev/null | sed "s/^/    $log: /"
    done
fi
cli_finish cli_cluster_slurm "a 3-task Slurm job array and a dependent merge job gave the one-machine table"
