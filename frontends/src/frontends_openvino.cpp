// ngraph v0 and OpenVINO (AvgPool-1/14/16, MaxPool-1/8/14) front-ends.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"
#include "poolspec/formulas.hpp"

namespace poolspec {

using namespace frontend;

// ---- ngraph v0 --------------------------------------------------------------------------------
// Choices (docs/semantics.md 1b, ngraph v0 reference row):
//  - include_padding_in_avg_computation=true counts every window coordinate: include_full. A
//    ceil window running past the padded extent makes ngraph's CoordinateTransform throw ("end
//    corner out of bounds"), so such problems are refused here; inside the padded extent
//    include_full and include_clip agree.
//  - exclude mode: validation forbids window <= padding; a ceil window can still be empty, and the
//    kernel then throws "AvgPool elements == 0": empty=error.
//  - MaxPool: the running max starts at lowest() and updates on a strict '>': start=lowest,
//    nan=ignore, an empty window yields lowest().
//  - integers: nearbyint under FE_TONEAREST, i.e. half_even (the reference's float division and
//    its overflowing accumulation in T are implementation defects, not the definition).
//  - no DROP: ceil_mode is the plain ceil formula.
Result<Problem> from_ngraph(std::string_view text, const FrontendInput& in) {
  const std::string_view context = in.op == Op::avg ? "ngraph AvgPool v0" : "ngraph MaxPool v0";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 62, context); !s) return s.error();
  const size_t rank = in.input_shape.size() - 2;
  const GeometryNames names{"window_shape", "window_movement_strides", "padding_below",
                            "padding_above", "pad_type"};
  Result<Geometry> g = read_geometry(*attrs, names, rank, Defaults{true, true});
  if (!g) return g.error();
  Result<bool> ceil_mode = attrs->boolean_or("ceil_mode", false);
  if (!ceil_mode) return ceil_mode.error();
  g->rounding = *ceil_mode ? Rounding::ceil : Rounding::floor;
  // MaxPool has no include_padding attribute: left unread, no_unused() refuses it.
  Result<bool> include = in.op == Op::avg
                             ? attrs->boolean_or("include_padding_in_avg_computation", false)
                             : Result<bool>(false);
  if (!include) return include.error();
  const bool include_padding = *include;
  if (Status s = attrs->no_unused(context); !s) return s.error();

  Result<Problem> p = resolve(*g, names, in, in.input_shape);
  if (!p) return p;
  if (in.op == Op::avg) {
    p->divisor = include_padding ? Divisor::include_full : Divisor::exclude;
    p->empty = EmptyWindow::error;
    if (!include_padding) {
      if (Status s = check_window_beyond_pads(*p, "window_shape", "padding_below", "padding_above",
                                              "include_padding_in_avg_computation=false");
          !s)
        return s.error();
    }
  } else {
    use_lowest_start_max(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  if (in.op == Op::avg && include_padding && *ceil_mode) {
    for (size_t i = 0; i < p->axes.size(); ++i) {
      const auto a = formulas::terms_of<int64_t>(p->axes[i]);
      const int64_t last = formulas::output_extent(a, p->rounding) - 1;
      const int64_t end = formulas::window_start(a, last) + a.kernel;  // one past the last tap
      if (end > a.extent + a.pad_end)
        return Error{fmt::format(
            "ceil_mode=true: the last window of spatial axis {} ends at {}, past the padded "
            "extent {}; with include_padding_in_avg_computation=true ngraph's reference throws "
            "('end corner out of bounds'), so ngraph defines no value here",
            i, end, a.extent + a.pad_end)};
    }
  }
  return p;
}

// ---- OpenVINO ---------------------------------------------------------------------------------
// The op version an opset holds: openvino_op_version (frontend_support.hpp).
// Choices (docs/semantics.md 1b and 2.1-2.3, OpenVINO reference row):
//  - exclude-pad=false with any non-zero (resolved) pad divides by every kernel tap, the ceil
//    overhang included: include_full; with all pads 0 the reference counts in-bounds taps only:
//    exclude. exclude-pad=true: exclude.
//  - an average over no element is 0 ("Count 0 -> output 0"): empty=zero.
//  - MaxPool: the running max starts at lowest() with index 0 of the plane and moves on a strict
//    '>' (2.2): start=lowest, nan=ignore, an empty window yields lowest() and the plane's first
//    index. MaxPool-8/14 indices are flat over the whole tensor, taken modulo prod(dims[axis:]).
//  - integers: the reference's intent is nearbyint of the mean (half_even); its accumulation in
//    the element type and its integer division are defects (docs/semantics.md 3 G6).
//  - rounding_type floor / ceil without DROP; ceil_torch (with DROP) from v14.
//  - auto_pad same_*: pads from ceil(d/s) whatever the rounding type (2.3), so with kernel <
//    stride a ceil rounding can add a window (3 G10).
Result<Problem> from_openvino(std::string_view text, const FrontendInput& in) {
  const int opset = in.version == 0 ? 1 : in.version;
  if (opset < 1 || opset > 16)
    return Error{fmt::format(
        "opset {}: poolspec knows OpenVINO opsets 1 to 16 (AvgPool-16 is the newest pooling op)",
        opset)};
  const bool avg = in.op == Op::avg;
  const int version = openvino_op_version(in.op, opset);
  const std::string context = fmt::format("OpenVINO {}-{}", avg ? "AvgPool" : "MaxPool", version);
  // The attributes alone, or the whole element pasted from the IR: <data ... />.
  text = trim(text);
  if (text.substr(0, 5) == "<data") {
    text.remove_prefix(5);
    if (text.size() >= 2 && text.substr(text.size() - 2) == "/>")
      text.remove_suffix(2);
    else if (!text.empty() && text.back() == '>')
      text.remove_suffix(1);
  }
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 3, context); !s) return s.error();
  const size_t rank = in.input_shape.size() - 2;
  const GeometryNames names{"kernel", "strides", "pads_begin", "pads_end", "auto_pad"};
  Result<Geometry> g = read_geometry(*attrs, names, rank, Defaults{false, false});
  if (!g) return g.error();
  const bool has_dilations = avg ? version >= 16 : version >= 8;
  const auto later = [&](std::string_view attribute, int from) {
    return Error{fmt::format("{}: not an attribute of {}; it exists from opset {} (--opset {})",
                             attribute, context, from, from)};
  };
  if (attrs->has("dilations")) {
    if (!has_dilations) return later("dilations", avg ? 16 : 8);
    if (Status s = read_axis_list(*attrs, "dilations", rank, 1, g->dilations); !s) return s.error();
  }
  if (attrs->has("rounding_type")) {
    Result<std::string> r = attrs->text("rounding_type");
    if (*r == "ceil_torch" && version < 14)
      return Error{fmt::format(
          "rounding_type=ceil_torch: not in {}; it exists from opset 14 (--opset 14)", context)};
    if (*r == "floor")
      g->rounding = Rounding::floor;
    else if (*r == "ceil")
      g->rounding = Rounding::ceil;
    else if (*r == "ceil_torch")
      g->rounding = Rounding::ceil_torch;
    else
      return Error{fmt::format("rounding_type={}: must be floor, ceil{}", *r,
                               version >= 14 ? " or ceil_torch" : "")};
  }
  bool exclude_pad = true;
  if (avg) {
    Result<bool> b = attrs->boolean("exclude-pad");
    if (!b) return b.error();
    exclude_pad = *b;
  }
  int64_t index_axis = 0;
  bool i32_indices = false;
  if (!avg) {
    for (std::string_view a : {"index_element_type", "axis"})
      if (attrs->has(a) && version < 8) return later(a, 8);
    if (attrs->has("index_element_type")) {
      Result<std::string> t = attrs->text("index_element_type");
      if (*t != "i32" && *t != "i64")
        return Error{fmt::format("index_element_type={}: must be i32 or i64", *t)};
      i32_indices = *t == "i32";
    }
    if (attrs->has("axis")) {
      Result<std::vector<int64_t>> axis = attrs->ints("axis");
      if (!axis) return axis.error();
      const int64_t r = static_cast<int64_t>(in.input_shape.size());
      if (axis->size() != 1 || (*axis)[0] < -r || (*axis)[0] >= r)
        return Error{
            fmt::format("axis={}: must be one integer in [{}, {})", fmt::join(*axis, ","), -r, r)};
      index_axis = (*axis)[0] < 0 ? (*axis)[0] + r : (*axis)[0];
    }
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  Result<Problem> p = resolve(*g, names, in, in.input_shape);
  if (!p) return p;
  if (avg) {
    bool any_pad = false;
    for (const Axis& a : p->axes) any_pad = any_pad || a.pad_begin != 0 || a.pad_end != 0;
    p->divisor = (!exclude_pad && any_pad) ? Divisor::include_full : Divisor::exclude;
    p->empty = EmptyWindow::zero;
    if (exclude_pad) {
      if (Status s =
              check_window_beyond_pads(*p, "kernel", "pads_begin", "pads_end", "exclude-pad=true");
          !s)
        return s.error();
    }
  } else {
    use_lowest_start_max(*p);
    if (version >= 8) {  // the second output, indices
      p->indices = Indices::tensor;
      p->index_axis = index_axis;
      int64_t range = 1;  // indices lie in [0, prod(dims[axis:]))
      for (size_t i = static_cast<size_t>(index_axis); i < in.input_shape.size(); ++i)
        range = range > max_elements / in.input_shape[i] ? max_elements : range * in.input_shape[i];
      if (i32_indices && range - 1 > INT32_MAX)
        return Error{fmt::format(
            "index_element_type=i32: indices up to {} do not fit in i32; use i64", range - 1)};
    }
  }
  if (Status s = validate(*p); !s) return s.error();
  return p;
}

}  // namespace poolspec
