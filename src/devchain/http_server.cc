#include "devchain/http_server.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "devchain/json.h"

namespace cowboy::devchain {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Json = nlohmann::json;

namespace {

constexpr std::size_t kMaxBodyBytes = 128 * 1024;
constexpr int kMaxConnections = 256;
constexpr auto kIdleTimeout = std::chrono::seconds(30);

struct Reply {
  http::status status = http::status::ok;
  Json body;
};

Reply error_reply(const ApiError& e) {
  return Reply{static_cast<http::status>(api_error_http_status(e.code)), json::error_to_json(e)};
}
Reply bad_request(std::string message) { return error_reply(ApiError{ApiErrorCode::kBadRequest, std::move(message)}); }

template <typename T, typename ToJson>
Reply reply_from(const ApiResult<T>& r, ToJson&& to_json) {
  if (!r) return error_reply(r.error());
  return Reply{http::status::ok, to_json(*r)};
}

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

std::optional<std::uint64_t> query_u64(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    auto eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == key) {
      std::uint64_t v = 0;
      auto digits = pair.substr(eq + 1);
      if (digits.empty() || digits.size() > 19) return std::nullopt;
      for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
      }
      return v;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

Reply route(ChainApi& api, http::verb method, std::string_view target, const std::string& body) {
  auto qpos = target.find('?');
  std::string_view path = target.substr(0, qpos);
  std::string_view query = qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
  auto parts = split_path(path);
  if (parts.size() < 2 || parts[0] != "v1") return error_reply(ApiError{ApiErrorCode::kNotFound, "no such route"});
  std::string_view what = parts[1];
  auto arg = [&](std::size_t i) { return i < parts.size() ? std::string(parts[i]) : std::string(); };

  if (method == http::verb::post && what == "tx" && parts.size() == 2) {
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
  if (method != http::verb::get) return error_reply(ApiError{ApiErrorCode::kBadRequest, "method not allowed"});

  if (what == "status" && parts.size() == 2) {
    auto h = api.height();
    auto id = api.chain_instance_id();
    if (!h) return error_reply(h.error());
    if (!id) return error_reply(id.error());
    return Reply{http::status::ok, Json{{"height", *h}, {"chain_instance_id", json::hex0x(*id)}}};
  }
  if (what == "tx" && parts.size() == 3) {
    auto hash = fixed_from_hex<32>(arg(2));
    if (!hash) return bad_request("tx hash must be 32 bytes of hex");
    auto r = api.receipt(*hash);
    if (!r) return error_reply(r.error());
    if (!*r) return error_reply(ApiError{ApiErrorCode::kNotFound, "pending or unknown"});
    return Reply{http::status::ok, json::receipt_to_json(**r)};
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

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ChainApi& api, std::atomic<int>& live)
      : stream_(std::move(socket)), api_(api), live_(live) {
    ++live_;
  }
  ~Session() { --live_; }
  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return close();
    if (ec == http::error::body_limit) return respond(error_reply(ApiError{ApiErrorCode::kTxTooLarge, "body over 128 KiB"}), false);
    if (ec) return close();
    auto& req = parser_->get();
    Reply reply;
    try {
      reply = route(api_, req.method(), std::string_view(req.target().data(), req.target().size()), req.body());
    } catch (const std::exception& e) {  // never crash on a request
      reply = error_reply(ApiError{ApiErrorCode::kInternal, e.what()});
    }
    respond(std::move(reply), req.keep_alive());
  }

  void respond(Reply reply, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(reply.status, 11);
    res->set(http::field::content_type, "application/json");
    res->keep_alive(keep_alive);
    res->body() = reply.body.dump();
    res->prepare_payload();
    http::async_write(stream_, *res, [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
      if (ec || !keep_alive) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  ChainApi& api_;
  std::atomic<int>& live_;
};

}  // namespace

struct HttpServer::Impl {
  ChainApi& api;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::thread thread;
  std::atomic<int> live{0};

  explicit Impl(ChainApi& a) : api(a) {}

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) {
        if (live.load() >= kMaxConnections) {
          beast::error_code ignored;
          socket.close(ignored);
        } else {
          std::make_shared<Session>(std::move(socket), api, live)->start();
        }
      }
      accept();
    });
  }
};

HttpServer::HttpServer(ChainApi& api, const std::string& address, std::uint16_t port)
    : impl_(std::make_unique<Impl>(api)) {
  beast::error_code ec;
  auto ip = asio::ip::make_address(address, ec);
  if (ec) throw std::runtime_error("bad listen address " + address);
  tcp::endpoint endpoint{ip, port};
  impl_->acceptor.open(endpoint.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(endpoint, ec);
  if (ec) throw std::runtime_error("cannot bind " + address + ":" + std::to_string(port) + ": " + ec.message());
  impl_->acceptor.listen(asio::socket_base::max_listen_connections);
}

HttpServer::~HttpServer() { stop(); }

std::uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

void HttpServer::start() {
  impl_->accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void HttpServer::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

}  // namespace cowboy::devchain
