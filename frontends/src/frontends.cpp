#include "poolspec/frontends.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"
#include "poolspec/evaluate.hpp"

namespace poolspec {

// ---- Attributes -----------------------------------------------------------------------------

Result<Attributes> Attributes::parse(std::string_view text) {
  Attributes a;
  size_t i = 0;
  const auto space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  space();
  while (i < text.size()) {
    const size_t name_begin = i;
    while (i < text.size() && text[i] != '=' && !std::isspace(static_cast<unsigned char>(text[i])))
      ++i;
    const std::string name(text.substr(name_begin, i - name_begin));
    if (i >= text.size() || text[i] != '=')
      return Error{fmt::format("attribute '{}': expected name=value or name=\"value\"", name)};
    ++i;  // '='
    std::string value;
    if (i < text.size() && (text[i] == '"' || text[i] == '\'')) {
      const char quote = text[i++];
      const size_t end = text.find(quote, i);
      if (end == std::string_view::npos)
        return Error{fmt::format("attribute '{}': the quoted value is not closed", name)};
      value = std::string(text.substr(i, end - i));
      i = end + 1;
    } else {
      const size_t begin = i;
      while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      value = std::string(text.substr(begin, i - begin));
    }
    if (name.empty()) return Error{"attribute text: a value without a name"};
    if (!a.values_.emplace(name, value).second)
      return Error{fmt::format("attribute '{}': given twice", name)};
    a.used_[name] = false;
    space();
  }
  return a;
}

bool Attributes::has(std::string_view name) const { return values_.find(name) != values_.end(); }

Result<std::string> Attributes::text(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return Error{fmt::format("{}: required attribute is missing", name)};
  used_.find(name)->second = true;
  return it->second;
}

Result<bool> Attributes::boolean(std::string_view name) const {
  Result<std::string> t = text(name);
  if (!t) return t.error();
  // The spellings of IR XML (true), ONNX (1) and Python (True).
  if (*t == "true" || *t == "1" || *t == "True") return true;
  if (*t == "false" || *t == "0" || *t == "False") return false;
  return Error{fmt::format("{}={}: must be true or false", name, *t)};
}

Result<bool> Attributes::boolean_or(std::string_view name, bool absent) const {
  return has(name) ? boolean(name) : Result<bool>(absent);
}

Result<std::vector<int64_t>> Attributes::ints(std::string_view name) const {
  Result<std::string> t = text(name);
  if (!t) return t.error();
  std::vector<int64_t> out;
  std::string_view rest = *t;
  // A Python tuple or list, "(3, 3)" or "[3,3]", reads as "3,3".
  if (rest.size() >= 2 && ((rest.front() == '(' && rest.back() == ')') ||
                           (rest.front() == '[' && rest.back() == ']'))) {
    rest = rest.substr(1, rest.size() - 2);
    if (!rest.empty() && rest.back() == ',') rest.remove_suffix(1);  // "(3,)"
  }
  if (rest.empty()) return out;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec == std::errc::result_out_of_range && ptr == item.data() + item.size())
      return Error{fmt::format("{}=\"{}\": {} is out of range (an attribute is below 2^31)", name,
                               *t, item)};
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      return Error{fmt::format("{}=\"{}\": '{}' is not an integer", name, *t, item)};
    out.push_back(v);
    if (comma == std::string_view::npos) return out;
    rest.remove_prefix(comma + 1);
  }
}

Status Attributes::no_unused(std::string_view context) const {
  for (const auto& [name, used] : used_)
    if (!used) return Error{fmt::format("{}: unknown attribute for {}", name, context)};
  return Ok{};
}

// ---- every framework --------------------------------------------------------------------------

std::string_view framework_name(Framework f) {
  switch (f) {
    case Framework::ngraph: return "ngraph";
    case Framework::openvino: return "openvino";
    case Framework::onnx: return "onnx";
    case Framework::pytorch: return "pytorch";
    case Framework::tensorflow: return "tensorflow";
    case Framework::tflite: return "tflite";
    case Framework::onednn: return "onednn";
    case Framework::opencv: return "opencv";
    case Framework::armnn: return "armnn";
    case Framework::tosa: return "tosa";
    case Framework::stablehlo: return "stablehlo";
  }
  return "?";
}

std::string framework_names(std::string_view separator) {
  std::vector<std::string_view> names;
  for (Framework f : all_frameworks) names.push_back(framework_name(f));
  return fmt::format("{}", fmt::join(names, separator));
}

Result<Framework> parse_framework(std::string_view name) {
  for (Framework f : all_frameworks)
    if (framework_name(f) == name) return f;
  return Error{fmt::format("framework '{}': must be one of {}", name, framework_names())};
}

namespace {

// The operator's name in its framework, for reports.
std::string operator_name(Framework f, const FrontendInput& in, size_t spatial) {
  const bool avg = in.op == Op::avg;
  switch (f) {
    case Framework::ngraph: return avg ? "ngraph AvgPool v0" : "ngraph MaxPool v0";
    case Framework::openvino:
      return fmt::format("OpenVINO {}-{}", avg ? "AvgPool" : "MaxPool",
                         frontend::openvino_op_version(in.op, in.version == 0 ? 1 : in.version));
    case Framework::onnx: {
      const int opset = in.version == 0 ? 22 : in.version;
      return fmt::format("ONNX {}-{} (opset {})",
                         in.global ? (avg ? "GlobalAveragePool" : "GlobalMaxPool")
                                   : (avg ? "AveragePool" : "MaxPool"),
                         frontend::onnx_op_version(in.op, in.global, opset), opset);
    }
    case Framework::pytorch: return fmt::format("torch {}_pool{}d", avg ? "avg" : "max", spatial);
    case Framework::tensorflow: return fmt::format("tf.nn.{}_pool", avg ? "avg" : "max");
    case Framework::tflite: return avg ? "TFLite AVERAGE_POOL_2D" : "TFLite MAX_POOL_2D";
    case Framework::onednn: return avg ? "oneDNN pooling_avg" : "oneDNN pooling_max";
    case Framework::opencv: return avg ? "OpenCV Pooling ave" : "OpenCV Pooling max";
    case Framework::armnn: return avg ? "Arm NN Pooling2d Average" : "Arm NN Pooling2d Max";
    case Framework::tosa: return avg ? "TOSA AVG_POOL2D" : "TOSA MAX_POOL2D";
    case Framework::stablehlo:
      return avg ? "StableHLO reduce_window add, divided" : "StableHLO reduce_window maximum";
  }
  return "?";
}

}  // namespace

Result<Frontend> from_framework(Framework f, std::string_view attributes, const FrontendInput& in) {
  if (in.global && f != Framework::onnx)
    return Error{
        fmt::format("global pooling: only the onnx front-end has GlobalAveragePool / "
                    "GlobalMaxPool; {} takes a window",
                    framework_name(f))};
  const auto plain = [&](Result<Problem> p) -> Result<Frontend> {
    if (!p) return p.error();
    return frontend::framed(std::move(*p), in.input_shape, false);
  };
  Result<Frontend> out = Error{""};
  switch (f) {
    case Framework::ngraph: out = plain(from_ngraph(attributes, in)); break;
    case Framework::openvino: out = plain(from_openvino(attributes, in)); break;
    case Framework::onnx: out = plain(from_onnx(attributes, in)); break;
    case Framework::pytorch: out = plain(from_pytorch(attributes, in)); break;
    case Framework::tensorflow: out = from_tensorflow(attributes, in); break;
    case Framework::tflite: out = from_tflite(attributes, in); break;
    case Framework::onednn: out = from_onednn(attributes, in); break;
    case Framework::opencv: out = from_opencv(attributes, in); break;
    case Framework::armnn: out = from_armnn(attributes, in); break;
    case Framework::tosa: out = from_tosa(attributes, in); break;
    case Framework::stablehlo: out = from_stablehlo(attributes, in); break;
  }
  if (out && out->operator_name.empty())
    out->operator_name = operator_name(f, in, out->problem.axes.size());
  return out;
}

std::string_view RuleVerdict::name() const {
  switch (kind) {
    case invalid: return "invalid";
    case unpredictable: return "unpredictable";
    case beyond_model: return "beyond the model";
    case defined: break;
  }
  return "defined";
}

std::string RuleVerdict::text() const {
  if (kind == defined) return bound.empty() ? "defined" : "defined within a bound: " + bound;
  return fmt::format("{}: {}", name(), why);
}

RuleVerdict verdict_of(Framework f, const Result<Frontend>& resolved) {
  if (!resolved) {
    const std::string& message = resolved.error().message;
    const bool unstated = std::string_view(message).ends_with(model_cannot_state);
    return {unstated ? RuleVerdict::beyond_model : RuleVerdict::invalid, message, ""};
  }
  if (f == Framework::stablehlo)
    return {RuleVerdict::defined, "", stablehlo_bound(resolved->problem)};
  std::string why = f == Framework::tosa ? tosa_unpredictable(resolved->problem) : "";
  if (why.empty()) return {};
  return {RuleVerdict::unpredictable, std::move(why), ""};
}

// ---- layouts ----------------------------------------------------------------------------------

namespace {

// Copies between a channels-first (N, C, s...) and a channels-last (N, s..., C) tensor with the
// same N, C and spatial extents; `to_last` picks the direction.
Tensor transpose_channels(const Tensor& t, bool to_last) {
  const size_t rank = t.shape.size();
  std::vector<int64_t> shape = t.shape;
  int64_t n = 0, c = 0;
  if (to_last) {
    n = t.shape[0];
    c = t.shape[1];
    shape.erase(shape.begin() + 1);
    shape.push_back(c);
  } else {
    n = t.shape[0];
    c = t.shape[rank - 1];
    shape.pop_back();
    shape.insert(shape.begin() + 1, c);
  }
  int64_t plane = 1;
  for (size_t i = 1; i < rank; ++i) plane *= t.shape[i];
  plane /= c;
  Tensor out{t.dtype, shape, std::vector<double>(t.values.size())};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t x = 0; x < plane; ++x) {
        const size_t first = static_cast<size_t>((b * c + ch) * plane + x);  // channels-first
        const size_t last = static_cast<size_t>((b * plane + x) * c + ch);   // channels-last
        if (to_last)
          out.values[last] = t.values[first];
        else
          out.values[first] = t.values[last];
      }
  return out;
}

}  // namespace

bool crops(const Framing& framing) {
  const auto any = [](const std::vector<int64_t>& v) {
    return std::any_of(v.begin(), v.end(), [](int64_t c) { return c != 0; });
  };
  return any(framing.crop_begin) || any(framing.crop_end);
}

bool has_holes(const Framing& framing) {
  return std::any_of(framing.base_dilation.begin(), framing.base_dilation.end(),
                     [](int64_t b) { return b != 1; });
}

FrameworkTap framework_tap(const Framing& framing, const Tap& tap) {
  FrameworkTap out{tap.coordinate, std::string(tap_kind_name(tap.kind))};
  for (size_t i = 0; i < out.coordinate.size() && i < framing.crop_begin.size(); ++i)
    out.coordinate[i] += framing.crop_begin[i];
  if (tap.kind != TapKind::input) return out;
  for (size_t i = 0; i < out.coordinate.size() && i < framing.base_dilation.size(); ++i)
    if (out.coordinate[i] % framing.base_dilation[i] != 0) {
      out.kind = "hole";  // between two elements
      return out;
    }
  for (size_t i = 0; i < out.coordinate.size() && i < framing.base_dilation.size(); ++i)
    out.coordinate[i] /= framing.base_dilation[i];
  return out;
}

Tensor to_spec_layout(const Framing& framing, const Tensor& t) {
  Tensor batched = t;
  if (!framing.batch_axis) batched.shape.insert(batched.shape.begin(), 1);
  Tensor first = framing.channels_last ? transpose_channels(batched, false) : std::move(batched);
  if (!crops(framing) && !has_holes(framing)) return first;
  // On every spatial axis i: b - 1 holes between neighbours (StableHLO's base dilation b; the
  // extent d becomes (d - 1) b + 1), then the elements [crop_begin, extent - crop_end) of that
  // kept. Only what is kept is built: its size is the Problem's input's, which the commands'
  // limits check, however long the dilated input would be.
  const size_t rank = first.shape.size();
  std::vector<int64_t> shape = first.shape, begin(rank, 0), step(rank, 1);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (i < framing.base_dilation.size()) step[i + 2] = framing.base_dilation[i];
    if (i < framing.crop_begin.size()) begin[i + 2] = framing.crop_begin[i];
    const int64_t end = i < framing.crop_end.size() ? framing.crop_end[i] : 0;
    shape[i + 2] = (first.shape[i + 2] - 1) * step[i + 2] + 1 - begin[i + 2] - end;
  }
  Tensor out{first.dtype, shape, {}};
  std::vector<int64_t> x(rank, 0);
  const int64_t total = element_count(shape).value();
  out.values.reserve(static_cast<size_t>(total));
  for (int64_t k = 0; k < total; ++k) {
    int64_t src = 0;
    bool hole = false;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t at = begin[i] + x[i];  // in the dilated input
      hole = hole || at % step[i] != 0;
      src = src * first.shape[i] + at / step[i];
    }
    out.values.push_back(hole ? framing.hole : first.values[static_cast<size_t>(src)]);
    for (size_t i = rank; i-- > 0;) {
      if (++x[i] < shape[i]) break;
      x[i] = 0;
    }
  }
  return out;
}

Tensor to_framework_layout(const Framing& framing, const Tensor& t) {
  Tensor out = framing.channels_last ? transpose_channels(t, true) : t;
  if (!framing.batch_axis) out.shape.erase(out.shape.begin());  // N = 1
  return out;
}

std::vector<int64_t> to_framework_shape(const Framing& framing, const std::vector<int64_t>& s) {
  std::vector<int64_t> out = s;
  if (framing.channels_last) {
    out.erase(out.begin() + 1);
    out.push_back(s[1]);
  }
  if (!framing.batch_axis) out.erase(out.begin());
  return out;
}

Framing output_framing(const Framing& framing, const std::vector<int64_t>& framework_output_shape) {
  Framing out;
  out.channels_last = framing.channels_last;
  out.batch_axis = framing.batch_axis;
  out.input_shape = framework_output_shape;
  return out;
}

std::vector<int64_t> to_framework_coordinate(const Framing& framing, std::vector<int64_t> c) {
  if (framing.channels_last && c.size() >= 3) {
    const int64_t channel = c[1];
    c.erase(c.begin() + 1);
    c.push_back(channel);
  }
  if (!framing.batch_axis && !c.empty()) c.erase(c.begin());
  return c;
}

std::vector<int64_t> to_spec_coordinate(const Framing& framing, std::vector<int64_t> c) {
  if (!framing.batch_axis) c.insert(c.begin(), 0);
  if (framing.channels_last && c.size() >= 3) {
    const int64_t channel = c.back();
    c.pop_back();
    c.insert(c.begin() + 1, channel);
  }
  return c;
}

}  // namespace poolspec
