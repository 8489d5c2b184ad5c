// §14 typed errors: the u16 codes carried by the Error frame. The table below
// is the single source; docs/protocol.md §D reproduces it and a test checks
// that the two agree. Codes are grouped by the stage that raises them, and the
// stage order is the denial precedence (lowest stage wins).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cowboy::cbqs {

#define CBQS_ERROR_CODES(X)                                                                      \
  /* 1xx framing */                                                                              \
  X(100, Malformed, "the frame failed strict decoding")                                          \
  X(101, UnsupportedVersion, "a version byte other than 2")                                      \
  X(102, FrameTooLarge, "the frame exceeds the connection's frame cap")                          \
  /* 2xx session */                                                                              \
  X(200, UnknownSession, "the session_id is not open on this connection")                        \
  X(201, SessionLimit, "cbqs.max_sessions_per_connection pairs already held")                    \
  X(202, ChallengeUnknown, "no such (session_id, challenge) pending on this connection")         \
  X(203, ChallengeExpired, "the proof arrived after the challenge expired")                      \
  X(204, ChainStateStale, "the broker's snapshot is older than cbqs.max_snapshot_age_blocks")    \
  X(205, ProofMismatch, "proof grant_id, stream_id or chain_instance_id differ from the grant") \
  X(206, BadProofSignature, "the proof signature does not verify under the holder key")          \
  /* 3xx grant (§7 checks 1-7, in that order) */                                                 \
  X(300, WrongChain, "the grant names another chain_instance_id")                                \
  X(301, UnknownStream, "the stream is unknown or not served by this provider")                  \
  X(302, StreamClosed, "the stream is Closed")                                                   \
  X(303, GenerationMismatch, "authorization_generation differs from the snapshot")               \
  X(304, BadGrantSignature, "the admin-key signature does not verify")                           \
  X(305, GrantNotYetValid, "not_before_ms > now + cbqs.max_clock_skew_ms")                       \
  X(306, GrantExpired, "now > expires_at_ms")                                                    \
  X(307, GrantTtlExceeded, "not_before_ms >= expires_at_ms or the lifetime exceeds the cap")     \
  X(308, InvalidLaneScope, "a Set scope that is not 2..=max sorted unique ids")                  \
  X(309, InvalidVerbs, "a verb bit above 7 is set")                                              \
  /* 4xx authorization */                                                                        \
  X(400, VerbNotGranted, "the grant lacks the verb this request needs")                          \
  X(401, LaneScopeTooNarrow, "the request needs a lane scope of Any")                            \
  X(402, GroupScopeTooNarrow, "the request needs a group scope of Any")                          \
  X(403, LaneNotInScope, "the lane is outside the grant's lane scope")                           \
  X(404, GroupNotInScope, "the group is outside the grant's group scope")                        \
  X(405, AccountInsolvent, "the stream's account fails the §6.2 solvency predicate")             \
  X(406, NotLeaseHolder, "the lease was issued to another holder")                               \
  /* 5xx objects */                                                                              \
  X(500, InvalidRequest, "a field value the request cannot carry")                               \
  X(501, UnknownLane, "no such lane")                                                            \
  X(502, LaneClosed, "the lane is Closed")                                                       \
  X(503, LaneLimit, "cbqs.max_lanes_per_stream reached")                                         \
  X(504, LaneIdConflict, "a derived room-lane id collides with another lane")                    \
  X(505, UnknownGroup, "no such group")                                                          \
  X(506, GroupLimit, "cbqs.max_groups_per_stream reached")                                       \
  X(507, InvalidGroupConfig, "a group field is zero or above its ceiling")                       \
  X(508, ImmutableField, "UpdateGroup changes an immutable field")                               \
  X(509, InvalidSettings, "a settings field is zero or above its ceiling")                       \
  X(510, InvalidPageLimit, "limit outside 1..=cbqs.max_lane_list_page")                          \
  X(511, UnknownSubscription, "no such subscription in this session")                            \
  X(512, SubscriptionExists, "the subscription_id is already open in this session")              \
  X(513, LeaseStale, "the lease is unknown, expired or already resolved")                        \
  X(514, DeliveryTerminal, "the delivery cycle is ACKED or EXPIRED")                             \
  X(515, CheckpointNotFound, "no retained checkpoint matches")                                   \
  X(516, SequenceNotRetained, "the sequence is below the retention floor")                       \
  /* 6xx flow and limits */                                                                      \
  X(600, MessageTooLarge, "the payload exceeds the effective max_message_bytes")                 \
  X(601, RateLimited, "the effective append rate is exhausted")                                  \
  X(602, Backpressure, "max_in_flight or max_in_flight_per_holder reached")                      \
  X(603, CreditOverflow, "the subscription's credit would exceed its cap")                       \
  X(604, SlowConsumer, "no credit was added within cbqs.slow_consumer_timeout_ms")               \
  /* 7xx server */                                                                               \
  X(700, Unavailable, "the broker cannot serve this now (shutting down or storage failure)")     \
  X(701, Internal, "an internal failure; nothing was applied")

enum class ErrorCode : std::uint16_t {
#define X(code, name, text) k##name = code,
  CBQS_ERROR_CODES(X)
#undef X
};

std::string_view error_name(ErrorCode code);
std::string_view error_description(ErrorCode code);
/// nullopt for a number the table does not define.
std::optional<ErrorCode> error_from_u16(std::uint16_t value);

}  // namespace cowboy::cbqs
