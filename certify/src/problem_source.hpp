// Where a command's Problem comes from: a problem string, or a framework's attribute text with
// --op, the input shape (--input-shape or the input .npy) and the dtype.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::cli {

struct ProblemOptions {
  std::string problem;      // positional problem string
  std::string openvino;     // --openvino '<attributes of an IR <data> element>'
  std::string ngraph;       // --ngraph 'window_shape=2,2 ...'
  std::string op;           // --op avg|max (front-ends only)
  std::string input_shape;  // --input-shape 1,3,32,32
  std::string dtype;        // --dtype f32
};

struct ResolvedProblem {
  Problem problem;
  std::string frontend;  // "problem string", "openvino", "ngraph"
};

// Resolves without applying the empty-window policy (so `shape` can report empty windows).
// `input`, when given, supplies the shape and dtype and must agree with any given explicitly.
Result<ResolvedProblem> resolve_problem(const ProblemOptions& options, const Tensor* input);

Result<std::vector<int64_t>> parse_int_list(std::string_view option, std::string_view text);

}  // namespace poolspec::cli
