#!/usr/bin/env bash
# cli_scenarios.sh - the scenario library: every scenarios/*.yaml has a description
# (what it teaches, what to look for) that reaches the report, runs at a short
# --duration as the README shows (`kdsim run SCENARIO --out DIR`), and produces its
# reports (JSON, text, HTML) and its plots (PNG and SVG, every one in report.html);
# scenarios/README.md indexes every scenario, one line each, and names no missing file.
#
# The runs go in parallel, one per core. Without gnuplot (gnuplot-nox) the picture
# checks are skipped, said so, and the test exits 77 (skipped) once the rest passed.
#
# usage: bash tests/cli_scenarios.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir
have_gnuplot=1
command -v gnuplot >/dev/null 2>&1 || have_gnuplot=0

# check_one NAME: run scenarios/NAME.yaml for 2 simulated minutes and check what it wrote;
# failures go to $tmp/NAME.fail, one per line.
check_one() {
    local n=$1 d=$tmp/$1 f=$tmp/$1.fail
    : >"$f"
    if ! "$kdsim" run "scenarios/$n.yaml" --duration 2m --out "$d" >"$tmp/$n.out" 2>"$tmp/$n.err"; then
        echo "$n: kdsim run failed: $(head -3 "$tmp/$n.err")" >>"$f"
        return
    fi
    for x in report.json report.txt report.html plots/plots.sh plots/shards.csv plots/capacity.csv; do
        [ -s "$d/$x" ] || echo "$n: $x missing" >>"$f"
    done
    [ $have_gnuplot -eq 1 ] || return
    grep -q 'gnuplot' "$tmp/$n.err" && echo "$n: gnuplot trouble: $(grep gnuplot "$tmp/$n.err" | head -2)" >>"$f"
    local pngs svgs
    pngs=$(ls "$d/plots/"*.png 2>/dev/null | wc -l)
    svgs=$(ls "$d/plots/"*.svg 2>/dev/null | wc -l)
    # At least the four shard plots, capacity, cost and one per consumer.
    [ "$pngs" -ge 7 ] || echo "$n: only $pngs PNG plots" >>"$f"
    [ "$pngs" = "$svgs" ] || echo "$n: $pngs PNG but $svgs SVG plots" >>"$f"
    for p in "$d/plots/"*.png; do
        [ "$(stat -c %s "$p")" -gt 5000 ] || echo "$n: ${p##*/} is nearly empty" >>"$f"
    done
    [ "$(grep -o '<svg' "$d/report.html" | wc -l)" = "$svgs" ] ||
        echo "$n: report.html embeds $(grep -o '<svg' "$d/report.html" | wc -l) of $svgs plots" >>"$f"
}

names=()
for s in scenarios/*.yaml; do
    n=${s##*/}
    names+=("${n%.yaml}")
done
[ ${#names[@]} -ge 15 ] || fail "only ${#names[@]} scenarios in scenarios/"
jobs=$(nproc 2>/dev/null || echo 2)
for n in "${names[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    check_one "$n" &
done
wait
# The descriptions, all at once (one python3 for every scenario).
python3 - "$tmp" "${names[@]}" >>"$tmp/descriptions.fail" <<'PY' ||
    fail "the description check stopped (its traceback is above): not every scenario was checked"
import json, os, sys
tmp, names = sys.argv[1], sys.argv[2:]
for n in names:
    d = f"{tmp}/{n}"
    if not os.path.exists(f"{d}/report.json"):
        continue  # the run failed, and said so
    r = json.load(open(f"{d}/report.json"))
    desc = r.get("description", "")
    if len(desc) < 150:
        print(f"{n}: its description is missing or too short to say what it teaches ({len(desc)} characters)")
    txt = open(f"{d}/report.txt").read()
    if desc and " ".join(desc.split()[:6]) not in " ".join(txt.split()):
        print(f"{n}: the description is not at the top of report.txt")
    if r["duration_s"] != 120:
        print(f"{n}: --duration 2m ran {r['duration_s']} s")
PY
for n in "${names[@]}" descriptions; do
    while IFS= read -r line; do fail "$line"; done <"$tmp/$n.fail"
done

# The index: one line per scenario, each naming an existing file.
idx=scenarios/README.md
if [ ! -s "$idx" ]; then
    fail "no $idx"
else
    for n in "${names[@]}"; do
        c=$(grep -c "$n\.yaml" "$idx")
        [ "$c" -ge 1 ] || fail "$idx does not list $n.yaml"
    done
    for f in $(grep -o '[A-Za-z0-9._-]*\.yaml' "$idx" | sort -u); do
        [ -f "scenarios/$f" ] || fail "$idx names $f, which is not in scenarios/"
    done
fi

if [ "$failed" -eq 0 ] && [ $have_gnuplot -eq 0 ]; then
    echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox): the plots were not checked"
    exit 77
fi
cli_finish cli_scenarios "${#names[@]} scenarios ran and drew their plots"
