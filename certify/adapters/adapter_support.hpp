// What the adapters share: written against backend.h alone, as a vendor's backend would be.
#pragma once

#include <cstdio>
#include <cstring>
#include <string>

#include "poolspec/backend.h"

namespace poolspec::adapters {

// A refusal or an error message into the caller's buffer (backend.h: NUL-terminated).
inline void say(char* out, size_t size, const std::string& text) {
  if (!out || size == 0) return;
  std::snprintf(out, size, "%s", text.c_str());
}

// The dilated window extent of an axis.
inline int64_t window_extent(const poolspec_axis& a) { return (a.kernel - 1) * a.dilation + 1; }

// A library without a ceil mode computes the extent as floor((d + pb + pe - K) / s) + 1; a
// framework on top of it gets a ceil (or ceil_torch) extent by enlarging the end padding until
// the floor formula reaches it (docs/semantics.md 1a, oneDNN: "caller emulates ceil by
// enlarging padding_r"). Under floor the problem's own end padding already gives it.
inline int64_t end_padding_for_extent(const poolspec_problem& p, int axis) {
  const poolspec_axis& a = p.axes[axis];
  if (p.rounding == POOLSPEC_FLOOR) return a.pad_end;
  return (a.output - 1) * a.stride + window_extent(a) - a.extent - a.pad_begin;
}

inline int element_bytes(int32_t dtype) {
  switch (dtype) {
    case POOLSPEC_F64: return 8;
    case POOLSPEC_F32:
    case POOLSPEC_I32: return 4;
    case POOLSPEC_F16:
    case POOLSPEC_BF16: return 2;
    default: return 1;
  }
}

}  // namespace poolspec::adapters
