#include "poolspec/files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace poolspec {

namespace {

// The temporaries that exist now, for the signal handler. Fixed storage, because a handler may
// not allocate; changed under a mutex with the cleanup signals blocked in the changing thread.
constexpr int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr size_t slots = 32;
constexpr size_t longest_path = 4096;
char pending_path[slots][longest_path];
volatile sig_atomic_t pending[slots];
int pending_count = 0;
struct sigaction previous_action[std::size(cleanup_signals)];
bool handler_installed[std::size(cleanup_signals)];
std::mutex registry;

extern "C" void remove_temporaries_then_default(int signal) {
  for (size_t i = 0; i < slots; ++i)
    if (pending[i]) ::unlink(pending_path[i]);
  // The signal's usual effect: the default action, raised again (it is delivered once this
  // handler returns and unblocks it).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal, &default_action, nullptr);
  ::raise(signal);
}

class CleanupSignalsBlocked {
 public:
  CleanupSignalsBlocked() {
    sigset_t block;
    sigemptyset(&block);
    for (const int s : cleanup_signals) sigaddset(&block, s);
    ::pthread_sigmask(SIG_BLOCK, &block, &before_);
  }
  ~CleanupSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  CleanupSignalsBlocked(const CleanupSignalsBlocked&) = delete;
  CleanupSignalsBlocked& operator=(const CleanupSignalsBlocked&) = delete;

 private:
  sigset_t before_;
};

// Installs the handler for the signals whose action is still the default one (a program that
// handles a signal itself keeps its handler), and restores them when the last temporary goes.
void install_handlers() {
  for (size_t k = 0; k < std::size(cleanup_signals); ++k) {
    struct sigaction current {};
    ::sigaction(cleanup_signals[k], nullptr, &current);
    handler_installed[k] = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (!handler_installed[k]) continue;
    previous_action[k] = current;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_temporaries_then_default;
    sigemptyset(&cleanup.sa_mask);
    for (const int s : cleanup_signals) sigaddset(&cleanup.sa_mask, s);
    ::sigaction(cleanup_signals[k], &cleanup, nullptr);
  }
}

void restore_handlers() {
  for (size_t k = 0; k < std::size(cleanup_signals); ++k)
    if (handler_installed[k]) ::sigaction(cleanup_signals[k], &previous_action[k], nullptr);
}

// Writes all of `bytes` to `fd` and closes it (in every case); `name` is for the error.
Status write_all_and_close(int fd, const std::string& name, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int saved = errno;
      ::close(fd);
      return Error{fmt::format("{}: write error ({})", name, std::strerror(saved))};
    }
    done += static_cast<size_t>(w);
  }
  if (::close(fd) != 0)
    return Error{fmt::format("{}: write error ({})", name, std::strerror(errno))};
  return Ok{};
}

// A temporary file: registered for the signal handler from before it exists until it is renamed
// into place or removed.
class Temporary {
 public:
  // In the target's folder (so that the rename stays in one file system), a name of its own
  // that fits any file system's limit whatever the target's length.
  explicit Temporary(const std::filesystem::path& target)
      : name_((target.parent_path() / ".poolspec-partial-XXXXXX").string()) {}
  ~Temporary() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_ && created_) ::unlink(name_.c_str());
    forget();
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;

  Status write(const std::string& target, std::string_view bytes) {
    {
      const CleanupSignalsBlocked blocked;
      const std::lock_guard lock(registry);
      fd_ = ::mkstemp(name_.data());
      if (fd_ < 0)
        return Error{fmt::format("{}: cannot create a file in its folder ({})", target,
                                 std::strerror(errno))};
      created_ = true;
      remember();
    }
    // mkstemp creates the file 0600; a finished file gets the usual 0666 less the umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    (void)::fchmod(fd_, 0666 & ~mask);
    const int fd = fd_;
    fd_ = -1;
    return write_all_and_close(fd, target, bytes);
  }

  // Instead of a new file, a second name (a hard link) for the existing `target`, so that it can
  // be put back if a later step fails. False when the file system cannot make one.
  bool link_to_existing(const std::filesystem::path& target) {
    const CleanupSignalsBlocked blocked;
    const std::lock_guard lock(registry);
    const int fd = ::mkstemp(name_.data());  // a unique name, then the link in its place
    if (fd < 0) return false;
    ::close(fd);
    ::unlink(name_.c_str());
    if (::link(target.c_str(), name_.c_str()) != 0) return false;
    created_ = true;
    remember();
    return true;
  }

  Status rename_to(const std::string& target) {
    if (::rename(name_.c_str(), target.c_str()) != 0)
      return Error{fmt::format("{}: cannot rename the finished file into place ({})", target,
                               std::strerror(errno))};
    renamed_ = true;
    return Ok{};
  }

 private:
  void remember() {  // with the registry locked and the signals blocked
    if (name_.size() >= longest_path) return;
    for (size_t i = 0; i < slots; ++i)
      if (!pending[i]) {
        std::memcpy(pending_path[i], name_.c_str(), name_.size() + 1);
        pending[i] = 1;
        slot_ = static_cast<int>(i);
        if (pending_count++ == 0) install_handlers();
        return;
      }
  }
  void forget() {
    if (slot_ < 0) return;
    const CleanupSignalsBlocked blocked;
    const std::lock_guard lock(registry);
    pending[slot_] = 0;
    if (--pending_count == 0) restore_handlers();
    slot_ = -1;
  }

  std::string name_;
  int fd_ = -1;
  int slot_ = -1;
  bool created_ = false, renamed_ = false;
};

// Why `path` cannot be an output, or "". A symbolic link is followed: its target is written.
std::string unusable_output(const std::string& path) {
  if (path.empty()) return "an output path is empty (give a file name)";
  if (path == "-") return "";
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::is_directory(status))
    return fmt::format("{}: a folder (give a file name in it)", path);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_character_file(status))
    return fmt::format(
        "{}: a FIFO, socket or block device; an output is a file, a character "
        "device such as /dev/null, or - for standard output",
        path);
  // A name the file system cannot hold would fail at the rename, after the work.
  const std::filesystem::path p(path);
  const std::string folder = p.has_parent_path() ? p.parent_path().string() : ".";
  const long longest_name = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const size_t name_size = p.filename().string().size();
  if (longest_name > 0 && name_size > static_cast<size_t>(longest_name))
    return fmt::format("{}: a file name of {} bytes; its folder's file system holds at most {}",
                       path, name_size, longest_name);
  if (path.size() >= PATH_MAX)
    return fmt::format("{}...: a path of {} bytes, over the system's limit of {}",
                       path.substr(0, 60), path.size(), PATH_MAX - 1);
  return "";
}

// Where `path` really is: a symbolic link's target (so the link is kept), else the path.
std::filesystem::path resolved(const std::string& path) {
  std::error_code error;
  std::filesystem::path target = path;  // a chain of links followed by hand: one may dangle
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(target, error); ++hops) {
    const std::filesystem::path next = std::filesystem::read_symlink(target, error);
    if (error) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  std::filesystem::path full = std::filesystem::weakly_canonical(target, error);
  if (error) full = std::filesystem::absolute(target, error).lexically_normal();
  return full;
}

bool is_device(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_character_file(path, error);
}

// Writes `bytes` to an existing character device (/dev/null), which cannot be replaced.
Status write_to_device(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return Error{fmt::format("{}: cannot open for writing ({})", path, std::strerror(errno))};
  return write_all_and_close(fd, path, bytes);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty() || a == "-" || b == "-") return false;
  std::error_code error;  // two existing paths: one inode (hard links too); else one place
  if (std::filesystem::equivalent(a, b, error)) return true;
  return resolved(a) == resolved(b);
}

Status check_output_paths(const std::vector<std::string>& paths) {
  int to_stdout = 0;
  std::vector<std::filesystem::path> seen;
  for (const std::string& path : paths) {
    if (std::string why = unusable_output(path); !why.empty()) return Error{why};
    if (path == "-") {
      if (++to_stdout > 1) return Error{"'-' (standard output) is given for two outputs"};
      seen.emplace_back();
      continue;
    }
    const std::filesystem::path full = resolved(path);
    for (size_t i = 0; i < seen.size(); ++i)
      if (!seen[i].empty() && seen[i] == full)
        return Error{fmt::format("{} and {}: the same file; give each output a path of its own",
                                 paths[i], path)};
    seen.push_back(full);
  }
  return Ok{};
}

Status write_files_atomically(const std::vector<std::pair<std::string, std::string_view>>& files) {
  std::vector<std::string> paths;
  for (const auto& file : files) paths.push_back(file.first);
  if (Status s = check_output_paths(paths); !s) return s;
  // Every file written to its temporary, then every one renamed into place (a symbolic link's
  // target replaced, the link kept); devices and standard output last, once the files are there.
  // Each path is resolved once: `where[i]` is empty for standard output.
  std::vector<std::filesystem::path> where;
  for (const auto& file : files) where.push_back(file.first == "-" ? "" : resolved(file.first));
  const auto direct = [&](size_t i) { return where[i].empty() || is_device(where[i]); };
  std::vector<std::unique_ptr<Temporary>> temporaries(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    if (direct(i)) continue;
    temporaries[i] = std::make_unique<Temporary>(where[i]);
    if (Status s = temporaries[i]->write(files[i].first, files[i].second); !s) return s;
  }
  // Each file that exists is kept by a second name until the whole set is in place: when a rename
  // fails, the ones already made are undone (the kept files back, new ones removed).
  std::vector<std::unique_ptr<Temporary>> kept(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code error;
    if (!temporaries[i] || !std::filesystem::is_regular_file(where[i], error)) continue;
    kept[i] = std::make_unique<Temporary>(where[i]);
    if (!kept[i]->link_to_existing(where[i])) kept[i].reset();
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (!temporaries[i]) continue;
    if (Status s = temporaries[i]->rename_to(where[i].string()); !s) {
      for (size_t j = 0; j < i; ++j) {
        if (!temporaries[j]) continue;
        if (kept[j])
          (void)kept[j]->rename_to(where[j].string());
        else
          ::unlink(where[j].c_str());
      }
      return s;
    }
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (!temporaries[i] && !where[i].empty())
      if (Status s = write_to_device(files[i].first, files[i].second); !s) return s;
  for (const auto& [path, bytes] : files) {
    if (path != "-") continue;
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0)
      return Error{"standard output: write error"};
  }
  return Ok{};
}

Status write_file_atomically(const std::string& path, std::string_view bytes) {
  return write_files_atomically({{path, bytes}});
}

}  // namespace poolspec
