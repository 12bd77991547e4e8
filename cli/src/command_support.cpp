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
  const size_t room = width > indent + 8 ? width - indent : 8;  // a line's columns after the indent
  std::string out;
  size_t column = 0;  // used on the current line, after the indent
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(' ', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(begin, end - begin);
    begin = end + 1;
    if (word.empty()) continue;
    if (column > 0 && column + 1 + word.size() > room) {
      out += "\n" + std::string(indent, ' ');
      column = 0;
    }
    if (column > 0) {
      out += ' ';
      ++column;
    }
    while (word.size() > room - column) {  // longer than a line: cut
      out += std::string(word.substr(0, room - column)) + "\n" + std::string(indent, ' ');
      word.remove_prefix(room - column);
      column = 0;
    }
    out += word;
    column += word.size();
  }
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

std::string end_of(const std::string& text, size_t room) {
  if (text.size() <= room || room < 4) return text;
  return "..." + text.substr(text.size() - (room - 3));
}

nlohmann::json json_text_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

void print_json(const std::string& schema, nlohmann::json j, std::FILE* to) {
  j["schema"] = json_schema(schema);
  fmt::print(to, "{}\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace poolspec::cli
