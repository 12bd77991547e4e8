#include "poolspec/frontends.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/formulas.hpp"

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
  if (*t == "true" || *t == "1") return true;
  if (*t == "false" || *t == "0") return false;
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
  if (rest.empty()) return out;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
      return Error{fmt::format("{}=\"{}\": '{}' is not an integer", name, *t, item)};
    out.push_back(v);
    if (comma == std::string_view::npos) return out;
    rest.remove_prefix(comma + 1);
  }
}

Status Attributes::no_unused(std::string_view context) const {
  for (const auto& [name, used] : used_)
    if (!used)
      return Error{fmt::format("{}: unknown attribute for {}", name, context)};
  return Ok{};
}

// ---- shared pieces ----------------------------------------------------------------------------

namespace {

enum class PadMode { explicit_pads, same_upper, same_lower, valid };

Result<PadMode> pad_mode(std::string_view name, std::string_view value) {
  if (value == "explicit" || value == "notset") return PadMode::explicit_pads;
  if (value == "same_upper") return PadMode::same_upper;
  if (value == "same_lower") return PadMode::same_lower;
  if (value == "valid") return PadMode::valid;
  return Error{fmt::format("{}={}: must be explicit, same_upper, same_lower or valid", name, value)};
}

// Reads an integer list attribute that must have one value per spatial axis, each >= `min`.
Status read_axis_list(const Attributes& attrs, std::string_view name, size_t rank, int64_t min,
                      std::vector<int64_t>& out) {
  Result<std::vector<int64_t>> v = attrs.ints(name);
  if (!v) return v.error();
  if (v->size() != rank)
    return Error{fmt::format("{}=\"{}\": {} values, but the input has {} spatial axes", name,
                             fmt::join(*v, ","), v->size(), rank)};
  for (size_t i = 0; i < rank; ++i)
    if ((*v)[i] < min)
      return Error{fmt::format("{}[{}]={}: {} must be >= {}", name, i, (*v)[i], name, min)};
  out = std::move(*v);
  return Ok{};
}

// Geometry shared by both front-ends, in each framework's own attribute names.
struct Geometry {
  std::vector<int64_t> kernel, strides, pads_begin, pads_end;
  PadMode mode = PadMode::explicit_pads;
  bool ceil = false;
};

struct GeometryNames {
  std::string_view kernel, strides, pads_begin, pads_end, pad_mode;
};

// Resolves auto padding (notes/semantics.md §2.3): same_* from o = ceil(d/s),
// P = max(0, (o-1)*s + K - d), floor(P/2) at the beginning for same_upper and at the end for
// same_lower -- whatever the rounding type; valid: zero pads; explicit: the attribute pads.
Result<Problem> resolve(const Geometry& g, const GeometryNames& names, const FrontendInput& in) {
  Problem p;
  p.op = in.op;
  p.dtype = in.dtype;
  p.batch = in.input_shape[0];
  p.channels = in.input_shape[1];
  p.rounding = g.ceil ? Rounding::ceil : Rounding::floor;
  for (size_t i = 0; i + 2 < in.input_shape.size(); ++i) {
    Axis a;
    a.extent = in.input_shape[i + 2];
    a.kernel = g.kernel[i];
    a.stride = g.strides[i];
    if (a.extent < 1 || a.extent > max_attribute)
      return Error{fmt::format("input shape[{}]={}: spatial extents must be in [1, 2^31)", i + 2,
                               a.extent)};
    if (a.kernel > max_attribute || a.stride > max_attribute)
      return Error{fmt::format("{}[{}]={} / {}[{}]={}: must be below 2^31", names.kernel, i,
                               a.kernel, names.strides, i, a.stride)};
    switch (g.mode) {
      case PadMode::explicit_pads:
        a.pad_begin = g.pads_begin[i];
        a.pad_end = g.pads_end[i];
        break;
      case PadMode::same_upper:
      case PadMode::same_lower: {
        const auto pads = formulas::same_pads<int64_t>(a.extent, a.kernel, a.stride, 1,
                                                       g.mode == PadMode::same_upper);
        a.pad_begin = pads.begin;
        a.pad_end = pads.end;
        break;
      }
      case PadMode::valid: break;
    }
    p.axes.push_back(a);
  }
  return p;
}

// How a framework fills attributes that are absent.
struct Defaults {
  bool strides_one;  // ngraph: window_movement_strides defaults to 1s; OpenVINO requires strides
  bool pads_zero;    // ngraph: padding defaults to 0s; OpenVINO requires pads with explicit auto_pad
};

Result<Geometry> read_geometry(const Attributes& attrs, const GeometryNames& names,
                               const FrontendInput& in, Defaults defaults) {
  Geometry g;
  const size_t rank = in.input_shape.size() - 2;
  if (Status s = read_axis_list(attrs, names.kernel, rank, 1, g.kernel); !s) return s.error();
  if (attrs.has(names.strides) || !defaults.strides_one) {
    if (Status s = read_axis_list(attrs, names.strides, rank, 1, g.strides); !s) return s.error();
  } else {
    g.strides.assign(rank, 1);
  }
  if (attrs.has(names.pad_mode)) {
    Result<std::string> mode = attrs.text(names.pad_mode);
    Result<PadMode> m = pad_mode(names.pad_mode, *mode);
    if (!m) return m.error();
    g.mode = *m;
  }
  // Pads are checked whenever given, though auto padding then ignores them.
  for (auto [name, target] : {std::pair{names.pads_begin, &g.pads_begin},
                              std::pair{names.pads_end, &g.pads_end}}) {
    const bool required = g.mode == PadMode::explicit_pads && !defaults.pads_zero;
    if (attrs.has(name) || required) {
      if (Status s = read_axis_list(attrs, name, rank, 0, *target); !s) return s.error();
    } else {
      target->assign(rank, 0);
    }
  }
  return g;
}

Status check_input_shape(const FrontendInput& in, size_t min_rank, size_t max_rank,
                         std::string_view context) {
  const size_t r = in.input_shape.size();
  if (r < min_rank || r > max_rank) {
    if (max_rank == min_rank + 2)
      return Error{fmt::format("input rank {}: {} takes 3D, 4D or 5D input (N, C and 1 to 3 "
                               "spatial axes)", r, context)};
    return Error{fmt::format("input rank {}: {} takes (N, C, d1, ..., dn) with n >= 1", r,
                             context)};
  }
  for (size_t i = 0; i < 2; ++i)
    if (in.input_shape[i] < 1 || in.input_shape[i] > max_attribute)
      return Error{fmt::format("input shape[{}]={}: N and C must be in [1, 2^31)", i,
                               in.input_shape[i])};
  return Ok{};
}

// "Kernel after dilation is sometimes entirely in the padding area" (OpenVINO AvgPool-1 with
// exclude-pad, ngraph AvgPool without include_padding): kernel must exceed both pads.
Status check_window_beyond_pads(const Problem& p, std::string_view kernel_name,
                                std::string_view begin_name, std::string_view end_name,
                                std::string_view why) {
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    for (auto [name, pad] : {std::pair{begin_name, a.pad_begin}, std::pair{end_name, a.pad_end}})
      if (a.kernel <= pad)
        return Error{fmt::format("{}[{}]={}: {} requires {}[{}]={} > the pad, or a window could "
                                 "lie entirely in the padding",
                                 name, i, pad, why, kernel_name, i, a.kernel)};
  }
  return Ok{};
}

// MaxPool in the ngraph and OpenVINO references (notes/semantics.md 2.2): the running max starts
// at lowest() and updates on a strict '>', so NaN is never selected and a window with no input
// element yields lowest().
void use_reference_max_choices(Problem& p) {
  p.empty = EmptyWindow::lowest;
  p.nan = NanPolicy::ignore;
}

}  // namespace

// ---- ngraph v0 --------------------------------------------------------------------------------
// Choices (notes/semantics.md §1b, ngraph v0 reference row):
//  - include_padding_in_avg_computation=true counts every window coordinate: include_full. A
//    ceil window running past the padded extent makes ngraph's CoordinateTransform throw ("end
//    corner out of bounds"), so such problems are refused here; inside the padded extent
//    include_full and include_clip agree.
//  - exclude mode: validation forbids window <= padding; a ceil window can still be empty, and the
//    kernel then throws "AvgPool elements == 0": empty=error.
//  - MaxPool: the running max starts at lowest() and updates on a strict '>': NaN never selected
//    (nan=ignore), an empty window yields lowest() (empty=lowest).
//  - integers: nearbyint under FE_TONEAREST, i.e. half_even (the reference's float division and
//    its overflowing accumulation in T are implementation defects, not the definition).
//  - no DROP: ceil_mode is the plain ceil formula.
Result<Problem> from_ngraph(std::string_view text, const FrontendInput& in) {
  const std::string_view context = in.op == Op::avg ? "ngraph AvgPool v0" : "ngraph MaxPool v0";
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in, 3, 64, context); !s) return s.error();
  const GeometryNames names{"window_shape", "window_movement_strides", "padding_below",
                            "padding_above", "pad_type"};
  Result<Geometry> g = read_geometry(*attrs, names, in, Defaults{true, true});
  if (!g) return g.error();
  Result<bool> ceil_mode = attrs->boolean_or("ceil_mode", false);
  if (!ceil_mode) return ceil_mode.error();
  g->ceil = *ceil_mode;
  // MaxPool has no include_padding attribute: left unread, no_unused() refuses it.
  Result<bool> include = in.op == Op::avg ? attrs->boolean_or("include_padding_in_avg_computation", false)
                                          : Result<bool>(false);
  if (!include) return include.error();
  const bool include_padding = *include;
  if (Status s = attrs->no_unused(context); !s) return s.error();

  Result<Problem> p = resolve(*g, names, in);
  if (!p) return p;
  if (in.op == Op::avg) {
    p->divisor = include_padding ? Divisor::include_full : Divisor::exclude;
    p->empty = EmptyWindow::error;
    if (!include_padding) {
      if (Status s = check_window_beyond_pads(*p, "window_shape", "padding_below",
                                              "padding_above",
                                              "include_padding_in_avg_computation=false");
          !s)
        return s.error();
    }
  } else {
    use_reference_max_choices(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  if (in.op == Op::avg && include_padding && g->ceil) {
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

// ---- OpenVINO v1 ------------------------------------------------------------------------------
// Choices (notes/semantics.md §1b and §2.1-2.3, OpenVINO reference row):
//  - exclude-pad=false with any non-zero (resolved) pad divides by every kernel tap, the ceil
//    overhang included: include_full; with all pads 0 the reference counts in-bounds taps only:
//    exclude. exclude-pad=true: exclude.
//  - an average over no element is 0 ("Count 0 -> output 0"): empty=zero.
//  - MaxPool: lowest() start, strict '>': nan=ignore, empty=lowest, first maximum wins.
//  - integers: the reference's intent is nearbyint of the mean (half_even); its accumulation in
//    the element type and its integer division are defects (notes/semantics.md §3 G6).
//  - rounding_type floor / ceil without DROP; ceil_torch exists only from v14.
Result<Problem> from_openvino(std::string_view text, const FrontendInput& in) {
  const std::string_view context = in.op == Op::avg ? "OpenVINO AvgPool-1" : "OpenVINO MaxPool-1";
  // The attributes alone, or the whole element pasted from the IR: <data ... />.
  const auto trim = [](std::string_view& t) {
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  };
  trim(text);
  if (text.substr(0, 5) == "<data") {
    text.remove_prefix(5);
    if (text.size() >= 2 && text.substr(text.size() - 2) == "/>") text.remove_suffix(2);
    else if (!text.empty() && text.back() == '>') text.remove_suffix(1);
  }
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in, 3, 5, context); !s) return s.error();
  const GeometryNames names{"kernel", "strides", "pads_begin", "pads_end", "auto_pad"};
  Result<Geometry> g = read_geometry(*attrs, names, in, Defaults{false, false});
  if (!g) return g.error();
  if (attrs->has("rounding_type")) {
    Result<std::string> r = attrs->text("rounding_type");
    if (*r == "ceil_torch")
      return Error{fmt::format("rounding_type=ceil_torch: not in {}; it exists from v14", context)};
    if (*r != "floor" && *r != "ceil")
      return Error{fmt::format("rounding_type={}: must be floor or ceil", *r)};
    g->ceil = *r == "ceil";
  }
  bool exclude_pad = true;
  if (in.op == Op::avg) {
    Result<bool> b = attrs->boolean("exclude-pad");
    if (!b) return b.error();
    exclude_pad = *b;
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  Result<Problem> p = resolve(*g, names, in);
  if (!p) return p;
  if (in.op == Op::avg) {
    bool any_pad = false;
    for (const Axis& a : p->axes) any_pad = any_pad || a.pad_begin != 0 || a.pad_end != 0;
    p->divisor = (!exclude_pad && any_pad) ? Divisor::include_full : Divisor::exclude;
    p->empty = EmptyWindow::zero;
    if (exclude_pad) {
      if (Status s = check_window_beyond_pads(*p, "kernel", "pads_begin", "pads_end",
                                              "exclude-pad=true");
          !s)
        return s.error();
    }
  } else {
    use_reference_max_choices(*p);
  }
  if (Status s = validate(*p); !s) return s.error();
  return p;
}

}  // namespace poolspec

namespace poolspec {

// ---- XS3 ---------------------------------------------------------------------------------------
// Choices (notes/xs3.md): the spec's meaning of every average is RSHR's rounding of the exact
// mean, round half toward +infinity (half_up), saturated to int8 -- exact when the pixel count is
// a power of two. The global op's bias enters as the seed document writes it, (b + sum X) / N
// (lib_nn does not scale it: spec/ERRATA.md X1). Windows never leave the image (no padding).
Result<Xs3Frontend> from_xs3(std::string_view text, const std::vector<int64_t>& hwc) {
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (hwc.size() != 3)
    return Error{fmt::format("input rank {}: XS3 operators take an (H, W, C) int8 image", hwc.size())};
  for (size_t i = 0; i < 3; ++i)
    if (hwc[i] < 1 || hwc[i] > max_attribute)
      return Error{fmt::format("input shape[{}]={}: must be in [1, 2^31)", i, hwc[i])};
  Xs3Frontend f;
  Xs3Operator& op = f.op;
  op.height = hwc[0];
  op.width = hwc[1];
  op.channels = hwc[2];
  Result<std::string> kind = attrs->text("op");
  if (!kind) return kind.error();
  if (*kind == "avgpool2d_global") op.kind = Xs3Operator::Kind::avgpool2d_global;
  else if (*kind == "avgpool2d") op.kind = Xs3Operator::Kind::avgpool2d;
  else if (*kind == "maxpool2d") op.kind = Xs3Operator::Kind::maxpool2d;
  else return Error{fmt::format("op={}: must be avgpool2d_global, avgpool2d or maxpool2d", *kind)};

  const auto integer = [&](std::string_view name, int64_t& out, int64_t lo, int64_t hi) -> Status {
    Result<std::vector<int64_t>> v = attrs->ints(name);
    if (!v) return v.error();
    if (v->size() != 1 || (*v)[0] < lo || (*v)[0] > hi)
      return Error{fmt::format("{}={}: must be one integer in [{}, {}]", name, fmt::join(*v, ","), lo, hi)};
    out = (*v)[0];
    return Ok{};
  };
  const auto pair = [&](std::string_view name, int64_t& a, int64_t& b, int64_t lo) -> Status {
    Result<std::vector<int64_t>> v = attrs->ints(name);
    if (!v) return v.error();
    if (v->size() != 2 || (*v)[0] < lo || (*v)[1] < lo || (*v)[0] > max_attribute || (*v)[1] > max_attribute)
      return Error{fmt::format("{}={}: must be two integers >= {}", name, fmt::join(*v, ","), lo)};
    a = (*v)[0];
    b = (*v)[1];
    return Ok{};
  };
  Result<bool> symmetric = attrs->boolean_or("symmetric", false);
  if (!symmetric) return symmetric.error();
  op.symmetric = *symmetric;
  if (attrs->has("accumulate")) {
    Result<std::string> a = attrs->text("accumulate");
    if (*a != "saturate" && *a != "wrap")
      return Error{fmt::format("accumulate={}: must be saturate (the assembly) or wrap (the C reference)", *a)};
    op.wrap = *a == "wrap";
  }

  Problem& p = f.problem;
  p.dtype = DType::i8;
  p.channels = op.channels;
  p.int_rounding = IntRounding::half_up;
  p.empty = EmptyWindow::error;
  if (op.kind == Xs3Operator::Kind::avgpool2d_global) {
    if (attrs->has("bias"))
      if (Status s = integer("bias", op.bias, INT32_MIN, INT32_MAX); !s) return s.error();
    if (attrs->has("scale") || attrs->has("shift")) {
      op.has_scale_shift = true;
      if (Status s = integer("scale", op.scale, INT8_MIN, INT8_MAX); !s) return s.error();
      if (Status s = integer("shift", op.shift, 0, 31); !s) return s.error();
    }
    op.window_h = op.height;
    op.window_w = op.width;
    p.bias = op.bias;
  } else {
    if (Status s = pair("window", op.window_h, op.window_w, 1); !s) return s.error();
    if (attrs->has("start"))
      if (Status s = pair("start", op.start_row, op.start_col, 0); !s) return s.error();
    if (attrs->has("stride"))
      if (Status s = pair("stride", op.stride_v, op.stride_h, 1); !s) return s.error();
    // Default output: every window that fits in X from the start.
    const int64_t rows = op.height - op.start_row, cols = op.width - op.start_col;
    if (rows < op.window_h || cols < op.window_w)
      return Error{fmt::format("window={},{} start={},{}: the first window does not fit in the {}x{} image",
                               op.window_h, op.window_w, op.start_row, op.start_col, op.height, op.width)};
    op.out_h = (rows - op.window_h) / op.stride_v + 1;
    op.out_w = (cols - op.window_w) / op.stride_h + 1;
    if (attrs->has("output")) {
      int64_t h = 0, w = 0;
      if (Status s = pair("output", h, w, 1); !s) return s.error();
      if (h > op.out_h || w > op.out_w)
        return Error{fmt::format("output={},{}: at most {}x{} windows fit in the image", h, w,
                                 op.out_h, op.out_w)};
      op.out_h = h;
      op.out_w = w;
    }
    if (op.kind == Xs3Operator::Kind::maxpool2d) p.op = Op::max;
  }
  if (Status s = attrs->no_unused("XS3 " + std::string(*kind)); !s) return s.error();

  // The spec's problem covers the rows and columns the operator reads, with floor rounding giving
  // exactly out_h x out_w windows.
  p.axes = {Axis{(op.out_h - 1) * op.stride_v + op.window_h, op.window_h, op.stride_v, 1, 0, 0},
            Axis{(op.out_w - 1) * op.stride_h + op.window_w, op.window_w, op.stride_h, 1, 0, 0}};
  if (Status s = validate(p); !s) return s.error();
  return f;
}

Tensor xs3_spec_input(const Xs3Frontend& f, const Tensor& hwc) {
  const int64_t rows = f.problem.axes[0].extent, cols = f.problem.axes[1].extent;
  const int64_t c = f.op.channels;
  Tensor t{hwc.dtype, {1, c, rows, cols}, std::vector<double>(static_cast<size_t>(c * rows * cols))};
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t col = 0; col < cols; ++col)
        t.values[static_cast<size_t>((ch * rows + r) * cols + col)] =
            hwc.values[static_cast<size_t>(((f.op.start_row + r) * f.op.width + f.op.start_col + col) * c + ch)];
  return t;
}

Tensor nchw_to_hwc(const Tensor& nchw) {
  const int64_t c = nchw.shape[1], h = nchw.shape[2], w = nchw.shape[3];
  Tensor t{nchw.dtype, {h, w, c}, std::vector<double>(nchw.values.size())};
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t r = 0; r < h; ++r)
      for (int64_t col = 0; col < w; ++col)
        t.values[static_cast<size_t>((r * w + col) * c + ch)] =
            nchw.values[static_cast<size_t>((ch * h + r) * w + col)];
  return t;
}

}  // namespace poolspec
