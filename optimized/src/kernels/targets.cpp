// The SIMD targets the kernel files are compiled for (the same in every file: one set of compile
// definitions), which one dispatch chooses, and restricting it for the tests and the benchmark.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/targets.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <hwy/targets.h>

#include "kernels/kernel.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolspec::optimized {
namespace HWY_NAMESPACE {

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace poolspec::optimized
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolspec::optimized {

HWY_EXPORT(TargetName);

std::string dispatched_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

namespace {

// The compiled targets this CPU supports, read once and before any restriction: Highway's
// SupportedAndGeneratedTargets() honours SetSupportedTargetsForTest, so reading it after
// restrict_target would give only the chosen one, and simd_targets() would shrink with each
// restriction (tests/test_engines.cpp checks that it does not).
const std::vector<int64_t>& all_targets() {
  static const std::vector<int64_t> targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    std::vector<int64_t> v;
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) v.push_back(target);
    return v;
  }();
  return targets;
}

}  // namespace

std::vector<std::string> compiled_targets() {
  std::vector<std::string> names;
  for (int64_t target : all_targets()) names.emplace_back(hwy::TargetName(target));
  return names;
}

bool restrict_target(std::string_view name) {
  int64_t chosen = 0;
  for (int64_t target : all_targets())
    if (name == hwy::TargetName(target)) chosen = target;
  if (!name.empty() && chosen == 0) return false;
  hwy::SetSupportedTargetsForTest(chosen);
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return true;
}

}  // namespace poolspec::optimized
#endif
