// global_avg: the averages over a window of each whole plane -- global_avg_nchw, one reduction per
// contiguous plane; global_avg_nhwc, each image's pixels summed in memory order.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/global_avg.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

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
      // -0 is the additive identity (-0 + x = x for every x, +0 included): a plane of -0 sums to
      // -0. A plane is short: the lines 8 KiB further on, prefetched (measured on cold input,
      // 8x2048 planes of 7x7: 0.107 ms without, 0.080 with; 1, 2 and 4 KiB ahead are slower). An
      // address past the input is only a hint, never read.
      const uintptr_t later = reinterpret_cast<uintptr_t>(src) + 8192;
      for (int64_t b = 0; b < size * static_cast<int64_t>(sizeof(S)) + 64; b += 64)
        __builtin_prefetch(reinterpret_cast<const void*>(later + static_cast<uintptr_t>(b)));
      const auto identity =
          hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
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
        acc1 = hn::Add(
            acc1, hn::IfThenElse(hn::FirstN(d, rest), LoadPartial(d, src + i, rest), identity));
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
  // Whole images, read in order (8x2048 channels of 7x7 cold: 1.1x faster than avg_nhwc's rows of
  // sums; in chunks of 512 channels, each a stream with gaps, 1.9x slower); split in as many
  // chunks as it takes to give every thread work when the images are too few.
  const int64_t parts =
      std::max<int64_t>(1, std::min<int64_t>(a.threads / std::max<int64_t>(P.batch, 1), C / L));
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
        for (int64_t i = 0; i < whole; i += L)
          hn::Store(hn::Add(hn::Load(d, sums + i), LoadAs(d, pixel + i)), d, sums + i);
        if (tail > 0)
          hn::Store(hn::Add(hn::Load(d, sums + whole), LoadPartial(d, pixel + whole, tail)), d,
                    sums + whole);
      }
      S* dst = out + n * C + c0;
      for (int64_t i = 0; i < whole; i += L)
        StoreAs(FinishAverage(d, hn::Load(d, sums + i), f, rule), d, dst + i);
      if (tail > 0)
        StorePartial(FinishAverage(d, hn::Load(d, sums + whole), f, rule), d, dst + whole, tail);
    }
  });
}

void RunGlobalAvgNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype,
           [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { GlobalAvgNchw<S, Acc>(P, a); });
}

void RunGlobalAvgNhwc(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype,
           [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { GlobalAvgNhwc<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunGlobalAvgNchw);
HWY_EXPORT(RunGlobalAvgNhwc);

namespace {

// A window over each whole plane (image, in NHWC), no padding, no dilation.
Status accepts_global_avg(const Problem& p, Layout layout, Layout wanted) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == wanted && p.op == Op::avg,
                       wanted == Layout::channels_first ? "avg in nchw only" : "avg in nhwc only");
      !s)
    return s;
  for (const Axis& a : p.axes)
    if (a.kernel != a.extent || a.pad_begin != 0 || a.pad_end != 0 || a.dilation != 1)
      return Error{"the window is not the whole plane"};
  if (!is_float(p.dtype) && taps_of(p) * 256 >= (int64_t{1} << 23))
    return Error{"plane too large for an exact integer sum"};
  return Ok{};
}

Status accepts_global_avg_nchw(const Problem& p, Layout layout) {
  return accepts_global_avg(p, layout, Layout::channels_first);
}

Status accepts_global_avg_nhwc(const Problem& p, Layout layout) {
  return accepts_global_avg(p, layout, Layout::channels_last);
}

void run_global_avg_nchw(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunGlobalAvgNchw)(P, a);
}
void run_global_avg_nhwc(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunGlobalAvgNhwc)(P, a);
}

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo global_avg_nchw{
    .name = "global_avg_nchw",
    .description = "a window over each whole plane: one contiguous reduction per plane",
    .accepts = accepts_global_avg_nchw,
    .preferred = nullptr,
    .run = run_global_avg_nchw,
    .scope = {.op = Op::avg, .layout = Layout::channels_first, .whole_plane = true},
};

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo global_avg_nhwc{
    .name = "global_avg_nhwc",
    .description =
        "a window over each whole image: its pixels summed in memory order into a row of sums, "
        "a chunk of channels at a time",
    .accepts = accepts_global_avg_nhwc,
    .preferred = nullptr,
    .run = run_global_avg_nhwc,
    .scope = {.op = Op::avg, .layout = Layout::channels_last, .whole_plane = true},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
