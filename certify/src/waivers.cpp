#include "waivers.hpp"

#include <strings.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "poolspec/frontends.hpp"
#include "suite.hpp"

namespace poolspec::certify {

namespace {

constexpr const char* expected_line_form =
    "must be 'backend rules column [when STATUS LAYOUT PATTERN] | reason'";

// Where the character class that opens at pattern[p] == '[' ends (the index of its ']'), or npos
// when it does not close. '[!set]' and '[^set]' negate; a ']' first in the set is a member.
size_t class_end(std::string_view pattern, size_t p) {
  size_t q = p + 1;
  if (q < pattern.size() && (pattern[q] == '!' || pattern[q] == '^')) ++q;
  if (q < pattern.size() && pattern[q] == ']') ++q;
  return pattern.find(']', q);
}

// Whether the pattern token at pattern[p] takes character c; `next` is where the next token
// starts. '?' takes any character; '[set]' one of the set ('a-z' a range); any other character
// itself. The pattern's classes are closed (read_scope refuses others).
bool token_takes(std::string_view pattern, size_t p, char c, size_t& next) {
  next = p + 1;
  if (pattern[p] == '?') return true;
  if (pattern[p] != '[') return pattern[p] == c;
  const size_t end = class_end(pattern, p);
  next = end + 1;
  size_t q = p + 1;
  const bool negated = pattern[q] == '!' || pattern[q] == '^';
  if (negated) ++q;
  const auto u = [](char x) { return static_cast<unsigned char>(x); };
  bool in_set = false;
  for (; q < end; ++q) {
    if (q + 2 < end && pattern[q + 1] == '-') {
      in_set = in_set || (u(pattern[q]) <= u(c) && u(c) <= u(pattern[q + 2]));
      q += 2;
    } else {
      in_set = in_set || pattern[q] == c;
    }
  }
  return in_set != negated;
}

// Whether `text` matches the glob `pattern` as a whole ('*' any run of characters, else
// token_takes). fnmatch(3) backtracks into every earlier '*', exponential in the stars of a
// pattern that does not match; here only the last '*' is revisited, so a match reads each
// token at most twice (a class: to find its end, then its members) per character of the text.
bool glob_matches(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, after_star = std::string_view::npos, star_text_start = 0;
  while (t < text.size()) {
    size_t next = 0;
    if (p < pattern.size() && pattern[p] == '*') {
      after_star = ++p;
      star_text_start = t;
    } else if (p < pattern.size() && token_takes(pattern, p, text[t], next)) {
      p = next;
      ++t;
    } else if (after_star != std::string_view::npos) {
      p = after_star;  // the last '*' takes one more character
      t = ++star_text_start;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The scope's words (STATUS LAYOUT PATTERN) into `w` (waivers.hpp), or why they are not one.
Status read_scope(const std::vector<std::string>& words, const std::string& where, Waiver& w) {
  const std::string text = fmt::format("{}", fmt::join(words, " "));
  if (words.size() != 3)
    return Error{
        fmt::format("{}: when '{}': a scope is STATUS LAYOUT PATTERN (the pattern a glob "
                    "over the problem string, without spaces)",
                    where, text)};
  const std::optional<Verdict> verdict = verdict_named(words[0]);
  // A load error belongs to no cell (nothing ran).
  if (!verdict || !is_failure(*verdict) || *verdict == Verdict::load_error)
    return Error{
        fmt::format("{}: when '{}': the status is one a run fails with (FAIL, CRASH, "
                    "HANG, OUT-OF-BOUNDS, UNWRITTEN, UNSTABLE)",
                    where, words[0])};
  if (words[1] != "nchw" && words[1] != "nhwc" && words[1] != "*")
    return Error{
        fmt::format("{}: when {} '{}': the layout is nchw, nhwc or *", where, words[0], words[1])};
  const std::string& glob = words[2];
  for (size_t p = glob.find('['); p != std::string::npos;) {
    const size_t end = class_end(glob, p);
    if (end == std::string::npos)
      return Error{
          fmt::format("{}: when {} {} '{}': the '[' at {} opens a class that no ']' "
                      "closes",
                      where, words[0], words[1], glob, p + 1)};
    p = glob.find('[', end);
  }
  // A status other than FAIL is waived for a class of problems, never for a whole cell.
  if (*verdict != Verdict::fail && glob.find_first_not_of('*') == std::string::npos)
    return Error{
        fmt::format("{}: when {} {} '{}': a scope of {} names the problems it covers; "
                    "'*' alone would waive the whole cell",
                    where, words[0], words[1], glob, words[0])};
  w.status = *verdict;
  w.layout = words[1];
  w.problem_glob = glob;
  return Ok{};
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
    if (bar == std::string::npos) return Error{fmt::format("{}: {}", where, expected_line_form)};
    // The words before the bar: backend, rules, the column's words, then perhaps "when" and the
    // scope's three.
    std::istringstream before_bar(line.substr(0, bar));
    std::vector<std::string> words;
    for (std::string word; before_bar >> word;) words.push_back(word);
    const auto when = std::find(words.begin(), words.end(), "when");
    for (const std::string& word : words)
      if (word != "when" && strcasecmp(word.c_str(), "when") == 0)
        return Error{fmt::format("{}: '{}': a scope starts with 'when'", where, word)};
    Waiver w;
    if (when != words.end())
      if (Status s = read_scope({when + 1, words.end()}, where, w); !s) return s.error();
    if (when - words.begin() < 3) return Error{fmt::format("{}: {}", where, expected_line_form)};
    w.backend = words[0];
    w.rules = words[1];
    w.column = fmt::format("{}", fmt::join(words.begin() + 2, when, " "));
    // A misspelt rule set or column would be a waiver that never applies, silently.
    if (!known_rules(w.rules))
      return Error{fmt::format("{}: rules '{}': must be spec, xs3 or a framework ({})", where,
                               w.rules, framework_names())};
    if (!is_matrix_column(w.column))
      return Error{
          fmt::format("{}: column '{}': not a column of the matrix (max or avg excl or "
                      "avg incl, then ceil, idx (max), int; or shape, invalid)",
                      where, w.column)};
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
        glob_matches(w.problem_glob, r.problem))
      return &w;
  return nullptr;
}

}  // namespace poolspec::certify
