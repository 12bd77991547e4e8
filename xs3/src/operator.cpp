#include "poolspec/xs3/operator.hpp"

#include <fmt/format.h>

namespace poolspec::xs3 {

Config config_of(const Xs3Operator& op) {
  return Config{op.symmetric, op.wrap ? Accumulation::wrap : Accumulation::saturate};
}

Result<Tensor> run_operator(const Xs3Operator& op, const Tensor& hwc,
                            std::span<const GlobalJobParams> global_jobs,
                            std::span<const WindowJobParams> window_jobs) {
  if (hwc.dtype != DType::i8 || hwc.shape != std::vector<int64_t>{op.height, op.width, op.channels})
    return Error{fmt::format("input: XS3 operators take the (H, W, C) = ({}, {}, {}) int8 image",
                             op.height, op.width, op.channels)};
  std::vector<int8_t> x(hwc.values.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int8_t>(hwc.values[i]);
  const ImageParams x_params{static_cast<uint32_t>(op.height), static_cast<uint32_t>(op.width),
                             static_cast<uint32_t>(op.channels)};
  const Config config = config_of(op);
  std::vector<int8_t> y;
  std::vector<int64_t> y_shape;

  if (op.kind == Xs3Operator::Kind::avgpool2d_global) {
    y.assign(static_cast<size_t>(op.channels), 0);
    y_shape = {1, 1, op.channels};
    if (op.has_scale_shift) {
      if (Status s = avgpool2d_global_scaled(y, x, static_cast<int32_t>(op.bias),
                                             static_cast<int8_t>(op.scale),
                                             static_cast<uint16_t>(op.shift), x_params, config);
          !s)
        return s.error();
    } else {
      Result<GlobalInit> init = avgpool2d_global_init(x_params, global_jobs, config);
      if (!init) return init.error();
      for (const GlobalJob& job : init->jobs)
        if (Status s = avgpool2d_global(y, x, static_cast<int32_t>(op.bias), init->plan, job); !s)
          return s.error();
    }
  } else {
    const ImageParams y_params{static_cast<uint32_t>(op.out_h), static_cast<uint32_t>(op.out_w),
                               static_cast<uint32_t>(op.channels)};
    const WindowParams window{
        static_cast<uint32_t>(op.window_h), static_cast<uint32_t>(op.window_w),
        static_cast<int32_t>(op.start_row), static_cast<int32_t>(op.start_col),
        static_cast<int32_t>(op.stride_v),  static_cast<int32_t>(op.stride_h)};
    y.assign(static_cast<size_t>(op.out_h * op.out_w * op.channels), 0);
    y_shape = {op.out_h, op.out_w, op.channels};
    if (op.kind == Xs3Operator::Kind::avgpool2d) {
      Result<WindowInit<AvgPlan>> init =
          avgpool2d_init(x_params, y_params, window, window_jobs, config);
      if (!init) return init.error();
      for (const PoolJob& job : init->jobs)
        if (Status s = avgpool2d(y, x, init->plan, job); !s) return s.error();
    } else {
      Result<WindowInit<MaxPlan>> init = maxpool2d_init(x_params, y_params, window, window_jobs);
      if (!init) return init.error();
      for (const PoolJob& job : init->jobs)
        if (Status s = maxpool2d(y, x, init->plan, job); !s) return s.error();
    }
  }
  Tensor out{DType::i8, y_shape, std::vector<double>(y.size())};
  for (size_t i = 0; i < y.size(); ++i) out.values[i] = y[i];
  return out;
}

}  // namespace poolspec::xs3
