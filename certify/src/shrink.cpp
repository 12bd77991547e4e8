#include "shrink.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace poolspec::certify {

std::vector<Problem> smaller(const Problem& p) {
  std::vector<Problem> out;
  const auto add = [&](Problem q) {
    if (q != p && validate(q)) out.push_back(std::move(q));
  };
  Problem q = p;
  q.batch = 1;
  add(q);
  q = p;
  q.channels = 1;
  add(q);
  q = p;
  q.channels = std::max<int64_t>(1, p.channels / 2);
  add(q);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    if (p.axes.size() > 1) {
      q = p;
      q.axes.erase(q.axes.begin() + static_cast<std::ptrdiff_t>(i));
      if (q.index_axis <= static_cast<int64_t>(q.axes.size()) + 1) add(q);
    }
    for (int64_t Axis::*field : {&Axis::extent, &Axis::kernel, &Axis::stride, &Axis::dilation,
                                 &Axis::pad_begin, &Axis::pad_end}) {
      const int64_t least = field == &Axis::pad_begin || field == &Axis::pad_end ? 0 : 1;
      q = p;
      int64_t& v = q.axes[i].*field;
      if (v <= least) continue;
      const int64_t original = v;
      v = std::max(least, original / 2);
      add(q);
      q.axes[i].*field = original - 1;
      add(q);
    }
  }
  return out;
}

std::vector<Intent> smaller(const Intent& in) {
  std::vector<Intent> out;
  const auto add = [&](Intent q) {
    if (q.shape != in.shape || q.kernel != in.kernel || q.strides != in.strides ||
        q.dilations != in.dilations || q.pads_begin != in.pads_begin || q.pads_end != in.pads_end ||
        q.ceil != in.ceil)
      out.push_back(std::move(q));
  };
  Intent q = in;
  q.shape[0] = 1;
  add(q);
  q = in;
  q.shape[1] = 1;
  add(q);
  q = in;
  q.shape[1] = std::max<int64_t>(1, in.shape[1] / 2);
  add(q);
  if (in.ceil) {
    q = in;
    q.ceil = false;
    add(q);
  }
  const size_t rank = in.shape.size() - 2;
  for (size_t i = 0; i < rank; ++i) {
    if (rank > 1) {
      q = in;
      const auto drop = [i](std::vector<int64_t>& v, size_t offset) {
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(i + offset));
      };
      drop(q.shape, 2);
      drop(q.kernel, 0);
      drop(q.strides, 0);
      drop(q.dilations, 0);
      drop(q.pads_begin, 0);
      drop(q.pads_end, 0);
      add(q);
    }
    // Each of the axis's attributes halved and stepped toward its least value (pads toward 0 from
    // either side: an intent's end pad may be negative, a crop).
    struct Field {
      std::vector<int64_t> Intent::*list;
      size_t offset;
      int64_t least;
    };
    for (const Field f : {Field{&Intent::shape, 2, 1}, Field{&Intent::kernel, 0, 1},
                          Field{&Intent::strides, 0, 1}, Field{&Intent::dilations, 0, 1},
                          Field{&Intent::pads_begin, 0, 0}, Field{&Intent::pads_end, 0, 0}}) {
      const int64_t v = (in.*f.list)[i + f.offset];
      if (v == f.least) continue;
      for (const int64_t next :
           {v > f.least ? std::max(f.least, v / 2) : v / 2, v > f.least ? v - 1 : v + 1}) {
        q = in;
        (q.*f.list)[i + f.offset] = next;
        add(q);
      }
    }
    // Both pads a step toward 0 together: the only step that keeps them symmetric (PyTorch's
    // pads, TensorFlow's SAME).
    const auto toward_zero = [](int64_t v) { return v > 0 ? v - 1 : v < 0 ? v + 1 : v; };
    if (in.pads_begin[i] != 0 || in.pads_end[i] != 0) {
      q = in;
      q.pads_begin[i] = toward_zero(in.pads_begin[i]);
      q.pads_end[i] = toward_zero(in.pads_end[i]);
      add(q);
    }
  }
  return out;
}

namespace {

// The problem of `label` under `rules` that intent `in` of case `c` is, if the rules express it;
// else one of another version of the same framework ("onnx@19" for "onnx@22": a smaller intent
// may leave the rules on which two versions differ, and then only one of them is listed).
std::optional<Problem> ruled(const Case& c, const Intent& in, const std::string& rules,
                             const std::string& label) {
  Case shrunk = c;
  shrunk.intent = in;
  std::vector<RuledProblem> problems = problems_under(shrunk, rules);
  for (RuledProblem& r : problems)
    if (r.label == label) return std::move(r.problem);
  const std::string framework = label.substr(0, label.find('@'));
  for (RuledProblem& r : problems)
    if (r.label.substr(0, r.label.find('@')) == framework) return std::move(r.problem);
  return std::nullopt;
}

}  // namespace

Failure minimal_failure(Judge& judge, const Case& c, const std::string& rules,
                        const std::string& label, Layout layout, const Failure& original,
                        int max_tries, std::string* within) {
  const bool by_intent = !c.fixed;
  if (!by_intent && rules != "spec") {
    *within = fmt::format("not shrunk: a seed example's own problem, under {}'s rules", rules);
    return original;
  }
  *within = by_intent ? fmt::format("the rules of {} (the run's rules: {})", label, rules)
                      : "the spec's rules";
  Failure least = original;
  Intent least_intent = c.intent;
  int tries = 0;
  bool progressed = true;
  while (progressed && tries < max_tries) {
    progressed = false;
    std::vector<std::pair<Problem, Intent>> candidates;
    if (by_intent) {
      for (const Intent& in : smaller(least_intent))
        if (std::optional<Problem> q = ruled(c, in, rules, label); q && *q != least.problem)
          candidates.emplace_back(std::move(*q), in);
    } else {
      for (Problem& q : smaller(least.problem)) candidates.emplace_back(std::move(q), Intent{});
    }
    for (auto& [q, in] : candidates) {
      if (++tries > max_tries) break;
      Case qc = c;
      qc.fixed_input.reset();
      SpecValues qv;
      qv.input = make_input(qc, q);
      Result<Output> q_expected = evaluate(q, qv.input);
      if (!q_expected) continue;
      qv.expected = std::move(*q_expected);
      Judged qj = judge.judge(q, layout, qv);
      if (qj.verdict == original.judged.verdict) {
        least = Failure{q, std::move(qv), std::move(qj)};
        least_intent = in;
        progressed = true;
        break;
      }
    }
  }
  return least;
}

}  // namespace poolspec::certify
