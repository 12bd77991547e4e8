// Reading ONNX files: models and tensors (protobuf, onnx_pb.h), with their sizes bounded before
// they are parsed, and what poolspec takes from them: element types, tensor values, a pooling
// node's attributes as the onnx front-end's text, and the model's opset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "poolspec/dtype.hpp"
#include "poolspec/result.hpp"

namespace poolspec::cli {

// A model (.onnx). Refused unread: a path that is not a regular file, or one over 2 GiB
// (protobuf's own limit on a message).
Result<onnx::ModelProto> read_onnx_model(const std::string& path);
// A tensor (.pb), refused unread when its file is larger than `max_elements` doubles could be.
Result<onnx::TensorProto> read_onnx_tensor(const std::string& path, int64_t max_elements);

Result<DType> dtype_of_onnx(int onnx_type, const std::string& where);

// A TensorProto's values as doubles (int64 too: indices are below 2^53 here), from raw_data
// (little-endian) or the typed fields.
struct OnnxValues {
  std::vector<int64_t> shape;
  int onnx_type = 0;
  std::vector<double> values;
};
Result<OnnxValues> onnx_tensor_values(const onnx::TensorProto& t, const std::string& where);

// A node's attributes in the onnx front-end's text form: name=1 / name=3,3 / name=SAME_UPPER.
Result<std::string> onnx_attribute_text(const onnx::NodeProto& node);

// The version of the default (ai.onnx) domain the model imports: exactly one import, an opset
// poolspec knows (1 to 22). `where` begins the refusal.
Result<int> default_domain_opset(const onnx::ModelProto& model, const std::string& where);

}  // namespace poolspec::cli
