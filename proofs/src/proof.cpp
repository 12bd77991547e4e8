#include "poolspec/proofs/proof.hpp"

#include <cctype>
#include <chrono>
#include <fstream>

#include "poolspec/formulas.hpp"
#include "poolspec/problem_string.hpp"

namespace poolspec::proofs {

Z3Int Query::variable(const std::string& name) {
  Z3Int v = builder_.variable(name);
  variables_.emplace_back(name, v.expr());
  return v;
}

void Query::claim(const Z3Bool& condition) {
  // Integers: the claim, and that no division is by a non-positive number. int64 and bit-vectors:
  // that no operation of the formulas overflows 64-bit two's complement (nor divides by zero).
  // Then every C++ operation equals its integer counterpart, and the integer proof of the same
  // claim carries over to the C++. (Bit-blasting the claim itself times out on 64-bit division.)
  if (builder_.bounded())
    solver_.add(!builder_.obligations());
  else
    solver_.add(!(condition.expr() && builder_.obligations()));
}

void Query::claim_itself(const Z3Bool& condition) {
  solver_.add(!(condition.expr() && builder_.obligations()));
}

SymbolicAxis symbolic_axis(Query& q, bool dilated) {
  Builder& b = q.builder();
  SymbolicAxis a{q.variable("d"),  q.variable("k"),
                 q.variable("s"),  dilated ? q.variable("dl") : b.literal(1),
                 q.variable("pb"), q.variable("pe")};
  const Z3Int one = b.literal(1), zero = b.literal(0);
  q.assume(a.d >= one && a.k >= one && a.s >= one && a.dl >= one && a.pb >= zero && a.pe >= zero);
  if (b.bounded()) {
    const Z3Int limit = b.literal(max_attribute);
    q.assume(a.d <= limit && a.k <= limit && a.s <= limit && a.dl <= limit && a.pb <= limit &&
             a.pe <= limit);
  }
  // The model's validity rule: the dilated window fits the padded extent, K <= L.
  const formulas::AxisTerms<Z3Int> t{a.d, a.k, a.s, a.dl, a.pb, a.pe};
  q.assume(formulas::effective_kernel(a.k, a.dl) <= formulas::padded_extent(t));
  return a;
}

std::optional<Problem> axis_problem(const Model& m, Rounding rounding, Op op, Divisor divisor) {
  const auto get = [&](const char* name, int64_t fallback) {
    auto it = m.find(name);
    return it == m.end() ? fallback : it->second;
  };
  Problem p;
  p.op = op;
  p.divisor = op == Op::avg ? divisor : Divisor::exclude;
  p.empty = EmptyWindow::zero;
  p.rounding = rounding;
  p.axes = {Axis{get("d", 1), get("k", 1), get("s", 1), get("dl", 1), get("pb", 0), get("pe", 0)}};
  return p;
}

namespace {
int64_t numeral(const z3::expr& value, Arithmetic arithmetic) {
  if (arithmetic == Arithmetic::bitvector) {
    // Two's complement of the 64-bit pattern.
    const uint64_t bits = std::stoull(value.get_decimal_string(0));
    return static_cast<int64_t>(bits);
  }
  return std::stoll(value.get_decimal_string(0));
}
}  // namespace

ProofResult run_proof(const Proof& proof, unsigned timeout_ms, const std::string& smt2_dir) {
  ProofResult r;
  r.name = proof.name;
  r.expected = proof.expect == Expect::proved ? "unsat" : "sat";
  z3::context ctx;
  Query q(ctx, proof.arithmetic);
  proof.build(q);
  z3::params params(ctx);
  params.set("timeout", timeout_ms);
  q.solver().set(params);

  if (!smt2_dir.empty()) {
    // File names keep letters, digits, '-' and '_' only: the z3 command reads an argument with
    // '=' as a parameter setting.
    std::string file = proof.name;
    for (char& c : file)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    r.smt2_path = smt2_dir + "/" + file + "." + r.expected + ".smt2";
    std::ofstream out(r.smt2_path);
    out << "; poolspec proof " << proof.name << "\n; claim: " << proof.claim
        << "\n; expected: " << r.expected << "\n"
        << q.solver().to_smt2();
  }

  const auto start = std::chrono::steady_clock::now();
  const z3::check_result result = q.solver().check();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.got = result == z3::unsat ? "unsat" : result == z3::sat ? "sat" : "unknown";
  r.passed = r.got == r.expected;
  if (result == z3::sat) {
    const z3::model model = q.solver().get_model();
    for (const auto& [name, e] : q.variables())
      r.counterexample[name] = numeral(model.eval(e, true), proof.arithmetic);
    if (proof.problem_of)
      if (std::optional<Problem> p = proof.problem_of(r.counterexample))
        r.problem = format_problem(*p);
  }
  return r;
}

}  // namespace poolspec::proofs
