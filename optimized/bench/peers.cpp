#include "peers.hpp"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <type_traits>

#include <fmt/format.h>
#include <xnnpack.h>
#include <oneapi/dnnl/dnnl.hpp>
#ifdef POOLSPEC_BENCH_ATEN
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#endif
#ifdef POOLSPEC_BENCH_OPENCV
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#endif

#include "poolspec/shape.hpp"

namespace poolspec::bench {

ErrorBound peer_bound(const Problem& p) {
  if (p.op == Op::max || !is_float(p.dtype)) return ErrorBound{};
  int64_t taps = 1;
  for (const Axis& a : p.axes) taps *= a.kernel;
  return sum_bound(DType::f32, taps + 1, 0.5, "f32 sums, divided (or times the reciprocal)");
}

namespace {

// The CPUs the process may run on, in order (as it started: read once).
const std::vector<int>& allowed_cpus() {
  static const std::vector<int> cpus = [] {
    std::vector<int> out;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
    return out;
  }();
  return cpus;
}

// The calling thread onto the t-th allowed CPU (modulo their count).
void pin_current_thread(size_t t) {
  const std::vector<int>& cpus = allowed_cpus();
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpus[t % cpus.size()], &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// ---- oneDNN 2.6 ---------------------------------------------------------------------------------

// The oneDNN data type of a dtype the benchmark's oneDNN rows take (make_peers lists which).
dnnl::memory::data_type onednn_type(DType dtype) {
  using type = dnnl::memory::data_type;
  switch (dtype) {
    case DType::f32: return type::f32;
    case DType::bf16: return type::bf16;
    case DType::f16: return type::f16;
    case DType::u8: return type::u8;
    default: return type::s8;
  }
}

class OnednnRunner final : public Runner {
 public:
  OnednnRunner(const Problem& p, const Tensor& input, dnnl::memory::format_tag tag)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), p_(p) {
    using dnnl::memory;
    const size_t rank = p.axes.size();
    memory::dims src{p.batch, p.channels}, dst{p.batch, p.channels}, strides, kernel, dilation,
        pad_l, pad_r;
    const ShapeInfo shape = validated_shape(p).value();
    for (size_t i = 0; i < rank; ++i) {
      const Axis& a = p.axes[i];
      src.push_back(a.extent);
      dst.push_back(shape.output_shape[i + 2]);
      strides.push_back(a.stride);
      kernel.push_back(a.kernel);
      dilation.push_back(a.dilation - 1);  // oneDNN counts the gaps
      pad_l.push_back(a.pad_begin);
      pad_r.push_back(a.pad_end);
    }
    const memory::data_type type = onednn_type(p.dtype);
    const auto plain = rank == 3   ? memory::format_tag::ncdhw
                       : rank == 2 ? memory::format_tag::nchw
                                   : memory::format_tag::ncw;
    const dnnl::algorithm alg = p.op == Op::max ? dnnl::algorithm::pooling_max
                                : p.divisor == Divisor::exclude
                                    ? dnnl::algorithm::pooling_avg_exclude_padding
                                    : dnnl::algorithm::pooling_avg_include_padding;
    const dnnl::pooling_v2_forward::desc desc(
        dnnl::prop_kind::forward_inference, alg, memory::desc(src, type, tag),
        memory::desc(dst, type, memory::format_tag::any), strides, kernel, dilation, pad_l, pad_r);
    // oneDNN fixes a primitive's thread count when its descriptor is made (omp_get_max_threads()
    // then) and runs every later call on that many, whatever omp_set_num_threads says: one
    // primitive made at 2 threads took Inception's layer in nChw16c 0.31 ms cold in a "1-thread"
    // row, 0.55-0.57 ms under OMP_NUM_THREADS=1 or taskset to one core. So one primitive per
    // thread count, each made under that count.
    const int threads_before = omp_get_max_threads();
    std::optional<dnnl::pooling_v2_forward::primitive_desc> pd;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      pd.emplace(desc, engine_);
      primitives_.emplace(threads, dnnl::pooling_v2_forward(*pd));
    }
    omp_set_num_threads(threads_before);
    detail = pd->impl_info_str();
    // The input in the plain layout, then reordered into `tag`.
    memory plain_src({src, type, plain}, engine_);
    const std::vector<std::byte> bytes = to_storage(input, Layout::channels_first);
    std::memcpy(plain_src.get_data_handle(), bytes.data(), bytes.size());
    src_ = memory(pd->src_desc(), engine_);
    dnnl::reorder(plain_src, src_).execute(stream_, plain_src, src_);
    dst_ = memory(pd->dst_desc(), engine_);
    plain_dst_ = memory({dst, type, plain}, engine_);
    stream_.wait();
  }

  bool run(int threads) override {
    const auto primitive = primitives_.find(threads);
    if (primitive == primitives_.end()) return false;
    omp_set_num_threads(threads);
    primitive->second.execute(stream_, {{DNNL_ARG_SRC, src_}, {DNNL_ARG_DST, dst_}});
    stream_.wait();
    return true;
  }
  void flush_buffers() override {
    flush(src_.get_data_handle(), src_.get_desc().get_size());
    flush(dst_.get_data_handle(), dst_.get_desc().get_size());
  }
  std::vector<double> output_in_spec_order() override {
    dnnl::reorder(dst_, plain_dst_).execute(stream_, dst_, plain_dst_);
    stream_.wait();
    const auto* data = static_cast<const std::byte*>(plain_dst_.get_data_handle());
    return from_storage(p_.dtype, validated_shape(p_)->output_shape, Layout::channels_first,
                        std::span<const std::byte>(data, plain_dst_.get_desc().get_size()))
        .values;
  }

  std::string detail;

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  const Problem& p_;
  std::map<int, dnnl::pooling_v2_forward> primitives_;  // per thread count
  dnnl::memory src_, dst_, plain_dst_;
};

// ---- XNNPACK (2022 snapshot): NHWC, 2-D ---------------------------------------------------------

enum class XnnKind { f32_max, f32_avg, f32_global_avg, f16_max, s8_max, u8_max, qu8_avg };

// The operator each kind creates, as a row's detail.
constexpr const char* xnn_operator_names[] = {
    "max_pooling2d_nhwc_f32",    "average_pooling2d_nhwc_f32", "global_average_pooling_nwc_f32",
    "max_pooling2d_nhwc_f16",    "max_pooling2d_nhwc_s8",      "max_pooling2d_nhwc_u8",
    "average_pooling2d_nhwc_qu8"};

// The operators run on the problem's storage bytes in NHWC. An i8 average runs the qu8 operator
// on the same data shifted by +128 (zero point 128, scale 1), and its output is shifted back.
class XnnpackRunner final : public Runner {
 public:
  XnnpackRunner(const Problem& p, const Tensor& input, XnnKind kind)
      : p_(p), kind_(kind), shifted_(kind == XnnKind::qu8_avg && p.dtype == DType::i8) {
    const ShapeInfo shape = validated_shape(p).value();
    in_ = line_aligned_storage(input, Layout::channels_last);
    out_.resize(static_cast<size_t>(shape.output_elements * storage_bytes(p.dtype)));
    if (shifted_)
      for (std::byte& v : in_) v ^= std::byte{0x80};
    const Axis& h = p.axes[0];
    const Axis& w = p.axes[1];
    const auto C = static_cast<size_t>(p.channels);
    const float inf = std::numeric_limits<float>::infinity();
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    // XNNPACK's order: top, right, bottom, left padding; then the window, stride and dilation.
    const uint32_t t = u(h.pad_begin), r = u(w.pad_end), b = u(h.pad_end), l = u(w.pad_begin),
                   kh = u(h.kernel), kw = u(w.kernel), sh = u(h.stride), sw = u(w.stride),
                   dh = u(h.dilation), dw = u(w.dilation);
    xnn_status s = xnn_status_success;
    switch (kind) {
      case XnnKind::f32_max:
        s = xnn_create_max_pooling2d_nhwc_f32(t, r, b, l, kh, kw, sh, sw, dh, dw, C, C, C, -inf,
                                              inf, 0, &op_);
        break;
      case XnnKind::f32_avg:
        s = xnn_create_average_pooling2d_nhwc_f32(t, r, b, l, kh, kw, sh, sw, C, C, C, -inf, inf, 0,
                                                  &op_);
        break;
      case XnnKind::f32_global_avg:
        s = xnn_create_global_average_pooling_nwc_f32(C, C, C, -inf, inf, 0, &op_);
        break;
      case XnnKind::f16_max:
        s = xnn_create_max_pooling2d_nhwc_f16(t, r, b, l, kh, kw, sh, sw, dh, dw, C, C, C, -inf,
                                              inf, 0, &op_);
        break;
      case XnnKind::s8_max:
        s = xnn_create_max_pooling2d_nhwc_s8(t, r, b, l, kh, kw, sh, sw, dh, dw, C, C, C, -128, 127,
                                             0, &op_);
        break;
      case XnnKind::u8_max:
        s = xnn_create_max_pooling2d_nhwc_u8(t, r, b, l, kh, kw, sh, sw, dh, dw, C, C, C, 0, 255, 0,
                                             &op_);
        break;
      case XnnKind::qu8_avg:
        s = xnn_create_average_pooling2d_nhwc_qu8(t, r, b, l, kh, kw, sh, sw, C, C, C, 128, 1.0f,
                                                  128, 1.0f, 0, 255, 0, &op_);
        if (!shifted_ && s == xnn_status_success) {  // u8 data: zero point 0
          xnn_delete_operator(op_);
          op_ = nullptr;
          s = xnn_create_average_pooling2d_nhwc_qu8(t, r, b, l, kh, kw, sh, sw, C, C, C, 0, 1.0f, 0,
                                                    1.0f, 0, 255, 0, &op_);
        }
        break;
    }
    ok_ = s == xnn_status_success;
    // The 2-thread pool, made (and its threads pinned) once, not in a timed call.
    pool_2_ = pthreadpool_create(2);
    if (pool_2_) pin_pool_threads(pool_2_);
  }
  ~XnnpackRunner() override {
    if (op_) xnn_delete_operator(op_);
    if (pool_2_) pthreadpool_destroy(pool_2_);
  }
  bool ok() const { return ok_; }

  bool run(int threads) override {
    if (threads != threads_) {  // operators are set up against a thread pool
      if (threads > 2 || (threads == 2 && !pool_2_)) return false;
      pool_ = threads == 2 ? pool_2_ : nullptr;
      threads_ = threads;
      if (!setup()) return false;
    }
    return xnn_run_operator(op_, pool_) == xnn_status_success;
  }
  void flush_buffers() override {
    flush(in_.data(), in_.size());
    flush(out_.data(), out_.size());
  }
  void wake(int threads) override {  // the pool's own workers, with an empty job for each
    if (threads != threads_ || !pool_) return;
    pthreadpool_parallelize_1d(
        pool_, [](void*, size_t) {}, nullptr, static_cast<size_t>(threads), 0);
  }
  std::vector<double> output_in_spec_order() override {
    std::vector<std::byte> bytes(out_.begin(), out_.end());
    if (shifted_)
      for (std::byte& v : bytes) v ^= std::byte{0x80};
    return from_storage(p_.dtype, validated_shape(p_)->output_shape, Layout::channels_last, bytes)
        .values;
  }

 private:
  bool setup() {
    const auto N = static_cast<size_t>(p_.batch);
    const auto H = static_cast<size_t>(p_.axes[0].extent),
               W = static_cast<size_t>(p_.axes[1].extent);
    const auto* in = reinterpret_cast<const uint8_t*>(in_.data());
    auto* out = reinterpret_cast<uint8_t*>(out_.data());
    const auto* in_f = reinterpret_cast<const float*>(in_.data());
    auto* out_f = reinterpret_cast<float*>(out_.data());
    xnn_status s = xnn_status_success;
    switch (kind_) {
      case XnnKind::f32_max:
        s = xnn_setup_max_pooling2d_nhwc_f32(op_, N, H, W, in_f, out_f, pool_);
        break;
      case XnnKind::f32_avg:
        s = xnn_setup_average_pooling2d_nhwc_f32(op_, N, H, W, in_f, out_f, pool_);
        break;
      case XnnKind::f32_global_avg:
        s = xnn_setup_global_average_pooling_nwc_f32(op_, N, H * W, in_f, out_f, pool_);
        break;
      case XnnKind::f16_max:
        s = xnn_setup_max_pooling2d_nhwc_f16(op_, N, H, W, in, out, pool_);
        break;
      case XnnKind::s8_max:
        s = xnn_setup_max_pooling2d_nhwc_s8(op_, N, H, W, reinterpret_cast<const int8_t*>(in),
                                            reinterpret_cast<int8_t*>(out), pool_);
        break;
      case XnnKind::u8_max:
        s = xnn_setup_max_pooling2d_nhwc_u8(op_, N, H, W, in, out, pool_);
        break;
      case XnnKind::qu8_avg:
        s = xnn_setup_average_pooling2d_nhwc_qu8(op_, N, H, W, in, out, pool_);
        break;
    }
    return s == xnn_status_success;
  }

  // Each of the pool's threads onto its own CPU, as pin_openmp_threads does for OpenMP's: the
  // calling thread, which works in the pool's jobs too, keeps its own; each worker (created with
  // its creator's mask) takes the next one. One job of one item per thread, in which the caller
  // waits, sleeping, until every worker has taken an item (at most 100 ms).
  static void pin_pool_threads(pthreadpool_t pool) {
    struct Pinning {
      pthread_t caller = pthread_self();
      size_t threads = 0;
      std::mutex mutex;
      std::set<pthread_t> workers;
    } pinning;
    pinning.threads = pthreadpool_get_threads_count(pool);
    pthreadpool_parallelize_1d(
        pool,
        [](void* context, size_t) {
          auto& pin = *static_cast<Pinning*>(context);
          std::unique_lock<std::mutex> lock(pin.mutex);
          if (!pthread_equal(pthread_self(), pin.caller)) {
            if (pin.workers.insert(pthread_self()).second) pin_current_thread(pin.workers.size());
            return;
          }
          for (int wait = 0; wait < 1000 && pin.workers.size() + 1 < pin.threads; ++wait) {
            lock.unlock();
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            lock.lock();
          }
        },
        &pinning, pinning.threads, 0);
  }

  const Problem& p_;
  XnnKind kind_;
  bool shifted_;  // i8 data through a qu8 operator
  xnn_operator_t op_ = nullptr;
  pthreadpool_t pool_ = nullptr;    // the pool of the current thread count (none at 1)
  pthreadpool_t pool_2_ = nullptr;  // the 2-thread pool
  int threads_ = 0;
  bool ok_ = false;
  LineAligned<std::byte> in_, out_;
};

// ---- the naive loop
// ------------------------------------------------------------------------------

template <class T, class Sum>
class NaiveRunner final : public Runner {
 public:
  NaiveRunner(const Problem& p, const Tensor& input) : p_(p), shape_(validated_shape(p).value()) {
    in_.resize(input.values.size());
    for (size_t i = 0; i < in_.size(); ++i) in_[i] = static_cast<T>(input.values[i]);
    out_.resize(static_cast<size_t>(shape_.output_elements));
    // Up to three spatial axes, as (D, H, W) with 1 for the missing outer ones.
    const size_t missing = 3 - p.axes.size();
    for (size_t i = 0; i < 3; ++i) {
      axis_[i] = i < missing ? Axis{1, 1, 1, 1, 0, 0} : p.axes[i - missing];
      out_extent_[i] = i < missing ? 1 : shape_.output_shape[2 + i - missing];
    }
  }

  bool run(int threads) override {
    const Axis &ad = axis_[0], &ah = axis_[1], &aw = axis_[2];
    const int64_t OD = out_extent_[0], OH = out_extent_[1], OW = out_extent_[2];
    const int64_t planes = p_.batch * p_.channels;
    const bool avg = p_.op == Op::avg, exclude = p_.divisor == Divisor::exclude;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t nc = 0; nc < planes; ++nc) {
      const T* in = in_.data() + nc * ad.extent * ah.extent * aw.extent;
      T* out = out_.data() + nc * OD * OH * OW;
      for (int64_t od = 0; od < OD; ++od)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            Sum sum = 0;
            T best = std::numeric_limits<T>::lowest();
            int64_t count = 0;
            for (int64_t kd = 0; kd < ad.kernel; ++kd)
              for (int64_t kh = 0; kh < ah.kernel; ++kh)
                for (int64_t kw = 0; kw < aw.kernel; ++kw) {
                  const int64_t d = od * ad.stride - ad.pad_begin + kd,
                                h = oh * ah.stride - ah.pad_begin + kh,
                                w = ow * aw.stride - aw.pad_begin + kw;
                  if (d < 0 || d >= ad.extent || h < 0 || h >= ah.extent || w < 0 || w >= aw.extent)
                    continue;
                  const T v = in[(d * ah.extent + h) * aw.extent + w];
                  sum += v;
                  if (v > best) best = v;
                  ++count;
                }
            const int64_t divisor = exclude ? count : ad.kernel * ah.kernel * aw.kernel;
            T& o = out[(od * OH + oh) * OW + ow];
            if (!avg)
              o = best;
            else if (divisor == 0)
              o = 0;  // not in the benchmark's workloads
            else if constexpr (std::is_floating_point_v<T>)
              o = sum / static_cast<T>(divisor);
            else
              o = static_cast<T>(
                  std::nearbyint(static_cast<double>(sum) / static_cast<double>(divisor)));
          }
    }
    return true;
  }
  void flush_buffers() override {
    flush(in_.data(), in_.size() * sizeof(T));
    flush(out_.data(), out_.size() * sizeof(T));
  }
  std::vector<double> output_in_spec_order() override { return {out_.begin(), out_.end()}; }

 private:
  const Problem& p_;
  ShapeInfo shape_;
  Axis axis_[3];
  int64_t out_extent_[3];
  LineAligned<T> in_, out_;
};

#ifdef POOLSPEC_BENCH_OPENCV
// ---- OpenCV DNN 4.6: a one-layer net, NCHW f32, 2-D -------------------------------------------

// A Caffe-style Pooling layer on OpenCV's own CPU backend. The net is built and its input set
// once; a call is one forward(), which reuses the output blob it allocated on the first. One
// thread only: Debian's OpenCV runs its threads on TBB, a second pool of workers beside the
// OpenMP pool every other row uses, and two pools in one process on two cores would time how
// they share the cores rather than the pooling.
class OpencvRunner final : public Runner {
 public:
  OpencvRunner(const Problem& p, const Tensor& input)
      : in_(input.values.begin(), input.values.end()) {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    cv::setNumThreads(1);  // OpenCV's parallel loops run in the calling thread
    cv::dnn::LayerParams lp;
    lp.type = "Pooling";
    lp.name = "pool";
    lp.set("pool", p.op == Op::max ? "max" : "ave");
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    const Axis &h = p.axes[0], &w = p.axes[1];
    lp.set("kernel_h", i(h.kernel));
    lp.set("kernel_w", i(w.kernel));
    lp.set("stride_h", i(h.stride));
    lp.set("stride_w", i(w.stride));
    lp.set("pad_t", i(h.pad_begin));
    lp.set("pad_b", i(h.pad_end));
    lp.set("pad_l", i(w.pad_begin));
    lp.set("pad_r", i(w.pad_end));
    lp.set("ceil_mode", false);
    if (p.op == Op::avg) lp.set("ave_pool_padded_area", p.divisor != Divisor::exclude);
    net_.addLayerToPrev(lp.name, lp.type, lp);
    net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    const int dims[4] = {i(p.batch), i(p.channels), i(h.extent), i(w.extent)};
    net_.setInput(cv::Mat(4, dims, CV_32F, in_.data()));
    detail = "Pooling layer, DNN_BACKEND_OPENCV on the CPU";
  }
  bool runs_at(int threads) const override { return threads == 1; }
  bool run(int threads) override {
    if (threads != 1) return false;
    try {
      out_ = net_.forward();
    } catch (const cv::Exception&) {
      return false;
    }
    return true;
  }
  void flush_buffers() override {
    flush(in_.data(), in_.size() * sizeof(float));
    if (!out_.empty()) flush(out_.data, out_.total() * sizeof(float));
  }
  std::vector<double> output_in_spec_order() override {
    const cv::Mat dense = out_.isContinuous() ? out_ : out_.clone();
    return {dense.ptr<float>(), dense.ptr<float>() + dense.total()};
  }

  std::string detail;

 private:
  LineAligned<float> in_;
  cv::dnn::Net net_;
  cv::Mat out_;
};
#endif

#ifdef POOLSPEC_BENCH_ATEN
// ---- ATen (libtorch 1.13): what a PyTorch model calls on a CPU ----------------------------------

// at::max_pool{1,2,3}d, or at::max_pool{1,2,3}d_with_indices where the problem asks for indices
// (PyTorch's return_indices), and at::avg_pool{1,2,3}d, on a contiguous tensor ("nchw") or a
// channels_last one ("nhwc"), called as a model calls them: the output is allocated by the call.
// The previous output is released before each call (after its memory is flushed, when cold), so
// the allocator hands the same memory back, as in a model's steady state. ATen's threads are
// libgomp's, as the optimized engine's and oneDNN's are.
class AtenRunner final : public Runner {
 public:
  // Null when PyTorch's arguments cannot state the problem, or ATen refuses it on the first call.
  static std::unique_ptr<AtenRunner> make(const Problem& p, const Tensor& input,
                                          bool channels_last) {
    if (p.rounding != Rounding::floor || p.bias != 0 || p.input_zp != 0 || p.output_zp != 0 ||
        (p.op == Op::max && p.indices == Indices::tensor) ||
        (p.op == Op::avg && p.divisor != Divisor::exclude && p.divisor != Divisor::include_full))
      return nullptr;
    for (const Axis& a : p.axes)
      if (a.pad_begin != a.pad_end || 2 * a.pad_begin > a.kernel ||
          (p.op == Op::avg && a.dilation != 1))
        return nullptr;
    const std::optional<at::ScalarType> type = aten_type(p.dtype);
    if (!type || p.axes.empty() || p.axes.size() > 3) return nullptr;
    auto runner = std::unique_ptr<AtenRunner>(new AtenRunner(p, input, *type, channels_last));
    try {
      runner->call();
    } catch (const c10::Error& e) {
      fmt::print("   (ATen {}: {})\n", channels_last ? "channels_last" : "contiguous",
                 e.what_without_backtrace());
      return nullptr;
    }
    return runner;
  }

  bool run(int threads) override {
    set_threads(threads);
    try {
      call();
    } catch (const c10::Error&) {
      return false;
    }
    return true;
  }
  void flush_buffers() override {
    flush(x_.data_ptr(), x_.nbytes());
    if (y_.defined()) flush(y_.data_ptr(), y_.nbytes());
    if (indices_.defined()) flush(indices_.data_ptr(), indices_.nbytes());
    y_ = at::Tensor();  // the next call allocates it again, from the memory just flushed
    indices_ = at::Tensor();
  }
  void wake(int threads) override {
    set_threads(threads);
    Runner::wake(threads);
  }
  std::vector<double> output_in_spec_order() override {
    const at::Tensor y = y_.to(at::kDouble).contiguous();
    return {y.data_ptr<double>(), y.data_ptr<double>() + y.numel()};
  }
  std::vector<int64_t> indices_in_spec_order() override {
    if (!indices_.defined()) return {};
    const at::Tensor i = indices_.contiguous();
    return {i.data_ptr<int64_t>(), i.data_ptr<int64_t>() + i.numel()};
  }

  std::string detail;

 private:
  static std::optional<at::ScalarType> aten_type(DType dtype) {
    switch (dtype) {
      case DType::f32: return at::kFloat;
      case DType::f16: return at::kHalf;
      case DType::bf16: return at::kBFloat16;
      case DType::i8: return at::kChar;
      case DType::u8: return at::kByte;
      default: return std::nullopt;
    }
  }

  AtenRunner(const Problem& p, const Tensor& input, at::ScalarType type, bool channels_last)
      : p_(p) {
    std::vector<int64_t> sizes{p.batch, p.channels};
    for (const Axis& a : p.axes) {
      sizes.push_back(a.extent);
      kernel_.push_back(a.kernel);
      stride_.push_back(a.stride);
      padding_.push_back(a.pad_begin);
      dilation_.push_back(a.dilation);
    }
    std::vector<std::byte> bytes = to_storage(input, Layout::channels_first);
    const at::MemoryFormat format = !channels_last       ? at::MemoryFormat::Contiguous
                                    : p.axes.size() == 3 ? at::MemoryFormat::ChannelsLast3d
                                    : p.axes.size() == 2
                                        ? at::MemoryFormat::ChannelsLast
                                        : at::MemoryFormat::Contiguous;  // 1-D: no channels_last
    x_ = at::from_blob(bytes.data(), sizes, at::TensorOptions(type))
             .contiguous(format)
             .clone(format);
    const bool indices = p.op == Op::max && p.indices != Indices::none;
    detail = fmt::format("at::{}_pool{}d{}", p.op == Op::max ? "max" : "avg", p.axes.size(),
                         indices ? "_with_indices" : "");
  }

  // at::set_num_threads makes its thread pool anew (which took 16 ms a call here, its new threads
  // sharing the caller's core): only when the count changes, and before the timed call (wake).
  static void set_threads(int threads) {
    if (at::get_num_threads() != threads) at::set_num_threads(threads);
  }

  void call() {
    const bool include = p_.divisor != Divisor::exclude;
    const at::IntArrayRef k = kernel_, s = stride_, pad = padding_, dl = dilation_;
    const size_t rank = p_.axes.size();
    if (p_.op == Op::avg) {
      y_ = rank == 1   ? at::avg_pool1d(x_, k, s, pad, false, include)
           : rank == 2 ? at::avg_pool2d(x_, k, s, pad, false, include)
                       : at::avg_pool3d(x_, k, s, pad, false, include);
    } else if (p_.indices == Indices::none) {
      y_ = rank == 1   ? at::max_pool1d(x_, k, s, pad, dl)
           : rank == 2 ? at::max_pool2d(x_, k, s, pad, dl)
                       : at::max_pool3d(x_, k, s, pad, dl);
    } else {
      std::tie(y_, indices_) = rank == 1   ? at::max_pool1d_with_indices(x_, k, s, pad, dl)
                               : rank == 2 ? at::max_pool2d_with_indices(x_, k, s, pad, dl)
                                           : at::max_pool3d_with_indices(x_, k, s, pad, dl);
    }
  }

  const Problem& p_;
  std::vector<int64_t> kernel_, stride_, padding_, dilation_;
  at::Tensor x_, y_, indices_;
};
#endif

bool whole_plane(const Problem& p) {
  for (const Axis& a : p.axes)
    if (a.kernel != a.extent || a.pad_begin != 0 || a.pad_end != 0) return false;
  return true;
}

bool no_padding(const Problem& p) {
  for (const Axis& a : p.axes)
    if (a.pad_begin != 0 || a.pad_end != 0) return false;
  return true;
}

}  // namespace

std::unique_ptr<Runner> make_naive(const Problem& p, const Tensor& input) {
  if (p.axes.empty() || p.axes.size() > 3 || p.rounding != Rounding::floor || p.bias != 0 ||
      (p.op == Op::avg && p.divisor != Divisor::exclude && p.divisor != Divisor::include_full) ||
      (p.op == Op::avg && p.dtype == DType::i8 && p.int_rounding != IntRounding::half_even))
    return nullptr;
  for (const Axis& a : p.axes)
    if (a.dilation != 1) return nullptr;
  if (p.dtype == DType::f32) return std::make_unique<NaiveRunner<float, float>>(p, input);
  if (p.dtype == DType::i8) return std::make_unique<NaiveRunner<int8_t, int32_t>>(p, input);
  return nullptr;
}

LineAligned<std::byte> line_aligned_storage(const Tensor& t, Layout layout) {
  const std::vector<std::byte> bytes = to_storage(t, layout);
  return {bytes.begin(), bytes.end()};
}

void pin_openmp_threads(int threads) {
#pragma omp parallel num_threads(threads)
  pin_current_thread(static_cast<size_t>(omp_get_thread_num()));
}

void Runner::wake(int threads) {
  // The region returns once every thread has joined it, so all of them are running; each is
  // pinned again, in case the team's threads were made anew.
  pin_openmp_threads(threads);
}

void flush(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  for (size_t i = 0; i < bytes; i += 64) __builtin_ia32_clflush(p + i);
  __builtin_ia32_mfence();
}

std::vector<PeerRunner> make_peers(const Problem& p, const Tensor& input) {
  std::vector<PeerRunner> peers;
#ifdef POOLSPEC_BENCH_ATEN
  for (const bool channels_last : {false, true}) {
    if (channels_last && p.axes.size() == 1) continue;
    if (auto runner = AtenRunner::make(p, input, channels_last)) {
      std::string detail = runner->detail;
      peers.push_back({"aten", channels_last ? "nhwc" : "nchw", detail, std::move(runner)});
    }
  }
#endif
  // The peers below have no indices output.
  if (p.op == Op::max && p.indices != Indices::none) return peers;
  if (p.dtype != DType::f32 && p.dtype != DType::bf16 && p.dtype != DType::f16 &&
      p.dtype != DType::i8 && p.dtype != DType::u8)
    return peers;
  const size_t rank = p.axes.size();
  using tag = dnnl::memory::format_tag;
  const std::pair<const char*, tag> layouts[] = {
      {"nchw", rank == 3 ? tag::ncdhw : tag::nchw},
      {"nhwc", rank == 3 ? tag::ndhwc : tag::nhwc},
      {"nChw16c", rank == 3 ? tag::nCdhw16c : tag::nChw16c},
  };
  if (rank >= 2 && p.rounding == Rounding::floor && p.divisor != Divisor::include_clip)
    for (const auto& [name, t] : layouts) {
      try {
        auto runner = std::make_unique<OnednnRunner>(p, input, t);
        std::string detail = runner->detail;
        peers.push_back({"onednn", name, detail, std::move(runner)});
      } catch (const dnnl::error& e) {
        fmt::print("   (oneDNN {}: {})\n", name, e.what());
      }
    }
#ifdef POOLSPEC_BENCH_OPENCV
  // OpenCV's padded area is clipped at the padded extent (include_clip); with floor rounding no
  // window crosses it, so a full-include divisor is the same there. It has no dilation.
  if (rank == 2 && p.dtype == DType::f32 && p.rounding == Rounding::floor &&
      p.axes[0].dilation == 1 && p.axes[1].dilation == 1 &&
      (p.op == Op::max || p.divisor != Divisor::override_value)) {
    auto runner = std::make_unique<OpencvRunner>(p, input);
    std::string detail = runner->detail;
    peers.push_back({"opencv", "nchw", std::move(detail), std::move(runner)});
  }
#endif
  static const bool xnnpack_ready = xnn_initialize(nullptr) == xnn_status_success;
  if (!xnnpack_ready || rank != 2 || p.rounding != Rounding::floor) return peers;
  std::optional<XnnKind> kind;
  const bool f32 = p.dtype == DType::f32, max = p.op == Op::max;
  const bool avg_include = p.divisor == Divisor::include_full || no_padding(p);
  if (f32 && max)
    kind = XnnKind::f32_max;
  else if (f32 && whole_plane(p))
    kind = XnnKind::f32_global_avg;
  // XNNPACK's f32 average always excludes padding; its qu8 average always includes it.
  else if (f32 && (p.divisor == Divisor::exclude || no_padding(p)))
    kind = XnnKind::f32_avg;
  else if (p.dtype == DType::f16 && max)
    kind = XnnKind::f16_max;
  else if (p.dtype == DType::i8 && max)
    kind = XnnKind::s8_max;
  else if (p.dtype == DType::u8 && max)
    kind = XnnKind::u8_max;
  else if ((p.dtype == DType::i8 || p.dtype == DType::u8) && !max && avg_include)
    kind = XnnKind::qu8_avg;
  if (kind) {
    auto runner = std::make_unique<XnnpackRunner>(p, input, *kind);
    if (runner->ok()) {
      std::string detail = xnn_operator_names[static_cast<int>(*kind)];
      if (p.dtype == DType::i8 && *kind == XnnKind::qu8_avg) detail += " (+128)";
      peers.push_back({"xnnpack", "nhwc", std::move(detail), std::move(runner)});
    }
  }
  return peers;
}

}  // namespace poolspec::bench
