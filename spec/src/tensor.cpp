#include "poolspec/tensor.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/number_domain.hpp"
#include "poolspec/problem.hpp"

namespace poolspec {

Result<int64_t> element_count(const std::vector<int64_t>& shape) {
  CheckedInt n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return Error{fmt::format("shape[{}]={}: dimensions must be >= 0", i, shape[i])};
    n = n * CheckedInt(shape[i]);
  }
  if (n.overflowed() || n.value() >= max_elements)
    return Error{
        fmt::format("shape ({}): the element count must be below 2^62", fmt::join(shape, ", "))};
  return n.value();
}

Result<Tensor> make_tensor(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  Result<int64_t> n = element_count(shape);
  if (!n) return n.error();
  if (static_cast<uint64_t>(*n) != values.size())
    return Error{fmt::format("tensor of shape ({}) needs {} values, got {}", fmt::join(shape, ", "),
                             *n, values.size())};
  for (size_t i = 0; i < values.size(); ++i)
    if (!representable(dtype, values[i]))
      return Error{
          fmt::format("value[{}]={}: not a value of dtype {}", i, values[i], dtype_name(dtype))};
  return Tensor{dtype, std::move(shape), std::move(values)};
}

bool same_value(DType dtype, double a, double b) {
  if (!is_float(dtype)) return a == b;
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

}  // namespace poolspec
