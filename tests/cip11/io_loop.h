// Runs a test's io_context until a condition holds or 5 s pass.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>

namespace cowboy::cip11::testing {

template <typename Done>
bool run_until(boost::asio::io_context& io, Done done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(5));
    io.restart();
  }
  return done();
}

}  // namespace cowboy::cip11::testing
