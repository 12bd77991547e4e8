// TOSA's pooling arithmetic: the exact-fit shape rule (AVG_POOL2D / MAX_POOL2D's ERROR_IF on the
// output size) against the frameworks' rounding rules, and the integer average's division
// (spec/include/poolspec/tosa_division.hpp, instantiated over Z3Int) against the exact quotient
// rounded half away from zero.
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "poolspec/formulas.hpp"
#include "poolspec/tosa_division.hpp"
#include "shape_proofs.hpp"

namespace poolspec::proofs {

namespace {

void add(std::vector<Proof>& out, Proof p) { out.push_back(std::move(p)); }

// The first window count whose quotient TOSA's int8 division rounds otherwise than half away from
// zero (found by these proofs: none below it, a witness at it). 2^21 < 2109769 <= 2^22: k = 22.
constexpr int64_t first_difference = 2109769;

// The largest |sum| of `count` int8 taps less a zero point, both int8: |x - zp| <= 255.
constexpr int64_t tap_magnitude = 255;

// Why the division is exact almost everywhere. With N = (2^30 + 1) 2^k = multiplier * count + rho
// (0 <= rho < count), TOSA's quotient is floor(acc / count + 1/2 + e) with the error term
// e = acc (2^k - rho) / (count 2^(30+k)): the multiplier's + 1 less its truncation. A tie
// (acc / count + 1/2 an integer) then rounds away from zero, and no other sum moves while
// |e| < 1 / (2 count), its least distance to the next integer; |acc| <= 255 count makes that hold
// whenever count has no "room": 510 count (2^k - rho) < 2^(30+k). Below k = 22 no count has room
// (510 count 2^k <= 510 4^k < 2^(30+k)); for k = 22 these counts below the first difference do,
// and each is checked whole.
constexpr int64_t counts_with_room[] = {2106963, 2107575, 2107782, 2107947, 2108219, 2108343,
                                        2108513, 2108827, 2109286, 2109349, 2109377, 2109499};

// acc / count rounded half away from zero, written from its definition: floor((2|acc| + count) /
// (2 count)) with acc's sign.
Z3Int half_away(const Z3Int& acc, const Z3Int& count) {
  Builder& b = acc.builder();
  const Z3Int two = b.literal(2), zero = b.literal(0);
  return select(acc >= zero, floor_div(two * acc + count, two * count),
                zero - floor_div(zero - two * acc + count, two * count));
}

// The query's window count and sum: lo <= count <= hi, |acc| <= 255 count (which keeps acc in
// int32, TOSA's accumulator for int8, up to the 8K level's 8192 x 8192 window).
std::pair<Z3Int, Z3Int> count_and_sum(Query& q, int64_t lo, int64_t hi) {
  Builder& b = q.builder();
  const Z3Int count = q.variable("count"), acc = q.variable("acc");
  q.assume(count >= b.literal(lo) && count <= b.literal(hi));
  q.assume(b.literal(-tap_magnitude) * count <= acc && acc <= b.literal(tap_magnitude) * count);
  return {count, acc};
}

// The division's quotients as variables pinned by their definition (q = floor(a / d) exactly when
// d q <= a < d (q + 1), the proof division/floor/int): the solver reasons on products instead of
// on division terms, which is what keeps these queries to a second. `tosa_quotient` is
// apply_scale_32(acc, reciprocal_scale(count)) (tosa_division.hpp), `rho` the multiplier's
// remainder, `exact` the sum rounded half away from zero.
struct PinnedDivision {
  Z3Int rho, tosa_quotient, exact;
};
PinnedDivision pinned_division(Query& q, const Z3Int& count, const Z3Int& acc, int k) {
  Builder& b = q.builder();
  const Z3Int one = b.literal(1), two = b.literal(2), zero = b.literal(0);
  const auto pin = [&](const Z3Int& quotient, const Z3Int& a, const Z3Int& d) {
    q.assume(d * quotient <= a && a < d * (quotient + one));
  };
  const Z3Int multiplier = q.variable("multiplier"), rho = q.variable("rho");
  q.assume(b.literal(((int64_t{1} << 30) + 1) << k) == multiplier * count + rho && zero <= rho &&
           rho < count);
  const int shift = tosa::reciprocal_shift(k);
  const Z3Int tosa_quotient = q.variable("tosa"), exact = q.variable("exact");
  pin(tosa_quotient, acc * multiplier + b.literal(int64_t{1} << (shift - 1)),
      b.literal(int64_t{1} << shift));
  const Z3Int magnitude = select(acc >= zero, exact, zero - exact);
  pin(magnitude, select(acc >= zero, two * acc, zero - two * acc) + count, two * count);
  return {rho, tosa_quotient, exact};
}

// 510 count (2^k - rho) < 2^(30+k): the error term cannot move a sum that is not a tie.
Z3Bool no_room(Builder& b, const Z3Int& count, const Z3Int& rho, int k) {
  return b.literal(2 * tap_magnitude) * count * (b.literal(int64_t{1} << k) - rho) <
         b.literal(int64_t{1} << (30 + k));
}

Proof exact_without_room(int k, int64_t lo, int64_t hi) {
  return Proof{fmt::format("tosa/division/k={}/exact-without-room/{}-{}/int", k, lo, hi),
               fmt::format("for window counts {}..{} (reciprocal_scale's k = {}) without room "
                           "(510 count (2^k - rho) < 2^(30+k)) and every int8 window sum acc: "
                           "apply_scale_32(acc, reciprocal_scale(count)) is acc / count rounded "
                           "half away from zero",
                           lo, hi, k),
               "unbounded integers: count acc multiplier rho tosa exact",
               "|acc| <= 255 count; the quotients pinned by their definitions",
               "< 2 s",
               Expect::proved,
               "",
               Arithmetic::integer,
               [k, lo, hi](Query& q) {
                 const auto [count, acc] = count_and_sum(q, lo, hi);
                 const PinnedDivision d = pinned_division(q, count, acc, k);
                 q.assume(no_room(q.builder(), count, d.rho, k));
                 q.claim(d.tosa_quotient == d.exact);
               },
               nullptr};
}

}  // namespace

void add_tosa_proofs(std::vector<Proof>& out) {
  // The exact-fit rule: TOSA refuses an output size unless (L - kernel) % stride == 0, L the
  // padded extent. Where it holds, floor, ceil and PyTorch's ceil give the same extent, so a TOSA
  // graph's windows are the same under every framework's rule.
  add(out,
      Proof{"tosa/extent/exact-fit-agrees/int",
            "where (d + pb + pe - k) % s == 0 (TOSA's ERROR_IF on the output size) and pb, "
            "pe < k: the floor, ceil and PyTorch-ceil output extents are equal, to (d + pb + "
            "pe - k) / s + 1",
            "unbounded integers: d k s pb pe", "d, k, s >= 1; 0 <= pb, pe < k; k <= d + pb + pe",
            "< 1 s", Expect::proved, "", Arithmetic::integer,
            [](Query& q) {
              Builder& b = q.builder();
              const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s"),
                          pb = q.variable("pb"), pe = q.variable("pe"), t = q.variable("t");
              const Z3Int one = b.literal(1), zero = b.literal(0);
              q.assume(d >= one && k >= one && s >= one && pb >= zero && pe >= zero && pb < k &&
                       pe < k && k <= d + pb + pe);
              q.assume(d + pb + pe - k == t * s);  // the division is exact
              const formulas::AxisTerms<Z3Int> axis{d, k, s, one, pb, pe};
              const Z3Int floor = formulas::output_extent(axis, Rounding::floor);
              q.claim(floor == t + one && floor == formulas::output_extent(axis, Rounding::ceil) &&
                      floor == formulas::output_extent(axis, Rounding::ceil_torch));
            },
            nullptr});
  add(out, Proof{"tosa/extent/mutant-without-exact-fit/int",
                 "floor and ceil give the same extent without TOSA's exact-fit condition (FALSE)",
                 "unbounded integers: d k s pb pe",
                 "d, k, s >= 1; 0 <= pb, pe < k; k <= d + pb + pe", "< 1 s", Expect::refuted,
                 "a window that does not fit exactly is dropped by floor and kept by ceil: the "
                 "condition is what makes TOSA's rule agree with both",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s"),
                               pb = q.variable("pb"), pe = q.variable("pe");
                   const Z3Int one = b.literal(1), zero = b.literal(0);
                   q.assume(d >= one && k >= one && s >= one && pb >= zero && pe >= zero &&
                            pb < k && pe < k && k <= d + pb + pe);
                   const formulas::AxisTerms<Z3Int> axis{d, k, s, one, pb, pe};
                   q.claim(formulas::output_extent(axis, Rounding::floor) ==
                           formulas::output_extent(axis, Rounding::ceil));
                 },
                 nullptr});

  // The integer average's division: exact wherever a count has no room (one query per k), no count
  // below k = 22 has room, the few that do below the first difference are exact too, and at the
  // first difference a sum is not.
  add(out, Proof{"tosa/division/no-room-below-k=22/int",
                 "for every count <= 2^k <= 2^21 and remainder rho >= 0: 510 count (2^k - rho) < "
                 "2^(30+k), no room for the error term to move a sum",
                 "unbounded integers: count p rho", "1 <= count <= p <= 2^21; rho >= 0", "< 5 s",
                 Expect::proved, "", Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int count = q.variable("count"), p = q.variable("p"),
                               rho = q.variable("rho");
                   q.assume(b.literal(1) <= count && count <= p &&
                            p <= b.literal(int64_t{1} << 21) && b.literal(0) <= rho);
                   q.claim(b.literal(2 * tap_magnitude) * count * (p - rho) <
                           b.literal(int64_t{1} << 30) * p);
                 },
                 nullptr});
  for (int k = 0; k <= 22; ++k) {
    const int64_t lo = k == 0 ? 1 : (int64_t{1} << (k - 1)) + 1, hi = int64_t{1} << k;
    if (k == 7) {  // the whole range is past the query timeout; its halves take a second
      add(out, exact_without_room(k, lo, 96));
      add(out, exact_without_room(k, 97, hi));
    } else {
      add(out, exact_without_room(k, lo, hi));
    }
  }
  const auto room_list_proof = [](std::string name, std::string claim, std::vector<int64_t> listed,
                                  Expect expect, std::string why_false) {
    return Proof{
        std::move(name),
        std::move(claim),
        "64-bit bit-vectors: count",
        fmt::format("2^21 < count < {}; rho = ((2^30 + 1) 2^22) % count", first_difference),
        "< 30 s",
        expect,
        std::move(why_false),
        Arithmetic::bitvector,
        [listed = std::move(listed)](Query& q) {
          // Written on the bit-vectors directly, unsigned: every value lies in [0, 2^61)
          // (510 count (2^22 - rho) < 510 * 2^44), so nothing wraps and no obligation is needed;
          // the builder's overflow obligations would double the circuit to bit-blast.
          Builder& b = q.builder();
          const z3::expr count = q.variable("count").expr();
          const auto bv = [&](int64_t v) { return b.literal(v).expr(); };
          q.assume(
              Z3Bool(z3::ugt(count, bv(int64_t{1} << 21)) && z3::ult(count, bv(first_difference))));
          const z3::expr rho = z3::urem(bv(((int64_t{1} << 30) + 1) << 22), count);
          const z3::expr room = z3::uge(
              bv(2 * tap_magnitude) * count * (bv(int64_t{1} << 22) - rho), bv(int64_t{1} << 52));
          z3::expr listed_count = b.ctx().bool_val(false);
          for (const int64_t c : listed) listed_count = listed_count || count == bv(c);
          q.claim_itself(Z3Bool(z3::implies(room, listed_count)));
        },
        nullptr};
  };
  add(out, room_list_proof("tosa/division/k=22/counts-with-room/bv64",
                           fmt::format("the counts below {} with room are exactly the {} listed in "
                                       "proofs/src/tosa_proofs.cpp (2106963 .. 2109499)",
                                       first_difference, std::size(counts_with_room)),
                           {std::begin(counts_with_room), std::end(counts_with_room)},
                           Expect::proved, ""));
  add(out, room_list_proof("tosa/division/k=22/mutant-list-without-2109499/bv64",
                           "the counts below 2109769 with room are the listed ones but the last "
                           "(FALSE)",
                           {std::begin(counts_with_room), std::end(counts_with_room) - 1},
                           Expect::refuted, "the query finds the count left out of the list"));
  add(out, Proof{"tosa/division/k=22/counts-with-room-exact/int",
                 "for each listed count with room (2106963 .. 2109499) and every int8 window sum "
                 "acc: apply_scale_32(acc, reciprocal_scale(count)) is acc / count rounded half "
                 "away from zero",
                 "unbounded integers: count acc multiplier rho tosa exact",
                 "count one of the listed; |acc| <= 255 count", "< 2 s", Expect::proved, "",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const auto [count, acc] =
                       count_and_sum(q, counts_with_room[0], std::end(counts_with_room)[-1]);
                   Z3Bool listed = b.ctx().bool_val(false);
                   for (const int64_t c : counts_with_room)
                     listed = listed || count == b.literal(c);
                   q.assume(listed);
                   const PinnedDivision d = pinned_division(q, count, acc, 22);
                   q.claim(d.tosa_quotient == d.exact);
                 },
                 nullptr});
  add(out,
      Proof{fmt::format("tosa/division/first-difference/count={}/int", first_difference),
            fmt::format("apply_scale_32(acc, reciprocal_scale({})) equals acc / {} rounded "
                        "half away from zero for every int8 window sum (FALSE)",
                        first_difference, first_difference),
            "unbounded integers: count acc", "|acc| <= 255 count", "< 1 s", Expect::refuted,
            "the multiplier's +1 (which rounds ties away from zero) has grown past half a unit "
            "for a sum just beside a tie: the smallest window whose int8 average TOSA rounds "
            "otherwise than exactly",
            Arithmetic::integer,
            [](Query& q) {
              const auto [count, acc] = count_and_sum(q, first_difference, first_difference);
              q.claim(tosa::divide(acc, count, 22) == half_away(acc, count));
            },
            nullptr});
  add(out, Proof{"tosa/division/mutant-multiplier-without-plus-one/int",
                 "the multiplier (1 << 30 << k) / count, without reciprocal_scale's + 1, rounds "
                 "every quotient of counts 3 and 4 (k = 2) half away from zero (FALSE)",
                 "unbounded integers: count acc", "3 <= count <= 4; |acc| <= 255 count", "< 1 s",
                 Expect::refuted,
                 "without the + 1 a negative tie rounds toward +infinity (-1 / 2 gives 0): the + 1 "
                 "is what rounds ties away from zero",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const auto [count, acc] = count_and_sum(q, 3, 4);
                   const Z3Int mutant =
                       tosa::apply_scale_32(acc, floor_div(b.literal(int64_t{1} << 32), count),
                                            tosa::reciprocal_shift(2));
                   q.claim(mutant == half_away(acc, count));
                 },
                 nullptr});
}

}  // namespace poolspec::proofs
