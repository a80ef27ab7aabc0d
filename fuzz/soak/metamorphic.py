#!/usr/bin/env python3
# metamorphic.py - a metamorphic soak of kdsim: relations between two runs of one random
# scenario that must hold exactly.
#
# What it is for: soak.py checks one report against the identities the docs state; it
# cannot see a figure that is wrong but consistent. This tool runs each scenario of
# soak.py's generator (generate(seed), the same seeds, the same scenarios) two or more
# ways that the design says are equivalent, and compares the runs. No knowledge of the
# right answer is needed, only of what must not change:
#
#   1. duration prefix: the scenario run for its duration D and for a shorter D' (a whole
#      number of seconds between a quarter and three quarters of D, drawn from the seed)
#      with --trace: every trace line stamped strictly before D' is the same line, in the
#      same order, in both traces. The run's length may change nothing before it ends
#      (docs/consumers-firehose-flink.md: an event after the end "has no effect, so a
#      shorter --duration simply leaves it out"; `--warmup` relies on the same prefix
#      property). No line is written at the end of a run (kds_world_finish and the
#      models' finish functions write none; the trace's lines all come from events, and
#      sim_run_until runs every event due at or before the end), so no margin is needed;
#      lines stamped exactly D' are left out only because a %.6f stamp rounds. The
#      shorter trace holds no line after D', and both are in time order (README, "The
#      trace": "one line per thing that happened, in time order").
#   2. inert entity: one more entity with a fresh name, appended after the others, whose
#      start is after the run's end (a polling, efo, lambda, firehose, flink or KCL
#      consumer, or a producer, chosen by the seed). Every entity draws from its own
#      random stream seeded from the master seed and its name (README, "Determinism"),
#      and one that never starts does nothing, so: the other entities' trace lines are
#      unchanged, the inert one writes none, and the JSON report's stream, producers,
#      consumers and cost are unchanged but for the new entity's own object. Left out,
#      narrowly: `random.streams` (one more seed: the others must be unchanged) and
#      `assumptions` (the new kind's may be added: the others must be there, in their
#      order); `events`, the count of events run, is compared (the inert entity's are
#      scheduled after the end, so none runs). The cost is compared: an enhanced fan-out
#      reader registers at its start (README, `kind: efo`) and is billed from then on,
#      so one that starts after the end costs nothing.
#   3. override identity: --set KEY=VALUE where VALUE is the scenario's own value for KEY
#      (--seed and --duration with the scenario's seed and duration, and up to three
#      scalar keys drawn from the scenario) gives byte-identical JSON (the plain report
#      has no scenario_sha256; it would be left out if it had one).
#   4. the trace is an observer: the report is byte-identical with and without --trace
#      and with trace filters (README: "never changes the run"), and a filtered trace
#      (--trace-kinds, --trace-names, --trace-shard, drawn from what the full trace holds)
#      is exactly the full trace's lines that pass the filters (kds_trace_wants).
#
# Trace lines are compared by their fields (time, kind, entity, shard, text), not their
# columns: the entity column is as wide as the run's longest name, which relation 2 may
# change.
#
# How to run it (Python 3, standard library only; the same options as soak.py):
#
#   python3 fuzz/soak/metamorphic.py build/kdsim --seeds 1..300          # a short soak
#   python3 fuzz/soak/metamorphic.py build/kdsim --seeds 1..3000 --quiet # a long one
#   python3 fuzz/soak/metamorphic.py build-asan/kdsim --seeds 1..30 --asan
#   python3 fuzz/soak/metamorphic.py build/kdsim --seeds 42 --keep /tmp/m # one seed, kept
#
# Each failure is printed as `FAIL seed N: RELATION: DETAIL` with the kept files; the
# exit status is 1 when a seed failed, 0 otherwise, 2 for a usage error. A failure's
# files (scenario, variant scenario, traces, reports) are kept as seed-N.* in the folder.
#
# The two model bugs its first runs found (a producer's flush prepared early drew only
# when due within the run; a polling consumer attached its cursors before it started,
# holding back the logs' compaction) are fixed, with a scenario each in tests/scenarios
# that tests/cli_metamorphic.sh checks.

import copy
import json
import os
import random
import re
import shutil
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source folder
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402  (the generator and the helpers to run kdsim)

# A trace line's stamp (%14.6f) and the two spaces after it (kds_trace.c).
_STAMP = re.compile(r" *(\d+)\.(\d{6})  \S")


class Fail(Exception):
    """A relation that did not hold: (relation, detail)."""


def trace(path):
    """The lines of a trace file as (stamp in whole microseconds, line), header dropped,
    read as they come (a long run's trace can be hundreds of megabytes); fails on a line
    that is not a trace line and on a stamp earlier than the line before (README, "The
    trace": "in time order")."""
    what = os.path.basename(path)
    prev = -1
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if i == 0 and line.lstrip().startswith("time (s)"):
                continue
            m = _STAMP.match(line)
            if not m or len(line.split(None, 4)) < 5:
                raise Fail("trace", f"{what} line {i + 1} is not a trace line: {line[:200]!r}")
            t = int(m.group(1)) * 1000000 + int(m.group(2))
            if t < prev:
                raise Fail("trace in time order", f"{what} line {i + 1} comes after a line "
                           f"stamped later: {line[:300]}")
            prev = t
            yield t, line


def fields(line):
    """A trace line as (time, kind, entity, shard, what happened): the columns' widths
    left out, as the entity column is as wide as the run's longest name."""
    return tuple(line.split(None, 4))


def short(line):
    """One trace line, shortened for a message."""
    s = "  ".join(fields(line))
    return s if len(s) <= 300 else s[:300] + "..."


def compare(a, b, what_a, what_b):
    """Compare two iterables of (stamp, line) by their lines' fields: None when equal,
    else (stamp of the first difference, message)."""
    n = 0
    end = object()
    ia, ib = iter(a), iter(b)
    while True:
        x, y = next(ia, end), next(ib, end)
        n += 1
        if x is end and y is end:
            return None
        if x is end or y is end:
            t, extra = (y if x is end else x)
            return t, (f"{what_b if x is end else what_a} has a line more than the other "
                       f"(compared line {n}): {short(extra)}")
        if fields(x[1]) != fields(y[1]):
            return min(x[0], y[0]), (f"compared line {n} differs:\n      {what_a}: "
                                     f"{short(x[1])}\n      {what_b}: {short(y[1])}")


def json_diff(a, b, path=""):
    """The first path where two JSON values differ, with both values, or None."""
    if type(a) is not type(b):
        return f"{path or '.'}: {json.dumps(a)[:200]} vs {json.dumps(b)[:200]}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'the first' if k in a else 'the second'}"
            d = json_diff(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        if list(a) != list(b):
            return f"{path or '.'}: keys in another order"
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = json_diff(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        return None
    if a != b:
        return f"{path or '.'}: {json.dumps(a)[:200]} vs {json.dumps(b)[:200]}"
    return None


def wants(line, kinds, names, shard):
    """Whether a trace line passes the filters, as kds_trace_wants decides: its kind among
    `kinds`, its entity among `names` (for a KCL worker's CONSUMER/WORKER, either part),
    its shard `shard`; None keeps everything."""
    _, kind, entity, sh, _ = fields(line)
    if kinds is not None and kind not in kinds:
        return False
    if names is not None and entity not in names:
        if "/" not in entity:
            return False
        app, worker = entity.split("/", 1)
        if app not in names and worker not in names:
            return False
    return shard is None or sh == shard


def scalar_leaves(v, path=""):
    """(key path as --set writes it, value) of every scalar in a scenario."""
    if isinstance(v, dict):
        for k, x in v.items():
            yield from scalar_leaves(x, f"{path}.{k}" if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from scalar_leaves(x, f"{path}[{i}]")
    else:
        yield path, v


def set_text(v):
    """The plain YAML scalar --set takes for a value, or None when plain would misread it
    (a string that the scenario file had to quote)."""
    s = soak.scalar(v)
    if isinstance(v, str) and s != v:
        return None
    return s


class Seed:
    """The runs and relations of one seed; files go to `folder` as seed-N.*."""

    def __init__(self, binary, seed, folder, timeout):
        self.binary, self.seed, self.folder, self.timeout = binary, seed, folder, timeout
        self.r = random.Random(f"metamorphic-{seed}")  # not the generator's stream
        self.files = []   # every file written for this seed
        self.tags = set()  # what was checked, for the coverage lines

    def file(self, suffix):
        """The path of one of this seed's files, remembered for the clean-up."""
        p = os.path.join(self.folder, f"seed-{self.seed}.{suffix}")
        self.files.append(p)
        return p

    def write_scenario(self, sc, suffix, comment):
        """Write a scenario as YAML; return its path."""
        path = self.file(suffix)
        with open(path, "w", encoding="utf-8") as out:
            out.write(f"# kdsim metamorphic scenario ({comment}): python3 "
                      f"fuzz/soak/metamorphic.py KDSIM --seeds {self.seed}\n")
            out.write(soak.to_yaml(sc) + "\n")
        return path

    def run(self, what, scenario, args, json_out=True):
        """Run kdsim; fail unless it exits 0 with nothing on stderr. Return the JSON bytes
        (kept in seed-N.WHAT.json) or b""."""
        cmd = ["run", scenario] + (["--json"] if json_out else []) + args
        rc, out, err = soak.kdsim(self.binary, cmd, self.timeout)
        text = err.decode(errors="replace").strip()
        if json_out:
            with open(self.file(f"{what}.json"), "wb") as f:
                f.write(out)
        line = "kdsim " + " ".join(cmd)
        if rc is None:
            raise Fail(f"{what}: run within the timeout", f"{line}: no result after "
                       f"{self.timeout} s")
        if rc != 0 or text:
            raise Fail(f"{what}: exit status 0 and nothing on stderr",
                       f"{line}: status {rc}: {text[-1500:]}")
        return out

    def check(self):
        """Every relation for this seed; raises Fail at the first that does not hold."""
        sc, extra, _ = soak.generate(self.seed)
        self.sc = sc
        for name, text in extra.items():
            p = os.path.join(self.folder, name)
            self.files.append(p)
            with open(p, "w", encoding="utf-8") as out:
                out.write(text)
        self.path = path = self.write_scenario(sc, "yaml", "as generated")
        rc, _, err = soak.kdsim(self.binary, ["validate", path], self.timeout)
        if rc != 0:
            raise Fail("generator bug: kdsim validate refused the scenario",
                       f"status {rc}: {err.decode(errors='replace').strip()[:1000]}")
        full = self.file("full.trace")
        traced = self.run("full", path, ["--trace", full])
        plain = self.run("plain", path, [])
        # 4, first part: the trace never changes the report.
        if traced != plain:
            d = json_diff(json.loads(plain), json.loads(traced))
            raise Fail("observer: the report is the same with --trace", d or "bytes differ")
        self.report = json.loads(plain)
        self.prefix(path, full)
        self.inert(full)
        self.override(path, plain)
        self.observer(path, full, plain)

    # -- 1. duration prefix --------------------------------------------------------------

    def prefix(self, path, full):
        """The trace of a shorter run is the full trace's prefix before its end."""
        d = soak.parse_dur(self.sc["duration"])
        cut = int(round(d * self.r.uniform(0.25, 0.75)))
        if cut < 1 or cut >= d:
            self.tags.add("prefix: skipped (too short)")
            return
        part = self.file("short.trace")
        self.run("short", path, ["--duration", f"{cut}s", "--trace", part], json_out=False)
        end = cut * 1000000
        late = [x for x in trace(part) if x[0] > end]
        if late:
            raise Fail("prefix: nothing after the end", f"the --duration {cut}s trace has "
                       f"{len(late)} lines after {cut} s, the first: {short(late[0][1])}")
        diff = compare((x for x in trace(full) if x[0] < end),
                       (x for x in trace(part) if x[0] < end),
                       f"run of {self.sc['duration']}", f"run of {cut}s")
        if not diff:
            self.tags.add("prefix")
            return
        relation = f"prefix: the lines before {cut} s are those of the longer run"
        raise Fail(relation, diff[1])

    # -- 2. inert entity -----------------------------------------------------------------

    def inert(self, full):
        """An entity that starts after the end changes nothing for the others."""
        after = self.r.choice([1, 60, 3600])  # the start, this long after the end
        kind = self.inert_kind()
        self.inert_one(full, kind, after)

    def inert_kind(self):
        """The kind of the inert entity, drawn from the seed's own stream."""
        sc = self.sc
        kinds = ["producer", "polling", "lambda", "firehose", "flink", "kcl"]
        limit = 50 if sc["stream"].get("mode") == "on_demand_advantage" else 20
        efo = sum(1 for c in sc.get("consumers", [])
                  if c["kind"] == "efo" or c.get("retrieval") == "efo")
        if efo < limit:
            kinds += ["efo", "lambda-efo", "flink-efo", "kcl-efo"]
        return self.r.choice(kinds)

    def inert_one(self, full, kind, after):
        """The scenario with one more entity of this kind, started `after` seconds after
        the end, against the scenario alone."""
        sc = copy.deepcopy(self.sc)
        d = soak.parse_dur(sc["duration"])
        names = {p["name"] for p in sc["producers"]} | {c["name"] for c in sc.get("consumers", [])}
        name = "zz-inert"
        while name in names:
            name += "x"
        start = soak.dur(d + after)
        if kind == "producer":
            sc["producers"].append({"name": name, "rate": "10 records/s",
                                    "record_size": "100 B", "start": start})
        else:
            base = kind.split("-")[0]
            c = {"name": name, "kind": base}
            if kind.endswith("-efo"):
                c["retrieval"] = "efo"
            if base == "kcl":
                c["workers"] = [{"name": "w1", "start": start}]
            else:
                c["start"] = start
            sc.setdefault("consumers", []).append(c)
        self.tags.add(f"inert: {kind}")
        path = self.write_scenario(sc, "inert.yaml", f"one more {kind}, started after the end")
        lines = self.file("inert.trace")
        rep = json.loads(self.run("inert", path, ["--trace", lines]))

        own = []

        def others():
            """The inert run's trace lines of every other entity; its own kept in `own`."""
            for x in trace(lines):
                entity = fields(x[1])[2]
                if entity == name or entity.startswith(name + "/"):
                    own.append(x)
                else:
                    yield x
        diff = compare(trace(full), others(), "the scenario's trace", f"with {name} ({kind})")
        if diff:
            raise Fail(f"inert: another entity's trace lines are unchanged by {name} ({kind})",
                       diff[1])
        if own:
            raise Fail("inert: an entity started after the end writes no trace line",
                       f"{name} ({kind}) has {len(own)}, the first: {short(own[0][1])}")
        base = self.report
        group = "producers" if kind == "producer" else "consumers"
        if [x["name"] for x in rep[group]] != [x["name"] for x in base[group]] + [name]:
            raise Fail("inert: the report lists the new entity last", f"{group}: "
                       + ", ".join(x["name"] for x in rep[group]))
        rep[group].pop()
        # A KCL application's workers draw from streams named after it (CONSUMER/worker/W).
        rng = ("producer/" if kind == "producer" else "consumer/") + name
        streams = rep["random"]["streams"]
        rep["random"]["streams"] = [x for x in streams if x["name"] != rng
                                    and not x["name"].startswith(rng + "/")]
        if len(rep["random"]["streams"]) == len(streams):
            raise Fail("inert: the report lists the new entity's random stream",
                       json.dumps(streams)[:500])
        extra = [a for a in rep["assumptions"] if a not in base["assumptions"]]
        rep["assumptions"] = [a for a in rep["assumptions"] if a in base["assumptions"]]
        d = json_diff(base, rep)
        if d:
            raise Fail(f"inert: the report is unchanged by {name} ({kind}) but for its own "
                       "object", d + (f" (new assumptions: {len(extra)})" if extra else ""))

    # -- 3. override identity ------------------------------------------------------------

    def override(self, path, plain):
        """--set KEY=its own value changes nothing."""
        leaves = [(k, set_text(v)) for k, v in scalar_leaves(self.sc)
                  if k not in ("seed", "duration") and set_text(v) is not None]
        picked = self.r.sample(leaves, min(3, len(leaves)))
        args = ["--seed", str(self.sc["seed"]), "--duration", self.sc["duration"]]
        for k, v in picked:
            args += ["--set", f"{k}={v}"]
        out = self.run("override", path, args)
        a, b = json.loads(plain), json.loads(out)
        a.pop("scenario_sha256", None)
        b.pop("scenario_sha256", None)
        same = a == b if b"scenario_sha256" in plain + out else out == plain
        if not same:
            d = json_diff(a, b) or "the bytes differ"
            raise Fail("override: --set KEY=its own value changes nothing",
                       " ".join(args) + ": " + d)
        self.tags.add("override")

    # -- 4. the trace is an observer -----------------------------------------------------

    def observer(self, path, full, plain):
        """A filtered trace is the full trace's lines that pass the filters."""
        # One line drawn evenly from the trace, read as it comes (reservoir sampling).
        pick, kinds_seen = None, set()
        for i, (_, line) in enumerate(trace(full)):
            kinds_seen.add(fields(line)[1])
            if self.r.randrange(i + 1) == 0:
                pick = fields(line)
        if pick is None:
            self.tags.add("observer: skipped (empty trace)")
            return
        kinds = names = shard = None
        args = []
        what = self.r.choice(["kinds", "names", "shard", "kinds+names", "kinds+shard", "all"])
        if "kinds" in what or what == "all":
            ks = sorted(kinds_seen)
            kinds = {pick[1]} | set(self.r.sample(ks, min(len(ks), self.r.randint(0, 2))))
            args += ["--trace-kinds", ",".join(sorted(kinds))]
        if "names" in what or what == "all":
            ent = pick[2]
            if "/" in ent and self.r.random() < 0.5:  # a worker by its own name or its app
                ent = self.r.choice(ent.split("/", 1))
            names = {ent}
            args += ["--trace-names", ent]
        if ("shard" in what or what == "all") and pick[3] != "-":
            shard = pick[3]
            args += ["--trace-shard", shard if self.r.random() < 0.5 else str(int(shard[8:]))]
        if not args:
            kinds = {pick[1]}
            args = ["--trace-kinds", pick[1]]
        got = self.file("filtered.trace")
        out = self.run("filtered", path, ["--trace", got] + args)
        if out != plain:
            d = json_diff(json.loads(plain), json.loads(out))
            raise Fail("observer: the report is the same with trace filters",
                       " ".join(args) + ": " + (d or "bytes differ"))
        diff = compare((x for x in trace(full) if wants(x[1], kinds, names, shard)),
                       trace(got), "the full trace, filtered here", "the trace kdsim filtered")
        if diff:
            raise Fail("observer: a filtered trace is the full trace's lines that pass",
                       " ".join(args) + ": " + diff[1])
        self.tags.add("observer")


def main(argv):
    """The command line: run the seeds, print failures and the summary; 1 if any failed."""
    args, binary, timeout, folder = soak.command_line(
        argv, "Metamorphic soak of kdsim: soak.py's random scenarios, each run several ways "
        "that must agree.", "keep every seed's files in DIR", 60, "kdsim-metamorphic-")
    t0 = time.monotonic()
    failed = []
    coverage = {}
    for seed in args.seeds:
        s0 = time.monotonic()
        one = Seed(binary, seed, folder, timeout)
        try:
            one.check()
            fail = None
        except Fail as e:
            fail = e.args
        except (ValueError, KeyError, TypeError, IndexError) as e:
            fail = ("the report has the documented keys and is JSON",
                    f"{type(e).__name__}: {e}")
        for t in one.tags:
            coverage[t] = coverage.get(t, 0) + 1
        if fail:
            failed.append(seed)
            print(f"FAIL seed {seed}: {fail[0]}: {fail[1]}", flush=True)
            print(f"    scenario: {getattr(one, 'path', '-')} (files: "
                  f"{os.path.join(folder, f'seed-{seed}.*')})", flush=True)
        else:
            if not args.quiet:
                print(f"ok   seed {seed} ({time.monotonic() - s0:.2f} s)", flush=True)
            if not args.keep:
                for p in one.files:
                    if os.path.exists(p):
                        os.remove(p)
    if not args.keep and not failed:
        shutil.rmtree(folder, ignore_errors=True)
    if not args.quiet:
        print("coverage (seeds per relation checked):")
        for k in sorted(coverage):
            print(f"    {k}: {coverage[k]}")
    n = len(args.seeds)
    seeds = f"{args.seeds.start}..{args.seeds.stop - 1}"
    print(f"metamorphic: {n} scenarios (seeds {seeds}), {len(failed)} failed, "
          f"{time.monotonic() - t0:.1f} s"
          + (f"; failed seeds: {' '.join(map(str, failed))}" if failed else "")
          + (f"; files kept in {folder}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
