#!/usr/bin/env bash
# The README's first command: install what is missing, build (g++), and run `poolspec` --
# with no arguments, the main job; any arguments are passed to poolspec.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >&2
cmake --preset gcc >/dev/null
cmake --build --preset gcc --target poolspec >&2
exec ./build/gcc/certify/poolspec "$@"
