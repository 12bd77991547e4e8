// The Arm NN front-end: a Pooling2dDescriptor, run on the CpuRef backend (Arm NN 20.08).
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "frontend_support.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/number_domain.hpp"

namespace poolspec {

using namespace frontend;

// Choices (docs/semantics.md 1a, 1b; ARM-software/armnn v20.08 src/armnn/layers/Pooling2dLayer.cpp
// InferOutputShapes, src/backends/reference/workloads/Pooling2d.cpp, RefLayerSupport.cpp):
//  - 2-D; data_layout NCHW or NHWC; f32, f16, and int8 / uint8 as QAsymmS8 / QAsymmU8 with scale
//    1 and offset 0 (the reference dequantizes, pools in float and requantizes with round(), half
//    away from zero).
//  - pool_width/pool_height and stride_x/stride_y >= 1 (strides of 0 mean another, global
//    operator there), pads >= 0.
//  - the output extent: o = 1 + ceil or floor((d + pb + pe - k) / s), then one less when
//    (o - 1) * s >= d + pb (in Floor mode too): ceil_torch under Ceiling.
//  - pads below the pool size and a window that fits in the padded input: Arm NN itself checks
//    neither (its sizes are unsigned; docs/findings.md ARMNN-1), and a window that then holds
//    nothing but padding gives 0, lowest() or NaN depending on its side -- this rule set holds
//    it to what it computes consistently.
//  - padding_method IgnoreValue: padding counts as zeros, the window clipped at d + pe
//    (include_clip); Exclude: the in-bounds count. One division of an f32 sum.
//  - max: a running maximum from lowest() on a strict '>' (NaN never selected). It runs in f32
//    for every type, so an f16 window of nothing but -inf or NaN gives the f32 lowest(), which
//    converts to -inf: no rule of the model, a finding (docs/findings.md ARMNN-5).
Result<Frontend> from_armnn(std::string_view text, const FrontendInput& in) {
  const std::string context = "Arm NN Pooling2d";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_dtype(in.dtype, {DType::f32, DType::f16, DType::i8, DType::u8}, context); !s)
    return s.error();
  Result<std::string> type = attrs->text("pool_type");
  if (!type) return type.error();
  if (*type != "Max" && *type != "Average")
    return Error{fmt::format("pool_type={}: must be Max or Average (L2 is not modelled)", *type)};
  if ((*type == "Max") != (in.op == Op::max))
    return Error{fmt::format("pool_type={}: the problem's op is {} (--op, or the other type)",
                             *type, op_name(in.op))};
  bool channels_last = false;
  if (attrs->has("data_layout")) {
    Result<std::string> layout = attrs->text("data_layout");
    if (!layout) return layout.error();
    if (*layout != "NCHW" && *layout != "NHWC")
      return Error{fmt::format("data_layout={}: must be NCHW or NHWC", *layout)};
    channels_last = *layout == "NHWC";
  }
  if (Status s = check_input_shape(in.input_shape, 2, 2, context); !s) return s.error();
  std::vector<int64_t> shape = in.input_shape;  // as (N, C, H, W)
  if (channels_last)
    shape = {in.input_shape[0], in.input_shape[3], in.input_shape[1], in.input_shape[2]};
  const char* names[2][4] = {{"pool_height", "stride_y", "pad_top", "pad_bottom"},
                             {"pool_width", "stride_x", "pad_left", "pad_right"}};
  Geometry g;
  for (const auto& n : names) {
    Result<int64_t> k = read_scalar(*attrs, n[0], 1, std::nullopt),
                    s = read_scalar(*attrs, n[1], 1, std::nullopt),
                    pb = read_scalar(*attrs, n[2], 0, 0), pe = read_scalar(*attrs, n[3], 0, 0);
    for (const Result<int64_t>* r : {&k, &s, &pb, &pe})
      if (!*r) return r->error();
    g.kernel.push_back(*k);
    g.strides.push_back(*s);
    g.pads_begin.push_back(*pb);
    g.pads_end.push_back(*pe);
    g.dilations.push_back(1);
  }
  bool ceiling = false;
  if (attrs->has("output_shape_rounding")) {
    Result<std::string> r = attrs->text("output_shape_rounding");
    if (!r) return r.error();
    if (*r != "Floor" && *r != "Ceiling")
      return Error{fmt::format("output_shape_rounding={}: must be Floor or Ceiling", *r)};
    ceiling = *r == "Ceiling";
  }
  bool exclude = false;
  if (in.op == Op::avg && attrs->has("padding_method")) {
    Result<std::string> m = attrs->text("padding_method");
    if (!m) return m.error();
    if (*m != "IgnoreValue" && *m != "Exclude")
      return Error{fmt::format("padding_method={}: must be IgnoreValue or Exclude", *m)};
    exclude = *m == "Exclude";
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  std::vector<int64_t> extents;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t d = shape[i + 2];
    for (const auto& [name, pad] :
         {std::pair{names[i][2], g.pads_begin[i]}, std::pair{names[i][3], g.pads_end[i]}})
      if (pad >= g.kernel[i])
        return Error{
            fmt::format("{}={}: must be below {}={} (a window could hold nothing but "
                        "padding)",
                        name, pad, names[i][0], g.kernel[i])};
    const int64_t span = d + g.pads_begin[i] + g.pads_end[i] - g.kernel[i];
    if (span < 0)
      return Error{fmt::format("{}={}: the window must fit in the padded input {} = {} + {} + {}",
                               names[i][0], g.kernel[i], d + g.pads_begin[i] + g.pads_end[i], d,
                               names[i][2], names[i][3])};
    int64_t o = 1 + (ceiling ? ceil_div(span, g.strides[i]) : floor_div(span, g.strides[i]));
    if ((o - 1) * g.strides[i] >= d + g.pads_begin[i]) --o;
    extents.push_back(o);
  }
  Result<Problem> p =
      resolve(g, GeometryNames{"pool", "stride", "pad_begin", "pad_end", ""}, in, shape);
  if (!p) return p.error();
  Result<Rounding> rounding =
      rounding_for_extents(*p, extents,
                           ceiling ? std::vector<Rounding>{Rounding::ceil_torch}
                                   : std::vector<Rounding>{Rounding::floor, Rounding::ceil_torch},
                           context);
  if (!rounding) return rounding.error();
  p->rounding = *rounding;
  if (in.op == Op::avg) {
    p->divisor = exclude ? Divisor::exclude : Divisor::include_clip;
    // No window of these rules is empty; were one, f32 gives 0 / 0 and a quantized type aborts
    // (an assert in the requantization of that NaN).
    p->empty = is_float(p->dtype) ? EmptyWindow::nan : EmptyWindow::error;
    p->int_rounding = IntRounding::half_away;
  } else {
    use_lowest_start_max(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  return framed(std::move(*p), in.input_shape, channels_last);
}

}  // namespace poolspec
