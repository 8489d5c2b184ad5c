// CIP-39 §11 frames. One frame is one WebSocket binary message:
//
//   +---------+---------+------------------------------+
//   | u8 = 2  | u8 tag  | fields of that variant ...   |
//   +---------+---------+------------------------------+
//
// Request bodies are the project's closure of the §11.1 gap (docs/protocol.md §C).
#pragma once

#include "cbqs/wire/types.h"

namespace cowboy::cbqs {

// ---- subscriptions and delivery state (§11.2) ------------------------------
struct SourceCursor {
  static constexpr std::uint8_t kTag = 1;
  LaneScope lane_scope;
  StartPosition start;
  bool operator==(const SourceCursor&) const = default;
};
struct SourceGroup {
  static constexpr std::uint8_t kTag = 2;
  LaneId lane_id{};
  GroupId group_id{};
  bool operator==(const SourceGroup&) const = default;
};
using SubscriptionSourceV2 = std::variant<SourceCursor, SourceGroup>;

struct CreditShort {
  static constexpr std::uint8_t kTag = 1;
  std::uint32_t needed_bytes = 0;
  bool operator==(const CreditShort&) const = default;
};
using DeliveryStateBodyV2 = std::variant<CreditShort>;

// ---- room lanes (§11.1) ------------------------------------------------------
struct RoomMessages {
  static constexpr std::uint8_t kTag = 1;  // the kind byte of the §11.1 derivation
  Bytes32 room_id{};
  bool operator==(const RoomMessages&) const = default;
};
struct RoomInbox {
  static constexpr std::uint8_t kTag = 3;  // the kind byte of the §11.1 derivation
  Bytes32 room_id{};
  Bytes32 seat_id{};
  bool operator==(const RoomInbox&) const = default;
};
using RoomLaneV2 = std::variant<RoomMessages, RoomInbox>;

// ---- request bodies (docs/protocol.md §C) ----------------------------------
namespace req {
struct Append { static constexpr std::uint8_t kTag = 1; AppendRequestV2 append; bool operator==(const Append&) const = default; };
struct CreateLane { static constexpr std::uint8_t kTag = 2; std::optional<RoomLaneV2> room; bool operator==(const CreateLane&) const = default; };
struct CloseLane { static constexpr std::uint8_t kTag = 3; LaneId lane_id{}; bool operator==(const CloseLane&) const = default; };
struct ListLanes {
  static constexpr std::uint8_t kTag = 4;
  std::optional<LaneId> after_lane_id;
  std::uint32_t limit = 0;
  bool operator==(const ListLanes&) const = default;
};
struct GetSettings { static constexpr std::uint8_t kTag = 5; bool operator==(const GetSettings&) const = default; };
struct UpdateSettings { static constexpr std::uint8_t kTag = 6; StreamSettingsV2 settings; bool operator==(const UpdateSettings&) const = default; };
struct GetCheckpoint {
  static constexpr std::uint8_t kTag = 7;
  std::optional<Sequence> covering_sequence;  // None = the latest receipt
  bool operator==(const GetCheckpoint&) const = default;
};
struct CreateGroup { static constexpr std::uint8_t kTag = 8; GroupConfigV2 config; bool operator==(const CreateGroup&) const = default; };
struct UpdateGroup { static constexpr std::uint8_t kTag = 9; GroupConfigV2 config; bool operator==(const UpdateGroup&) const = default; };
struct GetGroup { static constexpr std::uint8_t kTag = 10; GroupId group_id{}; bool operator==(const GetGroup&) const = default; };
struct DeleteGroup { static constexpr std::uint8_t kTag = 11; GroupId group_id{}; bool operator==(const DeleteGroup&) const = default; };
struct Subscribe {
  static constexpr std::uint8_t kTag = 12;
  SubscriptionSourceV2 source;
  std::uint64_t initial_credit_bytes = 0;
  bool operator==(const Subscribe&) const = default;
};
struct AddCredit {
  static constexpr std::uint8_t kTag = 13;
  Bytes32 subscription_id{};
  std::uint64_t credit_bytes = 0;
  bool operator==(const AddCredit&) const = default;
};
struct Unsubscribe { static constexpr std::uint8_t kTag = 14; Bytes32 subscription_id{}; bool operator==(const Unsubscribe&) const = default; };
struct Ack { static constexpr std::uint8_t kTag = 15; Bytes32 subscription_id{}; Bytes32 lease{}; bool operator==(const Ack&) const = default; };
struct Nack { static constexpr std::uint8_t kTag = 16; Bytes32 subscription_id{}; Bytes32 lease{}; bool operator==(const Nack&) const = default; };
struct Extend {
  static constexpr std::uint8_t kTag = 17;
  Bytes32 subscription_id{};
  Bytes32 lease{};
  std::uint64_t extend_ms = 0;
  bool operator==(const Extend&) const = default;
};
struct Reject { static constexpr std::uint8_t kTag = 18; Bytes32 subscription_id{}; Bytes32 lease{}; bool operator==(const Reject&) const = default; };
struct CloseSession { static constexpr std::uint8_t kTag = 19; bool operator==(const CloseSession&) const = default; };
}  // namespace req

using CbqsRequestBodyV2 =
    std::variant<req::Append, req::CreateLane, req::CloseLane, req::ListLanes, req::GetSettings, req::UpdateSettings,
                 req::GetCheckpoint, req::CreateGroup, req::UpdateGroup, req::GetGroup, req::DeleteGroup,
                 req::Subscribe, req::AddCredit, req::Unsubscribe, req::Ack, req::Nack, req::Extend, req::Reject,
                 req::CloseSession>;

// ---- response bodies (§11.1) ----------------------------------------------
namespace resp {
struct Appended { static constexpr std::uint8_t kTag = 1; Sequence sequence{}; bool operator==(const Appended&) const = default; };
struct LaneCreated { static constexpr std::uint8_t kTag = 2; LaneId lane_id{}; bool operator==(const LaneCreated&) const = default; };
struct Lanes {
  static constexpr std::uint8_t kTag = 3;
  std::vector<LaneRecordV2> lanes;
  std::optional<LaneId> next_after_lane_id;
  bool operator==(const Lanes&) const = default;
};
struct Settings {
  static constexpr std::uint8_t kTag = 4;
  StreamSettingsV2 settings;
  GroupCeilingsV2 group_ceilings;
  bool operator==(const Settings&) const = default;
};
struct Checkpoint { static constexpr std::uint8_t kTag = 5; CheckpointReceiptV2 receipt; bool operator==(const Checkpoint&) const = default; };
struct Group { static constexpr std::uint8_t kTag = 6; GroupConfigV2 config; bool operator==(const Group&) const = default; };
struct GroupCreated { static constexpr std::uint8_t kTag = 7; GroupId group_id{}; bool operator==(const GroupCreated&) const = default; };
struct Ok { static constexpr std::uint8_t kTag = 8; bool operator==(const Ok&) const = default; };
struct CursorProgress {
  static constexpr std::uint8_t kTag = 9;
  Bytes32 subscription_id{};
  LaneId lane_id{};
  Sequence scanned_through{};
  bool operator==(const CursorProgress&) const = default;
};
}  // namespace resp

using CbqsResponseBodyV2 = std::variant<resp::Appended, resp::LaneCreated, resp::Lanes, resp::Settings,
                                        resp::Checkpoint, resp::Group, resp::GroupCreated, resp::Ok,
                                        resp::CursorProgress>;

// ---- client frames -------------------------------------------------------------
struct OpenSession { static constexpr std::uint8_t kTag = 1; Bytes32 request_id{}; StreamGrantV2 grant; bool operator==(const OpenSession&) const = default; };
struct CompleteSession { static constexpr std::uint8_t kTag = 2; Bytes32 request_id{}; SessionProofV2 proof; bool operator==(const CompleteSession&) const = default; };
struct Request {
  static constexpr std::uint8_t kTag = 3;
  Bytes32 request_id{};
  Bytes32 session_id{};
  CbqsRequestBodyV2 body;
  bool operator==(const Request&) const = default;
};
using CbqsClientFrameV2 = std::variant<OpenSession, CompleteSession, Request>;

// ---- server frames -------------------------------------------------------------
struct SessionChallenge {
  static constexpr std::uint8_t kTag = 1;
  Bytes32 request_id{};
  Bytes32 session_id{};
  Bytes32 challenge{};
  std::uint64_t expires_at_ms = 0;
  bool operator==(const SessionChallenge&) const = default;
};
struct SessionOpened {
  static constexpr std::uint8_t kTag = 2;
  Bytes32 request_id{};
  Bytes32 session_id{};
  std::uint64_t snapshot_height = 0;
  bool operator==(const SessionOpened&) const = default;
};
struct Response { static constexpr std::uint8_t kTag = 3; Bytes32 request_id{}; CbqsResponseBodyV2 body; bool operator==(const Response&) const = default; };
struct Delivery {
  static constexpr std::uint8_t kTag = 4;
  Bytes32 session_id{};
  Bytes32 subscription_id{};
  std::optional<Bytes32> lease;
  RecordHeaderV2 header;
  Sequence sequence{};
  Bytes payload;
  bool operator==(const Delivery&) const = default;
};
struct ErrorFrame {
  static constexpr std::uint8_t kTag = 5;
  std::optional<Bytes32> request_id;
  std::uint16_t code = 0;
  Bytes message;
  Bytes details;
  bool operator==(const ErrorFrame&) const = default;
};
struct DeliveryState {
  static constexpr std::uint8_t kTag = 6;
  Bytes32 session_id{};
  Bytes32 subscription_id{};
  DeliveryStateBodyV2 state;
  bool operator==(const DeliveryState&) const = default;
};
using CbqsServerFrameV2 =
    std::variant<SessionChallenge, SessionOpened, Response, Delivery, ErrorFrame, DeliveryState>;

}  // namespace cowboy::cbqs
