// The optimized engine's kernel list, in dispatch order, and the limits every kernel shares.
// Each kernel file defines its entry (name, description, accepts, prefers, run, test scope); the
// engine's dispatch, the tests, the fuzzer and the benchmark all read this list.
#include <fmt/format.h>

#include "kernels/kernel.hpp"
#include "poolspec/formulas.hpp"

namespace poolspec::optimized {

namespace kernels {
extern const KernelInfo global_avg_nchw, global_avg_nhwc, avg_plane_nchw, avg_int8_nchw,
    blocked_nchw, avg_sliding, max_separable_nchw, max_separable_nhwc, avg_nchw, max_nchw,
    pool_nchw, avg_nhwc, max_nhwc;
}  // namespace kernels

namespace {

// The first that accepts and prefers a problem runs it; the specialised kernels come first, the
// general ones of each layout (avg_nchw, max_nchw, pool_nchw, avg_nhwc, max_nhwc) last.
constexpr const KernelInfo* list[] = {
    &kernels::global_avg_nchw, &kernels::global_avg_nhwc,    &kernels::avg_plane_nchw,
    &kernels::avg_int8_nchw,   &kernels::max_separable_nchw, &kernels::max_separable_nhwc,
    &kernels::blocked_nchw,    &kernels::avg_sliding,        &kernels::avg_nchw,
    &kernels::max_nchw,        &kernels::pool_nchw,          &kernels::avg_nhwc,
    &kernels::max_nhwc,
};

}  // namespace

std::span<const KernelInfo* const> kernel_list() { return list; }

int64_t taps_of(const Problem& p) {
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  return taps;
}

int64_t output_extent_of(const Problem& p, const Axis& a) {
  return formulas::output_extent(formulas::terms_of<int64_t>(a), p.rounding);
}

Status wants(bool condition, std::string_view what) {
  if (condition) return Ok{};
  return Error{std::string(what)};
}

Status common_limits(const Problem& p) {
  if (p.dtype != DType::f32 && p.dtype != DType::f16 && p.dtype != DType::bf16 &&
      p.dtype != DType::i8 && p.dtype != DType::u8)
    return Error{
        fmt::format("dtype {}: the kernels take f32, f16, bf16, i8 and u8", dtype_name(p.dtype))};
  if (p.axes.size() > 3)
    return Error{fmt::format("rank {}: the kernels take 1 to 3 spatial axes", p.axes.size())};
  if (p.bias != 0) return Error{fmt::format("bias={}: the kernels take bias 0", p.bias)};
  if (p.input_zp != 0 || p.output_zp != 0)
    return Error{fmt::format("input_zp={} output_zp={}: the kernels take no zero points",
                             p.input_zp, p.output_zp)};
  if (p.op == Op::avg && !is_float(p.dtype) && p.int_rounding == IntRounding::tosa)
    return Error{
        "round=tosa: the kernels round the exact quotient; TOSA's division is its own rule"};
  if (p.op == Op::max && is_float(p.dtype) && p.zeros == Zeros::ordered)
    return Error{"zeros=ordered: the kernels' maximum keeps the first of -0 and +0"};
  int64_t plane = 1;
  for (const Axis& a : p.axes) plane *= a.extent;
  if (plane >= (int64_t{1} << 31))
    return Error{fmt::format("plane of {} elements: the kernels index planes in 32 bits", plane)};
  if (p.op == Op::avg) {
    const int64_t taps = taps_of(p);
    if (taps >= (int64_t{1} << 24) || p.divisor_override >= (int64_t{1} << 24))
      return Error{
          fmt::format("window of {} taps (override {}): the kernels' f32 divisor takes < 2^24",
                      taps, p.divisor_override)};
    if (!is_float(p.dtype) && taps * 256 >= (int64_t{1} << 23))
      return Error{
          fmt::format("window of {} taps: integer sums must stay below 2^23 for the exact f32 "
                      "quotient",
                      taps)};
  }
  return Ok{};
}

// Four rows, each the padded input row plus 16 vectors of strided loads past the last output (16
// lanes at most) and two vectors of slack.
bool max_nchw_at_storage_width(const Problem& p) {
  return p.op == Op::max && storage_bytes(p.dtype) == 1 && p.axes.back().stride <= 2;
}

Status row_scratch_limit(const Problem& p) {
  const Axis& w = p.axes.back();
  const int64_t out_w = output_extent_of(p, w);
  const int64_t row =
      w.pad_begin + w.extent + (out_w + 32) * w.stride + (w.kernel - 1) * w.dilation + 48;
  if (4 * row > (int64_t{1} << 24))
    return Error{fmt::format("rows of {} elements: the per-row scratch takes up to 2^22", row)};
  return Ok{};
}

}  // namespace poolspec::optimized
