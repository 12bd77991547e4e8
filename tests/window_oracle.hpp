// An independent, test-side enumeration of a window (not the spec's code): the in-bounds values
// of output element (n, c, o...) and their spatial coordinates, in row-major kernel order.
#pragma once

#include <vector>

#include "poolspec/problem.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::test {

struct WindowTaps {
  std::vector<double> values;
  std::vector<std::vector<int64_t>> coordinates;
  int64_t in_padded_extent = 0;
  int64_t taps = 0;
};

inline WindowTaps window_taps(const Problem& p, const Tensor& input, int64_t n, int64_t c,
                              const std::vector<int64_t>& o) {
  WindowTaps w;
  const size_t rank = p.axes.size();
  int64_t kernel_volume = 1;
  for (const Axis& a : p.axes) kernel_volume *= a.kernel;
  for (int64_t flat = 0; flat < kernel_volume; ++flat) {
    // Decompose the flat kernel offset, last axis fastest.
    std::vector<int64_t> t(rank), x(rank);
    int64_t rest = flat;
    for (size_t i = rank; i > 0; --i) {
      t[i - 1] = rest % p.axes[i - 1].kernel;
      rest /= p.axes[i - 1].kernel;
    }
    bool inside = true, padded = true;
    int64_t offset = (n * p.channels + c);
    for (size_t i = 0; i < rank; ++i) {
      const Axis& a = p.axes[i];
      x[i] = o[i] * a.stride + t[i] * a.dilation - a.pad_begin;
      inside = inside && x[i] >= 0 && x[i] < a.extent;
      padded = padded && x[i] >= -a.pad_begin && x[i] < a.extent + a.pad_end;
      offset = offset * a.extent + x[i];
    }
    ++w.taps;
    if (padded) ++w.in_padded_extent;
    if (inside) {
      w.values.push_back(input.values[static_cast<size_t>(offset)]);
      w.coordinates.push_back(x);
    }
  }
  return w;
}

// Calls f(n, c, o, flat_output_index) for every output element, row-major.
template <class F>
void for_each_output(const std::vector<int64_t>& output_shape, F f) {
  const size_t rank = output_shape.size() - 2;
  int64_t total = 1;
  for (int64_t d : output_shape) total *= d;
  for (int64_t flat = 0; flat < total; ++flat) {
    std::vector<int64_t> coordinate(output_shape.size());
    int64_t rest = flat;
    for (size_t i = output_shape.size(); i > 0; --i) {
      coordinate[i - 1] = rest % output_shape[i - 1];
      rest /= output_shape[i - 1];
    }
    f(coordinate[0], coordinate[1],
      std::vector<int64_t>(coordinate.begin() + 2,
                           coordinate.begin() + 2 + static_cast<long>(rank)),
      static_cast<size_t>(flat));
  }
}

}  // namespace poolspec::test
