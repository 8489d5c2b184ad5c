#include "transit/node/journal.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "transit/contract/codec.h"

namespace cowboy::transit::node {
namespace {

// Stored records are the contract's canonical JSON; no record comes near this.
constexpr std::size_t kMaxRecordBytes = 256 * 1024;

constexpr std::string_view kGenesisKey = "genesis";
constexpr std::string_view kHeadKey = "head";

void put_be64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}
std::uint64_t get_be64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}
std::string prefix(char table) { return std::string(1, table) + "/"; }
std::string key(char table, std::uint64_t a) {
  std::string k = prefix(table);
  put_be64(k, a);
  return k;
}
std::string key(char table, std::uint64_t a, std::uint64_t b) {
  std::string k = key(table, a);
  put_be64(k, b);
  return k;
}

template <typename T> Result<T, std::string> decode(std::string_view what, std::string_view text) {
  auto value = from_json<T>(text, kMaxRecordBytes);
  if (!value.ok()) return Err{std::string(what) + ": " + value.error().message()};
  return std::move(*value);
}

// Reads every record of one table, stopping at the first that does not decode.
template <typename T, typename Visit>
std::optional<std::string> scan(rocksdb::DB& db, char table, Visit visit) {
  const std::string start = prefix(table);
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
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

}  // namespace

Journal::Batch::Batch() : writes(std::make_unique<rocksdb::WriteBatch>()) {}
Journal::Batch::~Batch() = default;

Journal::Journal(std::unique_ptr<rocksdb::DB> db, Genesis genesis)
    : db_(std::move(db)), staged_(std::make_unique<rocksdb::WriteBatch>()), genesis_(std::move(genesis)) {}

Journal::~Journal() = default;

Result<std::unique_ptr<Journal>, std::string> Journal::open(const std::filesystem::path& dir,
                                                             const std::optional<Genesis>& genesis) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, dir.string(), &raw);
  if (!status.ok()) return Err{"cannot open journal " + dir.string() + ": " + status.ToString()};
  std::unique_ptr<rocksdb::DB> db(raw);

  std::string stored;
  status = db->Get(rocksdb::ReadOptions(), kGenesisKey, &stored);
  if (status.IsNotFound()) {
    if (!genesis) return Err{"journal " + dir.string() + " is empty and no genesis was given"};
    Genesis g = *genesis;
    g.definition.value = definition();
    const Authority fresh(g);  // position 0, published with the genesis in one synced write
    auto journal = std::unique_ptr<Journal>(new Journal(std::move(db), g));
    rocksdb::WriteBatch init;
    init.Put(kGenesisKey, to_json(g));
    init.Put(kHeadKey, to_json(fresh.head()));
    const auto& root = *fresh.principal(g.root_principal);
    init.Put(key('p', root.principal), to_json(root));
    init.Put(key('r', root.role), to_json(*fresh.role(root.role)));
    init.Put(key('g', 1), to_json(*fresh.grant(1)));
    init.Put(key('c', root.principal, root.role), "");
    if (!journal->write_synced(init)) return Err{"cannot write the genesis to " + dir.string()};
    return journal;
  }
  if (!status.ok()) return Err{"cannot read journal " + dir.string() + ": " + status.ToString()};
  auto stored_genesis = decode<Genesis>("stored genesis", stored);
  if (!stored_genesis.ok()) return Err{stored_genesis.error()};
  if (genesis) {
    Genesis given = *genesis;
    given.definition.value = definition();
    if (!(given == *stored_genesis)) return Err{"journal " + dir.string() + " belongs to another genesis"};
  }
  return std::unique_ptr<Journal>(new Journal(std::move(db), std::move(*stored_genesis)));
}

Result<Authority, std::string> Journal::load() const {
  std::string text;
  if (!db_->Get(rocksdb::ReadOptions(), kHeadKey, &text).ok()) return Err{std::string("journal has no head")};
  auto head = decode<Head>("head", text);  // a foreign definition stops here, before any catalog
  if (!head.ok()) return Err{head.error()};
  std::map<Id, PrincipalRecord> principals;
  std::map<Id, RoleRecord> roles;
  std::map<Id, GrantRecord> grants;
  std::set<std::pair<Id, Id>> credentials;
  std::optional<std::string> error;
  if (!error) error = scan<PrincipalRecord>(*db_, 'p', [&](PrincipalRecord r) { principals[r.principal] = r; });
  if (!error) error = scan<RoleRecord>(*db_, 'r', [&](RoleRecord r) { roles[r.role] = r; });
  if (!error) error = scan<GrantRecord>(*db_, 'g', [&](GrantRecord r) { grants[r.grant] = r; });
  if (!error)
    error = scan<void>(*db_, 'c', [&](std::string_view k) { credentials.insert({get_be64(k), get_be64(k.substr(8))}); });
  if (error) return Err{"journal: " + *error};
  return Authority(genesis_, std::move(*head), std::move(principals), std::move(roles), std::move(grants),
                   std::move(credentials));
}

void Journal::stage(const Authority& authority, const Touched& touched, const JournalEntry& entry) {
  const Receipt& receipt = entry.receipt;
  staged_->Put(key('j', receipt.position), to_json(entry));
  std::string position;
  put_be64(position, receipt.position);
  staged_->Put(key('s', receipt.principal, receipt.sequence), position);
  for (Id id : touched.principals) staged_->Put(key('p', id), to_json(*authority.principal(id)));
  for (Id id : touched.roles) staged_->Put(key('r', id), to_json(*authority.role(id)));
  for (Id id : touched.grants_written)
    if (const auto* g = authority.grant(id)) staged_->Put(key('g', id), to_json(*g));
  for (Id id : touched.grants_removed) staged_->Delete(key('g', id));
  for (const auto& [p, r] : touched.credentials_added) staged_->Put(key('c', p, r), "");
  for (const auto& [p, r] : touched.credentials_removed) staged_->Delete(key('c', p, r));
}

std::unique_ptr<Journal::Batch> Journal::take_staged(const Head& head) {
  if (staged_->Count() == 0) return nullptr;
  staged_->Put(kHeadKey, to_json(head));  // once per group: the head after its last decision
  auto batch = std::make_unique<Batch>();
  std::swap(batch->writes, staged_);
  return batch;
}

bool Journal::commit(Batch& batch) { return write_synced(*batch.writes); }

bool Journal::write_synced(rocksdb::WriteBatch& batch) {
  if (failed_) return false;
  rocksdb::WriteOptions options;
  options.sync = true;
  const bool ok = db_->Write(options, &batch).ok();
  if (!ok) failed_ = true;
  else ++synced_writes_;
  return ok;
}

std::optional<JournalEntry> Journal::entry(Id position) const {
  std::string text;
  if (!db_->Get(rocksdb::ReadOptions(), key('j', position), &text).ok()) return std::nullopt;
  auto e = decode<JournalEntry>("journal entry", text);
  if (!e.ok()) return std::nullopt;
  return std::move(*e);
}

std::optional<Receipt> Journal::receipt(Id principal, Id sequence) const {
  std::string position;
  if (!db_->Get(rocksdb::ReadOptions(), key('s', principal, sequence), &position).ok() || position.size() != 8)
    return std::nullopt;
  auto e = entry(get_be64(position));
  if (!e) return std::nullopt;
  return std::move(e->receipt);
}

}  // namespace cowboy::transit::node
