// Checkpoints and the history floor (docs/transit.md, decisions 64-69): the
// commands, outcomes, query and result of root-history reclamation. Same
// conventions as types.h: one field list per type, declaration order is wire
// order. Only a genesis with allow_history_trim accepts the two commands.
#pragma once

#include "transit/contract/values.h"

namespace cowboy::transit {

// ---- commands ------------------------------------------------------------------

/// Publishes a checkpoint at its own position P: its receipt carries the roots
/// of the state it was decided on (P - 1), so its journal entry is a complete,
/// root-bearing one that a later floor can rest on. Moves nothing by itself.
struct Checkpoint {
  static constexpr std::string_view kName = "checkpoint";
  bool operator==(const Checkpoint&) const = default;
};
template <typename V> void fields(V&, Checkpoint&) {}

/// The maintenance step: advances the history floor to the checkpoint at
/// `floor`, whose committed entry must carry `roots`. Journal entries below
/// the floor are then deleted; the floor's own entry stays.
struct AdvanceFloor {
  static constexpr std::string_view kName = "advance_floor";
  Position floor{};
  Digest roots{};
  bool operator==(const AdvanceFloor&) const = default;
};
template <typename V> void fields(V& v, AdvanceFloor& t) { v("floor", t.floor)("roots", t.roots); }

// ---- receipts ------------------------------------------------------------------

struct Checkpointed {
  static constexpr std::string_view kName = "checkpointed";
  Digest roots{};  // SHA-256 of the published state at the position before the checkpoint
  bool operator==(const Checkpointed&) const = default;
};
template <typename V> void fields(V& v, Checkpointed& t) { v("roots", t.roots); }

struct FloorAdvanced {
  static constexpr std::string_view kName = "floor_advanced";
  Position floor{};
  Position previous{};  // the floor before (0: none)
  bool operator==(const FloorAdvanced&) const = default;
};
template <typename V> void fields(V& v, FloorAdvanced& t) { v("floor", t.floor)("previous", t.previous); }

// ---- queries ---------------------------------------------------------------------

/// The realm's floor and latest checkpoint (no history: no entry is returned).
struct CheckpointQuery {
  static constexpr std::string_view kName = "checkpoint_status";
  bool operator==(const CheckpointQuery&) const = default;
};
template <typename V> void fields(V&, CheckpointQuery&) {}

struct CheckpointInfo {
  static constexpr std::string_view kName = "CheckpointInfo";
  Position position{};
  Digest roots{};
  bool operator==(const CheckpointInfo&) const = default;
};
template <typename V> void fields(V& v, CheckpointInfo& t) { v("position", t.position)("roots", t.roots); }

struct CheckpointStatus {
  static constexpr std::string_view kName = "checkpoint_status";
  Position floor{};  // journal entries below it are trimmed (0: none)
  std::optional<CheckpointInfo> latest;
  bool operator==(const CheckpointStatus&) const = default;
};
template <typename V> void fields(V& v, CheckpointStatus& t) { v("floor", t.floor)("latest", t.latest); }

}  // namespace cowboy::transit
