// The optimized engine's SIMD kernels. This file is compiled once per SIMD target: Highway's
// foreach_target.h re-includes it (HWY_TARGET_INCLUDE) with HWY_NAMESPACE set to each target
// (SSE4, AVX2, AVX-512, ...), and HWY_DYNAMIC_DISPATCH picks the best one at run time. All code
// is VEX/EVEX-encoded on the AVX targets, so no legacy-SSE instruction runs with a dirty upper
// YMM state (docs/benchmarks.md).
//
// Arithmetic (declared in optimized.cpp's error bounds):
// - float averages (f32, f16 via f32) sum in f32, in an order that depends on the kernel, and
//   multiply by the f32 reciprocal of the divisor: at most prod(kernel) + 1 roundings;
// - integer averages (i8, u8) sum exactly in i32 (i16 in avg_int8_nchw: windows of at most 128
//   taps, |sum| <= 32640; and in avg_nhwc's direct path, at most 3x3 taps), widened to i32 and
//   divided in f32: for |sum| < 2^23 and divisors < 2^24, the f32 quotient t = fl(s / d) is on
//   the same side of every half-integer as s / d (their distance is at least 1/(2d), the rounding
//   error below |s/d| 2^-24 < 1/(2d)), and is exactly x.5 when s / d is; so rounding t by the
//   problem's rule is exact, provided t itself is rounded, not t + 0.5 (that sum rounds in f32:
//   0.49999997 + 0.5 is 1). Ties are found as |t - nearest(t)| = 0.5, a difference f32 holds
//   exactly (Sterbenz), and only then moved by the half, which is exact on a half-integer;
// - max compares with a strict '>' in the spec's scan order, so ties keep the first element.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "kernels.hpp"
#include "poolspec/evaluate.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs body(begin, end) on each of `threads` OpenMP threads, over its share of [0, count) as
// schedule(static) splits it. The SIMD code stays in `body`, a HWY_ATTR lambda, because clang
// does not give an OpenMP region's outlined function the target attributes of the function it is
// written in: SIMD code written directly in a region does not compile (clang 14 at -O1 and above,
// "Cannot select X86ISD::BLENDV"), and the call keeps the region free of it.
template <class Body>
void ParallelRanges(int threads, int64_t count, const Body& body) {
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t share = count / nt, extra = count % nt;
    const int64_t begin = t * share + std::min(t, extra);
    body(begin, begin + share + (t < extra ? 1 : 0));
  }
}

// ---- element access ------------------------------------------------------------------------

template <class S> inline constexpr bool is_f16 = std::is_same_v<S, hwy::float16_t>;

// One storage element as the compute type Acc (float for f32 and f16, int32_t for i8 and u8).
template <class Acc, class S>
HWY_INLINE Acc ScalarLoad(const S* p) {
  if constexpr (is_f16<S>) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return static_cast<float>(f16_value(bits));
  } else {
    return static_cast<Acc>(*p);
  }
}

// Stores a computed value: f16 rounded to nearest-even (as vcvtps2ph), integers saturated.
template <class Acc, class S>
HWY_INLINE void ScalarStore(Acc v, S* p) {
  if constexpr (is_f16<S>) {
    const uint16_t bits = f16_bits(round_to_float(DType::f16, v));
    std::memcpy(p, &bits, 2);
  } else if constexpr (std::is_same_v<S, float>) {
    *p = v;
  } else {
    *p = static_cast<S>(std::clamp<Acc>(v, std::numeric_limits<S>::min(), std::numeric_limits<S>::max()));
  }
}

// Highway 1.0.3 emulates f16 <-> f32 on targets without F16C (SSE4 and below, scalar), and its
// emulation turns an f16 infinity into 32768 (found by tests/test_engines.cpp). There the
// conversions go through the spec's exact scalar ones instead.
#if (HWY_ARCH_X86 && HWY_TARGET > HWY_AVX2) || HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr bool native_f16 = false;
#else
constexpr bool native_f16 = true;
#endif

template <class D, class S>
HWY_INLINE hn::Vec<D> LoadAs(D d, const S* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) {
    return hn::LoadU(d, p);
  } else if constexpr (is_f16<S> && !native_f16) {
    alignas(64) float lanes[HWY_MAX_BYTES / 4];
    for (size_t i = 0; i < hn::Lanes(d); ++i) lanes[i] = ScalarLoad<float>(p + i);
    return hn::Load(d, lanes);
  } else {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<S, D>(), p));
  }
}

template <class D, class S>
HWY_INLINE void StoreAs(hn::Vec<D> v, D d, S* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) {
    hn::StoreU(v, d, p);
  } else if constexpr (is_f16<S> && !native_f16) {
    alignas(64) float lanes[HWY_MAX_BYTES / 4];
    hn::Store(v, d, lanes);
    for (size_t i = 0; i < hn::Lanes(d); ++i) ScalarStore<float>(lanes[i], p + i);
  } else {
    const hn::Rebind<S, D> ds;
    hn::StoreU(hn::DemoteTo(ds, v), ds, p);  // f16: nearest-even; integers: saturating
  }
}

// The first n < Lanes(d) elements, the other lanes zero: nothing past p + n is read. A masked
// load where the target's masked loads do not fault (AVX2, AVX-512) and the storage type is the
// lane type, else through a stack copy.
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const S* p, size_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) return hn::MaskedLoad(hn::FirstN(d, n), d, p);
#endif
  alignas(64) S tmp[HWY_MAX_BYTES / 4] = {};
  std::memcpy(tmp, p, n * sizeof(S));
  return LoadAs(d, tmp);
}

// Stores the first n < Lanes(d) lanes; nothing past p + n is written (a masked store, or a copy).
template <class D, class S>
HWY_INLINE void StorePartial(hn::Vec<D> v, D d, S* p, size_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) return hn::BlendedStore(v, hn::FirstN(d, n), d, p);
#endif
  alignas(64) S tmp[HWY_MAX_BYTES / 4];
  StoreAs(v, d, tmp);
  std::memcpy(p, tmp, n * sizeof(S));
}

// Lanes i of the result are p[i * s].
template <class D>
HWY_INLINE hn::Vec<D> LoadStrided(D d, const hn::TFromD<D>* HWY_RESTRICT p, int64_t s) {
  if (s == 1) return hn::LoadU(d, p);
#if HWY_TARGET == HWY_SCALAR
  return hn::LoadU(d, p);  // one lane
#else
  if (s == 2) return hn::ConcatEven(d, hn::LoadU(d, p + hn::Lanes(d)), hn::LoadU(d, p));
  const hn::RebindToSigned<D> di;
  return hn::GatherIndex(d, p, hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(s))));
#endif
}

// ---- the spec's rules, vector and scalar -----------------------------------------------------

// Max: v replaces the running m when v > m; with NaN propagation a NaN replaces a non-NaN, with
// NaN ignored a non-NaN replaces a NaN (a NaN m is only ever the window's first value).
template <class D>
HWY_INLINE hn::Mask<D> Takes(hn::Vec<D> v, hn::Vec<D> m, bool propagate) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    const auto better = hn::Gt(v, m);
    if (propagate) return hn::Or(better, hn::AndNot(hn::IsNaN(m), hn::IsNaN(v)));
    return hn::Or(better, hn::AndNot(hn::IsNaN(v), hn::IsNaN(m)));
  } else {
    return hn::Gt(v, m);
  }
}

template <class Acc>
HWY_INLINE bool TakesScalar(Acc v, Acc m, bool propagate) {
  if (v > m) return true;
  if constexpr (std::is_floating_point_v<Acc>) {
    return propagate ? (std::isnan(v) && !std::isnan(m)) : (std::isnan(m) && !std::isnan(v));
  }
  return false;
}

// An integer quotient rounded by the problem's rule (exact for the accepted problems, see top).
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> RoundQuotient(DF df, hn::Vec<DF> t, IntRounding rule) {
  const hn::RebindToSigned<DF> di;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_same_v<decltype(t.raw), __m512>) {
    // One conversion in the rounding mode the rule takes. The quotients are within int32 (see the
    // top), so Highway's fixups for out-of-range lanes are not needed. The int8 layer of
    // docs/benchmarks.md, hot, 1 thread: NCHW 0.064 -> 0.048 ms; NHWC 0.056 -> 0.039, with
    // StoreAverageOfHalfWords' one store.
    constexpr int kQuiet = _MM_FROUND_NO_EXC;
    const __m512 x = t.raw;
    switch (rule) {
      case IntRounding::half_even: return {_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | kQuiet)};
      case IntRounding::toward_zero: return {_mm512_cvtt_roundps_epi32(x, kQuiet)};
      case IntRounding::floor: return {_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | kQuiet)};
      case IntRounding::half_away:
      case IntRounding::half_up: break;  // ties found first, below
    }
  }
#endif
  const auto half = hn::Set(df, 0.5f);
  switch (rule) {
    case IntRounding::half_even: return hn::NearestInt(t);
    case IntRounding::toward_zero: return hn::ConvertTo(di, t);
    case IntRounding::floor: return hn::ConvertTo(di, hn::Floor(t));
    case IntRounding::half_away:
    case IntRounding::half_up: {
      const auto nearest = hn::Round(t);  // to even on a tie
      const auto tie = hn::Eq(hn::Abs(hn::Sub(t, nearest)), half);
      const auto moved = hn::Add(t, rule == IntRounding::half_up ? half : hn::CopySign(half, t));
      return hn::ConvertTo(di, hn::IfThenElse(tie, moved, nearest));
    }
  }
  return hn::NearestInt(t);
}

HWY_INLINE int32_t RoundQuotientScalar(float t, IntRounding rule) {
  switch (rule) {
    case IntRounding::half_even: return static_cast<int32_t>(std::nearbyint(t));
    case IntRounding::toward_zero: return static_cast<int32_t>(std::trunc(t));
    case IntRounding::floor: return static_cast<int32_t>(std::floor(t));
    case IntRounding::half_away:
    case IntRounding::half_up: {  // as RoundQuotient: t + 0.5 only on a tie, where it is exact
      const float nearest = std::nearbyint(t);
      if (std::fabs(t - nearest) != 0.5f) return static_cast<int32_t>(nearest);
      return static_cast<int32_t>(t + (rule == IntRounding::half_up ? 0.5f : std::copysign(0.5f, t)));
    }
  }
  return 0;
}

// "T_out = T_sum / T_div". `factor` is the f32 reciprocal 1/d for float sums, d itself for
// integer sums (divided, for the exactness argument above).
template <class D>
HWY_INLINE hn::Vec<D> FinishAverage(D d, hn::Vec<D> sum, hn::Vec<hn::Rebind<float, D>> factor,
                                    IntRounding rule) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    (void)d;
    (void)rule;
    return hn::Mul(sum, factor);
  } else {
    const hn::Rebind<float, D> df;
    return RoundQuotient(df, hn::Div(hn::ConvertTo(df, sum), factor), rule);
  }
}

template <class Acc>
HWY_INLINE Acc FinishAverageScalar(Acc sum, float factor, IntRounding rule) {
  if constexpr (std::is_floating_point_v<Acc>) {
    (void)rule;
    return sum * factor;
  } else {
    return RoundQuotientScalar(static_cast<float>(sum) / factor, rule);
  }
}

template <class Acc>
HWY_INLINE float AverageFactor(int64_t divisor) {
  if constexpr (std::is_floating_point_v<Acc>) return 1.0f / static_cast<float>(divisor);
  return static_cast<float>(divisor);
}

// The key of output row (od, oh)'s factor table: the product of its depth and height factors of
// the divisor (the override's table is the same for every row).
inline int64_t RowFactorsKey(const Plan& P, int64_t od, int64_t oh) {
  return P.p.divisor == Divisor::override_value
             ? -2
             : int64_t{P.axis[0].divisor[static_cast<size_t>(od)]} * P.axis[1].divisor[static_cast<size_t>(oh)];
}

// factors[j] = AverageFactor of the divisor of output (od, oh, first + j), for j < count, with 1
// for a divisor 0 (those outputs are written by WriteEmpty). The divisor is the product of the
// axes' factors (plan.cpp), so a row's table is its row factor times the W axis's, a vector at a
// time: recomputed one call at a time at each change of row factor, it took 8% of the 7x7 layer.
// The products are exact in int32 and in float below 2^24, and the division is IEEE's either way.
template <class Acc>
void RowFactors(const Plan& P, int64_t od, int64_t oh, int64_t first, int64_t count, float* HWY_RESTRICT factors) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  int64_t j = 0;
  if (P.p.divisor != Divisor::override_value && AD.kernel * AH.kernel * AW.kernel < (int64_t{1} << 24)) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const int64_t L = static_cast<int64_t>(hn::Lanes(df));
    const auto row = hn::Set(di, AD.divisor[static_cast<size_t>(od)] * AH.divisor[static_cast<size_t>(oh)]);
    const auto zero = hn::Zero(di), one = hn::Set(di, 1);
    for (; j + L <= count; j += L) {
      const auto dv = hn::Mul(row, hn::LoadU(di, AW.divisor.data() + first + j));
      const auto divisor = hn::ConvertTo(df, hn::IfThenElse(hn::Eq(dv, zero), one, dv));
      if constexpr (std::is_floating_point_v<Acc>) hn::StoreU(hn::Div(hn::Set(df, 1.0f), divisor), df, factors + j);
      else hn::StoreU(divisor, df, factors + j);
    }
  }
  for (; j < count; ++j) {
    const int64_t dv = P.divisor(od, oh, first + j);
    factors[j] = AverageFactor<Acc>(dv == 0 ? 1 : dv);
  }
}

// Writes what an element with no counted tap gets: the empty-window value when its divisor is 0
// (or for max), else an average of no values, +0. Its index: the plane's first element under
// start=lowest, else -1.
inline void WriteEmpty(const Plan& P, const RunArgs& a, int64_t n, int64_t c, int64_t position,
                       bool divisor_zero) {
  const double v = (P.p.op == Op::max || divisor_zero) ? empty_window_value(P.p) : 0.0;
  store_element(P.p.dtype, v, a.output + position * storage_bytes(P.p.dtype));
  if (a.indices)
    a.indices[position] = P.final_index(n, c, P.p.max_start == MaxStart::lowest ? 0 : -1);
}

// Per-thread scratch, kept between calls so the hot path does not allocate once warm.
template <class T>
T* Scratch(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// The same, starting on a 64-byte cache line: a 512-bit load that is not on one spans two lines
// and costs two.
template <class T>
T* LineScratch(std::vector<T>& v, size_t n) {
  constexpr size_t line = 64 / sizeof(T);
  T* p = Scratch(v, n + line);
  return p + (line - reinterpret_cast<uintptr_t>(p) % 64 / sizeof(T)) % line;
}

// ---- global_avg_nchw: each plane is contiguous; one reduction per plane -----------------------

template <class S, class Acc>
void GlobalAvgNchw(const Plan& P, const RunArgs& a) {
  const hn::ScalableTag<Acc> d;
  const size_t L = hn::Lanes(d);
  const int64_t planes = P.batch * P.channels, size = P.in_plane;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  const float factor = AverageFactor<Acc>(P.divisor(0, 0, 0));
  const IntRounding rule = P.p.int_rounding;
  ParallelRanges(a.threads, planes, [&](int64_t begin, int64_t end) HWY_ATTR {
    for (int64_t nc = begin; nc < end; ++nc) {
      const S* src = in + nc * size;
      // -0 is the additive identity (-0 + x = x for every x, +0 included): a plane of -0 sums to -0.
      // A plane is short: the lines 8 KiB further on, prefetched (measured on cold input, 8x2048
      // planes of 7x7: 0.107 ms without, 0.080 with; 1, 2 and 4 KiB ahead are slower). An
      // address past the input is only a hint, never read.
      const uintptr_t later = reinterpret_cast<uintptr_t>(src) + 8192;
      for (int64_t b = 0; b < size * static_cast<int64_t>(sizeof(S)) + 64; b += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(later + static_cast<uintptr_t>(b)));
      const auto identity = hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
      auto acc0 = identity, acc1 = identity;
      int64_t i = 0;
      for (; i + 2 * static_cast<int64_t>(L) <= size; i += 2 * static_cast<int64_t>(L)) {
        acc0 = hn::Add(acc0, LoadAs(d, src + i));
        acc1 = hn::Add(acc1, LoadAs(d, src + i + L));
      }
      if (i + static_cast<int64_t>(L) <= size) {
        acc0 = hn::Add(acc0, LoadAs(d, src + i));
        i += static_cast<int64_t>(L);
      }
      if (i < size) {  // the rest in one partial vector, its other lanes the identity
        const auto rest = static_cast<size_t>(size - i);
        acc1 = hn::Add(acc1, hn::IfThenElse(hn::FirstN(d, rest), LoadPartial(d, src + i, rest), identity));
      }
      const Acc sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
      ScalarStore<Acc>(FinishAverageScalar<Acc>(sum, factor, rule), out + nc);
    }
  });
}

// ---- global_avg_nhwc: a window over each whole image; its pixels summed in memory order ------
//
// One output pixel per image. Its channels, a chunk at a time, are the sums of the image's
// pixels in scan order, which is memory order: one stream, not one per pixel (avg_nhwc's rows of
// sums along W: 57 KiB for 7x7 pixels of 2048 channels, out of L1).

template <class S, class Acc>
void GlobalAvgNhwc(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t C = P.channels, pixels = P.in_plane;
  // Whole images, read in order (8x2048 channels of 7x7 cold: 0.10 -> 0.089 ms; in chunks of
  // 512 channels, each a stream with gaps, 0.17); split in as many chunks as it takes to give
  // every thread work when the images are too few.
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(a.threads / std::max<int64_t>(P.batch, 1), C / L));
  const int64_t chunk = ((C + parts - 1) / parts + L - 1) / L * L, chunks = (C + chunk - 1) / chunk;
  const int64_t divisor = P.divisor(0, 0, 0);
  const float factor = AverageFactor<Acc>(divisor == 0 ? 1 : divisor);
  const IntRounding rule = P.p.int_rounding;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, P.batch * chunks, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> sums_tl;
    Acc* sums = LineScratch(sums_tl, static_cast<size_t>(chunk + L));
    const hn::Rebind<float, D> df;
    const auto f = hn::Set(df, factor);
    for (int64_t unit = begin; unit < end; ++unit) {  // (n, chunk)
      const int64_t n = unit / chunks, c0 = unit % chunks * chunk, count = std::min(chunk, C - c0);
      if (divisor == 0) {
        for (int64_t c = c0; c < c0 + count; ++c) WriteEmpty(P, a, n, c, n * C + c, true);
        continue;
      }
      const S* image = in + n * pixels * C + c0;
      const int64_t whole = count / L * L;
      const auto tail = static_cast<size_t>(count - whole);
      for (int64_t i = 0; i < whole; i += L) hn::Store(LoadAs(d, image + i), d, sums + i);
      if (tail > 0) hn::Store(LoadPartial(d, image + whole, tail), d, sums + whole);
      for (int64_t p = 1; p < pixels; ++p) {  // in scan order: a sum of the window's taps in order
        const S* pixel = image + p * C;
        for (int64_t i = 0; i < whole; i += L) hn::Store(hn::Add(hn::Load(d, sums + i), LoadAs(d, pixel + i)), d, sums + i);
        if (tail > 0) hn::Store(hn::Add(hn::Load(d, sums + whole), LoadPartial(d, pixel + whole, tail)), d, sums + whole);
      }
      S* dst = out + n * C + c0;
      for (int64_t i = 0; i < whole; i += L) StoreAs(FinishAverage(d, hn::Load(d, sums + i), f, rule), d, dst + i);
      if (tail > 0) StorePartial(FinishAverage(d, hn::Load(d, sums + whole), f, rule), d, dst + whole, tail);
    }
  });
}

// ---- pool_nchw: per plane, every input row reduced along W, then the rows combined ------------
//
// Separable in the spec's scan order: a window's taps are (rows in order) x (columns in order),
// and combining first-maxima of consecutive runs with a strict '>' gives the first maximum of the
// whole run, so reducing each row first and then the rows keeps the spec's tie and NaN rules.

template <class S, class Acc>
void PoolNchw(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  using DI = hn::RebindToSigned<hn::ScalableTag<float>>;
  const D d;
  const DI di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OW = AW.out, rows = AD.in * AH.in;
  const int64_t planes = P.batch * P.channels;
  const bool avg = P.p.op == Op::avg, indices = a.indices != nullptr;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  const bool propagate = P.p.nan == NanPolicy::propagate && !from_lowest;
  const IntRounding rule = P.p.int_rounding;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  const int64_t k_span = (AW.kernel - 1) * AW.dilation + 1;
  const size_t row_size = static_cast<size_t>(W + (OW + 2 * L) * AW.stride + k_span + 2 * L);
  const size_t slab_size = static_cast<size_t>(rows * OW + L);

  ParallelRanges(a.threads, planes, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> row_tl, slab_tl;
    thread_local std::vector<int32_t> offset_tl;
    thread_local std::vector<float> factors_tl;
    Acc* row = Scratch(row_tl, row_size);
    Acc* slab = Scratch(slab_tl, slab_size);
    int32_t* slab_offset = indices ? Scratch(offset_tl, slab_size) : nullptr;
    float* factors = Scratch(factors_tl, static_cast<size_t>(OW + L));
    int64_t factors_for = -1;  // the row divisor the factor table holds

    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t n = nc / P.channels, c = nc % P.channels;
      const S* plane = in + nc * P.in_plane;
      // 1. Each input row r, reduced along W into slab[r * OW ...].
      for (int64_t r = 0; r < rows; ++r) {
        const S* src = plane + r * W;
        int64_t i = 0;
        for (; i + L <= W; i += L) hn::StoreU(LoadAs(d, src + i), d, row + i);
        if (i < W) hn::StoreU(LoadPartial(d, src + i, static_cast<size_t>(W - i)), d, row + i);
        Acc* hrow = slab + r * OW;
        int32_t* hoff = indices ? slab_offset + r * OW : nullptr;
        const int32_t row_offset = static_cast<int32_t>(r * W);
        for (int64_t ow = AW.interior_begin; ow < AW.interior_end; ow += L) {
          const int64_t base = AW.start(ow);
          auto m = LoadStrided(d, row + base, AW.stride);
          auto lane_offset = hn::Add(hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(AW.stride))),
                                     hn::Set(di, static_cast<int32_t>(row_offset + base)));
          auto off = lane_offset;
          for (int64_t t = 1; t < AW.kernel; ++t) {
            const auto v = LoadStrided(d, row + base + t * AW.dilation, AW.stride);
            if (avg) {
              m = hn::Add(m, v);
            } else {
              const auto take = Takes<D>(v, m, propagate);
              m = hn::IfThenElse(take, v, m);
              if (indices)
                off = hn::IfThenElse(hn::RebindMask(di, take),
                                     hn::Add(lane_offset, hn::Set(di, static_cast<int32_t>(t * AW.dilation))), off);
            }
          }
          hn::StoreU(m, d, hrow + ow);  // lanes past the interior are rewritten below or unused
          if (indices) hn::StoreU(off, di, hoff + ow);
        }
        for (int64_t ow = 0; ow < OW; ++ow) {  // the border windows, clipped to the input
          if (ow == AW.interior_begin && AW.interior_end > ow) ow = AW.interior_end;
          if (ow >= OW) break;
          const int64_t first = AW.first[static_cast<size_t>(ow)], past = AW.past[static_cast<size_t>(ow)];
          if (first >= past) {  // no input element: fixed up per output below
            hrow[ow] = Acc(0);
            if (indices) hoff[ow] = -1;
            continue;
          }
          int64_t x = AW.start(ow) + first * AW.dilation;
          Acc m = row[x];
          int32_t best = row_offset + static_cast<int32_t>(x);
          for (int64_t t = first + 1; t < past; ++t) {
            x += AW.dilation;
            if (avg) {
              m += row[x];
            } else if (TakesScalar(row[x], m, propagate)) {
              m = row[x];
              best = row_offset + static_cast<int32_t>(x);
            }
          }
          hrow[ow] = m;
          if (indices) hoff[ow] = best;
        }
      }
      // 2. Each output row: the window's rows combined, in scan order, then finished.
      for (int64_t od = 0; od < AD.out; ++od) {
        for (int64_t oh = 0; oh < AH.out; ++oh) {
          const int64_t out_row = (od * AH.out + oh) * OW;
          S* dst = out + nc * P.out_plane + out_row;
          const int64_t fd = AD.first[static_cast<size_t>(od)], pd = AD.past[static_cast<size_t>(od)];
          const int64_t fh = AH.first[static_cast<size_t>(oh)], ph = AH.past[static_cast<size_t>(oh)];
          if (fd >= pd || fh >= ph) {
            for (int64_t ow = 0; ow < OW; ++ow)
              WriteEmpty(P, a, n, c, P.output_position(n, c, out_row + ow), P.divisor(od, oh, ow) == 0);
            continue;
          }
          if (avg) {  // the factor table depends on the row's divisor and each column's
            const int64_t key = P.p.divisor == Divisor::override_value
                                    ? -2
                                    : int64_t{AD.divisor[static_cast<size_t>(od)]} * AH.divisor[static_cast<size_t>(oh)];
            if (key != factors_for) {
              std::fill(factors + OW, factors + OW + L, 1.0f);  // lanes past the row: finite, unused
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t dv = P.divisor(od, oh, ow);
                factors[ow] = AverageFactor<Acc>(dv == 0 ? 1 : dv);  // divisor 0: fixed up below
              }
              factors_for = key;
            }
          }
          for (int64_t ow = 0; ow < OW; ow += L) {
            bool first_row = true;
            hn::Vec<D> m = hn::Zero(d);
            hn::Vec<DI> off = hn::Zero(di);
            for (int64_t td = fd; td < pd; ++td) {
              const int64_t id = AD.start(od) + td * AD.dilation;
              for (int64_t th = fh; th < ph; ++th) {
                const int64_t r = id * AH.in + AH.start(oh) + th * AH.dilation;
                const auto v = hn::LoadU(d, slab + r * OW + ow);
                if (first_row) {
                  m = v;
                  if (indices) off = hn::LoadU(di, slab_offset + r * OW + ow);
                  first_row = false;
                } else if (avg) {
                  m = hn::Add(m, v);
                } else {
                  const auto take = Takes<D>(v, m, propagate);
                  m = hn::IfThenElse(take, v, m);
                  if (indices) off = hn::IfThenElse(hn::RebindMask(di, take), hn::LoadU(di, slab_offset + r * OW + ow), off);
                }
              }
            }
            if (avg) {
              m = FinishAverage(d, m, hn::LoadU(hn::Rebind<float, D>(), factors + ow), rule);
            } else if (from_lowest) {  // "m = lowest; m = v on v > m": lowest unless some v exceeds it
              const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
              const auto above = hn::Gt(m, lowest);
              m = hn::IfThenElse(above, m, lowest);
              if (indices) off = hn::IfThenElse(hn::RebindMask(di, above), off, hn::Zero(di));
            }
            const int64_t count = std::min(L, OW - ow);
            if (count == L) StoreAs(m, d, dst + ow);
            else StorePartial(m, d, dst + ow, static_cast<size_t>(count));
            if (indices) {
              alignas(64) int32_t lane[HWY_MAX_BYTES / 4];
              hn::Store(off, di, lane);
              for (int64_t i = 0; i < count; ++i)
                a.indices[P.output_position(n, c, out_row + ow + i)] = P.final_index(n, c, lane[i]);
            }
          }
          for (int64_t ow = 0; ow < OW; ++ow)  // windows with no input column: fixed up
            if (AW.count(ow) == 0)
              WriteEmpty(P, a, n, c, P.output_position(n, c, out_row + ow), P.divisor(od, oh, ow) == 0);
        }
      }
    }
  });
}

// The window rows of two output rows, when the second's are the first's from some k on and then k
// more (adjacent rows of one depth slice): the rows both read, and those only one of them reads.
// Windows over depth slices are left alone: paired, the 3-D layer measured 1.45x slower.
template <class S>
struct SharedRows {
  const S* const* shared = nullptr;
  const S* const* only_a = nullptr;
  const S* const* only_b = nullptr;
  size_t shared_count = 0, only_count = 0;
  bool Split(const S* const* a, size_t a_rows, const S* const* b, size_t b_rows) {
    if (a_rows != b_rows || b_rows == 0) return false;
    const size_t k = static_cast<size_t>(std::find(a, a + a_rows, b[0]) - a);
    if (k == a_rows || !std::equal(a + k, a + a_rows, b)) return false;
    shared = a + k;
    only_a = a;
    only_b = b + (a_rows - k);
    shared_count = a_rows - k;
    only_count = k;
    return true;
  }
};

// The window's row pointers, copied into an array of kRows when kRows > 0, so that the compiler
// keeps them in registers; `window_rows` itself otherwise. Not to be copied (`rows` may point
// into it).
template <int kRows, class S>
struct WindowRowPointers {
  const S* copy[kRows > 0 ? kRows : 1];
  const S* const* rows;
  explicit WindowRowPointers(const S* const* window_rows) : rows(window_rows) {
    if constexpr (kRows > 0) {
      for (int i = 0; i < kRows; ++i) copy[i] = window_rows[i];
      rows = copy;
    }
  }
  WindowRowPointers(const WindowRowPointers&) = delete;
  WindowRowPointers& operator=(const WindowRowPointers&) = delete;
};

// The sums of two output rows whose windows share input rows (adjacent rows of one plane: 6 of the
// 7x7's 7): a_sums = the sum of the `shared` rows and `only_a`, b_sums that of `shared` and
// `only_b` (`only_count` rows each). The shared rows are loaded once (8 row loads for the two,
// not 14).
// kShared and kOnly, when nonzero, are the counts known at compile time: the row pointers then
// stay in registers, and the loops over rows are written out. With SumColumns<7> along W, the
// 7x7 layer, 1 thread, Zen 5, one kernel alone: NHWC cold 0.91-0.93 -> 0.80-0.81 ms, hot 0.59-0.60
// -> 0.54-0.55; NCHW cold 0.69-0.74 -> 0.63-0.66.
template <int kShared, int kOnly, class D, class S>
HWY_INLINE void SumRowPairOf(D d, const S* const* HWY_RESTRICT shared_rows, size_t shared_count,
                             const S* const* HWY_RESTRICT only_a_rows, const S* const* HWY_RESTRICT only_b_rows,
                             size_t only_count, int64_t length, hn::TFromD<D>* HWY_RESTRICT a_sums,
                             hn::TFromD<D>* HWY_RESTRICT b_sums) {
  if constexpr (kShared > 0) shared_count = kShared;
  if constexpr (kOnly > 0) only_count = kOnly;
  const WindowRowPointers<kShared, S> shared_pointers(shared_rows);
  const WindowRowPointers<kOnly, S> a_pointers(only_a_rows), b_pointers(only_b_rows);
  const S* const* shared = shared_pointers.rows;
  const S* const* only_a = a_pointers.rows;
  const S* const* only_b = b_pointers.rows;
  const size_t a_count = only_count, b_count = only_count;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto sum_at = [&](const S* const* rows, size_t count, hn::Vec<D> m, int64_t i) HWY_ATTR {
    for (size_t r = 0; r < count; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    return m;
  };
  const auto pair_at = [&](int64_t i) HWY_ATTR {  // one vector of both rows, from column i
    const auto m = sum_at(shared + 1, shared_count - 1, LoadAs(d, shared[0] + i), i);
    hn::StoreU(sum_at(only_a, a_count, m, i), d, a_sums + i);
    hn::StoreU(sum_at(only_b, b_count, m, i), d, b_sums + i);
  };
  int64_t i = 0;
  for (; i + 2 * L <= length; i += 2 * L) {  // two vectors: two chains of additions
    auto m0 = LoadAs(d, shared[0] + i), m1 = LoadAs(d, shared[0] + i + L);
#pragma GCC unroll 8
    for (size_t r = 1; r < shared_count; ++r) {
      m0 = hn::Add(m0, LoadAs(d, shared[r] + i));
      m1 = hn::Add(m1, LoadAs(d, shared[r] + i + L));
    }
    auto a0 = m0, a1 = m1, b0 = m0, b1 = m1;
#pragma GCC unroll 8
    for (size_t r = 0; r < a_count; ++r) {
      a0 = hn::Add(a0, LoadAs(d, only_a[r] + i));
      a1 = hn::Add(a1, LoadAs(d, only_a[r] + i + L));
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < b_count; ++r) {
      b0 = hn::Add(b0, LoadAs(d, only_b[r] + i));
      b1 = hn::Add(b1, LoadAs(d, only_b[r] + i + L));
    }
    hn::StoreU(a0, d, a_sums + i);
    hn::StoreU(a1, d, a_sums + i + L);
    hn::StoreU(b0, d, b_sums + i);
    hn::StoreU(b1, d, b_sums + i + L);
  }
  for (; i + L <= length; i += L) pair_at(i);
  if (i < length && length >= L) {  // the last whole vector again, overlapping: the same sums
    pair_at(length - L);
  } else if (i < length) {
    const auto rest = static_cast<size_t>(length - i);
    auto m = LoadPartial(d, shared[0] + i, rest);
    for (size_t r = 1; r < shared_count; ++r) m = hn::Add(m, LoadPartial(d, shared[r] + i, rest));
    auto a = m, b = m;
    for (size_t r = 0; r < a_count; ++r) a = hn::Add(a, LoadPartial(d, only_a[r] + i, rest));
    for (size_t r = 0; r < b_count; ++r) b = hn::Add(b, LoadPartial(d, only_b[r] + i, rest));
    hn::StoreU(a, d, a_sums + i);
    hn::StoreU(b, d, b_sums + i);
  }
}

template <class D, class S>
HWY_INLINE void SumRowPair(D d, const S* const* HWY_RESTRICT shared, size_t shared_count,
                           const S* const* HWY_RESTRICT only_a, const S* const* HWY_RESTRICT only_b,
                           size_t only_count, int64_t length, hn::TFromD<D>* HWY_RESTRICT a_sums,
                           hn::TFromD<D>* HWY_RESTRICT b_sums) {
  if (shared_count == 6 && only_count == 1)  // 7 rows at stride 1
    SumRowPairOf<6, 1>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
  else if (shared_count == 4 && only_count == 1)  // 5 rows at stride 1
    SumRowPairOf<4, 1>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
  else
    SumRowPairOf<0, 0>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
}

// One vector of SumRowQuadOf's four rows of sums, at element i: whole, or its first `rest` lanes.
template <int kCore, bool kPartial, class D, class S>
HWY_INLINE void QuadSumsAt(D d, const S* const* HWY_RESTRICT rows, size_t k, int64_t i, size_t rest,
                           hn::TFromD<D>* HWY_RESTRICT s0, hn::TFromD<D>* HWY_RESTRICT s1,
                           hn::TFromD<D>* HWY_RESTRICT s2, hn::TFromD<D>* HWY_RESTRICT s3) {
  if constexpr (kCore > 0) k = kCore + 3;
  const auto load = [&](size_t r) HWY_ATTR {
    if constexpr (kPartial) return LoadPartial(d, rows[r] + i, rest);
    else return LoadAs(d, rows[r] + i);
  };
  auto core = load(3);
#pragma GCC unroll 8
  for (size_t r = 4; r < k; ++r) core = hn::Add(core, load(r));
  const auto u = hn::Add(core, hn::Add(load(1), load(2)));
  const auto v = hn::Add(core, hn::Add(load(k), load(k + 1)));
  hn::StoreU(hn::Add(u, load(0)), d, s0 + i);
  hn::StoreU(hn::Add(u, load(k)), d, s1 + i);
  hn::StoreU(hn::Add(v, load(2)), d, s2 + i);
  hn::StoreU(hn::Add(v, load(k + 2)), d, s3 + i);
}

// The sums of four output rows whose windows of k >= 4 rows each move down by one row (adjacent
// rows of one plane): rows[0 .. k + 2] holds the k + 3 rows they read, and output row j's window is
// rows[j .. j + k - 1]. With core = rows[3 .. k - 1], u = core + rows[1] + rows[2] and
// v = core + rows[k] + rows[k + 1]: sums[0] = u + rows[0], sums[1] = u + rows[k],
// sums[2] = v + rows[2], sums[3] = v + rows[k + 2]. k + 3 row loads for the four (10 for the
// 7x7's, where pairs take 16), and k + 4 additions. kCore, when nonzero, is k - 3 known at compile
// time. The 7x7 layer in NHWC, 1 thread, one kernel alone, with LinePrefetch: cold 0.67 -> 0.63 ms,
// hot 0.45 -> 0.41 (pairs to quads).
template <int kCore, class D, class S>
HWY_NOINLINE void SumRowQuadOf(D d, const S* const* HWY_RESTRICT window_rows, size_t k, int64_t length,
                               hn::TFromD<D>* const* HWY_RESTRICT sums) {
  constexpr int kRows = kCore > 0 ? kCore + 6 : 0;
  const WindowRowPointers<kRows, S> pointers(window_rows);
  const S* const* rows = pointers.rows;
  hn::TFromD<D>* HWY_RESTRICT s0 = sums[0];
  hn::TFromD<D>* HWY_RESTRICT s1 = sums[1];
  hn::TFromD<D>* HWY_RESTRICT s2 = sums[2];
  hn::TFromD<D>* HWY_RESTRICT s3 = sums[3];
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + L <= length; i += L) QuadSumsAt<kCore, false>(d, rows, k, i, 0, s0, s1, s2, s3);
  if (i < length && length >= L)  // the last whole vector again, overlapping: the same sums
    QuadSumsAt<kCore, false>(d, rows, k, length - L, 0, s0, s1, s2, s3);
  else if (i < length)
    QuadSumsAt<kCore, true>(d, rows, k, i, static_cast<size_t>(length - i), s0, s1, s2, s3);
}

template <class D, class S>
HWY_INLINE void SumRowQuad(D d, const S* const* rows, size_t k, int64_t length, hn::TFromD<D>* const* sums) {
  if (k == 7) return SumRowQuadOf<4>(d, rows, k, length, sums);
  if (k == 5) return SumRowQuadOf<2>(d, rows, k, length, sums);
  SumRowQuadOf<0>(d, rows, k, length, sums);
}

// Prefetches `count` rows of `row_bytes` from sources[i] + `ahead` bytes (an address past the
// input is only a hint, never read).
template <class S>
HWY_INLINE void PrefetchRows(const S* const* sources, size_t count, int64_t ahead, int64_t row_bytes) {
  for (size_t r = 0; r < count; ++r) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(sources[r]) + static_cast<uintptr_t>(ahead);
    for (int64_t x = 0; x < row_bytes; x += 64) __builtin_prefetch(reinterpret_cast<const void*>(at + static_cast<uintptr_t>(x)));
  }
}

// Prefetches a row, one 64-byte line per call to Next. avg_nhwc's W pass calls it once per output
// vector, so that the row the next group of output rows adds arrives while the W pass computes;
// prefetched whole before the H pass, it arrived while the H pass waited on it (the 7x7 layer in
// NHWC, 1 thread, row pairs, one kernel alone: cold 0.74 -> 0.67 ms). Past the row's last line it
// stays on that line.
struct LinePrefetch {
  const char* at;
  const char* last;
  explicit LinePrefetch(const void* row, int64_t bytes = 64)
      : at(static_cast<const char*>(row)), last(at + ((bytes - 1) & ~int64_t{63})) {}
  HWY_INLINE void Next() {
    __builtin_prefetch(at);
    at = std::min(at + 64, last);
  }
  void Rest() {
    while (at < last) Next();
    __builtin_prefetch(last);
  }
};

// ---- slice sums: a window over depth slices summed into one plane first ---------------------
//
// For 3-D windows, avg_nchw and avg_nhwc sum each output depth's slices into one plane, and take
// the window's rows from there, as for a 2-D problem.

// The sum of `count` slices (kSlices of them when not 0) at element i, in slice order.
template <int kSlices, class D, class S>
HWY_INLINE hn::Vec<D> SliceSum(D d, const S* const* HWY_RESTRICT slices, size_t count, int64_t i) {
  const size_t n = kSlices > 0 ? static_cast<size_t>(kSlices) : count;
  auto m = LoadAs(d, slices[0] + i);
#pragma GCC unroll 4
  for (size_t k = 1; k < n; ++k) m = hn::Add(m, LoadAs(d, slices[k] + i));
  return m;
}

// SumSlices, with the slice count unrolled when kSlices is not 0.
template <int kSlices, class D, class S>
HWY_NOINLINE void SumSlicesOf(D d, const S* const* HWY_RESTRICT slices, size_t count, int64_t H, int64_t W,
                              int64_t row_stride, hn::TFromD<D>* HWY_RESTRICT sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (W == row_stride) {  // no padding: the plane is one run
    const int64_t total = H * W;
    int64_t i = 0;
    for (; i + 2 * L <= total; i += 2 * L) {
      const auto m0 = SliceSum<kSlices>(d, slices, count, i), m1 = SliceSum<kSlices>(d, slices, count, i + L);
      hn::Store(m0, d, sums + i);
      hn::Store(m1, d, sums + i + L);
    }
    if (i + L <= total) {
      hn::Store(SliceSum<kSlices>(d, slices, count, i), d, sums + i);
      i += L;
    }
    if (i < total) {  // a partial vector (NHWC planes of any length)
      const size_t tail = static_cast<size_t>(total - i);
      auto m = LoadPartial(d, slices[0] + i, tail);
      for (size_t k = 1; k < count; ++k) m = hn::Add(m, LoadPartial(d, slices[k] + i, tail));
      StorePartial(m, d, sums + i, tail);
    }
    return;
  }
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  const int64_t whole = W / L * L;
  const size_t tail = static_cast<size_t>(W - whole);
  for (int64_t ih = 0; ih < H; ++ih) {
    hn::TFromD<D>* row = sums + ih * row_stride;
    for (int64_t x = 0; x < whole; x += L) hn::Store(SliceSum<kSlices>(d, slices, count, ih * W + x), d, row + x);
    auto m = LoadPartial(d, slices[0] + ih * W + whole, tail);
    for (size_t k = 1; k < count; ++k) m = hn::Add(m, LoadPartial(d, slices[k] + ih * W + whole, tail));
    hn::Store(hn::IfThenElse(hn::FirstN(d, tail), m, identity), d, row + whole);  // masked lanes: +0, not -0
    for (int64_t x = whole + L; x < row_stride; x += L) hn::Store(identity, d, row + x);
  }
}

// sums[ih * row_stride + x] = the sum over `count` depth slices (each H rows of W values, one
// contiguous run) of slice[ih * W + x], in slice order, for x < W; -0 (or 0) for x in
// [W, row_stride). One pass, each slice read in order: streams the hardware prefetchers follow
// (the 3-D layer cold: 0.52 -> 0.31 ms; its window rows read across three slices at once needed
// software prefetches and still took 0.37).
template <class D, class S>
HWY_INLINE void SumSlices(D d, const S* const* slices, size_t count, int64_t H, int64_t W, int64_t row_stride,
                          hn::TFromD<D>* sums) {
  if (count == 2) SumSlicesOf<2>(d, slices, count, H, W, row_stride, sums);
  else if (count == 3) SumSlicesOf<3>(d, slices, count, H, W, row_stride, sums);
  else SumSlicesOf<0>(d, slices, count, H, W, row_stride, sums);
}

// ---- avg_nhwc: per output row, the window's input rows summed, then sums along W --------------
//
// Both passes are free functions with value parameters: written inline in the threads' lambda,
// their loop bounds and pointers were reloaded from the captures after every store. The tap
// counts 2 and 3 (most layers' windows) get their own copies with the tap loop unrolled.

// sums[i] = the sum over `count` source rows of rows[r][i], for i < length, in row order.
template <int kTaps, class D, class S>
HWY_INLINE void SumRows(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t length,
                        hn::TFromD<D>* HWY_RESTRICT sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const size_t taps = kTaps > 0 ? static_cast<size_t>(kTaps) : count;
  int64_t i = 0;
  // Four vectors at a time: four independent chains of additions, not one whose latency bounds
  // the loop.
  for (; i + 4 * L <= length; i += 4 * L) {
    auto m0 = LoadAs(d, rows[0] + i), m1 = LoadAs(d, rows[0] + i + L);
    auto m2 = LoadAs(d, rows[0] + i + 2 * L), m3 = LoadAs(d, rows[0] + i + 3 * L);
    for (size_t r = 1; r < taps; ++r) {
      const S* src = rows[r] + i;
      m0 = hn::Add(m0, LoadAs(d, src));
      m1 = hn::Add(m1, LoadAs(d, src + L));
      m2 = hn::Add(m2, LoadAs(d, src + 2 * L));
      m3 = hn::Add(m3, LoadAs(d, src + 3 * L));
    }
    hn::StoreU(m0, d, sums + i);
    hn::StoreU(m1, d, sums + i + L);
    hn::StoreU(m2, d, sums + i + 2 * L);
    hn::StoreU(m3, d, sums + i + 3 * L);
  }
  if constexpr (kTaps > 0) {  // the row pointers in registers, not reloaded after each store
    const S* r[kTaps];
    for (size_t t = 0; t < taps; ++t) r[t] = rows[t];
    for (; i + L <= length; i += L) {
      auto m = LoadAs(d, r[0] + i);
      for (size_t t = 1; t < taps; ++t) m = hn::Add(m, LoadAs(d, r[t] + i));
      hn::StoreU(m, d, sums + i);
    }
  }
  for (; i + L <= length; i += L) {
    auto m = LoadAs(d, rows[0] + i);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    hn::StoreU(m, d, sums + i);
  }
  if (i < length && length >= L) {  // the last whole vector again, overlapping: the same sums
    i = length - L;
    auto m = LoadAs(d, rows[0] + i);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    hn::StoreU(m, d, sums + i);
  } else if (i < length) {
    const auto rest = static_cast<size_t>(length - i);
    auto m = LoadPartial(d, rows[0] + i, rest);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadPartial(d, rows[r] + i, rest));
    hn::StoreU(m, d, sums + i);
  }
}

// Output columns [begin, end) of one row, every one with `taps` in-bounds columns starting at
// column_start(ow) + first: each channel chunk's column sums added in W order, then finished.
template <int kTaps, class D, class S>
HWY_INLINE LinePrefetch SumColumns(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t C, int64_t begin,
                                   int64_t end, int64_t column_step, int64_t first_column, int64_t tap_step,
                                   int64_t count, const float* HWY_RESTRICT factors, IntRounding rule,
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
// hot 0.55-0.57 -> 0.45-0.46 ms, cold 0.81-0.82 -> 0.75).
template <int kVectors, class D, class S>
HWY_NOINLINE LinePrefetch SumSevenColumnsInRegisters(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t begin,
                                                     int64_t end, int64_t first_column,
                                                     const float* HWY_RESTRICT factors, IntRounding rule,
                                                     S* HWY_RESTRICT dst, LinePrefetch prefetch) {
  constexpr int64_t L = 16, C = kVectors * L;
  const hn::Rebind<float, D> df;
  using V = hn::Vec<D>;
  V last[kVectors], p2[kVectors][2], p4[kVectors][3];  // c[ow + 5]; p2[ow + 3], p2[ow + 4]; p4[ow .. ow + 2]
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
      StoreAs(FinishAverage(d, hn::Add(hn::Add(p4[v][0], p2[v][1]), fresh), factor, rule), d, out + v * L);
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
HWY_INLINE void SumRowsAnyCount(D d, const S* const* rows, size_t count, int64_t length, hn::TFromD<D>* sums) {
  if (count == 2) return SumRows<2>(d, rows, count, length, sums);
  if (count == 3) return SumRows<3>(d, rows, count, length, sums);
  SumRows<0>(d, rows, count, length, sums);
}

template <class D, class S>
HWY_INLINE LinePrefetch SumColumnsAnyCount(D d, const hn::TFromD<D>* sums, int64_t C, int64_t begin, int64_t end,
                                           int64_t column_step, int64_t first_column, int64_t tap_step,
                                           int64_t count, const float* factors, IntRounding rule, S* dst,
                                           LinePrefetch prefetch) {
  const auto sum = [&](auto taps) HWY_ATTR {
    return SumColumns<taps()>(d, sums, C, begin, end, column_step, first_column, tap_step, count, factors, rule,
                              dst, prefetch);
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
// each output vector costs one load per window row and stride columns, not a store and kw loads more.

// The sum over the window's rows of x[offset .. offset + L) (kRows of them, or `count` when 0).
template <int kRows, class D, class S>
HWY_INLINE hn::Vec<D> ColumnSum(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t offset) {
  const size_t n = kRows > 0 ? static_cast<size_t>(kRows) : count;
  auto m = LoadAs(d, rows[0] + offset);
  for (size_t r = 1; r < n; ++r) m = hn::Add(m, LoadAs(d, rows[r] + offset));
  return m;
}

// sums[v] = ColumnSum at offset + v * Lanes, for v < kVectors.
template <int kVectors, int kRows, class D, class S>
HWY_INLINE void ColumnSums(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t offset, hn::Vec<D>* sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
#pragma GCC unroll 4
  for (int v = 0; v < kVectors; ++v) sums[v] = ColumnSum<kRows>(d, rows, count, offset + v * L);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// 32 quotients (two vectors of 16 i32 lanes, each within the storage type's range) as 32 bytes
// in order: packed with saturation within 128-bit blocks, then the blocks' dwords gathered. All in
// registers: GCC folds a narrowing VPMOVSDB followed by a masked store into its memory form, which
// took 14% of the kernel's samples on Zen 5.
template <class S>
HWY_INLINE __m256i NarrowQuotients(__m512i first16, __m512i next16) {
  const __m512i words = _mm512_packs_epi32(first16, next16);  // block k: first16[4k..4k+3], next16[4k..4k+3]
  const __m512i bytes = std::is_signed_v<S> ? _mm512_packs_epi16(words, words) : _mm512_packus_epi16(words, words);
  // Block k's dword 0 holds first16[4k..4k+3], dword 1 next16[4k..4k+3].
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_castsi512_si256(_mm512_permutexvar_epi32(order, bytes));
}

// finish(sums) as 32 bytes, from 32 sums in 16-bit lanes and their factors.
template <class S>
HWY_INLINE __m256i FinishInt8Vector(__m512i sums, hn::Vec<hn::ScalableTag<float>> factors_lo,
                                    hn::Vec<hn::ScalableTag<float>> factors_hi, IntRounding rule) {
  const hn::ScalableTag<int32_t> d32;
  const auto quotient = [&](__m256i sum16, hn::Vec<hn::ScalableTag<float>> factors) HWY_ATTR {
    return FinishAverage(d32, hn::Vec<decltype(d32)>{_mm512_cvtepi16_epi32(sum16)}, factors, rule).raw;
  };
  return NarrowQuotients<S>(quotient(_mm512_castsi512_si256(sums), factors_lo),
                            quotient(_mm512_extracti64x4_epi64(sums, 1), factors_hi));
}

#endif

// finish(sum) stored as S, for sums in 16-bit lanes (the 8-bit types' windows of at most 3x3 taps
// in SlideColumns: |sum| <= 9 * 255): each half widened to 32 bits and finished as FinishAverage
// does, so the quotients are the same.
#if HWY_TARGET != HWY_SCALAR
template <class D16, class S>
HWY_INLINE void StoreAverageOfHalfWords(D16, hn::Vec<D16> sum, float factor, IntRounding rule, S* HWY_RESTRICT dst) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D16()) == 32) {  // one 32-byte store (FinishInt8Vector: packed in registers)
    const auto f = hn::Set(hn::ScalableTag<float>(), factor);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), FinishInt8Vector<S>(sum.raw, f, f, rule));
    return;
  }
#endif
  const hn::Repartition<int32_t, D16> d32;
  const hn::Half<D16> dh;
  const auto f = hn::Set(hn::Rebind<float, decltype(d32)>(), factor);
  StoreAs(FinishAverage(d32, hn::PromoteTo(d32, hn::LowerHalf(dh, sum)), f, rule), d32, dst);
  StoreAs(FinishAverage(d32, hn::PromoteTo(d32, hn::UpperHalf(dh, sum)), f, rule), d32, dst + hn::Lanes(d32));
}
#endif

// Output columns [begin, end) of one row, each with kTaps in-bounds columns starting at input
// column ow * kStride - pad, kVectors channel vectors at a time (C >= kVectors * Lanes: the last
// chunk overlaps the one before). The next output row's new rows (`ahead`) are prefetched in
// order, a line per row and input column step, which keeps cold input streaming.
template <int kTaps, int kStride, int kRows, int kVectors, class D, class S>
HWY_NOINLINE void SlideColumns(D d, const S* const* HWY_RESTRICT window_rows, size_t row_count,
                               const S* const* HWY_RESTRICT ahead, size_t ahead_count, int64_t C,
                               int64_t begin, int64_t end, int64_t pad, const float* HWY_RESTRICT factors,
                               IntRounding rule, S* HWY_RESTRICT dst) {
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
    if constexpr (kTaps == 3 && kStride == 1) ColumnSums<V, kRows>(d, r, row_count, first + C, carry1);
    for (int64_t ow = begin, at = first; ow < end; ++ow, at += kStride * C, out += C) {
      for (size_t a = 0; a < ahead_count; ++a)
        for (int k = 0; k < V * kStride; ++k)
          __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(ahead[a]) + prefetch_offset +
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
        for (int v = 0; v < V; ++v) StoreAverageOfHalfWords(d, sum[v], factors[ow], rule, out + v * L);
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
HWY_NOINLINE void SlidePixels(D d, const S* const* HWY_RESTRICT window_rows, size_t row_count, int64_t C,
                              int64_t begin, int64_t end, int64_t pad, const float* HWY_RESTRICT factors,
                              IntRounding rule, hn::TFromD<D>* HWY_RESTRICT ring, S* HWY_RESTRICT dst) {
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
// output's alone. Inception's layer (192 channels), 1 thread, Zen 5, in one process: cold 0.59 ->
// 0.47 ms; hot 0.26 -> 0.28 (the ring's store and loads per vector cost little hot, but slowed the
// streams from memory). kVectors is a constant: a loop the compiler leaves rolled keeps the arrays
// in memory, which is the ring again (measured 0.64 ms cold).
constexpr int pixel_register_vectors = 12;

template <int kTaps, int kRows, int kVectors, class D, class S>
HWY_NOINLINE void SlidePixelsInRegisters(D d, const S* const* HWY_RESTRICT window_rows, size_t row_count,
                                         int64_t begin, int64_t end, int64_t pad, const float* HWY_RESTRICT factors,
                                         IntRounding rule, S* HWY_RESTRICT dst) {
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
HWY_INLINE void WindowColumn(D d, const S* const* rows, size_t row_count, int64_t C, int64_t first, int64_t tap_step,
                             int64_t taps, hn::Vec<hn::Rebind<float, D>> factor, IntRounding rule, S* dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t chunk = 0; chunk < C; chunk += L) {
    const int64_t c = std::min(chunk, C - L);
    auto sum = ColumnSum<0>(d, rows, row_count, first + c);
    for (int64_t t = 1; t < taps; ++t) sum = hn::Add(sum, ColumnSum<0>(d, rows, row_count, first + t * tap_step + c));
    StoreAs(FinishAverage(d, sum, factor, rule), d, dst + c);
  }
}

// SlideColumns for the window's taps and stride (2 or 3 at 1 or 2, at most 3 rows), with as many
// vectors of channels per pass as C has room for (four at stride 1 where `four_vectors`; the
// four-vector variants are compiled only where kMayTakeFour).
template <bool kMayTakeFour, class D, class S>
HWY_INLINE void SlideColumnsOfShape(D d, const S* const* rows, size_t row_count, const S* const* ahead,
                                    size_t ahead_count, const AxisTable& AW, int64_t C, int64_t begin, int64_t end,
                                    bool four_vectors, const float* factors, IntRounding rule, S* dst) {
  const int64_t pad = AW.pad_begin;
  const bool two_vectors = C >= 2 * static_cast<int64_t>(hn::Lanes(d));
  const auto slide = [&](auto taps, auto stride) HWY_ATTR {
    if constexpr (kMayTakeFour) {
      if (row_count == 3 && four_vectors && stride() == 1)
        return SlideColumns<taps(), stride(), 3, 4>(d, rows, row_count, ahead, ahead_count, C, begin, end, pad, factors,
                                                    rule, dst);
    }
    if (row_count == 3 && two_vectors)
      SlideColumns<taps(), stride(), 3, 2>(d, rows, row_count, ahead, ahead_count, C, begin, end, pad, factors, rule, dst);
    else if (row_count == 3)
      SlideColumns<taps(), stride(), 3, 1>(d, rows, row_count, ahead, ahead_count, C, begin, end, pad, factors, rule, dst);
    else if (two_vectors)
      SlideColumns<taps(), stride(), 0, 2>(d, rows, row_count, ahead, ahead_count, C, begin, end, pad, factors, rule, dst);
    else
      SlideColumns<taps(), stride(), 0, 1>(d, rows, row_count, ahead, ahead_count, C, begin, end, pad, factors, rule, dst);
  };
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using Three = std::integral_constant<int, 3>;
  if (AW.kernel == 3) {
    if (AW.stride == 1) slide(Three(), One());
    else slide(Three(), Two());
  } else {
    if (AW.stride == 1) slide(Two(), One());
    else slide(Two(), Two());
  }
}

// avg_nhwc's direct path for the interior columns [begin, end), when it applies.
template <class D, class S>
HWY_INLINE bool SlideColumnsIfShaped(D d, const S* const* rows, size_t row_count, const S* const* ahead,
                                     size_t ahead_count, const AxisTable& AW, int64_t C, int64_t begin, int64_t end,
                                     const float* factors, IntRounding rule, hn::TFromD<D>* ring, S* dst) {
  // Windows of more than three rows (3-D ones) measured slower here than the row of sums.
  if (AW.dilation != 1 || C < static_cast<int64_t>(hn::Lanes(d)) || (AW.stride != 1 && AW.stride != 2) ||
      (AW.kernel != 2 && AW.kernel != 3) || row_count > 3)
    return false;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (sizeof(S) == 1 && std::is_integral_v<S>) {
    // 8-bit inputs: their sums over at most 3x3 taps fit 16-bit lanes, twice the channels per
    // vector (the int8 benchmark layer in NHWC, 1 thread: hot 0.064 -> 0.056 ms).
    const hn::ScalableTag<int16_t> d16;
    if (C >= static_cast<int64_t>(hn::Lanes(d16))) {
      SlideColumnsOfShape<false>(d16, rows, row_count, ahead, ahead_count, AW, C, begin, end, false, factors, rule, dst);
      return true;
    }
  }
#endif
  const int64_t pad = AW.pad_begin;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  // Four vectors of channels per pass along W at stride 1 where the last pass overlaps the one
  // before by little (Inception's 192 channels: 3 passes over each row, not 6; cold 0.71 -> 0.60
  // ms). Six spill registers (1.7x slower); at stride 2 (the int8 layer) four measured 7% slower.
  const bool four_vectors = C % (4 * L) == 0 || C >= 8 * L;
  // More than one chunk, and a ring that takes at most half of L1 (ResNet-style 2048 channels on
  // an 8x8 plane measured 1.25x slower with it): each pixel's channels in turn.
  const bool ring_fits = AW.kernel * C * static_cast<int64_t>(sizeof(hn::TFromD<D>)) <= (int64_t{16} << 10);
  if (AW.stride == 1 && C > 4 * L && ring_fits) {
    // f32 rows of 5 .. pixel_register_vectors whole vectors of channels, 3 rows: in registers.
    const int64_t register_vectors =
        std::is_same_v<S, float> && hn::MaxLanes(d) == 16 && C % L == 0 && row_count == 3 ? C / L : 0;
    const auto slide_pixels = [&](auto taps) HWY_ATTR {
      bool in_registers = false;
      [&]<int... kV>(std::integer_sequence<int, kV...>) HWY_ATTR {
        constexpr int kFewest = 5;
        ((register_vectors == kFewest + kV
              ? (SlidePixelsInRegisters<taps(), 3, kFewest + kV>(d, rows, row_count, begin, end, pad, factors, rule, dst),
                 in_registers = true)
              : false),
         ...);
      }(std::make_integer_sequence<int, pixel_register_vectors - 4>());
      if (in_registers)
        return;
      else if (row_count == 3)
        SlidePixels<taps(), 3>(d, rows, row_count, C, begin, end, pad, factors, rule, ring, dst);
      else
        SlidePixels<taps(), 0>(d, rows, row_count, C, begin, end, pad, factors, rule, ring, dst);
    };
    if (AW.kernel == 3) slide_pixels(std::integral_constant<int, 3>());
    else slide_pixels(std::integral_constant<int, 2>());
    return true;
  }
  SlideColumnsOfShape<true>(d, rows, row_count, ahead, ahead_count, AW, C, begin, end, four_vectors, factors, rule, dst);
  return true;
}

// The input rows of NHWC output row `row` (n, od, oh), in scan order; returns their number.
template <class S>
size_t NhwcWindowRows(const Plan& P, const S* in, int64_t row, const S** sources) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1];
  const int64_t n = row / (AD.out * AH.out), od = (row / AH.out) % AD.out, oh = row % AH.out;
  const int64_t row_length = P.axis[2].in * P.channels;
  size_t count = 0;
  for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)]; ++td) {
    const int64_t id = AD.start(od) + td * AD.dilation;
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)]; ++th) {
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
  size_t operator()(int64_t row, const S** sources) const { return NhwcWindowRows(*plan, in, row, sources); }
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
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)]; ++th)
      sources[count++] = sums + (AH.start(oh) + th * AH.dilation) * row_length;
    return count;
  }
};

// The k + 3 rows that SumRowQuad reads for output rows row .. row + 3, when each of their windows
// (k rows) is the one before it moved down by one row. `window` and `next` are the windows of
// rows row and row + 1; `later` has room for two more windows.
template <class S, class RowsOf>
bool QuadRows(const S* const* window, size_t k, const S* const* next, size_t next_count, const RowsOf& rows_of,
              int64_t row, const S** later, const S** quad) {
  const auto moved_by_one = [k](const S* const* a, const S* const* b, size_t b_count) {
    return b_count == k && std::equal(a + 1, a + k, b);
  };
  const S** third = later;
  const S** fourth = later + k;
  if (!moved_by_one(window, next, next_count) || !moved_by_one(next, third, rows_of(row + 2, third)) ||
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
void AvgNhwcRows(const Plan& P, const RunArgs& a, const RowsOf& rows_of, bool pair_rows, int64_t begin, int64_t end) {
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
  const bool seven = AW.kernel == 7 && AW.stride == 1 && AW.dilation == 1 && hn::MaxLanes(d) == 16 &&
                     (C == L || C == 2 * L);
  const bool seven_borders = seven && AW.pad_begin < AW.kernel && OW <= W + AW.pad_begin;
  const int64_t sums_before = seven_borders ? AW.pad_begin * C : 0;
  const int64_t sums_after = seven_borders ? std::max<int64_t>(0, OW + AW.kernel - 1 - AW.pad_begin - W) * C : 0;
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
    if (row == begin) row_count = rows_of(row, sources);
    else std::swap(sources, next_sources);
    next_count = row + 1 < end ? rows_of(row + 1, next_sources) : 0;
    const size_t ahead_count = std::min(next_count, static_cast<size_t>(std::min(AH.stride, AH.kernel)));
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
                        SlideColumnsIfShaped(d, sources, row_count, ahead, ahead_count, AW, C, ib, ie, factors, rule,
                                             ring, dst_row);
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
          QuadRows(sources, row_count, next_sources, next_count, rows_of, row, later_sources, quad_rows)) {
        SumRowQuad(d, quad_rows, row_count, row_length, group);
        group_end = row + 4;
      } else if (row_count > 3 && pair_rows && row + 1 < end &&
                 split.Split(sources, row_count, next_sources, next_count)) {
        SumRowPair(d, split.shared, split.shared_count, split.only_a, split.only_b, split.only_count, row_length,
                   group[0], group[1]);
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
      prefetch = SumSevenColumnsInRegisters<2>(d, sums, run_begin, run_end, -AW.pad_begin * C, factors, rule, dst_row,
                                               prefetch);
    else if (interior && !direct && seven)
      prefetch = SumSevenColumnsInRegisters<1>(d, sums, run_begin, run_end, -AW.pad_begin * C, factors, rule, dst_row,
                                               prefetch);
    else if (interior && !direct)
      prefetch = SumColumnsAnyCount(d, sums, C, ib, ie, column_step, -AW.pad_begin * C, tap_step, AW.kernel,
                                    factors, rule, dst_row, prefetch);
    for (int64_t ow = 0; ow < OW; ++ow) {
      if (ow == run_begin && interior) ow = run_end;
      if (ow >= OW) break;
      const int64_t first = AW.first[static_cast<size_t>(ow)], past = AW.past[static_cast<size_t>(ow)];
      const int64_t divisor = divisors[ow];
      if (rows_empty || first >= past || divisor == 0) {
        for (int64_t c = 0; c < C; ++c)
          WriteEmpty(P, a, n, c, (row * OW + ow) * C + c, divisor == 0);
        continue;
      }
      const int64_t first_column = (first * AW.dilation - AW.pad_begin) * C;
      if (direct)
        WindowColumn(d, sources, row_count, C, ow * column_step + first_column, tap_step, past - first,
                     hn::Set(hn::Rebind<float, D>(), factors[ow]), rule, dst_row + ow * C);
      else
        prefetch = SumColumnsAnyCount(d, sums, C, ow, ow + 1, column_step, first_column, tap_step, past - first,
                                      factors, rule, dst_row, prefetch);
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
  // rows come from there (the 3-D layer cold: 0.42 -> 0.33 ms; hot, 0.17 -> 0.20, the plane is
  // read back from L2; summed and read back in chunks of rows, 0.39 and 0.22). Other storage
  // types would need the kernels below to take rows of the sum type.
  if constexpr (std::is_same_v<S, Acc>) {
    if (AD.kernel > 1 && plane_length * static_cast<int64_t>(sizeof(Acc)) <= nhwc_slice_sums_bytes) {
      ParallelRanges(a.threads, P.batch * AD.out, [&](int64_t begin, int64_t end) HWY_ATTR {
        thread_local std::vector<Acc> plane_tl;
        thread_local std::vector<const S*> slices_tl;
        Acc* plane_sums = LineScratch(plane_tl, static_cast<size_t>(plane_length));
        const S** slices = Scratch(slices_tl, static_cast<size_t>(AD.kernel));
        const hn::ScalableTag<Acc> d;
        for (int64_t unit = begin; unit < end; ++unit) {  // (n, od)
          const int64_t n = unit / AD.out, od = unit % AD.out;
          size_t count = 0;
          for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)]; ++td)
            slices[count++] = in + (n * AD.in + AD.start(od) + td * AD.dilation) * plane_length;
          if (count > 0) SumSlices(d, slices, count, AH.in, AW.in * P.channels, AW.in * P.channels, plane_sums);
          AvgNhwcRows<S, Acc>(P, a, NhwcSliceSumRows<Acc>{&P, plane_sums}, true, unit * AH.out, (unit + 1) * AH.out);
        }
      });
      return;
    }
  }
  ParallelRanges(a.threads, P.batch * AD.out * AH.out, [&](int64_t begin, int64_t end) HWY_ATTR {
    AvgNhwcRows<S, Acc>(P, a, NhwcInputRows<S>{&P, in}, AD.kernel == 1, begin, end);
  });
}

// ---- avg_nchw: per output row, the window's input rows summed, then taps along W --------------
//
// In NCHW a plane's rows are contiguous, so the window's rows are summed whole into a row of
// sums, and each output vector along W adds its kw taps from that row (strided loads for a
// stride above 1). The row of sums has the problem's padding on both sides as -0, the exact
// additive identity, so the border windows need no case of their own.

// dst[ow] = finish(sum over t < taps of sums[ow * stride + t * dilation]), for ow < out_w.
template <int kTaps, class D, class S>
HWY_INLINE void SumAlongW(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w, int64_t stride,
                          int64_t dilation, int64_t taps_w, const float* HWY_RESTRICT factors, IntRounding rule,
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
    if (ow + L <= out_w) StoreAs(m, d, dst + ow);
    else StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool unit_stride_w_by_pairs = true;

// Lanes idx[i] of the pair (lo, hi), 32-bit lanes: lo's lane j for j < 16, hi's lane j - 16 above
// (one VPERMT2PS).
template <class D>
HWY_INLINE hn::Vec<D> LanesOfPair(D d, hn::Vec<D> lo, hn::Vec<D> hi, hn::Vec<hn::RebindToSigned<D>> idx) {
  const hn::Repartition<float, D> df;
  return hn::BitCast(d, hn::Vec<decltype(df)>{_mm512_permutex2var_ps(hn::BitCast(df, lo).raw, idx.raw,
                                                                        hn::BitCast(df, hi).raw)});
}

// Lanes kShift .. kShift + L - 1 of the pair (lo, hi), 32-bit lanes, 0 <= kShift < L (VALIGND).
template <int kShift, class D>
HWY_INLINE hn::Vec<D> LanesFrom(D d, hn::Vec<D> lo, hn::Vec<D> hi) {
  if constexpr (kShift == 0) return lo;
  const hn::RebindToSigned<D> di;
  return hn::BitCast(d, hn::Vec<decltype(di)>{_mm512_alignr_epi32(hn::BitCast(di, hi).raw, hn::BitCast(di, lo).raw, kShift)});
}

// SumAlongW for stride 1 and dilation 1 on AVX-512, for at most L + 1 taps: dst[ow] =
// finish(sum over t < taps of sums[ow + t]). A tap at a column that is not a multiple of 16 would
// be a load across two cache lines (the 7x7 window: six of its seven taps); here `sums` is 64-byte
// aligned, and each output vector loads one new aligned block: its taps are lanes of the pair of
// blocks (permutes). Reads sums up to round_up(out_w, L) + L.
// kTaps, when nonzero, is `taps` known at compile time: the tap loop is written out, and its lane
// indices are constants (the 7x7 layer, 1 thread, Zen 5, one kernel alone: hot 0.50-0.52 -> 0.42-0.43
// ms, cold 0.63-0.65 -> 0.60; 7 taps now go by doubling, SumSevenAlongWByDoubling below).
template <int kTaps, class D, class S>
HWY_INLINE void SumAlongWByPairs(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w, int64_t taps,
                                 const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  if constexpr (kTaps > 0) taps = kTaps;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::RebindToSigned<D> di;
  const hn::Rebind<float, D> df;
  const auto first_lanes = hn::Iota(di, 0), one = hn::Set(di, 1);
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
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
    if (ow + L <= out_w) StoreAs(m, d, dst + ow);
    else StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
    b0 = b1;
  }
}

// SumAlongWByPairs for 7 taps, by doubling: with s the row of sums, p2[i] = s[i] + s[i + 1] and
// p4[i] = p2[i] + p2[i + 2], dst[ow + i] = finish((p4[i] + p2[i + 4]) + s[i + 6]), lanes of the
// pair of aligned blocks at ow (VALIGND). Each block of p2 is formed once, from its block and the
// next, and carried to the next output vector: 4 lane shifts and 4 additions per output vector,
// where the taps one by one take 6 permutes and 7 additions (the 7x7 layer, 1 thread, one kernel
// alone: hot 0.39 -> 0.37 ms, cold 0.57 either way). Reads sums up to round_up(out_w, L) + 2 L.
template <class D, class S>
HWY_INLINE void SumSevenAlongWByDoubling(D d, const hn::TFromD<D>* HWY_RESTRICT sums, int64_t out_w,
                                         const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
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
    if (ow + L <= out_w) StoreAs(m, d, dst + ow);
    else StorePartial(m, d, dst + ow, static_cast<size_t>(out_w - ow));
    s0 = s1;
    s1 = s2;
    p0 = p1;
  }
}
#else
constexpr bool unit_stride_w_by_pairs = false;
#endif

// An NCHW output row: its plane (n * C + c), depth and height indices, stepped without dividing.
struct OutputRow {
  int64_t plane = 0, od = 0, oh = 0;
  OutputRow(const Plan& P, int64_t row)
      : plane(row / (P.axis[0].out * P.axis[1].out)), od((row / P.axis[1].out) % P.axis[0].out), oh(row % P.axis[1].out) {}
  void Next(const Plan& P) {
    if (++oh < P.axis[1].out) return;
    oh = 0;
    if (++od < P.axis[0].out) return;
    od = 0;
    ++plane;
  }
};

// The input rows of an output row of an NCHW problem, in scan order; returns their number.
template <class S>
HWY_INLINE size_t WindowRows(const Plan& P, const S* in, const OutputRow& at, const S** sources) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1];
  const int64_t od = at.od, oh = at.oh;
  const S* plane = in + at.plane * P.in_plane;
  size_t count = 0;
  for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)]; ++td) {
    const int64_t id = AD.start(od) + td * AD.dilation;
    for (int64_t th = AH.first[static_cast<size_t>(oh)]; th < AH.past[static_cast<size_t>(oh)]; ++th) {
      const int64_t ih = AH.start(oh) + th * AH.dilation;
      sources[count++] = plane + (id * AH.in + ih) * P.axis[2].in;
    }
  }
  return count;
}

// The input rows of an output row, from the input itself: its window's depth slices and rows.
template <class S>
struct InputWindowRows {
  const Plan* plan;
  const S* in;
  size_t operator()(const OutputRow& at, const S** sources) const { return WindowRows(*plan, in, at, sources); }
};

// The rows of an output row's window along H in the plane of its depth window's sums (SumSlices),
// `row_stride` apart; none when the depth window is empty.
template <class Acc>
struct SliceSumRows {
  const AxisTable* depth;
  const AxisTable* height;
  const Acc* sums;
  int64_t row_stride;
  size_t operator()(const OutputRow& at, const Acc** sources) const {
    if (depth->count(at.od) == 0) return 0;
    const AxisTable& AH = *height;
    size_t count = 0;
    for (int64_t th = AH.first[static_cast<size_t>(at.oh)]; th < AH.past[static_cast<size_t>(at.oh)]; ++th)
      sources[count++] = sums + (AH.start(at.oh) + th * AH.dilation) * row_stride;
    return count;
  }
};


#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
constexpr bool w_taps_in_registers = true;
#else
constexpr bool w_taps_in_registers = false;
#endif
constexpr int64_t register_row_vectors = 4;  // rows of at most 4 vectors (64 f32) are kept in registers
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
    if (!w_taps_in_registers || AW.stride > 2 || AW.dilation != 1 || AW.kernel > register_row_taps) return false;
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
// stay in registers: no row of sums is stored and read back (the 3-D layer hot: 0.38 -> 0.13 ms).
// idx[t] are tap t's permute indices: lane + shift, or lane + L + shift for a negative shift.
template <class D, class R, class S>
HWY_NOINLINE void SumRowInRegisters(D d, const R* const* HWY_RESTRICT rows, size_t count, const RegisterTaps& taps,
                                    const hn::Vec<hn::RebindToSigned<D>>* HWY_RESTRICT idx, int64_t out_w,
                                    const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  constexpr int64_t kV = register_row_vectors;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
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
      const auto tap = shift == 0 ? phase[0] : shift > 0 ? LanesOfPair(d, phase[0], phase[1], idx[t])
                                                         : LanesOfPair(d, phase[-1], phase[0], idx[t]);
      if (t % 2 == 0) m0 = hn::Add(m0, tap);
      else m1 = hn::Add(m1, tap);
    }
    const auto m = FinishAverage(d, hn::Add(m0, m1), hn::LoadU(df, factors + v * L), rule);
    if ((v + 1) * L <= out_w) StoreAs(m, d, dst + v * L);
    else StorePartial(m, d, dst + v * L, static_cast<size_t>(out_w - v * L));
  }
}

// One output row of SumShortRows: `count` rows from `row`, `row_step` apart.
template <int kStride, int kTaps, int kPad, class D, class R, class S>
HWY_INLINE void SumShortRow(D d, const R* HWY_RESTRICT row, int64_t row_step, int64_t count, int64_t out_w,
                             const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  constexpr int kV = static_cast<int>(register_row_vectors), kP = kV / kStride;
  constexpr int kL = 16;
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
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
  const auto phase_at = [&](int p, int v) HWY_ATTR { return v >= 0 && v < kP ? phases[p][v] : identity; };
  const auto tap = [&]<int kT>(int v) HWY_ATTR {
    constexpr int j = kT - kPad, p = ((j % kStride) + kStride) % kStride, shift = (j - p) / kStride;
    static_assert(shift > -kL && shift < kL);
    if constexpr (shift >= 0) return LanesFrom<shift>(d, phase_at(p, v), phase_at(p, v + 1));
    else return LanesFrom<kL + shift>(d, phase_at(p, v - 1), phase_at(p, v));
  };
  const int64_t out_vectors = (out_w + kL - 1) / kL;
#pragma GCC unroll 4
  for (int v = 0; v < kV; ++v) {
    if (v >= out_vectors) break;
    auto m = [&]<int... kT>(std::integer_sequence<int, kT...>) HWY_ATTR {
      auto sum = identity;
      ((sum = hn::Add(sum, tap.template operator()<kT>(v))), ...);
      return sum;
    }(std::make_integer_sequence<int, kTaps>());
    m = FinishAverage(d, m, hn::LoadU(df, factors + v * kL), rule);
    if ((v + 1) * kL <= out_w) StoreAs(m, d, dst + v * kL);
    else StorePartial(m, d, dst + v * kL, static_cast<size_t>(out_w - v * kL));
  }
}

// SumRowInRegisters for one shape of W window, all of it known at compile time, so that every
// vector stays in a register (the general one keeps its phases on the stack and branches per tap:
// 3x slower), over a run of output rows [oh_begin, oh_end) of a plane of sums whose rows are
// padded to register_row_vectors whole vectors, `row_stride` apart, all with the one factor
// table: the row loop is here, not a call per row (the 3-D layer hot: 0.22 -> 0.17 ms).
template <int kStride, int kTaps, int kPad, class D, class R, class S>
HWY_NOINLINE void SumShortRows(D d, const R* HWY_RESTRICT plane, int64_t row_stride, const AxisTable& AH,
                               int64_t oh_begin, int64_t oh_end, int64_t out_w, const float* HWY_RESTRICT factors,
                               IntRounding rule, S* HWY_RESTRICT dst) {
  for (int64_t oh = oh_begin; oh < oh_end; ++oh, dst += out_w) {
    const int64_t first = AH.first[static_cast<size_t>(oh)], count = AH.past[static_cast<size_t>(oh)] - first;
    const R* row = plane + (AH.start(oh) + first * AH.dilation) * row_stride;
    SumShortRow<kStride, kTaps, kPad>(d, row, AH.dilation * row_stride, count, out_w, factors, rule, dst);
  }
}
#endif

// The factor tables of NCHW output rows' divisors (UseRowFactors): per output column its factor,
// and the columns written as empty. The tables of the last `kept_tables` row factor keys are kept:
// the border rows of each plane change the key row by row (7x7: seven tables per plane), and
// building them again took 7% of the 7x7 layer.
struct RowFactorTable {
  static constexpr int kept_tables = 8;
  struct Kept {
    float* factors = nullptr;
    int64_t* empty_columns = nullptr;
    int64_t empty_count = 0, key = -1;
  };
  std::array<Kept, kept_tables> kept{};
  const Kept* current = nullptr;  // the current row's table, one of the kept ones
  int next_kept = 0;              // the slot a new key takes (round robin)

  int64_t factors_for() const { return current ? current->key : -1; }  // the current table's key
  const float* factors() const { return current->factors; }
  const int64_t* empty_columns() const { return current->empty_columns; }
  int64_t empty_count() const { return current->empty_count; }

  // Tables for rows of out_w outputs, from per-thread vectors; each table's factors start on a
  // cache line and end with `lanes` of 1 (lanes past the row: finite, never stored).
  void Allocate(std::vector<float>& factors_tl, std::vector<int64_t>& empty_tl, int64_t out_w, int64_t lanes) {
    const int64_t stride = (out_w + lanes + 15) / 16 * 16;
    float* all_factors = LineScratch(factors_tl, static_cast<size_t>(kept_tables * stride));
    int64_t* all_empty = Scratch(empty_tl, static_cast<size_t>(kept_tables * out_w));
    for (int t = 0; t < kept_tables; ++t) {
      kept[t] = Kept{all_factors + t * stride, all_empty + t * out_w, 0, -1};
      std::fill(kept[t].factors + out_w, kept[t].factors + out_w + lanes, 1.0f);
    }
    current = nullptr;
    next_kept = 0;
  }
};

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
  // SumShortRows for the W window's shape, when there is one; else SumRowInRegisters, a row at a time.
  void (*short_rows)(hn::ScalableTag<Acc>, const R*, int64_t, const AxisTable&, int64_t, int64_t, int64_t,
                     const float*, IntRounding, S*) = nullptr;
#endif
};

// The geometry avg_nchw's rows share.
struct AvgNchwShape {
  int64_t pad = 0, sums_length = 0, prefetch_bytes = 0, row_bytes = 0;
  bool by_pairs = false;
  bool prefetch = true;
  bool pair_rows = false;  // adjacent output rows' windows may share rows: one depth slice, or slice sums
};

template <class D, class S, class Acc, class R>
void InitAvgNchwScratch(D d, const Plan& P, const AvgNchwShape& shape, const RegisterTaps* in_registers,
                        AvgNchwScratch<S, Acc, R>& scratch) {
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
  scratch.in_registers = in_registers != nullptr;  // the row's taps in registers, when they fit (RegisterTaps::Fit)
  if (in_registers) scratch.register_taps = *in_registers;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const hn::ScalableTag<int32_t> di;
  for (int64_t t = 0; t < scratch.register_taps.taps; ++t) {
    const int shift = scratch.register_taps.shift[t];
    scratch.tap_lanes[t] = hn::Add(hn::Iota(di, 0), hn::Set(di, shift >= 0 ? shift : static_cast<int32_t>(L) + shift));
  }
  if (scratch.in_registers && L == 16) {
    const RegisterTaps& taps = scratch.register_taps;
    if (taps.stride == 2 && taps.taps == 3 && AW.pad_begin == 1) scratch.short_rows = SumShortRows<2, 3, 1, D, R, S>;
    if (taps.stride == 2 && taps.taps == 2 && AW.pad_begin == 0) scratch.short_rows = SumShortRows<2, 2, 0, D, R, S>;
    if (taps.stride == 1 && taps.taps == 3 && AW.pad_begin == 1) scratch.short_rows = SumShortRows<1, 3, 1, D, R, S>;
  }
#endif
}

// Makes scratch.current the table of output row (od, oh), when it is not.
template <class Acc>
void UseRowFactors(const Plan& P, int64_t od, int64_t oh, RowFactorTable& scratch) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t key = RowFactorsKey(P, od, oh);
  if (key == scratch.factors_for()) return;
  RowFactorTable::Kept* table = nullptr;
  for (RowFactorTable::Kept& k : scratch.kept)
    if (k.key == key) table = &k;
  if (!table) {
    table = &scratch.kept[static_cast<size_t>(scratch.next_kept)];
    scratch.next_kept = (scratch.next_kept + 1) % RowFactorTable::kept_tables;
    RowFactors<Acc>(P, od, oh, 0, AW.out, table->factors);
    // Divisor 0: the override's, or a factor of the product's (plan.cpp).
    const bool by_product = P.p.divisor != Divisor::override_value;
    const bool row_zero = by_product ? AD.divisor[static_cast<size_t>(od)] == 0 || AH.divisor[static_cast<size_t>(oh)] == 0
                                     : P.p.divisor_override == 0;
    table->empty_count = 0;
    for (int64_t ow = 0; ow < AW.out; ++ow)
      if (row_zero || AW.count(ow) == 0 || (by_product && AW.divisor[static_cast<size_t>(ow)] == 0))
        table->empty_columns[table->empty_count++] = ow;
    table->key = key;
  }
  scratch.current = table;
}

// NCHW output row `row` (at) whose window has no input row: every output written as empty.
inline void WriteEmptyRow(const Plan& P, const RunArgs& a, const OutputRow& at, int64_t row) {
  const int64_t OW = P.axis[2].out;
  for (int64_t ow = 0; ow < OW; ++ow)
    WriteEmpty(P, a, at.plane / P.channels, at.plane % P.channels, row * OW + ow, P.divisor(at.od, at.oh, ow) == 0);
}

// The outputs of NCHW output row `row` (at) that its factor table lists as empty.
inline void WriteEmptyColumns(const Plan& P, const RunArgs& a, const OutputRow& at, int64_t row,
                              const RowFactorTable& table) {
  const int64_t OW = P.axis[2].out;
  for (int64_t e = 0; e < table.empty_count(); ++e) {
    const int64_t ow = table.empty_columns()[e];
    WriteEmpty(P, a, at.plane / P.channels, at.plane % P.channels, row * OW + ow, P.divisor(at.od, at.oh, ow) == 0);
  }
}

// Output rows [begin, end) of avg_nchw, whose input rows `rows_of` gives (R: their element type), in
// batches: 1. each row's input rows summed into a row of sums (unless the row is summed in
// registers), 2. the taps along W, finished.
template <class D, class S, class Acc, class R, class RowsOf>
void AvgNchwRows(D d, const Plan& P, const RunArgs& a, const AvgNchwShape& shape, const RowsOf& rows_of,
                 AvgNchwScratch<S, Acc, R>& scratch, int64_t begin, int64_t end) {
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
  // prefetched for earlier rows (7x7 cold: 1.30 -> 1.18 ms).
  const auto new_rows = [&](size_t count) { return AD.kernel == 1 ? std::min(count, static_cast<size_t>(AH.stride)) : count; };
  for (int64_t first_row = begin; first_row < end; first_row += batch_rows) {
    const int64_t past_row = std::min(end, first_row + batch_rows);
    const OutputRow first_at(P, first_row);
    OutputRow at = first_at;
    for (int64_t row = first_row; row < past_row && !scratch.in_registers; ++row, at.Next(P)) {  // 1.
      const size_t row_count = rows_of(at, sources);
      if (row_count == 0) continue;  // written as empty below
      const size_t fresh = new_rows(row_count);
      if (shape.prefetch) PrefetchRows(sources + (row_count - fresh), fresh, shape.prefetch_bytes, shape.row_bytes);
      Acc* row_sums = sums + (row - first_row) * sums_length + shape.pad;
      if (shape.pair_rows && row + 1 < past_row) {  // with the next row, when their windows share rows
        OutputRow next_at = at;
        next_at.Next(P);
        const size_t next_count = rows_of(next_at, next_sources);
        if (scratch.split.Split(sources, row_count, next_sources, next_count)) {
          const size_t next_fresh = new_rows(next_count);
          if (shape.prefetch)
            PrefetchRows(next_sources + (next_count - next_fresh), next_fresh, shape.prefetch_bytes, shape.row_bytes);
          const SharedRows<R>& split = scratch.split;
          SumRowPair(d, split.shared, split.shared_count, split.only_a, split.only_b, split.only_count, W, row_sums,
                     row_sums + sums_length);
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
    for (int64_t row = first_row; row < past_row; ++row, at.Next(P)) {  // 2. the taps along W, finished
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
          SumRowInRegisters(d, sources, row_count, scratch.register_taps, scratch.tap_lanes, OW, factors, rule, dst);
        }
      } else if (shape.by_pairs) {
        if constexpr (unit_stride_w_by_pairs) {
          if (AW.kernel == 7) SumSevenAlongWByDoubling(d, row_sums, OW, factors, rule, dst);
          else if (AW.kernel == 5) SumAlongWByPairs<5>(d, row_sums, OW, AW.kernel, factors, rule, dst);
          else SumAlongWByPairs<0>(d, row_sums, OW, AW.kernel, factors, rule, dst);
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
  shape.by_pairs = unit_stride_w_by_pairs && AW.stride == 1 && AW.dilation == 1 && AW.kernel <= L + 1;
  // A row of sums: column x of the input at pad + x; -0 before and after, far enough for the last
  // vector's strided loads (L lanes, `stride` apart) of its last tap.
  const int64_t sums_extent = shape.pad + W + L + (OW + L) * AW.stride + (AW.kernel - 1) * AW.dilation + L;
  // Each row from a cache line for SumAlongWByPairs; otherwise as long as it needs to be (the 3-D
  // layer: rounded up to a multiple of 16, 1.07x slower).
  shape.sums_length = shape.by_pairs ? (sums_extent + L - 1) / L * L : sums_extent;
  constexpr int64_t prefetch_rows = 4;  // measured: 2 and 8 are slower on cold input
  shape.row_bytes = W * static_cast<int64_t>(sizeof(S));
  shape.prefetch_bytes = prefetch_rows * AH.stride * shape.row_bytes;
  const S* in = reinterpret_cast<const S*>(a.input);
  RegisterTaps register_taps;
  const bool in_registers = RegisterTaps::Fit(AW, L, &register_taps);
  // A plane of slice sums: rows of whole vectors; register_row_vectors of them when summed in registers.
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
        for (int64_t td = AD.first[static_cast<size_t>(od)]; td < AD.past[static_cast<size_t>(od)]; ++td)
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
                  while (past < AH.out && AH.count(past) > 0 && RowFactorsKey(P, od, past) == key) ++past;
                  scratch.short_rows(d, plane_sums, row_stride, AH, oh, past, OW, scratch.factors(), P.p.int_rounding,
                                     out + oh * OW);
                  oh = past;
                  continue;
                }
              }
              AvgNchwRows<D, S>(d, P, a, shape, rows_of, scratch, unit * AH.out + oh, unit * AH.out + past);
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
  shape.pair_rows = AD.kernel == 1;  // paired across depth slices, the 3-D layer measured 1.45x slower
  ParallelRanges(a.threads, planes * AD.out * AH.out, [&](int64_t begin, int64_t end) HWY_ATTR {
    AvgNchwScratch<S, Acc, S> scratch;
    InitAvgNchwScratch(d, P, shape, nullptr, scratch);
    AvgNchwRows<D, S>(d, P, a, shape, InputWindowRows<S>{&P, in}, scratch, begin, end);
  });
}

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

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
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
          if (j >= AW.out || t < AW.first[static_cast<size_t>(j)] || t >= AW.past[static_cast<size_t>(j)]) continue;
          const int64_t column = AW.start(j) + t * AW.dilation;  // in [0, AW.in): in-bounds
          columns[i] = static_cast<int16_t>(column / 2 + 32 * (column % 2));  // its lane in (even, odd)
          mask |= __mmask32{1} << i;
        }
        present[k] = mask;
      }
  }
};

// The row's 64 bytes as 16-bit lanes: its even columns in `even` (lane i: column 2i), its odd
// ones in `odd` (column 2i + 1), by shifts within each 16-bit lane rather than by widening shuffles,
// which competed with the taps' permutes for the shuffle ports. Bytes past the row are read
// where they are still inside the input (`end`), and summed in lanes no tap selects; the last rows
// of the input are loaded through `row_mask`. On Zen 5 a masked load of a line that is not in
// cache is slow: the int8 benchmark layer cold, 1 thread, took 0.42-0.55 ms with every row
// masked, 0.10 ms so (hot: 0.09 either way).
template <class S>
HWY_INLINE void WidenRow(const S* HWY_RESTRICT row, __mmask64 row_mask, const S* end, __m512i& even, __m512i& odd) {
  const __m512i x = end - row >= 64 ? _mm512_loadu_si512(row) : _mm512_maskz_loadu_epi8(row_mask, row);
  if constexpr (std::is_signed_v<S>) {
    even = _mm512_srai_epi16(_mm512_slli_epi16(x, 8), 8);
    odd = _mm512_srai_epi16(x, 8);
  } else {
    even = _mm512_and_si512(x, _mm512_set1_epi16(0xff));
    odd = _mm512_srli_epi16(x, 8);
  }
}

// The window's input rows of one output row: `depths` slices `depth_step` apart, each with `rows`
// rows `row_step` apart, from `first` (scan order: depth, then row), in an input that ends at `end`.
template <class S>
struct Int8WindowRows {
  const S* first;
  int64_t depths, depth_step, rows, row_step;
  const S* end;
};

// The sum over the window's rows of each column, as WidenRow lays them out (kRows rows of one
// slice when not 0, else the window's slices and rows).
template <int kRows, class S>
HWY_INLINE void SumWindowRows(const Int8WindowRows<S>& window, __mmask64 row_mask, __m512i& even, __m512i& odd) {
  even = _mm512_setzero_si512();
  odd = _mm512_setzero_si512();
  const int64_t depths = kRows > 0 ? 1 : window.depths, rows = kRows > 0 ? kRows : window.rows;
  for (int64_t z = 0; z < depths; ++z) {
#pragma GCC unroll 4
    for (int64_t r = 0; r < rows; ++r) {
      __m512i row_even, row_odd;
      WidenRow(window.first + z * window.depth_step + r * window.row_step, row_mask, window.end, row_even, row_odd);
      even = _mm512_add_epi16(even, row_even);
      odd = _mm512_add_epi16(odd, row_odd);
    }
  }
}

HWY_INLINE __mmask32 FirstBytes(int64_t n) { return n >= 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1; }

// dst[ow] = finish(sum over the window's rows and its W taps), for ow < out_w.
template <class S>
HWY_INLINE void SumInt8Row(const Int8WindowRows<S>& window, __mmask64 row_mask, const Int8RowTaps& taps,
                           int64_t out_w, const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  const hn::ScalableTag<float> df;
  __m512i even, odd;
  SumWindowRows<0>(window, row_mask, even, odd);
  for (int64_t v = 0; v < taps.out_vectors; ++v) {
    __m512i sum = _mm512_setzero_si512();
    for (int64_t t = 0; t < taps.taps; ++t) {
      const size_t k = static_cast<size_t>(t * 2 + v);
      const __m512i columns = _mm512_loadu_si512(taps.lanes.data() + k * 32);
      sum = _mm512_add_epi16(sum, _mm512_maskz_permutex2var_epi16(taps.present[k], even, columns, odd));
    }
    const __m256i q = FinishInt8Vector<S>(sum, hn::LoadU(df, factors + v * 32), hn::LoadU(df, factors + v * 32 + 16), rule);
    _mm256_mask_storeu_epi8(dst + v * 32, FirstBytes(out_w - v * 32), q);
  }
}

constexpr uintptr_t kInt8PrefetchBytes = 4096;  // see SumInt8Rows

// `count` output rows of at most 32 outputs whose windows are kRows whole rows of one slice and
// kTaps columns, with one factor table and no empty output (a 2-D layer's interior rows), the
// first window's rows from `first`: the taps' columns and masks and the factors stay in
// registers (the int8 benchmark layer, hot, 1 thread: 0.18 ms a row at a time, 0.09 so).
// With 3 rows at stride 2 (window_step = 2 row_step) a window's last row is the next one's first,
// widened once. The output rows are contiguous (dst + i * out_w), so a row with at least 32 bytes
// of the run from its start is stored whole: the bytes past its out_w are the next rows', stored
// after it. A masked byte store took a fifth of the kernel's samples on Zen 5.
template <int kRows, int kTaps, class S>
HWY_NOINLINE void SumInt8Rows(const S* HWY_RESTRICT first, int64_t row_step, int64_t window_step, int64_t count,
                              __mmask64 row_mask, const S* end, const Int8RowTaps& taps,
                              const float* HWY_RESTRICT factors, IntRounding rule, int64_t out_w,
                              S* HWY_RESTRICT dst) {
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
    // row: the int8 benchmark layer, cold, went from 0.091 to 0.067 ms at 1 thread (hot
    // 0.066 either way), 0.048 to 0.036 at 2. The hardware prefetcher alone kept too few lines in
    // flight.
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(first + i * window_step) + kInt8PrefetchBytes;
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
      SumWindowRows<kRows>(Int8WindowRows<S>{first + i * window_step, 1, 0, kRows, row_step, end}, row_mask, even,
                           odd);
    }
    __m512i sum = _mm512_maskz_permutex2var_epi16(present[0], even, columns[0], odd);
    for (int t = 1; t < kTaps; ++t)
      sum = _mm512_add_epi16(sum, _mm512_maskz_permutex2var_epi16(present[t], even, columns[t], odd));
    const __m256i q = FinishInt8Vector<S>(sum, factors_lo, factors_hi, rule);
    if ((count - i) * out_w >= 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i * out_w), q);
    else
      _mm256_mask_storeu_epi8(dst + i * out_w, store, q);
  }
}
#endif

template <class S, class Acc>
void AvgInt8Nchw(const Plan& P, const RunArgs& a) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_integral_v<S>) {
    const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
    const int64_t OW = AW.out;
    const __mmask64 row_mask = AW.in >= 64 ? ~__mmask64{0} : (__mmask64{1} << AW.in) - 1;
    const S* in = reinterpret_cast<const S*>(a.input);
    const S* in_end = in + P.batch * P.channels * P.in_plane;
    S* out = reinterpret_cast<S*>(a.output);
    const IntRounding rule = P.p.int_rounding;
    // The shapes with runs of their own (SumInt8Rows): one slice, rows of at most 32 outputs.
    using Run = void (*)(const S*, int64_t, int64_t, int64_t, __mmask64, const S*, const Int8RowTaps&, const float*,
                         IntRounding, int64_t, S*);
    Run run = nullptr;
    if (AD.kernel == 1 && OW <= 32) {
      if (AH.kernel == 3 && AW.kernel == 3) run = SumInt8Rows<3, 3, S>;
      if (AH.kernel == 2 && AW.kernel == 2) run = SumInt8Rows<2, 2, S>;
    }
    ParallelRanges(a.threads, P.batch * P.channels * AD.out * AH.out, [&](int64_t begin, int64_t end) HWY_ATTR {
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
        if (RowFactorsKey(P, od, oh) != scratch.factors_for()) UseRowFactors<Acc>(P, od, oh, scratch);
        const int64_t id = AD.start(od) + AD.first[static_cast<size_t>(od)] * AD.dilation;
        const int64_t ih = AH.start(oh) + AH.first[static_cast<size_t>(oh)] * AH.dilation;
        const S* first = in + at.plane * P.in_plane + (id * AH.in + ih) * AW.in;
        const int64_t run_past = runs.empty() ? 0 : runs[static_cast<size_t>(od * AH.out + oh)];
        if (run_past > oh && scratch.empty_count() == 0) {
          // The run of rows from here with whole windows and this factor table, in this thread's range.
          const int64_t past = std::min(run_past, oh + (end - row));
          run(first, AH.dilation * AW.in, AH.stride * AW.in, past - oh, row_mask, in_end, taps, scratch.factors(), rule,
              OW, out + row * OW);
          row += past - oh;
          at = OutputRow(P, row);
          continue;
        }
        const Int8WindowRows<S> window{first, AD.count(od), AD.dilation * AH.in * AW.in, AH.count(oh),
                                       AH.dilation * AW.in, in_end};
        SumInt8Row(window, row_mask, taps, OW, scratch.factors(), rule, out + row * OW);
        WriteEmptyColumns(P, a, at, row, scratch);
        ++row;
        at.Next(P);
      }
    });
    return;
  }
#endif
  AvgNchw<S, Acc>(P, a);  // below AVX-512 (no VPERMT2W), avg_nchw's code
}

// ---- avg_plane_nchw: a small plane, stride 1, output rows as long as the input's -----------
//
// With stride 1 along both axes and out_w == w, output (oh, ow) sits at oh * w + ow, the flat
// index of input (oh, ow): a whole plane is one array. Its rows are summed along H over the
// whole run of interior output rows at once (flat offsets of whole rows), and then along W,
// where a tap whose column falls outside the row reads the neighbouring row: per-column masks
// replace it by -0, the exact additive identity. No loop runs over a short row.

// dst[f] = finish(sum over tx of (mask[tx][f] ? taps[f + tx * dilation] : -0)), two vectors at a
// time (two independent chains of additions).
template <int kTaps, class D, class S>
HWY_INLINE void MaskedSumsAlongW(D d, const hn::TFromD<D>* HWY_RESTRICT taps, const uint8_t* HWY_RESTRICT masks,
                                 int64_t vectors, int64_t size, int64_t taps_w, int64_t dilation,
                                 const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t kw = kTaps > 0 ? kTaps : taps_w;
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  int64_t v = 0;
  for (; v + 2 <= vectors && (v + 2) * L <= size; v += 2) {
    const int64_t f = v * L;
    auto m0 = identity, m1 = identity;
    for (int64_t tx = 0; tx < kw; ++tx) {
      const uint8_t* mask = masks + (tx * vectors + v) * 8;
      m0 = hn::Add(m0, hn::IfThenElse(hn::LoadMaskBits(d, mask), hn::LoadU(d, taps + f + tx * dilation), identity));
      m1 = hn::Add(m1, hn::IfThenElse(hn::LoadMaskBits(d, mask + 8), hn::LoadU(d, taps + f + L + tx * dilation), identity));
    }
    StoreAs(FinishAverage(d, m0, hn::LoadU(df, factors + f), rule), d, dst + f);
    StoreAs(FinishAverage(d, m1, hn::LoadU(df, factors + f + L), rule), d, dst + f + L);
  }
  for (; v < vectors; ++v) {
    const int64_t f = v * L;
    auto m = identity;
    for (int64_t tx = 0; tx < kw; ++tx)
      m = hn::Add(m, hn::IfThenElse(hn::LoadMaskBits(d, masks + (tx * vectors + v) * 8), hn::LoadU(d, taps + f + tx * dilation),
                                    identity));
    m = FinishAverage(d, m, hn::LoadU(df, factors + f), rule);
    if (f + L <= size) StoreAs(m, d, dst + f);
    else StorePartial(m, d, dst + f, static_cast<size_t>(size - f));
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Lanes i of x[g .. g + L) whose index g + i lies in [lo, hi), the other lanes `identity`;
// nothing outside [lo, hi) is read (x + g may lie before the plane: formed as an integer).
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadFlatRange(D d, const S* x, int64_t g, int64_t lo, int64_t hi, hn::Vec<D> identity) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (g >= lo && g + L <= hi) return LoadAs(d, x + g);
  const int64_t first = std::clamp<int64_t>(lo - g, 0, L), past = std::clamp<int64_t>(hi - g, 0, L);
  if (first >= past) return identity;
  const S* at = reinterpret_cast<const S*>(reinterpret_cast<uintptr_t>(x) + static_cast<uintptr_t>(g) * sizeof(S));
  const auto in = hn::AndNot(hn::FirstN(d, static_cast<size_t>(first)), hn::FirstN(d, static_cast<size_t>(past)));
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) return hn::IfThenElse(in, hn::MaskedLoad(in, d, at), identity);
  alignas(64) S lanes[16];
  static_assert(HWY_MAX_BYTES / 4 == 16, "32-bit lanes of a 512-bit vector");
  for (int64_t i = 0; i < L; ++i) lanes[i] = i >= first && i < past ? at[i] : S{};
  return hn::IfThenElse(in, LoadAs(d, lanes), identity);
}

// a + b in the lanes of `where`, `other` elsewhere: one masked VADDPS or VPADDD.
template <class D>
HWY_INLINE hn::Vec<D> AddWhere(D, hn::Mask<D> where, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> other) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) return hn::Vec<D>{_mm512_mask_add_ps(other.raw, where.raw, a.raw, b.raw)};
  else return hn::Vec<D>{_mm512_mask_add_epi32(other.raw, where.raw, a.raw, b.raw)};
}

// The column sums of flat outputs f .. f + L of a 3x3 window at stride 1 and pad 1: rows oh - 1
// (present for f >= W), oh and oh + 1 (present for f < size - W), added in row order as SumRows does.
template <class D, class S>
HWY_INLINE hn::Vec<D> PlaneColumnSums(D d, const S* HWY_RESTRICT x, int64_t W, int64_t size, int64_t f,
                                      hn::Vec<D> identity) {
  const auto above = LoadFlatRange(d, x, f - W, 0, size - W, identity);
  const auto middle = LoadFlatRange(d, x, f, 0, size, identity);
  const auto below = LoadFlatRange(d, x, f + W, W, size, identity);
  return hn::Add(hn::Add(above, middle), below);
}

// AvgPlane3x3's output vector v from the column sums of vectors v - 1, v and v + 1: the taps
// ow - 1, ow and ow + 1. The middle one is always in the row (pad 1). A tap outside it adds -0
// (or 0) in MaskedSumsAlongW, which leaves the other operand as it is: here it is not added.
// Which lanes add the outer taps comes from `tap_flags` (bit tx set where tap tx is in the row)
// by VPTESTMD. On Zen 5 that is much cheaper than loading the mask bits into a mask
// register (KMOVW from memory, or through a general register): a stand-alone loop of this step
// over Inception's 35x35 planes, in L1, took 120 -> 90 ns a plane.
template <class D, class S>
HWY_INLINE void Plane3x3Output(D d, const int32_t* HWY_RESTRICT tap_flags, const float* HWY_RESTRICT factors,
                               IntRounding rule, int64_t v, hn::Vec<D> before, hn::Vec<D> here, hn::Vec<D> after,
                               bool whole, int64_t size, S* HWY_RESTRICT dst) {
  constexpr int64_t L = 16;
  const hn::Rebind<float, D> df;
  const int64_t f = v * L;
  const __m512i flags = _mm512_load_si512(tap_flags + f);
  const hn::Mask<D> left{_mm512_test_epi32_mask(flags, _mm512_set1_epi32(1))};
  const hn::Mask<D> right{_mm512_test_epi32_mask(flags, _mm512_set1_epi32(4))};
  auto m = AddWhere(d, left, LanesFrom<L - 1>(d, before, here), here, here);
  m = AddWhere(d, right, m, LanesFrom<1>(d, here, after), m);
  m = FinishAverage(d, m, hn::LoadU(df, factors + f), rule);
  if (whole) StoreAs(m, d, dst + f);
  else StorePartial(m, d, dst + f, static_cast<size_t>(size - f));
}

// The column sums at g of an interior vector: rows g - W and g + W are whole vectors of the
// plane (g >= W, g + L + W <= size), so plain loads, added in PlaneColumnSums' order.
template <class D, class S>
HWY_INLINE hn::Vec<D> InteriorColumnSums(D d, const S* HWY_RESTRICT x, int64_t W, int64_t g) {
  return hn::Add(hn::Add(LoadAs(d, x + g - W), LoadAs(d, x + g)), LoadAs(d, x + g + W));
}

// Vector v of AvgPlane3x3 outside its interior loop, which moves `before` and `here` on by one.
template <class D, class S>
HWY_INLINE void Plane3x3Border(D d, const S* HWY_RESTRICT x, const char* next, int64_t W, int64_t size,
                               const int32_t* HWY_RESTRICT tap_flags, const float* HWY_RESTRICT factors, IntRounding rule,
                               int64_t v, hn::Vec<D>& before, hn::Vec<D>& here, S* HWY_RESTRICT dst) {
  constexpr int64_t L = 16;
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  __builtin_prefetch(next + v * L * static_cast<int64_t>(sizeof(S)));
  const auto after = PlaneColumnSums(d, x, W, size, (v + 1) * L, identity);
  Plane3x3Output(d, tap_flags, factors, rule, v, before, here, after, (v + 1) * L <= size, size, dst);
  before = here;
  here = after;
}

// avg_plane_nchw for the common 3x3 window at stride 1, one pad on every side, out == in (the
// Inception and GoogLeNet layers): the rows' sums never leave registers. Each vector of column
// sums (x[f - W] + x[f]) + x[f + W], its rows where present, is formed once, and its neighbours'
// lanes f - 1 and f + 1 come from VALIGND of the vectors before and after it. The additions are
// MaskedSumsAlongW's, in its order, so the outputs are the same bits; each output vector costs
// three loads, not SumRows' three loads and store and then three unaligned loads.
//
// The interior loop takes three vectors a pass, so that the column sums move on by renaming, and
// it prefetches the next plane (`next`) a line per output vector, not in a loop of its own ahead
// of the plane. With Plane3x3Output's tap flags: Inception's planes in L2 (24 of them), 1 thread,
// Zen 5, 160 -> 117 ns each; the whole layer hot 0.25 -> 0.22-0.24 ms; cold 0.40 either way.
template <class D, class S>
HWY_NOINLINE void AvgPlane3x3(D d, const S* HWY_RESTRICT x, const char* next, int64_t W, int64_t size,
                              const int32_t* HWY_RESTRICT tap_flags, int64_t vectors,
                              const float* HWY_RESTRICT factors, IntRounding rule, S* HWY_RESTRICT dst) {
  constexpr int64_t L = 16;
  const auto identity = hn::Set(d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  auto before = identity, here = PlaneColumnSums(d, x, W, size, 0, identity);
  // Vector v needs the column sums at (v + 1) * L: interior for v in [interior_begin, interior_end).
  const int64_t interior_begin = std::min(vectors, std::max<int64_t>(0, (W + L - 1) / L - 1));
  const int64_t interior_end = std::max(interior_begin, std::min(vectors, (size - W) / L - 1));
  int64_t v = 0;
  for (; v < interior_begin; ++v) Plane3x3Border(d, x, next, W, size, tap_flags, factors, rule, v, before, here, dst);
  for (; v + 3 <= interior_end; v += 3) {
    const int64_t f = v * L;
    __builtin_prefetch(next + f * static_cast<int64_t>(sizeof(S)));
    __builtin_prefetch(next + (f + L) * static_cast<int64_t>(sizeof(S)));
    __builtin_prefetch(next + (f + 2 * L) * static_cast<int64_t>(sizeof(S)));
    const auto a0 = InteriorColumnSums(d, x, W, f + L);
    Plane3x3Output(d, tap_flags, factors, rule, v, before, here, a0, true, size, dst);
    const auto a1 = InteriorColumnSums(d, x, W, f + 2 * L);
    Plane3x3Output(d, tap_flags, factors, rule, v + 1, here, a0, a1, true, size, dst);
    const auto a2 = InteriorColumnSums(d, x, W, f + 3 * L);
    Plane3x3Output(d, tap_flags, factors, rule, v + 2, a0, a1, a2, true, size, dst);
    before = a1;
    here = a2;
  }
  for (; v < vectors; ++v) Plane3x3Border(d, x, next, W, size, tap_flags, factors, rule, v, before, here, dst);
}
#endif

template <class S, class Acc>
void AvgPlaneNchw(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t W = AW.in, OH = AH.out, size = OH * W, vectors = (size + L - 1) / L;
  const int64_t kw = AW.kernel, planes = P.batch * P.channels;
  // Sums along H at guard + f; the guard covers the taps left of column 0, the slack the taps
  // right of the last column and the last vector's lanes.
  const int64_t guard = AW.pad_begin, sums_length = guard + size + (kw - 1) * AW.dilation + 2 * L;
  const IntRounding rule = P.p.int_rounding;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  // AvgPlane3x3 (AVX-512 only) takes the 3x3 window; its tables are the tap flags, not the masks.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  const auto is_3x3_same = [](const AxisTable& t) {
    return t.kernel == 3 && t.stride == 1 && t.dilation == 1 && t.pad_begin == 1 && t.out == t.in;
  };
  const bool fused_3x3 = hn::MaxLanes(d) == 16 && is_3x3_same(AH) && is_3x3_same(AW);
#else
  const bool fused_3x3 = false;
#endif
  ParallelRanges(a.threads, planes, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> sums_tl;
    thread_local std::vector<float> factors_tl;
    thread_local std::vector<uint8_t> masks_tl;
    thread_local std::vector<int32_t> tap_flags_tl;
    thread_local std::vector<int64_t> empty_tl;
    thread_local std::vector<const S*> sources_tl;
    Acc* sums = Scratch(sums_tl, static_cast<size_t>(sums_length));
    const auto identity = hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
    for (int64_t i = 0; i < sums_length; i += L) hn::StoreU(identity, d, sums + std::min(i, sums_length - L));
    // Per output: its factor; per W tap and vector: the mask of lanes whose tap is in the row
    // (8 bytes of mask bits, enough for 64 lanes); for the fused 3x3 path instead, per output:
    // bit tx set where tap tx is in the row.
    float* factors = LineScratch(factors_tl, static_cast<size_t>(vectors * L));
    uint8_t* masks = Scratch(masks_tl, static_cast<size_t>(kw * vectors * 8));
    int32_t* tap_flags = LineScratch(tap_flags_tl, fused_3x3 ? static_cast<size_t>(vectors * L) : size_t{0});
    int64_t* empty = Scratch(empty_tl, static_cast<size_t>(size));
    const S** sources = Scratch(sources_tl, static_cast<size_t>(AH.kernel));
    // The tables depend on the problem and the tests' mutation alone, so a layer run again (the
    // next image, the next call) keeps them: building them costs about 20 us for a 35x35 plane,
    // as much as 70 of its planes.
    thread_local std::optional<std::pair<Problem, Mutation>> tables_of;
    thread_local int64_t empty_count_tl = 0;
    if (!tables_of || tables_of->first != P.p || tables_of->second != P.mutation) {
      tables_of.reset();
      int64_t count = 0;
      std::fill(factors, factors + vectors * L, 1.0f);  // lanes past the plane: finite, unused
      std::fill(masks, masks + kw * vectors * 8, uint8_t{0});
      if (fused_3x3) std::fill(tap_flags, tap_flags + vectors * L, 0);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < W; ++ow) {
          const int64_t f = oh * W + ow, divisor = P.divisor(0, oh, ow);
          factors[f] = AverageFactor<Acc>(divisor == 0 ? 1 : divisor);
          if (divisor == 0 || AH.count(oh) == 0 || AW.count(ow) == 0) empty[count++] = f;
          for (int64_t tx = 0; tx < kw; ++tx) {
            const int64_t x = AW.start(ow) + tx * AW.dilation;
            const int64_t lane = f % L;
            if (x < 0 || x >= W) continue;
            if (fused_3x3) tap_flags[f] |= 1 << tx;
            else masks[(tx * vectors + f / L) * 8 + lane / 8] |= static_cast<uint8_t>(1u << (lane % 8));
          }
        }
      empty_count_tl = count;
      tables_of.emplace(P.p, P.mutation);
    }
    const int64_t empty_count = empty_count_tl;
    const auto write_empty_outputs = [&](int64_t plane) {
      const int64_t n = plane / P.channels, c = plane % P.channels;
      for (int64_t e = 0; e < empty_count; ++e)
        WriteEmpty(P, a, n, c, plane * P.out_plane + empty[e], P.divisor(0, empty[e] / W, empty[e] % W) == 0);
    };
    for (int64_t plane = begin; plane < end; ++plane) {
      const S* x = in + plane * P.in_plane;
      // The next plane, a few KiB: cold, its loads would wait on memory.
      const char* next = reinterpret_cast<const char*>(plane + 1 < end ? x + P.in_plane : x);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      if (fused_3x3) {
        AvgPlane3x3(d, x, next, W, size, tap_flags, vectors, factors, rule, out + plane * P.out_plane);
        write_empty_outputs(plane);
        continue;
      }
#endif
      if (plane + 1 < end)
        for (int64_t b = 0; b < P.in_plane * static_cast<int64_t>(sizeof(S)); b += 64) __builtin_prefetch(next + b);
      // 1. Along H: out row oh's taps th read input row oh - pad + th * dilation, flat offset
      // f + (th * dilation - pad) * W; over the interior rows every tap reads, in one run.
      for (int64_t oh = 0; oh < OH; ++oh) {
        const bool interior = oh >= AH.interior_begin && oh < AH.interior_end;
        const int64_t rows = interior ? AH.interior_end - oh : 1;
        const int64_t first = AH.first[static_cast<size_t>(oh)], past = AH.past[static_cast<size_t>(oh)];
        size_t count = 0;
        for (int64_t th = first; th < past; ++th) sources[count++] = x + (AH.start(oh) + th * AH.dilation) * W;
        // A run shorter than a vector stores a whole one: it reaches only later rows (summed
        // after it) or the slack.
        if (count > 0) SumRowsAnyCount(d, sources, count, rows * W, sums + guard + oh * W);
        oh += rows - 1;
      }
      // 2. Along W, masked, in tap order; then finished.
      S* dst = out + plane * P.out_plane;
      const Acc* taps = sums + guard - AW.pad_begin;
      if (kw == 2)
        MaskedSumsAlongW<2>(d, taps, masks, vectors, size, kw, AW.dilation, factors, rule, dst);
      else if (kw == 3)
        MaskedSumsAlongW<3>(d, taps, masks, vectors, size, kw, AW.dilation, factors, rule, dst);
      else
        MaskedSumsAlongW<0>(d, taps, masks, vectors, size, kw, AW.dilation, factors, rule, dst);
      write_empty_outputs(plane);
    }
  });
}

// ---- max_nhwc: per output element, its taps in scan order; lanes over channels ----------------

// "v > m ? v : m", the spec's step of a running maximum (ties and a NaN v keep m). x86 MAXPS(a, b)
// is exactly "a > b ? a : b" (b when they are equal or either is NaN): one instruction where a
// comparison and a blend are two.
template <class D>
HWY_INLINE hn::Vec<D> FirstIfGreater(D d, hn::Vec<D> v, hn::Vec<D> m) {
  if constexpr (!std::is_floating_point_v<hn::TFromD<D>>) {
    (void)d;
    return hn::Max(v, m);  // integers: equal values are the same value
  } else {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (std::is_same_v<hn::TFromD<D>, float> && hn::MaxLanes(D()) == 16) return hn::Vec<D>{_mm512_max_ps(v.raw, m.raw)};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
    if constexpr (std::is_same_v<hn::TFromD<D>, float> && hn::MaxLanes(D()) == 8) return hn::Vec<D>{_mm256_max_ps(v.raw, m.raw)};
#endif
    (void)d;
    return hn::IfThenElse(hn::Gt(v, m), v, m);
  }
}

// The value-only running maximum of max_nhwc, for four channel blocks at once: four independent
// chains, so that the latency of one step is hidden behind the others'. A NaN never enters the
// chain (it is not greater than m), so the chain is the spec's "m = v if v > m" over the numbers,
// ties to the first. Whether a NaN was seen (propagate: the result is then NaN) or a number was
// (ignore: else the result is NaN) is kept in integer lanes: the largest, or the smallest, of
// the values' magnitude bits, which exceed those of infinity exactly for a NaN. Integer max and
// min cost less than a NaN test and a mask OR per value.
template <class D, bool kPropagate>
struct MaxChains {
  static constexpr bool floating = std::is_floating_point_v<hn::TFromD<D>>;
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  static constexpr TI magnitude_mask = static_cast<TI>(sizeof(TI) == 4 ? 0x7fffffff : 0x7fffffffffffffff);
  static constexpr TI infinity_bits = static_cast<TI>(sizeof(TI) == 4 ? 0x7f800000 : 0x7ff0000000000000);
  hn::Vec<D> m[4];
  hn::Vec<DI> magnitude[4];

  // Before the first value: below every value (-inf is taken by no value, and equals -inf).
  explicit MaxChains(D d) {
    const DI di;
    for (size_t i = 0; i < 4; ++i) {
      m[i] = hn::Set(d, floating ? -std::numeric_limits<hn::TFromD<D>>::infinity()
                                 : std::numeric_limits<hn::TFromD<D>>::lowest());
      magnitude[i] = hn::Set(di, kPropagate ? TI{0} : magnitude_mask);
    }
  }
  HWY_INLINE void Step(D d, size_t i, hn::Vec<D> v) {
    m[i] = FirstIfGreater(d, v, m[i]);
    if constexpr (floating) {
      const DI di;
      const auto bits = hn::And(hn::BitCast(di, v), hn::Set(di, magnitude_mask));
      magnitude[i] = kPropagate ? hn::Max(magnitude[i], bits) : hn::Min(magnitude[i], bits);
    }
  }
  HWY_INLINE hn::Vec<D> Result(D d, size_t i) const {
    if constexpr (floating) {
      const DI di;
      const auto nan = hn::Set(d, std::numeric_limits<hn::TFromD<D>>::quiet_NaN());
      return hn::IfThenElse(hn::RebindMask(d, hn::Gt(magnitude[i], hn::Set(di, infinity_bits))), nan, m[i]);
    }
    (void)d;
    return m[i];
  }
};

template <class S, class Acc, bool kPropagate>
void MaxNhwcWith(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  using DI = hn::RebindToSigned<hn::ScalableTag<float>>;
  const D d;
  const DI di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, OW = AW.out;
  const int64_t out_rows = P.batch * AD.out * AH.out;
  const bool indices = a.indices != nullptr;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  constexpr bool propagate = kPropagate;
  constexpr bool floating = std::is_floating_point_v<Acc>;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, out_rows, [&](int64_t begin, int64_t end) HWY_ATTR {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / (AD.out * AH.out), od = (row / AH.out) % AD.out, oh = row % AH.out;
      const int64_t fd = AD.first[static_cast<size_t>(od)], pd = AD.past[static_cast<size_t>(od)];
      const int64_t fh = AH.first[static_cast<size_t>(oh)], ph = AH.past[static_cast<size_t>(oh)];
      const S* image = in + n * P.in_plane * C;
      // The input rows the next output row adds (the last `stride` of its window's rows), from
      // the columns this one's window starts at: prefetched a row ahead. Read once and from far
      // apart rows, a large input otherwise waits on memory (ResNet stem, cold: 2.1 -> 1.0-1.2 ms).
      const int64_t next_oh = oh + 1 < AH.out ? oh + 1 : -1;
      const int64_t new_rows_from = next_oh < 0 ? 0 : std::max<int64_t>(0, AH.start(next_oh) + std::max<int64_t>(0, (AH.kernel - 1) * AH.dilation + 1 - AH.stride));
      const int64_t new_rows_past = next_oh < 0 ? 0 : std::min(AH.in, AH.start(next_oh) + (AH.kernel - 1) * AH.dilation + 1);
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t fw = AW.first[static_cast<size_t>(ow)], pw = AW.past[static_cast<size_t>(ow)];
        const int64_t position = (row * OW + ow) * C;
        if (new_rows_from < new_rows_past) {
          const int64_t x_from = std::clamp<int64_t>(AW.start(ow), 0, AW.in), x_past = std::clamp<int64_t>(AW.start(ow) + AW.stride, 0, AW.in);
          const int64_t bytes = (x_past - x_from) * C * static_cast<int64_t>(sizeof(S));
          for (int64_t td = fd; td < pd; ++td) {
            const int64_t id = AD.start(od) + td * AD.dilation;
            for (int64_t ih = new_rows_from; ih < new_rows_past; ++ih) {
              const char* line = reinterpret_cast<const char*>(image + ((id * AH.in + ih) * AW.in + x_from) * C);
              for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(line + b);
            }
          }
        }
        if (fd >= pd || fh >= ph || fw >= pw) {
          for (int64_t c = 0; c < C; ++c) WriteEmpty(P, a, n, c, position + c, true);
          continue;
        }
        int64_t c = 0;
        // The tap loop nest is written out here and below: through a callback lambda shared by
        // both, the four-block path measured 1.5x slower (2.0 -> 3.0 ms on the ResNet stem).
        if (!indices) {
          // Values only, four chains at a time: four channel blocks of this pixel or, with fewer
          // channels (whole vectors of them), one block of four pixels whose windows are whole
          // (their taps are this pixel's, moved by the stride).
          const bool four_pixels =
              C < 4 * L && C % L == 0 && ow >= AW.interior_begin && ow + 4 <= AW.interior_end;
          const int64_t chain_step = four_pixels ? AW.stride * C : L;  // between the chains' sources
          const int64_t store_step = four_pixels ? C : L;
          for (; four_pixels ? c < C : c + 4 * L <= C; c += four_pixels ? L : 4 * L) {
            MaxChains<D, propagate> chains(d);
            for (int64_t td = fd; td < pd; ++td) {
              const int64_t id = AD.start(od) + td * AD.dilation;
              for (int64_t th = fh; th < ph; ++th) {
                const int64_t ih = AH.start(oh) + th * AH.dilation;
                for (int64_t tw = fw; tw < pw; ++tw) {
                  const int64_t iw = AW.start(ow) + tw * AW.dilation;
                  const S* src = image + ((id * AH.in + ih) * AW.in + iw) * C + c;
#pragma GCC unroll 4  // the chains stay in registers
                  for (size_t i = 0; i < 4; ++i) {
                    chains.Step(d, i, LoadAs(d, src + static_cast<int64_t>(i) * chain_step));
                  }
                }
              }
            }
#pragma GCC unroll 4
            for (size_t i = 0; i < 4; ++i) {
              auto m = chains.Result(d, i);
              if (from_lowest) {
                const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
                m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
              }
              StoreAs(m, d, out + position + c + static_cast<int64_t>(i) * store_step);
            }
          }
          if (four_pixels) {
            ow += 3;
            continue;
          }
        }
        for (; c < C; c += L) {
          const size_t count = static_cast<size_t>(std::min(L, C - c));
          bool first = true;
          hn::Vec<D> m = hn::Zero(d);
          hn::Vec<DI> off = hn::Zero(di);
          auto nan_seen = hn::FirstN(d, 0);
          for (int64_t td = fd; td < pd; ++td) {
            const int64_t id = AD.start(od) + td * AD.dilation;
            for (int64_t th = fh; th < ph; ++th) {
              const int64_t ih = AH.start(oh) + th * AH.dilation;
              for (int64_t tw = fw; tw < pw; ++tw) {
                const int64_t iw = AW.start(ow) + tw * AW.dilation;
                const int64_t spatial = (id * AH.in + ih) * AW.in + iw;
                const S* src = image + spatial * C + c;
                const auto v = count == static_cast<size_t>(L) ? LoadAs(d, src) : LoadPartial(d, src, count);
                if (first) {
                  m = v;
                  off = hn::Set(di, static_cast<int32_t>(spatial));
                  if constexpr (floating) nan_seen = hn::IsNaN(v);
                  first = false;
                  continue;
                }
                if (indices) {
                  const auto take = Takes<D>(v, m, propagate);
                  m = hn::IfThenElse(take, v, m);
                  off = hn::IfThenElse(hn::RebindMask(di, take), hn::Set(di, static_cast<int32_t>(spatial)), off);
                } else if constexpr (floating) {
                  // Values only: with NaN propagation, the largest non-NaN and whether a NaN was
                  // seen (the result is then NaN); with NaN ignored, a NaN m is replaced.
                  if (propagate) {
                    m = hn::IfThenElse(hn::Gt(v, m), v, m);
                    nan_seen = hn::Or(nan_seen, hn::IsNaN(v));
                  } else {
                    m = hn::IfThenElse(hn::Or(hn::Gt(v, m), hn::IsNaN(m)), v, m);
                  }
                } else {
                  m = hn::IfThenElse(hn::Gt(v, m), v, m);
                }
              }
            }
          }
          if constexpr (floating) {
            if (!indices && propagate) m = hn::IfThenElse(nan_seen, hn::Set(d, std::numeric_limits<Acc>::quiet_NaN()), m);
          }
          if (from_lowest) {
            const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
            const auto above = hn::Gt(m, lowest);
            m = hn::IfThenElse(above, m, lowest);
            off = hn::IfThenElse(hn::RebindMask(di, above), off, hn::Zero(di));
          }
          S* dst = out + position + c;
          if (count == static_cast<size_t>(L)) StoreAs(m, d, dst);
          else StorePartial(m, d, dst, count);
          if (indices) {
            alignas(64) int32_t lane[HWY_MAX_BYTES / 4];
            hn::Store(off, di, lane);
            for (size_t i = 0; i < count; ++i)
              a.indices[position + c + static_cast<int64_t>(i)] =
                  P.final_index(n, c + static_cast<int64_t>(i), lane[i]);
          }
        }
      }
    }
  });
}

// NaN propagation as a template parameter: a run-time flag tested in the tap loop cost a branch
// per value.
template <class S, class Acc>
void MaxNhwc(const Plan& P, const RunArgs& a) {
  if (P.p.nan == NanPolicy::propagate && P.p.max_start != MaxStart::lowest) return MaxNhwcWith<S, Acc, true>(P, a);
  MaxNhwcWith<S, Acc, false>(P, a);
}

// ---- max_nchw: per output row, the window's rows combined whole, then the taps along W ---------
//
// Values only (no indices). The rows are combined first, then the columns: the maximum is the
// same value in any order, except that -0 and +0 are equal and the spec keeps the first of
// them in scan order (row by row). So an output that comes out as a zero is looked up again:
// its first zero tap in scan order. NaNs are kept out of the chains and noted in magnitude
// lanes, as in MaxChains.

template <bool kPropagate, class D, class S>
HWY_INLINE void MaxRows(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t length,
                        hn::TFromD<D>* HWY_RESTRICT values, hn::TFromD<hn::RebindToSigned<D>>* HWY_RESTRICT magnitudes) {
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
        chains.Step(d, 0, LoadPartial(d, rows[r] + i, static_cast<size_t>(std::min(L, length - i))));
        if (length - i > L) chains.Step(d, 1, LoadPartial(d, rows[r] + i + L, static_cast<size_t>(length - i - L)));
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
void StoreFirstZeroTap(const AxisTable& AW, const S* const* rows, size_t count, int64_t ow, S* dst) {
  const int64_t start = AW.start(ow);
  for (size_t r = 0; r < count; ++r)
    for (int64_t tw = AW.first[static_cast<size_t>(ow)]; tw < AW.past[static_cast<size_t>(ow)]; ++tw) {
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
    chains.magnitude[0] = kPropagate ? hn::Max(chains.magnitude[0], magnitude) : hn::Min(chains.magnitude[0], magnitude);
  }
  return chains.Result(d, 0);
}

template <bool kPropagate, class D>
HWY_INLINE hn::Vec<D> MaxAlongWAnyShape(D d, const AxisTable& AW, const hn::TFromD<D>* values,
                                        const hn::TFromD<hn::RebindToSigned<D>>* magnitudes) {
  if (AW.dilation == 1 && AW.kernel == 3 && AW.stride == 2) return MaxAlongW<3, 2, kPropagate>(d, AW, values, magnitudes);
  if (AW.dilation == 1 && AW.kernel == 3 && AW.stride == 1) return MaxAlongW<3, 1, kPropagate>(d, AW, values, magnitudes);
  if (AW.dilation == 1 && AW.kernel == 2 && AW.stride == 2) return MaxAlongW<2, 2, kPropagate>(d, AW, values, magnitudes);
  return MaxAlongW<0, 0, kPropagate>(d, AW, values, magnitudes);
}

// ---- max_nchw's direct path: f32 windows of 2 or 3 columns at stride 2 ------------------------
//
// Output i of a row takes the columns 2i - pad + t: the even or the odd lanes of a pair of
// vectors loaded at an even offset. So an output vector is two pairs of vectors of the window's
// rows combined, with no row stored and read back. NaNs are not noted per lane: the values are
// summed on the side, and a row whose sum is NaN (a NaN tap, or inf + -inf) is done again by
// the general path. Zeros are looked up in scan order, as there.

#if !HWY_MEM_OPS_MIGHT_FAULT && HWY_TARGET != HWY_SCALAR
constexpr bool max_row_direct = true;

// The window's rows combined at columns [offset, offset + L) of a row of W values; columns
// outside the row are -inf (the masked load reads none of them). `sum` gains their sum.
template <int kRows, class D>
HWY_INLINE hn::Vec<D> CombinedRows(D d, const float* const* HWY_RESTRICT rows, size_t count, int64_t offset,
                                   int64_t W, hn::Vec<D>& sum) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const size_t n = kRows > 0 ? static_cast<size_t>(kRows) : count;
  hn::Vec<D> m, s;
  if (HWY_LIKELY(offset >= 0 && offset + L <= W)) {
    m = s = hn::LoadU(d, rows[0] + offset);
#pragma GCC unroll 4
    for (size_t r = 1; r < n; ++r) {
      const auto v = hn::LoadU(d, rows[r] + offset);
      m = FirstIfGreater(d, v, m);
      s = hn::Add(s, v);
    }
  } else {
    const hn::RebindToSigned<D> di;
    const auto column = hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(offset)));
    const auto inside = hn::RebindMask(d, hn::And(hn::Gt(column, hn::Set(di, -1)), hn::Lt(column, hn::Set(di, static_cast<int32_t>(W)))));
    const auto outside = hn::Set(d, -std::numeric_limits<float>::infinity());
    for (size_t r = 0; r < n; ++r) {
      const auto* at = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(rows[r]) + static_cast<uintptr_t>(offset * 4));
      const auto v = hn::IfThenElse(inside, hn::MaskedLoad(inside, d, at), outside);
      m = r == 0 ? v : FirstIfGreater(d, v, m);
      s = r == 0 ? v : hn::Add(s, v);
    }
  }
  sum = hn::Add(sum, s);
  return m;
}

// `before`'s last lane, then `v`'s lanes 0 .. L - 2: the column of each lane's output one stride
// to the left. (On x86 only AVX-512 takes max_nchw's direct path: AVX2's masked loads may fault.)
template <class D>
HWY_INLINE hn::Vec<D> UpOneLane(D d, hn::Vec<D> v, hn::Vec<D> before) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) == 16) {
    (void)d;
    return hn::Vec<D>{_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v.raw), _mm512_castps_si512(before.raw), 15))};
  }
#endif
  const hn::RebindToSigned<D> di;
  const auto L = static_cast<int32_t>(hn::Lanes(d));
  const auto up = hn::IndicesFromVec(d, hn::Max(hn::Sub(hn::Iota(di, 0), hn::Set(di, 1)), hn::Zero(di)));
  return hn::IfThenElse(hn::FirstN(d, 1), hn::TableLookupLanes(before, hn::IndicesFromVec(d, hn::Set(di, L - 1))),
                        hn::TableLookupLanes(v, up));
}

// An output vector's maximum m, clamped to `lowest` and stored; a zero gets its first zero tap in
// scan order (the rows were combined first, which may have picked another zero).
template <class D>
HWY_INLINE void StoreMaxVector(D d, hn::Vec<D> m, bool from_lowest, hn::Vec<D> lowest, const AxisTable& AW,
                               const float* const* window_rows, size_t count, int64_t ow, float* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (from_lowest) m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
  hn::StoreU(m, d, dst + ow);
  if (!hn::AllFalse(d, hn::Eq(m, hn::Zero(d)))) {
    alignas(64) float lane[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(m, d, lane);
    for (int64_t j = 0; j < L; ++j)
      if (lane[j] == 0) StoreFirstZeroTap<float>(AW, window_rows, count, ow + j, dst + ow + j);
  }
}

// One output row of OW >= Lanes values; false (the row partly written) when a NaN may be among
// its taps. `rows` are the window's rows in scan order.
template <int kTaps, int kRows, class D>
HWY_NOINLINE bool MaxRowDirect(D d, const float* const* HWY_RESTRICT window_rows, size_t count, const AxisTable& AW,
                               bool from_lowest, float lowest_float, float* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t W = AW.in, OW = AW.out, pad = AW.pad_begin;
  const float* rows[kRows > 0 ? kRows : 1];
  const float* const* r = window_rows;
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

// Whether max_nchw's rows go through MaxRowDirect: f32, 2 or 3 columns at stride 2 with pad 0
// or 1, no window clipped on the right, and a target whose masked loads cannot fault.
template <class S, class D>
bool MaxRowDirectApplies(D d, const AxisTable& AW) {
  (void)d;
  return max_row_direct && std::is_same_v<S, float> && std::is_same_v<hn::TFromD<D>, float> &&
         AW.stride == 2 && AW.dilation == 1 && (AW.kernel == 2 || AW.kernel == 3) && AW.pad_begin <= 1 &&
         AW.interior_end == AW.out && AW.out >= static_cast<int64_t>(hn::Lanes(d)) && AW.first[0] + 1 < AW.past[0];
}

template <class D, class S>
HWY_INLINE bool MaxRowDirectAnyShape(D d, const S* const* rows, size_t count, const AxisTable& AW, bool from_lowest,
                                     float lowest, S* dst) {
  if constexpr (!max_row_direct || !std::is_same_v<S, float> || !std::is_same_v<hn::TFromD<D>, float>) {
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
  const int64_t row_length = pad + W + 2 * L + (OW + L) * AW.stride + (AW.kernel - 1) * AW.dilation + L;
  constexpr int64_t batch_rows = 4;
  // The rows 4 output rows ahead are prefetched, as in avg_nchw; 8 ahead for MaxRowDirect, which
  // is faster: measured on the ResNet stem, cold, 4 -> 8 rows took 1.6 -> 1.35 ms (12, 16 and 32
  // rows: 1.35-1.45).
  const bool direct = MaxRowDirectApplies<S>(hn::ScalableTag<Acc>(), AW);
  const int64_t prefetch_rows = direct ? 8 : 4;
  const int64_t row_bytes = W * static_cast<int64_t>(sizeof(S)), prefetch_bytes = prefetch_rows * AH.stride * row_bytes;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, out_rows, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> values_tl;
    thread_local std::vector<TI> magnitudes_tl;
    thread_local std::vector<const S*> sources_tl;
    thread_local std::vector<int64_t> empty_tl;
    Acc* values = Scratch(values_tl, static_cast<size_t>(batch_rows * row_length));
    TI* magnitudes = Scratch(magnitudes_tl, static_cast<size_t>(batch_rows * row_length));
    // Outside the row: a value no tap is below, and the magnitude that notes nothing.
    const Chains none(d);
    for (int64_t i = 0; i < batch_rows * row_length; i += L) {
      hn::StoreU(none.m[0], d, values + std::min(i, batch_rows * row_length - L));
      hn::StoreU(none.magnitude[0], di, magnitudes + std::min(i, batch_rows * row_length - L));
    }
    const S** sources = Scratch(sources_tl, static_cast<size_t>(AD.kernel * AH.kernel));
    int64_t* empty_columns = Scratch(empty_tl, static_cast<size_t>(OW));
    int64_t empty_count = 0;
    for (int64_t ow = 0; ow < OW; ++ow)
      if (AW.count(ow) == 0) empty_columns[empty_count++] = ow;
    const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
    const float lowest_float = static_cast<float>(lowest_value(P.p.dtype));
    bool done[batch_rows] = {};  // rows MaxRowDirect wrote
    for (int64_t first_row = begin; first_row < end; first_row += batch_rows) {
      const int64_t past_row = std::min(end, first_row + batch_rows);
      const OutputRow first_at(P, first_row);
      OutputRow at = first_at;
      for (int64_t row = first_row; row < past_row; ++row, at.Next(P)) {  // 1. each row's input rows combined
        const size_t row_count = WindowRows(P, in, at, sources);
        if (row_count == 0) continue;  // written as empty below
        // As in avg_nchw; MaxRowDirect's rows only those the next output row adds (the window's last).
        const size_t shared = direct ? row_count - std::min(row_count, static_cast<size_t>(AH.stride)) : 0;
        PrefetchRows(sources + shared, row_count - shared, prefetch_bytes, row_bytes);
        if (direct && MaxRowDirectAnyShape(d, sources, row_count, AW, from_lowest, lowest_float, out + row * OW)) {
          done[row - first_row] = true;
          continue;
        }
        done[row - first_row] = false;
        const int64_t offset = (row - first_row) * row_length + pad;
        MaxRows<kPropagate>(d, sources, row_count, W, values + offset, magnitudes + offset);
        hn::StoreU(none.m[0], d, values + offset + W);  // MaxRows' last vector may have written past W
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
          auto m = MaxAlongWAnyShape<kPropagate>(d, AW, row_values + ow * AW.stride, row_magnitudes + ow * AW.stride);
          if (from_lowest) m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
          const int64_t count = std::min(L, OW - ow);
          if (count == L) StoreAs(m, d, dst + ow);
          else StorePartial(m, d, dst + ow, static_cast<size_t>(count));
          if constexpr (std::is_floating_point_v<Acc>) {
            if (!hn::AllFalse(d, hn::Eq(m, hn::Zero(d)))) {
              // A zero: the first zero tap in scan order (the spec's first maximum).
              alignas(64) Acc lane[HWY_MAX_BYTES / sizeof(Acc)];
              hn::Store(m, d, lane);
              const size_t row_count = WindowRows(P, in, at, sources);
              for (int64_t j = 0; j < count; ++j)
                if (lane[j] == 0) StoreFirstZeroTap<Acc>(AW, sources, row_count, ow + j, dst + ow + j);
            }
          }
        }
        for (int64_t e = 0; e < empty_count; ++e) WriteEmpty(P, a, n, c, row * OW + empty_columns[e], true);
      }
    }
  });
}

template <class S, class Acc>
void MaxNchw(const Plan& P, const RunArgs& a) {
  if (P.p.nan == NanPolicy::propagate && P.p.max_start != MaxStart::lowest) return MaxNchwWith<S, Acc, true>(P, a);
  MaxNchwWith<S, Acc, false>(P, a);
}

// For a problem of 1 or 2 spatial axes: the outputs with no input tap, or a zero divisor (whose
// row or column has one: an override is at least 1), get the empty-window value.
inline void WriteEmptyOutputs2D(const Plan& P, const RunArgs& a) {
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  auto empty = [&](const AxisTable& t, int64_t j) { return t.count(j) == 0 || t.divisor[static_cast<size_t>(j)] == 0; };
  std::vector<int64_t> columns;
  for (int64_t ow = 0; ow < AW.out; ++ow)
    if (empty(AW, ow)) columns.push_back(ow);
  for (int64_t oh = 0; oh < AH.out; ++oh) {
    const bool whole_row = empty(AH, oh);
    for (int64_t k = 0; k < (whole_row ? AW.out : static_cast<int64_t>(columns.size())); ++k) {
      const int64_t ow = whole_row ? k : columns[static_cast<size_t>(k)];
      const bool divisor_zero = P.divisor(0, oh, ow) == 0;
      for (int64_t n = 0; n < P.batch; ++n)
        for (int64_t c = 0; c < P.channels; ++c)
          WriteEmpty(P, a, n, c, P.output_position(n, c, oh * AW.out + ow), divisor_zero);
    }
  }
}

// ---- avg_sliding: block prefix and suffix sums (van Herk / Gil-Werman) --------------------------
//
// A window of k consecutive taps starting at i, with blocks of k taps from the first window's
// start: if i starts a block the window is that block, its prefix through i + k - 1; else it is
// the suffix of i's block from i plus the prefix of the next block through i + k - 1. Every
// output is then two sums and one addition per axis, whatever k, and each partial sum holds only
// taps of that window: the result is a sum of exactly the window's taps in some order (the
// error bound of optimized.cpp holds; a running sum that subtracts would not keep it). Taps
// outside the input are -0, the additive identity, so the sum is that of the in-bounds taps.
// NHWC: along W then H, pixels are vectors over channels, and the work is cut into strips of
// output columns and chunks of channels small enough that a strip's rows of sums stay in L1.
// NCHW: along H over a plane's whole rows, then kw unaligned loads per output along W.

// A block of `rows` rows (row_length apart, `values` used) becomes its suffix sums, in place:
// row k holds rows k, k + 1, ..., the last, summed from the last up.
template <class D>
HWY_INLINE void SuffixSumsInPlace(D d, hn::TFromD<D>* HWY_RESTRICT block, int64_t rows, int64_t row_length,
                                  int64_t values) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t k = rows - 2; k >= 0; --k) {
    hn::TFromD<D>* row = block + k * row_length;
    for (int64_t i = 0; i < values; i += L)
      hn::StoreU(hn::Add(hn::LoadU(d, row + i), hn::LoadU(d, row + row_length + i)), d, row + i);
  }
}

// The window sums of one strip along W: x holds its input row (pixels of `lanes` values, -0
// outside the input), and is overwritten by the blocks' suffix sums; h gets `outputs` pixels.
template <class D>
HWY_INLINE void BlockSumsAlongW(D d, hn::TFromD<D>* HWY_RESTRICT x, int64_t pixels, int64_t lanes, int64_t kernel,
                                int64_t stride, hn::TFromD<D>* HWY_RESTRICT h) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < lanes; c += L) {
    hn::TFromD<D>* xc = x + c;
    hn::TFromD<D>* hc = h + c;
    hn::Vec<D> run = hn::Zero(d);  // the prefix of the current block
    int64_t t = 0;                 // u's place in its block
    int64_t next = kernel - 1;     // the last pixel of the next window
    for (int64_t u = 0; u < pixels; ++u) {
      const auto v = hn::LoadU(d, xc + u * lanes);
      run = t == 0 ? v : hn::Add(run, v);
      if (u == next) {  // the window [u - kernel + 1, u]
        const int64_t i = u - kernel + 1;
        hn::StoreU(t == kernel - 1 ? run : hn::Add(hn::LoadU(d, xc + i * lanes), run), d, hc);
        hc += lanes;
        next += stride;
      }
      if (++t == kernel) {  // the block [u - kernel + 1, u] is done: its suffix sums, in place
        SuffixSumsInPlace(d, xc + (u - kernel + 1) * lanes, kernel, lanes, L);
        t = 0;
      }
    }
  }
}

// Adds row h to the running prefix (or starts it), and with `emit` finishes each window sum --
// the prefix, plus the suffix row when there is one -- into dst (pixels pixel_stride apart, the
// first `count` lanes of each pixel's `lanes`).
template <class D, class S>
HWY_INLINE void PrefixAndEmit(D d, const hn::TFromD<D>* HWY_RESTRICT h, hn::TFromD<D>* HWY_RESTRICT prefix,
                              bool restart, bool emit, const hn::TFromD<D>* HWY_RESTRICT suffix,
                              const float* HWY_RESTRICT factors, int64_t outputs, int64_t lanes, int64_t count,
                              S* HWY_RESTRICT dst, int64_t pixel_stride, IntRounding rule) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  if (!emit) {
    for (int64_t i = 0; i < outputs * lanes; i += L)
      hn::StoreU(restart ? hn::LoadU(d, h + i) : hn::Add(hn::LoadU(d, prefix + i), hn::LoadU(d, h + i)), d, prefix + i);
    return;
  }
  for (int64_t j = 0; j < outputs; ++j) {
    const auto factor = hn::Set(df, factors[j]);
    const int64_t row = j * lanes;
    for (int64_t c = 0; c < lanes; c += L) {
      const auto run = restart ? hn::LoadU(d, h + row + c) : hn::Add(hn::LoadU(d, prefix + row + c), hn::LoadU(d, h + row + c));
      hn::StoreU(run, d, prefix + row + c);
      const auto sum = suffix ? hn::Add(hn::LoadU(d, suffix + row + c), run) : run;
      const auto m = FinishAverage(d, sum, factor, rule);
      if (c + L <= count) StoreAs(m, d, dst + j * pixel_stride + c);
      else StorePartial(m, d, dst + j * pixel_stride + c, static_cast<size_t>(count - c));
    }
  }
}

// x[u] for pixels [u_first, u_past) of an NHWC row: channels [0, count) of src + u * C, then
// zeros up to `lanes`.
template <class D, class S>
HWY_INLINE void LoadPixels(D d, const S* HWY_RESTRICT src, int64_t C, int64_t count, int64_t u_first,
                           int64_t u_past, int64_t lanes, hn::TFromD<D>* HWY_RESTRICT x) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t u = u_first; u < u_past; ++u) {
    const S* pixel = src + u * C;
    hn::TFromD<D>* dst = x + u * lanes;
    int64_t c = 0;
    for (; c + L <= count; c += L) hn::StoreU(LoadAs(d, pixel + c), d, dst + c);
    if (c < count) hn::StoreU(LoadPartial(d, pixel + c, static_cast<size_t>(count - c)), d, dst + c);
  }
}

// NHWC: the block sums along W, per strip of output columns and chunk of channels, then along H.
template <class S, class Acc>
void AvgSliding(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, H = AH.in, W = AW.in, OH = AH.out, OW = AW.out;
  const int64_t kh = AH.kernel, kw = AW.kernel, sh = AH.stride, sw = AW.stride;
  // A task: one image, one chunk of its channels (up to four vectors), one strip of output columns.
  const int64_t groups = P.batch;
  const int64_t all_lanes = (C + L - 1) / L * L;
  const int64_t chunk_lanes = std::min(all_lanes, 4 * L);
  const int64_t chunks = (all_lanes + chunk_lanes - 1) / chunk_lanes;
  // x (the strip's input row), two blocks of kh rows of sums and the prefix row: about 32 KiB.
  const int64_t budget = (int64_t{32} << 10) / static_cast<int64_t>(sizeof(Acc)) / chunk_lanes;
  const int64_t fit = std::clamp<int64_t>((budget - kw + sw) / (2 * kh + 2 + sw), 1, OW);
  const int64_t strips = (OW + fit - 1) / fit;
  const int64_t strip_width = (OW + strips - 1) / strips;
  const int64_t max_pixels = (strip_width - 1) * sw + kw;
  const int64_t row_length = strip_width * chunk_lanes;
  const int64_t rows = (OH - 1) * sh + kh;  // virtual rows; row v is input row v - pad_begin
  const IntRounding rule = P.p.int_rounding;
  const Acc pad = std::is_floating_point_v<Acc> ? static_cast<Acc>(-0.0) : Acc(0);
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);

  ParallelRanges(a.threads, groups * chunks * strips, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> x_tl, bank_tl, prefix_tl;
    thread_local std::vector<float> factors_tl;
    Acc* x = Scratch(x_tl, static_cast<size_t>(max_pixels * chunk_lanes));
    Acc* bank = Scratch(bank_tl, static_cast<size_t>(2 * kh * row_length));
    Acc* prefix = Scratch(prefix_tl, static_cast<size_t>(row_length));
    float* factors = Scratch(factors_tl, static_cast<size_t>(strip_width));
    const auto pad_vector = hn::Set(d, pad);

    for (int64_t task = begin; task < end; ++task) {
      const int64_t g = task / (chunks * strips), chunk = task / strips % chunks, strip = task % strips;
      const int64_t ow0 = strip * strip_width, outputs = std::min(strip_width, OW - ow0);
      if (outputs <= 0) continue;
      const int64_t c0 = chunk * chunk_lanes, lanes = std::min(chunk_lanes, all_lanes - c0);
      const int64_t span = outputs * lanes;  // values in a row of sums
      const int64_t pixels = (outputs - 1) * sw + kw, col0 = ow0 * sw - AW.pad_begin;
      const int64_t u_first = std::clamp<int64_t>(-col0, 0, pixels);
      const int64_t u_past = std::clamp<int64_t>(W - col0, u_first, pixels);
      const int64_t count = std::min(lanes, C - c0);  // channels [c0, c0 + count) of image g
      int64_t factors_for = -1;  // the row divisor whose factors the table holds

      // Along H, rows of window sums in blocks of kh from the first window's first row; each
      // output row is finished as its last row arrives.
      int64_t t = 0;  // v's place in its block
      for (int64_t v = 0; v < rows; ++v) {
        const int64_t block = v / kh, r = v - AH.pad_begin;
        Acc* h = bank + ((block & 1) * kh + t) * row_length;
        if (r < 0 || r >= H) {
          for (int64_t i = 0; i < span; i += L) hn::StoreU(pad_vector, d, h + i);
        } else {
          {
            for (int64_t u = 0; u < pixels; ++u)  // outside the input: -0 (x held suffix sums)
              if (u < u_first || u >= u_past)
                for (int64_t c = 0; c < lanes; c += L) hn::StoreU(pad_vector, d, x + u * lanes + c);
            const S* src = in + ((g * H + r) * W + col0) * C + c0;
            if (r + 2 < H) {  // the strip's part of a later row: lines the prefetchers do not foresee
              for (int64_t u = u_first; u < u_past; ++u) {
                const char* ahead = reinterpret_cast<const char*>(src + 2 * W * C + u * C);
                for (int64_t b = 0; b < count * static_cast<int64_t>(sizeof(S)); b += 64) __builtin_prefetch(ahead + b);
              }
            }
            LoadPixels(d, src, C, count, u_first, u_past, lanes, x);
          }
          BlockSumsAlongW(d, x, pixels, lanes, kw, sw, h);
        }
        const int64_t i = v - kh + 1;  // the window of rows ending at v
        const bool emit = i >= 0 && i % sh == 0;
        const int64_t oh = emit ? i / sh : 0;
        if (emit) {
          const int64_t key = P.p.divisor == Divisor::override_value ? -2 : AH.divisor[static_cast<size_t>(oh)];
          if (key != factors_for) {
            for (int64_t j = 0; j < outputs; ++j) {
              const int64_t dv = P.divisor(0, oh, ow0 + j);
              factors[j] = AverageFactor<Acc>(dv == 0 ? 1 : dv);  // divisor 0: written by WriteEmpty
            }
            factors_for = key;
          }
        }
        const Acc* suffix = t == kh - 1 ? nullptr : bank + (((block - 1) & 1) * kh + (i - (block - 1) * kh)) * row_length;
        PrefixAndEmit(d, h, prefix, t == 0, emit, suffix, factors, outputs, lanes, count,
                      out + ((g * OH + oh) * OW + ow0) * C + c0, C, rule);
        if (++t == kh) {  // the block is done
          SuffixSumsInPlace(d, bank + (block & 1) * kh * row_length, kh, row_length, span);
          t = 0;
        }
      }
    }
  });

  WriteEmptyOutputs2D(P, a);
}

// NCHW: a plane's rows are short and contiguous, so the block sums run along H over whole rows
// (-0 beyond the input's columns), and each output row sums its window along W from the row of
// H sums with kw unaligned loads from L1.
template <class S, class Acc>
void AvgSlidingNchw(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t H = AH.in, W = AW.in, OH = AH.out, OW = AW.out;
  const int64_t kh = AH.kernel, kw = AW.kernel, sh = AH.stride, sw = AW.stride, pw = AW.pad_begin;
  const int64_t planes = P.batch * P.channels;
  const int64_t bands = planes >= 2 * a.threads ? 1 : std::min(OH, (2 * a.threads + planes - 1) / planes);
  const int64_t pixels = (OW - 1) * sw + kw;  // value u of a row is input column u - pw
  const int64_t row_length = ((pixels + (OW + L) * sw + kw) + L - 1) / L * L;  // strided loads read past
  const int64_t u_first = std::clamp<int64_t>(pw, 0, pixels), u_past = std::clamp<int64_t>(pw + W, u_first, pixels);
  const IntRounding rule = P.p.int_rounding;
  const Acc pad = std::is_floating_point_v<Acc> ? static_cast<Acc>(-0.0) : Acc(0);
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);

  ParallelRanges(a.threads, planes * bands, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> bank_tl, prefix_tl, sums_tl;
    thread_local std::vector<float> factors_tl;
    Acc* bank = Scratch(bank_tl, static_cast<size_t>(2 * kh * row_length));
    Acc* prefix = Scratch(prefix_tl, static_cast<size_t>(row_length));
    Acc* sums = Scratch(sums_tl, static_cast<size_t>(row_length));
    float* factors = Scratch(factors_tl, static_cast<size_t>(OW + L));
    const auto pad_vector = hn::Set(d, pad);
    const hn::Rebind<float, D> df;
    for (int64_t i = 0; i < row_length; i += L) hn::StoreU(pad_vector, d, sums + i);  // its tail stays -0

    for (int64_t task = begin; task < end; ++task) {
      const int64_t nc = task / bands, band = task % bands;
      const int64_t oh_begin = band * OH / bands, oh_end = (band + 1) * OH / bands;
      if (oh_begin >= oh_end) continue;
      const S* plane = in + nc * P.in_plane;
      S* dst_plane = out + nc * P.out_plane;
      const int64_t first_row = oh_begin * sh - AH.pad_begin;  // the input row of virtual row 0
      const int64_t rows = (oh_end - 1 - oh_begin) * sh + kh;
      int64_t factors_for = -1;
      int64_t t = 0;  // v's place in its block
      for (int64_t v = 0; v < rows; ++v) {
        const int64_t block = v / kh, r = first_row + v;
        Acc* h = bank + ((block & 1) * kh + t) * row_length;
        if (r < 0 || r >= H) {
          for (int64_t i = 0; i < pixels; i += L) hn::StoreU(pad_vector, d, h + i);
        } else {
          for (int64_t u = 0; u < u_first; ++u) h[u] = pad;
          const S* src = plane + r * W + (u_first - pw);
          const int64_t n = u_past - u_first;
          int64_t i = 0;
          for (; i + L <= n; i += L) hn::StoreU(LoadAs(d, src + i), d, h + u_first + i);
          if (i < n) hn::StoreU(LoadPartial(d, src + i, static_cast<size_t>(n - i)), d, h + u_first + i);
          for (int64_t u = u_past; u < pixels; ++u) h[u] = pad;
        }
        const int64_t i = v - kh + 1;  // the window of rows ending at v
        const bool emit = i >= 0 && i % sh == 0;
        const Acc* suffix = t == kh - 1 ? nullptr : bank + (((block - 1) & 1) * kh + (i - (block - 1) * kh)) * row_length;
        for (int64_t u = 0; u < pixels; u += L) {
          const auto run = t == 0 ? hn::LoadU(d, h + u) : hn::Add(hn::LoadU(d, prefix + u), hn::LoadU(d, h + u));
          hn::StoreU(run, d, prefix + u);
          if (emit) hn::StoreU(suffix ? hn::Add(hn::LoadU(d, suffix + u), run) : run, d, sums + u);
        }
        if (emit) {
          const int64_t oh = oh_begin + i / sh;
          const int64_t key = P.p.divisor == Divisor::override_value ? -2 : AH.divisor[static_cast<size_t>(oh)];
          if (key != factors_for) {
            std::fill(factors + OW, factors + OW + L, 1.0f);  // lanes past the row: finite, unused
            for (int64_t j = 0; j < OW; ++j) {
              const int64_t dv = P.divisor(0, oh, j);
              factors[j] = AverageFactor<Acc>(dv == 0 ? 1 : dv);  // divisor 0: written by WriteEmpty
            }
            factors_for = key;
          }
          S* dst = dst_plane + oh * OW;
          for (int64_t j = 0; j < OW; j += L) {
            const Acc* window = sums + j * sw;
            auto m = LoadStrided(d, window, sw);
            for (int64_t k = 1; k < kw; ++k) m = hn::Add(m, LoadStrided(d, window + k, sw));
            m = FinishAverage(d, m, hn::LoadU(df, factors + j), rule);
            if (j + L <= OW) StoreAs(m, d, dst + j);
            else StorePartial(m, d, dst + j, static_cast<size_t>(OW - j));
          }
        }
        if (++t == kh) {  // the block is done
          SuffixSumsInPlace(d, bank + (block & 1) * kh * row_length, kh, row_length, pixels);
          t = 0;
        }
      }
    }
  });
  WriteEmptyOutputs2D(P, a);
}

// ---- blocked_nchw: 16 planes at a time as one NHWC image of 16 channels ------------------------
//
// NCHW planes are short rows; the NHWC kernels fill whole vectors with channels. So each group
// of 16 consecutive planes (n * C + c) is transposed into an NHWC image of 16 channels (oneDNN's
// nChw16c block), the NHWC kernel dispatch chose for that image (Plan::block) runs on it, and its
// output is transposed back. The block holds the storage type, so the NHWC kernel's arithmetic,
// empty-window values and roundings are those of the problem itself.

// rows[i] lane j -> rows[j] lane i, for an L x L tile (L = Lanes(d), a power of two dividing
// block_channels).
// Each round takes the even and the odd lanes of pairs of rows, which rotates the bits of
// (row, lane) by one; log2(L) rounds exchange them. Unrolled, so the tile stays in registers.
template <class D>
HWY_INLINE void TransposeTile(D d, hn::Vec<D>* HWY_RESTRICT rows) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)rows;
#else
  constexpr size_t L = hn::MaxLanes(D());
  hn::Vec<D> next[L];
#pragma GCC unroll 4
  for (size_t round = 1; round < L; round *= 2) {
#pragma GCC unroll 16
    for (size_t i = 0; i < L / 2; ++i) {
      next[i] = hn::ConcatEven(d, rows[2 * i + 1], rows[2 * i]);
      next[i + L / 2] = hn::ConcatOdd(d, rows[2 * i + 1], rows[2 * i]);
    }
#pragma GCC unroll 16
    for (size_t i = 0; i < L; ++i) rows[i] = next[i];
  }
#endif
}

// Planes [0, count) of `planes` (each `size` values, `stride` apart) into block[value * 16 + plane];
// the planes past count are zeros. Values pass through the compute type exactly (f16 and the
// 8-bit integers widen and narrow back unchanged).
template <class D, class S>
HWY_INLINE void PlanesToBlock(D d, const S* HWY_RESTRICT planes, int64_t stride, int64_t count, int64_t size,
                              S* HWY_RESTRICT block) {
  constexpr size_t kMaxL = hn::MaxLanes(D());
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> rows[HWY_MAX_BYTES / 4];
  for (int64_t p = 0; p < block_channels; p += L) {
    for (int64_t i = 0; i < size; i += L) {
      const int64_t n = std::min(L, size - i);
      if (n == L && p + L <= count) {  // a whole tile: unrolled, so that `rows` stays in registers
#pragma GCC unroll 16
        for (size_t r = 0; r < kMaxL; ++r) {
          const S* src = planes + (p + static_cast<int64_t>(r)) * stride + i;
          __builtin_prefetch(src + 1024 / sizeof(S));  // sixteen streams a line at a time: the prefetchers lag
          rows[r] = LoadAs(d, src);
        }
        TransposeTile(d, rows);
#pragma GCC unroll 16
        for (size_t j = 0; j < kMaxL; ++j) StoreAs(rows[j], d, block + (i + static_cast<int64_t>(j)) * block_channels + p);
        continue;
      }
      for (int64_t r = 0; r < L; ++r) {
        const S* src = planes + (p + r) * stride + i;
        rows[r] = p + r >= count ? hn::Zero(d) : n == L ? LoadAs(d, src) : LoadPartial(d, src, static_cast<size_t>(n));
      }
      TransposeTile(d, rows);
      for (int64_t j = 0; j < n; ++j) StoreAs(rows[j], d, block + (i + j) * block_channels + p);
    }
  }
}

// The inverse: block[value * 16 + plane] back into planes [0, count).
template <class D, class S>
HWY_INLINE void BlockToPlanes(D d, const S* HWY_RESTRICT block, int64_t size, int64_t count, S* HWY_RESTRICT planes,
                              int64_t stride) {
  constexpr size_t kMaxL = hn::MaxLanes(D());
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> rows[HWY_MAX_BYTES / 4];
  for (int64_t p = 0; p < std::min(count, block_channels); p += L) {
    for (int64_t i = 0; i < size; i += L) {
      const int64_t n = std::min(L, size - i);
      if (n == L && p + L <= count) {  // a whole tile, unrolled as in PlanesToBlock
#pragma GCC unroll 16
        for (size_t j = 0; j < kMaxL; ++j) rows[j] = LoadAs(d, block + (i + static_cast<int64_t>(j)) * block_channels + p);
        TransposeTile(d, rows);
#pragma GCC unroll 16
        for (size_t r = 0; r < kMaxL; ++r) StoreAs(rows[r], d, planes + (p + static_cast<int64_t>(r)) * stride + i);
        continue;
      }
      for (int64_t j = 0; j < L; ++j) rows[j] = j < n ? LoadAs(d, block + (i + j) * block_channels + p) : hn::Zero(d);
      TransposeTile(d, rows);
      for (int64_t r = 0; r < std::min(L, count - p); ++r) {
        S* dst = planes + (p + r) * stride + i;
        if (n == L) StoreAs(rows[r], d, dst);
        else StorePartial(rows[r], d, dst, static_cast<size_t>(n));
      }
    }
  }
}

template <class S, class Acc>
void RunTyped(KernelId id, const Plan& P, const RunArgs& a);

template <class S, class Acc>
void BlockedNchw(const Plan& P, const RunArgs& a) {
  const hn::ScalableTag<Acc> d;
  const Plan& B = *P.block;
  const int64_t planes = P.batch * P.channels;
  const int64_t groups = (planes + block_channels - 1) / block_channels;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, groups, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<S> in_tl, out_tl;
    S* block_in = Scratch(in_tl, static_cast<size_t>(P.in_plane * block_channels));
    S* block_out = Scratch(out_tl, static_cast<size_t>(P.out_plane * block_channels));
    for (int64_t g = begin; g < end; ++g) {
      const int64_t p0 = g * block_channels, count = std::min(block_channels, planes - p0);
      PlanesToBlock(d, in + p0 * P.in_plane, P.in_plane, count, P.in_plane, block_in);
      RunTyped<S, Acc>(static_cast<KernelId>(P.block_kernel), B,
                       RunArgs{reinterpret_cast<const std::byte*>(block_in), reinterpret_cast<std::byte*>(block_out),
                               nullptr, 1});
      BlockToPlanes(d, block_out, P.out_plane, count, out + p0 * P.out_plane, P.out_plane);
    }
  });
}

// ---- dispatch on kernel and dtype --------------------------------------------------------------

template <class S, class Acc>
void RunTyped(KernelId id, const Plan& P, const RunArgs& a) {
  switch (id) {
    case KernelId::global_avg_nchw: return GlobalAvgNchw<S, Acc>(P, a);
    case KernelId::global_avg_nhwc: return GlobalAvgNhwc<S, Acc>(P, a);
    case KernelId::pool_nchw: return PoolNchw<S, Acc>(P, a);
    case KernelId::avg_nhwc: return AvgNhwc<S, Acc>(P, a);
    case KernelId::avg_nchw: return AvgNchw<S, Acc>(P, a);
    case KernelId::avg_int8_nchw: return AvgInt8Nchw<S, Acc>(P, a);
    case KernelId::avg_plane_nchw: return AvgPlaneNchw<S, Acc>(P, a);
    case KernelId::avg_sliding:
      return P.layout == Layout::channels_first ? AvgSlidingNchw<S, Acc>(P, a) : AvgSliding<S, Acc>(P, a);
    case KernelId::max_nhwc: return MaxNhwc<S, Acc>(P, a);
    case KernelId::max_nchw: return MaxNchw<S, Acc>(P, a);
    case KernelId::blocked_nchw: return BlockedNchw<S, Acc>(P, a);
  }
}

void RunKernel(KernelId id, const Plan& P, const RunArgs& a) {
  switch (P.p.dtype) {
    case DType::f32: return RunTyped<float, float>(id, P, a);
    case DType::f16: return RunTyped<hwy::float16_t, float>(id, P, a);
    case DType::i8: return RunTyped<int8_t, int32_t>(id, P, a);
    case DType::u8: return RunTyped<uint8_t, int32_t>(id, P, a);
    default: return;  // refused by the kernel list's predicates
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunKernel);
HWY_EXPORT(TargetName);

void run_kernel(KernelId id, const Plan& plan, const RunArgs& args) {
  HWY_DYNAMIC_DISPATCH(RunKernel)(id, plan, args);
}

std::string dispatched_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

namespace {

// The compiled targets this CPU supports, read once and before any restriction: Highway's
// SupportedAndGeneratedTargets() honours SetSupportedTargetsForTest, so reading it after
// restrict_target would give only the chosen one (the fuzzer found simd_targets() shrinking).
const std::vector<int64_t>& all_targets() {
  static const std::vector<int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    std::vector<int64_t> v;
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) v.push_back(target);
    return v;
  }();
  return targets;
}

}  // namespace

std::vector<std::string> compiled_targets() {
  std::vector<std::string> names;
  for (int64_t target : all_targets()) names.emplace_back(hwy::TargetName(target));
  return names;
}

bool restrict_target(std::string_view name) {
  int64_t chosen = 0;
  for (int64_t target : all_targets())
    if (name == hwy::TargetName(target)) chosen = target;
  if (!name.empty() && chosen == 0) return false;
  hwy::SetSupportedTargetsForTest(chosen);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}

}  // namespace poolspec::optimized
#endif
