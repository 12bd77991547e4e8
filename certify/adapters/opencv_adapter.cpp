// OpenCV DNN 4.6 (libopencv-dnn-dev) as a poolspec backend: a one-layer net with a `Pooling`
// layer on the OpenCV backend and the CPU target, 2-D NCHW f32, claiming OpenCV's rules (the
// opencv front-end). The problem maps onto the layer's parameters as an importer sets them --
// pool max / ave, kernel_h/w, stride_h/w, pad_t/b/l/r, ceil_mode from the rounding, and
// ave_pool_padded_area for a divisor that counts padding (Caffe's clip) -- and OpenCV computes
// its own output extent, which must be the problem's: every value-level choice and the shape
// rule are OpenCV's, which certification checks. output_shape asks OpenCV's own shape inference
// (Net::getLayerShapes).
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include <string>
#include <vector>

#include "adapter_support.hpp"

namespace {

using namespace poolspec::adapters;

// Why the layer cannot state the problem, or "".
std::string refusal(const poolspec_problem& p) {
  if (p.spatial_rank != 2) return "this adapter pools 2-D NCHW images";
  if (p.layout != POOLSPEC_NCHW) return "layout nhwc: OpenCV's blobs are NCHW";
  if (p.dtype != POOLSPEC_F32) return "dtype: OpenCV's CPU pooling is f32";
  for (int i = 0; i < 2; ++i)
    if (p.axes[i].dilation != 1) return "dilation: OpenCV's Pooling layer has none";
  if (p.op == POOLSPEC_MAX) {
    if (p.indices != POOLSPEC_INDICES_NONE)
      return "indices: OpenCV's mask is a float plane index, not modelled";
    return "";
  }
  if (p.divisor == POOLSPEC_OVERRIDE || p.bias != 0)
    return "divisor override and bias: OpenCV has neither";
  if (p.op == POOLSPEC_AVG &&
      (p.input_zp != 0 || p.output_zp != 0 || p.int_rounding == POOLSPEC_TOSA_DIVISION))
    return "zero points and TOSA's division: OpenCV has neither";
  if (p.divisor == POOLSPEC_INCLUDE_FULL)
    return "include_full: OpenCV's padded area is clipped at the padded extent";
  return "";
}

cv::dnn::LayerParams layer_params(const poolspec_problem& p) {
  cv::dnn::LayerParams lp;
  lp.type = "Pooling";
  lp.name = "pool";
  lp.set("pool", p.op == POOLSPEC_MAX ? "max" : "ave");
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  const poolspec_axis &h = p.axes[0], &w = p.axes[1];
  lp.set("kernel_h", i(h.kernel));
  lp.set("kernel_w", i(w.kernel));
  lp.set("stride_h", i(h.stride));
  lp.set("stride_w", i(w.stride));
  lp.set("pad_t", i(h.pad_begin));
  lp.set("pad_b", i(h.pad_end));
  lp.set("pad_l", i(w.pad_begin));
  lp.set("pad_r", i(w.pad_end));
  lp.set("ceil_mode", p.rounding != POOLSPEC_FLOOR);
  if (p.op == POOLSPEC_AVG) lp.set("ave_pool_padded_area", p.divisor != POOLSPEC_EXCLUDE);
  return lp;
}

cv::dnn::Net make_net(const poolspec_problem& p) {
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  cv::dnn::Net net;
  cv::dnn::LayerParams lp = layer_params(p);
  net.addLayerToPrev(lp.name, lp.type, lp);
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  return net;
}

bool int_dims(const poolspec_problem& p) {
  constexpr int64_t most = int64_t{1} << 30;
  if (p.batch > most || p.channels > most) return false;
  for (int i = 0; i < 2; ++i)
    if (p.axes[i].extent > most || p.axes[i].kernel > most || p.axes[i].stride > most ||
        p.axes[i].pad_begin > most || p.axes[i].pad_end > most || p.axes[i].pad_begin < 0 ||
        p.axes[i].pad_end < 0)
      return false;
  return true;
}

// OpenCV's own output extents for the problem's attributes (its shape inference), or a refusal.
bool opencv_extents(const poolspec_problem& p, int64_t* extents, std::string* why) {
  if (!int_dims(p)) {
    *why = "attributes beyond OpenCV's int parameters";
    return false;
  }
  try {
    cv::dnn::Net net = make_net(p);
    const cv::dnn::MatShape in{static_cast<int>(p.batch), static_cast<int>(p.channels),
                               static_cast<int>(p.axes[0].extent),
                               static_cast<int>(p.axes[1].extent)};
    std::vector<cv::dnn::MatShape> ins, outs;
    net.getLayerShapes(in, net.getLayerId("pool"), ins, outs);
    if (outs.size() != 1 || outs[0].size() != 4) {
      *why = "OpenCV's shape inference gave no 4-D output";
      return false;
    }
    extents[0] = outs[0][2];
    extents[1] = outs[0][3];
    return true;
  } catch (const cv::Exception& e) {
    *why = std::string("OpenCV refuses: ") + e.what();
    return false;
  }
}

int supports(const poolspec_backend*, const poolspec_problem* p, char* reason, size_t size) {
  const std::string why = refusal(*p);
  if (!why.empty()) {
    say(reason, size, why);
    return 0;
  }
  if (!int_dims(*p)) {
    say(reason, size, "attributes beyond OpenCV's int parameters");
    return 0;
  }
  return 1;
}

int run(const poolspec_backend*, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  try {
    cv::dnn::Net net = make_net(*p);
    const int in_dims[4] = {static_cast<int>(p->batch), static_cast<int>(p->channels),
                            static_cast<int>(p->axes[0].extent),
                            static_cast<int>(p->axes[1].extent)};
    // OpenCV reads the blob (and does not write it): the caller's buffer, without a copy.
    const cv::Mat blob(4, in_dims, CV_32F, const_cast<void*>(input));
    net.setInput(blob);
    const cv::Mat out = net.forward();
    if (out.dims != 4 || out.size[2] != p->axes[0].output || out.size[3] != p->axes[1].output) {
      say(message, size,
          "OpenCV's output is " + std::to_string(out.dims == 4 ? out.size[2] : -1) + "x" +
              std::to_string(out.dims == 4 ? out.size[3] : -1) + ", the problem's " +
              std::to_string(p->axes[0].output) + "x" + std::to_string(p->axes[1].output) +
              " (its ceil rule drops a last window the rules keep, or keeps one they drop)");
      return 1;
    }
    const cv::Mat dense = out.isContinuous() ? out : out.clone();
    std::memcpy(output, dense.ptr<float>(), dense.total() * sizeof(float));
  } catch (const cv::Exception& e) {
    say(message, size, std::string("OpenCV: ") + e.what());
    return 1;
  }
  return 0;
}

int output_shape(const poolspec_backend*, const poolspec_problem* p, int64_t* extents, char* reason,
                 size_t size) {
  const std::string why = refusal(*p);
  if (!why.empty()) {
    say(reason, size, why);
    return 0;
  }
  std::string refused;
  if (opencv_extents(*p, extents, &refused)) return 1;
  say(reason, size, refused);
  return 0;
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  // An f32 sum in window order times the reciprocal of the divisor, rounded to f32 (two
  // roundings besides the additions).
  static const std::string version = std::string(CV_VERSION) + " (OpenCV backend, CPU)";
  static const poolspec_backend backend{POOLSPEC_BACKEND_ABI_VERSION,
                                        "opencv",
                                        version.c_str(),
                                        "opencv",
                                        {POOLSPEC_F32, 2, 0.5, 0},
                                        nullptr,
                                        supports,
                                        run,
                                        nullptr,
                                        output_shape};
  return index == 0 ? &backend : nullptr;
}
