#include "poolspec/engine.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace poolspec {

std::string_view layout_name(Layout layout) {
  return layout == Layout::channels_first ? "nchw" : "nhwc";
}

double load_element(DType dtype, const std::byte* at) {
  switch (dtype) {
    case DType::f64: {
      double v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case DType::f32: {
      float v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case DType::f16: {
      uint16_t b;
      std::memcpy(&b, at, sizeof b);
      return f16_value(b);
    }
    case DType::bf16: {
      uint16_t b;
      std::memcpy(&b, at, sizeof b);
      return bf16_value(b);
    }
    case DType::i32: {
      int32_t v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case DType::i8: {
      int8_t v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case DType::u8: {
      uint8_t v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
  }
  return 0;
}

void store_element(DType dtype, double v, std::byte* at) {
  switch (dtype) {
    case DType::f64: std::memcpy(at, &v, sizeof v); return;
    case DType::f32: {
      const float f = static_cast<float>(v);
      std::memcpy(at, &f, sizeof f);
      return;
    }
    case DType::f16: {
      const uint16_t b = f16_bits(v);
      std::memcpy(at, &b, sizeof b);
      return;
    }
    case DType::bf16: {
      const uint16_t b = bf16_bits(v);
      std::memcpy(at, &b, sizeof b);
      return;
    }
    case DType::i32: {
      const auto i = static_cast<int32_t>(v);
      std::memcpy(at, &i, sizeof i);
      return;
    }
    case DType::i8: {
      const auto i = static_cast<int8_t>(v);
      std::memcpy(at, &i, sizeof i);
      return;
    }
    case DType::u8: {
      const auto i = static_cast<uint8_t>(v);
      std::memcpy(at, &i, sizeof i);
      return;
    }
  }
}

namespace {

// The storage position of spec-order element `flat` of a (N, C, spatial...) shape.
struct LayoutMap {
  int64_t channels, plane;
  LayoutMap(const std::vector<int64_t>& shape)
      : channels(shape.size() > 1 ? shape[1] : 1), plane(1) {
    for (size_t i = 2; i < shape.size(); ++i) plane *= shape[i];
  }
  int64_t position(int64_t flat, Layout layout) const {
    if (layout == Layout::channels_first) return flat;
    const int64_t spatial = flat % plane, nc = flat / plane;
    const int64_t c = nc % channels, n = nc / channels;
    return (n * plane + spatial) * channels + c;
  }
};

}  // namespace

int64_t storage_position(const std::vector<int64_t>& spec_shape, int64_t flat, Layout layout) {
  return LayoutMap(spec_shape).position(flat, layout);
}

std::vector<std::byte> to_storage(const Tensor& t, Layout layout) {
  const size_t width = static_cast<size_t>(storage_bytes(t.dtype));
  std::vector<std::byte> bytes(t.values.size() * width);
  const LayoutMap map(t.shape);
  for (size_t i = 0; i < t.values.size(); ++i)
    store_element(
        t.dtype, t.values[i],
        bytes.data() + static_cast<size_t>(map.position(static_cast<int64_t>(i), layout)) * width);
  return bytes;
}

Tensor from_storage(DType dtype, const std::vector<int64_t>& spec_shape, Layout layout,
                    std::span<const std::byte> bytes) {
  const size_t width = static_cast<size_t>(storage_bytes(dtype));
  Tensor t{dtype, spec_shape, std::vector<double>(bytes.size() / width)};
  const LayoutMap map(spec_shape);
  for (size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = load_element(
        dtype,
        bytes.data() + static_cast<size_t>(map.position(static_cast<int64_t>(i), layout)) * width);
  return t;
}

ErrorBound sum_bound(DType accumulation, int64_t operations, double output_ulps,
                     std::string description) {
  const FloatFormat f = float_format(accumulation);
  ErrorBound b;
  b.exact = false;
  b.operations = operations;
  b.unit_roundoff = std::ldexp(1.0, -f.precision);
  // The smallest subnormal is 2^(min_exponent - precision + 1); a rounding there errs by half.
  b.underflow = std::ldexp(1.0, f.min_exponent - f.precision);
  b.output_ulps = output_ulps;
  b.overflow_threshold = -lowest_value(accumulation);  // the format's largest finite value
  b.accumulation = std::move(description);
  return b;
}

double ulp_of(DType dtype, double y) {
  const FloatFormat f = float_format(dtype);
  const double magnitude = std::fabs(y);
  const int e = magnitude == 0 ? f.min_exponent : std::max(std::ilogb(magnitude), f.min_exponent);
  return std::ldexp(1.0, e - f.precision + 1);
}

double allowed_error(const ErrorBound& bound, DType output, double abs_sum, int64_t divisor,
                     double y) {
  if (bound.exact) return 0;
  const double n = static_cast<double>(bound.operations);
  const double gamma = n * bound.unit_roundoff / (1 - n * bound.unit_roundoff);
  const double d = static_cast<double>(divisor);
  // A got rounded into the output may sit on the far side of a binade edge: take the larger ulp.
  const double last =
      bound.output_ulps * ulp_of(output, std::fabs(y) * (1 + 2 * gamma) + ulp_of(output, y));
  // (1 + 2^-50) covers the double arithmetic of this formula itself.
  return (gamma * abs_sum / d + n * bound.underflow + last) * (1 + std::ldexp(1.0, -50));
}

double reach_before_last_rounding(const ErrorBound& bound, DType output, double abs_sum,
                                  int64_t divisor, double y) {
  if (abs_sum == 0) return 0;
  ErrorBound before = bound;
  before.output_ulps = 0;
  return allowed_error(before, output, abs_sum, divisor, y);
}

}  // namespace poolspec
