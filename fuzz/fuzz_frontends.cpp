// fuzz_frontends: every framework front-end's attribute text (frontends/src/frontends_*.cpp), and
// the translation of a problem into every other framework (frontends/src/translate.cpp, `poolspec
// diff`).
//
// Targets: Attributes::parse; from_framework for ngraph, OpenVINO (AvgPool-1/14/16,
// MaxPool-1/8/14), ONNX (opsets up to 22, Global*), PyTorch, TensorFlow, TFLite, oneDNN, OpenCV,
// Arm NN, TOSA and StableHLO (and StableHLO's empty results); from_xs3; the framings between each
// framework's layout and the spec's (crops, StableHLO's holes); intent_of and translate. Input: the
// framework, op, dtype, opset and input shape from the end of the bytes, the attribute text from
// the front (a dictionary of attribute names and values helps: fuzz_frontends.dict). Oracle:
//   - malformed text is refused with an error (the attribute, its value and the rule), never a
//     crash, leak or UB (ASan, UBSan);
//   - what a front-end accepts is a valid problem (validate), and its framing maps the
//     framework's input shape onto the problem's;
//   - every translation the intent admits (no reason given) that its framework's own front-end
//     accepts means the same geometry (op, input shape, kernel, strides, dilations, begin pads;
//     the end pads and the rounding may differ, as oneDNN's ceil is emulated by enlarging
//     padding_r): what `poolspec diff` compares is like with like, and only the frameworks' rules
//     differ. (A front-end may refuse a translation: the framework defines no value there,
//     and `diff` prints its reason.)
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/translate.hpp"

namespace poolspec::fuzz {
namespace {

std::string g_case;

// from_stablehlo's refusal of a dimension without a window: "window_dimensions[<d>]=<k>: no
// window fits the padded input of ...", digits only between the brackets and after '='.
bool is_no_window_refusal(std::string_view message) {
  constexpr std::string_view head = "window_dimensions[",
                             tail = ": no window fits the padded input";
  if (!message.starts_with(head)) return false;
  size_t i = head.size();
  const auto digits = [&] {
    const size_t from = i;
    while (i < message.size() && message[i] >= '0' && message[i] <= '9') ++i;
    return i > from;
  };
  if (!digits() || message.substr(i, 2) != "]=") return false;
  i += 2;
  return digits() && message.substr(i).starts_with(tail);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_frontends: FAILURE\ncase: %s\n%s\n", g_case.c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_framing(const Frontend& f) {
  int64_t count = 1;
  for (int64_t d : f.framing.input_shape) count *= d;
  // The Problem's input may be far larger than the framework's (StableHLO's holes).
  const Result<int64_t> spec_count = element_count(input_shape(f.problem));
  if (count > 4096 || !spec_count || *spec_count > 65536) return;
  const Tensor framework_input{f.problem.dtype, f.framing.input_shape,
                               std::vector<double>(size_t(count), 0.0)};
  const Tensor spec_input = to_spec_layout(f.framing, framework_input);
  if (spec_input.shape != input_shape(f.problem))
    fail(fmt::format("the framing maps the input shape {} to {}, the problem's is {}",
                     fmt::join(f.framing.input_shape, ","), fmt::join(spec_input.shape, ","),
                     fmt::join(input_shape(f.problem), ",")));
}

void run_one(FuzzedDataProvider& in) {
  // One byte picks all_frameworks' first seven (0-6) or, at 7, a second byte picks one of the
  // rest (OpenCV, Arm NN, TOSA, StableHLO) or XS3 after them.
  constexpr int first = 7, rest = int(std::size(all_frameworks)) - first;
  int framework = in.ConsumeIntegralInRange<int>(0, first);
  if (framework == first) framework += in.ConsumeIntegralInRange<int>(0, rest);
  const bool xs3 = framework == first + rest;
  FrontendInput input;
  input.op = in.ConsumeBool() ? Op::max : Op::avg;
  input.dtype =
      std::array<DType, 7>{DType::f32, DType::f16,  DType::i8, DType::u8,
                           DType::f64, DType::bf16, DType::i32}[in.ConsumeIntegralInRange<size_t>(
          0, 6)];
  input.version = std::array<int, 12>{
      0, 0, 1, 7, 8, 10, 11, 12, 14, 16, 19, 22}[in.ConsumeIntegralInRange<size_t>(0, 11)];
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0)
    input.version = in.ConsumeIntegralInRange<int>(-1, 30);
  input.global = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  const size_t rank = in.ConsumeIntegralInRange<size_t>(0, 6) == 0
                          ? in.ConsumeIntegralInRange<size_t>(0, 6)
                          : in.ConsumeIntegralInRange<size_t>(3, 5);
  for (size_t i = 0; i < rank; ++i)
    input.input_shape.push_back(in.ConsumeIntegralInRange<int64_t>(1, 12));
  if (in.ConsumeIntegralInRange<int>(0, 31) == 0 && rank > 0)
    input.input_shape[0] = in.ConsumeIntegralInRange<int64_t>(-1, 0);
  const std::string text = in.ConsumeRemainingBytesAsString();

  (void)Attributes::parse(text);
  if (xs3) {
    std::vector<int64_t> hwc = input.input_shape;
    hwc.resize(3, 1);
    g_case = fmt::format("xs3 '{}' on ({})", text, fmt::join(hwc, ","));
    if (Result<Xs3Frontend> x = from_xs3(text, hwc); x && !validate(x->problem).ok())
      fail("from_xs3 gave an invalid problem: " + format_problem(x->problem));
    return;
  }
  const Framework fw = all_frameworks[size_t(framework)];
  g_case =
      fmt::format("--{} '{}' --op {} --dtype {} --opset {} --input-shape {}{}", framework_name(fw),
                  text, op_name(input.op), dtype_name(input.dtype), input.version,
                  fmt::join(input.input_shape, ","), input.global ? " (global)" : "");
  Result<Frontend> f = from_framework(fw, text, input);
  if (fw == Framework::stablehlo) {
    // StableHLO's empty result (C15) and a Problem exclude each other, and the front-end's
    // refusal for a dimension without a window comes with the empty result. That refusal is
    // known by its form ("window_dimensions[d]=k: no window fits ..."), never by a word in it:
    // the message quotes the attributes, which may hold any word.
    const std::optional<EmptyResult> e = stablehlo_empty_result(text, input);
    if (e && f) fail("an empty result beside the Problem " + format_problem(f->problem));
    if (!f && !e && is_no_window_refusal(f.error().message))
      fail("refused for a dimension without a window, with no empty result: " + f.error().message);
  }
  if (!f) return;
  if (Status s = validate(f->problem); !s)
    fail("the front-end gave an invalid problem: " + format_problem(f->problem) + ": " +
         s.error().message);
  check_framing(*f);

  const Intent intent = intent_of(*f);
  for (const Translation& t : translate(intent)) {
    if (!t.reason.empty()) continue;
    // The framework may define no value for the geometry (its front-end refuses, and `diff`
    // prints why); what it accepts must mean the same window geometry.
    Result<Frontend> back = from_framework(t.framework, t.attributes, t.input);
    if (!back) continue;
    const Intent again = intent_of(*back);
    if (again.op != intent.op || again.shape != intent.shape || again.kernel != intent.kernel ||
        again.strides != intent.strides || again.dilations != intent.dilations ||
        again.pads_begin != intent.pads_begin || again.base_dilations != intent.base_dilations)
      fail(fmt::format("the translation for {} ('{}') means another geometry: {}, the source's {}",
                       t.label, t.attributes, format_problem(back->problem),
                       format_problem(f->problem)));
  }
}

}  // namespace
}  // namespace poolspec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  poolspec::fuzz::run_one(in);
  return 0;
}
