#include "devchain/cip11_store.h"

#include <memory>
#include <set>

#include "cip11/chain/codec.h"
#include "devchain/json.h"
#include "devchain/layout.h"

namespace cowboy::devchain::cip11_store {

namespace chain = cip11::chain;
using layout::as_sv;
using layout::key;

namespace {

constexpr std::string_view kRunner = "c11/runner/";
constexpr std::string_view kIndex = "c11/index/";
constexpr std::string_view kJob = "c11/job/";
constexpr std::string_view kMru = "c11/mru/";
constexpr std::string_view kPresence = "c11/presence/";
constexpr std::string_view kJobsSubmitted = "c11/jobs_submitted";
constexpr std::string_view kAssigned = "c11/assigned/";

std::string mru_key(const std::pair<Address, cip11::JobKind>& k) {
  const std::array<std::uint8_t, 1> kind{static_cast<std::uint8_t>(k.second)};
  return key(kMru, k.first, kind);
}
std::string index_key(std::uint32_t i) { return std::string(kIndex) + layout::be32(i); }

/// The runners a job's record lists in the poll view.
std::set<Address> assigned_runners(const chain::JobRecord* job) {
  std::set<Address> out;
  if (job && job->state == chain::JobState::kAssigned)
    for (const auto& a : job->committee) out.insert(a.runner);
  return out;
}

ApiError internal(std::string message) { return ApiError{ApiErrorCode::kInternal, std::move(message)}; }

/// Calls f(key suffix, value) for each key under `prefix`, in key order; stops at the first error f returns.
template <typename F>
std::optional<std::string> scan(rocksdb::DB& db, const rocksdb::ReadOptions& at, std::string_view prefix, F f) {
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(at));
  for (it->Seek(std::string(prefix)); it->Valid() && it->key().starts_with(std::string(prefix)); it->Next())
    if (auto error = f(it->key().ToStringView().substr(prefix.size()), it->value().ToStringView())) return error;
  if (!it->status().ok()) return it->status().ToString();
  return std::nullopt;
}

/// The N bytes `s` holds, or nullopt for another length.
template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> fixed_of(std::string_view s) {
  if (s.size() != N) return std::nullopt;
  std::array<std::uint8_t, N> out;
  std::copy(s.begin(), s.end(), out.begin());
  return out;
}

/// The records the keys under `prefix` name - by their suffix, or by their
/// value (`by_value`) - each read with `one`, in key order.
template <typename Record, std::size_t N, typename One>
ApiResult<std::vector<Record>> read_named(rocksdb::DB& db, const rocksdb::ReadOptions& at, const std::string& prefix,
                                          bool by_value, One one) {
  std::vector<Record> out;
  auto error = scan(db, at, prefix, [&](std::string_view suffix, std::string_view value) -> std::optional<std::string> {
    auto name = fixed_of<N>(by_value ? value : suffix);
    if (!name) return "a stored CIP-11 key is unreadable";
    auto record = one(db, at, *name);
    if (!record) return record.error().message;
    out.push_back(std::move(*record));
    return std::nullopt;
  });
  if (error) return Err{internal(*error)};
  return out;
}

template <typename Record, typename Decode>
ApiResult<Record> read(rocksdb::DB& db, const rocksdb::ReadOptions& at, const std::string& k, Decode decode,
                       std::string not_found) {
  std::string value;
  auto status = db.Get(at, k, &value);
  if (status.IsNotFound()) return Err{ApiError{ApiErrorCode::kNotFound, std::move(not_found)}};
  if (!status.ok()) return Err{internal(status.ToString())};
  auto record = decode(as_bytes(value));
  if (!record) return Err{internal("a stored CIP-11 record is unreadable")};
  return std::move(*record);
}

}  // namespace

void stage(const chain::State& state, rocksdb::WriteBatch& batch) {
  state.runners.changes([&](const Address& a, const chain::RunnerRecord*, const chain::RunnerRecord* now) {
    batch.Put(key(kRunner, a), as_sv(chain::encode_runner(*now)));  // runners are never removed
  });
  for (std::uint32_t i = state.committed_registry_size(); i < state.index.size(); ++i)
    batch.Put(index_key(i), as_sv(state.index.at(i)));
  state.jobs.changes([&](const cip11::JobId& id, const chain::JobRecord* before, const chain::JobRecord* now) {
    batch.Put(key(kJob, id.value), as_sv(chain::encode_job(*now)));  // jobs are never removed
    const auto was = assigned_runners(before), is = assigned_runners(now);
    for (const auto& r : was)
      if (!is.contains(r)) batch.Delete(key(kAssigned, r, id.value));
    for (const auto& r : is)
      if (!was.contains(r)) batch.Put(key(kAssigned, r, id.value), "");
  });
  state.mru.changes([&](const auto& k, const cip11::MruRecord*, const cip11::MruRecord* now) {
    batch.Put(mru_key(k), as_sv(chain::encode_mru(*now)));
  });
  state.presence.changes([&](const Address& runner, const chain::PresenceProof*, const chain::PresenceProof* now) {
    batch.Put(key(kPresence, runner), as_sv(chain::encode_presence_proof(*now)));  // proofs are never removed
  });
  if (state.jobs_submitted != state.committed_jobs_submitted())
    batch.Put(std::string(kJobsSubmitted), layout::be64(state.jobs_submitted));
}

Result<chain::State, std::string> load(rocksdb::DB& db) {
  chain::State s;
  const rocksdb::ReadOptions now;
  auto error = scan(db, now, kRunner, [&](std::string_view, std::string_view value) -> std::optional<std::string> {
    auto r = chain::decode_runner(as_bytes(value));
    if (!r) return "a stored runner record is unreadable";
    s.runners[r->address] = std::move(*r);
    return std::nullopt;
  });
  std::uint32_t expected = 0;
  if (!error)
    error = scan(db, now, kIndex, [&](std::string_view k, std::string_view value) -> std::optional<std::string> {
      auto a = fixed_of<20>(value);
      if (k.size() != 4 || layout::from_be(k) != expected++ || !a) return "the stored registry index has a gap";
      if (!s.runners.contains(*a) || s.index.register_runner(*a) != expected - 1)
        return "the stored registry index names an unknown or repeated runner";
      return std::nullopt;
    });
  if (!error && s.index.size() != s.runners.size()) error = "the stored registry index misses runners";
  if (!error)
    error = scan(db, now, kJob, [&](std::string_view, std::string_view value) -> std::optional<std::string> {
      auto j = chain::decode_job(as_bytes(value));
      if (!j) return "a stored job record is unreadable";
      s.jobs[j->job_id] = std::move(*j);
      return std::nullopt;
    });
  if (!error)
    error = scan(db, now, kMru, [&](std::string_view k, std::string_view value) -> std::optional<std::string> {
      auto m = chain::decode_mru(as_bytes(value));
      auto submitter = fixed_of<20>(k.substr(0, 20));
      auto kind = k.size() == 21 ? chain::job_kind_from_byte(static_cast<std::uint8_t>(k[20])) : std::nullopt;
      if (!m || !submitter || !kind) return "a stored MRU record is unreadable";
      s.mru[{*submitter, *kind}] = *m;
      return std::nullopt;
    });
  if (!error)
    error = scan(db, now, kPresence, [&](std::string_view k, std::string_view value) -> std::optional<std::string> {
      auto proof = chain::decode_presence_proof(as_bytes(value));
      auto runner = fixed_of<20>(k);
      if (!proof || !runner) return "a stored presence proof is unreadable";
      s.presence[*runner] = *proof;
      return std::nullopt;
    });
  if (error) return Err{*error};
  std::string counter;
  if (auto status = db.Get(now, std::string(kJobsSubmitted), &counter); status.ok() && counter.size() == 8)
    s.jobs_submitted = layout::from_be(counter);
  else if (!status.IsNotFound())
    return Err{std::string("the stored job counter is unreadable")};
  s.commit();
  return s;
}

ApiResult<chain::RunnerRecord> runner(rocksdb::DB& db, const rocksdb::ReadOptions& at, const Address& runner) {
  return read<chain::RunnerRecord>(db, at, key(kRunner, runner), chain::decode_runner, "no runner " + json::hex0x(runner));
}

ApiResult<chain::PresenceProof> presence(rocksdb::DB& db, const rocksdb::ReadOptions& at, const Address& runner) {
  return read<chain::PresenceProof>(db, at, key(kPresence, runner), chain::decode_presence_proof,
                                    "no presence proof for " + json::hex0x(runner));
}

ApiResult<std::vector<chain::RunnerRecord>> runners(rocksdb::DB& db, const rocksdb::ReadOptions& at) {
  return read_named<chain::RunnerRecord, 20>(db, at, std::string(kIndex), true, runner);
}

ApiResult<chain::JobRecord> job(rocksdb::DB& db, const rocksdb::ReadOptions& at, const cip11::JobId& job_id) {
  return read<chain::JobRecord>(db, at, key(kJob, job_id.value), chain::decode_job, "no job " + json::hex0x(job_id.value));
}

ApiResult<std::vector<chain::JobRecord>> runner_jobs(rocksdb::DB& db, const rocksdb::ReadOptions& at,
                                                     const Address& runner) {
  return read_named<chain::JobRecord, 32>(db, at, key(kAssigned, runner), false,
                                          [](rocksdb::DB& d, const rocksdb::ReadOptions& a, const Bytes32& id) {
                                            return job(d, a, cip11::JobId{id});
                                          });
}

}  // namespace cowboy::devchain::cip11_store
