// Golden vectors of the XS3 model. Provenance is written beside each: the worked examples of
// xs3/README.md section 5 (computed there with a transcription of lib_nn's C reference at
// 50a4b03), the scale/shift table of section 3.2, and the patterns of lib_nn's own unit tests
// (test_avgpool2d_global.c, test_avgpool2d.c, test_maxpool2d.c) as section 5 describes them.
#include <numeric>

#include <doctest/doctest.h>

#include "poolspec/xs3/operator.hpp"
#include "poolspec/xs3/pooling.hpp"
#include "poolspec/xs3/vpu.hpp"

namespace poolspec::xs3 {
namespace {

// The global op over one channel of N pixels with the init-derived scale and shift.
int global_one(const std::vector<int>& pixels, int32_t bias, bool symmetric = false,
               Accumulation acc = Accumulation::saturate, uint32_t height = 0) {
  const auto n = static_cast<uint32_t>(pixels.size());
  const ImageParams x{height ? height : n, height ? n / height : 1, 1};
  Result<GlobalInit> init = avgpool2d_global_init(x, {}, Config{symmetric, acc});
  REQUIRE_MESSAGE(init.ok(), (init.ok() ? "" : init.error().message));
  std::vector<int8_t> in(pixels.begin(), pixels.end()), out(1);
  REQUIRE(avgpool2d_global(out, in, bias, init->plan, init->jobs[0]).ok());
  return out[0];
}

int window_one(const std::vector<int>& taps, uint32_t h, uint32_t w, bool symmetric = false) {
  // One output, one channel group of 4 (avgpool requires job channels % 4): the taps in
  // channel 0, zeros elsewhere.
  std::vector<int8_t> x(static_cast<size_t>(h * w * 4), 0), y(4);
  for (size_t i = 0; i < taps.size(); ++i) x[i * 4] = static_cast<int8_t>(taps[i]);
  Result<WindowInit<AvgPlan>> init =
      avgpool2d_init({h, w, 4}, {1, 1, 4}, WindowParams{h, w, 0, 0, int32_t(h), int32_t(w)}, {},
                     Config{symmetric, Accumulation::saturate});
  REQUIRE_MESSAGE(init.ok(), (init.ok() ? "" : init.error().message));
  REQUIRE(avgpool2d(y, x, init->plan, init->jobs[0]).ok());
  return y[0];
}

TEST_CASE("xs3 primitives: RSHR ties toward +infinity, VLSAT bounds, VLMACC saturation") {
  // xs3/README.md section 2, and lib_xcore_math's VLSAT tie test: -0x0A800000 >> 24 = -10,
  // -0x0A800001 >> 24 = -11.
  CHECK(rshr(-0x0A800000, 24) == -10);
  CHECK(rshr(-0x0A800001, 24) == -11);
  CHECK(rshr(10, 2) == 3);    // 2.5 -> 3
  CHECK(rshr(-10, 2) == -2);  // -2.5 -> -2
  CHECK(rshr(-2, 2) == 0);    // -0.5 -> 0
  CHECK(rshr(-7, 0) == -7);   // shift 0: no rounding term
  CHECK(vlsat8(-1000, 0) == -127);
  CHECK(vlsat16(-100000, 0) == -32767);
  CHECK(vlmacc8(acc_max - 10, 127, 1, Accumulation::saturate) == acc_max);
  CHECK(vlmacc8(acc_min + 10, -128, 1, Accumulation::saturate) == acc_min);  // symmetric floor
  CHECK(vlmacc8(acc_max - 10, 127, 1, Accumulation::wrap) == INT32_MIN + 116);
  CHECK(average_output(-129 * 4, 2, Saturation::standard()) == -128);
  CHECK(average_output(-129 * 4, 2, Saturation::symmetric()) == -127);
  CHECK(vlsub8(-128, 127) == -127);  // saturates, keeps the sign
}

TEST_CASE("xs3 scale and shift: the table of xs3/README.md 3.2") {
  const std::pair<int, ScaleShift> table[] = {
      {1, {1, 0}},    {2, {1, 1}},     {4, {1, 2}},      {9, {114, 10}},  {24, {85, 11}},
      {3, {85, 8}},   {5, {102, 9}},   {7, {73, 9}},     {25, {82, 11}},  {36, {114, 12}},
      {49, {84, 12}}, {100, {82, 13}}, {144, {114, 14}}, {196, {84, 14}}, {1024, {1, 10}}};
  for (const auto& row : table) {
    CAPTURE(row.first);
    CHECK(scale_and_shift(static_cast<uint64_t>(row.first)).value() == row.second);
  }
}

TEST_CASE("xs3 scale and shift: the rejected pixel counts (xs3/README.md section 6)") {
  // "The smallest cases are N = 255 (15x17) and 257. Others: 509-511, 513-514, 1017-1023,
  // 1025-1028 ... There are 2537 such N below 2^17. No N < 255 is affected."
  for (int n : {255, 257, 509, 510, 511, 513, 514, 1017, 1020, 1023, 1025, 1028})
    CHECK_MESSAGE(!scale_and_shift(static_cast<uint64_t>(n)).ok(), n);
  for (int n : {256, 258, 508, 512, 515, 1016, 1024, 1029})
    CHECK_MESSAGE(scale_and_shift(static_cast<uint64_t>(n)).ok(), n);
  int rejected = 0, first = 0;
  for (uint64_t n = 1; n < (1u << 17); ++n)
    if (!scale_and_shift(n).ok()) {
      ++rejected;
      if (!first) first = static_cast<int>(n);
    }
  CHECK(rejected == 2537);
  CHECK(first == 255);
  // And a valid scale lies strictly between 64 and 128 for every other N below 2^17.
  for (uint64_t n = 1; n < (1u << 17); ++n)
    if (auto ss = scale_and_shift(n); ss && ss->scale != 1)
      CHECK((ss->scale > 64 && ss->scale < 128));
  // init for a 15x17 image is refused with a clear error, not an assert.
  Result<GlobalInit> init = avgpool2d_global_init({15, 17, 4}, {}, Config{});
  REQUIRE(!init.ok());
  CHECK(init.error().message.find("15x17") != std::string::npos);
  CHECK(init.error().message.find("N=255") != std::string::npos);
  CHECK(!avgpool2d_global_init({0, 3, 4}, {}, Config{}).ok());
}

TEST_CASE("xs3 worked examples 1-7 (xs3/README.md section 5), avgpool2d_global") {
  // 1. N = 4 (1, 2): half up.
  CHECK(global_one({1, 2, 3, 4}, 0) == 3);
  CHECK(global_one({-1, -2, -3, -4}, 0) == -2);
  CHECK(global_one({1, 1, 0, 0}, 0) == 1);
  CHECK(global_one({-1, -1, 0, 0}, 0) == 0);
  // 2. N = 3 (85, 8).
  CHECK(global_one({100, 100, 101}, 0) == 100);
  CHECK(global_one({-128, -128, -128}, 0) == -127);
  CHECK(global_one({-128, -128, -128}, 0, true) == -127);
  // 3. N = 9 (114, 10).
  CHECK(global_one(std::vector<int>(9, 127), 0) == 127);
  CHECK(global_one(std::vector<int>(9, -128), 0) == -128);
  CHECK(global_one(std::vector<int>(9, -128), 0, true) == -127);
  std::vector<int> sum_1147(8, -128);
  sum_1147.push_back(-123);  // -1024 - 123 = -1147, exact mean -127.44
  CHECK(global_one(sum_1147, 0) == -128);
  CHECK(global_one(sum_1147, 0, true) == -127);
  // 4. 7x7, N = 49 (84, 12).
  CHECK(global_one(std::vector<int>(49, 100), 0, false, Accumulation::saturate, 7) == 100);
  CHECK(global_one(std::vector<int>(49, 103), 0, false, Accumulation::saturate, 7) == 104);
  CHECK(global_one(std::vector<int>(49, -103), 0, false, Accumulation::saturate, 7) == -104);
  // 5. Bias, N = 4: X = 24, bias = -40 -> 14.
  CHECK(global_one({24, 24, 24, 24}, -40) == 14);
  // 6. Bias units, N = 3 (85, 8), X = 0: the bias is divided by 2^8, not by 3.
  CHECK(global_one({0, 0, 0}, 256) == 1);
  CHECK(global_one({0, 0, 0}, 85) == 0);
  CHECK(global_one({0, 0, 0}, -128) == 0);
  CHECK(global_one({0, 0, 0}, -129) == -1);
  // 7. N = 1 (1, 0).
  CHECK(global_one({-128}, 0) == -128);
  CHECK(global_one({-128}, 0, true) == -127);
  CHECK(global_one({100}, 100) == 127);
}

TEST_CASE("xs3 accumulator overflow: the assembly saturates, the C reference wraps") {
  // xs3/README.md section 6: N = 1, b = 2^31 - 11, x = 127 -> asm 127, C reference -128.
  CHECK(global_one({127}, acc_max - 10, false, Accumulation::saturate) == 127);
  CHECK(global_one({127}, acc_max - 10, false, Accumulation::wrap) == -128);
}

TEST_CASE(
    "xs3 test_avgpool2d_global_case0: a 32x32x44 image of zeros and the bias 0x807FFFFF >> 14") {
  // N = 1024 -> (1, 10); bias = (int32)0x807FFFFF >> (24 - 10) = -130561; acc + 512 = -130049
  // -> floor(-127.0009) = -128 for every channel, -127 when symmetric.
  const int32_t bias = static_cast<int32_t>(0x807FFFFFu) >> 14;
  CHECK(bias == -130561);
  for (bool symmetric : {false, true}) {
    Result<GlobalInit> init =
        avgpool2d_global_init({32, 32, 44}, {}, Config{symmetric, Accumulation::saturate});
    REQUIRE(init.ok());
    std::vector<int8_t> x(32 * 32 * 44, 0), y(44);
    REQUIRE(avgpool2d_global(y, x, bias, init->plan, init->jobs[0]).ok());
    for (int8_t v : y) CHECK(v == (symmetric ? -127 : -128));
  }
}

TEST_CASE("xs3 test_avgpool2d_global_case1 pattern: X = 24 + ch gives 24 + ch + beta") {
  // 35 cases: sizes from 1x1 to 32x32, channels in {4, 8, ..., 64}, X[r][c][ch] = 24 + ch, the
  // betas of lib_nn's test, bias = beta * N * scale. The expected output is 24 + ch + beta; as in
  // lib_nn's cases the values stay within +-100, where the approximate gain (at most 1.00488)
  // cannot move a result by half a unit.
  const int betas[] = {0, 1, -10, 22, -13, 40, -77, 3, -20, 44, -100};
  int cases = 0;
  for (int i = 0; cases < 35; ++i) {
    const uint32_t h = 1 + static_cast<uint32_t>(i * 7) % 32,
                   w = 1 + static_cast<uint32_t>(i * 13) % 32;
    const uint32_t channels = 4 * (1 + static_cast<uint32_t>(i) % 16);
    const int beta = betas[i % 11];
    if (!scale_and_shift(uint64_t{h} * w).ok()) continue;
    bool in_range = true;
    for (uint32_t ch = 0; ch < channels; ++ch)
      in_range = in_range && std::abs(24 + int(ch) + beta) <= 100;
    if (!in_range) continue;
    CAPTURE(h);
    CAPTURE(w);
    CAPTURE(channels);
    CAPTURE(beta);
    Result<GlobalInit> init = avgpool2d_global_init({h, w, channels}, {}, Config{});
    REQUIRE(init.ok());
    std::vector<int8_t> x(size_t{h} * w * channels), y(channels);
    for (size_t p = 0; p < size_t{h} * w; ++p)
      for (uint32_t ch = 0; ch < channels; ++ch)
        x[p * channels + ch] = static_cast<int8_t>(24 + ch);
    const int32_t bias =
        beta * static_cast<int32_t>(h * w) * static_cast<int32_t>(init->plan.scale);
    REQUIRE(avgpool2d_global(y, x, bias, init->plan, init->jobs[0]).ok());
    for (uint32_t ch = 0; ch < channels; ++ch) CHECK(int(y[ch]) == 24 + int(ch) + beta);
    ++cases;
  }
}

TEST_CASE("xs3 worked examples 9-11: windowed avgpool2d and maxpool2d") {
  // 9. 2x2 stride 2 (the 2x2 path; test_avgpool2d_2x2_case1 pattern).
  CHECK(window_one({110, 120, 90, 80}, 2, 2) == 100);
  CHECK(window_one({-110, -120, -90, -80}, 2, 2) == -100);
  CHECK(window_one({-128, -128, -128, -128}, 2, 2) == -128);
  CHECK(window_one({-128, -128, -128, -128}, 2, 2, true) == -127);
  CHECK(window_one({-128, -128, -128, -127}, 2, 2) == -128);  // sum -511
  CHECK(window_one({-128, -128, -127, -127}, 2, 2) == -127);  // sum -510
  CHECK(window_one({3, 3, 0, 0}, 2, 2) == 2);                 // sum 6
  CHECK(window_one({-3, -3, 0, 0}, 2, 2) == -1);              // sum -6
  // 10. 3x3 (114, 10): 1..9 -> 5; a 3x8 or 12x4 window of -128 (scale 85) -> -127, not -128.
  CHECK(window_one({1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3) == 5);
  CHECK(window_one(std::vector<int>(24, -128), 3, 8) == -127);
  CHECK(window_one(std::vector<int>(48, -128), 12, 4) == -127);
  // 11. maxpool 2x2.
  const auto max_one = [](std::vector<int> taps) {
    std::vector<int8_t> x(16, 0), y(4);
    for (size_t i = 0; i < 4; ++i) x[i * 4] = static_cast<int8_t>(taps[i]);
    auto init = maxpool2d_init({2, 2, 4}, {1, 1, 4}, WindowParams{2, 2, 0, 0, 2, 2}, {});
    REQUIRE(init.ok());
    REQUIRE(maxpool2d(y, x, init->plan, init->jobs[0]).ok());
    return int(y[0]);
  };
  CHECK(max_one({-128, -5, 3, 2}) == 3);
  CHECK(max_one({-128, -128, -128, -128}) == -128);
}

TEST_CASE("xs3 test_avgpool2d_case1 pattern: windows of alternating +-120 average to themselves") {
  // Channels hold +120 and -120 alternately; every window of a channel is constant, and the
  // expected output is that value, for windows, strides and starts of many shapes.
  int cases = 0;
  for (uint32_t wh = 1; wh <= 4; ++wh)
    for (uint32_t ww = 1; ww <= 4; ++ww)
      for (int32_t stride = 1; stride <= 3; ++stride) {
        const uint32_t xh = wh + 2 * uint32_t(stride) + 1, xw = ww + 2 * uint32_t(stride) + 2,
                       c = 8;
        const uint32_t yh = (xh - 1 - wh) / uint32_t(stride) + 1,
                       yw = (xw - 1 - ww) / uint32_t(stride) + 1;
        std::vector<int8_t> x(size_t{xh} * xw * c), y(size_t{yh} * yw * c);
        for (size_t i = 0; i < x.size(); ++i) x[i] = (i % c) % 2 ? -120 : 120;
        auto init = avgpool2d_init({xh, xw, c}, {yh, yw, c},
                                   WindowParams{wh, ww, 1, 0, stride, stride}, {}, Config{});
        REQUIRE(init.ok());
        REQUIRE(avgpool2d(y, x, init->plan, init->jobs[0]).ok());
        for (size_t i = 0; i < y.size(); ++i) CHECK(int(y[i]) == ((i % c) % 2 ? -120 : 120));
        ++cases;
      }
  CHECK(cases == 48);
}

TEST_CASE("xs3 test_avgpool2d_case2 pattern: constant windows of a 12x12x20 image") {
  // Each (non-overlapping) window of each channel holds one value; the expected output is that
  // value, with -128 mapped to the lower bound LO. Windows 2x2, 3x3, 4x4 (N = 4, 9, 16, where the
  // gain error, at most 1.00195, cannot move an int8 by half a unit). Values from a fixed
  // linear congruential sequence covering -128..127.
  for (uint32_t k : {2u, 3u, 4u})
    for (bool symmetric : {false, true}) {
      CAPTURE(k);
      CAPTURE(symmetric);
      const uint32_t side = 12, channels = 20, out = side / k;
      std::vector<int8_t> x(size_t{side} * side * channels), y(size_t{out} * out * channels);
      std::vector<int> expected(y.size());
      uint32_t state = 12345;
      for (uint32_t r = 0; r < out; ++r)
        for (uint32_t c = 0; c < out; ++c)
          for (uint32_t ch = 0; ch < channels; ++ch) {
            state = state * 1103515245u + 12345u;
            const int v = int((state >> 16) % 256) - 128;
            expected[(size_t{r} * out + c) * channels + ch] = (v == -128 && symmetric) ? -127 : v;
            for (uint32_t i = 0; i < k; ++i)
              for (uint32_t j = 0; j < k; ++j)
                x[(size_t{r * k + i} * side + c * k + j) * channels + ch] = static_cast<int8_t>(v);
          }
      auto init = avgpool2d_init({side, side, channels}, {out, out, channels},
                                 WindowParams{k, k, 0, 0, int32_t(k), int32_t(k)}, {},
                                 Config{symmetric, Accumulation::saturate});
      REQUIRE(init.ok());
      REQUIRE(avgpool2d(y, x, init->plan, init->jobs[0]).ok());
      for (size_t i = 0; i < y.size(); ++i) CHECK(int(y[i]) == expected[i]);
    }
}

TEST_CASE("xs3 init checks are errors, not asserts") {
  const Config config;
  CHECK(avgpool2d_global_init({4, 4, 8}, std::vector<GlobalJobParams>{{4, 8}}, config)
            .error()
            .message.find("exceeds X_c = 8") != std::string::npos);
  CHECK(!avgpool2d_init({4, 4, 8}, {2, 2, 4}, WindowParams{2, 2, 0, 0, 2, 2}, {}, config)
             .ok());  // X_c != Y_c
  CHECK(!avgpool2d_init({4, 4, 8}, {2, 2, 8}, WindowParams{2, 2, -1, 0, 2, 2}, {}, config)
             .ok());  // start < 0
  CHECK(!avgpool2d_init({4, 4, 8}, {2, 2, 8}, WindowParams{2, 2, 0, 0, 2, 2},
                        std::vector<WindowJobParams>{{0, 0, 2, 2, 2, 4}}, config)
             .ok());  // channels % 4
  CHECK(!avgpool2d_init({4, 4, 8}, {2, 2, 8}, WindowParams{2, 2, 0, 0, 2, 2},
                        std::vector<WindowJobParams>{{0, 0, 0, 3, 2, 8}}, config)
             .ok());  // outside Y
  CHECK(!maxpool2d_init({4, 4, 6}, {2, 2, 6}, WindowParams{2, 2, 0, 0, 2, 2}, {}).ok());  // X_c % 4
  // maxpool: "W_r0 + W_h - 1 + W_vert*(Y_h-1) < X_h": 1 + 2 - 1 + 2*1 = 4 is not < 4.
  auto late = maxpool2d_init({4, 4, 4}, {2, 2, 4}, WindowParams{2, 2, 1, 0, 2, 2}, {});
  REQUIRE(!late.ok());
  CHECK(late.error().message.find("last window row 4") != std::string::npos);
  // ERRATA X3: a window ending on X's last row is accepted (the document's "+ W_h < X_h" would
  // refuse it): 0 + 2*1 + 2 - 1 = 3 < 4.
  CHECK(maxpool2d_init({4, 4, 4}, {2, 2, 4}, WindowParams{2, 2, 0, 0, 2, 2}, {}).ok());
  // avgpool2d_init does not check the reads; the model's compute refuses them instead of reading
  // outside X.
  auto init = avgpool2d_init({4, 4, 4}, {2, 2, 4}, WindowParams{2, 2, 1, 0, 2, 2}, {}, config);
  REQUIRE(init.ok());
  std::vector<int8_t> x(64), y(16);
  CHECK(avgpool2d(y, x, init->plan, init->jobs[0]).error().message.find("outside X") !=
        std::string::npos);
}

}  // namespace
}  // namespace poolspec::xs3
