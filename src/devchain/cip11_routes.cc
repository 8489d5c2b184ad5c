// The CIP-11 routes of the devchain HTTP API (docs/devchain.md):
//   GET /v1/cip11/genesis                 chain_id, ValidatorSetSnapshot(0), flags
//   GET /v1/cip11/validator-sets          every snapshot after epoch 0: genesis's, then governance's (D10)
//   GET /v1/cip11/runners[/{address}]     the Runner Registry, in index order
//   GET /v1/cip11/runners/{address}/presence-proof   Mode A's anchor and proven_until (§8.3)
//   GET /v1/cip11/jobs/{job_id}           a job, its committee and state
//   GET /v1/cip11/blocks/{height}/presence
//   GET /v1/cip11/blocks/{height}/assignments
//   GET /runner/{address}/jobs            the CIP-2 poll endpoint (§14); 410 once CIP11_POLL_DISABLED
// Jobs, results and registrations are transactions: POST /v1/tx.
#include <nlohmann/json.hpp>

#include "devchain/cip11_json.h"
#include "devchain/http_routes.h"
#include "devchain/json.h"

namespace cowboy::devchain::http {

using Json = nlohmann::json;

std::optional<Reply> route_cip11(Cip11Api& api, std::string_view method, const std::vector<std::string_view>& parts) {
  auto arg = [&](std::size_t i) { return std::string(parts[i]); };
  const bool poll = parts.size() == 3 && parts[0] == "runner" && parts[2] == "jobs";
  const bool ours = parts.size() >= 3 && parts[0] == "v1" && parts[1] == "cip11";
  if (!poll && !ours) return std::nullopt;
  if (method != "GET") return error_reply(ApiError{ApiErrorCode::kBadRequest, "method not allowed"});

  if (poll) {
    auto genesis = api.cip11_genesis();
    if (!genesis) return error_reply(genesis.error());
    if (genesis->params.poll_disabled) return error_reply(ApiError{ApiErrorCode::kGone, "CIP11_POLL_DISABLED is set"});
    auto runner = fixed_from_hex<20>(arg(1));
    if (!runner) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.runner_jobs(*runner), [](const std::vector<cip11::chain::JobRecord>& jobs) {
      Json out = Json::array();
      for (const auto& j : jobs) out.push_back(json::job_to_json(j));
      return Json{{"jobs", out}};
    });
  }
  std::string_view what = parts[2];
  if (what == "genesis" && parts.size() == 3) return reply_from(api.cip11_genesis(), cip11_genesis_to_json);
  if (what == "validator-sets" && parts.size() == 3)
    return reply_from(api.validator_set_changes(), [](const std::vector<cip11::chain::ValidatorSetChange>& changes) {
      Json out = Json::array();
      for (const auto& c : changes) out.push_back(validator_set_change_to_json(c));
      return Json{{"validator_set_changes", out}};
    });
  if (what == "validators" && parts.size() == 3)
    return reply_from(api.validators(), [](const std::vector<cip11::chain::ValidatorEntry>& validators) {
      Json out = Json::array();
      for (const auto& v : validators) out.push_back(validator_entry_to_json(v));
      return Json{{"validators", out}};
    });
  if (what == "runners" && parts.size() == 3)
    return reply_from(api.runners(), [](const std::vector<cip11::chain::RunnerRecord>& runners) {
      Json out = Json::array();
      for (std::uint32_t i = 0; i < runners.size(); ++i) out.push_back(json::runner_to_json(runners[i], i));
      return Json{{"runners", out}};
    });
  if (what == "runners" && parts.size() == 4) {
    auto a = fixed_from_hex<20>(arg(3));
    if (!a) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.runner(*a), [](const cip11::chain::RunnerRecord& r) { return json::runner_to_json(r, std::nullopt); });
  }
  if (what == "runners" && parts.size() == 5 && parts[4] == "presence-proof") {
    auto a = fixed_from_hex<20>(arg(3));
    if (!a) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.presence_proof(*a), [&](const cip11::chain::PresenceProof& p) {
      return json::presence_proof_to_json(*a, p);
    });
  }
  if (what == "jobs" && parts.size() == 4) {
    auto id = fixed_from_hex<32>(arg(3));
    if (!id) return bad_request("job_id must be 32 bytes of hex");
    return reply_from(api.job(cip11::JobId{*id}), json::job_to_json);
  }
  if (what == "blocks" && parts.size() == 5 && parts[4] == "presence") {
    auto height = parse_u64(parts[3]);
    if (!height) return bad_request("height must be a decimal u64");
    return reply_from(api.block_presence(*height), json::block_presence_to_json);
  }
  if (what == "blocks" && parts.size() == 5 && parts[4] == "assignments") {
    auto height = parse_u64(parts[3]);
    if (!height) return bad_request("height must be a decimal u64");
    return reply_from(api.block_assignments(*height), [&](const cip11::chain::Effects& e) {
      Json out{{"height", *height}};
      json::put_assignments(out, e);
      return out;
    });
  }
  return error_reply(ApiError{ApiErrorCode::kNotFound, "no such route"});
}

}  // namespace cowboy::devchain::http
