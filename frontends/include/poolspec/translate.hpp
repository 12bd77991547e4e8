// One pooling problem in every framework's terms: the geometry a user wrote in one framework
// (kernel, strides, dilations, resolved pads, floor or ceil, padding counted or not), spelled in
// each other framework's attributes, where that framework can express it. `poolspec diff`
// evaluates them all to show where the frameworks' rules disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "poolspec/frontends.hpp"
#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

// What the user meant, independent of any framework's rules.
struct Intent {
  Op op = Op::avg;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // (N, C, d1..dn), the whole input
  // Pads may be < 0: a crop (oneDNN's padding_r, StableHLO's padding)
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  // StableHLO's base dilation per spatial axis (empty: none; shape is the undilated input's, the
  // pads the dilated one's)
  std::vector<int64_t> base_dilations;
  bool ceil = false;         // round the output extent up (ceil or ceil_torch)
  bool include_pad = false;  // an average counts padding (include_clip or include_full)
  int64_t divisor_override = 0;
};

// The intent behind a front-end's result.
Intent intent_of(const Frontend& f);

// One framework's spelling of an intent.
struct Translation {
  Framework framework;
  std::string label;       // "onnx@19", "openvino@14", "pytorch", ...
  std::string attributes;  // in the framework's own spelling
  FrontendInput input;     // the framework's input (its layout, its opset)
  std::string reason;      // non-empty: the framework cannot express the intent, and why
};

// The intent in every framework (and in the versions whose rules differ: OpenVINO ceil and
// ceil_torch, ONNX opsets 19 and 22), in a fixed order. Attributes a framework refuses (a zero
// stride, a window longer than the input) are spelled as given: its front-end judges them.
std::vector<Translation> translate(const Intent& intent);

}  // namespace poolspec
