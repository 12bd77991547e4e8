// The oneDNN front-end: the pooling forward primitive's descriptor.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"
#include "poolspec/formulas.hpp"

namespace poolspec {

using namespace frontend;

// Choices (docs/semantics.md 1a, 1b; oneDNN doc/functional_api/primitives/pooling.md,
// src/common/pooling.cpp, src/cpu/ref_pooling.cpp):
//  - the caller gives dst; it must be floor((d + padding_l + padding_r - K) / s) + 1 with the
//    dilated K = (k - 1) * (dilation + 1) + 1 -- dilation is 0-based. There is no ceil mode: a
//    caller emulates ceil by enlarging padding_r (so the include-padding divisor then counts it,
//    uxlfoundation/oneDNN#513).
//  - padding_l >= 0; padding_r may be negative: the window range then ends before the input
//    does, and the trailing -padding_r elements are never read. poolspec's Problem leaves them
//    out (Framing::crop_end) with pad_end 0, which gives the same windows.
//  - padding_l and padding_r below the dilated kernel, so windows are never empty.
//  - pooling_avg_include_padding divides by KD*KH*KW, the ceil overhang too: include_full.
//    pooling_avg_exclude_padding (and the older alias pooling_avg): exclude.
//  - integer averages accumulate in f32 and round per MXCSR, to nearest-even by default
//    (uxlfoundation/oneDNN#560): half_even, saturated.
//  - max: d = lowest(); d = s when s > d: start=lowest, NaN ignored. The workspace (indices) is
//    opaque and not modelled.
//  - types: f32, f16, bf16, s8, u8, s32.
Result<Frontend> from_onednn(std::string_view text, const FrontendInput& in) {
  const std::string context = "oneDNN pooling";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 3, context); !s) return s.error();
  const size_t rank = in.input_shape.size() - 2;
  if (Status s = check_dtype(
          in.dtype, {DType::f32, DType::f16, DType::bf16, DType::i8, DType::u8, DType::i32},
          context);
      !s)
    return s.error();
  Result<std::string> alg = attrs->text("alg");
  if (!alg) return alg.error();
  bool include = false;
  if (*alg == "pooling_max") {
    if (in.op != Op::max)
      return Error{"alg=pooling_max: the problem's op is avg (--op max, or an avg algorithm)"};
  } else if (*alg == "pooling_avg_include_padding" || *alg == "pooling_avg_exclude_padding" ||
             *alg == "pooling_avg") {
    if (in.op != Op::avg)
      return Error{fmt::format("alg={}: the problem's op is max (--op avg, or pooling_max)", *alg)};
    include = *alg == "pooling_avg_include_padding";
  } else {
    return Error{
        fmt::format("alg={}: must be pooling_max, pooling_avg_include_padding or "
                    "pooling_avg_exclude_padding",
                    *alg)};
  }

  Geometry g;
  if (Status s = read_axis_list(*attrs, "kernel", rank, 1, g.kernel); !s) return s.error();
  if (Status s = read_axis_list(*attrs, "strides", rank, 1, g.strides); !s) return s.error();
  std::vector<int64_t> dilation(rank, 0), padding_l(rank, 0), padding_r(rank, 0);
  if (attrs->has("dilation"))
    if (Status s = read_axis_list(*attrs, "dilation", rank, 0, dilation); !s) return s.error();
  if (attrs->has("padding_l"))
    if (Status s = read_axis_list(*attrs, "padding_l", rank, 0, padding_l); !s) return s.error();
  if (attrs->has("padding_r"))
    if (Status s = read_axis_list(*attrs, "padding_r", rank, -max_attribute, padding_r); !s)
      return s.error();
  std::vector<int64_t> dst;
  if (attrs->has("dst"))
    if (Status s = read_axis_list(*attrs, "dst", rank, 1, dst); !s)
      return Error{s.error().message + " (dst: the destination's spatial dims)"};
  if (Status s = attrs->no_unused(context); !s) return s.error();

  std::vector<int64_t> shape = in.input_shape;
  Frontend f;
  f.framing.input_shape = in.input_shape;
  f.framing.crop_end.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = in.input_shape[i + 2];
    const int64_t dl = dilation[i] + 1;
    const int64_t k_range = formulas::effective_kernel<int64_t>(g.kernel[i], dl);
    if (dilation[i] >= d)
      return Error{
          fmt::format("dilation[{}]={}: must be below the input extent {}", i, dilation[i], d)};
    for (auto [name, pad] :
         {std::pair{"padding_l", padding_l[i]}, std::pair{"padding_r", padding_r[i]}})
      if (pad >= k_range)
        return Error{fmt::format("{}[{}]={}: must be below the dilated kernel extent {}", name, i,
                                 pad, k_range)};
    const int64_t span = d + padding_l[i] + padding_r[i] - k_range;
    if (span < 0)
      return Error{
          fmt::format("kernel[{}]={}: the window (extent {}) must fit in d + padding_l + "
                      "padding_r = {}",
                      i, g.kernel[i], k_range, d + padding_l[i] + padding_r[i])};
    const int64_t o = span / g.strides[i] + 1;
    if (!dst.empty() && dst[i] != o)
      return Error{
          fmt::format("dst[{}]={}: must be (d + padding_l + padding_r - K) / s + 1 = "
                      "({} + {} + {} - {}) / {} + 1 = {}",
                      i, dst[i], d, padding_l[i], padding_r[i], k_range, g.strides[i], o)};
    g.dilations.push_back(dl);
    g.pads_begin.push_back(padding_l[i]);
    if (padding_r[i] < 0) {  // crop: the same windows over d + padding_r elements, no end pad
      f.framing.crop_end[i] = -padding_r[i];
      shape[i + 2] = d + padding_r[i];
      g.pads_end.push_back(0);
    } else {
      g.pads_end.push_back(padding_r[i]);
    }
  }
  const GeometryNames names{"kernel", "strides", "padding_l", "padding_r", ""};
  Result<Problem> p = resolve(g, names, in, shape);
  if (!p) return p.error();
  if (in.op == Op::avg) {
    p->divisor = include ? Divisor::include_full : Divisor::exclude;
    p->empty = EmptyWindow::zero;
    p->int_rounding = IntRounding::half_even;
  } else {
    use_lowest_start_max(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  f.problem = std::move(*p);
  return f;
}

}  // namespace poolspec
