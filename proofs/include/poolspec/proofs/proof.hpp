// The proofs: each states its claim, domain, assumptions and expected runtime, builds a query
// (the assumptions and the negation of the claim) and expects `unsat` -- or, for a claim that
// is false (a mutant formula, or a rule the notes say does not hold), expects `sat` and reports
// the counterexample, as a problem string where it is a pooling problem. `unknown` or a timeout
// is a failure, never a pass.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <z3++.h>

#include "poolspec/problem.hpp"
#include "poolspec/proofs/z3_domain.hpp"

namespace poolspec::proofs {

enum class Expect { proved, refuted };  // unsat, or sat with a counterexample

// One query under construction: the solver, the domain's builder, and the variables to report.
class Query {
 public:
  Query(z3::context& ctx, Arithmetic arithmetic) : builder_(ctx, arithmetic), solver_(ctx) {}
  Builder& builder() { return builder_; }
  Z3Int variable(const std::string& name);  // reported in a counterexample
  void assume(const Z3Bool& condition) { solver_.add(condition.expr()); }
  // The claim: the query asserts its negation, together with the obligations raised so far.
  // In the bounded arithmetics the claim is the obligations alone (see proof.cpp), unless
  // claim_itself is used, which bit-blasts the claim too.
  void claim(const Z3Bool& condition);
  void claim_itself(const Z3Bool& condition);
  z3::solver& solver() { return solver_; }
  const std::vector<std::pair<std::string, z3::expr>>& variables() const { return variables_; }

 private:
  Builder builder_;
  z3::solver solver_;
  std::vector<std::pair<std::string, z3::expr>> variables_;
};

using Model = std::map<std::string, int64_t>;

struct Proof {
  std::string name;    // e.g. "extent/floor/int"
  std::string claim;   // what is proved (or refuted)
  std::string domain;  // integer or 64-bit bit-vector, and the variables
  std::string assumptions;
  std::string runtime;  // expected, e.g. "< 1 s"
  Expect expect = Expect::proved;
  std::string why_false;  // for a refuted claim: what the counterexample shows
  Arithmetic arithmetic = Arithmetic::integer;
  std::function<void(Query&)> build;
  // A counterexample as a pooling problem, where it is one.
  std::function<std::optional<Problem>(const Model&)> problem_of;
};

const std::vector<Proof>& all_proofs();

struct ProofResult {
  std::string name;
  std::string expected;  // "unsat" or "sat"
  std::string got;       // "unsat", "sat", "unknown"
  bool passed = false;
  double seconds = 0;
  Model counterexample;
  std::string problem;    // the counterexample as a problem string, if any
  std::string smt2_path;  // where the query was written, if asked
};

// Runs one proof with a per-query timeout; writes `<dir>/<name>.<expected>.smt2` when
// smt2_dir is not empty.
ProofResult run_proof(const Proof& proof, unsigned timeout_ms, const std::string& smt2_dir);

// Helpers for the shape proofs: a symbolic axis with the model's bounds assumed (d, k, s, dl >= 1,
// pads >= 0, K <= L; in bit-vectors also every attribute below 2^31).
struct SymbolicAxis {
  Z3Int d, k, s, dl, pb, pe;
};
SymbolicAxis symbolic_axis(Query& q, bool dilated);
std::optional<Problem> axis_problem(const Model& m, Rounding rounding, Op op = Op::avg,
                                    Divisor divisor = Divisor::exclude);

}  // namespace poolspec::proofs
