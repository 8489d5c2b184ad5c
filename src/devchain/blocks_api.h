// What the validators of a devchain with several of them ask each other
// (docs/devchain.md "Several validators"): take a proposed block, give a
// committed one, say where one's chain ends. devchain::Node answers in process
// and devchain::HttpClient over the HTTP API (POST /v1/chain/blocks,
// GET /v1/chain/blocks/<height>, GET /v1/chain/head); and tell each other which
// runners they hold (PresenceViewsApi).
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

/// §8.2 Mode B presence gossip between validators (cip11/presence_gossip.h):
/// POST /v1/chain/presence {"view": "0x…"}, a signed PresenceViewV1.
class PresenceViewsApi {
 public:
  virtual ~PresenceViewsApi() = default;
  /// Whether the view was kept (false: it verified but was not newer than
  /// the one held of its sender); kViewRefused, its reason in the message,
  /// when it does not decode or verify.
  virtual ApiResult<bool> post_presence_view(const Bytes& view) = 0;
};

}  // namespace cowboy::devchain
