#include "command_support.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exit_status.hpp"

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

std::string value_text(DType dtype, double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);  // nan, inf, -inf
  switch (dtype) {
    case DType::f64: return fmt::format("{}", v);
    case DType::f32:
    case DType::f16:  // f16 and bf16 values are f32 values: their shortest f32 text reads back
    case DType::bf16: return fmt::format("{}", static_cast<float>(v));
    case DType::i32:
    case DType::i8:
    case DType::u8: return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);
}

std::string wrap_words(std::string_view text, size_t indent, size_t width) {
  std::string out;
  size_t column = indent;
  bool line_empty = true;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(' ', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(begin, end - begin);
    begin = end + 1;
    if (word.empty()) continue;
    if (!line_empty && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out;
}

nlohmann::json json_text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

void print_json(const std::string& schema, nlohmann::json j, std::FILE* to) {
  j["schema"] = json_schema(schema);
  fmt::print(to, "{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace poolspec::cli
