// lib_nn's XS3 int8 pooling operators as an Engine (and so a backend): the problems that
// avgpool2d_global, avgpool2d and maxpool2d compute -- int8, one (H, W, C) image in channels-last
// order, no padding, no dilation, averages rounded half up (RSHR's rule, xs3/README.md) -- run
// through the bit-exact model. Averages over a window whose pixel count is not a power of two are
// approximate (a scale and a shift for 1/N): the engine declares them within one unit.
#pragma once

#include "poolspec/backend.h"
#include "poolspec/engine.hpp"

namespace poolspec::xs3 {

class Xs3Engine final : public Engine {
 public:
  std::string_view name() const override { return "xs3"; }
  Status supports(const Problem& p, Layout layout) const override;
  ErrorBound error_bound(const Problem& p, Layout layout) const override;
  Status run(const Problem& p, Layout layout, const RunArgs& args) const override;
};

const Xs3Engine& engine();

// The model through the backend ABI (rules "xs3").
const poolspec_backend* backend();

}  // namespace poolspec::xs3
