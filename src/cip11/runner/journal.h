// The runner's durable memory of what it signed (§10.3), so that a runner
// killed between its commitment and its reveal still reveals after a restart
// (a committed-then-silent runner is CIP-2 v3's non-reveal slashing case).
//
// It holds, in one RocksDB store under the runner's state directory:
//   meta            chain_instance_id || runner address: a store belongs to one chain and one key
//   nonce           u64 BE, the next nonce: never below any nonce ever signed
//   tx/<hash>       RetainedTx: a signed transaction, from before it is sent until its receipt
//   job/<job_id>    Obligation: the result and salt a job's commitment (or direct result) binds,
//                   and the hashes of its commit and reveal transactions
//
// Durability contract: record() returns true only once one synced write
// (WriteOptions::sync, a real fsync) holds the transaction, the nonce mark and
// the job's obligation together; the runner sends nothing before that. So a
// restart finds every transaction that may have reached anyone, signs no
// nonce twice, and never signs a second reveal for a job (the obligation
// names the one it signed). Forgetting, after a receipt, is not synced: an
// entry that comes back after a crash is submitted once more, and the chain
// answers it as already included.
//
// Not thread-safe: the runner calls it from one thread, never its io thread.
//
// Bounded (JournalLimits): 8,192 retained transactions and 4,096 jobs; a
// record beyond either is refused (and so never sent), a store holding more
// is refused at load. A runner holds at most
// its registered max_concurrent assignments (§9.1 filter 6), two transactions
// each, far below both.
#pragma once

#include <filesystem>
#include <memory>
#include <set>

#include "cip11/ids.h"
#include "common/bytes.h"
#include "common/result.h"

namespace rocksdb {
class DB;
}

namespace cowboy::cip11 {

struct JournalLimits {
  std::size_t transactions = 8192;
  std::size_t obligations = 4096;
};

struct RetainedTx {
  Bytes32 hash{};
  std::uint64_t nonce = 0;
  Bytes bytes;  // encode_tx: exactly what was (or will be) sent
  bool operator==(const RetainedTx&) const = default;
};

/// What a runner owes a job once it has sent a commitment or a direct result.
struct Obligation {
  JobId job_id{};
  std::uint32_t runners = 1;            // the committee size M
  Bytes result;
  Bytes32 salt{};
  std::optional<Bytes32> commit_tx;     // its JobResultCommit, for M > 1
  std::optional<Bytes32> reveal_tx;     // its JobResultSubmit, once signed: there is never a second
  bool operator==(const Obligation&) const = default;
};

/// The stored forms, one version byte first; decoding is strict and bounded.
Bytes encode_retained(const RetainedTx& tx);
Result<RetainedTx, std::string> decode_retained(ByteView bytes);
Bytes encode_obligation(const Obligation& o);
Result<Obligation, std::string> decode_obligation(ByteView bytes);

class TxJournal {
 public:
  /// Opens (or creates) the store in `dir` for this chain and runner; a store
  /// written for another chain or key is refused. `dir` is a data directory
  /// (common/data_dir.h): a new store is built inside it crash-safely, and a
  /// directory holding other files is refused.
  static Result<std::unique_ptr<TxJournal>, std::string> open(const std::filesystem::path& dir,
                                                              const Bytes32& chain_instance_id,
                                                              const Address& runner, JournalLimits limits = {});
  ~TxJournal();

  struct Contents {
    std::uint64_t next_nonce = 0;
    std::vector<RetainedTx> transactions;
    std::vector<Obligation> obligations;
  };
  /// Everything recorded and not forgotten; an unreadable entry fails the whole load.
  Result<Contents, std::string> load() const;

  /// One synced write: `tx`, the nonce mark after it and, when given, the
  /// job's obligation (replacing its earlier one). False: nothing was recorded.
  bool record(const RetainedTx& tx, std::uint64_t next_nonce, const std::optional<Obligation>& obligation);
  /// A receipt exists for `hash`.
  void forget_transaction(const Bytes32& hash);
  /// The job needs nothing more from this runner (its reveal is included, or it ended).
  void forget_obligation(const JobId& job_id);

 private:
  TxJournal(std::unique_ptr<rocksdb::DB> db, JournalLimits limits);
  std::unique_ptr<rocksdb::DB> db_;
  const JournalLimits limits_;
  std::set<Bytes32> transactions_;  // the keys held, for the bounds
  std::set<JobId> obligations_;
};

}  // namespace cowboy::cip11
