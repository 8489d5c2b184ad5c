// Transit v1 types for workers that fail over and processes that end
// (docs/transit.md, decisions 57-63): rotate_worker, terminate and spawn, and
// their receipts. Same conventions as types.h: one field list per type,
// declaration order is wire order.
#pragma once

#include "transit/contract/state.h"

namespace cowboy::transit {

/// A replacement worker takes over a process: the PID-scoped `worker`, whose
/// current key and permission mask at the PID are the expected ones, gets
/// `public_key` in their place and the process's ownership at
/// `expected_generation` + 1. Its signed sequence and private role stay; its
/// credential epoch advances.
struct RotateWorker {
  static constexpr std::string_view kName = "rotate_worker";
  Pid pid{};
  Id expected_generation = 0;
  PrincipalId worker{};
  PublicKey expected_public_key{};
  Permissions expected_permissions;
  PublicKey public_key{};
  bool operator==(const RotateWorker&) const = default;
};
template <typename V> void fields(V& v, RotateWorker& t) {
  v("pid", t.pid)("expected_generation", t.expected_generation)("worker", t.worker)(
      "expected_public_key", t.expected_public_key)("expected_permissions", t.expected_permissions)(
      "public_key", t.public_key);
}

/// Ends a process for good at `generation`: its unconsumed inputs are
/// cancelled, its unattempted outputs and effect intents fenced at once.
struct Terminate {
  static constexpr std::string_view kName = "terminate";
  Pid pid{};
  Id generation = 0;
  bool operator==(const Terminate&) const = default;
};
template <typename V> void fields(V& v, Terminate& t) { v("pid", t.pid)("generation", t.generation); }

/// The current executor of `parent` at `generation` brings up child `pid`:
/// created, each required name associated with the resource the parent has
/// under that name, and initialized, in one decision.
struct Spawn {
  static constexpr std::string_view kName = "spawn";
  Pid parent{};
  Id generation = 0;
  Pid pid{};
  List<Name, kRequiredNames> required;
  bool allow_collection = false;
  bool operator==(const Spawn&) const = default;
};
template <typename V> void fields(V& v, Spawn& t) {
  v("parent", t.parent)("generation", t.generation)("pid", t.pid)("required", t.required)(
      "allow_collection", t.allow_collection);
}

struct WorkerRotated {
  static constexpr std::string_view kName = "worker_rotated";
  Pid pid{};
  Id generation = 0;  // the process's, now owned by the worker
  PrincipalId worker{};
  Id credential_epoch = 0;
  Id policy_revision = 0;
  bool operator==(const WorkerRotated&) const = default;
};
template <typename V> void fields(V& v, WorkerRotated& t) {
  v("pid", t.pid)("generation", t.generation)("worker", t.worker)("credential_epoch", t.credential_epoch)(
      "policy_revision", t.policy_revision);
}

struct ProcessTerminated {
  static constexpr std::string_view kName = "process_terminated";
  Pid pid{};
  Id generation = 0;
  Id cancelled = 0;  // unconsumed inputs, now cancelled
  bool operator==(const ProcessTerminated&) const = default;
};
template <typename V> void fields(V& v, ProcessTerminated& t) {
  v("pid", t.pid)("generation", t.generation)("cancelled", t.cancelled);
}

}  // namespace cowboy::transit
