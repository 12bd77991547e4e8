// The exit status of every poolspec command, certify's included (docs/cli.md): 0 ok, 1 a check
// failed, 2 bad input; and how bad input is refused.
#pragma once

#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "colour.hpp"

namespace poolspec {

inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;
inline constexpr int exit_bad_input = 2;

// Every JSON document a command prints (and certify's report.json) names its schema,
// "poolspec.<name>/<version>" (docs/json.md): the version grows when a key changes meaning or
// goes away; new keys may appear within a version.
inline constexpr int json_schema_version = 1;
inline std::string json_schema(const std::string& name) {
  return fmt::format("poolspec.{}/{}", name, json_schema_version);
}

// Whether the command was asked for JSON (--json): its refusal is then a JSON document on stdout
// too, {"schema": "poolspec.error/1", "error": {"message": "...", "exit_code": 2}}, so a program
// reading stdout always gets JSON. Set once by main before any command runs.
inline bool& errors_as_json() {
  static bool on = false;
  return on;
}

// Prints "poolspec: error: <message>" on stderr (and the JSON document above on stdout when
// asked for) and returns exit_bad_input.
inline int refuse(const std::string& message) {
  fmt::print(stderr, "poolspec: {} {}\n", painted(stderr, Paint::failure, "error:"), message);
  if (errors_as_json()) {
    const nlohmann::json error = {{"schema", json_schema("error")},
                                  {"error", {{"exit_code", exit_bad_input}, {"message", message}}}};
    // A message may quote a file name that is not UTF-8: replaced, never a throw.
    fmt::print("{}\n", error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return exit_bad_input;
}

}  // namespace poolspec
