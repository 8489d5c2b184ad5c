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

// Reads the newest version of every record of one table (the published
// state; a removed record's newest version is kRemoved), stopping at the
// first that does not decode: the journal then does not open (fails closed).
// One seek per record skips its older versions. The ended index, the one
// table of rows changed in place, is read row by row.
template <typename T, typename Visit>
std::optional<std::string> scan(rocksdb::DB& db, char table, Visit visit) {
  const auto& t = *layout::table_of(table);
  const std::string start = layout::table(table);
  std::string what;
  if constexpr (std::is_void_v<T>) what = t.name;
  else what = T::kName;
  rocksdb::ReadOptions in_order;
  in_order.total_order_seek = true;  // a table scan, across prefixes
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(in_order));
  for (it->Seek(start); it->Valid() && it->key().starts_with(start);) {
    const std::string_view stored = it->key().ToStringView();
    if (t.record_key == 0) {
      if constexpr (std::is_void_v<T>) visit(stored.substr(start.size()));
      it->Next();
      continue;
    }
    if (stored.size() != t.record_key + 8) return what + ": a stored key of another shape";
    const std::string record(stored.substr(0, t.record_key));
    if (it->value() != layout::kRemoved) {
      if constexpr (std::is_void_v<T>) {
        if (it->value() != layout::kPresent) return what + ": a stored row of another shape";
        visit(std::string_view(record).substr(start.size()));
      } else {
        auto decoded = decode<T>(T::kName, it->value().ToStringView());
        if (!decoded.ok()) return decoded.error();
        visit(std::move(*decoded));
      }
    }
    const std::string oldest = layout::version(record, Position{0});
    it->Seek(oldest);
    if (it->Valid() && it->key() == oldest) it->Next();
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

// One table of the published state into `p` (Journal::load walks the registry).
std::optional<std::string> load_table(rocksdb::DB& db, char table, Authority::Published& p) {
  using namespace layout;
  switch (table) {
    case kPrincipals: return scan<PrincipalRecord>(db, table, [&](PrincipalRecord r) { p.principals[r.principal] = r; });
    case kRoles: return scan<RoleRecord>(db, table, [&](RoleRecord r) { p.roles[r.role] = r; });
    case kGrants: return scan<GrantRecord>(db, table, [&](GrantRecord r) { p.grants[r.grant] = r; });
    case kCredentials:
      return scan<void>(db, table, [&](std::string_view k) { p.credentials.insert({PrincipalId{get_be64(k)}, get_be64(k.substr(8))}); });
    case kEnded: return scan<void>(db, table, [&](std::string_view k) { p.may_have_ended.insert(Pid{get_be64(k)}); });
    case kNeeds: {  // decision 183: leaf record key -> need, 8 bytes
      rocksdb::ReadOptions in_order;
      in_order.total_order_seek = true;
      const std::string start = layout::table(table);
      std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(in_order));
      for (it->Seek(start); it->Valid() && it->key().starts_with(start); it->Next()) {
        if (it->value().size() != 8) return std::string("compaction needs: a stored row of another shape");
        if (const Id need = get_be64(it->value().ToStringView()))
          p.needs[std::string(it->key().ToStringView().substr(start.size()))] = need;
      }
      if (!it->status().ok()) return it->status().ToString();
      return std::nullopt;
    }
    default: return "table " + std::string(table_of(table)->name) + " has no loader";
  }
}

// One table's share of a decision's records (Journal::stage walks the
// registry; the realm's creation stages its genesis records the same way).
// Every record is a new version at `position` (decisions 130, 161); a
// removal (collection's, decisions 110-117, 186-187; a revoked grant) is a kRemoved version, after the
// table's writes. Only the ended index, block bodies and the stored indexes'
// rows change in place. False for a table it has no case for: the realm's
// creation, which stages every table, refuses then.
bool stage_table(rocksdb::WriteBatchBase& w, const layout::Table& registered, const Authority& a, const Touched& t,
                 Position position) {
  using namespace layout;
  const char table = registered.prefix;
  if (registered.staging == Staging::kRows) {  // the stored indexes (decisions 170, 175, 180, 190)
    for (const auto& [row, present] : t.rows) {
      if (row.empty() || row[0] != table) continue;
      if (present) w.Put(row, "");
      else w.Delete(row);
    }
    return true;
  }
  const auto put = [&](std::string record, std::string_view value) { w.Put(version(std::move(record), position), value); };
  // A table keyed by one id: a version of each record written, then a removal of each removed.
  const auto by_id = [&](const auto& written, const auto& record_of, const auto& removed) {
    for (const auto id : written)
      if (const auto* r = record_of(id)) put(key(table, id), to_json(*r));
    for (const auto id : removed) put(key(table, id), kRemoved);
    return true;
  };
  const std::vector<Id> none;
  switch (table) {
    case kJournal:
    case kSequences: return true;  // the decision's own entry: written by stage()
    case kPrincipals: return by_id(t.principals, [&](PrincipalId id) { return a.principal(id); }, none);
    case kRoles: return by_id(t.roles, [&](Id id) { return a.role(id); }, none);
    case kGrants: return by_id(t.grants_written, [&](Id id) { return a.grant(id); }, t.grants_removed);
    case kCredentials:
      for (const auto& [p, r] : t.credentials_added) put(key(table, p, r), kPresent);
      for (const auto& [p, r] : t.credentials_removed) put(key(table, p, r), kRemoved);
      return true;
    case kResources: return by_id(t.resources, [&](ResourceId id) { return a.resource(id); }, none);
    case kProcesses:  // a new version at this position, beside the earlier ones (decision 130)
      for (Pid id : t.processes) w.Put(process_version(id, position), to_json(*a.process(id)));
      return true;
    case kEnded:
      for (const auto& [pid, candidate] : t.ended) {
        if (candidate) w.Put(key(table, pid), "");
        else w.Delete(key(table, pid));
      }
      return true;
    case kAssociations:
      for (const auto& [pid, revision] : t.associations)
        put(key(table, pid, revision), to_json(*a.association(pid, revision)));
      for (const auto& [pid, revision] : t.associations_removed) put(key(table, pid, revision), kRemoved);
      return true;
    case kViews: return by_id(t.views, [&](Id id) { return a.view(id); }, t.views_removed);
    case kOutputs: return by_id(t.outputs, [&](Id id) { return a.output(id); }, t.outputs_removed);
    case kEffects: return by_id(t.effects, [&](Id id) { return a.effect(id); }, t.effects_removed);
    case kPayloads: return by_id(t.payloads, [&](Id id) { return a.payload(id); }, t.payloads_removed);
    case kRuntime: return by_id(t.runtime, [&](Pid pid) { return a.runtime(pid); }, none);
    case kEntries:
      for (const auto& e : t.entries) w.Put(entry(e.resource, e.key, e.revision), entry_value(e.value));
      return true;
    case kInputs:
      for (const auto& [pid, input] : t.inputs) put(key(table, pid, input.input), to_json(input));
      for (const auto& [pid, input] : t.inputs_removed) put(key(table, pid, input), kRemoved);
      return true;
    case kBlocks:
      for (const auto& b : t.blocks) {
        std::string value;  // raw: blocks are outside the journal's JSON records
        put_be64(value, b.revision.value);
        value.append(reinterpret_cast<const char*>(b.body->data()), b.body->size());
        w.Put(block(b.resource, b.name), value);
      }
      for (const auto& [resource, name] : t.blocks_deleted) w.Delete(block(resource, name));
      return true;
    case kBlockRecords:
      for (const auto& r : t.block_records) put(block_record(r.resource, r.name), to_json(r));
      return true;
    case kCompactions:  // the ledger record of a storage_compact, written once (decision 144)
      if (t.compaction) w.Put(compaction(t.compaction->cursor), to_json(*t.compaction));
      return true;
    case kRelocated: return true;  // the relocator's, after the group is durable (decision 145)
    case kNeeds:  // decision 183: each changed need, in place
      for (const auto& [leaf, value] : t.needs) {
        if (!value) {
          w.Delete(need(leaf));
          continue;
        }
        std::string stored;
        put_be64(stored, *value);
        w.Put(need(leaf), stored);
      }
      return true;
    default: return false;
  }
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
  // Position 0's records, staged as a decision's are.
  const auto& root = *fresh.principal(g.root_principal);
  Touched genesis_records;
  genesis_records.principals = {root.principal};
  genesis_records.roles = {root.role};
  genesis_records.grants_written = {1};
  genesis_records.credentials_added = {{root.principal, root.role}};
  for (const auto& table : layout::kTables)
    if (!stage_table(init, table, fresh, genesis_records, Position{0}))
      return Err{"table " + std::string(table.name) + " has no staging"};
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (!(*db)->Write(synced, &init).ok()) return Err{"cannot write the genesis to " + dir.string()};
  return Unit{};
}

// A fresh reader of everything decided so far: published, being committed, staged.
Catalog reader(rocksdb::DB& db, rocksdb::WriteBatchWithIndex* staged, const std::shared_ptr<Journal::Batch>& in_flight) {
  return Catalog(db, staged, in_flight ? in_flight->writes.get() : nullptr);
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
  for (const auto& table : layout::kTables) {
    if (!table.read_at_start) continue;  // everything but the policy and the ended index: read from disk when needed
    if (auto error = load_table(*db_, table.prefix, p)) return Err{"journal: " + *error};
  }
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
  if (touched.trim_below) staged_trim_ = std::max(staged_trim_.value_or(Position{0}), *touched.trim_below);
  for (const auto& table : layout::kTables) stage_table(w, table, authority, touched, receipt.position);
  // The ledger record went with the walk; its leaf moves once this group is durable (decision 145).
  if (touched.compaction) staged_relocation_ = touched.compaction->cursor;
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

Catalog Journal::catalog() { return reader(*db_, staged_.get(), in_flight_); }

// A fresh reader each time: it sees everything staged so far.
Result<std::optional<ProcessRecord>, CorruptRecord> Journal::process(Pid pid, Position position) const {
  return reader(*db_, staged_.get(), in_flight_).process(pid, position);
}

std::optional<CorruptRecord> Journal::processes(Pid after, Position position,
                                                const std::function<bool(const ProcessRecord&)>& visit) const {
  return reader(*db_, staged_.get(), in_flight_).processes(after, position, visit);
}

std::optional<std::string> Journal::record(const std::string& record_key, Position position) const {
  ++records_read_;
  return reader(*db_, staged_.get(), in_flight_).version_at(record_key, position);
}

void Journal::records(char table, Id after, Position position, const std::function<bool(Id, std::string_view)>& visit) const {
  reader(*db_, staged_.get(), in_flight_).records(table, after, position, visit);
}

void Journal::rows(const std::string& prefix, const std::string& after,
                   const std::function<bool(std::string_view)>& visit) const {
  reader(*db_, staged_.get(), in_flight_).rows(prefix, after, visit);
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

std::optional<Receipt> Journal::receipt(PrincipalId principal, Id sequence) const {
  std::string text;
  if (!db_->Get(rocksdb::ReadOptions(), key(layout::kSequences, principal, sequence), &text).ok()) return std::nullopt;
  auto r = decode<Receipt>("receipt", text);
  if (!r.ok()) return std::nullopt;
  return std::move(*r);
}

void Journal::reclaim(Position floor) {
  if (floor.value <= 1) return;  // nothing lies below position 1
  std::lock_guard lock(reclaim_mutex_);
  if (floor.value <= reclaim_target_ || reclaim_stop_) return;
  reclaim_target_ = floor.value;
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
    const auto [first, end] = layout::journal_below(Position{target});
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
