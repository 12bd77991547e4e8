#include "shrink.hpp"

#include <algorithm>

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

Failure minimal_failure(Judge& judge, const Case& c, Layout layout, const Failure& original,
                        int max_tries) {
  Failure least = original;
  int tries = 0;
  bool progressed = true;
  while (progressed && tries < max_tries) {
    progressed = false;
    for (const Problem& q : smaller(least.problem)) {
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
        progressed = true;
        break;
      }
    }
  }
  return least;
}

}  // namespace poolspec::certify
