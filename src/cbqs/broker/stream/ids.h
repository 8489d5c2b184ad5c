// The broker's numbers and handles as types of their own. On the wire a
// sequence, a lane id and a group id are all u64, and a session, a
// subscription, a lease and a request are all 32 bytes; inside the broker each
// is its own type, built explicitly from the wire value and read back with
// `.value`, so that no call can take one for another.
#pragma once

#include <compare>
#include <cstdint>

#include "common/bytes.h"

namespace cowboy::cbqs::broker {

template <typename Tag, typename Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

using Sequence = StrongId<struct SequenceTag, std::uint64_t>;
using LaneId = StrongId<struct LaneIdTag, std::uint64_t>;
using GroupId = StrongId<struct GroupIdTag, std::uint64_t>;

using SessionId = StrongId<struct SessionIdTag, Bytes32>;
using SubscriptionId = StrongId<struct SubscriptionIdTag, Bytes32>;
using LeaseId = StrongId<struct LeaseIdTag, Bytes32>;
using RequestId = StrongId<struct RequestIdTag, Bytes32>;

}  // namespace cowboy::cbqs::broker
