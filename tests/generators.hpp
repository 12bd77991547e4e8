// RapidCheck generators of valid problems and their inputs, built constructively (choose the
// window, then an extent it fits in) rather than by filtering, so no case is discarded.
#pragma once

#include <ostream>
#include <vector>

#include <rapidcheck.h>

#include "poolspec/evaluate.hpp"
#include "poolspec/problem.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::test {

// A problem and an input for it; shown (in counterexamples) as its problem string and values.
struct Case {
  Problem problem;
  Tensor input;
};

void showValue(const Case& c, std::ostream& os);

struct CaseOptions {
  bool finite_values = false;  // no NaN / inf inputs
  bool any_divisor = true;     // else avg problems use the exclude divisor
  int max_rank = 3;
  // Sizes: channels in [1, max_channels]; each axis's extent up to extent_spread above the
  // smallest its window allows (the last axis: last_extent_spread, so that engines' vector
  // loops get full vectors and remainders).
  int64_t max_channels = 3;
  int64_t extent_spread = 7;
  int64_t last_extent_spread = 7;
  std::vector<DType> dtypes;  // empty: every dtype
  std::vector<Op> ops;        // empty: avg and max
  bool bias = true;           // avg problems may carry a bias
  int whole_plane_one_in =
      0;  // > 0: about one problem in this many has a window over the whole plane
  // > 0: about one problem in this many has stride 1 and output extents equal to the input's
  // ("same" padding: pad_begin + pad_end = (kernel - 1) * dilation on every axis).
  int same_extent_one_in = 0;
  // > 0: about one problem in this many has wide_channels channels or up to 16 more (engines
  // that work on several vectors of channels at once get whole groups and a remainder).
  int wide_channels_one_in = 0;
  int64_t wide_channels = 64;
};

rc::Gen<Problem> problem_gen(const CaseOptions& options = {});
rc::Gen<Tensor> input_gen(const Problem& p, bool finite_values);
rc::Gen<Case> case_gen(const CaseOptions& options = {});

// Rounds a double to the nearest value of the dtype (nearest-even; integers saturate).
double to_dtype(DType dtype, double v);

// An engine: the spec, or a mutant of it, behind one signature (TFLite's reference/optimized
// pairing: one test body, every engine).
using Engine = Result<Output> (*)(const Problem&, const Tensor&);

}  // namespace poolspec::test

namespace poolspec {
void showValue(const Problem& p, std::ostream& os);  // as its problem string
}

namespace rc {
template <>
struct Arbitrary<poolspec::Problem> {
  static Gen<poolspec::Problem> arbitrary() { return poolspec::test::problem_gen(); }
};
template <>
struct Arbitrary<poolspec::test::Case> {
  static Gen<poolspec::test::Case> arbitrary() { return poolspec::test::case_gen(); }
};
}  // namespace rc
