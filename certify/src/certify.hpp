// `poolspec certify` (DESIGN.md section 6): every backend, on a suite, under the rules it claims
// (and others asked for), each call isolated; statuses, first mismatches, a minimal
// counterexample and a reproducer bundle per failure; a matrix, JSON and JUnit XML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "poolspec/engine_check.hpp"

namespace poolspec::certify {

// WAIVED: a failure of a known, documented deviation (a waiver file's entry, with its reason).
enum class Verdict { pass, fail, unsupported, crash, hang, out_of_bounds, unwritten, waived };
std::string_view verdict_name(Verdict v);  // PASS FAIL UNSUPPORTED CRASH HANG OUT-OF-BOUNDS UNWRITTEN WAIVED
bool is_failure(Verdict v);                // all but PASS, UNSUPPORTED and WAIVED

struct JobResult {
  std::string backend, version, origin, claimed_rules, rules, label;
  std::string case_id, part, note, problem, layout, column;
  Verdict verdict = Verdict::pass;
  std::string detail;  // the reason, the message, or the comparison's text
  int64_t elements = 0, mismatches = 0;
  double worst_fraction_of_bound = 0;
  std::vector<ElementMismatch> first;
  std::string minimal_problem;  // after shrinking (failures)
  std::string repro_dir, repro_command;
  double milliseconds = 0;
};

struct CertifyOptions {
  std::string suite = "ci";
  std::vector<std::string> backends;            // names or paths; empty: every available one
  std::vector<std::string> rules{"claimed", "openvino"};
  std::vector<std::string> layouts{"nchw", "nhwc"};
  std::string shard;                            // "i/n"
  int64_t timeout_ms = 10000;
  std::string out_dir = "certify-out";
  std::vector<std::string> filters;             // only cases whose id contains one of them
  bool shrink = true;
  // Known deviations: lines "backend rules column | reason" (certify/waivers.txt); "" for none.
  std::string waivers = POOLSPEC_DEFAULT_WAIVERS;
  bool json = false;                            // the JSON report on stdout instead of the matrix
  bool list = false;                            // list the backends and suites, run nothing
  std::string problem, input;                   // one problem (and its .npy input): a replay
};

int certify_command(const CertifyOptions& options);

// Reports (certify_report.cpp).
struct RunInfo {
  std::string suite, shard, command;
  std::vector<std::string> notes;  // adapters that could not load, and the like
  double seconds = 0;
};
std::string matrix_text(const std::vector<JobResult>& results);
std::string json_report(const std::vector<JobResult>& results, const RunInfo& info);
std::string junit_report(const std::vector<JobResult>& results, const RunInfo& info);

}  // namespace poolspec::certify
