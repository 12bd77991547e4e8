#include "poolspec/xs3/pooling.hpp"

#include <fmt/format.h>

#include "poolspec/number_domain.hpp"
#include "poolspec/xs3/scale_formula.hpp"

namespace poolspec::xs3 {

namespace {

uint64_t volume(const ImageParams& p) {
  return uint64_t{p.height} * uint64_t{p.width} * uint64_t{p.channels};
}

Status check_buffer(std::string_view name, size_t size, const ImageParams& p) {
  if (size != volume(p))
    return Error{fmt::format("{}: {} bytes, but a {}x{}x{} image holds {}", name, size, p.height,
                             p.width, p.channels, volume(p))};
  return Ok{};
}

}  // namespace

// ---- scale and shift -----------------------------------------------------------------------

Result<ScaleShift> scale_and_shift(uint64_t n) {
  if (n == 0)
    return Error{"pixel count N=0: lib_nn's ceil_log2 returns -1 and init asserts N >= 1"};
  if (n > (uint64_t{1} << 30))
    return Error{
        fmt::format("pixel count N={}: above 2^30, where lib_nn's ceil_log2 returns -1", n)};
  int c = 0;
  while ((uint64_t{1} << c) < n) ++c;
  if (n == (uint64_t{1} << c)) return ScaleShift{1, c};
  if (c > 24)
    return Error{
        fmt::format("pixel count N={}: not a power of two above 2^24, where lib_nn's "
                    "q = 25 - ceil(log2 N) is below 1 (its shift is then undefined)",
                    n)};
  const int64_t h = derived_scale<int64_t>(static_cast<int64_t>(n), c);
  if (!(h > 64 && h < 128))
    return Error{
        fmt::format("pixel count N={}: the derived scale round(2^{}/N) is {}, outside "
                    "64 < scale < 128, which lib_nn's init asserts",
                    n, c + 6, h)};
  return ScaleShift{static_cast<int>(h), c + 6};
}

// ---- avgpool2d_global -------------------------------------------------------------------------

Result<GlobalInit> avgpool2d_global_init(const ImageParams& x,
                                         std::span<const GlobalJobParams> job_params,
                                         const Config& config) {
  const uint64_t n = uint64_t{x.height} * uint64_t{x.width};
  Result<ScaleShift> ss = scale_and_shift(n);
  if (!ss)
    return Error{fmt::format("avgpool2d_global_init: X_h*X_w = {}x{}: {}", x.height, x.width,
                             ss.error().message)};
  GlobalInit init;
  init.plan = GlobalPlan{
      static_cast<uint32_t>(n),         x.channels,          static_cast<uint32_t>(ss->shift),
      static_cast<uint32_t>(ss->scale), config.saturation(), config.accumulation};
  if (job_params.empty()) {
    init.jobs.push_back(GlobalJob{0, x.channels});
    return init;
  }
  for (size_t i = 0; i < job_params.size(); ++i) {
    const GlobalJobParams& j = job_params[i];
    if (uint64_t{j.start_channel} + j.out_channels > x.channels)
      return Error{
          fmt::format("avgpool2d_global_init: job_params[{}]: start_channel {} + "
                      "out_channels {} exceeds X_c = {}",
                      i, j.start_channel, j.out_channels, x.channels)};
    if (j.start_channel > static_cast<uint32_t>(INT32_MAX))
      return Error{
          fmt::format("job_params[{}].start_channel={}: must fit int32", i, j.start_channel)};
    init.jobs.push_back(GlobalJob{static_cast<int32_t>(j.start_channel), j.out_channels});
  }
  return init;
}

Status avgpool2d_global(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                        const GlobalPlan& plan, const GlobalJob& job) {
  const ImageParams image{plan.pixels, 1, plan.channels};
  if (Status s = check_buffer("X", x.size(), image); !s) return s;
  if (y.size() != plan.channels)
    return Error{fmt::format("Y: {} bytes for {} channels", y.size(), plan.channels)};
  if (job.start_stride < 0 || uint64_t(job.start_stride) + job.out_channels > plan.channels)
    return Error{fmt::format("job: channels [{}, {}+{}) outside [0, {})", job.start_stride,
                             job.start_stride, job.out_channels, plan.channels)};
  if (plan.shift > 31)
    return Error{fmt::format("plan.shift={}: VLSAT shifts above 31 are not modelled", plan.shift)};
  const auto scale = static_cast<int8_t>(plan.scale);  // the asm replicates the low byte
  for (uint32_t k = 0; k < job.out_channels; ++k) {
    const size_t ch = static_cast<size_t>(job.start_stride) + k;
    int32_t acc = bias;  // the same bias for every channel; not multiplied by the scale
    for (size_t p = 0; p < plan.pixels; ++p)  // pixel order = memory order
      acc = vlmacc8(acc, scale, x[p * plan.channels + ch], plan.accumulation);
    y[ch] = average_output(acc, static_cast<int>(plan.shift), plan.saturation);
  }
  return Ok{};
}

Status avgpool2d_global_ext(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                            int8_t scale, uint16_t shift, const ImageParams& x_params,
                            uint32_t chan_start, uint32_t chan_count, const Config& config) {
  const uint64_t n = uint64_t{x_params.height} * x_params.width;
  if (n == 0 || n > UINT32_MAX) return Error{fmt::format("X_h*X_w={}: must be in [1, 2^32)", n)};
  if (shift > 31)
    return Error{fmt::format("shift={}: VLSAT shifts above 31 are not modelled", shift)};
  const GlobalPlan plan{static_cast<uint32_t>(n),
                        x_params.channels,
                        shift,
                        static_cast<uint32_t>(static_cast<uint8_t>(scale)),
                        config.saturation(),
                        config.accumulation};
  if (chan_start > static_cast<uint32_t>(INT32_MAX))
    return Error{fmt::format("chan_start={}: must fit int32", chan_start)};
  return avgpool2d_global(y, x, bias, plan,
                          GlobalJob{static_cast<int32_t>(chan_start), chan_count});
}

Status avgpool2d_global_scaled(std::span<int8_t> y, std::span<const int8_t> x, int32_t bias,
                               int8_t scale, uint16_t shift, const ImageParams& x_params,
                               const Config& config) {
  return avgpool2d_global_ext(y, x, bias, scale, shift, x_params, 0, x_params.channels, config);
}

// ---- windowed operators -------------------------------------------------------------------------

namespace {

// The checks both windowed inits make (xs3/README.md 4.1), and the jobs they build.
Result<std::vector<PoolJob>> window_jobs(std::string_view op, const ImageParams& x,
                                         const ImageParams& y, const WindowParams& w,
                                         std::span<const WindowJobParams> params) {
  if (x.channels != y.channels)
    return Error{fmt::format("{}: X_c={} and Y_c={} must be equal", op, x.channels, y.channels)};
  if (w.start_row < 0 || w.start_col < 0)
    return Error{fmt::format("{}: window start ({}, {}) must be >= 0 (no padding)", op, w.start_row,
                             w.start_col)};
  if (w.height < 1 || w.width < 1)
    return Error{fmt::format("{}: window shape {}x{} must be at least 1x1", op, w.height, w.width)};
  if (w.stride_v < 1 || w.stride_h < 1)  // the model's own check: lib_nn does not assert it
    return Error{
        fmt::format("{}: window stride ({}, {}) must be >= 1", op, w.stride_v, w.stride_h)};
  std::vector<PoolJob> jobs;
  if (params.empty()) {
    jobs.push_back(PoolJob{0, 0, 0, static_cast<int32_t>(y.height), static_cast<int32_t>(y.width),
                           static_cast<int32_t>(y.channels)});
    return jobs;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const WindowJobParams& j = params[i];
    const auto inside = [](int32_t start, int32_t size, uint32_t limit) {
      return start >= 0 && size >= 0 && int64_t{start} + size <= int64_t{limit};
    };
    if (!inside(j.start_rows, j.size_rows, y.height) ||
        !inside(j.start_cols, j.size_cols, y.width) ||
        !inside(j.start_channels, j.size_channels, y.channels))
      return Error{
          fmt::format("{}: job_params[{}]: the block rows [{}, +{}), cols [{}, +{}), "
                      "channels [{}, +{}) must lie inside Y ({}x{}x{})",
                      op, i, j.start_rows, j.size_rows, j.start_cols, j.size_cols, j.start_channels,
                      j.size_channels, y.height, y.width, y.channels)};
    if (j.start_channels % 4 != 0 || j.size_channels % 4 != 0)
      return Error{
          fmt::format("{}: job_params[{}]: start.channels={} and size.channels={} must be "
                      "multiples of 4",
                      op, i, j.start_channels, j.size_channels)};
    jobs.push_back(j);
  }
  return jobs;
}

// Every tap a job's windows read must lie inside X (lib_nn's avgpool2d_init does not check).
Status check_reads(const ImageParams& x, const WindowParams& w, const PoolJob& job) {
  if (job.size_rows == 0 || job.size_cols == 0 || job.size_channels == 0) return Ok{};
  const int64_t last_row =
      w.start_row + int64_t{w.stride_v} * (job.start_rows + job.size_rows - 1) + w.height - 1;
  const int64_t last_col =
      w.start_col + int64_t{w.stride_h} * (job.start_cols + job.size_cols - 1) + w.width - 1;
  if (last_row >= x.height || last_col >= x.width)
    return Error{
        fmt::format("the job's last window reads X at row {}, column {}, outside X ({}x{})",
                    last_row, last_col, x.height, x.width)};
  return Ok{};
}

Status check_job(const ImageParams& y, const PoolJob& j) {
  if (j.start_rows < 0 || j.size_rows < 0 || int64_t{j.start_rows} + j.size_rows > y.height ||
      j.start_cols < 0 || j.size_cols < 0 || int64_t{j.start_cols} + j.size_cols > y.width ||
      j.start_channels < 0 || j.size_channels < 0 ||
      int64_t{j.start_channels} + j.size_channels > y.channels)
    return Error{"job: the block lies outside Y"};
  return Ok{};
}

// What a windowed compute call must satisfy before it touches a buffer.
Status check_window_call(size_t x_size, size_t y_size, const ImageParams& x, const ImageParams& y,
                         const WindowParams& w, const PoolJob& job) {
  if (Status s = check_buffer("X", x_size, x); !s) return s;
  if (Status s = check_buffer("Y", y_size, y); !s) return s;
  if (Status s = check_job(y, job); !s) return s;
  return check_reads(x, w, job);
}

// Calls f(y_index, tap_indices...) for every output of the job: f(out, x_index(i, j)).
template <class F>
void for_each_window(const ImageParams& x, const ImageParams& y, const WindowParams& w,
                     const PoolJob& job, F f) {
  for (int32_t r = job.start_rows; r < job.start_rows + job.size_rows; ++r)
    for (int32_t c = job.start_cols; c < job.start_cols + job.size_cols; ++c)
      for (int32_t p = job.start_channels; p < job.start_channels + job.size_channels; ++p) {
        const size_t out = (size_t(r) * y.width + size_t(c)) * y.channels + size_t(p);
        const auto tap = [&, r, c, p](uint32_t i, uint32_t j) {
          const size_t row = size_t(w.start_row) + size_t(r) * size_t(w.stride_v) + i;
          const size_t col = size_t(w.start_col) + size_t(c) * size_t(w.stride_h) + j;
          return (row * x.width + col) * x.channels + size_t(p);
        };
        f(out, tap);
      }
}

}  // namespace

Result<WindowInit<AvgPlan>> avgpool2d_init(const ImageParams& x, const ImageParams& y,
                                           const WindowParams& window,
                                           std::span<const WindowJobParams> job_params,
                                           const Config& config) {
  Result<std::vector<PoolJob>> jobs = window_jobs("avgpool2d_init", x, y, window, job_params);
  if (!jobs) return jobs.error();
  AvgPlan plan{x, y, window, 1, 2, AvgImpl::two_by_two, config.saturation(), config.accumulation};
  const bool two_by_two =
      window.height == 2 && window.width == 2 && window.stride_v == 2 && window.stride_h == 2;
  if (!two_by_two) {
    Result<ScaleShift> ss = scale_and_shift(uint64_t{window.height} * window.width);
    if (!ss)
      return Error{fmt::format("avgpool2d_init: window {}x{}: {}", window.height, window.width,
                               ss.error().message)};
    plan.scale = ss->scale;
    plan.shift = ss->shift;
    plan.impl = AvgImpl::general;
  }
  return WindowInit<AvgPlan>{plan, std::move(*jobs)};
}

Result<WindowInit<MaxPlan>> maxpool2d_init(const ImageParams& x, const ImageParams& y,
                                           const WindowParams& window,
                                           std::span<const WindowJobParams> job_params) {
  Result<std::vector<PoolJob>> jobs = window_jobs("maxpool2d_init", x, y, window, job_params);
  if (!jobs) return jobs.error();
  if (x.channels % 4 != 0)
    return Error{fmt::format("maxpool2d_init: X_c={} must be a multiple of 4", x.channels)};
  // "the last window row and column lie inside X": W_r0 + W_h - 1 + W_vert*(Y_h-1) < X_h.
  const int64_t last_row = window.start_row + int64_t{window.height} - 1 +
                           int64_t{window.stride_v} * (int64_t{y.height} - 1);
  const int64_t last_col = window.start_col + int64_t{window.width} - 1 +
                           int64_t{window.stride_h} * (int64_t{y.width} - 1);
  if (y.height > 0 && last_row >= x.height)
    return Error{fmt::format("maxpool2d_init: the last window row {} must be < X_h={} (no padding)",
                             last_row, x.height)};
  if (y.width > 0 && last_col >= x.width)
    return Error{
        fmt::format("maxpool2d_init: the last window column {} must be < X_w={} (no padding)",
                    last_col, x.width)};
  return WindowInit<MaxPlan>{MaxPlan{x, y, window}, std::move(*jobs)};
}

Status avgpool2d(std::span<int8_t> y, std::span<const int8_t> x, const AvgPlan& plan,
                 const PoolJob& job) {
  if (Status s = check_window_call(x.size(), y.size(), plan.x, plan.y, plan.window, job); !s)
    return s;
  const auto scale = static_cast<int8_t>(plan.scale);
  // The general path and the 2x2 path (taps (0,0), (0,1), (1,0), (1,1)) both accumulate the
  // window row-major from zero: no bias.
  for_each_window(plan.x, plan.y, plan.window, job, [&](size_t out, auto tap) {
    int32_t acc = 0;
    for (uint32_t i = 0; i < plan.window.height; ++i)
      for (uint32_t j = 0; j < plan.window.width; ++j)
        acc = vlmacc8(acc, scale, x[tap(i, j)], plan.accumulation);
    y[out] = average_output(acc, plan.shift, plan.saturation);
  });
  return Ok{};
}

Status maxpool2d(std::span<int8_t> y, std::span<const int8_t> x, const MaxPlan& plan,
                 const PoolJob& job) {
  if (Status s = check_window_call(x.size(), y.size(), plan.x, plan.y, plan.window, job); !s)
    return s;
  for_each_window(plan.x, plan.y, plan.window, job, [&](size_t out, auto tap) {
    int8_t current = -128;
    for (uint32_t i = 0; i < plan.window.height; ++i)
      for (uint32_t j = 0; j < plan.window.width; ++j) {
        const int8_t v = x[tap(i, j)];
        if (vlsub8(current, v) < 0) current = v;  // VLSUB, VDEPTH1 sign, masked store
      }
    y[out] = current;
  });
  return Ok{};
}

}  // namespace poolspec::xs3
