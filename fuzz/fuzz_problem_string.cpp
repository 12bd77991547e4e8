// fuzz_problem_string: the problem-string parser and printer (spec/src/problem_string.cpp).
//
// Targets: parse_problem on arbitrary text, format_problem, and validate / infer_shape on
// whatever parses.
// Input: the bytes as text (a dictionary of the grammar's tokens helps: fuzz_problem_string.dict).
// Oracle:
//   - malformed text is refused with an error, never a crash, leak or UB (ASan, UBSan);
//   - what parses prints to a canonical string that is a fixed point: parse(format(p)) == p
//     (for every p whose divisor_override is set exactly when its divisor is override: a rule of
//     validate) and format(parse(format(p))) == format(p).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace {

[[noreturn]] void fail(std::string_view text, const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_problem_string: FAILURE\ninput: %.*s\n%s\n", int(text.size()),
               text.data(), what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  poolspec::Result<poolspec::Problem> p = poolspec::parse_problem(text);
  if (!p) return 0;
  const std::string canonical = poolspec::format_problem(*p);
  poolspec::Result<poolspec::Problem> again = poolspec::parse_problem(canonical);
  if (!again)
    fail(text, "its canonical string does not parse: " + canonical + ": " + again.error().message);
  const bool override_consistent =
      (p->divisor == poolspec::Divisor::override_value) == (p->divisor_override != 0);
  if (override_consistent && !(*again == *p))
    fail(text, "parse(format(p)) != p; format(p) = " + canonical +
                   ", format(parse(format(p))) = " + poolspec::format_problem(*again));
  if (poolspec::format_problem(*again) != canonical)
    fail(text,
         "format is not a fixed point: " + canonical + " -> " + poolspec::format_problem(*again));
  // Whatever parses may be invalid; validate and infer_shape must say so cleanly.
  (void)poolspec::infer_shape(*p);
  (void)poolspec::validate(*p);
  return 0;
}
