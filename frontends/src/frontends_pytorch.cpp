// The PyTorch front-end: torch.nn.functional avg_pool1d/2d/3d and max_pool1d/2d/3d.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend_support.hpp"
#include "poolspec/formulas.hpp"

namespace poolspec {

using namespace frontend;

namespace {

// An int-or-tuple argument (PyTorch's _single/_pair/_triple): one value for every axis, or one
// per axis. `none_ok`: the Python None is accepted and yields an empty list.
Status read_int_or_tuple(const Attributes& attrs, std::string_view name, size_t rank, int64_t min,
                         bool none_ok, std::vector<int64_t>& out) {
  Result<std::string> text = attrs.text(name);
  if (!text) return text.error();
  if (none_ok && (*text == "None" || *text == "()" || *text == "[]")) {
    out.clear();
    return Ok{};
  }
  Result<std::vector<int64_t>> v = attrs.ints(name);
  if (!v) return v.error();
  if (v->size() == 1) v->assign(rank, (*v)[0]);
  if (v->size() != rank)
    return Error{
        fmt::format("{}={}: give one integer or {} (one per spatial axis)", name, *text, rank)};
  if (Status s = check_axis_values(name, *v, min); !s) return s;
  out = std::move(*v);
  return Ok{};
}

}  // namespace

// Choices (docs/semantics.md 1a, 1b; aten/src/ATen/native/Pool.h and the CPU kernels):
//  - stride defaults to kernel_size (None or an empty tuple too); padding is symmetric and at most
//    half the kernel: "pad should be at most half of effective kernel size" -- the dilated kernel
//    for max_pool1d/2d, the plain kernel for avg_pool* and max_pool3d (docs/semantics.md 3 G11).
//  - ceil_mode=True rounds up and drops a last window that starts in the end padding
//    (pooling_output_shape): ceil_torch. An output extent below 1 is refused.
//  - count_include_pad=True (the default) divides by the taps inside the padded extent, never the
//    ceil overhang: include_clip. False: exclude; a window with no input element gives 0.
//    divisor_override (2d and 3d) replaces the divisor; PyTorch refuses 0, and poolspec models
//    only positive overrides.
//  - max: the running max starts at -inf and takes a value on `val > max || isnan(val)`: NaN
//    propagates (nan=propagate); ties go to the first element; a window with no input element
//    (possible with dilation) yields -inf. Indices (return_indices=True) are flat per (N, C)
//    plane. PyTorch's index of an empty window, and of a window with several NaNs (the last
//    NaN's, by that update rule), are not modelled: poolspec gives -1 and the first NaN's.
//  - types: the CPU kernels of PyTorch 1.13 take floating types (and int64 for avg, which
//    poolspec has no dtype for); PyTorch has no int8 pooling kernel there.
Result<Problem> from_pytorch(std::string_view text, const FrontendInput& in) {
  const bool avg = in.op == Op::avg;
  const size_t rank = in.input_shape.size() >= 2 ? in.input_shape.size() - 2 : 0;
  const std::string context =
      fmt::format("torch {}_pool{}d", avg ? "avg" : "max", rank >= 1 && rank <= 3 ? rank : 2);
  Result<Attributes> attrs = Attributes::parse(text);
  if (!attrs) return attrs.error();
  if (Status s = check_input_shape(in.input_shape, 1, 3, "torch pooling (batched: N, C, ...)"); !s)
    return s.error();
  if (Status s = check_dtype(in.dtype, {DType::f64, DType::f32, DType::f16, DType::bf16}, context);
      !s)
    return s.error();

  Geometry g;
  if (Status s = read_int_or_tuple(*attrs, "kernel_size", rank, 1, false, g.kernel); !s)
    return s.error();
  g.strides = g.kernel;
  if (attrs->has("stride")) {
    std::vector<int64_t> strides;
    if (Status s = read_int_or_tuple(*attrs, "stride", rank, 1, true, strides); !s)
      return s.error();
    if (!strides.empty()) g.strides = strides;
  }
  std::vector<int64_t> padding(rank, 0);
  if (attrs->has("padding"))
    if (Status s = read_int_or_tuple(*attrs, "padding", rank, 0, false, padding); !s)
      return s.error();
  g.pads_begin = padding;
  g.pads_end = padding;
  g.dilations.assign(rank, 1);
  if (!avg && attrs->has("dilation"))
    if (Status s = read_int_or_tuple(*attrs, "dilation", rank, 1, false, g.dilations); !s)
      return s.error();
  Result<bool> ceil_mode = attrs->boolean_or("ceil_mode", false);
  if (!ceil_mode) return ceil_mode.error();
  g.rounding = *ceil_mode ? Rounding::ceil_torch : Rounding::floor;

  bool include_pad = true, return_indices = false;
  int64_t divisor_override = 0;
  if (avg) {
    Result<bool> b = attrs->boolean_or("count_include_pad", true);
    if (!b) return b.error();
    include_pad = *b;
    if (attrs->has("divisor_override")) {
      Result<std::string> t = attrs->text("divisor_override");
      if (*t != "None") {
        if (rank == 1)
          return Error{fmt::format("divisor_override: not an argument of {}", context)};
        Result<std::vector<int64_t>> v = attrs->ints("divisor_override");
        if (!v) return v.error();
        if (v->size() != 1) return Error{fmt::format("divisor_override={}: one integer", *t)};
        if ((*v)[0] == 0)
          return Error{"divisor_override=0: PyTorch refuses it (\"divisor must be not zero\")"};
        if ((*v)[0] < 0 || (*v)[0] > max_attribute)
          return Error{
              fmt::format("divisor_override={}: poolspec models overrides in [1, 2^31)", (*v)[0])};
        divisor_override = (*v)[0];
      }
    }
  } else {
    Result<bool> b = attrs->boolean_or("return_indices", false);
    if (!b) return b.error();
    return_indices = *b;
  }
  if (Status s = attrs->no_unused(context); !s) return s.error();

  // "pad should be at most half of effective kernel size".
  for (size_t i = 0; i < rank; ++i) {
    const bool dilated_check = !avg && rank <= 2;
    const int64_t k = dilated_check
                          ? formulas::effective_kernel<int64_t>(g.kernel[i], g.dilations[i])
                          : g.kernel[i];
    if (padding[i] > k / 2)
      return Error{fmt::format("padding[{}]={}: {} requires padding <= {} kernel / 2 = {} / 2", i,
                               padding[i], context, dilated_check ? "effective" : "", k)};
  }
  const GeometryNames names{"kernel_size", "stride", "padding", "padding", ""};
  Result<Problem> p = resolve(g, names, in, in.input_shape);
  if (!p) return p;
  if (avg) {
    p->divisor = divisor_override > 0 ? Divisor::override_value
                 : include_pad        ? Divisor::include_clip
                                      : Divisor::exclude;
    p->divisor_override = divisor_override;
    p->empty = EmptyWindow::zero;
  } else {
    p->nan = NanPolicy::propagate;
    p->empty = EmptyWindow::neg_inf;
    if (return_indices) p->indices = Indices::plane;
  }
  if (Status s = validate(*p); !s) return s.error();
  return p;
}

}  // namespace poolspec
