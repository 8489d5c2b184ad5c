// Decoding the two signed envelopes, with every check that comes before a
// signature is looked at: the strict decoder (version, definition, canonical
// form, value rules), then sequence 0 and the 16 KiB bound on the canonical
// inner request or query. Realm and key lookups are the node's.
#pragma once

#include "transit/contract/codec.h"

namespace cowboy::transit {

/// An envelope is its inner request (<= 16 KiB) plus the signature's spelling.
inline constexpr std::size_t kMaxEnvelopeBytes = kMaxRequestBytes + 512;
/// Receipts, responses and rejections as clients accept them.
inline constexpr std::size_t kMaxAnswerBytes = 64 * 1024;

/// `digest`, when given, receives the signed digest, hashed from the body's
/// own inner text (canonical once decoded), so nothing is encoded again.
Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body, Digest* digest = nullptr);
Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body, Digest* digest = nullptr);

}  // namespace cowboy::transit
