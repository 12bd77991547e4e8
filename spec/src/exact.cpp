#include "poolspec/exact.hpp"

#include <cmath>
#include <limits>

#include "poolspec/tosa_division.hpp"

namespace poolspec::exact {

void set_units(mpz_class& units, double v) {
  // v = m * 2^(e - 53) with m an integer below 2^53 (frexp gives v = f * 2^e, f in [0.5, 1)).
  int e = 0;
  const double f = std::frexp(v, &e);
  mpz_set_d(units.get_mpz_t(), std::ldexp(f, 53));  // exact: an integer of at most 53 bits
  const int shift = e - 53 - unit_exponent;
  if (shift >= 0) {
    mpz_mul_2exp(units.get_mpz_t(), units.get_mpz_t(), static_cast<mp_bitcnt_t>(shift));
  } else {
    // v is a multiple of 2^-1074, so the low bits shifted out are zero: exact.
    mpz_tdiv_q_2exp(units.get_mpz_t(), units.get_mpz_t(), static_cast<mp_bitcnt_t>(-shift));
  }
}

mpz_class to_units(double v) {
  mpz_class units;
  set_units(units, v);
  return units;
}

void Sum::clear() {
  units_ = 0;  // keeps the storage
  count_ = 0;
  all_negative_zero_ = true;
}

void Sum::add(double v) {
  ++count_;
  if (!(v == 0 && std::signbit(v))) all_negative_zero_ = false;
  if (v == 0) return;
  set_units(addend_, v);
  mpz_add(units_.get_mpz_t(), units_.get_mpz_t(), addend_.get_mpz_t());
}

void Sum::add_integer(int64_t value) {
  ++count_;
  if (value == 0) return;
  all_negative_zero_ = false;
  addend_ = static_cast<signed long>(value);
  mpz_mul_2exp(addend_.get_mpz_t(), addend_.get_mpz_t(), static_cast<mp_bitcnt_t>(-unit_exponent));
  mpz_add(units_.get_mpz_t(), units_.get_mpz_t(), addend_.get_mpz_t());
}

namespace {
int64_t bit_length(const mpz_class& x) {  // x > 0
  return static_cast<int64_t>(mpz_sizeinbase(x.get_mpz_t(), 2));
}

// a * 2^k into r, for k >= 0.
void shift_left(mpz_class& r, const mpz_class& a, int64_t k) {
  mpz_mul_2exp(r.get_mpz_t(), a.get_mpz_t(), static_cast<mp_bitcnt_t>(k));
}

// The integers of one rounding, kept per thread so that their storage is reused from call to call
// (the spec rounds once per output element).
struct RoundingScratch {
  mpz_class magnitude, scaled, numerator, denominator, quotient, remainder;
};
RoundingScratch& rounding_scratch() {
  thread_local RoundingScratch scratch;
  return scratch;
}

// 2r against d: the remainder r of a division by d, against half of d.
int compare_twice(const mpz_class& r, const mpz_class& d, mpz_class& scratch) {
  shift_left(scratch, r, 1);
  return cmp(scratch, d);
}
}  // namespace

double round_quotient(const mpz_class& units, const mpz_class& divisor, FloatFormat format,
                      bool negative_zero) {
  if (units == 0) return negative_zero ? -0.0 : 0.0;
  RoundingScratch& z = rounding_scratch();
  const bool negative = units < 0;
  mpz_abs(z.magnitude.get_mpz_t(), units.get_mpz_t());
  const mpz_class& n = z.magnitude;
  const mpz_class& d = divisor;

  // x = n / (d * 2^1074) > 0. Find e = floor(log2 x): with a = bitlen(n) - bitlen(d),
  // n/d lies in [2^(a-1), 2^(a+1)), so floor(log2(n/d)) is a or a - 1.
  const int64_t a = bit_length(n) - bit_length(d);
  bool at_least_2a = false;  // n >= d * 2^a
  if (a >= 0) {
    shift_left(z.scaled, d, a);
    at_least_2a = n >= z.scaled;
  } else {
    shift_left(z.scaled, n, -a);
    at_least_2a = z.scaled >= d;
  }
  const int64_t e = (at_least_2a ? a : a - 1) + unit_exponent;

  // Quantum of the result: 2^(max(e, emin) - p + 1). M = x / quantum, rounded to nearest-even.
  const int64_t quantum_exponent = std::max<int64_t>(e, format.min_exponent) - format.precision + 1;
  // x / 2^q = n * 2^(-q + unit_exponent) / d.
  const int64_t shift = -quantum_exponent + unit_exponent;
  const mpz_class* numerator = &n;
  const mpz_class* denominator = &d;
  if (shift >= 0) {
    shift_left(z.numerator, n, shift);
    numerator = &z.numerator;
  } else {
    shift_left(z.denominator, d, -shift);
    denominator = &z.denominator;
  }
  mpz_class& m = z.quotient;
  mpz_fdiv_qr(m.get_mpz_t(), z.remainder.get_mpz_t(), numerator->get_mpz_t(),
              denominator->get_mpz_t());
  const int half = compare_twice(z.remainder, *denominator, z.scaled);
  if (half > 0 || (half == 0 && mpz_odd_p(m.get_mpz_t()))) ++m;

  // M <= 2^p, so the value M * 2^q is exact in double for every supported format.
  const double magnitude = std::ldexp(m.get_d(), static_cast<int>(quantum_exponent));
  const double max_finite =
      std::ldexp(2.0 - std::ldexp(1.0, 1 - format.precision), format.max_exponent);
  double result = magnitude > max_finite ? std::numeric_limits<double>::infinity() : magnitude;
  if (m == 0) result = 0.0;  // underflow to zero keeps the exact quotient's sign below
  return negative ? -result : result;
}

void divide(mpz_class& q, const mpz_class& n, const mpz_class& d, IntRounding rule) {
  RoundingScratch& z = rounding_scratch();
  switch (rule) {
    case IntRounding::floor: mpz_fdiv_q(q.get_mpz_t(), n.get_mpz_t(), d.get_mpz_t()); return;
    case IntRounding::toward_zero: mpz_tdiv_q(q.get_mpz_t(), n.get_mpz_t(), d.get_mpz_t()); return;
    case IntRounding::half_up:      // floor(n/d + 1/2) = floor((2n + d) / 2d)
    case IntRounding::half_away: {  // sign(n) * floor(|n|/d + 1/2)
      const bool half_away = rule == IntRounding::half_away;
      if (half_away)
        mpz_abs(z.numerator.get_mpz_t(), n.get_mpz_t());
      else
        z.numerator = n;
      shift_left(z.numerator, z.numerator, 1);
      mpz_add(z.numerator.get_mpz_t(), z.numerator.get_mpz_t(), d.get_mpz_t());
      shift_left(z.denominator, d, 1);
      mpz_fdiv_q(q.get_mpz_t(), z.numerator.get_mpz_t(), z.denominator.get_mpz_t());
      if (half_away && n < 0) mpz_neg(q.get_mpz_t(), q.get_mpz_t());
      return;
    }
    case IntRounding::tosa: {
      // tosa_division.hpp's divide over unbounded integers: with 2^(k-1) < d <= 2^k, the
      // multiplier floor((2^30 + 1) 2^k / d), then floor((n * multiplier + 2^(29+k)) / 2^(30+k)).
      const int k = tosa::scale_bits(d.get_si());
      mpz_class& multiplier = z.scaled;
      multiplier = (int64_t{1} << 30) + 1;
      shift_left(multiplier, multiplier, k);
      mpz_fdiv_q(multiplier.get_mpz_t(), multiplier.get_mpz_t(), d.get_mpz_t());
      mpz_mul(z.numerator.get_mpz_t(), n.get_mpz_t(), multiplier.get_mpz_t());
      mpz_class& half = z.denominator;
      half = 1;
      shift_left(half, half, tosa::reciprocal_shift(k) - 1);
      mpz_add(z.numerator.get_mpz_t(), z.numerator.get_mpz_t(), half.get_mpz_t());
      mpz_fdiv_q_2exp(q.get_mpz_t(), z.numerator.get_mpz_t(),
                      static_cast<mp_bitcnt_t>(tosa::reciprocal_shift(k)));
      return;
    }
    case IntRounding::half_even: {
      mpz_fdiv_qr(q.get_mpz_t(), z.remainder.get_mpz_t(), n.get_mpz_t(),
                  d.get_mpz_t());  // 0 <= r < d
      const int half = compare_twice(z.remainder, d, z.scaled);
      if (half > 0 || (half == 0 && mpz_odd_p(q.get_mpz_t()))) ++q;
      return;
    }
  }
}

std::string quotient_text(const mpz_class& units, const mpz_class& divisor) {
  // The exact value is units * 2^-1074 / divisor, a rational; print it reduced.
  mpq_class value(units, divisor);
  mpz_class pow2 = 1;
  pow2 <<= static_cast<mp_bitcnt_t>(-unit_exponent);
  value /= mpq_class(pow2);
  value.canonicalize();
  std::string text = value.get_str();
  if (value.get_den() != 1) {
    // The decimal next to the fraction, for reading: "= 12.5" when it ends within 20 significant
    // digits (the denominator has no prime factor but 2 and 5), else "~" and 20 digits.
    mpf_class approx(value, 256);
    mp_exp_t exp10 = 0;
    std::string digits = approx.get_str(exp10, 10, 20);
    std::string sign;
    if (!digits.empty() && digits[0] == '-') {
      sign = "-";
      digits.erase(0, 1);
    }
    mpz_class rest = value.get_den();
    while (mpz_divisible_ui_p(rest.get_mpz_t(), 2)) rest /= 2;
    while (mpz_divisible_ui_p(rest.get_mpz_t(), 5)) rest /= 5;
    const bool ends = rest == 1 && digits.size() < 20;
    // Plain notation for magnitudes from 1e-6 to 1e20, scientific beyond.
    std::string decimal;
    if (exp10 > 0 && exp10 <= 20) {
      const auto whole = static_cast<size_t>(exp10);
      if (digits.size() <= whole)
        decimal = digits + std::string(whole - digits.size(), '0');
      else
        decimal = digits.substr(0, whole) + "." + digits.substr(whole);
    } else if (exp10 <= 0 && exp10 > -6) {
      decimal = "0." + std::string(static_cast<size_t>(-exp10), '0') + digits;
    } else {
      decimal = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
                std::to_string(exp10 - 1);
    }
    text += (ends ? " = " : " ~ ") + sign + decimal;
  }
  return text;
}

}  // namespace poolspec::exact
