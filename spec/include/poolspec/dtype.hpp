// Element types of the problem model (docs/design.md §2): output dtype = input dtype.
// Every value of every dtype is exactly representable as a double, so the spec carries values as
// doubles and converts to storage bits only at the edges (.npy files, backends).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace poolspec {

enum class DType { f64, f32, f16, bf16, i32, i8, u8 };

inline constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16,
                                       DType::i32, DType::i8,  DType::u8};

std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);

bool is_float(DType dtype);
int storage_bytes(DType dtype);

// A binary floating-point format: precision p (significand bits, hidden bit included), and the
// exponent range of normal numbers [min_exponent, max_exponent] (value = 1.m * 2^e).
struct FloatFormat {
  int precision;
  int min_exponent;
  int max_exponent;
};
FloatFormat float_format(DType dtype);  // only for float dtypes

// Integer range of an integer dtype.
int64_t int_min(DType dtype);
int64_t int_max(DType dtype);

// The most negative finite value (numeric_limits::lowest): -max finite for floats, min for ints.
double lowest_value(DType dtype);

// Whether v is a value of the dtype (NaN and +-inf are values of every float dtype).
bool representable(DType dtype, double v);

// Rounds a double to the nearest value of a float dtype, ties to even (IEEE round-to-nearest):
// past the largest finite value it gives +-inf; a result that rounds to zero keeps v's sign.
double round_to_float(DType float_dtype, double v);
// The smallest magnitude that rounds to infinity in a float dtype, to nearest: the largest finite
// value plus half its ulp, (2 - 2^-p) * 2^emax (+inf for f64, whose threshold a double cannot
// hold).
double overflow_threshold(DType float_dtype);

// Exact storage conversions of the 16-bit float formats (inputs must be representable).
uint16_t f16_bits(double representable_value);
double f16_value(uint16_t bits);
uint16_t bf16_bits(double representable_value);
double bf16_value(uint16_t bits);

}  // namespace poolspec
