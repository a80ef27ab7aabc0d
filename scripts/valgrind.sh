#!/usr/bin/env bash
# scripts/valgrind.sh - run every Check suite under valgrind's memcheck (issue 9): no
# invalid access, no use of uninitialised memory, no definite leak.
# usage: bash scripts/valgrind.sh BUILD_DIR   (a build without sanitizers)
set -u
build=${1:-build}
fail=0
n=0
for t in "$build"/tests/check_*; do
  [ -x "$t" ] || continue
  n=$((n + 1))
  log=$(mktemp)
  # Check forks a process per test (tests that expect an abort need it); valgrind
  # follows the children, and a child's memcheck error fails that test, which fails
  # the suite.
  if ! CK_DEFAULT_TIMEOUT=600 valgrind -q --trace-children=yes --error-exitcode=97 \
       --leak-check=full --errors-for-leak-kinds=definite "$t" >"$log" 2>&1 ||
     grep -q "ERROR SUMMARY: [1-9]\|definitely lost: [1-9]" "$log"; then
    echo "valgrind: $(basename "$t") FAILED"
    tail -n 40 "$log"
    fail=1
  fi
  rm -f "$log"
done
echo "valgrind: $n suites, $([ $fail -eq 0 ] && echo "no errors" || echo "errors above")"
exit $fail
