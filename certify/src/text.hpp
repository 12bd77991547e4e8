// Text that came from a backend (names, versions, reasons, messages), made safe to show: valid
// UTF-8, one line, no terminal control; and arguments quoted for a POSIX shell.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace poolspec::certify {

// `s` as valid UTF-8 with every control character (C0, DEL, C1), line separator and
// bidirectional override written as \xNN or \u{NNNN} and every byte of an invalid sequence as
// \xNN; cut after `max_bytes` bytes of `s` with a note of how many more there were.
std::string printable(std::string_view s, size_t max_bytes = 2048);

// `s` as one word for sh: as is when it holds only [A-Za-z0-9_@%+=:,./-] (and is not empty),
// else in single quotes with each ' written '\''.
std::string shell_quoted(std::string_view s);

}  // namespace poolspec::certify
