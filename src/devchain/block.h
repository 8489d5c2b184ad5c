// DevchainBlockV1: what a devchain validator proposes and every other
// validator re-executes (docs/devchain.md "Several validators"). One field
// list, codec rules of docs/protocol.md §A:
//
//   DevchainBlockV1 {
//     version:           u8 = 1,
//     chain_instance_id: Bytes32,
//     height:            u64,
//     epoch:             u64,            // the subset_epoch active at its height (D9)
//     view:              u64,            // the rotation view; its leader is validators[view mod N]
//     proposer:          u32,            // the leader's index in the canonical validator order
//     parent:            Bytes32,        // the digest of block height-1 (block 1: chain_instance_id)
//     txs:               Vec<Bytes>,     // DevchainTxV1 encodings, in execution order
//     presence:          Option<Bytes>,  // the PresenceInputV1 field, its literal bytes (§7.2)
//     consumed_seeds:    Bytes,          // ConsumedSeedsV1, its literal bytes (§9.2)
//     seed_evidence:     Bytes,          // the proposer's ECVRF proof of Round(0, view)'s seed (80 bytes; empty: none)
//     state_root:        Bytes32,        // keccak256(encode_state) after the block; zeros on a one-validator chain
//   }
//   digest    = keccak256("cowboy/devchain-block/v1" || canonical(block))
//   signature = Ed25519 by the proposer's peer key over the digest
//
// On the wire (POST /v1/chain/blocks, GET /v1/chain/blocks/<h>) and in the
// store a block travels as canonical(block) || digest || signature. Every
// execution input is inside the digest: PresenceInput and ConsumedSeeds are
// block fields, never side data.
#pragma once

#include "cip11/ids.h"
#include "common/codec.h"
#include "common/crypto.h"
#include "devchain/tx.h"

namespace cowboy::devchain {

inline constexpr std::string_view kBlockDomain = "cowboy/devchain-block/v1";
inline constexpr std::size_t kMaxBlockTxs = 5'000;
inline constexpr std::size_t kMaxBlockPresenceBytes = 1 << 20;
inline constexpr std::size_t kMaxBlockSeedsBytes = 1 << 20;
inline constexpr std::size_t kMaxSeedEvidenceBytes = 4'096;
/// The whole signed block on the wire, checked before anything is decoded.
inline constexpr std::size_t kMaxBlockBytes = 8 << 20;

struct Block {
  Bytes32 chain_instance_id{};
  std::uint64_t height = 0;
  std::uint64_t epoch = 0;
  cip11::View view{};  // CIP-11's round view (docs/cip11.md choice 138)
  std::uint32_t proposer = 0;
  Bytes32 parent{};
  std::vector<Bytes> txs;
  std::optional<Bytes> presence;
  Bytes consumed_seeds;
  Bytes seed_evidence;
  Bytes32 state_root{};
  bool operator==(const Block&) const = default;
};

struct SignedBlock {
  Block block;
  Bytes32 digest{};
  crypto::Ed25519Signature signature{};
  bool operator==(const SignedBlock&) const = default;
};

/// Why a validator refuses another's block (Node::accept_block): nothing of it
/// is applied, the answer is ApiErrorCode::kBlockRefused with this name first
/// in its message, and the node counts it.
#define DEVCHAIN_BLOCK_REFUSALS(X)                                                            \
  X(NoValidatorSet, "this chain's genesis names no validators to verify a proposer against") \
  X(WrongChain, "the block names another chain_instance_id")                                 \
  X(WrongEpoch, "the block names a ValidatorSetSnapshot epoch other than the one active at its height")                 \
  X(NotNext, "the block is not at the height after this node's head")                        \
  X(WrongParent, "the block's parent is not this node's head")                               \
  X(StaleView, "the block's view is not above its parent's")                                 \
  X(WrongProposer, "the proposer is not the leader of the block's view")                     \
  X(BadDigest, "the digest is not the digest of the block's fields")                         \
  X(BadSignature, "the proposer's peer key did not sign the digest")                         \
  X(BadTx, "a transaction fails decoding, names another chain or recovers no sender")        \
  X(BadNonce, "a transaction is not its sender's next nonce")                                \
  X(BadPresence, "the PresenceInput field does not decode within its bounds (§7.2)")         \
  X(BadConsumedSeeds, "the ConsumedSeeds field does not decode (§9.2)")                      \
  X(SeedsMismatch, "the ConsumedSeeds entries are not the seeds the block's records consumed") \
  X(BadSeedEvidence, "the seed evidence is not the proposer's ECVRF proof of its view's round seed") \
  X(StateMismatch, "re-executing the block gives another state_root")

enum class BlockRefusal : std::uint8_t {
#define X(name, text) k##name,
  DEVCHAIN_BLOCK_REFUSALS(X)
#undef X
};
inline constexpr std::size_t kBlockRefusalCount = 16;
std::string_view block_refusal_name(BlockRefusal r);

/// A validator's last committed block, what peers compare to catch up.
struct ChainHead {
  std::uint64_t height = 0;
  cip11::View view{};
  Bytes32 digest{};  // the genesis' is the chain_instance_id
  bool operator==(const ChainHead&) const = default;
};

/// The leader of `view` among `validators` (the canonical order): view mod N.
inline std::uint32_t leader_of(cip11::View view, std::size_t validators) {
  return static_cast<std::uint32_t>(view.value % validators);
}

Bytes encode_block(const Block& block);
Bytes32 block_digest(const Block& block);
/// Fills in the digest and the signature.
SignedBlock seal_block(Block block, const crypto::Ed25519Seed& proposer_key);

Bytes encode_signed_block(const SignedBlock& block);
/// Bounds every length before allocating. It does not check the digest or the
/// signature: that is the verifier's (Node::accept_block), which says which failed.
Result<SignedBlock, codec::DecodeError> decode_signed_block(ByteView bytes);

}  // namespace cowboy::devchain
