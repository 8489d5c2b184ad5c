// §7 authorization as pure functions of (grant, snapshot, clock): the grant
// checks 1-6 at OpenSession, the proof checks at CompleteSession, a session's
// standing on every request, and the verb and scope rules of docs/protocol.md §C.
// Each returns the first failing check's §14 code (denial precedence, §D) or nullopt.
#pragma once

#include <optional>

#include "cbqs/broker/chain_view.h"
#include "cbqs/wire/errors.h"
#include "cbqs/wire/frames.h"
#include "cbqs/wire/verbs.h"

namespace cowboy::cbqs::broker {


/// §7 checks 1-6 in the seed's order (check 7 refuses nothing). The broker
/// runs them in three steps so that the signature (check 3) can wait in the
/// admission queue: before_signature (1-2), the signature, after_signature (4-6).
std::optional<ErrorCode> check_grant(const StreamGrantV2& grant, const ChainView& view, std::uint64_t now_ms);
std::optional<ErrorCode> check_grant_before_signature(const StreamGrantV2& grant, const ChainView& view);
bool grant_signature_valid(const StreamGrantV2& grant, const SigningPublicKey& admin_key);
std::optional<ErrorCode> check_grant_after_signature(const StreamGrantV2& grant, const ChainView& view,
                                                     std::uint64_t now_ms);

/// Is the session's grant still good under a (possibly newer) snapshot and the
/// clock? StreamClosed, GenerationMismatch, BadGrantSignature (the admin key
/// rotated), GrantExpired, or nullopt.
std::optional<ErrorCode> check_standing(const StreamGrantV2& grant, const SigningPublicKey& admin_key_at_open,
                                        const ChainView& view, std::uint64_t now_ms);

/// Proof checks after the (session_id, challenge) pair was matched and found
/// unexpired: ProofMismatch, BadProofSignature, or nullopt. Split likewise.
std::optional<ErrorCode> check_proof(const SessionProofV2& proof, const StreamGrantV2& grant, const Bytes32& grant_id);
bool proof_fields_match(const SessionProofV2& proof, const StreamGrantV2& grant, const Bytes32& grant_id);
bool proof_signature_valid(const SessionProofV2& proof, const StreamGrantV2& grant);

/// The verb mask a request needs (any one bit suffices); 0 = none needed.
std::uint16_t required_verbs(const CbqsRequestBodyV2& body);

bool lane_in_scope(const LaneScope& scope, LaneId lane_id);
bool group_in_scope(const GroupScope& scope, GroupId group_id);
bool is_any(const LaneScope& scope);
bool is_any(const GroupScope& scope);
/// §7 check 5's rule for a Set (2..=cbqs.max_lane_ids_per_grant ids, strictly
/// ascending); true for Any and Exact. One rule for grants and requests alike.
bool set_shape_valid(const LaneScope& scope, const Params& params);
/// A Cursor's requested scope (docs/protocol.md §L): a Set shaped as a grant's,
/// and no lane 0. InvalidLaneScope or nullopt.
std::optional<ErrorCode> check_requested_scope(const LaneScope& requested, const Params& params);
/// requested ∩ granted for a Cursor subscription, both well-formed; nullopt when
/// empty. A Set result is sorted and unique, as lane_in_scope's search needs.
std::optional<LaneScope> intersect(const LaneScope& requested, const LaneScope& granted);

/// §6.2 on the stream's account in this snapshot.
bool stream_solvent(const ChainView& view, const StreamRecordV2& stream);

}  // namespace cowboy::cbqs::broker
