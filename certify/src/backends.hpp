// The backends `poolspec certify` can hold to the spec: the in-tree engines (built in), the
// adapters for real libraries (shared libraries built beside poolspec when their library is
// found), and any shared library given by path that exports poolspec_backend_entry (backend.h).
// poolspec never loads a backend library itself: a worker (worker.hpp) loads it and describes it.
#pragma once

#include <string>
#include <vector>

#include "poolspec/result.hpp"
#include "worker.hpp"

namespace poolspec::certify {

struct LoadedBackend {
  std::string library;  // what the worker loads: an absolute path, or "built-in"
  BackendDescription description;
  bool given_by_path = false;  // --backend PATH, not a built-in engine or an adapter poolspec found
  std::string origin() const { return library; }
  const std::string& name() const { return description.name; }
};

// A library (or one of its backends) that could not be loaded: a certification failure of its own.
struct LoadFailure {
  std::string library;
  std::string name;  // the library's file name when no backend name is known
  std::string detail;
};

struct BackendSelection {
  std::vector<LoadedBackend> backends;
  std::vector<LoadFailure> failures;
  bool all_in_pid_namespaces = true;  // every describing worker was
};

// Names of available backends, or paths of shared libraries (containing '/' or ending in .so);
// empty: every available backend. A name picks the built-in engines of that name and those of
// the libraries given by path (a library then contributes only its backends named, all of them
// when none is), else the adapter of that name. An unknown name or a path that is not a readable
// file is bad input; a library that does not load is a LoadFailure. `worker` gives the limits (its
// library and log are set here); what the libraries print while loading goes to their logs in
// `out_dir` ("": nowhere).
Result<BackendSelection> select_backends(const std::vector<std::string>& wanted,
                                         const WorkerConfig& worker, const std::string& out_dir);

// The log of a library's workers in `out_dir`: <out_dir>/logs/<the library's file name>.log.
std::string backend_log(const std::string& out_dir, const std::string& library);

// The folder of the running program (the worker and the adapters are looked for there first).
std::string program_folder();

// The waivers poolspec ships: beside the program in a build tree, else in the install prefix's
// share/poolspec/ (found relative to the program), else the source tree's (the test programs).
std::string default_waivers();

}  // namespace poolspec::certify
