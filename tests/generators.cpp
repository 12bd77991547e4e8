#include "generators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "poolspec/exact.hpp"

namespace poolspec::test {

void showValue(const Case& c, std::ostream& os) {
  os << format_problem(c.problem) << "  input [";
  for (size_t i = 0; i < c.input.values.size() && i < 64; ++i)
    os << (i ? " " : "") << c.input.values[i];
  if (c.input.values.size() > 64) os << " ...";
  os << "]";
}

double to_dtype(DType dtype, double v) {
  if (is_float(dtype)) {
    if (!std::isfinite(v) || v == 0) return v;
    return exact::round_quotient(exact::to_units(v), 1, float_format(dtype), false);
  }
  const double r = std::nearbyint(v);
  return std::clamp(r, static_cast<double>(int_min(dtype)), static_cast<double>(int_max(dtype))) +
         0.0;  // no -0 in an integer tensor
}

namespace {

rc::Gen<Axis> axis_gen(int64_t spread) {
  return rc::gen::exec([spread] {
    Axis a;
    a.kernel = *rc::gen::inRange<int64_t>(1, 5);
    a.dilation = *rc::gen::weightedOneOf<int64_t>(
        {{4, rc::gen::just<int64_t>(1)}, {1, rc::gen::inRange<int64_t>(2, 4)}});
    a.stride = *rc::gen::inRange<int64_t>(1, 5);
    a.pad_begin = *rc::gen::inRange<int64_t>(0, 4);
    a.pad_end = *rc::gen::inRange<int64_t>(0, 4);
    const int64_t k_eff = (a.kernel - 1) * a.dilation + 1;
    const int64_t min_extent = std::max<int64_t>(1, k_eff - a.pad_begin - a.pad_end);
    a.extent = *rc::gen::inRange<int64_t>(min_extent, min_extent + spread + 1);
    return a;
  });
}

}  // namespace

rc::Gen<Problem> problem_gen(const CaseOptions& options) {
  return rc::gen::exec([options] {
    Problem p;
    p.op = options.ops.empty() ? *rc::gen::element(Op::avg, Op::max)
                               : *rc::gen::elementOf(options.ops);
    p.dtype = *rc::gen::elementOf(
        options.dtypes.empty() ? std::vector<DType>(std::begin(all_dtypes), std::end(all_dtypes))
                               : options.dtypes);
    p.batch = *rc::gen::inRange<int64_t>(1, 3);
    p.channels = *rc::gen::inRange<int64_t>(1, options.max_channels + 1);
    if (options.wide_channels_one_in > 0 && *rc::gen::inRange(0, options.wide_channels_one_in) == 0)
      p.channels = *rc::gen::inRange<int64_t>(options.wide_channels, options.wide_channels + 17);
    const int rank = *rc::gen::inRange(1, options.max_rank + 1);
    for (int i = 0; i < rank; ++i)
      p.axes.push_back(
          *axis_gen(i + 1 == rank ? options.last_extent_spread : options.extent_spread));
    if (options.whole_plane_one_in > 0 && *rc::gen::inRange(0, options.whole_plane_one_in) == 0)
      for (Axis& a : p.axes) a = Axis{a.extent, a.extent, 1, 1, 0, 0};
    if (options.same_extent_one_in > 0 && *rc::gen::inRange(0, options.same_extent_one_in) == 0)
      for (Axis& a : p.axes) {
        const int64_t padding = (a.kernel - 1) * a.dilation;
        a.stride = 1;
        a.pad_begin = *rc::gen::inRange<int64_t>(0, padding + 1);
        a.pad_end = padding - a.pad_begin;
      }
    p.rounding = *rc::gen::element(Rounding::floor, Rounding::ceil, Rounding::ceil_torch);
    if (p.op == Op::avg) {
      if (options.any_divisor) {
        p.divisor = *rc::gen::element(Divisor::exclude, Divisor::include_clip,
                                      Divisor::include_full, Divisor::override_value);
        if (p.divisor == Divisor::override_value)
          p.divisor_override = *rc::gen::inRange<int64_t>(1, 30);
      }
      if (options.bias && *rc::gen::inRange(0, 4) == 0)
        p.bias = *rc::gen::inRange<int64_t>(-50, 51);
      p.int_rounding =
          *rc::gen::element(IntRounding::half_even, IntRounding::half_away, IntRounding::half_up,
                            IntRounding::toward_zero, IntRounding::floor, IntRounding::tosa);
      if (!is_float(p.dtype) && *rc::gen::inRange(0, 4) == 0) {  // TOSA's zero points
        const int64_t lowest = std::max<int64_t>(int_min(p.dtype), -20);
        p.input_zp = *rc::gen::inRange<int64_t>(lowest, 21);
        p.output_zp = *rc::gen::inRange<int64_t>(lowest, 21);
      }
    } else {
      p.nan = *rc::gen::element(NanPolicy::propagate, NanPolicy::ignore);
      p.indices = *rc::gen::element(Indices::none, Indices::plane, Indices::tensor);
      if (p.indices != Indices::none)
        p.index_order = *rc::gen::element(IndexOrder::row_major, IndexOrder::column_major);
      if (p.indices == Indices::tensor) p.index_axis = *rc::gen::inRange<int64_t>(0, rank + 2);
      if (p.nan == NanPolicy::ignore && *rc::gen::inRange(0, 3) == 0)
        p.max_start = MaxStart::lowest;
    }
    if (is_float(p.dtype)) {
      p.zeros = *rc::gen::element(Zeros::equal, Zeros::equal, Zeros::ordered, Zeros::either);
      if (p.op == Op::avg && p.zeros == Zeros::ordered) p.zeros = Zeros::equal;
      if (p.indices != Indices::none && p.zeros == Zeros::either) p.zeros = Zeros::equal;
      p.subnormals = *rc::gen::element(Subnormals::exact, Subnormals::exact, Subnormals::may_flush);
      if (p.op == Op::avg && (p.dtype == DType::f16 || p.dtype == DType::bf16))
        p.sums = *rc::gen::element(Sums::data, Sums::f32);  // elsewhere canonically data
    }
    p.empty = is_float(p.dtype) ? *rc::gen::element(EmptyWindow::zero, EmptyWindow::nan,
                                                    EmptyWindow::lowest, EmptyWindow::neg_inf)
                                : *rc::gen::element(EmptyWindow::zero, EmptyWindow::lowest);
    return p;
  });
}

rc::Gen<Tensor> input_gen(const Problem& p, bool finite_values) {
  return rc::gen::exec([p, finite_values] {
    Tensor t{p.dtype, input_shape(p), {}};
    size_t count = 1;
    for (int64_t d : t.shape) count *= static_cast<size_t>(d);
    const double lo = is_float(p.dtype) ? -1e3 : static_cast<double>(int_min(p.dtype));
    const double hi = is_float(p.dtype) ? 1e3 : static_cast<double>(int_max(p.dtype));
    const double inf = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < count; ++i) {
      // Mostly small integers (ties and repeats are likely), else arbitrary reals, and for
      // floats now and then a special value.
      const int kind = *rc::gen::inRange(0, 20);
      double v = 0;
      if (kind < 10)
        v = *rc::gen::inRange(-8, 9);
      else if (kind < 17)
        v = lo + (hi - lo) * (*rc::gen::inRange(0, 1 << 20)) / double(1 << 20);
      else if (kind == 17)
        v = *rc::gen::element(lo, hi);
      else if (is_float(p.dtype) && !finite_values)
        v = *rc::gen::element(std::numeric_limits<double>::quiet_NaN(), inf, -inf, -0.0,
                              std::ldexp(1.0, float_format(p.dtype).min_exponent - 3));
      t.values.push_back(to_dtype(p.dtype, v));
    }
    return t;
  });
}

rc::Gen<Case> case_gen(const CaseOptions& options) {
  return rc::gen::mapcat(problem_gen(options), [options](const Problem& p) {
    return rc::gen::map(input_gen(p, options.finite_values), [p](Tensor t) {
      return Case{p, std::move(t)};
    });
  });
}

}  // namespace poolspec::test

namespace poolspec {
void showValue(const Problem& p, std::ostream& os) { os << format_problem(p); }
}  // namespace poolspec
