// The keep-alive client (Transit's CLI, tests and load generator): its
// timeout bounds an exchange with a peer that accepts and never answers.
#include "net/http_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "../support/silent_listener.h"

namespace cowboy::net {
namespace {

TEST(HttpConnectionTest, APeerThatAcceptsAndNeverAnswersIsAnErrorAfterTheTimeout) {
  cowboy::testing::SilentListener listener;
  ASSERT_NE(listener.port(), 0);
  HttpConnection connection("127.0.0.1", listener.port(), std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  auto answer = std::async(std::launch::async, [&] { return connection.post("/", "{}"); });
  const bool returned = answer.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  listener.close();
  ASSERT_TRUE(returned) << "the exchange outlived its 300 ms timeout by 20 s";
  auto r = answer.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "Connection timed out");
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

}  // namespace
}  // namespace cowboy::net
