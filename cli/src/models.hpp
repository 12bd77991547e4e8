// Whole models, read for their pooling nodes: ONNX models (.onnx, protobuf) and OpenVINO IR
// (.xml, IR versions 10 and 11). What `poolspec check-model` reports on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poolspec/frontends.hpp"
#include "poolspec/result.hpp"

namespace poolspec::cli {

// A tensor's shape as a model states it: each dimension a number, or unknown (-1) with the
// model's name for it ("N", "batch") or "?".
struct ModelShape {
  std::vector<int64_t> dims;        // -1: unknown
  std::vector<std::string> labels;  // what to print for each dimension
  bool known() const;
  std::string text() const;  // "Nx64x112x112"
};

struct PoolingNode {
  std::string name;     // the node's (layer's) name, made unique within the model
  std::string op_type;  // "MaxPool", "AveragePool", "GlobalAveragePool", "AvgPool", "LpPool"
  std::string where;    // "graph", "graph/loop_body", "layer id 7"
  Framework framework = Framework::onnx;
  int version = 0;               // the ONNX opset / the OpenVINO opset the layer names
  std::string operator_version;  // "opset 13", "opset8"
  Op op = Op::avg;
  bool global = false;
  std::string attributes;  // in the front-end's text form
  // Non-empty: what keeps poolspec from stating the node as a problem (an op outside its model,
  // an attribute of a type it cannot read).
  std::string unsupported;
  std::string input_name;
  std::optional<ModelShape> input_shape;
  std::optional<DType> dtype;
  std::string dtype_note;  // where the dtype came from when the model does not state it
  // The output shape the model states (declared), or that the format's own tooling infers.
  std::optional<ModelShape> stated_output_shape;
  std::string stated_by;  // "the model", "libonnx's shape inference", "the IR"
};

struct ModelReport {
  std::string format;  // "ONNX" or "OpenVINO IR"
  std::string detail;  // "opset 12, ir_version 7, producer pytorch 1.13"
  std::string shapes_from;
  std::vector<std::string> notes;  // what the reading could not do (shape inference errors)
  std::vector<PoolingNode> nodes;
  std::vector<std::string> graph_inputs;  // ONNX: the names a shape may be given for
};

// Each reads the file at `path`, its size checked before it is parsed. ONNX: `shapes` replaces
// the shapes of the graph inputs it names before libonnx's shape inference runs (a symbolic
// batch size); the IR states every port's dimensions itself.
Result<ModelReport> read_onnx_model_nodes(
    const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes);
Result<ModelReport> read_openvino_ir_nodes(const std::string& path);

}  // namespace poolspec::cli
