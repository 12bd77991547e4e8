#include "poolspec/optimized/optimized.hpp"

#include <atomic>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels.hpp"
#include "plan.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::optimized {

namespace {

int64_t taps_of(const Problem& p) {
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  return taps;
}

// What every kernel needs (the arithmetic argument at the top of kernels.cpp).
Status common_limits(const Problem& p) {
  if (p.dtype != DType::f32 && p.dtype != DType::f16 && p.dtype != DType::i8 && p.dtype != DType::u8)
    return Error{fmt::format("dtype {}: the kernels take f32, f16, i8 and u8", dtype_name(p.dtype))};
  if (p.axes.size() > 3)
    return Error{fmt::format("rank {}: the kernels take 1 to 3 spatial axes", p.axes.size())};
  if (p.bias != 0) return Error{fmt::format("bias={}: the kernels take bias 0", p.bias)};
  int64_t plane = 1;
  for (const Axis& a : p.axes) plane *= a.extent;
  if (plane >= (int64_t{1} << 31))
    return Error{fmt::format("plane of {} elements: the kernels index planes in 32 bits", plane)};
  if (p.op == Op::avg) {
    const int64_t taps = taps_of(p);
    if (taps >= (int64_t{1} << 24) || p.divisor_override >= (int64_t{1} << 24))
      return Error{fmt::format("window of {} taps (override {}): the kernels' f32 divisor takes < 2^24",
                               taps, p.divisor_override)};
    if (!is_float(p.dtype) && taps * 256 >= (int64_t{1} << 23))
      return Error{fmt::format("window of {} taps: integer sums must stay below 2^23 for the exact f32 "
                               "quotient", taps)};
  }
  return Ok{};
}

Status wants(bool condition, std::string_view what) {
  if (condition) return Ok{};
  return Error{std::string(what)};
}

// A window over each whole plane (image, in NHWC), no padding, no dilation.
Status accepts_global_avg(const Problem& p, Layout layout, Layout wanted) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == wanted && p.op == Op::avg,
                       wanted == Layout::channels_first ? "avg in nchw only" : "avg in nhwc only");
      !s)
    return s;
  for (const Axis& a : p.axes)
    if (a.kernel != a.extent || a.pad_begin != 0 || a.pad_end != 0 || a.dilation != 1)
      return Error{"the window is not the whole plane"};
  if (!is_float(p.dtype) && taps_of(p) * 256 >= (int64_t{1} << 23))
    return Error{"plane too large for an exact integer sum"};
  return Ok{};
}

Status accepts_global_avg_nchw(const Problem& p, Layout layout) {
  return accepts_global_avg(p, layout, Layout::channels_first);
}

Status accepts_global_avg_nhwc(const Problem& p, Layout layout) {
  return accepts_global_avg(p, layout, Layout::channels_last);
}

Status accepts_avg_sliding(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(p.op == Op::avg, "avg only"); !s) return s;
  if (p.axes.size() > 2) return Error{fmt::format("rank {}: 1 or 2 spatial axes", p.axes.size())};
  for (const Axis& a : p.axes)
    if (a.dilation != 1) return Error{fmt::format("dilation {}: the block sums take dilation 1", a.dilation)};
  // Scratch: two blocks of kernel_h rows of window sums. NHWC: rows of out_w pixels of the
  // channels rounded up to 16 (at most; strips are narrower); NCHW: rows of about
  // (out_w - 1) * stride + kernel values, which the 16-lane figure covers with room to spare.
  const Axis& w = p.axes.back();
  const int64_t kh = p.axes.size() == 2 ? p.axes.front().kernel : 1;
  const int64_t lanes = layout == Layout::channels_first ? 16 : (p.channels + 15) / 16 * 16;
  const int64_t out_w = formulas::output_extent(formulas::terms_of<int64_t>(w), p.rounding);
  const int64_t scratch = ((2 * kh + 2) * out_w + (out_w - 1) * w.stride + w.kernel) * lanes;
  if (scratch > (int64_t{1} << 26))
    return Error{fmt::format("scratch of {} elements: the block sums take up to 2^26", scratch)};
  return Ok{};
}

// Measured (each kernel alone, hot and cold, 1 and 2 threads, 32 planes of 256x256): the
// separable row sums of avg_nchw and avg_nhwc beat the block sums up to 15x15 (NCHW 3x3: 1.4x,
// 7x7: 1.2-1.4x, 15x15: 1.1x; NHWC 5x5: 1.4-1.9x, 7x7: 1.1-1.5x, 15x15: 1.1-1.2x cold, 0.9x
// hot), and tie at 25x25; so the block sums take windows from 20x20 up, where their cost per
// output, which the window's size does not change, wins. In NHWC not a window over the whole
// plane (one output per row: nothing to share), nor a non-overlapping one.
bool prefers_avg_sliding(const Problem& p, Layout layout) {
  const Axis& w = p.axes.back();
  const Axis& h = p.axes.front();
  if (p.axes.size() != 2 || h.stride != 1 || h.kernel * w.kernel < 400) return false;
  if (layout == Layout::channels_first) return true;
  const bool overlapping = w.stride < w.kernel && h.stride < h.kernel;
  const bool whole_plane = w.kernel >= w.extent + w.pad_begin + w.pad_end && h.kernel >= h.extent + h.pad_begin + h.pad_end;
  return overlapping && !whole_plane;
}

Status accepts_avg_plane_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s) return s;
  if (p.axes.size() > 2) return Error{fmt::format("rank {}: 1 or 2 spatial axes", p.axes.size())};
  int64_t out_plane = 1;
  for (const Axis& a : p.axes) {
    if (a.stride != 1) return Error{fmt::format("stride {}: stride 1 only", a.stride)};
    out_plane *= formulas::output_extent(formulas::terms_of<int64_t>(a), p.rounding);
  }
  const Axis& w = p.axes.back();
  const int64_t out_w = formulas::output_extent(formulas::terms_of<int64_t>(w), p.rounding);
  if (out_w != w.extent) return Error{fmt::format("output width {} of input width {}: they must be equal", out_w, w.extent)};
  // Scratch per thread: the plane's sums, factors and w.kernel masks of 8 bytes per 16 values.
  if (out_plane * (w.kernel + 2) > (int64_t{1} << 24))
    return Error{fmt::format("plane of {} outputs, {} columns of taps: the flat plane takes up to 2^24", out_plane, w.kernel)};
  return Ok{};
}

// Measured (each kernel alone, f32 3x3, 1 and 2 threads, hot and cold): the flat plane beats
// blocked_nchw and avg_nchw up to 80x80 planes (35x35: 1.8x; 8x8: 1.3-2.2x) and is even with
// blocked_nchw at 112x112 (faster hot, slower cold).
bool prefers_avg_plane_nchw(const Problem& p, Layout) {
  int64_t in_plane = 1;
  for (const Axis& a : p.axes) in_plane *= a.extent;
  return in_plane <= 8192;
}

// avg_nchw's and max_nchw's scratch per thread: 4 rows, each the padded input row plus 16
// vectors of strided loads past the last output (16 lanes at most) and two vectors of slack.
Status row_scratch_limit(const Problem& p) {
  const Axis& w = p.axes.back();
  const int64_t out_w = formulas::output_extent(formulas::terms_of<int64_t>(w), p.rounding);
  const int64_t row = w.pad_begin + w.extent + (out_w + 32) * w.stride + (w.kernel - 1) * w.dilation + 48;
  if (4 * row > (int64_t{1} << 24))
    return Error{fmt::format("rows of {} elements: the per-row scratch takes up to 2^22", row)};
  return Ok{};
}

Status accepts_avg_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s) return s;
  return row_scratch_limit(p);
}

Status accepts_avg_int8_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s) return s;
  if (p.dtype != DType::i8 && p.dtype != DType::u8)
    return Error{fmt::format("dtype {}: i8 and u8 only", dtype_name(p.dtype))};
  const Axis& w = p.axes.back();
  const int64_t out_w = formulas::output_extent(formulas::terms_of<int64_t>(w), p.rounding);
  if (w.extent > int8_row_limit || out_w > int8_row_limit)
    return Error{fmt::format("rows of {} values, {} outputs: each at most {} (one vector of bytes)", w.extent, out_w,
                             int8_row_limit)};
  if (taps_of(p) > int8_window_limit)
    return Error{fmt::format("window of {} taps: at most {} (sums within 16 bits)", taps_of(p), int8_window_limit)};
  return Ok{};
}

// The problem blocked_nchw runs for each group of planes: one NHWC image of block_channels channels.
Problem block_problem(const Problem& p) {
  Problem b = p;
  b.batch = 1;
  b.channels = block_channels;
  return b;
}

Status accepts_blocked_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first, "nchw only"); !s) return s;
  if (p.op == Op::max && p.indices != Indices::none)
    return Error{"max with indices: the block's indices would name its planes, not the tensor's"};
  int64_t in_plane = 1, out_plane = 1;
  for (const Axis& a : p.axes) {
    in_plane *= a.extent;
    out_plane *= formulas::output_extent(formulas::terms_of<int64_t>(a), p.rounding);
  }
  if ((in_plane + out_plane) * block_channels > (int64_t{1} << 24))
    return Error{fmt::format("planes of {} and {} elements: the 16-plane blocks take up to 2^24 values",
                             in_plane, out_plane)};
  return Ok{};
}

// Measured (optimized/bench): the transposition pays where the planes are small enough for the
// two blocks to stay in L2 (1 MiB here). For max, max_nchw's rows catch up before that: on Zen 4,
// even at 1 thread and 1.4x faster at 2 on the ResNet stem (16 planes of 112x112: 784 KiB); on
// Zen 5, 1.4x faster cold at 1 thread and 1.5x at 2 on GoogLeNet's 71x71 layer (315 KiB), even
// cold at 1 thread on its 35x35 one (78 KiB, where the blocks stay faster hot), and slower on its
// 17x17 one and the 3-D U-Net's 16^3 (256 KiB). So max blocks stop at 256 KiB.
bool prefers_blocked_nchw(const Problem& p, Layout) {
  int64_t in_plane = 1;
  for (const Axis& a : p.axes) in_plane *= a.extent;
  const int64_t limit = p.op == Op::max ? int64_t{1} << 18 : int64_t{1} << 20;
  return in_plane * block_channels * static_cast<int64_t>(storage_bytes(p.dtype)) <= limit;
}

Status accepts_max_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::max, "max in nchw only"); !s) return s;
  if (p.indices != Indices::none) return Error{"max with indices: values only"};
  return row_scratch_limit(p);
}

Status accepts_pool_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first, "nchw only"); !s) return s;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < p.axes.size(); ++i) rows *= p.axes[i].extent;
  const int64_t out_w = formulas::output_extent(formulas::terms_of<int64_t>(p.axes.back()), p.rounding);
  if (rows * out_w > (int64_t{1} << 24))
    return Error{fmt::format("{} rows of {} outputs: the per-plane scratch would exceed 2^24 elements",
                             rows, out_w)};
  return Ok{};
}

Status accepts_avg_nhwc(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  return wants(layout == Layout::channels_last && p.op == Op::avg, "avg in nhwc only");
}

Status accepts_max_nhwc(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  return wants(layout == Layout::channels_last && p.op == Op::max, "max in nhwc only");
}

constexpr KernelInfo kernels[] = {
    {"global_avg_nchw", "a window over each whole plane: one contiguous reduction per plane",
     accepts_global_avg_nchw},
    {"global_avg_nhwc", "a window over each whole image: its pixels summed in memory order into a row of "
     "sums, a chunk of channels at a time", accepts_global_avg_nhwc},
    {"avg_plane_nchw", "stride 1 and output rows as long as the input's: each plane as one flat array, "
     "summed along H over whole runs of rows, then along W with per-column masks (-0 for taps outside the row)",
     accepts_avg_plane_nchw, prefers_avg_plane_nchw},
    {"avg_int8_nchw", "i8 and u8 rows of up to 64 values: per output row, the window's rows summed in 16-bit "
     "lanes (one vector pair per row), then each tap along W picked from the pair by a permute (AVX-512; "
     "avg_nchw's code below it)", accepts_avg_int8_nchw},
    {"blocked_nchw", "16 planes at a time transposed (in registers) into an NHWC image of 16 channels, "
     "the NHWC kernel dispatch picks for it, then transposed back", accepts_blocked_nchw, prefers_blocked_nchw},
    {"avg_sliding", "block prefix and suffix sums (van Herk) along H, and in NHWC along W too: per output, "
     "a cost the window's size along those axes does not change; NHWC: lanes over C, strips of columns; "
     "NCHW: lanes along W, then kw loads per output", accepts_avg_sliding, prefers_avg_sliding},
    {"avg_nchw", "per output row: the window's rows summed whole (lanes along W), then its taps along W "
     "from that row of sums, padded with -0", accepts_avg_nchw},
    {"max_nchw", "max values only, per output row: the window's rows combined whole (lanes along W), then its "
     "taps along W; an output that comes out zero is looked up again (the first zero in scan order)",
     accepts_max_nchw},
    {"pool_nchw", "per plane: rows reduced along W (strided SIMD loads), then combined row by row",
     accepts_pool_nchw},
    {"avg_nhwc", "per output row: the window's rows summed, then sums along W; lanes over C",
     accepts_avg_nhwc},
    {"max_nhwc", "per output element: taps in scan order; lanes over C", accepts_max_nhwc},
};

KernelId id_of(const KernelInfo* k) { return static_cast<KernelId>(k - kernels); }

std::atomic<int64_t> fallback_calls{0};
std::mutex fallback_mutex;
std::string fallback_reason;  // guarded by fallback_mutex

}  // namespace

std::span<const KernelInfo> kernel_list() { return kernels; }

Selection select_kernel(const Problem& p, Layout layout) {
  Selection s;
  if (Status common = common_limits(p); !common) {
    s.fallback_reason = common.error().message;
    return s;
  }
  const KernelInfo* accepting = nullptr;  // the first that accepts, if none prefers the problem
  for (const KernelInfo& k : kernels) {
    Status accepted = k.accepts(p, layout);
    if (accepted && (!k.preferred || k.preferred(p, layout))) {
      s.kernel = &k;
      return s;
    }
    if (accepted) {
      if (!accepting) accepting = &k;
      continue;
    }
    s.fallback_reason += fmt::format("{}{}: {}", s.fallback_reason.empty() ? "" : "; ", k.name,
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
  return Error{fmt::format("SIMD target {}: not one of this build's targets that the CPU supports ({})", name,
                           fmt::join(compiled_targets(), ", "))};
}

OptimizedEngine::OptimizedEngine(std::string_view only_kernel, Mutation mutation) : mutation_(mutation) {
  for (const KernelInfo& k : kernels)
    if (k.name == only_kernel) only_ = &k;
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
  const Selection s = only_ ? Selection{only_->accepts(p, layout) ? only_ : nullptr, {}} : select_kernel(p, layout);
  if (!s.kernel) return reference::engine().error_bound(p, layout);
  if (p.op == Op::max || !is_float(p.dtype)) return ErrorBound{};
  // f32 sums of prod(kernel) values (taps - 1 additions), the rounded reciprocal and the product;
  // f16 is then rounded once more into f16.
  return sum_bound(DType::f32, taps_of(p) + 1, p.dtype == DType::f32 ? 0.5 : 1.0,
                   fmt::format("f32 sums ({}), times the f32 reciprocal of the divisor", s.kernel->name));
}

Status OptimizedEngine::run(const Problem& p, Layout layout, const RunArgs& args) const {
  if (!args.input || !args.output || (p.op == Op::max && p.indices != Indices::none && !args.indices))
    return Error{"optimized: a buffer is missing (input, output, or the indices a max with indices needs)"};
  // The last plan of this thread is kept: a repeated call (a layer run again and again) then
  // neither validates nor allocates again; a new problem is validated and planned once.
  thread_local std::unique_ptr<Plan> last_plan;
  const bool planned = last_plan && last_plan->layout == layout && last_plan->mutation == mutation_ &&
                       last_plan->p == p;
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
  if (id_of(kernel) == KernelId::blocked_nchw && !last_plan->block) {  // planned once, like the rest
    const Problem b = block_problem(p);
    const Selection inner = select_kernel(b, Layout::channels_last);
    if (!inner.kernel) return Error{"optimized: no NHWC kernel takes the 16-plane block: " + inner.fallback_reason};
    last_plan->block = std::make_unique<Plan>(b, Layout::channels_last, mutation_);
    last_plan->block_kernel = static_cast<int>(id_of(inner.kernel));
  }
  run_kernel(id_of(kernel), *last_plan, a);
  return Ok{};
}

const OptimizedEngine& engine() {
  static const OptimizedEngine instance;
  return instance;
}

const poolspec_backend* backend() {
  static const auto b = make_engine_backend(engine(), fmt::format("poolspec {} ({})", POOLSPEC_VERSION, simd_target()), "spec");
  return &b->abi;
}

}  // namespace poolspec::optimized
