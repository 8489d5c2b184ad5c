#include "devchain/http_client.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "devchain/cip11_json.h"
#include "devchain/json.h"
#include "net/timed_io.h"

namespace cowboy::devchain {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Json = nlohmann::json;

namespace {
constexpr std::size_t kMaxResponseBytes = 64 * 1024 * 1024;  // a snapshot of very many streams

ApiError unreadable(std::string_view what) {
  return ApiError{ApiErrorCode::kInternal, "unreadable " + std::string(what) + " in the devchain's answer"};
}
}  // namespace

HttpClient::HttpClient(std::string host, std::uint16_t port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

std::optional<HttpClient> HttpClient::from_url(const std::string& url, std::chrono::milliseconds timeout) {
  std::string_view rest = url;
  if (!rest.starts_with("http://")) return std::nullopt;
  rest.remove_prefix(7);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  unsigned port = 0;
  for (char c : rest.substr(colon + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned>(c - '0');
    if (port > 65535) return std::nullopt;
  }
  return HttpClient(std::string(rest.substr(0, colon)), static_cast<std::uint16_t>(port), timeout);
}

namespace {
// One request on its own connection; the status and body, whatever the status.
ApiResult<HttpText> exchange(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout,
                             http::verb method, const std::string& target, const std::string& body = {}) {
  try {
    asio::io_context io;
    beast::tcp_stream stream(io);
    // The deadline covers the whole exchange; each step runs asynchronously
    // on this call's own io_context (net/timed_io.h says why).
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto step = [&](auto start) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (auto ec = net::run_timed(io, stream, std::max(left, std::chrono::milliseconds(1)), start))
        throw boost::system::system_error(ec);
    };
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(host, std::to_string(port));
    step([&](auto done) { stream.async_connect(endpoints, done); });
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, host);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
    }
    step([&](auto done) { http::async_write(stream, req, done); });
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBytes);
    step([&](auto done) { http::async_read(stream, buffer, parser, done); });
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return HttpText{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
  } catch (const boost::system::system_error& e) {  // its what() carries Boost's source location: not for users
    return Err{ApiError{ApiErrorCode::kUnavailable, "nothing answers at " + host + ":" + std::to_string(port) + " (" +
                                                        e.code().message() + ")"}};
  } catch (const std::exception& e) {
    return Err{ApiError{ApiErrorCode::kUnavailable, "no answer from " + host + ":" + std::to_string(port) + " (" + e.what() + ")"}};
  }
}

ApiResult<Json> call(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout,
                     http::verb method, const std::string& target, const std::string& body = {}) {
  auto res = exchange(host, port, timeout, method, target, body);
  if (!res) return Err{res.error()};
  Json j = Json::parse(res->body, nullptr, false);
  if (res->status != 200) return Err{json::error_from_json(j, res->status)};
  if (j.is_discarded()) return Err{unreadable("JSON")};
  return j;
}

template <typename T, typename Parse>
ApiResult<T> parse_with(ApiResult<Json> r, Parse&& parse, std::string_view what) {
  if (!r) return Err{r.error()};
  std::optional<T> v = parse(*r);
  if (!v) return Err{unreadable(what)};
  return std::move(*v);
}
}  // namespace

ApiResult<Json> HttpClient::get_json(const std::string& target) {
  return call(host_, port_, timeout_, http::verb::get, target);
}

ApiResult<HttpText> HttpClient::get_text(const std::string& target) {
  return exchange(host_, port_, timeout_, http::verb::get, target);
}

ApiResult<Json> HttpClient::post_json(const std::string& target, const std::string& body) {
  return call(host_, port_, timeout_, http::verb::post, target, body);
}

ApiResult<Bytes32> HttpClient::submit(const Transaction& tx) {
  Json body{{"tx", json::hex0x(encode_tx(tx))}};
  return parse_with<Bytes32>(
      call(host_, port_, timeout_, http::verb::post, "/v1/tx", body.dump()),
      [](const Json& j) { return j.contains("tx_hash") && j["tx_hash"].is_string() ? fixed_from_hex<32>(j["tx_hash"].get<std::string>()) : std::nullopt; },
      "tx_hash");
}

ApiResult<std::optional<TxReceipt>> HttpClient::receipt(const Bytes32& tx_hash) {
  auto r = call(host_, port_, timeout_, http::verb::get, "/v1/tx/" + json::hex0x(tx_hash));
  if (!r && r.error().code == ApiErrorCode::kNotFound) return std::optional<TxReceipt>{};
  if (!r) return Err{r.error()};
  auto receipt = json::receipt_from_json(*r);
  if (!receipt) return Err{unreadable("receipt")};
  return std::optional<TxReceipt>(std::move(*receipt));
}

ApiResult<std::uint64_t> HttpClient::height() {
  return parse_with<std::uint64_t>(
      call(host_, port_, timeout_, http::verb::get, "/v1/status"),
      [](const Json& j) { return j.contains("height") && j["height"].is_number_unsigned() ? std::optional(j["height"].get<std::uint64_t>()) : std::nullopt; },
      "height");
}

ApiResult<Bytes32> HttpClient::chain_instance_id() {
  return parse_with<Bytes32>(
      call(host_, port_, timeout_, http::verb::get, "/v1/status"),
      [](const Json& j) { return j.contains("chain_instance_id") && j["chain_instance_id"].is_string() ? fixed_from_hex<32>(j["chain_instance_id"].get<std::string>()) : std::nullopt; },
      "chain_instance_id");
}

ApiResult<AccountInfo> HttpClient::account_info(const Address& address) {
  return parse_with<AccountInfo>(
      call(host_, port_, timeout_, http::verb::get, "/v1/native/" + json::hex0x(address)),
      [](const Json& j) -> std::optional<AccountInfo> {
        if (!j.contains("balance") || !j["balance"].is_string() || !j.contains("next_nonce") || !j["next_nonce"].is_number_unsigned())
          return std::nullopt;
        auto balance = u128_from_string(j["balance"].get<std::string>());
        if (!balance) return std::nullopt;
        return AccountInfo{*balance, j["next_nonce"].get<std::uint64_t>()};
      },
      "native account");
}

ApiResult<cbqs::ProviderRecordV2> HttpClient::provider(const Address& provider) {
  return parse_with<cbqs::ProviderRecordV2>(call(host_, port_, timeout_, http::verb::get, "/v1/providers/" + json::hex0x(provider)),
                                            json::record_from_json<cbqs::ProviderRecordV2>, "provider record");
}

ApiResult<cbqs::StreamRecordV2> HttpClient::stream(const Bytes32& stream_id) {
  return parse_with<cbqs::StreamRecordV2>(call(host_, port_, timeout_, http::verb::get, "/v1/streams/" + json::hex0x(stream_id)),
                                          json::record_from_json<cbqs::StreamRecordV2>, "stream record");
}

ApiResult<cbqs::CbqsAccountV2> HttpClient::account(const Address& owner, const Address& provider) {
  return parse_with<cbqs::CbqsAccountV2>(
      call(host_, port_, timeout_, http::verb::get, "/v1/accounts/" + json::hex0x(owner) + "/" + json::hex0x(provider)),
      json::record_from_json<cbqs::CbqsAccountV2>, "account record");
}

ApiResult<cbqs::Params> HttpClient::params() {
  return parse_with<cbqs::Params>(call(host_, port_, timeout_, http::verb::get, "/v1/params"), json::params_from_json,
                                  "parameters");
}

ApiResult<std::vector<BlockEvents>> HttpClient::events(std::uint64_t from, std::uint64_t to) {
  return parse_with<std::vector<BlockEvents>>(
      call(host_, port_, timeout_, http::verb::get,
           "/v1/events?from=" + std::to_string(from) + "&to=" + std::to_string(to)),
      [](const Json& j) -> std::optional<std::vector<BlockEvents>> {
        if (!j.is_array()) return std::nullopt;
        std::vector<BlockEvents> out;
        for (const auto& b : j) {
          if (!b.is_object() || !b.contains("height") || !b["height"].is_number_unsigned() || !b.contains("tx_hash") ||
              !b["tx_hash"].is_string() || !b.contains("events") || !b["events"].is_array())
            return std::nullopt;
          auto hash = fixed_from_hex<32>(b["tx_hash"].get<std::string>());
          if (!hash) return std::nullopt;
          BlockEvents be{b["height"].get<std::uint64_t>(), *hash, {}};
          for (const auto& e : b["events"]) {
            auto ev = json::event_from_json(e);
            if (!ev) return std::nullopt;
            be.events.push_back(std::move(*ev));
          }
          out.push_back(std::move(be));
        }
        return out;
      },
      "events");
}

ApiResult<ProviderSnapshot> HttpClient::provider_snapshot(const Address& provider) {
  return parse_with<ProviderSnapshot>(call(host_, port_, timeout_, http::verb::get, "/v1/snapshot/" + json::hex0x(provider)),
                                      json::snapshot_from_json, "provider snapshot");
}

namespace {
/// A {"<key>": [records]} answer, each record decoded from its "hex".
template <typename Record, typename FromJson>
std::optional<std::vector<Record>> list_from_json(const Json& j, const char* key, FromJson from_json) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return std::nullopt;
  std::vector<Record> out;
  for (const auto& item : j[key]) {
    auto record = from_json(item);
    if (!record) return std::nullopt;
    out.push_back(std::move(*record));
  }
  return out;
}
}  // namespace

ApiResult<Cip11Genesis> HttpClient::cip11_genesis() {
  return parse_with<Cip11Genesis>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/genesis"),
      [](const Json& j) -> std::optional<Cip11Genesis> {
        auto g = cip11_genesis_from_json(j);
        return g ? std::optional<Cip11Genesis>(std::move(*g)) : std::nullopt;
      },
      "CIP-11 genesis");
}

ApiResult<std::vector<cip11::chain::ValidatorSetChange>> HttpClient::validator_set_changes() {
  return parse_with<std::vector<cip11::chain::ValidatorSetChange>>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/validator-sets"),
      [](const Json& j) {
        return list_from_json<cip11::chain::ValidatorSetChange>(j, "validator_set_changes",
                                                                 validator_set_change_from_json);
      },
      "validator sets");
}

ApiResult<std::vector<cip11::chain::ValidatorEntry>> HttpClient::validators() {
  return parse_with<std::vector<cip11::chain::ValidatorEntry>>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/validators"),
      [](const Json& j) {
        return list_from_json<cip11::chain::ValidatorEntry>(j, "validators", validator_entry_from_json);
      },
      "validators");
}

ApiResult<std::vector<cip11::chain::RunnerRecord>> HttpClient::runners() {
  return parse_with<std::vector<cip11::chain::RunnerRecord>>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/runners"),
      [](const Json& j) { return list_from_json<cip11::chain::RunnerRecord>(j, "runners", json::runner_from_json); },
      "runners");
}

ApiResult<cip11::chain::RunnerRecord> HttpClient::runner(const Address& runner) {
  return parse_with<cip11::chain::RunnerRecord>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/runners/" + json::hex0x(runner)), json::runner_from_json,
      "runner record");
}

ApiResult<cip11::chain::PresenceProof> HttpClient::presence_proof(const Address& runner) {
  return parse_with<cip11::chain::PresenceProof>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/runners/" + json::hex0x(runner) + "/presence-proof"),
      json::presence_proof_from_json, "presence proof");
}

ApiResult<cip11::chain::JobRecord> HttpClient::job(const cip11::JobId& job_id) {
  return parse_with<cip11::chain::JobRecord>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/jobs/" + json::hex0x(job_id.value)), json::job_from_json,
      "job record");
}

ApiResult<std::vector<cip11::chain::JobRecord>> HttpClient::runner_jobs(const Address& runner) {
  return parse_with<std::vector<cip11::chain::JobRecord>>(
      call(host_, port_, timeout_, http::verb::get, "/runner/" + json::hex0x(runner) + "/jobs"),
      [](const Json& j) { return list_from_json<cip11::chain::JobRecord>(j, "jobs", json::job_from_json); }, "jobs");
}

ApiResult<BlockPresence> HttpClient::block_presence(std::uint64_t height) {
  return parse_with<BlockPresence>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/blocks/" + std::to_string(height) + "/presence"),
      json::block_presence_from_json, "block presence");
}

ApiResult<cip11::chain::Effects> HttpClient::block_assignments(std::uint64_t height) {
  return parse_with<cip11::chain::Effects>(
      call(host_, port_, timeout_, http::verb::get, "/v1/cip11/blocks/" + std::to_string(height) + "/assignments"),
      [height](const Json& j) { return json::assignments_from_json(j, height); }, "block assignments");
}

}  // namespace cowboy::devchain

namespace cowboy::devchain {

ApiResult<std::uint64_t> HttpClient::accept_block(const SignedBlock& block) {
  Json body{{"block", json::hex0x(encode_signed_block(block))}};
  return parse_with<std::uint64_t>(
      call(host_, port_, timeout_, http::verb::post, "/v1/chain/blocks", body.dump()),
      [](const Json& j) { return j.contains("height") && j["height"].is_number_unsigned() ? std::optional(j["height"].get<std::uint64_t>()) : std::nullopt; },
      "height");
}

ApiResult<SignedBlock> HttpClient::block_at(std::uint64_t height) {
  return parse_with<SignedBlock>(
      call(host_, port_, timeout_, http::verb::get, "/v1/chain/blocks/" + std::to_string(height)),
      [](const Json& j) -> std::optional<SignedBlock> {
        if (!j.contains("block") || !j["block"].is_string()) return std::nullopt;
        auto bytes = from_hex(j["block"].get<std::string>());
        if (!bytes) return std::nullopt;
        auto block = decode_signed_block(*bytes);
        if (!block) return std::nullopt;
        return std::move(*block);
      },
      "block");
}

ApiResult<ChainHead> HttpClient::chain_head() {
  return parse_with<ChainHead>(
      call(host_, port_, timeout_, http::verb::get, "/v1/chain/head"),
      [](const Json& j) -> std::optional<ChainHead> {
        if (!j.contains("height") || !j["height"].is_number_unsigned() || !j.contains("view") ||
            !j["view"].is_number_unsigned() || !j.contains("digest") || !j["digest"].is_string())
          return std::nullopt;
        auto digest = fixed_from_hex<32>(j["digest"].get<std::string>());
        if (!digest) return std::nullopt;
        return ChainHead{j["height"].get<std::uint64_t>(), cip11::View{j["view"].get<std::uint64_t>()}, *digest};
      },
      "head");
}

ApiResult<bool> HttpClient::post_presence_view(const Bytes& view) {
  Json body{{"view", json::hex0x(view)}};
  return parse_with<bool>(
      call(host_, port_, timeout_, http::verb::post, "/v1/chain/presence", body.dump()),
      [](const Json& j) { return j.contains("kept") && j["kept"].is_boolean() ? std::optional(j["kept"].get<bool>()) : std::nullopt; },
      "kept");
}

}  // namespace cowboy::devchain
