// The loopback HTTP server (devchain API, cbqsd admin) under idle connections:
// per-address slots and the header deadline keep it answering.
#include "net/http_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <chrono>

#include "../support/poll.h"
#include "devchain/http_client.h"

namespace cowboy::net {
namespace {

using tcp = boost::asio::ip::tcp;

std::unique_ptr<tcp::socket> idle_from(boost::asio::io_context& io, const std::string& source, std::uint16_t port) {
  auto s = std::make_unique<tcp::socket>(io);
  boost::system::error_code ec;
  s->open(tcp::v4(), ec);
  s->bind({boost::asio::ip::make_address(source), 0}, ec);
  s->connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return ec ? nullptr : std::move(s);
}

// Closed by the server within `timeout` (EOF or reset)?
bool closed_within(tcp::socket& s, std::chrono::milliseconds timeout) {
  pollfd p{s.native_handle(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char c;
  return ::recv(s.native_handle(), &c, 1, MSG_DONTWAIT) <= 0;
}

TEST(HttpServer, IdleConnectionsFromOneAddressDoNotShutOutOthers) {
  HttpServer server([](const HttpRequest&) { return HttpReply{200, "text/plain", "ok"}; }, "127.0.0.1", 0);
  server.start();
  boost::asio::io_context io;
  std::vector<std::unique_ptr<tcp::socket>> idle;
  for (int i = 0; i < 300; ++i)
    if (auto s = idle_from(io, "127.0.0.2", server.port())) idle.push_back(std::move(s));
  ASSERT_EQ(idle.size(), 300u);  // TCP connects; the server keeps 32 and closes the rest

  auto client = devchain::HttpClient::from_url("http://127.0.0.1:" + std::to_string(server.port()));
  ASSERT_TRUE(client);
  auto start = std::chrono::steady_clock::now();
  auto answer = client->get_text("/healthz");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, 200);
  std::printf("figure: answered in %.3f s beside 300 idle connections of another address\n", seconds);
  EXPECT_LT(seconds, 5.0);  // it was refused for 29.5 s

  // The held ones are closed once their header is 5 s late.
  int closed = 0;
  for (auto& s : idle) closed += closed_within(*s, std::chrono::seconds(8));
  EXPECT_EQ(closed, 300);
  server.stop();
}

}  // namespace
}  // namespace cowboy::net
