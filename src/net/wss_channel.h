// A WebSocket-over-TLS connection made for many small binary messages.
//
// Why not Boost.Beast's websocket::stream over asio's ssl::stream: those move
// one message per composed operation, through a BIO pair, and cost tens of
// thousands of instructions per message on each end (docs/performance.md).
// Here OpenSSL reads and writes the non-blocking socket itself; each wake-up
// reads every TLS record that has arrived and splits all the frames in it in
// place (no copy, no allocation per message), and every message sent during
// one turn of the io loop goes out in one SSL_write per 16 KiB: one TLS record
// and one send(2) for a whole burst of answers or appends.
//
// The HTTP upgrade is parsed by Boost.Beast; the frames by
// net/websocket_frames.h. Only binary messages are accepted (a text frame is
// closed with 1003); pings are answered; fragmented messages are reassembled
// up to the same bound as whole ones. A message above the bound, whole or
// with its fragments, closes the connection with 1009, decided from the frame
// header; the buffer grows only with bytes that have arrived, and beyond 64
// KiB only within the process's ReadBudget (1013 when it cannot).
//
// A subclass receives the events. Everything runs on the socket's executor,
// which must be single-threaded (an io_context run by one thread). Pending
// operations hold the channel alive; it dies once closed and idle.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/bytes.h"
#include "net/read_budget.h"
#include "net/websocket_frames.h"

namespace cowboy::net {

class WssChannel : public std::enable_shared_from_this<WssChannel> {
 public:
  enum class Role { kServer, kClient };
  struct Options {
    std::uint64_t max_message_bytes = 1 << 20;
    std::chrono::milliseconds handshake_timeout{10'000};  // TLS and the upgrade together
    /// Read memory beyond 64 KiB per channel (a large message) comes from
    /// here, as bytes arrive; none: bounded by max_message_bytes alone.
    ReadBudget* read_budget = nullptr;
  };

  /// `socket` is connected; `tls` supplies certificates and verification.
  WssChannel(boost::asio::ip::tcp::socket socket, SSL_CTX* tls, Role role, Options options);
  virtual ~WssChannel();
  WssChannel(const WssChannel&) = delete;
  WssChannel& operator=(const WssChannel&) = delete;

  /// Client role, before connect(): SNI for `name`, and unless `verify` is
  /// false (a pinned certificate replaces name checks), the certificate must
  /// be for that DNS name or IP address.
  void set_server_name(const std::string& name, bool verify);

  /// Server role: the TLS handshake, then the HTTP upgrade request.
  void accept();
  /// Client role: the TLS handshake, then `GET path` with `Host: host`; any
  /// answer but 101 with the right Sec-WebSocket-Accept fails (no redirects).
  void connect(const std::string& host, const std::string& path);

  /// Queues one binary message. Everything queued in one turn of the io loop
  /// is written together. Ignored unless open.
  void send(ByteView message);
  /// Sends a close frame, then closes TLS and the socket; on_closed follows
  /// in a later turn (so close() is safe inside on_message). Before the
  /// upgrade there is nothing to send: the socket closes and on_closed runs at once.
  void close(ws::CloseCode code = ws::CloseCode::kNormal);
  /// Stops handing messages to on_message (the socket's data waits in the
  /// kernel: TCP flow control pushes back) until resume_reading().
  void pause_reading();
  void resume_reading();

  bool is_open() const { return state_ == State::kOpen; }
  /// The bound for messages from now on (a server raises it once its peer is known).
  void set_max_message_bytes(std::uint64_t bytes) { options_.max_message_bytes = bytes; }
  /// Bytes queued by send() and not yet written to the socket.
  std::size_t queued_bytes() const { return out_.size() - out_begin_; }
  /// Memory held for reading: the frame buffer and a message being reassembled.
  std::size_t read_buffer_bytes() const { return in_.capacity() + fragments_.capacity(); }
  boost::asio::ip::tcp::socket& socket() { return socket_; }

 protected:
  virtual void on_open() = 0;
  virtual void on_message(ByteView message) = 0;
  /// Once, when the connection ends for any reason (never opened included).
  virtual void on_closed(const std::string& why) = 0;
  /// After queued bytes went out to the socket.
  virtual void on_written() {}
  /// A message was refused: above max_message_bytes, from its frame header
  /// (kTooBig), or more than the read budget holds now (kTryAgainLater). A
  /// send() from here goes out just before the close frame with that code.
  virtual void on_refused(ws::CloseCode) {}

 private:
  enum class State { kHandshake, kUpgrade, kOpen, kClosing, kClosed };
  using Step = void (WssChannel::*)();

  void start_handshake();
  void tls_handshake();
  void read_available();
  void post_read();  // read_available() in a later turn, unless a read is already pending
  bool take_upgrade();
  bool take_frames();
  bool make_room(std::size_t bytes);
  bool reserve_fragments(std::size_t bytes);
  bool afford(std::size_t in_capacity, std::size_t fragments_capacity);
  void refuse(ws::CloseCode code);
  void release_read_memory();
  bool take_message(const ws::FrameHeader& h, std::uint8_t* payload);
  void queue_frame(ws::Opcode opcode, ByteView payload);
  void schedule_flush();
  void flush();
  void close_after_flush(ws::CloseCode code);
  void finish(const std::string& why);
  void wait(bool for_read, Step then);
  void fail_ssl(const char* what);

  boost::asio::ip::tcp::socket socket_;
  SSL* ssl_ = nullptr;
  Role role_;
  Options options_;
  State state_ = State::kHandshake;
  boost::asio::steady_timer timer_;  // the handshake, then the close, are bounded
  std::string host_, path_, client_key_;

  std::vector<std::uint8_t> in_;  // plaintext read, frames parsed in place
  std::size_t in_begin_ = 0, in_end_ = 0;
  std::vector<std::uint8_t> fragments_;  // a fragmented message being reassembled
  bool fragmented_ = false;
  bool paused_ = false;
  bool read_waiting_ = false;
  std::size_t budget_held_ = 0;  // taken from options_.read_budget
  std::uint64_t skip_bytes_ = 0;  // of a refused frame, still to arrive

  std::vector<std::uint8_t> out_;  // framed plaintext for SSL_write
  std::size_t out_begin_ = 0;
  int retry_bytes_ = 0;  // an SSL_write that must be retried with the same length
  bool flush_posted_ = false, write_waiting_ = false;
  bool shutdown_after_flush_ = false;  // then close TLS and TCP's sending half
  bool finish_after_flush_ = false;    // the peer closed first: nothing more to wait for
};

}  // namespace cowboy::net
