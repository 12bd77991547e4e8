// The TensorFlow (tf.nn.avg_pool / max_pool / pool) and TFLite (AVERAGE_POOL_2D, MAX_POOL_2D)
// front-ends. Their tensors are channels-last unless data_format says otherwise.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"

namespace poolspec {

using namespace frontend;

namespace {

// (N, d1..dn, C) -> (N, C, d1..dn).
std::vector<int64_t> channels_first(const std::vector<int64_t>& s) {
  std::vector<int64_t> out{s.front(), s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}

// ksize / strides / dilations: one value, one per spatial axis, or one per input axis with 1 at N
// and C (the tf.nn spelling, in data_format order).
Status read_tf_list(const Attributes& attrs, std::string_view name, size_t rank, bool channels_last,
                    std::vector<int64_t>& out) {
  Result<std::vector<int64_t>> v = attrs.ints(name);
  if (!v) return v.error();
  std::vector<int64_t> spatial;
  if (v->size() == 1) {
    spatial.assign(rank, (*v)[0]);
  } else if (v->size() == rank) {
    spatial = *v;
  } else if (v->size() == rank + 2) {
    const size_t c = channels_last ? rank + 1 : 1;
    if ((*v)[0] != 1 || (*v)[c] != 1)
      return Error{
          fmt::format("{}={}: the batch and channel entries must be 1", name, fmt::join(*v, ","))};
    for (size_t i = 0; i < v->size(); ++i)
      if (i != 0 && i != c) spatial.push_back((*v)[i]);
  } else {
    return Error{
        fmt::format("{}={}: give 1, {} or {} values", name, fmt::join(*v, ","), rank, rank + 2)};
  }
  if (Status s = check_axis_values(name, spatial, 1); !s) return s;
  out = std::move(spatial);
  return Ok{};
}

}  // namespace

// Choices (docs/semantics.md 1a, 1b; tensorflow/core/framework/kernel_shape_util.cc):
//  - VALID: o = floor((d - K) / s) + 1; SAME: o = ceil(d/s) with floor(P/2) before and the odd
//    extra after (same_upper); no ceil mode. EXPLICIT (max only): explicit_paddings, a (before,
//    after) pair per input axis in data_format order, zero for N and C.
//  - the average never counts padding: exclude. SAME leaves every window an input element.
//  - dilations (tf.nn.pool's dilation_rate) require strides of 1.
//  - max: padded cells never win; the CPU kernels start from lowest() and keep the larger
//    value (Eigen's MaxReducer), so NaN is ignored and an all -inf window yields lowest()
//    [code reading, not run here]: start=lowest.
//  - types: avg half, bfloat16, float, double; max also int8, uint8, int32.
Result<Frontend> from_tensorflow(std::string_view text, const FrontendInput& in) {
  const bool avg = in.op == Op::avg;
  const std::string context = fmt::format("tf.nn.{}_pool", avg ? "avg" : "max");
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 3, context); !s) return s.error();
  const size_t rank = in.input_shape.size() - 2;
  if (Status s =
          avg ? check_dtype(in.dtype, {DType::f16, DType::bf16, DType::f32, DType::f64}, context)
              : check_dtype(in.dtype,
                            {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i8, DType::u8,
                             DType::i32},
                            context);
      !s)
    return s.error();
  const std::string_view last_formats[] = {"NWC", "NHWC", "NDHWC"};
  const std::string_view first_formats[] = {"NCW", "NCHW", "NCDHW"};
  bool channels_last = true;
  if (attrs->has("data_format")) {
    Result<std::string> f = attrs->text("data_format");
    if (*f == first_formats[rank - 1])
      channels_last = false;
    else if (*f != last_formats[rank - 1])
      return Error{fmt::format("data_format={}: a {}-D input takes {} or {}", *f, rank + 2,
                               last_formats[rank - 1], first_formats[rank - 1])};
  }
  const std::vector<int64_t> shape =
      channels_last ? channels_first(in.input_shape) : in.input_shape;

  Geometry g;
  if (Status s = read_tf_list(*attrs, "ksize", rank, channels_last, g.kernel); !s) return s.error();
  if (Status s = read_tf_list(*attrs, "strides", rank, channels_last, g.strides); !s)
    return s.error();
  g.dilations.assign(rank, 1);
  if (attrs->has("dilations")) {
    if (Status s = read_tf_list(*attrs, "dilations", rank, channels_last, g.dilations); !s)
      return s.error();
    bool dilated = false, strided = false;
    for (size_t i = 0; i < rank; ++i) {
      dilated = dilated || g.dilations[i] > 1;
      strided = strided || g.strides[i] > 1;
    }
    if (dilated && strided)
      return Error{
          fmt::format("dilations={}: tf.nn.pool takes dilations > 1 only with strides of 1",
                      fmt::join(g.dilations, ","))};
  }
  Result<std::string> padding = attrs->text("padding");
  if (!padding) return padding.error();
  g.pads_begin.assign(rank, 0);
  g.pads_end.assign(rank, 0);
  if (*padding == "SAME") {
    g.mode = PadMode::same_upper;
  } else if (*padding == "VALID") {
    g.mode = PadMode::valid;
  } else if (*padding == "EXPLICIT") {
    if (avg || rank != 2)
      return Error{fmt::format("padding=EXPLICIT: only tf.nn.max_pool2d takes explicit paddings")};
    Result<std::vector<int64_t>> pads = attrs->ints("explicit_paddings");
    if (!pads) return pads.error();
    if (pads->size() != 2 * (rank + 2))
      return Error{
          fmt::format("explicit_paddings={}: {} values, a (before, after) pair per input axis",
                      fmt::join(*pads, ","), 2 * (rank + 2))};
    const size_t c = channels_last ? rank + 1 : 1;
    size_t axis = 0;
    for (size_t i = 0; i < rank + 2; ++i) {
      const int64_t before = (*pads)[2 * i], after = (*pads)[2 * i + 1];
      if (i == 0 || i == c) {
        if (before != 0 || after != 0)
          return Error{fmt::format("explicit_paddings={}: the batch and channel pads must be 0",
                                   fmt::join(*pads, ","))};
        continue;
      }
      if (before < 0 || after < 0)
        return Error{fmt::format("explicit_paddings={}: pads must be >= 0", fmt::join(*pads, ","))};
      if (before >= g.kernel[axis] || after >= g.kernel[axis])  // a window must reach the input
        return Error{fmt::format("explicit_paddings={}: each pad must be smaller than ksize[{}]={}",
                                 fmt::join(*pads, ","), axis, g.kernel[axis])};
      g.pads_begin[axis] = before;
      g.pads_end[axis] = after;
      ++axis;
    }
  } else {
    return Error{
        fmt::format("padding={}: must be VALID, SAME{}", *padding, avg ? "" : " or EXPLICIT")};
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  const GeometryNames names{"ksize", "strides", "padding(before)", "padding(after)", "padding"};
  Result<Problem> p = resolve(g, names, in, shape);
  if (!p) return p.error();
  if (avg) {
    p->divisor = Divisor::exclude;
    p->empty = EmptyWindow::error;
  } else {
    use_lowest_start_max(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  return framed(std::move(*p), in.input_shape, channels_last);
}

// Choices (tensorflow/lite/kernels/internal/reference/pooling.h and integer_ops/pooling.h,
// padding.h; docs/semantics.md 1a, 1b):
//  - SAME: out = (d + s - 1) / s, total pad max(0, (out - 1) * s + k - d), total / 2 before and
//    the rest after (same_upper); VALID: (d - k + s) / s. NHWC, 2 spatial axes.
//  - average: exclude (filter_count of in-image taps); int8 rounds half away from zero,
//    (acc +- n/2) / n with C truncation; uint8 (acc + n/2) / n, half up (its sums are >= 0);
//    floats sum in float and divide. A window without input is refused (empty=error).
//  - max: `max = lowest(); max = std::max(max, v)`: start=lowest, NaN ignored.
//  - fused_activation_function: NONE only. Even NONE clamps float outputs to [lowest, max], so
//    TFLite turns +-inf results into +-FLT_MAX; poolspec does not model that clamp.
Result<Frontend> from_tflite(std::string_view text, const FrontendInput& in) {
  const bool avg = in.op == Op::avg;
  const std::string context = avg ? "TFLite AVERAGE_POOL_2D" : "TFLite MAX_POOL_2D";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 2, 2, context + " (NHWC)"); !s) return s.error();
  if (Status s = check_dtype(in.dtype, {DType::f32, DType::i8, DType::u8}, context); !s)
    return s.error();
  Geometry g;
  g.kernel.resize(2);
  g.strides.resize(2);
  for (auto [name, target] :
       {std::pair{"filter_height", &g.kernel[0]}, std::pair{"filter_width", &g.kernel[1]},
        std::pair{"stride_h", &g.strides[0]}, std::pair{"stride_w", &g.strides[1]}}) {
    Result<std::vector<int64_t>> v = attrs->ints(name);
    if (!v) return v.error();
    if (v->size() != 1 || (*v)[0] < 1 || (*v)[0] > max_attribute)
      return Error{
          fmt::format("{}={}: must be one integer in [1, 2^31)", name, fmt::join(*v, ","))};
    *target = (*v)[0];
  }
  g.dilations.assign(2, 1);
  g.pads_begin.assign(2, 0);
  g.pads_end.assign(2, 0);
  Result<std::string> padding = attrs->text("padding");
  if (!padding) return padding.error();
  if (*padding == "SAME")
    g.mode = PadMode::same_upper;
  else if (*padding == "VALID")
    g.mode = PadMode::valid;
  else
    return Error{fmt::format("padding={}: must be SAME or VALID", *padding)};
  if (attrs->has("fused_activation_function")) {
    Result<std::string> act = attrs->text("fused_activation_function");
    if (*act != "NONE")
      return Error{
          fmt::format("fused_activation_function={}: poolspec models NONE only (the "
                      "clamp is not pooling)",
                      *act)};
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  const GeometryNames names{"filter_height/filter_width", "stride_h/stride_w", "padding(before)",
                            "padding(after)", "padding"};
  Result<Problem> p = resolve(g, names, in, channels_first(in.input_shape));
  if (!p) return p.error();
  if (avg) {
    p->divisor = Divisor::exclude;
    p->empty = EmptyWindow::error;
    p->int_rounding = in.dtype == DType::u8 ? IntRounding::half_up : IntRounding::half_away;
  } else {
    use_lowest_start_max(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  return framed(std::move(*p), in.input_shape, true);
}

}  // namespace poolspec
