// StableHLO reduce_window's window arithmetic along one axis (the StableHLO specification,
// openxla/stablehlo, reduce_window: the constraint on the shape of its results), over a number
// domain (number_domain.hpp): proofs/src/stablehlo_proofs.cpp proves this text. Notation:
// input extent d, base (input) dilation bd, padding low / high pl / ph (either may be negative: a
// crop), window size w, window dilation wd, window stride s.
#pragma once

#include "poolspec/number_domain.hpp"

namespace poolspec::stablehlo {

template <class V>
struct WindowAxis {
  V extent, base_dilation, pad_low, pad_high, window, window_dilation, stride;
};

// "dilated_input_shape = shape(inputs[0]) == 0 ? 0 : (shape(inputs[0]) - 1) * base_dilations + 1"
template <class V>
V dilated_input_extent(const WindowAxis<V>& a) {
  const V zero = constant_like(a.extent, 0), one = constant_like(a.extent, 1);
  return select(a.extent == zero, zero, (a.extent - one) * a.base_dilation + one);
}

// "padded_input_shape = padding[:, 0] + dilated_input_shape + padding[:, 1]"
template <class V>
V padded_input_extent(const WindowAxis<V>& a) {
  return a.pad_low + dilated_input_extent(a) + a.pad_high;
}

// "dilated_window_shape = (window_dimensions - 1) * window_dilations + 1"
template <class V>
V dilated_window_extent(const WindowAxis<V>& a) {
  const V one = constant_like(a.window, 1);
  return (a.window - one) * a.window_dilation + one;
}

// "is_empty_window = padded_input_shape == 0 || dilated_window_shape > padded_input_shape;
// num_windows = is_empty_window ? 0 : floor((padded_input_shape - dilated_window_shape) /
// window_strides) + 1": no window is an empty result along the axis, not an error.
template <class V>
V window_count(const WindowAxis<V>& a) {
  const V padded = padded_input_extent(a), span = dilated_window_extent(a);
  const V zero = constant_like(padded, 0), one = constant_like(padded, 1);
  return select(padded == zero, zero,
                select(span > padded, zero, floor_div(padded - span, a.stride) + one));
}

}  // namespace poolspec::stablehlo
