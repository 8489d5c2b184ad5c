// devchain::Node: a single-validator chain over the CIP-39 registry state
// machine and, when its genesis has a CIP-11 section, the CIP-11 chain plane
// (cip11/chain/machine.h). Blocks come at a fixed interval and are final at once.
//
// Each block of a CIP-11 chain carries a PresenceInputV1 field from the
// validator's presence provider (§8.1) and, given validator 0's key, its
// round's ECVRF seed proof (docs/cip11.md choice 74: the seeds are replayed
// and verified from the stored proofs at open); an observer sees every
// committed block's assignments after the write (§10.1: push only what is final).
//
// Durability contract: a block is one synced RocksDB WriteBatch holding its
// receipts, exactly the state records it changed (the registry when it
// changed, each sender's nonce, each CIP-11 record, layout.h) and the new
// height. Nothing about a block is visible - no receipt, no height, no state -
// until that write returned, so after a crash the chain resumes at the last
// written block with exactly its state: no finalized block lost, none applied
// twice. A failed write undoes the block in memory (cip11::chain::State
// rollback) and the next tick tries again. Pending (mempool) transactions are
// not durable; after a restart clients resubmit them with the same nonces. A
// transaction up to 16 nonces ahead of its sender's next one waits, unapplied,
// until the gap fills.
//
// Who owns what: the CIP-11 plane in memory belongs to the block producer
// (produce_mu_) and is changed in place, journaled; its reads are served from
// the store at the snapshot of the last published block. The registry, the
// nonces, the height and that snapshot are published together under mu_.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <memory>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "cip11/chain/machine.h"
#include "cip11/chain/seed.h"
#include "devchain/api.h"
#include "devchain/cip11_api.h"
#include "devchain/genesis.h"
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
  /// The producer's Ed25519 seed, which must be validator 0 of the CIP-11
  /// genesis (the devchain's one producer leads every round): each block then
  /// carries its round's ECVRF seed proof (docs/cip11.md choice 74). Without
  /// it a block carries none and its round's seed is derived, as a nullified one.
  std::optional<crypto::Ed25519Seed> validator_key{};
};

/// A committed block as the validator process sees it (after its durable write).
struct CommittedBlock {
  std::uint64_t height = 0;
  std::optional<Bytes> presence;   // the block's PresenceInputV1 field
  cip11::chain::Effects effects;   // assignments made and ended in this block
};

class Node final : public ChainApi, public Cip11Api {
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
  /// Called after each block is durable, on the producing thread. Set before start().
  void set_block_observer(std::function<void(const CommittedBlock&)> observer);

  /// Produces blocks every config.block_interval on a background thread.
  void start();
  void stop();
  /// Produces one block now; returns its height (tests drive the chain with this).
  ApiResult<std::uint64_t> produce_block();
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
  /// Mode A: the runner's presence_anchor and presence_proven_until (§8.3).
  ApiResult<cip11::chain::PresenceProof> presence_proof(const Address& runner);
  ApiResult<cip11::chain::JobRecord> job(const Bytes32& job_id) override;
  ApiResult<std::vector<cip11::chain::JobRecord>> runner_jobs(const Address& runner) override;
  ApiResult<BlockPresence> block_presence(std::uint64_t height) override;
  ApiResult<cip11::chain::Effects> block_assignments(std::uint64_t height) override;
  /// The seed of Round(0, view) while the producer still holds it (the rounds
  /// a pending selection or the next block may read); nullopt otherwise.
  std::optional<cip11::chain::RoundSeed> round_seed(std::uint64_t view) const;

 private:
  struct Pending {
    Transaction tx;
    Address sender;
    Bytes32 hash;
  };

  Node(NodeConfig config, std::unique_ptr<rocksdb::DB> db, GenesisSpec genesis, ChainState state,
       std::uint64_t height);
  /// What a block changes besides the CIP-11 plane: a copy of the registry
  /// (when it has transactions) and its senders' next nonces.
  struct BlockWork {
    std::optional<cbqs::RegistryState> registry;
    std::map<Address, std::uint64_t> nonces;
  };
  TxReceipt apply(BlockWork& work, const Pending& p, std::uint64_t height, std::uint32_t index,
                  const cip11::chain::BlockContext* cip11, cip11::chain::Effects& effects);
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
  const cip11::chain::ValidatorSnapshots snapshots_;  // ValidatorSetSnapshot(0): the devchain has one epoch

  ChainState state_;  // .cip11: the producer's (produce_mu_); .registry, .nonces: written under mu_ by the producer
  // The producer's (produce_mu_): every round's seed, replayed from the stored
  // blocks' proofs at open, and the key that proves the next ones.
  std::unique_ptr<cip11::chain::SeedChain> seeds_;
  std::optional<crypto::ecvrf::Seed> seed_key_;

  mutable std::mutex mu_;  // guards everything below
  std::uint64_t height_;
  std::shared_ptr<const rocksdb::Snapshot> published_;  // the store as of height_
  std::deque<Pending> mempool_;
  std::set<Bytes32> mempool_hashes_;
  std::map<Address, std::uint64_t> next_nonce_;  // including pending transactions
  static constexpr std::uint64_t kMaxNonceGap = 16;
  std::map<Address, std::map<std::uint64_t, Pending>> future_;  // nonces ahead of next_nonce_, until the gap fills
  std::size_t future_count_ = 0;

  PresenceProvider presence_provider_;
  std::function<void(const CommittedBlock&)> observer_;

  mutable std::mutex produce_mu_;  // one block at a time
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread producer_;
};

}  // namespace cowboy::devchain
