// oneDNN 2.6 (libdnnl-dev) as a poolspec backend: pooling_v2_forward in inference mode, the
// problem's layout given to oneDNN as is (backend "onednn": nchw / nhwc and their 1-D and 3-D
// forms), or reordered into the blocked nChw16c layout and back ("onednn-blocked"). It claims
// oneDNN's own rules (the onednn front-end): it maps the problem's geometry and algorithm onto
// the API as a framework integration does -- max -> pooling_max, exclude -> avg_exclude_padding,
// include (clip or full) -> avg_include_padding, ceil -> a larger padding_r -- and leaves every
// value-level choice (divisor of the overhang, NaN, the start of a max, integer rounding) to
// oneDNN, which is what certification checks.
#include <oneapi/dnnl/dnnl.hpp>

#include <string>

#include "adapter_support.hpp"

namespace {

using namespace poolspec::adapters;
using dnnl::memory;

struct Variant {
  bool blocked;
};

memory::data_type data_type_of(int32_t dtype, bool* ok) {
  *ok = true;
  switch (dtype) {
    case POOLSPEC_F32: return memory::data_type::f32;
    case POOLSPEC_F16: return memory::data_type::f16;
    case POOLSPEC_BF16: return memory::data_type::bf16;
    case POOLSPEC_I32: return memory::data_type::s32;
    case POOLSPEC_I8: return memory::data_type::s8;
    case POOLSPEC_U8: return memory::data_type::u8;
    default: *ok = false; return memory::data_type::undef;
  }
}

memory::format_tag plain_tag(const poolspec_problem& p) {
  const bool last = p.layout == POOLSPEC_NHWC;
  switch (p.spatial_rank) {
    case 1: return last ? memory::format_tag::nwc : memory::format_tag::ncw;
    case 2: return last ? memory::format_tag::nhwc : memory::format_tag::nchw;
    default: return last ? memory::format_tag::ndhwc : memory::format_tag::ncdhw;
  }
}

memory::format_tag blocked_tag(const poolspec_problem& p) {
  switch (p.spatial_rank) {
    case 1: return memory::format_tag::nCw16c;
    case 2: return memory::format_tag::nChw16c;
    default: return memory::format_tag::nCdhw16c;
  }
}

// Why oneDNN's API cannot state the problem, or "" when it can.
std::string refusal(const poolspec_problem& p) {
  bool ok = false;
  data_type_of(p.dtype, &ok);
  if (!ok) return "dtype f64: oneDNN has no f64 pooling";
  if (p.spatial_rank < 1 || p.spatial_rank > 3) return "oneDNN pools 1, 2 or 3 spatial axes";
  if (p.op == POOLSPEC_AVG && p.divisor == POOLSPEC_OVERRIDE)
    return "divisor override: oneDNN has no such algorithm";
  if (p.op == POOLSPEC_AVG && p.bias != 0) return "bias: oneDNN pooling adds none";
  if (p.op == POOLSPEC_AVG &&
      (p.input_zp != 0 || p.output_zp != 0 || p.int_rounding == POOLSPEC_TOSA_DIVISION))
    return "zero points and TOSA's division: oneDNN pooling has neither";
  if (p.op == POOLSPEC_MAX && p.indices != POOLSPEC_INDICES_NONE)
    return "indices: oneDNN's workspace holds kernel offsets, not the model's indices";
  return "";
}

struct Primitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::pooling_v2_forward::primitive_desc pd;
  memory::desc user_src, user_dst;
};

// Throws dnnl::error where oneDNN refuses (its message is the reason).
Primitive make(const poolspec_problem& p, bool blocked) {
  Primitive r;
  bool ok = false;
  const memory::data_type type = data_type_of(p.dtype, &ok);
  memory::dims src{p.batch, p.channels}, dst{p.batch, p.channels}, strides, kernel, dilation, pad_l,
      pad_r;
  for (int i = 0; i < p.spatial_rank; ++i) {
    const poolspec_axis& a = p.axes[i];
    src.push_back(a.extent);
    dst.push_back(a.output);
    strides.push_back(a.stride);
    kernel.push_back(a.kernel);
    dilation.push_back(a.dilation - 1);  // oneDNN counts the gaps (0-based)
    pad_l.push_back(a.pad_begin);
    pad_r.push_back(end_padding_for_extent(p, i));
  }
  const dnnl::algorithm alg = p.op == POOLSPEC_MAX ? dnnl::algorithm::pooling_max
                              : p.divisor == POOLSPEC_EXCLUDE
                                  ? dnnl::algorithm::pooling_avg_exclude_padding
                                  : dnnl::algorithm::pooling_avg_include_padding;
  r.user_src = memory::desc(src, type, plain_tag(p));
  r.user_dst = memory::desc(dst, type, plain_tag(p));
  const memory::desc src_md = blocked ? memory::desc(src, type, blocked_tag(p)) : r.user_src;
  const memory::desc dst_md = blocked ? memory::desc(dst, type, blocked_tag(p)) : r.user_dst;
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md,
                                            strides, kernel, dilation, pad_l, pad_r);
  r.pd = dnnl::pooling_v2_forward::primitive_desc(desc, r.engine);
  return r;
}

int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  const std::string why = refusal(*p);
  if (!why.empty()) {
    say(reason, size, why);
    return 0;
  }
  try {
    make(*p, static_cast<const Variant*>(self->context)->blocked);
  } catch (const dnnl::error& e) {
    say(reason, size, std::string("oneDNN refuses the primitive: ") + e.what());
    return 0;
  }
  return 1;
}

int run(const poolspec_backend* self, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  try {
    const bool blocked = static_cast<const Variant*>(self->context)->blocked;
    Primitive prim = make(*p, blocked);
    dnnl::stream stream(prim.engine);
    memory user_src(prim.user_src, prim.engine, const_cast<void*>(input));
    memory user_dst(prim.user_dst, prim.engine, output);
    memory src = user_src, dst = user_dst;
    if (blocked) {
      src = memory(prim.pd.src_desc(), prim.engine);
      dst = memory(prim.pd.dst_desc(), prim.engine);
      dnnl::reorder(user_src, src).execute(stream, user_src, src);
    }
    dnnl::pooling_v2_forward(prim.pd).execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    if (blocked) dnnl::reorder(dst, user_dst).execute(stream, dst, user_dst);
    stream.wait();
  } catch (const dnnl::error& e) {
    say(message, size, std::string("oneDNN: ") + e.what());
    return 1;
  }
  return 0;
}

// The caller gives oneDNN dst; oneDNN checks it against (d + padding_l + padding_r - K) / s + 1
// in C's integer division, which truncates toward zero (src/common/pooling.cpp).
int output_shape(const poolspec_backend* self, const poolspec_problem* p, int64_t* extents,
                 char* reason, size_t size) {
  return integration_output_shape(
      self, *p, [](int64_t span, int64_t stride) { return span / stride + 1; }, supports, extents,
      reason, size);
}

// oneDNN's reference and its jit kernels sum in f32 and divide once (docs/semantics.md 1b).
constexpr poolspec_accumulation f32_sums{POOLSPEC_F32, 1, 0.5, 0};

const Variant plain_variant{false}, blocked_variant{true};

const std::string version_text() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (" + v->hash + ")";
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  static const std::string version = version_text();
  static const poolspec_backend backends[] = {
      {POOLSPEC_BACKEND_ABI_VERSION, "onednn", version.c_str(), "onednn", f32_sums, nullptr,
       supports, run, const_cast<Variant*>(&plain_variant), output_shape},
      {POOLSPEC_BACKEND_ABI_VERSION, "onednn-blocked", version.c_str(), "onednn", f32_sums, nullptr,
       supports, run, const_cast<Variant*>(&blocked_variant), output_shape},
  };
  return index < 2 ? &backends[index] : nullptr;
}
