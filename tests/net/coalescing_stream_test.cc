// The write-behind layer under cbqsd's TLS: every byte arrives, in order,
// whatever the burst; a burst leaves in fewer socket writes than it has
// messages; drain waits for the bytes to leave.
#include "net/coalescing_stream.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace cowboy::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Pair {
  asio::io_context io;
  tcp::socket reader{io};
  std::unique_ptr<CoalescingStream<boost::beast::tcp_stream>> writer;

  Pair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    reader = acceptor.accept();
    writer = std::make_unique<CoalescingStream<boost::beast::tcp_stream>>(std::move(client));
  }
};

TEST(CoalescingStream, ABurstOfWritesArrivesWholeAndInOrder) {
  Pair p;
  constexpr int kMessages = 1'000;
  std::string expected;
  int completed = 0;
  // Each write starts when the previous one completes, as Beast's write queue does.
  std::vector<std::string> messages;
  for (int i = 0; i < kMessages; ++i) messages.push_back("message-" + std::to_string(i) + ";");
  for (const auto& m : messages) expected += m;
  std::function<void(int)> write_next = [&](int i) {
    if (i == kMessages) return;
    asio::async_write(*p.writer, asio::buffer(messages[i]), [&, i](boost::beast::error_code ec, std::size_t n) {
      ASSERT_FALSE(ec);
      EXPECT_EQ(n, messages[i].size());
      ++completed;
      write_next(i + 1);
    });
  };
  write_next(0);
  bool drained = false;
  p.io.run();  // every write completes; the flushes go out
  EXPECT_EQ(completed, kMessages);
  p.writer->async_drain([&](boost::beast::error_code ec) {
    EXPECT_FALSE(ec);
    drained = true;
  });
  p.io.restart();
  p.io.run();
  EXPECT_TRUE(drained);
  EXPECT_LT(p.writer->flushes(), static_cast<std::uint64_t>(kMessages / 4)) << "the burst was not coalesced";
  std::string received(expected.size(), '\0');
  asio::read(p.reader, asio::buffer(received));
  EXPECT_EQ(received, expected);
}

TEST(CoalescingStream, WritesAfterAFailedFlushFailToo) {
  Pair p;
  p.reader.close();
  p.writer->next_layer().socket().shutdown(tcp::socket::shutdown_send);  // the next write fails
  std::string chunk(64 * 1024, 'x');
  boost::beast::error_code last;
  int failures = 0;
  std::function<void(int)> write_next = [&](int i) {
    if (i == 200) return;
    asio::async_write(*p.writer, asio::buffer(chunk), [&, i](boost::beast::error_code ec, std::size_t) {
      if (ec) {
        ++failures;
        last = ec;
        return;  // a writer stops at its first error
      }
      write_next(i + 1);
    });
  };
  write_next(0);
  p.io.run();
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(last);
}

}  // namespace
}  // namespace cowboy::net
