#include "cip11/chain/machine.h"

#include <algorithm>

#include "cip11/chain/seed.h"
#include "cip11/subset.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::string_view kBeaconDomain = "cowboy/devchain-beacon/v1";

bool supports(const RunnerRecord& r, JobKind kind) { return (r.job_kinds >> static_cast<unsigned>(kind) & 1u) != 0; }

/// The round whose seed a selection in block H reads: R_{H-1} for M == 1 (§9.2),
/// the round just before the block's own (the last of the epoch before at an
/// epoch's first view).
Round parent_round(const BlockContext& block) { return previous_round(block.schedule(), block.round()); }

/// CIP11_PRESENT_FIRST_ENABLED switches CIP-11 selection on as one bundle
/// (§13): the v3 seed domain, M > 1 commit-then-reveal, MRU and present-first.
/// Off, live selection is CIP-2 v2: immediate, v2 seed, no presence, no MRU.
bool cip11_selection(const ChainParams& params) { return params.present_first_enabled; }

/// §14 Phase 1: the CIP-11 draws computed beside live CIP-2 v2 selection, as telemetry.
bool shadowing(const BlockContext& block) {
  return !cip11_selection(block.params) && block.params.presence_shadow_enabled;
}

/// MRU is read and written only under CIP-11 selection and from its activation height (§9.4).
bool mru_reads(const BlockContext& block, bool cip11) {
  return cip11 && block.height >= block.params.mru_activation_height;
}

/// Brings State::due up to date with every job changed since it last took
/// them in: when each is next due, and the block S of each pending selection.
void refresh_due(State& state) {
  for (const JobId& id : state.jobs.take_touched()) {
    const JobRecord* job = state.jobs.get(id);
    std::optional<Height> pending_since;
    if (job && job->state == JobState::kPendingSelection && job->pending) pending_since = job->pending->submitted_at;
    state.due.set(id, job ? next_due(*job) : std::nullopt, pending_since);
  }
}

/// The distinct block-S heights of the selections pending right now,
/// ascending: State::due's, with each job changed since it last took them in
/// counted as it stands now (mid-block, without touching the index).
std::vector<Height> pending_now(const State& state) {
  std::map<Height, std::uint32_t> count = state.due.pending_counts();
  for (const JobId& id : state.jobs.touched()) {
    if (auto since = state.due.pending_since(id); since && --count[*since] == 0) count.erase(*since);
    const JobRecord* job = state.jobs.get(id);
    if (job && job->state == JobState::kPendingSelection && job->pending) ++count[job->pending->submitted_at];
  }
  std::vector<Height> out;
  for (const auto& [submitted_at, n] : count) out.push_back(submitted_at);
  return out;
}

/// The one way a runner record changes. Its first change in block `height`
/// keeps the record as it stood at the end of block height-1, which a job
/// submitted later in this block snapshots; and versions no pending selection
/// can read any more are dropped (version i serves the submission heights S in
/// (tag[i-1], tag[i]], see `record_before`), so a runner keeps at most one
/// version per distinct pending S, plus this block's.
RunnerRecord& edit_runner(State& state, const Address& address, Height height) {
  RunnerRecord& r = state.runners.at(address);
  if (!r.history.empty() && r.history.back().first == height) return r;
  const std::vector<Height> pending = pending_now(state);
  auto serves = [&](Height after, Height upto) {
    auto it = std::upper_bound(pending.begin(), pending.end(), after);
    return it != pending.end() && *it <= upto;
  };
  auto old = std::move(r.history);
  r.history.clear();
  Height previous{0};
  for (auto& version : old) {
    if (serves(previous, version.first)) r.history.push_back(std::move(version));
    previous = version.first;
  }
  RunnerRecord before = r;
  before.history.clear();
  r.history.emplace_back(height, std::move(before));
  return r;
}

/// The record as it stood at the end of block S-1, or null when the runner
/// was not registered then (or only as a deregistered earlier incarnation,
/// which no filter passes).
const RunnerRecord* record_before(const RunnerRecord& r, Height submitted_at) {
  const RunnerRecord* at = &r;
  for (const auto& [tag, version] : r.history)
    if (tag >= submitted_at) {
      at = &version;
      break;
    }
  return at->registered_at < submitted_at ? at : nullptr;
}

/// §9.1 filters 0, 1, 3, 5, 6 and 9 for `job` at `height`.
bool passes_filters(const RunnerRecord& r, const JobRecord& job, Height height, const ChainParams& params) {
  if (std::binary_search(job.excluded.begin(), job.excluded.end(), r.address)) return false;     // 0: exclusion list
  if (!passes_liveness_floor(r.health, r.last_heartbeat, height, params.heartbeat_timeout_blocks)) return false;  // 1
  if (!supports(r, job.kind)) return false;                                                      // 3: capability
  if (r.price > job.max_price) return false;                                                     // 5: price
  if (r.active_jobs >= r.max_concurrent) return false;                                           // 6: concurrency
  return saturating_mul(r.stake, 2) >= saturating_mul(job.max_price, 3);                         // 9: stake >= 1.5 x max_price
}

/// The runner's index in registry(H-1). Registered in this block: none, so never present (§8.5).
std::optional<std::uint32_t> registry_index_of(const State& state, const BlockContext& block, const Address& runner) {
  auto i = state.index.index_of(runner);
  return i && *i < block.presence.registry_size() ? i : std::nullopt;
}

Candidate candidate_of(const State& state, const BlockContext& block, const RunnerRecord& r) {
  Candidate c;
  c.address = r.address;
  c.registry_index = registry_index_of(state, block, r.address);
  c.effective_stake = r.stake;
  c.reputation_x1e9 = r.reputation_x1e9;
  return c;
}

/// Ends every current assignment of `job` with `reason` (their concurrency slots free up).
void end_committee(State& state, const BlockContext& block, JobRecord& job, EndReason reason, Effects& effects) {
  for (const auto& a : job.committee) {
    if (auto it = state.runners.find(a.runner); it != state.runners.end() && it->second.active_jobs > 0)
      --edit_runner(state, a.runner, block.height).active_jobs;
    effects.ended.push_back({job.job_id, a.runner, reason});
  }
}

/// One §9.2 draw: present-first and MRU under CIP-11 rules, else over the whole pool.
std::vector<Address> draw(const State& state, const BlockContext& block, const JobRecord& job,
                          std::span<const Candidate> eligible, const Bytes32& seed, bool cip11) {
  std::optional<Address> mru;
  if (mru_reads(block, cip11)) {  // below activation MRU state is neither read nor written (§9.4)
    auto it = state.mru.find({job.submitter, job.kind});
    mru = lookup_mru(it == state.mru.end() ? std::nullopt : std::optional<MruRecord>(it->second), block.height,
                     block.params.mru_ttl_blocks);
  }
  CommitteeRequest request;
  request.eligible = eligible;
  request.presence = cip11 ? &block.presence : nullptr;
  request.committee_size = job.runners;
  request.seed = seed;
  request.mru = mru;
  request.config = block.params.reputation;
  // §3.2: n = |V| of the snapshot active at this block, not of the genesis:
  // a set grown from one validator to several steers no committee (§7.3).
  request.multi_validator = block.validators.active(block.height).peers.size() > 1;
  // Hard exclusion only under CIP-11 selection and the §8.4 guard; below it presence only orders.
  request.mode_a = cip11 && mode_a_effective(block.params, block.validators, block.height);
  return select_committee(request);
}

/// Draws and writes a committee at block H (§9.2, §7.3, §9.3, §10.1).
void assign(State& state, const BlockContext& block, JobRecord& job, std::span<const Candidate> eligible,
            const Bytes32& seed, Height deadline_block, Effects& effects) {
  job.committee.clear();
  for (const Address& runner : draw(state, block, job, eligible, seed, cip11_selection(block.params))) {
    job.committee.push_back(Assignment{runner, std::nullopt, Height{0}, std::nullopt});
    ++edit_runner(state, runner, block.height).active_jobs;
    effects.assigned.push_back({job.job_id, runner, block.height, deadline_block});
  }
  job.state = JobState::kAssigned;
  job.selections += 1;
  job.assignment_height = block.height;
  job.deadline_block = deadline_block;
}

std::vector<Address> members(const JobRecord& job) {
  std::vector<Address> out;
  for (const auto& a : job.committee) out.push_back(a.runner);
  return out;
}

/// The job's shadow record as this block has left it so far: its own writes
/// first, then the book the blocks before it left (shadow.h).
std::optional<ShadowRecord> shadow_of(const BlockContext& block, const Effects& effects, const JobId& id) {
  for (auto w = effects.shadow_writes.rbegin(); w != effects.shadow_writes.rend(); ++w)
    if (w->job_id == id) return w->record;
  const ShadowRecord* r = block.shadow ? block.shadow->find(id) : nullptr;
  return r ? std::optional<ShadowRecord>(*r) : std::nullopt;
}

/// The job ended: its shadow record goes, unless its M > 1 shadow draw still
/// waits for its round (that pass drops it).
void shadow_forget(const BlockContext& block, Effects& effects, const JobId& id) {
  if (!shadowing(block)) return;
  if (auto r = shadow_of(block, effects, id); r && !r->pending) effects.shadow_writes.push_back({id, std::nullopt});
}

/// §14 Phase 1 shadow mode: CIP-11 committee `selection` of `job`, drawn with
/// `seed` over `eligible` beside the live committee `live`, as telemetry.
void shadow_draw(const State& state, const BlockContext& block, const JobRecord& job,
                 std::span<const Candidate> eligible, const Bytes32& seed, std::uint32_t selection,
                 std::vector<Address> live, Effects& effects) {
  ShadowDraw s;
  s.job_id = job.job_id;
  s.live = std::move(live);
  s.selection = selection;
  s.shadow = draw(state, block, job, eligible, seed, true);
  for (const Address& runner : s.shadow) {
    auto c = std::find_if(eligible.begin(), eligible.end(), [&](const Candidate& x) { return x.address == runner; });
    if (c != eligible.end() && c->registry_index && block.presence.contains(*c->registry_index)) ++s.shadow_present;
  }
  effects.shadow.push_back(std::move(s));
}

void note_seed(Effects& effects, const Beacon& beacon) {
  ConsumedSeed entry{beacon.epoch, beacon.view, beacon.signature, beacon.evidence};
  auto& seeds = effects.consumed_seeds;
  auto at = std::lower_bound(seeds.begin(), seeds.end(), entry, [](const ConsumedSeed& a, const ConsumedSeed& b) {
    return std::pair(a.epoch, a.view) < std::pair(b.epoch, b.view);
  });
  if (at == seeds.end() || at->epoch != entry.epoch || at->view != entry.view) seeds.insert(at, std::move(entry));
}

/// The beacon of round r and its beacon_hash_v1, or nullopt while that seed is unknown.
std::optional<std::pair<Beacon, Bytes32>> beacon_at(const BlockContext& block, Round r) {
  auto beacon = block.beacon.seed(r.epoch, r.view);
  if (!beacon) return std::nullopt;
  auto hash = beacon_hash_v1(*beacon);
  if (!hash) return std::nullopt;
  return std::pair(std::move(*beacon), *hash);
}

SelectionMode mode_of(const JobRecord& job) {
  return job.runners == 1 ? SelectionMode::kImmediate : SelectionMode::kDelayed;
}

/// An immediate first selection in block H = S from R_{S-1}: v3 under CIP-11
/// selection, else CIP-2 v2 (and, under shadow mode, for M = 1 the v3 draw
/// beside it, whose seed the book keeps for the shadow re-selections; an
/// M > 1 shadow draw waits for its round, SubmitJob).
void select_now(State& state, const BlockContext& block, JobRecord& job, Height deadline_block,
                Effects& effects) {
  const bool cip11 = cip11_selection(block.params);
  auto eligible = eligible_candidates(state, block, job);
  auto beacon = beacon_at(block, parent_round(block));  // the round just before the block's
  if (!beacon) {  // no seed (genesis edge): an empty committee, drawn again at its deadline
    job.state = JobState::kAssigned;
    job.selections += 1;
    job.assignment_height = block.height;
    job.deadline_block = deadline_block;
    return;
  }
  const Bytes32 v3 = selection_seed_v3(mode_of(job), beacon->second, job.job_id, job.submitted_at.value);
  job.selection_seed = cip11 ? v3 : selection_seed_v2(beacon->second, job.job_id, job.submitted_at.value);
  assign(state, block, job, eligible, *job.selection_seed, deadline_block, effects);
  if (shadowing(block) && mode_of(job) == SelectionMode::kImmediate) {
    shadow_draw(state, block, job, eligible, v3, job.selections, members(job), effects);
    effects.shadow_writes.push_back({job.job_id, ShadowRecord{v3, std::nullopt}});
  }
}

/// r_seed = advance_round(r_submit, K) for a selection submitted in this block,
/// as block S can map it: consensus round arithmetic over views, block S being
/// proposed in its round, whose view on rotating validators runs ahead of S
/// (choice 102), in the open epoch: exact unless that epoch closes before it,
/// when the pass maps it again over the closed epoch (mapped_seed, choice 140).
/// nullopt only past the last u64 view.
std::optional<Round> seed_round(const BlockContext& block) {
  return advance_round(block.schedule(), block.round(), block.params.selection_seed_delay_views);
}

/// A pending record's r_seed as block H maps it: advance_round(r_submit, K)
/// over the epochs closed before H, once it is a round before H's own (so
/// certain, its seed fixed); nullopt while it is not (it stays pending, §9.2:
/// never a substitute round).
std::optional<Round> mapped_seed(const BlockContext& block, Round r_submit, std::uint64_t k) {
  return mapped_round(block.schedule(), r_submit, k, block.round());
}

/// §9.2 condition 1 (docs/cip11.md choice 153): block S is final, and so is
/// the last block of every round epoch r_seed was mapped across, whose view
/// fixed where that epoch ended. Until then the record waits under the same
/// keys and round: a fork may still drop S (and re-bind the job in another
/// block) or move the epoch's end, and no seed may be drawn from either.
bool binding_final(const BlockContext& block, Height submitted_at, RoundEpoch submission_epoch, Round r_seed) {
  const Height final = block.final_height();
  if (submitted_at > final) return false;
  if (r_seed.epoch.value == submission_epoch.value) return true;
  for (const ValidatorSnapshot& e : block.validators.epochs())
    if (e.epoch.value == r_seed.epoch.value) return e.activation_height.value <= final.value + 1;
  return false;  // an epoch no snapshot names: never mapped here
}

/// The shadow of §9.2's pending pass: each M > 1 shadow draw whose seed round
/// has passed, over its block-S candidates with its round's seed, exactly as
/// the live pass would draw it; a seed not known yet leaves it waiting. Reads
/// the state, writes only the effects.
void run_shadow_pending(const State& state, const BlockContext& block, Effects& effects) {
  if (!shadowing(block) || !block.shadow) return;
  std::vector<std::pair<const JobRecord*, ShadowPending>> due;
  for (const JobId& id : block.shadow->pending_before(block.round())) {
    auto record = shadow_of(block, effects, id);
    const JobRecord* job = state.jobs.get(id);
    if (record && record->pending && job) due.emplace_back(job, std::move(*record->pending));
  }
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first->submitted_at, a.first->job_id) < std::pair(b.first->submitted_at, b.first->job_id);
  });
  for (auto& [job, p] : due) {
    const auto r_seed = mapped_seed(block, Round{p.submission_epoch, p.submission_view}, p.seed_delay_views);
    if (!r_seed) continue;  // not mapped yet: its epoch may still close before it (choice 140)
    if (!binding_final(block, p.submitted_at, p.submission_epoch, *r_seed)) continue;  // as a live record (choice 153)
    auto beacon = beacon_at(block, *r_seed);
    if (!beacon) continue;  // waits for the same round, as a live record does
    const Bytes32 seed = selection_seed_v3(SelectionMode::kDelayed, beacon->second, job->job_id, p.submitted_at.value);
    // As snapshot_candidates at the pass: the block-S records, indexed against this block's registry(H-1).
    for (Candidate& c : p.candidates) c.registry_index = registry_index_of(state, block, c.address);
    shadow_draw(state, block, *job, p.candidates, seed, 1, std::move(p.live), effects);
    // The live job may have ended meanwhile: then nothing is left to shadow.
    effects.shadow_writes.push_back(
        {job->job_id, terminal(job->state) ? std::nullopt : std::optional(ShadowRecord{seed, std::nullopt})});
  }
}

/// §9.2 pending pass: every record whose seed view is known, in (submitted_at, job_id) order.
void run_pending(State& state, const BlockContext& block, const std::vector<JobId>& candidates, Effects& effects) {
  std::vector<std::pair<JobRecord*, Round>> due;  // each with its r_seed, mapped
  for (const JobId& id : candidates)
    if (const JobRecord* job = state.jobs.get(id); job->state == JobState::kPendingSelection && job->pending)
      if (auto r_seed = mapped_seed(block, Round{job->pending->submission_epoch, job->pending->submission_view},
                                    job->pending->seed_delay_views);
          r_seed && binding_final(block, job->pending->submitted_at, job->pending->submission_epoch, *r_seed))
        due.emplace_back(&state.jobs.at(id), *r_seed);
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first->submitted_at, a.first->job_id) < std::pair(b.first->submitted_at, b.first->job_id);
  });
  for (auto [job, r_seed] : due) {
    if (Round{job->pending->seed_epoch, job->pending->seed_view} != r_seed) {
      // Submitted with its epoch open, the epoch closed before the round S
      // named: r_seed is now mapped across the boundary, and the record
      // names the round it was always going to be (choice 140). Only ever once.
      job->pending->seed_epoch = r_seed.epoch;
      job->pending->seed_view = r_seed.view;
    }
    const PendingSelectionV1 p = *job->pending;
    auto beacon = beacon_at(block, r_seed);
    if (!beacon) continue;  // stays pending under the same round; never a substitute seed
    // Re-derived from the registry as of block S, never from a copy kept with the record.
    auto snapshot = snapshot_candidates(state, block, *job, p.submitted_at);
    if (candidates_snapshot_root(snapshot, block.params.reputation) != p.candidates_snapshot_root) {
      // Assigning it would make this block invalid, and no other snapshot or
      // seed may stand in: it stays pending, and at its deadline it ends.
      effects.unverified_pending.push_back(job->job_id);
      if (block.height > job->deadline_block) {
        job->pending.reset();
        job->state = JobState::kTimedOut;
        job->finished_at = block.height;
        effects.expired_pending.push_back(job->job_id);
      }
      continue;
    }
    if (block.committed_seeds &&
        std::none_of(block.committed_seeds->begin(), block.committed_seeds->end(),
                     [&](const ConsumedSeed& s) { return Round{s.epoch, s.view} == r_seed; }))
      continue;  // its proposer left it pending (choice 152)
    note_seed(effects, beacon->first);
    job->pending.reset();  // §9.2 step 4: the record leaves; State::due follows it
    job->selection_seed = selection_seed_v3(SelectionMode::kDelayed, beacon->second, job->job_id, p.submitted_at.value);
    assign(state, block, *job, snapshot, *job->selection_seed, job->deadline_block, effects);
  }
}

/// The result hash a strict majority of the committee revealed, if any.
std::optional<Bytes32> majority(const JobRecord& job) {
  std::map<Bytes32, std::uint32_t> votes;
  for (const auto& a : job.committee)
    if (a.result_hash && ++votes[*a.result_hash] * 2 > job.runners) return a.result_hash;
  return std::nullopt;
}

void complete(State& state, const BlockContext& block, JobRecord& job, Bytes result, const Bytes32& agreed,
              Effects& effects) {
  if (mru_reads(block, cip11_selection(block.params)))  // §9.4 write path: first matching runner in committee order
    for (const auto& a : job.committee)
      if (a.result_hash == agreed) {
        state.mru[{job.submitter, job.kind}] = MruRecord{a.runner, block.height};
        break;
      }
  end_committee(state, block, job, EndReason::kCompleted, effects);
  shadow_forget(block, effects, job.job_id);
  job.state = JobState::kCompleted;
  job.result = std::move(result);
  job.finished_at = block.height;
}

/// §11.2: a committee whose deadline passed without a result times out; the
/// next committee is drawn at this block, without the runners that timed out,
/// with a seed derived from the job's original one (§9.2: never a later beacon).
void run_deadlines(State& state, const BlockContext& block, std::vector<JobId> candidates, Effects& effects) {
  std::sort(candidates.begin(), candidates.end());  // job_id order
  for (const JobId& id : candidates) {
    if (const JobRecord* j = state.jobs.get(id); j->state != JobState::kAssigned || j->deadline_block >= block.height)
      continue;
    JobRecord& job = state.jobs.at(id);
    for (const auto& a : job.committee)
      if (!a.result_hash) {
        auto at = std::lower_bound(job.excluded.begin(), job.excluded.end(), a.runner);
        if (at == job.excluded.end() || *at != a.runner) job.excluded.insert(at, a.runner);
      }
    const bool last = job.selections >= block.params.max_selections;
    end_committee(state, block, job, last ? EndReason::kExpired : EndReason::kReassigned, effects);
    job.committee.clear();
    if (last) {
      job.state = JobState::kTimedOut;
      job.finished_at = block.height;
      shadow_forget(block, effects, id);
      continue;
    }
    if (!job.selection_seed) {  // the genesis edge had no seed: this is its first draw
      select_now(state, block, job, block.height + job.timeout_blocks, effects);
      continue;
    }
    auto eligible = eligible_candidates(state, block, job);
    assign(state, block, job, eligible, reselection_seed(*job.selection_seed, job.selections + 1),
           block.height + job.timeout_blocks, effects);
    // Its shadow: the same inputs (this block's pool without the runners that
    // timed out, its PresenceInput, MRU), the seed derived from the shadow's
    // original one as a live CIP-11 re-selection derives it (choice 136). An
    // M > 1 shadow still waiting for its round has nothing to re-draw yet.
    if (shadowing(block))
      if (auto r = shadow_of(block, effects, id); r && r->seed && !r->pending)
        shadow_draw(state, block, job, eligible, reselection_seed(*r->seed, job.selections), job.selections,
                    members(job), effects);
  }
}

// ---- instructions ----------------------------------------------------------

struct Apply {
  State& state;
  std::map<Address, u128>& balances;
  const BlockContext& block;
  const TxContext& tx;
  Effects& effects;
  Outcome out;

  u128 balance(const Address& a) const {
    auto it = balances.find(a);
    return it == balances.end() ? 0 : it->second;
  }
  RunnerRecord* runner() {
    auto it = state.runners.find(tx.sender);
    return it == state.runners.end() ? nullptr : &it->second;
  }
  std::optional<ChainError> live_runner(RunnerRecord*& r) {
    r = runner();
    if (!r) return ChainError::kUnknownRunner;
    if (r->health == HealthStatus::kDeregistered) return ChainError::kRunnerDeregistered;
    return std::nullopt;
  }

  std::optional<ChainError> operator()(const RegisterRunner& b) {
    RunnerRecord* existing = runner();
    if (existing && existing->health != HealthStatus::kDeregistered) return ChainError::kRunnerExists;
    if (crypto::secp256k1_key_address(b.key) != tx.sender) return ChainError::kKeyNotSender;
    if (b.stake < block.params.min_stake) return ChainError::kStakeBelowMinimum;
    if (balance(tx.sender) < b.stake) return ChainError::kInsufficientFunds;
    balances[tx.sender] -= b.stake;
    if (existing) {  // a returning runner: its earlier incarnation stays readable for pending snapshots
      RunnerRecord& r = edit_runner(state, tx.sender, block.height);
      auto history = std::move(r.history);
      r = runner_record(b, tx.sender, block.height);
      r.history = std::move(history);
    } else {
      state.runners[tx.sender] = runner_record(b, tx.sender, block.height);
    }
    state.index.register_runner(tx.sender);  // a returning runner keeps its index (§7.2)
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const RunnerHeartbeat&) {
    RunnerRecord* r = nullptr;
    if (auto e = live_runner(r)) return e;
    edit_runner(state, tx.sender, block.height).last_heartbeat = block.height;
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const SetRunnerHealth& b) {
    RunnerRecord* r = nullptr;
    if (auto e = live_runner(r)) return e;
    edit_runner(state, tx.sender, block.height).health = b.health;
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const DeregisterRunner&) {
    RunnerRecord* r = nullptr;
    if (auto e = live_runner(r)) return e;
    if (r->active_jobs > 0) return ChainError::kRunnerBusy;
    balances[tx.sender] = balance(tx.sender) + r->stake;
    RunnerRecord& w = edit_runner(state, tx.sender, block.height);
    w.stake = 0;
    w.health = HealthStatus::kDeregistered;
    effects.deregistered.push_back(tx.sender);
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const SubmitJob& b) {
    const bool cip11 = cip11_selection(block.params);
    const std::uint64_t delay = block.params.selection_seed_delay_views;
    // §10.1: the deadline is S + timeout_blocks, and a committee needs two
    // blocks after its push, a commit and then a reveal (a reveal's commit
    // must be in an earlier block); a lone runner needs one. The bounds count
    // F only where the genesis holds F (finality_depth > 0, docs/cip11.md
    // choices 160, 165): other chains keep the rule their blocks were made
    // under, K + 1 for a CIP-11 committee, so they re-execute the same.
    const std::uint64_t f = block.finality_depth;
    const bool drawn_now = b.runners == 1 || !cip11;
    // A CIP-11 committee is drawn at the earliest in S + K + 1 (r_seed's seed
    // comes in the block of its view, at best S + K, and is consumed after
    // it) and pushed once that block is final: commit at S + K + 2 + F,
    // reveal at S + K + 3 + F (choice 160).
    const bool too_short = f > 0 ? b.timeout_blocks <= delay + 2 + f : b.timeout_blocks <= delay + 1;
    if (cip11 && b.runners > 1 && too_short) return ChainError::kTimeoutTooShort;
    // A job drawn now (M = 1, or any M without CIP-11 selection) is assigned
    // in S and pushed once S is final, at S + F (a re-selection at H: pushed
    // at H + F, deadline H + timeout_blocks): a result at S + F + 1 at best,
    // a committee's reveal at S + F + 2 (choice 165).
    if (drawn_now && f > 0 && b.timeout_blocks <= f + (b.runners > 1 ? 1 : 0)) return ChainError::kTimeoutTooShort;
    JobRecord job;
    job.job_id = job_id_of(tx.tx_hash);
    job.submitter = tx.sender;
    job.kind = b.kind;
    job.spec = b.spec;
    job.timeout_blocks = b.timeout_blocks;
    job.runners = b.runners;
    job.max_price = b.max_price;
    job.submitted_at = block.height;
    job.deadline_block = block.height + b.timeout_blocks;  // §10.1: submitted_at + timeout_blocks
    if (b.runners == 1 || !cip11) {
      // Shadow mode: an M > 1 job's CIP-11 draw is bound now to its own future
      // round and block-S candidates, and made at its pass (run_shadow_pending).
      // One CIP-11 would refuse (TimeoutTooShort) has no shadow.
      const bool shadow_pending = b.runners > 1 && shadowing(block) && !too_short;
      std::vector<Candidate> snapshot;
      if (shadow_pending) snapshot = snapshot_candidates(state, block, job, block.height);
      select_now(state, block, job, job.deadline_block, effects);
      if (shadow_pending) {
        const Round r_seed = seed_round(block).value_or(block.round());
        ShadowPending p{block.height,        r_seed.epoch,        r_seed.view, std::move(snapshot), members(job),
                        block.round().epoch, block.round_view(), delay};
        effects.shadow_writes.push_back({job.job_id, ShadowRecord{std::nullopt, std::move(p)}});
      }
    } else {  // §9.2 commit-then-reveal: bound now to a seed round nobody knows yet
      PendingSelectionV1 p;
      p.job_id = job.job_id;
      p.submitted_at = block.height;
      p.selection_state_height = block.height;
      p.committee_size = b.runners;
      p.submission_epoch = block.round().epoch;
      p.submission_view = block.round_view();
      const auto r_seed = seed_round(block);
      if (!r_seed) return ChainError::kTimeoutTooShort;  // no round K views on: never reached (views are u64)
      p.seed_epoch = r_seed->epoch;
      p.seed_view = r_seed->view;
      p.seed_delay_views = delay;
      p.candidates_snapshot_root =
          candidates_snapshot_root(snapshot_candidates(state, block, job, block.height), block.params.reputation);
      job.pending = p;
      job.state = JobState::kPendingSelection;
    }
    out.job_id = job.job_id;
    ++state.jobs_submitted;
    state.jobs.emplace(job.job_id, std::move(job));
    return std::nullopt;
  }

  std::optional<ChainError> open_assignment(const JobId& job_id, JobRecord*& job, Assignment*& a) {
    auto it = state.jobs.find(job_id);
    if (it == state.jobs.end()) return ChainError::kUnknownJob;
    job = &it->second;
    if (terminal(job->state)) return ChainError::kJobClosed;
    a = job->state == JobState::kAssigned ? job->assignment_of(tx.sender) : nullptr;
    if (!a) return ChainError::kNotAssigned;
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const JobResultCommit& b) {
    JobRecord* job = nullptr;
    Assignment* a = nullptr;
    if (auto e = open_assignment(b.job_id, job, a)) return e;
    if (a->commitment) return ChainError::kAlreadyCommitted;
    a->commitment = b.commitment;
    a->committed_at = block.height;
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const JobResultSubmit& b) {
    JobRecord* job = nullptr;
    Assignment* a = nullptr;
    if (auto e = open_assignment(b.job_id, job, a)) return e;
    if (a->result_hash) return ChainError::kAlreadyRevealed;
    if (job->runners > 1) {
      if (!a->commitment || a->committed_at >= block.height) return ChainError::kNoCommitment;
      if (!reveal_window_open(*job, block.height)) return ChainError::kRevealWindowClosed;
    }
    if (a->commitment && *a->commitment != result_commitment(b.job_id, tx.sender, b.result, b.salt))
      return ChainError::kCommitmentMismatch;
    a->result_hash = crypto::keccak256(b.result);
    if (auto agreed = majority(*job)) {
      complete(state, block, *job, b.result, *agreed, effects);
    } else if (std::all_of(job->committee.begin(), job->committee.end(),
                           [](const Assignment& m) { return m.result_hash.has_value(); }) &&
               job->committee.size() == job->runners) {
      end_committee(state, block, *job, EndReason::kFailed, effects);
      shadow_forget(block, effects, job->job_id);
      job->state = JobState::kFailed;
      job->finished_at = block.height;
    }
    return std::nullopt;
  }
  std::optional<ChainError> operator()(const SubmitPresenceCertificate& b) {
    CertificateReport report = submit_certificate(state, block.params, block.validators, block.height, tx.sender, b);
    const auto error = report.error;
    out.certificate = std::move(report);
    return error;
  }
};

}  // namespace

bool reveal_window_open(const JobRecord& job, Height height) {
  bool all = std::all_of(job.committee.begin(), job.committee.end(),
                         [&](const Assignment& m) { return m.commitment && m.committed_at < height; });
  return all || height >= job.assignment_height + std::max<std::uint64_t>(1, job.timeout_blocks / 2);
}

bool reveal_allowed(const JobRecord& job, const Address& runner, Height height) {
  if (job.runners <= 1) return true;
  const Assignment* a = job.assignment_of(runner);
  return a && a->commitment && a->committed_at < height && reveal_window_open(job, height);
}

std::string_view chain_error_name(ChainError e) {
  switch (e) {
#define X(name, text) \
  case ChainError::k##name: return #name;
    CIP11_CHAIN_ERRORS(X)
#undef X
  }
  return "Unknown";
}

std::optional<Beacon> DevBeacon::seed(RoundEpoch epoch, View view) const {
  if (epoch != RoundEpoch{0} || view.value >= height_.value) return std::nullopt;  // block h is proposed in view h
  codec::Writer w;
  w.raw(kBeaconDomain);
  w.fixed(chain_);
  w.u64(view.value);
  Bytes32 a = crypto::keccak256(w.data());
  Bytes32 b = crypto::keccak256(a);
  Beacon beacon;
  beacon.epoch = epoch;
  beacon.view = view;
  beacon.signature.assign(a.begin(), a.end());
  beacon.signature.insert(beacon.signature.end(), b.begin(), b.begin() + 16);  // 48 bytes, as MinSig's G1
  return beacon;
}

Res<PresentSet> presence_of_block(const ChainParams& params, const std::optional<Bytes>& field,
                                  std::uint32_t registry_size) {
  if (!field) {
    if (params.present_first_enabled) return Err{Errc::kBadPresenceVersion};  // rule 2: the field must be there
    return PresentSet(registry_size);
  }
  auto set = decode_presence(*field, registry_size);
  if (!set && !params.present_first_enabled) return PresentSet(registry_size);  // rule 1: treated as empty
  return set;
}

std::optional<Height> next_due(const JobRecord& job) {
  // The first block whose round can be after r_seed: the one after S (views
  // time out, and restart per round epoch, so no view read as a height bounds
  // it, choice 140); run_pending maps the round at each block until it passes.
  if (job.state == JobState::kPendingSelection && job.pending) return job.pending->submitted_at + 1;
  if (job.state == JobState::kAssigned) return job.deadline_block + 1;
  return std::nullopt;
}

void begin_block(State& state, const BlockContext& block, Effects& effects) {
  // The jobs changed since the index last looked are due anew; the others keep their time.
  refresh_due(state);
  // Both passes look only at jobs due by now, each checked against its record
  // again: a job stays due (and is looked at again) until its record changes.
  // A pending selection is due from the block after S (each block maps its
  // seed round, choice 140), an assignment after its deadline height.
  const std::vector<JobId> due = state.due.due_by(block.height);
  run_pending(state, block, due, effects);
  run_shadow_pending(state, block, effects);  // before the deadlines: a re-selection reads what it drew
  run_deadlines(state, block, due, effects);
}

Outcome apply(State& state, std::map<Address, u128>& balances, const BlockContext& block, const TxContext& tx,
              ByteView payload, Effects& effects) {
  auto instruction = decode_instruction(payload);
  if (!instruction) return Outcome{ChainError::kMalformedInstruction, std::nullopt, std::nullopt};
  // Every handler checks all of its rules before its first write, so a refusal
  // leaves `state`, `balances` and `effects` as they were.
  Apply run{state, balances, block, tx, effects, {}};
  run.out.error = std::visit(run, *instruction);
  return run.out;
}

RunnerRecord runner_record(const RegisterRunner& b, const Address& address, Height height) {
  RunnerRecord r;
  r.address = address;
  r.key = b.key;
  r.stake = b.stake;
  r.job_kinds = b.job_kinds;
  r.capabilities = b.capabilities;
  r.max_concurrent = b.max_concurrent;
  r.price = b.price;
  r.registered_at = height;
  r.last_heartbeat = height;  // registering is the first heartbeat
  return r;
}

JobId job_id_of(const Bytes32& tx_hash) {
  return JobId{crypto::keccak256({as_bytes(std::string_view("cowboy/cip11-job-id/v1")), tx_hash})};
}

std::vector<Candidate> eligible_candidates(const State& state, const BlockContext& block, const JobRecord& job) {
  std::vector<Candidate> out;
  for (const auto& [address, r] : state.runners)
    if (passes_filters(r, job, block.height, block.params)) out.push_back(candidate_of(state, block, r));
  return out;  // std::map order is address order
}

std::vector<Candidate> snapshot_candidates(const State& state, const BlockContext& block, const JobRecord& job,
                                           Height submitted_at) {
  std::vector<Candidate> out;
  for (const auto& [address, current] : state.runners) {
    const RunnerRecord* r = record_before(current, submitted_at);
    if (r && passes_filters(*r, job, submitted_at, block.params)) out.push_back(candidate_of(state, block, *r));
  }
  return out;
}

const Assignment* JobRecord::assignment_of(const Address& runner) const {
  for (const auto& a : committee)
    if (a.runner == runner) return &a;
  return nullptr;
}
Assignment* JobRecord::assignment_of(const Address& runner) {
  return const_cast<Assignment*>(std::as_const(*this).assignment_of(runner));
}

std::string_view job_state_name(JobState s) {
  switch (s) {
    case JobState::kPendingSelection: return "PendingSelection";
    case JobState::kAssigned: return "Assigned";
    case JobState::kCompleted: return "Completed";
    case JobState::kTimedOut: return "TimedOut";
    case JobState::kFailed: return "Failed";
  }
  return "Unknown";
}

}  // namespace cowboy::cip11::chain
