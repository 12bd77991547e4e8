// Framework front-ends ("profiles"): a framework's own attribute spelling -> a resolved Problem.
// Each front-end states the divisor, empty-window, NaN and rounding choices its framework makes,
// citing docs/semantics.md; see the comments in src/frontends_*.cpp (one file per framework).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"
#include "poolspec/xs3/operator.hpp"

namespace poolspec {

struct Tap;  // poolspec/evaluate.hpp

// Attribute text: `name=value` or `name="value"` pairs separated by white space, such as the
// attributes of an OpenVINO IR <data> element copied verbatim. Names may not repeat.
class Attributes {
 public:
  static Result<Attributes> parse(std::string_view text);
  bool has(std::string_view name) const;
  // Each getter marks the attribute as used; `context` names the framework/op in messages.
  Result<std::string> text(std::string_view name) const;
  Result<bool> boolean(std::string_view name) const;
  Result<bool> boolean_or(std::string_view name, bool absent) const;  // `absent` when not given
  Result<std::vector<int64_t>> ints(std::string_view name) const;
  // Fails naming the first attribute no getter asked for.
  Status no_unused(std::string_view context) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
  mutable std::map<std::string, bool, std::less<>> used_;
};

// The frameworks whose pooling rules poolspec knows (docs/semantics.md 1a, 1b).
// The compiler IRs TOSA and StableHLO are among them: TOSA's AVG_POOL2D / MAX_POOL2D and
// StableHLO's reduce_window are rule sets like a framework's.
enum class Framework {
  ngraph,
  openvino,
  onnx,
  pytorch,
  tensorflow,
  tflite,
  onednn,
  opencv,
  armnn,
  tosa,
  stablehlo
};
inline constexpr Framework all_frameworks[] = {
    Framework::ngraph,     Framework::openvino, Framework::onnx,     Framework::pytorch,
    Framework::tensorflow, Framework::tflite,   Framework::onednn,   Framework::opencv,
    Framework::armnn,      Framework::tosa,     Framework::stablehlo};
std::string_view framework_name(Framework f);
// Every framework's name, in all_frameworks' order, separated by `separator`.
std::string framework_names(std::string_view separator = " ");
Result<Framework> parse_framework(std::string_view name);

// What a front-end needs besides the attributes.
struct FrontendInput {
  Op op = Op::avg;
  DType dtype = DType::f32;
  std::vector<int64_t> input_shape;  // in the framework's own layout (TensorFlow: NHWC unless
                                     // data_format says otherwise)
  int version = 0;                   // OpenVINO or ONNX opset; 0 = the front-end's default
  bool global = false;               // ONNX GlobalAveragePool / GlobalMaxPool
};

// How the framework's tensors map onto the spec's (N, C, d1..dn).
struct Framing {
  bool channels_last = false;  // TensorFlow NWC / NHWC / NDHWC, TFLite, XS3's HWC
  // Per spatial axis: trailing input elements that no window reads and the Problem leaves out
  // (oneDNN's negative padding_r: the window range ends before the input does).
  std::vector<int64_t> crop_end;
  std::vector<int64_t> input_shape;  // the framework's input shape
  // Per spatial axis: leading input elements that no window reads (XS3's start=row,col).
  std::vector<int64_t> crop_begin;
  // False when the framework's tensors have no batch axis (XS3's (H, W, C) image): the spec's
  // N is 1 and does not appear in the framework's shapes and coordinates.
  bool batch_axis = true;
  // Per spatial axis (empty: none): StableHLO's base dilation b, b - 1 holes between neighbouring
  // input elements, each holding `hole` (the reduction's init value). The Problem's input is the
  // dilated one, holes as elements, before any crop (StableHLO pads the dilated input).
  std::vector<int64_t> base_dilation;
  double hole = 0;
  bool operator==(const Framing&) const = default;
};

// Whether the framing leaves input elements out (a crop at either end of a spatial axis).
bool crops(const Framing& framing);
// Whether the framing puts holes between the input's elements (a base dilation above 1).
bool has_holes(const Framing& framing);
// One of `explain`'s taps in the framework's input: an input element's coordinate with the crops
// undone and the holes taken out; a hole's (kind "hole") or a padding tap's coordinate in the
// dilated input, the crops undone.
struct FrameworkTap {
  std::vector<int64_t> coordinate;  // spatial
  std::string kind;                 // tap_kind_name, or "hole"
};
FrameworkTap framework_tap(const Framing& framing, const Tap& tap);

struct Frontend {
  Problem problem;
  Framing framing;
  std::string operator_name;  // "OpenVINO MaxPool-8", "ONNX AveragePool-22", "torch avg_pool2d"
};

// Ends a front-end's error for attributes the framework accepts but poolspec's problem model
// cannot state (OpenCV's and Arm NN's drop tests where no rounding of the model gives the same
// windows): not a refusal of the framework's.
inline constexpr std::string_view model_cannot_state =
    "(poolspec's problem model cannot state them)";

// Any framework's attribute text -> the resolved Problem and the framing of its tensors.
// A problem the rule set refuses (an error) is *invalid*: an implementation must refuse it too.
Result<Frontend> from_framework(Framework f, std::string_view attributes, const FrontendInput& in);

// A rule set's verdict on a problem, the three of TOSA's compliance model: *invalid* (the rule set
// refuses it, and an implementation must refuse it too), *unpredictable* (accepted, but some
// results may hold any value, though nothing is written out of bounds: TOSA's REQUIRE), or
// *defined* (exact, or within the derived bound). A problem the rule set accepts but poolspec's
// model cannot state (a refusal ending in model_cannot_state) has none of the three: it is
// beyond_model.
struct RuleVerdict {
  enum Kind { invalid, unpredictable, defined, beyond_model };
  Kind kind = defined;
  std::string why;  // the refusal, or why results are unpredictable; empty when defined
  // Defined within a bound: the bound and how the rules make it (StableHLO's float sums in any
  // order); empty when the rules define the result exactly.
  std::string bound;
  std::string_view name() const;  // "invalid", "unpredictable", "defined", "beyond the model"
  // The name, then ": " and the reason (or, defined within a bound, the bound).
  std::string text() const;
  bool operator==(const RuleVerdict&) const = default;
};

// The verdict of framework f's rules on what its front-end made of a problem's attributes.
RuleVerdict verdict_of(Framework f, const Result<Frontend>& resolved);

// The framework's tensor in the spec's (N, C, d1..dn) layout, and the spec's output (values or
// indices, same shape) in the framework's layout.
// Outputs are never cropped: an output's framing is the input's without crops (output_framing).
Tensor to_spec_layout(const Framing& framing, const Tensor& framework_tensor);
Tensor to_framework_layout(const Framing& framing, const Tensor& spec_tensor);
std::vector<int64_t> to_framework_shape(const Framing& framing,
                                        const std::vector<int64_t>& spec_shape);
Framing output_framing(const Framing& framing, const std::vector<int64_t>& framework_output_shape);
// An output element's spec coordinate (n, c, o...) in the framework's order (channels-last:
// (n, o..., c); without a batch axis, n left out), and back.
std::vector<int64_t> to_framework_coordinate(const Framing& framing,
                                             std::vector<int64_t> spec_coordinate);
std::vector<int64_t> to_spec_coordinate(const Framing& framing,
                                        std::vector<int64_t> framework_coordinate);

// ngraph v0 AvgPool / MaxPool (the seeds): window_shape, window_movement_strides, padding_below,
// padding_above, include_padding_in_avg_computation (AvgPool), pad_type, ceil_mode.
Result<Problem> from_ngraph(std::string_view attributes, const FrontendInput& in);

// OpenVINO AvgPool-1/14/16 and MaxPool-1/8/14, the op version chosen by the opset `in.version`
// (default 1): strides, pads_begin, pads_end, kernel, exclude-pad (AvgPool), rounding_type,
// auto_pad; dilations (AvgPool-16, MaxPool-8), index_element_type and axis (MaxPool-8).
Result<Problem> from_openvino(std::string_view attributes, const FrontendInput& in);

// ONNX AveragePool / MaxPool / GlobalAveragePool / GlobalMaxPool at opset `in.version`
// (default 22): kernel_shape, strides, pads, auto_pad, ceil_mode, count_include_pad, dilations,
// storage_order.
Result<Problem> from_onnx(std::string_view attributes, const FrontendInput& in);

// torch.nn.functional avg_pool1d/2d/3d and max_pool1d/2d/3d, by the input's rank: kernel_size,
// stride, padding, ceil_mode, count_include_pad, divisor_override, dilation, return_indices.
Result<Problem> from_pytorch(std::string_view attributes, const FrontendInput& in);

// tf.nn.avg_pool / max_pool (1-3 spatial axes): ksize, strides, padding (VALID, SAME, EXPLICIT
// with explicit_paddings for max), data_format, dilations (tf.nn.pool, strides 1).
Result<Frontend> from_tensorflow(std::string_view attributes, const FrontendInput& in);

// TFLite AVERAGE_POOL_2D / MAX_POOL_2D (NHWC): Pool2DOptions padding, stride_w, stride_h,
// filter_width, filter_height, fused_activation_function (NONE only).
Result<Frontend> from_tflite(std::string_view attributes, const FrontendInput& in);

// oneDNN pooling forward: alg (pooling_max, pooling_avg_include_padding,
// pooling_avg_exclude_padding), kernel, strides, dilation (0-based), padding_l, padding_r (may
// be negative), dst (the caller's dst spatial dims, checked).
Result<Frontend> from_onednn(std::string_view attributes, const FrontendInput& in);

// OpenCV DNN 4.6 Pooling layer (2-D, NCHW, f32): pool (max, ave), kernel_h, kernel_w, stride_h,
// stride_w, pad_t, pad_b, pad_l, pad_r, ceil_mode (default true), ave_pool_padded_area (default
// true).
Result<Frontend> from_opencv(std::string_view attributes, const FrontendInput& in);

// Arm NN 20.08 Pooling2d (2-D): pool_type (Max, Average), pool_width, pool_height, stride_x,
// stride_y, pad_left, pad_right, pad_top, pad_bottom, output_shape_rounding (Floor, Ceiling),
// padding_method (IgnoreValue, Exclude), data_layout (NCHW, NHWC; the input shape is in it).
Result<Frontend> from_armnn(std::string_view attributes, const FrontendInput& in);

// TOSA AVG_POOL2D / MAX_POOL2D (NHWC, rank 4): kernel=ky,kx stride=sy,sx
// pad=top,bottom,left,right, acc_type (AVG_POOL2D), input_zp and output_zp (i8), nan_mode
// (MAX_POOL2D), level (8K or NONE).
Result<Frontend> from_tosa(std::string_view attributes, const FrontendInput& in);
// TOSA's unpredictable results: an int8 average whose int32 accumulator can overflow.
std::string tosa_unpredictable(const Problem& p);
// The problem TOSA's attributes mean with no ERROR_IF or LEVEL_CHECK applied (a window of padding
// only yields zero): what a backend that claims TOSA's rules is asked, and must refuse, when
// from_tosa refuses the attributes. Errors only where the model cannot state them.
Result<Frontend> tosa_as_written(std::string_view text, const FrontendInput& in);

// StableHLO reduce_window as pooling (any rank >= 3; batch dimension 0, channels 1 or last):
// window_dimensions, window_strides, base_dilations (holes holding the init value, which the
// framing puts into the Problem's input), window_dilations, padding (low, high per dimension;
// negative: a crop), init_value, divisor (avg: window or count).
Result<Frontend> from_stablehlo(std::string_view attributes, const FrontendInput& in);
// The bound within which StableHLO defines a float average (its sum in any order), or "".
std::string stablehlo_bound(const Problem& p);
// A reduce_window StableHLO accepts although some dimension has no window (is_empty_window): its
// result is empty, not an error (C15). The Problem model has no empty outputs; this states the
// result beside it.
struct EmptyResult {
  std::vector<int64_t> input_shape;   // as given
  std::vector<int64_t> output_shape;  // StableHLO's result shape: 0 where no window fits
  std::string why;                    // the first such dimension, its window and padded input
};
// The empty result of these attributes, or none: when every dimension has a window, or the
// attributes break reduce_window's constraints (from_stablehlo says which).
std::optional<EmptyResult> stablehlo_empty_result(std::string_view attributes,
                                                  const FrontendInput& in);

}  // namespace poolspec

namespace poolspec {

// The operator, and the spec's meaning of it: the seed document's formula
// y = (b + sum X) / (X_h * X_w) for the global op, the window mean for avgpool2d (no bias), the
// window max for maxpool2d -- each rounded half up (RSHR's rule) and saturated to int8. The
// Problem is NCHW (N = 1) over the window rows and columns the operator reads; the framing maps
// the (H, W, C) image onto it (channels last, no batch axis, cropped to those rows and columns).
struct Xs3Frontend {
  Xs3Operator op;
  Problem problem;
  Framing framing;
};
Result<Xs3Frontend> from_xs3(std::string_view attributes, const std::vector<int64_t>& hwc_shape);

}  // namespace poolspec
