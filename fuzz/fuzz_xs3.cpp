// fuzz_xs3: the bit-exact model of lib_nn's int8 pooling (xs3/) against the spec, against its
// own C-reference mode, and against itself under other job splits and APIs.
//
// Targets: the xs3 front-end (attribute text -> operator and the spec's problem), the plans and
// jobs of avgpool2d_global, avgpool2d (general and 2x2 paths) and maxpool2d, the later scaled and
// _ext APIs, and every init check (random, possibly invalid, job parameters).
// Input: FuzzedDataProvider bytes: the operator's attributes, an (H, W, C) int8 image biased to
// -128, -127, 127 and small values, and job cut points.
// Oracle:
//   - the spec's meaning (the seed document's (b + sum X) / N, rounded half up, saturated):
//     maxpool2d equals it; an average whose pixel count is a power of two equals it (bias
//     included); any other average without a bias is within 1 of it (proved: xs3/error-bound);
//   - the assembly's saturating accumulation equals the C reference's wrapping one whenever no
//     partial sum can leave int32 (|bias| + 128 * 128 * N < 2^31);
//   - any partition of the output into jobs gives the outputs of one job; the _ext API over a
//     channel range gives the seed API's outputs on those channels;
//   - arbitrary job parameters, and raw plan parameters given to the model's own init and compute
//     calls (with output buffers of the right size or one byte short), are refused or run in
//     bounds (ASan), never crash.
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fuzz_input.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/xs3/operator.hpp"
#include "poolspec/xs3/pooling.hpp"

namespace poolspec::fuzz {
namespace {

std::string g_description;  // the case, printed on a failure

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\n== fuzz_xs3: FAILURE\ncase: %s\n%s\n", g_description.c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

std::string values_text(const Tensor& t) {
  std::string s;
  for (size_t i = 0; i < t.values.size() && i < 64; ++i)
    s += (i ? " " : "") + fmt::format("{}", t.values[i]);
  return s + (t.values.size() > 64 ? " ..." : "");
}

void require_equal(const Tensor& a, const Tensor& b, const std::string& what) {
  if (a.values != b.values)
    fail(fmt::format("{}:\n  [{}]\n  [{}]", what, values_text(a), values_text(b)));
}

std::string consume_attributes(FuzzedDataProvider& in, Xs3Operator::Kind kind) {
  std::string text;
  if (kind == Xs3Operator::Kind::avgpool2d_global) {
    text = "op=avgpool2d_global";
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: text += fmt::format(" bias={}", in.ConsumeIntegral<int32_t>()); break;
      case 1:
        text += fmt::format(" bias={}", in.ConsumeIntegralInRange<int32_t>(-5000, 5000));
        break;
      default: break;
    }
    if (in.ConsumeIntegralInRange<int>(0, 3) == 0)
      text += fmt::format(" scale={} shift={}", in.ConsumeIntegral<int8_t>(),
                          in.ConsumeIntegralInRange<int>(0, 31));
  } else {
    text = kind == Xs3Operator::Kind::avgpool2d ? "op=avgpool2d" : "op=maxpool2d";
    text += fmt::format(" window={},{}", in.ConsumeIntegralInRange<int>(1, 5),
                        in.ConsumeIntegralInRange<int>(1, 5));
    if (in.ConsumeBool())
      text += fmt::format(" start={},{}", in.ConsumeIntegralInRange<int>(0, 3),
                          in.ConsumeIntegralInRange<int>(0, 3));
    if (in.ConsumeBool())
      text += fmt::format(" stride={},{}", in.ConsumeIntegralInRange<int>(1, 4),
                          in.ConsumeIntegralInRange<int>(1, 4));
    if (in.ConsumeIntegralInRange<int>(0, 3) == 0)
      text += fmt::format(" output={},{}", in.ConsumeIntegralInRange<int>(1, 4),
                          in.ConsumeIntegralInRange<int>(1, 4));
  }
  if (in.ConsumeBool()) text += " symmetric=1";
  return text;
}

Tensor consume_image(FuzzedDataProvider& in, int64_t h, int64_t w, int64_t c) {
  Tensor image{DType::i8, {h, w, c}, std::vector<double>(size_t(h * w * c))};
  for (double& v : image.values)
    v = in.ConsumeBool() ? double(in.ConsumeIntegral<int8_t>())
                         : pick(in, std::array<double, 6>{-128, -127, 127, 0, 1, -1});
  return image;
}

// The model against the spec's meaning of the operator (not for the caller's scale and shift).
void check_against_spec(const Xs3Frontend& f, const Tensor& image, const Tensor& model) {
  if (f.op.has_scale_shift) return;
  const Output spec = evaluate(f.problem, to_spec_layout(f.framing, image)).value();
  const Tensor expected = to_framework_layout(f.framing, spec.values);
  const double lower = f.op.symmetric ? -127 : -128;
  const int64_t pixels = f.op.window_h * f.op.window_w;
  const bool power_of_two = (pixels & (pixels - 1)) == 0;
  for (size_t i = 0; i < model.values.size(); ++i) {
    // Averages saturate to [lower, 127]; a max is an element of the image, never saturated.
    const double want = f.op.kind == Xs3Operator::Kind::maxpool2d
                            ? expected.values[i]
                            : std::max(expected.values[i], lower);
    const double error = std::fabs(model.values[i] - want);
    const bool exact = f.op.kind == Xs3Operator::Kind::maxpool2d || power_of_two;
    if (exact ? error != 0 : (f.op.bias == 0 && error > 1))
      fail(fmt::format("element {}: model {}, spec {} (allowed error {})", i, model.values[i], want,
                       exact ? 0 : 1));
  }
}

// A partition of the operator's output into jobs, from cut points in the input.
void check_job_split(FuzzedDataProvider& in, const Xs3Operator& op, const Tensor& image,
                     const Tensor& whole) {
  if (op.kind == Xs3Operator::Kind::avgpool2d_global) {
    if (op.has_scale_shift) return;  // the scaled API has no jobs
    std::vector<xs3::GlobalJobParams> jobs;
    uint32_t start = 0;
    const auto channels = uint32_t(op.channels);
    while (start < channels) {
      const uint32_t count =
          in.ConsumeIntegralInRange<uint32_t>(0, channels - start);  // 0: an empty job
      jobs.push_back({start, count});
      start += count;
      if (jobs.size() > 64) jobs.push_back({start, channels - start}), start = channels;
    }
    Result<Tensor> split = xs3::run_operator(op, image, jobs);
    if (!split) fail("a partition into global jobs was refused: " + split.error().message);
    require_equal(*split, whole, "global jobs vs one job");
    return;
  }
  const auto rows = int32_t(op.out_h), cols = int32_t(op.out_w), channels = int32_t(op.channels);
  const int32_t row_cut = in.ConsumeIntegralInRange<int32_t>(0, rows);
  const int32_t col_cut = in.ConsumeIntegralInRange<int32_t>(0, cols);
  // Channel blocks in groups of 4 (lib_nn's job channel alignment) and a tail.
  std::vector<xs3::WindowJobParams> jobs;
  for (int32_t ch = 0; ch < channels; ch += 4) {
    const int32_t n = std::min(4, channels - ch);
    for (auto [r0, rn] : {std::pair{0, row_cut}, std::pair{row_cut, rows - row_cut}})
      for (auto [c0, cn] : {std::pair{0, col_cut}, std::pair{col_cut, cols - col_cut}})
        if (rn > 0 && cn > 0) jobs.push_back({r0, c0, ch, rn, cn, n});
  }
  Result<Tensor> split = xs3::run_operator(op, image, {}, jobs);
  if (!split) return;  // a job split lib_nn's init refuses (e.g. its channel alignment)
  require_equal(*split, whole, "window jobs vs one job");
}

// Arbitrary job parameters: refused, or run inside the buffers (ASan watches).
void run_arbitrary_jobs(FuzzedDataProvider& in, const Xs3Operator& op, const Tensor& image) {
  if (op.kind == Xs3Operator::Kind::avgpool2d_global) {
    std::vector<xs3::GlobalJobParams> jobs(in.ConsumeIntegralInRange<size_t>(1, 3));
    for (auto& j : jobs)
      j = {in.ConsumeIntegralInRange<uint32_t>(0, uint32_t(op.channels) + 2),
           in.ConsumeIntegralInRange<uint32_t>(0, uint32_t(op.channels) + 2)};
    (void)xs3::run_operator(op, image, jobs);
    return;
  }
  std::vector<xs3::WindowJobParams> jobs(in.ConsumeIntegralInRange<size_t>(1, 3));
  for (auto& j : jobs)
    j = {in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.out_h)),
         in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.out_w)),
         in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.channels)),
         in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.out_h) + 1),
         in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.out_w) + 1),
         in.ConsumeIntegralInRange<int32_t>(-1, int32_t(op.channels) + 1)};
  (void)xs3::run_operator(op, image, {}, jobs);
}

// The _ext API over a channel range against the seed API's outputs on those channels.
void check_ext(FuzzedDataProvider& in, const Xs3Operator& op, const Tensor& image,
               const Tensor& whole) {
  if (op.kind != Xs3Operator::Kind::avgpool2d_global) return;
  xs3::ScaleShift ss{int(op.scale), int(op.shift)};
  if (!op.has_scale_shift) {
    Result<xs3::ScaleShift> derived = xs3::scale_and_shift(uint64_t(op.height * op.width));
    if (!derived) return;
    ss = *derived;
  }
  if (ss.scale > 127) return;  // the int8 scale parameter of the later API cannot hold 128
  const auto channels = uint32_t(op.channels);
  const uint32_t start = in.ConsumeIntegralInRange<uint32_t>(0, channels);
  const uint32_t count = in.ConsumeIntegralInRange<uint32_t>(0, channels - start);
  std::vector<int8_t> x(image.values.begin(), image.values.end()), y(channels, 0);
  const xs3::ImageParams params{uint32_t(op.height), uint32_t(op.width), channels};
  if (Status s =
          xs3::avgpool2d_global_ext(y, x, int32_t(op.bias), int8_t(ss.scale), uint16_t(ss.shift),
                                    params, start, count, xs3::config_of(op));
      !s)
    fail("the _ext API refused a channel range inside the image: " + s.error().message);
  for (uint32_t ch = start; ch < start + count; ++ch)
    if (y[ch] != whole.values[ch])
      fail(fmt::format("_ext over channels [{}, {}): channel {} is {}, the seed API's {}", start,
                       start + count, ch, int(y[ch]), whole.values[ch]));
}

// The model's own API with raw plan parameters (what the front-end never produces): every init
// check refuses cleanly, and what an init accepts runs on buffers of exactly the image sizes
// without reading or writing outside them (ASan watches). Compute calls are also given buffers
// one byte short, which they must refuse.
void run_raw_plans(FuzzedDataProvider& in) {
  const xs3::Config config{
      in.ConsumeBool(), in.ConsumeBool() ? xs3::Accumulation::wrap : xs3::Accumulation::saturate};
  const auto small = [&](uint32_t hi) { return in.ConsumeIntegralInRange<uint32_t>(0, hi); };
  const bool huge =
      in.ConsumeIntegralInRange<int>(0, 15) == 0;  // pixel counts past lib_nn's limits
  const xs3::ImageParams x{huge ? in.ConsumeIntegral<uint32_t>() : small(9),
                           huge ? in.ConsumeIntegral<uint32_t>() : small(9), small(12)};
  (void)xs3::scale_and_shift(in.ConsumeIntegral<uint64_t>() >>
                             in.ConsumeIntegralInRange<int>(0, 63));
  const auto volume = [](const xs3::ImageParams& p) {
    return uint64_t{p.height} * p.width * p.channels;
  };
  const bool short_buffer = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  const auto run_jobs = [&](auto&& compute, const auto& init, uint64_t y_volume) {
    if (volume(x) > 4096 || y_volume > 4096) return;
    std::vector<int8_t> xs(size_t(volume(x)), 1), ys(size_t(y_volume), 0);
    std::span<int8_t> y_span(ys);
    if (short_buffer && !ys.empty()) y_span = y_span.first(ys.size() - 1);
    for (const auto& job : init.jobs)
      (void)compute(y_span, std::span<const int8_t>(xs), init.plan, job);
  };
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {
      std::vector<xs3::GlobalJobParams> jobs(in.ConsumeIntegralInRange<size_t>(0, 2));
      for (auto& j : jobs) j = {small(14), small(14)};
      if (auto init = xs3::avgpool2d_global_init(x, jobs, config))
        run_jobs(
            [&](std::span<int8_t> y, std::span<const int8_t> xs, const xs3::GlobalPlan& plan,
                const xs3::GlobalJob& job) {
              return xs3::avgpool2d_global(y, xs, in.ConsumeIntegral<int32_t>(), plan, job);
            },
            *init, x.channels);
      break;
    }
    default: {
      const xs3::ImageParams y{small(5), small(5), in.ConsumeBool() ? x.channels : small(12)};
      const xs3::WindowParams w{small(4),
                                small(4),
                                in.ConsumeIntegralInRange<int32_t>(-1, 3),
                                in.ConsumeIntegralInRange<int32_t>(-1, 3),
                                in.ConsumeIntegralInRange<int32_t>(-1, 3),
                                in.ConsumeIntegralInRange<int32_t>(-1, 3)};
      std::vector<xs3::WindowJobParams> jobs(in.ConsumeIntegralInRange<size_t>(0, 2));
      for (auto& j : jobs)
        j = {
            in.ConsumeIntegralInRange<int32_t>(-1, 5),  in.ConsumeIntegralInRange<int32_t>(-1, 5),
            in.ConsumeIntegralInRange<int32_t>(-1, 12), in.ConsumeIntegralInRange<int32_t>(-1, 5),
            in.ConsumeIntegralInRange<int32_t>(-1, 5),  in.ConsumeIntegralInRange<int32_t>(-1, 12)};
      if (in.ConsumeBool()) {
        if (auto init = xs3::avgpool2d_init(x, y, w, jobs, config))
          run_jobs(xs3::avgpool2d, *init, volume(y));
      } else {
        if (auto init = xs3::maxpool2d_init(x, y, w, jobs))
          run_jobs(xs3::maxpool2d, *init, volume(y));
      }
    }
  }
}

void run_one(FuzzedDataProvider& in) {
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) return run_raw_plans(in);
  const auto kind = pick(in, std::array<Xs3Operator::Kind, 3>{Xs3Operator::Kind::avgpool2d_global,
                                                              Xs3Operator::Kind::avgpool2d,
                                                              Xs3Operator::Kind::maxpool2d});
  const int64_t h = in.ConsumeIntegralInRange<int64_t>(1, 12),
                w = in.ConsumeIntegralInRange<int64_t>(1, 12);
  const int64_t c = in.ConsumeIntegralInRange<int64_t>(1, 20);
  const std::string attributes = consume_attributes(in, kind);
  g_description = fmt::format("{} on an (H, W, C) = ({}, {}, {}) image", attributes, h, w, c);
  Result<Xs3Frontend> f = from_xs3(attributes, {h, w, c});
  if (!f) return;  // a clean refusal (a window that does not fit, ...)
  const Tensor image = consume_image(in, h, w, c);
  g_description += " [" + values_text(image) + "]";

  Result<Tensor> saturating = xs3::run_operator(f->op, image);
  if (!saturating) return;  // an init refusal (N = 255, channels not a multiple of 4, ...)
  check_against_spec(*f, image, *saturating);

  Xs3Operator wrapping = f->op;
  wrapping.wrap = true;
  Result<Tensor> wrapped = xs3::run_operator(wrapping, image);
  if (!wrapped)
    fail("the C-reference mode refused what the assembly's accepted: " + wrapped.error().message);
  const double largest_partial_sum =
      std::fabs(double(f->op.bias)) + 128.0 * 128.0 * double(f->op.window_h * f->op.window_w);
  if (largest_partial_sum < 2147483648.0)
    require_equal(*wrapped, *saturating, "C reference (wrap) vs assembly (saturate)");

  check_job_split(in, f->op, image, *saturating);
  check_ext(in, f->op, image, *saturating);
  run_arbitrary_jobs(in, f->op, image);
}

}  // namespace
}  // namespace poolspec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  poolspec::fuzz::run_one(in);
  return 0;
}
