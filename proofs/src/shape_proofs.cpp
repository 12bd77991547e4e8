// Claims 1-4 and 6 of the proofs issue: output extent, auto_pad, divisor zero, window ranges,
// and the mutant formulas that must be refuted. Every formula comes from
// spec/include/poolspec/formulas.hpp, instantiated over Z3Int.
#include "shape_proofs.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/proofs/proof.hpp"

namespace poolspec::proofs {

namespace {

using formulas::AxisTerms;

AxisTerms<Z3Int> terms(const SymbolicAxis& a) { return {a.d, a.k, a.s, a.dl, a.pb, a.pe}; }

std::string arithmetic_name(Arithmetic a) {
  return a == Arithmetic::integer ? "int" : a == Arithmetic::int64 ? "int64" : "bv64";
}

std::string domain_text(Arithmetic a, const std::string& variables) {
  switch (a) {
    case Arithmetic::integer: return "unbounded integers: " + variables;
    case Arithmetic::int64:
      return "integers, every intermediate within int64 (no C++ overflow): " + variables;
    case Arithmetic::bitvector:
      return "64-bit two's complement bit-vectors, no overflow: " + variables;
  }
  return variables;
}

// The claim of a bounded (C++) proof: no operation overflows; the integer proof does the rest.
std::string cpp_claim(Arithmetic a, const std::string& claim) {
  if (a == Arithmetic::integer) return claim;
  return "no operation overflows int64 or divides by a non-positive number while computing: " +
         claim;
}

const char* axis_assumptions_int = "d, k, s, dl >= 1; pb, pe >= 0; (k-1)*dl + 1 <= d + pb + pe";
const char* axis_assumptions_bv =
    "d, k, s, dl >= 1; pb, pe >= 0; (k-1)*dl + 1 <= d + pb + pe; every attribute < 2^31";

std::string assumptions(Arithmetic a, const std::string& more = "") {
  std::string s = a == Arithmetic::integer ? axis_assumptions_int : axis_assumptions_bv;
  return more.empty() ? s : s + "; " + more;
}

// The definition's window starts (docs/semantics.md section 0), independent of the closed forms:
//   floor: window j lies inside the padded extent, j*s + K <= L;
//   ceil:  window 0, and window j >= 1 while window j-1 has not reached the end, (j-1)*s + K < L.
Z3Bool allowed(Rounding r, const SymbolicAxis& a, const Z3Int& j) {
  Builder& b = j.builder();
  const Z3Int K = formulas::effective_kernel(a.k, a.dl), L = formulas::padded_extent(terms(a));
  if (r == Rounding::floor) return j * a.s + K <= L;
  return j == b.literal(0) || (j - b.literal(1)) * a.s + K < L;
}

Z3Int in_bounds(const SymbolicAxis& a, const Z3Int& j) {
  return formulas::in_bounds_taps(terms(a), j);
}
Z3Int padded(const SymbolicAxis& a, const Z3Int& j) { return formulas::padded_taps(terms(a), j); }

// "Window j, 0 <= j < o, has no counted tap."
Z3Bool empty_at(Query& q, const SymbolicAxis& a, Rounding r, bool padded_rule, const Z3Int& j) {
  Builder& b = q.builder();
  const Z3Int o = formulas::output_extent(terms(a), r);
  if (b.bounded()) q.assume(j >= b.literal(0) && j < o);  // window indices are outputs
  return b.literal(0) <= j && j < o &&
         (padded_rule ? padded(a, j) : in_bounds(a, j)) == b.literal(0);
}

// "Some window has no counted tap": window j, for a free j.
Z3Bool some_empty(Query& q, const SymbolicAxis& a, Rounding r, bool padded_rule) {
  return empty_at(q, a, r, padded_rule, q.variable("j"));
}

void add(std::vector<Proof>& out, Proof p) { out.push_back(std::move(p)); }

constexpr Rounding roundings[] = {Rounding::floor, Rounding::ceil, Rounding::ceil_torch};

}  // namespace

void add_shape_proofs(std::vector<Proof>& out) {
  for (Arithmetic ar : {Arithmetic::integer, Arithmetic::int64}) {
    const std::string suffix = "/" + arithmetic_name(ar);

    // 1. Output extent = the number of window starts the definition allows (floor, ceil).
    for (Rounding r : {Rounding::floor, Rounding::ceil}) {
      add(out, Proof{"extent/" + std::string(rounding_name(r)) + suffix,
                     cpp_claim(ar, "output_extent(" + std::string(rounding_name(r)) +
                                       ") = o is the number of allowed window starts: "
                                       "o >= 1, window o-1 is allowed, window o is not, and "
                                       "allowed starts are downward closed"),
                     domain_text(ar, "d k s dl pb pe i j"), assumptions(ar), "< 2 s",
                     Expect::proved, "", ar,
                     [r](Query& q) {
                       const SymbolicAxis a = symbolic_axis(q, true);
                       Builder& b = q.builder();
                       const Z3Int o = formulas::output_extent(terms(a), r);
                       const Z3Int i = q.variable("i"), j = q.variable("j"), one = b.literal(1),
                                   zero = b.literal(0);
                       if (b.bounded())
                         q.assume(zero <= i && i <= j && j <= o);  // window indices are outputs
                       const Z3Bool closed =
                           !(allowed(r, a, j) && zero <= i && i <= j) || allowed(r, a, i);
                       q.claim(o >= one && allowed(r, a, o - one) && !allowed(r, a, o) && closed);
                     },
                     nullptr});
    }
    // ngraph's document formula is the floor rule.
    add(out,
        Proof{
            "extent/ngraph-document" + suffix,
            cpp_claim(
                ar, "ngraph's ceil((p + d + q - w + 1) / s) equals floor((p + d + q - w) / s) + 1"),
            domain_text(ar, "d k s dl pb pe"), assumptions(ar), "< 1 s", Expect::proved, "", ar,
            [](Query& q) {
              const SymbolicAxis a = symbolic_axis(q, true);
              Builder& b = q.builder();
              const Z3Int m =
                  formulas::padded_extent(terms(a)) - formulas::effective_kernel(a.k, a.dl);
              q.claim(ceil_div(m + b.literal(1), a.s) == floor_div(m, a.s) + b.literal(1) &&
                      ceil_div(m + b.literal(1), a.s) ==
                          formulas::output_extent(terms(a), Rounding::floor));
            },
            nullptr});
    // ceil_torch = ceil less a last window that starts in the end padding.
    add(out,
        Proof{"extent/ceil_torch" + suffix,
              cpp_claim(ar,
                        "ceil_torch keeps every ceil window, except a last one that starts in the "
                        "end padding (input coordinate >= d), which it drops"),
              domain_text(ar, "d k s dl pb pe"), assumptions(ar), "< 1 s", Expect::proved, "", ar,
              [](Query& q) {
                const SymbolicAxis a = symbolic_axis(q, true);
                Builder& b = q.builder();
                const Z3Int one = b.literal(1);
                const Z3Int oc = formulas::output_extent(terms(a), Rounding::ceil);
                const Z3Int ot = formulas::output_extent(terms(a), Rounding::ceil_torch);
                const Z3Bool last_in_end_padding =
                    formulas::window_start(terms(a), oc - one) >= a.d;
                q.claim((ot == oc && !last_in_end_padding) ||
                        (ot == oc - one && last_in_end_padding));
              },
              nullptr});

    // 2. auto_pad: same_upper / same_lower give ceil(d/s) outputs with floor rounding.
    for (bool upper : {true, false}) {
      const std::string mode = upper ? "same_upper" : "same_lower";
      add(out,
          Proof{
              "auto_pad/" + mode + "/floor" + suffix,
              cpp_claim(
                  ar, mode + " pads are non-negative, split " +
                          (upper ? "floor(P/2) at the beginning" : "floor(P/2) at the end") +
                          ", make a valid problem, and give ceil(d/s) outputs with floor rounding"),
              domain_text(ar, "d k s dl"),
              (ar == Arithmetic::integer ? "d, k, s, dl >= 1" : "d, k, s, dl in [1, 2^31)") +
                  std::string(
                      "; ceil(d/s) is the formulas' ceil_div, proved the ceiling by division/ceil"),
              "< 2 s", Expect::proved, "", ar,
              [upper](Query& q) {
                Builder& b = q.builder();
                const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s"),
                            dl = q.variable("dl");
                const Z3Int one = b.literal(1), zero = b.literal(0);
                q.assume(d >= one && k >= one && s >= one && dl >= one);
                if (b.bounded()) {
                  const Z3Int limit = b.literal(max_attribute);
                  q.assume(d <= limit && k <= limit && s <= limit && dl <= limit);
                }
                const Z3Int o = ceil_div(d, s);
                const auto pads = formulas::same_pads(d, k, s, dl, upper);
                const Z3Int total = pads.begin + pads.end;
                const Z3Int small = upper ? pads.begin : pads.end,
                            large = upper ? pads.end : pads.begin;
                const AxisTerms<Z3Int> t{d, k, s, dl, pads.begin, pads.end};
                q.claim(pads.begin >= zero && pads.end >= zero &&
                        (large - small == zero || large - small == one) &&
                        small == floor_div(total, b.literal(2)) &&
                        formulas::effective_kernel(k, dl) <= formulas::padded_extent(t) &&
                        formulas::output_extent(t, Rounding::floor) == o);
              },
              nullptr});
    }
  }

  // The division helpers of number_domain.hpp are the floor and the ceiling.
  for (bool ceiling : {false, true})
    add(out, Proof{std::string("division/") + (ceiling ? "ceil" : "floor") + "/int",
                   ceiling ? "ceil_div(a, b) = q with b*(q-1) < a <= b*q: the ceiling of a/b"
                           : "floor_div(a, b) = q with b*q <= a < b*(q+1): the floor of a/b",
                   domain_text(Arithmetic::integer, "a b"), "b >= 1", "< 1 s", Expect::proved, "",
                   Arithmetic::integer,
                   [ceiling](Query& q) {
                     Builder& bl = q.builder();
                     const Z3Int a = q.variable("a"), b = q.variable("b"), one = bl.literal(1);
                     q.assume(b >= one);
                     if (ceiling) {
                       const Z3Int c = ceil_div(a, b);
                       q.claim(b * (c - one) < a && a <= b * c);
                     } else {
                       const Z3Int f = floor_div(a, b);
                       q.claim(b * f <= a && a < b * (f + one));
                     }
                   },
                   nullptr});

  // 2'. With ceil rounding and kernel < stride, same_* can produce one output more than ceil(d/s)
  // (docs/semantics.md 2.3): refuted, the counterexample shows it.
  add(out,
      Proof{
          "auto_pad/same_upper/ceil/int",
          "same_upper with ceil rounding gives ceil(d/s) outputs (FALSE: kernel < stride adds one)",
          domain_text(Arithmetic::integer, "d k s o"), "d, k, s >= 1; o = ceil(d/s)", "< 1 s",
          Expect::refuted,
          "OpenVINO applies the rounding type to same_* padding too; when the dilated kernel is "
          "smaller than the stride, CEIL adds a window past the input (semantics.md 2.3)",
          Arithmetic::integer,
          [](Query& q) {
            Builder& b = q.builder();
            const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s"),
                        o = q.variable("o");
            const Z3Int one = b.literal(1);
            q.assume(d >= one && k >= one && s >= one && o * s >= d && (o - one) * s < d);
            const auto pads = formulas::same_pads(d, k, s, one, true);
            q.claim(formulas::output_extent(AxisTerms<Z3Int>{d, k, s, one, pads.begin, pads.end},
                                            Rounding::ceil) == o);
          },
          [](const Model& m) {
            const auto pads =
                formulas::same_pads<int64_t>(m.at("d"), m.at("k"), m.at("s"), 1, true);
            Problem p = *axis_problem(m, Rounding::ceil);
            p.axes[0].pad_begin = pads.begin;
            p.axes[0].pad_end = pads.end;
            return std::optional<Problem>(p);
          }});
}

void add_divisor_proofs(std::vector<Proof>& out) {
  // 3. Divisor zero: an exact characterisation, per rounding mode, without dilation:
  //    some window has no in-bounds tap  <=>  k <= pb  or  the last window starts at or after d.
  for (Rounding r : roundings) {
    const std::string mode(rounding_name(r));
    for (Arithmetic ar : {Arithmetic::integer, Arithmetic::int64})
      add(out,
          Proof{"empty/" + mode + "/" + arithmetic_name(ar),
                cpp_claim(
                    ar,
                    "without dilation, some window (" + mode +
                        ") has no in-bounds tap exactly when k <= pb (window 0 "
                        "is empty) or the last window starts at or after d (window o-1 is empty)"),
                domain_text(ar, "d k s pb pe j"), assumptions(ar, "dl = 1"), "< 2 s",
                Expect::proved, "", ar,
                [r](Query& q) {
                  const SymbolicAxis a = symbolic_axis(q, false);
                  Builder& b = q.builder();
                  const Z3Int zero = b.literal(0), one = b.literal(1);
                  const Z3Int o = formulas::output_extent(terms(a), r);
                  const Z3Bool first_empty = a.k <= a.pb;
                  const Z3Bool last_empty = formulas::window_start(terms(a), o - one) >= a.d;
                  const Z3Bool characterisation = first_empty || last_empty;
                  const Z3Bool empty = some_empty(q, a, r, false);
                  q.claim((!empty || characterisation) &&
                          (!first_empty || in_bounds(a, zero) == zero) &&
                          (!last_empty || in_bounds(a, o - one) == zero));
                },
                [r](const Model& m) { return axis_problem(m, r); }});

    // With dilation, when the input is at least as wide as the dilation the empty windows are
    // still only the first and the last. Proved in two cases that together cover every window:
    // one that starts before the input (then window 0 is empty too) and one that does not (then
    // the last window is empty too).
    for (bool before : {true, false})
      add(out, Proof{"empty/" + mode + "/dilated/" +
                         (before ? "starts-before" : "starts-inside-or-after") + "/int",
                     "with dilation and d >= dl, if a window (" + mode + ") that starts " +
                         (before ? "before the input" : "at or after the input's start") +
                         " has no in-bounds tap, then window " + (before ? "0" : "o-1") +
                         " has none either",
                     domain_text(Arithmetic::integer, "d k s dl pb pe j"),
                     assumptions(Arithmetic::integer, "d >= dl"), "< 5 s", Expect::proved, "",
                     Arithmetic::integer,
                     [r, before](Query& q) {
                       const SymbolicAxis a = symbolic_axis(q, true);
                       Builder& b = q.builder();
                       q.assume(a.d >= a.dl);
                       const Z3Int zero = b.literal(0), one = b.literal(1);
                       const Z3Int o = formulas::output_extent(terms(a), r);
                       const Z3Int j = q.variable("j");
                       const Z3Bool empty = empty_at(q, a, r, false, j);
                       const Z3Int start = formulas::window_start(terms(a), j);
                       q.assume(before ? start < zero : start >= zero);
                       q.claim(!empty || in_bounds(a, before ? zero : o - one) == zero);
                     },
                     [r](const Model& m) { return axis_problem(m, r); }});
  }
  // What dilation changes: with d < dl a window in the middle can jump over the whole input.
  add(out,
      Proof{"empty/floor/dilated-narrow-input/int",
            "with dilation, the empty windows are still only the first and the last (FALSE when d "
            "< dl)",
            domain_text(Arithmetic::integer, "d k s dl pb pe j"), assumptions(Arithmetic::integer),
            "< 5 s", Expect::refuted,
            "a dilated window can straddle an input narrower than its dilation without a tap in it",
            Arithmetic::integer,
            [](Query& q) {
              const SymbolicAxis a = symbolic_axis(q, true);
              Builder& b = q.builder();
              const Z3Int zero = b.literal(0), one = b.literal(1);
              const Z3Int o = formulas::output_extent(terms(a), Rounding::floor);
              const Z3Bool ends = in_bounds(a, zero) == zero || in_bounds(a, o - one) == zero;
              q.claim(!some_empty(q, a, Rounding::floor, false) || ends);
            },
            [](const Model& m) { return axis_problem(m, Rounding::floor); }});

  // OpenVINO's rule for exclude-pad: kernel > pads_begin and kernel > pads_end.
  struct RuleCase {
    std::string name;
    Rounding rounding;
    bool dilated;
    Expect expect;
    std::string why;
  };
  const RuleCase rule_cases[] = {
      {"openvino-exclude/floor", Rounding::floor, false, Expect::proved, ""},
      {"openvino-exclude/ceil", Rounding::ceil, false, Expect::refuted,
       "with ceil rounding the extra window can start past the input even though kernel > pads "
       "(docs/semantics.md: OpenVINO's reference then outputs 0)"},
      {"openvino-exclude/floor/dilated", Rounding::floor, true, Expect::refuted,
       "with dilation (AvgPool-16) kernel > pad no longer keeps a tap in the input"},
      {"torch-drop/pads-below-kernel", Rounding::ceil_torch, false, Expect::proved, ""},
  };
  for (const RuleCase& c : rule_cases)
    add(out,
        Proof{
            "empty/" + c.name + "/int",
            std::string("with ") + std::string(rounding_name(c.rounding)) +
                (c.dilated ? ", dilation" : "") +
                " and kernel > pads_begin, kernel > pads_end, no window has a zero exclude divisor",
            domain_text(Arithmetic::integer, "d k s dl pb pe j"),
            assumptions(Arithmetic::integer, "k > pb; k > pe"), "< 5 s", c.expect, c.why,
            Arithmetic::integer,
            [c](Query& q) {
              const SymbolicAxis a = symbolic_axis(q, c.dilated);
              q.assume(a.k > a.pb && a.k > a.pe);
              q.claim(!some_empty(q, a, c.rounding, false));
            },
            [c](const Model& m) { return axis_problem(m, c.rounding); }});

  // include_clip's divisor (taps inside the padded extent).
  for (Rounding r : roundings)
    add(out,
        Proof{"empty/include_clip/" + std::string(rounding_name(r)) + "/int",
              "the include_clip divisor (" + std::string(rounding_name(r)) +
                  ", any dilation) is never zero",
              domain_text(Arithmetic::integer, "d k s dl pb pe j"),
              assumptions(Arithmetic::integer), "< 5 s",
              r == Rounding::ceil ? Expect::refuted : Expect::proved,
              r == Rounding::ceil
                  ? "plain ceil can add a window that starts past the padded extent when the "
                    "stride exceeds the window (d=6, k=1, s=4): its include_clip divisor is 0"
                  : "",
              Arithmetic::integer,
              [r](Query& q) {
                const SymbolicAxis a = symbolic_axis(q, true);
                q.claim(!some_empty(q, a, r, true));
              },
              [r](const Model& m) { return axis_problem(m, r, Op::avg, Divisor::include_clip); }});
}

void add_range_proofs(std::vector<Proof>& out) {
  // 4. Window ranges: the clipped range [first, past_last) is exactly the set of taps inside
  // [lo, hi); so every tap an engine touches is inside, and the count is the divisor.
  for (Arithmetic ar : {Arithmetic::integer, Arithmetic::int64, Arithmetic::bitvector})
    add(out,
        Proof{"ranges/taps/" + arithmetic_name(ar),
              cpp_claim(ar,
                        "tap t is in tap_range(start, k, dl, lo, hi) iff 0 <= t < k and lo <= "
                        "start + t*dl < hi; hence every touched tap is inside [lo, hi) (for the "
                        "input: [0, d)) and taps_in_range (the exclude / include_clip divisor) "
                        "counts them"),
              domain_text(ar, "start k dl lo hi t"),
              ar == Arithmetic::integer
                  ? std::string("k, dl >= 1; lo <= hi")
                  : "k, dl in [1, 2^31); |start|, |lo|, |hi| < 2^33; lo <= hi",
              "< 5 s", Expect::proved, "", ar,
              [](Query& q) {
                Builder& b = q.builder();
                const Z3Int start = q.variable("start"), k = q.variable("k"), dl = q.variable("dl");
                const Z3Int lo = q.variable("lo"), hi = q.variable("hi"), t = q.variable("t");
                const Z3Int zero = b.literal(0), one = b.literal(1);
                q.assume(k >= one && dl >= one && lo <= hi);
                if (b.bounded()) {
                  const Z3Int limit = b.literal(max_attribute), wide = b.literal(int64_t{1} << 33);
                  q.assume(k <= limit && dl <= limit && t >= zero && t <= k);
                  q.assume(start <= wide && zero - wide <= start && lo <= wide &&
                           zero - wide <= lo && hi <= wide && zero - wide <= hi);
                }
                const auto r = formulas::tap_range(start, k, dl, lo, hi);
                const Z3Bool in_range = r.first <= t && t < r.past_last;
                const Z3Bool enumerated =
                    zero <= t && t < k && lo <= start + t * dl && start + t * dl < hi;
                q.claim((!in_range || enumerated) && (!enumerated || in_range) &&
                        formulas::taps_in_range(start, k, dl, lo, hi) ==
                            max_of(zero, r.past_last - r.first));
              },
              nullptr});
}

void add_mutant_proofs(std::vector<Proof>& out) {
  // 6. Mutant formulas: each must come back sat, with a counterexample.
  // The int64 obligations are not vacuous: with attributes up to 2^62 the extent overflows.
  add(out, Proof{"mutant/extent-without-attribute-bounds/int64",
                 "the floor extent is computed without overflow when attributes may reach 2^62",
                 domain_text(Arithmetic::int64, "d k s pb pe"),
                 "d, k, s >= 1; pb, pe >= 0; all <= 2^62", "< 1 s", Expect::refuted,
                 "d + pb + pe overflows int64: the 2^31 attribute bound of the model is needed",
                 Arithmetic::int64,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s");
                   const Z3Int pb = q.variable("pb"), pe = q.variable("pe"), one = b.literal(1),
                               zero = b.literal(0);
                   const Z3Int limit = b.literal(int64_t{1} << 62);
                   q.assume(d >= one && k >= one && s >= one && pb >= zero && pe >= zero &&
                            d <= limit && k <= limit && s <= limit && pb <= limit && pe <= limit);
                   q.claim(formulas::output_extent(AxisTerms<Z3Int>{d, k, s, one, pb, pe},
                                                   Rounding::floor) >= one);
                 },
                 nullptr});
  add(out, Proof{"mutant/openvino-document-formula/int",
                 "the OpenVINO AvgPool-1 document's formula as written, H + pb + pe - kernel / "
                 "strides + 1, equals the floor rule",
                 domain_text(Arithmetic::integer, "d k s pb pe"),
                 assumptions(Arithmetic::integer, "dl = 1"), "< 1 s", Expect::refuted,
                 "the division binds to the kernel only (spec/ERRATA.md E1)", Arithmetic::integer,
                 [](Query& q) {
                   const SymbolicAxis a = symbolic_axis(q, false);
                   const Z3Int doc =
                       a.d + a.pb + a.pe - truncating_div(a.k, a.s) + q.builder().literal(1);
                   q.claim(doc == formulas::output_extent(terms(a), Rounding::floor));
                 },
                 [](const Model& m) { return axis_problem(m, Rounding::floor); }});
  add(out,
      Proof{"mutant/stride-zero/int",
            "the floor extent is well defined when strides may be 0 (\"integer values starting "
            "from 0\")",
            domain_text(Arithmetic::integer, "d k s pb pe"), "as extent/floor, but s >= 0", "< 1 s",
            Expect::refuted, "s = 0 divides by zero (spec/ERRATA.md E4)", Arithmetic::integer,
            [](Query& q) {
              Builder& b = q.builder();
              const Z3Int d = q.variable("d"), k = q.variable("k"), s = q.variable("s");
              const Z3Int pb = q.variable("pb"), pe = q.variable("pe"), one = b.literal(1),
                          zero = b.literal(0);
              q.assume(d >= one && k >= one && s >= zero && pb >= zero && pe >= zero &&
                       k <= d + pb + pe);
              const AxisTerms<Z3Int> t{d, k, s, one, pb, pe};
              q.claim(formulas::output_extent(t, Rounding::floor) >= one);
            },
            [](const Model& m) { return axis_problem(m, Rounding::floor); }});
  add(out, Proof{"mutant/ceil-equals-ceil_torch/int",
                 "ceil without the drop rule gives the same extent as ceil_torch",
                 domain_text(Arithmetic::integer, "d k s dl pb pe"),
                 assumptions(Arithmetic::integer), "< 1 s", Expect::refuted,
                 "ceil keeps a last window that starts in the end padding; ceil_torch drops it",
                 Arithmetic::integer,
                 [](Query& q) {
                   const SymbolicAxis a = symbolic_axis(q, true);
                   q.claim(formulas::output_extent(terms(a), Rounding::ceil) ==
                           formulas::output_extent(terms(a), Rounding::ceil_torch));
                 },
                 [](const Model& m) { return axis_problem(m, Rounding::ceil); }});
  add(out, Proof{"mutant/divisor-window-off-by-one/int",
                 "a tap range whose end is one past (ceil((hi - start)/dl) + 1) still holds only "
                 "taps inside [lo, hi)",
                 domain_text(Arithmetic::integer, "start k dl lo hi t"), "k, dl >= 1; lo <= hi",
                 "< 1 s", Expect::refuted, "the off-by-one range touches a tap outside the input",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int start = q.variable("start"), k = q.variable("k"),
                               dl = q.variable("dl");
                   const Z3Int lo = q.variable("lo"), hi = q.variable("hi"), t = q.variable("t");
                   const Z3Int zero = b.literal(0), one = b.literal(1);
                   q.assume(k >= one && dl >= one && lo <= hi);
                   const auto r = formulas::tap_range(start, k, dl, lo, hi);
                   const Z3Int past_last = min_of(k, ceil_div(hi - start, dl) + one);
                   q.claim(!(r.first <= t && t < past_last) ||
                           (lo <= start + t * dl && start + t * dl < hi));
                 },
                 nullptr});
  add(out, Proof{"mutant/divisor-clamped-before-dilation/int",
                 "the exclude-pad divisor counted by clamping the window's span to the input "
                 "first and stepping by the dilation after, ceil((min(d, start + K) - max(0, "
                 "start)) / dl), equals the number of taps inside [0, d)",
                 domain_text(Arithmetic::integer, "start k dl d"), "k, dl, d >= 1", "< 1 s",
                 Expect::refuted,
                 "clamping a start in the padding to 0 moves the taps off the dilation's grid "
                 "(torch-mlir's Torch-to-TOSA and Torch-to-linalg average pools, PRs #3822, "
                 "#3862, #4079); the spec's tap_range steps from the start itself",
                 Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const Z3Int start = q.variable("start"), k = q.variable("k"),
                               dl = q.variable("dl"), d = q.variable("d");
                   const Z3Int zero = b.literal(0), one = b.literal(1);
                   q.assume(k >= one && dl >= one && d >= one);
                   const Z3Int end = start + formulas::effective_kernel(k, dl);
                   const Z3Int clamped =
                       max_of(zero, ceil_div(min_of(d, end) - max_of(zero, start), dl));
                   q.claim(clamped == formulas::taps_in_range(start, k, dl, zero, d));
                 },
                 nullptr});
}

}  // namespace poolspec::proofs
