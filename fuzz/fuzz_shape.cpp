// fuzz_shape: the spec's shape rules against an enumeration of window starts and taps, written
// here independently of the closed forms of formulas.hpp.
//
// Targets: infer_shape / validate (output extents, the empty-window witness, the element-count
// limits), the per-window divisors (in_bounds_taps, padded_taps) and SAME padding (same_pads).
// Input: FuzzedDataProvider bytes decoded into a Problem (fuzz_input.hpp, attributes sometimes
// outside their ranges), then per-axis attributes up to a few thousand for the enumeration.
// Oracle, per axis, by walking the windows one by one:
//   floor:      window j is allowed while j*s + K <= L;
//   ceil:       window 0, and window j >= 1 while window j-1 has not reached the end ((j-1)*s + K <
//   L); ceil_torch: the ceil windows, less the last if it starts in the end padding (j*s - pb >=
//   d); the taps of window j are j*s - pb + t*dl, t in [0, k): counted inside [0, d) (the exclude
//   divisor) and inside [-pb, d + pe) (include_clip); the first window (axis by axis) with none
//   counted is the empty-window witness; validate() refuses exactly when empty=error and there is
//   one; SAME pads give ceil(d/s) floor windows, and one pad less would not.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "fuzz_input.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::fuzz {
namespace {

[[noreturn]] void fail(const Problem& p, const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_shape: FAILURE\nproblem: %s\n%s\n", format_problem(p).c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

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

struct TapCounts {
  int64_t in_bounds = 0, in_padded_extent = 0;
};
TapCounts enumerated_taps(const Axis& a, int64_t j) {
  TapCounts c;
  for (int64_t t = 0; t < a.kernel; ++t) {
    const int64_t x = j * a.stride - a.pad_begin + t * a.dilation;
    c.in_bounds += x >= 0 && x < a.extent;
    c.in_padded_extent += x >= -a.pad_begin && x < a.extent + a.pad_end;
  }
  return c;
}

// Widens the decoded problem's axes to attributes up to `limit`, so the extents are not all tiny.
void widen(FuzzedDataProvider& in, Problem& p) {
  const int64_t limit = pick(in, std::array<int64_t, 3>{40, 400, 2000});
  for (Axis& a : p.axes) {
    if (!in.ConsumeBool()) continue;
    a.extent = in.ConsumeIntegralInRange<int64_t>(1, limit);
    a.stride = in.ConsumeIntegralInRange<int64_t>(1, limit / 4);
    a.kernel = in.ConsumeIntegralInRange<int64_t>(1, limit / 8);
    a.dilation = in.ConsumeIntegralInRange<int64_t>(1, 4);
    a.pad_begin = in.ConsumeIntegralInRange<int64_t>(0, limit / 4);
    a.pad_end = in.ConsumeIntegralInRange<int64_t>(0, limit / 4);
  }
}

bool attributes_in_range(const Axis& a) {
  return a.extent >= 1 && a.kernel >= 1 && a.stride >= 1 && a.dilation >= 1 && a.pad_begin >= 0 &&
         a.pad_end >= 0 && (a.kernel - 1) * a.dilation + 1 <= a.extent + a.pad_begin + a.pad_end;
}

void check_same_pads(const Problem& p, const Axis& a) {
  for (bool upper : {true, false}) {
    const auto pads = formulas::same_pads<int64_t>(a.extent, a.kernel, a.stride, a.dilation, upper);
    const int64_t wanted = (a.extent + a.stride - 1) / a.stride;
    Axis padded = a;
    padded.pad_begin = pads.begin;
    padded.pad_end = pads.end;
    const int64_t total = pads.begin + pads.end;
    // same_upper: floor(P/2) at the beginning, the odd extra at the end; same_lower the reverse.
    const int64_t extra = upper ? pads.end - pads.begin : pads.begin - pads.end;
    if (pads.begin < 0 || pads.end < 0 || extra < 0 || extra > 1)
      fail(p, fmt::format("same_{} pads {}+{}: not split as the rule says",
                          upper ? "upper" : "lower", pads.begin, pads.end));
    if ((a.kernel - 1) * a.dilation + 1 > a.extent + total)
      fail(p, "same pads too small for the window");
    if (enumerated_extent(padded, Rounding::floor) != wanted)
      fail(p, fmt::format("same pads {}+{} give {} windows, ceil(d/s) = {}", pads.begin, pads.end,
                          enumerated_extent(padded, Rounding::floor), wanted));
    if (total > 0) {
      Axis less = padded;
      (upper ? less.pad_end : less.pad_begin) -= 1;
      if ((a.kernel - 1) * a.dilation + 1 <= a.extent + total - 1 &&
          enumerated_extent(less, Rounding::floor) == wanted)
        fail(p, fmt::format("same pads {}+{} are not the least: one less still gives {} windows",
                            pads.begin, pads.end, wanted));
    }
  }
}

void run_one(FuzzedDataProvider& in) {
  Problem p = consume_problem(in, ProblemLimits{4, 1 << 20, true});
  widen(in, p);
  Result<ShapeInfo> shape = infer_shape(p);
  bool in_range = p.batch >= 1 && p.channels >= 1;
  for (const Axis& a : p.axes) in_range = in_range && attributes_in_range(a);
  if (!in_range) {
    if (shape) fail(p, "infer_shape accepts an attribute outside its range");
    return;
  }
  if (!shape) return;  // the other field rules (bias on a max, ...) are the problem tests' concern

  std::optional<EmptyWindowWitness> first_empty;
  const bool has_divisor =
      p.op == Op::max || p.divisor == Divisor::exclude || p.divisor == Divisor::include_clip;
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    const auto terms = formulas::terms_of<int64_t>(a);
    const int64_t extent = enumerated_extent(a, p.rounding);
    if (shape->output_shape[i + 2] != extent)
      fail(p, fmt::format("axis {}: output extent {}, the enumeration {}", i,
                          shape->output_shape[i + 2], extent));
    for (int64_t j = 0; j < extent; ++j) {
      const TapCounts c = enumerated_taps(a, j);
      if (formulas::in_bounds_taps(terms, j) != c.in_bounds ||
          formulas::padded_taps(terms, j) != c.in_padded_extent)
        fail(p,
             fmt::format(
                 "axis {} window {}: taps in the input {} (enumerated {}), in the padded extent {} "
                 "(enumerated {})",
                 i, j, formulas::in_bounds_taps(terms, j), c.in_bounds,
                 formulas::padded_taps(terms, j), c.in_padded_extent));
      const bool clip = p.op == Op::avg && p.divisor == Divisor::include_clip;
      if (has_divisor && !first_empty && (clip ? c.in_padded_extent : c.in_bounds) == 0)
        first_empty = EmptyWindowWitness{int(i), j, j * a.stride - a.pad_begin};
    }
    check_same_pads(p, a);
  }
  const auto& w = shape->empty_window;
  if (w.has_value() != first_empty.has_value() ||
      (w && (w->axis != first_empty->axis || w->index != first_empty->index ||
             w->start != first_empty->start)))
    fail(p, fmt::format(
                "empty-window witness {}, the enumeration's first {}",
                w ? fmt::format("axis {} index {} start {}", w->axis, w->index, w->start) : "none",
                first_empty ? fmt::format("axis {} index {} start {}", first_empty->axis,
                                          first_empty->index, first_empty->start)
                            : "none"));
  const bool refused = !validate(p).ok();
  if (refused != (p.empty == EmptyWindow::error && first_empty.has_value()))
    fail(p, fmt::format("validate() {} it, but empty=error and the witness say otherwise",
                        refused ? "refuses" : "accepts"));
}

}  // namespace
}  // namespace poolspec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  poolspec::fuzz::run_one(in);
  return 0;
}
