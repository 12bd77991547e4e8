// The certification suites (`poolspec certify --suite smoke|ci|full`): what a backend is run on.
// A case is an intent -- the geometry a user writes, independent of any framework's rules -- with
// a dtype and a kind of input values; each rule set a backend is held to turns it into the
// resolved Problem that framework means (translate.hpp), or says the framework cannot express it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/tensor.hpp"
#include "poolspec/translate.hpp"

namespace poolspec::certify {

// Input values (docs/testing.md 10.2, "adversarial value domains").
enum class Values {
  random,         // benchdnn-like: integers and eighths in the dtype's comfortable range
  nan_at,         // random, with NaN at input position `at` (the first, a middle, the last)
  infinities,     // random, with +inf and -inf at `at` and its neighbour
  neg_inf_only,   // every value -inf (a max from lowest() gives lowest, from the first gives -inf)
  signed_zero,    // +0 and -0 only (max ties between zeros of either sign)
  subnormal,      // the dtype's subnormals (sums that underflow, flush-to-zero)
  small_normal,   // magnitudes from the smallest normal to 4 times it, either sign: means both
                  // normal and subnormal (a flush of normal results is no flush of subnormals)
  ties,           // every value equal (the index of a tie)
  extremes,       // the dtype's lowest and largest finite values (overflowing sums, saturation)
  half_ties,      // even and odd integers in turn: averages of two neighbours land on .5
  nan_sprinkled,  // random, with NaN at every 7th position: NaN in vector bodies and tails, at
                  // every tap position of some window, in every layout
  nan_rows,       // random, with the first two rows of every plane NaN: windows of nothing but NaN
  non_negative,   // uniform over [0, the random kind's largest) (post-ReLU-like): sums only grow
  large_magnitude,  // magnitudes near the dtype's largest / 16, one sign in runs of 16 (floats);
                    // the extremes (integers): sums of half the largest value
};
std::string_view values_name(Values v);

struct Case {
  std::string id;    // "shapes/2d:asymmetric_pad", "enum1d/...", "values/nan_at:3", ...
  std::string part;  // shapes | topologies | enumeration | values | sweeps | seeds | regressions
                     // | limits | fields
  Intent intent;
  Values values = Values::random;
  int64_t at = 0;  // the position Values::nan_at and infinities use
  // Seeds' examples: the problem as their document's front-end resolved it, run under the rules
  // named here only (and "spec").
  std::optional<Problem> fixed;
  std::string fixed_rules;
  std::optional<Tensor> fixed_input;
  std::string note;  // where the case comes from (a bug report, a seed document)
};

// smoke (seconds: the tests), ci (the default: a minute or two per backend), full (the real
// sizes of the network layers, the exhaustive 1-D enumeration of the divergence zone and every
// 4th point of the 2-D one). docs/certification.md says what each holds and costs.
Result<std::vector<Case>> make_suite(const std::string& name);

// A case under a rule set: the problems that framework means by it (a rule set with several op
// versions, such as OpenVINO's opsets, may give several, labelled), or none when it cannot
// express the case. "spec" gives every framework's problem; "xs3" lib_nn's rules.
struct RuledProblem {
  std::string label;  // "openvino@1", "onnx@22", "xs3", ...
  Problem problem;
};
std::vector<RuledProblem> problems_under(const Case& c, const std::string& rules);

// output_shape's question (backend.h, version 2): a problem's attributes under a rule set, and
// the rule set's answer -- the output extents, or a refusal and the rule behind it.
struct ShapeQuestion {
  std::string label;             // as RuledProblem's
  Problem problem;               // its attributes, valid under the rules or not
  std::vector<int64_t> extents;  // the spatial output extents; empty: the rules refuse them
  std::string refusal;           // why the rules refuse (the front-end's or the spec's message)
};
// The case's problems under the rule set, and the same with one attribute of the first axis
// changed into one a framework must check: a window longer than the padded input, pads as long
// as the window, a zero stride, a zero kernel.
// `valid` is problems_under(c, rules), which the caller has made for the runs.
std::vector<ShapeQuestion> shape_questions(const Case& c, const std::string& rules,
                                           const std::vector<RuledProblem>& valid);

// A problem the rule set refuses (its *invalid* verdict), as its attributes would mean it were
// the rule not checked, with the rule set's refusal. A backend that claims the rule set must
// refuse it -- supports() false, or an error from run() -- and never crash on it. Made for the
// rule sets that say what an unchecked problem means: tosa (tosa_as_written), from the case's
// translation when the TOSA front-end refuses it and the problem model can state it.
struct RejectCase {
  std::string label;  // as RuledProblem's
  Problem problem;
  std::string refusal;
};
std::vector<RejectCase> must_reject(const Case& c, const std::string& rules);
// Why `rules` refuse a problem, as their own attributes would state it (the translation of its
// intent), when it is one of the problems must_reject asks a backend under them to refuse; none
// otherwise. A replay (`--rules tosa --problem ...`) knows a must-refuse problem by it.
std::optional<std::string> refusal_under(Framework rules, const Problem& p);

// The case's input for a problem: deterministic in (case, problem).
Tensor make_input(const Case& c, const Problem& p);

// The rule-set names a backend may claim.
bool known_rules(const std::string& rules);

// The certification matrix's column of a run of `p`: the operator and the options that split
// frameworks ("max", "avg excl ceil", "max idx", "avg incl int", ...).
std::string matrix_column(const Problem& p);
// The columns of output_shape's questions and of the runs that hold a backend to refusing what
// its rules refuse.
inline constexpr std::string_view shape_column = "shape", reject_column = "invalid";
// Whether a run can be in `column` (one of the above).
bool is_matrix_column(std::string_view column);

}  // namespace poolspec::certify
