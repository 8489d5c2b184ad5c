// The devchain's round seeds (docs/cip11.md choice 74): a seed nobody can
// compute before its round and everybody can check, in place of a threshold
// VRF. Pure: no clock, no store, no randomness.
//
//   round r = Round(epoch, view); the rounds run in advance_round order.
//   proposed r:  proof_r  = ECVRF_prove(leader(r), alpha(r, out_{r-1}))
//                out_r    = ECVRF_proof_to_hash(proof_r)          scheme 0x10
//   nullified r: out_r    = SHA-512(nullified domain ‖ chain ‖ r ‖ out_{r-1})   scheme 0x11
//   genesis:     out_(0,0) = SHA-512(genesis domain ‖ chain)        scheme 0x11
//   alpha(r, p) = "cowboy/devchain-seed/v1" ‖ chain_instance_id ‖ epoch_be8 ‖ view_be8 ‖ p
//
// Each output folds in the one before, so not even the leader of r can compute
// out_r before out_{r-1} is revealed. canonical_seed_bytes hashes out_r (the
// VRF's unique value), never the proof: a proof is not unique (its nonce is the
// prover's), so hashing it would let a leader grind. The proof is the evidence,
// carried with the block that reveals it and in ConsumedSeedsV1 entries.
#pragma once

#include <compare>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string_view>

#include "cip11/chain/machine.h"
#include "cip11/chain/rounds.h"
#include "cip11/selection.h"
#include "common/ecvrf.h"

namespace cowboy::cip11::chain {

using SeedOutput = std::array<std::uint8_t, 64>;
inline constexpr Round kGenesisRound{RoundEpoch{0}, View{0}};

/// The configured genesis beacon (§9.2): the output of Round(0, 0), which no leader proposes.
SeedOutput genesis_seed(const Bytes32& chain_instance_id);
/// What round r's leader proves, given the previous round's output.
Bytes seed_alpha(const Bytes32& chain_instance_id, Round r, const SeedOutput& previous);
/// The output of a nullified round (its leader proposed nothing): anyone derives it.
SeedOutput nullified_seed(const Bytes32& chain_instance_id, Round r, const SeedOutput& previous);

/// One round's seed: the leader's proof when it proposed, none when nullified.
struct RoundSeed {
  Round round;
  std::optional<crypto::ecvrf::Proof> proof;
  SeedOutput output{};
  bool operator==(const RoundSeed&) const = default;
};
/// The Beacon §9.2 hashes: scheme 0x10 (a leader's ECVRF output) or 0x11 (derived),
/// the 64-byte output as its signature and the proof, if any, as its evidence.
Beacon beacon_of(const RoundSeed& seed);

/// The leader's side: its proof for round r.
RoundSeed prove_round_seed(const crypto::ecvrf::Seed& leader_key, const Bytes32& chain_instance_id, Round r,
                           const SeedOutput& previous);
/// Anyone's side: round r's seed from its leader's proof, or the ECVRF refusal.
Result<RoundSeed, crypto::ecvrf::Error> verify_round_seed(const crypto::ecvrf::PublicKey& leader,
                                                          const Bytes32& chain_instance_id, Round r,
                                                          const SeedOutput& previous,
                                                          const crypto::ecvrf::Proof& proof);

enum class SeedError : std::uint8_t {
  kRoundNotAfter,   // the round is not after the last one taken
  kNotInSchedule,   // the epoch schedule has no such round
  kGapTooLong,      // more than kMaxNullifiedRun rounds nullified before it
  kNoLeader,        // no validator leads the round
  kProofRefused,    // the proof does not verify (see `vrf`)
  kUnknownRound,    // a consumed seed names a round this chain holds no seed for
  kConsumedMismatch,  // a consumed seed's bytes are not that round's output and proof
};
std::string_view to_string(SeedError e);
struct SeedRefusal {
  SeedError error;
  std::optional<crypto::ecvrf::Error> vrf;
};

/// The leader's ECVRF key of a round (ValidatorSetSnapshot(epoch)'s rule).
using LeaderOf = std::function<std::optional<crypto::ecvrf::PublicKey>(Round)>;

/// Every round's seed from genesis on, taken from chain data only: a block's
/// round and its proof. It is the BeaconSource a block reads, limited to the
/// rounds before its own (§9.2: never a round's seed in that same round).
class SeedChain {
 public:
  /// A longer run of nullified rounds before a proposed one is refused: what
  /// one block can make every node derive is bounded.
  static constexpr std::uint64_t kMaxNullifiedRun = 1u << 16;

  SeedChain(const Bytes32& chain_instance_id, EpochSchedule schedule, LeaderOf leader_of);

  /// The seeds a block in round r adds: every round between the last one taken
  /// and r nullified (derived), then r's own - its leader's proof, which must
  /// verify against that leader and the previous output, or, with no proof, r
  /// derived too (its leader revealed nothing, as if it had withheld the block).
  using Advance = std::vector<RoundSeed>;
  Result<Advance, SeedRefusal> advance(Round r, const std::optional<crypto::ecvrf::Proof>& proof) const;
  /// Records what advance() returned; nothing else changes the chain.
  void commit(Advance seeds);
  /// advance() then commit(); a refusal changes nothing.
  Result<Unit, SeedRefusal> take(Round r, const std::optional<crypto::ecvrf::Proof>& proof);
  /// The proof the holder of `leader_key` makes for round r, after the rounds
  /// between the last one taken and r went nullified (nothing is taken).
  Result<crypto::ecvrf::Proof, SeedRefusal> prove(const crypto::ecvrf::Seed& leader_key, Round r) const;

  /// The round epochs closed so far. A round of the epoch after the open one
  /// closes it at the last round taken, its last view (choice 140): advance()
  /// maps the gap over it, and commit() records it.
  const EpochSchedule& schedule() const { return schedule_; }
  /// The schedule as a block of round r reads it: schedule() with the open
  /// epoch closed at the last round taken when r is in a later epoch.
  EpochSchedule schedule_at(Round r) const;

  /// Continues after `anchor`, a round already taken and read back from a
  /// store, in place of everything before it (a restart replays from a floor
  /// rather than from genesis).
  void resume_after(RoundSeed anchor);

  Round last_round() const { return last_; }
  const SeedOutput& last_output() const { return seeds_.at(last_).output; }
  std::optional<RoundSeed> at(Round r) const;
  /// Forgets the seeds of rounds before r except the last (what no pending selection reads).
  void forget_before(Round r);

 private:
  /// The nullified rounds between the last one and r, and r's previous output.
  Result<std::pair<std::vector<RoundSeed>, SeedOutput>, SeedRefusal> gap_to(Round r) const;

  Bytes32 chain_;
  EpochSchedule schedule_;
  LeaderOf leader_of_;
  std::map<Round, RoundSeed> seeds_;
  Round last_ = kGenesisRound;
};

/// §9.2 replay: a block's ConsumedSeedsV1 entries, checked against the seeds
/// taken from chain data - each entry's signature that round's output and its
/// evidence that round's proof (none for a derived round).
Result<Unit, SeedError> check_consumed(const SeedChain& seeds, std::span<const ConsumedSeed> consumed);

/// What block `limit` may read: the seeds of the rounds before its own. Given
/// the block's own Advance (not yet committed), that includes the nullified
/// rounds between its parent's round and its own, which are fixed before it
/// (rotating validators skip views; docs/cip11.md choice 78).
class SeedsBefore final : public BeaconSource {
 public:
  SeedsBefore(const SeedChain& seeds, Round limit, std::span<const RoundSeed> taking = {})
      : seeds_(seeds), limit_(limit), taking_(taking) {}
  std::optional<Beacon> seed(RoundEpoch epoch, View view) const override;

 private:
  const SeedChain& seeds_;
  Round limit_;
  std::span<const RoundSeed> taking_;
};

}  // namespace cowboy::cip11::chain
