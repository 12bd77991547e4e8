// An XS3 operator as lib_nn's API names it, and running it on the model: init (with the given
// job split, or one job), then every job. Input and output are (H, W, C) int8 tensors; the global
// op's output is (1, 1, C). The xs3 front-end (frontends/) parses `--xs3` attributes into one.
#pragma once

#include <cstdint>
#include <span>

#include "poolspec/tensor.hpp"
#include "poolspec/xs3/pooling.hpp"

namespace poolspec {

// XS3 (lib_nn) operators: `op=avgpool2d_global bias=-40 symmetric=0`,
// `op=avgpool2d window=3,3 start=0,0 stride=2,2 [output=H,W]`, `op=maxpool2d ...` on an (H, W, C)
// int8 image. Also: scale=, shift= (avgpool2d_global through the later API, where the caller
// passes them), accumulate=saturate|wrap (the assembly's per-step saturation, or the C reference).
struct Xs3Operator {
  enum class Kind { avgpool2d_global, avgpool2d, maxpool2d };
  Kind kind = Kind::avgpool2d_global;
  int64_t height = 0, width = 0, channels = 0;  // X
  int64_t bias = 0;                             // avgpool2d_global
  bool symmetric = false;
  bool wrap = false;             // accumulate=wrap
  bool has_scale_shift = false;  // later API: caller's scale and shift
  int64_t scale = 0, shift = 0;
  int64_t window_h = 0, window_w = 0, start_row = 0, start_col = 0, stride_v = 1, stride_h = 1;
  int64_t out_h = 1, out_w = 1;  // Y rows and columns
};

}  // namespace poolspec

namespace poolspec::xs3 {

Config config_of(const Xs3Operator& op);

Result<Tensor> run_operator(const Xs3Operator& op, const Tensor& hwc,
                            std::span<const GlobalJobParams> global_jobs = {},
                            std::span<const WindowJobParams> window_jobs = {});

}  // namespace poolspec::xs3
