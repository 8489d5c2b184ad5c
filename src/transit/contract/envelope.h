// Decoding the two signed envelopes, with every check that comes before a
// signature is looked at: the envelope's size and the 16 KiB bound on its
// canonical inner request or query, both on the raw body before anything is
// parsed; the strict decoder (version, definition, canonical form, value
// rules); then sequence 0 and the contract's rules. Realm and key lookups are
// the node's.
#pragma once

#include "transit/contract/codec.h"

namespace cowboy::transit {

/// An envelope is its inner request (<= 16 KiB) plus the signature's spelling
/// and the two keys (at most 282 bytes: 512 leaves room).
inline constexpr std::size_t kMaxEnvelopeBytes = kMaxRequestBytes + 512;
/// A command body may carry a turn's block bodies after the envelope: the
/// canonical envelope, one '\n' (canonical JSON never holds a raw newline),
/// then the bodies back to back in descriptor order (decision 31).
inline constexpr std::size_t kMaxCommandBodyBytes = kMaxEnvelopeBytes + 1 + kTurnBlockBytes;
/// Receipts, responses and rejections as clients accept them.
/// The largest is a read_block of 64 KiB, 128 KiB in hex.
inline constexpr std::size_t kMaxAnswerBytes = 192 * 1024;

/// The Rejection a node answers: the code is the reason's (reasons.h), the
/// message valid UTF-8 of at most 512 bytes whatever input it quotes.
Rejection make_rejection(const Text<1, 64>& realm, Reason reason, std::string_view message);

/// `digest`, when given, receives the signed digest, hashed from the body's
/// own inner text (canonical once decoded), so nothing is encoded again.
Result<SignedRequest, DecodeError> decode_signed_request(std::string_view body, Digest* digest = nullptr);
Result<SignedQuery, DecodeError> decode_signed_query(std::string_view body, Digest* digest = nullptr);

/// A command body split into its envelope and its block bodies, each checked
/// against its descriptor's length and SHA-256.
struct CommandBody {
  SignedRequest request;
  std::vector<std::vector<std::uint8_t>> blocks;
  std::string envelope;  // the canonical text of `request`, as received
};
Result<CommandBody, DecodeError> decode_command_body(std::string_view body, Digest* digest = nullptr);
/// The body that carries `envelope` (canonical JSON) and `blocks`.
std::string command_body(std::string envelope, const std::vector<std::vector<std::uint8_t>>& blocks);

}  // namespace cowboy::transit
