#!/usr/bin/env bash
# Builds the fuzz targets in the OSS-Fuzz / ClusterFuzzLite convention: honours CC, CXX, CFLAGS,
# CXXFLAGS (the sanitizer and coverage flags, applied to all of the code under test),
# LIB_FUZZING_ENGINE (the engine's link flags) and OUT (where the binaries go), and puts beside
# each target its .options, its .dict and <target>_seed_corpus.zip (the committed corpus and
# regressions), which the runner picks up by name. .clusterfuzzlite/build.sh calls this.
# Checked here with the variables set by hand:
#   CC=clang CXX=clang++ CFLAGS="-fsanitize=address,fuzzer-no-link" CXXFLAGS="-fsanitize=address,fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out fuzz/build-ossfuzz.sh
set -euo pipefail
: "${OUT:?OUT: the folder for the fuzz targets}"
: "${LIB_FUZZING_ENGINE:?LIB_FUZZING_ENGINE: the fuzzing engine link flags, e.g. -fsanitize=fuzzer}"
src=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$src/build}/ossfuzz

# Build type None: only the caller's flags (OSS-Fuzz chooses -O1 -gline-tables-only itself).
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_C_FLAGS="${CFLAGS:-}" -DCMAKE_CXX_FLAGS="${CXXFLAGS:-}" \
  -DPOOLSPEC_ONLY_FUZZERS=ON -DPOOLSPEC_WERROR=OFF -DBUILD_TESTING=OFF \
  -DPOOLSPEC_FUZZ_ENGINE="$LIB_FUZZING_ENGINE"
mapfile -t targets <"$work/fuzz/targets.txt"  # the list fuzz/CMakeLists.txt keeps
cmake --build "$work" --target "${targets[@]}"

mkdir -p "$OUT"
for t in "${targets[@]}"; do
  cp "$work/fuzz/$t" "$OUT/$t"
  [ -f "$src/fuzz/$t.options" ] && cp "$src/fuzz/$t.options" "$OUT/"
  [ -f "$src/fuzz/$t.dict" ] && cp "$src/fuzz/$t.dict" "$OUT/"
  folders=()
  for f in "$src/fuzz/corpus/$t" "$src/fuzz/regressions/$t"; do [ -d "$f" ] && folders+=("$f"); done
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "$(mktemp -d)" && for f in "${folders[@]}"; do cp "$f"/* . 2>/dev/null || true; done &&
     cmake -E tar cf "$OUT/${t}_seed_corpus.zip" --format=zip -- *)
done
echo "build-ossfuzz: ${#targets[@]} targets in $OUT"
