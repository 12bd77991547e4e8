#!/usr/bin/env bash
# Runs a fuzz target (or its replay) that must find a bug: it must exit non-zero and print the
# target's failure report ("== fuzz_...: FAILURE" with the problem string). Used for the negative
# target, whose mutant engine the differential oracle has to catch.
# Usage: expect_failure.sh COMMAND [ARGS...]
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1
status=$?
if [ "$status" -ne 0 ] && grep -q '^== fuzz_.*: FAILURE' "$log"; then
  grep -A12 '^== fuzz_.*: FAILURE' "$log" | head -20
  echo "expect_failure: found, as expected (exit $status)"
  exit 0
fi
tail -20 "$log"
echo "expect_failure: the mutant was NOT found (exit $status)"
exit 1
