#!/usr/bin/env python3
# plan_soak.py - a soak of `kdsim plan`: soak.py's random scenarios planned against random
# targets, each plan checked against itself and against `kdsim run --replications`.
#
# What it is for: the planner ranks configurations by what their runs give; a slip in how
# it reads a figure, compares it with a target, picks the answer or the runner-up, or
# sets up a configuration's runs would give a confident wrong answer. For each seed this
# tool takes soak.py's scenario (generate(seed): the same seeds, the same scenarios; only
# those of at most 15 simulated minutes without KCL workers, to keep a plan short), draws
# one to four targets from the seed (lost=, throttle_pct=, a latency of one consumer,
# iterator_age_ms=), runs `kdsim plan --json --replications 2` and checks
# (docs/capacity-planning.md, "The planner"):
#
#   1. the exit status is 0 with an answer, 3 exactly when no configuration meets the
#      targets;
#   2. each configuration "meets the targets when every replication meets every target"
#      (a figure that is not defined misses): its `passes` is its `worst` figures against
#      the targets' maxima;
#   3. the answer is the cheapest configuration that meets them (on a tie, the first in
#      search order), the runner-up the next cheapest;
#   4. each of the first three provisioned configurations, run on its own as
#      `kdsim run --replications 2 --seed MASTER --set stream.mode=provisioned
#      --set stream.shards=N`, gives the same worst figures: the plan is the runs.
#
#   python3 fuzz/soak/plan_soak.py build/kdsim --seeds 1..100 --quiet   # about 10 min
#   python3 fuzz/soak/plan_soak.py build/kdsim --seeds 7 --keep /tmp/p  # one seed, kept
#
# A failure is printed as `FAIL seed N: CHECK: DETAIL` with the command; the exit status
# is 1 when a seed failed, 0 otherwise. Python 3, standard library only.

import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402  (the generator, from this folder)


class Fail(Exception):
    """A check that did not hold: (check, detail)."""


def kdsim(binary, args, timeout):
    """(status or None on a timeout, stdout bytes, stderr text) of one kdsim command."""
    try:
        p = subprocess.run([binary] + args, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, b"", f"no result after {timeout} s"


def targets(seed, sc):
    """The --slo arguments drawn for a seed: one to four upper bounds."""
    r = random.Random(f"plan-soak-{seed}")  # not the generator's stream
    names = [c["name"] for c in sc.get("consumers", [])]
    slos = []
    if r.random() < 0.6:
        slos.append(f"lost={r.choice([0, 0, 10, 1000])}")
    if r.random() < 0.5:
        slos.append(f"throttle_pct={r.choice([0, 0.1, 1, 5])}")
    if names and r.random() < 0.7:
        what = r.choice(["p99_ms", "p50_ms", "max_ms", "mean_ms"])
        slos.append(f"{what}[{r.choice(names)}]={r.choice([100, 500, 2000, 60000])}")
    if names and r.random() < 0.3:
        slos.append(f"iterator_age_ms={r.choice([1000, 60000])}")
    return slos or ["lost=0"]


def close(a, b):
    """Two figures equal, or both undefined (None)."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_plan(binary, seed, path, slos, timeout):
    """Plan one scenario and check it; raises Fail. Returns the plan's configurations."""
    args = ["plan", path, "--json", "--replications", "2", "--jobs", "2"]
    for s in slos:
        args += ["--slo", s]
    cmd = "kdsim " + " ".join(args)
    rc, out, err = kdsim(binary, args, timeout)
    if rc not in (0, 3):
        raise Fail("exit status 0 or 3", f"status {rc}: {err.strip()[-600:]}\n    {cmd}")
    plan = json.loads(out)
    maxima = {t["figure"]: t["max"] for t in plan["targets"]}
    passing = []
    for i, c in enumerate(plan["configurations"]):
        meets = all(c["worst"].get(f) is not None and c["worst"][f] <= m
                    for f, m in maxima.items())
        if meets != c["passes"]:
            raise Fail("passes = every worst figure within its target",
                       f"{c['configuration']}: passes {c['passes']}, worst {c['worst']}, "
                       f"targets {maxima}\n    {cmd}")
        if meets:
            passing.append((c["monthly_usd"], i, c))
    if (rc == 3) != (not passing):
        raise Fail("status 3 exactly when nothing meets the targets",
                   f"status {rc}, {len(passing)} configurations meet them\n    {cmd}")
    passing.sort(key=lambda x: (x[0], x[1]))
    want = passing[0][2]["configuration"] if passing else None
    runner = passing[1][2]["configuration"] if len(passing) > 1 else None
    if plan["answer"] != want:
        raise Fail("the answer is the cheapest that meets the targets",
                   f"answer {plan['answer']}, cheapest {want}\n    {cmd}")
    if plan["runner_up"] != runner:
        raise Fail("the runner-up is the next cheapest",
                   f"runner-up {plan['runner_up']}, next cheapest {runner}\n    {cmd}")
    master = plan["seeds"][0]
    provisioned = [c for c in plan["configurations"] if c["mode"] == "provisioned"][:3]
    for c in provisioned:
        rargs = ["run", path, "--json", "--replications", "2", "--jobs", "2", "--seed",
                 str(master), "--set", "stream.mode=provisioned", "--set",
                 f"stream.shards={c['shards']}"]
        rc, out, err = kdsim(binary, rargs, timeout)
        if rc != 0:
            raise Fail("a configuration runs on its own",
                       f"status {rc}: {err.strip()[-400:]}\n    kdsim {' '.join(rargs)}")
        runs = json.loads(out)["runs"]
        for f in maxima:
            vals = [r["figures"].get(f) for r in runs]
            worst = None if any(v is None for v in vals) else max(vals)
            if not close(worst, c["worst"].get(f)):
                raise Fail("the plan's worst figure is that of the configuration's runs",
                           f"{c['configuration']}: {f} is {c['worst'].get(f)} in the plan, "
                           f"{worst} ({vals}) run on its own\n    kdsim {' '.join(rargs)}")
    return plan["configurations"]


def main(argv):
    """The command line: plan the seeds, print failures and the summary; 1 if any failed."""
    args, binary, timeout, folder = soak.command_line(
        argv, "Soak of kdsim plan: soak.py's scenarios planned against random targets, each "
        "plan checked.", "keep every seed's scenario in DIR", 300, "kdsim-plan-soak-")
    t0 = time.monotonic()
    failed, planned, configs = [], 0, 0
    for seed in args.seeds:
        sc, files, _ = soak.generate(seed)
        if soak.parse_dur(sc.get("duration", "1h")) > 900 or any(
                c.get("kind") == "kcl" for c in sc.get("consumers", [])):
            continue
        path = os.path.join(folder, f"seed-{seed}.yaml")
        with open(path, "w", encoding="utf-8") as out:
            out.write(f"# kdsim plan soak scenario: python3 fuzz/soak/plan_soak.py KDSIM "
                      f"--seeds {seed}\n" + soak.to_yaml(sc) + "\n")
        for name, text in files.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
                out.write(text)
        slos = targets(seed, sc)
        s0 = time.monotonic()
        planned += 1
        try:
            configs += len(check_plan(binary, seed, path, slos, timeout))
        except (Fail, ValueError, KeyError, TypeError, IndexError) as e:
            failed.append(seed)
            what = e.args if isinstance(e, Fail) else ("the plan is JSON with its keys",
                                                       f"{type(e).__name__}: {e}")
            print(f"FAIL seed {seed}: {what[0]}: {what[1]}\n    scenario: {path}", flush=True)
            continue
        if not args.quiet:
            print(f"ok   seed {seed} ({' '.join(slos)}; {time.monotonic() - s0:.1f} s)",
                  flush=True)
    if not args.keep and not failed:
        shutil.rmtree(folder, ignore_errors=True)
    n = len(args.seeds)
    print(f"plan_soak: {planned} plans of {n} seeds ({args.seeds.start}..{args.seeds.stop - 1}), "
          f"{configs} configurations, {len(failed)} failed, {time.monotonic() - t0:.1f} s"
          + (f"; failed seeds: {' '.join(map(str, failed))}; scenarios kept in {folder}"
             if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
