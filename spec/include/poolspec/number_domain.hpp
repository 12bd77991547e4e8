// Number domains for the spec's integer formulas (formulas.hpp).
//
// A formula is written once, as a template over a number type V, and run on several domains:
//   - int64_t:     plain machine arithmetic, used after a Problem has been validated (every
//   per-axis
//                  attribute < 2^31, so no intermediate of a per-axis formula can overflow);
//   - CheckedInt:  int64 arithmetic that records overflow instead of wrapping; used to validate;
//   - proofs/ adds a Z3 domain whose values are symbolic, so the very same text is proved.
// A domain provides + - *, comparisons, and the free functions floor_div, ceil_div, select,
// max_of, min_of and constant_like (found by ordinary or argument-dependent lookup).
#pragma once

#include <cstdint>
#include <limits>

namespace poolspec {

// ---- int64_t ------------------------------------------------------------------------------
// Division rounding toward -infinity / +infinity for a positive divisor. C++'s `/` truncates
// toward zero, which differs for negative numerators (-3 / 2 == -1, floor is -2).
constexpr int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
constexpr int64_t ceil_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}
constexpr int64_t select(bool condition, int64_t if_true, int64_t if_false) {
  return condition ? if_true : if_false;
}
constexpr int64_t max_of(int64_t a, int64_t b) { return a < b ? b : a; }
constexpr int64_t min_of(int64_t a, int64_t b) { return a < b ? a : b; }
constexpr int64_t constant_like(int64_t, int64_t v) { return v; }

// ---- CheckedInt -----------------------------------------------------------------------------
// An int64 that remembers whether any operation that produced it overflowed. The flag is sticky
// and flows through every operation, comparison and select, so a final `overflowed()` tells
// whether the whole formula was computed without wrap-around.
class CheckedBool {
 public:
  constexpr CheckedBool(bool value, bool overflowed) : value_(value), overflowed_(overflowed) {}
  constexpr bool value() const { return value_; }
  constexpr bool overflowed() const { return overflowed_; }

 private:
  bool value_;
  bool overflowed_;
};

class CheckedInt {
 public:
  constexpr CheckedInt(int64_t v = 0) : value_(v) {}  // NOLINT: literals convert implicitly
  constexpr CheckedInt(int64_t v, bool overflowed) : value_(v), overflowed_(overflowed) {}
  constexpr int64_t value() const { return value_; }
  constexpr bool overflowed() const { return overflowed_; }

  friend constexpr CheckedInt operator+(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    bool o = __builtin_add_overflow(a.value_, b.value_, &r);
    return {r, o || a.overflowed_ || b.overflowed_};
  }
  friend constexpr CheckedInt operator-(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    bool o = __builtin_sub_overflow(a.value_, b.value_, &r);
    return {r, o || a.overflowed_ || b.overflowed_};
  }
  friend constexpr CheckedInt operator*(CheckedInt a, CheckedInt b) {
    int64_t r = 0;
    bool o = __builtin_mul_overflow(a.value_, b.value_, &r);
    return {r, o || a.overflowed_ || b.overflowed_};
  }
  friend constexpr CheckedInt operator-(CheckedInt a) { return CheckedInt(0) - a; }

  // Only positive divisors are meaningful in the spec; a non-positive one marks overflow.
  friend constexpr CheckedInt floor_div(CheckedInt a, CheckedInt b) {
    if (b.value_ <= 0) return {0, true};
    return {poolspec::floor_div(a.value_, b.value_), a.overflowed_ || b.overflowed_};
  }
  friend constexpr CheckedInt ceil_div(CheckedInt a, CheckedInt b) {
    if (b.value_ <= 0) return {0, true};
    return {poolspec::ceil_div(a.value_, b.value_), a.overflowed_ || b.overflowed_};
  }

#define POOLSPEC_CHECKED_COMPARISON(op)                                  \
  friend constexpr CheckedBool operator op(CheckedInt a, CheckedInt b) { \
    return {a.value_ op b.value_, a.overflowed_ || b.overflowed_};       \
  }
  POOLSPEC_CHECKED_COMPARISON(<)
  POOLSPEC_CHECKED_COMPARISON(<=)
  POOLSPEC_CHECKED_COMPARISON(>)
  POOLSPEC_CHECKED_COMPARISON(>=)
  POOLSPEC_CHECKED_COMPARISON(==)
  POOLSPEC_CHECKED_COMPARISON(!=)
#undef POOLSPEC_CHECKED_COMPARISON

  friend constexpr CheckedInt select(CheckedBool c, CheckedInt a, CheckedInt b) {
    CheckedInt chosen = c.value() ? a : b;
    return {chosen.value_, c.overflowed() || a.overflowed_ || b.overflowed_};
  }
  friend constexpr CheckedInt max_of(CheckedInt a, CheckedInt b) { return select(a < b, b, a); }
  friend constexpr CheckedInt min_of(CheckedInt a, CheckedInt b) { return select(a < b, a, b); }
  friend constexpr CheckedInt constant_like(CheckedInt, int64_t v) { return CheckedInt(v); }

 private:
  int64_t value_ = 0;
  bool overflowed_ = false;
};

}  // namespace poolspec
