// The XS3 (lib_nn) front-end.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/frontends.hpp"

namespace poolspec {

// ---- XS3 ---------------------------------------------------------------------------------------
// Choices (xs3/README.md): the spec's meaning of every average is RSHR's rounding of the exact
// mean, round half toward +infinity (half_up), saturated to int8 -- exact when the pixel count is
// a power of two. The global op's bias enters as the seed document writes it, (b + sum X) / N
// (lib_nn does not scale it: spec/ERRATA.md X1). Windows never leave the image (no padding).
Result<Xs3Frontend> from_xs3(std::string_view text, const std::vector<int64_t>& hwc) {
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (hwc.size() != 3)
    return Error{
        fmt::format("input rank {}: XS3 operators take an (H, W, C) int8 image", hwc.size())};
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
  if (*kind == "avgpool2d_global")
    op.kind = Xs3Operator::Kind::avgpool2d_global;
  else if (*kind == "avgpool2d")
    op.kind = Xs3Operator::Kind::avgpool2d;
  else if (*kind == "maxpool2d")
    op.kind = Xs3Operator::Kind::maxpool2d;
  else
    return Error{fmt::format("op={}: must be avgpool2d_global, avgpool2d or maxpool2d", *kind)};

  const auto integer = [&](std::string_view name, int64_t& out, int64_t lo, int64_t hi) -> Status {
    Result<std::vector<int64_t>> v = attrs->ints(name);
    if (!v) return v.error();
    if (v->size() != 1 || (*v)[0] < lo || (*v)[0] > hi)
      return Error{
          fmt::format("{}={}: must be one integer in [{}, {}]", name, fmt::join(*v, ","), lo, hi)};
    out = (*v)[0];
    return Ok{};
  };
  const auto pair = [&](std::string_view name, int64_t& a, int64_t& b, int64_t lo) -> Status {
    Result<std::vector<int64_t>> v = attrs->ints(name);
    if (!v) return v.error();
    if (v->size() != 2 || (*v)[0] < lo || (*v)[1] < lo || (*v)[0] > max_attribute ||
        (*v)[1] > max_attribute)
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
      return Error{fmt::format(
          "accumulate={}: must be saturate (the assembly) or wrap (the C reference)", *a)};
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
      return Error{
          fmt::format("window={},{} start={},{}: the first window does not fit in the {}x{} image",
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
  f.framing.channels_last = true;
  f.framing.batch_axis = false;
  f.framing.input_shape = hwc;
  f.framing.crop_begin = {op.start_row, op.start_col};
  f.framing.crop_end = {op.height - op.start_row - p.axes[0].extent,
                        op.width - op.start_col - p.axes[1].extent};
  return f;
}

}  // namespace poolspec
