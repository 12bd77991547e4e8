#!/usr/bin/env bash
# Reruns every SMT-LIB query that `poolspec prove --emit-smt2` wrote through the standalone z3
# command and checks each answer against the one its file name expects (<name>.unsat.smt2 or
# <name>.sat.smt2), so a formula change shows up as a changed query and a failed recheck.
# Usage: recheck_smt2.sh path/to/z3 folder
set -u
z3=$1
folder=$2
shopt -s nullglob
files=("$folder"/*.smt2)
if [ ${#files[@]} -eq 0 ]; then echo "no .smt2 files in $folder"; exit 1; fi
check() {
  local file=$1 expected answer
  expected=$(basename "$file" .smt2); expected=${expected##*.}
  answer=$("$2" -T:300 "$file" 2>&1 | head -n 1)  # a limit for a runaway search, not a time check
  if [ "$answer" = "$expected" ]; then echo "ok      $(basename "$file")"; else echo "FAILED  $(basename "$file"): z3 says '$answer', expected '$expected'"; fi
}
export -f check
results=$(printf '%s\n' "${files[@]}" | xargs -P 2 -I{} bash -c 'check "$1" "$2"' _ {} "$z3")
echo "$results"
failed=$(grep -c '^FAILED' <<<"$results")
echo "${#files[@]} queries rechecked with $("$z3" --version), $failed failed"
[ "$failed" -eq 0 ]
