// The static checks every strong id family shares (common/strong_id.h): no id
// of a family converts to another, nor to or from its integer implicitly, and
// each is built explicitly from its wire value. A family's test states its own
// ids once, `static_assert(kDistinctIds<LaneId, GroupId, Sequence>)`, and adds
// the calls and fields that must take only their own id with `kTakes`.
#pragma once

#include <concepts>
#include <type_traits>
#include <utility>

namespace cowboy::testing {

// Neither converts to, nor constructs, the other.
template <typename A, typename B>
constexpr bool kApart = !std::is_convertible_v<A, B> && !std::is_convertible_v<B, A> &&
                        !std::is_constructible_v<A, B> && !std::is_constructible_v<B, A>;

// Built from its value only explicitly, never read back as one implicitly.
template <typename Id>
constexpr bool kExplicit = std::is_constructible_v<Id, decltype(Id::value)> &&
                           !std::is_convertible_v<decltype(Id::value), Id> &&
                           !std::is_convertible_v<Id, decltype(Id::value)>;

template <typename Id, typename... Others>
constexpr bool kApartFromAll = (kApart<Id, Others> && ...);

template <typename... Ids>
struct DistinctIds;
template <>
struct DistinctIds<> : std::true_type {};
template <typename Id, typename... Rest>
struct DistinctIds<Id, Rest...>
    : std::bool_constant<kExplicit<Id> && kApartFromAll<Id, Rest...> && DistinctIds<Rest...>::value> {};

template <typename... Ids>
constexpr bool kDistinctIds = DistinctIds<Ids...>::value;

// A field (or an lvalue of the given type) accepts the value's type.
template <typename Field, typename Value>
constexpr bool kTakes = std::is_assignable_v<Field&, Value>;

// A counted point (common/strong_id.h's `Counted`) moves by its count - its
// integer, or the type its tag names - and two differ by one; points never
// add. A point counted by its integer also steps by ++; one counted by a type
// of its own is not moved by a bare integer. An id family lacks all of it.
template <typename Point>
using CountOfPoint = decltype(std::declval<Point>() - std::declval<Point>());

template <typename Point>
concept Differs = requires(Point p) { p - p; };
template <typename Point>
concept StepsByItsInteger = std::same_as<CountOfPoint<Point>, decltype(Point::value)> && requires(Point p) {
  { ++p } -> std::same_as<Point&>;
};
template <typename Point>
concept MovesOnlyByItsCount = !std::same_as<CountOfPoint<Point>, decltype(Point::value)> &&
                              !requires(Point p, decltype(Point::value) n) { p + n; } &&
                              !requires(Point p, decltype(Point::value) n) { p - n; } && !requires(Point p) { ++p; };
template <typename Point>
concept CountedPoint = Differs<Point> &&
                       requires(Point p, CountOfPoint<Point> n) {
                         { p + n } -> std::same_as<Point>;
                         { p - n } -> std::same_as<Point>;
                         { p - p } -> std::same_as<CountOfPoint<Point>>;
                         { p += n } -> std::same_as<Point&>;
                       } && !requires(Point p) { p + p; } && (StepsByItsInteger<Point> || MovesOnlyByItsCount<Point>);

template <typename Point>
constexpr bool kCountedPoint = CountedPoint<Point>;

template <typename Id>
constexpr bool kNoArithmetic = !requires(Id id, decltype(Id::value) n) { id + n; } &&
                               !requires(Id id) { id - id; } && !requires(Id id) { ++id; };

}  // namespace cowboy::testing
