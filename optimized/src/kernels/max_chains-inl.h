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
// ties to the first. Whether a NaN was seen (propagate: the result is then NaN) or a number was
// (ignore: else the result is NaN) is kept in integer lanes: the largest, or the smallest, of
// the values' magnitude bits, which exceed those of infinity exactly for a NaN. Integer max and
// min cost less than a NaN test and a mask OR per value.
template <class D, bool kPropagate>
struct MaxChains {
  static constexpr bool floating = std::is_floating_point_v<hn::TFromD<D>>;
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  static constexpr TI magnitude_mask =
      static_cast<TI>(sizeof(TI) == 4 ? 0x7fffffff : 0x7fffffffffffffff);
  static constexpr TI infinity_bits =
      static_cast<TI>(sizeof(TI) == 4 ? 0x7f800000 : 0x7ff0000000000000);
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
      return hn::IfThenElse(hn::RebindMask(d, hn::Gt(magnitude[i], hn::Set(di, infinity_bits))),
                            nan, m[i]);
    }
    (void)d;
    return m[i];
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#endif  // POOLSPEC_OPTIMIZED_KERNELS_MAX_CHAINS_INL_H_
