#include "poolspec/xs3/engine.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "poolspec/backend.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/xs3/operator.hpp"

namespace poolspec::xs3 {

namespace {

bool whole_image(const Problem& p) {
  return p.axes[0].kernel == p.axes[0].extent && p.axes[1].kernel == p.axes[1].extent;
}

// The operator that computes p, or why none does.
Result<Xs3Operator> operator_for(const Problem& p, Layout layout) {
  if (p.dtype != DType::i8)
    return Error{fmt::format("dtype {}: lib_nn's pooling is int8 only", dtype_name(p.dtype))};
  if (p.axes.size() != 2)
    return Error{fmt::format("{} spatial axes: lib_nn pools (H, W) images", p.axes.size())};
  if (layout != Layout::channels_last)
    return Error{"layout nchw: lib_nn images are (H, W, C), channels last"};
  if (p.batch != 1) return Error{fmt::format("batch {}: lib_nn takes one image", p.batch)};
  for (const Axis& a : p.axes) {
    if (a.pad_begin != 0 || a.pad_end != 0)
      return Error{"padding: lib_nn's pooling reads no padding"};
    if (a.dilation != 1) return Error{"dilation: lib_nn's pooling ignores dilation"};
  }
  Xs3Operator op;
  op.height = p.axes[0].extent;
  op.width = p.axes[1].extent;
  op.channels = p.channels;
  const ShapeInfo shape = validated_shape(p).value();
  if (p.input_zp != 0 || p.output_zp != 0) return Error{"zero points: lib_nn's pooling has none"};
  if (p.op == Op::avg) {
    if (p.int_rounding != IntRounding::half_up)
      return Error{fmt::format("int_rounding {}: lib_nn rounds averages half up",
                               int_rounding_name(p.int_rounding))};
    if (p.divisor == Divisor::override_value)
      return Error{"divisor override: lib_nn divides by the window"};
    if (whole_image(p)) {
      if (p.bias < INT32_MIN || p.bias > INT32_MAX)
        return Error{fmt::format("bias {}: lib_nn's bias is int32", p.bias)};
      op.kind = Xs3Operator::Kind::avgpool2d_global;
      op.bias = p.bias;
      return op;
    }
    if (p.bias != 0) return Error{"bias: only avgpool2d_global takes a bias"};
    op.kind = Xs3Operator::Kind::avgpool2d;
  } else {
    if (p.indices != Indices::none) return Error{"indices: lib_nn's maxpool2d gives none"};
    op.kind = Xs3Operator::Kind::maxpool2d;
  }
  op.window_h = p.axes[0].kernel;
  op.window_w = p.axes[1].kernel;
  op.stride_v = p.axes[0].stride;
  op.stride_h = p.axes[1].stride;
  op.out_h = shape.output_shape[2];
  op.out_w = shape.output_shape[3];
  return op;
}

Tensor image_of(const Problem& p, const std::byte* input) {
  Tensor hwc{DType::i8, {p.axes[0].extent, p.axes[1].extent, p.channels}, {}};
  const size_t n = static_cast<size_t>(p.axes[0].extent * p.axes[1].extent * p.channels);
  hwc.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    int8_t v;
    std::memcpy(&v, input + i, 1);
    hwc.values[i] = v;
  }
  return hwc;
}

}  // namespace

Status Xs3Engine::supports(const Problem& p, Layout layout) const {
  if (Status s = validate(p); !s) return s.error();
  Result<Xs3Operator> op = operator_for(p, layout);
  if (!op) return op.error();
  // lib_nn's own init checks (channel multiples, window limits) decide the rest: run on zeros.
  Result<Tensor> y = run_operator(
      *op, Tensor{DType::i8,
                  {op->height, op->width, op->channels},
                  std::vector<double>(static_cast<size_t>(op->height * op->width * op->channels))});
  if (!y) return y.error();
  return Ok{};
}

ErrorBound Xs3Engine::error_bound(const Problem& p, Layout) const {
  ErrorBound b;
  if (p.op == Op::avg) {
    const auto pixels = static_cast<uint64_t>(p.axes[0].kernel * p.axes[1].kernel);
    b.integer_units = std::has_single_bit(pixels) ? 0 : 1;  // xs3/README.md: exact for N = 2^k
  }
  return b;
}

Status Xs3Engine::run(const Problem& p, Layout layout, const RunArgs& args) const {
  Result<Xs3Operator> op = operator_for(p, layout);
  if (!op) return op.error();
  Result<Tensor> y = run_operator(*op, image_of(p, args.input));
  if (!y) return y.error();
  for (size_t i = 0; i < y->values.size(); ++i) {
    const auto v = static_cast<int8_t>(y->values[i]);
    std::memcpy(args.output + i, &v, 1);
  }
  return Ok{};
}

const Xs3Engine& engine() {
  static const Xs3Engine instance;
  return instance;
}

const poolspec_backend* backend() {
  static const auto b = make_engine_backend(engine(), "lib_nn model (xs3/README.md)", "xs3");
  return &b->abi;
}

}  // namespace poolspec::xs3
