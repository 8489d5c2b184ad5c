// WssChannel over real TLS on loopback: messages of every size arrive whole
// and in order both ways; a raw TLS client checks the upgrade, pings,
// fragments, pausing and each refusal's close code byte for byte.
#include "net/wss_channel.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <sys/socket.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "net/dev_cert.h"
#include "../support/poll.h"
#include "../support/temp_dir.h"

namespace cowboy::net {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using testing::eventually;

constexpr std::uint64_t kMaxMessage = 1 << 20;

// What a channel saw, readable from the test thread.
struct Seen {
  std::mutex m;
  std::vector<Bytes> messages;
  bool opened = false;
  std::optional<std::string> closed;
  std::optional<ws::CloseCode> refused;
  std::size_t count() {
    std::lock_guard lock(m);
    return messages.size();
  }
  bool is_closed() {
    std::lock_guard lock(m);
    return closed.has_value();
  }
};

class Recorder final : public WssChannel {
 public:
  Recorder(tcp::socket s, SSL_CTX* tls, Role role, Seen& seen, bool echo, bool pause_after_first = false,
           ReadBudget* budget = nullptr)
      : WssChannel(std::move(s), tls, role,
                   {.max_message_bytes = kMaxMessage, .handshake_timeout = std::chrono::seconds(5), .read_budget = budget}),
        seen_(seen), echo_(echo), pause_after_first_(pause_after_first) {}

 private:
  void on_open() override {
    std::lock_guard lock(seen_.m);
    seen_.opened = true;
  }
  void on_message(ByteView m) override {
    {
      std::lock_guard lock(seen_.m);
      seen_.messages.emplace_back(m.begin(), m.end());
    }
    if (echo_) send(m);
    if (pause_after_first_) {
      pause_after_first_ = false;
      pause_reading();
    }
  }
  void on_closed(const std::string& why) override {
    std::lock_guard lock(seen_.m);
    seen_.closed = why;
  }
  void on_refused(ws::CloseCode code) override {
    std::lock_guard lock(seen_.m);
    seen_.refused = code;
  }

  Seen& seen_;
  bool echo_;
  bool pause_after_first_;
};

// A server channel per accepted connection, on an io thread of its own.
class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cert_ = *ensure_dev_certificate(dir_.path());
    server_tls_.use_certificate_chain_file(cert_.certificate.string());
    server_tls_.use_private_key_file(cert_.private_key.string(), ssl::context::pem);
    client_tls_.load_verify_file(cert_.certificate.string());
    client_tls_.set_verify_mode(ssl::verify_peer);
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket s) {
      if (ec) return;
      server_ = std::make_shared<Recorder>(std::move(s), server_tls_.native_handle(), WssChannel::Role::kServer,
                                           server_seen_, true, pause_server_, budget_.get());
      server_->accept();
    });
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    asio::post(io_, [this] {
      server_.reset();
      client_.reset();
      acceptor_.close();
      io_.stop();  // what is still pending dies with the io_context
    });
    thread_.join();
  }

  std::uint16_t port() { return acceptor_.local_endpoint().port(); }

  void start_client() {
    asio::post(io_, [this] {
      tcp::socket s(io_);
      s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port()));
      client_ = std::make_shared<Recorder>(std::move(s), client_tls_.native_handle(), WssChannel::Role::kClient,
                                           client_seen_, false);
      client_->set_server_name("127.0.0.1", true);
      client_->connect("127.0.0.1", "/");
    });
  }

  testing::TempDir dir_;
  CertFiles cert_;
  ssl::context server_tls_{ssl::context::tls_server};
  ssl::context client_tls_{ssl::context::tls_client};
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  tcp::acceptor acceptor_{io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::shared_ptr<Recorder> server_, client_;
  Seen server_seen_, client_seen_;
  bool pause_server_ = false;
  std::unique_ptr<ReadBudget> budget_;  // set before the client connects
  std::thread thread_;
};

Bytes numbered(std::size_t size, std::uint8_t seed) {
  Bytes b(size);
  for (std::size_t i = 0; i < size; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 31);
  return b;
}

TEST_F(ChannelTest, MessagesOfEverySizeArriveWholeAndInOrderBothWays) {
  start_client();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(client_seen_.m);
    return client_seen_.opened;
  }));
  std::vector<Bytes> sent;
  for (std::size_t size : {0, 1, 125, 126, 300, 16'383, 16'384, 65'535, 65'536, 200'000, 1 << 20})
    sent.push_back(numbered(size, static_cast<std::uint8_t>(size)));
  for (int i = 0; i < 2'000; ++i) sent.push_back(numbered(256, static_cast<std::uint8_t>(i)));
  // All queued in one turn: they leave as a burst of TLS records.
  asio::post(io_, [&] {
    for (const auto& m : sent) client_->send(m);
  });
  ASSERT_TRUE(eventually([&] { return client_seen_.count() == sent.size(); }));
  std::lock_guard lock(client_seen_.m);
  EXPECT_EQ(client_seen_.messages, sent);  // echoed by the server: every byte, in order
  std::lock_guard server_lock(server_seen_.m);
  EXPECT_EQ(server_seen_.messages, sent);
}

// A blocking TLS client that writes raw bytes: what a foreign client could send.
// A watchdog ends its socket after 20 s, so a broken server fails the test
// instead of hanging it.
class RawClient {
 public:
  RawClient(std::uint16_t port, ssl::context& tls) : stream_(io_, tls) {
    stream_.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    int fd = stream_.next_layer().native_handle();
    watchdog_ = std::thread([this, fd] {
      std::unique_lock lock(m_);
      if (!cv_.wait_for(lock, std::chrono::seconds(20), [this] { return done_; })) ::shutdown(fd, SHUT_RDWR);
    });
    stream_.handshake(ssl::stream_base::client);
  }
  ~RawClient() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    watchdog_.join();
  }
  void write(const std::string& text) { asio::write(stream_, asio::buffer(text)); }
  void write(const Bytes& bytes) { asio::write(stream_, asio::buffer(bytes)); }
  // Reads the HTTP answer's header block.
  std::string read_http() {
    std::string text;
    char c;
    while (text.find("\r\n\r\n") == std::string::npos && asio::read(stream_, asio::buffer(&c, 1)) == 1) text += c;
    return text;
  }
  Bytes read(std::size_t n) {
    Bytes b(n);
    asio::read(stream_, asio::buffer(b));
    return b;
  }
  void end() { stream_.next_layer().close(); }
  void upgrade() {
    write(std::string("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
    answer = read_http();
  }
  std::string answer;

 private:
  asio::io_context io_;
  ssl::stream<tcp::socket> stream_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread watchdog_;
};

Bytes client_frame(ws::Opcode op, const Bytes& payload, bool fin = true) {
  static const ws::Mask kMask{1, 2, 3, 4};
  Bytes out;
  ws::append_frame(out, op, payload, &kMask);
  if (!fin) out[0] &= 0x7F;
  return out;
}

TEST_F(ChannelTest, TheUpgradeAnswerCarriesTheRfcAcceptKey) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  EXPECT_EQ(c.answer.rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u) << c.answer;
  EXPECT_NE(c.answer.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string::npos) << c.answer;
}

TEST_F(ChannelTest, ARequestThatIsNotAnUpgradeGets400) {
  RawClient c(port(), client_tls_);
  c.write(std::string("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(c.read_http().rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u);
  c.end();  // the server waits (bounded) for our end of TCP
  EXPECT_TRUE(eventually([&] { return server_seen_.is_closed(); }));
}

TEST_F(ChannelTest, PingsAreAnsweredAndFragmentsReassembled) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  c.write(client_frame(ws::Opcode::kPing, Bytes{'H', 'e', 'l', 'l', 'o'}));
  EXPECT_EQ(c.read(7), (Bytes{0x8A, 0x05, 'H', 'e', 'l', 'l', 'o'}));  // the pong, unmasked
  Bytes a = numbered(100, 1), b = numbered(200, 2), d = numbered(3, 3);
  c.write(client_frame(ws::Opcode::kBinary, a, false));
  c.write(client_frame(ws::Opcode::kPing, Bytes{}));  // a control frame between fragments is allowed
  c.write(client_frame(ws::Opcode::kContinuation, b, false));
  c.write(client_frame(ws::Opcode::kContinuation, d, true));
  EXPECT_EQ(c.read(2), (Bytes{0x8A, 0x00}));
  Bytes whole = a;
  whole.insert(whole.end(), b.begin(), b.end());
  whole.insert(whole.end(), d.begin(), d.end());
  EXPECT_EQ(c.read(4), (Bytes{0x82, 0x7E, 0x01, 0x2F}));  // the echo: one message of 303 bytes
  EXPECT_EQ(c.read(303), whole);
  EXPECT_EQ(server_seen_.count(), 1u);
}

// Each refusal: the close frame with its code; our answering close ends the connection.
void expect_closed_with(RawClient& c, Seen& server, std::uint16_t code) {
  Bytes code_bytes{static_cast<std::uint8_t>(code >> 8), static_cast<std::uint8_t>(code)};
  EXPECT_EQ(c.read(4), (Bytes{0x88, 0x02, code_bytes[0], code_bytes[1]}));
  try {  // a server whose refused payload kept arriving may have ended the connection already
    c.write(client_frame(ws::Opcode::kClose, code_bytes));
  } catch (const boost::system::system_error&) {
  }
  EXPECT_TRUE(eventually([&] { return server.is_closed(); }));
  EXPECT_EQ(server.count(), 0u);
}

TEST_F(ChannelTest, ATextFrameIsClosedWith1003) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  c.write(client_frame(ws::Opcode::kText, Bytes{'h', 'i'}));
  expect_closed_with(c, server_seen_, 1003);
}

TEST_F(ChannelTest, AnUnmaskedClientFrameIsClosedWith1002) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  Bytes unmasked;
  ws::append_frame(unmasked, ws::Opcode::kBinary, Bytes{1, 2, 3}, nullptr);
  c.write(unmasked);
  expect_closed_with(c, server_seen_, 1002);
}

TEST_F(ChannelTest, AMessageAboveTheBoundIsClosedWith1009BeforeItsPayloadArrives) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  // Only the header of a 2 MiB frame: the refusal must not wait for (or buffer) the payload.
  c.write(Bytes{0x82, 0xFF, 0, 0, 0, 0, 0, 0x20, 0, 0, 1, 2, 3, 4});
  expect_closed_with(c, server_seen_, 1009);
}

TEST_F(ChannelTest, FragmentsAddingUpAboveTheBoundAreClosedWith1009) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  c.write(client_frame(ws::Opcode::kBinary, Bytes(kMaxMessage / 2 + 1), false));
  try {  // refused from its header: the server may close before this payload is all written
    c.write(client_frame(ws::Opcode::kContinuation, Bytes(kMaxMessage / 2 + 1), true));
  } catch (const boost::system::system_error&) {
  }
  expect_closed_with(c, server_seen_, 1009);
}

TEST_F(ChannelTest, AContinuationWhoseHeaderTakesTheMessageOverTheBoundIsClosedWith1009) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  c.write(client_frame(ws::Opcode::kBinary, Bytes(kMaxMessage / 2 + 1), false));
  // Only the continuation's header: the refusal is decided from it, not from its payload.
  Bytes header = client_frame(ws::Opcode::kContinuation, Bytes(kMaxMessage / 2 + 1), true);
  header.resize(2 + 8 + 4);  // FIN|op, 127, a 64-bit length, the mask
  c.write(header);
  expect_closed_with(c, server_seen_, 1009);
}

TEST_F(ChannelTest, ADeclaredLengthCostsOnlyTheBytesThatArrived) {
  RawClient c(port(), client_tls_);
  c.upgrade();
  // A header promising the whole bound, then 10 bytes of it.
  Bytes frame = client_frame(ws::Opcode::kBinary, Bytes(kMaxMessage), true);
  frame.resize(2 + 8 + 4 + 10);
  c.write(frame);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the 10 bytes are in
  std::promise<std::size_t> held;
  asio::post(io_, [&] { held.set_value(server_ ? server_->read_buffer_bytes() : SIZE_MAX); });
  EXPECT_LT(held.get_future().get(), 64u * 1024);  // not the promised 1 MiB
  EXPECT_FALSE(server_seen_.is_closed());
}

TEST_F(ChannelTest, AMessageTheReadBudgetCannotHoldIsRefusedWith1013) {
  budget_ = std::make_unique<ReadBudget>(256 * 1024);
  RawClient c(port(), client_tls_);
  c.upgrade();
  try {  // the whole bound: four times what the budget holds beyond the allowance
    c.write(client_frame(ws::Opcode::kBinary, numbered(kMaxMessage, 3), true));
  } catch (const boost::system::system_error&) {  // refused part way: the server stopped reading
  }
  ASSERT_TRUE(eventually([&] { return server_seen_.is_closed(); }));
  std::lock_guard lock(server_seen_.m);
  EXPECT_EQ(server_seen_.refused, ws::CloseCode::kTryAgainLater);
  EXPECT_TRUE(server_seen_.messages.empty());
  EXPECT_EQ(budget_->in_use(), 0u);  // everything given back
}

TEST_F(ChannelTest, ALargeMessageWithinTheBudgetArrivesAndGivesItsRoomBack) {
  budget_ = std::make_unique<ReadBudget>(3 * kMaxMessage);
  RawClient c(port(), client_tls_);
  c.upgrade();
  Bytes big = numbered(kMaxMessage, 5);
  c.write(client_frame(ws::Opcode::kBinary, Bytes(big.begin(), big.begin() + kMaxMessage / 2), false));
  c.write(client_frame(ws::Opcode::kContinuation, Bytes(big.begin() + kMaxMessage / 2, big.end()), true));
  ASSERT_TRUE(eventually([&] { return server_seen_.count() == 1; }));
  {
    std::lock_guard lock(server_seen_.m);
    EXPECT_EQ(server_seen_.messages[0], big);
  }
  ASSERT_TRUE(eventually([&] { return budget_->in_use() == 0; }));
}

TEST_F(ChannelTest, APausedChannelHandsOverNothingUntilResumed) {
  pause_server_ = true;
  RawClient c(port(), client_tls_);
  c.upgrade();
  Bytes burst;
  for (int i = 0; i < 10; ++i) {
    Bytes f = client_frame(ws::Opcode::kBinary, numbered(10, static_cast<std::uint8_t>(i)));
    burst.insert(burst.end(), f.begin(), f.end());
  }
  c.write(burst);  // ten messages, likely in one TLS record
  ASSERT_TRUE(eventually([&] { return server_seen_.count() >= 1; }));
  std::promise<std::size_t> while_paused;
  asio::post(io_, [&] { while_paused.set_value(server_seen_.count()); });  // after the read turn
  EXPECT_EQ(while_paused.get_future().get(), 1u);
  asio::post(io_, [&] { server_->resume_reading(); });
  EXPECT_TRUE(eventually([&] { return server_seen_.count() == 10; }));
}

}  // namespace
}  // namespace cowboy::net
