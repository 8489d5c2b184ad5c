// One wss:// connection to a cbqsd, frame in, frame out. TLS verification is
// always on: the server's certificate must chain to `ca_file` (or to the
// system roots when empty) and match `server_name`. Blocking calls with
// timeouts; a receive that times out leaves the connection usable. Not
// thread-safe: one thread at a time drives a connection.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "cbqs/wire/frames.h"
#include "common/result.h"

namespace cowboy::cbqs::client {

struct ConnectOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7447;
  std::filesystem::path ca_file;        // empty: the system's roots
  std::string server_name = "localhost";  // checked against the certificate
  std::chrono::milliseconds timeout{5'000};
  std::string path = "/";  // the upgrade's request target
  /// §11.4: loopback and private destinations are refused unless this
  /// explicit development opt-in is set (cbqsd --dev, tests).
  bool allow_private_destinations = false;
};

class WssConnection {
 public:
  static Result<std::unique_ptr<WssConnection>, std::string> connect(const ConnectOptions& options);
  ~WssConnection();

  Result<Unit, std::string> send(const CbqsClientFrameV2& frame);
  /// Sends any bytes as one binary message (tests send malformed frames).
  Result<Unit, std::string> send_raw(ByteView bytes);
  /// The next server frame; an error on timeout, close or an undecodable frame.
  Result<CbqsServerFrameV2, std::string> receive(std::chrono::milliseconds timeout);
  bool is_open() const;
  void close();

 private:
  struct Impl;
  explicit WssConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cowboy::cbqs::client
