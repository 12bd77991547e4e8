// blocked_nchw: NCHW planes 16 at a time as one NHWC image of 16 channels -- transposed, run by the
// NHWC kernel dispatch chose for that image, and transposed back. Compiled once per SIMD target
// (kernels/simd-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/blocked_nchw.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <fmt/format.h>

#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

// ---- blocked_nchw: 16 planes at a time as one NHWC image of 16 channels ------------------------
//
// NCHW planes are short rows; the NHWC kernels fill whole vectors with channels. So each group
// of 16 consecutive planes (n * C + c) is transposed into an NHWC image of 16 channels (oneDNN's
// nChw16c block), the NHWC kernel dispatch chose for that image (Plan::block) runs on it, and its
// output is transposed back. The block holds the storage type, so the NHWC kernel's arithmetic,
// empty-window values and roundings are those of the problem itself.

// rows[i] lane j -> rows[j] lane i, for an L x L tile (L = Lanes(d), a power of two dividing
// block_channels).
// Each round takes the even and the odd lanes of pairs of rows, which rotates the bits of
// (row, lane) by one; log2(L) rounds exchange them. Unrolled, so the tile stays in registers.
template <class D>
HWY_INLINE void TransposeTile(D d, hn::Vec<D>* HWY_RESTRICT rows) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)rows;
#else
  constexpr size_t L = hn::MaxLanes(D());
  hn::Vec<D> next[L];
#pragma GCC unroll 4
  for (size_t round = 1; round < L; round *= 2) {
#pragma GCC unroll 16
    for (size_t i = 0; i < L / 2; ++i) {
      next[i] = hn::ConcatEven(d, rows[2 * i + 1], rows[2 * i]);
      next[i + L / 2] = hn::ConcatOdd(d, rows[2 * i + 1], rows[2 * i]);
    }
#pragma GCC unroll 16
    for (size_t i = 0; i < L; ++i) rows[i] = next[i];
  }
#endif
}

// Planes [0, count) of `planes` (each `size` values, `stride` apart) into block[value * 16 +
// plane]; the planes past count are zeros. Values pass through D's lanes exactly (f16 and bf16
// widen to f32 and narrow back unchanged; BlockedNchw moves 8-bit integers in 8-bit lanes).
template <class D, class S>
HWY_INLINE void PlanesToBlock(D d, const S* HWY_RESTRICT planes, int64_t stride, int64_t count,
                              int64_t size, S* HWY_RESTRICT block) {
  constexpr size_t kMaxL = hn::MaxLanes(D());
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> rows[kMaxL];
  for (int64_t p = 0; p < block_channels; p += L) {
    for (int64_t i = 0; i < size; i += L) {
      const int64_t n = std::min(L, size - i);
      if (n == L && p + L <= count) {  // a whole tile: unrolled, so that `rows` stays in registers
#pragma GCC unroll 16
        for (size_t r = 0; r < kMaxL; ++r) {
          const S* src = planes + (p + static_cast<int64_t>(r)) * stride + i;
          __builtin_prefetch(
              src + 1024 / sizeof(S));  // sixteen streams a line at a time: the prefetchers lag
          rows[r] = LoadAs(d, src);
        }
        TransposeTile(d, rows);
#pragma GCC unroll 16
        for (size_t j = 0; j < kMaxL; ++j)
          StoreAs(rows[j], d, block + (i + static_cast<int64_t>(j)) * block_channels + p);
        continue;
      }
      for (int64_t r = 0; r < L; ++r) {
        const S* src = planes + (p + r) * stride + i;
        rows[r] = p + r >= count ? hn::Zero(d)
                  : n == L       ? LoadAs(d, src)
                                 : LoadPartial(d, src, static_cast<size_t>(n));
      }
      TransposeTile(d, rows);
      for (int64_t j = 0; j < n; ++j) StoreAs(rows[j], d, block + (i + j) * block_channels + p);
    }
  }
}

// The inverse: block[value * 16 + plane] back into planes [0, count).
template <class D, class S>
HWY_INLINE void BlockToPlanes(D d, const S* HWY_RESTRICT block, int64_t size, int64_t count,
                              S* HWY_RESTRICT planes, int64_t stride) {
  constexpr size_t kMaxL = hn::MaxLanes(D());
  const int64_t L = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<D> rows[kMaxL];
  for (int64_t p = 0; p < std::min(count, block_channels); p += L) {
    for (int64_t i = 0; i < size; i += L) {
      const int64_t n = std::min(L, size - i);
      if (n == L && p + L <= count) {  // a whole tile, unrolled as in PlanesToBlock
#pragma GCC unroll 16
        for (size_t j = 0; j < kMaxL; ++j)
          rows[j] = LoadAs(d, block + (i + static_cast<int64_t>(j)) * block_channels + p);
        TransposeTile(d, rows);
#pragma GCC unroll 16
        for (size_t r = 0; r < kMaxL; ++r)
          StoreAs(rows[r], d, planes + (p + static_cast<int64_t>(r)) * stride + i);
        continue;
      }
      for (int64_t j = 0; j < L; ++j)
        rows[j] = j < n ? LoadAs(d, block + (i + j) * block_channels + p) : hn::Zero(d);
      TransposeTile(d, rows);
      for (int64_t r = 0; r < std::min(L, count - p); ++r) {
        S* dst = planes + (p + r) * stride + i;
        if (n == L)
          StoreAs(rows[r], d, dst);
        else
          StorePartial(rows[r], d, dst, static_cast<size_t>(n));
      }
    }
  }
}

template <class S, class Acc>
void BlockedNchw(const Plan& P, const RunArgs& a) {
  // 8-bit values are moved in lanes of their own width, a block's channels to a tile row.
  using D =
      std::conditional_t<sizeof(S) == 1, hn::CappedTag<S, block_channels>, hn::ScalableTag<Acc>>;
  const D d;
  const Plan& B = *P.block;
  const int64_t planes = P.batch * P.channels;
  const int64_t groups = (planes + block_channels - 1) / block_channels;
  const S* in = reinterpret_cast<const S*>(a.input);
  S* out = reinterpret_cast<S*>(a.output);
  // Small blocks' input is prefetched a block ahead (into L2): the in-stream prefetch of
  // PlanesToBlock reaches only 1 KiB into each plane. Measured cold at 1 thread, alternating
  // runs: GoogLeNet's 17x17 layer (18 KiB a block) 0.93x the time without; its 35x35 layer
  // (78 KiB) unchanged, so larger blocks are left to the prefetchers.
  const bool prefetch_next =
      P.in_plane * block_channels * static_cast<int64_t>(sizeof(S)) <= (64 << 10);
  ParallelRanges(a.threads, groups, [&](int64_t begin, int64_t end) HWY_ATTR {
    thread_local std::vector<S> in_tl, out_tl;
    S* block_in = Scratch(in_tl, static_cast<size_t>(P.in_plane * block_channels));
    S* block_out = Scratch(out_tl, static_cast<size_t>(P.out_plane * block_channels));
    for (int64_t g = begin; g < end; ++g) {
      const int64_t p0 = g * block_channels, count = std::min(block_channels, planes - p0);
      if (g + 1 < end && prefetch_next) {
        const char* next = reinterpret_cast<const char*>(in + (p0 + block_channels) * P.in_plane);
        const int64_t bytes = std::min(block_channels, planes - p0 - block_channels) * P.in_plane *
                              static_cast<int64_t>(sizeof(S));
        for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(next + b, 0, 2);
      }
      PlanesToBlock(d, in + p0 * P.in_plane, P.in_plane, count, P.in_plane, block_in);
      P.block_kernel->run(B, RunArgs{reinterpret_cast<const std::byte*>(block_in),
                                     reinterpret_cast<std::byte*>(block_out), nullptr, 1});
      BlockToPlanes(d, block_out, P.out_plane, count, out + p0 * P.out_plane, P.out_plane);
    }
  });
}

void RunBlockedNchw(const Plan& P, const RunArgs& a) {
  ForDtype(P.p.dtype,
           [&]<class S, class Acc>(Types<S, Acc>) HWY_ATTR { BlockedNchw<S, Acc>(P, a); });
}

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(RunBlockedNchw);

namespace {

Status accepts_blocked_nchw(const Problem& p, Layout layout) {
  if (Status s = common_limits(p); !s) return s;
  if (Status s = wants(layout == Layout::channels_first, "nchw only"); !s) return s;
  if (p.op == Op::max && p.indices != Indices::none)
    return Error{"max with indices: the block's indices would name its planes, not the tensor's"};
  int64_t in_plane = 1, out_plane = 1;
  for (const Axis& a : p.axes) {
    in_plane *= a.extent;
    out_plane *= output_extent_of(p, a);
  }
  if ((in_plane + out_plane) * block_channels > (int64_t{1} << 24))
    return Error{
        fmt::format("planes of {} and {} elements: the 16-plane blocks take up to 2^24 values",
                    in_plane, out_plane)};
  return Ok{};
}

// Measured (optimized/bench): the transposition pays where the planes are small enough for the
// two blocks to stay in L2 (1 MiB here). For max, max_nchw's rows catch up before that: on Zen 4,
// even at 1 thread and 1.4x faster at 2 on the ResNet stem (16 planes of 112x112: 784 KiB); on
// Zen 5, 1.4x faster cold at 1 thread and 1.5x at 2 on GoogLeNet's 71x71 layer (315 KiB), even
// cold at 1 thread on its 35x35 one (78 KiB, where the blocks stay faster hot), and slower on its
// 17x17 one and the 3-D U-Net's 16^3 (256 KiB). So max blocks stop at 256 KiB.
//
// i8 and u8 max at stride 1 or 2 along W: max_nchw combines their rows at storage width, and
// wins where a row fills most of a vector (AVX-512, 1 thread, hot, batch 8: rows of 112 (the
// ResNet stem) 2.5-3.5x faster, of 71 1.5-2x, of 56 at stride 1 1.4-2x; of 35 1.1x slower, of 28
// 1.1-1.25x slower, of 17 2.5x slower).
bool prefers_blocked_nchw(const Problem& p, Layout) {
  if (max_nchw_at_storage_width(p) && p.axes.back().extent >= 48) return false;
  int64_t in_plane = 1;
  for (const Axis& a : p.axes) in_plane *= a.extent;
  const int64_t limit = p.op == Op::max ? int64_t{1} << 18 : int64_t{1} << 20;
  return in_plane * block_channels * static_cast<int64_t>(storage_bytes(p.dtype)) <= limit;
}

void run_blocked_nchw(const Plan& P, const RunArgs& a) {
  HWY_DYNAMIC_DISPATCH(RunBlockedNchw)(P, a);
}

}  // namespace

namespace kernels {

// An entry of the kernel list (kernels/kernel_list.cpp).
extern const KernelInfo blocked_nchw{
    .name = "blocked_nchw",
    .description =
        "16 planes at a time transposed (in registers) into an NHWC image of 16 channels, the "
        "NHWC kernel dispatch picks for it, then transposed back",
    .accepts = accepts_blocked_nchw,
    .preferred = prefers_blocked_nchw,
    .run = run_blocked_nchw,
    .scope = {.layout = Layout::channels_first},
};

}  // namespace kernels
}  // namespace poolspec::optimized
#endif
