#!/usr/bin/env bash
# cli_commands.sh - the kdsim command line: help and version, usage errors (status 2),
# a missing scenario file, --set / --duration overrides reaching the report, and
# validate on the flagship scenario.
#
# usage: bash tests/cli_commands.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
flagship=scenarios/acme-clickstream.yaml
cli_tmpdir

got='' version_out='' # set by slurp

# k ARGS...: run kdsim; sets rc, writes $tmp/out and $tmp/err (this script's own k, in
# place of testcli.sh's: the checks of the status follow, with expect)
k() {
    "$kdsim" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
show() { # the output files, indented, for a failure report
    sed 's/^/    stdout: /' "$tmp/out" | head -10
    sed 's/^/    stderr: /' "$tmp/err" | head -10
}
slurp() { # slurp FILE VAR, without a fork
    IFS= read -r -d '' "$2" <"$1" || true
}
# expect STATUS WHAT: the last k exited with STATUS
expect() {
    if [ "$rc" -ne "$1" ]; then
        fail "$2: exit status $rc, expected $1"
        show
        return 1
    fi
}
# expect_err_first LINE WHAT: stderr's first line is LINE
expect_err_first() {
    local first=
    IFS= read -r first <"$tmp/err"
    [ "$first" = "$1" ] || fail "$2: stderr starts with '$first', expected '$1'"
}
# expect_usage WHAT: the usage text follows on stderr, and stdout is empty
expect_usage() {
    grep -q '^usage: kdsim run SCENARIO' "$tmp/err" || fail "$1: no usage text on stderr"
    [ -s "$tmp/out" ] && fail "$1: printed on stdout: $(head -c 200 "$tmp/out")"
}

# --- help and version: status 0, on stdout ---------------------------------------------
for opt in --help -h help; do
    k "$opt"
    expect 0 "kdsim $opt" || continue
    grep -q '^Commands:' "$tmp/out" || fail "kdsim $opt: no 'Commands:' in the help"
    grep -q '^usage: kdsim run SCENARIO' "$tmp/out" || fail "kdsim $opt: no usage in the help"
    grep -q -e '--set K=V' "$tmp/out" || fail "kdsim $opt: --set is not explained"
    [ -s "$tmp/err" ] && fail "kdsim $opt: printed on stderr: $(head -c 200 "$tmp/err")"
done
# Every command's own help: status 0, its usage line on stdout, nothing run or on stderr
# (an option's value that happens to be --help is still its value).
for args in "run --help" "run $flagship --set seed=3 -h" "cost --help" "validate --help" \
    "route --help" "run $flagship --replications 3 --help" "sweep --help" "merge --help" \
    "plan --help"; do
    # shellcheck disable=SC2086 # the words are the arguments
    k $args
    expect 0 "kdsim $args" || continue
    cmd=${args%% *}
    { grep -q "^usage: kdsim" "$tmp/out" && grep -q "kdsim $cmd " "$tmp/out"; } ||
        fail "kdsim $args: no usage of kdsim $cmd on stdout"
    [ -s "$tmp/err" ] && fail "kdsim $args: printed on stderr: $(head -c 200 "$tmp/err")"
done
k run "$flagship" --replications 3 --help
grep -q -e '--warmup' "$tmp/out" || fail "kdsim run --replications --help: does not name --warmup"
cd "$tmp" || exit 1
k run --trace --help "$OLDPWD/$flagship" --duration 1s --json
cd "$OLDPWD" || exit 1
expect 0 "kdsim run --trace --help SCENARIO (a trace file named --help)"
[ -s "$tmp/--help" ] || fail "kdsim run --trace --help SCENARIO: took --help for the help, not the trace file"
grep -q '"records_in"' "$tmp/out" || fail "kdsim run --trace --help SCENARIO --json: printed no report"

k --version
if expect 0 "kdsim --version"; then
    slurp "$tmp/out" version_out
    [[ $version_out =~ ^kdsim\ [0-9]+\.[0-9]+\.[0-9]+$'\n'$ ]] ||
        fail "kdsim --version printed '$version_out', expected 'kdsim X.Y.Z'"
    [ -s "$tmp/err" ] && fail "kdsim --version: printed on stderr"
fi

# --- usage errors: status 2, a message and the usage on stderr, nothing on stdout -------
k
expect 2 "kdsim (no arguments)" && expect_usage "kdsim (no arguments)"
k frobnicate "$flagship"
expect 2 "kdsim frobnicate" && expect_usage "kdsim frobnicate"
expect_err_first "kdsim: unknown command 'frobnicate'" "kdsim frobnicate"
for cmd in run validate; do
    k "$cmd" "$flagship" --frob
    expect 2 "kdsim $cmd --frob" && expect_usage "kdsim $cmd --frob"
    expect_err_first "kdsim: unknown option --frob" "kdsim $cmd --frob"
    k "$cmd" "$flagship" "$flagship"
    expect 2 "kdsim $cmd with two scenarios" && expect_usage "kdsim $cmd with two scenarios"
    k "$cmd" "$flagship" --set
    expect 2 "kdsim $cmd --set (no value)" && expect_usage "kdsim $cmd --set (no value)"
    expect_err_first "kdsim: --set needs a value" "kdsim $cmd --set (no value)"
done

# --- a missing scenario file: status 2, the message names it, nothing is written --------
for cmd in validate run; do
    outopt=()
    [ "$cmd" = run ] && outopt=(--out "$tmp/out-missing")
    k "$cmd" no-such-dir/missing.yaml "${outopt[@]}"
    expect 2 "kdsim $cmd (missing file)"
    slurp "$tmp/err" got
    want="kdsim: no-such-dir/missing.yaml: cannot open the file: No such file or directory
kdsim: 1 error in no-such-dir/missing.yaml; nothing was run
"
    [ "$got" = "$want" ] || fail "kdsim $cmd (missing file): stderr is '$got', expected '$want'"
    [ -s "$tmp/out" ] && fail "kdsim $cmd (missing file): printed on stdout"
    [ -e "$tmp/out-missing" ] && fail "kdsim $cmd (missing file): created the --out directory"
done

# --- validate the flagship ----------------------------------------------------------------
k validate "$flagship"
if expect 0 "kdsim validate $flagship"; then
    slurp "$tmp/out" got
    want="$flagship: ok (2 producers, 3 consumers, 4 shards)
"
    [ "$got" = "$want" ] || fail "kdsim validate $flagship printed '$got', expected '$want'"
    [ -s "$tmp/err" ] && fail "kdsim validate $flagship: printed on stderr: $(head -c 300 "$tmp/err")"
fi
k validate "$flagship" --set stream.shards=8
expect 0 "kdsim validate --set stream.shards=8" &&
    { grep -q ': ok (2 producers, 3 consumers, 8 shards)$' "$tmp/out" ||
        fail "validate --set stream.shards=8 printed: $(cat "$tmp/out")"; }
k validate "$flagship" --set 'producers[0].rate=1500 records/s'
expect 0 "kdsim validate --set 'producers[0].rate=1500 records/s' (the --help example)"

# --- overrides reach the run ----------------------------------------------------------------
# run NAME ARGS...: kdsim run the flagship with ARGS --json into $tmp/NAME.json
run_json() {
    local name=$1
    shift
    k run "$flagship" "$@" --json
    expect 0 "kdsim run $* --json" && cp "$tmp/out" "$tmp/$name.json"
}
run_json base --duration 2m
run_json shards8 --duration 2m --set stream.shards=8
run_json dur30 --duration 30s
run_json setdur --set duration=45s
run_json seed --duration 2m --seed 12345
# --seed is --set seed= in its place: the last of the two given wins.
run_json seedlast --duration 2s --set seed=5 --seed 7
run_json setlast --duration 2s --seed 7 --set seed=5
if ! python3 - "$tmp" "${version_out:-}" <<'EOF'; then
import json, os, sys
tmp, version = sys.argv[1], sys.argv[2].strip()
ok = True
def bad(msg):
    global ok
    print("FAIL " + msg)
    ok = False
def load(name):
    path = f"{tmp}/{name}.json"
    if not os.path.exists(path):
        return None  # the run failed, already reported
    try:
        return json.load(open(path))
    except ValueError as e:
        bad(f"{name}: the --json output is not JSON: {e}")
        return None

base, s8, d30, sd, seed = (load(n) for n in ("base", "shards8", "dur30", "setdur", "seed"))
for name, want in (("seedlast", 7), ("setlast", 5)):
    r = load(name)
    if r and r["seed"] != want:
        bad(f"{name}: the report's seed is {r['seed']}, expected {want} (the last given)")
if base:
    if base["stream"]["open_shards"] != 4:
        bad(f"the flagship has {base['stream']['open_shards']} open shards, expected 4")
    if base["duration_s"] != 120:
        bad(f"--duration 2m: duration_s is {base['duration_s']}, expected 120")
    if base["seed"] != 42:
        bad(f"the flagship's seed is {base['seed']} in the report, expected 42")
    if version and "kdsim " + base["kdsim_version"] != version:
        bad(f"kdsim_version {base['kdsim_version']!r} does not match --version {version!r}")
if s8:
    if s8["stream"]["open_shards"] != 8:
        bad(f"--set stream.shards=8: open_shards is {s8['stream']['open_shards']}, expected 8")
    if len(s8["stream"]["shards"]) != 8:
        bad(f"--set stream.shards=8: {len(s8['stream']['shards'])} shards listed, expected 8")
if d30 and d30["duration_s"] != 30:
    bad(f"--duration 30s: duration_s is {d30['duration_s']}, expected 30")
if sd and sd["duration_s"] != 45:
    bad(f"--set duration=45s: duration_s is {sd['duration_s']}, expected 45")
if seed and seed["seed"] != 12345:
    bad(f"--seed 12345: the report's seed is {seed['seed']}")
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

# --- a bad override: status 2, a --set: message, nothing run ------------------------------
k run "$flagship" --set stream.shards=0 --out "$tmp/out-set"
expect 2 "kdsim run --set stream.shards=0"
slurp "$tmp/err" got
want="kdsim: --set: stream.shards: must be between 1 and 10000, got 0
kdsim: 1 error in $flagship; nothing was run
"
[ "$got" = "$want" ] || fail "kdsim run --set stream.shards=0: stderr is '$got', expected '$want'"
[ -s "$tmp/out" ] && fail "kdsim run --set stream.shards=0: printed on stdout"
[ -e "$tmp/out-set" ] && fail "kdsim run --set stream.shards=0: created the --out directory"
k validate "$flagship" --set 'producers[5].rate=1/s'
expect 2 "kdsim validate --set producers[5].rate=1/s"
expect_err_first "kdsim: --set: producers: no item [5]: the list has 2 items (indices 0 to 1)" \
    "kdsim validate --set producers[5].rate=1/s"
k validate "$flagship" --set stream.shards
expect 2 "kdsim validate --set stream.shards (no '=')"
grep -q '^kdsim: --set: expected key.path=value' "$tmp/err" ||
    fail "kdsim validate --set stream.shards: stderr: $(head -c 300 "$tmp/err")"
k validate "$flagship" --set stream.shardz=8
expect 2 "kdsim validate --set stream.shardz=8"
expect_err_first "kdsim: --set: stream: unknown key 'shardz'; did you mean 'shards'?" \
    "kdsim validate --set stream.shardz=8"

# Regression checks for bugs found and fixed (see the git log).
if true; then
    for cmd in run validate; do
        k "$cmd"
        expect 2 "kdsim $cmd (no scenario)" && expect_usage "kdsim $cmd (no scenario)"
        expect_err_first "kdsim: $cmd needs a scenario file" "kdsim $cmd (no scenario)"
    done
    k run "$flagship" --seed abc
    expect 2 "kdsim run --seed abc"
    expect_err_first 'kdsim: --seed: expected a whole number, got "abc"' "kdsim run --seed abc"
    k run "$flagship" --duration 5x
    grep -q '^kdsim: --duration: ' "$tmp/err" || fail "kdsim run --duration 5x: stderr: $(head -c 300 "$tmp/err")"
    k run "$flagship" --duration 1m --shards 8 --json
    expect 2 "kdsim run --shards 8 (an option of route)"
fi

# The text report's header names the generator and the seeds derived for each entity,
# the same as the JSON's random.streams (style-anchors R8).
k run "$flagship" --duration 10s --json
cp "$tmp/out" "$tmp/seeds.json"
k run "$flagship" --duration 10s
expect 0 "kdsim run (text)" &&
    python3 - "$tmp/seeds.json" "$tmp/out" <<'EOF2' || fail "the text header's random streams differ from the JSON's"
import json, sys
r = json.load(open(sys.argv[1]))
text = " ".join(open(sys.argv[2]).read().split("\n\n")[0].split())
want = "random streams (%s, seeded from %d and each name): " % (r["random"]["generator"], r["seed"])
want += ", ".join("%s %d" % (e["name"], e["seed"]) for e in r["random"]["streams"][:6])
sys.exit(0 if want in text else 1)
EOF2

cli_finish cli_commands
