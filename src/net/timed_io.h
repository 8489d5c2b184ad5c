// Blocking steps with a deadline each, for a thread that owns one connection
// and its own io_context (the payload route and its client move bodies this
// way, chunk by chunk; the HTTP clients connect this way). Beast applies expires_after to asynchronous
// operations only, so a step is the asynchronous operation run on that
// io_context until it completes or its timer closes the stream.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>

namespace cowboy::net {

/// Runs `start(handler)` - which begins one asynchronous operation on
/// `stream` - to completion within `timeout`; its error code (timeout: beast::error::timeout).
template <typename Start>
boost::system::error_code run_timed(boost::asio::io_context& io, boost::beast::tcp_stream& stream,
                                    std::chrono::milliseconds timeout, Start start) {
  boost::system::error_code result;
  bool done = false;
  stream.expires_after(timeout);
  start([&](boost::system::error_code ec, auto&&...) {  // a byte count, an endpoint, or nothing
    result = ec;
    done = true;
  });
  io.restart();
  while (!done && io.run_one()) {
  }
  return result;
}

}  // namespace cowboy::net
