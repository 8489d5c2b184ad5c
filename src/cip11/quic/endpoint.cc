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
#include <cstring>
#include <deque>
#include <map>
#include <set>

namespace cowboy::cip11::quic {

namespace asio = boost::asio;
using udp = asio::ip::udp;

namespace {

constexpr std::size_t kScidLen = 18;
constexpr std::size_t kMaxDatagram = 1452;
// TLS 1.3 only (QUIC requires it), AEADs QUIC defines, no middlebox compatibility mode.
constexpr char kPriority[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"
    "-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:%DISABLE_TLS13_COMPAT_MODE";

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string cid_key(const std::uint8_t* data, std::size_t len) { return std::string(reinterpret_cast<const char*>(data), len); }

void random_fill(std::uint8_t* out, std::size_t len) { (void)gnutls_rnd(GNUTLS_RND_RANDOM, out, len); }

class EndpointImpl;

class ConnectionImpl final : public Connection {
 public:
  ConnectionImpl(EndpointImpl& ep, udp::endpoint remote);
  ~ConnectionImpl() override;

  Result<Unit, std::string> start_client();
  Result<Unit, std::string> start_server(const ngtcp2_pkt_hd& hd);
  void read(const std::uint8_t* data, std::size_t len);
  void flush();

  bool established() const override { return established_; }
  std::optional<Bytes32> channel_binding() const override;
  std::optional<std::int64_t> open_stream() override;
  bool send(std::int64_t stream_id, ByteView bytes) override;
  void close(std::uint64_t app_error_code) override;
  std::size_t unacked_bytes() const override;

  // ngtcp2 callbacks (user_data is this connection)
  static int on_handshake_completed(ngtcp2_conn*, void* self);
  static int on_recv_stream_data(ngtcp2_conn*, std::uint32_t, std::int64_t stream_id, std::uint64_t, const std::uint8_t* data,
                                 std::size_t len, void* self, void*);
  static int on_acked_stream_data(ngtcp2_conn*, std::int64_t stream_id, std::uint64_t offset, std::uint64_t len, void* self,
                                  void*);
  static int on_stream_close(ngtcp2_conn*, std::uint32_t, std::int64_t stream_id, std::uint64_t, void* self, void*);
  static void on_rand(std::uint8_t* dest, std::size_t len, const ngtcp2_rand_ctx*) { random_fill(dest, len); }
  static int on_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, std::uint8_t* token, std::size_t cidlen, void* self);
  static int on_remove_connection_id(ngtcp2_conn*, const ngtcp2_cid* cid, void* self);

 private:
  // Stream bytes are kept in chunks that never move: ngtcp2 keeps pointers
  // into them for retransmission until it reports them acknowledged.
  struct Outgoing {
    std::deque<Bytes> chunks;
    std::uint64_t base = 0;  // stream offset of chunks.front()
    std::uint64_t sent = 0;  // handed to ngtcp2 up to here
    std::uint64_t end = 0;   // queued up to here
  };
  ngtcp2_callbacks callbacks(bool server);
  ngtcp2_settings default_settings();
  ngtcp2_transport_params transport_params(bool server);
  ngtcp2_path path();
  Result<Unit, std::string> start_tls(bool server);
  void fail(const std::string& why);
  void send_close(const ngtcp2_connection_close_error& ccerr);
  void finish(const std::string& why);
  void arm_timer();

  EndpointImpl& ep_;
  udp::endpoint remote_;
  sockaddr_storage local_sa_{}, remote_sa_{};
  socklen_t local_len_ = 0, remote_len_ = 0;
  ngtcp2_crypto_conn_ref conn_ref_{};
  ngtcp2_conn* conn_ = nullptr;
  gnutls_session_t tls_ = nullptr;
  asio::steady_timer timer_;
  std::map<std::int64_t, Outgoing> out_;
  std::vector<std::string> cids_;  // keys under which the endpoint finds this connection
  bool server_ = false;
  bool flush_posted_ = false;
  bool established_ = false, announce_established_ = false, closed_ = false;
};

class EndpointImpl final : public Endpoint {
 public:
  EndpointImpl(asio::io_context& io, EndpointConfig config, Events events)
      : io_(io), config_(std::move(config)), events_(std::move(events)), socket_(io) {}
  ~EndpointImpl() override {
    conns_.clear();
    if (cred_) gnutls_certificate_free_credentials(cred_);
  }

  Result<Unit, std::string> open() {
    if (gnutls_certificate_allocate_credentials(&cred_) != 0) return Err{std::string("cannot allocate TLS credentials")};
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
    if (ec) return Err{"cannot bind UDP " + config_.host + ":" + std::to_string(config_.port) + ": " + ec.message()};
    local_ = socket_.local_endpoint();
    receive();
    return Unit{};
  }

  std::uint16_t port() const override { return local_.port(); }
  std::size_t connections() const override { return conns_.size(); }
  std::uint64_t refused_initials() const override { return refused_initials_; }
  /// A server connection's handshake finished, or it ended before that.
  void half_open_done() { --half_open_; }

  Result<Connection*, std::string> connect(const std::string& host, std::uint16_t port) override {
    boost::system::error_code ec;
    udp::endpoint remote(asio::ip::make_address(host, ec), port);
    if (ec) return Err{"bad address " + host};
    auto c = std::make_unique<ConnectionImpl>(*this, remote);
    if (auto started = c->start_client(); !started) return Err{started.error()};
    ConnectionImpl* raw = c.get();
    conns_.emplace(raw, std::move(c));
    raw->flush();
    return static_cast<Connection*>(raw);
  }

  void send_datagram(const udp::endpoint& to, const std::uint8_t* data, std::size_t len) {
    boost::system::error_code ec;
    socket_.send_to(asio::buffer(data, len), to, 0, ec);  // a full socket buffer drops it: QUIC recovers
  }
  void add_cid(std::string key, ConnectionImpl* c) { by_cid_[std::move(key)] = c; }
  void remove_cid(const std::string& key) { by_cid_.erase(key); }
  void closed(ConnectionImpl* c, const std::string& why) {
    if (events_.on_closed) events_.on_closed(*c, why);
    // Destroyed in a later turn: the connection may be inside its own call stack.
    asio::post(io_, [this, c] { conns_.erase(c); });
  }

  asio::io_context& io() { return io_; }
  const EndpointConfig& config() const { return config_; }
  const Events& events() const { return events_; }
  const udp::endpoint& local() const { return local_; }
  gnutls_certificate_credentials_t credentials() const { return cred_; }

 private:
  void receive() {
    socket_.async_receive_from(asio::buffer(buffer_), from_, [this](boost::system::error_code ec, std::size_t n) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec) dispatch(buffer_.data(), n);
      receive();
    });
  }

  // Known destination connection id: that connection. An Initial for none, on
  // a server: a new connection. Anything else is dropped.
  void dispatch(std::uint8_t* data, std::size_t n) {
    ngtcp2_version_cid vc;
    if (ngtcp2_pkt_decode_version_cid(&vc, data, n, kScidLen) != 0) return;
    if (auto it = by_cid_.find(cid_key(vc.dcid, vc.dcidlen)); it != by_cid_.end()) return it->second->read(data, n);
    if (config_.certificate.empty()) return;  // a client accepts nothing
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, data, n) != 0) return;
    if (half_open_ >= config_.max_half_open || !new_connection_allowed(from_.address())) {
      ++refused_initials_;
      return;
    }
    auto c = std::make_unique<ConnectionImpl>(*this, from_);
    if (!c->start_server(hd)) return;
    ++half_open_;
    ConnectionImpl* raw = c.get();
    conns_.emplace(raw, std::move(c));
    raw->read(data, n);
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
  Events events_;
  udp::socket socket_;
  udp::endpoint local_, from_;
  std::array<std::uint8_t, 65536> buffer_{};
  gnutls_certificate_credentials_t cred_ = nullptr;
  std::map<ConnectionImpl*, std::unique_ptr<ConnectionImpl>> conns_;
  std::map<std::string, ConnectionImpl*> by_cid_;
  struct Bucket {
    double tokens, at;
  };
  std::map<asio::ip::address, Bucket> buckets_;
  std::size_t half_open_ = 0;
  std::uint64_t refused_initials_ = 0;
};

// ---- ConnectionImpl ----------------------------------------------------------

ConnectionImpl::ConnectionImpl(EndpointImpl& ep, udp::endpoint remote)
    : ep_(ep), remote_(std::move(remote)), timer_(ep.io()) {
  std::memcpy(&local_sa_, ep.local().data(), ep.local().size());
  local_len_ = static_cast<socklen_t>(ep.local().size());
  std::memcpy(&remote_sa_, remote_.data(), remote_.size());
  remote_len_ = static_cast<socklen_t>(remote_.size());
  conn_ref_.get_conn = [](ngtcp2_crypto_conn_ref* ref) { return static_cast<ConnectionImpl*>(ref->user_data)->conn_; };
  conn_ref_.user_data = this;
}

ConnectionImpl::~ConnectionImpl() {
  for (const auto& k : cids_) ep_.remove_cid(k);
  if (conn_) ngtcp2_conn_del(conn_);
  if (tls_) gnutls_deinit(tls_);
}

ngtcp2_path ConnectionImpl::path() {
  return ngtcp2_path{{reinterpret_cast<sockaddr*>(&local_sa_), local_len_},
                     {reinterpret_cast<sockaddr*>(&remote_sa_), remote_len_},
                     nullptr};
}

ngtcp2_callbacks ConnectionImpl::callbacks(bool server) {
  ngtcp2_callbacks cb{};
  if (server)
    cb.recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
  else
    cb.client_initial = ngtcp2_crypto_client_initial_cb;
  cb.recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
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
  if (gnutls_priority_set_direct(tls_, kPriority, nullptr) != 0) return Err{std::string("bad TLS priority")};
  if (gnutls_credentials_set(tls_, GNUTLS_CRD_CERTIFICATE, ep_.credentials()) != 0)
    return Err{std::string("cannot set TLS credentials")};
  gnutls_datum_t alpn{reinterpret_cast<unsigned char*>(const_cast<char*>(kAlpn.data())), static_cast<unsigned>(kAlpn.size())};
  gnutls_alpn_set_protocols(tls_, &alpn, 1, GNUTLS_ALPN_MANDATORY);
  if (!server) gnutls_server_name_set(tls_, GNUTLS_NAME_DNS, "localhost", 9);
  gnutls_session_set_ptr(tls_, &conn_ref_);
  ngtcp2_conn_set_tls_native_handle(conn_, tls_);
  return Unit{};
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
  if (int rv = ngtcp2_conn_client_new(&conn_, &dcid, &scid, &p, NGTCP2_PROTO_VER_V1, &cb, &settings, &params, nullptr, this);
      rv != 0)
    return Err{std::string("ngtcp2_conn_client_new: ") + ngtcp2_strerror(rv)};
  cids_.push_back(cid_key(scid.data, scid.datalen));
  ep_.add_cid(cids_.back(), this);
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
  random_fill(params.stateless_reset_token, sizeof params.stateless_reset_token);
  auto cb = callbacks(true);
  auto p = path();
  if (int rv = ngtcp2_conn_server_new(&conn_, &hd.scid, &scid, &p, hd.version, &cb, &settings, &params, nullptr, this);
      rv != 0)
    return Err{std::string("ngtcp2_conn_server_new: ") + ngtcp2_strerror(rv)};
  for (const ngtcp2_cid* c : {static_cast<const ngtcp2_cid*>(&scid), &hd.dcid}) {
    cids_.push_back(cid_key(c->data, c->datalen));
    ep_.add_cid(cids_.back(), this);
  }
  return start_tls(true);
}

void ConnectionImpl::read(const std::uint8_t* data, std::size_t len) {
  if (closed_) return;
  auto p = path();
  ngtcp2_pkt_info pi{};
  int rv = ngtcp2_conn_read_pkt(conn_, &p, &pi, data, len, now_ns());
  if (rv == NGTCP2_ERR_DRAINING) return finish("the peer closed the connection");
  if (rv != 0) return fail(std::string("QUIC: ") + ngtcp2_strerror(rv));
  if (announce_established_) {
    announce_established_ = false;
    if (ep_.events().on_established) ep_.events().on_established(*this);
  }
  flush();
}

void ConnectionImpl::flush() {
  if (closed_) return;
  std::array<std::uint8_t, kMaxDatagram> packet;
  std::set<std::int64_t> blocked;  // streams ngtcp2 cannot take more of now
  for (;;) {
    std::int64_t stream_id = -1;
    ngtcp2_vec vec{};
    std::size_t vcnt = 0;
    for (auto& [id, o] : out_) {
      if (o.sent >= o.end || blocked.contains(id)) continue;
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
      vcnt = 1;
      break;
    }
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi{};
    ngtcp2_ssize consumed = -1;
    std::uint32_t flags = stream_id >= 0 ? NGTCP2_WRITE_STREAM_FLAG_MORE : 0;
    ngtcp2_ssize n = ngtcp2_conn_writev_stream(conn_, &ps.path, &pi, packet.data(), packet.size(), &consumed, flags,
                                               stream_id, vcnt ? &vec : nullptr, vcnt, now_ns());
    if (consumed > 0) out_[stream_id].sent += static_cast<std::uint64_t>(consumed);
    if (n == NGTCP2_ERR_WRITE_MORE) continue;
    if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR) {
      blocked.insert(stream_id);
      continue;
    }
    if (n < 0) return fail(std::string("QUIC write: ") + ngtcp2_strerror(static_cast<int>(n)));
    if (n == 0) break;
    ep_.send_datagram(remote_, packet.data(), static_cast<std::size_t>(n));
  }
  arm_timer();
}

void ConnectionImpl::arm_timer() {
  std::uint64_t expiry = ngtcp2_conn_get_expiry(conn_), now = now_ns();
  timer_.expires_after(std::chrono::nanoseconds(expiry > now ? expiry - now : 0));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || closed_) return;
    int rv = ngtcp2_conn_handle_expiry(conn_, now_ns());
    if (rv == NGTCP2_ERR_IDLE_CLOSE) return finish("idle timeout");
    if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) return finish("handshake timeout");
    if (rv != 0) return fail(std::string("QUIC timer: ") + ngtcp2_strerror(rv));
    flush();
  });
}

std::optional<Bytes32> ConnectionImpl::channel_binding() const {
  if (!established_) return std::nullopt;
  Bytes32 out;
  if (gnutls_prf_rfc5705(tls_, kExporterLabel.size(), kExporterLabel.data(), 0, "", out.size(),
                         reinterpret_cast<char*>(out.data())) != 0)
    return std::nullopt;
  return out;
}

std::optional<std::int64_t> ConnectionImpl::open_stream() {
  if (!established_ || closed_) return std::nullopt;
  std::int64_t id = -1;
  if (ngtcp2_conn_open_bidi_stream(conn_, &id, nullptr) != 0) return std::nullopt;
  out_[id];
  return id;
}

bool ConnectionImpl::send(std::int64_t stream_id, ByteView bytes) {
  if (closed_ || bytes.empty()) return !closed_;
  auto it = out_.find(stream_id);
  if (it == out_.end()) {
    if (stream_id & 0x02) return false;  // unidirectional: none in CIP-11
    it = out_.emplace(stream_id, Outgoing{}).first;
  }
  it->second.chunks.emplace_back(bytes.begin(), bytes.end());
  it->second.end += bytes.size();
  if (!flush_posted_) {  // one write for everything queued in this turn
    flush_posted_ = true;
    asio::post(ep_.io(), [this] {
      flush_posted_ = false;
      flush();
    });
  }
  return true;
}

std::size_t ConnectionImpl::unacked_bytes() const {
  std::size_t n = 0;
  for (const auto& [id, o] : out_) n += static_cast<std::size_t>(o.end - o.base);
  return n;
}

void ConnectionImpl::close(std::uint64_t app_error_code) {
  if (closed_) return;
  asio::post(ep_.io(), [this, app_error_code] {
    if (closed_) return;
    ngtcp2_connection_close_error ccerr;
    ngtcp2_connection_close_error_set_application_error(&ccerr, app_error_code, nullptr, 0);
    send_close(ccerr);
    finish("closed by this end");
  });
}

void ConnectionImpl::fail(const std::string& why) {
  if (closed_) return;
  ngtcp2_connection_close_error ccerr;  // a transport error: tell the peer once, then forget the connection
  ngtcp2_connection_close_error_default(&ccerr);
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
  if (server_ && !established_) ep_.half_open_done();
  timer_.cancel();
  ep_.closed(this, why);
}

int ConnectionImpl::on_handshake_completed(ngtcp2_conn*, void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  c->established_ = true;
  c->announce_established_ = true;  // told to the user once read() returns from ngtcp2
  if (c->server_) c->ep_.half_open_done();
  return 0;
}

int ConnectionImpl::on_recv_stream_data(ngtcp2_conn* conn, std::uint32_t, std::int64_t stream_id, std::uint64_t,
                                        const std::uint8_t* data, std::size_t len, void* self, void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  // Consumed at once: the flow-control credit goes back as it arrives.
  ngtcp2_conn_extend_max_stream_offset(conn, stream_id, len);
  ngtcp2_conn_extend_max_offset(conn, len);
  if (len > 0 && c->ep_.events().on_stream_data) c->ep_.events().on_stream_data(*c, stream_id, ByteView(data, len));
  return 0;
}

int ConnectionImpl::on_acked_stream_data(ngtcp2_conn*, std::int64_t stream_id, std::uint64_t offset, std::uint64_t len,
                                         void* self, void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  auto it = c->out_.find(stream_id);
  if (it == c->out_.end()) return 0;
  Outgoing& o = it->second;
  std::uint64_t acked = offset + len;
  while (!o.chunks.empty() && o.base + o.chunks.front().size() <= acked) {
    o.base += o.chunks.front().size();
    o.chunks.pop_front();
  }
  return 0;
}

int ConnectionImpl::on_stream_close(ngtcp2_conn* conn, std::uint32_t, std::int64_t stream_id, std::uint64_t, void* self,
                                    void*) {
  auto* c = static_cast<ConnectionImpl*>(self);
  c->out_.erase(stream_id);
  if (!ngtcp2_conn_is_local_stream(conn, stream_id)) ngtcp2_conn_extend_max_streams_bidi(conn, 1);
  return 0;
}

int ConnectionImpl::on_new_connection_id(ngtcp2_conn*, ngtcp2_cid* cid, std::uint8_t* token, std::size_t cidlen,
                                         void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  random_fill(cid->data, cidlen);
  cid->datalen = cidlen;
  random_fill(token, NGTCP2_STATELESS_RESET_TOKENLEN);
  c->cids_.push_back(cid_key(cid->data, cid->datalen));
  c->ep_.add_cid(c->cids_.back(), c);
  return 0;
}

int ConnectionImpl::on_remove_connection_id(ngtcp2_conn*, const ngtcp2_cid* cid, void* self) {
  auto* c = static_cast<ConnectionImpl*>(self);
  std::string key = cid_key(cid->data, cid->datalen);
  c->ep_.remove_cid(key);
  std::erase(c->cids_, key);
  return 0;
}

}  // namespace

Result<std::unique_ptr<Endpoint>, std::string> Endpoint::open(asio::io_context& io, EndpointConfig config, Events events) {
  auto ep = std::make_unique<EndpointImpl>(io, std::move(config), std::move(events));
  if (auto opened = ep->open(); !opened) return Err{opened.error()};
  return std::unique_ptr<Endpoint>(std::move(ep));
}

}  // namespace cowboy::cip11::quic
