#include "worker.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "children.hpp"
#include "poolspec/backend.hpp"
#include "text.hpp"
#include "worker_protocol.hpp"

namespace poolspec::certify {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t canary_bytes = 64;                 // at least, in every region
constexpr uint64_t max_shared = uint64_t{8} << 30;  // the call buffers of one worker

size_t page() {
  static const auto size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}
uint64_t whole_pages(uint64_t n) { return (n + page() - 1) / page() * page(); }

// Bytes written to each log so far, and whether its cut was noted.
std::mutex log_mutex;
std::map<std::string, std::pair<int64_t, bool>> log_bytes;

// The live workers' process ids: what sweep_orphans must leave alone.
std::mutex live_mutex;
std::set<int> live_workers;

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The canary of a call: bytes from its seed, at each region's unused bytes.
void fill_canary(std::byte* at, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = splitmix(seed);
    std::memcpy(at + i, &v, std::min<size_t>(8, n - i));
  }
}

size_t canary_changes(const std::byte* at, size_t n, uint64_t seed, size_t* first) {
  size_t changed = 0;
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = splitmix(seed);
    std::byte expected[8];
    std::memcpy(expected, &v, 8);
    for (size_t k = 0; k < std::min<size_t>(8, n - i); ++k)
      if (at[i + k] != expected[k]) {
        if (changed++ == 0) *first = i + k;
      }
  }
  return changed;
}

const char* buffer_name(uint32_t b) {
  static const char* const names[] = {"input", "output", "indices", "message"};
  return b < wire::buffer_count ? names[b] : "?";
}

const char* stage_name(uint32_t stage) {
  switch (stage) {
    case wire::loading: return "loading the library (a constructor or poolspec_backend_entry)";
    case wire::supports: return "supports";
    case wire::accumulation_for: return "accumulation_for";
    case wire::run: return "run";
    case wire::output_shape: return "output_shape";
    default: return "the worker, between calls";
  }
}

bool name_is_valid(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '+' || c == '-'))
      return false;
  return true;
}

}  // namespace

void reset_logs() {
  const std::lock_guard lock(log_mutex);
  log_bytes.clear();
}

void Worker::drain_log(bool until_closed) {
  if (log_pipe_ < 0) return;
  char buffer[65536];
  for (int rounds = 0; rounds < 1024;
       ++rounds) {  // a bound: a worker still writing is not waited for
    const ssize_t n = read(log_pipe_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0 || until_closed) {
        close(log_pipe_);
        log_pipe_ = -1;
      }
      return;
    }
    std::string note;
    size_t keep = 0;
    {
      const std::lock_guard lock(log_mutex);
      auto& [written, cut] = log_bytes[config_.log];
      keep = static_cast<size_t>(std::clamp<int64_t>(log_limit_bytes - written, 0, n));
      written += static_cast<int64_t>(keep);
      if (keep < static_cast<size_t>(n) && !cut) {
        cut = true;
        note = fmt::format(
            "\n[poolspec: the rest of this backend's output is dropped: its log holds at most {} "
            "bytes]\n",
            log_limit_bytes);
      }
    }
    if (log_ >= 0 && keep > 0 && write(log_, buffer, keep) < 0) return;
    if (log_ >= 0 && !note.empty() && write(log_, note.data(), note.size()) < 0) return;
  }
}

void sweep_orphans() {
  const std::lock_guard lock(live_mutex);
  for (int pass = 0; pass < 1000; ++pass) {
    std::vector<pid_t> found;
    for (pid_t pid : children_of_this_process())
      if (!live_workers.count(pid)) found.push_back(pid);
    if (found.empty()) return;
    for (pid_t pid : found) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
}

Result<std::unique_ptr<Worker>> Worker::start(const WorkerConfig& config) {
  std::unique_ptr<Worker> w(new Worker(config));
  int sockets[2], death[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) != 0)
    return Error{fmt::format("cannot make the worker's socket: {}", std::strerror(errno))};
  if (pipe2(death, O_CLOEXEC) != 0) {
    close(sockets[0]), close(sockets[1]);
    return Error{fmt::format("cannot make the worker's pipe: {}", std::strerror(errno))};
  }
  w->socket_ = sockets[0];
  w->death_ = death[0];
  // Sealed against shrinking: a backend that truncated it (fd 5 in the worker) would make
  // poolspec's own reads of the buffers fault.
  w->memfd_ = memfd_create("poolspec-call", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (w->memfd_ >= 0) fcntl(w->memfd_, F_ADD_SEALS, F_SEAL_SHRINK);
  bool first = false;  // the run's first worker of this log starts it afresh
  {
    const std::lock_guard lock(log_mutex);
    first = log_bytes.emplace(config.log, std::make_pair(int64_t{0}, false)).second;
  }
  w->log_ = open(config.log.c_str(),
                 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (first ? O_TRUNC : 0), 0644);
  int log[2] = {-1, -1};  // the worker's stdout and stderr, drained by poolspec into the log
  if (pipe2(log, O_CLOEXEC) == 0) {
    w->log_pipe_ = log[0];
    fcntl(log[0], F_SETFL, O_NONBLOCK);
  }
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::string failure;
  if (w->memfd_ < 0 || !w->ensure_size(page()))
    failure = fmt::format("cannot make the call buffers: {}", std::strerror(errno));
  else if (w->log_ < 0)
    failure =
        fmt::format("cannot write the backend's log {}: {}", config.log, std::strerror(errno));
  else if (log[1] < 0)
    failure = fmt::format("cannot make the log's pipe: {}", std::strerror(errno));
  else if (null < 0)
    failure = "cannot open /dev/null";
  // The worker's descriptors 0 to 5 are copied from these in order: each source must sit above 5
  // so that no copy overwrites a source not yet copied (another lane may have freed a low one).
  int sources[6] = {null, log[1], log[1], sockets[1], death[1], w->memfd_},
      high[6] = {-1, -1, -1, -1, -1, -1};
  for (int i = 0; i < 6 && failure.empty(); ++i)
    if (sources[i] >= 0 && (high[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 10)) < 0)
      failure = fmt::format("cannot copy a descriptor for the worker: {}", std::strerror(errno));
  if (failure.empty()) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int i = 0; i < 6; ++i) posix_spawn_file_actions_adddup2(&actions, high[i], i);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    const std::string memory = std::to_string(config.memory_limit_mb);
    const char* argv[] = {config.program.c_str(), config.library.c_str(), memory.c_str(),
                          config.pid_namespace ? "1" : "0", nullptr};
    std::vector<std::string> environment_text;
    for (char** e = environ; *e; ++e) environment_text.emplace_back(*e);
    for (const std::string& d : config.environment_defaults)
      if (!std::getenv(d.substr(0, d.find('=')).c_str())) environment_text.push_back(d);
    std::vector<char*> environment;
    for (std::string& e : environment_text) environment.push_back(e.data());
    environment.push_back(nullptr);
    pid_t pid = -1;
    {
      const std::lock_guard lock(live_mutex);
      const int e = posix_spawn(&pid, config.program.c_str(), &actions, &attributes,
                                const_cast<char* const*>(argv), environment.data());
      if (e != 0)
        failure = fmt::format("cannot start {}: {}", config.program, std::strerror(e));
      else
        live_workers.insert(pid);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    w->pid_ = pid;
  }
  for (int fd : high)
    if (fd >= 0) close(fd);
  close(sockets[1]);
  close(death[1]);
  if (log[1] >= 0) close(log[1]);
  if (null >= 0) close(null);
  if (!failure.empty()) return Error{failure};
  w->alive_ = true;
  return w;
}

Worker::~Worker() {
  stop();
  if (shared_) munmap(shared_, shared_size_);
  for (int fd : {socket_, death_, memfd_, log_pipe_, log_})
    if (fd >= 0) close(fd);
}

void Worker::stop() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);  // the worker's process group: the starter, its keeper, the worker
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    {
      const std::lock_guard lock(live_mutex);
      live_workers.erase(pid_);
    }
    pid_ = -1;
    sweep_orphans();
  }
  drain_log(true);
  alive_ = false;
}

bool Worker::ensure_size(uint64_t bytes) {
  if (bytes <= shared_size_) return true;
  if (bytes > max_shared) return false;
  const uint64_t size = std::max<uint64_t>(bytes, shared_size_ * 2);
  if (ftruncate(memfd_, static_cast<off_t>(size)) != 0) return false;
  if (shared_) munmap(shared_, shared_size_);
  void* m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
  if (m == MAP_FAILED) {
    shared_ = nullptr;
    shared_size_ = 0;
    return false;
  }
  shared_ = static_cast<std::byte*>(m);
  shared_size_ = size;
  return true;
}

Worker::Wait Worker::wait_for_reply(void* reply, size_t size, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<std::byte> buffer(size + 1);
  for (;;) {
    pollfd fds[3] = {{socket_, POLLIN, 0}, {death_, POLLIN, 0}, {log_pipe_, POLLIN, 0}};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::timeout;  // also while the log keeps the poll busy
    const int r =
        poll(fds, log_pipe_ >= 0 ? 3 : 2, static_cast<int>(std::clamp<int64_t>(left, 0, 1 << 30)));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Wait::timeout;
    if (log_pipe_ >= 0 && fds[2].revents) {
      drain_log(false);
      if (!(fds[0].revents | fds[1].revents)) continue;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t got = recv(socket_, buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) return Wait::died;
      uint32_t header[3];
      std::memcpy(header, buffer.data(), std::min<size_t>(sizeof header, static_cast<size_t>(got)));
      if (static_cast<size_t>(got) == size && header[0] == wire::magic && header[1] == sequence_) {
        std::memcpy(reply, buffer.data(), size);
        return Wait::reply;
      }
      if (static_cast<size_t>(got) == sizeof(wire::Reply) && header[0] == wire::magic &&
          header[1] == sequence_ && header[2] == wire::fault) {
        std::memcpy(reply, buffer.data(), std::min(size, sizeof(wire::Reply)));
        return Wait::reply;
      }
      return Wait::broken;  // not a reply to this request: something else wrote into the channel
    }
    if (fds[1].revents) return Wait::died;
  }
}

std::string Worker::death_text() {
  // The keeper writes the worker's wait status, then closes the pipe.
  int status = 0;
  pollfd p{death_, POLLIN, 0};
  if (poll(&p, 1, 2000) > 0 &&
      read(death_, &status, sizeof status) == static_cast<ssize_t>(sizeof status)) {
    worker_status_ = status;
    if (WIFSIGNALED(status))
      return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
    // The worker's own exits (worker_main.cpp), then the backend's.
    if (WIFEXITED(status) && WEXITSTATUS(status) == wire::exit_cannot_map)
      return "the worker could not map the call's buffers: the backend has used up its address "
             "space (--memory-limit-mb), or changed the shared memory file that holds them";
    if (WIFEXITED(status) && WEXITSTATUS(status) == wire::exit_cannot_confine)
      return "the worker could not install its signal filter (seccomp), which keeps the backend "
             "from signalling any process but its own, and does not run a backend without it; "
             "or the backend exited with status 125";
    if (WIFEXITED(status) && WEXITSTATUS(status) == wire::exit_bad_request)
      return "the worker could not serve the call: the backend's struct no longer has what it "
             "declared when loaded (changed after loading), or it exited with status 121";
    if (WIFEXITED(status))
      return fmt::format("the process exited with status {}", WEXITSTATUS(status));
  }
  return "the worker ended (no status: its keeper was killed too)";
}

bool Worker::send_request(const void* request, size_t size) {
  // Never blocks: a worker that does not read its requests is not waited for.
  return send(socket_, request, size, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(size);
}

LibraryDescription Worker::describe() {
  LibraryDescription out;
  wire::Request q;
  q.sequence = ++sequence_;
  q.kind = wire::describe;
  auto d = std::make_unique<wire::Description>();
  if (!send_request(&q, sizeof q)) {
    out.load_error = "the worker did not start";
    stop();
    return out;
  }
  const Wait wait = wait_for_reply(d.get(), sizeof *d, config_.load_timeout);
  if (wait == Wait::timeout) {
    out.load_error = fmt::format(
        "loading did not finish within {} ms (--load-timeout-ms): a constructor or "
        "poolspec_backend_entry that never returns; killed",
        config_.load_timeout.count());
    stop();
    return out;
  }
  if (wait == Wait::broken) {
    out.load_error = "while loading, the library wrote into poolspec's channel to its worker";
    stop();
    return out;
  }
  if (wait == Wait::died) {
    out.load_error = fmt::format(
        "the worker died while loading the library (in a constructor or in "
        "poolspec_backend_entry): {}",
        death_text());
    stop();
    return out;
  }
  if (d->kind != wire::describe) {
    out.load_error = "the library touched poolspec's call buffers while loading";
    stop();
    return out;
  }
  out.pid_namespace = d->pid_namespace != 0;
  if (d->count < 0) {
    d->detail[sizeof d->detail - 1] = '\0';
    out.load_error = printable(d->detail);
    stop();
    return out;
  }
  if (d->count == 0) {
    out.load_error = fmt::format("{}(0) returned no backend", POOLSPEC_BACKEND_ENTRY);
    stop();
    return out;
  }
  if (d->count > static_cast<int32_t>(wire::max_backends)) {
    out.load_error =
        fmt::format("{} returned more than {} backends (a library may give at most {})",
                    POOLSPEC_BACKEND_ENTRY, wire::max_backends, wire::max_backends);
    stop();
    return out;
  }
  std::set<std::string> names;
  for (int32_t i = 0; i < d->count; ++i) {
    wire::BackendInfo& info = d->backends[i];
    BackendDescription b;
    b.index = static_cast<uint32_t>(i);
    info.name[sizeof info.name - 1] = info.version[sizeof info.version - 1] =
        info.rules[sizeof info.rules - 1] = '\0';
    const std::string name = info.name, where = fmt::format("entry {}", i);
    std::string error;
    if (!abi_version_known(info.abi_version))
      error = fmt::format("abi_version={}: this poolspec speaks versions {}", info.abi_version,
                          abi_versions_spoken());
    else if (!info.has_name)
      error = "name=NULL: a backend must have a name";
    else if (info.name_truncated || !name_is_valid(name))
      error = fmt::format("name=\"{}\": must be 1 to 64 characters of A-Z a-z 0-9 . _ + -",
                          printable(name, 80));
    else if (!names.insert(name).second)
      error = fmt::format("name=\"{}\": another backend of this library has that name", name);
    else if (!info.has_rules || info.rules_truncated)
      error = "rules: must name the framework rules it claims";
    else if (!info.has_supports || !info.has_run)
      error = "supports and run must both be given";
    else
      error = accumulation_problem(info.accumulation);
    b.name = name_is_valid(name) && !info.name_truncated ? name : "";
    b.version = info.has_version ? printable(info.version, 200) : "";
    b.rules = printable(info.rules, 64);
    b.accumulation = info.accumulation;
    b.has_accumulation_for = info.has_accumulation_for;
    b.has_output_shape = info.has_output_shape != 0;
    if (!error.empty()) {
      out.load_error =
          fmt::format("{}{}: {}", where, b.name.empty() ? "" : " (" + b.name + ")", error);
      stop();
      return out;
    }
    out.backends.push_back(std::move(b));
  }
  return out;
}

CallOutcome Worker::call(uint32_t index, const poolspec_problem& problem,
                         const CallBuffers& buffers, std::chrono::milliseconds timeout) {
  CallOutcome out;
  const auto fail = [&](CallOutcome::Kind kind, std::string message) {
    out.kind = kind;
    out.message = std::move(message);
    stop();  // the next call starts a fresh worker
    return out;
  };
  if (!alive_) return fail(CallOutcome::Kind::crash, "the worker is not running");
  // The regions: input, output, indices, message, after the status page.
  const uint64_t bytes[wire::buffer_count] = {buffers.input.size(), buffers.output_bytes,
                                              buffers.index_count * sizeof(int64_t),
                                              wire::message_bytes};
  wire::Request q;
  q.sequence = ++sequence_;
  q.kind = wire::call;
  q.backend = index;
  q.problem = problem;
  q.problem.text = nullptr;
  std::snprintf(q.text, sizeof q.text, "%s", problem.text ? problem.text : "");
  q.cpu_seconds = static_cast<int64_t>(config_.cpu_limit_s);
  q.shape_question = buffers.shape_question ? 1 : 0;
  // [status page][guard][region 0][guard][region 1][guard][region 2][guard][region 3][guard]
  const size_t start_offsets[wire::buffer_count] = {buffers.element_bytes, buffers.element_bytes,
                                                    sizeof(int64_t), 1};
  uint64_t at = page();
  q.span_offset = at;
  for (uint32_t b = 0; b < wire::buffer_count; ++b) {
    wire::Region& r = q.regions[b];
    at += page();
    r.offset = at;
    r.size = whole_pages(bytes[b] + canary_bytes + start_offsets[b]);
    r.bytes = bytes[b];
    r.data = buffers.flush_end ? r.size - r.bytes : start_offsets[b];
    at += r.size;
  }
  at += page();
  q.span_size = at - q.span_offset;
  if (!ensure_size(at))
    return fail(CallOutcome::Kind::crash,
                fmt::format("poolspec could not make {} bytes of call buffers", at));
  q.memfd_size = at;
  const auto region = [&](uint32_t b) { return shared_ + q.regions[b].offset; };
  const auto data = [&](uint32_t b) { return region(b) + q.regions[b].data; };
  // Canaries over every guard page and around every buffer; the input, the poisons, an empty
  // message.
  const auto guard = [&](uint32_t g) {
    return shared_ + (g < wire::buffer_count ? q.regions[g].offset : at) - page();
  };
  for (uint32_t g = 0; g <= wire::buffer_count; ++g)
    fill_canary(guard(g), page(), buffers.seed + 16 + g);
  for (uint32_t b = 0; b < wire::buffer_count; ++b) {
    const wire::Region& r = q.regions[b];
    fill_canary(region(b), r.data, buffers.seed + 2 * b);
    fill_canary(data(b) + r.bytes, r.size - r.data - r.bytes, buffers.seed + 2 * b + 1);
  }
  if (!buffers.input.empty())
    std::memcpy(data(wire::input), buffers.input.data(), buffers.input.size());
  // One element's poison repeats: its 8 bytes cover every dtype's width (1, 2, 4, 8).
  out.output_poison.resize(8);
  std::memcpy(out.output_poison.data(), &buffers.poison, 8);
  out.index_poison = static_cast<int64_t>(buffers.poison);
  for (uint64_t k = 0; k < buffers.output_bytes; ++k)
    data(wire::output)[k] = out.output_poison[k % 8];
  for (uint64_t k = 0; k < buffers.index_count; ++k)
    std::memcpy(data(wire::indices) + 8 * k, &buffers.poison, 8);
  std::memset(data(wire::message), 0, wire::message_bytes);
  auto* status = reinterpret_cast<volatile wire::Status*>(shared_);
  status->stage = wire::idle;

  {
    char stray = 0;  // a reply before the request: the backend writes into the channel
    if (recv(socket_, &stray, 1, MSG_DONTWAIT | MSG_PEEK) > 0)
      return fail(
          CallOutcome::Kind::crash,
          "the channel to the worker held a reply to no request: the backend wrote into it");
  }
  if (!send_request(&q, sizeof q))
    return fail(
        CallOutcome::Kind::crash,
        fmt::format("the worker was gone (or not reading) before the call: {}", death_text()));
  wire::Reply reply;
  const Wait wait = wait_for_reply(&reply, sizeof reply, timeout);
  const uint32_t stage = status->stage;
  if (wait == Wait::timeout)
    return fail(CallOutcome::Kind::hang,
                fmt::format("still in {} after {} ms (--timeout-ms): killed", stage_name(stage),
                            timeout.count()));
  if (wait == Wait::broken)
    return fail(CallOutcome::Kind::crash,
                fmt::format("in {}: the backend wrote into poolspec's channel to its worker "
                            "(a message poolspec did not ask for)",
                            stage_name(stage)));
  if (wait == Wait::died) {
    const std::string how = death_text();
    if (worker_status_ && WIFSIGNALED(*worker_status_) && WTERMSIG(*worker_status_) == SIGXCPU)
      return fail(CallOutcome::Kind::hang,
                  fmt::format("used more than {} s of CPU in {} (--cpu-limit-s): killed",
                              config_.cpu_limit_s, stage_name(stage)));
    return fail(CallOutcome::Kind::crash, fmt::format("{} in {}", how, stage_name(stage)));
  }
  if (reply.kind == wire::fault) {
    const uint32_t b = static_cast<uint32_t>(reply.fault_buffer);
    std::string where;
    if (b >= wire::buffer_count)
      where = "touched memory next to its buffers";
    else if (reply.write && b == wire::input)
      where = fmt::format("wrote into its input (read-only), at byte {}", reply.fault_offset);
    else if (reply.write)
      where = fmt::format("touched its {} after changing its pages' protection", buffer_name(b));
    else if (reply.fault_offset < 0)
      where = fmt::format("touched byte {} before the start of its {}",
                          0 - static_cast<uint64_t>(reply.fault_offset), buffer_name(b));
    else
      where = fmt::format("touched byte {} past the end of its {} ({} bytes)",
                          static_cast<uint64_t>(reply.fault_offset) - bytes[b] + 1, buffer_name(b),
                          bytes[b]);
    return fail(CallOutcome::Kind::out_of_bounds,
                fmt::format("in {}: {}", stage_name(stage), where));
  }
  if (reply.kind != wire::call)
    return fail(CallOutcome::Kind::crash,
                "the worker's reply was not one poolspec sent for: its channel was written to");
  // The backend's text, at most its buffer, NUL-terminated or said not to be.
  const char* message = reinterpret_cast<const char*>(data(wire::message));
  const size_t length = strnlen(message, wire::message_bytes);
  out.message = printable(std::string_view(message, length));
  if (length == wire::message_bytes)
    out.message += fmt::format(" [not NUL-terminated within its {} bytes]", wire::message_bytes);
  // What the backend did outside its buffers: its mappings, the guards, the canaries, the input.
  if (reply.unmapped >= 0)
    return fail(
        CallOutcome::Kind::out_of_bounds,
        fmt::format("unmapped or moved pages of {} (its caller's memory)",
                    reply.unmapped < static_cast<int32_t>(wire::buffer_count)
                        ? fmt::format("its {}", buffer_name(static_cast<uint32_t>(reply.unmapped)))
                        : std::string("the guard pages between its buffers")));
  for (uint32_t g = 0; g <= wire::buffer_count; ++g) {
    size_t first = 0;
    if (const size_t n = canary_changes(guard(g), page(), buffers.seed + 16 + g, &first))
      return fail(
          CallOutcome::Kind::out_of_bounds,
          fmt::format("wrote {} byte(s) into the guard page {} (after unprotecting it)", n,
                      g == 0                    ? std::string("before its input")
                      : g == wire::buffer_count ? std::string("after its message buffer")
                                                : fmt::format("between its {} and its {}",
                                                              buffer_name(g - 1), buffer_name(g))));
  }
  for (uint32_t b = 0; b < wire::buffer_count; ++b) {
    const wire::Region& r = q.regions[b];
    size_t first = 0;
    if (const size_t n = canary_changes(region(b), r.data, buffers.seed + 2 * b, &first))
      return fail(
          CallOutcome::Kind::out_of_bounds,
          fmt::format("wrote {} byte(s) before the start of its {}, the first {} bytes before it",
                      n, buffer_name(b), r.data - first));
    if (const size_t n = canary_changes(data(b) + r.bytes, r.size - r.data - r.bytes,
                                        buffers.seed + 2 * b + 1, &first))
      return fail(
          CallOutcome::Kind::out_of_bounds,
          fmt::format(
              "wrote {} byte(s) past the end of its {} ({} bytes), the first at byte {} past it", n,
              buffer_name(b), r.bytes, first + 1));
  }
  if (!buffers.input.empty() &&
      std::memcmp(data(wire::input), buffers.input.data(), buffers.input.size()) != 0) {
    const size_t k = static_cast<size_t>(
        std::mismatch(buffers.input.begin(), buffers.input.end(), data(wire::input)).first -
        buffers.input.begin());
    return fail(CallOutcome::Kind::out_of_bounds,
                fmt::format("changed its input (read-only), the first byte at offset {}", k));
  }
  out.accumulation = reply.accumulation;
  if (reply.supported == 0) {
    out.kind = CallOutcome::Kind::unsupported;
    if (out.message.empty()) out.message = "refused (no reason given)";
    return out;
  }
  if (reply.supported != 1) {
    out.kind = CallOutcome::Kind::bad_supports;
    out.message =
        fmt::format("{}() returned {}: it must return 1 or 0",
                    buffers.shape_question ? "output_shape" : "supports", reply.supported);
    return out;
  }
  out.output.assign(data(wire::output), data(wire::output) + buffers.output_bytes);
  out.indices.resize(buffers.index_count);
  if (buffers.index_count)
    std::memcpy(out.indices.data(), data(wire::indices), buffers.index_count * sizeof(int64_t));
  if (reply.run_status != 0) {
    out.kind = CallOutcome::Kind::run_error;
    if (out.message.empty())
      out.message = fmt::format("run returned {} (no message)", reply.run_status);
  }
  return out;
}

}  // namespace poolspec::certify
