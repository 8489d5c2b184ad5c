#include "transit/node/payload_routes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <future>

#include <pthread.h>

#include "net/timed_io.h"
#include "transit/contract/envelope.h"
#include "transit/node/http_routes.h"

namespace cowboy::transit::node {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kHeaderTimeout = std::chrono::seconds(5);
constexpr std::size_t kHeaderBytes = 8 * 1024;  // the signed query (an envelope) and a few fields
constexpr std::size_t kRefusalSlack = 4;         // connections beyond max_transfers, to be refused in words
constexpr std::size_t kDrainBytes = 1 << 20;     // a lingering close reads at most this much ...
constexpr auto kDrainTimeout = std::chrono::seconds(1);  // ... waiting at most this for each read

Refusal refusal(Reason reason, std::string message) { return Refusal{reason, std::move(message)}; }

Refusal store_refusal(const StoreFailure& f) {
  switch (f.kind) {
    case StoreFailure::Kind::kBusy: return refusal(Reason::kPayloadBusy, f.message);
    case StoreFailure::Kind::kMismatch: return refusal(Reason::kPayloadMismatch, f.message);
    case StoreFailure::Kind::kMissing: return refusal(Reason::kStorageFailed, f.message);
    case StoreFailure::Kind::kIo: return refusal(Reason::kStorageFailed, f.message);
  }
  return refusal(Reason::kStorageFailed, f.message);
}

}  // namespace

struct PayloadListener::Connection {
  int fd;
  asio::ip::address peer;
  std::thread thread;
  std::atomic<bool> done{false};
};

PayloadListener::PayloadListener(Sequencer& sequencer, PayloadStore& store, const std::string& address,
                                 std::uint16_t port, PayloadListenerOptions options)
    : sequencer_(sequencer),
      store_(store),
      options_(options),
      slots_(options.max_transfers + kRefusalSlack, options.max_connections_per_address) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("bad payload listen address " + address);
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  // A burst beyond the backlog is not answered: its SYNs, an honest one among
  // them, wait for the retry a second later. The kernel's bound, as asio's listeners.
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, SOMAXCONN) != 0) {  // a burst of connections waits for accept, not for a SYN retry
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw std::runtime_error("cannot bind the payload listener " + address + ":" + std::to_string(port));
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

PayloadListener::~PayloadListener() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void PayloadListener::start() {
  acceptor_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "payload-accept");
    accept_loop();
  });
}

void PayloadListener::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::lock_guard lock(mutex_);
  for (auto& c : connections_) ::shutdown(c->fd, SHUT_RDWR);  // a transfer under way fails its next step
  for (auto& c : connections_) {
    c->thread.join();
    ::close(c->fd);
    slots_.give_back(c->peer);
  }
  connections_.clear();
}

void PayloadListener::reap() {
  std::lock_guard lock(mutex_);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->done) {
      (*it)->thread.join();
      ::close((*it)->fd);
      slots_.give_back((*it)->peer);
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void PayloadListener::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;  // wakes to see stopping_
    sockaddr_in from{};
    socklen_t from_len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    reap();
    const asio::ip::address peer = asio::ip::address_v4(ntohl(from.sin_addr.s_addr));
    if (!slots_.take(peer)) {
      ::close(fd);  // beyond the slack, or beyond this address's share: even a refusal costs too much
      continue;
    }
    std::lock_guard lock(mutex_);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer = peer;
    auto* raw = c.get();
    c->thread = std::thread([this, raw] {
      pthread_setname_np(pthread_self(), "payload-io");
      serve(*raw);
      raw->done = true;
    });
    connections_.push_back(std::move(c));
  }
}

void PayloadListener::serve(Connection& connection) {
  asio::io_context io;
  // The stream owns a duplicate: the listener's fd stays open, for stop() to
  // shut down, until the thread is joined, so its number is never another's.
  beast::tcp_stream stream(tcp::socket(io, tcp::v4(), ::dup(connection.fd)));
  beast::flat_buffer buffer;
  const auto timeout = options_.io_timeout;
  const auto realm = sequencer_.genesis().realm;

  const auto reply = [&](http::status status, std::string content_type, std::string body) {
    http::response<http::string_body> res{status, 11};
    res.set(http::field::content_type, content_type);
    res.keep_alive(false);
    res.body() = std::move(body);
    res.prepare_payload();
    if (net::run_timed(io, stream, timeout, [&](auto done) { http::async_write(stream, res, done); })) return;
    // A lingering close: what the client still sends (a body refused unread)
    // is read and dropped for a moment, so closing does not reset the
    // connection before the client has read the answer.
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::array<char, 4096> sink;
    for (std::size_t drained = 0; drained < kDrainBytes;) {
      std::size_t n = 0;
      const auto ec = net::run_timed(io, stream, kDrainTimeout, [&](auto done) {
        stream.async_read_some(asio::buffer(sink), [&n, done](beast::error_code e, std::size_t got) {
          n = got;
          done(e, got);
        });
      });
      if (ec) break;
      drained += n;
    }
  };
  const auto reject = [&](const Refusal& r) {
    reply(static_cast<http::status>(http_status(r.code())), "application/json",
          to_json(make_rejection(realm, r.reason, r.message)));
  };

  http::request_parser<http::empty_body> head;
  head.header_limit(kHeaderBytes);
  head.body_limit(kMaxPayloadBytes);  // checked against Content-Length as the header completes; the declared length below
  auto ec = net::run_timed(io, stream, kHeaderTimeout, [&](auto done) { http::async_read_header(stream, buffer, head, done); });
  if (ec) return;
  const auto& req = head.get();
  const auto id = payload_of_target(req.target());
  if (!id) return reject(refusal(Reason::kUnknownRoute, "payload routes: /v1/payloads/{id}"));
  const auto method = req.method();
  if (method != http::verb::put && method != http::verb::get && method != http::verb::delete_)
    return reject(refusal(Reason::kMethodNotAllowed, "use PUT, GET or DELETE"));

  // Who asks, and what the payload is now: the signed payload query, answered as POST /v1/query would.
  if (req.count(kPayloadQueryHeader) != 1)
    return reject(refusal(Reason::kMissingQueryHeader, "one X-Transit-Query: a signed payload query"));
  Digest digest;
  auto query = decode_signed_query(req[kPayloadQueryHeader], &digest);
  if (!query.ok()) return reject(Refusal{query.error().reason, query.error().message()});
  const auto* asked = std::get_if<PayloadRead>(&query->query.op);
  if (!asked || asked->payload != *id)
    return reject(refusal(Reason::kMissingQueryHeader, "X-Transit-Query must be the payload query of this path's id"));
  auto key = authenticate(sequencer_, query->query.realm, query->query.principal, digest, query->signature);
  if (!key.ok()) return reject(key.error());
  const auto signer = query->query.principal;
  std::promise<Result<Response, Refusal>> answered;
  auto answer = answered.get_future();
  sequencer_.query(std::move(*query), digest, *key,
                   [&answered](Result<Response, Refusal> r) { answered.set_value(std::move(r)); });
  auto response = answer.get();  // the sequencer answers every query, its deadline included
  if (!response.ok()) return reject(response.error());
  const auto& info = std::get<PayloadInfo>(response->result);
  const auto state_name = std::string(EnumTraits<PayloadState>::kNames[static_cast<int>(info.state)]);

  if (method == http::verb::delete_) {
    if (signer != info.publisher) return reject(refusal(Reason::kNotPublisher, "only the publisher deletes its bytes"));
    if (info.state != PayloadState::kRetired)
      return reject(refusal(Reason::kPayloadNotRetired, "the payload is " + state_name));
    if (auto removed = store_.remove(info.payload, info.sha256); !removed.ok())
      return reject(store_refusal(removed.error()));
    return reply(http::status::ok, "application/json", to_json(*response));
  }

  // The transfer budget: bodies moving at once.
  struct Slot {
    std::atomic<std::size_t>& n;
    ~Slot() { --n; }
  };
  if (++transfers_ > options_.max_transfers) {
    --transfers_;
    ++refused_;
    return reject(refusal(Reason::kTransfersFull, "at most " + std::to_string(options_.max_transfers) + " transfers at once"));
  }
  Slot slot{transfers_};
  std::vector<std::uint8_t> chunk(kPayloadChunkBytes);  // the only buffer a body passes through

  if (method == http::verb::put) {
    if (signer != info.publisher) return reject(refusal(Reason::kNotPublisher, "only the publisher uploads"));
    if (info.state != PayloadState::kDeclared)
      return reject(refusal(Reason::kPayloadNotDeclared, "the payload is " + state_name));
    if (!head.content_length() || *head.content_length() != info.length)
      return reject(refusal(Reason::kPayloadMismatch,
                            "Content-Length must be the declared length, " + std::to_string(info.length)));
    auto upload = store_.upload(info.payload, info.length, info.sha256);
    if (!upload.ok()) return reject(store_refusal(upload.error()));
    http::request_parser<http::buffer_body> body{std::move(head)};
    body.body_limit(info.length);
    while (!body.is_done()) {
      body.get().body().data = chunk.data();
      body.get().body().size = chunk.size();
      ec = net::run_timed(io, stream, timeout, [&](auto done) { http::async_read(stream, buffer, body, done); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return;  // the connection is gone: the upload is dropped, nothing stays
      const std::size_t n = chunk.size() - body.get().body().size;
      if (auto written = (*upload)->write({chunk.data(), n}); !written.ok()) {
        const auto why = store_refusal(written.error());
        upload->reset();  // its temporary file is gone before the client hears why
        return reject(why);
      }
    }
    if (auto committed = (*upload)->commit(); !committed.ok()) {
      const auto why = store_refusal(committed.error());
      upload->reset();
      return reject(why);
    }
    upload->reset();  // the upload is over before the answer says so
    return reply(http::status::ok, "application/json", to_json(*response));
  }

  // GET
  if (info.state != PayloadState::kReady) return reject(refusal(Reason::kPayloadNotReady, "the payload is " + state_name));
  auto download = store_.download(info.payload, info.length, info.sha256);
  if (!download.ok()) return reject(store_refusal(download.error()));
  http::response<http::buffer_body> res{http::status::ok, 11};
  res.set(http::field::content_type, "application/octet-stream");
  res.content_length(info.length);
  res.keep_alive(false);
  res.body().data = nullptr;
  res.body().more = true;
  http::response_serializer<http::buffer_body> out{res};
  ec = net::run_timed(io, stream, timeout, [&](auto done) { http::async_write_header(stream, out, done); });
  if (ec) return;
  for (Id left = info.length; left > 0;) {
    auto n = (*download)->read(chunk);
    if (!n.ok() || *n == 0) return;  // cut short: the client sees fewer bytes than Content-Length
    res.body().data = chunk.data();
    res.body().size = *n;
    res.body().more = true;
    ec = net::run_timed(io, stream, timeout, [&](auto done) { http::async_write(stream, out, done); });
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return;
    left -= std::min<Id>(left, *n);
  }
  res.body().data = nullptr;
  res.body().more = false;
  net::run_timed(io, stream, timeout, [&](auto done) { http::async_write(stream, out, done); });
}

}  // namespace cowboy::transit::node
