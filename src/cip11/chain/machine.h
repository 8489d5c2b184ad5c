// The CIP-11 chain plane as a pure, deterministic state machine: the Runner
// Registry (§7.1, §7.2), the Job Dispatcher (§9) and result settlement
// (§10.3, §11.2). A block is begin_block() - presence decoded against
// registry(H-1), due pending selections, expired deadlines - then one
// apply() per instruction. No I/O, no clock, no randomness beyond the
// BeaconSource. A refused instruction leaves the state as it was.
#pragma once

#include <functional>

#include "cip11/chain/errors.h"
#include "cip11/chain/instructions.h"
#include "cip11/chain/mode_a.h"
#include "cip11/chain/rounds.h"
#include "cip11/chain/shadow.h"
#include "cip11/chain/snapshots.h"
#include "cip11/chain/state.h"

namespace cowboy::cip11::chain {

/// The §9.2 seed source. A real chain reads verified threshold seeds; the
/// devchain reads its round seeds (chain/seed.h: SeedsBefore, docs/cip11.md choice 74).
class BeaconSource {
 public:
  virtual ~BeaconSource() = default;
  /// The seed of Round(epoch, view); nullopt while it is not yet known.
  virtual std::optional<Beacon> seed(RoundEpoch epoch, View view) const = 0;
};

/// A public beacon anyone can compute (keccak of the chain id and view): the
/// machine's tests and fuzz targets pin committees with it. No node uses it.
/// Block h is proposed in Round(0, h); a block H can read any view below H.
class DevBeacon final : public BeaconSource {
 public:
  DevBeacon(const Bytes32& chain_instance_id, Height height) : chain_(chain_instance_id), height_(height) {}
  std::optional<Beacon> seed(RoundEpoch epoch, View view) const override;

 private:
  Bytes32 chain_;
  Height height_;  // the block being executed
};

/// What one block did that the world outside the chain acts on (§10.1, §10.5).
struct AssignmentNotice {
  JobId job_id{};
  Address runner{};
  Height assignment_height{};
  Height deadline_block{};
};
enum class EndReason : std::uint8_t { kReassigned, kExpired, kFailed, kCompleted };
struct AssignmentEnd {
  JobId job_id{};
  Address runner{};
  EndReason reason = EndReason::kExpired;
};
struct ConsumedSeed {  // ConsumedSeedsV1 entry (§9.2)
  RoundEpoch epoch{};
  View view{};
  Bytes signature;
  Bytes evidence{};  // the devchain seed's ECVRF proof (Beacon::evidence), so replay checks it from chain data
  bool operator==(const ConsumedSeed&) const = default;
};
/// CIP11_PRESENCE_SHADOW_ENABLED telemetry (§14 Phase 1): the committee the
/// CIP-11 draw (v3 seed, PresenceInput, MRU) would have chosen beside the one
/// live selection chose. Never state, never a reason to change anything.
/// An M > 1 job's first shadow draw is made at its own pass block (§9.2), and
/// `live` is then the live first committee, drawn at S.
struct ShadowDraw {
  JobId job_id{};
  std::vector<Address> live, shadow;
  std::uint32_t shadow_present = 0;  // members of `shadow` marked present in PresenceInput(H)
  std::uint32_t selection = 1;       // which committee: 1 the first, n a re-selection's (choice 39)
};
struct Effects {
  std::vector<AssignmentNotice> assigned;
  std::vector<AssignmentEnd> ended;
  std::vector<Address> deregistered;  // runners this block deregistered: a validator closes their connections
  std::vector<ConsumedSeed> consumed_seeds;  // sorted by round, deduplicated
  std::vector<ShadowDraw> shadow;
  /// What the block changes in the shadow book (shadow.h), in order: applied
  /// by the node once the block is written, never part of its state.
  std::vector<ShadowWrite> shadow_writes;
  /// Pending selections whose block-S snapshot did not verify against their
  /// committed root in this block: left pending, never assigned (§9.2).
  std::vector<JobId> unverified_pending;
  /// Of those, the ones past their deadline_block: ended TimedOut, never assigned.
  std::vector<JobId> expired_pending;
};

struct BlockContext {
  Height height{};
  const ChainParams& params;
  const BeaconSource& beacon;
  /// PresenceInput(H); its size is |registry(H-1)|, the index basis. Under
  /// effective Mode A it is proven_presence(parent state) (mode_a.h), and the
  /// proposer's field is not read (§7.2 rule 3).
  const PresentSet& presence;
  /// The validator-set snapshots (Mode A receipts, the §8.4 guard's |V|).
  const ValidatorSnapshots& validators;
  /// The consensus view the block is proposed in, within its round epoch
  /// (§9.2 rounds are views, docs/cip11.md choices 102, 140). nullopt: the
  /// height, as for a lone producer, whose views are its heights.
  std::optional<View> view{};
  /// The shadow book as the blocks before this one left it (shadow.h); read
  /// only under CIP11_PRESENCE_SHADOW_ENABLED with present-first off. Null: an
  /// empty book.
  const ShadowBook* shadow = nullptr;
  /// The round epochs closed before the block's (choice 140): the block is
  /// proposed in Round(rounds->open_epoch(), round_view()). Null: none closed,
  /// every round in round epoch 0 (a lone producer).
  const EpochSchedule* rounds = nullptr;
  /// A verifier's block: its ConsumedSeedsV1 entries. The pending pass
  /// assigns only records whose round is among them: the proposer chooses
  /// which due records a block processes, and a verifier never treats one
  /// left pending as a fault (§9.2). Null: the proposer's, every due record.
  const std::vector<ConsumedSeed>* committed_seeds = nullptr;
  /// Consensus finality as the parent left it (§9.2 condition 1, §16.1's
  /// "finality information"; devchain/fork.h final_height): the highest block
  /// no fork can drop. nullopt: every block below this one, as for a lone
  /// producer, whose blocks are final when written.
  std::optional<Height> final_through{};
  /// F as TimeoutTooShort counts it (a job is pushed once its block is final,
  /// §10.1): the devchain genesis F where the genesis bytes hold it (several
  /// validators, F other than 64), else 0: a lone producer, or a chain made
  /// before F was named, which keeps its old rule (docs/cip11.md choice 160).
  std::uint64_t finality_depth = 0;
  /// A lone producer's view is its height: the one place a height is read as a view (choice 138).
  View round_view() const { return view.value_or(View{height.value}); }
  /// The highest final block (final_through).
  Height final_height() const { return final_through.value_or(Height{height.value > 0 ? height.value - 1 : 0}); }
  /// The round the block is proposed in.
  Round round() const { return Round{rounds ? rounds->open_epoch() : RoundEpoch{0}, round_view()}; }
  /// The schedule the block's round arithmetic runs over.
  const EpochSchedule& schedule() const {
    static const EpochSchedule kNoneClosed;
    return rounds ? *rounds : kNoneClosed;
  }
};


/// §7.2 rules 1-2: the present set a block's field stands for. With the flag
/// off an absent or malformed field is the empty set; with it on either makes
/// the block invalid (the error says why).
Res<PresentSet> presence_of_block(const ChainParams& params, const std::optional<Bytes>& field,
                                  std::uint32_t registry_size);

/// Start of block H: assigns due M > 1 selections in (submitted_at, job_id)
/// order, each from its block-S snapshot re-derived and checked against its
/// committed candidates_snapshot_root; then times out assignments past their
/// deadline and draws their next committees from each job's original seed.
/// It looks only at the jobs State::due holds for H, after bringing the index
/// up to date with every job changed since it last looked.
void begin_block(State& state, const BlockContext& block, Effects& effects);
/// The block from which begin_block must look at `job`: the one after a
/// pending selection's block S (views restart per round epoch, so no view
/// bounds the height its seed round passes at, choice 140), the one after an
/// assignment's deadline;
/// nullopt once the job has ended. One rule for State::due.
std::optional<Height> next_due(const JobRecord& job);

struct TxContext {
  Address sender{};
  Bytes32 tx_hash{};  // names a submitted job: job_id_of(tx_hash)
};
struct Outcome {
  std::optional<ChainError> error;
  std::optional<JobId> job_id;                 // SubmitJob: the new job
  std::optional<CertificateReport> certificate;  // SubmitPresenceCertificate: its charges and verdicts
};
/// Applies one Cip11Call payload. Stake moves between `balances` and the runner record.
Outcome apply(State& state, std::map<Address, u128>& balances, const BlockContext& block, const TxContext& tx,
              ByteView payload, Effects& effects);

/// The reveal window in block `height` (docs/cip11.md choice 40): every
/// committee member's commitment is in an earlier block, or half the timeout
/// has passed since the assignment.
bool reveal_window_open(const JobRecord& job, Height height);
/// Whether `runner`'s reveal could be included in block `height`: always for
/// M = 1; for M > 1 once its own commitment is in an earlier block and the
/// window is open. The validator holds an early reveal and the runner sends
/// none by this rule (§10.3).
bool reveal_allowed(const JobRecord& job, const Address& runner, Height height);

JobId job_id_of(const Bytes32& tx_hash);  // keccak256("cowboy/cip11-job-id/v1" || tx_hash)

/// The record a registration makes at `height`: Healthy, its first heartbeat at `height`.
RunnerRecord runner_record(const RegisterRunner& registration, const Address& address, Height height);

/// §9.1 at the block's height: the floor-eligible runners that pass this job's
/// filters, address-sorted, indexed against registry(H-1) (the presence set's size).
std::vector<Candidate> eligible_candidates(const State& state, const BlockContext& block, const JobRecord& job);
/// The same filters over the registry as it stood at the end of block S-1
/// (each runner's `history`), at height S: the block-S snapshot a pending
/// selection commits to in S and is assigned from at its pass (§9.2).
std::vector<Candidate> snapshot_candidates(const State& state, const BlockContext& block, const JobRecord& job,
                                           Height submitted_at);

}  // namespace cowboy::cip11::chain
