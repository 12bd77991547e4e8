#include "poolspec/reference/check.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "element_probe.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/check.h"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::reference {

namespace {

// splitmix64: a small, well-mixed stream per call (no shared state between threads).
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t below(uint64_t& state, int64_t n) {
  return static_cast<int64_t>(next(state) % static_cast<uint64_t>(n));
}

// Whether call k is one of the checked ones: the calls where floor(k * rate) steps.
bool sampled(int64_t k, double rate) {
  if (rate >= 1) return true;
  return std::floor(static_cast<double>(k + 1) * rate) > std::floor(static_cast<double>(k) * rate);
}

}  // namespace

Checker::Checker(CheckOptions options) : options_(std::move(options)) {}

CheckStats Checker::stats() const {
  return {calls_.load(), checked_calls_.load(), checked_elements_.load(),
          mismatching_calls_.load()};
}

Result<std::optional<ElementMismatch>> Checker::check(const Problem& p, Layout layout,
                                                      const std::byte* input,
                                                      const std::byte* output,
                                                      const int64_t* indices) {
  return check_with_bound(p, layout, input, output, indices, options_.bound);
}

Result<std::optional<ElementMismatch>> Checker::check_with_bound(const Problem& p, Layout layout,
                                                                 const std::byte* input,
                                                                 const std::byte* output,
                                                                 const int64_t* indices,
                                                                 const ErrorBound& bound) {
  // A rate outside (0, 1] or a negative sample count would check nothing, silently: refused on
  // every call instead, as the C API refuses it when the checker is made.
  if (!(options_.rate > 0 && options_.rate <= 1))
    return Error{fmt::format("check: rate={}: the fraction of calls checked must be in (0, 1]",
                             options_.rate)};
  if (options_.samples < 0)
    return Error{
        fmt::format("check: samples={}: must be >= 0 (0: every element)", options_.samples)};
  const int64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
  if (!sampled(call, options_.rate)) return std::optional<ElementMismatch>{};
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  const bool with_indices = p.op == Op::max && p.indices != Indices::none;
  if (!input || !output || (with_indices && !indices))
    return Error{
        "check: a buffer is missing (input, output, or the indices of a max with indices)"};
  checked_calls_.fetch_add(1, std::memory_order_relaxed);
  ElementProbe probe(p, layout, *shape, input);
  const ErrorBound reference_bound = engine().error_bound(p, layout);
  const size_t rank = p.axes.size();
  const std::vector<int64_t>& out_shape = shape->output_shape;
  const int64_t total = shape->output_elements;
  const bool all = options_.samples <= 0 || options_.samples >= total;
  const int64_t count = all ? total : options_.samples;
  uint64_t state = options_.seed ^ (static_cast<uint64_t>(call) * 0xD1B54A32D192ED03ull);
  std::vector<int64_t> coordinate(rank + 2);
  const auto width = static_cast<int64_t>(storage_bytes(p.dtype));
  for (int64_t s = 0; s < count; ++s) {
    int64_t flat = 0;
    if (all) {
      flat = s;
      for (size_t i = rank + 2, rest = static_cast<size_t>(s); i-- > 0;) {
        coordinate[i] = static_cast<int64_t>(rest % static_cast<size_t>(out_shape[i]));
        rest /= static_cast<size_t>(out_shape[i]);
      }
    } else {
      // Half the samples on the border, where the divisors and the ceil overhang differ.
      const bool border = s % 2 == 0;
      for (size_t i = 0; i < rank + 2; ++i) {
        const int64_t extent = out_shape[i];
        coordinate[i] =
            border && i >= 2 ? ((next(state) & 1) ? extent - 1 : 0) : below(state, extent);
        flat = flat * extent + coordinate[i];
      }
    }
    const ElementValue e = probe.at(coordinate[0], coordinate[1], coordinate.data() + 2);
    const int64_t at = storage_position(out_shape, flat, layout);
    const double got = load_element(p.dtype, output + at * width);
    checked_elements_.fetch_add(1, std::memory_order_relaxed);
    ElementMismatch m;
    m.expected = e.value;
    m.got = got;
    bool ok = same_result(p, e.value, got);  // the value, or what the float freedoms allow
    if (!ok && p.op == Op::avg && !is_float(p.dtype))
      ok = std::fabs(got - e.value) <= static_cast<double>(bound.integer_units);
    if (!ok && p.op == Op::avg && is_float(p.dtype) && e.divisor > 0 && std::isfinite(e.value)) {
      const double abs_sum =
          e.abs_sum * (1 + std::ldexp(1.0, -50)) + std::fabs(static_cast<double>(p.bias));
      if (bound.overflow_threshold > 0 && abs_sum >= bound.overflow_threshold) continue;
      // Both the caller and the reference round: their distance is within the two bounds.
      m.allowed = allowed_error(bound, p.dtype, abs_sum, e.divisor, e.value) +
                  allowed_error(reference_bound, p.dtype, abs_sum, e.divisor, e.value);
      m.error = std::isfinite(got) ? std::fabs(got - e.value) : INFINITY;
      // A zero: within the bound (or flushed), and of the sign the values before it allow: the
      // caller's value before its last rounding, around the exact value the reference rounded.
      const double reach =
          abs_sum == 0 ? 0
                       : reach_before_last_rounding(bound, p.dtype, abs_sum, e.divisor, e.value) +
                             allowed_error(reference_bound, p.dtype, abs_sum, e.divisor, e.value);
      ok = got == 0 ? zero_within(p, e.value, m.allowed, reach, abs_sum == 0, got)
                    : m.error <= m.allowed;
    }
    if (with_indices) {
      m.expected_index = e.index;
      m.got_index = indices[at];
      ok = ok && m.expected_index == m.got_index;
    }
    if (ok) continue;
    m.coordinate = coordinate;
    if (m.error == 0) m.error = std::isfinite(got - e.value) ? std::fabs(got - e.value) : INFINITY;
    if (is_float(p.dtype) && std::isfinite(e.value))
      m.error_ulps = m.error / ulp_of(p.dtype, e.value);
    mismatching_calls_.fetch_add(1, std::memory_order_relaxed);
    return std::optional<ElementMismatch>{std::move(m)};
  }
  return std::optional<ElementMismatch>{};
}

std::string mismatch_text(const Problem& p, const ElementMismatch& m) {
  std::string text = fmt::format("{} at ({}): expected {}, got {}", format_problem(p),
                                 fmt::join(m.coordinate, ","), m.expected, m.got);
  if (m.expected_index >= 0 || m.got_index >= 0)
    text += fmt::format(", index expected {} got {}", m.expected_index, m.got_index);
  if (m.allowed > 0)
    text += fmt::format(", error {:.3g} ({:.3g} ulp), allowed {:.3g}", m.error, m.error_ulps,
                        m.allowed);
  return text;
}

}  // namespace poolspec::reference

// ---- the C API ----------------------------------------------------------------------------------

struct poolspec_checker {
  poolspec_check_options options;
  poolspec::reference::Checker checker;  // its bound is set per problem from options.accumulation
};

extern "C" {

poolspec_check_options poolspec_check_default_options(void) {
  const poolspec::reference::CheckOptions d;
  return {d.samples, d.rate, d.seed, {POOLSPEC_EXACT_SUMS, 0, 0, 0}};
}

poolspec_checker* poolspec_checker_create(const poolspec_check_options* options) {
  const poolspec_check_options o = options ? *options : poolspec_check_default_options();
  if (!(o.rate > 0 && o.rate <= 1)) return nullptr;
  // A declared accumulation is validated, never trusted: a wide one would pass anything.
  if (!poolspec::accumulation_problem(o.accumulation).empty()) return nullptr;
  poolspec::reference::CheckOptions co;
  co.samples = o.samples;
  co.rate = o.rate;
  co.seed = o.seed;
  return new (std::nothrow) poolspec_checker{o, poolspec::reference::Checker(co)};
}

void poolspec_checker_destroy(poolspec_checker* checker) { delete checker; }

poolspec_check_stats poolspec_checker_stats(const poolspec_checker* checker) {
  const poolspec::reference::CheckStats s = checker->checker.stats();
  return {s.calls, s.checked_calls, s.checked_elements, s.mismatching_calls};
}

int poolspec_check(poolspec_checker* checker, const poolspec_problem* problem, const void* input,
                   const void* output, const int64_t* indices, poolspec_mismatch* mismatch) {
  const auto say = [&](const std::string& text) {
    if (mismatch) std::snprintf(mismatch->message, sizeof mismatch->message, "%s", text.c_str());
  };
  if (!checker || !problem) {
    say("poolspec_check: checker and problem must be given");
    return 2;
  }
  poolspec::Result<poolspec::Problem> p = poolspec::from_c_problem(*problem);
  if (!p) {
    say(p.error().message);
    return 2;
  }
  // The caller's accuracy for this problem (from its declared accumulation), then the check.
  if (std::string e = poolspec::accumulation_problem(checker->options.accumulation, *p);
      !e.empty()) {
    say(e);
    return 2;
  }
  const poolspec::ErrorBound bound =
      poolspec::bound_of(checker->options.accumulation, *p, "caller");
  auto result = checker->checker.check_with_bound(
      *p, poolspec::layout_of(*problem), static_cast<const std::byte*>(input),
      static_cast<const std::byte*>(output), indices, bound);
  if (!result) {
    say(result.error().message);
    return 2;
  }
  if (!*result) return 0;
  if (mismatch) {
    const poolspec::ElementMismatch& m = **result;
    mismatch->rank = static_cast<int32_t>(m.coordinate.size());
    for (size_t i = 0; i < m.coordinate.size(); ++i) mismatch->coordinate[i] = m.coordinate[i];
    mismatch->expected = m.expected;
    mismatch->got = m.got;
    mismatch->allowed = m.allowed;
    mismatch->expected_index = m.expected_index;
    mismatch->got_index = m.got_index;
    say(poolspec::reference::mismatch_text(*p, m));
  }
  return 1;
}

}  // extern "C"
