#include "poolspec/optimized/optimized.hpp"

#include <atomic>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/kernel.hpp"
#include "plan.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::optimized {

namespace {

// The problem blocked_nchw runs for each group of planes: one NHWC image of block_channels
// channels.
Problem block_problem(const Problem& p) {
  Problem b = p;
  b.batch = 1;
  b.channels = block_channels;
  return b;
}

std::atomic<int64_t> fallback_calls{0};
std::mutex fallback_mutex;
std::string fallback_reason;  // guarded by fallback_mutex

}  // namespace

Selection select_kernel(const Problem& p, Layout layout) {
  Selection s;
  if (Status common = common_limits(p); !common) {
    s.fallback_reason = common.error().message;
    return s;
  }
  const KernelInfo* accepting = nullptr;  // the first that accepts, if none prefers the problem
  for (const KernelInfo* k : kernel_list()) {
    Status accepted = k->accepts(p, layout);
    if (accepted && (!k->preferred || k->preferred(p, layout))) {
      s.kernel = k;
      return s;
    }
    if (accepted) {
      if (!accepting) accepting = k;
      continue;
    }
    s.fallback_reason += fmt::format("{}{}: {}", s.fallback_reason.empty() ? "" : "; ", k->name,
                                     accepted.error().message);
  }
  if (accepting) s = Selection{accepting, {}};
  return s;
}

FallbackStats fallback_stats() {
  std::lock_guard lock(fallback_mutex);
  return {fallback_calls.load(), fallback_reason};
}

void reset_fallback_stats() {
  std::lock_guard lock(fallback_mutex);
  fallback_calls = 0;
  fallback_reason.clear();
}

std::string simd_target() { return dispatched_target(); }

std::vector<std::string> simd_targets() { return compiled_targets(); }

Status use_simd_target(std::string_view name) {
  if (restrict_target(name)) return Ok{};
  return Error{
      fmt::format("SIMD target {}: not one of this build's targets that the CPU supports ({})",
                  name, fmt::join(compiled_targets(), ", "))};
}

OptimizedEngine::OptimizedEngine(std::string_view only_kernel)
    : OptimizedEngine(only_kernel, Mutation::none) {}

OptimizedEngine::OptimizedEngine(std::string_view only_kernel, Mutation mutation)
    : mutation_(mutation) {
  for (const KernelInfo* k : kernel_list())
    if (k->name == only_kernel) only_ = k;
  name_ = only_ ? fmt::format("optimized/{}", only_->name) : std::string("optimized");
  if (mutation == Mutation::window_edge) name_ += "[mutant: window edge]";
  if (mutation == Mutation::border_divisor) name_ += "[mutant: border divisor]";
}

Status OptimizedEngine::supports(const Problem& p, Layout layout) const {
  if (Status s = validate(p); !s) return s;
  if (only_) return only_->accepts(p, layout);
  return Ok{};  // what no kernel takes runs on the reference
}

ErrorBound OptimizedEngine::error_bound(const Problem& p, Layout layout) const {
  const Selection s =
      only_ ? Selection{only_->accepts(p, layout) ? only_ : nullptr, {}} : select_kernel(p, layout);
  if (!s.kernel) return reference::engine().error_bound(p, layout);
  if (p.op == Op::max || !is_float(p.dtype)) return ErrorBound{};
  // f32 sums of prod(kernel) values (taps - 1 additions), the rounded reciprocal and the product;
  // f16 and bf16 are then rounded once more into their format.
  return sum_bound(
      DType::f32, taps_of(p) + 1, p.dtype == DType::f32 ? 0.5 : 1.0,
      fmt::format("f32 sums ({}), times the f32 reciprocal of the divisor", s.kernel->name));
}

Status OptimizedEngine::run(const Problem& p, Layout layout, const RunArgs& args) const {
  if (!args.input || !args.output ||
      (p.op == Op::max && p.indices != Indices::none && !args.indices))
    return Error{
        "optimized: a buffer is missing (input, output, or the indices a max with indices needs)"};
  // The last plan of this thread is kept: a repeated call (a layer run again and again) then
  // neither validates nor allocates again; a new problem is validated and planned once.
  thread_local std::unique_ptr<Plan> last_plan;
  const bool planned = last_plan && last_plan->layout == layout &&
                       last_plan->mutation == mutation_ && last_plan->p == p;
  if (!planned) {
    if (Status s = validate(p); !s) return s.error();
  }
  const KernelInfo* kernel = only_;
  if (kernel) {
    if (Status s = kernel->accepts(p, layout); !s) return s;
  } else {
    Selection s = select_kernel(p, layout);
    if (!s.kernel) {
      ++fallback_calls;
      {
        std::lock_guard lock(fallback_mutex);
        fallback_reason = std::move(s.fallback_reason);
      }
      return reference::engine().run(p, layout, args);
    }
    kernel = s.kernel;
  }
  RunArgs a = args;
  a.threads = std::max(1, args.threads);
  if (p.op != Op::max || p.indices == Indices::none) a.indices = nullptr;
  if (!planned) last_plan = std::make_unique<Plan>(p, layout, mutation_);
  if (kernel == &kernels::blocked_nchw && !last_plan->block) {  // planned once, like the rest
    const Problem b = block_problem(p);
    const Selection inner = select_kernel(b, Layout::channels_last);
    if (!inner.kernel)
      return Error{"optimized: no NHWC kernel takes the 16-plane block: " + inner.fallback_reason};
    last_plan->block = std::make_unique<Plan>(b, Layout::channels_last, mutation_);
    last_plan->block_kernel = inner.kernel;
  }
  kernel->run(*last_plan, a);
  return Ok{};
}

const OptimizedEngine& engine() {
  static const OptimizedEngine instance;
  return instance;
}

const poolspec_backend* backend() {
  static const auto b = make_engine_backend(
      engine(), fmt::format("poolspec {} ({})", POOLSPEC_VERSION, simd_target()), "spec");
  return &b->abi;
}

}  // namespace poolspec::optimized
