// The keep-alive client (Transit's CLI, tests and load generator): its
// timeout bounds an exchange with a peer that accepts and never answers.
#include "net/http_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>

namespace cowboy::net {
namespace {

TEST(HttpConnectionTest, APeerThatAcceptsAndNeverAnswersIsAnErrorAfterTheTimeout) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);  // the kernel completes the handshake; nothing reads or answers
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
  HttpConnection connection("127.0.0.1", ntohs(a.sin_port), std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  auto answer = std::async(std::launch::async, [&] { return connection.post("/", "{}"); });
  const bool returned = answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  ::close(listener);  // resets the queued connection, so a client that hung returns now
  ASSERT_TRUE(returned) << "the exchange outlived its 300 ms timeout by 20 s";
  auto r = answer.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "Connection timed out");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

}  // namespace
}  // namespace cowboy::net
