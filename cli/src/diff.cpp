// `poolspec diff`: one problem, written in one framework's terms, evaluated under the rules of
// every framework that can express it, and where their outputs disagree.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "colour.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "framework_comparison.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"

namespace poolspec::cli {

namespace {

std::string plane_text(const FrameworkRow& row) {
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
  Result<Tensor> input = comparison_input(*source, intent, given ? &*given : nullptr);
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
  const std::vector<FrameworkRow> rows = compare_frameworks(own, intent, *input, options);
  if (!rows[0].refusal.empty()) return refuse(rows[0].refusal);

  int64_t disagreeing = 0;
  for (size_t i = 1; i < rows.size(); ++i) disagreeing += rows[i].differing > 0;
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const FrameworkRow& r : rows) {
      nlohmann::json j = {{"framework", r.translation.label},
                          {"attributes", r.translation.attributes},
                          {"verdict", r.verdict ? nlohmann::json(r.verdict->name()) : nullptr}};
      if (r.verdict && r.verdict->kind == RuleVerdict::unpredictable)
        j["unpredictable"] = r.verdict->why;
      if (!r.refusal.empty()) {
        j["expressible"] = false;
        j["reason"] = r.refusal;
      } else {
        j["expressible"] = true;
        j["operator"] = r.operator_name;
        j["problem"] = r.problem;
        j["output_shape"] = r.shape;
        j["differing_outputs"] = r.differing;
        j["largest_difference"] = json_number(r.largest);
        j["first_difference"] = json_text_or_null(r.first_difference);
        nlohmann::json output = nlohmann::json::array();
        if (r.values.size() <= 4096)
          for (double v : r.values) output.push_back(json_number(v));
        j["values"] = output;
      }
      list.push_back(j);
    }
    print_json("diff",
               {{"source", rows[0].translation.label},
                {"input_shape", intent.shape},
                {"input", given ? input_text : "ramp 1, 2, 3, ... in (N, C, spatial) order"},
                {"frameworks", list},
                {"disagreeing", disagreeing}});
  } else {
    constexpr size_t indent = 13;  // the framework's label, then its block
    fmt::print("source  {}\n",
               wrap_words(fmt::format("{} ({}): {}", rows[0].translation.label,
                                      rows[0].operator_name, rows[0].translation.attributes),
                          8));
    fmt::print(
        "input   {}\n\n",
        wrap_words(fmt::format("{} {}, {}", dtype_name(intent.dtype), fmt::join(intent.shape, "x"),
                               given                    ? input_text
                               : is_float(intent.dtype) ? "values 1, 2, 3, ... in (N, C, "
                                                          "spatial) order"
                                                        : "values 0, 1, 2, ... in (N, C, "
                                                          "spatial) order"),
                   8));
    // A framework's label is painted on a terminal: red where it differs, green where it agrees.
    const auto block = [&](const std::string& label, const std::string& text,
                           std::optional<Paint> paint = std::nullopt) {
      const std::string padded = fmt::format("{:<{}}", label, indent);
      fmt::print("{}{}\n", paint ? painted(stdout, *paint, padded) : padded,
                 wrap_words(text, indent));
    };
    for (const FrameworkRow& r : rows) {
      if (!r.refusal.empty()) {
        const bool invalid = r.verdict && r.verdict->kind == RuleVerdict::invalid;
        block(r.translation.label,
              (invalid ? "invalid (refused by its rules): " : "cannot express it: ") + r.refusal);
        fmt::print("\n");
        continue;
      }
      const bool shape_differs = r.shape != rows[0].shape;
      const std::string verdict =
          &r == &rows[0]  ? "(source)"
          : shape_differs ? fmt::format("DIFFERS: {}", r.first_difference)
          : r.differing == 0
              ? "agrees"
              : fmt::format("DIFFERS in {} of {} outputs, {}; first {}", r.differing,
                            r.values.size(),
                            r.largest == 0 ? std::string("in the sign of zero only")
                                           : fmt::format("largest by {:.4g}", r.largest),
                            r.first_difference);
      block(r.translation.label,
            fmt::format("{}, output {}: {}", r.operator_name,
                        fmt::join(std::vector<int64_t>(r.shape.begin() + 2, r.shape.end()), "x"),
                        verdict),
            &r == &rows[0] ? std::nullopt
                           : std::optional(shape_differs || r.differing != 0 ? Paint::failure
                                                                             : Paint::success));
      block("", r.translation.attributes);
      if (indent + r.problem.size() <= text_width)
        block("", r.problem);
      else  // never cut: a problem string is copied into other commands
        fmt::print("{}\n", r.problem);
      if (r.verdict && r.verdict->kind == RuleVerdict::unpredictable) block("", r.verdict->text());
      block("", fmt::format("[{}]", plane_text(r)));
      fmt::print("\n");
    }
    fmt::print("{} of {} other rules disagree with the source\n", disagreeing, rows.size() - 1);
  }
  return disagreeing == 0 ? exit_ok : exit_check_failed;
}

}  // namespace poolspec::cli
