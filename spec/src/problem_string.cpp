#include "poolspec/problem_string.hpp"

#include <charconv>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace poolspec {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  if (s.empty() || s[0] == '+') return std::nullopt;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

template <class Enum, size_t N>
std::optional<Enum> parse_enum(std::string_view s, const Enum (&values)[N],
                               std::string_view (*name)(Enum)) {
  for (Enum v : values)
    if (name(v) == s) return v;
  return std::nullopt;
}

constexpr Rounding all_roundings[] = {Rounding::floor, Rounding::ceil, Rounding::ceil_torch};
constexpr Divisor plain_divisors[] = {Divisor::exclude, Divisor::include_clip,
                                      Divisor::include_full};
constexpr EmptyWindow all_empty[] = {EmptyWindow::error, EmptyWindow::zero, EmptyWindow::nan,
                                     EmptyWindow::lowest, EmptyWindow::neg_inf};
constexpr NanPolicy all_nan[] = {NanPolicy::propagate, NanPolicy::ignore};
constexpr IntRounding all_int_roundings[] = {IntRounding::half_even, IntRounding::half_away,
                                             IntRounding::half_up,   IntRounding::toward_zero,
                                             IntRounding::floor,     IntRounding::tosa};
constexpr Indices all_indices[] = {Indices::plane, Indices::tensor};
constexpr IndexOrder all_orders[] = {IndexOrder::row_major, IndexOrder::column_major};
constexpr MaxStart all_starts[] = {MaxStart::first, MaxStart::lowest};
constexpr Zeros all_zeros[] = {Zeros::equal, Zeros::ordered, Zeros::either};
constexpr Subnormals all_subnormals[] = {Subnormals::exact, Subnormals::may_flush};
constexpr Sums all_sums[] = {Sums::data, Sums::f32};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Problem> run() {
    const std::vector<std::string_view> fields = split(text_, ':');
    if (fields.size() < 5)
      return Error{
          fmt::format("problem string '{}': {} field{}; expected at least "
                      "op:dtype:n<N>c<C>:<spatial>:k<kernel>",
                      text_, fields.size(), fields.size() == 1 ? "" : "s")};
    Problem p;
    if (fields[0] == "avg")
      p.op = Op::avg;
    else if (fields[0] == "max")
      p.op = Op::max;
    else
      return fail(0, fields[0], "op must be avg or max");

    if (auto d = parse_dtype(fields[1]))
      p.dtype = *d;
    else
      return fail(1, fields[1], "dtype must be one of f64 f32 f16 bf16 i32 i8 u8");

    if (!parse_batch_channels(fields[2], p)) return fail(2, fields[2], "expected n<N>c<C>");
    std::vector<int64_t> extents;
    if (Status s = parse_spatial(fields[3], extents); !s) return s.error();
    p.axes.resize(extents.size());
    for (size_t i = 0; i < extents.size(); ++i) p.axes[i].extent = extents[i];

    bool seen_kernel = false;
    std::vector<std::string_view> seen;
    for (size_t f = 4; f < fields.size(); ++f) {
      const std::string_view field = fields[f];
      const std::string_view key = key_of(field);
      for (std::string_view s : seen)
        if (s == key) return fail(f, field, fmt::format("'{}' is given twice", key));
      seen.push_back(key);
      if (Status s = applies(f, field, key, p); !s) return s.error();
      Status s = parse_field(f, field, key, p, seen_kernel);
      if (!s) return s.error();
    }
    if (!seen_kernel) return fail(4, fields[4], "the kernel field k<..> is required");
    return p;
  }

 private:
  // The key of a field: the text before '=', or a known list prefix, or the whole word.
  static std::string_view key_of(std::string_view field) {
    if (const size_t eq = field.find('='); eq != std::string_view::npos) {
      const std::string_view k = field.substr(0, eq);
      return k == "override" ? std::string_view("divisor") : k;
    }
    for (std::string_view prefix : {"dl", "pb", "pe", "k", "s"})
      if (field.size() > prefix.size() && field.substr(0, prefix.size()) == prefix &&
          (field[prefix.size()] == '-' ||
           (field[prefix.size()] >= '0' && field[prefix.size()] <= '9')))
        return prefix;
    if (parse_enum(field, all_roundings, rounding_name)) return "rounding";
    if (parse_enum(field, plain_divisors, divisor_name)) return "divisor";
    return field;  // a word poolspec does not know: refused as such by parse_field
  }

  // A field that does not apply to the op or dtype is refused, whatever its value: the string
  // would say something the problem does not (docs/cli.md, "Problem strings").
  Status applies(size_t f, std::string_view field, std::string_view key, const Problem& p) const {
    if (p.op == Op::max && (key == "divisor" || key == "bias"))
      return fail(f, field,
                  key == "bias" ? "only an average has a bias"
                                : "max pooling has no divisor (exclude, include_clip, include_full "
                                  "and override=<k> are an average's)");
    if (p.op == Op::avg && key == "nan")
      return fail(f, field, "only max pooling has a NaN policy (an average of a NaN is NaN)");
    if (p.op == Op::avg && (key == "idx" || key == "order" || key == "idxaxis"))
      return fail(f, field, "only max pooling has an indices output");
    if (p.op == Op::avg && key == "start")
      return fail(f, field, "only max pooling has a running maximum");
    if ((key == "input_zp" || key == "output_zp") && (p.op == Op::max || is_float(p.dtype)))
      return fail(f, field, "only an average of an integer dtype has zero points");
    if (key == "zeros" && !is_float(p.dtype))
      return fail(f, field, "only a float dtype has two zeros");
    if (key == "subnormals" && !is_float(p.dtype))
      return fail(f, field, "only a float dtype has subnormals");
    if (key == "sums" && (p.op == Op::max || !is_float(p.dtype)))
      return fail(f, field, "only a float average rounds its sums");
    if (field == "zeros=ordered" && p.op == Op::avg)
      return fail(f, field, "only a max orders -0 below +0 (an average compares no values)");
    if (key == "round" && (p.op == Op::max || is_float(p.dtype)))
      return fail(f, field,
                  fmt::format("only an integer average rounds its mean ({})",
                              p.op == Op::max ? "max picks an input value"
                                              : "a float average rounds to nearest-even"));
    return Ok{};
  }

  Status parse_field(size_t f, std::string_view field, std::string_view key, Problem& p,
                     bool& seen_kernel) {
    const auto list = [&](size_t prefix, auto setter) -> Status {
      std::vector<int64_t> values;
      if (Status s = parse_list(f, field, field.substr(prefix), 'x', values); !s) return s;
      if (values.size() != p.axes.size())
        return fail(f, field,
                    fmt::format("{} values for {} spatial axes", values.size(), p.axes.size()));
      for (size_t i = 0; i < values.size(); ++i) setter(p.axes[i], values[i]);
      return Ok{};
    };
    if (key == "k") {
      seen_kernel = true;
      return list(1, [](Axis& a, int64_t v) { a.kernel = v; });
    }
    if (key == "s") return list(1, [](Axis& a, int64_t v) { a.stride = v; });
    if (key == "dl") return list(2, [](Axis& a, int64_t v) { a.dilation = v; });
    if (key == "pb") return list(2, [](Axis& a, int64_t v) { a.pad_begin = v; });
    if (key == "pe") return list(2, [](Axis& a, int64_t v) { a.pad_end = v; });
    if (key == "rounding") {  // the word alone; "rounding=..." names no rounding
      const std::optional<Rounding> r = parse_enum(field, all_roundings, rounding_name);
      if (!r) return fail(f, field, "a rounding is written alone: floor, ceil or ceil_torch");
      p.rounding = *r;
      return Ok{};
    }
    const size_t eq = field.find('=');
    const std::string_view value = eq == std::string_view::npos ? "" : field.substr(eq + 1);
    if (key == "divisor") {
      if (auto d = parse_enum(field, plain_divisors, divisor_name)) {
        p.divisor = *d;
        return Ok{};
      }
      if (field.substr(0, eq) == "override") {
        auto k = parse_int(value);
        if (!k) return fail(f, field, "override=<k> needs an integer k");
        p.divisor = Divisor::override_value;
        p.divisor_override = *k;
        return Ok{};
      }
      return fail(f, field,
                  "unknown field: expected k s dl pb pe, a divisor (exclude include_clip "
                  "include_full override=<k>), a rounding (floor ceil ceil_torch) or key=value");
    }
    const auto option = [&](auto& target, const auto& values, auto name,
                            std::string_view allowed) -> Status {
      if (auto v = parse_enum(value, values, name)) {
        target = *v;
        return Ok{};
      }
      return fail(f, field, fmt::format("{} must be one of {}", key, allowed));
    };
    if (key == "empty")
      return option(p.empty, all_empty, empty_window_name, "error zero nan lowest -inf");
    if (key == "nan") return option(p.nan, all_nan, nan_policy_name, "propagate ignore");
    if (key == "round")
      return option(p.int_rounding, all_int_roundings, int_rounding_name,
                    "half_even half_away half_up toward_zero floor tosa");
    if (key == "input_zp" || key == "output_zp") {
      auto zp = parse_int(value);
      if (!zp) return fail(f, field, fmt::format("{}=<zp> needs an integer zp", key));
      (key == "input_zp" ? p.input_zp : p.output_zp) = *zp;
      return Ok{};
    }
    if (key == "bias") {
      auto b = parse_int(value);
      if (!b) return fail(f, field, "bias=<b> needs an integer b");
      p.bias = *b;
      return Ok{};
    }
    if (key == "idx") return option(p.indices, all_indices, indices_name, "plane tensor");
    if (key == "idxaxis") {
      auto k = parse_int(value);
      if (!k) return fail(f, field, "idxaxis=<axis> needs an integer axis");
      p.index_axis = *k;
      return Ok{};
    }
    if (key == "start") return option(p.max_start, all_starts, max_start_name, "first lowest");
    if (key == "order") return option(p.index_order, all_orders, index_order_name, "row col");
    if (key == "zeros") return option(p.zeros, all_zeros, zeros_name, "equal ordered either");
    if (key == "subnormals")
      return option(p.subnormals, all_subnormals, subnormals_name, "exact may_flush");
    if (key == "sums") return option(p.sums, all_sums, sums_name, "data f32");
    if (eq == std::string_view::npos)
      return fail(f, field,
                  "unknown field: expected k s dl pb pe, a divisor (exclude include_clip "
                  "include_full override=<k>), a rounding (floor ceil ceil_torch) or key=value");
    return fail(f, field, fmt::format("unknown option '{}'", key));
  }

  static bool parse_batch_channels(std::string_view field, Problem& p) {
    if (field.size() < 4 || field[0] != 'n') return false;
    const size_t c = field.find('c');
    if (c == std::string_view::npos) return false;
    auto n = parse_int(field.substr(1, c - 1));
    auto ch = parse_int(field.substr(c + 1));
    if (!n || !ch) return false;
    p.batch = *n;
    p.channels = *ch;
    return true;
  }

  Status parse_spatial(std::string_view field, std::vector<int64_t>& extents) {
    if (!field.empty() && field[0] == 'i')
      return parse_list(3, field, field.substr(1), 'x', extents);
    // Letter form: the letters present must be a suffix of "dhw", in order.
    static constexpr std::string_view letters = "dhw";
    size_t pos = 0;
    size_t expected = std::string_view::npos;
    while (pos < field.size()) {
      const size_t letter = letters.find(field[pos]);
      if (letter == std::string_view::npos ||
          (expected != std::string_view::npos && letter != expected))
        break;
      size_t end = pos + 1;
      if (end < field.size() && field[end] == '-') ++end;  // syntax only, as in the i<...> form
      while (end < field.size() && field[end] >= '0' && field[end] <= '9') ++end;
      auto v = parse_int(field.substr(pos + 1, end - pos - 1));
      if (!v) break;
      extents.push_back(*v);
      expected = letter + 1;
      pos = end;
    }
    if (pos != field.size() || extents.empty() || expected != letters.size())
      return fail(3, field,
                  "expected the spatial extents as w<W>, h<H>w<W>, d<D>h<H>w<W> or i<d1>x<d2>x...");
    return Ok{};
  }

  Status parse_list(size_t f, std::string_view field, std::string_view body, char separator,
                    std::vector<int64_t>& out) {
    for (std::string_view item : split(body, separator)) {
      auto v = parse_int(item);
      if (!v) return fail(f, field, fmt::format("'{}' is not an integer", item));
      out.push_back(*v);
    }
    return Ok{};
  }

  Error fail(size_t field_index, std::string_view field, std::string_view rule) const {
    return Error{
        fmt::format("problem string '{}': field {} '{}': {}", text_, field_index + 1, field, rule)};
  }

  std::string_view text_;
};

std::string join_axes(const Problem& p, int64_t Axis::*member) {
  std::vector<int64_t> values;
  for (const Axis& a : p.axes) values.push_back(a.*member);
  return fmt::format("{}", fmt::join(values, "x"));
}

}  // namespace

Result<Problem> parse_problem(std::string_view text) { return Parser(text).run(); }

std::string format_problem(const Problem& p) {
  std::string s =
      fmt::format("{}:{}:n{}c{}:", op_name(p.op), dtype_name(p.dtype), p.batch, p.channels);
  if (p.axes.size() >= 1 && p.axes.size() <= 3) {
    constexpr std::string_view letters = "dhw";
    const size_t first = letters.size() - p.axes.size();
    for (size_t i = 0; i < p.axes.size(); ++i)
      s += fmt::format("{}{}", letters[first + i], p.axes[i].extent);
  } else {
    s += "i" + join_axes(p, &Axis::extent);
  }
  s += ":k" + join_axes(p, &Axis::kernel) + ":s" + join_axes(p, &Axis::stride);
  bool dilated = false;
  for (const Axis& a : p.axes) dilated = dilated || a.dilation != 1;
  if (dilated) s += ":dl" + join_axes(p, &Axis::dilation);
  s += ":pb" + join_axes(p, &Axis::pad_begin) + ":pe" + join_axes(p, &Axis::pad_end);
  if (p.divisor == Divisor::override_value)
    s += fmt::format(":override={}", p.divisor_override);
  else if (p.op == Op::avg || p.divisor != Divisor::exclude)
    s += fmt::format(":{}", divisor_name(p.divisor));
  s += fmt::format(":{}", rounding_name(p.rounding));
  const Problem defaults;
  if (p.bias != defaults.bias) s += fmt::format(":bias={}", p.bias);
  if (p.empty != defaults.empty) s += fmt::format(":empty={}", empty_window_name(p.empty));
  // Fields that do not apply to the op or dtype are not written (canonical_problem).
  if (p.op == Op::max && p.nan != defaults.nan) s += fmt::format(":nan={}", nan_policy_name(p.nan));
  if (p.op == Op::avg && !is_float(p.dtype) && p.int_rounding != defaults.int_rounding)
    s += fmt::format(":round={}", int_rounding_name(p.int_rounding));
  if (p.input_zp != defaults.input_zp) s += fmt::format(":input_zp={}", p.input_zp);
  if (p.output_zp != defaults.output_zp) s += fmt::format(":output_zp={}", p.output_zp);
  if (p.indices != defaults.indices) s += fmt::format(":idx={}", indices_name(p.indices));
  if (p.index_order != defaults.index_order)
    s += fmt::format(":order={}", index_order_name(p.index_order));
  if (p.index_axis != defaults.index_axis) s += fmt::format(":idxaxis={}", p.index_axis);
  if (p.max_start != defaults.max_start) s += fmt::format(":start={}", max_start_name(p.max_start));
  if (canonical_problem(p).zeros != defaults.zeros)
    s += fmt::format(":zeros={}", zeros_name(p.zeros));
  if (canonical_problem(p).subnormals != defaults.subnormals)
    s += fmt::format(":subnormals={}", subnormals_name(p.subnormals));
  if (canonical_problem(p).sums != defaults.sums) s += fmt::format(":sums={}", sums_name(p.sums));
  return s;
}

}  // namespace poolspec
