#include "onnx_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "poolspec/dtype.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

namespace {

namespace fs = std::filesystem;

template <class Message>
Result<Message> read_message(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{fmt::format("{}: cannot open", path.string())};
  Message m;
  if (!m.ParseFromIstream(&file))
    return Error{fmt::format("{}: not a valid protobuf message", path.string())};
  return m;
}

Result<DType> dtype_of(int onnx_type, const std::string& where) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DType::f32;
    case onnx::TensorProto::DOUBLE: return DType::f64;
    case onnx::TensorProto::FLOAT16: return DType::f16;
    case onnx::TensorProto::BFLOAT16: return DType::bf16;
    case onnx::TensorProto::INT8: return DType::i8;
    case onnx::TensorProto::UINT8: return DType::u8;
    case onnx::TensorProto::INT32: return DType::i32;
    default:
      return Error{
          fmt::format("{}: ONNX element type {} is not a poolspec dtype", where, onnx_type)};
  }
}

// A TensorProto's values as doubles (int64 too: indices are below 2^53 here), from raw_data
// (little-endian) or the typed fields.
struct Values {
  std::vector<int64_t> shape;
  int onnx_type = 0;
  std::vector<double> values;
};

Result<Values> tensor_values(const onnx::TensorProto& t, const std::string& where) {
  Values v;
  for (int64_t d : t.dims()) v.shape.push_back(d);
  v.onnx_type = t.data_type();
  int64_t count = 1;
  for (int64_t d : v.shape) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d))
      return Error{fmt::format("{}: dims ({}) are not a tensor poolspec can hold", where,
                               fmt::join(v.shape, ","))};
    count *= d;
  }
  const auto n = static_cast<size_t>(count);
  const std::string& raw = t.raw_data();
  const auto from_raw = [&](size_t width, auto decode) -> Status {
    if (raw.size() != n * width)
      return Error{fmt::format("{}: raw_data holds {} bytes for {} elements of {} bytes", where,
                               raw.size(), n, width)};
    for (size_t i = 0; i < n; ++i) v.values.push_back(decode(raw.data() + i * width));
    return Ok{};
  };
  const auto le = [](const char* p, size_t width) {
    uint64_t bits = 0;
    for (size_t b = 0; b < width; ++b)
      bits |= uint64_t{static_cast<unsigned char>(p[b])} << (8 * b);
    return bits;
  };
  Status s = Ok{};
  const bool has_raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (has_raw)
        s = from_raw(4, [&](const char* p) {
          float f;
          const auto b = static_cast<uint32_t>(le(p, 4));
          std::memcpy(&f, &b, 4);
          return double(f);
        });
      else
        for (float f : t.float_data()) v.values.push_back(f);
      break;
    case onnx::TensorProto::DOUBLE:
      if (has_raw)
        s = from_raw(8, [&](const char* p) {
          double d;
          const uint64_t b = le(p, 8);
          std::memcpy(&d, &b, 8);
          return d;
        });
      else
        for (double d : t.double_data()) v.values.push_back(d);
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: {
      const bool half = t.data_type() == onnx::TensorProto::FLOAT16;
      const auto decode = [half](uint16_t bits) {
        return half ? f16_value(bits) : bf16_value(bits);
      };
      if (has_raw)
        s = from_raw(2, [&](const char* p) { return decode(static_cast<uint16_t>(le(p, 2))); });
      else
        for (int32_t bits : t.int32_data()) v.values.push_back(decode(static_cast<uint16_t>(bits)));
      break;
    }
    case onnx::TensorProto::INT8:
      if (has_raw)
        s = from_raw(1, [](const char* p) { return double(static_cast<int8_t>(*p)); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::UINT8:
      if (has_raw)
        s = from_raw(1, [](const char* p) { return double(static_cast<unsigned char>(*p)); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::INT32:
      if (has_raw)
        s = from_raw(4, [&](const char* p) { return double(static_cast<int32_t>(le(p, 4))); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::INT64:
      if (has_raw)
        s = from_raw(8, [&](const char* p) { return double(static_cast<int64_t>(le(p, 8))); });
      else
        for (int64_t x : t.int64_data()) v.values.push_back(static_cast<double>(x));
      break;
    default:
      return Error{fmt::format("{}: ONNX element type {} is not supported", where, t.data_type())};
  }
  if (!s) return s.error();
  if (v.values.size() != n)
    return Error{fmt::format("{}: {} values for dims ({})", where, v.values.size(),
                             fmt::join(v.shape, ","))};
  return v;
}

// A node's attributes in the front-end's text form: name=1 / name=3,3 / name=SAME_UPPER.
Result<std::string> attribute_text(const onnx::NodeProto& node) {
  std::vector<std::string> parts;
  for (const onnx::AttributeProto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: parts.push_back(fmt::format("{}={}", a.name(), a.i())); break;
      case onnx::AttributeProto::INTS:
        parts.push_back(fmt::format("{}={}", a.name(), fmt::join(a.ints(), ",")));
        break;
      case onnx::AttributeProto::STRING:
        parts.push_back(fmt::format("{}={}", a.name(), a.s()));
        break;
      default:
        return Error{fmt::format("attribute {}: type {} is not a pooling attribute type", a.name(),
                                 static_cast<int>(a.type()))};
    }
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

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

Result<OnnxCaseReport> run_onnx_case(const std::string& directory,
                                     const std::function<void(Problem&)>& mutate) {
  const fs::path dir(directory);
  Result<onnx::ModelProto> model = read_message<onnx::ModelProto>(dir / "model.onnx");
  if (!model) return model.error();
  OnnxCaseReport report;
  report.directory = directory;
  int64_t opset = 0;
  int default_domain_imports = 0;
  for (const onnx::OperatorSetIdProto& o : model->opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset = o.version();
      ++default_domain_imports;
    }
  // The model's opset decides the operator's version: a model that does not state it exactly
  // once, or states one that is not an opset, has no meaning to test.
  if (default_domain_imports != 1)
    return Error{
        fmt::format("{}: model.onnx imports the default (ai.onnx) domain {} times; a "
                    "model states its opset exactly once",
                    directory, default_domain_imports)};
  if (opset < 1 || opset > 22)
    return Error{
        fmt::format("{}: model.onnx's opset_import version {}: ONNX opsets run from 1 "
                    "(poolspec knows 1 to 22)",
                    directory, opset)};
  report.opset = static_cast<int>(opset);
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
  Result<std::string> text = attribute_text(node);
  if (!text) return Error{fmt::format("{}: {}", directory, text.error().message)};
  report.attributes = *text;

  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(entry.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return Error{fmt::format("{}: no test_data_set_* directory", directory)};

  for (const fs::path& set : sets) {
    OnnxDataSetReport r;
    r.name = set.filename().string();
    Result<onnx::TensorProto> x = read_message<onnx::TensorProto>(set / "input_0.pb");
    if (!x) return x.error();
    Result<Values> xv = tensor_values(*x, (set / "input_0.pb").string());
    if (!xv) return xv.error();
    Result<DType> dtype = dtype_of(xv->onnx_type, (set / "input_0.pb").string());
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

    Result<onnx::TensorProto> y = read_message<onnx::TensorProto>(set / "output_0.pb");
    if (!y) return y.error();
    Result<Values> yv = tensor_values(*y, (set / "output_0.pb").string());
    if (!yv) return yv.error();
    r.shape_ok = yv->shape == out->values.shape;
    if (!r.shape_ok) {
      r.first_mismatch = fmt::format("output shape: expected ({}), got ({})",
                                     fmt::join(yv->shape, ","), fmt::join(out->values.shape, ","));
      report.data_sets.push_back(r);
      continue;
    }
    // Float averages: the reference sums in the dtype, so compare within the derived bound.
    std::vector<double> mean_abs;
    int64_t taps = 1;
    const bool float_avg = p->op == Op::avg && is_float(p->dtype);
    if (float_avg) {
      Tensor abs_input = input;
      for (double& v : abs_input.values) v = std::fabs(v);
      Problem exact_abs = *p;
      exact_abs.dtype = DType::f64;
      abs_input.dtype = DType::f64;
      Result<Output> a = evaluate(exact_abs, abs_input);
      if (!a) return a.error();
      mean_abs = a->values.values;
      for (const Axis& ax : p->axes) taps *= ax.kernel;
    }
    for (size_t i = 0; i < yv->values.size(); ++i) {
      const double expected = yv->values[i], got = out->values.values[i];
      if (std::isnan(expected) && std::isnan(got)) continue;
      double ratio = 0;
      double bound = 0;
      if (expected != got) {
        bound = float_avg && std::isfinite(expected)
                    ? float_average_bound(p->dtype, taps, mean_abs[i], expected)
                    : 0;
        const double error = std::fabs(got - expected);
        ratio = bound > 0 ? error / bound : std::numeric_limits<double>::infinity();
        if (std::isnan(ratio)) ratio = std::numeric_limits<double>::infinity();
      }
      r.worst_ratio = std::max(r.worst_ratio, ratio);
      if (ratio > 1) {
        if (r.values_outside_bound == 0)
          r.first_mismatch = fmt::format("output {}: expected {}, got {}, allowed error {:.3g}",
                                         coordinate_text(yv->shape, i), expected, got, bound);
        ++r.values_outside_bound;
      }
    }
    if (fs::exists(set / "output_1.pb")) {
      Result<onnx::TensorProto> ind = read_message<onnx::TensorProto>(set / "output_1.pb");
      if (!ind) return ind.error();
      Result<Values> iv = tensor_values(*ind, (set / "output_1.pb").string());
      if (!iv) return iv.error();
      r.indices_differing = 0;
      if (out->indices.size() != iv->values.size()) {
        r.indices_differing = static_cast<int64_t>(iv->values.size());
        if (r.first_mismatch.empty())
          r.first_mismatch = "indices: the problem has no indices output";
      } else {
        for (size_t i = 0; i < iv->values.size(); ++i)
          if (static_cast<double>(out->indices[i]) != iv->values[i]) {
            if (r.indices_differing == 0 && r.first_mismatch.empty())
              r.first_mismatch =
                  fmt::format("index {}: expected {}, got {}", coordinate_text(iv->shape, i),
                              iv->values[i], out->indices[i]);
            ++r.indices_differing;
          }
      }
    }
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
        sets.push_back({{"name", s.name},
                        {"shape_ok", s.shape_ok},
                        {"values_outside_bound", s.values_outside_bound},
                        {"worst_error_over_bound", s.worst_ratio},
                        {"indices_differing", s.indices_differing},
                        {"first_mismatch", s.first_mismatch}});
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
    print_json({{"cases", cases}, {"passed", passed}, {"failed", failed}});
  else
    fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? exit_ok : exit_check_failed;
}

}  // namespace poolspec::cli
