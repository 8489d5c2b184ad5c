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
#include "devchain/json.h"
#include "devchain/layout.h"

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
  auto registry = cbqs::make_genesis(to_registry_genesis(*genesis));
  if (!registry) return Err{std::string("the genesis is refused by §18 rule 1")};
  ChainState state{std::move(*registry), {}, {}};
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
    log::info("cip11_shadow_draw", log::field("height", height), log::field("job_id", json::hex0x(s.job_id)),
              log::field("live", list(s.live)), log::field("shadow", list(s.shadow)),
              log::field("shadow_present", s.shadow_present), log::field("agree", s.live == s.shadow ? "true" : "false"));
  for (const auto& id : e.unverified_pending) {
    const bool expired = std::find(e.expired_pending.begin(), e.expired_pending.end(), id) != e.expired_pending.end();
    log::error("cip11_snapshot_root_mismatch", log::field("height", height), log::field("job_id", json::hex0x(id)),
               log::field("outcome", expired ? "timed_out" : "left_pending"));
  }
}

}  // namespace

Result<std::unique_ptr<Node>, std::string> Node::open(const NodeConfig& config,
                                                      const std::optional<GenesisSpec>& genesis) {
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
  std::string genesis_json, registry_bytes, height_bytes;
  if (!db->Get({}, std::string(layout::kGenesis), &genesis_json).ok() ||
      !db->Get({}, std::string(layout::kRegistry), &registry_bytes).ok() ||
      !db->Get({}, std::string(layout::kHeight), &height_bytes).ok() || height_bytes.size() != 8)
    return Err{std::string("the chain store is incomplete")};
  auto parsed = nlohmann::json::parse(genesis_json, nullptr, false);
  auto stored_genesis = genesis_from_json(parsed);
  if (!stored_genesis) return Err{"the stored genesis is unreadable: " + stored_genesis.error()};
  if (genesis && chain_instance_id_of(*genesis) != chain_instance_id_of(*stored_genesis))
    return Err{std::string("the data directory holds a different chain than the given genesis")};
  auto registry = decode_registry(as_bytes(registry_bytes));
  if (!registry) return Err{"the stored registry is unreadable: " + std::string(codec::to_string(registry.error()))};
  auto nonces = load_nonces(*db);
  if (!nonces) return Err{"the stored nonces are unreadable: " + nonces.error()};
  auto cip11 = cip11_store::load(*db);
  if (!cip11) return Err{"the stored CIP-11 state is unreadable: " + cip11.error()};
  ChainState state{std::move(*registry), std::move(*nonces), std::move(*cip11)};
  // The head: the last block as proposed (a store written before blocks were
  // kept so has none, and no other validator's block can follow it).
  Head head{layout::from_be(height_bytes), 0, state.registry.chain_instance_id};
  if (head.height > 0) {
    std::string last;
    if (!db->Get({}, layout::chain_block_key(head.height), &last).ok()) last.clear();
    auto block = decode_signed_block(as_bytes(last));
    if (block) {
      head.view = block->block.view;
      head.digest = block->digest;
    } else {
      head.view = head.height;
      head.digest = Bytes32{};
    }
  }
  if (config.validator_key) {
    auto keys = stored_genesis->cip11 ? canonical_validator_keys(*stored_genesis->cip11) : std::vector<crypto::Ed25519Public>{};
    if (std::find(keys.begin(), keys.end(), crypto::ed25519_from_seed(*config.validator_key).public_key) == keys.end())
      return Err{std::string("the validator key is not one of the genesis validators' peer keys")};
  }
  return std::unique_ptr<Node>(new Node(config, std::move(db), *stored_genesis, std::move(state), head));
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
      validators_(genesis_.cip11 ? canonical_validator_keys(*genesis_.cip11) : std::vector<crypto::Ed25519Public>{}),
      validator_index_(index_of(validators_, config_.validator_key)),
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

std::pair<std::optional<Bytes>, cip11::PresentSet> Node::presence_for(std::uint64_t height,
                                                                       std::uint32_t registry_size) {
  const auto& params = genesis_.cip11->params;
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

struct Node::Execution {
  BlockWork work;
  CommittedBlock committed;
  std::uint32_t registry_size = 0;  // |registry(H-1)|
  std::vector<TxReceipt> receipts;
  Bytes consumed_seeds;  // ConsumedSeedsV1 of what the block's records consumed
  Bytes32 state_root{};
};

void Node::execute(const Block& block, const std::vector<Pending>& txs, const cip11::PresentSet* present,
                   Execution& out) {
  const std::uint64_t h = block.height;
  out.committed = CommittedBlock{h, block.presence, {}};
  if (!txs.empty()) out.work.registry = state_.registry;  // applied to a copy; published only after the write
  // A CIP-11 block: the dispatcher's start-of-block passes (§7.2, §9.2,
  // §11.2) against the block's present set, then its instructions. The plane
  // is changed in place; its journal is what the block writes.
  std::optional<cip11::chain::DevBeacon> beacon;
  std::optional<cip11::chain::BlockContext> context;
  if (present) {
    beacon.emplace(chain_instance_id_, h);
    context.emplace(cip11::chain::BlockContext{h, genesis_.cip11->params, *beacon, *present});
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
        crypto::keccak256(encode_state(out.work.registry ? *out.work.registry : state_.registry, nonces, state_.cip11));
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
    batch.Put(layout::block_key(h), record.dump());
  }
  batch.Put(layout::chain_block_key(h), std::string(as_sv(encode_signed_block(signed_block))));
  // Only what this block changed: the registry if it did, its senders' nonces, the CIP-11 records.
  const bool registry_changed = ex.work.registry && !(*ex.work.registry == state_.registry);
  if (registry_changed) batch.Put(std::string(layout::kRegistry), std::string(as_sv(encode_registry(*ex.work.registry))));
  stage_nonces(ex.work.nonces, batch);
  cip11_store::stage(state_.cip11, batch);
  batch.Put(std::string(layout::kHeight), layout::be64(h));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  auto status = db_->Write(sync, &batch);
  if (!status.ok()) {
    state_.cip11.rollback();
    log::error("block_write_failed", log::field("height", h), log::field("why", status.ToString()));
    return Err{internal("block write failed: " + status.ToString())};
  }
  state_.cip11.commit();

  auto snapshot = snapshot_of(*db_);
  {
    std::lock_guard lock(mu_);
    if (registry_changed) state_.registry = std::move(*ex.work.registry);
    for (const auto& [sender, next] : ex.work.nonces) state_.nonces[sender] = next;
    drop_included_locked(ex.work.nonces);
    height_ = h;
    head_ = Head{h, block.view, signed_block.digest};
    published_ = std::move(snapshot);
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

ApiResult<SignedBlock> Node::propose_block(std::uint64_t view, const Announce& announce) {
  return propose(view, announce);
}

ApiResult<SignedBlock> Node::propose(std::optional<std::uint64_t> view, const Announce& announce) {
  std::lock_guard produce_lock(produce_mu_);
  Block b;
  std::vector<Pending> candidates;
  {
    std::lock_guard lock(mu_);
    if (view && *view <= head_.view)
      return Err{ApiError{ApiErrorCode::kBadRequest, "view " + std::to_string(*view) + " is not above the head's " +
                                                         std::to_string(head_.view)}};
    b.view = view.value_or(head_.view + 1);
    b.height = height_ + 1;
    b.parent = head_.digest;
    std::size_t n = std::min(mempool_.size(), config_.max_block_txs);
    candidates.assign(mempool_.begin(), mempool_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  b.chain_instance_id = chain_instance_id_;
  b.proposer = validator_index_.value_or(0);
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
  const Block& b = sb.block;
  const Head at = head();
  auto no = [&](BlockRefusal why, const std::string& detail) -> ApiResult<std::uint64_t> {
    return Err{refuse(why, "block " + std::to_string(b.height) + ": " + detail)};
  };
  // Who may propose what, before any work.
  if (validators_.empty()) return no(BlockRefusal::kNoValidatorSet, "no ValidatorSetSnapshot(0)");
  if (b.chain_instance_id != chain_instance_id_) return no(BlockRefusal::kWrongChain, json::hex0x(b.chain_instance_id));
  if (b.epoch != 0) return no(BlockRefusal::kWrongEpoch, "epoch " + std::to_string(b.epoch));
  if (b.height != at.height + 1) return no(BlockRefusal::kNotNext, "the head is " + std::to_string(at.height));
  if (b.parent != at.digest) return no(BlockRefusal::kWrongParent, "parent " + json::hex0x(b.parent));
  if (b.view <= at.view) return no(BlockRefusal::kStaleView, "view " + std::to_string(b.view));
  if (b.proposer != leader_of(b.view, validators_.size()))
    return no(BlockRefusal::kWrongProposer, "proposer " + std::to_string(b.proposer) + " in view " + std::to_string(b.view));
  if (block_digest(b) != sb.digest) return no(BlockRefusal::kBadDigest, "digest " + json::hex0x(sb.digest));
  if (!crypto::ed25519_verify(validators_[b.proposer], sb.digest, sb.signature))
    return no(BlockRefusal::kBadSignature, "proposer " + std::to_string(b.proposer));
  if (!b.seed_evidence.empty()) return no(BlockRefusal::kUnexpectedSeedEvidence, std::to_string(b.seed_evidence.size()) + " bytes");

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
  std::optional<cip11::PresentSet> present;
  if (genesis_.cip11) {
    const auto& params = genesis_.cip11->params;
    ex.registry_size = state_.cip11.index.size();
    if (!params.present_first_enabled && !params.presence_shadow_enabled) {
      if (b.presence) return no(BlockRefusal::kBadPresence, "a PresenceInput field on a chain that reads none (§7.2 rule 1)");
      present.emplace(ex.registry_size);
    } else {
      auto set = cip11::chain::presence_of_block(params, b.presence, ex.registry_size);
      if (!set) return no(BlockRefusal::kBadPresence, std::string(cip11::to_string(set.error())));
      present = std::move(*set);
    }
    if (auto seeds = cip11::chain::decode_consumed_seeds(b.consumed_seeds); !seeds)
      return no(BlockRefusal::kBadConsumedSeeds, std::string(cip11::to_string(seeds.error())));
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

Node::Head Node::head() const {
  std::lock_guard lock(mu_);
  return head_;
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
  Bytes32 hash = tx_hash(tx);
  std::lock_guard lock(mu_);
  // The same signed transaction again (a runner rebroadcasting its result,
  // §10.3) answers with its hash, whether it is pending or already included.
  if (mempool_hashes_.contains(hash)) return hash;
  if (std::string included; db_->Get({}, layout::tx_key(hash), &included).ok()) return hash;
  if (mempool_.size() >= config_.max_mempool_txs)
    return Err{ApiError{ApiErrorCode::kMempoolFull, std::to_string(mempool_.size()) + " transactions pending"}};
  auto it = next_nonce_.find(*sender);
  std::uint64_t expected = it == next_nonce_.end() ? 0 : it->second;
  auto& queued = future_[*sender];
  // A nonce a little ahead waits for the ones before it: transactions sent
  // on different QUIC streams (§10.3 result frames) may arrive out of order.
  if (tx.nonce > expected && tx.nonce - expected <= kMaxNonceGap && !queued.contains(tx.nonce) &&
      future_count_ < config_.max_mempool_txs) {
    queued.emplace(tx.nonce, Pending{tx, *sender, hash});
    ++future_count_;
    mempool_hashes_.insert(hash);
    fresh = true;
    return hash;
  }
  if (tx.nonce != expected) {
    if (queued.empty()) future_.erase(*sender);
    return Err{ApiError{ApiErrorCode::kBadNonce, "sender " + json::hex0x(*sender) + " expects nonce " +
                                                     std::to_string(expected)}};
  }
  mempool_.push_back(Pending{tx, *sender, hash});
  mempool_hashes_.insert(hash);
  // Then every queued successor that is now next, in nonce order.
  std::uint64_t next = expected + 1;
  for (auto q = queued.begin(); q != queued.end() && q->first == next; q = queued.erase(q), ++next) {
    mempool_.push_back(std::move(q->second));
    --future_count_;
  }
  if (queued.empty()) future_.erase(*sender);
  next_nonce_[*sender] = next;
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

ApiResult<cip11::chain::JobRecord> Node::job(const Bytes32& job_id) {
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
