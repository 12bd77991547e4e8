#!/usr/bin/env bash
# Line coverage of spec/, reference/, optimized/ and xs3/ from the committed corpora alone: the
# replay mains, built with clang's source-based coverage (the coverage preset), replay
# fuzz/corpus/<target>/ and fuzz/regressions/<target>/; llvm-profdata-14 merges the profiles and
# llvm-cov-14 reports. Prints one line-coverage figure per folder against its target (spec/ and
# xs3/ 90%, reference/ and optimized/ 80%) and exits 1 if one is below.
#   fuzz/coverage.sh                 # the report; per-file detail in build/coverage/report.txt
#   fuzz/coverage.sh --html          # also an HTML report in build/coverage/html/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
cmake --preset coverage >/dev/null
cmake --build --preset coverage >/dev/null
out=build/coverage/profiles
rm -rf "$out" && mkdir -p "$out"
mapfile -t targets <build/coverage/fuzz/targets.txt  # the list fuzz/CMakeLists.txt keeps
objects=()  # llvm-cov: the first binary, then -object for each other
for t in "${targets[@]}"; do
  folders=(fuzz/corpus/$t)
  [ -d fuzz/regressions/$t ] && folders+=(fuzz/regressions/$t)
  LLVM_PROFILE_FILE=$out/$t.profraw build/coverage/fuzz/${t}_replay "${folders[@]}"
  [ ${#objects[@]} -eq 0 ] && objects=(build/coverage/fuzz/${t}_replay) || objects+=(-object build/coverage/fuzz/${t}_replay)
done
llvm-profdata-14 merge -sparse "$out"/*.profraw -o "$out/merged.profdata"
llvm-cov-14 report -instr-profile="$out/merged.profdata" "${objects[@]}" spec reference optimized xs3 \
  >build/coverage/report.txt
if [ "${1:-}" = --html ]; then
  llvm-cov-14 show -instr-profile="$out/merged.profdata" "${objects[@]}" -format=html \
    -output-dir=build/coverage/html spec reference optimized xs3
  echo "HTML: build/coverage/html/index.html"
fi
# Per file: columns 8 and 9 of llvm-cov's table are the lines and the missed lines.
awk -v root="$PWD/" '
  $1 ~ /\.(cpp|hpp|h)$/ {
    file = $1; sub(root, "", file); split(file, part, "/"); folder = part[1]
    lines[folder] += $8; missed[folder] += $9
  }
  END {
    target["spec"] = 90; target["xs3"] = 90; target["reference"] = 80; target["optimized"] = 80
    status = 0
    printf "%-10s %8s %8s %8s %8s\n", "folder", "lines", "missed", "covered", "target"
    n = split("spec xs3 reference optimized", order, " ")
    for (i = 1; i <= n; ++i) {
      f = order[i]; cover = lines[f] ? 100 * (lines[f] - missed[f]) / lines[f] : 0
      verdict = cover >= target[f] ? "" : "  BELOW TARGET"
      if (cover < target[f]) status = 1
      printf "%-10s %8d %8d %7.1f%% %7d%%%s\n", f, lines[f], missed[f], cover, target[f], verdict
    }
    exit status
  }' build/coverage/report.txt
