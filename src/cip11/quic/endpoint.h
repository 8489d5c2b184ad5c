// CIP-11 §6 transport, first layer: QUIC (RFC 9000) with TLS 1.3 over one UDP
// socket, on ngtcp2 0.12 and its GnuTLS crypto helper. This is the only module
// that touches either library; its users see endpoints, connections and
// streams of bytes. CIP-11 frames, Hello/HelloAck and liveness build on it.
//
// Everything runs on the io_context's single thread: callbacks are invoked
// there, and Connection handles are valid only there, until on_closed. An
// endpoint may be destroyed while the io_context still holds its handlers
// (they find it gone and do nothing). Datagrams move in batches
// (recvmmsg/sendmmsg); one timer serves every connection's ngtcp2 expiry.
//
// Decisions (docs/cip11.md, "Transport"): ALPN "cowboy-cip11/1", mandatory on
// both ends (a handshake that does not negotiate it fails with the
// no_application_protocol alert, QUIC error 0x178); TLS 1.3 only,
// no 0-RTT and no session tickets, so a channel binding is never shared across
// connections; the server's certificate is not checked (§6.2: the TLS key is
// not the identity; Hello/HelloAck over the exported binding authenticate).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/bytes.h"
#include "common/result.h"

namespace cowboy::cip11::quic {

inline constexpr std::string_view kAlpn = "cowboy-cip11/1";
/// §6.2: TLS-Exporter("cowboy-cip11-handshake-v1", "", 32).
inline constexpr std::string_view kExporterLabel = "cowboy-cip11-handshake-v1";

/// A CONNECTION_CLOSE's code: a QUIC transport error (a TLS alert is
/// 0x100 + alert, RFC 9001 §4.8) or the application's.
struct CloseCode {
  bool application = false;
  std::uint64_t code = 0;
  bool operator==(const CloseCode&) const = default;
};
/// RFC 9001 §8.1: no application protocol was negotiated.
inline constexpr CloseCode kNoApplicationProtocol{false, 0x100 + 120};

class Connection {
 public:
  virtual ~Connection() = default;
  /// True once the TLS handshake has completed on this end.
  virtual bool established() const = 0;
  /// The §6.2 channel binding; nullopt before the handshake completes.
  virtual std::optional<Bytes32> channel_binding() const = 0;
  /// Opens a bidirectional stream of this end; nullopt when the peer's limit allows none now.
  virtual std::optional<std::int64_t> open_stream() = 0;
  /// Queues bytes on a stream; they are kept until the peer acknowledges them.
  virtual bool send(std::int64_t stream_id, ByteView bytes) = 0;
  /// Ends this end's side of a stream (FIN) after the bytes queued on it.
  virtual void end_stream(std::int64_t stream_id) = 0;
  /// Closes with an application error code (CONNECTION_CLOSE); on_closed follows.
  virtual void close(std::uint64_t app_error_code) = 0;
  /// Bytes queued and not yet acknowledged by the peer, on every stream.
  virtual std::size_t unacked_bytes() const = 0;
  /// The code of the CONNECTION_CLOSE the peer sent, once one has arrived (read it in on_closed).
  virtual std::optional<CloseCode> peer_close() const = 0;
  /// The peer's address (without its port): the source its unauthenticated work is queued under.
  virtual boost::asio::ip::address peer_address() const = 0;
};

struct Events {
  std::function<void(Connection&)> on_established;
  std::function<void(Connection&, std::int64_t stream_id, ByteView data)> on_stream_data;
  /// The peer ended its side of a stream (FIN), after the last on_stream_data of it.
  std::function<void(Connection&, std::int64_t stream_id)> on_stream_end;
  /// Both sides of a stream have ended (or it was reset) and its bytes are acknowledged.
  std::function<void(Connection&, std::int64_t stream_id)> on_stream_closed;
  /// Once per connection; the handle is gone after it returns.
  std::function<void(Connection&, const std::string& why)> on_closed;
};

/// Where QUIC keeps its per-connection state. ngtcp2 0.12 allocates pools
/// and skip-list blocks of fixed size (about 96 KiB per connection) and
/// touches a fraction of each; memory of their own, on pages no other code
/// has dirtied, keeps the untouched parts out of RSS. A server binary passes
/// quic::dedicated_arena() (arena.h); null is the process's malloc.
struct MemoryHooks {
  void* (*malloc)(std::size_t size, void* user);
  void (*free)(void* ptr, void* user);
  void* (*calloc)(std::size_t count, std::size_t size, void* user);
  void* (*realloc)(void* ptr, std::size_t size, void* user);
  void* user = nullptr;
};

struct EndpointConfig {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: a free port
  /// Server role: the certificate and key (PEM). A client leaves them empty.
  std::filesystem::path certificate, private_key;
  /// The one application protocol this end offers (client) or selects
  /// (server); the handshake fails with no_application_protocol unless both
  /// ends agree on it. Tests set another, or "" (no ALPN at all), to show that.
  std::string alpn{kAlpn};
  std::chrono::milliseconds idle_timeout{30'000};
  /// The QUIC/TLS handshake must finish within this, or the connection is dropped.
  std::chrono::milliseconds handshake_timeout{10'000};
  /// Pre-auth protection (§6.2, §6.6), server role: at most this many
  /// connections whose handshake has not finished, and new connections from
  /// one address at this rate (a token bucket holding `new_connection_burst`).
  /// An Initial beyond its address's rate is dropped unanswered; one that
  /// finds the half-open cap reached evicts the oldest half-open handshake
  /// (CONNECTION_REFUSED), so stalled handshakes cannot keep a new peer out.
  std::size_t max_half_open = 256;
  double new_connections_per_address_per_sec = 16;
  double new_connection_burst = 32;
  /// Server role: the static key of RFC 9000 §10.3 stateless resets. Kept
  /// across restarts (the service derives it from its own key material), a
  /// restarted server resets its peers' old connections at their next packet,
  /// so they reconnect at once instead of after the idle timeout. Unset: no resets.
  std::optional<Bytes32> stateless_reset_secret;
  const MemoryHooks* connection_memory = nullptr;  // must outlive the endpoint
};

/// What an endpoint has done, for tests, benchmarks and metrics.
struct EndpointStats {
  std::uint64_t refused_initials = 0;      // dropped by the per-address rate
  std::uint64_t evicted_handshakes = 0;    // half-open handshakes evicted by a newer Initial at the cap
  std::uint64_t half_open = 0;             // now: server connections whose handshake has not finished
  std::uint64_t stateless_resets = 0;      // sent for packets of unknown connections
  std::uint64_t datagrams_in = 0, datagrams_out = 0;
  std::uint64_t send_drops = 0;            // datagrams the socket would not take (QUIC recovers)
};

class Endpoint {
 public:
  /// Binds the UDP socket; a server accepts connections from then on.
  static Result<std::unique_ptr<Endpoint>, std::string> open(boost::asio::io_context& io, EndpointConfig config,
                                                             Events events);
  virtual ~Endpoint() = default;
  virtual std::uint16_t port() const = 0;
  /// Client role: starts a handshake with host:port; events report how it ends.
  virtual Result<Connection*, std::string> connect(const std::string& host, std::uint16_t port) = 0;
  virtual std::size_t connections() const = 0;
  virtual EndpointStats stats() const = 0;
};

}  // namespace cowboy::cip11::quic
