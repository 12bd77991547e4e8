// lib_nn's int8 pooling kernels for XS3, bit for bit (xs3/README.md sections 3, 4 and 7):
// avgpool2d_global, avgpool2d (with its 2x2 stride-2 path) and maxpool2d, in the plan/job API of
// the seed era (lib_nn 6e5ae7c..3fb8a01^), plus the later API where the caller passes scale and
// shift, and the _ext channel-range form. Images are (height, width, channels) int8, row-major.
// lib_nn's init-time asserts are errors here; a compute call that would read or write outside
// the given buffers is refused instead of running.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "poolspec/result.hpp"
#include "poolspec/xs3/vpu.hpp"

namespace poolspec::xs3 {

// Build-time configuration of lib_nn, as runtime values.
struct Config {
  bool symmetric = false;                              // CONFIG_SYMMETRIC_SATURATION_*
  Accumulation accumulation = Accumulation::saturate;  // the assembly's; wrap = the C reference
  Saturation saturation() const {
    return symmetric ? Saturation::symmetric() : Saturation::standard();
  }
};

struct ImageParams {  // nn_image_params_t
  uint32_t height = 0, width = 0, channels = 0;
};

// ---- scale and shift -----------------------------------------------------------------------
// From a pixel count N (xs3/README.md 3.2): c = ceil(log2 N); N = 2^c gives (1, c); otherwise
// scale = round_half_up(2^(c+6) / N), computed as (floor(2^31 / N) + 2^(q-1)) >> q with
// q = 25 - c, and shift = c + 6. init asserts 64 < scale < 128, which refuses N = 255, 257, ...
struct ScaleShift {
  int scale = 1;
  int shift = 0;
  bool operator==(const ScaleShift&) const = default;
};
Result<ScaleShift> scale_and_shift(uint64_t pixels);

// ---- avgpool2d_global -------------------------------------------------------------------------
struct GlobalJobParams {  // nn_avgpool2d_global_job_params_t
  uint32_t start_channel = 0, out_channels = 0;
};
struct GlobalPlan {  // nn_avgpool2d_global_plan_t, with the configuration it was built for
  uint32_t pixels = 0, channels = 0;
  uint32_t shift = 0, scale = 0;
  Saturation saturation;
  Accumulation accumulation = Accumulation::saturate;
};
struct GlobalJob {           // nn_avgpool2d_global_job_t
  int32_t start_stride = 0;  // the first channel (a byte offset into X and Y)
  uint32_t out_channels = 0;
};
struct GlobalInit {
  GlobalPlan plan;
  std::vector<GlobalJob> jobs;
};

// avgpool2d_global_init: job_params empty means one job over every channel (job_count 1).
Result<GlobalInit> avgpool2d_global_init(const ImageParams& x,
                                         std::span<const GlobalJobParams> job_params,
                                         const Config& config);

// avgpool2d_global (seed API): for each channel of the job,
//   Y[ch] = clamp(RSHR(bias + sum_p scale * X[p, ch], shift), LO, 127)
// with the same int32 bias for every channel. X holds height*width*channels bytes, Y channels.
Status avgpool2d_global(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                        const GlobalPlan& plan, const GlobalJob& job);

// The later API (lib_nn 5ee2248..): the caller passes scale and shift; the _ext form computes the
// channel range [chan_start, chan_start + chan_count).
Status avgpool2d_global_scaled(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                               int8_t scale, uint16_t shift, const ImageParams& x_params,
                               const Config& config);
Status avgpool2d_global_ext(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                            int8_t scale, uint16_t shift, const ImageParams& x_params,
                            uint32_t chan_start, uint32_t chan_count, const Config& config);

// ---- windowed operators -------------------------------------------------------------------------
struct WindowParams {              // nn_window_params_t (dilation is ignored by these operators)
  uint32_t height = 1, width = 1;  // shape
  int32_t start_row = 0, start_col = 0;  // the top-left tap of output (0, 0), in X coordinates
  int32_t stride_v = 1, stride_h = 1;
};
struct WindowJobParams {  // nn_window_op_job_params_t: a block of Y
  int32_t start_rows = 0, start_cols = 0, start_channels = 0;
  int32_t size_rows = 0, size_cols = 0, size_channels = 0;
};
using PoolJob = WindowJobParams;  // the model keeps the block; lib_nn's byte strides follow from it

enum class AvgImpl { general, two_by_two };  // AVGPOOL2D_DEFAULT, AVGPOOL2D_2X2

struct AvgPlan {  // nn_avgpool2d_plan_t, scale and shift as plain values
  ImageParams x, y;
  WindowParams window;
  int scale = 1, shift = 0;
  AvgImpl impl = AvgImpl::general;
  Saturation saturation;
  Accumulation accumulation = Accumulation::saturate;
};
struct MaxPlan {  // nn_maxpool2d_plan_t
  ImageParams x, y;
  WindowParams window;
};
template <class Plan>
struct WindowInit {
  Plan plan;
  std::vector<PoolJob> jobs;
};

// avgpool2d_init / maxpool2d_init: job_params empty means one job over all of Y.
Result<WindowInit<AvgPlan>> avgpool2d_init(const ImageParams& x, const ImageParams& y,
                                           const WindowParams& window,
                                           std::span<const WindowJobParams> job_params,
                                           const Config& config);
Result<WindowInit<MaxPlan>> maxpool2d_init(const ImageParams& x, const ImageParams& y,
                                           const WindowParams& window,
                                           std::span<const WindowJobParams> job_params);

// avgpool2d: Y[r,c,p] = clamp(RSHR(sum scale * X[window], shift), LO, 127), no bias; the 2x2 path
// accumulates its four taps in the order (0,0), (0,1), (1,0), (1,1).
Status avgpool2d(std::span<int8_t> y, std::span<const int8_t> x, const AvgPlan& plan,
                 const PoolJob& job);
// maxpool2d: the signed int8 maximum of the window, by the assembly's VLSUB-sign update.
Status maxpool2d(std::span<int8_t> y, std::span<const int8_t> x, const MaxPlan& plan,
                 const PoolJob& job);

}  // namespace poolspec::xs3
