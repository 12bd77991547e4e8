#include "command_support.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace poolspec::cli {

std::string coordinate_text(const std::vector<int64_t>& shape, size_t flat) {
  std::vector<int64_t> c(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    c[i] = static_cast<int64_t>(flat % static_cast<size_t>(shape[i]));
    flat /= static_cast<size_t>(shape[i]);
  }
  return fmt::format("({})", fmt::join(c, ","));
}

nlohmann::json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void print_json(const nlohmann::json& j, std::FILE* to) { fmt::print(to, "{}\n", j.dump()); }

}  // namespace poolspec::cli
