#include "judge.hpp"

#include <cstring>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/backend.hpp"

namespace poolspec::certify {

const Tensor* abs_sums_of(SpecValues& s, const Problem& p) {
  if (p.op != Op::avg || !is_float(p.dtype)) return nullptr;
  if (!s.abs_sums) {
    Result<Tensor> sums = window_abs_sums(p, s.input);
    if (!sums) return nullptr;
    s.abs_sums = std::move(*sums);
  }
  return &*s.abs_sums;
}

std::optional<ErrorBound> rules_bound(std::optional<Framework> rules, const Problem& p) {
  if (rules != Framework::stablehlo || p.op != Op::avg || !is_float(p.dtype)) return std::nullopt;
  // K terms summed in the element type in any order err by at most gamma(K - 1) sum|x| / d after
  // the division, and the division's rounding (relative u) adds at most u |y| (1 + gamma(K - 1)).
  // sum_bound(K) gives gamma(K) sum|x| / d, which holds both (gamma(K) >= gamma(K - 1) + u (1 +
  // gamma(K - 1)), and sum|x| / d >= |y|), plus half an ulp for the spec's own rounding of y.
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  ErrorBound b = sum_bound(
      p.dtype, taps, 0.5,
      fmt::format("StableHLO's rules: {} sums in any order, one division", dtype_name(p.dtype)));
  // StableHLO defines the sum while no partial sum overflows the element type.
  b.overflow_threshold = overflow_threshold(p.dtype);
  return b;
}

std::optional<Framework> label_framework(std::string_view label) {
  Result<Framework> f = parse_framework(label.substr(0, label.find('@')));
  if (!f) return std::nullopt;
  return *f;
}

namespace {

Output read_output(const Problem& p, Layout layout, const ShapeInfo& shape, const CallOutcome& r) {
  Output out;
  out.values = from_storage(p.dtype, shape.output_shape, layout, r.output);
  if (!r.indices.empty()) {
    out.indices.resize(r.indices.size());
    for (size_t i = 0; i < r.indices.size(); ++i)
      out.indices[i] = r.indices[static_cast<size_t>(
          storage_position(shape.output_shape, static_cast<int64_t>(i), layout))];
  }
  return out;
}

// `bits` with every element of `dtype` in it (the 8 bytes repeat over the output) a quiet NaN.
uint64_t nan_poison(DType dtype, uint64_t bits) {
  uint8_t b[8];
  std::memcpy(b, &bits, 8);
  for (int i = 0; i < 8; ++i) {
    const int lane = i % storage_bytes(dtype), top = storage_bytes(dtype) - 1;
    switch (dtype) {
      case DType::f64: b[i] |= lane == top ? 0x7F : lane == top - 1 ? 0xF8 : 0; break;
      case DType::f32: b[i] |= lane == top ? 0x7F : lane == top - 1 ? 0xC0 : 0; break;
      case DType::f16: b[i] |= lane == top ? 0x7E : 0; break;
      case DType::bf16: b[i] |= lane == top ? 0x7F : 0xC0; break;
      default: break;
    }
  }
  std::memcpy(&bits, b, 8);
  return bits;
}

// The buffers of a problem's first call: fresh canaries, a poison that is a NaN in every float
// element (a backend that reads its output before writing it shows), the data against the guard
// page after it.
CallBuffers first_call_buffers(const Problem& p, std::span<const std::byte> in,
                               std::mt19937_64& rng) {
  const auto elements = static_cast<size_t>(validated_shape(p).value().output_elements);
  const bool with_indices = p.op == Op::max && p.indices != Indices::none;
  const size_t width = static_cast<size_t>(storage_bytes(p.dtype));
  const uint64_t poison = nan_poison(p.dtype, rng());
  return CallBuffers{in, elements * width, with_indices ? elements : 0, rng(), poison, true, width};
}

}  // namespace

Judged Judge::judge(const Problem& p, Layout layout, SpecValues& spec) {
  Judged j;
  Result<CProblem> c = to_c_problem(p, layout);
  if (!c) {
    j.verdict = Verdict::unsupported;
    j.detail = c.error().message;
    return j;
  }
  const std::vector<std::byte> in = to_storage(spec.input, layout);
  const ShapeInfo shape = validated_shape(p).value();
  const size_t width = static_cast<size_t>(storage_bytes(p.dtype));
  const auto elements = static_cast<size_t>(shape.output_elements);
  // Two calls: the first call's buffers, then fresh ones whose poison differs from the first's in
  // every byte, with the data one element after the guard page before it (misaligned).
  CallBuffers buffers = first_call_buffers(p, in, rng_);
  CallOutcome calls[2];
  calls[0] = runner_.call(c->problem, buffers, timeout_);
  if (Judged early; stopped(calls[0], 0, early)) return early;
  buffers.seed = rng_();
  buffers.poison = ~buffers.poison;
  buffers.flush_end = false;
  calls[1] = runner_.call(c->problem, buffers, timeout_);
  if (calls[1].kind == CallOutcome::Kind::unsupported) {
    j.verdict = Verdict::unstable;
    j.detail = fmt::format(
        "supports() accepted the problem on the first call and refused it on the second: {}",
        calls[1].message);
    return j;
  }
  if (calls[1].kind == CallOutcome::Kind::run_error ||
      calls[1].kind == CallOutcome::Kind::bad_supports) {
    j.verdict = Verdict::unstable;
    j.detail = fmt::format("the first call ran; on the second, {}", calls[1].message);
    return j;
  }
  if (Judged early; stopped(calls[1], 1, early)) return early;

  for (int k = 0; k < 2; ++k)
    if (std::string e = accumulation_problem(calls[k].accumulation, p); !e.empty()) {
      j.verdict = Verdict::fail;
      j.detail = fmt::format("the accumulation declared for this problem (call {}) is refused: {}",
                             k + 1, e);
      return j;
    }
  if (std::memcmp(&calls[0].accumulation, &calls[1].accumulation, sizeof(poolspec_accumulation)) !=
      0) {
    j.verdict = Verdict::unstable;
    j.detail = "the two calls declared different accumulations for this problem";
    return j;
  }
  if (std::string u = unwritten(calls, width, elements); !u.empty()) {
    j.verdict = Verdict::unwritten;
    j.detail = u;
    j.got = read_output(p, layout, shape, calls[0]);
    return j;
  }
  const ErrorBound bound = bound_of(calls[0].accumulation, p, runner_.backend().name());
  // Where the backend's rules bound results themselves, a result must keep that bound too: a
  // call within what the backend declares but not within the rules' is judged by the rules'.
  const std::optional<ErrorBound> rules = rules_bound(rules_, p);
  const Tensor* sums = bound.exact && !rules ? nullptr : abs_sums_of(spec, p);
  Output got[2];
  Result<EngineComparison> cmp[2] = {EngineComparison{}, EngineComparison{}};
  const ErrorBound* judged_by[2] = {&bound, &bound};
  for (int k = 0; k < 2; ++k) {
    got[k] = read_output(p, layout, shape, calls[k]);
    cmp[k] = compare_output(p, spec.input, spec.expected, got[k], bound, 5, sums);
    if (cmp[k] && cmp[k]->passed() && rules) {
      Result<EngineComparison> held =
          compare_output(p, spec.input, spec.expected, got[k], *rules, 5, sums);
      if (!held || !held->passed()) {
        cmp[k] = std::move(held);
        judged_by[k] = &*rules;
      }
    }
    if (!cmp[k]) {
      j.verdict = Verdict::fail;
      j.detail = cmp[k].error().message;
      return j;
    }
    if (k == 0 && calls[0].output == calls[1].output && calls[0].indices == calls[1].indices) break;
  }
  const bool same = calls[0].output == calls[1].output && calls[0].indices == calls[1].indices;
  const bool right[2] = {cmp[0]->passed(), same ? cmp[0]->passed() : cmp[1]->passed()};
  const int wrong = right[0] ? 1 : 0;  // the call shown
  const auto wrong_text = [&](int k) {
    const std::string text = comparison_text(p, *cmp[k], *judged_by[k]);
    return judged_by[k] == &bound ? text
                                  : "within its declared bound, but not its rules':\n" + text;
  };
  j.comparison = *cmp[same ? 0 : wrong];
  j.got = std::move(got[same ? 0 : wrong]);
  if (same) {
    j.verdict = right[0] ? Verdict::pass : Verdict::fail;
    if (!right[0]) j.detail = wrong_text(0);
    return j;
  }
  const std::string first_difference = difference(calls, width, shape);
  if (right[0] && right[1]) {
    j.verdict = Verdict::unstable;
    j.detail =
        fmt::format("the two calls' outputs differ, both within the bound: {}", first_difference);
  } else if (right[0] != right[1]) {
    j.verdict = Verdict::unstable;
    j.detail = fmt::format("call {} was right and call {} wrong ({}):\n{}", right[0] ? 1 : 2,
                           right[0] ? 2 : 1, first_difference, wrong_text(wrong));
  } else {
    j.verdict = Verdict::fail;
    j.detail = fmt::format("{}\n(the second call's output differs from the first's too: {})",
                           wrong_text(0), first_difference);
  }
  return j;
}

Judged Judge::judge_shape(const ShapeQuestion& q, Layout layout) {
  Judged j;
  Result<CProblem> c = to_c_shape_question(q.problem, layout);
  if (!c) {
    j.verdict = Verdict::unsupported;
    j.detail = c.error().message;
    return j;
  }
  const size_t rank = q.problem.axes.size();
  const uint64_t poison = rng_();
  CallBuffers buffers{{}, rank * sizeof(int64_t), 0, rng_(), poison, true, sizeof(int64_t), true};
  CallOutcome calls[2];
  for (int k = 0; k < 2; ++k) {
    if (k == 1) {
      buffers.seed = rng_();
      buffers.poison = ~poison;
      buffers.flush_end = false;
    }
    calls[k] = runner_.call(c->problem, buffers, timeout_);
    const CallOutcome::Kind kind = calls[k].kind;
    if (kind != CallOutcome::Kind::ran && kind != CallOutcome::Kind::unsupported) {
      stopped(calls[k], k, j);
      return j;
    }
  }
  std::vector<int64_t> got[2];
  for (int k = 0; k < 2; ++k)
    if (calls[k].kind == CallOutcome::Kind::ran) {
      got[k].resize(rank);
      std::memcpy(got[k].data(), calls[k].output.data(), rank * sizeof(int64_t));
    }
  const auto answer = [](const CallOutcome& call, const std::vector<int64_t>& extents) {
    return call.kind == CallOutcome::Kind::ran ? fmt::format("[{}]", fmt::join(extents, ", "))
                                               : "a refusal: " + call.message;
  };
  // An extent that kept its poison (each call's differs) was never written.
  const auto poisoned = [&](int k, size_t i) {
    return calls[k].kind == CallOutcome::Kind::ran &&
           std::memcmp(&got[k][i], calls[k].output_poison.data(), sizeof(int64_t)) == 0;
  };
  for (size_t i = 0; i < rank; ++i)
    if (poisoned(0, i) || poisoned(1, i)) {
      j.verdict = Verdict::unwritten;
      j.detail = fmt::format("output_shape returned 1 and left extents[{}] unwritten", i);
      return j;
    }
  if (calls[0].kind != calls[1].kind || got[0] != got[1]) {
    j.verdict = Verdict::unstable;
    j.detail = fmt::format("output_shape answered {} on the first call and {} on the second",
                           answer(calls[0], got[0]), answer(calls[1], got[1]));
    return j;
  }
  const std::string expected = q.extents.empty() ? "a refusal (" + q.refusal + ")"
                                                 : fmt::format("[{}]", fmt::join(q.extents, ", "));
  if (calls[0].kind == CallOutcome::Kind::unsupported) {
    j.verdict = q.extents.empty() ? Verdict::pass : Verdict::unsupported;
    j.detail = calls[0].message;
    return j;
  }
  if (got[0] == q.extents) return j;
  j.verdict = Verdict::fail;
  j.detail =
      fmt::format("output_shape gave {}; the rules give {}", answer(calls[0], got[0]), expected);
  return j;
}

Judged Judge::judge_reject(const RejectCase& r, Layout layout, const Tensor& input) {
  Judged j;
  Result<CProblem> c = to_c_problem(r.problem, layout);
  if (!c) {  // the ABI cannot carry it: nothing to ask
    j.verdict = Verdict::unsupported;
    j.detail = c.error().message;
    return j;
  }
  const std::vector<std::byte> in = to_storage(input, layout);
  const CallOutcome call =
      runner_.call(c->problem, first_call_buffers(r.problem, in, rng_), timeout_);
  switch (call.kind) {
    case CallOutcome::Kind::unsupported:
      j.detail = "refused by supports(): " + call.message;
      return j;
    case CallOutcome::Kind::run_error: j.detail = "refused by run(): " + call.message; return j;
    case CallOutcome::Kind::ran:
      j.verdict = Verdict::fail;
      j.detail = fmt::format(
          "ran a problem its rules refuse, where it must refuse it (supports() false or an error "
          "from run()): {}",
          r.refusal);
      return j;
    default: stopped(call, 0, j); return j;
  }
}

bool Judge::stopped(const CallOutcome& call, int k, Judged& j) {
  const std::string which = k == 0 ? "" : "on the second call (the first ran): ";
  switch (call.kind) {
    case CallOutcome::Kind::ran: return false;
    case CallOutcome::Kind::unsupported:
      j.verdict = Verdict::unsupported;
      j.detail = call.message;
      return true;
    case CallOutcome::Kind::bad_supports:
      j.verdict = Verdict::fail;
      j.detail = call.message;
      return true;
    case CallOutcome::Kind::run_error:
      j.verdict = Verdict::fail;
      j.detail =
          fmt::format("supports() accepted the problem, then run() failed: {}", call.message);
      return true;
    case CallOutcome::Kind::crash: j.verdict = Verdict::crash; break;
    case CallOutcome::Kind::hang: j.verdict = Verdict::hang; break;
    case CallOutcome::Kind::out_of_bounds: j.verdict = Verdict::out_of_bounds; break;
  }
  j.detail = which + call.message;
  return true;
}

std::string Judge::unwritten(const CallOutcome (&calls)[2], size_t width, size_t elements) {
  int64_t count = 0;
  size_t example = 0;
  int example_call = 0;
  const auto kept = [&](const CallOutcome& c, size_t e) {
    for (size_t k = 0; k < width; ++k)
      if (c.output[e * width + k] != c.output_poison[(e * width + k) % 8]) return false;
    return true;
  };
  for (size_t e = 0; e < elements; ++e) {
    const bool a = kept(calls[0], e), b = kept(calls[1], e);
    const bool ia = !calls[0].indices.empty() && calls[0].indices[e] == calls[0].index_poison;
    const bool ib = !calls[1].indices.empty() && calls[1].indices[e] == calls[1].index_poison;
    const bool differs =
        !std::equal(calls[0].output.begin() + static_cast<std::ptrdiff_t>(e * width),
                    calls[0].output.begin() + static_cast<std::ptrdiff_t>((e + 1) * width),
                    calls[1].output.begin() + static_cast<std::ptrdiff_t>(e * width)) ||
        (!calls[0].indices.empty() && calls[0].indices[e] != calls[1].indices[e]);
    if ((a && b) || (ia && ib) || ((a || b || ia || ib) && differs)) {
      if (count++ == 0) {
        example = e;
        example_call = (a && b) || (ia && ib) ? 0 : (a || ia) ? 1 : 2;
      }
    }
  }
  if (count == 0) return "";
  return fmt::format(
      "{} of {} output elements (or indices) left unwritten ({}); the first at storage offset {}",
      count, elements,
      example_call == 0 ? "they kept two different poisons over two calls"
                        : fmt::format("kept the poison on call {}", example_call),
      example);
}

std::string Judge::difference(const CallOutcome (&calls)[2], size_t width, const ShapeInfo& shape) {
  for (size_t e = 0; e < static_cast<size_t>(shape.output_elements); ++e) {
    const bool values =
        !std::equal(calls[0].output.begin() + static_cast<std::ptrdiff_t>(e * width),
                    calls[0].output.begin() + static_cast<std::ptrdiff_t>((e + 1) * width),
                    calls[1].output.begin() + static_cast<std::ptrdiff_t>(e * width));
    const bool indices = !calls[0].indices.empty() && calls[0].indices[e] != calls[1].indices[e];
    if (values || indices) return fmt::format("the first difference at storage offset {}", e);
  }
  return "no element differs";
}

}  // namespace poolspec::certify
