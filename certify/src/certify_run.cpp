#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends.hpp"
#include "certify.hpp"
#include "isolate.hpp"
#include "poolspec/backend.hpp"
#include "poolspec/evaluate.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem_string.hpp"
#include "poolspec/shape.hpp"
#include "report.hpp"
#include "suite.hpp"

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
    case Verdict::waived: return "WAIVED";
  }
  return "?";
}

bool is_failure(Verdict v) { return v != Verdict::pass && v != Verdict::unsupported && v != Verdict::waived; }

namespace {

using Clock = std::chrono::steady_clock;

// The matrix's column: the operator and the options that split frameworks.
std::string column_of(const Problem& p) {
  std::string c = p.op == Op::max ? "max" : p.divisor == Divisor::exclude ? "avg excl" : "avg incl";
  if (p.rounding != Rounding::floor) c += " ceil";
  if (p.op == Op::max && p.indices != Indices::none) c += " idx";
  if (!is_float(p.dtype)) c += " int";
  return c;
}

Layout parse_layout(const std::string& name) { return name == "nhwc" ? Layout::channels_last : Layout::channels_first; }

// One call of one backend on one problem, judged against the spec.
struct Judged {
  Verdict verdict = Verdict::pass;
  std::string detail;
  EngineComparison comparison;
  Output got;
  ErrorBound bound;
};

class Judge {
 public:
  Judge(const LoadedBackend& backend, std::chrono::milliseconds timeout) : backend_(backend), timeout_(timeout) {}

  Judged judge(const Problem& p, Layout layout, const Tensor& input, const Output& expected) const {
    Judged j;
    Result<CProblem> c = to_c_problem(p, layout);
    if (!c) {
      j.verdict = Verdict::unsupported;
      j.detail = c.error().message;
      return j;
    }
    const std::vector<std::byte> in = to_storage(input, layout);
    const ShapeInfo shape = validated_shape(p).value();
    const bool with_indices = p.op == Op::max && p.indices != Indices::none;
    CallSpec spec{in, static_cast<size_t>(shape.output_elements) * static_cast<size_t>(storage_bytes(p.dtype)),
                  with_indices ? static_cast<size_t>(shape.output_elements) : 0, std::byte{0xA5}, timeout_};
    CallResult first = call_isolated(*backend_.abi, c->problem, spec);
    switch (first.outcome) {
      case CallResult::Outcome::unsupported: j.verdict = Verdict::unsupported; j.detail = first.message; return j;
      case CallResult::Outcome::run_error:
        j.verdict = Verdict::fail;
        j.detail = fmt::format("supports() accepted the problem, then run() failed: {}", first.message);
        return j;
      case CallResult::Outcome::crash: j.verdict = Verdict::crash; j.detail = first.message; return j;
      case CallResult::Outcome::hang: j.verdict = Verdict::hang; j.detail = first.message; return j;
      case CallResult::Outcome::out_of_bounds: j.verdict = Verdict::out_of_bounds; j.detail = first.message; return j;
      case CallResult::Outcome::ran: break;
    }
    j.bound = bound_of(first.accumulation, p, backend_.abi->name);
    j.got = read_output(p, layout, shape, first);
    Result<EngineComparison> cmp = compare_output(p, input, expected, j.got, j.bound, 5);
    if (!cmp) {
      j.verdict = Verdict::fail;
      j.detail = cmp.error().message;
      return j;
    }
    j.comparison = *cmp;
    if (cmp->passed()) return j;
    // Elements that kept the poison: a second call with another poison tells unwritten from
    // a value that happens to have the poison's bits.
    spec.poison = std::byte{0x5A};
    CallResult second = call_isolated(*backend_.abi, c->problem, spec);
    if (second.outcome == CallResult::Outcome::ran) {
      const auto width = static_cast<size_t>(storage_bytes(p.dtype));
      int64_t unwritten = 0, example = -1;
      for (size_t e = 0; e < static_cast<size_t>(shape.output_elements); ++e) {
        bool a = true, b = true;
        for (size_t k = 0; k < width; ++k) {
          a = a && first.output[e * width + k] == std::byte{0xA5};
          b = b && second.output[e * width + k] == std::byte{0x5A};
        }
        if (a && b) {
          ++unwritten;
          if (example < 0) example = static_cast<int64_t>(e);
        }
      }
      if (unwritten > 0) {
        j.verdict = Verdict::unwritten;
        j.detail = fmt::format("{} of {} output elements left unwritten (they kept two different poisons); the "
                               "first at storage offset {}", unwritten, shape.output_elements, example);
        return j;
      }
    }
    j.verdict = Verdict::fail;
    j.detail = comparison_text(p, *cmp, j.bound);
    return j;
  }

 private:
  static Output read_output(const Problem& p, Layout layout, const ShapeInfo& shape, const CallResult& r) {
    Output out;
    out.values = from_storage(p.dtype, shape.output_shape, layout, r.output);
    if (!r.indices.empty()) {
      out.indices.resize(r.indices.size());
      for (size_t i = 0; i < r.indices.size(); ++i)
        out.indices[i] = r.indices[static_cast<size_t>(storage_position(shape.output_shape, static_cast<int64_t>(i), layout))];
    }
    return out;
  }

  const LoadedBackend& backend_;
  std::chrono::milliseconds timeout_;
};

// Smaller problems of the same rules: each attribute one step toward its smallest value.
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
    for (int64_t Axis::*field : {&Axis::extent, &Axis::kernel, &Axis::stride, &Axis::dilation, &Axis::pad_begin, &Axis::pad_end}) {
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

std::string sanitized(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
  return out;
}

std::string quoted(const std::string& s) { return fmt::format("'{}'", s); }

// The reproducer bundle: problem string, input, expected and got as .npy, and the command.
void write_bundle(JobResult& r, const std::string& dir, const std::string& backend_arg, const Problem& p,
                  const Tensor& input, const Output& expected, const Judged& j) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  r.repro_dir = dir;
  r.repro_command = fmt::format("poolspec certify --backend {} --layout {} --problem {} --input {}/input.npy",
                                quoted(backend_arg), r.layout, quoted(format_problem(p)), dir);
  (void)write_file_atomically(dir + "/problem.txt", format_problem(p) + "\n");
  (void)write_file_atomically(dir + "/input.npy", encode_npy(input));
  (void)write_file_atomically(dir + "/expected.npy", encode_npy(expected.values));
  if (!j.got.values.values.empty()) (void)write_file_atomically(dir + "/got.npy", encode_npy(j.got.values));
  (void)write_file_atomically(dir + "/command.txt", r.repro_command + "\n");
  (void)write_file_atomically(dir + "/report.txt", fmt::format("{} {} on {} ({}): {}\n{}\n", r.backend, verdict_name(j.verdict),
                                                               r.problem, r.layout, r.case_id, j.detail));
}

class Progress {
 public:
  explicit Progress(size_t total) : total_(total), on_(isatty(STDERR_FILENO) == 1) {}
  void step(const std::string& what) {
    ++done_;
    if (!on_) return;
    const size_t width = 30, filled = total_ ? done_ * width / total_ : width;
    fmt::print(stderr, "\r[{}{}] {}/{} {:<60.60}", std::string(filled, '#'), std::string(width - filled, ' '), done_,
               total_, what);
    if (done_ == total_) fmt::print(stderr, "\n");
  }

 private:
  size_t total_, done_ = 0;
  bool on_;
};

Result<std::pair<int64_t, int64_t>> parse_shard(const std::string& text) {
  if (text.empty()) return std::pair<int64_t, int64_t>{0, 1};
  int64_t i = -1, n = -1;
  char slash = 0;
  if (std::sscanf(text.c_str(), "%ld%c%ld", &i, &slash, &n) != 3 || slash != '/' || n < 1 || i < 0 || i >= n)
    return Error{fmt::format("--shard {}: must be i/n with 0 <= i < n", text)};
  return std::pair<int64_t, int64_t>{i, n};
}

// The rule sets one backend is held to.
std::vector<std::string> rules_for(const poolspec_backend& b, const std::vector<std::string>& wanted) {
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    const std::string r = w == "claimed" ? std::string(b.rules) : w;
    if (std::string(b.rules) == "spec" && w != "claimed") continue;  // "spec" covers every rule set
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  return out;
}

// A waiver: every failure of a backend under a rule set in one matrix cell is a known deviation.
struct Waiver {
  std::string backend, rules, column, reason;
};

Result<std::vector<Waiver>> read_waivers(const std::string& path) {
  std::vector<Waiver> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) return Error{fmt::format("--waivers {}: cannot read it", path)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const size_t bar = line.find('|');
    std::istringstream fields(line.substr(0, bar));
    Waiver w;
    fields >> w.backend >> w.rules;
    std::getline(fields >> std::ws, w.column);
    while (!w.column.empty() && w.column.back() == ' ') w.column.pop_back();
    if (bar == std::string::npos || w.column.empty())
      return Error{fmt::format("--waivers {}:{}: must be 'backend rules column | reason'", path, number)};
    w.reason = line.substr(bar + 1);
    w.reason.erase(0, w.reason.find_first_not_of(' '));
    out.push_back(w);
  }
  return out;
}

const Waiver* waiver_for(const std::vector<Waiver>& waivers, const JobResult& r) {
  for (const Waiver& w : waivers)
    if (w.backend == r.backend && w.rules == r.rules && w.column == r.column) return &w;
  return nullptr;
}

int replay(const CertifyOptions& o, const std::vector<LoadedBackend>& backends) {
  Result<Problem> p = parse_problem(o.problem);
  if (!p) return cli::refuse(fmt::format("--problem: {}", p.error().message));
  if (Status s = validate(*p); !s) return cli::refuse(fmt::format("--problem: {}", s.error().message));
  Tensor input;
  if (!o.input.empty()) {
    Result<Tensor> t = read_npy(o.input);
    if (!t) return cli::refuse(fmt::format("--input {}: {}", o.input, t.error().message));
    if (t->dtype != p->dtype || t->shape != input_shape(*p))
      return cli::refuse(fmt::format("--input {}: {} ({}) where the problem takes {} ({})", o.input, dtype_name(t->dtype),
                                     fmt::join(t->shape, ","), dtype_name(p->dtype), fmt::join(input_shape(*p), ",")));
    input = *t;
  } else {
    Case c;
    c.id = "replay";
    input = make_input(c, *p);
  }
  Result<Output> expected = evaluate(*p, input);
  if (!expected) return cli::refuse(expected.error().message);
  int code = cli::exit_ok;
  for (const LoadedBackend& b : backends)
    for (const std::string& l : o.layouts) {
      const Judged j = Judge(b, std::chrono::milliseconds(o.timeout_ms)).judge(*p, parse_layout(l), input, *expected);
      fmt::print("{} ({}): {}{}\n", b.abi->name, l, verdict_name(j.verdict), j.detail.empty() ? "" : "\n" + j.detail);
      if (is_failure(j.verdict)) code = cli::exit_check_failed;
    }
  return code;
}

}  // namespace

int certify_command(const CertifyOptions& o) {
  for (const std::string& l : o.layouts)
    if (l != "nchw" && l != "nhwc") return cli::refuse(fmt::format("--layout {}: must be nchw or nhwc", l));
  for (const std::string& r : o.rules)
    if (r != "claimed" && !known_rules(r))
      return cli::refuse(fmt::format("--rules {}: must be claimed, spec, xs3 or a framework "
                                     "(ngraph openvino onnx pytorch tensorflow tflite onednn)", r));
  if (o.timeout_ms < 1) return cli::refuse(fmt::format("--timeout-ms {}: must be >= 1", o.timeout_ms));
  Result<std::pair<int64_t, int64_t>> shard = parse_shard(o.shard);
  if (!shard) return cli::refuse(shard.error().message);
  RunInfo info;
  info.suite = o.suite;
  info.shard = o.shard.empty() ? "0/1" : o.shard;
  Result<std::vector<LoadedBackend>> backends = select_backends(o.backends, &info.notes);
  if (!backends) return cli::refuse(backends.error().message);
  for (const LoadedBackend& b : *backends)
    if (!known_rules(b.abi->rules))
      return cli::refuse(fmt::format("backend {}: rules \"{}\" is not a rule set poolspec knows", b.abi->name, b.abi->rules));
  if (o.list) {
    for (const LoadedBackend& b : *backends)
      fmt::print("{:<12} {:<44} rules {:<10} {}\n", b.abi->name, b.abi->version ? b.abi->version : "", b.abi->rules, b.origin);
    for (const std::string& n : info.notes) fmt::print("note: {}\n", n);
    fmt::print("suites: smoke ci full\n");
    return cli::exit_ok;
  }
  if (!o.problem.empty()) return replay(o, *backends);
  Result<std::vector<Waiver>> waivers = read_waivers(o.waivers);
  if (!waivers) return cli::refuse(waivers.error().message);
  Result<std::vector<Case>> suite = make_suite(o.suite);
  if (!suite) return cli::refuse(fmt::format("--suite: {}", suite.error().message));

  // Every job, before running any: the progress bar's total.
  struct Job {
    size_t case_index, backend_index;
    std::string rules;
    RuledProblem problem;
    std::string layout;
  };
  std::vector<Job> jobs;
  for (size_t ci = 0; ci < suite->size(); ++ci) {
    const Case& c = (*suite)[ci];
    if (static_cast<int64_t>(ci) % shard->second != shard->first) continue;
    if (!o.filters.empty() && std::none_of(o.filters.begin(), o.filters.end(),
                                           [&](const std::string& f) { return c.id.find(f) != std::string::npos; }))
      continue;
    for (size_t bi = 0; bi < backends->size(); ++bi)
      for (const std::string& rules : rules_for(*(*backends)[bi].abi, o.rules))
        for (RuledProblem& rp : problems_under(c, rules))
          for (const std::string& layout : o.layouts) jobs.push_back({ci, bi, rules, rp, layout});
  }

  const auto start = Clock::now();
  Progress progress(jobs.size());
  std::vector<JobResult> results;
  std::map<std::string, std::pair<Tensor, Output>> spec_cache;  // per case: problem -> input, expected
  size_t cached_case = SIZE_MAX;
  std::map<std::string, int> bundles_per_backend;
  for (const Job& job : jobs) {
    const Case& c = (*suite)[job.case_index];
    const LoadedBackend& b = (*backends)[job.backend_index];
    const Problem& p = job.problem.problem;
    if (cached_case != job.case_index) {
      spec_cache.clear();
      cached_case = job.case_index;
    }
    const std::string text = format_problem(p);
    auto it = spec_cache.find(text);
    if (it == spec_cache.end()) {
      Tensor input = make_input(c, p);
      Result<Output> expected = evaluate(p, input);
      if (!expected) return cli::refuse(fmt::format("case {}: the spec refuses {}: {}", c.id, text, expected.error().message));
      it = spec_cache.emplace(text, std::make_pair(std::move(input), std::move(*expected))).first;
    }
    const auto& [input, expected] = it->second;
    progress.step(fmt::format("{}@{} {}", b.abi->name, job.rules, c.id));

    JobResult r;
    r.backend = b.abi->name;
    r.version = b.abi->version ? b.abi->version : "";
    r.origin = b.origin;
    r.claimed_rules = b.abi->rules;
    r.rules = job.rules;
    r.label = job.problem.label;
    r.case_id = c.id;
    r.part = c.part;
    r.note = c.note;
    r.problem = text;
    r.layout = job.layout;
    r.column = column_of(p);
    const Judge judge(b, std::chrono::milliseconds(o.timeout_ms));
    const auto t0 = Clock::now();
    const Judged j = judge.judge(p, parse_layout(job.layout), input, expected);
    r.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.verdict = j.verdict;
    r.detail = j.detail;
    r.elements = j.comparison.elements;
    r.mismatches = j.comparison.mismatches;
    r.worst_fraction_of_bound = j.comparison.worst_fraction_of_bound;
    r.first = j.comparison.first;
    if (const Waiver* w = is_failure(j.verdict) ? waiver_for(*waivers, r) : nullptr) {
      r.verdict = Verdict::waived;
      r.detail = fmt::format("waived {} ({}): {}\n{}", verdict_name(j.verdict), w->reason, o.waivers, j.detail);
    } else if (is_failure(j.verdict) && bundles_per_backend[r.backend + "@" + r.rules] < 20) {
      // The first failures of each backend and rule set: a minimal counterexample -- smaller
      // problems of the same rules that fail the same way (a hang is not shrunk: each try would
      // cost the time limit) -- and a reproducer bundle.
      // The smallest failing problem so far, with its input, the spec's output and the verdict.
      Problem least = p;
      Tensor least_input = input;
      Output least_expected = expected;
      Judged least_judged = j;
      int tries = 0;
      bool progressed = o.shrink && j.verdict != Verdict::hang;
      while (progressed && tries < 120) {
        progressed = false;
        for (const Problem& q : smaller(least)) {
          if (++tries > 120) break;
          Case qc = c;
          qc.fixed_input.reset();
          Tensor q_input = make_input(qc, q);
          Result<Output> q_expected = evaluate(q, q_input);
          if (!q_expected) continue;
          Judged qj = judge.judge(q, parse_layout(job.layout), q_input, *q_expected);
          if (qj.verdict == j.verdict) {
            least = q;
            least_input = std::move(q_input);
            least_expected = *std::move(q_expected);
            least_judged = std::move(qj);
            progressed = true;
            break;
          }
        }
      }
      r.minimal_problem = format_problem(least);
      const std::string backend_arg = b.origin == "built-in" ? std::string(b.abi->name) : b.origin;
      const int n = bundles_per_backend[r.backend + "@" + r.rules]++;
      write_bundle(r, fmt::format("{}/repro/{}@{}/{:03}-{}-{}", o.out_dir, sanitized(r.backend), r.rules, n,
                                  sanitized(c.id), r.layout),
                   backend_arg, least, least_input, least_expected, least_judged);
    }
    results.push_back(std::move(r));
  }
  info.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  info.command = "poolspec certify";

  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  const std::string matrix = matrix_text(results);
  const std::string json = json_report(results, info);
  for (const auto& [file, text] : {std::pair<std::string, std::string>{"matrix.txt", matrix},
                                   {"report.json", json},
                                   {"junit.xml", junit_report(results, info)}})
    if (Status s = write_file_atomically(o.out_dir + "/" + file, text); !s)
      return cli::refuse(fmt::format("--out {}: {}", o.out_dir, s.error().message));
  if (o.json) {
    fmt::print("{}\n", json);
  } else {
    fmt::print("poolspec certify: suite {}, shard {}, {} runs in {:.1f} s\n\n{}", o.suite, info.shard, results.size(),
               info.seconds, matrix);
    for (const std::string& n : info.notes) fmt::print("note: {}\n", n);
    size_t shown = 0;
    for (const JobResult& r : results) {
      if (!is_failure(r.verdict) || shown++ >= 10) continue;
      fmt::print("\n{} {}@{} {} ({}): {}\n  {}\n", verdict_name(r.verdict), r.backend, r.rules, r.case_id, r.layout, r.problem,
                 r.detail.substr(0, r.detail.find('\n', r.detail.find('\n') + 1)));
      if (!r.minimal_problem.empty() && r.minimal_problem != r.problem) fmt::print("  minimal: {}\n", r.minimal_problem);
      if (!r.repro_command.empty()) fmt::print("  replay:  {}\n", r.repro_command);
    }
    fmt::print("\nreports: {0}/matrix.txt {0}/report.json {0}/junit.xml\n", o.out_dir);
  }
  for (const JobResult& r : results)
    if (is_failure(r.verdict)) return cli::exit_check_failed;
  return cli::exit_ok;
}

}  // namespace poolspec::certify
