#!/usr/bin/env bash
# The README's examples run as documented: every command line of its ```sh blocks that uses
# poolspec's own files is run (from a folder where the repository's paths resolve), exits 0 or
# 1 (diff's "some framework disagrees"), and prints nothing wider than 100 columns but a problem
# string on a line of its own (never broken: it is copied into other commands).
# Lines that name the user's own files (libmine.so, model.onnx) and the two scripts (which build
# and test, this test among them) are skipped; certify runs the smoke suite (the suites are the
# certify tests' business; this test is the README's).
# Usage: readme_examples.sh path/to/poolspec path/to/README.md
set -u
poolspec=$1 readme=$2
source_dir=$(cd "$(dirname "$readme")" && pwd)
source "$(dirname "$0")/checks.sh"
ran=0

mkdir "$work/bin"
ln -s "$poolspec" "$work/bin/poolspec"
for d in check tests; do ln -s "$source_dir/$d" "$work/$d"; done
cd "$work" || exit 1

# The command lines of the ```sh blocks, continuation lines joined.
commands=$(awk '
  /^```sh$/ { inside = 1; next }
  /^```$/ { inside = 0; next }
  inside {
    line = line $0
    if (line ~ /\\$/) { sub(/\\$/, "", line); next }
    print line; line = ""
  }' "$readme")

while IFS= read -r line; do
  case $line in
    '' | '#'*) continue ;;
    *libmine.so* | *model.onnx* | ./scripts/*) continue ;;
  esac
  # NumPy may be missing: the same .npy (float32 0..15, shape 1,1,4,4) written without it.
  if [[ $line == python3*numpy* ]] && ! python3 -c 'import numpy' 2>/dev/null; then
    { printf '\x93NUMPY\x01\x00v\x00'
      printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 4, 4), }"
      for v in 00000000 0000803f 00000040 00004040 00008040 0000a040 0000c040 0000e040 \
               00000041 00001041 00002041 00003041 00004041 00005041 00006041 00007041; do
        printf "\\x${v:0:2}\\x${v:2:2}\\x${v:4:2}\\x${v:6:2}"
      done; } >x.npy
    continue
  fi
  [[ $line == "poolspec certify"* && $line != *--suite* ]] && line="${line%%#*} --suite smoke"
  ran=$((ran + 1))
  out=$(PATH="$work/bin:$PATH" bash -c "$line" 2>&1)
  status=$?
  if [ "$status" -gt 1 ]; then fail "exit $status: $line"; echo "$out" | head -5; continue; fi
  wide=$(awk 'length > 100 && !/^ *(avg|max):[^ ]*$/' <<<"$out")
  [ -z "$wide" ] || { fail "output wider than 100 columns: $line"; echo "$wide" | head -3; }
done <<<"$commands"

[ "$ran" -ge 9 ] || fail "only $ran README commands found"
if [ "$failures" -ne 0 ]; then echo "$failures README example(s) failed"; exit 1; fi
echo "README: $ran example commands ran, every output within 100 columns"
