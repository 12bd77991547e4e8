#include "poolspec/problem.hpp"

#include <cmath>

#include "poolspec/tensor.hpp"

namespace poolspec {

std::string_view op_name(Op op) { return op == Op::avg ? "avg" : "max"; }

std::string_view rounding_name(Rounding r) {
  switch (r) {
    case Rounding::floor: return "floor";
    case Rounding::ceil: return "ceil";
    case Rounding::ceil_torch: return "ceil_torch";
  }
  return "?";
}

std::string_view divisor_name(Divisor d) {
  switch (d) {
    case Divisor::exclude: return "exclude";
    case Divisor::include_clip: return "include_clip";
    case Divisor::include_full: return "include_full";
    case Divisor::override_value: return "override";
  }
  return "?";
}

std::string_view empty_window_name(EmptyWindow e) {
  switch (e) {
    case EmptyWindow::error: return "error";
    case EmptyWindow::zero: return "zero";
    case EmptyWindow::nan: return "nan";
    case EmptyWindow::lowest: return "lowest";
    case EmptyWindow::neg_inf: return "-inf";
  }
  return "?";
}

std::string_view nan_policy_name(NanPolicy n) {
  return n == NanPolicy::propagate ? "propagate" : "ignore";
}

std::string_view int_rounding_name(IntRounding r) {
  switch (r) {
    case IntRounding::half_even: return "half_even";
    case IntRounding::half_away: return "half_away";
    case IntRounding::half_up: return "half_up";
    case IntRounding::toward_zero: return "toward_zero";
    case IntRounding::floor: return "floor";
    case IntRounding::tosa: return "tosa";
  }
  return "?";
}

std::string_view indices_name(Indices i) {
  switch (i) {
    case Indices::none: return "none";
    case Indices::plane: return "plane";
    case Indices::tensor: return "tensor";
  }
  return "?";
}

std::string_view index_order_name(IndexOrder o) {
  return o == IndexOrder::row_major ? "row" : "col";
}

std::string_view max_start_name(MaxStart s) { return s == MaxStart::first ? "first" : "lowest"; }

std::string_view zeros_name(Zeros z) {
  switch (z) {
    case Zeros::equal: return "equal";
    case Zeros::ordered: return "ordered";
    case Zeros::either: return "either";
  }
  return "?";
}

std::string_view subnormals_name(Subnormals s) {
  return s == Subnormals::exact ? "exact" : "may_flush";
}

std::string_view sums_name(Sums s) { return s == Sums::data ? "data" : "f32"; }

bool same_result(const Problem& p, double expected, double got) {
  if (same_value(p.dtype, expected, got)) return true;
  if (!is_float(p.dtype) || got != 0) return false;
  const bool either_sign = p.zeros == Zeros::either;
  if (expected == 0) return either_sign;
  const bool subnormal = std::isfinite(expected) &&
                         std::fabs(expected) < std::ldexp(1.0, float_format(p.dtype).min_exponent);
  return subnormal && p.subnormals == Subnormals::may_flush &&
         (either_sign || std::signbit(expected) == std::signbit(got));
}

bool zero_within(const Problem& p, double expected, double allowed, double reach, bool zeros_only,
                 double got) {
  if (!is_float(p.dtype) || got != 0 || !std::isfinite(expected) || !(allowed >= 0)) return false;
  const double magnitude = std::fabs(expected);
  const bool flushable = p.subnormals == Subnormals::may_flush &&
                         magnitude - allowed < std::ldexp(1.0, float_format(p.dtype).min_exponent);
  if (magnitude > allowed && !flushable) return false;
  return p.zeros == Zeros::either || std::signbit(expected) == std::signbit(got) ||
         reach > magnitude || (zeros_only && !std::signbit(got));
}

std::vector<int64_t> input_shape(const Problem& p) {
  std::vector<int64_t> shape{p.batch, p.channels};
  for (const Axis& a : p.axes) shape.push_back(a.extent);
  return shape;
}

Problem canonical_problem(const Problem& p) {
  Problem c = p;
  const Problem defaults;
  if (c.op == Op::avg) c.nan = defaults.nan;
  if (c.op == Op::max || is_float(c.dtype)) c.int_rounding = defaults.int_rounding;
  if (!is_float(c.dtype) || (c.op == Op::avg && c.zeros == Zeros::ordered))
    c.zeros = defaults.zeros;
  if (!is_float(c.dtype)) c.subnormals = defaults.subnormals;
  if (c.op != Op::avg || (c.dtype != DType::f16 && c.dtype != DType::bf16)) c.sums = defaults.sums;
  return c;
}

}  // namespace poolspec
