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

namespace {

// A tap in the drawn window: its value, or where it lies when it holds none.
std::string cell_text(const Tap& t, DType dtype) {
  switch (t.kind) {
    case TapKind::input: return t.value ? value_text(dtype, *t.value) : "?";
    case TapKind::pad_begin: return "pad<";
    case TapKind::pad_end: return "pad>";
    case TapKind::overhang: return "over";
  }
  return "?";
}

// The window drawn in the kernel's shape: rows along the second-to-last spatial axis, columns
// along the last (one row for 1-d windows), one grid per offset of the axes before them. Headed
// by input coordinates: the framework's, crops undone, or with StableHLO's holes the dilated
// input's, each hole drawn as one (`in_framework`: the taps as framework_tap gives them). Drawn
// only when it fits 100 columns and 64 grids.
void draw_window(const Problem& p, const Explanation& ex, const Framing& framing,
                 const std::vector<FrameworkTap>& in_framework) {
  const size_t rank = p.axes.size();
  const auto at = [&](const Tap& t, size_t axis) {
    return t.coordinate[axis] + (axis < framing.crop_begin.size() ? framing.crop_begin[axis] : 0);
  };
  const auto cell = [&](const Tap& t) {
    const size_t i = static_cast<size_t>(&t - ex.taps.data());
    return in_framework[i].kind == "hole" ? std::string("hole") : cell_text(t, p.dtype);
  };
  const int64_t columns = p.axes[rank - 1].kernel;
  const int64_t rows = rank >= 2 ? p.axes[rank - 2].kernel : 1;
  const int64_t per_grid = rows * columns;
  const int64_t grids = static_cast<int64_t>(ex.taps.size()) / per_grid;
  size_t width = 4;
  for (const Tap& t : ex.taps) width = std::max(width, cell(t).size());
  for (const Tap& t : ex.taps) width = std::max(width, fmt::format("{}", at(t, rank - 1)).size());
  constexpr size_t label = 13, row_header = 6;
  if (label + row_header + static_cast<size_t>(columns) * (width + 2) > text_width || grids > 64) {
    fmt::print(
        "window       {} taps in a window of {}: too large to draw in {} columns (the "
        "taps are listed below)\n",
        ex.taps.size(),
        fmt::format("{}", fmt::join(
                              [&] {
                                std::vector<int64_t> k;
                                for (const Axis& a : p.axes) k.push_back(a.kernel);
                                return k;
                              }(),
                              "x")),
        text_width);
    return;
  }
  fmt::print(
      "window       {} ({})\n",
      rank >= 2 ? fmt::format("rows: spatial axis {}, columns: spatial axis {}", rank - 2, rank - 1)
                : std::string("spatial axis 0"),
      has_holes(framing) ? "coordinates in the dilated input" : "input coordinates");
  fmt::print("{:<{}}pad< begin padding, pad> end padding, over: past the padded extent\n", "",
             label);
  for (int64_t g = 0; g < grids; ++g) {
    const Tap& first = ex.taps[static_cast<size_t>(g * per_grid)];
    if (grids > 1) {
      std::vector<std::string> where;
      for (size_t a = 0; a + 2 < rank; ++a)
        where.push_back(fmt::format("spatial axis {} = {}", a, at(first, a)));
      fmt::print("{:<{}}where {}\n", "", label, fmt::join(where, ", "));
    }
    std::string header(label + row_header, ' ');
    for (int64_t c = 0; c < columns; ++c)
      header += fmt::format("  {:>{}}",
                            at(ex.taps[static_cast<size_t>(g * per_grid + c)], rank - 1), width);
    fmt::print("{}\n", header);
    for (int64_t r = 0; r < rows; ++r) {
      const Tap& row_first = ex.taps[static_cast<size_t>(g * per_grid + r * columns)];
      std::string line = std::string(label, ' ') +
                         (rank >= 2 ? fmt::format("{:>{}}", at(row_first, rank - 2), row_header)
                                    : std::string(row_header, ' '));
      for (int64_t c = 0; c < columns; ++c)
        line += fmt::format(
            "  {:>{}}", cell(ex.taps[static_cast<size_t>(g * per_grid + r * columns + c)]), width);
      fmt::print("{}\n", line);
    }
  }
}

}  // namespace

int explain_command(const ProblemOptions& options, const std::string& input_path,
                    const std::string& at, int64_t max_taps, bool json) {
  if (input_path.empty()) return refuse("--input: required (a .npy file, or - for standard input)");
  if (at.empty()) return refuse("--at: required (the output coordinate n,c,o1,...)");
  if (max_taps < 1) return refuse(fmt::format("--max-taps={}: must be 1 or more", max_taps));
  Result<Tensor> input = read_input(input_path, options);
  if (!input) return refuse(input.error().message);
  Result<ResolvedProblem> r = resolve_problem(options, &*input);
  if (!r) return refuse(r.error().message);
  if (Status s = check_input_size(r->problem, options); !s) return refuse(s.error().message);
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
  // Each tap in the framework's input (crops undone, holes taken out); a tap on one of a base
  // dilation's holes is an element of the Problem's input, not of the framework's: `hole`.
  std::vector<FrameworkTap> taps;
  int64_t holes = 0;
  for (const Tap& t : ex->taps) {
    taps.push_back(framework_tap(r->framing, t));
    holes += taps.back().kind == "hole";
  }

  if (json) {
    nlohmann::json listed = nlohmann::json::array();
    for (size_t i = 0; i < ex->taps.size(); ++i) {
      const Tap& t = ex->taps[i];
      nlohmann::json tap = {
          {"offset", t.offset}, {"coordinate", taps[i].coordinate}, {"kind", taps[i].kind}};
      tap["value"] = t.value ? json_number(*t.value) : nlohmann::json(nullptr);
      listed.push_back(tap);
    }
    nlohmann::json j = {{"problem", format_problem(p)},
                        {"output_coordinate", ex->output_coordinate},
                        {"taps", listed},
                        {"in_bounds", ex->in_bounds},
                        {"in_padded_extent", ex->in_padded_extent},
                        {"exact_value", ex->exact_value},
                        {"result", json_number(ex->result)},
                        {"rule", ex->rule}};
    if (has_holes(r->framing)) j["holes"] = holes;
    j["divisor"] = ex->divisor ? nlohmann::json(*ex->divisor) : nlohmann::json(nullptr);
    j["index"] = ex->index ? nlohmann::json(*ex->index) : nlohmann::json(nullptr);
    print_json("explain", j);
    return exit_ok;
  }
  fmt::print("problem      {}\n", format_problem(p));
  fmt::print("output       ({})\n", fmt::join(ex->output_coordinate, ","));
  draw_window(p, *ex, r->framing, taps);
  fmt::print("taps         kernel offset -> input coordinate  kind       value\n");
  for (size_t i = 0; i < ex->taps.size(); ++i) {
    const Tap& t = ex->taps[i];
    fmt::print("             ({}) -> ({})  {:<10} {}\n", fmt::join(t.offset, ","),
               fmt::join(taps[i].coordinate, ","), taps[i].kind,
               t.value ? value_text(p.dtype, *t.value) : std::string("-"));
  }
  fmt::print("counts       {} in the input{}, {} in the padded extent, {} taps\n", ex->in_bounds,
             holes ? fmt::format(" ({} of them holes)", holes) : std::string(),
             ex->in_padded_extent, ex->taps.size());
  if (ex->divisor) fmt::print("divisor      {} ({})\n", *ex->divisor, divisor_name(p.divisor));
  fmt::print("exact value  {}\n", ex->exact_value);
  fmt::print("result       {} {}   [{}]\n", dtype_name(p.dtype), value_text(p.dtype, ex->result),
             ex->rule);
  if (ex->index) fmt::print("index        {} ({})\n", *ex->index, indices_name(p.indices));
  return exit_ok;
}

}  // namespace poolspec::cli
