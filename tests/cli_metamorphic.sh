#!/usr/bin/env bash
# cli_metamorphic.sh - the metamorphic soak (fuzz/soak/metamorphic.py) over a fixed range
# of seeds: each seed soak.py's random scenario, run several ways that must agree exactly
# (a shorter --duration gives the same trace lines before its end; one more entity that
# starts after the end changes no other entity's trace lines or report figures; --set of
# a key to its own value changes nothing; the trace and its filters change no report, and
# a filtered trace is the full trace's lines that pass the filters); then the scenario of
# each bug it found, both ways. The range takes under 20 s with a Release build, a few
# minutes under the sanitizer build. Skipped (77) without python3.
#
# usage: bash tests/cli_metamorphic.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
# A fixed range, small enough for every CI run (fuzz/soak/README.md says what to do with
# a seed that fails); a sanitizer build gets longer timeouts (soak_tool, testcli.sh).
soak_tool metamorphic.py 31..47

# The two bugs its first runs found, each kept as a scenario (fuzz/soak/README.md).
cli_tmpdir
# before FILE T: the trace lines (header aside) stamped before T seconds.
before() { awk -v t="$2" 'NR > 1 && $1 + 0 < t' "$1"; }
sc=tests/scenarios/prefix-early-flush.yaml
if "$kdsim" run "$sc" --trace "$tmp/long.trace" >/dev/null 2>"$tmp/err" &&
    "$kdsim" run "$sc" --duration 7s --trace "$tmp/short.trace" >/dev/null 2>"$tmp/err"; then
    [ "$(before "$tmp/short.trace" 7 | wc -l)" -gt 100 ] || fail "prefix-early-flush: a short trace"
    diff <(before "$tmp/long.trace" 7) <(before "$tmp/short.trace" 7) >"$tmp/diff" ||
        fail "prefix-early-flush: the 7 s run's trace differs from the 20 s run's before 7 s: $(head -4 "$tmp/diff")"
else
    fail "prefix-early-flush: kdsim run failed: $(head -3 "$tmp/err")"
fi
sc=tests/scenarios/inert-late-poller.yaml
grep -v 'name: late,' "$sc" >"$tmp/without.yaml"
if "$kdsim" run "$sc" --json --trace "$tmp/with.trace" >"$tmp/with.json" 2>"$tmp/err" &&
    "$kdsim" run "$tmp/without.yaml" --json --trace "$tmp/without.trace" >"$tmp/without.json" \
        2>"$tmp/err"; then
    # The entity column's width follows the longest name: compare the fields.
    diff <(awk 'NR > 1 { $1 = $1; print }' "$tmp/with.trace") \
        <(awk 'NR > 1 { $1 = $1; print }' "$tmp/without.trace") >"$tmp/diff" ||
        fail "inert-late-poller: a poller that starts after the end changed the trace: $(head -4 "$tmp/diff")"
    python3 - "$tmp/with.json" "$tmp/without.json" <<'PY' ||
import json, sys
a, b = (json.load(open(f))["consumers"][0] for f in sys.argv[1:])
assert a["name"] == b["name"] == "app" and a["records_delivered"] > 0, (a["name"], b["name"])
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
        fail "inert-late-poller: a poller that starts after the end changed the KCL's report"
else
    fail "inert-late-poller: kdsim run failed: $(head -3 "$tmp/err")"
fi

cli_finish cli_metamorphic
