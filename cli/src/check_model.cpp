// `poolspec check-model`: every pooling node of an ONNX model or an OpenVINO IR, resolved under
// its framework's rules: the problem, the output shape against the one the model states, empty
// windows, and which other frameworks' rules would compute something else. With inputs for
// nodes, the spec's outputs, written out and compared with a runtime's.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "colour.hpp"
#include "command_support.hpp"
#include "commands.hpp"
#include "framework_comparison.hpp"
#include "models.hpp"
#include "onnx_files.hpp"
#include "onnx_test.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/files.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

namespace {

namespace fs = std::filesystem;

// "NAME=VALUE" options: the name, the value; refused when either is missing. Both a node's name
// and a file's path may hold '=': with `is_name`, the split is at the '=' whose left part is a
// name, and where several are, whose right part is a file that exists (refused as ambiguous when
// that leaves none or several); without it, at the last '=' (the value is a list of numbers).
Result<std::map<std::string, std::string>> named_values(
    const char* option, const std::vector<std::string>& items,
    const std::function<bool(const std::string&)>& is_name = {}) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    size_t eq = item.rfind('=');
    if (is_name) {
      std::vector<size_t> named;
      for (size_t at = item.find('='); at != std::string::npos; at = item.find('=', at + 1))
        if (at + 1 < item.size() && is_name(item.substr(0, at))) named.push_back(at);
      if (named.size() > 1) {
        std::vector<size_t> existing;
        for (const size_t at : named) {
          std::error_code ignored;
          const std::string path = item.substr(at + 1);
          if (path == "-" || fs::exists(path, ignored)) existing.push_back(at);
        }
        if (existing.size() != 1)
          return Error{fmt::format("{} '{}': ambiguous: both '{}' and '{}' name nodes{}", option,
                                   item, item.substr(0, named[0]), item.substr(0, named[1]),
                                   existing.empty() ? ", and neither leaves a file that exists"
                                                    : ", and both leave a file that exists")};
        named = existing;
      }
      eq = named.empty() ? item.find('=') : named[0];  // none: the error names the first part
    }
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return Error{
          fmt::format("{} '{}': give NAME=VALUE (a node's or input's name, '=', then "
                      "the value)",
                      option, item)};
    if (!out.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      return Error{fmt::format("{} '{}': {} is given twice", option, item, item.substr(0, eq))};
  }
  return out;
}

bool has_suffix(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A tensor file: ONNX's TensorProto (.pb) or NumPy (.npy, or "-").
Result<Tensor> read_tensor_file(const std::string& path, int64_t max_elements) {
  if (has_suffix(path, ".pb")) {
    Result<onnx::TensorProto> t = read_onnx_tensor(path, max_elements);
    if (!t) return t.error();
    Result<OnnxValues> v = onnx_tensor_values(*t, path);
    if (!v) return v.error();
    Result<DType> d = dtype_of_onnx(v->onnx_type, path);
    if (!d) return d.error();
    if (static_cast<int64_t>(v->values.size()) > max_elements)
      return Error{fmt::format("{}: {} elements, over the limit of {} (--max-elements raises it)",
                               path, v->values.size(), max_elements)};
    Result<Tensor> made = make_tensor(*d, v->shape, v->values);
    if (!made) return Error{fmt::format("{}: {}", path, made.error().message)};
    return made;
  }
  return read_npy(path, NpyLimits{max_elements, "--max-elements raises it"});
}

// A node's name as a file name: letters, digits, '.', '_' and '-' kept, anything else '_'.
std::string file_name_for(const std::string& node) {
  std::string s;
  for (char c : node)
    s +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (s.empty() || s[0] == '.') s.insert(0, "_");
  return s + ".npy";
}

struct FrameworkSummary {
  std::string not_compared;  // why no comparison was made (its work over the limit)
  std::vector<std::string> agree;
  std::vector<std::pair<std::string, std::string>> differ;          // label, first difference
  std::vector<std::pair<std::string, std::string>> cannot_express;  // label, why
};

struct NodeResult {
  PoolingNode node;
  std::string status = "checked";  // checked, invalid, not_checked
  std::string reason;              // invalid / not_checked: why
  std::vector<std::string> notes;  // assumptions made (a batch size taken as 1)
  std::vector<std::string> findings;
  std::optional<Frontend> frontend;
  std::optional<ShapeInfo> shape;
  std::vector<int64_t> input_shape, output_shape;  // the framework's layout
  std::optional<bool> stated_agrees;
  std::optional<FrameworkSummary> frameworks;
  std::string output_file;                    // --output-dir: where its output went
  std::optional<OnnxDataSetReport> expected;  // --expect: against the runtime's output
};

bool shapes_agree(const ModelShape& stated, const std::vector<int64_t>& computed) {
  if (stated.dims.size() != computed.size()) return false;
  for (size_t i = 0; i < computed.size(); ++i)
    if (stated.dims[i] >= 0 && stated.dims[i] != computed[i]) return false;
  return true;
}

FrameworkSummary summarize(const std::vector<FrameworkRow>& rows) {
  FrameworkSummary s;
  for (size_t i = 1; i < rows.size(); ++i) {
    const FrameworkRow& r = rows[i];
    if (!r.refusal.empty())
      s.cannot_express.emplace_back(r.translation.label, r.refusal);
    else if (r.differing == 0)
      s.agree.push_back(r.translation.label);
    else
      s.differ.emplace_back(r.translation.label, r.first_difference);
  }
  return s;
}

// The comparisons' work: at most 2^22 tap visits per node, and 2^26 (or --max-tap-visits, when
// lower) for the whole model: a model of many large nodes is compared node by node until this
// is spent, the rest said not compared.
constexpr int64_t most_tap_visits = int64_t{1} << 22, most_model_tap_visits = int64_t{1} << 26;

// The node under its own rules, then under every other framework's, on a ramp input of one
// batch and one channel (no rule depends on either). `budget`: the model's tap visits left.
FrameworkSummary compare_node(const PoolingNode& node, const FrontendInput& in, const Frontend& f,
                              const ProblemOptions& limits, int64_t& budget) {
  Intent intent = intent_of(f);
  FrontendInput one = in;
  intent.shape[0] = intent.shape[1] = 1;
  one.input_shape[0] = one.input_shape[1] = 1;
  if (intent.dtype == DType::f16 || intent.dtype == DType::bf16)  // a ramp f16 cannot hold
    intent.dtype = one.dtype = DType::f32;
  const Translation own{node.framework,
                        fmt::format("{}@{}", framework_name(node.framework), node.version),
                        node.attributes, one, ""};
  Result<Frontend> resolved = from_framework(node.framework, node.attributes, one);
  FrameworkSummary none;
  if (!resolved) {  // with one batch and one channel: not seen, but said if it happens
    none.not_compared = resolved.error().message;
    return none;
  }
  const ResolvedProblem source{resolved->problem, std::string(framework_name(node.framework)),
                               resolved->operator_name, resolved->framing,
                               verdict_of(node.framework, resolved)};
  // The comparison evaluates every framework's rules on the ramp: its work is bounded up front.
  if (Result<ShapeInfo> s = infer_shape(resolved->problem); s) {
    int64_t taps = 1;
    for (const Axis& a : resolved->problem.axes)
      taps = a.kernel > 0 && taps <= most_tap_visits ? taps * a.kernel : most_tap_visits + 1;
    if (s->output_elements > most_tap_visits / std::max<int64_t>(taps, 1)) {
      none.not_compared =
          fmt::format("{} outputs of {} taps each: over 2^22 tap visits, the comparison's limit",
                      s->output_elements, taps);
      return none;
    }
    const int64_t visits = s->output_elements * std::max<int64_t>(taps, 1);
    if (visits > budget) {
      none.not_compared = fmt::format(
          "{} tap visits, over the {} the earlier nodes' comparisons left of the model's {} "
          "(--max-tap-visits lowers it)",
          visits, budget, std::min(most_model_tap_visits, limits.max_tap_visits));
      return none;
    }
    budget -= visits;
  }
  Result<Tensor> ramp = comparison_input(source, intent, nullptr);
  if (!ramp) {
    none.not_compared = ramp.error().message;
    return none;
  }
  return summarize(compare_frameworks(own, intent, *ramp, limits));
}

NodeResult check_node(const PoolingNode& node,
                      const std::map<std::string, std::vector<int64_t>>& shapes,
                      const ProblemOptions& limits, const Tensor* given, int64_t& budget) {
  NodeResult r;
  r.node = node;
  if (!node.unsupported.empty()) {
    r.status = "not_checked";
    r.reason = node.unsupported;
    return r;
  }
  // The input's shape: given for the node (--shape), or the model's, where a given input must
  // agree with every dimension the model states; else the given input's.
  std::vector<int64_t> shape;
  if (const auto s = shapes.find(node.name); s != shapes.end()) {
    shape = s->second;
  } else if (node.input_shape && !node.input_shape->dims.empty()) {
    const ModelShape& m = *node.input_shape;
    shape = m.dims;
    if (given) {
      bool agrees = given->shape.size() == shape.size();
      for (size_t i = 0; agrees && i < shape.size(); ++i)
        agrees = shape[i] < 0 || shape[i] == given->shape[i];
      if (!agrees) {
        r.status = "not_checked";
        r.reason =
            fmt::format("--input: a tensor of shape ({}) for an input the model states as {}",
                        fmt::join(given->shape, ","), m.text());
        return r;
      }
      shape = given->shape;
    }
    for (size_t i = 0; i < shape.size() && i < 2; ++i)
      if (shape[i] < 0) {
        shape[i] = 1;  // N or C: no rule depends on them
        r.notes.push_back(
            fmt::format("{} '{}' taken as 1", i == 0 ? "batch" : "channels", m.labels[i]));
      }
    for (size_t i = 2; i < shape.size(); ++i)
      if (shape[i] < 0) {
        r.status = "not_checked";
        r.reason = fmt::format("the input's shape is {}: give it with --shape {}=N,C,...", m.text(),
                               node.name);
        return r;
      }
  } else if (given) {
    shape = given->shape;
  } else {
    r.status = "not_checked";
    r.reason = fmt::format(
        "the model does not state the input's shape: give it with --shape "
        "{}=N,C,...",
        node.name);
    return r;
  }
  if (given && given->shape != shape) {
    r.status = "not_checked";
    r.reason = fmt::format("--input: a tensor of shape ({}) for an input of shape ({})",
                           fmt::join(given->shape, ","), fmt::join(shape, ","));
    return r;
  }
  FrontendInput in;
  in.op = node.op;
  in.global = node.global;
  in.version = node.version;
  in.input_shape = shape;
  if (given) {
    in.dtype = given->dtype;
  } else if (node.dtype) {
    in.dtype = *node.dtype;
  } else {
    in.dtype = DType::f32;
    r.notes.push_back("the model states no element type: f32 assumed");
  }
  r.input_shape = shape;
  Result<Frontend> f = from_framework(node.framework, node.attributes, in);
  if (!f) {
    r.status = "invalid";
    r.reason = f.error().message;
    return r;
  }
  r.frontend = *f;
  Result<ShapeInfo> s = infer_shape(f->problem);
  if (!s) {
    r.status = "invalid";
    r.reason = s.error().message;
    return r;
  }
  r.shape = *s;
  r.output_shape = to_framework_shape(f->framing, s->output_shape);
  if (Status v = validate(f->problem); !v) {
    r.status = "invalid";
    r.reason = v.error().message;
  }
  if (node.stated_output_shape) {
    r.stated_agrees = shapes_agree(*node.stated_output_shape, r.output_shape);
    if (!*r.stated_agrees)
      r.findings.push_back(fmt::format("output shape: {} by {}, {} by {}'s rules",
                                       node.stated_output_shape->text(), node.stated_by,
                                       fmt::join(r.output_shape, "x"), f->operator_name));
  }
  if (r.status == "checked") r.frameworks = compare_node(node, in, *f, limits, budget);
  return r;
}

void print_node(const NodeResult& r) {
  const PoolingNode& n = r.node;
  const std::string op =
      r.frontend ? r.frontend->operator_name
                 : end_of(printable(fmt::format("{} {} ({})", framework_name(n.framework),
                                                n.op_type, n.operator_version)),
                          40);
  // Names and places come from the file: made printable, and cut to keep the line within 100
  // columns (--json has them whole).
  const std::string name = end_of(printable(n.name), 40);
  const size_t used = name.size() + op.size() + 6;
  fmt::print("\n{}  {}  [{}]\n", name, op,
             end_of(printable(n.where), used + 12 < text_width ? text_width - used : 12));
  constexpr size_t indent = 16;
  // Labels in capitals (INVALID, FINDING) are painted red on a terminal.
  const auto row = [&](std::string_view label, const std::string& text) {
    std::string padded = fmt::format("{:<{}}", label, indent - 2);
    if (label == "INVALID" || label == "FINDING") padded = painted(stdout, Paint::failure, padded);
    fmt::print("  {}{}\n", padded, wrap_words(printable(text), indent));
  };
  if (!n.attributes.empty()) row("attributes", n.attributes);
  if (r.status == "not_checked") {
    row("not checked", r.reason);
    return;
  }
  for (const std::string& note : r.notes) row("assumed", note);
  if (!r.input_shape.empty())
    row("shape",
        fmt::format(
            "{} {} -> {}", r.frontend ? dtype_name(r.frontend->problem.dtype) : "",
            fmt::join(r.input_shape, "x"),
            r.output_shape.empty() ? "?" : fmt::format("{}", fmt::join(r.output_shape, "x"))));
  if (r.frontend) {  // a problem string is never broken: past 100 columns, on a line of its own
    const std::string problem = format_problem(r.frontend->problem);
    if (indent + problem.size() <= text_width)
      row("problem", problem);
    else
      fmt::print("  problem\n    {}\n", problem);
  }
  if (r.status == "invalid") row("INVALID", r.reason);
  if (r.shape) {
    const bool avg = r.frontend->problem.op == Op::avg;
    if (!r.shape->empty_window)
      row("windows", avg ? "every divisor is non-zero" : "every window holds an input element");
    else
      row("windows", fmt::format("EMPTY: output {} of spatial axis {} {}",
                                 r.shape->empty_window->index, r.shape->empty_window->axis,
                                 avg ? "divides by zero" : "holds no input element"));
  }
  if (n.stated_output_shape && r.stated_agrees)
    row("stated", fmt::format("{} by {}: {}", n.stated_output_shape->text(), n.stated_by,
                              *r.stated_agrees ? "agrees" : "DIFFERS"));
  if (r.frameworks) {
    const FrameworkSummary& s = *r.frameworks;
    if (!s.not_compared.empty()) row("not compared", s.not_compared);
    if (!s.agree.empty()) row("agree", fmt::format("{}", fmt::join(s.agree, ", ")));
    if (!s.differ.empty()) row("compared on", "a ramp 1, 2, 3, ... of one batch and one channel");
    for (const auto& [label, first] : s.differ) row("differs", fmt::format("{}: {}", label, first));
    if (!s.cannot_express.empty()) {
      std::vector<std::string> labels;
      for (const auto& item : s.cannot_express) labels.push_back(item.first);
      row("cannot state", fmt::format("{}", fmt::join(labels, ", ")));
    }
  }
  if (!r.output_file.empty()) row("output", r.output_file);
  if (r.expected) {
    const OnnxDataSetReport& e = *r.expected;
    const bool ok = e.shape_ok && e.values_outside_bound == 0 && e.indices_differing <= 0;
    row("expected",
        ok ? (e.worst_ratio > 0 ? fmt::format("matches (float sums: worst error {:.2f} of the "
                                              "derived bound)",
                                              e.worst_ratio)
                                : std::string("matches exactly"))
           : fmt::format("DIFFERS: {}", e.first_mismatch));
  }
  for (const std::string& f : r.findings) row("FINDING", f);
}

nlohmann::json node_json(const NodeResult& r) {
  const PoolingNode& n = r.node;
  nlohmann::json j = {{"name", n.name},
                      {"op_type", n.op_type},
                      {"where", n.where},
                      {"framework", framework_name(n.framework)},
                      {"operator_version", n.operator_version},
                      {"attributes", n.attributes},
                      {"status", r.status},
                      {"reason", json_text_or_null(r.reason)},
                      {"notes", r.notes},
                      {"findings", r.findings}};
  j["operator"] = r.frontend ? nlohmann::json(r.frontend->operator_name) : nlohmann::json();
  j["problem"] =
      r.frontend ? nlohmann::json(format_problem(r.frontend->problem)) : nlohmann::json();
  j["input_shape"] = r.input_shape.empty() ? nlohmann::json() : nlohmann::json(r.input_shape);
  j["output_shape"] = r.output_shape.empty() ? nlohmann::json() : nlohmann::json(r.output_shape);
  j["stated_output_shape"] =
      n.stated_output_shape ? nlohmann::json(n.stated_output_shape->labels) : nlohmann::json();
  j["stated_by"] = n.stated_output_shape ? nlohmann::json(n.stated_by) : nlohmann::json();
  j["stated_agrees"] = r.stated_agrees ? nlohmann::json(*r.stated_agrees) : nlohmann::json();
  if (r.shape && r.shape->empty_window)
    j["empty_window"] = {{"axis", r.shape->empty_window->axis},
                         {"index", r.shape->empty_window->index},
                         {"start", r.shape->empty_window->start}};
  else
    j["empty_window"] = nullptr;
  if (r.frameworks) {
    nlohmann::json differ = nlohmann::json::array(), cannot = nlohmann::json::array();
    for (const auto& [label, first] : r.frameworks->differ)
      differ.push_back({{"framework", label}, {"first_difference", first}});
    for (const auto& [label, why] : r.frameworks->cannot_express)
      cannot.push_back({{"framework", label}, {"reason", why}});
    j["frameworks"] = {
        {"agree", r.frameworks->agree}, {"differ", differ}, {"cannot_express", cannot}};
  } else {
    j["frameworks"] = nullptr;
  }
  j["output_file"] = r.output_file.empty() ? nlohmann::json() : nlohmann::json(r.output_file);
  if (r.expected)
    j["expected"] = {{"shape_ok", r.expected->shape_ok},
                     {"values_outside_bound", r.expected->values_outside_bound},
                     {"worst_error_over_bound", r.expected->worst_ratio},
                     {"first_mismatch", json_text_or_null(r.expected->first_mismatch)}};
  else
    j["expected"] = nullptr;
  return j;
}

}  // namespace

int check_model_command(const CheckModelOptions& o, bool json) {
  std::string format = o.format;
  if (format.empty())
    format = has_suffix(o.model, ".onnx") ? "onnx" : has_suffix(o.model, ".xml") ? "openvino" : "";
  if (format != "onnx" && format != "openvino")
    return refuse(format.empty()
                      ? fmt::format("{}: the file name ends in neither .onnx nor .xml; give "
                                    "--format onnx or --format openvino",
                                    o.model)
                      : fmt::format("--format={}: must be onnx or openvino", format));
  Result<std::map<std::string, std::string>> shape_texts = named_values("--shape", o.shapes);
  if (!shape_texts) return refuse(shape_texts.error().message);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [name, text] : *shape_texts) {
    Result<std::vector<int64_t>> dims = parse_int_list("--shape " + name, text);
    if (!dims) return refuse(dims.error().message);
    for (int64_t d : *dims)
      if (d < 0)
        return refuse(fmt::format("--shape {}={}: dimension {} is negative", name, text, d));
    shapes[name] = *dims;
  }
  // The inputs' files are read once the model's node names are known (a name or a path may hold
  // '='); the texts are checked first, before any work.
  for (const auto& [option, items] : {std::pair{"--input", &o.inputs}, {"--expect", &o.expected}})
    for (const std::string& item : *items)
      if (item.find('=') == std::string::npos)
        return refuse(
            fmt::format("{} '{}': give NODE=FILE (a pooling node's name, '=', then "
                        "the file)",
                        option, item));

  Result<ModelReport> model =
      format == "onnx" ? read_onnx_model_nodes(o.model, shapes) : read_openvino_ir_nodes(o.model);
  if (!model) return refuse(model.error().message);
  // Every name given must name something: a pooling node (or, for --shape, an ONNX graph input).
  const std::function<bool(const std::string&)> is_node = [&](const std::string& name) {
    return std::any_of(model->nodes.begin(), model->nodes.end(),
                       [&](const PoolingNode& n) { return n.name == name; });
  };
  Result<std::map<std::string, std::string>> inputs = named_values("--input", o.inputs, is_node);
  if (!inputs) return refuse(inputs.error().message);
  Result<std::map<std::string, std::string>> expects =
      named_values("--expect", o.expected, is_node);
  if (!expects) return refuse(expects.error().message);
  const auto node_names = [&] {
    std::vector<std::string> names;
    for (const PoolingNode& n : model->nodes) names.push_back(n.name);
    return names.empty() ? std::string("it has none")
                         : fmt::format("its pooling nodes are {}", fmt::join(names, ", "));
  };
  for (const auto& [name, _] : shapes)
    if (!is_node(name) && std::find(model->graph_inputs.begin(), model->graph_inputs.end(), name) ==
                              model->graph_inputs.end())
      return refuse(
          fmt::format("--shape {}: the model has no pooling node or graph input of "
                      "that name ({})",
                      name, node_names()));
  for (const auto* given : {&*inputs, &*expects})
    for (const auto& [name, _] : *given)
      if (!is_node(name))
        return refuse(fmt::format("{} {}: the model has no pooling node of that name ({})",
                                  given == &*inputs ? "--input" : "--expect", name, node_names()));
  for (const auto& [name, _] : *expects)
    if (inputs->count(name) == 0)
      return refuse(
          fmt::format("--expect {}: give the node's --input too (its output is "
                      "computed from it)",
                      name));
  if (!o.output_dir.empty() && inputs->empty())
    return refuse("--output-dir: no node has an --input, so there is nothing to write");
  if (!o.output_dir.empty()) {
    std::error_code error;
    if (!fs::is_directory(o.output_dir, error))
      return refuse(fmt::format("--output-dir {}: not a folder", o.output_dir));
  }
  ProblemOptions limits;
  limits.max_elements = o.max_elements;
  limits.max_tap_visits = o.max_tap_visits;

  std::vector<NodeResult> results;
  int64_t comparison_budget = std::min(most_model_tap_visits, o.max_tap_visits);
  std::vector<std::string> output_paths;
  std::vector<std::string> output_bytes;
  for (const PoolingNode& node : model->nodes) {
    std::optional<Tensor> given;
    if (const auto in = inputs->find(node.name); in != inputs->end()) {
      Result<Tensor> t = read_tensor_file(in->second, o.max_elements);
      if (!t) return refuse(fmt::format("--input {}: {}", node.name, t.error().message));
      given = std::move(*t);
    }
    NodeResult r = check_node(node, shapes, limits, given ? &*given : nullptr, comparison_budget);
    if (given && r.status != "checked")  // asked to evaluate: a node that cannot be is bad input
      return refuse(fmt::format("--input {}: the node cannot be evaluated ({}): {}", node.name,
                                r.status == "invalid" ? "invalid" : "not checked", r.reason));
    if (given && r.frontend && r.status == "checked") {
      if (Status s = check_output_size(r.frontend->problem, limits); !s)
        return refuse(fmt::format("{}: {}", node.name, s.error().message));
      Result<Output> out =
          evaluate(r.frontend->problem, to_spec_layout(r.frontend->framing, *given));
      if (!out) return refuse(fmt::format("{}: {}", node.name, out.error().message));
      if (!o.output_dir.empty()) {
        r.output_file = (fs::path(o.output_dir) / file_name_for(node.name)).string();
        output_paths.push_back(r.output_file);
        output_bytes.push_back(encode_npy(to_framework_layout(r.frontend->framing, out->values)));
      }
      if (const auto e = expects->find(node.name); e != expects->end()) {
        Result<Tensor> want = read_tensor_file(e->second, o.max_elements);
        if (!want) return refuse(fmt::format("--expect {}: {}", node.name, want.error().message));
        const Tensor spec_want =
            want->shape == r.output_shape
                ? to_spec_layout(output_framing(r.frontend->framing, r.output_shape), *want)
                : *want;
        const OnnxValues expected{spec_want.shape, 0, spec_want.values};
        Result<OnnxDataSetReport> c =
            compare_with_stored(r.frontend->problem, to_spec_layout(r.frontend->framing, *given),
                                *out, expected, nullptr);
        if (!c) return refuse(fmt::format("{}: {}", node.name, c.error().message));
        r.expected = *c;
        if (!c->shape_ok || c->values_outside_bound > 0)
          r.findings.push_back(fmt::format("against --expect: {}", c->first_mismatch));
      }
    }
    results.push_back(std::move(r));
  }
  if (!output_paths.empty()) {
    if (Status s = check_output_paths(output_paths); !s) return refuse(s.error().message);
    for (const std::string& out : output_paths)
      for (const auto* given : {&*inputs, &*expects})
        for (const auto& [name, path] : *given)
          if (same_file(out, path))
            return refuse(fmt::format("--output-dir {}: {} would replace the file given as {} {}",
                                      o.output_dir, out, given == &*inputs ? "--input" : "--expect",
                                      name));
    std::vector<std::pair<std::string, std::string_view>> files;
    for (size_t i = 0; i < output_paths.size(); ++i)
      files.emplace_back(output_paths[i], output_bytes[i]);
    if (Status s = write_files_atomically(files); !s) return refuse(s.error().message);
  }

  int checked = 0, invalid = 0, not_checked = 0, with_findings = 0, compared = 0, portable = 0;
  for (const NodeResult& r : results) {
    checked += r.status == "checked";
    invalid += r.status == "invalid";
    not_checked += r.status == "not_checked";
    with_findings += !r.findings.empty();
    const bool was_compared = r.frameworks && r.frameworks->not_compared.empty();
    compared += was_compared;
    portable += was_compared && r.frameworks->differ.empty();
  }
  const bool failed = invalid > 0 || with_findings > 0;
  if (json) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeResult& r : results) nodes.push_back(node_json(r));
    print_json("check-model", {{"model", o.model},
                               {"format", model->format},
                               {"detail", model->detail},
                               {"shapes_from", model->shapes_from},
                               {"notes", model->notes},
                               {"nodes", nodes},
                               {"summary",
                                {{"pooling_nodes", results.size()},
                                 {"checked", checked},
                                 {"invalid", invalid},
                                 {"not_checked", not_checked},
                                 {"with_findings", with_findings},
                                 {"compared", compared},
                                 {"same_in_every_framework", portable}}},
                               {"passed", !failed}});
  } else {
    fmt::print(
        "{}\n",
        wrap_words(printable(fmt::format("{}: {}, {}", o.model, model->format, model->detail)), 4));
    fmt::print("{} pooling node{}; shapes from {}\n", results.size(),
               results.size() == 1 ? "" : "s", model->shapes_from);
    for (const std::string& note : model->notes)
      fmt::print("note: {}\n", wrap_words(printable(note), 6));
    for (const NodeResult& r : results) print_node(r);
    fmt::print(
        "\n{} checked, {} invalid, {} not checked, {} with findings; {} of the {} compared\n"
        "compute the same under every framework's rules that can state them\n",
        checked, invalid, not_checked, with_findings, portable, compared);
  }
  return failed ? exit_check_failed : exit_ok;
}

}  // namespace poolspec::cli
