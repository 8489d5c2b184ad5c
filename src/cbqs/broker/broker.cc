#include "cbqs/broker/broker.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <condition_variable>
#include <future>
#include <thread>

#include "cbqs/wire/ids.h"
#include "cbqs/wire/limits.h"
#include "common/log.h"
#include "common/log_events.h"
#include "net/connection_slots.h"
#include "net/wss_channel.h"

namespace cowboy::cbqs::broker {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

// One client connection: the channel does TLS, the upgrade and the framing;
// this hands each binary message to the Core and stops reading while too much
// is queued for a peer that does not read (resumed once the queue drains).
class Connection final : public Peer, public net::WssChannel {
 public:
  // `peer` already holds a slot in `slots`; the connection gives it back when it dies.
  Connection(tcp::socket socket, asio::ip::address peer, ssl::context& tls, Core& core, net::ConnectionSlots& slots,
             net::ReadBudget& budget, const BrokerConfig& config, std::atomic<std::uint64_t>& read_pauses)
      : net::WssChannel(std::move(socket), tls.native_handle(), Role::kServer,
                        {.max_message_bytes = limits::kMaxPreSessionFrameBytes,
                         .handshake_timeout = std::chrono::seconds(10),
                         .read_budget = &budget}),
        peer_(std::move(peer)), core_(core), slots_(slots), config_(config), read_pauses_(read_pauses) {}
  ~Connection() override { slots_.give_back(peer_); }
  std::string remote_address() const override { return peer_.to_string(); }

  // The queue grows here, whoever answers (Core now, or an owner's frames
  // handed over later): past the high-water mark reading stops until it drains.
  void send(Bytes frame) override {
    net::WssChannel::send(frame);
    if (queued_bytes() > config_.write_high_water && !read_paused_) {  // resumed by on_written()
      read_paused_ = true;
      ++read_pauses_;
      pause_reading();
    }
  }
  void close() override { net::WssChannel::close(net::ws::CloseCode::kPolicy); }
  std::size_t queued_bytes() const override { return net::WssChannel::queued_bytes(); }
  void lift_frame_cap() override { set_max_message_bytes(limits::kMaxFrameBytes); }

 private:
  void on_open() override {
    id_ = core_.on_open(*this);
    opened_ = true;
  }
  void on_message(ByteView frame) override { core_.on_frame(id_, frame); }
  void on_written() override {
    if (opened_) core_.on_written(id_);
    if (read_paused_ && queued_bytes() <= config_.write_low_water) {
      read_paused_ = false;
      resume_reading();
    }
  }
  void on_refused(net::ws::CloseCode code) override {
    if (opened_) core_.on_frame_refused(id_, code == net::ws::CloseCode::kTooBig);
  }
  void on_closed(const std::string&) override {
    if (opened_) core_.on_close(id_);
    opened_ = false;
  }

  asio::ip::address peer_;
  Core& core_;
  net::ConnectionSlots& slots_;
  const BrokerConfig& config_;
  std::atomic<std::uint64_t>& read_pauses_;
  Core::ConnectionId id_ = 0;
  bool opened_ = false;
  bool read_paused_ = false;
};

}  // namespace

struct Broker::Impl {
  BrokerConfig config;
  store::Store& store;
  const Clock& clock;
  // Declared before io_context: handlers destroyed with it still reference them.
  net::ConnectionSlots slots{config.max_connections, config.max_connections_per_address};
  net::ReadBudget read_budget{config.read_budget_bytes};
  std::atomic<std::uint64_t> read_pauses{0};
  std::atomic<std::uint64_t> accept_errors{0};
  asio::io_context io{1};
  ssl::context tls{ssl::context::tls_server};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_pause{io};
  std::chrono::milliseconds accept_backoff{0};
  SnapshotSource snapshots;
  std::unique_ptr<Core> core;
  std::thread io_thread;
  std::thread refresher;
  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> listening{false};  // also read by /readyz on the admin thread

  Impl(BrokerConfig c, store::Store& s, SnapshotProvider& chain, const Clock& clk, Entropy& entropy)
      : config(std::move(c)), store(s), clock(clk),
        snapshots(chain, config.provider.address, clk, config.chain_block_ms) {
    CoreConfig core_config{config.provider};
    core_config.io_threads = config.io_threads;
    core = std::make_unique<Core>(io, std::move(core_config), store, snapshots, clock, entropy);
  }

  void accept() {
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return pause_accepting(ec);
      accept_backoff = std::chrono::milliseconds(0);
      boost::system::error_code no_peer;
      auto peer = socket.remote_endpoint(no_peer).address();
      if (no_peer || !slots.take(peer)) {
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        std::make_shared<Connection>(std::move(socket), peer, tls, *core, slots, read_budget, config, read_pauses)->accept();
      }
      accept();
    });
  }

  // accept(2) failed (EMFILE, ENFILE, ENOBUFS...): retrying at once would spin
  // a core while the listen queue holds the connection; wait 10 ms doubling
  // to 1 s, logging the first failure of a streak.
  void pause_accepting(const boost::system::error_code& ec) {
    ++accept_errors;
    if (accept_backoff.count() == 0)
      log::warn("accept_failed", log::field("why", ec.message()), log::field("connections", slots.live()));
    accept_backoff = std::clamp(accept_backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1'000));
    accept_pause.expires_after(accept_backoff);
    accept_pause.async_wait([this](boost::system::error_code e) {
      if (!e) accept();
    });
  }

  void refresh_loop() {
    std::unique_lock lock(mu);
    bool reachable = true;
    while (!stopping) {
      lock.unlock();
      auto refreshed = snapshots.refresh();  // a failure keeps the previous view; its age grows
      if (refreshed.ok() != reachable) {     // log transitions only
        reachable = refreshed.ok();
        if (reachable)
          log::info("chain_reachable", log::field("height", (*refreshed)->height));
        else
          log::warn("chain_unreachable", log::field("why", refreshed.error()));
      }
      ChainViewPtr view = snapshots.current();
      auto every = std::chrono::milliseconds(view ? view->params.snapshot_refresh_ms : 1'000);
      lock.lock();
      wake.wait_for(lock, every, [this] { return stopping; });
    }
  }
};

Broker::Broker(BrokerConfig config, store::Store& store, SnapshotProvider& chain, const Clock& clock,
               Entropy& entropy)
    : impl_(std::make_unique<Impl>(std::move(config), store, chain, clock, entropy)) {}

Broker::~Broker() { stop(); }

Result<Unit, std::string> Broker::start() {
  auto& i = *impl_;
  try {
    i.tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                      ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    i.tls.use_certificate_chain_file(i.config.tls_certificate.string());
    i.tls.use_private_key_file(i.config.tls_private_key.string(), ssl::context::pem);
    tcp::endpoint endpoint{asio::ip::make_address(i.config.host), i.config.port};
    i.acceptor.open(endpoint.protocol());
    i.acceptor.set_option(asio::socket_base::reuse_address(true));
    i.acceptor.bind(endpoint);
    i.acceptor.listen(asio::socket_base::max_listen_connections);
  } catch (const std::exception& e) {
    return Err{std::string("cannot start the wss listener: ") + e.what()};
  }
  (void)i.snapshots.refresh();
  i.listening = true;
  i.accept();
  i.io_thread = std::thread([&i] {
    pthread_setname_np(pthread_self(), "cbqs-io");
    i.io.run();
  });
  i.refresher = std::thread([&i] {
    pthread_setname_np(pthread_self(), "cbqs-snapshot");
    i.refresh_loop();
  });
  log::info(log::event::kListening, log::field("listener", "wss"), log::field("address", i.config.host + ":" + std::to_string(port())),
            log::field("provider", to_hex(i.config.provider.address)), log::field("snapshot_height", snapshot_height()));
  return Unit{};
}

void Broker::stop() {
  auto& i = *impl_;
  {
    std::lock_guard lock(i.mu);
    if (i.stopping) return;
    i.stopping = true;
  }
  i.wake.notify_all();
  if (i.refresher.joinable()) i.refresher.join();
  if (i.io_thread.joinable()) {
    // Finish the open batches before the loop stops: their appends get answers.
    std::promise<void> drained;
    asio::post(i.io, [&] {
      i.core->drain();
      boost::system::error_code ignored;
      i.acceptor.close(ignored);
      i.accept_pause.cancel();
      drained.set_value();
    });
    drained.get_future().wait();
    // Wait (bounded) for batches already at the committer to come back and be answered.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      std::promise<bool> idle;
      asio::post(i.io, [&] { idle.set_value(i.core->idle()); });
      if (idle.get_future().get()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    i.io.stop();
    i.io_thread.join();
  }
  i.listening = false;
}

std::uint16_t Broker::port() const { return impl_->acceptor.is_open() ? impl_->acceptor.local_endpoint().port() : 0; }

bool Broker::ready(std::string* why) const {
  auto& i = *impl_;
  auto say = [&](const char* reason) {
    if (why) *why = reason;
    return false;
  };
  if (!i.listening) return say("the wss listener is not bound");
  if (i.core->store_failed()) return say("the store failed; appends are refused");
  if (!i.snapshots.fresh()) return say("no snapshot within cbqs.max_snapshot_age_blocks");
  // Receipts are verified against the chain's current key (§10): signing with
  // any other would make every new checkpoint invalid.
  if (i.snapshots.current()->provider.signing_key != ed25519_public_key(i.config.provider.signing_seed))
    return say("the provider key does not match the chain's signing_key for this provider");
  return true;
}

double Broker::snapshot_age_seconds() const {
  std::uint64_t ms = impl_->snapshots.age_ms();
  return ms == UINT64_MAX ? -1.0 : static_cast<double>(ms) / 1'000.0;
}

std::uint64_t Broker::snapshot_height() const {
  ChainViewPtr view = impl_->snapshots.current();
  return view ? view->height : 0;
}

namespace {
// Runs `f` on the io thread (where the core lives) and waits for its result.
template <typename F>
auto on_io(asio::io_context& io, const std::thread& io_thread, F&& f) {
  if (!io_thread.joinable()) return f();
  std::promise<decltype(f())> p;
  asio::post(io, [&] { p.set_value(f()); });
  return p.get_future().get();
}

// Brings a stream in on the core's loader thread before an operator's view of
// it, so the view does not load it on the io thread.
void load_stream(asio::io_context& io, const std::thread& io_thread, Core& core, const Bytes32& stream_id) {
  if (!io_thread.joinable()) return;
  std::promise<void> loaded;
  asio::post(io, [&] { core.load(stream_id, [&] { loaded.set_value(); }); });
  loaded.get_future().wait();
}
}  // namespace

CoreMetrics Broker::metrics() const {
  auto& i = *impl_;
  CoreMetrics m = on_io(i.io, i.io_thread, [&] { return i.core->metrics(); });
  m.read_pauses = i.read_pauses.load();
  m.connections = i.slots.live();
  m.connection_limit = i.config.max_connections;
  m.connections_refused = i.slots.refused();
  m.accept_errors = i.accept_errors.load();
  m.read_budget_bytes = i.read_budget.limit();
  m.read_budget_in_use = i.read_budget.in_use();
  return m;
}

std::optional<std::vector<DeadLetter>> Broker::dead_letters(const Bytes32& stream_id, GroupId group_id,
                                                            Sequence after, std::size_t limit) {
  auto& i = *impl_;
  load_stream(i.io, i.io_thread, *i.core, stream_id);
  return on_io(i.io, i.io_thread, [&] { return i.core->dead_letters(stream_id, group_id, after, limit); });
}

std::optional<std::size_t> Broker::redrive(const Bytes32& stream_id, GroupId group_id) {
  auto& i = *impl_;
  load_stream(i.io, i.io_thread, *i.core, stream_id);
  return on_io(i.io, i.io_thread, [&] { return i.core->redrive(stream_id, group_id); });
}

std::optional<std::vector<GroupReport>> Broker::group_reports(const Bytes32& stream_id) {
  auto& i = *impl_;
  load_stream(i.io, i.io_thread, *i.core, stream_id);
  return on_io(i.io, i.io_thread, [&] { return i.core->group_reports(stream_id); });
}

}  // namespace cowboy::cbqs::broker
