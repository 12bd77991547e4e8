// Deliberately broken variants of the optimized engine, which the differential tests, the fuzzer
// and certify must catch (docs/design.md §9). For the tests only: this folder is on the include
// path of the build tree's targets, and nothing here is installed.
#pragma once

#include "poolspec/optimized/optimized.hpp"

namespace poolspec::optimized {

// window_edge: a border window loses its last in-bounds tap along the last spatial axis;
// border_divisor: an exclude-padding border window along that axis is divided by the full kernel
// instead of its in-bounds taps. Construct with OptimizedEngine(only_kernel, mutation).
enum class Mutation : int { none, window_edge, border_divisor };

}  // namespace poolspec::optimized
