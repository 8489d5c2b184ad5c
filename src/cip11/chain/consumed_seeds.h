// ConsumedSeedsV1 (§9.2, consumed-seed commitment): the block field listing
// every distinct seed round a pending selection processed in the block
// consumed, in the §12.6 deterministic CBOR profile:
//
//   [ [seed_epoch: uint, seed_view: uint, seed_signature: bstr .size (48 / 64)], ... ]
//
// entries strictly ascending by (seed_epoch, seed_view), so deduplicated by
// round; an empty list is the one-byte array 0x80. The devchain commits these
// literal bytes in its block digest (devchain/block.h) and a verifier decodes
// them strictly before comparing them with what its own execution consumed.
// On the devchain a seed is its round's 64-byte ECVRF output (seed.h,
// docs/cip11.md choice 78); its proof is not repeated here: it is committed as
// the seed_evidence of the block that revealed the round, and a verifier holds
// the seed from there.
#pragma once

#include "cip11/chain/machine.h"

namespace cowboy::cip11::chain {

/// MinSig's G1 signature (§9.2); a MinPk activation changes it with the scheme_id.
inline constexpr std::size_t kSeedSignatureBytes = 48;
/// The devchain's round seed: its 64-byte ECVRF (or derived) output (seed.h SeedOutput).
inline constexpr std::size_t kDevchainSeedBytes = 64;
/// A block consumes at most one seed per pending record it processes; more
/// entries than this are refused before anything is allocated.
inline constexpr std::size_t kMaxConsumedSeeds = 4096;

/// Precondition: `seeds` as Effects::consumed_seeds keeps them (sorted, deduplicated).
Bytes encode_consumed_seeds(const std::vector<ConsumedSeed>& seeds);
/// Strict: the profile, exactly three fields per entry, 48- or 64-byte signatures,
/// strictly ascending rounds, nothing after the list.
Res<std::vector<ConsumedSeed>> decode_consumed_seeds(ByteView bytes);

}  // namespace cowboy::cip11::chain
