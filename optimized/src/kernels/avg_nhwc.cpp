// avg_nhwc: the general NHWC average kernel -- per output row, the window's input rows summed, then
// sums along W, lanes over channels; small windows go by a direct path with no row of sums.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/avg_nhwc.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/row_sums-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- avg_nhwc: per output row, the window's input rows summed, then sums along W --------------
//
// Both passes are free functions with value parameters: written inline in the threads' lambda,
// their loop bounds and pointers would be reloaded from the captures after every store. The tap
// counts 2 and 3 (most layers' windows) get their own copies with the tap loop unrolled.

// Output columns [begin, end) of one row, every one with `taps` in-bounds columns starting at
// column_start(ow) + first: each channel chunk's column sums added in W order, then finished.
template <int kTaps, class D, class S>
HWY_INLINE LinePrefetch SumColumns(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t C,
                                   int64_t begin, int64_t end, int64_t column_step,
                                   int64_t first_column, int64_t tap_step, int64_t count,
                                   const float* HWY_RESTRICT factors, IntRounding rule,
                                   S* HWY_RESTRICT dst, LinePrefetch prefetch) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = kTaps > 0 ? kTaps : count;
  const hn::Rebind<float, D> df;
  for (int64_t ow = begin; ow < end; ++ow) {
    const hn::TFromD<D>* column = sums + (ow * column_step + first_column);
    const auto factor = hn::Set(df, factors[ow]);
    S* out = dst + ow * C;
    int64_t c = 0;
    for (; c + L <= C; c += L) {
      prefetch.Next();
      auto m = hn::LoadU(d, column + c);
      for (int64_t t = 1; t < taps; ++t) m = hn::Add(m, hn::LoadU(d, column + t * tap_step + c));
      StoreAs(FinishAverage(d, m, factor, rule), d, out + c);
    }
    if (c < C) {  // the sums row has L spare lanes, so a whole vector may be read here
      auto m = hn::LoadU(d, column + c);
      for (int64_t t = 1; t < taps; ++t) m = hn::Add(m, hn::LoadU(d, column + t * tap_step + c));
      StorePartial(FinishAverage(d, m, factor, rule), d, out + c, static_cast<size_t>(C - c));
    }
  }
  return prefetch;
}

// SumColumns for 7 taps at stride 1 and dilation 1 over rows of kVectors whole vectors of
// channels: each column sum is loaded once, and the window's sums by doubling stay in registers.
// Per vector of channels, for output ow (column sums c[ow .. ow + 6]): p2[i] = c[i] + c[i + 1],
// p4[i] = p2[i] + p2[i + 2]; the output is (p4[ow] + p2[ow + 4]) + c[ow + 6], and the new column
// forms p2[ow + 5] and p4[ow + 3] for the outputs after it. 1 load and 4 additions per output
// vector, where SumColumns<7> takes 7 and 6 (the 7x7 layer in NHWC, 1 thread, one kernel alone:
// 1.2x faster hot, 1.1x cold).
template <int kVectors, class D, class S>
HWY_NOINLINE LinePrefetch SumSevenColumnsInRegisters(D d, const hn::TFromD<D>* HWY_RESTRICT sums,
                                                     int64_t begin, int64_t end,
                                                     int64_t first_column,
                                                     const float* HWY_RESTRICT factors,
                                                     IntRounding rule, S* HWY_RESTRICT dst,
                                                     LinePrefetch prefetch) {
  constexpr int64_t L = 16, C = kVectors * L;
  const hn::Rebind<float, D> df;
  using V = hn::Vec<D>;
  V last[kVectors], p2[kVectors][2],
      p4[kVectors][3];  // c[ow + 5]; p2[ow + 3], p2[ow + 4]; p4[ow .. ow + 2]
  const hn::TFromD<D>* column = sums + begin * C + first_column;
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) {
    V c[6], pairs[5];
    for (int i = 0; i < 6; ++i) c[i] = hn::LoadU(d, column + i * C + v * L);
    for (int i = 0; i < 5; ++i) pairs[i] = hn::Add(c[i], c[i + 1]);
    for (int i = 0; i < 3; ++i) p4[v][i] = hn::Add(pairs[i], pairs[i + 2]);
    p2[v][0] = pairs[3];
    p2[v][1] = pairs[4];
    last[v] = c[5];
  }
  S* out = dst + begin * C;
  for (int64_t ow = begin; ow < end; ++ow, column += C, out += C) {
    const auto factor = hn::Set(df, factors[ow]);
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      prefetch.Next();
      const V fresh = hn::LoadU(d, column + 6 * C + v * L);
      StoreAs(FinishAverage(d, hn::Add(hn::Add(p4[v][0], p2[v][1]), fresh), factor, rule), d,
              out + v * L);
      const V pair = hn::Add(last[v], fresh);  // p2[ow + 5]
      p4[v][0] = p4[v][1];
      p4[v][1] = p4[v][2];
      p4[v][2] = hn::Add(p2[v][0], pair);  // p4[ow + 3]
      p2[v][0] = p2[v][1];
      p2[v][1] = pair;
      last[v] = fresh;
    }
  }
  return prefetch;
}

template <class D, class S>
HWY_INLINE LinePrefetch SumColumnsAnyCount(D d, const hn::TFromD<D>* sums, int64_t C, int64_t begin,
                                           int64_t end, int64_t column_step, int64_t first_column,
                                           int64_t tap_step, int64_t count, const float* factors,
                                           IntRounding rule, S* dst, LinePrefetch prefetch) {
  const auto sum = [&](auto taps) HWY_ATTR {
    return SumColumns<taps()>(d, sums, C, begin, end, column_step, first_column, tap_step, count,
                              factors, rule, dst, prefetch);
  };
  if (count == 2) return sum(std::integral_constant<int, 2>());
  if (count == 3) return sum(std::integral_constant<int, 3>());
  if (count == 5) return sum(std::integral_constant<int, 5>());
  if (count == 7) return sum(std::integral_constant<int, 7>());
  return sum(std::integral_constant<int, 0>());
}

// ---- avg_nhwc's direct path: windows of 2 or 3 columns at stride 1 or 2, no row of sums ------
//
// Per output row and channel chunk, each input column's sum over the window's rows is formed in a
// register and walks along W: a column two windows share (the window's last is the next one's
// first, or its last two at stride 1) is summed once. No row of sums is stored and read back, so
// each output vector costs one load per window row and stride columns, not a store and kw loads
// more.

// The sum over the window's rows of x[offset .. offset + L) (kRows of them, or `count` when 0).
template <int kRows, class D, class S>
HWY_INLINE hn::Vec<D> ColumnSum(D d, const S* const* HWY_RESTRICT rows, size_t count,
                                int64_t offset) {
  const size_t n = kRows > 0 ? static_cast<size_t>(kRows) : count;
  auto m = LoadAs(d, rows[0] + offset);
  for (size_t r = 1; r < n; ++r) m = hn::Add(m, LoadAs(d, rows[r] + offset));
  return m;
}

// sums[v] = ColumnSum at offset + v * Lanes, for v < kVectors.
template <int kVectors, int kRows, class D, class S>
HWY_INLINE void ColumnSums(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t offset,
                           hn::Vec<D>* sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) sums[v] = ColumnSum<kRows>(d, rows, count, offset + v * L);
}

// finish(sum) stored as S, for sums in 16-bit lanes (the 8-bit types' windows of at most 3x3 taps
// in SlideColumns: |sum| <= 9 * 255): each half widened to 32 bits and finished as FinishAverage
// does, so the quotients are the same.
#if HWY_TARGET != HWY_SCALAR
template <class D16, class S>
HWY_INLINE void StoreAverageOfHalfWords(D16, hn::Vec<D16> sum, float factor, IntRounding rule,
                                        S* HWY_RESTRICT dst) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D16()) ==
                32) {  // one 32-byte store (FinishInt8Vector: packed in registers)
    const auto f = hn::Set(hn::ScalableTag<float>(), factor);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), FinishInt8Vector<S>(sum.raw, f, f, rule));
    return;
  }
#endif
  const hn::Repartition<int32_t, D16> d32;
  const hn::Half<D16> dh;
  const auto f = hn::Set(hn::Rebind<float, decltype(d32)>(), factor);
  StoreAs(FinishAverage(d32, hn::PromoteTo(d32, hn::LowerHalf(dh, sum)), f, rule), d32, dst);
  StoreAs(FinishAverage(d32, hn::PromoteTo(d32, hn::UpperHalf(dh, sum)), f, rule), d32,
          dst + hn::Lanes(d32));
}
#endif

// Output columns [begin, end) of one row, each with kTaps in-bounds columns starting at input
// column ow * kStride - pad, kVectors channel vectors at a time (C >= kVectors * Lanes: the last
// chunk overlaps the one before). The next output row's new rows (`ahead`) are prefetched in
// order, a line per row and input column step, which keeps cold input streaming.
template <int kTaps, int kStride, int kRows, int kVectors, class D, class S>
HWY_NOINLINE void SlideColumns(D d, const S* const* HWY_RESTRICT window_rows, size_t row_count,
                               const S* const* HWY_RESTRICT ahead, size_t ahead_count, int64_t C,
                               int64_t begin, int64_t end, int64_t pad,
                               const float* HWY_RESTRICT factors, IntRounding rule,
                               S* HWY_RESTRICT dst) {
  static_assert(kTaps == 2 || kTaps == 3);
  static_assert(kStride == 1 || kStride == 2);
  constexpr int V = kVectors;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  const WindowRowPointers<kRows, S> pointers(window_rows);
  const S* const* r = pointers.rows;
  uintptr_t prefetch_offset = 0;
  for (int64_t chunk = 0; chunk < C; chunk += V * L) {
    const int64_t c = std::min(chunk, C - V * L);
    const int64_t first = (begin * kStride - pad) * C + c;  // column begin's first tap
    S* out = dst + begin * C + c;
    // `carry`: the columns this window shares with the next (none for 2 taps at stride 2).
    hn::Vec<D> carry0[V], carry1[V], fresh[V], last[V], sum[V];
    ColumnSums<V, kRows>(d, r, row_count, first, carry0);
    if constexpr (kTaps == 3 && kStride == 1)
      ColumnSums<V, kRows>(d, r, row_count, first + C, carry1);
    for (int64_t ow = begin, at = first; ow < end; ++ow, at += kStride * C, out += C) {
      for (size_t a = 0; a < ahead_count; ++a)
        for (int k = 0; k < V * kStride; ++k)
          __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(ahead[a]) +
                                                           prefetch_offset +
                                                           static_cast<uintptr_t>(k) * 64));
      prefetch_offset += V * kStride * 64;
      if constexpr (kTaps == 3 && kStride == 1) {  // columns at, at+1 carried; at+2 new
        ColumnSums<V, kRows>(d, r, row_count, at + 2 * C, fresh);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
          sum[v] = hn::Add(hn::Add(carry0[v], carry1[v]), fresh[v]);
          carry0[v] = carry1[v];
          carry1[v] = fresh[v];
        }
      } else if constexpr (kTaps == 3) {  // stride 2: column at carried; at+1, at+2 new
        ColumnSums<V, kRows>(d, r, row_count, at + C, fresh);
        ColumnSums<V, kRows>(d, r, row_count, at + 2 * C, last);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
          sum[v] = hn::Add(hn::Add(carry0[v], fresh[v]), last[v]);
          carry0[v] = last[v];
        }
      } else if constexpr (kStride == 1) {  // 2 taps: column at carried; at+1 new
        ColumnSums<V, kRows>(d, r, row_count, at + C, fresh);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
          sum[v] = hn::Add(carry0[v], fresh[v]);
          carry0[v] = fresh[v];
        }
      } else {  // 2 taps at stride 2: nothing shared
        ColumnSums<V, kRows>(d, r, row_count, at, carry0);
        ColumnSums<V, kRows>(d, r, row_count, at + C, fresh);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) sum[v] = hn::Add(carry0[v], fresh[v]);
      }
      if constexpr (sizeof(hn::TFromD<D>) == 2) {
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v)
          StoreAverageOfHalfWords(d, sum[v], factors[ow], rule, out + v * L);
      } else {
        const auto factor = hn::Set(df, factors[ow]);
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) StoreAs(FinishAverage(d, sum[v], factor, rule), d, out + v * L);
      }
    }
  }
}

// Output columns [begin, end) of one row at stride 1, each with kTaps in-bounds columns starting
// at input column ow - pad, in memory order: each output pixel's C channels in turn. The window's
// new column is summed over the rows into `ring` (kTaps column sums of C, in L1), and the columns
// it shares with the windows before are read back from there, in the order SlideColumns adds them.
// For rows of more than one channel chunk (C > 4 Lanes), which SlideColumns walks once per chunk,
// touching a few lines of every pixel each time. Inception's 192 channels, 1 thread, as a ratio to
// oneDNN's nChw16c kernel timed in the same process: cold 1.83-2.62 with those passes, 1.53-1.81
// with this; hot 2.12-2.46 and 1.81-2.14.
template <int kTaps, int kRows, class D, class S>
HWY_NOINLINE void SlidePixels(D d, const S* const* HWY_RESTRICT window_rows, size_t row_count,
                              int64_t C, int64_t begin, int64_t end, int64_t pad,
                              const float* HWY_RESTRICT factors, IntRounding rule,
                              hn::TFromD<D>* HWY_RESTRICT ring, S* HWY_RESTRICT dst) {
  static_assert(kTaps == 2 || kTaps == 3);
  using T = hn::TFromD<D>;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  const WindowRowPointers<kRows, S> pointers(window_rows);
  const S* const* r = pointers.rows;
  // slot[0] holds the window's first column, slot[kTaps - 1] receives its last (C >= Lanes: the
  // last chunk overlaps the one before, and stores the same sums again).
  T* slot[kTaps];
  for (int t = 0; t < kTaps; ++t) slot[t] = ring + t * C;
  const int64_t first = (begin - pad) * C;
  for (int t = 0; t + 1 < kTaps; ++t)
    for (int64_t chunk = 0; chunk < C; chunk += L) {
      const int64_t c = std::min(chunk, C - L);
      hn::StoreU(ColumnSum<kRows>(d, r, row_count, first + t * C + c), d, slot[t] + c);
    }
  S* out = dst + begin * C;
  for (int64_t ow = begin, at = first + (kTaps - 1) * C; ow < end; ++ow, at += C, out += C) {
    const auto factor = hn::Set(df, factors[ow]);
    T* const fresh = slot[kTaps - 1];
    for (int64_t chunk = 0; chunk < C; chunk += L) {
      const int64_t c = std::min(chunk, C - L);
      const auto column = ColumnSum<kRows>(d, r, row_count, at + c);
      hn::StoreU(column, d, fresh + c);
      auto sum = hn::LoadU(d, slot[0] + c);
      if constexpr (kTaps == 3) sum = hn::Add(sum, hn::LoadU(d, slot[1] + c));
      StoreAs(FinishAverage(d, hn::Add(sum, column), factor, rule), d, out + c);
    }
    T* const oldest = slot[0];
    for (int t = 0; t + 1 < kTaps; ++t) slot[t] = slot[t + 1];
    slot[kTaps - 1] = oldest;
  }
}

// SlidePixels for f32 rows of kVectors (at most pixel_register_vectors) whole vectors of channels
// and 3 window rows, on AVX-512: what a window shares with the next one stays in registers, not in
// a ring in L1. Per vector of channels: `last`, the column sum of the window's last column, and for
// 3 taps `pair`, the sum of its last two; each output adds the new column to them in SlidePixels'
// order, so the outputs are its bits. The loads and stores per output are then the 3 rows' and the
// output's alone. Inception's layer (192 channels), 1 thread, Zen 5, in one process, against the
// ring: 1.3x faster cold, 1.1x slower hot (the ring's store and loads per vector cost little hot,
// but slow the streams from memory). kVectors is a constant: a loop the compiler leaves rolled
// keeps the arrays in memory, which is the ring again (cold, 1.4x slower than with the constant).
constexpr int pixel_register_vectors = 12;

template <int kTaps, int kRows, int kVectors, class D, class S>
HWY_NOINLINE void SlidePixelsInRegisters(D d, const S* const* HWY_RESTRICT window_rows,
                                         size_t row_count, int64_t begin, int64_t end, int64_t pad,
                                         const float* HWY_RESTRICT factors, IntRounding rule,
                                         S* HWY_RESTRICT dst) {
  static_assert(kTaps == 2 || kTaps == 3);
  constexpr int64_t L = 16, C = kVectors * L;
  const hn::Rebind<float, D> df;
  const WindowRowPointers<kRows, S> pointers(window_rows);
  const S* const* r = pointers.rows;
  hn::Vec<D> last[kVectors], pair[kVectors];
  const int64_t first = (begin - pad) * C;
#pragma GCC unroll 16
  for (int v = 0; v < kVectors; ++v) {
    last[v] = ColumnSum<kRows>(d, r, row_count, first + v * L);
    if constexpr (kTaps == 3) {
      const auto next = ColumnSum<kRows>(d, r, row_count, first + C + v * L);
      pair[v] = hn::Add(last[v], next);
      last[v] = next;
    }
  }
  S* out = dst + begin * C;
  for (int64_t ow = begin, at = first + (kTaps - 1) * C; ow < end; ++ow, at += C, out += C) {
    const auto factor = hn::Set(df, factors[ow]);
#pragma GCC unroll 16
    for (int v = 0; v < kVectors; ++v) {
      const auto column = ColumnSum<kRows>(d, r, row_count, at + v * L);
      hn::Vec<D> sum;
      if constexpr (kTaps == 3) {
        sum = hn::Add(pair[v], column);
        pair[v] = hn::Add(last[v], column);
      } else {
        sum = hn::Add(last[v], column);
      }
      last[v] = column;
      StoreAs(FinishAverage(d, sum, factor, rule), d, out + v * L);
    }
  }
}

// One output column whose `taps` input columns start at element `first` (C >= Lanes).
template <class D, class S>
HWY_INLINE void WindowColumn(D d, const S* const* rows, size_t row_count, int64_t C, int64_t first,
                             int64_t tap_step, int64_t taps, hn::Vec<hn::Rebind<float, D>> factor,
                             IntRounding rule, S* dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t chunk = 0; chunk < C; chunk += L) {
    const int64_t c = std::min(chunk, C - L);
    auto sum = ColumnSum<0>(d, rows, row_count, first + c);
    for (int64_t t = 1; t < taps; ++t)
      sum = hn::Add(sum, ColumnSum<0>(d, rows, row_count, first + t * tap_step + c));
    StoreAs(FinishAverage(d, sum, factor, rule), d, dst + c);
  }
}

// SlideColumns for the window's taps and stride (2 or 3 at 1 or 2, at most 3 rows), with as many
// vectors of channels per pass as C has room for (four at stride 1 where `four_vectors`; the
// four-vector variants are compiled only where kMayTakeFour).
template <bool kMayTakeFour, class D, class S>
HWY_INLINE void SlideColumnsOfShape(D d, const S* const* rows, size_t row_count,
                                    const S* const* ahead, size_t ahead_count, const AxisTable& AW,
                                    int64_t C, int64_t begin, int64_t end, bool four_vectors,
                                    const float* factors, IntRounding rule, S* dst) {
  const int64_t pad = AW.pad_begin;
  const bool two_vectors = C >= 2 * static_cast<int64_t>(hn::Lanes(d));
  const auto slide = [&](auto taps, auto stride) HWY_ATTR {
    if constexpr (kMayTakeFour) {
      if (row_count == 3 && four_vectors && stride() == 1)
        return SlideColumns<taps(), stride(), 3, 4>(d, rows, row_count, ahead, ahead_count, C,
                                                    begin, end, pad, factors, rule, dst);
    }
    if (row_count == 3 && two_vectors)
      SlideColumns<taps(), stride(), 3, 2>(d, rows, row_count, ahead, ahead_count, C, begin, end,
                                           pad, factors, rule, dst);
    else if (row_count == 3)
      SlideColumns<taps(), stride(), 3, 1>(d, rows, row_count, ahead, ahead_count, C, begin, end,
                                           pad, factors, rule, dst);
    else if (two_vectors)
      SlideColumns<taps(), stride(), 0, 2>(d, rows, row_count, ahead, ahead_count, C, begin, end,
                                           pad, factors, rule, dst);
    else
      SlideColumns<taps(), stride(), 0, 1>(d, rows, row_count, ahead, ahead_count, C, begin, end,
                                           pad, factors, rule, dst);
  };
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using Three = std::integral_constant<int, 3>;
  if (AW.kernel == 3) {
    if (AW.stride == 1)
      slide(Three(), One());
    else
      slide(Three(), Two());
  } else {
    if (AW.stride == 1)
      slide(Two(), One());
    else
      slide(Two(), Two());
  }
}

// avg_nhwc's direct path for the interior columns [begin, end), when it applies.
template <class D, class S>
HWY_INLINE bool SlideColumnsIfShaped(D d, const S* const* rows, size_t row_count,
                                     const S* const* ahead, size_t ahead_count, const AxisTable& AW,
                                     int64_t C, int64_t begin, int64_t end, const float* factors,
                                     IntRounding rule, hn::TFromD<D>* ring, S* dst) {
  // Windows of more than three rows (3-D ones) measured slower here than the row of sums.
  if (AW.dilation != 1 || C < static_cast<int64_t>(hn::Lanes(d)) ||
      (AW.stride != 1 && AW.stride != 2) || (AW.kernel != 2 && AW.kernel != 3) || row_count > 3)
    return false;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (sizeof(S) == 1 && std::is_integral_v<S>) {
    // 8-bit inputs: their sums over at most 3x3 taps fit 16-bit lanes, twice the channels per
    // vector (the int8 benchmark layer in NHWC, 1 thread: 1.1x faster hot than 32-bit lanes).
    const hn::ScalableTag<int16_t> d16;
    if (C >= static_cast<int64_t>(hn::Lanes(d16))) {
      SlideColumnsOfShape<false>(d16, rows, row_count, ahead, ahead_count, AW, C, begin, end, false,
                                 factors, rule, dst);
      return true;
    }
  }
#endif
  const int64_t pad = AW.pad_begin;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  // Four vectors of channels per pass along W at stride 1 where the last pass overlaps the one
  // before by little (Inception's 192 channels: 3 passes over each row, not 6; cold, 1.2x faster
  // than two a pass). Six spill registers (1.7x slower); at stride 2 (the int8 layer) four measured
  // 7% slower.
  const bool four_vectors = C % (4 * L) == 0 || C >= 8 * L;
  // More than one chunk, and a ring that takes at most half of L1 (ResNet-style 2048 channels on
  // an 8x8 plane measured 1.25x slower with it): each pixel's channels in turn.
  const bool ring_fits =
      AW.kernel * C * static_cast<int64_t>(sizeof(hn::TFromD<D>)) <= (int64_t{16} << 10);
  if (AW.stride == 1 && C > 4 * L && ring_fits) {
    // f32 rows of 5 .. pixel_register_vectors whole vectors of channels, 3 rows: in registers.
    const int64_t register_vectors =
        std::is_same_v<S, float> && hn::MaxLanes(d) == 16 && C % L == 0 && row_count == 3 ? C / L
                                                                                          : 0;
    const auto slide_pixels = [&](auto taps) HWY_ATTR {
      bool in_registers = false;
      [&]<int... kV>(std::integer_sequence<int, kV...>) HWY_ATTR {
        constexpr int kFewest = 5;
        ((register_vectors == kFewest + kV
              ? (SlidePixelsInRegisters<taps(), 3, kFewest + kV>(d, rows, row_count, begin, end,
                                                                 pad, factors, rule, dst),
                 in_registers = true)
              : false),
         ...);
      }
      (std::make_integer_sequence<int, pixel_register_vectors - 4>());
      if (in_registers)
        return;
      else if (row_count == 3)
        SlidePixels<taps(), 3>(d, rows, row_count, C, begin, end, pad, factors, rule, ring, dst);
      else
        SlidePixels<taps(), 0>(d, rows, row_count, C, begin, end, pad, factors, rule, ring, dst);
    };
    if (AW.kernel == 3)
      slide_pixels(std::integral_constant<int, 3>());
    else
      slide_pixels(std::integral_constant<int, 2>());
    return true;
  }
  SlideColumnsOfShape<true>(d, rows, row_count, ahead, ahead_count, AW, C, begin, end, four_vectors,
                            factors, rule, dst);
  return true;
}

// The input rows of NHWC output row `row` (n, od, oh), in scan order; returns their number.
template <class S>
size_t NhwcWindowRows(const Plan& P, const S* in, int64_t row, const S** sources) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1];
  const int64_t n = row / (AD.out * AH.out), od = (row / AH.out) % AD.out, oh = row % AH.out;
  const int64_t row_length = P.axis[2].in * P.channels;
  size_t count = 0;
  for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)];
       ++td) {
    const int64_t id = AD.start(od) + td * AD.dilation;
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)];
         ++th) {
      const int64_t ih = AH.start(oh) + th * AH.dilation;
      sources[count++] = in + ((n * AD.in + id) * AH.in + ih) * row_length;
    }
  }
  return count;
}

constexpr int64_t nhwc_slice_sums_bytes = int64_t{1} << 19;  // half of L2

// The input rows of NHWC output rows, from the input itself.
template <class S>
struct NhwcInputRows {
  const Plan* plan;
  const S* in;
  size_t operator()(int64_t row, const S** sources) const {
    return NhwcWindowRows(*plan, in, row, sources);
  }
};

// The rows of an NHWC output row's window along H in the plane of its depth window's sums
// (SumSlices over rows of W pixels of C values); none when the depth window is empty.
template <class S>
struct NhwcSliceSumRows {
  const Plan* plan;
  const S* sums;
  size_t operator()(int64_t row, const S** sources) const {
    const AxisTable &AD = plan->axis[0], &AH = plan->axis[1];
    const int64_t od = (row / AH.out) % AD.out, oh = row % AH.out;
    if (AD.count(od) == 0) return 0;
    const int64_t row_length = plan->axis[2].in * plan->channels;
    size_t count = 0;
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)];
         ++th)
      sources[count++] = sums + (AH.start(oh) + th * AH.dilation) * row_length;
    return count;
  }
};

// The k + 3 rows that SumRowQuad reads for output rows row .. row + 3, when each of their windows
// (k rows) is the one before it moved down by one row. `window` and `next` are the windows of
// rows row and row + 1; `later` has room for two more windows.
template <class S, class RowsOf>
bool QuadRows(const S* const* window, size_t k, const S* const* next, size_t next_count,
              const RowsOf& rows_of, int64_t row, const S** later, const S** quad) {
  const auto moved_by_one = [k](const S* const* a, const S* const* b, size_t b_count) {
    return b_count == k && std::equal(a + 1, a + k, b);
  };
  const S** third = later;
  const S** fourth = later + k;
  if (!moved_by_one(window, next, next_count) ||
      !moved_by_one(next, third, rows_of(row + 2, third)) ||
      !moved_by_one(third, fourth, rows_of(row + 3, fourth)))
    return false;
  std::copy(window, window + k, quad);
  quad[k] = next[k - 1];
  quad[k + 1] = third[k - 1];
  quad[k + 2] = fourth[k - 1];
  return true;
}

// Output rows [begin, end) of avg_nhwc, whose window rows `rows_of` gives. `pair_rows`: adjacent
// output rows' windows may share rows (one depth slice, or a plane of slice sums).
template <class S, class Acc, class RowsOf>
void AvgNhwcRows(const Plan& P, const RunArgs& a, const RowsOf& rows_of, bool pair_rows,
                 int64_t begin, int64_t end) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, W = AW.in, OW = AW.out, row_length = W * C;
  const IntRounding rule = P.p.int_rounding;
  S* out = reinterpret_cast<S*>(a.output);
  thread_local std::vector<Acc> sums_tl;
  thread_local std::vector<const S*> sources_tl;
  thread_local std::vector<float> factors_tl;
  thread_local std::vector<int64_t> divisors_tl;
  thread_local std::vector<Acc> ring_tl;
  // 7 columns at stride 1 over one or two vectors of channels: SumSevenColumnsInRegisters. When
  // every output column has a tap in the row (the first: pad_begin < 7; the last: OW <= W +
  // pad_begin), it takes the border columns too, from rows of sums with the padding's columns on
  // either side (at most 6) holding the identity, -0: adding it changes no sum, nor a zero's sign.
  const bool seven = AW.kernel == 7 && AW.stride == 1 && AW.dilation == 1 &&
                     hn::MaxLanes(d) == 16 && (C == L || C == 2 * L);
  const bool seven_borders = seven && AW.pad_begin < AW.kernel && OW <= W + AW.pad_begin;
  const int64_t sums_before = seven_borders ? AW.pad_begin * C : 0;
  const int64_t sums_after =
      seven_borders ? std::max<int64_t>(0, OW + AW.kernel - 1 - AW.pad_begin - W) * C : 0;
  const int64_t sums_stride = sums_before + row_length + sums_after + L;
  // The sums of a group of output rows summed together (one, a pair or a quad): group[j] holds
  // row group_first + j's, for the rows before group_end.
  constexpr int64_t max_group = 4;
  Acc* group[max_group];
  Acc* sums_rows = Scratch(sums_tl, static_cast<size_t>(max_group * sums_stride));
  for (int64_t j = 0; j < max_group; ++j) {
    group[j] = sums_rows + j * sums_stride + sums_before;
    // The padding's columns: the H pass writes [0, row_length) only (C >= L here, so its last
    // vector is a whole one inside the row).
    if (seven_borders) {
      std::fill(group[j] - sums_before, group[j], -Acc{0});
      std::fill(group[j] + row_length, group[j] - sums_before + sums_stride, -Acc{0});
    }
  }
  int64_t group_first = begin, group_end = begin;
  SharedRows<S> split;
  // Per output column, for the rows whose divisor factor is `factors_for`: its divisor and factor.
  float* factors = Scratch(factors_tl, static_cast<size_t>(OW));
  int64_t* divisors = Scratch(divisors_tl, static_cast<size_t>(OW));
  int64_t factors_for = -1;
  Acc* ring = Scratch(ring_tl, static_cast<size_t>(3 * C));  // SlidePixels' column sums
  const size_t window_rows = static_cast<size_t>(AD.kernel * AH.kernel);
  // This row's window, the next row's, and room for two more windows and a quad's rows.
  const S** sources = Scratch(sources_tl, 5 * window_rows + 3);
  const S** next_sources = sources + window_rows;
  const S** later_sources = next_sources + window_rows;
  const S** quad_rows = later_sources + 2 * window_rows;
  size_t next_count = 0;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / (AD.out * AH.out), od = (row / AH.out) % AD.out, oh = row % AH.out;
    const int64_t fd = AD.first[static_cast<size_t>(od)], pd = AD.past[static_cast<size_t>(od)];
    const int64_t fh = AH.first[static_cast<size_t>(oh)], ph = AH.past[static_cast<size_t>(oh)];
    const bool rows_empty = fd >= pd || fh >= ph;
    // The window's input rows, and the last ones of the next output row's window (those it
    // adds, for a window that moves down by at most its height), for the direct path to prefetch.
    size_t row_count = next_count;
    if (row == begin)
      row_count = rows_of(row, sources);
    else
      std::swap(sources, next_sources);
    next_count = row + 1 < end ? rows_of(row + 1, next_sources) : 0;
    const size_t ahead_count =
        std::min(next_count, static_cast<size_t>(std::min(AH.stride, AH.kernel)));
    const S* const* ahead = next_sources + (next_count - ahead_count);
    const int64_t key = RowFactorsKey(P, od, oh);
    if (key != factors_for) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        divisors[ow] = P.divisor(od, oh, ow);
        factors[ow] = AverageFactor<Acc>(divisors[ow] == 0 ? 1 : divisors[ow]);
      }
      factors_for = key;
    }
    S* dst_row = out + row * OW * C;
    const int64_t column_step = AW.stride * C, tap_step = AW.dilation * C;
    // The interior columns in one run (every one has all its taps; their divisor is nonzero
    // unless the row's is, or the override is 0), the clipped ones one at a time.
    const int64_t ib = AW.interior_begin, ie = AW.interior_end;
    const bool interior = !rows_empty && ib < ie && divisors[ib] != 0;
    // A row summed with the ones before it has its sums already (and is never direct: its window
    // has more than 3 rows).
    const bool summed = row < group_end;
    const bool direct = !summed && interior &&
                        SlideColumnsIfShaped(d, sources, row_count, ahead, ahead_count, AW, C, ib,
                                             ie, factors, rule, ring, dst_row);
    // Windows of more than 3 rows (never direct) share rows with the next output rows': four
    // rows, or two, are summed together (7x7: 10 row loads for four output rows, 8 for two, where
    // one at a time takes 7 each).
    if (!summed) {  // a group of its own: none for a direct row or an empty window
      group_first = row;
      group_end = row;
    }
    if (!summed && !direct && row_count > 0) {
      group_end = row + 1;
      if (row_count > 3 && pair_rows && row + 3 < end &&
          QuadRows(sources, row_count, next_sources, next_count, rows_of, row, later_sources,
                   quad_rows)) {
        SumRowQuad(d, quad_rows, row_count, row_length, group);
        group_end = row + 4;
      } else if (row_count > 3 && pair_rows && row + 1 < end &&
                 split.Split(sources, row_count, next_sources, next_count)) {
        SumRowPair(d, split.shared, split.shared_count, split.only_a, split.only_b,
                   split.only_count, row_length, group[0], group[1]);
        group_end = row + 2;
      } else {
        SumRowsAnyCount(d, sources, row_count, row_length, group[0]);
      }
    }
    const Acc* sums = group[row - group_first];
    // While this row's W pass runs: the last row that the output row after this group's rows
    // adds (for the next group, of the same size, the rows it adds one by one); its other new
    // rows (a stride above 1) whole, now. Not for 3-D windows (the rows would be the last depth
    // slice's only), where a whole-row prefetch measured slower.
    LinePrefetch prefetch(sums);  // nothing new
    const int64_t group_size = group_end - group_first;
    if (!direct && pair_rows && row + group_size < end) {
      // For a group of one, those the next row adds: `ahead`, already found.
      const S* const* adds = ahead;
      size_t adds_count = ahead_count;
      if (group_size > 1) {
        const size_t count = rows_of(row + group_size, later_sources);
        adds_count = std::min(count, static_cast<size_t>(std::min(AH.stride, AH.kernel)));
        adds = later_sources + (count - adds_count);
      }
      const int64_t row_bytes = row_length * static_cast<int64_t>(sizeof(S));
      if (adds_count > 0) {
        PrefetchRows(adds, adds_count - 1, 0, row_bytes);
        prefetch = LinePrefetch(adds[adds_count - 1], row_bytes);
      }
    }
    // The columns summed in one run: the interior ones, or all of them.
    const int64_t run_begin = seven_borders ? 0 : ib, run_end = seven_borders ? OW : ie;
    if (interior && !direct && seven && C == 2 * L)
      prefetch = SumSevenColumnsInRegisters<2>(d, sums, run_begin, run_end, -AW.pad_begin * C,
                                               factors, rule, dst_row, prefetch);
    else if (interior && !direct && seven)
      prefetch = SumSevenColumnsInRegisters<1>(d, sums, run_begin, run_end, -AW.pad_begin * C,
                                               factors, rule, dst_row, prefetch);
    else if (interior && !direct)
      prefetch = SumColumnsAnyCount(d, sums, C, ib, ie, column_step, -AW.pad_begin * C, tap_step,
                                    AW.kernel, factors, rule, dst_row, prefetch);
    for (int64_t ow = 0; ow < OW; ++ow) {
      if (ow == run_begin && interior) ow = run_end;
      if (ow >= OW) break;
      const int64_t first = AW.first[static_cast<size_t>(ow)],
                    past = AW.past[static_cast<size_t>(ow)];
      const int64_t divisor = divisors[ow];
      if (rows_empty || first >= past || divisor == 0) {
        for (int64_t c = 0; c < C; ++c)
          WriteEmpty(P, a, n, c, (row * OW + ow) * C + c, divisor == 0);
        continue;
      }
      const int64_t first_column = (first * AW.dilation - AW.pad_begin) * C;
      if (direct)
        WindowColumn(d, sources, row_count, C, ow * column_step + first_column, tap_step,
                     past - first, hn::Set(hn::Rebind<float, D>(), factors[ow]), rule,
                     dst_row + ow * C);
      else
        prefetch = SumColumnsAnyCount(d, sums, C, ow, ow + 1, column_step, first_column, tap_step,
                                      past - first, factors, rule, dst_row, prefetch);
    }
    prefetch.Rest();
  }
}

template <class S, class Acc>
void AvgNhwc(const Plan& P, const RunArgs& a) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t plane_length = AH.in * AW.in * P.channels;
  const S* in = reinterpret_cast<const S*>(a.input);
  // f32, a window over several depth slices, and a plane of sums that stays in L2: each output
  // depth's window of slices is summed into one plane first (SumSlices), read in order, and its
  // rows come from there (the 3-D layer, against its window's rows read from the input: 1.3x
  // faster cold; 1.2x slower hot, the plane is read back from L2; summed and read back in chunks
  // of rows, 1.2x slower cold and 1.1x hot than whole planes). Other storage types would need the
  // kernels below to take rows of the sum type.
  if constexpr (std::is_same_v<S, Acc>) {
    if (AD.kernel > 1 &&
        plane_length * static_cast<int64_t>(sizeof(Acc)) <= nhwc_slice_sums_bytes) {
      ParallelRanges(a.threads, P.batch * AD.out, [&](int64_t begin, int64_t end) HWY_ATTR {
        thread_local std::vector<Acc> plane_tl;
        thread_local std::vector<const S*> slices_tl;
        Acc* plane_sums = LineScratch(plane_tl, static_cast<size_t>(plane_length));
        const S** slices = Scratch(slices_tl, static_cast<size_t>(AD.kernel));
        const hn::ScalableTag<Acc> d;
        for (int64_t unit = begin; unit < end; ++unit) {  // (n, od)
          const int64_t n = unit / AD.out, od = unit % AD.out;
          size_t count = 0;
          for (int64_t td = AD.first[static_cast<size_t>(od)];
               td < AD.past[static_cast<size_t>(od)]; ++td)
            slices[count++] = in + (n * AD.in + AD.start(od) + td * AD.dilation) * plane_length;
          if (count > 0)
            SumSlices(d, slices, count, AH.in, AW.in * P.channels, AW.in * P.channels, plane_sums);
          AvgNhwcRows<S, Acc>(P, a, NhwcSliceSumRows<Acc>{&P, plane_sums}, true, unit * AH.out,
                              (unit + 1) * AH.out);
        }
      });
      return;
    }
  }
  ParallelRanges(a.threads, P.batch * AD.out * AH.out, [&](int64_t begin, int64_t end) HWY_ATTR {
    AvgNhwcRows<S, Acc>(P, a, NhwcInputRows<S>{&P, in}, AD.kernel == 1, begin, end);
  });
}

void RunAvgNhwc(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { AvgNhwc<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunAvgNhwc);

namespace {

Status accepts_avg_nhwc(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  return wants(layout == Layout::channels_last && p.op == Op::avg, "avg in nhwc only");
}

void run_avg_nhwc(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunAvgNhwc)(P, a); }

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo avg_nhwc{
    .name = "avg_nhwc",
    .description = "per output row: the window's rows summed, then sums along W; lanes over C",
    .accepts = accepts_avg_nhwc,
    .preferred = nullptr,
    .run = run_avg_nhwc,
    .scope = {.op = Op::avg, .layout = Layout::channels_last},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
