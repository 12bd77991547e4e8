// Small cases per framework, one or more for every row of docs/semantics.md section 1b, with the
// expected outputs computed by hand from each framework's documented rule (the derivation is in
// each row's comment), not by poolspec. Each case goes through the framework's own attribute
// spelling and poolspec's front-end for it.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double f32_lowest = -3.4028234663852886e38;

struct HandCase {
  const char* row;  // the section 1b row and column the case stands for
  Framework framework;
  int version;
  Op op;
  const char* attributes;
  DType dtype;
  std::vector<int64_t> shape;  // the framework's layout
  std::vector<double> input;
  std::vector<int64_t> expected_shape;
  std::vector<double> expected;                // by hand; f32 cases compare after rounding to float
  std::vector<int64_t> expected_indices = {};  // empty: no indices output
  const char* refusal = nullptr;               // the case is refused; the message contains this
};

// The 4x4 input 1..16 (row-major).
const std::vector<double> ramp16 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

// 4x4 1..16, k3 s2 p1, ceil, include padding: 3x3 windows whose rows (and columns) are
// {-1,0,1}, {1,2,3}, {3,4,5}; d = 4, so 4 is end padding and 5 is ceil overhang. Window sums of
// the in-bounds values: (0,0) 1+2+5+6 = 14, (0,1) 2+3+4+6+7+8 = 30, (0,2) 4+8 = 12,
// (1,0) 5+6+9+10+13+14 = 57, (1,1) 99, (1,2) 8+12+16 = 36, (2,0) 13+14 = 27, (2,1) 45, (2,2) 16.
// INCL-CLIP divides by the taps inside [-1, 5): 3 per axis except the last window's 2, so
// 9 9 6 / 9 9 6 / 6 6 4. INCL-FULL divides every window by 9.
const std::vector<double> incl_clip = {14.0 / 9, 30.0 / 9, 12.0 / 6, 57.0 / 9, 99.0 / 9,
                                       36.0 / 6, 27.0 / 6, 45.0 / 6, 16.0 / 4};
const std::vector<double> incl_full = {14.0 / 9, 30.0 / 9, 12.0 / 9, 57.0 / 9, 99.0 / 9,
                                       36.0 / 9, 27.0 / 9, 45.0 / 9, 16.0 / 9};

const HandCase cases[] = {
    // ---- include-pad divisor with the ceil overhang -------------------------------------------
    {"PyTorch: count_include_pad is INCL-CLIP",
     Framework::pytorch,
     0,
     Op::avg,
     "kernel_size=3 stride=2 padding=1 ceil_mode=True count_include_pad=True",
     DType::f64,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_clip},
    {"ONNX reference: count_include_pad=1 is INCL-CLIP",
     Framework::onnx,
     22,
     Op::avg,
     "kernel_shape=3,3 strides=2,2 pads=1,1,1,1 ceil_mode=1 count_include_pad=1",
     DType::f64,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_clip},
    {"OpenVINO reference: exclude-pad=false with pads is INCL-FULL",
     Framework::openvino,
     1,
     Op::avg,
     R"(kernel="3,3" strides="2,2" pads_begin="1,1" pads_end="1,1" rounding_type="ceil" exclude-pad="false")",
     DType::f64,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_full},
    // oneDNN has no ceil: the caller enlarges padding_r to 2, so floor((4 + 1 + 2 - 3)/2) + 1 = 3,
    // and include_padding divides by KH*KW = 9 (uxlfoundation/oneDNN#513).
    {"oneDNN: include_padding with ceil emulated by padding_r is INCL-FULL",
     Framework::onednn,
     0,
     Op::avg,
     "alg=pooling_avg_include_padding kernel=3,3 strides=2,2 padding_l=1,1 padding_r=2,2",
     DType::f32,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_full},
    // ngraph's CoordinateTransform throws for a window past the padded extent.
    {"ngraph v0: include_padding with a ceil overhang is undefined (the reference throws)",
     Framework::ngraph,
     0,
     Op::avg,
     "window_shape=3,3 window_movement_strides=2,2 padding_below=1,1 padding_above=1,1 "
     "include_padding_in_avg_computation=true ceil_mode=true",
     DType::f64,
     {1, 1, 4, 4},
     ramp16,
     {},
     {},
     {},
     "end corner out of bounds"},
    // TensorFlow never counts padding. SAME, k3 s2 on 4: o = 2, P = max(0, 1*2 + 3 - 4) = 1, all
    // at the end. Windows rows/cols {0,1,2}, {2,3,(4)}: (0,0) sum of rows 0-2 cols 0-2 = 54 / 9;
    // (0,1) 3+4+7+8+11+12 = 45 / 6; (1,0) 9+10+11+13+14+15 = 72 / 6; (1,1) 11+12+15+16 = 54 / 4.
    {"TensorFlow: SAME never counts padding",
     Framework::tensorflow,
     0,
     Op::avg,
     "ksize=3 strides=2 padding=SAME",
     DType::f32,
     {1, 4, 4, 1},
     ramp16,
     {1, 2, 2, 1},
     {6, 7.5, 12, 13.5}},
    {"TFLite: SAME, exclude",
     Framework::tflite,
     0,
     Op::avg,
     "padding=SAME stride_w=2 stride_h=2 filter_width=3 filter_height=3",
     DType::f32,
     {1, 4, 4, 1},
     ramp16,
     {1, 2, 2, 1},
     {6, 7.5, 12, 13.5}},

    // ---- exclude-pad, a window with no input element -----------------------------------------
    // [1, 2], k1 s2, ceil: ceil((2 - 1)/2) + 1 = 2 windows, starting at 0 and 2; window 1 is
    // past the input. OpenVINO: "Count 0 -> output 0". PyTorch and ONNX-22 drop it (2 >= d + 0).
    {"OpenVINO: an empty exclude window gives 0",
     Framework::openvino,
     1,
     Op::avg,
     R"(kernel="1" strides="2" pads_begin="0" pads_end="0" rounding_type="ceil" exclude-pad="true")",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {1, 1, 2},
     {1, 0}},
    {"PyTorch: ceil_mode drops the window that starts past the input",
     Framework::pytorch,
     0,
     Op::avg,
     "kernel_size=1 stride=2 ceil_mode=True count_include_pad=False",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {1, 1, 1},
     {1}},
    {"ONNX-22: DROP",
     Framework::onnx,
     22,
     Op::avg,
     "kernel_shape=1 strides=2 ceil_mode=1",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {1, 1, 1},
     {1}},
    // ONNX-19's text and shape inference keep the second window; it has no input element and the
    // reference's mean of nothing is NaN.
    {"ONNX-19: no DROP; the empty window is NaN",
     Framework::onnx,
     19,
     Op::avg,
     "kernel_shape=1 strides=2 ceil_mode=1",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {1, 1, 2},
     {1, nan}},
    // ONNX allows pads >= kernel: [1, 2], k1, pads 1/1 -> 4 windows at -1, 0, 1, 2.
    {"ONNX: pads past the kernel give NaN averages",
     Framework::onnx,
     22,
     Op::avg,
     "kernel_shape=1 pads=1,1",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {1, 1, 4},
     {nan, 1, 2, nan}},
    // ERRATA O3: [1, NaN, 3, 5], k2: the windows (1, NaN), (NaN, 3), (3, 5). IEEE: NaN, NaN, 4
    // (the ONNX reference would drop the NaN and give 1, 3, 4).
    {"ONNX: a NaN input makes its windows NaN",
     Framework::onnx,
     22,
     Op::avg,
     "kernel_shape=2",
     DType::f64,
     {1, 1, 4},
     {1, nan, 3, 5},
     {1, 1, 3},
     {nan, nan, 4}},
    {"ngraph v0: an empty exclude window is refused (the reference throws)",
     Framework::ngraph,
     0,
     Op::avg,
     "window_shape=1 window_movement_strides=2 ceil_mode=true",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {},
     {},
     {},
     "empty=error"},
    {"OpenVINO: exclude-pad requires kernel > pads",
     Framework::openvino,
     1,
     Op::avg,
     R"(kernel="1" strides="1" pads_begin="1" pads_end="1" exclude-pad="true")",
     DType::f64,
     {1, 1, 2},
     {1, 2},
     {},
     {},
     {},
     "pads_begin[0]=1: exclude-pad=true requires kernel[0]=1 > the pad"},
    {"oneDNN: padding must stay below the kernel",
     Framework::onednn,
     0,
     Op::avg,
     "alg=pooling_avg_exclude_padding kernel=1 strides=2 padding_r=1",
     DType::f32,
     {1, 1, 2},
     {1, 2},
     {},
     {},
     {},
     "padding_r[0]=1: must be below the dilated kernel extent 1"},

    // ---- max: NaN, ties ---------------------------------------------------------------------
    // [NaN, 1, 3, 3], k2 s1: windows (NaN,1), (1,3), (3,3). PyTorch takes NaN (index 0); the
    // others ignore it (1 at index 1). Ties go to the first: (3,3) -> index 2.
    {"PyTorch: NaN propagates, ties to the first",
     Framework::pytorch,
     0,
     Op::max,
     "kernel_size=2 stride=1 return_indices=True",
     DType::f32,
     {1, 1, 4},
     {nan, 1, 3, 3},
     {1, 1, 3},
     {nan, 3, 3},
     {0, 2, 2}},
    {"ONNX reference: NaN ignored",
     Framework::onnx,
     22,
     Op::max,
     "kernel_shape=2",
     DType::f32,
     {1, 1, 4},
     {nan, 1, 3, 3},
     {1, 1, 3},
     {1, 3, 3},
     {1, 2, 2}},
    {"OpenVINO MaxPool-8: NaN ignored",
     Framework::openvino,
     8,
     Op::max,
     R"(kernel="2" strides="1" pads_begin="0" pads_end="0")",
     DType::f32,
     {1, 1, 4},
     {nan, 1, 3, 3},
     {1, 1, 3},
     {1, 3, 3},
     {1, 2, 2}},
    {"oneDNN: NaN ignored (s > d)",
     Framework::onednn,
     0,
     Op::max,
     "alg=pooling_max kernel=2 strides=1",
     DType::f32,
     {1, 1, 4},
     {nan, 1, 3, 3},
     {1, 1, 3},
     {1, 3, 3}},
    {"TFLite: std::max from lowest ignores NaN",
     Framework::tflite,
     0,
     Op::max,
     "padding=VALID stride_w=1 stride_h=1 filter_width=2 filter_height=1",
     DType::f32,
     {1, 1, 4, 1},
     {nan, 1, 3, 3},
     {1, 1, 3, 1},
     {1, 3, 3}},
    {"TensorFlow: NaN ignored",
     Framework::tensorflow,
     0,
     Op::max,
     "ksize=2 strides=1 padding=VALID",
     DType::f32,
     {1, 4, 1},
     {nan, 1, 3, 3},
     {1, 3, 1},
     {1, 3, 3}},

    // ---- max: -inf-only and empty windows ------------------------------------------------------
    // [-inf, -inf, 5], k2: the first window holds only -inf.
    {"OpenVINO: -inf-only window gives lowest() and the plane start",
     Framework::openvino,
     8,
     Op::max,
     R"(kernel="2" strides="1" pads_begin="0" pads_end="0")",
     DType::f32,
     {1, 1, 3},
     {-inf, -inf, 5},
     {1, 1, 2},
     {f32_lowest, 5},
     {0, 2}},
    {"PyTorch: -inf-only window gives -inf",
     Framework::pytorch,
     0,
     Op::max,
     "kernel_size=2 stride=1 return_indices=True",
     DType::f32,
     {1, 1, 3},
     {-inf, -inf, 5},
     {1, 1, 2},
     {-inf, 5},
     {0, 2}},
    // [7], k1, pads 1/1: windows at -1, 0, 1. ONNX's reference fills an empty window with 0 and
    // index -1 (2-D and 3-D paths); OpenVINO gives lowest() and the plane start.
    {"ONNX: empty max window",
     Framework::onnx,
     22,
     Op::max,
     "kernel_shape=1 pads=1,1",
     DType::f32,
     {1, 1, 1},
     {7},
     {1, 1, 3},
     {0, 7, 0},
     {-1, 0, -1}},
    {"OpenVINO: empty max window",
     Framework::openvino,
     8,
     Op::max,
     R"(kernel="1" strides="1" pads_begin="1" pads_end="1")",
     DType::f32,
     {1, 1, 1},
     {7},
     {1, 1, 3},
     {f32_lowest, 7, f32_lowest},
     {0, 0, 0}},
    // PyTorch with dilation 3: d = 1, k = 2, padding 2 (<= effective kernel 4 / 2): windows tap
    // {-2, 1} and {-1, 2}, none in [0, 1): -inf.
    {"PyTorch: a dilated window with no input element gives -inf",
     Framework::pytorch,
     0,
     Op::max,
     "kernel_size=2 stride=1 padding=2 dilation=3",
     DType::f32,
     {1, 1, 1},
     {7},
     {1, 1, 2},
     {-inf, -inf}},
    {"PyTorch: padding above half the kernel is refused",
     Framework::pytorch,
     0,
     Op::max,
     "kernel_size=1 padding=1",
     DType::f32,
     {1, 1, 1},
     {7},
     {},
     {},
     {},
     "padding[0]=1"},

    // ---- indices ----------------------------------------------------------------------------
    // N=1, C=2, planes [[1,2,3],[4,5,6]] and [[6,5,4],[3,2,1]], k 2x2 s1 -> 1x2 per plane. The
    // maxima: plane 0 at (1,1) and (1,2), plane 1 at (0,0) and (0,1). Row-major plane offsets
    // 4 5 / 0 1; over the tensor (plane 1 starts at 6) 4 5 / 6 7; column-major spatial part
    // (offset = col * 2 + row) 3 5 / 6+0 6+2; OpenVINO axis=-1: tensor offset mod W = 3.
    {"PyTorch: indices per plane",
     Framework::pytorch,
     0,
     Op::max,
     "kernel_size=2 stride=1 return_indices=True",
     DType::f32,
     {1, 2, 2, 3},
     {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1},
     {1, 2, 1, 2},
     {5, 6, 6, 5},
     {4, 5, 0, 1}},
    {"ONNX: indices over the tensor",
     Framework::onnx,
     22,
     Op::max,
     "kernel_shape=2,2",
     DType::f32,
     {1, 2, 2, 3},
     {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1},
     {1, 2, 1, 2},
     {5, 6, 6, 5},
     {4, 5, 6, 7}},
    {"ONNX: storage_order=1 is column-major",
     Framework::onnx,
     22,
     Op::max,
     "kernel_shape=2,2 storage_order=1",
     DType::f32,
     {1, 2, 2, 3},
     {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1},
     {1, 2, 1, 2},
     {5, 6, 6, 5},
     {3, 5, 6, 8}},
    {"OpenVINO MaxPool-8: axis=-1 takes the index modulo W",
     Framework::openvino,
     8,
     Op::max,
     R"(kernel="2,2" strides="1,1" pads_begin="0,0" pads_end="0,0" axis="-1")",
     DType::f32,
     {1, 2, 2, 3},
     {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1},
     {1, 2, 1, 2},
     {5, 6, 6, 5},
     {1, 2, 0, 1}},

    // ---- integer rounding -------------------------------------------------------------------
    // Window pairs (2, 3) and (-2, -3), k 1x2 s 1x2: means 2.5 and -2.5.
    // TFLite int8: (acc +- n/2) / n truncated: (5 + 1)/2 = 3, (-5 - 1)/2 = -3 (half away).
    {"TFLite int8: half away from zero",
     Framework::tflite,
     0,
     Op::avg,
     "padding=VALID stride_w=2 stride_h=1 filter_width=2 filter_height=1",
     DType::i8,
     {1, 1, 4, 1},
     {2, 3, -2, -3},
     {1, 1, 2, 1},
     {3, -3}},
    // TFLite uint8: (acc + n/2)/n = (5 + 1)/2 = 3 and (13 + 1)/2 = 7 for (6, 7).
    {"TFLite uint8: half up",
     Framework::tflite,
     0,
     Op::avg,
     "padding=VALID stride_w=2 stride_h=1 filter_width=2 filter_height=1",
     DType::u8,
     {1, 1, 4, 1},
     {2, 3, 6, 7},
     {1, 1, 2, 1},
     {3, 7}},
    // OpenVINO: nearbyint under FE_TONEAREST: 2.5 -> 2, -2.5 -> -2 (ties to even).
    {"OpenVINO int8: ties to even",
     Framework::openvino,
     1,
     Op::avg,
     R"(kernel="2" strides="2" pads_begin="0" pads_end="0" exclude-pad="true")",
     DType::i8,
     {1, 1, 4},
     {2, 3, -2, -3},
     {1, 1, 2},
     {2, -2}},
    // oneDNN: f32 accumulation rounded per MXCSR (nearest-even): 2, -2.
    {"oneDNN s8: ties to even",
     Framework::onednn,
     0,
     Op::avg,
     "alg=pooling_avg_exclude_padding kernel=2 strides=2",
     DType::i8,
     {1, 1, 4},
     {2, 3, -2, -3},
     {1, 1, 2},
     {2, -2}},
    {"ngraph int8: nearbyint, ties to even",
     Framework::ngraph,
     0,
     Op::avg,
     "window_shape=2 window_movement_strides=2",
     DType::i8,
     {1, 1, 4},
     {2, 3, -2, -3},
     {1, 1, 2},
     {2, -2}},
    {"PyTorch 1.13 CPU refuses int8 average pooling",
     Framework::pytorch,
     0,
     Op::avg,
     "kernel_size=2",
     DType::i8,
     {1, 1, 4},
     {2, 3, -2, -3},
     {},
     {},
     {},
     "dtype i8"},
    {"ONNX: AveragePool takes float types only",
     Framework::onnx,
     22,
     Op::avg,
     "kernel_shape=2",
     DType::i8,
     {1, 1, 4},
     {2, 3, -2, -3},
     {},
     {},
     {},
     "dtype i8"},
    // ---- OpenCV DNN 4.6 and Arm NN 20.08 ------------------------------------------------------
    // OpenCV's ave_pool_padded_area (default) clips the window at d + pad_end: Caffe's rule, the
    // same windows and divisors as the INCL-CLIP case above (ceil_mode defaults to true; no
    // drop: (3 - 1) * 2 = 4 < d + pad_b = 5).
    {"OpenCV: the padded area is INCL-CLIP, ceil_mode by default",
     Framework::opencv,
     0,
     Op::avg,
     "pool=ave kernel_h=3 kernel_w=3 stride_h=2 stride_w=2 pad_t=1 pad_b=1 pad_l=1 pad_r=1",
     DType::f32,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_clip},
    // d = 4, k = 1, s = 2, no pads: 1 + ceil(3 / 2) = 3 outputs, and Caffe's drop test looks only
    // at a nonzero pad_end, so the third window (starting at 4 = d) stays: it holds no element,
    // and OpenCV's max gives 0 for it. Windows {0}, {2}, {}: 1, 3, 0.
    {"OpenCV: no end pad, no drop; a max window with no element gives 0",
     Framework::opencv,
     0,
     Op::max,
     "pool=max kernel_h=1 kernel_w=1 stride_h=1 stride_w=2",
     DType::f32,
     {1, 1, 1, 4},
     {1, 2, 3, 4},
     {1, 1, 1, 3},
     {1, 3, 0}},
    {"OpenCV refuses a window longer than the padded input",
     Framework::opencv,
     0,
     Op::avg,
     "pool=ave kernel_h=5 kernel_w=5",
     DType::f32,
     {1, 1, 4, 4},
     ramp16,
     {},
     {},
     {},
     "must fit in the padded input"},
    // Arm NN's IgnoreValue clips the window at d + pad_end too: INCL-CLIP; Ceiling gives
    // 1 + ceil(3 / 2) = 3, and (3 - 1) * 2 = 4 < d + pad_top = 5 keeps the last window.
    {"Arm NN: IgnoreValue is INCL-CLIP",
     Framework::armnn,
     0,
     Op::avg,
     "pool_type=Average pool_height=3 pool_width=3 stride_y=2 stride_x=2 pad_top=1 pad_bottom=1 "
     "pad_left=1 pad_right=1 output_shape_rounding=Ceiling padding_method=IgnoreValue",
     DType::f32,
     {1, 1, 4, 4},
     ramp16,
     {1, 1, 3, 3},
     incl_clip},
    // d = 4, k = 2, s = 2, pads 0 / 1, Ceiling: 1 + ceil(3 / 2) = 3, but (3 - 1) * 2 = 4 >= d +
    // pad_left = 4 drops the window that starts in the end padding: windows {0,1}, {2,3}.
    {"Arm NN: Ceiling drops a window starting in the end padding",
     Framework::armnn,
     0,
     Op::avg,
     "pool_type=Average pool_height=1 pool_width=2 stride_y=1 stride_x=2 pad_right=1 "
     "output_shape_rounding=Ceiling padding_method=Exclude",
     DType::f32,
     {1, 1, 1, 4},
     {1, 2, 3, 4},
     {1, 1, 1, 2},
     {1.5, 3.5}},
    // QAsymmS8 of scale 1: dequantized, averaged in f32 (2.5, -2.5), requantized with round():
    // half away from zero.
    {"Arm NN int8: half away from zero",
     Framework::armnn,
     0,
     Op::avg,
     "pool_type=Average pool_height=1 pool_width=2 stride_y=1 stride_x=2 padding_method=Exclude",
     DType::i8,
     {1, 1, 1, 4},
     {2, 3, -2, -3},
     {1, 1, 1, 2},
     {3, -3}},
    {"Arm NN (this rule set) refuses pads as long as the pool",
     Framework::armnn,
     0,
     Op::max,
     "pool_type=Max pool_height=1 pool_width=2 stride_y=1 stride_x=1 pad_left=2",
     DType::f32,
     {1, 1, 1, 4},
     {1, 2, 3, 4},
     {},
     {},
     {},
     "pad_left=2: must be below pool_width=2"},
    {"ONNX MaxPool-12: uint8 exact",
     Framework::onnx,
     12,
     Op::max,
     "kernel_shape=2 strides=2",
     DType::u8,
     {1, 1, 4},
     {200, 255, 0, 1},
     {1, 1, 2},
     {255, 1},
     {1, 3}},
    // TOSA AVG_POOL2D on int8, NHWC 1x4x4x1 holding -120, -105, ..., 105: each 2x2 window's
    // sum of (x - input_zp), divided as TOSA divides (half away from zero at these counts),
    // then + output_zp: (-330 + 12) / 4 = -79.5 -> -80 + 5 = -75; (-210 + 12) / 4 = -49.5 ->
    // -45; (150 + 12) / 4 = 40.5 -> 46; (270 + 12) / 4 = 70.5 -> 76.
    {"TOSA int8: zero points around TOSA's division",
     Framework::tosa,
     0,
     Op::avg,
     "kernel=2,2 stride=2,2 pad=0,0,0,0 acc_type=INT32 input_zp=-3 output_zp=5",
     DType::i8,
     {1, 4, 4, 1},
     {-120, -105, -90, -75, -60, -45, -30, -15, 0, 15, 30, 45, 60, 75, 90, 105},
     {1, 2, 2, 1},
     {-75, -45, 46, 76}},
    // Padding never counts: pad 1 on top and left, kernel 2, stride 2 over a 3x3 ramp: window
    // (0,0) holds only 1 (mean 1); (0,1) holds 2, 3 (2.5); (1,0) 4, 7 (5.5); (1,1) 5, 6, 8, 9 (7).
    {"TOSA: padding is never counted",
     Framework::tosa,
     0,
     Op::avg,
     "kernel=2,2 stride=2,2 pad=1,0,1,0",
     DType::f32,
     {1, 3, 3, 1},
     {1, 2, 3, 4, 5, 6, 7, 8, 9},
     {1, 2, 2, 1},
     {1, 2.5, 5.5, 7}},
    {"TOSA MAX_POOL2D nan_mode=IGNORE skips a NaN",
     Framework::tosa,
     0,
     Op::max,
     "kernel=1,2 stride=1,2 pad=0,0,0,0 nan_mode=IGNORE",
     DType::f32,
     {1, 1, 4, 1},
     {nan, 1, nan, nan},
     {1, 1, 2, 1},
     {1, nan}},
    // The invalid problems: each ERROR_IF or LEVEL_CHECK of the pseudo-code is a refusal.
    {"TOSA: the windows must fit exactly",
     Framework::tosa,
     0,
     Op::avg,
     "kernel=3,3 stride=2,2 pad=0,0,0,0",
     DType::f32,
     {1, 4, 4, 1},
     ramp16,
     {},
     {},
     {},
     "not a multiple of the stride"},
    {"TOSA: a pad as long as the kernel",
     Framework::tosa,
     0,
     Op::max,
     "kernel=2,2 stride=1,1 pad=2,0,0,0",
     DType::f32,
     {1, 4, 4, 1},
     ramp16,
     {},
     {},
     {},
     "pad_top=2: must be below kernel_y=2"},
    {"TOSA: a zero point off int8",
     Framework::tosa,
     0,
     Op::avg,
     "kernel=2,2 stride=2,2 pad=0,0,0,0 input_zp=3",
     DType::f32,
     {1, 4, 4, 1},
     ramp16,
     {},
     {},
     {},
     "input_zp=3: a zero point is only allowed for i8"},
    {"TOSA: int8 accumulates in INT32",
     Framework::tosa,
     0,
     Op::avg,
     "kernel=2,2 stride=2,2 pad=0,0,0,0 acc_type=FP32",
     DType::i8,
     {1, 4, 4, 1},
     ramp16,
     {},
     {},
     {},
     "acc_type=FP32: TOSA AVG_POOL2D on i8 accumulates in INT32"},
    {"TOSA: the 8K level's kernel limit",
     Framework::tosa,
     0,
     Op::max,
     "kernel=1,8193 stride=1,1 pad=0,0,0,0",
     DType::f32,
     {1, 1, 8193, 1},
     {},
     {},
     {},
     {},
     "kernel_x=8193: the 8K level allows kernels up to 8192"},
    {"TOSA: rank 4 only",
     Framework::tosa,
     0,
     Op::max,
     "kernel=2,2 stride=2,2 pad=0,0,0,0",
     DType::f32,
     {1, 4, 4},
     ramp16,
     {},
     {},
     {},
     "takes a rank-4 NHWC tensor"},
    {"TOSA: no u8",
     Framework::tosa,
     0,
     Op::max,
     "kernel=2,2 stride=2,2 pad=0,0,0,0",
     DType::u8,
     {1, 4, 4, 1},
     ramp16,
     {},
     {},
     {},
     "dtype u8: TOSA MAX_POOL2D takes i8, f16, bf16, f32"},
    // ---- StableHLO reduce_window ------------------------------------------------------------
    // max over 5, NaN, -inf, 2 with windows of 2, stride 2 and 2 high pads: padded extent 6,
    // floor((6 - 2) / 2) + 1 = 3 windows: {5, NaN} -> NaN (maximum propagates NaN), {-inf, 2}
    // -> 2, {pad, pad} -> the init value -inf (padding holds it).
    {"StableHLO max: NaN propagates, a window of padding is the init value",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=1,1,1,2 window_strides=1,1,1,2 padding=[[0,0],[0,0],[0,0],[0,2]] "
     "init_value=-inf",
     DType::f32,
     {1, 1, 1, 4},
     {5, nan, -inf, 2},
     {1, 1, 1, 3},
     {nan, 2, -inf}},
    // A negative low pad crops 1: 2, 3, 4, 5 and 2 high pads, padded extent 5 - 1 + 2 = 6, 3
    // windows of 2, stride 2: {2, 3} / 2 = 2.5, {4, 5} / 2 = 4.5, {pad, pad}: 0 / 0 = NaN
    // (divisor=count: a reduce_window of ones over the same padding counts 0).
    {"StableHLO avg divisor=count: a negative pad crops, padding counts nothing",
     Framework::stablehlo,
     0,
     Op::avg,
     "window_dimensions=1,1,1,2 window_strides=1,1,1,2 padding=0,0,0,0,0,0,-1,2 divisor=count",
     DType::f32,
     {1, 1, 1, 5},
     {1, 2, 3, 4, 5},
     {1, 1, 1, 3},
     {2.5, 4.5, nan}},
    // divisor=window (NHWC: the channels last): padded 0, 1, 2, 3, windows of 2, stride 1:
    // (0 + 1) / 2, (1 + 2) / 2, (2 + 3) / 2.
    {"StableHLO avg divisor=window: padding counts, channels last",
     Framework::stablehlo,
     0,
     Op::avg,
     "window_dimensions=1,2,1 padding=0,0,1,0,0,0 divisor=window",
     DType::f32,
     {1, 3, 1},
     {1, 2, 3},
     {1, 3, 1},
     {0.5, 1.5, 2.5}},
    {"StableHLO: C15, no window fits: an empty result, beyond the model",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=1,1,5 padding=0,0,0,0,-1,0",
     DType::f32,
     {1, 1, 5},
     {1, 2, 3, 4, 5},
     {},
     {},
     {},
     "the result is empty, which StableHLO allows (C15: an empty result, stated beside the "
     "problem model) (poolspec's problem model cannot state"},
    // Base dilation 3 puts two holes holding the init value -inf between neighbours: 1, h, h, 2,
    // h, h, 3 (extent (3 - 1) * 3 + 1 = 7); windows of 2, stride 1: 6 windows, {1, h} -> 1,
    // {h, h} -> -inf (holes only: the init value), {h, 2} -> 2, {2, h} -> 2, {h, h}, {h, 3} -> 3.
    {"StableHLO max: base dilation's holes hold the init value",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=1,1,2 base_dilations=1,1,3",
     DType::f32,
     {1, 1, 3},
     {1, 2, 3},
     {1, 1, 6},
     {1, -inf, 2, 2, -inf, 3}},
    // Holes first, then padding: 2, h, 4, h, 6 with holes 0 and one low pad: p, 2, 0, 4, 0, 6;
    // windows of 2, stride 2: (0 + 2) / 2, (0 + 4) / 2, (0 + 6) / 2 (the window size divides).
    {"StableHLO avg divisor=window: holes add 0 and count, padding after the dilation",
     Framework::stablehlo,
     0,
     Op::avg,
     "window_dimensions=1,1,2 window_strides=1,1,2 base_dilations=1,1,2 padding=0,0,0,0,1,0 "
     "divisor=window",
     DType::f32,
     {1, 1, 3},
     {2, 4, 6},
     {1, 1, 3},
     {1, 2, 3}},
    // A negative low pad crops the dilated input: 1, h, 2, h, 3 less its first element is
    // h, 2, h, 3; windows of 2, stride 2: {h, 2} -> 2, {h, 3} -> 3.
    {"StableHLO max: a negative pad crops the dilated input",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=1,1,2 window_strides=1,1,2 base_dilations=1,1,2 padding=0,0,0,0,-1,0",
     DType::f32,
     {1, 1, 3},
     {1, 2, 3},
     {1, 1, 2},
     {2, 3}},
    {"StableHLO: divisor=count with holes, beyond the model",
     Framework::stablehlo,
     0,
     Op::avg,
     "window_dimensions=1,1,2 base_dilations=1,1,2 divisor=count",
     DType::f32,
     {1, 1, 4},
     {1, 2, 3, 4},
     {},
     {},
     {},
     "base_dilations[2]=2 with divisor=count"},
    {"StableHLO: window strides > 0 (C6)",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=1,1,2 window_strides=1,1,0",
     DType::f32,
     {1, 1, 4},
     {1, 2, 3, 4},
     {},
     {},
     {},
     "window_strides[2]=0: must be > 0"},
    {"StableHLO: an integer add wraps in its element type, beyond the model",
     Framework::stablehlo,
     0,
     Op::avg,
     "window_dimensions=1,1,2",
     DType::i8,
     {1, 1, 4},
     {1, 2, 3, 4},
     {},
     {},
     {},
     "dtype i8: an integer reduce_window add sums in the element type"},
    {"StableHLO: the batch dimension pooled, beyond the model",
     Framework::stablehlo,
     0,
     Op::max,
     "window_dimensions=2,1,2",
     DType::f32,
     {2, 1, 2},
     {1, 2, 3, 4},
     {},
     {},
     {},
     "window_dimensions[0]=2: touches dimension 0, the batch"},
};

TEST_CASE("the hand-computed table: every framework, every row of docs/semantics.md 1b") {
  for (const HandCase& c : cases) {
    CAPTURE(c.row);
    const FrontendInput in{c.op, c.dtype, c.shape, c.version};
    Result<Frontend> f = from_framework(c.framework, c.attributes, in);
    if (c.refusal) {
      REQUIRE_FALSE(f.ok());
      CHECK_MESSAGE(f.error().message.find(c.refusal) != std::string::npos, f.error().message);
      continue;
    }
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    Result<Tensor> input = make_tensor(c.dtype, c.shape, c.input);
    REQUIRE(input.ok());
    const Output out = evaluate(f->problem, to_spec_layout(f->framing, *input)).value();
    const Tensor values = to_framework_layout(f->framing, out.values);
    CHECK(values.shape == c.expected_shape);
    REQUIRE(values.values.size() == c.expected.size());
    for (size_t i = 0; i < c.expected.size(); ++i) {
      CAPTURE(i);
      const double expected = c.dtype == DType::f32
                                  ? static_cast<double>(static_cast<float>(c.expected[i]))
                                  : c.expected[i];
      if (std::isnan(expected))
        CHECK(std::isnan(values.values[i]));
      else
        CHECK(values.values[i] == expected);
    }
    CHECK(out.indices == c.expected_indices);
  }
}

TEST_CASE("layouts: channels-last frameworks and oneDNN's negative padding_r") {
  // tf.nn.max_pool on NHWC 1x2x3x2: channel 0 = 1..6 and channel 1 = 60..10 interleaved.
  // k 2x2 s1 VALID -> 1x1x2x2: channel 0 maxima 5, 6; channel 1 maxima 60, 50.
  Result<Frontend> tf = from_framework(Framework::tensorflow, "ksize=2 strides=1 padding=VALID",
                                       FrontendInput{Op::max, DType::f32, {1, 2, 3, 2}});
  REQUIRE(tf.ok());
  CHECK(tf->framing.channels_last);
  const Tensor nhwc =
      make_tensor(DType::f32, {1, 2, 3, 2}, {1, 60, 2, 50, 3, 40, 4, 30, 5, 20, 6, 10}).value();
  const Output out = evaluate(tf->problem, to_spec_layout(tf->framing, nhwc)).value();
  const Tensor back = to_framework_layout(tf->framing, out.values);
  CHECK(back.shape == std::vector<int64_t>{1, 1, 2, 2});
  CHECK(back.values == std::vector<double>{5, 60, 6, 50});

  // oneDNN 1-D, d = 5, k2 s2, padding_r = -1: floor((5 - 1 - 2)/2) + 1 = 2 windows, [0,2) and
  // [2,4); element 4 is never read. Exclude averages of 1..5: 1.5, 3.5.
  Result<Frontend> dnn = from_framework(
      Framework::onednn, "alg=pooling_avg_exclude_padding kernel=2 strides=2 padding_r=-1 dst=2",
      FrontendInput{Op::avg, DType::f32, {1, 1, 5}});
  REQUIRE(dnn.ok());
  CHECK(dnn->framing.crop_end == std::vector<int64_t>{1});
  const Output o =
      evaluate(
          dnn->problem,
          to_spec_layout(dnn->framing, make_tensor(DType::f32, {1, 1, 5}, {1, 2, 3, 4, 5}).value()))
          .value();
  CHECK(o.values.values == std::vector<double>{1.5, 3.5});
  Result<Frontend> wrong_dst =
      from_framework(Framework::onednn, "alg=pooling_avg_exclude_padding kernel=2 strides=2 dst=3",
                     FrontendInput{Op::avg, DType::f32, {1, 1, 5}});
  REQUIRE_FALSE(wrong_dst.ok());
  CHECK(wrong_dst.error().message ==
        "dst[0]=3: must be (d + padding_l + padding_r - K) / s + 1 = (5 + 0 + 0 - 2) / 2 + 1 = 2");
}

TEST_CASE("front-end refusals name the attribute, its value and the rule") {
  const auto refusal = [](Framework f, std::string_view attributes, FrontendInput in) {
    Result<Frontend> r = from_framework(f, attributes, in);
    return r ? std::string() : r.error().message;
  };
  const FrontendInput avg4{Op::avg, DType::f32, {1, 1, 4, 4}};
  CHECK(refusal(Framework::onnx, "kernel_shape=2,2 pads=1,1", avg4) ==
        "pads=1,1: 2 values; ONNX pads are [x1_begin, x2_begin, ..., x1_end, x2_end, ...], 4 for "
        "2 spatial axes");
  CHECK(refusal(Framework::onnx, "kernel_shape=2,2 auto_pad=SAME_UPPER pads=0,0,0,0", avg4) ==
        "pads: explicit pads cannot be used together with auto_pad other than NOTSET");
  CHECK(refusal(Framework::onnx, "kernel_shape=2,2 ceil_mode=1",
                FrontendInput{Op::avg, DType::f32, {1, 1, 4, 4}, 7}) ==
        "ceil_mode: not an attribute of ONNX AveragePool-7; it exists from opset 10 (--opset 10)");
  CHECK(refusal(Framework::onnx, "kernel_shape=2,2 dilations=2,2",
                FrontendInput{Op::avg, DType::f32, {1, 1, 4, 4}, 18}) ==
        "dilations: not an attribute of ONNX AveragePool-11; it exists from opset 19 (--opset 19)");
  CHECK(refusal(Framework::onnx, "kernel_shape=2,2",
                FrontendInput{Op::avg, DType::f32, {1, 1, 4, 4}, 23})
            .find("opset 23") == 0);
  CHECK(refusal(Framework::pytorch, "kernel_size=2 divisor_override=0", avg4) ==
        "divisor_override=0: PyTorch refuses it (\"divisor must be not zero\")");
  CHECK(refusal(Framework::pytorch, "kernel_size=2,2,2", avg4) ==
        "kernel_size=2,2,2: give one integer or 2 (one per spatial axis)");
  CHECK(refusal(Framework::tensorflow, "ksize=2 strides=2 padding=FULL",
                FrontendInput{Op::avg, DType::f32, {1, 4, 4, 1}}) ==
        "padding=FULL: must be VALID, SAME");
  CHECK(refusal(Framework::tensorflow, "ksize=2 strides=2 dilations=2 padding=VALID",
                FrontendInput{Op::max, DType::f32, {1, 8, 8, 1}}) ==
        "dilations=2,2: tf.nn.pool takes dilations > 1 only with strides of 1");
  CHECK(refusal(Framework::tflite,
                "padding=SAME stride_w=1 stride_h=1 filter_width=2 filter_height=2 "
                "fused_activation_function=RELU",
                FrontendInput{Op::avg, DType::f32, {1, 4, 4, 1}}) ==
        "fused_activation_function=RELU: poolspec models NONE only (the clamp is not pooling)");
  CHECK(refusal(Framework::onednn, "alg=pooling_avg kernel=2,2 strides=2,2",
                FrontendInput{Op::max, DType::f32, {1, 1, 4, 4}}) ==
        "alg=pooling_avg: the problem's op is max (--op avg, or pooling_max)");
  CHECK(refusal(Framework::pytorch, "kernel_size=2",
                FrontendInput{Op::avg, DType::f32, {1, 1, 4, 4}, 0, true}) ==
        "global pooling: only the onnx front-end has GlobalAveragePool / GlobalMaxPool; pytorch "
        "takes a window");
}

}  // namespace
}  // namespace poolspec
