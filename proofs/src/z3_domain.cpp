#include "poolspec/proofs/z3_domain.hpp"

namespace poolspec::proofs {

Z3Int Builder::variable(const std::string& name) {
  return Z3Int(bitvector() ? ctx_.bv_const(name.c_str(), 64) : ctx_.int_const(name.c_str()), *this);
}

Z3Int Builder::literal(int64_t value) {
  return Z3Int(bitvector() ? ctx_.bv_val(value, 64) : ctx_.int_val(value), *this);
}

z3::expr Builder::obligations() const {
  z3::expr all = ctx_.bool_val(true);
  for (const z3::expr& o : obligations_) all = all && o;
  return all;
}

namespace {
// int64 arithmetic: the result of an operation must be an int64.
Z3Int in_int64(Z3Int r) {
  Builder& b = r.builder();
  if (b.arithmetic() == Arithmetic::int64)
    b.oblige(r.expr() >= b.ctx().int_val(INT64_MIN) && r.expr() <= b.ctx().int_val(INT64_MAX));
  return r;
}
}  // namespace

Z3Int operator+(const Z3Int& a, const Z3Int& b) {
  if (a.b_->bitvector()) {
    a.b_->oblige(z3::bvadd_no_overflow(a.e_, b.e_, true));
    a.b_->oblige(z3::bvadd_no_underflow(a.e_, b.e_));
  }
  return in_int64(Z3Int(a.e_ + b.e_, *a.b_));
}

Z3Int operator-(const Z3Int& a, const Z3Int& b) {
  if (a.b_->bitvector()) {
    a.b_->oblige(z3::bvsub_no_overflow(a.e_, b.e_));
    a.b_->oblige(z3::bvsub_no_underflow(a.e_, b.e_, true));
  }
  return in_int64(Z3Int(a.e_ - b.e_, *a.b_));
}

Z3Int operator*(const Z3Int& a, const Z3Int& b) {
  if (a.b_->bitvector()) {
    a.b_->oblige(z3::bvmul_no_overflow(a.e_, b.e_, true));
    a.b_->oblige(z3::bvmul_no_underflow(a.e_, b.e_));
  }
  return in_int64(Z3Int(a.e_ * b.e_, *a.b_));
}

Z3Int operator-(const Z3Int& a) {
  if (a.b_->bitvector()) a.b_->oblige(z3::bvneg_no_overflow(a.e_));
  return in_int64(Z3Int(-a.e_, *a.b_));
}

// The spec divides only by positive numbers (strides, dilations, 2): that is an obligation, and
// it lets the integer encoding use two cases instead of four.
Z3Int truncating_div(const Z3Int& a, const Z3Int& b) {
  Builder& builder = *a.b_;
  const z3::expr zero = builder.literal(0).e_;
  builder.oblige(b.e_ > zero);
  if (builder.bitvector()) return Z3Int(a.e_ / b.e_, builder);  // bvsdiv: truncates, as C++ does
  // Int `div` is Euclidean: for b > 0 it is the floor. C++ truncates toward zero.
  return Z3Int(z3::ite(a.e_ >= zero, a.e_ / b.e_, -((-a.e_) / b.e_)), builder);
}

Z3Int truncating_rem(const Z3Int& a, const Z3Int& b) {
  Builder& builder = *a.b_;
  const z3::expr zero = builder.literal(0).e_;
  builder.oblige(b.e_ > zero);
  if (builder.bitvector()) return Z3Int(z3::srem(a.e_, b.e_), builder);  // sign of the dividend
  // C++ %: the sign of the dividend. Int `mod` is the non-negative remainder for b > 0.
  return Z3Int(z3::ite(a.e_ >= zero, z3::mod(a.e_, b.e_), -z3::mod(-a.e_, b.e_)), builder);
}

// number_domain.hpp: q = a / b; if (a % b != 0 && (a < 0) != (b < 0)) --q;
Z3Int floor_div(const Z3Int& a, const Z3Int& b) {
  const Z3Int zero = a.b_->literal(0), one = a.b_->literal(1);
  const Z3Int q = truncating_div(a, b);
  const Z3Bool adjust = truncating_rem(a, b) != zero && ((a < zero).expr() != (b < zero).expr());
  return select(adjust, q - one, q);
}

// number_domain.hpp: q = a / b; if (a % b != 0 && (a < 0) == (b < 0)) ++q;
Z3Int ceil_div(const Z3Int& a, const Z3Int& b) {
  const Z3Int zero = a.b_->literal(0), one = a.b_->literal(1);
  const Z3Int q = truncating_div(a, b);
  const Z3Bool adjust = truncating_rem(a, b) != zero && ((a < zero).expr() == (b < zero).expr());
  return select(adjust, q + one, q);
}

}  // namespace poolspec::proofs
