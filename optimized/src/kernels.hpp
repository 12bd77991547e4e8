// The SIMD kernels behind the optimized engine's kernel list, compiled once per SIMD target
// (Highway's foreach_target) and dispatched at run time to the best the CPU supports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan.hpp"

namespace poolspec::optimized {

enum class KernelId {
  global_avg_nchw,  // a window covering each whole plane: one contiguous reduction per plane
  global_avg_nhwc,  // a window covering each whole image: its pixels summed in memory order, a chunk of channels at a time
  avg_plane_nchw,   // stride 1, out_w == w: each plane summed as one flat array, along H then W (masked)
  avg_int8_nchw,    // i8/u8 rows of up to 64 values: window rows summed in 16-bit lanes, W taps by permutes
  blocked_nchw,     // 16 planes transposed into an NHWC image, Plan::block's kernel, transposed back
  avg_sliding,      // block prefix and suffix sums along H (and W in NHWC); O(1) per output in them
  avg_nchw,         // per output row: the window's rows summed whole, then the taps along W
  max_nchw,         // values only, per output row: the window's rows combined whole, then the taps along W
  pool_nchw,        // per plane: each input row reduced along W, then the rows combined
  avg_nhwc,         // per output row: the window's rows summed, then sums along W; lanes over C
  max_nhwc,         // per output element, the taps in scan order; lanes over C
};

// Runs kernel `id` on the planned problem, with the best SIMD target of this CPU.
void run_kernel(KernelId id, const Plan& plan, const RunArgs& args);

// The name of the SIMD target run_kernel dispatches to (e.g. "AVX3").
std::string dispatched_target();

std::vector<std::string> compiled_targets();  // supported by this CPU, best first
bool restrict_target(std::string_view name);  // "" restores every target

}  // namespace poolspec::optimized
