// NATS JetStream 2.9 with a file-store stream, driven through nats.c: async
// publishes with a bounded number pending per connection, a pull consumer
// (work-queue retention) for competing workers acking each message (pulled
// through NatsPull, not natsSubscription_Fetch: nats_pull.h), and a
// push consumer for a live subscriber. JetStream 2.9 does not fsync each
// message by default (it syncs the file store every two minutes), so its
// acknowledged appends are not durable against power loss the way cbqsd's and
// Redis's `appendfsync always` are; the table says so.
#include <nats/nats.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "../../tests/support/process.h"
#include "nats_pull.h"
#include "peer.h"

namespace cowboy::bench::peers {
namespace {

struct Connection {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  ~Connection() {
    if (js) jsCtx_Destroy(js);
    if (nc) natsConnection_Destroy(nc);
  }
};

// Latencies of one connection's async publishes, from the send time in each payload.
struct PublishStats {
  std::mutex m;
  std::vector<double> latencies_ms;
  std::vector<double> taken() {
    std::lock_guard lock(m);
    return std::move(latencies_ms);
  }
};

// The ack handler writes into PublishStats from the connection's own thread.
// Once every publish is acknowledged no handler is left to run; if the wait
// gives up, late acks may still arrive after the connection is destroyed
// (natsConnection_Destroy does not join that thread), so their target is left
// allocated instead of freed under a running handler. A bench process is short.
using OwnedStats = std::unique_ptr<PublishStats>;
bool all_acknowledged(jsCtx* js, OwnedStats& stats, std::int64_t max_wait_ms, const char* what) {
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = max_wait_ms;
  if (js_PublishAsyncComplete(js, &wait) == NATS_OK) return true;
  std::fprintf(stderr, "NATS: %s: not every publish acknowledged within %lld ms\n", what,
               static_cast<long long>(max_wait_ms));
  (void)stats.release();  // kept alive for late acks, see above
  return false;
}

void on_published(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr*, void* closure) {
  auto* stats = static_cast<PublishStats*>(closure);
  if (pa != nullptr && natsMsg_GetDataLength(msg) >= 8) {
    std::uint64_t sent = 0;
    std::memcpy(&sent, natsMsg_GetData(msg), sizeof sent);
    std::lock_guard lock(stats->m);
    stats->latencies_ms.push_back(ms_since(sent));
  }
  natsMsg_Destroy(msg);
}

class NatsPeer final : public Peer {
 public:
  std::string name() const override { return "NATS JetStream"; }
  std::string durability() const override { return "file store, no fsync per message (2.9 default)"; }
  std::string ack_durability() const override { return "natsMsg_Ack not confirmed, no fsync"; }

  bool start(const std::filesystem::path& dir) override {
    port_ = free_port();
    url_ = "nats://127.0.0.1:" + std::to_string(port_);
    child_ = std::make_unique<testing::ChildProcess>(std::vector<std::string>{
        "/usr/sbin/nats-server", "-a", "127.0.0.1", "-p", std::to_string(port_), "-js", "-sd", dir.string(), "-l",
        (dir / "nats.log").string()});
    return eventually(
        [&] {
          Connection c;
          return open(c, 1);
        },
        std::chrono::seconds(5));
  }
  void stop() override { child_.reset(); }

  Sample append(const AppendLoad& load) override {
    std::string subject = add_stream(js_LimitsPolicy).subject;
    return on_each_connection(load, [&](Clock::time_point start, Clock::time_point end) {
      auto stats = std::make_unique<PublishStats>();
      Connection c;
      if (!open(c, load.window, stats.get())) return std::vector<double>{};
      std::string payload(std::max<std::size_t>(load.payload, 8), 'x');
      double rate = load.rate / load.connections;
      for (std::uint64_t n = 0; Clock::now() < end; ++n) {
        if (rate > 0) std::this_thread::sleep_until(due(start, n, rate));
        std::uint64_t t = now_ns();
        std::memcpy(payload.data(), &t, sizeof t);
        js_PublishAsync(c.js, subject.c_str(), payload.data(), static_cast<int>(payload.size()), nullptr);
      }
      PublishStats* target = stats.get();
      all_acknowledged(c.js, stats, 30'000, "append");
      return target->taken();
    });
  }

  Sample drain(int workers, std::uint64_t records, std::size_t payload) override {
    Stream stream = add_stream(js_WorkQueuePolicy);
    {
      auto stats = std::make_unique<PublishStats>();
      Connection c;
      open(c, 1'000, stats.get());
      std::string body(std::max<std::size_t>(payload, 8), 'x');
      for (std::uint64_t i = 0; i < records; ++i)
        js_PublishAsync(c.js, stream.subject.c_str(), body.data(), static_cast<int>(body.size()), nullptr);
      all_acknowledged(c.js, stats, 60'000, "drain fill");
    }
    // One durable pull consumer shared by every worker: they compete for its messages.
    if (!add_pull_consumer(stream, "workers")) return {};
    std::atomic<std::uint64_t> acked{0};
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        Connection c;
        if (!open(c, 1)) return void(std::fprintf(stderr, "NATS: a drain worker could not connect\n"));
        NatsPull pull;  // not natsSubscription_Fetch: nats_pull.h says why
        if (!pull.open(c.nc, stream.name, "workers")) return void(std::fprintf(stderr, "NATS: a drain worker could not subscribe\n"));
        for (int idle = 0; acked.load() < records && idle < 100;) {  // 10 s without a record: give up, as RabbitMQ's
          int n = pull.pull_and_ack(100, std::chrono::milliseconds(100));
          idle = n > 0 ? 0 : idle + 1;
          acked += static_cast<std::uint64_t>(n);
        }
      });
    }
    for (auto& t : threads) t.join();
    return Sample::since(start, acked.load());
  }

  Sample delivery(double rate, double secs, std::size_t payload) override {
    std::string subject = add_stream(js_LimitsPolicy).subject;
    Connection sc;
    open(sc, 1);
    struct Received {
      std::mutex m;
      std::vector<double> ms;
    } received;
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Config.DeliverPolicy = js_DeliverNew;
    so.Config.AckPolicy = js_AckNone;
    natsSubscription* sub = nullptr;
    jsErrCode jerr;
    js_Subscribe(
        &sub, sc.js, subject.c_str(),
        [](natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
          auto* r = static_cast<Received*>(closure);
          if (natsMsg_GetDataLength(msg) >= 8) {
            std::uint64_t sent = 0;
            std::memcpy(&sent, natsMsg_GetData(msg), sizeof sent);
            std::lock_guard lock(r->m);
            r->ms.push_back(ms_since(sent));
          }
          natsMsg_Destroy(msg);
        },
        &received, nullptr, &so, &jerr);
    auto stats = std::make_unique<PublishStats>();
    Connection pc;
    open(pc, 64, stats.get());
    std::string body(std::max<std::size_t>(payload, 8), 'x');
    Sample s;
    auto start = Clock::now();
    for (std::uint64_t n = 0; Clock::now() < start + seconds(secs); ++n) {
      std::this_thread::sleep_until(due(start, n, rate));
      std::uint64_t t = now_ns();
      std::memcpy(body.data(), &t, sizeof t);
      js_PublishAsync(pc.js, subject.c_str(), body.data(), static_cast<int>(body.size()), nullptr);
      ++s.operations;
    }
    all_acknowledged(pc.js, stats, 30'000, "delivery");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (sub) {
      natsSubscription_Unsubscribe(sub);
      natsSubscription_Destroy(sub);
    }
    std::lock_guard lock(received.m);
    s.latencies_ms = received.ms;
    s.seconds = secs;
    return s;
  }

 private:
  bool open(Connection& c, int max_pending, PublishStats* stats = nullptr) {
    if (natsConnection_ConnectTo(&c.nc, url_.c_str()) != NATS_OK) return false;
    jsOptions o;
    jsOptions_Init(&o);
    o.PublishAsync.MaxPending = max_pending;
    o.PublishAsync.StallWait = 60'000;
    if (stats) {
      o.PublishAsync.AckHandler = on_published;
      o.PublishAsync.AckHandlerClosure = stats;
    }
    return natsConnection_JetStream(&c.js, c.nc, &o) == NATS_OK;
  }
  struct Stream {
    std::string name, subject;
  };
  // A fresh file-store stream with one subject.
  Stream add_stream(jsRetentionPolicy retention) {
    ++streams_;
    Stream stream{"S" + std::to_string(streams_), "s" + std::to_string(streams_)};
    Connection c;
    if (!open(c, 1)) return stream;
    const char* subjects[] = {stream.subject.c_str()};
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = stream.name.c_str();
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = retention;
    jsStreamInfo* si = nullptr;
    jsErrCode jerr;
    if (js_AddStream(&si, c.js, &cfg, nullptr, &jerr) == NATS_OK) jsStreamInfo_Destroy(si);
    return stream;
  }
  // A durable pull consumer with explicit acks (what js_PullSubscribe created before NatsPull).
  bool add_pull_consumer(const Stream& stream, const char* durable) {
    Connection c;
    if (!open(c, 1)) return false;
    jsConsumerConfig cfg;
    jsConsumerConfig_Init(&cfg);
    cfg.Durable = durable;
    cfg.AckPolicy = js_AckExplicit;
    cfg.FilterSubject = stream.subject.c_str();
    jsConsumerInfo* ci = nullptr;
    jsErrCode jerr;
    if (js_AddConsumer(&ci, c.js, stream.name.c_str(), &cfg, nullptr, &jerr) != NATS_OK) {
      std::fprintf(stderr, "NATS: AddConsumer %s: %d\n", durable, static_cast<int>(jerr));
      return false;
    }
    jsConsumerInfo_Destroy(ci);
    return true;
  }

  std::uint16_t port_ = 0;
  std::string url_;
  int streams_ = 0;
  std::unique_ptr<testing::ChildProcess> child_;
};

}  // namespace

std::unique_ptr<Peer> make_nats() { return std::make_unique<NatsPeer>(); }

}  // namespace cowboy::bench::peers
