// The maintenance process's loop (`transitd --maintain`, docs/transit.md
// decisions 50-56): a trusted client of the node, holding realm-wide control
// authority, that acts only through signed commands over the node's HTTP API.
// Each round it
//   1. records the retirement of every process that has ended without a
//      command (an expired suspension, a required dependency's end),
//   2. resolves the head of every route it can: delivers it (or, into a
//      retired destination, disposes of it) or, when its source is
//      terminated, cancels it; heads whose destination is uninitialized or
//      fenced wait,
//   3. closes the effect intents nobody can take further: an unattempted
//      intent of a terminal caller `unattempted_cancel`, an open effect
//      whose reconciliation deadline trusted time has reached `deadline`,
//   4. collects, one signed collect each, the records the node lists as
//      collectable (processes admitted with allow_collection, every gate
//      passing), at most `collects_per_pass` a pass (decision 155),
//   5. when the realm opts in to history trimming, publishes a checkpoint
//      every `checkpoint_every` positions (if asked to) and advances the
//      history floor onto the latest checkpoint (`trim_history`),
//   6. every `storage_every` of trusted time (if asked to), fences storage,
//      recording the read-lease grace once it has passed, and compacts at
//      most `compacts_per_run` of the leaves the node lists as most needing
//      it (decisions 181, 183).
// The list is `kPasses`.
// It keeps no state of its own: its work is found by bounded, paged listings
// and each act is one signed command the node rechecks, so a SIGKILL at any
// moment loses nothing (the next start lists the same work) and duplicates
// nothing (a resolved output or a recorded retirement is refused as such).
// Two maintainers at once are safe for the same reason: the node's
// conditional append decides, and the loser counts a lost race, not an error.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "common/clock.h"
#include "common/result.h"
#include "transit/client.h"
#include "transit/maintain/metrics.h"

namespace cowboy::transit::maintain {

/// What the maintainer's principal holds at realm scope, unscoped by PID:
/// courier delivers and cancels outputs, pid_admin records retirements and,
/// with effect, closes the effects of others' processes (decisions 45, 49),
/// realm_control checkpoints and advances the floor.
inline constexpr std::uint64_t kRequiredPermissions = kInspect | kEffect | kCourier | kPidAdmin | kRealmControl;

struct Options {
  ClientOptions client;
  std::chrono::milliseconds idle{20};          // the pause after a round that found nothing to do
  std::chrono::milliseconds unreachable{250};  // the pause after the node did not answer
  std::size_t pages_per_pass = 16;             // listing pages read per pass, at most
  std::size_t collects_per_pass = 64;          // collect commands sent per collection pass, at most
  /// Publish a checkpoint once this many positions were decided after the
  /// latest one, when the realm opts in to history trimming; 0: never.
  /// Taken as at least kMinCheckpointEvery.
  std::uint64_t checkpoint_every = 0;
  /// A storage run - a storage_fence, then compactions - once this much
  /// trusted time has passed since the stored fence (decision 181); 0: never.
  std::chrono::milliseconds storage_every{0};
  std::size_t compacts_per_run = 8;  // storage_compact commands per storage run, at most
};
/// The floor's own advance takes a position after each checkpoint, which must
/// not call for the next one (a maintainer would feed itself).
inline constexpr std::uint64_t kMinCheckpointEvery = 2;

class Maintainer {
 public:
  Maintainer(Options options, const Clock& clock);

  /// Waits for the node (until stop()) and checks that it supports the
  /// maintenance operations and that the principal holds kRequiredPermissions
  /// realm-wide without a PID scope.
  Result<Unit, std::string> authenticate();

  enum class Round { kWorked, kIdle, kUnreachable };
  /// One round; kWorked when something changed (by this maintainer or another).
  Round round();
  /// Rounds until stop(): the next at once after work, after a pause otherwise.
  void run();
  void stop();

  const Metrics& metrics() const { return metrics_; }

 private:
  enum class Act { kDone, kLostRace, kWaiting, kRefused, kUnreachable };
  Act act(const Command& op);
  /// What a command's failure means, counted and logged once here.
  Act failed(const ClientError& error, std::string_view op);
  /// A listing page, or nothing: the cut went stale (list again), the node did not answer, or it refused.
  enum class Listed { kPage, kStale, kUnreachable, kRefused };
  Listed list(QueryOp op, Response& response);
  /// Acts on every item of a paged listing - `listing(cursor)` answers a
  /// `Page`, `act_on(item)` names the item and the command that resolves it -
  /// reading at most `pages_per_pass` pages. Once an act changed something
  /// the cut has moved, and the listing starts again at its first page (what
  /// is left is listed again). `seen`: the items listed.
  template <typename Page, typename Listing, typename ActOn>
  Round act_on_listed(Listing listing, ActOn act_on, std::set<Id>& seen);
  Round terminal_pass();
  Round courier_pass();
  Round effects_pass();
  /// Acts on every effect `filter` lists: cancel_effect or close_effect deadline.
  Round close_effects(EffectFilter filter);
  Round trim_pass();
  Round collect_pass();
  Round storage_pass();
  /// The passes of a round, in order; each lists its own work in bounded
  /// pages and acts by signed commands. Ended processes first: recording a
  /// destination's retirement turns its waiting routes into disposals, and
  /// its unattempted intents into cancellable ones. More maintenance is one
  /// more entry here: a `Round xxx_pass()` that returns kWorked when it
  /// changed something.
  static constexpr Round (Maintainer::*kPasses[])() = {&Maintainer::terminal_pass, &Maintainer::courier_pass,
                                                       &Maintainer::effects_pass, &Maintainer::collect_pass,
                                                       &Maintainer::trim_pass, &Maintainer::storage_pass};
  void reachable(bool up);
  /// Sleeps `pause` or until stop(); false once stopping.
  bool pause(std::chrono::milliseconds pause);
  /// This process's clock, read as trusted time (the node judges it by its own).
  TrustedMs trusted_now() const { return TrustedMs{clock_.now_ms()}; }

  Options options_;
  const Clock& clock_;
  Client client_;
  Metrics metrics_;
  bool history_trim_ = false;  // the realm's genesis opts in (allow_history_trim); fixed for its life
  bool collection_ = false;    // the node reports collection (decision 155)
  bool storage_ = false;       // the node reports storage_maintenance (decision 181)
  TrustedMs next_storage_ms_{};  // no storage run before this trusted time
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

template <typename Page, typename Listing, typename ActOn>
Maintainer::Round Maintainer::act_on_listed(Listing listing, ActOn act_on, std::set<Id>& seen) {
  std::optional<Cursor> cursor;
  bool worked = false;
  for (std::size_t pages = 0; pages < options_.pages_per_pass; ++pages) {
    Response response;
    switch (list(listing(cursor), response)) {
      case Listed::kPage: break;
      case Listed::kStale: cursor.reset(); continue;
      case Listed::kUnreachable: return Round::kUnreachable;
      case Listed::kRefused: return worked ? Round::kWorked : Round::kIdle;
    }
    const auto& page = std::get<Page>(response.result);
    bool moved = false;
    for (const auto& item : page.items.items) {
      const auto [id, command] = act_on(item);
      seen.insert(id);
      switch (act(command)) {
        case Act::kUnreachable: return Round::kUnreachable;
        case Act::kDone:
        case Act::kLostRace: moved = true; break;
        case Act::kWaiting:
        case Act::kRefused: break;
      }
    }
    worked = worked || moved;
    if (moved) cursor.reset();  // our own acts moved the cut
    else if (page.cursor) cursor = page.cursor;
    else break;
  }
  return worked ? Round::kWorked : Round::kIdle;
}

}  // namespace cowboy::transit::maintain
