// Arm NN 20.08 (libarmnn-dev, with the CpuRef backend of libarmnn-cpuref-backend22) as a poolspec
// backend: a network of one Pooling2d layer, optimized for CpuRef and run, claiming Arm NN's
// rules (the armnn front-end). The problem maps onto a Pooling2dDescriptor as a framework's
// delegate fills it -- Max / Average, PaddingMethod Exclude or IgnoreValue, OutputShapeRounding
// Floor or Ceiling, NCHW or NHWC -- with f32, f16, and int8 / uint8 as QAsymmS8 / QAsymmU8 of
// scale 1 and offset 0; Arm NN infers the output shape itself and refuses a network whose output
// is given another one. output_shape asks that inference (IConnectableLayer::InferOutputShapes).
#include <armnn/ArmNN.hpp>
#include <armnn/Version.hpp>

#include <string>
#include <vector>

#include "adapter_support.hpp"

namespace {

using namespace poolspec::adapters;

// Why Pooling2d cannot state the problem, or "".
std::string refusal(const poolspec_problem& p) {
  if (p.spatial_rank != 2) return "Arm NN's Pooling2d pools 2-D images";
  switch (p.dtype) {
    case POOLSPEC_F32:
    case POOLSPEC_F16:
    case POOLSPEC_I8:
    case POOLSPEC_U8: break;
    default: return "dtype: CpuRef pools Float32, Float16, QAsymmS8 and QAsymmU8";
  }
  for (int i = 0; i < 2; ++i) {
    const poolspec_axis& a = p.axes[i];
    if (a.dilation != 1) return "dilation: Pooling2d has none";
    if (a.pad_begin < 0 || a.pad_end < 0) return "negative padding: Pooling2d's pads are unsigned";
    constexpr int64_t most = (int64_t{1} << 31) - 1;
    if (a.extent > most || a.kernel > most || a.stride > most || a.pad_begin > most ||
        a.pad_end > most)
      return "attributes beyond Pooling2d's 32-bit fields";
    // Debian's build keeps Arm NN's asserts: a zero stride aborts the process in shape inference.
    if (a.stride < 1) return "stride 0: Arm NN aborts (an assert) on it; refused before";
    if (a.kernel < 0) return "negative kernel: Pooling2d's sizes are unsigned";
  }
  if (p.batch > (int64_t{1} << 31) - 1 || p.channels > (int64_t{1} << 31) - 1)
    return "batch or channels beyond Arm NN's 32-bit dimensions";
  if (p.op == POOLSPEC_MAX) {
    if (p.indices != POOLSPEC_INDICES_NONE) return "indices: Pooling2d gives none";
    return "";
  }
  if (p.divisor == POOLSPEC_OVERRIDE || p.bias != 0)
    return "divisor override and bias: Pooling2d has neither";
  if (p.op == POOLSPEC_AVG &&
      (p.input_zp != 0 || p.output_zp != 0 || p.int_rounding == POOLSPEC_TOSA_DIVISION))
    return "zero points and TOSA's division: Pooling2d has neither";
  if (p.divisor == POOLSPEC_INCLUDE_FULL)
    return "include_full: IgnoreValue clips the window at the padded extent";
  return "";
}

armnn::IRuntime& runtime() {
  // The CpuRef backend is a dynamic backend: the runtime loads it from its folder.
  static armnn::IRuntimePtr r = [] {
    armnn::IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = ARMNN_DYNAMIC_BACKENDS;
    return armnn::IRuntime::Create(options);
  }();
  return *r;
}

armnn::Pooling2dDescriptor descriptor(const poolspec_problem& p) {
  armnn::Pooling2dDescriptor d;
  const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  const poolspec_axis &h = p.axes[0], &w = p.axes[1];
  d.m_PoolType =
      p.op == POOLSPEC_MAX ? armnn::PoolingAlgorithm::Max : armnn::PoolingAlgorithm::Average;
  d.m_PoolHeight = u(h.kernel);
  d.m_PoolWidth = u(w.kernel);
  d.m_StrideY = u(h.stride);
  d.m_StrideX = u(w.stride);
  d.m_PadTop = u(h.pad_begin);
  d.m_PadBottom = u(h.pad_end);
  d.m_PadLeft = u(w.pad_begin);
  d.m_PadRight = u(w.pad_end);
  d.m_OutputShapeRounding = p.rounding == POOLSPEC_FLOOR ? armnn::OutputShapeRounding::Floor
                                                         : armnn::OutputShapeRounding::Ceiling;
  d.m_PaddingMethod = p.op == POOLSPEC_AVG && p.divisor == POOLSPEC_EXCLUDE
                          ? armnn::PaddingMethod::Exclude
                          : armnn::PaddingMethod::IgnoreValue;
  d.m_DataLayout = p.layout == POOLSPEC_NHWC ? armnn::DataLayout::NHWC : armnn::DataLayout::NCHW;
  return d;
}

armnn::TensorInfo tensor_info(const poolspec_problem& p, bool output) {
  const auto u = [](int64_t v) { return static_cast<unsigned int>(v); };
  const unsigned int h = u(output ? p.axes[0].output : p.axes[0].extent),
                     w = u(output ? p.axes[1].output : p.axes[1].extent);
  const unsigned int n = u(p.batch), c = u(p.channels);
  const armnn::TensorShape shape = p.layout == POOLSPEC_NHWC ? armnn::TensorShape({n, h, w, c})
                                                             : armnn::TensorShape({n, c, h, w});
  switch (p.dtype) {
    case POOLSPEC_F16: return armnn::TensorInfo(shape, armnn::DataType::Float16);
    case POOLSPEC_I8: return armnn::TensorInfo(shape, armnn::DataType::QAsymmS8, 1.0f, 0);
    case POOLSPEC_U8: return armnn::TensorInfo(shape, armnn::DataType::QAsymmU8, 1.0f, 0);
    default: return armnn::TensorInfo(shape, armnn::DataType::Float32);
  }
}

int supports(const poolspec_backend*, const poolspec_problem* p, char* reason, size_t size) {
  const std::string why = refusal(*p);
  if (why.empty()) return 1;
  say(reason, size, why);
  return 0;
}

int run(const poolspec_backend*, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  try {
    armnn::IRuntime& rt = runtime();
    armnn::INetworkPtr net = armnn::INetwork::Create();
    armnn::IConnectableLayer* in = net->AddInputLayer(0, "input");
    armnn::IConnectableLayer* pool = net->AddPooling2dLayer(descriptor(*p), "pool");
    armnn::IConnectableLayer* out = net->AddOutputLayer(0, "output");
    in->GetOutputSlot(0).Connect(pool->GetInputSlot(0));
    pool->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    in->GetOutputSlot(0).SetTensorInfo(tensor_info(*p, false));
    // The problem's output shape: Optimize refuses it when Arm NN infers another.
    pool->GetOutputSlot(0).SetTensorInfo(tensor_info(*p, true));
    std::vector<std::string> messages;
    armnn::IOptimizedNetworkPtr optimized = armnn::Optimize(
        *net, {armnn::BackendId("CpuRef")}, rt.GetDeviceSpec(), armnn::OptimizerOptions(),
        armnn::Optional<std::vector<std::string>&>(messages));
    if (!optimized) {
      say(message, size,
          "Arm NN's Optimize gave no network" + (messages.empty() ? "" : ": " + messages[0]));
      return 1;
    }
    armnn::NetworkId id{};
    std::string error;
    if (rt.LoadNetwork(id, std::move(optimized), error, armnn::INetworkProperties()) !=
        armnn::Status::Success) {
      say(message, size, "Arm NN's LoadNetwork: " + error);
      return 1;
    }
    const armnn::InputTensors inputs{{0, armnn::ConstTensor(rt.GetInputTensorInfo(id, 0), input)}};
    const armnn::OutputTensors outputs{{0, armnn::Tensor(rt.GetOutputTensorInfo(id, 0), output)}};
    const armnn::Status status = rt.EnqueueWorkload(id, inputs, outputs);
    rt.UnloadNetwork(id);
    if (status != armnn::Status::Success) {
      say(message, size, "Arm NN's EnqueueWorkload failed");
      return 1;
    }
  } catch (const std::exception& e) {  // armnn::Exception, and boost's from the reference workload
    say(message, size, std::string("Arm NN: ") + e.what());
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
  try {
    armnn::INetworkPtr net = armnn::INetwork::Create();
    armnn::IConnectableLayer* pool = net->AddPooling2dLayer(descriptor(*p), "pool");
    const std::vector<armnn::TensorShape> shapes =
        pool->InferOutputShapes({tensor_info(*p, false).GetShape()});
    const bool nhwc = p->layout == POOLSPEC_NHWC;
    extents[0] = shapes.at(0)[nhwc ? 1 : 2];
    extents[1] = shapes.at(0)[nhwc ? 2 : 3];
  } catch (const std::exception& e) {
    say(reason, size, std::string("Arm NN: ") + e.what());
    return 0;
  }
  return 1;
}

// CpuRef sums in f32, rows then columns, and divides once (Pooling2d.cpp); its conversion of
// that f32 result into f16 is off by up to one f16 ulp (docs/findings.md ARMNN-4).
void accumulation_for(const poolspec_backend* self, const poolspec_problem* p,
                      poolspec_accumulation* out) {
  *out = self->accumulation;
  if (p->dtype == POOLSPEC_F16) out->output_ulps = 1.0;
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const poolspec_backend backend{POOLSPEC_BACKEND_ABI_VERSION,
                                        "armnn",
                                        "libarmnn " ARMNN_VERSION " (CpuRef)",
                                        "armnn",
                                        {POOLSPEC_F32, 1, 0.5, 0},
                                        accumulation_for,
                                        supports,
                                        run,
                                        nullptr,
                                        output_shape};
  return index == 0 ? &backend : nullptr;
}
