// Structured decoding of fuzzer bytes (FuzzedDataProvider) into bounded problems and inputs,
// biased toward the boundary cases where frameworks disagree (docs/semantics.md section 1b):
// kernel 1, stride above the kernel, pads at or past the kernel, every rounding, dilation, every
// divisor and empty-window mode, and NaN / +-inf / -0 / subnormal / integer-extreme values.
// Shared by the fuzz targets that need a Problem; every size is bounded so one input runs in
// well under a millisecond.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "poolspec/dtype.hpp"
#include "poolspec/engine.hpp"
#include "poolspec/problem.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::fuzz {

// Bounds of a decoded problem: input and output stay below max_elements (so the exact spec, and
// every engine run twice under guards, stay cheap), at most max_rank spatial axes.
struct ProblemLimits {
  int max_rank = 3;
  int64_t max_elements = 768;
  bool raw_attributes = true;  // sometimes draw attributes outside their valid ranges
};

template <class T, size_t N>
T pick(FuzzedDataProvider& in, const std::array<T, N>& choices) {
  return choices[in.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

// One spatial axis, biased toward the windows frameworks resolve differently.
inline Axis consume_axis(FuzzedDataProvider& in, int64_t max_extent, bool raw) {
  Axis a;
  if (raw && in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    // Attributes outside their ranges too (0, negative): validate() must refuse them, and every
    // engine with it.
    a.extent = in.ConsumeIntegralInRange<int64_t>(-1, max_extent);
    a.kernel = in.ConsumeIntegralInRange<int64_t>(-1, 6);
    a.stride = in.ConsumeIntegralInRange<int64_t>(-1, 6);
    a.dilation = in.ConsumeIntegralInRange<int64_t>(-1, 3);
    a.pad_begin = in.ConsumeIntegralInRange<int64_t>(-2, 6);
    a.pad_end = in.ConsumeIntegralInRange<int64_t>(-2, 6);
    return a;
  }
  a.kernel = pick(in, std::array<int64_t, 9>{1, 1, 2, 2, 3, 3, 4, 5, 7});
  const int64_t k = a.kernel;
  a.stride = pick(in, std::array<int64_t, 7>{1, 1, 2, 3, 4, k, k + 1});
  a.dilation = pick(in, std::array<int64_t, 5>{1, 1, 1, 2, 3});
  // Pads: none, below the kernel, at it and past it (OpenVINO's exclude-pad rule, PyTorch's
  // pad <= k/2, windows that lie wholly in the padding).
  a.pad_begin = pick(in, std::array<int64_t, 6>{0, 0, 1, k - 1, k, k + 1});
  a.pad_end = pick(in, std::array<int64_t, 6>{0, 0, 1, k - 1, k, k + 1});
  // The extent: from the smallest the window fits in, upward; a few widths cross a vector.
  const int64_t k_eff = (k - 1) * a.dilation + 1;
  const int64_t fits = std::max<int64_t>(1, k_eff - a.pad_begin - a.pad_end);
  a.extent = std::min(max_extent, fits + in.ConsumeIntegralInRange<int64_t>(0, 20));
  return a;
}

inline Problem consume_problem(FuzzedDataProvider& in, const ProblemLimits& limits) {
  Problem p;
  p.op = in.ConsumeBool() ? Op::max : Op::avg;
  p.dtype =
      pick(in, std::array<DType, 10>{DType::f32, DType::f32, DType::f16, DType::i8, DType::u8,
                                     DType::f64, DType::bf16, DType::i32, DType::f32, DType::i8});
  const int rank = in.ConsumeIntegralInRange<int>(1, limits.max_rank);
  // Per-axis extents shrink with the rank so the whole input stays small.
  const int64_t max_extent = rank == 1 ? 80 : rank == 2 ? 24 : rank == 3 ? 9 : 5;
  for (int i = 0; i < rank; ++i)
    p.axes.push_back(consume_axis(in, max_extent, limits.raw_attributes));
  p.batch = in.ConsumeIntegralInRange<int64_t>(1, 2);
  // Channel counts. A byte below 200 picks from the common counts by its value modulo 10 (as a
  // pick from ten does: the committed regressions decode as they were found); the rest sweep
  // every count 1..2V+1 for the widest vectors, 16 f32 lanes and 64 8-bit ones.
  const uint8_t channel_byte = in.ConsumeIntegral<uint8_t>();
  const bool channel_sweep = channel_byte >= 200;
  p.channels = channel_sweep
                   ? in.ConsumeIntegralInRange<int64_t>(1, 2 * 64 + 1)
                   : std::array<int64_t, 10>{1, 1, 2, 3, 4, 5, 8, 16, 17, 33}[channel_byte % 10];

  p.rounding =
      pick(in, std::array<Rounding, 3>{Rounding::floor, Rounding::ceil, Rounding::ceil_torch});
  if (p.op == Op::avg) {
    p.divisor = pick(in, std::array<Divisor, 4>{Divisor::exclude, Divisor::include_clip,
                                                Divisor::include_full, Divisor::override_value});
    if (p.divisor == Divisor::override_value)
      p.divisor_override = in.ConsumeIntegralInRange<int64_t>(1, 12);
    p.int_rounding =
        pick(in, std::array<IntRounding, 6>{IntRounding::half_even, IntRounding::half_away,
                                            IntRounding::half_up, IntRounding::toward_zero,
                                            IntRounding::floor, IntRounding::tosa});
    if (!is_float(p.dtype) && in.ConsumeIntegralInRange<int>(0, 3) == 0) {  // TOSA's zero points
      p.input_zp = in.ConsumeIntegralInRange<int64_t>(std::max<int64_t>(int_min(p.dtype), -20), 20);
      p.output_zp =
          in.ConsumeIntegralInRange<int64_t>(std::max<int64_t>(int_min(p.dtype), -20), 20);
    }
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0)
      p.bias = in.ConsumeIntegralInRange<int64_t>(-300, 300);
  } else {
    p.nan = in.ConsumeBool() ? NanPolicy::ignore : NanPolicy::propagate;
    p.indices = pick(in, std::array<Indices, 3>{Indices::none, Indices::plane, Indices::tensor});
    p.index_order = in.ConsumeBool() ? IndexOrder::column_major : IndexOrder::row_major;
    if (p.indices == Indices::tensor)
      p.index_axis = in.ConsumeIntegralInRange<int64_t>(0, rank + 1);
    if (p.nan == NanPolicy::ignore && in.ConsumeBool()) p.max_start = MaxStart::lowest;
    // Only a max reads these bytes: the committed average inputs decode to their recorded problems.
    if (is_float(p.dtype))
      p.zeros =
          pick(in, std::array<Zeros, 4>{Zeros::equal, Zeros::equal, Zeros::ordered, Zeros::either});
    if (p.zeros == Zeros::either && p.indices != Indices::none && !limits.raw_attributes)
      p.zeros = Zeros::equal;  // validate() refuses it: only raw attributes keep it
    if (is_float(p.dtype) && in.ConsumeBool()) p.subnormals = Subnormals::may_flush;
  }
  p.empty = pick(
      in, std::array<EmptyWindow, 6>{EmptyWindow::error, EmptyWindow::zero, EmptyWindow::nan,
                                     EmptyWindow::lowest, EmptyWindow::neg_inf, EmptyWindow::zero});
  // Rarely, a field combination validate() must refuse (a bias on a max, an override divisor
  // on the wrong rule, a max start on an average).
  if (limits.raw_attributes && in.ConsumeIntegralInRange<int>(0, 31) == 0) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: p.bias = 1; break;
      case 1: p.divisor_override = in.ConsumeIntegralInRange<int64_t>(-1, 3); break;
      case 2: p.max_start = MaxStart::lowest; break;
      default: p.index_axis = in.ConsumeIntegralInRange<int64_t>(-1, rank + 3); break;
    }
  }

  // Keep the input below the limit: a swept channel count keeps its channels and gives up plane
  // size first (each axis down to the smallest extent its window fits in); then fewer channels,
  // then a single batch.
  const auto spatial_size = [&p] {
    int64_t n = 1;
    for (const Axis& a : p.axes) n *= std::max<int64_t>(1, a.extent);
    return n;
  };
  for (Axis& a : p.axes) {
    if (!channel_sweep || p.batch * p.channels * spatial_size() <= limits.max_elements) break;
    const int64_t window =
        (std::max<int64_t>(1, a.kernel) - 1) * std::max<int64_t>(1, a.dilation) + 1;
    a.extent = std::min(a.extent, std::max<int64_t>(1, window - a.pad_begin - a.pad_end));
  }
  const int64_t spatial = spatial_size();
  while (p.batch * p.channels * spatial > limits.max_elements && (p.channels > 1 || p.batch > 1)) {
    if (p.channels > 1)
      p.channels = std::max<int64_t>(1, p.channels / 2);
    else
      p.batch = 1;
  }
  return p;
}

// Element `position` of the dtype: a small integer (so sums tie and rounding rules show), raw
// storage bits (every value, NaN payloads included) or a special value. The small integers are
// offset by the position, so even an input whose bytes have run out (the provider then gives 0)
// is a ramp, not a constant that every divisor averages to itself.
inline double consume_value(FuzzedDataProvider& in, DType dtype, int64_t position) {
  const int kind = in.ConsumeIntegralInRange<int>(0, 7);
  if (kind <= 4) {
    const double small = double((in.ConsumeIntegralInRange<int>(0, 8) + position) % 9 - 4);
    return representable(dtype, small) ? small : 0.0;
  }
  if (kind <= 6) {
    std::array<std::byte, 8> bits{};
    for (int i = 0; i < storage_bytes(dtype); ++i)
      bits[size_t(i)] = std::byte{in.ConsumeIntegral<uint8_t>()};
    return load_element(dtype, bits.data());
  }
  if (!is_float(dtype))
    return pick(in, std::array<double, 5>{double(int_min(dtype)), double(int_max(dtype)), 0.0,
                                          double(int_min(dtype) + 1), double(int_max(dtype) - 1)});
  const FloatFormat f = float_format(dtype);
  const double min_subnormal = std::ldexp(1.0, f.min_exponent - f.precision + 1);
  const double max_finite = -lowest_value(dtype);
  return pick(in, std::array<double, 12>{std::nan(""), INFINITY, -INFINITY, -0.0, 0.0, max_finite,
                                         -max_finite, min_subnormal, -min_subnormal, 0.5, -1.5,
                                         std::ldexp(1.0, f.min_exponent)});
}

inline Tensor consume_input(FuzzedDataProvider& in, const Problem& p) {
  Tensor t{p.dtype, input_shape(p), {}};
  int64_t count = 1;
  for (int64_t d : t.shape) count *= d;
  t.values.reserve(size_t(count));
  for (int64_t i = 0; i < count; ++i) t.values.push_back(consume_value(in, p.dtype, i));
  return t;
}

}  // namespace poolspec::fuzz
