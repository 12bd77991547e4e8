#!/usr/bin/env bash
# The README's second command: install what is missing, then build and run the whole test
# suite twice -- with g++ (RelWithDebInfo) and with clang++ under ASan + UBSan (no recovery).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
for preset in gcc clang-asan; do
  echo "== $preset: configure, build, test"
  cmake --preset "$preset" -DPOOLSPEC_REQUIRE_ADAPTERS=ON >/dev/null  # the installed libraries' adapters
  cmake --build --preset "$preset"
  ctest --preset "$preset"
done
echo "== all tests passed with g++ and with clang++ (ASan + UBSan)"
