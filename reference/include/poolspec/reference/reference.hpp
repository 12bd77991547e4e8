// The reference engine (docs/design.md §4): plain loops, one step per clause of the spec, for
// the whole problem space (every dtype, rank, layout and option). Float averages are summed in
// double in scan order and divided once; integer averages are summed exactly (128-bit) and
// rounded by the problem's rule; max scans the window in the spec's order. Its results are the
// spec's except for the float sums' rounding, which its ErrorBound declares.
#pragma once

#include "poolspec/backend.h"
#include "poolspec/engine.hpp"

namespace poolspec::reference {

class ReferenceEngine final : public Engine {
 public:
  std::string_view name() const override { return "reference"; }
  Status supports(const Problem& p, Layout layout) const override;
  ErrorBound error_bound(const Problem& p, Layout layout) const override;
  Status run(const Problem& p, Layout layout, const RunArgs& args) const override;
};

const ReferenceEngine& engine();

// The reference through the backend ABI (rules "spec": every problem of the model).
const poolspec_backend* backend();

}  // namespace poolspec::reference
