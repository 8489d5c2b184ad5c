#include "net/wss_channel.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cerrno>
#include <cstring>

#include "common/clock.h"

namespace cowboy::net {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kReadChunk = 16 * 1024;      // the plaintext buffer's size: one TLS record
constexpr std::size_t kTlsReadAhead = 64 * 1024;   // OpenSSL's buffer: one recv(2) takes several records
constexpr std::size_t kReadPerTurn = 256 * 1024;   // then other connections get a turn
constexpr std::size_t kMaxUpgradeBytes = 8 * 1024;  // the HTTP upgrade request or response
constexpr std::size_t kMaxRecordBytes = 16 * 1024;  // one TLS record per SSL_write
constexpr std::chrono::seconds kCloseTimeout{2};
constexpr std::size_t kReadAllowance = 4 * kReadChunk;  // read memory a channel holds without the budget

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE on a
// reset connection; this one uses send(MSG_NOSIGNAL), so neither cbqsd nor an
// application using the SDK has to ignore SIGPIPE.
int socket_of(BIO* b) { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(b))); }

int bio_write(BIO* b, const char* data, std::size_t size, std::size_t* written) {
  BIO_clear_retry_flags(b);
  ssize_t n = ::send(socket_of(b), data, size, MSG_NOSIGNAL);
  if (n >= 0) {
    *written = static_cast<std::size_t>(n);
    return 1;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(b);
  return 0;
}

int bio_read(BIO* b, char* data, std::size_t size, std::size_t* read) {
  BIO_clear_retry_flags(b);
  ssize_t n = ::recv(socket_of(b), data, size, 0);
  if (n > 0) {
    *read = static_cast<std::size_t>(n);
    return 1;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(b);
  return 0;  // 0 bytes: the peer closed TCP
}

long bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO_METHOD* nosignal_socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cowboy socket");
    BIO_meth_set_write_ex(m, bio_write);
    BIO_meth_set_read_ex(m, bio_read);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

std::string ssl_error_text() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return std::strerror(errno);
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// The end of an HTTP header block in `text`, or npos.
std::size_t header_end(std::string_view text) {
  auto at = text.find("\r\n\r\n");
  return at == std::string_view::npos ? at : at + 4;
}

}  // namespace

WssChannel::WssChannel(tcp::socket socket, SSL_CTX* tls, Role role, Options options)
    : socket_(std::move(socket)), ssl_(SSL_new(tls)), role_(role), options_(options), timer_(socket_.get_executor()) {
  boost::system::error_code ignored;
  socket_.set_option(tcp::no_delay(true), ignored);  // small frames must not wait for Nagle
  socket_.set_option(asio::socket_base::keep_alive(true), ignored);
  socket_.non_blocking(true, ignored);
  BIO* bio = BIO_new(nosignal_socket_method());
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(socket_.native_handle())));
  SSL_set_bio(ssl_, bio, bio);
  // SSL_write may be retried from a moved buffer (out_ grows while it waits);
  // an idle connection keeps no TLS buffers.
  SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl_, 1);  // one recv(2) takes every record that has arrived
  SSL_set_default_read_buffer_len(ssl_, kTlsReadAhead);
  in_.resize(kReadChunk);
}

WssChannel::~WssChannel() {
  release_read_memory();
  SSL_free(ssl_);
}

void WssChannel::set_server_name(const std::string& name, bool verify) {
  boost::system::error_code not_ip;
  asio::ip::make_address(name, not_ip);
  if (not_ip) SSL_set_tlsext_host_name(ssl_, name.c_str());  // SNI carries DNS names only
  if (!verify) return;
  if (not_ip)
    SSL_set1_host(ssl_, name.c_str());
  else
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str());
}

void WssChannel::accept() { start_handshake(); }

void WssChannel::connect(const std::string& host, const std::string& path) {
  host_ = host;
  path_ = path;
  start_handshake();
}

void WssChannel::start_handshake() {
  timer_.expires_after(options_.handshake_timeout);
  timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec && self->state_ < State::kOpen) self->finish("the TLS or WebSocket handshake timed out");
  });
  tls_handshake();
}

void WssChannel::tls_handshake() {
  if (state_ != State::kHandshake) return;
  ERR_clear_error();
  int r = role_ == Role::kServer ? SSL_accept(ssl_) : SSL_connect(ssl_);
  if (r != 1) {
    int e = SSL_get_error(ssl_, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
      return wait(e == SSL_ERROR_WANT_READ, &WssChannel::tls_handshake);
    return fail_ssl("TLS handshake failed");
  }
  state_ = State::kUpgrade;
  if (role_ == Role::kClient) {
    std::array<std::uint8_t, 16> nonce;
    SystemEntropy{}.fill(nonce);
    client_key_ = ws::client_key(nonce);
    std::string request = "GET " + path_ + " HTTP/1.1\r\nHost: " + host_ +
                          "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + client_key_ +
                          "\r\nSec-WebSocket-Version: 13\r\n\r\n";
    out_.insert(out_.end(), request.begin(), request.end());
    flush();
  }
  read_available();
}

void WssChannel::read_available() {
  read_waiting_ = false;
  // SSL_get_error needs an empty error queue; every error path below drains
  // it, so one clear per wake-up (not per SSL_read) is enough.
  ERR_clear_error();
  std::size_t taken = 0;
  while (state_ != State::kClosed && !paused_) {
    if (!make_room(in_end_ - in_begin_ + kReadChunk / 4)) return refuse(ws::CloseCode::kTryAgainLater);  // for one more read
    int r = SSL_read(ssl_, in_.data() + in_end_, static_cast<int>(std::min<std::size_t>(in_.size() - in_end_, INT_MAX)));
    if (r <= 0) {
      int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return wait(e == SSL_ERROR_WANT_READ, &WssChannel::read_available);
      if (e == SSL_ERROR_ZERO_RETURN) return finish("the peer closed the connection");
      return fail_ssl("connection lost");
    }
    in_end_ += static_cast<std::size_t>(r);
    taken += static_cast<std::size_t>(r);
    bool go_on = state_ == State::kUpgrade ? take_upgrade() : take_frames();
    if (!go_on) return;
    if (taken >= kReadPerTurn) return post_read();  // let the other connections have a turn
  }
}

// The HTTP upgrade: the server checks the client's request and answers 101;
// the client checks the 101 and its Sec-WebSocket-Accept.
bool WssChannel::take_upgrade() {
  std::string_view text(reinterpret_cast<const char*>(in_.data()) + in_begin_, in_end_ - in_begin_);
  std::size_t end = header_end(text);
  if (end == std::string_view::npos) {
    if (text.size() > kMaxUpgradeBytes) finish("the WebSocket upgrade is too large");
    return state_ != State::kClosed;
  }
  boost::system::error_code ec;
  if (role_ == Role::kServer) {
    http::request_parser<http::empty_body> parser;
    parser.eager(false);
    parser.put(asio::buffer(text.data(), end), ec);
    if (ec || !parser.is_header_done() || !boost::beast::websocket::is_upgrade(parser.get()) ||
        parser.get()[http::field::sec_websocket_version] != "13" ||
        parser.get()[http::field::sec_websocket_key].size() != 24) {
      static constexpr std::string_view kRefusal =
          "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
      out_.insert(out_.end(), kRefusal.begin(), kRefusal.end());
      in_begin_ = in_end_;
      close_after_flush(ws::CloseCode::kProtocolError);  // no close frame before the upgrade
      return false;
    }
    std::string answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Accept: " +
                         ws::accept_key(parser.get()[http::field::sec_websocket_key]) + "\r\n\r\n";
    out_.insert(out_.end(), answer.begin(), answer.end());
    schedule_flush();
  } else {
    http::response_parser<http::empty_body> parser;
    parser.eager(false);
    parser.skip(true);  // a 101 has no body
    parser.put(asio::buffer(text.data(), end), ec);
    if (ec || parser.get().result() != http::status::switching_protocols) {
      finish("WebSocket upgrade failed: the server answered " +
             (ec ? ec.message() : std::to_string(parser.get().result_int())));
      return false;
    }
    if (parser.get()[http::field::sec_websocket_accept] != ws::accept_key(client_key_)) {
      finish("WebSocket upgrade failed: a wrong Sec-WebSocket-Accept");
      return false;
    }
  }
  in_begin_ += end;
  state_ = State::kOpen;
  timer_.cancel();
  on_open();
  return state_ == State::kOpen && take_frames();
}

bool WssChannel::take_frames() {
  bool server = role_ == Role::kServer;
  while (!paused_ && (state_ == State::kOpen || state_ == State::kClosing)) {
    if (skip_bytes_ > 0) {  // the rest of a refused frame
      std::size_t n = std::min<std::uint64_t>(skip_bytes_, in_end_ - in_begin_);
      in_begin_ += n;
      skip_bytes_ -= n;
      if (skip_bytes_ > 0) break;
    }
    ByteView available(in_.data() + in_begin_, in_end_ - in_begin_);
    // A continuation is bounded by what the message has left, so a fragment
    // that would take it over the cap is refused from its header too; a
    // control frame (at most 125 bytes) may come between fragments.
    std::uint64_t left = options_.max_message_bytes - std::min<std::uint64_t>(fragments_.size(), options_.max_message_bytes);
    bool closing = state_ == State::kClosing;  // every data frame is dropped: no bound, nothing buffered
    auto parsed = ws::parse_header(available, closing ? UINT64_MAX : std::max<std::uint64_t>(left, 125));
    if (parsed.status == ws::ParseStatus::kNeedMore) break;
    const auto& h = parsed.header;
    // Clients mask every frame, servers none (RFC 6455 §5.1).
    bool too_big = parsed.status == ws::ParseStatus::kTooBig;
    if (too_big || parsed.status == ws::ParseStatus::kProtocolError || h.masked != server) {
      if (state_ == State::kClosing) {
        finish("closed");  // waiting only for the peer's close; anything odd ends it
        return false;
      }
      refuse(too_big ? ws::CloseCode::kTooBig : ws::CloseCode::kProtocolError);
      return false;
    }
    if (closing && !ws::is_control(h.opcode)) {
      skip_bytes_ = h.header_bytes + h.payload_bytes;
      continue;
    }
    std::size_t whole = h.header_bytes + static_cast<std::size_t>(h.payload_bytes);
    if (available.size() < whole) {
      // Room for what has arrived and one more record, not for what the
      // header promises: a declared length costs nothing until it is sent.
      if (!make_room(std::min(whole, available.size() + kReadChunk))) {
        refuse(ws::CloseCode::kTryAgainLater);
        return false;
      }
      break;
    }
    // A whole fragment joins its message only if the budget holds the message.
    bool fragment = h.opcode == ws::Opcode::kContinuation || (h.opcode == ws::Opcode::kBinary && !h.fin);
    if (fragment && state_ == State::kOpen &&
        !reserve_fragments(fragments_.size() + static_cast<std::size_t>(h.payload_bytes))) {
      refuse(ws::CloseCode::kTryAgainLater);
      return false;
    }
    std::uint8_t* payload = in_.data() + in_begin_ + h.header_bytes;
    in_begin_ += whole;  // consumed before the handler runs: it may close or pause
    if (h.masked) ws::apply_mask(payload, h.payload_bytes, h.mask);
    if (!take_message(h, payload)) return false;
  }
  if (in_begin_ == in_end_) {
    in_begin_ = in_end_ = 0;
    if (in_.size() > 4 * kReadChunk) {  // a large message passed: give its room back
      in_.resize(kReadChunk);
      in_.shrink_to_fit();
      (void)afford(in_.capacity(), fragments_.capacity());
    }
  }
  return state_ != State::kClosed;
}

// Room for `bytes` from the first unread byte: the unread bytes move to the
// front, and the buffer grows only if that is not enough and the budget
// affords it (false: it does not).
bool WssChannel::make_room(std::size_t bytes) {
  if (in_.size() - in_begin_ >= bytes) return true;
  std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
  in_end_ -= in_begin_;
  in_begin_ = 0;
  if (in_.size() >= bytes) return true;
  std::size_t size = bytes + kReadChunk / 4;
  if (size > in_.capacity()) {
    // Geometric growth, bounded by one whole message and a record.
    std::size_t cap = std::max(size, std::min(2 * in_.capacity(), options_.max_message_bytes + 2 * kReadChunk));
    if (!afford(cap, fragments_.capacity())) return false;
    in_.reserve(cap);
  }
  in_.resize(size);
  return true;
}

bool WssChannel::reserve_fragments(std::size_t bytes) {
  if (bytes <= fragments_.capacity()) return true;
  std::size_t cap = std::max(bytes, std::min(2 * fragments_.capacity(), options_.max_message_bytes));
  if (!afford(in_.capacity(), cap)) return false;
  fragments_.reserve(cap);
  return true;
}

// Takes from (or gives back to) the budget what buffers of these capacities
// hold beyond the allowance; false, and nothing taken, when it cannot.
bool WssChannel::afford(std::size_t in_capacity, std::size_t fragments_capacity) {
  std::size_t total = in_capacity + fragments_capacity;
  std::size_t held = total > kReadAllowance ? total - kReadAllowance : 0;
  ReadBudget* budget = options_.read_budget;
  if (budget && held > budget_held_ && !budget->try_take(held - budget_held_)) return false;
  if (budget && held < budget_held_) budget->give_back(budget_held_ - held);
  budget_held_ = held;
  return true;
}

// Refuses what was read (a frame too large, a protocol error, a message the
// budget cannot hold): the subclass may send a last message, then the close.
void WssChannel::refuse(ws::CloseCode code) {
  if (code != ws::CloseCode::kProtocolError) {
    // The framing is intact: the refused frame's payload is skipped as it
    // arrives (until the close timeout), so the peer gets to read our close.
    ByteView unread(in_.data() + in_begin_, in_end_ - in_begin_);
    auto parsed = ws::parse_header(unread, UINT64_MAX);
    std::uint64_t frame = parsed.header.header_bytes + parsed.header.payload_bytes;
    if (parsed.status == ws::ParseStatus::kFrame && frame > unread.size()) skip_bytes_ = frame - unread.size();
    on_refused(code);
  }
  in_begin_ = in_end_;  // what is buffered is dropped; then we wait for the peer's close
  close_after_flush(code);
}

void WssChannel::release_read_memory() {
  in_.clear();
  in_.shrink_to_fit();
  fragments_.clear();
  fragments_.shrink_to_fit();
  in_begin_ = in_end_ = 0;
  (void)afford(0, 0);
}

bool WssChannel::take_message(const ws::FrameHeader& h, std::uint8_t* payload) {
  ByteView data(payload, h.payload_bytes);
  switch (h.opcode) {
    case ws::Opcode::kBinary:
    case ws::Opcode::kContinuation:
      if ((h.opcode == ws::Opcode::kContinuation) != fragmented_) {
        close_after_flush(ws::CloseCode::kProtocolError);
        return false;
      }
      if (state_ != State::kOpen) return true;  // closing: the rest is dropped
      if (h.fin && !fragmented_) {
        on_message(data);
        return true;
      }
      fragments_.insert(fragments_.end(), data.begin(), data.end());  // within reserve_fragments' room
      fragmented_ = !h.fin;
      if (h.fin) {
        on_message(fragments_);
        fragments_.clear();
        if (fragments_.capacity() > kReadAllowance) {
          fragments_.shrink_to_fit();
          (void)afford(in_.capacity(), fragments_.capacity());
        }
      }
      return true;
    case ws::Opcode::kText:
      close_after_flush(ws::CloseCode::kUnsupportedData);  // CBQS frames are binary messages
      return false;
    case ws::Opcode::kPing:
      if (state_ == State::kOpen) queue_frame(ws::Opcode::kPong, data);
      return true;
    case ws::Opcode::kPong:
      return true;
    case ws::Opcode::kClose:
      if (state_ == State::kClosing) {  // the answer to our close
        finish("closed");
        return false;
      }
      // Echo the peer's code (RFC 6455 §5.5.1), then close: the peer sends nothing more.
      queue_frame(ws::Opcode::kClose, data.size() >= 2 ? data.first(2) : ByteView{});
      state_ = State::kClosing;
      shutdown_after_flush_ = finish_after_flush_ = true;
      flush();
      return false;
  }
  return true;
}

void WssChannel::send(ByteView message) {
  if (state_ != State::kOpen) return;
  queue_frame(ws::Opcode::kBinary, message);
}

void WssChannel::queue_frame(ws::Opcode opcode, ByteView payload) {
  if (role_ == Role::kClient) {
    ws::Mask mask;
    SystemEntropy{}.fill(mask);  // from a pooled CSPRNG: a mask costs a copy, not a syscall
    ws::append_frame(out_, opcode, payload, &mask);
  } else {
    ws::append_frame(out_, opcode, payload, nullptr);
  }
  schedule_flush();
}

void WssChannel::schedule_flush() {
  if (flush_posted_ || write_waiting_) return;
  flush_posted_ = true;
  // Posted, so the rest of this turn's messages join the same write.
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->flush_posted_ = false;
    self->flush();
  });
}

void WssChannel::flush() {
  if (write_waiting_) return;  // the socket's writability calls it
  ERR_clear_error();  // as in read_available()
  while (state_ != State::kClosed && out_begin_ < out_.size()) {
    int size = retry_bytes_ ? retry_bytes_ : static_cast<int>(std::min(out_.size() - out_begin_, kMaxRecordBytes));
    int r = SSL_write(ssl_, out_.data() + out_begin_, size);
    if (r <= 0) {
      int e = SSL_get_error(ssl_, r);
      if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
        retry_bytes_ = size;  // OpenSSL requires the same length on the retry
        return wait(e == SSL_ERROR_WANT_READ, &WssChannel::flush);
      }
      return fail_ssl("send failed");
    }
    retry_bytes_ = 0;
    out_begin_ += static_cast<std::size_t>(r);
  }
  if (state_ == State::kClosed) return;
  out_.clear();
  out_begin_ = 0;
  if (out_.capacity() > 4 * kReadChunk) out_.shrink_to_fit();
  if (shutdown_after_flush_) {
    // Our last bytes are out: close TLS, then TCP's sending half; the timer
    // bounds how long we wait for the peer's end.
    shutdown_after_flush_ = false;
    SSL_shutdown(ssl_);
    ERR_clear_error();  // a failed close_notify changes nothing: TCP closes next
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    if (finish_after_flush_) return finish("the peer closed the connection");
    timer_.expires_after(kCloseTimeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->finish("closed");
    });
  }
  on_written();
}

void WssChannel::close(ws::CloseCode code) {
  if (state_ == State::kClosing || state_ == State::kClosed) return;
  if (state_ != State::kOpen) return finish("closed before the upgrade");
  close_after_flush(code);
}

void WssChannel::close_after_flush(ws::CloseCode code) {
  if (state_ == State::kClosing || state_ == State::kClosed) return;
  if (state_ == State::kOpen) {
    std::uint8_t payload[2] = {static_cast<std::uint8_t>(static_cast<std::uint16_t>(code) >> 8),
                               static_cast<std::uint8_t>(static_cast<std::uint16_t>(code))};
    queue_frame(ws::Opcode::kClose, payload);
  }
  state_ = State::kClosing;
  shutdown_after_flush_ = true;
  // Posted, never written from here: close() may be called from inside
  // on_message, and a failed write must not run on_closed under its caller.
  schedule_flush();
  post_read();  // keep reading: the peer's close frame, or its end of TCP, finishes
}

void WssChannel::post_read() {
  if (read_waiting_) return;
  read_waiting_ = true;
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->read_available(); });
}

void WssChannel::pause_reading() { paused_ = true; }

void WssChannel::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  if (read_waiting_ || state_ == State::kClosed) return;
  read_waiting_ = true;  // frames already read go first, then the socket
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->read_waiting_ = false;
    if (self->state_ == State::kOpen && !self->take_frames()) return;
    self->read_available();
  });
}

void WssChannel::wait(bool for_read, Step then) {
  if (for_read) {
    if (then == &WssChannel::read_available) {
      if (read_waiting_) return;
      read_waiting_ = true;
    }
  } else if (then == &WssChannel::flush) {
    write_waiting_ = true;
  }
  socket_.async_wait(for_read ? tcp::socket::wait_read : tcp::socket::wait_write,
                     [self = shared_from_this(), then](boost::system::error_code ec) {
                       if (then == &WssChannel::flush) self->write_waiting_ = false;
                       if (self->state_ == State::kClosed) return;
                       if (ec) return self->finish("connection lost: " + ec.message());
                       (self.get()->*then)();
                     });
}

void WssChannel::fail_ssl(const char* what) {
  std::string why = what;
  why.append(": ").append(ssl_error_text());
  finish(why);
}

void WssChannel::finish(const std::string& why) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  timer_.cancel();
  boost::system::error_code ignored;
  socket_.close(ignored);
  out_.clear();
  out_begin_ = 0;
  release_read_memory();
  on_closed(why);
}

}  // namespace cowboy::net
