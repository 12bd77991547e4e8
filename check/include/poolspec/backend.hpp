// The C++ side of the backend ABI (backend.h): the Problem <-> poolspec_problem conversion, an
// Engine seen through the ABI (how the in-tree engines become backends), and an ABI backend seen
// as an Engine (how tests drive a loaded backend through run_engine's guards).
#pragma once

#include <memory>
#include <string>

#include "poolspec/backend.h"
#include "poolspec/engine.hpp"

namespace poolspec {

// A poolspec_problem whose `text` points into `text` (kept alive with it).
struct CProblem {
  poolspec_problem problem{};
  std::string text;
  CProblem() = default;
  CProblem(const CProblem& other) : problem(other.problem), text(other.text) {
    problem.text = text.c_str();
  }
  CProblem& operator=(const CProblem& other) {
    problem = other.problem;
    text = other.text;
    problem.text = text.c_str();
    return *this;
  }
};

// Fails when the problem is not valid (validate()) or has more than POOLSPEC_MAX_SPATIAL axes.
Result<CProblem> to_c_problem(const Problem& p, Layout layout);
// output_shape's question: the problem's attributes as they are, valid or not, every output
// extent -1. Fails only beyond POOLSPEC_MAX_SPATIAL axes.
Result<CProblem> to_c_shape_question(const Problem& p, Layout layout);
// The versions whose struct poolspec reads: 1 (without output_shape) to
// POOLSPEC_BACKEND_ABI_VERSION.
inline bool abi_version_known(uint32_t v) {
  return v >= POOLSPEC_BACKEND_ABI_VERSION_1 && v <= POOLSPEC_BACKEND_ABI_VERSION;
}
// "1, 2, 3, 4 and 5", for the message that refuses any other version.
std::string abi_versions_spoken();
// Why a backend of this ABI version may not be asked about this problem (backend.h, versions 3
// and 4): empty when it may.
std::string abi_version_refuses(const poolspec_problem& c, uint32_t abi_version);
// The backend's output_shape, or NULL: never read from a version-1 struct, which ends before it.
inline auto output_shape_of(const poolspec_backend& b) {
  return b.abi_version >= 2 ? b.output_shape : nullptr;
}
// Every field checked: a backend's copy is read back only in tests, a fuzzer's bytes always.
Result<Problem> from_c_problem(const poolspec_problem& c);
Layout layout_of(const poolspec_problem& c);

// Checks a declared accumulation (backend.h's ranges): empty when valid, else the field, its
// value and the rule. A declaration is validated before any bound is derived from it.
std::string accumulation_problem(const poolspec_accumulation& a);
// The same, and whether it can bound this problem: a float average's sums at least as wide as
// its data (no F32 for f64, F16 only for f16) and as the problem's `sums` (no F16 under f32).
std::string accumulation_problem(const poolspec_accumulation& a, const Problem& p);

// The runner's tolerance for a backend's declared accumulation on one problem (backend.h), whose
// declaration accumulation_problem(a, p) accepts.
ErrorBound bound_of(const poolspec_accumulation& a, const Problem& p, const std::string& backend);
poolspec_accumulation accumulation_of(const ErrorBound& bound, const Problem& p);

// An in-tree Engine as an ABI backend. The engine must outlive the struct.
struct EngineBackend {
  poolspec_backend abi{};
  std::string name, version, rules;
  const Engine* engine = nullptr;
};
std::unique_ptr<EngineBackend> make_engine_backend(const Engine& engine, std::string version,
                                                   std::string rules);

// An ABI backend as an Engine: supports / run through the C functions, the bound from its
// declared accumulation. The struct must outlive the engine.
class AbiEngine final : public Engine {
 public:
  explicit AbiEngine(const poolspec_backend& backend) : backend_(backend) {}
  std::string_view name() const override { return backend_.name; }
  Status supports(const Problem& p, Layout layout) const override;
  ErrorBound error_bound(const Problem& p, Layout layout) const override;
  Status run(const Problem& p, Layout layout, const RunArgs& args) const override;

 private:
  const poolspec_backend& backend_;
};

// The backend's struct checked: ABI version, name, rules and the functions present.
Status check_backend(const poolspec_backend* b);

}  // namespace poolspec
