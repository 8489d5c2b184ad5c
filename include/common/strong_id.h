// Numbers and handles as types of their own. On the wire a sequence, a lane id
// and a group id are all u64; in the code each is its own type, built
// explicitly from the wire value and read back with `.value`, so that no call
// can take one for another: a lane passed where a group is expected does not
// compile (each family's strong_ids_test.cc, on tests/support/distinct_ids.h).
#pragma once

#include <compare>
#include <functional>
#include <type_traits>

namespace cowboy {

template <typename Tag, typename Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

}  // namespace cowboy

// An id hashes as its value, so it keys an unordered map like its integer did
// (only where its value hashes: a Bytes32 id has no std::hash).
template <typename Tag, typename Rep>
  requires requires(const Rep& v) { std::hash<Rep>{}(v); }
struct std::hash<cowboy::StrongId<Tag, Rep>> {
  std::size_t operator()(const cowboy::StrongId<Tag, Rep>& id) const noexcept { return std::hash<Rep>{}(id.value); }
};

namespace cowboy {

// A point on a counted axis - a block height, a journal position, a revision -
// is a StrongId whose tag says `static constexpr bool kCounted = true;`. It is
// moved by a plain count and two points differ by one, as a time point and a
// duration do; two points never add, and an id (a lane, a PID) has no
// arithmetic at all. A tag may name its count's own type, `using Count =
// Millis;`, when a plain integer is the mistake to stop (a lease where a
// deadline is expected): the point then moves only by that type, two differ by
// one, and it has no ++.
template <typename Tag>
concept Counted = Tag::kCounted;

template <typename Tag, typename Rep>
struct CountFor {
  using type = Rep;
};
template <typename Tag, typename Rep>
  requires requires { typename Tag::Count; }
struct CountFor<Tag, Rep> {
  using type = typename Tag::Count;
};
// What moves a point of tag Tag: its Rep, or the type its tag names.
template <typename Tag, typename Rep>
using CountOf = typename CountFor<Tag, Rep>::type;

template <typename Rep>
constexpr Rep count_value(Rep count) {
  return count;
}
template <typename Tag, typename Rep>
constexpr Rep count_value(StrongId<Tag, Rep> count) {
  return count.value;
}

template <Counted Tag, typename Rep>
constexpr StrongId<Tag, Rep> operator+(StrongId<Tag, Rep> point, std::type_identity_t<CountOf<Tag, Rep>> count) {
  return StrongId<Tag, Rep>{static_cast<Rep>(point.value + count_value(count))};
}
template <Counted Tag, typename Rep>
constexpr StrongId<Tag, Rep> operator-(StrongId<Tag, Rep> point, std::type_identity_t<CountOf<Tag, Rep>> count) {
  return StrongId<Tag, Rep>{static_cast<Rep>(point.value - count_value(count))};
}
template <Counted Tag, typename Rep>
constexpr CountOf<Tag, Rep> operator-(StrongId<Tag, Rep> later, StrongId<Tag, Rep> earlier) {
  return CountOf<Tag, Rep>{static_cast<Rep>(later.value - earlier.value)};
}
template <Counted Tag, typename Rep>
  requires std::is_same_v<CountOf<Tag, Rep>, Rep>
constexpr StrongId<Tag, Rep>& operator++(StrongId<Tag, Rep>& point) {
  ++point.value;
  return point;
}
template <Counted Tag, typename Rep>
constexpr StrongId<Tag, Rep>& operator+=(StrongId<Tag, Rep>& point, std::type_identity_t<CountOf<Tag, Rep>> count) {
  point.value += count_value(count);
  return point;
}

}  // namespace cowboy
