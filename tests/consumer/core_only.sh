#!/usr/bin/env bash
# Builds poolspec's core alone -- spec/, reference/ and xs3/, which need fmt, GMP and OpenMP --
# with every other part off and every other dependency hidden from CMake (so a find_package that
# the core does not need fails the configure), installs it, and builds and runs the consumer
# project against that install (run.sh).
# Usage: core_only.sh <poolspec source dir> <scratch dir> <c compiler> <c++ compiler>
set -euo pipefail
source=$1 scratch=$2 cc=$3 cxx=$4
rm -rf "$scratch"
hidden=()
for package in hwy Z3 dnnl XNNPACK Torch CLI11 nlohmann_json ONNX Protobuf doctest rapidcheck pybind11 Python; do
  hidden+=("-DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON")
done
cmake -S "$source" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DPOOLSPEC_BUILD_OPTIMIZED=OFF -DPOOLSPEC_BUILD_PROOFS=OFF -DPOOLSPEC_BUILD_CLI=OFF \
  -DPOOLSPEC_BUILD_ADAPTERS=OFF -DPOOLSPEC_BUILD_BENCH=OFF -DPOOLSPEC_BUILD_TESTS=OFF -DPOOLSPEC_BUILD_PYTHON=OFF -DBUILD_TESTING=OFF \
  -DPOOLSPEC_WERROR=OFF --no-warn-unused-cli \
  "${hidden[@]}" >/dev/null
cmake --build "$scratch/build" --target poolspec_spec poolspec_reference >/dev/null
bash "$(dirname "$0")/run.sh" "$scratch/build" "$scratch/consumer" "$cc" "$cxx"
