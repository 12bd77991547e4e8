#include "poolspec/translate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/formulas.hpp"

namespace poolspec {

Intent intent_of(const Frontend& f) {
  const Problem& p = f.problem;
  Intent in;
  in.op = p.op;
  in.dtype = p.dtype;
  in.shape = {p.batch, p.channels};
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const Axis& a = p.axes[i];
    const int64_t crop = i < f.framing.crop_end.size() ? f.framing.crop_end[i] : 0;
    const int64_t crop_begin = i < f.framing.crop_begin.size() ? f.framing.crop_begin[i] : 0;
    const int64_t base = i < f.framing.base_dilation.size() ? f.framing.base_dilation[i] : 1;
    in.shape.push_back((a.extent + crop_begin + crop - 1) / base + 1);  // the holes taken out
    if (has_holes(f.framing)) in.base_dilations.push_back(base);
    in.kernel.push_back(a.kernel);
    in.strides.push_back(a.stride);
    in.dilations.push_back(a.dilation);
    in.pads_begin.push_back(a.pad_begin - crop_begin);
    in.pads_end.push_back(a.pad_end - crop);
  }
  in.ceil = p.rounding != Rounding::floor;
  in.include_pad =
      p.op == Op::avg && (p.divisor == Divisor::include_clip || p.divisor == Divisor::include_full);
  in.divisor_override = p.divisor == Divisor::override_value ? p.divisor_override : 0;
  return in;
}

namespace {

std::string list(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}

size_t rank_of(const Intent& in) { return in.shape.size() - 2; }

// The output extents of the intent with the plain floor and ceil rules (no DROP).
std::vector<int64_t> extents(const Intent& in, Rounding r) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < rank_of(in); ++i) {
    const Axis a{in.shape[i + 2], in.kernel[i],     in.strides[i],
                 in.dilations[i], in.pads_begin[i], std::max<int64_t>(0, in.pads_end[i])};
    // A stride below 1 has no extent (the front-ends refuse it): no division by it here.
    out.push_back(a.stride < 1 ? 0 : formulas::output_extent(formulas::terms_of<int64_t>(a), r));
  }
  return out;
}

bool negative_pad(const std::vector<int64_t>& pads) {
  for (int64_t p : pads)
    if (p < 0) return true;
  return false;
}

Translation make(Framework f, std::string label, const Intent& in, int version = 0) {
  Translation t{f, std::move(label), "", FrontendInput{in.op, in.dtype, in.shape, version}, ""};
  return t;
}

// The common refusals: things only some frameworks have.
std::string cannot(const Intent& in, bool has_dilation, bool has_ceil, bool has_override) {
  if (!has_dilation && !all_equal(in.dilations, 1)) return "no dilation";
  if (!has_ceil && in.ceil) return "no ceil rounding";
  if (!has_override && in.divisor_override != 0) return "no divisor override";
  if (negative_pad(in.pads_begin)) return "no negative padding";
  if (negative_pad(in.pads_end)) return "no negative end padding";
  return "";
}

Translation ngraph(const Intent& in) {
  Translation t = make(Framework::ngraph, "ngraph", in);
  t.reason = cannot(in, false, true, false);
  t.attributes = fmt::format(
      "window_shape={} window_movement_strides={} padding_below={} padding_above={}{}{}",
      list(in.kernel), list(in.strides), list(in.pads_begin), list(in.pads_end),
      in.ceil ? " ceil_mode=true" : "",
      in.op == Op::avg ? (in.include_pad ? " include_padding_in_avg_computation=true"
                                         : " include_padding_in_avg_computation=false")
                       : "");
  return t;
}

Translation openvino(const Intent& in, bool ceil_torch) {
  const bool dilated = !all_equal(in.dilations, 1);
  int opset = ceil_torch ? 14 : 1;
  if (dilated) opset = in.op == Op::avg ? 16 : (ceil_torch ? 14 : 8);
  Translation t = make(Framework::openvino, fmt::format("openvino@{}", opset), in, opset);
  t.reason = cannot(in, true, true, false);
  if (rank_of(in) > 3) t.reason = "1 to 3 spatial axes only";
  std::string a =
      fmt::format(R"(kernel="{}" strides="{}" pads_begin="{}" pads_end="{}")", list(in.kernel),
                  list(in.strides), list(in.pads_begin), list(in.pads_end));
  if (dilated) a += fmt::format(R"( dilations="{}")", list(in.dilations));
  if (in.ceil) a += ceil_torch ? R"( rounding_type="ceil_torch")" : R"( rounding_type="ceil")";
  if (in.op == Op::avg) a += in.include_pad ? R"( exclude-pad="false")" : R"( exclude-pad="true")";
  t.attributes = a;
  return t;
}

Translation onnx(const Intent& in, int opset) {
  Translation t = make(Framework::onnx, fmt::format("onnx@{}", opset), in, opset);
  t.reason = cannot(in, true, true, false);
  std::vector<int64_t> pads = in.pads_begin;
  pads.insert(pads.end(), in.pads_end.begin(), in.pads_end.end());
  std::string a = fmt::format("kernel_shape={} strides={} pads={}", list(in.kernel),
                              list(in.strides), list(pads));
  if (!all_equal(in.dilations, 1)) a += " dilations=" + list(in.dilations);
  if (in.ceil) a += " ceil_mode=1";
  if (in.op == Op::avg && in.include_pad) a += " count_include_pad=1";
  t.attributes = a;
  return t;
}

Translation pytorch(const Intent& in) {
  Translation t = make(Framework::pytorch, "pytorch", in);
  t.reason = cannot(in, in.op == Op::max, true, in.op == Op::avg && rank_of(in) >= 2);
  if (t.reason.empty() && in.pads_begin != in.pads_end) t.reason = "padding is symmetric only";
  if (t.reason.empty() && rank_of(in) > 3) t.reason = "1 to 3 spatial axes only";
  std::string a = fmt::format("kernel_size={} stride={} padding={}", list(in.kernel),
                              list(in.strides), list(in.pads_begin));
  if (in.op == Op::max && !all_equal(in.dilations, 1)) a += " dilation=" + list(in.dilations);
  if (in.ceil) a += " ceil_mode=True";
  if (in.op == Op::avg) {
    a += in.include_pad || in.divisor_override ? " count_include_pad=True"
                                               : " count_include_pad=False";
    if (in.divisor_override) a += fmt::format(" divisor_override={}", in.divisor_override);
  }
  if (in.op == Op::max) a += " return_indices=True";
  t.attributes = a;
  return t;
}

// TensorFlow and TFLite pad only as SAME or VALID: the intent's pads must be one of the two,
// there is no ceil (unless it changes nothing), and an average never counts padding.
std::string tf_padding(const Intent& in, std::string& reason) {
  const size_t rank = rank_of(in);
  bool valid = true, same = true;
  for (size_t i = 0; i < rank; ++i) {
    valid = valid && in.pads_begin[i] == 0 && in.pads_end[i] == 0;
    if (in.strides[i] < 1) {  // no SAME pads to compare with (and no division by the stride)
      same = false;
      continue;
    }
    const auto pads = formulas::same_pads<int64_t>(in.shape[i + 2], in.kernel[i], in.strides[i],
                                                   in.dilations[i], true);
    same = same && in.pads_begin[i] == pads.begin && in.pads_end[i] == pads.end;
  }
  if (in.ceil && extents(in, Rounding::ceil) != extents(in, Rounding::floor))
    reason = "no ceil rounding";
  else if (!valid && !same)
    reason = "padding is SAME or VALID only";
  else if (in.op == Op::avg && in.include_pad && !valid)
    reason = "the average never counts padding";
  else if (in.divisor_override)
    reason = "no divisor override";
  return valid ? "VALID" : "SAME";
}

// (N, C, d...) -> (N, d..., C).
std::vector<int64_t> channels_last(const std::vector<int64_t>& s) {
  std::vector<int64_t> out{s[0]};
  out.insert(out.end(), s.begin() + 2, s.end());
  out.push_back(s[1]);
  return out;
}

Translation tensorflow(const Intent& in) {
  Translation t = make(Framework::tensorflow, "tensorflow", in);
  t.input.input_shape = channels_last(in.shape);
  const std::string padding = tf_padding(in, t.reason);
  if (t.reason.empty() && rank_of(in) > 3) t.reason = "1 to 3 spatial axes only";
  bool strided = !all_equal(in.strides, 1), dilated = !all_equal(in.dilations, 1);
  if (t.reason.empty() && strided && dilated) t.reason = "dilations need strides of 1";
  t.attributes =
      fmt::format("ksize={} strides={} padding={}", list(in.kernel), list(in.strides), padding);
  if (dilated) t.attributes += " dilations=" + list(in.dilations);
  return t;
}

Translation tflite(const Intent& in) {
  Translation t = make(Framework::tflite, "tflite", in);
  t.input.input_shape = channels_last(in.shape);
  const std::string padding = tf_padding(in, t.reason);
  if (t.reason.empty() && rank_of(in) != 2) t.reason = "2 spatial axes only";
  if (t.reason.empty() && !all_equal(in.dilations, 1)) t.reason = "no dilation";
  if (rank_of(in) == 2)
    t.attributes =
        fmt::format("padding={} stride_w={} stride_h={} filter_width={} filter_height={}", padding,
                    in.strides[1], in.strides[0], in.kernel[1], in.kernel[0]);
  return t;
}

// oneDNN has no ceil: the caller enlarges padding_r until the floor rule gives the ceil count
// (the intent's DROP-free ceil, as OpenVINO and ONNX before opset 22 compute it).
Translation onednn(const Intent& in) {
  Translation t = make(Framework::onednn, "onednn", in);
  t.reason = cannot(in, true, true, false);
  if (t.reason == "no negative end padding") t.reason.clear();  // padding_r < 0, not padding_l
  if (t.reason.empty() && rank_of(in) > 3) t.reason = "1 to 3 spatial axes only";
  std::vector<int64_t> padding_r = in.pads_end, dilation;
  const std::vector<int64_t> target = extents(in, in.ceil ? Rounding::ceil : Rounding::floor);
  for (size_t i = 0; i < rank_of(in); ++i) {
    dilation.push_back(in.dilations[i] - 1);
    const int64_t k_range = formulas::effective_kernel<int64_t>(in.kernel[i], in.dilations[i]);
    if (in.ceil)
      padding_r[i] = (target[i] - 1) * in.strides[i] + k_range - in.shape[i + 2] - in.pads_begin[i];
  }
  const char* alg = in.op == Op::max ? "pooling_max"
                    : in.include_pad ? "pooling_avg_include_padding"
                                     : "pooling_avg_exclude_padding";
  t.attributes =
      fmt::format("alg={} kernel={} strides={} padding_l={} padding_r={}", alg, list(in.kernel),
                  list(in.strides), list(in.pads_begin), list(padding_r));
  if (!all_equal(dilation, 0)) t.attributes += " dilation=" + list(dilation);
  return t;
}

// OpenCV's Pooling layer: 2-D, explicit pads per side, no dilation; include -> its padded area.
Translation opencv(const Intent& in) {
  Translation t = make(Framework::opencv, "opencv", in);
  t.reason = cannot(in, false, true, false);
  if (t.reason.empty() && rank_of(in) != 2) t.reason = "2 spatial axes only";
  if (rank_of(in) != 2) return t;
  t.attributes = fmt::format(
      "pool={} kernel_h={} kernel_w={} stride_h={} stride_w={} pad_t={} pad_b={} pad_l={} "
      "pad_r={} ceil_mode={}",
      in.op == Op::max ? "max" : "ave", in.kernel[0], in.kernel[1], in.strides[0], in.strides[1],
      in.pads_begin[0], in.pads_end[0], in.pads_begin[1], in.pads_end[1], in.ceil);
  if (in.op == Op::avg) t.attributes += fmt::format(" ave_pool_padded_area={}", in.include_pad);
  return t;
}

// Arm NN's Pooling2dDescriptor: 2-D, explicit pads per side, no dilation, NCHW here.
Translation armnn(const Intent& in) {
  Translation t = make(Framework::armnn, "armnn", in);
  t.reason = cannot(in, false, true, false);
  if (t.reason.empty() && rank_of(in) != 2) t.reason = "2 spatial axes only";
  if (rank_of(in) != 2) return t;
  t.attributes = fmt::format(
      "pool_type={} pool_height={} pool_width={} stride_y={} stride_x={} pad_top={} "
      "pad_bottom={} pad_left={} pad_right={} output_shape_rounding={} data_layout=NCHW",
      in.op == Op::max ? "Max" : "Average", in.kernel[0], in.kernel[1], in.strides[0],
      in.strides[1], in.pads_begin[0], in.pads_end[0], in.pads_begin[1], in.pads_end[1],
      in.ceil ? "Ceiling" : "Floor");
  if (in.op == Op::avg)
    t.attributes += in.include_pad ? " padding_method=IgnoreValue" : " padding_method=Exclude";
  return t;
}

// TOSA's AVG_POOL2D / MAX_POOL2D: 2-D, NHWC, explicit pads per side, no dilation, padding never
// counted. Its exact-fit rule is its front-end's to judge (a window that does not fit is an
// ERROR_IF there).
Translation tosa(const Intent& in) {
  Translation t = make(Framework::tosa, "tosa", in);
  t.input.input_shape = channels_last(in.shape);
  t.reason = cannot(in, false, true, false);
  if (t.reason.empty() && rank_of(in) != 2) t.reason = "2 spatial axes only";
  // With no padding there is none to count (and the exact fit leaves no ceil overhang).
  bool padded = false;
  for (size_t i = 0; i < rank_of(in); ++i) padded = padded || in.pads_begin[i] || in.pads_end[i];
  if (t.reason.empty() && in.include_pad && padded) t.reason = "padding is never counted";
  if (rank_of(in) != 2) return t;
  t.attributes =
      fmt::format("kernel={} stride={} pad={},{},{},{}", list(in.kernel), list(in.strides),
                  in.pads_begin[0], in.pads_end[0], in.pads_begin[1], in.pads_end[1]);
  return t;
}

// StableHLO's reduce_window, NCHW: one entry per input dimension, the batch and channels
// untouched; padding of either sign; an average divided by the window size (padding counted) or
// by a count of the input elements.
Translation stablehlo(const Intent& in) {
  Translation t = make(Framework::stablehlo, "stablehlo", in);
  t.reason = cannot(in, true, false, false);
  if (t.reason.starts_with("no negative")) t.reason.clear();
  const auto whole = [](const std::vector<int64_t>& v, int64_t untouched) {
    std::vector<int64_t> out{untouched, untouched};
    out.insert(out.end(), v.begin(), v.end());
    return list(out);
  };
  std::vector<int64_t> padding{0, 0, 0, 0};
  for (size_t i = 0; i < rank_of(in); ++i) {
    padding.push_back(in.pads_begin[i]);
    padding.push_back(in.pads_end[i]);
  }
  t.attributes = fmt::format("window_dimensions={} window_strides={} padding={}",
                             whole(in.kernel, 1), whole(in.strides, 1), list(padding));
  if (!all_equal(in.dilations, 1)) t.attributes += " window_dilations=" + whole(in.dilations, 1);
  if (!all_equal(in.base_dilations, 1))
    t.attributes += " base_dilations=" + whole(in.base_dilations, 1);
  if (in.op == Op::avg) t.attributes += in.include_pad ? " divisor=window" : " divisor=count";
  return t;
}

}  // namespace

std::vector<Translation> translate(const Intent& in) {
  std::vector<Translation> out;
  out.push_back(ngraph(in));
  out.push_back(openvino(in, false));
  if (in.ceil) out.push_back(openvino(in, true));
  out.push_back(onnx(in, 22));
  if (in.ceil) out.push_back(onnx(in, 19));
  out.push_back(pytorch(in));
  out.push_back(tensorflow(in));
  out.push_back(tflite(in));
  out.push_back(onednn(in));
  out.push_back(opencv(in));
  out.push_back(armnn(in));
  out.push_back(tosa(in));
  out.push_back(stablehlo(in));
  // Which dtypes a framework's op takes is its front-end's to say (one table, there): a
  // translation whose dtype the front-end refuses carries that refusal as its reason, as does one
  // whose attributes the framework takes and the problem model cannot state.
  for (Translation& t : out) {
    // Holes between the input's elements are StableHLO's alone: the first reason.
    if (t.framework != Framework::stablehlo && !all_equal(in.base_dilations, 1))
      t.reason = "no base dilation (holes between input elements)";
    if (!t.reason.empty()) continue;
    Result<Frontend> accepted = from_framework(t.framework, t.attributes, t.input);
    if (!accepted && (accepted.error().message.starts_with("dtype ") ||
                      accepted.error().message.ends_with(model_cannot_state)))
      t.reason = accepted.error().message;
  }
  return out;
}

}  // namespace poolspec
