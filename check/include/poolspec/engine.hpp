// The engine interface (docs/design.md §4, §5). An engine computes a Problem on tensors held
// in the dtype's own storage, in one of two layouts; it may refuse a problem with a reason, and it
// declares how far its float averages may be from the spec. The in-tree engines (reference/,
// optimized/) implement it, so one test body, one benchmark loop and one comparison serve all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec {

// Where the channel axis sits in memory. The spec's own order is channels_first, (N, C, d1..dn)
// ("nchw", "ncdhw"); channels_last is (N, d1..dn, C) ("nhwc", "ndhwc"). Both are dense.
enum class Layout { channels_first, channels_last };
inline constexpr Layout all_layouts[] = {Layout::channels_first, Layout::channels_last};
std::string_view layout_name(Layout layout);  // "nchw" / "nhwc" (for every rank)

// Storage of one element: f64 double, f32 float, f16 / bf16 their 16 bits, i32 int32_t,
// i8 int8_t, u8 uint8_t; native byte order. Indices are int64_t.
double load_element(DType dtype, const std::byte* at);
void store_element(DType dtype, double representable_value, std::byte* at);

// Where element `flat` (in spec order) of a tensor of spec shape (N, C, d1..dn) sits in `layout`.
int64_t storage_position(const std::vector<int64_t>& spec_shape, int64_t flat, Layout layout);

// A tensor of the spec's (N, C, d1..dn) shape, written in storage form in a layout, and back.
std::vector<std::byte> to_storage(const Tensor& t, Layout layout);
Tensor from_storage(DType dtype, const std::vector<int64_t>& spec_shape, Layout layout,
                    std::span<const std::byte> bytes);

// An engine's declared accuracy (docs/design.md §5). Max results and integer averages must be
// bit-exact. A float average with window absolute sum A = sum |x| + |bias| and divisor d may differ
// from the spec's correctly rounded value y by at most
//     gamma(operations) * A / d  +  operations * underflow  +  output_ulps * ulp(y)
// with gamma(n) = n u / (1 - n u) for the accumulation's unit roundoff u: the standard bound for
// n roundings in precision u (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1),
// plus each rounding's absolute error in the subnormal range, plus the final rounding into the
// output format. Where A reaches `overflow_threshold` the accumulation may overflow, and the
// element is outside the engine's declared range (counted, not judged).
struct ErrorBound {
  bool exact = true;              // float averages are correctly rounded too
  int64_t operations = 0;         // roundings on the path from the inputs to the quotient
  double unit_roundoff = 0;       // of the accumulation format
  double underflow = 0;           // half the accumulation format's smallest subnormal
  double output_ulps = 0;         // the last rounding into the output dtype, in its ulps
  double overflow_threshold = 0;  // 0: none (the accumulation cannot overflow)
  std::string accumulation;       // how the engine sums, in words (printed with failures)
  // Integer averages: the allowed |got - exact| (0: bit-exact). An approximate integer divide
  // declares it, such as XS3's scale-and-shift for window sizes that are not powers of two.
  int64_t integer_units = 0;
};

// The bound for a float average accumulated in `accumulation` (f64 or f32) with `operations`
// roundings, result rounded once more into `output` (output_ulps 0.5 when the quotient is
// computed in the output format itself, 1 when it is rounded into it from a wider one).
ErrorBound sum_bound(DType accumulation, int64_t operations, double output_ulps,
                     std::string description);

// The allowed |got - y| for one element (y finite), per the formula above.
double allowed_error(const ErrorBound& bound, DType output, double abs_sum, int64_t divisor,
                     double y);

// The part of allowed_error before the last rounding into the output: how far the value the engine
// rounds may lie from y. 0 when the window's absolute sum is 0: sums of zeros are exact (up to the
// sign, zero_within).
double reach_before_last_rounding(const ErrorBound& bound, DType output, double abs_sum,
                                  int64_t divisor, double y);

// ulp(y) in a float dtype: the gap between the two representable values around |y|.
double ulp_of(DType dtype, double y);

// The buffers of one call. `indices` only for max problems with indices (else null); they hold the
// spec's index values (which do not depend on the layout), stored in the output's layout.
struct RunArgs {
  const std::byte* input = nullptr;
  std::byte* output = nullptr;
  int64_t* indices = nullptr;
  int threads = 1;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string_view name() const = 0;
  // Ok, or an Error whose message is the reason the engine refuses the problem in this layout.
  virtual Status supports(const Problem& p, Layout layout) const = 0;
  virtual ErrorBound error_bound(const Problem& p, Layout layout) const = 0;
  // Validates the problem, then computes. Writes every output element and nothing else.
  virtual Status run(const Problem& p, Layout layout, const RunArgs& args) const = 0;
};

}  // namespace poolspec
