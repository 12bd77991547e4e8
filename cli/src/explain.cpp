// `poolspec explain`: one output element, its window's taps, the divisor and the exact value.
#include "commands.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

int explain_command(const ProblemOptions& options, const std::string& input_path,
                    const std::string& at, int64_t max_taps, bool json) {
  if (input_path.empty()) return refuse("--input: required (a .npy file, or - for standard input)");
  if (at.empty()) return refuse("--at: required (the output coordinate n,c,o1,...)");
  if (max_taps < 1) return refuse(fmt::format("--max-taps={}: must be 1 or more", max_taps));
  Result<Tensor> input = read_input(input_path, options);
  if (!input) return refuse(input.error().message);
  Result<ResolvedProblem> r = resolve_problem(options, &*input);
  if (!r) return refuse(r.error().message);
  // Every tap is listed: the window's size is checked before any is.
  int64_t window_taps = 1;
  for (const Axis& a : r->problem.axes) {
    if (a.kernel < 1) continue;  // explain() refuses the problem
    if (a.kernel > max_taps / window_taps) {
      window_taps = max_taps + 1;
      break;
    }
    window_taps *= a.kernel;
  }
  if (window_taps > max_taps)
    return refuse(
        fmt::format("the window has more than {} taps, the most explain lists "
                    "(--max-taps raises it)",
                    max_taps));
  Result<std::vector<int64_t>> coordinate = parse_int_list("--at", at);
  if (!coordinate) return refuse(coordinate.error().message);
  // The coordinate is in the spec's (N, C, o1..on) layout.
  Result<Explanation> ex = explain(r->problem, to_spec_layout(r->framing, *input), *coordinate);
  if (!ex) return refuse(ex.error().message);
  const Problem& p = r->problem;

  if (json) {
    nlohmann::json taps = nlohmann::json::array();
    for (const Tap& t : ex->taps) {
      nlohmann::json tap = {
          {"offset", t.offset}, {"coordinate", t.coordinate}, {"kind", tap_kind_name(t.kind)}};
      tap["value"] = t.value ? json_number(*t.value) : nlohmann::json(nullptr);
      taps.push_back(tap);
    }
    nlohmann::json j = {{"problem", format_problem(p)},
                        {"output_coordinate", ex->output_coordinate},
                        {"taps", taps},
                        {"in_bounds", ex->in_bounds},
                        {"in_padded_extent", ex->in_padded_extent},
                        {"exact_value", ex->exact_value},
                        {"result", json_number(ex->result)},
                        {"rule", ex->rule}};
    j["divisor"] = ex->divisor ? nlohmann::json(*ex->divisor) : nlohmann::json(nullptr);
    j["index"] = ex->index ? nlohmann::json(*ex->index) : nlohmann::json(nullptr);
    print_json(j);
    return exit_ok;
  }
  fmt::print("problem      {}\n", format_problem(p));
  fmt::print("output       ({})\n", fmt::join(ex->output_coordinate, ","));
  fmt::print("taps         kernel offset -> input coordinate  kind       value\n");
  for (const Tap& t : ex->taps)
    fmt::print("             ({}) -> ({})  {:<10} {}\n", fmt::join(t.offset, ","),
               fmt::join(t.coordinate, ","), tap_kind_name(t.kind),
               t.value ? value_text(p.dtype, *t.value) : std::string("-"));
  fmt::print("counts       {} in the input, {} in the padded extent, {} taps\n", ex->in_bounds,
             ex->in_padded_extent, ex->taps.size());
  if (ex->divisor) fmt::print("divisor      {} ({})\n", *ex->divisor, divisor_name(p.divisor));
  fmt::print("exact value  {}\n", ex->exact_value);
  fmt::print("result       {} {}   [{}]\n", dtype_name(p.dtype), value_text(p.dtype, ex->result),
             ex->rule);
  if (ex->index) fmt::print("index        {} ({})\n", *ex->index, indices_name(p.indices));
  return exit_ok;
}

}  // namespace poolspec::cli
