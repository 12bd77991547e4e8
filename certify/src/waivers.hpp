// Waivers: known, documented deviations of the backends poolspec ships, one matrix cell each
// (certify/waivers.txt; docs/certification.md).
#pragma once

#include <string>
#include <vector>

#include "certify.hpp"

namespace poolspec::certify {

// A waiver: every failure of a backend under a rule set in one matrix cell is a known deviation.
struct Waiver {
  std::string backend, rules, column, reason;
};

// The waivers of a file of lines "backend rules column | reason" ('#' comments); none for "".
Result<std::vector<Waiver>> read_waivers(const std::string& path);

// The waiver that covers result `r`'s cell, or null.
const Waiver* waiver_for(const std::vector<Waiver>& waivers, const JobResult& r);

}  // namespace poolspec::certify
