// Binary encoding of the whole devchain state, stored once per block that
// changed it. Records inside use the one CIP-39 codec, so a stored record with a
// version byte other than 2 is refused on load (§18 rule 3).
#pragma once

#include <map>

#include "cbqs/chain/registry.h"
#include "common/codec.h"

namespace cowboy::devchain {

struct ChainState {
  cbqs::RegistryState registry;
  std::map<Address, std::uint64_t> nonces;  // next nonce per sender
  bool operator==(const ChainState&) const = default;
};

Bytes encode_state(const ChainState& state);
Result<ChainState, codec::DecodeError> decode_state(ByteView bytes);

}  // namespace cowboy::devchain
