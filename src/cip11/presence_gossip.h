// Mode B presence gossip (§8.2): each validator's local presence (§7.4) as a
// signed statement the other validators' proposers aggregate into the
// PresenceInputV1 they commit. Off-chain and advisory: no block is valid or
// invalid because of it (docs/cip11.md choices 84-87).
//
//   PresenceViewV1, deterministic CBOR, a map keyed 0..6 (frames.h's body rules):
//     0 validator_pubkey    bytes(33)  Ed25519 wire PubKey of the sender
//     1 subset_epoch        uint       the snapshot it states its view under: the newest
//     2 validator_set_hash  bytes(32)  ... snapshot current at `height` it is in (§5.3 point 3)
//     3 height              uint       the sender's head when it took the view
//     4 registry_size       uint       the index basis of 5: |registry(height)|, <= kMaxViewRegistry
//     5 presence            bytes      PresenceInputV1 (§7.2) over registry_size
//     6 validator_signed    bytes(64)  Ed25519 over "cowboy-cip11-presence-view-v1" (preimages.h)
//
// The presence field is decoded against registry_size when the view is, so a
// view that decodes names only indices below its registry_size.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "cip11/identity.h"
#include "cip11/ids.h"
#include "cip11/presence.h"
#include "cip11/subset.h"

namespace cowboy::cip11 {

struct PresenceView {
  PubKey validator_pubkey;
  Epoch subset_epoch{};
  Bytes32 validator_set_hash{};
  Height height{};
  std::uint32_t registry_size = 0;
  Bytes presence;  // PresenceInputV1 over registry_size
  std::array<std::uint8_t, 64> validator_signed{};
  bool operator==(const PresenceView&) const = default;
};

template <typename V> void fields(V& v, PresenceView& f) {
  v(f.validator_pubkey), v(f.subset_epoch), v(f.validator_set_hash), v(f.height), v(f.registry_size), v(f.presence),
      v(f.validator_signed);
}

/// A view's registry at most this large (a 32 KiB bitmap), checked before its set is allocated.
inline constexpr std::uint32_t kMaxViewRegistry = 1u << 18;
/// A view's encoding at most this long (the largest bitmap and the fixed
/// fields, 32,939 bytes), checked before reading it; in hex it fits the
/// devchain's 128 KiB request body.
inline constexpr std::size_t kMaxViewBytes = 33'024;
/// A view counts for block H while its height is within this many blocks of
/// H-1 (either side): each validator states its view at every block it
/// commits, so a live peer's is 0 or 1 block old; a silent one's stops
/// counting 3 blocks after its last (choice 85).
inline constexpr std::uint64_t kViewMaxAgeBlocks = 3;

Bytes encode_view(const PresenceView& view);
/// Strict and bounded: at most kMaxViewBytes, exactly the seven fields, an
/// Ed25519 validator key (kRoleSchemeMismatch), registry_size at most
/// kMaxViewRegistry (kOutOfRange), and a presence field that decodes by §7.2
/// against registry_size.
Res<PresenceView> decode_view(ByteView bytes);
/// The view's present set (it decoded, so this cannot fail on a decoded view).
Res<PresentSet> view_set(const PresenceView& view);

/// `view` with validator_pubkey and validator_signed set by `validator`, for `chain_id`.
PresenceView sign_view(const Signer& validator, std::uint64_t chain_id, PresenceView view);

/// A validator-set snapshot a view may name: its pair and its peer keys.
struct ViewSnapshot {
  EpochPair pair;
  std::vector<crypto::Ed25519Public> validators;
};

/// What a receiving validator checks a view against: its chain, the
/// snapshots current at the view's height (§5.3 point 3, as for a receipt:
/// the active one and, during an overlap, its predecessor), and itself.
struct ViewContext {
  std::uint64_t chain_id = 0;
  std::vector<ViewSnapshot> snapshots;
  crypto::Ed25519Public me{};
};

/// Checks a decoded view received at head `head`, in this order: a pair that
/// names none of `ctx.snapshots` with both fields (kWrongValidatorSet), a
/// sender not in the snapshot it names (kUnknownValidator), this validator's
/// own key (kViewFromSelf), a height more than kViewMaxAgeBlocks above `head`
/// (kViewFromTheFuture: it would count for blocks no one has yet), the
/// signature (kBadSignature). Returns the sender's key.
Res<crypto::Ed25519Public> check_view(const ViewContext& ctx, const PresenceView& view, Height head);

/// The latest checked view of each other validator and the §8.2 aggregate a
/// proposer commits, across a reconfiguration's overlap: views are held by
/// their sender's key with the pair they name, and count for a block only
/// while that pair is current at it. Holds one view per key that passed
/// check_view, so at most one per validator of any snapshot. Not
/// synchronized: its owner locks.
class PresenceAggregator {
 public:
  /// Keeps `view` (checked, from `sender`) when it is above the height of the
  /// sender's view held; false (nothing changes) when it is not.
  bool offer(const crypto::Ed25519Public& sender, const PresenceView& view);
  /// Whether the view held of `sender` counts for block `height` by its age
  /// (its pair is not looked at).
  bool fresh(const crypto::Ed25519Public& sender, Height height) const;
  /// Whether `sender`, stating a view under `pair`, can see the runner at
  /// registry `index`: it is in that runner's Sub of the snapshot `pair` names.
  using Sees = std::function<bool(const crypto::Ed25519Public& sender, const EpochPair& pair, std::uint32_t index)>;
  /// §8.2: the present set of block `height` = `own` (the proposer's local
  /// presence over registry(H-1)) ∪ every view fresh for `height` whose pair
  /// is one of `current` (the snapshots current at `height`: past a cutoff
  /// the old epoch's views stop counting, §5.3 point 4), each index kept only
  /// when below own.registry_size() (registered as of H-1, §8.1) and when
  /// `sees` says its sender can hold that runner's connection: a validator
  /// vouches only for runners of its own subset (choice 151), so a false view
  /// marks no runner it could not have seen.
  PresentSet aggregate(const PresentSet& own, Height height, const std::vector<EpochPair>& current,
                       const Sees& sees) const;
  /// How many held views are fresh for `height` under one of `current`.
  std::size_t fresh_count(Height height, const std::vector<EpochPair>& current) const;

 private:
  struct Held {
    Height height{};
    EpochPair pair;
    std::vector<std::uint32_t> indices;
  };
  static bool counts(const Held& held, Height height, const std::vector<EpochPair>& current);
  std::map<crypto::Ed25519Public, Held> views_;
};

}  // namespace cowboy::cip11
