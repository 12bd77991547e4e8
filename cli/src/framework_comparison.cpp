#include "framework_comparison.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command_support.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::cli {

namespace {

// The same result: both NaN, or equal and, for zeros, of one sign unless either rule set leaves
// the sign open (StableHLO's +0 where the first-value rule gives -0 is a difference).
bool same(double a, double b, bool zero_sign_open) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return a == b && (a != 0 || zero_sign_open || std::signbit(a) == std::signbit(b));
}

FrameworkRow evaluate_row(const Translation& t, const Tensor& spec_input,
                          const ProblemOptions& options) {
  FrameworkRow row{t, "", "", t.reason, {}, {}, false, -1, 0, "", std::nullopt};
  if (t.reason.ends_with(model_cannot_state))  // its rules accept it; the model cannot state it
    row.verdict = RuleVerdict{RuleVerdict::beyond_model, t.reason, ""};
  if (!t.reason.empty()) return row;
  Result<Frontend> f = from_framework(t.framework, t.attributes, t.input);
  if (!f) {
    row.refusal = f.error().message;
    row.verdict = verdict_of(t.framework, f);
    return row;
  }
  row.operator_name = f->operator_name;
  row.problem = format_problem(f->problem);
  row.zero_sign_open = f->problem.zeros == Zeros::either;
  if (Status s = check_output_size(f->problem, options); !s) {  // before evaluating it
    row.refusal = s.error().message;
    return row;
  }
  // The framework sees the input in its layout; its Problem takes it back (and crops).
  const Tensor framework_input = to_framework_layout(f->framing, spec_input);
  Result<Output> out = evaluate(f->problem, to_spec_layout(f->framing, framework_input));
  if (!out) {
    row.refusal = out.error().message;
    return row;
  }
  row.shape = out->values.shape;
  row.values = out->values.values;
  row.verdict = verdict_of(t.framework, f);
  return row;
}

void compare(FrameworkRow& row, const FrameworkRow& source, DType dtype) {
  if (!row.refusal.empty() || !source.refusal.empty()) return;
  row.differing = 0;
  if (row.shape != source.shape) {
    row.differing = static_cast<int64_t>(std::max(row.values.size(), source.values.size()));
    row.first_difference = fmt::format("output shape {} here, {} in the source",
                                       fmt::join(row.shape, "x"), fmt::join(source.shape, "x"));
    return;
  }
  for (size_t i = 0; i < row.values.size(); ++i) {
    if (same(row.values[i], source.values[i], row.zero_sign_open || source.zero_sign_open))
      continue;
    const double d = std::fabs(row.values[i] - source.values[i]);
    if (row.differing == 0)
      row.first_difference =
          fmt::format("at {}: {} here, {} in the source", coordinate_text(row.shape, i),
                      value_text(dtype, row.values[i]), value_text(dtype, source.values[i]));
    ++row.differing;
    if (!(d <= row.largest)) row.largest = d;  // NaN against a number: the largest is NaN
  }
}

}  // namespace

Result<Tensor> comparison_input(const ResolvedProblem& source, const Intent& intent,
                                const Tensor* given) {
  if (given) {
    // Undo the source's layout, crop and holes: channels-last back to first, nothing cropped,
    // no holes (each framework's row frames the input its own way).
    Framing full = source.framing;
    full.crop_end.assign(full.crop_end.size(), 0);
    full.crop_begin.assign(full.crop_begin.size(), 0);
    full.base_dilation.clear();
    return to_spec_layout(full, *given);
  }
  Result<int64_t> count = element_count(intent.shape);
  if (!count || *count > (int64_t{1} << 24))
    return Error{
        fmt::format("--input-shape: {} elements; without --input, the comparison evaluates a "
                    "ramp of at most 2^24 elements",
                    fmt::join(intent.shape, "x"))};
  std::vector<double> ramp;
  ramp.reserve(static_cast<size_t>(*count));
  for (int64_t i = 0; i < *count; ++i) {
    double v = static_cast<double>(i + 1);
    if (!is_float(intent.dtype))
      v = static_cast<double>(i % (int_max(intent.dtype) + 1));  // 0, 1, 2, ...
    ramp.push_back(v);
  }
  if (is_float(intent.dtype) && intent.dtype != DType::f64 && intent.dtype != DType::f32 &&
      *count > 256)
    return Error{
        "without --input, the ramp of a 16-bit float input must have at most 256 elements"};
  return make_tensor(intent.dtype, intent.shape, ramp);
}

std::vector<FrameworkRow> compare_frameworks(const Translation& own, const Intent& intent,
                                             const Tensor& spec_input,
                                             const ProblemOptions& options) {
  std::vector<FrameworkRow> rows{evaluate_row(own, spec_input, options)};
  if (!rows[0].refusal.empty()) return rows;
  rows[0].differing = 0;
  for (const Translation& t : translate(intent)) {
    FrameworkRow row = evaluate_row(t, spec_input, options);
    compare(row, rows[0], spec_input.dtype);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace poolspec::cli
