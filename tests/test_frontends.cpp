// The seed front-ends (ngraph v0, OpenVINO v1), the seed documents' examples and the errata
// they pin (spec/ERRATA.md). Expected shapes are derived in the comments from the shape rules
// of docs/semantics.md section 2.3, not taken from poolspec or from the documents.
#include <doctest/doctest.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/seeds.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {
namespace {

const std::vector<int64_t> nchw32 = {1, 3, 32, 32};

Result<Problem> ov(std::string_view attributes, Op op = Op::avg,
                   std::vector<int64_t> shape = nchw32) {
  return from_openvino(attributes, FrontendInput{op, DType::f32, std::move(shape)});
}

std::vector<int64_t> ov_shape(std::string_view attributes, Op op = Op::avg) {
  Result<Problem> p = ov(attributes, op);
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message));
  return infer_shape(*p)->output_shape;
}

std::string ov_refusal(std::string_view attributes, Op op = Op::avg,
                       std::vector<int64_t> shape = nchw32) {
  Result<Problem> p = ov(attributes, op, std::move(shape));
  return p ? "" : p.error().message;
}

TEST_CASE("OpenVINO AvgPool-1: the five XML examples of the specification") {
  // 1: same_upper, s2 -> o = ceil(32/2) = 16; P = max(0, 15*2 + 2 - 32) = 0.
  CHECK(
      ov_shape(
          R"(auto_pad="same_upper" exclude-pad="true" kernel="2,2" pads_begin="0,0" pads_end="1,1" strides="2,2")") ==
      std::vector<int64_t>{1, 3, 16, 16});
  // 2: same_upper, k5, s2 -> o = 16; P = 15*2 + 5 - 32 = 3 -> pads (1, 2); floor((35-5)/2)+1 = 16.
  Result<Problem> two = ov(
      R"(auto_pad="same_upper" exclude-pad="false" kernel="5,5" pads_begin="0,0" pads_end="1,1" strides="2,2")");
  REQUIRE(two.ok());
  CHECK(infer_shape(*two)->output_shape == std::vector<int64_t>{1, 3, 16, 16});
  CHECK((two->axes[0].pad_begin == 1 && two->axes[0].pad_end == 2));
  CHECK(two->divisor == Divisor::include_full);  // exclude-pad=false with non-zero pads
  // 3: explicit, k5, pads 1/1, s3 -> floor((34-5)/3)+1 = 10.
  CHECK(
      ov_shape(
          R"(auto_pad="explicit" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="3,3")") ==
      std::vector<int64_t>{1, 3, 10, 10});
  // 4: explicit, k5, pads 1/1, s2 -> floor(29/2)+1 = 15.
  CHECK(
      ov_shape(
          R"(auto_pad="explicit" exclude-pad="false" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2")") ==
      std::vector<int64_t>{1, 3, 15, 15});
  // 5: valid -> pads 0: floor(27/2)+1 = 14.
  CHECK(
      ov_shape(
          R"(auto_pad="valid" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2")") ==
      std::vector<int64_t>{1, 3, 14, 14});
}

TEST_CASE("ERRATA E2, E10: the same_upper XML examples document 32x32; the rules give 16x16") {
  int pinned = 0;
  for (const seeds::Example& e : seeds::examples()) {
    if (e.erratum != "E2" && e.erratum != "E10") continue;
    CAPTURE(e.id);
    CHECK(e.documented_shape == std::vector<int64_t>{1, 3, 32, 32});
    CHECK(ov_shape(e.attributes, e.op) == std::vector<int64_t>{1, 3, 16, 16});
    ++pinned;
  }
  CHECK(pinned == 3);
}

TEST_CASE("ERRATA E9: MaxPool-1 example 1, row 1 column 3 is 3, not -6") {
  // Window (1, 3) with pads 1: rows 0..1, columns 2..3 -> input (0,2) = 3, (1,2) = -6 and two
  // padding taps. The maximum is 3.
  Result<Problem> p = ov(
      R"(strides="1,1" pads_begin="1,1" pads_end="1,1" kernel="2,2" rounding_type="floor" auto_pad="explicit")",
      Op::max, {1, 1, 3, 3});
  REQUIRE(p.ok());
  const Output out =
      evaluate(*p, Tensor{DType::f32, {1, 1, 3, 3}, {-1, 2, 3, 4, 5, -6, -7, 8, 9}}).value();
  CHECK(out.values.values[1 * 4 + 3] == 3);
  // Every other element matches the document (hand-checked: each window's in-bounds maximum).
  const std::vector<double> documented = {-1, 2, 3, 3, 4, 5, 5, -6, 4, 8, 9, 9, -7, 8, 9, 9};
  for (size_t i = 0; i < documented.size(); ++i)
    if (i != 7) CHECK(out.values.values[i] == documented[i]);
}

TEST_CASE("the seed catalogue: every example agrees with the spec except its recorded erratum") {
  // The same check the main job runs; a document claim that changes status fails here.
  for (const seeds::Example& e : seeds::examples()) {
    CAPTURE(e.id);
    const FrontendInput in{e.op, DType::f32, e.input_shape};
    Result<Problem> p = e.frontend == seeds::Frontend::openvino ? from_openvino(e.attributes, in)
                                                                : from_ngraph(e.attributes, in);
    REQUIRE(p.ok());
    bool agrees = infer_shape(*p)->output_shape == e.documented_shape;
    if (!e.input.empty()) {
      const Output out = evaluate(*p, Tensor{DType::f32, e.input_shape, e.input}).value();
      for (size_t k = 0; k < e.documented_output.size(); ++k) {
        const size_t at = e.documented_at.empty() ? k : static_cast<size_t>(e.documented_at[k]);
        agrees = agrees && out.values.values[at] == e.documented_output[k];
      }
    }
    CHECK(agrees == e.erratum.empty());
  }
}

TEST_CASE("ngraph v0: the corner window is 1.0 without padding in the average, 0.25 with it") {
  // 2x2 window, padding 1, input of ones: the top-left window holds one input element and three
  // padding taps. Exclude: 1/1. Include: 1/4.
  const FrontendInput in{Op::avg, DType::f32, {1, 1, 3, 3}};
  const Tensor ones{DType::f32, {1, 1, 3, 3}, std::vector<double>(9, 1.0)};
  const std::string common =
      "window_shape=2,2 window_movement_strides=1,1 padding_below=1,1 padding_above=1,1 ";
  Result<Problem> exclude = from_ngraph(common + "include_padding_in_avg_computation=false", in);
  Result<Problem> include = from_ngraph(common + "include_padding_in_avg_computation=true", in);
  REQUIRE((exclude.ok() && include.ok()));
  CHECK(evaluate(*exclude, ones)->values.values[0] == 1.0);
  CHECK(evaluate(*include, ones)->values.values[0] == 0.25);
}

TEST_CASE("ngraph v0: defaults, pad_type, ceil_mode without DROP, and its refusals") {
  const FrontendInput in{Op::avg, DType::f32, {1, 1, 5}};
  Result<Problem> p = from_ngraph("window_shape=2", in);
  REQUIRE(p.ok());
  CHECK(format_problem(*p) == "avg:f32:n1c1:w5:k2:s1:pb0:pe0:exclude:floor");
  // same_lower, d5 k2 s2: P = 1 -> below ceil(1/2) = 1.
  p = from_ngraph("window_shape=2 window_movement_strides=2 pad_type=same_lower", in);
  REQUIRE(p.ok());
  CHECK((p->axes[0].pad_begin == 1 && p->axes[0].pad_end == 0));
  // ceil_mode, d5 k2 s2 pads 1/1: ceil(5/2)+1 = 4 (ngraph has no DROP).
  const FrontendInput max_in{Op::max, DType::f32, {1, 1, 5}};
  p = from_ngraph(
      "window_shape=2 window_movement_strides=2 padding_below=1 padding_above=1 ceil_mode=true",
      max_in);
  REQUIRE(p.ok());
  CHECK(infer_shape(*p)->output_shape.back() == 4);
  CHECK((p->empty == EmptyWindow::lowest && p->nan == NanPolicy::ignore));
  // Exclude mode forbids a window no larger than a pad.
  Result<Problem> bad = from_ngraph("window_shape=2 padding_below=2", in);
  REQUIRE(!bad.ok());
  CHECK(bad.error().message.find("padding_below[0]=2") == 0);
  // Include mode with a ceil window past the padded extent: ngraph's reference throws.
  bad = from_ngraph(
      "window_shape=2 window_movement_strides=2 padding_below=1 padding_above=1 ceil_mode=true "
      "include_padding_in_avg_computation=true",
      in);
  REQUIRE(!bad.ok());
  CHECK(bad.error().message.find("end corner out of bounds") != std::string::npos);
  CHECK(!from_ngraph("window_shape=2 dilations=1", in).ok());  // not a v0 attribute
}

TEST_CASE("OpenVINO v1 refusals name the attribute, its value and the rule") {
  CHECK(ov_refusal(
            R"(kernel="0,2" strides="1,1" pads_begin="0,0" pads_end="0,0" exclude-pad="true")") ==
        "kernel[0]=0: kernel must be >= 1");
  CHECK(ov_refusal(
            R"(kernel="2,2" strides="1,0" pads_begin="0,0" pads_end="0,0" exclude-pad="true")") ==
        "strides[1]=0: strides must be >= 1");
  CHECK(ov_refusal(
            R"(kernel="2,2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" exclude-pad="true")") ==
        "kernel=\"2,2,2\": 3 values, but the input has 2 spatial axes");
  CHECK(ov_refusal(
            R"(kernel="2,2" strides="1,1" pads_begin="-1,0" pads_end="0,0" exclude-pad="true")") ==
        "pads_begin[0]=-1: pads_begin must be >= 0");
  CHECK(
      ov_refusal(R"(kernel="2,2" strides="1,1" pads_begin="0,2" pads_end="0,0" exclude-pad="true")")
          .find("pads_begin[1]=2: exclude-pad=true requires kernel[1]=2 > the pad") == 0);
  // The same pads are allowed with exclude-pad=false (the windows then average padding).
  CHECK(ov_refusal(
            R"(kernel="2,2" strides="1,1" pads_begin="0,2" pads_end="0,0" exclude-pad="false")")
            .empty());
  CHECK(
      ov_refusal(
          R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" exclude-pad="true" rounding_type="ceil_torch")")
          .find("rounding_type=ceil_torch") == 0);
  CHECK(ov_refusal(R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0")")
            .find("exclude-pad") == 0);
  CHECK(ov_refusal(R"(kernel="2" strides="1" exclude-pad="true" auto_pad="valid")", Op::avg,
                   {1, 1, 1, 1, 1, 8})
            .find("input rank 6") == 0);
  CHECK(
      ov_refusal(
          R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" exclude-pad="true" colour="red")")
          .find("colour: unknown attribute") == 0);
  CHECK(ov_refusal(R"(kernel="1,1,1" strides="1,1,1" auto_pad="valid" exclude-pad="true")", Op::avg,
                   {1, 1, 2147483647, 2147483647, 2147483647})
            .find("element count must be below 2^62") != std::string::npos);
}

TEST_CASE("OpenVINO v1: SAME with ceil and kernel < stride yields an extra, empty window") {
  // docs/semantics.md 2.3: d=6, k=1, s=4, same_upper: P = max(0, 1*4 + 1 - 6) = 0; CEIL gives
  // ceil(5/4)+1 = 3 where ONNX / TF give ceil(6/4) = 2. The third window starts at 8 >= 6.
  Result<Problem> p =
      ov(R"(kernel="1" strides="4" auto_pad="same_upper" rounding_type="ceil" exclude-pad="true")",
         Op::avg, {1, 1, 6});
  REQUIRE(p.ok());
  const ShapeInfo s = *infer_shape(*p);
  CHECK(s.output_shape.back() == 3);
  REQUIRE(s.empty_window.has_value());
  CHECK(s.empty_window->index == 2);
  // OpenVINO's reference yields 0 for it.
  const Output out = evaluate(*p, Tensor{DType::f32, {1, 1, 6}, {1, 2, 3, 4, 5, 6}}).value();
  CHECK(out.values.values == std::vector<double>{1, 5, 0});
}

TEST_CASE("OpenVINO v1: exclude-pad=false with all pads zero divides by the in-bounds count") {
  // The reference: pads_in_avg = include && any pad != 0 (notes 2.1). Valid padding, ceil: the
  // last window of d=5, k=2, s=2 holds one element and divides by 1.
  Result<Problem> p =
      ov(R"(kernel="2" strides="2" auto_pad="valid" rounding_type="ceil" exclude-pad="false")",
         Op::avg, {1, 1, 5});
  REQUIRE(p.ok());
  CHECK(p->divisor == Divisor::exclude);
  CHECK(evaluate(*p, Tensor{DType::f32, {1, 1, 5}, {1, 2, 3, 4, 5}})->values.values ==
        std::vector<double>{1.5, 3.5, 5});
}

TEST_CASE("OpenVINO: the whole <data> element may be pasted") {
  CHECK(
      ov_shape(
          R"(<data auto_pad="valid" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2"/>)") ==
      std::vector<int64_t>{1, 3, 14, 14});
}

TEST_CASE("attribute text: quoting, repeats, malformed pairs") {
  CHECK(Attributes::parse(R"(a="1" b='2' c=3)").ok());
  CHECK(!Attributes::parse(R"(a="1" a="2")").ok());
  CHECK(!Attributes::parse(R"(a="1)").ok());
  CHECK(!Attributes::parse("kernel").ok());
}

}  // namespace
}  // namespace poolspec

namespace poolspec {
namespace {

TEST_CASE("ERRATA E6: ngraph accepts a window larger than the input when padding makes room") {
  // The document says w_i <= d_i; the implementation checks w_i <= p_i + d_i + q_i.
  // d = 2, w = 3, pads 1/1: L = 4, floor((4 - 3)/1) + 1 = 2 outputs.
  Result<Problem> p = from_ngraph("window_shape=3 padding_below=1 padding_above=1",
                                  FrontendInput{Op::avg, DType::f32, {1, 1, 2}});
  REQUIRE(p.ok());
  CHECK(infer_shape(*p)->output_shape.back() == 2);
}

TEST_CASE("ERRATA E7: ngraph's all-padding average is refused, not 'infinity or nan'") {
  // d = 2, w = 1, s = 2, ceil_mode: windows start at 0 and 2; the second holds no element.
  Result<Problem> p = from_ngraph("window_shape=1 window_movement_strides=2 ceil_mode=true",
                                  FrontendInput{Op::avg, DType::f32, {1, 1, 2}});
  REQUIRE(!p.ok());
  CHECK(p.error().message.find("empty=error") == 0);
}

TEST_CASE("ERRATA E8: ngraph's ceil((p+d+q-w+1)/s) is the floor rule, for every small case") {
  for (int64_t m = 0; m < 40; ++m)  // m = p + d + q - w >= 0
    for (int64_t s = 1; s < 9; ++s) {
      CAPTURE(m);
      CAPTURE(s);
      // For non-negative numerators C++ division is floor; ceil(a/s) = (a + s - 1) / s.
      CHECK((m + 1 + s - 1) / s == m / s + 1);
    }
}

TEST_CASE("ERRATA E12: the ngraph MaxPool output formula ignores the padding it lists") {
  // d = 5, w = 2, s = 2, padding 1/1: the document's ceil((d - w + 1)/s) = 2; the rule with the
  // padding gives floor((5 + 2 - 2)/2) + 1 = 3.
  Result<Problem> p =
      from_ngraph("window_shape=2 window_movement_strides=2 padding_below=1 padding_above=1",
                  FrontendInput{Op::max, DType::f32, {1, 1, 5}});
  REQUIRE(p.ok());
  CHECK(infer_shape(*p)->output_shape.back() == 3);
  CHECK((5 - 2 + 1 + 2 - 1) / 2 == 2);
}

TEST_CASE("StableHLO C15: a dimension without a window is an empty result, in StableHLO's shape") {
  // Hand-derived from the specification's formulas (stablehlo_window.hpp): dimension 2 pads 5 to
  // 4 (a crop of 1), too short for a window of 5; dimension 0's window of 2 finds a batch of 1.
  const FrontendInput max{Op::max, DType::f32, {1, 3, 5}};
  std::optional<EmptyResult> e =
      stablehlo_empty_result("window_dimensions=1,1,5 padding=0,0,0,0,-1,0", max);
  REQUIRE(e.has_value());
  CHECK(e->input_shape == std::vector<int64_t>{1, 3, 5});
  CHECK(e->output_shape == std::vector<int64_t>{1, 3, 0});
  CHECK(e->why.find("dimension 2: no window fits") == 0);
  e = stablehlo_empty_result("window_dimensions=2,1,2 window_strides=1,1,2", max);
  REQUIRE(e.has_value());
  CHECK(e->output_shape == std::vector<int64_t>{0, 3, 2});
  // Windows on every dimension: no empty result (from_stablehlo states the Problem).
  CHECK(!stablehlo_empty_result("window_dimensions=1,1,5", max).has_value());
  // Attributes that break reduce_window's constraints are refused, not empty.
  CHECK(!stablehlo_empty_result("window_dimensions=1,1,9 window_strides=1,1,0", max).has_value());
  CHECK(!stablehlo_empty_result("window_dimensions=1,1,9 bogus=1", max).has_value());
  // An integer average is beyond the model as a Problem, yet its empty result is empty all the
  // same.
  CHECK(stablehlo_empty_result("window_dimensions=1,1,9",
                               FrontendInput{Op::avg, DType::i8, {1, 3, 5}})
            .has_value());
}

TEST_CASE("the IRs' float rules: StableHLO orders -0 below +0, TOSA leaves zeros and subnormals") {
  // StableHLO's maximum is IEEE 754-2019's: a float max is zeros=ordered; an integer max or an
  // average orders nothing.
  const auto shlo = [](Op op, DType dtype) {
    Result<Frontend> f = from_stablehlo("window_dimensions=1,1,2,2 window_strides=1,1,2,2",
                                        {op, dtype, {1, 1, 4, 4}});
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    return f->problem;
  };
  CHECK(shlo(Op::max, DType::f32).zeros == Zeros::ordered);
  CHECK(shlo(Op::max, DType::f16).zeros == Zeros::ordered);
  CHECK(shlo(Op::max, DType::i8).zeros == Zeros::equal);
  CHECK(shlo(Op::avg, DType::f32).zeros == Zeros::equal);
  CHECK(shlo(Op::max, DType::f32).subnormals == Subnormals::exact);
  // TOSA's floating-point rules leave a zero's sign open and allow flushing subnormal results;
  // its integers are exact.
  const auto tosa = [](Op op, DType dtype) {
    Result<Frontend> f = from_tosa("kernel=2,2 stride=2,2 pad=0,0,0,0", {op, dtype, {1, 4, 4, 1}});
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    return f->problem;
  };
  for (Op op : {Op::avg, Op::max}) {
    CHECK(tosa(op, DType::f32).zeros == Zeros::either);
    CHECK(tosa(op, DType::f32).subnormals == Subnormals::may_flush);
    CHECK(tosa(op, DType::i8).zeros == Zeros::equal);
    CHECK(tosa(op, DType::i8).subnormals == Subnormals::exact);
  }
}

TEST_CASE("TOSA's acc_type: FP32 on f16 or bf16 data is sums=f32, FP16 the data's own sums") {
  const auto sums = [](DType dtype, const char* acc_type) {
    Result<Frontend> f = from_tosa(std::string("kernel=2,2 stride=2,2 pad=0,0,0,0") + acc_type,
                                   {Op::avg, dtype, {1, 4, 4, 1}});
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    return f->problem.sums;
  };
  CHECK(sums(DType::f16, "") == Sums::f32);  // the default: the widest
  CHECK(sums(DType::f16, " acc_type=FP32") == Sums::f32);
  CHECK(sums(DType::f16, " acc_type=FP16") == Sums::data);
  CHECK(sums(DType::bf16, "") == Sums::f32);
  CHECK(sums(DType::f32, " acc_type=FP32") == Sums::data);  // f32 data's own format
  CHECK(sums(DType::i8, "") == Sums::data);
  // The problem string states it, and parses back.
  const Problem p =
      from_tosa("kernel=2,2 stride=2,2 pad=0,0,0,0", {Op::avg, DType::f16, {1, 4, 4, 1}})->problem;
  CHECK(format_problem(p).find(":sums=f32") != std::string::npos);
  CHECK(parse_problem(format_problem(p)).value() == canonical_problem(p));
}

}  // namespace
}  // namespace poolspec
