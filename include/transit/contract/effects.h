// Effects to closure (docs/transit.md, decisions 43-49): the verbs that take
// a captured effect intent through its attempt and observations to exactly
// one closure, the effect read and listing, and the one rule of which
// phase/observation/closure combinations a record may hold. Same conventions
// as types.h: one field list per type, declaration order is wire order.
//
//   authorized --attempt_effect--> attempted --observe_effect (final)--> closed: observed
//        |                            |------observe_effect (budget-th)-> closed: observation_budget
//        |                            |------close_effect abandoned-----> closed: abandoned
//        |----------------------------+------close_effect deadline------> closed: deadline
//        `--cancel_effect (terminal caller)--------------------------------> closed: unattempted_cancel
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// An intent's observation budget is 1..kMaxObservations (decision 44); the
/// record keeps every observation, so a read is bounded by it.
inline constexpr std::size_t kMaxObservations = 16;

enum class EffectPhase : std::uint8_t { kAuthorized, kAttempted, kClosed };
template <> struct EnumTraits<EffectPhase> {
  static constexpr std::array<std::string_view, 3> kNames = {"authorized", "attempted", "closed"};
};

enum class ClosureKind : std::uint8_t { kObserved, kObservationBudget, kAbandoned, kDeadline, kUnattemptedCancel };
template <> struct EnumTraits<ClosureKind> {
  static constexpr std::array<std::string_view, 5> kNames = {"observed", "observation_budget", "abandoned", "deadline",
                                                             "unattempted_cancel"};
};

/// What close_effect may claim; the other closures come from observations and cancel_effect.
enum class CloseKind : std::uint8_t { kAbandoned, kDeadline };
template <> struct EnumTraits<CloseKind> {
  static constexpr std::array<std::string_view, 2> kNames = {"abandoned", "deadline"};
};

// ---- commands -------------------------------------------------------------------

/// The executor starts the external work, once, before the reconciliation deadline.
struct AttemptEffect {
  static constexpr std::string_view kName = "attempt_effect";
  Id effect = 0;
  bool operator==(const AttemptEffect&) const = default;
};
template <typename V> void fields(V& v, AttemptEffect& t) { v("effect", t.effect); }

/// The executor records a result: opaque bytes the connector owns. `final`:
/// the outcome is known, which closes the effect as observed.
struct ObserveEffect {
  static constexpr std::string_view kName = "observe_effect";
  Id effect = 0;
  InputValue result;
  bool final = false;
  bool operator==(const ObserveEffect&) const = default;
};
template <typename V> void fields(V& v, ObserveEffect& t) { v("effect", t.effect)("result", t.result)("final", t.final); }

/// abandoned: the executor gives its attempt up (or an administrator closes an
/// orphaned one); deadline: the reconciliation deadline has passed.
struct CloseEffect {
  static constexpr std::string_view kName = "close_effect";
  Id effect = 0;
  CloseKind kind = CloseKind::kAbandoned;
  bool operator==(const CloseEffect&) const = default;
};
template <typename V> void fields(V& v, CloseEffect& t) { v("effect", t.effect)("kind", t.kind); }

/// Administrative: closes an unattempted intent of a terminal (retired) caller.
struct CancelEffect {
  static constexpr std::string_view kName = "cancel_effect";
  Id effect = 0;
  bool operator==(const CancelEffect&) const = default;
};
template <typename V> void fields(V& v, CancelEffect& t) { v("effect", t.effect); }

// ---- receipts ---------------------------------------------------------------------

struct EffectChanged {
  static constexpr std::string_view kName = "effect_changed";
  Id effect = 0;
  Pid pid{};  // the caller
  EffectPhase phase = EffectPhase::kAuthorized;
  std::optional<ClosureKind> closure;
  std::optional<Id> input;  // where an observation entered the caller's mailbox (null: evidence only)
  bool operator==(const EffectChanged&) const = default;
};
template <typename V> void fields(V& v, EffectChanged& t) {
  v("effect", t.effect)("pid", t.pid)("phase", t.phase)("closure", t.closure)("input", t.input);
}

// ---- queries ------------------------------------------------------------------------

struct EffectRead {
  static constexpr std::string_view kName = "effect";
  Id effect = 0;
  bool operator==(const EffectRead&) const = default;
};
template <typename V> void fields(V& v, EffectRead& t) { v("effect", t.effect); }

/// Which effects a listing shows. unresolved: not closed. cancellable: what
/// cancel_effect would close now (authorized, caller terminal). overdue: what
/// close_effect deadline would close now (not closed, deadline reached). The
/// last two are judged by trusted time at each page (decision 48).
enum class EffectFilter : std::uint8_t { kAll, kUnresolved, kCancellable, kOverdue };
template <> struct EnumTraits<EffectFilter> {
  static constexpr std::array<std::string_view, 4> kNames = {"all", "unresolved", "cancellable", "overdue"};
};

/// Effects in id order, of one process or (null) of every process the caller may inspect.
struct ListEffects {
  static constexpr std::string_view kName = "list_effects";
  std::optional<Pid> pid;
  EffectFilter filter = EffectFilter::kAll;
  std::optional<Cursor> cursor;
  bool operator==(const ListEffects&) const = default;
};
template <typename V> void fields(V& v, ListEffects& t) { v("pid", t.pid)("filter", t.filter)("cursor", t.cursor); }

// ---- results ------------------------------------------------------------------------

/// Who decided a step of the effect, under which policy revision, at which position.
struct EffectStep {
  static constexpr std::string_view kName = "EffectStep";
  PrincipalId principal{};
  Id policy_revision = 0;
  Position position{};
  bool operator==(const EffectStep&) const = default;
};
template <typename V> void fields(V& v, EffectStep& t) {
  v("principal", t.principal)("policy_revision", t.policy_revision)("position", t.position);
}

struct EffectObservation {
  static constexpr std::string_view kName = "EffectObservation";
  EffectStep step;
  std::optional<Id> input;  // the caller's mailbox input it became; null once the caller cannot take it
  bool final = false;
  InputValue result;        // opaque, the connector's
  bool operator==(const EffectObservation&) const = default;
};
template <typename V> void fields(V& v, EffectObservation& t) {
  v("step", t.step)("input", t.input)("final", t.final)("result", t.result);
}

struct EffectClosure {
  static constexpr std::string_view kName = "EffectClosure";
  ClosureKind kind = ClosureKind::kObserved;
  EffectStep step;  // the resolving principal, its policy revision, the closure position
  std::optional<TrustedMs> trusted_lower_bound_ms;  // deadline closures only: trusted time's sample, >= the deadline
  bool operator==(const EffectClosure&) const = default;
};
template <typename V> void fields(V& v, EffectClosure& t) {
  v("kind", t.kind)("step", t.step)("trusted_lower_bound_ms", t.trusted_lower_bound_ms);
}

/// An effect as recorded: its intent and authorization, its attempt, every
/// observation and its closure. Nothing in it is judged by time now.
struct EffectInfo {
  static constexpr std::string_view kName = "effect";
  Id effect = 0;
  Pid pid{};                  // the caller
  EffectIntent intent;         // executor, reconciliation deadline, intent bytes, observation budget
  EffectStep authorization;    // the turn's signer, the policy revision it was authorized under, its position
  EffectPhase phase = EffectPhase::kAuthorized;
  std::optional<EffectStep> attempt;
  List<EffectObservation, kMaxObservations> observations;
  std::optional<EffectClosure> closure;
  bool operator==(const EffectInfo&) const = default;
};
template <typename V> void fields(V& v, EffectInfo& t) {
  v("effect", t.effect)("pid", t.pid)("intent", t.intent)("authorization", t.authorization)("phase", t.phase)(
      "attempt", t.attempt)("observations", t.observations)("closure", t.closure);
}

struct EffectPage {
  static constexpr std::string_view kName = "effect_page";
  Position cut{};
  std::optional<Pid> pid;
  EffectFilter filter = EffectFilter::kAll;
  List<EffectInfo, kPageRecords> items;
  std::optional<Cursor> cursor;  // null: the listing is complete
  bool operator==(const EffectPage&) const = default;
};
template <typename V> void fields(V& v, EffectPage& t) {
  v("cut", t.cut)("pid", t.pid)("filter", t.filter)("items", t.items)("cursor", t.cursor);
}

/// Why a record's phase, attempt, observations and closure cannot go together
/// (the matrix of decision 45), or null when they can. The node answers no
/// read and takes no command on such a record; the client refuses such an answer.
std::optional<std::string> effect_inconsistency(const EffectInfo& e);

}  // namespace cowboy::transit
