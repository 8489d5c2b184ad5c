#include "cip11/chain/codec.h"

#include "cip11/chain/instructions.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::uint8_t kRecordVersion = 2;  // 2: runner history, job selection seed, no candidate cache
constexpr std::size_t kMaxEntries = 10'000'000;
constexpr std::size_t kMaxRecordBytes = 1 << 20;

void put_address_list(codec::Writer& w, const std::vector<Address>& list) {
  w.count(list.size());
  for (const auto& a : list) w.fixed(a);
}
/// Strictly ascending, as the machine keeps them (it binary-searches them).
std::vector<Address> get_address_list(codec::Reader& r) {
  std::vector<Address> out(r.count(kMaxEntries, 20));
  for (std::size_t i = 0; i < out.size() && r.ok(); ++i) {
    out[i] = r.fixed<20>();
    if (i > 0 && !(out[i - 1] < out[i])) r.fail(codec::DecodeError::kInvalidValue);
  }
  return out;
}

/// Map entries are stored in key order, once each: anything else is not the
/// encoding of a state, so it is refused rather than silently normalised.
template <typename Key>
void next_key(codec::Reader& r, std::optional<Key>& previous, const Key& key) {
  if (previous && !(*previous < key)) r.fail(codec::DecodeError::kInvalidValue);
  previous = key;
}

template <typename T>
T checked_enum(codec::Reader& r, std::uint8_t max) {
  std::uint8_t v = r.u8();
  if (v > max) r.fail(codec::DecodeError::kInvalidValue);
  return static_cast<T>(v);
}

void put_runner_fields(codec::Writer& w, const RunnerRecord& x) {
  w.fixed(x.address);
  w.fixed(x.key);
  w.u128(x.stake);
  w.u32(x.job_kinds);
  put_capabilities(w, x.capabilities);
  w.u32(x.max_concurrent);
  w.u128(x.price);
  w.u8(static_cast<std::uint8_t>(x.health));
  w.u64(x.registered_at);
  w.u64(x.last_heartbeat);
  w.u32(x.active_jobs);
  w.u64(x.reputation_x1e9);
}
RunnerRecord get_runner_fields(codec::Reader& r) {
  RunnerRecord x;
  x.address = r.fixed<20>();
  x.key = r.fixed<33>();
  x.stake = r.u128();
  x.job_kinds = r.u32();
  x.capabilities = get_capabilities(r);
  x.max_concurrent = r.u32();
  x.price = r.u128();
  x.health = checked_enum<HealthStatus>(r, static_cast<std::uint8_t>(HealthStatus::kDeregistered));
  x.registered_at = r.u64();
  x.last_heartbeat = r.u64();
  x.active_jobs = r.u32();
  x.reputation_x1e9 = r.u64();
  return x;
}

/// A record, then its history: (height, fields) pairs in strictly ascending
/// height, each version of the same runner and without a history of its own.
void put_runner(codec::Writer& w, const RunnerRecord& x) {
  w.u8(kRecordVersion);
  put_runner_fields(w, x);
  w.count(x.history.size());
  for (const auto& [height, version] : x.history) {
    w.u64(height);
    put_runner_fields(w, version);
  }
}
RunnerRecord get_runner(codec::Reader& r) {
  r.version(kRecordVersion);
  RunnerRecord x = get_runner_fields(r);
  std::uint32_t n = r.count(kMaxEntries, 8 + 20);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    const std::uint64_t height = r.u64();
    RunnerRecord version = get_runner_fields(r);
    if (version.address != x.address || (i > 0 && x.history.back().first >= height))
      r.fail(codec::DecodeError::kInvalidValue);
    x.history.emplace_back(height, std::move(version));
  }
  return x;
}

void put_job(codec::Writer& w, const JobRecord& x) {
  w.u8(kRecordVersion);
  w.fixed(x.job_id);
  w.fixed(x.submitter);
  w.u8(static_cast<std::uint8_t>(x.kind));
  w.bytes(x.spec);
  w.u64(x.timeout_blocks);
  w.u32(x.runners);
  w.u128(x.max_price);
  w.u64(x.submitted_at);
  w.u8(static_cast<std::uint8_t>(x.state));
  w.u32(x.selections);
  w.u64(x.assignment_height);
  w.u64(x.deadline_block);
  w.count(x.committee.size());
  for (const auto& a : x.committee) {
    w.fixed(a.runner);
    w.option(a.commitment, [&](const Bytes32& c) { w.fixed(c); });
    w.u64(a.committed_at);
    w.option(a.result_hash, [&](const Bytes32& h) { w.fixed(h); });
  }
  put_address_list(w, x.excluded);
  w.option(x.pending, [&](const PendingSelectionV1& p) { w.bytes(encode(p)); });
  w.option(x.selection_seed, [&](const Bytes32& seed) { w.fixed(seed); });
  w.bytes(x.result);
  w.u64(x.finished_at);
}
JobRecord get_job(codec::Reader& r) {
  JobRecord x;
  r.version(kRecordVersion);
  x.job_id = r.fixed<32>();
  x.submitter = r.fixed<20>();
  x.kind = checked_enum<JobKind>(r, static_cast<std::uint8_t>(JobKind::kAgent));
  x.spec = r.bytes(kMaxSpecBytes);
  x.timeout_blocks = r.u64();
  x.runners = r.u32();
  x.max_price = r.u128();
  x.submitted_at = r.u64();
  x.state = checked_enum<JobState>(r, static_cast<std::uint8_t>(JobState::kFailed));
  x.selections = r.u32();
  x.assignment_height = r.u64();
  x.deadline_block = r.u64();
  std::uint32_t n = r.count(kMaxCommittee, 30);
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    Assignment a;
    a.runner = r.fixed<20>();
    if (r.option_tag()) a.commitment = r.fixed<32>();
    a.committed_at = r.u64();
    if (r.option_tag()) a.result_hash = r.fixed<32>();
    x.committee.push_back(a);
  }
  x.excluded = get_address_list(r);
  if (r.option_tag()) {
    Bytes p = r.bytes(kMaxRecordBytes);
    auto pending = decode_pending_selection(p);
    if (r.ok() && !pending) r.fail(codec::DecodeError::kInvalidValue);
    if (pending) x.pending = *pending;
  }
  if (r.option_tag()) x.selection_seed = r.fixed<32>();
  x.result = r.bytes(kMaxResultBytes);
  x.finished_at = r.u64();
  return x;
}

void put_mru(codec::Writer& w, const MruRecord& m) {
  w.fixed(m.runner);
  w.u64(m.set_at_block);
}
MruRecord get_mru(codec::Reader& r) {
  MruRecord m;
  m.runner = r.fixed<20>();
  m.set_at_block = r.u64();
  return m;
}

/// proven_until is always anchor + PRESENCE_PROOF_TTL_BLOCKS (mode_a.h); both are stored as they were set.
void put_presence_proof(codec::Writer& w, const PresenceProof& p) {
  w.u64(p.anchor);
  w.u64(p.proven_until);
}
PresenceProof get_presence_proof(codec::Reader& r) {
  PresenceProof p;
  p.anchor = r.u64();
  p.proven_until = r.u64();
  if (r.ok() && p.proven_until < p.anchor) r.fail(codec::DecodeError::kInvalidValue);
  return p;
}

template <typename T, typename Put>
Bytes encode_one(const T& x, Put put) {
  codec::Writer w;
  put(w, x);
  return std::move(w).take();
}
template <typename Get>
auto decode_one(ByteView bytes, Get get) -> Result<decltype(get(std::declval<codec::Reader&>())), codec::DecodeError> {
  if (bytes.size() > kMaxRecordBytes) return Err{codec::DecodeError::kLengthOverCap};
  codec::Reader r(bytes);
  auto x = get(r);
  r.finish();
  if (!r.ok()) return Err{r.error()};
  return x;
}

}  // namespace

Bytes job_spec_bytes(const JobRecord& job) {
  codec::Writer w;
  w.u8(1);
  w.fixed(job.job_id);
  w.u8(static_cast<std::uint8_t>(job.kind));
  w.u64(job.timeout_blocks);
  w.u32(job.runners);
  w.u128(job.max_price);
  w.fixed(job.submitter);
  w.bytes(job.spec);
  return std::move(w).take();
}

Bytes encode_runner(const RunnerRecord& runner) { return encode_one(runner, put_runner); }
Result<RunnerRecord, codec::DecodeError> decode_runner(ByteView bytes) { return decode_one(bytes, get_runner); }
Bytes encode_job(const JobRecord& job) { return encode_one(job, put_job); }
Result<JobRecord, codec::DecodeError> decode_job(ByteView bytes) { return decode_one(bytes, get_job); }
std::optional<JobKind> job_kind_from_byte(std::uint8_t byte) {
  if (byte > static_cast<std::uint8_t>(JobKind::kAgent)) return std::nullopt;
  return static_cast<JobKind>(byte);
}

Bytes encode_presence_proof(const PresenceProof& p) { return encode_one(p, put_presence_proof); }
Result<PresenceProof, codec::DecodeError> decode_presence_proof(ByteView bytes) {
  return decode_one(bytes, get_presence_proof);
}

Bytes encode_mru(const MruRecord& m) { return encode_one(m, put_mru); }
Result<MruRecord, codec::DecodeError> decode_mru(ByteView bytes) { return decode_one(bytes, get_mru); }

void put_params(codec::Writer& w, const ChainParams& p) {
  w.u64(p.chain_id);
  w.boolean(p.transport_enabled);
  w.boolean(p.presence_shadow_enabled);
  w.boolean(p.present_first_enabled);
  w.boolean(p.poll_disabled);
  w.boolean(p.presence_hard_exclude_enabled);
  w.boolean(p.multi_validator);
  w.u64(p.heartbeat_timeout_blocks);
  w.u64(p.mru_activation_height);
  w.u64(p.mru_ttl_blocks);
  w.u64(p.selection_seed_delay_views);
  w.u128(p.min_stake);
  w.u32(p.max_selections);
  w.u64(p.reputation.reputation_normalizer);
  w.u64(p.reputation.w_min_floor_x1e6);
  w.u32(static_cast<std::uint32_t>(p.subset.min_subset));
  w.u32(static_cast<std::uint32_t>(p.subset.max_subset));
  w.u32(p.t_hard);
}
ChainParams get_params(codec::Reader& r) {
  ChainParams p;
  p.chain_id = r.u64();
  p.transport_enabled = r.boolean();
  p.presence_shadow_enabled = r.boolean();
  p.present_first_enabled = r.boolean();
  p.poll_disabled = r.boolean();
  p.presence_hard_exclude_enabled = r.boolean();
  p.multi_validator = r.boolean();
  p.heartbeat_timeout_blocks = r.u64();
  p.mru_activation_height = r.u64();
  p.mru_ttl_blocks = r.u64();
  p.selection_seed_delay_views = r.u64();
  p.min_stake = r.u128();
  p.max_selections = r.u32();
  p.reputation.reputation_normalizer = r.u64();
  p.reputation.w_min_floor_x1e6 = r.u64();
  p.subset.min_subset = r.u32();
  p.subset.max_subset = r.u32();
  p.t_hard = r.u32();
  if (r.ok() && (p.subset.min_subset == 0 || p.subset.max_subset < p.subset.min_subset || p.t_hard == 0))
    r.fail(codec::DecodeError::kInvalidValue);
  return p;
}

void put_state(codec::Writer& w, const State& s) {
  w.bytes(s.index.encode());
  w.u64(s.jobs_submitted);
  w.count(s.runners.size());
  for (const auto& [a, runner] : s.runners) w.bytes(encode_runner(runner));
  w.count(s.jobs.size());
  for (const auto& [id, job] : s.jobs) w.bytes(encode_job(job));
  w.count(s.mru.size());
  for (const auto& [key, m] : s.mru) {
    w.fixed(key.first);
    w.u8(static_cast<std::uint8_t>(key.second));
    put_mru(w, m);
  }
  w.count(s.presence.size());
  for (const auto& [runner, proof] : s.presence) {
    w.fixed(runner);
    put_presence_proof(w, proof);
  }
}

State get_state(codec::Reader& r) {
  State s;
  Bytes index = r.bytes(kMaxEntries * 24);
  if (r.ok()) {
    auto decoded = ActiveRunners::decode(index);
    if (decoded) s.index = std::move(*decoded);
    else r.fail(codec::DecodeError::kInvalidValue);
  }
  s.jobs_submitted = r.u64();
  std::uint32_t n = r.count(kMaxEntries, 4);
  std::optional<Address> last_runner;
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    auto runner = decode_runner(r.bytes(kMaxRecordBytes));
    if (!runner) { r.fail(runner.error()); break; }
    next_key(r, last_runner, runner->address);
    s.runners[runner->address] = std::move(*runner);
  }
  n = r.count(kMaxEntries, 4);
  std::optional<Bytes32> last_job;
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    auto job = decode_job(r.bytes(kMaxRecordBytes));
    if (!job) { r.fail(job.error()); break; }
    next_key(r, last_job, job->job_id);
    s.jobs[job->job_id] = std::move(*job);
  }
  n = r.count(kMaxEntries, 49);
  std::optional<std::pair<Address, JobKind>> last_mru;
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    Address submitter = r.fixed<20>();
    auto kind = checked_enum<JobKind>(r, static_cast<std::uint8_t>(JobKind::kAgent));
    MruRecord m = get_mru(r);
    next_key(r, last_mru, std::pair(submitter, kind));
    s.mru[{submitter, kind}] = m;
  }
  n = r.count(kMaxEntries, 36);
  std::optional<Address> last_proof;
  for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
    Address runner = r.fixed<20>();
    PresenceProof proof = get_presence_proof(r);
    next_key(r, last_proof, runner);
    s.presence[runner] = proof;
  }
  // The index names exactly the runners.
  if (r.ok() && s.index.size() != s.runners.size()) r.fail(codec::DecodeError::kInvalidValue);
  for (std::uint32_t i = 0; i < s.index.size() && r.ok(); ++i)
    if (!s.runners.contains(s.index.at(i))) r.fail(codec::DecodeError::kInvalidValue);
  s.commit();
  return s;
}

}  // namespace cowboy::cip11::chain
