#!/usr/bin/env bash
# Runs every fuzz target under libFuzzer (ASan + UBSan, no recovery) for a time budget, then the
# negative target, which must find its mutant. Fails if any target crashes or finds a bug.
#
#   FUZZ_SECONDS=60 fuzz/run.sh            # every target (default 60 s each)
#   FUZZ_SECONDS=600 fuzz/run.sh fuzz_npy  # some targets
#
# Environment: FUZZ_SECONDS (per target, default 60), FUZZ_JOBS (targets run at once, default 2,
# one per core), FUZZ_OUT (default build/fuzz/run), FUZZ_PRESET (the CMake preset whose build
# fuzzes: default fuzz, RelWithDebInfo; clang-asan, the test suite's sanitized -O1 build, links the
# same targets with libFuzzer, and CI fuzzes from it rather than build a third time). Per target it prints exec/s, coverage
# (cov: edges, ft: features), corpus size and new units. Each target starts from its committed
# seed corpus (fuzz/corpus/<target>/, read only) and a working corpus in FUZZ_OUT/corpus/<target>/.
# A crash leaves its input in FUZZ_OUT/artifacts/<target>/ with the target's report beside it
# (<input>.txt: the problem string, the coordinate, expected and got) and fails the run.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
out=${FUZZ_OUT:-$root/build/fuzz/run}
preset=${FUZZ_PRESET:-fuzz}

bash scripts/install-deps.sh >/dev/null
cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset" >/dev/null || { echo "fuzz/run.sh: build failed"; exit 1; }
bin=$root/build/$preset/fuzz
[ -x "$bin/fuzz_engines" ] || { echo "fuzz/run.sh: preset $preset does not link the libFuzzer targets (POOLSPEC_FUZZ_ENGINE)"; exit 1; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets <"$bin/targets.txt"  # the list fuzz/CMakeLists.txt keeps
# OpenMP workers sleep when idle instead of spinning (the engines' 2-thread runs would otherwise
# take the core another target runs on).
export OMP_WAIT_POLICY=passive KMP_BLOCKTIME=0

# The flags of fuzz/<target>.options ([libfuzzer] key = value lines; a dict is relative to fuzz/).
option_flags() {
  local file=$root/fuzz/$1.options
  [ -f "$file" ] || return 0
  sed -n '/^\[libfuzzer\]/,/^\[/p' "$file" | grep -E '^[a-z_]+ *=' | while IFS='=' read -r key value; do
    key=$(echo "$key" | tr -d ' '); value=$(echo "$value" | tr -d ' ')
    [ "$key" = dict ] && value=$root/fuzz/$value
    printf -- '-%s=%s\n' "$key" "$value"
  done
}

run_target() {
  local t=$1 log=$out/logs/$1.log
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  mapfile -t flags < <(option_flags "$t")
  "$bin/$t" "${flags[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$t/" "$out/corpus/$t" "$root/fuzz/corpus/$t" >"$log" 2>&1
  local status=$?
  for artifact in "$out/artifacts/$t"/*; do
    [ -f "$artifact" ] && [[ "$artifact" != *.txt ]] || continue
    "$bin/${t}_replay" "$artifact" >"$artifact.txt" 2>&1  # the target's own report of the input
  done
  echo "$status" >"$out/logs/$t.status"
}

echo "== fuzzing ${#targets[@]} targets for ${seconds} s each, $jobs at a time (logs: $out/logs)"
running=0
for t in "${targets[@]}"; do
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed=0
printf '%-22s %8s %10s %8s %10s %8s  %s\n' target exec/s executions cov features new result
for t in "${targets[@]}"; do
  log=$out/logs/$t.log
  stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
  done_line=$(grep -E '^#[0-9]+\s+DONE' "$log" | tail -1)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  artifacts=$(find "$out/artifacts/$t" -type f ! -name '*.txt' | wc -l)
  result=ok
  if [ "$(cat "$out/logs/$t.status")" != 0 ] || [ "$artifacts" -gt 0 ]; then result="FAILED ($artifacts artifacts)"; failed=1; fi
  printf '%-22s %8s %10s %8s %10s %8s  %s\n' "$t" "$(stat average_exec_per_sec)" "$(stat number_of_executed_units)" \
    "${cov:--}" "${ft:--}" "$(stat new_units_added)" "$result"
done
for report in "$out"/artifacts/*/*.txt; do
  [ -f "$report" ] || continue
  echo "== ${report%.txt}"; grep -a -A8 '^== fuzz_.*: FAILURE' "$report" | head -12
done

if [ ${#@} -eq 0 ]; then
  echo "== the negative target must find its mutant (ctest -L fuzz)"
  ctest --test-dir "build/$preset" -L '^fuzz$' --output-on-failure || failed=1
fi
[ "$failed" -eq 0 ] && echo "== fuzz/run.sh: no crash, no finding" || echo "== fuzz/run.sh: FAILED"
exit "$failed"
