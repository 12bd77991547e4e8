#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "certify.hpp"
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
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') out += '?';
        else out += ch;
    }
  }
  return out;
}

}  // namespace

std::string matrix_text(const std::vector<JobResult>& results) {
  std::vector<std::string> rows, columns;
  std::map<std::pair<std::string, std::string>, Tally> cells;
  std::map<std::string, Tally> totals;
  for (const JobResult& r : results) {
    const std::string row = row_of(r);
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    if (std::find(columns.begin(), columns.end(), r.column) == columns.end()) columns.push_back(r.column);
    ++cells[{row, r.column}].count[r.verdict];
    ++totals[row].count[r.verdict];
  }
  std::sort(columns.begin(), columns.end());
  size_t row_width = 8;
  for (const std::string& r : rows) row_width = std::max(row_width, r.size());
  std::string out = fmt::format("{:<{}}", "backend@rules", row_width);
  for (const std::string& c : columns) out += fmt::format(" | {:>14}", c);
  out += " | PASS FAIL UNSUP CRASH HANG OOB UNWR WAIVED\n";
  for (const std::string& row : rows) {
    out += fmt::format("{:<{}}", row, row_width);
    for (const std::string& c : columns) {
      auto it = cells.find({row, c});
      std::string cell = "-";
      if (it != cells.end()) {
        const Tally& t = it->second;
        const char* mark = t.of(Verdict::waived) > 0 ? "*" : "";
        cell = t.judged() == 0 ? "unsupported"
                               : fmt::format("{:.0f}% {}/{}", 100.0 * static_cast<double>(t.of(Verdict::pass)) / static_cast<double>(t.judged()),
                                             t.of(Verdict::pass), t.judged()) + mark;
      }
      out += fmt::format(" | {:>14}", cell);
    }
    const Tally& t = totals[row];
    out += fmt::format(" | {:>4} {:>4} {:>5} {:>5} {:>4} {:>3} {:>4} {:>6}\n", t.of(Verdict::pass), t.of(Verdict::fail),
                       t.of(Verdict::unsupported), t.of(Verdict::crash), t.of(Verdict::hang), t.of(Verdict::out_of_bounds),
                       t.of(Verdict::unwritten), t.of(Verdict::waived));
  }
  out += "(a cell: passed / run, refusals not counted, waived failures counted as run; \"unsupported\": every\n"
         " problem of the cell refused; a cell with a waiver is marked *)\n";
  return out;
}

std::string json_report(const std::vector<JobResult>& results, const RunInfo& info) {
  nlohmann::ordered_json j;
  j["tool"] = "poolspec certify";
  j["version"] = POOLSPEC_VERSION;
  j["suite"] = info.suite;
  j["shard"] = info.shard;
  j["seconds"] = info.seconds;
  j["notes"] = info.notes;
  std::set<std::string> seen;
  nlohmann::ordered_json backends = nlohmann::ordered_json::array(), runs = nlohmann::ordered_json::array();
  std::map<std::string, Tally> totals;
  for (const JobResult& r : results) {
    if (seen.insert(r.backend + "|" + r.origin).second)
      backends.push_back({{"name", r.backend}, {"version", r.version}, {"origin", r.origin}, {"rules", r.claimed_rules}});
    ++totals[row_of(r)].count[r.verdict];
    nlohmann::ordered_json run{{"backend", r.backend}, {"rules", r.rules},     {"label", r.label},
                               {"case", r.case_id},    {"part", r.part},       {"problem", r.problem},
                               {"layout", r.layout},   {"column", r.column},   {"status", verdict_name(r.verdict)},
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
                                 {"expected", std::isfinite(m.expected) ? nlohmann::ordered_json(m.expected) : nlohmann::ordered_json(fmt::format("{}", m.expected))},
                                 {"got", std::isfinite(m.got) ? nlohmann::ordered_json(m.got) : nlohmann::ordered_json(fmt::format("{}", m.got))},
                                 {"error_ulps", std::isfinite(m.error_ulps) ? nlohmann::ordered_json(m.error_ulps) : nlohmann::ordered_json("inf")},
                                 {"allowed", m.allowed}};
        if (m.expected_index >= 0 || m.got_index >= 0) {
          e["expected_index"] = m.expected_index;
          e["got_index"] = m.got_index;
        }
        first.push_back(e);
      }
      run["first_mismatches"] = first;
    }
    if (!r.minimal_problem.empty()) run["minimal_problem"] = r.minimal_problem;
    if (!r.repro_dir.empty()) {
      run["repro_dir"] = r.repro_dir;
      run["repro_command"] = r.repro_command;
    }
    runs.push_back(run);
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& [row, t] : totals) {
    nlohmann::ordered_json s;
    for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::unsupported, Verdict::crash, Verdict::hang,
                      Verdict::out_of_bounds, Verdict::unwritten, Verdict::waived})
      s[std::string(verdict_name(v))] = t.of(v);
    summary[row] = s;
  }
  j["backends"] = backends;
  j["summary"] = summary;
  j["runs"] = runs;
  return j.dump(1);
}

std::string junit_report(const std::vector<JobResult>& results, const RunInfo& info) {
  std::vector<std::string> rows;
  for (const JobResult& r : results)
    if (std::find(rows.begin(), rows.end(), row_of(r)) == rows.end()) rows.push_back(row_of(r));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"poolspec certify {}\" time=\"{:.3f}\">\n", xml_escaped(info.suite), info.seconds);
  for (const std::string& row : rows) {
    Tally t;
    double seconds = 0;
    for (const JobResult& r : results)
      if (row_of(r) == row) {
        ++t.count[r.verdict];
        seconds += r.milliseconds / 1000;
      }
    const int64_t errors = t.of(Verdict::crash) + t.of(Verdict::hang) + t.of(Verdict::out_of_bounds) + t.of(Verdict::unwritten);
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       xml_escaped(row), t.judged() + t.of(Verdict::unsupported), t.of(Verdict::fail), errors,
                       t.of(Verdict::unsupported), seconds);
    for (const JobResult& r : results) {
      if (row_of(r) != row) continue;
      out += fmt::format("    <testcase classname=\"{}.{}\" name=\"{} [{} {}] {}\" time=\"{:.4f}\"", xml_escaped(row),
                         xml_escaped(r.part), xml_escaped(r.case_id), xml_escaped(r.label), xml_escaped(r.layout),
                         xml_escaped(r.problem), r.milliseconds / 1000);
      if (r.verdict == Verdict::pass) {
        out += "/>\n";
        continue;
      }
      std::string body = r.detail;
      if (!r.minimal_problem.empty()) body += "\nminimal: " + r.minimal_problem;
      if (!r.repro_command.empty()) body += "\nreplay: " + r.repro_command;
      if (r.verdict == Verdict::waived) {  // a known deviation: passes CI, says why
        out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escaped(r.detail));
        continue;
      }
      const char* element = r.verdict == Verdict::unsupported ? "skipped" : r.verdict == Verdict::fail ? "failure" : "error";
      out += fmt::format(">\n      <{} type=\"{}\" message=\"{}\">{}</{}>\n    </testcase>\n", element, verdict_name(r.verdict),
                         xml_escaped(r.detail.substr(0, r.detail.find('\n'))), xml_escaped(body), element);
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace poolspec::certify
