#!/usr/bin/env bash
# The benchmark: install what is missing, build poolspec_bench (g++, RelWithDebInfo), and run
# it. It prints a table and writes JSON lines to bench-results/bench.jsonl (or --json PATH).
# Arguments are passed on, e.g. --only large_avg7x7, --rounds 8, --quick, --no-reference.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >&2
cmake --preset gcc >/dev/null
cmake --build --preset gcc --target poolspec_bench >&2
exec ./build/gcc/optimized/bench/poolspec_bench "$@"
