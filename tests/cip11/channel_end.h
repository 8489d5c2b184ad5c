// Test support for CIP-11 channels over real QUIC: an End is one endpoint
// (a validator with a certificate, or a runner) whose every connection gets
// a Channel with a fixed Admission, recording what each connection admits,
// receives and says.
#pragma once

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "cip11/link/channel.h"
#include "io_loop.h"
#include "net/dev_cert.h"

namespace cowboy::cip11::testing {

class AdmitAll final : public Admission {
 public:
  std::optional<GoodbyeReason> admit(const Hello&) override { return std::nullopt; }
};

struct Received {
  std::int64_t stream;
  Frame frame;
  bool seal_ok;
};

struct End {
  /// A server when `cert` is given (with `server` for its limits), else a client.
  End(boost::asio::io_context& io, const Signer& me, LocalOffer o, const net::CertFiles* cert,
      std::chrono::milliseconds deadline = std::chrono::seconds(10), quic::EndpointConfig server = {})
      : me(me), offer(o), deadline(deadline), worker(io, 1) {
    quic::Events e;
    e.on_established = [this](quic::Connection& c) {
      auto& ch = channel(c);
      if (this->me.role() == Role::kRunner && open_control) {
        EXPECT_TRUE(ch.open());
      }
    };
    e.on_stream_data = [this](quic::Connection& c, std::int64_t s, ByteView d) { channel(c).on_stream_data(s, d); };
    e.on_stream_end = [this](quic::Connection& c, std::int64_t s) { channel(c).on_stream_end(s); };
    e.on_stream_closed = [this](quic::Connection& c, std::int64_t s) {
      channel(c).on_stream_closed(s);
      closed_streams.push_back(s);
    };
    e.on_closed = [this](quic::Connection& c, const std::string&) {
      if (auto it = numbers.find(&c); it != numbers.end()) closed_numbers.push_back(it->second), numbers.erase(it);
      channels.erase(&c);
      ++closed;
    };
    if (cert) {
      server.certificate = cert->certificate;
      server.private_key = cert->private_key;
    }
    endpoint = std::move(*quic::Endpoint::open(io, cert ? server : quic::EndpointConfig{}, e));
  }
  Channel& channel(quic::Connection& c) {
    auto it = channels.find(&c);
    if (it == channels.end()) {
      const int number = next_number++;
      numbers[&c] = number;
      Channel::Callbacks cb;
      cb.on_admitted = [this](Channel&) { ++admitted; };
      cb.on_frame = [this, number](Channel&, std::int64_t s, const Frame& f, const Res<Unit>& seal) {
        frames.push_back({s, f, seal.ok()});
        frames_of[number].push_back(f);
      };
      cb.on_goodbye = [this, number](Channel&, const Goodbye& g, bool by_peer) {
        goodbyes.emplace_back(g.reason, by_peer);
        goodbyes_of[number].emplace_back(g.reason, by_peer);
      };
      Channel::Setup setup{me, offer, admission, entropy, worker, &budget, deadline};
      it = channels.emplace(&c, std::make_unique<Channel>(c, setup, cb)).first;
    }
    return *it->second;
  }
  Channel& only() { return *channels.begin()->second; }
  /// The channel of the connection numbered `n` (0 for the first), while it is open.
  Channel* numbered(int n) {
    for (auto& [c, number] : numbers)
      if (number == n) return channels.at(c).get();
    return nullptr;
  }

  const Signer& me;
  LocalOffer offer;
  std::chrono::milliseconds deadline;
  bool open_control = true;
  AdmitAll admission;
  SystemEntropy entropy;
  SignatureWorker worker;
  net::ReadBudget budget{1 << 20};
  std::unique_ptr<quic::Endpoint> endpoint;
  std::map<quic::Connection*, std::unique_ptr<Channel>> channels;
  std::map<quic::Connection*, int> numbers;  // connections in the order their channels were made
  int next_number = 0;
  std::vector<Received> frames;
  std::map<int, std::vector<Frame>> frames_of;
  std::vector<std::pair<GoodbyeReason, bool>> goodbyes;
  std::map<int, std::vector<std::pair<GoodbyeReason, bool>>> goodbyes_of;
  std::vector<std::int64_t> closed_streams;
  std::vector<int> closed_numbers;
  int admitted = 0, closed = 0;
};

}  // namespace cowboy::cip11::testing
