// fuzz_engines: the in-tree engines against the spec (differential).
//
// Targets: the reference engine, the optimized engine (on the SIMD target the input picks, so
// every compiled target is exercised), the optimized engine through the backend ABI (1-thread
// inputs), and each kernel of its list on its own (those that accept the problem besides the one
// the optimized engine dispatches to), in NCHW and NHWC, at 1 and 2 threads; and the spec's
// explain() against its evaluate().
// Input: FuzzedDataProvider bytes decoded into a bounded Problem (fuzz_input.hpp), then its
// input tensor.
// Oracle:
//   - the spec (evaluate, exact) is the truth. Every engine that accepts the problem must match
//     it within the bound the engine declares (compare_output: bit-exact for max and integers);
//     run_engine poisons around the input and guards after the output, so an out-of-bounds read
//     or write, or an unwritten element, fails too;
//   - all must refuse or none (simdjson's rule): when validate() refuses the problem, every engine
//     must refuse it (supports and run, before touching a buffer); when it accepts, every engine
//     that claims the whole space (reference, optimized) must accept;
//   - explain() of one output element gives evaluate()'s value and index.
// On a failure: the problem string, the coordinate, expected and got, a pairwise table of the
// engines' outputs, then abort().
// Built with POOLSPEC_FUZZ_MUTANT it is the negative target: a mutant engine (a wrong border
// divisor) joins the list, and the target must find it.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz_input.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/engine_check.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/optimized/mutants.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::fuzz {
namespace {

struct EngineUnderTest {
  const Engine* engine;
  bool whole_space;  // claims every valid problem (must not refuse one)
  const optimized::KernelInfo* kernel = nullptr;  // a single kernel of the list, run on its own
  bool one_thread_only = false;                   // run on the 1-thread inputs only
};

std::vector<EngineUnderTest> engines_under_test() {
  static const std::vector<std::unique_ptr<optimized::OptimizedEngine>> kernels = [] {
    std::vector<std::unique_ptr<optimized::OptimizedEngine>> v;
    for (const optimized::KernelInfo* k : optimized::kernel_list())
      v.push_back(std::make_unique<optimized::OptimizedEngine>(k->name));
    return v;
  }();
  // The optimized engine once more through the backend ABI (backend.h): its problem and
  // accumulation cross the C structs both ways, as a certified library's do. What it tests is
  // the crossing, not the threads: on the 1-thread inputs only (half the cost).
  static const AbiEngine optimized_through_abi(*optimized::backend());
  std::vector<EngineUnderTest> list{{&reference::engine(), true},
                                    {&optimized::engine(), true},
                                    {&optimized_through_abi, true, nullptr, true}};
  // Each kernel on its own, where dispatch did not pick it, on the 1-thread inputs: the kernels'
  // threading is the dispatched engine's here and every kernel's in the property tests, and
  // three kernels accept most averages.
  for (size_t i = 0; i < kernels.size(); ++i)
    list.push_back({kernels[i].get(), false, optimized::kernel_list()[i], true});
#ifdef POOLSPEC_FUZZ_MUTANT
  static const optimized::OptimizedEngine mutant("", optimized::Mutation::border_divisor);
  list.push_back({&mutant, true});
#endif
  return list;
}

[[noreturn]] void fail(const Problem& p, const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_engines: FAILURE\nproblem: %s\n%s\n", format_problem(p).c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string coordinate_text(const std::vector<int64_t>& c) {
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s;
}

// Elements (values or indices) on which two outputs differ bit for bit.
int64_t differing_elements(DType dtype, const Output& a, const Output& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.values.values.size(); ++i) {
    const bool index_differs = !a.indices.empty() && a.indices[i] != b.indices[i];
    if (!same_value(dtype, a.values.values[i], b.values.values[i]) || index_differs) ++n;
  }
  return n;
}

// The pairwise table: for each pair of (spec, engines that ran), the elements that differ bit
// for bit (float averages may differ within their bounds; the verdict is each engine's).
std::string pairwise_table(const Problem& p,
                           const std::vector<std::pair<std::string, Output>>& outputs) {
  std::string t = fmt::format("pairwise: elements differing bit for bit (of {})\n{:>34}",
                              outputs.front().second.values.values.size(), "");
  for (const auto& [name, out] : outputs) t += fmt::format(" {:>12.12}", name);
  t += "\n";
  for (const auto& [row_name, row] : outputs) {
    t += fmt::format("{:>34}", row_name);
    for (const auto& column : outputs)
      t += fmt::format(" {:>12}", differing_elements(p.dtype, row, column.second));
    t += "\n";
  }
  return t;
}

// The explain() of one output element must give evaluate()'s value and index.
void check_explain(const Problem& p, const Tensor& input, const Output& expected,
                   FuzzedDataProvider& in) {
  const size_t count = expected.values.values.size();
  const size_t flat = in.ConsumeIntegralInRange<size_t>(0, count - 1);
  std::vector<int64_t> coordinate(expected.values.shape.size());
  size_t rest = flat;
  for (size_t i = coordinate.size(); i > 0; --i) {
    coordinate[i - 1] = int64_t(rest % size_t(expected.values.shape[i - 1]));
    rest /= size_t(expected.values.shape[i - 1]);
  }
  Result<Explanation> e = explain(p, input, coordinate);
  if (!e)
    fail(p, "explain() refused output " + coordinate_text(coordinate) + ": " + e.error().message);
  const int64_t index = expected.indices.empty() ? -1 : expected.indices[flat];
  if (!same_value(p.dtype, e->result, expected.values.values[flat]) ||
      (e->index && *e->index != index))
    fail(p, fmt::format("explain() of output {} gives {} (index {}), evaluate() {} (index {})",
                        coordinate_text(coordinate), e->result, e->index.value_or(-1),
                        expected.values.values[flat], index));
}

void run_one(FuzzedDataProvider& in) {
  const Problem p = consume_problem(in, ProblemLimits{});
  const Layout layout = in.ConsumeBool() ? Layout::channels_last : Layout::channels_first;
  const int threads = in.ConsumeIntegralInRange<int>(1, 2);
  const std::vector<std::string> targets = optimized::simd_targets();
  const std::string target = targets[in.ConsumeIntegralInRange<size_t>(0, targets.size() - 1)];
  if (!optimized::use_simd_target(target).ok()) fail(p, "cannot select SIMD target " + target);

  const Status valid = validate(p);
  if (!valid) {
    // All refuse: neither supports() nor run() may accept an invalid problem (run is given no
    // buffers: it must refuse before it touches one).
    for (const EngineUnderTest& e : engines_under_test()) {
      if (e.engine->supports(p, layout).ok())
        fail(p, fmt::format("{} supports a problem the spec refuses ({})", e.engine->name(),
                            valid.error().message));
      if (e.engine->run(p, layout, RunArgs{nullptr, nullptr, nullptr, threads}).ok())
        fail(p, fmt::format("{} ran a problem the spec refuses ({})", e.engine->name(),
                            valid.error().message));
    }
    return;
  }

  const Tensor input = consume_input(in, p);
  Result<Output> expected = evaluate(p, input);
  if (!expected) fail(p, "the spec refuses a valid problem: " + expected.error().message);
  check_explain(p, input, *expected, in);

  // The float bound's window sums, once for every engine (an exact evaluation of its own).
  std::optional<Tensor> abs_sums;
  if (p.op == Op::avg && is_float(p.dtype)) {
    Result<Tensor> sums = window_abs_sums(p, input);
    if (!sums) fail(p, "window_abs_sums: " + sums.error().message);
    abs_sums = *std::move(sums);
  }
  std::vector<std::pair<std::string, Output>> outputs{{"spec", *expected}};
  std::string failures;
  const optimized::KernelInfo* dispatched = optimized::select_kernel(p, layout).kernel;
  for (const EngineUnderTest& e : engines_under_test()) {
    if (e.kernel && e.kernel == dispatched)
      continue;  // the optimized engine's own run is that kernel's
    if (e.one_thread_only && threads != 1) continue;
    const std::string name =
        fmt::format("{} ({}, {}T, {})", e.engine->name(), layout_name(layout), threads, target);
    if (Status s = e.engine->supports(p, layout); !s) {
      if (e.whole_space)
        failures += fmt::format("{} refuses a valid problem: {}\n", name, s.error().message);
      continue;
    }
    Result<Output> got = run_engine(*e.engine, p, input, layout, threads);
    if (!got) {
      failures += fmt::format("{}: {}\n", name, got.error().message);
      continue;
    }
    const ErrorBound bound = e.engine->error_bound(p, layout);
    Result<EngineComparison> cmp =
        compare_output(p, input, *expected, *got, bound, 5, abs_sums ? &*abs_sums : nullptr);
    if (!cmp) fail(p, "compare_output: " + cmp.error().message);
    if (!cmp->passed()) failures += fmt::format("{}:\n{}\n", name, comparison_text(p, *cmp, bound));
    outputs.emplace_back(name, *std::move(got));
  }
  if (!failures.empty()) fail(p, failures + pairwise_table(p, outputs));
}

}  // namespace
}  // namespace poolspec::fuzz

// Idle OpenMP threads sleep rather than spin (unless the environment says otherwise): a spinning
// worker takes the core another fuzzing job or the main thread needs.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("OMP_WAIT_POLICY", "passive", 0);
  setenv("KMP_BLOCKTIME", "0", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  poolspec::fuzz::run_one(in);
  return 0;
}
