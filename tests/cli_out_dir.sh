#!/usr/bin/env bash
# cli_out_dir.sh - `kdsim run --out DIR` writes its outputs whole or not at all (outdir.h):
# DIR is checked before the run (a file, a missing parent, or a `plots` in DIR that is not
# a directory: exit 2, nothing run, nothing written); the outputs are written into a
# hidden folder and moved into place at the end, so a run that fails while writing leaves
# DIR as it was and no hidden folder behind; a rerun into the same DIR leaves exactly its
# own outputs (no plot of a renamed consumer, no KCL file of an earlier KCL run) beside
# the files kdsim does not write, which it leaves alone.
# usage: bash tests/cli_out_dir.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

base="$tmp/base.yaml"
cat >"$base" <<'YAML'
name: base
duration: 1m
stream: {shards: 2}
producers: [{name: web, rate: 100 records/s, record_size: 1 KiB}]
consumers: [{name: reader, kind: polling}]
YAML
sed 's/name: reader/name: renamed/' "$base" >"$tmp/renamed.yaml"
has() { # NAME TEXT: stderr of NAME holds TEXT
    grep -qF -- "$2" "$tmp/$1.err" || fail "$1: stderr lacks '$2': $(head -c 300 "$tmp/$1.err")"
}
no_hidden() { # DIR...: no hidden kdsim folder left in them
    local d
    for d in "$@"; do
        ls -A "$d" | grep -q 'kdsim-' && fail "a hidden kdsim folder was left in $d: $(ls -A "$d")"
    done
}

# Checked before the run.
mkdir "$tmp/pout" && touch "$tmp/pout/plots"
k plots-file 2 run "$base" --out "$tmp/pout" &&
    has plots-file "kdsim: --out $tmp/pout: $tmp/pout/plots is not a directory, and kdsim writes its plots there"
[ "$(ls -A "$tmp/pout")" = plots ] || fail "a refused --out DIR was written to: $(ls -A "$tmp/pout")"
touch "$tmp/afile"
k afile 2 run "$base" --out "$tmp/afile" &&
    has afile "kdsim: --out $tmp/afile: this is a file, not a directory" &&
    has afile "nothing was run"
[ -s "$tmp/afile.out" ] && fail "--out to a file still ran the scenario"
# A missing DIR's missing parents are made (mkdir -p), by every command with --out; one
# that cannot be made (a file in the way) is refused before anything runs or is made.
k noparent 0 run "$base" --out "$tmp/missing/sub"
[ -s "$tmp/missing/sub/report.json" ] || fail "--out with a missing parent wrote no report"
k noparent-reps 0 run "$base" --replications 2 --out "$tmp/missing2/a/b"
[ -s "$tmp/missing2/a/b/replications.json" ] ||
    fail "--replications --out with missing parents wrote no replications.json"
for cmd in run reps plan; do
    case $cmd in
    run) args=(run "$base") ;;
    reps) args=(run "$base" --replications 2) ;;
    plan) args=(plan "$base" --slo lost=0 --shards 1..2 --replications 1) ;;
    esac
    k "infile-$cmd" 2 "${args[@]}" --out "$tmp/afile/x/y" &&
        has "infile-$cmd" "kdsim: --out $tmp/afile/x/y: $tmp/afile is a file, so the folder cannot be made; nothing was run"
    [ -s "$tmp/infile-$cmd.out" ] && fail "$cmd --out under a file still ran the scenario"
done
no_hidden "$tmp"

# A new DIR, then a rerun with the consumer renamed: no stale plot, user files kept.
k first 0 run "$base" --out "$tmp/out"
for f in report.json report.txt report.html stream_per_second.csv plots/latency-reader.csv; do
    [ -s "$tmp/out/$f" ] || fail "the run did not write $f"
done
echo mine >"$tmp/out/notes.txt"
k rerun 0 run "$tmp/renamed.yaml" --out "$tmp/out"
ls "$tmp/out/plots" | grep -q reader && fail "a rerun left the old consumer's plots: $(ls "$tmp/out/plots" | grep reader)"
[ -s "$tmp/out/plots/latency-renamed.csv" ] || fail "the rerun did not write its consumer's plot data"
[ "$(cat "$tmp/out/notes.txt" 2>/dev/null)" = mine ] || fail "a rerun removed a file kdsim does not write"
no_hidden "$tmp/out" "$tmp"
# A KCL run's CSV files do not outlive it in the next run's DIR.
k kcl 0 run scenarios/kcl-worker-crash.yaml --duration 1m --out "$tmp/out"
[ -s "$tmp/out/kcl_workers_per_minute.csv" ] || fail "the KCL run wrote no kcl_workers_per_minute.csv"
k after-kcl 0 run "$base" --out "$tmp/out"
ls "$tmp/out" | grep -q '^kcl_' && fail "a run without KCL left the KCL run's files: $(ls "$tmp/out" | grep kcl_)"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["scenario"] == "base"' \
    "$tmp/out/report.json" 2>/dev/null || fail "report.json is not the last run's"

# A run that fails while writing (here past a file-size limit) leaves DIR as it was, and
# a DIR that did not exist does not exist.
cp -r "$tmp/out" "$tmp/before"
(
    trap '' XFSZ
    ulimit -f 4
    "$kdsim" run "$tmp/renamed.yaml" --out "$tmp/out" >/dev/null 2>"$tmp/full.err"
    echo $? >"$tmp/full.rc"
    "$kdsim" run "$tmp/renamed.yaml" --out "$tmp/new" >/dev/null 2>>"$tmp/full.err"
    echo $? >>"$tmp/full.rc"
)
[ "$(tr '\n' ' ' <"$tmp/full.rc")" = "1 1 " ] || fail "writes past the limit: exit $(cat "$tmp/full.rc")"
diff -r "$tmp/before" "$tmp/out" >/dev/null || fail "a failed run changed DIR: $(diff -rq "$tmp/before" "$tmp/out" | head -3)"
[ -e "$tmp/new" ] && fail "a failed run into a new DIR left it: $(ls -A "$tmp/new")"
no_hidden "$tmp/out" "$tmp"

# A rename that fails while the new outputs move in (injected with strace: the first
# move of a CSV file into DIR) puts everything back: DIR as it was, the new outputs gone.
# (It once left DIR with the new plots and report.html and without the old reports.)
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
    k inject-base 0 run "$base" --out "$tmp/inj"
    cp -r "$tmp/inj" "$tmp/inj-before"
    strace -o /dev/null -e trace=rename \
        -e 'inject=rename:error=EXDEV:when=1+' -P "$tmp/inj/stream_per_second.csv" \
        "$kdsim" run "$tmp/renamed.yaml" --out "$tmp/inj" >/dev/null 2>"$tmp/inj.err"
    rc=$?
    [ $rc -eq 1 ] || fail "an injected rename failure: exit $rc"
    grep -q "cannot" "$tmp/inj.err" || fail "an injected rename failure said nothing"
    diff -r "$tmp/inj-before" "$tmp/inj" >/dev/null ||
        fail "a failed move into DIR changed it: $(diff -rq "$tmp/inj-before" "$tmp/inj" | head -3)"
    no_hidden "$tmp/inj" "$tmp"
else
    echo "strace not found, or not allowed to trace here: the rename-failure check is skipped"
fi

# A new DIR gets the mode of any new folder (0777 less the umask), not mkdtemp's 0700.
(umask 022 && "$kdsim" run "$base" --out "$tmp/moded" >/dev/null 2>&1)
[ "$(stat -c %a "$tmp/moded" 2>/dev/null)" = 755 ] ||
    fail "a new DIR has mode $(stat -c %a "$tmp/moded" 2>/dev/null), not 755 under umask 022"

cli_finish cli_out_dir
