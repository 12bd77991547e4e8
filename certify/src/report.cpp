#include "report.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/xs3/operator.hpp"

namespace poolspec::cli {

namespace {

std::vector<int64_t> pads(const Problem& p, bool begin) {
  std::vector<int64_t> v;
  for (const Axis& a : p.axes) v.push_back(begin ? a.pad_begin : a.pad_end);
  return v;
}

// JSON has no NaN or infinity: such values are written as the strings "nan", "inf", "-inf".
nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void print_json(const nlohmann::json& j) { fmt::print("{}\n", j.dump()); }

std::string empty_window_text(const Problem& p, const ShapeInfo& s) {
  if (!s.empty_window)
    return p.op == Op::avg ? "none: every window has a non-zero divisor"
                           : "none: every window holds an input element";
  const EmptyWindowWitness& w = *s.empty_window;
  return fmt::format("yes: output index {} of spatial axis {} (first tap at input coordinate "
                     "{}) has {}; {}",
                     w.index, w.axis, w.start,
                     p.op == Op::avg ? "divisor 0" : "no input element",
                     p.empty == EmptyWindow::error
                         ? std::string("the problem's empty=error refuses it")
                         : fmt::format("it yields empty={}", empty_window_name(p.empty)));
}

}  // namespace

// "(n,c,o1,...)": the coordinate of flat (row-major) element `flat` of a tensor of `shape`.
std::string coordinate_text(const std::vector<int64_t>& shape, size_t flat) {
  std::vector<int64_t> c(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    c[i] = static_cast<int64_t>(flat % static_cast<size_t>(shape[i]));
    flat /= static_cast<size_t>(shape[i]);
  }
  return fmt::format("({})", fmt::join(c, ","));
}

int refuse(const std::string& message) {
  fmt::print(stderr, "poolspec: error: {}\n", message);
  return exit_bad_input;
}

int shape_command(const ProblemOptions& options, bool json) {
  Result<ResolvedProblem> r = resolve_problem(options, nullptr);
  if (!r) return refuse(r.error().message);
  const Problem& p = r->problem;
  Result<ShapeInfo> s = infer_shape(p);
  if (!s) return refuse(s.error().message);
  const Status valid = validate(p);
  if (json) {
    nlohmann::json j;
    j["problem"] = format_problem(p);
    j["source"] = r->frontend;
    j["operator"] = r->operator_name;
    j["input_shape"] = r->framing.input_shape;
    j["output_shape"] = to_framework_shape(r->framing, s->output_shape);
    j["spec_input_shape"] = s->input_shape;
    j["spec_output_shape"] = s->output_shape;
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
    if (!valid) j["error"] = valid.error().message;
    print_json(j);
  } else {
    fmt::print("problem       {}\n", format_problem(p));
    fmt::print("source        {}{}\n", r->frontend,
               r->operator_name.empty() ? "" : " (" + r->operator_name + ")");
    fmt::print("input shape   {}\n", fmt::join(r->framing.input_shape, "x"));
    fmt::print("output shape  {}\n", fmt::join(to_framework_shape(r->framing, s->output_shape), "x"));
    if (r->framing.input_shape != s->input_shape)
      fmt::print("spec layout   {} -> {} (N, C, spatial{})\n", fmt::join(s->input_shape, "x"),
                 fmt::join(s->output_shape, "x"),
                 r->framing.channels_last ? "; the framework is channels-last" : "; the input cropped where no window reads");
    fmt::print("pads          begin {}  end {}\n", fmt::join(pads(p, true), ","),
               fmt::join(pads(p, false), ","));
    fmt::print("empty window  {}\n", empty_window_text(p, *s));
  }
  if (!valid) return refuse(valid.error().message);
  return exit_ok;
}

namespace {

// `run --xs3`: the bit-exact lib_nn model on an (H, W, C) int8 image, compared with the spec's
// meaning of the operator (the seed document's formula).
int run_xs3(const ProblemOptions& options, const RunOptions& run, const Tensor& input, bool json) {
  if (!options.problem.empty() || !options.attributes.empty() ||
      !options.op.empty() || !options.input_shape.empty() || !options.dtype.empty())
    return refuse("--xs3: give the operator alone; the image shape comes from the .npy");
  if (!run.indices.empty()) return refuse("--indices: the XS3 operators have no indices output");
  Result<Xs3Frontend> f = from_xs3(run.xs3, input.shape);
  if (!f) return refuse(f.error().message);
  if (input.dtype != DType::i8) return refuse(fmt::format("input: {} tensor, XS3 operators take i8", dtype_name(input.dtype)));
  Result<Tensor> model = xs3::run_operator(f->op, input);
  if (!model) return refuse(model.error().message);
  Result<Output> spec = evaluate(f->problem, xs3_spec_input(*f, input));
  if (!spec) return refuse(spec.error().message);
  const Tensor expected = nchw_to_hwc(spec->values);
  int64_t differing = 0;
  double largest = 0;
  for (size_t i = 0; i < model->values.size(); ++i) {
    const double d = std::fabs(model->values[i] - expected.values[i]);
    differing += d != 0;
    largest = std::max(largest, d);
  }
  if (Status s = write_file_atomically(run.output, encode_npy(*model)); !s) return refuse(s.error().message);
  if (json) {
    print_json({{"xs3", run.xs3},
                {"spec_problem", format_problem(f->problem)},
                {"output_shape", model->shape},
                {"output", run.output},
                {"differ_from_spec", differing},
                {"largest_difference", static_cast<int64_t>(largest)},
                {"values", model->values.size() <= 64
                               ? nlohmann::json(std::vector<int64_t>(model->values.begin(), model->values.end()))
                               : nlohmann::json(nullptr)}});
  } else {
    fmt::print("xs3      {}\nspec     {}\nwrote    {} (i8 {})\n", run.xs3, format_problem(f->problem),
               run.output, fmt::join(model->shape, "x"));
    fmt::print("versus   the spec's meaning: {} of {} outputs differ, by at most {}\n", differing,
               model->values.size(), largest);
    if (model->values.size() <= 16) fmt::print("output   {}\n", fmt::join(model->values, " "));
  }
  return exit_ok;
}

}  // namespace

int run_command(const ProblemOptions& options, const RunOptions& run, bool json) {
  if (run.input.empty()) return refuse("--input: required (a .npy file)");
  if (run.output.empty()) return refuse("--output: required (the .npy file to write)");
  Result<Tensor> input = read_npy(run.input);
  if (!input) return refuse(input.error().message);
  if (!run.xs3.empty()) return run_xs3(options, run, *input, json);
  Result<ResolvedProblem> r = resolve_problem(options, &*input);
  if (!r) return refuse(r.error().message);
  const Problem& p = r->problem;
  if (!run.indices.empty() && p.indices == Indices::none)
    return refuse(fmt::format("--indices={}: the problem has no indices output (add idx=plane or "
                              "idx=tensor to a max problem)", run.indices));
  Result<Output> out = evaluate(p, to_spec_layout(r->framing, *input));
  if (!out) return refuse(out.error().message);
  // Encode everything first, then write: an error leaves no file behind.
  const std::string values = encode_npy(to_framework_layout(r->framing, out->values));
  if (Status s = write_file_atomically(run.output, values); !s) return refuse(s.error().message);
  if (!run.indices.empty()) {
    const std::string indices = encode_npy_indices(out->values.shape, out->indices);
    if (Status s = write_file_atomically(run.indices, indices); !s) {
      std::remove(run.output.c_str());
      return refuse(s.error().message);
    }
  }
  if (json) {
    nlohmann::json j;
    j["problem"] = format_problem(p);
    j["output_shape"] = to_framework_shape(r->framing, out->values.shape);
    j["output"] = run.output;
    j["indices"] = run.indices.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.indices);
    print_json(j);
  } else {
    fmt::print("problem  {}\nwrote    {} ({} {})\n", format_problem(p), run.output,
               dtype_name(p.dtype), fmt::join(to_framework_shape(r->framing, out->values.shape), "x"));
    if (!run.indices.empty()) fmt::print("wrote    {} (i64 indices)\n", run.indices);
  }
  return exit_ok;
}

int explain_command(const ProblemOptions& options, const std::string& input_path,
                    const std::string& at, bool json) {
  if (input_path.empty()) return refuse("--input: required (a .npy file)");
  if (at.empty()) return refuse("--at: required (the output coordinate n,c,o1,...)");
  Result<Tensor> input = read_npy(input_path);
  if (!input) return refuse(input.error().message);
  Result<ResolvedProblem> r = resolve_problem(options, &*input);
  if (!r) return refuse(r.error().message);
  Result<std::vector<int64_t>> coordinate = parse_int_list("--at", at);
  if (!coordinate) return refuse(coordinate.error().message);
  // The coordinate is in the spec's (N, C, o1..on) layout.
  Result<Explanation> ex = explain(r->problem, to_spec_layout(r->framing, *input), *coordinate);
  if (!ex) return refuse(ex.error().message);
  const Problem& p = r->problem;

  if (json) {
    nlohmann::json taps = nlohmann::json::array();
    for (const Tap& t : ex->taps) {
      nlohmann::json tap = {{"offset", t.offset},
                            {"coordinate", t.coordinate},
                            {"kind", tap_kind_name(t.kind)}};
      tap["value"] = t.value ? number(*t.value) : nlohmann::json(nullptr);
      taps.push_back(tap);
    }
    nlohmann::json j = {{"problem", format_problem(p)},
                        {"output_coordinate", ex->output_coordinate},
                        {"taps", taps},
                        {"in_bounds", ex->in_bounds},
                        {"in_padded_extent", ex->in_padded_extent},
                        {"exact_value", ex->exact_value},
                        {"result", number(ex->result)},
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
               t.value ? fmt::format("{}", *t.value) : std::string("-"));
  fmt::print("counts       {} in the input, {} in the padded extent, {} taps\n", ex->in_bounds,
             ex->in_padded_extent, ex->taps.size());
  if (ex->divisor) fmt::print("divisor      {} ({})\n", *ex->divisor, divisor_name(p.divisor));
  fmt::print("exact value  {}\n", ex->exact_value);
  fmt::print("result       {} {}   [{}]\n", dtype_name(p.dtype), ex->result, ex->rule);
  if (ex->index) fmt::print("index        {} ({})\n", *ex->index, indices_name(p.indices));
  return exit_ok;
}

}  // namespace poolspec::cli
