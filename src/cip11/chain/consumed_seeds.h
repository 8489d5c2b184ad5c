// ConsumedSeedsV1 (§9.2, consumed-seed commitment): the block field listing
// every distinct seed round a pending selection processed in the block
// consumed, in the §12.6 deterministic CBOR profile:
//
//   [ [seed_epoch: uint, seed_view: uint, seed_signature: bstr .size 48], ... ]
//
// entries strictly ascending by (seed_epoch, seed_view), so deduplicated by
// round; an empty list is the one-byte array 0x80. The devchain commits these
// literal bytes in its block digest (devchain/block.h) and a verifier decodes
// them strictly before comparing them with what its own execution consumed.
#pragma once

#include "cip11/chain/machine.h"

namespace cowboy::cip11::chain {

/// MinSig's G1 signature (§9.2); a MinPk activation changes it with the scheme_id.
inline constexpr std::size_t kSeedSignatureBytes = 48;
/// A block consumes at most one seed per pending record it processes; more
/// entries than this are refused before anything is allocated.
inline constexpr std::size_t kMaxConsumedSeeds = 4096;

/// Precondition: `seeds` as Effects::consumed_seeds keeps them (sorted, deduplicated).
Bytes encode_consumed_seeds(const std::vector<ConsumedSeed>& seeds);
/// Strict: the profile, exactly three fields per entry, 48-byte signatures,
/// strictly ascending rounds, nothing after the list.
Res<std::vector<ConsumedSeed>> decode_consumed_seeds(ByteView bytes);

}  // namespace cowboy::cip11::chain
