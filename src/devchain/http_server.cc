#include "devchain/http_server.h"

#include <nlohmann/json.hpp>

#include "devchain/http_routes.h"
#include "devchain/json.h"
#include "net/http_server.h"

namespace cowboy::devchain {

using Json = nlohmann::json;

namespace http {

Reply error_reply(const ApiError& e) {
  return Reply{api_error_http_status(e.code), json::error_to_json(e)};
}
Reply bad_request(std::string message) { return error_reply(ApiError{ApiErrorCode::kBadRequest, std::move(message)}); }

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    if (path.front() == '/') { path.remove_prefix(1); continue; }
    auto end = path.find('/');
    parts.push_back(path.substr(0, end));
    if (end == std::string_view::npos) break;
    path.remove_prefix(end);
  }
  return parts;
}

std::optional<std::uint64_t> parse_u64(std::string_view digits) {
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::optional<std::uint64_t> query_u64(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == key) return parse_u64(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace http

namespace {

using namespace http;

Reply route(ChainApi& api, Cip11Api* cip11, BlocksApi* blocks, PresenceViewsApi* views, std::string_view method,
            std::string_view target, const std::string& body) {
  auto qpos = target.find('?');
  std::string_view path = target.substr(0, qpos);
  std::string_view query = qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
  auto parts = split_path(path);
  if (cip11)
    if (auto r = route_cip11(*cip11, method, parts)) return std::move(*r);
  if (views)
    if (auto r = route_presence_views(*views, method, parts, body)) return std::move(*r);
  if (blocks)
    if (auto r = route_blocks(*blocks, method, parts, body)) return std::move(*r);
  if (parts.size() < 2 || parts[0] != "v1") return error_reply(ApiError{ApiErrorCode::kNotFound, "no such route"});
  std::string_view what = parts[1];
  auto arg = [&](std::size_t i) { return i < parts.size() ? std::string(parts[i]) : std::string(); };

  if (method == "POST" && what == "tx" && parts.size() == 2) {
    auto j = Json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("tx") || !j["tx"].is_string()) return bad_request("body must be {\"tx\": \"0x…\"}");
    auto bytes = from_hex(j["tx"].get<std::string>());
    if (!bytes) return bad_request("tx is not hex");
    auto tx = decode_tx(*bytes);
    if (!tx) {
      auto code = tx.error() == codec::DecodeError::kLengthOverCap ? ApiErrorCode::kTxTooLarge : ApiErrorCode::kMalformedTx;
      return error_reply(ApiError{code, std::string(codec::to_string(tx.error()))});
    }
    return reply_from(api.submit(*tx), [](const Bytes32& h) { return Json{{"tx_hash", json::hex0x(h)}}; });
  }
  if (method != "GET") return error_reply(ApiError{ApiErrorCode::kBadRequest, "method not allowed"});

  if (what == "status" && parts.size() == 2) {
    auto h = api.height();
    auto id = api.chain_instance_id();
    if (!h) return error_reply(h.error());
    if (!id) return error_reply(id.error());
    return Reply{200, Json{{"height", *h}, {"chain_instance_id", json::hex0x(*id)}}};
  }
  if (what == "tx" && parts.size() == 3) {
    auto hash = fixed_from_hex<32>(arg(2));
    if (!hash) return bad_request("tx hash must be 32 bytes of hex");
    auto r = api.receipt(*hash);
    if (!r) return error_reply(r.error());
    if (!*r) return error_reply(ApiError{ApiErrorCode::kNotFound, "pending or unknown"});
    return Reply{200, json::receipt_to_json(**r)};
  }
  if (what == "native" && parts.size() == 3) {
    auto a = fixed_from_hex<20>(arg(2));
    if (!a) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.account_info(*a), [](const AccountInfo& i) {
      return Json{{"balance", u128_to_string(i.balance)}, {"next_nonce", i.next_nonce}};
    });
  }
  if (what == "providers" && parts.size() == 3) {
    auto a = fixed_from_hex<20>(arg(2));
    if (!a) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.provider(*a), json::provider_to_json);
  }
  if (what == "streams" && parts.size() == 3) {
    auto id = fixed_from_hex<32>(arg(2));
    if (!id) return bad_request("stream_id must be 32 bytes of hex");
    return reply_from(api.stream(*id), json::stream_to_json);
  }
  if (what == "accounts" && parts.size() == 4) {
    auto owner = fixed_from_hex<20>(arg(2));
    auto provider = fixed_from_hex<20>(arg(3));
    if (!owner || !provider) return bad_request("owner and provider must be 20 bytes of hex");
    return reply_from(api.account(*owner, *provider), json::account_to_json);
  }
  if (what == "params" && parts.size() == 2) return reply_from(api.params(), json::params_to_json);
  if (what == "events" && parts.size() == 2) {
    auto from = query_u64(query, "from");
    auto to = query_u64(query, "to");
    if (!from || !to) return bad_request("events needs ?from=&to= heights");
    return reply_from(api.events(*from, *to), [](const std::vector<BlockEvents>& blocks) {
      Json out = Json::array();
      for (const auto& b : blocks) {
        Json events = Json::array();
        for (const auto& e : b.events) events.push_back(json::event_to_json(e));
        out.push_back({{"height", b.height}, {"tx_hash", json::hex0x(b.tx_hash)}, {"events", events}});
      }
      return out;
    });
  }
  if (what == "snapshot" && parts.size() == 3) {
    auto a = fixed_from_hex<20>(arg(2));
    if (!a) return bad_request("address must be 20 bytes of hex");
    return reply_from(api.provider_snapshot(*a), json::snapshot_to_json);
  }
  return error_reply(ApiError{ApiErrorCode::kNotFound, "no such route"});
}

}  // namespace

HttpServer::HttpServer(ChainApi& api, Cip11Api* cip11, const std::string& address, std::uint16_t port,
                       BlocksApi* blocks, PresenceViewsApi* views)
    : server_(std::make_unique<net::HttpServer>(
          [&api, cip11, blocks, views](const net::HttpRequest& req) {
            Reply r = route(api, cip11, blocks, views, req.method, req.target, req.body);
            return net::HttpReply{r.status, "application/json", r.body.dump()};
          },
          address, port)) {}

HttpServer::~HttpServer() = default;
std::uint16_t HttpServer::port() const { return server_->port(); }
void HttpServer::start() { server_->start(); }
void HttpServer::stop() { server_->stop(); }

}  // namespace cowboy::devchain
