#include "poolspec/backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec {

// backend.h numbers its enumerators as problem.hpp orders them.
static_assert(POOLSPEC_MAX == static_cast<int>(Op::max));
static_assert(POOLSPEC_U8 == static_cast<int>(DType::u8) &&
              POOLSPEC_I32 == static_cast<int>(DType::i32));
static_assert(POOLSPEC_CEIL_TORCH == static_cast<int>(Rounding::ceil_torch));
static_assert(POOLSPEC_OVERRIDE == static_cast<int>(Divisor::override_value));
static_assert(POOLSPEC_EMPTY_NEG_INF == static_cast<int>(EmptyWindow::neg_inf));
static_assert(POOLSPEC_NAN_IGNORE == static_cast<int>(NanPolicy::ignore));
static_assert(POOLSPEC_TOSA_DIVISION == static_cast<int>(IntRounding::tosa));
static_assert(POOLSPEC_INDICES_TENSOR == static_cast<int>(Indices::tensor));
static_assert(POOLSPEC_COLUMN_MAJOR == static_cast<int>(IndexOrder::column_major));
static_assert(POOLSPEC_MAX_FROM_LOWEST == static_cast<int>(MaxStart::lowest));
static_assert(POOLSPEC_ZEROS_EITHER == static_cast<int>(Zeros::either));
static_assert(POOLSPEC_SUBNORMALS_MAY_FLUSH == static_cast<int>(Subnormals::may_flush));
static_assert(POOLSPEC_SUMS_F32 == static_cast<int>(Sums::f32));

namespace {

template <class E>
Result<E> enum_field(const char* field, int32_t value, E last) {
  if (value < 0 || value > static_cast<int32_t>(last))
    return Error{fmt::format("{}={}: must be 0..{}", field, value, static_cast<int32_t>(last))};
  return static_cast<E>(value);
}

int64_t window_taps(const Problem& p) {
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  return taps;
}

void copy_text(const std::string& text, char* out, size_t size) {
  if (!out || size == 0) return;
  const size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

const EngineBackend& self_of(const poolspec_backend* b) {
  return *static_cast<const EngineBackend*>(b->context);
}

}  // namespace

Layout layout_of(const poolspec_problem& c) {
  return c.layout == POOLSPEC_NHWC ? Layout::channels_last : Layout::channels_first;
}

Result<CProblem> to_c_shape_question(const Problem& p, Layout layout) {
  if (p.axes.size() > POOLSPEC_MAX_SPATIAL)
    return Error{fmt::format("spatial rank {}: the backend ABI carries at most {} axes",
                             p.axes.size(), POOLSPEC_MAX_SPATIAL)};
  CProblem out;
  poolspec_problem& c = out.problem;
  c.op = static_cast<int32_t>(p.op);
  c.dtype = static_cast<int32_t>(p.dtype);
  c.batch = p.batch;
  c.channels = p.channels;
  c.spatial_rank = static_cast<int32_t>(p.axes.size());
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    c.axes[i] = {a.extent, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end, -1};
  }
  c.rounding = static_cast<int32_t>(p.rounding);
  c.divisor = static_cast<int32_t>(p.divisor);
  c.divisor_override = p.divisor_override;
  c.bias = p.bias;
  c.empty_window = static_cast<int32_t>(p.empty);
  c.nan_policy = static_cast<int32_t>(p.nan);
  c.int_rounding = static_cast<int32_t>(p.int_rounding);
  c.indices = static_cast<int32_t>(p.indices);
  c.index_order = static_cast<int32_t>(p.index_order);
  c.index_axis = p.index_axis;
  c.max_start = static_cast<int32_t>(p.max_start);
  c.input_zp = p.input_zp;
  c.output_zp = p.output_zp;
  // As backend.h states them: an integer problem's EQUAL and EXACT, an average's unordered zeros,
  // F32 sums on f16 and bf16 averages only.
  const Problem canonical = canonical_problem(p);
  c.zeros = static_cast<int32_t>(canonical.zeros);
  c.subnormals = static_cast<int32_t>(canonical.subnormals);
  c.sums = static_cast<int32_t>(canonical.sums);
  c.layout = layout == Layout::channels_last ? POOLSPEC_NHWC : POOLSPEC_NCHW;
  out.text = format_problem(p);
  c.text = out.text.c_str();
  return out;
}

Result<CProblem> to_c_problem(const Problem& p, Layout layout) {
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  Result<CProblem> out = to_c_shape_question(p, layout);
  if (!out) return out;
  for (size_t i = 0; i < p.axes.size(); ++i)
    out->problem.axes[i].output = shape->output_shape[i + 2];
  return out;
}

Result<Problem> from_c_problem(const poolspec_problem& c) {
  Problem p;
#define POOLSPEC_FIELD(target, field, last)     \
  {                                             \
    auto v = enum_field(#field, c.field, last); \
    if (!v) return v.error();                   \
    target = *v;                                \
  }
  POOLSPEC_FIELD(p.op, op, Op::max)
  POOLSPEC_FIELD(p.dtype, dtype, DType::u8)
  POOLSPEC_FIELD(p.rounding, rounding, Rounding::ceil_torch)
  POOLSPEC_FIELD(p.divisor, divisor, Divisor::override_value)
  POOLSPEC_FIELD(p.empty, empty_window, EmptyWindow::neg_inf)
  POOLSPEC_FIELD(p.nan, nan_policy, NanPolicy::ignore)
  POOLSPEC_FIELD(p.int_rounding, int_rounding, IntRounding::tosa)
  POOLSPEC_FIELD(p.indices, indices, Indices::tensor)
  POOLSPEC_FIELD(p.index_order, index_order, IndexOrder::column_major)
  POOLSPEC_FIELD(p.max_start, max_start, MaxStart::lowest)
  POOLSPEC_FIELD(p.zeros, zeros, Zeros::either)
  POOLSPEC_FIELD(p.subnormals, subnormals, Subnormals::may_flush)
  POOLSPEC_FIELD(p.sums, sums, Sums::f32)
#undef POOLSPEC_FIELD
  if (c.layout != POOLSPEC_NCHW && c.layout != POOLSPEC_NHWC)
    return Error{fmt::format("layout={}: must be 0 (nchw) or 1 (nhwc)", c.layout)};
  if (c.spatial_rank < 1 || c.spatial_rank > POOLSPEC_MAX_SPATIAL)
    return Error{
        fmt::format("spatial_rank={}: must be 1..{}", c.spatial_rank, POOLSPEC_MAX_SPATIAL)};
  p.batch = c.batch;
  p.channels = c.channels;
  for (int32_t i = 0; i < c.spatial_rank; ++i) {
    const poolspec_axis& a = c.axes[i];
    p.axes.push_back({a.extent, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end});
  }
  p.divisor_override = c.divisor_override;
  p.bias = c.bias;
  p.index_axis = c.index_axis;
  p.input_zp = c.input_zp;
  p.output_zp = c.output_zp;
  Result<ShapeInfo> shape = validated_shape(p);
  if (!shape) return shape.error();
  for (int32_t i = 0; i < c.spatial_rank; ++i)
    if (c.axes[i].output != shape->output_shape[static_cast<size_t>(i) + 2])
      return Error{fmt::format("axes[{}].output={}: the spec's output extent is {}", i,
                               c.axes[i].output, shape->output_shape[static_cast<size_t>(i) + 2])};
  return p;
}

std::string abi_versions_spoken() {
  return fmt::format("{}, {}, {}, {} and {}", POOLSPEC_BACKEND_ABI_VERSION_1,
                     POOLSPEC_BACKEND_ABI_VERSION_2, POOLSPEC_BACKEND_ABI_VERSION_3,
                     POOLSPEC_BACKEND_ABI_VERSION_4, POOLSPEC_BACKEND_ABI_VERSION);
}

// Version 5's `sums` is never a reason: it refuses only a declaration (accumulation_problem).
std::string abi_version_refuses(const poolspec_problem& c, uint32_t abi_version) {
  if (abi_version < POOLSPEC_BACKEND_ABI_VERSION_4 && c.zeros == POOLSPEC_ZEROS_ORDERED)
    return fmt::format("zeros=ordered needs ABI version 4; the backend declares version {}",
                       abi_version);
  if (abi_version >= POOLSPEC_BACKEND_ABI_VERSION_3) return "";
  if (c.input_zp != 0 || c.output_zp != 0)
    return fmt::format(
        "zero points (input_zp={}, output_zp={}) need ABI version 3; the backend "
        "declares version {}",
        c.input_zp, c.output_zp, abi_version);
  if (c.int_rounding == POOLSPEC_TOSA_DIVISION)
    return fmt::format("round=tosa needs ABI version 3; the backend declares version {}",
                       abi_version);
  return "";
}

std::string accumulation_problem(const poolspec_accumulation& a) {
  if (a.sum_format != POOLSPEC_EXACT_SUMS && a.sum_format != POOLSPEC_F32 &&
      a.sum_format != POOLSPEC_F64 && a.sum_format != POOLSPEC_F16)
    return fmt::format(
        "accumulation.sum_format={}: must be POOLSPEC_EXACT_SUMS ({}), POOLSPEC_F64 ({}), "
        "POOLSPEC_F32 ({}) or POOLSPEC_F16 ({})",
        a.sum_format, POOLSPEC_EXACT_SUMS, static_cast<int>(POOLSPEC_F64),
        static_cast<int>(POOLSPEC_F32), static_cast<int>(POOLSPEC_F16));
  if (a.extra_operations < 0 || a.extra_operations > 16)
    return fmt::format("accumulation.extra_operations={}: must be 0..16", a.extra_operations);
  if (!(a.output_ulps >= 0 && a.output_ulps <= 4))
    return fmt::format("accumulation.output_ulps={}: must be a number in 0..4", a.output_ulps);
  if (a.integer_units < 0 || a.integer_units > 1)
    return fmt::format("accumulation.integer_units={}: must be 0 or 1", a.integer_units);
  return "";
}

std::string accumulation_problem(const poolspec_accumulation& a, const Problem& p) {
  if (std::string e = accumulation_problem(a); !e.empty()) return e;
  if (p.op != Op::avg || !is_float(p.dtype)) return "";
  // The bound has no term for rounding the inputs into the sums' format: it must hold them.
  const auto narrower = [&](const char* format) {
    return fmt::format(
        "accumulation.sum_format=POOLSPEC_{} for an average of {} data: the bound assumes sums at "
        "least as wide as the data (it has no term for rounding the inputs)",
        format, dtype_name(p.dtype));
  };
  if (p.dtype == DType::f64 && a.sum_format == POOLSPEC_F32) return narrower("F32");
  if (p.dtype != DType::f16 && a.sum_format == POOLSPEC_F16) return narrower("F16");
  if (canonical_problem(p).sums == Sums::f32 && a.sum_format == POOLSPEC_F16)
    return fmt::format(
        "accumulation.sum_format=POOLSPEC_F16 for an average of {} data with sums=f32: the rules "
        "ask for sums of f32 or wider (TOSA's acc_type FP32)",
        dtype_name(p.dtype));
  return "";
}

ErrorBound bound_of(const poolspec_accumulation& a, const Problem& p, const std::string& backend) {
  ErrorBound bound;
  bound.integer_units = a.integer_units;
  if (p.op == Op::max || !is_float(p.dtype) || a.sum_format == POOLSPEC_EXACT_SUMS) return bound;
  const DType format = a.sum_format == POOLSPEC_F64   ? DType::f64
                       : a.sum_format == POOLSPEC_F16 ? DType::f16
                                                      : DType::f32;
  bound = sum_bound(
      format, window_taps(p) + a.extra_operations, a.output_ulps,
      fmt::format("{} declares {} sums, {} more rounding(s), {} ulp into {}", backend,
                  dtype_name(format), a.extra_operations, a.output_ulps, dtype_name(p.dtype)));
  bound.integer_units = a.integer_units;
  return bound;
}

poolspec_accumulation accumulation_of(const ErrorBound& bound, const Problem& p) {
  poolspec_accumulation a{POOLSPEC_EXACT_SUMS, 0, 0, bound.integer_units};
  if (bound.exact) return a;
  a.sum_format = bound.unit_roundoff >= std::ldexp(1.0, -11)   ? POOLSPEC_F16
                 : bound.unit_roundoff >= std::ldexp(1.0, -24) ? POOLSPEC_F32
                                                               : POOLSPEC_F64;
  a.extra_operations = static_cast<int32_t>(bound.operations - window_taps(p));
  a.output_ulps = bound.output_ulps;
  return a;
}

std::unique_ptr<EngineBackend> make_engine_backend(const Engine& engine, std::string version,
                                                   std::string rules) {
  auto b = std::make_unique<EngineBackend>();
  b->name = std::string(engine.name());
  b->version = std::move(version);
  b->rules = std::move(rules);
  b->engine = &engine;
  poolspec_backend& abi = b->abi;
  abi.abi_version = POOLSPEC_BACKEND_ABI_VERSION;
  abi.name = b->name.c_str();
  abi.version = b->version.c_str();
  abi.rules = b->rules.c_str();
  abi.accumulation = {POOLSPEC_EXACT_SUMS, 0, 0, 0};
  abi.context = b.get();
  abi.accumulation_for = [](const poolspec_backend* self, const poolspec_problem* c,
                            poolspec_accumulation* out) {
    Result<Problem> p = from_c_problem(*c);
    if (!p) return;
    *out = accumulation_of(self_of(self).engine->error_bound(*p, layout_of(*c)), *p);
  };
  abi.supports = [](const poolspec_backend* self, const poolspec_problem* c, char* reason,
                    size_t size) {
    Result<Problem> p = from_c_problem(*c);
    Status s = p ? self_of(self).engine->supports(*p, layout_of(*c)) : Status(p.error());
    if (s) return 1;
    copy_text(s.error().message, reason, size);
    return 0;
  };
  abi.run = [](const poolspec_backend* self, const poolspec_problem* c, const void* input,
               void* output, int64_t* indices, char* message, size_t size) {
    Result<Problem> p = from_c_problem(*c);
    if (!p) {
      copy_text(p.error().message, message, size);
      return 1;
    }
    const RunArgs args{static_cast<const std::byte*>(input), static_cast<std::byte*>(output),
                       indices, 1};
    Status s = self_of(self).engine->run(*p, layout_of(*c), args);
    if (s) return 0;
    copy_text(s.error().message, message, size);
    return 1;
  };
  return b;
}

Status check_backend(const poolspec_backend* b) {
  if (!b) return Error{"the entry point returned no backend"};
  if (!abi_version_known(b->abi_version))
    return Error{fmt::format("abi_version={}: this poolspec speaks versions {}", b->abi_version,
                             abi_versions_spoken())};
  if (!b->name || !*b->name) return Error{"name: a backend must have a name"};
  if (!b->rules)
    return Error{fmt::format("{}: rules must name the framework rules it claims", b->name)};
  if (!b->supports || !b->run)
    return Error{fmt::format("{}: supports and run must both be given", b->name)};
  return Ok{};
}

Status AbiEngine::supports(const Problem& p, Layout layout) const {
  Result<CProblem> c = to_c_problem(p, layout);
  if (!c) return c.error();
  if (std::string refused = abi_version_refuses(c->problem, backend_.abi_version); !refused.empty())
    return Error{std::move(refused)};
  char reason[512] = "";
  if (backend_.supports(&backend_, &c->problem, reason, sizeof reason) == 1) return Ok{};
  return Error{reason[0] ? std::string(reason) : std::string("refused (no reason given)")};
}

ErrorBound AbiEngine::error_bound(const Problem& p, Layout layout) const {
  poolspec_accumulation a = backend_.accumulation;
  if (backend_.accumulation_for) {
    Result<CProblem> c = to_c_problem(p, layout);
    if (c) backend_.accumulation_for(&backend_, &c->problem, &a);
  }
  return bound_of(a, p, backend_.name);
}

Status AbiEngine::run(const Problem& p, Layout layout, const RunArgs& args) const {
  Result<CProblem> c = to_c_problem(p, layout);
  if (!c) return c.error();
  if (std::string refused = abi_version_refuses(c->problem, backend_.abi_version); !refused.empty())
    return Error{std::move(refused)};
  char message[512] = "";
  if (backend_.run(&backend_, &c->problem, args.input, args.output, args.indices, message,
                   sizeof message) == 0)
    return Ok{};
  return Error{
      fmt::format("{}: {}", backend_.name, message[0] ? message : "run failed (no message)")};
}

}  // namespace poolspec
