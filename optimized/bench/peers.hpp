// The benchmark's peers: oneDNN (nchw, nhwc, nChw16c), XNNPACK (nhwc) and, where installed,
// ATen (libtorch: contiguous and channels_last) and OpenCV DNN (nchw, 1 thread), each behind the
// same small runner interface as the project's engines. A peer that cannot express a problem (a
// layout, an algorithm, a dtype) is simply not listed for it.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "poolspec/engine.hpp"
#include "poolspec/tensor.hpp"

namespace poolspec::bench {

// Every buffer the benchmark hands an implementation starts on a 64-byte cache line, as
// frameworks' tensors do (oneDNN allocates its own memory so). glibc's large allocations start
// 16 bytes into a page: there every 64-byte vector load would span two lines, a cost of the
// harness and not of the implementation (7x7 average, hot: 1.05 ms against 0.89 aligned).
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = (n * sizeof(T) + 63) / 64 * 64;  // aligned_alloc wants a multiple of 64
    if (void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes)) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};
template <class T>
using LineAligned = std::vector<T, CacheLineAllocator<T>>;

// to_storage's bytes, in a LineAligned buffer.
LineAligned<std::byte> line_aligned_storage(const Tensor& t, Layout layout);

class Runner {
 public:
  virtual ~Runner() = default;
  virtual bool run(int threads) = 0;
  virtual bool runs_at(int threads) const { return threads >= 1; }  // a row for this thread count
  virtual void flush_buffers() = 0;  // input and output out of the caches
  // Called just before each timed call: the threads the call will use are woken first, as they
  // are inside a network, where the layer before ran on them (docs/benchmarks.md section 4.2).
  // This one wakes OpenMP's (libgomp's) threads, which the engines, oneDNN and ATen run on.
  virtual void wake(int threads);
  virtual std::vector<double> output_in_spec_order() = 0;  // (N, C, o...) values
  // A max with indices: the indices, in the same order; empty where the runner gives none.
  virtual std::vector<int64_t> indices_in_spec_order() { return {}; }
};

struct PeerRunner {
  std::string impl, layout, detail;
  std::unique_ptr<Runner> runner;
};

// Every peer configuration that can run problem p, set up on `input` (spec order).
std::vector<PeerRunner> make_peers(const Problem& p, const Tensor& input);

// The naive loop (docs/benchmarks.md 3.3), the yardstick of the reference engine's speed
// ("within 3x of the naive loop"): NCHW, a bounds check per tap, OpenMP over the (n, c) planes,
// f32 or int32 sums. Null for what it does not express (dtypes other than f32 and i8, dilation,
// ceil).
std::unique_ptr<Runner> make_naive(const Problem& p, const Tensor& input);

// What the peers' documentation and code say of their accumulation: f32 sums of the window,
// then a division or a multiplication by the reciprocal. Integer results are expected exact.
ErrorBound peer_bound(const Problem& p);

void flush(const void* data, size_t bytes);

// Pins each thread of OpenMP's (libgomp's) team of `threads` to its own CPU of the process's
// affinity mask, thread t to the t-th (the calling thread is thread 0): the pool that the
// engines, oneDNN and ATen run on keeps these threads (docs/benchmarks.md section 4.2).
void pin_openmp_threads(int threads);

}  // namespace poolspec::bench
