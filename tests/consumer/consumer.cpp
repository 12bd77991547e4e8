// A library's fast path cross-checked at run time by poolspec's reference (C++ API): a correct
// output passes every call; a wrong border divisor is caught and reported.
#include <cstdio>
#include <cstring>
#include <vector>

#include "poolspec/problem_string.hpp"
#include "poolspec/reference/check.hpp"

namespace {

// The library's own 3x3 stride-1 average with one padding, nchw, counting every tap.
void fast_avg3x3(const float* in, float* out, int h, int w, bool border_bug) {
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (y + dy >= 0 && y + dy < h && x + dx >= 0 && x + dx < w)
            sum += in[(y + dy) * w + x + dx];
      out[y * w + x] = sum / (border_bug && x == 0 ? 6.0f : 9.0f);
    }
}

}  // namespace

int main() {
  const poolspec::Problem p =
      poolspec::parse_problem("avg:f32:n1c1:h12w12:k3x3:s1x1:pb1x1:pe1x1:include_full:floor")
          .value();
  std::vector<float> in(144), out(144);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7) % 11) - 5;
  poolspec::reference::CheckOptions options;
  options.rate = 1;
  options.bound = poolspec::sum_bound(poolspec::DType::f32, 9 + 1, 0.5, "f32 sums, one division");
  poolspec::reference::Checker checker(options);
  const auto run = [&](bool bug) {
    fast_avg3x3(in.data(), out.data(), 12, 12, bug);
    return checker.check(p, poolspec::Layout::channels_first,
                         reinterpret_cast<const std::byte*>(in.data()),
                         reinterpret_cast<const std::byte*>(out.data()));
  };
  for (int call = 0; call < 10; ++call)
    if (auto r = run(false); !r || r->has_value()) {
      std::printf("consumer: the correct output was judged wrong\n");
      return 1;
    }
  for (int call = 0; call < 10; ++call)
    if (auto r = run(true); r && r->has_value()) {
      std::printf("consumer: caught %s\n", poolspec::reference::mismatch_text(p, **r).c_str());
      return 0;
    }
  std::printf("consumer: the border-divisor bug was not caught\n");
  return 1;
}
