// Claim 5 of the proofs issue: lib_nn's XS3 arithmetic. The scale derivation is the model's own
// text (xs3/include/poolspec/xs3/scale_formula.hpp) instantiated over Z3Int.
#include <fmt/format.h>

#include "poolspec/xs3/scale_formula.hpp"
#include "shape_proofs.hpp"

namespace poolspec::proofs {

namespace {

constexpr int64_t int32_max = 2147483647;
constexpr int64_t largest_safe_pixels = 132104;  // 127 * 128 * 132104 = 2^31 - 1024

void add(std::vector<Proof>& out, Proof p) { out.push_back(std::move(p)); }

}  // namespace

void add_xs3_proofs(std::vector<Proof>& out) {
  // 5a. For every non-power-of-two N with ceil(log2 N) = c (one query per c), the derived scale
  // is round_half_up(2^(c+6) / N), and init rejects N exactly for the family
  // 255 N <= 2^(c+7) or 129 N > 2^(c+7) (scale 128 or 64); otherwise 64 < scale < 128.
  for (int c = 2; c <= 24; ++c)
    add(out,
        Proof{fmt::format("xs3/scale/c={}/bv64", c),
              fmt::format(
                  "for 2^{} < N < 2^{}: lib_nn's scale (floor(2^31/N) + 2^{}) >> {} equals "
                  "floor((2^{} + N) / 2N) = round_half_up(2^{}/N), and it lies outside (64, 128) "
                  "exactly when 255 N <= 2^{} or 129 N > 2^{}",
                  c - 1, c, 24 - c, 25 - c, c + 7, c + 6, c + 7, c + 7),
              "64-bit two's complement bit-vectors (the claim itself bit-blasted), no overflow: N",
              fmt::format("2^{} < N < 2^{}", c - 1, c), "< 3 s", Expect::proved, "",
              Arithmetic::bitvector,
              [c](Query& q) {
                Builder& b = q.builder();
                const Z3Int n = q.variable("N");
                const Z3Int top = b.literal(int64_t{1} << (c + 7));
                q.assume(n > b.literal(int64_t{1} << (c - 1)) && n < b.literal(int64_t{1} << c));
                const Z3Int h = xs3::derived_scale(n, c);
                const Z3Bool rejected = h <= b.literal(64) || h >= b.literal(128);
                const Z3Bool family = b.literal(255) * n <= top || b.literal(129) * n > top;
                q.claim_itself(h == floor_div(top + n, b.literal(2) * n) &&
                               (rejected.expr() == family.expr()));
              },
              nullptr});

  // 5b. The error of RSHR(scale * S, shift) against the exact mean S / N, rounded half up, for
  // every window sum S of int8 values (bias 0). 2^c is generalised to any P with N < P < 2N.
  // The bound is proved in two lemmas that compose:
  //   distance: the model's real quotient s*S / 2^r and the exact mean S / N are less than 1 apart,
  //             i.e. |S * (s*N - 2^r)| < 2^r * N, with 2^r = 64 P;
  //   rounding: reals less than 1 apart round half up (floor(x + 1/2)) to integers at most 1
  //             apart -- and RSHR(s*S, r) = floor(s*S / 2^r + 1/2), the spec's mean is
  //             floor(S/N + 1/2).
  // s's definition s = floor((128 P + N) / 2N) enters as its quotient inequalities.
  add(out, Proof{"xs3/error-bound/distance/real",
                 "for N not a power of two, P = 2^ceil(log2 N) (generalised: N < P < 2N), s = "
                 "round_half_up(64 P / N) "
                 "in (64, 128) and any sum S of N int8 values: |S * (s N - 64 P)| < 64 P N, i.e. "
                 "|s S / 2^r - S / N| < 1 (proved over the reals, hence for the integers)",
                 "reals: N P S scale (nlsat, complete for polynomial real arithmetic)",
                 "N >= 3; N < P < 2N; 2N scale <= 128 P + N < 2N (scale + 1); 64 < scale < 128; "
                 "-128 N <= S <= 127 N",
                 "< 2 s", Expect::proved, "", Arithmetic::integer,
                 [](Query& q) {
                   z3::context& ctx = q.builder().ctx();
                   const z3::expr n = ctx.real_const("N"), p = ctx.real_const("P"),
                                  sum = ctx.real_const("S");
                   const z3::expr s = ctx.real_const("scale");
                   z3::solver& solver = q.solver();
                   solver.add(n >= 3 && n < p && p < 2 * n);
                   solver.add(2 * n * s <= 128 * p + n && 128 * p + n < 2 * n * (s + 1));
                   solver.add(s > 64 && s < 128);
                   solver.add(-128 * n <= sum && sum <= 127 * n);
                   const z3::expr error = sum * (s * n - 64 * p), limit = 64 * p * n;
                   solver.add(!(error < limit && -limit < error));
                 },
                 nullptr});
  add(out, Proof{"xs3/error-bound/rounding/real",
                 "for reals x, y with |x - y| < 1: |floor(x + 1/2) - floor(y + 1/2)| <= 1 -- with "
                 "the distance lemma, |RSHR(s S, r) - round_half_up(S / N)| <= 1; saturating both "
                 "to [lo, 127] keeps it",
                 "reals x y", "|x - y| < 1", "< 1 s", Expect::proved, "", Arithmetic::integer,
                 [](Query& q) {
                   z3::context& ctx = q.builder().ctx();
                   const z3::expr x = ctx.real_const("x"), y = ctx.real_const("y"),
                                  half = ctx.real_val(1, 2);
                   q.solver().add(x - y < 1 && y - x < 1);
                   const auto floor_of = [&](const z3::expr& e) {
                     return z3::expr(ctx, Z3_mk_real2int(ctx, e));
                   };
                   const z3::expr fx = floor_of(x + half),
                                  fy = floor_of(y + half);  // real2int is the floor
                   q.solver().add(!(fx - fy <= 1 && fy - fx <= 1));
                 },
                 nullptr});
  // Tightness: the bound 1 is reached (by a concrete N and S the solver finds).
  add(out, Proof{"xs3/error-bound-is-tight/int",
                 "the model always equals round_half_up(S/N) (FALSE: the bound 1 is reached)",
                 "unbounded integers: N S, P = 64", "33 <= N <= 63 (c = 6); -128 N <= S <= 127 N",
                 "< 2 s", Expect::refuted,
                 "the approximate division moves some means across a rounding boundary (a 7x7 pool "
                 "of all 103 gives 104)",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int n = q.variable("N"), sum = q.variable("S"), two = b.literal(2);
                   q.assume(n >= b.literal(33) && n <= b.literal(63));
                   q.assume(b.literal(-128) * n <= sum && sum <= b.literal(127) * n);
                   const Z3Int s = xs3::derived_scale(n, 6);
                   q.claim(floor_div(s * sum + b.literal(1 << 11), b.literal(1 << 12)) ==
                           floor_div(two * sum + n, two * n));
                 },
                 nullptr});
  // Powers of two: scale 1, 2^shift = N, so RSHR(b + S, shift) is exactly the half-up mean of
  // (b + S) / N -- the bias included (N = 2M, any M >= 1; N = 1 has shift 0 and is the identity).
  add(out, Proof{"xs3/exact-power-of-two/int",
                 "for N = 2M, RSHR(b + S, log2 N) = floor((b + S + N/2) / N) equals "
                 "round_half_up((b + S)/N)",
                 "unbounded integers: M T (T = b + S)", "M >= 1", "< 1 s", Expect::proved, "",
                 Arithmetic::integer,
                 [](Query& q) {
                   // The two floor quotients as variables pinned by b*q <= a < b*(q+1) (which
                   // division/floor proves floor_div satisfies, and which determine q).
                   Builder& b = q.builder();
                   const Z3Int m = q.variable("M"), t = q.variable("T"), two = b.literal(2),
                               one = b.literal(1);
                   const Z3Int model = q.variable("model"), mean = q.variable("mean");
                   q.assume(m >= one);
                   const Z3Int n = two * m;
                   q.assume(n * model <= t + m && t + m < n * (model + one));  // RSHR(T, log2 N)
                   q.assume(two * n * mean <= two * t + n &&
                            two * t + n < two * n * (mean + one));  // half-up mean
                   q.claim(model == mean);
                 },
                 nullptr});

  // 5c. The largest pixel count with no 32-bit accumulator overflow (bias 0, any int8 input):
  // every valid N <= 132104 keeps |s * sum| <= 128 * s * N <= 2^31 - 1; N = 132105 does not.
  for (int c = 2; c <= 18; ++c)
    add(out,
        Proof{fmt::format("xs3/accumulator/c={}/int", c),
              fmt::format(
                  "for valid 2^{} < N < 2^{}, N <= {}: 128 * scale * N <= 2^31 - 1 (no accumulator "
                  "overflow for any int8 image)",
                  c - 1, c, largest_safe_pixels),
              "unbounded integers: N", "N not rejected by init (64 < scale < 128)", "< 1 s",
              Expect::proved, "", Arithmetic::integer,
              [c](Query& q) {
                Builder& b = q.builder();
                const Z3Int n = q.variable("N");
                q.assume(n > b.literal(int64_t{1} << (c - 1)) && n < b.literal(int64_t{1} << c) &&
                         n <= b.literal(largest_safe_pixels));
                const Z3Int s = xs3::derived_scale(n, c);
                q.assume(s > b.literal(64) && s < b.literal(128));
                q.claim(b.literal(128) * s * n <= b.literal(int32_max));
              },
              nullptr});
  add(out, Proof{"xs3/accumulator/power-of-two/int",
                 "for N = 2^c <= 2^23 (scale 1): 128 * N <= 2^31 - 1", "unbounded integers: N",
                 "1 <= N <= 2^23", "< 1 s", Expect::proved, "", Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int n = q.variable("N");
                   q.assume(n >= b.literal(1) && n <= b.literal(int64_t{1} << 23));
                   q.claim(b.literal(128) * n <= b.literal(int32_max));
                 },
                 nullptr});
  add(out, Proof{"xs3/accumulator/first-overflow/int",
                 fmt::format("N = {} keeps 128 * scale * N <= 2^31 - 1 (FALSE: the first overflow)",
                             largest_safe_pixels + 1),
                 "unbounded integers: N", fmt::format("N = {}", largest_safe_pixels + 1), "< 1 s",
                 Expect::refuted,
                 "scale(132105) = 127 and 127 * 128 * 132105 = 2147498880 > 2^31 - 1: an image of "
                 "-128 overflows",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int n = q.variable("N");
                   q.assume(n == b.literal(largest_safe_pixels + 1));
                   q.claim(b.literal(128) * xs3::derived_scale(n, 18) * n <= b.literal(int32_max));
                 },
                 nullptr});
}

}  // namespace poolspec::proofs
