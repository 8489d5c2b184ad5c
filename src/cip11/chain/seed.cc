#include "cip11/chain/seed.h"

#include <sodium.h>

#include <limits>

#include "common/codec.h"
#include "common/crypto.h"

namespace cowboy::cip11::chain {
namespace {

constexpr std::string_view kAlphaDomain = "cowboy/devchain-seed/v1";
constexpr std::string_view kNullifiedDomain = "cowboy/devchain-nullified-seed/v1";
constexpr std::string_view kGenesisDomain = "cowboy/devchain-genesis-seed/v1";

SeedOutput sha512(ByteView data) {
  crypto::init();
  SeedOutput out;
  crypto_hash_sha512(out.data(), data.data(), data.size());
  return out;
}

void put_round(codec::Writer& w, const Bytes32& chain, Round r) {
  w.fixed(chain);
  w.u64(r.epoch.value);  // big-endian, as seed_material_v1's epoch_be8 and view_be8
  w.u64(r.view.value);
}

}  // namespace

std::optional<Round> advance_round(const EpochSchedule& schedule, Round r, std::uint64_t k) {
  const auto& closed = schedule.closed_epoch_views;
  if (r.epoch.value < closed.size() && r.view.value >= closed[r.epoch.value]) return std::nullopt;  // no such round
  Round at = r;
  while (at.epoch.value < closed.size()) {
    const std::uint64_t left = closed[at.epoch.value] - at.view.value;  // views from `at` to the epoch's end
    if (k < left) return Round{at.epoch, at.view + k};
    k -= left;
    at = Round{at.epoch + 1, View{0}};
  }
  if (k > std::numeric_limits<std::uint64_t>::max() - at.view.value) return std::nullopt;
  return Round{at.epoch, at.view + k};
}

Round previous_round(const EpochSchedule& schedule, Round r) {
  if (r.view > View{0}) return Round{r.epoch, r.view - 1};
  const auto& closed = schedule.closed_epoch_views;
  for (std::uint64_t e = r.epoch.value; e > 0; --e)  // an epoch of no views is skipped (none on the devchain)
    if (e - 1 < closed.size() && closed[e - 1] > 0) return Round{RoundEpoch{e - 1}, View{closed[e - 1] - 1}};
  return r;
}

std::optional<Round> mapped_round(const EpochSchedule& schedule, Round r_submit, std::uint64_t k, Round now) {
  auto r = advance_round(schedule, r_submit, k);
  if (!r || !(*r < now)) return std::nullopt;
  return r;
}

SeedOutput genesis_seed(const Bytes32& chain_instance_id) {
  codec::Writer w;
  w.raw(kGenesisDomain);
  w.fixed(chain_instance_id);
  return sha512(w.data());
}

Bytes seed_alpha(const Bytes32& chain_instance_id, Round r, const SeedOutput& previous) {
  codec::Writer w;
  w.raw(kAlphaDomain);
  put_round(w, chain_instance_id, r);
  w.fixed(previous);
  return w.data();
}

SeedOutput nullified_seed(const Bytes32& chain_instance_id, Round r, const SeedOutput& previous) {
  codec::Writer w;
  w.raw(kNullifiedDomain);
  put_round(w, chain_instance_id, r);
  w.fixed(previous);
  return sha512(w.data());
}

Beacon beacon_of(const RoundSeed& seed) {
  Beacon b;
  b.epoch = seed.round.epoch;
  b.view = seed.round.view;
  b.scheme_id = seed.proof ? kSchemeDevchainVrf : kSchemeDevchainDerived;
  b.signature.assign(seed.output.begin(), seed.output.end());
  if (seed.proof) b.evidence.assign(seed.proof->begin(), seed.proof->end());
  return b;
}

RoundSeed prove_round_seed(const crypto::ecvrf::Seed& leader_key, const Bytes32& chain_instance_id, Round r,
                           const SeedOutput& previous) {
  const auto proof = crypto::ecvrf::prove(leader_key, seed_alpha(chain_instance_id, r, previous));
  return RoundSeed{r, proof, crypto::ecvrf::proof_to_hash(proof).value()};  // a proof of ours decodes
}

Result<RoundSeed, crypto::ecvrf::Error> verify_round_seed(const crypto::ecvrf::PublicKey& leader,
                                                          const Bytes32& chain_instance_id, Round r,
                                                          const SeedOutput& previous,
                                                          const crypto::ecvrf::Proof& proof) {
  auto output = crypto::ecvrf::verify(leader, proof, seed_alpha(chain_instance_id, r, previous));
  if (!output) return Err(output.error());
  return RoundSeed{r, proof, *output};
}

std::string_view to_string(SeedError e) {
  switch (e) {
    case SeedError::kRoundNotAfter: return "the round is not after the last seed round";
    case SeedError::kNotInSchedule: return "the epoch schedule has no such round";
    case SeedError::kGapTooLong: return "too many nullified rounds before the round";
    case SeedError::kNoLeader: return "no validator leads the round";
    case SeedError::kProofRefused: return "the round's seed proof does not verify";
    case SeedError::kUnknownRound: return "a consumed seed names a round with no known seed";
    case SeedError::kConsumedMismatch: return "a consumed seed is not its round's output and proof";
  }
  return "unknown seed error";
}

SeedChain::SeedChain(const Bytes32& chain_instance_id, EpochSchedule schedule, LeaderOf leader_of)
    : chain_(chain_instance_id), schedule_(std::move(schedule)), leader_of_(std::move(leader_of)) {
  seeds_.emplace(kGenesisRound, RoundSeed{kGenesisRound, std::nullopt, genesis_seed(chain_)});
}

Result<std::pair<std::vector<RoundSeed>, SeedOutput>, SeedRefusal> SeedChain::gap_to(Round r) const {
  if (r <= last_) return Err(SeedRefusal{SeedError::kRoundNotAfter, std::nullopt});
  std::vector<RoundSeed> nullified;
  SeedOutput previous = last_output();
  const EpochSchedule schedule = schedule_at(r);
  if (r.epoch > schedule.open_epoch()) return Err(SeedRefusal{SeedError::kNotInSchedule, std::nullopt});
  for (auto next = advance_round(schedule, last_, 1); next != r; next = advance_round(schedule, *next, 1)) {
    // Rounds run in order, so stepping from last_ meets r unless the schedule skips it.
    if (!next || r < *next) return Err(SeedRefusal{SeedError::kNotInSchedule, std::nullopt});
    if (nullified.size() >= kMaxNullifiedRun) return Err(SeedRefusal{SeedError::kGapTooLong, std::nullopt});
    previous = nullified_seed(chain_, *next, previous);
    nullified.push_back(RoundSeed{*next, std::nullopt, previous});
  }
  return std::pair(std::move(nullified), previous);
}

Result<SeedChain::Advance, SeedRefusal> SeedChain::advance(Round r,
                                                           const std::optional<crypto::ecvrf::Proof>& proof) const {
  auto gap = gap_to(r);
  if (!gap) return Err(gap.error());
  Advance out = std::move(gap->first);
  if (!proof) {
    out.push_back(RoundSeed{r, std::nullopt, nullified_seed(chain_, r, gap->second)});
    return out;
  }
  auto leader = leader_of_(r);
  if (!leader) return Err(SeedRefusal{SeedError::kNoLeader, std::nullopt});
  auto seed = verify_round_seed(*leader, chain_, r, gap->second, *proof);
  if (!seed) return Err(SeedRefusal{SeedError::kProofRefused, seed.error()});
  out.push_back(std::move(*seed));
  return out;
}

EpochSchedule SeedChain::schedule_at(Round r) const {
  EpochSchedule out = schedule_;
  // One epoch at a time: every epoch has a block, so a block is never two ahead.
  if (r.epoch > out.open_epoch() && last_.epoch == out.open_epoch())
    out.closed_epoch_views.push_back(last_.view.value + 1);
  return out;
}

void SeedChain::resume_after(RoundSeed anchor) {
  seeds_.clear();
  last_ = anchor.round;
  seeds_.emplace(anchor.round, std::move(anchor));
}

void SeedChain::commit(Advance seeds) {
  for (auto& s : seeds) {
    schedule_ = schedule_at(s.round);  // a round of the next epoch closes the open one
    last_ = s.round;
    seeds_.insert_or_assign(s.round, std::move(s));
  }
}

Result<Unit, SeedRefusal> SeedChain::take(Round r, const std::optional<crypto::ecvrf::Proof>& proof) {
  auto seeds = advance(r, proof);
  if (!seeds) return Err(seeds.error());
  commit(std::move(*seeds));
  return Unit{};
}

Result<crypto::ecvrf::Proof, SeedRefusal> SeedChain::prove(const crypto::ecvrf::Seed& leader_key, Round r) const {
  auto gap = gap_to(r);
  if (!gap) return Err(gap.error());
  return *prove_round_seed(leader_key, chain_, r, gap->second).proof;
}

std::optional<RoundSeed> SeedChain::at(Round r) const {
  auto it = seeds_.find(r);
  if (it == seeds_.end()) return std::nullopt;
  return it->second;
}

void SeedChain::forget_before(Round r) {
  for (auto it = seeds_.begin(); it != seeds_.end() && it->first < r && it->first != last_;) it = seeds_.erase(it);
}

Result<Unit, SeedError> check_consumed(const SeedChain& seeds, std::span<const ConsumedSeed> consumed) {
  for (const auto& entry : consumed) {
    auto seed = seeds.at({entry.epoch, entry.view});
    if (!seed) return Err(SeedError::kUnknownRound);
    const Beacon expected = beacon_of(*seed);
    if (entry.signature != expected.signature || entry.evidence != expected.evidence)
      return Err(SeedError::kConsumedMismatch);
  }
  return Unit{};
}

std::optional<Beacon> SeedsBefore::seed(RoundEpoch epoch, View view) const {
  const Round r{epoch, view};
  if (!(r < limit_)) return std::nullopt;
  if (auto s = seeds_.at(r)) return beacon_of(*s);
  for (const auto& s : taking_)
    if (s.round == r) return beacon_of(s);
  return std::nullopt;
}

}  // namespace cowboy::cip11::chain
