// One backend call in its own process (DESIGN.md section 6): a crash, a hang, or a write outside
// the output becomes an outcome, and the run goes on. The child is forked for the call; input,
// output and indices live in shared memory between pages the child may not touch (a write there
// faults at once), the input is read-only in the child, and the bytes between a buffer and its
// guard pages are filled with a pattern that is checked afterwards.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "poolspec/backend.h"

namespace poolspec::certify {

struct CallResult {
  enum class Outcome {
    ran,            // run returned 0
    unsupported,    // supports said no: `message` is the reason
    run_error,      // run returned nonzero: `message` is its message
    crash,          // a signal (other than at a guard) or an unexpected exit
    hang,           // past the time limit, killed
    out_of_bounds,  // touched a guard page or guard byte, or wrote into its input
  };
  Outcome outcome = Outcome::ran;
  std::string message;
  std::vector<std::byte> output;  // as the backend left it
  std::vector<int64_t> indices;
  poolspec_accumulation accumulation{};
};

struct CallSpec {
  std::span<const std::byte> input;
  size_t output_bytes = 0;
  size_t index_count = 0;  // 0: no indices buffer
  std::byte poison{0xA5};  // every output byte before the call (and 0xA5.. in the indices)
  std::chrono::milliseconds timeout{10000};
};

// supports, accumulation_for and run, in a child process.
CallResult call_isolated(const poolspec_backend& backend, const poolspec_problem& problem, const CallSpec& spec);

}  // namespace poolspec::certify
