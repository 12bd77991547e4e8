// `poolspec shape`: the resolved problem, its output shape, and whether a window can be empty.
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

std::vector<int64_t> pads(const Problem& p, bool begin) {
  std::vector<int64_t> v;
  for (const Axis& a : p.axes) v.push_back(begin ? a.pad_begin : a.pad_end);
  return v;
}

std::string empty_window_text(const Problem& p, const ShapeInfo& s) {
  if (!s.empty_window)
    return p.op == Op::avg ? "none: every window has a non-zero divisor"
                           : "none: every window holds an input element";
  const EmptyWindowWitness& w = *s.empty_window;
  return fmt::format(
      "yes: output index {} of spatial axis {} (first tap at input coordinate "
      "{}) has {}; {}",
      w.index, w.axis, w.start, p.op == Op::avg ? "divisor 0" : "no input element",
      p.empty == EmptyWindow::error
          ? std::string("the problem's empty=error refuses it")
          : fmt::format("it yields empty={}", empty_window_name(p.empty)));
}

// StableHLO's empty result (C15): defined, with no element and no Problem.
int shape_empty(const EmptyResult& empty, bool json) {
  const std::vector<int64_t>& input = empty.input_shape;
  if (json) {
    nlohmann::json j;
    j["problem"] = nullptr;
    j["source"] = "stablehlo";
    j["operator"] = nullptr;
    j["input_shape"] = input;
    j["output_shape"] = empty.output_shape;
    j["valid"] = true;
    j["verdict"] = RuleVerdict{}.name();
    j["empty_result"] = empty.why;
    print_json("shape", j);
  } else {
    fmt::print("problem       none: the result is empty\n");
    fmt::print("source        stablehlo\n");
    fmt::print("input shape   {}\n", fmt::join(input, "x"));
    fmt::print("output shape  {}\n", fmt::join(empty.output_shape, "x"));
    fmt::print("verdict       {}: an empty result; {}\n", RuleVerdict{}.name(), empty.why);
  }
  return exit_ok;
}

}  // namespace

int shape_command(const ProblemOptions& options, bool json) {
  Result<ResolvedProblem> r = resolve_problem(options, nullptr);
  if (!r) {
    if (std::optional<EmptyResult> empty = empty_result(options, nullptr); empty)
      return shape_empty(*empty, json);
    return refuse(r.error().message);
  }
  const Problem& p = r->problem;
  Result<ShapeInfo> s = infer_shape(p);
  if (!s) return refuse(s.error().message);
  const Status valid = validate(p);
  if (json) {
    nlohmann::json j;
    j["problem"] = format_problem(p);
    j["source"] = r->frontend;
    j["operator"] = json_text_or_null(r->operator_name);
    j["input_shape"] = r->framing.input_shape;
    j["output_shape"] = to_framework_shape(r->framing, s->output_shape);
    j["spec_input_shape"] = s->input_shape;
    j["spec_output_shape"] = s->output_shape;
    if (has_holes(r->framing)) j["base_dilations"] = r->framing.base_dilation;
    j["pads_begin"] = pads(p, true);
    j["pads_end"] = pads(p, false);
    j["zero_divisor_possible"] = s->empty_window.has_value();
    if (s->empty_window)
      j["empty_window"] = {{"axis", s->empty_window->axis},
                           {"index", s->empty_window->index},
                           {"start", s->empty_window->start}};
    else
      j["empty_window"] = nullptr;
    j["valid"] = valid.ok();
    j["verdict"] = !valid ? "invalid" : r->verdict.name();
    if (r->verdict.kind == RuleVerdict::unpredictable) j["unpredictable"] = r->verdict.why;
    if (!r->verdict.bound.empty()) j["bound"] = r->verdict.bound;
    if (!valid) j["error"] = valid.error().message;
    print_json("shape", j);
  } else {
    fmt::print("problem       {}\n", format_problem(p));
    fmt::print("source        {}{}\n", r->frontend,
               r->operator_name.empty() ? "" : " (" + r->operator_name + ")");
    fmt::print("input shape   {}\n", fmt::join(r->framing.input_shape, "x"));
    fmt::print("output shape  {}\n",
               fmt::join(to_framework_shape(r->framing, s->output_shape), "x"));
    if (r->framing.input_shape != s->input_shape) {
      std::string how;
      if (r->framing.channels_last) how += "; the framework is channels-last";
      if (has_holes(r->framing))
        how += fmt::format("; base dilation {}: holes of {} between the input's elements",
                           fmt::join(r->framing.base_dilation, ","),
                           value_text(p.dtype, r->framing.hole));
      if (crops(r->framing)) how += "; the input cropped where no window reads";
      fmt::print("spec layout   {} -> {} (N, C, spatial{})\n", fmt::join(s->input_shape, "x"),
                 fmt::join(s->output_shape, "x"), how);
    }
    fmt::print("pads          begin {}  end {}\n", fmt::join(pads(p, true), ","),
               fmt::join(pads(p, false), ","));
    // StableHLO's holes are the Problem's input elements: a window of holes only is not empty.
    fmt::print("empty window  {}{}\n", empty_window_text(p, *s),
               has_holes(r->framing)
                   ? fmt::format("; the holes count as input elements (a window of holes only "
                                 "yields the init value, {})",
                                 value_text(p.dtype, r->framing.hole))
                   : std::string());
    if (valid) fmt::print("verdict       {}\n", r->verdict.text());
  }
  if (!valid) return refuse(valid.error().message);
  return exit_ok;
}

}  // namespace poolspec::cli
