// Runs an XS3 operator parsed by the spec's xs3 front-end on the model: init (with the given
// job split, or one job), then every job. Input and output are (H, W, C) int8 tensors; the global
// op's output is (1, 1, C).
#pragma once

#include <span>

#include "poolspec/frontends.hpp"
#include "poolspec/tensor.hpp"
#include "poolspec/xs3/pooling.hpp"

namespace poolspec::xs3 {

Config config_of(const Xs3Operator& op);

Result<Tensor> run_operator(const Xs3Operator& op, const Tensor& hwc,
                            std::span<const GlobalJobParams> global_jobs = {},
                            std::span<const WindowJobParams> window_jobs = {});

}  // namespace poolspec::xs3
