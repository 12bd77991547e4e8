#include "problem_source.hpp"

#include <charconv>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/frontends.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

Result<std::vector<int64_t>> parse_int_list(std::string_view option, std::string_view text) {
  std::vector<int64_t> out;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view item = text.substr(begin, comma - begin);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      return Error{fmt::format("{}={}: '{}' is not an integer", option, text, item)};
    out.push_back(v);
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

Result<Tensor> read_input(const std::string& path, const ProblemOptions& options) {
  return read_npy(path, NpyLimits{options.max_elements, "--max-elements raises it"});
}

namespace {

// A tensor over --max-elements: which, its shape, its elements and the limit.
Status within_max_elements(std::string_view what, const std::vector<int64_t>& shape,
                           int64_t elements, const ProblemOptions& options) {
  if (elements <= options.max_elements) return Ok{};
  return Error{
      fmt::format("{} ({}) has {} elements, over the limit of {} (--max-elements raises it)", what,
                  fmt::join(shape, "x"), elements, options.max_elements)};
}

}  // namespace

Status check_input_size(const Problem& p, const ProblemOptions& options) {
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  return within_max_elements("the problem's input", shape->input_shape, shape->input_elements,
                             options);
}

Status check_output_size(const Problem& p, const ProblemOptions& options) {
  Result<ShapeInfo> shape = validated_shape(p);  // once, for the input's and the output's limits
  if (!shape) return shape.error();
  if (Status s = within_max_elements("the problem's input", shape->input_shape,
                                     shape->input_elements, options);
      !s)
    return s;
  if (Status s =
          within_max_elements("the output", shape->output_shape, shape->output_elements, options);
      !s)
    return s;
  if (shape->tap_visits > options.max_tap_visits)
    return Error{fmt::format(
        "evaluating it takes about {} tap visits ({} outputs, each classifying its kernel's taps "
        "on every axis and visiting those inside the input), over the limit of {} "
        "(--max-tap-visits raises it)",
        shape->tap_visits == std::numeric_limits<int64_t>::max()
            ? std::string("2^63")
            : std::to_string(shape->tap_visits),
        shape->output_elements, options.max_tap_visits)};
  return Ok{};
}

Result<FrontendInput> frontend_input(const ProblemOptions& o, const Tensor* input) {
  FrontendInput in;
  if (o.op == "avg" || o.op == "global_avg")
    in.op = Op::avg;
  else if (o.op == "max" || o.op == "global_max")
    in.op = Op::max;
  else if (o.op.empty())
    return Error{
        "--op: required with a framework's attributes (avg, max, global_avg or global_max)"};
  else
    return Error{fmt::format("--op={}: must be avg, max, global_avg or global_max", o.op)};
  in.global = o.op.substr(0, 7) == "global_";
  in.version = o.opset;

  if (!o.dtype.empty()) {
    auto d = parse_dtype(o.dtype);
    if (!d)
      return Error{fmt::format("--dtype={}: must be one of f64 f32 f16 bf16 i32 i8 u8", o.dtype)};
    in.dtype = *d;
    if (input && input->dtype != in.dtype)
      return Error{
          fmt::format("--dtype={}: the input tensor is {}", o.dtype, dtype_name(input->dtype))};
  } else if (input) {
    in.dtype = input->dtype;
  }
  if (!o.input_shape.empty()) {
    Result<std::vector<int64_t>> shape = parse_int_list("--input-shape", o.input_shape);
    if (!shape) return shape.error();
    in.input_shape = *shape;
    if (input && input->shape != in.input_shape)
      return Error{fmt::format("--input-shape={}: the input tensor's shape is ({})", o.input_shape,
                               fmt::join(input->shape, ","))};
  } else if (input) {
    in.input_shape = input->shape;
  } else {
    return Error{"--input-shape: required (or give an input .npy)"};
  }
  return in;
}

Result<ResolvedProblem> resolve_problem(const ProblemOptions& o, const Tensor* input) {
  const size_t sources = (o.problem.empty() ? 0 : 1) + o.attributes.size();
  if (sources != 1)
    return Error{
        "problem: give exactly one of a problem string or one framework's attributes "
        "(--openvino, --ngraph, --onnx, --pytorch, --tensorflow, --tflite, --onednn, --opencv, "
        "--armnn, --tosa, --stablehlo)"};

  if (!o.problem.empty()) {
    for (const auto& [name, value] :
         {std::pair{"--op", &o.op}, std::pair{"--input-shape", &o.input_shape},
          std::pair{"--dtype", &o.dtype}})
      if (!value->empty())
        return Error{fmt::format("{}={}: the problem string already fixes it", name, *value)};
    if (o.opset != 0)
      return Error{fmt::format("--opset={}: only with --openvino or --onnx", o.opset)};
    Result<Problem> p = parse_problem(o.problem);
    if (!p) return p.error();
    if (Result<ShapeInfo> s = infer_shape(*p); !s) return s.error();
    if (input && (input->dtype != p->dtype || input->shape != input_shape(*p)))
      return Error{
          fmt::format("input: a {} tensor of shape ({}), but the problem takes {} of shape ({})",
                      dtype_name(input->dtype), fmt::join(input->shape, ","), dtype_name(p->dtype),
                      fmt::join(input_shape(*p), ","))};
    Framing framing;
    framing.input_shape = input_shape(*p);
    framing.crop_end.assign(p->axes.size(), 0);
    return ResolvedProblem{*p, "problem string", "", framing, RuleVerdict{}};
  }

  const auto& [framework, attributes] = *o.attributes.begin();
  if (o.opset != 0 && framework != Framework::openvino && framework != Framework::onnx)
    return Error{fmt::format("--opset={}: only with --openvino or --onnx", o.opset)};
  Result<FrontendInput> in = frontend_input(o, input);
  if (!in) return in.error();
  Result<Frontend> f = from_framework(framework, attributes, *in);
  if (!f) return f.error();
  return ResolvedProblem{f->problem, std::string(framework_name(framework)), f->operator_name,
                         f->framing, verdict_of(framework, f)};
}

std::optional<EmptyResult> empty_result(const ProblemOptions& options, const Tensor* input) {
  if (options.attributes.size() != 1 || !options.problem.empty() || options.opset != 0 ||
      options.attributes.begin()->first != Framework::stablehlo)
    return std::nullopt;  // resolve_problem's refusal stands
  Result<FrontendInput> in = frontend_input(options, input);
  if (!in) return std::nullopt;
  return stablehlo_empty_result(options.attributes.begin()->second, *in);
}

}  // namespace poolspec::cli
