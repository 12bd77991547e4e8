// Pieces the framework front-ends share: reading per-axis attribute lists, auto padding, the
// common refusals. Private to spec/src.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/frontends.hpp"

namespace poolspec::frontend {

enum class PadMode { explicit_pads, same_upper, same_lower, valid };

// The window geometry in a framework's terms, before auto padding is resolved.
struct Geometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  PadMode mode = PadMode::explicit_pads;
  Rounding rounding = Rounding::floor;
};

// The framework's own names for the geometry attributes, for messages.
struct GeometryNames {
  std::string_view kernel, strides, pads_begin, pads_end, pad_mode;
};

// How a framework fills attributes that are absent.
struct Defaults {
  bool strides_one;  // strides default to 1s (otherwise required)
  bool pads_zero;    // explicit pads default to 0s (otherwise required with explicit padding)
};

// auto_pad / pad_type spellings: explicit|notset, same_upper, same_lower, valid (any case).
Result<PadMode> pad_mode(std::string_view name, std::string_view value);

// An integer list attribute with one value per spatial axis, each >= `min` and below 2^31.
Status read_axis_list(const Attributes& attrs, std::string_view name, size_t rank, int64_t min,
                      std::vector<int64_t>& out);

// A single-valued integer attribute (OpenCV's kernel_h, Arm NN's pool_width): >= `min` and below
// 2^31; `absent` when it is not given, or an error naming it when it is required (nullopt).
Result<int64_t> read_scalar(const Attributes& attrs, std::string_view name, int64_t min,
                            std::optional<int64_t> absent);

// kernel, strides, pad mode and pads (dilations are left at 1; a front-end that has them reads
// them itself).
Result<Geometry> read_geometry(const Attributes& attrs, const GeometryNames& names, size_t rank,
                               Defaults defaults);

// The Problem of a geometry on the (N, C, d1..dn) input: same_* pads from o = ceil(d/s),
// P = max(0, (o-1)*s + K - d) with the dilated K, floor(P/2) at the beginning for same_upper
// and at the end for same_lower (docs/semantics.md 0 and 2.3); valid: zero pads.
Result<Problem> resolve(const Geometry& g, const GeometryNames& names, const FrontendInput& in,
                        const std::vector<int64_t>& nc_spatial);

// Rank and N, C checks. `spatial_min`..`spatial_max` spatial axes.
Status check_input_shape(const std::vector<int64_t>& shape, size_t spatial_min, size_t spatial_max,
                         std::string_view context);

// "Kernel after dilation is sometimes entirely in the padding area" (OpenVINO AvgPool with
// exclude-pad, ngraph AvgPool without include_padding): the kernel must exceed both pads.
Status check_window_beyond_pads(const Problem& p, std::string_view kernel_name,
                                std::string_view begin_name, std::string_view end_name,
                                std::string_view why);

// A dtype the framework's operator does not take.
Status check_dtype(DType d, const std::vector<DType>& allowed, std::string_view context);

// Per-axis values of attribute `name`: each >= `min` and below 2^31.
Status check_axis_values(std::string_view name, const std::vector<int64_t>& values, int64_t min);

// The result of a front-end whose Problem reads the framework's tensors as they are, or
// transposed from channels-last; nothing cropped.
Frontend framed(Problem p, const std::vector<int64_t>& framework_input_shape, bool channels_last);

// The op version an opset holds: OpenVINO AvgPool-1 (opsets 1-13), -14 (14, 15), -16 (16-);
// MaxPool-1 (1-7), -8 (8-13), -14 (14-). ONNX AveragePool 1/7/10/11/19/22, MaxPool
// 1/8/10/11/12/22, the Global ops 1/22 (onnx/defs/nn/defs.cc and old.cc).
int openvino_op_version(Op op, int opset);
int onnx_op_version(Op op, bool global, int opset);

// A framework whose output extents follow a rule of its own (OpenCV's and Arm NN's drop tests):
// the rounding of the problem model, among `candidates` in order, that gives `extents` on every
// axis -- the same windows, since a window's start and taps do not depend on the rounding -- or
// an error naming the first axis none reproduces.
Result<Rounding> rounding_for_extents(const Problem& p, const std::vector<int64_t>& extents,
                                      const std::vector<Rounding>& candidates,
                                      std::string_view context);

// Reads a strict-'>' reference's MaxPool: running max from lowest(), NaN never selected, an
// empty window yields lowest() (docs/semantics.md 2.2; oneDNN and TFLite alike).
void use_lowest_start_max(Problem& p);

// `text` without surrounding white space.
std::string_view trim(std::string_view text);

}  // namespace poolspec::frontend
