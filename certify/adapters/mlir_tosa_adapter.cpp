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
Compiled compiled(const poolspec_problem& p) {
  const std::string source = tosa_function(p);
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

int supports(const poolspec_backend*, const poolspec_problem* p, char* reason, size_t size) {
  if (const std::string why = refusal(*p); !why.empty()) {
    say(reason, size, why);
    return 0;
  }
  const Compiled c = compiled(*p);
  if (!c.error.empty()) {
    say(reason, size, "MLIR refuses: " + c.error);
    return 0;
  }
  return 1;
}

int run(const poolspec_backend*, const poolspec_problem* p, const void* input, void* output,
        int64_t*, char* message, size_t size) {
  const Compiled c = compiled(*p);
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

}  // namespace

extern "C" const poolspec_backend* poolspec_backend_entry(uint32_t index) {
  // linalg.pooling_nhwc_sum adds the window's taps in f32 in window order; the count's division
  // is one arith.divf. An int8 average sums in i32 and divides with tosa.apply_scale: compared
  // bit for bit (integer_units 0), as TOSA's division is exact.
  static const poolspec_backend backend{POOLSPEC_BACKEND_ABI_VERSION,
                                        "mlir-tosa",
                                        "MLIR 15 (tosa-to-linalg, one-shot bufferize, llc -O2)",
                                        "tosa",
                                        {POOLSPEC_F32, 1, 0.5, 0},
                                        nullptr,
                                        supports,
                                        run,
                                        nullptr,
                                        nullptr};
  return index == 0 ? &backend : nullptr;
}
