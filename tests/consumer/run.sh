#!/usr/bin/env bash
# Installs poolspec from a build folder into a fresh prefix, then builds the consumer project
# against the installed package (find_package(poolspec)) and runs it; then moves the prefix and
# runs the installed poolspec from there: it must find its worker, adapters and waivers relative
# to itself, not in the build tree.
# Usage: run.sh <poolspec build dir> <scratch dir> <c compiler> <c++ compiler> [extra flags]
set -euo pipefail
build=$1 scratch=$2 cc=$3 cxx=$4 flags=${5:-}
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
# The package asks for C++20 by a compile feature and passes on no warning flags of poolspec's.
targets=$(cat "$scratch"/prefix/lib*/cmake/poolspec/poolspecTargets*.cmake)
grep -q 'INTERFACE_COMPILE_FEATURES "cxx_std_20"' <<<"$targets" || { echo "no cxx_std_20 in the package"; exit 1; }
if grep -q -e warnings -e '-Werror' <<<"$targets"; then echo "the package exports poolspec's warnings"; exit 1; fi
cmake -S "$(dirname "$0")" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$scratch/build"
"$scratch/build/consumer"
"$scratch/build/consumer_c"

# The installed command, relocated: every file it uses comes from the moved prefix.
if [ -x "$scratch/prefix/bin/poolspec" ]; then
  mv "$scratch/prefix" "$scratch/moved"
  moved=$(cd "$scratch/moved" && pwd)
  "$moved/bin/poolspec" certify --list >"$scratch/list.txt"
  if grep -F '.so' "$scratch/list.txt" | grep -v -F "$moved/lib"; then
    echo "an adapter listed outside the installed prefix $moved"; exit 1
  fi
  (cd "$scratch" && "$moved/bin/poolspec" certify --backend reference --suite smoke --filter shapes/1d:regular \
     --out "$scratch/certify-out" >/dev/null)
  grep -q -F "waivers=$moved/share/poolspec/waivers.txt" "$scratch/certify-out/report.json" ||
    { echo "the installed poolspec did not read its own waivers"; exit 1; }
  echo "installed poolspec: worker, adapters and waivers found in $moved"
fi
