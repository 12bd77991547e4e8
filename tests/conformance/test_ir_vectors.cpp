// Vectors from the compilers' own test suites, each with its source (docs/testing.md, the
// conformance label):
//  - StableHLO's testdata: JAX-generated programs that the StableHLO interpreter runs
//    (`stablehlo-translate --interpret`) against the expected tensor they hold. Transcribed here:
//    the reduce_window's attributes in poolspec's --stablehlo spelling (a value with spaces
//    quoted), the input and the expected values.
//  - TensorFlow's legalization of tf.MaxPool / tf.MaxPool3D to reduce_window (a FileCheck test
//    of the tf2xla legalizer): the reduce_window padding it writes for SAME and VALID, and the
//    op's output shape. poolspec's tensorflow front-end on the op's attributes and its stablehlo
//    front-end on the legalizer's must give the op's shape and the same values, and `diff`'s
//    StableHLO spelling of the TensorFlow problem must mean the same windows.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"

namespace poolspec {
namespace {

struct ValueVector {
  const char* source;
  const char* attributes;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<double> input;
  std::vector<int64_t> expected_shape;
  std::vector<double> expected;
};

// openxla/stablehlo stablehlo/testdata/reduce_window_max_float32_1_2_4_1.mlir, as mirrored in
// tensorflow/mlir-hlo at 759b625c9af19bd473840e4567030afd6abc1c13 (stablehlo/stablehlo/testdata/):
// init 0xFF800000 (-inf), `maximum`, window_dimensions = array<i64: 1, 2, 2, 1>, no strides or
// padding, checked with check.expect_close. A max selects inputs: the expected values are
// inputs, compared exactly.
const ValueVector testdata[] = {
    {"stablehlo/testdata/reduce_window_max_float32_1_2_4_1.mlir",
     R"(window_dimensions="array<i64: 1, 2, 2, 1>" init_value=-inf)",
     DType::f32,
     {1, 2, 4, 1},
     {6.60074186, -1.84294915, 0.118693158, -0.366554856, 1.54987848, -1.60219896, 2.51009154,
      1.65755963},
     {1, 1, 3, 1},
     {6.60074186, 2.51009154, 2.51009154}},
};

// A tf.MaxPool and the reduce_window it is legalized to.
struct Legalization {
  const char* test;  // the FileCheck test's function
  const char* tensorflow;
  const char* stablehlo;  // the legalizer's window_dimensions, window_strides and padding
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> expected_shape;  // the op's result type
};

// tensorflow/tensorflow tensorflow/compiler/mlir/tf2xla/tests/legalize-tf.mlir at
// 03ddd4b05289764bb221b5642f59d25c1b74517e, "MaxPool op legalizations": the legalizer's init is
// -2147483648 for i32 and 0xFF800000 (-inf) for f32, the body `maximum`.
const Legalization legalizations[] = {
    {"maxpool_valid_padding",
     "ksize=1,2,2,1 strides=1,4,4,1 padding=VALID data_format=NHWC",
     "window_dimensions=1,2,2,1 window_strides=1,4,4,1",
     DType::i32,
     {2, 12, 20, 7},
     {2, 3, 5, 7}},
    {"maxpool_same_padding",
     "ksize=1,2,3,1 strides=1,4,4,1 padding=SAME data_format=NHWC",
     R"(window_dimensions=1,2,3,1 window_strides=1,4,4,1 padding="[[0, 0], [0, 1], [1, 1], [0, 0]]")",
     DType::i32,
     {2, 13, 25, 7},
     {2, 4, 7, 7}},
    {"maxpool_3d_valid_padding",
     "ksize=1,1,2,2,1 strides=1,1,4,4,1 padding=VALID data_format=NDHWC",
     "window_dimensions=1,1,2,2,1 window_strides=1,1,4,4,1",
     DType::f32,
     {2, 8, 12, 20, 7},
     {2, 8, 3, 5, 7}},
    {"maxpool_3d_same_padding",
     "ksize=1,1,2,3,1 strides=1,1,4,4,1 padding=SAME data_format=NDHWC",
     R"(window_dimensions=1,1,2,3,1 window_strides=1,1,4,4,1 )"
     R"(padding="[[0, 0], [0, 0], [0, 1], [1, 1], [0, 0]]")",
     DType::f32,
     {2, 8, 13, 25, 7},
     {2, 8, 4, 7, 7}},
};

}  // namespace

TEST_CASE("StableHLO's interpreter-checked testdata: poolspec's stablehlo rules give its values") {
  for (const ValueVector& v : testdata) {
    CAPTURE(std::string(v.source));
    const FrontendInput in{Op::max, v.dtype, v.shape, 0};
    Result<Frontend> f = from_framework(Framework::stablehlo, v.attributes, in);
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    CHECK(verdict_of(Framework::stablehlo, f).kind == RuleVerdict::defined);
    std::vector<double> input;  // the file's decimals name f32 values
    for (double x : v.input) input.push_back(static_cast<float>(x));
    const Tensor x = make_tensor(v.dtype, v.shape, input).value();
    const Output out = evaluate(f->problem, to_spec_layout(f->framing, x)).value();
    const Tensor values = to_framework_layout(f->framing, out.values);
    CHECK(values.shape == v.expected_shape);
    REQUIRE(values.values.size() == v.expected.size());
    for (size_t i = 0; i < v.expected.size(); ++i) {
      CAPTURE(i);
      CHECK(values.values[i] == static_cast<double>(static_cast<float>(v.expected[i])));
    }
  }
}

namespace {

// The op's values under a front-end's reading of its attributes, in the framework's layout, over
// distinct finite inputs (no NaN: TensorFlow ignores it, StableHLO's maximum propagates it).
Tensor values_of(Framework framework, const std::string& attributes, const FrontendInput& in) {
  Result<Frontend> f = from_framework(framework, attributes, in);
  REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
  const int64_t count = element_count(in.input_shape).value();
  std::vector<double> ramp;
  for (int64_t i = 0; i < count; ++i) ramp.push_back(static_cast<double>((i * 37) % 1009 - 500));
  const Tensor x = make_tensor(in.dtype, in.input_shape, ramp).value();
  return to_framework_layout(f->framing,
                             evaluate(f->problem, to_spec_layout(f->framing, x)).value().values);
}

}  // namespace

TEST_CASE("TensorFlow's legalization to reduce_window: the same values in both rule sets") {
  for (const Legalization& l : legalizations) {
    CAPTURE(std::string(l.test));
    const FrontendInput in{Op::max, l.dtype, l.shape, 0};
    const Tensor tf = values_of(Framework::tensorflow, l.tensorflow, in);
    CHECK(tf.shape == l.expected_shape);
    const Tensor hlo = values_of(Framework::stablehlo, l.stablehlo, in);
    CHECK(hlo.shape == l.expected_shape);
    CHECK(tf.values == hlo.values);
    // diff's StableHLO spelling of the TensorFlow problem (channels first) means the same windows.
    Result<Frontend> source = from_framework(Framework::tensorflow, l.tensorflow, in);
    REQUIRE(source.ok());
    bool spelled = false;
    for (const Translation& t : translate(intent_of(*source))) {
      if (t.framework != Framework::stablehlo) continue;
      CAPTURE(t.attributes);
      REQUIRE(t.reason.empty());
      Result<Frontend> back = from_framework(t.framework, t.attributes, t.input);
      REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message));
      CHECK(back->problem.axes == source->problem.axes);
      spelled = true;
    }
    CHECK(spelled);
  }
}

}  // namespace poolspec
