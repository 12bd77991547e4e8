// `poolspec onnx-test`: ONNX backend node-test directories (model.onnx plus
// test_data_set_*/{input_0,output_0[,output_1]}.pb) run through the `onnx` front-end and
// compared with their stored outputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnx_files.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/problem.hpp"
#include "poolspec/result.hpp"

namespace poolspec::cli {

struct OnnxDataSetReport {
  std::string name;  // test_data_set_0
  bool shape_ok = false;
  int64_t values_outside_bound = 0;
  double worst_ratio = 0;          // max |got - expected| / bound over the elements (0 = exact)
  int64_t indices_differing = -1;  // -1: the case has no indices output
  std::string first_mismatch;      // "output (0,0,1,2): expected 3.5, got 3.25, bound 2.4e-7"
};

struct OnnxCaseReport {
  std::string directory;
  std::string op_type;
  int opset = 0;
  std::string attributes;  // the node's attributes as the front-end's text
  std::string problem;     // the resolved problem string
  std::vector<OnnxDataSetReport> data_sets;
  bool passed() const;
};

// Reads and runs one case directory. `mutate`, when given, alters the resolved Problem before it
// is evaluated (the tests use it to show that a wrong rule is caught). Errors: unreadable files,
// a model that is not a single pooling node, a problem the front-end refuses.
Result<OnnxCaseReport> run_onnx_case(const std::string& directory,
                                     const std::function<void(Problem&)>& mutate = {});

// The allowed error of a float average against a reference that sums in the dtype: the standard
// bound for a sum of n terms, gamma_n * sum|x| / divisor, plus half an ulp of the result.
double float_average_bound(DType dtype, int64_t taps, double mean_of_abs, double expected);

// The spec's output (`out`, of `problem` on `input`) against a framework's stored output: shapes
// equal, values equal (float averages: within float_average_bound), indices equal when given.
Result<OnnxDataSetReport> compare_with_stored(const Problem& problem, const Tensor& input,
                                              const Output& out, const OnnxValues& expected,
                                              const OnnxValues* expected_indices);

// The largest stored tensor onnx-test reads, in elements.
inline constexpr int64_t default_max_elements = int64_t{1} << 28;

int onnx_test_command(const std::vector<std::string>& directories, bool json);

}  // namespace poolspec::cli
