// max_separable_nhwc and max_separable_nchw: a max over a 2-D window at stride 1 as two 1-D
// passes, along W then along H: in NHWC in O(1) comparisons per output whatever the window's
// length (van Herk / Gil-Werman), lanes over channels; in NCHW k taps per axis, lanes along W.
// Compiled once per SIMD target (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/max_separable.cpp"
#include <hwy/aligned_allocator.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include "kernels/max_chains-inl.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- max_separable_nhwc ------------------------------------------------------------------------
//
// Why it is the spec's maximum. The spec scans a window's taps in row-major order and keeps the
// running m unless "v > m" (with its NaN rule), so the result is, among the taps of the largest
// value, the first in scan order. Let Op(e, l) be that step for an earlier value e and a later one
// l: l if l > e, or (NaN propagated) if l is a NaN, or (NaN ignored) if e is a NaN; else e. Op is
// associative, and Op over a sequence in order gives the first of its largest values (any NaN,
// when propagated; a number unless all are NaN, when ignored). So the window's Op may be taken
// over each of its rows in order (pass 1, along W), then over those results in row order (pass 2,
// along H): the first row holding the largest value, and that row's first tap of it, is the first
// in scan order. Along a line, each pass splits the padded line into blocks of k: g[i] is Op over
// i's block up to i, h[i] over i's block from i; a window [j, j + k) is Op(h[j], g[j + k - 1]),
// whose first operand holds the earlier taps. Positions in the padding hold Op's identity (-inf
// when NaN is propagated, a NaN when ignored, the lowest integer), which no tap's value replaces
// wrongly: Op(identity, v) = Op(v, identity) = v. Every accepted window holds a tap (its pads are
// below its kernel), so the identity never reaches an output.

// Op(earlier, later). kNumbers: the line holds no NaN, where both NaN rules are "later if
// greater", one MAXPS on x86 (FirstIfGreater, kernels/max_chains-inl.h).
template <class D, bool kPropagate, bool kNumbers>
HWY_INLINE hn::Vec<D> MaxStep(hn::Vec<D> earlier, hn::Vec<D> later) {
  if constexpr (!std::is_floating_point_v<hn::TFromD<D>>) {
    return hn::Max(earlier, later);  // integers: equal values are the same value
  } else if constexpr (kNumbers) {
    return FirstIfGreater(D(), later, earlier);
  } else {
    const auto takes = kPropagate ? hn::Or(hn::Gt(later, earlier), hn::IsNaN(later))
                                  : hn::Or(hn::Gt(later, earlier), hn::IsNaN(earlier));
    return hn::IfThenElse(takes, later, earlier);
  }
}

// Op's identity: Op(identity, v) = Op(v, identity) = v for every v the line may hold.
template <class D, bool kPropagate, bool kNumbers>
HWY_INLINE hn::Vec<D> MaxIdentity(D d) {
  using T = hn::TFromD<D>;
  if constexpr (!std::is_floating_point_v<T>)
    return hn::Set(d, std::numeric_limits<T>::lowest());
  else
    return hn::Set(d, kPropagate || kNumbers ? -std::numeric_limits<T>::infinity()
                                             : std::numeric_limits<T>::quiet_NaN());
}

// g and h of a padded line: `padded` positions of kV vectors each, position q's vector v at
// line[(q * kV + v) * L]; blocks of k positions. The kV vectors are independent chains, held in
// registers and in flight together.
template <int kV, bool kPropagate, bool kNumbers, class D>
HWY_INLINE void BlockScans(D d, int64_t padded, int64_t k, const hn::TFromD<D>* HWY_RESTRICT line,
                           hn::TFromD<D>* HWY_RESTRICT g, hn::TFromD<D>* HWY_RESTRICT h) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), step = kV * L;
  hn::Vec<D> run[kV];
  for (int64_t block = 0; block < padded; block += k) {
    const int64_t past = std::min(block + k, padded);
#pragma GCC unroll 8  // the chains stay in registers
    for (int v = 0; v < kV; ++v) {
      run[v] = hn::Load(d, line + block * step + v * L);
      hn::Store(run[v], d, g + block * step + v * L);
    }
    for (int64_t q = block + 1; q < past; ++q)
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v) {
        run[v] = MaxStep<D, kPropagate, kNumbers>(run[v], hn::Load(d, line + q * step + v * L));
        hn::Store(run[v], d, g + q * step + v * L);
      }
#pragma GCC unroll 8  // the chains stay in registers
    for (int v = 0; v < kV; ++v) {
      run[v] = hn::Load(d, line + (past - 1) * step + v * L);
      hn::Store(run[v], d, h + (past - 1) * step + v * L);
    }
    for (int64_t q = past - 2; q >= block; --q)
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v) {
        run[v] = MaxStep<D, kPropagate, kNumbers>(hn::Load(d, line + q * step + v * L), run[v]);
        hn::Store(run[v], d, h + q * step + v * L);
      }
  }
}

// Window j of a scanned line: Op(h[j], g[j + k - 1]), its earlier taps first.
template <bool kPropagate, bool kNumbers, class D>
HWY_INLINE hn::Vec<D> WindowMax(D d, const hn::TFromD<D>* HWY_RESTRICT g,
                                const hn::TFromD<D>* HWY_RESTRICT h, int64_t j, int64_t k,
                                int64_t step, int64_t offset) {
  return MaxStep<D, kPropagate, kNumbers>(hn::Load(d, h + j * step + offset),
                                          hn::Load(d, g + (j + k - 1) * step + offset));
}

// One (image, chunk of channels) through both passes, with kV vectors per position (the chunk's
// vectors, rounded up to a power of two; lanes past the chunk's channels are computed, not
// stored). Pass 1 writes each input row's window maxima straight into the padded columns pass 2
// scans: column ow holds the OH + kH - 1 padded rows, the padding rows Op's identity. With
// kNumbers, pass 1 also looks for a NaN among the chunk's values (the largest magnitude bits,
// integer max: MaxChains' test) and returns false, writing nothing, if it finds one.
template <int kV, class S, class Acc, bool kPropagate, bool kNumbers>
HWY_INLINE bool MaxSeparableChunk(const Plan& P, const S* HWY_RESTRICT image, S* HWY_RESTRICT out,
                                  int64_t width, Acc* HWY_RESTRICT line, Acc* HWY_RESTRICT columns,
                                  Acc* HWY_RESTRICT g, Acc* HWY_RESTRICT h) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d)), step = kV * L;
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, H = AH.in, W = AW.in, OH = AH.out, OW = AW.out;
  const int64_t padded_w = OW + AW.kernel - 1, padded_h = OH + AH.kernel - 1;
  // Columns one vector longer than they need: pass 1 stores a row's windows one column apart,
  // and columns a multiple of 4 KiB apart would map those stores to one set of the L1 cache.
  const int64_t column_stride = padded_h * step + L;
  const auto identity = MaxIdentity<D, kPropagate, kNumbers>(d);
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  using DI = hn::RebindToSigned<D>;
  const DI di;
  auto magnitude = hn::Zero(di);  // the largest magnitude bits seen (floats, kNumbers)
  const auto magnitude_mask = hn::Set(di, static_cast<hn::TFromD<DI>>(0x7fffffff));
  const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
  const int64_t vectors = (width + L - 1) / L;  // that hold channels
  const size_t tail = static_cast<size_t>(width - (vectors - 1) * L);
  const auto lanes_of = [&](int64_t v) HWY_ATTR {
    return v + 1 < vectors ? static_cast<size_t>(L) : v + 1 == vectors ? tail : 0;
  };
  // The padding rows of every column.
  for (int64_t ow = 0; ow < OW; ++ow)
    for (int64_t q = 0; q < padded_h; ++q) {
      if (q >= AH.pad_begin && q < AH.pad_begin + H) continue;
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v)
        hn::Store(identity, d, columns + ow * column_stride + q * step + v * L);
    }
  // Pass 1, along W: each input row, padded, scanned, its windows into the columns.
  for (int64_t ih = 0; ih < H; ++ih) {
    const S* row = image + ih * W * C;
    for (int64_t q = 0; q < padded_w; ++q) {
      const int64_t iw = q - AW.pad_begin;
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v) {
        const size_t count = iw >= 0 && iw < W ? lanes_of(v) : 0;
        const S* p = row + iw * C + v * L;
        const auto x = count == static_cast<size_t>(L) ? LoadAs(d, p)
                       : count == 0                    ? identity
                                                       : LoadPartial(d, p, count);
        if constexpr (kNumbers && std::is_floating_point_v<Acc>)
          magnitude = hn::Max(magnitude, hn::And(hn::BitCast(di, x), magnitude_mask));
        hn::Store(x, d, line + q * step + v * L);
      }
    }
    if constexpr (kNumbers && std::is_floating_point_v<Acc>) {
      // A NaN's magnitude bits exceed infinity's (0x7f800000).
      if (!hn::AllFalse(di, hn::Gt(magnitude, hn::Set(di, 0x7f800000)))) return false;
    }
    BlockScans<kV, kPropagate, kNumbers>(d, padded_w, AW.kernel, line, g, h);
    Acc* column_row = columns + (AH.pad_begin + ih) * step;
    for (int64_t ow = 0; ow < OW; ++ow)
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v)
        hn::Store(WindowMax<kPropagate, kNumbers>(d, g, h, ow, AW.kernel, step, v * L), d,
                  column_row + ow * column_stride + v * L);
  }
  // Pass 2, along H: each column scanned, its windows stored.
  for (int64_t ow = 0; ow < OW; ++ow) {
    BlockScans<kV, kPropagate, kNumbers>(d, padded_h, AH.kernel, columns + ow * column_stride, g,
                                         h);
    for (int64_t oh = 0; oh < OH; ++oh)
#pragma GCC unroll 8  // the chains stay in registers
      for (int v = 0; v < kV; ++v) {
        const size_t count = lanes_of(v);
        if (count == 0) continue;
        auto m = WindowMax<kPropagate, kNumbers>(d, g, h, oh, AH.kernel, step, v * L);
        if (from_lowest) m = hn::IfThenElse(hn::Gt(m, lowest), m, lowest);
        S* p = out + (oh * OW + ow) * C + v * L;
        if (count == static_cast<size_t>(L))
          StoreAs(m, d, p);
        else
          StorePartial(m, d, p, count);
      }
  }
  return true;
}

// The chunk through the passes on numbers (MAXPS), or, where it holds a NaN, with Op's NaN rule.
template <int kV, class S, class Acc, bool kPropagate>
HWY_INLINE void MaxSeparableChunkOf(const Plan& P, const S* HWY_RESTRICT image, S* HWY_RESTRICT out,
                                    int64_t width, Acc* HWY_RESTRICT line,
                                    Acc* HWY_RESTRICT columns, Acc* HWY_RESTRICT g,
                                    Acc* HWY_RESTRICT h) {
  const bool all_numbers =
      MaxSeparableChunk<kV, S, Acc, kPropagate, true>(P, image, out, width, line, columns, g, h);
  if constexpr (std::is_floating_point_v<Acc>)  // integers are always numbers
    if (!all_numbers)
      MaxSeparableChunk<kV, S, Acc, kPropagate, false>(P, image, out, width, line, columns, g, h);
}

// Channels go through the passes in chunks of up to 8 vectors: pass 1 reads each input row's
// pixels whole (not one vector of channels at a time, pixels 2 KiB apart), and a chunk's columns
// (OW x (OH + kH - 1) x 8 vectors) stay in the L2 cache.
constexpr int64_t kChunkVectors = 8;

template <class S, class Acc, bool kPropagate>
void MaxSeparableWith(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t C = P.channels, H = AH.in, W = AW.in, OH = AH.out, OW = AW.out;
  const int64_t chunk = kChunkVectors * L;
  const int64_t chunks = (C + chunk - 1) / chunk;  // per image
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, P.batch * chunks, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> line_tl, columns_tl, g_tl, h_tl;
    const int64_t longest = std::max(OW + AW.kernel, OH + AH.kernel);
    const auto vectors = static_cast<size_t>(chunk);
    Acc* line = LineScratch(line_tl, static_cast<size_t>(longest) * vectors);
    Acc* columns =
        LineScratch(columns_tl, static_cast<size_t>(OW * (OH + AH.kernel)) * (vectors + 1));
    Acc* g = LineScratch(g_tl, static_cast<size_t>(longest) * vectors);
    Acc* h = LineScratch(h_tl, static_cast<size_t>(longest) * vectors);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t n = item / chunks, c0 = item % chunks * chunk;
      const int64_t width = std::min(chunk, C - c0);  // channels in this chunk
      const S* image = in + n * H * W * C + c0;
      S* image_out = out + n * OH * OW * C + c0;
      const int64_t needed = (width + L - 1) / L;
      if (needed > 4)
        MaxSeparableChunkOf<8, S, Acc, kPropagate>(P, image, image_out, width, line, columns, g, h);
      else if (needed > 2)
        MaxSeparableChunkOf<4, S, Acc, kPropagate>(P, image, image_out, width, line, columns, g, h);
      else if (needed > 1)
        MaxSeparableChunkOf<2, S, Acc, kPropagate>(P, image, image_out, width, line, columns, g, h);
      else
        MaxSeparableChunkOf<1, S, Acc, kPropagate>(P, image, image_out, width, line, columns, g, h);
    }
  });
}

// ---- max_separable_nchw ------------------------------------------------------------------------
//
// The same two passes over NCHW planes, with lanes along W instead. Pass 1 takes each input row's
// windows along W, L outputs at a time, as the running Op of the kW taps in order (ties keep the
// first), into a scratch of rows; pass 2 takes the windows along H as the running Op of kH of
// those rows. The scratch's rows above and below the plane's hold Op's identity, so every output
// row reads kH rows. O(k) steps per L outputs and axis: for the planes of the layers it takes
// (tens of pixels a side), fewer instructions than the blocks' scans, and no transposition.
//
// Tap tw of outputs [ow, ow + L) is the row's values x[s .. s + L), s = ow - pad_begin + tw: one
// load from the input row where they lie inside it. Where they do not (the row's ends, and every
// tap of a row shorter than a vector), they are the row's first or last vector (a short row: the
// row, the identity past it) moved by s or by s - (W - L) lanes, and the lanes that fall outside
// the row hold the identity: one permutation and one blend (a short row: one permutation), from
// a table of the 2L - 1 possible moves. The plane is read in place.
// As max_separable_nhwc, it runs on numbers (MAXPS) unless the plane holds a NaN.

// Lane moves by m in (-L, L): lane i takes lane i + m where 0 <= i + m < L, else the identity.
// A row of W < L values, the identity past it, moves without a blend: a lane whose value would
// lie outside the row takes its last lane, the identity.
template <class D>
struct LaneMoves {
  using TI = hn::TFromD<hn::RebindToSigned<D>>;
  // (2L - 1) moves of L lanes each, sized by the vector the target has (not its type's largest:
  // a scalable vector's bound is far above any real one).
  size_t entries;
  hwy::AlignedFreeUniquePtr<TI[]> index, inside, short_index;  // inside: all ones where the lane
                                                               // takes one; short_index: W < L

  LaneMoves(D d, int64_t W)
      : entries((2 * hn::Lanes(d) - 1) * hn::Lanes(d)),
        index(hwy::AllocateAligned<TI>(entries)),
        inside(hwy::AllocateAligned<TI>(entries)),
        short_index(hwy::AllocateAligned<TI>(entries)) {
    const auto L = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t m = -(L - 1); m < L; ++m)
      for (int64_t i = 0; i < L; ++i) {
        const auto at = static_cast<size_t>((m + L - 1) * L + i);
        const int64_t from = i + m;
        index[at] = static_cast<TI>(from >= 0 && from < L ? from : 0);
        inside[at] = static_cast<TI>(from >= 0 && from < L ? -1 : 0);
        short_index[at] = static_cast<TI>(from >= 0 && from < W ? from : L - 1);
      }
  }
  static size_t Entry(D d, int64_t m) {
    return static_cast<size_t>(m + static_cast<int64_t>(hn::Lanes(d)) - 1) * hn::Lanes(d);
  }
  HWY_INLINE hn::Vec<D> Move(D d, hn::Vec<D> v, int64_t m, hn::Vec<D> identity) const {
    const hn::RebindToSigned<D> di;
    const size_t at = Entry(d, m);
    const auto moved = hn::TableLookupLanes(v, hn::SetTableIndices(d, index.get() + at));
    return hn::IfThenElse(hn::MaskFromVec(hn::BitCast(d, hn::Load(di, inside.get() + at))), moved,
                          identity);
  }
  HWY_INLINE hn::Vec<D> MoveShort(D d, hn::Vec<D> row, int64_t m) const {
    return hn::TableLookupLanes(row, hn::SetTableIndices(d, short_index.get() + Entry(d, m)));
  }
};

// Whether the plane's n values hold a NaN (their largest magnitude bits above infinity's).
template <class D, class S>
HWY_INLINE bool HoldsNaN(D d, const S* HWY_RESTRICT plane, int64_t n) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const hn::RebindToSigned<D> di;
  const auto magnitude_mask = hn::Set(di, 0x7fffffff);
  auto magnitude = hn::Zero(di);
  for (int64_t x = 0; x < n; x += L) {
    const auto v =
        x + L <= n ? LoadAs(d, plane + x) : LoadPartial(d, plane + x, static_cast<size_t>(n - x));
    magnitude = hn::Max(magnitude, hn::And(hn::BitCast(di, v), magnitude_mask));
  }
  return !hn::AllFalse(di, hn::Gt(magnitude, hn::Set(di, 0x7f800000)));
}

// Tap values x[s .. s + L) of a row of W (`whole`: the row in one vector with the identity past
// it, where W < L): a load where they lie inside the row, else a move of its first or last vector.
template <class D, class S>
HWY_INLINE hn::Vec<D> RowTap(D d, const LaneMoves<D>& moves, const S* HWY_RESTRICT row,
                             hn::Vec<D> whole, int64_t W, int64_t s, hn::Vec<D> identity) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (s >= 0 && s + L <= W) return LoadAs(d, row + s);
  if (W < L) return moves.MoveShort(d, whole, s);
  if (s < 0) return moves.Move(d, LoadAs(d, row), s, identity);
  return moves.Move(d, LoadAs(d, row + (W - L)), s - (W - L), identity);
}

// The plane through both passes, kRows input rows (then output rows) at a time: independent
// chains, so that a step's latency is hidden behind the others'. `rows` holds OH + kH - 1 rows of
// OWr values, the plane's H at pad_begin.
template <int kRows, class S, class Acc, bool kPropagate, bool kNumbers>
HWY_INLINE void MaxSeparablePlane(const Plan& P, const LaneMoves<hn::ScalableTag<Acc>>& moves,
                                  const S* HWY_RESTRICT plane, S* HWY_RESTRICT out,
                                  Acc* HWY_RESTRICT rows) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  // Read once: a SIMD store may alias anything, so a field read through P in a loop would be
  // read again after every store.
  const int64_t H = AH.in, W = AW.in, OH = AH.out, OW = AW.out, kH = AH.kernel, kW = AW.kernel;
  const int64_t pad_h = AH.pad_begin, pad_w = AW.pad_begin;
  const int64_t OWr = (OW + L - 1) / L * L;
  const auto identity = MaxIdentity<D, kPropagate, kNumbers>(d);
  const bool from_lowest = P.p.max_start == MaxStart::lowest;
  const auto lowest = hn::Set(d, static_cast<Acc>(lowest_value(P.p.dtype)));
  for (int64_t ph = 0; ph < OH + kH - 1; ++ph)
    if (ph < pad_h || ph >= pad_h + H)
      for (int64_t ow = 0; ow < OWr; ow += L) hn::Store(identity, d, rows + ph * OWr + ow);
  // Rows in groups of kRows, the last group overlapping the one before (same values written).
  // Plain loops: a lambda's captures would be read through its closure, again after every store.
  for (int64_t group = 0; group < H; group += kRows) {
    const int64_t ih = std::min(group, H - kRows);
    const S* row[kRows];
    hn::Vec<D> whole[kRows];  // a row shorter than a vector, the identity past it
#pragma GCC unroll 4
    for (int i = 0; i < kRows; ++i) {
      row[i] = plane + (ih + i) * W;
      whole[i] = identity;
      if (W < L) {
        const auto count = static_cast<size_t>(W);
        whole[i] = hn::IfThenElse(hn::FirstN(d, count), LoadPartial(d, row[i], count), identity);
      }
    }
    for (int64_t ow = 0; ow < OWr; ow += L) {
      // The taps with a value inside the row: x[s .. s + L) meets [0, W).
      const int64_t first = std::max<int64_t>(0, pad_w - ow - L + 1);
      const int64_t past = std::min(kW, pad_w - ow + W);
      hn::Vec<D> m[kRows];
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i)
        m[i] = RowTap(d, moves, row[i], whole[i], W, ow - pad_w + first, identity);
      for (int64_t tw = first + 1; tw < past; ++tw) {
        const int64_t s = ow - pad_w + tw;
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i)
          m[i] = MaxStep<D, kPropagate, kNumbers>(
              m[i], RowTap(d, moves, row[i], whole[i], W, s, identity));
      }
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) hn::Store(m[i], d, rows + (pad_h + ih + i) * OWr + ow);
    }
  }
  for (int64_t group = 0; group < OH; group += kRows) {
    const int64_t oh = std::min(group, OH - kRows);
    for (int64_t ow = 0; ow < OWr; ow += L) {
      hn::Vec<D> m[kRows];
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) m[i] = hn::Load(d, rows + (oh + i) * OWr + ow);
      for (int64_t th = 1; th < kH; ++th)
#pragma GCC unroll 4
        for (int i = 0; i < kRows; ++i)
          m[i] =
              MaxStep<D, kPropagate, kNumbers>(m[i], hn::Load(d, rows + (oh + i + th) * OWr + ow));
      const size_t count = static_cast<size_t>(std::min(L, OW - ow));
#pragma GCC unroll 4
      for (int i = 0; i < kRows; ++i) {
        if (from_lowest) m[i] = hn::IfThenElse(hn::Gt(m[i], lowest), m[i], lowest);
        S* dst = out + (oh + i) * OW + ow;
        if (count == static_cast<size_t>(L))
          StoreAs(m[i], d, dst);
        else
          StorePartial(m[i], d, dst, count);
      }
    }
  }
}

template <class S, class Acc, bool kPropagate, bool kNumbers>
HWY_INLINE void MaxSeparablePlaneOf(const Plan& P, const LaneMoves<hn::ScalableTag<Acc>>& moves,
                                    const S* HWY_RESTRICT plane, S* HWY_RESTRICT out,
                                    Acc* HWY_RESTRICT rows) {
  if (P.axis[1].in >= 4 && P.axis[1].out >= 4)
    MaxSeparablePlane<4, S, Acc, kPropagate, kNumbers>(P, moves, plane, out, rows);
  else
    MaxSeparablePlane<1, S, Acc, kPropagate, kNumbers>(P, moves, plane, out, rows);
}

template <class S, class Acc, bool kPropagate>
void MaxSeparableNchwWith(const Plan& P, const RunArgs& a) {
  using D = hn::ScalableTag<Acc>;
  const D d;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const AxisTable &AH = P.axis[1], &AW = P.axis[2];
  const int64_t OWr = (AW.out + L - 1) / L * L, PH = AH.out + AH.kernel - 1;
  const LaneMoves<D> moves(d, AW.in);
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  ParallelRanges(a.threads, P.batch * P.channels, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<Acc> rows_tl;
    Acc* rows = LineScratch(rows_tl, static_cast<size_t>(PH * OWr));
    for (int64_t plane = begin; plane < end; ++plane) {
      const S* src = in + plane * P.in_plane;
      S* dst = out + plane * P.out_plane;
      if constexpr (std::is_floating_point_v<Acc>)  // integers are always numbers
        if (HoldsNaN(d, src, P.in_plane)) {
          MaxSeparablePlaneOf<S, Acc, kPropagate, false>(P, moves, src, dst, rows);
          continue;
        }
      MaxSeparablePlaneOf<S, Acc, kPropagate, true>(P, moves, src, dst, rows);
    }
  });
}

void RunMaxSeparableNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR {
    ForNanRule<Acc>(P, [&](auto propagate) HWY_ATTR {
      MaxSeparableNchwWith<S, Acc, decltype(propagate)::value>(P, a);
    });
  });
}

// With start=lowest the spec compares every tap with the type's lowest value first, so a NaN is
// never taken: the NaN-ignoring step (ForNanRule), then the lowest value for a window of NaNs (as
// max_nhwc).
void RunMaxSeparable(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype, [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR {
    ForNanRule<Acc>(P, [&](auto propagate) HWY_ATTR {
      MaxSeparableWith<S, Acc, decltype(propagate)::value>(P, a);
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunMaxSeparable);
HWY_EXPORT(RunMaxSeparableNchw);

namespace {

// What both layouts' passes take: a max without indices over H and W (or W alone) at stride 1,
// every window holding a tap, and scratch within limits.
Status accepts_separable(const Problem& p) {
  if (Status s = common_limits(p); !s) return s;
  if (p.op != Op::max) return Error{"max only"};
  if (p.indices != Indices::none) return Error{"max with indices: the passes keep no positions"};
  if (p.axes.size() > 2) return Error{"3 spatial axes: the passes run along H and W"};
  for (const Axis& a : p.axes) {
    if (a.stride != 1 || a.dilation != 1)
      return Error{
          fmt::format("stride {} and dilation {}: the passes take 1 and 1", a.stride, a.dilation)};
    // Every window then holds a tap, so Op's identity never reaches an output.
    if (a.pad_begin >= a.kernel || a.pad_end >= a.kernel)
      return Error{fmt::format("pads {} and {} with kernel {}: the passes take pads below it",
                               a.pad_begin, a.pad_end, a.kernel)};
  }
  // The scratch: OW x (OH + kH - 1) positions (nhwc's columns, nchw's rows, each up to a vector
  // longer).
  const int64_t w_out = output_extent_of(p, p.axes.back()) + p.axes.back().kernel + 64;
  const int64_t h_padded =
      p.axes.size() == 2 ? output_extent_of(p, p.axes[0]) + p.axes[0].kernel : 1;
  if (w_out * h_padded > (int64_t{1} << 18))
    return Error{
        fmt::format("{} x {} positions: the passes' scratch takes up to 2^18", w_out, h_padded)};
  return Ok{};
}

Status accepts_max_separable_nhwc(const Problem& p, Layout layout) {
  if (Status s = wants(layout == Layout::channels_last, "nhwc only"); !s) return s;
  return accepts_separable(p);
}

Status accepts_max_separable_nchw(const Problem& p, Layout layout) {
  if (Status s = wants(layout == Layout::channels_first, "nchw only"); !s) return s;
  return accepts_separable(p);
}

// Measured (optimized/bench, YOLO's pyramid pools): two passes pay from windows of 4 taps a side.
bool prefers_max_separable(const Problem& p, Layout) {
  for (const Axis& a : p.axes)
    if (a.kernel >= 4) return true;
  return false;
}

void run_max_separable_nhwc(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunMaxSeparable)(P, a);
}

void run_max_separable_nchw(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunMaxSeparableNchw)(P, a);
}

}  // namespace

namespace kernels {

// Entries of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo max_separable_nhwc{
    .name = "max_separable_nhwc",
    .description =
        "stride-1 max as a pass along W then one along H, O(1) comparisons per output (van "
        "Herk / Gil-Werman); lanes over C",
    .accepts = accepts_max_separable_nhwc,
    .preferred = prefers_max_separable,
    .run = run_max_separable_nhwc,
    .scope = {.op = Op::max, .layout = Layout::channels_last, .max_rank = 2, .same_width = true},
};

extern const KernelInfo max_separable_nchw{
    .name = "max_separable_nchw",
    .description =
        "stride-1 max as a pass along W then one along H over each plane, k taps per axis "
        "(loads, or lane moves at the row's ends); lanes along W",
    .accepts = accepts_max_separable_nchw,
    .preferred = prefers_max_separable,
    .run = run_max_separable_nchw,
    .scope = {.op = Op::max, .layout = Layout::channels_first, .max_rank = 2, .same_width = true},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
