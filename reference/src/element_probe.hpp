// One output element by the reference's own loops (reference.cpp), for the linked-in checks:
// the sampled elements of a caller's output are recomputed without running the whole problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "poolspec/engine.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::reference {

struct ElementValue {
  double value = 0;     // as the reference engine stores it (rounded into the dtype)
  int64_t index = -1;   // max with indices
  double abs_sum = 0;   // float averages: sum of the window's finite |x|
  int64_t divisor = 0;  // averages
};

class ElementProbe {
 public:
  // `p` valid with `shape` its validated shape; `input` dense in `layout`, alive while probing.
  ElementProbe(const Problem& p, Layout layout, const ShapeInfo& shape, const std::byte* input);
  ~ElementProbe();
  ElementValue at(int64_t n, int64_t c, const int64_t* spatial) { return impl_->at(n, c, spatial); }

  struct Impl {
    virtual ~Impl() = default;
    virtual ElementValue at(int64_t n, int64_t c, const int64_t* spatial) = 0;
  };

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace poolspec::reference
