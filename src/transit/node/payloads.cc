// Payloads: declaration, readiness, retirement and confirmed deletion, and the
// payload read (docs/transit.md, decisions 84-86). The record is metadata; the
// bytes are the payload store's, and the two steps that claim something about
// them - ready, deleted - are accepted only on what the store holds at the
// decision (PayloadFacts).
#include "transit/node/authority.h"
#include "transit/node/layout.h"

namespace cowboy::transit::node {
namespace {

Err<Refusal> refuse(Reason reason, std::string message) {
  return Err{Refusal{reason, std::move(message)}};
}

PayloadChanged changed(const PayloadInfo& p) { return PayloadChanged{p.payload, p.pid, p.state}; }

}  // namespace

// Every process lifetime here is finite (decision 11: any process can
// retire), so a payload always belongs to a process and ends with it; a
// standalone one would outlive every lifetime (decision 85).
Result<Outcome, Refusal> Authority::apply(const DeclarePayload& op, Step& step) {
  if (!op.pid) return refuse(Reason::kStandalonePayload, "a payload belongs to a process: lifetimes here are finite");
  auto p = live_process(*op.pid, step, kExecute);
  if (!p.ok()) return Err{p.error()};
  const Id id = head_.next_payload++;
  PayloadInfo info{id, *op.pid, step.caller, op.length, op.sha256, op.allow_delete, PayloadState::kDeclared,
                   step.position, std::nullopt, std::nullopt, std::nullopt};
  payloads_.put(id, PayloadRecord{info});
  put_row(layout::key(layout::kPayloadsOf, *op.pid, id), true);
  step.touched.payloads.push_back(id);
  return Outcome{changed(info)};
}

Result<PayloadInfo*, Refusal> Authority::published_payload(Id id, const Step& step) {
  auto* found = payload_mut(id);
  if (!found) return refuse(Reason::kUnknownPayload, "no payload " + std::to_string(id));
  auto& info = found->info;
  if (info.publisher != step.caller)
    return refuse(Reason::kNotPublisher, "principal " + std::to_string(info.publisher.value) + " published it");
  if (!(rights(step.caller, PidScope{info.pid}) & kExecute))
    return refuse(Reason::kNotPermitted, "requires execute at the payload's process");
  return &info;
}

Result<Outcome, Refusal> Authority::apply(const PayloadReady& op, Step& step) {
  auto found = published_payload(op.payload, step);
  if (!found.ok()) return Err{found.error()};
  auto& info = **found;
  if (info.state != PayloadState::kDeclared)
    return refuse(Reason::kPayloadNotDeclared,
                  "the payload is " + std::string(EnumTraits<PayloadState>::kNames[static_cast<int>(info.state)]));
  if (const auto* p = process(info.pid); !p || retired(*p, step.now_ms))
    return refuse(Reason::kRetired, "the payload's process is permanently retired");
  if (!step.payloads.holds(info.payload, info.length, info.sha256))
    return refuse(Reason::kPayloadBytesMissing, "upload the declared bytes first (PUT /v1/payloads/" +
                                                    std::to_string(info.payload) + ")");
  info.state = PayloadState::kReady;
  info.ready_at = step.position;
  step.touched.payloads.push_back(info.payload);
  return Outcome{changed(info)};
}

// Deletion needs every piece of evidence the seed names, each its own refusal:
// allow_delete given at the declaration, the process retired, then
// retire_payload, then the store's confirmation (payload_deleted).
Result<Outcome, Refusal> Authority::apply(const RetirePayload& op, Step& step) {
  auto found = published_payload(op.payload, step);
  if (!found.ok()) return Err{found.error()};
  auto& info = **found;
  if (!info.allow_delete) return refuse(Reason::kDeleteNotAllowed, "declared without allow_delete: kept forever");
  if (info.state == PayloadState::kRetired || info.state == PayloadState::kDeleted)
    return refuse(Reason::kPayloadRetired, "the payload is retired already");
  if (const auto* p = process(info.pid); p && !retired(*p, step.now_ms))
    return refuse(Reason::kProcessNotRetired, "process " + std::to_string(info.pid.value) + " is not retired");
  info.state = PayloadState::kRetired;
  info.retired_at = step.position;
  step.touched.payloads.push_back(info.payload);
  return Outcome{changed(info)};
}

Result<Outcome, Refusal> Authority::apply(const PayloadDeleted& op, Step& step) {
  auto found = published_payload(op.payload, step);
  if (!found.ok()) return Err{found.error()};
  auto& info = **found;
  if (!info.allow_delete) return refuse(Reason::kDeleteNotAllowed, "declared without allow_delete: kept forever");
  if (info.state != PayloadState::kRetired)
    return refuse(Reason::kPayloadNotRetired,
                  "the payload is " + std::string(EnumTraits<PayloadState>::kNames[static_cast<int>(info.state)]));
  if (!step.payloads.absent(info.payload, info.sha256))
    return refuse(Reason::kPayloadBytesPresent, "delete the bytes first (DELETE /v1/payloads/" +
                                                    std::to_string(info.payload) + ")");
  info.state = PayloadState::kDeleted;
  info.deleted_at = step.position;
  step.touched.payloads.push_back(info.payload);
  return Outcome{changed(info)};
}

// Metadata and bytes alike are read with read at the payload's PID (decision 86).
Result<QueryResult, Refusal> Authority::read(const ReadCtx& ctx, const PayloadRead& q) const {
  const auto* record = payload(q.payload);
  if (!record) return refuse(Reason::kUnknownPayload, "no payload " + std::to_string(q.payload));
  if (!(rights(ctx.caller, PidScope{record->info.pid}) & kRead))
    return refuse(Reason::kNotPermitted, "requires read at the payload's process");
  return QueryResult{record->info};
}

}  // namespace cowboy::transit::node
