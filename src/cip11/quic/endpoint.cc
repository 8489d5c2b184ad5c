// ngtcp2 0.12 + GnuTLS behind cip11/quic/endpoint.h. The shape follows
// ngtcp2's own v0.12.1 examples (gtlssimpleclient.c, server.cc): the crypto
// helper's callbacks for everything TLS, one ngtcp2_conn per connection, a
// write loop that hands stream data to ngtcp2_conn_writev_stream until it has
// nothing left to send, and ngtcp2's expiry driving a timer.
#include "cip11/quic/endpoint.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <sys/socket.h>

#include <cstring>
#include <list>
#include <map>
#include <set>
#include <unordered_map>

namespace cowboy::cip11::quic {

namespace asio = boost::asio;
using udp = asio::ip::udp;

namespace {

constexpr std::size_t kScidLen = 18;
constexpr std::uint64_t kUnscheduled = UINT64_MAX;
constexpr std::size_t kMaxDatagram = 1452;
// TLS 1.3 only (QUIC requires it), AEADs QUIC defines, no middlebox compatibility mode.
// ChaCha20-Poly1305 first: its per-key state is smaller than AES-GCM's, and a
// connection holds four AEAD keys (the current and next phase, each way).
constexpr char kPriority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305:+AES-128-GCM:+AES-256-GCM:"
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:%DISABLE_TLS13_COMPAT_MODE";

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// A connection id (at most 20 bytes) or a 16-byte reset token, held inline:
// an endpoint keeps several per connection.
struct Key {
  std::array<std::uint8_t, NGTCP2_MAX_CIDLEN> bytes{};
  std::uint8_t len = 0;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = k.len;  // ids and tokens are random: their first bytes hash well
    std::memcpy(&h, k.bytes.data(), std::min<std::size_t>(k.len, sizeof h));
    return h;
  }
};
Key cid_key(const std::uint8_t* data, std::size_t len) {
  Key k;
  k.len = static_cast<std::uint8_t>(std::min(len, k.bytes.size()));
  std::memcpy(k.bytes.data(), data, k.len);
  return k;
}

void random_fill(std::uint8_t* out, std::size_t len) { (void)gnutls_rnd(GNUTLS_RND_RANDOM, out, len); }

// RFC 9001 §8.1: a handshake must negotiate the application protocol, else it
// fails with the no_application_protocol alert (QUIC error 0x178).
bool negotiated(gnutls_session_t session, const std::string& alpn) {
  gnutls_datum_t got{};
  return gnutls_alpn_get_selected_protocol(session, &got) == 0 &&
         std::string_view(reinterpret_cast<const char*>(got.data), got.size) == alpn;
}

class EndpointImpl;

class ConnectionImpl final : public Connection {
 public:
  ConnectionImpl(EndpointImpl& ep, udp::endpoint remote);
  ~ConnectionImpl() override;

  Result<Unit, std::string> start_client();
  Result<Unit, std::string> start_server(const ngtcp2_pkt_hd& hd);
  void read(const std::uint8_t* data, std::size_t len);
  void flush();
  /// The endpoint's timer reached this connection's ngtcp2 expiry.
  void on_expiry();
  /// Where the endpoint's timer set holds this connection (kUnscheduled: nowhere); the endpoint's to change.
  std::uint64_t& scheduled_at() { return scheduled_at_; }
  /// on_established, once, before any stream bytes reach the user.
  void announce_established();
  /// The endpoint routes packets for `cid` here until the connection is gone or ngtcp2 retires it.
  void own_cid(const ngtcp2_cid& cid);

  bool established() const override { return established_; }
  std::optional<Bytes32> channel_binding() const override;
  std::optional<std::int64_t> open_stream() override;
  bool send(std::int64_t stream_id, ByteView bytes) override;
  void end_stream(std::int64_t stream_id) override;
  void close(std::uint64_t app_error_code) override;
  std::size_t unacked_bytes() const override;
  std::optional<CloseCode> peer_close() const override { return peer_close_; }
  asio::ip::address peer_address() const override { return remote_.address(); }
  /// The endpoint's half-open cap evicts this handshake: CONNECTION_REFUSED, then gone.
  void evict();
  /// Where the endpoint's half-open list holds this connection (server role, until the handshake finishes).
  std::optional<std::list<ConnectionImpl*>::iterator>& half_open_at() { return half_open_at_; }

  // ngtcp2 callbacks (user_data is this connection)
  static int on_handshake_completed(ngtcp2_conn*, void* self);
  static int on_recv_crypto_data(ngtcp2_conn*, ngtcp2_crypto_level, std::uint64_t offset, const std::uint8_t* data,
                                 std::size_t len, void* self);
  static int on_recv_stream_data(ngtcp2_conn*, std::uint32_t, std::int64_t stream_id, std::uint64_t, const std::uint8_t* data,
                                 std::size_t len, void* self, void*);
  static int on_acked_stream_data(ngtcp2_conn*, std::int64_t stream_id, std::uint64_t offset, std::uint64_t len, void* self,
                                  void*);
  static int on_stream_close(ngtcp2_conn*, std::uint32_t, std::int64_t stream_id, std::uint64_t, void* self, void*);
  static void on_rand(std::uint8_t* dest, std::size_t len, const ngtcp2_rand_ctx*) { random_fill(dest, len); }
  static int check_alpn(gnutls_session_t session, unsigned htype, unsigned when, unsigned incoming, const gnutls_datum_t*);
  static int on_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, std::uint8_t* token, std::size_t cidlen, void* self);
  static int on_remove_connection_id(ngtcp2_conn*, const ngtcp2_cid* cid, void* self);
  static int on_dcid_status(ngtcp2_conn*, int type, std::uint64_t, const ngtcp2_cid*, const std::uint8_t* token,
                            void* self);

 private:
  // Stream bytes are kept in chunks that never move: ngtcp2 keeps pointers
  // into them for retransmission until it reports them acknowledged.
  struct Outgoing {
    std::vector<Bytes> chunks;  // moving a Bytes keeps its buffer where it is
    std::uint64_t base = 0;  // stream offset of chunks.front()
    std::uint64_t sent = 0;  // handed to ngtcp2 up to here
    std::uint64_t end = 0;   // queued up to here
    bool fin = false, fin_sent = false;  // end_stream() was asked; ngtcp2 took the FIN
    bool pending() const { return sent < end || (fin && !fin_sent); }
  };
  ngtcp2_callbacks callbacks(bool server);
  ngtcp2_settings default_settings();
  ngtcp2_transport_params transport_params(bool server);
  ngtcp2_path path();
  Result<Unit, std::string> start_tls(bool server);
  /// A QUIC or TLS error (`liberr`, an NGTCP2_ERR_*): the matching CONNECTION_CLOSE, then gone.
  void fail(const std::string& why, int liberr);
  void send_close(const ngtcp2_connection_close_error& ccerr);
  void finish(const std::string& why);
  void release_tls();

  EndpointImpl& ep_;
  udp::endpoint remote_;
  union SocketAddress {  // IPv4 or IPv6: a sockaddr_storage would be 128 bytes each
    sockaddr sa;
    sockaddr_in v4;
    sockaddr_in6 v6;
  } local_sa_{}, remote_sa_{};
  socklen_t local_len_ = 0, remote_len_ = 0;
  ngtcp2_crypto_conn_ref conn_ref_{};
  ngtcp2_conn* conn_ = nullptr;
  gnutls_session_t tls_ = nullptr;  // until the handshake is complete
  std::optional<Bytes32> binding_;  // the §6.2 exporter value, read when the handshake completes
  std::optional<CloseCode> peer_close_;  // the peer's CONNECTION_CLOSE, once it has come
  std::map<std::int64_t, Outgoing> out_;
  std::vector<Key> cids_;          // keys under which the endpoint finds this connection
  std::vector<Key> reset_tokens_;  // the peer's stateless-reset tokens for the ids this end uses
  bool server_ = false;
  bool flush_posted_ = false;
  bool established_ = false, announce_established_ = false, closed_ = false;
  std::uint64_t scheduled_at_ = kUnscheduled;
  std::optional<std::list<ConnectionImpl*>::iterator> half_open_at_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted work checks it: the endpoint may be gone
};

class EndpointImpl final : public Endpoint {
 public:
  EndpointImpl(asio::io_context& io, EndpointConfig config, Events events)
      : io_(io), config_(std::move(config)), events_(std::move(events)), socket_(io), timer_(io) {
    if (const MemoryHooks* m = config_.connection_memory)
      mem_ = ngtcp2_mem{m->user, m->malloc, m->free, m->calloc, m->realloc};
  }
  ~EndpointImpl() override {
    conns_.clear();
    if (cred_) gnutls_certificate_free_credentials(cred_);
    if (priority_) gnutls_priority_deinit(priority_);
  }

  Result<Unit, std::string> open() {
    if (gnutls_certificate_allocate_credentials(&cred_) != 0) return Err{std::string("cannot allocate TLS credentials")};
    // Parsed once: a session given the string parses its own copy (about 10 KiB each).
    if (gnutls_priority_init(&priority_, kPriority, nullptr) != 0) return Err{std::string("bad TLS priority")};
    if (!config_.certificate.empty()) {
      int rv = gnutls_certificate_set_x509_key_file(cred_, config_.certificate.c_str(), config_.private_key.c_str(),
                                                    GNUTLS_X509_FMT_PEM);
      if (rv < 0) return Err{std::string("cannot load the certificate: ") + gnutls_strerror(rv)};
    }
    boost::system::error_code ec;
    udp::endpoint at(asio::ip::make_address(config_.host, ec), config_.port);
    if (ec) return Err{"bad address " + config_.host};
    socket_.open(at.protocol(), ec);
    if (!ec) socket_.bind(at, ec);
    if (!ec) socket_.non_blocking(true, ec);
    if (ec) return Err{"cannot bind UDP " + config_.host + ":" + std::to_string(config_.port) + ": " + ec.message()};
    // Room for a burst of datagrams from thousands of peers; the kernel caps it at net.core.[rw]mem_max.
    socket_.set_option(asio::socket_base::receive_buffer_size(kSocketBufferBytes), ec);
    socket_.set_option(asio::socket_base::send_buffer_size(kSocketBufferBytes), ec);
    local_ = socket_.local_endpoint();
    receive();
    return Unit{};
  }

  std::uint16_t port() const override { return local_.port(); }
  std::size_t connections() const override { return conns_.size(); }
  EndpointStats stats() const override {
    EndpointStats s = stats_;
    s.half_open = half_open_.size();
    return s;
  }
  /// A server connection's handshake finished, or it ended before that.
  void half_open_done(ConnectionImpl* c) {
    if (auto& at = c->half_open_at(); at) half_open_.erase(*at), at.reset();
  }

  Result<Connection*, std::string> connect(const std::string& host, std::uint16_t port) override {
    boost::system::error_code ec;
    udp::endpoint remote(asio::ip::make_address(host, ec), port);
    if (ec) return Err{"bad address " + host};
    auto c = std::make_unique<ConnectionImpl>(*this, remote);
    if (auto started = c->start_client(); !started) return Err{started.error()};
    ConnectionImpl* raw = c.get();
    conns_.emplace(raw, std::move(c));
    raw->flush();
    settle();
    return static_cast<Connection*>(raw);
  }

  /// Queues a datagram; the batch goes out in one sendmmsg when full or when
  /// the handler that produced it returns (send_batch).
  void send_datagram(const udp::endpoint& to, const std::uint8_t* data, std::size_t len) {
    if (out_count_ == kBatch) send_batch();
    Datagram& d = out_[out_count_++];
    std::memcpy(d.bytes.data(), data, len);
    d.len = len;
    std::memcpy(&d.peer, to.data(), to.size());
    d.peer_len = static_cast<socklen_t>(to.size());
  }

  /// The end of every handler: the batched datagrams go out and the timer
  /// follows the earliest expiry.
  void settle() {
    send_batch();
    if (rearm_) arm();
  }

  void send_batch() {
    std::size_t done = 0;
    while (done < out_count_) {
      std::array<mmsghdr, kBatch> msgs{};
      std::array<iovec, kBatch> iov{};
      const std::size_t n = out_count_ - done;
      for (std::size_t i = 0; i < n; ++i) {
        Datagram& d = out_[done + i];
        iov[i] = {d.bytes.data(), d.len};
        msgs[i].msg_hdr.msg_name = &d.peer;
        msgs[i].msg_hdr.msg_namelen = d.peer_len;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      int sent = ::sendmmsg(socket_.native_handle(), msgs.data(), static_cast<unsigned>(n), 0);
      if (sent <= 0) {  // a full socket buffer: drop this datagram, QUIC retransmits what matters
        ++stats_.send_drops;
        ++done;
        continue;
      }
      stats_.datagrams_out += static_cast<std::uint64_t>(sent);
      done += static_cast<std::size_t>(sent);
    }
    out_count_ = 0;
  }

  void add_cid(const Key& key, ConnectionImpl* c) { by_cid_[key] = c; }
  void remove_cid(const Key& key) { by_cid_.erase(key); }
  void add_reset_token(const Key& token, ConnectionImpl* c) { by_reset_token_[token] = c; }
  void remove_reset_token(const Key& token) { by_reset_token_.erase(token); }
  void closed(ConnectionImpl* c, const std::string& why) {
    if (events_.on_closed) events_.on_closed(*c, why);
    // Destroyed in a later turn: the connection may be inside its own call stack.
    asio::post(io_, [this, c, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.lock()) conns_.erase(c);
    });
  }

  /// The one timer: each connection has at most one entry, at its ngtcp2 expiry.
  void schedule(ConnectionImpl* c, std::uint64_t expiry) {
    if (expiry == kUnscheduled) return unschedule(c);  // ngtcp2: nothing to wait for
    std::uint64_t& at = c->scheduled_at();
    if (at == expiry) return;  // most writes leave the expiry where it was
    if (at == kUnscheduled) {
      expiries_.emplace(expiry, c);
    } else {  // the entry moves without an allocation
      auto node = expiries_.extract({at, c});
      node.value().first = expiry;
      expiries_.insert(std::move(node));
    }
    at = expiry;
    if (expiries_.begin()->second == c) rearm_ = true;
  }
  void unschedule(ConnectionImpl* c) {
    std::uint64_t& at = c->scheduled_at();
    if (at == kUnscheduled) return;
    expiries_.erase({at, c});
    at = kUnscheduled;
  }

  /// RFC 9000 §10.3.2: HKDF of the static secret and the connection id, so a
  /// restarted server computes the token it gave out before.
  void reset_token(std::uint8_t* token, const ngtcp2_cid& cid) {
    if (!config_.stateless_reset_secret) return random_fill(token, NGTCP2_STATELESS_RESET_TOKENLEN);
    const Bytes32& secret = *config_.stateless_reset_secret;
    ngtcp2_crypto_generate_stateless_reset_token(token, secret.data(), secret.size(), &cid);
  }

  asio::io_context& io() { return io_; }
  const EndpointConfig& config() const { return config_; }
  const ngtcp2_mem* mem() const { return config_.connection_memory ? &mem_ : nullptr; }
  const Events& events() const { return events_; }
  const udp::endpoint& local() const { return local_; }
  gnutls_certificate_credentials_t credentials() const { return cred_; }
  gnutls_priority_t priority() const { return priority_; }

 private:
  static constexpr std::size_t kBatch = 32;
  static constexpr int kSocketBufferBytes = 4 * 1024 * 1024;
  static constexpr int kBatchesPerTurn = 8;  // then yield to timers and posted work

  struct Datagram {
    std::array<std::uint8_t, 2048> bytes;
    std::size_t len = 0;
    sockaddr_storage peer;
    socklen_t peer_len = 0;
  };

  void receive() {
    socket_.async_wait(udp::socket::wait_read, [this](boost::system::error_code ec) {
      if (ec == asio::error::operation_aborted) return;
      for (int turn = 0; turn < kBatchesPerTurn && !ec; ++turn)
        if (receive_batch() < kBatch) break;
      settle();
      receive();
    });
  }

  // One recvmmsg; returns how many datagrams it took.
  std::size_t receive_batch() {
    std::array<mmsghdr, kBatch> msgs{};
    std::array<iovec, kBatch> iov{};
    for (std::size_t i = 0; i < kBatch; ++i) {
      iov[i] = {in_[i].bytes.data(), in_[i].bytes.size()};
      msgs[i].msg_hdr.msg_name = &in_[i].peer;
      msgs[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    int n = ::recvmmsg(socket_.native_handle(), msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return 0;
    for (int i = 0; i < n; ++i) {
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) continue;  // larger than any QUIC datagram we accept
      udp::endpoint from;
      std::memcpy(from.data(), &in_[i].peer, msgs[i].msg_hdr.msg_namelen);
      from.resize(msgs[i].msg_hdr.msg_namelen);
      ++stats_.datagrams_in;
      dispatch(in_[i].bytes.data(), msgs[i].msg_len, from);
    }
    return static_cast<std::size_t>(n);
  }

  void arm() {
    rearm_ = false;
    if (expiries_.empty()) {
      timer_.cancel();
      return;
    }
    std::uint64_t at = expiries_.begin()->first, now = now_ns();
    timer_.expires_after(std::chrono::nanoseconds(at > now ? at - now : 0));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      const std::uint64_t now = now_ns();
      while (!expiries_.empty() && expiries_.begin()->first <= now) {
        ConnectionImpl* c = expiries_.begin()->second;
        unschedule(c);
        c->on_expiry();  // reschedules itself through flush()
      }
      send_batch();
      arm();
    });
  }

  // Known destination connection id: that connection. An Initial for none, on
  // a server: a new connection. A short-header packet for none: a stateless
  // reset. Anything else is dropped.
  void dispatch(std::uint8_t* data, std::size_t n, const udp::endpoint& from) {
    ngtcp2_version_cid vc;
    if (ngtcp2_pkt_decode_version_cid(&vc, data, n, kScidLen) != 0) return;
    if (auto it = by_cid_.find(cid_key(vc.dcid, vc.dcidlen)); it != by_cid_.end()) return it->second->read(data, n);
    // A stateless reset carries a random id; its last 16 bytes name the connection.
    if (!(data[0] & 0x80) && n >= NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN + 1)
      if (auto it = by_reset_token_.find(cid_key(data + n - NGTCP2_STATELESS_RESET_TOKENLEN, NGTCP2_STATELESS_RESET_TOKENLEN));
          it != by_reset_token_.end())
        return it->second->read(data, n);
    if (config_.certificate.empty()) return;  // a client accepts nothing
    if (!(data[0] & 0x80)) return stateless_reset(vc, n, from);
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, data, n) != 0) return;
    if (!new_connection_allowed(from.address())) {
      ++stats_.refused_initials;
      return;
    }
    // At the cap the oldest handshake goes, not the newest: a peer that
    // stalls its handshakes then holds a slot for as long as max_half_open
    // newer Initials take to arrive, which per-address rates make long for
    // one address and short only for a spread of them; an honest handshake
    // takes a round trip or two. Refusing instead would keep every new peer
    // out for the whole handshake timeout.
    while (!half_open_.empty() && half_open_.size() >= std::max<std::size_t>(config_.max_half_open, 1)) {
      ++stats_.evicted_handshakes;
      half_open_.front()->evict();
    }
    auto c = std::make_unique<ConnectionImpl>(*this, from);
    if (!c->start_server(hd)) return;
    ConnectionImpl* raw = c.get();
    raw->half_open_at() = half_open_.insert(half_open_.end(), raw);
    conns_.emplace(raw, std::move(c));
    raw->read(data, n);
  }

  // RFC 9000 §10.3: smaller than the packet that provoked it (so two endpoints
  // cannot loop), and at most kResetsPerSecond of them.
  void stateless_reset(const ngtcp2_version_cid& vc, std::size_t n, const udp::endpoint& from) {
    constexpr std::size_t kMinReset = NGTCP2_MIN_STATELESS_RESET_RANDLEN + NGTCP2_STATELESS_RESET_TOKENLEN + 1;
    constexpr std::uint64_t kResetsPerSecond = 10'000;
    if (!config_.stateless_reset_secret || vc.dcidlen != kScidLen || n <= kMinReset) return;
    const std::uint64_t second = now_ns() / 1'000'000'000;
    if (second != reset_second_) reset_second_ = second, resets_this_second_ = 0;
    if (++resets_this_second_ > kResetsPerSecond) return;
    ngtcp2_cid cid;
    ngtcp2_cid_init(&cid, vc.dcid, vc.dcidlen);
    std::uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN];
    reset_token(token, cid);
    std::array<std::uint8_t, 64> rand;
    random_fill(rand.data(), rand.size());
    std::array<std::uint8_t, 128> packet;
    const std::size_t randlen = std::min(rand.size(), n - 2 - NGTCP2_STATELESS_RESET_TOKENLEN);
    ngtcp2_ssize len = ngtcp2_pkt_write_stateless_reset(packet.data(), packet.size(), token, rand.data(), randlen);
    if (len <= 0) return;
    ++stats_.stateless_resets;
    send_datagram(from, packet.data(), static_cast<std::size_t>(len));
  }

  // One token bucket per peer address; full buckets are forgotten when the
  // table grows large, so a spread of addresses cannot grow it without bound.
  bool new_connection_allowed(const asio::ip::address& peer) {
    const double now = static_cast<double>(now_ns()) / 1e9;
    if (buckets_.size() > 65'536)
      std::erase_if(buckets_, [&](const auto& kv) {
        return kv.second.tokens + (now - kv.second.at) * config_.new_connections_per_address_per_sec >=
               config_.new_connection_burst;
      });
    auto [it, fresh] = buckets_.try_emplace(peer, Bucket{config_.new_connection_burst, now});
    Bucket& b = it->second;
    b.tokens = std::min(config_.new_connection_burst, b.tokens + (now - b.at) * config_.new_connections_per_address_per_sec);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  asio::io_context& io_;
  EndpointConfig config_;
  ngtcp2_mem mem_{};
  Events events_;
  udp::socket socket_;
  asio::steady_timer timer_;
  udp::endpoint local_;
  std::array<Datagram, kBatch> in_{}, out_{};
  std::size_t out_count_ = 0;
  gnutls_certificate_credentials_t cred_ = nullptr;
  gnutls_priority_t priority_ = nullptr;
  std::map<ConnectionImpl*, std::unique_ptr<ConnectionImpl>> conns_;
  std::unordered_map<Key, ConnectionImpl*, KeyHash> by_cid_, by_reset_token_;
  std::set<std::pair<std::uint64_t, ConnectionImpl*>> expiries_;  // each connection's entry is at its scheduled_at()
  struct Bucket {
    double tokens, at;
  };
  std::map<asio::ip::address, Bucket> buckets_;
  std::list<ConnectionImpl*> half_open_;  // server connections mid-handshake, oldest first
  std::uint64_t reset_second_ = 0, resets_this_second_ = 0;
  bool rearm_ = false;
  EndpointStats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// ---- ConnectionImpl ----------------------------------------------------------

ConnectionImpl::ConnectionImpl(EndpointImpl& ep, udp::endpoint remote) : ep_(ep), remote_(std::move(remote)) {
  std::memcpy(&local_sa_, ep.local().data(), ep.local().size());
  local_len_ = static_cast<socklen_t>(ep.local().size());
  std::memcpy(&remote_sa_, remote_.data(), remote_.size());
  remote_len_ = static_cast<socklen_t>(remote_.size());
  conn_ref_.get_conn = [](ngtcp2_crypto_conn_ref* ref) { return static_cast<ConnectionImpl*>(ref->user_data)->conn_; };
  conn_ref_.user_data = this;
}

ConnectionImpl::~ConnectionImpl() {
  ep_.half_open_done(this);
  ep_.unschedule(this);
  for (const auto& k : cids_) ep_.remove_cid(k);
  for (const auto& t : reset_tokens_) ep_.remove_reset_token(t);
  if (conn_) ngtcp2_conn_del(conn_);
  if (tls_) gnutls_deinit(tls_);
}

ngtcp2_path ConnectionImpl::path() {
  return ngtcp2_path{{&local_sa_.sa, local_len_},
                     {&remote_sa_.sa, remote_len_},
                     nullptr};
}

ngtcp2_callbacks ConnectionImpl::callbacks(bool server) {
  ngtcp2_callbacks cb{};
  if (server)
    cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  else
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_crypto_data = on_recv_crypto_data;
  cb.handshake_completed = on_handshake_completed;
  cb.encrypt = ngtcp2_crypto_encrypt_cb;
  cb.decrypt = ngtcp2_crypto_decrypt_cb;
  cb.hp_mask = ngtcp2_crypto_hp_mask_cb;
  cb.recv_stream_data = on_recv_stream_data;
  cb.acked_stream_data_offset = on_acked_stream_data;
  cb.stream_close = on_stream_close;
  if (!server) cb.recv_retry = ngtcp2_crypto_recv_retry_cb;
  cb.rand = on_rand;
  cb.get_new_connection_id = on_new_connection_id;
  cb.remove_connection_id = on_remove_connection_id;
  cb.dcid_status = on_dcid_status;
  cb.update_key = ngtcp2_crypto_update_key_cb;
  cb.delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
  cb.delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
  cb.get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
  cb.version_negotiation = ngtcp2_crypto_version_negotiation_cb;
  return cb;
}

Result<Unit, std::string> ConnectionImpl::start_tls(bool server) {
  unsigned flags = server ? (GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET) : (GNUTLS_CLIENT | GNUTLS_NO_TICKETS);
  if (gnutls_init(&tls_, flags) != 0) return Err{std::string("gnutls_init failed")};
  int ok = server ? ngtcp2_crypto_gnutls_configure_server_session(tls_) : ngtcp2_crypto_gnutls_configure_client_session(tls_);
  if (ok != 0) return Err{std::string("cannot configure the TLS session for QUIC")};
  if (gnutls_priority_set(tls_, ep_.priority()) != 0) return Err{std::string("cannot set the TLS priority")};
  if (gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, ep_.credentials()) != 0)
    return Err{std::string("cannot set TLS credentials")};
  if (const std::string& protocol = ep_.config().alpn; !protocol.empty()) {
    gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(protocol.data())),
                        static_cast<unsigned>(protocol.size())};
    gnutls_alpn_set_protocols(tls_, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    // The client checks the server's choice when the handshake completes.
    if (server) gnutls_handshake_set_hook_function(tls_, GNUTLS_HANDSHAKE_CLIENT_HELLO, GNUTLS_HOOK_POST, check_alpn);
  }
  if (!server) gnutls_server_name_set(tls_, GNUTLS_NAME_DNS, "localhost", 9);
  gnutls_session_set_ptr(tls_, &conn_ref_);
  ngtcp2_conn_set_tls_native_handle(conn_, tls_);
  return Unit{};
}

// The server's check, once the ClientHello is read: no ALPN extension at all
// gets here too (GnuTLS itself refuses only an offer without our protocol).
int ConnectionImpl::check_alpn(gnutls_session_t session, unsigned, unsigned, unsigned, const gnutls_datum_t*) {
  auto* c = static_cast<ConnectionImpl*>(static_cast<ngtcp2_crypto_conn_ref*>(gnutls_session_get_ptr(session))->user_data);
  return negotiated(session, c->ep_.config().alpn) ? 0 : GNUTLS_E_NO_APPLICATION_PROTOCOL;
}

ngtcp2_settings ConnectionImpl::default_settings() {
  ngtcp2_settings settings;
  ngtcp2_settings_default(&settings);
  settings.initial_ts = now_ns();
  settings.handshake_timeout =
      static_cast<ngtcp2_duration>(ep_.config().handshake_timeout.count()) * NGTCP2_MILLISECONDS;
  return settings;
}

// The windows and stream limits of docs/cip11.md ("Transport"): the validator
// (server) allows the runner its control stream only; the runner allows the
// validator's job streams; no unidirectional streams either way.
ngtcp2_transport_params ConnectionImpl::transport_params(bool server) {
  ngtcp2_transport_params params;
  ngtcp2_transport_params_default(&params);
  params.initial_max_streams_bidi = server ? 1 : 64;
  params.initial_max_streams_uni = 0;
  params.initial_max_stream_data_bidi_local = 256 * 1024;
  params.initial_max_stream_data_bidi_remote = 256 * 1024;
  params.initial_max_data = 1024 * 1024;
  params.active_connection_id_limit = 2;  // the minimum (RFC 9000 §18.2): one spare id each way
  params.max_idle_timeout = static_cast<ngtcp2_duration>(ep_.config().idle_timeout.count()) * NGTCP2_MILLISECONDS;
  return params;
}

Result<Unit, std::string> ConnectionImpl::start_client() {
  ngtcp2_cid dcid, scid;
  dcid.datalen = NGTCP2_MIN_INITIAL_DCIDLEN;
  random_fill(dcid.data, dcid.datalen);
  scid.datalen = kScidLen;
  random_fill(scid.data, scid.datalen);
  ngtcp2_settings settings = default_settings();
  ngtcp2_transport_params params = transport_params(false);
  auto cb = callbacks(false);
  auto p = path();
  if (int rv = ngtcp2_conn_client_new(&conn_, &dcid, &scid, &p, NGTCP2_PROTO_VER_V1, &cb, &settings, &params, ep_.mem(), this);
      rv != 0)
    return Err{std::string("ngtcp2_conn_client_new: ") + ngtcp2_strerror(rv)};
  own_cid(scid);
  return start_tls(false);
}

Result<Unit, std::string> ConnectionImpl::start_server(const ngtcp2_pkt_hd& hd) {
  server_ = true;
  ngtcp2_cid scid;
  scid.datalen = kScidLen;
  random_fill(scid.data, scid.datalen);
  ngtcp2_settings settings = default_settings();
  ngtcp2_transport_params params = transport_params(true);
  params.original_dcid = hd.dcid;
  params.stateless_reset_token_present = 1;
  ep_.reset_token(params.stateless_reset_token, scid);
  auto cb = callbacks(true);
  auto p = path();
  if (int rv = ngtcp2_conn_server_new(&conn_, &hd.scid, &scid, &p, hd.version, &cb, &settings, &params, ep_.mem(), this);
      rv != 0)
    return Err{std::string("ngtcp2_conn_server_new: ") + ngtcp2_strerror(rv)};
  for (const ngtcp2_cid* c : {static_cast<const ngtcp2_cid*>(&scid), &hd.dcid}) {
    own_cid(*c);
  }
  return start_tls(true);
}

void ConnectionImpl::own_cid(const ngtcp2_cid& cid) {
  cids_.push_back(cid_key(cid.data, cid.datalen));
  ep_.add_cid(cids_.back(), this);
}

void ConnectionImpl::announce_established() {
  if (!announce_established_) return;
  announce_established_ = false;
  if (ep_.events().on_established) ep_.events().on_established(*this);
}

void ConnectionImpl::read(const std::uint8_t* data, std::size_t len) {
  if (closed_) return;
  auto p = path();
  ngtcp2_pkt_info pi{};
  int rv = ngtcp2_conn_read_pkt(conn_, &p, &pi, data, len, now_ns());
  if (rv == NGTCP2_ERR_DRAINING) {
    ngtcp2_connection_close_error ccerr;
    ngtcp2_conn_get_connection_close_error(conn_, &ccerr);
    peer_close_ = CloseCode{ccerr.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION, ccerr.error_code};
    return finish("the peer closed the connection");
  }
  if (rv != 0) return fail(std::string("QUIC: ") + ngtcp2_strerror(rv), rv);
  announce_established();
  release_tls();
  flush();
}

void ConnectionImpl::flush() {
  if (closed_) return;
  std::array<std::uint8_t, kMaxDatagram> packet;
  std::set<std::int64_t> blocked;  // streams ngtcp2 cannot take more of now
  for (;;) {
    std::int64_t stream_id = -1;
    Outgoing* chosen = nullptr;
    ngtcp2_vec vec{};
    std::size_t vcnt = 0;
    bool fin = false;
    for (auto& [id, o] : out_) {
      if (!o.pending() || blocked.contains(id)) continue;
      // The chunk holding `sent`, from there to its end.
      std::uint64_t at = o.base;
      for (auto& chunk : o.chunks) {
        if (o.sent < at + chunk.size()) {
          vec.base = chunk.data() + (o.sent - at);
          vec.len = chunk.size() - (o.sent - at);
          break;
        }
        at += chunk.size();
      }
      stream_id = id;
      chosen = &o;
      vcnt = vec.len > 0 ? 1 : 0;
      // With the last bytes, or alone once they are all out: never with an
      // earlier chunk, which would end the stream before the later ones.
      fin = o.fin && o.sent + vec.len == o.end;
      break;
    }
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    ngtcp2_ssize consumed = -1;
    std::uint32_t flags = stream_id >= 0 ? NGTCP2_WRITE_STREAM_FLAG_MORE : 0;
    if (fin) flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
    ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn_, &ps.path, &pi, packet.data(), packet.size(), &consumed, flags,
                                               stream_id, vcnt ? &vec : nullptr, vcnt, now_ns());
    if (chosen && consumed > 0) chosen->sent += static_cast<std::uint64_t>(consumed);
    if (fin && consumed >= 0 && chosen->sent == chosen->end) chosen->fin_sent = true;
    if (n == NGTCP2_ERR_WRITE_MORE) continue;
    if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR) {
      blocked.insert(stream_id);
      continue;
    }
    if (n < 0) return fail(std::string("QUIC write: ") + ngtcp2_strerror(static_cast<int>(n)), static_cast<int>(n));
    if (n == 0) break;
    ep_.send_datagram(remote_, packet.data(), static_cast<std::size_t>(n));
  }
  ep_.schedule(this, ngtcp2_conn_get_expiry(conn_));
}

void ConnectionImpl::on_expiry() {
  if (closed_) return;
  int rv = ngtcp2_conn_handle_expiry(conn_, now_ns());
  if (rv == NGTCP2_ERR_IDLE_CLOSE) return finish("idle timeout");
  if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) return finish("handshake timeout");
  if (rv != 0) return fail(std::string("QUIC timer: ") + ngtcp2_strerror(rv), rv);
  flush();
}

std::optional<Bytes32> ConnectionImpl::channel_binding() const { return binding_; }

// After the handshake TLS has nothing left to do: no tickets, no resumption,
// no post-handshake authentication, and QUIC's key updates use ngtcp2's own
// contexts. Its session (about 20 KiB) goes; any later CRYPTO frame ends the
// connection (on_recv_crypto_data).
void ConnectionImpl::release_tls() {
  if (!tls_ || !established_) return;
  ngtcp2_conn_set_tls_native_handle(conn_, nullptr);
  gnutls_deinit(tls_);
  tls_ = nullptr;
}

int ConnectionImpl::on_recv_crypto_data(ngtcp2_conn* conn, ngtcp2_crypto_level level, std::uint64_t offset,
                                        const std::uint8_t* data, std::size_t len, void* self) {
  if (!static_cast<ConnectionImpl*>(self)->tls_) return NGTCP2_ERR_CRYPTO;
  return ngtcp2_crypto_recv_crypto_data_cb(conn, level, offset, data, len, self);
}

std::optional<std::int64_t> ConnectionImpl::open_stream() {
  if (!established_ || closed_) return std::nullopt;
  std::int64_t id = -1;
  if (ngtcp2_conn_open_bidi_stream(conn_, &id, nullptr) != 0) return std::nullopt;
  out_[id];
  return id;
}

bool ConnectionImpl::send(std::int64_t stream_id, ByteView bytes) {
  if (closed_) return false;
  auto it = out_.find(stream_id);
  if (it == out_.end()) {
    if (stream_id & 0x02) return false;  // unidirectional: none in CIP-11
    it = out_.emplace(stream_id, Outgoing{}).first;
  }
  if (!bytes.empty()) {
    it->second.chunks.emplace_back(bytes.begin(), bytes.end());
    it->second.end += bytes.size();
  }
  if (!flush_posted_) {  // one write for everything queued in this turn
    flush_posted_ = true;
    asio::post(ep_.io(), [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.lock()) return;
      flush_posted_ = false;
      flush();
      ep_.settle();
    });
  }
  return true;
}

void ConnectionImpl::end_stream(std::int64_t stream_id) {
  if (closed_ || (stream_id & 0x02)) return;
  Outgoing& o = out_[stream_id];
  if (o.fin) return;
  o.fin = true;
  send(stream_id, {});  // schedules the write
}

std::size_t ConnectionImpl::unacked_bytes() const {
  std::size_t n = 0;
  for (const auto& [id, o] : out_) n += static_cast<std::size_t>(o.end - o.base);
  return n;
}

void ConnectionImpl::close(std::uint64_t app_error_code) {
  if (closed_) return;
  asio::post(ep_.io(), [this, app_error_code, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.lock() || closed_) return;
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_set_application_error(&ccerr, app_error_code, nullptr, 0);
    send_close(ccerr);
    finish("closed by this end");
    ep_.settle();
  });
}

void ConnectionImpl::evict() {
  if (closed_) return ep_.half_open_done(this);
  ngtcp2_connection_close_error ccerr;
  ngtcp2_connection_close_error_set_transport_error(&ccerr, NGTCP2_CONNECTION_REFUSED, nullptr, 0);
  send_close(ccerr);
  finish("evicted: the half-open handshake cap was reached");
}

void ConnectionImpl::fail(const std::string& why, int liberr) {
  if (closed_) return;
  ngtcp2_connection_close_error ccerr;  // a transport error: tell the peer once, then forget the connection
  if (const std::uint8_t alert = ngtcp2_conn_get_tls_alert(conn_); alert != 0)
    ngtcp2_connection_close_error_set_transport_error_tls_alert(&ccerr, alert, nullptr, 0);
  else
    ngtcp2_connection_close_error_set_transport_error_liberr(&ccerr, liberr, nullptr, 0);
  send_close(ccerr);
  finish(why);
}

void ConnectionImpl::send_close(const ngtcp2_connection_close_error& ccerr) {
  std::array<std::uint8_t, kMaxDatagram> packet;
  ngtcp2_path_storage ps;
  ngtcp2_path_storage_zero(&ps);
  ngtcp2_pkt_info pi{};
  ngtcp2_ssize n = ngtcp2_conn_write_connection_close(conn_, &ps.path, &pi, packet.data(), packet.size(), &ccerr, now_ns());
  if (n > 0) ep_.send_datagram(remote_, packet.data(), static_cast<std::size_t>(n));
}

void ConnectionImpl::finish(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  ep_.half_open_done(this);
  ep_.unschedule(this);
  ep_.closed(this, why);
}

int ConnectionImpl::on_handshake_completed(ngtcp2_conn* conn, void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  if (const std::string& alpn = c->ep_.config().alpn; !c->server_ && !alpn.empty() && !negotiated(c->tls_, alpn)) {
    ngtcp2_conn_set_tls_alert(conn, GNUTLS_A_NO_APPLICATION_PROTOCOL);  // the server selected none
    return NGTCP2_ERR_CALLBACK_FAILURE;
  }
  Bytes32 exported;
  if (gnutls_prf_rfc5705(c->tls_, kExporterLabel.size(), kExporterLabel.data(), 0, "", exported.size(),
                         reinterpret_cast<char*>(exported.data())) != 0)
    return NGTCP2_ERR_CALLBACK_FAILURE;
  c->binding_ = exported;
  c->established_ = true;
  c->announce_established_ = true;  // told to the user outside this callback
  c->ep_.half_open_done(c);
  return 0;
}

int ConnectionImpl::on_recv_stream_data(ngtcp2_conn* conn, std::uint32_t flags, std::int64_t stream_id, std::uint64_t,
                                        const std::uint8_t* data, std::size_t len, void* self, void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  // Consumed at once: the flow-control credit goes back as it arrives.
  ngtcp2_conn_extend_max_stream_offset(conn, stream_id, len);
  ngtcp2_conn_extend_max_offset(conn, len);
  c->announce_established();  // stream bytes can share the datagram that completes the handshake
  if (len > 0 && c->ep_.events().on_stream_data) c->ep_.events().on_stream_data(*c, stream_id, ByteView(data, len));
  if ((flags & NGTCP2_STREAM_DATA_FLAG_FIN) && c->ep_.events().on_stream_end) c->ep_.events().on_stream_end(*c, stream_id);
  return 0;
}

int ConnectionImpl::on_acked_stream_data(ngtcp2_conn*, std::int64_t stream_id, std::uint64_t offset, std::uint64_t len,
                                         void* self, void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  auto it = c->out_.find(stream_id);
  if (it == c->out_.end()) return 0;
  Outgoing& o = it->second;
  std::uint64_t acked = offset + len;
  std::size_t done = 0;
  while (done < o.chunks.size() && o.base + o.chunks[done].size() <= acked) o.base += o.chunks[done++].size();
  o.chunks.erase(o.chunks.begin(), o.chunks.begin() + static_cast<std::ptrdiff_t>(done));
  return 0;
}

int ConnectionImpl::on_stream_close(ngtcp2_conn* conn, std::uint32_t, std::int64_t stream_id, std::uint64_t, void* self,
                                    void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  c->out_.erase(stream_id);
  if (!ngtcp2_conn_is_local_stream(conn, stream_id)) ngtcp2_conn_extend_max_streams_bidi(conn, 1);
  if (c->ep_.events().on_stream_closed) c->ep_.events().on_stream_closed(*c, stream_id);
  return 0;
}

int ConnectionImpl::on_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, std::uint8_t* token, std::size_t cidlen,
                                         void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  random_fill(cid->data, cidlen);
  cid->datalen = cidlen;
  c->ep_.reset_token(token, *cid);
  c->own_cid(*cid);
  return 0;
}

int ConnectionImpl::on_remove_connection_id(ngtcp2_conn*, const ngtcp2_cid* cid, void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  const Key key = cid_key(cid->data, cid->datalen);
  c->ep_.remove_cid(key);
  std::erase(c->cids_, key);
  return 0;
}

int ConnectionImpl::on_dcid_status(ngtcp2_conn*, int type, std::uint64_t, const ngtcp2_cid*, const std::uint8_t* token,
                                   void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  if (!token) return 0;
  const Key key = cid_key(token, NGTCP2_STATELESS_RESET_TOKENLEN);
  if (type == NGTCP2_CONNECTION_ID_STATUS_TYPE_ACTIVATE) {
    c->reset_tokens_.push_back(key);
    c->ep_.add_reset_token(key, c);
  } else {
    c->ep_.remove_reset_token(key);
    std::erase(c->reset_tokens_, key);
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<Endpoint>, std::string> Endpoint::open(asio::io_context& io, EndpointConfig config, Events events) {
  auto ep = std::make_unique<EndpointImpl>(io, std::move(config), std::move(events));
  if (auto opened = ep->open(); !opened) return Err{opened.error()};
  return std::unique_ptr<Endpoint>(std::move(ep));
}

}  // namespace cowboy::cip11::quic
