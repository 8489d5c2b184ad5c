#include "cbqs/checkpoints.h"

namespace cowboy::cbqs::sdk {

const char* verdict_name(CheckpointVerdict v) {
  switch (v) {
    case CheckpointVerdict::kValid: return "valid";
    case CheckpointVerdict::kInvalid: return "invalid";
    case CheckpointVerdict::kUnverifiable: return "unverifiable";
  }
  return "?";
}

namespace {

std::string range(const CheckpointReceiptV2& r) {
  return "receipt [" + std::to_string(r.first_sequence.value) + ", " + std::to_string(r.last_sequence.value) + "]";
}

// The link between a receipt and the one before it (§10); empty when it holds.
std::string broken_link(const CheckpointReceiptV2& r, const CheckpointReceiptV2* before) {
  Sequence first{before ? before->last_sequence.value + 1 : 1};
  Bytes32 previous = before ? checkpoint_id(*before) : Bytes32{};
  if (r.first_sequence != first) return "first_sequence is not " + std::to_string(first.value);
  if (r.last_sequence < r.first_sequence) return "last_sequence is below first_sequence";
  if (r.previous_checkpoint != previous) return "previous_checkpoint does not name the receipt before it";
  if (before && r.snapshot_height < before->snapshot_height) return "snapshot_height went down";
  if (before && r.committed_at_ms < before->committed_at_ms) return "committed_at_ms went down";
  return {};
}

}  // namespace

Outcome<ChainReport> verify_chain(Client& client, const ProviderRecordV2& provider,
                                  const std::function<void(const ChainReport&)>& progress) {
  ChainReport report;
  auto stop = [&](CheckpointVerdict v, std::string problem) {
    report.verdict = v;
    report.problem = std::move(problem);
    return Outcome<ChainReport>(report);
  };
  if (!std::holds_alternative<LaneScopeAny>(client.grant().lane_scope))
    return stop(CheckpointVerdict::kUnverifiable, "the grant sees only some lanes, so records_digest cannot be recomputed");
  auto latest = client.checkpoint();
  if (!latest) {
    if (latest.error().is(ErrorCode::kCheckpointNotFound)) return report;  // nothing committed yet
    return Err{latest.error()};
  }
  auto reader = client.read({LaneScopeAny{}, StartAt{Sequence{1}}, 4 << 20});
  if (!reader) return Err{reader.error()};
  std::optional<CheckpointReceiptV2> before;
  while (report.last_sequence < latest->last_sequence) {
    auto r = client.checkpoint(Sequence{report.last_sequence.value + 1});
    if (!r) return Err{r.error()};
    if (auto v = verify_checkpoint(*r, provider); v != CheckpointVerdict::kValid)
      return stop(v, range(*r) + (v == CheckpointVerdict::kInvalid ? ": the signature (or provider) does not verify"
                                                                   : ": no signing key of the provider record covers its snapshot_height"));
    if (auto broken = broken_link(*r, before ? &*before : nullptr); !broken.empty())
      return stop(CheckpointVerdict::kInvalid, range(*r) + ": " + broken);
    // `records` points into `payloads`: a Bytes keeps its buffer when the
    // vector holding it moves it, so the views stay valid as it grows.
    std::vector<Bytes> payloads;
    std::vector<RecordView> records;
    for (std::uint64_t seq = r->first_sequence.value; seq <= r->last_sequence.value; ++seq) {
      auto record = (*reader)->next(std::chrono::seconds(10));
      if (!record) return Err{record.error()};
      if (!*record) return Err{Error{Error::Kind::kTimeout, 0, "record " + std::to_string(seq) + " did not arrive"}};
      if ((*record)->sequence != Sequence{seq})
        return stop(CheckpointVerdict::kInvalid, range(*r) + ": record " + std::to_string(seq) + " is missing");
      payloads.push_back(std::move((*record)->payload));
      records.push_back({RecordHeaderV2{r->stream_id, (*record)->lane_id}, payloads.back()});
    }
    if (records_digest(record_digests(records)) != r->records_digest)
      return stop(CheckpointVerdict::kInvalid, range(*r) + ": records_digest does not match its records");
    before = *r;
    ++report.receipts;
    report.last_sequence = r->last_sequence;
    if (progress) progress(report);
  }
  return report;
}

}  // namespace cowboy::cbqs::sdk
