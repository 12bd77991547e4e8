// `poolspec certify merge DIR...`: shards (`--shard i/n`, run on other machines) joined into one
// run's reports, once it is shown they are the n shards of one run, each exactly once.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "certify.hpp"
#include "exit_status.hpp"
#include "poolspec/npy.hpp"
#include "suite.hpp"

namespace poolspec::certify {

namespace {

struct Shard {
  std::string dir;
  RunInfo info;
  std::vector<JobResult> results;
  int64_t index = 0, count = 0;
};

Result<Shard> read_shard(const std::string& dir) {
  Shard s;
  s.dir = dir;
  const std::string path = dir + "/report.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Error{fmt::format("{}: no report.json in it", dir)};
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<JobResult>> results = results_from_json(text.str(), &s.info);
  if (!results) return Error{fmt::format("{}: {}", path, results.error().message)};
  s.results = std::move(*results);
  // Its runs are the ones its summary counts, each once: a report whose runs were cut short or
  // repeated is not the shard's.
  std::set<std::string> keys;
  for (const JobResult& r : s.results)
    if (!keys.insert(fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", r.origin, r.backend, r.rules, r.case_id,
                                 r.part, r.problem, r.layout, r.column))
             .second)
      return Error{fmt::format("{}: the run of {}@{} on {} ({}, {}) is given twice", path,
                               r.backend, r.rules, r.case_id, r.layout, r.column)};
  int64_t counted = 0;
  try {
    const nlohmann::json report = nlohmann::json::parse(text.str());
    for (const auto& tally : report.at("summary"))
      for (const auto& n : tally) counted += n.get<int64_t>();
  } catch (const std::exception& e) {
    return Error{fmt::format("{}: its summary cannot be read: {}", path, e.what())};
  }
  if (counted != static_cast<int64_t>(s.results.size()))
    return Error{fmt::format("{}: its summary counts {} runs, its runs list holds {}", path,
                             counted, s.results.size())};
  char slash = 0, extra = 0;
  if (std::sscanf(s.info.shard.c_str(), "%ld%c%ld%c", &s.index, &slash, &s.count, &extra) != 3 ||
      slash != '/' || s.count < 1 || s.index < 0 || s.index >= s.count)
    return Error{fmt::format("{}: shard \"{}\" is not i/n", path, s.info.shard)};
  return s;
}

}  // namespace

int merge_command(const std::vector<std::string>& dirs, const std::string& out_dir, bool json) {
  if (out_dir.empty()) return refuse("--out '': must name a folder");
  if (dirs.empty()) return refuse("certify merge: give the shards' output folders");
  std::vector<Shard> shards;
  for (const std::string& d : dirs) {
    Result<Shard> s = read_shard(d);
    if (!s) return refuse(s.error().message);
    shards.push_back(std::move(*s));
  }
  for (const Shard& s : shards)
    if (s.info.stopped_by != 0)
      return refuse(
          fmt::format("{}: shard {} was stopped by signal {} before its end; run it again", s.dir,
                      s.info.shard, s.info.stopped_by));
  const Shard& first = shards.front();
  for (const Shard& s : shards)
    if (s.info.fingerprint != first.info.fingerprint)
      return refuse(fmt::format(
          "{} and {}: not shards of one run (suite, backends, rules, layouts, filters or "
          "limits differ):\n  {}\n  {}",
          first.dir, s.dir, first.info.fingerprint, s.info.fingerprint));
  std::vector<int> seen(static_cast<size_t>(first.count), 0);
  for (const Shard& s : shards) {
    if (s.count != first.count)
      return refuse(fmt::format("{}: shard {} of a run split {} ways, where {} is of {}", s.dir,
                                s.info.shard, s.count, first.dir, first.count));
    ++seen[static_cast<size_t>(s.index)];
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1)
      return refuse(
          fmt::format("shard {}/{}: given {} times; the {} shards must each be given exactly once",
                      i, first.count, seen[i], first.count));
  // Each shard ran exactly its slice of the suite's cases: together, every case once.
  Result<std::vector<Case>> suite = make_suite(first.info.suite);
  if (!suite) return refuse(fmt::format("suite {}: {}", first.info.suite, suite.error().message));
  std::vector<std::string> cases;
  for (const Shard& s : shards) {
    std::vector<std::string> slice;
    for (size_t ci = 0; ci < suite->size(); ++ci) {
      const std::string& id = (*suite)[ci].id;
      const bool filtered =
          first.info.filters.empty() ||
          std::any_of(first.info.filters.begin(), first.info.filters.end(),
                      [&](const std::string& f) { return id.find(f) != std::string::npos; });
      if (static_cast<int64_t>(ci) % s.count == s.index && filtered) slice.push_back(id);
    }
    if (slice != s.info.cases)
      return refuse(fmt::format("{}: shard {} ran {} cases where its slice of suite {} has {}",
                                s.dir, s.info.shard, s.info.cases.size(), first.info.suite,
                                slice.size()));
    std::set<std::string> ran;
    for (const JobResult& r : s.results)
      if (r.verdict != Verdict::load_error) ran.insert(r.case_id);
    for (const std::string& id : ran)
      if (std::find(slice.begin(), slice.end(), id) == slice.end())
        return refuse(fmt::format("{}: a run of case {}, outside its slice", s.dir, id));
  }
  RunInfo info;
  info.suite = first.info.suite;
  info.shard = fmt::format("{} shards merged", first.count);
  info.fingerprint = first.info.fingerprint;
  info.filters = first.info.filters;
  std::vector<JobResult> results;
  std::set<std::string> load_errors;
  for (const Case& c : *suite)
    for (const Shard& s : shards)
      if (std::find(s.info.cases.begin(), s.info.cases.end(), c.id) != s.info.cases.end()) {
        info.cases.push_back(c.id);
        for (const JobResult& r : s.results)
          if (r.case_id == c.id && r.verdict != Verdict::load_error) results.push_back(r);
      }
  for (const Shard& s : shards) {
    info.seconds += s.info.seconds;
    for (const BackendEntry& b : s.info.backends)  // every shard loaded the same backends
      if (std::find(info.backends.begin(), info.backends.end(), b) == info.backends.end())
        info.backends.push_back(b);
    for (const std::string& n : s.info.notes)
      if (std::find(info.notes.begin(), info.notes.end(), n) == info.notes.end())
        info.notes.push_back(n);
    info.logs.insert(info.logs.end(), s.info.logs.begin(), s.info.logs.end());
    for (const JobResult& r : s.results)  // every shard loaded every library: one row each
      if (r.verdict == Verdict::load_error && load_errors.insert(r.origin + "|" + r.backend).second)
        results.push_back(r);
  }
  info.command = "poolspec certify merge";
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return refuse(fmt::format("--out {}: cannot make the folder: {}", out_dir, ec.message()));
  const std::string matrix = matrix_text(results), report = json_report(results, info);
  if (Status s = write_reports(out_dir, {{"matrix.txt", matrix},
                                         {"report.json", report},
                                         {"junit.xml", junit_report(results, info)}});
      !s)
    return refuse(fmt::format("--out {}: {}", out_dir, s.error().message));
  if (json)
    fmt::print("{}\n", json_report(results, info, -1));
  else
    fmt::print(
        "poolspec certify merge: suite {}, {} shards, {} runs\n"
        "\n"
        "{}\n"
        "reports: {}/matrix.txt {}/report.json {}/junit.xml\n",
        info.suite, first.count, results.size(), matrix, out_dir, out_dir, out_dir);
  return exit_code_of(results, true, info.backends);
}

}  // namespace poolspec::certify
