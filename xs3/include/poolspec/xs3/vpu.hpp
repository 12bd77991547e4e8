// The XS3 vector-unit primitives that lib_nn's int8 pooling kernels use, one scalar function
// per instruction (per lane), as xs3/README.md section 2 describes them.
#pragma once

#include <cstdint>

namespace poolspec::xs3 {

// How a 32-bit accumulator lane adds: the XS3 assembly saturates every step to the symmetric
// range [-(2^31-1), 2^31-1] (VLMACC); lib_nn's C reference uses plain int32 `+=`, which overflows
// (undefined in C, wrap-around in practice; modelled here as two's-complement wrap, without UB).
enum class Accumulation { saturate, wrap };

// The output range of an average: [lower, 127], lower = -128 by default or -127 with
// CONFIG_SYMMETRIC_SATURATION (a runtime field here, not a build macro).
struct Saturation {
  int lower = -128;
  int upper = 127;
  static constexpr Saturation standard() { return {-128, 127}; }
  static constexpr Saturation symmetric() { return {-127, 127}; }
  bool operator==(const Saturation&) const = default;
};

inline constexpr int32_t acc_max = 2147483647;   // 2^31 - 1
inline constexpr int32_t acc_min = -2147483647;  // symmetric: -(2^31 - 1)

// SAT32 of the VPU: clamp to [-(2^31-1), 2^31-1].
int32_t sat32(int64_t v);

// VLMACC, 8-bit mode, one lane: acc + coefficient * value (both int8, product within 16 bits).
int32_t vlmacc8(int32_t acc, int8_t coefficient, int8_t value, Accumulation mode);

// The rounding shift of VLSAT: floor((acc + 2^(r-1)) / 2^r) for r >= 1 -- ties toward +infinity,
// negative values included (-2.5 -> -2) -- and acc itself for r = 0 (no rounding term). Computed
// in 64 bits, so it cannot overflow. Shifts 0..31.
int64_t rshr(int32_t acc, int shift);

// VLSAT in 8-bit mode: the rounded value clamped to [-127, 127].
int8_t vlsat8(int32_t acc, int shift);
// VLSAT in 16-bit mode: the rounded value clamped to [-32767, 32767].
int16_t vlsat16(int32_t acc, int shift);
// VLADD (16-bit mode, saturating to [-32767, 32767]).
int16_t vladd16(int16_t a, int16_t b);
// VLSUB (8-bit mode, saturating to [-127, 127]); saturation never flips the sign.
int8_t vlsub8(int8_t a, int8_t b);

// The output step of an average pool: with the symmetric bound a single 8-bit VLSAT; with the
// default bound the assembly's two passes -- the 8-bit VLSAT result, then a 16-bit VLSAT with the
// same shift plus a saturating +127 whose sign marks the lanes to overwrite with -128 (0x80).
int8_t average_output(int32_t acc, int shift, Saturation saturation);

}  // namespace poolspec::xs3
