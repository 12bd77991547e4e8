// poolspec_bench: a benchmark program, not a test. In one process it times the optimized engine
// (NCHW and NHWC), the reference engine, oneDNN (nchw, nhwc, nChw16c) and XNNPACK (nhwc) on the
// workloads of docs/benchmarks.md (the six headline layers, ResNet-50's, GoogLeNet v3's and a
// 3-D U-Net's pooling layers), at 1 and 2 threads, cold (input and output flushed from the caches
// before each call) and hot. Implementations run in interleaved rounds (docs/benchmarks.md
// section 4: this machine is noisy, so engines are compared only within one process, as ratios).
// Every row is first checked: in full against the reference engine within the sum of both
// declared bounds, and the reference itself against the exact spec on sampled output elements. It
// measures the read bandwidth too, prints a table and writes one JSON line per row.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "peers.hpp"
#include "poolspec/engine.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/files.hpp"
#include "poolspec/network_layers.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/check.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"

namespace poolspec::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Workload {
  std::string name;
  Problem problem;
  bool headline = false;  // one of the six workloads of docs/benchmarks.md
};

Problem make(Op op, DType dtype, int64_t n, int64_t c, std::vector<int64_t> spatial, int64_t k,
             int64_t s, int64_t pad, Divisor divisor = Divisor::exclude) {
  Problem p;
  p.op = op;
  p.dtype = dtype;
  p.batch = n;
  p.channels = c;
  for (int64_t d : spatial) p.axes.push_back(Axis{d, k, s, 1, pad, pad});
  p.divisor = divisor;
  return p;
}

std::vector<Workload> workloads() {
  const Op avg = Op::avg, max = Op::max;
  const DType f32 = DType::f32;
  std::vector<Workload> list = {
      // The six of docs/benchmarks.md (N, C, spatial, kernel/stride/pad); ResNet-50's two pooling
      // layers are the first two.
      {"resnet_stem_max", make(max, f32, 8, 64, {112, 112}, 3, 2, 1), true},
      {"resnet_global_avg", make(avg, f32, 8, 2048, {7, 7}, 7, 1, 0), true},
      {"inception_avg3x3", make(avg, f32, 8, 192, {35, 35}, 3, 1, 1), true},
      {"large_avg7x7", make(avg, f32, 1, 32, {256, 256}, 7, 1, 3), true},
      {"3d_avg3x3x3_s2", make(avg, f32, 1, 16, {32, 64, 64}, 3, 2, 1, Divisor::include_full), true},
      {"s8_avg3x3_s2", make(avg, DType::i8, 8, 64, {56, 56}, 3, 2, 1, Divisor::include_full), true},
  };
  // Then the network layers marked for it (GoogLeNet v3's, a 3-D U-Net's), from the list the
  // certify suites share.
  for (const NetworkLayer& layer : network_layers())
    if (layer.benchmarked)
      list.push_back({std::string(layer.name), parse_problem(layer.problem).value()});
  // Then two headline layers in the other forms a model runs them in: max with indices (PyTorch's
  // return_indices, ONNX's second output: the training path), the 16-bit float dtypes of
  // inference servers, u8, and a batch of 64 (throughput, at 2 threads above all).
  const Problem stem = list[0].problem, inception = list[2].problem;
  Problem indices = stem;
  indices.indices = Indices::plane;
  list.push_back({"resnet_stem_max_indices", indices});
  for (const DType dtype : {DType::bf16, DType::f16, DType::u8}) {
    Problem stem_in = stem, inception_in = inception;
    stem_in.dtype = inception_in.dtype = dtype;
    list.push_back({fmt::format("resnet_stem_max_{}", dtype_name(dtype)), stem_in});
    list.push_back({fmt::format("inception_avg3x3_{}", dtype_name(dtype)), inception_in});
  }
  Problem batch = inception;
  batch.batch = 64;
  list.push_back({"inception_avg3x3_n64", batch});
  return list;
}

// ---- machine helpers ------------------------------------------------------------------------

// A legacy-SSE kernel after any 256-bit VEX instruction runs 3-4x slower on this CPU until
// vzeroupper (docs/benchmarks.md section 4): clear the state before every timed call.
__attribute__((target("avx"))) void clear_upper_state() { _mm256_zeroupper(); }

__attribute__((target("avx2"))) uint64_t read_sum(const uint64_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i + 16 <= n; i += 16) {
    a = _mm256_add_epi64(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_add_epi64(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_add_epi64(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Read-only bandwidth over a buffer far larger than the caches, best of `repeats`, GB/s (1e9 B).
double read_bandwidth(int threads, size_t bytes, int repeats) {
  const size_t n = bytes / 8;
  auto* buffer = static_cast<uint64_t*>(std::aligned_alloc(64, n * 8));
  std::memset(buffer, 1, n * 8);
  double best = 0;
  volatile uint64_t sink = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    uint64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const size_t per = n / static_cast<size_t>(omp_get_num_threads()) / 16 * 16;
      const size_t first = per * static_cast<size_t>(omp_get_thread_num());
      total += read_sum(buffer + first, per);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    sink = sink + total;
    best = std::max(best, static_cast<double>(n * 8) / seconds / 1e9);
  }
  std::free(buffer);
  return best;
}

__attribute__((target("avx2"))) void copy_lines(const std::byte* in, std::byte* out, size_t n) {
  for (size_t i = 0; i + 64 <= n; i += 64) {
    const __m256i a = _mm256_load_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m256i b = _mm256_load_si256(reinterpret_cast<const __m256i*>(in + i + 32));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), a);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i + 32), b);
  }
}

__attribute__((target("avx2"))) void fill_lines(std::byte* out, size_t n) {
  const __m256i zero = _mm256_setzero_si256();
  for (size_t i = 0; i + 64 <= n; i += 64) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i), zero);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + i + 32), zero);
  }
}

// ---- implementations under test ---------------------------------------------------------------

// What memory allows a layer (docs/benchmarks.md section 1): a plain copy that reads as many
// bytes as the layer's input and writes as many as its output -- the smaller count copied from
// the input buffer to the output buffer, then the rest of the input read or the rest of the
// output written -- with 256-bit loads and with stores that allocate in the cache, as the
// kernels' stores do; each thread over its own contiguous share of each part. Not a pooling: it
// is timed beside the rows, and every row's time is also given as a multiple of it.
class CopyRunner final : public Runner {
 public:
  CopyRunner(size_t in_bytes, size_t out_bytes) : in_(in_bytes, std::byte{1}), out_(out_bytes) {}
  bool run(int threads) override {
    const size_t copied = std::min(in_.size(), out_.size()) / 128 * 128;
    const size_t read = (in_.size() - copied) / 128 * 128, written = out_.size() - copied;
    uint64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
      const auto share = [&](size_t n) {  // [begin, size) of this thread's share, whole lines
        const auto t = static_cast<size_t>(omp_get_thread_num()),
                   count = static_cast<size_t>(omp_get_num_threads());
        const size_t per = n / count / 128 * 128, begin = per * t;
        return std::pair{begin, t + 1 == count ? n - begin : per};
      };
      const auto [c0, cn] = share(copied);
      copy_lines(in_.data() + c0, out_.data() + c0, cn);
      const auto [r0, rn] = share(read);
      total += read_sum(reinterpret_cast<const uint64_t*>(in_.data() + copied + r0), rn / 8);
      const auto [w0, wn] = share(written);
      fill_lines(out_.data() + copied + w0, wn);
    }
    sink_ = sink_ + total;
    return true;
  }
  void flush_buffers() override {
    flush(in_.data(), in_.size());
    flush(out_.data(), out_.size());
  }
  std::vector<double> output_in_spec_order() override { return {}; }

 private:
  LineAligned<std::byte> in_, out_;
  volatile uint64_t sink_ = 0;
};

struct Row {
  std::string impl, layout, detail;
  bool is_ours = false, is_peer = false;
  std::unique_ptr<Runner> runner;
  std::string check = "unchecked";
  std::map<std::pair<int, bool>, std::vector<double>> times;  // (threads, cold) -> ms per call
};

class EngineRunner final : public Runner {
 public:
  EngineRunner(const Engine& engine, const Problem& p, Layout layout,
               const LineAligned<std::byte>& input)
      : engine_(engine), p_(p), layout_(layout), input_(input) {
    Result<ShapeInfo> shape = validated_shape(p);
    output_.resize(static_cast<size_t>(shape->output_elements * storage_bytes(p.dtype)));
    if (p.op == Op::max && p.indices != Indices::none)
      indices_.resize(static_cast<size_t>(shape->output_elements));
  }
  bool run(int threads) override {
    int64_t* indices = indices_.empty() ? nullptr : indices_.data();
    return engine_.run(p_, layout_, RunArgs{input_.data(), output_.data(), indices, threads}).ok();
  }
  void flush_buffers() override {
    flush(input_.data(), input_.size());
    flush(output_.data(), output_.size());
    if (!indices_.empty()) flush(indices_.data(), indices_.size() * sizeof(int64_t));
  }
  std::vector<double> output_in_spec_order() override {
    return from_storage(p_.dtype, validated_shape(p_)->output_shape, layout_, output_).values;
  }
  std::vector<int64_t> indices_in_spec_order() override {  // stored in the output's layout
    const std::vector<int64_t> shape = validated_shape(p_)->output_shape;
    std::vector<int64_t> out(indices_.size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] =
          indices_[static_cast<size_t>(storage_position(shape, static_cast<int64_t>(i), layout_))];
    return out;
  }

 private:
  const Engine& engine_;
  const Problem& p_;
  Layout layout_;
  const LineAligned<std::byte>& input_;
  LineAligned<std::byte> output_;
  LineAligned<int64_t> indices_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The input: uniform in [-1, 1) for floats, the whole range for integers; fixed seed.
Tensor make_input(const Problem& p) {
  Tensor t{p.dtype, input_shape(p), {}};
  const int64_t count = element_count(t.shape).value();
  t.values.resize(static_cast<size_t>(count));
  std::mt19937_64 random(20261122);
  for (double& v : t.values) {
    const double u = static_cast<double>(random() >> 11) * 0x1.0p-53;
    v = is_float(p.dtype)
            ? round_to_float(p.dtype, 2 * u - 1)
            : std::floor(static_cast<double>(int_min(p.dtype)) +
                         u * static_cast<double>(int_max(p.dtype) - int_min(p.dtype) + 1));
  }
  return t;
}

// Checks `got` against the reference output within both engines' declared bounds. A window's
// sum of |x| over its divisor is at most max|x| for these workloads' divisors (exclude,
// include), which bounds A / d in the formula.
std::string check_against_reference(const Problem& p, const std::vector<double>& reference,
                                    const std::vector<int64_t>& reference_indices,
                                    const ErrorBound& reference_bound,
                                    const std::vector<double>& got,
                                    const std::vector<int64_t>& got_indices,
                                    const ErrorBound& bound, double max_abs) {
  if (got.size() != reference.size()) return "FAIL (output size)";
  if (got_indices != reference_indices) {  // the spec's indices, exactly
    if (got_indices.size() != reference_indices.size()) return "FAIL (no indices)";
    const auto d = std::mismatch(got_indices.begin(), got_indices.end(), reference_indices.begin());
    return fmt::format("FAIL (indices differ; first at flat {}: expected {}, got {})",
                       d.first - got_indices.begin(), *d.second, *d.first);
  }
  int64_t bad = 0;
  double worst = 0;
  size_t first_bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (same_value(p.dtype, got[i], reference[i])) continue;
    double allowed = 0;
    if (p.op == Op::avg && is_float(p.dtype) && std::isfinite(reference[i]))
      allowed = allowed_error(bound, p.dtype, max_abs, 1, reference[i]) +
                allowed_error(reference_bound, p.dtype, max_abs, 1, reference[i]);
    const double error = std::fabs(got[i] - reference[i]);
    if (allowed > 0 && error <= allowed) {
      worst = std::max(worst, error / allowed);
      continue;
    }
    if (bad++ == 0) first_bad = i;
  }
  if (bad == 0) return "pass";
  return fmt::format("FAIL ({} of {} differ; first at flat {}: expected {}, got {})", bad,
                     got.size(), first_bad, reference[first_bad], got[first_bad]);
}

// The reference against the exact spec on `samples` output elements (the first and last ones,
// whose windows touch the padding, and random ones), each with its own window's bound.
std::string check_reference_against_spec(const Problem& p, const Tensor& input,
                                         const std::vector<double>& reference,
                                         const ErrorBound& bound, int samples) {
  const ShapeInfo shape = validated_shape(p).value();
  std::mt19937_64 random(7);
  int failures = 0;
  for (int s = 0; s < samples; ++s) {
    int64_t flat =
        s < samples / 4 ? s
        : s < samples / 2
            ? shape.output_elements - 1 - s
            : static_cast<int64_t>(random() % static_cast<uint64_t>(shape.output_elements));
    flat = std::clamp<int64_t>(flat, 0, shape.output_elements - 1);
    std::vector<int64_t> coordinate(shape.output_shape.size());
    int64_t rest = flat;
    for (size_t i = coordinate.size(); i-- > 0;) {
      coordinate[i] = rest % shape.output_shape[i];
      rest /= shape.output_shape[i];
    }
    Result<Explanation> e = explain(p, input, coordinate);
    if (!e) return "FAIL (spec: " + e.error().message + ")";
    const double got = reference[static_cast<size_t>(flat)];
    if (same_value(p.dtype, got, e->result)) continue;
    double abs_sum = 0;
    for (const Tap& t : e->taps)
      if (t.value) abs_sum += std::fabs(*t.value);
    const double allowed =
        e->divisor ? allowed_error(bound, p.dtype, abs_sum, *e->divisor, e->result) : 0;
    if (std::fabs(got - e->result) > allowed) ++failures;
  }
  return failures == 0 ? fmt::format("pass ({} sampled elements)", samples)
                       : fmt::format("FAIL ({} of {} sampled)", failures, samples);
}

struct Options {
  std::string json_path = "bench-results/bench.jsonl";
  int rounds = 4, calls = 5;
  std::vector<std::string> only;
  bool quick = false;
  bool with_reference = true;
  size_t bandwidth_bytes = size_t{512} << 20;
};

int run(const Options& options) {
  pin_openmp_threads(2);
  fmt::print("poolspec_bench: optimized engine on SIMD target {} (of {}); {} hardware threads\n",
             optimized::simd_target(), fmt::join(optimized::simd_targets(), ", "),
             std::thread::hardware_concurrency());
  const double bandwidth[3] = {0, read_bandwidth(1, options.bandwidth_bytes, options.quick ? 2 : 5),
                               read_bandwidth(2, options.bandwidth_bytes, options.quick ? 2 : 5)};
  fmt::print(
      "read bandwidth ({} MiB, best of runs): {:.1f} GB/s at 1 thread, {:.1f} GB/s at 2 "
      "threads\n\n",
      options.bandwidth_bytes >> 20, bandwidth[1], bandwidth[2]);
  std::filesystem::path json_path(options.json_path);
  if (json_path.has_parent_path()) std::filesystem::create_directories(json_path.parent_path());
  std::ostringstream json;  // written at the end, atomically: no partial file is left behind
  json << nlohmann::json{{"bandwidth_read_gbps", {{"1", bandwidth[1]}, {"2", bandwidth[2]}}},
                         {"simd_target", optimized::simd_target()}}
              .dump()
       << "\n";

  std::vector<double> headline_ratios[3];  // per thread count, cold: ours / best peer (each layout)
  // Per thread count, cold, every workload and layout: ours / best peer, and ours / the copy of
  // the same bytes (float dtypes), each with its cell's name.
  std::vector<std::pair<double, std::string>> all_ratios[3], copy_ratios[3];
  bool all_checked = true;
  for (const Workload& w : workloads()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), w.name) == options.only.end())
      continue;
    const Problem& p = w.problem;
    const ShapeInfo shape = validated_shape(p).value();
    const Tensor input = make_input(p);
    const size_t element = static_cast<size_t>(storage_bytes(p.dtype));
    const double bytes = static_cast<double>((shape.input_elements + shape.output_elements) *
                                             static_cast<int64_t>(element));
    fmt::print("== {}  {}  ({:.1f} MB in + out)\n", w.name, format_problem(p), bytes / 1e6);

    // The reference output, and the reference against the spec.
    const LineAligned<std::byte> nchw = line_aligned_storage(input, Layout::channels_first);
    const LineAligned<std::byte> nhwc = line_aligned_storage(input, Layout::channels_last);
    EngineRunner reference_runner(reference::engine(), p, Layout::channels_first, nchw);
    reference_runner.run(2);
    const std::vector<double> expected = reference_runner.output_in_spec_order();
    const std::vector<int64_t> expected_indices = reference_runner.indices_in_spec_order();
    const ErrorBound reference_bound = reference::engine().error_bound(p, Layout::channels_first);
    const std::string reference_check =
        check_reference_against_spec(p, input, expected, reference_bound, options.quick ? 16 : 256);
    double max_abs = 0;
    for (double v : input.values) max_abs = std::max(max_abs, std::fabs(v));

    std::vector<Row> rows;
    auto add_engine = [&](const Engine& e, Layout layout, const LineAligned<std::byte>& data,
                          bool ours) {
      Row r;
      r.impl = std::string(e.name());
      r.layout = std::string(layout_name(layout));
      r.is_ours = ours;
      const optimized::Selection s = optimized::select_kernel(p, layout);
      r.detail =
          ours ? (s.kernel ? std::string(s.kernel->name) : "fallback: " + s.fallback_reason) : "";
      r.runner = std::make_unique<EngineRunner>(e, p, layout, data);
      rows.push_back(std::move(r));
    };
    add_engine(optimized::engine(), Layout::channels_first, nchw, true);
    add_engine(optimized::engine(), Layout::channels_last, nhwc, true);
    if (options.with_reference) {
      add_engine(reference::engine(), Layout::channels_first, nchw, false);
      if (std::unique_ptr<Runner> naive = make_naive(p, input)) {
        Row r;
        r.impl = "naive";
        r.layout = "nchw";
        r.detail = "naive loop (docs/benchmarks.md)";
        r.runner = std::move(naive);
        rows.push_back(std::move(r));
      }
    }
    for (PeerRunner& peer : make_peers(p, input)) {
      Row r;
      r.impl = peer.impl;
      r.layout = peer.layout;
      r.detail = peer.detail;
      r.is_peer = true;
      r.runner = std::move(peer.runner);
      rows.push_back(std::move(r));
    }
    {
      Row r;
      r.impl = "copy";
      r.layout = "-";
      r.detail = "the same bytes, copied";
      r.check = "not a pooling";
      r.runner = std::make_unique<CopyRunner>(static_cast<size_t>(shape.input_elements) * element,
                                              static_cast<size_t>(shape.output_elements) * element);
      rows.push_back(std::move(r));
    }
    // Check every row before timing it.
    for (Row& r : rows) {
      if (r.impl == "copy") continue;
      if (!r.runner->run(r.runner->runs_at(2) ? 2 : 1)) {
        r.check = "FAIL (the call failed)";
        continue;
      }
      const Engine& engine =
          r.is_ours ? static_cast<const Engine&>(optimized::engine()) : reference::engine();
      const Layout layout = r.layout == "nhwc" ? Layout::channels_last : Layout::channels_first;
      const ErrorBound bound =
          r.is_peer || r.impl == "naive" ? peer_bound(p) : engine.error_bound(p, layout);
      r.check = check_against_reference(p, expected, expected_indices, reference_bound,
                                        r.runner->output_in_spec_order(),
                                        r.runner->indices_in_spec_order(), bound, max_abs);
      if (r.is_ours && r.check != "pass") all_checked = false;
    }
    fmt::print("   reference vs the exact spec: {}\n", reference_check);

    // Interleaved rounds: for each (threads, cold/hot), every implementation in turn, `calls`
    // calls each per round.
    for (int threads : {1, 2}) {
      for (bool cold : {true, false}) {
        for (int round = 0; round < options.rounds; ++round) {
          for (Row& r : rows) {
            if (r.check.starts_with("FAIL (the call") || !r.runner->runs_at(threads)) continue;
            // Idle OpenMP and pthreadpool workers spin for ~20-30 ms after a call
            // (docs/benchmarks.md section 4); let them stop before the next implementation runs.
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
            const int calls = r.impl == "reference" || r.impl == "naive"
                                  ? std::max(1, options.calls / 2)
                                  : options.calls;
            for (int call = 0; call < calls; ++call) {
              if (cold) r.runner->flush_buffers();
              r.runner->wake(threads);
              clear_upper_state();
              const auto t0 = Clock::now();
              r.runner->run(threads);
              r.times[{threads, cold}].push_back(
                  std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            }
          }
        }
      }
    }

    // The table and the JSON lines.
    const auto median_of = [&](const std::string& impl, int threads, bool cold) {
      for (const Row& r : rows)
        if (r.impl == impl && r.times.count({threads, cold}))
          return median(r.times.at({threads, cold}));
      return 0.0;
    };
    fmt::print(
        "   {:<34} {:<8} {:>9} {:>9} {:>9} {:>9}  {:>6} {:>6} {:>6} {:>6}  {:>5} {:>5}  {}\n",
        "implementation", "layout", "1T cold", "1T hot", "2T cold", "2T hot", "r1c", "r1h", "r2c",
        "r2h", "x1c", "x2c", "check");
    for (Row& r : rows) {
      std::string line = fmt::format(
          "   {:<34} {:<8}", r.impl + (r.detail.empty() ? "" : " [" + r.detail + "]"), r.layout);
      std::string ratios, copies;
      for (int threads : {1, 2})
        for (bool cold : {true, false}) {
          const auto it = r.times.find({threads, cold});
          const double ms = it == r.times.end() ? 0 : median(it->second);
          double best_peer = 0;
          for (const Row& q : rows)
            if (q.is_peer && q.check == "pass" && q.times.count({threads, cold})) {
              const double m = median(q.times.at({threads, cold}));
              if (best_peer == 0 || m < best_peer) best_peer = m;
            }
          const double gbps = ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0;
          const double ratio = best_peer > 0 && ms > 0 ? ms / best_peer : 0;
          const double copy_ms = median_of("copy", threads, cold);
          const double to_copy = copy_ms > 0 && ms > 0 ? ms / copy_ms : 0;
          line += fmt::format(" {:>9.3f}", ms);
          ratios += fmt::format(" {:>6.2f}", ratio);
          if (cold) copies += fmt::format(" {:>5.2f}", to_copy);
          if (r.is_ours && cold) {
            if (ratio > 0) {
              if (w.headline) headline_ratios[threads].push_back(ratio);
              all_ratios[threads].push_back({ratio, w.name + " " + r.layout});
            }
            if (is_float(p.dtype) && to_copy > 0)
              copy_ratios[threads].push_back({to_copy, w.name + " " + r.layout});
          }
          json << nlohmann::json{{"workload", w.name},
                                 {"problem", format_problem(p)},
                                 {"implementation", r.impl},
                                 {"detail", r.detail},
                                 {"layout", r.layout},
                                 {"threads", threads},
                                 {"mode", cold ? "cold" : "hot"},
                                 {"median_ms", ms},
                                 {"gbps", gbps},
                                 {"fraction_of_read_bandwidth", gbps / bandwidth[threads]},
                                 {"ratio_to_best_peer", ratio},
                                 {"copy_ms", copy_ms},
                                 {"ratio_to_copy", to_copy},
                                 {"bandwidth_floor_ms", bytes / (bandwidth[threads] * 1e9) * 1e3},
                                 {"check", r.check}}
                      .dump()
               << "\n";
        }
      fmt::print("{} {} {} {}\n", line, ratios, copies, r.check);
    }
    // The reference engine's speed against the naive loop (issue: "within 3x of the naive loop").
    if (median_of("naive", 1, true) > 0 && median_of("reference", 1, true) > 0) {
      std::string line = "   reference / naive loop:";
      for (int threads : {1, 2})
        for (bool cold : {true, false}) {
          const double ratio =
              median_of("reference", threads, cold) / median_of("naive", threads, cold);
          line += fmt::format(" {}T {} {:.2f}", threads, cold ? "cold" : "hot", ratio);
          json << nlohmann::json{{"workload", w.name},
                                 {"reference_over_naive", ratio},
                                 {"threads", threads},
                                 {"mode", cold ? "cold" : "hot"}}
                      .dump()
               << "\n";
        }
      fmt::print("{}\n", line);
    }
    fmt::print(
        "   floor (in + out at the measured read bandwidth): {:.3f} ms at 1T, {:.3f} ms at 2T\n\n",
        bytes / (bandwidth[1] * 1e9) * 1e3, bytes / (bandwidth[2] * 1e9) * 1e3);
  }
  for (int threads : {1, 2}) {
    const std::vector<double>& r = headline_ratios[threads];
    if (r.empty()) continue;
    double log_sum = 0;
    for (double x : r) log_sum += std::log(x);
    fmt::print(
        "geomean of (optimized / best peer), six workloads, NCHW and NHWC, {}T cold: {:.3f} (max "
        "{:.3f})\n",
        threads, std::exp(log_sum / static_cast<double>(r.size())),
        *std::max_element(r.begin(), r.end()));
  }
  // Over every workload timed: the geomean, and the cells over the goals of docs/benchmarks.md
  // section 9 (at most the best peer; a float cell at most 1.3 times the copy at 1 thread).
  const auto summary = [](const char* what, std::vector<std::pair<double, std::string>> cells,
                          double goal) {
    if (cells.empty()) return;
    double log_sum = 0;
    for (const auto& c : cells) log_sum += std::log(c.first);
    std::sort(cells.begin(), cells.end(), std::greater<>());
    std::string over;
    for (const auto& [ratio, cell] : cells)
      if (ratio > goal) over += fmt::format("{}{} {:.2f}", over.empty() ? "" : ", ", cell, ratio);
    fmt::print("{}: geomean {:.3f} over {} cells; over {:.1f}: {}\n", what,
               std::exp(log_sum / static_cast<double>(cells.size())), cells.size(), goal,
               over.empty() ? "none" : over);
  };
  for (int threads : {1, 2}) {
    summary(fmt::format("optimized / best peer, every workload, {}T cold", threads).c_str(),
            all_ratios[threads], 1.0);
    summary(fmt::format("optimized / copy, float workloads, {}T cold", threads).c_str(),
            copy_ratios[threads], 1.3);
  }
  if (Status s = write_file_atomically(options.json_path, json.str()); !s) {
    fmt::print(stderr, "poolspec_bench: {}\n", s.error().message);
    return 2;
  }
  fmt::print("JSON lines: {}\n", options.json_path);
  return all_checked ? 0 : 1;
}

// The linked-in check's cost at its default sampling against oneDNN's own time, per workload
// (issue: certify, "under 1% of oneDNN's own time"): oneDNN's fastest plain or blocked layout at
// one thread, hot, then the checker over as many calls, in interleaved rounds; medians.
int check_overhead(const Options& options) {
  const reference::CheckOptions defaults;
  fmt::print(
      "linked-in check at its defaults ({} samples, on 1 call in {:.0f}) against oneDNN, 1 thread, "
      "hot\n",
      defaults.samples, 1 / defaults.rate);
  fmt::print("{:<20} {:>12} {:>16} {:>16} {:>10}\n", "workload", "oneDNN ms", "check us/call",
             "checked call us", "fraction");
  std::ostringstream json;
  bool all_under = true;
  for (const Workload& w : workloads()) {
    if (!w.headline) continue;
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), w.name) == options.only.end())
      continue;
    const Problem& p = w.problem;
    const ShapeInfo shape = validated_shape(p).value();
    const Tensor input = make_input(p);
    std::vector<PeerRunner> peers = make_peers(p, input);
    const std::vector<std::byte> in = to_storage(input, Layout::channels_first);
    std::vector<std::byte> out(static_cast<size_t>(shape.output_elements * storage_bytes(p.dtype)));
    (void)reference::engine().run(p, Layout::channels_first,
                                  RunArgs{in.data(), out.data(), nullptr, 2});
    const int calls = options.quick ? 64 : 640;
    std::vector<double> onednn_ms, check_us, checked_us;
    for (int round = 0; round < std::max(2, options.rounds); ++round) {
      double best_peer = INFINITY;  // oneDNN's fastest layout this round
      for (PeerRunner& peer : peers) {
        if (peer.impl != "onednn") continue;
        peer.runner->run(1);
        const auto t0 = Clock::now();
        for (int i = 0; i < options.calls; ++i) peer.runner->run(1);
        best_peer = std::min(
            best_peer,
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / options.calls);
      }
      onednn_ms.push_back(best_peer);
      reference::Checker sampled(defaults);
      auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i)
        if (!sampled.check(p, Layout::channels_first, in.data(), out.data()).ok())
          all_under = false;
      check_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                         calls);
      reference::CheckOptions every = defaults;
      every.rate = 1;
      reference::Checker each(every);
      t0 = Clock::now();
      for (int i = 0; i < 16; ++i)
        (void)each.check(p, Layout::channels_first, in.data(), out.data());
      checked_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                           16);
    }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double ms = median(onednn_ms), us = median(check_us), fraction = us / 1000 / ms;
    all_under = all_under && fraction < 0.01;
    fmt::print("{:<20} {:>12.3f} {:>16.3f} {:>16.1f} {:>9.3f}%\n", w.name, ms, us,
               median(checked_us), 100 * fraction);
    json << nlohmann::json{{"check_overhead", w.name},
                           {"problem", format_problem(p)},
                           {"onednn_ms", ms},
                           {"check_us_per_call", us},
                           {"checked_call_us", median(checked_us)},
                           {"samples", defaults.samples},
                           {"rate", defaults.rate},
                           {"fraction_of_onednn", fraction}}
                .dump()
         << "\n";
  }
  std::filesystem::path json_path(options.json_path);
  if (json_path.has_parent_path()) std::filesystem::create_directories(json_path.parent_path());
  if (Status s = write_file_atomically(options.json_path, json.str()); !s) {
    fmt::print(stderr, "poolspec_bench: {}\n", s.error().message);
    return 2;
  }
  fmt::print("{}\nJSON lines: {}\n",
             all_under ? "every workload under 1%" : "SOME WORKLOAD AT OR OVER 1%",
             options.json_path);
  return 0;
}

}  // namespace
}  // namespace poolspec::bench

int main(int argc, char** argv) {
  poolspec::bench::Options options;
  CLI::App app{
      "poolspec_bench: the optimized engine against the reference, oneDNN, XNNPACK and OpenCV DNN"};
  app.add_option("--json", options.json_path, "where the JSON lines go")->capture_default_str();
  app.add_option("--rounds", options.rounds, "interleaved rounds per (threads, cold/hot)")
      ->capture_default_str();
  app.add_option("--calls", options.calls, "calls per implementation per round")
      ->capture_default_str();
  app.add_option("--only", options.only, "run only these workloads");
  app.add_flag("--quick", options.quick, "one round, smaller bandwidth probe: a smoke run");
  bool no_reference = false;
  app.add_flag("--no-reference", no_reference, "do not time the reference engine");
  bool overhead = false;
  app.add_flag("--check-overhead", overhead,
               "time the linked-in check (reference/check.hpp) against oneDNN instead");
  CLI11_PARSE(app, argc, argv);
  options.with_reference = !no_reference;
  if (options.quick) {
    options.rounds = 1;
    options.calls = 2;
    options.bandwidth_bytes = size_t{64} << 20;
  }
  if (overhead) return poolspec::bench::check_overhead(options);
  return poolspec::bench::run(options);
}
