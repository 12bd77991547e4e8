#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "certify.hpp"
#include "exit_status.hpp"
#include "poolspec/files.hpp"
#include "poolspec/npy.hpp"
#include "poolspec/problem.hpp"

namespace poolspec::certify {

namespace {

std::string row_of(const JobResult& r) { return fmt::format("{}@{}", r.backend, r.rules); }

struct Tally {
  std::map<Verdict, int64_t> count;
  int64_t judged() const {  // every run but the refused ones
    int64_t n = 0;
    for (const auto& [v, k] : count) n += v == Verdict::unsupported ? 0 : k;
    return n;
  }
  int64_t of(Verdict v) const {
    auto it = count.find(v);
    return it == count.end() ? 0 : it->second;
  }
};

std::string xml_escaped(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 admits no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
          out += '?';
        else
          out += ch;
    }
  }
  return out;
}

// The matrix's total columns.
std::string short_name(Verdict v) {
  switch (v) {
    case Verdict::unsupported: return "UNSUP";
    case Verdict::out_of_bounds: return "OOB";
    case Verdict::unwritten: return "UNWR";
    case Verdict::unstable: return "UNSTAB";
    case Verdict::load_error: return "LOAD";
    default: return std::string(verdict_name(v));
  }
}

nlohmann::ordered_json number_or_text(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v)
                          : nlohmann::ordered_json(fmt::format("{}", v));
}

double number_from(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  return std::stod(j.get<std::string>());
}

}  // namespace

std::string matrix_text(const std::vector<JobResult>& results) {
  std::vector<std::string> rows, columns;
  std::map<std::pair<std::string, std::string>, Tally> cells;
  std::map<std::string, Tally> totals;
  for (const JobResult& r : results) {
    const std::string row = row_of(r);
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    if (r.verdict != Verdict::load_error) {
      if (std::find(columns.begin(), columns.end(), r.column) == columns.end())
        columns.push_back(r.column);
      ++cells[{row, r.column}].count[r.verdict];
    }
    ++totals[row].count[r.verdict];
  }
  std::sort(columns.begin(), columns.end());
  // Every table fits 100 columns: a long row name (a library's path) keeps its end, the columns
  // are split into as many tables as it takes, and a cell whose every run passed is just "100%"
  // (report.json holds every count).
  constexpr size_t width = 100, longest_label = 40;
  std::map<std::string, std::string> label;
  size_t row_width = std::string_view("backend@rules").size();
  for (const std::string& r : rows) {
    label[r] = r.size() <= longest_label ? r : "..." + r.substr(r.size() - (longest_label - 3));
    row_width = std::max(row_width, label[r].size());
  }
  std::string out = fmt::format("{:<{}} |", "backend@rules", row_width);
  for (Verdict v : all_verdicts) out += fmt::format(" {}", short_name(v));
  out += "\n";
  for (const std::string& row : rows) {
    out += fmt::format("{:<{}} |", label[row], row_width);
    for (Verdict v : all_verdicts)
      out += fmt::format(" {:>{}}", totals[row].of(v), short_name(v).size());
    out += "\n";
  }
  std::map<std::pair<std::string, std::string>, std::string> text;
  std::vector<size_t> column_width;
  for (const std::string& c : columns) {
    size_t w = c.size();
    for (const std::string& row : rows) {
      std::string cell = "-";
      if (auto it = cells.find({row, c}); it != cells.end()) {
        const Tally& t = it->second;
        const bool waived = t.of(Verdict::waived) > 0;
        if (t.judged() == 0)
          cell = "unsupported";
        else if (t.of(Verdict::pass) == t.judged() && !waived)
          cell = "100%";
        else
          // Rounded down: a cell with a failure never reads 100% (4040/4054 is 99%).
          cell = fmt::format("{}% {}/{}{}", 100 * t.of(Verdict::pass) / t.judged(),
                             t.of(Verdict::pass), t.judged(), waived ? "*" : "");
      }
      w = std::max(w, cell.size());
      text[{row, c}] = cell;
    }
    column_width.push_back(w);
  }
  for (size_t first = 0; first < columns.size();) {
    size_t last = first, used = row_width + 3 + column_width[first];
    while (last + 1 < columns.size() && used + 3 + column_width[last + 1] <= width)
      used += 3 + column_width[++last];
    out += fmt::format("\n{:<{}}", "backend@rules", row_width);
    for (size_t c = first; c <= last; ++c)
      out += fmt::format(" | {:>{}}", columns[c], column_width[c]);
    out += "\n";
    for (const std::string& row : rows) {
      out += fmt::format("{:<{}}", label[row], row_width);
      for (size_t c = first; c <= last; ++c)
        out += fmt::format(" | {:>{}}", text[{row, columns[c]}], column_width[c]);
      out += "\n";
    }
    first = last + 1;
  }
  out +=
      "\n(the first table: runs by status. The others, by kind of problem: passed / run,\n"
      " refusals not counted, waived failures counted as run; \"100%\": every run passed;\n"
      " \"unsupported\": every problem of the kind refused; * a waiver applies. UNSTAB: two\n"
      " calls of one problem disagreed; LOAD: the library or its declaration refused before any\n"
      " call. Every count is in report.json)\n";
  return out;
}

namespace {

// One run as the report's "runs" array holds it, and as runs.jsonl streams it.
nlohmann::ordered_json run_json(const JobResult& r) {
  nlohmann::ordered_json run{{"backend", r.backend},
                             {"origin", r.origin},
                             {"rules", r.rules},
                             {"label", r.label},
                             {"case", r.case_id},
                             {"part", r.part},
                             {"problem", r.problem},
                             {"layout", r.layout},
                             {"column", r.column},
                             {"rule_verdict", r.rule_verdict},
                             {"status", verdict_name(r.verdict)},
                             {"ms", r.milliseconds}};
  if (!r.detail.empty()) run["detail"] = r.detail;
  if (!r.note.empty()) run["note"] = r.note;
  if (r.elements) {
    run["elements"] = r.elements;
    run["mismatches"] = r.mismatches;
    run["worst_fraction_of_bound"] = r.worst_fraction_of_bound;
  }
  if (!r.first.empty()) {
    nlohmann::ordered_json first = nlohmann::ordered_json::array();
    for (const ElementMismatch& m : r.first) {
      nlohmann::ordered_json e{{"coordinate", m.coordinate},
                               {"expected", number_or_text(m.expected)},
                               {"got", number_or_text(m.got)},
                               {"error_ulps", number_or_text(m.error_ulps)},
                               {"allowed", number_or_text(m.allowed)}};
      if (m.expected_index >= 0 || m.got_index >= 0) {
        e["expected_index"] = m.expected_index;
        e["got_index"] = m.got_index;
      }
      first.push_back(e);
    }
    run["first_mismatches"] = first;
  }
  if (!r.minimal_problem.empty()) run["minimal_problem"] = r.minimal_problem;
  if (!r.minimal_within.empty()) run["minimal_within"] = r.minimal_within;
  if (!r.repro_dir.empty()) {
    run["repro_dir"] = r.repro_dir;
    run["repro_command"] = r.repro_command;
    run["reproduces"] = r.reproduces;
  }
  return run;
}

}  // namespace

std::string run_line(const JobResult& r) {
  return run_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string json_report(const std::vector<JobResult>& results, const RunInfo& info, int indent) {
  nlohmann::ordered_json j;
  j["schema"] = json_schema("certify-report");
  j["tool"] = "poolspec certify";
  j["version"] = POOLSPEC_VERSION;
  j["suite"] = info.suite;
  j["shard"] = info.shard;
  j["seconds"] = info.seconds;
  j["notes"] = info.notes;
  j["fingerprint"] = info.fingerprint;
  if (info.stopped_by != 0) j["stopped_by_signal"] = info.stopped_by;
  j["filters"] = info.filters;
  j["cases"] = info.cases;
  nlohmann::ordered_json logs = nlohmann::ordered_json::object();
  for (const auto& [library, log] : info.logs) logs[library] = log;
  j["logs"] = logs;
  std::set<std::string> seen;
  nlohmann::ordered_json backends = nlohmann::ordered_json::array(),
                         runs = nlohmann::ordered_json::array();
  const auto list = [&](const BackendEntry& b) {
    if (seen.insert(b.name + "|" + b.origin).second)
      backends.push_back(
          {{"name", b.name}, {"version", b.version}, {"origin", b.origin}, {"rules", b.rules}});
  };
  for (const BackendEntry& b : info.backends) list(b);  // those asked nothing too
  std::map<std::string, Tally> totals;
  for (const JobResult& r : results) {
    list({r.backend, r.version, r.origin, r.claimed_rules});
    ++totals[row_of(r)].count[r.verdict];
    runs.push_back(run_json(r));
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& [row, t] : totals) {
    nlohmann::ordered_json s;
    for (Verdict v : all_verdicts) s[std::string(verdict_name(v))] = t.of(v);
    summary[row] = s;
  }
  j["backends"] = backends;
  j["summary"] = summary;
  j["runs"] = runs;
  // Every string in it is valid UTF-8 already (backend text is made printable where it enters);
  // the replacement only keeps a slip from costing the whole report.
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {

// One run of a report or of runs.jsonl; the backend's version and claimed rules come from
// `described` (name|origin -> version, rules) when the caller has them.
Result<JobResult> run_from_json(
    const nlohmann::json& run,
    const std::map<std::string, std::pair<std::string, std::string>>& described) {
  JobResult r;
  r.backend = run.at("backend").get<std::string>();
  r.origin = run.at("origin").get<std::string>();
  if (auto it = described.find(r.backend + "|" + r.origin); it != described.end())
    std::tie(r.version, r.claimed_rules) = it->second;
  r.rules = run.at("rules").get<std::string>();
  r.label = run.at("label").get<std::string>();
  r.case_id = run.at("case").get<std::string>();
  r.part = run.at("part").get<std::string>();
  r.problem = run.at("problem").get<std::string>();
  r.layout = run.at("layout").get<std::string>();
  r.column = run.at("column").get<std::string>();
  r.rule_verdict = run.value("rule_verdict", "defined");
  const std::optional<Verdict> v = verdict_named(run.at("status").get<std::string>());
  if (!v)
    return Error{fmt::format("a run's status \"{}\" is not one poolspec gives",
                             run.at("status").get<std::string>())};
  r.verdict = *v;
  r.milliseconds = run.at("ms").get<double>();
  r.detail = run.value("detail", "");
  r.note = run.value("note", "");
  r.elements = run.value("elements", int64_t{0});
  r.mismatches = run.value("mismatches", int64_t{0});
  r.worst_fraction_of_bound = run.value("worst_fraction_of_bound", 0.0);
  if (run.contains("first_mismatches"))
    for (const auto& e : run.at("first_mismatches")) {
      ElementMismatch m;
      m.coordinate = e.at("coordinate").get<std::vector<int64_t>>();
      m.expected = number_from(e.at("expected"));
      m.got = number_from(e.at("got"));
      m.error_ulps = number_from(e.at("error_ulps"));
      m.allowed = number_from(e.at("allowed"));
      m.expected_index = e.value("expected_index", int64_t{-1});
      m.got_index = e.value("got_index", int64_t{-1});
      r.first.push_back(m);
    }
  r.minimal_problem = run.value("minimal_problem", "");
  r.minimal_within = run.value("minimal_within", "");
  r.repro_dir = run.value("repro_dir", "");
  r.repro_command = run.value("repro_command", "");
  r.reproduces = run.value("reproduces", "");
  return r;
}

}  // namespace

Result<std::vector<JobResult>> results_from_json(const std::string& json_text, RunInfo* info) {
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    if (j.value("tool", "") != "poolspec certify") return Error{"not a poolspec certify report"};
    info->suite = j.at("suite").get<std::string>();
    info->shard = j.at("shard").get<std::string>();
    info->seconds = j.at("seconds").get<double>();
    info->notes = j.at("notes").get<std::vector<std::string>>();
    info->fingerprint = j.at("fingerprint").get<std::string>();
    info->stopped_by = j.value("stopped_by_signal", 0);
    info->filters = j.at("filters").get<std::vector<std::string>>();
    info->cases = j.at("cases").get<std::vector<std::string>>();
    for (const auto& [library, log] : j.at("logs").items())
      info->logs.emplace_back(library, log.get<std::string>());
    std::map<std::string, std::pair<std::string, std::string>>
        described;  // name|origin -> version, rules
    for (const auto& b : j.at("backends")) {
      BackendEntry e{b.at("name").get<std::string>(), b.at("version").get<std::string>(),
                     b.at("origin").get<std::string>(), b.at("rules").get<std::string>()};
      described[e.name + "|" + e.origin] = {e.version, e.rules};
      info->backends.push_back(std::move(e));
    }
    std::vector<JobResult> out;
    for (const auto& run : j.at("runs")) {
      Result<JobResult> r = run_from_json(run, described);
      if (!r) return r.error();
      out.push_back(std::move(*r));
    }
    return out;
  } catch (const std::exception& e) {
    return Error{fmt::format("not a readable report: {}", e.what())};
  }
}

std::string junit_report(const std::vector<JobResult>& results, const RunInfo& info) {
  std::vector<std::string> rows;
  for (const JobResult& r : results)
    if (std::find(rows.begin(), rows.end(), row_of(r)) == rows.end()) rows.push_back(row_of(r));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"poolspec certify {}\" time=\"{:.3f}\">\n",
                     xml_escaped(info.suite), info.seconds);
  for (const std::string& row : rows) {
    Tally t;
    double seconds = 0;
    for (const JobResult& r : results)
      if (row_of(r) == row) {
        ++t.count[r.verdict];
        seconds += r.milliseconds / 1000;
      }
    const int64_t errors = t.of(Verdict::crash) + t.of(Verdict::hang) +
                           t.of(Verdict::out_of_bounds) + t.of(Verdict::unwritten) +
                           t.of(Verdict::unstable) + t.of(Verdict::load_error);
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"{:.3f}\">\n",
        xml_escaped(row), t.judged() + t.of(Verdict::unsupported), t.of(Verdict::fail), errors,
        t.of(Verdict::unsupported), seconds);
    for (const JobResult& r : results) {
      if (row_of(r) != row) continue;
      out += fmt::format("    <testcase classname=\"{}.{}\" name=\"{} [{} {}] {}\" time=\"{:.4f}\"",
                         xml_escaped(row), xml_escaped(r.part), xml_escaped(r.case_id),
                         xml_escaped(r.label), xml_escaped(r.layout), xml_escaped(r.problem),
                         r.milliseconds / 1000);
      if (r.verdict == Verdict::pass) {
        out += "/>\n";
        continue;
      }
      std::string body = r.detail;
      if (!r.minimal_problem.empty())
        body += "\nminimal (within " + r.minimal_within + "): " + r.minimal_problem;
      if (!r.repro_command.empty()) body += "\nreplay: " + r.repro_command;
      if (r.verdict == Verdict::waived) {  // a known deviation: passes CI, says why
        out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                           xml_escaped(r.detail));
        continue;
      }
      const char* element = r.verdict == Verdict::unsupported ? "skipped"
                            : r.verdict == Verdict::fail      ? "failure"
                                                              : "error";
      out +=
          fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", element,
                      verdict_name(r.verdict), xml_escaped(r.detail.substr(0, r.detail.find('\n'))),
                      xml_escaped(body), element);
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

Status write_reports(const std::string& dir,
                     const std::vector<std::pair<std::string, std::string>>& files) {
  // A set: every report written whole, then all renamed into place; a failure leaves the earlier
  // set as it was.
  std::vector<std::pair<std::string, std::string_view>> set;
  for (const auto& [file, text] : files) set.emplace_back(dir + "/" + file, text);
  return write_files_atomically(set);
}

Result<JobResult> run_from_line(const std::string& line) {
  try {
    return run_from_json(nlohmann::json::parse(line), {});
  } catch (const std::exception& e) {
    return Error{fmt::format("not a run line: {}", e.what())};
  }
}

int exit_code_of(const std::vector<JobResult>& results, bool whole,
                 const std::vector<BackendEntry>& backends) {
  for (const JobResult& r : results)
    if (is_failure(r.verdict)) return exit_check_failed;
  if (!whole) return exit_ok;
  // Refusing every problem, or being held to rules that ask nothing, is not a pass: of the run,
  // nor of any one backend in it, asked something or not (in the order the report lists them).
  std::vector<std::pair<std::string, bool>> computed;  // "<backend> (<origin>)", any computed
  const auto entry = [&](const std::string& name, const std::string& origin) {
    const std::string who = fmt::format("{} ({})", name, origin);
    auto it = std::find_if(computed.begin(), computed.end(),
                           [&](const auto& c) { return c.first == who; });
    return it != computed.end() ? it : computed.insert(computed.end(), {who, false});
  };
  for (const BackendEntry& b : backends) entry(b.name, b.origin);
  for (const JobResult& r : results) {
    auto it = entry(r.backend, r.origin);
    it->second = it->second || (r.verdict != Verdict::unsupported && r.rule_verdict != "invalid");
  }
  std::vector<std::string> idle;
  for (const auto& [who, any] : computed)
    if (!any) idle.push_back(who);
  if (idle.empty() && !computed.empty()) return exit_ok;
  std::fflush(stdout);  // after the report
  if (idle.size() == computed.size())
    fmt::print(stderr,
               "poolspec certify: nothing was certified: every problem was refused by the "
               "backends, or none was asked of them under the rules given\n");
  else
    fmt::print(stderr,
               "poolspec certify: nothing was certified of {}: every problem was refused, or none "
               "was asked under the rules given\n",
               fmt::join(idle, ", "));
  return exit_check_failed;
}

}  // namespace poolspec::certify
