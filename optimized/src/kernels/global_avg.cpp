// global_avg: the averages over a window of each whole plane -- global_avg_nchw, contiguous planes
// reduced a vector of them at a time; global_avg_nhwc, each image's pixels summed in memory order.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/global_avg.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- global_avg_nchw: each plane is contiguous; a vector of planes per reduction ---------------
//
// Planes of at least a vector are summed a group of as many planes as a vector has lanes at a
// time: each plane into a vector of partial sums, then the group's vectors reduced together into
// one vector of the group's sums (PlaneSums), so a group costs one reduction and one store, not
// one per plane (8x2048 planes of 7x7 at 1 thread on AVX2, hot: 0.34 ms one at a time). The
// reduction's lane moves are written for 4 and 8 lanes of 32 bits: the kernel runs at most 8
// lanes wide (AVX-512 too: a 49-element plane fills three of its vectors and a part of a fourth).

// The elements of the plane at src, summed lane by lane into one vector. Its last partial vector
// is read as the plane's last full vector, with the lanes of `head` (those before the rest) set to
// the identity: a plain load, where a partial one costs a stack copy on SSE4 and for the 8- and
// 16-bit types (LoadPartial). A plane shorter than a vector is read by a partial load.
template <class D, class S>
HWY_INLINE hn::Vec<D> PlaneLanes(D d, const S* HWY_RESTRICT src, int64_t size, hn::Vec<D> identity,
                                 hn::Vec<D> head) {
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  auto acc0 = identity, acc1 = identity;
  int64_t i = 0;
  for (; i + 2 * L <= size; i += 2 * L) {
    acc0 = hn::Add(acc0, LoadAs(d, src + i));
    acc1 = hn::Add(acc1, LoadAs(d, src + i + L));
  }
  if (i + L <= size) {
    acc0 = hn::Add(acc0, LoadAs(d, src + i));
    i += L;
  }
  if (i < size) {
    if (size >= L) {
      acc1 =
          hn::Add(acc1, hn::IfThenElse(hn::MaskFromVec(head), identity, LoadAs(d, src + size - L)));
    } else {
      // LoadPartial's other lanes are +0: the identity of integer sums, not of floats. (Integers
      // take no blend: FirstN's, of a widened partial i8 load, is an internal error of g++ 12 on
      // AVX3.)
      const auto rest = static_cast<size_t>(size);
      if constexpr (std::is_floating_point_v<hn::TFromD<D>>)
        acc1 =
            hn::Add(acc1, hn::IfThenElse(hn::FirstN(d, rest), LoadPartial(d, src, rest), identity));
      else
        acc1 = hn::Add(acc1, LoadPartial(d, src, rest));
    }
  }
  return hn::Add(acc0, acc1);
}

// Lane j of the result is the sum of v[j]'s lanes, for Lanes(d) vectors of 4 or 8 lanes of 32
// bits: pairs of vectors interleaved by 32-bit lanes and added, then pairs of those by 64-bit
// lanes (each 128-bit block then holds four vectors' block sums), then, with 8 lanes, the two
// halves of two such vectors. (SCALAR has no lane moves, and one lane.)
#if HWY_TARGET != HWY_SCALAR
template <class D>
HWY_INLINE hn::Vec<D> PlaneSums(D d, const hn::Vec<D>* v) {
  static_assert(sizeof(hn::TFromD<D>) == 4 && (hn::MaxLanes(D()) == 4 || hn::MaxLanes(D()) == 8));
  const hn::Repartition<uint64_t, D> d64;
  const auto pair = [&](hn::Vec<D> a, hn::Vec<D> b) HWY_ATTR {
    return hn::Add(hn::InterleaveLower(d, a, b), hn::InterleaveUpper(d, a, b));
  };
  const auto quad = [&](hn::Vec<D> ab, hn::Vec<D> cd) HWY_ATTR {
    const auto x = hn::BitCast(d64, ab), y = hn::BitCast(d64, cd);
    return hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, x, y)),
                   hn::BitCast(d, hn::InterleaveUpper(d64, x, y)));
  };
  const auto q0 = quad(pair(v[0], v[1]), pair(v[2], v[3]));
  if constexpr (hn::MaxLanes(D()) == 4) {
    return q0;
  } else {
    const auto q1 = quad(pair(v[4], v[5]), pair(v[6], v[7]));
    return hn::Add(hn::ConcatLowerLower(d, q1, q0), hn::ConcatUpperUpper(d, q1, q0));
  }
}
#endif

template <class S, class Acc>
void GlobalAvgNchw(const Plan& P, const RunArgs& a) {
  const hn::CappedTag<Acc, 8> d;
  [[maybe_unused]] constexpr size_t kMaxLanes = hn::MaxLanes(decltype(d)());
  [[maybe_unused]] const auto L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t planes = P.batch * P.channels, size = P.in_plane;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  const float factor = AverageFactor<Acc>(P.divisor(0, 0, 0));
  const IntRounding rule = P.p.int_rounding;
  // Planes are short: the lines 8 KiB further on, prefetched (measured on cold input, 8x2048
  // planes of 7x7: 0.107 ms without, 0.080 with; 1, 2 and 4 KiB ahead are slower). An address
  // past the input is only a hint, never read.
  const auto prefetch_ahead = [](const S* from, int64_t elements) {
    const uintptr_t later = reinterpret_cast<uintptr_t>(from) + 8192;
    for (int64_t b = 0; b < elements * static_cast<int64_t>(sizeof(S)) + 64; b += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(later + static_cast<uintptr_t>(b)));
  };
  // -0 is the additive identity (-0 + x = x for every x, +0 included): a plane of -0 sums to -0.
  const auto identity = hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
  // The lanes of a plane's last vector that the vector before it holds too.
  const auto head = hn::VecFromMask(d, hn::FirstN(d, static_cast<size_t>((L - size % L) % L)));
  ParallelRanges(a.threads, planes, [&](int64_t begin, int64_t end) HWY_ATTR {
    int64_t nc = begin;
#if HWY_TARGET != HWY_SCALAR
    if constexpr (kMaxLanes == 4 || kMaxLanes == 8) {
      if (size >= L && L == static_cast<int64_t>(kMaxLanes)) {  // (not on a shorter SVE vector)
        const hn::Rebind<float, decltype(d)> df;
        const auto f = hn::Set(df, factor);
        for (; nc + L <= end; nc += L) {
          const S* src = in + nc * size;
          prefetch_ahead(src, L * size);
          hn::Vec<decltype(d)> lanes[kMaxLanes];
          for (int64_t j = 0; j < L; ++j)
            lanes[j] = PlaneLanes(d, src + j * size, size, identity, head);
          StoreAs(FinishAverage(d, PlaneSums(d, lanes), f, rule), d, out + nc);
        }
      }
    }
#endif
    for (; nc < end; ++nc) {  // the planes left over, one at a time
      const S* src = in + nc * size;
      prefetch_ahead(src, size);
      const Acc sum = hn::GetLane(hn::SumOfLanes(d, PlaneLanes(d, src, size, identity, head)));
      ScalarStore<Acc>(FinishAverageScalar<Acc>(sum, factor, rule), out + nc);
    }
  });
}

// ---- global_avg_nhwc: a window over each whole image; its pixels summed in memory order ------
//
// One output pixel per image. Its channels, a chunk at a time, are the sums of the image's
// pixels, read in memory order (avg_nhwc's rows of sums along W: 57 KiB for 7x7 pixels of 2048
// channels, out of L1). The pixels are added to a row of sums seven at a time, each vector of
// seven pixels summed in registers first: one load and one store of the row per seven pixels,
// not per pixel (8x2048 channels of 7x7 at 1 thread on AVX2, hot: 0.18 ms a pixel at a time).

constexpr int kPixelsPerPass = 7;

// The row of sums plus pixels [0, G) at `at`, C apart (the row itself when `first`), for a
// chunk of `whole` channels and a partial vector of `tail` more.
template <int G, class D, class S>
HWY_INLINE void AddPixels(D d, const S* HWY_RESTRICT at, int64_t C, int64_t whole, size_t tail,
                          bool first, hn::TFromD<D>* HWY_RESTRICT sums) {
  const auto L = static_cast<int64_t>(hn::Lanes(d));
  const auto add = [&](hn::Vec<D> v, int64_t i) HWY_ATTR {
    hn::Store(first ? v : hn::Add(hn::Load(d, sums + i), v), d, sums + i);
  };
  for (int64_t i = 0; i < whole; i += L) {
    auto v = LoadAs(d, at + i);
    for (int q = 1; q < G; ++q) v = hn::Add(v, LoadAs(d, at + q * C + i));
    add(v, i);
  }
  if (tail > 0) {
    auto v = LoadPartial(d, at + whole, tail);
    for (int q = 1; q < G; ++q) v = hn::Add(v, LoadPartial(d, at + q * C + whole, tail));
    add(v, whole);
  }
}

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
      for (int64_t p = 0; p < pixels; p += kPixelsPerPass) {
        const S* at = image + p * C;
        const bool first = p == 0;
        switch (std::min<int64_t>(kPixelsPerPass, pixels - p)) {
          case 1: AddPixels<1>(d, at, C, whole, tail, first, sums); break;
          case 2: AddPixels<2>(d, at, C, whole, tail, first, sums); break;
          case 3: AddPixels<3>(d, at, C, whole, tail, first, sums); break;
          case 4: AddPixels<4>(d, at, C, whole, tail, first, sums); break;
          case 5: AddPixels<5>(d, at, C, whole, tail, first, sums); break;
          case 6: AddPixels<6>(d, at, C, whole, tail, first, sums); break;
          default: AddPixels<kPixelsPerPass>(d, at, C, whole, tail, first, sums); break;
        }
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
    .description =
        "a window over each whole plane: one contiguous reduction per plane, a vector of planes at "
        "a time",
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
        "seven per pass, a chunk of channels at a time",
    .accepts = accepts_global_avg_nhwc,
    .preferred = nullptr,
    .run = run_global_avg_nhwc,
    .scope = {.op = Op::avg, .layout = Layout::channels_last, .whole_plane = true},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
