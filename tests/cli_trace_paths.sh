#!/usr/bin/env bash
# cli_trace_paths.sh - trace lines that no shipped scenario reaches, from the test
# scenarios tests/scenarios/trace-*.yaml (their headers say how each gets there): a
# capacity-mode switch, done or refused; a refused SplitShard and MergeShards, while the
# stream is UPDATING and for a closed or a non-adjacent shard; on-demand scaling merging
# shards in excess; a KCL worker deleting a lease at SHARD_END, and a KCL 3.x worker
# dropping a lease during its handoff. Each line is checked against the report of the
# same run: every request the report's stream.reshards lists has its line with the same
# outcome and error, the switches and scale-downs are the report's mode_switches and
# on_demand_scale_downs, and a KCL worker's holder-side lines account for its figures
# (leases taken, lost, given up, handed over, and the lease table's deletes). Each
# traced run's report is the one without --trace.
#
# usage: bash tests/cli_trace_paths.sh KDSIM SOURCE_DIR
set -u
. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# traced NAME SCENARIO KINDS: runs tests/scenarios/SCENARIO.yaml with its JSON report in
# $tmp/NAME.json and the trace of KINDS in $tmp/NAME.trace, then without --trace: the
# two reports must be byte-identical (the trace is a window, not a change).
traced() {
    local sc=tests/scenarios/$2.yaml
    if ! "$kdsim" run "$sc" --json --trace "$tmp/$1.trace" --trace-kinds "$3" \
        >"$tmp/$1.json" 2>"$tmp/$1.err"; then
        fail "$1: kdsim run $sc failed: $(head -3 "$tmp/$1.err")"
        return 1
    fi
    "$kdsim" run "$sc" --json >"$tmp/$1.plain.json" 2>/dev/null
    cmp -s "$tmp/$1.json" "$tmp/$1.plain.json" || fail "$1: the report changes with --trace"
}
# has NAME REGEX WHAT: the trace has a line matching REGEX.
has() {
    grep -Eq "$2" "$tmp/$1.trace" || fail "$1: no line $3"
}
# rep NAME EXPR: EXPR of the run's JSON report r, printed by Python.
rep() {
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$tmp/$1.json"
}
line='^ *[0-9]+\.[0-9]{6}  '

# The requests the stream's owner makes (the scenario's splits, merges and mode switches)
# against the report's stream.reshards: one line each, at its time, naming what was asked
# and its outcome, a refusal with the error name and message the report gives.
requests_match() { # requests_match NAME
    python3 - "$tmp/$1.json" "$tmp/$1.trace" "$1" <<'PY' || failed=$((failed + 1))
import json, sys
name = sys.argv[3]
ops = [o for o in json.load(open(sys.argv[1]))["stream"]["reshards"] if o["cause"] == "scenario"]
want = []
for o in ops:
    what = {"SplitShard": lambda: f"SplitShard of {o['shard_id']} at NewStartingHashKey "
                                  f"{o['new_starting_hash_key']}",
            "MergeShards": lambda: f"MergeShards of {o['shard_id']} and {o['adjacent_shard_id']}",
            "UpdateShardCount": lambda: f"UpdateShardCount to {o['target_shard_count']}",
            "UpdateStreamMode": lambda: "switch to the " + {
                "provisioned": "Provisioned", "on_demand_standard": "On-demand Standard",
                "on_demand_advantage": "On-demand Advantage"}[o["mode"]] + " capacity mode"}[o["operation"]]()
    if o["status"] != "OK":
        out = f"refused, {o['status']}: {o['message']}"
    elif o["operation"] == "UpdateStreamMode":
        out = "done; the stream keeps its shards"
    else:
        out = "accepted; the stream is UPDATING for "
    want.append((o["requested_s"], f"{what} (scenario): {out}"))
got = []
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split(None, 4)
    if f[1] == "reshard" and "(scenario): " in f[4]:
        got.append((float(f[0]), f[4].rstrip("\n")))
bad = []
if len(got) != len(want):
    bad.append(f"{len(got)} request lines, {len(want)} requests in the report")
for (wt, ww), (gt, gw) in zip(want, got):
    if abs(wt - gt) > 5e-4 or not gw.startswith(ww) or ("refused" in ww and gw != ww):
        bad.append(f"at {gt} s: '{gw}', the report says at {wt} s: '{ww}'")
for b in bad:
    print(f"FAIL {name}:", b)
sys.exit(1 if bad else 0)
PY
}

# ---- refused SplitShard and MergeShards --------------------------------------------------
# trace-reshard-refused: a split accepted at 60 s; while the stream is UPDATING a split
# and a merge refused (ResourceInUseException); at 120 s a split of the closed parent
# and a merge of non-adjacent shards refused (InvalidArgumentException).
if traced refused trace-reshard-refused reshard; then
    requests_match refused
    has refused "${line}reshard +orders +shardId-000000000001 SplitShard of shardId-000000000001 at NewStartingHashKey [0-9]+ \(scenario\): refused, ResourceInUseException: stream orders is UPDATING; SplitShard needs an ACTIVE stream$" \
        "refusing a split while the stream is UPDATING"
    has refused "${line}reshard +orders +shardId-000000000001 MergeShards of shardId-000000000001 and shardId-000000000002 \(scenario\): refused, ResourceInUseException: stream orders is UPDATING; MergeShards needs an ACTIVE stream$" \
        "refusing a merge while the stream is UPDATING"
    has refused "${line}reshard +orders +shardId-000000000000 SplitShard of shardId-000000000000 at NewStartingHashKey [0-9]+ \(scenario\): refused, InvalidArgumentException: shardId-000000000000 is CLOSED; SplitShard takes open shards only$" \
        "refusing a split of the closed shardId-000000000000"
    has refused "${line}reshard +orders +shardId-000000000001 MergeShards of shardId-000000000001 and shardId-000000000003 \(scenario\): refused, InvalidArgumentException: shardId-000000000001 and shardId-000000000003 are not adjacent: " \
        "refusing a merge of non-adjacent shards"
    n=$(grep -c ' (scenario): refused, ' "$tmp/refused.trace")
    want=$(rep refused 'sum(o["status"] != "OK" for o in r["stream"]["reshards"])')
    [ "$n" = 4 ] && [ "$n" = "$want" ] ||
        fail "refused: $n refused requests in the trace, $want in the report (4 expected)"
fi

# ---- capacity-mode switches and on-demand scale-down merges ------------------------------
# trace-mode-switch: switches to on-demand at 60 s and back at 1,200 s (the report's
# mode_switches), a third at 1,500 s refused; on demand, one merge of the quietest
# adjacent pair per scale-down delay (300 s) in excess, from 6 to 4 open shards.
if traced switch trace-mode-switch reshard; then
    requests_match switch
    has switch "${line}reshard +orders +- +switch to the On-demand Standard capacity mode \(scenario\): done; the stream keeps its shards$" \
        "switching the stream to on-demand"
    has switch "${line}reshard +orders +- +switch to the Provisioned capacity mode \(scenario\): done; the stream keeps its shards$" \
        "switching the stream back to provisioned"
    has switch "${line}reshard +orders +- +switch to the On-demand Standard capacity mode \(scenario\): refused, LimitExceededException: the capacity mode was already switched 2 times? in the last 24 hours" \
        "refusing a third switch in 24 hours"
    python3 - "$tmp/switch.json" "$tmp/switch.trace" <<'PY' || failed=$((failed + 1))
import json, re, sys
st = json.load(open(sys.argv[1]))["stream"]
cap = st["capacity"]
lines = [ln.rstrip("\n").split(None, 4) for ln in open(sys.argv[2]).readlines()[1:]]
bad = []
done = sum(1 for f in lines if re.match(r"switch to the .* capacity mode \(scenario\): done", f[4]))
if done != cap["mode_switches"] or done != 2:
    bad.append(f"{done} switches done in the trace, the report's mode_switches is "
               f"{cap['mode_switches']} (2 expected)")
# The scale-down lines: as many as on_demand_scale_downs, each at a merge of the report's
# (cause on-demand scaling), its counts going down by one from the 6 shards to the
# report's open shards at the end, one scale-down delay (300 s) after the switch or the
# previous merge; the merge's parents close and its child appears at the same time.
pat = re.compile(r"on-demand scaling: capacity in excess for the scale-down delay; merges the two "
                 r"adjacent shards with the least traffic, from ([0-9]+) to ([0-9]+) open shards?$")
downs = [(float(f[0]), pat.match(f[4])) for f in lines if f[3] == "-" and pat.match(f[4])]
merges = [o for o in st["reshards"]
          if o["cause"] == "on-demand scaling" and o["operation"] == "MergeShards"]
if len(downs) != cap["on_demand_scale_downs"] or len(downs) != len(merges) or len(downs) != 2:
    bad.append(f"{len(downs)} scale-down lines, the report's on_demand_scale_downs is "
               f"{cap['on_demand_scale_downs']}, {len(merges)} merges by on-demand scaling (2 expected)")
n, prev = 6, 60.0
for (t, m), o in zip(downs, merges):
    a, b = int(m.group(1)), int(m.group(2))
    if (a, b) != (n, n - 1):
        bad.append(f"at {t} s: from {a} to {b} open shards, expected from {n} to {n - 1}")
    n = b
    if abs(t - o["requested_s"]) > 5e-4 or abs(t - prev - 300) > 5e-4:
        bad.append(f"a scale-down at {t} s: the report's merge is at {o['requested_s']} s, "
                   f"the previous change at {prev} s")
    prev = t
    child = o["children"][0] if len(o["children"]) == 1 else None
    at = [f for f in lines if abs(float(f[0]) - t) < 5e-4]
    closed = sorted(f[3] for f in at if f[4].startswith("closed: "))
    born = [f for f in at if f[4].startswith("new shard ")]
    parents = f"parent {o['shard_id']}, adjacent parent {o['adjacent_shard_id']}"
    if closed != sorted([o["shard_id"], o["adjacent_shard_id"]]) or len(born) != 1 or \
            born[0][3] != child or not born[0][4].endswith(", " + parents):
        bad.append(f"at {t} s: not the {parents} closed and their child {child} created")
if downs and n != st["open_shards"]:
    bad.append(f"the last scale-down leaves {n} open shards, the report ends with "
               f"{st['open_shards']}")
for b in bad:
    print("FAIL switch:", b)
sys.exit(1 if bad else 0)
PY
fi

# ---- a KCL worker's holder side -----------------------------------------------------------
# kcl_accounts NAME: per worker of the run's first KCL application, the lease lines add
# up to its figures: taken or stolen to leases_taken; lost and dropped during a handoff
# to leases_lost; given up to leases_self_expired; handed over to handoffs_out (3.x);
# and what leaves, leases_taken - leases_held_end - the above, to the lines of leases
# deleted at SHARD_END, which are the lease table's deletes.
kcl_accounts() {
    python3 - "$tmp/$1.json" "$tmp/$1.trace" "$1" <<'PY' || failed=$((failed + 1))
import json, sys
name = sys.argv[3]
c = json.load(open(sys.argv[1]))["consumers"][0]
kinds = (("lease taken (", "leases_taken"), ("lease stolen (", "leases_taken"),
         ("lease moved by the leader (", "leases_taken"),
         ("lease lost: ", "leases_lost"), ("lease dropped during its handoff: ", "leases_lost"),
         ("lease given up: ", "leases_self_expired"), ("lease handed over", "handoffs_out"),
         ("lease deleted: ", "deleted"))
got = {}
for ln in open(sys.argv[2]).readlines()[1:]:
    f = ln.split(None, 4)
    if f[1] != "lease":
        continue
    for prefix, fig in kinds:
        if f[4].startswith(prefix):
            got[(f[2], fig)] = got.get((f[2], fig), 0) + 1
bad, deleted = [], 0
for w in c["workers"]:
    label = c["name"] + "/" + w["name"]
    g = lambda fig: got.get((label, fig), 0)
    for fig in ("leases_taken", "leases_lost", "leases_self_expired", "handoffs_out"):
        if g(fig) != w.get(fig, 0):
            bad.append(f"{label} {fig}: trace {g(fig)}, report {w.get(fig, 0)}")
    left = (w["leases_taken"] - w["leases_held_end"] - w["leases_lost"]
            - w["leases_self_expired"] - w.get("handoffs_out", 0))
    if w["state_end"] == "running" and left != g("deleted"):
        bad.append(f"{label}: {left} leases left it otherwise, {g('deleted')} deleted at "
                   "SHARD_END in the trace")
    deleted += g("deleted")
lt = c["lease_table"]
made = lt["requests"]["delete"] - lt["throttled"]["delete"] - lt["condition_failed"]["delete"]
if deleted != made:
    bad.append(f"{deleted} leases deleted in the trace, {made} deletes made in the lease table")
for b in bad:
    print(f"FAIL {name}:", b)
sys.exit(1 if bad else 0)
PY
}

# trace-kcl-shard-end: the worker deletes the split parent's lease once its shard is at
# SHARD_END and both children checkpointed; it ends with the other 3 of its 4 leases.
if traced shardend trace-kcl-shard-end lease,reshard; then
    has shardend "${line}lease +orders-app/w1 +shardId-000000000000 lease deleted: its shard is at SHARD_END and every child has checkpointed$" \
        "deleting the closed parent's lease at SHARD_END"
    [ "$(grep -c ' lease deleted: ' "$tmp/shardend.trace")" = 1 ] ||
        fail "shardend: expected the one lease of the split parent deleted"
    # After the children started: their leases are checkpointed after every batch.
    bad=$(awk '/starts reading this child shard/ { s = $1 } / lease deleted: / && (s == "" || $1 <= s) { print $1 }' \
        "$tmp/shardend.trace")
    [ -z "$bad" ] || fail "shardend: a lease deleted before the children started: $bad"
    kcl_accounts shardend
    [ "$(rep shardend 'r["consumers"][0]["lease_table"]["leases_end"]')" = 3 ] ||
        fail "shardend: the lease table should end with 3 leases of 4"
fi

# trace-kcl3-handoff-drop: lead pauses between noticing the handoff of
# shardId-000000000001 and letting it go; meanwhile b, the new leader, assigns it as
# expired. At 387 s lead's release finds b's leaseCounter: dropped (a lease lost), and
# its other lease is given up on its own clock.
if traced handoff trace-kcl3-handoff-drop lease; then
    has handoff "^ +387\.000000  lease +orders-app/lead +shardId-000000000001 lease dropped during its handoff: another worker's leaseCounter$" \
        "of lead dropping shardId-000000000001 during its handoff at 387 s (the pause may need new timing: see the scenario's header)"
    has handoff "^ +387\.000000  lease +orders-app/lead +shardId-000000000000 lease given up: not renewed for failoverTimeMillis on this worker's clock$" \
        "of lead giving its other lease up when it resumes"
    # The handoff was unfinished, so lead, not b (the owner named to take it next), held
    # shardId-000000000001 when b assigned it to itself as expired.
    has handoff "^ +309\.525000  lease +orders-app/b +shardId-000000000001 lease taken \(its owner stopped renewing it\) from orders-app/lead; " \
        "of b taking shardId-000000000001 as expired from lead, its holder mid-handoff"
    kcl_accounts handoff
fi

cli_finish cli_trace_paths
