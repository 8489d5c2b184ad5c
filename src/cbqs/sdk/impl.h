// The SDK's insides: one io thread owns the connection, the session, the
// requests in flight and the subscriptions' broker side. User threads only
// post work to it, and meet it in a subscription's buffer (a mutex and a
// condition variable) or in a promise.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "cbqs/client.h"
#include "cbqs/client/dialing.h"
#include "net/wss_channel.h"

namespace cowboy::cbqs::sdk {

namespace asio = boost::asio;

/// One connection attempt's channel (TLS, upgrade, framing: net/wss_channel.h);
/// its events go to the Impl tagged with the attempt's epoch, so a stale
/// connection's late events are ignored.
class Channel final : public net::WssChannel {
 public:
  Channel(asio::ip::tcp::socket socket, SSL_CTX* tls, Client::Impl& owner, std::uint64_t epoch, Options options)
      : net::WssChannel(std::move(socket), tls, Role::kClient, options), owner_(owner), epoch_(epoch) {}

 private:
  void on_open() override;
  void on_message(ByteView message) override;
  void on_closed(const std::string& why) override;

  Client::Impl& owner_;
  std::uint64_t epoch_;
};

Error broker_error(const ErrorFrame& e);
Error client_error(Error::Kind kind, std::string message);

/// Starts an operation that reports through a callback, and waits up to
/// `timeout` for its outcome; `what` names it in the timeout error.
template <typename T, typename Start>
Outcome<T> wait_for(Start&& start, std::chrono::milliseconds timeout, const std::string& what) {
  auto promise = std::make_shared<std::promise<Outcome<T>>>();
  auto answer = promise->get_future();
  start([promise](Outcome<T> r) { promise->set_value(std::move(r)); });
  if (answer.wait_for(timeout) != std::future_status::ready)
    return Err{client_error(Error::Kind::kTimeout, "no answer to " + what + " within " + std::to_string(timeout.count()) + " ms")};
  return answer.get();
}

/// One Reader's or Consumer's buffer and broker-side state.
struct Subscription {
  // Shared with the user thread: guarded by `m`.
  struct Item {
    Record record;
    std::optional<Bytes32> lease;
    Bytes32 subscription{};
    std::uint64_t epoch = 0;
    std::uint64_t frame_bytes = 0;
    bool caught_up_marker = false;  // not a record: the replay reached the head here
  };
  std::mutex m;
  std::condition_variable cv;
  std::deque<Item> buffered;
  std::uint64_t buffered_bytes = 0;
  std::optional<Error> ended;  // set once: next() returns it when the buffer is empty
  bool caught_up = false;
  Sequence last_taken;
  std::uint64_t actions_outstanding = 0;  // lease actions sent, not yet answered (Consumer::flush)
  std::uint64_t taken_bytes = 0;  // taken by the user, not yet handed to returned() (a quarter window at a time)

  // The io thread's alone.
  bool group = false;
  SubscriptionSourceV2 source;
  std::uint64_t window = 0;
  std::uint64_t id_number = 0;      // request number of the current Subscribe (its subscription_id)
  Sequence last_received;           // a Reader resumes after it
  std::uint64_t returned = 0;       // bytes taken by the user since the last AddCredit
  bool active = false;              // subscribed on the current connection
  std::function<void(Outcome<CbqsResponseBodyV2>)> on_subscribed;  // the first Subscribe's answer
  // Auto-extend (Consumer): handle -> when it was last issued or extended.
  bool auto_extend = false;  // set before the first Subscribe, read by user threads too
  std::uint64_t visibility_ms = 0;
  std::map<Bytes32, std::chrono::steady_clock::time_point> open_leases;
};

struct Client::Impl {
  explicit Impl(ClientOptions o);
  ~Impl();

  // ---- called from user threads (they post to the io thread) ---------------
  void request(CbqsRequestBodyV2 body, bool resend, std::function<void(Outcome<CbqsResponseBodyV2>)> done);
  struct Pending;
  /// Several requests in one hand-off, kept in their order.
  void request_many(std::vector<Pending> requests);
  /// Adds to `submitted` under its lock; the first of a burst posts take_submitted().
  template <typename Add>
  void submit(Add&& add);
  Outcome<CbqsResponseBodyV2> call(CbqsRequestBodyV2 body);
  void start();
  void shutdown();
  /// Credit the user's taking of `bytes` back to the broker (io thread).
  void returned(const std::shared_ptr<Subscription>& s, std::uint64_t bytes);
  /// Subscribes now (or once the session is open); the first answer is returned.
  Outcome<Unit> subscribe(const std::shared_ptr<Subscription>& s);
  void unsubscribe(const std::shared_ptr<Subscription>& s);
  void lease_done(const std::shared_ptr<Subscription>& s, const Bytes32& lease);

  // ---- the io thread --------------------------------------------------------
  void take_submitted();
  void dial();
  void on_upgraded(std::uint64_t epoch);
  void on_message(std::uint64_t epoch, ByteView message);
  void send_frame(ByteView frame);
  void on_frame(const CbqsServerFrameV2& f);
  void on_session_opened();
  void send_pending(std::uint64_t number);
  void lost(Error why);
  void drop_connection();  // closes the socket; its handlers become stale
  void fail_permanently(Error why);
  void resubscribe(const std::shared_ptr<Subscription>& s);
  void deliver(const Delivery& d);
  void tick_extends();
  std::shared_ptr<Subscription> subscription_for(const Bytes32& id);

  ClientOptions options;
  client::Endpoint endpoint;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::ssl::context tls{asio::ssl::context::tls_client};
  asio::steady_timer retry_timer{io};
  asio::steady_timer extend_timer{io};
  asio::steady_timer open_timer{io};  // bounds one attempt: connect, TLS, upgrade, session
  std::thread thread;
  std::mt19937_64 jitter_random{std::random_device{}()};

  enum class State { kDialing, kOpening, kReady, kWaiting, kFailed, kClosed } state = State::kDialing;
  std::shared_ptr<asio::ip::tcp::socket> dialing;  // until TCP connects
  std::shared_ptr<Channel> ws;
  std::uint64_t epoch = 0;          // one per connection attempt
  std::atomic<std::uint64_t> ready_epoch{0};  // the epoch whose session is open
  int failures = 0;                 // consecutive, for the backoff
  bool opened_once = false;
  std::optional<Error> permanent;   // why the client stopped
  Bytes32 session_id{};
  std::uint64_t next_number = 1;
  std::uint64_t open_number = 0;    // the OpenSession / CompleteSession request number

  /// The outcomes of one Client::append_batch, filled in on the io thread.
  struct AppendBatch {
    std::vector<Outcome<Sequence>> outcomes;
    std::size_t unanswered = 0;
    std::function<void(std::vector<Outcome<Sequence>>)> done;
  };
  /// Who hears a request's answer: its callback, or its place in a batch (an
  /// append_batch's records share one AppendBatch: no callback per record).
  struct Reply {
    std::function<void(Outcome<CbqsResponseBodyV2>)> done;
    std::shared_ptr<AppendBatch> batch;
    std::size_t index = 0;
  };
  struct Pending {
    CbqsRequestBodyV2 body;
    bool resend = false;        // appends go out again after a reconnect
    std::uint64_t sent_epoch = 0;  // 0: not sent on the current connection
    Reply reply;

    Reply take_reply() { return std::move(reply); }
  };
  /// Hands an answer to whoever waits for it (io thread).
  void answer(Reply reply, Outcome<CbqsResponseBodyV2> outcome);
  std::map<std::uint64_t, Pending> pending;  // by request number: resent in order
  std::mutex submitted_m;
  std::vector<Pending> submitted;  // made by user threads, not yet taken by the io thread
  std::map<std::uint64_t, std::shared_ptr<Subscription>> subscriptions;  // by id_number

  std::promise<Outcome<Unit>> first_session;
  bool first_session_set = false;

  // Producer bookkeeping, read by flush() on user threads.
  std::mutex appends_m;
  std::condition_variable appends_cv;
  std::uint64_t appends_outstanding = 0;

  std::atomic<std::uint64_t> connects{0}, resent_appends{0}, subscribes{0};
};

}  // namespace cowboy::cbqs::sdk
