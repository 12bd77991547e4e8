#include "poolspec/evaluate.hpp"

#include <cmath>
#include <limits>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/exact.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {

namespace {

// One window, scanned tap by tap in row-major order of the kernel offsets (the scan order).
struct Window {
  std::vector<double> values;                // the in-bounds values, in scan order
  std::vector<int64_t> plane_offsets;        // their row-major offsets within the (n, c) plane
  std::vector<int64_t> t, x;                 // scratch: the kernel offset and the input coordinate
  std::vector<std::vector<int64_t>> inside;  // scratch: per axis, the inside coordinates
  std::vector<size_t> t_index;               // scratch: a position in each of those lists
  int64_t in_padded_extent = 0;              // taps inside [-pb, d+pe) on every axis
  int64_t taps = 0;                          // every tap, prod(kernel)
  // Scratch of the exact average, kept from window to window so that its storage is reused.
  exact::Sum sum;
  mpz_class divisor, integer_sum, quotient;
};

class Evaluator {
 public:
  // `explaining`: also render the exact value as text (costly; explain() only).
  Evaluator(const Problem& p, const Tensor& input, bool explaining)
      : p_(p), input_(input), explaining_(explaining) {
    plane_size_ = 1;
    for (const Axis& a : p.axes) plane_size_ *= a.extent;
    const std::vector<int64_t> shape = input_shape(p);
    for (size_t i = static_cast<size_t>(p.index_axis); i < shape.size(); ++i)
      index_modulus_ *= shape[i];
    column_stride_.assign(p.axes.size(), 1);
    for (size_t i = 1; i < p.axes.size(); ++i)
      column_stride_[i] = column_stride_[i - 1] * p.axes[i - 1].extent;
  }

  // Scans the window of output element (n, c, o...): every tap, recorded when `taps` is given
  // (explain), or axis by axis (evaluate). Both give the same window.
  void scan(int64_t n, int64_t c, const std::vector<int64_t>& o, Window& w,
            std::vector<Tap>* taps) const {
    w.values.clear();  // the vectors' storage is reused from window to window
    w.plane_offsets.clear();
    w.in_padded_extent = 0;
    w.taps = 0;
    if (taps)
      scan_every_tap(n, c, o, w, *taps);
    else
      scan_by_axis(n, c, o, w);
  }

 private:
  // Tap t of window o on axis i is at input coordinate o*s - pb + t*dl: inside the input when in
  // [0, d), inside the padded extent unless at or past d + pe (it is never below -pb).
  TapKind tap_kind(const Axis& a, int64_t x) const {
    if (x < 0) return TapKind::pad_begin;
    if (x >= a.extent + a.pad_end) return TapKind::overhang;
    if (x >= a.extent) return TapKind::pad_end;
    return TapKind::input;
  }

  // Every tap in scan order (row-major over the kernel offsets), each recorded with its kind.
  void scan_every_tap(int64_t n, int64_t c, const std::vector<int64_t>& o, Window& w,
                      std::vector<Tap>& taps) const {
    const size_t rank = p_.axes.size();
    std::vector<int64_t>& t = w.t;
    std::vector<int64_t>& x = w.x;
    t.assign(rank, 0);
    x.resize(rank);
    const int64_t plane_base = (n * p_.channels + c) * plane_size_;
    while (true) {
      bool inside = true, in_padded = true;
      TapKind kind = TapKind::input;
      int64_t offset = 0;
      for (size_t i = 0; i < rank; ++i) {
        const Axis& a = p_.axes[i];
        x[i] = o[i] * a.stride - a.pad_begin + t[i] * a.dilation;
        const TapKind k = tap_kind(a, x[i]);
        if (k != TapKind::input) inside = false;
        if (k == TapKind::overhang) in_padded = false;
        // A tap past the padded extent on any axis is overhang (outside every divisor that
        // counts padding); otherwise the first axis that is not `input` names its padding.
        if (k == TapKind::overhang || kind == TapKind::input) kind = k;
        offset = offset * a.extent + x[i];
      }
      ++w.taps;
      if (in_padded) ++w.in_padded_extent;
      Tap tap{t, x, kind, std::nullopt, -1};
      if (inside) {
        w.values.push_back(input_.values[static_cast<size_t>(plane_base + offset)]);
        w.plane_offsets.push_back(offset);
        tap.value = w.values.back();
        tap.input_index = plane_base + offset;
      }
      taps.push_back(std::move(tap));
      // Next kernel offset, last axis fastest.
      size_t i = rank;
      while (i > 0) {
        --i;
        if (++t[i] < p_.axes[i].kernel) break;
        t[i] = 0;
        if (i == 0) return;
      }
    }
  }

  // The same window, axis by axis: a tap is inside the input (or the padded extent) when it is on
  // every axis, so the counts are products of per-axis counts, and the inside taps in scan order
  // are the row-major product of each axis's inside coordinates, in tap order. Each tap is still
  // classified by enumeration, once per axis (no closed form).
  void scan_by_axis(int64_t n, int64_t c, const std::vector<int64_t>& o, Window& w) const {
    const size_t rank = p_.axes.size();
    w.inside.resize(rank);
    w.taps = 1;
    w.in_padded_extent = 1;
    bool empty = false;
    for (size_t i = 0; i < rank; ++i) {
      const Axis& a = p_.axes[i];
      w.inside[i].clear();
      int64_t in_padded = 0;
      for (int64_t t = 0; t < a.kernel; ++t) {
        const int64_t x = o[i] * a.stride - a.pad_begin + t * a.dilation;
        const TapKind k = tap_kind(a, x);
        if (k != TapKind::overhang) ++in_padded;
        if (k == TapKind::input) w.inside[i].push_back(x);
      }
      w.taps *= a.kernel;
      w.in_padded_extent *= in_padded;
      empty = empty || w.inside[i].empty();
    }
    if (empty) return;
    std::vector<size_t>& at = w.t_index;  // the position in each axis's inside list
    at.assign(rank, 0);
    const int64_t plane_base = (n * p_.channels + c) * plane_size_;
    while (true) {
      int64_t offset = 0;
      for (size_t i = 0; i < rank; ++i) offset = offset * p_.axes[i].extent + w.inside[i][at[i]];
      w.values.push_back(input_.values[static_cast<size_t>(plane_base + offset)]);
      w.plane_offsets.push_back(offset);
      size_t i = rank;
      while (i > 0) {
        --i;
        if (++at[i] < w.inside[i].size()) break;
        at[i] = 0;
        if (i == 0) return;
      }
    }
  }

 public:
  struct Element {
    double value = 0;
    int64_t index = -1;  // max: the selected element, per the problem's index mode
    std::optional<int64_t> divisor;
    std::string exact_text;
    std::string rule;
  };

  Element reduce(int64_t n, int64_t c, Window& w) const {
    return p_.op == Op::avg ? average(w) : maximum(n, c, w);
  }

 private:
  Element empty_element(std::string rule) const {
    Element e;
    e.value = empty_window_value(p_);
    if (explaining_) e.rule = fmt::format("{}: empty={}", rule, empty_window_name(p_.empty));
    e.exact_text = "(none)";
    return e;
  }

  int64_t divisor_of(const Window& w) const {
    switch (p_.divisor) {
      case Divisor::exclude: return static_cast<int64_t>(w.values.size());
      case Divisor::include_clip: return w.in_padded_extent;
      case Divisor::include_full: return w.taps;
      case Divisor::override_value: return p_.divisor_override;
    }
    return 0;
  }

  // "T_out = T_sum / T_div": the sum of the in-bounds values over the divisor of the rule.
  Element average(Window& w) const {
    const int64_t divisor = divisor_of(w);
    if (divisor == 0) return empty_element("divisor 0");
    Element e;
    e.divisor = divisor;
    // IEEE specials first: a NaN, or +inf with -inf, gives NaN; otherwise an infinity wins.
    bool nan = false, pos_inf = false, neg_inf = false;
    for (double v : w.values) {
      nan = nan || std::isnan(v);
      pos_inf = pos_inf || v == std::numeric_limits<double>::infinity();
      neg_inf = neg_inf || v == -std::numeric_limits<double>::infinity();
    }
    if (nan || (pos_inf && neg_inf)) {
      e.value = std::numeric_limits<double>::quiet_NaN();
      if (explaining_) e.rule = nan ? "a NaN in the window" : "+inf and -inf in the window";
      e.exact_text = "NaN";
      return e;
    }
    if (pos_inf || neg_inf) {
      e.value = pos_inf ? std::numeric_limits<double>::infinity()
                        : -std::numeric_limits<double>::infinity();
      if (explaining_) e.rule = "an infinity in the window";
      e.exact_text = pos_inf ? "+inf" : "-inf";
      return e;
    }
    exact::Sum& sum = w.sum;
    sum.clear();
    if (p_.bias != 0) sum.add_integer(p_.bias);  // "(b + sum X) / N"
    // TOSA: "value = apply_sub_s(value, input_zp)" at every tap the window sums. Zero points are
    // an integer dtype's, so x - input_zp is an integer below 2^33: exact in a double.
    const double zero_point = static_cast<double>(p_.input_zp);
    for (double v : w.values) sum.add(v - zero_point);
    const mpz_class& d = w.divisor = static_cast<signed long>(divisor);
    if (explaining_) e.exact_text = exact::quotient_text(sum.units(), d);
    if (is_float(p_.dtype)) {
      e.value = exact::round_quotient(sum.units(), d, float_format(p_.dtype), sum.negative_zero());
      if (explaining_)
        e.rule = fmt::format("exact sum / {}, rounded once to nearest-even {}", divisor,
                             dtype_name(p_.dtype));
      return e;
    }
    // Integer values are integers, so sum.units() = S * 2^1074 exactly; divide by the scale.
    mpz_fdiv_q_2exp(w.integer_sum.get_mpz_t(), sum.units().get_mpz_t(),
                    static_cast<mp_bitcnt_t>(-exact::unit_exponent));
    mpz_class& q = w.quotient;
    exact::divide(q, w.integer_sum, d, p_.int_rounding);
    q += static_cast<signed long>(p_.output_zp);  // TOSA: "acc = apply_add_s(acc, output_zp)"
    const signed long lo = static_cast<signed long>(int_min(p_.dtype));
    const signed long hi = static_cast<signed long>(int_max(p_.dtype));
    if (explaining_)
      e.rule = p_.int_rounding == IntRounding::tosa
                   ? std::string("TOSA's division of the sum (reciprocal_scale, apply_scale_32)")
                   : fmt::format("exact mean rounded {}", int_rounding_name(p_.int_rounding));
    if (explaining_ && (p_.input_zp != 0 || p_.output_zp != 0))
      e.rule += fmt::format(", input_zp {} subtracted at each tap, output_zp {} added", p_.input_zp,
                            p_.output_zp);
    if (explaining_ && (q < lo || q > hi)) e.rule += ", saturated to the dtype's range";
    if (q < lo) q = lo;
    if (q > hi) q = hi;
    e.value = q.get_d();
    return e;
  }

  // Whether v takes the lead from m: v > m, and with zeros=ordered also +0 over -0 (IEEE
  // 754-2019's maximum orders -0 below +0).
  bool above(double v, double m) const {
    return v > m ||
           (p_.zeros == Zeros::ordered && v == 0 && m == 0 && !std::signbit(v) && std::signbit(m));
  }

  // The maximum of the in-bounds values; ties go to the first in scan order.
  Element maximum(int64_t n, int64_t c, const Window& w) const {
    if (p_.max_start == MaxStart::lowest) return maximum_from_lowest(n, c, w);
    if (w.values.empty()) return empty_element("no input element in the window");
    Element e;
    size_t best = w.values.size();  // index of the selected value, none yet
    size_t first_nan = w.values.size();
    for (size_t i = 0; i < w.values.size(); ++i) {
      const double v = w.values[i];
      if (std::isnan(v)) {
        if (first_nan == w.values.size()) first_nan = i;
        continue;
      }
      if (best == w.values.size() || above(v, w.values[best])) best = i;
    }
    if (first_nan != w.values.size() &&
        (p_.nan == NanPolicy::propagate || best == w.values.size())) {
      best = first_nan;
      if (explaining_)
        e.rule = p_.nan == NanPolicy::propagate ? "nan=propagate: the first NaN"
                                                : "nan=ignore, but every value is NaN";
    } else {
      if (explaining_)
        e.rule = p_.zeros == Zeros::ordered ? "the first maximum in scan order, -0 below +0"
                                            : "the first maximum in scan order";
    }
    e.value = w.values[best];
    if (explaining_) e.exact_text = fmt::format("{}", e.value);
    e.index = index_at(n, c, w.plane_offsets[best]);
    return e;
  }

  // start=lowest: m = lowest, index = the plane's element 0; then, in scan order, m = v on v > m.
  Element maximum_from_lowest(int64_t n, int64_t c, const Window& w) const {
    if (w.values.empty()) {
      Element e = empty_element("no input element in the window");
      e.index = index_at(n, c, 0);  // the plane's element 0
      return e;
    }
    Element e;
    e.value = lowest_value(p_.dtype);
    e.index = index_at(n, c, 0);
    if (explaining_)
      e.rule = "start=lowest: no value above lowest, so lowest and the plane's first index";
    for (size_t i = 0; i < w.values.size(); ++i)
      if (above(w.values[i], e.value)) {
        e.value = w.values[i];
        e.index = index_at(n, c, w.plane_offsets[i]);
        if (explaining_) e.rule = "start=lowest: the first maximum above lowest in scan order";
      }
    if (explaining_) e.exact_text = fmt::format("{}", e.value);
    return e;
  }

  // The index of the element at row-major offset `plane_offset` of plane (n, c), per the
  // problem's index mode.
  int64_t index_at(int64_t n, int64_t c, int64_t plane_offset) const {
    int64_t offset = plane_offset;
    if (p_.index_order == IndexOrder::column_major) {  // the first axis varies fastest
      offset = 0;
      for (size_t i = p_.axes.size(); i > 0; --i) {
        offset += plane_offset % p_.axes[i - 1].extent * column_stride_[i - 1];
        plane_offset /= p_.axes[i - 1].extent;
      }
    }
    if (p_.indices == Indices::tensor) {
      offset += (n * p_.channels + c) * plane_size_;
      if (p_.index_axis > 0) offset %= index_modulus_;
    }
    return offset;
  }

  const Problem& p_;
  const Tensor& input_;
  bool explaining_;
  int64_t plane_size_ = 1;
  int64_t index_modulus_ = 1;           // prod(input_shape[index_axis:])
  std::vector<int64_t> column_stride_;  // column-major strides of the spatial axes
};

Status check_input(const Problem& p, const Tensor& input) {
  if (input.dtype != p.dtype)
    return Error{fmt::format("input dtype {}: the problem's dtype is {}", dtype_name(input.dtype),
                             dtype_name(p.dtype))};
  const std::vector<int64_t> expected = input_shape(p);
  if (input.shape != expected)
    return Error{fmt::format("input shape ({}): the problem's input shape is ({})",
                             fmt::join(input.shape, ", "), fmt::join(expected, ", "))};
  if (input.values.size() != static_cast<size_t>(element_count(expected).value()))
    return Error{fmt::format("input holds {} values for shape ({})", input.values.size(),
                             fmt::join(expected, ", "))};
  return Ok{};
}

// Runs `body`, turning an allocation failure or any other exception into an Error, so that
// nothing escapes the library's API.
template <class T, class Body>
Result<T> guarded(Body body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Error{"out of memory while evaluating the problem"};
  } catch (const std::exception& e) {
    return Error{fmt::format("internal error: {}", e.what())};
  }
}

}  // namespace

double empty_window_value(const Problem& p) {
  switch (p.empty) {
    case EmptyWindow::nan: return std::numeric_limits<double>::quiet_NaN();
    case EmptyWindow::lowest: return lowest_value(p.dtype);
    case EmptyWindow::neg_inf: return -std::numeric_limits<double>::infinity();
    case EmptyWindow::zero:
    case EmptyWindow::error: return 0;  // error: refused by validate()
  }
  return 0;
}

Result<Output> evaluate(const Problem& p, const Tensor& input) {
  return guarded<Output>([&]() -> Result<Output> {
    Result<ShapeInfo> shape = validated_shape(p);
    if (!shape) return shape.error();
    if (Status s = check_input(p, input); !s) return s.error();
    const Evaluator evaluator(p, input, false);

    Output out;
    out.values.dtype = p.dtype;
    out.values.shape = shape->output_shape;
    out.values.values.resize(static_cast<size_t>(shape->output_elements));
    if (p.indices != Indices::none) out.indices.resize(out.values.values.size());

    const size_t rank = p.axes.size();
    std::vector<int64_t> o(rank, 0);
    Window w;
    size_t flat = 0;
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t c = 0; c < p.channels; ++c) {
        std::fill(o.begin(), o.end(), 0);
        while (true) {
          evaluator.scan(n, c, o, w, nullptr);
          const auto element = evaluator.reduce(n, c, w);
          out.values.values[flat] = element.value;
          if (!out.indices.empty()) out.indices[flat] = element.index;
          ++flat;
          size_t i = rank;
          bool done = false;
          while (i > 0) {
            --i;
            if (++o[i] < shape->output_shape[i + 2]) break;
            o[i] = 0;
            if (i == 0) done = true;
          }
          if (done) break;
        }
      }
    return out;
  });
}

Result<Explanation> explain(const Problem& p, const Tensor& input,
                            const std::vector<int64_t>& coordinate) {
  return guarded<Explanation>([&]() -> Result<Explanation> {
    Result<ShapeInfo> shape = validated_shape(p);
    if (!shape) return shape.error();
    if (Status s = check_input(p, input); !s) return s.error();
    const std::vector<int64_t>& out_shape = shape->output_shape;
    if (coordinate.size() != out_shape.size())
      return Error{
          fmt::format("output coordinate ({}): needs {} values (N, C and one per "
                      "spatial axis)",
                      fmt::join(coordinate, ","), out_shape.size())};
    for (size_t i = 0; i < coordinate.size(); ++i)
      if (coordinate[i] < 0 || coordinate[i] >= out_shape[i])
        return Error{fmt::format("output coordinate[{}]={}: must be in [0, {})", i, coordinate[i],
                                 out_shape[i])};

    const Evaluator evaluator(p, input, true);
    Explanation ex;
    ex.output_coordinate = coordinate;
    Window w;
    const std::vector<int64_t> o(coordinate.begin() + 2, coordinate.end());
    evaluator.scan(coordinate[0], coordinate[1], o, w, &ex.taps);
    const auto element = evaluator.reduce(coordinate[0], coordinate[1], w);
    ex.in_bounds = static_cast<int64_t>(w.values.size());
    ex.in_padded_extent = w.in_padded_extent;
    ex.divisor = element.divisor;
    ex.exact_value = element.exact_text;
    ex.result = element.value;
    if (p.indices != Indices::none) ex.index = element.index;
    ex.rule = element.rule;
    return ex;
  });
}

std::string_view tap_kind_name(TapKind kind) {
  switch (kind) {
    case TapKind::input: return "input";
    case TapKind::pad_begin: return "pad_begin";
    case TapKind::pad_end: return "pad_end";
    case TapKind::overhang: return "overhang";
  }
  return "?";
}

}  // namespace poolspec
