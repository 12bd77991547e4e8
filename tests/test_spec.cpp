// Unit tests of the spec: exact evaluation, the divisor modes, NaN / empty-window / integer
// rounding rules, indices, shapes and problem strings. Every expected value is derived by hand in
// the comment beside it (or comes from a named external vector), never from poolspec itself.
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <utility>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/exact.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/tosa_division.hpp"

namespace poolspec {
namespace {

Problem problem(std::string_view text) {
  Result<Problem> p = parse_problem(text);
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message));
  return *p;
}

Output run(std::string_view text, std::vector<double> values) {
  const Problem p = problem(text);
  Result<Output> out = evaluate(p, Tensor{p.dtype, input_shape(p), std::move(values)});
  REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().message));
  return *out;
}

std::string refusal(std::string_view text, std::vector<double> values = {}) {
  Result<Problem> p = parse_problem(text);
  if (!p) return p.error().message;
  if (values.empty()) {
    const Status s = validate(*p);
    return s ? "" : s.error().message;
  }
  Result<Output> out = evaluate(*p, Tensor{p->dtype, input_shape(*p), std::move(values)});
  return out ? "" : out.error().message;
}

std::vector<double> iota(int n, double first = 1) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = first + i;
  return v;
}

const double nan = std::numeric_limits<double>::quiet_NaN();
const double inf = std::numeric_limits<double>::infinity();

TEST_CASE("exact sum: the f32 average of 1e8, 1, -1e8, 1 is exactly 0.5") {
  // A float accumulator gives 1e8 + 1 = 1e8 (rounded), then 0, then 1: 0.25. The exact sum is 2.
  const Output out = run("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor", {1e8, 1, -1e8, 1});
  CHECK(out.values.values[0] == 0.5);
}

TEST_CASE("the 4x4 1..16, k3 s2 p1 ceil example under each divisor mode (notes 1b)") {
  // Windows per axis (start -1, 1, 3): taps {-1,0,1} {1,2,3} {3,4,5}; in the input: {0,1},
  // {1,2,3}, {3}; inside the padded extent [-1,5): 3, 3, 2 taps; every tap: 3.
  // v(r, c) = 4r + c + 1. Sums by window (row window, column window):
  const double sums[9] = {14, 30, 12, 57, 99, 36, 27, 45, 16};
  const double in_bounds[9] = {4, 6, 2, 6, 9, 3, 2, 3, 1};
  const double clipped[9] = {9, 9, 6, 9, 9, 6, 6, 6, 4};
  const std::string base = "avg:f32:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:";
  struct Mode {
    std::string divisor;
    std::function<double(int)> divisor_of;
  };
  const Mode modes[] = {{"exclude", [&](int i) { return in_bounds[i]; }},
                        {"include_clip", [&](int i) { return clipped[i]; }},
                        {"include_full", [](int) { return 9.0; }},
                        {"override=5", [](int) { return 5.0; }}};
  for (const Mode& m : modes) {
    CAPTURE(m.divisor);
    const Output out = run(base + m.divisor + ":ceil", iota(16));
    REQUIRE(out.values.shape == std::vector<int64_t>{1, 1, 3, 3});
    for (int i = 0; i < 9; ++i) {
      CAPTURE(i);
      // One IEEE f32 division of two exact small integers is the correctly rounded quotient.
      CHECK(out.values.values[static_cast<size_t>(i)] ==
            static_cast<double>(static_cast<float>(sums[i]) / static_cast<float>(m.divisor_of(i))));
    }
  }
  // The values printed in docs/semantics.md 1b (4 decimals) for the two include modes.
  const Output clip = run(base + "include_clip:ceil", iota(16));
  const Output full = run(base + "include_full:ceil", iota(16));
  CHECK(clip.values.values[2] == 2.0);
  CHECK(full.values.values[2] == doctest::Approx(1.3333).epsilon(1e-4));
  CHECK(clip.values.values[8] == 4.0);
  CHECK(full.values.values[8] == doctest::Approx(1.7778).epsilon(1e-4));
}

TEST_CASE("integer averages: the exact mean, rounded by the chosen rule, then saturated") {
  // window {3, 4}: 3.5; {-3, -4}: -3.5; override 4 over {-7}: -1.75; {1, 2, 3, 4}: 2.5.
  struct Row {
    std::string rule;
    double pos_tie, neg_tie, quarter, even_tie;
  };
  const Row rows[] = {{"half_even", 4, -4, -2, 2},
                      {"half_away", 4, -4, -2, 3},
                      {"half_up", 4, -3, -2, 3},
                      {"toward_zero", 3, -3, -1, 2},
                      {"floor", 3, -4, -2, 2},
                      // TOSA's division: half away from zero here; -7 / 4 is floor((-7 (2^30 + 1)
                      // + 2^31) / 2^32) = floor(-1.25 - 7 / 2^32) = -2.
                      {"tosa", 4, -4, -2, 3}};
  for (const Row& r : rows) {
    CAPTURE(r.rule);
    const std::string suffix = ":floor:round=" + r.rule;
    CHECK(run("avg:i8:n1c1:w2:k2:s2:pb0:pe0:exclude" + suffix, {3, 4}).values.values[0] ==
          r.pos_tie);
    CHECK(run("avg:i8:n1c1:w2:k2:s2:pb0:pe0:exclude" + suffix, {-3, -4}).values.values[0] ==
          r.neg_tie);
    CHECK(run("avg:i32:n1c1:w1:k1:s1:pb0:pe0:override=4" + suffix, {-7}).values.values[0] ==
          r.quarter);
    CHECK(run("avg:i8:n1c1:w4:k4:s4:pb0:pe0:exclude" + suffix, {1, 2, 3, 4}).values.values[0] ==
          r.even_tie);
  }
  // No accumulation in the element type: u8 {200, 200} averages to 200 (a u8 sum wraps to 144).
  CHECK(run("avg:u8:n1c1:w2:k2:s2:pb0:pe0:exclude:floor", {200, 200}).values.values[0] == 200);
  // An override below the window size can leave the range: saturate. 200 / 1 -> 127 in i8.
  CHECK(run("avg:i8:n1c1:w2:k2:s2:pb0:pe0:override=1:floor", {100, 100}).values.values[0] == 127);
}

TEST_CASE("zero points: input_zp off every tap summed, output_zp onto the quotient (TOSA)") {
  // Windows of 2x2 over -120, -105, ..., 105 (steps of 15), input_zp -3, output_zp 5, TOSA's
  // division: (-120 - 105 - 60 - 45 + 4 * 3) / 4 = -79.5 -> -80, + 5 = -75; (-210 + 12) / 4 =
  // -49.5 -> -50 + 5 = -45; (150 + 12) / 4 = 40.5 -> 41 + 5 = 46; (270 + 12) / 4 = 70.5 -> 76.
  std::vector<double> x;
  for (int i = -8; i < 8; ++i) x.push_back(15.0 * i);
  const Output o = run(
      "avg:i8:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:round=tosa:input_zp=-3:output_zp=5", x);
  CHECK(o.values.values == std::vector<double>{-75, -45, 46, 76});
  // x - input_zp leaves int8 (127 - -128 = 255) and the result saturates after output_zp.
  CHECK(run("avg:i8:n1c1:w2:k2:s2:pb0:pe0:exclude:floor:round=tosa:input_zp=-128", {127, 127})
            .values.values[0] == 127);
  CHECK(run("avg:i8:n1c1:w2:k2:s2:pb0:pe0:exclude:floor:input_zp=100:output_zp=-100", {-100, -100})
            .values.values[0] == -128);
  // round=tosa is tosa_division.hpp's transcription: by an override divisor with the sum in the
  // bias, at small counts, at the proofs' first difference and at large counts.
  // (A plain pair: clang 14 refuses CAPTURE's lambda naming a structured binding.)
  for (const std::pair<int64_t, int64_t>& sum_and_count :
       std::initializer_list<std::pair<int64_t, int64_t>>{{-7, 4},
                                                          {5, 2},
                                                          {-5, 2},
                                                          {536936210, 2109769},
                                                          {-536936210, 2109769},
                                                          {537431467, 2111715},
                                                          {2147483647, 2147483647},
                                                          {-2147483648, 1000003},
                                                          {123456789, 65537}}) {
    const int64_t acc = sum_and_count.first, count = sum_and_count.second;
    CAPTURE(acc);
    CAPTURE(count);
    const std::string problem = fmt::format(
        "avg:i32:n1c1:w1:k1:s1:pb0:pe0:override={}:floor:bias={}:round=tosa", count, acc);
    CHECK(run(problem, {0}).values.values[0] == static_cast<double>(tosa::divide(acc, count)));
  }
  // Only an integer average has zero points, each within the dtype's range.
  CHECK(!parse_problem("max:i8:n1c1:w2:k2:s2:pb0:pe0:floor:input_zp=1"));
  CHECK(!parse_problem("avg:f32:n1c1:w2:k2:s2:pb0:pe0:exclude:floor:output_zp=1"));
  const Result<Problem> wide =
      parse_problem("avg:u8:n1c1:w2:k2:s2:pb0:pe0:exclude:floor:input_zp=-1");
  REQUIRE(wide);
  const Status refused = validate(*wide);
  REQUIRE(!refused);
  CHECK(refused.error().message == "input_zp=-1: must lie in u8's range [0, 255]");
}

TEST_CASE("bias: T_out = (b + T_sum) / T_div, the XS3 document's formula") {
  // N = 4, X = 24, b = -40: (-40 + 96) / 4 = 14 exactly (xs3/README.md section 5, example 5).
  CHECK(run("avg:i8:n1c1:h2w2:k2x2:s1x1:pb0x0:pe0x0:exclude:floor:bias=-40:round=half_up",
            {24, 24, 24, 24})
            .values.values[0] == 14);
  // A bias beyond 2^53 is still added exactly: (2^60 + 1 + 1) / 2 = 2^59 + 1 in f64.
  const Output o =
      run("avg:f64:n1c1:w1:k1:s1:pb0:pe0:override=2:floor:bias=1152921504606846977", {1});
  CHECK(o.values.values[0] == std::ldexp(1.0, 59) + 1);
  CHECK(refusal("max:f32:n1c1:w1:k1:s1:pb0:pe0:floor:bias=1") ==
        "problem string 'max:f32:n1c1:w1:k1:s1:pb0:pe0:floor:bias=1': field 10 'bias=1': only an "
        "average has a bias");
}

TEST_CASE("IEEE specials in an average, and the sign of zero") {
  const std::string text = "avg:f32:n1c1:w2:k2:s2:pb0:pe0:exclude:floor";
  CHECK(std::isnan(run(text, {1, nan}).values.values[0]));
  CHECK(std::isnan(run(text, {inf, -inf}).values.values[0]));
  CHECK(run(text, {inf, 1}).values.values[0] == inf);
  CHECK(run(text, {-inf, 1}).values.values[0] == -inf);
  // IEEE addition in round-to-nearest: -0 + -0 = -0, -0 + +0 = +0, x + -x = +0.
  CHECK(std::signbit(run(text, {-0.0, -0.0}).values.values[0]));
  CHECK(!std::signbit(run(text, {-0.0, 0.0}).values.values[0]));
  CHECK(!std::signbit(run(text, {-3.0, 3.0}).values.values[0]));
  // A negative quotient too small for f32 rounds to -0: -2^-149 / 2 is a tie between -0 and
  // -2^-149; ties go to even, which is -0.
  const double tiny = std::ldexp(1.0, -149);
  CHECK(run(text, {-tiny, 0.0}).values.values[0] == 0.0);
  CHECK(std::signbit(run(text, {-tiny, 0.0}).values.values[0]));
  // f32 overflow of the exact mean is impossible; of the exact sum it does not matter:
  const double big = std::ldexp(1.0, 127) * 1.5;  // 1.5 * 2^127, f32 max is ~1.99 * 2^127
  CHECK(run(text, {big, big}).values.values[0] == big);
}

TEST_CASE("exact rounding into each float format") {
  using exact::round_quotient;
  const auto q = [](double n, long d, DType t) {
    return round_quotient(exact::to_units(n), mpz_class(d), float_format(t), false);
  };
  CHECK(q(1, 3, DType::f32) == static_cast<double>(1.0f / 3.0f));
  CHECK(q(1, 3, DType::f64) == 1.0 / 3.0);
  CHECK(q(2, 3, DType::f64) == 2.0 / 3.0);
  // f16: max finite 65504; 65520 lies halfway to 65536 (which overflows) and ties to even -> inf.
  CHECK(q(65519, 1, DType::f16) == 65504);
  CHECK(q(65520, 1, DType::f16) == inf);
  // f16 subnormals are multiples of 2^-24: 2^-25 ties to 0 (even), 3 * 2^-26 rounds up to 2^-24.
  CHECK(q(std::ldexp(1.0, -25), 1, DType::f16) == 0);
  CHECK(q(3 * std::ldexp(1.0, -26), 1, DType::f16) == std::ldexp(1.0, -24));
  // bf16 has 8 significant bits: 257 is a tie between 256 and 258 -> 256; 259 -> 260.
  CHECK(q(257, 1, DType::bf16) == 256);
  CHECK(q(259, 1, DType::bf16) == 260);
  // The smallest f64 subnormal survives exactly: 2^-1074 * 3 / 3.
  CHECK(q(3 * std::ldexp(1.0, -1074), 3, DType::f64) == std::ldexp(1.0, -1074));
}

TEST_CASE("max: NaN policies, ties, -0, indices") {
  const std::string base = "max:f32:n1c1:w3:k3:s3:pb0:pe0:floor";
  Output o = run(base + ":idx=plane", {1, nan, 3});
  CHECK(std::isnan(o.values.values[0]));
  CHECK(o.indices[0] == 1);  // the first NaN
  o = run(base + ":nan=ignore:idx=plane", {1, nan, 3});
  CHECK(o.values.values[0] == 3);
  CHECK(o.indices[0] == 2);
  o = run(base + ":nan=ignore:idx=plane", {nan, nan, nan});
  CHECK(std::isnan(o.values.values[0]));
  o = run(base + ":idx=plane", {5, 2, 5});
  CHECK(o.indices[0] == 0);  // ties: the first in scan order
  o = run(base + ":idx=plane", {-0.0, 0.0, -1});
  CHECK(std::signbit(o.values.values[0]));                        // -0 and +0 tie; the first wins
  CHECK(run(base, {-inf, -inf, -inf}).values.values[0] == -inf);  // the true maximum
}

TEST_CASE("max: zeros=ordered puts -0 below +0, zeros=either leaves a zero's sign open") {
  const std::string base = "max:f32:n1c1:w4:k4:s4:pb0:pe0:floor";
  // IEEE 754-2019 maximum: +0 whatever the order, its index the first +0's.
  Output o = run(base + ":idx=plane:zeros=ordered", {-0.0, -0.0, 0.0, 0.0});
  CHECK(o.values.values[0] == 0);
  CHECK(!std::signbit(o.values.values[0]));
  CHECK(o.indices[0] == 2);
  o = run(base + ":idx=plane:zeros=ordered", {0.0, -0.0, -1, -0.0});
  CHECK(!std::signbit(o.values.values[0]));
  CHECK(o.indices[0] == 0);
  CHECK(std::signbit(run(base + ":zeros=ordered", {-0.0, -0.0, -1, -2}).values.values[0]));
  // From lowest, the strict scan moves from -0 to +0 too.
  CHECK(!std::signbit(
      run(base + ":nan=ignore:start=lowest:zeros=ordered", {-0.0, 0.0, -1, -2}).values.values[0]));
  // equal and either: the first zero.
  CHECK(std::signbit(run(base, {-0.0, 0.0, -1, -2}).values.values[0]));
  CHECK(std::signbit(run(base + ":zeros=either", {-0.0, 0.0, -1, -2}).values.values[0]));
  // The string says only what applies, and validate refuses what would be open.
  CHECK(format_problem(problem(base + ":zeros=ordered")) == base + ":zeros=ordered");
  CHECK(format_problem(problem(base + ":zeros=equal")) == base);
  CHECK(refusal("max:i8:n1c1:w4:k4:s4:pb0:pe0:floor:zeros=ordered")
            .find("only a float dtype has two zeros") != std::string::npos);
  CHECK(refusal("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:zeros=ordered")
            .find("only a max orders -0 below +0") != std::string::npos);
  CHECK(problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:zeros=either").zeros == Zeros::either);
  CHECK(refusal(base + ":idx=plane:zeros=either") ==
        "zeros=either with indices=plane: where a zero result may take either sign, which zero's "
        "index it reports is not defined");
  CHECK(refusal(base + ":zeros=sometimes").find("zeros must be one of equal ordered either") !=
        std::string::npos);
}

TEST_CASE("sums=f32: said of f16 and bf16 averages, refused where no sums are rounded") {
  const std::string half = "avg:f16:n1c1:w4:k4:s4:pb0:pe0:exclude:floor";
  CHECK(problem(half + ":sums=f32").sums == Sums::f32);
  CHECK(format_problem(problem(half + ":sums=f32")) == half + ":sums=f32");
  CHECK(format_problem(problem(half + ":sums=data")) == half);
  CHECK(format_problem(problem("avg:bf16:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:sums=f32"))
            .ends_with(":sums=f32"));
  // f32 sums are f32 data's own: the string drops what says nothing.
  CHECK(format_problem(problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:sums=f32")) ==
        "avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor");
  CHECK(refusal("max:f16:n1c1:w4:k4:s4:pb0:pe0:floor:sums=f32")
            .find("only a float average rounds its sums") != std::string::npos);
  CHECK(refusal("avg:i8:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:sums=f32")
            .find("only a float average rounds its sums") != std::string::npos);
  CHECK(refusal(half + ":sums=f16").find("sums must be one of data f32") != std::string::npos);
}

TEST_CASE("zero_within: a zero within the bound, or flushed, of the sign the value allows") {
  const Problem flush = problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:subnormals=may_flush");
  const Problem either =
      problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:zeros=either:subnormals=may_flush");
  const Problem exact = problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor");
  const double normal = std::ldexp(1.0, -126), tiny = std::ldexp(1.0, -149);
  // 1.5 * 2^-126 within 2^-126: as low as 2^-127, subnormal, so a flush to +0 is allowed.
  CHECK(zero_within(flush, 1.5 * normal, normal, 0.5 * normal, false, 0.0));
  CHECK(!zero_within(flush, 1.5 * normal, normal, 0.5 * normal, false,
                     -0.0));  // that value is positive
  CHECK(zero_within(either, 1.5 * normal, normal, 0.5 * normal, false, -0.0));
  CHECK(!zero_within(exact, 1.5 * normal, normal, 0.5 * normal, false, 0.0));  // no flush asked
  CHECK(!zero_within(flush, 2.0 * normal, normal, 0.5 * normal, false,
                     0.0));  // no subnormal in reach
  CHECK(!zero_within(flush, 1.5 * normal, normal, 0.5 * normal, false, normal));  // not a zero
  CHECK(zero_within(flush, -1.5 * normal, normal, 0.5 * normal, false, -0.0));
  // A value before the last rounding of either sign: a zero of either sign.
  CHECK(zero_within(flush, 0.5 * normal, normal, normal, false, -0.0));
  CHECK(!zero_within(flush, std::nan(""), normal, normal, false, 0.0));
  // Within the bound without a flush: the sign is the value's, whatever the last rounding allows.
  CHECK(zero_within(exact, -0.0, tiny, 0, false, -0.0));
  CHECK(!zero_within(exact, -0.0, tiny, 0, false, 0.0));  // -0 from a value below zero
  CHECK(zero_within(exact, -0.0, tiny, 0, true, 0.0));    // a window of -0s, summed from +0
  CHECK(!zero_within(exact, 0.0, tiny, 0, true, -0.0));   // no sum of a +0 gives -0
  CHECK(zero_within(exact, -0.0, tiny, tiny, false, 0.0));
  CHECK(!zero_within(exact, tiny, tiny, 0.5 * tiny, false, -0.0));
  CHECK(zero_within(exact, tiny, tiny, 0.5 * tiny, false, 0.0));
}

TEST_CASE("same_result: the value, or what zeros=either and subnormals=may_flush allow") {
  const Problem exact = problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor");
  const Problem tosa =
      problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:zeros=either:subnormals=may_flush");
  const Problem flush_only =
      problem("avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:subnormals=may_flush");
  const double subnormal = std::ldexp(1.0, -130), smallest_normal = std::ldexp(1.0, -126);
  CHECK(same_result(exact, 1.5, 1.5));
  CHECK(!same_result(exact, 0.0, -0.0));
  CHECK(same_result(tosa, 0.0, -0.0));
  CHECK(same_result(tosa, -0.0, 0.0));
  CHECK(!same_result(exact, subnormal, 0.0));
  CHECK(same_result(flush_only, subnormal, 0.0));
  CHECK(!same_result(flush_only, subnormal, -0.0));  // a flush keeps the sign
  CHECK(same_result(flush_only, -subnormal, -0.0));
  CHECK(same_result(tosa, -subnormal, 0.0));        // unless either sign is right
  CHECK(!same_result(tosa, smallest_normal, 0.0));  // a normal result is never flushed
  CHECK(!same_result(tosa, subnormal, 2 * subnormal));
  CHECK(!same_result(tosa, 0.0, subnormal));
  // Integer dtypes have neither freedom; the string refuses them there.
  CHECK(refusal("max:i8:n1c1:w4:k4:s4:pb0:pe0:floor:subnormals=may_flush")
            .find("only a float dtype has subnormals") != std::string::npos);
  CHECK(format_problem(flush_only) ==
        "avg:f32:n1c1:w4:k4:s4:pb0:pe0:exclude:floor:subnormals=may_flush");
}

TEST_CASE("max indices: ONNX test_maxpool_with_argmax_2d_precomputed_strides") {
  // External vector (ONNX backend node test, decoded in docs/semantics.md section 5): 5x5 input
  // 1..25, kernel 2, stride 2, storage_order 1 -> indices [[6, 16], [8, 18]], values 7 9 17 19.
  const Output o =
      run("max:f32:n1c1:h5w5:k2x2:s2x2:pb0x0:pe0x0:floor:idx=tensor:order=col", iota(25));
  CHECK(o.values.values == std::vector<double>{7, 9, 17, 19});
  CHECK(o.indices == std::vector<int64_t>{6, 16, 8, 18});
  // Row-major, whole tensor, second channel: the plane offset 25 is added.
  const Output t = run("max:f32:n1c2:h5w5:k2x2:s2x2:pb0x0:pe0x0:floor:idx=tensor", iota(50));
  CHECK(t.indices == std::vector<int64_t>{6, 8, 16, 18, 31, 33, 41, 43});
  const Output p = run("max:f32:n1c2:h5w5:k2x2:s2x2:pb0x0:pe0x0:floor:idx=plane", iota(50));
  CHECK(p.indices == std::vector<int64_t>{6, 8, 16, 18, 6, 8, 16, 18});
}

TEST_CASE("empty windows: DROP without padding, and each empty-window value") {
  // d=2, k=1, s=2: ceil gives ceil(1/2) + 1 = 2 windows, starting at 0 and 2; the second holds
  // nothing. ceil_torch drops it: (2-1)*2 = 2 >= d + pb = 2 (notes 0; ONNX
  // maxpool_2d_ceil_output_size_reduce_by_one).
  const std::string base = "avg:f32:n1c1:w2:k1:s2:pb0:pe0:exclude";
  CHECK(run(base + ":ceil_torch", {7, 8}).values.shape == std::vector<int64_t>{1, 1, 1});
  CHECK(run(base + ":ceil:empty=zero", {7, 8}).values.values == std::vector<double>{7, 0});
  CHECK(std::isnan(run(base + ":ceil:empty=nan", {7, 8}).values.values[1]));
  CHECK(run(base + ":ceil:empty=lowest", {7, 8}).values.values[1] ==
        -std::numeric_limits<float>::max());
  CHECK(run(base + ":ceil:empty=-inf", {7, 8}).values.values[1] == -inf);
  CHECK(run("max:i8:n1c1:w2:k1:s2:pb0:pe0:ceil:empty=lowest:idx=plane", {7, 8}).values.values[1] ==
        -128);
  CHECK(run("max:i8:n1c1:w2:k1:s2:pb0:pe0:ceil:empty=lowest:idx=plane", {7, 8}).indices[1] == -1);
  // empty=error refuses the problem and names the window.
  const std::string why = refusal(base + ":ceil");
  CHECK(why.find("empty=error") != std::string::npos);
  CHECK(why.find("output index 1 of spatial axis 0") != std::string::npos);
  // include_full never divides by zero: 0 / 1 = 0 for the window past the end.
  CHECK(run("avg:f32:n1c1:w2:k1:s2:pb0:pe0:include_full:ceil", {7, 8}).values.values[1] == 0);
}

TEST_CASE("shape rules: floor, ceil, ceil_torch, dilation") {
  const auto extent = [](int64_t d, int64_t k, int64_t s, int64_t dl, int64_t pb, int64_t pe,
                         Rounding r) {
    return formulas::output_extent(formulas::terms_of<int64_t>(Axis{d, k, s, dl, pb, pe}), r);
  };
  // 5, k2, s2, p1 (openvino#18731): L = 7; floor(5/2)+1 = 3; ceil(5/2)+1 = 4; DROP: 3*2 = 6 >= 6.
  CHECK(extent(5, 2, 2, 1, 1, 1, Rounding::floor) == 3);
  CHECK(extent(5, 2, 2, 1, 1, 1, Rounding::ceil) == 4);
  CHECK(extent(5, 2, 2, 1, 1, 1, Rounding::ceil_torch) == 3);
  // dilation: 32, k5, d2, s3 -> K = 9; floor(23/3)+1 = 8, ceil -> 9 (ONNX 3d_dilations_large).
  CHECK(extent(32, 5, 3, 2, 0, 0, Rounding::floor) == 8);
  CHECK(extent(32, 5, 3, 2, 0, 0, Rounding::ceil) == 9);
  CHECK(extent(32, 5, 3, 2, 0, 0, Rounding::ceil_torch) == 9);
  // same pads, d = 5, k = 2, s = 2: o = 3, P = 2*2 + 2 - 5 = 1: upper (0, 1), lower (1, 0).
  const auto upper = formulas::same_pads<int64_t>(5, 2, 2, 1, true);
  const auto lower = formulas::same_pads<int64_t>(5, 2, 2, 1, false);
  CHECK((upper.begin == 0 && upper.end == 1 && lower.begin == 1 && lower.end == 0));
  // k < s: P = max(0, (2-1)*4 + 1 - 6) = 0, never negative (onnxruntime#10086).
  const auto none = formulas::same_pads<int64_t>(6, 1, 4, 1, true);
  CHECK((none.begin == 0 && none.end == 0));
}

TEST_CASE("size arithmetic is overflow-checked") {
  // 2^31-1 cubed is about 2^93 elements.
  const std::string why = refusal(
      "avg:f32:n1c1:d2147483647h2147483647w2147483647:k1x1x1:s1x1x1:pb0x0x0:pe0x0x0:exclude:floor");
  CHECK(why.find("element count must be below 2^62") != std::string::npos);
  CHECK(refusal("avg:f32:n1c1:w2147483648:k1:s1:pb0:pe0:exclude:floor").find("below 2^31") !=
        std::string::npos);
  // "rounding=..." is no field (a rounding is written alone); found by fuzz_problem_string.
  CHECK(refusal("avg:i32:n1c1:w5:k2:rounding=ceil").find("a rounding is written alone") !=
        std::string::npos);
  // A word poolspec does not know is called so, after a divisor too, and for max: it is not a
  // second divisor.
  for (const char* text : {"avg:f32:n1c1:w4:k2:s2:pb0:pe0:exclude:floor:bogus",
                           "max:f32:n1c1:w4:k2:s2:pb0:pe0:floor:bogus"}) {
    const std::string unknown = refusal(text);
    CHECK(unknown.find("'bogus': unknown field") != std::string::npos);
    CHECK(unknown.find("divisor' is given twice") == std::string::npos);
  }
  CHECK(refusal("avg:f32:n1c1:w4:k0:s1:pb0:pe0:exclude:floor") ==
        "kernel[0]=0: kernel must be >= 1");
  CHECK(refusal("avg:f32:n1c1:h4w4:k2x2:s1x0:pb0x0:pe0x0:exclude:floor") ==
        "strides[1]=0: strides must be >= 1");
  CHECK(refusal("avg:f32:n1c1:w4:k2:s1:pb-1:pe0:exclude:floor") ==
        "pads_begin[0]=-1: pads_begin must be >= 0");
  CHECK(refusal("avg:f32:n1c1:w4:k7:s1:pb1:pe1:exclude:floor")
            .find("must fit in the padded input extent 6") != std::string::npos);
  CHECK(refusal("avg:i8:n1c1:w4:k2:s1:pb0:pe0:exclude:floor:empty=nan") ==
        "empty=nan: not a value of the integer dtype i8");
  CHECK(refusal("avg:f32:n1c1:w4:k2:s2:pb0:pe0:exclude:floor:idx=plane").find("only max pooling") !=
        std::string::npos);
}

TEST_CASE("evaluate refuses an input that does not fit the problem") {
  const Problem p = problem("avg:f32:n1c1:w4:k2:s2:pb0:pe0:exclude:floor");
  CHECK(!evaluate(p, Tensor{DType::f32, {1, 1, 5}, iota(5)}).ok());
  CHECK(!evaluate(p, Tensor{DType::f16, {1, 1, 4}, iota(4)}).ok());
  CHECK(!evaluate(p, Tensor{DType::f32, {1, 1, 4}, iota(3)}).ok());
}

TEST_CASE("rank-generic: a 4-D spatial problem evaluates") {
  // 2x2x2x2 input of ones, kernel 2 on every axis: one window of 16 ones -> 1.
  const Output o = run("avg:f64:n1c1:i2x2x2x2:k2x2x2x2:s1x1x1x1:pb0x0x0x0:pe0x0x0x0:exclude:floor",
                       std::vector<double>(16, 1.0));
  CHECK(o.values.values == std::vector<double>{1.0});
}

TEST_CASE("explain: taps, padding kinds, divisor and exact value of a corner window") {
  const Problem p = problem("avg:f32:n1c1:h3w3:k2x2:s2x2:pb1x1:pe0x0:include_clip:ceil");
  // L = 4, (4 - 2)/2 -> 2 outputs per axis; window (1,1) starts at input (1,1): all inside.
  // Window (0,0): taps (-1,-1) (-1,0) (0,-1) (0,0); only (0,0) = 1 is in the input.
  Result<Explanation> ex = explain(p, Tensor{DType::f32, {1, 1, 3, 3}, iota(9)}, {0, 0, 0, 0});
  REQUIRE(ex.ok());
  CHECK(ex->taps.size() == 4);
  CHECK(ex->taps[0].kind == TapKind::pad_begin);
  CHECK(ex->taps[3].kind == TapKind::input);
  CHECK(ex->in_bounds == 1);
  CHECK(ex->divisor == 4);
  CHECK(ex->exact_value.rfind("1/4", 0) == 0);
  CHECK(ex->result == 0.25);
  CHECK(!explain(p, Tensor{DType::f32, {1, 1, 3, 3}, iota(9)}, {0, 0, 2, 0}).ok());
  // A corner tap in the begin padding of one axis and past the padded extent of another is
  // overhang: window (0,2) of a 4x4 input, kernel 3, stride 2, pads 1, ceil, has tap (0,2) at
  // input (-1,5), and 5 >= 4 + 1.
  const Problem q = problem("avg:f32:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil");
  Result<Explanation> corner = explain(q, Tensor{DType::f32, {1, 1, 4, 4}, iota(16)}, {0, 0, 0, 2});
  REQUIRE(corner.ok());
  CHECK(corner->taps[2].coordinate == std::vector<int64_t>{-1, 5});
  CHECK(corner->taps[2].kind == TapKind::overhang);
  CHECK(corner->taps[1].kind == TapKind::pad_begin);  // (-1,4): begin padding, end padding
}

TEST_CASE("problem strings: canonical form, round trip, errors") {
  const std::string design = "avg:f32:n2c16:h7w7:k3x3:s1x1:pb1x1:pe1x1:exclude:floor";
  CHECK(format_problem(problem(design)) == design);
  for (std::string_view canonical : {"max:u8:n1c3:d4h5w6:k2x2x2:s1x2x3:dl1x2x1:pb0x1x0:pe1x0x1:"
                                     "ceil_torch:empty=lowest:nan=ignore:idx=tensor:order=col",
                                     "avg:bf16:n3c1:w9:k3:s2:pb1:pe2:override=7:ceil:empty=-inf",
                                     "avg:i32:n1c1:i2x3x4x5:k1x1x1x1:s1x1x1x1:pb0x0x0x0:pe0x0x0x0:"
                                     "include_full:floor:round=toward_zero",
                                     "max:f16:n1c1:w3:k3:s1:pb0:pe0:floor"}) {
    CAPTURE(canonical);
    CHECK(format_problem(problem(canonical)) == canonical);
  }
  // Fields may come in any order after the spatial extents; defaults fill the rest.
  CHECK(format_problem(problem("avg:f32:n1c1:w8:ceil:k2")) ==
        "avg:f32:n1c1:w8:k2:s1:pb0:pe0:exclude:ceil");
  CHECK(!parse_problem("avg:f32:n1c1:h4w4:k2").ok());          // one value for two axes
  CHECK(!parse_problem("avg:f32:n1c1:h4w4:s1x1:pb0x0").ok());  // no kernel
  CHECK(!parse_problem("mean:f32:n1c1:w4:k2").ok());
  CHECK(!parse_problem("avg:f32:n1c1:w4:k2:k3").ok());  // repeated field
  CHECK(!parse_problem("avg:f32:n1c1:wh4:k2").ok());
  CHECK(!parse_problem("avg:f32:n1c1:w4:k2:empty=maybe").ok());
  CHECK(parse_problem("avg:f32:n1c1:w4:k2x").error().message ==
        "problem string 'avg:f32:n1c1:w4:k2x': field 5 'k2x': '' is not an integer");
}

TEST_CASE("checked integers: overflow is sticky and flows through comparisons") {
  const CheckedInt big(std::numeric_limits<int64_t>::max());
  CHECK((big + 1).overflowed());
  CHECK(!(big - 1).overflowed());
  CHECK(select(big + 1 > 0, CheckedInt(1), CheckedInt(2)).overflowed());
  CHECK(floor_div(int64_t{-3}, int64_t{2}) == -2);
  CHECK(ceil_div(int64_t{-3}, int64_t{2}) == -1);
  CHECK(ceil_div(int64_t{3}, int64_t{2}) == 2);
}

}  // namespace
}  // namespace poolspec
