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

// output_shape (backend.h, version 2) of a library without a ceil mode, as a framework on top of
// it computes the extents: floor by the library's own formula, `library_floor(span, stride)` with
// span = d + pb + pe - K (what the library does when a caller leaves dst to it); ceil and
// ceil_torch as the framework does, ceil(span / s) + 1, ceil_torch then dropping a last window
// that starts in the end padding (docs/semantics.md 1a). The problem's outputs are then those
// extents, and the library, given them as a run would give them (the adapter's `supports`),
// accepts or refuses.
template <typename LibraryFloor>
int integration_output_shape(const poolspec_backend* self, const poolspec_problem& question,
                             LibraryFloor library_floor,
                             int (*supports)(const poolspec_backend*, const poolspec_problem*,
                                             char*, size_t),
                             int64_t* extents, char* reason, size_t size) {
  poolspec_problem p = question;
  for (int i = 0; i < p.spatial_rank; ++i) {
    poolspec_axis& a = p.axes[i];
    if (a.stride < 1) {  // no extent to compute: the library is asked with one output
      a.output = 1;
      continue;
    }
    const int64_t span = a.extent + a.pad_begin + a.pad_end - window_extent(a);
    if (p.rounding == POOLSPEC_FLOOR) {
      a.output = library_floor(span, a.stride);
      continue;
    }
    const int64_t up = span >= 0 ? (span + a.stride - 1) / a.stride : -(-span / a.stride);
    a.output = up + 1;
    if (p.rounding == POOLSPEC_CEIL_TORCH && a.output > 1 &&
        (a.output - 1) * a.stride >= a.extent + a.pad_begin)
      --a.output;
  }
  if (supports(self, &p, reason, size) != 1) return 0;
  for (int i = 0; i < p.spatial_rank; ++i) extents[i] = p.axes[i].output;
  return 1;
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
