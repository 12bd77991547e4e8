// The spec's integer rules, written once over a number domain V (see number_domain.hpp): they
// run on int64_t / CheckedInt here and are proved on Z3 in proofs/. Notation of
// docs/semantics.md §0: input extent d, pads pb / pe, kernel k, dilation dl, stride s.
#pragma once

#include "poolspec/number_domain.hpp"
#include "poolspec/problem.hpp"

namespace poolspec::formulas {

template <class V>
struct AxisTerms {
  V extent, kernel, stride, dilation, pad_begin, pad_end;
};

template <class V>
AxisTerms<V> terms_of(const Axis& a) {
  return {V(a.extent), V(a.kernel), V(a.stride), V(a.dilation), V(a.pad_begin), V(a.pad_end)};
}

// "Effective kernel K = (k-1)*dl + 1": the span of a dilated window.
template <class V>
V effective_kernel(V kernel, V dilation) {
  return (kernel - constant_like(kernel, 1)) * dilation + constant_like(kernel, 1);
}

// "Padded extent L = d + pb + pe".
template <class V>
V padded_extent(const AxisTerms<V>& a) {
  return a.extent + a.pad_begin + a.pad_end;
}

// Output extent (docs/semantics.md §0): FLOOR o = floor((L-K)/s) + 1; CEIL o = ceil((L-K)/s) + 1;
// DROP (ceil_torch): "if (o-1)*s >= d + pb then o -= 1" -- a window may not start in the end
// padding. Requires L >= K (validated).
template <class V>
V output_extent(const AxisTerms<V>& a, Rounding rounding) {
  const V one = constant_like(a.extent, 1);
  const V span = padded_extent(a) - effective_kernel(a.kernel, a.dilation);
  if (rounding == Rounding::floor) return floor_div(span, a.stride) + one;
  const V o = ceil_div(span, a.stride) + one;
  if (rounding == Rounding::ceil) return o;
  return select((o - one) * a.stride >= a.extent + a.pad_begin, o - one, o);
}

// "Window j covers padded coordinates [j*s, j*s+K)", i.e. input taps j*s - pb + t*dl.
template <class V>
V window_start(const AxisTerms<V>& a, V j) {
  return j * a.stride - a.pad_begin;
}

// The taps t in [0, k) whose coordinate start + t*dl lies in [lo, hi) form the range
// [first, past_last): first = max(0, ceil((lo - start)/dl)), past_last = min(k, ceil((hi -
// start)/dl)). (Empty when past_last <= first.) These are the clipped ranges an engine loops over.
template <class V>
struct TapRange {
  V first, past_last;
};

template <class V>
TapRange<V> tap_range(V start, V kernel, V dilation, V lo, V hi) {
  const V zero = constant_like(start, 0);
  return {max_of(zero, ceil_div(lo - start, dilation)),
          min_of(kernel, ceil_div(hi - start, dilation))};
}

// The number of those taps.
template <class V>
V taps_in_range(V start, V kernel, V dilation, V lo, V hi) {
  const TapRange<V> r = tap_range(start, kernel, dilation, lo, hi);
  return max_of(constant_like(start, 0), r.past_last - r.first);
}

// The exclude divisor of window j on one axis: taps inside the input [0, d).
template <class V>
V in_bounds_taps(const AxisTerms<V>& a, V j) {
  return taps_in_range(window_start(a, j), a.kernel, a.dilation, constant_like(j, 0), a.extent);
}

// The include_clip divisor of window j on one axis: taps inside the padded extent [-pb, d+pe).
template <class V>
V padded_taps(const AxisTerms<V>& a, V j) {
  return taps_in_range(window_start(a, j), a.kernel, a.dilation, -a.pad_begin,
                       a.extent + a.pad_end);
}

// SAME padding (docs/semantics.md §0 and §2.3): o = ceil(d/s), P = max(0, (o-1)*s + K - d);
// same_upper puts floor(P/2) at the beginning and the odd extra at the end, same_lower the reverse.
template <class V>
struct Pads {
  V begin, end;
};

template <class V>
Pads<V> same_pads(V extent, V kernel, V stride, V dilation, bool upper) {
  const V zero = constant_like(extent, 0);
  const V one = constant_like(extent, 1);
  const V o = ceil_div(extent, stride);
  const V total = max_of(zero, (o - one) * stride + effective_kernel(kernel, dilation) - extent);
  const V small = floor_div(total, constant_like(extent, 2));
  if (upper) return {small, total - small};
  return {total - small, small};
}

}  // namespace poolspec::formulas
