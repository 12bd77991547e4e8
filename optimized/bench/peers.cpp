#include "peers.hpp"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include <fmt/format.h>
#include <xnnpack.h>
#include <oneapi/dnnl/dnnl.hpp>
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

// ---- oneDNN 2.6 ---------------------------------------------------------------------------------

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
    const auto type = p.dtype == DType::f32 ? memory::data_type::f32 : memory::data_type::s8;
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
    write_plain(plain_src, input.values);
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
    const size_t n = plain_dst_.get_desc().get_size() / (p_.dtype == DType::f32 ? 4 : 1);
    std::vector<double> out(n);
    if (p_.dtype == DType::f32) {
      const auto* v = static_cast<const float*>(plain_dst_.get_data_handle());
      for (size_t i = 0; i < n; ++i) out[i] = v[i];
    } else {
      const auto* v = static_cast<const int8_t*>(plain_dst_.get_data_handle());
      for (size_t i = 0; i < n; ++i) out[i] = v[i];
    }
    return out;
  }

  std::string detail;

 private:
  void write_plain(dnnl::memory& m, const std::vector<double>& values) {
    if (p_.dtype == DType::f32) {
      auto* v = static_cast<float*>(m.get_data_handle());
      for (size_t i = 0; i < values.size(); ++i) v[i] = static_cast<float>(values[i]);
    } else {
      auto* v = static_cast<int8_t*>(m.get_data_handle());
      for (size_t i = 0; i < values.size(); ++i) v[i] = static_cast<int8_t>(values[i]);
    }
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  const Problem& p_;
  std::map<int, dnnl::pooling_v2_forward> primitives_;  // per thread count
  dnnl::memory src_, dst_, plain_dst_;
};

// ---- XNNPACK (2022 snapshot): NHWC, 2-D ---------------------------------------------------------

enum class XnnKind { f32_max, f32_avg, f32_global_avg, s8_max, qu8_avg };

class XnnpackRunner final : public Runner {
 public:
  XnnpackRunner(const Problem& p, const Tensor& input, XnnKind kind) : p_(p), kind_(kind) {
    const ShapeInfo shape = validated_shape(p).value();
    const std::vector<std::byte> nhwc = to_storage(input, Layout::channels_last);
    const size_t in_n = static_cast<size_t>(shape.input_elements),
                 out_n = static_cast<size_t>(shape.output_elements);
    const Axis& h = p.axes[0];
    const Axis& w = p.axes[1];
    const auto C = static_cast<size_t>(p.channels);
    const float inf = std::numeric_limits<float>::infinity();
    xnn_status s = xnn_status_success;
    if (p.dtype == DType::f32) {
      in_f_.resize(in_n);
      out_f_.resize(out_n);
      std::memcpy(in_f_.data(), nhwc.data(), in_n * 4);
    } else {
      in_8_.resize(in_n);
      out_8_.resize(out_n);
      std::memcpy(in_8_.data(), nhwc.data(), in_n);
      // qu8 is unsigned with a zero point: the same data shifted by +128 (zero point 128, scale 1).
      if (kind == XnnKind::qu8_avg)
        for (uint8_t& v : in_8_) v = static_cast<uint8_t>(v ^ 0x80);
    }
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    switch (kind) {
      case XnnKind::f32_max:
        s = xnn_create_max_pooling2d_nhwc_f32(
            u(h.pad_begin), u(w.pad_end), u(h.pad_end), u(w.pad_begin), u(h.kernel), u(w.kernel),
            u(h.stride), u(w.stride), u(h.dilation), u(w.dilation), C, C, C, -inf, inf, 0, &op_);
        break;
      case XnnKind::f32_avg:
        s = xnn_create_average_pooling2d_nhwc_f32(
            u(h.pad_begin), u(w.pad_end), u(h.pad_end), u(w.pad_begin), u(h.kernel), u(w.kernel),
            u(h.stride), u(w.stride), C, C, C, -inf, inf, 0, &op_);
        break;
      case XnnKind::f32_global_avg:
        s = xnn_create_global_average_pooling_nwc_f32(C, C, C, -inf, inf, 0, &op_);
        break;
      case XnnKind::s8_max:
        s = xnn_create_max_pooling2d_nhwc_s8(
            u(h.pad_begin), u(w.pad_end), u(h.pad_end), u(w.pad_begin), u(h.kernel), u(w.kernel),
            u(h.stride), u(w.stride), u(h.dilation), u(w.dilation), C, C, C, -128, 127, 0, &op_);
        break;
      case XnnKind::qu8_avg:
        s = xnn_create_average_pooling2d_nhwc_qu8(
            u(h.pad_begin), u(w.pad_end), u(h.pad_end), u(w.pad_begin), u(h.kernel), u(w.kernel),
            u(h.stride), u(w.stride), C, C, C, 128, 1.0f, 128, 1.0f, 0, 255, 0, &op_);
        break;
    }
    ok_ = s == xnn_status_success;
  }
  ~XnnpackRunner() override {
    if (op_) xnn_delete_operator(op_);
    if (pool_) pthreadpool_destroy(pool_);
  }
  bool ok() const { return ok_; }

  bool run(int threads) override {
    if (threads != threads_) {  // operators are set up against a thread pool
      if (pool_) pthreadpool_destroy(pool_);
      pool_ = threads > 1 ? pthreadpool_create(static_cast<size_t>(threads)) : nullptr;
      threads_ = threads;
      if (!setup()) return false;
    }
    return xnn_run_operator(op_, pool_) == xnn_status_success;
  }
  void flush_buffers() override {
    if (!in_f_.empty()) {
      flush(in_f_.data(), in_f_.size() * 4);
      flush(out_f_.data(), out_f_.size() * 4);
    } else {
      flush(in_8_.data(), in_8_.size());
      flush(out_8_.data(), out_8_.size());
    }
  }
  std::vector<double> output_in_spec_order() override {
    const ShapeInfo shape = validated_shape(p_).value();
    std::vector<std::byte> bytes;
    if (!out_f_.empty()) {
      bytes.resize(out_f_.size() * 4);
      std::memcpy(bytes.data(), out_f_.data(), bytes.size());
    } else {
      bytes.resize(out_8_.size());
      for (size_t i = 0; i < out_8_.size(); ++i)
        bytes[i] = std::byte(kind_ == XnnKind::qu8_avg ? static_cast<uint8_t>(out_8_[i] ^ 0x80)
                                                       : out_8_[i]);
    }
    return from_storage(p_.dtype, shape.output_shape, Layout::channels_last, bytes).values;
  }

 private:
  bool setup() {
    const auto N = static_cast<size_t>(p_.batch);
    const auto H = static_cast<size_t>(p_.axes[0].extent),
               W = static_cast<size_t>(p_.axes[1].extent);
    xnn_status s = xnn_status_success;
    switch (kind_) {
      case XnnKind::f32_max:
        s = xnn_setup_max_pooling2d_nhwc_f32(op_, N, H, W, in_f_.data(), out_f_.data(), pool_);
        break;
      case XnnKind::f32_avg:
        s = xnn_setup_average_pooling2d_nhwc_f32(op_, N, H, W, in_f_.data(), out_f_.data(), pool_);
        break;
      case XnnKind::f32_global_avg:
        s = xnn_setup_global_average_pooling_nwc_f32(op_, N, H * W, in_f_.data(), out_f_.data(),
                                                     pool_);
        break;
      case XnnKind::s8_max:
        s = xnn_setup_max_pooling2d_nhwc_s8(op_, N, H, W,
                                            reinterpret_cast<const int8_t*>(in_8_.data()),
                                            reinterpret_cast<int8_t*>(out_8_.data()), pool_);
        break;
      case XnnKind::qu8_avg:
        s = xnn_setup_average_pooling2d_nhwc_qu8(op_, N, H, W, in_8_.data(), out_8_.data(), pool_);
        break;
    }
    return s == xnn_status_success;
  }

  const Problem& p_;
  XnnKind kind_;
  xnn_operator_t op_ = nullptr;
  pthreadpool_t pool_ = nullptr;
  int threads_ = 0;
  bool ok_ = false;
  LineAligned<float> in_f_, out_f_;
  LineAligned<uint8_t> in_8_, out_8_;
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

void flush(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  for (size_t i = 0; i < bytes; i += 64) __builtin_ia32_clflush(p + i);
  __builtin_ia32_mfence();
}

std::vector<PeerRunner> make_peers(const Problem& p, const Tensor& input) {
  std::vector<PeerRunner> peers;
  if (p.dtype != DType::f32 && p.dtype != DType::i8) return peers;
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
  if (p.dtype == DType::f32 && p.op == Op::max)
    kind = XnnKind::f32_max;
  else if (p.dtype == DType::f32 && whole_plane(p))
    kind = XnnKind::f32_global_avg;
  // XNNPACK's f32 average always excludes padding; its qu8 average always includes it.
  else if (p.dtype == DType::f32 && (p.divisor == Divisor::exclude || no_padding(p)))
    kind = XnnKind::f32_avg;
  else if (p.dtype == DType::i8 && p.op == Op::max)
    kind = XnnKind::s8_max;
  else if (p.dtype == DType::i8 && (p.divisor == Divisor::include_full || no_padding(p)))
    kind = XnnKind::qu8_avg;
  if (kind) {
    auto runner = std::make_unique<XnnpackRunner>(p, input, *kind);
    if (runner->ok()) {
      const char* names[] = {"max_pooling2d_nhwc_f32", "average_pooling2d_nhwc_f32",
                             "global_average_pooling_nwc_f32", "max_pooling2d_nhwc_s8",
                             "average_pooling2d_nhwc_qu8 (+128)"};
      peers.push_back({"xnnpack", "nhwc", names[static_cast<int>(*kind)], std::move(runner)});
    }
  }
  return peers;
}

}  // namespace poolspec::bench
