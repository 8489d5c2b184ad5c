// The broker's numbers and handles as types of their own. Sequence, LaneId and
// GroupId are the wire's (cbqs/wire/types.h); a session, a subscription, a
// lease and a request are all 32 bytes on the wire, and inside the broker each
// is its own type, built explicitly from the wire value and read back with
// `.value`, so that no call can take one for another.
#pragma once

#include "cbqs/wire/types.h"
#include "common/bytes.h"
#include "common/strong_id.h"

namespace cowboy::cbqs::broker {

using SessionId = StrongId<struct SessionIdTag, Bytes32>;
using SubscriptionId = StrongId<struct SubscriptionIdTag, Bytes32>;
using LeaseId = StrongId<struct LeaseIdTag, Bytes32>;
using RequestId = StrongId<struct RequestIdTag, Bytes32>;

}  // namespace cowboy::cbqs::broker
