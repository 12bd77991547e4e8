// max_nhwc: the general NHWC max kernel -- per output element, its taps in scan order; lanes over
// channels. Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/max_nhwc.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <span>
#include <vector>

#include "kernels/max_chains-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- max_nhwc: per output element, its taps in scan order; lanes over channels ----------------

// max_start=lowest: the spec's running maximum starts at the dtype's lowest value and a tap
// replaces it only when greater, so where the window's maximum m is not above that value (a
// NaN, or the value itself) the output is the lowest value and the index the start's (offset 0).
// Returns the lanes where m was above it (and stays). The values alone, as without indices:
template <class D>
HWY_INLINE hn::Mask<D> StartFromLowest(D d, DType dtype, hn::Vec<D>& m) {
  const auto lowest = hn::Set(d, static_cast<hn::TFromD<D>>(lowest_value(dtype)));
  const auto above = hn::Gt(m, lowest);
  m = hn::IfThenElse(above, m, lowest);
  return above;
}
// The values and their offsets; `off` is left alone where its lanes are not the values' (8-bit
// values, which keep no index).
template <class D, class DI>
HWY_INLINE void StartFromLowest(D d, DI di, DType dtype, hn::Vec<D>& m, hn::Vec<DI>& off) {
  const auto above = StartFromLowest(d, dtype, m);
  if constexpr (sizeof(hn::TFromD<D>) == sizeof(hn::TFromD<DI>))
    off = hn::IfThenElse(hn::RebindMask(di, above), off, hn::Zero(di));
}

// The most taps a window may have for max_nhwc to list their offsets (8 KiB of them), and the
// most input rows WholeWindows prefetches for the next output row (the first ones).
constexpr int64_t kMaxListedTaps = 1024;
constexpr int64_t kMaxPrefetchLines = 16;

// Values only, of output row `row` (n, od, oh), the pixels [interior_begin, interior_end) along
// W, whose windows lie wholly inside the input: each tap at a listed offset from the window's
// first (`taps`), four chains of vectors of channels at a time, and the next output row's new
// input rows (`lines`, element offsets at x = 0) prefetched over the columns each pixel moves by.
// The general loop of MaxNhwcWith works out each tap's index from its coordinates and prefetches
// through the same nest: on the ResNet stem, at 1 thread on AVX2 with the input in L3, about
// 250 cycles per output pixel, half of them outside the taps.
template <class S, class D, bool kPropagate>
HWY_NOINLINE void WholeWindows(D d, const Plan& P, const S* HWY_RESTRICT image,
                               const std::vector<int64_t>& taps, std::span<const int64_t> lines,
                               int64_t row, S* HWY_RESTRICT out) {
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t C = P.channels, OW = AW.out;
  const int64_t od = (row / AH.out) % AD.out, oh = row % AH.out;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  const int64_t step = AW.stride * C;  // between neighbouring windows
  const auto bytes = static_cast<size_t>(step) * sizeof(S);
  const int64_t* const taps_end = taps.data() + taps.size();
  const S* window =
      image + ((AD.start(od) * AH.in + AH.start(oh)) * AW.in + AW.start(AW.interior_begin)) * C;
  S* dst = out + (row * OW + AW.interior_begin) * C;
  for (int64_t ow = AW.interior_begin; ow < AW.interior_end; ++ow, window += step, dst += C) {
    const int64_t x = AW.start(ow) * C;
    for (const int64_t line : lines) {  // (as integers: the last lines may run past the input)
      const uintptr_t from = reinterpret_cast<uintptr_t>(image) + (line + x) * sizeof(S);
      for (size_t b = 0; b < bytes; b += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(from + b));
    }
    for (int64_t c = 0; c < C; c += 4 * L) {
      MaxChains<D, kPropagate, false> chains(d);
      for (const int64_t* tap = taps.data(); tap != taps_end; ++tap) {
        const S* src = window + *tap + c;
#pragma GCC unroll 4  // the chains stay in registers
        for (size_t i = 0; i < 4; ++i)
          chains.Step(d, i, LoadAs(d, src + static_cast<int64_t>(i) * L));
      }
#pragma GCC unroll 4
      for (size_t i = 0; i < 4; ++i) {
        auto m = chains.Result(d, i);
        if (from_lowest) (void)StartFromLowest(d, P.p.dtype, m);
        StoreAs(m, d, dst + c + static_cast<int64_t>(i) * L);
      }
    }
  }
}

// D: the lanes the values are compared in (of the compute type, or of the storage type itself
// for i8 and u8 without indices: MaxNhwc).
template <class S, class D, bool kPropagate>
void MaxNhwcWith(const Plan& P, const RunArgs& a) {
  using Acc = hn::TFromD<D>;
  using DI = hn::RebindToSigned<hn::ScalableTag<float>>;
  const D d;
  const DI di;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, OW = AW.out;
  const int64_t out_rows = P.batch * AD.out * AH.out;
  // The offsets are kept in 32-bit lanes, one per value lane: with 32-bit values only.
  constexpr bool can_index = sizeof(Acc) == sizeof(int32_t);
  const bool indices = a.indices != nullptr;
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  constexpr bool propagate = kPropagate;
  constexpr bool floating = std::is_floating_point_v<Acc>;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  // A whole window's taps (every one inside the input), in scan order, as element offsets from
  // its first, for WholeWindows; empty for windows too large to list.
  std::vector<int64_t> whole_taps;
  if (!indices && C % (4 * L) == 0 && AD.kernel * AH.kernel * AW.kernel <= kMaxListedTaps)
    for (int64_t td = 0; td < AD.kernel; ++td)
      for (int64_t th = 0; th < AH.kernel; ++th)
        for (int64_t tw = 0; tw < AW.kernel; ++tw)
          whole_taps.push_back(
              ((td * AD.dilation * AH.in + th * AH.dilation) * AW.in + tw * AW.dilation) * C);
  ParallelRanges(a.threads, out_rows, [&](int64_t begin, int64_t end) HWY_ATTR {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / (AD.out * AH.out), od = (row / AH.out) % AD.out, oh = row % AH.out;
      const int64_t fd = AD.first[static_cast<size_t>(od)], pd = AD.past[static_cast<size_t>(od)];
      const int64_t fh = AH.first[static_cast<size_t>(oh)], ph = AH.past[static_cast<size_t>(oh)];
      const S* image = in + n * P.in_plane * C;
      // The input rows the next output row adds (the last `stride` of its window's rows), from
      // the columns this one's window starts at: prefetched a row ahead. Read once and from far
      // apart rows, a large input otherwise waits on memory (ResNet stem, cold: 1.8-2.1x faster
      // than without).
      const int64_t next_oh = oh + 1 < AH.out ? oh + 1 : -1;
      const int64_t new_rows_from =
          next_oh < 0
              ? 0
              : std::max<int64_t>(
                    0, AH.start(next_oh) +
                           std::max<int64_t>(0, (AH.kernel - 1) * AH.dilation + 1 - AH.stride));
      const int64_t new_rows_past =
          next_oh < 0 ? 0 : std::min(AH.in, AH.start(next_oh) + (AH.kernel - 1) * AH.dilation + 1);
      // Values only, channels in blocks of four vectors, this row's windows whole in depth and
      // height: the pixels whose windows are whole along W too run in WholeWindows.
      const bool whole_rows = !whole_taps.empty() && fd == 0 && pd == AD.kernel && fh == 0 &&
                              ph == AH.kernel && AW.interior_begin < AW.interior_end;
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (whole_rows && ow == AW.interior_begin) {
          int64_t lines[kMaxPrefetchLines];  // the next output row's new input rows, at x = 0
          int count = 0;
          for (int64_t td = fd; td < pd; ++td)
            for (int64_t ih = new_rows_from; ih < new_rows_past && count < kMaxPrefetchLines; ++ih)
              lines[count++] = ((AD.start(od) + td * AD.dilation) * AH.in + ih) * AW.in * C;
          WholeWindows<S, D, kPropagate>(
              d, P, image, whole_taps, std::span<const int64_t>(lines, static_cast<size_t>(count)),
              row, out);
          ow = AW.interior_end - 1;
          continue;
        }
        const int64_t fw = AW.first[static_cast<size_t>(ow)], pw = AW.past[static_cast<size_t>(ow)];
        const int64_t position = (row * OW + ow) * C;
        // Values only, with fewer channels than four vectors (whole vectors of them): one block
        // of four pixels whose windows are whole (their taps are this pixel's, moved by the
        // stride), the four chains below.
        const bool four_pixels = !indices && C < 4 * L && C % L == 0 && ow >= AW.interior_begin &&
                                 ow + 4 <= AW.interior_end;
        if (new_rows_from < new_rows_past) {
          // The columns of the pixels this step covers (four of them for four_pixels).
          const int64_t x_from = std::clamp<int64_t>(AW.start(ow), 0, AW.in),
                        x_past = std::clamp<int64_t>(
                            AW.start(ow) + AW.stride * (four_pixels ? 4 : 1), 0, AW.in);
          const int64_t bytes = (x_past - x_from) * C * static_cast<int64_t>(sizeof(S));
          for (int64_t td = fd; td < pd; ++td) {
            const int64_t id = AD.start(od) + td * AD.dilation;
            for (int64_t ih = new_rows_from; ih < new_rows_past; ++ih) {
              const char* line =
                  reinterpret_cast<const char*>(image + ((id * AH.in + ih) * AW.in + x_from) * C);
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
        // both, the four-block path is 1.5x slower on the ResNet stem.
        if constexpr (can_index) {
          if (indices) {
            // With indices, four channel blocks at a time too: each chain starts at the window's
            // first tap (comparing it again with itself takes nothing) and keeps the offset of the
            // tap it took, one broadcast for the four.
            const int64_t first_spatial =
                ((AD.start(od) + fd * AD.dilation) * AH.in + AH.start(oh) + fh * AH.dilation) *
                    AW.in +
                AW.start(ow) + fw * AW.dilation;
            for (; c + 4 * L <= C; c += 4 * L) {
              hn::Vec<D> m[4];
              hn::Vec<DI> off[4];
              for (size_t i = 0; i < 4; ++i) {
                m[i] = LoadAs(d, image + first_spatial * C + c + static_cast<int64_t>(i) * L);
                off[i] = hn::Set(di, static_cast<int32_t>(first_spatial));
              }
              for (int64_t td = fd; td < pd; ++td) {
                const int64_t id = AD.start(od) + td * AD.dilation;
                for (int64_t th = fh; th < ph; ++th) {
                  const int64_t ih = AH.start(oh) + th * AH.dilation;
                  for (int64_t tw = fw; tw < pw; ++tw) {
                    const int64_t iw = AW.start(ow) + tw * AW.dilation;
                    const int64_t spatial = (id * AH.in + ih) * AW.in + iw;
                    const S* src = image + spatial * C + c;
                    const auto at = hn::Set(di, static_cast<int32_t>(spatial));
#pragma GCC unroll 4  // the chains stay in registers
                    for (size_t i = 0; i < 4; ++i) {
                      const auto v = LoadAs(d, src + static_cast<int64_t>(i) * L);
                      const auto keep = Keeps<D>(v, m[i], propagate);
                      m[i] = hn::IfThenElse(keep, m[i], v);
                      off[i] = hn::IfThenElse(hn::RebindMask(di, keep), off[i], at);
                    }
                  }
                }
              }
#pragma GCC unroll 4
              for (size_t i = 0; i < 4; ++i) {
                const int64_t block = c + static_cast<int64_t>(i) * L;
                if (from_lowest) StartFromLowest(d, di, P.p.dtype, m[i], off[i]);
                StoreAs(m[i], d, out + position + block);
                StoreIndices(di, P, off[i], n, block, 1, static_cast<size_t>(L),
                             a.indices + position + block);
              }
            }
          }
        }
        if (!indices) {
          // Values only, four chains at a time: four channel blocks of this pixel, or
          // (four_pixels) one block of four pixels.
          const int64_t chain_step =
              four_pixels ? AW.stride * C : L;  // between the chains' sources
          const int64_t store_step = four_pixels ? C : L;
          for (; four_pixels ? c < C : c + 4 * L <= C; c += four_pixels ? L : 4 * L) {
            MaxChains<D, propagate, false> chains(d);
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
              if (from_lowest) (void)StartFromLowest(d, P.p.dtype, m);
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
                const auto v =
                    count == static_cast<size_t>(L) ? LoadAs(d, src) : LoadPartial(d, src, count);
                if (first) {
                  m = v;
                  off = hn::Set(di, static_cast<int32_t>(spatial));
                  if constexpr (floating) nan_seen = hn::IsNaN(v);
                  first = false;
                  continue;
                }
                if constexpr (can_index) {
                  if (indices) {
                    const auto keep = Keeps<D>(v, m, propagate);
                    m = hn::IfThenElse(keep, m, v);
                    off = hn::IfThenElse(hn::RebindMask(di, keep), off,
                                         hn::Set(di, static_cast<int32_t>(spatial)));
                    continue;
                  }
                }
                if constexpr (floating) {
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
            if (!indices && propagate)
              m = hn::IfThenElse(nan_seen, hn::Set(d, std::numeric_limits<Acc>::quiet_NaN()), m);
          }
          if (from_lowest) StartFromLowest(d, di, P.p.dtype, m, off);
          S* dst = out + position + c;
          if (count == static_cast<size_t>(L))
            StoreAs(m, d, dst);
          else
            StorePartial(m, d, dst, count);
          if constexpr (can_index)
            if (indices) StoreIndices(di, P, off, n, c, 1, count, a.indices + position + c);
        }
      }
    }
  });
}

// The NaN rule as a template parameter (ForNanRule). i8 and u8 values only are compared as they are
// stored, four times as many lanes as in int32_t (the maximum is one of the values: no wider type
// is needed): whole vectors when the channels fill them, else a block's width of lanes
// (blocked_nchw's 16 channels).
template <class S, class Acc>
void MaxNhwc(const Plan& P, const RunArgs& a) {
  if constexpr (sizeof(S) == 1) {
    if (a.indices == nullptr) {
      if (P.channels % static_cast<int64_t>(hn::Lanes(hn::ScalableTag<S>())) == 0)
        return MaxNhwcWith<S, hn::ScalableTag<S>, false>(P, a);
      return MaxNhwcWith<S, hn::CappedTag<S, block_channels>, false>(P, a);
    }
  }
  ForNanRule<Acc>(P, [&](auto propagate) HWY_ATTR {
    MaxNhwcWith<S, hn::ScalableTag<Acc>, decltype(propagate)::value>(P, a);
  });
}

void RunMaxNhwc(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { MaxNhwc<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunMaxNhwc);

namespace {

Status accepts_max_nhwc(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  return wants(layout == Layout::channels_last && p.op == Op::max, "max in nhwc only");
}

void run_max_nhwc(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunMaxNhwc)(P, a); }

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo max_nhwc{
    .name = "max_nhwc",
    .description = "per output element: taps in scan order; lanes over C",
    .accepts = accepts_max_nhwc,
    .preferred = nullptr,
    .run = run_max_nhwc,
    .scope = {.op = Op::max, .layout = Layout::channels_last},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
