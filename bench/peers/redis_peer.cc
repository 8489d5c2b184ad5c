// Redis Streams with `appendonly yes` and `appendfsync always` (fsync before a
// write's reply), driven through hiredis: XADD pipelined per connection,
// XREADGROUP + one XACK per record for competing consumers, XREAD BLOCK for a
// live subscriber. One thread per connection (hiredis is synchronous).
#include <hiredis/hiredis.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "../../tests/support/process.h"
#include "peer.h"

namespace cowboy::bench::peers {
namespace {

using Reply = std::unique_ptr<redisReply, decltype(&freeReplyObject)>;

class RedisPeer final : public Peer {
 public:
  std::string name() const override { return "Redis Streams"; }
  std::string durability() const override { return "AOF appendfsync always"; }
  std::string ack_durability() const override { return "XACK answered after its AOF fsync"; }

  bool start(const std::filesystem::path& dir) override {
    port_ = free_port();
    child_ = std::make_unique<testing::ChildProcess>(std::vector<std::string>{
        "/usr/bin/redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--dir", dir.string(),
        "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile", (dir / "redis.log").string(),
        "--protected-mode", "no"});
    return eventually(
        [&] {
          auto c = connect();
          Reply r(c ? static_cast<redisReply*>(redisCommand(c.get(), "PING")) : nullptr, freeReplyObject);
          return r && r->type == REDIS_REPLY_STATUS;
        },
        std::chrono::seconds(5));
  }
  void stop() override { child_.reset(); }

  Sample append(const AppendLoad& load) override {
    std::string key = next_key();
    return on_each_connection(load, [&](Clock::time_point start, Clock::time_point end) {
      std::vector<double> mine;
      auto c = connect();
      if (!c) return mine;
      std::string payload(load.payload, 'x');
      std::deque<std::uint64_t> sent;
      std::uint64_t n = 0;
      double rate = load.rate / load.connections;
      while (true) {
        auto now = Clock::now();
        while (now < end && sent.size() < static_cast<std::size_t>(load.window) && (rate == 0 || due(start, n, rate) <= now)) {
          redisAppendCommand(c.get(), "XADD %s * d %b", key.c_str(), payload.data(), payload.size());
          sent.push_back(now_ns());
          ++n;
        }
        if (sent.empty()) {
          if (now >= end) break;
          std::this_thread::sleep_until(due(start, n, rate));
          continue;
        }
        redisReply* raw = nullptr;
        if (redisGetReply(c.get(), reinterpret_cast<void**>(&raw)) != REDIS_OK) break;
        Reply r(raw, freeReplyObject);
        if (r->type != REDIS_REPLY_ERROR) mine.push_back(ms_since(sent.front()));
        sent.pop_front();
      }
      return mine;
    });
  }

  Sample drain(int workers, std::uint64_t records, std::size_t payload) override {
    std::string key = next_key();
    fill(key, records, payload);
    auto c = connect();
    if (!c) return std::fprintf(stderr, "Redis: the drain could not connect\n"), Sample{};
    Reply created(static_cast<redisReply*>(redisCommand(c.get(), "XGROUP CREATE %s g 0", key.c_str())), freeReplyObject);
    std::atomic<std::uint64_t> acked{0};
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        auto wc = connect();
        if (!wc) return void(std::fprintf(stderr, "Redis: a drain worker could not connect\n"));
        std::string consumer = "w" + std::to_string(w);
        while (acked.load() < records) {
          Reply r(static_cast<redisReply*>(redisCommand(wc.get(), "XREADGROUP GROUP g %s COUNT 100 BLOCK 100 STREAMS %s >",
                                                        consumer.c_str(), key.c_str())),
                  freeReplyObject);
          if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) continue;
          const redisReply* entries = r->element[0]->element[1];
          for (std::size_t i = 0; i < entries->elements; ++i)  // one explicit XACK per record, pipelined
            redisAppendCommand(wc.get(), "XACK %s g %s", key.c_str(), entries->element[i]->element[0]->str);
          for (std::size_t i = 0; i < entries->elements; ++i) {
            redisReply* raw = nullptr;
            if (redisGetReply(wc.get(), reinterpret_cast<void**>(&raw)) != REDIS_OK) return;
            Reply ack(raw, freeReplyObject);
            if (ack->type == REDIS_REPLY_INTEGER && ack->integer == 1) ++acked;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    return Sample::since(start, acked.load());
  }

  Sample delivery(double rate, double secs, std::size_t payload) override {
    std::string key = next_key();
    std::atomic<bool> done{false};
    Sample s;
    std::thread subscriber([&] {
      auto c = connect();
      std::string last = "$";
      while (!done) {
        Reply r(static_cast<redisReply*>(redisCommand(c.get(), "XREAD COUNT 100 BLOCK 100 STREAMS %s %s", key.c_str(), last.c_str())),
                freeReplyObject);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements == 0) continue;
        const redisReply* entries = r->element[0]->element[1];
        for (std::size_t i = 0; i < entries->elements; ++i) {
          const redisReply* fields = entries->element[i]->element[1];
          std::uint64_t sent = 0;
          std::memcpy(&sent, fields->element[1]->str, sizeof sent);
          s.latencies_ms.push_back(ms_since(sent));
          last = entries->element[i]->element[0]->str;
        }
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the subscriber is blocked in XREAD
    auto c = connect();
    std::string body(std::max<std::size_t>(payload, 8), 'x');
    auto start = Clock::now();
    for (std::uint64_t n = 0; Clock::now() < start + seconds(secs); ++n) {
      std::this_thread::sleep_until(due(start, n, rate));
      std::uint64_t t = now_ns();
      std::memcpy(body.data(), &t, sizeof t);
      Reply r(static_cast<redisReply*>(redisCommand(c.get(), "XADD %s * d %b", key.c_str(), body.data(), body.size())),
              freeReplyObject);
      ++s.operations;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    done = true;
    subscriber.join();
    s.seconds = secs;
    return s;
  }

 private:
  std::unique_ptr<redisContext, decltype(&redisFree)> connect() {
    std::unique_ptr<redisContext, decltype(&redisFree)> c(redisConnect("127.0.0.1", port_), redisFree);
    if (c && c->err) c.reset();
    return c;
  }
  std::string next_key() { return "s" + std::to_string(++keys_); }
  void fill(const std::string& key, std::uint64_t records, std::size_t payload) {
    auto c = connect();
    if (!c) return void(std::fprintf(stderr, "Redis: the fill could not connect\n"));
    std::string body(payload, 'x');
    constexpr std::uint64_t kWindow = 1'000;
    for (std::uint64_t sent = 0, answered = 0; answered < records;) {
      while (sent < records && sent - answered < kWindow) {
        redisAppendCommand(c.get(), "XADD %s * d %b", key.c_str(), body.data(), body.size());
        ++sent;
      }
      redisReply* raw = nullptr;
      if (redisGetReply(c.get(), reinterpret_cast<void**>(&raw)) != REDIS_OK) return;
      freeReplyObject(raw);
      ++answered;
    }
  }

  std::uint16_t port_ = 0;
  int keys_ = 0;
  std::unique_ptr<testing::ChildProcess> child_;
};

}  // namespace

std::unique_ptr<Peer> make_redis() { return std::make_unique<RedisPeer>(); }

}  // namespace cowboy::bench::peers
