#include "models.hpp"

#include <charconv>
#include <exception>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <pugixml.hpp>

#include "onnx_files.hpp"

namespace poolspec::cli {

bool ModelShape::known() const {
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

std::string ModelShape::text() const { return fmt::format("{}", fmt::join(labels, "x")); }

namespace {

namespace fs = std::filesystem;

// Names made unique in the order found: an unnamed node is "<op>_<k>"; a repeated name gains
// "#2", "#3", ... (each name's next suffix remembered: linear in the number of nodes).
class UniqueNames {
 public:
  std::string operator()(std::string name, const std::string& op_type) {
    if (name.empty()) name = fmt::format("{}_{}", op_type, used_.size());
    std::string candidate = name;
    int& k = next_.try_emplace(name, 2).first->second;
    while (used_.count(candidate) > 0) candidate = fmt::format("{}#{}", name, k++);
    used_.insert(candidate);
    return candidate;
  }

 private:
  std::set<std::string> used_;
  std::map<std::string, int> next_;
};

// --- ONNX -------------------------------------------------------------------------------------

struct OnnxTensorType {
  int elem_type = 0;
  std::optional<ModelShape> shape;
};

OnnxTensorType onnx_type(const onnx::ValueInfoProto& v) {
  OnnxTensorType t;
  if (!v.type().has_tensor_type()) return t;
  const onnx::TypeProto::Tensor& tensor = v.type().tensor_type();
  t.elem_type = tensor.elem_type();
  if (!tensor.has_shape()) return t;
  ModelShape s;
  for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      s.dims.push_back(d.dim_value());
      s.labels.push_back(std::to_string(d.dim_value()));
    } else {
      s.dims.push_back(-1);
      s.labels.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
    }
  }
  t.shape = s;
  return t;
}

// Every value's type in a graph and the graphs nested in its nodes (If, Loop, Scan bodies).
void collect_types(const onnx::GraphProto& g, std::map<std::string, OnnxTensorType>& types) {
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()})
    for (const onnx::ValueInfoProto& v : *list) types[v.name()] = onnx_type(v);
  for (const onnx::NodeProto& n : g.node())
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) collect_types(a.g(), types);
      for (const onnx::GraphProto& sub : a.graphs()) collect_types(sub, types);
    }
}

// The first node (in any graph, nested ones included) with a `strides` attribute holding a value
// below 1, as "'name' (Op)"; "" when there is none.
std::string nonpositive_strides(const onnx::GraphProto& g) {
  for (const onnx::NodeProto& n : g.node())
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.name() == "strides")
        for (int64_t s : a.ints())
          if (s < 1) return fmt::format("'{}' ({})", n.name(), n.op_type());
      if (a.has_g())
        if (std::string inner = nonpositive_strides(a.g()); !inner.empty()) return inner;
      for (const onnx::GraphProto& sub : a.graphs())
        if (std::string inner = nonpositive_strides(sub); !inner.empty()) return inner;
    }
  return "";
}

struct OnnxPoolingOp {
  const char* op_type;
  Op op;
  bool global;
  bool in_model;  // poolspec's problem model holds it
};
constexpr OnnxPoolingOp onnx_pooling_ops[] = {
    {"AveragePool", Op::avg, false, true},      {"MaxPool", Op::max, false, true},
    {"GlobalAveragePool", Op::avg, true, true}, {"GlobalMaxPool", Op::max, true, true},
    {"LpPool", Op::avg, false, false},          {"GlobalLpPool", Op::avg, true, false},
    {"MaxRoiPool", Op::max, false, false}};

struct OnnxWalk {
  int opset = 0;
  const std::map<std::string, OnnxTensorType>& declared;
  const std::map<std::string, OnnxTensorType>& inferred;
  UniqueNames names;
  std::vector<PoolingNode> nodes;
};

void walk_onnx_graph(const onnx::GraphProto& g, const std::string& where, OnnxWalk& walk) {
  for (const onnx::NodeProto& n : g.node()) {
    for (const onnx::AttributeProto& a : n.attribute()) {  // the bodies of If, Loop, Scan
      const std::string inner =
          fmt::format("{}/{}.{}", where, n.name().empty() ? n.op_type() : n.name(), a.name());
      if (a.has_g()) walk_onnx_graph(a.g(), inner, walk);
      for (const onnx::GraphProto& sub : a.graphs()) walk_onnx_graph(sub, inner, walk);
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const OnnxPoolingOp* kind = nullptr;
    for (const OnnxPoolingOp& k : onnx_pooling_ops)
      if (n.op_type() == k.op_type) kind = &k;
    if (!kind) continue;
    PoolingNode node;
    node.name = walk.names(n.name(), n.op_type());
    node.op_type = n.op_type();
    node.where = where;
    node.framework = Framework::onnx;
    node.version = walk.opset;
    node.operator_version = fmt::format("opset {}", walk.opset);
    node.op = kind->op;
    node.global = kind->global;
    if (!kind->in_model)
      node.unsupported = fmt::format(
          "ONNX {}: poolspec's problem model holds average and max pooling only", n.op_type());
    if (Result<std::string> text = onnx_attribute_text(n); text)
      node.attributes = *text;
    else if (node.unsupported.empty())
      node.unsupported = text.error().message;
    if (n.input_size() > 0) {
      node.input_name = n.input(0);
      const auto type = walk.inferred.find(n.input(0));
      if (type != walk.inferred.end()) {
        node.input_shape = type->second.shape;
        if (type->second.elem_type != 0) {
          if (Result<DType> d = dtype_of_onnx(type->second.elem_type, node.input_name); d)
            node.dtype = *d;
          else if (node.unsupported.empty())
            node.unsupported = d.error().message;
        }
      }
    }
    if (n.output_size() > 0) {
      if (const auto d = walk.declared.find(n.output(0));
          d != walk.declared.end() && d->second.shape) {
        node.stated_output_shape = d->second.shape;
        node.stated_by = "the model";
      } else if (const auto i = walk.inferred.find(n.output(0));
                 i != walk.inferred.end() && i->second.shape) {
        node.stated_output_shape = i->second.shape;
        node.stated_by = "libonnx's shape inference";
      }
    }
    walk.nodes.push_back(std::move(node));
  }
}

// --- OpenVINO IR ------------------------------------------------------------------------------

Result<DType> ir_precision(std::string_view p) {
  static const std::pair<std::string_view, DType> names[] = {
      {"FP64", DType::f64}, {"FP32", DType::f32}, {"FP16", DType::f16},  {"BF16", DType::bf16},
      {"I32", DType::i32},  {"I8", DType::i8},    {"U8", DType::u8},     {"f64", DType::f64},
      {"f32", DType::f32},  {"f16", DType::f16},  {"bf16", DType::bf16}, {"i32", DType::i32},
      {"i8", DType::i8},    {"u8", DType::u8}};
  for (const auto& [name, dtype] : names)
    if (p == name) return dtype;
  return Error{fmt::format("precision '{}' is not a poolspec dtype", p)};
}

ModelShape ir_port_shape(const pugi::xml_node& port) {
  ModelShape s;
  for (const pugi::xml_node& dim : port.children("dim")) {
    std::string text = dim.child_value();
    text.erase(0, text.find_first_not_of(" \t\r\n"));
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    int64_t v = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
      s.dims.push_back(-1);
      s.labels.push_back(text.empty() ? "?" : text);
    } else {
      s.dims.push_back(v);
      s.labels.push_back(text);
    }
  }
  return s;
}

}  // namespace

Result<ModelReport> read_onnx_model_nodes(
    const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
  Result<onnx::ModelProto> model = read_onnx_model(path);
  if (!model) return model.error();
  Result<int> opset = default_domain_opset(*model, path);
  if (!opset) return opset.error();
  ModelReport report;
  report.format = "ONNX";
  report.detail = fmt::format("opset {}, IR version {}", *opset, model->ir_version());
  if (!model->producer_name().empty())
    report.detail +=
        fmt::format(", from {}{}", model->producer_name(),
                    model->producer_version().empty() ? "" : " " + model->producer_version());
  std::map<std::string, OnnxTensorType> declared;
  collect_types(model->graph(), declared);
  for (const onnx::ValueInfoProto& input : model->graph().input())
    report.graph_inputs.push_back(input.name());

  // Shapes given for graph inputs replace theirs before inference (symbolic batch sizes).
  onnx::ModelProto inferred = *model;
  for (onnx::ValueInfoProto& input : *inferred.mutable_graph()->mutable_input()) {
    const auto given = shapes.find(input.name());
    if (given == shapes.end()) continue;
    onnx::TensorShapeProto* s = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    s->clear_dim();
    for (int64_t d : given->second) s->add_dim()->set_dim_value(d);
  }
  // libonnx's shape inference divides by every node's strides unchecked (a stride of 0 is a
  // SIGFPE, not an exception): a model with one is read with its own shapes only.
  if (const std::string zero = nonpositive_strides(model->graph()); !zero.empty()) {
    report.notes.push_back(fmt::format(
        "libonnx's shape inference not run: node {} has a stride below 1, which it would "
        "divide by",
        zero));
    report.shapes_from = "the model's own shapes (shape inference not run)";
  } else {
    try {
      onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, false));
      report.shapes_from = "the model's own shapes and libonnx's shape inference";
    } catch (const std::exception& e) {
      report.notes.push_back(fmt::format("libonnx's shape inference stopped: {}", e.what()));
      report.shapes_from = "the model's own shapes (shape inference failed)";
    }
  }
  std::map<std::string, OnnxTensorType> types;
  collect_types(inferred.graph(), types);
  OnnxWalk walk{*opset, declared, types, {}, {}};
  walk_onnx_graph(inferred.graph(), "graph", walk);
  for (const onnx::FunctionProto& f : model->functions())
    for (const onnx::NodeProto& n : f.node())
      for (const OnnxPoolingOp& k : onnx_pooling_ops)
        if (n.op_type() == k.op_type) {
          report.notes.push_back(
              fmt::format("function {}.{} holds a {} node: model-local functions are not read",
                          f.domain(), f.name(), n.op_type()));
          break;
        }
  report.nodes = std::move(walk.nodes);
  return report;
}

Result<ModelReport> read_openvino_ir_nodes(const std::string& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return Error{fmt::format("{}: not a regular file", path)};
  constexpr uintmax_t max_bytes = uintmax_t{256} << 20;
  if (const uintmax_t size = fs::file_size(path, error); error || size > max_bytes)
    return Error{fmt::format("{}: {}", path,
                             error ? "cannot be read"
                                   : fmt::format("{} bytes, over the limit of {} for an IR's XML "
                                                 "(the weights live in its .bin)",
                                                 size, max_bytes))};
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_file(path.c_str());
  if (!parsed)
    return Error{
        fmt::format("{}: not XML ({} at byte {})", path, parsed.description(), parsed.offset)};
  const pugi::xml_node net = doc.child("net");
  if (!net) return Error{fmt::format("{}: not an OpenVINO IR (no <net> element)", path)};
  const std::string version_text = net.attribute("version").value();
  const int ir_version = version_text == "10" ? 10 : version_text == "11" ? 11 : 0;
  if (ir_version == 0)
    return Error{fmt::format(
        "{}: IR version '{}': poolspec reads IR versions 10 and 11 (AvgPool and MaxPool layers "
        "with an opset)",
        path, net.attribute("version").value())};
  ModelReport report;
  report.format = "OpenVINO IR";
  report.detail = fmt::format("IR version {}, net '{}'", ir_version, net.attribute("name").value());
  report.shapes_from = "the IR's port dimensions";

  // Which layer's port feeds each input port: (to-layer, to-port) -> (from-layer, from-port).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> edges;
  for (const pugi::xml_node& e : net.child("edges").children("edge"))
    edges[{e.attribute("to-layer").value(), e.attribute("to-port").value()}] = {
        e.attribute("from-layer").value(), e.attribute("from-port").value()};
  std::map<std::string, pugi::xml_node> layers;
  for (const pugi::xml_node& layer : net.child("layers").children("layer"))
    layers[layer.attribute("id").value()] = layer;

  UniqueNames names;
  for (const pugi::xml_node& layer : net.child("layers").children("layer")) {
    const std::string type = layer.attribute("type").value();
    if (type != "AvgPool" && type != "MaxPool") continue;
    PoolingNode node;
    node.op_type = type;
    node.name = names(layer.attribute("name").value(), type);
    const std::string id = layer.attribute("id").value();
    node.where = fmt::format("layer id {}", id);
    node.framework = Framework::openvino;
    node.op = type == "AvgPool" ? Op::avg : Op::max;
    node.operator_version = layer.attribute("version").value();
    int version = 0;
    if (node.operator_version.rfind("opset", 0) == 0) {
      const std::string digits = node.operator_version.substr(5);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
      if (ec != std::errc() || end != digits.data() + digits.size()) version = 0;
    }
    if (version < 1 || version > 16)
      node.unsupported =
          fmt::format("layer version '{}': an OpenVINO opset from opset1 to opset16 was expected",
                      node.operator_version);
    node.version = version;
    std::vector<std::string> parts;
    for (const pugi::xml_attribute& a : layer.child("data").attributes()) {
      const std::string value = a.value();
      if (value.find('"') != std::string::npos && node.unsupported.empty())
        node.unsupported = fmt::format("attribute {}: a value holding '\"'", a.name());
      parts.push_back(fmt::format("{}=\"{}\"", a.name(), value));
    }
    node.attributes = fmt::format("{}", fmt::join(parts, " "));
    const pugi::xml_node in_port = layer.child("input").child("port");
    if (in_port) {
      node.input_name = fmt::format("layer {} port {}", id, in_port.attribute("id").value());
      node.input_shape = ir_port_shape(in_port);
      std::string precision = in_port.attribute("precision").value();
      if (precision.empty())  // the producing port's
        if (const auto e = edges.find({id, in_port.attribute("id").value()}); e != edges.end())
          if (const auto from = layers.find(e->second.first); from != layers.end())
            for (const pugi::xml_node& p : from->second.child("output").children("port"))
              if (e->second.second == p.attribute("id").value())
                precision = p.attribute("precision").value();
      if (!precision.empty()) {
        if (Result<DType> d = ir_precision(precision); d)
          node.dtype = *d;
        else if (node.unsupported.empty())
          node.unsupported = fmt::format("input port: {}", d.error().message);
      }
    }
    if (const pugi::xml_node out_port = layer.child("output").child("port")) {
      node.stated_output_shape = ir_port_shape(out_port);
      node.stated_by = "the IR";
    }
    report.nodes.push_back(std::move(node));
  }
  return report;
}

}  // namespace poolspec::cli
