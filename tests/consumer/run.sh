#!/usr/bin/env bash
# Installs poolspec from a build folder into a fresh prefix, then builds the consumer project
# against the installed package (find_package(poolspec)) and runs it.
# Usage: run.sh <poolspec build dir> <scratch dir> <c compiler> <c++ compiler> [extra flags]
set -euo pipefail
build=$1 scratch=$2 cc=$3 cxx=$4 flags=${5:-}
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$(dirname "$0")" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$scratch/build"
"$scratch/build/consumer"
"$scratch/build/consumer_c"
