#include "waivers.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace poolspec::certify {

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
    const size_t bar = line.find('|');
    std::istringstream fields(line.substr(0, bar));
    Waiver w;
    fields >> w.backend >> w.rules;
    std::getline(fields >> std::ws, w.column);
    while (!w.column.empty() && w.column.back() == ' ') w.column.pop_back();
    if (bar == std::string::npos || w.column.empty())
      return Error{
          fmt::format("--waivers {}:{}: must be 'backend rules column | reason'", path, number)};
    w.reason = line.substr(bar + 1);
    w.reason.erase(0, w.reason.find_first_not_of(' '));
    out.push_back(w);
  }
  if (in.bad()) return Error{fmt::format("--waivers {}: read error", path)};
  return out;
}

const Waiver* waiver_for(const std::vector<Waiver>& waivers, const JobResult& r) {
  for (const Waiver& w : waivers)
    if (w.backend == r.backend && w.rules == r.rules && w.column == r.column) return &w;
  return nullptr;
}

}  // namespace poolspec::certify
