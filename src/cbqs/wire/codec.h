// The one CIP-39 codec: canonical encode and strict decode for every object and
// frame in types.h and frames.h. Everything else in the project calls this.
//
//   Bytes b = encode(grant);
//   auto g = decode<StreamGrantV2>(b);   // Result<StreamGrantV2, DecodeError>
//
// decode<T> requires the whole input to be exactly one T (no trailing bytes).
#pragma once

#include "cbqs/wire/frames.h"
#include "common/codec.h"

namespace cowboy::cbqs {

using codec::DecodeError;

#define CBQS_DECLARE_CODEC(T)            \
  void put(codec::Writer& w, const T& v); \
  void get(codec::Reader& r, T& v);

CBQS_DECLARE_CODEC(SigningPublicKey)
CBQS_DECLARE_CODEC(Signature)
CBQS_DECLARE_CODEC(ProviderRecordV2)
CBQS_DECLARE_CODEC(StreamRecordV2)
CBQS_DECLARE_CODEC(CbqsAccountV2)
CBQS_DECLARE_CODEC(RegisterProviderV2)
CBQS_DECLARE_CODEC(UpdateProviderV2)
CBQS_DECLARE_CODEC(CreateStreamV2)
CBQS_DECLARE_CODEC(UpdateStreamV2)
CBQS_DECLARE_CODEC(CloseStreamV2)
CBQS_DECLARE_CODEC(TopUpAccountV2)
CBQS_DECLARE_CODEC(SettleAccountV2)
CBQS_DECLARE_CODEC(WithdrawAccountV2)
CBQS_DECLARE_CODEC(LaneScope)
CBQS_DECLARE_CODEC(GroupScope)
CBQS_DECLARE_CODEC(StreamGrantV2)
CBQS_DECLARE_CODEC(SessionProofV2)
CBQS_DECLARE_CODEC(LaneRecordV2)
CBQS_DECLARE_CODEC(AppendRequestV2)
CBQS_DECLARE_CODEC(RecordHeaderV2)
CBQS_DECLARE_CODEC(StartPosition)
CBQS_DECLARE_CODEC(GroupConfigV2)
CBQS_DECLARE_CODEC(GroupCeilingsV2)
CBQS_DECLARE_CODEC(StreamSettingsV2)
CBQS_DECLARE_CODEC(CheckpointReceiptV2)
CBQS_DECLARE_CODEC(SubscriptionSourceV2)
CBQS_DECLARE_CODEC(DeliveryStateBodyV2)
CBQS_DECLARE_CODEC(RoomLaneV2)
CBQS_DECLARE_CODEC(CbqsRequestBodyV2)
CBQS_DECLARE_CODEC(CbqsResponseBodyV2)
CBQS_DECLARE_CODEC(CbqsClientFrameV2)
CBQS_DECLARE_CODEC(CbqsServerFrameV2)
/// The SYS_CBQS payload: u8 version 2 || u8 instruction tag || body (§18 rule 2).
CBQS_DECLARE_CODEC(CbqsInstructionV2)

#undef CBQS_DECLARE_CODEC

/// The room encode() takes at once: a frame's own fields fit in 256 bytes and
/// an Append's or a Delivery's payload comes on top. Grown from empty, the
/// vector would be reallocated about ten times for a 256 B Append (issue 46).
std::size_t encoded_room(const CbqsClientFrameV2& frame);
std::size_t encoded_room(const CbqsServerFrameV2& frame);
template <typename T>
std::size_t encoded_room(const T&) { return 0; }

template <typename T>
Bytes encode(const T& value) {
  codec::Writer w(encoded_room(value));
  put(w, value);
  return std::move(w).take();
}

template <typename T>
Result<T, DecodeError> decode(ByteView input) {
  codec::Reader r(input);
  T value{};
  get(r, value);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return value;
}

/// The request_id of a client frame that failed to decode, when the frame got
/// that far: its own version byte is 2, its variant is one of the three, and
/// the 32 bytes that every variant starts with are there. So an Error about a
/// frame cut inside its body, with trailing bytes or with a nested object of
/// another version still names the request (docs/protocol.md §D).
std::optional<Bytes32> client_frame_request_id(ByteView frame);

}  // namespace cowboy::cbqs
