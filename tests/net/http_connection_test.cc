// The keep-alive client (Transit's CLI, tests and load generator, the CIP-11
// runner's get task): its timeout bounds an exchange with a peer that accepts
// and never answers, and a get with a BodyProgress reports the body as it arrives.
#include "net/http_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "../support/silent_listener.h"
#include "net/http_server.h"

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

// Each read of the body reports the bytes so far against the declared
// Content-Length, never backwards, the last at the whole body; an answer over
// the body limit is refused at its header and reports nothing.
TEST(HttpConnectionTest, AGetWithBodyProgressReportsEachReadUpToTheContentLength) {
  const std::string body(1 << 20, 'b');
  HttpServer server([&](const HttpRequest&) { return HttpReply{200, "text/plain", body}; }, "127.0.0.1", 0);
  server.start();
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  HttpConnection connection("127.0.0.1", server.port(), std::chrono::seconds(10), 2 << 20);
  auto answer = connection.get("/", [&](std::size_t received, std::size_t total) { calls.emplace_back(received, total); });
  ASSERT_TRUE(answer.ok()) << answer.error();
  EXPECT_EQ(answer->body, body);
  ASSERT_FALSE(calls.empty());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, body.size());
    if (i > 0) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
    }
  }
  EXPECT_EQ(calls.back().first, body.size());

  calls.clear();
  HttpConnection small("127.0.0.1", server.port(), std::chrono::seconds(10), 1000);
  auto refused = small.get("/", [&](std::size_t received, std::size_t total) { calls.emplace_back(received, total); });
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(calls.empty());
  // The same connection answers the next exchange without a progress callback too.
  auto again = connection.get("/");
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->body.size(), body.size());
  server.stop();
}

}  // namespace
}  // namespace cowboy::net
