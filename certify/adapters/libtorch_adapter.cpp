// libtorch (libtorch-dev 1.13, optional: not in scripts/install-deps.sh) as a poolspec backend,
// claiming PyTorch's rules: at::avg_pool{1,2,3}d and at::max_pool{1,2,3}d_with_indices on the
// caller's buffers (strided views, so nchw and nhwc alike). The problem maps onto PyTorch's
// arguments as a user would write them -- symmetric padding, ceil_mode for ceil and ceil_torch,
// count_include_pad for an include divisor, divisor_override, dilation for max, indices per
// plane -- and every value-level choice is PyTorch's, which certification checks.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "adapter_support.hpp"

namespace {

using namespace poolspec::adapters;

bool dtype_of(int32_t dtype, at::ScalarType* out) {
  switch (dtype) {
    case POOLSPEC_F64: *out = at::kDouble; return true;
    case POOLSPEC_F32: *out = at::kFloat; return true;
    case POOLSPEC_F16: *out = at::kHalf; return true;
    case POOLSPEC_BF16: *out = at::kBFloat16; return true;
    case POOLSPEC_I32: *out = at::kInt; return true;
    case POOLSPEC_I8: *out = at::kChar; return true;
    case POOLSPEC_U8: *out = at::kByte; return true;
    default: return false;
  }
}

// Why PyTorch's arguments cannot state the problem, or "".
std::string refusal(const poolspec_problem& p) {
  at::ScalarType t;
  if (!dtype_of(p.dtype, &t)) return "dtype";
  if (p.spatial_rank < 1 || p.spatial_rank > 3) return "PyTorch pools 1, 2 or 3 spatial axes";
  for (int i = 0; i < p.spatial_rank; ++i)
    if (p.axes[i].pad_begin != p.axes[i].pad_end)
      return "asymmetric padding: PyTorch's padding is symmetric";
  if (p.rounding == POOLSPEC_CEIL)
    return "ceil without dropping a window in the end padding: PyTorch's ceil_mode drops it";
  if (p.op == POOLSPEC_AVG) {
    if (p.bias != 0) return "bias: PyTorch adds none";
    if (p.input_zp != 0 || p.output_zp != 0 || p.int_rounding == POOLSPEC_TOSA_DIVISION)
      return "zero points and TOSA's division: PyTorch has neither";
    for (int i = 0; i < p.spatial_rank; ++i)
      if (p.axes[i].dilation != 1) return "dilation: PyTorch's avg_pool has none";
    if (p.divisor == POOLSPEC_OVERRIDE && p.spatial_rank == 1)
      return "divisor_override: avg_pool1d has none";
  } else {
    if (p.indices == POOLSPEC_INDICES_TENSOR || p.index_order == POOLSPEC_COLUMN_MAJOR)
      return "indices: PyTorch's are per plane, row-major";
  }
  return "";
}

std::vector<int64_t> sizes_of(const poolspec_problem& p, bool output) {
  std::vector<int64_t> s{p.batch, p.channels};
  for (int i = 0; i < p.spatial_rank; ++i)
    s.push_back(output ? p.axes[i].output : p.axes[i].extent);
  return s;
}

// Element strides of a dense (N, C, d...) tensor stored in the problem's layout.
std::vector<int64_t> strides_of(const poolspec_problem& p, const std::vector<int64_t>& sizes) {
  const size_t rank = sizes.size();
  std::vector<int64_t> st(rank);
  if (p.layout == POOLSPEC_NCHW) {
    st[rank - 1] = 1;
    for (size_t i = rank - 1; i-- > 0;) st[i] = st[i + 1] * sizes[i + 1];
  } else {  // (N, d..., C)
    st[1] = 1;
    int64_t step = sizes[1];
    for (size_t i = rank - 1; i >= 2; --i) {
      st[i] = step;
      step *= sizes[i];
    }
    st[0] = step;
  }
  return st;
}

// Runs the op; throws c10::Error where PyTorch refuses.
void compute(const poolspec_problem& p, const void* input, void* output, int64_t* indices) {
  at::ScalarType type;
  dtype_of(p.dtype, &type);
  const std::vector<int64_t> in_sizes = sizes_of(p, false), out_sizes = sizes_of(p, true);
  const at::Tensor x = at::from_blob(const_cast<void*>(input), in_sizes, strides_of(p, in_sizes),
                                     at::TensorOptions(type));
  std::vector<int64_t> kernel, stride, padding, dilation;
  for (int i = 0; i < p.spatial_rank; ++i) {
    kernel.push_back(p.axes[i].kernel);
    stride.push_back(p.axes[i].stride);
    padding.push_back(p.axes[i].pad_begin);
    dilation.push_back(p.axes[i].dilation);
  }
  const bool ceil = p.rounding == POOLSPEC_CEIL_TORCH;
  at::Tensor y, idx;
  if (p.op == POOLSPEC_AVG) {
    const bool include = p.divisor != POOLSPEC_EXCLUDE;
    const c10::optional<int64_t> override_value =
        p.divisor == POOLSPEC_OVERRIDE ? c10::optional<int64_t>(p.divisor_override) : c10::nullopt;
    switch (p.spatial_rank) {
      case 1: y = at::avg_pool1d(x, kernel, stride, padding, ceil, include); break;
      case 2: y = at::avg_pool2d(x, kernel, stride, padding, ceil, include, override_value); break;
      default: y = at::avg_pool3d(x, kernel, stride, padding, ceil, include, override_value); break;
    }
  } else {
    switch (p.spatial_rank) {
      case 1:
        std::tie(y, idx) = at::max_pool1d_with_indices(x, kernel, stride, padding, dilation, ceil);
        break;
      case 2:
        std::tie(y, idx) = at::max_pool2d_with_indices(x, kernel, stride, padding, dilation, ceil);
        break;
      default:
        std::tie(y, idx) = at::max_pool3d_with_indices(x, kernel, stride, padding, dilation, ceil);
        break;
    }
  }
  if (y.sizes() != at::IntArrayRef(out_sizes))
    throw c10::Error({__func__, __FILE__, __LINE__},
                     "PyTorch's output shape differs from the spec's extents");
  if (output)
    at::from_blob(output, out_sizes, strides_of(p, out_sizes), at::TensorOptions(type)).copy_(y);
  if (indices && idx.defined())
    at::from_blob(indices, out_sizes, strides_of(p, out_sizes), at::TensorOptions(at::kLong))
        .copy_(idx);
}

int supports(const poolspec_backend*, const poolspec_problem* p, char* reason, size_t size) {
  const std::string why = refusal(*p);
  if (!why.empty()) {
    say(reason, size, why);
    return 0;
  }
  try {  // PyTorch's own checks (dtypes per op, pads at most half the kernel), on zeros
    at::ScalarType type;
    dtype_of(p->dtype, &type);
    const at::Tensor zeros = at::zeros(sizes_of(*p, false), at::TensorOptions(type));
    compute(*p, zeros.data_ptr(), nullptr, nullptr);
  } catch (const c10::Error& e) {
    say(reason, size, std::string("PyTorch refuses: ") + e.what_without_backtrace());
    return 0;
  }
  return 1;
}

int run(const poolspec_backend*, const poolspec_problem* p, const void* input, void* output,
        int64_t* indices, char* message, size_t size) {
  try {
    compute(*p, input, output, indices);
  } catch (const c10::Error& e) {
    say(message, size, std::string("PyTorch: ") + e.what_without_backtrace());
    return 1;
  }
  return 0;
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  // PyTorch's CPU kernels sum in the accumulation type (double for f32 on CPU, float for the
  // 16-bit formats) and divide once; f32 sums are declared, the wider bound.
  static const poolspec_backend backend{POOLSPEC_BACKEND_ABI_VERSION,
                                        "libtorch",
                                        "libtorch-dev 1.13",
                                        "pytorch",
                                        {POOLSPEC_F32, 1, 0.5, 0},
                                        nullptr,
                                        supports,
                                        run,
                                        nullptr,
                                        nullptr};
  return index == 0 ? &backend : nullptr;
}
