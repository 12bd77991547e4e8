// The canonical Problem (docs/design.md §2). It is *resolved*: no auto_pad, no framework
// names; every choice that frameworks make differently is an explicit field.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "poolspec/dtype.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

enum class Op { avg, max };

// Output extent per axis, with L = d + pb + pe and K = (k - 1) * dl + 1 (docs/semantics.md §0):
//   floor:      floor((L - K) / s) + 1
//   ceil:       ceil((L - K) / s) + 1
//   ceil_torch: ceil, then drop a last window that starts in the end padding ("DROP").
enum class Rounding { floor, ceil, ceil_torch };

// The divisor of an average:
//   exclude:      the number of window taps inside the input;
//   include_clip: the number of taps inside the padded extent [-pb, d + pe) (the ceil overhang
//                 past pe is not counted; PyTorch, the ONNX reference);
//   include_full: every tap, prod(kernel), the ceil overhang too (OpenVINO reference, oneDNN);
//   override:     a fixed divisor (PyTorch divisor_override).
enum class Divisor { exclude, include_clip, include_full, override_value };

// What a window with no input element produces (an average whose divisor is 0, or a max window
// with no in-bounds tap). `error` makes such a Problem invalid.
enum class EmptyWindow { error, zero, nan, lowest, neg_inf };

// Max and NaN. propagate: a window holding a NaN yields NaN (its index is the first NaN's).
// ignore: NaNs are not candidates; a window whose in-bounds values are all NaN yields NaN.
enum class NanPolicy { propagate, ignore };

// How an integer average is rounded to an integer: the exact mean rounded once, or `tosa`, TOSA
// AVG_POOL2D's own division of the sum by the divisor (reciprocal_scale, then apply_scale_32;
// spec/include/poolspec/tosa_division.hpp), which is the mean rounded half away from zero for
// int8 windows below 2,109,769 taps and not always from there (spec/ERRATA.md T1).
enum class IntRounding { half_even, half_away, half_up, toward_zero, floor, tosa };

// Max indices, an optional second output: the flat offset of the selected element within its
// (n, c) plane, or within the whole tensor; spatial part row-major or column-major (ONNX
// storage_order = 1). An empty window's index is -1, or with start=lowest the plane's first
// element.
enum class Indices { none, plane, tensor };
enum class IndexOrder { row_major, column_major };

// Where a max's running maximum starts.
//   first:  at the window's first candidate: the result is the window's maximum.
//   lowest: at the dtype's lowest value, with the index of the plane's element 0, and it moves
//           only on a strict '>' (the OpenVINO, ngraph, oneDNN, TensorFlow and TFLite references,
//           docs/semantics.md 2.2 and 3 G7): a window of only -inf yields lowest, not -inf, and
//           a window whose values are all at lowest reports the plane's first element.
enum class MaxStart { first, lowest };

// Float results and the two zeros.
//   equal:   -0 and +0 are equal: a max's tie goes to the first in scan order (or, with
//            start=lowest, stays with the earlier); every result keeps the sign the rules give it.
//   ordered: a max orders -0 below +0 (IEEE 754-2019 `maximum`, StableHLO's): a window holding
//            both has the maximum +0, its index the first +0's.
//   either:  as equal, but a zero result of either sign is right (TOSA: the sign of a zero
//            result is not specified). No index is asked with it: which zero's would be open.
// Integer dtypes have one zero and averages order nothing: `ordered` is a float max's only.
enum class Zeros { equal, ordered, either };

// Float results that are subnormal.
//   exact:     as the rules compute them.
//   may_flush: a subnormal result may come back as a zero (of its sign, or either sign with
//              zeros=either): TOSA permits flushing subnormal outputs.
// Integer dtypes keep `exact`.
enum class Subnormals { exact, may_flush };

// The narrowest format a float average's sums may be rounded to, which bounds what an engine may
// declare (its declared sums at least as wide; the spec's value itself is exact either way).
//   data: the data's own format.
//   f32:  f32 or wider (TOSA AVG_POOL2D's acc_type FP32 on f16 or bf16 data).
// Only f16 and bf16 averages keep `f32`: on f32 and f64 data `data` already asks as much.
enum class Sums { data, f32 };

// One spatial axis: its input extent and the window attributes along it.
struct Axis {
  int64_t extent = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  bool operator==(const Axis&) const = default;
};

struct Problem {
  Op op = Op::avg;
  DType dtype = DType::f32;
  int64_t batch = 1;       // N
  int64_t channels = 1;    // C
  std::vector<Axis> axes;  // spatial axes d1..dn, n >= 1
  Rounding rounding = Rounding::floor;
  Divisor divisor = Divisor::exclude;  // avg only
  int64_t divisor_override = 0;        // > 0 exactly when divisor == override_value
  int64_t bias = 0;  // avg only: added to the window sum, T_out = (b + T_sum) / T_div (the XS3
                     // avgpool2d_global document's formula); integer, |b| < 2^62
  EmptyWindow empty = EmptyWindow::error;
  NanPolicy nan = NanPolicy::propagate;               // max only
  IntRounding int_rounding = IntRounding::half_even;  // avg of an integer dtype only
  // Avg of an integer dtype only, each within the dtype's range (TOSA AVG_POOL2D's input_zp and
  // output_zp): input_zp is subtracted from every input value the window sums, and output_zp
  // added to the rounded quotient before it is saturated to the dtype.
  int64_t input_zp = 0;
  int64_t output_zp = 0;
  Indices indices = Indices::none;  // max only
  IndexOrder index_order = IndexOrder::row_major;
  // With indices == tensor: the flat offset over the whole tensor, taken modulo
  // prod(input_shape[index_axis:]) (OpenVINO MaxPool-8's `axis`); 0 keeps the whole offset.
  int64_t index_axis = 0;
  MaxStart max_start = MaxStart::first;       // max only
  Zeros zeros = Zeros::equal;                 // float dtypes only; ordered for a max only
  Subnormals subnormals = Subnormals::exact;  // float dtypes only
  Sums sums = Sums::data;                     // f16 and bf16 averages only

  bool operator==(const Problem&) const = default;
};

// Limits under which the spec's formulas are proved free of overflow (issue: proofs): every
// per-axis attribute and N, C below 2^31; every element count below 2^62.
inline constexpr int64_t max_attribute = (int64_t{1} << 31) - 1;
inline constexpr int64_t max_elements = int64_t{1} << 62;

std::string_view op_name(Op);
std::string_view rounding_name(Rounding);
std::string_view divisor_name(Divisor);  // "override" for override_value
std::string_view empty_window_name(EmptyWindow);
std::string_view nan_policy_name(NanPolicy);
std::string_view int_rounding_name(IntRounding);
std::string_view indices_name(Indices);
std::string_view index_order_name(IndexOrder);
std::string_view max_start_name(MaxStart);
std::string_view zeros_name(Zeros);
std::string_view subnormals_name(Subnormals);
std::string_view sums_name(Sums);

// Whether `got` is right where the rules give `expected`: the same value (same_value), or what
// the problem's float freedoms allow in its place: a zero of the other sign (zeros=either), a
// zero for a subnormal (subnormals=may_flush).
bool same_result(const Problem& p, double expected, double got);
// Whether a zero `got` is right for a float average computed within `allowed` of `expected`, of
// which `reach` is the part before the result's last rounding. Its magnitude: `expected` lies
// within `allowed` of zero, or under subnormals=may_flush within `allowed` of a subnormal value,
// which was flushed. Its sign: expected's, unless zeros=either or values of the other sign lie
// within `reach` (the value before the last rounding decides the sign of a rounded or flushed
// zero); and +0 for a window of zeros alone (`zeros_only`), whose taps sum to -0 only from -0s
// in IEEE arithmetic (the spec's value) but to +0 in a sum started at +0, as frameworks start it.
bool zero_within(const Problem& p, double expected, double allowed, double reach, bool zeros_only,
                 double got);

// Input shape (N, C, d1..dn).
std::vector<int64_t> input_shape(const Problem& p);

// Checks every rule of the model; the message names the attribute, its value and the rule.
Status validate(const Problem& p);

// The problem with the fields that do not apply to its op and dtype at their defaults: the NaN
// policy of an average, the integer rounding of a max or of a float average, the zeros and
// subnormals of an integer dtype, an average's zeros=ordered, and sums=f32 but on an f16 or bf16
// average. No rule reads them (a front-end may set them for both ops); a problem string holds
// only what applies, so parse_problem(format_problem(p)) == canonical_problem(p).
Problem canonical_problem(const Problem& p);

}  // namespace poolspec
