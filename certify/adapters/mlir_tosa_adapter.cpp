// MLIR 15's TOSA lowering (mlir-15-tools, libmlir-15-dev) as a poolspec backend claiming TOSA's
// rules: each problem becomes a function holding one tosa.avg_pool2d or tosa.max_pool2d (NHWC;
// f32, f16, bf16, or i8 with an int8 average's zero points as its quantization_info), which MLIR's
// own passes lower to LLVM IR and llc to machine code; the function is loaded
// and called through MLIR's C interface. The lowering, step by step (mlir_pipeline below):
//   1. tosa-to-linalg-named, tosa-to-linalg, tosa-to-arith, tosa-to-tensor: tensor.pad, then
//      linalg.pooling_nhwc_sum / _max, and for an average a linalg.generic dividing by a count
//      (int8: a tosa.apply_scale, which tosa-to-arith lowers only when asked to,
//      include-apply-rescale; in 64-bit arithmetic, as apply_scale_32 computes);
//   2. tensor.pad rewritten into linalg.fill + tensor.insert_slice (MLIR's GeneralizePadOpPattern,
//      reached in mlir-opt-15 through --test-linalg-transform-patterns=test-generalize-pad-tensor:
//      One-Shot Bufferize in MLIR 15 has no bufferization of tensor.pad);
//   3. One-Shot Bufferize over function boundaries (the result returned as a fresh allocation);
//   4. linalg to loops, affine, scf and cf; arith.maxf expanded (arith-expand: LLVM 15 has no
//      lowering of it), then memref, math, arith and func to the LLVM dialect;
//   5. mlir-translate-15 to LLVM IR; llc-15 -O2 to an object; the C compiler links it into a
//      shared library with MLIR's C runner utilities (memrefCopy).
// The adapter checks none of TOSA's ERROR_IFs itself: what MLIR refuses (its verifier, a pass) is
// refused through supports() with MLIR's message; what it compiles, runs. Certification under the
// tosa rules then shows what the lowering gets wrong (docs/findings.md).
//
// A second backend, "mlir-linalg", states the problem as frameworks lower pooling to StableHLO's
// reduce_window and a compiler lowers that to linalg: tensor.pad with the init value (-inf for
// max, 0 for add), linalg.pooling_nhwc_max / _sum with the window's strides and dilations, and
// for an average a division by the window size, or by the same reduction over a padded tensor of
// ones (divisor=count). It claims StableHLO's rules and takes what TOSA cannot state: dilation.
// From step 2 on it is lowered by the same pipeline.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "adapter_support.hpp"

extern char** environ;

namespace {

using namespace poolspec::adapters;
namespace fs = std::filesystem;

// A rank-4 memref as MLIR's C interface passes it (mlir/ExecutionEngine/CRunnerUtils.h); the
// element type is the function's (element_type below), f16 and bf16 as their 16 bits.
struct MemRef4 {
  void* allocated;
  void* aligned;
  int64_t offset;
  int64_t sizes[4];
  int64_t strides[4];
};
using PoolFunction = void (*)(MemRef4* result, MemRef4* input);

// Why the adapter does not state the problem as a TOSA graph, or "".
std::string refusal(const poolspec_problem& p) {
  if (p.spatial_rank != 2) return "tosa.avg_pool2d and tosa.max_pool2d pool 2-D images";
  if (p.layout != POOLSPEC_NHWC) return "layout nchw: TOSA's tensors are NHWC";
  if (p.dtype != POOLSPEC_F32 && p.dtype != POOLSPEC_F16 && p.dtype != POOLSPEC_BF16 &&
      p.dtype != POOLSPEC_I8)
    return "dtype: TOSA's pooling takes fp32, fp16, bf16 and int8";
  for (int i = 0; i < 2; ++i)
    if (p.axes[i].dilation != 1) return "dilation: TOSA's pooling has none";
  if (p.rounding != POOLSPEC_FLOOR)
    return "rounding: a TOSA graph's output extents are floor((d + pads - k) / s) + 1";
  if (p.op == POOLSPEC_MAX) {
    if (p.indices != POOLSPEC_INDICES_NONE) return "indices: TOSA's max_pool2d has none";
    if (p.max_start != POOLSPEC_MAX_FROM_FIRST || p.nan_policy != POOLSPEC_NAN_PROPAGATE)
      return "max: MLIR 15's tosa.max_pool2d has no nan_mode (the window's maximum only)";
    return "";
  }
  if (p.divisor != POOLSPEC_EXCLUDE || p.bias != 0)
    return "avg: TOSA never counts padding and has no bias";
  if (p.dtype == POOLSPEC_I8 && p.int_rounding != POOLSPEC_TOSA_DIVISION)
    return "int_rounding: TOSA's int8 average divides by reciprocal_scale and apply_scale_32";
  return "";
}

const char* element_type(int32_t dtype) {
  switch (dtype) {
    case POOLSPEC_F16: return "f16";
    case POOLSPEC_BF16: return "bf16";
    case POOLSPEC_I8: return "i8";
    default: return "f32";
  }
}

std::string dims(const poolspec_problem& p, bool output) {
  const auto e = [&](int i) { return output ? p.axes[i].output : p.axes[i].extent; };
  return std::to_string(p.batch) + "x" + std::to_string(e(0)) + "x" + std::to_string(e(1)) + "x" +
         std::to_string(p.channels) + "x" + element_type(p.dtype);
}

// The problem as a TOSA function, in MLIR 15's generic syntax (kernel, stride, pad attributes; an
// int8 average's zero points as its quantization_info, which MLIR 15 spells #tosa.unary_quant).
std::string tosa_function(const poolspec_problem& p) {
  const poolspec_axis &h = p.axes[0], &w = p.axes[1];
  const std::string in = "tensor<" + dims(p, false) + ">", out = "tensor<" + dims(p, true) + ">";
  std::ostringstream s;
  s << "func.func @pool(%x: " << in << ") -> " << out
    << " attributes {llvm.emit_c_interface} {\n  %y = \"tosa."
    << (p.op == POOLSPEC_MAX ? "max_pool2d" : "avg_pool2d") << "\"(%x) {kernel = [" << h.kernel
    << ", " << w.kernel << "], stride = [" << h.stride << ", " << w.stride << "], pad = ["
    << h.pad_begin << ", " << h.pad_end << ", " << w.pad_begin << ", " << w.pad_end << "]";
  if (p.op == POOLSPEC_AVG && p.dtype == POOLSPEC_I8)
    s << ", quantization_info = #tosa.unary_quant<input_zp = " << p.input_zp
      << ", output_zp = " << p.output_zp << ">";
  s << "} : (" << in << ") -> " << out << "\n  return %y : " << out << "\n}\n";
  return s.str();
}

// True when some window holds padding only (no tap inside the input on some axis).
bool has_padding_only_window(const poolspec_problem& p) {
  for (int a = 0; a < p.spatial_rank; ++a) {
    const poolspec_axis& x = p.axes[a];
    for (int64_t o = 0; o < x.output; ++o) {
      bool inside = false;
      for (int64_t k = 0; k < x.kernel && !inside; ++k) {
        const int64_t at = o * x.stride - x.pad_begin + k * x.dilation;
        inside = at >= 0 && at < x.extent;
      }
      if (!inside) return true;
    }
  }
  return false;
}

// Why the linalg form (reduce_window as lowered to linalg) cannot state the problem, or "".
std::string linalg_refusal(const poolspec_problem& p) {
  if (p.spatial_rank != 2) return "linalg.pooling_nhwc_* pool 2-D images";
  if (p.layout != POOLSPEC_NHWC) return "layout nchw: linalg.pooling_nhwc_* take NHWC";
  if (p.dtype != POOLSPEC_F32) return "dtype: f32 only";
  if (p.rounding != POOLSPEC_FLOOR)
    return "rounding: reduce_window's output extents are floor((d + pads - dilated k) / s) + 1";
  const bool empty = has_padding_only_window(p);
  if (p.op == POOLSPEC_MAX) {
    if (p.indices != POOLSPEC_INDICES_NONE) return "indices: reduce_window has none";
    if (p.max_start != POOLSPEC_MAX_FROM_FIRST || p.nan_policy != POOLSPEC_NAN_PROPAGATE)
      return "max: the window's maximum from -inf, NaN propagated (arith.maxf), only";
    if (empty && p.empty_window != POOLSPEC_EMPTY_NEG_INF)
      return "max: a window of padding only gives the init value, -inf";
    return "";
  }
  if (p.bias != 0) return "avg: no bias";
  if (p.divisor == POOLSPEC_EXCLUDE) {
    if (empty && p.empty_window != POOLSPEC_EMPTY_NAN)
      return "avg: a window of padding only is 0 / 0 = NaN under divisor=count";
    return "";
  }
  if (p.divisor != POOLSPEC_INCLUDE_FULL)
    return "avg: divided by the window size (divisor=window) or by a count of ones (divisor=count)";
  return "";
}

// reduce_window as lowered to linalg, in MLIR 15's syntax: the input padded with the init value
// and reduced by a named pooling op; an average divided elementwise by the window size or by the
// same reduction over padded ones.
std::string linalg_function(const poolspec_problem& p) {
  const poolspec_axis &h = p.axes[0], &w = p.axes[1];
  const bool max = p.op == POOLSPEC_MAX, count = !max && p.divisor == POOLSPEC_EXCLUDE;
  const std::string in = "tensor<" + dims(p, false) + ">", out = "tensor<" + dims(p, true) + ">";
  const std::string padded = "tensor<" + std::to_string(p.batch) + "x" +
                             std::to_string(h.extent + h.pad_begin + h.pad_end) + "x" +
                             std::to_string(w.extent + w.pad_begin + w.pad_end) + "x" +
                             std::to_string(p.channels) + "xf32>";
  const std::string window =
      "tensor<" + std::to_string(h.kernel) + "x" + std::to_string(w.kernel) + "xf32>";
  const std::string pads = "low[0, " + std::to_string(h.pad_begin) + ", " +
                           std::to_string(w.pad_begin) + ", 0] high[0, " +
                           std::to_string(h.pad_end) + ", " + std::to_string(w.pad_end) + ", 0]";
  const std::string op = max ? "linalg.pooling_nhwc_max" : "linalg.pooling_nhwc_sum";
  const std::string attributes =
      "{dilations = dense<[" + std::to_string(h.dilation) + ", " + std::to_string(w.dilation) +
      "]> : vector<2xi64>, strides = dense<[" + std::to_string(h.stride) + ", " +
      std::to_string(w.stride) + "]> : vector<2xi64>}";
  std::ostringstream s;
  // One reduction: `source` padded with `init`, reduced into a tensor filled with `init`.
  const auto reduce = [&](const std::string& name, const std::string& source) {
    s << "  %" << name << "_padded = tensor.pad " << source << " " << pads << " {\n"
      << "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
      << "    tensor.yield %init : f32\n  } : " << in << " to " << padded << "\n"
      << "  %" << name << "_empty = linalg.init_tensor [" << p.batch << ", " << h.output << ", "
      << w.output << ", " << p.channels << "] : " << out << "\n"
      << "  %" << name << "_acc = linalg.fill ins(%init : f32) outs(%" << name << "_empty : " << out
      << ") -> " << out << "\n"
      << "  %" << name << " = " << op << " " << attributes << " ins(%" << name
      << "_padded, %window : " << padded << ", " << window << ") outs(%" << name << "_acc : " << out
      << ") -> " << out << "\n";
  };
  s << "func.func @pool(%x: " << in << ") -> " << out << " attributes {llvm.emit_c_interface} {\n"
    << "  %init = arith.constant " << (max ? "0xFF800000" : "0.0") << " : f32\n"
    << "  %window = linalg.init_tensor [" << h.kernel << ", " << w.kernel << "] : " << window
    << "\n";
  reduce("sum", "%x");
  if (max) {
    s << "  return %sum : " << out << "\n}\n";
    return s.str();
  }
  if (count) {
    s << "  %one = arith.constant 1.0 : f32\n"
      << "  %ones_empty = linalg.init_tensor [" << p.batch << ", " << h.extent << ", " << w.extent
      << ", " << p.channels << "] : " << in << "\n"
      << "  %ones = linalg.fill ins(%one : f32) outs(%ones_empty : " << in << ") -> " << in << "\n";
    reduce("count", "%ones");
  } else {
    s << "  %count = arith.constant dense<" << h.kernel * w.kernel << ".0> : " << out << "\n";
  }
  s << "  %mean_empty = linalg.init_tensor [" << p.batch << ", " << h.output << ", " << w.output
    << ", " << p.channels << "] : " << out << "\n"
    << "  %mean = linalg.generic {indexing_maps = [affine_map<(n, i, j, c) -> (n, i, j, c)>, "
       "affine_map<(n, i, j, c) -> (n, i, j, c)>, affine_map<(n, i, j, c) -> (n, i, j, c)>], "
       "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} "
    << "ins(%sum, %count : " << out << ", " << out << ") outs(%mean_empty : " << out << ") {\n"
    << "  ^bb0(%a: f32, %b: f32, %unused: f32):\n"
    << "    %q = arith.divf %a, %b : f32\n    linalg.yield %q : f32\n  } -> " << out << "\n"
    << "  return %mean : " << out << "\n}\n";
  return s.str();
}

// Runs a program (argv[0] an absolute path) with stdout and stderr into `log`; "" when it exits 0,
// else the log's first lines.
std::string run_tool(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return argv[0] + ": cannot be started (" + std::strerror(spawned) + ")";
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::ifstream f(log);
  std::string text, line;
  for (int n = 0; n < 4 && std::getline(f, line); ++n) text += (n ? " | " : "") + line;
  return fs::path(argv[0]).filename().string() + " failed: " + text;
}

// The lowering (the comment at the top), MLIR 15's passes in order.
const std::vector<std::string> mlir_pipeline = {
    "--pass-pipeline=func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith{include-apply-"
    "rescale=true},tosa-to-tensor)",
    "--test-linalg-transform-patterns=test-generalize-pad-tensor",
    "--linalg-init-tensor-to-alloc-tensor",
    "--one-shot-bufferize=bufferize-function-boundaries allow-return-allocs",
    "--convert-linalg-to-loops",
    "--lower-affine",
    "--convert-scf-to-cf",
    "--arith-expand",
    "--convert-memref-to-llvm",
    "--convert-math-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm",
    "--reconcile-unrealized-casts"};

struct Compiled {
  void* library = nullptr;
  PoolFunction pool = nullptr;
  std::string error;  // MLIR's (or a tool's) refusal
};

// Compiles the function in a folder of its own, loads it, and removes the folder.
Compiled compile(const std::string& source) {
  Compiled c;
  char folder_template[] = "/tmp/poolspec-mlir-XXXXXX";
  const char* made = mkdtemp(folder_template);
  if (!made) {
    c.error = std::string("no temporary folder: ") + std::strerror(errno);
    return c;
  }
  const fs::path dir = made;
  const auto at = [&](const char* name) { return (dir / name).string(); };
  std::ofstream(at("pool.mlir")) << source;
  std::vector<std::string> opt{POOLSPEC_MLIR_OPT, at("pool.mlir"), "-o", at("lowered.mlir")};
  opt.insert(opt.begin() + 2, mlir_pipeline.begin(), mlir_pipeline.end());
  const std::vector<std::vector<std::string>> steps = {
      opt,
      {POOLSPEC_MLIR_TRANSLATE, "--mlir-to-llvmir", at("lowered.mlir"), "-o", at("pool.ll")},
      {POOLSPEC_LLC, "-O2", "-filetype=obj", "-relocation-model=pic", at("pool.ll"), "-o",
       at("pool.o")},
      {POOLSPEC_MLIR_CC, "-shared", at("pool.o"), "-o", at("pool.so"),
       "-L" POOLSPEC_MLIR_RUNTIME_DIR, "-lmlir_c_runner_utils",
       "-Wl,-rpath," POOLSPEC_MLIR_RUNTIME_DIR}};
  for (const std::vector<std::string>& step : steps) {
    c.error = run_tool(step, dir / "log.txt");
    if (!c.error.empty()) break;
  }
  if (c.error.empty()) {
    c.library = dlopen(at("pool.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!c.library) c.error = std::string("dlopen: ") + dlerror();
  }
  if (c.library) {
    c.pool = reinterpret_cast<PoolFunction>(dlsym(c.library, "_mlir_ciface_pool"));
    if (!c.pool) c.error = "the lowered library has no _mlir_ciface_pool";
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);  // a loaded library stays mapped
  return c;
}

// Compiled functions by problem: certify calls each problem twice, and supports() before run().
// At most `most_kept` are kept loaded; past that the cache starts again.
std::mutex cache_mutex;
std::map<std::string, Compiled> cache;
constexpr size_t most_kept = 256;

// A copy: the entry stays valid while the lock is not held (certify calls a worker's backend one
// call at a time, so no call is running when the cache starts again).
Compiled compiled(const std::string& source) {
  const std::lock_guard lock(cache_mutex);
  auto it = cache.find(source);
  if (it != cache.end()) return it->second;
  if (cache.size() >= most_kept) {
    for (auto& [key, c] : cache)
      if (c.library) dlclose(c.library);
    cache.clear();
  }
  return cache.emplace(source, compile(source)).first->second;
}

// The two forms a problem is stated in: TOSA's operators, or reduce_window's linalg lowering.
struct Form {
  std::string (*refusal)(const poolspec_problem&);
  std::string (*function)(const poolspec_problem&);
};
const Form tosa_form{refusal, tosa_function}, linalg_form{linalg_refusal, linalg_function};
const Form& form_of(const poolspec_backend* self);

int supports(const poolspec_backend* self, const poolspec_problem* p, char* reason, size_t size) {
  const Form& form = form_of(self);
  if (const std::string why = form.refusal(*p); !why.empty()) {
    say(reason, size, why);
    return 0;
  }
  const Compiled c = compiled(form.function(*p));
  if (!c.error.empty()) {
    say(reason, size, "MLIR refuses: " + c.error);
    return 0;
  }
  return 1;
}

int run(const poolspec_backend* self, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  const Compiled c = compiled(form_of(self).function(*p));
  if (!c.pool) {
    say(message, size, "MLIR refuses: " + c.error);
    return 1;
  }
  const int64_t h = p->axes[0].extent, w = p->axes[1].extent, ch = p->channels;
  void* in = const_cast<void*>(input);  // read only
  MemRef4 x{in, in, 0, {p->batch, h, w, ch}, {h * w * ch, w * ch, ch, 1}};
  MemRef4 y{};
  c.pool(&y, &x);
  const int64_t sizes[4] = {p->batch, p->axes[0].output, p->axes[1].output, ch};
  for (int i = 0; i < 4; ++i)
    if (y.sizes[i] != sizes[i]) {
      say(message, size, "the lowered function's result has another shape");
      if (y.allocated != in) std::free(y.allocated);
      return 1;
    }
  const size_t bytes = size_t(element_bytes(p->dtype));
  const auto* result = static_cast<const unsigned char*>(y.aligned);
  auto* out = static_cast<unsigned char*>(output);
  for (int64_t n = 0; n < sizes[0]; ++n)
    for (int64_t i = 0; i < sizes[1]; ++i)
      for (int64_t j = 0; j < sizes[2]; ++j)
        for (int64_t k = 0; k < sizes[3]; ++k, out += bytes)
          std::memcpy(out,
                      result + size_t(y.offset + n * y.strides[0] + i * y.strides[1] +
                                      j * y.strides[2] + k * y.strides[3]) *
                                   bytes,
                      bytes);
  if (y.allocated != in) std::free(y.allocated);
  return 0;
}

// linalg.pooling_nhwc_sum adds the window's taps in f32 in window order; the division is one
// arith.divf. An int8 average sums in i32 and divides with tosa.apply_scale: compared bit for bit
// (integer_units 0), as TOSA's division is exact.
const poolspec_backend backends[] = {
    {POOLSPEC_BACKEND_ABI_VERSION,
     "mlir-tosa",
     "MLIR 15 (tosa-to-linalg, one-shot bufferize, llc -O2)",
     "tosa",
     {POOLSPEC_F32, 1, 0.5, 0},
     nullptr,
     supports,
     run,
     nullptr,
     nullptr},
    {POOLSPEC_BACKEND_ABI_VERSION,
     "mlir-linalg",
     "MLIR 15 (reduce_window as linalg pooling, one-shot bufferize, llc -O2)",
     "stablehlo",
     {POOLSPEC_F32, 1, 0.5, 0},
     nullptr,
     supports,
     run,
     nullptr,
     nullptr}};

const Form& form_of(const poolspec_backend* self) {
  return self == &backends[1] ? linalg_form : tosa_form;
}

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  return index < std::size(backends) ? &backends[index] : nullptr;
}
