// CIP-11 wire frames (§12.1-§12.2).
//
//   +----------------+--------+---------------------------------------+
//   | length u32 BE  | type u8| payload: the body as deterministic    |
//   | = 1 + |payload||        | CBOR (cbor.h), a map keyed 0..n-1     |
//   +----------------+--------+---------------------------------------+
//
// A body is a CBOR map whose keys are the unsigned integers 0..n-1, one per
// field in the order the spec declares them (the rule §9.2 states for
// PendingSelectionV1, applied to every body; docs/cip11.md §Frames). Absent
// optionals are null. Enums are their §12.6 discriminant byte as an unsigned
// integer; the one enum with a payload, AckStatus::Reject(reason), is the
// two-element array [2, reason]. Fixed-size fields ([u8; 32], signatures) are
// byte strings of exactly that length; PubKeys are their tagged wire bytes.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cip11/errc.h"
#include "cip11/identity.h"
#include "cip11/ids.h"
#include "common/bytes.h"

namespace cowboy::cip11 {

constexpr std::uint32_t kMaxFrameBytes = 2 * 1024 * 1024;  // §13 MAX_FRAME_BYTES
constexpr std::uint16_t kProtocolVersion = 0x0100;         // §12.3: major 1, minor 0

/// §12.3: a different major is refused (Goodbye{UnsupportedVersion}); a higher
/// minor is refused too, since this implementation has no later minor's additions.
enum class VersionVerdict : std::uint8_t { kSupported, kUnsupportedMajor, kUnsupportedMinor };
constexpr VersionVerdict check_version(std::uint16_t offered, std::uint16_t ours = kProtocolVersion) {
  if ((offered >> 8) != (ours >> 8)) return VersionVerdict::kUnsupportedMajor;
  if ((offered & 0xff) > (ours & 0xff)) return VersionVerdict::kUnsupportedMinor;
  return VersionVerdict::kSupported;
}

enum class FrameType : std::uint8_t {
  kHello = 0x01,
  kHelloAck = 0x02,
  kHeartbeatPing = 0x10,
  kHeartbeatPong = 0x11,
  kBackpressureSignal = 0x12,
  kCapabilityDelta = 0x13,
  kPresenceReceipt = 0x14,  // V -> R, Mode A (§8.3): not in §12.2's table (docs/cip11.md choice 73)
  kJobAssignment = 0x20,
  kJobAck = 0x21,
  kJobProgress = 0x22,
  kJobResult = 0x23,
  kJobCancel = 0x24,
  kJobResultCommit = 0x25,
  kGoodbye = 0xF0,
};

// §12.6 discriminant tables.
enum class RejectReason : std::uint8_t {
  kAtCapacity = 0x00,
  kMissingEntitlement = 0x01,
  kMissingCapability = 0x02,
  kUnverifiableAssignment = 0x03,
  kOther = 0x04,
};
constexpr std::uint8_t kRejectReasonNotApplicable = 0xFF;

struct AckStatus {
  enum class Kind : std::uint8_t { kAccepted = 0x00, kDuplicate = 0x01, kReject = 0x02 };
  Kind kind = Kind::kAccepted;
  RejectReason reason = RejectReason::kOther;  // meaningful only for kReject

  static AckStatus accepted() { return {Kind::kAccepted, RejectReason::kOther}; }
  static AckStatus duplicate() { return {Kind::kDuplicate, RejectReason::kOther}; }
  static AckStatus reject(RejectReason r) { return {Kind::kReject, r}; }
  bool operator==(const AckStatus& o) const { return kind == o.kind && (kind != Kind::kReject || reason == o.reason); }
};

enum class CancelReason : std::uint8_t { kReassigned = 0x00, kExpired = 0x01, kFailed = 0x02 };

enum class GoodbyeReason : std::uint8_t {
  kUnsupportedVersion = 0x00,
  kWrongChain = 0x01,
  kAuthFailed = 0x02,
  kNotInSubset = 0x03,
  kOverlapExpired = 0x04,
  kRateLimited = 0x05,
  kProtocolError = 0x06,
  kDraining = 0x07,
  kShutdown = 0x08,
};

std::string_view goodbye_reason_name(GoodbyeReason r);  // "Shutdown", "AuthFailed", ...

/// A role-scheme signature whose length depends on who signed (64 or 65 bytes).
struct Sig {
  Bytes bytes;
  bool operator==(const Sig&) const = default;
};

using RunnerSig = std::array<std::uint8_t, 65>;
using ValidatorSig = std::array<std::uint8_t, 64>;

struct Hello {
  std::uint16_t version = kProtocolVersion;
  std::uint64_t chain_id = 0;
  Bytes32 validator_set_hash{};
  Epoch subset_epoch{};
  PubKey party_pubkey;
  Role party_role = Role::kRunner;
  Height block_height{};
  Bytes32 challenge_nonce{};
  bool operator==(const Hello&) const = default;
};

struct HelloAck {
  std::uint16_t version = kProtocolVersion;
  std::uint64_t chain_id = 0;
  Bytes32 validator_set_hash{};
  Epoch subset_epoch{};
  PubKey party_pubkey;
  Role party_role = Role::kRunner;
  Height block_height{};
  Sig signed_challenge;
  bool operator==(const HelloAck&) const = default;
};

struct HeartbeatPing {
  Height block_height{};
  std::uint64_t nonce = 0;
  RunnerSig signed_{};
  bool operator==(const HeartbeatPing&) const = default;
};

struct HeartbeatPong {
  Height block_height{};
  std::uint64_t nonce_echo = 0;
  bool accepting_new = false;
  ValidatorSig validator_signed{};
  bool operator==(const HeartbeatPong&) const = default;
};

struct BackpressureSignal {
  Height block_height{};
  std::uint32_t active_jobs = 0;
  std::uint32_t max_concurrent = 0;
  bool accepting_new = false;
  std::optional<std::string> reason;
  RunnerSig signed_{};
  bool operator==(const BackpressureSignal&) const = default;
};

struct CapabilityDelta {
  Height block_height{};
  std::vector<std::string> added_capabilities;
  std::vector<std::string> removed_capabilities;
  std::vector<Bytes32> added_entitlements;
  std::vector<Bytes32> removed_entitlements;
  RunnerSig signed_{};
  bool operator==(const CapabilityDelta&) const = default;
};

/// Mode A (§8.3): what a validator signs for a runner it holds a connection
/// to; receipt.h has its encoding as a record, its signing and verification.
struct PresenceReceipt {
  PubKey validator_pubkey;
  PubKey runner_pubkey;
  Epoch subset_epoch{};
  Bytes32 validator_set_hash{};
  Height block_height{};
  std::uint64_t nonce_echo = 0;
  bool accepting_new = false;
  ValidatorSig validator_signed{};
  bool operator==(const PresenceReceipt&) const = default;
};

struct JobAssignment {
  JobId job_id{};
  Bytes job_spec;  // cowboy-protocol-codec bytes, carried and hashed exactly as received
  Bytes32 job_spec_hash{};
  Height assignment_height{};
  Bytes32 assignment_hash{};
  Height deadline_block{};
  PubKey runner_pubkey;
  PubKey validator_pubkey;
  ValidatorSig validator_signed{};
  bool operator==(const JobAssignment&) const = default;
};

struct JobAck {
  JobId job_id{};
  Bytes32 assignment_hash{};
  AckStatus status;
  std::optional<std::string> reason;
  RunnerSig signed_{};
  bool operator==(const JobAck&) const = default;
};

struct JobProgress {
  JobId job_id{};
  std::uint8_t fraction = 0;  // 0..100
  std::optional<std::string> detail;
  bool operator==(const JobProgress&) const = default;
};

struct JobResult {
  JobId job_id{};
  Bytes tx_bytes;
  bool operator==(const JobResult&) const = default;
};

struct JobCancel {
  JobId job_id{};
  Bytes32 assignment_hash{};
  CancelReason reason = CancelReason::kReassigned;
  ValidatorSig validator_signed{};
  bool operator==(const JobCancel&) const = default;
};

struct JobResultCommit {
  JobId job_id{};
  Bytes tx_bytes;
  bool operator==(const JobResultCommit&) const = default;
};

struct Goodbye {
  GoodbyeReason reason = GoodbyeReason::kShutdown;
  std::optional<std::string> detail;
  std::optional<std::uint64_t> retry_after_blocks;
  std::optional<Sig> signed_;  // required after mutual auth, optional before (§12.5)
  bool operator==(const Goodbye&) const = default;
};

using Frame = std::variant<Hello, HelloAck, HeartbeatPing, HeartbeatPong, BackpressureSignal, CapabilityDelta,
                           JobAssignment, JobAck, JobProgress, JobResult, JobCancel, JobResultCommit, Goodbye,
                           PresenceReceipt>;

FrameType type_of(const Frame& frame);
/// The deterministic-CBOR body (the frame's payload).
Bytes encode_body(const Frame& frame);
/// length || type || body.
Bytes encode_frame(const Frame& frame);

struct DecodedFrame {
  Frame frame;
  std::size_t consumed;  // bytes of the input this frame took
};
/// Decodes the first frame at the start of `input` (a stream may hold more).
/// kFrameTruncated while the input is shorter than the frame; the length is
/// checked against MAX_FRAME_BYTES before anything else is read.
Res<DecodedFrame> decode_frame(ByteView input);
/// Decodes a payload as the exact body of `type`.
Res<Frame> decode_body(FrameType type, ByteView payload);

/// §12.6 canonical_frame_body: the body with its `signed` field left out.
Bytes canonical_frame_body(const BackpressureSignal& frame);
Bytes canonical_frame_body(const CapabilityDelta& frame);

}  // namespace cowboy::cip11
