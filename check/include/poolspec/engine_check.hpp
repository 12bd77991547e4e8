// Holding an engine to the spec (docs/design.md §5): every output element compared with the
// spec's, max and integer results bit for bit (up to the zeros that zeros=either and
// subnormals=may_flush allow), float averages within the bound the engine declares, derived per
// element from its window (never a hand-tuned threshold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "poolspec/engine.hpp"
#include "poolspec/evaluate.hpp"

namespace poolspec {

struct ElementMismatch {
  std::vector<int64_t> coordinate;  // (n, c, o1..on)
  double expected = 0;
  double got = 0;
  int64_t expected_index = -1;  // max with indices
  int64_t got_index = -1;
  double error = 0;    // |got - expected| (infinite when one is NaN or infinite)
  double allowed = 0;  // the derived bound (0: bit-exact)
  double error_ulps = 0;
};

struct EngineComparison {
  int64_t elements = 0;
  int64_t mismatches = 0;              // values or indices outside the bound
  int64_t outside_declared_range = 0;  // float averages whose window sum may overflow
  double worst_fraction_of_bound = 0;  // max error / allowed over inexact float averages
  std::vector<ElementMismatch> first;  // the first mismatches, in output order
  bool passed() const { return mismatches == 0; }
};

// Per output element of a float average, the absolute sum of its window's finite values (by the
// spec's exact evaluation), which the float bound scales with. compare_output computes it, or
// takes it from a caller that compares several engines on one problem.
Result<Tensor> window_abs_sums(const Problem& p, const Tensor& input);

// Compares `got` with the spec's `expected` (both from evaluate()'s shapes) on `input`.
Result<EngineComparison> compare_output(const Problem& p, const Tensor& input,
                                        const Output& expected, const Output& got,
                                        const ErrorBound& bound, size_t max_reported = 5,
                                        const Tensor* abs_sums = nullptr);

// A readable account of a comparison: the problem string, then for each reported mismatch the
// coordinate, expected, got, error in ulps and the allowed bound.
std::string comparison_text(const Problem& p, const EngineComparison& c, const ErrorBound& bound);

// Runs an engine on a spec-order tensor: writes it in `layout`, calls the engine with guard
// bytes after the output (which must stay untouched) and every output byte poisoned beforehand
// (so an unwritten element shows), and reads the output back in spec order.
Result<Output> run_engine(const Engine& engine, const Problem& p, const Tensor& input,
                          Layout layout, int threads);

}  // namespace poolspec
