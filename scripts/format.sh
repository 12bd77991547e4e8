#!/usr/bin/env bash
# Lays out every C and C++ source file git tracks as .clang-format says (clang-format 14), in
# place; with --check, changes nothing and lists the files that differ (exit 1 if any does).
# Files named after the options are taken instead of git's list. CTest runs the check (label
# format), and once on a file laid out otherwise, which it must report.
set -euo pipefail
cd "$(dirname "$0")/.."
# One version: each release lays some code out differently.
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ] || ! "$format" --version | grep -q "version 14\."; then
  echo "format.sh: clang-format 14 is not installed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
fi
if $check; then
  status=0
  for f in "${files[@]}"; do
    if ! "$format" --style=file "$f" | cmp -s - "$f"; then
      echo "not laid out by .clang-format: $f (scripts/format.sh fixes it)"
      status=1
    fi
  done
  exit $status
fi
"$format" --style=file -i "${files[@]}"
