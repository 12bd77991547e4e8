// The engines against the spec (docs/design.md §4, §5, §9). One test body for every engine:
// the reference, the optimized engine (dispatch with its counted fallback) and each kernel of its
// list on its own. RapidCheck draws problems over the whole space -- channels that are not a
// multiple of the vector width, widths that leave a remainder, every layout, 1 and 2 threads,
// NaN / inf / -0 / subnormal inputs -- and run_engine() surrounds the input with poison and the
// output with guard bytes, and poisons the output twice to catch an unwritten element. Max and
// integer results must be bit-exact; float averages within the bound the engine declares.
// Mutant kernels (an off-by-one window edge, a wrong divisor near the border) must be caught.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "generators.hpp"
#include "poolspec/engine_check.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/optimized/mutants.hpp"
#include "poolspec/optimized/optimized.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/reference/reference.hpp"
#include "poolspec/shape.hpp"
#include "rapidcheck_doctest.hpp"

namespace poolspec {
void showValue(Layout layout, std::ostream& os) { os << layout_name(layout); }
}  // namespace poolspec

namespace poolspec::test {
namespace {

// Problems sized for the SIMD engines: up to 40 channels (one in six: 64 to 80, four AVX-512
// vectors of f32 and a remainder), last axes up to ~70 wide.
CaseOptions engine_options() {
  CaseOptions o;
  o.max_channels = 40;
  o.wide_channels_one_in = 6;
  o.extent_spread = 6;
  o.last_extent_spread = 70;
  // Integers as often as before bf16 joined: avg_int8_nchw takes nothing else.
  o.dtypes = {DType::f32, DType::f32, DType::f32, DType::f16, DType::bf16,
              DType::i8,  DType::i8,  DType::u8,  DType::u8};
  o.bias = false;
  o.whole_plane_one_in = 8;
  return o;
}

// The comparison of one engine run with the spec, as a failure message (empty when it passes).
std::string engine_failure(const poolspec::Engine& engine, const Case& c, Layout layout,
                           int threads) {
  Result<Output> expected = evaluate(c.problem, c.input);
  if (!expected) return "the spec refused the case: " + expected.error().message;
  Result<Output> got = run_engine(engine, c.problem, c.input, layout, threads);
  if (!got)
    return fmt::format("{} in {} with {} thread(s): {}", engine.name(), layout_name(layout),
                       threads, got.error().message);
  const ErrorBound bound = engine.error_bound(c.problem, layout);
  Result<EngineComparison> cmp = compare_output(c.problem, c.input, *expected, *got, bound);
  if (!cmp) return cmp.error().message;
  if (cmp->passed()) return {};
  return fmt::format("{} in {} with {} thread(s): {}", engine.name(), layout_name(layout), threads,
                     comparison_text(c.problem, *cmp, bound));
}

// The property: on every drawn case it accepts, in one of `layouts`, the engine matches the spec.
auto matches_spec(const poolspec::Engine& engine, CaseOptions options,
                  std::vector<Layout> layouts = {std::begin(all_layouts), std::end(all_layouts)}) {
  return [&engine, options, layouts] {
    const Case c = *case_gen(options);
    const Layout layout = *rc::gen::elementOf(layouts);
    const int threads = *rc::gen::inRange(1, 3);
    RC_PRE(static_cast<bool>(engine.supports(c.problem, layout)));
    const std::string failure = engine_failure(engine, c, layout, threads);
    RC_LOG() << failure;
    RC_ASSERT(failure.empty());
  };
}

// The one layout a kernel of the list takes (its test scope).
Layout layout_of(std::string_view kernel) {
  for (const optimized::KernelInfo* k : optimized::kernel_list())
    if (k->name == kernel && k->scope.layout) return *k->scope.layout;
  FAIL("no kernel of the list named " << kernel << " with one layout");
  return Layout::channels_first;
}

TEST_CASE("the reference engine matches the spec over the whole problem space") {
  check_property("reference == spec", matches_spec(reference::engine(), CaseOptions{}));
  check_property("reference == spec (wide shapes)",
                 matches_spec(reference::engine(), engine_options()));
}

TEST_CASE("the optimized engine matches the spec over the whole problem space") {
  check_property("optimized == spec (its dtypes)",
                 matches_spec(optimized::engine(), engine_options()));
  check_property("optimized == spec (every dtype, with its fallback)",
                 matches_spec(optimized::engine(), CaseOptions{}));
}

TEST_CASE("the optimized engine matches the spec on every SIMD target this CPU runs") {
  const std::vector<std::string> targets = optimized::simd_targets();
  MESSAGE("SIMD targets: " << fmt::format("{}", fmt::join(targets, ", "))
                           << "; dispatched: " << optimized::simd_target());
  CHECK(!targets.empty());
  for (const std::string& target : targets) {
    CAPTURE(target);
    REQUIRE(optimized::use_simd_target(target).ok());
    CHECK(optimized::simd_target() == target);
    CHECK(optimized::simd_targets() ==
          targets);  // a restriction does not shrink the list (a fuzz finding)
    check_property(fmt::format("optimized on {} == spec", target),
                   matches_spec(optimized::engine(), engine_options()));
  }
  REQUIRE(optimized::use_simd_target("").ok());
  CHECK_FALSE(optimized::use_simd_target("no-such-target").ok());
}

TEST_CASE("each kernel of the list matches the spec on the problems it accepts") {
  for (const optimized::KernelInfo* k : optimized::kernel_list()) {
    CAPTURE(k->name);
    const optimized::OptimizedEngine only(k->name);
    // Draw what the kernel is for: its test scope (its op, layout, rank and window shapes).
    const optimized::KernelScope& scope = k->scope;
    CaseOptions o = engine_options();
    if (scope.op) o.ops = {*scope.op};
    o.max_rank = std::min(o.max_rank, scope.max_rank);
    if (scope.whole_plane) o.whole_plane_one_in = 1;
    if (scope.same_width) o.same_extent_one_in = 1;
    std::vector<Layout> layouts = {std::begin(all_layouts), std::end(all_layouts)};
    if (scope.layout) layouts = {*scope.layout};
    check_property(fmt::format("{} == spec", k->name), matches_spec(only, o, layouts));
  }
}

// Integer averages divide in f32, exact while |sum| < 2^23 and the divisor < 2^24 (the argument
// at the top of optimized/src/kernels/simd-inl.h) only if the quotient itself is rounded: a half
// added in f32 before rounding lifts a quotient just below x.5 to the next integer. Constant
// windows with an override divisor d = 2|s| - 1, 2|s| and 2|s| + 1 put s / d just above, on and
// just below a half; every kernel that takes them, on every SIMD target, every rounding rule.
TEST_CASE(
    "integer averages: quotients beside a half are rounded exactly, by every kernel on every "
    "target") {
  struct Window {
    const char* dtype;
    double value;
    int k;
  };
  const Window windows[] = {{"u8", 255, 181}, {"i8", -128, 181}, {"i8", 127, 3}, {"u8", 1, 1}};
  int runs = 0;
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    for (const optimized::KernelInfo* k : optimized::kernel_list())
      for (const Window& w : windows)
        for (const int64_t delta : {-1, 0, 1})
          for (const char* rule : {"half_away", "half_up", "half_even", "toward_zero", "floor"})
            for (const Layout layout : all_layouts) {
              const int64_t sum = static_cast<int64_t>(std::fabs(w.value)) * w.k * w.k;
              const Problem p =
                  parse_problem(
                      fmt::format("avg:{}:n1c1:h{}w{}:k{}x{}:s1x1:pb0x0:pe0x0:override={}:"
                                  "floor:round={}",
                                  w.dtype, w.k, w.k, w.k, w.k, 2 * sum + delta, rule))
                      .value();
              const optimized::OptimizedEngine only(k->name);
              if (!only.supports(p, layout)) continue;
              CAPTURE(target);
              CAPTURE(k->name);
              CAPTURE(format_problem(p));
              const Case c{
                  p, Tensor{p.dtype, input_shape(p), std::vector<double>(w.k * w.k, w.value)}};
              CHECK(engine_failure(only, c, layout, 1).empty());
              ++runs;
            }
  }
  REQUIRE(optimized::use_simd_target("").ok());
  CHECK(runs > 0);
}

// max_nchw combines a row's taps in vector pairs (its path for 2 or 3 columns at stride 2, f32,
// f16 and bf16) and leaves NaNs to the general path. A random draw seldom puts a NaN or a zero of
// each sign at every tap of such a row, so each input position gets one here, in both NaN modes
// and both pads, on every target (a row's ends are read through a masked load or a stack copy,
// by target, type and address). The rows of
// 33 and more outputs have two whole vectors on AVX-512, where a tap crosses from one to the next.
TEST_CASE("max_nchw: a NaN, or -0 among +0, at each input position of its vector-pair rows") {
  const optimized::OptimizedEngine max_nchw("max_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    CAPTURE(target);
    for (const auto& [shape, dtype] : {std::pair{"h5w40:k3x3:s2x2:pb1x1:pe1x1:floor", DType::f32},
                                       {"h5w41:k3x3:s2x2:pb0x0:pe0x0:floor", DType::f32},
                                       {"h4w36:k2x2:s2x2:pb0x0:pe0x0:floor", DType::f32},
                                       {"h4w34:k2x2:s2x2:pb1x1:pe1x1:floor", DType::f32},
                                       {"h3w72:k3x3:s2x2:pb1x1:pe1x1:floor", DType::f32},
                                       {"h3w67:k2x2:s2x2:pb0x0:pe0x0:floor", DType::f32},
                                       {"h3w32:k3x3:s2x2:pb1x1:pe1x1:floor", DType::f32},
                                       {"h3w32:k2x2:s2x2:pb0x0:pe0x0:floor", DType::f32},
                                       {"h3w32:k3x3:s2x2:pb1x1:pe1x1:floor", DType::f16},
                                       {"h3w32:k3x3:s2x2:pb1x1:pe1x1:floor", DType::bf16},
                                       {"h3w32:k2x2:s2x2:pb0x0:pe0x0:floor", DType::bf16},
                                       {"h5w40:k3x3:s2x2:pb1x1:pe1x1:floor", DType::f16},
                                       {"h3w67:k2x2:s2x2:pb0x0:pe0x0:floor", DType::f16},
                                       {"h3w72:k3x3:s2x2:pb1x1:pe1x1:floor", DType::bf16},
                                       {"h4w36:k2x2:s2x2:pb0x0:pe0x0:floor", DType::bf16}}) {
      for (const char* nan : {"", ":nan=ignore", ":nan=ignore:start=lowest"}) {
        const std::string text = fmt::format("max:{}:n1c1:{}{}", dtype_name(dtype), shape, nan);
        CAPTURE(text);
        Result<Problem> p = parse_problem(text);
        REQUIRE(p.ok());
        REQUIRE(max_nchw.supports(*p, Layout::channels_first));
        const std::vector<int64_t> shape_of_input = input_shape(*p);
        const size_t count = static_cast<size_t>(shape_of_input[2] * shape_of_input[3]);
        for (size_t at = 0; at < count; ++at) {
          std::vector<double> values(count);
          for (size_t i = 0; i < count; ++i)
            values[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5);
          values[at] = std::numeric_limits<double>::quiet_NaN();
          CHECK_MESSAGE(engine_failure(max_nchw, Case{*p, Tensor{dtype, shape_of_input, values}},
                                       Layout::channels_first, 1) == "",
                        "NaN at ", at);
          for (size_t i = 0; i < count; ++i)
            values[i] = (i * 5 + at) % 3 == 0 ? -0.0 : (i % 4 == 0 ? -1.0 : 0.0);
          CHECK_MESSAGE(engine_failure(max_nchw, Case{*p, Tensor{dtype, shape_of_input, values}},
                                       Layout::channels_first, 1) == "",
                        "zeros shifted by ", at);
        }
        // Every value negative: the pad column before the row taken as anything but -inf (a 0,
        // say) would be the first window's maximum.
        std::vector<double> negative(count);
        for (size_t i = 0; i < count; ++i) negative[i] = -1.0 - static_cast<double>(i * 3 % 7);
        CHECK(engine_failure(max_nchw, Case{*p, Tensor{dtype, shape_of_input, negative}},
                             Layout::channels_first, 1) == "");
      }
    }
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// max_nhwc runs the windows wholly inside the input through its tap list, four chains of vectors
// of channels at a time, and notes NaNs beside the chains (one vector compare or MINPS per value
// on SSE4 and AVX2). A random draw seldom gives enough channels for four whole vectors, let alone
// a NaN at each tap, so each input position gets one here, on every target, in both NaN modes:
// among numbers, among -inf and among +inf (under nan=ignore, windows of one infinity and NaNs
// are that infinity, not NaN), and a number among NaNs (under nan=ignore, that number); and zeros
// of both signs, shifted (the first in scan order is the maximum). 64 and 128 channels are four
// and eight whole vectors of f32 on AVX-512 (and more of them on narrower targets); the dilated
// shape has border pixels after its whole windows, in two images. Under the sanitizers, whose
// kernels run at -O0 (110 s for all of it), f32 at every fifth position: what they check is the
// memory the loops touch, the same at each position.
TEST_CASE("max_nhwc: a NaN, an infinity or a zero at each input position of its whole windows") {
#ifdef POOLSPEC_SANITIZED
  const std::vector<const char*> dtypes = {"f32"};
  constexpr size_t position_step = 5;
#else
  const std::vector<const char*> dtypes = {"f32", "bf16"};
  constexpr size_t position_step = 1;
#endif
  const optimized::OptimizedEngine max_nhwc("max_nhwc");
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    CAPTURE(target);
    for (const char* shape :
         {"n1c64:h6w6:k3x3:s2x2:pb1x1:pe1x1", "n1c128:h4w5:k3x3:s1x1:pb0x0:pe0x0",
          "n1c64:d3h3w4:k2x2x2:s1x1x2:pb0x0x0:pe0x0x0", "n2c64:h6w7:k2x2:s1x1:dl2x2:pb1x1:pe1x1"})
      for (const char* dtype : dtypes)
        for (const char* rule : {"", ":nan=ignore", ":nan=ignore:start=lowest"}) {
          const std::string text = fmt::format("max:{}:{}:floor{}", dtype, shape, rule);
          CAPTURE(text);
          const Problem p = parse_problem(text).value();
          REQUIRE(max_nhwc.supports(p, Layout::channels_last));
          const std::vector<int64_t> shape_of_input = input_shape(p);
          const auto planes = static_cast<size_t>(shape_of_input[0] * shape_of_input[1]);
          size_t spatial = 1;
          for (size_t axis = 2; axis < shape_of_input.size(); ++axis)
            spatial *= static_cast<size_t>(shape_of_input[axis]);
          const auto run = [&](const std::vector<double>& values) {
            return engine_failure(max_nhwc, Case{p, Tensor{p.dtype, shape_of_input, values}},
                                  Layout::channels_last, 1);
          };
          for (size_t at = 0; at < spatial; at += position_step) {
            CAPTURE(at);
            // Values in NCHW order (the check lays them out): plane c (image and channel), then
            // position i.
            const auto fill = [&](auto value) {
              std::vector<double> values(planes * spatial);
              for (size_t c = 0; c < planes; ++c)
                for (size_t i = 0; i < spatial; ++i) values[c * spatial + i] = value(c, i);
              return values;
            };
            const auto marked = [&](size_t c, size_t i) { return i == at && c % 3 != 1; };
            CHECK(run(fill([&](size_t c, size_t i) {
                    return marked(c, i) ? nan : static_cast<double>((c + i * 7) % 11) - 5;
                  })) == "");
            CHECK(run(fill([&](size_t c, size_t i) { return marked(c, i) ? nan : -inf; })) == "");
            CHECK(run(fill([&](size_t c, size_t i) { return marked(c, i) ? nan : inf; })) == "");
            CHECK(run(fill([&](size_t c, size_t i) {
                    return marked(c, i) ? static_cast<double>(c % 5) - 2 : nan;
                  })) == "");
            CHECK(run(fill([&](size_t c, size_t i) {
                    return (i * 5 + at + c) % 3 == 0 ? -0.0 : 0.0;
                  })) == "");
          }
        }
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// The same path on random values, over rows of one to six vectors: a random draw of the whole
// space seldom gives a float type, 2 or 3 columns at stride 2 and rows this wide all at once (a
// mutant that dropped the tap carried from one vector to the next passed every other test).
TEST_CASE("max_nchw: its vector-pair rows, several vectors long, on random values") {
  const optimized::OptimizedEngine max_nchw("max_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("max_nchw on {}, wide stride-2 rows == spec", target), [&] {
      const int kernel = *rc::gen::inRange(2, 4);
      const int pad = *rc::gen::inRange(0, 2);
      const int w = *rc::gen::inRange(32, 200), h = *rc::gen::inRange(kernel, kernel + 4);
      const std::string text = fmt::format(
          "max:{}:n1c{}:h{}w{}:k{}x{}:s2x2:pb{}x{}:pe{}x{}:floor{}",
          *rc::gen::element<std::string>("f32", "f32", "f16", "bf16"), *rc::gen::inRange(1, 3), h,
          w, kernel, kernel, pad, pad, pad, pad,
          *rc::gen::element<std::string>("", ":nan=ignore", ":nan=ignore:start=lowest"));
      const Problem p = parse_problem(text).value();
      const Case c{p, *input_gen(p, *rc::gen::arbitrary<bool>())};
      RC_ASSERT(max_nchw.supports(p, Layout::channels_first));
      const std::string failure =
          engine_failure(max_nchw, c, Layout::channels_first, *rc::gen::inRange(1, 3));
      RC_LOG() << text << ": " << failure;
      RC_ASSERT(failure.empty());
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// avg_nchw and avg_nhwc sum two adjacent output rows' window rows together when the windows
// share rows (windows of 4 or more rows in NHWC). The whole-space draw has windows of at most 4
// rows, so windows of 4 to 9 rows at stride 1 and 2 get a property of their own (a mutant that
// reused the row before's sums in NHWC passed every other test).
// Inside a property: the problem `text`, when `only` takes it in `layout`, on drawn finite inputs
// with 1 or 2 threads, matches the spec.
void kernel_matches_spec(const optimized::OptimizedEngine& only, const std::string& text,
                         Layout layout, bool finite_values = true) {
  const Problem p = parse_problem(text).value();
  RC_PRE(static_cast<bool>(only.supports(p, layout)));
  const Case c{p, *input_gen(p, finite_values)};
  const std::string failure = engine_failure(only, c, layout, *rc::gen::inRange(1, 3));
  RC_LOG() << text << ": " << failure;
  RC_ASSERT(failure.empty());
}

TEST_CASE(
    "avg_nchw and avg_nhwc: tall windows, adjacent output rows summed together (two, or four in "
    "avg_nhwc)") {
  for (const char* kernel : {"avg_nchw", "avg_nhwc"}) {
    const optimized::OptimizedEngine only(kernel);
    const Layout layout = layout_of(kernel);
    check_property(fmt::format("{} on tall windows == spec", kernel), [&] {
      const int kh = *rc::gen::inRange(4, 10), kw = *rc::gen::inRange(1, 10);
      const int sh = *rc::gen::inRange(1, 3), sw = *rc::gen::inRange(1, 3);
      const int ph = *rc::gen::inRange(0, kh), pw = *rc::gen::inRange(0, kw);
      const int h = *rc::gen::inRange(kh, kh + 12), w = *rc::gen::inRange(kw, kw + 40);
      const std::string text = fmt::format(
          "avg:{}:n{}c{}:h{}w{}:k{}x{}:s{}x{}:pb{}x{}:pe{}x{}:{}:floor",
          *rc::gen::element<std::string>("f32", "f16", "i8", "u8"), *rc::gen::inRange(1, 3),
          *rc::gen::inRange(1, 40), h, w, kh, kw, sh, sw, ph, pw, ph, pw,
          *rc::gen::element<std::string>("exclude", "include_clip", "include_full"));
      kernel_matches_spec(only, text, layout);
    });
  }
}

TEST_CASE(
    "avg_nchw and avg_nhwc: 3-D windows, each depth window's slices summed into a plane first") {
  // NCHW: rows of at most 64 values along W are summed in registers (the shapes of SumShortRows
  // drawn half of the time); longer ones through rows of sums. NHWC: f32 planes of sums.
  for (const char* kernel : {"avg_nchw", "avg_nhwc"}) {
    const optimized::OptimizedEngine only(kernel);
    const Layout layout = layout_of(kernel);
    check_property(fmt::format("{} on 3-D windows == spec", kernel), [&] {
      struct WShape {
        int kernel, stride, pad;
      };
      const WShape w_shape = *rc::gen::oneOf(
          rc::gen::element(WShape{3, 2, 1}, WShape{2, 2, 0}, WShape{3, 1, 1}),
          rc::gen::apply(
              [](int k, int s, int pad) {
                return WShape{k, s, pad % k};
              },
              rc::gen::inRange(1, 6), rc::gen::inRange(1, 4), rc::gen::inRange(0, 5)));
      const int kd = *rc::gen::inRange(2, 5), kh = *rc::gen::inRange(1, 4);
      const int sd = *rc::gen::inRange(1, 3), sh = *rc::gen::inRange(1, 3);
      const int pd = *rc::gen::inRange(0, kd), ph = *rc::gen::inRange(0, kh);
      const int d = *rc::gen::inRange(kd, kd + 6), h = *rc::gen::inRange(kh, kh + 6);
      // Widths of whole vectors drawn often: past 64 the plane of sums is then one run, and its
      // last vector is a lone one when the plane has an odd number of them.
      const int w =
          *rc::gen::oneOf(rc::gen::inRange(w_shape.kernel, 65), rc::gen::inRange(60, 90),
                          rc::gen::map(rc::gen::inRange(1, 10), [](int v) { return 16 * v; }));
      const std::string text = fmt::format(
          "avg:{}:n{}c{}:d{}h{}w{}:k{}x{}x{}:s{}x{}x{}:pb{}x{}x{}:pe{}x{}x{}:{}:{}",
          *rc::gen::element<std::string>("f32", "f16", "i8", "u8"), *rc::gen::inRange(1, 3),
          *rc::gen::inRange(1, 5), d, h, w, kd, kh, w_shape.kernel, sd, sh, w_shape.stride, pd, ph,
          w_shape.pad, pd, ph, w_shape.pad,
          *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
          *rc::gen::element<std::string>("floor", "ceil"));
      kernel_matches_spec(only, text, layout);
    });
  }
}

// With start=lowest the spec's running maximum starts at the dtype's lowest value and a tap
// replaces it only when greater: a window whose taps are all NaN, -inf or that value gives the
// lowest value at index 0 (the start's). Random inputs seldom fill a window so; here most values
// are such, for each max kernel in its layout, with and without indices.
TEST_CASE("max kernels: start=lowest where no tap is above the lowest value, index 0") {
  for (const char* kernel : {"max_nhwc", "pool_nchw", "max_nchw", "max_separable_nchw",
                             "max_separable_nhwc", "blocked_nchw"}) {
    const optimized::OptimizedEngine only(kernel);
    const Layout layout = layout_of(kernel);
    check_property(fmt::format("{}: start=lowest, windows below it == spec", kernel), [&] {
      const int kh = *rc::gen::inRange(1, 5), kw = *rc::gen::inRange(1, 5);
      const int sh = *rc::gen::inRange(1, 3), sw = *rc::gen::inRange(1, 3);
      const std::string dtype = *rc::gen::element<std::string>("f32", "f16", "bf16", "i8", "u8");
      const std::string text = fmt::format(
          "max:{}:n1c{}:h{}w{}:k{}x{}:s{}x{}:pb{}x{}:pe{}x{}:floor:nan=ignore:start=lowest{}",
          dtype, *rc::gen::oneOf(rc::gen::inRange(1, 20), rc::gen::element(64, 128)),
          *rc::gen::inRange(kh, kh + 5), *rc::gen::inRange(kw, kw + 20), kh, kw, sh, sw,
          *rc::gen::inRange(0, kh), *rc::gen::inRange(0, kw), *rc::gen::inRange(0, kh),
          *rc::gen::inRange(0, kw),
          *rc::gen::element<std::string>("", ":idx=plane", ":idx=tensor"));
      const Problem p = parse_problem(text).value();
      RC_PRE(static_cast<bool>(only.supports(p, layout)));
      Case c{p, *input_gen(p, false)};
      const double lowest = lowest_value(p.dtype);
      const bool floating = dtype[0] == 'f' || dtype[0] == 'b';
      for (double& v : c.input.values) {
        const int pick = *rc::gen::inRange(0, 8);
        if (pick < 3)
          v = lowest;
        else if (pick < 5 && floating)
          v = std::numeric_limits<double>::quiet_NaN();
        else if (pick < 6 && floating)
          v = -std::numeric_limits<double>::infinity();
      }
      const std::string failure = engine_failure(only, c, layout, *rc::gen::inRange(1, 3));
      RC_LOG() << text << ": " << failure;
      RC_ASSERT(failure.empty());
    });
  }
}

// max_separable_nchw loads a tap's values from the input row where they lie inside it and moves
// the row's first or last vector (a row shorter than a vector: the row) at its ends, lanes past
// the row holding the identity. Rows from 1 to 3 vectors long (one lane short of a vector, one
// vector, one lane more, on every target's width), windows up to 17 taps with pads on either
// side, every dtype it takes; half of the float cases with NaNs, infinities and signed zeros
// among the values (input_gen's special values: the NaN rules' path and ties).
TEST_CASE("max_separable_nchw: rows shorter and longer than a vector, taps moved at their ends") {
  const optimized::OptimizedEngine only("max_separable_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("max_separable_nchw on {} == spec", target), [&] {
      const int kh = *rc::gen::inRange(1, 8), kw = *rc::gen::inRange(1, 18);
      const int w = *rc::gen::oneOf(rc::gen::inRange(1, 50),
                                    rc::gen::element(3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33));
      const int h = *rc::gen::inRange(1, 12);
      const auto pad = [](int kernel) { return rc::gen::inRange(0, kernel); };
      const std::string text = fmt::format(
          "max:{}:n{}c{}:h{}w{}:k{}x{}:s1x1:pb{}x{}:pe{}x{}:{}{}",
          *rc::gen::element<std::string>("f32", "f32", "f16", "bf16", "i8", "u8"),
          *rc::gen::inRange(1, 3), *rc::gen::inRange(1, 5), h, w, kh, kw, *pad(kh), *pad(kw),
          *pad(kh), *pad(kw), *rc::gen::element<std::string>("floor", "ceil"),
          *rc::gen::element<std::string>("", ":nan=ignore", ":nan=ignore:start=lowest"));
      kernel_matches_spec(only, text, Layout::channels_first, *rc::gen::arbitrary<bool>());
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// max_nhwc compares i8 and u8 values without indices as they are stored: in whole vectors (64
// lanes on AVX-512) when the channels fill them, else in 16 lanes. The whole-space draw has at
// most 40 channels: here multiples of 16 and 64 and the counts between, with and without indices
// (which keep 32-bit lanes), on every target.
TEST_CASE("max_nhwc: i8 and u8 in lanes of their own width, channels filling them or not") {
  const optimized::OptimizedEngine only("max_nhwc");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("max_nhwc on i8 and u8 on {} == spec", target), [&] {
      const int kh = *rc::gen::inRange(1, 4), kw = *rc::gen::inRange(1, 4);
      const int ph = *rc::gen::inRange(0, kh), pw = *rc::gen::inRange(0, kw);
      const int h = *rc::gen::inRange(kh, kh + 5), w = *rc::gen::inRange(kw, kw + 12);
      const int c =
          *rc::gen::oneOf(rc::gen::element(16, 32, 48, 64, 128, 192), rc::gen::inRange(1, 200));
      const std::string text =
          fmt::format("max:{}:n{}c{}:h{}w{}:k{}x{}:s{}x{}:pb{}x{}:pe{}x{}:floor{}{}",
                      *rc::gen::element<std::string>("i8", "u8"), *rc::gen::inRange(1, 3), c, h, w,
                      kh, kw, *rc::gen::inRange(1, 3), *rc::gen::inRange(1, 3), ph, pw, ph, pw,
                      *rc::gen::element<std::string>("", ":idx=plane"),
                      *rc::gen::element<std::string>("", ":start=lowest"));
      kernel_matches_spec(only, text, Layout::channels_last);
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// With indices, max_nhwc runs four blocks of channels at a time where four whole vectors of them
// are left (64 f32 channels on AVX-512), each block with its own running maximum and offsets; the
// whole-space draw has at most 40 channels. NaN, infinities, -0 and ties at any tap, either NaN
// rule, start=lowest, both index forms.
TEST_CASE("max_nhwc with indices: four blocks of channels at a time, NaN and ties at any tap") {
  const optimized::OptimizedEngine only("max_nhwc");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("max_nhwc with indices on {} == spec", target), [&] {
      const int kh = *rc::gen::inRange(1, 4), kw = *rc::gen::inRange(1, 4);
      const int ph = *rc::gen::inRange(0, kh), pw = *rc::gen::inRange(0, kw);
      const int h = *rc::gen::inRange(kh, kh + 4), w = *rc::gen::inRange(kw, kw + 6);
      const int c = *rc::gen::oneOf(rc::gen::element(32, 64, 128, 192), rc::gen::inRange(60, 140));
      const std::string text = fmt::format(
          "max:{}:n{}c{}:h{}w{}:k{}x{}:s{}x{}:pb{}x{}:pe{}x{}:floor:idx={}{}",
          *rc::gen::element<std::string>("f32", "f32", "f16", "bf16", "i8"),
          *rc::gen::inRange(1, 3), c, h, w, kh, kw, *rc::gen::inRange(1, 3),
          *rc::gen::inRange(1, 3), ph, pw, ph, pw,
          *rc::gen::element<std::string>("plane", "tensor"),
          // start=lowest with nan=ignore only: the spec refuses it with propagate
          *rc::gen::element<std::string>("", ":nan=ignore", ":nan=ignore:start=lowest"));
      kernel_matches_spec(only, text, Layout::channels_last, false);
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// max_nchw takes i8 and u8 at stride 1 or 2 along W in lanes of their own width (64 on
// AVX-512). The whole-space draw's rows are short: here rows of whole vectors, of one vector and a
// part, and of less than one, at strides 1 to 3 (3: the int32 path), dilated or not, with windows
// clipped and empty (pads up to the window's extent; ceil).
TEST_CASE("max_nchw: i8 and u8 rows in lanes of their own width, one vector long or not") {
  const optimized::OptimizedEngine only("max_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("max_nchw on i8 and u8 on {} == spec", target), [&] {
      const int kh = *rc::gen::inRange(1, 4), kw = *rc::gen::inRange(1, 5);
      const int dw = *rc::gen::element(1, 1, 2);
      const int w = *rc::gen::oneOf(rc::gen::element(16, 64, 112, 128, 192),
                                    rc::gen::inRange((kw - 1) * dw + 1, 200));
      const int pw = *rc::gen::inRange(0, (kw - 1) * dw + 2);
      const std::string text = fmt::format(
          "max:{}:n{}c{}:h{}w{}:k{}x{}:s{}x{}:dl1x{}:pb{}x{}:pe{}x{}:{}{}",
          *rc::gen::element<std::string>("u8", "i8"), *rc::gen::inRange(1, 3),
          *rc::gen::inRange(1, 4), *rc::gen::inRange(kh, kh + 4), w, kh, kw,
          *rc::gen::inRange(1, 3), *rc::gen::element(2, 1, 3), dw, *rc::gen::inRange(0, kh), pw,
          *rc::gen::inRange(0, kh), *rc::gen::inRange(0, (kw - 1) * dw + 2),
          *rc::gen::element<std::string>("floor", "ceil"),
          *rc::gen::element<std::string>("", ":start=lowest"));
      kernel_matches_spec(only, text, Layout::channels_first);
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

TEST_CASE("avg_nhwc: many channels at stride 1 along W, each pixel's channels in turn") {
  // The whole-space draw has at most 40 channels; past four vectors of them (64 f32 lanes on
  // AVX-512), avg_nhwc's direct path takes each output pixel's channels in turn (SlidePixels),
  // and past 16 KB of column sums it walks the row once per chunk of channels (SlideColumns).
  const optimized::OptimizedEngine only("avg_nhwc");
  check_property("avg_nhwc with many channels == spec", [&] {
    const int kh = *rc::gen::inRange(1, 4), kw = *rc::gen::inRange(2, 4);
    const int sh = *rc::gen::inRange(1, 3), ph = *rc::gen::inRange(0, kh),
              pw = *rc::gen::inRange(0, kw);
    const int h = *rc::gen::inRange(kh, kh + 5), w = *rc::gen::inRange(kw, kw + 12);
    const int c = *rc::gen::oneOf(rc::gen::inRange(60, 200), rc::gen::inRange(1360, 1380));
    const std::string text =
        fmt::format("avg:{}:n{}c{}:h{}w{}:k{}x{}:s{}x1:pb{}x{}:pe{}x{}:{}:{}",
                    *rc::gen::element<std::string>("f32", "f16", "i8", "u8"),
                    *rc::gen::inRange(1, 3), c, h, w, kh, kw, sh, ph, pw, ph, pw,
                    *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
                    *rc::gen::element<std::string>("floor", "ceil"));
    kernel_matches_spec(only, text, Layout::channels_last);
  });
}

TEST_CASE(
    "avg_nhwc: f32 rows of 5 to 12 vectors of channels, the shared column sums in registers") {
  // On AVX-512, 3 window rows of 2 or 3 taps at stride 1 along W over these channel counts take
  // SlidePixelsInRegisters; the window's first and last rows (2 rows) and the clipped columns the
  // other paths, in the same output.
  const optimized::OptimizedEngine only("avg_nhwc");
  // Small RapidCheck sizes draw the first element: Inception's shape (3 taps, 192 channels) first.
  check_property("avg_nhwc, f32, 80 to 192 channels == spec", [&] {
    const int kw = *rc::gen::element(3, 2), ph = *rc::gen::element(1, 0, 2),
              pw = *rc::gen::element(1, 0, 2) % kw;
    const int h = *rc::gen::inRange(3, 7), w = *rc::gen::inRange(kw + 2, kw + 10);
    const std::string text = fmt::format(
        "avg:f32:n{}c{}:h{}w{}:k3x{}:s{}x1:pb{}x{}:pe{}x{}:{}:floor", *rc::gen::inRange(1, 3),
        16 * *rc::gen::element(12, 5, 6, 7, 8, 9, 10, 11), h, w, kw, *rc::gen::element(1, 2), ph,
        pw, ph, pw, *rc::gen::element<std::string>("exclude", "include_clip", "include_full"));
    kernel_matches_spec(only, text, Layout::channels_last);
  });
}

TEST_CASE(
    "avg_nhwc: 7 columns at stride 1 over 16 or 32 channels, summed by doubling in registers") {
  // On AVX-512 the columns of these rows take SumSevenColumnsInRegisters (each column sum loaded
  // once, pairs and quadruples of them carried along W): every column where each one has a tap in
  // the row (pads below 7), from sums with identity columns either side; else the interior ones.
  // The 7x7 layer's shape first; pads on the two sides drawn apart, 7 and 8 among them.
  const optimized::OptimizedEngine only("avg_nhwc");
  check_property("avg_nhwc, 7 columns, 16 or 32 channels == spec", [&] {
    const int kh = *rc::gen::element(7, 1, 2, 3, 4, 5, 6),
              pw = *rc::gen::element(3, 0, 1, 2, 4, 5, 6, 7, 8);
    const int pw_end = *rc::gen::element(pw, 0, 1, 2, 3, 4, 5, 6, 7, 8);
    const int ph = *rc::gen::inRange(0, kh), h = *rc::gen::inRange(kh, kh + 5),
              w = *rc::gen::inRange(7, 40);
    const std::string text = fmt::format(
        "avg:{}:n{}c{}:h{}w{}:k{}x7:s{}x1:pb{}x{}:pe{}x{}:{}:{}",
        *rc::gen::element<std::string>("f32", "f16", "i8", "u8"), *rc::gen::inRange(1, 3),
        *rc::gen::element(32, 16), h, w, kh, *rc::gen::element(1, 2), ph, pw, ph, pw_end,
        *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
        *rc::gen::element<std::string>("floor", "ceil"));
    kernel_matches_spec(only, text, Layout::channels_last);
  });
}

TEST_CASE(
    "avg_nhwc: i8 and u8 windows of 2 or 3 columns and rows, summed in 16-bit lanes, on every "
    "SIMD target") {
  // These take SlideColumns over 16-bit lanes wherever a row has a vector of them (32 channels on
  // AVX-512, 16 on AVX2 and SSE4), finished through 32-bit halves; every rounding rule, channel
  // counts with a tail chunk that overlaps the one before, strides 1 and 2.
  const optimized::OptimizedEngine only("avg_nhwc");
  for (const std::string& target : optimized::simd_targets()) {
    CAPTURE(target);
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("avg_nhwc, 8-bit 3x3 windows, on {} == spec", target), [&] {
      const int kh = *rc::gen::element(3, 2), kw = *rc::gen::element(3, 2);
      const int sh = *rc::gen::element(2, 1), sw = *rc::gen::element(2, 1);
      const int ph = *rc::gen::inRange(0, kh), pw = *rc::gen::inRange(0, kw);
      const std::string text =
          fmt::format("avg:{}:n{}c{}:h{}w{}:k{}x{}:s{}x{}:pb{}x{}:pe{}x{}:{}:floor:round={}",
                      *rc::gen::element<std::string>("i8", "u8"), *rc::gen::inRange(1, 3),
                      *rc::gen::element(32, 64, 16, 40, 72, 100), *rc::gen::inRange(kh, kh + 8),
                      *rc::gen::inRange(kw + 2, kw + 24), kh, kw, sh, sw, ph, pw, ph, pw,
                      *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
                      *rc::gen::element<std::string>("half_even", "half_away", "half_up",
                                                     "toward_zero", "floor"));
      kernel_matches_spec(only, text, Layout::channels_last);
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

// Bytes whose first or last one borders a page that allows no access, so that a read or write
// just before or after them faults; from mmap, unmapped by the destructor.
class FencedBytes {
 public:
  enum class Fence { before, after };
  FencedBytes(size_t size, Fence fence) {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t pages = (size + page - 1) / page;
    length_ = (pages + 2) * page;
    void* mapped = mmap(nullptr, length_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mapped != MAP_FAILED);
    base_ = static_cast<std::byte*>(mapped);
    REQUIRE(mprotect(base_ + page, pages * page, PROT_READ | PROT_WRITE) == 0);
    data_ = fence == Fence::before ? base_ + page : base_ + page + pages * page - size;
  }
  FencedBytes(const FencedBytes&) = delete;
  FencedBytes& operator=(const FencedBytes&) = delete;
  ~FencedBytes() { munmap(base_, length_); }
  std::byte* data() const { return data_; }

 private:
  std::byte* base_ = nullptr;
  std::byte* data_ = nullptr;
  size_t length_ = 0;
};

// Vectors that run past a row's, a plane's or the input's end are read through masked loads or
// stack copies, by target, type and address (kernels/simd-inl.h, MaskedLoadIsSafe): each kernel
// on each target runs on inputs and outputs that border a page without access, before them and
// after them, and must neither fault nor differ from its run on ordinary buffers. Ragged shapes:
// rows and planes that are not whole vectors, in every dtype and both layouts.
TEST_CASE("every kernel on every target reads and writes nothing beside its buffers") {
  const char* const problems[] = {
      "max:f32:n1c2:h9w147:k3x3:s2x2:pb0x0:pe0x0:floor",
      "max:f32:n1c24:h12w13:k3x3:s2x2:pb1x1:pe1x1:floor",
      "max:f16:n1c2:h9w37:k3x3:s2x2:pb1x1:pe1x1:floor",
      "max:bf16:n1c40:h5w7:k2x2:s2x2:pb0x0:pe0x0:floor",
      "max:u8:n1c3:h15w15:k3x3:s2x2:pb1x1:pe1x1:floor",
      "max:f32:n1c3:h13w13:k5x5:s1x1:pb2x2:pe2x2:floor",
      "max:f32:n1c5:d5h6w7:k2x2x2:s2x2x2:pb0x0x0:pe0x0x0:floor",
      "avg:f32:n1c3:h11w13:k3x3:s1x1:pb1x1:pe1x1:exclude:floor",
      "avg:u8:n1c5:h9w9:k3x3:s1x1:pb1x1:pe1x1:exclude:floor",
      "avg:f16:n1c24:h7w9:k3x3:s1x1:pb1x1:pe1x1:include_clip:floor",
      "avg:i8:n1c3:h11w21:k3x3:s2x2:pb1x1:pe1x1:include_full:floor",
      "avg:f32:n2c5:h7w7:k7x7:s1x1:pb0x0:pe0x0:exclude:floor",
      "avg:f32:n1c40:h3w5:k3x5:s1x1:pb0x0:pe0x0:exclude:floor",
      "avg:bf16:n1c3:h9w11:k2x2:s2x2:pb0x0:pe0x0:exclude:ceil",
  };
  int runs = 0;
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    for (const optimized::KernelInfo* k : optimized::kernel_list())
      for (const char* text : problems)
        for (const Layout layout : all_layouts) {
          const Problem p = parse_problem(text).value();
          const optimized::OptimizedEngine only(k->name);
          if (!only.supports(p, layout)) continue;
          CAPTURE(target);
          CAPTURE(k->name);
          CAPTURE(text);
          CAPTURE(layout_name(layout));
          const ShapeInfo shape = infer_shape(p).value();
          Tensor input{p.dtype, shape.input_shape,
                       std::vector<double>(static_cast<size_t>(shape.input_elements))};
          for (size_t i = 0; i < input.values.size(); ++i)
            input.values[i] = static_cast<double>((i * 37) % 23) - (p.dtype == DType::u8 ? 0 : 11);
          const std::vector<std::byte> in = to_storage(input, layout);
          const size_t out_size = static_cast<size_t>(shape.output_elements) *
                                  (in.size() / static_cast<size_t>(shape.input_elements));
          std::vector<std::byte> expected(out_size);
          REQUIRE(only.run(p, layout, RunArgs{in.data(), expected.data(), nullptr, 1}).ok());
          for (const auto fence : {FencedBytes::Fence::before, FencedBytes::Fence::after}) {
            const FencedBytes fenced_in(in.size(), fence), fenced_out(out_size, fence);
            std::memcpy(fenced_in.data(), in.data(), in.size());
            REQUIRE(
                only.run(p, layout, RunArgs{fenced_in.data(), fenced_out.data(), nullptr, 1}).ok());
            CHECK(std::memcmp(fenced_out.data(), expected.data(), out_size) == 0);
            ++runs;
          }
        }
  }
  REQUIRE(optimized::use_simd_target("").ok());
  CHECK(runs > 100);
}

TEST_CASE("avg_plane_nchw: the 3x3 window at stride 1 and pad 1, rows summed in registers") {
  // On every x86 SIMD target this window takes AvgPlane3x3 (three loads per output vector,
  // neighbours by lane shifts, written per target); planes from one pixel to several vectors, rows
  // shorter and longer than a vector.
  const optimized::OptimizedEngine only("avg_plane_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("avg_plane_nchw 3x3 s1 p1 on {} == spec", target), [&] {
      const std::string text = fmt::format(
          "avg:{}:n{}c{}:h{}w{}:k3x3:s1x1:pb1x1:pe1x1:{}:{}",
          *rc::gen::element<std::string>("f32", "f16", "i8", "u8"), *rc::gen::inRange(1, 3),
          *rc::gen::inRange(1, 5), *rc::gen::inRange(1, 40), *rc::gen::inRange(1, 40),
          *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
          *rc::gen::element<std::string>("floor", "ceil"));
      kernel_matches_spec(only, text, Layout::channels_first);
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

TEST_CASE("avg_int8_nchw: rows of up to 64 values, windows of up to 128 taps summed in 16 bits") {
  // Rows past 32 outputs take a second output vector; windows of 3x3 and 2x2 over one slice take
  // the runs kept in registers (SumInt8Rows), which store a row as a whole 32 bytes unless fewer
  // remain in the run (the guard bytes after the output must stay); the rest, and 3-D windows, a
  // row at a time. Every SIMD target: below AVX-512, at stride 1 and 2 along W, the taps are lane
  // shifts of the row's phases, in runs of compile-time shifts for 3x3 and 2x2 windows at stride
  // 2 and 3x3 at stride 1 (SumInt8RowsByShifts), else chosen per tap at run time. Half of the
  // inputs are the dtype's extreme value, so that a window of many taps reaches the 16-bit bound
  // of its sum (128 * -128 for i8, 128 * 255 for u8).
  const optimized::OptimizedEngine only("avg_int8_nchw");
  for (const std::string& target : optimized::simd_targets()) {
    REQUIRE(optimized::use_simd_target(target).ok());
    check_property(fmt::format("avg_int8_nchw on {} == spec", target), [&] {
      const bool three_d = *rc::gen::inRange(0, 4) == 0;
      const int kd = three_d ? *rc::gen::inRange(1, 4) : 1;
      const bool common = *rc::gen::inRange(0, 2) == 0;  // the runs' shapes
      const int kh = common ? *rc::gen::element(2, 3) : *rc::gen::inRange(1, 12);
      const int kw = common ? kh : *rc::gen::inRange(1, 12);
      // Stride 2 first: 3 rows at stride 2 share a row between windows (widened once).
      const int sh = common ? *rc::gen::element(2, 1, 3) : *rc::gen::inRange(1, 4),
                sw = *rc::gen::inRange(1, 4);
      const int dh = common ? 1 : *rc::gen::inRange(1, 3),
                dw = common ? 1 : *rc::gen::inRange(1, 3);
      const int ph = *rc::gen::inRange(0, kh), pw = *rc::gen::inRange(0, kw);
      const int h = *rc::gen::inRange(common ? 6 : 1, 20), w = *rc::gen::inRange(1, 65);
      const std::string dtype = *rc::gen::element<std::string>("i8", "u8");
      const std::string spatial =
          three_d ? fmt::format("d{}h{}w{}:k{}x{}x{}:s1x{}x{}:dl1x{}x{}:pb0x{}x{}:pe0x{}x{}",
                                *rc::gen::inRange(kd, kd + 4), h, w, kd, kh, kw, sh, sw, dh, dw, ph,
                                pw, ph, pw)
                  : fmt::format("h{}w{}:k{}x{}:s{}x{}:dl{}x{}:pb{}x{}:pe{}x{}", h, w, kh, kw, sh,
                                sw, dh, dw, ph, pw, ph, pw);
      const std::string text =
          fmt::format("avg:{}:n{}c{}:{}:{}:{}:round={}", dtype, *rc::gen::inRange(1, 3),
                      *rc::gen::inRange(1, 6), spatial,
                      *rc::gen::element<std::string>("exclude", "include_clip", "include_full"),
                      *rc::gen::element<std::string>("floor", "ceil"),
                      *rc::gen::element<std::string>("half_even", "half_away", "half_up",
                                                     "toward_zero", "floor"));
      const Result<Problem> parsed = parse_problem(text);
      RC_PRE(parsed.ok() && static_cast<bool>(validate(*parsed)) &&
             static_cast<bool>(only.supports(*parsed, Layout::channels_first)));
      Case c{*parsed, *input_gen(*parsed, true)};
      if (*rc::gen::inRange(0, 2) == 0) {
        const double extreme = dtype == "i8" ? -128.0 : 255.0;
        for (double& v : c.input.values) v = extreme;
      }
      const std::string failure =
          engine_failure(only, c, Layout::channels_first, *rc::gen::inRange(1, 3));
      RC_LOG() << text << ": " << failure;
      RC_ASSERT(failure.empty());
    });
  }
  REQUIRE(optimized::use_simd_target("").ok());
}

TEST_CASE("mutant kernels are caught") {
  for (optimized::Mutation mutation :
       {optimized::Mutation::window_edge, optimized::Mutation::border_divisor}) {
    const optimized::OptimizedEngine mutant({}, mutation);
    CAPTURE(mutant.name());
    // Draw where each mutant lives (a float average for the divisor mutant, whose divisor rule is
    // exclude), so that it is found within the few cases of the sanitizer build too.
    CaseOptions o = engine_options();
    if (mutation == optimized::Mutation::border_divisor) {
      o.dtypes = {DType::f32};
      o.ops = {Op::avg};
      o.any_divisor = false;
    }
    const auto counterexample = find_counterexample(matches_spec(mutant, o));
    CHECK(counterexample.has_value());
    if (counterexample) MESSAGE(mutant.name() << " caught:\n" << *counterexample);
  }
}

TEST_CASE("a problem no kernel takes runs on the reference, and is counted") {
  Result<Problem> p = parse_problem("avg:f64:n1c3:h5w5:k3x3:s1x1:pb1x1:pe1x1:exclude:floor");
  REQUIRE(p.ok());
  const optimized::Selection s = optimized::select_kernel(*p, Layout::channels_first);
  CHECK(s.kernel == nullptr);
  CHECK(s.fallback_reason.find("dtype f64") != std::string::npos);
  optimized::reset_fallback_stats();
  Tensor input{DType::f64, input_shape(*p), std::vector<double>(75, 1.5)};
  const Case c{*p, input};
  CHECK(engine_failure(optimized::engine(), c, Layout::channels_first, 2).empty());
  CHECK(optimized::fallback_stats().calls == 2);  // run_engine runs twice (two output poisons)
  CHECK(optimized::fallback_stats().last_reason.find("f64") != std::string::npos);
  // And one a kernel takes is not counted.
  Result<Problem> q = parse_problem("avg:f32:n1c3:h5w5:k3x3:s1x1:pb1x1:pe1x1:exclude:floor");
  REQUIRE(q.ok());
  optimized::reset_fallback_stats();
  const Case d{*q, Tensor{DType::f32, input_shape(*q), std::vector<double>(75, 1.5)}};
  CHECK(engine_failure(optimized::engine(), d, Layout::channels_last, 1).empty());
  CHECK(optimized::fallback_stats().calls == 0);
}

TEST_CASE(
    "zeros=ordered: the reference engine orders -0 below +0, and the kernels leave it to it") {
  // Every window of zeros of random sign, in both layouts, with and without indices: the engines
  // against the spec's evaluation, where a max that kept the first zero would give -0.
  for (const char* text : {"max:f32:n1c3:h6w6:k2x2:s1x1:pb1x1:pe0x0:floor:zeros=ordered",
                           "max:f16:n2c5:h5w7:k3x2:s1x2:pb0x0:pe0x0:floor:idx=plane:zeros=ordered",
                           "max:f32:n1c4:w9:k3:s1:pb0:pe0:floor:nan=ignore:start=lowest:"
                           "zeros=ordered"}) {
    CAPTURE(text);
    Result<Problem> p = parse_problem(text);
    REQUIRE(p.ok());
    const std::vector<int64_t> shape = input_shape(*p);
    int64_t elements = 1;
    for (int64_t d : shape) elements *= d;
    std::vector<double> values(static_cast<size_t>(elements));
    for (size_t i = 0; i < values.size(); ++i) values[i] = (i * 7 + i / 3) % 5 < 2 ? 0.0 : -0.0;
    const Case c{*p, Tensor{p->dtype, shape, values}};
    for (Layout l : {Layout::channels_first, Layout::channels_last}) {
      CHECK(engine_failure(reference::engine(), c, l, 1).empty());
      optimized::reset_fallback_stats();
      CHECK(engine_failure(optimized::engine(), c, l, 1).empty());
      CHECK(optimized::fallback_stats().calls > 0);
    }
  }
  // The first-value rule on the same zeros differs: the check can fail.
  Result<Problem> first = parse_problem("max:f32:n1c1:w2:k2:s1:pb0:pe0:floor");
  REQUIRE(first.ok());
  Problem ordered = *first;
  ordered.zeros = Zeros::ordered;
  const Tensor zeros{DType::f32, {1, 1, 2}, {-0.0, 0.0}};
  CHECK(std::signbit(evaluate(*first, zeros)->values.values[0]));
  CHECK(!std::signbit(evaluate(ordered, zeros)->values.values[0]));
}

// The harness itself must fail on engines that write past their output or leave it unwritten.
class BrokenEngine final : public poolspec::Engine {
 public:
  enum class Fault { writes_past_output, leaves_one_unwritten };
  explicit BrokenEngine(Fault f) : fault_(f) {}
  std::string_view name() const override { return "broken"; }
  Status supports(const Problem&, Layout) const override { return Ok{}; }
  ErrorBound error_bound(const Problem& p, Layout l) const override {
    return reference::engine().error_bound(p, l);
  }
  Status run(const Problem& p, Layout l, const RunArgs& args) const override {
    // Runs the reference into a copy, then delivers it with the fault.
    Result<ShapeInfo> shape = validated_shape(p);
    const size_t bytes = static_cast<size_t>(shape->output_elements * storage_bytes(p.dtype));
    std::vector<std::byte> out(bytes);
    RunArgs a = args;
    a.output = out.data();
    if (Status s = reference::engine().run(p, l, a); !s) return s;
    if (fault_ == Fault::writes_past_output) {
      std::memcpy(args.output, out.data(), bytes);
      args.output[bytes] = std::byte{0};
    } else {
      std::memcpy(args.output, out.data(), bytes - 1);
    }
    return Ok{};
  }

 private:
  Fault fault_;
};

TEST_CASE("the engine harness catches a write past the output and an unwritten element") {
  Result<Problem> p = parse_problem("max:f32:n1c2:h4w4:k2x2:s2x2:pb0x0:pe0x0:floor");
  REQUIRE(p.ok());
  const Case c{*p, Tensor{DType::f32, input_shape(*p), std::vector<double>(32, 2.0)}};
  const std::string past = engine_failure(BrokenEngine(BrokenEngine::Fault::writes_past_output), c,
                                          Layout::channels_first, 1);
  CHECK(past.find("wrote past its output") != std::string::npos);
  const std::string unwritten = engine_failure(
      BrokenEngine(BrokenEngine::Fault::leaves_one_unwritten), c, Layout::channels_last, 1);
  CHECK(unwritten.find("unwritten") != std::string::npos);
}

// Found by fuzz_engines (avg:f16:...:override=1:ceil_torch:empty=-inf on SSSE3): an f32 sum
// within its bound of -65504 lay past f16's overflow threshold (65520), and the last rounding gave
// -inf. An infinity of y's sign is within the bound exactly when |y| + allowed reaches the
// threshold.
TEST_CASE(
    "declared bounds: an infinity is within the bound only where the bound reaches the overflow "
    "threshold") {
  const Problem p = parse_problem("avg:f16:n1c1:w2:k2:s1:pb0:pe0:override=1:floor").value();
  const ErrorBound bound = optimized::engine().error_bound(p, Layout::channels_first);
  CHECK(overflow_threshold(DType::f16) == 65520.0);
  CHECK(overflow_threshold(DType::f32) == std::ldexp(2.0 - std::ldexp(1.0, -24), 127));
  const auto judge = [&](double a, double b, double got) {
    const Tensor input{DType::f16, {1, 1, 2}, {a, b}};
    const Output expected = evaluate(p, input).value();
    Output out = expected;
    out.values.values[0] = got;
    return compare_output(p, input, expected, out, bound).value().passed();
  };
  // -65504 - 15.9375 = -65519.9375: the exact mean rounds to -65504, a sum within the bound to
  // -inf.
  CHECK(judge(-65504, -15.9375, -std::numeric_limits<double>::infinity()));
  CHECK_FALSE(judge(-65504, -15.9375, std::numeric_limits<double>::infinity()));  // the wrong sign
  CHECK_FALSE(judge(-30000, -30000, -std::numeric_limits<double>::infinity()));   // far from it
}

// A bound never lets a zero take the other sign for free: the sign of a rounded (or flushed) zero
// is that of the value before the last rounding; a window of zeros alone sums to -0 only from -0s
// (the spec's value), or to +0 from a sum started at +0.
TEST_CASE(
    "declared bounds: a zero keeps its sign unless the value before rounding reaches past 0") {
  const Problem p = parse_problem("avg:f32:n1c1:w2:k2:s1:pb0:pe0:exclude:floor").value();
  const Problem flush = parse_problem(format_problem(p) + ":subnormals=may_flush").value();
  const ErrorBound bound = optimized::engine().error_bound(p, Layout::channels_first);
  REQUIRE_FALSE(bound.exact);
  const auto judge = [&](const Problem& q, double a, double b, double got) {
    const Tensor input{DType::f32, {1, 1, 2}, {a, b}};
    const Output expected = evaluate(q, input).value();
    Output out = expected;
    out.values.values[0] = got;
    return compare_output(q, input, expected, out, bound).value().passed();
  };
  // A window of -0s: the spec's -0 (IEEE sums of the taps), or +0 (a sum started at +0).
  CHECK(judge(p, -0.0, -0.0, -0.0));
  CHECK(judge(p, -0.0, -0.0, 0.0));
  CHECK(judge(p, 0.0, -0.0, 0.0));
  CHECK_FALSE(judge(p, 0.0, -0.0, -0.0));  // no sum holding a +0 gives -0
  // 2^-149 and -2^-149: an exact +0, and sums that may round either way reach both signs.
  const double tiny = std::ldexp(1.0, -149);
  CHECK(judge(p, tiny, -tiny, -0.0));
  // Two 2^-140: the subnormal mean stays positive within the bound before the last rounding.
  const double small = std::ldexp(1.0, -140);
  CHECK_FALSE(judge(p, small, small, 0.0));       // no flush asked
  CHECK(judge(flush, small, small, 0.0));         // flushed, with its sign
  CHECK_FALSE(judge(flush, small, small, -0.0));  // not the other
}

TEST_CASE("declared bounds: exact for max and integers, derived for float averages") {
  Result<Problem> avg = parse_problem("avg:f32:n1c1:h8w8:k3x3:s1x1:pb1x1:pe1x1:exclude:floor");
  Result<Problem> max = parse_problem("max:f32:n1c1:h8w8:k3x3:s1x1:pb1x1:pe1x1:floor");
  REQUIRE(avg.ok());
  REQUIRE(max.ok());
  CHECK(optimized::engine().error_bound(*max, Layout::channels_first).exact);
  const ErrorBound b = optimized::engine().error_bound(*avg, Layout::channels_first);
  CHECK_FALSE(b.exact);
  CHECK(b.operations == 10);  // 9 taps: 8 additions, the reciprocal, the product
  CHECK(b.unit_roundoff == std::ldexp(1.0, -24));
  // A window of nine 1.0: allowed = gamma(10) * 9 / 9 + half an ulp of 1, and a bit.
  const double gamma = 10 * std::ldexp(1.0, -24) / (1 - 10 * std::ldexp(1.0, -24));
  CHECK(allowed_error(b, DType::f32, 9, 9, 1.0) ==
        doctest::Approx(gamma + 10 * b.underflow + std::ldexp(1.0, -24)).epsilon(1e-6));
}

}  // namespace
}  // namespace poolspec::test
