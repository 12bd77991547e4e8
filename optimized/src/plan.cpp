#include "plan.hpp"

#include "poolspec/evaluate.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::optimized {

Plan::Plan(const Problem& problem, Layout l, Mutation m)
    : p(problem), layout(l), mutation(m), batch(p.batch), channels(p.channels) {
  const size_t rank = p.axes.size();
  for (size_t i = 0; i < 3; ++i) {
    AxisTable& t = axis[i];
    if (i + rank >= 3) {
      const Axis& a = p.axes[i + rank - 3];
      t.in = a.extent;
      t.kernel = a.kernel;
      t.stride = a.stride;
      t.dilation = a.dilation;
      t.pad_begin = a.pad_begin;
      const auto terms = formulas::terms_of<int64_t>(a);
      t.out = formulas::output_extent(terms, p.rounding);
      for (int64_t j = 0; j < t.out; ++j) {
        const auto r = formulas::tap_range<int64_t>(formulas::window_start(terms, j), a.kernel,
                                                    a.dilation, 0, a.extent);
        t.first.push_back(static_cast<int32_t>(r.first));
        t.past.push_back(static_cast<int32_t>(std::max(r.first, r.past_last)));
        switch (p.divisor) {
          case Divisor::exclude: t.divisor.push_back(t.past.back() - t.first.back()); break;
          case Divisor::include_clip:
            t.divisor.push_back(static_cast<int32_t>(formulas::padded_taps(terms, j)));
            break;
          case Divisor::include_full:
          case Divisor::override_value: t.divisor.push_back(static_cast<int32_t>(a.kernel)); break;
        }
      }
    } else {  // a missing leading axis: one input row, one 1-tap window
      t.first = {0};
      t.past = {1};
      t.divisor = {1};
    }
    t.interior_begin = t.out;
    t.interior_end = t.out;
    for (int64_t j = 0; j < t.out; ++j)
      if (t.count(j) == t.kernel) {
        if (t.interior_begin == t.out) t.interior_begin = j;
        t.interior_end = j + 1;
      }
    // The interior is contiguous: window starts grow with j, so the full windows are a run.
    if (t.interior_begin == t.out) t.interior_begin = t.interior_end = 0;
    if (i == 2 && mutation != Mutation::none) {  // the tests' broken variants (mutants.hpp)
      for (int64_t j = 0; j < t.out; ++j) {
        const auto k = static_cast<size_t>(j);
        if (t.count(j) == t.kernel || t.count(j) == 0) continue;  // only clipped border windows
        if (mutation == Mutation::window_edge && t.count(j) >= 2) --t.past[k];
        if (mutation == Mutation::border_divisor && p.divisor == Divisor::exclude)
          t.divisor[k] = static_cast<int32_t>(t.kernel);
      }
    }
    for (int64_t j = 0; j < t.out; ++j)
      if (t.count(j) == 0) t.empty.push_back(j);
    in_plane *= t.in;
    out_plane *= t.out;
  }
  if (p.indices == Indices::tensor && p.index_axis > 0) {
    const std::vector<int64_t> shape = input_shape(p);
    index_modulus = 1;
    for (size_t i = static_cast<size_t>(p.index_axis); i < shape.size(); ++i)
      index_modulus *= shape[i];
  }
}

int64_t Plan::divisor(int64_t od, int64_t oh, int64_t ow) const {
  if (p.divisor == Divisor::override_value) return p.divisor_override;
  return int64_t{axis[0].divisor[static_cast<size_t>(od)]} *
         axis[1].divisor[static_cast<size_t>(oh)] * axis[2].divisor[static_cast<size_t>(ow)];
}

int64_t Plan::final_index(int64_t n, int64_t c, int64_t plane_offset) const {
  if (plane_offset < 0) return -1;
  int64_t offset = plane_offset;
  if (p.index_order == IndexOrder::column_major) {
    const int64_t x = plane_offset % axis[2].in, rest = plane_offset / axis[2].in;
    const int64_t y = rest % axis[1].in, z = rest / axis[1].in;
    offset = z + axis[0].in * (y + axis[1].in * x);  // the first axis varies fastest
  }
  if (p.indices == Indices::tensor) {
    offset += (n * channels + c) * in_plane;
    if (index_modulus > 0) offset %= index_modulus;
  }
  return offset;
}

}  // namespace poolspec::optimized
