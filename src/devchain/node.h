// devchain::Node: a single-validator chain over the CIP-39 registry state
// machine and, when its genesis has a CIP-11 section, the CIP-11 chain plane
// (cip11/chain/machine.h). Blocks come at a fixed interval; a lone producer's
// are final at once, and with several validators a node may un-apply its last
// kMaxRollbackDepth blocks to follow a winning branch (fork.h, follow()).
//
// Every block is a DevchainBlockV1 (block.h) whose digest covers its
// execution inputs. On a chain with several validators each validator runs its
// own Node: the leader of a view proposes (propose_block) and the others
// re-execute what it sent on their own state and commit it only when every
// committed field verifies (accept_block); the rotation, the view timeouts and
// the transport are the validator process's (docs/devchain.md "Several validators").
//
// Each block of a CIP-11 chain carries a PresenceInputV1 field from the
// validator's presence provider (§8.1) and, given its leader's key, the ECVRF
// proof of its round's seed as seed_evidence (docs/cip11.md choices 74, 78:
// the round of view v is led by the proposer of v, or by validator 0 for a
// lone producer; followers verify each proof before executing the block, and
// the last rounds' seeds are replayed and verified from the stored proofs at
// open); an observer sees every
// committed block's assignments after the write (§10.1 pushes only what is
// final: a lone producer's blocks are; with several validators a block is
// final only its genesis finality depth F deep (D12), and the validator
// service pushes a block's assignments once it is final, so a fork drops
// none it pushed).
//
// Durability contract: a block is one synced RocksDB WriteBatch holding its
// receipts, exactly the state records it changed (the registry when it changed,
// each sender's nonce, each CIP-11 record, layout.h) and the new height (with
// several validators, also its undo record, fork.h). Nothing about a block is
// visible - no receipt, no height, no state - until that write returned, so
// after a crash the chain resumes at the last written block with exactly its
// state: no finalized block lost, none applied twice. A failed write undoes the
// block in memory (cip11::chain::State rollback) and the next tick tries again.
// Pending (mempool) transactions are not durable; after a restart clients
// resubmit them with the same nonces. A transaction up to 16 nonces ahead of
// its sender's next one waits, unapplied, until the gap fills.
//
// Who owns what: the CIP-11 plane in memory belongs to the block producer
// (produce_mu_) and is changed in place, journaled; its reads are served from
// the store at the snapshot of the last published block. The registry, the
// nonces, the height and that snapshot are published together under mu_.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "cip11/chain/machine.h"
#include "cip11/chain/seed.h"
#include "devchain/api.h"
#include "devchain/blocks_api.h"
#include "devchain/cip11_api.h"
#include "devchain/genesis.h"
#include "devchain/proposers.h"
#include "devchain/state_codec.h"

namespace rocksdb {
class DB;
class Snapshot;
}

namespace cowboy::devchain {

struct NodeConfig {
  std::filesystem::path data_dir;
  std::chrono::milliseconds block_interval{1000};
  std::size_t max_block_txs = 5'000;
  std::size_t max_mempool_txs = 50'000;
  /// The seed of this validator's Ed25519 peer key (one meaning for both
  /// uses): it signs the blocks this node proposes, its place in the canonical
  /// order is the proposer index they carry, and the ECVRF key of the same
  /// seed proves the round seed of each block it proposes (docs/cip11.md
  /// choices 74 and 78) unless the genesis names a separate VRF key (vrf_key). A lone producer's must be validator 0 of the genesis;
  /// a rotating validator's may be any key, which proposes where the snapshot
  /// active at a height names it (docs/devchain.md D2). Unset, blocks carry
  /// proposer 0, a zero signature and no seed proof (each round's seed is
  /// derived, as a nullified one's).
  std::optional<crypto::Ed25519Seed> validator_key{};
  /// The secret of this validator's ECVRF key when its genesis entry names a
  /// vrf_key (docs/cip11.md choice 100): it proves the round seeds in place of
  /// the peer key's seed, and must be that key's; given when the genesis names
  /// none, the open is refused.
  std::optional<crypto::ecvrf::Seed> vrf_key{};
  /// Who leads the rounds, for the blocks and their seeds alike. false: this
  /// node is the chain's one producer (cip11d --dev), and genesis validator 0
  /// leads every round. true: the validators take turns (cip11d --genesis,
  /// the rotation), and the leader of Round(E, v) is the proposer of view v
  /// of epoch E: validators_E[v mod N_E] of the epoch active at its block's
  /// height (proposers.h), whose views restart at 0 (docs/cip11.md choice 140).
  bool rotating = false;
  /// false: this node's blocks assign no due M > 1 selection and commit no
  /// seed (§9.2 lets a proposer leave them pending; verifiers must accept
  /// that). For tests of exactly that; a validator keeps the default.
  bool process_due_selections = true;
};

/// A committed block as the validator process sees it (after its durable write).
struct CommittedBlock {
  std::uint64_t height = 0;
  std::optional<Bytes> presence;   // the block's PresenceInputV1 field
  cip11::chain::Effects effects;   // assignments made and ended in this block
};

/// Blocks this node un-applied to follow a winning branch (docs/devchain.md
/// D11), as the validator process sees it: the new head's height and how many
/// blocks were dropped. None was final, so none of their assignments was
/// pushed (D12); the winning branch's blocks come after, each through the
/// block observer.
struct RolledBack {
  std::uint64_t height = 0;
  std::uint64_t dropped = 0;  // how many blocks
};

class Node final : public ChainApi, public Cip11Api, public BlocksApi {
 public:
  /// Opens (or creates, from `genesis`) the chain stored in config.data_dir
  /// (its RocksDB store in chain.rocksdb/). A new data directory is absent or
  /// empty (a mount point or a symlink to an empty directory will do); the
  /// chain is built inside it crash-safely (common/data_dir.h). A directory
  /// holding anything else is refused, and so is a chain.rocksdb without a
  /// chain. An existing chain ignores `genesis` unless it names a different
  /// chain, which is refused.
  static Result<std::unique_ptr<Node>, std::string> open(const NodeConfig& config,
                                                         const std::optional<GenesisSpec>& genesis);
  ~Node() override;

  /// Supplies each block's PresenceInputV1 field (the proposer's local view,
  /// §8.1), given |registry(H-1)|; unset, blocks carry none. Set before start().
  using PresenceProvider = std::function<std::optional<Bytes>(std::uint64_t height, std::uint32_t registry_size)>;
  void set_presence_provider(PresenceProvider provider);
  /// Called with each transaction submit() newly accepted (pending or queued,
  /// not a resubmission), on the submitting thread: a validator forwards it to
  /// the others so that no leader's death loses it. Set before serving.
  void set_submit_observer(std::function<void(const Transaction&)> observer);
  /// Called after each block is durable, on the producing thread. Set before start().
  void set_block_observer(std::function<void(const CommittedBlock&)> observer);
  /// Called after blocks were un-applied (follow(), before it accepts the
  /// winning branch's; roll_back_to()), on the calling thread. Set before start().
  void set_rollback_observer(std::function<void(const RolledBack&)> observer);

  /// Produces blocks every config.block_interval on a background thread.
  void start();
  void stop();
  /// Produces one block now, in the view after the head's, as a lone producer
  /// (no rotation); returns its height (tests drive the chain with this).
  ApiResult<std::uint64_t> produce_block();
  /// Proposes the block of `view` from the mempool and commits it; returns it
  /// sealed for the other validators. kBadRequest unless `view` is above the
  /// head's; the caller (the rotation) knows this node leads it. `announce`
  /// gets the sealed block before this node's own write, so a proposer killed
  /// between the two finds its block at its peers when it restarts, and never
  /// holds a block no one else has.
  using Announce = std::function<void(const SignedBlock&)>;
  ApiResult<SignedBlock> propose_block(cip11::View view, const Announce& announce = {});
  /// Verifies a block another validator proposed by re-executing it on this
  /// node's state, and commits it. A block that does not verify changes nothing
  /// and is answered kBlockRefused, its BlockRefusal named first in the message.
  /// kUnavailable, without waiting, while this node is executing another
  /// block (two proposers sending each other their blocks must not wait on
  /// each other); the caller fetches it again later.
  ApiResult<std::uint64_t> accept_block(const SignedBlock& block) override;
  /// The committed block at `height` >= 1, as proposed (a validator that was
  /// down fetches these from a peer and accepts them in order).
  ApiResult<SignedBlock> block_at(std::uint64_t height) override;
  /// Fork choice with one peer (docs/devchain.md D7, D11): finds the highest
  /// height where this node's chain and the peer's hold the same block (above
  /// this node's final floor, final_floor_, D12); when the peer's block above
  /// it wins (wins_at_height), un-applies this node's blocks down to it - one
  /// synced batch each, from the undo records - and accepts the peer's from
  /// there, every one verified as accept_block does. A peer whose chain is
  /// this one's continuation is caught up with; a losing or shorter one
  /// changes nothing. The dropped blocks' transactions go back to the mempool.
  /// If the peer's first block does not verify, this node's own blocks are
  /// accepted again. Fetches before it takes the producer's lock;
  /// kUnavailable when the head moved meanwhile (follow again). `enough`,
  /// asked before each block fetched, stops the fetching there (a stop, a
  /// time budget): the blocks fetched so far are taken.
  struct Followed {
    std::uint64_t dropped = 0;   // blocks un-applied
    std::uint64_t accepted = 0;  // the peer's blocks accepted
  };
  ApiResult<Followed> follow(BlocksApi& peer, const std::function<bool()>& enough = {});
  /// Un-applies the blocks above `height` (follow()'s way back, D11): refused,
  /// changing nothing, when one of them is final (at or below final_floor_,
  /// D12) or keeps no undo record (written by a lone producer).
  ApiResult<Unit> roll_back_to(std::uint64_t height);
  /// True once after a block was refused that builds on another block than
  /// this node's at a height it holds (WrongParent, or NotNext at or below the
  /// head with another digest): the rotation then follows its peers at once.
  bool take_fork_seen() { return fork_seen_.exchange(false); }
  /// Blocks un-applied so far (the validator's metric).
  std::uint64_t rolled_back() const { return rolled_back_; }
  /// The jobs the CIP11_PRESENCE_SHADOW_ENABLED book holds a record for
  /// (cip11/chain/shadow.h): kept in memory only, none after a restart or a
  /// rollback (docs/cip11.md choice 136).
  std::size_t shadow_records() const;
  using Head = ChainHead;
  Head head() const;
  ApiResult<ChainHead> chain_head() override { return head(); }
  /// Blocks refused so far, by reason (the validator's metric).
  std::array<std::uint64_t, kBlockRefusalCount> refusals() const;
  /// This node's index among the canonical validators of the epoch active at
  /// the next height (a lone producer: of the genesis); nullopt without a key
  /// or when that snapshot leaves it out.
  std::optional<std::uint32_t> validator_index() const;
  /// The genesis validators (ValidatorSetSnapshot(0)): more than one makes a
  /// chain of several validators, whose blocks carry state roots and undo records.
  std::size_t validator_count() const { return validators_.size(); }
  /// F: how deep a block is final (D12); 0 for a lone producer.
  std::uint64_t finality_depth() const { return finality_depth_; }
  /// Whether this node's key leads `view` at `height` (docs/devchain.md D2):
  /// the leader of the view among the validators of the epoch active there.
  bool leads(std::uint64_t height, cip11::View view) const;
  /// Who proposes at each height, as of the last published block (proposers.h).
  std::shared_ptr<const Proposers> proposers() const;
  GenesisSpec genesis() const;
  /// keccak256 of the encoded state at the current height: equal hashes, equal states.
  Bytes32 state_hash() const;

  ApiResult<Bytes32> submit(const Transaction& tx) override;
  ApiResult<std::optional<TxReceipt>> receipt(const Bytes32& tx_hash) override;
  ApiResult<std::uint64_t> height() override;
  ApiResult<Bytes32> chain_instance_id() override;
  ApiResult<AccountInfo> account_info(const Address& address) override;
  ApiResult<cbqs::ProviderRecordV2> provider(const Address& provider) override;
  ApiResult<cbqs::StreamRecordV2> stream(const Bytes32& stream_id) override;
  ApiResult<cbqs::CbqsAccountV2> account(const Address& owner, const Address& provider) override;
  ApiResult<cbqs::Params> params() override;
  ApiResult<std::vector<BlockEvents>> events(std::uint64_t from, std::uint64_t to) override;
  ApiResult<ProviderSnapshot> provider_snapshot(const Address& provider) override;

  ApiResult<Cip11Genesis> cip11_genesis() override;
  ApiResult<std::vector<cip11::chain::RunnerRecord>> runners() override;
  ApiResult<cip11::chain::RunnerRecord> runner(const Address& runner) override;
  ApiResult<cip11::chain::PresenceProof> presence_proof(const Address& runner) override;
  ApiResult<cip11::chain::JobRecord> job(const cip11::JobId& job_id) override;
  ApiResult<std::vector<cip11::chain::JobRecord>> runner_jobs(const Address& runner) override;
  ApiResult<BlockPresence> block_presence(std::uint64_t height) override;
  ApiResult<cip11::chain::Effects> block_assignments(std::uint64_t height) override;
  ApiResult<std::vector<cip11::chain::ValidatorSetChange>> validator_set_changes() override;
  ApiResult<std::vector<cip11::chain::ValidatorEntry>> validators() override;
  /// The seed of Round(0, view) while the producer still holds it (the rounds
  /// a pending selection or the next block may read); nullopt otherwise.
  std::optional<cip11::chain::RoundSeed> round_seed(cip11::View view) const;
  /// The seed of `round`, likewise (rounds numbered per epoch, docs/cip11.md choice 140).
  std::optional<cip11::chain::RoundSeed> round_seed(cip11::chain::Round round) const;
  /// The round of a block at `height` in `view` (choice 140): on rotating
  /// validators Round(E, view), E the validator-set epoch active at the
  /// height; a lone producer's Round(0, view).
  cip11::chain::Round round_of(std::uint64_t height, cip11::View view) const;
  /// The lowest view the block after `head` may be proposed in: 0 where its
  /// height starts a round epoch (views restart), else the head's view + 1.
  cip11::View first_view(const ChainHead& head) const;

 private:
  struct Pending {
    Transaction tx;
    Address sender;
    Bytes32 hash;
  };

  Node(NodeConfig config, std::unique_ptr<rocksdb::DB> db, GenesisSpec genesis, ChainState state, Head head);
  /// What a block changes besides the CIP-11 plane: a copy of the registry
  /// (when it has transactions) and its senders' next nonces.
  struct BlockWork {
    std::optional<cbqs::RegistryState> registry;
    std::map<Address, std::uint64_t> nonces;
    std::optional<std::vector<ScheduleValidatorSet>> validator_sets;  // when a change was scheduled (D10)
  };
  TxReceipt apply(BlockWork& work, const Pending& p, std::uint64_t height, std::uint32_t index,
                  const cip11::chain::BlockContext* cip11, cip11::chain::Effects& effects);
  /// A ValidatorSetCall included at `height`: checked, and scheduled into
  /// `work` (nullopt) or refused with nothing changed.
  std::optional<ValidatorSetRefusal> schedule_validator_set(BlockWork& work, const Address& sender,
                                                            std::uint64_t height, ByteView payload) const;
  struct Execution;
  /// Runs `txs` as block `block.height` on the state in memory (the CIP-11
  /// plane in place, journaled); writes nothing.
  void execute(const Block& block, const std::vector<Pending>& txs, const cip11::PresentSet* present,
               Execution& out);
  /// The block's one synced write, then the in-memory commit and publication.
  ApiResult<std::uint64_t> write_block(const SignedBlock& block, const std::vector<Pending>& txs, Execution& ex);
  /// submit() without the observer; `fresh` when the transaction is new here.
  ApiResult<Bytes32> admit(const Transaction& tx, bool& fresh);
  /// admit() of a transaction whose sender and hash are known, under mu_.
  ApiResult<Bytes32> admit_locked(Pending p, bool& fresh);
  /// accept_block with produce_mu_ held.
  ApiResult<std::uint64_t> accept_locked(const SignedBlock& block);
  /// Un-applies blocks down to `height` from their undo records, one synced
  /// batch each, then reads the state, the head and the round seeds back from
  /// the store and puts the dropped blocks' transactions back into the mempool
  /// (produce_mu_ held).
  ApiResult<Unit> unapply_to(std::uint64_t height);
  ApiError refuse(BlockRefusal why, const std::string& detail);
  /// After a block moved these senders' nonces: drops pending transactions on
  /// a used nonce and lines up queued successors (under mu_).
  void drop_included_locked(const std::map<Address, std::uint64_t>& senders);
  /// propose_block in `view`, or (nullopt) in the view after the head's.
  ApiResult<SignedBlock> propose(std::optional<cip11::View> view, const Announce& announce);
  /// The store as of the last published block, for reads.
  std::shared_ptr<const rocksdb::Snapshot> published() const;
  /// The block's presence field and the set it stands for (§7.2 rules 1-2).
  std::pair<std::optional<Bytes>, cip11::PresentSet> presence_for(std::uint64_t height, std::uint32_t registry_size);
  ApiResult<Unit> require_cip11() const;
  void run();

  const NodeConfig config_;
  std::unique_ptr<rocksdb::DB> db_;
  const GenesisSpec genesis_;
  const Bytes32 chain_instance_id_;
  // ValidatorSetSnapshot(0), the genesis schedule (D9) and the changes
  // governance scheduled (D10): the producer's (produce_mu_), rebuilt after a
  // block that scheduled one.
  cip11::chain::ValidatorSnapshots snapshots_;
  const std::vector<crypto::Ed25519Public> validators_;  // the genesis's, canonical order (§5.4)
  const std::optional<std::uint32_t> genesis_index_;     // this key's among them (a lone producer's proposer index)
  const std::uint64_t finality_depth_;                   // F with several validators, 0 for a lone producer (D12)
  const std::optional<crypto::Ed25519Public> my_key_;
  // Who proposes at each height (proposers.h): written under mu_ by the
  // producer (with snapshots_), read by it without the lock.
  std::shared_ptr<const Proposers> proposers_ = std::make_shared<const Proposers>();

  ChainState state_;  // .cip11: the producer's (produce_mu_); .registry, .nonces, .validator_sets: written under mu_ by the producer
  // The producer's (produce_mu_): the recent rounds' seeds, replayed from the
  // stored blocks' proofs at open, and the key that proves the next ones.
  std::unique_ptr<cip11::chain::SeedChain> seeds_;
  std::optional<crypto::ecvrf::Seed> seed_key_;
  // The producer's: the view of each block S a selection is pending since
  // (pending_views_of), whose round the seeds kept start from (choice 139).
  std::map<std::uint64_t, cip11::chain::Round> pending_views_;
  // The round leaders' ECVRF keys the seeds' leader function reads: the
  // epoch's of the block whose round is being taken, set before each.
  std::shared_ptr<std::vector<crypto::ecvrf::PublicKey>> round_keys_;
  // CIP11_PRESENCE_SHADOW_ENABLED's book: the producer's (produce_mu_), in
  // memory only and outside every state root, written from each block's
  // effects after its write, emptied by a rollback (docs/cip11.md choice 136).
  cip11::chain::ShadowBook shadow_;

  mutable std::mutex mu_;  // guards everything below
  std::uint64_t height_;
  Head head_;  // of height_
  std::array<std::uint64_t, kBlockRefusalCount> refusals_{};
  std::shared_ptr<const rocksdb::Snapshot> published_;  // the store as of height_
  std::deque<Pending> mempool_;
  std::set<Bytes32> mempool_hashes_;
  std::map<Address, std::uint64_t> next_nonce_;  // including pending transactions
  static constexpr std::uint64_t kMaxNonceGap = 16;
  std::map<Address, std::map<std::uint64_t, Pending>> future_;  // nonces ahead of next_nonce_, until the gap fills
  std::size_t future_count_ = 0;

  PresenceProvider presence_provider_;
  std::function<void(const CommittedBlock&)> observer_;
  std::function<void(const Transaction&)> submit_observer_;
  std::function<void(const RolledBack&)> rollback_observer_;
  std::atomic<bool> fork_seen_{false};
  std::atomic<std::uint64_t> rolled_back_{0};
  // The highest block final here (D12): max of final_height(head, F) over every
  // head this node has had, so a fork that took the head lower never reaches a
  // block final (and pushed) before. Raised by each commit, kept across a
  // restart by each rollback's batches (layout::kFinalFloor); the producer's
  // (produce_mu_), read without it by follow().
  std::atomic<std::uint64_t> final_floor_{0};

  mutable std::mutex produce_mu_;  // one block at a time
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread producer_;
};

}  // namespace cowboy::devchain
