#include "waivers.hpp"

#include <fnmatch.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace poolspec::certify {

namespace {

// "STATUS LAYOUT PATTERN": a waiver's scope (waivers.hpp), as a Waiver with only those set.
Result<Waiver> read_scope(const std::string& text, const std::string& where) {
  std::istringstream fields(text);
  std::string status, layout, problems, rest;
  fields >> status >> layout >> problems >> rest;
  Waiver w;
  const std::optional<Verdict> verdict = verdict_named(status);
  // A load error belongs to no cell (nothing ran).
  if (!verdict || !is_failure(*verdict) || *verdict == Verdict::load_error)
    return Error{
        fmt::format("{}: when '{}': the status is one a run fails with (FAIL, CRASH, "
                    "HANG, OUT-OF-BOUNDS, UNWRITTEN, UNSTABLE)",
                    where, status)};
  if (layout != "nchw" && layout != "nhwc" && layout != "*")
    return Error{
        fmt::format("{}: when {} '{}': the layout is nchw, nhwc or *", where, status, layout)};
  if (problems.empty() || !rest.empty())
    return Error{
        fmt::format("{}: when '{}': a scope is STATUS LAYOUT PATTERN (the pattern a glob "
                    "over the problem string, without spaces)",
                    where, text)};
  w.status = *verdict;
  w.layout = layout;
  w.problems = problems;
  return w;
}

}  // namespace

Result<std::vector<Waiver>> read_waivers(const std::string& path) {
  std::vector<Waiver> out;
  if (path.empty()) return out;
  // A regular file of at most a mebibyte (the shipped one is a few kilobytes): a folder, a device
  // or an endless stream is refused before it is read.
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error || !std::filesystem::is_regular_file(status))
    return Error{fmt::format("--waivers {}: not a regular file", path)};
  constexpr uintmax_t largest = uintmax_t{1} << 20;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error || size > largest)
    return Error{
        fmt::format("--waivers {}: {} bytes; a waivers file has at most {}", path, size, largest)};
  std::ifstream in(path);
  if (!in) return Error{fmt::format("--waivers {}: cannot read it", path)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const std::string where = fmt::format("--waivers {}:{}", path, number);
    const size_t bar = line.find('|');
    if (bar == std::string::npos)
      return Error{
          fmt::format("{}: must be 'backend rules column [when STATUS LAYOUT PATTERN] | "
                      "reason'",
                      where)};
    std::string cell = line.substr(0, bar);
    Waiver w;
    if (const size_t when = cell.find(" when "); when != std::string::npos) {
      Result<Waiver> scoped = read_scope(cell.substr(when + 6), where);
      if (!scoped) return scoped.error();
      w = *scoped;
      cell.resize(when);
    }
    std::istringstream fields(cell);
    fields >> w.backend >> w.rules;
    std::getline(fields >> std::ws, w.column);
    while (!w.column.empty() && w.column.back() == ' ') w.column.pop_back();
    if (w.column.empty())
      return Error{
          fmt::format("{}: must be 'backend rules column [when STATUS LAYOUT PATTERN] | "
                      "reason'",
                      where)};
    w.reason = line.substr(bar + 1);
    w.reason.erase(0, w.reason.find_first_not_of(' '));
    out.push_back(w);
  }
  if (in.bad()) return Error{fmt::format("--waivers {}: read error", path)};
  return out;
}

const Waiver* waiver_for(const std::vector<Waiver>& waivers, const JobResult& r) {
  for (const Waiver& w : waivers)
    if (w.backend == r.backend && w.rules == r.rules && w.column == r.column &&
        w.status == r.verdict && (w.layout == "*" || w.layout == r.layout) &&
        fnmatch(w.problems.c_str(), r.problem.c_str(), 0) == 0)
      return &w;
  return nullptr;
}

}  // namespace poolspec::certify
