// The optimized engine (docs/design.md §4): SIMD kernels (Highway, dispatched at run time to
// AVX-512, AVX2, ...), threaded, in NCHW and NHWC, for f32, f16, bf16, i8 and u8 with rank 1..3.
// One kernel list feeds dispatch, the tests and the benchmark (XNNPACK's way). A problem no kernel
// accepts runs on the reference engine, and each such fallback is counted with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/backend.h"
#include "poolspec/engine.hpp"

namespace poolspec::optimized {

struct Plan;  // a problem as the kernels see it (optimized/src/plan.hpp)

// The tests' broken variants of the kernels' window tables (optimized/testing/).
enum class Mutation : int;

// What the tests draw for a kernel run on its own: the problems it is for, so that a property
// test spends its cases where the kernel can be wrong. Unset: any.
struct KernelScope {
  std::optional<Op> op = std::nullopt;
  std::optional<Layout> layout = std::nullopt;
  int max_rank = 3;
  bool whole_plane = false;  // windows over the whole plane
  bool same_width = false;   // stride 1 and output rows as long as the input's
};

// One kernel of the list: the kernel files (optimized/src/kernels/) each define theirs.
struct KernelInfo {
  std::string_view name;
  std::string_view description;
  Status (*accepts)(const Problem& p, Layout layout);  // Ok, or the reason it does not
  // Where dispatch chooses it among the problems it accepts (null: all of them); measured
  // choices, so that the tests still run the kernel over everything it accepts.
  bool (*preferred)(const Problem& p, Layout layout);
  // Runs the kernel on an accepted problem, on the best SIMD target of this CPU.
  void (*run)(const Plan& plan, const RunArgs& args);
  KernelScope scope;
};

// Every kernel, in dispatch order: the first that accepts and prefers a problem runs it.
std::span<const KernelInfo* const> kernel_list();

// The kernel the engine runs for a valid problem, or null with the reason none does.
struct Selection {
  const KernelInfo* kernel = nullptr;
  std::string fallback_reason;
};
Selection select_kernel(const Problem& p, Layout layout);

// Calls that ran on the reference because no kernel accepted the problem (since the last reset).
struct FallbackStats {
  int64_t calls = 0;
  std::string last_reason;
};
FallbackStats fallback_stats();
void reset_fallback_stats();

// The SIMD target the kernels dispatch to on this CPU (e.g. "AVX3").
std::string simd_target();

// The SIMD targets compiled in that this CPU supports (e.g. "AVX3", "AVX2", "SSE4", ...).
std::vector<std::string> simd_targets();
// Restricts dispatch to one of them, for the tests and the benchmark; "" restores the best.
// Not thread-safe: call it while no kernel runs.
Status use_simd_target(std::string_view name);

class OptimizedEngine final : public Engine {
 public:
  // only_kernel: restrict to one kernel of the list (refusing what it does not accept, no
  // fallback), for testing each kernel on its own.
  explicit OptimizedEngine(std::string_view only_kernel = {});
  // A broken variant, for the tests (optimized/testing/poolspec/optimized/mutants.hpp).
  OptimizedEngine(std::string_view only_kernel, Mutation mutation);

  std::string_view name() const override { return name_; }
  Status supports(const Problem& p, Layout layout) const override;
  ErrorBound error_bound(const Problem& p, Layout layout) const override;
  Status run(const Problem& p, Layout layout, const RunArgs& args) const override;

 private:
  const KernelInfo* only_ = nullptr;
  Mutation mutation_;
  std::string name_;
};

const OptimizedEngine& engine();

// The optimized engine through the backend ABI (rules "spec").
const poolspec_backend* backend();

}  // namespace poolspec::optimized
