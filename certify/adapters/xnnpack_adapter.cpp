// XNNPACK (libxnnpack-dev, the 2022 snapshot Debian ships) as a poolspec backend: 2-D NHWC
// pooling, as TFLite's delegate runs it, so it claims the tflite rules. The problem's geometry
// and algorithm map onto XNNPACK's operators -- f32 / f16 / s8 / u8 max, f32 average (which
// always excludes padding), u8 average through qu8 (padding filled with the zero point, so it
// counts) and i8 average through qu8 with its values offset by 128 -- and a ceil extent onto a
// larger bottom / right padding; every value-level choice is XNNPACK's, which certification checks.
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "adapter_support.hpp"

namespace {

using namespace poolspec::adapters;

enum class Kind { f32_max, f16_max, s8_max, u8_max, f32_avg, qu8_avg };

bool has_padding(const poolspec_problem& p) {
  for (int i = 0; i < p.spatial_rank; ++i)
    if (p.axes[i].pad_begin != 0 || end_padding_for_extent(p, i) != 0) return true;
  return false;
}

// The operator for the problem, or why there is none.
std::string choose(const poolspec_problem& p, Kind* kind) {
  if (p.spatial_rank != 2) return "XNNPACK pools 2-D images only";
  if (p.layout != POOLSPEC_NHWC) return "layout nchw: XNNPACK's pooling is NHWC";
  for (int i = 0; i < 2; ++i)
    if (end_padding_for_extent(p, i) < 0)
      return "the extent needs a negative end padding, which XNNPACK cannot take";
  if (p.op == POOLSPEC_MAX) {
    if (p.indices != POOLSPEC_INDICES_NONE) return "indices: XNNPACK's max pooling gives none";
    switch (p.dtype) {
      case POOLSPEC_F32: *kind = Kind::f32_max; return "";
      case POOLSPEC_F16: *kind = Kind::f16_max; return "";
      case POOLSPEC_I8: *kind = Kind::s8_max; return "";
      case POOLSPEC_U8: *kind = Kind::u8_max; return "";
      default: return "dtype: XNNPACK's max pooling takes f32, f16, s8 and u8";
    }
  }
  if (p.divisor == POOLSPEC_OVERRIDE || p.bias != 0)
    return "divisor override and bias: XNNPACK has neither";
  if (p.op == POOLSPEC_AVG &&
      (p.input_zp != 0 || p.output_zp != 0 || p.int_rounding == POOLSPEC_TOSA_DIVISION))
    return "zero points and TOSA's division: XNNPACK has neither";
  if (p.axes[0].dilation != 1 || p.axes[1].dilation != 1)
    return "dilation: XNNPACK's average pooling has none";
  const bool include = p.divisor != POOLSPEC_EXCLUDE && has_padding(p);
  if (p.dtype == POOLSPEC_F32) {
    if (include) return "include padding: XNNPACK's f32 average always excludes it";
    *kind = Kind::f32_avg;
    return "";
  }
  if (p.dtype == POOLSPEC_I8 || p.dtype == POOLSPEC_U8) {
    if (p.divisor == POOLSPEC_EXCLUDE && has_padding(p))
      return "exclude padding: XNNPACK's qu8 average counts it";
    *kind = Kind::qu8_avg;
    return "";
  }
  return "dtype: XNNPACK's average pooling takes f32 and quantized 8-bit";
}

struct Operator {
  xnn_operator_t op = nullptr;
  ~Operator() {
    if (op) xnn_delete_operator(op);
  }
};

xnn_status create(const poolspec_problem& p, Kind kind, Operator* o) {
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  const poolspec_axis &h = p.axes[0], &w = p.axes[1];
  const uint32_t top = u(h.pad_begin), left = u(w.pad_begin),
                 bottom = u(end_padding_for_extent(p, 0)), right = u(end_padding_for_extent(p, 1));
  const auto c = static_cast<size_t>(p.channels);
  const float inf = std::numeric_limits<float>::infinity();
  switch (kind) {
    case Kind::f32_max:
      return xnn_create_max_pooling2d_nhwc_f32(top, right, bottom, left, u(h.kernel), u(w.kernel),
                                               u(h.stride), u(w.stride), u(h.dilation),
                                               u(w.dilation), c, c, c, -inf, inf, 0, &o->op);
    case Kind::f16_max:
      return xnn_create_max_pooling2d_nhwc_f16(top, right, bottom, left, u(h.kernel), u(w.kernel),
                                               u(h.stride), u(w.stride), u(h.dilation),
                                               u(w.dilation), c, c, c, -inf, inf, 0, &o->op);
    case Kind::s8_max:
      return xnn_create_max_pooling2d_nhwc_s8(top, right, bottom, left, u(h.kernel), u(w.kernel),
                                              u(h.stride), u(w.stride), u(h.dilation),
                                              u(w.dilation), c, c, c, -128, 127, 0, &o->op);
    case Kind::u8_max:
      return xnn_create_max_pooling2d_nhwc_u8(top, right, bottom, left, u(h.kernel), u(w.kernel),
                                              u(h.stride), u(w.stride), u(h.dilation),
                                              u(w.dilation), c, c, c, 0, 255, 0, &o->op);
    case Kind::f32_avg:
      return xnn_create_average_pooling2d_nhwc_f32(top, right, bottom, left, u(h.kernel),
                                                   u(w.kernel), u(h.stride), u(w.stride), c, c, c,
                                                   -inf, inf, 0, &o->op);
    case Kind::qu8_avg: {
      // i8 values v are the qu8 values v + 128 with zero point 128: the same real numbers.
      const auto zero = static_cast<uint8_t>(p.dtype == POOLSPEC_I8 ? 128 : 0);
      return xnn_create_average_pooling2d_nhwc_qu8(top, right, bottom, left, u(h.kernel),
                                                   u(w.kernel), u(h.stride), u(w.stride), c, c, c,
                                                   zero, 1.0f, zero, 1.0f, 0, 255, 0, &o->op);
    }
  }
  return xnn_status_invalid_parameter;
}

bool ready() {
  static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
  return ok;
}

int supports(const poolspec_backend*, const poolspec_problem* p, char* reason, size_t size) {
  Kind kind{};
  const std::string why = choose(*p, &kind);
  if (!why.empty()) {
    say(reason, size, why);
    return 0;
  }
  if (!ready()) {
    say(reason, size, "xnn_initialize failed (this CPU?)");
    return 0;
  }
  Operator o;
  if (const xnn_status s = create(*p, kind, &o); s != xnn_status_success) {
    say(reason, size,
        "XNNPACK refuses the operator (xnn_status " + std::to_string(static_cast<int>(s)) + ")");
    return 0;
  }
  return 1;
}

int run(const poolspec_backend*, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  Kind kind{};
  if (!choose(*p, &kind).empty() || !ready()) {
    say(message, size, "not supported");
    return 1;
  }
  Operator o;
  if (create(*p, kind, &o) != xnn_status_success) {
    say(message, size, "XNNPACK refused the operator");
    return 1;
  }
  const auto n = static_cast<size_t>(p->batch), h = static_cast<size_t>(p->axes[0].extent),
             w = static_cast<size_t>(p->axes[1].extent);
  size_t in_bytes =
      n * h * w * static_cast<size_t>(p->channels) * static_cast<size_t>(element_bytes(p->dtype));
  size_t out_elements =
      n * static_cast<size_t>(p->axes[0].output * p->axes[1].output * p->channels);
  // XNNPACK's kernels may read a little past their input (XNN_EXTRA_BYTES): a padded copy.
  std::vector<uint8_t> in(in_bytes + XNN_EXTRA_BYTES);
  std::memcpy(in.data(), input, in_bytes);
  const bool shifted = kind == Kind::qu8_avg && p->dtype == POOLSPEC_I8;
  if (shifted)
    for (size_t i = 0; i < in_bytes; ++i) in[i] ^= 0x80;
  // Its max pooling over large windows also reads past the end of its output (docs/findings.md,
  // XNN-8): a padded output too, whose slack must come back unchanged (a write there is refused).
  const size_t out_bytes = out_elements * static_cast<size_t>(element_bytes(p->dtype));
  constexpr uint8_t slack_byte = 0xA5;
  std::vector<uint8_t> out(out_bytes + XNN_EXTRA_BYTES, slack_byte);
  xnn_status s = xnn_status_success;
  switch (kind) {
    case Kind::f32_max:
      s = xnn_setup_max_pooling2d_nhwc_f32(o.op, n, h, w, reinterpret_cast<const float*>(in.data()),
                                           reinterpret_cast<float*>(out.data()), nullptr);
      break;
    case Kind::f16_max:
      s = xnn_setup_max_pooling2d_nhwc_f16(o.op, n, h, w, in.data(), out.data(), nullptr);
      break;
    case Kind::s8_max:
      s = xnn_setup_max_pooling2d_nhwc_s8(o.op, n, h, w, reinterpret_cast<const int8_t*>(in.data()),
                                          reinterpret_cast<int8_t*>(out.data()), nullptr);
      break;
    case Kind::u8_max:
      s = xnn_setup_max_pooling2d_nhwc_u8(o.op, n, h, w, in.data(), out.data(), nullptr);
      break;
    case Kind::f32_avg:
      s = xnn_setup_average_pooling2d_nhwc_f32(o.op, n, h, w,
                                               reinterpret_cast<const float*>(in.data()),
                                               reinterpret_cast<float*>(out.data()), nullptr);
      break;
    case Kind::qu8_avg:
      s = xnn_setup_average_pooling2d_nhwc_qu8(o.op, n, h, w, in.data(), out.data(), nullptr);
      break;
  }
  if (s == xnn_status_success) s = xnn_run_operator(o.op, nullptr);
  if (s != xnn_status_success) {
    say(message, size,
        "XNNPACK setup or run failed (xnn_status " + std::to_string(static_cast<int>(s)) + ")");
    return 1;
  }
  for (size_t i = out_bytes; i < out.size(); ++i)
    if (out[i] != slack_byte) {
      say(message, size, "XNNPACK wrote past the end of its output");
      return 1;
    }
  std::memcpy(output, out.data(), out_bytes);
  if (shifted)
    for (size_t i = 0; i < out_elements; ++i) static_cast<uint8_t*>(output)[i] ^= 0x80;
  return 0;
}

// XNNPACK computes its output extent itself, as (doz(padded input, K) / s) + 1 with doz the
// difference or zero (src/xnnpack/math.h, compute_convolution_output_dimension), and checks
// only the operator's attributes at creation.
int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                 char* reason, size_t size) {
  return integration_output_shape(
      self, *p,
      [](int64_t span, int64_t stride) { return std::max<int64_t>(span, 0) / stride + 1; },
      supports, extents, reason, size);
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  // f32 averages: f32 sums times a reciprocal (two more roundings, docs/semantics.md 1b).
  static const poolspec_backend backend{POOLSPEC_BACKEND_ABI_VERSION,
                                        "xnnpack",
                                        "Debian libxnnpack-dev (2022 snapshot)",
                                        "tflite",
                                        {POOLSPEC_F32, 2, 0.5, 0},
                                        nullptr,
                                        supports,
                                        run,
                                        nullptr,
                                        output_shape};
  return index == 0 ? &backend : nullptr;
}
