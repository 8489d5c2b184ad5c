// Runtime binding (docs/transit.md, decisions 120-129): a process's physical
// placement bound to a recorded process operation, artifact revision and
// provider incarnation. The local manager records what it intends and what
// its provider reports; activation hands the process to the incarnation's
// fresh worker key. A bound PID is run only through activation, never by
// direct `own` or `rotate_worker`.
//
//   runtime_intent (operation, revision, provider, worker, artifact, configuration) --> intended
//   runtime_observe (operation, incarnation): intended --> starting --> ready (bootstrap evidence) --> stopped
//   runtime_upgrade: a new operation and a later revision on the same provider --> intended
//   activate (operation, incarnation ready): the worker's key replaced, the process owned at generation + 1
//
// Same conventions as types.h: one field list per type, declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// Where the binding's current operation stands, as the provider last reported it.
enum class RuntimeStatus : std::uint8_t { kIntended, kStarting, kReady, kStopped };
template <> struct EnumTraits<RuntimeStatus> {
  static constexpr std::array<std::string_view, 4> kNames = {"intended", "starting", "ready", "stopped"};
};

/// What the local manager found the provider's incarnation started with:
/// SHA-256 of the artifact it loaded and of the configuration it was given.
struct BootstrapEvidence {
  static constexpr std::string_view kName = "BootstrapEvidence";
  Digest artifact{};
  Digest configuration{};
  bool operator==(const BootstrapEvidence&) const = default;
};
template <typename V> void fields(V& v, BootstrapEvidence& t) {
  v("artifact", t.artifact)("configuration", t.configuration);
}

// ---- commands ----------------------------------------------------------------------

/// Binds `pid` to a placement: operation `operation` (greater than any before
/// for the PID) runs artifact `revision` (whose bytes hash to `artifact`,
/// configured by `configuration`) on `provider`, for the PID-scoped `worker`.
struct RuntimeIntent {
  static constexpr std::string_view kName = "runtime_intent";
  Pid pid{};
  Id operation = 0;
  Id revision = 0;
  Name provider;
  PrincipalId worker{};
  Digest artifact{};
  Digest configuration{};
  bool operator==(const RuntimeIntent&) const = default;
};
template <typename V> void fields(V& v, RuntimeIntent& t) {
  v("pid", t.pid)("operation", t.operation)("revision", t.revision)("provider", t.provider)("worker", t.worker)(
      "artifact", t.artifact)("configuration", t.configuration);
}

/// The provider's report on `incarnation` of the current operation. `ready`
/// carries the bootstrap evidence, which must match the operation's artifact
/// and configuration; the other statuses carry none.
struct RuntimeObserve {
  static constexpr std::string_view kName = "runtime_observe";
  Pid pid{};
  Id operation = 0;
  Id incarnation = 0;
  RuntimeStatus status = RuntimeStatus::kStarting;
  std::optional<BootstrapEvidence> evidence;
  bool operator==(const RuntimeObserve&) const = default;
};
template <typename V> void fields(V& v, RuntimeObserve& t) {
  v("pid", t.pid)("operation", t.operation)("incarnation", t.incarnation)("status", t.status)("evidence", t.evidence);
}

/// A new operation on the same provider and worker, running a later revision.
struct RuntimeUpgrade {
  static constexpr std::string_view kName = "runtime_upgrade";
  Pid pid{};
  Id expected_operation = 0;
  Id operation = 0;
  Id revision = 0;
  Digest artifact{};
  Digest configuration{};
  bool operator==(const RuntimeUpgrade&) const = default;
};
template <typename V> void fields(V& v, RuntimeUpgrade& t) {
  v("pid", t.pid)("expected_operation", t.expected_operation)("operation", t.operation)("revision", t.revision)(
      "artifact", t.artifact)("configuration", t.configuration);
}

/// Hands the process to the ready incarnation: the binding's worker, whose
/// current key is `expected_public_key`, gets `public_key` in its place and
/// the process's ownership at `expected_generation` + 1.
struct Activate {
  static constexpr std::string_view kName = "activate";
  Pid pid{};
  Id expected_generation = 0;
  Id operation = 0;
  Id incarnation = 0;
  PublicKey expected_public_key{};
  PublicKey public_key{};
  bool operator==(const Activate&) const = default;
};
template <typename V> void fields(V& v, Activate& t) {
  v("pid", t.pid)("expected_generation", t.expected_generation)("operation", t.operation)(
      "incarnation", t.incarnation)("expected_public_key", t.expected_public_key)("public_key", t.public_key);
}

// ---- receipts --------------------------------------------------------------------

/// Every runtime command's receipt: the binding and the process as the decision left them.
struct RuntimeChanged {
  static constexpr std::string_view kName = "runtime_changed";
  Pid pid{};
  Id operation = 0;
  RuntimeStatus status = RuntimeStatus::kIntended;
  Id incarnation = 0;  // the latest observed; 0 before any
  Id generation = 0;   // the process's
  bool operator==(const RuntimeChanged&) const = default;
};
template <typename V> void fields(V& v, RuntimeChanged& t) {
  v("pid", t.pid)("operation", t.operation)("status", t.status)("incarnation", t.incarnation)(
      "generation", t.generation);
}

// ---- queries ------------------------------------------------------------------------

/// A PID's runtime binding; needs inspect or execute at the PID.
struct RuntimeQuery {
  static constexpr std::string_view kName = "runtime";
  Pid pid{};
  bool operator==(const RuntimeQuery&) const = default;
};
template <typename V> void fields(V& v, RuntimeQuery& t) { v("pid", t.pid); }

// ---- results ------------------------------------------------------------------------

/// Bootstrap evidence as attributed: who recorded it, when, for which incarnation.
struct BootstrapRecord {
  static constexpr std::string_view kName = "BootstrapRecord";
  Id incarnation = 0;
  BootstrapEvidence evidence;
  PrincipalId principal{};  // the local manager that observed it
  Position position{};
  bool operator==(const BootstrapRecord&) const = default;
};
template <typename V> void fields(V& v, BootstrapRecord& t) {
  v("incarnation", t.incarnation)("evidence", t.evidence)("principal", t.principal)("position", t.position);
}

/// The last activation: which operation and incarnation it handed the process to, at which generation.
struct ActivationRecord {
  static constexpr std::string_view kName = "ActivationRecord";
  Id operation = 0;
  Id incarnation = 0;
  Id generation = 0;
  Position position{};
  bool operator==(const ActivationRecord&) const = default;
};
template <typename V> void fields(V& v, ActivationRecord& t) {
  v("operation", t.operation)("incarnation", t.incarnation)("generation", t.generation)("position", t.position);
}

/// A PID's binding as recorded. `bound` false: the PID was never bound (every other field its zero value).
struct RuntimeInfo {
  static constexpr std::string_view kName = "runtime";
  Pid pid{};
  bool bound = false;
  Id operation = 0;
  Id revision = 0;
  Text<0, 32> provider;
  PrincipalId worker{};
  Digest artifact{};
  Digest configuration{};
  RuntimeStatus status = RuntimeStatus::kIntended;
  Id incarnation = 0;
  Position operation_at{};  // the position of the intent or upgrade that started the operation
  std::optional<BootstrapRecord> bootstrap;  // of the current operation
  std::optional<ActivationRecord> activation;
  bool operator==(const RuntimeInfo&) const = default;
};
template <typename V> void fields(V& v, RuntimeInfo& t) {
  v("pid", t.pid)("bound", t.bound)("operation", t.operation)("revision", t.revision)("provider", t.provider)(
      "worker", t.worker)("artifact", t.artifact)("configuration", t.configuration)("status", t.status)(
      "incarnation", t.incarnation)("operation_at", t.operation_at)("bootstrap", t.bootstrap)(
      "activation", t.activation);
}

}  // namespace cowboy::transit
