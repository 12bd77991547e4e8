#!/usr/bin/env bash
# The README's first command: install what is missing, build (g++), then the main job -- the spec
# over the seed documents' examples, and `poolspec certify`: every available backend on the ci
# suite (matrix, certify-out/report.json, certify-out/junit.xml). With arguments, runs
# `poolspec ARGS` instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >&2
cmake --preset gcc >/dev/null
cmake --build --preset gcc --target poolspec >&2   # with the oneDNN and XNNPACK adapters
if [ $# -gt 0 ]; then
  exec ./build/gcc/cli/poolspec "$@"
fi
status=0
./build/gcc/cli/poolspec || status=$?
echo
./build/gcc/cli/poolspec certify || status=$?
exit "$status"
