#include "cip11/chain/codec.h"

#include "cip11/chain/instructions.h"
#include "common/fields.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::size_t kMaxEntries = 10'000'000;
constexpr std::size_t kMaxRecordBytes = 1 << 20;

// Each record lists its fields once; common/fields.h's Put writes them and Get
// reads them back, its checks where the decoder refuses a value.
struct Wire {
  static constexpr std::uint8_t kVersion = 2;  // 2: runner history, job selection seed, no candidate cache
};
using Put = codec::Put<Wire>;
using Get = codec::Get<Wire>;
using codec::DecodeError;

/// A one-byte enum whose values run from 0 to `last`.
template <typename V, typename Enum>
void up_to(V& v, Enum& e, std::remove_const_t<Enum> last) {
  v.enumeration(e, [last](std::uint8_t b) { return b <= static_cast<std::uint8_t>(last); }, DecodeError::kInvalidValue);
}

/// Strictly ascending, as the machine keeps them (it binary-searches them).
template <typename V, typename T>
void ascending_addresses(V& v, T& list) {
  v.list(list, kMaxEntries, 20, [&](auto& a) {
    v(a);
    v.check([&] { return list.empty() || list.back() < a; }, DecodeError::kInvalidValue);
  });
}

/// A runner's fields: the record's and each of its history's versions.
template <typename V, typename T>
void runner_fields(V& v, T& x) {
  v(x.address), v(x.key), v(x.stake), v(x.job_kinds);
  capability_list(v, x.capabilities);
  v(x.max_concurrent), v(x.price);
  up_to(v, x.health, HealthStatus::kDeregistered);
  v(x.registered_at), v(x.last_heartbeat), v(x.active_jobs), v(x.reputation_x1e9);
}

/// A record, then its history: (height, fields) pairs in strictly ascending
/// height, each version of the same runner and without a history of its own.
COWBOY_FIELDS(RunnerRecord) {
  v.version();
  runner_fields(v, x);
  v.list(x.history, kMaxEntries, 8 + 20, [&](auto& h) {
    v(h.first);
    runner_fields(v, h.second);
    v.check([&] { return h.second.address == x.address && (x.history.empty() || x.history.back().first < h.first); },
            DecodeError::kInvalidValue);
  });
}

COWBOY_FIELDS(Assignment) { v(x.runner), v(x.commitment), v(x.committed_at), v(x.result_hash); }

Result<PendingSelectionV1, DecodeError> pending_from(ByteView bytes) {
  auto pending = decode_pending_selection(bytes);
  if (!pending) return Err{DecodeError::kInvalidValue};
  return *pending;
}

COWBOY_FIELDS(JobRecord) {
  v.version();
  v(x.job_id), v(x.submitter);
  up_to(v, x.kind, JobKind::kAgent);
  v.bytes(x.spec, kMaxSpecBytes);
  v(x.timeout_blocks), v(x.runners), v(x.max_price), v(x.submitted_at);
  up_to(v, x.state, JobState::kFailed);
  v(x.selections), v(x.assignment_height), v(x.deadline_block);
  v.list(x.committee, kMaxCommittee, 30, [&](auto& a) { v(a); });
  ascending_addresses(v, x.excluded);
  // Stored as its own CBOR encoding (pending.h).
  v.option(x.pending, [&](auto& p) {
    v.nested(p, kMaxRecordBytes, [](const PendingSelectionV1& s) { return cip11::encode(s); }, pending_from);
  });
  v(x.selection_seed);
  v.bytes(x.result, kMaxResultBytes);
  v(x.finished_at);
}

COWBOY_FIELDS(MruRecord) { v(x.runner), v(x.set_at_block); }

/// proven_until is always anchor + PRESENCE_PROOF_TTL_BLOCKS (mode_a.h); both are stored as they were set.
COWBOY_FIELDS(PresenceProof) {
  v(x.anchor), v(x.proven_until);
  v.check([&] { return x.proven_until >= x.anchor; }, DecodeError::kInvalidValue);
}

COWBOY_FIELDS(ChainParams) {
  v(x.chain_id), v(x.transport_enabled), v(x.presence_shadow_enabled), v(x.present_first_enabled);
  v(x.poll_disabled), v(x.presence_hard_exclude_enabled), v(x.multi_validator);
  v(x.heartbeat_timeout_blocks), v(x.mru_activation_height), v(x.mru_ttl_blocks), v(x.selection_seed_delay_views);
  v(x.min_stake), v(x.max_selections);
  v(x.reputation.reputation_normalizer), v(x.reputation.w_min_floor_x1e6);
  v.u32(x.subset.min_subset), v.u32(x.subset.max_subset);
  v(x.t_hard);
  v.check([&] { return x.subset.min_subset != 0 && x.subset.max_subset >= x.subset.min_subset && x.t_hard != 0; },
          DecodeError::kInvalidValue);
}

Result<ActiveRunners, DecodeError> index_from(ByteView bytes) {
  auto index = ActiveRunners::decode(bytes);
  if (!index) return Err{DecodeError::kInvalidValue};
  return std::move(*index);
}

/// Each record map in key order, once each; runners and jobs as their own
/// encodings, keyed by their address and id.
COWBOY_FIELDS(State) {
  v.nested(x.index, kMaxEntries * 24, [](const ActiveRunners& index) { return index.encode(); }, index_from);
  v(x.jobs_submitted);
  v.map(x.runners, kMaxEntries, 4, [&](auto& address, auto& runner) {
    v.nested(runner, kMaxRecordBytes, encode_runner, decode_runner);
    v.derived(address, runner.address);
  });
  v.map(x.jobs, kMaxEntries, 4, [&](auto& id, auto& job) {
    v.nested(job, kMaxRecordBytes, encode_job, decode_job);
    v.derived(id, job.job_id);
  });
  v.map(x.mru, kMaxEntries, 20 + 1 + 20 + 8, [&](auto& key, auto& m) {
    v(key.first);
    up_to(v, key.second, JobKind::kAgent);
    v(m);
  });
  v.map(x.presence, kMaxEntries, 20 + 16, [&](auto& runner, auto& proof) { v(runner), v(proof); });
  // The index names exactly the runners.
  v.check([&] { return x.index.size() == x.runners.size(); }, DecodeError::kInvalidValue);
  v.check(
      [&] {
        for (std::uint32_t i = 0; i < x.index.size(); ++i)
          if (!x.runners.contains(x.index.at(i))) return false;
        return true;
      },
      DecodeError::kInvalidValue);
}

/// One record alone, refused above kMaxRecordBytes before it is read.
template <typename T>
Result<T, DecodeError> decode_one(ByteView bytes) {
  if (bytes.size() > kMaxRecordBytes) return Err{DecodeError::kLengthOverCap};
  return codec::decode_fields<Wire, T>(bytes);
}

}  // namespace

Bytes job_spec_bytes(const JobRecord& job) {
  codec::Writer w;
  w.u8(1);
  w.fixed(job.job_id.value);
  w.u8(static_cast<std::uint8_t>(job.kind));
  w.u64(job.timeout_blocks);
  w.u32(job.runners);
  w.u128(job.max_price);
  w.fixed(job.submitter);
  w.bytes(job.spec);
  return std::move(w).take();
}

Bytes encode_runner(const RunnerRecord& runner) { return codec::encode_fields<Wire>(runner); }
Result<RunnerRecord, codec::DecodeError> decode_runner(ByteView bytes) { return decode_one<RunnerRecord>(bytes); }
Bytes encode_job(const JobRecord& job) { return codec::encode_fields<Wire>(job); }
Result<JobRecord, codec::DecodeError> decode_job(ByteView bytes) { return decode_one<JobRecord>(bytes); }
std::optional<JobKind> job_kind_from_byte(std::uint8_t byte) {
  if (byte > static_cast<std::uint8_t>(JobKind::kAgent)) return std::nullopt;
  return static_cast<JobKind>(byte);
}

Bytes encode_presence_proof(const PresenceProof& p) { return codec::encode_fields<Wire>(p); }
Result<PresenceProof, codec::DecodeError> decode_presence_proof(ByteView bytes) {
  return decode_one<PresenceProof>(bytes);
}

Bytes encode_mru(const MruRecord& m) { return codec::encode_fields<Wire>(m); }
Result<MruRecord, codec::DecodeError> decode_mru(ByteView bytes) { return decode_one<MruRecord>(bytes); }

void put_params(codec::Writer& w, const ChainParams& p) { Put{w}(p); }
ChainParams get_params(codec::Reader& r) {
  ChainParams p;
  Get{r}(p);
  return p;
}

void put_state(codec::Writer& w, const State& s) { Put{w}(s); }
State get_state(codec::Reader& r) {
  State s;
  Get{r}(s);
  s.commit();
  return s;
}

}  // namespace cowboy::cip11::chain
