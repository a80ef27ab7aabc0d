#!/usr/bin/env bash
# cli_report_keys.sh - the JSON report and its documentation agree: every key that any
# shipped scenario's report emits is documented (docs/report-json.md, or the guide of its
# consumer kind: docs/consumers-lambda.md, consumers-firehose-flink.md, consumers-kcl.md),
# every key of the documentation's report tables is emitted by some shipped scenario, and
# where a table gives a type (`integer`, `number`, `string`, ...) every value has it. No
# shipped scenario switches capacity mode, so a test scenario that does joins them for
# the keys only such a run has (cost.as_run).
#
# usage: bash tests/cli_report_keys.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

for f in scenarios/*.yaml tests/scenarios/bill-mode-switch.yaml; do
    b=${f##*/}
    if ! "$kdsim" run "$f" --json >"$tmp/${b%.yaml}.json" 2>"$tmp/err"; then
        fail "kdsim run $f --json: $(head -3 "$tmp/err")"
    fi
done

if ! python3 - "$tmp" <<'EOF'; then
import glob, json, re, sys

tmp = sys.argv[1]
ok = True
def bad(msg):
    global ok
    print("FAIL " + msg)
    ok = False

# Every emitted value, as (path, value): consumers as consumers[KIND], list items as [].
emitted = []
def walk(x, path):
    emitted.append((path, x))
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, f"{path}.{k}" if path else k)
    elif isinstance(x, list):
        for e in x:
            walk(e, path + "[]")
for f in sorted(glob.glob(f"{tmp}/*.json")):
    r = json.load(open(f))
    for k, v in r.items():
        if k == "consumers":
            emitted.append(("consumers", v))
            for c in v:
                walk(c, f"consumers[{c['kind']}]")
        else:
            walk(v, k)

docs = {name: open(f"docs/{name}.md").read() for name in
        ("report-json", "consumers-lambda", "consumers-firehose-flink", "consumers-kcl")}
guide = {"lambda": "consumers-lambda", "firehose": "consumers-firehose-flink",
         "flink": "consumers-firehose-flink", "kcl": "consumers-kcl"}
def names_in(text):
    """Every key name written in backticks (`a.b[]`, `{t_s, worker}` give a, b, t_s, worker)."""
    out = set()
    for code in re.findall(r"`([^`]+)`", text):
        out.update(re.findall(r"[a-z_][a-z0-9_]*", code))
    return out
common = names_in(docs["report-json"].split("## `consumers[]`")[1].split("\n## ")[0])
top = names_in(docs["report-json"])
known = {kind: common | names_in(docs[g]) for kind, g in guide.items()}

# 1. Every emitted key is documented where a reader of its report would look.
seen = set()
for path, _ in emitted:
    m = re.match(r"consumers\[(\w+)\]\.(.*)", path)
    names = re.findall(r"[a-z_][a-z0-9_]*", m.group(2) if m else path)
    pool = known.get(m.group(1), common) if m else top
    for n in names:
        if n not in pool and (path, n) not in seen:
            seen.add((path, n))
            bad(f"the report emits {path} but its docs do not name `{n}`")

# 2. Every key of a report table is emitted, with the documented type.
types = {"integer": (int,), "number": (int, float), "string": (str,), "object": (dict,),
         "array": (list,), "boolean": (bool,), "array of strings": (list,),
         "string or null": (str, type(None)),
         "number or null": (int, float, type(None))}
def values(pattern):
    rx = re.compile("^" + re.escape(pattern).replace(r"\*", r"[^.]+") + "$")
    return [v for p, v in emitted if rx.match(p)]
sections = {"Top level": "", "`stream`": "stream", "`stream.shards[]`": "stream.shards[]",
            "`producers[]`": "producers[]", "`consumers[]`": "consumers[*]", "`cost`": "cost",
            "`cost.sizing_rule`": "cost.sizing_rule", "`cost.modes.*`": "cost.modes.*",
            "`cost.modes.*.items[]`": "cost.modes.*.items[]", "`cost.as_run`": "cost.as_run",
            "The KCL keys of a consumer object in the JSON report": "consumers[kcl]",
            "`workers[]`:": "consumers[kcl].workers[]"}
checked = 0
for name in ("report-json", "consumers-kcl"):
    prefix = None
    header = None
    for line in docs[name].split("\n"):
        h = re.match(r"#+ (.*)", line)
        if h or line.strip() in sections:
            title = h.group(1) if h else line.strip()
            prefix = sections.get(title)
            continue
        if not line.startswith("|"):
            header = None
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cols
            continue
        if prefix is None or header[:2] != ["key", "type"] or set(cols[0]) <= set("-: "):
            continue
        want = types.get(cols[1])
        if want is None:
            bad(f"docs/{name}.md: unknown type '{cols[1]}' for {cols[0]}")
            continue
        for key in re.findall(r"`([^`]+)`", cols[0])[:1] if "(" in cols[0] else \
                re.findall(r"`([^`]+)`", cols[0]):
            path = f"{prefix}.{key}" if prefix else key
            got = values(path)
            checked += 1
            if not got:
                bad(f"docs/{name}.md documents {path}, which no scenario's report has")
                continue
            wrong = [v for v in got if not isinstance(v, want) or
                     (isinstance(v, bool) and bool not in want)]
            if wrong:
                bad(f"docs/{name}.md says {path} is {cols[1]}, the report has {wrong[0]!r}")
if checked < 100:
    bad(f"only {checked} documented keys were checked: did the tables' layout change?")

# 3. random.streams lists every random stream of the run, each seed derived from the
# master seed and the stream's name as sim/sim_rng.c does (FNV-1a, splitmix64, folded to
# 32 bits, never 0); the loader's own (a poisson replay's) included.
M = (1 << 64) - 1
def mix(x):
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
def derive(master, name):
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) & M
    x = mix(master ^ mix(h))
    return ((x ^ (x >> 32)) & 0xffffffff) or 0x9e3779b9
for f in sorted(glob.glob(f"{tmp}/*.json")):
    r = json.load(open(f))
    streams = r["random"]["streams"]
    for s in streams:
        if s["seed"] != derive(r["seed"], s["name"]):
            bad(f"{f.split('/')[-1]}: random stream {s['name']} has seed {s['seed']}, "
                f"not the one derived from seed {r['seed']} and its name")
    names = [s["name"] for s in streams]
    if len(set(names)) != len(names):
        bad(f"{f.split('/')[-1]}: a random stream is listed twice: {names}")
rd = json.load(open(f"{tmp}/replay-day.json"))
if not any(s["name"].endswith("/replay") for s in rd["random"]["streams"]):
    bad("replay-day (within_minute: poisson) does not list its replay's random stream")
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

# A consumer that delivered no record (here one that starts after the end) has no
# latency: each figure is null in the JSON and "-" in the text, not 0 (an instant
# delivery to the reader).
cat >"$tmp/none.yaml" <<EOF
name: none-delivered
duration: 1m
stream: {name: s, shards: 1}
producers: [{name: p, rate: 10 records/s, record_size: 1 KiB}]
consumers: [{name: late, kind: polling, start: 2m}, {name: live, kind: polling}]
EOF
if "$kdsim" run "$tmp/none.yaml" --json >"$tmp/none.json" 2>"$tmp/none.err" &&
    "$kdsim" run "$tmp/none.yaml" >"$tmp/none.txt" 2>>"$tmp/none.err"; then
    python3 - "$tmp/none.json" <<'EOF' || fail "none-delivered: latency of no delivery not null"
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["consumers"]}
assert c["late"]["records_delivered"] == 0 and c["live"]["records_delivered"] > 0
assert all(v is None for v in c["late"]["latency_ms"].values()), c["late"]["latency_ms"]
assert all(isinstance(v, float) for v in c["live"]["latency_ms"].values()), c["live"]["latency_ms"]
EOF
    grep -Eq '^  late +polling +0 +0 +0 +- +- +- +- ' "$tmp/none.txt" ||
        fail "none-delivered: the text report does not show - for no latency: $(grep '^  late' "$tmp/none.txt")"
else
    fail "none-delivered: kdsim run failed: $(head -3 "$tmp/none.err")"
fi

cli_finish cli_report_keys
