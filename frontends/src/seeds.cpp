#include "poolspec/seeds.hpp"

namespace poolspec::seeds {

namespace {

// The 3x3 input shared by the MaxPool-1 document's examples 1, 3 and 5.
const std::vector<double> maxpool_3x3 = {-1, 2, 3, 4, 5, -6, -7, 8, 9};

const std::vector<Example> catalogue = {
    // OpenVINO AvgPool-1 specification (avg-pool-1.rst @ b66b0cdd), "Examples", five <data>
    // elements on a 1x3x32x32 input; the documented output dims follow each element.
    {"ov-avgpool1-xml-1", "OpenVINO AvgPool-1 spec, XML example 1", Frontend::openvino, Op::avg,
     R"(auto_pad="same_upper" exclude-pad="true" kernel="2,2" pads_begin="0,0" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 32, 32}, {}, {}, "E2"},
    {"ov-avgpool1-xml-2", "OpenVINO AvgPool-1 spec, XML example 2", Frontend::openvino, Op::avg,
     R"(auto_pad="same_upper" exclude-pad="false" kernel="5,5" pads_begin="0,0" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 32, 32}, {}, {}, "E2"},
    {"ov-avgpool1-xml-3", "OpenVINO AvgPool-1 spec, XML example 3", Frontend::openvino, Op::avg,
     R"(auto_pad="explicit" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="3,3")",
     {1, 3, 32, 32}, {}, {1, 3, 10, 10}, {}, {}, ""},
    {"ov-avgpool1-xml-4", "OpenVINO AvgPool-1 spec, XML example 4", Frontend::openvino, Op::avg,
     R"(auto_pad="explicit" exclude-pad="false" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 15, 15}, {}, {}, ""},
    {"ov-avgpool1-xml-5", "OpenVINO AvgPool-1 spec, XML example 5", Frontend::openvino, Op::avg,
     R"(auto_pad="valid" exclude-pad="true" kernel="5,5" pads_begin="1,1" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 14, 14}, {}, {}, ""},

    // OpenVINO MaxPool-1 specification (max-pool-1.rst @ 74959490), "Mathematical Formulation",
    // numbered examples 1-5 (inputs and outputs as printed there).
    {"ov-maxpool1-example-1", "OpenVINO MaxPool-1 spec, example 1 (explicit)", Frontend::openvino,
     Op::max,
     R"(strides="1,1" pads_begin="1,1" pads_end="1,1" kernel="2,2" rounding_type="floor" auto_pad="explicit")",
     {1, 1, 3, 3}, maxpool_3x3, {1, 1, 4, 4},
     {-1, 2, 3, 3, 4, 5, 5, -6, 4, 8, 9, 9, -7, 8, 9, 9}, {}, "E9"},
    {"ov-maxpool1-example-2", "OpenVINO MaxPool-1 spec, example 2 (valid, 1-D)", Frontend::openvino,
     Op::max, R"(strides="1" kernel="3" rounding_type="floor" auto_pad="valid")", {1, 1, 7},
     {-1, 2, 3, 5, -7, 9, 1}, {1, 1, 5}, {3, 5, 5, 9, 9}, {}, ""},
    {"ov-maxpool1-example-3", "OpenVINO MaxPool-1 spec, example 3 (same_lower)",
     Frontend::openvino, Op::max,
     R"(strides="1,1" kernel="2,2" rounding_type="floor" auto_pad="same_lower")", {1, 1, 3, 3},
     maxpool_3x3, {1, 1, 3, 3}, {-1, 2, 3, 4, 5, 5, 4, 8, 9}, {}, ""},
    {"ov-maxpool1-example-4", "OpenVINO MaxPool-1 spec, example 4 (same_upper, 2 channels)",
     Frontend::openvino, Op::max,
     R"(strides="1,1" kernel="2,2" rounding_type="floor" auto_pad="same_upper")", {1, 2, 3, 3},
     {-1, 2, 3, 4, 5, -6, -7, 8, 9, 2, -1, 5, 6, -7, 1, 8, 2, -3}, {1, 2, 3, 3},
     {5, 5, 3, 8, 9, 9, 8, 9, 9, 6, 5, 5, 8, 2, 1, 8, 2, -3}, {}, ""},
    {"ov-maxpool1-example-5", "OpenVINO MaxPool-1 spec, example 5 (valid, ceil)",
     Frontend::openvino, Op::max,
     R"(strides="2,2" kernel="2,2" rounding_type="ceil" auto_pad="valid")", {1, 1, 3, 3},
     maxpool_3x3, {1, 1, 2, 2}, {5, 3, 8, 9}, {}, ""},
    // The same document's three XML examples on 1x3x32x32.
    {"ov-maxpool1-xml-1", "OpenVINO MaxPool-1 spec, XML example 1", Frontend::openvino, Op::max,
     R"(auto_pad="same_upper" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 32, 32}, {}, {}, "E10"},
    {"ov-maxpool1-xml-2", "OpenVINO MaxPool-1 spec, XML example 2", Frontend::openvino, Op::max,
     R"(auto_pad="explicit" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 17, 17}, {}, {}, ""},
    {"ov-maxpool1-xml-3", "OpenVINO MaxPool-1 spec, XML example 3", Frontend::openvino, Op::max,
     R"(auto_pad="valid" kernel="2,2" pads_begin="1,1" pads_end="1,1" strides="2,2")",
     {1, 3, 32, 32}, {}, {1, 3, 16, 16}, {}, {}, ""},

    // ngraph AvgPool v0 (doc/sphinx/source/ops/avg_pool.rst and the op's include_padding
    // description): the worked case of a window that hangs over the corner, restated in the
    // project brief as "top-left window 1.0 without padding in the average, 0.25 with it":
    // a 2x2 window with padding 1 over an input of ones sees one real element at the top left.
    {"ngraph-avgpool-corner-exclude", "ngraph AvgPool v0, corner window, padding not included",
     Frontend::ngraph, Op::avg,
     "window_shape=2,2 window_movement_strides=1,1 padding_below=1,1 padding_above=1,1 "
     "include_padding_in_avg_computation=false",
     {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 4, 4}, {1.0}, {0}, ""},
    {"ngraph-avgpool-corner-include", "ngraph AvgPool v0, corner window, padding included",
     Frontend::ngraph, Op::avg,
     "window_shape=2,2 window_movement_strides=1,1 padding_below=1,1 padding_above=1,1 "
     "include_padding_in_avg_computation=true",
     {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 4, 4}, {0.25}, {0}, ""},
};

}  // namespace

std::span<const Example> examples() { return catalogue; }

}  // namespace poolspec::seeds
