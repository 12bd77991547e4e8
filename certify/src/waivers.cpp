#include "waivers.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

namespace poolspec::certify {

namespace {

constexpr const char* line_form =
    "must be 'backend rules column [when STATUS LAYOUT PATTERN] | reason'";

// The pattern token at pattern[p]: whether it takes character c, and where the next token starts.
// '?' takes any; '[set]' one of the set ('[!set]' or '[^set]' none of it; 'a-z' a range; a '['
// without its ']' is itself); any other character itself.
bool token_takes(std::string_view pattern, size_t p, char c, size_t& next) {
  next = p + 1;
  if (pattern[p] == '?') return true;
  if (pattern[p] != '[') return pattern[p] == c;
  size_t q = p + 1;
  const bool negated = q < pattern.size() && (pattern[q] == '!' || pattern[q] == '^');
  if (negated) ++q;
  bool in = false;
  for (size_t first = q; q < pattern.size() && (q == first || pattern[q] != ']'); ++q) {
    if (q + 2 < pattern.size() && pattern[q + 1] == '-' && pattern[q + 2] != ']') {
      in = in || (pattern[q] <= c && c <= pattern[q + 2]);
      q += 2;
    } else {
      in = in || pattern[q] == c;
    }
  }
  if (q >= pattern.size()) return c == '[';  // no ']': a literal '['
  next = q + 1;
  return in != negated;
}

// Whether `text` matches the glob `pattern` ('*' any run of characters, else token_takes).
// fnmatch(3) backtracks into every earlier '*', exponential in the stars of a pattern that does
// not match; only the last '*' is revisited here, so a match costs at most pattern x text steps.
bool glob_matches(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    size_t next = 0;
    if (p < pattern.size() && pattern[p] == '*') {
      star = ++p;
      star_text = t;
    } else if (p < pattern.size() && token_takes(pattern, p, text[t], next)) {
      p = next;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star;  // the last '*' takes one more character
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

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
    if (bar == std::string::npos) return Error{fmt::format("{}: {}", where, line_form)};
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
    if (w.column.empty()) return Error{fmt::format("{}: {}", where, line_form)};
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
        glob_matches(w.problems, r.problem))
      return &w;
  return nullptr;
}

}  // namespace poolspec::certify
