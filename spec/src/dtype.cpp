#include "poolspec/dtype.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace poolspec {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i8: return "i8";
    case DType::u8: return "u8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType d : all_dtypes)
    if (dtype_name(d) == name) return d;
  return std::nullopt;
}

bool is_float(DType dtype) {
  return dtype == DType::f64 || dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16;
}

int storage_bytes(DType dtype) {
  switch (dtype) {
    case DType::f64: return 8;
    case DType::f32:
    case DType::i32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::i8:
    case DType::u8: return 1;
  }
  return 0;
}

FloatFormat float_format(DType dtype) {
  switch (dtype) {
    case DType::f64: return {53, -1022, 1023};
    case DType::f32: return {24, -126, 127};
    case DType::f16: return {11, -14, 15};
    case DType::bf16: return {8, -126, 127};
    default: return {0, 0, 0};
  }
}

int64_t int_min(DType dtype) {
  switch (dtype) {
    case DType::i32: return std::numeric_limits<int32_t>::min();
    case DType::i8: return -128;
    default: return 0;
  }
}

int64_t int_max(DType dtype) {
  switch (dtype) {
    case DType::i32: return std::numeric_limits<int32_t>::max();
    case DType::i8: return 127;
    case DType::u8: return 255;
    default: return 0;
  }
}

namespace {
// Largest finite value of a float format: (2 - 2^(1-p)) * 2^emax.
double max_finite(FloatFormat f) {
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.max_exponent);
}
}  // namespace

double lowest_value(DType dtype) {
  if (is_float(dtype)) return -max_finite(float_format(dtype));
  return static_cast<double>(int_min(dtype));
}

bool representable(DType dtype, double v) {
  if (!is_float(dtype)) {
    if (!std::isfinite(v) || v != std::floor(v)) return false;
    return v >= static_cast<double>(int_min(dtype)) && v <= static_cast<double>(int_max(dtype));
  }
  if (!std::isfinite(v) || v == 0) return true;
  const FloatFormat f = float_format(dtype);
  if (std::fabs(v) > max_finite(f)) return false;
  // v must be a multiple of its quantum 2^(max(e, emin) - p + 1), where 2^e <= |v| < 2^(e+1).
  int e = 0;
  (void)std::frexp(v, &e);  // |v| = m * 2^e with m in [0.5, 1): the unbiased exponent is e - 1
  const int exponent = std::max(e - 1, f.min_exponent);
  const double scaled = std::ldexp(v, f.precision - 1 - exponent);
  return scaled == std::trunc(scaled);
}

uint16_t f16_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(v)) return static_cast<uint16_t>(sign | 0x7c00);
  const double a = std::fabs(v);
  if (a == 0) return sign;
  int e = 0;
  (void)std::frexp(a, &e);
  const int exponent = e - 1;
  if (exponent < -14)  // subnormal: a = m * 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(a, 24)));
  const auto mantissa = static_cast<uint16_t>(std::ldexp(a, 10 - exponent) - 1024.0);
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

double f16_value(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// bfloat16 is the upper half of an IEEE binary32.
uint16_t bf16_bits(double v) {
  if (std::isnan(v)) return 0x7fc0;
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16);
}

double bf16_value(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

double overflow_threshold(DType float_dtype) {
  if (float_dtype == DType::f64) return std::numeric_limits<double>::infinity();
  const FloatFormat f = float_format(float_dtype);
  return std::ldexp(2.0 - std::ldexp(1.0, -f.precision), f.max_exponent);  // exact for p < 53
}

double round_to_float(DType float_dtype, double v) {
  if (!std::isfinite(v) || v == 0 || float_dtype == DType::f64) return v;
  // Within float's range, the conversion to float is IEEE's, rounded to nearest-even: the same
  // rounding, and the engines' common case.
  if (float_dtype == DType::f32 && std::fabs(v) <= std::numeric_limits<float>::max())
    return static_cast<float>(v);
  const FloatFormat f = float_format(float_dtype);
  // The representable values near v are the multiples of 2^(e - p + 1), e = v's exponent (at
  // least the smallest normal one): scale by a power of two (exact), round to an integer.
  const int e = std::max(std::ilogb(v), f.min_exponent);
  const double quantum = std::ldexp(1.0, e - f.precision + 1);
  const double r = std::nearbyint(v / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.max_exponent);
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

}  // namespace poolspec
