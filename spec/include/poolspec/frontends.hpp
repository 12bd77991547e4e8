// Framework front-ends ("profiles"): a framework's own attribute spelling -> a resolved Problem.
// Each front-end states the divisor, empty-window, NaN and rounding choices its framework makes,
// citing notes/semantics.md; see the comments in src/frontends.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

// Attribute text: `name=value` or `name="value"` pairs separated by white space, such as the
// attributes of an OpenVINO IR <data> element copied verbatim. Names may not repeat.
class Attributes {
 public:
  static Result<Attributes> parse(std::string_view text);
  bool has(std::string_view name) const;
  // Each getter marks the attribute as used; `context` names the framework/op in messages.
  Result<std::string> text(std::string_view name) const;
  Result<bool> boolean(std::string_view name) const;
  Result<std::vector<int64_t>> ints(std::string_view name) const;
  // Fails naming the first attribute no getter asked for.
  Status no_unused(std::string_view context) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
  mutable std::map<std::string, bool, std::less<>> used_;
};

// What a front-end needs besides the attributes.
struct FrontendInput {
  Op op = Op::avg;
  DType dtype = DType::f32;
  std::vector<int64_t> input_shape;  // (N, C, d1..dn)
};

// ngraph v0 AvgPool / MaxPool (the seeds): window_shape, window_movement_strides, padding_below,
// padding_above, include_padding_in_avg_computation (AvgPool), pad_type, ceil_mode.
Result<Problem> from_ngraph(std::string_view attributes, const FrontendInput& in);

// OpenVINO AvgPool-1 / MaxPool-1: strides, pads_begin, pads_end, kernel, exclude-pad (AvgPool),
// rounding_type, auto_pad; 3D, 4D or 5D input.
Result<Problem> from_openvino(std::string_view attributes, const FrontendInput& in);

}  // namespace poolspec
