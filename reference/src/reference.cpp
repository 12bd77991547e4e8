#include "poolspec/reference/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "element_probe.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/formulas.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/tosa_division.hpp"

namespace poolspec::reference {

namespace {

__extension__ typedef __int128 Int128;  // an exact integer window sum: |b| < 2^62 plus i32 values

// Storage type and value conversions of each dtype (engine.hpp: "Storage of one element").
template <DType D>
struct Storage;
template <>
struct Storage<DType::f64> {
  using T = double;
  static double value(T v) { return v; }
  static T store(double v) { return v; }
};
template <>
struct Storage<DType::f32> {
  using T = float;
  static double value(T v) { return v; }
  static T store(double v) { return static_cast<float>(v); }
};
template <>
struct Storage<DType::f16> {
  using T = uint16_t;
  static double value(T v) { return f16_value(v); }
  static T store(double v) { return f16_bits(v); }
};
template <>
struct Storage<DType::bf16> {
  using T = uint16_t;
  static double value(T v) { return bf16_value(v); }
  static T store(double v) { return bf16_bits(v); }
};
template <class I>
struct IntegerStorage {
  using T = I;
  static double value(T v) { return v; }
  static T store(double v) { return static_cast<T>(v); }
};
template <>
struct Storage<DType::i32> : IntegerStorage<int32_t> {};
template <>
struct Storage<DType::i8> : IntegerStorage<int8_t> {};
template <>
struct Storage<DType::u8> : IntegerStorage<uint8_t> {};

// Element i of a buffer, by memcpy: no alignment is asked of the caller's buffers.
template <class T>
T read(const std::byte* base, int64_t i) {
  T v;
  std::memcpy(&v, base + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <class T>
void write(std::byte* base, int64_t i, T v) {
  std::memcpy(base + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Everything about the problem that does not depend on the element: per axis and output index j,
// the window's taps inside the input, [first, past) ("taps t with 0 <= j*s - pb + t*dl < d"),
// and inside the padded extent (the include_clip divisor).
struct Plan {
  explicit Plan(const Problem& problem, Layout l, const ShapeInfo& shape) : p(problem), layout(l) {
    const size_t rank = p.axes.size();
    out_extent.assign(shape.output_shape.begin() + 2, shape.output_shape.end());
    first.resize(rank);
    past.resize(rank);
    padded.resize(rank);
    in_stride.assign(rank, 1);
    column_stride.assign(rank, 1);
    for (size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * p.axes[i].extent;
    for (size_t i = 1; i < rank; ++i)
      column_stride[i] = column_stride[i - 1] * p.axes[i - 1].extent;
    for (size_t i = 0; i < rank; ++i) {
      const auto a = formulas::terms_of<int64_t>(p.axes[i]);
      for (int64_t j = 0; j < out_extent[i]; ++j) {
        const auto r = formulas::tap_range<int64_t>(formulas::window_start(a, j), a.kernel,
                                                    a.dilation, 0, a.extent);
        first[i].push_back(r.first);
        past[i].push_back(std::max(r.first, r.past_last));
        padded[i].push_back(formulas::padded_taps(a, j));
      }
    }
    in_plane = shape.input_elements / (p.batch * p.channels);
    out_plane = shape.output_elements / (p.batch * p.channels);
    for (size_t i = static_cast<size_t>(p.index_axis); i < shape.input_shape.size(); ++i)
      index_modulus *= shape.input_shape[i];
  }

  // Storage offsets of plane (n, c)'s first element and the step between spatial neighbours.
  int64_t plane_base(int64_t n, int64_t c, int64_t plane) const {
    return layout == Layout::channels_first ? (n * p.channels + c) * plane
                                            : n * plane * p.channels + c;
  }
  int64_t spatial_step() const { return layout == Layout::channels_first ? 1 : p.channels; }

  const Problem& p;
  Layout layout;
  std::vector<int64_t> out_extent;
  std::vector<std::vector<int64_t>> first, past, padded;
  std::vector<int64_t> in_stride, column_stride;  // row-major / column-major spatial strides
  int64_t in_plane = 1, out_plane = 1, index_modulus = 1;
};

// An integer quotient n / d (d > 0) rounded by the problem's rule.
template <class Int>
Int divide_in(Int n, int64_t d, IntRounding rule) {
  const Int q = n / d, r = n % d;  // truncated
  if (r == 0) return q;
  const Int toward = n < 0 ? -1 : 1;  // away from zero
  const Int twice = 2 * (r < 0 ? -r : r);
  switch (rule) {
    case IntRounding::toward_zero: return q;
    case IntRounding::floor: return n < 0 ? q - 1 : q;
    case IntRounding::half_away: return twice >= d ? q + toward : q;
    case IntRounding::half_up: return twice > d || (twice == d && n > 0) ? q + toward : q;
    case IntRounding::half_even:
      if (twice != d) return twice > d ? q + toward : q;
      return (q % 2 != 0) ? q + toward : q;
    case IntRounding::tosa: break;  // divide() computes it
  }
  return q;
}

// TOSA AVG_POOL2D's integer division, as its pseudo-code states it: reciprocal_scale(d) gives
// k with 2^(k-1) < d <= 2^k, multiplier = ((1 << 30) + 1 << k) / d and shift 30 + k;
// apply_scale_32 gives (n * multiplier + (1 << (shift - 1))) >> shift, an arithmetic shift. In
// 128 bits: d < 2^63 keeps k <= 63, the multiplier's numerator below 2^94 and the multiplier
// below 2^31; a window's sum is below 2^94 (fewer than 2^62 taps of at most 2^31), so |n| *
// multiplier stays below 2^125.
Int128 tosa_divide(Int128 n, int64_t d) {
  const int k = tosa::scale_bits(d);
  const Int128 multiplier = (((Int128{1} << 30) + 1) << k) / d;
  const int shift = 30 + k;
  return (n * multiplier + (Int128{1} << (shift - 1))) >> shift;
}

// In 64 bits when n fits and 2d does (every window of 8- and 32-bit values short of 2^32 taps, with
// a small bias): 128-bit division is a library call, and this is every integer average's last step.
Int128 divide(Int128 n, int64_t d, IntRounding rule) {
  if (rule == IntRounding::tosa) return tosa_divide(n, d);
  if (n >= std::numeric_limits<int64_t>::min() && n <= std::numeric_limits<int64_t>::max() &&
      d < (int64_t{1} << 62))
    return divide_in<int64_t>(static_cast<int64_t>(n), d, rule);
  return divide_in<Int128>(n, d, rule);
}

// Computes one (n, c) plane: for every output element, its window's taps in scan order.
template <DType D>
class PlaneKernel {
  using S = Storage<D>;
  using T = typename S::T;
  static constexpr bool integer =
      !(D == DType::f64 || D == DType::f32 || D == DType::f16 || D == DType::bf16);

 public:
  PlaneKernel(const Plan& plan, const RunArgs& args)
      : plan_(plan),
        p_(plan.p),
        args_(args),
        rank_(p_.axes.size()),
        o_(rank_),
        t_(rank_),
        lowest_(lowest_value(D)) {}

  // One output element (n, c, o): computed into args_.output[0] (and args_.indices[0]); for a
  // float average also the window's absolute sum and divisor, which tolerances scale with.
  ElementValue element(int64_t n, int64_t c, const int64_t* o) {
    std::copy(o, o + rank_, o_.begin());
    const int64_t in_base = plan_.plane_base(n, c, plan_.in_plane);
    const int64_t step = plan_.spatial_step();
    ElementValue e;
    if (p_.op == Op::avg) {
      average(in_base, step, 0);
      e.divisor = divisor();
      if (!integer && e.divisor > 0)
        scan(in_base, step, [&](T v, int64_t) {
          const double x = S::value(v);
          if (std::isfinite(x)) e.abs_sum += std::fabs(x);
        });
    } else {
      maximum(n, c, in_base, step, 0);
      if (args_.indices) e.index = args_.indices[0];
    }
    e.value = load_element(D, args_.output);
    return e;
  }

  void run(int64_t n, int64_t c) {
    const int64_t in_base = plan_.plane_base(n, c, plan_.in_plane);
    const int64_t out_base = plan_.plane_base(n, c, plan_.out_plane);
    const int64_t step = plan_.spatial_step();
    std::fill(o_.begin(), o_.end(), 0);
    for (int64_t out_spatial = 0; out_spatial < plan_.out_plane; ++out_spatial) {
      const int64_t at = out_base + out_spatial * step;
      if (p_.op == Op::avg)
        average(in_base, step, at);
      else
        maximum(n, c, in_base, step, at);
      for (size_t i = rank_; i-- > 0;) {  // next output coordinate, last axis fastest
        if (++o_[i] < plan_.out_extent[i]) break;
        o_[i] = 0;
      }
    }
  }

 private:
  // Calls visit(value, plane offset) for each in-bounds tap of window o_, in scan order
  // (row-major over the kernel offsets), where the plane offset is the tap's row-major spatial
  // offset in its (n, c) plane; returns false when the window has no such tap.
  template <class Visit>
  bool scan(int64_t in_base, int64_t step, Visit&& visit) {
    for (size_t i = 0; i < rank_; ++i) {
      t_[i] = plan_.first[i][static_cast<size_t>(o_[i])];
      if (t_[i] >= plan_.past[i][static_cast<size_t>(o_[i])]) return false;
    }
    const size_t last = rank_ - 1;
    const Axis& w = p_.axes[last];
    const int64_t w_first = t_[last], w_past = plan_.past[last][static_cast<size_t>(o_[last])];
    const int64_t w_start = o_[last] * w.stride - w.pad_begin;  // "tap t at j*s - pb + t*dl"
    while (true) {
      int64_t row = 0;  // the outer axes' part of the offset
      for (size_t i = 0; i < last; ++i) {
        const Axis& a = p_.axes[i];
        row += (o_[i] * a.stride - a.pad_begin + t_[i] * a.dilation) * plan_.in_stride[i];
      }
      for (int64_t t = w_first; t < w_past; ++t) {  // the last axis: one row of taps
        const int64_t offset = row + w_start + t * w.dilation;
        visit(read<T>(args_.input, in_base + offset * step), offset);
      }
      size_t i = last;
      while (i-- > 0) {
        if (++t_[i] < plan_.past[i][static_cast<size_t>(o_[i])]) break;
        t_[i] = plan_.first[i][static_cast<size_t>(o_[i])];
        if (i == 0) return true;
      }
      if (last == 0) return true;
    }
  }

  int64_t in_bounds_taps() const {
    int64_t count = 1;
    for (size_t i = 0; i < rank_; ++i)
      count *=
          plan_.past[i][static_cast<size_t>(o_[i])] - plan_.first[i][static_cast<size_t>(o_[i])];
    return count;
  }

  int64_t divisor() const {
    if (p_.divisor == Divisor::exclude) return in_bounds_taps();
    int64_t d = 1;
    for (size_t i = 0; i < rank_; ++i) {
      const auto j = static_cast<size_t>(o_[i]);
      switch (p_.divisor) {
        case Divisor::exclude: break;                                // the in-bounds taps, above
        case Divisor::include_clip: d *= plan_.padded[i][j]; break;  // taps in [-pb, d + pe)
        case Divisor::include_full: d *= p_.axes[i].kernel; break;   // every tap
        case Divisor::override_value: return p_.divisor_override;
      }
    }
    return d;
  }

  // "T_out = (b + T_sum) / T_div".
  void average(int64_t in_base, int64_t step, int64_t at) {
    const int64_t d = divisor();
    if (d == 0) {
      write(args_.output, at, S::store(empty_window_value(p_)));
      return;
    }
    if constexpr (integer) {
      Int128 sum = p_.bias;
      if (in_bounds_taps() < (int64_t{1} << 32)) {  // |v| <= 2^31: a 64-bit sum is exact
        int64_t values = 0;
        scan(in_base, step, [&](T v, int64_t) { values += v; });
        sum += values;
      } else {
        scan(in_base, step, [&](T v, int64_t) { sum += v; });
      }
      // TOSA's zero points: input_zp off every tap summed, output_zp onto the quotient.
      sum -= static_cast<Int128>(p_.input_zp) * in_bounds_taps();
      Int128 q = divide(sum, d, p_.int_rounding) + p_.output_zp;
      q = std::clamp<Int128>(q, int_min(D), int_max(D));  // saturated to the dtype's range
      write(args_.output, at, static_cast<T>(q));
    } else {
      double sum = static_cast<double>(p_.bias);
      scan(in_base, step, [&](T v, int64_t) { sum += S::value(v); });
      write(args_.output, at, S::store(round_to_float(D, sum / static_cast<double>(d))));
    }
  }

  // The maximum of the window's in-bounds values, ties to the first in scan order; NaN by p.nan;
  // or, with start=lowest, a running maximum from lowest() that moves on a strict '>'. With
  // zeros=ordered, -0 is below +0: a +0 takes the lead from a -0, and the index is the first
  // element with the maximum's bits.
  // In two steps: the value, then (for the index) where it first occurs in scan order. The running
  // "m = v if v > m" holds the first of equal values, and the first element equal to the maximum
  // is the one a strict '>' scan keeps, so both steps agree with the clause.
  void maximum(int64_t n, int64_t c, int64_t in_base, int64_t step, int64_t at) {
    const bool from_lowest = p_.max_start == MaxStart::lowest;
    const bool ordered = !integer && p_.zeros == Zeros::ordered;
    const double lowest = lowest_;
    double best = from_lowest ? lowest : -std::numeric_limits<double>::infinity();
    bool have_nan = false, have_number = false;
    // A selection, not a branch: whether a value takes the lead is as unpredictable as the data.
    const bool any = scan(in_base, step, [&](T raw, int64_t) {
      const double v = S::value(raw);
      const bool nan = !integer && std::isnan(v);
      have_nan = have_nan || nan;
      have_number = have_number || !nan;
      best = v > best || (ordered && v == 0 && best == 0 && !std::signbit(v)) ? v : best;
    });
    const bool nan_result =
        any && !from_lowest && have_nan && (p_.nan == NanPolicy::propagate || !have_number);
    double value = best;
    if (!any) value = empty_window_value(p_);
    if (nan_result)
      value = std::numeric_limits<double>::quiet_NaN();  // the first NaN in scan order
    write(args_.output, at, S::store(value));
    if (!args_.indices) return;
    int64_t chosen = 0;  // from lowest, with nothing above it: the plane's element 0
    if (!any) {
      chosen = from_lowest ? 0 : -1;
    } else if (nan_result || !from_lowest || best > lowest) {
      chosen = -1;
      scan(in_base, step, [&](T raw, int64_t offset) {
        const double v = S::value(raw);
        const bool same = v == best && (!ordered || std::signbit(v) == std::signbit(best));
        if (chosen < 0 && (nan_result ? std::isnan(v) : same)) chosen = offset;
      });
    }
    args_.indices[at] = chosen < 0 ? -1 : index_of(n, c, chosen);
  }

  // The index of the element at row-major offset `plane_offset` of plane (n, c), per the
  // problem's index mode.
  int64_t index_of(int64_t n, int64_t c, int64_t plane_offset) const {
    int64_t offset = plane_offset;
    if (p_.index_order == IndexOrder::column_major) {  // the first axis varies fastest
      offset = 0;
      for (size_t i = rank_; i-- > 0;) {
        offset += plane_offset % p_.axes[i].extent * plan_.column_stride[i];
        plane_offset /= p_.axes[i].extent;
      }
    }
    if (p_.indices == Indices::tensor) {
      offset += (n * p_.channels + c) * plan_.in_plane;
      if (p_.index_axis > 0) offset %= plan_.index_modulus;
    }
    return offset;
  }

  const Plan& plan_;
  const Problem& p_;
  const RunArgs& args_;
  size_t rank_;
  std::vector<int64_t> o_, t_;  // the output coordinate and the kernel offset
  double lowest_;               // lowest_value(D), once
};

template <DType D>
void run_typed(const Plan& plan, const RunArgs& args) {
  const int64_t planes = plan.p.batch * plan.p.channels;
#pragma omp parallel num_threads(std::max(1, args.threads))
  {
    PlaneKernel<D> kernel(plan, args);  // one per thread: its coordinate scratch is reused
#pragma omp for schedule(static)
    for (int64_t nc = 0; nc < planes; ++nc) kernel.run(nc / plan.p.channels, nc % plan.p.channels);
  }
}

template <DType D>
class TypedProbe final : public ElementProbe::Impl {
 public:
  TypedProbe(const Problem& p, Layout layout, const ShapeInfo& shape, const std::byte* input)
      : problem_(p),
        plan_(problem_, layout, shape),
        args_{input, scratch_, p.op == Op::max && p.indices != Indices::none ? &index_ : nullptr,
              1},
        kernel_(plan_, args_) {}
  ElementValue at(int64_t n, int64_t c, const int64_t* o) override {
    return kernel_.element(n, c, o);
  }

 private:
  Problem problem_;
  Plan plan_;
  alignas(8) std::byte scratch_[8] = {};
  int64_t index_ = -1;
  RunArgs args_;
  PlaneKernel<D> kernel_;
};

}  // namespace

ElementProbe::ElementProbe(const Problem& p, Layout layout, const ShapeInfo& shape,
                           const std::byte* input) {
  switch (p.dtype) {
    case DType::f64:
      impl_ = std::make_unique<TypedProbe<DType::f64>>(p, layout, shape, input);
      break;
    case DType::f32:
      impl_ = std::make_unique<TypedProbe<DType::f32>>(p, layout, shape, input);
      break;
    case DType::f16:
      impl_ = std::make_unique<TypedProbe<DType::f16>>(p, layout, shape, input);
      break;
    case DType::bf16:
      impl_ = std::make_unique<TypedProbe<DType::bf16>>(p, layout, shape, input);
      break;
    case DType::i32:
      impl_ = std::make_unique<TypedProbe<DType::i32>>(p, layout, shape, input);
      break;
    case DType::i8: impl_ = std::make_unique<TypedProbe<DType::i8>>(p, layout, shape, input); break;
    case DType::u8: impl_ = std::make_unique<TypedProbe<DType::u8>>(p, layout, shape, input); break;
  }
}

ElementProbe::~ElementProbe() = default;

Status ReferenceEngine::supports(const Problem& p, Layout) const {
  Status s = validate(p);
  if (!s) return s.error();
  return Ok{};
}

ErrorBound ReferenceEngine::error_bound(const Problem& p, Layout) const {
  if (p.op == Op::max || !is_float(p.dtype)) return ErrorBound{};
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  // Double sums: taps - 1 additions, the bias, the division; then one rounding into the dtype
  // (f64: the division is that rounding).
  return sum_bound(DType::f64, taps + 1, p.dtype == DType::f64 ? 0.5 : 1.0,
                   "double sums in scan order, one division, rounded into the dtype");
}

Status ReferenceEngine::run(const Problem& p, Layout layout, const RunArgs& args) const {
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  if (!args.input || !args.output ||
      (p.op == Op::max && p.indices != Indices::none && !args.indices))
    return Error{
        "reference: a buffer is missing (input, output, or the indices a max with indices needs)"};
  const Plan plan(p, layout, *shape);
  switch (p.dtype) {
    case DType::f64: run_typed<DType::f64>(plan, args); break;
    case DType::f32: run_typed<DType::f32>(plan, args); break;
    case DType::f16: run_typed<DType::f16>(plan, args); break;
    case DType::bf16: run_typed<DType::bf16>(plan, args); break;
    case DType::i32: run_typed<DType::i32>(plan, args); break;
    case DType::i8: run_typed<DType::i8>(plan, args); break;
    case DType::u8: run_typed<DType::u8>(plan, args); break;
  }
  return Ok{};
}

const ReferenceEngine& engine() {
  static const ReferenceEngine instance;
  return instance;
}

const poolspec_backend* backend() {
  static const auto b = make_engine_backend(engine(), "poolspec " POOLSPEC_VERSION, "spec");
  return &b->abi;
}

}  // namespace poolspec::reference
