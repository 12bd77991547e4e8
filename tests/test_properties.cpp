// Properties of the definition, run against the spec (and, to show they can fail, against
// mutants of it). Each property names the clause of the definition it follows from.
#include <cmath>
#include <numeric>

#include <doctest/doctest.h>

#include "generators.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/shape.hpp"
#include "rapidcheck_doctest.hpp"
#include "window_oracle.hpp"

namespace poolspec::test {
namespace {

Result<Output> spec_engine(const Problem& p, const Tensor& input) { return evaluate(p, input); }

// Mutant: the classic divisor confusion -- "exclude" implemented as counting the padding
// (include_clip). The spec is evaluated on the altered problem.
Result<Output> wrong_divisor_engine(const Problem& p, const Tensor& input) {
  Problem mutant = p;
  if (mutant.op == Op::avg && mutant.divisor == Divisor::exclude)
    mutant.divisor = Divisor::include_clip;
  return evaluate(mutant, input);
}

// ---- the properties, over an engine ------------------------------------------------------------

// "constant in, constant out": every non-empty window over a constant input averages (exclude
// divisor: in-bounds values only) or maxes to that constant, exactly.
auto constant_in_constant_out(Engine engine) {
  return [engine](const Problem& generated, int constant) {
    Problem p = generated;
    p.divisor = Divisor::exclude;
    p.divisor_override = 0;
    p.bias = 0;
    p.input_zp = p.output_zp = 0;
    // TOSA's division is not a rounding of the exact mean: past int8/int16 sums (|S| >= 2^29 for
    // one tap) its error term moves the result; the property is about the mean.
    if (p.int_rounding == IntRounding::tosa) p.int_rounding = IntRounding::half_away;
    p.max_start = MaxStart::first;  // start=lowest would clamp a constant -inf to lowest
    const double c = to_dtype(p.dtype, constant);
    RC_LOG() << "evaluated: " << format_problem(p) << " on the constant " << c << "\n";
    const ShapeInfo shape = infer_shape(p).value();
    Tensor input{p.dtype, shape.input_shape,
                 std::vector<double>(static_cast<size_t>(shape.input_elements), c)};
    const Output out = engine(p, input).value();
    for_each_output(shape.output_shape, [&](int64_t n, int64_t ch, const auto& o, size_t i) {
      if (window_taps(p, input, n, ch, o).values.empty()) return;
      RC_ASSERT(out.values.values[i] == c);
    });
  };
}

// "min <= avg <= max over the window": the exact mean of the in-bounds values with the exclude
// divisor lies between their extremes, and rounding to the dtype keeps it there.
auto average_between_extremes(Engine engine) {
  return [engine](const Problem& generated, int seed) {
    Problem p = generated;
    p.op = Op::avg;
    p.divisor = Divisor::exclude;
    p.divisor_override = 0;
    p.bias = 0;
    p.input_zp = p.output_zp = 0;
    // TOSA's division is not a rounding of the exact mean: past int8/int16 sums (|S| >= 2^29 for
    // one tap) its error term moves the result; the property is about the mean.
    if (p.int_rounding == IntRounding::tosa) p.int_rounding = IntRounding::half_away;
    p.indices = Indices::none;
    p.index_axis = 0;
    p.max_start = MaxStart::first;
    if (!is_float(p.dtype) && p.empty != EmptyWindow::zero) p.empty = EmptyWindow::zero;
    RC_LOG() << "evaluated: " << format_problem(p) << "\n";
    const ShapeInfo shape = infer_shape(p).value();
    Tensor input{p.dtype, shape.input_shape, {}};
    for (int64_t i = 0; i < shape.input_elements; ++i)
      input.values.push_back(to_dtype(p.dtype, static_cast<double>((seed + i * 7919) % 201 - 100)));
    const Output out = engine(p, input).value();
    for_each_output(shape.output_shape, [&](int64_t n, int64_t ch, const auto& o, size_t i) {
      const WindowTaps w = window_taps(p, input, n, ch, o);
      if (w.values.empty()) return;
      const auto [lo, hi] = std::minmax_element(w.values.begin(), w.values.end());
      RC_ASSERT(*lo <= out.values.values[i]);
      RC_ASSERT(out.values.values[i] <= *hi);
    });
  };
}

// "a max is an element of its window": the result is one of the window's in-bounds values (or
// NaN under the NaN rules), nothing in the window is larger, and the index points at it.
// With start=lowest the running maximum starts at lowest with the plane's first index, so the
// result is lowest when nothing in the window exceeds it.
auto max_is_window_element(Engine engine) {
  return [engine](const Case& generated) {
    Case k = generated;
    if (k.problem.op != Op::max) return;
    const Problem& p = k.problem;
    const ShapeInfo shape = infer_shape(p).value();
    const Output out = engine(p, k.input).value();
    const int64_t plane_size = shape.input_elements / (p.batch * p.channels);
    int64_t modulus = 1;  // prod(input_shape[index_axis:])
    for (size_t a = static_cast<size_t>(p.index_axis); a < shape.input_shape.size(); ++a)
      modulus *= shape.input_shape[a];
    const auto index_at = [&](int64_t n, int64_t ch, const std::vector<int64_t>& x) {
      int64_t offset = 0;
      if (p.index_order == IndexOrder::row_major)
        for (size_t a = 0; a < x.size(); ++a) offset = offset * p.axes[a].extent + x[a];
      else
        for (size_t a = x.size(); a > 0; --a) offset = offset * p.axes[a - 1].extent + x[a - 1];
      if (p.indices == Indices::plane) return offset;
      return ((n * p.channels + ch) * plane_size + offset) % modulus;
    };
    const bool from_lowest = p.max_start == MaxStart::lowest;
    const double lowest = lowest_value(p.dtype);
    for_each_output(shape.output_shape, [&](int64_t n, int64_t ch, const auto& o, size_t i) {
      const WindowTaps w = window_taps(p, k.input, n, ch, o);
      const double got = out.values.values[i];
      const int64_t plane_origin = index_at(n, ch, std::vector<int64_t>(p.axes.size(), 0));
      if (w.values.empty()) {
        if (p.indices != Indices::none)
          RC_ASSERT(out.indices[i] == (from_lowest ? plane_origin : -1));
        return;
      }
      const bool any_nan =
          std::any_of(w.values.begin(), w.values.end(), [](double v) { return std::isnan(v); });
      const bool all_nan =
          std::all_of(w.values.begin(), w.values.end(), [](double v) { return std::isnan(v); });
      const bool above_lowest =
          std::any_of(w.values.begin(), w.values.end(), [&](double v) { return v > lowest; });
      if (from_lowest && !above_lowest) {
        RC_ASSERT(got == lowest);
        if (p.indices != Indices::none) RC_ASSERT(out.indices[i] == plane_origin);
        return;
      }
      if (!from_lowest && any_nan && (p.nan == NanPolicy::propagate || all_nan)) {
        RC_ASSERT(std::isnan(got));
      } else {
        RC_ASSERT(!std::isnan(got));
        RC_ASSERT(std::find(w.values.begin(), w.values.end(), got) != w.values.end());
        for (double v : w.values) RC_ASSERT(std::isnan(v) || v <= got);
        // zeros=ordered: -0 is below +0, so a window holding a +0 cannot have the maximum -0.
        const bool has_plus_zero = std::any_of(w.values.begin(), w.values.end(),
                                               [](double v) { return v == 0 && !std::signbit(v); });
        if (p.zeros == Zeros::ordered && has_plus_zero) RC_ASSERT(!std::signbit(got));
      }
      if (p.indices == Indices::none) return;
      // The index names an in-bounds element of the window holding the result.
      bool found = false;
      for (size_t t = 0; t < w.coordinates.size(); ++t)
        if (index_at(n, ch, w.coordinates[t]) == out.indices[i] &&
            same_value(p.dtype, w.values[t], got))
          found = true;
      RC_ASSERT(found);
    });
  };
}

// "kernel 1, stride 1 is the identity" (no padding; any dilation, which a 1-tap window ignores).
auto kernel_one_is_identity(Engine engine) {
  return [engine](const Case& generated) {
    Case k = generated;
    for (Axis& a : k.problem.axes) a = Axis{a.extent, 1, 1, a.dilation, 0, 0};
    k.problem.max_start = MaxStart::first;  // start=lowest clamps -inf to lowest
    k.problem.divisor = Divisor::exclude;
    k.problem.divisor_override = 0;
    k.problem.bias = 0;
    k.problem.input_zp = k.problem.output_zp = 0;
    // TOSA's division is not a rounding of the exact mean: past int8/int16 sums (|S| >= 2^29 for
    // one tap) its error term moves the result; the property is about the mean.
    if (k.problem.int_rounding == IntRounding::tosa)
      k.problem.int_rounding = IntRounding::half_away;
    RC_LOG() << "evaluated: " << format_problem(k.problem) << "\n";
    const Output out = engine(k.problem, k.input).value();
    RC_ASSERT(out.values.shape == k.input.shape);
    for (size_t i = 0; i < k.input.values.size(); ++i)
      RC_ASSERT(same_value(k.problem.dtype, out.values.values[i], k.input.values[i]));
  };
}

// "permuting N or C commutes with pooling": pooling works plane by plane.
auto planes_commute(Engine engine) {
  return [engine](const Case& k) {
    const Problem& p = k.problem;
    const int64_t planes = p.batch * p.channels;
    const size_t in_plane = k.input.values.size() / static_cast<size_t>(planes);
    // Reverse the order of the (n, c) planes.
    Tensor reversed = k.input;
    for (int64_t q = 0; q < planes; ++q)
      std::copy_n(k.input.values.begin() + static_cast<long>(in_plane) * q, in_plane,
                  reversed.values.begin() + static_cast<long>(in_plane) * (planes - 1 - q));
    const Output a = engine(p, k.input).value();
    const Output b = engine(p, reversed).value();
    const size_t out_plane = a.values.values.size() / static_cast<size_t>(planes);
    for (int64_t q = 0; q < planes; ++q)
      for (size_t i = 0; i < out_plane; ++i) {
        const size_t ia = static_cast<size_t>(q) * out_plane + i;
        const size_t ib = static_cast<size_t>(planes - 1 - q) * out_plane + i;
        RC_ASSERT(same_value(p.dtype, a.values.values[ia], b.values.values[ib]));
        if (p.indices == Indices::plane) RC_ASSERT(a.indices[ia] == b.indices[ib]);
      }
  };
}

// "scaling by a power of two commutes exactly with the exact average": in f64 (no overflow or
// subnormal results for these values), avg(2^e x) = 2^e avg(x) bit for bit.
auto power_of_two_scaling(Engine engine) {
  return [engine](const Case& generated, int e) {
    Case k = generated;
    k.problem.dtype = DType::f64;
    k.problem.op = Op::avg;
    k.problem.bias = 0;
    k.problem.input_zp = k.problem.output_zp = 0;  // f64: no zero points
    k.problem.indices = Indices::none;
    k.problem.index_order = IndexOrder::row_major;
    k.problem.index_axis = 0;
    k.problem.max_start = MaxStart::first;
    k.input.dtype = DType::f64;
    const int exponent = e % 40;
    RC_LOG() << "evaluated: " << format_problem(k.problem) << ", scaled by 2^" << exponent << "\n";
    Tensor scaled = k.input;
    for (double& v : scaled.values) v = std::ldexp(v, exponent);
    const Output a = engine(k.problem, k.input).value();
    const Output b = engine(k.problem, scaled).value();
    for (size_t i = 0; i < a.values.values.size(); ++i) {
      const double expected = std::ldexp(a.values.values[i], exponent);
      const bool special = !std::isfinite(a.values.values[i]) ||
                           a.values.values[i] == std::numeric_limits<double>::lowest();
      if (special) continue;  // empty-window constants are not scaled
      RC_ASSERT(same_value(DType::f64, b.values.values[i], expected));
    }
  };
}

TEST_CASE("property: constant in, constant out") {
  check_property("constant in, constant out", constant_in_constant_out(spec_engine));
}

TEST_CASE("property: min <= avg <= max over the window") {
  check_property("min <= avg <= max", average_between_extremes(spec_engine));
}

TEST_CASE("property: a max is an element of its window, and its index points at it") {
  check_property("max is a window element", max_is_window_element(spec_engine));
}

TEST_CASE("property: kernel 1 stride 1 is the identity") {
  check_property("kernel 1 is the identity", kernel_one_is_identity(spec_engine));
}

TEST_CASE("property: permuting N or C commutes with pooling") {
  check_property("planes commute", planes_commute(spec_engine));
}

TEST_CASE("property: scaling by a power of two commutes with the exact average") {
  check_property("power-of-two scaling", power_of_two_scaling(spec_engine));
}

// "the output extent equals the number of window starts the definition allows", counted by
// enumeration, independently of the closed forms:
//   floor:      window j must lie inside the padded extent: j*s + K <= L;
//   ceil:       window 0, and window j >= 1 while window j-1 has not reached the end: (j-1)*s + K <
//   L; ceil_torch: the ceil windows, less the last one if it starts in the end padding
//               (j*s - pb >= d) -- "ceil, then drop a last window that starts in the end padding".
int64_t enumerated_extent(const Axis& a, Rounding rounding) {
  const int64_t K = (a.kernel - 1) * a.dilation + 1, L = a.extent + a.pad_begin + a.pad_end;
  int64_t count = 0;
  for (int64_t j = 0;; ++j) {
    const bool allowed = rounding == Rounding::floor ? j * a.stride + K <= L
                                                     : (j == 0 || (j - 1) * a.stride + K < L);
    if (!allowed) break;
    ++count;
  }
  if (rounding == Rounding::ceil_torch && (count - 1) * a.stride - a.pad_begin >= a.extent) --count;
  return count;
}

auto extent_matches_enumeration(int64_t (*extent)(const Axis&, Rounding)) {
  return [extent](const Problem& p) {
    for (const Axis& a : p.axes)
      for (Rounding r : {Rounding::floor, Rounding::ceil, Rounding::ceil_torch})
        RC_ASSERT(extent(a, r) == enumerated_extent(a, r));
  };
}

int64_t spec_extent(const Axis& a, Rounding r) {
  return formulas::output_extent(formulas::terms_of<int64_t>(a), r);
}

// Mutant formula: ceil_torch without the DROP rule.
int64_t no_drop_extent(const Axis& a, Rounding r) {
  return spec_extent(a, r == Rounding::ceil_torch ? Rounding::ceil : r);
}

TEST_CASE("property: the output extent equals the number of allowed window starts") {
  check_property("extent = enumeration", extent_matches_enumeration(spec_extent));
}

// "the exclude divisor equals the count of in-bounds taps": the closed forms of formulas.hpp
// (per axis, multiplied) against the test's own enumeration; and the divisor explain() reports.
TEST_CASE("property: closed-form divisors equal the count of taps") {
  check_property("closed-form divisors", [](const Case& k) {
    const Problem& p = k.problem;
    const ShapeInfo shape = infer_shape(p).value();
    for_each_output(shape.output_shape, [&](int64_t n, int64_t c, const auto& o, size_t) {
      int64_t in_bounds = 1, padded = 1;
      for (size_t i = 0; i < p.axes.size(); ++i) {
        const auto a = formulas::terms_of<int64_t>(p.axes[i]);
        in_bounds *= formulas::in_bounds_taps(a, o[i]);
        padded *= formulas::padded_taps(a, o[i]);
      }
      const WindowTaps w = window_taps(p, k.input, n, c, o);
      RC_ASSERT(in_bounds == static_cast<int64_t>(w.values.size()));
      RC_ASSERT(padded == w.in_padded_extent);
    });
    // One element through explain(): its divisor is the one the rule names.
    if (p.op == Op::avg) {
      std::vector<int64_t> at(shape.output_shape.size(), 0);
      at.back() = shape.output_shape.back() - 1;
      const Explanation ex = explain(p, k.input, at).value();
      const WindowTaps w =
          window_taps(p, k.input, 0, 0, std::vector<int64_t>(at.begin() + 2, at.end()));
      const int64_t expected = p.divisor == Divisor::exclude ? static_cast<int64_t>(w.values.size())
                               : p.divisor == Divisor::include_clip ? w.in_padded_extent
                               : p.divisor == Divisor::include_full ? w.taps
                                                                    : p.divisor_override;
      if (expected != 0) RC_ASSERT(ex.divisor == expected);
    }
  });
}

// explain() scans a window tap by tap (recording each), evaluate() axis by axis: every output
// element's value, index and divisor agree, and the recorded taps are prod(kernel) in number.
TEST_CASE("property: explain() and evaluate() give every element alike") {
  check_property("explain = evaluate", [](const Case& k) {
    const Problem& p = k.problem;
    const Output out = evaluate(p, k.input).value();
    int64_t taps = 1;
    for (const Axis& a : p.axes) taps *= a.kernel;
    for_each_output(out.values.shape, [&](int64_t n, int64_t c, const auto& o, size_t i) {
      std::vector<int64_t> at{n, c};
      at.insert(at.end(), o.begin(), o.end());
      const Explanation ex = explain(p, k.input, at).value();
      RC_ASSERT(same_value(p.dtype, ex.result, out.values.values[i]));
      if (!out.indices.empty()) RC_ASSERT(ex.index == out.indices[i]);
      RC_ASSERT(static_cast<int64_t>(ex.taps.size()) == taps);
    });
  });
}

// The problem string round-trips exactly: parse(format(p)) == p but for the fields that do not
// apply to the op or dtype (canonical_problem), and format is a fixed point.
auto problem_string_round_trip(std::string (*format)(const Problem&)) {
  return [format](const Problem& p) {
    const std::string text = format(p);
    RC_LOG() << text << "\n";
    const Result<Problem> back = parse_problem(text);
    RC_ASSERT(back.ok());
    RC_ASSERT(*back == canonical_problem(p));
    RC_ASSERT(format(*back) == text);
  };
}

// Mutant printer: drops the dilations, as a printer that forgets a rarely used field would.
std::string format_without_dilation(const Problem& p) {
  Problem q = p;
  for (Axis& a : q.axes) a.dilation = 1;
  return format_problem(q);
}

TEST_CASE("property: problem strings round-trip exactly") {
  check_property("problem string round trip", problem_string_round_trip(format_problem));
}

// ---- mutants: each checker above must be seen to fail --------------------------------------

TEST_CASE("mutant: a wrong divisor (padding counted in exclude mode) is caught") {
  const auto constant = find_counterexample(constant_in_constant_out(wrong_divisor_engine));
  REQUIRE(constant.has_value());
  MESSAGE("constant in, constant out caught the wrong divisor:\n" << *constant);
  const auto between = find_counterexample(average_between_extremes(wrong_divisor_engine));
  REQUIRE(between.has_value());
  MESSAGE("min <= avg <= max caught the wrong divisor:\n" << *between);
}

TEST_CASE("mutant: a printer that loses the dilations is caught by the round trip") {
  const auto failure = find_counterexample(problem_string_round_trip(format_without_dilation));
  REQUIRE(failure.has_value());
  MESSAGE(*failure);
}

TEST_CASE("mutant: ceil_torch without the DROP rule is caught by the extent enumeration") {
  const auto failure = find_counterexample(extent_matches_enumeration(no_drop_extent));
  REQUIRE(failure.has_value());
  MESSAGE(*failure);
}

}  // namespace
}  // namespace poolspec::test
