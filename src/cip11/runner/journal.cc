#include "cip11/runner/journal.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "cip11/chain/instructions.h"
#include "common/codec.h"
#include "common/data_dir.h"
#include "common/fields.h"

namespace cowboy::cip11 {
namespace {

constexpr std::uint8_t kEntryVersion = 1;
constexpr std::size_t kMaxTxBytes = 2 * chain::kMaxResultBytes;  // a JobResultSubmit's result and its envelope
constexpr std::string_view kMetaKey = "meta", kNonceKey = "nonce", kTxPrefix = "tx/", kJobPrefix = "job/";
// The state directory holds the journal's RocksDB store, which marks it (docs/operations.md, "Data directories").
constexpr const char* kStoreName = "journal.rocksdb";
const data_dir::Owner kStateDir{"cip11-runner state directory", {kStoreName}};

std::string key(std::string_view prefix, const Bytes32& id) { return std::string(prefix) + std::string(id.begin(), id.end()); }
rocksdb::Slice slice(ByteView b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }
ByteView view(const std::string& s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

// Each entry lists its fields once; common/fields.h writes and reads them back.
struct Wire {
  static constexpr std::uint8_t kVersion = kEntryVersion;
};
COWBOY_FIELDS(RetainedTx) {
  v.version();
  v(x.hash), v(x.nonce);
  v.bytes(x.bytes, kMaxTxBytes);
}
/// A committee has one to kMaxCommittee members.
COWBOY_FIELDS(Obligation) {
  v.version();
  v(x.job_id), v(x.runners);
  v.check([&] { return x.runners != 0 && x.runners <= chain::kMaxCommittee; }, codec::DecodeError::kInvalidValue);
  v.bytes(x.result, chain::kMaxResultBytes);
  v(x.salt), v(x.commit_tx), v(x.reveal_tx);
}

template <typename T>
Result<T, std::string> decode_entry(ByteView bytes, const char* what) {
  auto entry = codec::decode_fields<Wire, T>(bytes);
  if (!entry) return Err{std::string("a journal ") + what + " entry does not decode: " + std::string(codec::to_string(entry.error()))};
  return std::move(*entry);
}

Bytes meta_value(const Bytes32& chain_instance_id, const Address& runner) {
  codec::Writer w;
  w.fixed(chain_instance_id);
  w.fixed(runner);
  return std::move(w).take();
}

Result<std::unique_ptr<rocksdb::DB>, std::string> open_db(const std::filesystem::path& dir, bool create) {
  rocksdb::Options options;
  options.create_if_missing = create;
  rocksdb::DB* raw = nullptr;
  auto status = rocksdb::DB::Open(options, (dir / kStoreName).string(), &raw);
  if (!status.ok()) return Err{"cannot open the runner journal in " + dir.string() + ": " + status.ToString()};
  return std::unique_ptr<rocksdb::DB>(raw);
}

}  // namespace

Bytes encode_retained(const RetainedTx& tx) { return codec::encode_fields<Wire>(tx); }
Result<RetainedTx, std::string> decode_retained(ByteView bytes) { return decode_entry<RetainedTx>(bytes, "transaction"); }
Bytes encode_obligation(const Obligation& o) { return codec::encode_fields<Wire>(o); }
Result<Obligation, std::string> decode_obligation(ByteView bytes) { return decode_entry<Obligation>(bytes, "job"); }

Result<std::unique_ptr<TxJournal>, std::string> TxJournal::open(const std::filesystem::path& dir,
                                                                const Bytes32& chain_instance_id,
                                                                const Address& runner, JournalLimits limits) {
  const Bytes meta = meta_value(chain_instance_id, runner);
  // A new journal is built inside its directory with its owner in its first
  // synced write (data_dir publishes it after that); a foreign directory is refused.
  auto build = [&](const std::filesystem::path& empty) -> Result<Unit, std::string> {
    auto db = open_db(empty, true);
    if (!db) return Err{db.error()};
    rocksdb::WriteOptions sync;
    sync.sync = true;
    auto written = (*db)->Put(sync, kMetaKey, slice(meta));
    if (!written.ok()) return Err{"cannot write the runner journal: " + written.ToString()};
    return Unit{};
  };
  if (auto created = data_dir::create_store(dir, kStateDir, build); !created) return Err{created.error()};
  std::error_code ec;
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);  // it holds signed transactions
  auto db = open_db(dir, false);
  if (!db) return Err{db.error()};
  std::unique_ptr<TxJournal> journal(new TxJournal(std::move(*db), limits));
  std::string stored;
  auto status = journal->db_->Get({}, kMetaKey, &stored);
  if (status.IsNotFound())
    return Err{"refusing " + (dir / kStoreName).string() + ": a RocksDB store without a runner journal's owner"};
  if (!status.ok()) return Err{"cannot read the runner journal: " + status.ToString()};
  if (Bytes(stored.begin(), stored.end()) != meta)
    return Err{"the runner journal in " + dir.string() + " belongs to another chain or runner key"};
  auto contents = journal->load();
  if (!contents) return Err{contents.error()};
  for (const auto& tx : contents->transactions) journal->transactions_.insert(tx.hash);
  for (const auto& o : contents->obligations) journal->obligations_.insert(o.job_id);
  return journal;
}

TxJournal::TxJournal(std::unique_ptr<rocksdb::DB> db, JournalLimits limits) : db_(std::move(db)), limits_(limits) {}
TxJournal::~TxJournal() = default;

Result<TxJournal::Contents, std::string> TxJournal::load() const {
  Contents out;
  std::string nonce;
  if (auto s = db_->Get({}, kNonceKey, &nonce); s.ok()) {
    if (nonce.size() != 8) return Err{std::string("the runner journal's nonce mark is not 8 bytes")};
    out.next_nonce = codec::Reader(view(nonce)).u64();
  }
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator({}));
  for (it->Seek(kJobPrefix); it->Valid() && it->key().starts_with(kJobPrefix); it->Next()) {
    if (out.obligations.size() >= limits_.obligations) return Err{std::string("the runner journal holds too many jobs")};
    auto o = decode_obligation(view(it->value().ToString()));
    if (!o) return Err{o.error()};
    out.obligations.push_back(std::move(*o));
  }
  for (it->Seek(kTxPrefix); it->Valid() && it->key().starts_with(kTxPrefix); it->Next()) {
    if (out.transactions.size() >= limits_.transactions)
      return Err{std::string("the runner journal holds too many transactions")};
    auto tx = decode_retained(view(it->value().ToString()));
    if (!tx) return Err{tx.error()};
    out.transactions.push_back(std::move(*tx));
  }
  if (!it->status().ok()) return Err{"cannot read the runner journal: " + it->status().ToString()};
  return out;
}

bool TxJournal::record(const RetainedTx& tx, std::uint64_t next_nonce, const std::optional<Obligation>& obligation) {
  if (!transactions_.contains(tx.hash) && transactions_.size() >= limits_.transactions) return false;
  if (obligation && !obligations_.contains(obligation->job_id) && obligations_.size() >= limits_.obligations)
    return false;
  rocksdb::WriteBatch batch;
  codec::Writer nonce;
  nonce.u64(next_nonce);
  batch.Put(kNonceKey, slice(nonce.data()));
  batch.Put(key(kTxPrefix, tx.hash), slice(encode_retained(tx)));
  if (obligation) batch.Put(key(kJobPrefix, obligation->job_id.value), slice(encode_obligation(*obligation)));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  if (!db_->Write(sync, &batch).ok()) return false;
  transactions_.insert(tx.hash);
  if (obligation) obligations_.insert(obligation->job_id);
  return true;
}

void TxJournal::forget_transaction(const Bytes32& hash) {
  if (db_->Delete({}, key(kTxPrefix, hash)).ok()) transactions_.erase(hash);
}

void TxJournal::forget_obligation(const JobId& job_id) {
  if (db_->Delete({}, key(kJobPrefix, job_id.value)).ok()) obligations_.erase(job_id);
}

}  // namespace cowboy::cip11
