// `poolspec seeds` (and `poolspec` with no arguments): runs the spec over the seed documents'
// own examples and reports, for each, whether the document agrees with the spec -- and, where it
// does not, the ERRATA.md entry that records the document's error.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"

#include "command_support.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/seeds.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

namespace {

struct Finding {
  const seeds::Example* example;
  std::string problem;  // canonical problem string
  std::vector<int64_t> computed_shape;
  std::vector<std::string> differences;  // document vs spec, human readable
  std::string verdict;                   // agrees | erratum | unrecorded | stale-erratum | error
};

Finding examine(const seeds::Example& e) {
  Finding f{&e, "", {}, {}, ""};
  const FrontendInput in{e.op, DType::f32, e.input_shape};
  Result<Problem> p = e.frontend == seeds::Frontend::openvino ? from_openvino(e.attributes, in)
                                                              : from_ngraph(e.attributes, in);
  if (!p) {
    f.verdict = "error";
    f.differences.push_back(p.error().message);
    return f;
  }
  f.problem = format_problem(*p);
  Result<ShapeInfo> shape = infer_shape(*p);
  f.computed_shape = shape->output_shape;
  if (f.computed_shape != e.documented_shape)
    f.differences.push_back(fmt::format("output shape: document {}, spec {}",
                                        fmt::join(e.documented_shape, "x"),
                                        fmt::join(f.computed_shape, "x")));
  if (!e.input.empty()) {
    Result<Output> out = evaluate(*p, Tensor{DType::f32, e.input_shape, e.input});
    if (!out) {
      f.verdict = "error";
      f.differences.push_back(out.error().message);
      return f;
    }
    for (size_t k = 0; k < e.documented_output.size(); ++k) {
      const size_t at = e.documented_at.empty() ? k : static_cast<size_t>(e.documented_at[k]);
      if (at >= out->values.values.size()) continue;
      const double got = out->values.values[at];
      if (got != e.documented_output[k]) {
        // Report the element's coordinate within the output.
        std::vector<int64_t> coordinate(f.computed_shape.size());
        size_t rest = at;
        for (size_t i = coordinate.size(); i > 0; --i) {
          coordinate[i - 1] =
              static_cast<int64_t>(rest % static_cast<size_t>(f.computed_shape[i - 1]));
          rest /= static_cast<size_t>(f.computed_shape[i - 1]);
        }
        f.differences.push_back(fmt::format("output ({}): document {}, spec {}",
                                            fmt::join(coordinate, ","), e.documented_output[k],
                                            got));
      }
    }
  }
  const bool agrees = f.differences.empty();
  if (agrees)
    f.verdict = e.erratum.empty() ? "agrees" : "stale-erratum";
  else
    f.verdict = e.erratum.empty() ? "unrecorded" : "erratum";
  return f;
}

// docs/semantics.md §1b: 4x4 input 1..16, kernel 3, stride 2, pads 1, ceil -- the example on
// which the frameworks' include-pad divisors split.
struct DivisorRow {
  std::string mode;
  std::string problem;
  std::vector<double> output;
};

std::vector<DivisorRow> divisor_table() {
  std::vector<double> input(16);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<double>(i + 1);
  std::vector<DivisorRow> rows;
  for (std::string_view divisor : {"exclude", "include_clip", "include_full", "override=9"}) {
    const std::string text =
        fmt::format("avg:f32:n1c1:h4w4:k3x3:s2x2:pb1x1:pe1x1:{}:ceil", divisor);
    Result<Problem> p = parse_problem(text);
    Result<Output> out = evaluate(*p, Tensor{DType::f32, {1, 1, 4, 4}, input});
    rows.push_back({std::string(divisor), text, out ? out->values.values : std::vector<double>{}});
  }
  return rows;
}

// The AvgPool-1 document's output formula, read literally (ERRATA E1):
// "H_out = (H + pads_begin[0] + pads_end[0] - kernel[0] / strides[0]) + 1".
double literal_openvino_formula(double h, double pb, double pe, double k, double s) {
  return (h + pb + pe - k / s) + 1;
}

}  // namespace

int seeds_command(bool json) {
  std::vector<Finding> findings;
  for (const seeds::Example& e : seeds::examples()) findings.push_back(examine(e));
  const std::vector<DivisorRow> divisors = divisor_table();

  bool failed = false;
  for (const Finding& f : findings)
    failed =
        failed || f.verdict == "unrecorded" || f.verdict == "stale-erratum" || f.verdict == "error";

  if (json) {
    nlohmann::json j;
    for (const Finding& f : findings)
      j["examples"].push_back({{"id", f.example->id},
                               {"source", f.example->source},
                               {"attributes", f.example->attributes},
                               {"problem", f.problem},
                               {"documented_shape", f.example->documented_shape},
                               {"computed_shape", f.computed_shape},
                               {"differences", f.differences},
                               {"erratum", f.example->erratum},
                               {"verdict", f.verdict}});
    for (const DivisorRow& r : divisors)
      j["divisor_modes"].push_back(
          {{"divisor", r.mode}, {"problem", r.problem}, {"output", r.output}});
    j["ok"] = !failed;
    print_json("seeds", j);
    return failed ? exit_check_failed : exit_ok;
  }

  fmt::print("poolspec: the spec over the seed documents' own examples\n\n");
  for (const Finding& f : findings) {
    const std::string_view mark = f.verdict == "agrees"    ? "agrees "
                                  : f.verdict == "erratum" ? "ERRATUM"
                                                           : "FAILED ";
    fmt::print("[{}] {}\n", mark, f.example->source);
    fmt::print("          {}\n", f.example->attributes);
    if (!f.problem.empty()) fmt::print("          -> {}\n", f.problem);
    fmt::print("          output {}", fmt::join(f.computed_shape, "x"));
    if (f.verdict == "agrees")
      fmt::print(", as documented\n");
    else
      fmt::print("\n");
    for (const std::string& d : f.differences) fmt::print("          {}\n", d);
    if (f.verdict == "erratum")
      fmt::print("          the document is wrong here: spec/ERRATA.md {}\n", f.example->erratum);
    if (f.verdict == "stale-erratum")
      fmt::print("          ERRATA.md {} is recorded but the document now agrees\n",
                 f.example->erratum);
    if (f.verdict == "unrecorded")
      fmt::print("          the document and the spec disagree and ERRATA.md says nothing\n");
  }

  fmt::print(
      "\nERRATA E1: the AvgPool-1 output formula read literally, "
      "(H + pb + pe - kernel / strides) + 1, against the shape rule:\n");
  for (const auto& [id, pb, pe, k, s] :
       {std::tuple{"XML example 3", 1, 1, 5, 3}, std::tuple{"XML example 4", 1, 1, 5, 2},
        std::tuple{"XML example 5", 0, 0, 5, 2}}) {
    const int64_t rule = (32 + pb + pe - k) / s + 1;
    fmt::print("          {}: formula {:.4g}, rule floor((32 + {} + {} - {}) / {}) + 1 = {}\n", id,
               literal_openvino_formula(32, pb, pe, k, s), pb, pe, k, s, rule);
  }

  fmt::print(
      "\nDivisor modes on 4x4 input 1..16, kernel 3, stride 2, pads 1, ceil "
      "(docs/semantics.md 1b):\n");
  for (const DivisorRow& r : divisors) {
    fmt::print("  {:<13}", r.mode);
    for (size_t i = 0; i < r.output.size(); ++i)
      fmt::print("{}{:8.4f}", i % 3 == 0 && i ? "  |" : "", r.output[i]);
    fmt::print("\n");
  }
  fmt::print("\n{} examples: {} as documented, {} document errata (recorded), {} unexpected\n",
             findings.size(),
             std::count_if(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.verdict == "agrees"; }),
             std::count_if(findings.begin(), findings.end(),
                           [](const Finding& f) { return f.verdict == "erratum"; }),
             std::count_if(findings.begin(), findings.end(), [](const Finding& f) {
               return f.verdict != "agrees" && f.verdict != "erratum";
             }));
  return failed ? exit_check_failed : exit_ok;
}

}  // namespace poolspec::cli
