// What the validators of a devchain with several of them ask each other
// (docs/devchain.md "Several validators"): take a proposed block, give a
// committed one, say where one's chain ends. devchain::Node answers in process
// and devchain::HttpClient over the HTTP API (POST /v1/chain/blocks,
// GET /v1/chain/blocks/<height>, GET /v1/chain/head).
#pragma once

#include "devchain/api.h"
#include "devchain/block.h"

namespace cowboy::devchain {

class BlocksApi {
 public:
  virtual ~BlocksApi() = default;
  /// Verifies by re-execution and commits; kBlockRefused (its reason first in the message) when it does not verify.
  virtual ApiResult<std::uint64_t> accept_block(const SignedBlock& block) = 0;
  /// The committed block at `height` >= 1, as proposed.
  virtual ApiResult<SignedBlock> block_at(std::uint64_t height) = 0;
  virtual ApiResult<ChainHead> chain_head() = 0;
};

}  // namespace cowboy::devchain
