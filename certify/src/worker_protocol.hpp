// What poolspec and a certification worker (worker_main.cpp) say to each other. One worker runs
// one backend library; poolspec sends requests over a SOCK_SEQPACKET socket (fd 3 in the worker)
// and the buffers the backend receives live in a memfd both processes map.
//
// The worker runs the backend's code, so nothing it says is trusted: every reply is checked
// field by field (worker.cpp), and every verdict is drawn from the shared buffers by poolspec
// itself (canaries, the input's bytes, the output's poisons), never from the worker's word.
#pragma once

#include <cstddef>
#include <cstdint>

#include "poolspec/backend.h"

namespace poolspec::certify::wire {

inline constexpr uint32_t magic = 0x50535700u;  // "PSW\0"
inline constexpr int channel_fd = 3;            // the socket, in the worker
inline constexpr int death_fd = 4;              // with a PID namespace: its init writes here
inline constexpr uint32_t max_backends = 64;    // per library
inline constexpr size_t max_text = 4096;        // problem strings
inline constexpr size_t name_bytes = 256, version_bytes = 512, rules_bytes = 64;
inline constexpr size_t message_bytes = 1024;  // the reason / message buffer a backend writes
// The worker's own exit statuses (a backend's exit() may give any other).
inline constexpr int exit_after_fault = 120, exit_bad_request = 121, exit_cannot_map = 122,
                     exit_no_status_page = 123, exit_cannot_fork = 124, exit_cannot_confine = 125;

// The four buffers of a call, in the memfd in this order, each in a region of whole pages, with a
// guard page before each region and after the last. The worker maps the span from the first guard
// to the last in one piece: guards without access, the input read-only. Inside a region the data
// sits near one end (a touch just past that end faults at once) and a random canary fills the rest
// of the region and the guard pages (poolspec checks them after the call: a backend that unprotects
// a guard and writes there shows too).
enum Buffer : uint32_t { input = 0, output = 1, indices = 2, message = 3, buffer_count = 4 };

struct Region {
  uint64_t offset = 0;  // in the memfd, page-aligned
  uint64_t size = 0;    // whole pages, > 0
  uint64_t data = 0;    // the data's offset inside the region
  uint64_t bytes = 0;   // the data's size (0: the buffer is not given: NULL)
};

// The first page of the memfd is the worker's own (not given to the backend): where it says
// which step it is in, for the report of a crash.
struct Status {
  uint32_t stage;  // Stage
  uint32_t calls;
};
enum Stage : uint32_t {
  idle = 0,
  loading = 1,
  supports = 2,
  accumulation_for = 3,
  run = 4,
  output_shape = 5
};

enum Kind : uint32_t { describe = 1, call = 2, fault = 3 };

struct Request {
  uint32_t magic_number = magic, sequence = 0, kind = 0, backend = 0;
  poolspec_problem problem{};  // `text` is ignored: the worker points it at `text` below
  char text[max_text]{};
  Region regions[buffer_count]{};
  uint64_t span_offset = 0, span_size = 0;  // the guards and regions, in the memfd
  uint64_t memfd_size = 0;
  int64_t cpu_seconds = 0;  // the CPU time this call may use (RLIMIT_CPU, set before the call)
  // 1: ask output_shape instead (the extents into the output buffer, spatial_rank int64s).
  uint32_t shape_question = 0;
};

struct BackendInfo {
  uint32_t abi_version = 0;
  uint8_t has_name = 0, has_version = 0, has_rules = 0, has_supports = 0, has_run = 0,
          has_accumulation_for = 0, has_output_shape = 0;
  uint8_t name_truncated = 0, version_truncated = 0, rules_truncated = 0;
  char name[name_bytes]{}, version[version_bytes]{}, rules[rules_bytes]{};
  poolspec_accumulation accumulation{};
};

// The reply to `call` (and, from the worker's fault handler, `fault`).
struct Reply {
  uint32_t magic_number = magic, sequence = 0, kind = 0;
  // call: supports' return, then (when 1) the accumulation declared for the problem
  // (accumulation_for's, or the struct's) and run's return; a shape question: output_shape's
  // return in `supported`.
  int32_t supported = 0, run_status = 0;
  poolspec_accumulation accumulation{};
  // fault: the buffer whose guard was touched (-1: none of them) and where, from the data's
  // start; `write` 1 when it was a write into the read-only input.
  int32_t fault_buffer = -1, write = 0;
  int64_t fault_offset = 0;
  // call: pages of the span the backend unmapped (the buffer, or buffer_count: a guard page), -1
  // none.
  int32_t unmapped = -1;
};

// The reply to `describe`: the library loaded and its entry asked for every backend.
struct Description {
  uint32_t magic_number = magic, sequence = 0, kind = describe;
  // How many backends the entry gave (max_backends + 1: more than allowed), or -1 when the
  // library could not be loaded (`detail` says why).
  int32_t count = 0;
  uint8_t pid_namespace = 0;  // the worker is the first child of its namespace's PID 1
  char detail[512]{};
  BackendInfo backends[max_backends + 1]{};
};

}  // namespace poolspec::certify::wire
