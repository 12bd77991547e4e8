// avg_plane_nchw: the average over a small plane, stride 1, output rows as long as the input's --
// the plane one flat array, summed along H, then along W with per-column masks.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/avg_plane_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include "kernels/row_sums-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

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
HWY_INLINE void MaskedSumsAlongW(D d, const hn::TFromD<D>* HWY_RESTRICT taps,
                                 const uint8_t* HWY_RESTRICT masks, int64_t vectors, int64_t size,
                                 int64_t taps_w, int64_t dilation,
                                 const float* HWY_RESTRICT factors, IntRounding rule,
                                 S* HWY_RESTRICT dst) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const int64_t kw = kTaps > 0 ? kTaps : taps_w;
  const hn::Rebind<float, D> df;
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  int64_t v = 0;
  for (; v + 2 <= vectors && (v + 2) * L <= size; v += 2) {
    const int64_t f = v * L;
    auto m0 = identity, m1 = identity;
    for (int64_t tx = 0; tx < kw; ++tx) {
      const uint8_t* mask = masks + (tx * vectors + v) * 8;
      m0 = hn::Add(m0, hn::IfThenElse(hn::LoadMaskBits(d, mask),
                                      hn::LoadU(d, taps + f + tx * dilation), identity));
      m1 = hn::Add(m1, hn::IfThenElse(hn::LoadMaskBits(d, mask + 8),
                                      hn::LoadU(d, taps + f + L + tx * dilation), identity));
    }
    StoreAs(FinishAverage(d, m0, hn::LoadU(df, factors + f), rule), d, dst + f);
    StoreAs(FinishAverage(d, m1, hn::LoadU(df, factors + f + L), rule), d, dst + f + L);
  }
  for (; v < vectors; ++v) {
    const int64_t f = v * L;
    auto m = identity;
    for (int64_t tx = 0; tx < kw; ++tx)
      m = hn::Add(m, hn::IfThenElse(hn::LoadMaskBits(d, masks + (tx * vectors + v) * 8),
                                    hn::LoadU(d, taps + f + tx * dilation), identity));
    m = FinishAverage(d, m, hn::LoadU(df, factors + f), rule);
    if (f + L <= size)
      StoreAs(m, d, dst + f);
    else
      StorePartial(m, d, dst + f, static_cast<size_t>(size - f));
  }
}

#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
// Lanes i of x[g .. g + L) whose index g + i lies in [lo, hi), the other lanes `identity`;
// nothing outside [lo, hi) is read (x + g may lie before the plane; LoadRange).
template <class D, class S>
HWY_INLINE hn::Vec<D> LoadFlatRange(D d, const S* x, int64_t g, int64_t lo, int64_t hi,
                                    hn::Vec<D> identity) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (g >= lo && g + L <= hi) return LoadAs(d, x + g);
  const auto first = static_cast<size_t>(std::clamp<int64_t>(lo - g, 0, L)),
             past = static_cast<size_t>(std::clamp<int64_t>(hi - g, 0, L));
  if (first >= past) return identity;
  return hn::IfThenElse(hn::AndNot(hn::FirstN(d, first), hn::FirstN(d, past)),
                        LoadRange(d, x, g, first, past), identity);
}

// a + b in the lanes of `where`, `other` elsewhere: one masked VADDPS or VPADDD on AVX-512;
// elsewhere an addition and a blend.
template <class D>
HWY_INLINE hn::Vec<D> AddWhere(D, hn::Mask<D> where, hn::Vec<D> a, hn::Vec<D> b, hn::Vec<D> other) {
#if HWY_TARGET <= HWY_AVX3
  if constexpr (std::is_floating_point_v<hn::TFromD<D>>)
    return hn::Vec<D>{_mm512_mask_add_ps(other.raw, where.raw, a.raw, b.raw)};
  else
    return hn::Vec<D>{_mm512_mask_add_epi32(other.raw, where.raw, a.raw, b.raw)};
#else
  return hn::IfThenElse(where, hn::Add(a, b), other);
#endif
}

// The column sums of flat outputs f .. f + L of a 3x3 window at stride 1 and pad 1: rows oh - 1
// (present for f >= W), oh and oh + 1 (present for f < size - W), added in row order as SumRows
// does.
template <class D, class S>
HWY_INLINE hn::Vec<D> PlaneColumnSums(D d, const S* HWY_RESTRICT x, int64_t W, int64_t size,
                                      int64_t f, hn::Vec<D> identity) {
  const auto above = LoadFlatRange(d, x, f - W, 0, size - W, identity);
  const auto middle = LoadFlatRange(d, x, f, 0, size, identity);
  const auto below = LoadFlatRange(d, x, f + W, W, size, identity);
  return hn::Add(hn::Add(above, middle), below);
}

// AvgPlane3x3's output vector v from the column sums of vectors v - 1, v and v + 1: the taps
// ow - 1, ow and ow + 1. The middle one is always in the row (pad 1). A tap outside it adds -0
// (or 0) in MaskedSumsAlongW, which leaves the other operand as it is: here it is not added.
// Which lanes add the outer taps comes from `tap_flags` (bit tx set where tap tx is in the row)
// by VPTESTMD on AVX-512. On Zen 5 that is much cheaper than loading the mask bits into a mask
// register (KMOVW from memory, or through a general register): a stand-alone loop of this step
// over Inception's 35x35 planes, in L1, is 1.3x faster with the flags.
template <class D, class S>
HWY_INLINE void Plane3x3Output(D d, const int32_t* HWY_RESTRICT tap_flags,
                               const float* HWY_RESTRICT factors, IntRounding rule, int64_t v,
                               hn::Vec<D> before, hn::Vec<D> here, hn::Vec<D> after, bool whole,
                               int64_t size, S* HWY_RESTRICT dst) {
  constexpr int64_t L = hn::MaxLanes(D());
  const hn::Rebind<float, D> df;
  const int64_t f = v * L;
#if HWY_TARGET <= HWY_AVX3
  const __m512i flags = _mm512_load_si512(tap_flags + f);
  const hn::Mask<D> left{_mm512_test_epi32_mask(flags, _mm512_set1_epi32(1))};
  const hn::Mask<D> right{_mm512_test_epi32_mask(flags, _mm512_set1_epi32(4))};
#else
  const hn::Rebind<int32_t, D> di;
  const auto flags = hn::Load(di, tap_flags + f);
  const auto left = hn::RebindMask(d, hn::TestBit(flags, hn::Set(di, 1)));
  const auto right = hn::RebindMask(d, hn::TestBit(flags, hn::Set(di, 4)));
#endif
  auto m = AddWhere(d, left, LanesFrom<L - 1>(d, before, here), here, here);
  m = AddWhere(d, right, m, LanesFrom<1>(d, here, after), m);
  m = FinishAverage(d, m, hn::LoadU(df, factors + f), rule);
  if (whole)
    StoreAs(m, d, dst + f);
  else
    StorePartial(m, d, dst + f, static_cast<size_t>(size - f));
}

// The column sums at g of an interior vector: rows g - W and g + W are whole vectors of the
// plane (g >= W, g + L + W <= size), so plain loads, added in PlaneColumnSums' order.
template <class D, class S>
HWY_INLINE hn::Vec<D> InteriorColumnSums(D d, const S* HWY_RESTRICT x, int64_t W, int64_t g) {
  return hn::Add(hn::Add(LoadAs(d, x + g - W), LoadAs(d, x + g)), LoadAs(d, x + g + W));
}

// Vector v of AvgPlane3x3 outside its interior loop, which moves `before` and `here` on by one.
template <class D, class S>
HWY_INLINE void Plane3x3Border(D d, const S* HWY_RESTRICT x, const char* next, int64_t W,
                               int64_t size, const int32_t* HWY_RESTRICT tap_flags,
                               const float* HWY_RESTRICT factors, IntRounding rule, int64_t v,
                               hn::Vec<D>& before, hn::Vec<D>& here, S* HWY_RESTRICT dst) {
  constexpr int64_t L = hn::MaxLanes(D());
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  __builtin_prefetch(next + v * L * static_cast<int64_t>(sizeof(S)));
  const auto after = PlaneColumnSums(d, x, W, size, (v + 1) * L, identity);
  Plane3x3Output(d, tap_flags, factors, rule, v, before, here, after, (v + 1) * L <= size, size,
                 dst);
  before = here;
  here = after;
}

// avg_plane_nchw for the common 3x3 window at stride 1, one pad on every side, out == in (the
// Inception and GoogLeNet layers): the rows' sums never leave registers. Each vector of column
// sums (x[f - W] + x[f]) + x[f + W], its rows where present, is formed once, and its neighbours'
// lanes f - 1 and f + 1 come from LanesFrom of the vectors before and after it. The additions are
// MaskedSumsAlongW's, in its order, so the outputs are the same bits; each output vector costs
// three loads, not SumRows' three loads and store and then three unaligned loads.
//
// The interior loop takes three vectors a pass, so that the column sums move on by renaming, and
// it prefetches the next plane (`next`) a line per output vector, not in a loop of its own ahead
// of the plane. With Plane3x3Output's tap flags, against a vector a pass, a prefetch loop of its
// own and the mask bits loaded into mask registers: Inception's planes in L2 (24 of them), 1
// thread, Zen 5, 1.4x faster a plane; the whole layer up to 1.1x faster hot, the same cold.
template <class D, class S>
HWY_NOINLINE void AvgPlane3x3(D d, const S* HWY_RESTRICT x, const char* next, int64_t W,
                              int64_t size, const int32_t* HWY_RESTRICT tap_flags, int64_t vectors,
                              const float* HWY_RESTRICT factors, IntRounding rule,
                              S* HWY_RESTRICT dst) {
  constexpr int64_t L = hn::MaxLanes(D());
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  auto before = identity, here = PlaneColumnSums(d, x, W, size, 0, identity);
  // Vector v needs the column sums at (v + 1) * L: interior for v in [interior_begin,
  // interior_end).
  const int64_t interior_begin = std::min(vectors, std::max<int64_t>(0, (W + L - 1) / L - 1));
  const int64_t interior_end = std::max(interior_begin, std::min(vectors, (size - W) / L - 1));
  int64_t v = 0;
  for (; v < interior_begin; ++v)
    Plane3x3Border(d, x, next, W, size, tap_flags, factors, rule, v, before, here, dst);
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
  for (; v < vectors; ++v)
    Plane3x3Border(d, x, next, W, size, tap_flags, factors, rule, v, before, here, dst);
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
  // AvgPlane3x3 (x86) takes the 3x3 window; its tables are the tap flags, not the masks.
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
  const auto is_3x3_same = [](const AxisTable& t) {
    return t.kernel == 3 && t.stride == 1 && t.dilation == 1 && t.pad_begin == 1 && t.out == t.in;
  };
  const bool fused_3x3 = sizeof(Acc) == 4 && is_3x3_same(AH) && is_3x3_same(AW);
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
    const auto identity =
        hn::Set(d, static_cast<Acc>(std::is_floating_point_v<Acc> ? -0.0f : 0.0f));
    for (int64_t i = 0; i < sums_length; i += L)
      hn::StoreU(identity, d, sums + std::min(i, sums_length - L));
    // Per output: its factor; per W tap and vector: the mask of lanes whose tap is in the row
    // (8 bytes of mask bits, enough for 64 lanes); for the fused 3x3 path instead, per output:
    // bit tx set where tap tx is in the row.
    float* factors = LineScratch(factors_tl, static_cast<size_t>(vectors * L));
    uint8_t* masks = Scratch(masks_tl, static_cast<size_t>(kw * vectors * 8));
    int32_t* tap_flags =
        LineScratch(tap_flags_tl, fused_3x3 ? static_cast<size_t>(vectors * L) : size_t{0});
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
            if (fused_3x3)
              tap_flags[f] |= 1 << tx;
            else
              masks[(tx * vectors + f / L) * 8 + lane / 8] |=
                  static_cast<uint8_t>(1u << (lane % 8));
          }
        }
      empty_count_tl = count;
      tables_of.emplace(P.p, P.mutation);
    }
    const int64_t empty_count = empty_count_tl;
    const auto write_empty_outputs = [&](int64_t plane) {
      const int64_t n = plane / P.channels, c = plane % P.channels;
      for (int64_t e = 0; e < empty_count; ++e)
        WriteEmpty(P, a, n, c, plane * P.out_plane + empty[e],
                   P.divisor(0, empty[e] / W, empty[e] % W) == 0);
    };
    for (int64_t plane = begin; plane < end; ++plane) {
      const S* x = in + plane * P.in_plane;
      // The next plane, a few KiB: cold, its loads would wait on memory.
      const char* next = reinterpret_cast<const char*>(plane + 1 < end ? x + P.in_plane : x);
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR
      if (fused_3x3) {
        AvgPlane3x3(d, x, next, W, size, tap_flags, vectors, factors, rule,
                    out + plane * P.out_plane);
        write_empty_outputs(plane);
        continue;
      }
#endif
      if (plane + 1 < end)
        for (int64_t b = 0; b < P.in_plane * static_cast<int64_t>(sizeof(S)); b += 64)
          __builtin_prefetch(next + b);
      // 1. Along H: out row oh's taps th read input row oh - pad + th * dilation, flat offset
      // f + (th * dilation - pad) * W; over the interior rows every tap reads, in one run.
      for (int64_t oh = 0; oh < OH; ++oh) {
        const bool interior = oh >= AH.interior_begin && oh < AH.interior_end;
        const int64_t rows = interior ? AH.interior_end - oh : 1;
        const int64_t first = AH.first[static_cast<size_t>(oh)],
                      past = AH.past[static_cast<size_t>(oh)];
        size_t count = 0;
        for (int64_t th = first; th < past; ++th)
          sources[count++] = x + (AH.start(oh) + th * AH.dilation) * W;
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

void RunAvgPlaneNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype,
           [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { AvgPlaneNchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunAvgPlaneNchw);

namespace {

Status accepts_avg_plane_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first && p.op == Op::avg, "avg in nchw only"); !s)
    return s;
  if (p.axes.size() > 2) return Error{fmt::format("rank {}: 1 or 2 spatial axes", p.axes.size())};
  int64_t out_plane = 1;
  for (const Axis& a : p.axes) {
    if (a.stride != 1) return Error{fmt::format("stride {}: stride 1 only", a.stride)};
    out_plane *= output_extent_of(p, a);
  }
  const Axis& w = p.axes.back();
  const int64_t out_w = output_extent_of(p, w);
  if (out_w != w.extent)
    return Error{
        fmt::format("output width {} of input width {}: they must be equal", out_w, w.extent)};
  // Scratch per thread: the plane's sums, factors and w.kernel masks of 8 bytes per 16 values.
  if (out_plane * (w.kernel + 2) > (int64_t{1} << 24))
    return Error{
        fmt::format("plane of {} outputs, {} columns of taps: the flat plane takes up to 2^24",
                    out_plane, w.kernel)};
  return Ok{};
}

// Measured (each kernel alone, f32 3x3, 1 and 2 threads, hot and cold): the flat plane beats
// blocked_nchw and avg_nchw up to 80x80 planes (35x35: 1.8x; 8x8: 1.3-2.2x) and is even with
// blocked_nchw at 112x112 (faster hot, slower cold).
bool prefers_avg_plane_nchw(const Problem& p, Layout) {
  int64_t in_plane = 1;
  for (const Axis& a : p.axes) in_plane *= a.extent;
  return in_plane <= 8192;
}

void run_avg_plane_nchw(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunAvgPlaneNchw)(P, a);
}

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo avg_plane_nchw{
    .name = "avg_plane_nchw",
    .description =
        "stride 1 and output rows as long as the input's: each plane as one flat array, summed "
        "along H over whole runs of rows, then along W with per-column masks (-0 for taps "
        "outside the row)",
    .accepts = accepts_avg_plane_nchw,
    .preferred = prefers_avg_plane_nchw,
    .run = run_avg_plane_nchw,
    .scope = {.op = Op::avg, .layout = Layout::channels_first, .max_rank = 2, .same_width = true},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
