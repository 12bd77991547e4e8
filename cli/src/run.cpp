// `poolspec run`: the spec evaluated on a .npy input, written to .npy; or lib_nn's XS3 model.
#include "commands.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "command_support.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/files.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/xs3/operator.hpp"

namespace poolspec::cli {

namespace {

// `run --xs3`: the bit-exact lib_nn model on an (H, W, C) int8 image, compared with the spec's
// meaning of the operator (the seed document's formula).
int run_xs3(const ProblemOptions& options, const RunOptions& run, const Tensor& input, bool json) {
  if (!options.problem.empty() || !options.attributes.empty() || !options.op.empty() ||
      !options.input_shape.empty() || !options.dtype.empty())
    return refuse("--xs3: give the operator alone; the image shape comes from the .npy");
  if (!run.indices.empty()) return refuse("--indices: the XS3 operators have no indices output");
  Result<Xs3Frontend> f = from_xs3(run.xs3, input.shape);
  if (!f) return refuse(f.error().message);
  if (input.dtype != DType::i8)
    return refuse(fmt::format("input: {} tensor, XS3 operators take i8", dtype_name(input.dtype)));
  Result<Tensor> model = xs3::run_operator(f->op, input);
  if (!model) return refuse(model.error().message);
  Result<Output> spec = evaluate(f->problem, to_spec_layout(f->framing, input));
  if (!spec) return refuse(spec.error().message);
  const Tensor expected = to_framework_layout(f->framing, spec->values);
  int64_t differing = 0;
  double largest = 0;
  for (size_t i = 0; i < model->values.size(); ++i) {
    const double d = std::fabs(model->values[i] - expected.values[i]);
    differing += d != 0;
    largest = std::max(largest, d);
  }
  if (Status s = write_file_atomically(run.output, encode_npy(*model)); !s)
    return refuse(s.error().message);
  std::FILE* report = run.output == "-" ? stderr : stdout;  // "-": the tensor has stdout
  if (json) {
    print_json(
        "run",
        {{"xs3", run.xs3},
         {"spec_problem", format_problem(f->problem)},
         {"output_shape", model->shape},
         {"output", run.output},
         {"differ_from_spec", differing},
         {"largest_difference", static_cast<int64_t>(largest)},
         {"values", model->values.size() <= 64 ? nlohmann::json(std::vector<int64_t>(
                                                     model->values.begin(), model->values.end()))
                                               : nlohmann::json(nullptr)}},
        report);
  } else {
    fmt::print(report, "xs3      {}\nspec     {}\nwrote    {} (i8 {})\n", run.xs3,
               format_problem(f->problem), run.output, fmt::join(model->shape, "x"));
    fmt::print(report, "versus   the spec's meaning: {} of {} outputs differ, by at most {}\n",
               differing, model->values.size(), largest);
    if (model->values.size() <= 16)
      fmt::print(report, "output   {}\n", fmt::join(model->values, " "));
  }
  return exit_ok;
}

// StableHLO's empty result (C15): an output of no element, in StableHLO's result shape.
int run_empty(const EmptyResult& empty, DType dtype, const RunOptions& run, bool json) {
  if (!run.indices.empty())
    return refuse(fmt::format("--indices={}: a reduce_window has no indices output", run.indices));
  const std::string values = encode_npy(Tensor{dtype, empty.output_shape, {}});
  if (Status s = write_files_atomically({{run.output, values}}); !s)
    return refuse(s.error().message);
  std::FILE* report = run.output == "-" ? stderr : stdout;
  if (json) {
    nlohmann::json j;
    j["problem"] = nullptr;
    j["output_shape"] = empty.output_shape;
    j["output"] = run.output;
    j["indices"] = nullptr;
    j["empty_result"] = empty.why;
    print_json("run", j, report);
  } else {
    fmt::print(report, "problem  none: the result is empty ({})\nwrote    {} ({} {})\n", empty.why,
               run.output, dtype_name(dtype), fmt::join(empty.output_shape, "x"));
  }
  return exit_ok;
}

}  // namespace

int run_command(const ProblemOptions& options, const RunOptions& run, bool json) {
  if (run.input.empty()) return refuse("--input: required (a .npy file, or - for standard input)");
  if (run.output.empty())
    return refuse("--output: required (the .npy file to write, or - for standard output)");
  // Before any work: outputs that collide or point nowhere.
  std::vector<std::string> outputs{run.output};
  if (!run.indices.empty()) outputs.push_back(run.indices);
  if (Status s = check_output_paths(outputs); !s) return refuse(s.error().message);
  for (const std::string& output : outputs)
    if (same_file(run.input, output))
      return refuse(fmt::format("{}: the input file; give the output a path of its own", output));
  Result<Tensor> input = read_input(run.input, options);
  if (!input) return refuse(input.error().message);
  if (!run.xs3.empty()) return run_xs3(options, run, *input, json);
  Result<ResolvedProblem> r = resolve_problem(options, &*input);
  if (!r) {
    if (std::optional<EmptyResult> empty = empty_result(options, &*input); empty)
      return run_empty(*empty, input->dtype, run, json);
    return refuse(r.error().message);
  }
  const Problem& p = r->problem;
  if (!run.indices.empty() && p.indices == Indices::none)
    return refuse(
        fmt::format("--indices={}: the problem has no indices output (add idx=plane or "
                    "idx=tensor to a max problem)",
                    run.indices));
  if (Status s = check_output_size(p, options); !s) return refuse(s.error().message);
  Result<Output> out = evaluate(p, to_spec_layout(r->framing, *input));
  if (!out) return refuse(out.error().message);
  // Encode everything first, then write the files as a set: an error leaves every file as it
  // was.
  const std::string values = encode_npy(to_framework_layout(r->framing, out->values));
  std::string indices;
  std::vector<std::pair<std::string, std::string_view>> files{{run.output, values}};
  if (!run.indices.empty()) {
    indices = encode_npy_indices(out->values.shape, out->indices);
    files.emplace_back(run.indices, indices);
  }
  if (Status s = write_files_atomically(files); !s) return refuse(s.error().message);
  std::FILE* report = run.output == "-" || run.indices == "-" ? stderr : stdout;
  if (json) {
    nlohmann::json j;
    j["problem"] = format_problem(p);
    j["output_shape"] = to_framework_shape(r->framing, out->values.shape);
    j["output"] = run.output;
    j["indices"] = run.indices.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.indices);
    print_json("run", j, report);
  } else {
    fmt::print(report, "problem  {}\nwrote    {} ({} {})\n", format_problem(p), run.output,
               dtype_name(p.dtype),
               fmt::join(to_framework_shape(r->framing, out->values.shape), "x"));
    if (!run.indices.empty()) fmt::print(report, "wrote    {} (i64 indices)\n", run.indices);
  }
  return exit_ok;
}

}  // namespace poolspec::cli
