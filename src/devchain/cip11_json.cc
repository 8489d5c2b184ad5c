#include "devchain/cip11_json.h"

#include <nlohmann/json.hpp>

#include "cip11/chain/codec.h"
#include "cip11/preimages.h"
#include "devchain/json.h"

namespace cowboy::devchain::json {

using nlohmann::json;
using namespace cowboy::cip11;

namespace {
std::string_view health_name(HealthStatus h) {
  switch (h) {
    case HealthStatus::kHealthy: return "Healthy";
    case HealthStatus::kUnhealthy: return "Unhealthy";
    case HealthStatus::kPaused: return "Paused";
    case HealthStatus::kDeregistered: return "Deregistered";
  }
  return "Unknown";
}
std::string_view end_name(chain::EndReason r) {
  switch (r) {
    case chain::EndReason::kReassigned: return "Reassigned";
    case chain::EndReason::kExpired: return "Expired";
    case chain::EndReason::kFailed: return "Failed";
    case chain::EndReason::kCompleted: return "Completed";
  }
  return "Unknown";
}
}  // namespace

json job_kinds_to_json(std::uint32_t mask) {
  json kinds = json::array();
  for (unsigned k = 0; k < 6; ++k)
    if (mask >> k & 1) kinds.push_back(job_kind_name(static_cast<JobKind>(k)));
  return kinds;
}

json runner_to_json(const chain::RunnerRecord& r, std::optional<std::uint32_t> index) {
  json j{{"address", hex0x(r.address)},
         {"key", hex0x(r.key)},
         {"stake", u128_to_string(r.stake)},
         {"job_kinds", job_kinds_to_json(r.job_kinds)},
         {"capabilities", r.capabilities},
         {"max_concurrent", r.max_concurrent},
         {"price", u128_to_string(r.price)},
         {"health", health_name(r.health)},
         {"registered_at", r.registered_at.value},
         {"last_heartbeat", r.last_heartbeat.value},
         {"active_jobs", r.active_jobs},
         {"reputation_x1e9", r.reputation_x1e9},
         {"hex", hex0x(chain::encode_runner(r))}};
  if (index) j["index"] = *index;
  return j;
}

namespace {
template <typename Record, typename Decode>
std::optional<Record> from_hex_field(const json& j, Decode decode) {
  if (!j.is_object() || !j.contains("hex") || !j["hex"].is_string()) return std::nullopt;
  auto bytes = from_hex(j["hex"].get<std::string>());
  if (!bytes) return std::nullopt;
  auto record = decode(*bytes);
  if (!record) return std::nullopt;
  return std::move(*record);
}
}  // namespace

std::optional<chain::RunnerRecord> runner_from_json(const json& j) {
  return from_hex_field<chain::RunnerRecord>(j, chain::decode_runner);
}
std::optional<chain::JobRecord> job_from_json(const json& j) { return from_hex_field<chain::JobRecord>(j, chain::decode_job); }

json presence_proof_to_json(const Address& runner, const chain::PresenceProof& p) {
  return json{{"runner", hex0x(runner)},
              {"anchor", p.anchor.value},
              {"proven_until", p.proven_until.value},
              {"hex", hex0x(chain::encode_presence_proof(p))}};
}
std::optional<chain::PresenceProof> presence_proof_from_json(const json& j) {
  return from_hex_field<chain::PresenceProof>(j, chain::decode_presence_proof);
}

json block_presence_to_json(const BlockPresence& p) {
  return json{{"height", p.height}, {"presence", p.field ? json(hex0x(*p.field)) : json(nullptr)}, {"present", p.present}};
}

std::optional<BlockPresence> block_presence_from_json(const json& j) {
  if (!j.is_object() || !j.contains("height") || !j["height"].is_number_unsigned() || !j.contains("presence") ||
      !j.contains("present") || !j["present"].is_array())
    return std::nullopt;
  BlockPresence p;
  p.height = j["height"].get<std::uint64_t>();
  if (j["presence"].is_string()) {
    auto bytes = from_hex(j["presence"].get<std::string>());
    if (!bytes) return std::nullopt;
    p.field = std::move(*bytes);
  }
  for (const auto& i : j["present"]) {
    if (!i.is_number_unsigned() || i.get<std::uint64_t>() > UINT32_MAX) return std::nullopt;
    p.present.push_back(i.get<std::uint32_t>());
  }
  return p;
}

json job_to_json(const chain::JobRecord& job) {
  json committee = json::array(), excluded = json::array();
  for (const auto& a : job.committee) {
    json m{{"runner", hex0x(a.runner)}, {"committed", a.commitment.has_value()}, {"revealed", a.result_hash.has_value()}};
    committee.push_back(m);
  }
  for (const auto& x : job.excluded) excluded.push_back(hex0x(x));
  const Bytes spec = chain::job_spec_bytes(job);
  json j{{"job_id", hex0x(job.job_id.value)},
         {"submitter", hex0x(job.submitter)},
         {"kind", job_kind_name(job.kind)},
         {"spec", hex0x(job.spec)},
         {"job_spec", hex0x(spec)},
         {"job_spec_hash", hex0x(job_spec_hash(spec))},
         {"timeout_blocks", job.timeout_blocks},
         {"runners", job.runners},
         {"max_price", u128_to_string(job.max_price)},
         {"submitted_at", job.submitted_at.value},
         {"state", chain::job_state_name(job.state)},
         {"selections", job.selections},
         {"assignment_height", job.assignment_height.value},
         {"deadline_block", job.deadline_block.value},
         {"committee", committee},
         {"excluded", excluded}};
  if (job.pending) j["seed_view"] = job.pending->seed_view.value;
  if (chain::terminal(job.state)) j["finished_at"] = job.finished_at.value;
  if (job.state == chain::JobState::kCompleted) j["result"] = hex0x(job.result);
  j["hex"] = hex0x(chain::encode_job(job));
  return j;
}

void put_cip11_block(json& block, const std::optional<Bytes>& presence, std::uint32_t registry_size,
                     const chain::Effects& effects) {
  block["presence"] = presence ? json(hex0x(*presence)) : json(nullptr);
  block["registry_size"] = registry_size;
  json seeds = json::array();
  for (const auto& s : effects.consumed_seeds) {
    json entry{{"epoch", s.epoch.value}, {"view", s.view.value}, {"signature", hex0x(s.signature)}};
    if (!s.evidence.empty()) entry["evidence"] = hex0x(s.evidence);
    seeds.push_back(std::move(entry));
  }
  block["consumed_seeds"] = seeds;
  put_assignments(block, effects);
}

void put_assignments(json& block, const chain::Effects& effects) {
  json assigned = json::array(), ended = json::array();
  for (const auto& a : effects.assigned)
    assigned.push_back({{"job_id", hex0x(a.job_id.value)}, {"runner", hex0x(a.runner)}, {"deadline_block", a.deadline_block.value}});
  for (const auto& e : effects.ended)
    ended.push_back({{"job_id", hex0x(e.job_id.value)}, {"runner", hex0x(e.runner)}, {"reason", end_name(e.reason)}});
  json deregistered = json::array();
  for (const auto& r : effects.deregistered) deregistered.push_back(hex0x(r));
  block["assigned"] = assigned;
  block["ended"] = ended;
  block["deregistered"] = deregistered;
}

std::optional<chain::Effects> assignments_from_json(const json& block, std::uint64_t height) {
  if (!block.is_object() || !block.contains("assigned") || !block["assigned"].is_array() || !block.contains("ended") ||
      !block["ended"].is_array() || !block.contains("deregistered") || !block["deregistered"].is_array())
    return std::nullopt;
  auto ids = [](const json& j) -> std::optional<std::pair<cip11::JobId, Address>> {
    if (!j.is_object() || !j.contains("job_id") || !j["job_id"].is_string() || !j.contains("runner") ||
        !j["runner"].is_string())
      return std::nullopt;
    auto job = fixed_from_hex<32>(j["job_id"].get<std::string>());
    auto runner = fixed_from_hex<20>(j["runner"].get<std::string>());
    if (!job || !runner) return std::nullopt;
    return std::pair{cip11::JobId{*job}, *runner};
  };
  chain::Effects out;
  for (const auto& a : block["assigned"]) {
    auto id = ids(a);
    if (!id || !a.contains("deadline_block") || !a["deadline_block"].is_number_unsigned()) return std::nullopt;
    out.assigned.push_back({id->first, id->second, cip11::Height{height}, cip11::Height{a["deadline_block"].get<std::uint64_t>()}});
  }
  for (const auto& e : block["ended"]) {
    auto id = ids(e);
    if (!id || !e.contains("reason") || !e["reason"].is_string()) return std::nullopt;
    std::optional<chain::EndReason> reason;
    for (auto r : {chain::EndReason::kReassigned, chain::EndReason::kExpired, chain::EndReason::kFailed,
                   chain::EndReason::kCompleted})
      if (end_name(r) == e["reason"].get<std::string>()) reason = r;
    if (!reason) return std::nullopt;
    out.ended.push_back({id->first, id->second, *reason});
  }
  for (const auto& r : block["deregistered"]) {
    auto runner = r.is_string() ? fixed_from_hex<20>(r.get<std::string>()) : std::nullopt;
    if (!runner) return std::nullopt;
    out.deregistered.push_back(*runner);
  }
  return out;
}

std::optional<BlockPresence> cip11_block_presence(const json& block) {
  if (!block.is_object() || !block.contains("presence") || !block.contains("registry_size") ||
      !block["registry_size"].is_number_unsigned())
    return std::nullopt;
  BlockPresence out;
  if (block["presence"].is_string()) {
    auto bytes = from_hex(block["presence"].get<std::string>());
    if (!bytes) return std::nullopt;
    out.field = *bytes;
    if (auto set = decode_presence(*bytes, block["registry_size"].get<std::uint32_t>())) out.present = set->indices();
  }
  return out;
}

}  // namespace cowboy::devchain::json
