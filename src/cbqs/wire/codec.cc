#include "cbqs/wire/codec.h"

#include "cbqs/wire/limits.h"

namespace cowboy::cbqs {

using codec::Reader;
using codec::Writer;

namespace {

constexpr std::uint8_t kVersion = limits::kVersion;

// Fields of each union alternative (the tag is written by put_variant).
void put_fields(Writer&, const LaneScopeAny&) {}
void get_fields(Reader&, LaneScopeAny&) {}
void put_fields(Writer& w, const LaneScopeExact& v) { w.u64(v.lane_id); }
void get_fields(Reader& r, LaneScopeExact& v) { v.lane_id = r.u64(); }
void put_fields(Writer& w, const LaneScopeSet& v) {
  w.count(v.lane_ids.size());
  for (auto id : v.lane_ids) w.u64(id);
}
void get_fields(Reader& r, LaneScopeSet& v) {
  std::uint32_t n = r.count(limits::kMaxLaneIdsPerGrant, 8);
  v.lane_ids.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) v.lane_ids.push_back(r.u64());
}
void put_fields(Writer&, const GroupScopeAny&) {}
void get_fields(Reader&, GroupScopeAny&) {}
void put_fields(Writer& w, const GroupScopeExact& v) { w.u64(v.group_id); }
void get_fields(Reader& r, GroupScopeExact& v) { v.group_id = r.u64(); }
void put_fields(Writer&, const StartHead&) {}
void get_fields(Reader&, StartHead&) {}
void put_fields(Writer& w, const StartAt& v) { w.u64(v.sequence); }
void get_fields(Reader& r, StartAt& v) { v.sequence = r.u64(); }

// ---- instructions --------------------------------------------------------
void put_endpoints(Writer& w, const std::vector<Bytes>& endpoints) {
  w.count(endpoints.size());
  for (const auto& e : endpoints) w.bytes(e);
}
std::vector<Bytes> get_endpoints(Reader& r) {
  std::uint32_t n = r.count(limits::kMaxProviderEndpoints, 4);
  std::vector<Bytes> out;
  out.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) out.push_back(r.bytes(limits::kMaxProviderEndpointUriBytes));
  return out;
}
template <typename T, typename GetFn>
void get_option(Reader& r, std::optional<T>& out, GetFn&& get_value) {
  if (r.option_tag()) out = get_value();
}

void put_fields(Writer& w, const RegisterProviderV2& v) {
  put(w, v.signing_key);
  put_endpoints(w, v.endpoints);
  w.u64(v.max_streams);
  w.boolean(v.accepts_new);
  w.fixed(v.metadata_hash);
}
void get_fields(Reader& r, RegisterProviderV2& v) {
  get(r, v.signing_key);
  v.endpoints = get_endpoints(r);
  v.max_streams = r.u64();
  v.accepts_new = r.boolean();
  v.metadata_hash = r.fixed<32>();
}
void put_fields(Writer& w, const UpdateProviderV2& v) {
  w.option(v.signing_key, [&](const auto& k) { put(w, k); });
  w.option(v.endpoints, [&](const auto& e) { put_endpoints(w, e); });
  w.option(v.max_streams, [&](auto m) { w.u64(m); });
  w.option(v.accepts_new, [&](auto a) { w.boolean(a); });
  w.option(v.metadata_hash, [&](const auto& h) { w.fixed(h); });
}
void get_fields(Reader& r, UpdateProviderV2& v) {
  get_option(r, v.signing_key, [&] { SigningPublicKey k; get(r, k); return k; });
  get_option(r, v.endpoints, [&] { return get_endpoints(r); });
  get_option(r, v.max_streams, [&] { return r.u64(); });
  get_option(r, v.accepts_new, [&] { return r.boolean(); });
  get_option(r, v.metadata_hash, [&] { return r.fixed<32>(); });
}
void put_fields(Writer& w, const CreateStreamV2& v) {
  w.u64(v.owner_nonce);
  w.fixed(v.provider);
  put(w, v.admin_key);
}
void get_fields(Reader& r, CreateStreamV2& v) {
  v.owner_nonce = r.u64();
  v.provider = r.fixed<20>();
  get(r, v.admin_key);
}
void put_fields(Writer& w, const UpdateStreamV2& v) {
  w.fixed(v.stream_id);
  w.option(v.admin_key, [&](const auto& k) { put(w, k); });
  w.boolean(v.bump_authorization_generation);
}
void get_fields(Reader& r, UpdateStreamV2& v) {
  v.stream_id = r.fixed<32>();
  get_option(r, v.admin_key, [&] { SigningPublicKey k; get(r, k); return k; });
  v.bump_authorization_generation = r.boolean();
}
void put_fields(Writer& w, const CloseStreamV2& v) { w.fixed(v.stream_id); }
void get_fields(Reader& r, CloseStreamV2& v) { v.stream_id = r.fixed<32>(); }
void put_fields(Writer& w, const TopUpAccountV2& v) {
  w.fixed(v.owner);
  w.fixed(v.provider);
  w.u128(v.amount);
}
void get_fields(Reader& r, TopUpAccountV2& v) {
  v.owner = r.fixed<20>();
  v.provider = r.fixed<20>();
  v.amount = r.u128();
}
void put_fields(Writer& w, const SettleAccountV2& v) {
  w.fixed(v.owner);
  w.fixed(v.provider);
}
void get_fields(Reader& r, SettleAccountV2& v) {
  v.owner = r.fixed<20>();
  v.provider = r.fixed<20>();
}
void put_fields(Writer& w, const WithdrawAccountV2& v) {
  w.fixed(v.provider);
  w.option(v.amount, [&](auto a) { w.u128(a); });
}
void get_fields(Reader& r, WithdrawAccountV2& v) {
  v.provider = r.fixed<20>();
  get_option(r, v.amount, [&] { return r.u128(); });
}

// ---- subscriptions, delivery state, rooms --------------------------------
void put_fields(Writer& w, const SourceCursor& v) {
  put(w, v.lane_scope);
  put(w, v.start);
}
void get_fields(Reader& r, SourceCursor& v) {
  get(r, v.lane_scope);
  get(r, v.start);
}
void put_fields(Writer& w, const SourceGroup& v) {
  w.u64(v.lane_id);
  w.u64(v.group_id);
}
void get_fields(Reader& r, SourceGroup& v) {
  v.lane_id = r.u64();
  v.group_id = r.u64();
}
void put_fields(Writer& w, const CreditShort& v) { w.u32(v.needed_bytes); }
void get_fields(Reader& r, CreditShort& v) { v.needed_bytes = r.u32(); }
void put_fields(Writer& w, const RoomMessages& v) { w.fixed(v.room_id); }
void get_fields(Reader& r, RoomMessages& v) { v.room_id = r.fixed<32>(); }
void put_fields(Writer& w, const RoomInbox& v) {
  w.fixed(v.room_id);
  w.fixed(v.seat_id);
}
void get_fields(Reader& r, RoomInbox& v) {
  v.room_id = r.fixed<32>();
  v.seat_id = r.fixed<32>();
}

// ---- request bodies --------------------------------------------------------
void put_fields(Writer& w, const req::Append& v) { put(w, v.append); }
void get_fields(Reader& r, req::Append& v) { get(r, v.append); }
void put_fields(Writer& w, const req::CreateLane& v) { w.option(v.room, [&](const auto& room) { put(w, room); }); }
void get_fields(Reader& r, req::CreateLane& v) {
  get_option(r, v.room, [&] { RoomLaneV2 room; get(r, room); return room; });
}
void put_fields(Writer& w, const req::CloseLane& v) { w.u64(v.lane_id); }
void get_fields(Reader& r, req::CloseLane& v) { v.lane_id = r.u64(); }
void put_fields(Writer& w, const req::ListLanes& v) {
  w.option(v.after_lane_id, [&](auto id) { w.u64(id); });
  w.u32(v.limit);
}
void get_fields(Reader& r, req::ListLanes& v) {
  get_option(r, v.after_lane_id, [&] { return r.u64(); });
  v.limit = r.u32();
}
void put_fields(Writer&, const req::GetSettings&) {}
void get_fields(Reader&, req::GetSettings&) {}
void put_fields(Writer& w, const req::UpdateSettings& v) { put(w, v.settings); }
void get_fields(Reader& r, req::UpdateSettings& v) { get(r, v.settings); }
void put_fields(Writer& w, const req::GetCheckpoint& v) { w.option(v.covering_sequence, [&](auto s) { w.u64(s); }); }
void get_fields(Reader& r, req::GetCheckpoint& v) { get_option(r, v.covering_sequence, [&] { return r.u64(); }); }
void put_fields(Writer& w, const req::CreateGroup& v) { put(w, v.config); }
void get_fields(Reader& r, req::CreateGroup& v) { get(r, v.config); }
void put_fields(Writer& w, const req::UpdateGroup& v) { put(w, v.config); }
void get_fields(Reader& r, req::UpdateGroup& v) { get(r, v.config); }
void put_fields(Writer& w, const req::GetGroup& v) { w.u64(v.group_id); }
void get_fields(Reader& r, req::GetGroup& v) { v.group_id = r.u64(); }
void put_fields(Writer& w, const req::DeleteGroup& v) { w.u64(v.group_id); }
void get_fields(Reader& r, req::DeleteGroup& v) { v.group_id = r.u64(); }
void put_fields(Writer& w, const req::Subscribe& v) {
  put(w, v.source);
  w.u64(v.initial_credit_bytes);
}
void get_fields(Reader& r, req::Subscribe& v) {
  get(r, v.source);
  v.initial_credit_bytes = r.u64();
}
void put_fields(Writer& w, const req::AddCredit& v) {
  w.fixed(v.subscription_id);
  w.u64(v.credit_bytes);
}
void get_fields(Reader& r, req::AddCredit& v) {
  v.subscription_id = r.fixed<32>();
  v.credit_bytes = r.u64();
}
void put_fields(Writer& w, const req::Unsubscribe& v) { w.fixed(v.subscription_id); }
void get_fields(Reader& r, req::Unsubscribe& v) { v.subscription_id = r.fixed<32>(); }
template <typename LeaseAction>
void put_lease_action(Writer& w, const LeaseAction& v) {
  w.fixed(v.subscription_id);
  w.fixed(v.lease);
}
template <typename LeaseAction>
void get_lease_action(Reader& r, LeaseAction& v) {
  v.subscription_id = r.fixed<32>();
  v.lease = r.fixed<32>();
}
void put_fields(Writer& w, const req::Ack& v) { put_lease_action(w, v); }
void get_fields(Reader& r, req::Ack& v) { get_lease_action(r, v); }
void put_fields(Writer& w, const req::Nack& v) { put_lease_action(w, v); }
void get_fields(Reader& r, req::Nack& v) { get_lease_action(r, v); }
void put_fields(Writer& w, const req::Reject& v) { put_lease_action(w, v); }
void get_fields(Reader& r, req::Reject& v) { get_lease_action(r, v); }
void put_fields(Writer& w, const req::Extend& v) {
  put_lease_action(w, v);
  w.u64(v.extend_ms);
}
void get_fields(Reader& r, req::Extend& v) {
  get_lease_action(r, v);
  v.extend_ms = r.u64();
}
void put_fields(Writer&, const req::CloseSession&) {}
void get_fields(Reader&, req::CloseSession&) {}

// ---- response bodies -------------------------------------------------------
void put_fields(Writer& w, const resp::Appended& v) { w.u64(v.sequence); }
void get_fields(Reader& r, resp::Appended& v) { v.sequence = r.u64(); }
void put_fields(Writer& w, const resp::LaneCreated& v) { w.u64(v.lane_id); }
void get_fields(Reader& r, resp::LaneCreated& v) { v.lane_id = r.u64(); }
constexpr std::size_t kLaneRecordBytes = 1 + 32 + 8 + 1;
void put_fields(Writer& w, const resp::Lanes& v) {
  w.count(v.lanes.size());
  for (const auto& lane : v.lanes) put(w, lane);
  w.option(v.next_after_lane_id, [&](auto id) { w.u64(id); });
}
void get_fields(Reader& r, resp::Lanes& v) {
  std::uint32_t n = r.count(limits::kMaxLaneListPage, kLaneRecordBytes);
  v.lanes.resize(n);
  for (auto& lane : v.lanes) get(r, lane);
  get_option(r, v.next_after_lane_id, [&] { return r.u64(); });
}
void put_fields(Writer& w, const resp::Settings& v) {
  put(w, v.settings);
  put(w, v.group_ceilings);
}
void get_fields(Reader& r, resp::Settings& v) {
  get(r, v.settings);
  get(r, v.group_ceilings);
}
void put_fields(Writer& w, const resp::Checkpoint& v) { put(w, v.receipt); }
void get_fields(Reader& r, resp::Checkpoint& v) { get(r, v.receipt); }
void put_fields(Writer& w, const resp::Group& v) { put(w, v.config); }
void get_fields(Reader& r, resp::Group& v) { get(r, v.config); }
void put_fields(Writer& w, const resp::GroupCreated& v) { w.u64(v.group_id); }
void get_fields(Reader& r, resp::GroupCreated& v) { v.group_id = r.u64(); }
void put_fields(Writer&, const resp::Ok&) {}
void get_fields(Reader&, resp::Ok&) {}
void put_fields(Writer& w, const resp::CursorProgress& v) {
  w.fixed(v.subscription_id);
  w.u64(v.lane_id);
  w.u64(v.scanned_through);
}
void get_fields(Reader& r, resp::CursorProgress& v) {
  v.subscription_id = r.fixed<32>();
  v.lane_id = r.u64();
  v.scanned_through = r.u64();
}

// ---- frames ----------------------------------------------------------------
void put_fields(Writer& w, const OpenSession& v) {
  w.fixed(v.request_id);
  put(w, v.grant);
}
void get_fields(Reader& r, OpenSession& v) {
  v.request_id = r.fixed<32>();
  get(r, v.grant);
}
void put_fields(Writer& w, const CompleteSession& v) {
  w.fixed(v.request_id);
  put(w, v.proof);
}
void get_fields(Reader& r, CompleteSession& v) {
  v.request_id = r.fixed<32>();
  get(r, v.proof);
}
void put_fields(Writer& w, const Request& v) {
  w.fixed(v.request_id);
  w.fixed(v.session_id);
  put(w, v.body);
}
void get_fields(Reader& r, Request& v) {
  v.request_id = r.fixed<32>();
  v.session_id = r.fixed<32>();
  get(r, v.body);
}
void put_fields(Writer& w, const SessionChallenge& v) {
  w.fixed(v.request_id);
  w.fixed(v.session_id);
  w.fixed(v.challenge);
  w.u64(v.expires_at_ms);
}
void get_fields(Reader& r, SessionChallenge& v) {
  v.request_id = r.fixed<32>();
  v.session_id = r.fixed<32>();
  v.challenge = r.fixed<32>();
  v.expires_at_ms = r.u64();
}
void put_fields(Writer& w, const SessionOpened& v) {
  w.fixed(v.request_id);
  w.fixed(v.session_id);
  w.u64(v.snapshot_height);
}
void get_fields(Reader& r, SessionOpened& v) {
  v.request_id = r.fixed<32>();
  v.session_id = r.fixed<32>();
  v.snapshot_height = r.u64();
}
void put_fields(Writer& w, const Response& v) {
  w.fixed(v.request_id);
  put(w, v.body);
}
void get_fields(Reader& r, Response& v) {
  v.request_id = r.fixed<32>();
  get(r, v.body);
}
void put_fields(Writer& w, const Delivery& v) {
  w.fixed(v.session_id);
  w.fixed(v.subscription_id);
  w.option(v.lease, [&](const auto& l) { w.fixed(l); });
  put(w, v.header);
  w.u64(v.sequence);
  w.bytes(v.payload);
}
void get_fields(Reader& r, Delivery& v) {
  v.session_id = r.fixed<32>();
  v.subscription_id = r.fixed<32>();
  get_option(r, v.lease, [&] { return r.fixed<32>(); });
  get(r, v.header);
  v.sequence = r.u64();
  v.payload = r.bytes(limits::kMaxMessageBytes);
}
void put_fields(Writer& w, const ErrorFrame& v) {
  w.option(v.request_id, [&](const auto& id) { w.fixed(id); });
  w.u16(v.code);
  w.bytes(v.message);
  w.bytes(v.details);
}
void get_fields(Reader& r, ErrorFrame& v) {
  get_option(r, v.request_id, [&] { return r.fixed<32>(); });
  v.code = r.u16();
  v.message = r.bytes(limits::kMaxErrorMessageBytes);
  v.details = r.bytes(limits::kMaxErrorDetailsBytes);
}
void put_fields(Writer& w, const DeliveryState& v) {
  w.fixed(v.session_id);
  w.fixed(v.subscription_id);
  put(w, v.state);
}
void get_fields(Reader& r, DeliveryState& v) {
  v.session_id = r.fixed<32>();
  v.subscription_id = r.fixed<32>();
  get(r, v.state);
}

// ---- tagged unions: u8 tag (the alternative's kTag), then its fields --------
template <typename... Ts>
void put_variant(Writer& w, const std::variant<Ts...>& v) {
  std::visit(
      [&](const auto& alt) {
        w.u8(std::decay_t<decltype(alt)>::kTag);
        put_fields(w, alt);
      },
      v);
}

template <std::size_t I = 0, typename... Ts>
void get_alternative(Reader& r, std::variant<Ts...>& out, std::uint8_t tag) {
  if constexpr (I < sizeof...(Ts)) {
    using Alt = std::variant_alternative_t<I, std::variant<Ts...>>;
    if (Alt::kTag == tag) {
      Alt alt{};
      get_fields(r, alt);
      out = std::move(alt);
      return;
    }
    get_alternative<I + 1>(r, out, tag);
  } else {
    r.fail(DecodeError::kUnknownVariant);
  }
}

template <typename... Ts>
void get_variant(Reader& r, std::variant<Ts...>& out) {
  std::uint8_t tag = r.u8();
  if (r.ok()) get_alternative(r, out, tag);
}

// Frames and the SYS_CBQS payload carry the version byte before the tag.
template <typename... Ts>
void put_versioned_variant(Writer& w, const std::variant<Ts...>& v) {
  w.u8(kVersion);
  put_variant(w, v);
}
template <typename... Ts>
void get_versioned_variant(Reader& r, std::variant<Ts...>& out) {
  r.version(kVersion);
  get_variant(r, out);
}

}  // namespace

// ---- keys --------------------------------------------------------------------
void put(Writer& w, const SigningPublicKey& v) {
  w.u8(static_cast<std::uint8_t>(v.alg));
  w.fixed(v.key);
}
void get(Reader& r, SigningPublicKey& v) {
  std::uint8_t alg = r.u8();
  if (r.ok() && alg != static_cast<std::uint8_t>(KeyAlg::kEd25519)) r.fail(DecodeError::kUnknownVariant);
  v.alg = KeyAlg::kEd25519;
  v.key = r.fixed<32>();
}
void put(Writer& w, const Signature& v) {
  w.u8(static_cast<std::uint8_t>(v.alg));
  w.fixed(v.bytes);
}
void get(Reader& r, Signature& v) {
  std::uint8_t alg = r.u8();
  if (r.ok() && alg != static_cast<std::uint8_t>(KeyAlg::kEd25519)) r.fail(DecodeError::kUnknownVariant);
  v.alg = KeyAlg::kEd25519;
  v.bytes = r.fixed<64>();
}

// ---- chain records -----------------------------------------------------------
void put(Writer& w, const ProviderRecordV2& v) {
  w.u8(kVersion);
  w.fixed(v.chain_instance_id);
  w.fixed(v.provider);
  put(w, v.signing_key);
  w.u64(v.signing_key_since);
  w.option(v.previous_signing_key, [&](const auto& k) { put(w, k); });
  w.u64(v.previous_signing_key_since);
  put_endpoints(w, v.endpoints);
  w.boolean(v.accepts_new);
  w.u64(v.max_streams);
  w.u64(v.assigned_streams);
  w.fixed(v.metadata_hash);
}
void get(Reader& r, ProviderRecordV2& v) {
  r.version(kVersion);
  v.chain_instance_id = r.fixed<32>();
  v.provider = r.fixed<20>();
  get(r, v.signing_key);
  v.signing_key_since = r.u64();
  get_option(r, v.previous_signing_key, [&] { SigningPublicKey k; get(r, k); return k; });
  v.previous_signing_key_since = r.u64();
  v.endpoints = get_endpoints(r);
  v.accepts_new = r.boolean();
  v.max_streams = r.u64();
  v.assigned_streams = r.u64();
  v.metadata_hash = r.fixed<32>();
}

namespace {
template <typename Enum>
Enum get_status(Reader& r) {  // Active = 1 | Closed = 2
  std::uint8_t s = r.u8();
  if (r.ok() && s != 1 && s != 2) r.fail(DecodeError::kUnknownVariant);
  return static_cast<Enum>(s == 2 ? 2 : 1);
}
}  // namespace

void put(Writer& w, const StreamRecordV2& v) {
  w.u8(kVersion);
  w.fixed(v.chain_instance_id);
  w.fixed(v.stream_id);
  w.fixed(v.owner);
  w.u64(v.owner_nonce);
  put(w, v.admin_key);
  w.fixed(v.provider);
  w.u64(v.authorization_generation);
  w.u8(static_cast<std::uint8_t>(v.status));
}
void get(Reader& r, StreamRecordV2& v) {
  r.version(kVersion);
  v.chain_instance_id = r.fixed<32>();
  v.stream_id = r.fixed<32>();
  v.owner = r.fixed<20>();
  v.owner_nonce = r.u64();
  get(r, v.admin_key);
  v.provider = r.fixed<20>();
  v.authorization_generation = r.u64();
  v.status = get_status<StreamStatusV2>(r);
}

void put(Writer& w, const CbqsAccountV2& v) {
  w.u8(kVersion);
  w.fixed(v.owner);
  w.fixed(v.provider);
  w.u128(v.balance);
  w.u64(v.active_streams);
  w.u128(v.rate_per_block);
  w.u64(v.last_settled_block);
  w.boolean(v.suspended);
}
void get(Reader& r, CbqsAccountV2& v) {
  r.version(kVersion);
  v.owner = r.fixed<20>();
  v.provider = r.fixed<20>();
  v.balance = r.u128();
  v.active_streams = r.u64();
  v.rate_per_block = r.u128();
  v.last_settled_block = r.u64();
  v.suspended = r.boolean();
}

// Instructions are encoded as their fields; the SYS_CBQS payload adds version + tag.
#define CBQS_FIELDS_CODEC(T)                                   \
  void put(Writer& w, const T& v) { put_fields(w, v); }         \
  void get(Reader& r, T& v) { get_fields(r, v); }
CBQS_FIELDS_CODEC(RegisterProviderV2)
CBQS_FIELDS_CODEC(UpdateProviderV2)
CBQS_FIELDS_CODEC(CreateStreamV2)
CBQS_FIELDS_CODEC(UpdateStreamV2)
CBQS_FIELDS_CODEC(CloseStreamV2)
CBQS_FIELDS_CODEC(TopUpAccountV2)
CBQS_FIELDS_CODEC(SettleAccountV2)
CBQS_FIELDS_CODEC(WithdrawAccountV2)
#undef CBQS_FIELDS_CODEC

void put(Writer& w, const CbqsInstructionV2& v) { put_versioned_variant(w, v); }
void get(Reader& r, CbqsInstructionV2& v) { get_versioned_variant(r, v); }

// ---- authorization -------------------------------------------------------------
void put(Writer& w, const LaneScope& v) { put_variant(w, v); }
void get(Reader& r, LaneScope& v) { get_variant(r, v); }
void put(Writer& w, const GroupScope& v) { put_variant(w, v); }
void get(Reader& r, GroupScope& v) { get_variant(r, v); }
void put(Writer& w, const StartPosition& v) { put_variant(w, v); }
void get(Reader& r, StartPosition& v) { get_variant(r, v); }

void put(Writer& w, const StreamGrantV2& v) {
  w.u8(kVersion);
  w.fixed(v.chain_instance_id);
  w.fixed(v.stream_id);
  w.u64(v.authorization_generation);
  w.fixed(v.grant_nonce);
  put(w, v.holder_signing_key);
  w.u16(v.verbs);
  put(w, v.lane_scope);
  put(w, v.group_scope);
  w.u64(v.not_before_ms);
  w.u64(v.expires_at_ms);
  w.u32(v.max_message_bytes);
  w.u64(v.max_append_bytes_per_sec);
  put(w, v.signature);
}
void get(Reader& r, StreamGrantV2& v) {
  r.version(kVersion);
  v.chain_instance_id = r.fixed<32>();
  v.stream_id = r.fixed<32>();
  v.authorization_generation = r.u64();
  v.grant_nonce = r.fixed<32>();
  get(r, v.holder_signing_key);
  v.verbs = r.u16();
  get(r, v.lane_scope);
  get(r, v.group_scope);
  v.not_before_ms = r.u64();
  v.expires_at_ms = r.u64();
  v.max_message_bytes = r.u32();
  v.max_append_bytes_per_sec = r.u64();
  get(r, v.signature);
}

void put(Writer& w, const SessionProofV2& v) {
  w.u8(kVersion);
  w.fixed(v.chain_instance_id);
  w.fixed(v.stream_id);
  w.fixed(v.grant_id);
  w.fixed(v.session_id);
  w.fixed(v.challenge);
  put(w, v.signature);
}
void get(Reader& r, SessionProofV2& v) {
  r.version(kVersion);
  v.chain_instance_id = r.fixed<32>();
  v.stream_id = r.fixed<32>();
  v.grant_id = r.fixed<32>();
  v.session_id = r.fixed<32>();
  v.challenge = r.fixed<32>();
  get(r, v.signature);
}

// ---- lanes, records, groups, settings, checkpoints --------------------------------
void put(Writer& w, const LaneRecordV2& v) {
  w.u8(kVersion);
  w.fixed(v.stream_id);
  w.u64(v.lane_id);
  w.u8(static_cast<std::uint8_t>(v.status));
}
void get(Reader& r, LaneRecordV2& v) {
  r.version(kVersion);
  v.stream_id = r.fixed<32>();
  v.lane_id = r.u64();
  v.status = get_status<LaneStatusV2>(r);
}

void put(Writer& w, const AppendRequestV2& v) {
  w.u64(v.lane_id);
  w.bytes(v.payload);
}
void get(Reader& r, AppendRequestV2& v) {
  v.lane_id = r.u64();
  v.payload = r.bytes(limits::kMaxMessageBytes);
}

void put(Writer& w, const RecordHeaderV2& v) {
  w.u8(kVersion);
  w.fixed(v.stream_id);
  w.u64(v.lane_id);
}
void get(Reader& r, RecordHeaderV2& v) {
  r.version(kVersion);
  v.stream_id = r.fixed<32>();
  v.lane_id = r.u64();
}

void put(Writer& w, const GroupConfigV2& v) {
  w.u8(kVersion);
  w.u64(v.group_id);
  w.u64(v.lane_id);
  put(w, v.start);
  w.u64(v.visibility_timeout_ms);
  w.u64(v.max_visibility_ms);
  w.u32(v.max_in_flight);
  w.u32(v.max_in_flight_per_holder);
  w.u16(v.max_attempts);
  w.u64(v.record_deadline_ms);
}
void get(Reader& r, GroupConfigV2& v) {
  r.version(kVersion);
  v.group_id = r.u64();
  v.lane_id = r.u64();
  get(r, v.start);
  v.visibility_timeout_ms = r.u64();
  v.max_visibility_ms = r.u64();
  v.max_in_flight = r.u32();
  v.max_in_flight_per_holder = r.u32();
  v.max_attempts = r.u16();
  v.record_deadline_ms = r.u64();
}

void put(Writer& w, const GroupCeilingsV2& v) {
  w.u64(v.max_visibility_ms);
  w.u16(v.max_attempts);
  w.u32(v.max_in_flight);
}
void get(Reader& r, GroupCeilingsV2& v) {
  v.max_visibility_ms = r.u64();
  v.max_attempts = r.u16();
  v.max_in_flight = r.u32();
}

void put(Writer& w, const StreamSettingsV2& v) {
  w.u8(kVersion);
  w.u64(v.retention_ms);
  w.u64(v.retained_bytes_limit);
  w.u32(v.max_message_bytes);
  w.u64(v.max_append_bytes_per_sec);
  w.u64(v.max_delivered_bytes_per_sec);
}
void get(Reader& r, StreamSettingsV2& v) {
  r.version(kVersion);
  v.retention_ms = r.u64();
  v.retained_bytes_limit = r.u64();
  v.max_message_bytes = r.u32();
  v.max_append_bytes_per_sec = r.u64();
  v.max_delivered_bytes_per_sec = r.u64();
}

void put(Writer& w, const CheckpointReceiptV2& v) {
  w.u8(kVersion);
  w.fixed(v.chain_instance_id);
  w.fixed(v.stream_id);
  w.fixed(v.provider);
  w.u64(v.first_sequence);
  w.u64(v.last_sequence);
  w.fixed(v.records_digest);
  w.fixed(v.previous_checkpoint);
  w.u64(v.committed_at_ms);
  w.u64(v.snapshot_height);
  put(w, v.signature);
}
void get(Reader& r, CheckpointReceiptV2& v) {
  r.version(kVersion);
  v.chain_instance_id = r.fixed<32>();
  v.stream_id = r.fixed<32>();
  v.provider = r.fixed<20>();
  v.first_sequence = r.u64();
  v.last_sequence = r.u64();
  v.records_digest = r.fixed<32>();
  v.previous_checkpoint = r.fixed<32>();
  v.committed_at_ms = r.u64();
  v.snapshot_height = r.u64();
  get(r, v.signature);
}

// ---- unions and frames -----------------------------------------------------------
void put(Writer& w, const SubscriptionSourceV2& v) { put_variant(w, v); }
void get(Reader& r, SubscriptionSourceV2& v) { get_variant(r, v); }
void put(Writer& w, const DeliveryStateBodyV2& v) { put_variant(w, v); }
void get(Reader& r, DeliveryStateBodyV2& v) { get_variant(r, v); }
void put(Writer& w, const RoomLaneV2& v) { put_variant(w, v); }
void get(Reader& r, RoomLaneV2& v) { get_variant(r, v); }
void put(Writer& w, const CbqsRequestBodyV2& v) { put_variant(w, v); }
void get(Reader& r, CbqsRequestBodyV2& v) { get_variant(r, v); }
void put(Writer& w, const CbqsResponseBodyV2& v) { put_variant(w, v); }
void get(Reader& r, CbqsResponseBodyV2& v) { get_variant(r, v); }
void put(Writer& w, const CbqsClientFrameV2& v) { put_versioned_variant(w, v); }
void get(Reader& r, CbqsClientFrameV2& v) { get_versioned_variant(r, v); }
void put(Writer& w, const CbqsServerFrameV2& v) { put_versioned_variant(w, v); }
void get(Reader& r, CbqsServerFrameV2& v) { get_versioned_variant(r, v); }

std::optional<Bytes32> client_frame_request_id(ByteView frame) {
  constexpr std::size_t kHeader = 2;  // version, variant
  if (frame.size() < kHeader + 32 || frame[0] != 2) return std::nullopt;
  if (frame[1] < 1 || frame[1] > std::variant_size_v<CbqsClientFrameV2>) return std::nullopt;
  Bytes32 id;
  std::copy_n(frame.begin() + kHeader, id.size(), id.begin());
  return id;
}

}  // namespace cowboy::cbqs
