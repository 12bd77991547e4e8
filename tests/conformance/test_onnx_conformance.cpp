// The ONNX conformance runner (`poolspec onnx-test`) shown to fail: each mutant rule below is a
// real framework's different choice, and the stored vectors of libonnx-testdata must catch it.
// (CTest also runs every pooling case directory through the command; see CMakeLists.txt.)
#include <doctest/doctest.h>

#include "onnx_test.hpp"

#ifndef POOLSPEC_ONNX_NODE_TESTS
#error "POOLSPEC_ONNX_NODE_TESTS: the libonnx-testdata node-test folder"
#endif

namespace poolspec::cli {
namespace {

std::string node_test(const char* name) {
  return std::string(POOLSPEC_ONNX_NODE_TESTS) + "/" + name;
}

OnnxCaseReport run(const char* name, const std::function<void(Problem&)>& mutate = {}) {
  Result<OnnxCaseReport> r = run_onnx_case(node_test(name), mutate);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

TEST_CASE("onnx-test passes the stored vectors as they are") {
  for (const char* name :
       {"test_averagepool_2d_pads_count_include_pad",
        "test_maxpool_with_argmax_2d_precomputed_strides", "test_maxpool_2d_ceil",
        "test_averagepool_2d_same_lower", "test_globalaveragepool"})
    CHECK_MESSAGE(run(name).passed(), name);
}

TEST_CASE("mutant: exclude instead of count_include_pad's divisor is caught") {
  const OnnxCaseReport r = run("test_averagepool_2d_pads_count_include_pad",
                               [](Problem& p) { p.divisor = Divisor::exclude; });
  CHECK_FALSE(r.passed());
  CHECK(r.data_sets[0].values_outside_bound > 0);
  MESSAGE(r.data_sets[0].first_mismatch);
}

TEST_CASE("mutant: storage_order ignored (row-major indices) is caught") {
  const OnnxCaseReport r = run("test_maxpool_with_argmax_2d_precomputed_strides",
                               [](Problem& p) { p.index_order = IndexOrder::row_major; });
  CHECK_FALSE(r.passed());
  CHECK(r.data_sets[0].indices_differing > 0);
}

TEST_CASE("a gap of the stored vectors: indices per plane instead of over the tensor pass them") {
  // Both cases with an Indices output are 1x1 (N = C = 1), where a plane is the tensor, so the
  // stored vectors cannot tell the two rules apart (the bug of sonos/tract PR #2860). The
  // hand-computed table's "ONNX: indices over the tensor" case, with C = 2, does.
  const OnnxCaseReport r = run("test_maxpool_with_argmax_2d_precomputed_pads",
                               [](Problem& p) { p.indices = Indices::plane; });
  CHECK(r.passed());
}

TEST_CASE("mutant: SAME_LOWER read as SAME_UPPER is caught") {
  const OnnxCaseReport r = run("test_averagepool_2d_same_lower", [](Problem& p) {
    for (Axis& a : p.axes) std::swap(a.pad_begin, a.pad_end);
  });
  CHECK_FALSE(r.passed());
}

TEST_CASE("mutant: floor instead of ceil_mode is caught by the shape") {
  const OnnxCaseReport r =
      run("test_maxpool_2d_ceil", [](Problem& p) { p.rounding = Rounding::floor; });
  CHECK_FALSE(r.passed());
  CHECK_FALSE(r.data_sets[0].shape_ok);
}

TEST_CASE(
    "the float bound: the reference's f32 sums fit it, a one-ulp nudge per element does not") {
  // float_average_bound is gamma_n * mean|x| + half an ulp; the stored 2d_default outputs come
  // within it. Shifting every output by the whole bound's worth of 2 ulps must fail.
  const OnnxCaseReport ok = run("test_averagepool_2d_default");
  CHECK(ok.passed());
  CHECK(ok.data_sets[0].worst_ratio <= 1);
  const OnnxCaseReport nudged = run("test_averagepool_2d_default", [](Problem& p) {
    p.bias = 1;  // (1 + sum) / 4: off by 0.25, far past any f32 rounding of a 4-term sum
  });
  CHECK_FALSE(nudged.passed());
}

}  // namespace
}  // namespace poolspec::cli
