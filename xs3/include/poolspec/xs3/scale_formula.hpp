// lib_nn's scale derivation for a pixel count N that is not a power of two (xs3/README.md 3.2),
// written once over a number domain (see spec's number_domain.hpp) so that proofs/ checks the
// text the model runs:
//   c = ceil(log2 N), q = 25 - c, g = floor(2^31 / N) (uint32 division), h = (g + 2^(q-1)) >> q.
// For the non-negative values here, `>> q` is floor division by 2^q.
#pragma once

#include <cstdint>

namespace poolspec::xs3 {

template <class V>
V derived_scale(V n, int c) {
  const int q = 25 - c;
  const V g = floor_div(constant_like(n, int64_t{1} << 31), n);
  return floor_div(g + constant_like(n, int64_t{1} << (q - 1)), constant_like(n, int64_t{1} << q));
}

}  // namespace poolspec::xs3
