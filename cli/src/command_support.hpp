// What the commands share in their output: coordinates as text and numbers in JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "poolspec/dtype.hpp"

namespace poolspec::cli {

// "(n,c,o1,...)": the coordinate of the flat (row-major) element `flat` of a tensor of `shape`.
std::string coordinate_text(const std::vector<int64_t>& shape, size_t flat);

// A value of `dtype` as text, in the fewest digits that read back as the same value of that
// dtype: an f32 1.3333333730697632 is "1.3333334", an integer has no decimal point.
std::string value_text(DType dtype, double v);

// Text for a terminal is at most 100 columns wide. `text` wrapped at spaces into lines of at most
// `width` columns, the first starting at column `indent` (after the caller's label), the others
// indented by `indent` spaces. A word longer than a line is cut at the line's end (a problem
// string, which is copied into other commands, is the caller's to print whole).
inline constexpr size_t text_width = 100;
std::string wrap_words(std::string_view text, size_t indent, size_t width = text_width);

// Text from a file (a model's node names and attributes) made safe for a terminal: control
// characters (a newline, an escape sequence) are shown as \xNN.
std::string printable(std::string_view text);

// `text` in at most `room` columns: a longer one keeps its end, after "...".
std::string end_of(const std::string& text, size_t room);

// A text that may be empty, as JSON: null when it is (one spelling of "none" in every document).
nlohmann::json json_text_or_null(const std::string& text);

// JSON has no NaN or infinity: such values are written as the strings "nan", "inf", "-inf".
nlohmann::json json_number(double v);

// One JSON document on one line, on stdout (or `to`), with "schema": "poolspec.<schema>/1"
// (docs/json.md); text that is not UTF-8 (a file name) is replaced, never a throw.
void print_json(const std::string& schema, nlohmann::json j, std::FILE* to = stdout);

}  // namespace poolspec::cli
