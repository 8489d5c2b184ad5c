// The public Client: options, errors, and requests that post to the io thread
// (session.cc) and wait on a promise.
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cbqs/client/request_ids.h"
#include "cbqs/sdk/impl.h"
#include "cbqs/wire/codec.h"
#include "common/keyfile.h"

namespace cowboy::cbqs::sdk {

std::string Error::describe() const {
  switch (kind) {
    case Kind::kBroker: {
      auto known = error_from_u16(code);
      std::string name = known ? std::string(error_name(*known)) : "Unknown";
      std::string_view text = message;
      if (text.starts_with(name + ": ")) text.remove_prefix(name.size() + 2);  // the broker's own prefix
      return name + " (" + std::to_string(code) + "): " + std::string(text);
    }
    case Kind::kDisconnected: return "disconnected: " + message;
    case Kind::kTimeout: return "timed out: " + message;
    case Kind::kRefusedDestination: return "refused destination: " + message;
    case Kind::kConfiguration: return "configuration: " + message;
    case Kind::kProtocol: return "protocol: " + message;
    case Kind::kClosed: return "closed: " + message;
  }
  return message;
}

Error broker_error(const ErrorFrame& e) {
  std::string message(e.message.begin(), e.message.end());
  if (message.empty())
    if (auto known = error_from_u16(e.code)) message = std::string(error_description(*known));
  return Error{Error::Kind::kBroker, e.code, std::move(message)};
}

Error client_error(Error::Kind kind, std::string message) { return Error{kind, 0, std::move(message)}; }

namespace {

Outcome<StreamGrantV2> read_grant_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in)  // say why the file cannot be read: a missing file is not a bad grant
    return Err{client_error(Error::Kind::kConfiguration,
                            "cannot read grant file " + file.string() + ": " + std::strerror(errno))};
  std::string hex;
  in >> hex;
  if (hex.empty())
    return Err{client_error(Error::Kind::kConfiguration, "grant file " + file.string() + " is empty")};
  auto bytes = from_hex(hex);
  if (!bytes) return Err{client_error(Error::Kind::kConfiguration, "cannot read a grant from " + file.string())};
  auto grant = decode<StreamGrantV2>(*bytes);
  if (!grant)
    return Err{client_error(Error::Kind::kConfiguration, file.string() + " does not hold a StreamGrantV2: " +
                                                             std::string(codec::to_string(grant.error())))};
  return *grant;
}

// The answer's body as `Body`, or why not.
template <typename Body>
Outcome<Body> expect(Outcome<CbqsResponseBodyV2> answer) {
  if (!answer) return Err{answer.error()};
  if (auto* b = std::get_if<Body>(&*answer)) return std::move(*b);
  return Err{client_error(Error::Kind::kProtocol, "an answer of another kind")};
}

// What `pick` takes from an answer that must be `Body`.
template <typename Body, typename Pick>
auto pick_from(Outcome<CbqsResponseBodyV2> answer, Pick pick) -> Outcome<decltype(pick(std::declval<Body&>()))> {
  auto body = expect<Body>(std::move(answer));
  if (!body) return Err{body.error()};
  return pick(*body);
}
Unit nothing(const resp::Ok&) { return Unit{}; }

}  // namespace

Outcome<ClientOptions> ClientOptions::from_files(std::string endpoint, const std::filesystem::path& grant_file,
                                                 const std::filesystem::path& holder_key_file) {
  ClientOptions o;
  o.endpoint = std::move(endpoint);
  auto grant = read_grant_file(grant_file);
  if (!grant) return Err{grant.error()};
  o.grant = *grant;
  auto holder = load_secret(holder_key_file);
  if (!holder) return Err{client_error(Error::Kind::kConfiguration, holder.error())};
  o.holder = *holder;
  return o;
}

Outcome<ClientOptions> ClientOptions::from_dev_dir(const std::filesystem::path& dir, std::string endpoint) {
  if (endpoint.empty()) {  // where that cbqsd --dev listens, or its default
    endpoint = "wss://127.0.0.1:7447/";
    std::ifstream in(dir / "dev-endpoints.json");
    auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.contains("endpoint") && j["endpoint"].is_string()) endpoint = j["endpoint"];
  }
  auto o = from_files(std::move(endpoint), dir / "dev-grant.hex", dir / "dev-holder-key");
  if (!o) return o;
  o->pinned_certificate = dir / "tls" / "dev-cert.pem";
  o->allow_private_destinations = true;
  return o;
}

// ---- Impl: the parts user threads call -------------------------------------------

Client::Impl::Impl(ClientOptions o) : options(std::move(o)) {}

Client::Impl::~Impl() { shutdown(); }

void Client::Impl::start() {
  thread = std::thread([this] { io.run(); });
  asio::post(io, [this] { dial(); });
}

void Client::Impl::shutdown() {
  if (!thread.joinable()) return;
  asio::post(io, [this] {
    fail_permanently(client_error(Error::Kind::kClosed, "the client was closed"));
    work.reset();
  });
  thread.join();
}

// Requests made while the io thread has not yet taken the previous ones join
// them: one post (and at most one wake-up) per burst, not per request.
template <typename Add>
void Client::Impl::submit(Add&& add) {
  bool first;
  {
    std::lock_guard lock(submitted_m);
    first = submitted.empty();
    add(submitted);
  }
  if (first) asio::post(io, [this] { take_submitted(); });
}

void Client::Impl::request(CbqsRequestBodyV2 body, bool resend, std::function<void(Outcome<CbqsResponseBodyV2>)> done) {
  submit([&](std::vector<Pending>& queue) { queue.push_back(Pending{std::move(body), resend, 0, Reply{std::move(done), nullptr, 0}}); });
}

void Client::Impl::request_many(std::vector<Pending> requests) {
  if (requests.empty()) return;
  submit([&](std::vector<Pending>& queue) {
    if (queue.empty()) queue = std::move(requests);
    else queue.insert(queue.end(), std::make_move_iterator(requests.begin()), std::make_move_iterator(requests.end()));
  });
}

void Client::Impl::take_submitted() {
  std::vector<Pending> taken;
  {
    std::lock_guard lock(submitted_m);
    taken.swap(submitted);
  }
  for (auto& p : taken) {
    if (permanent) {
      answer(p.take_reply(), Err{*permanent});
      continue;
    }
    std::uint64_t n = next_number++;
    pending.emplace(n, std::move(p));
    if (state == State::kReady) send_pending(n);
  }
}

Outcome<CbqsResponseBodyV2> Client::Impl::call(CbqsRequestBodyV2 body) {
  return wait_for<CbqsResponseBodyV2>(
      [&](auto done) { request(std::move(body), false, std::move(done)); }, options.request_timeout, "the request");
}

Outcome<Unit> Client::Impl::subscribe(const std::shared_ptr<Subscription>& s) {
  auto r = wait_for<CbqsResponseBodyV2>(
      [&](auto done) {
        s->on_subscribed = std::move(done);
        asio::post(io, [this, s] {
          if (permanent) return s->on_subscribed(Err{*permanent});
          if (state == State::kReady) return resubscribe(s);
          subscriptions.emplace(next_number++, s);  // subscribed by on_session_opened()
        });
      },
      options.request_timeout, "Subscribe");
  if (!r) return Err{r.error()};
  return Unit{};
}

void Client::Impl::unsubscribe(const std::shared_ptr<Subscription>& s) {
  asio::post(io, [this, s] {
    for (auto it = subscriptions.begin(); it != subscriptions.end(); ++it) {
      if (it->second != s) continue;
      if (s->active) request(req::Unsubscribe{client::request_id(s->id_number)}, false, nullptr);
      subscriptions.erase(it);
      break;
    }
    std::lock_guard lock(s->m);
    if (!s->ended) s->ended = client_error(Error::Kind::kClosed, "closed");
    s->cv.notify_all();
  });
}

void Client::Impl::returned(const std::shared_ptr<Subscription>& s, std::uint64_t bytes) {
  asio::post(io, [this, s, bytes] {
    s->returned += bytes;
    // Credit goes back in quarters of the window: few AddCredits, no stall.
    if (!s->active || s->returned < std::max<std::uint64_t>(1, s->window / 4)) return;
    request(req::AddCredit{client::request_id(s->id_number), s->returned}, false, nullptr);
    s->returned = 0;
  });
}

void Client::Impl::lease_done(const std::shared_ptr<Subscription>& s, const Bytes32& lease) {
  asio::post(io, [s, lease] { s->open_leases.erase(lease); });
}

void Client::Impl::tick_extends() {
  auto now = std::chrono::steady_clock::now();
  std::uint64_t period_ms = 0;
  for (auto& [n, s] : subscriptions) {
    if (!s->auto_extend || !s->active) continue;
    auto half = std::chrono::milliseconds(s->visibility_ms / 2);
    for (auto& [lease, since] : s->open_leases) {
      if (now - since < half) continue;
      request(req::Extend{client::request_id(s->id_number), lease, s->visibility_ms}, false, nullptr);
      since = now;
    }
    std::uint64_t p = std::max<std::uint64_t>(10, s->visibility_ms / 4);
    period_ms = period_ms == 0 ? p : std::min(period_ms, p);
  }
  if (period_ms == 0) return;  // armed again when an auto-extending consumer subscribes
  extend_timer.expires_after(std::chrono::milliseconds(period_ms));
  extend_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec) tick_extends();
  });
}

// ---- Client -------------------------------------------------------------------

Client::Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() { impl_->shutdown(); }

Outcome<Unit> check_destination(const std::string& endpoint, bool allow_private_destinations) {
  auto parsed = client::parse_endpoint(endpoint);
  if (!parsed) return Err{client_error(Error::Kind::kConfiguration, "not a wss:// endpoint: " + endpoint)};
  auto checked = client::resolve_checked(parsed->host, allow_private_destinations);
  if (!checked) return Err{client_error(Error::Kind::kRefusedDestination, checked.error())};
  return Unit{};
}

Outcome<std::unique_ptr<Client>> Client::connect(ClientOptions options) {
  if (auto allowed = check_destination(options.endpoint, options.allow_private_destinations); !allowed)
    return Err{allowed.error()};
  auto endpoint = client::parse_endpoint(options.endpoint);
  auto impl = std::make_shared<Impl>(std::move(options));
  impl->endpoint = *endpoint;
  auto& o = impl->options;
  try {
    impl->tls.set_verify_mode(asio::ssl::verify_peer);
    if (!o.pinned_certificate.empty()) {
      std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(o.pinned_certificate.c_str(), "r"), BIO_free);
      std::shared_ptr<X509> pinned(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, X509_free);
      if (!pinned)
        return Err{client_error(Error::Kind::kConfiguration, "cannot read a certificate from " + o.pinned_certificate.string())};
      // The server must present exactly this certificate; the chain above it does not matter.
      impl->tls.set_verify_callback([pinned](bool, asio::ssl::verify_context& ctx) {
        if (X509_STORE_CTX_get_error_depth(ctx.native_handle()) > 0) return true;
        return X509_cmp(X509_STORE_CTX_get_current_cert(ctx.native_handle()), pinned.get()) == 0;
      });
    } else if (!o.ca_file.empty()) {
      impl->tls.load_verify_file(o.ca_file.string());
    } else {
      impl->tls.set_default_verify_paths();
    }
  } catch (const std::exception& e) {
    return Err{client_error(Error::Kind::kConfiguration, std::string("TLS setup: ") + e.what())};
  }
  auto first = impl->first_session.get_future();
  impl->start();
  if (first.wait_for(o.connect_timeout + std::chrono::seconds(1)) != std::future_status::ready) {
    impl->shutdown();
    return Err{client_error(Error::Kind::kTimeout, "no session within the connect timeout")};
  }
  if (auto opened = first.get(); !opened) {
    impl->shutdown();
    return Err{opened.error()};
  }
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

void Client::append(LaneId lane, Bytes payload, std::function<void(Outcome<Sequence>)> done) {
  {
    std::lock_guard lock(impl_->appends_m);
    ++impl_->appends_outstanding;
  }
  auto* impl = impl_.get();
  impl_->request(req::Append{{lane, std::move(payload)}}, true, [impl, done = std::move(done)](Outcome<CbqsResponseBodyV2> r) {
    auto appended = expect<resp::Appended>(std::move(r));
    if (done) done(appended ? Outcome<Sequence>(appended->sequence) : Outcome<Sequence>(Err{appended.error()}));
    std::lock_guard lock(impl->appends_m);
    if (--impl->appends_outstanding == 0) impl->appends_cv.notify_all();
  });
}

std::future<std::vector<Outcome<Sequence>>> Client::append_batch(LaneId lane, std::vector<Bytes> payloads) {
  auto promise = std::make_shared<std::promise<std::vector<Outcome<Sequence>>>>();
  auto result = promise->get_future();
  append_batch(lane, std::move(payloads), [promise](std::vector<Outcome<Sequence>> r) { promise->set_value(std::move(r)); });
  return result;
}

std::future<Outcome<Sequence>> Client::append(LaneId lane, Bytes payload) {
  auto promise = std::make_shared<std::promise<Outcome<Sequence>>>();
  auto result = promise->get_future();
  append(lane, std::move(payload), [promise](Outcome<Sequence> r) { promise->set_value(std::move(r)); });
  return result;
}

void Client::append_batch(LaneId lane, std::vector<Bytes> payloads,
                          std::function<void(std::vector<Outcome<Sequence>>)> done) {
  const std::size_t n = payloads.size();
  for (std::size_t i = 0; i < n; ++i)
    if (payloads[i].size() > impl_->options.grant.max_message_bytes) {  // the broker's check 600, made before sending
      Error too_large{Error::Kind::kBroker, static_cast<std::uint16_t>(ErrorCode::kMessageTooLarge),
                      "payload " + std::to_string(i) + " of the batch has " + std::to_string(payloads[i].size()) +
                          " bytes, over the grant's max_message_bytes " +
                          std::to_string(impl_->options.grant.max_message_bytes) + "; nothing of the batch was sent"};
      if (done) done(std::vector<Outcome<Sequence>>(n, Outcome<Sequence>(Err{too_large})));
      return;
    }
  if (n == 0) {
    if (done) done({});
    return;
  }
  // Filled in by the io thread alone (every answer arrives there, answer()),
  // handed to `done` with the last one.
  auto batch = std::make_shared<Impl::AppendBatch>(
      Impl::AppendBatch{std::vector<Outcome<Sequence>>(n, Outcome<Sequence>(Sequence{})), n, std::move(done)});
  {
    std::lock_guard lock(impl_->appends_m);
    impl_->appends_outstanding += n;
  }
  std::vector<Impl::Pending> requests;
  requests.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    requests.push_back(Impl::Pending{req::Append{{lane, std::move(payloads[i])}}, true, 0, Impl::Reply{nullptr, batch, i}});
  impl_->request_many(std::move(requests));
}

void Client::Impl::answer(Reply reply, Outcome<CbqsResponseBodyV2> outcome) {
  if (!reply.batch) {
    if (reply.done) reply.done(std::move(outcome));
    return;
  }
  AppendBatch& batch = *reply.batch;
  auto appended = expect<resp::Appended>(std::move(outcome));
  batch.outcomes[reply.index] = appended ? Outcome<Sequence>(appended->sequence) : Outcome<Sequence>(Err{appended.error()});
  if (--batch.unanswered > 0) return;
  const std::size_t answered = batch.outcomes.size();
  if (batch.done) batch.done(std::move(batch.outcomes));
  std::lock_guard lock(appends_m);
  if ((appends_outstanding -= answered) == 0) appends_cv.notify_all();
}

Outcome<Unit> Client::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->appends_m);
  if (!impl_->appends_cv.wait_for(lock, timeout, [&] { return impl_->appends_outstanding == 0; }))
    return Err{client_error(Error::Kind::kTimeout, std::to_string(impl_->appends_outstanding) + " appends still unanswered")};
  return Unit{};
}

Outcome<CbqsResponseBodyV2> Client::call(CbqsRequestBodyV2 body) { return impl_->call(std::move(body)); }

Outcome<LaneId> Client::create_lane() { return open_lane(std::nullopt); }

Outcome<LaneId> Client::open_room_lane(const RoomLaneV2& room) { return open_lane(room); }

Outcome<LaneId> Client::open_lane(std::optional<RoomLaneV2> room) {
  return pick_from<resp::LaneCreated>(call(req::CreateLane{std::move(room)}), [](auto& b) { return b.lane_id; });
}

Outcome<Unit> Client::close_lane(LaneId lane) { return pick_from<resp::Ok>(call(req::CloseLane{lane}), nothing); }

Outcome<std::vector<LaneRecordV2>> Client::list_lanes() {
  std::vector<LaneRecordV2> all;
  std::optional<LaneId> after;
  do {
    auto page = expect<resp::Lanes>(call(req::ListLanes{after, 100}));
    if (!page) return Err{page.error()};
    all.insert(all.end(), page->lanes.begin(), page->lanes.end());
    after = page->next_after_lane_id;
  } while (after);
  return all;
}

Outcome<resp::Settings> Client::settings() { return expect<resp::Settings>(call(req::GetSettings{})); }
Outcome<resp::Settings> Client::update_settings(const StreamSettingsV2& settings) {
  return expect<resp::Settings>(call(req::UpdateSettings{settings}));
}

GroupConfigV2 with_group_defaults(GroupConfigV2 c) {
  auto fill = [](auto& field, auto value) {
    if (field == 0) field = value;
  };
  fill(c.visibility_timeout_ms, std::uint64_t{30'000});
  fill(c.max_visibility_ms, std::max<std::uint64_t>(30'000, c.visibility_timeout_ms));
  fill(c.max_in_flight, std::uint32_t{1'000});
  fill(c.max_in_flight_per_holder, std::min<std::uint32_t>(100, c.max_in_flight));
  fill(c.max_attempts, std::uint16_t{5});
  fill(c.record_deadline_ms, std::uint64_t{3'600'000});
  return c;
}

Outcome<GroupId> Client::create_group(const GroupConfigV2& config) {
  return pick_from<resp::GroupCreated>(call(req::CreateGroup{with_group_defaults(config)}),
                                       [](auto& b) { return b.group_id; });
}

Outcome<GroupConfigV2> Client::get_group(GroupId group) {
  return pick_from<resp::Group>(call(req::GetGroup{group}), [](auto& b) { return std::move(b.config); });
}

Outcome<GroupConfigV2> Client::update_group(const GroupConfigV2& config) {
  return pick_from<resp::Group>(call(req::UpdateGroup{config}), [](auto& b) { return std::move(b.config); });
}

Outcome<Unit> Client::delete_group(GroupId group) { return pick_from<resp::Ok>(call(req::DeleteGroup{group}), nothing); }

Outcome<CheckpointReceiptV2> Client::checkpoint(std::optional<Sequence> covering_sequence) {
  return pick_from<resp::Checkpoint>(call(req::GetCheckpoint{covering_sequence}), [](auto& b) { return std::move(b.receipt); });
}

const StreamGrantV2& Client::grant() const { return impl_->options.grant; }

ClientStats Client::stats() const { return ClientStats{impl_->connects.load(), impl_->resent_appends.load(), impl_->subscribes.load()}; }

void Client::drop_connection() {
  asio::post(impl_->io, [impl = impl_.get()] {
    if (impl->state == Impl::State::kReady || impl->state == Impl::State::kOpening)
      impl->lost(client_error(Error::Kind::kDisconnected, "dropped on request"));
  });
}

}  // namespace cowboy::cbqs::sdk
