// A dense tensor in row-major (C) order. Values are held as doubles: every value of every dtype
// is exactly a double (i32 included), so no conversion inside the spec can lose information.
#pragma once

#include <cstdint>
#include <vector>

#include "poolspec/dtype.hpp"
#include "poolspec/result.hpp"

namespace poolspec {

struct Tensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<double> values;
  bool operator==(const Tensor&) const = default;  // note: NaN != NaN, use same_bits() to compare
};

// Element count of a shape, overflow-checked (every count must stay below 2^62).
Result<int64_t> element_count(const std::vector<int64_t>& shape);

// Builds a tensor after checking that the values fit the shape and are values of the dtype.
Result<Tensor> make_tensor(DType dtype, std::vector<int64_t> shape, std::vector<double> values);

// Bitwise identity of two values as the dtype stores them (NaN == NaN, -0 != +0).
bool same_value(DType dtype, double a, double b);

}  // namespace poolspec
