#include "poolspec/shape.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "poolspec/formulas.hpp"

namespace poolspec {

namespace {

Error axis_error(std::string_view attribute, size_t axis, int64_t value, std::string_view rule) {
  return Error{fmt::format("{}[{}]={}: {}", attribute, axis, value, rule)};
}

// Every rule of the model except the empty-window policy.
Status validate_attributes(const Problem& p) {
  if (p.batch < 1 || p.batch > max_attribute)
    return Error{fmt::format("N={}: the batch must be in [1, 2^31)", p.batch)};
  if (p.channels < 1 || p.channels > max_attribute)
    return Error{fmt::format("C={}: the channel count must be in [1, 2^31)", p.channels)};
  if (p.axes.empty())
    return Error{"spatial rank 0: a pooling problem needs at least one spatial axis"};

  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    struct Field {
      std::string_view name;
      int64_t value;
      int64_t min;
    };
    const Field fields[] = {{"input", a.extent, 1},         {"kernel", a.kernel, 1},
                            {"strides", a.stride, 1},       {"dilations", a.dilation, 1},
                            {"pads_begin", a.pad_begin, 0}, {"pads_end", a.pad_end, 0}};
    for (const Field& f : fields) {
      if (f.value < f.min)
        return axis_error(f.name, i, f.value, fmt::format("{} must be >= {}", f.name, f.min));
      if (f.value > max_attribute)
        return axis_error(f.name, i, f.value, fmt::format("{} must be below 2^31", f.name));
    }
    const int64_t k_eff = formulas::effective_kernel<int64_t>(a.kernel, a.dilation);
    const int64_t padded = formulas::padded_extent(formulas::terms_of<int64_t>(a));
    if (k_eff > padded)
      return axis_error(
          "kernel", i, a.kernel,
          fmt::format("the window (extent {} with dilation {}) must fit in the padded "
                      "input extent {} = {} + {} + {}",
                      k_eff, a.dilation, padded, a.extent, a.pad_begin, a.pad_end));
  }

  if (p.divisor == Divisor::override_value && p.divisor_override < 1)
    return Error{
        fmt::format("divisor_override={}: an override divisor must be >= 1", p.divisor_override)};
  if (p.divisor != Divisor::override_value && p.divisor_override != 0)
    return Error{fmt::format("divisor_override={}: only meaningful with the override divisor",
                             p.divisor_override)};
  if (p.divisor_override > max_attribute)
    return Error{fmt::format("divisor_override={}: must be below 2^31", p.divisor_override)};
  if (p.bias != 0 && p.op != Op::avg)
    return Error{fmt::format("bias={}: only an average has a bias", p.bias)};
  if (p.bias <= -max_elements || p.bias >= max_elements)
    return Error{fmt::format("bias={}: must be below 2^62 in magnitude", p.bias)};
  for (const auto& [name, zp] :
       {std::pair<const char*, int64_t>{"input_zp", p.input_zp}, {"output_zp", p.output_zp}}) {
    if (zp == 0) continue;
    if (p.op != Op::avg || is_float(p.dtype))
      return Error{
          fmt::format("{}={}: only an average of an integer dtype has zero points", name, zp)};
    if (zp < int_min(p.dtype) || zp > int_max(p.dtype))
      return Error{fmt::format("{}={}: must lie in {}'s range [{}, {}]", name, zp,
                               dtype_name(p.dtype), int_min(p.dtype), int_max(p.dtype))};
  }
  if (p.op == Op::avg && p.indices != Indices::none)
    return Error{
        fmt::format("indices={}: only max pooling has an indices output", indices_name(p.indices))};
  if (p.index_axis != 0 && p.indices != Indices::tensor)
    return Error{fmt::format("index_axis={}: only meaningful with indices=tensor", p.index_axis)};
  if (p.index_axis < 0 || p.index_axis >= static_cast<int64_t>(p.axes.size()) + 2)
    return Error{fmt::format("index_axis={}: must be an axis of the {}-D input, in [0, {})",
                             p.index_axis, p.axes.size() + 2, p.axes.size() + 2)};
  if (p.max_start == MaxStart::lowest && p.op != Op::max)
    return Error{"start=lowest: only max pooling has a running maximum"};
  if (p.max_start == MaxStart::lowest && p.nan == NanPolicy::propagate)
    return Error{
        "start=lowest with nan=propagate: a strict '>' scan from lowest never selects a "
        "NaN; use nan=ignore"};
  if (p.op == Op::max && p.divisor != Divisor::exclude)
    return Error{fmt::format("divisor={}: max pooling has no divisor", divisor_name(p.divisor))};
  if (p.zeros == Zeros::either && p.indices != Indices::none && is_float(p.dtype))
    return Error{fmt::format(
        "zeros=either with indices={}: where a zero result may take either sign, which zero's "
        "index it reports is not defined",
        indices_name(p.indices))};
  if (!is_float(p.dtype) && (p.empty == EmptyWindow::nan || p.empty == EmptyWindow::neg_inf))
    return Error{fmt::format("empty={}: not a value of the integer dtype {}",
                             empty_window_name(p.empty), dtype_name(p.dtype))};
  return Ok{};
}

}  // namespace

std::optional<EmptyWindowWitness> find_empty_window(const Problem& p) {
  // include_full and override divisors are never zero; for max and exclude the window must hold
  // an input element, for include_clip a tap inside the padded extent.
  if (p.op == Op::avg &&
      (p.divisor == Divisor::include_full || p.divisor == Divisor::override_value))
    return std::nullopt;
  const bool padded_rule = p.op == Op::avg && p.divisor == Divisor::include_clip;

  for (size_t i = 0; i < p.axes.size(); ++i) {
    const auto a = formulas::terms_of<int64_t>(p.axes[i]);
    const int64_t outputs = formulas::output_extent(a, p.rounding);
    const auto empty_at = [&](int64_t j) {
      return (padded_rule ? formulas::padded_taps(a, j) : formulas::in_bounds_taps(a, j)) == 0;
    };
    const auto witness = [&](int64_t j) {
      return EmptyWindowWitness{static_cast<int>(i), j, formulas::window_start(a, j)};
    };
    // No loop over the windows: attributes reach 2^31, and a scan of them hung (a fuzz finding).
    // Windows that start before 0 (in-bounds rule only; include_clip windows start at -pb or
    // later, inside the padded extent): window 0 lies wholly before the input when pb >= K, and
    // is then the first empty one. Otherwise each such window reaches 0, and its first tap at or
    // after 0 lies in [0, dl) -- inside the input when d >= dl. Only when the taps can jump over
    // the whole input (dl > d) are the windows looked at one by one (proofs: empty/*_dilated).
    if (!padded_rule && outputs > 0) {
      if (a.pad_begin >= formulas::effective_kernel(a.kernel, a.dilation)) return witness(0);
      if (a.dilation > a.extent)
        for (int64_t j = 0; j < outputs && formulas::window_start(a, j) < 0; ++j)
          if (empty_at(j)) return witness(j);
    }
    // Windows that start at or after the end (d for the in-bounds rule, d + pe for include_clip)
    // are empty, and no other window that starts at 0 or later is; starts grow with j, so the
    // first of them is found by a division.
    const int64_t end = padded_rule ? a.extent + a.pad_end : a.extent;
    const int64_t first_late = std::max<int64_t>(0, ceil_div(end + a.pad_begin, a.stride));
    if (first_late < outputs) return witness(first_late);
  }
  return std::nullopt;
}

Result<ShapeInfo> infer_shape(const Problem& p) {
  if (Status s = validate_attributes(p); !s) return s.error();
  ShapeInfo info;
  info.input_shape = input_shape(p);
  info.output_shape = {p.batch, p.channels};
  for (const Axis& a : p.axes)
    info.output_shape.push_back(
        formulas::output_extent(formulas::terms_of<int64_t>(a), p.rounding));

  const auto count = [](const std::vector<int64_t>& shape) {
    CheckedInt n = 1;
    for (int64_t d : shape) n = n * CheckedInt(d);
    return n;
  };
  const CheckedInt in = count(info.input_shape), out = count(info.output_shape);
  for (const auto& [what, n, shape] : {std::tuple{"input", in, &info.input_shape},
                                       std::tuple{"output", out, &info.output_shape}}) {
    if (n.overflowed() || n.value() >= max_elements)
      return Error{fmt::format("{} shape {}: the element count must be below 2^62", what,
                               fmt::join(*shape, "x"))};
  }
  info.input_elements = in.value();
  info.output_elements = out.value();
  CheckedInt classified = 0, inside = 1;
  for (const Axis& a : p.axes) {
    classified = classified + CheckedInt(a.kernel);
    inside = inside * CheckedInt(std::min(a.kernel, a.extent));
  }
  const CheckedInt visits = out * (classified + inside);
  info.tap_visits = visits.overflowed() ? std::numeric_limits<int64_t>::max() : visits.value();
  info.empty_window = find_empty_window(p);
  return info;
}

Status validate(const Problem& p) {
  Result<ShapeInfo> info = validated_shape(p);
  if (!info) return info.error();
  return Ok{};
}

Result<ShapeInfo> validated_shape(const Problem& p) {
  Result<ShapeInfo> info = infer_shape(p);
  if (!info) return info;
  if (p.empty == EmptyWindow::error && info->empty_window) {
    const EmptyWindowWitness& w = *info->empty_window;
    return Error{fmt::format(
        "empty=error: the window at output index {} of spatial axis {} (first tap at input "
        "coordinate {}) has {}; choose an empty-window value (zero, nan, lowest, -inf)",
        w.index, w.axis, w.start,
        p.op == Op::avg && p.divisor == Divisor::include_clip
            ? "no tap inside the padded extent (divisor 0)"
            : (p.op == Op::avg ? "no input element (exclude divisor 0)" : "no input element"))};
  }
  return info;
}

}  // namespace poolspec
