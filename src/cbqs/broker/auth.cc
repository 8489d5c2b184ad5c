#include "cbqs/broker/auth.h"

#include <algorithm>

#include "cbqs/chain/billing.h"
#include "cbqs/wire/ids.h"

namespace cowboy::cbqs::broker {

bool set_shape_valid(const LaneScope& scope, const Params& p) {
  const auto* set = std::get_if<LaneScopeSet>(&scope);
  if (!set) return true;
  const auto& ids = set->lane_ids;
  if (ids.size() < 2 || ids.size() > p.max_lane_ids_per_grant) return false;
  return std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>{}) == ids.end();  // sorted and unique
}

std::optional<ErrorCode> check_requested_scope(const LaneScope& requested, const Params& p) {
  if (!set_shape_valid(requested, p)) return ErrorCode::kInvalidLaneScope;
  auto names_lane_zero = [&] {
    if (const auto* e = std::get_if<LaneScopeExact>(&requested)) return e->lane_id == LaneId{0};
    if (const auto* s = std::get_if<LaneScopeSet>(&requested)) return s->lane_ids.front() == LaneId{0};
    return false;
  };
  if (names_lane_zero()) return ErrorCode::kInvalidLaneScope;  // 0 is never a lane id (§L)
  return std::nullopt;
}

std::optional<ErrorCode> check_grant_before_signature(const StreamGrantV2& g, const ChainView& view) {
  // 1. the exact chain_instance_id and stream_id
  if (g.chain_instance_id != view.chain_instance_id) return ErrorCode::kWrongChain;
  const StreamRecordV2* stream = view.stream(g.stream_id);
  if (!stream) return ErrorCode::kUnknownStream;
  if (stream->status == StreamStatusV2::kClosed) return ErrorCode::kStreamClosed;
  // 2. authorization_generation equal to the snapshot's
  if (g.authorization_generation != stream->authorization_generation) return ErrorCode::kGenerationMismatch;
  return std::nullopt;
}

// 3. the admin-key signature
bool grant_signature_valid(const StreamGrantV2& g, const SigningPublicKey& admin_key) {
  return verify(admin_key, stream_grant_signing_bytes_v2(g), g.signature);
}

std::optional<ErrorCode> check_grant_after_signature(const StreamGrantV2& g, const ChainView& view,
                                                     std::uint64_t now_ms) {
  const Params& p = view.params;
  // 4. the time window; the skew is added to the clock, never to a grant field
  if (g.not_before_ms > now_ms + p.max_clock_skew_ms) return ErrorCode::kGrantNotYetValid;
  if (now_ms > g.expires_at_ms) return ErrorCode::kGrantExpired;
  // 5. ordering before subtraction; then the lane Set shape
  if (!(g.not_before_ms < g.expires_at_ms)) return ErrorCode::kGrantTtlExceeded;
  if (g.expires_at_ms - g.not_before_ms > p.max_grant_ttl_ms) return ErrorCode::kGrantTtlExceeded;
  if (!set_shape_valid(g.lane_scope, p)) return ErrorCode::kInvalidLaneScope;
  // 6. no verb bit above 7
  if (g.verbs & ~verb::kAllowedBits) return ErrorCode::kInvalidVerbs;
  return std::nullopt;
}

std::optional<ErrorCode> check_grant(const StreamGrantV2& g, const ChainView& view, std::uint64_t now_ms) {
  if (auto e = check_grant_before_signature(g, view)) return e;
  if (!grant_signature_valid(g, view.stream(g.stream_id)->admin_key)) return ErrorCode::kBadGrantSignature;
  return check_grant_after_signature(g, view, now_ms);
}

std::optional<ErrorCode> check_standing(const StreamGrantV2& grant, const SigningPublicKey& admin_key_at_open,
                                        const ChainView& view, std::uint64_t now_ms) {
  const StreamRecordV2* stream = view.stream(grant.stream_id);
  if (!stream || stream->status == StreamStatusV2::kClosed) return ErrorCode::kStreamClosed;
  if (stream->authorization_generation != grant.authorization_generation) return ErrorCode::kGenerationMismatch;
  if (stream->admin_key != admin_key_at_open) return ErrorCode::kBadGrantSignature;
  if (now_ms > grant.expires_at_ms) return ErrorCode::kGrantExpired;
  return std::nullopt;
}

bool proof_fields_match(const SessionProofV2& proof, const StreamGrantV2& grant, const Bytes32& id) {
  return proof.grant_id == id && proof.stream_id == grant.stream_id &&
         proof.chain_instance_id == grant.chain_instance_id;
}

bool proof_signature_valid(const SessionProofV2& proof, const StreamGrantV2& grant) {
  return verify(grant.holder_signing_key, session_proof_signing_bytes_v2(proof), proof.signature);
}

std::optional<ErrorCode> check_proof(const SessionProofV2& proof, const StreamGrantV2& grant, const Bytes32& id) {
  if (!proof_fields_match(proof, grant, id)) return ErrorCode::kProofMismatch;
  if (!proof_signature_valid(proof, grant)) return ErrorCode::kBadProofSignature;
  return std::nullopt;
}

std::uint16_t required_verbs(const CbqsRequestBodyV2& body) {
  return std::visit(
      [](const auto& r) -> std::uint16_t {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, req::Append>) return verb::kAppend;
        else if constexpr (std::is_same_v<T, req::CreateLane> || std::is_same_v<T, req::CloseLane>) return verb::kManageLanes;
        else if constexpr (std::is_same_v<T, req::UpdateSettings>) return verb::kManageSettings;
        else if constexpr (std::is_same_v<T, req::GetCheckpoint>) return verb::kConsume | verb::kReplay;
        else if constexpr (std::is_same_v<T, req::CreateGroup> || std::is_same_v<T, req::UpdateGroup> ||
                           std::is_same_v<T, req::DeleteGroup>) return verb::kManageGroups;
        else if constexpr (std::is_same_v<T, req::GetGroup>) return verb::kConsume | verb::kManageGroups;
        else if constexpr (std::is_same_v<T, req::Subscribe>)
          return std::holds_alternative<SourceCursor>(r.source) ? verb::kReplay : verb::kConsume;
        else if constexpr (std::is_same_v<T, req::Ack> || std::is_same_v<T, req::Nack> ||
                           std::is_same_v<T, req::Extend> || std::is_same_v<T, req::Reject>) return verb::kConsume;
        else return 0;  // ListLanes, GetSettings, AddCredit, Unsubscribe, CloseSession
      },
      body);
}

bool lane_in_scope(const LaneScope& scope, LaneId lane_id) {
  if (std::holds_alternative<LaneScopeAny>(scope)) return true;
  if (const auto* e = std::get_if<LaneScopeExact>(&scope)) return e->lane_id == lane_id;
  const auto& ids = std::get<LaneScopeSet>(scope).lane_ids;
  return std::binary_search(ids.begin(), ids.end(), lane_id);
}

bool group_in_scope(const GroupScope& scope, GroupId group_id) {
  if (const auto* e = std::get_if<GroupScopeExact>(&scope)) return e->group_id == group_id;
  return true;
}

bool is_any(const LaneScope& scope) { return std::holds_alternative<LaneScopeAny>(scope); }
bool is_any(const GroupScope& scope) { return std::holds_alternative<GroupScopeAny>(scope); }

std::optional<LaneScope> intersect(const LaneScope& requested, const LaneScope& granted) {
  if (is_any(requested)) return granted;
  if (is_any(granted)) return requested;  // well-formed: check_requested_scope ran first
  auto ids_of = [](const LaneScope& s) {
    if (const auto* e = std::get_if<LaneScopeExact>(&s)) return std::vector<LaneId>{e->lane_id};
    return std::get<LaneScopeSet>(s).lane_ids;  // sorted and unique (§7 check 5, check_requested_scope)
  };
  auto a = ids_of(requested), b = ids_of(granted);
  std::vector<LaneId> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  if (both.empty()) return std::nullopt;
  if (both.size() == 1) return LaneScope{LaneScopeExact{both[0]}};
  return LaneScope{LaneScopeSet{std::move(both)}};
}

bool stream_solvent(const ChainView& view, const StreamRecordV2& stream) {
  const CbqsAccountV2* account = view.account_of(stream);
  return account && solvent(*account, view.height);
}

}  // namespace cowboy::cbqs::broker
