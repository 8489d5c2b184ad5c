// Processes and their mailboxes: the lifecycle (create, initialize, own,
// suspend, resume, expiry), sends, turns, failures and scoped retry, courier
// delivery and the process read (docs/transit.md, decisions 10 and 32-36).
#include "transit/node/layout.h"
#include "transit/node/refusals.h"

#include <set>

namespace cowboy::transit::node {

// A suspension past its deadline is a permanent retirement from that instant;
// trusted time never goes back, so nothing needs writing for it to hold.
bool Authority::retired(const ProcessRecord& p, TrustedMs now_ms) const {
  return p.retired || (p.resume_by_ms && now_ms > *p.resume_by_ms);
}

// Judged now: fenced comes before the recorded states, since a process whose
// required dependency is gone cannot execute, whatever its record says, until
// the maintenance process records its retirement (record_retirement, decision 52).
ProcessState Authority::state_of(const ProcessRecord& p, TrustedMs now_ms) const {
  if (retired(p, now_ms)) return ProcessState::kRetired;
  if (p.initialized && check_required(p, now_ms)) return ProcessState::kFenced;
  return recorded_state(p);
}

ProcessState Authority::recorded_state(const ProcessRecord& p) {
  if (p.retired) return ProcessState::kRetired;
  if (!p.initialized) return ProcessState::kUninitialized;
  if (p.resume_by_ms) return ProcessState::kSuspended;
  if (p.failure) return ProcessState::kBlocked;
  return p.owner ? ProcessState::kOwned : ProcessState::kIdle;
}

std::optional<Refusal> Authority::check_required(const ProcessRecord& p, TrustedMs now_ms) const {
  for (const auto& name : p.required.items) {
    const auto* a = associated(p.pid, name.value);
    const auto* r = a ? resource(a->resource) : nullptr;
    if (!r || !alive(*r, now_ms))
      return Refusal{Reason::kMissingDependency, "required association " + name.value + " is missing or expired"};
  }
  return std::nullopt;
}

bool Authority::requires_resource(const ProcessRecord& p, ResourceId resource_id) const {
  for (const auto& name : p.required.items)
    if (const auto* a = associated(p.pid, name.value); a && a->resource == resource_id) return true;
  return false;
}

bool Authority::active(const ProcessRecord& p, TrustedMs now_ms) const {
  switch (state_of(p, now_ms)) {
    case ProcessState::kUninitialized:
    case ProcessState::kRetired:
    case ProcessState::kFenced: return false;
    case ProcessState::kIdle:
    case ProcessState::kOwned:
    case ProcessState::kBlocked:
    case ProcessState::kSuspended: return p.owner.has_value() || p.head <= p.tail;
  }
  return true;
}

std::optional<Refusal> Authority::check_quiescent(ResourceId resource_id, TrustedMs now_ms) const {
  const auto busy = [&](const ProcessRecord& p, const std::string& why) -> std::optional<Refusal> {
    if (!active(p, now_ms)) return std::nullopt;
    return Refusal{Reason::kNotQuiescent, "process " + std::to_string(p.pid.value) + why + " is " +
                                              (p.owner ? "owned" : "holding admitted input")};
  };
  const auto requiring = [&](ResourceId r) {
    std::vector<const ProcessRecord*> out;
    for (Pid pid : associated_pids(r))
      if (const auto* p = process(pid); p && requires_resource(*p, r)) out.push_back(p);
    return out;
  };
  for (const auto* owner : requiring(resource_id)) {
    if (auto refusal = busy(*owner, ", which requires the resource,")) return refusal;
    // Its borrowers: processes requiring a resource whose lifetime it owns.
    for (Id lent : first_ids(layout::key(layout::kLifetimeOf, owner->pid)))
      for (const auto* borrower : requiring(ResourceId{lent}))
        if (borrower != owner)
          if (auto refusal = busy(*borrower, ", a borrower of process " + std::to_string(owner->pid.value) + ",")) return refusal;
  }
  return std::nullopt;
}

std::optional<Refusal> Authority::check_executor(PrincipalId caller, const ProcessRecord& p, Id generation,
                                                 TrustedMs now_ms) const {
  if (!(rights(caller, PidScope{p.pid}) & kExecute))
    return Refusal{Reason::kNotPermitted, "requires execute at the process"};
  if (auto missing = check_required(p, now_ms)) return missing;  // fenced
  const auto state = state_of(p, now_ms);
  if (state != ProcessState::kOwned || p.owner != caller)
    return Refusal{Reason::kNotOwner,
                   "the process is " + std::string(EnumTraits<ProcessState>::kNames[static_cast<int>(state)]) +
                       (state == ProcessState::kOwned ? " by another principal" : "")};
  if (generation != p.generation) return stale_generation(generation, p.generation).error;
  return std::nullopt;
}

Result<ProcessRecord*, Refusal> Authority::known_process(Pid pid, const Step& step, Permission needs) {
  auto* found = process_mut(pid);
  if (!found) return refuse(Reason::kUnknownProcess, "no process " + std::to_string(pid.value));
  if (!(rights(step.caller, PidScope{pid}) & needs))
    return refuse(Reason::kNotPermitted,
                  "requires " + std::string(permission_name(needs)) + " at the process");
  return found;
}

Result<ProcessRecord*, Refusal> Authority::live_process(Pid pid, const Step& step, Permission needs) {
  auto found = known_process(pid, step, needs);
  if (found.ok() && retired(**found, step.now_ms)) return refuse(Reason::kRetired, "the process is permanently retired");
  return found;
}

Result<Outcome, Refusal> Authority::apply(const CreateProcess& op, Step& step) {
  if (!(rights(step.caller, PidScope{op.pid}) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the process");
  if (op.pid.value == 0) return refuse(Reason::kZeroIdentity, "pid 0 is invalid");
  if (process(op.pid))
    return refuse(Reason::kSubjectTaken, "pid " + std::to_string(op.pid.value) + " was allocated before");
  if (auto over = check_required_budget(op.required.items.size())) return Err{*over};
  ProcessRecord p;
  p.pid = op.pid;
  p.required = op.required;
  p.allow_collection = op.allow_collection;
  p.associations_position = step.position;
  processes_.put(op.pid, std::move(p));
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, 0}};
}

Result<Outcome, Refusal> Authority::apply(const Initialize& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (process.initialized) return refuse(Reason::kAlreadyInitialized, "the process is initialized");
  if (op.generation != process.generation) return stale_generation(op.generation, process.generation);
  if (auto missing = check_required(process, step.now_ms)) return Err{*missing};
  process.initialized = true;
  process.generation += 1;  // fences anything prepared against the uninitialized process
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<Outcome, Refusal> Authority::apply(const Own& op, Step& step) {
  auto p = live_process(op.pid, step, kExecute);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (auto bound = check_unbound(op.pid)) return Err{*bound};  // a bound PID is activated instead (decision 122)
  if (auto missing = check_required(process, step.now_ms)) return Err{*missing};  // fenced
  const auto state = state_of(process, step.now_ms);
  if (state != ProcessState::kIdle)
    return refuse(Reason::kNotIdle,
                  "the process is " + std::string(EnumTraits<ProcessState>::kNames[static_cast<int>(state)]));
  if (op.generation != process.generation) return stale_generation(op.generation, process.generation);
  process.owner = step.caller;
  process.generation += 1;  // a previous owner's prepared turns no longer match
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<Outcome, Refusal> Authority::apply(const Send& op, Step& step) {
  auto p = live_process(op.pid, step, kSend);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (!process.initialized) return refuse(Reason::kUninitialized, "the process is not initialized");
  if (auto missing = check_required(process, step.now_ms)) return Err{*missing};
  // Admitted behind a failed head too: the block holds the head, not the mailbox.
  const Id input = ++process.tail;
  step.touched.inputs.push_back({op.pid, Input{input, op.value, Origin{step.caller, std::nullopt, std::nullopt, std::nullopt}}});
  step.touched.processes.push_back(op.pid);
  return Outcome{Sent{op.pid, input}};
}

Result<Outcome, Refusal> Authority::apply(const Turn& op, Step& step) {
  auto p = live_process(op.pid, step, kExecute);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (auto refusal = check_executor(step.caller, process, op.generation, step.now_ms)) return Err{*refusal};
  if (op.input && (*op.input != process.head || process.head > process.tail))
    return refuse(Reason::kNotHead, "a turn consumes the mailbox head, input " + std::to_string(process.head));

  ResourceRecord* written = nullptr;
  if (!op.mutations.items.empty() || !op.blocks.items.empty()) {
    if (!op.resource) return refuse(Reason::kNoResource, "mutations need the writable resource");
  }
  if (op.resource) {
    if (!associated(op.pid, *op.resource))
      return refuse(Reason::kNotAssociated, "a turn writes only an associated resource");
    if (auto refusal = check_resource(step.caller, *op.resource, kWrite, step.now_ms)) return Err{*refusal};
    written = resource_mut(*op.resource);
    if (op.resource_revision && *op.resource_revision != written->info.revision)
      return refuse(Reason::kResourceRevisionChanged,
                    "the resource is at revision " + std::to_string(written->info.revision.value));
    // A name is published once, ever: a retired or deleted block's record keeps it (decision 100).
    for (const auto& b : op.blocks.items)
      if (step.catalog.block_record(*op.resource, b.name))
        return refuse(Reason::kBlockExists, "blocks are immutable once written");
  }
  for (ResourceId viewed : op.views.items) {
    if (!associated(op.pid, viewed))
      return refuse(Reason::kNotAssociated, "views are of associated resources");
    if (auto refusal = check_resource(step.caller, viewed, kInspect | kRead, step.now_ms)) return Err{*refusal};
  }
  for (const auto& o : op.outputs.items)
    if (!this->process(o.destination))
      return refuse(Reason::kUnknownDestination, "no process " + std::to_string(o.destination.value));
  if (op.effect)
    if (auto refusal = check_effect(*op.effect, op.pid, step.now_ms)) return Err{*refusal};

  // Every rule held: publish it all in this one decision.
  TurnPublished published{op.pid, process.generation, std::nullopt, op.resource, std::nullopt, {}, {}, std::nullopt};
  if (op.input) {
    published.consumed = process.head;
    process.head += 1;
  }
  if (written) {
    if (!op.mutations.items.empty() || !op.blocks.items.empty()) {
      written->info.revision += 1;
      written->changed_at = step.position;
      head_.resources_position = step.position;
      step.touched.resources.push_back(written->info.resource);
      // A resource it writes without owning it holds its collection until that
      // resource's (decision 190): the rows go in this write, read from nothing
      // but the record above, and only when another process wrote it last.
      if (written->info.owner != op.pid && written->writer != op.pid) {
        written->writer = op.pid;
        put_row(layout::key(layout::kWrittenBy, op.pid, written->info.resource), true);
        put_row(layout::key(layout::kWritersOf, written->info.resource, op.pid), true);
      }
    }
    const Revision revision = written->info.revision;
    published.revision = revision;
    for (const auto& m : op.mutations.items)
      step.touched.entries.push_back({written->info.resource, m.key, revision, m.value});
    for (std::size_t i = 0; i < op.blocks.items.size(); ++i) {
      const auto& b = op.blocks.items[i];
      step.touched.blocks.push_back({written->info.resource, b.name, revision, &step.blocks[i]});
      step.touched.block_records.push_back(BlockInfo{written->info.resource, b.name, revision, b.length, b.sha256,
                                                     op.pid, step.caller, BlockState::kPublished, step.position,
                                                     std::nullopt, std::nullopt, std::nullopt});
    }
  }
  for (ResourceId viewed : op.views.items) {
    const Id id = head_.next_view++;
    views_.put(id, ViewRecord{id, op.pid, viewed, resource(viewed)->info.revision});
    put_row(layout::key(layout::kViewsOf, op.pid, id), true);
    put_row(layout::key(layout::kViewsOn, viewed, id), true);
    step.touched.views.push_back(id);
    published.views.items.push_back(id);
  }
  for (const auto& o : op.outputs.items) {
    const Id id = head_.next_output++;
    add_pending(OutputRecord{id, op.pid, o.destination, o.value, OutputState::kPending, std::nullopt, step.position,
                             step.now_ms},
                step.position);
    step.touched.outputs.push_back(id);
    published.outputs.items.push_back(id);
  }
  if (op.effect) published.effect = authorize_effect(op.pid, *op.effect, step);
  step.touched.processes.push_back(op.pid);
  return Outcome{std::move(published)};
}

Result<Outcome, Refusal> Authority::apply(const FailTurn& op, Step& step) {
  auto p = live_process(op.pid, step, kExecute);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (auto refusal = check_executor(step.caller, process, op.generation, step.now_ms)) return Err{*refusal};
  if (op.input != process.head || process.head > process.tail)
    return refuse(Reason::kNotHead, "only the mailbox head can fail");
  // The input stays at the head; the owner is fenced until a retry.
  process.failure = op.input;
  process.failure_reason = op.reason;
  process.owner.reset();
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<Outcome, Refusal> Authority::apply(const Retry& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (!process.failure) return refuse(Reason::kNotBlocked, "the process is not blocked");
  if (op.expected_generation != process.generation) return stale_generation(op.expected_generation, process.generation);
  if (op.failure_input != *process.failure)
    return refuse(Reason::kFailureMismatch,
                  "the process is blocked on input " + std::to_string(*process.failure));
  if (auto missing = check_required(process, step.now_ms)) return Err{*missing};
  process.failure.reset();
  process.failure_reason = {};
  process.owner.reset();
  process.generation += 1;  // consumes nothing: the failed input is the head again
  step.touched.processes.push_back(op.pid);
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<Outcome, Refusal> Authority::apply(const Suspend& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (process.resume_by_ms) return refuse(Reason::kSuspended, "the process is suspended");
  if (op.generation != process.generation) return stale_generation(op.generation, process.generation);
  if (op.resume_by_ms <= step.now_ms)
    return refuse(Reason::kDeadlinePassed, "the resume deadline must be in the future");
  process.resume_by_ms = op.resume_by_ms;
  process.owner.reset();  // suspension revokes execution
  step.touched.processes.push_back(op.pid);
  refresh_ended(op.pid, step);  // it ends if the deadline passes
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<Outcome, Refusal> Authority::apply(const Resume& op, Step& step) {
  auto p = live_process(op.pid, step, kPidAdmin);
  if (!p.ok()) return Err{p.error()};
  auto& process = **p;
  if (!process.resume_by_ms) return refuse(Reason::kNotSuspended, "the process is not suspended");
  if (op.generation != process.generation) return stale_generation(op.generation, process.generation);
  if (auto missing = check_required(process, step.now_ms)) return Err{*missing};
  if (auto running = check_provider_stopped(op.pid)) return Err{*running};  // decision 126
  process.resume_by_ms.reset();
  process.generation += 1;
  step.touched.processes.push_back(op.pid);
  refresh_ended(op.pid, step);
  return Outcome{ProcessChanged{op.pid, process.generation}};
}

Result<OutputRecord*, Refusal> Authority::resolvable_output(Id output, PrincipalId caller) {
  auto* found = output_mut(output);
  if (!found) return refuse(Reason::kUnknownOutput, "no such output");
  auto& out = *found;
  if (!(rights(caller, PidScope{out.destination}) & kCourier))
    return refuse(Reason::kNotPermitted, "requires courier at the destination");
  if (out.state != OutputState::kPending)
    return refuse(Reason::kResolved, "the output is delivered or disposed of");
  return &out;
}

std::optional<Refusal> Authority::route_order(const OutputRecord& out) const {
  if (const Id head = route_head(out.source, out.destination).value_or(out.output);
      head != out.output)
    return Refusal{Reason::kRouteOrder, "output " + std::to_string(head) + " of this route is unresolved before it"};
  return std::nullopt;
}

Result<Outcome, Refusal> Authority::apply(const Deliver& op, Step& step) {
  auto found = resolvable_output(op.output, step.caller);
  if (!found.ok()) return Err{found.error()};
  auto& out = **found;
  // Termination fences the source's unattempted work at once; the record stays
  // pending until the maintenance process records its cancellation (decision 51).
  if (terminated(*process(out.source), step.now_ms))
    return refuse(Reason::kSourceTerminated, "process " + std::to_string(out.source.value) + " is terminated");
  if (auto refusal = route_order(out)) return Err{*refusal};
  auto& destination = *process_mut(out.destination);
  Delivered delivered{op.output, out.destination, std::nullopt};
  if (retired(destination, step.now_ms)) {
    resolve(out, OutputState::kDisposed, step.position);  // a terminal disposition also releases the route
  } else {
    if (!destination.initialized)
      return refuse(Reason::kUninitialized, "the destination is not initialized");
    if (auto missing = check_required(destination, step.now_ms)) return Err{*missing};
    const Id input = ++destination.tail;
    step.touched.inputs.push_back({out.destination, Input{input, out.value, Origin{std::nullopt, op.output, out.source, std::nullopt}}});
    step.touched.processes.push_back(out.destination);
    out.input = input;
    delivered.input = input;
    resolve(out, OutputState::kDelivered, step.position);
  }
  step.touched.outputs.push_back(op.output);
  return Outcome{delivered};
}

bool Authority::may_read_metadata(PrincipalId caller, Pid pid) const { return rights(caller, PidScope{pid}) & (kInspect | kExecute); }

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ProcessRead& q) const {
  if (!may_read_metadata(ctx.caller, q.pid))
    return refuse(Reason::kNotPermitted, "requires inspect or execute at the process");
  const auto* p = process(q.pid);
  if (!p) return refuse(Reason::kUnknownProcess, "no such process");
  ProcessInfo info{p->pid, p->generation, state_of(*p, ctx.now_ms), p->owner, p->failure, p->resume_by_ms,
                   p->required, p->head, p->tail, p->cancelled, std::nullopt, p->parent, p->allow_collection};
  if (info.state == ProcessState::kRetired && !p->retired)
    info.cancelled += p->tail + 1 - p->head;  // unconsumed input of an expired suspension
  // The next input goes only to whoever may execute it now.
  if (!check_executor(ctx.caller, *p, p->generation, ctx.now_ms) && p->head <= p->tail)
    info.input = ctx.catalog.input(q.pid, p->head);
  return QueryResult{std::move(info)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListProcesses& q) const {
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, head_.processes_position)) return Err{*stale};
  ProcessPage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  const Pid after{q.cursor ? q.cursor->after : 0};
  std::size_t examined = 0;
  Pid last = after;
  bool more = false;
  const auto show = [&](const ProcessRecord& p) {
    if (page.items.items.size() >= kPageRecords || examined >= kScanBudget) {
      more = true;  // a candidate past the page: a continuation follows
      return false;
    }
    ++examined;
    last = p.pid;
    if (!may_read_metadata(ctx.caller, p.pid)) return true;
    // Recorded, not judged: no trusted-time expiry, no dependency check (decision 41).
    page.items.items.push_back(ProcessSummary{p.pid, p.generation, recorded_state(p), p.owner, p.failure,
                                              p.resume_by_ms, p.required, p.head, p.tail, p.cancelled, p.parent,
                                              p.allow_collection});
    return true;
  };
  // A PID-scoped principal sees at most its own process: one candidate, not a scan of the realm.
  if (const auto* caller = principal(ctx.caller); caller && caller->pid_scope) {
    if (const auto* own = *caller->pid_scope > after ? process(*caller->pid_scope) : nullptr) show(*own);
  } else {
    visit_processes(after, show);
  }
  if (more) page.cursor = Cursor{page.cut, last.value};
  return QueryResult{std::move(page)};
}

}  // namespace cowboy::transit::node
