#include "suite.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/frontends.hpp"
#include "poolspec/network_layers.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/seeds.hpp"
#include "poolspec/shape.hpp"
#include "poolspec/translate.hpp"

namespace poolspec::certify {

std::string_view values_name(Values v) {
  switch (v) {
    case Values::random: return "random";
    case Values::nan_at: return "nan_at";
    case Values::infinities: return "infinities";
    case Values::neg_inf_only: return "neg_inf_only";
    case Values::signed_zero: return "signed_zero";
    case Values::subnormal: return "subnormal";
    case Values::small_normal: return "small_normal";
    case Values::ties: return "ties";
    case Values::extremes: return "extremes";
    case Values::half_ties: return "half_ties";
    case Values::nan_sprinkled: return "nan_sprinkled";
    case Values::nan_rows: return "nan_rows";
    case Values::non_negative: return "non_negative";
    case Values::large_magnitude: return "large_magnitude";
  }
  return "?";
}

namespace {

using Ints = std::vector<int64_t>;

// The three things a user asks of pooling, as an intent's op and include_pad.
enum class Mode { avg_exclude, avg_include, max };
constexpr Mode all_modes[] = {Mode::avg_exclude, Mode::avg_include, Mode::max};
std::string_view mode_name(Mode m) {
  return m == Mode::max ? "max" : m == Mode::avg_include ? "avg_include" : "avg_exclude";
}

Intent intent(Mode mode, DType dtype, Ints shape, Ints kernel, Ints strides, Ints pads_begin,
              Ints pads_end, bool ceil, Ints dilations = {}) {
  Intent in;
  in.op = mode == Mode::max ? Op::max : Op::avg;
  in.include_pad = mode == Mode::avg_include;
  in.dtype = dtype;
  in.shape = std::move(shape);
  in.kernel = std::move(kernel);
  in.strides = std::move(strides);
  in.pads_begin = std::move(pads_begin);
  in.pads_end = std::move(pads_end);
  in.ceil = ceil;
  in.dilations = dilations.empty() ? Ints(in.kernel.size(), 1) : std::move(dilations);
  return in;
}

Ints repeat(int64_t v, size_t rank) { return Ints(rank, v); }

// A deterministic 1-in-n choice of the enumerations' points (splitmix64 of the point's number).
bool chosen(uint64_t point, uint64_t one_in) {
  uint64_t z = point + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) % one_in == 0;
}

// benchdnn's shapes_basic categories (docs/testing.md 10.1), in this project's own sizes,
// for 1, 2 and 3 spatial axes, under every mode, floor and ceil.
void add_shapes(std::vector<Case>& out, bool small) {
  struct Shape {
    const char* name;
    int64_t n, c, d, k, s, pb, pe;
  };
  const Shape shapes[] = {
      {"regular", 2, 16, 8, 3, 2, 1, 1},       {"ic_tail", 1, 17, 7, 3, 1, 1, 1},
      {"asymmetric_pad", 1, 8, 8, 3, 2, 1, 2}, {"k_equals_s", 1, 8, 8, 2, 2, 0, 0},
      {"only_pad_l", 1, 8, 7, 3, 2, 1, 0},     {"no_pad", 1, 8, 6, 3, 1, 0, 0},
      {"k_equals_p", 1, 4, 6, 2, 2, 2, 2},     {"negative_p_r", 1, 4, 30, 3, 2, 0, -1},
      {"k_equals_p_r", 1, 4, 7, 3, 2, 0, 3},   {"stride_over_k", 1, 4, 9, 2, 3, 1, 1},
  };
  for (size_t rank = 1; rank <= 3; ++rank)
    for (const Shape& s : shapes) {
      // smoke: 3-D only for the regular and asymmetric-pad shapes
      if (small && rank == 3 && std::string_view(s.name) != "regular" &&
          std::string_view(s.name) != "asymmetric_pad")
        continue;
      Ints shape{s.n, s.c};
      for (size_t i = 0; i < rank; ++i)
        shape.push_back(rank == 3 ? std::min<int64_t>(s.d, 7) + static_cast<int64_t>(i)
                                  : s.d + static_cast<int64_t>(i));
      for (Mode m : all_modes)
        for (bool ceil : {false, true}) {
          if (small && ceil && m != Mode::avg_include) continue;
          Case c;
          c.id = fmt::format("shapes/{}d:{}:{}{}", rank, s.name, mode_name(m), ceil ? ":ceil" : "");
          c.part = "shapes";
          c.intent = intent(m, DType::f32, shape, repeat(s.k, rank), repeat(s.s, rank),
                            repeat(s.pb, rank), repeat(s.pe, rank), ceil);
          out.push_back(c);
          if (!small &&
              (std::string_view(s.name) == "regular" || std::string_view(s.name) == "ic_tail")) {
            for (DType dt : {DType::i8, DType::u8, DType::f16}) {
              c.id = fmt::format("shapes/{}d:{}:{}{}:{}", rank, s.name, mode_name(m),
                                 ceil ? ":ceil" : "", dtype_name(dt));
              c.intent.dtype = dt;
              out.push_back(c);
            }
          }
        }
    }
  // Global pooling (benchdnn shapes_global_pooling): the kernel is the input.
  for (Mode m : {Mode::avg_exclude, Mode::max}) {
    for (const Ints& hw : {Ints{7, 7}, Ints{1, 13}, Ints{8, 5}}) {
      Case c;
      c.id = fmt::format("shapes/global:{}x{}:{}", hw[0], hw[1], mode_name(m));
      c.part = "shapes";
      c.intent = intent(m, DType::f32, {2, 20, hw[0], hw[1]}, hw, {1, 1}, {0, 0}, {0, 0}, false);
      out.push_back(c);
      if (!small) {
        c.id += ":i8";
        c.intent.dtype = DType::i8;
        c.intent.shape[1] = 16;  // lib_nn works on channel multiples of 4
        c.intent.shape[0] = 1;
        out.push_back(c);
      }
    }
  }
}

// Pooling layers of real networks (check/src/network_layers.cpp): in `ci` with 8 channels and
// 3-D volumes halved; `full` has their real sizes.
void add_topologies(std::vector<Case>& out, bool real_channels) {
  for (const NetworkLayer& layer : network_layers()) {
    // The list's problems are valid, f32, of plain geometry: a max, or an average that counts
    // padding or not (tests/test_certify.cpp holds each to it).
    const Problem p = parse_problem(layer.problem).value();
    Case c;
    c.id = fmt::format("topologies/{}", layer.name);
    c.part = "topologies";
    Ints shape = input_shape(p);
    if (!real_channels) {  // ci: 8 channels, and 3-D volumes halved along each axis
      shape[1] = 8;
      if (shape.size() == 5)
        for (size_t i = 2; i < 5; ++i) shape[i] /= 2;
    }
    Ints k, s, pb, pe, dl;
    for (const Axis& a : p.axes) {
      k.push_back(a.kernel);
      s.push_back(a.stride);
      pb.push_back(a.pad_begin);
      pe.push_back(a.pad_end);
      dl.push_back(a.dilation);
    }
    const Mode mode = p.op == Op::max                 ? Mode::max
                      : p.divisor == Divisor::exclude ? Mode::avg_exclude
                                                      : Mode::avg_include;
    c.intent = intent(mode, p.dtype, shape, k, s, pb, pe, p.rounding != Rounding::floor, dl);
    out.push_back(c);
  }
}

// The zone where frameworks disagree, enumerated (docs/testing.md 10.3): 1-D
// extents 1..8, kernels 1..4, strides 1..3, dilations 1..2, pads 0..k on each side, floor and
// ceil, every mode; 2-D over a smaller grid. `one_in` thins it deterministically.
void add_enumeration(std::vector<Case>& out, uint64_t one_in_1d, uint64_t one_in_2d) {
  uint64_t point = 0;
  for (int64_t d = 1; d <= 8; ++d)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t dl = 1; dl <= 2; ++dl)
          for (int64_t pb = 0; pb <= k; ++pb)
            for (int64_t pe = 0; pe <= k; ++pe)
              for (bool ceil : {false, true})
                for (Mode m : all_modes) {
                  if (!chosen(point++, one_in_1d)) continue;
                  Case c;
                  c.id = fmt::format("enum1d/d{}k{}s{}dl{}pb{}pe{}:{}{}", d, k, s, dl, pb, pe,
                                     mode_name(m), ceil ? ":ceil" : "");
                  c.part = "enumeration";
                  c.intent = intent(m, DType::f32, {1, 3, d}, {k}, {s}, {pb}, {pe}, ceil, {dl});
                  out.push_back(c);
                }
  point = 0;
  for (int64_t h : {2, 3, 5})
    for (int64_t w : {2, 3, 5})
      for (int64_t kh = 1; kh <= 3; ++kh)
        for (int64_t kw = 1; kw <= 3; ++kw)
          for (int64_t sh = 1; sh <= 2; ++sh)
            for (int64_t sw = 1; sw <= 2; ++sw)
              for (int pads = 0; pads < 16; ++pads)
                for (bool ceil : {false, true})
                  for (Mode m : all_modes) {
                    if (!chosen(point++, one_in_2d)) continue;
                    const Ints pb{pads & 1, (pads >> 1) & 1}, pe{(pads >> 2) & 1, (pads >> 3) & 1};
                    Case c;
                    c.id = fmt::format("enum2d/h{}w{}k{}x{}s{}x{}pb{}x{}pe{}x{}:{}{}", h, w, kh, kw,
                                       sh, sw, pb[0], pb[1], pe[0], pe[1], mode_name(m),
                                       ceil ? ":ceil" : "");
                    c.part = "enumeration";
                    c.intent =
                        intent(m, DType::f32, {1, 2, h, w}, {kh, kw}, {sh, sw}, pb, pe, ceil);
                    out.push_back(c);
                  }
}

// Adversarial values on a few geometries with padding, ceil overhang and overlapping windows.
void add_values(std::vector<Case>& out, bool small) {
  struct Geometry {
    const char* name;
    Ints shape, k, s, pb, pe;
    bool ceil;
  };
  const Geometry geometries[] = {
      {"1d_k3s2p1_ceil", {1, 2, 7}, {3}, {2}, {1}, {1}, true},
      {"2d_k3s2p1", {1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
      {"2d_k2s2", {1, 4, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false},
  };
  for (const Geometry& g : geometries) {
    int64_t elements = 1;
    for (int64_t e : g.shape) elements *= e;
    for (Mode m : all_modes) {
      const auto add = [&](Values v, DType dt, int64_t at) {
        Case c;
        c.id = fmt::format(
            "values/{}:{}:{}:{}{}", g.name, mode_name(m), dtype_name(dt), values_name(v),
            v == Values::nan_at || v == Values::infinities ? fmt::format("@{}", at) : "");
        c.part = "values";
        c.intent = intent(m, dt, g.shape, g.k, g.s, g.pb, g.pe, g.ceil);
        c.values = v;
        c.at = at;
        out.push_back(c);
      };
      for (int64_t at : {int64_t{0}, elements / 2 - 1, elements - 1}) {
        add(Values::nan_at, DType::f32, at);
        if (!small) add(Values::infinities, DType::f32, at);
      }
      if (small) continue;
      for (Values v : {Values::neg_inf_only, Values::signed_zero, Values::ties, Values::extremes})
        add(v, DType::f32, 0);
      add(Values::subnormal, DType::f32, 0);
      add(Values::subnormal, DType::f16, 0);
      add(Values::small_normal, DType::f32, 0);
      add(Values::small_normal, DType::f16, 0);
      add(Values::extremes, DType::f16, 0);
      for (DType dt : {DType::i8, DType::u8}) {
        add(Values::extremes, dt, 0);
        add(Values::half_ties, dt, 0);
        add(Values::ties, dt, 0);
      }
    }
  }
}

// The widest vectors a kernel of the optimized engine or a peer runs: 16 f32 lanes (AVX-512; 4 for
// SSE4 and NEON, 8 for AVX2) and 64 8-bit lanes (AVX-512BW). Channel counts 1..2V+1 reach, for
// every narrower V too, the empty, partial and whole first and second vectors and the tail.
constexpr int64_t widest_f32_lanes = 16;
constexpr int64_t widest_byte_lanes = 64;

// Sweeps of what kernels specialise on (docs/certification.md, "The suites"): every channel count
// 1..2V+1 for every vector width V (and peers' tile of 48), the float ones crossed with every kind
// of values, the 8-bit ones each with an integer kind in turn; widths and heights on both sides of
// 64, 256 and 2^16; divisor overrides; dilations above 2 with odd pads; windows of hundreds and
// thousands of taps. The operator, dtype and rounding vary with the case number, so that every pair
// of (channels, values, operator) and (size, operator) appears without taking their product.
void add_sweeps(std::vector<Case>& out) {
  const Mode modes[] = {Mode::max, Mode::avg_exclude, Mode::avg_include};
  const auto add = [&](std::string id, Intent in, Values v = Values::random, int64_t at = 0) {
    Case c;
    c.id = "sweeps/" + std::move(id);
    c.part = "sweeps";
    c.intent = std::move(in);
    c.values = v;
    c.at = at;
    out.push_back(std::move(c));
  };
  // A 5x6 image, 3x3 windows at stride 2 with padding 1: border and interior windows; with
  // nan_rows, first-row windows of nothing but NaN.
  const auto add_channels = [&](int64_t ch, Values v, Mode m, DType dt, bool ceil) {
    add(fmt::format("c{}:{}:{}:{}{}", ch, values_name(v), mode_name(m), dtype_name(dt),
                    ceil ? ":ceil" : ""),
        intent(m, dt, {1, ch, 5, 6}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, ceil), v, 5 * 6 * ch / 2 + 1);
  };
  // Channels x values (float lanes, and peers' 48 tile).
  std::vector<int64_t> channels;
  for (int64_t ch = 1; ch <= 2 * widest_f32_lanes + 1; ++ch) channels.push_back(ch);
  for (const int64_t ch : {47, 48, 49}) channels.push_back(ch);
  const Values kinds[] = {Values::random,         Values::nan_sprinkled, Values::nan_rows,
                          Values::infinities,     Values::signed_zero,   Values::ties,
                          Values::extremes,       Values::subnormal,     Values::non_negative,
                          Values::large_magnitude};
  size_t n = 0;
  for (const int64_t ch : channels)
    for (const Values v : kinds) {
      const Mode m = modes[(n + n / 3) % 3];
      const bool nan_kind =
          v == Values::nan_sprinkled || v == Values::nan_rows || v == Values::infinities;
      const bool integer =
          !nan_kind && v != Values::signed_zero && v != Values::subnormal && n % 3 == 1;
      const DType dt = integer      ? ((n / 3) % 2 == 1 ? DType::i8 : DType::u8)
                       : n % 7 == 3 ? DType::f16
                                    : DType::f32;
      const bool ceil = (n + n / 10) % 2 == 1;  // not tied to the kind's place in the list
      ++n;
      add_channels(ch, v, m, dt, ceil);
    }
  // The 8-bit lanes past the float ones: each count with i8 and u8, the integer kinds, operators
  // and rounding in turn (the counts of 63-65 and 127-129 also with f32).
  const Values integer_kinds[] = {Values::random, Values::ties, Values::extremes,
                                  Values::non_negative, Values::large_magnitude};
  n = 0;
  for (int64_t ch = 2 * widest_f32_lanes + 2; ch <= 2 * widest_byte_lanes + 1; ++ch) {
    if (ch >= 47 && ch <= 49) continue;
    for (const DType dt : {DType::i8, DType::u8}) {
      add_channels(ch, integer_kinds[n % 5], modes[(n + n / 5) % 3], dt, (n / 2) % 2 == 1);
      ++n;
    }
    if (ch % widest_byte_lanes <= 1 || ch % widest_byte_lanes == widest_byte_lanes - 1)
      add_channels(ch, kinds[n % 10], modes[n % 3], DType::f32, n % 2 == 0);
  }
  // Widths and heights on both sides of 64 and 256 (2 channels), and of 2^16 (1-D).
  n = 0;
  for (const int64_t e : {63, 64, 65, 255, 256, 257})
    for (const bool wide : {true, false})
      for (const Mode m : modes) {
        const Ints shape = wide ? Ints{1, 2, 3, e} : Ints{1, 2, e, 3};
        const bool ceil = n++ % 2 == 1;
        add(fmt::format("{}{}:{}{}", wide ? "w" : "h", e, mode_name(m), ceil ? ":ceil" : ""),
            intent(m, DType::f32, shape, {3, 3}, {1, 2}, {1, 1}, {1, 0}, ceil));
      }
  for (const int64_t e : {65535, 65536, 65537})
    for (const Mode m : modes)
      add(fmt::format("w{}:{}", e, mode_name(m)),
          intent(m, DType::f32, {1, 1, e}, {3}, {2}, {1}, {1}, false));
  // divisor_override (PyTorch's, under the rule sets that have it), with padding and ceil
  // overhang, and an override smaller than the window.
  for (const int64_t d : {1, 3, 5, 7, 100}) {
    Intent in = intent(Mode::avg_include, DType::f32, {1, 3, 6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1},
                       d % 2 == 1);
    in.divisor_override = d;
    add(fmt::format("override{}", d), in);
  }
  // Dilations above 2 with odd pads, in 1, 2 and 3 dimensions.
  n = 0;
  for (const Mode m : modes)
    for (const bool ceil : {false, true}) {
      add(fmt::format("dilation3:1d:{}{}", mode_name(m), ceil ? ":ceil" : ""),
          intent(m, DType::f32, {1, 3, 20}, {3}, {2}, {1}, {3}, ceil, {3}));
      add(fmt::format("dilation4:2d:{}{}", mode_name(m), ceil ? ":ceil" : ""),
          intent(m, DType::f32, {1, 2, 11, 12}, {3, 2}, {1, 2}, {1, 3}, {3, 1}, ceil, {3, 4}));
      add(fmt::format("dilation3:3d:{}{}", mode_name(m), ceil ? ":ceil" : ""),
          intent(m, DType::f32, {1, 2, 9, 9, 10}, {2, 2, 2}, {2, 1, 2}, {1, 1, 3}, {1, 3, 1}, ceil,
                 {3, 3, 5}));
    }
  // Windows of hundreds and thousands of taps: post-ReLU-like values (sums that only grow) and
  // random ones; f32 and f16.
  for (const Mode m : modes)
    for (const Values v : {Values::non_negative, Values::random}) {
      const char* vn = v == Values::non_negative ? "non_negative" : "random";
      add(fmt::format("taps400:{}:{}", mode_name(m), vn),
          intent(m, DType::f32, {1, 2, 24, 24}, {20, 20}, {1, 1}, {1, 1}, {1, 1}, false), v);
      add(fmt::format("taps3136:global56:{}:{}", mode_name(m), vn),
          intent(m, DType::f32, {1, 4, 56, 56}, {56, 56}, {1, 1}, {0, 0}, {0, 0}, false), v);
      add(fmt::format("taps3000:1d:{}:{}", mode_name(m), vn),
          intent(m, DType::f32, {1, 2, 3100}, {3000}, {50}, {0}, {0}, false), v);
      add(fmt::format("taps400:{}:{}:f16", mode_name(m), vn),
          intent(m, DType::f16, {1, 2, 24, 24}, {20, 20}, {2, 2}, {0, 0}, {0, 0}, true), v);
    }
}

// The seed documents' examples with their own inputs, under their front-end's rules.
void add_seeds(std::vector<Case>& out) {
  for (const seeds::Example& e : seeds::examples()) {
    if (e.input.empty()) continue;
    const FrontendInput in{e.op, DType::f32, e.input_shape, 0, false};
    const bool ov = e.frontend == seeds::Frontend::openvino;
    Result<Problem> p = ov ? from_openvino(e.attributes, in) : from_ngraph(e.attributes, in);
    if (!p) continue;  // an example whose attributes the spec refuses (ERRATA.md)
    Case c;
    c.id = fmt::format("seeds/{}", e.id);
    c.part = "seeds";
    c.fixed = *p;
    c.fixed_rules = ov ? "openvino" : "ngraph";
    c.fixed_input = Tensor{DType::f32, input_shape(*p), e.input};
    c.note = std::string(e.source);
    c.intent.op = e.op;
    c.intent.dtype = DType::f32;
    out.push_back(c);
  }
}

// Cases from the bugs of docs/semantics.md (section 3), each with its report.
void add_regressions(std::vector<Case>& out) {
  const auto add = [&](const char* name, const char* note, Intent in, Values v = Values::random) {
    Case c;
    c.id = fmt::format("regressions/{}", name);
    c.part = "regressions";
    c.intent = std::move(in);
    c.values = v;
    c.note = note;
    out.push_back(c);
  };
  add("include_pad_ceil_overhang",
      "onnx/onnx#5276, microsoft/onnxruntime#16203, uxlfoundation/oneDNN#513",
      intent(Mode::avg_include, DType::f32, {1, 1, 4, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true));
  add("ceil_stride_over_kernel", "semantics.md 3 G1 (ONNX reference splits the ceil padding)",
      intent(Mode::avg_exclude, DType::f32, {1, 1, 5}, {3}, {4}, {0}, {0}, true));
  // The last ceil window would start at 2 * 2 - 1 = 3, in the end padding of an extent of 3:
  // PyTorch and ONNX 22 drop it (2 outputs), OpenVINO's ceil keeps it (3).
  add("ceil_drop_last_window", "semantics.md 0 DROP (PyTorch, ONNX-22 vs OpenVINO CEIL)",
      intent(Mode::max, DType::f32, {1, 1, 3}, {2}, {2}, {1}, {1}, true));
  add("asymmetric_end_pad_stride1", "semantics.md 3 G2 (pads unpacked in the wrong order)",
      intent(Mode::max, DType::f32, {1, 1, 4, 5}, {2, 2}, {1, 1}, {0, 0}, {1, 0}, false));
  add("window_all_padding", "semantics.md 3 G12 (XNNPACK: 0 * (1/0) = NaN), onnx/onnx#1922",
      intent(Mode::avg_exclude, DType::f32, {1, 1, 3, 3}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, false));
  add("max_of_neg_inf", "plaidml/plaidml PR #1780 (-FLT_MAX from a window of -inf)",
      intent(Mode::max, DType::f32, {1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false),
      Values::neg_inf_only);
  add("int8_average_ties", "uxlfoundation/oneDNN#560, #939, ARM-software/CMSIS_5#1012",
      intent(Mode::avg_exclude, DType::i8, {1, 4, 2, 8}, {1, 2}, {1, 2}, {0, 0}, {0, 0}, false),
      Values::half_ties);
  add("dilated_ceil", "pytorch/pytorch dilated ceil windows (semantics.md 3 A)",
      intent(Mode::max, DType::f32, {1, 1, 8}, {3}, {2}, {1}, {1}, true, {2}));
  // Pads of 2 with a stride of 2, the windows fitting exactly (a valid TOSA problem): a divisor
  // that counts the padding from the output index instead of the window's start is wrong on the
  // second window from either end.
  add("exclude_divisor_pad_over_stride", "findings.md MLIR-3 (MLIR 15 tosa-to-linalg)",
      intent(Mode::avg_exclude, DType::f32, {1, 2, 5, 5}, {3, 3}, {2, 2}, {2, 2}, {2, 2}, false));
}

// A case of the fields part: `problem` (a problem string) asked under `rules`, or an error when the
// string is not a valid problem.
Result<Case> fields_case(const std::string& name, const char* rules, const std::string& problem,
                         const char* note) {
  Result<Problem> p = parse_problem(problem);
  if (!p || !validate(*p))
    return Error{fmt::format("fields/{}: '{}' is not a valid problem", name, problem)};
  Case c;
  c.id = fmt::format("fields/{}", name);
  c.part = "fields";
  c.fixed = *p;
  c.fixed_rules = rules;
  c.intent.op = p->op;
  c.intent.dtype = p->dtype;
  c.note = note;
  return c;
}

// Fields of the problem model that no translated intent sets, each asked under the rule set that
// has it ("spec": the spec's rules, which every backend claiming them, or held to them with
// --rules spec, is asked): TOSA's zero points (padding holds no zero point) and acc_type (FP32 and
// FP16 on f16), the f64, i32 and bf16 dtypes, every integer rounding, a bias, a batch of 3,
// channels past a 64-wide block, 8-bit sums past 16 bits, strides over the kernel, and the index
// order and axis of ONNX's and OpenVINO's max (their problems as `poolspec shape --onnx
// 'kernel_shape=2,2 storage_order=1'` and --openvino 'kernel=2,2 ... axis=1' --opset 8 state them).
Status add_fields(std::vector<Case>& out) {
  const auto add = [&](const std::string& name, const char* rules, const std::string& problem,
                       Values v) -> Status {
    Result<Case> c = fields_case(name, rules, problem, "a field of the problem model");
    if (!c) return c.error();
    c->values = v;
    out.push_back(std::move(*c));
    return Ok{};
  };
  const std::tuple<const char*, const char*, std::string, Values> fields[] = {
      {"tosa_zero_points", "tosa",
       "avg:i8:n1c4:h4w6:k3x3:s1x1:pb1x1:pe1x1:exclude:floor:round=tosa:input_zp=-128:output_zp=5",
       Values::random},
      {"tosa_zero_points_ties", "tosa",
       "avg:i8:n1c2:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:round=tosa:input_zp=7:output_zp=-3",
       Values::half_ties},
      // TOSA's acc_type on f16: FP32 (the default, sums=f32; smoke translates no f16 average for
      // TOSA) refuses a declaration of f16 sums, FP16 allows it.
      {"tosa_acc_type_fp32", "tosa",
       "avg:f16:n1c4:h6w6:k3x3:s1x1:pb0x0:pe0x0:exclude:floor:zeros=either:subnormals=may_flush:"
       "sums=f32",
       Values::random},
      {"tosa_acc_type_fp16", "tosa",
       "avg:f16:n1c4:h6w6:k3x3:s1x1:pb0x0:pe0x0:exclude:floor:zeros=either:subnormals=may_flush",
       Values::random},
      {"f64", "spec", "avg:f64:n1c3:h5w5:k3x3:s2x2:pb1x1:pe1x1:exclude:floor", Values::random},
      {"i32", "spec", "avg:i32:n1c3:h5w5:k3x3:s2x2:pb1x1:pe1x1:exclude:floor", Values::half_ties},
      {"bf16", "spec", "max:bf16:n1c3:h5w5:k3x3:s2x2:pb1x1:pe1x1:floor", Values::random},
      {"bias", "spec", "avg:f32:n1c2:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor:bias=3",
       Values::random},
      {"batch_3", "spec", "avg:f32:n3c2:h4w4:k2x2:s2x2:pb0x0:pe0x0:exclude:floor", Values::random},
      {"channels_80", "spec", "max:f32:n1c80:h3w3:k2x2:s1x1:pb0x0:pe0x0:floor", Values::random},
      {"i8_sum_past_16_bits", "spec", "avg:i8:n1c2:h17w17:k17x17:s1x1:pb0x0:pe0x0:exclude:floor",
       Values::ties},
      {"i8_stride_over_kernel", "spec", "max:i8:n1c2:h7w7:k2x2:s3x3:pb0x0:pe0x0:floor",
       Values::random},
      // -0 below +0 (StableHLO's maximum): windows of random zeros hold -0 before +0, as StableHLO
      // states a max, and under the spec's rules (with indices too); and bf16's zeros, which no
      // translated case has.
      {"stablehlo_zeros_ordered", "stablehlo",
       "max:f32:n1c3:h5w5:k2x2:s1x1:pb0x0:pe0x0:floor:empty=-inf:zeros=ordered",
       Values::signed_zero},
      {"zeros_ordered", "spec", "max:f32:n1c3:h5w5:k2x2:s1x1:pb0x0:pe0x0:floor:zeros=ordered",
       Values::signed_zero},
      {"bf16_signed_zero", "spec", "max:bf16:n1c3:h5w5:k2x2:s1x1:pb0x0:pe0x0:floor",
       Values::signed_zero},
      {"zeros_ordered_indices", "spec",
       "max:f32:n1c3:h5w5:k2x2:s1x1:pb0x0:pe0x0:floor:idx=plane:zeros=ordered",
       Values::signed_zero},
      {"onnx_index_column_major", "onnx",
       "max:f32:n1c2:h3w4:k2x2:s1x1:pb0x0:pe0x0:floor:empty=zero:nan=ignore:idx=tensor:order=col",
       Values::random},
      {"openvino_index_axis", "openvino",
       "max:f32:n2c2:h3w4:k2x2:s1x1:pb0x0:pe0x0:floor:empty=lowest:nan=ignore:idx=tensor:"
       "idxaxis=1:start=lowest",
       Values::random}};
  for (const auto& [name, rules, problem, values] : fields)
    if (Status s = add(name, rules, problem, values); !s) return s;
  for (const char* rounding : {"half_even", "half_away", "half_up", "toward_zero", "floor"})
    if (Status s = add(
            fmt::format("round_{}", rounding), "spec",
            fmt::format("avg:i8:n1c2:h4w8:k1x2:s1x1:pb0x0:pe0x0:exclude:floor:round={}", rounding),
            Values::half_ties);
        !s)
      return s;
  return Ok{};
}

// TOSA's division where it leaves exact rounding (spec/ERRATA.md T1), with inputs built to reach
// it: a window of 47 x 47 = 2,209 taps summing to -281,648 (mean -127.50023), -128 by TOSA's
// division and by exact rounding, where a multiplier of (2^30 + 1) / count at shift 30 gives -127
// (findings.md MLIR-4); and, in `ci` and `full`, the first count past exact rounding that a 2-D
// window within the 8K level reaches, 281 x 7515 = 2,111,715 taps of x - input_zp summing to
// 537,431,467 (mean 254.4999998): 255 by TOSA's division, 254 by exact rounding, so with
// output_zp -128, 127 against 126.
Status add_tosa_division(std::vector<Case>& out, bool first_inexact_count) {
  const auto add = [&](const char* name, const char* problem, std::vector<double> input) -> Status {
    Result<Case> c = fields_case(name, "tosa", problem,
                                 "spec/ERRATA.md T1 (TOSA's reciprocal_scale and apply_scale_32)");
    if (!c) return c.error();
    c->fixed_input = Tensor{DType::i8, input_shape(*c->fixed), std::move(input)};
    out.push_back(std::move(*c));
    return Ok{};
  };
  // -128 everywhere (-282,752), then 8 taps of 0 (+1,024) and one of -48 (+80).
  std::vector<double> wide(47 * 47, -128.0);
  std::fill_n(wide.begin(), 8, 0.0);
  wide[8] = -48.0;
  if (Status s = add("tosa_division_47x47",
                     "avg:i8:n1c1:h47w47:k47x47:s1x1:pb0x0:pe0x0:exclude:floor:round=tosa",
                     std::move(wide));
      !s || !first_inexact_count)
    return s;
  // After the zero point: 4,140 taps of 0 (-128), one of 97 (-31), the rest 255 (127).
  std::vector<double> input(281 * 7515, 127.0);
  std::fill_n(input.begin(), 4140, -128.0);
  input[4140] = -31.0;
  return add("tosa_division_first_inexact_count",
             "avg:i8:n1c1:h281w7515:k281x7515:s1x1:pb0x0:pe0x0:exclude:floor:round=tosa:"
             "input_zp=-128:output_zp=-128",
             std::move(input));
}

// Cases at the limits a rule set sets on its attributes: one past TOSA's 8K level (kernel and
// stride up to 8192; arm/tosa-specification, "Levels"), and a pad as long as the kernel. Every
// rule set judges them by its own rules.
void add_limits(std::vector<Case>& out) {
  const auto add = [&](const char* name, const char* note, Intent in) {
    Case c;
    c.id = fmt::format("limits/{}", name);
    c.part = "limits";
    c.intent = std::move(in);
    c.note = note;
    out.push_back(c);
  };
  const char* level = "TOSA 8K level (LEVEL_CHECK)";
  add("kernel_8193", level,
      intent(Mode::avg_exclude, DType::f32, {1, 1, 8193, 2}, {8193, 1}, {1, 1}, {0, 0}, {0, 0},
             false));
  add("stride_8193", level,
      intent(Mode::max, DType::f32, {1, 1, 2, 8194}, {1, 1}, {1, 8193}, {0, 0}, {0, 0}, false));
  // TOSA's "ERROR_IF(pad_top >= kernel_y ...)", where the windows fit exactly: a window of
  // padding only, which no other check refuses.
  add("tosa_pad_equals_kernel", "TOSA AVG_POOL2D: pads below the kernel (ERROR_IF)",
      intent(Mode::avg_exclude, DType::f32, {1, 1, 4, 4}, {2, 2}, {2, 2}, {2, 2}, {2, 2}, false));
}

}  // namespace

Result<std::vector<Case>> make_suite(const std::string& name) {
  std::vector<Case> out;
  if (name == "smoke") {
    add_shapes(out, true);
    add_enumeration(out, 800, 3000);
    add_values(out, true);
    add_regressions(out);
    add_limits(out);
    if (Status f = add_fields(out); !f) return f.error();
    if (Status t = add_tosa_division(out, false); !t) return t.error();
  } else if (name == "ci") {
    add_shapes(out, false);
    add_topologies(out, false);
    add_enumeration(out, 60, 300);
    add_values(out, false);
    add_sweeps(out);
    add_seeds(out);
    add_regressions(out);
    add_limits(out);
    if (Status f = add_fields(out); !f) return f.error();
    if (Status t = add_tosa_division(out, true); !t) return t.error();
  } else if (name == "full") {
    add_shapes(out, false);
    add_topologies(out, true);
    add_enumeration(out, 1, 4);
    add_values(out, false);
    add_sweeps(out);
    add_seeds(out);
    add_regressions(out);
    add_limits(out);
    if (Status f = add_fields(out); !f) return f.error();
    if (Status t = add_tosa_division(out, true); !t) return t.error();
  } else {
    return Error{fmt::format("suite '{}': must be smoke, ci or full", name)};
  }
  return out;
}

bool known_rules(const std::string& rules) {
  if (rules == "spec" || rules == "xs3") return true;
  return parse_framework(rules).ok();
}

std::string matrix_column(const Problem& p) {
  std::string c = p.op == Op::max ? "max" : p.divisor == Divisor::exclude ? "avg excl" : "avg incl";
  if (p.rounding != Rounding::floor) c += " ceil";
  if (p.op == Op::max && p.indices != Indices::none) c += " idx";
  if (!is_float(p.dtype)) c += " int";
  return c;
}

bool is_matrix_column(std::string_view column) {
  if (column == shape_column || column == reject_column) return true;
  // Every combination of the options matrix_column reads.
  for (const Op op : {Op::max, Op::avg})
    for (const Divisor divisor : {Divisor::exclude, Divisor::include_clip})
      for (const Rounding rounding : {Rounding::floor, Rounding::ceil})
        for (const Indices indices : {Indices::none, Indices::plane})
          for (const DType dtype : {DType::f32, DType::i8}) {
            Problem p;
            p.op = op, p.divisor = divisor, p.rounding = rounding, p.indices = indices;
            p.dtype = dtype;
            if (matrix_column(p) == column) return true;
          }
  return false;
}

std::vector<RuledProblem> problems_under(const Case& c, const std::string& rules) {
  std::vector<RuledProblem> out;
  if (c.fixed) {
    if (rules == c.fixed_rules || rules == "spec") out.push_back({c.fixed_rules, *c.fixed});
    return out;
  }
  if (rules == "xs3") {  // lib_nn: int8, no padding, floor, averages rounded half up
    const Intent& in = c.intent;
    if (in.dtype != DType::i8 || in.ceil || in.divisor_override) return out;
    Problem p;
    p.op = in.op;
    p.dtype = in.dtype;
    p.batch = in.shape[0];
    p.channels = in.shape[1];
    for (size_t i = 0; i + 2 < in.shape.size(); ++i) {
      if (in.pads_begin[i] != 0 || in.pads_end[i] != 0) return out;
      p.axes.push_back({in.shape[i + 2], in.kernel[i], in.strides[i], in.dilations[i], 0, 0});
    }
    p.int_rounding = IntRounding::half_up;
    if (validate(p)) out.push_back({"xs3", p});
    return out;
  }
  for (const Translation& t : translate(c.intent)) {
    if (!t.reason.empty()) continue;
    if (rules != "spec" && framework_name(t.framework) != rules) continue;
    Result<Frontend> f = from_framework(t.framework, t.attributes, t.input);
    if (!f || !validate(f->problem)) continue;
    // Frameworks that differ only in a field no rule of the op reads (an average's NaN policy)
    // pose one problem.
    const Problem problem = canonical_problem(f->problem);
    bool seen = false;
    for (const RuledProblem& r : out) seen = seen || r.problem == problem;
    if (!seen) out.push_back({t.label, problem});
  }
  return out;
}

namespace {

// TOSA's refusal of a translation: the front-end's error when TOSA's rules make it invalid (a
// dtype its operators do not take is one of its refusals too); none when TOSA accepts it, cannot
// spell it, or the problem model cannot state it.
std::optional<std::string> tosa_refusal(const Translation& t) {
  if (t.framework != Framework::tosa || t.attributes.empty() ||
      (!t.reason.empty() && !t.reason.starts_with("dtype ")))
    return std::nullopt;
  Result<Frontend> checked = from_framework(t.framework, t.attributes, t.input);
  if (checked || verdict_of(t.framework, checked).kind != RuleVerdict::invalid) return std::nullopt;
  return checked.error().message;
}

}  // namespace

std::vector<RejectCase> must_reject(const Case& c, const std::string& rules) {
  std::vector<RejectCase> out;
  if (c.fixed || rules != "tosa") return out;
  for (const Translation& t : translate(c.intent)) {
    const std::optional<std::string> refusal = tosa_refusal(t);
    if (!refusal) continue;
    Result<Frontend> written = tosa_as_written(t.attributes, t.input);
    if (!written || !validate(written->problem)) continue;
    out.push_back({t.label, canonical_problem(written->problem), *refusal});
  }
  return out;
}

std::optional<std::string> refusal_under(Framework rules, const Problem& p) {
  if (rules != Framework::tosa) return std::nullopt;  // must_reject's one rule set
  Framing framing;
  framing.input_shape = input_shape(p);
  framing.crop_end.assign(p.axes.size(), 0);
  for (const Translation& t : translate(intent_of(Frontend{p, framing, ""})))
    if (std::optional<std::string> refusal = tosa_refusal(t)) return refusal;
  return std::nullopt;
}

namespace {

std::vector<int64_t> spatial_extents(const ShapeInfo& s) {
  return {s.output_shape.begin() + 2, s.output_shape.end()};
}

// One axis's attributes, as an intent and a problem both have them.
struct AxisAttributes {
  int64_t& extent;
  int64_t& kernel;
  int64_t& stride;
  int64_t& dilation;
  int64_t& pad_begin;
  int64_t& pad_end;
};

// The attributes a shape rule has to check, each a change of one axis.
struct InvalidChange {
  const char* what;
  void (*apply)(AxisAttributes a);
};
constexpr InvalidChange invalid_changes[] = {
    {"a window longer than the padded input",
     [](AxisAttributes a) {
       a.dilation = 1;
       a.kernel = a.extent + a.pad_begin + std::max<int64_t>(a.pad_end, 0) + 1;
     }},
    {"pads as long as the window",
     [](AxisAttributes a) { a.pad_begin = a.pad_end = (a.kernel - 1) * a.dilation + 1; }},
    {"a zero stride", [](AxisAttributes a) { a.stride = 0; }},
    {"a zero kernel", [](AxisAttributes a) { a.kernel = 0; }},
    {"a zero dilation", [](AxisAttributes a) { a.dilation = 0; }},
};

}  // namespace

std::vector<ShapeQuestion> shape_questions(const Case& c, const std::string& rules,
                                           const std::vector<RuledProblem>& valid) {
  std::vector<ShapeQuestion> out;
  std::set<std::string> seen;
  // `what`: the change that made the question, said beside the rule that refuses it.
  const auto add = [&](const std::string& label, const Problem& p, const char* what) {
    if (!seen.insert(label + " " + format_problem(p)).second) return;
    Result<ShapeInfo> s = validated_shape(p);
    out.push_back({label, p, s ? spatial_extents(*s) : std::vector<int64_t>{},
                   s ? "" : fmt::format("{} ({})", s.error().message, what)});
  };
  for (const RuledProblem& r : valid) add(r.label, r.problem, "as the case has it");
  if (c.fixed || rules == "xs3") return out;
  // Each change on the first axis and on the last: a rule checked on one axis only shows.
  const size_t rank = c.intent.shape.size() - 2;
  for (const size_t axis : rank > 1 ? std::vector<size_t>{0, rank - 1} : std::vector<size_t>{0})
    for (const InvalidChange& change : invalid_changes) {
      Intent in = c.intent;
      change.apply({in.shape[axis + 2], in.kernel[axis], in.strides[axis], in.dilations[axis],
                    in.pads_begin[axis], in.pads_end[axis]});
      // The problem as the case's, with the change: what a rule set that accepts these
      // attributes in its framework's spelling resolves them to, or what it must refuse.
      const auto changed = [&](const std::string& label) -> std::optional<Problem> {
        for (const RuledProblem& r : valid) {
          if (r.label != label || r.problem.axes[axis].pad_end != c.intent.pads_end[axis]) continue;
          Problem p = r.problem;
          Axis& a = p.axes[axis];
          change.apply({a.extent, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end});
          return p;
        }
        return std::nullopt;
      };
      if (rules == "spec") {  // any problem of the model: the spec's own rules decide
        for (const RuledProblem& r : valid)
          if (std::optional<Problem> p = changed(r.label)) add(r.label, *p, change.what);
        continue;
      }
      for (const Translation& t : translate(in)) {
        if (!t.reason.empty() || framework_name(t.framework) != rules) continue;
        if (Result<Frontend> f = from_framework(t.framework, t.attributes, t.input)) {
          add(t.label, f->problem, change.what);
        } else if (std::optional<Problem> p = changed(t.label)) {
          if (!seen.insert(t.label + " " + format_problem(*p)).second) continue;
          out.push_back({t.label, *p, {}, fmt::format("{} ({})", f.error().message, change.what)});
        }
      }
    }
  return out;
}

Tensor make_input(const Case& c, const Problem& p) {
  if (c.fixed_input) return *c.fixed_input;
  const std::vector<int64_t> shape = input_shape(p);
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  Tensor t{p.dtype, shape, std::vector<double>(static_cast<size_t>(n))};
  std::seed_seq seed(c.id.begin(), c.id.end());
  std::mt19937_64 rng(seed);
  const bool fl = is_float(p.dtype);
  const double range = p.dtype == DType::f16 || p.dtype == DType::bf16 ? 32 : 2048;
  const auto random_value = [&]() -> double {
    if (!fl) {
      std::uniform_int_distribution<int64_t> d(int_min(p.dtype), int_max(p.dtype));
      return static_cast<double>(d(rng));
    }
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(-range * 8),
                                             static_cast<int64_t>(range * 8));
    return round_to_float(p.dtype, static_cast<double>(d(rng)) / 8);
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < t.values.size(); ++i) {
    double& v = t.values[i];
    switch (c.values) {
      case Values::random:
      case Values::nan_at:
      case Values::infinities:
      case Values::nan_sprinkled:
      case Values::nan_rows: v = random_value(); break;
      case Values::non_negative:
        v = fl ? round_to_float(p.dtype,
                                static_cast<double>(rng() % static_cast<uint64_t>(range * 8)) / 8)
               : static_cast<double>(rng() % static_cast<uint64_t>(int_max(p.dtype) + 1));
        break;
      case Values::large_magnitude: {
        // Near the largest finite value / 16, one sign in runs of 16: a 3x3 window's sum
        // reaches about half the largest value, which the data's own format still holds.
        // Integers: the extremes.
        const double big = -lowest_value(p.dtype) / 16;
        v = fl ? round_to_float(p.dtype, ((i / 16) % 2 == 0 ? big : -big) *
                                             (1 - static_cast<double>(rng() % 64) / 1024))
               : static_cast<double>((rng() & 1) ? int_max(p.dtype) : int_min(p.dtype));
        break;
      }
      case Values::neg_inf_only: v = fl ? -inf : lowest_value(p.dtype); break;
      case Values::signed_zero: v = (rng() & 1) ? 0.0 : -0.0; break;
      case Values::subnormal: {
        const FloatFormat f = float_format(fl ? p.dtype : DType::f32);
        v = std::ldexp(static_cast<double>(static_cast<int64_t>(rng() % 64) - 32),
                       f.min_exponent - f.precision + 1);
        break;
      }
      case Values::small_normal: {
        const FloatFormat f = float_format(fl ? p.dtype : DType::f32);
        const double magnitude =
            std::ldexp(static_cast<double>(64 + rng() % 192), f.min_exponent - 6);
        v = round_to_float(fl ? p.dtype : DType::f32, (rng() & 1) ? magnitude : -magnitude);
        break;
      }
      case Values::ties: v = fl ? 3.5 : static_cast<double>(int_min(p.dtype) + 5); break;
      case Values::extremes:
        v = (rng() & 1) ? (fl ? -lowest_value(p.dtype) : static_cast<double>(int_max(p.dtype)))
                        : lowest_value(p.dtype);
        if (fl && (rng() % 4) == 0)
          v = -lowest_value(p.dtype);  // runs of the largest value: sums overflow
        break;
      // Even, odd, even, ...: a window of two neighbours sums to an odd number.
      case Values::half_ties: {
        const int64_t lo = int_min(p.dtype) / 2, hi = int_max(p.dtype) / 2;
        v = static_cast<double>(2 * std::uniform_int_distribution<int64_t>(lo, hi - 1)(rng) +
                                static_cast<int64_t>(i % 2));
        break;
      }
    }
  }
  const auto at = static_cast<size_t>(std::clamp<int64_t>(c.at, 0, n - 1));
  if (c.values == Values::nan_at && fl) t.values[at] = std::numeric_limits<double>::quiet_NaN();
  if (c.values == Values::infinities && fl) {
    t.values[at] = inf;
    t.values[(at + 1) % t.values.size()] = -inf;
  }
  if (c.values == Values::nan_sprinkled && fl)
    for (size_t i = 3; i < t.values.size(); i += 7)
      t.values[i] = std::numeric_limits<double>::quiet_NaN();
  if (c.values == Values::nan_rows && fl && shape.size() >= 4) {
    // Rows 0 and 1 of every plane (of every depth slice): with a window of 3 rows, stride 2 and
    // padding 1, the first output row's windows hold nothing but NaN.
    const int64_t w = shape.back(), h = shape[shape.size() - 2];
    for (size_t i = 0; i < t.values.size(); ++i)
      if ((static_cast<int64_t>(i) / w) % h < 2)
        t.values[i] = std::numeric_limits<double>::quiet_NaN();
  }
  return t;
}

}  // namespace poolspec::certify
