// What every kernel uses: threads, element access in the compute type, the spec's rules in
// vector and scalar form, the divisor's factors, the empty-window value, per-thread scratch.
//
// Each kernel file is compiled once per SIMD target: Highway's foreach_target.h re-includes it
// (HWY_TARGET_INCLUDE) with HWY_NAMESPACE set to each target (SSE4, AVX2, AVX-512, ...), and
// HWY_DYNAMIC_DISPATCH picks the best one at run time. This header is included with it, once per
// target: its guard toggles with HWY_TARGET_TOGGLE. All code is VEX/EVEX-encoded on the AVX
// targets, so no legacy-SSE instruction runs with a dirty upper YMM state (docs/benchmarks.md).
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

#include "kernels/kernel.hpp"
#include "plan.hpp"
#include "poolspec/evaluate.hpp"

#if defined(POOLSPEC_OPTIMIZED_KERNELS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLSPEC_OPTIMIZED_KERNELS_SIMD_INL_H_
#undef POOLSPEC_OPTIMIZED_KERNELS_SIMD_INL_H_
#else
#define POOLSPEC_OPTIMIZED_KERNELS_SIMD_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs body(begin, end) on each of `threads` OpenMP threads, over its share of [0, count) as
// schedule(static) splits it. The SIMD code stays in `body`, a HWY_ATTR lambda, because clang
// does not give an OpenMP region's outlined function the target attributes of the function it is
// written in: SIMD code written directly in a region does not compile (clang 14 at -O1 and above,
// "Cannot select X86ISD::BLENDV"), and the call keeps the region free of it.
// One thread runs the body directly: an OpenMP region still costs a team's start and end, and
// blocked_nchw runs its NHWC kernel once per block of 16 planes, a region nested in its own.
// GoogLeNet's 17x17 max layer (48 blocks), hot at 1 thread: 197 us with the regions, 55 without.
template <class Body>
void ParallelRanges(int threads, int64_t count, const Body& body) {
  if (threads <= 1) return body(0, count);
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t share = count / nt, extra = count % nt;
    const int64_t begin = t * share + std::min(t, extra);
    body(begin, begin + share + (t < extra ? 1 : 0));
  }
}

// The problem's dtype as a kernel's template arguments: S, the storage type, and Acc, the type
// its values are summed and compared in. body(Types<S, Acc>()) runs for the four dtypes
// every kernel takes (common_limits, kernels/kernel.hpp); nothing runs for another.
template <class S, class Acc>
struct Types {};

template <class Body>
HWY_INLINE void ForDtype(DType dtype, const Body& body) {
  switch (dtype) {
    case DType::f32: return body(Types<float, float>());
    case DType::f16: return body(Types<hwy::float16_t, float>());
    case DType::bf16: return body(Types<hwy::bfloat16_t, float>());
    case DType::i8: return body(Types<int8_t, int32_t>());
    case DType::u8: return body(Types<uint8_t, int32_t>());
    default: return;
  }
}

// ---- element access ------------------------------------------------------------------------

template <class S>
inline constexpr bool is_f16 = std::is_same_v<S, hwy::float16_t>;
template <class S>
inline constexpr bool is_bf16 = std::is_same_v<S, hwy::bfloat16_t>;

// One storage element as the compute type Acc (float for f32, f16 and bf16, int32_t for i8 and
// u8).
template <class Acc, class S>
HWY_INLINE Acc ScalarLoad(const S* p) {
  if constexpr (is_f16<S>) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return static_cast<float>(f16_value(bits));
  } else if constexpr (is_bf16<S>) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return static_cast<float>(bf16_value(bits));
  } else {
    return static_cast<Acc>(*p);
  }
}

// Stores a computed value: f16 and bf16 rounded to nearest-even (as vcvtps2ph), integers
// saturated.
template <class Acc, class S>
HWY_INLINE void ScalarStore(Acc v, S* p) {
  if constexpr (is_f16<S>) {
    const uint16_t bits = f16_bits(round_to_float(DType::f16, v));
    std::memcpy(p, &bits, 2);
  } else if constexpr (is_bf16<S>) {
    const uint16_t bits = bf16_bits(round_to_float(DType::bf16, v));
    std::memcpy(p, &bits, 2);
  } else if constexpr (std::is_same_v<S, float>) {
    *p = v;
  } else {
    *p = static_cast<S>(
        std::clamp<Acc>(v, std::numeric_limits<S>::min(), std::numeric_limits<S>::max()));
  }
}

// Highway 1.0.3 emulates f16 <-> f32 on targets without F16C (SSE4 and below, scalar), and its
// emulation turns an f16 infinity into 32768 (tests/test_engines.cpp runs every target on
// infinities). There the conversions go through the spec's exact scalar ones instead.
#if (HWY_ARCH_X86 && HWY_TARGET > HWY_AVX2) || HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr bool native_f16 = false;
#else
constexpr bool native_f16 = true;
#endif

template <class D, class S>
HWY_INLINE hn::Vec<D> LoadAs(D d, const S* HWY_RESTRICT p) {
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) {
    return hn::LoadU(d, p);
  } else if constexpr (is_bf16<S>) {  // the bits, moved to the upper half of f32 lanes
    const hn::RebindToUnsigned<D> du32;
    const hn::Rebind<uint16_t, D> du16;
    return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(
                              du32, hn::LoadU(du16, reinterpret_cast<const uint16_t*>(p)))));
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
  } else if constexpr (is_bf16<S>) {
    // Rounded to nearest-even on the bits (Highway 1.0.3's DemoteTo to bf16 truncates): add
    // 0x7fff plus the kept part's lowest bit, keep the upper half (a carry into the exponent is
    // the next binade, or infinity); a NaN keeps its upper half, made quiet.
    const hn::RebindToUnsigned<D> du32;
    const hn::RebindToSigned<D> di32;
    const hn::Rebind<uint16_t, D> du16;
    const auto bits = hn::BitCast(du32, v);
    const auto odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u));
    const auto rounded = hn::ShiftRight<16>(hn::Add(bits, hn::Add(hn::Set(du32, 0x7fffu), odd)));
    const auto nan = hn::Or(hn::ShiftRight<16>(bits), hn::Set(du32, 0x40u));
    const auto upper = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), nan, rounded);
    hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, upper)), du16, reinterpret_cast<uint16_t*>(p));
  } else if constexpr (is_f16<S> && !native_f16) {
    alignas(64) float lanes[HWY_MAX_BYTES / 4];
    hn::Store(v, d, lanes);
    for (size_t i = 0; i < hn::Lanes(d); ++i) ScalarStore<float>(lanes[i], p + i);
  } else {
    const hn::Rebind<S, D> ds;
    hn::StoreU(hn::DemoteTo(ds, v), ds, p);  // f16: nearest-even; integers: saturating
  }
}

// Whether hn::MaskedLoad(m, d, at) of the lanes [first, past) of the vector at `at` is safe where
// the vector runs past an array's end (or starts before its beginning): it must read no lane
// outside its mask and fault on none. AVX-512's masked loads suppress faults on masked-off lanes
// (Highway: HWY_MEM_OPS_MIGHT_FAULT 0). Highway marks every AVX2 masked load as possibly
// faulting: those of 8- and 16-bit lanes load the whole vector. Those of 32- and 64-bit lanes
// are VMASKMOVPS/PD and VPMASKMOVD/Q, which read no masked-off element; Intel's SDM (vol. 2) says
// they raise no fault for one, AMD's APM (vol. 4) that this is implementation dependent. So on
// AVX2 a masked load is used only where each page it touches holds one of its lanes (4 KiB, the
// smallest x86 page): such a page is mapped and readable, as the array is. Under ASan and MSan
// LoadRange's stack copy stays: clang turns AVX2's masked-load intrinsics into instructions
// neither sanitizer instruments at -O0, and the copy lets them check the bounds.
template <class D>
HWY_INLINE bool MaskedLoadIsSafe(D, const hn::TFromD<D>* at, size_t first, size_t past) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  (void)at, (void)first, (void)past;
  return true;
#elif HWY_TARGET == HWY_AVX2 && !HWY_IS_ASAN && !HWY_IS_MSAN
  // Vectors of at least 128 bits: Highway's FirstN on narrower ones may set lanes past them.
  constexpr size_t lane_bytes = sizeof(hn::TFromD<D>);
  if constexpr (lane_bytes >= 4 && hn::MaxLanes(D()) * lane_bytes >= 16) {
    if (first >= past) return false;
    const auto page = [](uintptr_t address) { return address >> 12; };
    const auto begin = reinterpret_cast<uintptr_t>(at);
    return page(begin) == page(begin + first * lane_bytes) &&
           page(begin + hn::MaxLanes(D()) * lane_bytes - 1) == page(begin + past * lane_bytes - 1);
  }
  (void)at, (void)first, (void)past;
  return false;
#else
  (void)at, (void)first, (void)past;
  return false;
#endif
}

// Lanes [first, past) of the vector whose lane i is base[offset + i], the other lanes zero: those
// lanes' elements lie inside an array, the others need not (base + offset is formed as an integer)
// and none of them is read. A masked load where MaskedLoadIsSafe (f16 and bf16 by their bits, 16
// to a lane), else the lanes copied to the stack; the storage type widened as LoadAs does.
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadRange(D d, const S* base, int64_t offset, size_t first, size_t past) {
  const uintptr_t at =
      reinterpret_cast<uintptr_t>(base) + static_cast<uintptr_t>(offset * int64_t{sizeof(S)});
  if constexpr (std::is_same_v<S, hn::TFromD<D>>) {
    const auto* lanes_at = reinterpret_cast<const S*>(at);
    if (MaskedLoadIsSafe(d, lanes_at, first, past))
      return hn::MaskedLoad(hn::AndNot(hn::FirstN(d, first), hn::FirstN(d, past)), d, lanes_at);
  } else if constexpr (is_f16<S> || is_bf16<S>) {
    const hn::Rebind<uint16_t, D> du16;
    const auto* bits_at = reinterpret_cast<const uint16_t*>(at);
    if (MaskedLoadIsSafe(du16, bits_at, first, past)) {
      alignas(64) uint16_t bits[hn::MaxLanes(D())];
      hn::Store(hn::MaskedLoad(hn::AndNot(hn::FirstN(du16, first), hn::FirstN(du16, past)), du16,
                               bits_at),
                du16, bits);
      return LoadAs(d, reinterpret_cast<const S*>(bits));
    }
  }
  alignas(64) S lanes[hn::MaxLanes(D())] = {};  // an element per lane
  past = std::min(past, hn::MaxLanes(D()));     // as it is; a bound the compiler sees
  if (past > first)
    std::memcpy(lanes + first, reinterpret_cast<const void*>(at + first * sizeof(S)),
                (past - first) * sizeof(S));
  return LoadAs(d, lanes);
}

// The first n < Lanes(d) elements, the other lanes zero: nothing past p + n is read.
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadPartial(D d, const S* p, size_t n) {
  return LoadRange(d, p, 0, 0, n);
}

// Stores the first n < Lanes(d) lanes; nothing past p + n is written (a masked store, or a copy).
template <class D, class S>
HWY_INLINE void StorePartial(hn::Vec<D> v, D d, S* p, size_t n) {
#if !HWY_MEM_OPS_MIGHT_FAULT
  if constexpr (std::is_same_v<S, hn::TFromD<D>>)
    return hn::BlendedStore(v, hn::FirstN(d, n), d, p);
#endif
  alignas(64) S tmp[hn::MaxLanes(D())];
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
  if constexpr (sizeof(hn::TFromD<D>) >= 4) {
    const hn::RebindToSigned<D> di;
    return hn::GatherIndex(d, p, hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(s))));
  } else {  // gathers have 32- and 64-bit lanes only
    alignas(64) hn::TFromD<D> lanes[hn::MaxLanes(D())];
    for (size_t i = 0; i < hn::Lanes(d); ++i) lanes[i] = p[static_cast<int64_t>(i) * s];
    return hn::Load(d, lanes);
  }
#endif
}

// ---- the spec's rules, vector and scalar -----------------------------------------------------

// Max: v replaces the running m when v > m; with NaN propagation a NaN replaces a non-NaN, with
// NaN ignored a non-NaN replaces a NaN (a NaN m is only ever the window's first value). Both
// read as: v takes unless "v <= m" holds (false for a NaN on either side) or the side whose NaN
// must not win is a NaN -- m under propagation (a NaN m stays), v with NaN ignored (a NaN v
// never takes). Keeps is the complement, the lanes where m stays: two comparisons and an OR, and
// no mask negation in the tap loops (callers swap IfThenElse's arms).
template <class D>
HWY_INLINE hn::Mask<D> Keeps(hn::Vec<D> v, hn::Vec<D> m, bool propagate) {
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>) {
    // A branch, not a select of the two tests: the compiler hoists it out of a tap loop.
    if (propagate) return hn::Or(hn::Le(v, m), hn::IsNaN(m));
    return hn::Or(hn::Le(v, m), hn::IsNaN(v));
  } else {
    return hn::Not(hn::Gt(v, m));  // Highway 1.0 compares integers with Gt and Lt only
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
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET > HWY_AVX3
// RoundQuotient's ROUNDPS in a given mode and its truncating conversion, per vector width.
template <int kMode>
HWY_INLINE __m128 RoundLanes(__m128 x) {
  return _mm_round_ps(x, kMode);
}
HWY_INLINE __m128i TruncateLanes(__m128 x) { return _mm_cvttps_epi32(x); }
#if HWY_TARGET == HWY_AVX2
template <int kMode>
HWY_INLINE __m256 RoundLanes(__m256 x) {
  return _mm256_round_ps(x, kMode);
}
HWY_INLINE __m256i TruncateLanes(__m256 x) { return _mm256_cvttps_epi32(x); }
#endif
#endif

template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> RoundQuotient(DF df, hn::Vec<DF> t, IntRounding rule) {
  const hn::RebindToSigned<DF> di;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_same_v<decltype(t.raw), __m512>) {
    // One conversion in the rounding mode the rule takes. The quotients are within int32 (see the
    // top), so Highway's fixups for out-of-range lanes are not needed. The int8 layer of
    // docs/benchmarks.md, hot, 1 thread, against Highway's conversions below: NCHW 1.3x faster;
    // NHWC 1.4x, with StoreAverageOfHalfWords' one store.
    constexpr int kQuiet = _MM_FROUND_NO_EXC;
    const __m512 x = t.raw;
    switch (rule) {
      case IntRounding::half_even:
        return {_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | kQuiet)};
      case IntRounding::toward_zero: return {_mm512_cvtt_roundps_epi32(x, kQuiet)};
      case IntRounding::floor: return {_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | kQuiet)};
      case IntRounding::half_away:
      case IntRounding::half_up:
      case IntRounding::tosa: break;  // ties found first, below; tosa refused (kernel_list.cpp)
    }
  }
#elif HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  // AVX2 and SSE4: rounded in the rule's mode (ROUNDPS, whatever MXCSR holds), then converted,
  // exactly, by truncation. Highway's conversions add a fixup for out-of-range lanes (a compare
  // and a blend per vector), which the quotients never need; on AVX2 the fixup was among the top
  // lines of avg_int8_nchw's profile on the int8 layer.
  constexpr int kQuiet = _MM_FROUND_NO_EXC;
#if HWY_TARGET == HWY_AVX2
  constexpr bool kOfRoundLanes =
      std::is_same_v<decltype(t.raw), __m128> || std::is_same_v<decltype(t.raw), __m256>;
#else
  constexpr bool kOfRoundLanes = std::is_same_v<decltype(t.raw), __m128>;
#endif
  if constexpr (kOfRoundLanes) {
    const auto x = t.raw;
    switch (rule) {
      case IntRounding::half_even:
        return {TruncateLanes(RoundLanes<_MM_FROUND_TO_NEAREST_INT | kQuiet>(x))};
      case IntRounding::toward_zero: return {TruncateLanes(x)};
      case IntRounding::floor:
        return {TruncateLanes(RoundLanes<_MM_FROUND_TO_NEG_INF | kQuiet>(x))};
      default: break;  // ties found first, below
    }
  }
#endif
  const auto half = hn::Set(df, 0.5f);
  switch (rule) {
    case IntRounding::half_even: return hn::NearestInt(t);
    case IntRounding::toward_zero: return hn::ConvertTo(di, t);
    case IntRounding::floor: return hn::ConvertTo(di, hn::Floor(t));
    case IntRounding::tosa:  // refused by the kernels' limits (kernel_list.cpp)
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
    case IntRounding::tosa:  // refused by the kernels' limits (kernel_list.cpp)
    case IntRounding::half_away:
    case IntRounding::half_up: {  // as RoundQuotient: t + 0.5 only on a tie, where it is exact
      const float nearest = std::nearbyint(t);
      if (std::fabs(t - nearest) != 0.5f) return static_cast<int32_t>(nearest);
      return static_cast<int32_t>(t +
                                  (rule == IntRounding::half_up ? 0.5f : std::copysign(0.5f, t)));
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
             : int64_t{P.axis[0].divisor[static_cast<size_t>(od)]} *
                   P.axis[1].divisor[static_cast<size_t>(oh)];
}

// factors[j] = AverageFactor of the divisor of output (od, oh, first + j), for j < count, with 1
// for a divisor 0 (those outputs are written by WriteEmpty). The divisor is the product of the
// axes' factors (plan.cpp), so a row's table is its row factor times the W axis's, a vector at a
// time: recomputed one call at a time at each change of row factor, it took 8% of the 7x7 layer.
// The products are exact in int32 and in float below 2^24, and the division is IEEE's either way.
template <class Acc>
void RowFactors(const Plan& P, int64_t od, int64_t oh, int64_t first, int64_t count,
                float* HWY_RESTRICT factors) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  int64_t j = 0;
  if (P.p.divisor != Divisor::override_value &&
      AD.kernel * AH.kernel * AW.kernel < (int64_t{1} << 24)) {
    const hn::ScalableTag<float> df;
    const hn::RebindToSigned<decltype(df)> di;
    const int64_t L = static_cast<int64_t>(hn::Lanes(df));
    const auto row =
        hn::Set(di, AD.divisor[static_cast<size_t>(od)] * AH.divisor[static_cast<size_t>(oh)]);
    const auto zero = hn::Zero(di), one = hn::Set(di, 1);
    for (; j + L <= count; j += L) {
      const auto dv = hn::Mul(row, hn::LoadU(di, AW.divisor.data() + first + j));
      const auto divisor = hn::ConvertTo(df, hn::IfThenElse(hn::Eq(dv, zero), one, dv));
      if constexpr (std::is_floating_point_v<Acc>)
        hn::StoreU(hn::Div(hn::Set(df, 1.0f), divisor), df, factors + j);
      else
        hn::StoreU(divisor, df, factors + j);
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

// The index outputs of a vector of plane offsets (`off`, one per lane; negative: none), as
// Plan::final_index gives them, stored to dst[0, count): lane i belongs to plane (n, c + i *
// channel_step) -- channel_step 1 where lanes run over channels (NHWC), 0 where they run along a
// plane (NCHW). Row-major indices without a modulus (all but ONNX's storage_order=1 and
// OpenVINO MaxPool-8's axis) are computed in vectors: an element per call of final_index took
// most of max_nhwc's time with indices on the ResNet stem.
template <class DI>
HWY_INLINE void StoreIndices(DI di, const Plan& P, hn::Vec<DI> off, int64_t n, int64_t c,
                             int64_t channel_step, size_t count, int64_t* HWY_RESTRICT dst) {
#if HWY_TARGET != HWY_SCALAR
  const size_t L = hn::Lanes(di);
  if (count == L && P.p.index_order == IndexOrder::row_major && P.index_modulus == 0) {
    const hn::Half<DI> dh;
    const hn::Rebind<int64_t, decltype(dh)> d64;
    const bool tensor = P.p.indices == Indices::tensor;
    const int64_t first = tensor ? (n * P.channels + c) * P.in_plane : 0;
    const int64_t step = tensor ? channel_step * P.in_plane : 0;
    alignas(64) int64_t starts[HWY_MAX_BYTES / 4];  // lane i's plane start
    for (size_t i = 0; i < L; ++i) starts[i] = first + static_cast<int64_t>(i) * step;
    const auto store = [&](hn::Vec<decltype(d64)> offsets, size_t at) HWY_ATTR {
      const auto index = hn::Add(offsets, hn::Load(d64, starts + at));
      hn::StoreU(hn::IfThenElse(hn::Lt(offsets, hn::Zero(d64)), hn::Set(d64, -1), index), d64,
                 dst + at);
    };
    store(hn::PromoteTo(d64, hn::LowerHalf(dh, off)), 0);
    store(hn::PromoteTo(d64, hn::UpperHalf(dh, off)), hn::Lanes(d64));
    return;
  }
#endif
  alignas(64) int32_t lane[HWY_MAX_BYTES / 4];
  hn::Store(off, di, lane);
  for (size_t i = 0; i < count; ++i)
    dst[i] = P.final_index(n, c + static_cast<int64_t>(i) * channel_step, lane[i]);
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

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// 32 quotients (two vectors of 16 i32 lanes, each within the storage type's range) as 32 bytes
// in order: packed with saturation within 128-bit blocks, then the blocks' dwords gathered. All in
// registers: GCC folds a narrowing VPMOVSDB followed by a masked store into its memory form, which
// took 14% of the kernel's samples on Zen 5.
template <class S>
HWY_INLINE __m256i NarrowQuotients(__m512i first16, __m512i next16) {
  const __m512i words =
      _mm512_packs_epi32(first16, next16);  // block k: first16[4k..4k+3], next16[4k..4k+3]
  const __m512i bytes =
      std::is_signed_v<S> ? _mm512_packs_epi16(words, words) : _mm512_packus_epi16(words, words);
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
    return FinishAverage(d32, hn::Vec<decltype(d32)>{_mm512_cvtepi16_epi32(sum16)}, factors, rule)
        .raw;
  };
  return NarrowQuotients<S>(quotient(_mm512_castsi512_si256(sums), factors_lo),
                            quotient(_mm512_extracti64x4_epi64(sums, 1), factors_hi));
}

#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Lanes idx[i] of the pair (lo, hi), 32-bit lanes: lo's lane j for j < 16, hi's lane j - 16 above
// (one VPERMT2PS).
template <class D>
HWY_INLINE hn::Vec<D> LanesOfPair(D d, hn::Vec<D> lo, hn::Vec<D> hi,
                                  hn::Vec<hn::RebindToSigned<D>> idx) {
  const hn::Repartition<float, D> df;
  return hn::BitCast(d, hn::Vec<decltype(df)>{_mm512_permutex2var_ps(
                            hn::BitCast(df, lo).raw, idx.raw, hn::BitCast(df, hi).raw)});
}

#endif

#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
// Lanes kShift .. kShift + L - 1 of the pair (lo, hi) of whole vectors, 0 <= kShift < L: VALIGND
// on AVX-512 (32-bit lanes); on AVX2, whose byte shifts stay within 128-bit halves, VPERM2I128
// (lo's upper half, hi's lower) and a VPALIGNR; PALIGNR on SSE4. 16- and 32-bit lanes.
template <int kShift, class D>
HWY_INLINE hn::Vec<D> LanesFrom(D d, hn::Vec<D> lo, hn::Vec<D> hi) {
  constexpr int kLaneBytes = sizeof(hn::TFromD<D>);
  static_assert((kLaneBytes == 4 || (kLaneBytes == 2 && HWY_TARGET > HWY_AVX3)) &&
                hn::MaxLanes(D()) * kLaneBytes == HWY_MAX_BYTES);
  constexpr int L = HWY_MAX_BYTES / kLaneBytes;
  static_assert(kShift >= 0 && kShift < L);
  if constexpr (kShift == 0) return lo;
  constexpr int kBytes = kShift * kLaneBytes;
  const hn::Repartition<int32_t, D> di;
  const auto a = hn::BitCast(di, lo).raw, b = hn::BitCast(di, hi).raw;
#if HWY_TARGET <= HWY_AVX3
  return hn::BitCast(d, hn::Vec<decltype(di)>{_mm512_alignr_epi32(b, a, kShift)});
#elif HWY_TARGET == HWY_AVX2
  const __m256i middle = _mm256_permute2x128_si256(a, b, 0x21);  // bytes 16 .. 47 of the pair
  if constexpr (kBytes < 16)
    return hn::BitCast(d, hn::Vec<decltype(di)>{_mm256_alignr_epi8(middle, a, kBytes)});
  else if constexpr (kBytes == 16)
    return hn::BitCast(d, hn::Vec<decltype(di)>{middle});
  else
    return hn::BitCast(d, hn::Vec<decltype(di)>{_mm256_alignr_epi8(b, middle, kBytes - 16)});
#else
  return hn::BitCast(d, hn::Vec<decltype(di)>{_mm_alignr_epi8(b, a, kBytes)});
#endif
}
#endif

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#endif  // POOLSPEC_OPTIMIZED_KERNELS_SIMD_INL_H_
