// Room lanes (§11.1): a room's message lane and each seat's inbox have ids
// derived from the room (and seat), so every participant finds them without
// asking anyone. Client::open_room_lane creates one (idempotently).
#pragma once

#include "cbqs/wire/frames.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::sdk {

inline RoomLaneV2 room_messages(const Bytes32& room_id) { return RoomMessages{room_id}; }
inline RoomLaneV2 room_inbox(const Bytes32& room_id, const Bytes32& seat_id) { return RoomInbox{room_id, seat_id}; }
/// The lane id a room lane has on every broker: room_lane_id of §11.1.
inline LaneId room_lane(const RoomLaneV2& room) { return room_lane_id(room); }

}  // namespace cowboy::cbqs::sdk
