#!/usr/bin/env bash
# How fast `poolspec certify` runs, side by side with a baseline build of another commit, in
# interleaved rounds on this machine: oneDNN's ci suite, and `poolspec certify` with no arguments
# (every available backend, ci suite), each also with --jobs 2 for this build. Prints each
# round's seconds and, per workload, the median and the baseline's median over it.
#
#   scripts/bench-certify.sh [BASELINE_COMMIT] [ROUNDS]
#
# BASELINE_COMMIT defaults to e12425a, the last commit with the fork-per-call runner; it is
# built once (g++, RelWithDebInfo, the poolspec target and its adapters) under
# build/bench-baseline-<commit>/. ROUNDS defaults to 3. A benchmark reports; it asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-e12425a}
rounds=${2:-3}
root=$PWD
baseline=$root/build/bench-baseline-$base
# The baseline's poolspec: build/cli/poolspec, or build/certify/poolspec in commits before cli/.
old_program() {
  for p in "$baseline/build/cli/poolspec" "$baseline/build/certify/poolspec"; do
    [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}
if ! old_program >/dev/null; then
  echo "== building the baseline $base in $baseline" >&2
  rm -rf "$baseline/src" && mkdir -p "$baseline/src"
  git archive "$base" | tar -x -C "$baseline/src"
  cmake -S "$baseline/src" -B "$baseline/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ >/dev/null
  cmake --build "$baseline/build" --target poolspec >&2
fi
cmake --preset gcc >/dev/null
cmake --build --preset gcc --target poolspec >&2
new=$root/build/gcc/cli/poolspec
old=$(old_program) || { echo "bench-certify.sh: the baseline $base built no poolspec" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# name | program | arguments
workloads=(
  "onednn ci (baseline)|$old|--backend onednn"
  "onednn ci|$new|--backend onednn"
  "onednn ci, --jobs 2|$new|--backend onednn --jobs 2"
  "no arguments (baseline)|$old|"
  "no arguments|$new|"
  "no arguments, --jobs 2|$new|--jobs 2"
)
declare -A times
for round in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    IFS='|' read -r name program arguments <<<"$w"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$scratch" && "$program" certify $arguments --out "$scratch/out" >/dev/null) || true
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
    times[$name]="${times[$name]:-} $seconds"
    printf 'round %d  %-26s %7.2f s\n' "$round" "$name" "$seconds"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
printf '%-26s %9s %12s\n' workload median "baseline / it"
for w in "${workloads[@]}"; do
  IFS='|' read -r name _ _ <<<"$w"
  m=$(echo "${times[$name]}" | median)
  case $name in
    onednn*) b=$(echo "${times["onednn ci (baseline)"]}" | median) ;;
    *) b=$(echo "${times["no arguments (baseline)"]}" | median) ;;
  esac
  printf '%-26s %7.2f s %11.1fx\n' "$name" "$m" "$(awk -v b="$b" -v m="$m" 'BEGIN {print b / m}')"
done
