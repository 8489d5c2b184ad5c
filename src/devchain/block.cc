#include "devchain/block.h"

namespace cowboy::devchain {

namespace {
#define X(name, text) +1
static_assert(kBlockRefusalCount == 0 DEVCHAIN_BLOCK_REFUSALS(X));
#undef X
constexpr std::uint8_t kBlockVersion = 1;

void put_block(codec::Writer& w, const Block& b) {
  w.u8(kBlockVersion);
  w.fixed(b.chain_instance_id);
  w.u64(b.height);
  w.u64(b.epoch);
  w.u64(b.view);
  w.u32(b.proposer);
  w.fixed(b.parent);
  w.count(b.txs.size());
  for (const auto& tx : b.txs) w.bytes(tx);
  w.option(b.presence, [&](const Bytes& p) { w.bytes(p); });
  w.bytes(b.consumed_seeds);
  w.bytes(b.seed_evidence);
  w.fixed(b.state_root);
}

void get_block(codec::Reader& r, Block& b) {
  r.version(kBlockVersion);
  b.chain_instance_id = r.fixed<32>();
  b.height = r.u64();
  b.epoch = r.u64();
  b.view = r.u64();
  b.proposer = r.u32();
  b.parent = r.fixed<32>();
  std::uint32_t n = r.count(kMaxBlockTxs, 4);
  b.txs.reserve(n);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) b.txs.push_back(r.bytes(kMaxTxBytes));
  if (r.option_tag()) b.presence = r.bytes(kMaxBlockPresenceBytes);
  b.consumed_seeds = r.bytes(kMaxBlockSeedsBytes);
  b.seed_evidence = r.bytes(kMaxSeedEvidenceBytes);
  b.state_root = r.fixed<32>();
}
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

Bytes encode_block(const Block& block) {
  codec::Writer w;
  put_block(w, block);
  return std::move(w).take();
}

Bytes32 block_digest(const Block& block) {
  codec::Writer w;
  w.raw(kBlockDomain);
  put_block(w, block);
  return crypto::keccak256(w.data());
}

SignedBlock seal_block(Block block, const crypto::Ed25519Seed& proposer_key) {
  SignedBlock out{std::move(block), {}, {}};
  out.digest = block_digest(out.block);
  out.signature = crypto::ed25519_sign(proposer_key, out.digest);
  return out;
}

Bytes encode_signed_block(const SignedBlock& b) {
  codec::Writer w;
  put_block(w, b.block);
  w.fixed(b.digest);
  w.fixed(b.signature);
  return std::move(w).take();
}

Result<SignedBlock, codec::DecodeError> decode_signed_block(ByteView bytes) {
  if (bytes.size() > kMaxBlockBytes) return Err{codec::DecodeError::kLengthOverCap};
  codec::Reader r(bytes);
  SignedBlock out;
  get_block(r, out.block);
  out.digest = r.fixed<32>();
  out.signature = r.fixed<64>();
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return out;
}

}  // namespace cowboy::devchain
