// Checkpoints and the history floor (docs/transit.md, decisions 64-69): a
// checkpoint publishes the roots of the state it was decided on; advancing
// the floor to it, after checking its committed entry, lets the journal delete
// the entries below (journal.cc does the deleting, in the same synced write).
#include "transit/node/authority.h"
#include "transit/node/layout.h"

#include "transit/contract/codec.h"
#include "transit/contract/envelope.h"
#include "transit/contract/signing.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

}  // namespace

std::optional<JournalEntry> stored_entry(std::string_view request, std::string_view receipt) {
  auto r = from_json<SignedRequest>(request, kMaxEnvelopeBytes);
  auto answered = from_json<Receipt>(receipt, kMaxAnswerBytes);
  if (!r.ok() || !answered.ok()) return std::nullopt;
  if (answered->principal != r->request.principal || answered->sequence != r->request.sequence ||
      answered->request_digest != request_digest(r->request))
    return std::nullopt;
  return JournalEntry{std::move(*r), std::move(*answered)};
}

std::optional<Refusal> Authority::check_history_control(PrincipalId caller) const {
  if (!(rights(caller, RealmScope{}) & kRealmControl))
    return Refusal{Reason::kNotPermitted, "requires realm_control at realm scope"};
  if (!genesis_.allow_history_trim)
    return Refusal{Reason::kHistoryTrimNotAllowed, "this realm's genesis keeps its whole history (allow_history_trim false)"};
  return std::nullopt;
}

Digest Authority::roots() const {
  crypto::Sha256 hash;
  std::string text;
  // One record per line: canonical JSON never holds a raw newline.
  const auto add = [&](const auto& record) {
    text.clear();
    codec::write(text, record);
    text.push_back('\n');
    hash.update(as_bytes(text));
  };
  add(genesis_);
  add(head_);
  for (const auto& [id, r] : principals_) add(r);
  for (const auto& [id, r] : roles_) add(r);
  for (const auto& [id, r] : grants_) add(r);
  for (const auto& [principal, role] : credentials_) add(List<Id, 2>{{principal.value, role}});
  // From storage too (decisions 170, 175): the records as the head's position has them.
  visit_stored<ResourceRecord>(resources_, layout::kResources, ResourceId{0},
                               [&](const ResourceRecord& r) { return add(r), true; });
  visit_processes(Pid{0}, [&](const ProcessRecord& r) {  // from storage: they are not all resident
    add(r);
    return true;
  });
  std::vector<std::pair<Pid, Id>> associations;  // in (pid, revision) order, read after the scan of their rows
  visit_rows(layout::table(layout::kAssociationsOf), {}, [&](std::string_view row) {
    associations.emplace_back(Pid{layout::get_be64(row.substr(2))}, layout::last_id(row));
    return true;
  });
  for (const auto& [pid, revision] : associations) {
    const auto* a = association(pid, revision);
    if (!a) {  // unreadable, or listed without a record: the decision is refused (decision 157)
      note_corrupt(CorruptRecord{revision, "association"});
      return Digest{};
    }
    add(*a);
  }
  visit_stored<ViewRecord>(views_, layout::kViews, Id{0}, [&](const ViewRecord& r) { return add(r), true; });
  visit_stored<OutputRecord>(outputs_, layout::kOutputs, Id{0}, [&](const OutputRecord& r) { return add(r), true; });
  visit_stored<EffectRecord>(effects_, layout::kEffects, Id{0}, [&](const EffectRecord& r) { return add(r), true; });
  visit_stored<PayloadRecord>(payloads_, layout::kPayloads, Id{0}, [&](const PayloadRecord& r) { return add(r), true; });
  visit_stored<RuntimeRecord>(runtime_, layout::kRuntime, Pid{0}, [&](const RuntimeRecord& r) { return add(r), true; });
  return hash.finish();
}

// The roots are those of the state before this decision (position P - 1),
// which the checkpoint changes only in its own head fields and its signer's
// sequence. Hashing the state costs one pass over the records recovery reads.
Result<Outcome, Refusal> Authority::apply(const Checkpoint&, Step& step) {
  if (auto refusal = check_history_control(step.caller)) return Err{*refusal};
  const Digest roots = this->roots();
  head_.checkpoint = step.position;
  head_.checkpoint_roots = roots;
  return Outcome{Checkpointed{roots}};
}

// Committed intent and the root snapshot are checked against the journal as
// published (not as staged): the floor rests only on a durable, complete
// checkpoint entry whose receipt carries the roots the maintainer read.
Result<Outcome, Refusal> Authority::apply(const AdvanceFloor& op, Step& step) {
  if (auto refusal = check_history_control(step.caller)) return Err{*refusal};
  if (op.floor <= head_.floor)
    return refuse(Reason::kFloorNotAdvancing,
                  "the floor is at " + std::to_string(head_.floor.value) + "; it only moves up");
  const auto entry = step.catalog.committed_entry(op.floor);
  if (!entry || !std::holds_alternative<Checkpoint>(entry->request.request.op))
    return refuse(Reason::kUnknownCheckpoint, "no committed checkpoint at " + std::to_string(op.floor.value));
  const auto* done = std::get_if<Checkpointed>(&entry->receipt.outcome);
  if (!done || entry->receipt.position != op.floor)
    return refuse(Reason::kCheckpointMismatch, "the entry at " + std::to_string(op.floor.value) + " is not a complete checkpoint");
  if (done->roots != op.roots)
    return refuse(Reason::kCheckpointMismatch, "the checkpoint at " + std::to_string(op.floor.value) + " carries other roots");
  const Position previous = head_.floor;
  head_.floor = op.floor;
  step.touched.trim_below = op.floor;
  return Outcome{FloorAdvanced{op.floor, previous}};
}

Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const CheckpointQuery&) const {
  if (!(rights(ctx.caller, RealmScope{}) & kInspect))
    return refuse(Reason::kNotPermitted, "requires inspect at realm scope");
  CheckpointStatus status{head_.floor, std::nullopt};
  if (head_.checkpoint.value != 0) status.latest = CheckpointInfo{head_.checkpoint, head_.checkpoint_roots};
  return QueryResult{status};
}

}  // namespace cowboy::transit::node
