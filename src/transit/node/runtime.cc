// Runtime binding (docs/transit.md, decisions 120-129): a PID's placement
// bound to a recorded operation, artifact revision and provider incarnation.
// The local manager (pid_admin at the PID) records intents, upgrades and its
// provider's observations with their bootstrap evidence; activation (root
// authorization, as rotate_worker) hands the process to the ready
// incarnation's fresh worker key. Once bound, a PID is run only this way.
#include "transit/node/refusals.h"

namespace cowboy::transit::node {
namespace {

constexpr std::uint64_t kInspectExecute = kInspect | kExecute;

int rank(RuntimeStatus s) { return static_cast<int>(s); }  // intended < starting < ready < stopped

/// `binding`, `pid`'s as the authority read it (runtime_mut), or why there is none.
Result<RuntimeInfo*, Refusal> bound(RuntimeRecord* binding, Pid pid) {
  if (!binding) return refuse(Reason::kNoRuntimeBinding, "process " + std::to_string(pid.value) + " is not bound");
  return &binding->info;
}

}  // namespace

std::optional<Refusal> Authority::check_unbound(Pid pid) const {
  if (runtime(pid))
    return Refusal{Reason::kRuntimeBound, "process " + std::to_string(pid.value) + " is bound: it is run through activate"};
  return std::nullopt;
}

std::optional<Refusal> Authority::check_provider_stopped(Pid pid) const {
  const auto* r = runtime(pid);
  if (r && r->info.status != RuntimeStatus::kStopped)
    return Refusal{Reason::kProviderRunning, "the provider of operation " + std::to_string(r->info.operation) +
                                                 " is not observed stopped"};
  return std::nullopt;
}

std::optional<Refusal> Authority::check_bindable_worker(PrincipalId worker, Pid pid) const {
  const auto* w = principal(worker);
  if (!w) return Refusal{Reason::kUnknownSubject, "no principal " + std::to_string(worker.value)};
  if (w->revoked) return Refusal{Reason::kRevokedWorker, "a revoked worker is not bound"};
  if (w->pid_scope != pid)
    return Refusal{Reason::kForeignScope, "the worker must be scoped to process " + std::to_string(pid.value)};
  if ((rights(worker, PidScope{pid}) & kInspectExecute) != kInspectExecute)
    return Refusal{Reason::kWorkerNotExecutor, "the worker must hold inspect and execute at the process"};
  return std::nullopt;
}

RuntimeChanged Authority::runtime_changed(const RuntimeInfo& r) const {
  return RuntimeChanged{r.pid, r.operation, r.status, r.incarnation, process(r.pid)->generation};
}

// A new placement: for a PID never bound, or one whose provider is observed
// stopped (one placement runs at a time), at an operation above every earlier
// one. The activation record stays: it is history, and a new one replaces it.
Result<Outcome, Refusal> Authority::apply(const RuntimeIntent& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  const auto* existing = runtime(op.pid);
  if (existing && existing->info.status != RuntimeStatus::kStopped)
    return refuse(Reason::kProviderRunning, "the current placement's provider is not observed stopped");
  const Id last = existing ? existing->info.operation : 0;
  if (op.operation <= last)
    return refuse(Reason::kStaleOperation, "operation " + std::to_string(op.operation) + " does not advance " +
                                               std::to_string(last));
  if (auto refusal = check_bindable_worker(op.worker, op.pid)) return Err{*refusal};
  RuntimeInfo r = existing ? existing->info : RuntimeInfo{};
  // Incarnations count one provider's instances: a new provider counts afresh.
  if (!existing || r.provider.value != op.provider.value) r.incarnation = 0;
  r.pid = op.pid;
  r.bound = true;
  r.operation = op.operation;
  r.revision = op.revision;
  r.provider = Text<0, 32>{op.provider.value};
  r.worker = op.worker;
  r.artifact = op.artifact;
  r.configuration = op.configuration;
  r.status = RuntimeStatus::kIntended;
  r.operation_at = step.position;
  r.bootstrap.reset();
  runtime_.put(op.pid, RuntimeRecord{r});
  step.touched.runtime.push_back(op.pid);
  return Outcome{runtime_changed(r)};
}

// The provider's report. Within the current operation an incarnation only
// moves forward - starting, ready, stopped - and a later incarnation replaces
// an earlier one; anything else is stale, so a report delayed past a newer
// one (or past an activation, which pins the incarnation it activated) is
// refused, never recorded. Ready carries the bootstrap evidence, checked
// against the operation's artifact and configuration.
Result<Outcome, Refusal> Authority::apply(const RuntimeObserve& op, Step& step) {
  // A provider stops after its process retires, too, and collection waits
  // for that report (decision 115): `stopped` is taken of a retired process.
  auto p = op.status == RuntimeStatus::kStopped ? known_process(op.pid, step, kPidAdmin)
                                                 : live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  if ((*p)->collected_at) return refuse(Reason::kRetired, "the process is collected");
  auto b = bound(runtime_mut(op.pid), op.pid);
  if (!b.ok()) return Err{b.error()};
  auto& r = **b;
  if (op.operation != r.operation)
    return refuse(Reason::kStaleOperation, "the current operation is " + std::to_string(r.operation));
  const bool fresh = r.status == RuntimeStatus::kIntended;  // nothing observed of this operation yet
  const bool later = fresh ? op.incarnation > r.incarnation : op.incarnation > r.incarnation ||
                                                                   (op.incarnation == r.incarnation &&
                                                                    rank(op.status) > rank(r.status));
  if (op.status == RuntimeStatus::kIntended || !later)
    return refuse(Reason::kStaleObservation, "incarnation " + std::to_string(r.incarnation) + " is already " +
                                                 std::string(EnumTraits<RuntimeStatus>::kNames[rank(r.status)]));
  if ((op.status == RuntimeStatus::kReady) != op.evidence.has_value())
    return refuse(Reason::kMissingEvidence, "ready carries bootstrap evidence, and only ready does");
  if (op.evidence) {
    if (op.evidence->artifact != r.artifact)
      return refuse(Reason::kArtifactMismatch, "the incarnation loaded another artifact than revision " +
                                                   std::to_string(r.revision) + "'s");
    if (op.evidence->configuration != r.configuration)
      return refuse(Reason::kConfigurationMismatch, "the incarnation was given another configuration");
    r.bootstrap = BootstrapRecord{op.incarnation, *op.evidence, step.caller, step.position};
  }
  r.incarnation = op.incarnation;
  r.status = op.status;
  step.touched.runtime.push_back(op.pid);
  return Outcome{runtime_changed(r)};
}

// In place: the same provider and worker run a later revision under a new
// operation. The current incarnation's reports become stale; the running
// activation stays until the new operation's incarnation is activated.
Result<Outcome, Refusal> Authority::apply(const RuntimeUpgrade& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto b = bound(runtime_mut(op.pid), op.pid);
  if (!b.ok()) return Err{b.error()};
  auto& r = **b;
  if (op.expected_operation != r.operation || op.operation <= r.operation)
    return refuse(Reason::kStaleOperation, "the current operation is " + std::to_string(r.operation));
  if (op.revision <= r.revision)
    return refuse(Reason::kRevisionNotAdvancing, "the current revision is " + std::to_string(r.revision));
  r.operation = op.operation;
  r.revision = op.revision;
  r.artifact = op.artifact;
  r.configuration = op.configuration;
  r.status = RuntimeStatus::kIntended;
  r.operation_at = step.position;
  r.bootstrap.reset();
  step.touched.runtime.push_back(op.pid);
  return Outcome{runtime_changed(r)};
}

// rotate_worker's takeover, conditioned on the binding: the incarnation named
// is the current operation's latest and observed ready with its evidence. The
// worker's key is replaced; its signed sequence, private role (its resource
// grants) and credential epoch stay - activation renews nothing. The policy
// revision advances (a key is authority: cuts expire, decision 6).
Result<Outcome, Refusal> Authority::apply(const Activate& op, Step& step) {
  if (!(rights(step.caller, RealmScope{}) & kRealmControl))
    return refuse(Reason::kNotPermitted, "requires realm_control at realm scope");
  auto* found = process_mut(op.pid);
  if (!found) return refuse(Reason::kUnknownProcess, "no process " + std::to_string(op.pid.value));
  auto& process = *found;
  auto b = bound(runtime_mut(op.pid), op.pid);
  if (!b.ok()) return Err{b.error()};
  auto& r = **b;
  if (op.operation != r.operation)
    return refuse(Reason::kStaleOperation, "the current operation is " + std::to_string(r.operation));
  if (op.incarnation != r.incarnation)
    return refuse(Reason::kStaleObservation, "the latest observed incarnation is " + std::to_string(r.incarnation));
  if (r.status != RuntimeStatus::kReady || !r.bootstrap)
    return refuse(Reason::kNotReady, "incarnation " + std::to_string(r.incarnation) + " is not observed ready");
  if (auto refusal = check_bindable_worker(r.worker, op.pid)) return Err{*refusal};
  auto& worker = principals_.at(r.worker);
  if (worker.public_key != op.expected_public_key)
    return refuse(Reason::kWorkerKeyChanged, "the worker's current key is not the expected one");
  if (op.public_key == worker.public_key) return refuse(Reason::kUnchangedKey, "the new key is the current one");
  if (auto refusal = check_takeover(process, r.worker, op.expected_generation, step.now_ms)) return Err{*refusal};

  worker.public_key = op.public_key;  // sequence, private role and credential epoch stay
  process.owner = r.worker;
  process.generation += 1;  // the previous incarnation's prepared turns no longer match
  r.activation = ActivationRecord{r.operation, r.incarnation, process.generation, step.position};
  head_.policy_revision += 1;
  head_.policy_position = step.position;
  step.touched.principals.push_back(r.worker);
  step.touched.processes.push_back(op.pid);
  step.touched.runtime.push_back(op.pid);
  return Outcome{runtime_changed(r)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const RuntimeQuery& q) const {
  if (!process(q.pid)) return refuse(Reason::kUnknownProcess, "no process " + std::to_string(q.pid.value));
  if (!may_read_metadata(ctx.caller, q.pid)) return refuse(Reason::kNotPermitted, "requires inspect or execute at the process");
  const auto* r = runtime(q.pid);
  if (!r) {
    RuntimeInfo unbound;
    unbound.pid = q.pid;
    return QueryResult{unbound};
  }
  return QueryResult{r->info};
}

}  // namespace cowboy::transit::node
