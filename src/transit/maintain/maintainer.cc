// The loop, its one act (a signed command, classified) and its one listing
// read; the passes are in courier.cc, terminal.cc, effects.cc and trim.cc.
#include "transit/maintain/maintainer.h"

#include "common/log.h"
#include "transit/contract/operations.h"

namespace cowboy::transit::maintain {
namespace {

// What a refusal means to a maintainer. A lost race - someone resolved it or
// recorded it first, or time fenced the source after it was listed, or the
// executor or another maintainer closed the effect first, or another
// maintainer sharing this principal took the sequence - is the conditional
// append deciding, not an error; a destination that cannot admit yet waits.
enum class Meaning { kLostRace, kWaiting, kError };
Meaning meaning(Reason reason) {
  switch (reason) {
    case Reason::kResolved:
    case Reason::kRouteOrder:
    case Reason::kSourceTerminated:
    case Reason::kRetirementRecorded:
    case Reason::kEffectClosed:
    case Reason::kSequenceReused:
    case Reason::kSequenceGap:
    case Reason::kAlreadyCollected:  // another maintainer collected it first
    case Reason::kStorageEpochChanged:
    case Reason::kCompactionCursorChanged: return Meaning::kLostRace;  // ... or fenced or compacted first
    case Reason::kUninitialized:
    case Reason::kMissingDependency:
    case Reason::kReadLeaseGracePending: return Meaning::kWaiting;  // the node's trusted time is not there yet
    default: return Meaning::kError;
  }
}

std::string op_name(const Command& op) {
  return std::visit([](const auto& o) { return std::string(std::decay_t<decltype(o)>::kName); }, op);
}

}  // namespace

Maintainer::Maintainer(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), client_(options_.client) {}

void Maintainer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

bool Maintainer::pause(std::chrono::milliseconds pause) {
  std::unique_lock lock(mutex_);
  wake_.wait_for(lock, pause, [this] { return stopping_; });
  return !stopping_;
}

void Maintainer::reachable(bool up) {
  if (metrics_.up.exchange(up) != up) {
    if (up) log::info("transit_maintain_node_answers", log::field("position", metrics_.node_position.load()));
    else log::warn("transit_maintain_node_unreachable", log::field("port", options_.client.port));
  }
}

Result<Unit, std::string> Maintainer::authenticate() {
  auto caps = client_.capabilities();
  while (!caps.ok()) {
    if (caps.error().kind != ClientError::Kind::kUncertain) return Err{"capabilities: " + caps.error().message};
    reachable(false);
    if (!pause(options_.unreachable)) return Err{std::string("stopped before the node answered")};
    caps = client_.capabilities();
  }
  const auto& supported = caps->supported.items;
  for (auto needed : {capability::kCourierDelivery, capability::kMaintenance, capability::kEffectReconciliation})
    if (std::none_of(supported.begin(), supported.end(), [&](const auto& name) { return name.value == needed; }))
      return Err{"the node does not support " + std::string(needed)};
  history_trim_ = caps->allow_history_trim;
  collection_ = std::any_of(supported.begin(), supported.end(),
                            [](const auto& name) { return name.value == capability::kCollection; });
  storage_ = std::any_of(supported.begin(), supported.end(),
                         [](const auto& name) { return name.value == capability::kStorageMaintenance; });
  if (options_.checkpoint_every && !history_trim_)
    log::warn("transit_maintain_no_checkpoints", log::field("why", "the realm's genesis keeps its whole history"));
  auto me = client_.identity();
  if (!me.ok()) return Err{"identity: " + me.error().message};
  reachable(true);
  if (me->pid_scope) return Err{"principal " + std::to_string(me->principal.value) + " is scoped to a PID; a maintainer acts realm-wide"};
  if (!me->permissions.has(kRequiredPermissions)) {
    std::string missing;
    for (std::size_t i = 0; i < kPermissionNames.size(); ++i)
      if ((kRequiredPermissions & ~me->permissions.bits) & (std::uint64_t{1} << i))
        missing.append(missing.empty() ? "" : ", ").append(kPermissionNames[i]);
    return Err{"principal " + std::to_string(me->principal.value) + " lacks realm-wide " + missing + " (holds " +
               std::to_string(me->permissions.bits) + "; a maintainer needs inspect, effect, courier, pid_admin and "
               "realm_control)"};
  }
  return Unit{};
}

Maintainer::Act Maintainer::act(const Command& op) {
  auto r = client_.submit(op);
  if (r.ok()) {
    reachable(true);
    metrics_.node_position = r->position.value;
    std::visit(
        [&](const auto& o) {
          using O = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<O, Delivered>) ++(o.input ? metrics_.delivered : metrics_.disposed);
          else if constexpr (std::is_same_v<O, OutputCancelled>) ++metrics_.cancelled;
          else if constexpr (std::is_same_v<O, RetirementRecorded>)
            ++(o.ending == Ending::kSuspensionExpired ? metrics_.retired_expired : metrics_.retired_dependency);
          else if constexpr (std::is_same_v<O, EffectChanged>) {
            if (o.closure == ClosureKind::kUnattemptedCancel) ++metrics_.effects_cancelled;
            else if (o.closure == ClosureKind::kDeadline) ++metrics_.effects_deadline;
          } else if constexpr (std::is_same_v<O, Checkpointed>) ++metrics_.checkpoints;
          else if constexpr (std::is_same_v<O, Collected>) ++(o.complete ? metrics_.collected : metrics_.collect_steps);
          else if constexpr (std::is_same_v<O, StorageFenced>) {
            ++metrics_.fences;
            metrics_.storage_epoch = o.epoch;
            metrics_.grace_below = o.grace_below;
          } else if constexpr (std::is_same_v<O, StorageCompacted>) {
            ++metrics_.compactions;
            metrics_.compaction_cursor = o.cursor;
          }
        },
        r->outcome);
    return Act::kDone;
  }
  return failed(r.error(), op_name(op));
}

Maintainer::Act Maintainer::failed(const ClientError& e, std::string_view op) {
  if (e.kind == ClientError::Kind::kUncertain) {
    ++metrics_.uncertain;
    reachable(false);
    return Act::kUnreachable;  // the client keeps the signed bytes and resends them first
  }
  reachable(true);
  if (e.rejection) switch (meaning(e.rejection->reason)) {
      case Meaning::kLostRace:
        ++metrics_.lost_races;
        log::debug("transit_maintain_lost_race", log::field("op", op), log::field("reason", name_of(e.rejection->reason)));
        return Act::kLostRace;
      case Meaning::kWaiting: return Act::kWaiting;
      case Meaning::kError: break;
    }
  ++metrics_.refused;
  log::warn("transit_maintain_refused", log::field("op", op), log::field("why", e.message));
  return Act::kRefused;
}

Maintainer::Listed Maintainer::list(QueryOp op, Response& response) {
  ++metrics_.queries;
  auto r = client_.query(std::move(op));
  if (r.ok()) {
    reachable(true);
    metrics_.node_position = r->position.value;
    response = std::move(*r);
    return Listed::kPage;
  }
  const auto& e = r.error();
  if (e.kind == ClientError::Kind::kUncertain) {
    ++metrics_.uncertain;
    reachable(false);
    return Listed::kUnreachable;
  }
  reachable(true);
  if (e.rejection && e.rejection->code == RejectionCode::kStaleCut) {
    ++metrics_.stale_cuts;
    return Listed::kStale;
  }
  ++metrics_.refused;
  log::warn("transit_maintain_listing_refused", log::field("why", e.message));
  return Listed::kRefused;
}

Maintainer::Round Maintainer::round() {
  const auto started = std::chrono::steady_clock::now();
  ++metrics_.rounds;
  Round result = Round::kIdle;
  for (auto pass : kPasses) {
    const Round r = (this->*pass)();
    if (r == Round::kUnreachable) return r;
    if (r == Round::kWorked) result = r;
  }
  metrics_.last_round_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
  return result;
}

void Maintainer::run() {
  for (;;) {
    const Round r = round();
    if (r == Round::kWorked) {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      continue;
    }
    if (!pause(r == Round::kUnreachable ? options_.unreachable : options_.idle)) return;
  }
}

}  // namespace cowboy::transit::maintain
