#include "cip11/errc.h"

namespace cowboy::cip11 {

std::string_view to_string(Errc e) {
  switch (e) {
    case Errc::kFrameTruncated: return "frame truncated";
    case Errc::kFrameEmpty: return "frame length is zero";
    case Errc::kFrameTooLarge: return "frame length above MAX_FRAME_BYTES";
    case Errc::kReadBudgetExhausted: return "the budget for partial frames cannot hold this frame now";
    case Errc::kUnknownFrameType: return "unknown frame type";
    case Errc::kCborTruncated: return "CBOR item truncated";
    case Errc::kTrailingBytes: return "bytes after the CBOR item";
    case Errc::kIndefiniteLength: return "indefinite-length CBOR";
    case Errc::kNonShortestInteger: return "CBOR head not in shortest form";
    case Errc::kReservedEncoding: return "reserved CBOR additional info";
    case Errc::kUnsortedKeys: return "CBOR map keys not sorted";
    case Errc::kDuplicateKey: return "duplicate CBOR map key";
    case Errc::kInvalidUtf8: return "text string is not UTF-8";
    case Errc::kNotFloat64: return "float not encoded as float64";
    case Errc::kNonFiniteFloat: return "NaN or infinite float";
    case Errc::kUnsupportedSimple: return "CBOR simple value outside false/true/null";
    case Errc::kTooDeep: return "CBOR nesting too deep";
    case Errc::kTooManyItems: return "too many CBOR items";
    case Errc::kUnexpectedType: return "field of the wrong CBOR type";
    case Errc::kWrongFieldCount: return "body without exactly its fields";
    case Errc::kWrongKey: return "body key out of order";
    case Errc::kWrongLength: return "fixed-size field of the wrong length";
    case Errc::kOutOfRange: return "integer out of its field's range";
    case Errc::kUnknownVariant: return "unknown enum discriminant";
    case Errc::kBadScheme: return "unknown key scheme";
    case Errc::kBadKeyLength: return "key length does not match its scheme";
    case Errc::kInvalidKey: return "invalid key material";
    case Errc::kBadSignatureLength: return "signature length does not match the signer's scheme";
    case Errc::kRoleSchemeMismatch: return "role and key scheme disagree";
    case Errc::kBadSignature: return "signature does not verify";
    case Errc::kSignerMismatch: return "signature by another key";
    case Errc::kAssignmentMismatch: return "assignment hashes or keys do not match its fields and connection";
    case Errc::kBadPresenceVersion: return "PresenceInput version is not 1";
    case Errc::kUnknownPresenceKind: return "unknown PresenceInput kind";
    case Errc::kBadBitmapLength: return "presence bitmap length is not ceil(n/8)";
    case Errc::kBitBeyondRegistry: return "presence bit set beyond the registry";
    case Errc::kBadSparseLength: return "sparse presence length is not 4 + 4*count";
    case Errc::kSparseNotAscending: return "sparse presence indices not strictly ascending";
    case Errc::kIndexBeyondRegistry: return "presence index beyond the registry";
    case Errc::kBadBeaconScheme: return "beacon scheme is not MinSig";
    case Errc::kReceiptTooLarge: return "longer than any PresenceReceipt can be";
    case Errc::kReceiptMismatch: return "a receipt not for this connection's runner, validator, epoch and set";
    case Errc::kSeedsNotAscending: return "consumed seeds not strictly ascending by round";
    case Errc::kViewTooLarge: return "longer than any presence view can be";
    case Errc::kWrongValidatorSet: return "a presence view under another validator set or epoch";
    case Errc::kUnknownValidator: return "a presence view from a key outside the validator set";
    case Errc::kViewFromSelf: return "a presence view under this validator's own key";
    case Errc::kViewFromTheFuture: return "a presence view above the receiver's head";
  }
  return "unknown error";
}

}  // namespace cowboy::cip11
