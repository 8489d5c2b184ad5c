// Errors as values: Result<T, E> holds either a value or a typed error.
// (std::expected arrives in C++23; g++ 12 does not have it.)
#pragma once

#include <cassert>
#include <utility>
#include <variant>

namespace cowboy {

template <typename E>
struct Err {
  E error;
};
template <typename E>
Err(E) -> Err<E>;

template <typename T, typename E>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Err<E> err) : state_(std::in_place_index<1>, std::move(err.error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

  const E& error() const { assert(!ok()); return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

/// For operations that return nothing but may fail.
struct Unit {
  bool operator==(const Unit&) const = default;
};

}  // namespace cowboy
