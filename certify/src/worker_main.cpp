// poolspec-worker: runs one backend library for `poolspec certify` (worker_protocol.hpp). poolspec
// starts it with fd 3 (the request socket), fd 4 (where the worker's death is reported) and fd 5
// (the memfd of the call buffers); stdout and stderr go to the backend's log.
//
//   poolspec-worker LIBRARY MEMORY_LIMIT_MB PID_NAMESPACE
//
// LIBRARY is a shared library's path or "built-in" (the reference, optimized and xs3 engines).
// Three roles, so that nothing the backend starts outlives the worker:
//   - the starter (this process): a session of its own; with PID_NAMESPACE 1 it moves its
//     children into a new PID namespace (when the kernel lets it), forks the keeper and waits;
//   - the keeper: PID 1 of that namespace (or, without one, the starter itself, as a child
//     subreaper): mounts the namespace's own /proc (mount_namespace_proc), forks the worker,
//     reaps everything, writes the worker's wait status to fd 4, then ends -- which, as PID 1,
//     kills every process left in the namespace; without one, it kills every descendant it
//     adopted first;
//   - the worker: drops its privileges, confines the backend's signals (confine_signals), loads
//     the library and answers requests until the socket closes.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "children.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/xs3/engine.hpp"
#include "worker_protocol.hpp"

namespace wire = poolspec::certify::wire;

// Under AddressSanitizer (a sanitized build of poolspec), the backend's malloc is ASan's. By
// default ASan aborts the process when an allocation fails; C's malloc returns NULL. The worker
// runs a backend as it runs in production, so a failed allocation returns NULL here too: a
// backend that handles it is judged by what it does next, not killed by the sanitizer.
#if defined(__SANITIZE_ADDRESS__)
#define POOLSPEC_WORKER_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOLSPEC_WORKER_UNDER_ASAN 1
#endif
#endif
#ifdef POOLSPEC_WORKER_UNDER_ASAN
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace {

// Set before each call, read by the fault handler.
struct CallMap {
  std::byte* base = nullptr;  // the span: guard pages and regions
  size_t size = 0;
  std::byte* region[wire::buffer_count]{};
  const wire::Region* layout = nullptr;
  bool flush_end = true;
  uint32_t sequence = 0;
};
CallMap current;
wire::Status* status_page = nullptr;

size_t page() {
  static const auto size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

void send_all(const void* data, size_t size) {
  while (send(wire::channel_fd, data, size, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

// A touch outside a buffer: say which and where, then end (async-signal-safe: send and _exit).
void on_fault(int signal_number, siginfo_t* info, void*) {
  const auto* at = static_cast<const std::byte*>(info->si_addr);
  if (current.base && at >= current.base && at < current.base + current.size) {
    wire::Reply r;
    r.sequence = current.sequence;
    r.kind = wire::fault;
    for (uint32_t b = 0; b < wire::buffer_count; ++b) {
      const std::byte* start = current.region[b];
      const std::byte* data = start + current.layout[b].data;
      // Inside: the read-only input (or pages reprotected).
      if (at >= start && at < start + current.layout[b].size) {
        r.fault_buffer = static_cast<int32_t>(b);
        r.write = 1;
        r.fault_offset = at - data;
        break;
      }
      // The guard page before region b belongs to b when data sits at the regions' starts; the
      // one after it, when data sits at their ends.
      const bool before = at >= start - page() && at < start;
      const bool after =
          at >= start + current.layout[b].size && at < start + current.layout[b].size + page();
      if ((before && !current.flush_end) || (after && current.flush_end) || (before && b == 0) ||
          (after && b + 1 == wire::buffer_count)) {
        r.fault_buffer = static_cast<int32_t>(b);
        r.fault_offset = at - data;
        break;
      }
    }
    send_all(&r, sizeof r);
    _exit(wire::exit_after_fault);
  }
  signal(signal_number,
         SIG_DFL);  // any other fault: returning re-raises it, with the default action
}

struct Loaded {
  std::vector<const poolspec_backend*> backends;
  std::string error;
};

void copy_field(const char* text, char* out, size_t size, uint8_t* present, uint8_t* truncated) {
  *present = text != nullptr;
  if (!text) return;
  const size_t n = strnlen(text, size);
  *truncated = n == size;
  std::memcpy(out, text, n == size ? size - 1 : n);
}

Loaded load(const std::string& library, wire::Description& d) {
  Loaded out;
  poolspec_backend_entry_fn entry = nullptr;
  if (library == "built-in") {
    out.backends = {poolspec::reference::backend(), poolspec::optimized::backend(),
                    poolspec::xs3::backend()};
  } else {
    // RTLD_LOCAL: two vendors' libraries may define the same symbols.
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      out.error = std::string("cannot load it: ") + dlerror();
      return out;
    }
    void* symbol = dlsym(handle, POOLSPEC_BACKEND_ENTRY);
    if (!symbol) {
      out.error = std::string("it exports no ") + POOLSPEC_BACKEND_ENTRY + " (backend.h)";
      return out;
    }
    entry = reinterpret_cast<poolspec_backend_entry_fn>(symbol);
    for (uint32_t i = 0; i <= wire::max_backends; ++i) {
      const poolspec_backend* b = entry(i);
      if (!b) break;
      out.backends.push_back(b);
    }
  }
  d.count = static_cast<int32_t>(out.backends.size());
  for (size_t i = 0; i < out.backends.size(); ++i) {
    const poolspec_backend* b = out.backends[i];
    wire::BackendInfo& info = d.backends[i];
    info.abi_version = b->abi_version;
    copy_field(b->name, info.name, sizeof info.name, &info.has_name, &info.name_truncated);
    copy_field(b->version, info.version, sizeof info.version, &info.has_version,
               &info.version_truncated);
    copy_field(b->rules, info.rules, sizeof info.rules, &info.has_rules, &info.rules_truncated);
    info.has_supports = b->supports != nullptr;
    info.has_run = b->run != nullptr;
    info.has_accumulation_for = b->accumulation_for != nullptr;
    info.has_output_shape = poolspec::output_shape_of(*b) != nullptr;
    info.accumulation = b->accumulation;
  }
  return out;
}

bool regions_fit(const wire::Request& q) {
  if (q.span_offset % page() || q.span_offset < page() || q.span_size % page() ||
      q.span_size == 0 || q.span_offset > q.memfd_size ||
      q.span_size > q.memfd_size - q.span_offset)
    return false;
  for (const wire::Region& r : q.regions)
    if (r.offset % page() || r.size % page() || r.size == 0 || r.offset < q.span_offset + page() ||
        r.size > q.span_offset + q.span_size - page() - r.offset || r.data > r.size ||
        r.bytes > r.size - r.data)
      return false;
  return true;
}

void set_cpu_limit(int64_t seconds) {
  rusage used{};
  getrusage(RUSAGE_SELF, &used);
  rlimit limit{};
  getrlimit(RLIMIT_CPU, &limit);
  limit.rlim_cur = static_cast<rlim_t>(used.ru_utime.tv_sec + used.ru_stime.tv_sec + 1 + seconds);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max)
    limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_CPU, &limit);
}

// Whether every page of [at, at + size) is still mapped (mincore fails with ENOMEM otherwise).
bool mapped(const std::byte* at, size_t size) {
  static std::vector<unsigned char> pages;
  pages.resize(size / page() + 1);
  return mincore(const_cast<std::byte*>(at), size, pages.data()) == 0 || errno != ENOMEM;
}

void call(const wire::Request& q, const Loaded& loaded, int memfd) {
  wire::Reply r;
  r.sequence = q.sequence;
  r.kind = wire::call;
  if (q.backend >= loaded.backends.size() || !regions_fit(q))
    _exit(wire::exit_bad_request);  // not a request poolspec makes
  // The span: guard pages without access, the regions read-write, the input read-only.
  void* span =
      mmap(nullptr, q.span_size, PROT_NONE, MAP_SHARED, memfd, static_cast<off_t>(q.span_offset));
  if (span == MAP_FAILED) _exit(wire::exit_cannot_map);
  current.base = static_cast<std::byte*>(span);
  current.size = q.span_size;
  current.layout = q.regions;
  current.flush_end =
      q.regions[wire::output].data + q.regions[wire::output].bytes == q.regions[wire::output].size;
  current.sequence = q.sequence;
  for (uint32_t b = 0; b < wire::buffer_count; ++b) {
    const wire::Region& region = q.regions[b];
    current.region[b] = current.base + (region.offset - q.span_offset);
    if (mprotect(current.region[b], region.size,
                 b == wire::input ? PROT_READ : PROT_READ | PROT_WRITE) != 0)
      _exit(wire::exit_cannot_map);
  }
  std::byte* data[wire::buffer_count];
  for (uint32_t b = 0; b < wire::buffer_count; ++b)
    data[b] = q.regions[b].bytes ? current.region[b] + q.regions[b].data : nullptr;
  char* message = reinterpret_cast<char*>(data[wire::message]);
  const size_t message_size = q.regions[wire::message].bytes;

  poolspec_problem problem = q.problem;  // a copy: what the backend does to it stays here
  char text[wire::max_text];
  std::memcpy(text, q.text, sizeof text);
  text[sizeof text - 1] = '\0';
  problem.text = text;
  const poolspec_backend* b = loaded.backends[q.backend];
  set_cpu_limit(q.cpu_seconds);
  if (q.shape_question) {
    const auto output_shape = poolspec::output_shape_of(*b);
    if (!output_shape) _exit(wire::exit_bad_request);  // poolspec asks only a backend that has it
    status_page->stage = wire::output_shape;
    r.supported = output_shape(b, &problem, reinterpret_cast<int64_t*>(data[wire::output]), message,
                               message_size);
  } else if (const std::string refused = poolspec::abi_version_refuses(problem, b->abi_version);
             !refused.empty()) {
    r.supported = 0;  // never asked: an older backend cannot know what the problem says
    if (message && message_size) std::snprintf(message, message_size, "%s", refused.c_str());
  } else {
    status_page->stage = wire::supports;
    r.supported = b->supports(b, &problem, message, message_size);
  }
  if (r.supported == 1 && !q.shape_question) {
    status_page->stage = wire::accumulation_for;
    r.accumulation = b->accumulation;
    if (b->accumulation_for) b->accumulation_for(b, &problem, &r.accumulation);
    status_page->stage = wire::run;
    if (message && message_size) message[0] = '\0';
    r.run_status = b->run(b, &problem, data[wire::input], data[wire::output],
                          reinterpret_cast<int64_t*>(data[wire::indices]), message, message_size);
  }
  status_page->stage = wire::idle;
  ++status_page->calls;
  // A buffer's pages unmapped (or moved) by the backend: its caller would crash on them.
  for (uint32_t k = 0; k < wire::buffer_count && r.unmapped < 0; ++k)
    if (!mapped(current.region[k], q.regions[k].size)) r.unmapped = static_cast<int32_t>(k);
  if (r.unmapped < 0 && !mapped(current.base, current.size)) r.unmapped = wire::buffer_count;
  current.base = nullptr;
  munmap(span, q.span_size);
  send_all(&r, sizeof r);
}

// No capability from here on (a root worker could otherwise raise its limits, trace or signal
// any process, or change scheduling), and none regained by exec.
void drop_privileges() {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[2]{};
  syscall(SYS_capset, &header, none);
}

// A backend may signal its own process only (raise, abort, pthread_kill: its own threads). Where
// no PID namespace hides them, poolspec, the starter and every other process of the same user are
// otherwise a kill() away: by getppid() (the worker is reparented to poolspec, a subreaper, the
// moment its starter dies, before the kernel's parent-death signal ends it), by kill(-1), or by a
// pid read from /proc. Refused with EPERM:
//  - kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo naming another process (their first
//    argument, a pid_t); tkill and pidfd_send_signal (which name a thread or a pidfd the filter
//    cannot check);
//  - I/O signals: making another process an fd's owner (fcntl F_SETOWN, F_SETOWN_EX; ioctl
//    FIOSETOWN, SIOCSPGRP), and asking for them at all (fcntl F_SETFL with O_ASYNC, ioctl
//    FIOASYNC): a terminal opened with O_ASYNC makes its foreground process group -- poolspec's
//    job and its shell -- the owner by itself;
//  - prlimit64 on another process (a zero RLIMIT_FSIZE or RLIMIT_CPU kills it at its next write
//    or second); setrlimit and getrlimit name process 0. setpriority and ioprio_set naming a
//    process group or a user, which would renice poolspec with every process of the user. (A
//    thread's own priority and affinity, set by its thread id, stay the backend's: the filter
//    cannot tell its threads from other processes there.)
// A system call of another architecture's ABI (int 0x80) ends the whole process.
// Loaded after no-new-privileges (drop_privileges), as an unprivileged filter must be; the
// backend's own children inherit it: they may signal the worker, and nothing else.
bool confine_signals() {
  const scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return false;
  bool ok = seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) == 0;
  const uint32_t refuse = SCMP_ACT_ERRNO(EPERM);
  // Compares of the whole 64-bit argument: a pid with its upper half set is not `self`, so it is
  // refused (the kernel would read its lower half). A command matches on its lower half, as the
  // kernel reads it (an unsigned int), so upper bits cannot slip one past the filter.
  const auto other_than_self = [](unsigned arg) {
    return scmp_arg_cmp{arg, SCMP_CMP_NE, static_cast<uint64_t>(getpid()), 0};
  };
  const auto command = [](unsigned arg, uint64_t value) {
    return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, value};
  };
  for (const int call :
       {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    ok = ok && seccomp_rule_add(filter, refuse, call, 1, other_than_self(0)) == 0;
  for (const int call : {SCMP_SYS(tkill), SCMP_SYS(pidfd_send_signal)})
    ok = ok && seccomp_rule_add(filter, refuse, call, 0) == 0;
  ok = ok &&
       seccomp_rule_add(filter, refuse, SCMP_SYS(fcntl), 2, command(1, F_SETOWN),
                        other_than_self(2)) == 0 &&
       seccomp_rule_add(filter, refuse, SCMP_SYS(fcntl), 1, command(1, F_SETOWN_EX)) == 0 &&
       seccomp_rule_add(filter, refuse, SCMP_SYS(fcntl), 2, command(1, F_SETFL),
                        scmp_arg_cmp{2, SCMP_CMP_MASKED_EQ, O_ASYNC, O_ASYNC}) == 0 &&
       seccomp_rule_add(filter, refuse, SCMP_SYS(prlimit64), 1,
                        scmp_arg_cmp{0, SCMP_CMP_NE, 0, 0}) == 0;
  // setpriority and ioprio_set on a process group or a user (every process of the user): the
  // kind of target, their first argument, must be a process (PRIO_PROCESS, IOPRIO_WHO_PROCESS).
  for (const auto& [call, process] : {std::pair{SCMP_SYS(setpriority), uint64_t{PRIO_PROCESS}},
                                      std::pair{SCMP_SYS(ioprio_set), uint64_t{1}}})
    ok = ok &&
         seccomp_rule_add(filter, refuse, call, 1, scmp_arg_cmp{0, SCMP_CMP_NE, process, 0}) == 0;
  for (const uint64_t request : {FIOSETOWN, SIOCSPGRP, FIOASYNC})
    ok = ok && seccomp_rule_add(filter, refuse, SCMP_SYS(ioctl), 1, command(1, request)) == 0;
  ok = ok && seccomp_load(filter) == 0;
  seccomp_release(filter);
  return ok;
}

// Every signal but SIGKILL, SIGSTOP and SIGCHLD: the starter and the keeper ignore them (a
// second guard, behind confine_signals, so that only the worker ends and its end is reported;
// poolspec ends them with SIGKILL); the worker takes each back to its default.
void set_every_signal(sighandler_t action) {
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD) signal(sig, action);
}

[[noreturn]] void serve(const std::string& library, int64_t memory_limit_mb) {
  close(wire::death_fd);
  set_every_signal(SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int memfd = 5;
  void* status = mmap(nullptr, page(), PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (status == MAP_FAILED) _exit(wire::exit_no_status_page);
  status_page = static_cast<wire::Status*>(status);
  // The address space may grow by the limit from here (an ASan build has reserved its shadow).
  long pages = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  const rlim_t address_limit =
      static_cast<rlim_t>(pages) * page() + static_cast<rlim_t>(memory_limit_mb) * 1024 * 1024;
  const rlimit address_space{address_limit, address_limit};
  setrlimit(RLIMIT_AS, &address_space);
  const rlimit file_size{rlim_t{64} << 20,
                         rlim_t{64} << 20};  // the log, and any file the backend writes
  setrlimit(RLIMIT_FSIZE, &file_size);
  drop_privileges();
  if (!confine_signals()) _exit(wire::exit_cannot_confine);
  // Every signal has its default action (set above: a sanitizer's handlers must not report the
  // backend's crash as their own), but faults, which report a touched guard first.
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);

  Loaded loaded;
  bool described = false;
  static wire::Request q;  // large: not on the stack
  for (;;) {
    const ssize_t got = recv(wire::channel_fd, &q, sizeof q, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof q) || q.magic_number != wire::magic)
      _exit(0);  // poolspec is done
    if (q.kind == wire::describe && !described) {
      static wire::Description d;
      d.sequence = q.sequence;
      d.pid_namespace = getpid() == 2 && getppid() == 1;
      status_page->stage = wire::loading;
      loaded = load(library, d);
      status_page->stage = wire::idle;
      described = true;
      if (!loaded.error.empty()) {
        d.count = -1;
        std::snprintf(d.detail, sizeof d.detail, "%s", loaded.error.c_str());
      }
      send_all(&d, sizeof d);
    } else if (q.kind == wire::call && described && loaded.error.empty()) {
      call(q, loaded, memfd);
    } else {
      _exit(wire::exit_bad_request);
    }
  }
}

// Kills and reaps every child this process has (adopted descendants included), until none is left.
void kill_children() {
  for (;;) {
    bool any = false;
    for (pid_t pid : poolspec::certify::children_of_this_process()) {
      kill(pid, SIGKILL);
      any = true;
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) any = true;
    if (!any) return;
    usleep(1000);
  }
}

// In its PID namespace, the keeper gives itself and the worker a /proc of that namespace alone, in
// a mount namespace of their own (its mounts private, so nothing propagates back): the host's
// /proc lists every process, and lets a process write what its owner may of another's (a root
// worker could raise poolspec's oom_score_adj, renice its autogroup). Where the kernel refuses
// (no mount namespace for this user), the host's /proc stays.
void mount_namespace_proc() {
  if (unshare(CLONE_NEWNS) != 0) return;
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return;
  mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
}

// Forks the worker, reaps every process that comes to it, reports the worker's end on fd 4.
[[noreturn]] void keep(const std::string& library, int64_t memory_limit_mb, bool pid_namespace) {
  if (pid_namespace) mount_namespace_proc();
  const pid_t worker = fork();
  if (worker < 0) _exit(wire::exit_cannot_fork);
  if (worker == 0) serve(library, memory_limit_mb);
  close(wire::channel_fd);
  close(5);
  int status = 0;
  for (;;) {
    int s = 0;
    const pid_t pid = waitpid(-1, &s, 0);
    if (pid == worker &&
        (WIFEXITED(s) || WIFSIGNALED(s))) {  // not a stop: it may be traced by its keeper
      status = s;
      break;
    }
    if (pid < 0 && errno != EINTR) break;
  }
  while (write(wire::death_fd, &status, sizeof status) < 0 && errno == EINTR) {
  }
  close(wire::death_fd);
  if (!pid_namespace) kill_children();  // as PID 1, ending kills the namespace instead
  _exit(0);
}

// Without the privilege for a PID namespace alone: a user namespace of its own (this user's ids
// mapped to themselves) and a PID namespace in it, where the kernel lets an unprivileged user.
bool enter_user_and_pid_namespaces() {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) return false;
  const auto write_text = [](const char* path, const std::string& text) {
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    return ok;
  };
  write_text("/proc/self/setgroups", "deny");
  return write_text("/proc/self/uid_map",
                    std::to_string(uid) + " " + std::to_string(uid) + " 1\n") &&
         write_text("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "poolspec-worker: started by poolspec certify, not by hand\n");
    return 2;
  }
  const std::string library = argv[1];
  const int64_t memory_limit_mb = std::atoll(argv[2]);
  const bool want_namespace = std::string(argv[3]) == "1";
  const pid_t poolspec = getppid();
  close_range(6, ~0u, 0);  // nothing of poolspec's but the descriptors above
  setsid();
  set_every_signal(SIG_IGN);
  const rlimit no_core{0, 0};  // a crash is a status, not a core file in the user's folder
  setrlimit(RLIMIT_CORE, &no_core);
  // Not dumpable: no other process of this user may read this one's /proc files (its descriptors,
  // its memory); the worker forked from it stays so after exec-free forks.
  prctl(PR_SET_DUMPABLE, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != poolspec) _exit(7);  // poolspec already gone
  if (want_namespace && (unshare(CLONE_NEWPID) == 0 || enter_user_and_pid_namespaces())) {
    const pid_t keeper = fork();  // PID 1 of the new namespace
    if (keeper < 0) _exit(wire::exit_cannot_fork);
    if (keeper == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      keep(library, memory_limit_mb, true);
    }
    close(wire::channel_fd);
    close(wire::death_fd);
    close(5);
    int status = 0;
    while (waitpid(keeper, &status, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  keep(library, memory_limit_mb, false);
}
