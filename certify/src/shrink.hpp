// Shrinking a failure to a minimal counterexample: smaller problems of the same rules that
// fail the same way.
#pragma once

#include <vector>

#include "judge.hpp"
#include "suite.hpp"

namespace poolspec::certify {

// Smaller problems of the same rules: each attribute one step toward its smallest value.
std::vector<Problem> smaller(const Problem& p);

// A failing problem, its input and the spec's answers, and how it was judged.
struct Failure {
  Problem problem;
  SpecValues spec;
  Judged judged;
};

// The least problem reached from `original` by steps of smaller() that keep its verdict, each
// judged by `judge` (in the same worker), with inputs drawn as case `c` draws them; at most
// `max_tries` problems are judged.
Failure minimal_failure(Judge& judge, const Case& c, Layout layout, const Failure& original,
                        int max_tries);

}  // namespace poolspec::certify
