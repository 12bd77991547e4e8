// `poolspec certify` (docs/design.md §6): every backend, on a suite, under the rules it claims
// (and others asked for), in a worker process of its own (worker.hpp), every problem called
// twice; statuses, first mismatches, a minimal counterexample and a reproducer bundle per
// failure; a matrix, JSON and JUnit XML; shards run apart and merged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends.hpp"
#include "poolspec/engine_check.hpp"

namespace poolspec::certify {

// UNSTABLE: two calls of one problem in one worker did not give the same result (a cache, a
// JIT, state, or nondeterminism). WAIVED: a failure of a known, documented deviation (a waiver
// file's entry, with its reason). LOAD-ERROR: the library, or the backend it declares, was
// refused before any call.
enum class Verdict {
  pass,
  fail,
  unsupported,
  crash,
  hang,
  out_of_bounds,
  unwritten,
  unstable,
  waived,
  load_error
};
inline constexpr Verdict all_verdicts[] = {
    Verdict::pass,   Verdict::fail,          Verdict::unsupported, Verdict::crash,
    Verdict::hang,   Verdict::out_of_bounds, Verdict::unwritten,   Verdict::unstable,
    Verdict::waived, Verdict::load_error};
// PASS FAIL UNSUPPORTED CRASH HANG OUT-OF-BOUNDS UNWRITTEN UNSTABLE WAIVED LOAD-ERROR
std::string_view verdict_name(Verdict v);
std::optional<Verdict> verdict_named(std::string_view name);
bool is_failure(Verdict v);  // all but PASS, UNSUPPORTED and WAIVED

struct JobResult {
  std::string backend, version, origin, claimed_rules, rules, label;
  std::string case_id, part, note, problem, layout, column;
  // The rule set's verdict on the problem (frontends.hpp RuleVerdict): "defined", "unpredictable"
  // (its values are not compared) or "invalid" (the backend must refuse it).
  std::string rule_verdict = "defined";
  Verdict verdict = Verdict::pass;
  std::string detail;  // the reason, the message, or the comparison's text
  int64_t elements = 0, mismatches = 0;
  double worst_fraction_of_bound = 0;
  std::vector<ElementMismatch> first;
  std::string minimal_problem;  // after shrinking (failures)
  std::string minimal_within;   // the rules every shrinking step stayed in, or why none was taken
  std::string repro_dir, repro_command;
  std::string reproduces;  // how the bundle replays in a fresh worker (failures with a bundle)
  double milliseconds = 0;
};

struct CertifyOptions {
  std::string suite = "ci";
  std::vector<std::string> backends;  // names or paths; empty: every available one
  std::vector<std::string> rules{"claimed", "openvino"};
  bool rules_given = false;  // --rules on the command line (a replay reads it: one at most)
  std::vector<std::string> layouts{"nchw", "nhwc"};
  std::string shard;                // "i/n"
  int64_t timeout_ms = 10000;       // per call, wall clock
  int64_t load_timeout_ms = 30000;  // loading a library (constructors, the entry)
  int64_t memory_limit_mb = 16384;  // address space a worker may add
  int64_t cpu_limit_s = 60;         // CPU time per call
  int jobs = 1;                     // cases run at once, each with its own workers
  int64_t progress_seconds = 10;    // not on a terminal: a progress line this often (0: every run)
  bool pid_namespace = true;        // workers in PID namespaces of their own, where allowed
  std::string out_dir = "certify-out";
  std::vector<std::string> filters;  // only cases whose id contains one of them
  bool shrink = true;
  // Go on with the run that `out_dir` holds, stopped by a signal or killed: its finished runs are
  // kept, the others made; the options must be the ones it ran with.
  bool resume = false;
  // Known deviations: lines "backend rules column [when STATUS LAYOUT PATTERN] | reason"
  // (certify/waivers.txt, waivers.hpp); "" for none.
  std::string waivers = default_waivers();
  bool json = false;                 // the JSON report on stdout instead of the matrix
  bool list = false;                 // list the backends and suites, run nothing
  std::string problem, input;        // one problem (and its .npy input): a replay
  std::string warmup, warmup_input;  // a problem (and input) called first in the replay
  std::string warmup_layout;         // its layout (default: the replayed problem's)
  std::string worker;                // poolspec-worker; default: beside this program
  std::string poolspec;              // the command in reproducers; default: this program
};

int certify_command(const CertifyOptions& options);

// `poolspec certify merge DIR...`: the shards' reports joined into one matrix, JSON and JUnit
// in `out_dir`, after checking that they ran one suite with one set of options and cover it
// exactly once.
int merge_command(const std::vector<std::string>& shard_dirs, const std::string& out_dir,
                  bool json);
// Reports (reports.cpp).
// A backend of the run, as report.json lists it: every one loaded, whether asked anything or not.
struct BackendEntry {
  std::string name, version, origin, rules;
  bool operator==(const BackendEntry&) const = default;
};

struct RunInfo {
  std::string suite, shard, command;
  std::vector<BackendEntry> backends;  // every backend loaded (a load error is a run instead)
  std::vector<std::string> notes;      // adapters that could not load, and the like
  double seconds = 0;
  // What a merge checks: the options that decide which runs a shard makes, and its cases.
  std::string fingerprint;
  std::vector<std::string> filters, cases;
  std::vector<std::pair<std::string, std::string>> logs;  // backend library -> its log file
  int stopped_by = 0;  // the signal that stopped the run before its end (0: it ran to its end)
};
// The reports written as a set: each beside its place first, then all renamed (a failure
// leaves the earlier set as it was).
Status write_reports(const std::string& dir,
                     const std::vector<std::pair<std::string, std::string>>& files);
Result<std::vector<JobResult>> results_from_json(const std::string& json_text, RunInfo* info);
std::string matrix_text(const std::vector<JobResult>& results);
// One run as a line of JSON: <out>/runs.jsonl gets each as it ends, so that a run that is killed
// still shows what it did.
std::string run_line(const JobResult& r);
// A line of runs.jsonl read back (--resume); the backend's version and claimed rules are left
// empty.
Result<JobResult> run_from_line(const std::string& line);
std::string json_report(const std::vector<JobResult>& results, const RunInfo& info,
                        int indent = 1);  // -1: one line (stdout)
std::string junit_report(const std::vector<JobResult>& results, const RunInfo& info);
// The exit code of a run's results: exit_check_failed when a run failed, or, for a whole run
// (`whole`: not a shard), when nothing was computed of some backend of `backends` (every one
// loaded) -- no run of a problem its rules define, and no shape question, was answered by it (a
// problem the rules make invalid asks for a refusal, not a computation) -- naming them on
// stderr; else exit_ok.
int exit_code_of(const std::vector<JobResult>& results, bool whole,
                 const std::vector<BackendEntry>& backends);

}  // namespace poolspec::certify
