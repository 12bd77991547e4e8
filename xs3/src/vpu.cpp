#include "poolspec/xs3/vpu.hpp"

#include <algorithm>

namespace poolspec::xs3 {

int32_t sat32(int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, acc_min, acc_max)); }

int32_t vlmacc8(int32_t acc, int8_t coefficient, int8_t value, Accumulation mode) {
  const int64_t sum = static_cast<int64_t>(acc) + int64_t{coefficient} * int64_t{value};
  if (mode == Accumulation::saturate) return sat32(sum);
  return static_cast<int32_t>(static_cast<uint32_t>(sum));  // two's-complement wrap
}

int64_t rshr(int32_t acc, int shift) {
  if (shift == 0) return acc;
  const int64_t wide = static_cast<int64_t>(acc) + (int64_t{1} << (shift - 1));
  // Arithmetic right shift of a negative int64 is well defined since C++20 (floor division).
  return wide >> shift;
}

int8_t vlsat8(int32_t acc, int shift) {
  return static_cast<int8_t>(std::clamp<int64_t>(rshr(acc, shift), -127, 127));
}

int16_t vlsat16(int32_t acc, int shift) {
  return static_cast<int16_t>(std::clamp<int64_t>(rshr(acc, shift), -32767, 32767));
}

int16_t vladd16(int16_t a, int16_t b) {
  return static_cast<int16_t>(std::clamp<int32_t>(int32_t{a} + int32_t{b}, -32767, 32767));
}

int8_t vlsub8(int8_t a, int8_t b) {
  return static_cast<int8_t>(std::clamp<int32_t>(int32_t{a} - int32_t{b}, -127, 127));
}

int8_t average_output(int32_t acc, int shift, Saturation saturation) {
  int8_t out = vlsat8(acc, shift);
  if (saturation.lower == -128) {
    const int16_t marked = vladd16(vlsat16(acc, shift), 127);
    if (marked < 0) out = -128;  // VDEPTH1 sign bit: the rounded value was <= -128
  }
  return out;
}

}  // namespace poolspec::xs3
