// Numbers and handles as types of their own. On the wire a sequence, a lane id
// and a group id are all u64; in the code each is its own type, built
// explicitly from the wire value and read back with `.value`, so that no call
// can take one for another: a lane passed where a group is expected does not
// compile (tests/common/strong_id_test.cc).
#pragma once

#include <compare>
#include <functional>

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
