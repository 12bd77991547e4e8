// The optimized engine's view of a problem: rank 1..3 normalised to three spatial axes (depth,
// height, width; missing leading axes have extent 1 and a 1-tap window), with per-axis tables of
// each output index's in-bounds taps, computed once per call before the SIMD kernels run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "poolspec/engine.hpp"
#include "poolspec/optimized/mutants.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/problem.hpp"

namespace poolspec::optimized {

// blocked_nchw's group: this many consecutive NCHW planes become one NHWC image's channels.
inline constexpr int64_t block_channels = 16;

// avg_int8_nchw's scope: rows (and output rows) of at most one 512-bit vector of bytes, and
// windows of at most 128 taps, whose sums of i8 or u8 values stay within 16 bits (|sum| <= 32640).
inline constexpr int64_t int8_row_limit = 64;
inline constexpr int64_t int8_window_limit = 128;

struct AxisTable {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0;
  // For output index j: its in-bounds taps are [first[j], past[j]) ("0 <= j*s - pb + t*dl < d"),
  // and its factor of the divisor under the problem's rule.
  std::vector<int32_t> first, past, divisor;
  // Outputs [interior_begin, interior_end) have every tap inside the input.
  int64_t interior_begin = 0, interior_end = 0;
  // Outputs with no tap inside the input (their windows lie in the padding), in order.
  std::vector<int64_t> empty;

  int64_t count(int64_t j) const {
    return past[static_cast<size_t>(j)] - first[static_cast<size_t>(j)];
  }
  int64_t start(int64_t j) const { return j * stride - pad_begin; }  // "tap t at j*s - pb + t*dl"
};

struct Plan {
  Plan(const Problem& problem, Layout layout, Mutation mutation = Mutation::none);

  Problem p;  // a copy: a plan outlives the call that made it (optimized.cpp keeps the last)
  Layout layout;
  Mutation mutation;
  int64_t batch = 1, channels = 1;
  AxisTable axis[3];  // depth, height, width
  int64_t in_plane = 1, out_plane = 1;
  int64_t index_modulus = 0;  // prod(input_shape[index_axis:]) for tensor indices with an axis
  // blocked_nchw: the same problem as one NHWC image of block_channels channels, and the kernel
  // dispatch chose for it.
  std::unique_ptr<const Plan> block;
  const KernelInfo* block_kernel = nullptr;

  // The divisor of output (od, oh, ow) and its number of in-bounds taps.
  int64_t divisor(int64_t od, int64_t oh, int64_t ow) const;
  int64_t in_bounds(int64_t od, int64_t oh, int64_t ow) const {
    return axis[0].count(od) * axis[1].count(oh) * axis[2].count(ow);
  }
  // The index output for a max whose selected element has row-major spatial offset
  // `plane_offset` in plane (n, c), per the problem's index mode; -1 for none.
  int64_t final_index(int64_t n, int64_t c, int64_t plane_offset) const;
  // Storage offset of output (n, c, od, oh, ow) in the layout.
  int64_t output_position(int64_t n, int64_t c, int64_t spatial) const {
    return layout == Layout::channels_first ? (n * channels + c) * out_plane + spatial
                                            : (n * out_plane + spatial) * channels + c;
  }
};

}  // namespace poolspec::optimized
