#include "isolate.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace poolspec::certify {

namespace {

constexpr std::byte guard_fill{0xC5};
constexpr int out_of_bounds_exit = 86;  // the child's exit status after a fault at a guard

size_t page_size() {
  static const auto size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
size_t round_up(size_t n) { return (std::max<size_t>(n, 1) + page_size() - 1) / page_size() * page_size(); }

// [no-access page][slack | data][no-access page], shared with the child: the data ends where the
// second guard page begins, so a write one past it faults; a write before it lands in the slack.
class GuardedBuffer {
 public:
  GuardedBuffer(size_t bytes, const char* what) : bytes_(bytes), body_(round_up(bytes)), what_(what) {
    mapped_ = body_ + 2 * page_size();
    void* m = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<std::byte*>(m);
    mprotect(base_, page_size(), PROT_NONE);
    mprotect(base_ + page_size() + body_, page_size(), PROT_NONE);
    data_ = base_ + page_size() + body_ - bytes_;
    std::fill(base_ + page_size(), data_, guard_fill);
  }
  ~GuardedBuffer() {
    if (base_) munmap(base_, mapped_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  bool ok() const { return base_ != nullptr; }
  std::byte* data() const { return data_; }
  const char* what() const { return what_; }
  bool in_guard_page(const void* at) const {
    const auto* a = static_cast<const std::byte*>(at);
    return base_ && ((a >= base_ && a < base_ + page_size()) ||
                     (a >= base_ + page_size() + body_ && a < base_ + mapped_));
  }
  bool in_body(const void* at) const {
    const auto* a = static_cast<const std::byte*>(at);
    return base_ && a >= base_ + page_size() && a < base_ + page_size() + body_;
  }
  // Bytes of the slack before the data that no longer hold the fill.
  size_t slack_changed() const {
    size_t changed = 0;
    for (const std::byte* b = base_ + page_size(); b < data_; ++b) changed += *b != guard_fill;
    return changed;
  }
  void make_read_only() const { mprotect(base_ + page_size(), body_, PROT_READ); }

 private:
  std::byte* base_ = nullptr;
  std::byte* data_ = nullptr;
  size_t bytes_, body_, mapped_ = 0;
  const char* what_;
};

// What the child leaves for the parent, in a shared page.
struct Shared {
  int32_t stage;  // 1 supports, 2 accumulation_for, 3 run, 4 done
  int32_t supported;
  int32_t run_status;
  int32_t fault;  // which guard: 1 input, 2 output, 3 indices; 4 a write into the input
  poolspec_accumulation accumulation;
  char message[2048];
};

// The child's view, for its fault handler (set before fork, read only in the child).
const GuardedBuffer* fault_buffers[3];
Shared* fault_shared;

void on_fault(int signal_number, siginfo_t* info, void*) {
  for (int i = 0; i < 3; ++i) {
    const GuardedBuffer* b = fault_buffers[i];
    if (!b) continue;
    if (b->in_guard_page(info->si_addr)) {
      fault_shared->fault = i + 1;
      _exit(out_of_bounds_exit);
    }
    if (i == 0 && b->in_body(info->si_addr)) {  // the input is mapped read-only
      fault_shared->fault = 4;
      _exit(out_of_bounds_exit);
    }
  }
  signal(signal_number, SIG_DFL);  // any other fault: returning re-raises it with the default action
}

[[noreturn]] void child(const poolspec_backend& b, const poolspec_problem& problem, Shared* shared,
                        const GuardedBuffer& input, const GuardedBuffer& output, const GuardedBuffer* indices) {
  // The default action for every fatal signal: a host's handlers (a test framework's, a
  // sanitizer's) must not turn the backend's crash into their own report.
  for (int sig : {SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGTERM, SIGXCPU, SIGXFSZ}) signal(sig, SIG_DFL);
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
  input.make_read_only();
  shared->stage = 1;
  shared->supported = b.supports(&b, &problem, shared->message, sizeof shared->message);
  if (shared->supported != 1) {
    shared->stage = 4;
    _exit(0);
  }
  shared->stage = 2;
  shared->accumulation = b.accumulation;
  if (b.accumulation_for) b.accumulation_for(&b, &problem, &shared->accumulation);
  shared->stage = 3;
  shared->message[0] = '\0';
  shared->run_status = b.run(&b, &problem, input.data(), output.data(),
                             indices ? reinterpret_cast<int64_t*>(indices->data()) : nullptr, shared->message,
                             sizeof shared->message);
  shared->stage = 4;
  _exit(0);
}

const char* stage_name(int32_t stage) {
  switch (stage) {
    case 1: return "supports";
    case 2: return "accumulation_for";
    case 3: return "run";
    default: return "loading";
  }
}

// Waits for the child up to the limit: true if it ended (and reaped into *status).
bool wait_for(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const long pidfd = syscall(SYS_pidfd_open, pid, 0);
  if (pidfd >= 0) {
    pollfd p{static_cast<int>(pidfd), POLLIN, 0};
    int r;
    do {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      r = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    } while (r < 0 && errno == EINTR);
    close(static_cast<int>(pidfd));
    if (r == 0) return false;
    return waitpid(pid, status, 0) == pid;
  }
  while (std::chrono::steady_clock::now() < deadline) {  // kernels without pidfd_open
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

}  // namespace

CallResult call_isolated(const poolspec_backend& b, const poolspec_problem& problem, const CallSpec& spec) {
  CallResult r;
  GuardedBuffer input(spec.input.size(), "input"), output(spec.output_bytes, "output"),
      indices(spec.index_count * sizeof(int64_t), "indices");
  void* shared_page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (!input.ok() || !output.ok() || !indices.ok() || shared_page == MAP_FAILED) {
    if (shared_page != MAP_FAILED) munmap(shared_page, sizeof(Shared));
    r.outcome = CallResult::Outcome::run_error;
    r.message = "poolspec could not map the buffers for this problem (too large?)";
    return r;
  }
  auto* shared = new (shared_page) Shared{};
  std::copy(spec.input.begin(), spec.input.end(), input.data());
  std::fill(output.data(), output.data() + spec.output_bytes, spec.poison);
  std::fill(indices.data(), indices.data() + spec.index_count * sizeof(int64_t), spec.poison);
  fault_buffers[0] = &input;
  fault_buffers[1] = &output;
  fault_buffers[2] = spec.index_count ? &indices : nullptr;
  fault_shared = shared;

  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) child(b, problem, shared, input, output, spec.index_count ? &indices : nullptr);
  int status = 0;
  if (pid < 0) {
    r.outcome = CallResult::Outcome::run_error;
    r.message = fmt::format("fork failed: {}", std::strerror(errno));
  } else if (!wait_for(pid, spec.timeout, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    r.outcome = CallResult::Outcome::hang;
    r.message = fmt::format("still in {} after {} ms: killed", stage_name(shared->stage), spec.timeout.count());
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == out_of_bounds_exit) {
    r.outcome = CallResult::Outcome::out_of_bounds;
    const char* where[] = {"", "read or wrote the page before or after its input",
                           "wrote (or read) the page before or after its output",
                           "touched the page before or after its indices", "wrote into its input"};
    r.message = fmt::format("in {}: {}", stage_name(shared->stage), where[std::clamp(shared->fault, 0, 4)]);
  } else if (WIFSIGNALED(status)) {
    r.outcome = CallResult::Outcome::crash;
    r.message = fmt::format("{} in {}", strsignal(WTERMSIG(status)), stage_name(shared->stage));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || shared->stage != 4) {
    r.outcome = CallResult::Outcome::crash;
    r.message = fmt::format("the process exited with status {} in {}", WEXITSTATUS(status), stage_name(shared->stage));
  } else {
    shared->message[sizeof shared->message - 1] = '\0';
    r.message = shared->message;
    r.accumulation = shared->accumulation;
    if (shared->supported != 1) {
      r.outcome = CallResult::Outcome::unsupported;
      if (r.message.empty()) r.message = "refused (no reason given)";
    } else if (shared->run_status != 0) {
      r.outcome = CallResult::Outcome::run_error;
      if (r.message.empty()) r.message = "run returned nonzero (no message)";
    } else if (const size_t changed = output.slack_changed() + (spec.index_count ? indices.slack_changed() : 0)) {
      r.outcome = CallResult::Outcome::out_of_bounds;
      r.message = fmt::format("wrote {} byte(s) before the start of its output or indices", changed);
    }
  }
  if (r.outcome == CallResult::Outcome::ran || r.outcome == CallResult::Outcome::out_of_bounds) {
    r.output.assign(output.data(), output.data() + spec.output_bytes);
    r.indices.resize(spec.index_count);
    if (spec.index_count > 0) std::memcpy(r.indices.data(), indices.data(), spec.index_count * sizeof(int64_t));
  }
  fault_buffers[0] = fault_buffers[1] = fault_buffers[2] = nullptr;
  munmap(shared_page, sizeof(Shared));
  return r;
}

}  // namespace poolspec::certify
