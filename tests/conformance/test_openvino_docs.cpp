// The OpenVINO documentation's MaxPool examples (max-pool-8.rst @ 16f3e848, whose examples 1-7
// also appear in pooling_shape_rules.rst @ 61125a89 with a ceil_torch example added; MaxPool-1
// has example 1; MaxPool-1/8/14 share the three XML layer examples), run through the openvino
// front-end at the op version each belongs to. The expected values and indices are the document's,
// transcribed; where the document is wrong (spec/ERRATA.md E9, E10) the test pins the correct
// value, derived in the comment by hand.
#include <limits>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {
namespace {

struct DocExample {
  const char* name;
  int opset;
  const char* attributes;
  std::vector<int64_t> shape;
  std::vector<double> input;
  std::vector<double> documented_values;
  std::vector<int64_t> documented_indices;
};

const std::vector<double> minus_plus_3x3 = {-1, 2, 3, 4, 5, -6, -7, 8, 9};

const DocExample examples[] = {
    {"example 1: explicit pads 1, kernel 2, stride 1",
     8,
     R"(strides="1,1" pads_begin="1,1" pads_end="1,1" kernel="2,2" rounding_type="floor" auto_pad="explicit")",
     {1, 1, 3, 3},
     minus_plus_3x3,
     {-1, 2, 3, 3, 4, 5, 5, -6, 4, 8, 9, 9, -7, 8, 9, 9},
     {0, 1, 2, 2, 3, 4, 4, 5, 3, 7, 8, 8, 6, 7, 8, 8}},
    {"example 2: 1-D valid",
     8,
     R"(strides="1" kernel="3" rounding_type="floor" auto_pad="valid")",
     {1, 1, 7},
     {-1, 2, 3, 5, -7, 9, 1},
     {3, 5, 5, 9, 9},
     {2, 3, 3, 5, 5}},
    {"example 3: same_lower",
     8,
     R"(strides="1,1" kernel="2,2" rounding_type="floor" auto_pad="same_lower")",
     {1, 1, 3, 3},
     minus_plus_3x3,
     {-1, 2, 3, 4, 5, 5, 4, 8, 9},
     {0, 1, 2, 3, 4, 4, 3, 7, 8}},
    {"example 4: same_upper, two channels, indices over the whole tensor",
     8,
     R"(strides="1,1" kernel="2,2" rounding_type="floor" auto_pad="same_upper")",
     {1, 2, 3, 3},
     {-1, 2, 3, 4, 5, -6, -7, 8, 9, 2, -1, 5, 6, -7, 1, 8, 2, -3},
     {5, 5, 3, 8, 9, 9, 8, 9, 9, 6, 5, 5, 8, 2, 1, 8, 2, -3},
     {4, 4, 2, 7, 8, 8, 7, 8, 8, 12, 11, 11, 15, 16, 14, 15, 16, 17}},
    {"example 5: valid with ceil rounding",
     8,
     R"(strides="2,2" kernel="2,2" rounding_type="ceil" auto_pad="valid")",
     {1, 1, 3, 3},
     minus_plus_3x3,
     {5, 3, 8, 9},
     {4, 2, 7, 8}},
    {"example 6: dilated kernel",
     8,
     R"(strides="1,1" kernel="2,2" dilations="2,2" rounding_type="floor" auto_pad="explicit" pads_begin="1,1" pads_end="1,1")",
     {1, 1, 3, 3},
     {1, 2, 3, 4, 5, 6, 7, 8, 9},
     {5, 6, 5, 8, 9, 8, 5, 6, 5},
     {4, 5, 4, 7, 8, 7, 4, 5, 4}},
    {"example 7: axis=2, indices within each plane",
     8,
     R"(strides="1,1" kernel="2,2" dilations="1,1" rounding_type="floor" auto_pad="explicit" pads_begin="0,0" pads_end="0,0" axis="2")",
     {1, 2, 3, 3},
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18},
     {5, 6, 8, 9, 14, 15, 17, 18},
     {4, 5, 7, 8, 4, 5, 7, 8}},
    // pooling_shape_rules.rst @ 61125a89, example 5 (ceil_torch, so MaxPool-14): ceil gives
    // ceil((3 + 2 - 2)/2) + 1 = 3 windows; the last starts at 2*2 - 1 = 3 >= d and is dropped.
    {"rules page example 5: ceil_torch (MaxPool-14)",
     14,
     R"(strides="2,2" kernel="2,2" pads_begin="1,1" pads_end="1,1" rounding_type="ceil_torch")",
     {1, 1, 3, 3},
     {1, 2, 3, 4, 5, 6, 7, 8, 9},
     {1, 3, 7, 9},
     {0, 2, 6, 8}},
};

TEST_CASE(
    "OpenVINO MaxPool-8 examples 1-7 and MaxPool-14 ceil_torch: values and indices as documented, "
    "except E9") {
  for (const DocExample& e : examples) {
    CAPTURE(e.name);
    const FrontendInput in{Op::max, DType::f32, e.shape, e.opset};
    Result<Problem> p = from_openvino(e.attributes, in);
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message));
    Result<Tensor> input = make_tensor(DType::f32, e.shape, e.input);
    REQUIRE(input.ok());
    const Output out = evaluate(*p, *input).value();
    REQUIRE(out.values.values.size() == e.documented_values.size());
    REQUIRE(out.indices.size() == e.documented_indices.size());
    for (size_t i = 0; i < e.documented_values.size(); ++i) {
      CAPTURE(i);
      if (std::string_view(e.name).substr(0, 9) == "example 1" && i == 7) {
        // ERRATA E9: output (1, 3) covers rows 0..1 and columns 2..3 of the padded input, i.e.
        // input (0,2) = 3 and (1,2) = -6 and two padding cells: the maximum is 3, at flat index
        // 0*3 + 2 = 2. The document says -6 and 5.
        CHECK(e.documented_values[i] == -6);
        CHECK(e.documented_indices[i] == 5);
        CHECK(out.values.values[i] == 3);
        CHECK(out.indices[i] == 2);
        continue;
      }
      CHECK(out.values.values[i] == e.documented_values[i]);
      CHECK(out.indices[i] == e.documented_indices[i]);
    }
  }
}

TEST_CASE("OpenVINO MaxPool-1 example 1 has the same values (MaxPool-1 has no indices output)") {
  const FrontendInput in{Op::max, DType::f32, {1, 1, 3, 3}, 1};
  Result<Problem> p = from_openvino(examples[0].attributes, in);
  REQUIRE(p.ok());
  CHECK(p->indices == Indices::none);
  const Output out =
      evaluate(*p, make_tensor(DType::f32, {1, 1, 3, 3}, minus_plus_3x3).value()).value();
  std::vector<double> expected = examples[0].documented_values;
  expected[7] = 3;  // ERRATA E9
  CHECK(out.values.values == expected);
}

TEST_CASE("ERRATA E10, E13: MaxPool-1/8/14 XML examples: same_upper stride 2 is 16x16, not 32x32") {
  // kernel 2, stride 2 on 32: same_upper gives ceil(32/2) = 16 outputs (P = max(0, 15*2 + 2 - 32)
  // = 0); explicit pads 1/1 give floor((32 + 2 - 2)/2) + 1 = 17; valid gives floor(30/2) + 1 = 16.
  struct Xml {
    const char* attributes;
    int64_t documented, correct;
  };
  const Xml xml[] = {
      {R"(auto_pad="same_upper" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")", 32,
       16},
      {R"(auto_pad="explicit" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")", 17, 17},
      {R"(auto_pad="valid" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")", 16, 16},
  };
  for (int opset : {1, 8, 14})
    for (const Xml& x : xml) {
      CAPTURE(opset);
      CAPTURE(x.attributes);
      Result<Problem> p =
          from_openvino(x.attributes, FrontendInput{Op::max, DType::f32, {1, 3, 32, 32}, opset});
      REQUIRE(p.ok());
      const std::vector<int64_t> shape = infer_shape(*p)->output_shape;
      CHECK(shape == std::vector<int64_t>{1, 3, x.correct, x.correct});
      if (x.documented != x.correct) CHECK(shape[2] != x.documented);
    }
}

TEST_CASE("OpenVINO versions: attributes arrive with their op version") {
  const auto refusal = [](std::string_view attributes, Op op, int opset) {
    Result<Problem> p =
        from_openvino(attributes, FrontendInput{op, DType::f32, {1, 1, 5, 5}, opset});
    return p ? std::string() : p.error().message;
  };
  const char* dilated_max =
      R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" dilations="2,2")";
  CHECK(refusal(dilated_max, Op::max, 1) ==
        "dilations: not an attribute of OpenVINO MaxPool-1; it exists from opset 8 (--opset 8)");
  CHECK(refusal(dilated_max, Op::max, 8).empty());
  const char* dilated_avg =
      R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" dilations="2,2" exclude-pad="true")";
  CHECK(refusal(dilated_avg, Op::avg, 14).find("from opset 16") != std::string::npos);
  CHECK(refusal(dilated_avg, Op::avg, 16).empty());
  const char* torch_avg =
      R"(kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" rounding_type="ceil_torch" exclude-pad="true")";
  CHECK(refusal(torch_avg, Op::avg, 13).find("from opset 14") != std::string::npos);
  CHECK(
      refusal(
          R"(kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" index_element_type="i16")",
          Op::max, 8) == "index_element_type=i16: must be i32 or i64");
  CHECK(refusal(R"(kernel="2,2" strides="2,2" pads_begin="0,0" pads_end="0,0" axis="4")", Op::max,
                8) == "axis=4: must be one integer in [-4, 4)");

  // ceil vs ceil_torch (openvinotoolkit/openvino#18731): 5x5, k2, s2, pads 1/1. ceil:
  // ceil((5 + 2 - 2)/2) + 1 = 4; ceil_torch drops window 3, which starts at 3*2 - 1 = 5 >= d.
  const auto rows = [](std::string_view rounding) {
    const std::string a = fmt::format(
        R"(kernel="2,2" strides="2,2" pads_begin="1,1" pads_end="1,1" rounding_type="{}")",
        rounding);
    return infer_shape(
               from_openvino(a, FrontendInput{Op::max, DType::f32, {1, 1, 5, 5}, 14}).value())
        ->output_shape[2];
  };
  CHECK(rows("ceil") == 4);
  CHECK(rows("ceil_torch") == 3);
}

TEST_CASE("OpenVINO MaxPool: a window of only -inf gives lowest() and the plane's first index") {
  // docs/semantics.md 2.2: the running max starts at lowest() with index 0 of the plane and
  // moves only on '>'. Channel 1 (plane start 3), window 0 holds -inf, -inf: lowest() = -FLT_MAX
  // and index 3; window 1 holds -inf, 7: 7 at index 3 + 2 = 5.
  const double inf = std::numeric_limits<double>::infinity();
  Result<Problem> p = from_openvino(R"(kernel="2" strides="1" pads_begin="0" pads_end="0")",
                                    FrontendInput{Op::max, DType::f32, {1, 2, 3}, 8});
  REQUIRE(p.ok());
  const Output out =
      evaluate(*p, make_tensor(DType::f32, {1, 2, 3}, {1, 2, 3, -inf, -inf, 7}).value()).value();
  CHECK(out.values.values == std::vector<double>{2, 3, -3.4028234663852886e38, 7});
  CHECK(out.indices == std::vector<int64_t>{1, 2, 3, 5});
}

}  // namespace
}  // namespace poolspec
