#!/usr/bin/env bash
# cli_html.sh - DIR/report.html (cli/html.c): one self-contained page.
#
# The page refers to nothing on the network (no http: or https: anywhere, no script,
# style sheet, font or image to fetch), embeds every plot of DIR/plots as inline SVG,
# holds the description, the key figures, the tables and the assumptions, and
# HTML-escapes what it takes from the scenario; a KCL application's page also shows its
# lease-table requests, worker events and lease moves as in report.json. Then headless Chromium (Debian's
# chromium package) opens it with the network off: the page loads with no console
# message, every plot is in the DOM and laid out with a visible size, and a screenshot
# is kept in the build folder (test-artefacts/report-html.png next to kdsim). A
# probe error on the test's own frame proves that console errors would be seen.
#
# Without chromium (apt-get install chromium) the browser part is skipped, said so,
# and the test exits 77 (skipped) once the other checks passed. The plots need gnuplot
# (gnuplot-nox) in the same way.
#
# usage: bash tests/cli_html.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
browser_pid=
# shellcheck disable=SC2016 # expanded at exit, by the trap
cli_tmpdir '[ -n "$browser_pid" ] && kill "$browser_pid" 2>/dev/null'
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: gnuplot is not installed (apt-get install gnuplot-nox): report.html would have no plots to check"
    exit 77
fi

# Five polling readers: ten consumer plots, four shard plots, capacity and cost. The
# description carries markup that must come out as text.
out=$tmp/out
desc='Five <b>readers</b> & one "stream" <script>alert(1)</script>'
"$kdsim" run scenarios/latency-five-pollers.yaml --duration 4m --set "description=$desc" \
    --out "$out" >/dev/null 2>"$tmp/err" || fail "kdsim run failed: $(head -3 "$tmp/err")"
html=$out/report.html
[ -s "$html" ] || { echo "FAIL no report.html"; exit 1; }

# Self-contained: nothing to fetch.
grep -Eio 'https?:[^"'"'"' <>]*' "$html" | sort -u | head -3 >"$tmp/urls"
[ -s "$tmp/urls" ] && fail "report.html refers to the network: $(tr '\n' ' ' <"$tmp/urls")"
grep -Eiq '<(script|link|iframe|object|embed|img)[ >]' "$html" && fail "report.html loads a script, style sheet, frame or image"
grep -Eiq '(src|srcset)=' "$html" && fail "report.html has a src= attribute"
grep -Eo 'url\([^)]*\)' "$html" | grep -v 'url(#' | head -1 | grep -q . && fail "report.html has a url() that is not a local reference"
grep -Eiq '@import|@font-face' "$html" && fail "report.html imports a style sheet or a font"
grep -q 'xmlns' "$html" && fail "report.html kept an SVG namespace declaration (an http: address)"

# Every plot embedded, once, as inline SVG.
svgs=$(ls "$out/plots/"*.svg | wc -l)
[ "$svgs" -eq 16 ] || fail "expected 16 plots (5 consumers x 2, 4 shard plots, capacity, cost), got $svgs"
[ "$(grep -o '<svg' "$html" | wc -l)" -eq "$svgs" ] || fail "report.html has $(grep -o '<svg' "$html" | wc -l) <svg> elements, plots/ has $svgs"
[ "$(grep -o '</svg>' "$html" | wc -l)" -eq "$svgs" ] || fail "report.html's <svg> elements are not all closed"
for f in "$out/plots/"*.svg; do
    n=$(basename "$f" .svg)
    grep -q "<figure id=\"plot-$n\">" "$html" || fail "plot $n is not in report.html"
done
# Ids are unique: each plot's marker ids carry its own prefix.
dups=$(grep -o " id=['\"][^'\"]*['\"]" "$html" | sort | uniq -d | head -3)
[ -z "$dups" ] || fail "duplicate ids in report.html: $dups"

# Content: description escaped, key figures, tables, assumptions.
grep -q 'Five &lt;b&gt;readers&lt;/b&gt; &amp; one &quot;stream&quot; &lt;script&gt;alert(1)&lt;/script&gt;' "$html" ||
    fail "the description is not in report.html, escaped"
grep -q '<b>readers' "$html" && fail "the description's markup was not escaped"
for id in description figures plots stream producers consumers cost assumptions; do
    grep -q "<section id=\"$id\">" "$html" || fail "no section $id"
done
python3 - "$out" <<'PY' || failed=$((failed + 1))
import json, re, sys, html as h
d = sys.argv[1]
r = json.load(open(f"{d}/report.json"))
page = open(f"{d}/report.html").read()
text = h.unescape(re.sub(r"<[^>]+>", " ", page))
bad = []
for c in r["consumers"]:
    if c["name"] not in text:
        bad.append(f"consumer {c['name']} missing")
# The consumers table shows each reader's read-throttled calls and p99, as in the JSON.
rows = re.findall(r"<tr><td class=\"t\">([a-z]+)</td><td class=\"t\">polling</td>(.*?)</tr>", page)
if len(rows) != 5:
    bad.append(f"{len(rows)} consumer rows, expected 5")
for name, cells in rows:
    c = next(x for x in r["consumers"] if x["name"] == name)
    v = [x.replace(",", "") for x in re.findall(r"<td>([^<]*)</td>", cells)]
    if int(v[-1]) != c["read_throttled_calls"] or abs(float(v[7]) - c["latency_ms"]["p99"]) > 0.06:
        bad.append(f"{name}: table {v} against the JSON")
for s in r["stream"]["shards"]:
    if s["shard_id"] not in text:
        bad.append(f"shard {s['shard_id']} missing")
for a in r["assumptions"]:
    if a["why"] not in text:
        bad.append(f"assumption {a['setting']} missing")
for m, v in r["cost"]["modes"].items():
    if f"{v['monthly_usd']:,.2f}" not in text:
        bad.append(f"cost of {m} ({v['monthly_usd']}) missing")
w = r["stream"]["records_in"]
if f"{w:,}" not in text:
    bad.append(f"records written {w:,} missing from the key figures")
if bad:
    print("FAIL report.html content:\n  " + "\n  ".join(bad))
    sys.exit(1)
PY

# A KCL application: the page shows what the KCL scenarios' descriptions point at, the
# lease table's requests by operation, every worker event with its time to converge and
# every lease move with its cause, previous owner, replay_expected and duplicates, as in
# report.json.
kout=$tmp/kcl
"$kdsim" run scenarios/kcl-worker-crash.yaml --duration 5m --out "$kout" >/dev/null 2>"$tmp/kerr" ||
    fail "kcl-worker-crash failed: $(head -3 "$tmp/kerr")"
python3 - "$kout" <<'PY' || failed=$((failed + 1))
import json, re, sys, html as h
d = sys.argv[1]
c = json.load(open(f"{d}/report.json"))["consumers"][0]
page = open(f"{d}/report.html").read()
rows = [[h.unescape(x) for x in re.findall(r"<td[^>]*>([^<]*)</td>", r)]
        for r in re.findall(r"<tr>(.*?)</tr>", page)]
def cell(v):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.3f}"
    if isinstance(v, int):
        return f"{v:,}"
    return v
bad = []
def want(what, cells):
    if cells not in rows:
        bad.append(f"{what}: no row {cells}")
lt = c["lease_table"]
for op, n in lt["requests"].items():
    want(f"lease table {op}", [op, f"{n:,}", f"{lt['throttled'][op]:,}",
                               f"{lt['condition_failed'][op]:,}"])
if not c["worker_events"] or not c["lease_move_log"]:
    bad.append("the scenario made no worker event or no lease move")
for e in c["worker_events"]:
    want("worker event", [cell(e[k]) for k in ("t_s", "worker", "event", "converged_after_s")])
keys = ("t_s", "shard_id", "cause", "from", "from_consumer", "to", "from_healthy",
        "replay_expected", "duplicates")
for m in c["lease_move_log"]:
    want("lease move", [cell(m[k]) for k in keys])
if not any(m["cause"] == "expiry" for m in c["lease_move_log"]):
    bad.append("no expiry move after the crash")
if bad:
    print("FAIL report.html of a KCL application:\n  " + "\n  ".join(bad[:6]))
    sys.exit(1)
PY

# --- headless Chromium ---------------------------------------------------------------
browser=${KDSIM_CHROMIUM:-}
[ -n "$browser" ] || browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "SKIP: chromium is not installed (apt-get install chromium): the browser test did not run"
    [ "$failed" -eq 0 ] && exit 77
    cli_finish cli_html
    exit
fi
artefacts=$(dirname "$kdsim")/test-artefacts
mkdir -p "$artefacts"
cp -r "$out" "$tmp/page"
# The test's own frame: it holds the report in an iframe, reports what it sees with
# console.log, and raises one probe error that the log must show.
cat >"$tmp/page/harness.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}
iframe{border:0;width:1280px;height:9000px}</style></head><body>
<iframe id="r" src="report.html"></iframe>
<script>
window.addEventListener('load', function () {
  var d = document.getElementById('r').contentDocument;
  var svgs = d.querySelectorAll('figure > svg'), shown = 0;
  for (var i = 0; i < svgs.length; i++) {
    var b = svgs[i].getBoundingClientRect(), paths = svgs[i].querySelectorAll('path').length;
    if (b.width > 300 && b.height > 150 && paths > 10) shown++;
  }
  console.log('KDSIM-CHECK svg=' + svgs.length + ' shown=' + shown +
              ' tables=' + d.querySelectorAll('table').length + ' title=' + d.title);
  console.error('KDSIM-PROBE');
});
</script></body></html>
EOF
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --no-default-browser-check --hide-scrollbars --allow-file-access-from-files
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0
    --window-size=1280,9000 --screenshot="$tmp/shot.png")
timeout 90 "$browser" "${flags[@]}" "file://$tmp/page/harness.html" >"$tmp/chromium.out" 2>"$tmp/chromium.err" &
browser_pid=$!
wait "$browser_pid"
rc=$?
browser_pid=
[ $rc -eq 0 ] || fail "chromium exited with status $rc: $(grep -v dbus "$tmp/chromium.err" | tail -3)"
console=$(grep 'CONSOLE' "$tmp/chromium.err")
echo "$console" | grep -q '"KDSIM-PROBE"' ||
    fail "the probe error did not reach the log: console errors cannot be seen this way"
check=$(echo "$console" | grep -o 'KDSIM-CHECK[^"]*')
[ "$check" = "KDSIM-CHECK svg=$svgs shown=$svgs tables=$(grep -o '<table>' "$html" | wc -l) title=kdsim: latency-five-pollers" ] ||
    fail "in the browser: '$check' (expected $svgs plots, all shown)"
others=$(echo "$console" | grep -v -e '"KDSIM-PROBE"' -e '"KDSIM-CHECK')
[ -z "$others" ] || fail "console messages while loading report.html: $(echo "$others" | head -3)"
if [ -s "$tmp/shot.png" ] && [ "$(stat -c %s "$tmp/shot.png")" -gt 100000 ]; then
    cp "$tmp/shot.png" "$artefacts/report-html.png"
    echo "screenshot: $artefacts/report-html.png"
else
    fail "no screenshot (or an empty one)"
fi

cli_finish cli_html "all checks passed (chromium: $("$browser" --version 2>/dev/null | head -1))"
