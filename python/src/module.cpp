// poolspec._poolspec: the core library for Python (docs/python.md). The spec (problems, shapes,
// exact evaluation, explanations) and the linked-in checks, on NumPy arrays; poolspec/__init__.py
// gives it its Python face (keyword problems, tensors, result objects, assert_matches).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework_comparison.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/engine.hpp"
#include "poolspec/engine_check.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/check.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"
#include "poolspec/xs3/operator.hpp"

namespace py = pybind11;

namespace poolspec::python {
namespace {

// Bad input, as the command line words it (the attribute, its value, the rule): raised in Python
// as poolspec.Error, a ValueError.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T value_or_raise(Result<T> r, const std::string& context = "") {
  if (!r) throw BadInput(context.empty() ? r.error().message : context + ": " + r.error().message);
  return std::move(*r);
}

// A resolved problem with how its framework's tensors map onto the spec's (N, C, d1..dn).
struct PyProblem {
  Problem problem;
  Framing framing;
  std::string frontend = "problem string";
  std::string operator_name;
  ShapeInfo shape;
  std::optional<Xs3Operator> xs3;  // an XS3 (lib_nn) operator's problem: the spec's meaning of it
};

PyProblem resolved(Problem p, Framing framing, std::string frontend, std::string operator_name) {
  ShapeInfo shape = value_or_raise(infer_shape(p));
  if (framing.input_shape.empty()) framing.input_shape = shape.input_shape;
  return {std::move(p),     std::move(framing), std::move(frontend), std::move(operator_name),
          std::move(shape), std::nullopt};
}

PyProblem problem_from_string(const std::string& text) {
  Problem p = value_or_raise(parse_problem(text));  // its message quotes the string
  return resolved(std::move(p), {}, "problem string", "");
}

PyProblem problem_from_framework(const std::string& framework, const std::string& attributes,
                                 const std::string& op, const std::vector<int64_t>& input_shape,
                                 const std::string& dtype, int opset) {
  const Framework f = value_or_raise(parse_framework(framework));
  FrontendInput in;
  if (op == "avg" || op == "global_avg")
    in.op = Op::avg;
  else if (op == "max" || op == "global_max")
    in.op = Op::max;
  else
    throw BadInput(fmt::format("op={}: must be avg, max, global_avg or global_max", op));
  in.global = op.rfind("global_", 0) == 0;
  const std::optional<DType> d = parse_dtype(dtype);
  if (!d)
    throw BadInput(fmt::format("dtype={}: must be f64, f32, f16, bf16, i32, i8 or u8", dtype));
  in.dtype = *d;
  in.input_shape = input_shape;
  if (opset < 0) throw BadInput(fmt::format("opset={}: opsets are numbered from 1", opset));
  in.version = opset;
  Frontend fe = value_or_raise(from_framework(f, attributes, in));
  return resolved(std::move(fe.problem), std::move(fe.framing), std::string(framework_name(f)),
                  std::move(fe.operator_name));
}

// An XS3 operator on an (H, W, C) int8 image, as `poolspec run --xs3` takes it.
PyProblem problem_from_xs3(const std::string& attributes, const std::vector<int64_t>& hwc) {
  Xs3Frontend f = value_or_raise(from_xs3(attributes, hwc));
  const char* kind = f.op.kind == Xs3Operator::Kind::avgpool2d_global ? "avgpool2d_global"
                     : f.op.kind == Xs3Operator::Kind::avgpool2d      ? "avgpool2d"
                                                                      : "maxpool2d";
  PyProblem p =
      resolved(std::move(f.problem), std::move(f.framing), "xs3", fmt::format("lib_nn {}", kind));
  p.xs3 = f.op;
  return p;
}

std::vector<int64_t> framework_output_shape(const PyProblem& p) {
  return to_framework_shape(p.framing, p.shape.output_shape);
}

// The NumPy dtype a problem's tensors are given in: bf16 as its 16 bits (uint16 or int16).
bool dtype_matches(DType d, const py::dtype& given) {
  switch (d) {
    case DType::f64: return given.is(py::dtype::of<double>());
    case DType::f32: return given.is(py::dtype::of<float>());
    case DType::f16: return given.is(py::dtype("float16"));
    case DType::bf16:
      return given.is(py::dtype::of<uint16_t>()) || given.is(py::dtype::of<int16_t>());
    case DType::i32: return given.is(py::dtype::of<int32_t>());
    case DType::i8: return given.is(py::dtype::of<int8_t>());
    case DType::u8: return given.is(py::dtype::of<uint8_t>());
  }
  return false;
}

py::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::f64: return py::dtype::of<double>();
    case DType::f32: return py::dtype::of<float>();
    case DType::f16: return py::dtype("float16");
    case DType::bf16: return py::dtype::of<uint16_t>();
    case DType::i32: return py::dtype::of<int32_t>();
    case DType::i8: return py::dtype::of<int8_t>();
    case DType::u8: return py::dtype::of<uint8_t>();
  }
  return py::dtype::of<float>();
}

// Checks an array against the shape the framework gives it, and says how its bytes are laid
// out: row-major ("channels_first" in poolspec's Layout, for a framework whose logical order is
// (N, C, d...)), or, for such a framework, channels-last storage (a PyTorch channels_last
// tensor); nullopt for any other strides (the caller makes a row-major copy).
std::optional<Layout> storage_layout(const py::array& a, const std::vector<int64_t>& shape,
                                     DType dtype, const std::string& name, bool channels_last) {
  if (!dtype_matches(dtype, a.dtype()))
    throw BadInput(fmt::format(
        "{}: dtype {}, the problem's is {}{}", name, std::string(py::str(a.dtype())),
        dtype_name(dtype), dtype == DType::bf16 ? " (given as its bits, uint16 or int16)" : ""));
  std::vector<int64_t> given(a.shape(), a.shape() + a.ndim());
  if (given != shape)
    throw BadInput(fmt::format("{}: shape ({}), the problem's is ({})", name, fmt::join(given, ","),
                               fmt::join(shape, ",")));
  const auto itemsize = static_cast<int64_t>(a.itemsize());
  const auto strides_of = [&](const std::vector<size_t>& order) {  // innermost first
    std::vector<int64_t> s(shape.size());
    int64_t step = itemsize;
    for (size_t axis : order) {
      s[axis] = step;
      step *= shape[axis];
    }
    return s;
  };
  std::vector<size_t> row_major(shape.size());
  std::iota(row_major.rbegin(), row_major.rend(), 0);
  const auto matches = [&](const std::vector<int64_t>& want) {
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] > 1 && a.strides(static_cast<py::ssize_t>(i)) != want[i]) return false;
    return true;
  };
  if (matches(strides_of(row_major)))
    return channels_last ? Layout::channels_last : Layout::channels_first;
  if (!channels_last && shape.size() >= 3) {  // C fastest, then the spatial axes, then N
    std::vector<size_t> order{1};
    for (size_t i = shape.size() - 1; i >= 2; --i) order.push_back(i);
    order.push_back(0);
    if (matches(strides_of(order))) return Layout::channels_last;
  }
  return std::nullopt;
}

py::array row_major_copy(const py::array& a) {
  return py::array::ensure(a, py::array::c_style | py::array::forcecast);
}

// An array (its dtype and shape checked, under `name`) as the framework's own tensor: its
// elements in row-major order over `shape`, before any framing.
Tensor framework_tensor(const py::array& a, const std::vector<int64_t>& shape, DType dtype,
                        const std::string& name) {
  const bool row_major = storage_layout(a, shape, dtype, name, false) == Layout::channels_first;
  const py::array bytes = row_major ? a : row_major_copy(a);
  return from_storage(
      dtype, shape, Layout::channels_first,
      {static_cast<const std::byte*>(bytes.data()), static_cast<size_t>(bytes.nbytes())});
}

// Whether the framework's tensors are the spec's but for the order of their axes: then the
// linked-in checker reads them where they are.
bool axes_reordered_only(const Framing& framing) {
  return framing.batch_axis && !crops(framing) && !has_holes(framing);
}

// An input or output array as a spec-order tensor (N, C, d...). A framework input may be longer
// than the spec's on an axis (oneDNN's negative right padding, XS3's start: `input` true) and
// is cropped; an XS3 image has no batch axis.
Tensor spec_tensor(const PyProblem& p, const py::array& a,
                   const std::vector<int64_t>& framework_shape, const std::string& name,
                   bool input) {
  const DType dtype = p.problem.dtype;
  const Framing framing = input ? p.framing : output_framing(p.framing, framework_shape);
  if (!axes_reordered_only(framing))
    return to_spec_layout(framing, framework_tensor(a, framework_shape, dtype, name));
  std::optional<Layout> layout =
      storage_layout(a, framework_shape, dtype, name, p.framing.channels_last);
  const py::array bytes = layout ? a : row_major_copy(a);
  if (!layout) layout = p.framing.channels_last ? Layout::channels_last : Layout::channels_first;
  const std::span<const std::byte> span(static_cast<const std::byte*>(bytes.data()),
                                        static_cast<size_t>(bytes.nbytes()));
  std::vector<int64_t> spec_shape = framework_shape;  // (N, d..., C) -> (N, C, d...)
  if (p.framing.channels_last) {
    spec_shape = {framework_shape.front(), framework_shape.back()};
    spec_shape.insert(spec_shape.end(), framework_shape.begin() + 1, framework_shape.end() - 1);
  }
  return from_storage(dtype, spec_shape, *layout, span);
}

py::array numpy_of(const PyProblem& p, const Tensor& spec) {
  const Tensor t = to_framework_layout(p.framing, spec);
  const std::vector<std::byte> bytes = to_storage(t, Layout::channels_first);
  py::array out(numpy_dtype(t.dtype), std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
  std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

py::array indices_of(const PyProblem& p, const std::vector<int64_t>& spec_indices) {
  Tensor t{DType::f64, p.shape.output_shape, {}};
  t.values.assign(spec_indices.begin(), spec_indices.end());
  const Tensor f = to_framework_layout(p.framing, t);
  py::array_t<int64_t> out(std::vector<py::ssize_t>(f.shape.begin(), f.shape.end()));
  int64_t* o = out.mutable_data();
  for (size_t i = 0; i < f.values.size(); ++i) o[i] = static_cast<int64_t>(f.values[i]);
  return out;
}

// The sizes a caller allows (keyword arguments of the Python functions, the command line's
// limits by other names), checked before any work: the tensors' elements and the evaluation's
// tap visits (ShapeInfo::tap_visits).
struct Limits {
  int64_t max_elements, max_tap_visits;
};

void check_limits(const PyProblem& p, const Limits& limits) {
  if (limits.max_elements < 1 || limits.max_tap_visits < 1)
    throw BadInput(fmt::format("max_elements={}, max_tap_visits={}: must be 1 or more",
                               limits.max_elements, limits.max_tap_visits));
  for (const auto& [what, elements, shape] :
       {std::tuple{"input", p.shape.input_elements, &p.shape.input_shape},
        std::tuple{"output", p.shape.output_elements, &p.shape.output_shape}})
    if (elements > limits.max_elements)
      throw BadInput(
          fmt::format("the {} ({}) has {} elements, over the limit of {} "
                      "(max_elements= raises it)",
                      what, fmt::join(*shape, "x"), elements, limits.max_elements));
  if (p.shape.tap_visits > limits.max_tap_visits)
    throw BadInput(fmt::format(
        "evaluating it takes about {} tap visits ({} outputs, each classifying its kernel's taps "
        "on every axis and visiting those inside the input), over the limit of {} "
        "(max_tap_visits= raises it)",
        p.shape.tap_visits, p.shape.output_elements, limits.max_tap_visits));
}

py::tuple evaluate_array(const PyProblem& p, const py::array& x, const Limits& limits) {
  check_limits(p, limits);
  const Tensor input = spec_tensor(p, x, p.framing.input_shape, "x", true);
  Result<Output> out = Error{""};
  {
    py::gil_scoped_release unlocked;  // the exact evaluation holds no Python object
    out = evaluate(p.problem, input);
  }
  const Output o = value_or_raise(std::move(out));
  return py::make_tuple(numpy_of(p, o.values), o.indices.empty()
                                                   ? py::object(py::none())
                                                   : py::object(indices_of(p, o.indices)));
}

// The lib_nn operator itself (the bit-exact XS3 model), on the image.
py::array run_xs3_array(const PyProblem& p, const py::array& x, const Limits& limits) {
  if (!p.xs3)
    throw BadInput(fmt::format("problem {}: not an XS3 operator's (poolspec.problem(xs3=...))",
                               format_problem(p.problem)));
  check_limits(p, limits);
  const Tensor image = framework_tensor(x, p.framing.input_shape, DType::i8, "x");
  Result<Tensor> out = Error{""};
  {
    py::gil_scoped_release unlocked;
    out = xs3::run_operator(*p.xs3, image);
  }
  const Tensor o = value_or_raise(std::move(out));
  const std::vector<std::byte> stored = to_storage(o, Layout::channels_first);
  py::array result(py::dtype::of<int8_t>(),
                   std::vector<py::ssize_t>(o.shape.begin(), o.shape.end()));
  std::memcpy(result.mutable_data(), stored.data(), stored.size());
  return result;
}

py::dict explain_array(const PyProblem& p, const py::array& x, const std::vector<int64_t>& at,
                       int64_t max_taps, int64_t max_elements) {
  // Every tap of the window is listed: their number is checked before any is.
  if (max_taps < 1) throw BadInput(fmt::format("max_taps={}: must be 1 or more", max_taps));
  if (max_elements < 1)
    throw BadInput(fmt::format("max_elements={}: must be 1 or more", max_elements));
  // The Problem's input is built whole, and may be larger than x (StableHLO's holes).
  if (p.shape.input_elements > max_elements)
    throw BadInput(fmt::format(
        "the problem's input ({}) has {} elements, over the limit of {} (max_elements= raises it)",
        fmt::join(p.shape.input_shape, "x"), p.shape.input_elements, max_elements));
  int64_t window_taps = 1;
  std::vector<int64_t> kernel;
  for (const Axis& a : p.problem.axes) {
    kernel.push_back(a.kernel);
    window_taps = a.kernel > max_taps / window_taps ? max_taps + 1 : window_taps * a.kernel;
  }
  if (window_taps > max_taps)
    throw BadInput(
        fmt::format("the window has more than {} taps (kernel {}), the most explain "
                    "lists (max_taps= raises it)",
                    max_taps, fmt::join(kernel, "x")));
  const std::vector<int64_t> out_shape = framework_output_shape(p);
  if (at.size() != out_shape.size())
    throw BadInput(fmt::format("at=({}): {} coordinates; the output has {} axes ({})",
                               fmt::join(at, ","), at.size(), out_shape.size(),
                               fmt::join(out_shape, "x")));
  for (size_t i = 0; i < at.size(); ++i)
    if (at[i] < 0 || at[i] >= out_shape[i])
      throw BadInput(fmt::format("at[{}]={}: must be in [0, {}) (the output is {})", i, at[i],
                                 out_shape[i], fmt::join(out_shape, "x")));
  const Tensor input = spec_tensor(p, x, p.framing.input_shape, "x", true);
  const Explanation e =
      value_or_raise(explain(p.problem, input, to_spec_coordinate(p.framing, at)));
  py::list taps;
  for (const Tap& t : e.taps) {
    py::dict tap;
    tap["offset"] = t.offset;
    const FrameworkTap in_framework = framework_tap(p.framing, t);
    tap["coordinate"] = in_framework.coordinate;
    tap["kind"] = in_framework.kind;
    tap["value"] = t.value ? py::object(py::float_(*t.value)) : py::object(py::none());
    taps.append(tap);
  }
  py::dict d;
  d["output_coordinate"] = to_framework_coordinate(p.framing, e.output_coordinate);
  d["taps"] = taps;
  d["in_bounds"] = e.in_bounds;
  d["in_padded_extent"] = e.in_padded_extent;
  d["divisor"] = e.divisor ? py::object(py::int_(*e.divisor)) : py::object(py::none());
  d["exact_value"] = e.exact_value;
  d["result"] = e.result;
  d["index"] = e.index ? py::object(py::int_(*e.index)) : py::object(py::none());
  d["rule"] = e.rule;
  return d;
}

// A declared accumulation: backend.h's fields by name, each of its type, then their ranges.
poolspec_accumulation accumulation_from(const py::dict& a) {
  poolspec_accumulation acc{POOLSPEC_EXACT_SUMS, 0, 0, 0};
  const auto integer = [](const std::string& key, const py::handle& value, int64_t low,
                          int64_t high) {
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
      throw BadInput(
          fmt::format("accumulation.{}={}: must be an integer", key, std::string(py::repr(value))));
    const auto v = value.cast<py::int_>();
    if (v < py::int_(low) || v > py::int_(high))
      throw BadInput(fmt::format("accumulation.{}={}: must be {}..{}", key,
                                 std::string(py::str(value)), low, high));
    return value.cast<int64_t>();
  };
  for (const auto& [key, value] : a) {
    const std::string k = py::str(key);
    if (k == "sum_format") {
      const std::string f = py::str(value);
      if (!py::isinstance<py::str>(value) ||
          (f != "exact" && f != "f64" && f != "f32" && f != "f16"))
        throw BadInput(fmt::format("accumulation.sum_format={}: must be exact, f64, f32 or f16",
                                   std::string(py::repr(value))));
      acc.sum_format = f == "exact" ? POOLSPEC_EXACT_SUMS
                       : f == "f64" ? POOLSPEC_F64
                       : f == "f32" ? POOLSPEC_F32
                                    : POOLSPEC_F16;
    } else if (k == "extra_operations") {
      acc.extra_operations = static_cast<int32_t>(integer(k, value, 0, 16));
    } else if (k == "output_ulps") {
      if (!(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) ||
          py::isinstance<py::bool_>(value))
        throw BadInput(fmt::format("accumulation.output_ulps={}: must be a number in 0..4",
                                   std::string(py::repr(value))));
      acc.output_ulps = value.cast<double>();
    } else if (k == "integer_units") {
      acc.integer_units = integer(k, value, 0, 1);
    } else {
      throw BadInput(
          fmt::format("accumulation.{}: unknown; the fields are sum_format, "
                      "extra_operations, output_ulps and integer_units",
                      k));
    }
  }
  // A declaration is validated, never trusted: a wide one would pass anything.
  if (std::string e = accumulation_problem(acc); !e.empty()) throw BadInput(e);
  return acc;
}

py::dict mismatch_dict(const PyProblem& p, const ElementMismatch& m) {
  py::dict d;
  d["coordinate"] = to_framework_coordinate(p.framing, m.coordinate);
  d["expected"] = m.expected;
  d["got"] = m.got;
  d["error"] = m.error;
  d["allowed"] = m.allowed;
  d["error_ulps"] = m.error_ulps;
  d["expected_index"] = m.expected_index;
  d["got_index"] = m.got_index;
  return d;
}

// Checks `y` (and `indices`) against the spec for input `x`. samples -1: every element against
// the spec's exact evaluation (a float average within the declared bound alone: "exact" is bit
// for bit). samples 0: every element, and samples > 0: that many (half of them on the border),
// by the linked-in checker, reading the arrays where they are when they are in one of the spec's
// layouts, within the declared bound plus the reference engine's own rounding (its expected
// values are not exact); a mismatch found so is followed by the exact comparison, which counts
// every one.
py::dict check_arrays(const PyProblem& p, const py::array& x, const py::array& y,
                      const std::optional<py::array>& indices, const py::dict& accumulation,
                      int64_t samples, uint64_t seed, const Limits& limits) {
  if (samples < -1)
    throw BadInput(fmt::format("sample={}: must be 0 (every element) or more", samples));
  check_limits(p, limits);  // the exact comparison evaluates the whole problem
  const poolspec_accumulation acc = accumulation_from(accumulation);
  if (std::string e = accumulation_problem(acc, p.problem); !e.empty()) throw BadInput(e);
  const ErrorBound bound = bound_of(acc, p.problem, "caller");
  const bool wants_indices = p.problem.op == Op::max && p.problem.indices != Indices::none;
  if (indices && !wants_indices)
    throw BadInput("indices: the problem has no indices output (idx= in its problem string)");
  if (!indices && wants_indices)
    throw BadInput(
        fmt::format("indices: required: the problem has an indices output (idx={}); "
                    "give the implementation's, or check a problem without idx=",
                    p.problem.indices == Indices::plane ? "plane" : "tensor"));
  const std::vector<int64_t> out_shape = framework_output_shape(p);
  std::optional<Layout> in_layout =
      storage_layout(x, p.framing.input_shape, p.problem.dtype, "x", p.framing.channels_last);
  std::optional<Layout> out_layout =
      storage_layout(y, out_shape, p.problem.dtype, "y", p.framing.channels_last);
  std::optional<py::array_t<int64_t>> idx;
  if (indices) {
    if (!indices->dtype().is(py::dtype::of<int64_t>()))
      throw BadInput(
          fmt::format("indices: dtype {}, must be int64", std::string(py::str(indices->dtype()))));
    std::vector<int64_t> given(indices->shape(), indices->shape() + indices->ndim());
    if (given != out_shape)
      throw BadInput(fmt::format("indices: shape ({}), the output's is ({})", fmt::join(given, ","),
                                 fmt::join(out_shape, ",")));
    idx = py::array_t<int64_t>(*indices);
  }
  py::dict result;
  result["problem"] = format_problem(p.problem);
  result["bound"] =
      bound.exact ? (bound.integer_units == 0
                         ? std::string("exact")
                         : fmt::format("exact; integer averages within {}", bound.integer_units))
                  : bound.accumulation;
  std::optional<ElementMismatch> first;
  int64_t checked = 0;
  // The fast path reads the caller's buffers where they are: x and y in one of the spec's
  // layouts, and the indices stored as y is.
  const bool in_place =
      samples >= 0 && axes_reordered_only(p.framing) && in_layout && out_layout &&
      *in_layout == *out_layout &&
      (!idx || std::equal(idx->strides(), idx->strides() + idx->ndim(), y.strides(),
                          [&](py::ssize_t a, py::ssize_t b) {
                            return a / static_cast<py::ssize_t>(sizeof(int64_t)) ==
                                   b / y.itemsize();
                          }));
  if (in_place) {
    reference::CheckOptions options;
    options.samples = samples;
    options.rate = 1;
    options.seed = seed;
    options.bound = bound;
    reference::Checker checker(options);
    Result<std::optional<ElementMismatch>> r = Error{""};
    {
      py::gil_scoped_release unlocked;  // reads the buffers, holds no Python object
      r = checker.check(p.problem, *in_layout, static_cast<const std::byte*>(x.data()),
                        static_cast<const std::byte*>(y.data()), idx ? idx->data() : nullptr);
    }
    first = value_or_raise(std::move(r));
    checked = checker.stats().checked_elements;
  }
  if (!in_place || first) {
    // The whole comparison, on spec-order copies: every mismatch counted, the first few kept.
    const Tensor input = spec_tensor(p, x, p.framing.input_shape, "x", true);
    Output got{spec_tensor(p, y, out_shape, "y", false), {}};
    if (idx) {
      const py::array_t<int64_t, py::array::c_style | py::array::forcecast> row(*idx);
      Tensor t{DType::f64, out_shape, std::vector<double>(row.data(), row.data() + row.size())};
      const Tensor spec = to_spec_layout(output_framing(p.framing, out_shape), t);
      got.indices.assign(spec.values.begin(), spec.values.end());
    }
    Result<EngineComparison> c = Error{""};
    {
      py::gil_scoped_release unlocked;
      Result<Output> expected = evaluate(p.problem, input);
      c = expected ? compare_output(p.problem, input, *expected, got, bound, 5)
                   : Result<EngineComparison>(expected.error());
    }
    const EngineComparison comparison = value_or_raise(std::move(c));
    checked = comparison.elements;
    py::list mismatches;
    for (const ElementMismatch& m : comparison.first) mismatches.append(mismatch_dict(p, m));
    result["mismatches"] = mismatches;
    result["mismatch_count"] = comparison.mismatches;
    result["ok"] = comparison.passed();
    result["text"] =
        comparison.passed() ? std::string() : comparison_text(p.problem, comparison, bound);
  } else {
    result["mismatches"] = py::list();
    result["mismatch_count"] = 0;
    result["ok"] = true;
    result["text"] = std::string();
  }
  result["checked_elements"] = checked;
  return result;
}

py::dict shape_dict(const PyProblem& p) {
  py::dict d;
  d["problem"] = format_problem(p.problem);
  d["input_shape"] = p.framing.input_shape;
  d["output_shape"] = framework_output_shape(p);
  std::vector<int64_t> pb, pe;
  for (const Axis& a : p.problem.axes) pb.push_back(a.pad_begin), pe.push_back(a.pad_end);
  d["pads_begin"] = pb;
  d["pads_end"] = pe;
  if (p.shape.empty_window) {
    py::dict w;
    w["axis"] = p.shape.empty_window->axis;
    w["index"] = p.shape.empty_window->index;
    w["start"] = p.shape.empty_window->start;
    d["empty_window"] = w;
  } else {
    d["empty_window"] = py::none();
  }
  d["valid"] = static_cast<bool>(validate(p.problem));
  return d;
}

// The problem, given in one framework's terms, under every framework's rules that can express
// it (what `poolspec diff` prints): the source first, then one row per translation, each with
// its output (spec order, (N, C, o...)) and how it compares with the source's.
py::list diff_frameworks(const std::string& framework, const std::string& attributes,
                         const std::string& op, const std::vector<int64_t>& input_shape,
                         const std::string& dtype, int opset, const std::optional<py::array>& x,
                         const Limits& limits) {
  const Framework f = value_or_raise(parse_framework(framework));
  cli::ProblemOptions options;
  if (limits.max_elements < 1 || limits.max_tap_visits < 1)
    throw BadInput(fmt::format("max_elements={}, max_tap_visits={}: must be 1 or more",
                               limits.max_elements, limits.max_tap_visits));
  options.max_elements = limits.max_elements;
  options.max_tap_visits = limits.max_tap_visits;
  options.attributes[f] = attributes;
  options.op = op;
  options.input_shape = fmt::format("{}", fmt::join(input_shape, ","));
  options.dtype = dtype;
  options.opset = opset;
  std::optional<Tensor> given;
  if (x) {
    // The framework's layout, as given: the front-end's framing is applied by the comparison.
    const PyProblem p =
        problem_from_framework(framework, attributes, op, input_shape, dtype, opset);
    given = framework_tensor(*x, p.framing.input_shape, p.problem.dtype, "x");
  }
  const cli::ResolvedProblem source =
      value_or_raise(cli::resolve_problem(options, given ? &*given : nullptr));
  const Intent intent = intent_of(Frontend{source.problem, source.framing, source.operator_name});
  const Tensor input =
      value_or_raise(cli::comparison_input(source, intent, given ? &*given : nullptr));
  Translation own{f, std::string(framework_name(f)) + (opset ? fmt::format("@{}", opset) : ""),
                  attributes,
                  value_or_raise(cli::frontend_input(options, given ? &*given : nullptr)), ""};
  std::vector<cli::FrameworkRow> rows;
  {
    py::gil_scoped_release unlocked;
    rows = cli::compare_frameworks(own, intent, input, options);
  }
  if (!rows[0].refusal.empty()) {
    // The command line's words for the limits, in the keywords' names.
    std::string why = rows[0].refusal;
    for (const auto& [option, keyword] : {std::pair{"--max-tap-visits", "max_tap_visits="},
                                          std::pair{"--max-elements", "max_elements="}})
      if (const size_t at = why.find(option); at != std::string::npos)
        why.replace(at, std::string_view(option).size(), keyword);
    throw BadInput(why);
  }
  py::list out;
  for (const cli::FrameworkRow& r : rows) {
    py::dict d;
    d["framework"] = r.translation.label;
    d["attributes"] = r.translation.attributes;
    d["expressible"] = r.refusal.empty();
    d["reason"] = r.refusal;
    // "invalid", "unpredictable", "defined", "beyond the model", or None where the framework
    // cannot express it
    d["verdict"] = r.verdict ? py::object(py::str(std::string(r.verdict->name()))) : py::none();
    d["unpredictable"] =
        r.verdict && r.verdict->kind == RuleVerdict::unpredictable ? r.verdict->why : std::string();
    d["operator"] = r.operator_name;
    d["problem"] = r.problem;
    d["output_shape"] = r.shape;
    py::array_t<double> values(static_cast<py::ssize_t>(r.values.size()));
    std::copy(r.values.begin(), r.values.end(), values.mutable_data());
    d["values"] = r.shape.empty() ? py::object(values) : py::object(values.reshape(r.shape));
    d["differing_outputs"] = r.differing;
    d["largest_difference"] = r.largest;
    d["first_difference"] = r.first_difference;
    out.append(d);
  }
  return out;
}

// The benchmark's yardstick (python/bench/check_overhead.py): the linked-in checker called from
// C++ on the same buffers, `repeats` times, with no Python in between; the seconds per call.
double linked_in_check_seconds(const PyProblem& p, const py::array& x, const py::array& y,
                               int64_t samples, int repeats) {
  const std::optional<Layout> layout =
      storage_layout(x, p.framing.input_shape, p.problem.dtype, "x", p.framing.channels_last);
  if (!layout || !axes_reordered_only(p.framing) ||
      storage_layout(y, framework_output_shape(p), p.problem.dtype, "y", p.framing.channels_last) !=
          layout)
    throw BadInput("x, y: not in one of the spec's layouts, both alike");
  reference::CheckOptions options;
  options.samples = samples;
  options.rate = 1;
  reference::Checker checker(options);
  py::gil_scoped_release unlocked;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i)
    (void)checker.check(p.problem, *layout, static_cast<const std::byte*>(x.data()),
                        static_cast<const std::byte*>(y.data()));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
         std::max(repeats, 1);
}

}  // namespace
}  // namespace poolspec::python

PYBIND11_MODULE(_poolspec, m) {
  using namespace poolspec::python;
  m.doc() = "poolspec's core: the executable specification of pooling (see the poolspec package)";
  py::register_exception<BadInput>(m, "Error", PyExc_ValueError);

  py::class_<PyProblem>(m, "Problem")
      .def_property_readonly("string",
                             [](const PyProblem& p) { return poolspec::format_problem(p.problem); })
      .def_property_readonly(
          "op",
          [](const PyProblem& p) {
            return std::string(p.problem.op == poolspec::Op::avg ? "avg" : "max");
          })
      .def_property_readonly(
          "dtype",
          [](const PyProblem& p) { return std::string(poolspec::dtype_name(p.problem.dtype)); })
      .def_property_readonly("input_shape",
                             [](const PyProblem& p) { return p.framing.input_shape; })
      .def_property_readonly("output_shape", &framework_output_shape)
      .def_property_readonly("channels_last",
                             [](const PyProblem& p) { return p.framing.channels_last; })
      .def_property_readonly("frontend", [](const PyProblem& p) { return p.frontend; })
      .def_property_readonly("operator_name", [](const PyProblem& p) { return p.operator_name; })
      .def_property_readonly("has_indices",
                             [](const PyProblem& p) {
                               return p.problem.op == poolspec::Op::max &&
                                      p.problem.indices != poolspec::Indices::none;
                             })
      .def("__str__", [](const PyProblem& p) { return poolspec::format_problem(p.problem); })
      .def("__repr__",
           [](const PyProblem& p) {
             return fmt::format("poolspec.Problem('{}')", poolspec::format_problem(p.problem));
           })
      .def("__eq__", [](const PyProblem& a, const PyProblem& b) {
        return a.problem == b.problem && a.framing == b.framing;
      });

  m.def("problem_from_string", &problem_from_string, py::arg("text"));
  m.def("problem_from_framework", &problem_from_framework, py::arg("framework"),
        py::arg("attributes"), py::arg("op"), py::arg("input_shape"), py::arg("dtype"),
        py::arg("opset"));
  m.def("problem_from_xs3", &problem_from_xs3, py::arg("attributes"), py::arg("input_shape"));
  m.def("shape", &shape_dict, py::arg("problem"));
  const auto limits = [](int64_t max_elements, int64_t max_tap_visits) {
    return Limits{max_elements, max_tap_visits};
  };
  m.def(
      "evaluate",
      [=](const PyProblem& p, const py::array& x, int64_t max_elements, int64_t max_tap_visits) {
        return evaluate_array(p, x, limits(max_elements, max_tap_visits));
      },
      py::arg("problem"), py::arg("x"), py::arg("max_elements"), py::arg("max_tap_visits"));
  m.def(
      "run_xs3",
      [=](const PyProblem& p, const py::array& x, int64_t max_elements, int64_t max_tap_visits) {
        return run_xs3_array(p, x, limits(max_elements, max_tap_visits));
      },
      py::arg("problem"), py::arg("x"), py::arg("max_elements"), py::arg("max_tap_visits"));
  m.def("explain", &explain_array, py::arg("problem"), py::arg("x"), py::arg("at"),
        py::arg("max_taps"), py::arg("max_elements"));
  m.def(
      "check",
      [=](const PyProblem& p, const py::array& x, const py::array& y,
          const std::optional<py::array>& indices, const py::dict& accumulation, int64_t samples,
          uint64_t seed, int64_t max_elements, int64_t max_tap_visits) {
        return check_arrays(p, x, y, indices, accumulation, samples, seed,
                            limits(max_elements, max_tap_visits));
      },
      py::arg("problem"), py::arg("x"), py::arg("y"), py::arg("indices"), py::arg("accumulation"),
      py::arg("samples"), py::arg("seed"), py::arg("max_elements"), py::arg("max_tap_visits"));
  m.def(
      "diff",
      [=](const std::string& framework, const std::string& attributes, const std::string& op,
          const std::vector<int64_t>& input_shape, const std::string& dtype, int opset,
          const std::optional<py::array>& x, int64_t max_elements, int64_t max_tap_visits) {
        return diff_frameworks(framework, attributes, op, input_shape, dtype, opset, x,
                               limits(max_elements, max_tap_visits));
      },
      py::arg("framework"), py::arg("attributes"), py::arg("op"), py::arg("input_shape"),
      py::arg("dtype"), py::arg("opset"), py::arg("x"), py::arg("max_elements"),
      py::arg("max_tap_visits"));
  m.def("linked_in_check_seconds", &linked_in_check_seconds, py::arg("problem"), py::arg("x"),
        py::arg("y"), py::arg("samples"), py::arg("repeats"));
  m.attr("__version__") = POOLSPEC_VERSION;
}
