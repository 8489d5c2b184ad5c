// Workers that fail over and processes that end (docs/transit.md, decisions
// 57-63): rotate_worker hands a process to a replacement worker under the
// same principal, terminate retires a process for good and fences its
// unattempted work, spawn brings up a child bound to its parent's state.
#include "transit/node/refusals.h"

namespace cowboy::transit::node {
namespace {

constexpr std::uint64_t kInspectExecute = kInspect | kExecute;

}  // namespace

std::optional<Refusal> Authority::check_rotatable_worker(const RotateWorker& op) const {
  const auto* w = principal(op.worker);
  if (!w) return Refusal{Reason::kUnknownSubject, "no principal " + std::to_string(op.worker.value)};
  if (w->revoked) return Refusal{Reason::kRevokedWorker, "a revoked worker is not rotated"};
  if (w->pid_scope != op.pid)
    return Refusal{Reason::kForeignScope, "the worker must be scoped to process " + std::to_string(op.pid.value)};
  if (w->public_key != op.expected_public_key)
    return Refusal{Reason::kWorkerKeyChanged, "the worker's current key is not the expected one"};
  const std::uint64_t mask = rights(op.worker, PidScope{op.pid});
  if (mask != op.expected_permissions.bits)
    return Refusal{Reason::kWorkerMaskChanged, "the worker holds mask " + std::to_string(mask) + " at the process"};
  if ((mask & kInspectExecute) != kInspectExecute)
    return Refusal{Reason::kWorkerNotExecutor, "the worker must hold inspect and execute at the process"};
  if (op.public_key == w->public_key) return Refusal{Reason::kUnchangedKey, "the new key is the current one"};
  return std::nullopt;
}

// An executable process: initialized, live, neither fenced, suspended nor
// blocked, idle or owned by `worker` already, at `generation`.
std::optional<Refusal> Authority::check_takeover(const ProcessRecord& process, PrincipalId worker, Id generation,
                                                 TrustedMs now_ms) const {
  if (retired(process, now_ms)) return Refusal{Reason::kRetired, "the process is permanently retired"};
  if (!process.initialized) return Refusal{Reason::kUninitialized, "the process is not initialized"};
  if (auto missing = check_required(process, now_ms)) return missing;
  if (process.resume_by_ms) return Refusal{Reason::kSuspended, "the process is suspended"};
  if (process.failure) return Refusal{Reason::kBlocked, "a blocked process is retried, not taken over"};
  if (process.owner && *process.owner != worker)
    return Refusal{Reason::kNotOwner, "the process is owned by principal " + std::to_string(process.owner->value)};
  if (generation != process.generation)
    return Refusal{Reason::kStaleGeneration, "expected generation " + std::to_string(generation) +
                                                 ", the process is at " + std::to_string(process.generation)};
  return std::nullopt;
}

// One decision replaces the worker's key, hands it the process at the next
// generation and advances its credential epoch and the policy revision. It
// grants nothing: the worker's bits are those it held, which the expected
// mask pinned, so a permission removed before cannot come back with the key.
Result<Outcome, Refusal> Authority::apply(const RotateWorker& op, Step& step) {
  if (!(rights(step.caller, RealmScope{}) & kRealmControl))
    return refuse(Reason::kNotPermitted, "requires realm_control at realm scope");
  auto* found = process_mut(op.pid);
  if (!found) return refuse(Reason::kUnknownProcess, "no process " + std::to_string(op.pid.value));
  auto& process = *found;
  if (auto bound = check_unbound(op.pid)) return Err{*bound};  // a bound PID is activated instead (decision 122)
  if (auto refusal = check_rotatable_worker(op)) return Err{*refusal};
  if (auto refusal = check_takeover(process, op.worker, op.expected_generation, step.now_ms)) return Err{*refusal};

  auto& worker = principals_.at(op.worker);
  worker.public_key = op.public_key;  // its sequence and private role stay
  worker.credential_epoch += 1;
  process.owner = op.worker;
  process.generation += 1;  // the crashed worker's prepared turns no longer match
  head_.policy_revision += 1;
  head_.policy_position = step.position;
  step.touched.principals.push_back(op.worker);
  step.touched.processes.push_back(op.pid);
  return Outcome{WorkerRotated{op.pid, process.generation, op.worker, worker.credential_epoch, head_.policy_revision}};
}

// Retired for good, its unconsumed inputs cancelled. The fence is immediate
// and needs no scan: deliveries of its pending outputs (source_terminated),
// attempts of its unattempted effect intents (termination_fence), turns,
// sends and deliveries into it all ask whether the process is retired. The
// records themselves stay as they were for maintenance to dispose of.
Result<Outcome, Refusal> Authority::apply(const Terminate& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (op.generation != process.generation) return stale_generation(op.generation, process.generation);
  process.resume_by_ms.reset();
  const Id cancelled = retire_process(process, std::nullopt, step);  // by a command: no ending (decision 52)
  return Outcome{ProcessTerminated{op.pid, process.generation, cancelled}};
}

bool Authority::caller_terminal(const EffectInfo& effect, TrustedMs now_ms) const {
  const auto* caller = process(effect.pid);
  return !caller || retired(*caller, now_ms);
}

std::optional<Refusal> Authority::termination_fence(const EffectInfo& effect, TrustedMs now_ms) const {
  if (caller_terminal(effect, now_ms))
    return Refusal{Reason::kCallerTerminated, "process " + std::to_string(effect.pid.value) + " is retired"};
  return std::nullopt;
}

// The parent's current executor brings up a child: created, each required
// name associated with the resource the parent has under it, and initialized
// (generation 1, idle), in one decision. The child's PID is reached like any
// other: the caller needs pid_admin there, so PID scope holds (a worker
// scoped to its own PID spawns nothing), and inspect on each inherited
// resource, as associate asks.
Result<Outcome, Refusal> Authority::apply(const Spawn& op, Step& step) {
  auto p = live_process(op.parent, step, kExecute);
  if (!p.ok()) return Err{p.error()};
  if (auto refusal = check_executor(step.caller, **p, op.generation, step.now_ms)) return Err{*refusal};
  if (!(rights(step.caller, PidScope{op.pid}) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the child");
  if (op.pid.value == 0) return refuse(Reason::kZeroIdentity, "pid 0 is invalid");
  if (process(op.pid))
    return refuse(Reason::kSubjectTaken, "pid " + std::to_string(op.pid.value) + " was allocated before");
  if (auto over = check_required_budget(op.required.items.size())) return Err{*over};
  std::vector<ResourceId> inherited;
  for (const auto& name : op.required.items) {
    const auto* a = associated(op.parent, name.value);
    const auto* r = a ? resource(a->resource) : nullptr;
    if (!r || !alive(*r, step.now_ms))
      return refuse(Reason::kMissingDependency, "the parent has no live association named " + name.value);
    if (!(rights(step.caller, ResourceScope{a->resource}) & kInspect))
      return refuse(Reason::kNotPermitted, "requires inspect on the resource named " + name.value);
    inherited.push_back(a->resource);
  }

  ProcessRecord child;
  child.pid = op.pid;
  child.required = op.required;
  child.parent = op.parent;
  child.allow_collection = op.allow_collection;
  child.initialized = true;
  child.generation = 1;  // as initialize leaves it
  processes_.put(op.pid, std::move(child));
  for (std::size_t i = 0; i < inherited.size(); ++i) add_association(op.pid, op.required.items[i], inherited[i], step);
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, 1}};
}

}  // namespace cowboy::transit::node
