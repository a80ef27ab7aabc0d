#!/usr/bin/env bash
# cli_bill_meters.sh - billing meters of whole runs, checked to the cent against what
# the scenarios make exact: the long-term retrieval of every kind of reader, EFO
# consumer-shard-hours on the shards the stream bills, retention storage while a band
# fills, and the bill as run of a stream that switched capacity mode.
#
# usage: bash tests/cli_bill_meters.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# run NAME SCENARIO [ARGS...]: `kdsim run SCENARIO --json` into $tmp/NAME.json.
run() {
    local name=$1 scenario=$2
    shift 2
    k "$name" 0 run "$scenario" --json "$@" && cp "$tmp/$name.out" "$tmp/$name.json"
}

# check NAME WHAT JQ_EXPR: the expression must hold on $tmp/NAME.json.
check() {
    local name=$1 what=$2 expr=$3
    jq -e "$expr" "$tmp/$name.json" >/dev/null 2>&1 || fail "$name: $what ($expr)"
}

# item MODE ITEM: the jq path of a line item of the cost.
item() {
    echo ".cost.modes.$1.items[] | select(.item == \"$2\")"
}

# --- long-term retrieval -------------------------------------------------------------
# Nine readers (polling, efo, lambda and flink both ways, firehose, kcl both ways) start
# at 169 h at the trim horizon and read everything: 720,000 records of 10 KiB written in
# the first hour, older than 7 days when read, and 540,000 records of 1 KiB written
# from 168 h, younger. Retrieval bills the old ones only: 9 x 7,372,800,000 B =
# 61.798 GB x $0.021 = $1.2978 for the 172 h, and x 720 / 172 = $5.4325 a month.
run lt tests/scenarios/bill-long-term-reads.yaml
check lt "every reader read everything" \
    '(.consumers | length) == 9 and all(.consumers[]; .records_delivered == 1260000
         and .bytes_read_shared + .bytes_read_efo == 7925760000)'
check lt "retrieval bills what every reader read of the first hour" \
    "$(item provisioned long_term_retrieval) | (.quantity * 1073741824 - 9 * 7372800000 | fabs)
     < 1"
check lt "retrieval costs \$1.30 for the period" \
    "$(item provisioned long_term_retrieval) | .usd == 1.3 and .monthly_usd == 5.43"

# --- EFO consumer-shard-hours --------------------------------------------------------
# Shard 0 of 2 is split at 1 h (closed at 1 h 0 m 30 s, after the reshard's 30 s) and
# billed until its records expire 24 h later; the run lasts 30 h. Shard-hours: 25.00833
# + 30 + 2 x 28.99167 = 112.99167 ($1.69; a month, x 24: $40.68). Each of the four EFO
# registrations (efo, lambda, flink, kcl), registered from 0, accrues the same hours:
# 451.96667 consumer-shard-hours, $6.78 ($162.71 a month); counting the parent only
# while it was open would leave out 4 x 24 h.
run efo tests/scenarios/bill-efo-closed-shards.yaml
check efo "shard-hours" "$(item provisioned shard_hours) | .usd == 1.69 and .monthly_usd == 40.68"
check efo "every registration accrues the stream's shard-hours" \
    '([.stream.shards[].shard_hours] | add) as $h
     | (.consumers | length) == 4
       and all(.consumers[].figures.consumer_shard_hours; (. - $h | fabs) < 0.002)'
check efo "consumer-shard-hours on every billed shard" \
    "$(item provisioned efo_consumer_shard_hours) | .usd == 6.78 and .monthly_usd == 162.71"
# The sizing rule's one shard, with the same four consumers: 4 x 30 h, $1.80.
check efo "the sizing rule's consumers" \
    "$(item provisioned_sizing_rule efo_consumer_shard_hours) | .quantity == 120 and .usd == 1.8"

# --- retention storage while a band fills -----------------------------------------------
# 4 MiB/s (less what is throttled) into a 48 h retention for 48 h: the (24 h, 7 d] band
# fills from 24 h on, to 24 h of writes at the end. The period holds 4,030.26 GiB-hours
# (the same metered every minute instead of every hour: 4,030.262), $0.56 at $0.10 per
# GB-month of 720 h; counting each hour's end amount for the whole hour billed 4,198.19
# GiB-hours, $0.58. The month (bands full) is unchanged: $33.59.
run ret tests/scenarios/bill-retention-fill.yaml
check ret "the band's GiB-hours" \
    "$(item on_demand_standard extended_retention) | (.quantity * 720 - 4030.26 | fabs) < 0.01"
check ret "the band's cost" \
    "$(item on_demand_standard extended_retention) | .usd == 0.56 and .monthly_usd == 33.59"
check ret "the shards' meters add up to the bill's" \
    "([.stream.shards[].retained_gib_hours_24h_7d] | add) as \$g
     | $(item on_demand_standard extended_retention) | (.quantity * 720 - \$g | fabs) < 0.01"

# --- the bill as run -------------------------------------------------------------------
# 100 records/s of 2 KiB into 2 shards and one EFO reader; provisioned until 2 h, then
# On-demand Standard (which grows the stream to its 4-shard floor) until 6 h. As run:
# provisioned 0-2 h: 4 shard-hours $0.06, 0.7199 M PUT units $0.01, 4 consumer-shard-
# hours $0.06, 1.3731 GB pushed $0.02 = $0.15 (a month, x 120: $17.75); Standard 2-6 h:
# 4 stream-hours $0.16, 2.7466 GB written $0.22 and pushed $0.14 = $0.52 ($62.05): $0.67
# and $79.80. The modes' lines still bill the whole run in one mode (Standard: $0.78).
run sw tests/scenarios/bill-mode-switch.yaml
check sw "two segments" \
    '[.cost.as_run.segments[] | [.mode, .from_h, .to_h]]
     == [["provisioned", 0, 2], ["on_demand_standard", 2, 6]]'
check sw "each segment in its own mode" \
    '[.cost.as_run.segments[] | [.period_usd, .monthly_usd]] == [[0.15, 17.75], [0.52, 62.05]]'
check sw "the bill as run" \
    '.cost.as_run | .mode_switches == 1 and .period_usd == 0.67 and .monthly_usd == 79.8'
check sw "the provisioned stretch's items" \
    '.cost.as_run.segments[0].items | map({(.item): .usd}) | add
     | .shard_hours == 0.06 and .put_payload_units == 0.01
       and .efo_consumer_shard_hours == 0.06 and .efo_data_retrieval == 0.02'
check sw "the modes' lines bill the whole run" \
    '.cost.modes.on_demand_standard | .period_usd == 0.78 and .monthly_usd == 93.07'
check sw "an assumption says how it is billed" \
    'any(.cost.assumptions[]; startswith("as run: the stream switched capacity mode 1 time;"))'
check lt "no bill as run without a mode switch" '.cost | has("as_run") | not'
k swtext 0 run tests/scenarios/bill-mode-switch.yaml
grep -Eq '^  as run, 1 mode switch \(the scenario.s\) +\$0\.67 +\$79\.80$' "$tmp/swtext.out" ||
    fail "sw: the text report has no as-run line of \$0.67 and \$79.80"
grep -q "on_demand_standard (the scenario's)" "$tmp/swtext.out" &&
    fail "sw: the text report calls a mode the scenario's although the run switched"
k swcost 0 cost tests/scenarios/bill-mode-switch.yaml
grep -q '^on_demand_standard, from 2h to 6h$' "$tmp/swcost.out" ||
    fail "sw: kdsim cost shows no line items of the on-demand stretch"

cli_finish cli_bill_meters
