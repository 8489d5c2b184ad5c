// §9.2 rounds and the round arithmetic over an epoch schedule: what the
// machine (pending selections, machine.h) and the round seeds (seed.h) both
// read. Pure.
#pragma once

#include <compare>
#include <optional>
#include <vector>

#include "cip11/ids.h"

namespace cowboy::cip11::chain {

/// A §9.2 round: a view of a round epoch (cip11/ids.h; on the wire and in
/// the alphas their u64s, epoch first).
struct Round {
  RoundEpoch epoch{};
  View view{};
  auto operator<=>(const Round&) const = default;
};

/// The epoch schedule round arithmetic runs over: how many views each closed
/// round epoch has (views 0..n-1), in epoch order (index = the epoch's value);
/// the epoch after the last closed one is open, its length not known yet. On
/// the devchain's rotating validators a round epoch is the validator-set epoch
/// of the blocks that take its rounds, and it closes at its last block's view
/// (docs/cip11.md choice 140); a lone producer's one round epoch 0 never closes.
struct EpochSchedule {
  std::vector<std::uint64_t> closed_epoch_views;
  /// The open epoch: the one after the last closed.
  RoundEpoch open_epoch() const { return RoundEpoch{closed_epoch_views.size()}; }
};

/// §9.2 advance_round: the round k views after r in Round order, carrying into
/// the next epoch at an epoch's end. nullopt when r is not a round of the
/// schedule or the view would overflow: the caller stays pending, never substitutes.
std::optional<Round> advance_round(const EpochSchedule& schedule, Round r, std::uint64_t k);
/// The round just before r: the last view of the epoch before at an epoch's
/// first view; r itself at Round(0, 0) (nothing is before the genesis round).
Round previous_round(const EpochSchedule& schedule, Round r);
/// The round advance_round(r_submit, k) lands in when it is certain under
/// `schedule` as read by a block of round `now` (in the open epoch): a round
/// before `now` (the open epoch's views up to now's exist), whatever the
/// open epoch's length turns out to be. nullopt while it is at or after `now`
/// (the open epoch may close before it, choice 140) or names no round.
std::optional<Round> mapped_round(const EpochSchedule& schedule, Round r_submit, std::uint64_t k, Round now);

/// The devchain's lone producer's schedule: one open round epoch 0.
inline EpochSchedule devchain_schedule() { return {}; }
/// Round(0, v), the lone producer's round of view v.
inline constexpr Round devchain_round(View v) { return Round{RoundEpoch{0}, v}; }

}  // namespace cowboy::cip11::chain
