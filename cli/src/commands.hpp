// The commands of `poolspec` (cli/src/main.cpp holds their options), one file each: compute,
// then print text or JSON. Each returns the process exit status (exit_status.hpp). `certify`
// and `certify merge` are the certification runner's (certify/src/certify.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exit_status.hpp"
#include "problem_source.hpp"

namespace poolspec::cli {

int shape_command(const ProblemOptions& options, bool json);

struct RunOptions {
  std::string input, output, indices;
  std::string xs3;  // --xs3 'op=avgpool2d_global bias=-40 symmetric=0': run lib_nn's model
};
int run_command(const ProblemOptions& options, const RunOptions& run, bool json);

// Lists every tap of one window: refused when the window has more than `max_taps`.
int explain_command(const ProblemOptions& options, const std::string& input, const std::string& at,
                    int64_t max_taps, bool json);

struct ProveOptions {
  std::string filter;           // run the proofs whose name contains it
  std::string emit_smt2;        // write every query as SMT-LIB into this folder
  unsigned timeout_ms = 60000;  // per query; a timeout is a failure
  bool list = false;
};
int prove_command(const ProveOptions& options, bool json);

// `poolspec diff`: the problem under every framework's rules; 1 when some disagree.
int diff_command(const ProblemOptions& options, const std::string& input, const std::string& values,
                 bool json);

// `poolspec check-model`: every pooling node of an ONNX model (.onnx) or OpenVINO IR (.xml).
struct CheckModelOptions {
  std::string model;
  std::string format;                 // onnx, openvino; "" = by the file name's ending
  std::vector<std::string> shapes;    // NAME=1,3,224,224: a graph input's or a node's input
  std::vector<std::string> inputs;    // NODE=x.npy (or an ONNX TensorProto .pb): evaluate it
  std::vector<std::string> expected;  // NODE=y.npy: the runtime's output, to compare with
  std::string output_dir;             // where each evaluated node's output goes, NODE.npy
  int64_t max_elements = int64_t{1} << 28;
  int64_t max_tap_visits = int64_t{1} << 32;
};
int check_model_command(const CheckModelOptions& options, bool json);

// `poolspec seeds` (and `poolspec` with no command): the spec over the seed documents' examples.
int seeds_command(bool json);

}  // namespace poolspec::cli
