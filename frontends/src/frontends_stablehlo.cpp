// The StableHLO front-end: pooling as reduce_window, the form frameworks lower to StableHLO
// (openxla/stablehlo, the specification's "reduce_window"): a max is reduce_window with `maximum`,
// an average reduce_window with `add` divided by the window size or by a reduce_window of ones.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <string>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"
#include "poolspec/stablehlo_window.hpp"

namespace poolspec {

using namespace frontend;

namespace {

constexpr std::string_view context = "StableHLO reduce_window";

// A list attribute with one value per input dimension; StableHLO's own `[[0, 1], [1, 1]]` and
// `array<i64: 1, 3>` spellings read as the flat list (padding: low, high per dimension).
Result<std::vector<int64_t>> dimension_list(const Attributes& attrs, std::string_view name,
                                            size_t count, int64_t absent) {
  if (!attrs.has(name)) return std::vector<int64_t>(count, absent);
  Result<std::string> text = attrs.text(name);
  if (!text) return text.error();
  std::string flat;
  std::string_view rest = *text;
  if (rest.starts_with("array<i64:") && rest.ends_with(">"))
    rest = rest.substr(10, rest.size() - 11);
  // A flat list, bracketed or not; padding may also be a list of [low, high] pairs.
  static const std::regex flat_list(R"(\s*(\[[^\[\]]*\]|[^\[\]]*)\s*)");
  static const std::regex pairs(
      R"(\s*\[\s*\[[^\[\],]*,[^\[\],]*\](\s*,\s*\[[^\[\],]*,[^\[\],]*\])*\s*\]\s*)");
  const std::string whole(rest);
  if (!std::regex_match(whole, flat_list) && !(name == "padding" && std::regex_match(whole, pairs)))
    return Error{fmt::format("{}={}: not a list of integers{}", name, *text,
                             name == "padding" ? " (or of [low, high] pairs)" : "")};
  for (char c : rest)
    if (c != '[' && c != ']') flat += c;
  Result<Attributes> one = Attributes::parse(fmt::format("{}=\"{}\"", name, flat));
  if (!one) return Error{fmt::format("{}={}: not a list of integers", name, *text)};
  Result<std::vector<int64_t>> v = one->ints(name);
  if (!v) return v.error();
  if (v->size() != count)
    return Error{fmt::format("{}={}: {} values, but the input's rank {} needs {}", name, *text,
                             v->size(), count / (name == "padding" ? 2 : 1), count)};
  for (size_t i = 0; i < v->size(); ++i)
    if ((*v)[i] > max_attribute || (*v)[i] < -max_attribute)
      return Error{fmt::format("{}[{}]={}: must be within +-(2^31 - 1)", name, i, (*v)[i])};
  return v;
}

// init_value: a number, or inf / -inf.
Result<double> init_value(const Attributes& attrs, double absent) {
  if (!attrs.has("init_value")) return absent;
  Result<std::string> text = attrs.text("init_value");
  if (!text) return text.error();
  const std::string_view t = trim(*text);
  if (t == "-inf") return -std::numeric_limits<double>::infinity();
  if (t == "inf" || t == "+inf") return std::numeric_limits<double>::infinity();
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || t.empty())
    return Error{fmt::format("init_value={}: not a number (or inf, -inf)", *text)};
  return v;
}

}  // namespace

// Choices (docs/semantics.md, StableHLO's row):
//  - Attributes per input dimension, as reduce_window has them: window_dimensions (required),
//    window_strides, base_dilations, window_dilations (default 1s; C5-C8: each > 0), padding
//    (low, high per dimension, default 0s; either may be negative: a crop), init_value; and
//    for an average, divisor=window (the window size: flax/JAX's count_include_pad=True, the
//    default) or divisor=count (a reduce_window of ones over the same padding: padding not
//    counted).
//  - The batch dimension is 0 and the channels 1 (NCHW) or the last (channels-last): each
//    untouched (window 1, stride 1, no dilation, no padding). A dimension pooled with them
//    is beyond the model.
//  - The output extents: "num_windows" (spec/include/poolspec/stablehlo_window.hpp, proved
//    against window enumeration): with unit base dilation and the crops taken off, the floor
//    rule. An axis with no window ("is_empty_window", C15) is an empty result, not an error:
//    beyond the Problem model (it has no empty outputs), stated by stablehlo_empty_result.
//  - Base dilation b inserts b - 1 holes holding the init value between neighbouring elements,
//    before the padding (a crop then takes from the dilated input). The Problem's input is the
//    dilated one, holes as elements (Framing::base_dilation): a max's -inf holes are never its
//    result unless the window holds nothing else, an add's zeros change no sum, and
//    divisor=window counts them as StableHLO does. divisor=count with holes is beyond the model
//    (its count leaves the holes out, while they are the Problem's input elements).
//  - max: init_value -inf (floats) or the dtype's lowest (integers), which padding also holds:
//    the window's maximum, NaN propagated (`maximum` is IEEE 754's), a window of padding only
//    the init value. Other init values are beyond the model.
//  - add: init_value 0 (another would shift every sum); float dtypes only (an integer sum is
//    accumulated in the element type and wraps); a window of padding only under divisor=count
//    is 0 / 0 = NaN. The sum's order is the implementation's: defined within the bound
//    stablehlo_bound states.
namespace {

// reduce_window's attributes, one value per input dimension, checked against the constraints
// StableHLO states on them alone (C5-C8); init_value and divisor as given.
struct ReduceWindow {
  std::vector<int64_t> window, strides, base, dilations, padding;  // padding: low, high per dim
  double init = 0;
  double lowest = 0;  // a max's own init value: -inf, or an integer dtype's lowest
  bool by_count = false;
};

Result<ReduceWindow> parse_reduce_window(std::string_view text, const FrontendInput& in) {
  const bool avg = in.op == Op::avg;
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  const std::vector<int64_t>& x = in.input_shape;
  if (Status s = check_input_shape(x, 1, 64, context); !s) return s.error();
  const size_t r = x.size();
  ReduceWindow rw;
  for (auto [name, target, absent] : {std::tuple{"window_dimensions", &rw.window, int64_t{0}},
                                      std::tuple{"window_strides", &rw.strides, int64_t{1}},
                                      std::tuple{"base_dilations", &rw.base, int64_t{1}},
                                      std::tuple{"window_dilations", &rw.dilations, int64_t{1}}}) {
    if (absent == 0 && !attrs->has(name))
      return Error{fmt::format("{}: required attribute is missing", name)};
    Result<std::vector<int64_t>> v = dimension_list(*attrs, name, r, absent);
    if (!v) return v.error();
    for (size_t i = 0; i < r; ++i)
      if ((*v)[i] < 1)
        return Error{fmt::format("{}[{}]={}: must be > 0 (reduce_window's constraints C5-C8)", name,
                                 i, (*v)[i])};
    *target = std::move(*v);
  }
  Result<std::vector<int64_t>> pads = dimension_list(*attrs, "padding", 2 * r, 0);
  if (!pads) return pads.error();
  rw.padding = std::move(*pads);

  rw.lowest = is_float(in.dtype) ? -std::numeric_limits<double>::infinity()
                                 : static_cast<double>(int_min(in.dtype));
  Result<double> init = init_value(*attrs, avg ? 0.0 : rw.lowest);
  if (!init) return init.error();
  rw.init = *init;
  if (avg && attrs->has("divisor")) {
    Result<std::string> d = attrs->text("divisor");
    if (!d) return d.error();
    if (*d != "window" && *d != "count")
      return Error{
          fmt::format("divisor={}: must be window (the window size) or count (a "
                      "reduce_window of ones)",
                      *d)};
    rw.by_count = *d == "count";
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();
  return rw;
}

// One dimension of the reduce_window, as stablehlo_window.hpp counts its windows.
stablehlo::WindowAxis<int64_t> window_axis(const ReduceWindow& rw, int64_t extent, size_t d) {
  return {extent,       rw.base[d],      rw.padding[2 * d], rw.padding[2 * d + 1],
          rw.window[d], rw.dilations[d], rw.strides[d]};
}

}  // namespace

std::optional<EmptyResult> stablehlo_empty_result(std::string_view text, const FrontendInput& in) {
  Result<ReduceWindow> rw = parse_reduce_window(text, in);
  if (!rw) return std::nullopt;
  // StableHLO's result shape: num_windows on every dimension, the batch and channels included.
  EmptyResult e;
  e.input_shape = in.input_shape;
  for (size_t d = 0; d < in.input_shape.size(); ++d) {
    const stablehlo::WindowAxis<int64_t> w = window_axis(*rw, in.input_shape[d], d);
    e.output_shape.push_back(stablehlo::window_count(w));
    if (e.output_shape.back() == 0 && e.why.empty())
      e.why = fmt::format(
          "dimension {}: no window fits (is_empty_window): window_dimensions[{}]={} dilated to {} "
          "over a padded input of {}; StableHLO's result is then empty, not an error (C15)",
          d, d, rw->window[d], stablehlo::dilated_window_extent(w),
          stablehlo::padded_input_extent(w));
  }
  if (e.why.empty()) return std::nullopt;
  return e;
}

Result<Frontend> from_stablehlo(std::string_view text, const FrontendInput& in) {
  const bool avg = in.op == Op::avg;
  Result<ReduceWindow> parsed = parse_reduce_window(text, in);
  if (!parsed) return parsed.error();
  const std::vector<int64_t>& x = in.input_shape;
  const size_t r = x.size();
  const std::vector<int64_t>& window = parsed->window;
  const std::vector<int64_t>& strides = parsed->strides;
  std::vector<int64_t>& base = parsed->base;  // 1 on an axis of one element (no holes)
  const std::vector<int64_t>& dilations = parsed->dilations;
  const std::vector<int64_t>& padding = parsed->padding;
  const double init = parsed->init, lowest = parsed->lowest;
  const bool by_count = parsed->by_count;

  if (avg && !is_float(in.dtype))
    return Error{
        fmt::format("dtype {}: an integer reduce_window add sums in the element type, "
                    "which wraps {}",
                    dtype_name(in.dtype), model_cannot_state)};
  if (avg && init != 0)
    return Error{
        fmt::format("init_value={}: an average's sum starts at 0 {}", init, model_cannot_state)};
  if (!avg && init != lowest)
    return Error{fmt::format("init_value={}: a max pools from {} {}", init,
                             is_float(in.dtype) ? "-inf" : "the dtype's lowest value",
                             model_cannot_state)};

  // Which dimensions are the batch and the channels: untouched ones. What touches dimension d:
  // the first attribute that is not the identity there.
  const auto touching = [&](size_t d) -> std::string {
    for (auto [name, v, identity] : {std::tuple{"window_dimensions", window[d], int64_t{1}},
                                     std::tuple{"window_strides", strides[d], int64_t{1}},
                                     std::tuple{"base_dilations", base[d], int64_t{1}},
                                     std::tuple{"window_dilations", dilations[d], int64_t{1}},
                                     std::tuple{"padding low", padding[2 * d], int64_t{0}},
                                     std::tuple{"padding high", padding[2 * d + 1], int64_t{0}}})
      if (v != identity) return fmt::format("{}[{}]={}", name, d, v);
    return "";
  };
  const bool channels_last = !touching(1).empty();
  for (const size_t d : {size_t{0}, channels_last ? r - 1 : size_t{1}})
    if (const std::string what = touching(d); !what.empty())
      return Error{fmt::format(
          "{}: touches dimension {}, the {}; the batch (0) and the channels (1 or {}) must be "
          "untouched (window 1, stride 1, base and window dilation 1, no padding) {}",
          what, d, d == 0 ? "batch" : "channels", r - 1, model_cannot_state)};

  Problem p;
  p.op = in.op;
  p.dtype = in.dtype;
  p.batch = x[0];
  p.channels = channels_last ? x[r - 1] : x[1];
  Framing framing;
  framing.channels_last = channels_last;
  framing.input_shape = x;
  const size_t first = channels_last ? 1 : 2;
  for (size_t d = first; d < first + r - 2; ++d) {
    // The base-dilated extent, whose holes become elements of the Problem's input (an axis of
    // one element has none).
    if (x[d] == 1) base[d] = 1;
    if (base[d] != 1 && x[d] - 1 > (max_attribute - 1) / base[d])
      return Error{fmt::format(
          "base_dilations[{}]={}: the dilated input's extent ({} - 1) * {} + 1 is over 2^31 - 1, "
          "the longest axis poolspec states {}",
          d, base[d], x[d], base[d], model_cannot_state)};
    const int64_t dilated = (x[d] - 1) * base[d] + 1;
    if (base[d] != 1 && by_count)
      return Error{fmt::format(
          "base_dilations[{}]={} with divisor=count: the count of a reduce_window of ones leaves "
          "the holes out, which are elements of the Problem's input {}",
          d, base[d], model_cannot_state)};
    const stablehlo::WindowAxis<int64_t> w = window_axis(*parsed, x[d], d);
    if (stablehlo::window_count(w) == 0)
      return Error{fmt::format(
          "window_dimensions[{}]={}: no window fits the padded input of {} (is_empty_window): "
          "the result is empty, which StableHLO allows (C15: an empty result, stated beside "
          "the problem model) {}",
          d, window[d], stablehlo::padded_input_extent(w), model_cannot_state)};
    const int64_t low = padding[2 * d], high = padding[2 * d + 1];
    const int64_t crop_begin = std::max<int64_t>(0, -low), crop_end = std::max<int64_t>(0, -high);
    framing.crop_begin.push_back(crop_begin);
    framing.crop_end.push_back(crop_end);
    // A window fits the padded input, yet the crops may take every element (a crop at one end,
    // padding at the other): every window then holds padding only.
    const int64_t extent = dilated - crop_begin - crop_end;
    if (extent < 1)
      return Error{fmt::format(
          "padding[{}]={},{}: crops the whole input of {}; every window holds padding only {}", d,
          low, high, dilated, model_cannot_state)};
    framing.base_dilation.push_back(base[d]);
    p.axes.push_back(Axis{extent, window[d], strides[d], dilations[d], std::max<int64_t>(0, low),
                          std::max<int64_t>(0, high)});
  }
  if (!has_holes(framing)) framing.base_dilation.clear();
  framing.hole = init;  // 0 for an average, the max's -inf or lowest
  p.rounding = Rounding::floor;
  if (avg) {
    p.divisor = by_count ? Divisor::exclude : Divisor::include_full;
    if (by_count) p.empty = EmptyWindow::nan;  // 0 / 0
  } else {
    p.max_start = MaxStart::first;
    p.nan = NanPolicy::propagate;
    p.empty = is_float(in.dtype) ? EmptyWindow::neg_inf : EmptyWindow::lowest;
    // The body's `maximum` is IEEE 754-2019's (the specification's element-wise maximum), under
    // which -0 is below +0.
    if (is_float(in.dtype)) p.zeros = Zeros::ordered;
  }
  if (Status s = validate(p); !s) return s.error();
  return Frontend{std::move(p), std::move(framing), ""};
}

std::string stablehlo_bound(const Problem& p) {
  if (p.op != Op::avg || !is_float(p.dtype)) return "";
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  const int digits = p.dtype == DType::f64   ? 53
                     : p.dtype == DType::f32 ? 24
                     : p.dtype == DType::f16 ? 11
                                             : 8;
  return fmt::format(
      "the window's {} terms are summed in {} in an order the implementation picks, then divided "
      "once: |y - mean| <= gamma({}) sum|x| / d + u |y|, u = 2^-{}, gamma(n) = n u / (1 - n u) "
      "(while no partial sum overflows)",
      taps, dtype_name(p.dtype), taps - 1, digits);
}

}  // namespace poolspec
