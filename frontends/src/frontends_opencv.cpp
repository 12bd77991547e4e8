// The OpenCV DNN front-end: a `Pooling` layer's LayerParams, as a Caffe or ONNX importer sets
// them, run on the CPU backend (OpenCV 4.6).
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "frontend_support.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/number_domain.hpp"

namespace poolspec {

using namespace frontend;

// Choices (docs/semantics.md 1a, 1b; opencv/opencv 4.6.0 modules/dnn/src/layers/pooling_layer.cpp
// PoolingLayerImpl, and layers_common.cpp getPoolingKernelParams):
//  - 2-D, NCHW, f32 (the CPU backend pools f32 only; an input layer converts other types).
//  - kernel_h/kernel_w >= 1, stride_h/stride_w >= 1 (default 1), pad_t/pad_b/pad_l/pad_r >= 0
//    (default 0); the layer refuses zeros and negative pads when it is created.
//  - ceil_mode defaults to true, ave_pool_padded_area to true (Caffe's defaults).
//  - the output extent (getMemoryShapes): o = 1 + ceil or floor((d + pb + pe - k) / s), then one
//    less when pe != 0 and (o - 1) * s >= d + pe -- Caffe's test, which compares with the end pad
//    where PyTorch's compares with the begin pad. A window longer than the padded input has no
//    output (forward() refuses the empty blob).
//  - ave_pool_padded_area: the divisor is the window clipped at d + pe (Caffe's rule,
//    include_clip); off: the in-bounds count (exclude). The sum is multiplied by the reciprocal
//    of the divisor, so a divisor of 0 gives 0 * inf = NaN.
//  - max: a running maximum from -FLT_MAX on a strict '>': NaN is never selected, a window of
//    -inf or NaN gives -FLT_MAX (lowest); a window with no input element gives 0.
Result<Frontend> from_opencv(std::string_view text, const FrontendInput& in) {
  const std::string context = "OpenCV Pooling";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 2, 2, context); !s) return s.error();
  if (Status s = check_dtype(in.dtype, {DType::f32}, context); !s) return s.error();
  Result<std::string> pool = attrs->text("pool");
  if (!pool) return pool.error();
  if (*pool != "max" && *pool != "ave")
    return Error{fmt::format("pool={}: must be max or ave", *pool)};
  if ((*pool == "max") != (in.op == Op::max))
    return Error{fmt::format("pool={}: the problem's op is {} (--op, or the other pool)", *pool,
                             op_name(in.op))};
  Geometry g;
  for (const auto& [kernel, stride, begin, end] :
       {std::tuple{"kernel_h", "stride_h", "pad_t", "pad_b"},
        std::tuple{"kernel_w", "stride_w", "pad_l", "pad_r"}}) {
    Result<int64_t> k = read_scalar(*attrs, kernel, 1, std::nullopt),
                    s = read_scalar(*attrs, stride, 1, 1), pb = read_scalar(*attrs, begin, 0, 0),
                    pe = read_scalar(*attrs, end, 0, 0);
    for (const Result<int64_t>* r : {&k, &s, &pb, &pe})
      if (!*r) return r->error();
    g.kernel.push_back(*k);
    g.strides.push_back(*s);
    g.pads_begin.push_back(*pb);
    g.pads_end.push_back(*pe);
    g.dilations.push_back(1);
  }
  Result<bool> ceil = attrs->boolean_or("ceil_mode", true);
  if (!ceil) return ceil.error();
  bool padded_area = true;
  if (in.op == Op::avg) {
    Result<bool> b = attrs->boolean_or("ave_pool_padded_area", true);
    if (!b) return b.error();
    padded_area = *b;
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  const char* names[2][4] = {{"kernel_h", "stride_h", "pad_t", "pad_b"},
                             {"kernel_w", "stride_w", "pad_l", "pad_r"}};
  std::vector<int64_t> extents;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t d = in.input_shape[i + 2];
    const int64_t span = d + g.pads_begin[i] + g.pads_end[i] - g.kernel[i];
    if (span < 0)
      return Error{
          fmt::format("{}={}: the window must fit in the padded input {} = {} + {} + {} "
                      "(OpenCV's forward() refuses the empty output)",
                      names[i][0], g.kernel[i], d + g.pads_begin[i] + g.pads_end[i], d, names[i][2],
                      names[i][3])};
    int64_t o = 1 + (*ceil ? ceil_div(span, g.strides[i]) : floor_div(span, g.strides[i]));
    if (g.pads_end[i] != 0 && (o - 1) * g.strides[i] >= d + g.pads_end[i]) --o;
    extents.push_back(o);
  }
  Result<Problem> p = resolve(g, GeometryNames{"kernel", "stride", "pads_begin", "pads_end", ""},
                              in, in.input_shape);
  if (!p) return p.error();
  // ceil_mode=false is floor; ceil_mode=true is ceil, or ceil_torch where OpenCV's drop test
  // dropped a window (the same windows). Anything else the model cannot state.
  const std::vector<Rounding> order =
      *ceil ? std::vector<Rounding>{Rounding::ceil, Rounding::ceil_torch}
            : std::vector<Rounding>{Rounding::floor};
  Result<Rounding> rounding = rounding_for_extents(*p, extents, order, context);
  if (!rounding) return rounding.error();
  p->rounding = *rounding;
  if (in.op == Op::avg) {
    p->divisor = padded_area ? Divisor::include_clip : Divisor::exclude;
    p->empty = EmptyWindow::nan;
  } else {
    use_lowest_start_max(*p);
    p->empty = EmptyWindow::zero;
  }
  if (Status s = validate(*p); !s) return s.error();
  return framed(std::move(*p), in.input_shape, false);
}

}  // namespace poolspec
