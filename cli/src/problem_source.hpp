// Where a command's Problem comes from: a problem string, or a framework's attribute text with
// --op, the input shape (--input-shape or the input .npy) and the dtype.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poolspec/frontends.hpp"
#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::cli {

struct ProblemOptions {
  std::string problem;  // positional problem string
  // --openvino '<attributes of an IR <data> element>', --onnx 'kernel_shape=3,3 ...', ...: the
  // attribute text given for each framework.
  std::map<Framework, std::string> attributes;
  std::string op;                           // --op avg|max|global_avg|global_max (front-ends only)
  std::string input_shape;                  // --input-shape 1,3,32,32, in the framework's layout
  std::string dtype;                        // --dtype f32
  int opset = 0;                            // --opset N (OpenVINO, ONNX); 0: not given
  int64_t max_elements = int64_t{1} << 28;  // --max-elements: the largest input or output
  int64_t max_tap_visits = int64_t{1}
                           << 32;  // --max-tap-visits: the most work an evaluation may take
};

struct ResolvedProblem {
  Problem problem;
  std::string frontend;       // "problem string", or the framework's name
  std::string operator_name;  // the framework's operator, e.g. "ONNX MaxPool-22"
  Framing framing;            // how the framework's tensors map onto the spec's
  // The rule set's verdict on an accepted problem (defined or unpredictable; a refused problem is
  // invalid, an error); a problem string's is defined.
  RuleVerdict verdict;
};

// Resolves without applying the empty-window policy (so `shape` can report empty windows).
// `input`, when given (in the framework's layout), supplies the shape and dtype and must agree
// with any given explicitly.
Result<ResolvedProblem> resolve_problem(const ProblemOptions& options, const Tensor* input);

// StableHLO's empty result (C15), for --stablehlo attributes whose Problem resolve_problem
// refuses because some dimension has no window; none otherwise.
std::optional<EmptyResult> empty_result(const ProblemOptions& options, const Tensor* input);

// The front-end's input: --op, --opset, and the shape and dtype (from the options or the input).
Result<FrontendInput> frontend_input(const ProblemOptions& options, const Tensor* input);

// The tensor of `path` (a .npy file, "-" for standard input), refused before it is read when
// larger than --max-elements.
Result<Tensor> read_input(const std::string& path, const ProblemOptions& options);

// Whether the problem's input stays within --max-elements: it may be larger than the tensor read,
// a base dilation's holes being elements of the Problem's input.
Status check_input_size(const Problem& p, const ProblemOptions& options);
// Whether the problem's input and output stay within --max-elements and its evaluation within
// --max-tap-visits (ShapeInfo::tap_visits): asked before the work starts.
Status check_output_size(const Problem& p, const ProblemOptions& options);

Result<std::vector<int64_t>> parse_int_list(std::string_view option, std::string_view text);

}  // namespace poolspec::cli
