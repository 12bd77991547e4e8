// Errors as values. Every fallible function of the library returns Result<T>; no exception
// leaves the library's API and no bad input aborts (docs/design.md §3, "it is total").
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace poolspec {

// A refusal. The message names the attribute, its value and the rule it breaks, e.g.
// "strides[1]=0: strides must be >= 1".
struct Error {
  std::string message;
};

struct Ok {};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

using Status = Result<Ok>;

}  // namespace poolspec
