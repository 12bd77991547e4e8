// poolspec's side of a certification worker (worker_main.cpp): one process per backend, started
// from the poolspec-worker program in a session (and, where the kernel allows, a PID namespace)
// of its own, under resource limits, its output captured to a log. Calls run in it one after
// another, as a program calls a library. A worker that crashes, hangs or is stopped is killed
// with everything it started; the caller starts a fresh one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "poolspec/backend.h"
#include "poolspec/result.hpp"

namespace poolspec::certify {

struct WorkerConfig {
  std::string program;  // the poolspec-worker executable
  std::string library;  // a shared library's absolute path, or "built-in"
  std::string log;      // the backend's stdout and stderr, through poolspec, go here (appended)
  std::chrono::milliseconds load_timeout{30000};
  int64_t memory_limit_mb = 16384;  // address space the worker may add after it starts
  int64_t cpu_limit_s = 60;         // CPU time per call
  bool pid_namespace = true;        // when the kernel allows it
  // Set in the worker's environment unless poolspec's own sets them ("NAME=value").
  std::vector<std::string> environment_defaults;
};

// One backend as the worker's loader saw it, checked (text made printable).
struct BackendDescription {
  uint32_t index = 0;
  std::string name, version, rules;
  poolspec_accumulation accumulation{};
  bool has_accumulation_for = false;
  bool has_output_shape = false;  // version 2's output_shape given
};

// A library's backends, or why it could not be loaded (what the load did: a crash, an exit, a
// hang past the load limit, dlopen's message, a refused declaration).
struct LibraryDescription {
  std::vector<BackendDescription> backends;
  std::string load_error;      // empty: loaded
  bool pid_namespace = false;  // its worker ran in a PID namespace of its own
};

// A call's buffers, as poolspec lays them out for the backend.
struct CallBuffers {
  std::span<const std::byte> input;
  size_t output_bytes = 0;
  size_t index_count = 0;  // 0: indices NULL
  uint64_t seed = 0;       // the canaries of this call
  uint64_t poison = 0;     // every output and index byte before the call, by position mod 8
  // The data against the guard page after it; else one element (element_bytes) after the guard
  // page before it, so that it starts misaligned.
  bool flush_end = true;
  size_t element_bytes = 1;
  // output_shape's question instead of supports and run: the output buffer takes the extents
  // (output_bytes = spatial_rank * 8, element_bytes 8), the input and indices are empty.
  bool shape_question = false;
};

struct CallOutcome {
  enum class Kind {
    ran,            // run returned 0
    unsupported,    // supports (or output_shape) returned 0: `message` is the reason
    bad_supports,   // supports (or output_shape) returned neither 0 nor 1
    run_error,      // run returned nonzero: `message`
    crash,          // the worker died (signal, exit) or broke the protocol
    hang,           // past the time limit (wall clock or CPU): killed
    out_of_bounds,  // touched a guard, changed a canary, or wrote into its input
  };
  Kind kind = Kind::ran;
  std::string message;  // printable
  poolspec_accumulation accumulation{};
  std::vector<std::byte> output;  // as the backend left it (ran, run_error, out_of_bounds)
  std::vector<int64_t> indices;
  std::vector<std::byte> output_poison;  // one element's poison, repeated over the output
  int64_t index_poison = 0;
};

class Worker {
 public:
  // Starts the worker process (not yet loading the library).
  static Result<std::unique_ptr<Worker>> start(const WorkerConfig& config);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Loads the library in the worker and lists its backends, under the load limit. After a load
  // error the worker is gone.
  LibraryDescription describe();
  // supports, accumulation_for and run of backend `index`, under the time limit.
  CallOutcome call(uint32_t index, const poolspec_problem& problem, const CallBuffers& buffers,
                   std::chrono::milliseconds timeout);
  bool alive() const { return alive_; }
  // Ends the worker and every process it started.
  void stop();

 private:
  explicit Worker(WorkerConfig config) : config_(std::move(config)) {}
  enum class Wait { reply, died, broken, timeout };
  Wait wait_for_reply(void* reply, size_t size, std::chrono::milliseconds timeout);
  bool send_request(const void* request, size_t size);
  std::string death_text();
  bool ensure_size(uint64_t bytes);

  void drain_log(bool until_closed);

  WorkerConfig config_;
  int pid_ = -1, socket_ = -1, death_ = -1, memfd_ = -1, log_pipe_ = -1, log_ = -1;
  std::byte* shared_ = nullptr;
  uint64_t shared_size_ = 0;
  uint32_t sequence_ = 0;
  bool alive_ = false;
  std::optional<int> worker_status_;
};

// The backends' logs: at most this many bytes each, whatever the number of its workers; the rest
// is dropped with a note.
inline constexpr int64_t log_limit_bytes = int64_t{16} << 20;
// Forgets what was written to the logs (a new run).
void reset_logs();

// Kills every process poolspec has adopted (a backend's orphans, when no PID namespace held
// them) and not a live worker's. Called after every worker's end.
void sweep_orphans();

}  // namespace poolspec::certify
