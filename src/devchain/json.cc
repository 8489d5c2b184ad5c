#include "devchain/json.h"

#include <nlohmann/json.hpp>

#include "cbqs/wire/codec.h"

namespace cowboy::devchain::json {

std::string hex0x(ByteView bytes) { return to_hex0x(bytes); }

namespace {

std::string amount(u128 v) { return u128_to_string(v); }

// Reading helpers that never throw: a missing or mistyped field yields nullopt.
struct Fields {
  const json& j;
  bool ok = true;
  template <std::size_t N>
  std::array<std::uint8_t, N> fixed(const char* key) {
    if (!j.contains(key) || !j[key].is_string()) { ok = false; return {}; }
    auto v = fixed_from_hex<N>(j[key].get<std::string>());
    if (!v) { ok = false; return {}; }
    return *v;
  }
  u128 u128_field(const char* key) {
    if (!j.contains(key) || !j[key].is_string()) { ok = false; return 0; }
    auto v = u128_from_string(j[key].get<std::string>());
    if (!v) { ok = false; return 0; }
    return *v;
  }
  std::uint64_t u64(const char* key) {
    if (!j.contains(key) || !j[key].is_number_unsigned()) { ok = false; return 0; }
    return j[key].get<std::uint64_t>();
  }
  bool boolean(const char* key) {
    if (!j.contains(key) || !j[key].is_boolean()) { ok = false; return false; }
    return j[key].get<bool>();
  }
  std::string text(const char* key) {
    if (!j.contains(key) || !j[key].is_string()) { ok = false; return {}; }
    return j[key].get<std::string>();
  }
};

template <typename Record>
std::optional<Record> record_from_hex(const json& j) {
  if (!j.is_string()) return std::nullopt;
  auto bytes = from_hex(j.get_ref<const std::string&>());
  if (!bytes) return std::nullopt;
  auto record = cbqs::decode<Record>(*bytes);
  if (!record) return std::nullopt;
  return std::move(*record);
}
}  // namespace

json event_to_json(const cbqs::ChainEvent& e) {
  using namespace cbqs::event;
  json j{{"type", std::string(cbqs::event_name(e))}};
  std::visit(
      [&](const auto& ev) {
        using T = std::decay_t<decltype(ev)>;
        if constexpr (std::is_same_v<T, ProviderRegistered>) {
          j["provider"] = hex0x(ev.provider); j["charge"] = amount(ev.charge);
        } else if constexpr (std::is_same_v<T, ProviderUpdated>) {
          j["provider"] = hex0x(ev.provider); j["signing_key_rotated"] = ev.signing_key_rotated;
        } else if constexpr (std::is_same_v<T, StreamCreated>) {
          j["stream_id"] = hex0x(ev.stream_id); j["owner"] = hex0x(ev.owner);
          j["provider"] = hex0x(ev.provider); j["charge"] = amount(ev.charge);
        } else if constexpr (std::is_same_v<T, StreamUpdated>) {
          j["stream_id"] = hex0x(ev.stream_id); j["admin_key_rotated"] = ev.admin_key_rotated;
          j["authorization_generation"] = ev.authorization_generation;
        } else if constexpr (std::is_same_v<T, StreamClosed>) {
          j["stream_id"] = hex0x(ev.stream_id); j["by_provider"] = ev.by_provider;
        } else if constexpr (std::is_same_v<T, AccountCreated>) {
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider); j["balance"] = amount(ev.balance);
        } else if constexpr (std::is_same_v<T, AccountToppedUp>) {
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider); j["amount"] = amount(ev.amount);
        } else if constexpr (std::is_same_v<T, AccountSettled>) {
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider); j["height"] = ev.height;
          j["paid"] = amount(ev.paid); j["provider_share"] = amount(ev.provider_share);
          j["platform_share"] = amount(ev.platform_share);
        } else if constexpr (std::is_same_v<T, AccountSuspended>) {
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider); j["written_off"] = amount(ev.written_off);
        } else if constexpr (std::is_same_v<T, AccountWithdrawn>) {
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider); j["amount"] = amount(ev.amount);
        } else if constexpr (std::is_same_v<T, ParameterChanged>) {
          j["name"] = ev.name; j["old_value"] = ev.old_value; j["new_value"] = ev.new_value;
        } else {  // AccountResumed, AccountDeleted
          j["owner"] = hex0x(ev.owner); j["provider"] = hex0x(ev.provider);
        }
      },
      e);
  return j;
}

std::optional<cbqs::ChainEvent> event_from_json(const json& j) {
  using namespace cbqs::event;
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return std::nullopt;
  std::string type = j["type"];
  Fields f{j};
  std::optional<cbqs::ChainEvent> out;
  if (type == "ProviderRegistered") out = ProviderRegistered{f.fixed<20>("provider"), f.u128_field("charge")};
  else if (type == "ProviderUpdated") out = ProviderUpdated{f.fixed<20>("provider"), f.boolean("signing_key_rotated")};
  else if (type == "StreamCreated")
    out = StreamCreated{f.fixed<32>("stream_id"), f.fixed<20>("owner"), f.fixed<20>("provider"), f.u128_field("charge")};
  else if (type == "StreamUpdated")
    out = StreamUpdated{f.fixed<32>("stream_id"), f.boolean("admin_key_rotated"), f.u64("authorization_generation")};
  else if (type == "StreamClosed") out = StreamClosed{f.fixed<32>("stream_id"), f.boolean("by_provider")};
  else if (type == "AccountCreated")
    out = AccountCreated{f.fixed<20>("owner"), f.fixed<20>("provider"), f.u128_field("balance")};
  else if (type == "AccountToppedUp")
    out = AccountToppedUp{f.fixed<20>("owner"), f.fixed<20>("provider"), f.u128_field("amount")};
  else if (type == "AccountSettled")
    out = AccountSettled{f.fixed<20>("owner"), f.fixed<20>("provider"), f.u64("height"), f.u128_field("paid"),
                         f.u128_field("provider_share"), f.u128_field("platform_share")};
  else if (type == "AccountSuspended")
    out = AccountSuspended{f.fixed<20>("owner"), f.fixed<20>("provider"), f.u128_field("written_off")};
  else if (type == "AccountResumed") out = AccountResumed{f.fixed<20>("owner"), f.fixed<20>("provider")};
  else if (type == "AccountWithdrawn")
    out = AccountWithdrawn{f.fixed<20>("owner"), f.fixed<20>("provider"), f.u128_field("amount")};
  else if (type == "AccountDeleted") out = AccountDeleted{f.fixed<20>("owner"), f.fixed<20>("provider")};
  else if (type == "ParameterChanged") out = ParameterChanged{f.text("name"), f.u64("old_value"), f.u64("new_value")};
  if (!f.ok) return std::nullopt;
  return out;
}

json receipt_to_json(const TxReceipt& r) {
  json events = json::array();
  for (const auto& e : r.events) events.push_back(event_to_json(e));
  json j{{"tx_hash", hex0x(r.tx_hash)},
         {"height", r.height},
         {"index", r.index},
         {"sender", hex0x(r.sender)},
         {"nonce", r.nonce},
         {"status", r.ok() ? "applied" : "rejected"},
         {"events", events},
         {"metering",
          {{"charged_reads", r.metering.charged_reads},
           {"charged_writes", r.metering.charged_writes},
           {"cells", r.metering.cells}}}};
  if (r.error) j["error"] = *r.error;
  if (r.job_id) j["job_id"] = hex0x(r.job_id->value);
  return j;
}

std::optional<TxReceipt> receipt_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Fields f{j};
  TxReceipt r;
  r.tx_hash = f.fixed<32>("tx_hash");
  r.height = f.u64("height");
  r.index = static_cast<std::uint32_t>(f.u64("index"));
  r.sender = f.fixed<20>("sender");
  r.nonce = f.u64("nonce");
  if (j.contains("error")) r.error = f.text("error");
  if (j.contains("job_id")) r.job_id = cip11::JobId{f.fixed<32>("job_id")};
  if (!j.contains("events") || !j["events"].is_array() || !j.contains("metering")) return std::nullopt;
  for (const auto& e : j["events"]) {
    auto ev = event_from_json(e);
    if (!ev) return std::nullopt;
    r.events.push_back(std::move(*ev));
  }
  Fields m{j["metering"]};
  r.metering.charged_reads = static_cast<std::uint32_t>(m.u64("charged_reads"));
  r.metering.charged_writes = static_cast<std::uint32_t>(m.u64("charged_writes"));
  r.metering.cells = m.u64("cells");
  if (!f.ok || !m.ok) return std::nullopt;
  return r;
}

json params_to_json(const cbqs::Params& p) {
  json j = json::object();
  for (const auto& spec : cbqs::param_table()) j["cbqs." + std::string(spec.name)] = *p.get(spec.name);
  return j;
}

std::optional<cbqs::Params> params_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  cbqs::Params p;
  for (const auto& spec : cbqs::param_table()) {
    std::string key = "cbqs." + std::string(spec.name);
    if (!j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
    p.set(spec.name, j[key].get<std::uint64_t>());
  }
  return p;
}

json provider_to_json(const cbqs::ProviderRecordV2& p) {
  json endpoints = json::array();
  for (const auto& e : p.endpoints) endpoints.push_back(std::string(e.begin(), e.end()));
  return json{{"hex", hex0x(cbqs::encode(p))},
              {"provider", hex0x(p.provider)},
              {"signing_key", hex0x(p.signing_key.key)},
              {"signing_key_since", p.signing_key_since},
              {"endpoints", endpoints},
              {"accepts_new", p.accepts_new},
              {"max_streams", p.max_streams},
              {"assigned_streams", p.assigned_streams}};
}

json stream_to_json(const cbqs::StreamRecordV2& s) {
  return json{{"hex", hex0x(cbqs::encode(s))},
              {"stream_id", hex0x(s.stream_id)},
              {"owner", hex0x(s.owner)},
              {"owner_nonce", s.owner_nonce},
              {"provider", hex0x(s.provider)},
              {"admin_key", hex0x(s.admin_key.key)},
              {"authorization_generation", s.authorization_generation},
              {"status", s.status == cbqs::StreamStatusV2::kActive ? "Active" : "Closed"}};
}

json account_to_json(const cbqs::CbqsAccountV2& a) {
  return json{{"hex", hex0x(cbqs::encode(a))},
              {"owner", hex0x(a.owner)},
              {"provider", hex0x(a.provider)},
              {"balance", amount(a.balance)},
              {"active_streams", a.active_streams},
              {"rate_per_block", amount(a.rate_per_block)},
              {"last_settled_block", a.last_settled_block},
              {"suspended", a.suspended}};
}

template <typename Record>
std::optional<Record> record_from_json(const json& j) {
  if (!j.is_object() || !j.contains("hex")) return std::nullopt;
  return record_from_hex<Record>(j["hex"]);
}
template std::optional<cbqs::ProviderRecordV2> record_from_json(const json&);
template std::optional<cbqs::StreamRecordV2> record_from_json(const json&);
template std::optional<cbqs::CbqsAccountV2> record_from_json(const json&);

// The snapshot is read by machines every cbqs.snapshot_refresh_ms: records go
// as bare canonical hex strings, without the readable fields of the per-record routes.
json snapshot_to_json(const ProviderSnapshot& s) {
  json streams = json::array(), accounts = json::array();
  for (const auto& st : s.streams) streams.push_back(hex0x(cbqs::encode(st)));
  for (const auto& a : s.accounts) accounts.push_back(hex0x(cbqs::encode(a)));
  return json{{"height", s.height},
              {"chain_instance_id", hex0x(s.chain_instance_id)},
              {"provider", hex0x(cbqs::encode(s.provider))},
              {"streams", streams},
              {"accounts", accounts},
              {"params", params_to_json(s.params)}};
}

std::optional<ProviderSnapshot> snapshot_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Fields f{j};
  ProviderSnapshot s;
  s.height = f.u64("height");
  s.chain_instance_id = f.fixed<32>("chain_instance_id");
  if (!f.ok || !j.contains("provider") || !j.contains("streams") || !j.contains("accounts") || !j.contains("params"))
    return std::nullopt;
  auto provider = record_from_hex<cbqs::ProviderRecordV2>(j["provider"]);
  auto params = params_from_json(j["params"]);
  if (!provider || !params || !j["streams"].is_array() || !j["accounts"].is_array()) return std::nullopt;
  s.provider = std::move(*provider);
  s.params = *params;
  s.streams.reserve(j["streams"].size());
  for (const auto& st : j["streams"]) {
    auto r = record_from_hex<cbqs::StreamRecordV2>(st);
    if (!r) return std::nullopt;
    s.streams.push_back(std::move(*r));
  }
  s.accounts.reserve(j["accounts"].size());
  for (const auto& a : j["accounts"]) {
    auto r = record_from_hex<cbqs::CbqsAccountV2>(a);
    if (!r) return std::nullopt;
    s.accounts.push_back(std::move(*r));
  }
  return s;
}

json error_to_json(const ApiError& e) {
  return json{{"error", {{"code", std::string(api_error_name(e.code))}, {"message", e.message}}}};
}

ApiError error_from_json(const json& j, int http_status) {
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    if (e.contains("code") && e["code"].is_string()) {
      if (auto code = api_error_from_name(e["code"].get<std::string>()))
        return ApiError{*code, e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : ""};
    }
  }
  return ApiError{ApiErrorCode::kInternal, "unexpected HTTP status " + std::to_string(http_status)};
}

}  // namespace cowboy::devchain::json
