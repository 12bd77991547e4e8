// TOSA's division of an integer average by its count (the TOSA specification: AVG_POOL2D divides
// the window's int32 sum by the number of in-bounds taps through reciprocal_scale, then
// apply_scale_32 without double rounding; pseudocode/operators/AVG_POOL2D.tosac and
// pseudocode/library/scale_helpers.tosac), over a number domain (number_domain.hpp): on Z3 terms
// it is the claim the proofs refute at the first difference (the exactness proofs reason on its
// definition, its quotients pinned: proofs/src/tosa_proofs.cpp); on int64 tests hold the spec's
// own division (spec/src/exact.cpp, round=tosa) and the reference's to it.
#pragma once

#include <bit>
#include <cstdint>

#include "poolspec/number_domain.hpp"

namespace poolspec::tosa {

// reciprocal_scale's k: 2^(k-1) < count <= 2^k, written there as 32 - count_leading_zeros(count
// - 1) on 32 bits (0 for a count of 1).
constexpr int scale_bits(int64_t count) {
  return count <= 1 ? 0 : 64 - std::countl_zero(static_cast<uint64_t>(count - 1));
}

// reciprocal_scale(count): the multiplier (((1 << 30) + 1) << k) / count, in [2^30, 2^31), and
// the shift 30 + k.
template <class V>
V reciprocal_multiplier(V count, int k) {
  return floor_div(constant_like(count, ((int64_t{1} << 30) + 1) << k), count);
}
constexpr int reciprocal_shift(int k) { return 30 + k; }

// apply_scale_32(value, multiplier, shift, false): (value * multiplier + 2^(shift - 1)) >> shift,
// an arithmetic shift, so the quotient rounds toward -infinity. TOSA requires the value in int32,
// so the product fits 62 bits.
template <class V>
V apply_scale_32(V value, V multiplier, int shift) {
  return floor_div(value * multiplier + constant_like(value, int64_t{1} << (shift - 1)),
                   constant_like(value, int64_t{1} << shift));
}

// acc / count as AVG_POOL2D computes it for an integer type (k = scale_bits(count)).
template <class V>
V divide(V acc, V count, int k) {
  return apply_scale_32(acc, reciprocal_multiplier(count, k), reciprocal_shift(k));
}
// In int64: for |acc| < 2^31 (TOSA's int32 accumulator) and count < 2^31 (k <= 31, so the
// multiplier's numerator stays below 2^62 and acc * multiplier below 2^62).
inline int64_t divide(int64_t acc, int64_t count) {
  return divide<int64_t>(acc, count, scale_bits(count));
}

}  // namespace poolspec::tosa
