// A validator-set change by governance transaction (§5.4, docs/devchain.md
// D10): the payload of a DevchainTxV1 ValidatorSetCall (tx.h), signed by the
// genesis governance_admin, that schedules ValidatorSetSnapshot(E+1).
// Canonical encoding, codec rules of docs/protocol.md §A; this file is its
// one codec (kept apart from tx.cc's):
//
//   ScheduleValidatorSetV1 {
//     version:           u8 = 1, or 2 when an entry names a chain API,
//     epoch:             u64,    // E+1: one past the last snapshot scheduled
//     activation_height: u64,    // >= inclusion height + overlap_blocks (the lead)
//     validators:        u32 count, each {
//       peer_key: [u8; 32],      // Ed25519
//       vrf_key:  [u8; 32],      // ECVRF (docs/cip11.md choice 100)
//       endpoint: Bytes,         // host:port of its QUIC listener, at most 255 bytes
//       chain_api: Bytes,        // version 2 only: host:port of its chain API, at
//                                // most 255 bytes, empty for none (choice 130)
//     },
//   }
//
// Version 1 is written while no entry names a chain API, and a version 2 that
// names none is refused, so each value has one encoding.
//
// The list is kept in canonical order (ascending peer_pubkey) whatever order
// the transaction names it in. Every count and length is bounded before
// anything is allocated [fuzz_devchain_validator_set].
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "cip11/chain/snapshots.h"
#include "cip11/chain/state.h"
#include "common/codec.h"

namespace cowboy::devchain {

struct Cip11Genesis;

inline constexpr std::size_t kMaxSetValidators = 64;          // more is TooManyValidators
inline constexpr std::size_t kMaxDecodedSetValidators = 1024;  // more is not decoded at all
inline constexpr std::size_t kMaxValidatorEndpointBytes = 255;

struct ScheduleValidatorSet {
  std::uint64_t epoch = 0;
  std::uint64_t activation_height = 0;
  std::vector<cip11::chain::ValidatorEntry> validators;  // each with its vrf_key
  bool operator==(const ScheduleValidatorSet&) const = default;
};

Bytes encode_schedule_validator_set(const ScheduleValidatorSet& s);
Result<ScheduleValidatorSet, codec::DecodeError> decode_schedule_validator_set(ByteView bytes);

/// Why a ValidatorSetCall is rejected: its receipt's error, by name. A rejected
/// call consumes its nonce and changes nothing else.
enum class ValidatorSetRefusal : std::uint8_t {
  kCip11NotEnabled,       // the chain's genesis has no CIP-11 section
  kNotGovernanceAdmin,    // the sender is not the genesis governance_admin
  kMalformedValidatorSet, // the payload does not decode
  kWrongEpoch,            // not one past the last scheduled snapshot
  kChangePending,         // the last scheduled snapshot is not active yet
  kLeadTooShort,          // activation_height < inclusion height + overlap_blocks
  kEmptySet,
  kTooManyValidators,     // above kMaxSetValidators
  kDuplicateKey,          // a peer key or a VRF key named twice
  kValidatorMismatch,     // its vrf_key, endpoint or chain_api is not the entry that named it first (genesis or an earlier change)
  kBadVrfKey,             // a validator named for the first time: its vrf_key is no valid ECVRF key
  kBadEndpoint,           // ... or its endpoint, or a chain_api it names, is not host:port
  kUnchangedSet,          // the same members as the snapshot before (§5.4)
};
std::string_view validator_set_refusal_name(ValidatorSetRefusal r);

/// The checks of a decoded change included at `height`, against the
/// snapshots scheduled so far and the changes governance scheduled before it
/// (`earlier`); nullopt when it is accepted. A validator no snapshot named
/// before may join (docs/devchain.md D2): its vrf_key must be a valid ECVRF
/// key that no known validator holds, its endpoint host:port, and its
/// chain_api empty or host:port.
std::optional<ValidatorSetRefusal> check_schedule(const ScheduleValidatorSet& s, const Cip11Genesis& genesis,
                                                  const std::vector<ScheduleValidatorSet>& earlier,
                                                  const cip11::chain::ValidatorSnapshots& scheduled,
                                                  std::uint64_t height);

/// What a snapshot list needs of an accepted change: its peer keys in canonical order.
cip11::chain::ValidatorSetChange as_change(const ScheduleValidatorSet& s);

/// Every validator a chain has named (docs/cip11.md choice 130): the genesis
/// entries, then each validator a change named first, with that change's
/// entry (QUIC endpoint, VRF key, chain API), in the order named.
std::vector<cip11::chain::ValidatorEntry> named_validators(const std::vector<cip11::chain::ValidatorEntry>& genesis,
                                                           const std::vector<ScheduleValidatorSet>& changes);

}  // namespace cowboy::devchain
