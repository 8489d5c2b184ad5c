// RabbitMQ 3.10 (Debian's rabbitmq-server) with quorum queues and publisher
// confirms, driven through rabbitmq-c (librabbitmq): a quorum queue confirms a
// publish once its Raft log entry is in the write-ahead log and the WAL is
// fdatasync'ed (one node here, so that node's disk is the quorum), the same
// contract as cbqsd's synced batch before Appended. Competing consumers take
// deliveries with manual acks and a prefetch of 100 (Redis reads COUNT 100,
// NATS fetches 100); a consumer's basic.ack is not confirmed by the server.
//
// The server is private to the bench: its own epmd (the Erlang port mapper,
// started first as a child so that the node does not daemonize one), node
// name, data, log and config files in the run's directory, AMQP and
// distribution listeners on 127.0.0.1. Both are children started by
// testing::ChildProcess (SIGKILL at stop, or when the bench dies); the
// rabbitmq-server script `exec`s erl when RABBITMQ_ALLOW_INPUT is set, so the
// child's PID is the node itself and nothing else is left running.
#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "../../tests/support/process.h"
#include "peer.h"

namespace cowboy::bench::peers {
namespace {

constexpr const char* kServer = "/usr/lib/rabbitmq/bin/rabbitmq-server";
constexpr const char* kEpmd = "/usr/bin/epmd";
constexpr amqp_channel_t kChannel = 1;
constexpr std::uint16_t kPrefetch = 100;

bool normal(const amqp_rpc_reply_t& r) { return r.reply_type == AMQP_RESPONSE_NORMAL; }

// One AMQP connection with channel 1 open; rabbitmq-c connections are not
// thread-safe, so each thread has its own (as hiredis's).
class Connection {
 public:
  Connection() : conn_(amqp_new_connection()) {}
  ~Connection() {
    if (open_) {
      amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
    amqp_destroy_connection(conn_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool open(std::uint16_t port) {
    amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
    if (socket == nullptr || amqp_socket_open(socket, "127.0.0.1", port) != AMQP_STATUS_OK) return false;
    if (!normal(amqp_login(conn_, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest"))) return false;
    amqp_channel_open(conn_, kChannel);
    open_ = normal(amqp_get_rpc_reply(conn_));
    return open_;
  }
  /// Publisher confirms on the channel: each publish is answered by basic.ack (or nack).
  bool confirm() {
    amqp_confirm_select(conn_, kChannel);
    return normal(amqp_get_rpc_reply(conn_));
  }
  bool publish(const std::string& queue, const std::string& body) {
    amqp_basic_properties_t props{};
    props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
    props.delivery_mode = 2;  // persistent (a quorum queue's messages always are)
    amqp_bytes_t bytes{body.size(), const_cast<char*>(body.data())};
    return amqp_basic_publish(conn_, kChannel, amqp_empty_bytes, amqp_cstring_bytes(queue.c_str()), 0, 0, &props,
                              bytes) == AMQP_STATUS_OK;
  }
  amqp_connection_state_t get() const { return conn_; }

 private:
  amqp_connection_state_t conn_;
  bool open_ = false;
};

timeval to_timeval(Clock::duration d) {
  auto us = std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(d).count());
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// Publishes on `c` (confirms on) at `rate`/s (0: as fast as `window` allows)
// until `end` or `limit` publishes, then waits for every confirm; the
// latencies of the confirmed ones (publish -> basic.ack). `stamp` writes the
// send time into the body's first 8 bytes, for a subscriber's delivery latency.
std::vector<double> publish_confirmed(Connection& c, const std::string& queue, std::size_t payload, int window,
                                      double rate, Clock::time_point start, Clock::time_point end,
                                      std::uint64_t limit, bool stamp) {
  std::vector<double> ms;
  std::string body(std::max<std::size_t>(payload, 8), 'x');
  std::map<std::uint64_t, std::uint64_t> sent;  // delivery tag (1, 2, ... on the channel) -> send time
  std::uint64_t n = 0;
  while (true) {
    auto now = Clock::now();
    while (now < end && n < limit && sent.size() < static_cast<std::size_t>(window) &&
           (rate == 0 || due(start, n, rate) <= now)) {
      std::uint64_t t = now_ns();
      if (stamp) std::memcpy(body.data(), &t, sizeof t);
      if (!c.publish(queue, body)) return ms;
      sent.emplace(++n, t);
    }
    bool sending = now < end && n < limit;
    if (sent.empty()) {
      if (!sending) break;
      std::this_thread::sleep_until(due(start, n, rate));
      continue;
    }
    // A confirm, waiting no longer than the next publish is due (and 30 s at most).
    bool paced = sending && rate > 0 && sent.size() < static_cast<std::size_t>(window);
    timeval tv = to_timeval(paced ? due(start, n, rate) - now : std::chrono::seconds(30));
    amqp_frame_t frame;
    int status = amqp_simple_wait_frame_noblock(c.get(), &frame, &tv);
    if (status == AMQP_STATUS_TIMEOUT && paced) continue;
    if (status != AMQP_STATUS_OK) break;
    if (frame.frame_type != AMQP_FRAME_METHOD) continue;
    std::uint64_t tag = 0;
    bool multiple = false, acked = false;
    if (frame.payload.method.id == AMQP_BASIC_ACK_METHOD) {
      auto* a = static_cast<amqp_basic_ack_t*>(frame.payload.method.decoded);
      tag = a->delivery_tag, multiple = a->multiple, acked = true;
    } else if (frame.payload.method.id == AMQP_BASIC_NACK_METHOD) {
      auto* a = static_cast<amqp_basic_nack_t*>(frame.payload.method.decoded);
      tag = a->delivery_tag, multiple = a->multiple;
    } else {
      break;  // a channel or connection close: the server refused something
    }
    auto last = sent.upper_bound(tag);
    for (auto it = multiple ? sent.begin() : sent.find(tag); it != sent.end() && it != last;) {
      if (acked) ms.push_back(ms_since(it->second));
      it = sent.erase(it);
      if (!multiple) break;
    }
    amqp_maybe_release_buffers(c.get());  // the frame was decoded into the connection's pool
  }
  return ms;
}

class RabbitPeer final : public Peer {
 public:
  explicit RabbitPeer(RabbitPorts ports) : ports_(ports) {}
  std::string name() const override { return "RabbitMQ"; }
  std::string durability() const override { return "quorum queue, WAL fdatasync before publisher confirm"; }
  std::string ack_durability() const override { return "basic.ack (prefetch 100) not confirmed by the server"; }

  bool start(const std::filesystem::path& dir) override {
    if (!rabbitmq_installed()) return false;
    if (ports_.amqp == 0) {
      auto p = testing::free_ports(SOCK_STREAM, 3);
      ports_ = RabbitPorts{p[0], p[1], p[2]};
    }
    std::ofstream(dir / "enabled_plugins") << "[].\n";  // no management plugin, nothing from /etc
    std::ofstream(dir / "rabbitmq.conf") << "log.console = false\nlog.file.level = warning\n";
    std::ofstream(dir / "rabbitmq-env.conf");  // instead of /etc/rabbitmq/rabbitmq-env.conf
    epmd_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{kEpmd, "-address", "127.0.0.1", "-port", std::to_string(ports_.epmd)},
        (dir / "epmd.log").string());
    // The node must find this epmd listening, or it starts a daemon of its own.
    if (!eventually([&] { return !testing::bindable(ports_.epmd) || epmd_->exited(); }, std::chrono::seconds(5)) ||
        epmd_->exited())
      return false;
    std::string d = dir.string();
    node_ = "cbqsbench" + std::to_string(::getpid()) + "@localhost";
    rabbit_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{
            "/usr/bin/env", "HOME=" + d,  // the Erlang cookie goes here
            "ERL_EPMD_PORT=" + std::to_string(ports_.epmd), "RABBITMQ_ALLOW_INPUT=true",  // exec erl: one PID
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-noinput -kernel inet_dist_use_interface {127,0,0,1}",
            "RABBITMQ_NODENAME=" + node_, "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
            "RABBITMQ_NODE_PORT=" + std::to_string(ports_.amqp), "RABBITMQ_DIST_PORT=" + std::to_string(ports_.dist),
            "RABBITMQ_CONF_ENV_FILE=" + d + "/rabbitmq-env.conf", "RABBITMQ_CONFIG_FILE=" + d + "/rabbitmq.conf",
            "RABBITMQ_ENABLED_PLUGINS_FILE=" + d + "/enabled_plugins", "RABBITMQ_MNESIA_BASE=" + d + "/mnesia",
            "RABBITMQ_LOG_BASE=" + d + "/log", "RABBITMQ_LOGS=" + d + "/log/rabbit.log",
            "RABBITMQ_PID_FILE=" + d + "/rabbit.pid",
            // The banner goes to a file: nobody reads the child's stdout pipe after start.
            "/bin/sh", "-c", "exec " + std::string(kServer) + " > \"$HOME/rabbitmq.stdout\""},
        (dir / "rabbitmq.stderr").string());
    // Erlang boots in several seconds on two loaded cores.
    return eventually(
        [&] {
          if (rabbit_->exited()) return true;
          Connection c;
          return c.open(ports_.amqp);
        },
        std::chrono::seconds(90)) &&
           !rabbit_->exited();
  }
  // SIGTERM first: erl stops the node (init:stop) and its port programs
  // (erl_child_setup, inet_gethost) exit with it; SIGKILL after 20 s.
  void stop() override {
    if (rabbit_ && rabbit_->started() && !rabbit_->exited()) {
      ::kill(rabbit_->pid(), SIGTERM);
      eventually([&] { return rabbit_->exited().has_value(); }, std::chrono::seconds(20));
    }
    rabbit_.reset();
    epmd_.reset();
  }

  Sample append(const AppendLoad& load) override {
    std::string queue = declare_queue();
    Sample s = on_each_connection(load, [&](Clock::time_point start, Clock::time_point end) {
      Connection c;
      if (!c.open(ports_.amqp) || !c.confirm()) return std::vector<double>{};
      return publish_confirmed(c, queue, load.payload, load.window, load.rate / load.connections, start, end,
                               std::numeric_limits<std::uint64_t>::max(), false);
    });
    delete_queue(queue);  // a quorum queue holds its messages in memory
    return s;
  }

  Sample drain(int workers, std::uint64_t records, std::size_t payload) override {
    std::string queue = declare_queue();
    {
      Connection c;
      if (!c.open(ports_.amqp) || !c.confirm()) return {};
      auto now = Clock::now();
      records = publish_confirmed(c, queue, payload, 1'000, 0, now, Clock::time_point::max(), records, false).size();
    }
    std::atomic<std::uint64_t> acked{0};
    std::atomic<std::int64_t> last_ack{0};  // when the last record was acked, ns after start
    auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        Connection c;
        if (!c.open(ports_.amqp)) return;
        amqp_basic_qos(c.get(), kChannel, 0, kPrefetch, 0);
        amqp_basic_consume(c.get(), kChannel, amqp_cstring_bytes(queue.c_str()), amqp_empty_bytes, 0, 0 /*manual acks*/,
                           0, amqp_empty_table);
        if (!normal(amqp_get_rpc_reply(c.get()))) return;
        for (int idle = 0; acked.load() < records && idle < 100;) {  // 10 s without a delivery: give up
          amqp_envelope_t envelope;
          timeval tv{0, 100'000};
          amqp_maybe_release_buffers(c.get());
          amqp_rpc_reply_t r = amqp_consume_message(c.get(), &envelope, &tv, 0);
          if (!normal(r)) {
            if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT) {
              ++idle;
              continue;
            }
            return;
          }
          idle = 0;
          // A delivery after every record is acked is a redelivery: a consumer
          // that closed its channel right after its last basic.ack can have
          // that record returned to the queue (seen in the test), as acks are
          // not confirmed. It is not acked or counted again.
          if (acked.load() >= records) {
            amqp_destroy_envelope(&envelope);
            break;
          }
          // One explicit ack per record, as XACK and natsMsg_Ack.
          if (amqp_basic_ack(c.get(), kChannel, envelope.delivery_tag, 0) == AMQP_STATUS_OK && ++acked == records)
            last_ack = (Clock::now() - start).count();
          amqp_destroy_envelope(&envelope);
        }
      });
    }
    for (auto& t : threads) t.join();
    delete_queue(queue);
    Sample s;
    s.operations = acked.load();
    s.seconds = last_ack.load() > 0 ? std::chrono::duration<double>(Clock::duration(last_ack.load())).count()
                                    : std::chrono::duration<double>(Clock::now() - start).count();
    return s;
  }

  Sample delivery(double rate, double secs, std::size_t payload) override {
    std::string queue = declare_queue();
    std::atomic<bool> done{false}, subscribed{false};
    Sample s;
    std::thread subscriber([&] {
      Connection c;
      if (!c.open(ports_.amqp)) return;
      amqp_basic_consume(c.get(), kChannel, amqp_cstring_bytes(queue.c_str()), amqp_empty_bytes, 0, 1 /*no ack*/, 0,
                         amqp_empty_table);
      subscribed = normal(amqp_get_rpc_reply(c.get()));
      while (subscribed && !done) {
        amqp_envelope_t envelope;
        timeval tv{0, 100'000};
        amqp_maybe_release_buffers(c.get());
        amqp_rpc_reply_t r = amqp_consume_message(c.get(), &envelope, &tv, 0);
        if (!normal(r)) {
          if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT) continue;
          return;
        }
        if (envelope.message.body.len >= 8) {
          std::uint64_t sent = 0;
          std::memcpy(&sent, envelope.message.body.bytes, sizeof sent);
          s.latencies_ms.push_back(ms_since(sent));
        }
        amqp_destroy_envelope(&envelope);
      }
    });
    eventually([&] { return subscribed.load(); }, std::chrono::seconds(5));
    {
      Connection c;
      if (c.open(ports_.amqp) && c.confirm()) {
        auto start = Clock::now();
        s.ack_latencies_ms = publish_confirmed(c, queue, payload, 64, rate, start, start + seconds(secs),
                                               std::numeric_limits<std::uint64_t>::max(), true);
        s.operations = s.ack_latencies_ms.size();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    done = true;
    subscriber.join();
    delete_queue(queue);
    s.seconds = secs;
    return s;
  }

 private:
  // A fresh durable quorum queue (one member: this node).
  std::string declare_queue() {
    std::string name = "q" + std::to_string(++queues_);
    Connection c;
    if (!c.open(ports_.amqp)) return name;
    amqp_table_entry_t type{};
    type.key = amqp_cstring_bytes("x-queue-type");
    type.value.kind = AMQP_FIELD_KIND_UTF8;
    type.value.value.bytes = amqp_cstring_bytes("quorum");
    amqp_table_t args{1, &type};
    amqp_queue_declare(c.get(), kChannel, amqp_cstring_bytes(name.c_str()), 0, 1 /*durable*/, 0, 0, args);
    return name;
  }
  void delete_queue(const std::string& name) {
    Connection c;
    if (c.open(ports_.amqp)) amqp_queue_delete(c.get(), kChannel, amqp_cstring_bytes(name.c_str()), 0, 0);
  }

  RabbitPorts ports_;
  std::string node_;
  int queues_ = 0;
  std::unique_ptr<testing::ChildProcess> epmd_, rabbit_;
};

}  // namespace

bool rabbitmq_installed() { return ::access(kServer, X_OK) == 0 && ::access(kEpmd, X_OK) == 0; }

std::unique_ptr<Peer> make_rabbitmq(RabbitPorts ports) { return std::make_unique<RabbitPeer>(ports); }

}  // namespace cowboy::bench::peers
