// CIP-39 wire objects (§4–§13), one struct per object, with the field order of
// the seed. Encoding rules: docs/protocol.md §A; codec entry points: codec.h.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "common/bytes.h"
#include "common/strong_id.h"

namespace cowboy::cbqs {

// ---- numbers (§8, §9) --------------------------------------------------------
// u64 on the wire, each its own type in the code (common/strong_id.h): a lane
// passed where a group or a sequence is expected does not compile.
using Sequence = StrongId<struct SequenceTag, std::uint64_t>;
using LaneId = StrongId<struct LaneIdTag, std::uint64_t>;
using GroupId = StrongId<struct GroupIdTag, std::uint64_t>;

// ---- keys and signatures (§4, docs/protocol.md §B) ------------------------
enum class KeyAlg : std::uint8_t { kEd25519 = 1 };

/// SigningPublicKey = alg_tag_u8 || key_bytes (Ed25519 = 1, 32 bytes).
struct SigningPublicKey {
  KeyAlg alg = KeyAlg::kEd25519;
  Bytes32 key{};
  bool operator==(const SigningPublicKey&) const = default;
};

/// Signature = alg_tag_u8 || sig_bytes (Ed25519 = 1, 64 bytes).
struct Signature {
  KeyAlg alg = KeyAlg::kEd25519;
  std::array<std::uint8_t, 64> bytes{};
  bool operator==(const Signature&) const = default;
};

// ---- chain records (§4) ----------------------------------------------------
struct ProviderRecordV2 {
  Bytes32 chain_instance_id{};
  Address provider{};
  SigningPublicKey signing_key;
  std::uint64_t signing_key_since = 0;
  std::optional<SigningPublicKey> previous_signing_key;
  std::uint64_t previous_signing_key_since = 0;
  std::vector<Bytes> endpoints;
  bool accepts_new = false;
  std::uint64_t max_streams = 0;
  std::uint64_t assigned_streams = 0;
  Bytes32 metadata_hash{};
  bool operator==(const ProviderRecordV2&) const = default;
};

enum class StreamStatusV2 : std::uint8_t { kActive = 1, kClosed = 2 };

struct StreamRecordV2 {
  Bytes32 chain_instance_id{};
  Bytes32 stream_id{};
  Address owner{};
  std::uint64_t owner_nonce = 0;
  SigningPublicKey admin_key;
  Address provider{};
  std::uint64_t authorization_generation = 0;
  StreamStatusV2 status = StreamStatusV2::kActive;
  bool operator==(const StreamRecordV2&) const = default;
};

struct CbqsAccountV2 {
  Address owner{};
  Address provider{};
  u128 balance = 0;
  std::uint64_t active_streams = 0;
  u128 rate_per_block = 0;
  std::uint64_t last_settled_block = 0;
  bool suspended = false;
  bool operator==(const CbqsAccountV2&) const = default;
};

// ---- chain instructions (§5); SYS_CBQS payload = 2 || tag || body ----------
struct RegisterProviderV2 {
  static constexpr std::uint8_t kTag = 1;
  SigningPublicKey signing_key;
  std::vector<Bytes> endpoints;
  std::uint64_t max_streams = 0;
  bool accepts_new = false;
  Bytes32 metadata_hash{};
  bool operator==(const RegisterProviderV2&) const = default;
};
struct UpdateProviderV2 {
  static constexpr std::uint8_t kTag = 2;
  std::optional<SigningPublicKey> signing_key;
  std::optional<std::vector<Bytes>> endpoints;
  std::optional<std::uint64_t> max_streams;
  std::optional<bool> accepts_new;
  std::optional<Bytes32> metadata_hash;
  bool operator==(const UpdateProviderV2&) const = default;
};
struct CreateStreamV2 {
  static constexpr std::uint8_t kTag = 3;
  std::uint64_t owner_nonce = 0;
  Address provider{};
  SigningPublicKey admin_key;
  bool operator==(const CreateStreamV2&) const = default;
};
struct UpdateStreamV2 {
  static constexpr std::uint8_t kTag = 4;
  Bytes32 stream_id{};
  std::optional<SigningPublicKey> admin_key;
  bool bump_authorization_generation = false;
  bool operator==(const UpdateStreamV2&) const = default;
};
struct CloseStreamV2 {
  static constexpr std::uint8_t kTag = 5;
  Bytes32 stream_id{};
  bool operator==(const CloseStreamV2&) const = default;
};
struct TopUpAccountV2 {
  static constexpr std::uint8_t kTag = 6;
  Address owner{};
  Address provider{};
  u128 amount = 0;
  bool operator==(const TopUpAccountV2&) const = default;
};
struct SettleAccountV2 {
  static constexpr std::uint8_t kTag = 7;
  Address owner{};
  Address provider{};
  bool operator==(const SettleAccountV2&) const = default;
};
struct WithdrawAccountV2 {
  static constexpr std::uint8_t kTag = 8;
  Address provider{};
  std::optional<u128> amount;  // absent = the whole balance
  bool operator==(const WithdrawAccountV2&) const = default;
};

using CbqsInstructionV2 = std::variant<RegisterProviderV2, UpdateProviderV2, CreateStreamV2, UpdateStreamV2,
                                       CloseStreamV2, TopUpAccountV2, SettleAccountV2, WithdrawAccountV2>;

// ---- authorization (§7) ----------------------------------------------------
struct LaneScopeAny { static constexpr std::uint8_t kTag = 1; bool operator==(const LaneScopeAny&) const = default; };
struct LaneScopeExact { static constexpr std::uint8_t kTag = 2; LaneId lane_id{}; bool operator==(const LaneScopeExact&) const = default; };
struct LaneScopeSet { static constexpr std::uint8_t kTag = 3; std::vector<LaneId> lane_ids; bool operator==(const LaneScopeSet&) const = default; };
/// Any = 1 | Exact = 2 (u64) | Set = 3 (Vec<u64>)
using LaneScope = std::variant<LaneScopeAny, LaneScopeExact, LaneScopeSet>;

struct GroupScopeAny { static constexpr std::uint8_t kTag = 1; bool operator==(const GroupScopeAny&) const = default; };
struct GroupScopeExact { static constexpr std::uint8_t kTag = 2; GroupId group_id{}; bool operator==(const GroupScopeExact&) const = default; };
/// Any = 1 | Exact = 2 (u64)
using GroupScope = std::variant<GroupScopeAny, GroupScopeExact>;

struct StreamGrantV2 {
  Bytes32 chain_instance_id{};
  Bytes32 stream_id{};
  std::uint64_t authorization_generation = 0;
  Bytes32 grant_nonce{};
  SigningPublicKey holder_signing_key;
  std::uint16_t verbs = 0;
  LaneScope lane_scope;
  GroupScope group_scope;
  std::uint64_t not_before_ms = 0;
  std::uint64_t expires_at_ms = 0;
  std::uint32_t max_message_bytes = 0;
  std::uint64_t max_append_bytes_per_sec = 0;
  Signature signature;
  bool operator==(const StreamGrantV2&) const = default;
};

struct SessionProofV2 {
  Bytes32 chain_instance_id{};
  Bytes32 stream_id{};
  Bytes32 grant_id{};
  Bytes32 session_id{};
  Bytes32 challenge{};
  Signature signature;
  bool operator==(const SessionProofV2&) const = default;
};

// ---- lanes, records, groups, settings, checkpoints (§8–§13) ----------------
enum class LaneStatusV2 : std::uint8_t { kActive = 1, kClosed = 2 };

struct LaneRecordV2 {
  Bytes32 stream_id{};
  LaneId lane_id{};
  LaneStatusV2 status = LaneStatusV2::kActive;
  bool operator==(const LaneRecordV2&) const = default;
};

struct AppendRequestV2 {
  LaneId lane_id{};
  Bytes payload;
  bool operator==(const AppendRequestV2&) const = default;
};

struct RecordHeaderV2 {
  Bytes32 stream_id{};
  LaneId lane_id{};
  bool operator==(const RecordHeaderV2&) const = default;
};

struct StartHead { static constexpr std::uint8_t kTag = 1; bool operator==(const StartHead&) const = default; };
struct StartAt { static constexpr std::uint8_t kTag = 2; Sequence sequence{}; bool operator==(const StartAt&) const = default; };
/// Head = 1 | At = 2 (u64)
using StartPosition = std::variant<StartHead, StartAt>;

struct GroupConfigV2 {
  GroupId group_id{};
  LaneId lane_id{};
  StartPosition start;
  std::uint64_t visibility_timeout_ms = 0;
  std::uint64_t max_visibility_ms = 0;
  std::uint32_t max_in_flight = 0;
  std::uint32_t max_in_flight_per_holder = 0;
  std::uint16_t max_attempts = 0;
  std::uint64_t record_deadline_ms = 0;
  bool operator==(const GroupConfigV2&) const = default;
};

struct GroupCeilingsV2 {
  std::uint64_t max_visibility_ms = 0;  // cbqs.visibility_ms
  std::uint16_t max_attempts = 0;       // cbqs.max_attempts
  std::uint32_t max_in_flight = 0;      // cbqs.max_in_flight_per_group
  bool operator==(const GroupCeilingsV2&) const = default;
};

struct StreamSettingsV2 {
  std::uint64_t retention_ms = 0;
  std::uint64_t retained_bytes_limit = 0;
  std::uint32_t max_message_bytes = 0;
  std::uint64_t max_append_bytes_per_sec = 0;
  std::uint64_t max_delivered_bytes_per_sec = 0;
  bool operator==(const StreamSettingsV2&) const = default;
};

struct CheckpointReceiptV2 {
  Bytes32 chain_instance_id{};
  Bytes32 stream_id{};
  Address provider{};
  Sequence first_sequence{};
  Sequence last_sequence{};
  Bytes32 records_digest{};
  Bytes32 previous_checkpoint{};
  std::uint64_t committed_at_ms = 0;
  std::uint64_t snapshot_height = 0;
  Signature signature;
  bool operator==(const CheckpointReceiptV2&) const = default;
};

}  // namespace cowboy::cbqs
