// StableHLO reduce_window's window arithmetic (spec/include/poolspec/stablehlo_window.hpp,
// instantiated over Z3Int) against enumerating the windows, and against poolspec's floor rule
// where the two models overlap.
#include <fmt/format.h>

#include "poolspec/formulas.hpp"
#include "poolspec/stablehlo_window.hpp"
#include "shape_proofs.hpp"

namespace poolspec::proofs {

namespace {

void add(std::vector<Proof>& out, Proof p) { out.push_back(std::move(p)); }

constexpr const char* axis_domain = "unbounded integers: d bd pl ph w wd s";
constexpr const char* axis_bounds = "d >= 0; bd, w, wd, s >= 1; pl, ph any sign";

// One symbolic axis under the specification's constraints: d >= 0, and base dilation, window
// size, window dilation and stride positive (reduce_window's constraints on its attributes);
// padding of either sign.
stablehlo::WindowAxis<Z3Int> symbolic_window_axis(Query& q) {
  Builder& b = q.builder();
  const stablehlo::WindowAxis<Z3Int> a{q.variable("d"),  q.variable("bd"), q.variable("pl"),
                                       q.variable("ph"), q.variable("w"),  q.variable("wd"),
                                       q.variable("s")};
  const Z3Int zero = b.literal(0), one = b.literal(1);
  q.assume(a.extent >= zero && a.base_dilation >= one && a.window >= one &&
           a.window_dilation >= one && a.stride >= one);
  return a;
}

// Window o covers the padded positions [o s, o s + W) (W the dilated window): it exists when
// that range lies inside [0, P). The windows are o = 0, 1, ... while they fit, so a count n is
// right exactly when window n - 1 fits (or n = 0) and window n does not.
Z3Bool counts_the_fitting_windows(const Z3Int& n, const Z3Int& padded, const Z3Int& span,
                                  const Z3Int& stride) {
  Builder& b = n.builder();
  const Z3Int zero = b.literal(0), one = b.literal(1);
  return n >= zero && (n == zero || (n - one) * stride + span <= padded) &&
         n * stride + span > padded;
}

}  // namespace

void add_stablehlo_proofs(std::vector<Proof>& out) {
  add(out, Proof{"stablehlo/window-count/is-enumeration/int",
                 "reduce_window's num_windows is the number of windows o = 0, 1, ... whose "
                 "dilated span [o s, o s + (w - 1) wd + 1) lies inside the padded, base-dilated "
                 "input: zero (an empty result) when the first does not fit, never negative",
                 axis_domain, axis_bounds, "< 1 s", Expect::proved, "", Arithmetic::integer,
                 [](Query& q) {
                   const auto a = symbolic_window_axis(q);
                   q.claim(counts_the_fitting_windows(
                       stablehlo::window_count(a), stablehlo::padded_input_extent(a),
                       stablehlo::dilated_window_extent(a), a.stride));
                 },
                 nullptr});
  add(out, Proof{"stablehlo/window-count/floor-rule/int",
                 "with unit base dilation and padding >= 0, num_windows is poolspec's floor "
                 "output extent wherever the window fits the padded input (K <= L), and 0 "
                 "otherwise: a StableHLO pooling is the floor rule",
                 axis_domain, "d >= 1; bd = 1; w, wd, s >= 1; pl, ph >= 0", "< 1 s", Expect::proved,
                 "", Arithmetic::integer,
                 [](Query& q) {
                   Builder& b = q.builder();
                   const auto a = symbolic_window_axis(q);
                   const Z3Int zero = b.literal(0), one = b.literal(1);
                   q.assume(a.extent >= one && a.base_dilation == one && a.pad_low >= zero &&
                            a.pad_high >= zero);
                   const formulas::AxisTerms<Z3Int> axis{a.extent,          a.window,  a.stride,
                                                         a.window_dilation, a.pad_low, a.pad_high};
                   const Z3Int n = stablehlo::window_count(a);
                   const Z3Bool fits = formulas::effective_kernel(a.window, a.window_dilation) <=
                                       formulas::padded_extent(axis);
                   q.claim((!fits || n == formulas::output_extent(axis, Rounding::floor)) &&
                           (fits || n == zero));
                 },
                 nullptr});
  add(out, Proof{"stablehlo/mutant-base-dilation-with-trailing-hole/int",
                 "num_windows, with the dilated input taken as d * bd (a hole after the last "
                 "element), still counts the fitting windows (FALSE)",
                 axis_domain, axis_bounds, "< 1 s", Expect::refuted,
                 "the trailing hole is not part of the dilated input: a window that ends on it "
                 "is counted though it reads past the input",
                 Arithmetic::integer,
                 [](Query& q) {
                   const auto a = symbolic_window_axis(q);
                   stablehlo::WindowAxis<Z3Int> with_hole = a;
                   // d * bd = ((d + 1) - 1) * bd: the formula's own text on one more element,
                   // less the final one.
                   with_hole.extent = a.extent + q.builder().literal(1);
                   with_hole.pad_high = a.pad_high - q.builder().literal(1);
                   q.assume(a.extent >= q.builder().literal(1));
                   q.claim(counts_the_fitting_windows(
                       stablehlo::window_count(with_hole), stablehlo::padded_input_extent(a),
                       stablehlo::dilated_window_extent(a), a.stride));
                 },
                 nullptr});
  add(out, Proof{"stablehlo/mutant-count-without-empty-window/int",
                 "floor((P - W) / s) + 1 without is_empty_window still counts the fitting windows "
                 "(FALSE)",
                 axis_domain, axis_bounds, "< 1 s", Expect::refuted,
                 "a window wider than the padded input gives a count below zero, not the empty "
                 "result that constraint C15 states",
                 Arithmetic::integer,
                 [](Query& q) {
                   const auto a = symbolic_window_axis(q);
                   const Z3Int padded = stablehlo::padded_input_extent(a),
                               span = stablehlo::dilated_window_extent(a);
                   q.claim(counts_the_fitting_windows(
                       floor_div(padded - span, a.stride) + q.builder().literal(1), padded, span,
                       a.stride));
                 },
                 nullptr});
}

}  // namespace poolspec::proofs
