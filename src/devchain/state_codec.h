// The devchain's state and the stored form of its CIP-39 part. The registry
// (parameters, balances, providers, streams, accounts) is one value, written
// in a block that changed it; its records use the one CIP-39 codec, so a
// stored record with a version byte other than 2 is refused on load (§18
// rule 3). Nonces and the CIP-11 plane are stored per record (node.cc,
// cip11_store.h).
#pragma once

#include <map>

#include "cbqs/chain/registry.h"
#include "cip11/chain/state.h"
#include "common/codec.h"
#include "devchain/validator_set_tx.h"

namespace cowboy::devchain {

struct ChainState {
  cbqs::RegistryState registry;
  std::map<Address, std::uint64_t> nonces;  // next nonce per sender
  cip11::chain::State cip11;
  /// The validator-set changes governance scheduled (D10), ascending epoch;
  /// each under its own key (layout.h vset/), after the genesis schedule's.
  std::vector<ScheduleValidatorSet> validator_sets;
  bool operator==(const ChainState&) const = default;
};

/// The version byte of the stored registry. Version 3 stores the registry
/// alone; versions 1 and 2 held the whole state under one key, and a store of
/// that layout is refused by name (node.cc).
inline constexpr std::uint8_t kRegistryVersion = 3;

Bytes encode_registry(const cbqs::RegistryState& registry);
Result<cbqs::RegistryState, codec::DecodeError> decode_registry(ByteView bytes);

/// The whole state in one encoding, for Node::state_hash: equal bytes, equal states.
Bytes encode_state(const ChainState& state);
/// The same encoding from the parts, for a block's state_root before the
/// node publishes them (node.cc). The governance validator sets are appended
/// only when there are some, so a chain without any keeps its state roots.
Bytes encode_state(const cbqs::RegistryState& registry, const std::map<Address, std::uint64_t>& nonces,
                   const cip11::chain::State& cip11, const std::vector<ScheduleValidatorSet>& validator_sets = {});

}  // namespace cowboy::devchain
