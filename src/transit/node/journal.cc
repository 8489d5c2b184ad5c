#include "transit/node/journal.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include "common/data_dir.h"
#include "common/log.h"
#include "transit/contract/codec.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

// Stored records are the contract's canonical JSON; no record comes near this.
constexpr std::size_t kMaxRecordBytes = 256 * 1024;

using layout::get_be64;
using layout::key;

std::unique_ptr<rocksdb::WriteBatchWithIndex> new_batch() {
  // overwrite_key: a record decided twice in one group reads as its last version.
  return std::make_unique<rocksdb::WriteBatchWithIndex>(rocksdb::BytewiseComparator(), 0, true);
}

template <typename T> Result<T, std::string> decode(std::string_view what, std::string_view text) {
  auto value = from_json<T>(text, kMaxRecordBytes);
  if (!value.ok()) return Err{std::string(what) + ": " + value.error().message()};
  return std::move(*value);
}

// Reads every record of one table, stopping at the first that does not decode.
template <typename T, typename Visit>
std::optional<std::string> scan(rocksdb::DB& db, char table, Visit visit) {
  const std::string start = layout::table(table);
  rocksdb::ReadOptions in_order;
  in_order.total_order_seek = true;  // a table scan, across prefixes
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(in_order));
  for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
    if constexpr (std::is_void_v<T>) {
      visit(it->key().ToStringView().substr(start.size()));
    } else {
      auto record = decode<T>(T::kName, it->value().ToStringView());
      if (!record.ok()) return record.error();
      visit(std::move(*record));
    }
  }
  if (!it->status().ok()) return it->status().ToString();
  return std::nullopt;
}

// The journal's directory holds RocksDB's files; its CURRENT marks it.
const data_dir::Owner kJournalDir{"Transit journal", {"CURRENT"}};

Result<std::unique_ptr<rocksdb::DB>, std::string> open_db(const std::filesystem::path& dir, bool create,
                                                           rocksdb::Env* env) {
  rocksdb::Options options;
  options.create_if_missing = create;
  if (env) options.env = env;
  configure_entry_filters(options);
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, dir.string(), &raw);
  if (!status.ok()) return Err{"cannot open journal " + dir.string() + ": " + status.ToString()};
  return std::unique_ptr<rocksdb::DB>(raw);
}

// A new realm in the empty directory `dir`: position 0, published with the
// genesis in one synced write (data_dir publishes the journal after it).
Result<Unit, std::string> create_realm(const std::filesystem::path& dir, const std::optional<Genesis>& genesis,
                                       rocksdb::Env* env) {
  if (!genesis) return Err{"journal " + dir.string() + " is empty and no genesis was given"};
  Genesis g = *genesis;
  g.definition.value = definition();
  const Authority fresh(g);
  auto db = open_db(dir, true, env);
  if (!db.ok()) return Err{db.error()};
  rocksdb::WriteBatch init;
  init.Put(layout::kGenesis, to_json(g));
  init.Put(layout::kFormat, layout::kFormatVersion);
  init.Put(layout::kHead, to_json(fresh.head()));
  const auto& root = *fresh.principal(g.root_principal);
  init.Put(key(layout::kPrincipals, root.principal), to_json(root));
  init.Put(key(layout::kRoles, root.role), to_json(*fresh.role(root.role)));
  init.Put(key(layout::kGrants, 1), to_json(*fresh.grant(1)));
  init.Put(key(layout::kCredentials, root.principal, root.role), "");
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (!(*db)->Write(synced, &init).ok()) return Err{"cannot write the genesis to " + dir.string()};
  return Unit{};
}

}  // namespace

Journal::Batch::Batch() : writes(new_batch()) {}
Journal::Batch::~Batch() = default;

Journal::Journal(std::unique_ptr<rocksdb::DB> db, Genesis genesis)
    : db_(std::move(db)), staged_(new_batch()), genesis_(std::move(genesis)),
      relocator_(std::make_unique<Relocator>(*db_)) {}

Journal::~Journal() {
  relocator_.reset();
  {
    std::lock_guard lock(reclaim_mutex_);
    reclaim_stop_ = true;
  }
  reclaim_wake_.notify_all();
  if (reclaimer_.joinable()) {
    db_->DisableManualCompaction();  // a compaction under way returns early; its deletions are durable
    reclaimer_.join();
  }
}

Result<std::unique_ptr<Journal>, std::string> Journal::open(const std::filesystem::path& dir,
                                                             const std::optional<Genesis>& genesis, rocksdb::Env* env) {
  auto created = data_dir::create_store(dir, kJournalDir, [&](const std::filesystem::path& empty) {
    return create_realm(empty, genesis, env);
  });
  if (!created) return Err{created.error()};
  auto db = open_db(dir, false, env);
  if (!db.ok()) return Err{db.error()};
  std::string stored;
  auto status = (*db)->Get(rocksdb::ReadOptions(), layout::kGenesis, &stored);
  if (status.IsNotFound()) return Err{"refusing " + dir.string() + ": a RocksDB store without a Transit genesis, not a journal"};
  if (!status.ok()) return Err{"cannot read journal " + dir.string() + ": " + status.ToString()};
  auto stored_genesis = decode<Genesis>("stored genesis", stored);
  if (!stored_genesis.ok()) return Err{stored_genesis.error()};
  std::string format;
  if (!(*db)->Get(rocksdb::ReadOptions(), layout::kFormat, &format).ok() || format != layout::kFormatVersion)
    return Err{"refusing " + dir.string() + ": a journal of another storage format (" +
               (format.empty() ? std::string("none recorded") : format) + "; this build reads " +
               std::string(layout::kFormatVersion) + ")"};
  if (genesis) {
    Genesis given = *genesis;
    given.definition.value = definition();
    if (!(given == *stored_genesis)) return Err{"journal " + dir.string() + " belongs to another genesis"};
  }
  return std::unique_ptr<Journal>(new Journal(std::move(*db), std::move(*stored_genesis)));
}

Result<Authority, std::string> Journal::load() const {
  std::string text;
  if (!db_->Get(rocksdb::ReadOptions(), layout::kHead, &text).ok()) return Err{std::string("journal has no head")};
  auto head = decode<Head>("head", text);  // a foreign definition stops here, before any catalog
  if (!head.ok()) return Err{head.error()};
  if (head->location_definition != location_definition())  // decision 140: no implied one
    return Err{std::string("journal: a head of another location definition")};
  Authority::Published p;
  p.head = std::move(*head);
  std::optional<std::string> error;
  using namespace layout;
  if (!error) error = scan<PrincipalRecord>(*db_, kPrincipals, [&](PrincipalRecord r) { p.principals[r.principal] = r; });
  if (!error) error = scan<RoleRecord>(*db_, kRoles, [&](RoleRecord r) { p.roles[r.role] = r; });
  if (!error) error = scan<GrantRecord>(*db_, kGrants, [&](GrantRecord r) { p.grants[r.grant] = r; });
  if (!error)
    error = scan<void>(*db_, kCredentials, [&](std::string_view k) { p.credentials.insert({get_be64(k), get_be64(k.substr(8))}); });
  if (!error) error = scan<ResourceRecord>(*db_, kResources, [&](ResourceRecord r) { p.resources[r.info.resource] = r; });
  // Processes are not loaded: the authority reads them through process() (decision 130).
  if (!error) error = scan<void>(*db_, kEnded, [&](std::string_view k) { p.may_have_ended.insert(get_be64(k)); });
  if (!error) error = scan<Association>(*db_, kAssociations, [&](Association a) { p.associations.push_back(a); });
  if (!error) error = scan<ViewRecord>(*db_, kViews, [&](ViewRecord r) { p.views[r.view] = r; });
  if (!error) error = scan<OutputRecord>(*db_, kOutputs, [&](OutputRecord r) { p.outputs[r.output] = r; });
  if (!error) error = scan<EffectRecord>(*db_, kEffects, [&](EffectRecord r) { p.effects[r.info.effect] = r; });
  if (!error) error = scan<PayloadRecord>(*db_, kPayloads, [&](PayloadRecord r) { p.payloads[r.info.payload] = r; });
  if (!error) error = scan<RuntimeRecord>(*db_, kRuntime, [&](RuntimeRecord r) { p.runtime[r.info.pid] = r; });
  if (error) return Err{"journal: " + *error};
  Authority authority(genesis_, std::move(p));
  authority.read_records_from(this);  // its processes are read from here: the journal must outlive it
  return authority;
}

void Journal::stage(const Authority& authority, const Touched& touched, std::string_view envelope,
                    const Receipt& receipt) {
  using namespace layout;
  auto& w = *staged_;
  // The journal entry (the signed request as received, canonical, and the
  // receipt under the principal's sequence), the state roots (entry versions
  // at the new revisions), mailbox progress, outputs and views: one
  // decision's records, published together by the group's one write.
  w.Put(key(kJournal, receipt.position), envelope);
  w.Put(key(kSequences, receipt.principal, receipt.sequence), to_json(receipt));
  if (touched.trim_below) staged_trim_ = std::max(staged_trim_.value_or(0), *touched.trim_below);
  for (Id id : touched.principals) w.Put(key(kPrincipals, id), to_json(*authority.principal(id)));
  for (Id id : touched.roles) w.Put(key(kRoles, id), to_json(*authority.role(id)));
  for (Id id : touched.grants_written)
    if (const auto* g = authority.grant(id)) w.Put(key(kGrants, id), to_json(*g));
  for (Id id : touched.grants_removed) w.Delete(key(kGrants, id));
  for (const auto& [p, r] : touched.credentials_added) w.Put(key(kCredentials, p, r), "");
  for (const auto& [p, r] : touched.credentials_removed) w.Delete(key(kCredentials, p, r));
  for (Id id : touched.resources) w.Put(key(kResources, id), to_json(*authority.resource(id)));
  // A new version at this position, beside the earlier ones (decision 130).
  for (Id id : touched.processes) w.Put(process_version(id, receipt.position), to_json(*authority.process(id)));
  for (const auto& [pid, candidate] : touched.ended) {
    if (candidate) w.Put(key(kEnded, pid), "");
    else w.Delete(key(kEnded, pid));
  }
  for (const auto& [pid, revision] : touched.associations)
    w.Put(key(kAssociations, pid, revision), to_json(*authority.association(pid, revision)));
  for (Id id : touched.views) w.Put(key(kViews, id), to_json(*authority.view(id)));
  for (Id id : touched.outputs) w.Put(key(kOutputs, id), to_json(*authority.output(id)));
  for (Id id : touched.effects) w.Put(key(kEffects, id), to_json(*authority.effect(id)));
  for (Id id : touched.payloads) w.Put(key(kPayloads, id), to_json(*authority.payload(id)));
  for (Id pid : touched.runtime) w.Put(key(kRuntime, pid), to_json(*authority.runtime(pid)));
  for (const auto& e : touched.entries)
    w.Put(layout::entry(e.resource, e.key, e.revision), layout::entry_value(e.value));
  for (const auto& [pid, input] : touched.inputs) w.Put(key(kInputs, pid, input.input), to_json(input));
  // Collection's removals (decisions 110-119); journal entries, receipts, entry versions and blocks are never among them.
  for (Id id : touched.views_removed) w.Delete(key(kViews, id));
  for (Id id : touched.outputs_removed) w.Delete(key(kOutputs, id));
  for (Id id : touched.effects_removed) w.Delete(key(kEffects, id));
  for (Id id : touched.payloads_removed) w.Delete(key(kPayloads, id));
  for (const auto& [pid, revision] : touched.associations_removed) w.Delete(key(kAssociations, pid, revision));
  for (const auto& [pid, input] : touched.inputs_removed) w.Delete(key(kInputs, pid, input));
  for (const auto& b : touched.blocks) {
    std::string value;  // raw: blocks are outside the journal's JSON records
    put_be64(value, b.revision);
    value.append(reinterpret_cast<const char*>(b.body->data()), b.body->size());
    w.Put(layout::block(b.resource, b.name), value);
  }
  for (const auto& r : touched.block_records) w.Put(layout::block_record(r.resource, r.name), to_json(r));
  for (const auto& [resource, name] : touched.blocks_deleted) w.Delete(layout::block(resource, name));
  if (touched.compaction) {  // the ledger record; its leaf moves once this group is durable (decision 144)
    w.Put(key(kCompactions, touched.compaction->cursor), to_json(*touched.compaction));
    staged_relocation_ = touched.compaction->cursor;
  }
}

std::shared_ptr<Journal::Batch> Journal::take_staged(const Head& head) {
  if (staged_->GetWriteBatch()->Count() == 0) return nullptr;
  staged_->Put(layout::kHead, to_json(head));  // once per group: the head after its last decision
  auto batch = std::make_shared<Batch>();
  std::swap(batch->writes, staged_);
  batch->trim_below = std::exchange(staged_trim_, std::nullopt);
  batch->relocate_through = std::exchange(staged_relocation_, std::nullopt);
  in_flight_ = batch;
  return batch;
}

Catalog Journal::catalog() { return Catalog(*db_, staged_.get(), in_flight_ ? in_flight_->writes.get() : nullptr); }

// A fresh reader each time: it sees everything staged so far.
std::optional<ProcessRecord> Journal::process(Id pid, Id position) const {
  return Catalog(*db_, staged_.get(), in_flight_ ? in_flight_->writes.get() : nullptr).process(pid, position);
}

void Journal::processes(Id after, Id position, const std::function<bool(const ProcessRecord&)>& visit) const {
  Catalog(*db_, staged_.get(), in_flight_ ? in_flight_->writes.get() : nullptr).processes(after, position, visit);
}

bool Journal::commit(Batch& batch) {
  if (!batch.trim_below) {
    if (!write_synced(*batch.writes->GetWriteBatch())) return false;
    if (batch.relocate_through) relocate(*batch.relocate_through);
    return true;
  }
  // The floor and the deletion below it in one synced write: either both or
  // neither. (A WriteBatchWithIndex takes no range deletion, and the staging
  // thread may still read this batch: the deletion goes on a copy.)
  rocksdb::WriteBatch with_trim(*batch.writes->GetWriteBatch());
  const auto [first, end] = layout::journal_below(*batch.trim_below);
  if (!with_trim.DeleteRange(first, end).ok()) {
    failed_ = true;
    return false;
  }
  if (!write_synced(with_trim)) return false;
  reclaim(*batch.trim_below);
  if (batch.relocate_through) relocate(*batch.relocate_through);
  return true;
}

bool Journal::write_synced(rocksdb::WriteBatch& batch) {
  if (failed_) return false;
  rocksdb::WriteOptions options;
  options.sync = true;
  const bool ok = db_->Write(options, &batch).ok();
  if (!ok) failed_ = true;
  else ++synced_writes_;
  return ok;
}

std::optional<Receipt> Journal::receipt(Id principal, Id sequence) const {
  std::string text;
  if (!db_->Get(rocksdb::ReadOptions(), key(layout::kSequences, principal, sequence), &text).ok()) return std::nullopt;
  auto r = decode<Receipt>("receipt", text);
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
}

void Journal::reclaim(Id floor) {
  if (floor <= 1) return;  // nothing lies below position 1
  std::lock_guard lock(reclaim_mutex_);
  if (floor <= reclaim_target_ || reclaim_stop_) return;
  reclaim_target_ = floor;
  if (!reclaimer_.joinable()) reclaimer_ = std::thread([this] { reclaim_loop(); });
  reclaim_wake_.notify_one();
}

void Journal::reclaim_loop() {
  Id attempted = 0;
  for (;;) {
    Id target = 0;
    {
      std::unique_lock lock(reclaim_mutex_);
      reclaim_wake_.wait(lock, [&] { return reclaim_stop_ || reclaim_target_ > attempted; });
      if (reclaim_stop_) return;
      target = attempted = reclaim_target_;
    }
    // Compacting the range drops the deleted requests (and the range
    // tombstone) from every file that held them; the rest of those files is
    // rewritten as it was.
    const auto [first, end] = layout::journal_below(target);
    const rocksdb::Slice from(first), to(end);
    rocksdb::CompactRangeOptions options;
    options.exclusive_manual_compaction = false;  // background compactions go on beside it
    options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
    const auto status = db_->CompactRange(options, &from, &to);
    if (status.ok()) reclaimed_below_ = target;
    else log::warn("transit_reclaim_failed", log::field("floor", target), log::field("status", status.ToString()));
  }
}

}  // namespace cowboy::transit::node
