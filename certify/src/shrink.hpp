// Shrinking a failure to a minimal counterexample: smaller problems that fail the same way and
// stay problems of the rules the backend is held to.
#pragma once

#include <string>
#include <vector>

#include "judge.hpp"
#include "suite.hpp"

namespace poolspec::certify {

// Smaller problems: each attribute one step toward its smallest value (any problem of the model).
std::vector<Problem> smaller(const Problem& p);

// Smaller intents: each attribute of the geometry a user writes one step toward its smallest value.
std::vector<Intent> smaller(const Intent& in);

// A failing problem, its input and the spec's answers, and how it was judged.
struct Failure {
  Problem problem;
  SpecValues spec;
  Judged judged;
};

// The least problem reached from `original` by smaller steps that keep its verdict, each judged by
// `judge` (in the same worker) on inputs drawn as case `c` draws them, at most `max_tries` of them.
// Each step stays a problem of `label` under `rules`: the case's intent is shrunk and translated
// as the suite translates it, so a counterexample under PyTorch's rules stays one PyTorch can
// write. A seed example's fixed problem is shrunk as a problem under the spec's rules only.
// `within` is set to the rules the minimal problem belongs to, as the report says it.
Failure minimal_failure(Judge& judge, const Case& c, const std::string& rules,
                        const std::string& label, Layout layout, const Failure& original,
                        int max_tries, std::string* within);

}  // namespace poolspec::certify
