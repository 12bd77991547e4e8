// The poolspec command line (docs/design.md §7, docs/cli.md): every command's options, the
// checks made before any command runs, and the one place an exception is turned into a refusal.
// Exit codes: 0 ok, 1 check failed, 2 bad input. Compiled twice: with every command (cli/'s
// poolspec_cli, POOLSPEC_COMMAND_LINE_WITH_CERTIFY_AND_PROVE=1), and without certify and prove
// for fuzz/fuzz_command_line.cpp, which fuzzes the rest without certify's runner and Z3.
#include "command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#if POOLSPEC_COMMAND_LINE_WITH_CERTIFY_AND_PROVE
#include "certify.hpp"
#endif
#include "commands.hpp"
#include "onnx_test.hpp"
#include "poolspec/files.hpp"

namespace {

const std::pair<poolspec::Framework, const char*> framework_option_help[] = {
    {poolspec::Framework::ngraph,
     "ngraph v0 attributes: 'window_shape=2,2 window_movement_strides=2,2 padding_below=0,0 ...'"},
    {poolspec::Framework::openvino,
     "OpenVINO AvgPool / MaxPool attributes, or an IR <data> element verbatim (op version by "
     "--opset, default 1)"},
    {poolspec::Framework::onnx,
     "ONNX attributes: 'kernel_shape=3,3 pads=1,1,1,1 ceil_mode=1' (--opset, default 22)"},
    {poolspec::Framework::pytorch,
     "torch.nn.functional arguments: 'kernel_size=3 stride=2 padding=1 ceil_mode=True'"},
    {poolspec::Framework::tensorflow,
     "tf.nn.avg_pool / max_pool arguments: 'ksize=3 strides=2 padding=SAME' (NHWC unless "
     "data_format says otherwise)"},
    {poolspec::Framework::tflite,
     "TFLite Pool2DOptions: 'padding=SAME stride_w=2 stride_h=2 filter_width=3 filter_height=3' "
     "(NHWC)"},
    {poolspec::Framework::onednn,
     "oneDNN pooling: 'alg=pooling_avg_include_padding kernel=3,3 strides=2,2 padding_l=1,1 "
     "padding_r=1,1'"},
    {poolspec::Framework::opencv,
     "OpenCV DNN Pooling LayerParams: 'pool=ave kernel_h=3 kernel_w=3 stride_h=2 stride_w=2 "
     "pad_t=1 pad_b=1 pad_l=1 pad_r=1 ceil_mode=true' (NCHW)"},
    {poolspec::Framework::armnn,
     "Arm NN Pooling2dDescriptor: 'pool_type=Average pool_height=3 pool_width=3 stride_y=2 "
     "stride_x=2 pad_top=1 pad_bottom=1 pad_left=1 pad_right=1 output_shape_rounding=Ceiling "
     "padding_method=Exclude data_layout=NCHW'"},
    {poolspec::Framework::tosa,
     "TOSA AVG_POOL2D / MAX_POOL2D attributes: 'kernel=2,2 stride=2,2 pad=0,0,0,0 "
     "acc_type=INT32 input_zp=0 output_zp=0' (avg) or '... nan_mode=IGNORE' (max); NHWC"},
    {poolspec::Framework::stablehlo,
     "StableHLO reduce_window attributes, one per input dimension: 'window_dimensions=1,1,3,3 "
     "window_strides=1,1,2,2 padding=0,0,0,0,1,1,1,1 divisor=count' (avg: add, then divided by "
     "window or count) or '... init_value=-inf' (max)"},
};

// Edit distance between two short words: insertions, deletions, substitutions and swaps of two
// neighbours ("inptu" is one edit from "input"), each counted once.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The name `word` was probably meant to be: the nearest of `names`, within one edit for a word
// of up to four letters and two for a longer one (so that a short word does not suggest any
// other short one); "" when `word` is one of them or near none.
std::string nearest(std::string_view word, const std::vector<std::string>& names) {
  if (word.size() > 64) return "";  // the table is words squared
  std::string best;
  size_t best_distance = word.size() <= 4 ? 2 : 3;
  for (const std::string& name : names) {
    const size_t d = edit_distance(word, name);
    if (d == 0) return "";
    if (d < best_distance) best_distance = d, best = name;
  }
  return best;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// The subcommand a parse failure happened in: the command named by the first argument (and
// certify's `merge` after it), or the top level.
const CLI::App* failed_command(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* at = &app;
  for (int i = 1; i < argc && i <= 2; ++i) {
    const auto subs =
        at->get_subcommands([&](const CLI::App* s) { return s->get_name() == argv[i]; });
    if (subs.empty()) break;
    at = subs.front();
  }
  return at;
}

// What a parse failure most likely came from, when it is a misspelling: a word near a command
// (or certify's `merge`), or an option near one of the command's options. "" when none is.
std::string misspelling(const CLI::App& app, int argc, const char* const* argv) {
  if (argc > 1 && argv[1][0] != '-')
    if (const std::string near = nearest(argv[1], subcommand_names(app)); !near.empty())
      return fmt::format("'{}' is not a command; did you mean '{}'? (poolspec --help lists them)",
                         argv[1], near);
  const CLI::App* command = failed_command(app, argc, argv);
  std::string command_name = "poolspec";
  for (const CLI::App* at = command; at != &app; at = at->get_parent())
    command_name.insert(std::string("poolspec").size(), " " + at->get_name());
  if (command->get_name() == "certify" && argc > 2 && argv[2][0] != '-')
    if (const std::string near = nearest(argv[2], subcommand_names(*command)); !near.empty())
      return fmt::format("'{}' is not a command of certify; did you mean '{}'?", argv[2], near);
  std::vector<std::string> options;
  for (const CLI::Option* option : command->get_options())
    for (const std::string& name : option->get_lnames()) options.push_back(name);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") continue;
    const std::string_view dashed = arg.substr(0, arg.find('='));
    const size_t letters = dashed.find_first_not_of('-');
    if (letters == std::string_view::npos) continue;
    const std::string word(dashed.substr(letters));
    const bool known = std::find(options.begin(), options.end(), word) != options.end();
    if (known && dashed.substr(0, 2) == "--") continue;
    if (known)  // -json: a long option written with one dash
      return fmt::format("{}: {} takes options with two dashes; did you mean --{}?", dashed,
                         command_name, word);
    if (const std::string near = nearest(word, options); !near.empty())
      return fmt::format("{}: not an option of {}; did you mean --{}? ({} --help lists them)",
                         dashed, command_name, near, command_name);
  }
  return "";
}

// An integer option's value, checked before CLI11 converts it: decimal digits only (CLI11 would
// read "010" as octal and "0x10" as hexadecimal), within the option's type (CLI11 would clamp a
// value past 2^63 to the largest one, and read "-1" as 2^64 - 1 for an unsigned one).
template <typename T>
CLI::Validator decimal_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        auto [stop, error] = std::from_chars(text.data(), end, value);
        if constexpr (std::is_unsigned_v<T>) {  // "-1": a number, below the range
          int64_t negative = 0;
          if (!text.empty() && text[0] == '-' &&
              std::from_chars(text.data(), end, negative).ptr == end)
            error = std::errc::result_out_of_range;
        }
        if (error == std::errc::result_out_of_range)
          return fmt::format("{} is out of range ({} to {})", text, std::numeric_limits<T>::min(),
                             std::numeric_limits<T>::max());
        if (error != std::errc() || stop != end || text.empty())
          return fmt::format("'{}' is not a decimal integer", text);
        text = std::to_string(value);  // "010" is ten: CLI11 reads what it is given in base 0
        return "";
      },
      "INTEGER");
}

template <typename T>
CLI::Option* add_integer(CLI::App* app, const std::string& name, T& value,
                         const std::string& help) {
  return app->add_option(name, value, help)->transform(decimal_integer<T>());
}

}  // namespace

namespace poolspec::cli {

int command_line(int argc, const char* const* argv) {
  CLI::App app{
      "poolspec: the executable, machine-checked specification of pooling.\n"
      "With no command, runs the spec over the seed documents' examples."};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("poolspec ") + POOLSPEC_VERSION);

  ProblemOptions problem;
  std::map<poolspec::Framework, std::string> framework_text;
  std::vector<std::pair<poolspec::Framework, CLI::Option*>> framework_options;
  std::vector<CLI::Option*> opset_options;
  bool json = false;
  const auto add_problem_options = [&](CLI::App* sub) {
    sub->add_option("problem", problem.problem,
                    "Problem string, e.g. avg:f32:n1c3:h32w32:k2x2:s2x2:pb0x0:pe0x0:exclude:floor");
    for (const auto& [framework, help] : framework_option_help)
      framework_options.emplace_back(
          framework, sub->add_option(fmt::format("--{}", poolspec::framework_name(framework)),
                                     framework_text[framework], help));
    sub->add_option("--op", problem.op,
                    "avg, max, global_avg or global_max (with a framework's attributes)");
    opset_options.push_back(
        add_integer(sub, "--opset", problem.opset,
                    "OpenVINO opset (1 to 16, default 1) or ONNX opset (1 to 22, default 22)"));
    add_integer(sub, "--max-elements", problem.max_elements,
                "The largest input or output tensor, in elements (default 2^28); a larger "
                "one is refused before any work");
    sub->add_option("--input-shape", problem.input_shape,
                    "The input's shape in the framework's layout, e.g. N,C,H,W (or from --input)");
    sub->add_option("--dtype", problem.dtype,
                    "f64 f32 f16 bf16 i32 i8 u8 (default f32, or --input's)");
    sub->add_flag("--json", json, "Print machine-readable JSON");
  };

  CLI::App* shape = app.add_subcommand("shape",
                                       "Resolved pads, output shape, and whether any "
                                       "window can have a zero divisor");
  add_problem_options(shape);

  const auto add_work_limit = [&](CLI::App* sub, int64_t& limit) {
    add_integer(sub, "--max-tap-visits", limit,
                "The most work an evaluation may take, in tap visits (outputs times each "
                "axis's kernel plus the taps inside the input; default 2^32, minutes); a "
                "larger problem is refused before any work");
  };
  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "Evaluate the spec: .npy in, .npy out");
  add_problem_options(run_cmd);
  add_work_limit(run_cmd, problem.max_tap_visits);
  run_cmd->add_option("--input", run.input, "Input tensor (.npy; - for standard input)");
  run_cmd->add_option("--output", run.output,
                      "Output tensor to write (.npy; - for standard output)");
  run_cmd->add_option("--indices", run.indices,
                      "Max indices to write (.npy, int64; - for standard output)");
  run_cmd->add_option("--xs3", run.xs3,
                      "Run lib_nn's XS3 model on an (H, W, C) int8 image: 'op=avgpool2d_global "
                      "bias=-40 symmetric=0', 'op=avgpool2d window=2,2 start=0,0 stride=2,2', "
                      "'op=maxpool2d ...'");

  std::string explain_input, at;
  CLI::App* explain = app.add_subcommand("explain",
                                         "One output element: its window's taps, "
                                         "which are padding, the divisor, the exact value");
  add_problem_options(explain);
  explain->add_option("--input", explain_input, "Input tensor (.npy; - for standard input)");
  explain->add_option("--at", at, "Output coordinate n,c,o1,...,on");
  int64_t max_taps = 100000;
  add_integer(explain, "--max-taps", max_taps,
              "The largest window explain lists, in taps (default 100000)");

  CLI::App* seeds = app.add_subcommand("seeds",
                                       "Run the spec over the seed documents' examples "
                                       "and report their errata");
  seeds->add_flag("--json", json, "Print machine-readable JSON");

  std::string diff_input, diff_values;
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Evaluate one problem, given in one framework's terms, under every framework's rules "
      "that can express it, and show where they disagree (exit 1 if any does)");
  add_problem_options(diff);
  add_work_limit(diff, problem.max_tap_visits);
  diff->add_option("--input", diff_input,
                   "Input tensor (.npy, in the framework's layout); default "
                   "a ramp 1, 2, 3, ...");
  diff->add_option("--values", diff_values,
                   "The input's values, row-major in the framework's layout: "
                   "'nan,1,3,3' (with --input-shape)");

  CheckModelOptions check_model;
  CLI::App* check_model_cmd = app.add_subcommand(
      "check-model",
      "Every pooling node of an ONNX model (.onnx) or OpenVINO IR (.xml): its problem, output "
      "shape against the model's, empty windows, and where other frameworks' rules differ "
      "(exit 1 on an invalid node or a finding)");
  check_model_cmd->add_option("model", check_model.model, "The model file")->required();
  check_model_cmd->add_option("--format", check_model.format,
                              "onnx or openvino (default: by the file name's ending)");
  check_model_cmd->add_option("--shape", check_model.shapes,
                              "NAME=1,3,224,224: an ONNX graph input's shape (symbolic batch "
                              "sizes), or a pooling node's input shape; repeatable");
  check_model_cmd->add_option("--input", check_model.inputs,
                              "NODE=x.npy: evaluate the pooling node NODE on this input (.npy or "
                              "an ONNX TensorProto .pb, in the model's layout); repeatable");
  check_model_cmd->add_option("--expect", check_model.expected,
                              "NODE=y.npy: a runtime's output of NODE, compared with the spec's "
                              "(float averages within the derived bound); repeatable");
  check_model_cmd->add_option("--output-dir", check_model.output_dir,
                              "Write each evaluated node's output here as NODE.npy");
  add_integer(check_model_cmd, "--max-elements", check_model.max_elements,
              "The largest input or output tensor, in elements (default 2^28)");
  add_work_limit(check_model_cmd, check_model.max_tap_visits);
  check_model_cmd->add_flag("--json", json, "Print machine-readable JSON");

  std::vector<std::string> onnx_dirs;
  CLI::App* onnx_test = app.add_subcommand(
      "onnx-test",
      "Run ONNX backend node-test directories (model.onnx, test_data_set_*) through "
      "the onnx front-end and compare with their stored outputs");
  onnx_test->add_option("directories", onnx_dirs,
                        "Case directories, e.g. .../data/node/test_maxpool_2d_pads");
  onnx_test->add_flag("--json", json, "Print machine-readable JSON");

#if POOLSPEC_COMMAND_LINE_WITH_CERTIFY_AND_PROVE
  ProveOptions prove;
  CLI::App* prove_cmd =
      app.add_subcommand("prove", "List and run the Z3 proofs of the spec's integer rules");
  prove_cmd->add_option("--filter", prove.filter, "Only the proofs whose name contains this");
  prove_cmd->add_option("--emit-smt2", prove.emit_smt2,
                        "Write every query as SMT-LIB into this folder");
  add_integer(prove_cmd, "--timeout-ms", prove.timeout_ms,
              "Per-query timeout; a timeout is a failure");
  prove_cmd->add_flag("--list", prove.list,
                      "List the proofs with their claims, without running them");
  prove_cmd->add_flag("--json", json, "Print machine-readable JSON");

  poolspec::certify::CertifyOptions certify;
  std::vector<std::string> certify_rules, certify_layouts;
  CLI::App* certify_cmd = app.add_subcommand(
      "certify",
      "Hold backends to the spec: every available backend (or --backend) on a suite, "
      "each in a worker process of its own, every problem called twice; a matrix, JSON and JUnit "
      "XML (exit 1 on any failure)");
  certify_cmd->add_option("--suite", certify.suite, "smoke, ci (default) or full");
  certify_cmd->add_option(
      "--backend", certify.backends,
      "A backend's name (reference optimized xs3 onednn ...), or a shared library's path "
      "(backend.h), all of its backends unless some are named too; repeatable; default every "
      "available backend");
  certify_cmd
      ->add_option(
          "--rules", certify_rules,
          "Rule sets to hold each backend to: claimed (its own), spec, xs3, or a framework (" +
              poolspec::framework_names() + "); default claimed,openvino")
      ->delimiter(',');
  certify_cmd->add_option("--layout", certify_layouts, "nchw, nhwc (default both)")->delimiter(',');
  certify_cmd->add_option("--shard", certify.shard,
                          "i/n: run the i-th of n slices of the suite (CI jobs)");
  add_integer(certify_cmd, "--timeout-ms", certify.timeout_ms,
              "Per call, wall clock; past it the worker is killed: HANG "
              "(default 10000)");
  add_integer(certify_cmd, "--load-timeout-ms", certify.load_timeout_ms,
              "Loading a backend library (its constructors and entry point); past it: "
              "LOAD-ERROR (default 30000)");
  add_integer(certify_cmd, "--memory-limit-mb", certify.memory_limit_mb,
              "Address space a backend's worker may add after it starts (default 16384)");
  add_integer(certify_cmd, "--cpu-limit-s", certify.cpu_limit_s,
              "CPU time per call; past it: HANG (default 60)");
  certify_cmd->add_flag(
      "!--no-pid-namespace", certify.pid_namespace,
      "Start workers without a PID namespace of their own even where the kernel allows one (as "
      "for a user without the privilege): their orphans are then killed by their keeper and by "
      "poolspec");
  add_integer(certify_cmd, "--progress-seconds", certify.progress_seconds,
              "Where stderr is not a terminal (a CI log): a progress line this often, in "
              "seconds, once a run has taken that long (default 10; 0: after every run)");
  add_integer(certify_cmd, "--jobs", certify.jobs,
              "Cases run at once, each lane with workers of its own (default 1)");
  certify_cmd->add_option("--out", certify.out_dir,
                          "Where matrix.txt, report.json, junit.xml and repro/ go "
                          "(default certify-out)");
  certify_cmd
      ->add_option("--filter", certify.filters,
                   "Only the cases whose id contains this (repeatable, or "
                   "comma-separated: any of them)")
      ->delimiter(',');
  certify_cmd->add_option("--problem", certify.problem,
                          "Replay one problem string (with --input) instead of a suite");
  certify_cmd->add_option("--input", certify.input,
                          "The replayed problem's input (.npy, spec order)");
  certify_cmd->add_option("--warmup", certify.warmup,
                          "With --problem: a problem called first in the same worker "
                          "(a reproducer of a failure that needs an earlier call)");
  certify_cmd->add_option("--warmup-input", certify.warmup_input,
                          "The warm-up problem's input (.npy, spec order)");
  certify_cmd->add_option("--warmup-layout", certify.warmup_layout,
                          "The warm-up problem's layout (default --layout's)");
  certify_cmd->add_option("--waivers", certify.waivers,
                          "Known deviations, 'backend rules column [when STATUS LAYOUT "
                          "PATTERN] | reason' per line "
                          "(default: the waivers.txt shipped with poolspec, beside it or in "
                          "<prefix>/share/poolspec; '' for none)");
  certify_cmd->add_flag("!--no-shrink", certify.shrink,
                        "Do not shrink failures to a minimal counterexample");
  certify_cmd->add_flag("--resume", certify.resume,
                        "Go on with the run stopped or killed in --out: keep its finished runs, "
                        "make the rest (the same options)");
  certify_cmd->add_flag("--list", certify.list,
                        "List the backends (and their claimed rules) and suites");
  certify_cmd->add_flag("--json", certify.json, "Print the JSON report instead of the matrix");
  std::vector<std::string> merge_dirs;
  std::string merge_out = "certify-out";
  bool merge_json = false;
  CLI::App* merge_cmd = certify_cmd->add_subcommand(
      "merge",
      "Join the reports of the shards of one run (--shard i/n, each with its own --out) into one "
      "matrix, JSON and JUnit, after checking they cover the suite exactly once");
  merge_cmd->add_option("directories", merge_dirs, "The shards' output folders")->required();
  merge_cmd->add_option("--out", merge_out, "Where the merged reports go (default certify-out)");
  merge_cmd->add_flag("--json", merge_json, "Print the JSON report instead of the matrix");

#endif

  // With --json anywhere on the line, a refusal is JSON on stdout too (parser errors included).
  poolspec::errors_as_json() = false;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--json") poolspec::errors_as_json() = true;
  // Parser errors read like every other refusal: "poolspec: error: ...", exit 2.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return fmt::format("poolspec: error: {}\nRun with --help for the commands and options.\n",
                       e.what());
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A misspelt command or option: say what was probably meant.
    if (e.get_exit_code() != 0)
      if (const std::string meant = misspelling(app, argc, argv); !meant.empty())
        return poolspec::refuse(meant);
    if (poolspec::errors_as_json() && e.get_exit_code() != 0) return poolspec::refuse(e.what());
    const int code = app.exit(e);
    return code == 0 ? poolspec::exit_ok : poolspec::exit_bad_input;
  }
  // A framework given with empty text (ONNX's Global ops have no attributes) still counts.
  for (const auto& [framework, option] : framework_options)
    if (option->count() > 0) problem.attributes[framework] = framework_text[framework];
  // Options whose value names something: given empty, they are refused, not taken as absent.
  for (CLI::App* sub : {run_cmd, explain, diff})
    for (const char* name : {"--input", "--output", "--indices", "--at", "--values", "--xs3"})
      if (const CLI::Option* option = sub->get_option_no_throw(name);
          option && option->count() > 0 && option->as<std::string>().empty())
        return poolspec::refuse(
            fmt::format("{} '': empty (give it a value, or leave it out)", name));
  for (const std::string& directory : onnx_dirs)
    if (directory.empty()) return poolspec::refuse("onnx-test '': an empty folder name");
#if POOLSPEC_COMMAND_LINE_WITH_CERTIFY_AND_PROVE
  if (merge_cmd->parsed())
    for (const std::string& shard : merge_dirs)
      if (poolspec::same_file(shard, merge_out))
        return poolspec::refuse(fmt::format(
            "--out {}: the folder of shard {}; the merged reports need a folder of their own",
            merge_out, shard));
#endif
  for (const CLI::Option* option : opset_options)
    if (option->count() > 0 && problem.opset < 1)
      return poolspec::refuse(fmt::format("--opset={}: opsets are numbered from 1", problem.opset));
  if (check_model_cmd->parsed() && check_model.model.empty())
    return poolspec::refuse("check-model '': an empty file name");
  if (check_model.max_elements < 1)
    return poolspec::refuse(
        fmt::format("--max-elements={}: must be 1 or more", check_model.max_elements));
  if (problem.max_elements < 1)
    return poolspec::refuse(
        fmt::format("--max-elements={}: must be 1 or more", problem.max_elements));
  for (const int64_t limit : {problem.max_tap_visits, check_model.max_tap_visits})
    if (limit < 1)
      return poolspec::refuse(fmt::format("--max-tap-visits={}: must be 1 or more", limit));
  // No exception leaves poolspec: memory that runs out anywhere is a refusal of the problem's
  // size, anything else an error that names itself.
  const auto command = [&] {
#if POOLSPEC_COMMAND_LINE_WITH_CERTIFY_AND_PROVE
    if (*merge_cmd) return poolspec::certify::merge_command(merge_dirs, merge_out, merge_json);
    if (*certify_cmd) {
      if (!certify_rules.empty()) {
        certify.rules = certify_rules;
        certify.rules_given = true;
      }
      if (!certify_layouts.empty()) certify.layouts = certify_layouts;
      return poolspec::certify::certify_command(certify);
    }
    if (*prove_cmd) return prove_command(prove, json);
#endif
    if (*shape) return shape_command(problem, json);
    if (*run_cmd) return run_command(problem, run, json);
    if (*diff) return diff_command(problem, diff_input, diff_values, json);
    if (*onnx_test) return onnx_test_command(onnx_dirs, json);
    if (*check_model_cmd) return check_model_command(check_model, json);
    if (*explain) return explain_command(problem, explain_input, at, max_taps, json);
    return seeds_command(json);
  };
  try {
    const int status = command();
    // What was printed must have arrived (a full disk, a closed pipe, /dev/full): else exit 2.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      poolspec::errors_as_json() = false;  // stdout is what failed
      return poolspec::refuse("standard output: write error; what was printed is incomplete");
    }
    return status;
  } catch (const std::bad_alloc&) {
    return poolspec::refuse(
        "out of memory: the problem or its tensors are too large for this machine "
        "(--max-elements lowers the size refused up front)");
  } catch (const std::exception& e) {
    return poolspec::refuse(fmt::format("{}", e.what()));
  }
}

}  // namespace poolspec::cli
