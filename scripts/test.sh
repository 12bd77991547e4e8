#!/usr/bin/env bash
# The README's second command: install what is missing, then build and run the whole test
# suite twice -- with g++ (RelWithDebInfo) and with clang++ under ASan + UBSan (no recovery).
# Each phase prints how long it took, so a CI log shows where the time goes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
phase_start=$SECONDS
phase_done() { echo "== $1: $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
for preset in gcc clang-asan; do
  echo "== $preset: configure, build, test"
  cmake --preset "$preset" -DPOOLSPEC_REQUIRE_ADAPTERS=ON >/dev/null  # the installed libraries' adapters
  cmake --build --preset "$preset"
  phase_done "$preset: configure and build"
  ctest --preset "$preset"
  phase_done "$preset: tests"
done
echo "== all tests passed with g++ and with clang++ (ASan + UBSan)"
