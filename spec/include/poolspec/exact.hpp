// Exact arithmetic for the spec. Choice: GMP (libgmp-dev, gmpxx) integers rather than a hand
// written superaccumulator. Every finite double is an integer multiple of 2^-1074, so a window sum
// held as an mpz_class count of 2^-1074 units is exact whatever the values and the window size;
// the only rounding is the final one, done here with integer division and an explicit
// nearest-even rule. GMP is the well-kept library made for exactly this job, and its arbitrary
// precision removes every "how wide must the accumulator be" argument.
#pragma once

#include <cstdint>
#include <string>

#include <gmpxx.h>

#include "poolspec/dtype.hpp"
#include "poolspec/problem.hpp"

namespace poolspec::exact {

// The exponent of one unit of a scaled sum: values are held as integers times 2^-1074.
inline constexpr int unit_exponent = -1074;

// Exact sum of finite doubles; also tracks the IEEE sign of a zero sum (it is -0 exactly when
// every addend is -0: in round-to-nearest, x + (-x) is +0 and -0 + -0 is -0, in any order).
// A Sum that is clear()ed and reused keeps its storage: adding to it allocates nothing once its
// integers have grown to the width the values need (the spec evaluates window after window).
class Sum {
 public:
  void clear();  // back to the empty sum
  void add(double finite_value);
  void add_integer(int64_t value);  // exact for every int64 (a double is not, beyond 2^53)
  const mpz_class& units() const { return units_; }  // the sum is units() * 2^-1074
  bool negative_zero() const { return count_ > 0 && all_negative_zero_; }

 private:
  mpz_class units_ = 0;
  mpz_class addend_ = 0;  // the units of the value being added (its storage is reused)
  int64_t count_ = 0;
  bool all_negative_zero_ = true;
};

// mpz of the exact value of a finite double, in units of 2^-1074.
mpz_class to_units(double finite_value);
void set_units(mpz_class& units, double finite_value);  // the same, into existing storage

// Rounds (units * 2^-1074) / divisor to nearest, ties to even, into a float format; returns the
// rounded value as a double (exactly representable there). Overflow gives +-inf; a result that
// rounds to zero keeps the sign of the exact quotient. divisor > 0.
double round_quotient(const mpz_class& units, const mpz_class& divisor, FloatFormat format,
                      bool negative_zero);

// Integer quotient n / d (d > 0) rounded by one of the spec's integer rules, into `quotient`
// (its storage is reused; the spec divides once per integer output element).
void divide(mpz_class& quotient, const mpz_class& n, const mpz_class& d, IntRounding rule);

// The exact quotient as text: "a/b = decimal…" with the decimal cut at 20 significant digits.
std::string quotient_text(const mpz_class& units, const mpz_class& divisor);

}  // namespace poolspec::exact
