// Waivers: known, documented deviations of the backends poolspec ships, one matrix cell each
// (certify/waivers.txt; docs/certification.md).
#pragma once

#include <string>
#include <vector>

#include "certify.hpp"

namespace poolspec::certify {

// A waiver: the failures of a backend under a rule set in one matrix cell are a known deviation.
// Without a scope it covers that cell's FAIL runs. A scope ("when STATUS LAYOUT PATTERN") names
// the status it covers (OUT-OF-BOUNDS, say: never waived otherwise), the layout ("*": either)
// and the problems (a glob over the run's problem string: '*', '?', '[set]', '[!set]'), and
// covers only the runs that match all three.
struct Waiver {
  std::string backend, rules, column, reason;
  Verdict status = Verdict::fail;
  std::string layout = "*", problem_glob = "*";
};

// The waivers of a file of lines "backend rules column [when STATUS LAYOUT PATTERN] | reason"
// ('#' comments); none for "".
Result<std::vector<Waiver>> read_waivers(const std::string& path);

// The waiver that covers result `r` (its cell, its status, its layout and problem), or null.
const Waiver* waiver_for(const std::vector<Waiver>& waivers, const JobResult& r);

}  // namespace poolspec::certify
