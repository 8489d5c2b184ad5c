// Test support for the CIP-11 transport: a server configuration, and a loop
// that runs a test's io_context until a condition holds or 5 s pass.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "cip11/quic/endpoint.h"
#include "net/dev_cert.h"

namespace cowboy::cip11::testing {

/// A server endpoint's configuration with the dev certificate and the defaults otherwise.
inline quic::EndpointConfig server_config(const net::CertFiles& cert) {
  quic::EndpointConfig config;
  config.certificate = cert.certificate;
  config.private_key = cert.private_key;
  return config;
}

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
