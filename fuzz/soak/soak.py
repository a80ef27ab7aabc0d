#!/usr/bin/env python3
# soak.py - a soak test of kdsim: random but valid scenarios, run and checked.
#
# What it is for: the hand-written tests check the cases someone thought of; this tool
# checks the ones nobody did. For each seed it generates one small scenario (a few
# shards, a few simulated minutes, or hours at low rates) that draws on the whole
# scenario language (README.md "Scenario reference", docs/consumers-*.md): the three
# capacity modes, retention, record size and throughput limits, resharding events
# (split, merge, UpdateShardCount, mode switches), split rules and on-demand scaling;
# producers of every API, batching, aggregation, key kind, rate shape (a replayed trace
# included), arrivals, clients, retries, timeouts, active windows and poison records;
# consumers of every kind (polling, efo, lambda and flink by polling and by enhanced
# fan-out, firehose, KCL 2.x and 3.x with workers, their events, deployments and lease
# tables). The scenario depends on the seed alone (random.Random(seed)), never on the
# time or the machine, so a seed names a scenario for good (for one version of this file).
#
# How to run it (Python 3, standard library only):
#
#   python3 fuzz/soak/soak.py build/kdsim --seeds 1..300          # a short soak
#   python3 fuzz/soak/soak.py build/kdsim --seeds 1..5000 --quiet # a long one
#   python3 fuzz/soak/soak.py build-asan/kdsim --seeds 1..50 --asan
#   python3 fuzz/soak/soak.py build/kdsim --seeds 42 --keep /tmp/s # one seed, kept
#
# --asan only lengthens the timeouts (a sanitizer build is about 10x slower); --keep DIR
# keeps every scenario (and the report of each failed one) in DIR; --quiet prints only
# failures and the summary. Without --keep, the scenarios live in a temporary folder
# that is removed at the end unless a seed failed (then the failed seeds' files stay).
#
# What it checks, for every seed:
#   - `kdsim validate` accepts the scenario (a refusal is a bug of this generator);
#   - `kdsim run --json` twice: exit status 0, stderr empty (so no sanitizer report and
#     no violated invariant), byte-identical reports (determinism);
#   - the JSON: no NaN or Infinity, no negative number; the seed and duration asked for;
#   - the stream (docs/report-json.md): shard totals add up to the stream's; per shard
#     records_in = records_expired + records_retained and the billing meters' bounds;
#     the open shards cover the hash-key space exactly; open_shards; reshard outcomes;
#   - producers: records_attempted = records_written + records_given_up +
#     records_in_flight; what they wrote (plus duplicates) is what the stream stored,
#     and their throttled and failed sends are the shards'; no duplicate without a
#     timeout, no retry without retries; records generated match the rate's integral;
#   - consumers: stored = records_skipped_at_start + records_delivered + records_unread
#     + records_expired_unread; latency percentiles ordered (null exactly when nothing
#     was delivered); the figures of each kind within what its doc promises (Lambda,
#     Firehose, Flink: docs/consumers-lambda.md, docs/consumers-firehose-flink.md; the
#     KCL's workers and lease table: docs/consumers-kcl.md);
#   - the bill: line items add up to each mode's totals, the cheapest mode is the
#     cheapest, the bill as run when (and only when) the mode switched.
#
# Exit status: 0 when every seed passed, 1 when one failed (each failure is printed with
# its seed, the check and the kept scenario's path), 2 for a usage error.

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HASH_MAX = 2**128 - 1
MIB = 1024 * 1024

# --------------------------------------------------------------------------------------
# Formatting: durations, sizes, rates and a small YAML writer
# --------------------------------------------------------------------------------------


def dur(seconds):
    """A duration in seconds as kdsim's units ("90s", "5m", "2h", "1500ms")."""
    ms = round(seconds * 1000)
    if ms % 1000:
        return f"{ms}ms"
    s = ms // 1000
    if s and s % 3600 == 0:
        return f"{s // 3600}h"
    if s and s % 60 == 0:
        return f"{s // 60}m"
    return f"{s}s"


def num(x):
    """A number without a needless fraction ("5", "0.25")."""
    if float(x) == int(x):
        return str(int(x))
    return f"{x:.6g}"


def size(nbytes):
    """A size in bytes as "N KiB", "N MiB" or "N B"."""
    if nbytes % MIB == 0:
        return f"{nbytes // MIB} MiB"
    if nbytes % 1024 == 0:
        return f"{nbytes // 1024} KiB"
    return f"{nbytes} B"


def rate(per_s):
    """A record rate as "N records/s"."""
    return f"{num(per_s)} records/s"


_PLAIN = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9 _./-]*")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def scalar(v):
    """One YAML scalar: booleans, numbers, and strings quoted when plain would misread."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return num(v)
    s = str(v)
    plain = _PLAIN.fullmatch(s) and not s.endswith(" ") and s.lower() not in _YAML_WORDS
    if plain:
        try:
            float(s)
            plain = False
        except ValueError:
            pass
    return s if plain else json.dumps(s, ensure_ascii=False)


def flow(v):
    """A value in YAML flow style (one line)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)


def to_yaml(v, indent=0):
    """A scenario as block YAML; small leaves (flat mappings, lists of scalars) in flow."""
    pad = "  " * indent
    lines = []
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x and not _small(x):
                lines.append(f"{pad}{k}:")
                lines.append(to_yaml(x, indent + 1))
            else:
                lines.append(f"{pad}{k}: {flow(x)}")
    else:
        for x in v:
            if isinstance(x, dict) and not _small(x):
                sub = to_yaml(x, indent + 1).split("\n")
                sub[0] = pad + "- " + sub[0].lstrip()
                lines.append("\n".join(sub))
            else:
                lines.append(f"{pad}- {flow(x)}")
    return "\n".join(lines)


def _small(x):
    """Whether a mapping or list is short and flat enough for one flow line."""
    if isinstance(x, list):
        return all(not isinstance(e, (dict, list)) or (isinstance(e, dict) and _small(e)
                                                         and len(flow(e)) < 60) for e in x) \
            and len(flow(x)) < 90
    return all(not isinstance(e, (dict, list)) or (isinstance(e, dict) and _small(e))
               for e in x.values()) and len(flow(x)) < 90


# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------

KEY_KINDS = ["random", "uniform", "zipf", "fixed", "explicit"]
POSITIONS_ALL = ["trim_horizon", "latest", "at_timestamp", "at_sequence_number",
                 "after_sequence_number"]


class Gen:
    """Draws one scenario from one seed; every choice comes from self.r."""

    def __init__(self, seed):
        """A generator for one seed."""
        self.seed = seed
        self.r = random.Random(seed)
        self.files = {}       # extra files to write beside the scenario: name -> text
        self.efo = 0          # enhanced fan-out registrations so far
        self.features = set()

    # -- small helpers -----------------------------------------------------------------

    def p(self, prob):
        """True with probability prob."""
        return self.r.random() < prob

    def pick(self, *options):
        """One of the options."""
        return self.r.choice(options)

    def at(self, lo_frac=0.0, hi_frac=1.0):
        """A whole-second time within [lo_frac, hi_frac] of the run."""
        return int(self.r.uniform(self.duration * lo_frac, self.duration * hi_frac))

    def dist(self, lo_ms, hi_ms, zero=False):
        """A duration distribution between about lo_ms and hi_ms: constant or any kind."""
        r = self.r

        def ms(x):
            """x milliseconds as a duration of at least 1 ms."""
            return dur(max(0.001, round(x) / 1000)) if x >= 1 else "1ms"
        if zero and self.p(0.15):
            return "0s"
        if self.p(0.4):
            return ms(r.uniform(lo_ms, hi_ms))
        kind = r.choice(["const", "uniform", "exp", "lognormal", "normal", "gamma", "pareto"])
        self.features.add(f"dist:{kind}")
        if kind == "const":
            d = {"dist": "const", "value": ms(r.uniform(lo_ms, hi_ms))}
        elif kind == "uniform":
            a = r.uniform(lo_ms, hi_ms)
            d = {"dist": "uniform", "min": ms(a), "max": ms(a + r.uniform(1, hi_ms))}
            return d
        elif kind == "exp":
            d = {"dist": "exp", "mean": ms(r.uniform(lo_ms, hi_ms))}
        elif kind == "lognormal":
            d = {"dist": "lognormal", "median": ms(r.uniform(lo_ms, hi_ms)),
                 "sigma": round(r.uniform(0.05, 1.5), 2)}
        elif kind == "normal":
            m = r.uniform(lo_ms, hi_ms)
            d = {"dist": "normal", "mean": ms(m), "stddev": ms(max(1, m * r.uniform(0.05, 1)))}
        elif kind == "gamma":
            d = {"dist": "gamma", "mean": ms(r.uniform(lo_ms, hi_ms)),
                 "shape": round(r.uniform(0.3, 5), 2)}
        else:
            return {"dist": "pareto", "min": ms(lo_ms), "alpha": round(r.uniform(0.8, 3), 2),
                    "max": ms(hi_ms * 10)}
        if self.p(0.4):
            d["max"] = ms(hi_ms * 2)
        return d

    # -- the scenario ------------------------------------------------------------------

    def scenario(self):
        """The whole scenario as a dict (plus self.files, self.features)."""
        r = self.r
        self.profile = r.choices(["short", "reshard", "long", "kcl"], [5, 2, 1, 2])[0]
        self.features.add(f"profile:{self.profile}")
        if self.profile == "long":
            self.duration = r.choice([2, 3, 6, 25, 26, 30]) * 3600
        elif self.profile == "kcl":
            self.duration = r.choice([120, 180, 300, 420, 600])
        else:
            self.duration = r.choice([60, 90, 120, 180, 300, 300, 600, 900])
        sc = {"name": f"soak-{self.seed}"}
        if self.p(0.3):
            sc["description"] = f"soak.py seed {self.seed} ({self.profile})"
        sc["seed"] = r.randint(0, 2**63 - 1) if self.p(0.1) else r.randint(1, 10**6)
        sc["duration"] = dur(self.duration)
        sc["stream"] = self.stream()
        n = self.r.choice([1, 1, 1, 2, 2, 3])
        sc["producers"] = [self.producer(i, n) for i in range(n)]
        cons = self.consumers()
        if cons:
            sc["consumers"] = cons
        if self.p(0.1):
            sc["billing"] = {"month_hours": self.pick(720, 744, 1),
                             "sizing_headroom": self.pick(0, 0.2, 1)}
            self.features.add("billing")
        return sc

    # -- stream --------------------------------------------------------------------------

    def stream(self):
        """The stream: mode, shards, retention, limits, resharding, on-demand settings."""
        r = self.r
        st = {"name": self.pick("s", "orders", "a.b-c_1", "x" * 128)}
        if self.profile in ("reshard", "kcl"):
            mode = r.choices(["provisioned", "on_demand_standard"], [9, 1])[0]
        else:
            mode = r.choices(["provisioned", "on_demand_standard", "on_demand_advantage"],
                             [6, 3, 2])[0]
        self.mode = mode
        self.features.add(f"mode:{mode}")
        if mode != "provisioned" or self.p(0.3):
            st["mode"] = mode
        if mode == "provisioned":
            self.shards = r.choice([1, 1, 2, 2, 3, 4, 5, 8])
            st["shards"] = self.shards
        else:
            self.shards = r.choice([4, 4, 5, 6, 8])
            if self.shards != 4 or self.p(0.5):
                st["shards"] = self.shards
        self.retention_s = 24 * 3600
        if self.p(0.25):
            h = r.choice([24, 25, 48, 168, 169, 8760])
            st["retention"] = self.pick(f"{h}h", dur(h * 3600))
            self.retention_s = h * 3600
            self.features.add("retention")
        if self.profile == "long" and self.duration > 24 * 3600 and self.p(0.7):
            st["retention"] = "24h"
            self.retention_s = 24 * 3600
            self.features.add("retention-expiry")
        self.max_record = MIB
        if self.p(0.15):
            kib = r.choice([1024, 1025, 2048, 5000, 10240])
            st["max_record_size"] = f"{kib} KiB"
            self.max_record = kib * 1024
            self.features.add("max_record_size")
        if self.p(0.15):
            st["internal_failure_rate"] = self.pick(0.001, 0.01, 0.2)
            self.features.add("internal_failure_rate")
        self.auto = mode != "provisioned" and self.p(0.15)
        if self.auto:
            st["record_distribution"] = "auto"
            self.features.add("record_distribution:auto")
        else:
            if self.p(0.05):
                st["record_distribution"] = "user_partition_key"
        if self.p(0.25):
            st["limits"] = self.limits()
        res = self.resharding(mode)
        if res:
            st["resharding"] = res
        if mode != "provisioned" or self.switches_to_on_demand:
            od = self.on_demand(mode)
            if od:
                st["on_demand"] = od
        return st

    def limits(self):
        """stream.limits: a few per-shard budgets, within the token bucket's capacity."""
        r = self.r
        self.features.add("limits")
        choices = [
            ("write_bytes", ["512 KiB/s", "1 MiB/s", "2 MiB/s"]),
            ("write_records", ["100 records/s", "1000 records/s", "5000 records/s"]),
            ("write_burst", ["1ms", "100ms", "1s", "10s", "1h"]),
            ("large_record_tank", ["1 MiB", "10 MiB", "100 MiB"]),
            ("large_record_refill", ["100 KiB/s", "1 MiB/s"]),
            ("read_calls", ["1 calls/s", "5 calls/s", "20 calls/s"]),
            ("read_bytes", ["256 KiB/s", "2 MiB/s"]),
            ("read_records", ["2000 records/s", "100 records/s"]),
            ("read_burst", ["1ms", "1s", "10s"]),
            ("efo_burst", ["1ms", "1s", "1h"]),
            ("max_records_per_call", [1, 100, 10000]),
            ("max_bytes_per_call", ["1 MiB", "10 MiB"]),
            ("big_read_penalty", ["0s", "5s", "60s"]),
            ("short_read_penalty", ["0s", "1s", "10s"]),
            ("iterator_ttl", ["1s", "5m", "1h"]),
        ]
        lim = {}
        for k, opts in choices:
            if self.p(0.3):
                lim[k] = r.choice(opts)
        if not lim:
            lim["write_records"] = "500 records/s"
        # A bucket holds at most 9.2e9 bytes or records: 2 MiB/s x 1h would not fit.
        if lim.get("write_burst") == "1h" and lim.get("write_bytes", "1 MiB/s") != "512 KiB/s":
            lim["write_burst"] = "10s"
        return lim

    def resharding(self, mode):
        """stream.resharding: events on a tracked topology, rules, durations."""
        r = self.r
        res = {}
        self.switches_to_on_demand = False
        want = {"reshard": 0.95, "short": 0.3, "long": 0.2, "kcl": 0.3}[self.profile]
        if self.p(want):
            res["events"] = self.reshard_events(mode)
        if self.p(0.2):
            res["duration"] = self.pick("0s", "1s", "10s", "30s")
        if self.p(0.15):
            res["update_shard_count_duration"] = self.pick("0s", "10s", "1m", "5m")
        if mode == "provisioned" and self.p(0.12):
            res["rules"] = [{"split_above": self.pick(0.01, 0.5, 0.9, 1.5),
                             "for": self.pick("1m", "2m", "5m")}]
            self.features.add("resharding:rules")
        return res

    def reshard_events(self, mode):
        """Split, merge, UpdateShardCount and mode-switch requests, mostly valid ones."""
        r = self.r
        n0 = self.shards
        span = (HASH_MAX + 1) // n0
        # open shards as [start, end, index], kept sorted by start
        open_ = [[i * span, HASH_MAX if i == n0 - 1 else (i + 1) * span - 1, i]
                 for i in range(n0)]
        nxt = n0
        t = r.uniform(1, self.duration * 0.4)
        events = []
        for _ in range(r.randint(1, 5)):
            if t >= self.duration * 1.05:
                break
            at = dur(int(t))
            op = r.choices(["split", "merge", "usc", "switch", "bogus"], [5, 3, 2, 2, 1])[0]
            if op == "split" and len(open_) < 24:
                k = r.randrange(len(open_))
                a, b, i = open_[k]
                if b - a < 4:
                    continue
                sid = self.pick(i, f"shardId-{i:012d}")
                if self.p(0.5):
                    events.append({"at": at, "split": sid})
                    key = a + (b - a + 1) // 2
                else:
                    key = self.pick(a + 1, b, r.randint(a + 1, b))
                    events.append({"at": at, "split": {"shard": f"shardId-{i:012d}",
                                                        "hash_key": str(key)}})
                open_[k:k + 1] = [[a, key - 1, nxt], [key, b, nxt + 1]]
                nxt += 2
                self.features.add("reshard:split")
            elif op == "merge" and len(open_) >= 2:
                k = r.randrange(len(open_) - 1)
                (a1, _, i1), (_, b2, i2) = open_[k], open_[k + 1]
                pair = [f"shardId-{i1:012d}", f"shardId-{i2:012d}"]
                if self.p(0.25):
                    pair.reverse()
                events.append({"at": at, "merge": pair})
                open_[k:k + 2] = [[a1, b2, nxt]]
                nxt += 1
                self.features.add("reshard:merge")
            elif op == "usc":
                n = len(open_)
                target = self.pick(max(1, n // 2), min(2 * n, 16), n + 1, max(1, n - 1))
                events.append({"at": at, "update_shard_count": target})
                self.features.add("reshard:update_shard_count")
                t += 300  # UPDATING for a while; the topology is no longer tracked exactly
                open_ = [[s[0], s[1], -1] for s in open_]
            elif op == "switch":
                modes = ["provisioned", "on_demand_standard", "on_demand_advantage"]
                if self.auto:
                    modes = modes[1:]
                m = r.choice(modes)
                events.append({"at": at, "switch_mode": m})
                self.features.add("reshard:switch_mode")
                if m != "provisioned":
                    self.switches_to_on_demand = True
            else:
                # Requests AWS refuses: an unknown shard, non-adjacent shards.
                events.append({"at": at, "split": f"shardId-{nxt + 7:012d}"} if self.p(0.5)
                              else {"at": at, "merge": ["shardId-000000000000",
                                                        f"shardId-{nxt + 3:012d}"]})
                self.features.add("reshard:refused")
            if any(s[2] < 0 for s in open_):
                # after UpdateShardCount, name shards by what the topology would be
                open_ = [[s[0], s[1], nxt + j] for j, s in enumerate(open_)]
                nxt += len(open_)
            t += r.choice([5, 31, 45, 60, 120, 300])
        return events or [{"at": dur(int(self.duration / 2)), "split": 0}]

    def on_demand(self, mode):
        """stream.on_demand: scaling settings, warm throughput under Advantage."""
        r = self.r
        od = {}
        if self.p(0.5):
            self.features.add("on_demand:settings")
            for k, opts in [
                ("peak_factor", [1, 2, 3]),
                ("peak_window", ["1h", "1d", "30d"]),
                ("scale_delay", ["0s", "1m", "15m"]),
                ("hot_shard_above", ["1 KiB/s", "100 KiB/s", "500 KiB/s"] if self.duration <= 3600
                 else ["500 KiB/s"]),
                ("hot_shard_delay", ["0s", "1m", "15m"]),
                ("min_write", ["1 MiB/s", "4 MiB/s", "40 MiB/s"]),
                ("min_write_records", ["1000 records/s", "4000 records/s"]),
                ("region_ceiling", ["200 MiB/s", "10 GiB/s", "5 MiB/s"]),
                ("scale_down_delay", ["1m", "5m", "24h"]),
            ]:
                if self.p(0.35):
                    od[k] = r.choice(opts)
        if mode == "on_demand_advantage" and self.p(0.4):
            od["warm_throughput"] = [{"at": dur(self.at()), "write": self.pick("8 MiB/s", "50 MiB/s")}]
            self.features.add("on_demand:warm_throughput")
        return od

    # -- producers -----------------------------------------------------------------------

    def base_rate(self, n, approx_size):
        """A producer's records/s: a fraction of the stream's budget, low for long runs."""
        r = self.r
        if self.profile == "long":
            return r.choice([0.05, 0.2, 1, 3, 10])
        budget = self.shards * min(1000, MIB / approx_size)
        scale = r.choice([0.001, 0.01, 0.1, 0.3, 0.6, 0.9, 1.2, 2.0])
        return max(0.05, round(budget * scale / n, 2))

    def rate_profile(self, base):
        """A rate: a constant, or a constant, steps, ramp, daily or replay profile."""
        r = self.r
        k = r.random()
        if k < 0.5:
            self.features.add("rate:plain")
            return rate(base) if self.p(0.85) else f"{num(round(base * 60, 2))} records/min"
        if k < 0.6:
            self.features.add("rate:constant")
            return {"profile": "constant", "value": rate(base)}
        if k < 0.72:
            self.features.add("rate:steps")
            times = sorted({self.at(0.05, 0.9) for _ in range(r.randint(1, 3))})
            prof = {"profile": "steps", "steps": [{"at": dur(t), "rate": rate(round(base * self.pick(0, 0.1, 2, 3), 2))} for t in times]}
            if self.p(0.8):
                prof = {"profile": "steps", "initial": rate(base), "steps": prof["steps"]}
            return prof
        if k < 0.82:
            self.features.add("rate:ramp")
            a = self.at(0, 0.5)
            b = max(a + 1, self.at(0.5, 1))
            return {"profile": "ramp", "from": rate(base), "to": rate(round(base * self.pick(0, 0.5, 3), 2)),
                    "start": dur(a), "end": dur(b)}
        if k < 0.92:
            self.features.add("rate:daily")
            return {"profile": "daily", "mean": rate(base), "amplitude": self.pick(0, 0.5, 1),
                    "peak": self.pick("0s", "14h", "23h")}
        self.features.add("rate:replay")
        return self.replay(base)

    def replay(self, base):
        """A replay profile over a small CloudWatch-style trace written beside the scenario."""
        r = self.r
        name = f"trace-{self.seed}-{len(self.files)}.csv"
        minutes = int(self.duration // 60) + r.choice([-1, 0, 2])
        lines = ["# soak.py trace", "timestamp,IncomingRecords,IncomingBytes"]
        t0 = 1789344000  # 2026-09-14T00:00:00Z
        for m in range(max(1, minutes)):
            if m and self.p(0.05):
                continue  # a minute without a row counts as 0 (the first is always there)
            n = int(base * 60 * r.uniform(0.3, 1.7))
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0 + 60 * m))
            lines.append(f"{stamp},{n},{n * r.choice([100, 1000, 1024])}")
        self.files[name] = "\n".join(lines) + "\n"
        prof = {"profile": "replay", "file": name}
        if self.p(0.5):
            prof["within_minute"] = self.pick("even", "poisson")
        if self.p(0.3):
            prof["scale"] = self.pick(0.5, 2)
        self.trace_size = self.p(0.5)
        return prof

    def record_size(self):
        """record_size: a constant (returned with it) or a distribution (None)."""
        r = self.r
        if self.p(0.65):
            sz = r.choice([1, 10, 100, 1000, 1024, 1024, 4096, 25 * 1024 + 1, 100 * 1024])
            if self.p(0.03):
                sz = self.max_record
            return size(sz), sz
        kind = r.choice(["uniform", "exp", "lognormal", "normal", "gamma", "pareto", "const"])
        self.features.add(f"size-dist:{kind}")
        hi = r.choice([2000, 20000, 200000])
        if kind == "uniform":
            a = r.randint(1, hi // 2)
            return {"dist": "uniform", "min": f"{a} B", "max": f"{r.randint(a + 1, hi)} B"}, None
        if kind == "const":
            v = r.randint(1, hi)
            return {"dist": "const", "value": f"{v} B"}, v
        if kind == "exp":
            d = {"dist": "exp", "mean": f"{r.randint(1, hi)} B"}
        elif kind == "lognormal":
            d = {"dist": "lognormal", "median": f"{r.randint(1, hi)} B", "sigma": round(r.uniform(0.1, 2), 2)}
        elif kind == "normal":
            m = r.randint(10, hi)
            d = {"dist": "normal", "mean": f"{m} B", "stddev": f"{max(1, m // r.choice([2, 10]))} B"}
        elif kind == "gamma":
            d = {"dist": "gamma", "mean": f"{r.randint(1, hi)} B", "shape": round(r.uniform(0.3, 4), 2)}
        else:
            d = {"dist": "pareto", "min": f"{r.randint(1, 2000)} B", "alpha": round(r.uniform(0.3, 3), 2)}
        if self.p(0.5):
            d["min"] = "1 B"
        if self.p(0.5):
            d["max"] = size(self.pick(hi, self.max_record, 2 * MIB))
        return d, None

    def producer(self, i, n):
        """Producer i of n, with every optional key drawn."""
        r = self.r
        p = {"name": f"p{i}" if self.p(0.8) else f"prod.{i}-X"}
        size_, const = self.record_size()
        approx = const or 20000  # a distribution: about its scale
        base = self.base_rate(n, approx)
        self.trace_size = False
        p["rate"] = self.rate_profile(base)
        if self.p(0.3):
            p["arrivals"] = self.pick("even", "poisson")
            self.features.add(f"arrivals:{p['arrivals']}")
        if self.trace_size:
            p["record_size"] = "trace"
            const = 1024  # at most; the trace's bytes per record are 100 to 1024
            self.features.add("record_size:trace")
        else:
            p["record_size"] = size_
        # keys
        kinds = ["random", "uniform", None] if self.auto else KEY_KINDS + [None]
        kk = r.choice(kinds)
        if kk:
            self.features.add(f"keys:{kk}")
        if kk == "random":
            p["keys"] = {"kind": "random"}
        elif kk in ("uniform", "zipf"):
            keys = {"kind": kk, "count": r.choice([1, 2, 10, 1000, 100000, 10**9 if kk == "zipf" else 10**6])}
            if kk == "zipf" and self.p(0.7):
                keys["s"] = self.pick(0.5, 1, 1.5, 3)
            if self.p(0.3):
                keys["prefix"] = self.pick("", "user-", "é-")
            if self.p(0.2):
                keys["exact_keys"] = self.pick(0, 1, 10, 100000)
            p["keys"] = keys
        elif kk == "fixed":
            key = self.pick("s-90", "k", "a" * 256, "ключ")
            if self.trace_size and len(key.encode()) > 100:
                key = key[:100]  # a trace's records may be as small as 100 B (seed 12084)
            elif const is not None and const < len(key.encode()):
                p["record_size"] = f"{len(key.encode())} B"
                const = len(key.encode())
            p["keys"] = {"kind": "fixed", "key": key}
        elif kk == "explicit":
            p["keys"] = {"kind": "explicit",
                         "hash_key": str(self.pick(0, HASH_MAX, r.randrange(HASH_MAX)))}
        # API, batching, aggregation
        if self.p(0.2):
            p["api"] = "put_record"
            self.features.add("api:put_record")
            if not self.auto and self.p(0.3):
                p["sequence_number_for_ordering"] = True
                self.features.add("sequence_number_for_ordering")
        else:
            if self.p(0.3):
                p["api"] = "put_records"
            self.features.add("api:put_records")
            if self.p(0.5) or self.profile == "long":
                b = {}
                if self.p(0.4):
                    b["records"] = self.pick(1, 10, 100, 500)
                if self.p(0.3):
                    b["bytes"] = self.pick("1 KiB", "1 MiB", "5 MiB")
                if self.p(0.6) or self.profile == "long":
                    b["linger"] = self.pick("1s", "5s") if self.profile == "long" else \
                        self.pick("10ms", "100ms", "1s")
                if b:
                    p["batch"] = b
                    self.features.add("batch")
        if not self.auto and self.p(0.15):
            agg = {"records": r.choice([2, 10, 100])}
            if self.p(0.5):
                agg["overhead"] = self.pick("0 B", "20 B", "1 KiB")
            if const is not None and (const + 1024) * agg["records"] > self.max_record:
                agg["records"] = 2 if (const + 1024) * 2 <= self.max_record else 1
            if agg["records"] > 1:
                p["aggregation"] = agg
                self.features.add("aggregation")
        if self.p(0.25):
            p["clients"] = self.pick(2, 5, 50)
            self.features.add("clients")
        if self.p(0.2):
            p["latency"] = self.dist(1, 300)
            self.features.add("producer:latency")
        if self.p(0.35):
            rt = {}
            if self.p(0.7):
                rt["max_attempts"] = self.pick(1, 2, 3, 10)
            if self.p(0.3):
                rt["backoff_base"] = self.pick("1ms", "100ms", "1s")
                rt["backoff_max"] = "5s"
            if rt:
                p["retry"] = rt
                self.features.add("retry")
        if self.p(0.15):
            p["timeouts"] = {"rate": self.pick(0.001, 0.05, 0.5)}
            if self.p(0.6):
                p["timeouts"]["after"] = self.pick("100ms", "1s", "5s")
            self.features.add("timeouts")
        if self.p(0.2):
            a = self.at(0, 0.6)
            if a:
                p["start"] = dur(a)
            if self.p(0.6):
                p["stop"] = dur(int(r.uniform(a + 1, self.duration * 1.2)))
            self.features.add("start/stop")
        self.fit_budget(p, n)
        if self.p(0.15):
            p["poison_at"] = [dur(t) for t in sorted({self.at(0.05, 0.9) for _ in range(r.randint(1, 3))})]
            self.features.add("poison_at")
        return p

    def peak_rate(self, prof):
        """The highest records/s a rate profile reaches (about, for a replay)."""
        if isinstance(prof, str):
            return parse_rate(prof)
        kind = prof["profile"]
        if kind == "constant":
            return parse_rate(prof["value"])
        if kind == "steps":
            return max([parse_rate(prof.get("initial", "0 records/s"))] +
                       [parse_rate(x["rate"]) for x in prof["steps"]])
        if kind == "ramp":
            return max(parse_rate(prof["from"]), parse_rate(prof["to"]))
        if kind == "daily":
            return parse_rate(prof["mean"]) * (1 + prof.get("amplitude", 0.5))
        rows = [line.split(",") for line in self.files[prof["file"]].splitlines()[2:]]
        return max([int(x[1]) for x in rows] + [0]) / 60 * prof.get("scale", 1)

    def calls_per_s(self, p):
        """About how many API calls a second the producer makes at its peak rate."""
        peak = self.peak_rate(p["rate"])
        if p.get("api") == "put_record":
            calls = peak
        else:
            b = p.get("batch", {})
            linger = parse_dur(b.get("linger", "100ms"))
            calls = min(peak, p.get("clients", 1) / linger + peak / b.get("records", 500))
        if peak > 800 * self.shards:  # throttled: resends
            calls *= min(3, p.get("retry", {}).get("max_attempts", 3))
        return calls

    def fit_budget(self, p, n):
        """Keep the run short: fewer API calls (bigger batches, fewer clients) when needed.

        Time goes with events, and events with API calls (each spread over the shards),
        not with records: about 300,000 call-shards a scenario keep a run well under a
        second in a Release build."""
        budget = 300000 / self.duration / n / min(self.shards, 4)
        steps = [lambda: p.get("batch", {}).pop("records", None),
                 lambda: p.pop("clients", None),
                 lambda: p.setdefault("batch", {}).update(linger="1s") if p.get("api") != "put_record" else None,
                 lambda: (p.pop("api", None), p.pop("sequence_number_for_ordering", None)),
                 lambda: p.setdefault("batch", {}).update(linger="5s")]
        for step in steps:
            if self.calls_per_s(p) <= budget:
                break
            step()
            self.features.add("budget-trimmed")
        if p.get("batch") == {}:
            del p["batch"]
        self.total_rate = getattr(self, "total_rate", 0) + self.peak_rate(p["rate"])

    # -- consumers -----------------------------------------------------------------------

    def consumers(self):
        """The consumers: a mix of kinds; KCL applications in the kcl profile."""
        r = self.r
        out = []
        self.app_names = []  # (application name, lease_assignment) of the KCL consumers
        if self.profile == "kcl":
            for a in range(r.choice([1, 1, 2, 2, 3])):
                out.append(self.kcl(f"app{a}"))
            nbg = r.choice([0, 0, 1, 2])
        else:
            nbg = r.choice([0, 1, 1, 2, 2, 3, 4])
        make = {"polling": self.polling, "efo": self.efo_consumer, "lambda": self.lambda_,
                "firehose": self.firehose, "flink": self.flink, "kcl": self.kcl}
        kinds = ["polling", "efo", "lambda", "lambda", "firehose", "flink", "flink", "kcl"]
        for c in range(nbg):
            kind = r.choice(kinds)
            out.append(make[kind](f"c{c}-{kind}"))
        return out

    def efo_ok(self):
        """Whether another enhanced fan-out registration fits (20 a stream)."""
        return self.efo < 20

    def start_position(self, c, positions, seq=True):
        """start_position with the start_timestamp or start_sequence it needs."""
        if self.p(0.5):
            pos = self.r.choice(positions)
            c["start_position"] = pos
            self.features.add(f"start_position:{pos}")
            if pos == "at_timestamp":
                c["start_timestamp"] = dur(self.at(0, 1.1))
            elif pos in ("at_sequence_number", "after_sequence_number"):
                c["start_sequence"] = self.pick(0, 1, 100, 10**6, 2**62)

    def start_pause(self, c, pause=True):
        """A late start and, optionally, a pause."""
        if self.p(0.2):
            c["start"] = dur(self.at(0, 0.8))
            self.features.add("consumer:start")
        if pause and self.p(0.2):
            c["pause"] = {"at": dur(self.at()), "for": self.pick("1s", "1m", "6m", "25h")}
            self.features.add("consumer:pause")

    def efo_keys(self, c):
        """The enhanced fan-out keys (push_delay, subscribe_latency, push_interval)."""
        if self.p(0.2):
            c["push_delay"] = self.dist(1, 300)
        if self.p(0.2):
            c["subscribe_latency"] = self.dist(1, 2000)
        if self.p(0.2):
            c["push_interval"] = self.pick("1ms", "200ms", "1m")

    def processing(self):
        """A {per_batch, per_record} processing mapping."""
        pr = {}
        if self.p(0.7):
            pr["per_batch"] = self.dist(0.1, 300, zero=True)
        if self.p(0.5):
            pr["per_record"] = self.pick("0s", "10us", "1ms")
        return pr or {"per_batch": "5ms"}

    def polling(self, name):
        """kind: polling."""
        c = {"name": name, "kind": "polling"}
        self.features.add("consumer:polling")
        if self.p(0.4):
            c["poll_interval"] = self.pick("200ms", "1s", "1500ms", "10s")
        if self.p(0.3):
            c["max_records"] = self.pick(1, 100, 10000)
        self.start_position(c, POSITIONS_ALL)
        if self.p(0.25):
            c["call_latency"] = self.dist(1, 300)
        if self.p(0.25):
            c["processing"] = self.processing()
        self.start_pause(c)
        return c

    def efo_consumer(self, name):
        """kind: efo (or polling when the stream has no registration left)."""
        if not self.efo_ok():
            return self.polling(name)
        self.efo += 1
        c = {"name": name, "kind": "efo"}
        self.features.add("consumer:efo")
        self.start_position(c, POSITIONS_ALL)
        self.efo_keys(c)
        if self.p(0.25):
            c["processing"] = self.dist(0.1, 200, zero=True)
        self.start_pause(c)
        return c

    def lambda_(self, name):
        """kind: lambda, by polling or by enhanced fan-out."""
        r = self.r
        c = {"name": name, "kind": "lambda"}
        if self.p(0.35) and self.efo_ok():
            self.efo += 1
            c["retrieval"] = "efo"
            self.efo_keys(c)
            self.features.add("consumer:lambda/efo")
        else:
            if self.p(0.3):
                c["retrieval"] = "polling"
            if self.p(0.3):
                c["poll_interval"] = self.pick("100ms", "1s", "5s")
            if self.p(0.25):
                c["call_latency"] = self.dist(1, 300)
            self.features.add("consumer:lambda/polling")
        if self.p(0.5):
            c["batch_size"] = self.pick(1, 10, 100, 1000, 10000)
        # An invocation per batch: keep them to about 200,000 a run.
        if self.total_rate * self.duration / c.get("batch_size", 100) > 200000:
            c["batch_size"] = 10000
        if self.p(0.3):
            c["batching_window"] = self.pick("0s", "1s", "5s", "300s")
        if self.p(0.3):
            c["parallelization_factor"] = self.pick(1, 2, 10)
        self.start_position(c, ["trim_horizon", "latest", "at_timestamp"])
        self.start_pause(c, pause=False)
        if self.p(0.2):
            c["creation_delay"] = self.pick("0s", "10s", "1h")
        f = {}
        if self.p(0.4):
            f["duration"] = self.dist(1, 3000)
        if self.p(0.2):
            f["per_record"] = self.pick("0s", "1ms", "100ms")
        if self.p(0.3):
            f["timeout"] = self.pick("1s", "3s", "900s")
        if self.p(0.3):
            f["error_rate"] = self.pick(0, 0.01, 0.5, 1)
        if self.p(0.3):
            f["concurrency"] = self.pick(1, 2, 1000)
        if f:
            c["function"] = f
        if self.p(0.4):
            c["maximum_retry_attempts"] = self.pick(-1, 0, 1, 3, 10000)
        if self.p(0.3):
            c["maximum_record_age"] = self.pick(-1, "60s", "3600s", "604800s")
        if self.p(0.3):
            c["bisect_batch_on_function_error"] = self.pick(True, False)
        if self.p(0.3):
            c["report_batch_item_failures"] = self.pick(True, False)
        if self.p(0.3):
            c["on_failure_destination"] = self.pick("none", "sqs", "sns", "s3")
        if self.p(0.2):
            # no wait at all retries a failing batch back to back: short runs only
            c["retry_delay"] = self.pick("0s", "1s", "10s") if self.duration <= 900 else "1s"
            c["retry_delay_max"] = self.pick("10s", "30s", "1h")
        if self.p(0.2):
            c["throttle_retry"] = self.pick("1ms", "1s", "1m")
        if self.p(0.2):
            c["record_overhead"] = self.pick("0 B", "500 B", "64 KiB")
        return c

    def firehose(self, name):
        """kind: firehose."""
        c = {"name": name, "kind": "firehose"}
        self.features.add("consumer:firehose")
        self.start_position(c, ["latest", "trim_horizon", "at_timestamp", "at_sequence_number",
                                "after_sequence_number"])
        self.start_pause(c, pause=False)
        if self.p(0.3):
            c["full_backup"] = self.pick(True, False)
        if self.p(0.2):
            c["aggregation"] = self.pick(1, 10, 1000000)
        if self.p(0.6):
            b = {}
            if self.p(0.7):
                b["size"] = self.pick("1 MiB", "5 MiB", "128 MiB")
            if self.p(0.7):
                b["interval"] = self.pick("0s", "1s", "60s", "300s", "900s")
            if b:
                c["buffering"] = b
        if self.p(0.25):
            c["call_latency"] = self.dist(1, 300)
        if self.p(0.25):
            c["put_latency"] = self.dist(10, 3000)
        if self.p(0.4):
            d = {}
            if self.p(0.5):
                d["failure_rate"] = self.pick(0, 0.1, 0.5, 1)
            if self.p(0.5):
                d["outage"] = {"at": dur(self.at()), "for": self.pick("10s", "5m", "2h")}
            if self.p(0.4):
                d["retry_interval"] = self.pick("1ms", "5s", "1h")
            if self.p(0.4):
                d["retry_duration"] = self.pick("0s", "60s", "2h")
            if d.get("failure_rate") == 1 and "retry_duration" not in d:
                # Every attempt fails, and such failures are not skipped over (the
                # Firehose doc says so): retried for the whole retention, small objects
                # cost objects x retries events (seed 70095: 128 s for 26 h). Bound them.
                d["retry_duration"] = self.pick("0s", "60s")
            if d:
                c["delivery"] = d
                self.features.add("firehose:delivery")
        return c

    def flink(self, name):
        """kind: flink, by polling or by enhanced fan-out, with failures and restarts."""
        r = self.r
        c = {"name": name, "kind": "flink"}
        if self.p(0.4) and self.efo_ok():
            self.efo += 1
            c["retrieval"] = "efo"
            if self.p(0.3):
                c["consumer_name"] = f"reg-{name}"
            self.efo_keys(c)
            self.features.add("consumer:flink/efo")
        else:
            if self.p(0.3):
                c["retrieval"] = "polling"
            if self.p(0.3):
                c["poll_interval"] = self.pick("1ms", "200ms", "1s") if self.duration <= 900 \
                    else self.pick("200ms", "1s")
            if self.p(0.3):
                c["max_records"] = self.pick(1, 100, 10000)
            if self.p(0.25):
                c["call_latency"] = self.dist(1, 300)
            self.features.add("consumer:flink/polling")
        self.start_position(c, POSITIONS_ALL)
        self.start_pause(c, pause=False)
        if self.p(0.4):
            c["processing"] = self.processing()
        if self.p(0.5):
            ci = r.choice([1, 10, 60, 300])
            c["checkpoint_interval"] = dur(ci)
            if self.p(0.3):
                c["checkpoint_duration"] = dur(self.pick(0, ci / 2, ci - 0.001))
        if self.p(0.5):
            first = parse_dur(c.get("start", "0s")) + 1
            ts = sorted({int(r.uniform(first, self.duration * 1.1)) for _ in range(r.randint(1, 3))})
            c["failures"] = [dur(t) for t in ts]
            self.features.add("flink:failures")
        if self.p(0.3):
            c["restart_delay"] = self.pick("0s", "10s", "5m")
        if self.p(0.3):
            c["shard_discovery_interval"] = self.pick("100ms", "10s", "1h")
        return c

    def kcl(self, name):
        """kind: kcl: a KCL 2.x or 3.x application with workers, events and a lease table."""
        r = self.r
        c = {"name": name, "kind": "kcl"}
        if self.app_names and self.p(0.25):
            c["application_name"], la = self.app_names[0]
            self.features.add("kcl:shared_table")
        else:
            la = r.choice(["taker", "taker", "worker_utilization", "lease_count"])
            if self.p(0.3):
                c["application_name"] = f"app-{name}"
            self.app_names.append((c.get("application_name", name), la))
        if la != "taker" or self.p(0.2):
            c["lease_assignment"] = la
        self.features.add(f"kcl:{la}")
        if self.p(0.35) and self.efo_ok():
            self.efo += 1
            if self.p(0.5):
                c["retrieval"] = "efo"
            self.efo_keys(c)
            self.features.add("consumer:kcl/efo")
        else:
            c["retrieval"] = "polling"
            if self.p(0.4):
                c["poll_interval"] = self.pick("200ms", "1s", "1500ms", "5s")
            if self.p(0.3):
                c["max_records"] = self.pick(1, 100, 10000)
            if self.p(0.2):
                c["call_latency"] = self.dist(1, 300)
            self.features.add("consumer:kcl/polling")
        self.start_position(c, ["trim_horizon", "latest", "at_timestamp"])
        if self.p(0.3):
            c["max_pending_batches"] = self.pick(1, 5)
        cp = r.choice(["every_records", "every", "every_batch", "none", "mix"])
        if cp == "every_records":
            c["checkpoint"] = {"every_records": self.pick(1, 100, 1000, 50000)}
        elif cp == "every":
            c["checkpoint"] = {"every": self.pick("1s", "10s", "60s")}
        elif cp == "every_batch":
            c["checkpoint"] = {"every_batch": True}
        elif cp == "mix":
            c["checkpoint"] = {"every_records": 500, "every": "5s", "on_shutdown": self.pick(True, False)}
        if self.p(0.3):
            c["processing"] = self.processing()
        leases = {}
        failover = 10.0
        if self.p(0.25):
            failover = self.pick(1.0, 5.0, 10.0, 30.0)
            leases["failover"] = dur(failover)
        if self.p(0.15):
            leases["max_leases_per_worker"] = self.pick(1, 2, 5)
        if self.p(0.15):
            leases["max_leases_to_steal"] = self.pick(1, 3)
        if self.p(0.15):
            leases["priority_leases"] = self.pick(True, False)
        if self.p(0.15):
            leases["cleanup_interval"] = self.pick("30s", "1m")
        if self.p(0.3):
            leases["sync_wait"] = self.pick("0s", "1s", {"dist": "uniform", "min": "1s", "max": "30s"})
        if self.p(0.3):
            leases["shard_sync_sleep"] = self.pick("0s", "5s", "60s")
        if self.p(0.1):
            leases["shard_sync_interval"] = self.pick("30s", "2m")
        if self.p(0.1):
            leases["parent_poll"] = self.pick("1s", "10s")
        if self.p(0.1):
            leases["renew_interval"] = dur(round(failover * self.pick(0.1, 0.5, 0.9), 3))
        if self.p(0.1):
            leases["take_interval"] = self.pick("500ms", "5s", "1m")
        if self.p(0.05):
            leases["very_old_factor"] = self.pick(1, 1000)
        if self.p(0.05):
            leases["take_retries"] = self.pick(1, 100)
        if self.p(0.05):
            leases["task_backoff"] = self.pick("1ms", "10m")
        if self.p(0.05):
            leases["shard_sync_confidence"] = self.pick(1, 1000)
        if leases:
            c["leases"] = leases
        if self.p(0.3):
            lt = {"billing": "provisioned", "read_capacity": self.pick(1, 2, 5, 10, 100),
                  "write_capacity": self.pick(1, 2, 5, 10, 100)}
            if self.p(0.4):
                lt["burst"] = self.pick("0s", "10s", "5m")
            if self.p(0.3):
                lt["item_size"] = self.pick("300 B", "4 KiB")
            c["lease_table"] = lt
            self.features.add("kcl:provisioned_table")
        elif self.p(0.1):
            c["lease_table"] = {"billing": "on_demand"}
        if la != "taker":
            k3 = {}
            if self.p(0.3):
                k3["graceful_handoff"] = self.pick(True, False)
            if self.p(0.2):
                k3["handoff_timeout"] = self.pick("1s", "30s")
            if la == "worker_utilization" and self.p(0.3):
                k3["metric"] = self.pick("throughput", "cpu")
            if self.p(0.15):
                k3["metrics_keep"] = self.pick(1, 10)
            if self.p(0.15):
                k3["balance_every"] = self.pick(1, 3, 1000)
            if self.p(0.1):
                k3["rebalance_threshold"] = self.pick(0, 100)
            if self.p(0.1):
                k3["dampening"] = self.pick(0, 100)
            if self.p(0.1):
                k3["allow_overshoot"] = self.pick(True, False)
            if self.p(0.1):
                k3["failed_runs_to_resign"] = self.pick(1, 1000)
            if self.p(0.1):
                k3["handoff_poll"] = self.pick("100ms", "10s")
            if self.p(0.1):
                k3["leader_lock_lease"], k3["leader_lock_heartbeat"] = \
                    self.pick(("10s", "1s"), ("120s", "30s"), ("1h", "59m"))
            if self.p(0.1):
                k3["metrics_interval"] = self.pick("5s", "5m")
            if self.p(0.1):
                k3["metrics_alpha"] = self.pick(0.1, 1)
            if self.p(0.1):
                k3["metrics_expiry_factor"] = self.pick(1, 10)
            if k3:
                c["kcl3"] = k3
                self.features.add("kcl:kcl3_settings")
        self.kcl_workers(c)
        return c

    def kcl_workers(self, c):
        """workers: a count (maybe with a deployment) or a list with starts and events."""
        r = self.r
        n = r.choice([1, 2, 2, 3, 4, 6, 8])
        if self.p(0.3):
            c["workers"] = n
            if self.p(0.35) and self.duration >= 120:
                c["deployment"] = {"at": dur(self.at(0.1, 0.5))}
                if self.p(0.5):
                    c["deployment"]["interval"] = self.pick("20s", "1m")
                if self.p(0.5):
                    c["deployment"]["downtime"] = self.pick("5s", "30s")
                if self.p(0.5):
                    c["deployment"]["graceful"] = self.pick(True, False)
                self.features.add("kcl:deployment")
            return
        workers = []
        for w in range(n):
            wd = {"name": f"w{w}"}
            first = 0
            if self.p(0.2):
                first = self.at(0, 0.5)
                wd["start"] = dur(first)
            never = self.p(0.05)
            if never:
                wd["start"] = "never"
            if self.p(0.15):
                wd["capacity"] = rate(self.pick(50, 500, 5000))
                self.features.add("kcl:capacity")
            events = []
            if never:
                first = self.at(0.05, 0.5)
                events.append({"at": dur(first), "action": "start"})
            if self.p(0.4):
                t = r.randint(first + 1, max(first + 2, self.duration - 5))
                act = r.choice(["crash", "stop", "pause", "crash"])
                ev = {"at": dur(t), "action": act}
                if act == "pause":
                    ev["for"] = self.pick("2s", "15s", "45s", "3m")
                elif self.p(0.6):
                    ev["restart_after"] = self.pick("1s", "30s", "2m")
                events.append(ev)
                self.features.add(f"kcl:event:{act}")
            if events:
                wd["events"] = sorted(events, key=lambda e: parse_dur(e["at"]))
            workers.append(wd)
        c["workers"] = workers


def generate(seed):
    """(scenario dict, extra files {name: text}, feature tags) for one seed."""
    g = Gen(seed)
    sc = g.scenario()
    return sc, g.files, g.features


# --------------------------------------------------------------------------------------
# Parsing helpers for the checks
# --------------------------------------------------------------------------------------

_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_dur(s):
    """Seconds of a duration string ("1500ms", "2h")."""
    m = re.fullmatch(r"([0-9.]+)\s*(ns|us|ms|s|m|h|d)", str(s).strip())
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_rate(s):
    """Records/s of "N records/s" (or /min, /h)."""
    v, u = s.split()
    return float(v) / {"records/s": 1, "records/min": 60, "records/h": 3600}[u]


def rate_integral(prof, a, b):
    """Records a rate profile generates over [a, b]; None for daily and replay."""
    if b <= a:
        return 0.0
    if isinstance(prof, str):
        return parse_rate(prof) * (b - a)
    kind = prof["profile"]
    if kind == "constant":
        return parse_rate(prof["value"]) * (b - a)
    if kind == "steps":
        pts = [(0.0, parse_rate(prof.get("initial", "0 records/s")))]
        pts += [(parse_dur(s["at"]), parse_rate(s["rate"])) for s in prof["steps"]]
        total = 0.0
        for i, (t, v) in enumerate(pts):
            end = pts[i + 1][0] if i + 1 < len(pts) else math.inf
            lo, hi = max(a, t), min(b, end)
            if hi > lo:
                total += v * (hi - lo)
        return total
    if kind == "ramp":
        f, t = parse_rate(prof["from"]), parse_rate(prof["to"])
        s, e = parse_dur(prof["start"]), parse_dur(prof["end"])

        def val(x):
            """The ramp's rate at time x."""
            if x <= s:
                return f
            if x >= e:
                return t
            return f + (t - f) * (x - s) / (e - s)
        # piecewise linear: integrate exactly over the pieces
        cuts = sorted({a, b} | {x for x in (s, e) if a < x < b})
        return sum((val(x) + val(y)) / 2 * (y - x) for x, y in zip(cuts, cuts[1:]))
    return None


# --------------------------------------------------------------------------------------
# The checks of one report
# --------------------------------------------------------------------------------------


class Checker:
    """Collects failed checks of one report as (check name, detail) pairs."""

    def __init__(self, sc, rep):
        """The checks of report rep of scenario sc."""
        self.sc, self.rep = sc, rep
        self.failures = []

    def ok(self, cond, check, detail):
        """Record a failure of `check` unless cond holds."""
        if not cond:
            self.failures.append((check, detail))
        return cond

    def run(self):
        """Every check; returns the failures."""
        self.numbers(self.rep, "")
        self.top()
        self.stream()
        self.producers()
        for c, cs in zip(self.rep["consumers"], self.sc.get("consumers", [])):
            self.consumer(c, cs)
        self.cost()
        return self.failures

    def numbers(self, v, path):
        """No NaN, no infinity, no negative number anywhere in the report."""
        if isinstance(v, dict):
            for k, x in v.items():
                self.numbers(x, f"{path}.{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                self.numbers(x, f"{path}[{i}]")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            if not self.ok(math.isfinite(v), "finite numbers", f"{path} = {v}"):
                return
            self.ok(v >= 0, "no negative number", f"{path} = {v}")

    def top(self):
        """The report's top level: seed, duration, consumer and producer lists."""
        rep, sc = self.rep, self.sc
        self.ok(rep["seed"] == sc["seed"], "report seed", f"{rep['seed']} != {sc['seed']}")
        self.ok(abs(rep["duration_s"] - parse_dur(sc["duration"])) < 1e-6, "report duration",
                f"{rep['duration_s']} != {sc['duration']}")
        self.ok([p["name"] for p in rep["producers"]] == [p["name"] for p in sc["producers"]],
                "producers listed in scenario order", "")
        self.ok([c["name"] for c in rep["consumers"]] == [c["name"] for c in sc.get("consumers", [])],
                "consumers listed in scenario order", "")

    # -- stream --------------------------------------------------------------------------

    def stream(self):
        """docs/report-json.md, `stream` and `stream.shards[]`."""
        st = self.rep["stream"]
        sh = st["shards"]
        for k in ("records_in", "bytes_in", "write_throttled_records", "read_calls",
                  "read_throttled_calls"):
            tot = sum(s[k] for s in sh)
            self.ok(tot == st[k], "shards add up to the stream", f"{k}: stream {st[k]}, shards {tot}")
        byid = {s["shard_id"]: s for s in sh}
        for i, s in enumerate(sh):
            sid = s["shard_id"]
            self.ok(sid == f"shardId-{i:012d}", "shards listed by index", sid)
            self.ok(s["records_in"] == s["records_expired"] + s["records_retained"],
                    "records_in = records_expired + records_retained",
                    f"{sid}: {s['records_in']} != {s['records_expired']} + {s['records_retained']}")
            self.ok(s["bytes_retained"] <= s["bytes_in"], "bytes_retained <= bytes_in", sid)
            self.ok(s["put_payload_units"] >= s["records_in"], "put_payload_units >= records_in", sid)
            self.ok(s["bytes_in_kib_rounded"] >= s["bytes_in"], "bytes_in_kib_rounded >= bytes_in", sid)
            self.ok(s["records_in"] <= s["bytes_in"], "records of at least 1 B", sid)
            self.ok(s["state"] in ("OPEN", "CLOSED", "EXPIRED"), "shard state", f"{sid}: {s['state']}")
            for pk in ("parent_shard_id", "adjacent_parent_shard_id"):
                if s[pk] is not None:
                    self.ok(s[pk] in byid and byid[s[pk]]["state"] != "OPEN", "parents exist and are closed",
                            f"{sid}: {pk} {s[pk]}")
            self.ok(int(s["starting_hash_key"]) <= int(s["ending_hash_key"]) <= HASH_MAX,
                    "hash-key range", sid)
        opened = sorted((int(s["starting_hash_key"]), int(s["ending_hash_key"]), s["shard_id"])
                        for s in sh if s["state"] == "OPEN")
        self.ok(len(opened) == st["open_shards"], "open_shards counts the OPEN shards",
                f"{st['open_shards']} != {len(opened)}")
        pos = 0
        for a, b, sid in opened:
            if not self.ok(a == pos, "open shards cover the hash-key space", f"{sid} starts at {a}, expected {pos}"):
                break
            pos = b + 1
        else:
            self.ok(pos == HASH_MAX + 1, "open shards cover the hash-key space", f"they end at {pos - 1}")
        self.ok(st["peak_records_per_s"] <= st["records_in"] + 1e-9, "peak_records_per_s <= records_in", "")
        self.ok(st["peak_bytes_per_s"] <= st["bytes_in"] + 1e-9, "peak_bytes_per_s <= bytes_in", "")
        cap = st["capacity"]
        self.ok(cap["open_shards_max"] >= st["open_shards"], "capacity.open_shards_max >= open_shards", "")
        switches = 0
        for r in st["reshards"]:
            self.ok(r["status"] in ("OK", "InvalidArgumentException", "ResourceInUseException",
                                    "LimitExceededException", "ResourceNotFoundException"),
                    "reshard status", str(r["status"]))
            if r["completed_s"] is not None:
                self.ok(r["status"] == "OK", "a completed reshard is OK", str(r))
                self.ok(r["requested_s"] <= r["completed_s"] <= self.rep["duration_s"] + 1e-6,
                        "reshard completed after it was requested, within the run", str(r))
                if r["operation"] == "UpdateStreamMode":
                    switches += 1
            for ch in r["children"]:
                self.ok(ch in byid, "reshard children exist", ch)
        self.ok(cap["mode_switches"] == switches, "capacity.mode_switches counts completed switches",
                f"{cap['mode_switches']} != {switches}")
        self.ok(self.rep["cost"].get("as_run") is not None if switches else "as_run" not in self.rep["cost"],
                "cost.as_run exactly when the mode switched", f"{switches} switches")
        hot = st["hot"]["hottest_shards"]
        self.ok(len(hot) <= 3, "at most three hottest shards", str(len(hot)))
        for h in hot:
            self.ok(h["shard_id"] in byid, "hottest shards exist", h["shard_id"])

    # -- producers -----------------------------------------------------------------------

    def producers(self):
        """docs/report-json.md, `producers[]`, and the producers against the stream."""
        st = self.rep["stream"]
        prods = self.rep["producers"]
        written = sum(p["records_written"] + p["duplicates_written"] for p in prods)
        self.ok(written == st["records_in"], "producers' writes are what the stream stored",
                f"written + duplicates {written}, stream records_in {st['records_in']}")
        thr = sum(p["write_throttled_records"] for p in prods)
        self.ok(thr == st["write_throttled_records"], "producers' throttled sends are the stream's",
                f"{thr} != {st['write_throttled_records']}")
        failed = sum(p["records_failed_internal"] for p in prods)
        shard_failed = sum(s["records_failed_internal"] for s in st["shards"])
        self.ok(failed == shard_failed, "producers' InternalFailures are the shards'", f"{failed} != {shard_failed}")
        ifr = self.sc["stream"].get("internal_failure_rate", 0)
        for p, ps in zip(prods, self.sc["producers"]):
            n = p["name"]
            self.ok(p["records_attempted"] == p["records_written"] + p["records_given_up"] + p["records_in_flight"],
                    "records_attempted = records_written + records_given_up + records_in_flight",
                    f"{n}: {p['records_attempted']} != {p['records_written']} + {p['records_given_up']}"
                    f" + {p['records_in_flight']}")
            self.ok(p["records_too_large"] <= p["records_given_up"], "records_too_large <= records_given_up", n)
            self.ok(p["calls_timed_out"] <= p["put_calls"], "calls_timed_out <= put_calls", n)
            api = "PutRecord" if ps.get("api") == "put_record" else "PutRecords"
            self.ok(p["api"] == api, "producer api", f"{n}: {p['api']}")
            agg = ps.get("aggregation", {}).get("records", 1)
            self.ok(p["aggregate"] == agg, "producer aggregate", f"{n}: {p['aggregate']} != {agg}")
            self.ok(("sequence_number_for_ordering" in p) == bool(ps.get("sequence_number_for_ordering")),
                    "sequence_number_for_ordering key exactly when set", n)
            if not ps.get("timeouts"):
                self.ok(p["duplicates_written"] == 0 and p["calls_timed_out"] == 0,
                        "no duplicate or timeout without timeouts", n)
            if ps.get("retry", {}).get("max_attempts") == 1:
                self.ok(p["records_retried"] == 0, "no resend with max_attempts 1", n)
            if not ifr:
                self.ok(p["records_failed_internal"] == 0, "no InternalFailure at rate 0", n)
            self.generated(p, ps)

    def generated(self, p, ps):
        """Records generated (attempted + buffered) follow the rate's integral (even arrivals)."""
        if ps.get("arrivals", "even") != "even" or "aggregation" in ps or ps.get("api") == "put_record":
            return
        dur_s = self.rep["duration_s"]
        a = parse_dur(ps.get("start", "0s"))
        b = min(parse_dur(ps["stop"]) if "stop" in ps else dur_s, dur_s)
        exp = rate_integral(ps["rate"], a, b)
        if exp is None:
            return
        got = p["records_attempted"] + p["records_buffered"]
        linger = parse_dur(ps.get("batch", {}).get("linger", "100ms"))
        peak = max(rate_integral(ps["rate"], t, t + 1) for t in range(int(a), int(b) + 1)) if b > a else 0
        tol = peak * linger * 1.01 + ps.get("clients", 1) + 1
        self.ok(got <= exp + 1 + 1e-6 and got >= exp - tol - 1e-6,
                "records generated follow the rate (even arrivals)",
                f"{p['name']}: attempted + buffered {got}, rate integral {exp:.1f} (tolerance {tol:.1f})")

    def consumer(self, c, cs):
        """docs/report-json.md `consumers[]` and the consumer kind's doc."""
        n = c["name"]
        stored = self.rep["stream"]["records_in"]
        tot = c["records_skipped_at_start"] + c["records_delivered"] + c["records_unread"] + c["records_expired_unread"]
        self.ok(tot == stored, "stored = skipped + delivered + unread + expired_unread",
                f"{n}: {c['records_skipped_at_start']} + {c['records_delivered']} + {c['records_unread']}"
                f" + {c['records_expired_unread']} = {tot}, stored {stored}")
        self.ok(c["kind"] == cs["kind"], "consumer kind", f"{n}: {c['kind']}")
        lat = c["latency_ms"]
        vals = [lat[k] for k in ("mean", "p50", "p90", "p99", "max")]
        if c["records_delivered"] == 0:
            self.ok(all(v is None for v in vals), "no latency without deliveries", f"{n}: {lat}")
        if any(v is not None for v in vals):
            if self.ok(all(v is not None for v in vals), "latency all null or all set", f"{n}: {lat}"):
                self.ok(lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"], "latency percentiles ordered",
                        f"{n}: {lat}")
                self.ok(lat["mean"] <= lat["max"] + 0.001, "latency mean <= max", f"{n}: {lat}")
        if c["records_delivered"] > 0:
            self.ok(c["iterator_age_ms_max"] is not None, "iterator age set once records were delivered", n)
        self.ok(c["read_throttled_calls"] <= c["getrecords_calls"], "read_throttled_calls <= getrecords_calls", n)
        self.ok(c["empty_calls"] <= c["getrecords_calls"], "empty_calls <= getrecords_calls", n)
        self.ok(c["child_wait_ms_mean"] <= c["child_wait_ms_max"] + 0.001, "child wait mean <= max", n)
        if not self.rep["stream"]["reshards"]:
            self.ok(c["children_started"] == 0, "no child started without resharding", n)
        f = c.get("figures", {})
        for k, v in f.items():
            if k in ("iterator_age_ms_max", "millis_behind_latest_max"):
                self.ok(v is None or isinstance(v, (int, float)), "figures are numbers", f"{n}.{k}")
            else:
                self.ok(isinstance(v, (int, float)) and not isinstance(v, bool), "figures are numbers",
                        f"{n}.{k} = {v!r}")
        kind = c["kind"]
        efo = kind == "efo" or (kind in ("lambda", "flink") and cs.get("retrieval") == "efo") or \
            (kind == "kcl" and cs.get("retrieval", "efo") == "efo")
        if efo:
            self.ok(c["getrecords_calls"] == 0 and c["bytes_read_shared"] == 0,
                    "an enhanced fan-out reader makes no GetRecords call", n)
            if kind != "kcl":
                for k in ("subscriptions", "millis_behind_latest_max", "consumer_shard_hours"):
                    self.ok(k in f, "enhanced fan-out figures", f"{n}: no {k}")
        else:
            self.ok(c["bytes_read_efo"] == 0, "a polling reader has no pushed bytes", n)
        if kind == "lambda":
            self.lambda_(c, cs, f)
        elif kind == "firehose":
            self.firehose(c, cs, f)
        elif kind == "flink":
            self.flink(c, cs, f)
        elif kind == "kcl":
            self.kcl(c, cs)

    def lambda_(self, c, cs, f):
        """docs/consumers-lambda.md, the figures."""
        n = c["name"]
        self.ok(f["timeouts"] <= f["function_errors"] <= f["invocations"],
                "lambda: timeouts <= function_errors <= invocations", f"{n}: {f}")
        self.ok(f["retries"] <= f["invocations"], "lambda: retries <= invocations", n)
        self.ok(f["largest_batch"] <= cs.get("batch_size", 100), "lambda: batches hold at most batch_size",
                f"{n}: largest_batch {f['largest_batch']}")
        self.ok(f["records_processed"] <= c["records_delivered"] + c["duplicates_delivered"],
                "lambda: processed <= handed to the function", n)
        fn = cs.get("function", {})
        if fn.get("error_rate", 0) == 0 and not any("poison_at" in p for p in self.sc["producers"]):
            self.ok(f["function_errors"] == f["timeouts"], "lambda: only timeouts fail without errors or poison",
                    f"{n}: {f['function_errors']} errors, {f['timeouts']} timeouts")
        if f["function_errors"] == 0:
            self.ok(f["retries"] == 0 and f["batches_bisected"] == 0, "lambda: no retry without a failure", n)
        if not cs.get("bisect_batch_on_function_error"):
            self.ok(f["batches_bisected"] == 0, "lambda: no bisection unless asked", n)
        dest = cs.get("on_failure_destination", "none")
        if dest == "none":
            self.ok(f["records_to_failure_destination"] == 0 and f["failure_destination_messages"] == 0,
                    "lambda: nothing sent to no destination", n)
        else:
            self.ok(f["records_discarded"] == 0, "lambda: nothing discarded with a destination", n)
            self.ok(f["failure_destination_messages"] <= f["records_to_failure_destination"],
                    "lambda: a message holds at least one record", n)
        if cs.get("start_position", "trim_horizon") != "latest":
            self.ok(f["records_missed_at_creation"] == 0, "lambda: records missed at creation only with latest", n)
        if cs.get("start_position", "trim_horizon") == "trim_horizon" and "start" not in cs \
                and "creation_delay" not in cs:
            self.ok(c["records_skipped_at_start"] == 0, "trim_horizon from 0 s skips nothing", n)

    def firehose(self, c, cs, f):
        """docs/consumers-firehose-flink.md, Firehose figures."""
        n = c["name"]
        self.ok(f["objects_by_size"] + f["objects_by_interval"] >= f["objects_written"],
                "firehose: objects_by_size + objects_by_interval >= objects_written", f"{n}: {f}")
        self.ok(f["delivery_retries"] <= f["delivery_failures"], "firehose: retries <= failures", n)
        d = cs.get("delivery", {})
        if not d.get("failure_rate") and "outage" not in d:
            self.ok(f["delivery_failures"] == 0 and f["records_lost_after_retries"] == 0,
                    "firehose: no delivery failure without failures or outage", f"{n}: {f['delivery_failures']}")
        if f["objects_written"] > 0:
            self.ok(f["object_bytes_min"] <= f["object_bytes_mean"] + 0.001 <= f["object_bytes_max"] + 0.002,
                    "firehose: object sizes min <= mean <= max", f"{n}: {f}")
        self.ok(f["delivery_delay_ms_mean"] <= f["delivery_delay_ms_max"] + 0.001,
                "firehose: delivery delay mean <= max", n)
        if not cs.get("full_backup"):
            self.ok(f["backup_calls"] == 0 and f["backup_bytes_read"] == 0, "firehose: no backup calls unless asked", n)
        self.ok(f["backup_calls"] <= c["getrecords_calls"], "firehose: getrecords_calls include the backup calls", n)
        agg = cs.get("aggregation", 1)
        self.ok(f["user_records_delivered"] == c["records_delivered"] * agg,
                "firehose: user records = records delivered x aggregation",
                f"{n}: {f['user_records_delivered']} != {c['records_delivered']} x {agg}")

    def flink(self, c, cs, f):
        """docs/consumers-firehose-flink.md, Flink figures."""
        n = c["name"]
        dur_s = self.rep["duration_s"]
        fails = [t for t in (parse_dur(x) for x in cs.get("failures", [])) if t <= dur_s]  # one at the end runs
        self.ok(f["restarts"] <= len(fails), "flink: restarts <= failures in the run", f"{n}: {f['restarts']}")
        self.ok(f["records_replayed"] <= f["records_processed_since_checkpoint"],
                "flink: records_replayed <= records_processed_since_checkpoint", f"{n}: {f}")
        self.ok(f["downtime_ms"] <= dur_s * 1000 + 1e-3, "flink: downtime within the run", n)
        if not fails:
            self.ok(f["restarts"] == 0 and f["records_replayed"] == 0 and f["downtime_ms"] == 0
                    and f["checkpoints_aborted"] == 0, "flink: no restart without failures", n)
            if not any(p.get("timeouts") for p in self.sc["producers"]):
                self.ok(c["duplicates_delivered"] == 0, "flink: no duplicate without failures or producer timeouts",
                        f"{n}: {c['duplicates_delivered']}")
        self.ok(f["child_starts_delayed"] <= c["children_started"], "flink: child_starts_delayed <= children_started", n)

    def kcl(self, c, cs):
        """docs/consumers-kcl.md, the KCL keys of a consumer object."""
        n = c["name"]
        dur_s = self.rep["duration_s"]
        ws = c["workers"]
        spec = cs["workers"]
        names = [f"w{i + 1}" for i in range(spec)] if isinstance(spec, int) else [w["name"] for w in spec]
        self.ok([w["name"] for w in ws] == names, "kcl: one worker object per configured worker",
                f"{n}: {[w['name'] for w in ws]}")
        by = c["lease_moves_by_cause"]
        self.ok(sum(by.values()) == c["lease_moves"], "kcl: lease_moves = the sum of its causes", f"{n}: {by}")
        la = cs.get("lease_assignment", "taker")
        self.ok(("balance" in by) == (la != "taker"), "kcl: the balance cause only in 3.x", n)
        self.ok(c.get("lease_assignment") == (None if la == "taker" else la), "kcl: lease_assignment key", n)
        live = [w for w in ws if w["state_end"] in ("running", "paused")]
        self.ok(len(live) == c["workers_running_end"], "kcl: workers_running_end counts running and paused",
                f"{n}: {c['workers_running_end']} != {len(live)}")
        self.ok(sum(1 for w in live if w["leases_held_end"] == 0) == c["idle_workers_end"],
                "kcl: idle_workers_end", n)
        for w in ws:
            wn = f"{n}/{w['name']}"
            self.ok(w["state_end"] in ("running", "paused", "stopped", "crashed", "not started"),
                    "kcl: worker state", f"{wn}: {w['state_end']}")
            if w["state_end"] not in ("running", "paused"):
                self.ok(w["leases_held_end"] == 0, "kcl: leases held only by running or paused workers", wn)
            self.ok(w["records_reprocessed"] <= w["records_processed"], "kcl: reprocessed <= processed", wn)
            self.ok(w["leases_stolen"] <= w["leases_taken"], "kcl: stolen <= taken", wn)
            self.ok(w["renewals_throttled"] <= w["renewals"], "kcl: renewals_throttled <= renewals", wn)
            self.ok(w["scans_throttled"] <= w["scans"], "kcl: scans_throttled <= scans", wn)
            self.ok(w["idle_s"] <= dur_s + 1e-6, "kcl: idle_s within the run", wn)
            self.ok(w["minutes_per_value"] >= 1, "kcl: minutes_per_value", wn)
        self.ok(sum(w["checkpoints"] for w in ws) == c["checkpoints"], "kcl: checkpoints = the workers' sum", n)
        if not c["lease_table_shared"]:
            proc = sum(w["records_processed"] - w["records_reprocessed"] for w in ws)
            self.ok(proc == c["records_delivered"], "kcl: first processings are the records delivered",
                    f"{n}: processed - reprocessed {proc}, delivered {c['records_delivered']}")
        self.ok(c["duplicates_from_failover"] <= c["duplicates_delivered"],
                "kcl: duplicates_from_failover <= duplicates_delivered", n)
        log = c["lease_move_log"]
        self.ok(len(log) <= 1000, "kcl: the move log holds at most 1,000", n)
        self.ok(all(a["t_s"] <= b["t_s"] for a, b in zip(log, log[1:])), "kcl: the move log in time order", n)
        if not c["lease_move_log_truncated"]:
            self.ok(len(log) == c["lease_moves"], "kcl: the move log has every move",
                    f"{n}: {len(log)} != {c['lease_moves']}")
            self.ok(sum(m["replay_expected"] for m in log) == c["replay_expected"],
                    "kcl: replay_expected = the move log's sum", n)
        conv = [e["converged_after_s"] for e in c["worker_events"] if e["converged_after_s"] is not None]
        for e in c["worker_events"]:
            if e["converged_after_s"] is not None:
                self.ok(e["t_s"] + e["converged_after_s"] <= dur_s + 1e-3, "kcl: converged within the run",
                        f"{n}: {e}")
        if conv:
            self.ok(abs(c["time_to_converge_max_s"] - max(conv)) < 0.002,
                    "kcl: time_to_converge_max_s is the longest convergence",
                    f"{n}: {c['time_to_converge_max_s']} vs {max(conv)}")
        lt = c["lease_table"]
        # Consumers sharing a table share the first one's settings (models/kds_kcl.h).
        app = cs.get("application_name", cs["name"])
        first = next(x for x in self.sc["consumers"]
                     if x["kind"] == "kcl" and x.get("application_name", x["name"]) == app)
        billing = first.get("lease_table", {}).get("billing", "on_demand")
        self.ok(lt["billing"] == billing, "kcl: lease table billing (the first sharer's)", n)
        if billing == "on_demand":
            self.ok(lt["write_capacity"] is None and c["lease_table_throttled_writes"] == 0
                    and c["lease_table_throttled_reads"] == 0, "kcl: an on-demand table never throttles", n)
            self.ok(c["checkpoints_throttled"] == 0, "kcl: no checkpoint throttled on demand", n)
        self.ok(c["lease_table_throttled_writes"] == lt["throttled_writes"]
                and c["lease_table_throttled_reads"] == lt["throttled_reads"],
                "kcl: throttled counts as the lease table's", n)
        self.ok(("leader_elections" in c) == (la == "taker"), "kcl: leader_elections only in 2.x", n)
        if la != "taker":
            for k in ("leaders", "lam_runs", "handoffs"):
                self.ok(k in c, "kcl: the 3.x keys", f"{n}: no {k}")
        if not c["lease_move_log_truncated"] and c["lease_moves"] == 0:
            self.ok(c["duplicates_from_failover"] == 0, "kcl: no failover duplicate without a lease move", n)

    # -- cost ----------------------------------------------------------------------------

    def cost(self):
        """docs/report-json.md `cost`: items add up, cheapest mode, as_run segments."""
        cost = self.rep["cost"]
        self.ok(list(cost["modes"]) == ["provisioned", "provisioned_sizing_rule", "on_demand_standard",
                                        "on_demand_advantage"], "cost.modes in order", str(list(cost["modes"])))
        self.ok(abs(cost["period_h"] - self.rep["duration_s"] / 3600) < 0.001, "cost.period_h", "")
        for name, m in cost["modes"].items():
            self.bill(f"cost.modes.{name}", m)
        cheapest = min(m["monthly_usd"] for m in cost["modes"].values())
        self.ok(cost["modes"][cost["cheapest_mode"]]["monthly_usd"] == cheapest, "cheapest_mode is the cheapest",
                cost["cheapest_mode"])
        sr = cost["sizing_rule"]
        self.ok(sr["shards"] == max(1, sr["shards_for_writes"], sr["shards_for_reads"], sr["shards_for_records"]),
                "sizing rule: the largest of the three, at least 1", str(sr))
        ar = cost.get("as_run")
        if ar:
            segs = ar["segments"]
            for s in segs:
                self.bill(f"cost.as_run {s['mode']} {s['from_h']}..{s['to_h']}", s)
            self.ok(abs(round(sum(s["period_usd"] for s in segs), 2) - ar["period_usd"]) < 0.0051,
                    "as_run period_usd = the segments' sum", "")
            self.ok(abs(round(sum(s["monthly_usd"] for s in segs), 2) - ar["monthly_usd"]) < 0.0051,
                    "as_run monthly_usd = the segments' sum", "")
            self.ok(bool(segs) and segs[0]["from_h"] == 0 and abs(segs[-1]["to_h"] - cost["period_h"]) < 0.001
                    and all(abs(a["to_h"] - b["from_h"]) < 1e-6 for a, b in zip(segs, segs[1:])),
                    "as_run segments cover the run in order", str([(s["from_h"], s["to_h"]) for s in segs]))

    def bill(self, what, m):
        """One bill: each item's usd is quantity x price to the cent; totals add the items."""
        for key, ik in (("period_usd", "usd"), ("monthly_usd", "monthly_usd")):
            tot = round(sum(i[ik] for i in m["items"]), 2)
            self.ok(abs(tot - m[key]) < 0.0051, "bill totals add the line items", f"{what}.{key}: {m[key]} != {tot}")
        for i in m["items"]:
            exp = i["quantity"] * i["unit_price_usd"]
            self.ok(abs(exp - i["usd"]) <= 0.0051 + 1e-9 * exp, "line item = quantity x price",
                    f"{what} {i['item']}: {i['usd']} vs {exp}")


# --------------------------------------------------------------------------------------
# Running kdsim
# --------------------------------------------------------------------------------------

SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:")


def kdsim(binary, args, timeout):
    """(status, stdout, stderr) of one kdsim command; status None on timeout."""
    try:
        p = subprocess.run([binary] + args, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b""
    return p.returncode, p.stdout, p.stderr


def reject_constant(name):
    """json.loads hook: NaN and Infinity are not JSON."""
    raise ValueError(f"non-JSON constant {name}")


def soak_one(binary, seed, folder, timeout):
    """Generate, validate, run twice and check one seed: (failures, scenario path, features)."""
    sc, files, features = generate(seed)
    path = os.path.join(folder, f"seed-{seed}.yaml")
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"# kdsim soak scenario: python3 fuzz/soak/soak.py KDSIM --seeds {seed}\n")
        out.write(to_yaml(sc) + "\n")
    for name, text in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
            out.write(text)
    fails = []
    rc, _, err = kdsim(binary, ["validate", path], timeout)
    if rc != 0:
        msg = err.decode(errors="replace").strip().replace("\n", "\n      ")
        return [("generator bug: kdsim validate refused the scenario", f"status {rc}: {msg}")], path, features
    runs = []
    for attempt in (1, 2):
        rc, out, err = kdsim(binary, ["run", path, "--json"], timeout)
        text = err.decode(errors="replace")
        if rc is None:
            fails.append(("run within the timeout", f"run {attempt}: no result after {timeout} s"))
            return fails, path, features
        if SANITIZER.search(text):
            fails.append(("no sanitizer report", f"run {attempt}: " + text.strip()[-2000:]))
        if rc != 0:
            fails.append(("exit status 0", f"run {attempt}: status {rc}: {text.strip()[-1000:]}"))
        elif text:
            fails.append(("stderr empty", f"run {attempt}: {text.strip()[-1000:]}"))
        runs.append(out)
        if fails:
            _save(folder, seed, attempt, out, err)
            return fails, path, features
    if runs[0] != runs[1]:
        fails.append(("determinism: two runs, byte-identical JSON", "the reports differ"))
        _save(folder, seed, 1, runs[0], b"")
        _save(folder, seed, 2, runs[1], b"")
        return fails, path, features
    try:
        rep = json.loads(runs[0], parse_constant=reject_constant)
    except ValueError as e:
        _save(folder, seed, 1, runs[0], b"")
        return [("the report is JSON without NaN or Infinity", str(e))], path, features
    try:
        fails = Checker(sc, rep).run()
    except (KeyError, TypeError, IndexError) as e:
        fails = [("the report has the documented keys", f"{type(e).__name__}: {e}")]
    if fails:
        _save(folder, seed, 1, runs[0], b"")
    return fails, path, features


def _save(folder, seed, attempt, out, err):
    """Keep a failed run's stdout and stderr beside its scenario."""
    with open(os.path.join(folder, f"seed-{seed}.run{attempt}.json"), "wb") as f:
        f.write(out)
    if err:
        with open(os.path.join(folder, f"seed-{seed}.run{attempt}.err"), "wb") as f:
            f.write(err)


def parse_seeds(text):
    """"A..B" (inclusive) or "N" -> range."""
    m = re.fullmatch(r"(\d+)(?:\.\.(\d+))?", text)
    if not m:
        raise argparse.ArgumentTypeError(f"--seeds takes A..B or N, not {text!r}")
    a = int(m.group(1))
    b = int(m.group(2)) if m.group(2) else a
    if b < a:
        raise argparse.ArgumentTypeError(f"--seeds {text}: the range is empty")
    return range(a, b + 1)


def command_line(argv, description, keep_help, timeout, prefix):
    """The command line the soak tools share (this one, metamorphic.py, plan_soak.py):
    (args, the kdsim program's absolute path, the timeout of one command in seconds, ten
    times `timeout` with --asan, and the folder for the files: --keep DIR, made if need
    be, or a new temporary folder named `prefix`...)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("kdsim", help="the kdsim program")
    ap.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1..100"),
                    help="A..B, inclusive (1..100)")
    ap.add_argument("--asan", action="store_true", help="a sanitizer build: ten times the timeouts")
    ap.add_argument("--keep", metavar="DIR", help=keep_help)
    ap.add_argument("--quiet", action="store_true", help="print only failures and the summary")
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.kdsim)
    if not os.access(binary, os.X_OK):
        ap.error(f"{args.kdsim} is not an executable program")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        folder = args.keep
    else:
        folder = tempfile.mkdtemp(prefix=prefix)
    return args, binary, timeout * 10 if args.asan else timeout, folder


def main(argv):
    """The command line: run the seeds, print failures and the summary; 1 if any failed."""
    args, binary, timeout, folder = command_line(
        argv, "Soak test of kdsim: random valid scenarios, run and checked.",
        "keep every scenario (and failed reports) in DIR", 60, "kdsim-soak-")
    t0 = time.monotonic()
    failed = []
    coverage = {}
    for seed in args.seeds:
        s0 = time.monotonic()
        fails, path, features = soak_one(binary, seed, folder, timeout)
        for f in features:
            coverage[f] = coverage.get(f, 0) + 1
        if fails:
            failed.append(seed)
            for check, detail in fails[:10]:
                print(f"FAIL seed {seed}: {check}: {detail}", flush=True)
            if len(fails) > 10:
                print(f"FAIL seed {seed}: ... and {len(fails) - 10} more failed checks")
            print(f"    scenario: {path}", flush=True)
        else:
            if not args.quiet:
                print(f"ok   seed {seed} ({time.monotonic() - s0:.2f} s)", flush=True)
            if not args.keep:
                for name in os.listdir(folder):
                    if name == f"seed-{seed}.yaml" or name.startswith(f"trace-{seed}-"):
                        os.remove(os.path.join(folder, name))
    if not args.keep and not failed:
        shutil.rmtree(folder, ignore_errors=True)
    if not args.quiet:
        print("coverage (scenarios per feature):")
        for k in sorted(coverage):
            print(f"    {k}: {coverage[k]}")
    n = len(args.seeds)
    seeds = f"{args.seeds.start}..{args.seeds.stop - 1}"
    print(f"soak: {n} scenarios (seeds {seeds}), {len(failed)} failed, {time.monotonic() - t0:.1f} s"
          + (f"; failed seeds: {' '.join(map(str, failed))}; scenarios kept in {folder}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
