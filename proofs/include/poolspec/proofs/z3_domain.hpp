// The Z3 number domain: the spec's integer formulas (spec/include/poolspec/formulas.hpp) are
// templates over a number type; instantiated over Z3Int they build the very expressions the
// proofs reason about. Three arithmetics:
//   integer:   unbounded mathematical integers (the math);
//   int64:     integers, with the obligation that every intermediate of +, -, * and negation lies
//              in [-2^63, 2^63): for these operations, and for truncating division by a positive
//              number (|a / b| <= |a|), exactly the absence of signed overflow in the C++;
//   bitvector: 64-bit two's complement bit-vectors, as the machine computes, each operation
//              obliged not to overflow (bvadd_no_overflow, ...).
// Division follows the C++ text of number_domain.hpp exactly: a truncating quotient (C++ `/`),
// then the floor / ceil adjustment. Z3's Int `div` is Euclidean, so truncation is built from it
// with explicit cases; the bit-vector `bvsdiv` / `bvsrem` truncate like C++. Dividing by zero
// is an obligation failure in both arithmetics (Z3 leaves x/0 unspecified).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <z3++.h>

namespace poolspec::proofs {

enum class Arithmetic { integer, int64, bitvector };

class Z3Int;

// Owns the arithmetic of one query and the overflow / division obligations its terms raise.
class Builder {
 public:
  Builder(z3::context& ctx, Arithmetic arithmetic) : ctx_(ctx), arithmetic_(arithmetic) {}
  z3::context& ctx() const { return ctx_; }
  Arithmetic arithmetic() const { return arithmetic_; }
  bool bitvector() const { return arithmetic_ == Arithmetic::bitvector; }
  bool bounded() const { return arithmetic_ != Arithmetic::integer; }  // the C++'s 64-bit view

  Z3Int variable(const std::string& name);
  Z3Int literal(int64_t value);
  void oblige(const z3::expr& condition) { obligations_.push_back(condition); }
  z3::expr obligations() const;  // their conjunction (true if none)

 private:
  z3::context& ctx_;
  Arithmetic arithmetic_;
  std::vector<z3::expr> obligations_;
};

class Z3Bool {
 public:
  Z3Bool(z3::expr e) : e_(std::move(e)) {}  // NOLINT: implicit from a Z3 Boolean
  const z3::expr& expr() const { return e_; }
  friend Z3Bool operator&&(const Z3Bool& a, const Z3Bool& b) { return a.e_ && b.e_; }
  friend Z3Bool operator||(const Z3Bool& a, const Z3Bool& b) { return a.e_ || b.e_; }
  friend Z3Bool operator!(const Z3Bool& a) { return !a.e_; }

 private:
  z3::expr e_;
};

class Z3Int {
 public:
  Z3Int(z3::expr e, Builder& b) : e_(std::move(e)), b_(&b) {}
  const z3::expr& expr() const { return e_; }
  Builder& builder() const { return *b_; }

  friend Z3Int operator+(const Z3Int& a, const Z3Int& b);
  friend Z3Int operator-(const Z3Int& a, const Z3Int& b);
  friend Z3Int operator*(const Z3Int& a, const Z3Int& b);
  friend Z3Int operator-(const Z3Int& a);
  friend Z3Bool operator<(const Z3Int& a, const Z3Int& b) { return a.e_ < b.e_; }  // signed for bv
  friend Z3Bool operator<=(const Z3Int& a, const Z3Int& b) { return a.e_ <= b.e_; }
  friend Z3Bool operator>(const Z3Int& a, const Z3Int& b) { return a.e_ > b.e_; }
  friend Z3Bool operator>=(const Z3Int& a, const Z3Int& b) { return a.e_ >= b.e_; }
  friend Z3Bool operator==(const Z3Int& a, const Z3Int& b) { return a.e_ == b.e_; }
  friend Z3Bool operator!=(const Z3Int& a, const Z3Int& b) { return a.e_ != b.e_; }

  // The C++ `/` and `%` (truncating), and the spec's floor_div / ceil_div built on them.
  friend Z3Int truncating_div(const Z3Int& a, const Z3Int& b);
  friend Z3Int truncating_rem(const Z3Int& a, const Z3Int& b);
  friend Z3Int floor_div(const Z3Int& a, const Z3Int& b);
  friend Z3Int ceil_div(const Z3Int& a, const Z3Int& b);
  friend Z3Int select(const Z3Bool& c, const Z3Int& a, const Z3Int& b) {
    return Z3Int(z3::ite(c.expr(), a.e_, b.e_), *a.b_);
  }
  friend Z3Int max_of(const Z3Int& a, const Z3Int& b) { return select(a < b, b, a); }
  friend Z3Int min_of(const Z3Int& a, const Z3Int& b) { return select(a < b, a, b); }
  friend Z3Int constant_like(const Z3Int& like, int64_t v) { return like.b_->literal(v); }

 private:
  z3::expr e_;
  Builder* b_;
};

}  // namespace poolspec::proofs
