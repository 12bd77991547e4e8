#include "frontend_support.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/formulas.hpp"

namespace poolspec::frontend {

std::string_view trim(std::string_view t) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  return t;
}

Result<PadMode> pad_mode(std::string_view name, std::string_view value) {
  std::string lower(value);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "explicit" || lower == "notset") return PadMode::explicit_pads;
  if (lower == "same_upper") return PadMode::same_upper;
  if (lower == "same_lower") return PadMode::same_lower;
  if (lower == "valid") return PadMode::valid;
  return Error{fmt::format("{}={}: must be explicit (notset), same_upper, same_lower or valid",
                           name, value)};
}

Status read_axis_list(const Attributes& attrs, std::string_view name, size_t rank, int64_t min,
                      std::vector<int64_t>& out) {
  Result<std::vector<int64_t>> v = attrs.ints(name);
  if (!v) return v.error();
  if (v->size() != rank)
    return Error{fmt::format("{}=\"{}\": {} values, but the input has {} spatial axes", name,
                             fmt::join(*v, ","), v->size(), rank)};
  if (Status s = check_axis_values(name, *v, min); !s) return s;
  out = std::move(*v);
  return Ok{};
}

Status check_axis_values(std::string_view name, const std::vector<int64_t>& values, int64_t min) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < min)
      return Error{fmt::format("{}[{}]={}: {} must be >= {}", name, i, values[i], name, min)};
    if (values[i] > max_attribute)
      return Error{fmt::format("{}[{}]={}: {} must be below 2^31", name, i, values[i], name)};
  }
  return Ok{};
}

Frontend framed(Problem p, const std::vector<int64_t>& framework_input_shape, bool channels_last) {
  Frontend f{std::move(p), Framing{}, ""};
  f.framing.channels_last = channels_last;
  f.framing.input_shape = framework_input_shape;
  f.framing.crop_end.assign(f.problem.axes.size(), 0);
  return f;
}

int openvino_op_version(Op op, int opset) {
  if (op == Op::avg) return opset >= 16 ? 16 : opset >= 14 ? 14 : 1;
  return opset >= 14 ? 14 : opset >= 8 ? 8 : 1;
}

int onnx_op_version(Op op, bool global, int opset) {
  const auto latest = [opset](std::initializer_list<int> versions) {
    int v = 1;
    for (int x : versions)
      if (x <= opset) v = x;
    return v;
  };
  if (global) return latest({1, 22});
  return op == Op::avg ? latest({1, 7, 10, 11, 19, 22}) : latest({1, 8, 10, 11, 12, 22});
}

Result<Geometry> read_geometry(const Attributes& attrs, const GeometryNames& names, size_t rank,
                               Defaults defaults) {
  Geometry g;
  if (Status s = read_axis_list(attrs, names.kernel, rank, 1, g.kernel); !s) return s.error();
  if (attrs.has(names.strides) || !defaults.strides_one) {
    if (Status s = read_axis_list(attrs, names.strides, rank, 1, g.strides); !s) return s.error();
  } else {
    g.strides.assign(rank, 1);
  }
  g.dilations.assign(rank, 1);
  if (attrs.has(names.pad_mode)) {
    Result<std::string> mode = attrs.text(names.pad_mode);
    Result<PadMode> m = pad_mode(names.pad_mode, *mode);
    if (!m) return m.error();
    g.mode = *m;
  }
  // Pads are checked whenever given, though auto padding then ignores them.
  for (auto [name, target] :
       {std::pair{names.pads_begin, &g.pads_begin}, std::pair{names.pads_end, &g.pads_end}}) {
    const bool required = g.mode == PadMode::explicit_pads && !defaults.pads_zero;
    if (attrs.has(name) || required) {
      if (Status s = read_axis_list(attrs, name, rank, 0, *target); !s) return s.error();
    } else {
      target->assign(rank, 0);
    }
  }
  return g;
}

Result<Problem> resolve(const Geometry& g, const GeometryNames& names, const FrontendInput& in,
                        const std::vector<int64_t>& shape) {
  Problem p;
  p.op = in.op;
  p.dtype = in.dtype;
  p.batch = shape[0];
  p.channels = shape[1];
  p.rounding = g.rounding;
  for (size_t i = 0; i + 2 < shape.size(); ++i) {
    Axis a;
    a.extent = shape[i + 2];
    a.kernel = g.kernel[i];
    a.stride = g.strides[i];
    a.dilation = g.dilations[i];
    if (a.extent < 1 || a.extent > max_attribute)
      return Error{
          fmt::format("input shape[{}]={}: spatial extents must be in [1, 2^31)", i + 2, a.extent)};
    switch (g.mode) {
      case PadMode::explicit_pads:
        a.pad_begin = g.pads_begin[i];
        a.pad_end = g.pads_end[i];
        break;
      case PadMode::same_upper:
      case PadMode::same_lower: {
        const auto pads = formulas::same_pads<int64_t>(a.extent, a.kernel, a.stride, a.dilation,
                                                       g.mode == PadMode::same_upper);
        a.pad_begin = pads.begin;
        a.pad_end = pads.end;
        break;
      }
      case PadMode::valid: break;
    }
    const int64_t k_eff = formulas::effective_kernel<int64_t>(a.kernel, a.dilation);
    if (k_eff > a.extent + a.pad_begin + a.pad_end)
      return Error{fmt::format(
          "{}[{}]={}: the window (extent {}) must fit in the padded input extent {} = {} + {} + "
          "{} ({}, {})",
          names.kernel, i, a.kernel, k_eff, a.extent + a.pad_begin + a.pad_end, a.extent,
          a.pad_begin, a.pad_end, names.pads_begin, names.pads_end)};
    p.axes.push_back(a);
  }
  return p;
}

Status check_input_shape(const std::vector<int64_t>& shape, size_t spatial_min, size_t spatial_max,
                         std::string_view context) {
  const size_t r = shape.size();
  if (r < spatial_min + 2 || r > spatial_max + 2) {
    if (spatial_min == spatial_max)
      return Error{fmt::format("input rank {}: {} takes {}-D input (N, C and {} spatial axes)", r,
                               context, spatial_min + 2, spatial_min)};
    if (spatial_max >= 64)
      return Error{fmt::format("input rank {}: {} takes (N, C, d1, ..., dn) with {} <= n <= {}", r,
                               context, spatial_min, spatial_max)};
    return Error{
        fmt::format("input rank {}: {} takes {}-D to {}-D input (N, C and {} to {} "
                    "spatial axes)",
                    r, context, spatial_min + 2, spatial_max + 2, spatial_min, spatial_max)};
  }
  for (size_t i = 0; i < r; ++i)
    if (shape[i] < 1 || shape[i] > max_attribute)
      return Error{
          fmt::format("input shape[{}]={}: every extent must be in [1, 2^31)", i, shape[i])};
  return Ok{};
}

Status check_window_beyond_pads(const Problem& p, std::string_view kernel_name,
                                std::string_view begin_name, std::string_view end_name,
                                std::string_view why) {
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    for (auto [name, pad] : {std::pair{begin_name, a.pad_begin}, std::pair{end_name, a.pad_end}})
      if (a.kernel <= pad)
        return Error{
            fmt::format("{}[{}]={}: {} requires {}[{}]={} > the pad, or a window could "
                        "lie entirely in the padding",
                        name, i, pad, why, kernel_name, i, a.kernel)};
  }
  return Ok{};
}

Status check_dtype(DType d, const std::vector<DType>& allowed, std::string_view context) {
  for (DType a : allowed)
    if (a == d) return Ok{};
  std::vector<std::string_view> names;
  for (DType a : allowed) names.push_back(dtype_name(a));
  return Error{
      fmt::format("dtype {}: {} takes {}", dtype_name(d), context, fmt::join(names, ", "))};
}

Result<int64_t> read_scalar(const Attributes& attrs, std::string_view name, int64_t min,
                            std::optional<int64_t> absent) {
  if (!attrs.has(name)) {
    if (absent) return *absent;
    return Error{fmt::format("{}: required attribute is missing", name)};
  }
  std::vector<int64_t> v;
  if (Status s = read_axis_list(attrs, name, 1, min, v); !s) return s.error();
  return v[0];
}

Result<Rounding> rounding_for_extents(const Problem& p, const std::vector<int64_t>& extents,
                                      const std::vector<Rounding>& candidates,
                                      std::string_view context) {
  for (Rounding r : candidates) {
    bool all = true;
    for (size_t i = 0; i < p.axes.size() && all; ++i)
      all = formulas::output_extent(formulas::terms_of<int64_t>(p.axes[i]), r) == extents[i];
    if (all) return r;
  }
  return Error{fmt::format("{}: output extents {} are not those of its rounding over these pads {}",
                           context, fmt::join(extents, "x"), model_cannot_state)};
}

void use_lowest_start_max(Problem& p) {
  p.max_start = MaxStart::lowest;
  p.empty = EmptyWindow::lowest;
  p.nan = NanPolicy::ignore;
}

}  // namespace poolspec::frontend
