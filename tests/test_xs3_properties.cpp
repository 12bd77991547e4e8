// Properties of the XS3 model against the spec's meaning of each operator (the xs3 front-end),
// and mutants of the model they must catch.
#include <cmath>

#include <doctest/doctest.h>

#include "generators.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/xs3/operator.hpp"
#include "rapidcheck_doctest.hpp"

namespace poolspec::test {
namespace {

using Xs3Engine = Result<Tensor> (*)(const Xs3Operator&, const Tensor&);

Result<Tensor> model_engine(const Xs3Operator& op, const Tensor& x) {
  return xs3::run_operator(op, x);
}

// Mutant: round half to even instead of RSHR's half up (the global op, recomputed with the
// model's own VLMACC but a different rounding).
Result<Tensor> half_even_engine(const Xs3Operator& op, const Tensor& x) {
  if (op.kind != Xs3Operator::Kind::avgpool2d_global) return xs3::run_operator(op, x);
  Result<xs3::ScaleShift> ss =
      op.has_scale_shift ? Result<xs3::ScaleShift>(xs3::ScaleShift{int(op.scale), int(op.shift)})
                         : xs3::scale_and_shift(uint64_t(op.height * op.width));
  if (!ss) return ss.error();
  Tensor y{DType::i8, {1, 1, op.channels}, std::vector<double>(size_t(op.channels))};
  const int lower = op.symmetric ? -127 : -128;
  for (int64_t ch = 0; ch < op.channels; ++ch) {
    int32_t acc = static_cast<int32_t>(op.bias);
    for (int64_t p = 0; p < op.height * op.width; ++p)
      acc = xs3::vlmacc8(acc, int8_t(ss->scale), int8_t(x.values[size_t(p * op.channels + ch)]),
                         xs3::Accumulation::saturate);
    const double scaled = std::ldexp(double(acc), -ss->shift);
    y.values[size_t(ch)] =
        std::clamp(std::nearbyint(scaled), double(lower), 127.0);  // ties to even
  }
  return y;
}

// Mutant: the symmetric configuration ignored, -128 kept.
Result<Tensor> keeps_minus_128_engine(const Xs3Operator& op, const Tensor& x) {
  Xs3Operator standard = op;
  standard.symmetric = false;
  return xs3::run_operator(standard, x);
}

// A random XS3 case: the operator's attribute text and its (H, W, C) image, values biased toward
// the extremes where the rounding and saturation rules differ.
struct Xs3Case {
  std::string attributes;
  Tensor image;
};

void showValue(const Xs3Case& k, std::ostream& os) {
  os << k.attributes << " on (H, W, C) = (" << k.image.shape[0] << ", " << k.image.shape[1] << ", "
     << k.image.shape[2] << ") [";
  for (size_t i = 0; i < k.image.values.size() && i < 48; ++i)
    os << (i ? " " : "") << k.image.values[i];
  os << (k.image.values.size() > 48 ? " ...]" : "]");
}

rc::Gen<int> pixel_gen() {
  return rc::gen::weightedOneOf<int>({{4, rc::gen::inRange(-128, 128)},
                                      {2, rc::gen::element(-128, -127, 127)},
                                      {2, rc::gen::inRange(-4, 5)}});
}

rc::Gen<Tensor> image_gen(int64_t h, int64_t w, int64_t c) {
  return rc::gen::map(
      rc::gen::container<std::vector<int>>(size_t(h * w * c), pixel_gen()),
      [h, w, c](const std::vector<int>& v) {
        return Tensor{DType::i8, {h, w, c}, std::vector<double>(v.begin(), v.end())};
      });
}

// power_of_two: the global op's pixel count is a power of two (so lib_nn's scale is 1).
rc::Gen<Xs3Case> global_case_gen(bool power_of_two, bool with_bias) {
  return rc::gen::exec([=] {
    int64_t h = 0, w = 0;
    if (power_of_two) {
      h = int64_t{1} << *rc::gen::inRange(0, 4);
      w = int64_t{1} << *rc::gen::inRange(0, 4);
    } else {
      h = *rc::gen::inRange(1, 12);
      w = *rc::gen::inRange(1, 12);
    }
    const int64_t c = *rc::gen::inRange(1, 9);
    const int64_t bias = with_bias ? *rc::gen::inRange(-4096, 4097) : 0;
    const bool symmetric = *rc::gen::arbitrary<bool>();
    const std::string text = "op=avgpool2d_global bias=" + std::to_string(bias) +
                             " symmetric=" + (symmetric ? "1" : "0");
    return Xs3Case{text, *image_gen(h, w, c)};
  });
}

rc::Gen<Xs3Case> window_case_gen(std::string_view op) {
  return rc::gen::exec([op = std::string(op)] {
    const int64_t wh = *rc::gen::inRange(1, 5), ww = *rc::gen::inRange(1, 5);
    const int64_t sv = *rc::gen::inRange(1, 4), sh = *rc::gen::inRange(1, 4);
    const int64_t r0 = *rc::gen::inRange(0, 3), c0 = *rc::gen::inRange(0, 3);
    const int64_t h = r0 + wh + *rc::gen::inRange(0, 8), w = c0 + ww + *rc::gen::inRange(0, 8);
    const int64_t c = 4 * *rc::gen::inRange(1, 3);
    const bool symmetric = *rc::gen::arbitrary<bool>();
    const std::string text =
        "op=" + op + " window=" + std::to_string(wh) + "," + std::to_string(ww) +
        " start=" + std::to_string(r0) + "," + std::to_string(c0) +
        " stride=" + std::to_string(sv) + "," + std::to_string(sh) +
        (op == "avgpool2d" ? std::string(" symmetric=") + (symmetric ? "1" : "0") : "");
    return Xs3Case{text, *image_gen(h, w, c)};
  });
}

// The spec's output of the operator, in (H, W, C), and the model's; the lower saturation bound.
struct Compared {
  Tensor model, spec;
  int lower;
};

Compared compare(Xs3Engine engine, const Xs3Case& k) {
  RC_LOG() << k.attributes << " on a " << k.image.shape[0] << "x" << k.image.shape[1] << "x"
           << k.image.shape[2] << " image\n";
  const Xs3Frontend f = from_xs3(k.attributes, k.image.shape).value();
  Result<Tensor> model = engine(f.op, k.image);
  RC_PRE(model.ok());  // rejected pixel counts (N = 255, ...) are init errors, tested elsewhere
  const Output spec = evaluate(f.problem, to_spec_layout(f.framing, k.image)).value();
  return Compared{*model, to_framework_layout(f.framing, spec.values),
                  f.op.symmetric ? -127 : -128};
}

// "exact (half-up rounding of the spec's mean, then saturation) whenever the pixel count is a
// power of two": RSHR(b + sum, log2 N) is the half-up mean, bias included.
auto exact_for_powers_of_two(Xs3Engine engine) {
  return [engine] {
    const Compared c = compare(engine, *global_case_gen(true, true));
    for (size_t i = 0; i < c.model.values.size(); ++i)
      RC_ASSERT(c.model.values[i] == std::max(c.spec.values[i], double(c.lower)));
  };
}

// Otherwise within the bound: with b = 0 the model's s*S/2^r and the exact mean S/N differ by
// |S/N| * |s*N/2^r - 1| <= 128 * (N/2) / 2^(c+6) <= 1 (s is 2^(c+6)/N rounded, so
// |s*N - 2^(c+6)| <= N/2, and 2^c >= N); two reals at most 1 apart round half up to integers at
// most 1 apart, and saturation only narrows that. Bound: 1 -- proved by the proofs
// xs3/error-bound/distance/real and xs3/error-bound/rounding/real, and reached
// (xs3/error-bound-is-tight/int).
auto within_one(Xs3Engine engine, rc::Gen<Xs3Case> cases) {
  return [engine, cases] {
    const Compared c = compare(engine, *cases);
    for (size_t i = 0; i < c.model.values.size(); ++i)
      RC_ASSERT(std::fabs(c.model.values[i] - std::max(c.spec.values[i], double(c.lower))) <= 1);
  };
}

// "maxpool equals the spec's max".
auto max_equals_spec(Xs3Engine engine) {
  return [engine] {
    const Compared c = compare(engine, *window_case_gen("maxpool2d"));
    RC_ASSERT(c.model.values == c.spec.values);
  };
}

// "splitting the work into any valid set of jobs never changes an output".
TEST_CASE("xs3 property: any valid split into jobs gives the same outputs") {
  check_property("global jobs", [] {
    const Xs3Case k = *global_case_gen(false, true);
    const Xs3Frontend f = from_xs3(k.attributes, k.image.shape).value();
    Result<Tensor> whole = xs3::run_operator(f.op, k.image);
    RC_PRE(whole.ok());
    // Random cut points split the channels into consecutive jobs, with an empty job first.
    std::vector<xs3::GlobalJobParams> jobs{{0, 0}};
    uint32_t start = 0;
    const auto channels = static_cast<uint32_t>(f.op.channels);
    while (start < channels) {
      const uint32_t count = *rc::gen::inRange<uint32_t>(1, channels - start + 1);
      jobs.push_back({start, count});
      start += count;
    }
    RC_ASSERT(xs3::run_operator(f.op, k.image, jobs).value().values == whole->values);
  });
  for (std::string_view op : {"avgpool2d", "maxpool2d"})
    check_property(std::string(op) + " jobs", [op] {
      const Xs3Case k = *window_case_gen(op);
      const Xs3Frontend f = from_xs3(k.attributes, k.image.shape).value();
      Result<Tensor> whole = xs3::run_operator(f.op, k.image);
      RC_PRE(whole.ok());
      // Blocks: rows cut at a random point, channels in groups of 4, all columns.
      const auto rows = static_cast<int32_t>(f.op.out_h), cols = static_cast<int32_t>(f.op.out_w);
      const auto channels = static_cast<int32_t>(f.op.channels);
      const int32_t cut = *rc::gen::inRange<int32_t>(0, rows + 1);
      std::vector<xs3::WindowJobParams> jobs;
      for (int32_t ch = 0; ch < channels; ch += 4) {
        jobs.push_back({0, 0, ch, cut, cols, 4});
        jobs.push_back({cut, 0, ch, rows - cut, cols, 4});
      }
      RC_ASSERT(xs3::run_operator(f.op, k.image, {}, jobs).value().values == whole->values);
    });
}

TEST_CASE("xs3 property: avgpool2d_global is exact when the pixel count is a power of two") {
  check_property("global, N = 2^k, with bias", exact_for_powers_of_two(model_engine));
}

TEST_CASE("xs3 property: otherwise the model is within 1 of the spec's half-up mean") {
  check_property("global, any N, no bias", within_one(model_engine, global_case_gen(false, false)));
  check_property("avgpool2d, any window", within_one(model_engine, window_case_gen("avgpool2d")));
}

TEST_CASE("xs3 property: maxpool2d equals the spec's max") {
  check_property("maxpool2d", max_equals_spec(model_engine));
}

TEST_CASE("xs3 mutant: rounding half to even instead of half up is caught") {
  const auto failure = find_counterexample(exact_for_powers_of_two(half_even_engine));
  REQUIRE(failure.has_value());
  MESSAGE(*failure);
}

TEST_CASE("xs3 mutant: keeping -128 in symmetric mode is caught") {
  const auto failure = find_counterexample(exact_for_powers_of_two(keeps_minus_128_engine));
  REQUIRE(failure.has_value());
  MESSAGE(*failure);
}

}  // namespace
}  // namespace poolspec::test
