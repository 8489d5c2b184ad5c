#include "cbqs/wire/codec.h"

#include <concepts>

#include "cbqs/wire/limits.h"

namespace cowboy::cbqs {

using codec::Reader;
using codec::Writer;

namespace {

constexpr std::uint8_t kVersion = limits::kVersion;

// ---- the two walks of a field list ------------------------------------------------
// Each type lists its fields once (below, CBQS_FIELDS); Put writes them in that
// order and Get reads them back, bounding every length before it allocates.

struct Put {
  Writer& w;
  void version() { w.u8(kVersion); }
  void operator()(std::uint16_t v) { w.u16(v); }
  void operator()(std::uint32_t v) { w.u32(v); }
  void operator()(std::uint64_t v) { w.u64(v); }
  void operator()(u128 v) { w.u128(v); }
  void operator()(bool v) { w.boolean(v); }
  template <typename Tag, typename Rep>
  void operator()(const StrongId<Tag, Rep>& v) { (*this)(v.value); }  // the wire value alone
  template <std::size_t N>
  void operator()(const std::array<std::uint8_t, N>& v) { w.fixed(v); }
  template <typename T>
    requires requires(Writer& w, const T& v) { put(w, v); }
  void operator()(const T& v) { put(w, v); }
  template <typename T>
  void operator()(const std::optional<T>& v) { option(v, [&](const T& x) { (*this)(x); }); }
  template <typename T, typename F>
  void option(const std::optional<T>& v, F&& each) { w.option(v, each); }
  void bytes(const Bytes& v, std::size_t) { w.bytes(v); }
  /// Active = 1 | Closed = 2
  template <typename Enum>
  void status(Enum v) { w.u8(static_cast<std::uint8_t>(v)); }
  template <typename T, typename F>
  void list(const std::vector<T>& v, std::size_t, std::size_t, F&& each) {
    w.count(v.size());
    for (const auto& x : v) each(x);
  }
};

struct Get {
  Reader& r;
  void version() { r.version(kVersion); }
  void operator()(std::uint16_t& v) { v = r.u16(); }
  void operator()(std::uint32_t& v) { v = r.u32(); }
  void operator()(std::uint64_t& v) { v = r.u64(); }
  void operator()(u128& v) { v = r.u128(); }
  void operator()(bool& v) { v = r.boolean(); }
  template <typename Tag, typename Rep>
  void operator()(StrongId<Tag, Rep>& v) { (*this)(v.value); }
  template <std::size_t N>
  void operator()(std::array<std::uint8_t, N>& v) { v = r.fixed<N>(); }
  template <typename T>
    requires requires(Reader& r, T& v) { get(r, v); }
  void operator()(T& v) { get(r, v); }
  template <typename T>
  void operator()(std::optional<T>& v) { option(v, [&](T& x) { (*this)(x); }); }
  template <typename T, typename F>
  void option(std::optional<T>& v, F&& each) {
    if (!r.option_tag()) return;
    T x{};
    each(x);
    v = std::move(x);
  }
  void bytes(Bytes& v, std::size_t cap) { v = r.bytes(cap); }
  template <typename Enum>
  void status(Enum& v) {
    std::uint8_t s = r.u8();
    if (r.ok() && s != 1 && s != 2) r.fail(DecodeError::kUnknownVariant);
    v = static_cast<Enum>(s == 2 ? 2 : 1);
  }
  /// At most `cap` elements, each at least `min_bytes` long on the wire.
  template <typename T, typename F>
  void list(std::vector<T>& v, std::size_t cap, std::size_t min_bytes, F&& each) {
    std::uint32_t n = r.count(cap, min_bytes);
    v.clear();
    v.reserve(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
      T x{};
      each(x);
      v.push_back(std::move(x));
    }
  }
};

// fields(v, x): the one field list of a type, walked by Put (x const) or Get.
#define CBQS_FIELDS(Type)                                  \
  template <typename V, typename T>                        \
    requires std::same_as<std::remove_const_t<T>, Type>    \
  void fields([[maybe_unused]] V& v, [[maybe_unused]] T& x)

template <typename V, typename T>
void endpoints(V& v, T& list) {
  v.list(list, limits::kMaxProviderEndpoints, 4, [&](auto& e) { v.bytes(e, limits::kMaxProviderEndpointUriBytes); });
}

// ---- chain records -----------------------------------------------------------------
CBQS_FIELDS(ProviderRecordV2) {
  v.version();
  v(x.chain_instance_id), v(x.provider), v(x.signing_key), v(x.signing_key_since), v(x.previous_signing_key);
  v(x.previous_signing_key_since);
  endpoints(v, x.endpoints);
  v(x.accepts_new), v(x.max_streams), v(x.assigned_streams), v(x.metadata_hash);
}
CBQS_FIELDS(StreamRecordV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.owner), v(x.owner_nonce), v(x.admin_key), v(x.provider);
  v(x.authorization_generation);
  v.status(x.status);
}
CBQS_FIELDS(CbqsAccountV2) {
  v.version();
  v(x.owner), v(x.provider), v(x.balance), v(x.active_streams), v(x.rate_per_block), v(x.last_settled_block);
  v(x.suspended);
}

// ---- instructions: their fields; the SYS_CBQS payload adds version and tag ---------
CBQS_FIELDS(RegisterProviderV2) {
  v(x.signing_key);
  endpoints(v, x.endpoints);
  v(x.max_streams), v(x.accepts_new), v(x.metadata_hash);
}
CBQS_FIELDS(UpdateProviderV2) {
  v(x.signing_key);
  v.option(x.endpoints, [&](auto& e) { endpoints(v, e); });
  v(x.max_streams), v(x.accepts_new), v(x.metadata_hash);
}
CBQS_FIELDS(CreateStreamV2) { v(x.owner_nonce), v(x.provider), v(x.admin_key); }
CBQS_FIELDS(UpdateStreamV2) { v(x.stream_id), v(x.admin_key), v(x.bump_authorization_generation); }
CBQS_FIELDS(CloseStreamV2) { v(x.stream_id); }
CBQS_FIELDS(TopUpAccountV2) { v(x.owner), v(x.provider), v(x.amount); }
CBQS_FIELDS(SettleAccountV2) { v(x.owner), v(x.provider); }
CBQS_FIELDS(WithdrawAccountV2) { v(x.provider), v(x.amount); }

// ---- authorization -------------------------------------------------------------------
CBQS_FIELDS(LaneScopeAny) {}
CBQS_FIELDS(LaneScopeExact) { v(x.lane_id); }
CBQS_FIELDS(LaneScopeSet) { v.list(x.lane_ids, limits::kMaxLaneIdsPerGrant, 8, [&](auto& id) { v(id); }); }
CBQS_FIELDS(GroupScopeAny) {}
CBQS_FIELDS(GroupScopeExact) { v(x.group_id); }
CBQS_FIELDS(StreamGrantV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.authorization_generation), v(x.grant_nonce), v(x.holder_signing_key);
  v(x.verbs), v(x.lane_scope), v(x.group_scope), v(x.not_before_ms), v(x.expires_at_ms), v(x.max_message_bytes);
  v(x.max_append_bytes_per_sec), v(x.signature);
}
CBQS_FIELDS(SessionProofV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.grant_id), v(x.session_id), v(x.challenge), v(x.signature);
}

// ---- lanes, records, groups, settings, checkpoints ---------------------------------
CBQS_FIELDS(LaneRecordV2) {
  v.version();
  v(x.stream_id), v(x.lane_id);
  v.status(x.status);
}
CBQS_FIELDS(AppendRequestV2) {
  v(x.lane_id);
  v.bytes(x.payload, limits::kMaxMessageBytes);
}
CBQS_FIELDS(RecordHeaderV2) {
  v.version();
  v(x.stream_id), v(x.lane_id);
}
CBQS_FIELDS(StartHead) {}
CBQS_FIELDS(StartAt) { v(x.sequence); }
CBQS_FIELDS(GroupConfigV2) {
  v.version();
  v(x.group_id), v(x.lane_id), v(x.start), v(x.visibility_timeout_ms), v(x.max_visibility_ms), v(x.max_in_flight);
  v(x.max_in_flight_per_holder), v(x.max_attempts), v(x.record_deadline_ms);
}
CBQS_FIELDS(GroupCeilingsV2) { v(x.max_visibility_ms), v(x.max_attempts), v(x.max_in_flight); }
CBQS_FIELDS(StreamSettingsV2) {
  v.version();
  v(x.retention_ms), v(x.retained_bytes_limit), v(x.max_message_bytes), v(x.max_append_bytes_per_sec);
  v(x.max_delivered_bytes_per_sec);
}
CBQS_FIELDS(CheckpointReceiptV2) {
  v.version();
  v(x.chain_instance_id), v(x.stream_id), v(x.provider), v(x.first_sequence), v(x.last_sequence);
  v(x.records_digest), v(x.previous_checkpoint), v(x.committed_at_ms), v(x.snapshot_height), v(x.signature);
}

// ---- subscriptions, delivery state, rooms -----------------------------------------
CBQS_FIELDS(SourceCursor) { v(x.lane_scope), v(x.start); }
CBQS_FIELDS(SourceGroup) { v(x.lane_id), v(x.group_id); }
CBQS_FIELDS(CreditShort) { v(x.needed_bytes); }
CBQS_FIELDS(RoomMessages) { v(x.room_id); }
CBQS_FIELDS(RoomInbox) { v(x.room_id), v(x.seat_id); }

// ---- request bodies -------------------------------------------------------------------
CBQS_FIELDS(req::Append) { v(x.append); }
CBQS_FIELDS(req::CreateLane) { v(x.room); }
CBQS_FIELDS(req::CloseLane) { v(x.lane_id); }
CBQS_FIELDS(req::ListLanes) { v(x.after_lane_id), v(x.limit); }
CBQS_FIELDS(req::GetSettings) {}
CBQS_FIELDS(req::UpdateSettings) { v(x.settings); }
CBQS_FIELDS(req::GetCheckpoint) { v(x.covering_sequence); }
CBQS_FIELDS(req::CreateGroup) { v(x.config); }
CBQS_FIELDS(req::UpdateGroup) { v(x.config); }
CBQS_FIELDS(req::GetGroup) { v(x.group_id); }
CBQS_FIELDS(req::DeleteGroup) { v(x.group_id); }
CBQS_FIELDS(req::Subscribe) { v(x.source), v(x.initial_credit_bytes); }
CBQS_FIELDS(req::AddCredit) { v(x.subscription_id), v(x.credit_bytes); }
CBQS_FIELDS(req::Unsubscribe) { v(x.subscription_id); }
CBQS_FIELDS(req::Ack) { v(x.subscription_id), v(x.lease); }
CBQS_FIELDS(req::Nack) { v(x.subscription_id), v(x.lease); }
CBQS_FIELDS(req::Extend) { v(x.subscription_id), v(x.lease), v(x.extend_ms); }
CBQS_FIELDS(req::Reject) { v(x.subscription_id), v(x.lease); }
CBQS_FIELDS(req::CloseSession) {}

// ---- response bodies ------------------------------------------------------------------
constexpr std::size_t kLaneRecordBytes = 1 + 32 + 8 + 1;
CBQS_FIELDS(resp::Appended) { v(x.sequence); }
CBQS_FIELDS(resp::LaneCreated) { v(x.lane_id); }
CBQS_FIELDS(resp::Lanes) {
  v.list(x.lanes, limits::kMaxLaneListPage, kLaneRecordBytes, [&](auto& lane) { v(lane); });
  v(x.next_after_lane_id);
}
CBQS_FIELDS(resp::Settings) { v(x.settings), v(x.group_ceilings); }
CBQS_FIELDS(resp::Checkpoint) { v(x.receipt); }
CBQS_FIELDS(resp::Group) { v(x.config); }
CBQS_FIELDS(resp::GroupCreated) { v(x.group_id); }
CBQS_FIELDS(resp::Ok) {}
CBQS_FIELDS(resp::CursorProgress) { v(x.subscription_id), v(x.lane_id), v(x.scanned_through); }

// ---- frames ---------------------------------------------------------------------------
CBQS_FIELDS(OpenSession) { v(x.request_id), v(x.grant); }
CBQS_FIELDS(CompleteSession) { v(x.request_id), v(x.proof); }
CBQS_FIELDS(Request) { v(x.request_id), v(x.session_id), v(x.body); }
CBQS_FIELDS(SessionChallenge) { v(x.request_id), v(x.session_id), v(x.challenge), v(x.expires_at_ms); }
CBQS_FIELDS(SessionOpened) { v(x.request_id), v(x.session_id), v(x.snapshot_height); }
CBQS_FIELDS(Response) { v(x.request_id), v(x.body); }
CBQS_FIELDS(Delivery) {
  v(x.session_id), v(x.subscription_id), v(x.lease), v(x.header), v(x.sequence);
  v.bytes(x.payload, limits::kMaxMessageBytes);
}
CBQS_FIELDS(ErrorFrame) {
  v(x.request_id), v(x.code);
  v.bytes(x.message, limits::kMaxErrorMessageBytes);
  v.bytes(x.details, limits::kMaxErrorDetailsBytes);
}
CBQS_FIELDS(DeliveryState) { v(x.session_id), v(x.subscription_id), v(x.state); }

#undef CBQS_FIELDS

// ---- tagged unions: u8 tag (the alternative's kTag), then its fields --------------
template <typename... Ts>
void put_variant(Writer& w, const std::variant<Ts...>& v) {
  std::visit(
      [&](const auto& alt) {
        w.u8(std::decay_t<decltype(alt)>::kTag);
        Put p{w};
        fields(p, alt);
      },
      v);
}

template <std::size_t I = 0, typename... Ts>
void get_alternative(Reader& r, std::variant<Ts...>& out, std::uint8_t tag) {
  if constexpr (I < sizeof...(Ts)) {
    using Alt = std::variant_alternative_t<I, std::variant<Ts...>>;
    if (Alt::kTag == tag) {
      Alt alt{};
      Get g{r};
      fields(g, alt);
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

// ---- keys: an algorithm byte (Ed25519 only), then the bytes -------------------------
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

std::optional<Bytes32> client_frame_request_id(ByteView frame) {
  constexpr std::size_t kHeader = 2;  // version, variant
  if (frame.size() < kHeader + 32 || frame[0] != 2) return std::nullopt;
  if (frame[1] < 1 || frame[1] > std::variant_size_v<CbqsClientFrameV2>) return std::nullopt;
  Bytes32 id;
  std::copy_n(frame.begin() + kHeader, id.size(), id.begin());
  return id;
}

}  // namespace cowboy::cbqs
