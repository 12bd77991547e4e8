// avg_int8_nchw: i8 and u8 rows of up to 64 values, summed in 16-bit lanes -- per output row, the
// window's rows summed, then each tap along W picked from the sums by a permute (AVX-512) or a lane
// shift (AVX2 and SSE4, stride 1 or 2). Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/avg_int8_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include <array>

#include "kernels/nchw_rows-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- avg_int8_nchw: i8 and u8 rows of up to 64 values, summed in 16-bit lanes -------------
//
// A row of at most int8_row_limit (64) bytes is one 512-bit load. Widened, the window's rows add
// up in two vectors of 32 16-bit lanes, the even columns and the odd ones: exactly, since a
// window of at most int8_window_limit (128) taps sums to at most 128 * 255 = 32640 in magnitude.
// Output lane j's tap t is column "j*s - pb + t*dl" of that pair, one VPERMT2W, zeroed where the
// tap is not one of the output's in-bounds taps [first[j], past[j]) ("T_sum" sums those alone).
// avg_nchw sums the same rows in 32-bit lanes, 16 to a vector, and stores and reloads a row of
// sums; blocked_nchw transposes 16 planes there and back. The int8 benchmark layer (56x56
// planes, 3x3 at stride 2), 1 thread, Zen 5: blocked_nchw 0.30-0.32 ms cold, 0.23-0.25 hot; this
// 0.10 cold, 0.08 hot.

// The window's input rows of one output row: `depths` slices `depth_step` apart, each with `rows`
// rows `row_step` apart, from `first` (scan order: depth, then row), in an input that ends at
// `end`.
template <class S>
struct Int8WindowRows {
  const S* first;
  int64_t depths, depth_step, rows, row_step;
  const S* end;
};

#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
constexpr uintptr_t kInt8PrefetchBytes = 4096;  // see SumInt8Rows
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr int64_t int8_stride_limit = int8_row_limit;  // any stride: the taps are permutes

// Tap t of output vector v (outputs 32v .. 32v + 31): lanes[t][v] are its columns' lanes in the
// row's (even, odd) vector pair, present[t][v] the outputs that have the tap.
struct Int8RowTaps {
  int64_t taps = 0, out_vectors = 0;
  std::vector<int16_t> lanes;      // 32 at [(t * 2 + v) * 32]
  std::vector<__mmask32> present;  // [t * 2 + v]

  void Build(const AxisTable& AW) {
    taps = AW.kernel;
    out_vectors = (AW.out + 31) / 32;
    lanes.assign(static_cast<size_t>(2 * taps * 32), 0);
    present.assign(static_cast<size_t>(2 * taps), 0);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t v = 0; v < out_vectors; ++v) {
        const size_t k = static_cast<size_t>(t * 2 + v);
        int16_t* columns = lanes.data() + k * 32;
        __mmask32 mask = 0;
        for (int64_t i = 0; i < 32; ++i) {
          const int64_t j = v * 32 + i;
          if (j >= AW.out || t < AW.first[static_cast<size_t>(j)] ||
              t >= AW.past[static_cast<size_t>(j)])
            continue;
          const int64_t column = AW.start(j) + t * AW.dilation;  // in [0, AW.in): in-bounds
          columns[i] =
              static_cast<int16_t>(column / 2 + 32 * (column % 2));  // its lane in (even, odd)
          mask |= __mmask32{1} << i;
        }
        present[k] = mask;
      }
  }
};

// The row's 64 bytes as 16-bit lanes: its even columns in `even` (lane i: column 2i), its odd
// ones in `odd` (column 2i + 1), by shifts within each 16-bit lane rather than by widening
// shuffles, which compete with the taps' permutes for the shuffle ports. Bytes past the row are
// read where they are still inside the input (`end`), and summed in lanes no tap selects; the last
// rows of the input are loaded through `row_mask`. On Zen 5 a masked load of a line that is not in
// cache is slow: with every row masked, the int8 benchmark layer, 1 thread, is 4.2-5.5x slower
// cold (hot, the same).
template <class S>
HWY_INLINE void WidenRow(const S* HWY_RESTRICT row, __mmask64 row_mask, const S* end, __m512i& even,
                         __m512i& odd) {
  const __m512i x =
      end - row >= 64 ? _mm512_loadu_si512(row) : _mm512_maskz_loadu_epi8(row_mask, row);
  if constexpr (std::is_signed_v<S>) {
    even = _mm512_srai_epi16(_mm512_slli_epi16(x, 8), 8);
    odd = _mm512_srai_epi16(x, 8);
  } else {
    even = _mm512_and_si512(x, _mm512_set1_epi16(0xff));
    odd = _mm512_srli_epi16(x, 8);
  }
}

// The sum over the window's rows of each column, as WidenRow lays them out (kRows rows of one
// slice when not 0, else the window's slices and rows).
template <int kRows, class S>
HWY_INLINE void SumWindowRows(const Int8WindowRows<S>& window, __mmask64 row_mask, __m512i& even,
                              __m512i& odd) {
  even = _mm512_setzero_si512();
  odd = _mm512_setzero_si512();
  const int64_t depths = kRows > 0 ? 1 : window.depths, rows = kRows > 0 ? kRows : window.rows;
  for (int64_t z = 0; z < depths; ++z) {
#pragma GCC unroll 4
    for (int64_t r = 0; r < rows; ++r) {
      __m512i row_even, row_odd;
      WidenRow(window.first + z * window.depth_step + r * window.row_step, row_mask, window.end,
               row_even, row_odd);
      even = _mm512_add_epi16(even, row_even);
      odd = _mm512_add_epi16(odd, row_odd);
    }
  }
}

HWY_INLINE __mmask32 FirstBytes(int64_t n) {
  return n >= 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
}

// dst[ow] = finish(sum over the window's rows and its W taps), for ow < out_w.
template <class S>
HWY_INLINE void SumInt8Row(const Int8WindowRows<S>& window, __mmask64 row_mask,
                           const Int8RowTaps& taps, int64_t out_w,
                           const float* HWY_RESTRICT factors, IntRounding rule,
                           S* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> df;
  __m512i even, odd;
  SumWindowRows<0>(window, row_mask, even, odd);
  for (int64_t v = 0; v < taps.out_vectors; ++v) {
    __m512i sum = _mm512_setzero_si512();
    for (int64_t t = 0; t < taps.taps; ++t) {
      const size_t k = static_cast<size_t>(t * 2 + v);
      const __m512i columns = _mm512_loadu_si512(taps.lanes.data() + k * 32);
      sum = _mm512_add_epi16(sum,
                             _mm512_maskz_permutex2var_epi16(taps.present[k], even, columns, odd));
    }
    const __m256i q = FinishInt8Vector<S>(sum, hn::LoadU(df, factors + v * 32),
                                          hn::LoadU(df, factors + v * 32 + 16), rule);
    _mm256_mask_storeu_epi8(dst + v * 32, FirstBytes(out_w - v * 32), q);
  }
}

// `count` output rows of at most 32 outputs whose windows are kRows whole rows of one slice and
// kTaps columns, with one factor table and no empty output (a 2-D layer's interior rows), the
// first window's rows from `first`: the taps' columns and masks and the factors stay in
// registers (the int8 benchmark layer, hot, 1 thread: 0.18 ms a row at a time, 0.09 so).
// With 3 rows at stride 2 (window_step = 2 row_step) a window's last row is the next one's first,
// widened once. The output rows are contiguous (dst + i * out_w), so a row with at least 32 bytes
// of the run from its start is stored whole: the bytes past its out_w are the next rows', stored
// after it. A masked byte store took a fifth of the kernel's samples on Zen 5.
template <int kRows, int kTaps, class S>
HWY_NOINLINE void SumInt8Rows(const S* HWY_RESTRICT first, int64_t row_step, int64_t window_step,
                              int64_t count, __mmask64 row_mask, const S* end,
                              const Int8RowTaps& taps, const float* HWY_RESTRICT factors,
                              IntRounding rule, int64_t out_w, S* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> df;
  __m512i columns[kTaps];
  __mmask32 present[kTaps];
  for (int t = 0; t < kTaps; ++t) {
    columns[t] = _mm512_loadu_si512(taps.lanes.data() + t * 2 * 32);
    present[t] = taps.present[static_cast<size_t>(t * 2)];
  }
  const auto factors_lo = hn::LoadU(df, factors), factors_hi = hn::LoadU(df, factors + 16);
  const __mmask32 store = FirstBytes(out_w);
  const bool shares_row = kRows == 3 && window_step == 2 * row_step;
  __m512i shared_even = _mm512_setzero_si512(), shared_odd = _mm512_setzero_si512();
  if (shares_row) WidenRow(first, row_mask, end, shared_even, shared_odd);
  for (int64_t i = 0; i < count; ++i) {
    // Two lines 4 KiB ahead of the window, which moves down 2 rows (at most 128 bytes) an output
    // row: the hardware prefetcher alone keeps too few lines in flight (the int8 benchmark layer,
    // cold: 1.4x faster than without them at 1 thread, 1.3x at 2; hot, the same).
    const uintptr_t ahead =
        reinterpret_cast<uintptr_t>(first + i * window_step) + kInt8PrefetchBytes;
    __builtin_prefetch(reinterpret_cast<const void*>(ahead));
    __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64));
    __m512i even, odd;
    if (shares_row) {
      __m512i middle_even, middle_odd, last_even, last_odd;
      const S* top = first + i * window_step;
      WidenRow(top + row_step, row_mask, end, middle_even, middle_odd);
      WidenRow(top + 2 * row_step, row_mask, end, last_even, last_odd);
      even = _mm512_add_epi16(_mm512_add_epi16(shared_even, middle_even), last_even);
      odd = _mm512_add_epi16(_mm512_add_epi16(shared_odd, middle_odd), last_odd);
      shared_even = last_even;
      shared_odd = last_odd;
    } else {
      SumWindowRows<kRows>(Int8WindowRows<S>{first + i * window_step, 1, 0, kRows, row_step, end},
                           row_mask, even, odd);
    }
    __m512i sum = _mm512_maskz_permutex2var_epi16(present[0], even, columns[0], odd);
    for (int t = 1; t < kTaps; ++t)
      sum =
          _mm512_add_epi16(sum, _mm512_maskz_permutex2var_epi16(present[t], even, columns[t], odd));
    const __m256i q = FinishInt8Vector<S>(sum, factors_lo, factors_hi, rule);
    if ((count - i) * out_w >= 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i * out_w), q);
    else
      _mm256_mask_storeu_epi8(dst + i * out_w, store, q);
  }
}
#elif HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
// Below AVX-512 there is no permute of 16-bit lanes across two vectors; at stride 1 or 2 along W
// the taps are lane shifts instead. The row's columns are split into phases -- at stride 2 the
// even columns and the odd ones (the low and the high byte of each 16-bit lane), at stride 1 one
// phase of every column in order -- and summed over the window's rows in 16-bit lanes. Output j's
// tap t, column j*s - pb + t*dl, is lane j + m of phase p = (t*dl - pb) mod s, where
// m = floor((t*dl - pb) / s): the phase's vectors shifted by m lanes (LanesFrom), one shift for
// every output vector of the row. Columns outside the row are zero lanes (the bytes past it masked
// off, zero vectors around it), so each output sums its in-bounds taps alone ("T_sum"). Other
// strides take avg_nchw's code. The int8 benchmark layer, 1 thread, Zen 5 restricted to AVX2,
// cold: avg_nchw's 32-bit lanes 0.43-0.47 ms; SumInt8RowsByShifts 0.14 (SumInt8RowByShifts, the
// shifts chosen at run time and the phases stored, alone: 0.47).
using Int8Tag = hn::ScalableTag<int16_t>;
constexpr int64_t int8_stride_limit = 2;
constexpr int64_t kInt8Lanes = HWY_MAX_BYTES / 2;              // 16-bit lanes a vector
constexpr int64_t kInt8Vectors = int8_row_limit / kInt8Lanes;  // of a row's values at stride 1
constexpr int64_t kInt8ByteVectors = kInt8Vectors / 2;         // of a row's bytes
constexpr int64_t kInt8Margin = kInt8Vectors + 1;              // zero vectors before and after

// The taps along W of a row of outputs as shifts of its phases, and the phases' storage.
struct Int8RowTaps {
  struct Tap {
    int64_t phase, vector;  // the phase's vectors from `vector` on (before the row's: zero)
    int shift;              // in lanes, 0 .. kInt8Lanes - 1
  };
  static constexpr int64_t slots = kInt8Vectors + 2 * kInt8Margin;  // vectors of a phase
  std::vector<Tap> taps;                                            // the taps that meet the row
  int64_t byte_vectors = 0, out_vectors = 0;
  alignas(HWY_MAX_BYTES) uint8_t last_bytes[HWY_MAX_BYTES];  // 0xff: the last vector's row bytes
  // Phase p's vector v at phases + (p * slots + kInt8Margin + v) * kInt8Lanes; those of no column
  // of the row are zero.
  std::vector<int16_t> phases_storage;
  int16_t* phases = nullptr;

  void Build(const AxisTable& AW) {
    const int64_t stride = AW.stride;
    byte_vectors = (AW.in + 2 * kInt8Lanes - 1) / (2 * kInt8Lanes);
    out_vectors = (AW.out + kInt8Lanes - 1) / kInt8Lanes;
    const int64_t filled = byte_vectors * (stride == 1 ? 2 : 1);  // vectors of each phase
    for (int64_t i = 0; i < HWY_MAX_BYTES; ++i)
      last_bytes[i] = (byte_vectors - 1) * 2 * kInt8Lanes + i < AW.in ? 0xff : 0;
    taps.clear();
    for (int64_t t = 0; t < AW.kernel; ++t) {
      const int64_t c = t * AW.dilation - AW.pad_begin;
      const int64_t p = (c % stride + stride) % stride, m = (c - p) / stride;
      const int64_t q = m >= 0 ? m / kInt8Lanes : -((kInt8Lanes - 1 - m) / kInt8Lanes);  // floor
      // Output vector v reads vectors q + v and q + v + 1 (slots within the margins); a tap
      // with all of them outside the row adds zeros.
      if (q + out_vectors < 0 || q >= filled) continue;
      taps.push_back({p, q, static_cast<int>(m - q * kInt8Lanes)});
    }
    const auto size = static_cast<size_t>(stride * slots * kInt8Lanes);
    phases = LineScratch(phases_storage, size);
    std::fill(phases, phases + size, int16_t{0});
  }
};

// f.operator()<shift>() for the run-time shift in [0, kInt8Lanes).
template <class F, int... kShift>
HWY_INLINE void WithShift(int shift, F&& f, std::integer_sequence<int, kShift...>) {
  (void)((shift == kShift ? (f.template operator()<kShift>(), true) : false) || ...);
}

// 2 * kInt8Lanes quotients in i32 lanes (lo, then hi), each within S's range, as bytes in order.
using Int8QuotientTag = hn::Repartition<int32_t, Int8Tag>;

template <class S>
HWY_INLINE hn::Vec<hn::Rebind<S, Int8Tag> > NarrowToBytes(hn::Vec<Int8QuotientTag> lo,
                                                          hn::Vec<Int8QuotientTag> hi) {
#if HWY_TARGET == HWY_AVX2
  // Per 128-bit half h: words lo[4h .. 4h+3], hi[4h .. 4h+3]; bytes as dwords (lo, hi, lo, hi)
  // of that half; dwords 0, 4, 1, 5 are the 16 bytes in order.
  const __m256i words = _mm256_packs_epi32(lo.raw, hi.raw);
  const __m256i bytes =
      std::is_signed_v<S> ? _mm256_packs_epi16(words, words) : _mm256_packus_epi16(words, words);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0);
  return {_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(bytes, order))};
#else
  const __m128i words = _mm_packs_epi32(lo.raw, hi.raw);  // lo[0 .. 3], hi[0 .. 3]
  return {std::is_signed_v<S> ? _mm_packs_epi16(words, words) : _mm_packus_epi16(words, words)};
#endif
}

// Byte vector b of a row: at stride 2 its even columns added to halves[0][b], its odd ones to
// halves[1][b]; at stride 1 its first kInt8Lanes columns to halves[0][b], its last to
// halves[1][b]. Bytes past the row are read where the input (ending at `end`) holds them, and
// masked off.
template <int kStride, class S>
HWY_INLINE void AddRowHalves(const S* src, const S* end, const Int8RowTaps& row,
                             hn::Vec<Int8Tag> (&halves)[2][kInt8ByteVectors]) {
  constexpr int64_t kBytes = 2 * kInt8Lanes;
  const Int8Tag d16;
  const hn::Repartition<uint8_t, Int8Tag> du8;
#pragma GCC unroll 4
  for (int64_t b = 0; b < kInt8ByteVectors; ++b) {
    if (b >= row.byte_vectors) break;
    const S* at = src + b * kBytes;
    const auto* bytes_at = reinterpret_cast<const uint8_t*>(at);
    auto bytes = end - at >= kBytes ? hn::LoadU(du8, bytes_at)
                                    : LoadPartial(du8, bytes_at, static_cast<size_t>(end - at));
    if (b == row.byte_vectors - 1) bytes = hn::And(bytes, hn::Load(du8, row.last_bytes));
    hn::Vec<Int8Tag> first, second;
    if constexpr (kStride == 2) {
      const auto words = hn::BitCast(d16, bytes);
      if constexpr (std::is_signed_v<S>) {
        first = hn::ShiftRight<8>(hn::ShiftLeft<8>(words));
        second = hn::ShiftRight<8>(words);
      } else {
        const hn::RebindToUnsigned<Int8Tag> du16;
        first = hn::And(words, hn::Set(d16, 0xff));
        second = hn::BitCast(d16, hn::ShiftRight<8>(hn::BitCast(du16, words)));
      }
    } else {
      const hn::Repartition<S, Int8Tag> ds;
      const hn::Rebind<S, Int8Tag> ds_half;
      first = hn::PromoteTo(d16, hn::LowerHalf(ds_half, hn::BitCast(ds, bytes)));
      second = hn::PromoteTo(d16, hn::UpperHalf(ds_half, hn::BitCast(ds, bytes)));
    }
    halves[0][b] = hn::Add(halves[0][b], first);
    halves[1][b] = hn::Add(halves[1][b], second);
  }
}

// dst[v * L + i] = finish(sums[i]) for the outputs of vector v (< out_w); the bytes from dst up
// to dst_end may be written (those past out_w are the next rows', written after).
template <class S>
HWY_INLINE void StoreInt8Outputs(hn::Vec<Int8Tag> sums, int64_t v,
                                 const float* HWY_RESTRICT factors, IntRounding rule, int64_t out_w,
                                 S* HWY_RESTRICT dst, const S* dst_end) {
  constexpr int64_t L = kInt8Lanes;
  const hn::Half<Int8Tag> dh;
  const Int8QuotientTag d32;
  const hn::Rebind<float, Int8QuotientTag> df;
  const hn::Rebind<S, Int8Tag> ds;
  const auto lo = FinishAverage(d32, hn::PromoteTo(d32, hn::LowerHalf(dh, sums)),
                                hn::LoadU(df, factors + v * L), rule);
  const auto hi = FinishAverage(d32, hn::PromoteTo(d32, hn::UpperHalf(dh, sums)),
                                hn::LoadU(df, factors + v * L + L / 2), rule);
  const auto bytes = NarrowToBytes<S>(lo, hi);
  S* to = dst + v * L;
  if (dst_end - to >= L)
    hn::StoreU(bytes, ds, to);
  else
    StorePartial(bytes, ds, to, static_cast<size_t>(out_w - v * L));
}

// dst[ow] = finish(sum over the window's rows and its W taps), for ow < out_w, for any window
// along W: the phases stored, each tap's shift chosen at run time.
template <int kStride, class S>
HWY_NOINLINE void SumInt8RowByShifts(const Int8WindowRows<S>& window, const Int8RowTaps& row,
                                     int64_t out_w, const float* HWY_RESTRICT factors,
                                     IntRounding rule, S* HWY_RESTRICT dst, const S* dst_end) {
  constexpr int64_t L = kInt8Lanes;
  const Int8Tag d16;
  hn::Vec<Int8Tag> halves[2][kInt8ByteVectors];
  for (auto& half : halves)
    for (auto& v : half) v = hn::Zero(d16);
  for (int64_t z = 0; z < window.depths; ++z)
    for (int64_t r = 0; r < window.rows; ++r)
      AddRowHalves<kStride>(window.first + z * window.depth_step + r * window.row_step, window.end,
                            row, halves);
  int16_t* const phases = row.phases;
  constexpr int64_t slots = Int8RowTaps::slots;
#pragma GCC unroll 4
  for (int64_t b = 0; b < kInt8ByteVectors; ++b) {
    if (b >= row.byte_vectors) break;
    if constexpr (kStride == 2) {
      hn::Store(halves[0][b], d16, phases + (kInt8Margin + b) * L);
      hn::Store(halves[1][b], d16, phases + (slots + kInt8Margin + b) * L);
    } else {
      hn::Store(halves[0][b], d16, phases + (kInt8Margin + 2 * b) * L);
      hn::Store(halves[1][b], d16, phases + (kInt8Margin + 2 * b + 1) * L);
    }
  }
  hn::Vec<Int8Tag> sums[kInt8Vectors];
  for (auto& v : sums) v = hn::Zero(d16);
  for (const Int8RowTaps::Tap& tap : row.taps) {
    const int16_t* from = phases + (tap.phase * slots + kInt8Margin + tap.vector) * L;
    WithShift(
        tap.shift,
        [&]<int kShift>() HWY_ATTR {
#pragma GCC unroll 8
          for (int64_t v = 0; v < kInt8Vectors; ++v) {
            if (v >= row.out_vectors) break;
            sums[v] = hn::Add(sums[v], LanesFrom<kShift>(d16, hn::Load(d16, from + v * L),
                                                         hn::Load(d16, from + (v + 1) * L)));
          }
        },
        std::make_integer_sequence<int, static_cast<int>(L)>());
  }
#pragma GCC unroll 8
  for (int64_t v = 0; v < kInt8Vectors; ++v) {
    if (v >= row.out_vectors) break;
    StoreInt8Outputs(sums[v], v, factors, rule, out_w, dst, dst_end);
  }
}

// `count` output rows whose windows are kRows whole rows of one slice and kTaps columns at stride
// kStride from -kPad (dilation 1), with one factor table (a 2-D layer's interior rows), the first
// window's rows from `first`: every tap's phase and shift known at compile time, the phases in
// registers. Output row i is dst + i * out_w; dst_end as in StoreInt8Outputs.
template <int kRows, int kTaps, int kStride, int kPad, class S>
HWY_NOINLINE void SumInt8RowsByShifts(const S* HWY_RESTRICT first, int64_t row_step,
                                      int64_t window_step, int64_t count, const S* end,
                                      const Int8RowTaps& row, const float* HWY_RESTRICT factors,
                                      IntRounding rule, int64_t out_w, S* HWY_RESTRICT dst,
                                      const S* dst_end) {
  constexpr int kL = static_cast<int>(kInt8Lanes);
  constexpr int kPhaseVectors = static_cast<int>(kStride == 1 ? kInt8Vectors : kInt8ByteVectors);
  const Int8Tag d16;
  for (int64_t i = 0; i < count; ++i) {
    // As SumInt8Rows: two lines 4 KiB ahead of the window.
    const uintptr_t ahead =
        reinterpret_cast<uintptr_t>(first + i * window_step) + kInt8PrefetchBytes;
    __builtin_prefetch(reinterpret_cast<const void*>(ahead));
    __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64));
    hn::Vec<Int8Tag> halves[2][kInt8ByteVectors];
    for (auto& half : halves)
      for (auto& v : half) v = hn::Zero(d16);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r)
      AddRowHalves<kStride>(first + i * window_step + r * row_step, end, row, halves);
    const auto phase = [&](int p, int v) HWY_ATTR {
      if (v < 0 || v >= kPhaseVectors) return hn::Zero(d16);
      return kStride == 2 ? halves[p][v] : halves[v % 2][v / 2];
    };
    const auto tap = [&]<int kT>(int v) HWY_ATTR {
      constexpr int c = kT - kPad, p = (c % kStride + kStride) % kStride, m = (c - p) / kStride;
      constexpr int q = m >= 0 ? m / kL : -((kL - 1 - m) / kL);  // floor(m / kL)
      return LanesFrom<m - q * kL>(d16, phase(p, v + q), phase(p, v + q + 1));
    };
#pragma GCC unroll 8
    for (int v = 0; v < static_cast<int>(kInt8Vectors); ++v) {
      if (v >= row.out_vectors) break;
      const auto sums = [&]<int... kT>(std::integer_sequence<int, kT...>) HWY_ATTR {
        auto sum = hn::Zero(d16);
        ((sum = hn::Add(sum, tap.template operator()<kT>(v))), ...);
        return sum;
      }
      (std::make_integer_sequence<int, kTaps>());
      StoreInt8Outputs(sums, v, factors, rule, out_w, dst + i * out_w, dst_end);
    }
  }
}
#endif

template <class S, class Acc>
void AvgInt8Nchw(const Plan& P, const RunArgs& a) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  if constexpr (std::is_integral_v<S>) {
    const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
    if (AW.stride > int8_stride_limit) return run_avg_nchw(P, a);
    const int64_t OW = AW.out;
    const S* in = reinterpret_cast<const S*>(a.input);
    const S* in_end = in + P.batch * P.channels * P.in_plane;
    S* out = reinterpret_cast<S*>(a.output);
    const IntRounding rule = P.p.int_rounding;
#if HWY_TARGET <= HWY_AVX3
    const __mmask64 row_mask = AW.in >= 64 ? ~__mmask64{0} : (__mmask64{1} << AW.in) - 1;
    // The shapes with runs of their own (SumInt8Rows): one slice, rows of at most 32 outputs.
    using Run = void (*)(const S*, int64_t, int64_t, int64_t, __mmask64, const S*,
                         const Int8RowTaps&, const float*, IntRounding, int64_t, S*);
    Run run = nullptr;
    if (AD.kernel == 1 && OW <= 32) {
      if (AH.kernel == 3 && AW.kernel == 3) run = SumInt8Rows<3, 3, S>;
      if (AH.kernel == 2 && AW.kernel == 2) run = SumInt8Rows<2, 2, S>;
    }
#else
    const auto sum_row = AW.stride == 1 ? SumInt8RowByShifts<1, S> : SumInt8RowByShifts<2, S>;
    // The shapes with runs of their own (SumInt8RowsByShifts): one slice, dilation 1 along W.
    using Run = void (*)(const S*, int64_t, int64_t, int64_t, const S*, const Int8RowTaps&,
                         const float*, IntRounding, int64_t, S*, const S*);
    Run run = nullptr;
    if (AD.kernel == 1 && AW.dilation == 1) {
      const auto shape = std::array<int64_t, 4>{AH.kernel, AW.kernel, AW.stride, AW.pad_begin};
      if (shape == std::array<int64_t, 4>{3, 3, 2, 1}) run = SumInt8RowsByShifts<3, 3, 2, 1, S>;
      if (shape == std::array<int64_t, 4>{3, 3, 2, 0}) run = SumInt8RowsByShifts<3, 3, 2, 0, S>;
      if (shape == std::array<int64_t, 4>{2, 2, 2, 0}) run = SumInt8RowsByShifts<2, 2, 2, 0, S>;
      if (shape == std::array<int64_t, 4>{3, 3, 1, 1}) run = SumInt8RowsByShifts<3, 3, 1, 1, S>;
    }
#endif
    ParallelRanges(
        a.threads, P.batch * P.channels * AD.out * AH.out,
        [&](int64_t begin, int64_t end) HWY_ATTR {
          thread_local Int8RowTaps taps;
          thread_local std::vector<float> factors_tl;
          thread_local std::vector<int64_t> empty_tl;
          thread_local std::vector<int64_t> runs;
          taps.Build(AW);
          RowFactorTable scratch;
          scratch.Allocate(factors_tl, empty_tl, OW, 64 - OW);  // the finish reads 64 factors
          // runs[od * AH.out + oh]: the end of the run of rows from oh with whole windows and oh's
          // factor table (oh itself when its window is not whole), the same for every plane.
          runs.clear();
          if (run) {
            runs.resize(static_cast<size_t>(AD.out * AH.out));
            for (int64_t od = 0; od < AD.out; ++od)
              for (int64_t oh = AH.out - 1; oh >= 0; --oh) {
                const size_t at = static_cast<size_t>(od * AH.out + oh);
                const bool whole = AH.count(oh) == AH.kernel;
                const bool joins = oh + 1 < AH.out && runs[at + 1] > oh + 1 &&
                                   RowFactorsKey(P, od, oh + 1) == RowFactorsKey(P, od, oh);
                runs[at] = !whole ? oh : joins ? runs[at + 1] : oh + 1;
              }
          }
          OutputRow at(P, begin);
          for (int64_t row = begin; row < end;) {
            const int64_t od = at.od, oh = at.oh;
            if (AD.count(od) == 0 || AH.count(oh) == 0) {
              WriteEmptyRow(P, a, at, row);
              ++row;
              at.Next(P);
              continue;
            }
            if (RowFactorsKey(P, od, oh) != scratch.factors_for())
              UseRowFactors<Acc>(P, od, oh, scratch);
            const int64_t id = AD.start(od) + AD.first[static_cast<size_t>(od)] * AD.dilation;
            const int64_t ih = AH.start(oh) + AH.first[static_cast<size_t>(oh)] * AH.dilation;
            const S* first = in + at.plane * P.in_plane + (id * AH.in + ih) * AW.in;
            const int64_t run_past = runs.empty() ? 0 : runs[static_cast<size_t>(od * AH.out + oh)];
            if (run_past > oh && scratch.empty_count() == 0) {
              // The run of rows from here with whole windows and this factor table, in this
              // thread's range.
              const int64_t past = std::min(run_past, oh + (end - row));
#if HWY_TARGET <= HWY_AVX3
              run(first, AH.dilation * AW.in, AH.stride * AW.in, past - oh, row_mask, in_end, taps,
                  scratch.factors(), rule, OW, out + row * OW);
#else
              run(first, AH.dilation * AW.in, AH.stride * AW.in, past - oh, in_end, taps,
                  scratch.factors(), rule, OW, out + row * OW, out + end * OW);
#endif
              row += past - oh;
              at = OutputRow(P, row);
              continue;
            }
            const Int8WindowRows<S> window{
                first,        AD.count(od),        AD.dilation * AH.in * AW.in,
                AH.count(oh), AH.dilation * AW.in, in_end};
#if HWY_TARGET <= HWY_AVX3
            SumInt8Row(window, row_mask, taps, OW, scratch.factors(), rule, out + row * OW);
#else
            // The rows after this one in the range are written after it.
            sum_row(window, taps, OW, scratch.factors(), rule, out + row * OW, out + end * OW);
#endif
            WriteEmptyColumns(P, a, at, row, scratch);
            ++row;
            at.Next(P);
          }
        });
    return;
  }
#endif
  run_avg_nchw(P, a);  // Highway's scalar target: avg_nchw's code
}

void RunAvgInt8Nchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype,
           [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { AvgInt8Nchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunAvgInt8Nchw);

namespace {

Status accepts_avg_int8_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s)
    return s;
  if (p.dtype != DType::i8 && p.dtype != DType::u8)
    return Error{fmt::format("dtype {}: i8 and u8 only", dtype_name(p.dtype))};
  const Axis& w = p.axes.back();
  const int64_t out_w = output_extent_of(p, w);
  if (w.extent > int8_row_limit || out_w > int8_row_limit)
    return Error{fmt::format("rows of {} values, {} outputs: each at most {} (one vector of bytes)",
                             w.extent, out_w, int8_row_limit)};
  if (taps_of(p) > int8_window_limit)
    return Error{fmt::format("window of {} taps: at most {} (sums within 16 bits)", taps_of(p),
                             int8_window_limit)};
  return Ok{};
}

void run_avg_int8_nchw(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunAvgInt8Nchw)(P, a);
}

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo avg_int8_nchw{
    .name = "avg_int8_nchw",
    .description =
        "i8 and u8 rows of up to 64 values: per output row, the window's rows summed in 16-bit "
        "lanes, then each tap along W picked from the sums by a permute (AVX-512) or a lane "
        "shift (AVX2 and SSE4, stride 1 or 2; avg_nchw's code otherwise)",
    .accepts = accepts_avg_int8_nchw,
    .preferred = nullptr,
    .run = run_avg_int8_nchw,
    .scope = {.op = Op::avg, .layout = Layout::channels_first},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
