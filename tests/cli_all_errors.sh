#!/usr/bin/env bash
# cli_all_errors.sh - every error of the input is reported at once, each at its place:
# a --set that fails does not hide the scenario file's own errors; a replayed trace
# with a bad cell still gets its rows' timing checked; a sweep reports every bad
# point's value at its line:col in the sweep file (not as --set), with the errors every
# point shares once.
# usage: bash tests/cli_all_errors.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# expect NAME LINE...: stderr of NAME is exactly these lines
expect() {
    local name=$1
    shift
    printf '%s\n' "$@" >"$tmp/$name.want"
    diff -u "$tmp/$name.want" "$tmp/$name.err" >"$tmp/$name.diff" ||
        fail "$name: stderr differs: $(cat "$tmp/$name.diff")"
}

# A failing --set, and three errors of the file.
cat >"$tmp/typo.yaml" <<'YAML'
duration: 1m
stream:
  shards: 2
  retension: 7d
producers:
  - name: web
    rate: 100 records/s
    record_sise: 1 KiB
YAML
k set-and-file 2 validate "$tmp/typo.yaml" --set 'producers[3].rate=1/s' &&
    expect set-and-file \
        "kdsim: --set: producers: no item [3]: the list has 1 item (indices 0 to 0)" \
        "kdsim: $tmp/typo.yaml:4:3: stream: unknown key 'retension'; did you mean 'retention'?" \
        "kdsim: $tmp/typo.yaml:6:5: producers[0]: missing required key 'record_size'" \
        "kdsim: $tmp/typo.yaml:8:5: producers[0]: unknown key 'record_sise'; did you mean 'record_size'?" \
        "kdsim: 4 errors in $tmp/typo.yaml; nothing was run"

# A replayed trace with a bad cell: its rows' timing is still checked (a repeated minute
# on another row), and the scenario's message neither says "above" of messages sorted
# after it nor blames the path of a file that was found.
printf 'timestamp,IncomingRecords\n2026-09-14T00:00:00Z,x\n2026-09-14T00:01:00Z,2\n2026-09-14T00:01:00Z,3\n' \
    >"$tmp/trace.csv"
cat >"$tmp/replay.yaml" <<'YAML'
duration: 10m
stream: {shards: 2}
producers:
  - name: p
    rate: {profile: replay, file: trace.csv}
    record_size: 1 KiB
  - name: q
    rate: {profile: replay, file: missing.csv}
    record_size: 1 KiB
YAML
k replay 2 validate "$tmp/replay.yaml" &&
    expect replay \
        "kdsim: $tmp/trace.csv:2:22: IncomingRecords: expected a count >= 0 (or an empty cell), got \"x\"" \
        "kdsim: $tmp/trace.csv:4:1: this minute already has a row (line 3)" \
        "kdsim: $tmp/replay.yaml:5:35: producers[0].rate.file: cannot use the trace $tmp/trace.csv: it has 2 errors, reported with its name" \
        "kdsim: $tmp/replay.yaml:8:35: producers[1].rate.file: cannot open the trace $tmp/missing.csv: No such file or directory (the path is relative to the scenario's folder)" \
        "kdsim: 4 errors in $tmp/replay.yaml; nothing was run"

# A sweep: every bad value at its place in the sweep file (a list's item, a range), the
# error all points share (a bad value under set, a scenario's own bad key) once.
cat >"$tmp/scenario.yaml" <<'YAML'
duration: 1m
stream: {shards: 2, retension: 7d}
producers: [{name: web, rate: 100 records/s, record_size: 1 KiB}]
YAML
cat >"$tmp/sweep.yaml" <<'YAML'
scenario: scenario.yaml
warmup: 10s
set:
  stream.retention: 1h
parameters:
  stream.shards: [2, 0, 99999]
  producers[0].clients: {from: 0, to: 1, step: 1}
YAML
k sweep 2 sweep "$tmp/sweep.yaml" --out "$tmp/sweep-out" &&
    expect sweep \
        "kdsim: $tmp/scenario.yaml:2:21: stream: unknown key 'retension'; did you mean 'retention'?" \
        "kdsim: $tmp/sweep.yaml:4:21: stream.retention: must be between 1d and 365d, got 1h" \
        "kdsim: $tmp/sweep.yaml:6:22: stream.shards: must be between 1 and 10000, got 0" \
        "kdsim: $tmp/sweep.yaml:6:25: stream.shards: must be between 1 and 10000, got 99999" \
        "kdsim: $tmp/sweep.yaml:7:25: producers[0].clients: must be between 1 and 100000, got 0" \
        "kdsim: 5 errors in $tmp/sweep.yaml; nothing was run"
[ -e "$tmp/sweep-out" ] && fail "a sweep with bad points wrote $tmp/sweep-out"
# The warm-up against each point's duration, at the warm-up's place.
sed -i 's/, retension: 7d//' "$tmp/scenario.yaml"
printf 'scenario: scenario.yaml\nwarmup: 2m\nparameters:\n  duration: [1m, 5m]\n' >"$tmp/warm.yaml"
k warm 2 sweep "$tmp/warm.yaml" --out "$tmp/warm-out" &&
    expect warm \
        "kdsim: $tmp/warm.yaml:2:9: warmup: the warm-up (2m) must be shorter than the run (1m)" \
        "kdsim: 1 error in $tmp/warm.yaml; nothing was run"

cli_finish cli_all_errors
