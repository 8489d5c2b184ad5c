// One asynchronous step of a blocking client, run to completion on the
// caller's own io_context. Beast's stream deadlines (expires_after) apply only
// to asynchronous operations: a synchronous read on a peer that accepts and
// never answers would wait for ever. Running each step as an async operation
// on a private io_context keeps the call blocking and the deadline real.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/system/system_error.hpp>

namespace cowboy::net {

/// Starts `start(done)` and runs `io` until `done` has been called; throws
/// boost::system::system_error with the step's error (the deadline's is
/// `timed_out`).
template <typename Start>
void run_step(boost::asio::io_context& io, Start&& start) {
  boost::system::error_code ec;
  start([&ec](boost::system::error_code e, auto&&...) { ec = e; });
  io.restart();
  io.run();
  if (ec) throw boost::system::system_error(ec);
}

}  // namespace cowboy::net
