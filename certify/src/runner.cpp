#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "backends.hpp"
#include "certify.hpp"
#include "exit_status.hpp"
#include "judge.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/files.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "shrink.hpp"
#include "suite.hpp"
#include "text.hpp"
#include "waivers.hpp"
#include "worker.hpp"

namespace poolspec::certify {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "PASS";
    case Verdict::fail: return "FAIL";
    case Verdict::unsupported: return "UNSUPPORTED";
    case Verdict::crash: return "CRASH";
    case Verdict::hang: return "HANG";
    case Verdict::out_of_bounds: return "OUT-OF-BOUNDS";
    case Verdict::unwritten: return "UNWRITTEN";
    case Verdict::unstable: return "UNSTABLE";
    case Verdict::waived: return "WAIVED";
    case Verdict::load_error: return "LOAD-ERROR";
  }
  return "?";
}

std::optional<Verdict> verdict_named(std::string_view name) {
  for (Verdict v : all_verdicts)
    if (verdict_name(v) == name) return v;
  return std::nullopt;
}

bool is_failure(Verdict v) {
  return v != Verdict::pass && v != Verdict::unsupported && v != Verdict::waived;
}

namespace {

using Clock = std::chrono::steady_clock;

Layout parse_layout(const std::string& name) {
  return name == "nhwc" ? Layout::channels_last : Layout::channels_first;
}

WorkerConfig worker_config(const CertifyOptions& o) {
  WorkerConfig w;
  w.program = o.worker.empty() ? program_folder() + "/poolspec-worker" : o.worker;
  if (o.worker.empty() && access(w.program.c_str(), X_OK) != 0) w.program = POOLSPEC_BUILD_WORKER;
  w.load_timeout = std::chrono::milliseconds(o.load_timeout_ms);
  w.memory_limit_mb = o.memory_limit_mb;
  w.cpu_limit_s = o.cpu_limit_s;
  w.pid_namespace = o.pid_namespace;
  // Every backend's worker stays up for the whole run while the others are called: OpenMP
  // threads that spin while they wait (libgomp's default) would take the cores the worker being
  // called needs (the ci suite took 4x longer with libtorch's and oneDNN's pools spinning, and
  // oneDNN's 10x longer with two lanes). Waiting changes no result; poolspec's own environment
  // may still set it.
  w.environment_defaults.push_back("OMP_WAIT_POLICY=passive");
  return w;
}

std::string sanitized(const std::string& s) {
  std::string out;
  for (char ch : s)
    out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
  return out;
}

// This run's logs that no library wrote to, and their folder when it is left empty.
void remove_empty_logs(const std::string& out_dir, const BackendSelection& selection) {
  std::error_code ec;
  std::vector<std::string> logs;
  for (const LoadedBackend& b : selection.backends) logs.push_back(backend_log(out_dir, b.library));
  for (const LoadFailure& f : selection.failures) logs.push_back(backend_log(out_dir, f.library));
  for (const std::string& log : logs)
    if (std::filesystem::exists(log, ec) && std::filesystem::file_size(log, ec) == 0)
      std::filesystem::remove(log, ec);
  if (std::filesystem::is_empty(out_dir + "/logs", ec))
    std::filesystem::remove(out_dir + "/logs", ec);
}

// Every option that changes a backend's outcome, as command-line words.
std::string outcome_options(const CertifyOptions& o) {
  return fmt::format("--timeout-ms {} --load-timeout-ms {} --memory-limit-mb {} --cpu-limit-s {}{}",
                     o.timeout_ms, o.load_timeout_ms, o.memory_limit_mb, o.cpu_limit_s,
                     o.pid_namespace ? "" : " --no-pid-namespace");
}

std::string poolspec_program(const CertifyOptions& o) {
  if (!o.poolspec.empty()) return std::filesystem::absolute(o.poolspec).string();
  const std::string beside = program_folder() + "/poolspec";
  return access(beside.c_str(), X_OK) == 0 ? beside : POOLSPEC_BUILD_PROGRAM;
}

// A problem a worker was called on, in its layout, with its input and the spec's answers.
struct Called {
  Problem problem;
  Layout layout;
  SpecValues spec;
};

// A failing problem, as a bundle replays it: maybe after a warm-up call of another problem.
struct Replayable {
  Problem problem;
  SpecValues spec;
  std::optional<Called> warmup;
  Judged judged;
  std::string reproduces;
};

// The reproducer bundle: problem string, input, expected and got as .npy, the report, and the
// one shell-safe command that replays it from any folder.
// `rules`: the rule set the replay names (--rules), where the judging depends on it: a bound of
// its own (rules_bound), or a problem it refuses (refusal_under).
void write_bundle(JobResult& r, const std::string& dir, const CertifyOptions& o,
                  const LoadedBackend& b, const Replayable& x, std::optional<Framework> rules) {
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(dir, ec);
  std::filesystem::create_directories(folder, ec);
  if (ec) return;
  r.repro_dir = folder.string();
  const std::string backend_arg = b.library == "built-in" ? b.name() : b.library;
  std::string command =
      fmt::format("{} certify --backend {} --layout {} {}", shell_quoted(poolspec_program(o)),
                  shell_quoted(backend_arg), r.layout, outcome_options(o));
  if (x.warmup) {
    command +=
        fmt::format(" --warmup {} --warmup-layout {} --warmup-input {}",
                    shell_quoted(format_problem(x.warmup->problem)), layout_name(x.warmup->layout),
                    shell_quoted((folder / "warmup-input.npy").string()));
    (void)write_file_atomically(
        (folder / "warmup.txt").string(),
        fmt::format("{} ({})\n", format_problem(x.warmup->problem), layout_name(x.warmup->layout)));
    (void)write_file_atomically((folder / "warmup-input.npy").string(),
                                encode_npy(x.warmup->spec.input));
  }
  if (rules) command += fmt::format(" --rules {}", framework_name(*rules));
  command +=
      fmt::format(" --problem {} --input {} --out {}", shell_quoted(format_problem(x.problem)),
                  shell_quoted((folder / "input.npy").string()),
                  shell_quoted((folder / "replay-out").string()));
  r.repro_command = command;
  r.reproduces = x.reproduces;
  (void)write_file_atomically((folder / "problem.txt").string(), format_problem(x.problem) + "\n");
  (void)write_file_atomically((folder / "input.npy").string(), encode_npy(x.spec.input));
  if (!x.spec.expected.values.shape.empty())  // a problem the rules refuse expects a refusal
    (void)write_file_atomically((folder / "expected.npy").string(),
                                encode_npy(x.spec.expected.values));
  if (!x.judged.got.values.values.empty())
    (void)write_file_atomically((folder / "got.npy").string(), encode_npy(x.judged.got.values));
  (void)write_file_atomically((folder / "command.txt").string(), command + "\n");
  (void)write_file_atomically((folder / "report.txt").string(),
                              fmt::format("{} {} on {} ({}): {}\n{}\nreplay: {}\n", r.backend,
                                          verdict_name(x.judged.verdict), format_problem(x.problem),
                                          r.layout, r.case_id, x.judged.detail, x.reproduces));
}

// Progress on stderr: a bar redrawn on every run on a terminal; elsewhere (a CI log) a line every
// `seconds` (--progress-seconds, default 10) once a run has taken that long, so a long run is
// never silent.
class Progress {
 public:
  Progress(size_t total, int64_t seconds)
      : total_(total), every_(seconds), terminal_(isatty(STDERR_FILENO) == 1) {}
  void step(const std::string& what) {
    const std::lock_guard lock(mutex_);
    ++done_;
    if (terminal_) {
      const size_t width = 20, filled = total_ ? done_ * width / total_ : width;
      const std::string head = fmt::format("\r[{}{}] {}/{} ", std::string(filled, '#'),
                                           std::string(width - filled, ' '), done_, total_);
      fmt::print(stderr, "{}{:<{}}", head, fitted(what, head.size() - 1), 100 - (head.size() - 1));
      if (done_ == total_) fmt::print(stderr, "\n");
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_line_ < every_) return;
    last_line_ = now;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
    const std::string head = fmt::format("certify: {} of {} runs ({}%) after {} s; now ", done_,
                                         total_, total_ ? done_ * 100 / total_ : 100, seconds);
    fmt::print(stderr, "{}{}\n", head, fitted(what, head.size()));
  }

 private:
  // `what` in the columns left of 100 after `used`: a long one keeps its end (the case).
  static std::string fitted(const std::string& what, size_t used) {
    const size_t room = used < 60 ? 100 - used : 40;
    return what.size() <= room ? what : "..." + what.substr(what.size() - (room - 3));
  }

  std::mutex mutex_;
  size_t total_, done_ = 0;
  std::chrono::seconds every_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_line_ = start_;
};

Result<std::pair<int64_t, int64_t>> parse_shard(const std::string& text) {
  if (text.empty()) return std::pair<int64_t, int64_t>{0, 1};
  int64_t i = -1, n = -1;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%ld%c%ld%c", &i, &slash, &n, &extra) != 3 || slash != '/' ||
      n < 1 || i < 0 || i >= n)
    return Error{fmt::format("--shard {}: must be i/n with 0 <= i < n", text)};
  return std::pair<int64_t, int64_t>{i, n};
}

// The rule sets one backend is held to.
std::vector<std::string> rules_for(const BackendDescription& b,
                                   const std::vector<std::string>& wanted) {
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    const std::string r = w == "claimed" ? b.rules : w;
    // "spec" covers every rule set: a spec backend is held to spec, under `claimed` or `spec`.
    if (b.rules == "spec" && w != "claimed" && w != "spec") continue;
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

Result<Tensor> read_input(const std::string& option, const std::string& path, const Problem& p) {
  // The file must hold the problem's input: a larger one is refused before it is read.
  Result<int64_t> elements = element_count(input_shape(p));
  if (!elements) return Error{fmt::format("{} {}: {}", option, path, elements.error().message)};
  Result<Tensor> t = read_npy(path, NpyLimits{*elements, ""});
  if (!t) return Error{fmt::format("{} {}: {}", option, path, t.error().message)};
  if (t->dtype != p.dtype || t->shape != input_shape(p))
    return Error{fmt::format("{} {}: {} ({}) where the problem takes {} ({})", option, path,
                             dtype_name(t->dtype), fmt::join(t->shape, ","), dtype_name(p.dtype),
                             fmt::join(input_shape(p), ","))};
  return t;
}

Result<Problem> parse_valid(const std::string& option, const std::string& text) {
  Result<Problem> p = parse_problem(text);
  if (!p) return Error{fmt::format("{}: {}", option, p.error().message)};
  if (Status s = validate(*p); !s) return Error{fmt::format("{}: {}", option, s.error().message)};
  return p;
}

JobResult load_error_result(const LoadFailure& f) {
  JobResult r;
  r.backend = f.name.empty() ? "?" : f.name;
  r.origin = f.library;
  r.rules = "-";
  r.case_id = "(load)";
  r.part = "load";
  r.verdict = Verdict::load_error;
  r.detail = f.detail;
  return r;
}

// A replayed problem (`problem_option`) with its input (`input_option`, or the suite's input for
// a case named "replay") and the spec's answers.
Result<std::pair<Problem, SpecValues>> replayed(const std::string& problem_option,
                                                const std::string& text,
                                                const std::string& input_option,
                                                const std::string& input) {
  Result<Problem> p = parse_valid(problem_option, text);
  if (!p) return p.error();
  // The spec's evaluation holds the input and the output as doubles, and the backend's worker
  // its own copies: both are bounded before any is made.
  constexpr int64_t most_elements = int64_t{1} << 28;
  if (Result<ShapeInfo> shape = validated_shape(*p);
      shape && std::max(shape->input_elements, shape->output_elements) > most_elements)
    return Error{fmt::format(
        "{} {}: input {} and output {} elements; a replayed problem has at "
        "most {} of each",
        problem_option, text, shape->input_elements, shape->output_elements, most_elements)};
  // ... and so is the spec's work (the backend's is bounded by --timeout-ms and --cpu-limit-s).
  constexpr int64_t most_tap_visits = int64_t{1} << 32;
  if (Result<ShapeInfo> shape = validated_shape(*p); shape && shape->tap_visits > most_tap_visits)
    return Error{
        fmt::format("{} {}: about {} tap visits to evaluate; a replayed problem takes "
                    "at most {}",
                    problem_option, text, shape->tap_visits, most_tap_visits)};
  SpecValues spec;
  if (!input.empty()) {
    Result<Tensor> t = read_input(input_option, input, *p);
    if (!t) return t.error();
    spec.input = std::move(*t);
  } else {
    Case c;
    c.id = "replay";
    spec.input = make_input(c, *p);
  }
  Result<Output> expected = evaluate(*p, spec.input);
  if (!expected) return Error{fmt::format("{}: {}", problem_option, expected.error().message)};
  spec.expected = std::move(*expected);
  return std::make_pair(*p, std::move(spec));
}

// `--problem` (and `--input`): each backend judged on one problem in a fresh worker, after the
// warm-up call when one is given.
int replay(const CertifyOptions& o, const BackendSelection& selection) {
  // The replayed problem is judged once: by one rule set's bounds and refusals, or (without
  // --rules) by none.
  const bool rules_given = o.rules_given || o.rules != CertifyOptions{}.rules;
  if (rules_given && o.rules.size() > 1)
    return refuse(fmt::format(
        "--rules {}: a replay judges its one problem under one rule set; give one, or none",
        fmt::join(o.rules, ",")));
  Result<std::pair<Problem, SpecValues>> target =
      replayed("--problem", o.problem, "--input", o.input);
  if (!target) return refuse(target.error().message);
  std::optional<std::pair<Problem, SpecValues>> warmup;
  if (!o.warmup_layout.empty() && o.warmup_layout != "nchw" && o.warmup_layout != "nhwc")
    return refuse(fmt::format("--warmup-layout {}: must be nchw or nhwc", o.warmup_layout));
  if (!o.warmup.empty()) {
    Result<std::pair<Problem, SpecValues>> w =
        replayed("--warmup", o.warmup, "--warmup-input", o.warmup_input);
    if (!w) return refuse(w.error().message);
    warmup = std::move(*w);
  }
  int code = exit_ok;
  for (const LoadFailure& f : selection.failures) {
    fmt::print("{}: LOAD-ERROR\n{}\n", f.name, f.detail);
    code = exit_check_failed;
  }
  WorkerConfig config = worker_config(o);
  bool judged = false;  // some backend computed the problem (or refused it as its rules must)
  for (const LoadedBackend& b : selection.backends) {
    // `--rules X`: the backend is held to X's rules (`claimed`: its own), which may bound results
    // beyond its declaration (a bundle's command names them when they do).
    const std::optional<Framework> rules =
        rules_given ? label_framework(o.rules[0] == "claimed" ? b.description.rules : o.rules[0])
                    : std::nullopt;
    const std::optional<std::string> refusal =
        rules ? refusal_under(*rules, target->first) : std::nullopt;
    for (const std::string& l : o.layouts) {
      config.log = backend_log(o.out_dir, b.library);
      Runner runner(b, config);
      Judge judge(runner, std::chrono::milliseconds(o.timeout_ms), rules);
      if (warmup) {
        const Judged w =
            judge.judge(warmup->first, parse_layout(o.warmup_layout.empty() ? l : o.warmup_layout),
                        warmup->second);
        fmt::print("{} ({}): warm-up: {}\n", b.name(), l, verdict_name(w.verdict));
      }
      // A problem the rules refuse (must_reject's) replays as a call that must be refused.
      const Judged j = refusal ? judge.judge_reject(RejectCase{"", target->first, *refusal},
                                                    parse_layout(l), target->second.input)
                               : judge.judge(target->first, parse_layout(l), target->second);
      fmt::print("{} ({}): {}{}\n", b.name(), l, verdict_name(j.verdict),
                 j.detail.empty() ? "" : "\n" + j.detail);
      if (is_failure(j.verdict)) code = exit_check_failed;
      judged = judged || j.verdict != Verdict::unsupported;
    }
  }
  remove_empty_logs(o.out_dir, selection);
  if (code == exit_ok && !judged) {  // as for a run: refusing the one problem is not a pass
    fmt::print(stderr,
               "poolspec certify: nothing was replayed: every backend refused the problem\n");
    return exit_check_failed;
  }
  return code;
}

// Every option that decides which runs a shard makes: shards of one run must agree on it.
std::string fingerprint(const CertifyOptions& o, const BackendSelection& s, int64_t shards) {
  std::vector<std::string> backends;
  for (const LoadedBackend& b : s.backends)
    backends.push_back(fmt::format("{}#{}", b.library, b.description.index));
  return fmt::format(
      "suite={} shards={} backends=[{}] rules=[{}] layouts=[{}] filters=[{}] waivers={} shrink={} "
      "{}",
      o.suite, shards, fmt::join(backends, ","), fmt::join(o.rules, ","), fmt::join(o.layouts, ","),
      fmt::join(o.filters, ","), o.waivers, o.shrink, outcome_options(o));
}

// A shape question's problem without its batch and channel counts, which no shape rule reads.
std::string shape_key(Problem p) {
  p.batch = p.channels = 1;
  return format_problem(p);
}

struct Job {
  size_t case_index, backend_index;
  std::string rules;
  RuledProblem problem;
  std::string layout;
  std::optional<ShapeQuestion> shape;  // output_shape's question instead of a run
  std::optional<RejectCase> reject;    // a problem its claimed rules refuse, instead of a run
};

// The verdict of the rules a problem was made under (its label's framework; xs3's and the seeds'
// own rules are all defined).
RuleVerdict rule_verdict(const RuledProblem& rp, const Case& c) {
  if (c.fixed) return {};
  Result<Framework> f = parse_framework(rp.label.substr(0, rp.label.find('@')));
  if (!f) return {};
  return verdict_of(*f, Frontend{rp.problem, Framing{}, ""});
}

// A job's kind, as runs.jsonl's column tells it: output_shape's question, a must-reject call, or
// a run against the spec.
std::string_view job_kind(const Job& j) { return j.shape ? "shape" : j.reject ? "reject" : "run"; }
std::string_view job_kind(const JobResult& r) {
  return r.column == shape_column ? "shape" : r.column == reject_column ? "reject" : "run";
}

// What the lanes share: the options, the suite, bundles per row, progress.
struct RunState {
  const CertifyOptions& o;
  const std::vector<Case>& suite;
  const BackendSelection& selection;
  const std::vector<Waiver>& waivers;
  const std::vector<Job>& jobs;
  std::vector<JobResult>& results;
  Progress& progress;
  std::mutex mutex;
  std::map<std::string, int> bundles_per_row;
  std::string spec_error;
  std::FILE* stream = nullptr;  // <out>/runs.jsonl.partial: each run as it ends
  std::vector<bool> done;       // per job: it ran (a stopped run reports those only)
};

// Set by SIGINT, SIGTERM and SIGHUP during a run: the lanes finish the run they are in, and the
// reports are written for the runs made.
// Written by the handler, read by the lanes' threads: a lock-free atomic is both signal-safe and
// free of data races.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
void request_stop(int signal) { stop_signal = signal; }

// Catches the stop signals for as long as it lives, and puts the handlers before it back.
class StopSignals {
 public:
  StopSignals() {
    stop_signal = 0;
    struct sigaction stop = {};
    stop.sa_handler = request_stop;
    stop.sa_flags = SA_RESETHAND;  // a second signal ends poolspec at once
    sigemptyset(&stop.sa_mask);
    for (size_t i = 0; i < std::size(signals_); ++i) sigaction(signals_[i], &stop, &before_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < std::size(signals_); ++i) sigaction(signals_[i], &before_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int signals_[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction before_[3] = {};
};

// How a failure replays in a fresh worker: the minimal problem alone, the original alone, or the
// original after the problem the worker ran before it.
Replayable reproducible(RunState& s, Runner& runner, const Replayable& minimal,
                        const Replayable& original, const std::optional<Called>& previous,
                        Layout layout, std::optional<Framework> rules) {
  // Twice in a row, each in a fresh worker (a failure that comes and goes is not said to replay);
  // a hang once (each try costs the time limit).
  const auto replays = [&](const Replayable& x, const std::optional<Called>& warmup) {
    for (int attempt = 0; attempt < (x.judged.verdict == Verdict::hang ? 1 : 2); ++attempt) {
      runner.fresh();
      Judge judge(runner, std::chrono::milliseconds(s.o.timeout_ms), rules);
      if (warmup) {
        SpecValues warm = warmup->spec;
        (void)judge.judge(warmup->problem, warmup->layout, warm);
      }
      SpecValues spec = x.spec;
      if (judge.judge(x.problem, layout, spec).verdict != x.judged.verdict) return false;
    }
    return true;
  };
  if (replays(minimal, std::nullopt)) {
    Replayable x = minimal;
    x.reproduces = "reproduces in a fresh worker";
    return x;
  }
  if (minimal.problem != original.problem && replays(original, std::nullopt)) {
    Replayable x = original;
    x.reproduces =
        "reproduces in a fresh worker (the minimal problem does not: it failed after the worker's "
        "earlier calls)";
    return x;
  }
  if (previous) {
    if (replays(original, previous)) {
      Replayable x = original;
      x.warmup = previous;
      x.reproduces =
          "reproduces in a fresh worker after a warm-up call of the problem run before it "
          "(--warmup)";
      return x;
    }
  }
  Replayable x = original;
  x.reproduces =
      "does NOT reproduce in a fresh worker, even after the problem run before it: the failure "
      "depends on the worker's longer history of calls (see the run's order in report.json)";
  return x;
}

// A waiver covers a known deviation of a backend poolspec ships (built in or an adapter), never
// a library given by path that takes a shipped backend's name; a crash, a hang, a write out of
// bounds or any other status but FAIL only where a scoped waiver names that status and the
// problems (waivers.hpp). Whether it covered `r`.
bool waive(RunState& s, const LoadedBackend& b, JobResult& r) {
  const bool shipped = b.library == "built-in" || !b.given_by_path;
  const Waiver* w = is_failure(r.verdict) && shipped ? waiver_for(s.waivers, r) : nullptr;
  if (!w) return false;
  r.detail = fmt::format("waived {} ({}): {}\n{}", verdict_name(r.verdict), w->reason, s.o.waivers,
                         r.detail);
  r.verdict = Verdict::waived;
  return true;
}

// The number of the bundle a failure gets (the first 20 of each backend@rules row), or none.
std::optional<int> bundle_number(RunState& s, const JobResult& r) {
  if (!is_failure(r.verdict)) return std::nullopt;
  const std::lock_guard lock(s.mutex);
  int& made = s.bundles_per_row[r.backend + "@" + r.rules];
  if (made >= 20) return std::nullopt;
  return made++;
}

// One lane: the cases it takes, each backend in a worker of the lane's own.
void run_lane(RunState& s, std::atomic<size_t>& next_case,
              const std::vector<std::pair<size_t, size_t>>& case_jobs) {
  const WorkerConfig base = worker_config(s.o);
  std::vector<std::unique_ptr<Runner>> runners(s.selection.backends.size());
  std::vector<std::optional<Called>> previous(s.selection.backends.size());
  const auto runner_of = [&](size_t bi) -> Runner& {
    if (!runners[bi]) {
      WorkerConfig config = base;
      config.log = backend_log(s.o.out_dir, s.selection.backends[bi].library);
      runners[bi] = std::make_unique<Runner>(s.selection.backends[bi], config);
    }
    return *runners[bi];
  };
  for (;;) {
    if (stop_signal != 0) return;
    const size_t k = next_case++;
    if (k >= case_jobs.size()) return;
    std::map<std::string, SpecValues> spec_cache;  // this case's problems: input, expected
    for (size_t ji = case_jobs[k].first; ji < case_jobs[k].second; ++ji) {
      if (stop_signal != 0) return;  // a stop asked for: the runs made are the report's
      if (s.done[ji]) continue;      // kept from the run resumed
      const Job& job = s.jobs[ji];
      const std::optional<Framework> held = label_framework(job.rules);  // the rules held to
      const Case& c = s.suite[job.case_index];
      const LoadedBackend& b = s.selection.backends[job.backend_index];
      const Problem& p = job.problem.problem;
      const std::string text = format_problem(p);
      JobResult& r = s.results[ji];
      r.backend = b.name();
      r.version = b.description.version;
      r.origin = b.origin();
      r.claimed_rules = b.description.rules;
      r.rules = job.rules;
      r.label = job.problem.label;
      r.case_id = c.id;
      r.part = c.part;
      r.note = c.note;
      r.problem = text;
      r.layout = job.layout;
      const auto finish = [&] {
        const std::lock_guard lock(s.mutex);
        s.done[ji] = true;
        if (s.stream) {
          std::fputs(run_line(r).c_str(), s.stream);
          std::fflush(s.stream);
        }
      };
      if (job.shape) {
        s.progress.step(fmt::format("{}@{} {} shape", b.name(), job.rules, c.id));
        r.column = shape_column;
        r.rule_verdict = job.shape->extents.empty() ? "invalid" : "defined";
        Judge judge(runner_of(job.backend_index), std::chrono::milliseconds(s.o.timeout_ms), held);
        const auto t0 = Clock::now();
        const Judged j = judge.judge_shape(*job.shape, parse_layout(job.layout));
        r.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        r.verdict = j.verdict;
        r.detail = j.detail;
        waive(s, b, r);
        finish();
        continue;
      }
      if (job.reject) {
        s.progress.step(fmt::format("{}@{} {} invalid", b.name(), job.rules, c.id));
        r.column = reject_column;
        r.rule_verdict = "invalid";
        Judge judge(runner_of(job.backend_index), std::chrono::milliseconds(s.o.timeout_ms), held);
        const auto t0 = Clock::now();
        const Layout layout = parse_layout(job.layout);
        const Tensor input = make_input(c, p);
        const Judged j = judge.judge_reject(*job.reject, layout, input);
        r.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        r.verdict = j.verdict;
        r.detail = j.detail;
        if (const std::optional<int> n = waive(s, b, r) ? std::nullopt : bundle_number(s, r)) {
          // A refusal has nothing smaller to shrink to: the bundle holds the problem itself,
          // replayed as its command replays it (the refusal derived from the problem under the
          // rules), twice in a fresh worker (a hang once).
          Replayable x{job.reject->problem, SpecValues{input, {}, std::nullopt}, std::nullopt, j,
                       "reproduces in a fresh worker"};
          const std::optional<std::string> refusal =
              held ? refusal_under(*held, job.reject->problem) : std::nullopt;
          if (!refusal)
            x.reproduces =
                "its command replays it as a problem to compute: the rules' refusal "
                "is not derived from the problem alone";
          for (int attempt = 0; refusal && attempt < (j.verdict == Verdict::hang ? 1 : 2);
               ++attempt) {
            Runner& runner = runner_of(job.backend_index);
            runner.fresh();
            Judge fresh(runner, std::chrono::milliseconds(s.o.timeout_ms), held);
            if (fresh.judge_reject(RejectCase{"", job.reject->problem, *refusal}, layout, input)
                    .verdict != j.verdict)
              x.reproduces = "does not reproduce in a fresh worker";
          }
          write_bundle(r,
                       fmt::format("{}/repro/{}@{}/{:03}-{}-{}-invalid", s.o.out_dir,
                                   sanitized(r.backend), r.rules, *n, sanitized(c.id), r.layout),
                       s.o, b, x, held);
        }
        // A bundle's warm-up replays a run; this call was none.
        previous[job.backend_index].reset();
        finish();
        continue;
      }
      auto it = spec_cache.find(text);
      if (it == spec_cache.end()) {
        SpecValues v;
        v.input = make_input(c, p);
        Result<Output> expected = evaluate(p, v.input);
        if (!expected) {
          const std::lock_guard lock(s.mutex);
          s.spec_error =
              fmt::format("case {}: the spec refuses {}: {}", c.id, text, expected.error().message);
          return;
        }
        v.expected = std::move(*expected);
        it = spec_cache.emplace(text, std::move(v)).first;
      }
      s.progress.step(fmt::format("{}@{} {}", b.name(), job.rules, c.id));
      r.column = matrix_column(p);
      const RuleVerdict rule = rule_verdict(job.problem, c);
      r.rule_verdict = rule.name();
      Runner& runner = runner_of(job.backend_index);
      Judge judge(runner, std::chrono::milliseconds(s.o.timeout_ms), held);
      const Layout layout = parse_layout(job.layout);
      const auto t0 = Clock::now();
      Judged j = judge.judge(p, layout, it->second);
      r.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (rule.kind == RuleVerdict::unpredictable && j.verdict == Verdict::fail &&
          j.comparison.mismatches > 0) {  // any values, as long as the call was sound
        j.verdict = Verdict::pass;
        j.detail =
            fmt::format("{} of the values not compared: {}", j.comparison.mismatches, rule.text());
      }
      r.verdict = j.verdict;
      r.detail = j.detail;
      r.elements = j.comparison.elements;
      r.mismatches = j.comparison.mismatches;
      r.worst_fraction_of_bound = j.comparison.worst_fraction_of_bound;
      r.first = j.comparison.first;
      if (const std::optional<int> n = waive(s, b, r) ? std::nullopt : bundle_number(s, r)) {
        // The first failures of each backend and rule set: a minimal counterexample -- smaller
        // problems of the same rules that fail the same way (a hang is not shrunk: each try
        // would cost the time limit) -- and a bundle that replays in a fresh worker.
        Replayable original{p, it->second, std::nullopt, j, ""};
        Replayable least = original;
        // Nor is a case whose input was built for its problem (fields/tosa_division_*): a
        // smaller problem would take random values, and a half of its 2 million taps makes
        // million-tap windows by the thousand.
        const bool built_input = c.fixed_input && c.fixed_input->values.size() > 4096;
        if (built_input) r.minimal_within = "not shrunk: the case's input is built for its problem";
        if (s.o.shrink && j.verdict != Verdict::hang && stop_signal == 0 && !built_input) {
          Failure m = minimal_failure(judge, c, job.rules, job.problem.label, layout,
                                      Failure{p, it->second, j}, 120, &r.minimal_within);
          least = Replayable{std::move(m.problem), std::move(m.spec), std::nullopt,
                             std::move(m.judged), ""};
        }
        r.minimal_problem = format_problem(least.problem);
        const Replayable x =
            reproducible(s, runner, least, original, previous[job.backend_index], layout, held);
        write_bundle(r,
                     fmt::format("{}/repro/{}@{}/{:03}-{}-{}", s.o.out_dir, sanitized(r.backend),
                                 r.rules, *n, sanitized(c.id), r.layout),
                     s.o, b, x, rules_bound(held, x.problem) ? held : std::nullopt);
        previous[job.backend_index].reset();  // the worker is fresh now
      } else {
        previous[job.backend_index] = Called{p, layout, it->second};
      }
      finish();
    }
  }
}

// A job as runs.jsonl names it: which backend, rules, case, problem and layout, and its kind.
std::string job_key(const std::string& backend, const std::string& rules, const std::string& label,
                    const std::string& case_id, const std::string& layout,
                    const std::string& problem, std::string_view kind) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", backend, rules, label, case_id, layout, problem, kind);
}

// --resume: the finished runs of the run that `out` holds (a killed run's runs.jsonl.partial, or
// a stopped run's runs.jsonl), after checking that it ran with these options. A last line cut
// short by a kill is left out (that run is made again).
Result<std::vector<JobResult>> finished_runs(const std::string& out, const std::string& print) {
  const std::string partial = out + "/runs.jsonl.partial", stream = out + "/runs.jsonl";
  std::string source = partial;
  if (!std::filesystem::exists(partial)) {
    std::ifstream report(out + "/report.json");
    std::stringstream text;
    text << report.rdbuf();
    RunInfo info;
    Result<std::vector<JobResult>> earlier = results_from_json(text.str(), &info);
    if (!earlier)
      return Error{
          fmt::format("--resume: {} holds no run to go on with (no runs.jsonl.partial, "
                      "no readable report.json)",
                      out)};
    if (info.stopped_by == 0)
      return Error{fmt::format("--resume: the run in {} ended by itself: nothing to resume", out)};
    source = stream;
  }
  std::ifstream mark(out + "/run.fingerprint");
  std::string earlier_print;
  std::getline(mark, earlier_print);
  if (earlier_print != print)
    return Error{fmt::format(
        "--resume: the run in {} had other options (suite, shard, backends, rules, layouts, "
        "filters, waivers or limits): run it again with them, or without --resume",
        out)};
  std::ifstream lines(source);
  std::vector<JobResult> out_runs;
  for (std::string line; std::getline(lines, line);) {
    Result<JobResult> r = run_from_line(line);
    if (!r) break;
    out_runs.push_back(std::move(*r));
  }
  return out_runs;
}

}  // namespace

int certify_command(const CertifyOptions& o) {
  for (const std::string& l : o.layouts)
    if (l != "nchw" && l != "nhwc")
      return refuse(fmt::format("--layout {}: must be nchw or nhwc", l));
  for (const std::string& r : o.rules)
    if (r != "claimed" && !known_rules(r))
      return refuse(fmt::format("--rules {}: must be claimed, spec, xs3 or a framework ({})", r,
                                framework_names()));
  const std::pair<const char*, int64_t> limits[] = {{"--timeout-ms", o.timeout_ms},
                                                    {"--load-timeout-ms", o.load_timeout_ms},
                                                    {"--memory-limit-mb", o.memory_limit_mb},
                                                    {"--cpu-limit-s", o.cpu_limit_s}};
  for (const auto& [name, value] : limits)
    if (value < 1 || value > 100'000'000)
      return refuse(fmt::format("{} {}: must be 1..100000000", name, value));
  if (o.jobs < 1 || o.jobs > 256) return refuse(fmt::format("--jobs {}: must be 1..256", o.jobs));
  if (o.progress_seconds < 0 || o.progress_seconds > 86'400)
    return refuse(fmt::format("--progress-seconds {}: must be 0..86400", o.progress_seconds));
  if (o.out_dir.empty()) return refuse("--out '': must name a folder");
  Result<std::pair<int64_t, int64_t>> shard = parse_shard(o.shard);
  if (!shard) return refuse(shard.error().message);
  if (!o.input.empty() && o.problem.empty())
    return refuse("--input: only with --problem (a replay)");
  if (!o.warmup.empty() && o.problem.empty())
    return refuse("--warmup: only with --problem (a replay)");
  if (o.resume && (!o.problem.empty() || o.list))
    return refuse("--resume: only for a suite's run (not with --problem or --list)");
  if ((!o.warmup_input.empty() || !o.warmup_layout.empty()) && o.warmup.empty())
    return refuse("--warmup-input, --warmup-layout: only with --warmup");
  Result<std::vector<Waiver>> waivers = read_waivers(o.waivers);
  if (!waivers) return refuse(waivers.error().message);
  Result<std::vector<Case>> suite = make_suite(o.suite);
  if (!suite) return refuse(fmt::format("--suite: {}", suite.error().message));
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir + "/logs", ec);
  reset_logs();
  if (ec)
    return refuse(fmt::format("--out {}: cannot make the folder: {}", o.out_dir, ec.message()));
  // A backend's orphans come to poolspec when no PID namespace holds them, to be killed; and no
  // process of this user may read poolspec's descriptors or memory through /proc.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_DUMPABLE, 0);
  if (const WorkerConfig w = worker_config(o); access(w.program.c_str(), X_OK) != 0)
    return refuse(fmt::format(
        "{}: the certification worker cannot be run ({}); it is installed beside poolspec",
        w.program, std::strerror(errno)));

  RunInfo info;
  info.suite = o.suite;
  info.shard = fmt::format("{}/{}", shard->first, shard->second);
  info.filters = o.filters;
  Result<BackendSelection> selection =
      select_backends(o.backends, worker_config(o), o.list ? "" : o.out_dir);
  if (!selection) return refuse(selection.error().message);
  if (o.list && o.json) {
    nlohmann::json backends = nlohmann::json::array();
    for (const LoadedBackend& b : selection->backends)
      backends.push_back({{"name", b.name()},
                          {"version", b.description.version},
                          {"rules", b.description.rules},
                          {"library", b.origin()}});
    nlohmann::json failures = nlohmann::json::array();
    for (const LoadFailure& f : selection->failures)
      failures.push_back({{"name", f.name}, {"library", f.library}, {"detail", f.detail}});
    fmt::print("{}\n", nlohmann::json{{"schema", json_schema("certify-list")},
                                      {"backends", backends},
                                      {"load_errors", failures},
                                      {"suites", {"smoke", "ci", "full"}}}
                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return selection->failures.empty() ? exit_ok : exit_check_failed;
  }
  if (o.list) {
    for (const LoadedBackend& b : selection->backends)
      fmt::print("{:<14} {:<44} rules {:<10} {}\n", b.name(), b.description.version,
                 b.description.rules, b.origin());
    for (const LoadFailure& f : selection->failures)
      fmt::print("{:<14} LOAD-ERROR: {}\n", f.name, f.detail);
    fmt::print("suites: smoke ci full\n");
    return selection->failures.empty() ? exit_ok : exit_check_failed;
  }
  if (!selection->all_in_pid_namespaces)
    info.notes.push_back(
        o.pid_namespace
            ? "workers run without PID namespaces (the kernel allowed none): a backend could "
              "signal poolspec by its process id, and orphans are killed by /proc scans"
            : "workers run without PID namespaces (--no-pid-namespace)");
  if (!o.problem.empty()) return replay(o, *selection);
  // A --rules list under which no chosen backend is held to any rule set would certify nothing:
  // said before any call.
  if (!selection->backends.empty() &&
      std::all_of(
          selection->backends.begin(), selection->backends.end(),
          [&](const LoadedBackend& b) { return rules_for(b.description, o.rules).empty(); })) {
    std::vector<std::string> claims;
    for (const LoadedBackend& b : selection->backends)
      claims.push_back(fmt::format("{} claims {}", b.name(), b.description.rules));
    return refuse(fmt::format(
        "--rules {}: no backend chosen is held to them ({}; a backend that claims spec is held "
        "to spec alone, under --rules claimed or spec)",
        fmt::join(o.rules, ","), fmt::join(claims, ", ")));
  }
  for (const LoadedBackend& b : selection->backends)
    info.backends.push_back({b.name(), b.description.version, b.origin(), b.description.rules});
  // From here a stop asked for by a signal ends the run between two calls, with its reports.
  const StopSignals stop_signals;

  // Every job, before running any, case by case: the progress bar's total, the lanes' work.
  std::vector<Job> jobs;
  std::vector<std::pair<size_t, size_t>> case_jobs;
  // Shape questions: each asked once per backend, rules and layout (the sweeps' channel counts
  // and the values cases ask the same ones again).
  std::set<std::string> asked;
  for (size_t ci = 0; ci < suite->size(); ++ci) {
    const Case& c = (*suite)[ci];
    if (static_cast<int64_t>(ci) % shard->second != shard->first) continue;
    if (!o.filters.empty() &&
        std::none_of(o.filters.begin(), o.filters.end(),
                     [&](const std::string& f) { return c.id.find(f) != std::string::npos; }))
      continue;
    info.cases.push_back(c.id);
    const size_t first = jobs.size();
    std::map<std::string, std::vector<RuledProblem>> ruled;  // the case under each rule set, once
    for (size_t bi = 0; bi < selection->backends.size(); ++bi)
      for (const std::string& rules : rules_for(selection->backends[bi].description, o.rules)) {
        auto it = ruled.find(rules);
        if (it == ruled.end()) it = ruled.emplace(rules, problems_under(c, rules)).first;
        for (const RuledProblem& rp : it->second)
          for (const std::string& layout : o.layouts)
            jobs.push_back({ci, bi, rules, rp, layout, std::nullopt, std::nullopt});
        if (selection->backends[bi].description.has_output_shape)
          for (ShapeQuestion& q : shape_questions(c, rules, it->second))
            for (const std::string& layout : o.layouts)
              if (asked
                      .insert(fmt::format("{} {} {} {} {}", bi, rules, layout, q.label,
                                          shape_key(q.problem)))
                      .second)
                jobs.push_back({ci, bi, rules, {q.label, q.problem}, layout, q, std::nullopt});
        // A rule set's invalid problems, for the backend that claims it.
        if (rules == selection->backends[bi].description.rules)
          for (RejectCase& r : must_reject(c, rules))
            for (const std::string& layout : o.layouts)
              jobs.push_back({ci, bi, rules, {r.label, r.problem}, layout, std::nullopt, r});
      }
    if (jobs.size() > first) case_jobs.emplace_back(first, jobs.size());
  }
  if (!o.filters.empty() && info.cases.empty())
    return refuse(fmt::format("--filter {}: no case of suite {} matches", fmt::join(o.filters, ","),
                              o.suite));
  // An earlier run's bundles go once the run is sure to start (a refused one leaves them).
  if (!o.resume) std::filesystem::remove_all(o.out_dir + "/repro", ec);
  info.fingerprint = fingerprint(o, *selection, shard->second);
  // What --resume checks: the options and this shard.
  const std::string run_print = fmt::format("{} shard={}", info.fingerprint, info.shard);

  std::vector<JobResult> results(jobs.size());
  std::vector<bool> done(jobs.size(), false);
  std::map<std::string, int> bundles_per_row;
  size_t resumed = 0;
  if (o.resume) {
    Result<std::vector<JobResult>> finished = finished_runs(o.out_dir, run_print);
    if (!finished) return refuse(finished.error().message);
    std::map<std::string, size_t> job_of;
    for (size_t ji = 0; ji < jobs.size(); ++ji) {
      const Job& j = jobs[ji];
      job_of[job_key(selection->backends[j.backend_index].name(), j.rules, j.problem.label,
                     (*suite)[j.case_index].id, j.layout, format_problem(j.problem.problem),
                     job_kind(j))] = ji;
    }
    for (JobResult& r : *finished) {
      auto it = job_of.find(
          job_key(r.backend, r.rules, r.label, r.case_id, r.layout, r.problem, job_kind(r)));
      if (it == job_of.end() || done[it->second]) continue;
      const LoadedBackend& b = selection->backends[jobs[it->second].backend_index];
      r.version = b.description.version;
      r.claimed_rules = b.description.rules;
      if (!r.repro_dir.empty()) ++bundles_per_row[r.backend + "@" + r.rules];
      results[it->second] = std::move(r);
      done[it->second] = true;
      ++resumed;
    }
    info.notes.push_back(fmt::format("resumed: {} of {} runs kept from the run in {}", resumed,
                                     jobs.size(), o.out_dir));
  }
  if (std::ofstream mark(o.out_dir + "/run.fingerprint"); !(mark << run_print << "\n"))
    return refuse(fmt::format("--out {}: cannot write run.fingerprint", o.out_dir));

  const auto start = Clock::now();
  Progress progress(jobs.size() - resumed, o.progress_seconds);
  RunState state{o,        *suite,  *selection,
                 *waivers, jobs,    results,
                 progress, {},      std::move(bundles_per_row),
                 {},       nullptr, std::move(done)};
  // runs.jsonl.partial while the run goes (the kept runs first); renamed to runs.jsonl with the
  // reports.
  const std::string stream_path = o.out_dir + "/runs.jsonl.partial";
  const std::string stream_next = stream_path + ".next";
  state.stream = std::fopen(stream_next.c_str(), "w");
  if (!state.stream)
    return refuse(fmt::format("--out {}: cannot write runs.jsonl.partial: {}", o.out_dir,
                              std::strerror(errno)));
  for (size_t ji = 0; ji < jobs.size(); ++ji)
    if (state.done[ji]) std::fputs(run_line(results[ji]).c_str(), state.stream);
  std::fflush(state.stream);
  std::filesystem::rename(stream_next, stream_path, ec);
  if (ec)
    return refuse(
        fmt::format("--out {}: cannot write runs.jsonl.partial: {}", o.out_dir, ec.message()));
  std::atomic<size_t> next_case{0};
  if (o.jobs == 1) {
    run_lane(state, next_case, case_jobs);
  } else {
    std::vector<std::thread> lanes;
    for (int t = 0; t < o.jobs; ++t)
      lanes.emplace_back([&] { run_lane(state, next_case, case_jobs); });
    for (std::thread& t : lanes) t.join();
  }
  std::fclose(state.stream);
  sweep_orphans();
  if (!state.spec_error.empty()) return refuse(state.spec_error);
  // A shape rule that refuses every question its rules answer gets no FAIL (each refusal is
  // UNSUPPORTED, each must-refuse question a PASS): said, so that its column is not read as a
  // certified shape rule.
  std::map<std::string, std::pair<int64_t, int64_t>> answerable;  // row -> asked, answered
  for (size_t ji = 0; ji < jobs.size(); ++ji)
    if (jobs[ji].shape && !jobs[ji].shape->extents.empty() && state.done[ji]) {
      auto& [questions, answered] = answerable[results[ji].backend + "@" + results[ji].rules];
      ++questions;
      if (results[ji].verdict != Verdict::unsupported) ++answered;
    }
  for (const auto& [row, counts] : answerable)
    if (counts.second == 0)
      info.notes.push_back(fmt::format(
          "{}: output_shape refused all {} shape questions its rules answer; its shape rule is "
          "not certified (its shape column counts only the refusals it owed)",
          row, counts.first));
  const int stopped_by = stop_signal;
  if (stopped_by != 0) {
    std::vector<JobResult> made;
    for (size_t i = 0; i < results.size(); ++i)
      if (state.done[i]) made.push_back(std::move(results[i]));
    info.notes.push_back(
        fmt::format("stopped by signal {} ({}) after {} of {} runs: the reports hold the runs made",
                    stopped_by, strsignal(stopped_by), made.size(), results.size()));
    info.stopped_by = stopped_by;
    results = std::move(made);
  }
  for (const LoadFailure& f : selection->failures) results.push_back(load_error_result(f));
  info.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  info.command = "poolspec certify";
  std::vector<std::string> libraries;
  for (const LoadedBackend& b : selection->backends)
    if (std::find(libraries.begin(), libraries.end(), b.library) == libraries.end())
      libraries.push_back(b.library);
  for (const LoadFailure& f : selection->failures)
    if (std::find(libraries.begin(), libraries.end(), f.library) == libraries.end())
      libraries.push_back(f.library);
  for (const std::string& library : libraries) {
    const std::string log = backend_log(o.out_dir, library);
    const auto size = std::filesystem::file_size(log, ec);
    if (!ec && size > 0) {
      info.logs.emplace_back(library, log);
      info.notes.push_back(
          fmt::format("{} wrote {} bytes to stdout / stderr: {}", library, size, log));
    }
  }
  remove_empty_logs(o.out_dir, *selection);

  const std::string matrix = matrix_text(results);
  const std::string json = json_report(results, info);
  if (Status s = write_reports(o.out_dir, {{"matrix.txt", matrix},
                                           {"report.json", json},
                                           {"junit.xml", junit_report(results, info)}});
      !s)
    return refuse(fmt::format("--out {}: {}", o.out_dir, s.error().message));
  std::filesystem::rename(stream_path, o.out_dir + "/runs.jsonl", ec);
  if (o.json) {
    fmt::print("{}\n", json_report(results, info, -1));
  } else {
    fmt::print("poolspec certify: suite {}, shard {}, {} runs in {:.1f} s\n\n{}", o.suite,
               info.shard, results.size(), info.seconds, matrix);
    for (const std::string& n : info.notes) fmt::print("note: {}\n", n);
    size_t shown = 0;
    for (const JobResult& r : results) {
      if (!is_failure(r.verdict) || shown++ >= 10) continue;
      fmt::print("\n{} {}@{} {} ({}): {}\n  {}\n",
                 painted(stdout, Paint::failure, verdict_name(r.verdict)), r.backend, r.rules,
                 r.case_id, r.layout, r.problem,
                 r.detail.substr(0, r.detail.find('\n', r.detail.find('\n') + 1)));
      if (!r.minimal_problem.empty() && r.minimal_problem != r.problem)
        fmt::print("  minimal: {} (within {})\n", r.minimal_problem, r.minimal_within);
      if (!r.repro_command.empty())
        fmt::print("  replay:  {}\n  ({})\n", r.repro_command, r.reproduces);
    }
    fmt::print("\nreports: {0}/matrix.txt {0}/report.json {0}/junit.xml {0}/runs.jsonl\n",
               o.out_dir);
  }
  if (stopped_by != 0) return 128 + stopped_by;  // as a shell reports a process the signal ended
  // A shard may hold only refusals; the merge of the shards is judged whole.
  return exit_code_of(results, o.shard.empty(), info.backends);
}

}  // namespace poolspec::certify
