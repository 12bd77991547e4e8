// The bodies of `poolspec shape`, `run` and `explain`: compute, then print text or JSON.
// Each returns the process exit code: 0 ok, 1 check failed, 2 bad input.
#pragma once

#include <string>
#include <vector>

#include "problem_source.hpp"

namespace poolspec::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;
inline constexpr int exit_bad_input = 2;

// Prints "poolspec: error: <message>" on stderr and returns exit_bad_input.
int refuse(const std::string& message);

// "(n,c,o1,...)": the coordinate of the flat (row-major) element `flat` of a tensor of `shape`.
std::string coordinate_text(const std::vector<int64_t>& shape, size_t flat);

int shape_command(const ProblemOptions& options, bool json);

struct RunOptions {
  std::string input, output, indices;
  std::string xs3;  // --xs3 'op=avgpool2d_global bias=-40 symmetric=0': run lib_nn's model
};
int run_command(const ProblemOptions& options, const RunOptions& run, bool json);

int explain_command(const ProblemOptions& options, const std::string& input,
                    const std::string& at, bool json);

struct ProveOptions {
  std::string filter;     // run the proofs whose name contains it
  std::string emit_smt2;  // write every query as SMT-LIB into this folder
  unsigned timeout_ms = 60000;  // per query; a timeout is a failure
  bool list = false;
};
int prove_command(const ProveOptions& options, bool json);

// `poolspec diff`: the problem under every framework's rules; 1 when some disagree.
int diff_command(const ProblemOptions& options, const std::string& input,
                 const std::string& values, bool json);

// The main job until `poolspec certify` exists: the spec over the seed documents' examples.
int seeds_command(bool json);

}  // namespace poolspec::cli
