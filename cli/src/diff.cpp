// `poolspec diff`: one problem, written in one framework's terms, evaluated under the rules of
// every framework that can express it, and where their outputs disagree.
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "commands.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"

namespace poolspec::cli {

namespace {

struct Row {
  Translation translation;
  std::string operator_name, problem, refusal;
  std::vector<int64_t> shape;  // spec layout (N, C, o...)
  std::vector<double> values;
  // Against the source: -1 = not comparable (refused); else outputs that differ.
  int64_t differing = -1;
  double largest = 0;
  std::string first_difference;
};

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// The input in the spec's layout: the given .npy (in the source framework's layout), or the
// ramp 1, 2, 3, ... in row-major (N, C, d...) order, which makes every window's sum distinct
// (0, 1, 2, ... wrapping at the dtype's maximum for integers, so that pairs average to k + 1/2).
Result<Tensor> diff_input(const ResolvedProblem& source, const Intent& intent,
                          const Tensor* given) {
  if (given) {
    // Undo the source's layout and crop: channels-last back to first, and nothing cropped.
    Framing full = source.framing;
    full.crop_end.assign(full.crop_end.size(), 0);
    return to_spec_layout(full, *given);
  }
  Result<int64_t> count = element_count(intent.shape);
  if (!count || *count > (int64_t{1} << 24))
    return Error{
        fmt::format("--input-shape: {} elements; without --input, diff evaluates a ramp of "
                    "at most 2^24 elements",
                    fmt::join(intent.shape, "x"))};
  std::vector<double> ramp;
  for (int64_t i = 0; i < *count; ++i) {
    double v = static_cast<double>(i + 1);
    if (!is_float(intent.dtype))
      v = static_cast<double>(i % (int_max(intent.dtype) + 1));  // 0, 1, 2, ...
    ramp.push_back(v);
  }
  if (is_float(intent.dtype) && intent.dtype != DType::f64 && intent.dtype != DType::f32 &&
      *count > 256)
    return Error{
        "without --input, diff's ramp of a 16-bit float input must have at most 256 elements"};
  return make_tensor(intent.dtype, intent.shape, ramp);
}

Row evaluate_row(const Translation& t, const Tensor& spec_input, const ProblemOptions& options) {
  Row row{t, "", "", t.reason, {}, {}, -1, 0, ""};
  if (!t.reason.empty()) return row;
  Result<Frontend> f = from_framework(t.framework, t.attributes, t.input);
  if (!f) {
    row.refusal = f.error().message;
    return row;
  }
  row.operator_name = f->operator_name;
  row.problem = format_problem(f->problem);
  if (Status s = check_output_size(f->problem, options); !s) {  // before evaluating it
    row.refusal = s.error().message;
    return row;
  }
  // The framework sees the input in its layout; its Problem takes it back (and crops).
  const Tensor framework_input = to_framework_layout(f->framing, spec_input);
  Result<Output> out = evaluate(f->problem, to_spec_layout(f->framing, framework_input));
  if (!out) {
    row.refusal = out.error().message;
    return row;
  }
  row.shape = out->values.shape;
  row.values = out->values.values;
  return row;
}

void compare(Row& row, const Row& source, DType dtype) {
  if (!row.refusal.empty() || !source.refusal.empty()) return;
  row.differing = 0;
  if (row.shape != source.shape) {
    row.differing = static_cast<int64_t>(std::max(row.values.size(), source.values.size()));
    row.first_difference = fmt::format("output shape {} here, {} in the source",
                                       fmt::join(row.shape, "x"), fmt::join(source.shape, "x"));
    return;
  }
  for (size_t i = 0; i < row.values.size(); ++i) {
    if (same(row.values[i], source.values[i])) continue;
    const double d = std::fabs(row.values[i] - source.values[i]);
    if (row.differing == 0)
      row.first_difference =
          fmt::format("at {}: {} here, {} in the source", coordinate_text(row.shape, i),
                      value_text(dtype, row.values[i]), value_text(dtype, source.values[i]));
    ++row.differing;
    if (!(d <= row.largest)) row.largest = d;  // NaN against a number: the largest is NaN
  }
}

std::string plane_text(const Row& row) {
  // The first (n, c) plane, rows of the last axis separated by '/'.
  if (row.shape.size() < 3) return "";
  size_t plane = 1;
  for (size_t i = 2; i < row.shape.size(); ++i) plane *= static_cast<size_t>(row.shape[i]);
  const size_t width = static_cast<size_t>(row.shape.back());
  std::string s;
  for (size_t i = 0; i < plane && i < row.values.size(); ++i) {
    if (i > 0) s += i % width == 0 ? " / " : " ";
    s += fmt::format("{:.4g}", row.values[i]);
  }
  return s;
}

// "nan,1,3,3": the values of a tensor of `shape`, row-major in the framework's layout.
Result<Tensor> parse_values(const std::string& text, DType dtype,
                            const std::vector<int64_t>& shape) {
  std::vector<double> values;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, comma - begin);
    if (item == "nan")
      values.push_back(std::numeric_limits<double>::quiet_NaN());
    else if (item == "inf")
      values.push_back(std::numeric_limits<double>::infinity());
    else if (item == "-inf")
      values.push_back(-std::numeric_limits<double>::infinity());
    else {
      double v = 0;
      const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
        return Error{fmt::format("--values: '{}' is not a number (or nan, inf, -inf)", item)};
      values.push_back(v);
    }
    begin = comma + 1;
  }
  Result<Tensor> t = make_tensor(dtype, shape, values);
  if (!t) return Error{fmt::format("--values: {}", t.error().message)};
  return t;
}

}  // namespace

int diff_command(const ProblemOptions& options, const std::string& input_path,
                 const std::string& values, bool json) {
  if (!options.problem.empty())
    return refuse(
        "diff: give the problem in one framework's terms (--pytorch, --onnx, ...), not a "
        "problem string, so that each framework's rules can be applied to it");
  if (!input_path.empty() && !values.empty())
    return refuse("--values: give --input or --values, not both");
  std::optional<Tensor> given;
  std::string input_text = input_path;
  if (!input_path.empty()) {
    Result<Tensor> t = read_input(input_path, options);
    if (!t) return refuse(t.error().message);
    given = std::move(*t);
  } else if (!values.empty()) {
    Result<FrontendInput> in = frontend_input(options, nullptr);
    if (!in) return refuse(in.error().message);
    Result<Tensor> t = parse_values(values, in->dtype, in->input_shape);
    if (!t) return refuse(t.error().message);
    given = std::move(*t);
    input_text = "values " + values;
  }
  Result<ResolvedProblem> source = resolve_problem(options, given ? &*given : nullptr);
  if (!source) return refuse(source.error().message);
  const Frontend source_frontend{source->problem, source->framing, source->operator_name};
  const Intent intent = intent_of(source_frontend);
  if (Result<int64_t> count = element_count(intent.shape);
      !given && count && *count > options.max_elements)
    return refuse(
        fmt::format("the input ({}) has {} elements, over the limit of {} "
                    "(--max-elements raises it)",
                    fmt::join(intent.shape, "x"), *count, options.max_elements));
  Result<Tensor> input = diff_input(*source, intent, given ? &*given : nullptr);
  if (!input) return refuse(input.error().message);

  // The source itself first, with the user's own attributes; then every translation.
  const auto& [source_framework, source_attributes] = *options.attributes.begin();
  Translation own{source_framework,
                  std::string(framework_name(source_framework)) +
                      (options.opset ? fmt::format("@{}", options.opset) : ""),
                  source_attributes, FrontendInput{}, ""};
  Result<FrontendInput> in = frontend_input(options, given ? &*given : nullptr);
  if (!in) return refuse(in.error().message);
  own.input = *in;
  std::vector<Row> rows{evaluate_row(own, *input, options)};
  if (!rows[0].refusal.empty()) return refuse(rows[0].refusal);
  rows[0].differing = 0;
  for (const Translation& t : translate(intent)) {
    Row row = evaluate_row(t, *input, options);
    compare(row, rows[0], input->dtype);
    rows.push_back(std::move(row));
  }

  int64_t disagreeing = 0;
  for (size_t i = 1; i < rows.size(); ++i) disagreeing += rows[i].differing > 0;
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json j = {{"framework", r.translation.label},
                          {"attributes", r.translation.attributes}};
      if (!r.refusal.empty()) {
        j["expressible"] = false;
        j["reason"] = r.refusal;
      } else {
        j["expressible"] = true;
        j["operator"] = r.operator_name;
        j["problem"] = r.problem;
        j["output_shape"] = r.shape;
        j["differing_outputs"] = r.differing;
        j["largest_difference"] =
            std::isnan(r.largest) ? nlohmann::json("nan") : nlohmann::json(r.largest);
        j["first_difference"] = r.first_difference;
        nlohmann::json output = nlohmann::json::array();
        if (r.values.size() <= 4096)
          for (double v : r.values)
            output.push_back(std::isfinite(v) ? nlohmann::json(v)
                                              : nlohmann::json(fmt::format("{}", v)));
        j["values"] = output;
      }
      list.push_back(j);
    }
    print_json({{"source", rows[0].translation.label},
                {"input_shape", intent.shape},
                {"input", given ? input_text : "ramp 1, 2, 3, ... in (N, C, spatial) order"},
                {"frameworks", list},
                {"disagreeing", disagreeing}});
  } else {
    fmt::print("source  {} ({}): {}\n", rows[0].translation.label, rows[0].operator_name,
               rows[0].translation.attributes);
    fmt::print("input   {} {}, {}\n\n", dtype_name(intent.dtype), fmt::join(intent.shape, "x"),
               given                    ? input_text
               : is_float(intent.dtype) ? "values 1, 2, 3, ... in (N, C, spatial) order"
                                        : "values 0, 1, 2, ... in (N, C, spatial) order");
    for (const Row& r : rows) {
      if (!r.refusal.empty()) {
        fmt::print("{:<12} cannot express it: {}\n", r.translation.label, r.refusal);
        continue;
      }
      const bool shape_differs = r.shape != rows[0].shape;
      const std::string verdict =
          &r == &rows[0]  ? "(source)"
          : shape_differs ? fmt::format("DIFFERS: {}", r.first_difference)
          : r.differing == 0
              ? "agrees"
              : fmt::format("DIFFERS: {} of {} outputs, largest by {:.4g}; first {}", r.differing,
                            r.values.size(), r.largest, r.first_difference);
      fmt::print(
          "{:<12} {:<28} {:<8} {}\n", r.translation.label, r.operator_name,
          fmt::format("{}",
                      fmt::join(std::vector<int64_t>(r.shape.begin() + 2, r.shape.end()), "x")),
          verdict);
      fmt::print("{:<12} {}\n", "", r.translation.attributes);
      fmt::print("{:<12} {}\n", "", r.problem);
      fmt::print("{:<12} [{}]\n\n", "", plane_text(r));
    }
    fmt::print("{} of {} other rules disagree with the source\n", disagreeing, rows.size() - 1);
  }
  return disagreeing == 0 ? exit_ok : exit_check_failed;
}

}  // namespace poolspec::cli
