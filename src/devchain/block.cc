#include "devchain/block.h"

#include "common/fields.h"

namespace cowboy::devchain {

namespace {
#define X(name, text) +1
static_assert(kBlockRefusalCount == 0 DEVCHAIN_BLOCK_REFUSALS(X));
#undef X

// The block and the signed block list their fields once; common/fields.h's Put
// writes them and Get reads them back.
struct Wire {
  static constexpr std::uint8_t kVersion = 1;
};
using Put = codec::Put<Wire>;

COWBOY_FIELDS(Block) {
  v.version();
  v(x.chain_instance_id), v(x.height), v(x.epoch), v(x.view), v(x.proposer), v(x.parent);
  v.list(x.txs, kMaxBlockTxs, 4, [&](auto& tx) { v.bytes(tx, kMaxTxBytes); });
  v.option(x.presence, [&](auto& p) { v.bytes(p, kMaxBlockPresenceBytes); });
  v.bytes(x.consumed_seeds, kMaxBlockSeedsBytes);
  v.bytes(x.seed_evidence, kMaxSeedEvidenceBytes);
  v(x.state_root);
}
COWBOY_FIELDS(SignedBlock) { v(x.block), v(x.digest), v(x.signature); }
}  // namespace

std::string_view block_refusal_name(BlockRefusal r) {
  switch (r) {
#define X(name, text) \
  case BlockRefusal::k##name: return #name;
    DEVCHAIN_BLOCK_REFUSALS(X)
#undef X
  }
  return "Unknown";
}

Bytes encode_block(const Block& block) { return codec::encode_fields<Wire>(block); }

Bytes32 block_digest(const Block& block) {
  codec::Writer w(1024);  // a block without transactions fits; also keeps GCC 12 from a false -Wstringop-overflow
  w.raw(kBlockDomain);
  Put{w}(block);
  return crypto::keccak256(w.data());
}

SignedBlock seal_block(Block block, const crypto::Ed25519Seed& proposer_key) {
  SignedBlock out{std::move(block), {}, {}};
  out.digest = block_digest(out.block);
  out.signature = crypto::ed25519_sign(proposer_key, out.digest);
  return out;
}

Bytes encode_signed_block(const SignedBlock& b) { return codec::encode_fields<Wire>(b); }

Result<SignedBlock, codec::DecodeError> decode_signed_block(ByteView bytes) {
  if (bytes.size() > kMaxBlockBytes) return Err{codec::DecodeError::kLengthOverCap};
  return codec::decode_fields<Wire, SignedBlock>(bytes);
}

}  // namespace cowboy::devchain
