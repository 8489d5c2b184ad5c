// What a devchain validator decodes from every POST /v1/chain/blocks and every
// block it fetches to catch up: a signed DevchainBlockV1, then its transactions
// and its ConsumedSeedsV1 field from their literal bytes (Node::accept_block
// does the same before executing anything). Any accepted block must be
// canonical; the field decoders must never crash.
#include <cstdlib>
#include <cstring>

#include "cip11/chain/consumed_seeds.h"
#include "devchain/block.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cowboy;
  auto block = devchain::decode_signed_block(ByteView(data, size));
  if (!block) return 0;
  Bytes again = devchain::encode_signed_block(*block);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  for (const auto& tx : block->block.txs) (void)devchain::decode_tx(tx);
  auto seeds = cip11::chain::decode_consumed_seeds(block->block.consumed_seeds);
  if (seeds && cip11::chain::encode_consumed_seeds(*seeds) != block->block.consumed_seeds) std::abort();
  (void)devchain::block_digest(block->block);
  return 0;
}
