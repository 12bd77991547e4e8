// Shape inference for a resolved Problem, and the empty-window (zero divisor) analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

// The first window, along one axis, that has no tap counted by the problem's rule: no input
// element (max, avg exclude) or no tap inside the padded extent (avg include_clip). Every output
// element whose coordinate on that axis is `index` is then empty.
struct EmptyWindowWitness {
  int axis;       // spatial axis, 0-based
  int64_t index;  // output index along that axis
  int64_t start;  // input coordinate of the window's first tap
};

struct ShapeInfo {
  std::vector<int64_t> input_shape;   // (N, C, d1..dn)
  std::vector<int64_t> output_shape;  // (N, C, o1..on)
  int64_t input_elements = 0;
  int64_t output_elements = 0;
  std::optional<EmptyWindowWitness> empty_window;  // can some window have a zero divisor?
  // The steps evaluate() takes, a bound: for every output element, each axis's kernel taps
  // classified one by one, then the window's taps inside the input visited (at most
  // min(kernel, extent) per axis). INT64_MAX when that overflows. Work grows with this, not with
  // the element counts: a tool that evaluates a problem it was given checks it before starting.
  int64_t tap_visits = 0;
};

// Output shape and the empty-window witness; fails with the same errors as validate() except
// that an empty window is reported, not refused, whatever the problem's empty-window policy.
Result<ShapeInfo> infer_shape(const Problem& p);

// infer_shape, then the problem's empty-window policy: what validate() checks, with the shape
// it computed (so callers that need both do the work once).
Result<ShapeInfo> validated_shape(const Problem& p);

// The first empty window of the problem under its own op and divisor rule, if any.
// Precondition: the per-axis attributes are valid (see validate()).
std::optional<EmptyWindowWitness> find_empty_window(const Problem& p);

}  // namespace poolspec
