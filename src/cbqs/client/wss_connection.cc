#include "cbqs/client/wss_connection.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "cbqs/client/dialing.h"
#include "cbqs/wire/codec.h"
#include "cbqs/wire/limits.h"

namespace cowboy::cbqs::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

struct WssConnection::Impl {
  asio::io_context io;
  ssl::context tls{ssl::context::tls_client};
  std::unique_ptr<websocket::stream<ssl::stream<beast::tcp_stream>>> ws;
  beast::flat_buffer buffer;
  bool read_pending = false;
  bool read_done = false;
  beast::error_code read_error;
  std::chrono::milliseconds timeout{5'000};

  // Runs the io_context until `done` or the deadline.
  bool run_until(const bool& done, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) return false;
      io.restart();
      io.run_one_for(left);
    }
    return true;
  }
};

WssConnection::WssConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WssConnection::~WssConnection() { close(); }

Result<std::unique_ptr<WssConnection>, std::string> WssConnection::connect(const ConnectOptions& o) {
  // Resolve once, check every address, then connect only to a checked one.
  auto addresses = resolve_checked(o.host, o.allow_private_destinations);
  if (!addresses) return Err{"refused destination: " + addresses.error()};
  auto impl = std::make_unique<Impl>();
  impl->timeout = o.timeout;
  try {
    impl->tls.set_verify_mode(ssl::verify_peer);
    if (o.ca_file.empty())
      impl->tls.set_default_verify_paths();
    else
      impl->tls.load_verify_file(o.ca_file.string());
    impl->ws = std::make_unique<websocket::stream<ssl::stream<beast::tcp_stream>>>(impl->io, impl->tls);
    auto& ws = *impl->ws;
    ws.next_layer().set_verify_callback(ssl::host_name_verification(o.server_name));
    if (!SSL_set_tlsext_host_name(ws.next_layer().native_handle(), o.server_name.c_str()))
      return Err{std::string("cannot set SNI")};
    beast::get_lowest_layer(ws).expires_after(o.timeout);
    tcp::endpoint endpoint{asio::ip::make_address(addresses->front()), o.port};
    beast::get_lowest_layer(ws).connect(endpoint);
    beast::get_lowest_layer(ws).socket().set_option(tcp::no_delay(true));
    ws.next_layer().handshake(ssl::stream_base::client);
    ws.read_message_max(limits::kMaxFrameBytes);
    ws.binary(true);
    // Any answer but 101 fails the handshake: redirects are never followed (§11.4).
    ws.handshake(o.server_name + ":" + std::to_string(o.port), o.path);
    beast::get_lowest_layer(ws).expires_never();
  } catch (const std::exception& e) {
    return Err{std::string("cannot connect: ") + e.what()};
  }
  return std::unique_ptr<WssConnection>(new WssConnection(std::move(impl)));
}

Result<Unit, std::string> WssConnection::send(const CbqsClientFrameV2& frame) { return send_raw(encode(frame)); }

Result<Unit, std::string> WssConnection::send_raw(ByteView bytes) {
  if (!is_open()) return Err{std::string("connection closed")};
  bool done = false;
  beast::error_code error;
  impl_->ws->async_write(asio::buffer(bytes.data(), bytes.size()), [&](beast::error_code ec, std::size_t) {
    error = ec;
    done = true;
  });
  if (!impl_->run_until(done, impl_->timeout)) return Err{std::string("send timed out")};
  if (error) return Err{"send failed: " + error.message()};
  return Unit{};
}

Result<CbqsServerFrameV2, std::string> WssConnection::receive(std::chrono::milliseconds timeout) {
  auto& i = *impl_;
  if (!i.ws) return Err{std::string("connection closed")};
  if (!i.read_pending) {
    i.read_pending = true;
    i.read_done = false;
    i.ws->async_read(i.buffer, [&i](beast::error_code ec, std::size_t) {
      i.read_error = ec;
      i.read_done = true;
    });
  }
  if (!i.run_until(i.read_done, timeout)) return Err{std::string("timeout")};
  i.read_pending = false;
  if (i.read_error) return Err{"closed: " + i.read_error.message()};
  auto data = i.buffer.data();
  auto frame = decode<CbqsServerFrameV2>(ByteView(static_cast<const std::uint8_t*>(data.data()), data.size()));
  i.buffer.consume(i.buffer.size());
  if (!frame) return Err{std::string("undecodable server frame: ") + std::string(codec::to_string(frame.error()))};
  return std::move(*frame);
}

bool WssConnection::is_open() const { return impl_ && impl_->ws && impl_->ws->is_open(); }

void WssConnection::close() {
  if (!is_open()) return;
  beast::error_code ignored;
  beast::get_lowest_layer(*impl_->ws).socket().close(ignored);
}

}  // namespace cowboy::cbqs::client
