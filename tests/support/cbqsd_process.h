// A real `cbqsd --dev` child process on free loopback ports, with its data
// directory's grant, holder key and certificate at hand.
#pragma once

#include <fstream>
#include <regex>

#include "cbqs/client/wss_connection.h"
#include "cbqs/wire/codec.h"
#include "devchain/http_client.h"
#include "devchain/keyfile.h"
#include "process.h"

namespace cowboy::testing {

class CbqsdProcess {
 public:
  /// `port` 0: a free one; a given port lets a restart keep the endpoint.
  /// `extra` flags follow the defaults; `prefix` runs before the binary (e.g. prlimit).
  explicit CbqsdProcess(const std::filesystem::path& dir, std::uint16_t port = 0, std::vector<std::string> extra = {},
                        std::vector<std::string> prefix = {})
      : data_(dir / "data"),
        child_([&] {
          ::setenv("CBQS_HOME", (dir / "home").c_str(), 1);
          std::vector<std::string> argv = std::move(prefix);
          for (std::string a : {std::string(COWBOY_BIN_DIR) + "/cbqsd", std::string("--dev"), std::string("--data-dir"),
                                data_.string(), std::string("--listen"), "127.0.0.1:" + std::to_string(port),
                                std::string("--admin-listen"), std::string("127.0.0.1:0"), std::string("--chain-listen"),
                                std::string("127.0.0.1:0")})
            argv.push_back(std::move(a));
          for (auto& a : extra) argv.push_back(std::move(a));
          return argv;
        }()) {
    std::smatch m;
    auto chain_line = child_.wait_for_line("devchain API");
    if (chain_line && std::regex_search(*chain_line, m, std::regex(R"(127\.0\.0\.1:(\d+))")))
      chain_port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    auto line = child_.wait_for_line("cbqsd listening on wss://");
    if (line && std::regex_search(*line, m, std::regex(R"(wss://127\.0\.0\.1:(\d+))")))
      port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    if (line && std::regex_search(*line, m, std::regex(R"(admin http://127\.0\.0\.1:(\d+))")))
      admin_port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
  }
  bool up() const { return port_ != 0 && chain_port_ != 0; }
  std::uint16_t port() const { return port_; }
  std::uint16_t chain_port() const { return chain_port_; }
  std::uint16_t admin_port() const { return admin_port_; }
  const std::filesystem::path& data() const { return data_; }
  void kill9() { child_.kill(SIGKILL); }
  pid_t pid() const { return child_.pid(); }
  std::string endpoint() const {
    std::string e = "wss://127.0.0.1:";
    return e.append(std::to_string(port_)).append("/");
  }

  std::unique_ptr<cbqs::client::WssConnection> connect() const {
    cbqs::client::ConnectOptions o;
    o.port = port_;
    o.ca_file = data_ / "tls" / "dev-cert.pem";
    o.allow_private_destinations = true;
    auto c = cbqs::client::WssConnection::connect(o);
    return c ? std::move(*c) : nullptr;
  }
  cbqs::StreamGrantV2 grant() const {
    std::ifstream in(data_ / "dev-grant.hex");
    std::string hex;
    in >> hex;
    return *cbqs::decode<cbqs::StreamGrantV2>(*from_hex(hex));
  }
  crypto::Ed25519Seed holder() const { return *devchain::load_secret(data_ / "dev-holder-key"); }
  devchain::HttpClient chain() const { return devchain::HttpClient("127.0.0.1", chain_port_); }

 private:
  std::filesystem::path data_;
  ChildProcess child_;
  std::uint16_t port_ = 0, chain_port_ = 0, admin_port_ = 0;
};

}  // namespace cowboy::testing
