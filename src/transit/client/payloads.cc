// The client's side of the payload listener (docs/transit.md, decisions
// 87-90): one connection per transfer, bodies moved in kPayloadChunkBytes
// chunks through one buffer, each step bounded by the client's timeout.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/crypto.h"
#include "net/timed_io.h"
#include "transit/client.h"
#include "transit/client/checks.h"
#include "transit/contract/envelope.h"

namespace cowboy::transit {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

ClientError lost(std::string why) { return ClientError{ClientError::Kind::kUncertain, std::nullopt, "payload transfer: " + why}; }
ClientError malformed(std::string why) { return ClientError{ClientError::Kind::kMalformed, std::nullopt, std::move(why)}; }

/// One payload route exchange on a connection of its own.
class Transfer {
 public:
  explicit Transfer(const ClientOptions& o) : options_(o), stream_(io_) {}

  std::optional<ClientError> connect() {
    if (options_.payload_port == 0) return ClientError{ClientError::Kind::kInvalid, std::nullopt, "not sent: no payload port"};
    try {
      tcp::resolver resolver(io_);
      const auto endpoints = resolver.resolve(options_.host, std::to_string(options_.payload_port));
      auto ec = step([&](auto done) { stream_.async_connect(endpoints, [done](auto e, auto) { done(e, 0); }); });
      if (ec) return lost("connect: " + ec.message());
      stream_.socket().set_option(tcp::no_delay(true));
    } catch (const std::exception& e) {
      return lost(e.what());
    }
    return std::nullopt;
  }
  template <typename Start> beast::error_code step(Start start) { return net::run_timed(io_, stream_, options_.timeout, start); }
  beast::tcp_stream& stream() { return stream_; }
  beast::flat_buffer& buffer() { return buffer_; }

  /// A non-200 answer's body as the Rejection it must be.
  ClientError rejected(int status, const std::string& body) const {
    auto r = from_json<Rejection>(body, kMaxAnswerBytes);
    if (!r.ok()) return lost("HTTP " + std::to_string(status) + " without a valid Rejection");
    const std::string what = std::string(name_of(r->reason)) + ": " + r->message.value;
    return ClientError{ClientError::Kind::kRejected, *r, what};
  }
  /// Reads a whole small answer (a Response or a Rejection) and checks it.
  ClientResult<PayloadInfo> answer(Id payload) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxAnswerBytes);
    auto ec = step([&](auto done) { http::async_read(stream_, buffer_, parser, done); });
    if (ec) return Err{lost("read: " + ec.message())};
    return settle(payload, parser.get().result_int(), parser.get().body());
  }
  ClientResult<PayloadInfo> settle(Id payload, unsigned status, const std::string& body) const {
    if (status != 200) return Err{rejected(static_cast<int>(status), body)};
    auto response = from_json<Response>(body, kMaxAnswerBytes);
    if (!response.ok()) return Err{malformed("malformed response: " + response.error().message())};
    if (response->realm.value != options_.realm) return Err{malformed("response of another realm")};
    const QueryOp asked = PayloadRead{payload};
    if (auto problem = result_problem(asked, response->result, response->position)) return Err{malformed(*problem)};
    return std::get<PayloadInfo>(std::move(response->result));
  }

 private:
  const ClientOptions& options_;
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

template <typename Req> void sign_header(Req& req, const Client& client, Id payload) {
  req.set(http::field::host, client.options().host);
  req.set(kPayloadQueryHeader, client.signed_query(PayloadRead{payload}));
  req.keep_alive(false);
}

}  // namespace

ClientResult<PayloadInfo> Client::put_payload(Id payload, const PayloadSource& source) {
  auto info = this->payload(payload);  // the declared length to send, checked like any answer
  if (!info.ok()) return info;
  Transfer t(options());
  if (auto error = t.connect()) return Err{*error};
  http::request<http::buffer_body> req{http::verb::put, payload_target(payload), 11};
  sign_header(req, *this, payload);
  req.set(http::field::content_type, "application/octet-stream");
  req.content_length(info->length);
  req.body().data = nullptr;
  req.body().more = true;
  http::request_serializer<http::buffer_body> out{req};
  auto ec = t.step([&](auto done) { http::async_write_header(t.stream(), out, done); });
  if (ec) return Err{lost("write: " + ec.message())};
  std::vector<std::uint8_t> chunk(kPayloadChunkBytes);
  for (Id left = info->length; left > 0;) {
    const std::size_t want = static_cast<std::size_t>(std::min<Id>(left, chunk.size()));
    const std::size_t n = source(std::span(chunk.data(), want));
    if (n == 0 || n > want)
      return Err{ClientError{ClientError::Kind::kInvalid, std::nullopt, "the source ended before the declared length"}};
    req.body().data = chunk.data();
    req.body().size = n;
    req.body().more = true;
    ec = t.step([&](auto done) { http::async_write(t.stream(), out, done); });
    if (ec == http::error::need_buffer) ec = {};
    // The node may refuse before the body ends (and close): its answer says why.
    if (ec) {
      auto answered = t.answer(payload);
      if (!answered.ok() && answered.error().kind == ClientError::Kind::kRejected) return answered;
      return Err{lost("write: " + ec.message())};
    }
    left -= n;
  }
  req.body().data = nullptr;
  req.body().more = false;
  ec = t.step([&](auto done) { http::async_write(t.stream(), out, done); });
  if (ec && ec != http::error::need_buffer) return Err{lost("write: " + ec.message())};
  return t.answer(payload);
}

ClientResult<PayloadInfo> Client::get_payload(Id payload, const PayloadSink& sink) {
  auto info = this->payload(payload);  // the length and digest to check the bytes against
  if (!info.ok()) return info;
  Transfer t(options());
  if (auto error = t.connect()) return Err{*error};
  http::request<http::empty_body> req{http::verb::get, payload_target(payload), 11};
  sign_header(req, *this, payload);
  auto ec = t.step([&](auto done) { http::async_write(t.stream(), req, done); });
  if (ec) return Err{lost("write: " + ec.message())};
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::max<std::uint64_t>(info->length, kMaxAnswerBytes));
  ec = t.step([&](auto done) { http::async_read_header(t.stream(), t.buffer(), parser, done); });
  if (ec) return Err{lost("read: " + ec.message())};
  std::vector<std::uint8_t> chunk(kPayloadChunkBytes);
  const bool ok = parser.get().result_int() == 200;
  if (!ok) {  // a Rejection: small, read whole
    std::string body;
    while (!parser.is_done() && body.size() <= kMaxAnswerBytes) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      ec = t.step([&](auto done) { http::async_read(t.stream(), t.buffer(), parser, done); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return Err{lost("read: " + ec.message())};
      body.append(reinterpret_cast<const char*>(chunk.data()), chunk.size() - parser.get().body().size);
    }
    return Err{t.rejected(static_cast<int>(parser.get().result_int()), body)};
  }
  if (parser.content_length() != info->length) return Err{malformed("a payload body of another length than declared")};
  crypto::Sha256 hash;
  Id received = 0;
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    ec = t.step([&](auto done) { http::async_read(t.stream(), t.buffer(), parser, done); });
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return Err{lost("read after " + std::to_string(received) + " bytes: " + ec.message())};
    const std::size_t n = chunk.size() - parser.get().body().size;
    hash.update(ByteView(chunk.data(), n));
    received += n;
    if (n && !sink(std::span<const std::uint8_t>(chunk.data(), n))) return Err{lost("stopped by the sink")};
  }
  const auto digest = hash.finish();
  if (received != info->length || !std::equal(digest.begin(), digest.end(), info->sha256.begin()))
    return Err{malformed("payload bytes differ from the declared length or SHA-256")};
  return info;
}

ClientResult<PayloadInfo> Client::delete_payload_bytes(Id payload) {
  if (auto info = this->payload(payload); !info.ok()) return info;  // the capability, and who may see it
  Transfer t(options());
  if (auto error = t.connect()) return Err{*error};
  http::request<http::empty_body> req{http::verb::delete_, payload_target(payload), 11};
  sign_header(req, *this, payload);
  auto ec = t.step([&](auto done) { http::async_write(t.stream(), req, done); });
  if (ec) return Err{lost("write: " + ec.message())};
  return t.answer(payload);
}

}  // namespace cowboy::transit
