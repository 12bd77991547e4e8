// Rows of sums shared by the average kernels: a window's input rows summed whole (in pairs and
// quads of output rows that share rows), depth slices summed into one plane, prefetching.
// Included by each kernel file once per SIMD target (Highway's foreach_target); the guard toggles
// with HWY_TARGET_TOGGLE, so each target gets its own copy in its own namespace.
#include "kernels/simd-inl.h"

#if defined(POOLSPEC_OPTIMIZED_KERNELS_ROW_SUMS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLSPEC_OPTIMIZED_KERNELS_ROW_SUMS_INL_H_
#undef POOLSPEC_OPTIMIZED_KERNELS_ROW_SUMS_INL_H_
#else
#define POOLSPEC_OPTIMIZED_KERNELS_ROW_SUMS_INL_H_
#endif

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {
// The window rows of two output rows, when the second's are the first's from some k on and then k
// more (adjacent rows of one depth slice): the rows both read, and those only one of them reads.
// Windows over depth slices are left alone: paired, the 3-D layer measured 1.45x slower.
template <class S>
struct SharedRows {
  const S* const* shared = nullptr;
  const S* const* only_a = nullptr;
  const S* const* only_b = nullptr;
  size_t shared_count = 0, only_count = 0;
  bool Split(const S* const* a, size_t a_rows, const S* const* b, size_t b_rows) {
    if (a_rows != b_rows || b_rows == 0) return false;
    const size_t k = static_cast<size_t>(std::find(a, a + a_rows, b[0]) - a);
    if (k == a_rows || !std::equal(a + k, a + a_rows, b)) return false;
    shared = a + k;
    only_a = a;
    only_b = b + (a_rows - k);
    shared_count = a_rows - k;
    only_count = k;
    return true;
  }
};

// The window's row pointers, copied into an array of kRows when kRows > 0, so that the compiler
// keeps them in registers; `window_rows` itself otherwise. Not to be copied (`rows` may point
// into it).
template <int kRows, class S>
struct WindowRowPointers {
  const S* copy[kRows > 0 ? kRows : 1];
  const S* const* rows;
  explicit WindowRowPointers(const S* const* window_rows) : rows(window_rows) {
    if constexpr (kRows > 0) {
      for (int i = 0; i < kRows; ++i) copy[i] = window_rows[i];
      rows = copy;
    }
  }
  WindowRowPointers(const WindowRowPointers&) = delete;
  WindowRowPointers& operator=(const WindowRowPointers&) = delete;
};

// The sums of two output rows whose windows share input rows (adjacent rows of one plane: 6 of the
// 7x7's 7): a_sums = the sum of the `shared` rows and `only_a`, b_sums that of `shared` and
// `only_b` (`only_count` rows each). The shared rows are loaded once (8 row loads for the two,
// not 14).
// kShared and kOnly, when nonzero, are the counts known at compile time: the row pointers then
// stay in registers, and the loops over rows are written out. The 7x7 layer, 1 thread, Zen 5, one
// kernel alone, against the counts at run time (in NHWC with SumColumns<7> along W, against its
// taps at run time too): 1.1x faster, NHWC cold and hot, NCHW cold.
template <int kShared, int kOnly, class D, class S>
HWY_INLINE void SumRowPairOf(D d, const S* const* HWY_RESTRICT shared_rows, size_t shared_count,
                             const S* const* HWY_RESTRICT only_a_rows,
                             const S* const* HWY_RESTRICT only_b_rows, size_t only_count,
                             int64_t length, hn::TFromD<D>* HWY_RESTRICT a_sums,
                             hn::TFromD<D>* HWY_RESTRICT b_sums) {
  if constexpr (kShared > 0) shared_count = kShared;
  if constexpr (kOnly > 0) only_count = kOnly;
  const WindowRowPointers<kShared, S> shared_pointers(shared_rows);
  const WindowRowPointers<kOnly, S> a_pointers(only_a_rows), b_pointers(only_b_rows);
  const S* const* shared = shared_pointers.rows;
  const S* const* only_a = a_pointers.rows;
  const S* const* only_b = b_pointers.rows;
  const size_t a_count = only_count, b_count = only_count;
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const auto sum_at = [&](const S* const* rows, size_t count, hn::Vec<D> m, int64_t i) HWY_ATTR {
    for (size_t r = 0; r < count; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    return m;
  };
  const auto pair_at = [&](int64_t i) HWY_ATTR {  // one vector of both rows, from column i
    const auto m = sum_at(shared + 1, shared_count - 1, LoadAs(d, shared[0] + i), i);
    hn::StoreU(sum_at(only_a, a_count, m, i), d, a_sums + i);
    hn::StoreU(sum_at(only_b, b_count, m, i), d, b_sums + i);
  };
  int64_t i = 0;
  for (; i + 2 * L <= length; i += 2 * L) {  // two vectors: two chains of additions
    auto m0 = LoadAs(d, shared[0] + i), m1 = LoadAs(d, shared[0] + i + L);
#pragma GCC unroll 8
    for (size_t r = 1; r < shared_count; ++r) {
      m0 = hn::Add(m0, LoadAs(d, shared[r] + i));
      m1 = hn::Add(m1, LoadAs(d, shared[r] + i + L));
    }
    auto a0 = m0, a1 = m1, b0 = m0, b1 = m1;
#pragma GCC unroll 8
    for (size_t r = 0; r < a_count; ++r) {
      a0 = hn::Add(a0, LoadAs(d, only_a[r] + i));
      a1 = hn::Add(a1, LoadAs(d, only_a[r] + i + L));
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < b_count; ++r) {
      b0 = hn::Add(b0, LoadAs(d, only_b[r] + i));
      b1 = hn::Add(b1, LoadAs(d, only_b[r] + i + L));
    }
    hn::StoreU(a0, d, a_sums + i);
    hn::StoreU(a1, d, a_sums + i + L);
    hn::StoreU(b0, d, b_sums + i);
    hn::StoreU(b1, d, b_sums + i + L);
  }
  for (; i + L <= length; i += L) pair_at(i);
  if (i < length && length >= L) {  // the last whole vector again, overlapping: the same sums
    pair_at(length - L);
  } else if (i < length) {
    const auto rest = static_cast<size_t>(length - i);
    auto m = LoadPartial(d, shared[0] + i, rest);
    for (size_t r = 1; r < shared_count; ++r) m = hn::Add(m, LoadPartial(d, shared[r] + i, rest));
    auto a = m, b = m;
    for (size_t r = 0; r < a_count; ++r) a = hn::Add(a, LoadPartial(d, only_a[r] + i, rest));
    for (size_t r = 0; r < b_count; ++r) b = hn::Add(b, LoadPartial(d, only_b[r] + i, rest));
    hn::StoreU(a, d, a_sums + i);
    hn::StoreU(b, d, b_sums + i);
  }
}

template <class D, class S>
HWY_INLINE void SumRowPair(D d, const S* const* HWY_RESTRICT shared, size_t shared_count,
                           const S* const* HWY_RESTRICT only_a, const S* const* HWY_RESTRICT only_b,
                           size_t only_count, int64_t length, hn::TFromD<D>* HWY_RESTRICT a_sums,
                           hn::TFromD<D>* HWY_RESTRICT b_sums) {
  if (shared_count == 6 && only_count == 1)  // 7 rows at stride 1
    SumRowPairOf<6, 1>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
  else if (shared_count == 4 && only_count == 1)  // 5 rows at stride 1
    SumRowPairOf<4, 1>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
  else
    SumRowPairOf<0, 0>(d, shared, shared_count, only_a, only_b, only_count, length, a_sums, b_sums);
}

// One vector of SumRowQuadOf's four rows of sums, at element i: whole, or its first `rest` lanes.
template <int kCore, bool kPartial, class D, class S>
HWY_INLINE void QuadSumsAt(D d, const S* const* HWY_RESTRICT rows, size_t k, int64_t i, size_t rest,
                           hn::TFromD<D>* HWY_RESTRICT s0, hn::TFromD<D>* HWY_RESTRICT s1,
                           hn::TFromD<D>* HWY_RESTRICT s2, hn::TFromD<D>* HWY_RESTRICT s3) {
  if constexpr (kCore > 0) k = kCore + 3;
  const auto load = [&](size_t r) HWY_ATTR {
    if constexpr (kPartial)
      return LoadPartial(d, rows[r] + i, rest);
    else
      return LoadAs(d, rows[r] + i);
  };
  auto core = load(3);
#pragma GCC unroll 8
  for (size_t r = 4; r < k; ++r) core = hn::Add(core, load(r));
  const auto u = hn::Add(core, hn::Add(load(1), load(2)));
  const auto v = hn::Add(core, hn::Add(load(k), load(k + 1)));
  hn::StoreU(hn::Add(u, load(0)), d, s0 + i);
  hn::StoreU(hn::Add(u, load(k)), d, s1 + i);
  hn::StoreU(hn::Add(v, load(2)), d, s2 + i);
  hn::StoreU(hn::Add(v, load(k + 2)), d, s3 + i);
}

// The sums of four output rows whose windows of k >= 4 rows each move down by one row (adjacent
// rows of one plane): rows[0 .. k + 2] holds the k + 3 rows they read, and output row j's window is
// rows[j .. j + k - 1]. With core = rows[3 .. k - 1], u = core + rows[1] + rows[2] and
// v = core + rows[k] + rows[k + 1]: sums[0] = u + rows[0], sums[1] = u + rows[k],
// sums[2] = v + rows[2], sums[3] = v + rows[k + 2]. k + 3 row loads for the four (10 for the
// 7x7's, where pairs take 16), and k + 4 additions. kCore, when nonzero, is k - 3 known at compile
// time. The 7x7 layer in NHWC, 1 thread, one kernel alone, with LinePrefetch: 1.1x faster than
// pairs, cold and hot.
template <int kCore, class D, class S>
HWY_NOINLINE void SumRowQuadOf(D d, const S* const* HWY_RESTRICT window_rows, size_t k,
                               int64_t length, hn::TFromD<D>* const* HWY_RESTRICT sums) {
  constexpr int kRows = kCore > 0 ? kCore + 6 : 0;
  const WindowRowPointers<kRows, S> pointers(window_rows);
  const S* const* rows = pointers.rows;
  hn::TFromD<D>* HWY_RESTRICT s0 = sums[0];
  hn::TFromD<D>* HWY_RESTRICT s1 = sums[1];
  hn::TFromD<D>* HWY_RESTRICT s2 = sums[2];
  hn::TFromD<D>* HWY_RESTRICT s3 = sums[3];
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + L <= length; i += L) QuadSumsAt<kCore, false>(d, rows, k, i, 0, s0, s1, s2, s3);
  if (i < length && length >= L)  // the last whole vector again, overlapping: the same sums
    QuadSumsAt<kCore, false>(d, rows, k, length - L, 0, s0, s1, s2, s3);
  else if (i < length)
    QuadSumsAt<kCore, true>(d, rows, k, i, static_cast<size_t>(length - i), s0, s1, s2, s3);
}

template <class D, class S>
HWY_INLINE void SumRowQuad(D d, const S* const* rows, size_t k, int64_t length,
                           hn::TFromD<D>* const* sums) {
  if (k == 7) return SumRowQuadOf<4>(d, rows, k, length, sums);
  if (k == 5) return SumRowQuadOf<2>(d, rows, k, length, sums);
  SumRowQuadOf<0>(d, rows, k, length, sums);
}

// Prefetches `count` rows of `row_bytes` from sources[i] + `ahead` bytes (an address past the
// input is only a hint, never read).
template <class S>
HWY_INLINE void PrefetchRows(const S* const* sources, size_t count, int64_t ahead,
                             int64_t row_bytes) {
  for (size_t r = 0; r < count; ++r) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(sources[r]) + static_cast<uintptr_t>(ahead);
    for (int64_t x = 0; x < row_bytes; x += 64)
      __builtin_prefetch(reinterpret_cast<const void*>(at + static_cast<uintptr_t>(x)));
  }
}

// Prefetches a row, one 64-byte line per call to Next. avg_nhwc's W pass calls it once per output
// vector, so that the row the next group of output rows adds arrives while the W pass computes;
// prefetched whole before the H pass, it arrives while the H pass waits on it (the 7x7 layer in
// NHWC, 1 thread, row pairs, one kernel alone: 1.1x slower cold). Past the row's last line it
// stays on that line.
struct LinePrefetch {
  const char* at;
  const char* last;
  explicit LinePrefetch(const void* row, int64_t bytes = 64)
      : at(static_cast<const char*>(row)), last(at + ((bytes - 1) & ~int64_t{63})) {}
  HWY_INLINE void Next() {
    __builtin_prefetch(at);
    at = std::min(at + 64, last);
  }
  void Rest() {
    while (at < last) Next();
    __builtin_prefetch(last);
  }
};

// ---- slice sums: a window over depth slices summed into one plane first ---------------------
//
// For 3-D windows, avg_nchw and avg_nhwc sum each output depth's slices into one plane, and take
// the window's rows from there, as for a 2-D problem.

// The sum of `count` slices (kSlices of them when not 0) at element i, in slice order.
template <int kSlices, class D, class S>
HWY_INLINE hn::Vec<D> SliceSum(D d, const S* const* HWY_RESTRICT slices, size_t count, int64_t i) {
  const size_t n = kSlices > 0 ? static_cast<size_t>(kSlices) : count;
  auto m = LoadAs(d, slices[0] + i);
#pragma GCC unroll 4
  for (size_t k = 1; k < n; ++k) m = hn::Add(m, LoadAs(d, slices[k] + i));
  return m;
}

// SumSlices, with the slice count unrolled when kSlices is not 0.
template <int kSlices, class D, class S>
HWY_NOINLINE void SumSlicesOf(D d, const S* const* HWY_RESTRICT slices, size_t count, int64_t H,
                              int64_t W, int64_t row_stride, hn::TFromD<D>* HWY_RESTRICT sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  if (W == row_stride) {  // no padding: the plane is one run
    const int64_t total = H * W;
    int64_t i = 0;
    for (; i + 2 * L <= total; i += 2 * L) {
      const auto m0 = SliceSum<kSlices>(d, slices, count, i),
                 m1 = SliceSum<kSlices>(d, slices, count, i + L);
      hn::Store(m0, d, sums + i);
      hn::Store(m1, d, sums + i + L);
    }
    if (i + L <= total) {
      hn::Store(SliceSum<kSlices>(d, slices, count, i), d, sums + i);
      i += L;
    }
    if (i < total) {  // a partial vector (NHWC planes of any length)
      const size_t tail = static_cast<size_t>(total - i);
      auto m = LoadPartial(d, slices[0] + i, tail);
      for (size_t k = 1; k < count; ++k) m = hn::Add(m, LoadPartial(d, slices[k] + i, tail));
      StorePartial(m, d, sums + i, tail);
    }
    return;
  }
  const auto identity = hn::Set(
      d, static_cast<hn::TFromD<D>>(std::is_floating_point_v<hn::TFromD<D>> ? -0.0f : 0.0f));
  const int64_t whole = W / L * L;
  const size_t tail = static_cast<size_t>(W - whole);
  for (int64_t ih = 0; ih < H; ++ih) {
    hn::TFromD<D>* row = sums + ih * row_stride;
    for (int64_t x = 0; x < whole; x += L)
      hn::Store(SliceSum<kSlices>(d, slices, count, ih * W + x), d, row + x);
    auto m = LoadPartial(d, slices[0] + ih * W + whole, tail);
    for (size_t k = 1; k < count; ++k)
      m = hn::Add(m, LoadPartial(d, slices[k] + ih * W + whole, tail));
    hn::Store(hn::IfThenElse(hn::FirstN(d, tail), m, identity), d,
              row + whole);  // masked lanes: +0, not -0
    for (int64_t x = whole + L; x < row_stride; x += L) hn::Store(identity, d, row + x);
  }
}

// sums[ih * row_stride + x] = the sum over `count` depth slices (each H rows of W values, one
// contiguous run) of slice[ih * W + x], in slice order, for x < W; -0 (or 0) for x in
// [W, row_stride). One pass, each slice read in order: streams the hardware prefetchers follow
// (the 3-D layer cold: 1.7x faster than its window rows read across three slices at once, which
// need software prefetches and with them are still 1.2x slower).
template <class D, class S>
HWY_INLINE void SumSlices(D d, const S* const* slices, size_t count, int64_t H, int64_t W,
                          int64_t row_stride, hn::TFromD<D>* sums) {
  if (count == 2)
    SumSlicesOf<2>(d, slices, count, H, W, row_stride, sums);
  else if (count == 3)
    SumSlicesOf<3>(d, slices, count, H, W, row_stride, sums);
  else
    SumSlicesOf<0>(d, slices, count, H, W, row_stride, sums);
}

// sums[i] = the sum over `count` source rows of rows[r][i], for i < length, in row order.
template <int kTaps, class D, class S>
HWY_INLINE void SumRows(D d, const S* const* HWY_RESTRICT rows, size_t count, int64_t length,
                        hn::TFromD<D>* HWY_RESTRICT sums) {
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  const size_t taps = kTaps > 0 ? static_cast<size_t>(kTaps) : count;
  int64_t i = 0;
  // Four vectors at a time: four independent chains of additions, not one whose latency bounds
  // the loop.
  for (; i + 4 * L <= length; i += 4 * L) {
    auto m0 = LoadAs(d, rows[0] + i), m1 = LoadAs(d, rows[0] + i + L);
    auto m2 = LoadAs(d, rows[0] + i + 2 * L), m3 = LoadAs(d, rows[0] + i + 3 * L);
    for (size_t r = 1; r < taps; ++r) {
      const S* src = rows[r] + i;
      m0 = hn::Add(m0, LoadAs(d, src));
      m1 = hn::Add(m1, LoadAs(d, src + L));
      m2 = hn::Add(m2, LoadAs(d, src + 2 * L));
      m3 = hn::Add(m3, LoadAs(d, src + 3 * L));
    }
    hn::StoreU(m0, d, sums + i);
    hn::StoreU(m1, d, sums + i + L);
    hn::StoreU(m2, d, sums + i + 2 * L);
    hn::StoreU(m3, d, sums + i + 3 * L);
  }
  if constexpr (kTaps > 0) {  // the row pointers in registers, not reloaded after each store
    const S* r[kTaps];
    for (size_t t = 0; t < taps; ++t) r[t] = rows[t];
    for (; i + L <= length; i += L) {
      auto m = LoadAs(d, r[0] + i);
      for (size_t t = 1; t < taps; ++t) m = hn::Add(m, LoadAs(d, r[t] + i));
      hn::StoreU(m, d, sums + i);
    }
  }
  for (; i + L <= length; i += L) {
    auto m = LoadAs(d, rows[0] + i);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    hn::StoreU(m, d, sums + i);
  }
  if (i < length && length >= L) {  // the last whole vector again, overlapping: the same sums
    i = length - L;
    auto m = LoadAs(d, rows[0] + i);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadAs(d, rows[r] + i));
    hn::StoreU(m, d, sums + i);
  } else if (i < length) {
    const auto rest = static_cast<size_t>(length - i);
    auto m = LoadPartial(d, rows[0] + i, rest);
    for (size_t r = 1; r < taps; ++r) m = hn::Add(m, LoadPartial(d, rows[r] + i, rest));
    hn::StoreU(m, d, sums + i);
  }
}

template <class D, class S>
HWY_INLINE void SumRowsAnyCount(D d, const S* const* rows, size_t count, int64_t length,
                                hn::TFromD<D>* sums) {
  if (count == 2) return SumRows<2>(d, rows, count, length, sums);
  if (count == 3) return SumRows<3>(d, rows, count, length, sums);
  SumRows<0>(d, rows, count, length, sums);
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#endif  // POOLSPEC_OPTIMIZED_KERNELS_ROW_SUMS_INL_H_
