// The backends `poolspec certify` can hold to the spec: the in-tree engines (built in), the
// adapters for real libraries (shared libraries built beside poolspec when their library is
// found), and any shared library given by path that exports poolspec_backend_entry (backend.h).
#pragma once

#include <string>
#include <vector>

#include "poolspec/backend.h"
#include "poolspec/result.hpp"

namespace poolspec::certify {

struct LoadedBackend {
  const poolspec_backend* abi = nullptr;
  std::string origin;  // "built-in", or the shared library's path
};

// Every backend a shared library provides (entry(0), entry(1), ... until NULL), each checked.
Result<std::vector<LoadedBackend>> load_library(const std::string& path);

// reference, optimized, xs3; then the adapters found (oneDNN, XNNPACK, libtorch).
std::vector<LoadedBackend> available_backends(std::vector<std::string>* notes);

// Names of available backends, or paths of shared libraries (containing '/' or ending in .so).
Result<std::vector<LoadedBackend>> select_backends(const std::vector<std::string>& wanted,
                                                   std::vector<std::string>* notes);

}  // namespace poolspec::certify
