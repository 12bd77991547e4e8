// Linked-in checks, C++ API (docs/design.md §6; the C API is check.h): verify an output a
// library computed against the reference -- all of it, or a sample of elements on a fraction of
// the calls, cheap enough to leave on -- and return the first mismatch. A Checker is
// thread-safe: its counters are atomic and each call draws its own samples.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "poolspec/engine.hpp"
#include "poolspec/engine_check.hpp"

namespace poolspec::reference {

struct CheckOptions {
  int64_t samples = 16;    // per checked call, half of them on the border; 0: every element
  double rate = 1.0 / 64;  // fraction of calls checked, spread evenly, in (0, 1]
  uint64_t seed = 0;
  ErrorBound bound;  // the caller's accuracy (engine.hpp); default: exact
};

struct CheckStats {
  int64_t calls = 0, checked_calls = 0, checked_elements = 0, mismatching_calls = 0;
};

class Checker {
 public:
  explicit Checker(CheckOptions options = {});
  // Ok(nullopt): not sampled, or all checked elements match. Ok(mismatch): the first one.
  // Error: the problem is invalid, a buffer is missing, or the options are out of range (a rate
  // outside (0, 1], negative samples). `indices` as in RunArgs.
  Result<std::optional<ElementMismatch>> check(const Problem& p, Layout layout,
                                               const std::byte* input, const std::byte* output,
                                               const int64_t* indices = nullptr);
  // The same with another caller bound (the C API's, derived per problem from an accumulation).
  Result<std::optional<ElementMismatch>> check_with_bound(const Problem& p, Layout layout,
                                                          const std::byte* input,
                                                          const std::byte* output,
                                                          const int64_t* indices,
                                                          const ErrorBound& bound);
  CheckStats stats() const;
  const CheckOptions& options() const { return options_; }

 private:
  CheckOptions options_;
  std::atomic<int64_t> calls_{0}, checked_calls_{0}, checked_elements_{0}, mismatching_calls_{0};
};

// The mismatch in words: the problem string, coordinate, expected, got, the allowed error.
std::string mismatch_text(const Problem& p, const ElementMismatch& m);

}  // namespace poolspec::reference
