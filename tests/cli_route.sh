#!/usr/bin/env bash
# cli_route.sh - `kdsim route` maps partition keys to hash keys (MD5, 128 bits) and to
# the shards of a new stream of N evenly split shards; bad input exits with status 2.
#
# usage: bash tests/cli_route.sh KDSIM SOURCE_DIR
set -u

. "$(dirname "$0")/testcli.sh"
cli_start "$@"
cli_tmpdir

# route ARGS... -> rc, and $tmp/out, $tmp/err
route() {
    "$kdsim" route "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# row KEY -> the fields of KEY's line in $tmp/out: hex, shard (empty if absent)
row() {
    hex='' shard=''
    local k h _dec s
    while read -r k h _dec s; do
        if [ "$k" = "$1" ]; then
            hex=$h shard=$s
            return 0
        fi
    done <"$tmp/out"
    return 1
}

# --- the documented examples -----------------------------------------------------------
for args in "--shards 4 s-41 s-90" "s-41 s-90" "s-41 --shards 4 s-90"; do
    # shellcheck disable=SC2086 # split on purpose
    route $args
    if [ "$rc" -ne 0 ]; then
        fail "route $args: exit status $rc, expected 0"
        sed 's/^/    stderr: /' "$tmp/err"
        continue
    fi
    [ -s "$tmp/err" ] && fail "route $args: printed on stderr: $(head -c 300 "$tmp/err")"
    IFS= read -r header <"$tmp/out"
    case $header in
    "partition key"*"hash key (hex)"*"hash key (decimal)"*shard) ;;
    *) fail "route $args: unexpected header line: $header" ;;
    esac
    row s-41 || fail "route $args: no line for s-41"
    [ "$shard" = shardId-000000000001 ] || fail "route $args: s-41 in '$shard', expected shardId-000000000001"
    [[ $hex == 6e19676a* ]] || fail "route $args: s-41 hash key '$hex', expected 6e19676a..."
    row s-90 || fail "route $args: no line for s-90"
    [ "$shard" = shardId-000000000002 ] || fail "route $args: s-90 in '$shard', expected shardId-000000000002"
    [[ $hex == b772d1fa* ]] || fail "route $args: s-90 hash key '$hex', expected b772d1fa..."
done

# --- every row against an independent MD5 and even split ---------------------------------
# Keys with spaces are left out: the output is space-separated.
keys=(a s-0 s-41 s-90 user-12345 "$(printf 'k%.0s' {1..256})" é日本 -x 0 zz)
# One python3 for all shard counts: its start-up is the slowest part of this test.
for n in 1 3 4 7 16 10000; do
    route --shards "$n" "${keys[@]}"
    if [ "$rc" -ne 0 ]; then
        fail "route --shards $n: exit status $rc, expected 0: $(head -c 300 "$tmp/err")"
    fi
    mv "$tmp/out" "$tmp/route.$n"
done
if ! python3 - "$tmp" "${keys[@]}" <<'EOF'; then
import hashlib, sys
tmp, keys = sys.argv[1], sys.argv[2:]
ok = True
for n in (1, 3, 4, 7, 16, 10000):
    lines = open(f"{tmp}/route.{n}", encoding="utf-8").read().splitlines()
    rows = [l.split() for l in lines[1:]]
    if len(rows) != len(keys):
        print(f"FAIL route --shards {n}: {len(rows)} rows for {len(keys)} keys")
        ok = False
        continue
    step = 2**128 // n
    for key, r in zip(keys, rows):
        h = int(hashlib.md5(key.encode("utf-8")).hexdigest(), 16)
        shard = min(h // step, n - 1)
        want = [key, f"{h:032x}", str(h), f"shardId-{shard:012d}"]
        if r != want:
            print(f"FAIL route --shards {n}: got {r}, expected {want}")
            ok = False
sys.exit(0 if ok else 1)
EOF
    failed=$((failed + 1))
fi

# --- bad input: exit 2, a message on stderr, nothing on stdout ---------------------------
# bad_usage WHAT PATTERN ARGS...: route ARGS must fail with status 2 and PATTERN on stderr
bad_usage() {
    local what=$1 pattern=$2
    shift 2
    route "$@"
    [ "$rc" -eq 2 ] || fail "route $what: exit status $rc, expected 2"
    grep -q -e "$pattern" "$tmp/err" ||
        fail "route $what: stderr lacks '$pattern': $(head -c 300 "$tmp/err")"
    [ -s "$tmp/out" ] && fail "route $what: printed on stdout: $(head -c 300 "$tmp/out")"
}
shards_msg='^kdsim: --shards: expected a whole number from 1 to 10000, got'
for v in 0 10001 -1 abc 4x " 4" 1e3 99999999999999999999999; do
    bad_usage "--shards '$v'" "$shards_msg \"$v\"\$" --shards "$v" s-41
done
bad_usage "--shards ''" '^kdsim: --shards needs a value, got an empty one' --shards "" s-41
bad_usage "--shards (no value)" '^kdsim: --shards needs a value' s-41 --shards
bad_usage "(no key)" '^kdsim: route needs at least one partition key' --shards 4
bad_usage "--shardz 4" '^kdsim: unknown option --shardz' --shardz 4 s-41

# A key must have 1 to 256 characters.
for key in "" "$(printf 'k%.0s' {1..257})"; do
    route s-41 "$key"
    [ "$rc" -eq 2 ] || fail "route key of ${#key} characters: exit status $rc, expected 2"
    grep -q 'partition key has 1 to 256 characters' "$tmp/err" ||
        fail "route key of ${#key} characters: stderr: $(head -c 300 "$tmp/err")"
done

# Regression checks for bugs found and fixed (see the git log).
if true; then
    route s-41 "$(printf 'k%.0s' {1..257})"
    [ -s "$tmp/out" ] && fail "route with a bad key: printed on stdout: $(head -c 300 "$tmp/out")"
    route "$(printf 'é%.0s' {1..200})"
    [ "$rc" -eq 0 ] || fail "route key of 200 'é': exit status $rc, expected 0: $(cat "$tmp/err")"
fi

cli_finish cli_route
