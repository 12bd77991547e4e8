// Properties of the framework front-ends over random problems. Each framework's output extent is
// written here once more, as that framework's own source computes it (the formulas quoted in the
// comments), independently of spec/formulas.hpp; every problem a front-end accepts must have
// exactly that shape, its pads must be the ones written, and it must evaluate.
#include <doctest/doctest.h>

#include "generators.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"
#include "rapidcheck_doctest.hpp"

namespace poolspec::test {
namespace {

// A random geometry: rank 1-3, kernel 1-4, stride 1-3, dilation 1-2, pads 0-3 (end pads are
// sometimes as large as the kernel, to reach the refusals), floor or ceil, padding counted or not.
rc::Gen<Intent> intent_gen() {
  return rc::gen::exec([] {
    Intent in;
    in.op = *rc::gen::element(Op::avg, Op::max);
    in.dtype = DType::f32;
    const int rank = *rc::gen::inRange(1, 4);
    in.shape = {*rc::gen::inRange<int64_t>(1, 3), *rc::gen::inRange<int64_t>(1, 3)};
    for (int i = 0; i < rank; ++i) {
      in.kernel.push_back(*rc::gen::inRange<int64_t>(1, 5));
      in.strides.push_back(*rc::gen::inRange<int64_t>(1, 4));
      in.dilations.push_back(*rc::gen::element<int64_t>(1, 1, 2));
      in.pads_begin.push_back(*rc::gen::inRange<int64_t>(0, 3));
      in.pads_end.push_back(
          *rc::gen::element(in.pads_begin.back(), int64_t{0}, int64_t{1}, int64_t{3}));
      const int64_t k_eff = (in.kernel.back() - 1) * in.dilations.back() + 1;
      in.shape.push_back(std::max<int64_t>(1, k_eff - in.pads_begin.back() - in.pads_end.back()) +
                         *rc::gen::inRange<int64_t>(0, 6));
    }
    in.ceil = *rc::gen::arbitrary<bool>();
    in.include_pad = in.op == Op::avg && *rc::gen::arbitrary<bool>();
    return in;
  });
}

}  // namespace
}  // namespace poolspec::test

namespace rc {
template <>
struct Arbitrary<poolspec::Intent> {
  static Gen<poolspec::Intent> arbitrary() { return poolspec::test::intent_gen(); }
};
}  // namespace rc

namespace poolspec::test {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Each framework's output extent for axis i of the translation's attributes, as its source
// writes it. `pb`, `pe` are the pads the translation passes (SAME resolved by the framework).
int64_t framework_extent(const Translation& t, const Intent& in, size_t i) {
  const int64_t d = in.shape[i + 2], k = in.kernel[i], s = in.strides[i], dl = in.dilations[i];
  const int64_t K = (k - 1) * dl + 1, pb = in.pads_begin[i], pe = in.pads_end[i];
  switch (t.framework) {
    case Framework::pytorch: {
      // Pool.h pooling_output_size: div_rtn(d + 2p - dil*(k-1) - 1 + (ceil ? s-1 : 0), s) + 1,
      // then, with ceil_mode, "ensure that the last pooling starts inside the image":
      // if ((o - 1) * s >= d + p) --o.
      int64_t o = floor_div(d + 2 * pb - dl * (k - 1) - 1 + (in.ceil ? s - 1 : 0), s) + 1;
      if (in.ceil && (o - 1) * s >= d + pb) --o;
      return o;
    }
    case Framework::tensorflow:
    case Framework::tflite:
      // kernel_shape_util.cc: VALID (d - K + s) / s; SAME (d + s - 1) / s.
      return t.attributes.find("padding=VALID") != std::string::npos ? (d - K + s) / s
                                                                     : (d + s - 1) / s;
    case Framework::onednn: {
      // dst = (d + padding_l + padding_r - K) / s + 1, padding_r as the translation wrote it.
      const size_t at = t.attributes.find("padding_r=") + 10;
      std::vector<int64_t> pr;
      std::string rest = t.attributes.substr(at, t.attributes.find(' ', at) - at);
      for (size_t b = 0; b <= rest.size();) {
        const size_t e = std::min(rest.find(',', b), rest.size());
        pr.push_back(std::stoll(rest.substr(b, e - b)));
        b = e + 1;
      }
      return (d + pb + pr[i] - K) / s + 1;
    }
    case Framework::onnx: {
      // defs.cc (opset 22): floor or ceil of (d + pads - K) / s, + 1; with ceil_mode, a last
      // window starting in the end padding is dropped. Opset 19 (old.cc) has no drop.
      const int64_t span = d + pb + pe - K;
      int64_t o = (in.ceil ? (span + s - 1) / s : span / s) + 1;
      if (in.ceil && t.input.version >= 22 && (o - 1) * s >= d + pb) --o;
      return o;
    }
    case Framework::opencv: {
      // pooling_layer.cpp getMemoryShapes: 1 + ceil or floor((d + pb + pe - k) / s), then Caffe's
      // "if (pad_end && (o - 1) * s >= d + pad_end) --o".
      const int64_t span = d + pb + pe - K;
      int64_t o = (in.ceil ? (span + s - 1) / s : span / s) + 1;
      if (pe != 0 && (o - 1) * s >= d + pe) --o;
      return o;
    }
    case Framework::armnn: {
      // Pooling2dLayer.cpp InferOutputShapes: 1 + ceil or floor((d + pb + pe - k) / s), then
      // "if ((o - 1) * s >= d + pad_low) --o", under Floor too.
      const int64_t span = d + pb + pe - K;
      int64_t o = (in.ceil ? (span + s - 1) / s : span / s) + 1;
      if ((o - 1) * s >= d + pb) --o;
      return o;
    }
    case Framework::tosa:
      // AVG_POOL2D.tosac: "ERROR_IF(OH != idiv_check(IH + pad_top + pad_bottom - kernel_y,
      // stride_y) + 1)": an exact division, or the front-end refuses.
      return (d + pb + pe - K) / s + 1;
    case Framework::stablehlo:
      // reduce_window: "num_windows = floor((padded_input_shape - dilated_window_shape) /
      // window_strides) + 1", the padded input d + low + high.
      return floor_div(d + pb + pe - K, s) + 1;
    case Framework::openvino:
    case Framework::ngraph: {
      // pooling_shape_inference_util.hpp: (d + pb + pe - K) divided by s with floor or ceil, + 1;
      // ceil_torch omits the + 1 when the last start q*s >= d + pb.
      const int64_t span = d + pb + pe - K;
      int64_t o = (in.ceil ? (span + s - 1) / s : span / s) + 1;
      if (in.ceil && t.attributes.find("ceil_torch") != std::string::npos && (o - 1) * s >= d + pb)
        --o;
      return o;
    }
  }
  return -1;
}

using Extent = int64_t (*)(const Translation&, const Intent&, size_t);

// Mutant oracle: PyTorch's extent without "ensure that the last pooling starts inside the image"
// (the pre-fix rule of pytorch/pytorch#36977's era, and of ONNX opset 19).
int64_t pytorch_without_drop(const Translation& t, const Intent& in, size_t i) {
  if (t.framework != Framework::pytorch || !in.ceil) return framework_extent(t, in, i);
  const int64_t d = in.shape[i + 2], k = in.kernel[i], s = in.strides[i], dl = in.dilations[i];
  return floor_div(d + 2 * in.pads_begin[i] - dl * (k - 1) - 1 + s - 1, s) + 1;
}

auto front_end_shapes(Extent extent) {
  return [extent](const Intent& generated) {
    const Intent in = generated;
    for (const Translation& t : translate(in)) {
      if (!t.reason.empty()) continue;
      const Result<Frontend> f = from_framework(t.framework, t.attributes, t.input);
      if (!f) {
        RC_LOG() << t.label << " refuses " << t.attributes << ": " << f.error().message << "\n";
        RC_ASSERT(!f.error().message.empty());
        continue;
      }
      RC_LOG() << t.label << ": " << t.attributes << " -> " << format_problem(f->problem) << "\n";
      const Result<ShapeInfo> shape = infer_shape(f->problem);
      RC_ASSERT(shape.ok());
      for (size_t i = 0; i + 2 < in.shape.size(); ++i) {
        RC_ASSERT(shape->output_shape[i + 2] == extent(t, in, i));
        if (t.framework != Framework::tensorflow && t.framework != Framework::tflite &&
            t.framework != Framework::onednn) {
          RC_ASSERT(f->problem.axes[i].pad_begin == in.pads_begin[i]);
          RC_ASSERT(f->problem.axes[i].pad_end == in.pads_end[i]);
        }
      }
      // It evaluates: no refusal past the front-end.
      std::vector<double> ones(static_cast<size_t>(element_count(t.input.input_shape).value()),
                               1.0);
      const Tensor input = make_tensor(in.dtype, t.input.input_shape, ones).value();
      RC_ASSERT(evaluate(f->problem, to_spec_layout(f->framing, input)).ok());
    }
  };
}

TEST_CASE("property: every front-end's accepted problem has its framework's own output shape") {
  check_property("front-end shapes", front_end_shapes(framework_extent));
}

TEST_CASE("mutant: a PyTorch shape oracle without DROP is caught by the front-end shapes") {
  const auto failure = find_counterexample(front_end_shapes(pytorch_without_drop));
  REQUIRE(failure.has_value());
  MESSAGE("front-end shapes caught the mutant oracle:\n" << *failure);
}

}  // namespace
}  // namespace poolspec::test
