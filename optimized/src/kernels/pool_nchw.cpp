// pool_nchw: the general NCHW kernel, avg and max -- per plane, every input row reduced along W,
// then the rows combined. Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- pool_nchw: per plane, every input row reduced along W, then the rows combined ------------
//
// Separable in the spec's scan order: a window's taps are (rows in order) x (columns in order),
// and combining first-maxima of consecutive runs with a strict '>' gives the first maximum of the
// whole run, so reducing each row first and then the rows keeps the spec's tie and NaN rules.

template <class S, class Acc>
void PoolNchw(const Plan& P, const RunArgs& a) {
  ParallelRanges(a.threads, P.batch * P.channels, [&](int64_t begin, int64_t end) HWY_ATTR {
    // The problem's constants are read into locals here, not captured: a SIMD store may alias
    // any object (the intrinsics' vector types do), so a captured value would be loaded again
    // after every store (on the ResNet stem with indices, a tenth of the kernel's samples).
    using D = hn::ScalableTag<Acc>;
    using DI = hn::RebindToSigned<hn::ScalableTag<float>>;
    const D d;
    const DI di;
    const int64_t L = static_cast<int64_t>(hn::Lanes(d));
    const AxisTable &AD = P.axis[0], &AH = P.axis[1], &AW = P.axis[2];
    const int64_t W = AW.in, OW = AW.out, rows = AD.in * AH.in;
    const bool avg = P.p.op == Op::avg, indices = a.indices != nullptr;
    const bool from_lowest = P.p.max_start == MaxStart::lowest;
    const bool propagate = P.p.nan == NanPolicy::propagate && !from_lowest;
    const IntRounding rule = P.p.int_rounding;
    const S* in = reinterpret_cast<const S*>(a.input);
    S* out = reinterpret_cast<S*>(a.output);
    const int64_t k_span = (AW.kernel - 1) * AW.dilation + 1;
    const size_t row_size = static_cast<size_t>(W + (OW + 2 * L) * AW.stride + k_span + 2 * L);
    const size_t slab_size = static_cast<size_t>(rows * OW + L);
    // Where the interior's vectors read up to in a row, from its start: LoadStrided reads within
    // stride * L of its first element. A row of the compute type is read in place unless that
    // passes the input's end (the last rows of the last plane); else through a copy.
    const int64_t interior_vectors = (AW.interior_end - AW.interior_begin + L - 1) / L;
    const int64_t read_end = interior_vectors <= 0
                                 ? W
                                 : AW.start(AW.interior_begin + (interior_vectors - 1) * L) +
                                       (AW.kernel - 1) * AW.dilation + AW.stride * L;
    const int64_t input_size = P.batch * P.channels * P.in_plane;

    thread_local std::vector<Acc> row_tl, slab_tl;
    thread_local std::vector<int32_t> offset_tl;
    thread_local std::vector<float> factors_tl;
    Acc* row_copy = Scratch(row_tl, row_size);
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
        // The row 8 rows ahead (in this plane or the next: they are contiguous), prefetched: read
        // once, the rows otherwise wait on memory (ResNet stem with indices, cold: 1.14x faster; 16
        // rows ahead: no faster).
        if (nc * P.in_plane + (r + 9) * W <= input_size)
          for (int64_t b = 0; b < W * static_cast<int64_t>(sizeof(S)); b += 64)
            __builtin_prefetch(reinterpret_cast<const char*>(src + 8 * W) + b);
        const Acc* row = row_copy;
        if constexpr (std::is_same_v<S, Acc>) {
          if (nc * P.in_plane + r * W + read_end <= input_size) row = src;
        }
        if (row == row_copy) {
          int64_t i = 0;
          for (; i + L <= W; i += L) hn::StoreU(LoadAs(d, src + i), d, row_copy + i);
          if (i < W)
            hn::StoreU(LoadPartial(d, src + i, static_cast<size_t>(W - i)), d, row_copy + i);
        }
        Acc* hrow = slab + r * OW;
        int32_t* hoff = indices ? slab_offset + r * OW : nullptr;
        const int32_t row_offset = static_cast<int32_t>(r * W);
        for (int64_t ow = AW.interior_begin; ow < AW.interior_end; ow += L) {
          const int64_t base = AW.start(ow);
          auto m = LoadStrided(d, row + base, AW.stride);
          auto lane_offset =
              hn::Add(hn::Mul(hn::Iota(di, 0), hn::Set(di, static_cast<int32_t>(AW.stride))),
                      hn::Set(di, static_cast<int32_t>(row_offset + base)));
          auto off = lane_offset;
          for (int64_t t = 1; t < AW.kernel; ++t) {
            const auto v = LoadStrided(d, row + base + t * AW.dilation, AW.stride);
            if (avg) {
              m = hn::Add(m, v);
            } else {
              const auto keep = Keeps<D>(v, m, propagate);
              m = hn::IfThenElse(keep, m, v);
              if (indices)
                off = hn::IfThenElse(
                    hn::RebindMask(di, keep), off,
                    hn::Add(lane_offset, hn::Set(di, static_cast<int32_t>(t * AW.dilation))));
            }
          }
          hn::StoreU(m, d, hrow + ow);  // lanes past the interior are rewritten below or unused
          if (indices) hn::StoreU(off, di, hoff + ow);
        }
        for (int64_t ow = 0; ow < OW; ++ow) {  // the border windows, clipped to the input
          if (ow == AW.interior_begin && AW.interior_end > ow) ow = AW.interior_end;
          if (ow >= OW) break;
          const int64_t first = AW.first[static_cast<size_t>(ow)],
                        past = AW.past[static_cast<size_t>(ow)];
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
          const int64_t fd = AD.first[static_cast<size_t>(od)],
                        pd = AD.past[static_cast<size_t>(od)];
          const int64_t fh = AH.first[static_cast<size_t>(oh)],
                        ph = AH.past[static_cast<size_t>(oh)];
          if (fd >= pd || fh >= ph) {
            for (int64_t ow = 0; ow < OW; ++ow)
              WriteEmpty(P, a, n, c, P.output_position(n, c, out_row + ow),
                         P.divisor(od, oh, ow) == 0);
            continue;
          }
          if (avg) {  // the factor table depends on the row's divisor and each column's
            const int64_t key = P.p.divisor == Divisor::override_value
                                    ? -2
                                    : int64_t{AD.divisor[static_cast<size_t>(od)]} *
                                          AH.divisor[static_cast<size_t>(oh)];
            if (key != factors_for) {
              std::fill(factors + OW, factors + OW + L,
                        1.0f);  // lanes past the row: finite, unused
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
                  const auto keep = Keeps<D>(v, m, propagate);
                  m = hn::IfThenElse(keep, m, v);
                  if (indices)
                    off = hn::IfThenElse(hn::RebindMask(di, keep), off,
                                         hn::LoadU(di, slab_offset + r * OW + ow));
                }
              }
            }
            if (avg) {
              m = FinishAverage(d, m, hn::LoadU(hn::Rebind<float, D>(), factors + ow), rule);
            } else if (from_lowest) {  // "m = lowest; m = v on v > m": lowest unless some v exceeds
                                       // it
              const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
              const auto above = hn::Gt(m, lowest);
              m = hn::IfThenElse(above, m, lowest);
              if (indices) off = hn::IfThenElse(hn::RebindMask(di, above), off, hn::Zero(di));
            }
            const int64_t count = std::min(L, OW - ow);
            if (count == L)
              StoreAs(m, d, dst + ow);
            else
              StorePartial(m, d, dst + ow, static_cast<size_t>(count));
            if (indices)  // NCHW: the row's outputs are consecutive
              StoreIndices(di, P, off, n, c, 0, static_cast<size_t>(count),
                           a.indices + P.output_position(n, c, out_row + ow));
          }
          for (const int64_t ow : AW.empty)  // no input column: fixed up
            WriteEmpty(P, a, n, c, P.output_position(n, c, out_row + ow),
                       P.divisor(od, oh, ow) == 0);
        }
      }
    }
  });
}

void RunPoolNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { PoolNchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunPoolNchw);

namespace {

Status accepts_pool_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first, "nchw only"); !s) return s;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < p.axes.size(); ++i) rows *= p.axes[i].extent;
  const int64_t out_w = output_extent_of(p, p.axes.back());
  if (rows * out_w > (int64_t{1} << 24))
    return Error{fmt::format(
        "{} rows of {} outputs: the per-plane scratch would exceed 2^24 elements", rows, out_w)};
  return Ok{};
}

void run_pool_nchw(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunPoolNchw)(P, a); }

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo pool_nchw{
    .name = "pool_nchw",
    .description = "per plane: rows reduced along W (strided SIMD loads), then combined row by row",
    .accepts = accepts_pool_nchw,
    .preferred = nullptr,
    .run = run_pool_nchw,
    .scope = {.layout = Layout::channels_first},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
