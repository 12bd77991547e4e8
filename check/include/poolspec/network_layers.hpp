// The pooling layers of real networks, at batch 1, as problems: the certify suites' `topologies`
// part runs every one (docs/testing.md §10), and the benchmark times those it is marked for beside
// its six headline workloads (docs/benchmarks.md §2).
#pragma once

#include <span>
#include <string_view>

namespace poolspec {

struct NetworkLayer {
  std::string_view name;     // "v3_stem_max1": the suite's case and the benchmark's workload
  std::string_view network;  // where it comes from
  std::string_view problem;  // a problem string, batch 1, f32
  bool benchmarked = false;  // timed by poolspec_bench
};

std::span<const NetworkLayer> network_layers();

}  // namespace poolspec
