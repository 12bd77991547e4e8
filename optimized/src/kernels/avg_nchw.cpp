// avg_nchw: the general NCHW average kernel -- per output row, the window's rows summed whole, then
// its taps along W. Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/avg_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/nchw_rows-inl.h"
#include "kernels/row_sums-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- avg_nchw: per output row, the window's input rows summed, then taps along W --------------
//
// In NCHW a plane's rows are contiguous, so the window's rows are summed whole into a row of
// sums, and each output vector along W adds its kw taps from that row (strided loads for a
// stride above 1). The row of sums has the problem's padding on both sides as -0, the exact
// additive identity, so the border windows need no case of their own.

// dst[ow] = finish(sum over t < taps of sums[ow * stride + t * dilation]), for ow < out_w.
template <int kTaps, class D, class S>
HWY_INLINE void SumAlongW(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w,
                          int64_t stride, int64_t dilation, int64_t taps_w,
                          const float* HWY_RESTRICT factors, IntRounding rule,
                          S* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = kTaps > 0 ? kTaps : taps_w;
  const hn::Rebind<float, D> df;
  int64_t done = 0;
  for (; done + 2 * L <= out_w; done += 2 * L) {  // two chains of additions at a time
    const hn::TFromD<D>* first = sums + done * stride;
    const hn::TFromD<D>* second = first + L * stride;
    auto m0 = LoadStrided(d, first, stride), m1 = LoadStrided(d, second, stride);
    for (int64_t t = 1; t < taps; ++t) {
      m0 = hn::Add(m0, LoadStrided(d, first + t * dilation, stride));
      m1 = hn::Add(m1, LoadStrided(d, second + t * dilation, stride));
    }
    StoreAs(FinishAverage(d, m0, hn::LoadU(df, factors + done), rule), d, dst + done);
    StoreAs(FinishAverage(d, m1, hn::LoadU(df, factors + done + L), rule), d, dst + done + L);
  }
  for (int64_t next = done; next < out_w; next += L) {
    // A last partial vector is the last whole one when there is one: it overlaps the one before
    // and writes the same values again.
    const int64_t ow = next + L <= out_w || out_w < L ? next : out_w - L;
    const hn::TFromD<D>* first = sums + ow * stride;
    auto m = LoadStrided(d, first, stride);
    for (int64_t t = 1; t < taps; ++t) m = hn::Add(m, LoadStrided(d, first + t * dilation, stride));
    m = FinishAverage(d, m, hn::LoadU(df, factors + ow), rule);
    if (ow + L <= out_w)
      StoreAs(m, d, dst + ow);
    else
      StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool unit_stride_w_by_pairs = true;

// SumAlongW for stride 1 and dilation 1 on AVX-512, for at most L + 1 taps: dst[ow] =
// finish(sum over t < taps of sums[ow + t]). A tap at a column that is not a multiple of 16 would
// be a load across two cache lines (the 7x7 window: six of its seven taps); here `sums` is 64-byte
// aligned, and each output vector loads one new aligned block: its taps are lanes of the pair of
// blocks (permutes). Reads sums up to round_up(out_w, L) + L.
// kTaps, when nonzero, is `taps` known at compile time: the tap loop is written out, and its lane
// indices are constants (the 7x7 layer, 1 thread, Zen 5, one kernel alone: 1.2x faster hot, 1.1x
// cold, than with `taps` at run time; 7 taps go by doubling, SumSevenAlongWByDoubling below).
template <int kTaps, class D, class S>
HWY_INLINE void SumAlongWByPairs(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w,
                                 int64_t taps, const float* HWY_RESTRICT factors, IntRounding rule,
                                 S* HWY_RESTRICT dst) {
  if constexpr (kTaps > 0) taps = kTaps;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::RebindToSigned<D> di;
  const hn::Rebind<float, D> df;
  const auto first_lanes = hn::Iota(di, 0), one = hn::Set(di, 1);
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  auto b0 = hn::Load(d, sums);
  for (int64_t ow = 0; ow < out_w; ow += L) {
    const auto b1 = hn::Load(d, sums + ow + L);
    // Two chains: taps 0, 2, 4, ... and 1, 3, 5, ...; -0 (or 0) added is exact.
    auto m0 = b0, m1 = identity;
    auto lanes = first_lanes;
    int64_t t = 1;
#pragma GCC unroll 8
    for (; t + 1 < taps; t += 2) {
      lanes = hn::Add(lanes, one);
      m1 = hn::Add(m1, LanesOfPair(d, b0, b1, lanes));
      lanes = hn::Add(lanes, one);
      m0 = hn::Add(m0, LanesOfPair(d, b0, b1, lanes));
    }
    if (t < taps) m1 = hn::Add(m1, LanesOfPair(d, b0, b1, hn::Add(lanes, one)));
    const auto m = FinishAverage(d, hn::Add(m0, m1), hn::Load(df, factors + ow), rule);
    if (ow + L <= out_w)
      StoreAs(m, d, dst + ow);
    else
      StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
    b0 = b1;
  }
}

// SumAlongWByPairs for 7 taps, by doubling: with s the row of sums, p2[i] = s[i] + s[i + 1] and
// p4[i] = p2[i] + p2[i + 2], dst[ow + i] = finish((p4[i] + p2[i + 4]) + s[i + 6]), lanes of the
// pair of aligned blocks at ow (VALIGND). Each block of p2 is formed once, from its block and the
// next, and carried to the next output vector: 4 lane shifts and 4 additions per output vector,
// where the taps one by one take 6 permutes and 7 additions (the 7x7 layer, 1 thread, one kernel
// alone: 1.1x faster hot, the same cold). Reads sums up to round_up(out_w, L) + 2 L.
template <class D, class S>
HWY_INLINE void SumSevenAlongWByDoubling(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w,
                                         const float* HWY_RESTRICT factors, IntRounding rule,
                                         S* HWY_RESTRICT dst) {
  constexpr int64_t L = 16;
  const hn::Rebind<float, D> df;
  auto s0 = hn::Load(d, sums), s1 = hn::Load(d, sums + L);
  auto p0 = hn::Add(s0, LanesFrom<1>(d, s0, s1));
  for (int64_t ow = 0; ow < out_w; ow += L) {
    const auto s2 = hn::Load(d, sums + ow + 2 * L);
    const auto p1 = hn::Add(s1, LanesFrom<1>(d, s1, s2));
    const auto p4 = hn::Add(p0, LanesFrom<2>(d, p0, p1));
    const auto sum = hn::Add(hn::Add(p4, LanesFrom<4>(d, p0, p1)), LanesFrom<6>(d, s0, s1));
    const auto m = FinishAverage(d, sum, hn::Load(df, factors + ow), rule);
    if (ow + L <= out_w)
      StoreAs(m, d, dst + ow);
    else
      StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
    s0 = s1;
    s1 = s2;
    p0 = p1;
  }
}
#else
constexpr bool unit_stride_w_by_pairs = false;
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool w_taps_in_registers = true;
#else
constexpr bool w_taps_in_registers = false;
#endif
constexpr int64_t register_row_vectors =
    4;  // rows of at most 4 vectors (64 f32) are kept in registers
constexpr int64_t register_row_taps = 8;

// The taps along W of rows short enough to be held in registers (SumRowInRegisters): with stride
// s, the row's vectors split into s phases (lanes of columns = p mod s), and tap t of output
// vector v is the phase (t - pad) mod s, shifted by m = floor((t - pad) / s) lanes: lanes of the
// phase vectors v and v + 1 (m > 0) or v - 1 and v (m < 0), one permute.
struct RegisterTaps {
  int64_t taps = 0, stride = 1, in_vectors = 0, out_vectors = 0;
  int phase[register_row_taps] = {};
  int shift[register_row_taps] = {};

  // Whether the rows of this W axis fit: stride 1 or 2, dilation 1, W and out_w within
  // register_row_vectors vectors, and every shift within a vector.
  static bool Fit(const AxisTable& AW, int64_t L, RegisterTaps* taps) {
    if (!w_taps_in_registers || AW.stride > 2 || AW.dilation != 1 || AW.kernel > register_row_taps)
      return false;
    if (AW.in > register_row_vectors * L || AW.out > register_row_vectors * L) return false;
    RegisterTaps r;
    r.taps = AW.kernel;
    r.stride = AW.stride;
    r.in_vectors = (AW.in + L - 1) / L;
    r.out_vectors = (AW.out + L - 1) / L;
    for (int64_t t = 0; t < AW.kernel; ++t) {
      const int64_t j = t - AW.pad_begin;
      const int64_t phase = ((j % AW.stride) + AW.stride) % AW.stride;
      const int64_t shift = (j - phase) / AW.stride;
      if (shift <= -L || shift >= L) return false;
      r.phase[t] = static_cast<int>(phase);
      r.shift[t] = static_cast<int>(shift);
    }
    *taps = r;
    return true;
  }
};

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// dst[ow] = finish(sum over the window's rows and W taps), for ow < out_w, from `count` rows of at
// most register_row_vectors vectors, each padded with -0 (or 0) to whole vectors. The row's sums
// stay in registers: no row of sums is stored and read back (the 3-D layer hot: 2.9x faster).
// idx[t] are tap t's permute indices: lane + shift, or lane + L + shift for a negative shift.
template <class D, class R, class S>
HWY_NOINLINE void SumRowInRegisters(D d, const R* const* HWY_RESTRICT rows, size_t count,
                                    const RegisterTaps& taps,
                                    const hn::Vec<hn::RebindToSigned<D>>* HWY_RESTRICT idx,
                                    int64_t out_w, const float* HWY_RESTRICT factors,
                                    IntRounding rule, S* HWY_RESTRICT dst) {
  constexpr int64_t kV = register_row_vectors;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  hn::Vec<D> h[kV];
#pragma GCC unroll 4
  for (int64_t v = 0; v < kV; ++v) h[v] = identity;
  for (size_t r = 0; r < count; ++r) {
#pragma GCC unroll 4
    for (int64_t v = 0; v < kV; ++v)
      if (v < taps.in_vectors) h[v] = hn::Add(h[v], LoadAs(d, rows[r] + v * L));
  }
  // phases[p][1 + v]: phase p's vector v; -0 (or 0) outside the row.
  hn::Vec<D> phases[2][kV + 2];
  for (auto& phase : phases)
    for (auto& v : phase) v = identity;
  if (taps.stride == 1) {
#pragma GCC unroll 4
    for (int64_t v = 0; v < kV; ++v) phases[0][1 + v] = h[v];
  } else {
#pragma GCC unroll 2
    for (int64_t v = 0; v < kV / 2; ++v) {
      phases[0][1 + v] = hn::ConcatEven(d, h[2 * v + 1], h[2 * v]);
      phases[1][1 + v] = hn::ConcatOdd(d, h[2 * v + 1], h[2 * v]);
    }
  }
  for (int64_t v = 0; v < taps.out_vectors; ++v) {
    auto m0 = identity, m1 = identity;  // two chains of additions
    for (int64_t t = 0; t < taps.taps; ++t) {
      const hn::Vec<D>* phase = phases[taps.phase[t]] + 1 + v;
      const int shift = taps.shift[t];
      const auto tap = shift == 0  ? phase[0]
                       : shift > 0 ? LanesOfPair(d, phase[0], phase[1], idx[t])
                                   : LanesOfPair(d, phase[-1], phase[0], idx[t]);
      if (t % 2 == 0)
        m0 = hn::Add(m0, tap);
      else
        m1 = hn::Add(m1, tap);
    }
    const auto m = FinishAverage(d, hn::Add(m0, m1), hn::LoadU(df, factors + v * L), rule);
    if ((v + 1) * L <= out_w)
      StoreAs(m, d, dst + v * L);
    else
      StorePartial(m, d, dst + v * L, static_cast<size_t>(out_w - v * L));
  }
}

// One output row of SumShortRows: `count` rows from `row`, `row_step` apart.
template <int kStride, int kTaps, int kPad, class D, class R, class S>
HWY_INLINE void SumShortRow(D d, const R* HWY_RESTRICT row, int64_t row_step, int64_t count,
                            int64_t out_w, const float* HWY_RESTRICT factors, IntRounding rule,
                            S* HWY_RESTRICT dst) {
  constexpr int kV = static_cast<int>(register_row_vectors), kP = kV / kStride;
  constexpr int kL = 16;
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  hn::Vec<D> h[kV];
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v) h[v] = LoadAs(d, row + v * kL);
  for (int64_t r = 1; r < count; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) h[v] = hn::Add(h[v], LoadAs(d, row + r * row_step + v * kL));
  hn::Vec<D> phases[kStride][kP];
#pragma GCC unroll 4
  for (int v = 0; v < kP; ++v) {
    if constexpr (kStride == 1) {
      phases[0][v] = h[v];
    } else {
      phases[0][v] = hn::ConcatEven(d, h[2 * v + 1], h[2 * v]);
      phases[1][v] = hn::ConcatOdd(d, h[2 * v + 1], h[2 * v]);
    }
  }
  const auto phase_at = [&](int p, int v)
                            HWY_ATTR { return v >= 0 && v < kP ? phases[p][v] : identity; };
  const auto tap = [&]<int kT>(int v) HWY_ATTR {
    constexpr int j = kT - kPad, p = ((j % kStride) + kStride) % kStride, shift = (j - p) / kStride;
    static_assert(shift > -kL && shift < kL);
    if constexpr (shift >= 0)
      return LanesFrom<shift>(d, phase_at(p, v), phase_at(p, v + 1));
    else
      return LanesFrom<kL + shift>(d, phase_at(p, v - 1), phase_at(p, v));
  };
  const int64_t out_vectors = (out_w + kL - 1) / kL;
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v) {
    if (v >= out_vectors) break;
    auto m = [&]<int... kT>(std::integer_sequence<int, kT...>) HWY_ATTR {
      auto sum = identity;
      ((sum = hn::Add(sum, tap.template operator()<kT>(v))), ...);
      return sum;
    }
    (std::make_integer_sequence<int, kTaps>());
    m = FinishAverage(d, m, hn::LoadU(df, factors + v * kL), rule);
    if ((v + 1) * kL <= out_w)
      StoreAs(m, d, dst + v * kL);
    else
      StorePartial(m, d, dst + v * kL, static_cast<size_t>(out_w - v * kL));
  }
}

// SumRowInRegisters for one shape of W window, all of it known at compile time, so that every
// vector stays in a register (the general one keeps its phases on the stack and branches per tap:
// 3x slower), over a run of output rows [oh_begin, oh_end) of a plane of sums whose rows are
// padded to register_row_vectors whole vectors, `row_stride` apart, all with the one factor
// table: the row loop is here, not a call per row (the 3-D layer hot: 1.3x faster).
template <int kStride, int kTaps, int kPad, class D, class R, class S>
HWY_NOINLINE void SumShortRows(D d, const R* HWY_RESTRICT plane, int64_t row_stride,
                               const AxisTable& AH, int64_t oh_begin, int64_t oh_end, int64_t out_w,
                               const float* HWY_RESTRICT factors, IntRounding rule,
                               S* HWY_RESTRICT dst) {
  for (int64_t oh = oh_begin; oh < oh_end; ++oh, dst += out_w) {
    const int64_t first = AH.first[static_cast<size_t>(oh)],
                  count = AH.past[static_cast<size_t>(oh)] - first;
    const R* row = plane + (AH.start(oh) + first * AH.dilation) * row_stride;
    SumShortRow<kStride, kTaps, kPad>(d, row, AH.dilation * row_stride, count, out_w, factors, rule,
                                      dst);
  }
}
#endif

// avg_nchw's per-thread scratch, kept between calls, and what it keeps from row to row: a batch
// of rows of sums, the window rows of two output rows, and the factor table of the current row
// divisor.
template <class S, class Acc, class R>
struct AvgNchwScratch : RowFactorTable {
  Acc* sums = nullptr;
  const R** sources = nullptr;
  const R** next_sources = nullptr;
  SharedRows<R> split;
  RegisterTaps register_taps;
  bool in_registers = false;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  hn::Vec<hn::ScalableTag<int32_t>> tap_lanes[register_row_taps];
  // SumShortRows for the W window's shape, when there is one; else SumRowInRegisters, a row at a
  // time.
  void (*short_rows)(hn::ScalableTag<Acc>, const R*, int64_t, const AxisTable&, int64_t, int64_t,
                     int64_t, const float*, IntRounding, S*) = nullptr;
#endif
};

// The geometry avg_nchw's rows share.
struct AvgNchwShape {
  int64_t pad = 0, sums_length = 0, prefetch_bytes = 0, row_bytes = 0;
  bool by_pairs = false;
  bool prefetch = true;
  bool pair_rows =
      false;  // adjacent output rows' windows may share rows: one depth slice, or slice sums
};

template <class D, class S, class Acc, class R>
void InitAvgNchwScratch(D d, const Plan& P, const AvgNchwShape& shape,
                        const RegisterTaps* in_registers, AvgNchwScratch<S, Acc, R>& scratch) {
  thread_local std::vector<Acc> sums_tl;
  thread_local std::vector<const R*> sources_tl;
  thread_local std::vector<float> factors_tl;
  thread_local std::vector<int64_t> empty_tl;
  constexpr int64_t batch_rows = 4;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  scratch.sums = LineScratch(sums_tl, static_cast<size_t>(batch_rows * shape.sums_length));
  const auto identity = hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
  for (int64_t i = 0; i < batch_rows * shape.sums_length; i += L)
    hn::StoreU(identity, d, scratch.sums + std::min(i, batch_rows * shape.sums_length - L));
  const auto window_rows = static_cast<size_t>(AD.kernel * AH.kernel);
  scratch.sources = Scratch(sources_tl, 2 * window_rows);
  scratch.next_sources = scratch.sources + window_rows;
  scratch.Allocate(factors_tl, empty_tl, AW.out, L);
  scratch.in_registers =
      in_registers != nullptr;  // the row's taps in registers, when they fit (RegisterTaps::Fit)
  if (in_registers) scratch.register_taps = *in_registers;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const hn::ScalableTag<int32_t> di;
  for (int64_t t = 0; t < scratch.register_taps.taps; ++t) {
    const int shift = scratch.register_taps.shift[t];
    scratch.tap_lanes[t] =
        hn::Add(hn::Iota(di, 0), hn::Set(di, shift >= 0 ? shift : static_cast<int32_t>(L) + shift));
  }
  if (scratch.in_registers && L == 16) {
    const RegisterTaps& taps = scratch.register_taps;
    if (taps.stride == 2 && taps.taps == 3 && AW.pad_begin == 1)
      scratch.short_rows = SumShortRows<2, 3, 1, D, R, S>;
    if (taps.stride == 2 && taps.taps == 2 && AW.pad_begin == 0)
      scratch.short_rows = SumShortRows<2, 2, 0, D, R, S>;
    if (taps.stride == 1 && taps.taps == 3 && AW.pad_begin == 1)
      scratch.short_rows = SumShortRows<1, 3, 1, D, R, S>;
  }
#endif
}

// Output rows [begin, end) of avg_nchw, whose input rows `rows_of` gives (R: their element type),
// in batches: 1. each row's input rows summed into a row of sums (unless the row is summed in
// registers), 2. the taps along W, finished.
template <class D, class S, class Acc, class R, class RowsOf>
void AvgNchwRows(D d, const Plan& P, const RunArgs& a, const AvgNchwShape& shape,
                 const RowsOf& rows_of, AvgNchwScratch<S, Acc, R>& scratch, int64_t begin,
                 int64_t end) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OW = AW.out;
  const int64_t sums_length = shape.sums_length;
  // Rows are summed in batches, and then read along W: read right after it was stored, a row
  // of sums stalls its unaligned loads (the store buffer cannot forward them).
  constexpr int64_t batch_rows = 4;
  const IntRounding rule = P.p.int_rounding;
  S* out = reinterpret_cast<S*>(a.output);
  Acc* const sums = scratch.sums;
  const R** const sources = scratch.sources;
  const R** const next_sources = scratch.next_sources;
  const auto identity = hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
  // The same taps `prefetch_rows` output rows further down are prefetched: short rows from
  // several depth slices are too many short streams for the hardware prefetchers. With one depth
  // slice, only the rows the window adds as it moves down (its last `stride`): the others were
  // prefetched for earlier rows (7x7 cold: 1.1x faster than prefetching them all).
  const auto new_rows = [&](size_t count) {
    return AD.kernel == 1 ? std::min(count, static_cast<size_t>(AH.stride)) : count;
  };
  for (int64_t first_row = begin; first_row < end; first_row += batch_rows) {
    const int64_t past_row = std::min(end, first_row + batch_rows);
    const OutputRow first_at(P, first_row);
    OutputRow at = first_at;
    for (int64_t row = first_row; row < past_row && !scratch.in_registers;
         ++row, at.Next(P)) {  // 1.
      const size_t row_count = rows_of(at, sources);
      if (row_count == 0) continue;  // written as empty below
      const size_t fresh = new_rows(row_count);
      if (shape.prefetch)
        PrefetchRows(sources + (row_count - fresh), fresh, shape.prefetch_bytes, shape.row_bytes);
      Acc* row_sums = sums + (row - first_row) * sums_length + shape.pad;
      if (shape.pair_rows &&
          row + 1 < past_row) {  // with the next row, when their windows share rows
        OutputRow next_at = at;
        next_at.Next(P);
        const size_t next_count = rows_of(next_at, next_sources);
        if (scratch.split.Split(sources, row_count, next_sources, next_count)) {
          const size_t next_fresh = new_rows(next_count);
          if (shape.prefetch)
            PrefetchRows(next_sources + (next_count - next_fresh), next_fresh, shape.prefetch_bytes,
                         shape.row_bytes);
          const SharedRows<R>& split = scratch.split;
          SumRowPair(d, split.shared, split.shared_count, split.only_a, split.only_b,
                     split.only_count, W, row_sums, row_sums + sums_length);
          hn::StoreU(identity, d, row_sums + W);  // the last vector may have written past W
          hn::StoreU(identity, d, row_sums + sums_length + W);
          ++row;
          at = next_at;
          continue;
        }
      }
      SumRowsAnyCount(d, sources, row_count, W, row_sums);
      hn::StoreU(identity, d, row_sums + W);  // SumRows' last vector may have written past W
    }
    at = first_at;
    for (int64_t row = first_row; row < past_row;
         ++row, at.Next(P)) {  // 2. the taps along W, finished
      const int64_t od = at.od, oh = at.oh;
      if (AD.count(od) == 0 || AH.count(oh) == 0) {
        WriteEmptyRow(P, a, at, row);
        continue;
      }
      UseRowFactors<Acc>(P, od, oh, scratch);
      const float* factors = scratch.factors();
      const Acc* row_sums = sums + (row - first_row) * sums_length;  // from column -pad
      S* dst = out + row * OW;
      if (scratch.in_registers) {
        if constexpr (w_taps_in_registers) {
          const size_t row_count = rows_of(at, sources);
          SumRowInRegisters(d, sources, row_count, scratch.register_taps, scratch.tap_lanes, OW,
                            factors, rule, dst);
        }
      } else if (shape.by_pairs) {
        if constexpr (unit_stride_w_by_pairs) {
          if (AW.kernel == 7)
            SumSevenAlongWByDoubling(d, row_sums, OW, factors, rule, dst);
          else if (AW.kernel == 5)
            SumAlongWByPairs<5>(d, row_sums, OW, AW.kernel, factors, rule, dst);
          else
            SumAlongWByPairs<0>(d, row_sums, OW, AW.kernel, factors, rule, dst);
        }
      } else if (AW.kernel == 2)
        SumAlongW<2>(d, row_sums, OW, AW.stride, AW.dilation, AW.kernel, factors, rule, dst);
      else if (AW.kernel == 3)
        SumAlongW<3>(d, row_sums, OW, AW.stride, AW.dilation, AW.kernel, factors, rule, dst);
      else
        SumAlongW<0>(d, row_sums, OW, AW.stride, AW.dilation, AW.kernel, factors, rule, dst);
      WriteEmptyColumns(P, a, at, row, scratch);
    }
  }
}

// Whether avg_nchw sums each output depth's window of slices into one plane first (SumSlices)
// and takes its rows from there: a window over several depth slices, and a plane of sums that
// stays in L2 with room to spare.
constexpr int64_t slice_sums_bytes = int64_t{1} << 18;

template <class S, class Acc>
void AvgNchw(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OW = AW.out;
  AvgNchwShape shape;
  shape.pad = AW.pad_begin;
  shape.by_pairs =
      unit_stride_w_by_pairs && AW.stride == 1 && AW.dilation == 1 && AW.kernel <= L + 1;
  // A row of sums: column x of the input at pad + x; -0 before and after, far enough for the last
  // vector's strided loads (L lanes, `stride` apart) of its last tap.
  const int64_t sums_extent =
      shape.pad + W + L + (OW + L) * AW.stride + (AW.kernel - 1) * AW.dilation + L;
  // Each row from a cache line for SumAlongWByPairs; otherwise as long as it needs to be (the 3-D
  // layer: rounded up to a multiple of 16, 1.07x slower).
  shape.sums_length = shape.by_pairs ? (sums_extent + L - 1) / L * L : sums_extent;
  constexpr int64_t prefetch_rows = 4;  // measured: 2 and 8 are slower on cold input
  shape.row_bytes = W * static_cast<int64_t>(sizeof(S));
  shape.prefetch_bytes = prefetch_rows * AH.stride * shape.row_bytes;
  const S* in = reinterpret_cast<const S*>(a.input);
  RegisterTaps register_taps;
  const bool in_registers = RegisterTaps::Fit(AW, L, &register_taps);
  // A plane of slice sums: rows of whole vectors; register_row_vectors of them when summed in
  // registers.
  const int64_t row_stride = in_registers ? register_row_vectors * L : (W + L - 1) / L * L;
  const int64_t planes = P.batch * P.channels;
  shape.pair_rows = true;
  if (AD.kernel > 1 && AH.in * row_stride * static_cast<int64_t>(sizeof(Acc)) <= slice_sums_bytes) {
    shape.prefetch = false;  // the window's rows come from the plane of sums, in L1 or L2
    ParallelRanges(a.threads, planes * AD.out, [&](int64_t begin, int64_t end) HWY_ATTR {
      thread_local std::vector<Acc> plane_tl;
      thread_local std::vector<const S*> slices_tl;
      Acc* plane_sums = LineScratch(plane_tl, static_cast<size_t>(AH.in * row_stride));
      const S** slices = Scratch(slices_tl, static_cast<size_t>(AD.kernel));
      AvgNchwScratch<S, Acc, Acc> scratch;
      InitAvgNchwScratch(d, P, shape, in_registers ? &register_taps : nullptr, scratch);
      const SliceSumRows<Acc> rows_of{&AD, &AH, plane_sums, row_stride};
      for (int64_t unit = begin; unit < end; ++unit) {  // (plane, od)
        const int64_t plane = unit / AD.out, od = unit % AD.out;
        const S* plane_in = in + plane * P.in_plane;
        size_t count = 0;
        for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)];
             ++td)
          slices[count++] = plane_in + (AD.start(od) + td * AD.dilation) * AH.in * W;
        if (count > 0) SumSlices(d, slices, count, AH.in, W, row_stride, plane_sums);
        if constexpr (w_taps_in_registers) {
          if (scratch.short_rows && count > 0) {
            // Runs of rows with one factor table and no empty output go to SumShortRows; the
            // others (borders, empty windows) a row at a time, as any other.
            S* out = reinterpret_cast<S*>(a.output) + unit * AH.out * OW;
            for (int64_t oh = 0; oh < AH.out;) {
              int64_t past = oh + 1;
              if (AH.count(oh) > 0) {
                UseRowFactors<Acc>(P, od, oh, scratch);
                if (scratch.empty_count() == 0) {
                  const int64_t key = scratch.factors_for();
                  while (past < AH.out && AH.count(past) > 0 && RowFactorsKey(P, od, past) == key)
                    ++past;
                  scratch.short_rows(d, plane_sums, row_stride, AH, oh, past, OW, scratch.factors(),
                                     P.p.int_rounding, out + oh * OW);
                  oh = past;
                  continue;
                }
              }
              AvgNchwRows<D, S>(d, P, a, shape, rows_of, scratch, unit * AH.out + oh,
                                unit * AH.out + past);
              oh = past;
            }
            continue;
          }
        }
        AvgNchwRows<D, S>(d, P, a, shape, rows_of, scratch, unit * AH.out, (unit + 1) * AH.out);
      }
    });
    return;
  }
  shape.pair_rows =
      AD.kernel == 1;  // paired across depth slices, the 3-D layer measured 1.45x slower
  ParallelRanges(a.threads, planes * AD.out * AH.out, [&](int64_t begin, int64_t end) HWY_ATTR {
    AvgNchwScratch<S, Acc, S> scratch;
    InitAvgNchwScratch(d, P, shape, nullptr, scratch);
    AvgNchwRows<D, S>(d, P, a, shape, InputWindowRows<S>{&P, in}, scratch, begin, end);
  });
}

void RunAvgNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { AvgNchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunAvgNchw);

namespace {

Status accepts_avg_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s)
    return s;
  return row_scratch_limit(p);
}

}  // namespace

void run_avg_nchw(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunAvgNchw)(P, a); }

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo avg_nchw{
    .name = "avg_nchw",
    .description =
        "per output row: the window's rows summed whole (lanes along W), then its taps along W "
        "from that row of sums, padded with -0",
    .accepts = accepts_avg_nchw,
    .preferred = nullptr,
    .run = run_avg_nchw,
    .scope = {.op = Op::avg, .layout = Layout::channels_first},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
