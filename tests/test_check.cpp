// The linked-in checks (reference/check.hpp, check.h): a full check finds any wrong element, a
// sampled one finds a wrong border, the rate is honoured across threads, the C API agrees.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "poolspec/backend.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/check.h"
#include "poolspec/reference/check.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace {

using namespace poolspec;

struct Buffers {
  std::vector<std::byte> input, output;
  std::vector<int64_t> indices;
};

Buffers computed(const Problem& p, Layout layout) {
  const ShapeInfo shape = validated_shape(p).value();
  Buffers b;
  Tensor input{p.dtype, shape.input_shape,
               std::vector<double>(static_cast<size_t>(shape.input_elements))};
  for (size_t i = 0; i < input.values.size(); ++i)
    input.values[i] = static_cast<double>((i * 37) % 23) - 11;
  b.input = to_storage(input, layout);
  b.output.resize(static_cast<size_t>(shape.output_elements * storage_bytes(p.dtype)));
  b.indices.resize(static_cast<size_t>(shape.output_elements));
  const RunArgs args{b.input.data(), b.output.data(),
                     p.indices != Indices::none ? b.indices.data() : nullptr, 1};
  REQUIRE(reference::engine().run(p, layout, args).ok());
  return b;
}

void set_f32(std::vector<std::byte>& out, int64_t at, float v) {
  std::memcpy(out.data() + at * 4, &v, 4);
}

}  // namespace

TEST_CASE("check: a full check passes the reference's own output and finds one wrong element") {
  for (const char* text : {"avg:f32:n2c3:h9w8:k3x3:s2x2:pb1x1:pe1x1:include_clip:ceil_torch",
                           "max:f32:n1c4:d5h6w7:k2x2x3:s2x1x2:pb0x1x1:pe1x0x1:floor:idx=plane"}) {
    const Problem p = parse_problem(text).value();
    for (Layout layout : all_layouts) {
      CAPTURE(text);
      Buffers b = computed(p, layout);
      reference::Checker checker({0, 1.0, 0, {}});
      auto r = checker.check(p, layout, b.input.data(), b.output.data(), b.indices.data());
      REQUIRE(r.ok());
      CHECK(!r->has_value());
      const ShapeInfo shape = validated_shape(p).value();
      const int64_t wrong = shape.output_elements - 5;
      set_f32(b.output, storage_position(shape.output_shape, wrong, layout), 1e6f);
      r = checker.check(p, layout, b.input.data(), b.output.data(), b.indices.data());
      REQUIRE(r.ok());
      REQUIRE(r->has_value());
      CHECK((*r)->got == 1e6);
      CHECK(checker.stats().mismatching_calls == 1);
    }
  }
}

TEST_CASE("check: sampling finds a wrong border divisor, and checks one call in 1/rate") {
  const Problem p =
      parse_problem("avg:f32:n1c8:h16w16:k3x3:s1x1:pb1x1:pe1x1:include_full:floor").value();
  Buffers b = computed(p, Layout::channels_first);
  // The border-divisor bug: every first column divided by 6 taps instead of 9.
  for (int64_t plane = 0; plane < 8; ++plane)
    for (int64_t row = 0; row < 16; ++row) {
      const int64_t at = (plane * 16 + row) * 16;
      float v;
      std::memcpy(&v, b.output.data() + at * 4, 4);
      set_f32(b.output, at, v * 9 / 6);
    }
  reference::Checker every_call({16, 1.0, 7, {}});
  int found = 0;
  for (int i = 0; i < 20; ++i)
    found +=
        every_call.check(p, Layout::channels_first, b.input.data(), b.output.data())->has_value();
  CHECK(found >= 10);  // a quarter of the border samples land on the first column
  reference::Checker sparse({16, 1.0 / 64, 7, {}});
  for (int i = 0; i < 640; ++i)
    (void)sparse.check(p, Layout::channels_first, b.input.data(), b.output.data());
  CHECK(sparse.stats().calls == 640);
  CHECK(sparse.stats().checked_calls == 10);
  CHECK(sparse.stats().mismatching_calls > 0);
}

TEST_CASE("check: options that would check nothing are refused, with the option named") {
  const Problem p = parse_problem("max:f32:n1c1:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor").value();
  const Buffers b = computed(p, Layout::channels_first);
  for (const double rate : {0.0, -0.5, 1.5, std::nan("")}) {
    CAPTURE(rate);
    reference::Checker checker({16, rate, 0, {}});
    const auto r = checker.check(p, Layout::channels_first, b.input.data(), b.output.data());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("rate=") != std::string::npos);
  }
  reference::Checker negative({-1, 1.0, 0, {}});
  const auto r = negative.check(p, Layout::channels_first, b.input.data(), b.output.data());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("samples=-1") != std::string::npos);
  reference::Checker fine({0, 1.0, 0, {}});
  CHECK(fine.check(p, Layout::channels_first, b.input.data(), b.output.data()).ok());
}

TEST_CASE("check: one checker shared by threads counts every call once") {
  const Problem p = parse_problem("max:f32:n1c2:h8w8:k2x2:s2x2:pb0x0:pe0x0:floor").value();
  const Buffers b = computed(p, Layout::channels_last);
  reference::Checker checker({4, 0.25, 1, {}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        CHECK(
            !checker.check(p, Layout::channels_last, b.input.data(), b.output.data())->has_value());
    });
  for (std::thread& t : threads) t.join();
  CHECK(checker.stats().calls == 4000);
  CHECK(checker.stats().checked_calls == 1000);
  CHECK(checker.stats().checked_elements == 4000);
}

namespace {

// Options under which poolspec_check checks every call whole: no sampling, nothing skipped.
poolspec_check_options checking_every_call(poolspec_accumulation accumulation) {
  poolspec_check_options options = poolspec_check_default_options();
  options.samples = 0;
  options.rate = 1;
  options.accumulation = accumulation;
  return options;
}

}  // namespace

TEST_CASE("check: the C API finds the same mismatch, with the caller's declared accumulation") {
  const Problem p = parse_problem("avg:f32:n1c2:h6w6:k3x3:s2x2:pb1x1:pe1x1:exclude:ceil").value();
  Buffers b = computed(p, Layout::channels_last);
  const CProblem c = to_c_problem(p, Layout::channels_last).value();
  poolspec_check_options options = checking_every_call({POOLSPEC_F32, 1, 0.5, 0});
  poolspec_checker* checker = poolspec_checker_create(&options);
  REQUIRE(checker);
  poolspec_mismatch m{};
  CHECK(poolspec_check(checker, &c.problem, b.input.data(), b.output.data(), nullptr, &m) == 0);
  set_f32(b.output, 3, -7.0f);
  CHECK(poolspec_check(checker, &c.problem, b.input.data(), b.output.data(), nullptr, &m) == 1);
  CHECK(m.got == -7.0);
  CHECK(m.rank == 4);
  CHECK(std::string(m.message).find("avg:f32:n1c2:h6w6") != std::string::npos);
  poolspec_problem bad = c.problem;
  bad.axes[0].output = 99;
  CHECK(poolspec_check(checker, &bad, b.input.data(), b.output.data(), nullptr, &m) == 2);
  CHECK(std::string(m.message).find("axes[0].output=99") != std::string::npos);
  CHECK(poolspec_checker_stats(checker).calls ==
        2);  // the refused problem never reached the sampling
  poolspec_checker_destroy(checker);
  options.rate = 0;
  CHECK(poolspec_checker_create(&options) == nullptr);
  // A declared accumulation outside backend.h's ranges would widen the tolerance past any use:
  // refused, as certify refuses it from a backend.
  options.rate = 1;
  for (const poolspec_accumulation wide :
       {poolspec_accumulation{POOLSPEC_F32, 1000000, 0.5, 0},
        poolspec_accumulation{POOLSPEC_F32, 1, 1e9, 0},
        poolspec_accumulation{POOLSPEC_F32, 1, 0.5, 5}, poolspec_accumulation{7, 1, 0.5, 0}}) {
    options.accumulation = wide;
    CHECK(poolspec_checker_create(&options) == nullptr);
  }
  options.accumulation = {POOLSPEC_F32, 1, 0.5, 0};
  poolspec_checker* declared = poolspec_checker_create(&options);
  CHECK(declared != nullptr);
  poolspec_checker_destroy(declared);
}

TEST_CASE("check: the C API takes what zeros=either and subnormals=may_flush allow, and no more") {
  // One window of 2 taps over {-0, subnormal}: the maximum is the subnormal 2^-130 > -0.
  const auto check_with = [](const char* text, float got) {
    const Problem p = parse_problem(text).value();
    const CProblem c = to_c_problem(p, Layout::channels_first).value();
    const float input[2] = {-0.0f, std::ldexp(1.0f, -130)};
    const poolspec_check_options options =
        checking_every_call(poolspec_check_default_options().accumulation);
    poolspec_checker* checker = poolspec_checker_create(&options);
    REQUIRE(checker);
    poolspec_mismatch m{};
    const int result = poolspec_check(checker, &c.problem, input, &got, nullptr, &m);
    poolspec_checker_destroy(checker);
    return result;
  };
  const char* exact = "max:f32:n1c1:w2:k2:s1:pb0:pe0:floor";
  const std::string flush = std::string(exact) + ":subnormals=may_flush";
  const std::string both = flush + ":zeros=either";
  CHECK(check_with(exact, std::ldexp(1.0f, -130)) == 0);
  CHECK(check_with(exact, 0.0f) == 1);           // a flush the problem does not allow
  CHECK(check_with(flush.c_str(), 0.0f) == 0);   // flushed, with its sign
  CHECK(check_with(flush.c_str(), -0.0f) == 1);  // the sign of the subnormal is kept
  CHECK(check_with(both.c_str(), -0.0f) == 0);   // unless either sign is right
  CHECK(check_with(both.c_str(), std::ldexp(1.0f, -129)) == 1);  // another value is wrong
  // Sums narrower than the data cannot bound an average: 2, as for an invalid problem.
  const Problem avg = parse_problem("avg:f32:n1c1:w2:k2:s1:pb0:pe0:exclude:floor").value();
  const CProblem c = to_c_problem(avg, Layout::channels_first).value();
  const poolspec_check_options options = checking_every_call({POOLSPEC_F16, 1, 0.5, 0});
  poolspec_checker* checker = poolspec_checker_create(&options);
  REQUIRE(checker);
  const float input[2] = {1, 2}, output = 1.5f;
  poolspec_mismatch m{};
  CHECK(poolspec_check(checker, &c.problem, input, &output, nullptr, &m) == 2);
  CHECK(std::string(m.message).find("POOLSPEC_F16 for an average of f32 data") !=
        std::string::npos);
  poolspec_checker_destroy(checker);
}

namespace {

int accept_everything(const poolspec_backend*, const poolspec_problem*, char*, size_t) { return 1; }

// A backend of this ABI version whose supports would accept anything.
poolspec_backend accepting(uint32_t abi_version, const char* name) {
  poolspec_backend b{};
  b.abi_version = abi_version;
  b.name = name;
  b.supports = accept_everything;
  return b;
}

// Why the engine refuses the problem ("" when it takes it).
std::string refusal_of(const AbiEngine& engine, const char* problem) {
  const Status s = engine.supports(parse_problem(problem).value(), Layout::channels_first);
  return s ? "" : s.error().message;
}

}  // namespace

TEST_CASE("backend ABI: a version-2 backend is never asked about zero points or TOSA's division") {
  // A version-2 backend could not know what input_zp or round=tosa mean: poolspec answers for it
  // that the problem is unsupported, with the reason, and never calls its supports (which here
  // would accept anything).
  poolspec_backend b = accepting(POOLSPEC_BACKEND_ABI_VERSION_2, "version-2");
  const AbiEngine engine(b);
  const char* zero_points = "avg:i8:n1c1:w4:k2:s2:pb0:pe0:exclude:floor:input_zp=3";
  const char* tosa = "avg:i8:n1c1:w4:k2:s2:pb0:pe0:exclude:floor:round=tosa";
  CHECK(refusal_of(engine, zero_points) ==
        "zero points (input_zp=3, output_zp=0) need ABI version 3; the backend declares version 2");
  CHECK(refusal_of(engine, tosa) ==
        "round=tosa needs ABI version 3; the backend declares version 2");
  // Problems version 2 can state still reach it; a version-3 backend is asked everything.
  CHECK(refusal_of(engine, "avg:i8:n1c1:w4:k2:s2:pb0:pe0:exclude:floor").empty());
  b.abi_version = POOLSPEC_BACKEND_ABI_VERSION_3;
  CHECK(refusal_of(engine, zero_points).empty());
  CHECK(refusal_of(engine, tosa).empty());
}

TEST_CASE("backend ABI: before version 4 a backend is never asked to order -0 below +0") {
  poolspec_backend b = accepting(POOLSPEC_BACKEND_ABI_VERSION_3, "version-3");
  const AbiEngine engine(b);
  const char* ordered = "max:f32:n1c1:w4:k2:s2:pb0:pe0:floor:zeros=ordered";
  CHECK(refusal_of(engine, ordered) ==
        "zeros=ordered needs ABI version 4; the backend declares version 3");
  // zeros=either and subnormals=may_flush ask nothing new: they only allow more results.
  CHECK(refusal_of(engine, "max:f32:n1c1:w4:k2:s2:pb0:pe0:floor:zeros=either").empty());
  CHECK(refusal_of(engine, "max:f32:n1c1:w4:k2:s2:pb0:pe0:floor:subnormals=may_flush").empty());
  // The fields cross the ABI both ways.
  const Problem both = parse_problem(std::string(ordered) + ":subnormals=may_flush").value();
  const CProblem c = to_c_problem(both, Layout::channels_first).value();
  CHECK(c.problem.zeros == POOLSPEC_ZEROS_ORDERED);
  CHECK(c.problem.subnormals == POOLSPEC_SUBNORMALS_MAY_FLUSH);
  CHECK(from_c_problem(c.problem).value() == both);
  b.abi_version = POOLSPEC_BACKEND_ABI_VERSION_4;
  CHECK(refusal_of(engine, ordered).empty());
}

TEST_CASE("a declaration of sums narrower than the data is refused for that problem") {
  const poolspec_accumulation f16{POOLSPEC_F16, 1, 0.5, 0};
  const poolspec_accumulation f32{POOLSPEC_F32, 1, 0.5, 0};
  CHECK(accumulation_problem(f16).empty());  // valid as a declaration
  const Problem half = parse_problem("avg:f16:n1c1:w8:k8:s1:pb0:pe0:exclude:floor").value();
  const Problem single = parse_problem("avg:f32:n1c1:w8:k8:s1:pb0:pe0:exclude:floor").value();
  const Problem dbl = parse_problem("avg:f64:n1c1:w8:k8:s1:pb0:pe0:exclude:floor").value();
  CHECK(accumulation_problem(f16, half).empty());
  CHECK(accumulation_problem(f16, single) ==
        "accumulation.sum_format=POOLSPEC_F16 for an average of f32 data: the bound assumes sums "
        "at least as wide as the data (it has no term for rounding the inputs)");
  CHECK(!accumulation_problem(f32, dbl).empty());
  CHECK(accumulation_problem(f32, single).empty());
  // sums=f32 (TOSA's acc_type FP32) refuses f16 sums on f16 data; f32 sums are what it asks.
  const Problem half_f32_sums = parse_problem(format_problem(half) + ":sums=f32").value();
  CHECK(accumulation_problem(f16, half_f32_sums) ==
        "accumulation.sum_format=POOLSPEC_F16 for an average of f16 data with sums=f32: the rules "
        "ask for sums of f32 or wider (TOSA's acc_type FP32)");
  CHECK(accumulation_problem(f32, half_f32_sums).empty());
  // It crosses the ABI both ways, and every version is asked it.
  const CProblem c = to_c_problem(half_f32_sums, Layout::channels_first).value();
  CHECK(c.problem.sums == POOLSPEC_SUMS_F32);
  CHECK(from_c_problem(c.problem).value() == half_f32_sums);
  CHECK(abi_version_refuses(c.problem, POOLSPEC_BACKEND_ABI_VERSION_1).empty());
  poolspec_problem out_of_range = c.problem;
  out_of_range.sums = 2;
  CHECK(from_c_problem(out_of_range).error().message == "sums=2: must be 0..1");
  // f16 sums bound with f16's unit roundoff and overflow at f16's largest value.
  const ErrorBound bound = bound_of(f16, half, "b");
  CHECK(bound.unit_roundoff == std::ldexp(1.0, -11));
  CHECK(bound.overflow_threshold == 65504.0);
  CHECK(accumulation_of(bound, half).sum_format == POOLSPEC_F16);
}
