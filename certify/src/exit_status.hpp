// The exit status of every poolspec command, certify's included (docs/cli.md): 0 ok, 1 a check
// failed, 2 bad input; and how bad input is refused.
#pragma once

#include <cstdio>
#include <string>

#include <fmt/format.h>

namespace poolspec {

inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;
inline constexpr int exit_bad_input = 2;

// Prints "poolspec: error: <message>" on stderr and returns exit_bad_input.
inline int refuse(const std::string& message) {
  fmt::print(stderr, "poolspec: error: {}\n", message);
  return exit_bad_input;
}

}  // namespace poolspec
