// The TOSA front-end: AVG_POOL2D and MAX_POOL2D as the TOSA specification's pseudo-code states them
// (arm/tosa-specification, pseudocode/operators/AVG_POOL2D.tosac and MAX_POOL2D.tosac; the
// division in pseudocode/library/scale_helpers.tosac).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "frontend_support.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {

using namespace frontend;

namespace {

// The 8K level (the specification's "Levels" table): MAX_KERNEL and MAX_STRIDE are 8192, and
// LEVEL_CHECK also holds each pad to MAX_KERNEL.
constexpr int64_t level_8k_max_kernel = 8192;
constexpr int64_t level_8k_max_stride = 8192;

// AVG_POOL2D's accumulator for each input type (the operator's supported-types table).
std::vector<std::string_view> accumulators_for(DType d) {
  switch (d) {
    case DType::i8: return {"INT32"};
    case DType::f16: return {"FP16", "FP32"};
    default: return {"FP32"};  // bf16, fp32
  }
}

// Choices (each an ERROR_IF or LEVEL_CHECK of the pseudo-code: a problem that fails one is
// invalid, and an implementation must refuse it):
//  - NHWC, rank 4; i8, f16, bf16, f32 (TOSA's i16 and fp8 types are not in poolspec's model).
//  - kernel=ky,kx >= 1, stride=sy,sx >= 1, pad=top,bottom,left,right >= 0, each pad below its
//    kernel; "ERROR_IF(OH != idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1)":
//    the windows fit exactly, so floor, ceil and PyTorch's ceil agree (proof
//    tosa/extent/exact-fit-agrees) and the problem says floor.
//  - level=8K (the default) or NONE: at 8K, kernel and pads <= 8192, stride <= 8192.
//  - AVG_POOL2D: "padding does not count": the exclude divisor, never zero (pads below the
//    kernel). acc_type INT32 for i8, FP16 or FP32 for f16, FP32 for bf16 and f32 (default: the
//    widest); FP32 on f16 or bf16 is the problem's sums=f32 (f32 data's own sums suffice). input_zp
//    and output_zp only for i8 ("Zero point only allowed for i8_t"); the integer quotient is TOSA's
//    division (round=tosa), then output_zp, then the clip to int8.
//  - MAX_POOL2D: nan_mode PROPAGATE (the default) or IGNORE; the running maximum starts at the
//    lowest value, or at NaN under IGNORE, which no window changes: every window holds an input
//    element, so the result is the window's maximum (start=first).
// `checked` false: the problem as written, no ERROR_IF or LEVEL_CHECK applied (tosa_as_written).
Result<Frontend> resolve_tosa(std::string_view text, const FrontendInput& in, bool checked) {
  const bool avg = in.op == Op::avg;
  const std::string context = avg ? "TOSA AVG_POOL2D" : "TOSA MAX_POOL2D";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_dtype(in.dtype, {DType::i8, DType::f16, DType::bf16, DType::f32}, context);
      checked && !s)
    return s.error();
  if (in.input_shape.size() != 4)
    return Error{fmt::format("input shape ({}): {} takes a rank-4 NHWC tensor",
                             fmt::join(in.input_shape, ","), context)};
  if (Status s = check_input_shape(in.input_shape, 2, 2, context); !s) return s.error();

  std::vector<int64_t> kernel, stride;
  if (Status s = read_axis_list(*attrs, "kernel", 2, 1, kernel); !s) return s.error();
  if (Status s = read_axis_list(*attrs, "stride", 2, 1, stride); !s) return s.error();
  Result<std::vector<int64_t>> pads = attrs->ints("pad");
  if (!pads) return pads.error();
  if (pads->size() != 4)
    return Error{
        fmt::format("pad={}: must hold 4 values, top, bottom, left, right", fmt::join(*pads, ","))};
  if (Status s = check_axis_values("pad", *pads, 0); !s) return s.error();
  const std::vector<int64_t>& pad = *pads;  // top, bottom, left, right

  bool level_8k = true;
  if (attrs->has("level")) {
    Result<std::string> level = attrs->text("level");
    if (!level) return level.error();
    if (*level != "8K" && *level != "NONE")
      return Error{fmt::format("level={}: must be 8K or NONE", *level)};
    level_8k = *level == "8K";
  }
  std::string accumulator;
  int64_t input_zp = 0, output_zp = 0;
  NanPolicy nan = NanPolicy::propagate;
  if (avg) {
    const std::vector<std::string_view> allowed = accumulators_for(in.dtype);
    accumulator = std::string(allowed.back());
    if (attrs->has("acc_type")) {
      Result<std::string> a = attrs->text("acc_type");
      if (!a) return a.error();
      accumulator = *a;
      if (std::find(allowed.begin(), allowed.end(), accumulator) == allowed.end())
        return Error{fmt::format("acc_type={}: {} on {} accumulates in {}", accumulator, context,
                                 dtype_name(in.dtype), fmt::join(allowed, " or "))};
    }
    for (auto& [name, zp] :
         {std::pair<const char*, int64_t*>{"input_zp", &input_zp}, {"output_zp", &output_zp}}) {
      Result<int64_t> v = read_scalar(*attrs, name, -128, 0);
      if (!v) return v.error();
      *zp = *v;
      if (*zp != 0 && in.dtype != DType::i8)
        return Error{
            fmt::format("{}={}: a zero point is only allowed for i8 (ERROR_IF)", name, *zp)};
      if (*zp > 127) return Error{fmt::format("{}={}: must lie in int8's [-128, 127]", name, *zp)};
    }
  } else if (attrs->has("nan_mode")) {
    Result<std::string> m = attrs->text("nan_mode");
    if (!m) return m.error();
    if (*m != "PROPAGATE" && *m != "IGNORE")
      return Error{fmt::format("nan_mode={}: must be PROPAGATE or IGNORE", *m)};
    nan = *m == "IGNORE" ? NanPolicy::ignore : NanPolicy::propagate;
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  // (N, H, W, C) -> the spec's (N, C, H, W).
  const std::vector<int64_t>& x = in.input_shape;
  const std::array<std::array<const char*, 3>, 2> names{
      {{"kernel_y", "pad_top", "pad_bottom"}, {"kernel_x", "pad_left", "pad_right"}}};
  const std::array<const char*, 2> stride_names{"stride_y", "stride_x"};
  Problem p;
  p.op = in.op;
  p.dtype = in.dtype;
  p.batch = x[0];
  p.channels = x[3];
  for (size_t i = 0; i < 2; ++i) {
    const int64_t d = x[i + 1], k = kernel[i], s = stride[i];
    const int64_t begin = pad[2 * i], end = pad[2 * i + 1];
    if (level_8k && checked) {
      if (k > level_8k_max_kernel)
        return Error{fmt::format("{}={}: the 8K level allows kernels up to {} (LEVEL_CHECK)",
                                 names[i][0], k, level_8k_max_kernel)};
      if (s > level_8k_max_stride)
        return Error{fmt::format("{}={}: the 8K level allows strides up to {} (LEVEL_CHECK)",
                                 stride_names[i], s, level_8k_max_stride)};
      for (const auto& [name, v] : {std::pair{names[i][1], begin}, std::pair{names[i][2], end}})
        if (v > level_8k_max_kernel)
          return Error{fmt::format("{}={}: the 8K level allows pads up to {} (LEVEL_CHECK)", name,
                                   v, level_8k_max_kernel)};
    }
    p.axes.push_back(Axis{d, k, s, 1, begin, end});
    if (!checked) continue;
    for (const auto& [name, v] : {std::pair{names[i][1], begin}, std::pair{names[i][2], end}})
      if (v >= k)
        return Error{fmt::format("{}={}: must be below {}={} (ERROR_IF: a window of padding only)",
                                 name, v, names[i][0], k)};
    const int64_t span = d + begin + end - k;
    if (span < 0)
      return Error{fmt::format(
          "{}={}: longer than the padded input {} = {} + {} + {} (ERROR_IF: no output size fits)",
          names[i][0], k, d + begin + end, d, names[i][1], names[i][2])};
    if (span % s != 0)
      return Error{fmt::format(
          "{}={} with {}={}: the padded input {} = {} + {} + {} less the kernel is {}, not a "
          "multiple of the stride (ERROR_IF: the windows must fit exactly, idiv_check)",
          names[i][0], k, stride_names[i], s, d + begin + end, d, begin, end, span)};
  }
  p.rounding = Rounding::floor;
  if (avg) {
    p.divisor = Divisor::exclude;
    if (in.dtype == DType::i8) {
      p.int_rounding = IntRounding::tosa;
      p.input_zp = input_zp;
      p.output_zp = output_zp;
    }
  } else {
    p.nan = nan;
    p.max_start = MaxStart::first;
  }
  // As written, a window may hold padding only (a pad as long as the kernel): it yields zero.
  if (!checked) p.empty = EmptyWindow::zero;
  // The specification's floating-point rules leave the sign of a zero result open and let an
  // implementation flush subnormal results to zero.
  if (is_float(in.dtype)) {
    p.zeros = Zeros::either;
    p.subnormals = Subnormals::may_flush;
  }
  // acc_type FP32 on f16 or bf16 data: sums of f32 or wider, so f16 sums are not TOSA's.
  if (avg && accumulator == "FP32" && (in.dtype == DType::f16 || in.dtype == DType::bf16))
    p.sums = Sums::f32;
  if (Status s = validate(p); !s) return s.error();
  Frontend f = framed(std::move(p), in.input_shape, true);
  if (avg) f.operator_name = fmt::format("{} (acc_type {})", context, accumulator);
  return f;
}

}  // namespace

Result<Frontend> from_tosa(std::string_view text, const FrontendInput& in) {
  return resolve_tosa(text, in, true);
}

Result<Frontend> tosa_as_written(std::string_view text, const FrontendInput& in) {
  return resolve_tosa(text, in, false);
}

std::string tosa_unpredictable(const Problem& p) {
  // "acc = apply_add_s<acc_t>(acc, value)": an int32 sum that overflows fails apply_add_s's
  // REQUIRE, and the result is unpredictable. Each tap adds x - input_zp, x in [-128, 127].
  if (p.op != Op::avg || p.dtype != DType::i8) return "";
  int64_t taps = 1;  // a window's most in-bounds taps: each factor below 2^31, so no overflow
  for (const Axis& a : p.axes) taps *= std::min(a.kernel, a.extent);
  // (127 - zp) taps <= 2^31 - 1 and (128 + zp) taps <= 2^31, compared by division (a product
  // could pass int64 at level NONE): a t > m exactly when t > floor(m / a), for a > 0.
  const int64_t up = 127 - p.input_zp, down = 128 + p.input_zp;  // each in [0, 255]
  const bool overflows = (up > 0 && taps > std::numeric_limits<int32_t>::max() / up) ||
                         (down > 0 && taps > (int64_t{1} << 31) / down);
  if (!overflows) return "";
  return fmt::format(
      "a window of up to {} input taps, each adding x - input_zp in [{}, {}], can sum past int32: "
      "such an input makes apply_add_s fail its REQUIRE, and TOSA leaves the result unpredictable",
      taps, -128 - p.input_zp, 127 - p.input_zp);
}

}  // namespace poolspec
