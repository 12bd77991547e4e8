#include "onnx_test.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "onnx_files.hpp"
#include "poolspec/dtype.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

namespace {

namespace fs = std::filesystem;

}  // namespace

bool OnnxCaseReport::passed() const {
  if (data_sets.empty()) return false;
  for (const OnnxDataSetReport& d : data_sets)
    if (!d.shape_ok || d.values_outside_bound != 0 || d.indices_differing > 0) return false;
  return true;
}

double float_average_bound(DType dtype, int64_t taps, double mean_of_abs, double expected) {
  const FloatFormat f = float_format(dtype);
  const double u = std::ldexp(1.0, -f.precision);  // unit roundoff
  const double n = static_cast<double>(taps);
  const double gamma = n * u / (1 - n * u);
  const double magnitude = std::max(std::fabs(expected), std::ldexp(1.0, f.min_exponent));
  const double half_ulp = std::ldexp(1.0, std::ilogb(magnitude) - f.precision);
  return gamma * mean_of_abs * (1 + u) + half_ulp;
}

Result<OnnxDataSetReport> compare_with_stored(const Problem& p, const Tensor& input,
                                              const Output& out, const OnnxValues& expected,
                                              const OnnxValues* expected_indices) {
  OnnxDataSetReport r;
  r.shape_ok = expected.shape == out.values.shape;
  if (!r.shape_ok) {
    r.first_mismatch =
        fmt::format("output shape: expected ({}), got ({})", fmt::join(expected.shape, ","),
                    fmt::join(out.values.shape, ","));
    return r;
  }
  // Float averages: the reference sums in the dtype, so compare within the derived bound.
  std::vector<double> mean_abs;
  int64_t taps = 1;
  const bool float_avg = p.op == Op::avg && is_float(p.dtype);
  if (float_avg) {
    Tensor abs_input = input;
    for (double& v : abs_input.values) v = std::fabs(v);
    Problem exact_abs = p;
    exact_abs.dtype = DType::f64;
    abs_input.dtype = DType::f64;
    Result<Output> a = evaluate(exact_abs, abs_input);
    if (!a) return a.error();
    mean_abs = a->values.values;
    for (const Axis& ax : p.axes) taps *= ax.kernel;
  }
  for (size_t i = 0; i < expected.values.size(); ++i) {
    const double want = expected.values[i], got = out.values.values[i];
    if (std::isnan(want) && std::isnan(got)) continue;
    double ratio = 0;
    double bound = 0;
    if (want != got) {
      bound = float_avg && std::isfinite(want)
                  ? float_average_bound(p.dtype, taps, mean_abs[i], want)
                  : 0;
      const double error = std::fabs(got - want);
      ratio = bound > 0 ? error / bound : std::numeric_limits<double>::infinity();
      if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
    }
    r.worst_ratio = std::max(r.worst_ratio, ratio);
    if (ratio > 1) {
      if (r.values_outside_bound == 0)
        r.first_mismatch = fmt::format("output {}: expected {}, got {}, allowed error {:.3g}",
                                       coordinate_text(expected.shape, i), want, got, bound);
      ++r.values_outside_bound;
    }
  }
  if (expected_indices) {
    const OnnxValues& iv = *expected_indices;
    r.indices_differing = 0;
    if (out.indices.size() != iv.values.size()) {
      r.indices_differing = static_cast<int64_t>(iv.values.size());
      if (r.first_mismatch.empty()) r.first_mismatch = "indices: the problem has no indices output";
    } else {
      for (size_t i = 0; i < iv.values.size(); ++i)
        if (static_cast<double>(out.indices[i]) != iv.values[i]) {
          if (r.indices_differing == 0 && r.first_mismatch.empty())
            r.first_mismatch =
                fmt::format("index {}: expected {}, got {}", coordinate_text(iv.shape, i),
                            iv.values[i], out.indices[i]);
          ++r.indices_differing;
        }
    }
  }
  return r;
}

Result<OnnxCaseReport> run_onnx_case(const std::string& directory,
                                     const std::function<void(Problem&)>& mutate) {
  const fs::path dir(directory);
  Result<onnx::ModelProto> model = read_onnx_model((dir / "model.onnx").string());
  if (!model) return model.error();
  OnnxCaseReport report;
  report.directory = directory;
  Result<int> opset = default_domain_opset(*model, directory + ": model.onnx");
  if (!opset) return opset.error();
  report.opset = *opset;
  const onnx::GraphProto& graph = model->graph();
  if (graph.node_size() != 1)
    return Error{fmt::format("{}: the graph has {} nodes; onnx-test runs single pooling nodes",
                             directory, graph.node_size())};
  const onnx::NodeProto& node = graph.node(0);
  report.op_type = node.op_type();
  FrontendInput in;
  if (node.op_type() == "AveragePool")
    in.op = Op::avg;
  else if (node.op_type() == "MaxPool")
    in.op = Op::max;
  else if (node.op_type() == "GlobalAveragePool") {
    in.op = Op::avg;
    in.global = true;
  } else if (node.op_type() == "GlobalMaxPool") {
    in.op = Op::max;
    in.global = true;
  } else
    return Error{fmt::format("{}: op {} is not a pooling op", directory, node.op_type())};
  in.version = report.opset;
  Result<std::string> text = onnx_attribute_text(node);
  if (!text) return Error{fmt::format("{}: {}", directory, text.error().message)};
  report.attributes = *text;

  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return Error{fmt::format("{}: no test_data_set_* directory", directory)};

  for (const fs::path& set : sets) {
    Result<onnx::TensorProto> x =
        read_onnx_tensor((set / "input_0.pb").string(), default_max_elements);
    if (!x) return x.error();
    Result<OnnxValues> xv = onnx_tensor_values(*x, (set / "input_0.pb").string());
    if (!xv) return xv.error();
    Result<DType> dtype = dtype_of_onnx(xv->onnx_type, (set / "input_0.pb").string());
    if (!dtype) return dtype.error();
    in.dtype = *dtype;
    in.input_shape = xv->shape;
    Result<Problem> p = from_onnx(report.attributes, in);
    if (!p)
      return Error{
          fmt::format("{}: the onnx front-end refuses it: {}", directory, p.error().message)};
    if (mutate) mutate(*p);
    report.problem = format_problem(*p);
    Result<Tensor> made = make_tensor(*dtype, xv->shape, xv->values);
    if (!made)
      return Error{fmt::format("{}: {}", (set / "input_0.pb").string(), made.error().message)};
    const Tensor& input = *made;
    Result<Output> out = evaluate(*p, input);
    if (!out) return Error{fmt::format("{}: {}", directory, out.error().message)};

    Result<onnx::TensorProto> y =
        read_onnx_tensor((set / "output_0.pb").string(), default_max_elements);
    if (!y) return y.error();
    Result<OnnxValues> yv = onnx_tensor_values(*y, (set / "output_0.pb").string());
    if (!yv) return yv.error();
    std::optional<OnnxValues> iv;
    if (fs::exists(set / "output_1.pb")) {
      Result<onnx::TensorProto> ind =
          read_onnx_tensor((set / "output_1.pb").string(), default_max_elements);
      if (!ind) return ind.error();
      Result<OnnxValues> values = onnx_tensor_values(*ind, (set / "output_1.pb").string());
      if (!values) return values.error();
      iv = std::move(*values);
    }
    Result<OnnxDataSetReport> compared =
        compare_with_stored(*p, input, *out, *yv, iv ? &*iv : nullptr);
    if (!compared) return compared.error();
    OnnxDataSetReport r = std::move(*compared);
    r.name = set.filename().string();
    report.data_sets.push_back(r);
  }
  return report;
}

int onnx_test_command(const std::vector<std::string>& directories, bool json) {
  if (directories.empty()) return refuse("onnx-test: give one or more ONNX node-test directories");
  int passed = 0, failed = 0;
  nlohmann::json cases = nlohmann::json::array();
  for (const std::string& d : directories) {
    Result<OnnxCaseReport> r = run_onnx_case(d);
    if (!r) return refuse(r.error().message);
    const bool ok = r->passed();
    ok ? ++passed : ++failed;
    const std::string name = fs::path(d).filename().empty()
                                 ? fs::path(d).parent_path().filename().string()
                                 : fs::path(d).filename().string();
    if (json) {
      nlohmann::json sets = nlohmann::json::array();
      for (const OnnxDataSetReport& s : r->data_sets)
        sets.push_back(
            {{"name", s.name},
             {"shape_ok", s.shape_ok},
             {"values_outside_bound", s.values_outside_bound},
             {"worst_error_over_bound", s.worst_ratio},
             {"indices_differing", s.indices_differing < 0 ? nlohmann::json(nullptr)
                                                           : nlohmann::json(s.indices_differing)},
             {"first_mismatch", json_text_or_null(s.first_mismatch)}});
      cases.push_back({{"case", name},
                       {"op", r->op_type},
                       {"opset", r->opset},
                       {"attributes", r->attributes},
                       {"problem", r->problem},
                       {"passed", ok},
                       {"data_sets", sets}});
    } else {
      double worst = 0;
      std::string mismatch;
      for (const OnnxDataSetReport& s : r->data_sets) {
        worst = std::max(worst, s.worst_ratio);
        if (mismatch.empty()) mismatch = s.first_mismatch;
      }
      fmt::print("{}  {:<58} {} (opset {})  {}\n", ok ? "PASS" : "FAIL", name, r->op_type, r->opset,
                 r->problem);
      if (worst > 0 && ok)
        fmt::print("      within the float bound (worst error {:.2f} of the bound)\n", worst);
      if (!ok) fmt::print("      {}\n", mismatch);
    }
  }
  if (json)
    print_json("onnx-test", {{"cases", cases}, {"passed", passed}, {"failed", failed}});
  else
    fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? exit_ok : exit_check_failed;
}

}  // namespace poolspec::cli
