// What the kernel files share outside their SIMD code: the limits every kernel has, the pieces
// their `accepts` predicates are made of, and the SIMD targets the kernels are compiled for. Each
// kernel file (kernels/<family>.cpp) defines its KernelInfo; kernels/kernel_list.cpp holds the
// list, in dispatch order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/problem.hpp"

namespace poolspec::optimized {

// Defined in kernels/kernel_list.cpp, beside the list.
// What every kernel needs of a problem (the arithmetic argument in kernels/simd-inl.h): dtype
// f32, f16, bf16, i8 or u8; 1 to 3 spatial axes; bias 0; planes indexed in 32 bits; an f32 divisor
// below 2^24 and integer sums below 2^23.
Status common_limits(const Problem& p);

int64_t taps_of(const Problem& p);                          // prod(kernel)
int64_t output_extent_of(const Problem& p, const Axis& a);  // the axis's output extent
Status wants(bool condition, std::string_view what);        // Ok, or Error{what}

// avg_nchw's and max_nchw's scratch per thread: four rows of the padded input row's length.
Status row_scratch_limit(const Problem& p);

// Whether max_nchw takes the problem at storage width: i8 or u8 max at stride 1 or 2 along W.
bool max_nchw_at_storage_width(const Problem& p);

// The kernel whose plan holds a second one, for its 16-plane block (optimized.cpp plans it).
namespace kernels {
extern const KernelInfo blocked_nchw;
}  // namespace kernels

// avg_nchw's entry, which avg_int8_nchw runs on the targets without AVX-512.
void run_avg_nchw(const Plan& plan, const RunArgs& args);

// The SIMD target the kernels dispatch to (e.g. "AVX3"); the compiled targets this CPU supports,
// best first; restrict dispatch to one of them ("" restores every target).
std::string dispatched_target();
std::vector<std::string> compiled_targets();
bool restrict_target(std::string_view name);

}  // namespace poolspec::optimized
