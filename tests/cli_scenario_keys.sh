#!/usr/bin/env bash
# cli_scenario_keys.sh - every scenario key the loader takes is documented, and refuses a
# wrong value cleanly. The loader is asked, not read: a probe sets a key nobody uses
# (`zzzzzzzzzz`) in each mapping through --set, and `kdsim validate` answers with the keys
# allowed there ("unknown key 'zzzzzzzzzz'; the keys allowed here are ..."), so the test
# follows the loader into every mapping, list of mappings and variant (a distribution's
# `dist`, a rate's `profile`) of a top level, a stream, a producer and each consumer kind.
# Each key found must have a row in the documentation's tables for its part (README.md for
# the top level, the stream, producers and the polling and enhanced fan-out consumers;
# docs/consumers-*.md for Lambda, Firehose, Flink and the KCL): a row whose first column
# names its dotted path (such as `function.duration`), or, for a key inside a documented
# one (a list's items, a mapping described in one row), the row of that key naming it in
# its text. A distribution's parameters are checked against the reference's introduction,
# which describes them for every distribution key, and the `replay` profile's against
# docs/replay.md's table, the billing overrides' against the price file. The crawl must
# find a plausible number of keys, so that a change to the messages cannot make the test
# pass by finding none.
#
# Then every key gets a wrong value (a mapping, a list, a negative, a word, a huge
# number, ...: one each, taken in turn): a refusal must be reported at --set with exit
# status 2, and a value taken must run for 5 simulated seconds; never a crash, a hang or
# a sanitizer report. KEYS_WRONG_SHIFT=N gives each key the value N places further on
# the list (to try them all: 0 to 10); KEYS_DUMP=1 lists every key found.
#
# usage: bash tests/cli_scenario_keys.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"

if ! python3 - "$kdsim" <<'EOF'; then
import os, re, subprocess, sys
sys.path.insert(0, "fuzz/soak")
from soak import flow  # a value in YAML flow style, as the soak writes its overrides

kdsim = sys.argv[1]
ok = True
def bad(msg):
    global ok
    ok = False
    print(f"FAIL {msg}")

FLOW = "(flow)"
PROBE = "zzzzzzzzzz"  # far from every key, so that no "did you mean" replaces the list

# A path is a list of nodes (seg, disc): seg is a key, an int (an item of a list the
# scenario has) or None (an item of a new list); disc holds the discriminator a variant
# mapping needs ({"dist": "pareto"}), set with the probe.
def label(path):
    out = ""
    for seg, _ in path:
        if isinstance(seg, str):
            out += ("." if out else "") + seg
        else:
            out += f"[{seg or 0}]"
    return out

def value(path, i, key, v):
    """The flow value of node i: a list of its item, or a mapping holding its
    discriminator and either key: v or the next node."""
    if i + 1 < len(path) and path[i + 1][0] is None:
        return [value(path, i + 1, key, v)]
    d = {k: x for k, x in path[i][1].items() if k != FLOW}
    if i == len(path) - 1:
        d[key] = v
    else:
        d[path[i + 1][0]] = value(path, i + 1, key, v)
    return d

def setting(path, key=PROBE, v="1"):
    """The --set that gives `key` the value v (YAML text) in the mapping at `path`: a
    dotted path as far as the scenario's own mappings and lists go, then a flow value."""
    f = next((i for i, (seg, disc) in enumerate(path) if seg is None or disc), len(path))
    # (A disc of {FLOW: 1} only asks for a flow value: the scenario's own value there is
    # not a mapping, such as a rate of "100 records/s".)
    if f == len(path):
        return f"{label(path)}.{key}={v}" if path else f"{key}={v}"
    s = f - 1 if path[f][0] is None else f
    # v goes in as written (flow() would quote "{}"), in place of a plain word.
    return f"{label(path[:s + 1])}=" + flow(value(path, s, key, "vvvvvvvvvv")).replace(
        "vvvvvvvvvv", v)

def ask(scenario, path):
    r = subprocess.run([kdsim, "validate", scenario, "--set", setting(path)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 2:
        bad(f"{scenario}: --set {setting(path)}: exit status {r.returncode}, expected 2")
    return r.stderr

def words(listed):
    listed = listed.strip()
    head, _, last = listed.rpartition(" and ")
    return [w.strip() for w in head.split(",") if w.strip()] + [last.strip()] if head \
        else [listed]

def keys_at(scenario, path):
    """("map", keys), ("variant", (key, options)), ("list", None) or ("leaf", None)."""
    err = ask(scenario, path)
    at = re.escape(label(path) + ": ") if path else ""
    m = re.search(r"--set: " + at + r"unknown key '" + PROBE +
                  r"'; the keys allowed here are (.*)$", err, re.M)
    if m:
        return "map", words(m.group(1))
    m = re.search(r"--set: " + at + r"missing required key '(\w+)'(?:; give one of| \(one of)"
                  r" ([^)\n]*)", err)
    if m and not [k for k in path[-1][1] if k != FLOW]:
        return "variant", (m.group(1), [w.strip() for w in m.group(2).split(",")])
    if re.search(r"--set: " + at + r"(expected a list|cannot set key '" + PROBE +
                 r"': the value here is a list)", err):
        return "list", None
    if path and not path[-1][1] and re.search(
            r"--set: " + at + r"cannot set key '" + PROBE + r"': the value here is a single "
            r"value", err):
        return keys_at(scenario, path[:-1] + [(path[-1][0], {FLOW: 1})])
    return "leaf", None

# (root, relative key path as a tuple) -> (the variant it sits in or None, its scenario,
# the path of its mapping, its name)
found = {}
dist_keys = {}  # a distribution kind -> its keys

def crawl(scenario, root, path, rel, variant, depth=0):
    if depth > 8:
        bad(f"{scenario}: {label(path)}: nested deeper than any scenario key")
        return
    kind, info = keys_at(scenario, path)
    if kind == "variant":
        key, options = info
        path[-1] = (path[-1][0], {})
        for o in options:
            sub = path[:-1] + [(path[-1][0], {key: o})]
            # Every distribution is read by one parser: its kinds' keys are asked once.
            if key == "dist" and o in dist_keys:
                k2, ks = "map", dist_keys[o]
            else:
                k2, ks = keys_at(scenario, sub)
                if key == "dist" and k2 == "map":
                    dist_keys[o] = ks
            if k2 != "map":
                bad(f"{scenario}: {label(sub)} with {key}: {o}: no keys listed")
                continue
            for k in ks:
                found.setdefault((root, tuple(rel + [k])), ((key, o), scenario, list(sub), k))
                if k != key:
                    crawl_child(scenario, root, sub, rel, k, (key, o), depth)
        return
    if kind != "map":
        return
    for k in info:
        found.setdefault((root, tuple(rel + [k])), (variant, scenario, list(path), k))
        crawl_child(scenario, root, path, rel, k, variant, depth)

def crawl_child(scenario, root, path, rel, k, variant, depth):
    if not path and k in ("producers", "consumers"):
        return  # roots of their own, by item
    child = path + [(k, {})]
    kind, _ = keys_at(scenario, child)
    if kind in ("map", "variant"):
        crawl(scenario, root, child, rel + [k], variant, depth + 1)
    elif kind == "list":
        item = child + [(None, {})]
        if keys_at(scenario, item)[0] in ("map", "variant"):
            crawl(scenario, root, item, rel + [k + "[]"], variant, depth + 1)

ROOTS = [  # (scenario, path of the root, its name, the document of its keys)
    ("scenarios/acme-clickstream.yaml", [], "top level", "README.md"),
    ("scenarios/acme-clickstream.yaml", [("producers", {}), (0, {})], "producers[]",
     "README.md"),
    ("scenarios/latency-one-poller.yaml", [("consumers", {}), (0, {})], "polling",
     "README.md"),
    ("scenarios/latency-efo.yaml", [("consumers", {}), (0, {})], "efo", "README.md"),
    ("scenarios/acme-clickstream.yaml", [("consumers", {}), (0, {})], "lambda",
     "docs/consumers-lambda.md"),
    ("scenarios/acme-clickstream.yaml", [("consumers", {}), (1, {})], "firehose",
     "docs/consumers-firehose-flink.md"),
    ("scenarios/acme-clickstream.yaml", [("consumers", {}), (2, {})], "flink",
     "docs/consumers-firehose-flink.md"),
    ("scenarios/kcl-second-worker.yaml", [("consumers", {}), (0, {})], "kcl",
     "docs/consumers-kcl.md"),
]
for scenario, path, name, _ in ROOTS:
    crawl(scenario, name, list(path), [], None)

def rows(doc):
    """(first column's backticked names, the whole row) of every table row of doc."""
    out = []
    for line in open(doc, encoding="utf-8"):
        if not line.startswith("|"):
            continue
        first = line.strip().strip("|").split("|")[0]
        names = [n.strip() for span in re.findall(r"`([^`]+)`", first)
                 for n in span.split(",")]
        out.append((names, line))
    return out

def has_word(text, w):
    """Whether w is a word of the code spans of text (`{at, split: {shard, hash_key}}`)."""
    return any(re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", span)
               for span in re.findall(r"`([^`]*)`", text))

readme = open("README.md", encoding="utf-8").read()
intro = readme[readme.index("## Scenario reference"):readme.index("### Top level")]
replay = rows("docs/replay.md")
prices = open("scenarios/prices/us-east-1-2026-09.yaml", encoding="utf-8").read()
tables = {doc: rows(doc) for _, _, _, doc in ROOTS}
doc_of = {name: doc for _, _, name, doc in ROOTS}

def documented(root, rel, variant):
    if variant and variant[0] == "dist":
        # A distribution's parameters: the reference's introduction gives each kind's.
        return has_word(intro, rel[-1])
    if variant and variant == ("profile", "replay") and rel[-1] != "profile":
        return any(rel[-1] in ns for ns, _ in replay)
    if root == "top level" and rel[:2] == ["billing", "overrides"] and len(rel) > 2:
        # Sections and items of the price file, which describes each one.
        return re.search(r"^" + "  " * (len(rel) - 3) + re.escape(rel[-1]) + r":", prices,
                         re.M)
    names = list(rel)
    # The README's `stream` table names a stream key relative to the stream.
    if root == "top level" and len(names) > 1 and names[0] == "stream":
        names = names[1:]
    rs = tables[doc_of[root]]
    # A list's items are `workers[].name` in one document, inside the row of
    # `resharding.events` in another: either spelling names them.
    def spellings(parts):
        return {".".join(parts), ".".join(p.removesuffix("[]") for p in parts)}
    full = spellings(names)
    if any(f in ns for ns, _ in rs for f in full):
        return True
    # A mapping documented by its keys' rows (`batch.records`, `batch.bytes`, ...).
    if any(n.startswith((f + ".", f + "[].")) for ns, _ in rs for n in ns for f in full):
        return True
    # Inside a key documented in one row: that row names it.
    leaf = names[-1].removesuffix("[]")
    for cut in range(len(names) - 1, 0, -1):
        for head in spellings(names[:cut]):
            for ns, line in rs:
                if head in ns and has_word(line, leaf):
                    return True
    # A consumer's `name` and `kind` are said once for all kinds, before the tables.
    if root in ("polling", "efo") and names in (["name"], ["kind"]):
        return "Every consumer has `name` (unique) and `kind`" in readme
    return False

counts = {}
for (root, rel), (variant, _, _, _) in sorted(found.items()):
    counts[root] = counts.get(root, 0) + 1
    if not documented(root, list(rel), variant):
        within = f" (with {variant[0]}: {variant[1]})" if variant else ""
        bad(f"{root}: key {'.'.join(rel)}{within} is taken by the loader but not documented "
            f"in {doc_of[root]}")
total = sum(counts.values())

# Wrong values: each key gets one of these (in turn, so that every kind meets every key
# over the list, at one validate a key). A refusal must come with a message at --set (the
# place the value came from) and exit status 2; a value taken must run: 5 simulated
# seconds, exit status 0. Never a sanitizer report, a crash or a hang.
WRONG = ["{}", "[]", "-1", "x", "1e308", "~", "0", "[[1]]", "{a: {b: 1}}", "a b",
         "99999999999999999999"]
runs = refused = 0
shift = int(os.environ.get("KEYS_WRONG_SHIFT", "0"))
def kdsim_run(args):
    try:
        return subprocess.run([kdsim] + args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
for i, ((root, rel), (_, scenario, path, k)) in enumerate(sorted(found.items())):
    arg = setting(path, k, WRONG[(i + shift) % len(WRONG)])
    r = kdsim_run(["validate", scenario, "--set", arg])
    if r is None or r.returncode not in (0, 2) or "Sanitizer" in r.stderr or \
            "runtime error" in r.stderr:
        bad(f"{scenario}: validate --set {arg}: " +
            (f"exit status {r.returncode}: {r.stderr[:400]}" if r else "timed out"))
        continue
    if r.returncode == 2:
        refused += 1
        if not re.search(r"^kdsim: --set: ", r.stderr, re.M):
            bad(f"{scenario}: validate --set {arg} refused it, but not at --set: "
                f"{r.stderr[:400]}")
        continue
    runs += 1
    r = kdsim_run(["run", scenario, "--set", arg, "--duration", "5s", "--json"])
    if r is None or r.returncode != 0 or r.stderr:
        bad(f"{scenario}: run --set {arg} (validated): " +
            (f"exit status {r.returncode}: {r.stderr[:400]}" if r else "timed out"))
print(f"wrong values: {refused} refused at --set, {runs} taken and run")
if os.environ.get("KEYS_DUMP"):
    for (r, rel), (v, _, _, _) in sorted(found.items()):
        print(r, ".".join(rel), v or "")
print("keys found: " + ", ".join(f"{r} {n}" for r, n in counts.items()) + f"; {total} in all")
for _, _, name, _ in ROOTS:
    if counts.get(name, 0) < 8:
        bad(f"{name}: only {counts.get(name, 0)} keys found: did the loader's messages change?")
if total < 250:
    bad(f"only {total} scenario keys found: did the loader's messages change?")
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

cli_finish cli_scenario_keys
