// The spec's running maximum in vector lanes: its step, and four independent chains of it.
// Included by each kernel file once per SIMD target (Highway's foreach_target); the guard toggles
// with HWY_TARGET_TOGGLE, so each target gets its own copy in its own namespace.
#include "kernels/simd-inl.h"

#if defined(POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_
#undef POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_
#else
#define POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {
// Calls body(std::bool_constant<kPropagate>()) with the max's NaN rule as a template parameter (a
// run-time flag tested in the tap loop would cost a branch per value). The spec's max takes a NaN
// tap only under nan=propagate starting from the first tap (start=lowest compares every tap with
// lowest() first, and a NaN never wins that); integers have no NaN, so their kernels are compiled
// for one rule only.
template <class Acc, class Body>
HWY_INLINE void ForNanRule(const Plan& P, const Body& body) {
  if constexpr (std::is_floating_point_v<Acc>)
    if (P.p.nan == NanPolicy::propagate && P.p.max_start != MaxStart::lowest)
      return body(std::true_type());
  body(std::false_type());
}

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
    if constexpr (std::is_same_v<hn::TFromD<D>, float> && hn::MaxLanes(D()) == 16)
      return hn::Vec<D>{_mm512_max_ps(v.raw, m.raw)};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
    if constexpr (std::is_same_v<hn::TFromD<D>, float> && hn::MaxLanes(D()) == 8)
      return hn::Vec<D>{_mm256_max_ps(v.raw, m.raw)};
#endif
    (void)d;
    return hn::IfThenElse(hn::Gt(v, m), v, m);
  }
}

// The value-only running maximum of max_nhwc, for four channel blocks at once: four independent
// chains, so that the latency of one step is hidden behind the others'. A NaN never enters the
// chain (it is not greater than m), so the chain is the spec's "m = v if v > m" over the numbers,
// ties to the first. Whether a NaN was seen (propagate: the result is then NaN) or only NaNs were
// (ignore: the result is then NaN) is kept beside each chain:
// - with vector compares (SSE4, AVX2), one instruction per value: propagate,
//   `seen = unordered(seen, v)`, all ones (a NaN)
//   from the first NaN v on and +0 before it; ignore, `least = min(v, least)` from +inf, which
//   a NaN v leaves alone (MINPS(a, b) is "a < b ? a : b"): only NaNs were seen exactly where m is
//   still -inf and least still +inf (a number x makes m >= x and least <= x);
// - elsewhere (AVX-512, whose compares give mask registers), and always with kMagnitudes (for
//   max_nchw, which stores the notes and combines them later), two (an AND and an integer max or
//   min): the largest, or the smallest, of the values' magnitude bits in integer lanes, which
//   exceed those of infinity exactly for a NaN.
#if HWY_ARCH_X86 && (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4)
#define POOLSPEC_MAX_CHAINS_VECTOR_FLAGS 1
#else
#define POOLSPEC_MAX_CHAINS_VECTOR_FLAGS 0
#endif
template <class D, bool kPropagate, bool kMagnitudes = true>
struct MaxChains {
  using T = hn::TFromD<D>;
  static constexpr bool floating = std::is_floating_point_v<T>;
  static constexpr bool vector_flags =
      !kMagnitudes && POOLSPEC_MAX_CHAINS_VECTOR_FLAGS && std::is_same_v<T, float> &&
      hn::MaxLanes(D()) * sizeof(float) == (HWY_TARGET == HWY_AVX2 ? 32 : 16);  // whole registers
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  static constexpr TI magnitude_mask =
      static_cast<TI>(sizeof(TI) == 4 ? 0x7fffffff : 0x7fffffffffffffff);
  static constexpr TI infinity_bits =
      static_cast<TI>(sizeof(TI) == 4 ? 0x7f800000 : 0x7ff0000000000000);
  hn::Vec<D> m[4];
  hn::Vec<D> flag[4];        // vector_flags: `seen` (propagate) or `least` (ignore)
  hn::Vec<DI> magnitude[4];  // otherwise

  // Before the first value: below every value (-inf is taken by no value, and equals -inf).
  explicit MaxChains(D d) {
    const DI di;
    for (size_t i = 0; i < 4; ++i) {
      m[i] = hn::Set(
          d, floating ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest());
      flag[i] = kPropagate ? hn::Zero(d) : hn::Set(d, std::numeric_limits<T>::infinity());
      magnitude[i] = hn::Set(di, kPropagate ? TI{0} : magnitude_mask);
    }
  }
  HWY_INLINE void Step(D d, size_t i, hn::Vec<D> v) {
    m[i] = FirstIfGreater(d, v, m[i]);
    if constexpr (vector_flags) {
#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
      flag[i] = hn::Vec<D>{kPropagate ? _mm256_cmp_ps(flag[i].raw, v.raw, _CMP_UNORD_Q)
                                      : _mm256_min_ps(v.raw, flag[i].raw)};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_SSE4
      flag[i] = hn::Vec<D>{kPropagate ? _mm_cmpunord_ps(flag[i].raw, v.raw)
                                      : _mm_min_ps(v.raw, flag[i].raw)};
#endif
    } else if constexpr (floating) {
      const DI di;
      const auto bits = hn::And(hn::BitCast(di, v), hn::Set(di, magnitude_mask));
      magnitude[i] = kPropagate ? hn::Max(magnitude[i], bits) : hn::Min(magnitude[i], bits);
    }
  }
  HWY_INLINE hn::Vec<D> Result(D d, size_t i) const {
    if constexpr (floating) {
      const auto nan = hn::Set(d, std::numeric_limits<T>::quiet_NaN());
      if constexpr (vector_flags) {
        if constexpr (kPropagate) return hn::IfThenElse(hn::MaskFromVec(flag[i]), nan, m[i]);
        const auto infinity = hn::Set(d, std::numeric_limits<T>::infinity());
        return hn::IfThenElse(hn::And(hn::Eq(m[i], hn::Neg(infinity)), hn::Eq(flag[i], infinity)),
                              nan, m[i]);
      }
      const DI di;
      return hn::IfThenElse(hn::RebindMask(d, hn::Gt(magnitude[i], hn::Set(di, infinity_bits))),
                            nan, m[i]);
    }
    (void)d;
    return m[i];
  }
};
#undef POOLSPEC_MAX_CHAINS_VECTOR_FLAGS

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#endif  // POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_
