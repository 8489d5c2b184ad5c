// Reader and Consumer: the user's side of a subscription's buffer. Taking a
// record gives its bytes back to the broker as credit, so the window bounds
// what a slow application holds in memory.
#include "cbqs/sdk/impl.h"

namespace cowboy::cbqs::sdk {

namespace {

// Waits for the next buffered item that `usable` accepts (others are
// dropped), or the subscription's end, or the timeout. Caught-up markers are
// consumed on the way.
template <typename Usable>
Outcome<std::optional<Subscription::Item>> take(Client::Impl& impl, const std::shared_ptr<Subscription>& s,
                                                std::chrono::milliseconds timeout, Usable usable) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(s->m);
  while (true) {
    while (!s->buffered.empty()) {
      auto item = std::move(s->buffered.front());
      s->buffered.pop_front();
      if (item.caught_up_marker) {
        s->caught_up = true;
        continue;
      }
      s->buffered_bytes -= item.frame_bytes;
      // Credit goes to the io thread in quarters of the window, as it goes to
      // the broker: one hand-off per quarter, not one per record.
      s->taken_bytes += item.frame_bytes;
      std::uint64_t give_back = 0;
      if (s->taken_bytes >= std::max<std::uint64_t>(1, s->window / 4)) std::swap(give_back, s->taken_bytes);
      lock.unlock();
      if (give_back > 0) impl.returned(s, give_back);
      if (!usable(item)) {
        lock.lock();
        continue;
      }
      lock.lock();
      s->last_taken = item.record.sequence;
      return std::optional<Subscription::Item>(std::move(item));
    }
    if (s->ended) return Err{*s->ended};
    if (s->cv.wait_until(lock, deadline) == std::cv_status::timeout && s->buffered.empty() && !s->ended)
      return std::optional<Subscription::Item>{};
  }
}

class ReaderImpl final : public Reader {
 public:
  ReaderImpl(std::shared_ptr<Client::Impl> impl, std::shared_ptr<Subscription> s)
      : impl_(std::move(impl)), s_(std::move(s)) {}
  ~ReaderImpl() override { close(); }

  Outcome<std::optional<Record>> next(std::chrono::milliseconds timeout) override {
    auto item = take(*impl_, s_, timeout, [](const Subscription::Item&) { return true; });
    if (!item) return Err{item.error()};
    if (!*item) return std::optional<Record>{};
    return std::optional<Record>(std::move((*item)->record));
  }
  bool caught_up() const override {
    std::lock_guard lock(s_->m);
    return s_->caught_up;
  }
  Sequence last_sequence() const override {
    std::lock_guard lock(s_->m);
    return s_->last_taken;
  }
  void close() override {
    if (!closed_.exchange(true)) impl_->unsubscribe(s_);
  }

 private:
  std::shared_ptr<Client::Impl> impl_;
  std::shared_ptr<Subscription> s_;
  std::atomic<bool> closed_{false};
};

class ConsumerImpl final : public Consumer {
 public:
  ConsumerImpl(std::shared_ptr<Client::Impl> impl, std::shared_ptr<Subscription> s)
      : impl_(std::move(impl)), s_(std::move(s)) {}
  ~ConsumerImpl() override { close(); }

  Outcome<std::optional<Lease>> next(std::chrono::milliseconds timeout) override {
    // A lease from a lost session is void: its record comes back on its own.
    auto item = take(*impl_, s_, timeout, [this](const Subscription::Item& i) {
      return i.lease && i.epoch == impl_->ready_epoch.load();
    });
    if (!item) return Err{item.error()};
    if (!*item) return std::optional<Lease>{};
    auto& i = **item;
    return std::optional<Lease>(Lease{std::move(i.record), *i.lease, i.subscription, i.epoch});
  }
  Outcome<Unit> ack(const Lease& l) override { return act(l, req::Ack{l.subscription, l.handle}, true); }
  Outcome<Unit> nack(const Lease& l) override { return act(l, req::Nack{l.subscription, l.handle}, true); }
  Outcome<Unit> reject(const Lease& l) override { return act(l, req::Reject{l.subscription, l.handle}, true); }
  Outcome<Unit> extend(const Lease& l, std::chrono::milliseconds by) override {
    return act(l, req::Extend{l.subscription, l.handle, static_cast<std::uint64_t>(by.count())}, false);
  }
  void ack(const Lease& l, std::function<void(Outcome<Unit>)> done) override {
    act_async(l, req::Ack{l.subscription, l.handle}, true, std::move(done));
  }
  void nack(const Lease& l, std::function<void(Outcome<Unit>)> done) override {
    act_async(l, req::Nack{l.subscription, l.handle}, true, std::move(done));
  }
  Outcome<Unit> flush(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(s_->m);
    if (!s_->cv.wait_for(lock, timeout, [&] { return s_->actions_outstanding == 0; }))
      return Err{client_error(Error::Kind::kTimeout, std::to_string(s_->actions_outstanding) +
                                                         " lease actions unanswered after " +
                                                         std::to_string(timeout.count()) + " ms")};
    return Unit{};
  }
  void close() override {
    if (!closed_.exchange(true)) impl_->unsubscribe(s_);
  }

 private:
  void act_async(const Lease& l, CbqsRequestBodyV2 body, bool resolves, std::function<void(Outcome<Unit>)> done) {
    if (l.connection_epoch != impl_->ready_epoch.load())
      return done(Err{client_error(Error::Kind::kDisconnected,
                                   "the lease's session was lost; the group delivers the record again")});
    if (resolves && s_->auto_extend) impl_->lease_done(s_, l.handle);  // open_leases is auto-extend's alone
    {
      std::lock_guard lock(s_->m);
      ++s_->actions_outstanding;
    }
    impl_->request(std::move(body), false, [s = s_, done = std::move(done)](Outcome<CbqsResponseBodyV2> r) {
      if (!r) done(Err{r.error()});
      else if (!std::holds_alternative<resp::Ok>(*r)) done(Err{client_error(Error::Kind::kProtocol, "an answer of another kind")});
      else done(Unit{});
      std::lock_guard lock(s->m);
      if (--s->actions_outstanding == 0) s->cv.notify_all();
    });
  }

  Outcome<Unit> act(const Lease& l, CbqsRequestBodyV2 body, bool resolves) {
    return wait_for<Unit>([&](auto done) { act_async(l, std::move(body), resolves, std::move(done)); },
                          impl_->options.request_timeout, "the lease action");
  }

  std::shared_ptr<Client::Impl> impl_;
  std::shared_ptr<Subscription> s_;
  std::atomic<bool> closed_{false};
};

}  // namespace

Outcome<std::unique_ptr<Reader>> Client::read(ReaderOptions options) {
  auto s = std::make_shared<Subscription>();
  s->source = SourceCursor{options.lanes, options.start};
  s->window = options.window_bytes;
  if (auto subscribed = impl_->subscribe(s); !subscribed) return Err{subscribed.error()};
  return std::unique_ptr<Reader>(std::make_unique<ReaderImpl>(impl_, s));
}

Outcome<std::unique_ptr<Consumer>> Client::consume(ConsumerOptions options) {
  auto group = get_group(options.group);  // also learns the visibility timeout auto-extend keeps
  if (!group) return Err{group.error()};
  auto s = std::make_shared<Subscription>();
  s->group = true;
  s->source = SourceGroup{options.lane != LaneId{} ? options.lane : group->lane_id, options.group};
  s->window = options.window_bytes;
  s->auto_extend = options.auto_extend;
  s->visibility_ms = group->visibility_timeout_ms;
  if (auto subscribed = impl_->subscribe(s); !subscribed) return Err{subscribed.error()};
  if (options.auto_extend) asio::post(impl_->io, [impl = impl_.get()] { impl->tick_extends(); });
  return std::unique_ptr<Consumer>(std::make_unique<ConsumerImpl>(impl_, s));
}

}  // namespace cowboy::cbqs::sdk
