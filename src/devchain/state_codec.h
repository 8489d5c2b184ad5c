// Binary encoding of the whole devchain state, stored once per block that
// changed it. Records inside use the one CIP-39 codec, so a stored record with a
// version byte other than 2 is refused on load (§18 rule 3). Version 2 adds
// the CIP-11 plane; a version-1 store is refused by name (stored_state_version).
#pragma once

#include <map>

#include "cbqs/chain/registry.h"
#include "cip11/chain/state.h"
#include "common/codec.h"

namespace cowboy::devchain {

struct ChainState {
  cbqs::RegistryState registry;
  std::map<Address, std::uint64_t> nonces;  // next nonce per sender
  cip11::chain::State cip11;
  bool operator==(const ChainState&) const = default;
};

inline constexpr std::uint8_t kStateVersion = 2;
/// The version byte a stored state starts with (0 for an empty one).
inline std::uint8_t stored_state_version(ByteView bytes) { return bytes.empty() ? 0 : bytes[0]; }

Bytes encode_state(const ChainState& state);
Result<ChainState, codec::DecodeError> decode_state(ByteView bytes);

}  // namespace cowboy::devchain
