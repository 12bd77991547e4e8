#include "onnx_files.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace poolspec::cli {

namespace {

namespace fs = std::filesystem;

template <class Message>
Result<Message> read_message(const std::string& path, uintmax_t max_bytes,
                             const std::string& too_large) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::is_regular_file(status))
    return Error{fmt::format(
        "{}: {}", path,
        error ? "cannot be read (" + error.message() + ")" : std::string("not a regular file"))};
  const uintmax_t size = fs::file_size(path, error);
  if (error) return Error{fmt::format("{}: cannot be read ({})", path, error.message())};
  if (size > max_bytes)
    return Error{
        fmt::format("{}: {} bytes, over the limit of {} {}", path, size, max_bytes, too_large)};
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{fmt::format("{}: cannot open", path)};
  Message m;
  if (!m.ParseFromIstream(&file))
    return Error{fmt::format("{}: not a valid protobuf message", path)};
  return m;
}

}  // namespace

Result<onnx::ModelProto> read_onnx_model(const std::string& path) {
  return read_message<onnx::ModelProto>(path, uintmax_t{2} << 30,
                                        "(2 GiB, protobuf's limit on a message)");
}

Result<onnx::TensorProto> read_onnx_tensor(const std::string& path, int64_t max_elements) {
  // Eight bytes an element (int64, double) and room for the proto's own fields.
  const uintmax_t limit = static_cast<uintmax_t>(max_elements) * 8 + (uintmax_t{1} << 20);
  return read_message<onnx::TensorProto>(path, limit, "(--max-elements raises it)");
}

Result<DType> dtype_of_onnx(int onnx_type, const std::string& where) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DType::f32;
    case onnx::TensorProto::DOUBLE: return DType::f64;
    case onnx::TensorProto::FLOAT16: return DType::f16;
    case onnx::TensorProto::BFLOAT16: return DType::bf16;
    case onnx::TensorProto::INT8: return DType::i8;
    case onnx::TensorProto::UINT8: return DType::u8;
    case onnx::TensorProto::INT32: return DType::i32;
    default:
      return Error{
          fmt::format("{}: ONNX element type {} is not a poolspec dtype", where, onnx_type)};
  }
}

Result<OnnxValues> onnx_tensor_values(const onnx::TensorProto& t, const std::string& where) {
  OnnxValues v;
  for (int64_t d : t.dims()) v.shape.push_back(d);
  v.onnx_type = t.data_type();
  int64_t count = 1;
  for (int64_t d : v.shape) {
    if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d))
      return Error{fmt::format("{}: dims ({}) are not a tensor poolspec can hold", where,
                               fmt::join(v.shape, ","))};
    count *= d;
  }
  const auto n = static_cast<size_t>(count);
  const std::string& raw = t.raw_data();
  const auto from_raw = [&](size_t width, auto decode) -> Status {
    if (raw.size() != n * width)
      return Error{fmt::format("{}: raw_data holds {} bytes for {} elements of {} bytes", where,
                               raw.size(), n, width)};
    for (size_t i = 0; i < n; ++i) v.values.push_back(decode(raw.data() + i * width));
    return Ok{};
  };
  const auto le = [](const char* p, size_t width) {
    uint64_t bits = 0;
    for (size_t b = 0; b < width; ++b)
      bits |= uint64_t{static_cast<unsigned char>(p[b])} << (8 * b);
    return bits;
  };
  Status s = Ok{};
  const bool has_raw = t.has_raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (has_raw)
        s = from_raw(4, [&](const char* p) {
          float f;
          const auto b = static_cast<uint32_t>(le(p, 4));
          std::memcpy(&f, &b, 4);
          return double(f);
        });
      else
        for (float f : t.float_data()) v.values.push_back(f);
      break;
    case onnx::TensorProto::DOUBLE:
      if (has_raw)
        s = from_raw(8, [&](const char* p) {
          double d;
          const uint64_t b = le(p, 8);
          std::memcpy(&d, &b, 8);
          return d;
        });
      else
        for (double d : t.double_data()) v.values.push_back(d);
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: {
      const bool half = t.data_type() == onnx::TensorProto::FLOAT16;
      const auto decode = [half](uint16_t bits) {
        return half ? f16_value(bits) : bf16_value(bits);
      };
      if (has_raw)
        s = from_raw(2, [&](const char* p) { return decode(static_cast<uint16_t>(le(p, 2))); });
      else
        for (int32_t bits : t.int32_data()) v.values.push_back(decode(static_cast<uint16_t>(bits)));
      break;
    }
    case onnx::TensorProto::INT8:
      if (has_raw)
        s = from_raw(1, [](const char* p) { return double(static_cast<int8_t>(*p)); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::UINT8:
      if (has_raw)
        s = from_raw(1, [](const char* p) { return double(static_cast<unsigned char>(*p)); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::INT32:
      if (has_raw)
        s = from_raw(4, [&](const char* p) { return double(static_cast<int32_t>(le(p, 4))); });
      else
        for (int32_t x : t.int32_data()) v.values.push_back(x);
      break;
    case onnx::TensorProto::INT64:
      if (has_raw)
        s = from_raw(8, [&](const char* p) { return double(static_cast<int64_t>(le(p, 8))); });
      else
        for (int64_t x : t.int64_data()) v.values.push_back(static_cast<double>(x));
      break;
    default:
      return Error{fmt::format("{}: ONNX element type {} is not supported", where, t.data_type())};
  }
  if (!s) return s.error();
  if (v.values.size() != n)
    return Error{fmt::format("{}: {} values for dims ({})", where, v.values.size(),
                             fmt::join(v.shape, ","))};
  return v;
}

Result<std::string> onnx_attribute_text(const onnx::NodeProto& node) {
  std::vector<std::string> parts;
  for (const onnx::AttributeProto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: parts.push_back(fmt::format("{}={}", a.name(), a.i())); break;
      case onnx::AttributeProto::INTS:
        parts.push_back(fmt::format("{}={}", a.name(), fmt::join(a.ints(), ",")));
        break;
      case onnx::AttributeProto::STRING:
        parts.push_back(fmt::format("{}={}", a.name(), a.s()));
        break;
      default:
        return Error{fmt::format("attribute {}: type {} is not a pooling attribute type", a.name(),
                                 static_cast<int>(a.type()))};
    }
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

Result<int> default_domain_opset(const onnx::ModelProto& model, const std::string& where) {
  int64_t opset = 0;
  int imports = 0;
  for (const onnx::OperatorSetIdProto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset = o.version();
      ++imports;
    }
  // The model's opset decides each operator's version: a model that does not state it exactly
  // once, or states one that is not an opset, has no meaning to check.
  if (imports != 1)
    return Error{
        fmt::format("{} imports the default (ai.onnx) domain {} times; a model states "
                    "its opset exactly once",
                    where, imports)};
  if (opset < 1 || opset > 22)
    return Error{
        fmt::format("{}: opset_import version {}: ONNX opsets run from 1 (poolspec "
                    "knows 1 to 22)",
                    where, opset)};
  return static_cast<int>(opset);
}

}  // namespace poolspec::cli
