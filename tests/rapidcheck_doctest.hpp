// A small bridge from RapidCheck to doctest (Debian's RapidCheck snapshot ships none).
// check_property() runs a property and, when it fails, reports RapidCheck's message -- the
// shrunk counterexample, printed through showValue() as a problem string -- as a doctest
// failure. find_counterexample() is for mutants: it expects the property to fail.
#pragma once

#include <optional>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <rapidcheck.h>

namespace poolspec::test {

template <class Testable>
std::optional<std::string> find_counterexample(Testable&& testable) {
  const auto result = rc::detail::checkTestable(std::forward<Testable>(testable));
  if (result.template is<rc::detail::SuccessResult>()) return std::nullopt;
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  return message.str();
}

template <class Testable>
void check_property(const std::string& description, Testable&& testable) {
  const std::optional<std::string> failure = find_counterexample(std::forward<Testable>(testable));
  if (failure) {
    DOCTEST_INFO("property: ", description);
    DOCTEST_FAIL_CHECK(*failure);
  }
}

}  // namespace poolspec::test
