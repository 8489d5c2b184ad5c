#include "cbqs/wire/codec.h"

#include "cbqs/wire/limits.h"
#include "common/fields.h"

namespace cowboy::cbqs {

using codec::Reader;
using codec::Writer;

namespace {

// Each type lists its fields once (below, COWBOY_FIELDS); common/fields.h's Put
// writes them in that order and Get reads them back, bounding every length before
// it allocates.
struct Wire {
  static constexpr std::uint8_t kVersion = limits::kVersion;
};
using Put = codec::Put<Wire>;
using Get = codec::Get<Wire>;

/// The key algorithm byte: Ed25519 = 1 only.
template <typename V, typename Alg>
void key_alg(V& v, Alg& alg) {
  v.enumeration(alg, [](std::uint8_t b) { return b == static_cast<std::uint8_t>(KeyAlg::kEd25519); },
                DecodeError::kUnknownVariant);
}

/// Active = 1 | Closed = 2
template <typename V, typename Enum>
void status(V& v, Enum& s) {
  v.enumeration(s, [](std::uint8_t b) { return b == 1 || b == 2; }, DecodeError::kUnknownVariant);
}

template <typename V, typename T>
void endpoints(V& v, T& list) {
  v.list(list, limits::kMaxProviderEndpoints, 4, [&](auto& e) { v.bytes(e, limits::kMaxProviderEndpointUriBytes); });
}

// ---- keys: an algorithm byte, then the bytes ---------------------------------------
COWBOY_FIELDS(SigningPublicKey) {
  key_alg(v, x.alg);
  v(x.key);
}
COWBOY_FIELDS(Signature) {
  key_alg(v, x.alg);
  v(x.bytes);
}

// ---- chain records -----------------------------------------------------------------
COWBOY_FIELDS(ProviderRecordV2) {
  v.version();
  v(x.chain_instance_id), v(x.provider), v(x.signing_key), v(x.signing_key_since), v(x.previous_signing_key);
  v(x.previous_signing_key_since);
  endpoints(v, x.endpoints);
  v(x.accepts_new), v(x.max_streams), v(x.assigned_streams), v(x.metadata_hash);
}
COWBOY_FIELDS(StreamRecordV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.owner), v(x.owner_nonce), v(x.admin_key), v(x.provider);
  v(x.authorization_generation);
  status(v, x.status);
}
COWBOY_FIELDS(CbqsAccountV2) {
  v.version();
  v(x.owner), v(x.provider), v(x.balance), v(x.active_streams), v(x.rate_per_block), v(x.last_settled_block);
  v(x.suspended);
}

// ---- instructions: their fields; the SYS_CBQS payload adds version and tag ---------
COWBOY_FIELDS(RegisterProviderV2) {
  v(x.signing_key);
  endpoints(v, x.endpoints);
  v(x.max_streams), v(x.accepts_new), v(x.metadata_hash);
}
COWBOY_FIELDS(UpdateProviderV2) {
  v(x.signing_key);
  v.option(x.endpoints, [&](auto& e) { endpoints(v, e); });
  v(x.max_streams), v(x.accepts_new), v(x.metadata_hash);
}
COWBOY_FIELDS(CreateStreamV2) { v(x.owner_nonce), v(x.provider), v(x.admin_key); }
COWBOY_FIELDS(UpdateStreamV2) { v(x.stream_id), v(x.admin_key), v(x.bump_authorization_generation); }
COWBOY_FIELDS(CloseStreamV2) { v(x.stream_id); }
COWBOY_FIELDS(TopUpAccountV2) { v(x.owner), v(x.provider), v(x.amount); }
COWBOY_FIELDS(SettleAccountV2) { v(x.owner), v(x.provider); }
COWBOY_FIELDS(WithdrawAccountV2) { v(x.provider), v(x.amount); }

// ---- authorization -------------------------------------------------------------------
COWBOY_FIELDS(LaneScopeAny) {}
COWBOY_FIELDS(LaneScopeExact) { v(x.lane_id); }
COWBOY_FIELDS(LaneScopeSet) { v.list(x.lane_ids, limits::kMaxLaneIdsPerGrant, 8, [&](auto& id) { v(id); }); }
COWBOY_FIELDS(GroupScopeAny) {}
COWBOY_FIELDS(GroupScopeExact) { v(x.group_id); }
COWBOY_FIELDS(StreamGrantV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.authorization_generation), v(x.grant_nonce), v(x.holder_signing_key);
  v(x.verbs), v(x.lane_scope), v(x.group_scope), v(x.not_before_ms), v(x.expires_at_ms), v(x.max_message_bytes);
  v(x.max_append_bytes_per_sec), v(x.signature);
}
COWBOY_FIELDS(SessionProofV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.grant_id), v(x.session_id), v(x.challenge), v(x.signature);
}

// ---- lanes, records, groups, settings, checkpoints ---------------------------------
COWBOY_FIELDS(LaneRecordV2) {
  v.version();
  v(x.stream_id), v(x.lane_id);
  status(v, x.status);
}
COWBOY_FIELDS(AppendRequestV2) {
  v(x.lane_id);
  v.bytes(x.payload, limits::kMaxMessageBytes);
}
COWBOY_FIELDS(RecordHeaderV2) {
  v.version();
  v(x.stream_id), v(x.lane_id);
}
COWBOY_FIELDS(StartHead) {}
COWBOY_FIELDS(StartAt) { v(x.sequence); }
COWBOY_FIELDS(GroupConfigV2) {
  v.version();
  v(x.group_id), v(x.lane_id), v(x.start), v(x.visibility_timeout_ms), v(x.max_visibility_ms), v(x.max_in_flight);
  v(x.max_in_flight_per_holder), v(x.max_attempts), v(x.record_deadline_ms);
}
COWBOY_FIELDS(GroupCeilingsV2) { v(x.max_visibility_ms), v(x.max_attempts), v(x.max_in_flight); }
COWBOY_FIELDS(StreamSettingsV2) {
  v.version();
  v(x.retention_ms), v(x.retained_bytes_limit), v(x.max_message_bytes), v(x.max_append_bytes_per_sec);
  v(x.max_delivered_bytes_per_sec);
}
COWBOY_FIELDS(CheckpointReceiptV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.provider), v(x.first_sequence), v(x.last_sequence);
  v(x.records_digest), v(x.previous_checkpoint), v(x.committed_at_ms), v(x.snapshot_height), v(x.signature);
}

// ---- subscriptions, delivery state, rooms -----------------------------------------
COWBOY_FIELDS(SourceCursor) { v(x.lane_scope), v(x.start); }
COWBOY_FIELDS(SourceGroup) { v(x.lane_id), v(x.group_id); }
COWBOY_FIELDS(CreditShort) { v(x.needed_bytes); }
COWBOY_FIELDS(RoomMessages) { v(x.room_id); }
COWBOY_FIELDS(RoomInbox) { v(x.room_id), v(x.seat_id); }

// ---- request bodies -------------------------------------------------------------------
COWBOY_FIELDS(req::Append) { v(x.append); }
COWBOY_FIELDS(req::CreateLane) { v(x.room); }
COWBOY_FIELDS(req::CloseLane) { v(x.lane_id); }
COWBOY_FIELDS(req::ListLanes) { v(x.after_lane_id), v(x.limit); }
COWBOY_FIELDS(req::GetSettings) {}
COWBOY_FIELDS(req::UpdateSettings) { v(x.settings); }
COWBOY_FIELDS(req::GetCheckpoint) { v(x.covering_sequence); }
COWBOY_FIELDS(req::CreateGroup) { v(x.config); }
COWBOY_FIELDS(req::UpdateGroup) { v(x.config); }
COWBOY_FIELDS(req::GetGroup) { v(x.group_id); }
COWBOY_FIELDS(req::DeleteGroup) { v(x.group_id); }
COWBOY_FIELDS(req::Subscribe) { v(x.source), v(x.initial_credit_bytes); }
COWBOY_FIELDS(req::AddCredit) { v(x.subscription_id), v(x.credit_bytes); }
COWBOY_FIELDS(req::Unsubscribe) { v(x.subscription_id); }
COWBOY_FIELDS(req::Ack) { v(x.subscription_id), v(x.lease); }
COWBOY_FIELDS(req::Nack) { v(x.subscription_id), v(x.lease); }
COWBOY_FIELDS(req::Extend) { v(x.subscription_id), v(x.lease), v(x.extend_ms); }
COWBOY_FIELDS(req::Reject) { v(x.subscription_id), v(x.lease); }
COWBOY_FIELDS(req::CloseSession) {}

// ---- response bodies ------------------------------------------------------------------
constexpr std::size_t kLaneRecordBytes = 1 + 32 + 8 + 1;
COWBOY_FIELDS(resp::Appended) { v(x.sequence); }
COWBOY_FIELDS(resp::LaneCreated) { v(x.lane_id); }
COWBOY_FIELDS(resp::Lanes) {
  v.list(x.lanes, limits::kMaxLaneListPage, kLaneRecordBytes, [&](auto& lane) { v(lane); });
  v(x.next_after_lane_id);
}
COWBOY_FIELDS(resp::Settings) { v(x.settings), v(x.group_ceilings); }
COWBOY_FIELDS(resp::Checkpoint) { v(x.receipt); }
COWBOY_FIELDS(resp::Group) { v(x.config); }
COWBOY_FIELDS(resp::GroupCreated) { v(x.group_id); }
COWBOY_FIELDS(resp::Ok) {}
COWBOY_FIELDS(resp::CursorProgress) { v(x.subscription_id), v(x.lane_id), v(x.scanned_through); }

// ---- frames ---------------------------------------------------------------------------
COWBOY_FIELDS(OpenSession) { v(x.request_id), v(x.grant); }
COWBOY_FIELDS(CompleteSession) { v(x.request_id), v(x.proof); }
COWBOY_FIELDS(Request) { v(x.request_id), v(x.session_id), v(x.body); }
COWBOY_FIELDS(SessionChallenge) { v(x.request_id), v(x.session_id), v(x.challenge), v(x.expires_at_ms); }
COWBOY_FIELDS(SessionOpened) { v(x.request_id), v(x.session_id), v(x.snapshot_height); }
COWBOY_FIELDS(Response) { v(x.request_id), v(x.body); }
COWBOY_FIELDS(Delivery) {
  v(x.session_id), v(x.subscription_id), v(x.lease), v(x.header), v(x.sequence);
  v.bytes(x.payload, limits::kMaxMessageBytes);
}
COWBOY_FIELDS(ErrorFrame) {
  v(x.request_id), v(x.code);
  v.bytes(x.message, limits::kMaxErrorMessageBytes);
  v.bytes(x.details, limits::kMaxErrorDetailsBytes);
}
COWBOY_FIELDS(DeliveryState) { v(x.session_id), v(x.subscription_id), v(x.state); }


// ---- tagged unions: u8 tag (the alternative's kTag), then its fields --------------
// Frames and the SYS_CBQS payload carry the version byte before the tag.
template <typename... Ts>
void put_variant(Writer& w, const std::variant<Ts...>& v) { Put{w}.variant(v); }
template <typename... Ts>
void get_variant(Reader& r, std::variant<Ts...>& out) { Get{r}.variant(out); }
template <typename... Ts>
void put_versioned_variant(Writer& w, const std::variant<Ts...>& v) {
  Put p{w};
  p.version();
  p.variant(v);
}
template <typename... Ts>
void get_versioned_variant(Reader& r, std::variant<Ts...>& out) {
  Get g{r};
  g.version();
  g.variant(out);
}

}  // namespace

// ---- every other type: its field list, or its union ---------------------------------
#define CBQS_CODEC_FROM_FIELDS(T)                               \
  void put(Writer& w, const T& v) {                             \
    Put p{w};                                                   \
    fields(p, v);                                               \
  }                                                             \
  void get(Reader& r, T& v) {                                   \
    Get g{r};                                                   \
    fields(g, v);                                               \
  }
CBQS_CODEC_FROM_FIELDS(SigningPublicKey)
CBQS_CODEC_FROM_FIELDS(Signature)
CBQS_CODEC_FROM_FIELDS(ProviderRecordV2)
CBQS_CODEC_FROM_FIELDS(StreamRecordV2)
CBQS_CODEC_FROM_FIELDS(CbqsAccountV2)
CBQS_CODEC_FROM_FIELDS(RegisterProviderV2)
CBQS_CODEC_FROM_FIELDS(UpdateProviderV2)
CBQS_CODEC_FROM_FIELDS(CreateStreamV2)
CBQS_CODEC_FROM_FIELDS(UpdateStreamV2)
CBQS_CODEC_FROM_FIELDS(CloseStreamV2)
CBQS_CODEC_FROM_FIELDS(TopUpAccountV2)
CBQS_CODEC_FROM_FIELDS(SettleAccountV2)
CBQS_CODEC_FROM_FIELDS(WithdrawAccountV2)
CBQS_CODEC_FROM_FIELDS(StreamGrantV2)
CBQS_CODEC_FROM_FIELDS(SessionProofV2)
CBQS_CODEC_FROM_FIELDS(LaneRecordV2)
CBQS_CODEC_FROM_FIELDS(AppendRequestV2)
CBQS_CODEC_FROM_FIELDS(RecordHeaderV2)
CBQS_CODEC_FROM_FIELDS(GroupConfigV2)
CBQS_CODEC_FROM_FIELDS(GroupCeilingsV2)
CBQS_CODEC_FROM_FIELDS(StreamSettingsV2)
CBQS_CODEC_FROM_FIELDS(CheckpointReceiptV2)
#undef CBQS_CODEC_FROM_FIELDS

#define CBQS_CODEC_OF_UNION(T, put_union, get_union)     \
  void put(Writer& w, const T& v) { put_union(w, v); }   \
  void get(Reader& r, T& v) { get_union(r, v); }
CBQS_CODEC_OF_UNION(LaneScope, put_variant, get_variant)
CBQS_CODEC_OF_UNION(GroupScope, put_variant, get_variant)
CBQS_CODEC_OF_UNION(StartPosition, put_variant, get_variant)
CBQS_CODEC_OF_UNION(SubscriptionSourceV2, put_variant, get_variant)
CBQS_CODEC_OF_UNION(DeliveryStateBodyV2, put_variant, get_variant)
CBQS_CODEC_OF_UNION(RoomLaneV2, put_variant, get_variant)
CBQS_CODEC_OF_UNION(CbqsRequestBodyV2, put_variant, get_variant)
CBQS_CODEC_OF_UNION(CbqsResponseBodyV2, put_variant, get_variant)
CBQS_CODEC_OF_UNION(CbqsClientFrameV2, put_versioned_variant, get_versioned_variant)
CBQS_CODEC_OF_UNION(CbqsServerFrameV2, put_versioned_variant, get_versioned_variant)
CBQS_CODEC_OF_UNION(CbqsInstructionV2, put_versioned_variant, get_versioned_variant)
#undef CBQS_CODEC_OF_UNION

namespace {
constexpr std::size_t kFrameRoom = 256;  // every field of a frame but its payload
}  // namespace

std::size_t encoded_room(const CbqsClientFrameV2& frame) {
  const auto* request = std::get_if<Request>(&frame);
  const auto* append = request ? std::get_if<req::Append>(&request->body) : nullptr;
  return kFrameRoom + (append ? append->append.payload.size() : 0);
}

std::size_t encoded_room(const CbqsServerFrameV2& frame) {
  const auto* delivery = std::get_if<Delivery>(&frame);
  return kFrameRoom + (delivery ? delivery->payload.size() : 0);
}

std::optional<Bytes32> client_frame_request_id(ByteView frame) {
  constexpr std::size_t kHeader = 2;  // version, variant
  if (frame.size() < kHeader + 32 || frame[0] != 2) return std::nullopt;
  if (frame[1] < 1 || frame[1] > std::variant_size_v<CbqsClientFrameV2>) return std::nullopt;
  Bytes32 id;
  std::copy_n(frame.begin() + kHeader, id.size(), id.begin());
  return id;
}

}  // namespace cowboy::cbqs
