// Every way a CIP-11 input can be refused, as one error code per cause so that
// tests and peers see exactly which rule an input broke.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace cowboy::cip11 {

enum class Errc : std::uint8_t {
  // §12.1 frame envelope
  kFrameTruncated = 1,   // fewer bytes than the length prefix announces
  kFrameEmpty,           // length == 0
  kFrameTooLarge,        // length > MAX_FRAME_BYTES
  kUnknownFrameType,     // a type byte outside the §12.2 table
  kReadBudgetExhausted,  // the process's budget for partial frames cannot hold this one now
  // §12.6 deterministic CBOR profile
  kCborTruncated,        // input ended inside an item
  kTrailingBytes,        // bytes after the one top-level item
  kIndefiniteLength,     // additional info 31 (or a stray break)
  kNonShortestInteger,   // an argument that fits a shorter head
  kReservedEncoding,     // additional info 28..30
  kUnsortedKeys,         // map keys not in ascending encoded order
  kDuplicateKey,         // two equal map keys
  kInvalidUtf8,          // a text string that is not UTF-8
  kNotFloat64,           // a float16/float32 encoding
  kNonFiniteFloat,       // NaN or +-Inf
  kUnsupportedSimple,    // undefined or a simple value other than false/true/null
  kTooDeep,              // nesting beyond the decoder's depth limit
  kTooManyItems,         // more items than the decoder's item limit
  // frame body schemas (§6, §10, §12.5)
  kUnexpectedType,       // a field of another CBOR major type
  kWrongFieldCount,      // a body map without exactly its listed fields
  kWrongKey,             // a body map key other than the next field's number
  kWrongLength,          // a fixed-size byte string of another length
  kOutOfRange,           // an integer too large for its field
  kUnknownVariant,       // an enum discriminant outside its §12.6 table
  // §12.6 identity
  kBadScheme,            // a PubKey scheme_id other than 0x01/0x02
  kBadKeyLength,         // a PubKey whose length does not match its scheme
  kInvalidKey,           // key bytes that are not a valid key
  kBadSignatureLength,   // a Sig whose length does not match the signer's scheme
  kRoleSchemeMismatch,   // role, scheme, key and signature that do not agree
  kBadSignature,         // a signature that does not verify
  kSignerMismatch,       // a valid signature by someone other than the named signer
  kAssignmentMismatch,   // a JobAssignment whose hashes or keys are not what its fields and connection give
  // §7.2 PresenceInputV1
  kBadPresenceVersion,
  kUnknownPresenceKind,
  kBadBitmapLength,
  kBitBeyondRegistry,
  kBadSparseLength,
  kSparseNotAscending,
  kIndexBeyondRegistry,
  // §9.2 beacon
  kBadBeaconScheme,      // a seed scheme other than the active MinSig (0x01)
  // §8.3 PresenceReceipt
  kReceiptTooLarge,      // longer than any receipt can be (receipt.h kMaxReceiptBytes)
  kReceiptMismatch,      // a receipt frame whose keys, epoch or set hash are not its connection's
  // §9.2 ConsumedSeedsV1
  kSeedsNotAscending,    // entries not strictly ascending by (seed_epoch, seed_view)
  // §8.2 presence gossip (presence_gossip.h)
  kViewTooLarge,         // longer than any PresenceViewV1 can be
  kWrongValidatorSet,    // a view under another (subset_epoch, validator_set_hash) than the one in force
  kUnknownValidator,     // a view from a key outside the validator set
  kViewFromSelf,         // this validator's own key on a view it received
  kViewFromTheFuture,    // a view's height too far above the receiver's head
};

std::string_view to_string(Errc e);

template <typename T>
using Res = Result<T, Errc>;

}  // namespace cowboy::cip11
