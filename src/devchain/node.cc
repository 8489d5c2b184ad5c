#include "devchain/node.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/data_dir.h"
#include "cip11/chain/consumed_seeds.h"
#include "common/log.h"
#include "devchain/cip11_genesis.h"
#include "devchain/cip11_json.h"
#include "devchain/cip11_store.h"
#include "devchain/fork.h"
#include "devchain/json.h"
#include "devchain/layout.h"
#include "devchain/proposers.h"

namespace cowboy::devchain {

namespace {

using layout::as_sv;

ApiError internal(std::string message) { return ApiError{ApiErrorCode::kInternal, std::move(message)}; }
ApiError not_found(std::string what) { return ApiError{ApiErrorCode::kNotFound, std::move(what)}; }

// The data directory holds the chain's RocksDB store, which marks it.
constexpr const char* kStoreName = "chain.rocksdb";
const data_dir::Owner kDataDir{"devchain data directory", {kStoreName}};

Result<std::unique_ptr<rocksdb::DB>, std::string> open_db(const std::filesystem::path& path, bool create) {
  rocksdb::Options options;
  options.create_if_missing = create;
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, path.string(), &raw);
  if (!status.ok()) return Err{"cannot open the chain store: " + status.ToString()};
  return std::unique_ptr<rocksdb::DB>(raw);
}

// A new chain at `path`: genesis as height 0, one key per record in one synced
// write like any block (data_dir publishes the data directory after it).
Result<Unit, std::string> create_chain(const std::filesystem::path& path, const std::optional<GenesisSpec>& genesis) {
  if (!genesis) return Err{std::string("the data directory holds no chain and no genesis was given")};
  // Only a new chain: one created before F was named (K = 3) still opens (D12).
  if (genesis->cip11)
    if (auto checked = check_finality(*genesis->cip11); !checked) return Err{"the genesis is refused: " + checked.error()};
  auto registry = cbqs::make_genesis(to_registry_genesis(*genesis));
  if (!registry) return Err{std::string("the genesis is refused by §18 rule 1")};
  ChainState state{std::move(*registry), {}, {}, {}};
  if (genesis->cip11) state.cip11 = cip11_genesis_state(*genesis->cip11);
  auto db = open_db(path, true);
  if (!db) return Err{db.error()};
  rocksdb::WriteBatch batch;
  batch.Put(std::string(layout::kGenesis), genesis_to_json(*genesis).dump());
  batch.Put(std::string(layout::kChain), std::string(as_sv(state.registry.chain_instance_id)));
  batch.Put(std::string(layout::kRegistry), std::string(as_sv(encode_registry(state.registry))));
  cip11_store::stage(state.cip11, batch);  // every genesis record is a change
  batch.Put(std::string(layout::kHeight), layout::be64(0));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  auto status = (*db)->Write(sync, &batch);
  if (!status.ok()) return Err{"cannot write genesis: " + status.ToString()};
  return Unit{};
}

std::shared_ptr<const rocksdb::Snapshot> snapshot_of(rocksdb::DB& db) {
  return {db.GetSnapshot(), [&db](const rocksdb::Snapshot* s) { db.ReleaseSnapshot(s); }};
}

/// f(read options at `at`), keeping the snapshot alive meanwhile.
template <typename F>
auto read_at(const std::shared_ptr<const rocksdb::Snapshot>& at, F f) {
  rocksdb::ReadOptions options;
  options.snapshot = at.get();
  return f(options);
}

/// The nonces of a block's senders, one key each.
void stage_nonces(const std::map<Address, std::uint64_t>& nonces, rocksdb::WriteBatch& batch) {
  for (const auto& [sender, next] : nonces) batch.Put(layout::nonce_key(sender), layout::be64(next));
}

Result<std::map<Address, std::uint64_t>, std::string> load_nonces(rocksdb::DB& db) {
  std::map<Address, std::uint64_t> out;
  const std::string prefix(layout::kNoncePrefix);
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator({}));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto k = it->key().ToStringView().substr(prefix.size());
    if (k.size() != 20 || it->value().size() != 8) return Err{std::string("a stored nonce is unreadable")};
    Address a;
    std::copy(k.begin(), k.end(), a.begin());
    out[a] = layout::from_be(it->value().ToStringView());
  }
  if (!it->status().ok()) return Err{it->status().ToString()};
  return out;
}

/// Block h's undo record (fork.h), staged in its own batch: every key the
/// batch puts or deletes, with its value in the store now, before the block.
/// The record kMaxRollbackDepth blocks below is pruned in the same batch.
rocksdb::Status stage_undo(rocksdb::DB& db, std::uint64_t h, rocksdb::WriteBatch& batch) {
  struct Keys : rocksdb::WriteBatch::Handler {
    std::set<std::string> keys;
    void Put(const rocksdb::Slice& key, const rocksdb::Slice&) override { keys.insert(key.ToString()); }
    void Delete(const rocksdb::Slice& key) override { keys.insert(key.ToString()); }
  } written;
  if (auto status = batch.Iterate(&written); !status.ok()) return status;
  UndoRecord record;
  for (const auto& key : written.keys) {
    std::string before;
    auto status = db.Get({}, key, &before);
    if (status.IsNotFound()) {
      record.entries.push_back({key, std::nullopt});
    } else if (status.ok()) {
      record.entries.push_back({key, std::move(before)});
    } else {
      return status;
    }
  }
  batch.Put(layout::undo_key(h), as_sv(encode_undo(record)));
  // The undo horizon: the record below it goes (the finality depth is at most this, D12).
  if (h > kMaxRollbackDepth) batch.Delete(layout::undo_key(h - kMaxRollbackDepth));
  return rocksdb::Status::OK();
}

/// The validator-set changes governance scheduled (D10), one key each, in
/// epoch order; each must be one past the genesis schedule's or the one before.
Result<std::vector<ScheduleValidatorSet>, std::string> load_validator_sets(rocksdb::DB& db, std::uint64_t first_epoch) {
  std::vector<ScheduleValidatorSet> out;
  const std::string prefix(layout::kValidatorSetPrefix);
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator({}));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto set = decode_schedule_validator_set(as_bytes(it->value().ToStringView()));
    if (!set) return Err{"a stored validator set is unreadable: " + std::string(codec::to_string(set.error()))};
    const std::uint64_t epoch = first_epoch + out.size();
    if (set->epoch != epoch || it->key().ToStringView().substr(prefix.size()) != layout::be64(epoch))
      return Err{"the stored validator sets skip epoch " + std::to_string(epoch)};
    out.push_back(std::move(*set));
  }
  if (!it->status().ok()) return Err{it->status().ToString()};
  return out;
}

/// Every snapshot a node reads: the genesis's (D9), then governance's (D10).
cip11::chain::ValidatorSnapshots snapshots_of(const GenesisSpec& genesis, const std::vector<ScheduleValidatorSet>& sets) {
  if (!genesis.cip11) return cip11::chain::ValidatorSnapshots::genesis(std::vector<crypto::Ed25519Public>{});
  auto out = validator_snapshots(*genesis.cip11);
  for (const auto& s : sets) out.add(cip11::Epoch{s.epoch}, cip11::Height{s.activation_height}, as_change(s).peer_keys);
  return out;
}

/// The block producers of every epoch (proposers.h); none without CIP-11.
Proposers proposers_of(const GenesisSpec& genesis, const cip11::chain::ValidatorSnapshots& snapshots,
                       const std::vector<ScheduleValidatorSet>& sets) {
  if (!genesis.cip11) return {};
  return Proposers::of(*genesis.cip11, snapshots, sets);
}

/// What a block's selection did that nothing else reports: the Phase-1 shadow
/// draws (§14: telemetry only) and pending selections whose block-S snapshot
/// did not verify (§9.2: never assigned).
void log_selection_telemetry(std::uint64_t height, const cip11::chain::Effects& e) {
  auto list = [](const std::vector<Address>& runners) {
    std::string out;
    for (const auto& r : runners) {
      if (!out.empty()) out += ',';
      out += json::hex0x(r);
    }
    return out;
  };
  for (const auto& s : e.shadow)
    log::info("cip11_shadow_draw", log::field("height", height), log::field("job_id", json::hex0x(s.job_id.value)),
              log::field("selection", s.selection), log::field("live", list(s.live)), log::field("shadow", list(s.shadow)),
              log::field("shadow_present", s.shadow_present), log::field("agree", s.live == s.shadow ? "true" : "false"));
  for (const auto& id : e.unverified_pending) {
    const bool expired = std::find(e.expired_pending.begin(), e.expired_pending.end(), id) != e.expired_pending.end();
    log::error("cip11_snapshot_root_mismatch", log::field("height", height), log::field("job_id", json::hex0x(id.value)),
               log::field("outcome", expired ? "timed_out" : "left_pending"));
  }
}

// ---- round seeds (docs/cip11.md choice 74) ----------------------------------

/// The leader of each round, whose ECVRF key (its genesis vrf_key, or its peer
/// key in a genesis that names none: choice 100; a joining validator's, the
/// one its governance change names) proves the round's seed.
/// Rotating validators: the proposer of view v of epoch E leads Round(E, v),
/// validators_E[v mod N_E] of the epoch E active at the height of the block
/// that takes the round (proposers.h, docs/cip11.md choice 140); `round_keys` holds that epoch's keys,
/// set by the node before it takes each block's round. A lone
/// producer: validator 0 of ValidatorSetSnapshot(0) leads every round. A chain
/// with no validator has no leader, so no proof.
using RoundKeys = std::shared_ptr<std::vector<crypto::ecvrf::PublicKey>>;
cip11::chain::LeaderOf devchain_leader(const Cip11Genesis& genesis, bool rotating, const RoundKeys& round_keys) {
  if (rotating) {
    return [round_keys](cip11::chain::Round r) -> std::optional<crypto::ecvrf::PublicKey> {
      const auto& keys = *round_keys;
      if (keys.empty()) return std::nullopt;
      return keys[leader_of(r.view, keys.size())];
    };
  }
  std::optional<crypto::ecvrf::PublicKey> key;
  if (!genesis.validators.empty()) key = vrf_key_of(genesis.validators.front());
  return [key](cip11::chain::Round) { return key; };
}

/// The round leaders' keys for the block at `height`: its epoch's (proposers.h).
void set_round_keys(const RoundKeys& round_keys, const Proposers& proposers, std::uint64_t height) {
  const auto* e = proposers.at(height);
  *round_keys = e ? e->vrf_keys : std::vector<crypto::ecvrf::PublicKey>{};
}

/// Rounds kept besides those a block may read, for Node::round_seed.
constexpr std::uint64_t kRetainedSeedRounds = 1024;

/// The seeds kept start here, counted in rounds (docs/cip11.md choice 139):
/// the last kRetainedSeedRounds views of the block's round epoch up to its
/// own (from the epoch's view 0 earlier in it: the round before, the last of
/// the epoch before, is the last taken and never forgotten, choice 140), and
/// from the oldest pending selection's round r_S on (its seed round is later
/// still). Counted from heights, this kept every round a chain's views had
/// run ahead of its heights, a number that only grows.
cip11::chain::Round seed_floor(cip11::chain::Round round, std::optional<cip11::chain::Round> oldest_pending) {
  const cip11::View view = round.view;
  const cip11::chain::Round recent{round.epoch,
                                   view.value > kRetainedSeedRounds ? view - kRetainedSeedRounds : cip11::View{0}};
  return oldest_pending ? std::min(recent, *oldest_pending) : recent;
}

/// Where the replay starts, in blocks: kRetainedSeedRounds blocks below the
/// head, whose view is at least as many below the head's (each block's view
/// is above its parent's), or the oldest pending selection's block S; so the
/// anchor's round is below seed_floor's and every round kept is replayed.
/// replay_seeds lowers it further to a round a replayed block consumed (choice 154).
std::uint64_t replay_floor(std::uint64_t height, std::optional<std::uint64_t> oldest_pending) {
  const std::uint64_t recent = height > kRetainedSeedRounds ? height - kRetainedSeedRounds : 0;
  return oldest_pending ? std::min(recent, *oldest_pending) : recent;
}

/// A stored block's seed proof: none, or 80 bytes that decode (Gamma, s).
Result<std::optional<crypto::ecvrf::Proof>, std::string> stored_seed_proof(const nlohmann::json& block) {
  if (!block.is_object()) return Err{std::string("unreadable")};
  auto it = block.find("seed_proof");
  if (it == block.end()) return std::optional<crypto::ecvrf::Proof>{};
  if (!it->is_string()) return Err{std::string("seed_proof is not a string")};
  auto bytes = from_hex(it->get<std::string>());
  if (!bytes) return Err{std::string("seed_proof is not hex")};
  auto proof = crypto::ecvrf::decode_proof(*bytes);
  if (!proof) return Err{"seed_proof: " + std::string(crypto::ecvrf::to_string(proof.error()))};
  return std::optional<crypto::ecvrf::Proof>(*proof);
}

/// A stored block's consumed_seeds (the ConsumedSeedsV1 entries it committed).
Result<std::vector<cip11::chain::ConsumedSeed>, std::string> stored_consumed_seeds(const nlohmann::json& block) {
  std::vector<cip11::chain::ConsumedSeed> out;
  auto it = block.find("consumed_seeds");
  if (it == block.end()) return out;
  if (!it->is_array()) return Err{std::string("consumed_seeds is not a list")};
  for (const auto& e : *it) {
    if (!e.is_object() || !e.contains("epoch") || !e.contains("view") || !e.contains("signature") ||
        !e["epoch"].is_number_unsigned() || !e["view"].is_number_unsigned() || !e["signature"].is_string())
      return Err{std::string("a consumed seed is unreadable")};
    cip11::chain::ConsumedSeed s{cip11::RoundEpoch{e["epoch"].get<std::uint64_t>()},
                                 cip11::View{e["view"].get<std::uint64_t>()}, {}, {}};
    auto signature = from_hex(e["signature"].get<std::string>());
    if (!signature) return Err{std::string("a consumed seed's signature is not hex")};
    s.signature = std::move(*signature);
    if (e.contains("evidence")) {
      auto evidence = e["evidence"].is_string() ? from_hex(e["evidence"].get<std::string>()) : std::nullopt;
      if (!evidence) return Err{std::string("a consumed seed's evidence is not hex")};
      s.evidence = std::move(*evidence);
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// Stored block h's round and seed proof. Both come from the signed
/// DevchainBlockV1 under chain/<h>: its view and its committed seed_evidence,
/// the bytes under the digest its proposer signed (docs/cip11.md choice 101).
/// The JSON record's seed_proof is a copy written in the same batch; one that
/// differs from the evidence refuses the store. A store written before blocks
/// were kept so (docs/devchain.md D8) has only the record: view h, its proof.
struct StoredSeed {
  cip11::View view{};
  std::optional<crypto::ecvrf::Proof> proof;
};
Result<StoredSeed, std::string> stored_block_seed(rocksdb::DB& db, std::uint64_t h, const nlohmann::json& record) {
  auto copied = stored_seed_proof(record);
  if (!copied) return Err{copied.error()};
  std::string sealed;
  if (!db.Get({}, layout::chain_block_key(h), &sealed).ok()) return StoredSeed{cip11::View{h}, *copied};  // its height
  auto signed_block = decode_signed_block(as_bytes(sealed));
  if (!signed_block) return Err{"the signed block is unreadable: " + std::string(codec::to_string(signed_block.error()))};
  if (signed_block->block.height != h) return Err{std::string("the signed block under its height names another")};
  StoredSeed out{signed_block->block.view, std::nullopt};
  if (const Bytes& evidence = signed_block->block.seed_evidence; !evidence.empty()) {
    auto proof = crypto::ecvrf::decode_proof(evidence);
    if (!proof) return Err{"seed_evidence: " + std::string(crypto::ecvrf::to_string(proof.error()))};
    out.proof = *proof;
  }
  if (out.proof != *copied)
    return Err{std::string("the record's seed_proof differs from the signed block's seed_evidence")};
  return out;
}

/// The seed a stored block's round ended with (its view, seed_output and its
/// proof), or nullopt when the block does not hold one.
std::optional<cip11::chain::RoundSeed> stored_round_seed(rocksdb::DB& db, std::uint64_t h, cip11::RoundEpoch epoch) {
  std::string value;
  if (!db.Get({}, layout::block_key(h), &value).ok()) return std::nullopt;
  const auto block = nlohmann::json::parse(value, nullptr, false);
  if (!block.is_object() || !block.contains("seed_output") || !block["seed_output"].is_string()) return std::nullopt;
  auto output = fixed_from_hex<64>(block["seed_output"].get<std::string>());
  auto seed = stored_block_seed(db, h, block);
  if (!output || !seed) return std::nullopt;
  return cip11::chain::RoundSeed{cip11::chain::Round{epoch, seed->view}, seed->proof, *output};
}

/// Each block S a selection is pending since, and its round r_S, which the
/// seeds kept start from while it is pending (seed_floor).
std::map<std::uint64_t, cip11::chain::Round> pending_views_of(const cip11::chain::State& state) {
  std::map<std::uint64_t, cip11::chain::Round> out;
  for (const auto& [id, job] : state.jobs)
    if (job.pending)
      out.emplace(job.pending->submitted_at.value,
                  cip11::chain::Round{job.pending->submission_epoch, job.pending->submission_view});
  return out;
}

/// The round epoch of the block at `height` (docs/cip11.md choice 140): on
/// rotating validators the validator-set epoch active there, whose views
/// restart at 0; a lone producer's rounds are all in round epoch 0.
cip11::RoundEpoch round_epoch_at(const Proposers& proposers, bool rotating, std::uint64_t height) {
  if (!rotating) return cip11::RoundEpoch{0};
  const auto* e = proposers.at(height);
  return cip11::RoundEpoch{e ? e->epoch : 0};
}

/// The round of a block at `height` in `view`.
cip11::chain::Round round_at(const Proposers& proposers, bool rotating, std::uint64_t height, cip11::View view) {
  return cip11::chain::Round{round_epoch_at(proposers, rotating, height), view};
}

/// The lowest view of the block after `head`: 0 where it starts a round epoch.
cip11::View first_view_after(const Proposers& proposers, bool rotating, const ChainHead& head) {
  const bool starts =
      round_epoch_at(proposers, rotating, head.height + 1) != round_epoch_at(proposers, rotating, head.height);
  return starts ? cip11::View{0} : head.view + 1;
}

/// The round epochs closed below `epoch`, each at its last block's view
/// (choice 140), read from the stored blocks: what a replay resumed inside
/// `epoch` maps rounds over.
Result<cip11::chain::EpochSchedule, std::string> stored_schedule(rocksdb::DB& db, const Proposers& proposers,
                                                                 cip11::RoundEpoch epoch) {
  cip11::chain::EpochSchedule out;
  for (const auto& e : proposers.epochs()) {
    if (e.epoch == 0 || e.epoch > epoch.value) continue;
    const std::uint64_t last = e.activation_height - 1;  // the epoch before's last block
    if (last == 0) {
      out.closed_epoch_views.push_back(1);  // only the genesis round (0, 0)
      continue;
    }
    std::string value;
    if (!db.Get({}, layout::block_key(last), &value).ok()) return Err{"block " + std::to_string(last) + " is missing"};
    auto stored = stored_block_seed(db, last, nlohmann::json::parse(value, nullptr, false));
    if (!stored) return Err{"block " + std::to_string(last) + "'s seed: " + stored.error()};
    out.closed_epoch_views.push_back(stored->view.value + 1);
  }
  if (out.open_epoch() != epoch) return Err{std::string("the validator-set epochs have a gap")};
  return out;
}

/// The rounds' seeds up to `height` from the stored blocks alone, replayed from
/// a floor - the last kRetainedSeedRounds blocks, or from the oldest pending
/// selection's block S, or lower, down to a block whose round is at or below
/// every round a block above it consumed - on the output the block before it stored, so that a
/// restart reads a bounded number of blocks; from genesis when the chain is
/// shorter or that block holds no output. Each replayed block's proof must
/// verify against its round's leader and the previous output, and each seed
/// the block consumed must be its round's. A block that fails either is
/// refused, and so is the store.
Result<std::unique_ptr<cip11::chain::SeedChain>, std::string> replay_seeds(rocksdb::DB& db, const Cip11Genesis& genesis,
                                                                          bool rotating, const Bytes32& chain,
                                                                          std::uint64_t height,
                                                                          const cip11::chain::State& state,
                                                                          const Proposers& proposers,
                                                                          const RoundKeys& round_keys) {
  auto seeds = std::make_unique<cip11::chain::SeedChain>(chain, cip11::chain::devchain_schedule(),
                                                         devchain_leader(genesis, rotating, round_keys));
  // The oldest pending selection's block S and its round (the lowest: rounds rise with heights).
  const auto pending = pending_views_of(state);
  std::optional<std::uint64_t> oldest_pending;
  std::optional<cip11::chain::Round> oldest_round;
  if (!pending.empty()) oldest_pending = pending.begin()->first, oldest_round = pending.begin()->second;
  // lowest_from[height - h]: the lowest round blocks h..height consumed, kept
  // until the block that consumed it is replayed. A committee is drawn once
  // its block S is final, kMaxRollbackDepth blocks on with several
  // validators (docs/cip11.md choice 153), so the round it consumes can be
  // older than the rounds the views after S keep, and older than the floor's
  // anchor; the state at the head no longer names it pending.
  std::vector<std::optional<cip11::chain::Round>> lowest_from;
  auto add = [&](std::uint64_t h) -> Result<Unit, std::string> {  // h: the block below those added
    std::string value;
    if (!db.Get({}, layout::block_key(h), &value).ok()) return Err{"block " + std::to_string(h) + " is missing"};
    auto consumed = stored_consumed_seeds(nlohmann::json::parse(value, nullptr, false));
    if (!consumed) return Err{"block " + std::to_string(h) + ": " + consumed.error()};
    auto lowest = lowest_from.empty() ? std::nullopt : lowest_from.back();
    for (const auto& c : *consumed)
      if (const cip11::chain::Round r{c.epoch, c.view}; !lowest || r < *lowest) lowest = r;
    lowest_from.push_back(lowest);
    return Unit{};
  };
  std::uint64_t floor = replay_floor(height, oldest_pending);
  for (std::uint64_t h = height; h >= floor && h > 0; --h)
    if (auto added = add(h); !added) return Err{added.error()};
  // The anchor: block floor - 1's round, at or below every round a block from
  // the floor on consumed (choice 154); the floor goes down a block at a time,
  // each block's consumed rounds joining the lowest. A draw is at most about
  // kMaxRollbackDepth + K blocks after its S, so this goes that far at most.
  std::optional<cip11::chain::RoundSeed> anchor;
  while (floor > 1) {
    anchor = stored_round_seed(db, floor - 1, round_epoch_at(proposers, rotating, floor - 1));
    if (!anchor) break;  // no output stored there: from genesis
    const auto& lowest = lowest_from.back();
    if (!lowest || !(*lowest < anchor->round)) break;
    anchor.reset();
    --floor;
    if (auto added = add(floor); !added) return Err{added.error()};
  }
  std::uint64_t first = 1;
  if (anchor) {
    // The epochs closed before the anchor's, from their last blocks' views.
    auto schedule = stored_schedule(db, proposers, rotating ? anchor->round.epoch : cip11::RoundEpoch{0});
    if (!schedule) return Err{"the round epochs: " + schedule.error()};
    seeds = std::make_unique<cip11::chain::SeedChain>(chain, std::move(*schedule),
                                                      devchain_leader(genesis, rotating, round_keys));
    seeds->resume_after(std::move(*anchor));
    first = floor;
  }
  for (std::uint64_t h = height + 1 - lowest_from.size(); h > first; --h)  // from genesis: the blocks below the floor
    if (auto added = add(h - 1); !added) return Err{added.error()};
  for (std::uint64_t h = first; h <= height; ++h) {
    std::string value;
    if (!db.Get({}, layout::block_key(h), &value).ok()) return Err{"block " + std::to_string(h) + " is missing"};
    const auto block = nlohmann::json::parse(value, nullptr, false);
    auto stored = stored_block_seed(db, h, block);
    if (!stored) return Err{"block " + std::to_string(h) + "'s seed: " + stored.error()};
    auto consumed = stored_consumed_seeds(block);
    if (!consumed) return Err{"block " + std::to_string(h) + ": " + consumed.error()};
    set_round_keys(round_keys, proposers, h);
    // Block h is proposed in Round(its round epoch, its view).
    auto taken = seeds->take(cip11::chain::Round{round_epoch_at(proposers, rotating, h), stored->view}, stored->proof);
    if (!taken) {
      std::string why(cip11::chain::to_string(taken.error().error));
      if (taken.error().vrf) why += ": " + std::string(crypto::ecvrf::to_string(*taken.error().vrf));
      return Err{"block " + std::to_string(h) + "'s seed proof is refused (" + why + ")"};
    }
    for (const auto& c : *consumed)
      if (c.signature.size() == 48)  // the former keccak dev beacon's length (MinSig's)
        return Err{"block " + std::to_string(h) +
                   " consumed a seed of the former dev beacon: this store predates the ECVRF round seeds "
                   "(docs/cip11.md choice 74); start it on a new --data-dir"};
    if (auto checked = cip11::chain::check_consumed(*seeds, *consumed); !checked)
      return Err{"block " + std::to_string(h) + "'s consumed seeds are refused (" +
                 std::string(cip11::chain::to_string(checked.error())) + ")"};
    std::optional<cip11::chain::Round> keep = oldest_round;
    if (h < height)
      if (const auto& later = lowest_from[height - h - 1]; later && (!keep || *later < *keep)) keep = later;
    seeds->forget_before(seed_floor(seeds->last_round(), keep));
  }
  return seeds;
}

/// The ECVRF secret that proves this validator's rounds: the one config.vrf_key
/// holds when its genesis entry names a vrf_key (refused unless it is that
/// key's), else its peer key's seed (a genesis written before choice 100).
Result<std::optional<crypto::ecvrf::Seed>, std::string> vrf_secret(const NodeConfig& config,
                                                                   const std::vector<Cip11Validator>& validators) {
  if (!config.validator_key) {
    if (config.vrf_key) return Err{std::string("a VRF key without a validator key proves nothing")};
    return std::optional<crypto::ecvrf::Seed>{};
  }
  const auto mine = crypto::ed25519_from_seed(*config.validator_key).public_key;
  auto entry = std::find_if(validators.begin(), validators.end(), [&](const auto& v) { return v.peer_key == mine; });
  // A validator the genesis does not name (one that joins by a governance
  // change, D2): its VRF secret as given, the peer key's seed without one. A
  // block it proposes carries a proof only if the key is the one its change
  // names (Node::propose makes no block otherwise).
  if (entry == validators.end())
    return std::optional<crypto::ecvrf::Seed>(config.vrf_key.value_or(*config.validator_key));
  if (!entry->vrf_key) {
    if (config.vrf_key) return Err{std::string("the genesis names no vrf_key for this validator: give no VRF key")};
    return std::optional<crypto::ecvrf::Seed>(*config.validator_key);
  }
  if (!config.vrf_key)
    return Err{std::string("the genesis names a vrf_key for this validator: give its secret (cip11d --vrf-key)")};
  if (crypto::ecvrf::keypair_from_seed(*config.vrf_key).public_key != *entry->vrf_key)
    return Err{std::string("the VRF key is not the vrf_key the genesis names for this validator")};
  return std::optional<crypto::ecvrf::Seed>(*config.vrf_key);
}

/// What a node holds in memory, read from its store: at open, and again after
/// a rollback (Node::unapply_to), so both are one path.
struct Loaded {
  ChainState state;
  ChainHead head;
  std::unique_ptr<cip11::chain::SeedChain> seeds;  // on a CIP-11 chain
  cip11::chain::ValidatorSnapshots snapshots;
  std::shared_ptr<const Proposers> proposers;
  RoundKeys round_keys;  // what the seeds' leader function reads (devchain_leader)
};
Result<Loaded, std::string> load_chain(rocksdb::DB& db, const GenesisSpec& genesis, bool rotating,
                                       const std::string& registry_bytes, const std::string& height_bytes) {
  auto registry = decode_registry(as_bytes(registry_bytes));
  if (!registry) return Err{"the stored registry is unreadable: " + std::string(codec::to_string(registry.error()))};
  auto nonces = load_nonces(db);
  if (!nonces) return Err{"the stored nonces are unreadable: " + nonces.error()};
  auto cip11 = cip11_store::load(db);
  if (!cip11) return Err{"the stored CIP-11 state is unreadable: " + cip11.error()};
  const std::uint64_t first_epoch = genesis.cip11 ? genesis.cip11->validator_set_changes.size() + 1 : 1;
  auto sets = load_validator_sets(db, first_epoch);
  if (!sets) return Err{sets.error()};
  auto snapshots = snapshots_of(genesis, *sets);
  Loaded out{ChainState{std::move(*registry), std::move(*nonces), std::move(*cip11), std::move(*sets)},
             {},
             nullptr,
             std::move(snapshots),
             nullptr,
             std::make_shared<std::vector<crypto::ecvrf::PublicKey>>()};
  out.proposers = std::make_shared<const Proposers>(proposers_of(genesis, out.snapshots, out.state.validator_sets));
  const std::uint64_t height = layout::from_be(height_bytes);
  // The head: the last block as proposed (a store written before blocks were
  // kept so has none, and no other validator's block can follow it).
  out.head = ChainHead{height, cip11::View{0}, out.state.registry.chain_instance_id};
  if (height > 0) {
    std::string last;
    if (!db.Get({}, layout::chain_block_key(height), &last).ok()) last.clear();
    auto block = decode_signed_block(as_bytes(last));
    if (block) {
      out.head.view = block->block.view;
      out.head.digest = block->digest;
    } else {
      out.head.view = cip11::View{height};  // a lone producer's views are its heights
      out.head.digest = Bytes32{};
    }
  }
  if (genesis.cip11) {
    auto replayed = replay_seeds(db, *genesis.cip11, rotating, out.state.registry.chain_instance_id, height,
                                 out.state.cip11, *out.proposers, out.round_keys);
    if (!replayed) return Err{"the stored chain is refused: " + replayed.error()};
    out.seeds = std::move(*replayed);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Node>, std::string> Node::open(const NodeConfig& config,
                                                      const std::optional<GenesisSpec>& genesis) {
  // A genesis that could not create a chain leaves no directory behind;
  // create_chain checks again whatever the directory holds.
  if (genesis && genesis->cip11 && !std::filesystem::exists(config.data_dir / kStoreName))
    if (auto checked = check_finality(*genesis->cip11); !checked) return Err{"the genesis is refused: " + checked.error()};
  auto created = data_dir::create_store(config.data_dir, kDataDir, [&](const std::filesystem::path& empty) {
    return create_chain(empty / kStoreName, genesis);
  });
  if (!created) return Err{created.error()};
  auto opened = open_db(config.data_dir / kStoreName, false);
  if (!opened) return Err{opened.error()};
  std::unique_ptr<rocksdb::DB> db = std::move(*opened);
  std::string stored_chain;
  auto status = db->Get(rocksdb::ReadOptions(), std::string(layout::kChain), &stored_chain);
  if (status.IsNotFound())
    return Err{"refusing " + (config.data_dir / kStoreName).string() + ": a RocksDB store without a chain, not the devchain's"};
  if (!status.ok()) return Err{"cannot read the chain store: " + status.ToString()};

  std::string whole_state;
  if (db->Get({}, std::string(layout::kWholeState), &whole_state).ok())
    return Err{"the chain store holds the whole state under one key (state version " +
               std::to_string(whole_state.empty() ? 0 : whole_state[0]) +
               "); this devchain stores each record under its own key (version " + std::to_string(kRegistryVersion) +
               "): start it on a new --data-dir"};
  std::string genesis_json, registry_bytes, height_bytes;  // read here: their absence names an incomplete store
  if (!db->Get({}, std::string(layout::kGenesis), &genesis_json).ok() ||
      !db->Get({}, std::string(layout::kRegistry), &registry_bytes).ok() ||
      !db->Get({}, std::string(layout::kHeight), &height_bytes).ok() || height_bytes.size() != 8)
    return Err{std::string("the chain store is incomplete")};
  auto parsed = nlohmann::json::parse(genesis_json, nullptr, false);
  auto stored_genesis = genesis_from_json(parsed);
  if (!stored_genesis) return Err{"the stored genesis is unreadable: " + stored_genesis.error()};
  if (genesis && chain_instance_id_of(*genesis) != chain_instance_id_of(*stored_genesis))
    return Err{std::string("the data directory holds a different chain than the given genesis")};
  std::optional<crypto::ecvrf::Seed> seed_key;
  if (stored_genesis->cip11) {
    const auto& validators = stored_genesis->cip11->validators;
    if (config.validator_key) {
      const auto mine = crypto::ed25519_from_seed(*config.validator_key).public_key;
      // Rotating, any key: one the genesis does not name proposes once a
      // governance change names it (D2, D10), and only follows until then.
      if (config.rotating) {
      } else if (validators.empty() || validators.front().peer_key != mine) {
        return Err{std::string("the validator key is not validator 0 of the CIP-11 genesis, the devchain's producer")};
      }
    }
    auto vrf = vrf_secret(config, validators);
    if (!vrf) return Err{vrf.error()};
    seed_key = *vrf;
  } else if (config.validator_key || config.vrf_key) {
    return Err{std::string("the validator key is not one of the genesis validators' peer keys")};
  }
  auto loaded = load_chain(*db, *stored_genesis, config.rotating, registry_bytes, height_bytes);
  if (!loaded) return Err{loaded.error()};
  auto seeds = std::move(loaded->seeds);
  auto state = std::move(loaded->state);
  const Head head = loaded->head;
  auto node = std::unique_ptr<Node>(new Node(config, std::move(db), *stored_genesis, std::move(state), head));
  node->seeds_ = std::move(seeds);
  node->pending_views_ = pending_views_of(node->state_.cip11);
  node->proposers_ = std::move(loaded->proposers);
  node->round_keys_ = std::move(loaded->round_keys);
  node->seed_key_ = seed_key;
  std::string floor_bytes;  // a rollback's: the head may be lower than F above it
  const std::uint64_t stored_floor =
      node->db_->Get({}, std::string(layout::kFinalFloor), &floor_bytes).ok() && floor_bytes.size() == 8
          ? layout::from_be(floor_bytes)
          : 0;
  node->final_floor_ = std::min(head.height, std::max(stored_floor, final_height(head.height, node->finality_depth_)));
  return node;
}

namespace {
std::optional<std::uint32_t> index_of(const std::vector<crypto::Ed25519Public>& validators,
                                      const std::optional<crypto::Ed25519Seed>& key) {
  if (!key) return std::nullopt;
  auto at = std::find(validators.begin(), validators.end(), crypto::ed25519_from_seed(*key).public_key);
  if (at == validators.end()) return std::nullopt;
  return static_cast<std::uint32_t>(at - validators.begin());
}
}  // namespace

Node::Node(NodeConfig config, std::unique_ptr<rocksdb::DB> db, GenesisSpec genesis, ChainState state, Head head)
    : config_(std::move(config)),
      db_(std::move(db)),
      genesis_(std::move(genesis)),
      chain_instance_id_(state.registry.chain_instance_id),
      snapshots_(snapshots_of(genesis_, state.validator_sets)),
      validators_(genesis_.cip11 ? canonical_validator_keys(*genesis_.cip11) : std::vector<crypto::Ed25519Public>{}),
      genesis_index_(index_of(validators_, config_.validator_key)),
      finality_depth_(genesis_.cip11 ? finality_depth_of(*genesis_.cip11) : 0),
      my_key_(config_.validator_key ? std::optional(crypto::ed25519_from_seed(*config_.validator_key).public_key)
                                    : std::nullopt),
      state_(std::move(state)),
      height_(head.height),
      head_(head),
      published_(snapshot_of(*db_)),
      next_nonce_(state_.nonces) {}

Node::~Node() {
  stop();
  published_.reset();  // before the store closes
}

std::shared_ptr<const rocksdb::Snapshot> Node::published() const {
  std::lock_guard lock(mu_);
  return published_;
}

void Node::start() {
  std::lock_guard lock(mu_);
  if (producer_.joinable()) return;
  stopping_ = false;
  producer_ = std::thread([this] { run(); });
}

void Node::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (producer_.joinable()) producer_.join();
}

void Node::run() {
  auto next = std::chrono::steady_clock::now() + config_.block_interval;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
    }
    (void)produce_block();  // a failed write leaves the height unchanged; the next tick retries
    next += config_.block_interval;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // never produce a burst to catch up
  }
}

GenesisSpec Node::genesis() const { return genesis_; }

Bytes32 Node::state_hash() const {
  std::lock_guard produce_lock(produce_mu_);
  std::lock_guard lock(mu_);
  return crypto::keccak256(encode_state(state_));
}

void Node::set_presence_provider(PresenceProvider provider) { presence_provider_ = std::move(provider); }
void Node::set_submit_observer(std::function<void(const Transaction&)> observer) {
  submit_observer_ = std::move(observer);
}
void Node::set_block_observer(std::function<void(const CommittedBlock&)> observer) { observer_ = std::move(observer); }
void Node::set_rollback_observer(std::function<void(const RolledBack&)> observer) {
  rollback_observer_ = std::move(observer);
}

std::pair<std::optional<Bytes>, cip11::PresentSet> Node::presence_for(std::uint64_t height,
                                                                       std::uint32_t registry_size) {
  const auto& params = genesis_.cip11->params;
  // Effective Mode A: PresenceInput(H) is presence_proven_until of the parent
  // state (§8.3); no proposer view is asked, and the field states that set.
  if (cip11::chain::mode_a_effective(params, snapshots_, cip11::Height{height})) {
    auto proven = cip11::chain::proven_presence(state_.cip11, cip11::Height{height}, registry_size);
    return {cip11::encode_presence(proven), std::move(proven)};
  }
  cip11::PresentSet empty(registry_size);
  // The field is populated only when something reads it: CIP-11 selection or
  // its Phase-1 shadow (§14); otherwise blocks carry none (§7.2 rule 1).
  if (!params.present_first_enabled && !params.presence_shadow_enabled) return {std::nullopt, empty};
  // No validator process plugged in: nobody is known to be present. With the
  // flag on that is stated as a valid empty set (§7.2 rule 2), else omitted.
  if (!presence_provider_)
    return {params.present_first_enabled ? std::optional<Bytes>(cip11::encode_presence(empty)) : std::nullopt, empty};
  std::optional<Bytes> field = presence_provider_(height, registry_size);
  auto set = cip11::chain::presence_of_block(params, field, registry_size);
  if (set) return {std::move(field), std::move(*set)};
  // §7.2 rule 2: this proposer must not make an invalid block; with no usable
  // view it states a valid empty set, which fails open (§7.3).
  log::warn("presence_field_refused", log::field("height", height),
            log::field("why", std::string(cip11::to_string(set.error()))));
  return {cip11::encode_presence(empty), std::move(empty)};
}

TxReceipt Node::apply(BlockWork& work, const Pending& p, std::uint64_t height, std::uint32_t index,
                      const cip11::chain::BlockContext* cip11, cip11::chain::Effects& effects) {
  TxReceipt receipt;
  receipt.tx_hash = p.hash;
  receipt.height = height;
  receipt.index = index;
  receipt.sender = p.sender;
  receipt.nonce = p.tx.nonce;
  cbqs::RegistryState& registry = *work.registry;
  cbqs::TxContext ctx{p.sender, height};
  std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        cbqs::Receipt r;
        if constexpr (std::is_same_v<T, Cip11Call>) {
          if (!cip11) {
            receipt.error = "Cip11NotEnabled";  // this chain's genesis has no CIP-11 section
            return;
          }
          auto out = cip11::chain::apply(state_.cip11, registry.native_balances, *cip11, {p.sender, p.hash},
                                         body.payload, effects);
          if (out.error) receipt.error = std::string(cip11::chain::chain_error_name(*out.error));
          receipt.job_id = out.job_id;
          return;
        } else if constexpr (std::is_same_v<T, ValidatorSetCall>) {
          if (auto why = schedule_validator_set(work, p.sender, height, body.payload))
            receipt.error = std::string(validator_set_refusal_name(*why));
          return;
        } else if constexpr (std::is_same_v<T, CbqsCall>) {
          r = cbqs::apply_payload(registry, ctx, body.payload);
        } else if constexpr (std::is_same_v<T, ParameterWrite>) {
          r = cbqs::apply_parameter_write(registry, ctx, body.name, body.value);
        } else {  // a plain native transfer, for funding dev accounts
          auto& balances = registry.native_balances;
          u128 from = registry.native_balance(p.sender);
          if (body.to == cbqs::registry_address()) {
            r.error = cbqs::ChainError::kNotAuthorized;  // custody moves only through the registry
          } else if (from < body.amount) {
            r.error = cbqs::ChainError::kInsufficientFunds;
          } else if (body.amount > 0 && body.to != p.sender) {
            balances[p.sender] = from - body.amount;
            balances[body.to] = registry.native_balance(body.to) + body.amount;
          }
        }
        if (r.error) receipt.error = std::string(cbqs::chain_error_name(*r.error));
        receipt.events = std::move(r.events);
        receipt.metering = r.metering;
      },
      p.tx.body);
  work.nonces[p.sender] = p.tx.nonce + 1;  // included transactions consume their nonce, applied or not
  return receipt;
}

std::optional<ValidatorSetRefusal> Node::schedule_validator_set(BlockWork& work, const Address& sender,
                                                                std::uint64_t height, ByteView payload) const {
  if (!genesis_.cip11) return ValidatorSetRefusal::kCip11NotEnabled;
  if (sender != genesis_.governance_admin) return ValidatorSetRefusal::kNotGovernanceAdmin;
  auto set = decode_schedule_validator_set(payload);
  if (!set) return ValidatorSetRefusal::kMalformedValidatorSet;
  // Against what is scheduled so far, this block's earlier calls included.
  const auto& sets = work.validator_sets ? *work.validator_sets : state_.validator_sets;
  if (auto why = check_schedule(*set, *genesis_.cip11, sets, snapshots_of(genesis_, sets), height)) return why;
  if (!work.validator_sets) work.validator_sets = state_.validator_sets;
  log::info("validator_set_scheduled", log::field("height", height), log::field("epoch", set->epoch),
            log::field("activation_height", set->activation_height), log::field("validators", set->validators.size()));
  work.validator_sets->push_back(std::move(*set));
  return std::nullopt;
}

struct Node::Execution {
  BlockWork work;
  CommittedBlock committed;
  std::uint32_t registry_size = 0;  // |registry(H-1)|
  std::vector<TxReceipt> receipts;
  Bytes consumed_seeds;  // ConsumedSeedsV1 of what the block's records consumed
  Bytes32 state_root{};
  std::optional<cip11::chain::SeedChain::Advance> seeds;  // the rounds the block takes, committed after its write
  cip11::chain::Round round{};  // the block's own, with `seeds` (choice 140)
  /// The block's ConsumedSeedsV1 entries: set for a block this node verifies
  /// (its pending pass assigns only their rounds' records), or for a proposer
  /// that leaves every due selection pending (none).
  std::optional<std::vector<cip11::chain::ConsumedSeed>> committed_seeds;
};

void Node::execute(const Block& block, const std::vector<Pending>& txs, const cip11::PresentSet* present,
                   Execution& out) {
  const std::uint64_t h = block.height;
  out.committed = CommittedBlock{h, block.presence, {}};
  if (!txs.empty()) out.work.registry = state_.registry;  // applied to a copy; published only after the write
  // A CIP-11 block: the dispatcher's start-of-block passes (§7.2, §9.2,
  // §11.2) against the block's present set, then its instructions. The plane
  // is changed in place; its journal is what the block writes. The block is
  // proposed in Round(its round epoch, view) and reads the seeds of the rounds
  // before it, taken from the committed blocks' seed proofs (docs/cip11.md
  // choices 78, 140), over the round epochs closed before its own.
  std::optional<cip11::chain::SeedsBefore> beacon;
  std::optional<cip11::chain::BlockContext> context;
  cip11::chain::EpochSchedule rounds;
  if (present) {
    if (seeds_) rounds = seeds_->schedule_at(out.round);
    beacon.emplace(*seeds_, out.round,
                   out.seeds ? std::span<const cip11::chain::RoundSeed>(*out.seeds)
                             : std::span<const cip11::chain::RoundSeed>{});
    // TimeoutTooShort counts F only where the genesis bytes hold it (not the
    // default, which a genesis names or omits alike): docs/cip11.md choice 160.
    const std::uint64_t timeout_depth = genesis_.cip11->finality_depth != kDefaultFinalityDepth ? finality_depth_ : 0;
    context.emplace(cip11::chain::BlockContext{cip11::Height{h}, genesis_.cip11->params, *beacon, *present, snapshots_,
                                               block.view, &shadow_, &rounds,
                                               out.committed_seeds ? &*out.committed_seeds : nullptr,
                                               cip11::Height{final_height(h - 1, finality_depth_)},
                                               timeout_depth});
    cip11::chain::begin_block(state_.cip11, *context, out.committed.effects);
  }
  for (std::uint32_t i = 0; i < txs.size(); ++i)
    out.receipts.push_back(apply(out.work, txs[i], h, i, context ? &*context : nullptr, out.committed.effects));
  if (present) out.consumed_seeds = cip11::chain::encode_consumed_seeds(out.committed.effects.consumed_seeds);
  // The state after the block, from the parts the node publishes only after
  // the write. It encodes the whole state, so only a chain with verifiers pays
  // for it; a lone producer's blocks carry zeros.
  if (validators_.size() > 1) {
    std::map<Address, std::uint64_t> nonces = state_.nonces;
    for (const auto& [sender, next] : out.work.nonces) nonces[sender] = next;
    out.state_root =
        crypto::keccak256(encode_state(out.work.registry ? *out.work.registry : state_.registry, nonces, state_.cip11,
                                       out.work.validator_sets ? *out.work.validator_sets : state_.validator_sets));
  }
}

ApiResult<std::uint64_t> Node::write_block(const SignedBlock& signed_block, const std::vector<Pending>& txs,
                                           Execution& ex) {
  const Block& block = signed_block.block;
  const std::uint64_t h = block.height;
  const bool cip11 = genesis_.cip11.has_value();
  rocksdb::WriteBatch batch;
  nlohmann::json hashes = nlohmann::json::array();
  for (std::uint32_t i = 0; i < txs.size(); ++i) {
    batch.Put(layout::tx_key(txs[i].hash), json::receipt_to_json(ex.receipts[i]).dump());
    hashes.push_back(json::hex0x(txs[i].hash));
  }
  if (!txs.empty() || cip11) {
    nlohmann::json record{{"height", h}, {"txs", hashes}};
    if (cip11) json::put_cip11_block(record, ex.committed.presence, ex.registry_size, ex.committed.effects);
    // The committed seed_evidence, kept where the replay at open reads it.
    if (!block.seed_evidence.empty()) record["seed_proof"] = json::hex0x(block.seed_evidence);
    // Its round's output: where a restart's replay of the seeds may begin (replay_seeds).
    if (ex.seeds && !ex.seeds->empty()) record["seed_output"] = json::hex0x(ex.seeds->back().output);
    batch.Put(layout::block_key(h), record.dump());
  }
  batch.Put(layout::chain_block_key(h), std::string(as_sv(encode_signed_block(signed_block))));
  // Only what this block changed: the registry if it did, its senders' nonces, the CIP-11 records.
  const bool registry_changed = ex.work.registry && !(*ex.work.registry == state_.registry);
  if (registry_changed) batch.Put(std::string(layout::kRegistry), std::string(as_sv(encode_registry(*ex.work.registry))));
  stage_nonces(ex.work.nonces, batch);
  if (ex.work.validator_sets)  // the changes this block scheduled, each under its epoch
    for (std::size_t i = state_.validator_sets.size(); i < ex.work.validator_sets->size(); ++i) {
      const auto& set = (*ex.work.validator_sets)[i];
      batch.Put(layout::validator_set_key(set.epoch), std::string(as_sv(encode_schedule_validator_set(set))));
    }
  cip11_store::stage(state_.cip11, batch);
  batch.Put(std::string(layout::kHeight), layout::be64(h));
  // A chain with several validators may have to un-apply the block (D11); a
  // lone producer's never forks and pays nothing for it.
  auto status = validators_.size() > 1 ? stage_undo(*db_, h, batch) : rocksdb::Status::OK();
  rocksdb::WriteOptions sync;
  sync.sync = true;
  if (status.ok()) status = db_->Write(sync, &batch);
  if (!status.ok()) {
    state_.cip11.rollback();
    log::error("block_write_failed", log::field("height", h), log::field("why", status.ToString()));
    return Err{internal("block write failed: " + status.ToString())};
  }
  state_.cip11.commit();
  shadow_.apply(ex.committed.effects.shadow_writes);  // telemetry's book, never in the batch (choice 136)
  if (ex.seeds) {
    seeds_->commit(std::move(*ex.seeds));
    // The pending selections' rounds r_S by their block S (its round, for one
    // submitted in this block), kept while one is pending there.
    const auto& pending = state_.cip11.due.pending_counts();
    if (pending.contains(cip11::Height{h})) pending_views_[h] = ex.round;
    std::erase_if(pending_views_, [&](const auto& e) { return !pending.contains(cip11::Height{e.first}); });
    std::optional<cip11::chain::Round> oldest;
    if (!pending.empty()) {
      auto it = pending_views_.find(pending.begin()->first.value);
      // The due index takes a block's new selections in at the next block's
      // start, after this block's write: read their rounds from the records then.
      if (it == pending_views_.end()) {
        pending_views_ = pending_views_of(state_.cip11);
        it = pending_views_.find(pending.begin()->first.value);
      }
      oldest = it != pending_views_.end() ? it->second : cip11::chain::kGenesisRound;  // never missing
    }
    // A Phase-1 shadow draw waiting for its round holds the seeds as a live
    // selection does (choice 155): in shadow mode its live job is drawn at S,
    // so nothing else keeps r_seed while S becomes final.
    if (const auto shadow = shadow_.oldest_pending_submission(); shadow && (!oldest || *shadow < *oldest))
      oldest = shadow;
    seeds_->forget_before(seed_floor(ex.round, oldest));
  }

  auto snapshot = snapshot_of(*db_);
  {
    std::lock_guard lock(mu_);
    if (registry_changed) state_.registry = std::move(*ex.work.registry);
    if (ex.work.validator_sets) state_.validator_sets = std::move(*ex.work.validator_sets);
    for (const auto& [sender, next] : ex.work.nonces) state_.nonces[sender] = next;
    drop_included_locked(ex.work.nonces);
    height_ = h;
    head_ = Head{h, block.view, signed_block.digest};
    published_ = std::move(snapshot);
  }
  final_floor_ = std::max(final_floor_.load(), final_height(h, finality_depth_));
  if (ex.work.validator_sets) {  // the producer's (produce_mu_); the proposers published under mu_
    snapshots_ = snapshots_of(genesis_, state_.validator_sets);
    auto proposers = std::make_shared<const Proposers>(proposers_of(genesis_, snapshots_, state_.validator_sets));
    std::lock_guard lock(mu_);
    proposers_ = std::move(proposers);
  }
  log_selection_telemetry(h, ex.committed.effects);
  if (cip11 && observer_) observer_(ex.committed);
  return h;
}

void Node::drop_included_locked(const std::map<Address, std::uint64_t>& senders) {
  if (senders.empty()) return;
  // A pending transaction on a nonce a committed block used is included or
  // superseded (another validator's block took that nonce): either way it is done.
  std::erase_if(mempool_, [&](const Pending& p) {
    auto it = senders.find(p.sender);
    if (it == senders.end() || p.tx.nonce >= it->second) return false;
    mempool_hashes_.erase(p.hash);
    return true;
  });
  for (const auto& [sender, committed] : senders) {
    auto& next = next_nonce_[sender];
    if (next >= committed) continue;
    // A block from another validator moved the sender past what this node had
    // pending: queued successors below it are done, the next one is pending now.
    next = committed;
    auto q = future_.find(sender);
    if (q == future_.end()) continue;
    auto& queued = q->second;
    for (auto e = queued.begin(); e != queued.end() && e->first < next;) {
      mempool_hashes_.erase(e->second.hash);
      e = queued.erase(e);
      --future_count_;
    }
    for (auto e = queued.begin(); e != queued.end() && e->first == next; e = queued.erase(e), ++next) {
      mempool_.push_back(std::move(e->second));
      --future_count_;
    }
    if (queued.empty()) future_.erase(q);
  }
}

ApiResult<std::uint64_t> Node::produce_block() {
  auto b = propose(std::nullopt, {});
  if (!b) return Err{b.error()};
  return b->block.height;
}

ApiResult<SignedBlock> Node::propose_block(cip11::View view, const Announce& announce) {
  return propose(view, announce);
}

ApiResult<SignedBlock> Node::propose(std::optional<cip11::View> view, const Announce& announce) {
  std::lock_guard produce_lock(produce_mu_);
  Block b;
  std::vector<Pending> candidates;
  {
    std::lock_guard lock(mu_);
    const cip11::View lowest = first_view_after(*proposers_, config_.rotating, head_);
    if (view && *view < lowest)
      return Err{ApiError{ApiErrorCode::kBadRequest, "view " + std::to_string(view->value) + " is below the next block's first view " +
                                                         std::to_string(lowest.value)}};
    b.view = view.value_or(lowest);
    b.height = height_ + 1;
    b.parent = head_.digest;
    std::size_t n = std::min(mempool_.size(), config_.max_block_txs);
    candidates.assign(mempool_.begin(), mempool_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  b.chain_instance_id = chain_instance_id_;
  b.epoch = snapshots_.active(cip11::Height{b.height}).epoch.value;
  if (config_.rotating) {
    // The leader of the view among the validators active at the height (D2):
    // a validator out of that snapshot, or not its turn, proposes nothing.
    const auto leader = proposers_->leader(b.height, b.view);
    const auto mine = my_key_ ? proposers_->index_of(b.height, *my_key_) : std::nullopt;
    if (!leader || mine != leader)
      return Err{ApiError{ApiErrorCode::kBadRequest, "this validator does not lead view " + std::to_string(b.view.value) +
                                                         " at height " + std::to_string(b.height)}};
    b.proposer = *leader;
    set_round_keys(round_keys_, *proposers_, b.height);
  } else {
    b.proposer = genesis_index_.value_or(0);
  }
  // Each sender's transactions from its committed nonce on, as every verifier
  // checks them; one a block from another validator superseded stays out.
  std::vector<Pending> txs;
  std::map<Address, std::uint64_t> expected;
  for (auto& p : candidates) {
    auto [at, fresh] = expected.try_emplace(p.sender, 0);
    if (fresh) {
      auto it = state_.nonces.find(p.sender);  // the producer's own to read (produce_mu_)
      at->second = it == state_.nonces.end() ? 0 : it->second;
    }
    if (p.tx.nonce != at->second) continue;
    ++at->second;
    b.txs.push_back(encode_tx(p.tx));
    txs.push_back(std::move(p));
  }
  Execution ex;
  std::optional<cip11::PresentSet> present;
  if (genesis_.cip11) {
    ex.registry_size = state_.cip11.index.size();  // |registry(H-1)|
    auto [field, set] = presence_for(b.height, ex.registry_size);
    b.presence = std::move(field);
    present = std::move(set);
    // The block's round seed: its leader's proof over the previous output,
    // committed as seed_evidence (choices 74, 78). A proof that does not verify
    // (this node does not lead the round) makes no block.
    const cip11::chain::Round round = round_at(*proposers_, config_.rotating, b.height, b.view);
    std::optional<crypto::ecvrf::Proof> proof;
    if (seed_key_)
      if (auto p = seeds_->prove(*seed_key_, round)) proof = *p;
    auto advance = seeds_->advance(round, proof);
    if (!advance) {
      log::error("seed_proof_refused", log::field("height", b.height), log::field("view", b.view.value),
                 log::field("why", std::string(cip11::chain::to_string(advance.error().error))));
      return Err{internal("the block's seed proof is refused")};
    }
    ex.seeds = std::move(*advance);
    ex.round = round;
    if (proof) b.seed_evidence.assign(proof->begin(), proof->end());
    if (!config_.process_due_selections) ex.committed_seeds.emplace();
  }
  execute(b, txs, present ? &*present : nullptr, ex);
  b.consumed_seeds = ex.consumed_seeds;
  b.state_root = ex.state_root;
  SignedBlock sealed = config_.validator_key ? seal_block(std::move(b), *config_.validator_key)
                                             : SignedBlock{b, block_digest(b), {}};
  if (announce) announce(sealed);
  auto written = write_block(sealed, txs, ex);
  if (!written) return Err{written.error()};
  return sealed;
}

ApiError Node::refuse(BlockRefusal why, const std::string& detail) {
  {
    std::lock_guard lock(mu_);
    ++refusals_[static_cast<std::size_t>(why)];
  }
  log::warn("block_refused", log::field("reason", std::string(block_refusal_name(why))), log::field("detail", detail));
  return ApiError{ApiErrorCode::kBlockRefused, std::string(block_refusal_name(why)) + ": " + detail};
}

ApiResult<std::uint64_t> Node::accept_block(const SignedBlock& sb) {
  // Never wait for this node's own block: its proposer may be sending that
  // block to the validator whose block this is, which would wait in turn.
  std::unique_lock produce_lock(produce_mu_, std::try_to_lock);
  if (!produce_lock.owns_lock())
    return Err{ApiError{ApiErrorCode::kUnavailable, "busy with another block; fetch this one again later"}};
  return accept_locked(sb);
}

ApiResult<std::uint64_t> Node::accept_locked(const SignedBlock& sb) {
  const Block& b = sb.block;
  const Head at = head();
  auto no = [&](BlockRefusal why, const std::string& detail) -> ApiResult<std::uint64_t> {
    return Err{refuse(why, "block " + std::to_string(b.height) + ": " + detail)};
  };
  // Who may propose what, before any work.
  const EpochValidators* producers = proposers_->at(b.height);
  if (validators_.empty() || !producers) return no(BlockRefusal::kNoValidatorSet, "no ValidatorSetSnapshot(0)");
  if (b.chain_instance_id != chain_instance_id_) return no(BlockRefusal::kWrongChain, json::hex0x(b.chain_instance_id));
  if (b.epoch != snapshots_.active(cip11::Height{b.height}).epoch.value)  // the subset_epoch active at its height (§5.4, D9)
    return no(BlockRefusal::kWrongEpoch, "epoch " + std::to_string(b.epoch));
  if (b.height != at.height + 1) {
    // A block at a height this node holds, other than its own there: a fork (D11).
    if (b.height <= at.height)
      if (auto own = block_at(b.height); !own || own->digest != sb.digest) fork_seen_ = true;
    return no(BlockRefusal::kNotNext, "the head is " + std::to_string(at.height));
  }
  if (b.parent != at.digest) {
    fork_seen_ = true;  // it builds on another block at this node's head height (D11)
    return no(BlockRefusal::kWrongParent, "parent " + json::hex0x(b.parent));
  }
  // Above the parent's view, or from 0 where the block starts a round epoch (choice 140).
  if (b.view < first_view_after(*proposers_, config_.rotating, at)) return no(BlockRefusal::kStaleView, "view " + std::to_string(b.view.value));
  // The leader of the view among the validators of the epoch active at the
  // block's height (D2): a validator that snapshot leaves out proposes nothing.
  if (b.proposer != leader_of(b.view, producers->peers.size()))
    return no(BlockRefusal::kWrongProposer, "proposer " + std::to_string(b.proposer) + " in view " +
                                                std::to_string(b.view.value) + " of epoch " + std::to_string(producers->epoch));
  if (block_digest(b) != sb.digest) return no(BlockRefusal::kBadDigest, "digest " + json::hex0x(sb.digest));
  if (!crypto::ed25519_verify(producers->peers[b.proposer], sb.digest, sb.signature))
    return no(BlockRefusal::kBadSignature, "proposer " + std::to_string(b.proposer));
  // The round seed: the proposer leads Round(E, view), and its proof over the
  // previous output must verify against its key (choice 78). A block without
  // one makes its round derived, as a nullified one (choice 74: withholding
  // the proof is worth no more to a leader than withholding the block).
  std::optional<cip11::chain::SeedChain::Advance> seed_advance;
  const cip11::chain::Round round = round_at(*proposers_, config_.rotating, b.height, b.view);
  if (seeds_) {
    std::optional<crypto::ecvrf::Proof> proof;
    if (!b.seed_evidence.empty()) {
      auto decoded = crypto::ecvrf::decode_proof(b.seed_evidence);
      if (!decoded) return no(BlockRefusal::kBadSeedEvidence, std::string(crypto::ecvrf::to_string(decoded.error())));
      proof = *decoded;
    }
    set_round_keys(round_keys_, *proposers_, b.height);
    auto advance = seeds_->advance(round, proof);
    if (!advance) {
      std::string why(cip11::chain::to_string(advance.error().error));
      if (advance.error().vrf) why += ": " + std::string(crypto::ecvrf::to_string(*advance.error().vrf));
      return no(BlockRefusal::kBadSeedEvidence, why);
    }
    seed_advance = std::move(*advance);
  } else if (!b.seed_evidence.empty()) {
    return no(BlockRefusal::kBadSeedEvidence, "seed evidence on a chain without CIP-11 round seeds");
  }

  // The transactions, decoded from their literal bytes, each its sender's next nonce.
  std::vector<Pending> txs;
  std::map<Address, std::uint64_t> expected;
  for (std::size_t i = 0; i < b.txs.size(); ++i) {
    auto tx = decode_tx(b.txs[i]);
    if (!tx) return no(BlockRefusal::kBadTx, "tx " + std::to_string(i) + ": " + std::string(codec::to_string(tx.error())));
    if (tx->chain_instance_id != chain_instance_id_) return no(BlockRefusal::kBadTx, "tx " + std::to_string(i) + " names another chain");
    auto sender = recover_sender(*tx);
    if (!sender) return no(BlockRefusal::kBadTx, "tx " + std::to_string(i) + " recovers no sender");
    auto [e, fresh] = expected.try_emplace(*sender, 0);
    if (fresh) {
      auto it = state_.nonces.find(*sender);
      e->second = it == state_.nonces.end() ? 0 : it->second;
    }
    if (tx->nonce != e->second)
      return no(BlockRefusal::kBadNonce, "tx " + std::to_string(i) + " has nonce " + std::to_string(tx->nonce) +
                                             ", its sender's next is " + std::to_string(e->second));
    ++e->second;
    Bytes32 hash = tx_hash(*tx);
    txs.push_back(Pending{std::move(*tx), *sender, hash});
  }

  // The committed CIP-11 fields, decoded strictly from their literal bytes.
  Execution ex;
  ex.seeds = std::move(seed_advance);
  ex.round = round;
  std::optional<cip11::PresentSet> present;
  if (genesis_.cip11) {
    const auto& params = genesis_.cip11->params;
    ex.registry_size = state_.cip11.index.size();
    if (cip11::chain::mode_a_effective(params, snapshots_, cip11::Height{b.height})) {
      // Effective Mode A (§7.2 rule 3): PresenceInput(H) is the parent state's
      // presence_proven_until set, derived here, never the proposer's; a field,
      // which the block MAY omit, must state exactly that set.
      auto proven = cip11::chain::proven_presence(state_.cip11, cip11::Height{b.height}, ex.registry_size);
      if (b.presence) {
        auto stated = cip11::decode_presence(*b.presence, ex.registry_size);
        if (!stated) return no(BlockRefusal::kBadPresence, std::string(cip11::to_string(stated.error())));
        if (*stated != proven)
          return no(BlockRefusal::kBadPresence, "a Mode A field that is not presence_proven_until's set (§8.3)");
      }
      present = std::move(proven);
    } else if (!params.present_first_enabled && !params.presence_shadow_enabled) {
      if (b.presence) return no(BlockRefusal::kBadPresence, "a PresenceInput field on a chain that reads none (§7.2 rule 1)");
      present.emplace(ex.registry_size);
    } else {
      auto set = cip11::chain::presence_of_block(params, b.presence, ex.registry_size);
      if (!set) return no(BlockRefusal::kBadPresence, std::string(cip11::to_string(set.error())));
      present = std::move(*set);
    }
    auto seeds = cip11::chain::decode_consumed_seeds(b.consumed_seeds);
    if (!seeds) return no(BlockRefusal::kBadConsumedSeeds, std::string(cip11::to_string(seeds.error())));
    // §9.2: which due records a block processes is its proposer's choice; this
    // node processes exactly those whose round the block commits, and the
    // comparison below refuses an entry no record consumed or another seed.
    ex.committed_seeds = std::move(*seeds);
  } else if (b.presence || !b.consumed_seeds.empty()) {
    return no(b.presence ? BlockRefusal::kBadPresence : BlockRefusal::kBadConsumedSeeds, "a CIP-11 field on a chain without CIP-11");
  }

  // Re-execution on this node's state; the results must be what the proposer committed.
  execute(b, txs, present ? &*present : nullptr, ex);
  if (ex.consumed_seeds != b.consumed_seeds) {
    state_.cip11.rollback();
    return no(BlockRefusal::kSeedsMismatch, "the block's records consumed " +
                                                std::to_string(ex.committed.effects.consumed_seeds.size()) + " seeds");
  }
  if (ex.state_root != b.state_root) {
    state_.cip11.rollback();
    return no(BlockRefusal::kStateMismatch, "re-executed to " + json::hex0x(ex.state_root));
  }
  return write_block(sb, txs, ex);
}

ApiResult<SignedBlock> Node::block_at(std::uint64_t height) {
  std::string value;
  auto status = db_->Get({}, layout::chain_block_key(height), &value);
  if (status.IsNotFound()) return Err{not_found("no block " + std::to_string(height))};
  if (!status.ok()) return Err{internal(status.ToString())};
  auto block = decode_signed_block(as_bytes(value));
  if (!block) return Err{internal("stored block unreadable")};
  return std::move(*block);
}

ApiResult<Unit> Node::roll_back_to(std::uint64_t height) {
  std::lock_guard produce_lock(produce_mu_);
  return unapply_to(height);
}

ApiResult<Unit> Node::unapply_to(std::uint64_t target) {
  const std::uint64_t top = head().height;
  if (target > top) return Err{ApiError{ApiErrorCode::kBadRequest, "height " + std::to_string(target) + " is above the head"}};
  // A final block is never un-applied (D12): F below the highest head this
  // node had with several validators, not only below today's.
  const std::uint64_t floor = final_floor_;
  if (target < floor)
    return Err{ApiError{ApiErrorCode::kBadRequest, "block " + std::to_string(target + 1) + " is final here (block " +
                                                       std::to_string(floor) + " was " + std::to_string(finality_depth_) +
                                                       " blocks below a head)"}};
  // Every step's record first: a rollback goes all the way or not at all.
  std::vector<std::string> records;  // from the head down
  for (std::uint64_t h = top; h > target; --h)
    if (!db_->Get({}, layout::undo_key(h), &records.emplace_back()).ok())
      return Err{ApiError{ApiErrorCode::kBadRequest, "block " + std::to_string(h) +
                                                         " keeps no undo record: it is final here (more than " +
                                                         std::to_string(kMaxRollbackDepth) + " blocks deep, or a lone producer's)"}};
  RolledBack notice{target, 0};
  std::vector<std::vector<Pending>> dropped;  // each dropped block's transactions, from the head down
  ApiResult<Unit> outcome = Unit{};
  for (std::uint64_t h = top; h > target; --h) {
    const std::string& undo_bytes = records[top - h];
    auto undo = decode_undo(as_bytes(undo_bytes));
    auto block = block_at(h);
    if (!undo || !block) {
      outcome = Err{internal("block " + std::to_string(h) + "'s undo record or block is unreadable")};
      break;
    }
    // Its transactions go back to the mempool. What it assigned was never
    // pushed: it was not final (D12).
    std::vector<Pending> txs;
    for (const auto& bytes : block->block.txs) {
      auto tx = decode_tx(bytes);
      auto sender = tx ? recover_sender(*tx) : std::nullopt;
      if (sender) txs.push_back(Pending{*tx, *sender, tx_hash(*tx)});
    }
    // One synced batch a block: a crash leaves the head at h or at h - 1.
    rocksdb::WriteBatch batch;
    for (const auto& e : undo->entries) {
      if (e.before)
        batch.Put(e.key, *e.before);
      else
        batch.Delete(e.key);
    }
    batch.Delete(layout::undo_key(h));
    batch.Put(std::string(layout::kFinalFloor), layout::be64(floor));  // the head may now be fewer than F above it
    rocksdb::WriteOptions sync;
    sync.sync = true;
    if (auto status = db_->Write(sync, &batch); !status.ok()) {
      outcome = Err{internal("un-applying block " + std::to_string(h) + " failed: " + status.ToString())};
      break;
    }
    dropped.push_back(std::move(txs));
    ++notice.dropped;
    ++rolled_back_;
    log::warn("block_rolled_back", log::field("height", h), log::field("digest", json::hex0x(block->digest)),
              log::field("view", block->block.view.value));
  }
  if (notice.dropped == 0) return outcome;
  // The state in memory, the head and the round seeds follow the store,
  // read back as at open, wherever the steps stopped.
  std::string registry_bytes, height_bytes;
  (void)db_->Get({}, std::string(layout::kRegistry), &registry_bytes);
  (void)db_->Get({}, std::string(layout::kHeight), &height_bytes);
  auto loaded = load_chain(*db_, genesis_, config_.rotating, registry_bytes, height_bytes);
  if (!loaded) {
    // The store is one written block; only the memory disagrees. A restart reads it back.
    log::error("rollback_reload_failed", log::field("why", loaded.error()));
    std::abort();
  }
  state_.cip11 = std::move(loaded->state.cip11);
  // The shadow book is not in the store, so not undone with it: its records
  // from the dropped blocks could name another branch's jobs, so all go
  // (docs/cip11.md choice 136; the jobs in flight lose their shadow draws).
  if (shadow_.size() > 0)
    log::info("cip11_shadow_records_dropped", log::field("records", shadow_.size()), log::field("why", "rollback"));
  shadow_.clear();
  seeds_ = std::move(loaded->seeds);
  pending_views_ = pending_views_of(state_.cip11);
  snapshots_ = std::move(loaded->snapshots);  // the producer's (produce_mu_)
  round_keys_ = std::move(loaded->round_keys);
  notice.height = loaded->head.height;
  auto snapshot = snapshot_of(*db_);
  {
    std::lock_guard lock(mu_);
    state_.registry = std::move(loaded->state.registry);
    state_.nonces = std::move(loaded->state.nonces);
    proposers_ = std::move(loaded->proposers);
    state_.validator_sets = std::move(loaded->state.validator_sets);
    height_ = loaded->head.height;
    head_ = loaded->head;
    published_ = std::move(snapshot);
    // The mempool again from the committed nonces: the dropped blocks'
    // transactions in block order, then what was pending.
    std::vector<Pending> again;
    for (auto b = dropped.rbegin(); b != dropped.rend(); ++b)
      for (auto& p : *b) again.push_back(std::move(p));
    for (auto& p : mempool_) again.push_back(std::move(p));
    for (auto& [sender, queued] : future_)
      for (auto& [nonce, p] : queued) again.push_back(std::move(p));
    mempool_.clear();
    mempool_hashes_.clear();
    future_.clear();
    future_count_ = 0;
    next_nonce_ = state_.nonces;
    for (auto& p : again) {
      bool fresh = false;
      (void)admit_locked(std::move(p), fresh);  // one a later block superseded is refused here
    }
  }
  if (rollback_observer_) rollback_observer_(notice);
  return outcome;
}

ApiResult<Node::Followed> Node::follow(BlocksApi& peer, const std::function<bool()>& enough) {
  // At most this many of the peer's blocks at once; the next follow takes the rest.
  constexpr std::uint64_t kMaxFollowBlocks = 1024;
  auto theirs = peer.chain_head();
  if (!theirs) return Err{theirs.error()};
  const Head mine = head();
  Followed out;
  if (theirs->digest == mine.digest) return out;
  std::map<std::uint64_t, SignedBlock> fetched;  // theirs, by height
  auto their_block = [&](std::uint64_t h) -> ApiResult<const SignedBlock*> {
    if (auto it = fetched.find(h); it != fetched.end()) return &it->second;
    auto b = peer.block_at(h);
    if (!b) return Err{b.error()};
    if (b->block.height != h) return Err{ApiError{ApiErrorCode::kBadRequest, "the peer's block names another height"}};
    return &fetched.emplace(h, std::move(*b)).first->second;
  };
  // The common ancestor: the highest height holding one block on both chains
  // (the genesis at worst), no deeper than the undo records reach.
  const std::uint64_t floor = final_floor_;  // D12: no lower than any head of this node made final
  std::uint64_t ancestor = std::min(mine.height, theirs->height);
  for (; ancestor > 0; --ancestor) {
    Bytes32 their_digest = theirs->digest;
    if (ancestor != theirs->height) {
      auto b = their_block(ancestor);
      if (!b) return Err{b.error()};
      their_digest = (*b)->digest;
    }
    Bytes32 my_digest = mine.digest;
    if (ancestor != mine.height) {
      auto b = block_at(ancestor);
      if (!b) return Err{b.error()};
      my_digest = b->digest;
    }
    if (their_digest == my_digest) break;
    if (ancestor <= floor)
      return Err{ApiError{ApiErrorCode::kBadRequest, "the chains part at or below block " + std::to_string(floor) +
                                                         ", final here (the finality depth " +
                                                         std::to_string(finality_depth_) + " below a head it had)"}};
  }
  if (ancestor == theirs->height) return out;  // theirs is a prefix of this chain
  if (ancestor < mine.height) {
    // A fork: decided by the blocks at the first height where they differ.
    auto first = their_block(ancestor + 1);
    if (!first) return Err{first.error()};
    auto own = block_at(ancestor + 1);
    if (!own) return Err{own.error()};
    if (!wins_at_height((*first)->block.view, (*first)->digest, own->block.view, own->digest)) return out;
    log::warn("fork_choice", log::field("height", ancestor + 1), log::field("their_view", (*first)->block.view.value),
              log::field("own_view", own->block.view.value), log::field("dropping", mine.height - ancestor));
  }
  std::vector<SignedBlock> branch;
  for (std::uint64_t h = ancestor + 1; h <= std::min(theirs->height, ancestor + kMaxFollowBlocks); ++h) {
    if (enough && !branch.empty() && enough()) break;
    auto b = their_block(h);
    if (!b) break;  // what it has; the next follow fetches the rest
    branch.push_back(**b);
  }
  if (branch.empty()) return Err{ApiError{ApiErrorCode::kUnavailable, "the peer's blocks could not be fetched"}};

  std::lock_guard produce_lock(produce_mu_);
  if (head() != mine) return Err{ApiError{ApiErrorCode::kUnavailable, "the head moved meanwhile; follow again"}};
  std::vector<SignedBlock> own;  // this node's blocks above the ancestor, to restore if theirs do not verify
  if (ancestor < mine.height) {
    for (std::uint64_t h = ancestor + 1; h <= mine.height; ++h) {
      auto b = block_at(h);
      if (!b) return Err{b.error()};
      own.push_back(std::move(*b));
    }
    auto rolled = unapply_to(ancestor);
    out.dropped = mine.height - head().height;
    if (!rolled) return Err{rolled.error()};
  }
  for (const auto& b : branch) {
    auto accepted = accept_locked(b);
    if (accepted) {
      ++out.accepted;
      continue;
    }
    if (out.accepted == 0)  // its branch does not verify here: back to this node's own, which did
      for (const auto& o : own)
        if (!accept_locked(o)) break;
    return Err{accepted.error()};
  }
  return out;
}

Node::Head Node::head() const {
  std::lock_guard lock(mu_);
  return head_;
}

std::shared_ptr<const Proposers> Node::proposers() const {
  std::lock_guard lock(mu_);
  return proposers_;
}

std::optional<std::uint32_t> Node::validator_index() const {
  if (!config_.rotating) return genesis_index_;
  std::lock_guard lock(mu_);
  return my_key_ ? proposers_->index_of(height_ + 1, *my_key_) : std::nullopt;
}

bool Node::leads(std::uint64_t height, cip11::View view) const {
  if (!my_key_) return false;
  const auto p = proposers();
  const auto leader = p->leader(height, view);
  return leader && p->index_of(height, *my_key_) == leader;
}

std::size_t Node::shadow_records() const {
  std::lock_guard produce_lock(produce_mu_);
  return shadow_.size();
}

std::array<std::uint64_t, kBlockRefusalCount> Node::refusals() const {
  std::lock_guard lock(mu_);
  return refusals_;
}

ApiResult<Bytes32> Node::submit(const Transaction& tx) {
  bool fresh = false;
  auto hash = admit(tx, fresh);
  if (hash && fresh && submit_observer_) submit_observer_(tx);
  return hash;
}

ApiResult<Bytes32> Node::admit(const Transaction& tx, bool& fresh) {
  if (tx.chain_instance_id != chain_instance_id_)
    return Err{ApiError{ApiErrorCode::kWrongChain, "chain_instance_id is " + json::hex0x(chain_instance_id_)}};
  auto sender = recover_sender(tx);
  if (!sender) return Err{ApiError{ApiErrorCode::kBadSignature, "the signature recovers no key, or is high-S (low S only)"}};
  std::lock_guard lock(mu_);
  return admit_locked(Pending{tx, *sender, tx_hash(tx)}, fresh);
}

ApiResult<Bytes32> Node::admit_locked(Pending p, bool& fresh) {
  const Address sender = p.sender;
  const Bytes32 hash = p.hash;
  const std::uint64_t nonce = p.tx.nonce;
  // The same signed transaction again (a runner rebroadcasting its result,
  // §10.3) answers with its hash, whether it is pending or already included.
  if (mempool_hashes_.contains(hash)) return hash;
  if (std::string included; db_->Get({}, layout::tx_key(hash), &included).ok()) return hash;
  if (mempool_.size() >= config_.max_mempool_txs)
    return Err{ApiError{ApiErrorCode::kMempoolFull, std::to_string(mempool_.size()) + " transactions pending"}};
  auto it = next_nonce_.find(sender);
  std::uint64_t expected = it == next_nonce_.end() ? 0 : it->second;
  auto& queued = future_[sender];
  // A nonce a little ahead waits for the ones before it: transactions sent
  // on different QUIC streams (§10.3 result frames) may arrive out of order.
  if (nonce > expected && nonce - expected <= kMaxNonceGap && !queued.contains(nonce) &&
      future_count_ < config_.max_mempool_txs) {
    queued.emplace(nonce, std::move(p));
    ++future_count_;
    mempool_hashes_.insert(hash);
    fresh = true;
    return hash;
  }
  if (nonce != expected) {
    if (queued.empty()) future_.erase(sender);
    return Err{ApiError{ApiErrorCode::kBadNonce, "sender " + json::hex0x(sender) + " expects nonce " +
                                                     std::to_string(expected)}};
  }
  mempool_.push_back(std::move(p));
  mempool_hashes_.insert(hash);
  // Then every queued successor that is now next, in nonce order.
  std::uint64_t next = expected + 1;
  for (auto q = queued.begin(); q != queued.end() && q->first == next; q = queued.erase(q), ++next) {
    mempool_.push_back(std::move(q->second));
    --future_count_;
  }
  if (queued.empty()) future_.erase(sender);
  next_nonce_[sender] = next;
  fresh = true;
  return hash;
}

ApiResult<std::optional<TxReceipt>> Node::receipt(const Bytes32& tx_hash) {
  std::string value;
  auto status = db_->Get({}, layout::tx_key(tx_hash), &value);
  if (status.IsNotFound()) return std::optional<TxReceipt>{};
  if (!status.ok()) return Err{internal(status.ToString())};
  auto r = json::receipt_from_json(nlohmann::json::parse(value, nullptr, false));
  if (!r) return Err{internal("stored receipt unreadable")};
  return std::optional<TxReceipt>(std::move(*r));
}

ApiResult<std::uint64_t> Node::height() {
  std::lock_guard lock(mu_);
  return height_;
}

ApiResult<Bytes32> Node::chain_instance_id() { return chain_instance_id_; }

ApiResult<AccountInfo> Node::account_info(const Address& address) {
  std::lock_guard lock(mu_);
  auto it = state_.nonces.find(address);
  return AccountInfo{state_.registry.native_balance(address), it == state_.nonces.end() ? 0 : it->second};
}

ApiResult<cbqs::ProviderRecordV2> Node::provider(const Address& provider) {
  std::lock_guard lock(mu_);
  auto it = state_.registry.providers.find(provider);
  if (it == state_.registry.providers.end()) return Err{not_found("no provider " + json::hex0x(provider))};
  return it->second;
}

ApiResult<cbqs::StreamRecordV2> Node::stream(const Bytes32& stream_id) {
  std::lock_guard lock(mu_);
  auto it = state_.registry.streams.find(stream_id);
  if (it == state_.registry.streams.end()) return Err{not_found("no stream " + json::hex0x(stream_id))};
  return it->second;
}

ApiResult<cbqs::CbqsAccountV2> Node::account(const Address& owner, const Address& provider) {
  std::lock_guard lock(mu_);
  const auto* a = state_.registry.account(owner, provider);
  if (!a) return Err{not_found("no account for this owner and provider")};
  return *a;
}

ApiResult<cbqs::Params> Node::params() {
  std::lock_guard lock(mu_);
  return state_.registry.params;
}

ApiResult<std::vector<BlockEvents>> Node::events(std::uint64_t from, std::uint64_t to) {
  if (to < from || to - from >= kMaxEventBlocksPerQuery)
    return Err{ApiError{ApiErrorCode::kBadRequest, "need from <= to and at most 1,000 blocks"}};
  std::vector<BlockEvents> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}));
  const std::string prefix(layout::kBlockPrefix);
  for (it->Seek(layout::block_key(from)); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::uint64_t h = layout::from_be(it->key().ToStringView().substr(prefix.size()));
    if (h > to) break;
    auto block = nlohmann::json::parse(it->value().ToStringView(), nullptr, false);
    if (!block.is_object() || !block.contains("txs")) return Err{internal("stored block unreadable")};
    for (const auto& hash_text : block["txs"]) {
      auto hash = fixed_from_hex<32>(hash_text.get<std::string>());
      if (!hash) return Err{internal("stored block unreadable")};
      auto r = receipt(*hash);
      if (!r) return Err{r.error()};
      if (*r && !(*r)->events.empty()) out.push_back(BlockEvents{h, *hash, std::move((*r)->events)});
    }
  }
  return out;
}

ApiResult<ProviderSnapshot> Node::provider_snapshot(const Address& provider) {
  std::lock_guard lock(mu_);
  const auto& reg = state_.registry;
  auto p = reg.providers.find(provider);
  if (p == reg.providers.end()) return Err{not_found("no provider " + json::hex0x(provider))};
  ProviderSnapshot s;
  s.height = height_;
  s.chain_instance_id = chain_instance_id_;
  s.provider = p->second;
  s.params = reg.params;
  std::set<Address> owners;
  for (const auto& [id, stream] : reg.streams) {
    if (stream.provider != provider) continue;
    s.streams.push_back(stream);
    owners.insert(stream.owner);
  }
  for (const auto& owner : owners)
    if (const auto* a = reg.account(owner, provider)) s.accounts.push_back(*a);
  return s;
}

ApiResult<Unit> Node::require_cip11() const {
  if (!genesis_.cip11) return Err{not_found("this chain's genesis has no CIP-11 section")};
  return Unit{};
}

ApiResult<Cip11Genesis> Node::cip11_genesis() {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return *genesis_.cip11;
}

ApiResult<std::vector<cip11::chain::RunnerRecord>> Node::runners() {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return read_at(published(), [&](const rocksdb::ReadOptions& at) { return cip11_store::runners(*db_, at); });
}

ApiResult<cip11::chain::RunnerRecord> Node::runner(const Address& runner) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return read_at(published(), [&](const rocksdb::ReadOptions& at) { return cip11_store::runner(*db_, at, runner); });
}

ApiResult<cip11::chain::PresenceProof> Node::presence_proof(const Address& runner) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return read_at(published(), [&](const rocksdb::ReadOptions& at) { return cip11_store::presence(*db_, at, runner); });
}

ApiResult<cip11::chain::JobRecord> Node::job(const cip11::JobId& job_id) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return read_at(published(), [&](const rocksdb::ReadOptions& at) { return cip11_store::job(*db_, at, job_id); });
}

ApiResult<std::vector<cip11::chain::JobRecord>> Node::runner_jobs(const Address& runner) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  return read_at(published(), [&](const rocksdb::ReadOptions& at) { return cip11_store::runner_jobs(*db_, at, runner); });
}

namespace {
ApiResult<nlohmann::json> read_block(rocksdb::DB& db, std::uint64_t height) {
  std::string value;
  auto status = db.Get({}, layout::block_key(height), &value);
  if (status.IsNotFound()) return Err{not_found("no block " + std::to_string(height))};
  if (!status.ok()) return Err{internal(status.ToString())};
  return nlohmann::json::parse(value, nullptr, false);
}
}  // namespace

ApiResult<std::vector<cip11::chain::ValidatorSetChange>> Node::validator_set_changes() {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  std::vector<cip11::chain::ValidatorSetChange> out = genesis_.cip11->validator_set_changes;
  std::lock_guard lock(mu_);
  for (const auto& s : state_.validator_sets) out.push_back(as_change(s));
  return out;
}

ApiResult<std::vector<cip11::chain::ValidatorEntry>> Node::validators() {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  std::lock_guard lock(mu_);
  return named_validators(genesis_.cip11->validators, state_.validator_sets);
}

std::optional<cip11::chain::RoundSeed> Node::round_seed(cip11::View view) const {
  return round_seed(cip11::chain::devchain_round(view));
}

std::optional<cip11::chain::RoundSeed> Node::round_seed(cip11::chain::Round round) const {
  std::lock_guard produce_lock(produce_mu_);
  if (!seeds_) return std::nullopt;
  return seeds_->at(round);
}

cip11::chain::Round Node::round_of(std::uint64_t height, cip11::View view) const {
  return round_at(*proposers(), config_.rotating, height, view);
}

cip11::View Node::first_view(const ChainHead& head) const {
  return first_view_after(*proposers(), config_.rotating, head);
}

ApiResult<BlockPresence> Node::block_presence(std::uint64_t height) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  auto block = read_block(*db_, height);
  if (!block) return Err{block.error()};
  auto presence = json::cip11_block_presence(*block);
  if (!presence) return Err{internal("stored block unreadable")};
  presence->height = height;
  return *presence;
}

ApiResult<cip11::chain::Effects> Node::block_assignments(std::uint64_t height) {
  if (auto ok = require_cip11(); !ok) return Err{ok.error()};
  auto block = read_block(*db_, height);
  if (!block) return Err{block.error()};
  auto effects = json::assignments_from_json(*block, height);
  if (!effects) return Err{internal("stored block unreadable")};
  return *effects;
}

}  // namespace cowboy::devchain
