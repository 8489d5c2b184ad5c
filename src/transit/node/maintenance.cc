// What the maintenance process acts on (docs/transit.md, decisions 50-56):
// the index of route heads and its listing, the cancellation of a terminated
// source's outputs, the index of processes that may have ended, their listing,
// and the one place a process's retirement is recorded.
#include <algorithm>

#include "transit/node/authority.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) { return Err{Refusal{reason, std::move(message)}}; }

}  // namespace

// An expired suspension (recorded or not) and a retirement by command fence
// the source's pending outputs; a dependency's end does not (decision 10), so
// its outputs go on being delivered, before and after its retirement is recorded.
bool Authority::terminated(const ProcessRecord& source, TrustedMs now_ms) const {
  const bool expired = source.resume_by_ms && now_ms > *source.resume_by_ms;
  return expired || (source.retired && source.ending != Ending::kDependencyEnded);
}

std::optional<Ending> Authority::ending_of(const ProcessRecord& p, TrustedMs now_ms) const {
  if (p.retired) return std::nullopt;  // recorded already
  if (p.resume_by_ms && now_ms > *p.resume_by_ms) return Ending::kSuspensionExpired;
  if (p.initialized && check_required(p, now_ms)) return Ending::kDependencyEnded;
  return std::nullopt;
}

// Judged at time 0, a dependency counts as ended only by what is recorded (a
// retired resource, a lifetime owner whose retirement is recorded), so the
// index is a function of the records alone and a restart rebuilds it exactly.
// A suspended process is a candidate from the start: its deadline may pass.
bool Authority::may_have_ended(const ProcessRecord& p) const {
  if (p.retired) return false;
  return p.resume_by_ms || (p.initialized && check_required(p, TrustedMs{}));
}

// The index is stored (`n/`, decision 130): each change goes to the journal
// with the decision, so a restart reads it instead of every process.
void Authority::refresh_ended(Pid pid, Step& step) {
  const bool candidate = may_have_ended(*process(pid));
  const bool changed = candidate ? may_have_ended_.insert(pid).second : may_have_ended_.erase(pid) > 0;
  if (!changed) return;
  ended_position_ = step.position;
  step.touched.ended.push_back({pid, candidate});
}

void Authority::refresh_requiring(ResourceId resource_id, Step& step) {
  for (Pid pid : associated_pids(resource_id)) refresh_ended(pid, step);
}

Id Authority::retire_process(ProcessRecord& p, std::optional<Ending> ending, Step& step) {
  p.retired = true;
  p.ending = ending;
  const Id cancelled = p.tail + 1 - p.head;  // every admitted input not consumed, a blocked head included
  p.cancelled += cancelled;
  p.owner.reset();
  step.touched.processes.push_back(p.pid);
  refresh_ended(p.pid, step);
  // The resources whose lifetime it owns end with it: their dependents have ended too.
  for (Id owned : first_ids(layout::key(layout::kLifetimeOf, p.pid))) refresh_requiring(ResourceId{owned}, step);
  return cancelled;
}

// The route indexes are stored rows (decision 170): the route's pending
// outputs in id order (its FIFO), the same by destination, and its head.
void Authority::add_pending(OutputRecord output, Position position) {
  using namespace layout;
  const Id id = output.output;
  const Pid source = output.source, destination = output.destination;
  const auto head = route_head(source, destination);
  if (!head) {
    put_row(key(kRouteHeads, id), true);
    routes_position_ = position;
  }
  put_row(key(kRoutes, source, destination, id), true);
  set_route_head(source, destination, head ? std::min(*head, id) : id);
  put_row(key(kArriving, destination, source, id), true);
  put_row(key(kOutputsOf, source, id), true);
  outputs_.put(id, std::move(output));
}

void Authority::resolve(OutputRecord& output, OutputState state, Position position) {
  using namespace layout;
  output.state = state;
  const Id id = output.output;
  const Pid source = output.source, destination = output.destination;
  put_row(key(kRoutes, source, destination, id), false);
  put_row(key(kArriving, destination, source, id), false);
  put_row(key(kRouteHeads, id), false);
  // Removing an output behind the head leaves the head; removing the head reads the next.
  auto next = route_head(source, destination);
  if (next == id) next = first_id(key(kRoutes, source, destination));
  if (next) put_row(key(kRouteHeads, *next), true);
  set_route_head(source, destination, next);
  routes_position_ = position;
}

Result<Outcome, Refusal> Authority::apply(const CancelOutput& op, Step& step) {
  auto found = resolvable_output(op.output, step.caller);
  if (!found.ok()) return Err{found.error()};
  auto& out = **found;
  if (!terminated(*process(out.source), step.now_ms))
    return refuse(Reason::kSourceNotTerminated, "process " + std::to_string(out.source.value) + " is not terminated");
  if (auto refusal = route_order(out)) return Err{*refusal};
  resolve(out, OutputState::kCancelled, step.position);
  step.touched.outputs.push_back(op.output);
  return Outcome{OutputCancelled{op.output, out.source, out.destination}};
}

Result<Outcome, Refusal> Authority::apply(const RecordRetirement& op, Step& step) {
  auto* found = process_mut(op.pid);
  if (!found) return refuse(Reason::kUnknownProcess, "no process " + std::to_string(op.pid.value));
  if (!(rights(step.caller, PidScope{op.pid}) & kPidAdmin))
    return refuse(Reason::kNotPermitted, "requires pid_admin at the process");
  auto& p = *found;
  if (p.retired) return refuse(Reason::kRetirementRecorded, "the process's retirement is recorded");
  const auto ending = ending_of(p, step.now_ms);
  if (!ending) return refuse(Reason::kNotEnded, "the process has not ended");
  retire_process(p, ending, step);
  return Outcome{RetirementRecorded{op.pid, *ending, p.cancelled}};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListRoutes& q) const {
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, routes_position_)) return Err{*stale};
  RoutePage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  // The heads first (the scan holds the source's reader), then their records.
  std::vector<Id> heads;
  bool more = false;
  visit_ids(layout::table(layout::kRouteHeads), q.cursor ? q.cursor->after : 0, [&](Id head) {
    if (heads.size() == kScanBudget) return !(more = true);
    heads.push_back(head);
    return true;
  });
  std::size_t examined = 0;
  for (; examined < heads.size() && page.items.items.size() < kPageRecords; ++examined) {
    const auto* found = output(heads[examined]);
    if (!found) continue;  // unreadable: the answer is refused (storage_corrupt)
    const OutputRecord o = *found;
    // Shown to whoever could resolve it (a courier at its destination, which
    // learns as much of the source from a delivery) and may read the destination's metadata.
    if (!(rights(ctx.caller, PidScope{o.destination}) & kCourier) || !may_read_metadata(ctx.caller, o.destination))
      continue;
    Id pending = 0;  // the route's length: one row each (decision 170)
    visit_rows(layout::key(layout::kRoutes, o.source, o.destination), {}, [&](std::string_view) { return ++pending, true; });
    const auto* source = process(o.source);
    const auto* destination = process(o.destination);
    if (!source || !destination) continue;
    const bool source_terminated = terminated(*source, ctx.now_ms);
    page.items.items.push_back(RouteHead{o.output, o.source, o.destination, pending, o.published_at,
                                         o.published_at_ms, source_terminated, state_of(*destination, ctx.now_ms)});
  }
  if (more || examined < heads.size()) page.cursor = Cursor{page.cut, heads[examined - 1]};
  return QueryResult{std::move(page)};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const ListEnded& q) const {
  if (q.cursor)
    if (auto stale = stale_cut(q.cursor->cut, ended_position_)) return Err{*stale};
  EndedPage page;
  page.cut = q.cursor ? q.cursor->cut : head_.position;
  auto it = may_have_ended_.upper_bound(Pid{q.cursor ? q.cursor->after : 0});
  std::size_t examined = 0;
  for (; it != may_have_ended_.end() && page.items.items.size() < kPageRecords && examined < kScanBudget;
       ++it, ++examined) {
    if (!may_read_metadata(ctx.caller, *it)) continue;
    const auto& p = *process(*it);
    if (const auto ending = ending_of(p, ctx.now_ms))
      page.items.items.push_back(EndedProcess{p.pid, *ending, p.tail + 1 - p.head});
  }
  if (it != may_have_ended_.end()) page.cursor = Cursor{page.cut, std::prev(it)->value};
  return QueryResult{std::move(page)};
}

}  // namespace cowboy::transit::node
