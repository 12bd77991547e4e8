#include "backends.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "poolspec/frontends.hpp"
#include "suite.hpp"
#include "text.hpp"

namespace poolspec::certify {

namespace {

// The adapters the build made (certify/adapters/), in a fixed order.
const char* const adapter_files[] = {"libpoolspec_onednn.so",    "libpoolspec_xnnpack.so",
                                     "libpoolspec_opencv.so",    "libpoolspec_armnn.so",
                                     "libpoolspec_mlir_tosa.so", "libpoolspec_libtorch.so"};

// The first of `candidates` that exists, else the last.
std::string first_existing(std::initializer_list<std::filesystem::path> candidates) {
  std::error_code ec;
  for (const std::filesystem::path& p : candidates)
    if (std::filesystem::exists(p, ec)) return p.lexically_normal().string();
  return std::data(candidates)[candidates.size() - 1].string();
}

// The adapters: $POOLSPEC_ADAPTER_DIR; beside the program (a build tree); the install prefix's
// lib/poolspec/adapters, relative to the program, so an installed poolspec needs no build tree.
std::string adapter_folder() {
  if (const char* dir = std::getenv("POOLSPEC_ADAPTER_DIR")) return dir;
  const std::filesystem::path self = program_folder();
  return first_existing(
      {self / "adapters", self / POOLSPEC_INSTALLED_ADAPTER_DIR, POOLSPEC_BUILD_ADAPTER_DIR});
}

// The library's backends, through a worker of its own that ends when they are listed (what the
// library prints while it loads goes to its log).
void describe(const std::string& library, const WorkerConfig& base, const std::string& out_dir,
              bool given_by_path, BackendSelection& out) {
  WorkerConfig config = base;
  config.library = library;
  config.log = out_dir.empty() ? "/dev/null" : backend_log(out_dir, library);
  const std::string file =
      library == "built-in" ? library : std::filesystem::path(library).filename().string();
  Result<std::unique_ptr<Worker>> worker = Worker::start(config);
  if (!worker) {
    out.failures.push_back({library, printable(file, 80), worker.error().message});
    return;
  }
  LibraryDescription d = (*worker)->describe();
  out.all_in_pid_namespaces =
      out.all_in_pid_namespaces && (d.pid_namespace || !d.load_error.empty());
  if (!d.load_error.empty()) {
    out.failures.push_back({library, printable(file, 80), d.load_error});
    return;
  }
  for (BackendDescription& b : d.backends) {
    if (!known_rules(b.rules)) {
      out.failures.push_back(
          {library, b.name,
           fmt::format(
               "entry {} ({}): rules=\"{}\" is not a rule set poolspec knows (claimed, spec, xs3, "
               "{})",
               b.index, b.name, b.rules, framework_names(", "))});
      continue;
    }
    out.backends.push_back({library, std::move(b), given_by_path});
  }
}

}  // namespace

std::string program_folder() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string default_waivers() {
  const std::filesystem::path self = program_folder();
  return first_existing(
      {self / "waivers.txt", self / POOLSPEC_INSTALLED_WAIVERS, POOLSPEC_SOURCE_WAIVERS});
}

std::string backend_log(const std::string& out_dir, const std::string& library) {
  const std::string file =
      library == "built-in" ? library : std::filesystem::path(library).filename().string();
  std::string name;
  for (char c : file)
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return fmt::format("{}/logs/{}.log", out_dir, name);
}

Result<BackendSelection> select_backends(const std::vector<std::string>& wanted,
                                         const WorkerConfig& worker, const std::string& out_dir) {
  BackendSelection all;
  const auto add_adapters = [&] {
    const std::filesystem::path folder = adapter_folder();
    for (const char* file : adapter_files) {
      std::error_code ec;
      if (std::filesystem::exists(folder / file, ec))
        describe(std::filesystem::absolute(folder / file).string(), worker, out_dir, false, all);
    }
  };
  describe("built-in", worker, out_dir, false, all);
  if (wanted.empty()) {
    add_adapters();
    return all;
  }
  const auto is_path = [](const std::string& w) {
    return w.find('/') != std::string::npos || w.ends_with(".so");
  };
  // The libraries given by path first, each described once: a name may pick among their
  // backends, wherever it stands on the command line.
  std::vector<BackendSelection> libraries(wanted.size());
  std::set<std::string> names;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const std::string& w = wanted[i];
    if (!is_path(w)) {
      names.insert(w);
      continue;
    }
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::absolute(w, ec);
    if (ec || !std::filesystem::is_regular_file(path, ec) || access(path.c_str(), R_OK) != 0)
      return Error{fmt::format(
          "--backend {}: not a readable file (a backend is a shared library's path, or one of "
          "the names --list shows)",
          printable(w, 200))};
    describe(path.string(), worker, out_dir, true, libraries[i]);
  }
  std::set<std::string> in_libraries;  // the names of the libraries' backends
  for (const BackendSelection& lib : libraries)
    for (const LoadedBackend& b : lib.backends) in_libraries.insert(b.name());
  BackendSelection out;
  bool adapters_added = false;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const std::string& w = wanted[i];
    if (is_path(w)) {
      // Every backend of the library, or only those named if any is.
      const BackendSelection& lib = libraries[i];
      const bool some_named =
          std::any_of(lib.backends.begin(), lib.backends.end(),
                      [&](const LoadedBackend& b) { return names.contains(b.name()); });
      for (const LoadedBackend& b : lib.backends)
        if (!some_named || names.contains(b.name())) out.backends.push_back(b);
      out.failures.insert(out.failures.end(), lib.failures.begin(), lib.failures.end());
      out.all_in_pid_namespaces = out.all_in_pid_namespaces && lib.all_in_pid_namespaces;
      continue;
    }
    const auto matches = [&] {
      bool found = false;
      for (const LoadedBackend& b : all.backends)
        if (w == b.name()) {
          out.backends.push_back(b);
          found = true;
        }
      return found;
    };
    if (matches() || in_libraries.contains(w)) continue;
    if (!adapters_added) {
      adapters_added = true;
      add_adapters();
      if (matches()) continue;
    }
    std::string names_known, unloaded;
    for (const LoadedBackend& b : all.backends) names_known += fmt::format(" {}", b.name());
    for (const std::string& name : in_libraries) names_known += fmt::format(" {}", name);
    for (const LoadFailure& f : all.failures)
      unloaded += fmt::format("; {} did not load: {}", f.library, f.detail);
    for (const BackendSelection& lib : libraries)
      for (const LoadFailure& f : lib.failures)
        unloaded += fmt::format("; {} did not load: {}", f.library, f.detail);
    return Error{fmt::format(
        "--backend {}: no such backend (available:{}; or give a shared library's path){}",
        printable(w, 200), names_known, unloaded)};
  }
  out.all_in_pid_namespaces = out.all_in_pid_namespaces && all.all_in_pid_namespaces;
  return out;
}

}  // namespace poolspec::certify
