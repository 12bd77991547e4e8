// max_nchw: the general NCHW max kernel, values only -- per output row, the window's rows combined
// whole, then the taps along W. Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/max_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/max_chains-inl.h"
#include "kernels/nchw_rows-inl.h"
#include "kernels/row_sums-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- max_nchw: per output row, the window's rows combined whole, then the taps along W ---------
//
// Values only (no indices). The rows are combined first, then the columns: the maximum is the
// same value in any order, except that -0 and +0 are equal and the spec keeps the first of
// them in scan order (row by row). So an output that comes out as a zero is looked up again:
// its first zero tap in scan order. NaNs are kept out of the chains and noted in magnitude
// lanes, as in MaxChains.

template <bool kPropagate, class D, class S>
HWY_INLINE void MaxRows(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t length,
                        hn::TFromD<D>* HWY_RESTRICT values,
                        hn::TFromD<hn::RebindToSigned<D>>* HWY_RESTRICT magnitudes) {
  const hn::RebindToSigned<D> di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  using Chains = MaxChains<D, kPropagate>;
  for (int64_t next = 0; next < length; next += 2 * L) {
    // The last vectors overlap the ones before when the row is not a multiple of two vectors:
    // they write the same values again.
    const int64_t i = next + 2 * L <= length || length < 2 * L ? next : length - 2 * L;
    const bool whole = i + 2 * L <= length;
    Chains chains(d);
    for (size_t r = 0; r < count; ++r) {
      if (whole) {
        chains.Step(d, 0, LoadAs(d, rows[r] + i));
        chains.Step(d, 1, LoadAs(d, rows[r] + i + L));
      } else {  // a row shorter than two vectors
        chains.Step(d, 0,
                    LoadPartial(d, rows[r] + i, static_cast<size_t>(std::min(L, length - i))));
        if (length - i > L)
          chains.Step(d, 1, LoadPartial(d, rows[r] + i + L, static_cast<size_t>(length - i - L)));
      }
    }
    for (size_t k = 0; k < 2; ++k) {
      hn::StoreU(chains.m[k], d, values + i + static_cast<int64_t>(k) * L);
      hn::StoreU(chains.magnitude[k], di, magnitudes + i + static_cast<int64_t>(k) * L);
    }
  }
}

// Stores the first tap of output column ow that is a zero (-0 or +0), in scan order: the
// window's rows in order (`rows`, from WindowRows), each from its first in-bounds column.
template <class Acc, class S>
void StoreFirstZeroTap(const AxisTable& AW, const S* const* rows, size_t count, int64_t ow,
                       S* dst) {
  const int64_t start = AW.start(ow);
  for (size_t r = 0; r < count; ++r)
    for (int64_t tw = AW.first[static_cast<size_t>(ow)]; tw < AW.past[static_cast<size_t>(ow)];
         ++tw) {
      const S* x = rows[r] + start + tw * AW.dilation;
      if (ScalarLoad<Acc>(x) == 0) return ScalarStore<Acc>(ScalarLoad<Acc>(x), dst);
    }
}

// The maximum of one output vector's taps along W, from a row of combined values and their
// magnitudes (kTaps taps at kStride, dilation 1; or the row's shape when kTaps is 0).
template <int kTaps, int kStride, bool kPropagate, class D>
HWY_INLINE hn::Vec<D> MaxAlongW(D d, const AxisTable& AW, const hn::TFromD<D>* HWY_RESTRICT values,
                                const hn::TFromD<hn::RebindToSigned<D>>* HWY_RESTRICT magnitudes) {
  const hn::RebindToSigned<D> di;
  const int64_t taps = kTaps > 0 ? kTaps : AW.kernel;
  const int64_t stride = kTaps > 0 ? kStride : AW.stride, dilation = kTaps > 0 ? 1 : AW.dilation;
  MaxChains<D, kPropagate> chains(d);
  for (int64_t t = 0; t < taps; ++t) {
    chains.m[0] = FirstIfGreater(d, LoadStrided(d, values + t * dilation, stride), chains.m[0]);
    const auto magnitude = LoadStrided(di, magnitudes + t * dilation, stride);
    chains.magnitude[0] = kPropagate ? hn::Max(chains.magnitude[0], magnitude)
                                     : hn::Min(chains.magnitude[0], magnitude);
  }
  return chains.Result(d, 0);
}

template <bool kPropagate, class D>
HWY_INLINE hn::Vec<D> MaxAlongWAnyShape(D d, const AxisTable& AW, const hn::TFromD<D>* values,
                                        const hn::TFromD<hn::RebindToSigned<D>>* magnitudes) {
  if (AW.dilation == 1 && AW.kernel == 3 && AW.stride == 2)
    return MaxAlongW<3, 2, kPropagate>(d, AW, values, magnitudes);
  if (AW.dilation == 1 && AW.kernel == 3 && AW.stride == 1)
    return MaxAlongW<3, 1, kPropagate>(d, AW, values, magnitudes);
  if (AW.dilation == 1 && AW.kernel == 2 && AW.stride == 2)
    return MaxAlongW<2, 2, kPropagate>(d, AW, values, magnitudes);
  return MaxAlongW<0, 0, kPropagate>(d, AW, values, magnitudes);
}

// ---- max_nchw's direct path: float windows of 2 or 3 columns at stride 2 ----------------------
//
// Output i of a row takes the columns 2i - pad + t: the even or the odd lanes of a pair of
// vectors loaded at an even offset. So an output vector is two pairs of vectors of the window's
// rows combined, with no row stored and read back. NaNs are not noted per lane: the values are
// summed on the side, and a row whose sum is NaN (a NaN tap, or inf + -inf) is done again by
// the general path. Zeros are looked up in scan order, as there. f16 and bf16 are compared as
// f32 (each value exactly) and stored back: the maximum is one of the taps, so exactly again.

#if HWY_TARGET != HWY_SCALAR
constexpr bool max_row_direct = true;

// Columns [offset, offset + L) of a row of W values as f32 lanes, those outside the row -inf:
// none of them is read (the lanes [lo, hi) are inside; LoadRange).
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadColumns(D d, const S* row, int64_t offset, int64_t W) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto lo = static_cast<size_t>(std::clamp<int64_t>(-offset, 0, L)),
             hi = static_cast<size_t>(std::clamp<int64_t>(W - offset, 0, L));
  return hn::IfThenElse(hn::AndNot(hn::FirstN(d, lo), hn::FirstN(d, hi)),
                        LoadRange(d, row, offset, lo, hi),
                        hn::Set(d, -std::numeric_limits<float>::infinity()));
}

// The window's rows combined at columns [offset, offset + L) of a row of W values; columns
// outside the row are -inf (LoadColumns). `sum` gains their sum.
template <int kRows, class D, class S>
HWY_INLINE hn::Vec<D> CombinedRows(D d, const S* const* HWY_RESTRICT rows, size_t count,
                                   int64_t offset, int64_t W, hn::Vec<D>& sum) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const size_t n = kRows > 0 ? static_cast<size_t>(kRows) : count;
  hn::Vec<D> m, s;
  if (HWY_LIKELY(offset >= 0 && offset + L <= W)) {
    m = s = LoadAs(d, rows[0] + offset);
#pragma GCC unroll 4
    for (size_t r = 1; r < n; ++r) {
      const auto v = LoadAs(d, rows[r] + offset);
      m = FirstIfGreater(d, v, m);
      s = hn::Add(s, v);
    }
  } else {
    for (size_t r = 0; r < n; ++r) {
      const auto v = LoadColumns(d, rows[r], offset, W);
      m = r == 0 ? v : FirstIfGreater(d, v, m);
      s = r == 0 ? v : hn::Add(s, v);
    }
  }
  sum = hn::Add(sum, s);
  return m;
}

// `before`'s last lane, then `v`'s lanes 0 .. L - 2: the column of each lane's output one stride
// to the left.
template <class D>
HWY_INLINE hn::Vec<D> UpOneLane(D d, hn::Vec<D> v, hn::Vec<D> before) {
#if HWY_ARCH_X86
  if constexpr (hn::MaxLanes(D()) * 4 == HWY_MAX_BYTES)  // whole vectors of f32
    return LanesFrom<hn::MaxLanes(D()) - 1>(d, before, v);
#endif
  const hn::RebindToSigned<D> di;
  const auto L = static_cast<int32_t>(hn::Lanes(d));
  const auto up =
      hn::IndicesFromVec(d, hn::Max(hn::Sub(hn::Iota(di, 0), hn::Set(di, 1)), hn::Zero(di)));
  return hn::IfThenElse(hn::FirstN(d, 1),
                        hn::TableLookupLanes(before, hn::IndicesFromVec(d, hn::Set(di, L - 1))),
                        hn::TableLookupLanes(v, up));
}

// An output vector's maximum m, clamped to `lowest` and stored; a zero gets its first zero tap in
// scan order (the rows were combined first, which may have picked another zero).
template <class D, class S>
HWY_INLINE void StoreMaxVector(D d, hn::Vec<D> m, bool from_lowest, hn::Vec<D> lowest,
                               const AxisTable& AW, const S* const* window_rows, size_t count,
                               int64_t ow, S* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (from_lowest) m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
  StoreAs(m, d, dst + ow);
  if (!hn::AllFalse(d, hn::Eq(m, hn::Zero(d)))) {
    alignas(64) float lane[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(m, d, lane);
    for (int64_t j = 0; j < L; ++j)
      if (lane[j] == 0) StoreFirstZeroTap<float, S>(AW, window_rows, count, ow + j, dst + ow + j);
  }
}

// One output row of OW >= Lanes values; false (the row partly written) when a NaN may be among
// its taps. `rows` are the window's rows in scan order.
template <int kTaps, int kRows, class D, class S>
HWY_NOINLINE bool MaxRowDirect(D d, const S* const* HWY_RESTRICT window_rows, size_t count,
                               const AxisTable& AW, bool from_lowest, float lowest_float,
                               S* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t W = AW.in, OW = AW.out, pad = AW.pad_begin;
  const S* rows[kRows > 0 ? kRows : 1];
  const S* const* r = window_rows;
  if constexpr (kRows > 0) {  // the row pointers in registers
    for (int i = 0; i < kRows; ++i) rows[i] = window_rows[i];
    r = rows;
  }
  const auto lowest = hn::Set(d, lowest_float);
  auto sum = hn::Zero(d);
  int64_t next = 0;
  if (pad == 1 || kTaps == 2) {
    // The whole vectors from one pair at 2 ow: even lanes column 2i, odd 2i + 1, and the odd
    // lanes of the pair before, one lane up, 2i - 1. Every load is at a multiple of 2L columns:
    // on a cache line when the row is (a load at 2 ow - 2 spans two lines).
    auto before = hn::Set(d, -std::numeric_limits<float>::infinity());  // column -1: the pad
    for (; next + L <= OW; next += L) {
      const auto lo = CombinedRows<kRows>(d, r, count, 2 * next, W, sum);
      const auto hi = CombinedRows<kRows>(d, r, count, 2 * next + L, W, sum);
      const auto even = hn::ConcatEven(d, hi, lo), odd = hn::ConcatOdd(d, hi, lo);
      hn::Vec<D> m;
      if (pad == 1) {
        m = FirstIfGreater(d, even, UpOneLane(d, odd, before));
        if constexpr (kTaps == 3) m = FirstIfGreater(d, odd, m);
      } else {
        m = FirstIfGreater(d, odd, even);
      }
      before = odd;
      StoreMaxVector(d, m, from_lowest, lowest, AW, window_rows, count, next, dst);
    }
  }
  for (; next < OW; next += L) {
    const int64_t ow = next + L <= OW ? next : OW - L;  // the last vector overlaps the one before
    // Pairs at 2 ow - 2 (odd lanes: column 2i - 1) and 2 ow (even: 2i; odd: 2i + 1) for pad 1;
    // at 2 ow (2i, 2i + 1) and 2 ow + 2 (2i + 2) for pad 0.
    const int64_t first = 2 * ow - 2 * pad;
    auto part = hn::Zero(d);
    const auto a_lo = CombinedRows<kRows>(d, r, count, first, W, part);
    const auto a_hi = CombinedRows<kRows>(d, r, count, first + L, W, part);
    hn::Vec<D> m;
    if (pad == 1) {
      m = hn::ConcatOdd(d, a_hi, a_lo);
      const auto b_lo = CombinedRows<kRows>(d, r, count, first + 2, W, part);
      const auto b_hi = CombinedRows<kRows>(d, r, count, first + 2 + L, W, part);
      m = FirstIfGreater(d, hn::ConcatEven(d, b_hi, b_lo), m);
      if constexpr (kTaps == 3) m = FirstIfGreater(d, hn::ConcatOdd(d, b_hi, b_lo), m);
    } else {
      m = FirstIfGreater(d, hn::ConcatOdd(d, a_hi, a_lo), hn::ConcatEven(d, a_hi, a_lo));
      if constexpr (kTaps == 3) {
        const auto b_lo = CombinedRows<kRows>(d, r, count, first + 2, W, part);
        const auto b_hi = CombinedRows<kRows>(d, r, count, first + 2 + L, W, part);
        m = FirstIfGreater(d, hn::ConcatEven(d, b_hi, b_lo), m);
      }
    }
    sum = hn::Add(sum, part);
    StoreMaxVector(d, m, from_lowest, lowest, AW, window_rows, count, ow, dst);
  }
  return hn::AllFalse(d, hn::IsNaN(sum));
}
#else
constexpr bool max_row_direct = false;
#endif

// The storage types MaxRowDirect takes: f32, and f16 and bf16 in f32 lanes.
template <class S, class D>
constexpr bool MaxRowDirectTypes() {
  return max_row_direct && std::is_same_v<hn::TFromD<D>, float> &&
         (std::is_same_v<S, float> || is_f16<S> || is_bf16<S>);
}

// Whether max_nchw's rows go through MaxRowDirect: f32, f16 or bf16, 2 or 3 columns at stride 2
// with pad 0 or 1, no window clipped on the right, and a SIMD target.
template <class S, class D>
bool MaxRowDirectApplies(D d, const AxisTable& AW) {
  (void)d;
  return MaxRowDirectTypes<S, D>() && AW.stride == 2 && AW.dilation == 1 &&
         (AW.kernel == 2 || AW.kernel == 3) && AW.pad_begin <= 1 && AW.interior_end == AW.out &&
         AW.out >= static_cast<int64_t>(hn::Lanes(d)) && AW.first[0] + 1 < AW.past[0];
}

template <class D, class S>
HWY_INLINE bool MaxRowDirectAnyShape(D d, const S* const* rows, size_t count, const AxisTable& AW,
                                     bool from_lowest, float lowest, S* dst) {
  if constexpr (!MaxRowDirectTypes<S, D>()) {
    (void)d, (void)rows, (void)count, (void)AW, (void)from_lowest, (void)lowest, (void)dst;
    return false;
  } else {
    if (AW.kernel == 3)
      return count == 3 ? MaxRowDirect<3, 3>(d, rows, count, AW, from_lowest, lowest, dst)
                        : MaxRowDirect<3, 0>(d, rows, count, AW, from_lowest, lowest, dst);
    return count == 2 ? MaxRowDirect<2, 2>(d, rows, count, AW, from_lowest, lowest, dst)
                      : MaxRowDirect<2, 0>(d, rows, count, AW, from_lowest, lowest, dst);
  }
}

template <class S, class Acc, bool kPropagate>
void MaxNchwWith(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  using Chains = MaxChains<D, kPropagate>;
  const D d;
  const DI di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OW = AW.out, out_rows = P.batch * P.channels * AD.out * AH.out;
  const int64_t pad = AW.pad_begin;
  const int64_t row_length =
      pad + W + 2 * L + (OW + L) * AW.stride + (AW.kernel - 1) * AW.dilation + L;
  constexpr int64_t batch_rows = 4;
  // The rows 4 output rows ahead are prefetched, as in avg_nchw; 8 ahead for MaxRowDirect, which
  // is faster: on the ResNet stem, cold, 1.2x faster than 4 ahead (12, 16 and 32 ahead: the same
  // as 8 to 1.1x slower).
  const bool direct = MaxRowDirectApplies<S>(hn::ScalableTag<Acc>(), AW);
  const int64_t prefetch_rows = direct ? 8 : 4;
  const int64_t row_bytes = W * static_cast<int64_t>(sizeof(S)),
                prefetch_bytes = prefetch_rows * AH.stride * row_bytes;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, out_rows, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> values_tl;
    thread_local std::vector<TI> magnitudes_tl;
    thread_local std::vector<const S*> sources_tl;
    Acc* values = Scratch(values_tl, static_cast<size_t>(batch_rows * row_length));
    TI* magnitudes = Scratch(magnitudes_tl, static_cast<size_t>(batch_rows * row_length));
    // Outside the row: a value no tap is below, and the magnitude that notes nothing.
    const Chains none(d);
    for (int64_t i = 0; i < batch_rows * row_length; i += L) {
      hn::StoreU(none.m[0], d, values + std::min(i, batch_rows * row_length - L));
      hn::StoreU(none.magnitude[0], di, magnitudes + std::min(i, batch_rows * row_length - L));
    }
    const S** sources = Scratch(sources_tl, static_cast<size_t>(AD.kernel * AH.kernel));
    const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
    const float lowest_float = static_cast<float>(lowest_value(P.p.dtype));
    bool done[batch_rows] = {};  // rows MaxRowDirect wrote
    for (int64_t first_row = begin; first_row < end; first_row += batch_rows) {
      const int64_t past_row = std::min(end, first_row + batch_rows);
      const OutputRow first_at(P, first_row);
      OutputRow at = first_at;
      for (int64_t row = first_row; row < past_row;
           ++row, at.Next(P)) {  // 1. each row's input rows combined
        const size_t row_count = WindowRows(P, in, at, sources);
        if (row_count == 0) continue;  // written as empty below
        // As in avg_nchw; MaxRowDirect's rows only those the next output row adds (the window's
        // last).
        const size_t shared =
            direct ? row_count - std::min(row_count, static_cast<size_t>(AH.stride)) : 0;
        PrefetchRows(sources + shared, row_count - shared, prefetch_bytes, row_bytes);
        if (direct && MaxRowDirectAnyShape(d, sources, row_count, AW, from_lowest, lowest_float,
                                           out + row * OW)) {
          done[row - first_row] = true;
          continue;
        }
        done[row - first_row] = false;
        const int64_t offset = (row - first_row) * row_length + pad;
        MaxRows<kPropagate>(d, sources, row_count, W, values + offset, magnitudes + offset);
        hn::StoreU(none.m[0], d,
                   values + offset + W);  // MaxRows' last vector may have written past W
        hn::StoreU(none.magnitude[0], di, magnitudes + offset + W);
        if (W < 2 * L) {
          hn::StoreU(none.m[0], d, values + offset + W + L);
          hn::StoreU(none.magnitude[0], di, magnitudes + offset + W + L);
        }
      }
      at = first_at;
      for (int64_t row = first_row; row < past_row; ++row, at.Next(P)) {  // 2. the taps along W
        const int64_t plane = at.plane, od = at.od, oh = at.oh;
        const int64_t n = plane / P.channels, c = plane % P.channels;
        if (AD.count(od) == 0 || AH.count(oh) == 0) {
          for (int64_t ow = 0; ow < OW; ++ow) WriteEmpty(P, a, n, c, row * OW + ow, true);
          continue;
        }
        if (done[row - first_row]) continue;
        const Acc* row_values = values + (row - first_row) * row_length;
        const TI* row_magnitudes = magnitudes + (row - first_row) * row_length;
        S* dst = out + row * OW;
        for (int64_t next = 0; next < OW; next += L) {
          const int64_t ow = next + L <= OW || OW < L ? next : OW - L;  // as in SumAlongW
          auto m = MaxAlongWAnyShape<kPropagate>(d, AW, row_values + ow * AW.stride,
                                                 row_magnitudes + ow * AW.stride);
          if (from_lowest) m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
          const int64_t count = std::min(L, OW - ow);
          if (count == L)
            StoreAs(m, d, dst + ow);
          else
            StorePartial(m, d, dst + ow, static_cast<size_t>(count));
          if constexpr (std::is_floating_point_v<Acc>) {
            if (!hn::AllFalse(d, hn::Eq(m, hn::Zero(d)))) {
              // A zero: the first zero tap in scan order (the spec's first maximum).
              alignas(64) Acc lane[HWY_MAX_BYTES / sizeof(Acc)];
              hn::Store(m, d, lane);
              const size_t row_count = WindowRows(P, in, at, sources);
              for (int64_t j = 0; j < count; ++j)
                if (lane[j] == 0)
                  StoreFirstZeroTap<Acc>(AW, sources, row_count, ow + j, dst + ow + j);
            }
          }
        }
        for (const int64_t ow : AW.empty) WriteEmpty(P, a, n, c, row * OW + ow, true);
      }
    }
  });
}

// ---- max_nchw at storage width: i8 and u8, stride 1 or 2 along W ------------------------------
//
// Integers have no NaN and one zero, so their maximum is the same in any order, and a lane of the
// storage type holds any of them: the window's rows are combined whole, 64 to an AVX-512 vector
// (not the 16 of the int32 compute type), then the taps along W are read from the combined row,
// two vectors deinterleaved at stride 2 (max_nchw_at_storage_width: larger strides would gather
// lane by lane, as gathers have no 8-bit lanes, and take MaxNchwWith). The combined row's columns
// outside the input hold the type's minimum, which the maximum of a window with an in-bounds tap
// ignores; the windows with none are written as empty.

template <class S>
void MaxNchwAtStorageWidth(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<S>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OW = AW.out, out_rows = P.batch * P.channels * AD.out * AH.out;
  // The padded row, and past it every column the last output vector's strided loads read.
  const int64_t row_length =
      AW.pad_begin + W + 2 * L + (OW + L) * AW.stride + (AW.kernel - 1) * AW.dilation + L;
  const int64_t row_bytes = W * static_cast<int64_t>(sizeof(S)),
                prefetch_bytes = 4 * AH.stride * row_bytes;  // 4 output rows ahead, as above
  const auto none = hn::Set(d, std::numeric_limits<S>::min());
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  // The rows of `batch_rows` output rows are combined before any is read back along W: read at
  // once, a combined row's shifted loads would each span two of its stores and wait for them to
  // reach the cache (the u8 ResNet stem, hot, 1 thread: 1.25x slower one row at a time; 2 or 4
  // rows at a time, the same as 8).
  constexpr int64_t batch_rows = 8;
  ParallelRanges(a.threads, out_rows, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<S> values_tl;
    thread_local std::vector<const S*> sources_tl;
    S* all_values = Scratch(values_tl, static_cast<size_t>(batch_rows * row_length));
    for (int64_t i = 0; i < batch_rows * row_length; i += L)
      hn::StoreU(none, d, all_values + std::min(i, batch_rows * row_length - L));
    const S** sources = Scratch(sources_tl, static_cast<size_t>(AD.kernel * AH.kernel));
    bool empty[batch_rows] = {};  // rows written as empty in step 1
    for (int64_t first_row = begin; first_row < end; first_row += batch_rows) {
      const int64_t past_row = std::min(end, first_row + batch_rows);
      const OutputRow first_at(P, first_row);
      OutputRow at = first_at;
      for (int64_t row = first_row; row < past_row; ++row, at.Next(P)) {
        // 1. The window's rows combined.
        const size_t count = WindowRows(P, in, at, sources);
        empty[row - first_row] = count == 0;
        if (count == 0) {  // an empty depth or height window
          WriteEmptyRow(P, a, at, row);
          continue;
        }
        PrefetchRows(sources, count, prefetch_bytes, row_bytes);
        S* values = all_values + (row - first_row) * row_length + AW.pad_begin;  // column 0
        if (W < L) {  // loaded and stored partly: the columns past W keep the minimum
          const auto n = static_cast<size_t>(W);
          hn::Vec<D> m = LoadPartial(d, sources[0], n);
          for (size_t r = 1; r < count; ++r) m = hn::Max(m, LoadPartial(d, sources[r], n));
          StorePartial(m, d, values, n);
        } else {  // whole vectors, the last overlapping the one before
          for (int64_t next = 0; next < W; next += L) {
            const int64_t i = std::min(next, W - L);
            hn::Vec<D> m = hn::LoadU(d, sources[0] + i);
            for (size_t r = 1; r < count; ++r) m = hn::Max(m, hn::LoadU(d, sources[r] + i));
            hn::StoreU(m, d, values + i);
          }
        }
      }
      at = first_at;
      for (int64_t row = first_row; row < past_row; ++row, at.Next(P)) {
        // 2. The taps along W: output ow's first tap is column ow * stride - pad, at ow * stride
        // in the padded row.
        if (empty[row - first_row]) continue;
        const S* row_values = all_values + (row - first_row) * row_length;
        S* dst = out + row * OW;
        for (int64_t next = 0; next < OW; next += L) {
          const int64_t ow = next + L <= OW || OW < L ? next : OW - L;
          const S* taps = row_values + ow * AW.stride;
          hn::Vec<D> m = LoadStrided(d, taps, AW.stride);
          for (int64_t t = 1; t < AW.kernel; ++t)
            m = hn::Max(m, LoadStrided(d, taps + t * AW.dilation, AW.stride));
          // No clamp for max_start=lowest: an integer dtype's lowest value is its minimum.
          const int64_t stored = std::min(L, OW - ow);
          if (stored == L)
            hn::StoreU(m, d, dst + ow);
          else
            StorePartial(m, d, dst + ow, static_cast<size_t>(stored));
        }
        for (const int64_t ow : AW.empty)
          WriteEmpty(P, a, at.plane / P.channels, at.plane % P.channels, row * OW + ow, true);
      }
    }
  });
}

template <class S, class Acc>
void MaxNchw(const Plan& P, const RunArgs& a) {
  if constexpr (sizeof(S) == 1)
    if (max_nchw_at_storage_width(P.p)) return MaxNchwAtStorageWidth<S>(P, a);
  ForNanRule<Acc>(
      P, [&](auto propagate) HWY_ATTR { MaxNchwWith<S, Acc, decltype(propagate)::value>(P, a); });
}

void RunMaxNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { MaxNchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunMaxNchw);

namespace {

Status accepts_max_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::max, "max in nchw only"); !s)
    return s;
  if (p.indices != Indices::none) return Error{"max with indices: values only"};
  return row_scratch_limit(p);
}

void run_max_nchw(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunMaxNchw)(P, a); }

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo max_nchw{
    .name = "max_nchw",
    .description =
        "max values only, per output row: the window's rows combined whole (lanes along W), "
        "then its taps along W; an output that comes out zero is looked up again (the first "
        "zero in scan order)",
    .accepts = accepts_max_nchw,
    .preferred = nullptr,
    .run = run_max_nchw,
    .scope = {.op = Op::max, .layout = Layout::channels_first},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
