#include "text.hpp"

#include <fmt/format.h>

namespace poolspec::certify {

namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates, at
// most U+10FFFF), or 0; its code point in *cp.
size_t utf8_sequence(std::string_view s, size_t i, char32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t n = 0;
  char32_t c = 0, least = 0;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, c = b0 & 0x1F, least = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, c = b0 & 0x0F, least = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, c = b0 & 0x07, least = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  if (c < least || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return n;
}

bool shown_escaped(char32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E ||
         c == 0x200F || c == 0x061C || c == 0xFEFF;
}

}  // namespace

std::string printable(std::string_view s, size_t max_bytes) {
  std::string out;
  const size_t end = std::min(s.size(), max_bytes);
  size_t i = 0;
  while (i < end) {
    char32_t cp = 0;
    const size_t n = utf8_sequence(s, i, &cp);
    if (n == 0 || i + n > end) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      ++i;
    } else if (shown_escaped(cp)) {
      out += cp < 0x100 ? fmt::format("\\x{:02x}", static_cast<unsigned>(cp))
                        : fmt::format("\\u{{{:04x}}}", static_cast<unsigned>(cp));
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (s.size() > end) out += fmt::format("... ({} more bytes)", s.size() - end);
  return out;
}

std::string shell_quoted(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      std::string_view("_@%+=:,./-").find(c) != std::string_view::npos);
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace poolspec::certify
