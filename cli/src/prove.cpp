// `poolspec prove`: lists and runs the proofs, each with its result and time.
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"

#include "command_support.hpp"
#include "poolspec/proofs/proof.hpp"

namespace poolspec::cli {

int prove_command(const ProveOptions& options, bool json) {
  using namespace poolspec::proofs;
  if (!options.emit_smt2.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.emit_smt2, ec);
    if (ec) return refuse(fmt::format("--emit-smt2={}: {}", options.emit_smt2, ec.message()));
    // Queries of an earlier run (perhaps of proofs since renamed) must not be rechecked.
    for (const auto& entry : std::filesystem::directory_iterator(options.emit_smt2, ec))
      if (entry.path().extension() == ".smt2") std::filesystem::remove(entry.path(), ec);
  }
  std::vector<const Proof*> selected;
  for (const Proof& p : all_proofs())
    if (options.filter.empty() || p.name.find(options.filter) != std::string::npos)
      selected.push_back(&p);
  if (selected.empty()) return refuse(fmt::format("--filter={}: no proof matches", options.filter));

  if (options.list && json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Proof* p : selected)
      list.push_back({{"name", p->name},
                      {"claim", p->claim},
                      {"domain", p->domain},
                      {"assumptions", p->assumptions},
                      {"expected", p->expect == Expect::proved ? "unsat" : "sat"},
                      {"runtime", p->runtime},
                      {"why_false", p->why_false}});
    print_json("prove-list", {{"proofs", list}});
    return exit_ok;
  }
  if (options.list) {
    for (const Proof* p : selected) {
      fmt::print(
          "{}\n  claim:       {}\n  domain:      {}\n  assumptions: {}\n  expected:    {} ({})\n",
          p->name, p->claim, p->domain, p->assumptions,
          p->expect == Expect::proved ? "unsat (proved)" : "sat (refuted, a counterexample)",
          p->runtime);
      if (!p->why_false.empty()) fmt::print("  why false:   {}\n", p->why_false);
    }
    return exit_ok;
  }

  nlohmann::json rows = nlohmann::json::array();
  int failed = 0;
  double total = 0;
  for (const Proof* p : selected) {
    const ProofResult r = run_proof(*p, options.timeout_ms, options.emit_smt2);
    total += r.seconds;
    if (!r.passed) ++failed;
    if (json) {
      nlohmann::json row = {{"name", r.name},     {"expected", r.expected}, {"got", r.got},
                            {"passed", r.passed}, {"seconds", r.seconds},   {"claim", p->claim}};
      if (!r.counterexample.empty()) row["counterexample"] = r.counterexample;
      if (!r.problem.empty()) row["problem"] = r.problem;
      if (!r.smt2_path.empty()) row["smt2"] = r.smt2_path;
      rows.push_back(row);
      continue;
    }
    const std::string verdict =
        r.passed ? (p->expect == Expect::proved ? "proved " : "refuted") : "FAILED ";
    fmt::print("[{}] {:<48} {:>7.3f} s  {}\n", verdict, r.name, r.seconds,
               r.passed ? "" : fmt::format("expected {}, got {}", r.expected, r.got));
    if (!r.counterexample.empty()) {
      std::string values;
      for (const auto& [name, value] : r.counterexample)
        values += fmt::format(" {}={}", name, value);
      fmt::print("          counterexample:{}\n", values);
      if (!r.problem.empty()) fmt::print("          as a problem: {}\n", r.problem);
      if (!p->why_false.empty()) fmt::print("          {}\n", p->why_false);
    }
  }
  if (json) {
    print_json("prove", {{"proofs", rows}, {"failed", failed}, {"seconds", total}});
  } else {
    fmt::print("\n{} proofs: {} as expected, {} failed, {:.1f} s in all\n", selected.size(),
               selected.size() - static_cast<size_t>(failed), failed, total);
  }
  return failed ? exit_check_failed : exit_ok;
}

}  // namespace poolspec::cli
