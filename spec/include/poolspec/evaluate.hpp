// The definition, evaluated exactly (docs/design.md §3). Transcribes the ngraph formal
// definition of AvgPool: T_out = T_sum / T_div, where T_sum sums the window's in-bounds values
// and T_div is the divisor the problem's rule gives; and MaxPool: the maximum of the window's
// in-bounds values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec {

struct Output {
  Tensor values;                 // shape (N, C, o1..on), the problem's dtype
  std::vector<int64_t> indices;  // max with indices only: same shape; an empty window: -1, or
                                 // the plane's first element with start=lowest
};

// Evaluates the problem on `input` (whose dtype and shape must be the problem's).
// Float averages: the window sum is exact (no rounding), the quotient is rounded once, to
// nearest-even, into the dtype. Integer averages: the sum of x - input_zp over the window (plus
// the bias) divided as p.int_rounding says (the exact mean rounded, or TOSA's division), plus
// output_zp, saturated to the dtype's range. Max: by p.nan; ties (-0 and +0 included) go to the
// first element in scan order (row-major over the kernel offsets).
Result<Output> evaluate(const Problem& p, const Tensor& input);

// What an empty window yields under the problem's rule (p.empty; 0 for `error`, which validate()
// refuses wherever a window is empty). Shared by the spec and the engines.
double empty_window_value(const Problem& p);

// One tap of a window, for `explain`.
enum class TapKind { input, pad_begin, pad_end, overhang };  // overhang: past the padded extent
struct Tap {
  std::vector<int64_t> offset;      // kernel offset per axis
  std::vector<int64_t> coordinate;  // input coordinate per axis (may be outside [0, d))
  TapKind kind = TapKind::input;    // overhang when some axis is past the padded extent, else
                                    // the kind of the first axis that is not `input`
  std::optional<double> value;      // in-bounds taps only
  int64_t input_index = -1;         // flat row-major index into the input, in-bounds taps only
};

struct Explanation {
  std::vector<int64_t> output_coordinate;  // (n, c, o1..on)
  std::vector<Tap> taps;
  int64_t in_bounds = 0;           // taps inside the input
  int64_t in_padded_extent = 0;    // taps inside [-pb, d+pe) on every axis
  std::optional<int64_t> divisor;  // avg only
  std::string exact_value;         // the exact sum / divisor as a fraction, or the max; text
  double result = 0;               // the output element
  std::optional<int64_t> index;    // max with indices
  std::string rule;                // which clause decided (e.g. "empty window: zero")
};

Result<Explanation> explain(const Problem& p, const Tensor& input,
                            const std::vector<int64_t>& output_coordinate);

std::string_view tap_kind_name(TapKind kind);

}  // namespace poolspec
