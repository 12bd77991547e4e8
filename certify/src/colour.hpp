// Colour on a terminal only (docs/cli.md, "Output"): a stream is painted when it is a terminal,
// NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb". Files, pipes and CI logs get
// plain text, byte for byte the same as before colour existed.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <unistd.h>

namespace poolspec {

enum class Paint { failure, success };

inline bool colour_on(std::FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && *no_colour != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return isatty(fileno(stream)) == 1;
}

// `text` in the paint's colour (bold red for a failure or an error, green for a success) when
// `stream` is painted; else `text` as it is. Paint whole cells after padding them: the escape
// sequences take no columns on a terminal but count in a width.
inline std::string painted(std::FILE* stream, Paint paint, std::string_view text) {
  if (!colour_on(stream)) return std::string(text);
  const char* start = paint == Paint::failure ? "\x1b[1;31m" : "\x1b[32m";
  return std::string(start).append(text).append("\x1b[0m");
}

}  // namespace poolspec
