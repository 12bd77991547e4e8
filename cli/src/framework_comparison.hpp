// One problem, given in one framework's terms, evaluated under the rules of every framework that
// can express it, each output compared with the source's: what `diff` prints and what
// `check-model` summarizes per node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"
#include "poolspec/translate.hpp"
#include "problem_source.hpp"

namespace poolspec::cli {

struct FrameworkRow {
  Translation translation;
  std::string operator_name, problem;
  std::string refusal;         // non-empty: the framework cannot express or evaluate it, why
  std::vector<int64_t> shape;  // the output, spec layout (N, C, o...)
  std::vector<double> values;
  // Its rules leave a zero result's sign open (zeros=either, TOSA's): a zero of either sign agrees.
  bool zero_sign_open = false;
  // Against the source: -1 = not comparable (refused); else outputs that differ.
  int64_t differing = -1;
  double largest = 0;  // the largest difference (NaN against a number: NaN)
  std::string first_difference;
  // The rule set's verdict (frontends.hpp); none when the framework cannot express the problem
  // at all, or its output is not evaluated.
  std::optional<RuleVerdict> verdict;
};

// The input in the spec's layout: `given` (in the source framework's layout), or without it the
// ramp 1, 2, 3, ... in row-major (N, C, d...) order, which makes every window's sum distinct
// (0, 1, 2, ... wrapping at the dtype's maximum for integers).
Result<Tensor> comparison_input(const ResolvedProblem& source, const Intent& intent,
                                const Tensor* given);

// The source first (`own`: its framework, its attribute text, its front-end input; refused rows
// are the caller's to report), then one row per translation of its intent, compared with it.
std::vector<FrameworkRow> compare_frameworks(const Translation& own, const Intent& intent,
                                             const Tensor& spec_input,
                                             const ProblemOptions& options);

}  // namespace poolspec::cli
