// The judge: a problem called twice in a backend's worker (fresh buffers, poisons, guard
// pages), the two calls compared with each other and with the spec within the bound the backend
// declared, and one verdict (docs/certification.md).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

#include "backends.hpp"
#include "certify.hpp"
#include "poolspec/engine_check.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/frontends.hpp"
#include "poolspec/shape.hpp"
#include "suite.hpp"
#include "worker.hpp"

namespace poolspec::certify {

// One backend's worker, started again after it dies (a crash, a hang, a touched guard).
class Runner {
 public:
  Runner(const LoadedBackend& backend, WorkerConfig config)
      : backend_(backend), config_(std::move(config)) {
    config_.library = backend.library;
  }
  const LoadedBackend& backend() const { return backend_; }

  CallOutcome call(const poolspec_problem& problem, const CallBuffers& buffers,
                   std::chrono::milliseconds timeout) {
    if (!unstartable_.empty() || !worker_ || !worker_->alive()) {
      // A worker that could not be started again is not tried again (each try may cost the load
      // limit).
      if (unstartable_.empty()) unstartable_ = restart();
      if (!unstartable_.empty()) {
        CallOutcome out;
        out.kind = CallOutcome::Kind::crash;
        out.message = fmt::format("not run: {}", unstartable_);
        return out;
      }
    }
    return worker_->call(backend_.description.index, problem, buffers, timeout);
  }
  // The next call starts a fresh worker.
  void fresh() { worker_.reset(); }

 private:
  std::string restart() {
    worker_.reset();
    Result<std::unique_ptr<Worker>> w = Worker::start(config_);
    if (!w) return w.error().message;
    LibraryDescription d = (*w)->describe();
    if (!d.load_error.empty())
      return fmt::format("the worker could not load the library again: {}", d.load_error);
    const uint32_t i = backend_.description.index;
    if (i >= d.backends.size() || d.backends[i].name != backend_.name() ||
        d.backends[i].rules != backend_.description.rules)
      return "the library described itself differently when loaded again";
    worker_ = std::move(*w);
    return "";
  }

  const LoadedBackend& backend_;
  WorkerConfig config_;
  std::unique_ptr<Worker> worker_;
  std::string unstartable_;
};

// A problem's input and the spec's answers, shared by the backends that run it.
struct SpecValues {
  Tensor input;
  Output expected;
  std::optional<Tensor> abs_sums;  // float averages: per element, the window's absolute sum
};

// The window's absolute sums of a float average (computed once, for the bound), or null.
const Tensor* abs_sums_of(SpecValues& s, const Problem& p);

// One problem judged: two calls in one worker, against the spec.
struct Judged {
  Verdict verdict = Verdict::pass;
  std::string detail;
  EngineComparison comparison;
  Output got;
};

// The bound a rule set itself puts on a problem's results, beside the backend's declaration:
// StableHLO's float averages (reduce_window's sum in any order in the element type, then one
// division: docs/semantics.md); none for every other rule set, which leaves the bound to the
// backend.
std::optional<ErrorBound> rules_bound(std::optional<Framework> rules, const Problem& p);

// The framework a run's rules ("stablehlo") or a problem's label ("onnx@22") names, if any
// ("spec", "xs3" and the seeds' rules name none).
std::optional<Framework> label_framework(std::string_view label);

class Judge {
 public:
  // `rules`: the rule set the backend is held to, whose rules_bound a result must keep too (none:
  // the declared bound alone).
  Judge(Runner& runner, std::chrono::milliseconds timeout, std::optional<Framework> rules)
      : runner_(runner), timeout_(timeout), rules_(rules), rng_(std::random_device{}()) {}

  // Two calls of `p` in `layout` in the runner's worker, judged against the spec's answers: within
  // the bound the backend declares and, when its rules bound results, within theirs.
  Judged judge(const Problem& p, Layout layout, SpecValues& spec);
  // output_shape asked twice (fresh poisons), judged against the rule set's answer: PASS when
  // it gives the extents, or refuses what the rules refuse; UNSUPPORTED when it refuses what
  // they accept; FAIL when it answers what they refuse, or other extents.
  Judged judge_shape(const ShapeQuestion& q, Layout layout);
  // A problem its rules refuse (must_reject), called once on `input`: PASS when supports()
  // refuses it or run() returns an error; FAIL when it runs, or supports() answers out of
  // contract; a crash, a hang or a touched guard page as in judge().
  Judged judge_reject(const RejectCase& r, Layout layout, const Tensor& input);

 private:
  // A call that ended the judging: its verdict.
  static bool stopped(const CallOutcome& call, int k, Judged& j);
  // Output elements (and indices) that kept their poison: in both calls (whose poisons differ
  // in every byte), or in one call while the other wrote another value there.
  static std::string unwritten(const CallOutcome (&calls)[2], size_t width, size_t elements);
  // The first storage offset where the two calls' outputs (or indices) differ, as text.
  static std::string difference(const CallOutcome (&calls)[2], size_t width,
                                const ShapeInfo& shape);

  Runner& runner_;
  std::chrono::milliseconds timeout_;
  std::optional<Framework> rules_;
  std::mt19937_64 rng_;
};

}  // namespace poolspec::certify
