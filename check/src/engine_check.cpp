#include "poolspec/engine_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/formulas.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {

namespace {

std::vector<int64_t> coordinate_of(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> c(shape.size());
  for (size_t i = shape.size(); i > 0; --i) {
    c[i - 1] = flat % shape[i - 1];
    flat /= shape[i - 1];
  }
  return c;
}

// The divisor of output element at spatial coordinate o: the product of the per-axis counts of
// the problem's rule (a window is a box, so its counted taps are the product of its axes').
int64_t divisor_at(const Problem& p, const std::vector<int64_t>& coordinate) {
  if (p.divisor == Divisor::override_value) return p.divisor_override;
  int64_t d = 1;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const auto a = formulas::terms_of<int64_t>(p.axes[i]);
    const int64_t j = coordinate[i + 2];
    switch (p.divisor) {
      case Divisor::exclude: d *= formulas::in_bounds_taps(a, j); break;
      case Divisor::include_clip: d *= formulas::padded_taps(a, j); break;
      case Divisor::include_full: d *= p.axes[i].kernel; break;
      case Divisor::override_value: break;
    }
  }
  return d;
}

}  // namespace

// Sum |x| over each window's finite in-bounds values, by the spec itself: the same problem as a sum
// (divisor 1) of the absolute values, in f64 (rounded once from the exact sum).
Result<Tensor> window_abs_sums(const Problem& p, const Tensor& input) {
  Problem q = p;
  q.op = Op::avg;
  q.dtype = DType::f64;
  q.divisor = Divisor::override_value;
  q.divisor_override = 1;
  q.bias = 0;
  q.indices = Indices::none;
  q.max_start = MaxStart::first;
  // The finite values' absolute sum (an infinity or NaN decides the result by itself; what the
  // bound measures is how large the engine's partial sums of the rest may grow).
  Tensor abs{DType::f64, input.shape, input.values};
  for (double& v : abs.values) v = std::isfinite(v) ? std::fabs(v) : 0.0;
  Result<Output> sums = evaluate(q, abs);
  if (!sums) return sums.error();
  return std::move(sums->values);
}

Result<EngineComparison> compare_output(const Problem& p, const Tensor& input,
                                        const Output& expected, const Output& got,
                                        const ErrorBound& bound, size_t max_reported,
                                        const Tensor* abs_sums_given) {
  if (got.values.values.size() != expected.values.values.size() ||
      got.values.shape != expected.values.shape)
    return Error{fmt::format("output shape ({}): the spec's is ({})",
                             fmt::join(got.values.shape, ","),
                             fmt::join(expected.values.shape, ","))};
  if (got.indices.size() != expected.indices.size())
    return Error{
        fmt::format("{} indices: the spec gives {}", got.indices.size(), expected.indices.size())};
  const bool float_avg = p.op == Op::avg && is_float(p.dtype);
  Tensor computed_abs_sums;
  const Tensor* abs_sums = abs_sums_given;
  if (float_avg && !bound.exact && !abs_sums) {
    Result<Tensor> sums = window_abs_sums(p, input);
    if (!sums) return sums.error();
    computed_abs_sums = std::move(*sums);
    abs_sums = &computed_abs_sums;
  }
  EngineComparison c;
  const auto& e = expected.values.values;
  const auto& g = got.values.values;
  c.elements = static_cast<int64_t>(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    ElementMismatch m;
    m.expected = e[i];
    m.got = g[i];
    bool ok = same_result(p, e[i], g[i]);  // the value, or what the float freedoms allow
    if (!ok && float_avg && !bound.exact) {
      m.coordinate = coordinate_of(expected.values.shape, static_cast<int64_t>(i));
      const int64_t divisor = divisor_at(p, m.coordinate);
      const double abs_sum =
          abs_sums->values[i] * (1 + std::ldexp(1.0, -52)) + std::fabs(static_cast<double>(p.bias));
      // Outside the declared range: the finite values' partial sums may overflow. That holds for
      // a window with an infinity too (+inf beside finite values whose sum overflows to -inf in
      // the engine's format gives NaN).
      if (divisor > 0 && bound.overflow_threshold > 0 && abs_sum >= bound.overflow_threshold) {
        ++c.outside_declared_range;
        continue;
      }
      if (divisor > 0 && std::isfinite(e[i])) {
        m.allowed = allowed_error(bound, p.dtype, abs_sum, divisor, e[i]);
        m.error =
            std::isfinite(g[i]) ? std::fabs(g[i] - e[i]) : std::numeric_limits<double>::infinity();
        // A zero: within the bound (or flushed), and of the sign the value before it allows.
        // Measured from e[i], which the spec rounded: the exact value may lie half an ulp nearer 0.
        const double reach =
            abs_sum == 0 ? 0
                         : reach_before_last_rounding(bound, p.dtype, abs_sum, divisor, e[i]) +
                               0.5 * ulp_of(p.dtype, e[i]);
        ok = g[i] == 0 ? zero_within(p, e[i], m.allowed, reach, abs_sum == 0, g[i])
                       : m.error <= m.allowed;
        // A value within the bound of y may lie at or past the dtype's overflow threshold (the
        // largest finite value plus half its ulp), where the engine's last rounding, to nearest,
        // gives the infinity of y's sign: so that infinity is within the bound too.
        if (std::isinf(g[i]) && std::signbit(g[i]) == std::signbit(e[i]) &&
            std::fabs(e[i]) + m.allowed >= overflow_threshold(p.dtype))
          ok = true;
        if (m.allowed > 0 && std::isfinite(m.error))
          c.worst_fraction_of_bound = std::max(c.worst_fraction_of_bound, m.error / m.allowed);
      }
    }
    if (!ok && p.op == Op::avg && !is_float(p.dtype) && bound.integer_units > 0 &&
        std::fabs(g[i] - e[i]) <= static_cast<double>(bound.integer_units))
      ok = true;
    if (!expected.indices.empty()) {
      m.expected_index = expected.indices[i];
      m.got_index = got.indices[i];
      ok = ok && m.expected_index == m.got_index;
    }
    if (ok) continue;
    ++c.mismatches;
    if (c.first.size() < max_reported) {
      m.coordinate = coordinate_of(expected.values.shape, static_cast<int64_t>(i));
      if (m.error == 0)
        m.error = std::isfinite(g[i] - e[i]) ? std::fabs(g[i] - e[i])
                                             : std::numeric_limits<double>::infinity();
      if (is_float(p.dtype) && std::isfinite(e[i])) m.error_ulps = m.error / ulp_of(p.dtype, e[i]);
      c.first.push_back(std::move(m));
    }
  }
  return c;
}

std::string comparison_text(const Problem& p, const EngineComparison& c, const ErrorBound& bound) {
  std::string text =
      fmt::format("{}: {} of {} elements differ", format_problem(p), c.mismatches, c.elements);
  if (!bound.exact) text += fmt::format(" (declared accumulation: {})", bound.accumulation);
  for (const ElementMismatch& m : c.first) {
    text += fmt::format("\n  at ({}): expected {}, got {}", fmt::join(m.coordinate, ","),
                        m.expected, m.got);
    if (m.expected_index >= 0 || m.got_index >= 0)
      text += fmt::format(", index expected {} got {}", m.expected_index, m.got_index);
    if (m.error > 0)
      text += fmt::format(", error {:.3g} ({:.3g} ulp), allowed {:.3g}", m.error, m.error_ulps,
                          m.allowed);
  }
  if (c.mismatches > static_cast<int64_t>(c.first.size()))
    text += fmt::format("\n  ... and {} more", c.mismatches - static_cast<int64_t>(c.first.size()));
  return text;
}

namespace {

// Guard bytes after the output and around the input: an engine that writes past its output
// changes them; one that reads outside its input picks up poison (NaN, or the integer extremes).
constexpr size_t guard_bytes = 256;
constexpr std::byte guard_pattern{0xC5};

}  // namespace

Result<Output> run_engine(const Engine& engine, const Problem& p, const Tensor& input,
                          Layout layout, int threads) {
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  const std::vector<std::byte> in_bytes = to_storage(input, layout);
  std::vector<std::byte> in(in_bytes.size() + 2 * guard_bytes, std::byte{0xFF});  // 0xFF..: NaN, -1
  for (size_t i = 0; i < guard_bytes; i += 2) in[i] = std::byte{0x7F};  // 0x7FFF..: NaN, max
  std::memcpy(in.data() + guard_bytes, in_bytes.data(), in_bytes.size());
  const size_t out_size =
      static_cast<size_t>(shape->output_elements) * static_cast<size_t>(storage_bytes(p.dtype));
  const bool with_indices = p.op == Op::max && p.indices != Indices::none;
  // Two runs over differently poisoned outputs: an element the engine leaves unwritten differs.
  std::vector<std::byte> outs[2];
  std::vector<int64_t> indices[2];
  const std::byte poison[2] = {std::byte{0xA5}, std::byte{0x5A}};
  for (int r = 0; r < 2; ++r) {
    outs[r].assign(out_size + guard_bytes, poison[r]);
    std::fill(outs[r].begin() + static_cast<std::ptrdiff_t>(out_size), outs[r].end(),
              guard_pattern);
    indices[r].assign(
        with_indices ? static_cast<size_t>(shape->output_elements) + guard_bytes / 8 : 0,
        r == 0 ? int64_t{-7} : int64_t{1} << 40);
    RunArgs args{in.data() + guard_bytes, outs[r].data(),
                 with_indices ? indices[r].data() : nullptr, threads};
    if (Status s = engine.run(p, layout, args); !s) return s.error();
    for (size_t i = out_size; i < outs[r].size(); ++i)
      if (outs[r][i] != guard_pattern)
        return Error{
            fmt::format("{} wrote past its output: guard byte {} after the {} output bytes changed",
                        engine.name(), i - out_size, out_size)};
    for (size_t i = static_cast<size_t>(shape->output_elements); i < indices[r].size(); ++i)
      if (indices[r][i] != indices[r][static_cast<size_t>(shape->output_elements)] ||
          indices[r][i] != (r == 0 ? int64_t{-7} : int64_t{1} << 40))
        return Error{fmt::format("{} wrote past its indices output", engine.name())};
  }
  const auto index_count = static_cast<std::ptrdiff_t>(with_indices ? shape->output_elements : 0);
  if (outs[0] != outs[1] ||
      !std::equal(indices[0].begin(), indices[0].begin() + index_count, indices[1].begin())) {
    size_t i = 0;
    while (i < out_size && outs[0][i] == outs[1][i]) ++i;
    return Error{fmt::format("{} left output {} unwritten (it kept the poison it was given)",
                             engine.name(),
                             i < out_size ? fmt::format("byte {}", i) : std::string("indices"))};
  }
  Output out;
  out.values = from_storage(p.dtype, shape->output_shape, layout,
                            std::span<const std::byte>(outs[0].data(), out_size));
  if (with_indices) {
    // Indices follow the output's layout too; bring them to spec order.
    out.indices.resize(static_cast<size_t>(shape->output_elements));
    for (int64_t i = 0; i < shape->output_elements; ++i)
      out.indices[static_cast<size_t>(i)] =
          indices[0][static_cast<size_t>(storage_position(shape->output_shape, i, layout))];
  }
  return out;
}

}  // namespace poolspec
