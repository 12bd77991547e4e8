// The ONNX front-end: AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool, by opset.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"

namespace poolspec {

using namespace frontend;

// Choices (docs/semantics.md 1a, 1b, 3 and 5; the ONNX reference implementation,
// onnx/reference/ops/op_pool_common.py, is the executable rule where the text is silent):
//  - ceil_mode (from opset 10): opset 22 drops a last window that starts in the end padding
//    (ceil_torch, the DROP sentence added to the opset-22 text and shape inference); before opset
//    22 the text and shape inference use the plain ceil formula (ceil), although the reference
//    implementation drops at every opset (spec/ERRATA.md O1).
//  - auto_pad SAME_UPPER / SAME_LOWER: o = ceil(d/s) whatever ceil_mode (shape inference), the
//    extra pad at the end / the beginning; pads may not be given with it. VALID: no padding.
//  - count_include_pad=1 (from opset 7) divides by the taps inside the padded extent, not the ceil
//    overhang: include_clip (the reference; onnx/onnx#5276 asked, microsoft/onnxruntime PR #16752
//    aligned ORT). count_include_pad=0: exclude.
//  - an average with no input element is NaN (the reference's mean of nothing; ORT's 0/0):
//    empty=nan. The text is silent (onnx/onnx#1922).
//  - MaxPool: NaN is ignored (the reference's np.nanmax-like selection, docs/semantics.md 3 G4);
//    ties go to the first element; an empty window yields 0 with index -1 (the reference's 2-D
//    and 3-D paths; its 1-D path gives NaN, spec/ERRATA.md O2).
//  - MaxPool indices (from opset 8): flat over N x C x spatial, the spatial part row-major, or
//    column-major with storage_order=1 (onnx/onnx#1370).
//  - GlobalAveragePool / GlobalMaxPool: one window over every spatial element; the reference
//    takes np.mean / np.max, so NaN propagates.
//  - types: AveragePool and the Global ops take float16, float, double, and bfloat16 from opset
//    22; MaxPool also int8 and uint8 from opset 12.
Result<Problem> from_onnx(std::string_view text, const FrontendInput& in) {
  const int opset = in.version == 0 ? 22 : in.version;
  const bool avg = in.op == Op::avg;
  const std::string_view op =
      in.global ? (avg ? "GlobalAveragePool" : "GlobalMaxPool") : (avg ? "AveragePool" : "MaxPool");
  if (opset < 1 || opset > 22)
    return Error{
        fmt::format("opset {}: poolspec knows ONNX opsets 1 to 22 (the pooling ops "
                    "last changed at 22)",
                    opset)};
  const int version = onnx_op_version(in.op, in.global, opset);
  const std::string context = fmt::format("ONNX {}-{}", op, version);
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 62, context); !s) return s.error();
  const size_t rank = in.input_shape.size() - 2;
  std::vector<DType> allowed{DType::f16, DType::f32, DType::f64};
  if (opset >= 22) allowed.push_back(DType::bf16);
  if (!avg && !in.global && opset >= 12) allowed.insert(allowed.end(), {DType::i8, DType::u8});
  if (Status s = check_dtype(in.dtype, allowed, context); !s) return s.error();

  if (in.global) {
    if (Status s = attrs->no_unused(context); !s) return s.error();
    Problem p;
    p.op = in.op;
    p.dtype = in.dtype;
    p.batch = in.input_shape[0];
    p.channels = in.input_shape[1];
    for (size_t i = 0; i < rank; ++i) {
      const int64_t d = in.input_shape[i + 2];
      p.axes.push_back(Axis{d, d, 1, 1, 0, 0});
    }
    p.empty = EmptyWindow::error;  // the one window holds every element
    if (Status s = validate(p); !s) return s.error();
    return p;
  }

  const auto later = [&](std::string_view attribute, int from) {
    return Error{fmt::format("{}: not an attribute of {}; it exists from opset {} (--opset {})",
                             attribute, context, from, from)};
  };
  Geometry g;
  if (Status s = read_axis_list(*attrs, "kernel_shape", rank, 1, g.kernel); !s) return s.error();
  g.strides.assign(rank, 1);
  if (attrs->has("strides"))
    if (Status s = read_axis_list(*attrs, "strides", rank, 1, g.strides); !s) return s.error();
  g.dilations.assign(rank, 1);
  if (attrs->has("dilations")) {
    if (avg && opset < 19) return later("dilations", 19);
    if (!avg && opset < 10) return later("dilations", 10);
    if (Status s = read_axis_list(*attrs, "dilations", rank, 1, g.dilations); !s) return s.error();
  }
  if (attrs->has("auto_pad")) {
    Result<std::string> mode = attrs->text("auto_pad");
    if (*mode != "NOTSET" && *mode != "SAME_UPPER" && *mode != "SAME_LOWER" && *mode != "VALID")
      return Error{
          fmt::format("auto_pad={}: must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", *mode)};
    g.mode = *pad_mode("auto_pad", *mode);
  }
  g.pads_begin.assign(rank, 0);
  g.pads_end.assign(rank, 0);
  if (attrs->has("pads")) {
    if (g.mode != PadMode::explicit_pads)
      return Error{"pads: explicit pads cannot be used together with auto_pad other than NOTSET"};
    Result<std::vector<int64_t>> listed = attrs->ints("pads");
    if (!listed) return listed.error();
    if (listed->size() != 2 * rank)
      return Error{
          fmt::format("pads={}: {} values; ONNX pads are [x1_begin, x2_begin, ..., "
                      "x1_end, x2_end, ...], {} for {} spatial axes",
                      fmt::join(*listed, ","), listed->size(), 2 * rank, rank)};
    std::vector<int64_t> pads;
    if (Status s = read_axis_list(*attrs, "pads", 2 * rank, 0, pads); !s) return s.error();
    g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<long>(rank));
    g.pads_end.assign(pads.begin() + static_cast<long>(rank), pads.end());
  }
  Result<bool> ceil_mode = Result<bool>(false);
  if (attrs->has("ceil_mode")) {
    if (opset < 10) return later("ceil_mode", 10);
    ceil_mode = attrs->boolean("ceil_mode");
    if (!ceil_mode) return ceil_mode.error();
  }
  const bool same = g.mode == PadMode::same_upper || g.mode == PadMode::same_lower;
  g.rounding = (*ceil_mode && !same) ? (opset >= 22 ? Rounding::ceil_torch : Rounding::ceil)
                                     : Rounding::floor;
  bool include_pad = false;
  if (attrs->has("count_include_pad")) {
    if (!avg) return Error{fmt::format("count_include_pad: not an attribute of {}", context)};
    if (opset < 7) return later("count_include_pad", 7);
    Result<bool> b = attrs->boolean("count_include_pad");
    if (!b) return b.error();
    include_pad = *b;
  }
  bool column_major = false;
  if (attrs->has("storage_order")) {
    if (avg) return Error{fmt::format("storage_order: not an attribute of {}", context)};
    if (opset < 8) return later("storage_order", 8);
    Result<bool> b = attrs->boolean("storage_order");
    if (!b) return b.error();
    column_major = *b;
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  const GeometryNames names{"kernel_shape", "strides", "pads(begin)", "pads(end)", "auto_pad"};
  Result<Problem> p = resolve(g, names, in, in.input_shape);
  if (!p) return p;
  if (avg) {
    p->divisor = include_pad ? Divisor::include_clip : Divisor::exclude;
    p->empty = EmptyWindow::nan;
  } else {
    p->nan = NanPolicy::ignore;
    p->empty = EmptyWindow::zero;
    if (opset >= 8) {
      p->indices = Indices::tensor;
      p->index_order = column_major ? IndexOrder::column_major : IndexOrder::row_major;
    }
  }
  if (Status s = validate(*p); !s) return s.error();
  return p;
}

}  // namespace poolspec
