// avg_sliding: the average over large windows by block prefix and suffix sums (van Herk /
// Gil-Werman) -- per output two sums and one addition per axis, whatever the window's size.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/avg_sliding.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// For a problem of 1 or 2 spatial axes: the outputs with no input tap, or a zero divisor (whose
// row or column has one: an override is at least 1), get the empty-window value.
inline void WriteEmptyOutputs2D(const Plan& P, const RunArgs& a) {
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  auto empty = [&](const AxisTable& t, int64_t j) {
    return t.count(j) == 0 || t.divisor[static_cast<size_t>(j)] == 0;
  };
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
HWY_INLINE void SuffixSumsInPlace(D d, hn::TFromD<D>* HWY_RESTRICT block, int64_t rows,
                                  int64_t row_length, int64_t values) {
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
HWY_INLINE void BlockSumsAlongW(D d, hn::TFromD<D>* HWY_RESTRICT x, int64_t pixels, int64_t lanes,
                                int64_t kernel, int64_t stride, hn::TFromD<D>* HWY_RESTRICT h) {
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
HWY_INLINE void PrefixAndEmit(D d, const hn::TFromD<D>* HWY_RESTRICT h,
                              hn::TFromD<D>* HWY_RESTRICT prefix, bool restart, bool emit,
                              const hn::TFromD<D>* HWY_RESTRICT suffix,
                              const float* HWY_RESTRICT factors, int64_t outputs, int64_t lanes,
                              int64_t count, S* HWY_RESTRICT dst, int64_t pixel_stride,
                              IntRounding rule) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::Rebind<float, D> df;
  if (!emit) {
    for (int64_t i = 0; i < outputs * lanes; i += L)
      hn::StoreU(
          restart ? hn::LoadU(d, h + i) : hn::Add(hn::LoadU(d, prefix + i), hn::LoadU(d, h + i)), d,
          prefix + i);
    return;
  }
  for (int64_t j = 0; j < outputs; ++j) {
    const auto factor = hn::Set(df, factors[j]);
    const int64_t row = j * lanes;
    for (int64_t c = 0; c < lanes; c += L) {
      const auto run = restart ? hn::LoadU(d, h + row + c)
                               : hn::Add(hn::LoadU(d, prefix + row + c), hn::LoadU(d, h + row + c));
      hn::StoreU(run, d, prefix + row + c);
      const auto sum = suffix ? hn::Add(hn::LoadU(d, suffix + row + c), run) : run;
      const auto m = FinishAverage(d, sum, factor, rule);
      if (c + L <= count)
        StoreAs(m, d, dst + j * pixel_stride + c);
      else
        StorePartial(m, d, dst + j * pixel_stride + c, static_cast<size_t>(count - c));
    }
  }
}

// x[u] for pixels [u_first, u_past) of an NHWC row: channels [0, count) of src + u * C, then
// zeros up to `lanes`.
template <class D, class S>
HWY_INLINE void LoadPixels(D d, const S* HWY_RESTRICT src, int64_t C, int64_t count,
                           int64_t u_first, int64_t u_past, int64_t lanes,
                           hn::TFromD<D>* HWY_RESTRICT x) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t u = u_first; u < u_past; ++u) {
    const S* pixel = src + u * C;
    hn::TFromD<D>* dst = x + u * lanes;
    int64_t c = 0;
    for (; c + L <= count; c += L) hn::StoreU(LoadAs(d, pixel + c), d, dst + c);
    if (c < count)
      hn::StoreU(LoadPartial(d, pixel + c, static_cast<size_t>(count - c)), d, dst + c);
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
      const int64_t g = task / (chunks * strips), chunk = task / strips % chunks,
                    strip = task % strips;
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
            if (r + 2 <
                H) {  // the strip's part of a later row: lines the prefetchers do not foresee
              for (int64_t u = u_first; u < u_past; ++u) {
                const char* ahead = reinterpret_cast<const char*>(src + 2 * W * C + u * C);
                for (int64_t b = 0; b < count * static_cast<int64_t>(sizeof(S)); b += 64)
                  __builtin_prefetch(ahead + b);
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
          const int64_t key =
              P.p.divisor == Divisor::override_value ? -2 : AH.divisor[static_cast<size_t>(oh)];
          if (key != factors_for) {
            for (int64_t j = 0; j < outputs; ++j) {
              const int64_t dv = P.divisor(0, oh, ow0 + j);
              factors[j] =
                  AverageFactor<Acc>(dv == 0 ? 1 : dv);  // divisor 0: written by WriteEmpty
            }
            factors_for = key;
          }
        }
        const Acc* suffix =
            t == kh - 1 ? nullptr
                        : bank + (((block - 1) & 1) * kh + (i - (block - 1) * kh)) * row_length;
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
  const int64_t bands =
      planes >= 2 * a.threads ? 1 : std::min(OH, (2 * a.threads + planes - 1) / planes);
  const int64_t pixels = (OW - 1) * sw + kw;  // value u of a row is input column u - pw
  const int64_t row_length =
      ((pixels + (OW + L) * sw + kw) + L - 1) / L * L;  // strided loads read past
  const int64_t u_first = std::clamp<int64_t>(pw, 0, pixels),
                u_past = std::clamp<int64_t>(pw + W, u_first, pixels);
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
    for (int64_t i = 0; i < row_length; i += L)
      hn::StoreU(pad_vector, d, sums + i);  // its tail stays -0

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
          if (i < n)
            hn::StoreU(LoadPartial(d, src + i, static_cast<size_t>(n - i)), d, h + u_first + i);
          for (int64_t u = u_past; u < pixels; ++u) h[u] = pad;
        }
        const int64_t i = v - kh + 1;  // the window of rows ending at v
        const bool emit = i >= 0 && i % sh == 0;
        const Acc* suffix =
            t == kh - 1 ? nullptr
                        : bank + (((block - 1) & 1) * kh + (i - (block - 1) * kh)) * row_length;
        for (int64_t u = 0; u < pixels; u += L) {
          const auto run =
              t == 0 ? hn::LoadU(d, h + u) : hn::Add(hn::LoadU(d, prefix + u), hn::LoadU(d, h + u));
          hn::StoreU(run, d, prefix + u);
          if (emit) hn::StoreU(suffix ? hn::Add(hn::LoadU(d, suffix + u), run) : run, d, sums + u);
        }
        if (emit) {
          const int64_t oh = oh_begin + i / sh;
          const int64_t key =
              P.p.divisor == Divisor::override_value ? -2 : AH.divisor[static_cast<size_t>(oh)];
          if (key != factors_for) {
            std::fill(factors + OW, factors + OW + L, 1.0f);  // lanes past the row: finite, unused
            for (int64_t j = 0; j < OW; ++j) {
              const int64_t dv = P.divisor(0, oh, j);
              factors[j] =
                  AverageFactor<Acc>(dv == 0 ? 1 : dv);  // divisor 0: written by WriteEmpty
            }
            factors_for = key;
          }
          S* dst = dst_plane + oh * OW;
          for (int64_t j = 0; j < OW; j += L) {
            const Acc* window = sums + j * sw;
            auto m = LoadStrided(d, window, sw);
            for (int64_t k = 1; k < kw; ++k) m = hn::Add(m, LoadStrided(d, window + k, sw));
            m = FinishAverage(d, m, hn::LoadU(df, factors + j), rule);
            if (j + L <= OW)
              StoreAs(m, d, dst + j);
            else
              StorePartial(m, d, dst + j, static_cast<size_t>(OW - j));
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

void RunAvgSliding(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR {
    P.layout == Layout::channels_first ? AvgSlidingNchw<S, Acc>(P, a) : AvgSliding<S, Acc>(P, a);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunAvgSliding);

namespace {

Status accepts_avg_sliding(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(p.op == Op::avg, "avg only"); !s) return s;
  if (p.axes.size() > 2) return Error{fmt::format("rank {}: 1 or 2 spatial axes", p.axes.size())};
  for (const Axis& a : p.axes)
    if (a.dilation != 1)
      return Error{fmt::format("dilation {}: the block sums take dilation 1", a.dilation)};
  // Scratch: two blocks of kernel_h rows of window sums. NHWC: rows of out_w pixels of the
  // channels rounded up to 16 (at most; strips are narrower); NCHW: rows of about
  // (out_w - 1) * stride + kernel values, which the 16-lane figure covers with room to spare.
  const Axis& w = p.axes.back();
  const int64_t kh = p.axes.size() == 2 ? p.axes.front().kernel : 1;
  const int64_t lanes = layout == Layout::channels_first ? 16 : (p.channels + 15) / 16 * 16;
  const int64_t out_w = output_extent_of(p, w);
  const int64_t scratch = ((2 * kh + 2) * out_w + (out_w - 1) * w.stride + w.kernel) * lanes;
  if (scratch > (int64_t{1} << 26))
    return Error{fmt::format("scratch of {} elements: the block sums take up to 2^26", scratch)};
  return Ok{};
}

// Measured (each kernel alone, hot and cold, 1 and 2 threads, 32 planes of 256x256): the
// separable row sums of avg_nchw and avg_nhwc beat the block sums up to 15x15 (NCHW 3x3: 1.4x,
// 7x7: 1.2-1.4x, 15x15: 1.1x; NHWC 5x5: 1.4-1.9x, 7x7: 1.1-1.5x, 15x15: 1.1-1.2x cold, 0.9x
// hot), and tie at 25x25; so the block sums take windows from 20x20 up, where their cost per
// output, which the window's size does not change, wins. In NHWC not a window over the whole
// plane (one output per row: nothing to share), nor a non-overlapping one.
bool prefers_avg_sliding(const Problem& p, Layout layout) {
  const Axis& w = p.axes.back();
  const Axis& h = p.axes.front();
  if (p.axes.size() != 2 || h.stride != 1 || h.kernel * w.kernel < 400) return false;
  if (layout == Layout::channels_first) return true;
  const bool overlapping = w.stride < w.kernel && h.stride < h.kernel;
  const bool whole_plane = w.kernel >= w.extent + w.pad_begin + w.pad_end &&
                           h.kernel >= h.extent + h.pad_begin + h.pad_end;
  return overlapping && !whole_plane;
}

void run_avg_sliding(const Plan& P, const RunArgs& a) { HWY_DYNAMIC_DISPATCH(RunAvgSliding)(P, a); }

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo avg_sliding{
    .name = "avg_sliding",
    .description =
        "block prefix and suffix sums (van Herk) along H, and in NHWC along W too: per output, "
        "a cost the window's size along those axes does not change; NHWC: lanes over C, strips "
        "of columns; NCHW: lanes along W, then kw loads per output",
    .accepts = accepts_avg_sliding,
    .preferred = prefers_avg_sliding,
    .run = run_avg_sliding,
    .scope = {.op = Op::avg, .max_rank = 2},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
