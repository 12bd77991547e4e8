#include "backends.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "poolspec/backend.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/xs3/engine.hpp"

namespace poolspec::certify {

namespace {

// The adapters the build made (certify/adapters/), in a fixed order.
const char* const adapter_files[] = {"libpoolspec_onednn.so", "libpoolspec_xnnpack.so", "libpoolspec_libtorch.so"};

}  // namespace

Result<std::vector<LoadedBackend>> load_library(const std::string& path) {
  // RTLD_LOCAL: two vendors' libraries may define the same symbols. Never unloaded: the structs
  // they return live in them.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Error{fmt::format("backend '{}': cannot load it: {}", path, dlerror())};
  void* symbol = dlsym(handle, POOLSPEC_BACKEND_ENTRY);
  if (!symbol)
    return Error{fmt::format("backend '{}': it exports no {} (backend.h)", path, POOLSPEC_BACKEND_ENTRY)};
  const auto entry = reinterpret_cast<poolspec_backend_entry_fn>(symbol);
  std::vector<LoadedBackend> out;
  for (uint32_t i = 0; i < 64; ++i) {
    const poolspec_backend* b = entry(i);
    if (!b) break;
    if (Status s = check_backend(b); !s) return Error{fmt::format("backend '{}', entry {}: {}", path, i, s.error().message)};
    out.push_back({b, path});
  }
  if (out.empty()) return Error{fmt::format("backend '{}': {}(0) returned no backend", path, POOLSPEC_BACKEND_ENTRY)};
  return out;
}

std::vector<LoadedBackend> available_backends(std::vector<std::string>* notes) {
  std::vector<LoadedBackend> out{{reference::backend(), "built-in"},
                                 {optimized::backend(), "built-in"},
                                 {xs3::backend(), "built-in"}};
  const char* dir = std::getenv("POOLSPEC_ADAPTER_DIR");
  const std::filesystem::path adapters = dir ? dir : POOLSPEC_BUILD_ADAPTER_DIR;
  for (const char* file : adapter_files) {
    const std::filesystem::path path = adapters / file;
    if (!std::filesystem::exists(path)) continue;
    Result<std::vector<LoadedBackend>> loaded = load_library(path.string());
    if (!loaded) {
      if (notes) notes->push_back(loaded.error().message);
      continue;
    }
    out.insert(out.end(), loaded->begin(), loaded->end());
  }
  return out;
}

Result<std::vector<LoadedBackend>> select_backends(const std::vector<std::string>& wanted,
                                                   std::vector<std::string>* notes) {
  const std::vector<LoadedBackend> all = available_backends(notes);
  if (wanted.empty()) return all;
  std::vector<LoadedBackend> out;
  for (const std::string& w : wanted) {
    if (w.find('/') != std::string::npos || w.ends_with(".so")) {
      Result<std::vector<LoadedBackend>> loaded = load_library(w);
      if (!loaded) return loaded.error();
      out.insert(out.end(), loaded->begin(), loaded->end());
      continue;
    }
    bool found = false;
    for (const LoadedBackend& b : all)
      if (w == b.abi->name) {
        out.push_back(b);
        found = true;
      }
    if (!found) {
      std::string names;
      for (const LoadedBackend& b : all) names += fmt::format(" {}", b.abi->name);
      return Error{fmt::format("--backend {}: no such backend (available:{}; or give a shared library's path)", w, names)};
    }
  }
  return out;
}

}  // namespace poolspec::certify
