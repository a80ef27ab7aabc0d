#!/usr/bin/env bash
# cli_cost.sh - `kdsim cost` and the report's cost object: the three-mode table, the
# documented JSON keys (docs/report-json.md, "cost"), the arithmetic of every line item
# (quantity x unit price = dollars, to the cent; totals = sum of the items), the same
# cost object from `run --json` and `cost --json`, price files and overrides from the
# command line and the scenario, and bad input (exit status 2, nothing on stdout).
#
# usage: bash tests/cli_cost.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
src=$PWD
scenario=scenarios/acme-clickstream.yaml
prices=scenarios/prices/us-east-1-2026-09.yaml
cli_tmpdir

# ok NAME CMD ARGS...: run kdsim CMD ARGS with stdout to $tmp/NAME.out; the exit status
# must be 0 and stderr empty.
ok() {
    local name=$1
    shift
    "$kdsim" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/$name.err" ]; then
        fail "kdsim $*: exit status $rc"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -20
    fi
}

# bad NAME PATTERN CMD ARGS...: kdsim CMD ARGS must exit with 2, print nothing on stdout,
# and print a line matching the extended regex PATTERN on stderr.
bad() {
    local name=$1 pattern=$2
    shift 2
    "$kdsim" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    [ $rc -eq 2 ] || fail "kdsim $*: exit status $rc, want 2"
    [ -s "$tmp/$name.out" ] && fail "kdsim $*: printed on stdout"
    if ! grep -Eq -- "$pattern" "$tmp/$name.err"; then
        fail "kdsim $*: no stderr line matches /$pattern/"
        sed 's/^/    stderr: /' "$tmp/$name.err" | head -10
    fi
}

# value FILE KEY: the first value of "KEY": in a JSON file written by kdsim (one key a
# line), without quotes or the trailing comma.
value() {
    sed -n "s/^ *\"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$1" | head -1
}

# mode_block FILE MODE: the lines of cost.modes.MODE in a `cost --json` file.
mode_block() {
    awk -v m="    \"$2\": {" '$0 == m {on = 1} on {print} on && $0 ~ /^    },?$/ {exit}' "$1"
}

# --- the table -----------------------------------------------------------------------
ok table cost "$scenario" --duration 2m
for line in "provisioned, 4 shards (the scenario's)" "(sizing rule)" on_demand_standard \
    on_demand_advantage "cheapest per month:" "Sizing rule over the busiest minutes" \
    shard_hours put_payload_units extended_retention long_term_retention \
    long_term_retrieval efo_consumer_shard_hours efo_data_retrieval shared_reads stream_hours \
    data_written data_read_shared data_read_efo commitment_shortfall_written \
    commitment_shortfall_read "Lambda, Firehose and Flink" "retention bands are full"; do
    grep -qF -- "$line" "$tmp/table.out" || fail "kdsim cost: no '$line' in the table"
done

# An on-demand stream that grows: priced as provisioned, its bill holds the shard-hours
# of every shard the run had, which the label must not call the 4 it started with.
ok grown cost scenarios/on-demand-burst.yaml
grep -qF "provisioned, the run's shards (avg " "$tmp/grown.out" ||
    fail "kdsim cost: a stream that grew is labelled as its starting shard count"
grep -qF "provisioned, 4 shards" "$tmp/grown.out" &&
    fail "kdsim cost: a stream that grew is labelled as its starting shard count"
# ...nor the HTML report's cost table, nor the cost plot's data.
ok grownrun run scenarios/on-demand-burst.yaml --out "$tmp/grown"
grep -qE '<td class="t">avg [0-9]+\.[0-9]{2} \(resharded\)</td>' "$tmp/grown/report.html" ||
    fail "report.html: a stream that grew shows its starting shard count"
grep -qE '^provisioned,provisioned,avg [0-9]+\.[0-9]{2} shards,' "$tmp/grown/plots/cost.csv" ||
    fail "cost.csv: a stream that grew shows its starting shard count"

# --- the JSON keys -------------------------------------------------------------------
ok json cost "$scenario" --duration 2m --json
for key in prices file region as_of overrides period_h month_h scenario_mode sizing_rule \
    basis write_mib_per_s read_mib_per_s records_per_s headroom shards_for_writes \
    shards_for_reads shards_for_records shards modes provisioned provisioned_sizing_rule \
    on_demand_standard on_demand_advantage period_usd monthly_usd items item price unit \
    unit_price_usd quantity usd monthly_quantity monthly_usd cheapest_mode assumptions; do
    grep -q "^ *\"$key\": " "$tmp/json.out" || fail "cost --json: no key \"$key\""
done
[ "$(value "$tmp/json.out" region)" = us-east-1 ] || fail "cost --json: prices.region is not us-east-1"
[ "$(value "$tmp/json.out" month_h)" = 720 ] || fail "cost --json: month_h is not 720"
case $(value "$tmp/json.out" cheapest_mode) in
provisioned | provisioned_sizing_rule | on_demand_standard | on_demand_advantage) ;;
*) fail "cost --json: cheapest_mode is not a key of modes" ;;
esac

# Every line item: |quantity x unit price - usd| is at most half a cent, the same for
# the month, and each total is the sum of its items.
awk '
function abs(x) { return x < 0 ? -x : x }
/"unit_price_usd":/ { gsub(/[",]/, "", $2); up = $2 }
/"quantity":/ && !/monthly/ { gsub(/[",]/, "", $2); q = $2 }
/"usd":/ && !/_usd/ { gsub(/[",]/, "", $2); u = $2; n++
    if (abs(q * up - u) > 0.0050001 * (1 + q * up / 1e6)) { print "FAIL item " n ": " q " x " up " != " u; bad++ }
    sum += u }
/"monthly_quantity":/ { gsub(/[",]/, "", $2); mq = $2 }
/"monthly_usd":/ && /^          "/ { gsub(/[",]/, "", $2)
    if (abs(mq * up - $2) > 0.0050001 * (1 + mq * up / 1e6)) { print "FAIL month item " n ": " mq " x " up " != " $2; bad++ }
    msum += $2 }
/^      "period_usd":/ { if (ptot != "") { print "FAIL nested totals"; bad++ } gsub(/[",]/, "", $2); ptot = $2 }
/^      "monthly_usd":/ { gsub(/[",]/, "", $2); mtot = $2 }
/^      "items": \[/ { sum = 0; msum = 0 }
/^      \]/ { modes++
    if (abs(sum - ptot) > 0.0001) { print "FAIL period total " ptot " != sum of items " sum; bad++ }
    if (abs(msum - mtot) > 0.0001) { print "FAIL monthly total " mtot " != sum of items " msum; bad++ }
    ptot = "" }
END { if (n < 20 || modes != 4) { print "FAIL parsed " n " items in " modes " modes"; bad++ } exit bad > 0 }
' "$tmp/json.out" || fail "cost --json: line-item arithmetic (above)"

# The provisioned modes name their shards: the scenario's 4, and the rule's.
mode_block "$tmp/json.out" provisioned | grep -q '"shards": 4,' ||
    fail "cost.modes.provisioned.shards is not the scenario's 4"
mode_block "$tmp/json.out" provisioned_sizing_rule | grep -q '"shards": [1-9]' ||
    fail "cost.modes.provisioned_sizing_rule.shards missing"
mode_block "$tmp/json.out" on_demand_standard | grep -q '"shards"' &&
    fail "cost.modes.on_demand_standard has shards"

# --- run --json holds the same cost object, and the text report its table ------------
ok runjson run "$scenario" --duration 2m --json
awk '/^  "cost": \{/ {on = 1; print "{"; next} on && /^  },?$/ {print "}"; exit} on {print substr($0, 3)}' \
    "$tmp/runjson.out" >"$tmp/runcost.out"
if ! cmp -s "$tmp/runcost.out" "$tmp/json.out"; then
    fail "run --json's cost differs from cost --json"
    diff -u "$tmp/runcost.out" "$tmp/json.out" | head -20
fi
ok runtext run "$scenario" --duration 2m
grep -q "^Cost (the stream's own bill" "$tmp/runtext.out" || fail "run: no cost table in the text report"
grep -q "cheapest per month: $(value "$tmp/json.out" cheapest_mode)" "$tmp/runtext.out" ||
    fail "run: the text report's cheapest mode differs from the JSON's"

# --- prices from the command line and from the scenario --------------------------------
# shard_hour doubled in a copy of the price file, named relative to another folder.
sed 's/^  shard_hour: 0.015$/  shard_hour: 0.03/' "$prices" >"$tmp/double.yaml"
grep -q 'shard_hour: 0.03' "$tmp/double.yaml" || fail "could not edit the price file"
(cd "$tmp" && "$kdsim" cost "$src/$scenario" --duration 2m --json --prices double.yaml \
    >"$tmp/double.out" 2>"$tmp/double.err") || fail "cost --prices double.yaml (relative to the current folder)"
mode_block "$tmp/double.out" provisioned | grep -A4 '"item": "shard_hours"' |
    grep -q '"unit_price_usd": 0.03,' || fail "--prices FILE: shard_hour is not 0.03"
grep -q '"file": "double.yaml"' "$tmp/double.out" || fail "--prices FILE: prices.file is not double.yaml"

ok over cost "$scenario" --duration 2m --json --set billing.overrides.provisioned.shard_hour=0.03
mode_block "$tmp/over.out" provisioned | grep -A4 '"item": "shard_hours"' |
    grep -q '"unit_price_usd": 0.03,' || fail "billing.overrides: shard_hour is not 0.03"
grep -q '"price": "provisioned.shard_hour",' "$tmp/over.out" || fail "prices.overrides does not list the override"
grep -A1 '"price": "provisioned.shard_hour",$' "$tmp/over.out" | grep -q '"value": 0.03' ||
    fail "prices.overrides: value is not 0.03"
# The same prices give the same bill, wherever they come from.
for m in provisioned provisioned_sizing_rule on_demand_standard on_demand_advantage; do
    [ "$(mode_block "$tmp/double.out" $m)" = "$(mode_block "$tmp/over.out" $m)" ] ||
        fail "--prices with shard_hour 0.03 and an override to 0.03 bill $m differently"
done

ok month cost "$scenario" --duration 2m --json --set billing.month_hours=730 --set billing.sizing_headroom=0.5
mode_block "$tmp/month.out" on_demand_standard | grep -A6 '"item": "stream_hours"' |
    grep -q '"monthly_quantity": 730.0,' || fail "billing.month_hours=730: stream-hours per month are not 730"
[ "$(value "$tmp/month.out" headroom)" = 0.5 ] || fail "billing.sizing_headroom=0.5 not reported"

# --- KPL-style aggregation: the same traffic in 24 times fewer PUT payload units -------
ok kpl cost "$scenario" --duration 2m --json --set producers[0].aggregation.records=24 \
    --set producers[1].aggregation.records=24
units() { mode_block "$1" provisioned | grep -A8 '"item": "put_payload_units"' | sed -n 's/^ *"monthly_usd": \([0-9.]*\),*$/\1/p'; }
plain=$(units "$tmp/json.out")
packed=$(units "$tmp/kpl.out")
awk -v a="$plain" -v b="$packed" 'BEGIN { exit !(a > 60 && b > 0 && b * 20 < a) }' ||
    fail "aggregation of 24 records: PUT payload units cost \$$packed a month against \$$plain"
bad agg "producers\[0\].aggregation: an aggregated record of 1100 records is 1.07 MiB" \
    validate "$scenario" --set producers[0].aggregation.records=1100

# --- bad input -------------------------------------------------------------------------
sed 's/^  put_payload_units: 0.014$/  put_payload_unit: 0.014/' "$prices" >"$tmp/typo.yaml"
bad typo "typo.yaml:[0-9]+:3: provisioned: unknown key 'put_payload_unit'; did you mean 'put_payload_units'\?" \
    cost "$scenario" --prices "$tmp/typo.yaml"
bad missing "provisioned: missing required key 'put_payload_units'" \
    run "$scenario" --prices "$tmp/typo.yaml"
sed 's/^  data_read: 0.016$/  data_read: 1.6e-2/' "$prices" >"$tmp/sci.yaml"
bad sci "sci.yaml:[0-9]+:14: on_demand_advantage.data_read: expected a price in US dollars as a plain decimal like 0.014, got \"1.6e-2\"" \
    cost "$scenario" --prices "$tmp/sci.yaml"
bad nofile "^kdsim: --prices: billing.prices: cannot read the price file .*nowhere.yaml" \
    cost "$scenario" --prices nowhere.yaml
bad key "billing.overrides.provisioned: unknown key 'shard_hours'; did you mean 'shard_hour'\?" \
    cost "$scenario" --set billing.overrides.provisioned.shard_hours=1
bad neg "billing.overrides.provisioned.shard_hour: expected a price in US dollars as a plain decimal" \
    validate "$scenario" --set billing.overrides.provisioned.shard_hour=-1
bad top "unknown key 'biling'; did you mean 'billing'\?" cost "$scenario" --set biling.month_hours=1
bad noscen "cost needs a scenario file" cost
bad out "cost does not take --out" cost "$scenario" --out "$tmp/o"
[ -e "$tmp/o" ] && fail "cost --out created a folder"

# Prices and a month within their bounds whose bill passes what kdsim counts ($1 billion
# a line, in nano-dollars) are refused with a message, by run and cost
# alike, and nothing is written (it once stopped on an assertion).
cat >"$tmp/dear.yaml" <<'EOF'
name: dear
duration: 1m
stream: {mode: on_demand_advantage}
producers:
  - {name: p, rate: 1 records/s, record_size: 1 KiB}
billing:
  month_hours: 2624
  overrides: {on_demand_advantage: {commitment_written: 1000, data_written: 1000}}
EOF
for cmd in cost run; do
    k dear 2 $cmd "$tmp/dear.yaml" --json &&
        { grep -qF "kdsim: a cost passes \$1 billion a line, more than kdsim counts" "$tmp/dear.err" ||
            fail "$cmd of a bill past \$1 billion: $(cat "$tmp/dear.err")"; }
    [ -s "$tmp/dear.out" ] && fail "$cmd of a bill past \$1 billion printed a report"
done

# An overridden Advantage commitment is a rate, not a price: the text shows it in MiB/s
# (it showed "$3.00"), the JSON gives each override its unit.
sed 's/month_hours: 2624/month_hours: 720/; s/{commitment_written: 1000, data_written: 1000}/{commitment_written: 3}/' \
    "$tmp/dear.yaml" >"$tmp/commit.yaml"
k commit 0 cost "$tmp/commit.yaml" &&
    { grep -qF "overridden: on_demand_advantage.commitment_written = 3 MiB/s of writes committed" \
        "$tmp/commit.out" || fail "the commitment override as shown: $(grep overridden "$tmp/commit.out")"; }
k commitjson 0 cost "$tmp/commit.yaml" --json &&
    { python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["prices"]["overrides"]
assert o == [{"price": "on_demand_advantage.commitment_written", "value": 3.0,
              "unit": "MiB/s of writes committed"}], o' "$tmp/commitjson.out" ||
        fail "the commitment override in the JSON"; }

cli_finish cli_cost
